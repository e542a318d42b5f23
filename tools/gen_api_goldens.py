#!/usr/bin/python3
"""Golden values for the full Tensor API (composed methods), computed by PyTorch.

Writes tests/golden/api.txt, read by tests/ops/test_tensor_api.cpp. Each case names a method and a variant; the C++
test binds "method/variant" (or "method") to the same call. Needs Debian's python3-torch:
  /usr/bin/python3 tools/gen_api_goldens.py
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_common as g  # noqa: E402
from golden_common import T, emit, values, rng  # noqa: E402

g.out_lines.clear()
F32 = "float32"


def f32(shape, lo=-3.0, hi=3.0):
    return T(rng.uniform(lo, hi, shape), F32)


def ints(shape, lo=-5, hi=6, dt="int32"):
    return T(rng.integers(lo, hi, shape), dt)


def out(v, dt):
    return T(v.detach() if isinstance(v, torch.Tensor) else np.ascontiguousarray(v), dt)


# ---------- elementwise math ----------
UNARY = {
    "exp": (torch.exp, (-3, 3)), "log": (torch.log, (0.1, 5)), "rsqrt": (torch.rsqrt, (0.1, 5)),
    "cos": (torch.cos, (-4, 4)), "tan": (torch.tan, (-1.2, 1.2)), "asin": (torch.asin, (-0.99, 0.99)),
    "acos": (torch.acos, (-0.99, 0.99)), "atan": (torch.atan, (-20, 20)), "sinh": (torch.sinh, (-3, 3)),
    "cosh": (torch.cosh, (-3, 3)), "tanh": (torch.tanh, (-4, 4)), "asinh": (torch.asinh, (-20, 20)),
    "acosh": (torch.acosh, (1.05, 20)), "atanh": (torch.atanh, (-0.95, 0.95)), "erf": (torch.erf, (-3, 3)),
    "abs": (torch.abs, (-3, 3)), "sign": (torch.sign, (-3, 3)), "trunc": (torch.trunc, (-5, 5)),
    "floor": (torch.floor, (-5, 5)), "ceil": (torch.ceil, (-5, 5)), "round": (torch.round, (-5, 5)),
    "square": (torch.square, (-3, 3)),
    # activations
    "relu": (F.relu, (-3, 3)), "relu6": (F.relu6, (-3, 9)), "leaky_relu": (F.leaky_relu, (-3, 3)),
    "elu": (F.elu, (-3, 3)), "celu": (F.celu, (-3, 3)), "selu": (F.selu, (-3, 3)), "sigmoid": (torch.sigmoid, (-6, 6)),
    "hardsigmoid": (F.hardsigmoid, (-5, 5)), "logsigmoid": (F.logsigmoid, (-6, 6)), "hardtanh": (F.hardtanh, (-3, 3)),
    "gelu": (lambda x: F.gelu(x, approximate="tanh"), (-3, 3)), "quick_gelu": (lambda x: x * torch.sigmoid(1.702 * x), (-3, 3)),
    "silu": (F.silu, (-4, 4)), "swish": (F.silu, (-4, 4)), "mish": (F.mish, (-4, 4)), "softplus": (F.softplus, (-4, 4)),
    "softsign": (F.softsign, (-4, 4)), "hardswish": (F.hardswish, (-5, 5)),
}
for name, (fn, (lo, hi)) in UNARY.items():
    x = f32((3, 4), lo, hi)
    emit(name, "float32", [x], out(fn(x.v.double()), F32))
    h = T(rng.uniform(lo, hi, (2, 3)), "float16")
    emit(name, "float16", [h], out(fn(h.v.float()), "float16"))
    if name in ("exp", "cos", "tanh", "sigmoid", "erf"):
        emit(name, "0d", [T(np.array(0.5), F32)], out(fn(torch.tensor(0.5, dtype=torch.float64)), F32))
        emit(name, "empty", [T(np.zeros((0, 3)), F32)], out(torch.zeros((0, 3)), F32))
        i = ints((2, 3), -2, 3)
        emit(name, "int32", [i], out(fn(i.v.double()), F32))
for name in ("abs", "sign", "square", "trunc", "floor", "ceil", "round"):
    for dt in ("int32", "int8"):
        i = ints((2, 3), dt=dt)
        emit(name, dt, [i], out(getattr(torch, name)(i.v) if name != "square" else i.v * i.v, dt))
halves = T(np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, 1e9 + 0.5]), "float64")
emit("round", "halves", [halves], out(torch.round(halves.v), "float64"))
special = np.array([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, -2.0, 1e30])
for name, fn in (("isnan", torch.isnan), ("isinf", torch.isinf), ("isfinite", torch.isfinite)):
    emit(name, "float32", [T(special, F32)], out(fn(torch.tensor(special, dtype=torch.float32)), "bool"))
    emit(name, "int32", [ints((3,))], out(fn(torch.tensor([1, 2, 3])), "bool"))
for name in ("trunc", "floor", "ceil", "round", "abs", "sign"):
    emit(name, "special", [T(special, F32)], out(getattr(torch, name)(torch.tensor(special, dtype=torch.float32)), F32))
emit("isinf", "positive_only", [T(special, F32)], out(torch.isposinf(torch.tensor(special, dtype=torch.float32)), "bool"))
for dt in ("int32", "uint8", "int64", "bool"):
    x = T(values((2, 3), dt), dt)
    emit("bitwise_not", dt, [x], out(~x.v if dt != "uint8" else torch.bitwise_not(x.v), dt))
emit("bitwise_not", "uint32", [T(np.array([0, 1, 4000000000]), "uint32")],
     T(np.invert(np.array([0, 1, 4000000000], dtype=np.uint32)), "uint32"))
# leaky_relu, elu, softplus with their parameters
x = f32((3, 4))
emit("leaky_relu", "slope", [x], out(F.leaky_relu(x.v.double(), 0.2), F32), [0.2])
emit("elu", "alpha", [x], out(F.elu(x.v.double(), 0.5), F32), [0.5])
emit("celu", "alpha", [x], out(F.celu(x.v.double(), 2.0), F32), [2.0])
emit("softplus", "beta", [x], out(F.softplus(x.v.double(), 2.0), F32), [2.0])
emit("hardtanh", "range", [x], out(F.hardtanh(x.v.double(), -0.5, 2.0), F32), [-0.5, 2.0])
emit("hardsigmoid", "params", [x], out(torch.clamp(x.v.double() * 0.2 + 0.3, 0, 1), F32), [0.2, 0.3])

# ---------- binary composites ----------
for dt in ("float32", "int32", "int8", "uint8", "bool", "float16"):
    a, b = T(values((3, 4), dt), dt), T(values((1, 4), dt), dt)
    emit("minimum", dt, [a, b], out(torch.minimum(a.compute(), b.compute()), dt))
a = T(np.array([0.0, -0.0, np.nan, 1.0, -np.inf]), F32)
b = T(np.array([-0.0, 1.0, 2.0, np.nan, 3.0]), F32)
emit("minimum", "special", [a, b], out(torch.minimum(a.v, b.v), F32))
base, ex = f32((3, 4), 0.1, 3), f32((3, 4), -2, 2)
emit("pow", "tensor", [base, ex], out(torch.pow(base.v.double(), ex.v.double()), F32))
nb, ie = f32((2, 4), -3, 3), T(np.array([[0, 1, 2, 3], [-1, -2, 3, 0.5]]), F32)
emit("pow", "negative_base", [nb, ie], out(torch.pow(nb.v.double(), ie.v.double()), F32))
zb = T(np.array([0.0, 0.0, 0.0, 1.0, np.nan, 2.0]), F32)
ze = T(np.array([2.0, 0.0, -1.0, np.nan, 0.0, np.inf]), F32)
emit("pow", "special", [zb, ze], out(torch.pow(zb.v, ze.v), F32))
ib, iexp = ints((3, 4), -4, 5), ints((3, 4), 0, 6)
emit("pow", "int", [ib, iexp], out(torch.pow(ib.v.long(), iexp.v.long()), "int32"))
for e in (2, 3, 0.5, -1, 0):
    x = f32((3, 4), 0.2, 3)
    emit("pow", f"scalar_{e}".replace(".", "p").replace("-", "m"), [x], out(torch.pow(x.v.double(), e), F32), [e])
xi = ints((3, 4), -4, 5)
emit("pow", "int_scalar_2", [xi], out(xi.v * xi.v, "int32"), [2])
s, e_, w = f32((3, 4)), f32((3, 4)), f32((3, 4), 0, 1)
emit("lerp", "tensor", [s, e_, w], out(torch.lerp(s.v.double(), e_.v.double(), w.v.double()), F32))
emit("lerp", "scalar", [s, e_], out(torch.lerp(s.v.double(), e_.v.double(), 0.25), F32), [0.25])
x = f32((3, 4))
emit("clip", "both", [x], out(torch.clamp(x.v, -1, 1.5), F32), [-1, 1.5])
emit("clip", "min_only", [x], out(torch.clamp(x.v, min=0.5), F32), [0.5])
xi = ints((3, 4), -10, 11)
emit("clip", "int", [xi], out(torch.clamp(xi.v, -3, 4), "int32"), [-3, 4])
for mode in ("trunc", "floor"):
    a, b = f32((3, 4)), f32((3, 4), 0.5, 3)
    b = T(b.numpy() * np.where(rng.integers(0, 2, (3, 4)) == 1, 1, -1), F32)
    emit("div", f"{mode}_float32", [a, b], out(torch.div(a.v.double(), b.v.double(), rounding_mode=mode), F32))
    a, b = ints((3, 4), -20, 21), ints((3, 4), 1, 6)
    b = T(b.numpy() * np.where(rng.integers(0, 2, (3, 4)) == 1, 1, -1), "int32")
    emit("div", f"{mode}_int32", [a, b], out(torch.div(a.v, b.v, rounding_mode=mode), "int32"))

# ---------- reductions ----------
x = f32((3, 4, 5), -2, 2)
for name in ("prod", "min", "mean", "any", "all", "count_nonzero", "logsumexp"):
    for axes, keep, tag in (([1], False, "axis1"), ([0, 2], True, "axes02_keepdim"), ([-1], False, "neg_axis"), (None, False, "all")):
        dims = axes if axes is not None else [0, 1, 2]
        v = x.v.double()
        if name == "prod":
            r = v
            for d in sorted([a % 3 for a in dims], reverse=True):
                r = r.prod(d, keepdim=keep)
        elif name == "min":
            r = v.amin(dim=dims, keepdim=keep)
        elif name == "mean":
            r = v.mean(dim=dims, keepdim=keep)
        elif name in ("any", "all"):
            bx = x.v > 0.5 if name == "any" else x.v > -1.8
            r = bx
            for d in sorted([a % 3 for a in dims], reverse=True):
                r = getattr(r, name)(d, keepdim=keep)
            emit(name, tag, [T(bx, "bool")], out(r, "bool"), [int(keep)] + ([] if axes is None else axes))
            continue
        elif name == "count_nonzero":
            xr = torch.round(x.v)
            r = (xr != 0).sum(dim=dims, keepdim=keep)
            emit(name, tag, [T(xr, F32)], out(r, "int32"), [int(keep)] + ([] if axes is None else axes))
            continue
        else:
            r = torch.logsumexp(v, dim=dims, keepdim=keep)
        emit(name, tag, [x], out(r, F32), [int(keep)] + ([] if axes is None else axes))
for dt in ("int32", "int8", "uint8", "bool", "float16", "int64"):
    xi = T(values((3, 4), dt), dt)
    emit("min", dt, [xi], out(xi.compute().amin(1) if dt != "bool" else xi.v.all(1), dt), [0, 1])
xi = ints((3, 4), -3, 4)
emit("prod", "int32", [xi], out(xi.v.prod(1), "int32"), [0, 1])
emit("mean", "int32", [xi], out(xi.v.double().mean(1), F32), [0, 1])
emit("mean", "empty", [T(np.zeros((0, 3)), F32)], out(torch.zeros((0, 3)).mean(0), F32), [0, 0])
emit("prod", "empty", [T(np.zeros((0, 3)), F32)], out(torch.ones(3), F32), [0, 0])
for corr in (0, 1, 2):
    for axes, keep in (([1], False), ([0, 2], True), (None, False)):
        dims = axes if axes is not None else [0, 1, 2]
        v = x.v.double()
        n = math.prod(v.shape[d] for d in dims)
        var = ((v - v.mean(dim=dims, keepdim=True)) ** 2).sum(dim=dims, keepdim=keep) / max(0, n - corr)
        tag = f"c{corr}_{'all' if axes is None else ''.join(map(str, axes))}{'_keepdim' if keep else ''}"
        args = [int(keep), corr] + ([] if axes is None else axes)
        emit("var", tag, [x], out(var, F32), args)
        emit("std", tag, [x], out(var.sqrt(), F32), args)
        emit("var_mean", tag, [x], out(var, F32), args)
        emit("std_mean", tag, [x], out(v.mean(dim=dims, keepdim=keep), F32), args)
ties = T(np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, -1.0], [0.0, 0.0, 0.0, 0.0]]), F32)
for name, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
    emit(name, "axis1", [ties], out(fn(ties.v, 1), "int32"), [1, 0])
    emit(name, "axis0_keepdim", [ties], out(fn(ties.v, 0, keepdim=True), "int32"), [0, 1])
    emit(name, "flat", [ties], out(fn(ties.v), "int32"), [])
    xi = ints((3, 5))
    emit(name, "int32", [xi], out(fn(xi.v, 1), "int32"), [1, 0])
emit("argmax", "nan", [T(np.array([1.0, np.nan, 3.0]), F32)], out(torch.tensor(1), "int32"), [])
for name, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
    emit(name, "last", [x], out(fn(x.v.double(), -1), F32), [-1])
    emit(name, "axis0", [x], out(fn(x.v.double(), 0), F32), [0])
    h = T(rng.uniform(-3, 3, (2, 5)), "float16")
    emit(name, "float16", [h], out(fn(h.v.float(), -1), "float16"), [-1])
big = T(np.array([[1000.0, 1000.0], [-np.inf, -np.inf]]), F32)
emit("logsumexp", "large", [big], out(torch.logsumexp(big.v.double(), 1), F32), [0, 1])
for name in ("cumsum", "cumprod", "cummax", "logcumsumexp"):
    for axis in (0, 1, -1):
        xx = f32((3, 4), -1.5, 1.5)
        v = xx.v.double()
        r = {"cumsum": lambda: torch.cumsum(v, axis), "cumprod": lambda: torch.cumprod(v, axis),
             "cummax": lambda: torch.cummax(v, axis).values, "logcumsumexp": lambda: torch.logcumsumexp(v, axis)}[name]()
        emit(name, f"axis{axis}".replace("-", "m"), [xx], out(r, F32), [axis])
xi = ints((3, 4), -3, 4)
emit("cumsum", "int32", [xi], out(torch.cumsum(xi.v, 1), "int32"), [1])
emit("cummax", "int32", [xi], out(torch.cummax(xi.v, 1).values, "int32"), [1])
emit("cumsum", "empty", [T(np.zeros((0, 3)), F32)], out(torch.zeros((0, 3)), F32), [0])

# ---------- movement ----------
x = f32((2, 3, 4))
v = x.v
emit("view", "6_4", [x], out(v.view(6, 4), F32), [6, 4])
emit("transpose", "0_2", [x], out(v.transpose(0, 2), F32), [0, 2])
emit("transpose", "neg", [x], out(v.transpose(-1, -2), F32), [-1, -2])
m = f32((3, 5))
emit("T", "2d", [m], out(m.v.T, F32))
emit("flatten", "all", [x], out(v.flatten(), F32), [0, -1])
emit("flatten", "1_2", [x], out(v.flatten(1, 2), F32), [1, 2])
emit("flatten", "0d", [T(np.array(3.0), F32)], out(torch.tensor([3.0]), F32), [0, -1])
emit("unflatten", "1", [x], out(v.unflatten(2, (2, 2)), F32), [2, 2, 2])
emit("unflatten", "infer", [x], out(v.unflatten(-1, (-1, 2)), F32), [-1, -1, 2])
s1 = f32((2, 1, 3, 1))
emit("squeeze", "all", [s1], out(s1.v.squeeze(), F32), [])
emit("squeeze", "dim", [s1], out(s1.v.squeeze(1), F32), [1])
emit("squeeze", "noop", [s1], out(s1.v.squeeze(0), F32), [0])
emit("unsqueeze", "0", [x], out(v.unsqueeze(0), F32), [0])
emit("unsqueeze", "neg", [x], out(v.unsqueeze(-1), F32), [-1])
r2 = f32((2, 3))
emit("repeat", "2_1", [r2], out(r2.v.repeat(2, 1), F32), [2, 1])
emit("repeat", "lead", [r2], out(r2.v.repeat(2, 1, 3), F32), [2, 1, 3])
emit("repeat_interleave", "dim1", [r2], out(r2.v.repeat_interleave(2, 1), F32), [2, 1])
emit("repeat_interleave", "flat", [r2], out(r2.v.repeat_interleave(3), F32), [3])
a, b, c = f32((2, 3)), f32((1, 3)), f32((4, 3))
emit("cat", "dim0", [a, b, c], out(torch.cat([a.v, b.v, c.v], 0), F32), [0])
a2, b2 = f32((2, 3)), f32((2, 5))
emit("cat", "dim1", [a2, b2], out(torch.cat([a2.v, b2.v], 1), F32), [1])
ai, bi = ints((2, 2)), T(values((1, 2), "bool"), "bool")
emit("cat", "promote", [ai, bi], out(torch.cat([ai.v, bi.v.int()], 0), "int32"), [0])
bb1, bb2 = T(values((2, 2), "bool"), "bool"), T(values((1, 2), "bool"), "bool")
emit("cat", "bool", [bb1, bb2], out(torch.cat([bb1.v, bb2.v], 0), "bool"), [0])
emit("cat", "empty_piece", [a, T(np.zeros((0, 3)), F32)], out(a.v, F32), [0])
s_a, s_b = f32((2, 3)), f32((2, 3))
emit("stack", "dim0", [s_a, s_b], out(torch.stack([s_a.v, s_b.v], 0), F32), [0])
emit("stack", "dim_last", [s_a, s_b], out(torch.stack([s_a.v, s_b.v], -1), F32), [-1])
sp = f32((7, 2))
for i, piece in enumerate(torch.split(sp.v, 3, 0)):
    emit("split", f"size3_{i}", [sp], out(piece, F32), [3, 0, i])
for i, piece in enumerate(torch.split(sp.v, [2, 5], 0)):
    emit("split", f"sizes_{i}", [sp], out(piece, F32), [i])
for i, piece in enumerate(torch.chunk(sp.v, 3, 0)):
    emit("chunk", f"3_{i}", [sp], out(piece, F32), [3, 0, i])
ro = f32((3, 4))
emit("roll", "dim1", [ro], out(torch.roll(ro.v, 1, 1), F32), [1, 1])
emit("roll", "neg_two_dims", [ro], out(torch.roll(ro.v, (-1, 5), (0, 1)), F32), [-1, 5, 0, 1])
emit("roll", "flat", [ro], out(torch.roll(ro.v, 3), F32), [3])
ma, mb = f32((3,)), f32((4,))
for idx in ("ij", "xy"):
    g1, g2 = torch.meshgrid(ma.v, mb.v, indexing=idx)
    emit("meshgrid", f"{idx}_0", [ma, mb], out(g1, F32))
    emit("meshgrid", f"{idx}_1", [ma, mb], out(g2, F32))
tr = f32((4, 5))
for k in (0, 1, -1):
    emit("triu", f"k{k}".replace("-", "m"), [tr], out(torch.triu(tr.v, k), F32), [k])
    emit("tril", f"k{k}".replace("-", "m"), [tr], out(torch.tril(tr.v, k), F32), [k])
bt = f32((2, 3, 3))
emit("triu", "batched", [bt], out(torch.triu(bt.v), F32), [0])
pm = f32((1, 2, 4, 5))
for mode in ("reflect", "replicate", "circular"):
    emit("pad_mode", mode, [pm], out(F.pad(pm.v, (2, 1, 1, 3), mode=mode), F32), [2, 1, 1, 3])
emit("pad_mode", "constant", [pm], out(F.pad(pm.v, (2, 1, 1, 3), value=0.5), F32), [2, 1, 1, 3])
emit("pad2d", "4", [pm], out(F.pad(pm.v, (1, 2, 0, 1)), F32), [1, 2, 0, 1])
emit("pad2d", "negative", [pm], out(F.pad(pm.v, (-1, 2, 1, -2), value=2.0), F32), [-1, 2, 1, -2, 2.0])

# ---------- indexing ----------
x = f32((4, 5, 6))
v = x.numpy()  # numpy is the reference for indexing: torch lacks negative steps
N = None
GETITEMS = {  # name: (python index, C++ binding in test_tensor_api.cpp)
    "int": (1,), "neg_int": (-1,), "int_int": (1, 2), "slice": (slice(1, 3),), "slice_step": (slice(None, None, 2),),
    "slice_neg_step": (slice(None, None, -1),), "slice_neg_step2": (slice(3, 0, -2),), "slice_neg_bounds": (slice(-3, -1),),
    "slice_out_of_range": (slice(2, 100),), "empty_slice": (slice(3, 1),), "newaxis": (N, 0), "ellipsis": (Ellipsis, 1),
    "ellipsis_mid": (0, Ellipsis, slice(None, None, 3)), "mixed": (slice(1, 4, 2), N, -2, slice(None, None, -3)),
}
for name, idx in GETITEMS.items():
    emit("getitem", name, [x], out(v[idx], F32))
i1 = T(np.array([0, 3, -1, 2]), "int32")
emit("getitem", "tensor", [x, i1], out(v[i1.numpy()], F32))
i2 = T(np.array([[1, 0], [4, 2]]), "int32")
emit("getitem", "tensor_dim1", [x, i2], out(v[:, i2.numpy()], F32))
i3, i4 = T(np.array([0, 1, 2]), "int32"), T(np.array([[4], [0]]), "int64")
emit("getitem", "two_tensors", [x, i3, i4], out(v[i3.numpy(), i4.numpy()], F32))
emit("getitem", "split_tensors", [x, i3, i4], out(v[i3.numpy(), :, i4.numpy()], F32))
emit("getitem", "tensor_and_int", [x, i3], out(x.v[1, :, i3.v.long()], F32))  # an int is basic indexing (PyTorch), not numpy's
for name, (idx, val) in {"slice": ((slice(1, 3),), 7.5), "step": ((slice(None, None, 2), 1), -1.0),
                         "neg_step": ((0, slice(None, None, -2)), 2.0), "int": ((2, 3, 4), 9.0)}.items():
    y = v.copy()
    y[idx] = val
    emit("setitem", name, [x], out(y, F32), [val])
y = v.copy()
tv = f32((5, 6))
y[1] = tv.numpy()
emit("setitem", "tensor_value", [x, tv], out(y, F32))
gx = f32((3, 4))
gi = T(np.array([[0, 2], [1, 0], [3, 3]]), "int32")
emit("gather", "dim1", [gx, gi], out(torch.gather(gx.v, 1, gi.v.long()), F32), [1])
gi0 = T(np.array([[2, 0, 1, -1]]), "int64")
emit("gather", "dim0_neg_index", [gx, gi0], out(torch.gather(gx.v, 0, (gi0.v % 3).long()), F32), [0])
sx, ssrc = f32((3, 5)), f32((2, 5))
si = T(np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), "int64")
emit("scatter", "dim0", [sx, si, ssrc], out(sx.v.scatter(0, si.v, ssrc.v), F32), [0])
si1 = T(np.array([[4, 0], [1, 2], [0, 3]]), "int32")
ssrc1 = f32((3, 3))
emit("scatter", "dim1", [sx, si1, ssrc1], out(sx.v.scatter(1, si1.v.long(), ssrc1.v[:, :2]), F32), [1])
emit("scatter", "value", [sx, si1], out(sx.v.scatter(1, si1.v.long(), 2.5), F32), [1, 2.5])
rsrc = f32((2, 5), 0.5, 2)
for red in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        emit("scatter_reduce", f"{red}_{'self' if inc else 'noself'}", [sx, si, rsrc],
             out(sx.v.scatter_reduce(0, si.v, rsrc.v, red, include_self=inc), F32), [int(inc)])
# an empty index scatters nothing: the input comes back (amin and amax too, which have nothing to reduce)
se = T(np.zeros((0, 5)), "int64")
for red in ("sum", "amax", "amin"):
    emit("scatter_reduce", f"{red}_empty", [sx, se, rsrc], out(sx.v.scatter_reduce(0, se.v, rsrc.v, red), F32), [1])
mf = f32((3, 4))
mk = T(values((3, 1), "bool"), "bool")
emit("masked_fill", "broadcast", [mf, mk], out(mf.v.masked_fill(mk.v, -2.0), F32), [-2.0])
mk2 = T(values((3, 4), "bool"), "bool")
emit("masked_select", "2d", [mf, mk2], out(torch.masked_select(mf.v, mk2.v), F32))
emit("masked_select", "broadcast", [mf, mk], out(torch.masked_select(mf.v, mk.v), F32))
oh = T(np.array([[0, 2], [1, 3]]), "int32")
emit("one_hot", "4", [oh], out(F.one_hot(oh.v.long(), 4), "int32"), [4])
emit("one_hot", "infer", [oh], out(F.one_hot(oh.v.long()), "int32"), [-1])
so = T(np.array([[3.0, 1.0, 2.0, 1.0, np.nan], [0.5, -1.0, 0.5, 4.0, -2.0]]), F32)
for desc in (False, True):
    sv, si_ = torch.sort(so.v, stable=True, dim=1, descending=desc)
    emit("sort", f"values_{'desc' if desc else 'asc'}", [so], out(sv, F32), [1, int(desc)])
    emit("sort", f"indices_{'desc' if desc else 'asc'}", [so], out(si_, "int32"), [1, int(desc)])
so0 = ints((4, 3), -3, 4)
sv, si_ = torch.sort(so0.v, stable=True, dim=0)
emit("sort", "values_int_dim0", [so0], out(sv, "int32"), [0, 0])
emit("sort", "indices_int_dim0", [so0], out(si_, "int32"), [0, 0])
emit("argsort", "dim1", [so], out(torch.sort(so.v, stable=True, dim=1).indices, "int32"), [1, 0])
tk = f32((3, 6))
for largest in (True, False):
    tv_, ti_ = torch.topk(tk.v, 2, 1, largest=largest)
    emit("topk", f"values_{'largest' if largest else 'smallest'}", [tk], out(tv_, F32), [2, 1, int(largest)])
    emit("topk", f"indices_{'largest' if largest else 'smallest'}", [tk], out(ti_, "int32"), [2, 1, int(largest)])

# ---------- linear algebra ----------
for name, (sa, sb) in {"2d": ((3, 4), (4, 5)), "vec_mat": ((4,), (4, 3)), "mat_vec": ((3, 4), (4,)), "vec_vec": ((5,), (5,)),
                       "batched": ((2, 3, 4), (2, 4, 5)), "broadcast": ((2, 1, 3, 4), (3, 4, 2)), "empty_k": ((3, 0), (0, 2))}.items():
    a, b = f32(sa), f32(sb)
    emit("matmul", name, [a, b], out(a.v.double() @ b.v.double(), F32))
ai, bi = ints((3, 4)), ints((4, 2))
emit("matmul", "int32", [ai, bi], out(ai.v @ bi.v, "int32"))
ha, hb = T(rng.uniform(-1, 1, (3, 8)), "float16"), T(rng.uniform(-1, 1, (8, 2)), "float16")
emit("matmul", "float16", [ha, hb], out(ha.v.float() @ hb.v.float(), "float16"))
a, b = f32((3, 4)), f32((4, 5))
emit("dot", "2d", [a, b], out(a.v.double() @ b.v.double(), F32))
lx, lw, lb = f32((2, 3, 4)), f32((4, 5)), f32((5,))
emit("linear", "bias", [lx, lw, lb], out(lx.v.double() @ lw.v.double() + lb.v.double(), F32))
emit("linear", "nobias", [lx, lw], out(lx.v.double() @ lw.v.double(), F32))
EINSUMS = {"ij,jk->ik": [(3, 4), (4, 5)], "ij->ji": [(3, 4)], "ii->i": [(4, 4)], "ii": [(4, 4)], "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)],
           "i,j->ij": [(3,), (4,)], "ij,ij->": [(3, 4), (3, 4)], "ijk->": [(2, 3, 4)], "ij,jk,kl->il": [(2, 3), (3, 4), (4, 2)],
           "ab,b": [(3, 4), (4,)]}
for i, (formula, shapes) in enumerate(EINSUMS.items()):
    ops_ = [f32(s_) for s_ in shapes]
    emit("einsum", f"f{i}", ops_, out(torch.einsum(formula, *[o.v.double() for o in ops_]), F32))

# ---------- convolution and pooling ----------
def conv_case(variant, xs, ws, bias, args, **kw):
    xx, ww = f32(xs, -1, 1), f32(ws, -1, 1)
    ins = [xx, ww]
    bb = None
    if bias:
        bb = f32((ws[0],), -1, 1)
        ins.append(bb)
    nd = len(xs) - 2
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    pad = kw.pop("pad_flat", None)
    xin = xx.v.double()
    if pad is not None:
        xin = F.pad(xin, pad)
    r = fn(xin, ww.v.double(), bb.v.double() if bias else None, **kw)
    emit("conv2d", variant, ins, out(r, F32), args)


# args: groups, stride..., dilation..., padding... each as "count, values" so the test rebuilds the Ints
conv_case("basic", (2, 3, 6, 6), (4, 3, 3, 3), True, [1, 1, 1, 1, 1, 1, 0])
conv_case("stride2_pad1", (1, 2, 7, 7), (3, 2, 3, 3), True, [1, 1, 2, 1, 1, 1, 1], stride=2, padding=1)
conv_case("stride_hw", (1, 2, 7, 8), (3, 2, 3, 2), False, [1, 2, 2, 1, 1, 1, 1, 0], stride=(2, 1))
conv_case("dilation2", (1, 2, 8, 8), (2, 2, 3, 3), False, [1, 1, 1, 1, 2, 1, 0], dilation=2)
conv_case("groups2", (2, 4, 5, 5), (6, 2, 3, 3), True, [2, 1, 1, 1, 1, 1, 1], groups=2, padding=1)
conv_case("depthwise", (1, 3, 5, 5), (3, 1, 3, 3), False, [3, 1, 1, 1, 1, 1, 0], groups=3)
conv_case("pad_per_side", (1, 1, 5, 5), (2, 1, 3, 3), False, [1, 1, 1, 1, 1, 4, 1, 2, 0, 1], pad_flat=(1, 2, 0, 1))
conv_case("kernel_gt_stride_dil", (1, 2, 9, 9), (2, 2, 3, 3), False, [1, 1, 2, 1, 2, 1, 1], stride=2, dilation=2, padding=1)
conv_case("1d", (2, 3, 10), (4, 3, 3), True, [1, 1, 2, 1, 1, 1, 1], stride=2, padding=1)
conv_case("3d", (1, 2, 4, 4, 4), (2, 2, 2, 2, 2), False, [1, 1, 1, 1, 1, 1, 0])
conv_case("1x1", (2, 4, 3, 3), (5, 4, 1, 1), True, [1, 1, 1, 1, 1, 1, 0])


def convt_case(variant, xs, ws, bias, groups, stride, dilation, padding, output_padding):
    xx, ww = f32(xs, -1, 1), f32(ws, -1, 1)
    ins = [xx, ww]
    bb = None
    if bias:
        bb = f32((ws[1] * groups,), -1, 1)
        ins.append(bb)
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d}[len(xs) - 2]
    r = fn(xx.v.double(), ww.v.double(), bb.v.double() if bias else None, stride=stride, padding=padding,
           output_padding=output_padding, groups=groups, dilation=dilation)
    emit("conv_transpose2d", variant, ins, out(r, F32), [groups, stride, dilation, padding, output_padding])


convt_case("basic", (1, 2, 4, 4), (2, 3, 3, 3), True, 1, 1, 1, 0, 0)
convt_case("stride2", (2, 2, 3, 3), (2, 2, 3, 3), True, 1, 2, 1, 0, 0)
convt_case("stride2_pad1_outpad1", (1, 3, 4, 4), (3, 2, 3, 3), False, 1, 2, 1, 1, 1)
convt_case("groups2", (1, 4, 3, 3), (4, 1, 2, 2), True, 2, 2, 1, 0, 0)
convt_case("dilation2", (1, 2, 4, 4), (2, 2, 3, 3), False, 1, 1, 2, 1, 0)
convt_case("1d", (1, 2, 5), (2, 3, 4), True, 1, 3, 1, 1, 2)

px = f32((2, 3, 7, 7))
# args: kernel, stride (0 = kernel), padding, ceil_mode, dilation, count_include_pad
POOLS = [("k2", 2, None, 0, False, 1, True), ("k3_s2", 3, 2, 0, False, 1, True), ("k3_s2_p1", 3, 2, 1, False, 1, True),
         ("k3_s2_p1_ceil", 3, 2, 1, True, 1, True), ("k2_ceil", 2, None, 0, True, 1, True), ("k3_s1", 3, 1, 0, False, 1, True),
         ("k3_s2_p1_nopad", 3, 2, 1, False, 1, False), ("k2_s2_ceil_nopad", 2, 2, 0, True, 1, False)]
for name, k, s_, p, ceil, d, cip in POOLS:
    args = [k, s_ or 0, p, int(ceil), d, int(cip)]
    emit("avg_pool2d", name, [px], out(F.avg_pool2d(px.v.double(), k, s_, p, ceil, cip), F32), args)
    emit("max_pool2d", name, [px], out(F.max_pool2d(px.v.double(), k, s_, p, 1, ceil), F32), args)
emit("max_pool2d", "dilation2", [px], out(F.max_pool2d(px.v.double(), 3, 1, 1, 2), F32), [3, 1, 1, 0, 2, 1])
emit("max_pool2d", "dilation2_s2_ceil", [px], out(F.max_pool2d(px.v.double(), 2, 2, 0, 2, True), F32), [2, 2, 0, 1, 2, 1])
pi = ints((1, 1, 4, 4))
emit("max_pool2d", "int32", [pi], out(F.max_pool2d(pi.v.double(), 2), "int32"), [2, 0, 0, 0, 1, 1])
for name, size in (("1", (1, 1)), ("3x2", (3, 2)), ("same", (7, 7)), ("5", (5, 5))):
    emit("adaptive_avg_pool2d", name, [px], out(F.adaptive_avg_pool2d(px.v.double(), size), F32), list(size))
ix = f32((1, 2, 3, 4))
for mode, ac, size in (("nearest", False, (6, 8)), ("nearest", False, (5, 3)), ("bilinear", False, (6, 7)),
                       ("bilinear", True, (6, 7)), ("bilinear", False, (2, 3)), ("bilinear", True, (1, 1)),
                       ("nearest-exact", False, (5, 7))):
    r = F.interpolate(ix.v.double(), size=size, mode=mode, align_corners=ac if mode == "bilinear" else None)
    emit("interpolate", f"{mode}_{'ac' if ac else 'hp'}_{size[0]}x{size[1]}".replace("-", "_"), [ix], out(r, F32),
         list(size) + [int(ac)])
l1x = f32((2, 3, 5))
emit("interpolate", "linear_1d", [l1x], out(F.interpolate(l1x.v.double(), size=8, mode="linear"), F32), [8, 0])

# ---------- nn functional ----------
ln = f32((2, 3, 4))
emit("layernorm", "last", [ln], out(F.layer_norm(ln.v.double(), (4,)), F32), [-1])
emit("layernorm", "last2", [ln], out(F.layer_norm(ln.v.double(), (3, 4)), F32), [-2, -1])
bx, bw, bb_, bm, bv = f32((2, 3, 4, 4)), f32((3,)), f32((3,)), f32((3,)), f32((3,), 0.5, 2)
ref = F.batch_norm(bx.v.double(), bm.v.double(), bv.v.double(), bw.v.double(), bb_.v.double(), False, 0.1, 1e-5)
emit("batchnorm", "eval", [bx, bw, bb_, bm, bv], out(ref, F32))  # invstd = rsqrt(var + eps) computed by the test
def sdpa_ref(q, k, v, attn_mask=None, is_causal=False):  # torch 1.13 has no F.scaled_dot_product_attention
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if is_causal:
        attn_mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else s + attn_mask
    return torch.softmax(s, -1) @ v


q, k_, v_ = f32((2, 3, 4)), f32((2, 5, 4)), f32((2, 5, 6))
emit("sdpa", "plain", [q, k_, v_], out(sdpa_ref(q.v.double(), k_.v.double(), v_.v.double()), F32))
am = T(values((3, 5), "bool"), "bool")
am.v[:, 0] = True
emit("sdpa", "bool_mask", [q, k_, v_, am],
     out(sdpa_ref(q.v.double(), k_.v.double(), v_.v.double(), attn_mask=am.v), F32))
fm = f32((3, 5), -1, 1)
emit("sdpa", "float_mask", [q, k_, v_, fm],
     out(sdpa_ref(q.v.double(), k_.v.double(), v_.v.double(), attn_mask=fm.v.double()), F32))
qc, kc, vc = f32((1, 4, 4)), f32((1, 4, 4)), f32((1, 4, 3))
emit("sdpa", "causal", [qc, kc, vc], out(sdpa_ref(qc.v.double(), kc.v.double(), vc.v.double(), is_causal=True), F32))
RED = {"none": 0, "mean": 1, "sum": 2}
logits = f32((4, 5))
tgt = T(np.array([0, 4, 2, 1]), "int32")
for red in ("mean", "sum", "none"):
    emit("cross_entropy", f"indices_{red}", [logits, tgt], out(F.cross_entropy(logits.v.double(), tgt.v.long(), reduction=red), F32),
         [RED[red], 0])
emit("cross_entropy", "smoothing", [logits, tgt], out(F.cross_entropy(logits.v.double(), tgt.v.long(), label_smoothing=0.2), F32), [1, 0.2])
probs = T(torch.softmax(torch.tensor(rng.uniform(-1, 1, (4, 5))), 1), F32)
emit("cross_entropy", "probs", [logits, probs], out(F.cross_entropy(logits.v.double(), probs.v.double()), F32), [1, 0])
lg3, tg3 = f32((2, 3, 4)), T(rng.integers(0, 3, (2, 4)), "int64")
emit("cross_entropy", "spatial", [lg3, tg3], out(F.cross_entropy(lg3.v.double(), tg3.v), F32), [1, 0])
tgt_ign = T(np.array([0, 4, -1, 1]), "int32")
logp = torch.log_softmax(logits.v.double(), -1)


def scce(t, ignore, smooth, red):
    mask = (t != ignore).double()
    tt = t.clamp(min=0).long()
    nll = -logp.gather(1, tt[:, None])[:, 0]
    loss = ((1 - smooth) * nll - smooth * logp.mean(-1)) * mask
    return loss.sum() / mask.sum() if red == "mean" else loss.sum() if red == "sum" else loss


emit("sparse_categorical_crossentropy", "mean", [logits, tgt], out(scce(tgt.v, -1, 0, "mean"), F32), [-1, 0, 1])
emit("sparse_categorical_crossentropy", "ignore", [logits, tgt_ign], out(scce(tgt_ign.v, -1, 0, "mean"), F32), [-1, 0, 1])
emit("sparse_categorical_crossentropy", "smooth_sum", [logits, tgt], out(scce(tgt.v, -1, 0.1, "sum"), F32), [-1, 0.1, 2])
emit("sparse_categorical_crossentropy", "none", [logits, tgt], out(scce(tgt.v, -1, 0, "none"), F32), [-1, 0, 0])
# the PyTorch reference for the same loss (ignore_index via F.cross_entropy) agrees with scce():
assert torch.allclose(scce(tgt_ign.v, -1, 0, "mean"), F.cross_entropy(logits.v.double(), tgt_ign.v.long(), ignore_index=-1))
bp, by = f32((3, 4), 0.05, 0.95), f32((3, 4), 0, 1)
emit("binary_crossentropy", "mean", [bp, by], out(F.binary_cross_entropy(bp.v.double(), by.v.double()), F32), [1])
b01 = T(np.array([0.0, 1.0, 0.5]), F32)
emit("binary_crossentropy", "edges_none", [b01, T(np.array([1.0, 0.0, 1.0]), F32)],
     out(F.binary_cross_entropy(b01.v.double(), torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64), reduction="none"), F32), [0])
bl = f32((3, 4), -30, 30)
emit("binary_crossentropy_logits", "mean", [bl, by], out(F.binary_cross_entropy_with_logits(bl.v.double(), by.v.double()), F32), [1])
emit("binary_crossentropy_logits", "sum", [bl, by],
     out(F.binary_cross_entropy_with_logits(bl.v.double(), by.v.double(), reduction="sum"), F32), [2])
lp = T(torch.log_softmax(torch.tensor(rng.uniform(-2, 2, (4, 5))), 1), F32)
nw = f32((5,), 0.2, 2)
for red in ("mean", "sum", "none"):
    emit("nll_loss", f"{red}", [lp, tgt], out(F.nll_loss(lp.v.double(), tgt.v.long(), reduction=red), F32), [RED[red], -100])
emit("nll_loss", "weight_ignore", [lp, tgt, nw], out(F.nll_loss(lp.v.double(), tgt.v.long(), nw.v.double(), ignore_index=4), F32),
     [1, 4])
mx_, my_ = f32((3, 4)), f32((3, 4))
for red in ("mean", "sum", "none"):
    emit("mse", red, [mx_, my_], out(F.mse_loss(mx_.v.double(), my_.v.double(), reduction=red), F32), [RED[red]])
    emit("l1", red, [mx_, my_], out(F.l1_loss(mx_.v.double(), my_.v.double(), reduction=red), F32), [RED[red]])

# ---------- creation ----------
emit("eye", "3", [], out(torch.eye(3), F32), [3, -1])
emit("eye", "2x4", [], out(torch.eye(2, 4), F32), [2, 4])
emit("linspace", "0_1_5", [], out(torch.linspace(0, 1, 5, dtype=torch.float64), F32), [0, 1, 5])
emit("linspace", "neg", [], out(torch.linspace(-2.5, 7, 8, dtype=torch.float64), F32), [-2.5, 7, 8])
emit("linspace", "one", [], out(torch.linspace(3, 9, 1), F32), [3, 9, 1])
emit("linspace", "int", [], T(torch.linspace(0, 10, 4, dtype=torch.float64).to(torch.int32), "int32"), [0, 10, 4])

# ---------- weight initializations: PyTorch's bound (uniform) or std (normal) for a shape, checked statistically ----------
for name, shape, a in (("kaiming_uniform", (64, 32, 3, 3), 0.01), ("kaiming_normal", (64, 32, 3, 3), 0.01),
                       ("glorot_uniform", (300, 200), None), ("kaiming_uniform_a5", (128, 576), math.sqrt(5))):
    fan_in, fan_out = math.prod(shape[1:]), shape[0] * (math.prod(shape[2:]) if len(shape) > 2 else 1)
    if name.startswith("kaiming"):
        gain = torch.nn.init.calculate_gain("leaky_relu", a)
        scale = gain * math.sqrt(3.0 / fan_in) if "uniform" in name else gain / math.sqrt(fan_in)
    else:  # tinygrad's glorot uses fan_out = shape[0]: xavier_uniform_ on a 2-d weight has the same bound
        scale = torch.nn.init.calculate_gain("linear") * math.sqrt(6.0 / (fan_in + fan_out))
    emit("init", name, [], T(np.array(scale), "float64"), list(shape) + ([a] if a is not None else []))

sf = f32((3, 5))  # a sort without NaN, for its gradient (drawn last so the cases above keep their values)
emit("sort", "values_float", [sf], out(torch.sort(sf.v, dim=1).values, F32), [1, 0])

# ---------- gradients: PyTorch's input gradients of sum(out * w) for at least one case of every differentiable method ----------
for name, (fn, _) in UNARY.items():
    g.grad(name, "float32", fn)
for name, fn, a in (("leaky_relu", F.leaky_relu, (0.2,)), ("elu", F.elu, (0.5,)), ("celu", F.celu, (2.0,)),
                    ("softplus", F.softplus, (2.0,)), ("hardtanh", F.hardtanh, (-0.5, 2.0))):
    g.grad(name, {"leaky_relu": "slope", "softplus": "beta", "hardtanh": "range"}.get(name, "alpha"), lambda x, fn=fn, a=a: fn(x, *a))
g.grad("hardsigmoid", "params", lambda x: torch.clamp(x * 0.2 + 0.3, 0, 1))
g.grad("minimum", "float32", torch.minimum)
g.grad("pow", "tensor", torch.pow)
for e in (2, 3, 0.5, -1, 0):
    g.grad("pow", f"scalar_{e}".replace(".", "p").replace("-", "m"), lambda x, e=e: torch.pow(x, e))
g.grad("lerp", "tensor", torch.lerp)
g.grad("lerp", "scalar", lambda s_, e_: torch.lerp(s_, e_, 0.25))
g.grad("clip", "both", lambda x: torch.clamp(x, -1, 1.5))
g.grad("clip", "min_only", lambda x: torch.clamp(x, min=0.5))
for mode in ("trunc", "floor"):
    g.grad("div", f"{mode}_float32", lambda a, b, mode=mode: torch.div(a, b, rounding_mode=mode))
g.grad("prod", "axis1", lambda x: x.prod(1))
g.grad("prod", "axes02_keepdim", lambda x: x.prod(2, keepdim=True).prod(0, keepdim=True))
g.grad("min", "axis1", lambda x: x.amin(1))
g.grad("min", "all", lambda x: x.amin())
g.grad("mean", "axes02_keepdim", lambda x: x.mean((0, 2), keepdim=True))
g.grad("logsumexp", "neg_axis", lambda x: torch.logsumexp(x, -1))
for name in ("var", "std"):
    g.grad(name, "c1_1", lambda x, name=name: getattr(torch, name)(x, 1, unbiased=True))
    g.grad(name, "c0_02_keepdim", lambda x, name=name: getattr(torch, name)(x, (0, 2), unbiased=False, keepdim=True))
g.grad("var_mean", "c2_all", lambda x: ((x - x.mean()) ** 2).sum() / (x.numel() - 2))
g.grad("std_mean", "c1_1", lambda x: x.mean(1))
g.grad("softmax", "last", lambda x: torch.softmax(x, -1))
g.grad("softmax", "axis0", lambda x: torch.softmax(x, 0))
g.grad("log_softmax", "last", lambda x: torch.log_softmax(x, -1))
for name, fn in (("cumsum", torch.cumsum), ("cumprod", torch.cumprod), ("logcumsumexp", torch.logcumsumexp),
                 ("cummax", lambda x, d: torch.cummax(x, d).values)):
    g.grad(name, "axis1", lambda x, fn=fn: fn(x, 1))
    g.grad(name, "axis0", lambda x, fn=fn: fn(x, 0))
g.grad("view", "6_4", lambda x: x.view(6, 4))
g.grad("transpose", "0_2", lambda x: x.transpose(0, 2))
g.grad("T", "2d", lambda x: x.T)
g.grad("flatten", "1_2", lambda x: x.flatten(1, 2))
g.grad("unflatten", "1", lambda x: x.unflatten(2, (2, 2)))
g.grad("squeeze", "dim", lambda x: x.squeeze(1))
g.grad("unsqueeze", "neg", lambda x: x.unsqueeze(-1))
g.grad("repeat", "lead", lambda x: x.repeat(2, 1, 3))
g.grad("repeat_interleave", "dim1", lambda x: x.repeat_interleave(2, 1))
g.grad("cat", "dim0", lambda *xs: torch.cat(xs, 0))
g.grad("cat", "dim1", lambda *xs: torch.cat(xs, 1))
g.grad("stack", "dim_last", lambda *xs: torch.stack(xs, -1))
g.grad("split", "size3_1", lambda x: torch.split(x, 3, 0)[1])
g.grad("split", "sizes_1", lambda x: torch.split(x, [2, 5], 0)[1])
g.grad("chunk", "3_2", lambda x: torch.chunk(x, 3, 0)[2])
g.grad("roll", "neg_two_dims", lambda x: torch.roll(x, (-1, 5), (0, 1)))
g.grad("meshgrid", "ij_0", lambda a, b: torch.meshgrid(a, b, indexing="ij")[0])
g.grad("meshgrid", "xy_1", lambda a, b: torch.meshgrid(a, b, indexing="xy")[1])
g.grad("triu", "k1", lambda x: torch.triu(x, 1))
g.grad("tril", "km1", lambda x: torch.tril(x, -1))
for mode in ("reflect", "replicate", "circular"):
    g.grad("pad_mode", mode, lambda x, mode=mode: F.pad(x, (2, 1, 1, 3), mode=mode))
g.grad("pad_mode", "constant", lambda x: F.pad(x, (2, 1, 1, 3), value=0.5))
g.grad("pad2d", "negative", lambda x: F.pad(x, (-1, 2, 1, -2), value=2.0))
g.grad("getitem", "mixed", lambda x: x[1:4:2, None, -2][..., [5, 2]])  # torch has no negative steps: ::-3 of 6 is [5, 2]
g.grad("getitem", "tensor", lambda x, i: x[i.long()])
g.grad("getitem", "two_tensors", lambda x, i, j: x[i.long(), j.long()])
g.grad("getitem", "split_tensors", lambda x, i, j: x[i.long(), :, j.long()])
g.grad("gather", "dim1", lambda x, i: torch.gather(x, 1, i.long()))
g.grad("scatter", "dim0", lambda x, i, src: x.scatter(0, i, src))
g.grad("scatter", "value", lambda x, i: x.scatter(1, i.long(), 2.5))
for red in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        g.grad("scatter_reduce", f"{red}_{'self' if inc else 'noself'}",
               lambda x, i, src, red=red, inc=inc: x.scatter_reduce(0, i, src, red, include_self=inc))
g.grad("masked_fill", "broadcast", lambda x, m: x.masked_fill(m, -2.0))
g.grad("masked_select", "2d", torch.masked_select)
g.grad("sort", "values_float", lambda x: torch.sort(x, dim=1).values)
g.grad("topk", "values_largest", lambda x: torch.topk(x, 2, 1).values)
g.grad("topk", "values_smallest", lambda x: torch.topk(x, 2, 1, largest=False).values)
for name in ("2d", "vec_mat", "mat_vec", "vec_vec", "batched", "broadcast"):
    g.grad("matmul", name, torch.matmul)
g.grad("dot", "2d", torch.matmul)
g.grad("linear", "bias", lambda x, w, b: x @ w + b)
for i, formula in enumerate(EINSUMS):
    g.grad("einsum", f"f{i}", lambda *xs, formula=formula: torch.einsum(formula, *xs))
CONVS = {"basic": {}, "stride2_pad1": dict(stride=2, padding=1), "stride_hw": dict(stride=(2, 1)), "dilation2": dict(dilation=2),
         "groups2": dict(groups=2, padding=1), "depthwise": dict(groups=3), "kernel_gt_stride_dil": dict(stride=2, dilation=2, padding=1),
         "1d": dict(stride=2, padding=1), "3d": {}, "1x1": {}}
for name, kw in CONVS.items():
    def conv(x, w, b=None, kw=kw):
        return {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[x.dim()](x, w, b, **kw)
    g.grad("conv2d", name, conv)
g.grad("conv2d", "pad_per_side", lambda x, w: F.conv2d(F.pad(x, (1, 2, 0, 1)), w))
for name, (groups, stride, dil, pad, opad) in {"basic": (1, 1, 1, 0, 0), "stride2": (1, 2, 1, 0, 0), "stride2_pad1_outpad1": (1, 2, 1, 1, 1),
                                               "groups2": (2, 2, 1, 0, 0), "dilation2": (1, 1, 2, 1, 0), "1d": (1, 3, 1, 1, 2)}.items():
    def convt(x, w, b=None, a=(groups, stride, dil, pad, opad)):
        fn = F.conv_transpose1d if x.dim() == 3 else F.conv_transpose2d
        return fn(x, w, b, stride=a[1], padding=a[3], output_padding=a[4], groups=a[0], dilation=a[2])
    g.grad("conv_transpose2d", name, convt)
for name, k, s_, p, ceil, d, cip in POOLS:
    g.grad("avg_pool2d", name, lambda x, k=k, s_=s_, p=p, ceil=ceil, cip=cip: F.avg_pool2d(x, k, s_, p, ceil, cip))
    g.grad("max_pool2d", name, lambda x, k=k, s_=s_, p=p, ceil=ceil: F.max_pool2d(x, k, s_, p, 1, ceil))
g.grad("max_pool2d", "dilation2", lambda x: F.max_pool2d(x, 3, 1, 1, 2))
g.grad("adaptive_avg_pool2d", "3x2", lambda x: F.adaptive_avg_pool2d(x, (3, 2)))
g.grad("adaptive_avg_pool2d", "5", lambda x: F.adaptive_avg_pool2d(x, (5, 5)))
g.grad("interpolate", "bilinear_hp_6x7", lambda x: F.interpolate(x, size=(6, 7), mode="bilinear", align_corners=False))
g.grad("interpolate", "bilinear_ac_6x7", lambda x: F.interpolate(x, size=(6, 7), mode="bilinear", align_corners=True))
g.grad("interpolate", "nearest_hp_5x3", lambda x: F.interpolate(x, size=(5, 3), mode="nearest"))
g.grad("interpolate", "linear_1d", lambda x: F.interpolate(x, size=8, mode="linear"))
g.grad("layernorm", "last", lambda x: F.layer_norm(x, (4,)))
g.grad("layernorm", "last2", lambda x: F.layer_norm(x, (3, 4)))
g.grad("batchnorm", "eval", lambda x, w, b, m, v: ((x - m[:, None, None]) * torch.rsqrt(v + 1e-5)[:, None, None]) * w[:, None, None]
       + b[:, None, None])
g.grad("sdpa", "plain", sdpa_ref)
g.grad("sdpa", "bool_mask", lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m))
g.grad("sdpa", "float_mask", lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m))
g.grad("sdpa", "causal", lambda q, k, v: sdpa_ref(q, k, v, is_causal=True))
g.grad("cross_entropy", "indices_mean", lambda x, t: F.cross_entropy(x, t.long()))
g.grad("cross_entropy", "indices_none", lambda x, t: F.cross_entropy(x, t.long(), reduction="none"))
g.grad("cross_entropy", "smoothing", lambda x, t: F.cross_entropy(x, t.long(), label_smoothing=0.2))
g.grad("cross_entropy", "probs", F.cross_entropy)
g.grad("cross_entropy", "spatial", F.cross_entropy)
g.grad("sparse_categorical_crossentropy", "ignore", lambda x, t: F.cross_entropy(x, t.long(), ignore_index=-1))
g.grad("sparse_categorical_crossentropy", "smooth_sum",  # tinygrad's smoothing: (1 - s) * nll - s * mean(log p)
       lambda x, t: 0.9 * F.nll_loss(torch.log_softmax(x, 1), t.long(), reduction="sum") - 0.1 * torch.log_softmax(x, 1).mean(1).sum())
g.grad("binary_crossentropy", "mean", F.binary_cross_entropy)
g.grad("binary_crossentropy_logits", "mean", F.binary_cross_entropy_with_logits)
g.grad("nll_loss", "mean", lambda x, t: F.nll_loss(x, t.long()))
def weighted_nll(x, t, w, ignore=4):  # F.nll_loss's formula: torch does not differentiate it in the weight
    keep = (t != ignore).double()
    wt = w[t.long()] * keep
    return -(x.gather(1, t.long()[:, None])[:, 0] * wt).sum() / wt.sum()


g.grad("nll_loss", "weight_ignore", weighted_nll)
for red in ("mean", "sum", "none"):
    g.grad("mse", red, lambda a, b, red=red: F.mse_loss(a, b, reduction=red))
    g.grad("l1", red, lambda a, b, red=red: F.l1_loss(a, b, reduction=red))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "api.txt")
with open(path, "w") as fh:
    fh.write("# generated by tools/gen_api_goldens.py (PyTorch %s); do not edit\n" % torch.__version__)
    fh.write("\n".join(g.out_lines) + "\n")
print(f"wrote {sum(1 for l in g.out_lines if l.startswith('case'))} cases to {os.path.normpath(path)}")
