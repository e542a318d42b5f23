#include "engine/kernel_cache.h"

#include <map>
#include <mutex>

#include "codegen/linearize.h"
#include "codegen/lower.h"

namespace tg::engine {

namespace {

std::string kernel_name(const codegen::LoweredKernel& k) {
  std::string name = k.reduce_axes.empty() ? "E" : "r";
  for (shape::sint s : k.full_shape)
    if (s != 1) name += "_" + std::to_string(s);
  return name;
}

}  // namespace

std::shared_ptr<const CompiledKernel> get_kernel(const uop::UOp& ast, runtime::Device& device) {
  static std::mutex mu;
  // keyed by the interned AST node (kept alive by the key) and the device
  static std::map<std::pair<const uop::UOpNode*, std::string>, std::pair<uop::UOp, std::shared_ptr<const CompiledKernel>>> cache;
  // distinct kernels with the same loop sizes get distinct names: E_4_3, E_4_3n1, ...
  static std::map<std::string, int> name_count;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(ast.get(), device.name());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.second;
  auto k = std::make_shared<CompiledKernel>();
  codegen::LoweredKernel lowered = codegen::lower(ast);
  std::string name = kernel_name(lowered);
  int n = name_count[name]++;
  k->name = n ? name + "n" + std::to_string(n) : name;
  k->uops = codegen::linearize(lowered);
  k->n_buffers = lowered.globals.size();
  k->rendered = renderer::render_c(k->name, k->uops);
  k->program = device.program(k->rendered.entry, k->rendered.source);
  cache[key] = {ast, k};
  return k;
}

}  // namespace tg::engine
