#include "viz/graph_dot.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/util.h"
#include "runtime/process.h"
#include "schedule/grouping.h"
#include "shape/view.h"
#include "tg/context.h"
#include "tg/error.h"
#include "uop/ops.h"

namespace tg::viz {

using uop::Ops;
using uop::UOp;

namespace {

// beyond these, the dot file is not written (megabytes of text nobody can look at), or not drawn (dot takes minutes)
constexpr size_t kMaxWritten = 100000, kMaxDrawn = 1000;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

std::string label(const UOp& u) {
  std::string l(uop::op_name(u.op()));
  if (u.op() == Ops::CONST) l += " " + const_repr(u.const_value());
  else if (!u.arg().empty()) {
    std::string a = u.arg().repr();
    l += " " + (a.size() > 40 ? a.substr(0, 37) + "..." : a);
  }
  if (u.dtype() != dtypes::void_) l += "\n" + (u.symbolic_shape() ? std::string("symbolic") : shape::shape_str(u.shape())) + " " + u.dtype().name();
  return l;
}

std::string write_dot(const UOp& root, const std::vector<UOp>& grads, size_t& n_nodes) {
  std::vector<UOp> forward = root.toposort(), backward;
  std::unordered_set<const uop::UOpNode*> in_forward, in_backward;
  for (const UOp& u : forward) in_forward.insert(u.get());
  for (const UOp& g : grads)
    for (const UOp& u : g.toposort())
      if (!in_forward.count(u.get()) && in_backward.insert(u.get()).second) backward.push_back(u);
  std::unordered_map<const uop::UOpNode*, size_t> id;
  std::vector<UOp> drawn;  // in id order: sources first
  std::string nodes, edges;
  for (const std::vector<UOp>* part : {&forward, &backward})
    for (const UOp& u : *part) {
      if (u.op() == Ops::DEVICE) continue;  // every buffer's: an edge from each would hide the graph
      id[u.get()] = id.size();
      drawn.push_back(u);
      bool leaf = u.op() == Ops::BUFFER || u.op() == Ops::CONST;
      const char* fill = in_backward.count(u.get()) ? "#cfe2ff" : leaf ? "#e0e0e0" : "#ffffff";
      nodes += "  n" + std::to_string(id[u.get()]) + " [label=" + quoted(label(u)) + ", fillcolor=\"" + fill + "\"];\n";
    }
  n_nodes = id.size();
  if (n_nodes > kMaxWritten) return "";
  for (const UOp& u : drawn) {
    size_t to = id[u.get()];
    for (const UOp& s : u.src()) {
      auto from = id.find(s.get());
      if (from == id.end()) continue;
      bool src_forward = in_forward.count(s.get()) != 0, dst_forward = in_forward.count(u.get()) != 0;
      bool made = schedule::movement_base(s).op() == Ops::BUFFER || schedule::movement_base(s).op() == Ops::CONST;
      const char* color = dst_forward ? "black" : !src_forward ? "blue" : made ? "red" : "purple";
      edges += "  n" + std::to_string(from->second) + " -> n" + std::to_string(to) + " [color=" + color + "];\n";
    }
  }
  return "digraph tinygrad {\n  node [shape=box, style=filled, fontname=\"monospace\", fontsize=10];\n" + nodes + edges + "}\n";
}

}  // namespace

void draw_autograd_graph(const UOp& root, const std::vector<UOp>& grads) {
  if (getenv_int("GRAPH") < 1) return;
  std::string path = base::per_rank(getenv_str("GRAPH_PATH", runtime::temp_dir() + "/net.dot"));
  static std::mutex mu;
  static std::set<std::string> drawn;  // each path gets the first backward that names it
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!drawn.insert(path).second) return;
  }
  size_t n = 0;
  std::string dot = write_dot(root, grads, n);
  if (dot.empty()) {
    std::fprintf(stderr, "GRAPH: the graph has %zu nodes, more than %zu: not written\n", n, kMaxWritten);
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f && std::fwrite(dot.data(), 1, dot.size(), f) == dot.size();
  if (f) ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::fprintf(stderr, "GRAPH: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::string svg = (path.size() > 4 && path.compare(path.size() - 4, 4, ".dot") == 0 ? path.substr(0, path.size() - 4) : path) + ".svg";
  std::string drawer = runtime::find_executable("dot", getenv_str("PATH", "/usr/bin:/bin"));
  std::string note;
  if (drawer.empty()) note = " (no SVG: Graphviz's dot is not on PATH; apt-get install graphviz)";
  else if (n > kMaxDrawn) note = " (no SVG: more than " + std::to_string(kMaxDrawn) + " nodes)";
  else {
    try {
      runtime::TempDir dir("GRAPH");
      runtime::RunResult r = runtime::run({drawer, "-Tsvg", path, "-o", svg}, dir.path + "/dot.log", 60);
      note = r.exit_code == 0 ? " and " + svg
             : r.timed_out    ? " (no SVG: dot ran past 60 s)"
                              : " (dot failed: " + (r.started ? r.output : r.spawn_error) + ")";
    } catch (const Error& e) {
      note = std::string(" (no SVG: ") + e.what() + ")";
    }
  }
  std::fprintf(stderr, "GRAPH: %zu nodes in %s%s\n", n, path.c_str(), note.c_str());
}

}  // namespace tg::viz
