#!/usr/bin/env python3
"""numpy's own .npy files, to check tinygrad.cpp's load_npy and save_npy against.

  npy_numpy.py write DIR          writes the reference files (every dtype numpy and tinygrad.cpp share, 0-d, empty,
                                  Fortran order, big-endian, format version 2.0) with numpy
  npy_numpy.py check DIR OURS     exits 1 unless every DIR/NAME.npy equals OURS/NAME.npy (written by save_npy from
                                  what load_npy read): same shape, same values bit for bit, numpy's dtype in
                                  native order
Regenerate the goldens with:
  /usr/bin/python3 tools/npy_numpy.py write tests/golden/npy
"""
import os
import sys

import numpy as np


def reference():
    rng = np.random.RandomState(99)
    out = {}
    for dt in ("b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"):
        d = np.dtype(dt)
        if d.kind == "b":
            v = rng.rand(2, 3) > 0.5
        elif d.kind in "iu":
            info = np.iinfo(d)
            v = rng.randint(max(info.min, -2**62), min(int(info.max), 2**62), size=(2, 3)).astype(d)
            v.flat[0], v.flat[-1] = info.min, info.max
        else:
            v = (rng.randn(2, 3) * 100).astype(d)
            v.flat[:3] = [np.inf, -0.0, np.nan]
        out["every_" + dt] = v
    # the layouts the C++ test also checks value by value (aranges)
    out["fortran_f8"] = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    out["big_endian_i4"] = np.arange(-3, 3, dtype=">i4").reshape(2, 3)
    out["scalar_f4"] = np.array(1.5, np.float32)
    out["empty_f4"] = np.zeros((0, 3), np.float32)
    return out


def write(folder):
    os.makedirs(folder, exist_ok=True)
    for name, v in reference().items():
        np.save(os.path.join(folder, name + ".npy"), v)
    with open(os.path.join(folder, "version2_u2.npy"), "wb") as f:  # the 4-byte header length
        np.lib.format.write_array(f, np.arange(12, dtype=np.uint16).reshape(3, 4), version=(2, 0))


def check(folder, ours):
    bad = 0
    for name in sorted(os.listdir(folder)):
        want = np.load(os.path.join(folder, name))
        got = np.load(os.path.join(ours, name))
        same = (got.shape == want.shape and got.dtype == want.dtype.newbyteorder("=") and got.flags.c_contiguous
                and np.ascontiguousarray(want).astype(got.dtype).tobytes() == got.tobytes())
        if not same:
            print(f"{name}: numpy reads {got.dtype} {got.shape}, want {want.dtype} {want.shape}")
            bad += 1
    print(f"{len(os.listdir(folder)) - bad} of {len(os.listdir(folder))} files read back by numpy as written")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
