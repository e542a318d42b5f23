#!/usr/bin/python3
"""Golden values for the Tensor primitives, computed by PyTorch (numpy for the unsigned dtypes torch lacks).

Writes tests/golden/ops.txt, read by tests/ops/test_primitives.cpp, so the tests need no Python. Needs Debian's
python3-torch and python3-numpy (apt-get install python3-torch): run /usr/bin/python3 tools/gen_op_goldens.py

Format, one item per line:
  case <op> <variant>
  args <ints...>                      op arguments (shapes, axes, pads), possibly none
  in <dtype> <ndim> <dims...> : <values...>
  out <dtype> <ndim> <dims...> : <values...>
16-bit floats follow tinygrad.cpp's rule: computed in float32, rounded to the 16-bit format after each op.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from golden_common import *  # noqa: F401,F403 (T, values, emit, result, rng, dtype lists)


# ---------- binary ops ----------
BIN = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "maximum": lambda a, b: torch.maximum(a, b) if isinstance(a, torch.Tensor) else np.maximum(a, b),
    "lt": lambda a, b: a < b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b, "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "idiv": lambda a, b: torch.div(a, b, rounding_mode="trunc") if isinstance(a, torch.Tensor) else np.trunc(a / b).astype(a.dtype),
    "mod": lambda a, b: torch.remainder(a, b) if isinstance(a, torch.Tensor) else np.mod(a, b),
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b,
}
COMPARE = {"lt", "gt", "le", "ge", "eq", "ne"}
SHAPES = [((3, 4), (3, 4), "same"), ((3, 1), (1, 4), "broadcast"), ((), (2, 3), "scalar"), ((0, 3), (1, 3), "empty"),
          ((), (), "0d")]


def dtypes_for(op):
    if op in ("add", "mul", "maximum", "eq", "ne", "lt", "gt", "le", "ge"):
        return FLOATS + SIGNED + UNSIGNED + ["bool"]
    if op == "sub":
        return FLOATS + SIGNED + UNSIGNED
    if op == "idiv":
        return SIGNED + UNSIGNED
    if op == "mod":
        return SIGNED + UNSIGNED + ["float32", "float64"]
    if op in ("and", "or", "xor"):
        return SIGNED + UNSIGNED + ["bool"]
    return ["int8", "int32", "int64", "uint8", "uint32"]  # shifts


for op, f in BIN.items():
    for dt in dtypes_for(op):
        for sa, sb, name in SHAPES:
            if name != "same" and dt not in ("float32", "int32", "bool", "uint8"):
                continue  # every dtype on one shape; every shape on a few dtypes
            kind = "positive" if op in ("idiv", "mod") else "shift" if op in ("shl", "shr") else "any"
            a = T(values(sa, dt, "any" if op not in ("shl", "shr") else "positive"), dt)
            b = T(values(sb, dt, kind), dt)
            if op in ("idiv", "mod") and dt in SIGNED + FLOATS:  # negative divisors too
                b = T(b.numpy() * np.where(rng.integers(0, 2, sb) == 1, 1, -1), dt)
            r = f(a.compute(), b.compute())
            emit(op, f"{dt}_{name}", [a, b], result(r, "bool" if op in COMPARE else dt))

# special float values through the ops that care about them
special = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0])
for op in ("add", "mul", "maximum", "lt", "eq", "ne", "le", "ge"):
    a = T(special, "float32")
    b = T(np.array([np.nan, 0.0, -np.inf, -2.0, 1.0, -np.inf, 1.0, np.nan]), "float32")
    emit(op, "float32_special", [a, b], result(BIN[op](a.compute(), b.compute()), "bool" if op in COMPARE else "float32"))

# true division: ints divide as float32
for dt in ("float32", "float16", "bfloat16", "float64", "int32"):
    a, b = T(values((3, 4), dt), dt), T(values((3, 4), dt, "positive"), dt)
    r = a.compute().to(torch.float32) / b.compute().to(torch.float32) if dt == "int32" else a.compute() / b.compute()
    emit("div", dt, [a, b], result(r, "float32" if dt == "int32" else dt))

# ---------- unary ops ----------
UNARY = {"neg": lambda x: -x, "exp2": torch.exp2, "log2": torch.log2, "sin": torch.sin, "sqrt": torch.sqrt,
         "reciprocal": torch.reciprocal}
for op, f in UNARY.items():
    dts = FLOATS + (["int8", "int32", "int64"] if op == "neg" else ["int32"])
    for dt in dts:
        x = T(values((2, 5), dt, "positive" if op in ("log2", "sqrt") else "any"), dt)
        if op == "neg":
            emit(op, dt, [x], result(f(x.compute()), dt))
        else:  # ints compute in float32
            emit(op, dt, [x], result(f(x.compute().to(torch.float32) if dt == "int32" else x.compute()), "float32" if dt == "int32" else dt))
    if op != "neg":
        x = T(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-30, 100.0]), "float32")
        emit(op, "float32_special", [x], result(f(x.compute()), "float32"))
for dt in ("bool", "int32", "float32"):
    x = T(values((2, 3), dt), dt)
    emit("logical_not", dt, [x], result(x.compute() == 0, "bool"))

# ---------- casts and bitcasts ----------
CAST_SRC = {"float32": [1.5, -2.75, 0.0, 100.25, -0.5, 65504.0, 1e-5, 3.14159], "int32": [1, -2, 0, 300, -129, 65535, 7, -1],
            "bool": [1, 0, 1, 1, 0, 0, 1, 0], "float16": [1.5, -2.75, 0.0, 100.25, -0.5, 2048.0, 0.0001, 3.14],
            "uint8": [0, 1, 2, 128, 200, 255, 7, 9]}
for src, vals in CAST_SRC.items():
    x = T(np.array(vals, dtype=np.float64).reshape(2, 4), src)
    for dst in FLOATS + SIGNED + UNSIGNED + ["bool"]:
        if dst == src:
            continue
        xv = x.numpy().astype(np.float64)
        if dst in UNSIGNED + SIGNED and src in FLOATS:
            if (xv < 0).any() and dst in UNSIGNED:
                continue  # negative float to unsigned is undefined in C
            info = np.iinfo(NUMPY_ONLY.get(dst, None) or getattr(np, dst))
            if (np.trunc(xv) > info.max).any() or (np.trunc(xv) < info.min).any():
                continue  # out of range: undefined in C
        if dst == "bool":
            r = T(xv != 0, "bool")
        elif src in FLOATS and dst not in FLOATS:
            r = T(np.trunc(xv).astype(np.int64), dst)
        elif dst in NUMPY_ONLY or src in NUMPY_ONLY:
            r = T(x.numpy().astype(np.int64) if src not in FLOATS else xv, dst)
        else:
            r = T(x.v.to(TORCH[dst]) if src not in ("float16", "bfloat16") or dst in FLOATS else x.v.float().to(TORCH[dst]), dst)
        emit("cast", f"{src}_to_{dst}", [x], r, [])
BITCASTS = [("float32", "int32"), ("int32", "float32"), ("float32", "uint32"), ("float16", "int16"), ("int16", "float16"),
            ("bfloat16", "int16"), ("int64", "float64"), ("uint8", "int8"), ("int8", "uint8")]
for src, dst in BITCASTS:
    x = T(values((2, 3), src), src)
    if src in NUMPY_ONLY or dst in NUMPY_ONLY:
        r = T(x.numpy().view(NUMPY_ONLY.get(dst) or getattr(np, dst)), dst)
    else:
        r = T(x.v.view(TORCH[dst]), dst)
    emit("bitcast", f"{src}_to_{dst}", [x], r)

# ---------- where ----------
for dt in ("float32", "int32", "bool", "float16"):
    c = T(values((3, 1), "bool"), "bool")
    a, b = T(values((3, 4), dt), dt), T(values((1, 4), dt), dt)
    emit("where", dt, [c, a, b], result(torch.where(c.v, a.compute(), b.compute()), dt))

# ---------- reductions ----------
RED_SHAPES = [((3, 4, 5), [1], "axis1"), ((3, 4, 5), [0, 2], "axes02"), ((3, 4, 5), [-1], "neg_axis"),
              ((3, 4, 5), [0, 1, 2], "all"), ((), [], "0d"), ((0, 4), [0], "empty_axis"), ((4, 0), [0], "empty_rest")]
ACC = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}
for op in ("sum", "max"):
    for dt in (["float32", "float16", "bfloat16", "float64", "int8", "int32", "int64", "uint8", "bool"]):
        for shape, axes, name in RED_SHAPES:
            if name not in ("axis1",) and dt not in ("float32", "int32"):
                continue
            if op == "max" and name == "empty_axis":
                continue  # an error: tests/errors covers it
            for keepdim in (False, True):
                if keepdim and name not in ("axes02", "axis1"):
                    continue
                x = T(values(shape, dt), dt)
                dims = [a % max(len(shape), 1) for a in axes] if shape else []
                v = x.compute()
                if op == "sum":
                    odt = ACC.get(dt, dt)
                    r = v.to(torch.float64 if dt in FLOATS else torch.int64)
                    r = r.sum(dim=dims, keepdim=keepdim) if dims else (r.sum() if shape else r)
                    if keepdim is False and not dims and shape:
                        r = r.reshape(())
                else:
                    odt = dt
                    r = v.to(torch.float64 if dt in FLOATS else torch.int64)
                    r = r.amax(dim=dims, keepdim=keepdim) if dims and shape else r
                    if dt == "bool":
                        r = r.to(torch.bool)
                if dt in ("float16", "bfloat16") or (op == "sum" and dt == "float32"):
                    r = r.to(torch.float32)
                emit(op, f"{dt}_{name}{'_keepdim' if keepdim else ''}", [x], T(r, odt), [int(keepdim)] + axes)

# ---------- movement ----------
x = T(values((2, 3, 4), "float32"), "float32")
xv = x.v
emit("reshape", "to_4_6", [x], T(xv.reshape(4, 6), "float32"), [4, 6])
emit("reshape", "infer", [x], T(xv.reshape(-1, 2), "float32"), [-1, 2])
emit("reshape", "to_0d", [T(np.array([7.5]), "float32")], T(torch.tensor(7.5), "float32"), [])
emit("permute", "201", [x], T(xv.permute(2, 0, 1), "float32"), [2, 0, 1])
emit("permute", "negative", [x], T(xv.permute(2, 1, 0), "float32"), [-1, 1, 0])
y = T(values((3, 1), "int32"), "int32")
emit("expand", "3_1_to_2_3_5", [y], T(y.v.expand(2, 3, 5), "int32"), [2, 3, 5])
emit("expand", "keep", [y], T(y.v.expand(3, 4), "int32"), [-1, 4])
for dt in ("float32", "int32", "bool", "float16"):
    z = T(values((2, 3), dt), dt)
    r = torch.nn.functional.pad(z.compute().to(torch.float64), (0, 1, 1, 2)).to(z.compute().dtype)
    emit("pad", f"{dt}_zero", [z], T(r, dt), [1, 2, 0, 1, 0])  # pads (before, after) per axis, then the value
z = T(values((2, 3), "float32"), "float32")
emit("pad", "value", [z], T(torch.nn.functional.pad(z.v, (2, 0, 0, 1), value=-1.5), "float32"), [0, 1, 2, 0, -1.5])
emit("pad", "negative", [z], T(torch.nn.functional.pad(z.v, (-1, 1, 0, 0)), "float32"), [0, 0, -1, 1, 0])
emit("shrink", "2d", [x], T(xv[0:2, 1:3, 2:4], "float32"), [0, 2, 1, 3, 2, 4])
emit("flip", "axes02", [x], T(torch.flip(xv, [0, 2]), "float32"), [0, 2])
emit("flip", "negative", [x], T(torch.flip(xv, [1]), "float32"), [-2])

# ---------- fused expressions: several primitives in one kernel ----------
a, b = T(values((4, 5), "float32"), "float32"), T(values((5,), "float32"), "float32")
m1, m2 = T(values((4, 5), "float32"), "float32"), T(values((5, 3), "float32"), "float32")
emit("matmul", "4x5_5x3", [m1, m2], T(m1.v.double() @ m2.v.double(), "float32"))
s = T(values((3, 6), "float32"), "float32")
emit("softmax", "axis1", [s], T(torch.softmax(s.v.double(), 1), "float32"))
emit("chain", "exp2_add_mul_sqrt", [a, b], T(torch.sqrt(torch.exp2(a.v) + b.v * 2.0 + 1.0), "float32"))

# ---------- printing: numpy's str() of the same values ----------
print_lines = []
PRINTS = [
    ("float32", np.array([[1.0, 2.0], [3.0, 4.0]])), ("float32", np.array([1.5, 2.25, -3.0])),
    ("float32", np.array([0.1, 10.0, 100.5])), ("float32", np.array([1e-5, 1.0])), ("float32", np.array([1e9, 1.5])),
    ("float32", np.array([np.nan, np.inf, -1.0])), ("float32", np.array(7.5)), ("float64", np.array([1 / 3, 2.0])),
    ("int32", np.array([[1, -20], [300, 4]])), ("bool", np.array([True, False, True])), ("uint8", np.array([0, 255])),
    ("float32", np.arange(24).reshape(2, 3, 4) / 4), ("float32", np.arange(2000, dtype=np.float64)),
    ("int64", np.arange(30) * 1000), ("float32", np.zeros((0, 3))), ("float32", np.array([[-2.0, 2.0, 2.0]])),
]
for dt, arr in PRINTS:
    t = T(arr, dt)
    text = str(t.numpy().astype(np.float32 if dt == "float32" else t.numpy().dtype))
    print_lines.append("in " + fmt(t))
    print_lines.append(f"expect {len(text.splitlines())}")
    print_lines.extend(text.splitlines())
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "print.txt"), "w") as fh:
    fh.write("# generated by tools/gen_op_goldens.py: numpy %s str() of each array; do not edit\n" % np.__version__)
    fh.write("\n".join(print_lines) + "\n")

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden", "ops.txt")
with open(path, "w") as fh:
    fh.write("# generated by tools/gen_op_goldens.py (PyTorch %s, numpy %s); do not edit\n" % (torch.__version__, np.__version__))
    fh.write("\n".join(out_lines) + "\n")
print(f"wrote {sum(1 for l in out_lines if l.startswith('case'))} cases to {os.path.normpath(path)}")
