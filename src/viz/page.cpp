// The VIZ page: the recorded realizes and kernels as JSON (one table of graph nodes that every graph refers to by
// index), inside a self-contained HTML page (page_html.cpp) whose script draws them.
#include <cstdio>
#include <string>
#include <vector>

#include "base/util.h"
#include "viz/record.h"

namespace tg::viz {

extern const char* const kPageHtml;  // page_html.cpp

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string stages_json(const std::vector<Stage>& stages) {
  std::string out = "[";
  for (size_t i = 0; i < stages.size(); i++) out += (i ? "," : "") + std::string("[") + base::json_quote(stages[i].name) + "," + num(stages[i].ms) + "]";
  return out + "]";
}

std::string strings_json(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); i++) out += (i ? "," : "") + base::json_quote(v[i]);
  return out + "]";
}

// {"calls": [{"in", "out", "steps": [[rule, before, after], ...]}], "unchanged", "dropped"}
std::string rewrites_json(const StoredRewrites& log) {
  std::string out = "{\"calls\":[";
  for (size_t c = 0; c < log.calls.size(); c++) {
    const StoredRewrites::Call& call = log.calls[c];
    out += (c ? "," : "") + std::string("{\"in\":") + std::to_string(call.in) + ",\"out\":" + std::to_string(call.out) + ",\"steps\":[";
    for (size_t i = 0; i < call.steps.size(); i++) {
      const auto& [rule, before, after] = call.steps[i];
      out += (i ? ",[" : "[") + std::to_string(rule) + "," + std::to_string(before) + "," + std::to_string(after) + "]";
    }
    out += "]}";
  }
  return out + "],\"unchanged\":" + std::to_string(log.unchanged) + ",\"dropped\":" + std::to_string(log.dropped) + "}";
}

}  // namespace

std::string render_page(const Recorded& r) {
  std::string kernels = "[";
  for (size_t i = 0; i < r.kernels.size(); i++) {
    const StoredKernel& k = *r.kernels[i];
    kernels += (i ? ",\n{" : "\n{") + std::string("\"name\":") + base::json_quote(k.name) + ",\"device\":" + base::json_quote(k.device) +
               ",\"opts\":" + base::json_quote(k.opts) + ",\"ast\":" + std::to_string(k.ast) +
               ",\"lowered\":" + std::to_string(k.lowered) + ",\"uops\":" + base::json_quote(k.uops) +
               ",\"source\":" + base::json_quote(k.source) + ",\"stages\":" + stages_json(k.stages) +
               ",\"rewrites\":" + rewrites_json(k.rewrites) + "}";
  }
  kernels += "]";
  std::string realizes = "[";
  for (size_t i = 0; i < r.realizes.size(); i++) {
    const StoredRealize& z = *r.realizes[i];
    realizes += (i ? ",\n{" : "\n{") + std::string("\"where\":") + base::json_quote(z.where) + ",\"graph\":" + std::to_string(z.graph) +
                ",\"error\":" + base::json_quote(z.error) + ",\"stages\":" + stages_json(z.stages) + ",\"items\":[";
    for (size_t j = 0; j < z.items.size(); j++) {
      const ItemRecord& it = z.items[j];
      realizes += (j ? ",{" : "{") + std::string("\"kind\":") + base::json_quote(it.kind) + ",\"kernel\":" + base::json_quote(it.kernel) +
                  ",\"bufs\":" + strings_json(it.bufs) + ",\"ms\":" + num(it.ms) + "}";
    }
    realizes += "],\"rewrites\":" + rewrites_json(z.rewrites) + "}";
  }
  realizes += "]";
  std::string ops = "[";
  for (int o = 0; o < uop::kNumOps; o++) ops += (o ? "," : "") + base::json_quote(std::string(uop::op_name(static_cast<uop::Ops>(o))));
  ops += "]";
  std::string json = "{\"ops\":" + ops + ",\"rules\":" + strings_json(r.rules) + ",\"nodes\":[" + r.nodes_json + "],\n\"kernels\":" + kernels +
                     ",\n\"realizes\":" + realizes + ",\n\"left_out\":{\"realizes\":" + std::to_string(r.dropped_realizes) +
                     ",\"kernels\":" + std::to_string(r.dropped_kernels) + ",\"graphs\":" + (r.nodes_left_out ? "true" : "false") + "}}";
  // inside <script>, "</" would end the element: JSON reads "<\/" as the same two characters
  std::string safe;
  safe.reserve(json.size());
  for (size_t i = 0; i < json.size(); i++) {
    safe += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') safe += '\\';
  }
  std::string page = kPageHtml;
  const std::string marker = "/*VIZ_DATA*/";
  size_t at = page.find(marker);
  return page.substr(0, at) + safe + page.substr(at + marker.size());
}

}  // namespace tg::viz
