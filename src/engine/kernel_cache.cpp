#include "engine/kernel_cache.h"

#include <algorithm>
#include <functional>
#include <cctype>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <tuple>

#include "base/util.h"
#include "codegen/grid.h"
#include "codegen/linearize.h"
#include "codegen/lower.h"
#include "engine/beam.h"
#include "engine/render_check.h"
#include "tg/context.h"
#include "uop/spec.h"
#include "uop/symbolic.h"
#include "viz/record.h"

namespace tg::engine {

namespace {

std::string kernel_name(const codegen::LoweredKernel& k) {
  // E_ or r_, then the loop sizes: "E_4_3", "r_16_16_16"; a kernel without loops is "E_"
  std::string name = k.reduce_axes.empty() ? "E_" : "r_", sizes;
  for (size_t i = 0; i < k.full_shape.size(); i++) {
    Dim s = k.loop_sizes[i].is_symbolic() ? k.loop_sizes[i] : Dim(k.full_shape[i]);  // a PADTO'd axis: its padded size
    if (s == Dim(1)) continue;
    std::string part = s.str();  // a symbolic size as an identifier: r_4_start_pos1_64
    std::erase_if(part, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '_'; });
    sizes += (sizes.empty() ? "" : "_") + part;
  }
  return name + sizes;
}

// What one run executes, `per(u)` for each uop u times the trip counts of the loops around it. A symbolic loop's
// trip count is its end expression, so the count is an int64 expression over the kernel's variables then.
uop::UOp count_per_run(const std::vector<uop::UOp>& uops, const std::function<int64_t(const uop::UOp&)>& per) {
  int64_t ops = 0, mult = 1;
  uop::UOp sym_mult;  // the symbolic trip counts around this point (null: none)
  std::vector<std::pair<int64_t, uop::UOp>> outer;
  std::vector<std::pair<uop::UOp, int64_t>> sym_ops;  // (product of symbolic trips, ops per trip)
  for (const uop::UOp& u : uops)  // every work-item of a grid runs the whole body
    if (u.op() == uop::Ops::SPECIAL && u.src(0).is_const()) mult *= std::max<int64_t>(1, const_to_int(u.src(0).const_value()));
    else if (u.op() == uop::Ops::SPECIAL) sym_mult = sym_mult ? sym_mult * u.src(0).cast(dtypes::int64) : u.src(0).cast(dtypes::int64);
  for (const uop::UOp& u : uops) {
    if (u.op() == uop::Ops::RANGE) {
      outer.push_back({mult, sym_mult});
      if (u.src(0).is_const()) {
        mult *= std::max<int64_t>(1, const_to_int(u.src(0).const_value()));
      } else {
        uop::UOp trips = u.src(0).cast(dtypes::int64);
        sym_mult = sym_mult ? sym_mult * trips : trips;
      }
    } else if (u.op() == uop::Ops::END && !outer.empty()) {
      std::tie(mult, sym_mult) = outer.back();
      outer.pop_back();
    } else if (int64_t per_trip = per(u)) {
      int64_t n = mult * per_trip;
      if (!sym_mult) ops += n;
      else if (!sym_ops.empty() && sym_ops.back().first == sym_mult) sym_ops.back().second += n;
      else sym_ops.push_back({sym_mult, n});
    }
  }
  uop::UOp total = uop::UOp::const_(dtypes::int64, ops);
  for (const auto& [trips, n] : sym_ops) total = total + trips * uop::UOp::const_(dtypes::int64, n);
  return uop::simplify(total);
}

// ALU ops (a vector op does one per element)
int64_t alu_ops(const uop::UOp& u) {
  if (u.op() == uop::Ops::WMMA) return 2 * 16 * 8 * 16 / 32;  // a thread's share of a warp's 16x8x16 multiply
  bool alu = uop::GroupOp::ALU().contains(u.op()) && u.op() != uop::Ops::CAST && u.op() != uop::Ops::BITCAST;
  return alu || u.op() == uop::Ops::REDUCE ? u.dtype().count() : 0;
}
// elements loaded or stored in global memory
int64_t global_moves(const uop::UOp& u) {
  bool global = (u.op() == uop::Ops::LOAD || u.op() == uop::Ops::STORE) && u.src(0).dtype().addr_space() == AddrSpace::Global;
  return !global ? 0 : u.op() == uop::Ops::LOAD ? u.dtype().count() : u.src(1).dtype().count();
}

// bytes loaded from or stored to buffer argument i
int64_t global_bytes(const uop::UOp& u, int64_t i) {
  if (!global_moves(u)) return 0;
  const uop::UOp* p = &u.src(0);  // the address, down to the buffer it indexes
  while (p->op() != uop::Ops::DEFINE_GLOBAL && !p->src().empty()) p = &p->src(0);
  if (p->op() != uop::Ops::DEFINE_GLOBAL || p->arg().get<int64_t>() != i) return 0;
  return global_moves(u) * (u.op() == uop::Ops::LOAD ? u.dtype() : u.src(1).dtype()).scalar().itemsize();
}

// a count as the kernel keeps it: its value at the variables' largest values, and the expression when symbolic
void set_count(const uop::UOp& count, int64_t& value, uop::UOp& expr) {
  if (count.is_const()) value = const_to_int(count.const_value());
  else expr = count, value = count.vmax();
}

}  // namespace

std::shared_ptr<CompiledKernel> render_kernel(const codegen::LoweredKernel& lowered, const std::string& name,
                                              const runtime::DeviceCaps& caps, const std::string& device) {
  auto k = std::make_shared<CompiledKernel>();
  k->name = name;
  k->opts = codegen::opts_str(lowered.opts);
  bool vector_opt = std::any_of(lowered.opts.begin(), lowered.opts.end(), [](const codegen::Opt& o) { return o.op == codegen::OptOp::VECTOR; });
  if (vector_opt && !lowered.vectorized) k->opts += " (VECTOR as copies: an op without a vector form)";
  codegen::LoweredKernel gridded;
  if (caps.grid) {
    gridded = lowered;
    k->dims = codegen::to_grid(gridded, caps, device, &k->global_expr);
    k->grid = true;
  }
  k->uops = codegen::linearize(caps.grid ? gridded : lowered);
  uop::check_spec(k->uops, uop::SpecStage::Linear);
  for (const uop::UOp& u : k->uops)  // linearize emits them sorted by name, after the buffers
    if (u.op() == uop::Ops::DEFINE_VAR) k->vars.push_back(u.arg().get<uop::VarArg>().name);
  k->dims.n_vars = k->vars.size();
  k->n_buffers = k->dims.n_bufs = lowered.globals.size();
  set_count(count_per_run(k->uops, alu_ops), k->ops, k->ops_expr);
  set_count(count_per_run(k->uops, global_moves), k->moves, k->moves_expr);
  k->buffer_bytes.resize(k->n_buffers), k->buffer_bytes_expr.resize(k->n_buffers);
  for (size_t i = 0; i < k->n_buffers; i++)
    set_count(count_per_run(k->uops, [i](const uop::UOp& u) { return global_bytes(u, static_cast<int64_t>(i)); }),
              k->buffer_bytes[i], k->buffer_bytes_expr[i]);
  // on the CPU, the outermost loop, when it is not a reduction's, can be cut between threads: its iterations write
  // disjoint outputs
  const uop::UOp* parallel = nullptr;
  for (const uop::UOp& u : k->uops)
    if (u.op() == uop::Ops::RANGE && !caps.grid) {
      bool reduce = std::find(lowered.reduce_axes.begin(), lowered.reduce_axes.end(), u.arg().get<int64_t>()) != lowered.reduce_axes.end();
      if (!reduce && u.src(0).is_const()) parallel = &u, k->parallel_size = const_to_int(u.src(0).const_value());
      else if (!reduce) parallel = &u, k->parallel_end = u.src(0);
      break;
    }
  k->rendered = renderer::render(renderer::language(caps.dialect), k->name, k->uops, parallel);
  return k;
}

std::shared_ptr<CompiledKernel> plan_kernel(runtime::Device& device, const codegen::LoweredKernel& lowered, const std::string& name) {
  std::shared_ptr<CompiledKernel> k = render_kernel(lowered, name, device.caps(), device.name());
  int debug = static_cast<int>(getenv_int("DEBUG"));
  if (debug >= 5) std::cerr << codegen::print_uops(k->uops);
  if (debug >= 4) std::cerr << k->rendered.source;
  return k;
}

std::shared_ptr<CompiledKernel> build_kernel(runtime::Device& device, const codegen::LoweredKernel& lowered, const std::string& name) {
  std::shared_ptr<CompiledKernel> k = plan_kernel(device, lowered, name);
  k->program = device.program(k->rendered.entry, k->rendered.source);
  return k;
}

std::vector<std::shared_ptr<const CompiledKernel>> get_kernels(const std::vector<KernelRequest>& requests) {
  static std::mutex mu;
  // keyed by the interned AST node (kept alive by the key), the device and the settings that choose the opts
  using Key = std::tuple<const uop::UOpNode*, std::string, int64_t, int64_t, int64_t, int64_t>;
  static std::map<Key, std::pair<uop::UOp, std::shared_ptr<const CompiledKernel>>> cache;
  // distinct kernels with the same loop sizes get distinct names: E_4_3, E_4_3n1, ...
  static std::map<std::string, int> name_count;
  std::lock_guard<std::mutex> lock(mu);
  static const base::IntSetting noopt_s("NOOPT"), random_s("RANDOM_OPTS"), beam_s("BEAM"), tc_s("TC", 1);
  int64_t noopt = noopt_s.get(), random_seed = random_s.get(), beam = beam_s.get(), tc = tc_s.get();
  std::vector<std::shared_ptr<const CompiledKernel>> out(requests.size());
  std::map<Key, std::shared_ptr<CompiledKernel>> planned;  // new kernels, once each
  std::map<runtime::Device*, std::vector<std::shared_ptr<CompiledKernel>>> to_compile;
  std::vector<std::pair<Key, uop::UOp>> to_remember;
  std::vector<std::pair<std::shared_ptr<CompiledKernel>, std::unique_ptr<viz::KernelRecord>>> records;  // VIZ
  for (size_t i = 0; i < requests.size(); i++) {
    const uop::UOp& ast = requests[i].ast;
    runtime::Device& device = *requests[i].device;
    Key key{ast.get(), device.name(), noopt, random_seed, beam, tc};
    if (auto it = cache.find(key); it != cache.end()) {
      out[i] = it->second.second;
      continue;
    }
    if (auto it = planned.find(key); it != planned.end()) {
      out[i] = it->second;
      continue;
    }
    // VIZ: the kernel's stages, timed, and the graph rewrites in them
    std::unique_ptr<viz::KernelRecord> rec = viz::enabled() ? std::make_unique<viz::KernelRecord>() : nullptr;
    std::optional<uop::TrackRewrites> tracking;
    if (rec) tracking.emplace(&rec->rewrites);
    viz::StageTimer timer;
    codegen::LoweredKernel lowered = codegen::lower(ast, {}, device.caps());
    if (rec) rec->stages.push_back(timer.stop("lower"));
    std::vector<codegen::Opt> opts;
    bool searched = false;
    // (no opt applies to a symbolic axis: legal() refuses them, so every way below picks opts on the other axes)
    if (random_seed > 0 && !noopt) {
      std::mt19937 rng(static_cast<uint32_t>(random_seed) ^ static_cast<uint32_t>(ast.hash()));
      opts = codegen::random_opts(lowered, rng);
    } else if (beam > 0 && !noopt && requests[i].bufs) {
      opts = beam_search(ast, lowered, device, *requests[i].bufs, static_cast<int>(beam));
      searched = true;
    } else {
      opts = codegen::choose_opts(lowered);
    }
    if (rec) rec->stages.push_back(timer.stop(searched ? "BEAM search" : "choose opts"));
    if (!opts.empty()) lowered = codegen::lower(ast, opts, device.caps());
    if (rec && !opts.empty()) rec->stages.push_back(timer.stop("lower with opts"));
    std::string name = kernel_name(lowered);
    if (int n = name_count[name]++) name += "n" + std::to_string(n);
    if (getenv_int("DEBUG") >= 3)
      std::cerr << "kernel " << name << ": loops " << shape::shape_str(lowered.full_shape) << ", opts ["
                << codegen::opts_str(opts) << "]" << (searched ? " (BEAM)" : "") << "\n";
    std::shared_ptr<CompiledKernel> k = plan_kernel(device, lowered, name);
    if (rec) {
      rec->stages.push_back(timer.stop("linearize and render"));
      rec->name = name, rec->device = device.name(), rec->opts = k->opts;
      rec->ast = ast, rec->lowered = lowered.sink;
      rec->uops = codegen::print_uops(k->uops), rec->source = k->rendered.source;
      records.push_back({k, std::move(rec)});
    }
    tracking.reset();
    check_render(ast);  // RENDER_CHECK=CUDA: the kernel compiles for CUDA too
    planned[key] = k;
    to_compile[&device].push_back(k);
    // under BEAM a kernel compiled without buffers to time (a caller that only wants the source) is not remembered
    if (!(beam > 0 && !requests[i].bufs && !noopt && random_seed <= 0)) to_remember.push_back({key, ast});
    out[i] = k;
  }
  // each device compiles its new kernels together (the CPU: in one compiler run per thread)
  for (auto& [device, kernels] : to_compile) {
    std::vector<runtime::KernelSource> sources;
    for (const auto& k : kernels) sources.push_back({k->rendered.entry, k->rendered.source});
    viz::StageTimer timer;
    std::vector<std::shared_ptr<runtime::Program>> programs = device->programs(sources);
    for (size_t j = 0; j < kernels.size(); j++) kernels[j]->program = programs[j];
    viz::Stage compile = timer.stop(kernels.size() > 1 ? "compile (" + std::to_string(kernels.size()) + " kernels together)" : "compile");
    for (auto& [k, rec] : records)
      if (std::find(kernels.begin(), kernels.end(), k) != kernels.end()) rec->stages.push_back(compile);
  }
  for (const auto& [k, rec] : records) viz::add_kernel(*rec);
  for (const auto& [key, ast] : to_remember) cache[key] = {ast, planned.at(key)};
  return out;
}

std::shared_ptr<const CompiledKernel> get_kernel(const uop::UOp& ast, runtime::Device& device,
                                                 const std::vector<runtime::Buffer*>* bufs) {
  return get_kernels({{ast, &device, bufs}})[0];
}

}  // namespace tg::engine
