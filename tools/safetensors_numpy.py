#!/usr/bin/env python3
"""An independent safetensors reader and writer in numpy, to check tinygrad.cpp's against.

  safetensors_numpy.py write FILE.safetensors GOLDEN.txt   writes the reference tensors (every dtype, 0-d, empty,
                                                           extreme values) and their bytes in hex, one per line
  safetensors_numpy.py check FILE.safetensors              reads a file (written by tinygrad.cpp's safe_save) and
                                                           exits 1 unless it holds exactly the reference tensors

The writer makes choices our writer does not (tensors in reverse name order in the data, an unpadded header with
spaces and newlines), so that reading it exercises the format rather than our own habits.
Regenerate the goldens with:
  /usr/bin/python3 tools/safetensors_numpy.py write tests/golden/numpy.safetensors tests/golden/safetensors.txt
"""
import json
import struct
import sys

import numpy as np

CODES = {"BOOL": np.bool_, "I8": np.int8, "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "I32": np.int32,
         "U32": np.uint32, "I64": np.int64, "U64": np.uint64, "F16": np.float16, "BF16": None, "F32": np.float32,
         "F64": np.float64}
METADATA = {"format": "pt", "written by": "numpy \"reference\"\n"}


def bf16_bits(x):
  """float32 -> bfloat16 bits, rounded to nearest even (NaN stays NaN)."""
  b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
  r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
  return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def reference():
  rng = np.random.RandomState(1234)
  out = {}
  for code, dt in CODES.items():
    if code == "BOOL":
      out["bool.m"] = rng.rand(2, 3) > 0.5
    elif code == "BF16":
      vals = np.array([0.0, -0.0, 1.0, -2.5, 3.140625, 1e30, -1e-30, np.inf, -np.inf, np.nan, 65504.0, 0.1], np.float32)
      out["bf16.v"] = bf16_bits(vals).reshape(3, 4)  # stored as raw bits
    elif np.issubdtype(dt, np.integer):
      info = np.iinfo(dt)
      v = rng.randint(info.min, int(info.max) + 1, size=(2, 3), dtype=dt) if info.bits < 64 else \
          rng.randint(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(2, 3), dtype=np.int64).astype(dt)
      v.flat[0], v.flat[-1] = info.min, info.max
      out[code.lower() + ".m"] = v
    else:
      v = (rng.randn(2, 3) * 100).astype(dt)
      v.flat[:4] = [np.inf, -np.inf, -0.0, np.nan]
      out[code.lower() + ".m"] = v
  out["f32.scalar"] = np.array(2.5, np.float32)                 # 0-d
  out["f32.empty"] = np.zeros((0, 4), np.float32)               # empty
  out["i64.vector"] = np.arange(-5, 5, dtype=np.int64)          # 1-d
  out["f32.big"] = rng.randn(3, 5, 7).astype(np.float32)        # 3-d
  out["layer.0.weight"] = rng.randn(4, 3).astype(np.float32)    # a state-dict style name
  return out


def code_of(name, arr):
  if name.startswith("bf16"):
    return "BF16"
  return next(c for c, d in CODES.items() if d is not None and arr.dtype == np.dtype(d))


def write(path, golden):
  tensors = reference()
  header, blobs, offset = {"__metadata__": METADATA}, [], 0
  for name in sorted(tensors, reverse=True):
    raw = np.ascontiguousarray(tensors[name]).astype(tensors[name].dtype.newbyteorder("<")).tobytes()
    header[name] = {"dtype": code_of(name, tensors[name]), "shape": list(tensors[name].shape),
                    "data_offsets": [offset, offset + len(raw)]}
    blobs.append(raw)
    offset += len(raw)
  text = json.dumps(header, indent=1).encode()
  with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
  with open(golden, "w") as g:
    for name in sorted(tensors):
      arr = tensors[name]
      g.write("%s %s %s %s\n" % (name, code_of(name, arr), ",".join(map(str, arr.shape)) or "-",
                                 np.ascontiguousarray(arr).tobytes().hex() or "-"))


def read(path):
  with open(path, "rb") as f:
    data = f.read()
  (n,) = struct.unpack("<Q", data[:8])
  header = json.loads(data[8:8 + n])
  meta = header.pop("__metadata__", {})
  body = data[8 + n:]
  out = {}
  for name, info in header.items():
    b, e = info["data_offsets"]
    dt = np.uint16 if info["dtype"] == "BF16" else CODES[info["dtype"]]
    out[name] = (info["dtype"], np.frombuffer(body[b:e], dtype=np.dtype(dt).newbyteorder("<")).reshape(info["shape"]))
  return out, meta


def check(path):
  got, meta = read(path)
  want = reference()
  ok = meta == METADATA
  if not ok:
    print("metadata differs:", meta)
  if sorted(got) != sorted(want):
    print("names differ:", sorted(got), sorted(want))
    return 1
  for name, arr in want.items():
    code, g = got[name]
    if code != code_of(name, arr) or g.shape != arr.shape or g.tobytes() != np.ascontiguousarray(arr).tobytes():
      print("tensor %s differs: %s %s" % (name, code, g.shape))
      ok = False
  print("%s: %d tensors match the numpy reference" % (path, len(want)) if ok else "MISMATCH")
  return 0 if ok else 1


if __name__ == "__main__":
  if len(sys.argv) == 4 and sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3])
  elif len(sys.argv) == 3 and sys.argv[1] == "check":
    sys.exit(check(sys.argv[2]))
  else:
    print(__doc__)
    sys.exit(2)
