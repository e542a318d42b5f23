// A TinyJit capture as one self-contained C file (export_c.cpp): what jit.cpp hands over, with nothing of its
// internals, and the writer.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/kernel_cache.h"

namespace tg::jit {

struct ExportedProgram {
  struct Buffer {
    size_t nbytes = 0;
    std::string dtype;
    int input = -1, output = -1;  // the call's input or output it is, else -1
    bool weight = false;          // read and never written by the steps: its bytes go to the weights file
    std::vector<uint8_t> bytes;   // a weight's contents
  };
  struct Step {
    std::shared_ptr<const engine::CompiledKernel> kernel;  // null: a copy of bufs[1] into bufs[0]
    std::vector<size_t> bufs;
  };
  struct Var {
    std::string name;
    int64_t min = 0, max = 0;
  };
  std::vector<Buffer> buffers;  // symbolic ones at the variables' largest values
  std::vector<Step> steps;
  std::vector<Var> vars;  // the function's Variables, in the order of its calls' vars
  size_t n_inputs = 0, n_outputs = 0;
};

// Writes `program` as C to c_path and its weights to weights_path (raw bytes, in buffer order); raises
// ArgumentError naming the path when either cannot be written.
void write_c(const ExportedProgram& program, const std::string& c_path, const std::string& weights_path, SourceLocation where);

}  // namespace tg::jit
