# The 8-bit floats (tinygrad's dtypes.fp8e4m3, fp8e5m2 and their FNUZ variants) against their definition: OCP's 8-bit
# float formats and the FNUZ variants, decoded and rounded here by brute force over the 256 codes.
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.dtype import float_to_fp8, fp8_to_float, least_upper_dtype, truncate, DTYPES_DICT, _to_np_dtype

# (exponent bits, mantissa bits, bias, fnuz, has infinities)
FORMATS = {"fp8e4m3": (4, 3, 7, False, False), "fp8e5m2": (5, 2, 15, False, True),
           "fp8e4m3fnuz": (4, 3, 8, True, False), "fp8e5m2fnuz": (5, 2, 16, True, False)}

def ref_value(code: int, name: str) -> float:
  eb, mb, bias, fnuz, has_inf = FORMATS[name]
  sign, e, m = code >> 7, (code >> mb) & ((1 << eb) - 1), code & ((1 << mb) - 1)
  if fnuz and code == 0x80: return math.nan
  if not fnuz and has_inf and e == (1 << eb) - 1: return math.nan if m else (-math.inf if sign else math.inf)
  if not fnuz and not has_inf and code & 0x7f == 0x7f: return math.nan
  v = math.ldexp(m, 1 - bias - mb) if e == 0 else math.ldexp(m + (1 << mb), e - bias - mb)
  return -v if sign else v

def ref_code(x: float, name: str) -> int:
  """The nearest finite value's code, ties to the even code, saturating; -0 where the format has one."""
  fnuz = FORMATS[name][3]
  top = max(ref_value(c, name) for c in range(128) if math.isfinite(ref_value(c, name)))
  if abs(x) > top: x = math.copysign(top, x)  # saturates
  best = None
  for c in range(256):
    v = ref_value(c, name)
    if not math.isfinite(v) or (v != 0 and math.copysign(1, v) != math.copysign(1, x)): continue
    d = abs(v - x)
    if best is None or d < best[0] or (d == best[0] and c % 2 == 0 and best[1] % 2 == 1): best = (d, c)
  c = best[1]
  if c & 0x7f == 0: c = 0x80 if not fnuz and math.copysign(1, x) < 0 else 0
  return c

def test_dtypes_and_names():
  assert dtypes.fp8s == (dtypes.fp8e4m3, dtypes.fp8e5m2, dtypes.fp8e4m3fnuz, dtypes.fp8e5m2fnuz)
  assert dtypes.fp8_ocp == (dtypes.fp8e4m3, dtypes.fp8e5m2) and dtypes.fp8_fnuz == (dtypes.fp8e4m3fnuz, dtypes.fp8e5m2fnuz)
  for dt in dtypes.fp8s:
    assert dt.itemsize == 1 and dtypes.is_float(dt) and dt in dtypes.floats and DTYPES_DICT[repr(dt)[7:]] is dt
    assert _to_np_dtype(dt) == np.float32
  assert dtypes.fp8e4m3.name == "float8_e4m3" and repr(dtypes.fp8e5m2fnuz) == "dtypes.fp8e5m2fnuz"
  assert dtypes.finfo(dtypes.fp8e5m2) == (5, 2)

def test_promotion_as_tinygrad():
  assert least_upper_dtype(dtypes.int8, dtypes.fp8e4m3) == dtypes.fp8e4m3
  assert least_upper_dtype(dtypes.fp8e4m3, dtypes.fp8e5m2) == dtypes.half
  assert least_upper_dtype(dtypes.fp8e5m2, dtypes.bfloat16) == dtypes.bfloat16
  # the widest ints meet the floats at tinygrad's weak float, a tensor's default float
  assert least_upper_dtype(dtypes.int8, dtypes.uint64) == dtypes.float32
  assert (Tensor([1], dtype=dtypes.int64) + Tensor([1], dtype=dtypes.uint64)).dtype == dtypes.float32

@pytest.mark.parametrize("name", list(FORMATS))
def test_conversions_match_the_definition(name):
  dt = getattr(dtypes, name)
  for c in range(256):
    want, got = ref_value(c, name), fp8_to_float(c, dt)
    assert (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want)), (name, c)
  finite = sorted({ref_value(c, name) for c in range(256) if math.isfinite(ref_value(c, name))})
  xs = [0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 0.3, -1 / 3, finite[-1] * 1.07]
  for a, b in zip(finite, finite[1:]): xs += [a, (a + b) / 2, math.nextafter((a + b) / 2, a), math.nextafter((a + b) / 2, b)]
  for x in xs: assert float_to_fp8(x, dt) == ref_code(x, name), (name, x)
  assert truncate[dt](0.3) == ref_value(ref_code(0.3, name), name)

@pytest.mark.parametrize("name", list(FORMATS))
def test_tensors_store_and_compute_rounded(name):
  dt = getattr(dtypes, name)
  q = lambda v: ref_value(ref_code(v, name), name)
  xs = [0.0, 0.3, -1.7, 3.14159, 100.0, 448.0, 1e6, -2e-5, 0.0625, 5.5, -240.0]
  ys = [1.0, 2.5, -0.3, -1.7, 0.01, 30.0, 2.0, 0.5, 0.0625, -5.5, 1.1]
  t = Tensor(xs, dtype=dt)
  assert t.dtype == dt and t.tolist() == [q(x) for x in xs] and t.numpy().dtype == np.float32
  cast = Tensor(xs).cast(dt)  # rounded in a kernel, from float32
  assert cast.bitcast(dtypes.uint8).tolist() == [ref_code(float(np.float32(x)), name) for x in xs]
  u = Tensor(ys, dtype=dt)
  assert (t + u).tolist() == [q(q(a) + q(b)) for a, b in zip(xs, ys)]
  assert (t * u).tolist() == [q(q(a) * q(b)) for a, b in zip(xs, ys)]
  s = Tensor([0.25 * i for i in range(1, 17)], dtype=dt).sum()
  assert s.dtype == dt and s.item() == q(34.0)  # accumulated in float32, rounded once
  # a matmul's products are exact and summed in float32, then rounded once (as float16's)
  a, b = np.array([[0.5, 1.5, -2.0], [3.0, 0.25, 1.0]]), np.array([[1.0, -0.5], [2.0, 0.75], [0.125, 4.0]])
  got = (Tensor(a.tolist(), dtype=dt) @ Tensor(b.tolist(), dtype=dt)).tolist()
  want = [[q(sum(a[i, k] * b[k, j] for k in range(3))) for j in range(2)] for i in range(2)]
  assert got == want

def test_safetensors_round_trip(tmp_path):
  from tinygrad.nn.state import safe_save, safe_load
  path = str(tmp_path / "fp8.safetensors")
  t = Tensor([0.5, -3.0, 448.0], dtype=dtypes.fp8e4m3)
  safe_save({"t": t}, path)
  back = safe_load(path)["t"]
  assert back.dtype == dtypes.fp8e4m3 and back.tolist() == [0.5, -3.0, 448.0]
  assert b'"F8_E4M3"' in open(path, "rb").read(200)
