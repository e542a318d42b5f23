"""Shared by the golden generators: values with tinygrad.cpp dtypes, and the text format tests/support/golden.cpp reads.

Format, one item per line:
  case <op> <variant>
  args <numbers...>                   op arguments (shapes, axes, pads, scalars), possibly none
  in <dtype> <ndim> <dims...> : <values...>
  out <dtype> <ndim> <dims...> : <values...>
"""
import math

import numpy as np
import torch

rng = np.random.default_rng(20261121)
TORCH = {"bool": torch.bool, "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
         "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
         "float64": torch.float64}
NUMPY_ONLY = {"uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
out_lines = []
cases = {}  # (op, variant) -> (inputs, output, index of its "out" line in out_lines), for grad()


def values(shape, dt, kind="any"):
    if dt == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dt in FLOATS:
        lo = 0.25 if kind == "positive" else -3.0
        return rng.uniform(lo, 3.0, shape)
    if kind == "shift":
        return rng.integers(0, 5, shape)
    lo = 1 if kind == "positive" else (0 if dt in UNSIGNED else -10)
    return rng.integers(lo, 11, shape)


class T:
    """A value with its tinygrad.cpp dtype; arithmetic via torch or numpy."""
    def __init__(self, data, dt):
        self.dt = dt
        if dt in NUMPY_ONLY:
            self.v = np.asarray(data).astype(NUMPY_ONLY[dt])
        else:
            self.v = torch.tensor(np.asarray(data), dtype=TORCH[dt]) if not isinstance(data, torch.Tensor) else data.to(TORCH[dt])

    def numpy(self):
        if isinstance(self.v, np.ndarray):
            return self.v
        return self.v.float().numpy() if self.dt in ("float16", "bfloat16") else self.v.numpy()

    def compute(self):  # what ops run on: float32 for 16-bit floats
        return self.v.float() if self.dt in ("float16", "bfloat16") else self.v


def fmt(t):
    a = t.numpy()
    shape = " ".join(str(d) for d in a.shape)
    flat = a.reshape(-1)
    if t.dt in FLOATS:
        vals = [repr(float(x)) for x in flat.astype(np.float64)]
    elif t.dt == "bool":
        vals = [str(int(x)) for x in flat]
    else:
        vals = [str(int(x)) for x in flat]
    return f"{t.dt} {a.ndim} {shape} : {' '.join(vals)}".replace("  ", " ")


def emit(op, variant, ins, out, args=()):
    out_lines.append(f"case {op} {variant}")
    out_lines.append("args " + " ".join(str(a) for a in args))
    for t in ins:
        out_lines.append("in " + fmt(t))
    out_lines.append("out " + fmt(out))
    cases[(op, variant)] = (ins, out, len(out_lines) - 1)


def grad(op, variant, fn):
    """PyTorch's input gradients for an emitted case: fn recomputes its output from the inputs (float ones as float64
    leaves), the loss is sum(out * w) with w[k] = sin(1 + 0.7 k) over the flat output (the C++ test uses the same w),
    and each float input i the output uses gets a line "grad i <float64 tensor>" after the case's out line."""
    ins, want, line = cases[(op, variant)]
    xs = [t.v.double().requires_grad_() if t.dt in FLOATS else t.v for t in ins]
    y = fn(*xs)
    expect = torch.tensor(want.numpy(), dtype=torch.float64)
    assert torch.allclose(y.detach(), expect, rtol=1e-4, atol=1e-5, equal_nan=True), f"grad fn of {op}/{variant} differs"
    w = torch.tensor([math.sin(1.0 + 0.7 * k) for k in range(y.numel())], dtype=torch.float64).reshape(y.shape)
    leaves = [x for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]
    gs = iter(torch.autograd.grad((y * w).sum(), leaves, allow_unused=True))
    for i, x in enumerate(xs):
        if isinstance(x, torch.Tensor) and x.requires_grad:
            gi = next(gs)
            if gi is not None:  # an input the output does not use has no gradient (our gradient() raises for it)
                out_lines[line] += f"\ngrad {i} " + fmt(T(gi.detach(), "float64"))


def result(v, dt):
    """A computed value (float32 for 16-bit floats) as dtype dt, rounded once."""
    return T(v, dt)


