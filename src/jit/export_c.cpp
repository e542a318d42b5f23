#include "jit/export_c.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>

#include "tg/error.h"
#include "uop/uop.h"

namespace tg::jit {

namespace {

void write_file(const std::string& path, const std::string& text, SourceLocation where) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw ArgumentError("TinyJit::export_c", path + ": cannot be written (" + std::strerror(errno) + ")", where);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw ArgumentError("TinyJit::export_c", path + ": writing failed (" + std::strerror(errno) + ")", where);
}

std::string buf_name(size_t i) { return "model_buf" + std::to_string(i); }

// `vars[j]`, the model's argument for the function's Variable `name`; `who` names what takes it
std::string var_ref(const std::string& name, const std::string& who, const ExportedProgram& p, SourceLocation where) {
  for (size_t j = 0; j < p.vars.size(); j++)
    if (p.vars[j].name == name) return "vars[" + std::to_string(j) + "]";
  throw ArgumentError("TinyJit::export_c", who + " takes the variable " + name + ", which is not one of the function's", where);
}

// The C expression of a value of the model's `vars` (the caller's array): a symbolic loop's trip count
std::string var_expr(const uop::UOp& e, const ExportedProgram& p, SourceLocation where) {
  using uop::Ops;
  auto bin = [&](const char* op) {
    return "(" + var_expr(e.src(0), p, where) + " " + op + " " + var_expr(e.src(1), p, where) + ")";
  };
  switch (e.op()) {
    case Ops::CONST: return "(int64_t)" + std::to_string(const_to_int(e.const_value()));
    case Ops::CAST: return var_expr(e.src(0), p, where);
    case Ops::DEFINE_VAR: return var_ref(e.arg().get<uop::VarArg>().name, "a kernel's loop", p, where);
    case Ops::ADD: return bin("+");
    case Ops::MUL: return bin("*");
    case Ops::IDIV: return bin("/");
    case Ops::MOD: return bin("%");
    case Ops::MAX: {
      std::string a = var_expr(e.src(0), p, where), b = var_expr(e.src(1), p, where);
      return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
    }
    default:
      throw ArgumentError("TinyJit::export_c", "a kernel's loop size " + e.render() + " has no C form here (" +
                                                    std::string(uop::op_name(e.op())) + ")", where);
  }
}

// A kernel's launch values: {first, end} of its split loop (the whole loop), then its variables' values
std::string launch_vars(const engine::CompiledKernel& k, const ExportedProgram& p, SourceLocation where) {
  std::string v = "0, " + (k.parallel_end ? var_expr(k.parallel_end, p, where) : std::to_string(k.parallel_size));
  for (const std::string& name : k.vars) v += ", " + var_ref(name, "kernel " + k.name, p, where);
  return v;
}

}  // namespace

void write_c(const ExportedProgram& p, const std::string& c_path, const std::string& weights_path, SourceLocation where) {
  std::string model_signature = "void model(const void* const* inputs, void* const* outputs" +
                                std::string(p.vars.empty() ? ")" : ", const int64_t* vars)");
  std::string c, weights, io;
  for (size_t i = 0; i < p.buffers.size(); i++) {
    const ExportedProgram::Buffer& b = p.buffers[i];
    if (b.input >= 0) io += "//   inputs[" + std::to_string(b.input) + "]: " + std::to_string(b.nbytes) + " bytes of " + b.dtype + "\n";
    if (b.output >= 0) io += "//   outputs[" + std::to_string(b.output) + "]: " + std::to_string(b.nbytes) + " bytes of " + b.dtype + "\n";
    if (b.weight) weights.append(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size());
  }
  c += "// A model exported by tinygrad.cpp from a TinyJit capture: " + std::to_string(p.steps.size()) + " steps over " +
       std::to_string(p.buffers.size()) + " buffers, " + std::to_string(weights.size()) + " bytes of weights.\n"
       "// It needs nothing but a C compiler. Build it with the flags that keep the values bit for bit the library's:\n"
       "//   clang -O2 -march=native -ffp-contract=off -fno-math-errno -fwrapv -c model.c   (link with -lm)\n"
       "//\n"
       "//   int model_init(const char* weights_path);  reads the weights file; 0, or -1 when it is not the exported one\n"
       "//   " + model_signature + ";  the captured function, in and out as bytes:\n" + io;
  if (!p.vars.empty()) {
    c += "// vars: the values of its Variables, each within its range; a tensor of symbolic size is its buffer at the\n"
         "// largest values (the bytes above), of which the values given fill the first rows:\n";
    for (size_t j = 0; j < p.vars.size(); j++)
      c += "//   vars[" + std::to_string(j) + "]: " + p.vars[j].name + " in [" + std::to_string(p.vars[j].min) + ", " +
           std::to_string(p.vars[j].max) + "]\n";
  }
  c += "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n\n";
  // each kernel once, its functions renamed so that kernels of one name from different schedules stay apart
  std::vector<const engine::CompiledKernel*> kernels;
  std::vector<size_t> kernel_of(p.steps.size(), SIZE_MAX);
  for (size_t s = 0; s < p.steps.size(); s++) {
    const engine::CompiledKernel* k = p.steps[s].kernel.get();
    if (!k) continue;
    size_t at = 0;
    while (at < kernels.size() && kernels[at] != k) at++;
    if (at == kernels.size()) {
      kernels.push_back(k);
      std::string n = "model_k" + std::to_string(at), name = k->rendered.name, entry = k->rendered.entry;
      c += "#define " + name + " " + n + "\n#define " + entry + " " + n + "_call\n" + k->rendered.source + "\n#undef " + name +
           "\n#undef " + entry + "\n\n";
    }
    kernel_of[s] = at;
  }
  for (size_t i = 0; i < p.buffers.size(); i++)
    c += "static unsigned char " + buf_name(i) + "[" + std::to_string(std::max<size_t>(1, p.buffers[i].nbytes)) +
         "] __attribute__((aligned(64)));  // " + p.buffers[i].dtype + "\n";
  c += "\nint model_init(const char* weights_path) {\n  FILE* f = fopen(weights_path, \"rb\");\n  if (!f) return -1;\n  int ok = 1;\n";
  for (size_t i = 0; i < p.buffers.size(); i++)
    if (p.buffers[i].weight)
      c += "  ok = ok && fread(" + buf_name(i) + ", 1, " + std::to_string(p.buffers[i].nbytes) + ", f) == " + std::to_string(p.buffers[i].nbytes) + ";\n";
  c += "  ok = ok && fgetc(f) == EOF;  // the whole file, and no more\n  fclose(f);\n  return ok ? 0 : -1;\n}\n\n";
  c += model_signature + " {\n";
  for (size_t i = 0; i < p.buffers.size(); i++)
    if (p.buffers[i].input >= 0)
      c += "  memcpy(" + buf_name(i) + ", inputs[" + std::to_string(p.buffers[i].input) + "], " + std::to_string(p.buffers[i].nbytes) + ");\n";
  for (size_t s = 0; s < p.steps.size(); s++) {
    const ExportedProgram::Step& st = p.steps[s];
    if (!st.kernel) {
      c += "  memcpy(" + buf_name(st.bufs[0]) + ", " + buf_name(st.bufs[1]) + ", " + std::to_string(p.buffers[st.bufs[0]].nbytes) + ");\n";
      continue;
    }
    std::string list;
    for (size_t b : st.bufs) list += (list.empty() ? "" : ", ") + buf_name(b);
    // without Variables the kernel runs its whole loop when given no launch values
    std::string vals = p.vars.empty() ? "0" : "v";
    c += "  { void* b[] = {" + list + "};" + (p.vars.empty() ? "" : " const int64_t v[] = {" + launch_vars(*st.kernel, p, where) + "};") +
         " model_k" + std::to_string(kernel_of[s]) + "_call(b, " + vals + "); }  // " + st.kernel->name + "\n";
  }
  for (size_t i = 0; i < p.buffers.size(); i++)
    if (p.buffers[i].output >= 0)
      c += "  memcpy(outputs[" + std::to_string(p.buffers[i].output) + "], " + buf_name(i) + ", " + std::to_string(p.buffers[i].nbytes) + ");\n";
  c += "}\n";
  write_file(c_path, c, where);
  write_file(weights_path, weights, where);
}

}  // namespace tg::jit
