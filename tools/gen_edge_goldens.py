#!/usr/bin/python3
"""Golden values at the edges, computed by PyTorch: activations and their gradients across the whole float range,
pow at its special points, ties, zeros in products, stable scans, PyTorch's indexing rule, zero-size shapes, and
the overloads tinygrad has beside the plain methods.

Writes tests/golden/edges.txt, read by tests/ops/test_edges.cpp (same format and "grad" lines as api.txt). Needs
Debian's python3-torch:
  /usr/bin/python3 tools/gen_edge_goldens.py
"""
import hashlib
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_common as g  # noqa: E402
from golden_common import T, emit  # noqa: E402

g.out_lines.clear()
rng = np.random.default_rng(20261124)
F32 = "float32"
inf, nan = math.inf, math.nan


def f32(shape, lo=-3.0, hi=3.0):
    return T(rng.uniform(lo, hi, shape), F32)


def out(v, dt):
    return T(v.detach() if isinstance(v, torch.Tensor) else np.ascontiguousarray(v), dt)


# ---------- activations over the whole float range, kinks included ----------
# Variant "extreme": float32 values, PyTorch's float64 gradients. Variant "extreme_f32": the same computed in float32
# (the C++ test casts the float64 input to float32 first, as the generator does), where exp overflows near 88.
EXTREME = [-inf, -1e4, -1000, -200, -100, -90, -50, -20, -6, -3, -1, -0.5, 0, 0.5, 1, 3, 6, 20, 50, 90, 100, 200, 1000,
           1e4, inf]
ACTIVATIONS = {
    "relu": F.relu, "relu6": F.relu6, "leaky_relu": F.leaky_relu, "elu": F.elu, "celu": lambda x: F.celu(x, 2.0),
    "selu": F.selu, "sigmoid": torch.sigmoid, "hardsigmoid": F.hardsigmoid, "logsigmoid": F.logsigmoid,
    "hardtanh": F.hardtanh, "gelu": lambda x: F.gelu(x, approximate="tanh"), "gelu_none": F.gelu,
    "quick_gelu": lambda x: x * torch.sigmoid(1.702 * x), "silu": F.silu, "mish": F.mish, "softplus": F.softplus,
    "softsign": F.softsign, "hardswish": F.hardswish, "tanh": torch.tanh,
}
xe = T(np.array(EXTREME), F32)
for name, fn in ACTIVATIONS.items():
    emit(name, "extreme", [xe], out(fn(xe.v.double()), F32))
    g.grad(name, "extreme", fn)
    emit(name, "extreme_f32", [xe], out(fn(xe.v), F32))
    g.grad(name, "extreme_f32", lambda x, fn=fn: fn(x.float()).double())
x = f32((3, 4))
emit("gelu_none", "float32", [x], out(F.gelu(x.v.double()), F32))
g.grad("gelu_none", "float32", F.gelu)
h = T(rng.uniform(-3, 3, (2, 3)), "float16")
emit("gelu_none", "float16", [h], out(F.gelu(h.v.float()), "float16"))

# ---------- pow at its special points: every base against every exponent ----------
BASES = [-2, -1, -0.5, -0.0, 0, 0.5, 1, 2, inf, -inf, nan]
EXPONENTS = [-2, -1, -0.5, 0, 0.3, 0.5, 1, 2, 3, inf, -inf, nan]
b = T(np.array(BASES).reshape(-1, 1), F32)
e = T(np.array(EXPONENTS).reshape(1, -1), F32)
emit("pow", "grid", [b, e], out(torch.pow(b.v.double(), e.v.double()), F32))
g.grad("pow", "grid", torch.pow)
bf = T(np.array(BASES), F32)
for k in (0.3, -0.5, 2.5, -2, 0, 1, 3, 0.5):
    tag = f"scalar_{k}".replace(".", "p").replace("-", "m")
    emit("pow", tag, [bf], out(torch.pow(bf.v.double(), k), F32), [k])
    g.grad("pow", tag, lambda x, k=k: torch.pow(x, k))
ef = T(np.array(EXPONENTS), F32)
for k in (2.0, -2.0, 0.0):
    tag = f"base_{k}".replace(".", "p").replace("-", "m")
    emit("pow", tag, [ef], out(torch.pow(k, ef.v.double()), F32), [k])
    g.grad("pow", tag, lambda x, k=k: torch.pow(k, x))
ib = T(np.array([-3, -1, 0, 1, 2, 5]), "int32")
emit("pow", "int_exponent_3", [ib], out(ib.v ** 3, "int32"), [3])

# ---------- products with zeros, ties, bounds ----------
pz = T(np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0], [0.0, -1.0, 5.0]]), F32)
emit("prod", "zeros_axis1", [pz], out(pz.v.double().prod(1), F32), [1])
g.grad("prod", "zeros_axis1", lambda x: x.prod(1))
emit("prod", "zeros_axis0", [pz], out(pz.v.double().prod(0), F32), [0])
g.grad("prod", "zeros_axis0", lambda x: x.prod(0))
pz1 = T(np.array([[0.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), F32)
emit("prod", "one_zero_all", [pz1], out(pz1.v.double().prod(), F32), [])
g.grad("prod", "one_zero_all", lambda x: x.prod())
ties = T(np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, -1.0, 0.0, 0.0]]), F32)
for name, fn in (("max", lambda x: x.amax(1)), ("min", lambda x: x.amin(1)), ("max_all", lambda x: x.amax()),
                 ("min_all", lambda x: x.amin())):
    emit("ties", name, [ties], out(fn(ties.v.double()), F32))
    g.grad("ties", name, fn)
ta, tb = T(np.array([1.0, 2.0, 3.0, -1.0]), F32), T(np.array([1.0, 0.0, 3.0, 5.0]), F32)
for name, fn in (("maximum", torch.maximum), ("minimum", torch.minimum)):
    emit("ties", name, [ta, tb], out(fn(ta.v.double(), tb.v.double()), F32))
    g.grad("ties", name, fn)
cb = T(np.array([-2.0, -1.0, 0.0, 1.0, 1.5, 2.0, nan]), F32)
emit("clip", "at_bounds", [cb], out(torch.clamp(cb.v.double(), -1, 1.5), F32), [-1, 1.5])
g.grad("clip", "at_bounds", lambda x: torch.clamp(x, -1, 1.5))
emit("clip", "min_at_bound", [cb], out(torch.clamp(cb.v.double(), min=0.0), F32), [0])
g.grad("clip", "min_at_bound", lambda x: torch.clamp(x, min=0.0))
emit("clip", "max_at_bound", [cb], out(torch.clamp(cb.v.double(), max=1.0), F32), [1])
g.grad("clip", "max_at_bound", lambda x: torch.clamp(x, max=1.0))
ab = T(np.array([-1.0, -0.0, 0.0, 2.0, -inf, nan]), F32)
emit("abs", "at_zero", [ab], out(torch.abs(ab.v.double()), F32))
g.grad("abs", "at_zero", torch.abs)

# ---------- stable scans and softmax ----------
ls = T(np.array([0.0, 100.0, -100.0, 1000.0, -inf, 3.0]), F32)
emit("logcumsumexp", "wide_range", [ls], out(torch.logcumsumexp(ls.v.double(), 0), F32), [0])
ls2 = T(np.array([[-inf, -inf, 0.0, 1.0], [50.0, -50.0, 80.0, 0.0]]), F32)
emit("logcumsumexp", "neg_inf_axis1", [ls2], out(torch.logcumsumexp(ls2.v.double(), 1), F32), [1])
ls3 = T(np.array([[0.0, 100.0, 0.5], [-30.0, 30.0, 60.0]]), F32)
emit("logcumsumexp", "large_grad", [ls3], out(torch.logcumsumexp(ls3.v.double(), 1), F32), [1])
g.grad("logcumsumexp", "large_grad", lambda x: torch.logcumsumexp(x, 1))
sm = T(np.array([[1000.0, 0.0, -1000.0], [-inf, 0.0, 1.0], [5.0, 5.0, 5.0]]), F32)
for name, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
    emit(name, "extreme", [sm], out(fn(sm.v.double(), 1), F32), [1])
    g.grad(name, "extreme", lambda x, fn=fn: fn(x, 1))
    xs = f32((4, 7), -4, 4)
    emit(name, "f32", [xs], out(fn(xs.v, 1), F32), [1])  # its gradient within 1e-7 of PyTorch's float32 one
    g.grad(name, "f32", lambda x, fn=fn: fn(x.float(), 1).double())

# ---------- cummax / cummin with indices (PyTorch: the last index of the running extreme) ----------
cm = T(np.array([[1.0, 1.0, 0.0, 1.0, nan, 2.0], [3.0, -1.0, 3.0, 2.0, 5.0, 5.0]]), F32)
for name, fn in (("cummax", torch.cummax), ("cummin", torch.cummin)):
    r = fn(cm.v, 1)
    emit(name, "values_nan", [cm], out(r.values, F32), [1])
    emit(name, "indices_nan", [cm], out(r.indices, "int32"), [1])
    x = f32((4, 3))
    r = fn(x.v, 0)
    emit(name, "values_axis0", [x], out(r.values, F32), [0])
    g.grad(name, "values_axis0", lambda t, fn=fn: fn(t, 0).values)
    emit(name, "indices_axis0", [x], out(r.indices, "int32"), [0])
    xi = T(rng.integers(-3, 4, (2, 5)), "int32")
    r = fn(xi.v, 1)
    emit(name, "values_int32", [xi], out(r.values, "int32"), [1])
    emit(name, "indices_int32", [xi], out(r.indices, "int32"), [1])
    e0 = T(np.zeros((0, 3)), F32)
    emit(name, "values_empty", [e0], out(fn(e0.v, 0).values, F32), [0])
    emit(name, "indices_empty", [e0], out(fn(e0.v, 0).indices, "int32"), [0])

# ---------- indexing: ints beside tensor indices are basic indexing (PyTorch's and tinygrad's rule) ----------
x = f32((4, 5, 6))
i3 = T(np.array([0, 2, 1]), "int32")
for name, fn in (("int_slice_tensor", lambda t, i: t[1, :, i]), ("tensor_slice_int", lambda t, i: t[i, :, 1]),
                 ("slice_int_tensor", lambda t, i: t[:, 1, i]), ("tensor_int", lambda t, i: t[i, 1]),
                 ("tensor_slice_tensor", lambda t, i: t[i, :, i])):
    emit("getitem", name, [x, i3], out(fn(x.v, i3.v.long()), F32))
    g.grad("getitem", name, lambda t, i, fn=fn: fn(t, i.long()))
emit("getitem", "tensor_bounds", [x], out(x.v[1:3, :, -4:-1], F32))  # bounds given as 0-d integer tensors
for name, shape in (("bool_mask_full", (4, 5, 6)), ("bool_mask_rows", (4,)), ("bool_mask_2d", (4, 5))):
    m = T(rng.integers(0, 2, shape).astype(bool), "bool")
    emit("getitem", name, [x, m], out(x.v[m.v], F32))
    g.grad("getitem", name, lambda t, m: t[m])

# ---------- einsum with an ellipsis (the formulas are listed again in test_edges.cpp) ----------
ELLIPSIS = [("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]), ("...ij,...jk", [(2, 2, 3), (2, 3, 4)]), ("i...->...", [(2, 3, 4)]),
            ("...i->i", [(2, 3, 4)]), ("...", [(2, 3)]), ("b...,b...->b", [(2, 3, 1), (2, 1, 4)]), ("...i,i", [(3, 4), (4,)])]
for k, (formula, shapes) in enumerate(ELLIPSIS):
    ops = [f32(sh) for sh in shapes]
    emit("einsum", f"ellipsis{k}", ops, out(torch.einsum(formula, *[o.v.double() for o in ops]), F32))
    g.grad("einsum", f"ellipsis{k}", lambda *xs, formula=formula: torch.einsum(formula, *xs))

# ---------- pad modes with negative widths (a crop) ----------
pn = f32((1, 2, 5, 6))
for mode in ("reflect", "replicate", "circular"):
    for k, p in enumerate(((-1, 2, 2, -1), (2, -3, -2, 0), (-2, -1, 1, 1))):
        emit("pad_mode", f"{mode}_negative{k}", [pn], out(F.pad(pn.v.double(), p, mode=mode), F32), list(p))
        g.grad("pad_mode", f"{mode}_negative{k}", lambda x, p=p, mode=mode: F.pad(x, p, mode=mode))

# ---------- loss and attention overloads ----------
bl, by, pw = f32((3, 4), -20, 20), f32((3, 4), 0, 1), f32((4,), 0.2, 3)
for red in ("mean", "none"):
    emit("binary_crossentropy_logits", f"pos_weight_{red}", [bl, by, pw],
         out(F.binary_cross_entropy_with_logits(bl.v.double(), by.v.double(), pos_weight=pw.v.double(), reduction=red), F32))
    # torch does not differentiate pos_weight: its formula, checked against F's values by grad()
    g.grad("binary_crossentropy_logits", f"pos_weight_{red}", lambda x, y, w, red=red: (
        lambda l: l.mean() if red == "mean" else l)(-(w * y * F.logsigmoid(x) + (1 - y) * F.logsigmoid(-x))))


def sdpa_gqa(q, k, v, causal=False):  # PyTorch 2.5's enable_gqa: key/value heads repeated for their query groups
    rep = q.shape[-3] // k.shape[-3]
    k, v = k.repeat_interleave(rep, -3), v.repeat_interleave(rep, -3)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(), -math.inf)
    return torch.softmax(s, -1) @ v


gq, gk, gv = f32((2, 6, 4, 8)), f32((2, 2, 5, 8)), f32((2, 2, 5, 3))
emit("sdpa", "gqa", [gq, gk, gv], out(sdpa_gqa(gq.v.double(), gk.v.double(), gv.v.double()), F32))
g.grad("sdpa", "gqa", sdpa_gqa)
gk2, gv2 = f32((2, 3, 4, 8)), f32((2, 3, 4, 3))
emit("sdpa", "gqa_causal", [gq, gk2, gv2], out(sdpa_gqa(gq.v.double(), gk2.v.double(), gv2.v.double(), True), F32))
g.grad("sdpa", "gqa_causal", lambda q, k, v: sdpa_gqa(q, k, v, True))

# ---------- methods tinygrad has beside PyTorch's: elementwise ----------
a, b = f32((3, 4)), T(np.array([[-1.0, 0.0, -0.0, 2.0], [3.0, -inf, inf, -2.0], [0.5, -0.5, 1.0, -3.0]]), F32)
emit("copysign", "float32", [a, b], out(torch.copysign(a.v.double(), b.v.double()), F32))
g.grad("copysign", "float32", lambda x, y: torch.copysign(x, y))
ci = T(rng.integers(-5, 6, (2, 3)), "int32")
emit("copysign", "int32", [ci, T(np.array([[1, -1, 0], [-2, 3, -4]]), "int32")],
     out(torch.copysign(ci.v, torch.tensor([[1, -1, 0], [-2, 3, -4]])), F32))
fa, fb = f32((3, 4), -10, 10), T(rng.uniform(0.5, 3, (3, 4)) * rng.choice([-1, 1], (3, 4)), F32)
emit("fmod", "float32", [fa, fb], out(torch.fmod(fa.v.double(), fb.v.double()), F32))
g.grad("fmod", "float32", torch.fmod)
fs = T(np.array([5.0, -5.0, inf, 3.0, -0.0, 7.5]), F32)
ft = T(np.array([inf, 3.0, 2.0, 0.0, 2.0, -2.0]), F32)
emit("fmod", "special", [fs, ft], out(torch.fmod(fs.v, ft.v), F32))
ia, ib = T(np.array([7, -7, 7, -7, 0, 5]), "int32"), T(np.array([3, 3, -3, -3, 2, -1]), "int32")
emit("fmod", "int32", [ia, ib], out(torch.fmod(ia.v, ib.v), "int32"))
la, lb = T(np.array([0.0, 1000.0, -1000.0, -inf, -inf, inf, 2.0]), F32), T(np.array([0.0, 999.0, -1001.0, -inf, 3.0, 1.0, -5.0]), F32)
emit("logaddexp", "special", [la, lb], out(torch.logaddexp(la.v.double(), lb.v.double()), F32))
a2, b2 = f32((3, 4)), f32((3, 4))
emit("logaddexp", "float32", [a2, b2], out(torch.logaddexp(a2.v.double(), b2.v.double()), F32))
g.grad("logaddexp", "float32", torch.logaddexp)
lx = f32((3, 4), 0.01, 100)
emit("log10", "float32", [lx], out(torch.log10(lx.v.double()), F32))
g.grad("log10", "float32", torch.log10)
emit("log10", "int32", [T(np.array([1, 10, 1000]), "int32")], out(torch.log10(torch.tensor([1.0, 10.0, 1000.0])), F32))
c1 = T(np.array([1.0, 1.0, nan, inf, -inf, 1e-9, 100.0, 0.0]), F32)
c2 = T(np.array([1.0 + 1e-6, 1.1, nan, inf, inf, 0.0, 100.001, 1e-7]), F32)
for eq in (False, True):
    emit("isclose", f"equal_nan{int(eq)}", [c1, c2], out(torch.isclose(c1.v, c2.v, equal_nan=eq), "bool"), [1e-5, 1e-8, int(eq)])
emit("isclose", "tolerances", [c1, c2], out(torch.isclose(c1.v, c2.v, rtol=0.2, atol=1e-6), "bool"), [0.2, 1e-6, 0])
sx = f32((3, 5))
emit("softmin", "axis1", [sx], out(F.softmin(sx.v.double(), 1), F32), [1])
g.grad("softmin", "axis1", lambda x: F.softmin(x, 1))
nx = T(np.concatenate([rng.uniform(-3, 3, (3, 4)), np.zeros((1, 4))]), F32)
for p_ in (2.0, 1.0, 3.0, inf, 0.0):
    tag = f"p{p_:g}".replace("inf", "inf")
    emit("normalize", tag, [nx], out(F.normalize(nx.v.double(), p=p_, dim=1), F32), [0 if p_ == inf else p_, 1])  # pinf: by name
    if p_ in (2.0, 1.0, 3.0):
        g.grad("normalize", tag, lambda x, p_=p_: F.normalize(x, p=p_, dim=1))
emit("normalize", "dim0", [nx], out(F.normalize(nx.v.double(), dim=0), F32), [2.0, 0])
g.grad("normalize", "dim0", lambda x: F.normalize(x, dim=0))

# ---------- methods: movement ----------
dx = f32((3, 4, 5))
for k, (off, d1, d2) in enumerate(((0, 0, 1), (1, 1, 2), (-2, 2, 0), (7, 0, 1), (-1, -1, -2))):
    emit("diagonal", f"v{k}", [dx], out(torch.diagonal(dx.v, off, d1, d2), F32), [off, d1, d2])
    g.grad("diagonal", f"v{k}", lambda x, off=off, d1=d1, d2=d2: torch.diagonal(x, off, d1, d2))
dv, dm = f32((4,)), f32((3, 5))
for off in (0, 2, -1):
    emit("diag", f"vector_{off}".replace("-", "m"), [dv], out(torch.diag(dv.v, off), F32), [off])
    g.grad("diag", f"vector_{off}".replace("-", "m"), lambda x, off=off: torch.diag(x, off))
    emit("diag", f"matrix_{off}".replace("-", "m"), [dm], out(torch.diag(dm.v, off), F32), [off])
ux = f32((3, 7))
for k, (d, size, step) in enumerate(((1, 3, 2), (1, 2, 1), (0, 2, 1), (1, 7, 3), (-1, 1, 4))):
    emit("unfold", f"v{k}", [ux], out(ux.v.unfold(d, size, step), F32), [d, size, step])
    g.grad("unfold", f"v{k}", lambda x, d=d, size=size, step=step: x.unfold(d, size, step))
rk = f32((2, 3, 4))
emit("reshape", "keep_dim", [rk], out(rk.v.reshape(2, 3, 2, 2), F32))

REARRANGE = [  # formula, input shape, the same by reshape/permute (the formulas are listed again in test_edges.cpp)
    ("b (h w) c -> b h w c", (2, 6, 3), lambda x: x.reshape(2, 2, 3, 3)),
    ("b c h w -> b (h w) c", (2, 3, 4, 5), lambda x: x.permute(0, 2, 3, 1).reshape(2, 20, 3)),
    ("... c -> c ...", (2, 3, 4), lambda x: x.permute(2, 0, 1)),
    ("a 1 b -> a b", (3, 1, 4), lambda x: x.reshape(3, 4)),
    ("a b -> a 1 b 1", (3, 4), lambda x: x.reshape(3, 1, 4, 1)),
    ("(a b) c -> c b a", (6, 5), lambda x: x.reshape(2, 3, 5).permute(2, 1, 0)),
]
for k, (formula, shape, fn) in enumerate(REARRANGE):
    x = f32(shape)
    emit("rearrange", f"f{k}", [x], out(fn(x.v), F32))
    g.grad("rearrange", f"f{k}", fn)
pt = f32((3, 4))
emit("pad_to", "5_keep", [pt], out(F.pad(pt.v, (0, 0, 0, 2)), F32))
g.grad("pad_to", "5_keep", lambda x: F.pad(x, (0, 0, 0, 2)))
emit("shrink_to", "2_3", [pt], out(pt.v[:2, :3], F32))
g.grad("shrink_to", "2_3", lambda x: x[:2, :3])

# ---------- methods: selection ----------
mv = f32((3, 4))
mm = T(rng.integers(0, 2, (3, 4)).astype(bool), "bool")
sel = torch.masked_select(mv.v, mm.v)
for size in (3, 9):
    want = torch.full((size,), -1.5)
    want[:min(size, sel.numel())] = sel[:size]
    emit("masked_select", f"size{size}", [mv, mm], out(want, F32), [size, -1.5])
nz = T(np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]), F32)
emit("nonzero", "2d", [nz], out(torch.nonzero(nz.v), "int32"), [])
nz3 = T(rng.integers(0, 2, (2, 2, 3)), "int32")
emit("nonzero", "3d_int", [nz3], out(torch.nonzero(nz3.v), "int32"), [])
emit("nonzero", "empty", [T(np.zeros((2, 3)), F32)], out(torch.nonzero(torch.zeros(2, 3)), "int32"), [])
want = torch.full((6, 2), 7, dtype=torch.int64)
want[:3] = torch.nonzero(nz.v)
emit("nonzero", "size6", [nz], out(want, "int32"), [6, 7])
emit("nonzero", "size2", [nz], out(torch.nonzero(nz.v)[:2], "int32"), [2, 0])
sc, sidx = f32((3, 4)), T(np.array([[0, 1, 2, 0], [2, 2, 1, 0]]), "int64")
ssrc = f32((2, 4))
for red in ("add", "multiply"):
    emit("scatter", f"reduce_{red}", [sc, sidx, ssrc], out(sc.v.scatter(0, sidx.v, ssrc.v, reduce=red), F32), [0])
    emit("scatter", f"reduce_{red}_value", [sc, sidx], out(sc.v.scatter(0, sidx.v, 1.5, reduce=red), F32), [0, 1.5])

# ---------- methods: pooling with indices ----------
px = f32((2, 3, 6, 7))
px.v[0, 0, 0, :2] = 5.0  # a tie inside one window: the first index wins (PyTorch's)
px.v[1, 2, 3, 3] = nan
for k, (kk, st, pd, dil, ceil) in enumerate(((2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True), (2, 1, 0, 2, False))):
    v_, i_ = F.max_pool2d(px.v, kk, st, pd, dil, ceil, return_indices=True)
    args = [kk, st or 0, pd, dil, int(ceil)]
    emit("max_pool2d_with_indices", f"values{k}", [px], out(v_, F32), args)
    emit("max_pool2d_with_indices", f"indices{k}", [px], out(i_, "int32"), args)
    if k < 3:  # the indices are flat positions in the 6x7 input plane: unpooled to that size
        emit("max_unpool2d", f"v{k}", [out(v_, F32), out(i_, "int32")],
             out(F.max_unpool2d(v_, i_, kk, st, pd, output_size=(6, 7)), F32), args + [6, 7])
pd_ = f32((2, 1, 4, 6))
v_, i_ = F.max_pool2d(pd_.v, 2, return_indices=True)
emit("max_unpool2d", "default_size", [out(v_, F32), out(i_, "int32")], out(F.max_unpool2d(v_, i_, 2), F32), [2, 0, 0, 1, 0])
pxg = f32((1, 2, 5, 5))
emit("max_pool2d_with_indices", "grad", [pxg], out(F.max_pool2d(pxg.v, 2, 2), F32), [2, 0, 0, 1, 0])
g.grad("max_pool2d_with_indices", "grad", lambda x: F.max_pool2d(x, 2, 2))
ug, ui = f32((1, 2, 2, 2)), F.max_pool2d(pxg.v, 2, 2, return_indices=True)[1]
emit("max_unpool2d", "sized", [ug, out(ui, "int32")], out(F.max_unpool2d(ug.v.double(), ui, 2, 2, output_size=(5, 5)), F32), [2, 0, 0, 1, 0, 5, 5])
g.grad("max_unpool2d", "sized", lambda x, i: F.max_unpool2d(x, i.long(), 2, 2, output_size=(5, 5)))

# ---------- dtypes ----------
u8 = T(rng.integers(0, 256, (1, 2, 3, 4)), "uint8")
emit("interpolate", "uint8_nearest", [u8], out(F.interpolate(u8.v, size=(5, 7), mode="nearest"), "uint8"), [5, 7])
for name, dt, src_dt, v in (("int8_to_int8", "int8", "int8", [100, 100, 100, -7]),
                            ("int32_to_float32", "float32", "int32", [1, 2, 3, 4]),
                            ("float16_to_float32", "float32", "float16", [1000.0, 1000.0, 0.1, 30000.0])):
    src = T(np.array(v), src_dt)
    emit("sum", f"dtype_{name}", [src], out(src.v.sum(dtype=g.TORCH[dt]), dt), [])
    emit("prod", f"dtype_{name}", [src], out(src.v.prod(dtype=g.TORCH[dt]), dt), [])

# ---------- zero-size shapes: values, and gradients that are zeros of the input's shape ----------
e03, e30 = T(np.zeros((0, 3)), F32), T(np.zeros((3, 0)), F32)
ZERO = {  # name: (inputs, function)
    "sum_all": ([e03], lambda x: x.sum()), "sum_axis0": ([e03], lambda x: x.sum(0)), "sum_axis1": ([e03], lambda x: x.sum(1)),
    "mean_axis0": ([e03], lambda x: x.mean(0)), "var_axis0": ([e03], lambda x: x.var(0)), "std_axis1": ([e03], lambda x: x.std(1)),
    "matmul_inner": ([T(np.zeros((2, 0)), F32), T(np.zeros((0, 3)), F32)], torch.matmul),
    "matmul_outer": ([T(np.zeros((0, 2)), F32), f32((2, 3))], torch.matmul),
    "cat": ([f32((2, 3)), e03], lambda a, b: torch.cat([a, b], 0)), "roll": ([e03], lambda x: torch.roll(x, 1, 1)),
    "cumsum": ([e03], lambda x: x.cumsum(0)), "cumprod": ([e30], lambda x: x.cumprod(1)), "tril": ([e03], torch.tril),
    "triu": ([e30], torch.triu), "slice": ([f32((4, 3))], lambda x: x[2:2]), "slice_sum": ([f32((4, 3))], lambda x: x[:, 1:1].sum(1)),
    "expand": ([T(np.zeros((0, 1)), F32)], lambda x: x.expand(0, 3)), "logsumexp": ([e30], lambda x: torch.logsumexp(x, 1)),
    "max_empty_out": ([e03], lambda x: x.amax(1)), "min_empty_out": ([e03], lambda x: x.amin(1)),
    "prod_axis0": ([e03], lambda x: x.prod(0)), "permute": ([e03], lambda x: x.permute(1, 0)), "flip": ([e03], lambda x: x.flip(0)),
    "pad": ([e03], lambda x: F.pad(x, (1, 1, 2, 0))), "reshape": ([e03], lambda x: x.reshape(3, 0, 1)),
    "repeat": ([e30], lambda x: x.repeat(2, 3)), "stack": ([e03, e03], lambda a, b: torch.stack([a, b], 1)),
    "softmax": ([e30], lambda x: torch.softmax(x, 1)), "log_softmax": ([e03], lambda x: torch.log_softmax(x, 0)),
    "logcumsumexp": ([e03], lambda x: torch.logcumsumexp(x, 0)), "cummax": ([e30], lambda x: torch.cummax(x, 1).values),
    "flatten": ([e30], lambda x: x.flatten()), "transpose_sum": ([e30], lambda x: x.T.sum(0)),
}
for name, (ins, fn) in ZERO.items():
    emit("zero_size", name, ins, out(fn(*[t.v.double() for t in ins]), F32))
    g.grad("zero_size", name, fn)
eb = T(np.zeros((0, 3), dtype=bool), "bool")
emit("any", "empty_axis", [eb], out(eb.v.any(0), "bool"), [0])
emit("all", "empty_axis", [eb], out(eb.v.all(0), "bool"), [0])
emit("any", "empty_all", [eb], out(eb.v.any(), "bool"), [])
emit("all", "empty_all", [eb], out(eb.v.all(), "bool"), [])

# ---------- matrix factorizations: qr (LAPACK's signs), svd (values; vectors up to sign, the C++ side aligns them) ----------
for name, shape in (("square", (4, 4)), ("wide", (3, 5)), ("tall", (5, 3)), ("batch", (2, 3, 3))):
    a = f32(shape)
    q, r = torch.linalg.qr(a.v.double(), mode="complete")
    emit("qr", f"Q_{name}", [a], out(q, F32))
    emit("qr", f"R_{name}", [a], out(r, F32))
    if name != "tall":  # PyTorch has no gradient for complete mode with more rows than columns
        g.grad("qr", f"Q_{name}", lambda x: torch.linalg.qr(x, mode="complete")[0])
        g.grad("qr", f"R_{name}", lambda x: torch.linalg.qr(x, mode="complete")[1])
zc = T(np.array([[0.0, 1.0], [0.0, 2.0]]), F32)  # a zero column: no reflection, Q = I
emit("qr", "Q_zero_column", [zc], out(torch.linalg.qr(zc.v.double(), mode="complete")[0], F32))
emit("qr", "R_zero_column", [zc], out(torch.linalg.qr(zc.v.double(), mode="complete")[1], F32))
# nothing below the diagonal: no reflection (LAPACK keeps R's signs), and the gradient still reaches those entries
for name, m in (("upper", [[2.0, 1.0, -1.0], [0.0, -3.0, 0.5], [0.0, 0.0, 1.5]]), ("diagonal", np.diag([1.0, 2.0, -3.0]))):
    a = T(np.array(m), F32)
    q, r = torch.linalg.qr(a.v.double(), mode="complete")
    emit("qr", f"Q_{name}", [a], out(q, F32))
    emit("qr", f"R_{name}", [a], out(r, F32))
    g.grad("qr", f"Q_{name}", lambda x: torch.linalg.qr(x, mode="complete")[0])
    g.grad("qr", f"R_{name}", lambda x: torch.linalg.qr(x, mode="complete")[1])
for name, a in (("tall", f32((5, 3))), ("wide", f32((3, 5))), ("square", f32((4, 4))), ("batch", f32((2, 4, 3))),
                ("rank1", T(np.array([[1.0, 1.0], [2.0, 2.0]]), F32)), ("zeros", T(np.zeros((2, 2)), F32))):
    u, s, vh = torch.linalg.svd(a.v.double(), full_matrices=False)
    emit("svd", f"S_{name}", [a], out(s, F32))
    if name not in ("rank1", "zeros"):  # singular vectors are unique up to sign where the values are distinct
        emit("svd", f"U_{name}", [a], out(u, F32))
        emit("svd", f"Vh_{name}", [a], out(vh, F32))
        g.grad("svd", f"S_{name}", lambda x: torch.linalg.svdvals(x))

# ---------- dtype arguments: softmax in a dtype, products summed in a wider one ----------
sm = f32((3, 5), -20, 20)
emit("softmax_dtype", "float64", [sm], out(torch.softmax(sm.v, 1, dtype=torch.float64), "float64"))
emit("log_softmax_dtype", "float64", [sm], out(torch.log_softmax(sm.v, 1, dtype=torch.float64), "float64"))
g.grad("softmax_dtype", "float64", lambda x: torch.softmax(x, 1, dtype=torch.float64))
i8a, i8b = T(rng.integers(-100, 100, (3, 4)), "int8"), T(rng.integers(-100, 100, (4, 2)), "int8")
emit("matmul_acc", "int8_int32", [i8a, i8b], out(i8a.v.int() @ i8b.v.int(), "int32"))
ha, hb = T(rng.uniform(-3, 3, (3, 40)), "float16"), T(rng.uniform(-3, 3, (40, 2)), "float16")
emit("matmul_acc", "float16_float32", [ha, hb], out(ha.v.float() @ hb.v.float(), F32))
emit("einsum_acc", "float16_float32", [ha, hb], out(torch.einsum("ik,kj->ij", ha.v.float(), hb.v.float()), F32))
lb = T(rng.uniform(-3, 3, (2,)), "float16")
emit("linear_acc", "float16_float32", [ha, hb, lb], out(ha.v.float() @ hb.v.float() + lb.v.float(), F32))

# ---------- bitcast between sizes (numpy's view) and hashing (Python's hashlib) ----------
bc = T(rng.integers(0, 256, (2, 8)), "uint8")
emit("bitcast", "uint8_to_uint64", [bc], T(bc.numpy().view(np.uint64), "uint64"))
emit("bitcast", "uint8_to_float32", [bc], T(bc.numpy().view(np.float32), F32))
emit("bitcast", "uint8_to_int16", [bc], T(bc.numpy().view(np.int16), "int16"))
bf = f32((3, 2))
emit("bitcast", "float32_to_uint8", [bf], T(bf.numpy().view(np.uint8), "uint8"))
emit("bitcast", "float32_to_float16", [bf], T(bf.numpy().view(np.float16), "float16"))
emit("bitcast", "float32_to_int64", [bf], T(bf.numpy().view(np.int64), "int64"))
DIGESTS = {"sha3_224": lambda b: hashlib.sha3_224(b).digest(), "sha3_256": lambda b: hashlib.sha3_256(b).digest(),
           "sha3_384": lambda b: hashlib.sha3_384(b).digest(), "sha3_512": lambda b: hashlib.sha3_512(b).digest(),
           "shake_128": lambda b: hashlib.shake_128(b).digest(16), "shake_256": lambda b: hashlib.shake_256(b).digest(32)}
for cfg, fn in DIGESTS.items():
    for n in (0, 1, 71, 72, 135, 136, 137, 168, 300):
        msg = T(rng.integers(0, 256, (n,)), "uint8")
        emit("keccak", f"{cfg}_{n}", [msg], T(np.frombuffer(fn(msg.numpy().tobytes()), np.uint8), "uint8"))
batch = T(rng.integers(0, 256, (2, 3, 50)), "uint8")
emit("keccak", "sha3_256_batch", [batch],
     T(np.array([[list(hashlib.sha3_256(r.tobytes()).digest()) for r in m] for m in batch.numpy()]), "uint8"))
fl = f32((4,))
emit("keccak", "sha3_256_float32", [fl], T(np.frombuffer(hashlib.sha3_256(fl.numpy().tobytes()).digest(), np.uint8), "uint8"))


def tinygrad_hash(data):
    """tinygrad's Tensor.hash, written from its description: SHAKE-128 (16 bytes) of each 4 KiB piece of each
    zero-padded 1 MiB chunk, then of each chunk's 256 digests; repeated over the chunk digests while there are
    several chunks."""
    chunk = 1 << 20
    def hash_chunks(d, chunks):
        d = d + bytes(chunks * chunk - len(d))
        out = b""
        for c in range(chunks):
            pieces = b"".join(hashlib.shake_128(d[c * chunk + p:c * chunk + p + 4096]).digest(16) for p in range(0, chunk, 4096))
            out += hashlib.shake_128(pieces).digest(16)
        return out
    chunks = (len(data) + chunk - 1) // chunk
    while chunks > 1:
        data = hash_chunks(data, chunks)
        chunks = (chunks + 65535) // 65536
    return hash_chunks(data, 1)[:16]


hm = T(rng.integers(0, 256, (100,)), "uint8")
emit("hash", "bytes_100", [hm], T(np.frombuffer(tinygrad_hash(hm.numpy().tobytes()), np.uint8), "uint8"))
big = (np.arange(3 << 19) % 251).astype(np.uint8)  # 1.5 MiB: two chunks; the C++ test makes the same bytes
emit("hash", "arange_mod_251", [], T(np.frombuffer(tinygrad_hash(big.tobytes()), np.uint8), "uint8"), [3 << 19])

# ---------- gradients at special points: odd functions at +-0, a constant row's std, saturated probabilities ----------
# (their compositions differentiated by the chain rule gave 0 at 0 (sign(x) * f(|x|)), or NaN (0 * inf) where
# PyTorch's gradient is finite)
ODD = {"atan": (torch.atan, 1.5), "asinh": (torch.asinh, 1.5), "erf": (torch.erf, 1.5), "asin": (torch.asin, 0.9),
       "acos": (torch.acos, 0.9)}
for name, (fn, r) in ODD.items():
    xz = T(np.array([-r, -0.5, -0.0, 0.0, 0.5, r]), F32)
    emit(name, "at_zero", [xz], out(fn(xz.v.double()), F32))
    g.grad(name, "at_zero", fn)
xs = T(np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0], [0.0, 0.0, 0.0]]), F32)
emit("std", "constant_rows", [xs], out(xs.v.double().std(1), F32))
g.grad("std", "constant_rows", lambda x: x.std(1))
bp = T(np.array([0.0, 1.0, 1.0, 0.0, 0.3, 0.7, 1e-30]), F32)
by = T(np.array([0.0, 1.0, 0.0, 1.0, 0.5, 0.0, 1.0]), F32)
emit("binary_crossentropy", "saturated", [bp, by], out(F.binary_cross_entropy(bp.v.double(), by.v.double(), reduction="none"), F32))
g.grad("binary_crossentropy", "saturated", lambda p, y: F.binary_cross_entropy(p, y, reduction="none"))

# ---------- cos and tan of large arguments and near their poles (float32, PyTorch's float32 values) ----------
# (cos as sin(pi/2 - x) rounded pi/2 - x to half an ulp of x: cos(1e4) was off by 1e-4, cos(3e7) wholly wrong)
trig = T(np.array([0.5, -2.5, 3.0, 100.0, 1e4, 123456.0, 1e6, -1e6, 3e7, 1.5707964, -1.5707964, 4.712389]), F32)
emit("cos", "large", [trig], out(torch.cos(trig.v.float()), F32))
g.grad("cos", "large", lambda x: torch.cos(x.float()).double())
tan_args = T(np.array([0.5, -2.5, 3.0, 100.0, 1e4, 123456.0, 1e6, 3e7, 1.5707964, -1.5707964]), F32)
emit("tan", "large", [tan_args], out(torch.tan(tan_args.v.float()), F32))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "edges.txt")
with open(path, "w") as fh:
    fh.write("# generated by tools/gen_edge_goldens.py (PyTorch %s); do not edit\n" % torch.__version__)
    fh.write("\n".join(g.out_lines) + "\n")
print(f"wrote {sum(1 for l in g.out_lines if l.startswith('case'))} cases to {os.path.normpath(path)}")
