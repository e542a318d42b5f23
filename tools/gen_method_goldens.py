#!/usr/bin/python3
"""Golden values for the Tensor methods ported from tinygrad in the `methods` batch, computed by PyTorch.

Writes tests/golden/methods.txt, read by tests/ops/test_tensor_methods.cpp: each case names a method and a variant
that the C++ test binds to the same call; "grad" lines hold PyTorch's float64 input gradients of sum(out * w)
(see golden_common.grad). Needs Debian's python3-torch (1.13):
  /usr/bin/python3 tools/gen_method_goldens.py
"""
import math
import warnings
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_common as g  # noqa: E402
from golden_common import T, emit  # noqa: E402

g.out_lines.clear()
warnings.filterwarnings("ignore", message="scatter_reduce")
rng = np.random.default_rng(20261205)  # this file's own stream: adding a case here leaves api.txt alone
F32 = "float32"


def f32(shape, lo=-3.0, hi=3.0):
    return T(rng.uniform(lo, hi, shape), F32)


def ints(shape, lo=-5, hi=6, dt="int32"):
    return T(rng.integers(lo, hi, shape), dt)


def bools(shape):
    return T(rng.integers(0, 2, shape).astype(bool), "bool")


def out(v, dt):
    return T(v.detach() if isinstance(v, torch.Tensor) else np.ascontiguousarray(v), dt)


def d(t):  # a golden input as float64 for the reference computation
    return t.v.double()


# ---------- elementwise ----------
x = f32((3, 4), 0.1, 20)
emit("log10", "float32", [x], out(torch.log10(d(x)), F32))
h = T(rng.uniform(0.1, 20, (2, 3)), "float16")
emit("log10", "float16", [h], out(torch.log10(h.v.float()), "float16"))
i = ints((2, 3), 1, 1000)
emit("log10", "int32", [i], out(torch.log10(i.v.double()), F32))
emit("log10", "0d", [T(np.array(100.0), F32)], out(torch.tensor(2.0), F32))
emit("log10", "empty", [T(np.zeros((0, 3)), F32)], out(torch.zeros((0, 3)), F32))
emit("log10", "special", [T(np.array([0.0, -1.0, np.inf, 1.0]), F32)],
     out(torch.log10(torch.tensor([0.0, -1.0, np.inf, 1.0])), F32))

a, b = f32((3, 4)), f32((3, 4))
emit("copysign", "float32", [a, b], out(torch.copysign(d(a), d(b)), F32))
b1 = f32((1, 4))
emit("copysign", "broadcast", [a, b1], out(torch.copysign(d(a), d(b1)), F32))
sa = T(np.array([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0]), F32)
sb = T(np.array([-0.0, 0.0, -1.0, 2.0, -3.0, np.inf, -1.0, -np.inf]), F32)
emit("copysign", "special", [sa, sb], out(torch.copysign(sa.v, sb.v), F32))
emit("copysign", "scalar", [a], out(torch.copysign(d(a), torch.tensor(-2.0, dtype=torch.float64)), F32), [-2.0])
ia, ib = ints((2, 3)), ints((2, 3))
emit("copysign", "int32", [ia, ib], out(torch.copysign(ia.v, ib.v), F32))  # PyTorch's float result
ha, hb = T(rng.uniform(-3, 3, (2, 3)), "float16"), T(rng.uniform(-3, 3, (2, 3)), "float16")
emit("copysign", "float16", [ha, hb], out(torch.copysign(ha.v.float(), hb.v.float()), "float16"))

fa = f32((3, 4), -10, 10)
fb = T(rng.uniform(0.5, 4, (3, 4)) * np.where(rng.integers(0, 2, (3, 4)) == 1, 1, -1), F32)
emit("fmod", "float32", [fa, fb], out(torch.fmod(d(fa), d(fb)), F32))
emit("fmod", "scalar", [fa], out(torch.fmod(d(fa), 2.5), F32), [2.5])
fia = ints((3, 4), -20, 21)
fib = T(rng.integers(1, 6, (3, 4)) * np.where(rng.integers(0, 2, (3, 4)) == 1, 1, -1), "int32")
emit("fmod", "int32", [fia, fib], out(torch.fmod(fia.v, fib.v), "int32"))
fi8 = ints((2, 3), -100, 100, "int8")
emit("fmod", "int8_scalar", [fi8], out(torch.fmod(fi8.v, -7), "int8"), [-7])
fha = T(rng.uniform(-10, 10, (2, 3)), "float16")
emit("fmod", "float16", [fha], out(torch.fmod(fha.v.float(), 3.0), "float16"), [3.0])

la, lb = f32((3, 4), -5, 5), f32((3, 4), -5, 5)
emit("logaddexp", "float32", [la, lb], out(torch.logaddexp(d(la), d(lb)), F32))
lb1 = f32((4,), -5, 5)
emit("logaddexp", "broadcast", [la, lb1], out(torch.logaddexp(d(la), d(lb1)), F32))
big = T(np.array([1000.0, -1000.0, -np.inf, np.inf, -np.inf, 0.0, 88.0]), F32)
big2 = T(np.array([999.0, -1001.0, -np.inf, 1.0, np.inf, -np.inf, 89.0]), F32)
emit("logaddexp", "special", [big, big2], out(torch.logaddexp(big.v.double(), big2.v.double()), F32))
emit("logaddexp", "scalar", [la], out(torch.logaddexp(d(la), torch.tensor(0.5, dtype=torch.float64)), F32), [0.5])
lha, lhb = T(rng.uniform(-5, 5, (2, 3)), "float16"), T(rng.uniform(-5, 5, (2, 3)), "float16")
emit("logaddexp", "float16", [lha, lhb], out(torch.logaddexp(lha.v.float(), lhb.v.float()), "float16"))

ca = f32((3, 4))
noise = rng.choice([0.0, 1e-9, 1e-6, 1e-4, 1e-2], (3, 4)) * rng.choice([-1, 1], (3, 4))
cb = T(ca.numpy() * (1 + noise) + rng.choice([0.0, 5e-9, 2e-8], (3, 4)), F32)
# float32 inputs compared in float64 by PyTorch and in float32 by us: keep the pairs far from the border
emit("isclose", "default", [ca, cb], out(torch.isclose(d(ca), d(cb)), "bool"), [1e-5, 1e-8, 0])
emit("isclose", "tolerances", [ca, cb], out(torch.isclose(d(ca), d(cb), rtol=1e-3, atol=1e-5), "bool"), [1e-3, 1e-5, 0])
na = T(np.array([np.nan, np.nan, np.inf, np.inf, -np.inf, 1.0, 0.0, 1e10]), F32)
nb = T(np.array([np.nan, 1.0, np.inf, -np.inf, -np.inf, np.inf, 1e-9, 1.00001e10]), F32)
for en in (0, 1):
    emit("isclose", f"special_nan{en}", [na, nb], out(torch.isclose(na.v, nb.v, equal_nan=bool(en)), "bool"), [1e-5, 1e-8, en])
cia, cib = ints((3, 4), -3, 4), ints((3, 4), -3, 4)
emit("isclose", "int32", [cia, cib], out(torch.isclose(cia.v, cib.v, rtol=0.5, atol=1), "bool"), [0.5, 1, 0])
cba, cbb = bools((2, 3)), bools((2, 3))
emit("isclose", "bool", [cba, cbb], out(torch.isclose(cba.v, cbb.v), "bool"), [1e-5, 1e-8, 0])
cb1 = T(ca.numpy()[0:1], F32)
emit("isclose", "broadcast", [ca, cb1], out(torch.isclose(d(ca), d(cb1)), "bool"), [1e-5, 1e-8, 0])
close = T(ca.numpy() * (1 + 1e-7), F32)
emit("allclose", "true", [ca, close], out(torch.tensor(torch.allclose(d(ca), d(close))), "bool"), [1e-5, 1e-8, 0])
emit("allclose", "false", [ca, cb], out(torch.tensor(torch.allclose(d(ca), d(cb))), "bool"), [1e-5, 1e-8, 0])
nn_ = T(np.array([1.0, np.nan]), F32)
for en in (0, 1):
    emit("allclose", f"nan{en}", [nn_, nn_], out(torch.tensor(torch.allclose(nn_.v, nn_.v, equal_nan=bool(en))), "bool"), [1e-5, 1e-8, en])
emit("allclose", "empty", [T(np.zeros((0,)), F32), T(np.zeros((0,)), F32)], out(torch.tensor(True), "bool"), [1e-5, 1e-8, 0])

# ---------- softmin, normalize ----------
sm = f32((3, 4, 5))
emit("softmin", "last", [sm], out(F.softmin(d(sm), -1), F32), [-1])
emit("softmin", "axis0", [sm], out(F.softmin(d(sm), 0), F32), [0])
smh = T(rng.uniform(-3, 3, (2, 5)), "float16")
emit("softmin", "float16", [smh], out(F.softmin(smh.v.float(), -1), "float16"), [-1])
NORMS = {"p2_dim1": (2, 1), "p1_last": (1, -1), "pinf_dim0": (math.inf, 0), "p3_dim1": (3, 1), "p0_dim1": (0, 1), "p2_5_last": (2.5, -1)}
nx = f32((3, 4, 5))
for name, (p, dim) in NORMS.items():
    ref = d(nx) / torch.linalg.vector_norm(d(nx), ord=p, dim=dim, keepdim=True).clamp_min(1e-12)
    assert torch.allclose(ref, F.normalize(d(nx), p=p, dim=dim)) or p == 0
    emit("normalize", name, [nx], out(ref, F32), [p if p != math.inf else -1, dim, 1e-12])
zrow = T(np.array([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0]]), F32)
emit("normalize", "zero_row_eps", [zrow], out(F.normalize(d(zrow), dim=1, eps=0.5), F32), [2, 1, 0.5])
vec = f32((5,))
emit("normalize", "1d", [vec], out(F.normalize(d(vec), dim=0), F32), [2, 0, 1e-12])
ni = ints((2, 3), -3, 4)
emit("normalize", "int32", [ni], out(F.normalize(ni.v.double(), dim=1), F32), [2, 1, 1e-12])

# ---------- views ----------
dx = f32((3, 4))
for off in (0, 1, -1, 3, -3, 5):
    emit("diagonal", f"2d_off{off}".replace("-", "m"), [dx], out(torch.diagonal(dx.v, off), F32), [off, 0, 1])
d3 = f32((2, 3, 4))
for off, d1, d2 in ((0, 1, 2), (-1, 0, 2), (1, -1, 0), (2, 2, 1)):
    emit("diagonal", f"3d_{off}_{d1}_{d2}".replace("-", "m"), [d3], out(torch.diagonal(d3.v, off, d1, d2), F32), [off, d1, d2])
di = ints((3, 3))
emit("diagonal", "int32", [di], out(torch.diagonal(di.v), "int32"), [0, 0, 1])
emit("diagonal", "empty", [T(np.zeros((0, 3)), F32)], out(torch.diagonal(torch.zeros((0, 3))), F32), [0, 0, 1])
dv = f32((4,))
for off in (0, 2, -1):
    emit("diag", f"1d_off{off}".replace("-", "m"), [dv], out(torch.diag(dv.v, off), F32), [off])
for off in (0, 1, -2):
    emit("diag", f"2d_off{off}".replace("-", "m"), [dx], out(torch.diag(dx.v, off), F32), [off])
dvi = ints((3,))
emit("diag", "int32", [dvi], out(torch.diag(dvi.v), "int32"), [0])
db = bools((3,))
emit("diag", "bool", [db], out(torch.diag(db.v.int()).bool(), "bool"), [0])
emit("diag", "empty", [T(np.zeros((0,)), F32)], out(torch.diag(torch.zeros(0), 2), F32), [2])
ux = f32((3, 7))
UNFOLDS = {"dim1_s3_st2": (ux, 1, 3, 2), "dim0_s2_st1": (ux, 0, 2, 1), "full": (ux, 1, 7, 7), "step_gt_size": (ux, 1, 2, 4),
           "size0": (ux, 1, 0, 3), "3d_last": (f32((2, 3, 5)), -1, 2, 3), "3d_mid": (f32((2, 5, 3)), 1, 3, 1),
           "0d": (T(np.array(2.5), F32), 0, 1, 1)}
for name, (t, dim, size, step) in UNFOLDS.items():
    emit("unfold", name, [t], out(t.v.unfold(dim, size, step), F32), [dim, size, step])
uix = ints((2, 6))
emit("unfold", "int32", [uix], out(uix.v.unfold(1, 2, 2), "int32"), [1, 2, 2])

rx = f32((2, 3, 4))
KEEP = -(2 ** 63)  # tg::keep_dim
emit("reshape_keep", "first", [rx], out(rx.v.reshape(2, -1), F32), [KEEP, -1])
emit("reshape_keep", "two", [rx], out(rx.v.reshape(2, 3, 2, 2), F32), [KEEP, KEEP, 2, 2])
emit("reshape_keep", "middle", [rx], out(rx.v.reshape(4, 3, 2), F32), [4, KEEP, 2])
emit("reshape_keep", "all", [rx], out(rx.v, F32), [KEEP, KEEP, KEEP])
emit("shrink_to", "keep", [rx], out(rx.v[:, :2, :3], F32), [KEEP, 2, 3])
emit("pad_to", "keep", [rx], out(F.pad(rx.v, (0, 2, 0, 0, 0, 1)), F32), [3, KEEP, 6])
REARRANGES = {  # name: (input shape, formula, sizes, torch reference)
    "split_permute": ((2, 6, 3), "b (h w) c -> b c h w", {"h": 2}, lambda t: t.reshape(2, 2, 3, 3).permute(0, 3, 1, 2)),
    "flatten": ((2, 3, 4, 5), "b c h w -> b (c h w)", {}, lambda t: t.reshape(2, 60)),
    "ellipsis": ((2, 3, 4, 5), "... h w -> ... (h w)", {}, lambda t: t.reshape(2, 3, 20)),
    "ellipsis_front": ((2, 3, 4, 5), "b ... w -> w ... b", {}, lambda t: t.permute(3, 1, 2, 0)),
    "transpose": ((3, 4), "a b -> b a", {}, lambda t: t.T),
    "unit": ((3, 1, 4), "a 1 b -> b a", {}, lambda t: t.reshape(3, 4).T),
    "add_unit": ((3, 4), "a b -> a 1 b", {}, lambda t: t.reshape(3, 1, 4)),
    "groups_both": ((6, 4), "(a b) c -> b (c a)", {"b": 3}, lambda t: t.reshape(2, 3, 4).permute(1, 2, 0).reshape(3, 8)),
    "ellipsis_group": ((2, 3, 4), "a ... -> (...) a", {}, lambda t: t.permute(1, 2, 0).reshape(12, 2)),
}
for name, (shape, formula, sizes, ref) in REARRANGES.items():
    t = f32(shape)
    emit("rearrange", name, [t], out(ref(t.v), F32))

# ---------- padding with negative widths ----------
pm = f32((1, 2, 4, 5))
PADS = {"crop_before": (2, -1, -1, 2), "crop_after": (-2, 3, 2, -1), "crop_both": (-1, -2, -1, -1), "reflect_then_crop": (4, -4, 3, -3)}
for mode in ("reflect", "replicate", "circular"):
    for name, p in PADS.items():
        if mode == "circular" and name == "reflect_then_crop":
            p = (4, -1, 3, -1)  # circular crops first: what is left must hold the wrap
        emit("pad_negative", f"{mode}_{name}", [pm], out(F.pad(pm.v, p, mode=mode), F32), list(p))

# ---------- einsum with an ellipsis ----------
ELL = {"...ij,...jk->...ik": [(2, 3, 4), (2, 4, 5)], "...ij,...jk": [(2, 1, 3, 4), (3, 4, 2)], "i...->...": [(3, 2, 4)],
       "...ii->...i": [(2, 3, 3)], "...ij->...ji": [(3, 4)], "ab...,b...->a...": [(2, 3, 4), (3, 4)], "bi...,b...": [(2, 3, 4), (2, 4)]}
for k, (formula, shapes) in enumerate(ELL.items()):
    ops_ = [f32(s_) for s_ in shapes]
    emit("einsum_ellipsis", f"f{k}", ops_, out(torch.einsum(formula, *[o.v.double() for o in ops_]), F32))

# ---------- selection ----------
nz = T(np.where(rng.integers(0, 3, (3, 4)) == 0, 0.0, rng.uniform(-2, 2, (3, 4))), F32)
emit("nonzero", "2d", [nz], out(torch.nonzero(nz.v), "int32"))
nz3 = T(rng.integers(-1, 2, (2, 3, 4)), "int32")
emit("nonzero", "3d_int", [nz3], out(torch.nonzero(nz3.v), "int32"))
nzb = bools((5,))
emit("nonzero", "bool", [nzb], out(torch.nonzero(nzb.v), "int32"))
emit("nonzero", "0d_true", [T(np.array(3.0), F32)], out(torch.nonzero(torch.tensor(3.0)), "int32"))
emit("nonzero", "0d_false", [T(np.array(0.0), F32)], out(torch.nonzero(torch.tensor(0.0)), "int32"))
emit("nonzero", "none", [T(np.zeros((2, 3)), F32)], out(torch.nonzero(torch.zeros((2, 3))), "int32"))
emit("nonzero", "empty", [T(np.zeros((0, 3)), F32)], out(torch.nonzero(torch.zeros((0, 3))), "int32"))
nzn = T(np.array([0.0, np.nan, -0.0, 1.0]), F32)
emit("nonzero", "nan", [nzn], out(torch.nonzero(nzn.v), "int32"))


def padded_rows(r, size, fill):
    r = r[:size]
    if r.shape[0] < size:
        r = torch.cat([r, torch.full((size - r.shape[0],) + tuple(r.shape[1:]), fill, dtype=r.dtype)])
    return r


for size, fill in ((10, -1), (3, 0), (0, 0)):
    emit("nonzero_sized", f"s{size}_f{fill}".replace("-", "m"), [nz], out(padded_rows(torch.nonzero(nz.v), size, fill), "int32"), [size, fill])
emit("nonzero_sized", "3d_int", [nz3], out(padded_rows(torch.nonzero(nz3.v), 20, 7), "int32"), [20, 7])
emit("nonzero_sized", "0d", [T(np.array(1.0), F32)], out(torch.zeros((4, 0)), "int32"), [4, 0])
mx = f32((3, 4))
mm = bools((3, 4))
for size, fill in ((12, -2.5), (3, 0.0), (0, 0.0)):
    emit("masked_select_sized", f"s{size}", [mx, mm], out(padded_rows(torch.masked_select(mx.v, mm.v), size, fill), F32), [size, fill])
mb = bools((3, 1))
emit("masked_select_sized", "broadcast", [mx, mb], out(padded_rows(torch.masked_select(mx.v, mb.v), 8, 9.0), F32), [8, 9.0])
mi = ints((2, 3))
mib = bools((2, 3))
emit("masked_select_sized", "int32", [mi, mib], out(padded_rows(torch.masked_select(mi.v, mib.v), 5, -1), "int32"), [5, -1])

# ---------- scatter with reduce ----------
sx = f32((3, 5), 0.5, 2)
si = T(np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), "int64")
ssrc = f32((2, 5), 0.5, 2)
for red in ("add", "multiply"):
    emit("scatter_reduce_arg", f"{red}_tensor", [sx, si, ssrc], out(sx.v.scatter(0, si.v, ssrc.v, reduce=red), F32), [0])
    emit("scatter_reduce_arg", f"{red}_value", [sx, si], out(sx.v.scatter(0, si.v, 1.5, reduce=red), F32), [0, 1.5])
sxi = ints((3, 4), -3, 4)
sii = T(np.array([[3, 0], [1, 1], [0, 2]]), "int32")
srci = ints((3, 2), -3, 4)
emit("scatter_reduce_arg", "add_int_dim1", [sxi, sii, srci], out(sxi.v.scatter(1, sii.v.long(), srci.v, reduce="add"), "int32"), [1])

# ---------- pooling with indices, unpooling ----------
px = f32((2, 3, 7, 7))
POOLS = [("k2", 2, None, 0, False, 1), ("k3_s2", 3, 2, 0, False, 1), ("k3_s2_p1", 3, 2, 1, False, 1), ("k3_s2_p1_ceil", 3, 2, 1, True, 1),
         ("k2_ceil", 2, None, 0, True, 1), ("k3_s1", 3, 1, 0, False, 1), ("dilation2", 3, 1, 1, False, 2)]
for name, k, s_, p, ceil, dil in POOLS:
    v, ix = F.max_pool2d(px.v.double(), k, s_, p, dil, ceil, return_indices=True)
    args = [k, s_ or 0, p, int(ceil), dil]
    emit("max_pool2d_with_indices", f"values_{name}", [px], out(v, F32), args)
    emit("max_pool2d_with_indices", f"indices_{name}", [px], out(ix, "int32"), args)
ties = T(np.round(rng.uniform(0, 2, (1, 2, 6, 6))), F32)
v, ix = F.max_pool2d(ties.v, 3, 2, 1, return_indices=True)
emit("max_pool2d_with_indices", "indices_ties", [ties], out(ix, "int32"), [3, 2, 1, 0, 1])
pi = ints((1, 1, 4, 6))
v, ix = F.max_pool2d(pi.v.double(), 2, return_indices=True)
emit("max_pool2d_with_indices", "values_int32", [pi], out(v, "int32"), [2, 0, 0, 0, 1])
emit("max_pool2d_with_indices", "indices_int32", [pi], out(ix, "int32"), [2, 0, 0, 0, 1])
p3 = f32((2, 8, 9))  # 3-d input: one plane per leading index
v, ix = F.max_pool2d(p3.v.double(), 3, 2, return_indices=True)
emit("max_pool2d_with_indices", "indices_3d", [p3], out(ix, "int32"), [3, 2, 0, 0, 1])
# (name, kernel, stride, padding, output_size, the pooled input's spatial size)
UNPOOLS = [("k2", 2, None, 0, None, (6, 4)), ("k3_s2_p1", 3, 2, 1, None, (7, 7)), ("k2_out", 2, None, 0, (7, 7), (7, 7)),
           ("k3_s2_out", 3, 2, 0, (8, 9), (8, 9))]
for name, k, s_, p, osz, insz in UNPOOLS:
    src = f32((1, 2) + insz)
    v, ix = F.max_pool2d(src.v.double(), k, s_, p, return_indices=True)
    vals = T(v, F32)
    idx = T(ix, "int32")
    r = F.max_unpool2d(vals.v.double(), ix, k, s_, p, output_size=osz)
    emit("max_unpool2d", name, [vals, idx], out(r, F32), [k, s_ or 0, p] + (list(osz) if osz else []))

# ---------- attention with grouped heads, BCE with pos_weight ----------


def sdpa_ref(q, k, v, attn_mask=None, is_causal=False):
    rep = q.shape[-3] // k.shape[-3]
    k, v = k.repeat_interleave(rep, -3), v.repeat_interleave(q.shape[-3] // v.shape[-3], -3)
    s_ = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if is_causal:
        attn_mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    if attn_mask is not None:
        s_ = s_.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else s_ + attn_mask
    return torch.softmax(s_, -1) @ v


q, k_, v_ = f32((2, 4, 3, 5)), f32((2, 2, 6, 5)), f32((2, 2, 6, 3))
emit("sdpa_gqa", "plain", [q, k_, v_], out(sdpa_ref(d(q), d(k_), d(v_)), F32))
qc, kc, vc = f32((1, 6, 4, 4)), f32((1, 3, 4, 4)), f32((1, 3, 4, 2))
emit("sdpa_gqa", "causal", [qc, kc, vc], out(sdpa_ref(d(qc), d(kc), d(vc), is_causal=True), F32))
bm = bools((3, 6))
bm.v[:, 0] = True
emit("sdpa_gqa", "bool_mask", [q, k_, v_, bm], out(sdpa_ref(d(q), d(k_), d(v_), attn_mask=bm.v), F32))
q1, k1, v1 = f32((4, 3, 5)), f32((1, 6, 5)), f32((1, 6, 5))  # 3-d: heads first, one kv head
emit("sdpa_gqa", "one_kv_head", [q1, k1, v1], out(sdpa_ref(d(q1), d(k1), d(v1)), F32))
RED = {"none": 0, "mean": 1, "sum": 2}
bl, by, pw = f32((3, 4), -8, 8), f32((3, 4), 0, 1), f32((4,), 0.2, 3)
for red in ("mean", "sum", "none"):
    emit("bce_logits_pos_weight", red, [bl, by, pw],
         out(F.binary_cross_entropy_with_logits(d(bl), d(by), pos_weight=d(pw), reduction=red), F32), [RED[red]])
pw2 = f32((3, 1), 0.2, 3)
emit("bce_logits_pos_weight", "column", [bl, by, pw2], out(F.binary_cross_entropy_with_logits(d(bl), d(by), pos_weight=d(pw2)), F32), [1])
blx = T(np.array([[-100.0, 100.0, 0.0, 30.0]]), F32)
bly = T(np.array([[1.0, 0.0, 0.5, 1.0]]), F32)
emit("bce_logits_pos_weight", "extreme", [blx, bly, T(np.array([2.0, 2.0, 2.0, 2.0]), F32)],
     out(F.binary_cross_entropy_with_logits(d(blx), d(bly), pos_weight=torch.full((4,), 2.0, dtype=torch.float64), reduction="none"), F32), [0])

# ---------- newton_schulz (tinygrad's, for the Muon optimizer) ----------


def newton_schulz_ref(x, steps, params, eps=1e-7):
    if x.shape[-2] > x.shape[-1]:
        return newton_schulz_ref(x.transpose(-2, -1), steps, params, eps).transpose(-2, -1)
    G = x / (x.square().sum((-2, -1), keepdim=True).sqrt() + eps)
    for _ in range(steps):
        A, term, nxt = G @ G.transpose(-2, -1), G, params[0] * G
        for p in params[1:]:
            term = A @ term
            nxt = nxt + p * term
        G = nxt
    return G


NS = {"muon": ((4, 6), 3, (3.4445, -4.7750, 2.0315)), "tall": ((6, 4), 2, (1.5, -0.5)), "batched": ((2, 3, 3), 1, (1.5, -0.5)),
      "zero_steps": ((3, 5), 0, (1.0,))}
for name, (shape, steps, params) in NS.items():
    t = f32(shape)
    emit("newton_schulz", name, [t], out(newton_schulz_ref(d(t), steps, params), F32), [steps] + list(params))

# ---------- more edge shapes ----------
emit("masked_select_sized", "empty", [T(np.zeros((0, 3)), F32), T(np.zeros((0, 3), dtype=bool), "bool")],
     out(torch.full((2,), 4.0), F32), [2, 4.0])
emit("isclose", "0d", [T(np.array(1.0), F32), T(np.array(1.0 + 1e-6), F32)],
     out(torch.isclose(torch.tensor(1.0, dtype=torch.float64), torch.tensor(np.float32(1.0 + 1e-6), dtype=torch.float64)), "bool"),
     [1e-5, 1e-8, 0])
emit("fmod", "empty", [T(np.zeros((0, 2)), F32)], out(torch.zeros((0, 2)), F32), [2.0])

# ---------- gradients ----------
g.grad("log10", "float32", torch.log10)
g.grad("copysign", "float32", lambda a, b: torch.copysign(a, b.detach()))
g.grad("copysign", "broadcast", lambda a, b: torch.copysign(a, b.detach()))
g.grad("copysign", "scalar", lambda a: torch.copysign(a, torch.tensor(-2.0, dtype=torch.float64)))
g.grad("fmod", "float32", torch.fmod)
g.grad("fmod", "scalar", lambda a: torch.fmod(a, 2.5))
g.grad("logaddexp", "float32", torch.logaddexp)
g.grad("logaddexp", "broadcast", torch.logaddexp)
g.grad("softmin", "last", lambda x: F.softmin(x, -1))
g.grad("softmin", "axis0", lambda x: F.softmin(x, 0))
for name, (p, dim) in NORMS.items():
    if p != 0:
        g.grad("normalize", name, lambda x, p=p, dim=dim: F.normalize(x, p=p, dim=dim))
g.grad("normalize", "zero_row_eps", lambda x: F.normalize(x, dim=1, eps=0.5))
for off in (0, 1, -1, 3):
    g.grad("diagonal", f"2d_off{off}".replace("-", "m"), lambda x, off=off: torch.diagonal(x, off))
for off, d1, d2 in ((0, 1, 2), (-1, 0, 2), (1, -1, 0), (2, 2, 1)):
    g.grad("diagonal", f"3d_{off}_{d1}_{d2}".replace("-", "m"), lambda x, a=(off, d1, d2): torch.diagonal(x, *a))
for off in (0, 2, -1):
    g.grad("diag", f"1d_off{off}".replace("-", "m"), lambda x, off=off: torch.diag(x, off))
for off in (0, 1, -2):
    g.grad("diag", f"2d_off{off}".replace("-", "m"), lambda x, off=off: torch.diag(x, off))
for name, (t, dim, size, step) in UNFOLDS.items():
    if size > 0:
        g.grad("unfold", name, lambda x, a=(dim, size, step): x.unfold(*a))
g.grad("reshape_keep", "middle", lambda x: x.reshape(4, 3, 2))
g.grad("shrink_to", "keep", lambda x: x[:, :2, :3])
g.grad("pad_to", "keep", lambda x: F.pad(x, (0, 2, 0, 0, 0, 1)))
for name, (shape, formula, sizes, ref) in REARRANGES.items():
    g.grad("rearrange", name, ref)
for mode in ("reflect", "replicate", "circular"):
    for name in PADS:
        p = [float(v) for v in g.out_lines[[i for i, l in enumerate(g.out_lines) if l == f"case pad_negative {mode}_{name}"][0] + 1].split()[1:]]
        g.grad("pad_negative", f"{mode}_{name}", lambda x, p=tuple(int(v) for v in p), mode=mode: F.pad(x, p, mode=mode))
for k, formula in enumerate(ELL):
    g.grad("einsum_ellipsis", f"f{k}", lambda *xs, formula=formula: torch.einsum(formula, *xs))
for size in (12, 3):
    g.grad("masked_select_sized", f"s{size}", lambda x, m, size=size: padded_rows(torch.masked_select(x, m), size, -2.5 if size == 12 else 0.0))
g.grad("masked_select_sized", "broadcast", lambda x, m: padded_rows(torch.masked_select(x, m), 8, 9.0))
for red, sred in (("add", "sum"), ("multiply", "prod")):
    g.grad("scatter_reduce_arg", f"{red}_tensor", lambda x, i, s, sred=sred: x.scatter_reduce(0, i, s, sred))
    g.grad("scatter_reduce_arg", f"{red}_value", lambda x, i, sred=sred: x.scatter_reduce(0, i, torch.full(i.shape, 1.5, dtype=x.dtype), sred))
for name, k, s_, p, ceil, dil in POOLS:
    g.grad("max_pool2d_with_indices", f"values_{name}", lambda x, a=(k, s_, p, dil, ceil): F.max_pool2d(x, *a))
for name, k, s_, p, osz, _ in UNPOOLS:
    g.grad("max_unpool2d", name, lambda v, i, a=(k, s_, p), osz=osz: F.max_unpool2d(v, i.long(), *a, output_size=osz))
g.grad("sdpa_gqa", "plain", sdpa_ref)
g.grad("sdpa_gqa", "causal", lambda q, k, v: sdpa_ref(q, k, v, is_causal=True))
g.grad("sdpa_gqa", "bool_mask", lambda q, k, v, m: sdpa_ref(q, k, v, attn_mask=m))
g.grad("sdpa_gqa", "one_kv_head", sdpa_ref)


def bce_pw(x, y, w, red="mean"):  # PyTorch's formula (its own op does not differentiate pos_weight)
    loss = -(w * y * F.logsigmoid(x) + (1 - y) * F.logsigmoid(-x))
    return loss.mean() if red == "mean" else loss.sum() if red == "sum" else loss


for red in ("mean", "sum", "none"):
    g.grad("bce_logits_pos_weight", red, lambda x, y, w, red=red: bce_pw(x, y, w, red))
g.grad("bce_logits_pos_weight", "column", bce_pw)
for name, (shape, steps, params) in NS.items():
    g.grad("newton_schulz", name, lambda x, a=(steps, params): newton_schulz_ref(x, *a))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "methods.txt")
with open(path, "w") as fh:
    fh.write("# generated by tools/gen_method_goldens.py (PyTorch %s); do not edit\n" % torch.__version__)
    fh.write("\n".join(g.out_lines) + "\n")
print(f"wrote {sum(1 for l in g.out_lines if l.startswith('case'))} cases to {os.path.normpath(path)}")
