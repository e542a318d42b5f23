// TinyJit: run a function of tensors once as usual, capture the kernels it runs on the second call, and replay
// those kernels on every later call, with no graph building, scheduling or compiling (tinygrad's TinyJit).
//
//   tg::TinyJit<tg::Tensor> train_step([&](const std::vector<tg::Tensor>& in) {
//     tg::Tensor loss = model(in[0]).sparse_categorical_crossentropy(in[1]);
//     opt.zero_grad();
//     loss.backward();
//     auto updates = opt.schedule_step();
//     updates.push_back(loss);
//     tg::Tensor::realize(updates);
//     return loss;
//   });
//   for (...) float l = train_step({x, y}).item<float>();
//
// What a replay does, and the rules that follow from it:
//  - Inputs are the tensors passed in the call. They are realized (as contiguous buffers) before the function sees
//    them, and a replay runs the kernels on the new inputs' buffers. Each call must pass the same number of inputs
//    with the same shapes, dtypes and devices as the first: a call that changes one raises an ArgumentError.
//    An input with a symbolic size, a view of a realized buffer (`x.shrink({{0, n.bind(k)}, {0, 4}})`), is passed
//    as that view: the kernels read its buffer through it, and its variables join the call's vars with the values
//    it binds, so one capture serves every size within the variable's range (the view and its variables must be
//    the first call's; a value outside the range raises when it is bound).
//  - The outputs are realized at the end of each call. A replay writes them into the same buffers: read an output
//    before the next call, or copy it. An output passed back as an input (a recurrent loop, h = jit({h}), or
//    several outputs fed back crosswise) is read from a copy the call makes first, so the values are the plain
//    function's. An output that is an input, or a view of one, is the input of this call.
//  - Tensors that exist before the call and that the function updates with assign() (parameters, optimizer state,
//    batchnorm statistics, the random number generator's counter) are updated by every replay, as are buffers it
//    writes in place (cache.shrink(row).assign(k): a KV cache's row at a bound position). Tensors it only
//    reads (weights in eval, a learning rate, a dataset) are read again at every replay, so changing the learning
//    rate between calls (`opt.lr.assign(...)`) takes effect. A tensor not realized before the capture (a model's
//    weights never realized: their lazy random initialization) is computed by the captured kernels from its
//    graph; when it takes a new value (load_state_dict, assign, replace), the next call runs the function again
//    and the one after captures anew.
//  - Host code in the function does not run on replays: no printing, no item(), no control flow that depends on
//    values. Data copied in from the host inside the function (a Tensor built from a vector there) keeps the
//    values it had at the capture: pass data that changes as an input. The capture prints a warning when it
//    sees such a copy.
//  - Kernels whose inputs no call changes (weights the function only reads, constants, and what is computed from
//    them alone) run at the capture only: replays keep their outputs (an inference model's weights re-laid out for
//    its convolutions once). When a tensor the function reads was changed between calls, that replay runs them too.
//  - reset() forgets the capture: the next two calls run the function again.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tg/tensor.h"

namespace tg {

namespace detail {
struct JitState;
}

// The untyped core of TinyJit: a function from tensors to tensors.
class JitFunction {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  // A function of bound Variables too (symbolic shapes): each call passes them bound to this call's values, in the
  // same order, with the same names and ranges; a replay launches the captured kernels at the new values.
  using VarFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&, const std::vector<Dim>&)>;
  explicit JitFunction(Fn fn);
  explicit JitFunction(VarFn fn);
  ~JitFunction();
  JitFunction(JitFunction&&) noexcept;
  JitFunction& operator=(JitFunction&&) noexcept;

  std::vector<Tensor> call(const std::vector<Tensor>& inputs, SourceLocation where = SourceLocation::current());
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const std::vector<Dim>& vars,
                           SourceLocation where = SourceLocation::current());
  bool captured() const;         // true once the kernels are captured: later calls replay them
  size_t kernel_count() const;   // kernels (and copies) one replay runs (the invariant ones it skips not counted)
  // Writes the captured function as one self-contained C file (c_path) and its weights (weights_path): `int
  // model_init(const char* weights_path)` and `void model(const void* const* inputs, void* const* outputs)`, which
  // run the captured kernels in order with nothing but a C compiler (the file says which flags keep the values bit
  // for bit). A function of Variables gets `void model(inputs, outputs, const int64_t* vars)`, their values in the
  // calls' order; a tensor of symbolic size is its buffer at the largest sizes. For a captured function of its
  // inputs on the CPU; raises ArgumentError naming what stands in the way (not captured yet, tensors it updates,
  // another device, an output that is a view).
  void export_c(const std::string& c_path, const std::string& weights_path, SourceLocation where = SourceLocation::current()) const;
  void reset();

 private:
  std::unique_ptr<detail::JitState> state_;
};

// R is Tensor or std::vector<Tensor>: what the function returns.
template <class R = Tensor>
class TinyJit : public JitFunction {
 public:
  explicit TinyJit(std::function<R(const std::vector<Tensor>&)> fn) : JitFunction(wrap(std::move(fn))) {}
  explicit TinyJit(std::function<R(const std::vector<Tensor>&, const std::vector<Dim>&)> fn)
      : JitFunction(wrap_vars(std::move(fn))) {}
  R operator()(const std::vector<Tensor>& inputs = {}, SourceLocation where = SourceLocation::current()) {
    return first(call(inputs, where));
  }
  // with the function's Variables bound to this call's values: jit({x}, {start_pos.bind(7)})
  R operator()(const std::vector<Tensor>& inputs, const std::vector<Dim>& vars, SourceLocation where = SourceLocation::current()) {
    return first(call(inputs, vars, where));
  }

 private:
  static Fn wrap(std::function<R(const std::vector<Tensor>&)> fn) {
    if constexpr (std::is_same_v<R, Tensor>)
      return [fn = std::move(fn)](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; };
    else return fn;
  }
  static VarFn wrap_vars(std::function<R(const std::vector<Tensor>&, const std::vector<Dim>&)> fn) {
    if constexpr (std::is_same_v<R, Tensor>)
      return [fn = std::move(fn)](const std::vector<Tensor>& in, const std::vector<Dim>& v) { return std::vector<Tensor>{fn(in, v)}; };
    else return fn;
  }
  static R first(std::vector<Tensor> out) {
    if constexpr (std::is_same_v<R, Tensor>) return out[0];
    else return out;
  }
};

}  // namespace tg
