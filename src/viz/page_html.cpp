// The VIZ page's HTML, style and script (page.cpp puts the recorded JSON where /*VIZ_DATA*/ stands). No outside
// dependency: the script lays the graphs out itself (layers by longest path, ordered by barycenters) and draws SVG.
// The address's fragment picks what is shown (#r=2: realize 2; #k=5&t=source: kernel 5's source; &q=text: a search;
// &open=all: every rewrite unfolded; &unfold=all: a big graph drawn whole), so a page can be linked to a view, and a
// headless browser pointed at one.
namespace tg::viz {

extern const char* const kPageHtml;
const char* const kPageHtml = R"tgviz(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tinygrad.cpp VIZ</title>
<style>
body{margin:0;font:13px system-ui,sans-serif;display:flex;height:100vh;color:#222}
#side{width:300px;overflow:auto;border-right:1px solid #ccc;background:#f7f7f7;flex:none}
#side h1{font-size:15px;margin:8px}
#side input{width:270px;margin:0 8px 6px;padding:3px}
#side .sum{margin:0 8px 8px;color:#555}
.entry{padding:3px 8px;cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.entry:hover{background:#e4ecf7}.entry.sel{background:#cddcf3}
.sub{padding-left:22px;font-family:monospace;font-size:12px}
.err{color:#b00}
#main{flex:1;display:flex;flex-direction:column;min-width:0}
#head{padding:6px 10px;border-bottom:1px solid #ccc}
#head h2{font-size:15px;margin:0 0 4px}
#tabs span{display:inline-block;padding:3px 10px;margin-right:4px;border:1px solid #bbb;border-radius:3px;cursor:pointer}
#tabs span.sel{background:#333;color:#fff}
#body{flex:1;overflow:auto;padding:8px 10px;position:relative}
pre{font:12px monospace;background:#fafafa;border:1px solid #ddd;padding:6px;overflow:auto}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;font-size:12px;vertical-align:top}
.graph{border:1px solid #ccc;height:calc(100vh - 190px);min-height:300px;position:relative;overflow:hidden;background:#fff}
.graph svg{width:100%;height:100%;cursor:grab}
.graph .bar{position:absolute;top:4px;right:4px;background:#fffe;padding:2px}
.graph .info{position:absolute;left:4px;bottom:4px;background:#fffe;border:1px solid #ccc;padding:3px 6px;font:12px monospace;max-width:70%;white-space:pre-wrap}
g.node rect{stroke:#555;stroke-width:1}
g.node text{font:11px monospace;pointer-events:none}
g.node.hit rect{stroke:#e00;stroke-width:3}
g.node.picked rect{stroke:#06c;stroke-width:3}
path.edge{fill:none;stroke:#888;stroke-width:1}
.step{margin:4px 0;padding:4px;border-left:3px solid #69c;background:#f4f8fc}
.rule{color:#555;font:11px monospace}.expr{font:12px monospace;white-space:pre-wrap;word-break:break-all}
.call{margin:6px 0}.call>.entry{padding-left:0}
</style></head><body>
<div id="side"><h1>tinygrad.cpp VIZ</h1><input id="search" placeholder="search kernels and graph nodes"><div class="sum" id="summary"></div><div id="list"></div></div>
<div id="main"><div id="head"><h2 id="title"></h2><div id="tabs"></div></div><div id="body"></div></div>
<script type="application/json" id="viz-data">/*VIZ_DATA*/</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("viz-data").textContent);
const N = D.nodes, OPS = D.ops;
const $ = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) k === "text" ? (e.textContent = v) : k.startsWith("on") ? (e[k] = v) : e.setAttribute(k, v);
  for (const c of kids) e.append(c);
  return e;
};
const SVG = "http://www.w3.org/2000/svg";
const S = (tag, attrs = {}) => { const e = document.createElementNS(SVG, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); return e; };
const opOf = id => OPS[N[id][0]];
const label = id => { const [o, dt, arg] = N[id]; return OPS[o] + (dt && dt !== "void" ? " " + dt : "") + (arg ? " " + arg : ""); };
const ms = v => v < 1 ? v.toFixed(3) + " ms" : v.toFixed(1) + " ms";

// ---- a node's colour by what it is
const COLORS = [[/^(BUFFER|DEFINE_GLOBAL|DEFINE_LOCAL|DEFINE_REG|DEFINE_VAR|DEVICE|MULTI)$/, "#f0c987"], [/^(LOAD|STORE|INDEX|COPY|ALLREDUCE|ASSIGN)$/, "#f6a6a0"],
  [/^(CONST|VCONST|IOTA)$/, "#dddddd"], [/^(RANGE|END|SPECIAL|IF|ENDIF|BARRIER)$/, "#b8d8f0"], [/^(REDUCE|REDUCE_AXIS|WMMA)$/, "#c7b3e6"],
  [/^(VIEW|RESHAPE|PERMUTE|EXPAND|PAD|SHRINK|FLIP|CONTIGUOUS|DETACH)$/, "#b9e4b0"], [/^(SINK|KERNEL)$/, "#999999"]];
const colorOf = op => { for (const [re, c] of COLORS) if (re.test(op)) return c; return "#ffe9a8"; };

// ---- an expression of a small graph, as text (rewrite steps)
const BIN = {ADD: "+", MUL: "*", IDIV: "//", MOD: "%", CMPLT: "<", CMPNE: "!=", AND: "&", OR: "|", XOR: "^", SHL: "<<", SHR: ">>", SUB: "-", FDIV: "/"};
function expr(id, depth = 0) {
  if (id < 0) return "(left out)";
  const [o, dt, arg, src] = N[id], op = OPS[o];
  if (op === "CONST") return arg;
  if (depth > 8) return "\u2026";
  if (BIN[op] && src.length === 2) return "(" + expr(src[0], depth + 1) + BIN[op] + expr(src[1], depth + 1) + ")";
  return op + (arg ? "[" + arg + "]" : "") + (src.length ? "(" + src.map(s => expr(s, depth + 1)).join(", ") + ")" : "");
}

// ---- the graph view: layers by longest path from the sources, barycenter ordering, pan and zoom, collapsing
const MAX_SHOWN = 250;  // a bigger graph opens with the nodes nearest its root, the rest folded
function reach(root) {  // every node below root, sources before users
  const seen = new Set(), out = [], stack = [[root, 0]];
  while (stack.length) {
    const top = stack[stack.length - 1], src = N[top[0]][3];
    if (top[1] < src.length) { const s = src[top[1]++]; if (!seen.has(s)) { seen.add(s); stack.push([s, 0]); } continue; }
    stack.pop(); out.push(top[0]);
  }
  if (!seen.has(root)) out.push(root);
  return [...new Set(out)];
}
function graphView(root, query) {
  const box = $("div", {class: "graph"});
  if (root < 0) { box.append($("div", {class: "info", text: "this graph was left out (the page's node limit)"})); return box; }
  const all = reach(root);
  const collapsed = new Set();
  if (all.length > MAX_SHOWN && state().unfold !== "all") {  // show the nodes nearest the root; fold those at the edge
    const depth = new Map([[root, 0]]), order = [root];
    for (let i = 0; i < order.length; i++) for (const s of N[order[i]][3]) if (!depth.has(s)) { depth.set(s, depth.get(order[i]) + 1); order.push(s); }
    const keep = new Set(order.slice(0, MAX_SHOWN));
    for (const id of keep) if (N[id][3].some(s => !keep.has(s))) collapsed.add(id);
  }
  const svg = S("svg"), world = S("g");
  svg.append(world);
  const info = $("div", {class: "info", text: all.length + " nodes: click a node for its details, double-click to fold or unfold its sources; drag to move, wheel to zoom"});
  const hits = new Set();
  const bar = $("div", {class: "bar"},
    $("button", {text: "unfold all", onclick: () => { collapsed.clear(); draw(); }}),
    $("button", {text: "fit", onclick: () => fit()}));
  box.append(svg, bar, info);
  let view = {x: 0, y: 0, w: 100, h: 100}, bounds = view;
  const setView = () => svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  function fit() { view = {...bounds}; setView(); }
  let rootAt = [0, 0], hitAt = null;  // where the root and the first node a search found are drawn
  function firstView() {  // the whole graph where it is readable so; else its first search hit or its root at full size
    const cw = svg.clientWidth || 1000, ch = svg.clientHeight || 600;
    if (bounds.w <= cw * 2.5 && bounds.h <= ch * 2.5) return fit();
    view = hitAt ? {x: hitAt[0] - cw / 2, y: hitAt[1] - ch / 2, w: cw, h: ch} : {x: rootAt[0] - cw / 2, y: rootAt[1] + 60 - ch, w: cw, h: ch};
    setView();
  }
  function visible() {
    const shown = new Set([root]), stack = [root];
    while (stack.length) { const id = stack.pop(); if (collapsed.has(id)) continue; for (const s of N[id][3]) if (!shown.has(s)) { shown.add(s); stack.push(s); } }
    return all.filter(id => shown.has(id));
  }
  function draw() {
    const ids = visible(), rank = new Map(), users = new Map();
    for (const id of ids) {  // sources come first in `all`
      const src = collapsed.has(id) ? [] : N[id][3];
      rank.set(id, src.length ? Math.max(...src.map(s => rank.get(s))) + 1 : 0);
      for (const s of src) { if (!users.has(s)) users.set(s, []); users.get(s).push(id); }
    }
    const layers = [];
    for (const id of ids) (layers[rank.get(id)] ||= []).push(id);
    const pos = new Map();
    const place = () => layers.forEach(l => l.forEach((id, i) => pos.set(id, i)));
    place();
    const bary = (id, nb) => { const p = (nb || []).filter(n => pos.has(n)).map(n => pos.get(n)); return p.length ? p.reduce((a, b) => a + b) / p.length : pos.get(id); };
    for (let sweep = 0; sweep < 4; sweep++) {
      for (let r = 1; r < layers.length; r++) { const k = new Map(layers[r].map(id => [id, bary(id, collapsed.has(id) ? [] : N[id][3])])); layers[r].sort((a, b) => k.get(a) - k.get(b)); place(); }
      for (let r = layers.length - 2; r >= 0; r--) { const k = new Map(layers[r].map(id => [id, bary(id, users.get(id))])); layers[r].sort((a, b) => k.get(a) - k.get(b)); place(); }
    }
    const text = id => { const t = label(id); return (t.length > 48 ? t.slice(0, 47) + "\u2026" : t) + (collapsed.has(id) ? "  [+]" : ""); };
    const W = id => 14 + 6.6 * text(id).length, H = 22, GAP = 18, ROW = 70;
    const xy = new Map();
    let width = 0;
    layers.forEach(l => { width = Math.max(width, l.reduce((a, id) => a + W(id) + GAP, 0)); });
    layers.forEach((l, r) => { let x = (width - l.reduce((a, id) => a + W(id) + GAP, 0)) / 2; for (const id of l) { xy.set(id, [x, r * ROW]); x += W(id) + GAP; } });
    world.replaceChildren();
    for (const id of ids) if (!collapsed.has(id)) for (const s of N[id][3]) {
      const [x1, y1] = xy.get(s), [x2, y2] = xy.get(id);
      const a = [x1 + W(s) / 2, y1 + H], b = [x2 + W(id) / 2, y2];
      world.append(S("path", {class: "edge", d: `M${a[0]},${a[1]} C${a[0]},${a[1] + 30} ${b[0]},${b[1] - 30} ${b[0]},${b[1]}`}));
    }
    for (const id of ids) {
      const [x, y] = xy.get(id), g = S("g", {class: "node" + (hits.has(id) ? " hit" : ""), transform: `translate(${x},${y})`, "data-id": id});
      const t = S("text", {x: 7, y: 15});
      t.textContent = text(id);
      g.append(S("rect", {width: W(id), height: H, rx: 4, fill: colorOf(opOf(id))}), t);
      g.onclick = ev => { ev.stopPropagation(); world.querySelectorAll(".picked").forEach(e => e.classList.remove("picked")); g.classList.add("picked");
        info.textContent = `node ${id}: ${label(id)}\nsources: ${N[id][3].join(", ") || "none"}\n${expr(id)}`; };
      g.ondblclick = ev => { ev.stopPropagation(); collapsed.has(id) ? collapsed.delete(id) : N[id][3].length && collapsed.add(id); draw(); };
      world.append(g);
    }
    bounds = {x: -20, y: -20, w: Math.max(width, 200) + 40, h: layers.length * ROW + 40};
    rootAt = [xy.get(root)[0] + W(root) / 2, xy.get(root)[1]];
    const hit = ids.find(id => hits.has(id));
    hitAt = hit === undefined ? null : [xy.get(hit)[0] + W(hit) / 2, xy.get(hit)[1]];
    firstView();
    box.dataset.shown = ids.length;
  }
  // search: the matching nodes are marked, and every node above one is unfolded so it shows
  if (query) {
    const q = query.toLowerCase();
    for (const id of all) if (label(id).toLowerCase().includes(q)) hits.add(id);
    if (hits.size) {
      const path = new Set(hits), users = new Map();
      for (const id of all) for (const s of N[id][3]) { if (!users.has(s)) users.set(s, []); users.get(s).push(id); }
      const stack = [...hits];
      while (stack.length) for (const u of users.get(stack.pop()) || []) if (!path.has(u)) { path.add(u); stack.push(u); }
      for (const id of path) collapsed.delete(id);
      info.textContent = `${hits.size} nodes match "${query}" (outlined in red)`;
    }
  }
  let drag = null;
  svg.onmousedown = e => { drag = [e.clientX, e.clientY, view.x, view.y]; };
  window.addEventListener("mouseup", () => { drag = null; });
  svg.onmousemove = e => { if (!drag) return; const k = view.w / svg.clientWidth; view.x = drag[2] - (e.clientX - drag[0]) * k; view.y = drag[3] - (e.clientY - drag[1]) * k; setView(); };
  svg.onwheel = e => { e.preventDefault(); const f = e.deltaY > 0 ? 1.2 : 1 / 1.2, r = svg.getBoundingClientRect();
    const px = view.x + (e.clientX - r.left) / r.width * view.w, py = view.y + (e.clientY - r.top) / r.height * view.h;
    view = {x: px - (px - view.x) * f, y: py - (py - view.y) * f, w: view.w * f, h: view.h * f}; setView(); };
  draw();
  requestAnimationFrame(firstView);  // again once the box is on the page and has its size
  return box;
}

// ---- rewrites: each graph_rewrite that changed something, and its steps (rule, before, after)
function rewritesView(log, query, openAll) {
  const out = $("div");
  out.append($("p", {text: `${log.calls.length} graph rewrites changed their graph (${log.calls.reduce((a, c) => a + c.steps.length, 0)} rule applications); ${log.unchanged} changed nothing` +
    (log.dropped ? `; ${log.dropped} later rule applications were left out` : "")}));
  log.calls.forEach((c, i) => {
    const body = $("div", {style: "display:none"});
    const head = $("div", {class: "entry", text: `\u25b8 rewrite ${i}: ${c.steps.length} step${c.steps.length > 1 ? "s" : ""}   ${expr(c.in).slice(0, 70)}  \u2192  ${expr(c.out).slice(0, 70)}`});
    head.onclick = () => {
      const open = body.style.display === "none";
      body.style.display = open ? "" : "none";
      if (open && !body.childElementCount) {
        body.append($("div", {class: "expr", text: "in:  " + expr(c.in)}), $("div", {class: "expr", text: "out: " + expr(c.out)}));
        for (const [rule, before, after] of c.steps)
          body.append($("div", {class: "step"}, $("div", {class: "rule", text: "rule " + D.rules[rule]}), $("div", {class: "expr", text: expr(before) + "\n  \u2192 " + expr(after)})));
        const g = $("button", {text: "graph of the result"});
        g.onclick = () => { g.replaceWith(graphView(c.out, query)); };
        body.append(g);
      }
    };
    out.append($("div", {class: "call"}, head, body));
    if (openAll) head.onclick();
  });
  return out;
}

function stagesTable(stages) {
  return $("table", {}, $("tr", {}, ...stages.map(s => $("th", {text: s[0]}))), $("tr", {}, ...stages.map(s => $("td", {text: ms(s[1])}))));
}

// ---- the two views: a realize, a kernel
const kernelByName = new Map(D.kernels.map((k, i) => [k.name, i]));
function showRealize(i, tab, query, open) {
  const z = D.realizes[i];
  const tabs = {graph: "tensor graph", schedule: "schedule", rewrites: "rewrites"};
  header(`realize ${i}` + (z.where ? ` (of a tensor made at ${z.where})` : ""), tabs, tab, t => go({r: i, t}));
  const body = document.getElementById("body");
  body.append(stagesTable(z.stages));
  if (z.error) body.append($("p", {class: "err", text: z.error}));
  if (tab === "schedule") {
    const tbl = $("table", {}, $("tr", {}, $("th", {text: "#"}), $("th", {text: "what"}), $("th", {text: "buffers (written first)"}), $("th", {text: "time"})));
    z.items.forEach((it, j) => {
      const k = kernelByName.get(it.kernel);
      const what = it.kernel ? $("a", {href: k === undefined ? "#" : `#k=${k}`, text: it.kernel}) : $("span", {text: it.kind});
      tbl.append($("tr", {}, $("td", {text: j}), $("td", {}, what), $("td", {class: "expr", text: it.bufs.join("\n")}), $("td", {text: ms(it.ms)})));
    });
    body.append(tbl);
  } else if (tab === "rewrites") body.append(rewritesView(z.rewrites, query, open));
  else body.append(graphView(z.graph, query));
}
function showKernel(i, tab, query, open) {
  const k = D.kernels[i];
  const tabs = {ast: "AST", rewrites: "rewrites", lowered: "lowered", uops: "uops", source: "source"};
  header(`kernel ${k.name} on ${k.device}` + (k.opts ? `   opts [${k.opts}]` : ""), tabs, tab, t => go({k: i, t}));
  const body = document.getElementById("body");
  body.append(stagesTable(k.stages));
  if (tab === "rewrites") body.append(rewritesView(k.rewrites, query, open));
  else if (tab === "lowered") body.append(graphView(k.lowered, query));
  else if (tab === "uops") body.append($("pre", {id: "uops", text: k.uops}));
  else if (tab === "source") body.append($("pre", {id: "source", text: k.source}));
  else body.append(graphView(k.ast, query));
}
function header(title, tabs, tab, pick) {
  document.getElementById("title").textContent = title;
  const t = document.getElementById("tabs");
  t.replaceChildren(...Object.entries(tabs).map(([key, name]) => $("span", {class: key === tab ? "sel" : "", text: name, onclick: () => pick(key)})));
  document.getElementById("body").replaceChildren();
}

// ---- the side list, the address' fragment as the state
function state() { return Object.fromEntries(new URLSearchParams(location.hash.slice(1))); }
function go(s) { const q = document.getElementById("search").value; if (q) s.q = q; location.hash = new URLSearchParams(s).toString(); }
function render() {
  const s = state(), query = s.q || "";
  document.getElementById("search").value = query;
  const list = document.getElementById("list");
  list.replaceChildren();
  const q = query.toLowerCase();
  D.realizes.forEach((z, i) => {
    const kernels = z.items.filter(it => it.kernel).length;
    const names = z.items.map(it => it.kernel || it.kind);
    if (q && !names.some(n => n.toLowerCase().includes(q)) && !(z.where || "").toLowerCase().includes(q) && !graphHas(z.graph, q)) return;
    list.append($("div", {class: "entry" + (s.r == i ? " sel" : "") + (z.error ? " err" : ""), text: `realize ${i}: ${kernels} kernels, ${z.items.length - kernels} other` + (z.where ? `  ${z.where}` : ""), onclick: () => go({r: i})}));
    if (s.r == i || z.items.length <= 3)
      for (const it of z.items) {
        const k = kernelByName.get(it.kernel);
        list.append($("div", {class: "entry sub" + (k !== undefined && s.k == k ? " sel" : ""), text: it.kernel || it.kind, onclick: () => k !== undefined && go({k})}));
      }
  });
  const tail = [];
  if (D.left_out.realizes) tail.push(`${D.left_out.realizes} later realizes`);
  if (D.left_out.kernels) tail.push(`${D.left_out.kernels} later kernels`);
  if (D.left_out.graphs) tail.push("some graphs");
  document.getElementById("summary").textContent = `${D.realizes.length} realizes, ${D.kernels.length} kernels compiled, ${N.length} graph nodes` + (tail.length ? `; left out: ${tail.join(", ")}` : "");
  if (s.k !== undefined && D.kernels[s.k]) showKernel(+s.k, s.t || "ast", query, s.open === "all");
  else if (s.r !== undefined && D.realizes[s.r]) showRealize(+s.r, s.t || "graph", query, s.open === "all");
  else if (D.realizes.length) showRealize(0, "graph", query);
  else if (D.kernels.length) showKernel(0, "ast", query);
  else document.getElementById("title").textContent = "nothing was recorded";
}
const graphCache = new Map();
function graphHas(root, q) {
  if (root < 0) return false;
  if (!graphCache.has(root)) graphCache.set(root, reach(root).map(label).join("\n").toLowerCase());
  return graphCache.get(root).includes(q);
}
let typing;
document.getElementById("search").oninput = e => { clearTimeout(typing); typing = setTimeout(() => { const s = state(); s.q = e.target.value; if (!s.q) delete s.q; location.hash = new URLSearchParams(s).toString(); }, 250); };
window.onhashchange = render;
render();
</script></body></html>
)tgviz";

}  // namespace tg::viz
