#!/usr/bin/python3
"""Golden values for tg::nn layers and tg::optim optimizers, computed by PyTorch (numpy for what torch 1.13 lacks).

Writes tests/golden/nn.txt, read by tests/nn/test_nn.cpp. A layer case's inputs are x then the layer's tensors in
the order the test assigns them; its grad lines are PyTorch's gradients of sum(out * w) (golden_common.grad). An
optimizer case's inputs are the initial parameter and the gradients of 3 steps; its output is the parameter after
them. Needs Debian's python3-torch:
  /usr/bin/python3 tools/gen_nn_goldens.py
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_common as g  # noqa: E402
from golden_common import T, emit, rng  # noqa: E402

g.out_lines.clear()
g.cases.clear()
F32 = "float32"


def f32(shape, lo=-2.0, hi=2.0):
    return T(rng.uniform(lo, hi, shape), F32)


def out(v):
    return T(v.detach(), F32)


def layer(name, variant, ins, fn, args=()):
    """A layer case: fn(*inputs as float64) is the output; its gradients go in too."""
    emit(name, variant, ins, out(fn(*[t.v.double() if t.dt == F32 else t.v for t in ins])), args)
    g.grad(name, variant, fn)


x, w, b = f32((4, 5)), f32((3, 5)), f32((3,))
layer("Linear", "bias", [x, w, b], F.linear, [5, 3])
layer("Linear", "nobias", [x, w], F.linear, [5, 3])
xc, wc, bc = f32((2, 3, 7, 7)), f32((4, 3, 3, 3)), f32((4,))
layer("Conv2d", "s2p1", [xc, wc, bc], lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [3, 4, 3, 2, 1])
x1, w1 = f32((2, 2, 9)), f32((4, 2, 3))
layer("Conv1d", "plain", [x1, w1], lambda x, w: F.conv1d(x, w), [2, 4, 3])
xt, wt, bt = f32((1, 2, 4, 4)), f32((2, 3, 3, 3)), f32((3,))
layer("ConvTranspose2d", "s2", [xt, wt, bt], lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), [2, 3, 3, 2])
# BatchNorm, training: the output and the running statistics after one step (momentum 0.1, unbiased variance)
xb, gb, bb = f32((4, 3, 5, 5)), f32((3,), 0.5, 1.5), f32((3,))
layer("BatchNorm", "train", [xb, gb, bb],
      lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, momentum=0.1, eps=1e-5), [3])
rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
F.batch_norm(xb.v.double(), rm, rv, None, None, training=True, momentum=0.1, eps=1e-5)
emit("BatchNorm", "running_mean", [xb], out(rm), [3])
emit("BatchNorm", "running_var", [xb], out(rv), [3])
rmean, rvar = f32((3,)), f32((3,), 0.5, 2)
layer("BatchNorm", "eval", [xb, gb, bb, rmean, rvar],
      lambda x, w, b, m, v: (x - m[:, None, None]) / torch.sqrt(v[:, None, None] + 1e-5) * w[:, None, None] + b[:, None, None], [3])
xl, gl, bl = f32((2, 3, 4)), f32((3, 4)), f32((3, 4))
layer("LayerNorm", "last2", [xl, gl, bl], lambda x, w, b: F.layer_norm(x, (3, 4), w, b, 1e-5), [3, 4])
x2d, g2d, b2d = f32((2, 3, 2, 2)), f32((3,)), f32((3,))
layer("LayerNorm2d", "plain", [x2d, g2d, b2d],
      lambda x, w, b: F.layer_norm(x.permute(0, 2, 3, 1), (3,), w, b, 1e-5).permute(0, 3, 1, 2), [3])
xr, gr = f32((2, 3, 6)), f32((6,))
layer("RMSNorm", "plain", [xr, gr], lambda x, w: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w, [6])
xg, gg, bg = f32((2, 6, 3, 3)), f32((6,)), f32((6,))
layer("GroupNorm", "3groups", [xg, gg, bg], lambda x, w, b: F.group_norm(x, 3, w, b, 1e-5), [3, 6])
xi, gi, bi = f32((2, 3, 4, 4)), f32((3,)), f32((3,))
layer("InstanceNorm", "plain", [xi, gi, bi], lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-5), [3])
idx, we = T(np.array([[0, 3, 1], [4, 4, 2]]), "int32"), f32((5, 6))
layer("Embedding", "plain", [idx, we], lambda i, w: F.embedding(i.long(), w), [5, 6])
xs, h0, c0 = f32((3, 4)), f32((3, 5)), f32((3, 5))
wih, whh, bih, bhh = f32((20, 4), -0.4, 0.4), f32((20, 5), -0.4, 0.4), f32((20,)), f32((20,))
for k, part in enumerate(("h", "c")):
    layer("LSTMCell", part, [xs, h0, c0, wih, whh, bih, bhh],
          lambda x, h, c, a, bb_, d, e, k=k: torch.lstm_cell(x, (h, c), a, bb_, d, e)[k], [4, 5])


# ---------- optimizers: 3 steps from p0 with fixed gradients ----------
p0 = f32((3, 4))
grads = [f32((3, 4)) for _ in range(3)]


def run_torch(make):
    p = torch.nn.Parameter(p0.v.double().clone())
    opt = make([p])
    for gk in grads:
        opt.zero_grad()
        p.grad = gk.v.double().clone()
        opt.step()
    return p.detach()


TORCH_OPTS = {  # variant: (constructor, args as the test reads them)
    "sgd": (lambda ps: torch.optim.SGD(ps, lr=0.1), [0.1, 0, 0, 0]),
    "sgd_momentum": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), [0.1, 0.9, 0, 0]),
    "sgd_nesterov_wd": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01), [0.1, 0.9, 0.01, 1]),
    "adam": (lambda ps: torch.optim.Adam(ps, lr=0.01), [0.01, 0.9, 0.999, 1e-8]),
    "adam_betas": (lambda ps: torch.optim.Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6), [0.02, 0.8, 0.99, 1e-6]),
    "adamw": (lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1), [0.01, 0.9, 0.999, 1e-8, 0.1]),
}
for variant, (make, args) in TORCH_OPTS.items():
    emit("optim", variant, [p0] + grads, out(run_torch(make)), args)


def lamb_ref(lr=0.01, b1=0.9, b2=0.999, eps=1e-6, wd=0.01):
    """LAMB (You et al. 2019): Adam's bias-corrected step plus weight decay, scaled by |w| / |step|."""
    p, m, v = p0.v.double().numpy().copy(), 0.0, 0.0
    for t, gk in enumerate(grads, 1):
        gr = gk.v.double().numpy()
        m = b1 * m + (1 - b1) * gr
        v = b2 * v + (1 - b2) * gr * gr
        step = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * p
        wn, sn = np.linalg.norm(p), np.linalg.norm(step)
        p = p - lr * (wn / sn if wn > 0 and sn > 0 else 1.0) * step
    return torch.tensor(p)


def lars_ref(lr=0.1, momentum=0.9, wd=1e-4, tcoef=0.001):
    """LARS (You et al. 2017): the local lr tcoef * |w| / (|g| + wd |w|), momentum on lr-scaled updates."""
    p, buf = p0.v.double().numpy().copy(), 0.0
    for gk in grads:
        gr = gk.v.double().numpy()
        wn, gn = np.linalg.norm(p), np.linalg.norm(gr)
        trust = tcoef * wn / (gn + wd * wn) if wn > 0 and gn > 0 else 1.0
        buf = momentum * buf + lr * trust * (gr + wd * p)
        p = p - buf
    return torch.tensor(p)


def muon_ref(lr=0.02, momentum=0.95, steps=5, wd=0.0):
    """Muon (Jordan et al. 2024): nesterov momentum, the update orthogonalized by Newton-Schulz (quintic); weight
    decay decoupled (PyTorch's Muon: p *= 1 - lr * wd before the update is subtracted)."""
    a, b, c = 3.4445, -4.775, 2.0315
    p, buf = p0.v.double().numpy().copy(), 0.0
    for gk in grads:
        gr = gk.v.double().numpy()
        buf = momentum * buf + gr
        u = gr + momentum * buf
        tall = u.shape[0] > u.shape[1]
        x = u.T if tall else u
        x = x / (np.linalg.norm(x) + 1e-7)
        for _ in range(steps):
            A = x @ x.T
            x = a * x + (b * A + c * A @ A) @ x
        u = x.T if tall else x
        p = p * (1 - lr * wd) - lr * u * math.sqrt(max(1.0, u.shape[0] / u.shape[1]))
    return torch.tensor(p)


emit("optim", "lamb", [p0] + grads, out(lamb_ref()), [0.01, 0.9, 0.999, 1e-6, 0.01])
emit("optim", "lars", [p0] + grads, out(lars_ref()), [0.1, 0.9, 1e-4, 0.001])
emit("optim", "muon", [p0] + grads, out(muon_ref()), [0.02, 0.95, 5])
emit("optim", "muon_wd", [p0] + grads, out(muon_ref(wd=0.1)), [0.02, 0.95, 5, 0.1])

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "nn.txt")
with open(path, "w") as fh:
    fh.write("# generated by tools/gen_nn_goldens.py (PyTorch %s); do not edit\n" % torch.__version__)
    fh.write("\n".join(g.out_lines) + "\n")
print(f"wrote {sum(1 for l in g.out_lines if l.startswith('case'))} cases to {os.path.normpath(path)}")
