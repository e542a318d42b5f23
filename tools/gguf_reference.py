#!/usr/bin/env python3
"""ggml's tensor types (the ones GGUF files hold), quantized and dequantized with numpy, independently of the C++.

Each layout below is read from ggml's src/ggml-common.h (the block structs) and each dequantizer follows the
arithmetic of src/ggml-quants.c's dequantize_row_* step by step in float32 (same products, same order, no fused
multiply-add), so the C++ dequantization (src/state/gguf_quants.cpp) must match these values bit for bit. The
quantizers are simple (round to nearest, a plain scale/min choice for the K-quants): they make valid blocks, not
the best ones ggml would pick.

As a module (the GGUF writer of the tests imports it):
  quantize(type_name, float32_array) -> bytes        the blocks of that type, in order
  dequantize(type_name, data, n) -> float32 array    the n values those blocks hold

  gguf_reference.py tensors DIR   writes, per type, DIR/<TYPE>.raw.npy (the block bytes, uint8) and
                                  DIR/<TYPE>.want.npy (float32, this dequantizer's values) for 4 blocks of random
                                  normal values with zeros and large magnitudes, and DIR/<TYPE>.random.raw.npy /
                                  .random.want.npy for 4 blocks of random bytes (f16 scales forced finite)
  gguf_reference.py check DIR     exits 1 unless DIR holds exactly what `tensors` writes, or the quantizers'
                                  round trips are off (exit 77 = skipped where numpy is missing: the caller's job)
Regenerate the goldens with:
  /usr/bin/python3 tools/gguf_reference.py tensors tests/golden/gguf
"""
import os
import sys

import numpy as np

QK_K = 256  # elements in a K-quant super-block

# name: (ggml type id, elements per block, bytes per block)
TYPES = {
    "F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20), "Q5_0": (6, 32, 22),
    "Q5_1": (7, 32, 24), "Q8_0": (8, 32, 34), "Q2_K": (10, QK_K, 84), "Q3_K": (11, QK_K, 110),
    "Q4_K": (12, QK_K, 144), "Q5_K": (13, QK_K, 176), "Q6_K": (14, QK_K, 210), "I8": (24, 1, 1),
    "I16": (25, 1, 2), "I32": (26, 1, 4), "I64": (27, 1, 8), "F64": (28, 1, 8), "BF16": (30, 1, 2),
}
PLAIN = {"F32": "<f4", "F16": "<f2", "I8": "<i1", "I16": "<i2", "I32": "<i4", "I64": "<i8", "F64": "<f8"}
# byte offsets of the f16 fields of each block (forced finite in the random blocks)
F16_FIELDS = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "Q2_K": [80, 82],
              "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}

f32 = np.float32


# ---------------------------------------------------------------- helpers

def f16_at(blocks, off):
    """(nb, 1) float32: the little-endian f16 at byte `off` of each block"""
    return np.ascontiguousarray(blocks[:, off:off + 2]).view("<f2").astype(f32)


def put_f16(blocks, off, values):
    blocks[:, off:off + 2] = np.asarray(values, "<f2").reshape(-1, 1).view(np.uint8)


def bf16_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view("<f4")


def f32_to_bf16(x):
    """round to nearest even, as PyTorch and ggml's fp32_to_bf16 (NaN kept quiet)"""
    u = np.asarray(x, "<f4").view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, f32))
    return np.where(nan, ((u >> 16) | 64).astype(np.uint16), r)


def as_blocks(data, type_name, n):
    _, bs, ts = TYPES[type_name]
    if n % bs:
        raise ValueError(f"{type_name}: {n} values is not a whole number of {bs}-value blocks")
    raw = np.frombuffer(bytes(data), np.uint8)
    if raw.size != n // bs * ts:
        raise ValueError(f"{type_name}: {n} values need {n // bs * ts} bytes, got {raw.size}")
    return raw.reshape(n // bs, ts)


def safe_inv(x):
    x = np.asarray(x, f32)
    return np.where(x == 0, f32(0), f32(1) / np.where(x == 0, f32(1), x)).astype(f32)


def signed_absmax(x):
    """per row: the value of largest magnitude, with its sign (ggml's quantizers scale by it)"""
    i = np.argmax(np.abs(x), axis=-1)
    return np.take_along_axis(x, i[..., None], axis=-1)


def pack_k4_scales(ls, lm):
    """(nb, 8) 6-bit scales and mins -> (nb, 12) bytes, the inverse of ggml's get_scale_min_k4"""
    q = np.zeros((ls.shape[0], 12), np.uint8)
    q[:, 0:4] = (ls[:, 0:4] & 63) | ((ls[:, 4:8] >> 4) << 6)
    q[:, 4:8] = (lm[:, 0:4] & 63) | ((lm[:, 4:8] >> 4) << 6)
    q[:, 8:12] = (ls[:, 4:8] & 0xF) | ((lm[:, 4:8] & 0xF) << 4)
    return q


def k4_scales(sc):
    """(nb, 12) bytes -> (nb, 8) scales and (nb, 8) mins, 0..63 each (get_scale_min_k4 for j = 0..7)"""
    sc = sc.astype(np.int32)
    d = np.empty((sc.shape[0], 8), np.int32)
    m = np.empty((sc.shape[0], 8), np.int32)
    for j in range(8):
        if j < 4:
            d[:, j], m[:, j] = sc[:, j] & 63, sc[:, j + 4] & 63
        else:
            d[:, j] = (sc[:, j + 4] & 0xF) | ((sc[:, j - 4] >> 6) << 4)
            m[:, j] = (sc[:, j + 4] >> 4) | ((sc[:, j] >> 6) << 4)
    return d, m


# ---------------------------------------------------------------- dequantizers (ggml's dequantize_row_*)

def deq_q4_0(b):
    # d f16 | qs[16]: value j is the low nibble of qs[j], value j+16 its high nibble; (q - 8) * d
    d, qs = f16_at(b, 0), b[:, 2:18].astype(np.int32)
    q = np.concatenate([qs & 0xF, qs >> 4], axis=1) - 8
    return q.astype(f32) * d


def deq_q4_1(b):
    # d f16 | m f16 | qs[16]: q * d + m
    d, m, qs = f16_at(b, 0), f16_at(b, 2), b[:, 4:20].astype(np.int32)
    q = np.concatenate([qs & 0xF, qs >> 4], axis=1)
    return q.astype(f32) * d + m


def q5_values(qh_bytes, qs):
    # the fifth bit of value j is bit j of the little-endian uint32 qh
    qh = qh_bytes.astype(np.uint32)
    qh = qh[:, 0] | (qh[:, 1] << 8) | (qh[:, 2] << 16) | (qh[:, 3] << 24)
    bits = ((qh[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int32)
    qs = qs.astype(np.int32)
    return np.concatenate([qs & 0xF, qs >> 4], axis=1) | (bits << 4)


def deq_q5_0(b):
    # d f16 | qh[4] | qs[16]: (q - 16) * d
    d = f16_at(b, 0)
    return (q5_values(b[:, 2:6], b[:, 6:22]) - 16).astype(f32) * d


def deq_q5_1(b):
    # d f16 | m f16 | qh[4] | qs[16]: q * d + m
    d, m = f16_at(b, 0), f16_at(b, 2)
    return q5_values(b[:, 4:8], b[:, 8:24]).astype(f32) * d + m


def deq_q8_0(b):
    # d f16 | qs[32] int8: q * d
    return b[:, 2:34].view(np.int8).astype(f32) * f16_at(b, 0)


def deq_q2_k(b):
    # scales[16] | qs[64] | d f16 | dmin f16. Value 128h + 32j + 16g + l (h < 2, j < 4, g < 2, l < 16) is bits
    # 2j..2j+1 of qs[32h + 16g + l], in sub-block 8h + 2j + g whose byte holds the scale (low nibble) and the min
    # (high nibble): (d * scale) * q - (dmin * min)
    nb = b.shape[0]
    d, dmin = f16_at(b, 80), f16_at(b, 82)
    out = np.empty((nb, QK_K), f32)
    for h in range(2):
        for j in range(4):
            for g in range(2):
                sc = b[:, 8 * h + 2 * j + g].astype(np.int32)
                dl = d[:, 0] * (sc & 0xF).astype(f32)
                ml = dmin[:, 0] * (sc >> 4).astype(f32)
                q = (b[:, 16 + 32 * h + 16 * g:16 + 32 * h + 16 * g + 16].astype(np.int32) >> (2 * j)) & 3
                e = 128 * h + 32 * j + 16 * g
                out[:, e:e + 16] = dl[:, None] * q.astype(f32) - ml[:, None]
    return out


def q3_k_scales(sc):
    """(nb, 12) bytes -> (nb, 16) scales in -32..31: the low 4 bits of scale s are the low (s < 8) or high nibble of
    byte s % 8, its high 2 bits are bits 2(s // 4).. of byte 8 + s % 4 (ggml's kmask shuffle of three uint32s)"""
    sc = sc.astype(np.int32)
    out = np.empty((sc.shape[0], 16), np.int32)
    for s in range(16):
        low = (sc[:, s % 8] & 0xF) if s < 8 else (sc[:, s % 8] >> 4)
        high = (sc[:, 8 + s % 4] >> (2 * (s // 4))) & 3
        out[:, s] = (low | (high << 4)) - 32
    return out


def deq_q3_k(b):
    # hmask[32] | qs[64] | scales[12] | d f16. Value 128h + 32j + 16g + l is bits 2j..2j+1 of qs[32h + 16g + l],
    # minus 4 unless bit 4h + j of hmask[16g + l] is set, times d * scale[8h + 2j + g]
    nb = b.shape[0]
    d = f16_at(b, 108)
    scales = q3_k_scales(b[:, 96:108])
    out = np.empty((nb, QK_K), f32)
    for h in range(2):
        for j in range(4):
            for g in range(2):
                dl = d[:, 0] * scales[:, 8 * h + 2 * j + g].astype(f32)
                p = slice(16 * g, 16 * g + 16)
                q = (b[:, 32 + 32 * h:32 + 32 * h + 32][:, p].astype(np.int32) >> (2 * j)) & 3
                high = (b[:, 0:32][:, p].astype(np.int32) >> (4 * h + j)) & 1
                e = 128 * h + 32 * j + 16 * g
                out[:, e:e + 16] = dl[:, None] * (q - np.where(high == 1, 0, 4)).astype(f32)
    return out


def deq_q45_k(b, with_high):
    # Q4_K: d f16 | dmin f16 | scales[12] | qs[128]; Q5_K adds qh[32] before qs. Value 64c + 32g + l (c < 4,
    # g < 2, l < 32) is nibble g of qs[32c + l] (plus 16 if bit 2c + g of qh[l] is set), in sub-block 2c + g:
    # (d * scale) * q - (dmin * min)
    nb = b.shape[0]
    d, dmin = f16_at(b, 0), f16_at(b, 2)
    ls, lm = k4_scales(b[:, 4:16])
    qs = b[:, 48:176] if with_high else b[:, 16:144]
    out = np.empty((nb, QK_K), f32)
    for c in range(4):
        for g in range(2):
            s = 2 * c + g
            d1 = d[:, 0] * ls[:, s].astype(f32)
            m1 = dmin[:, 0] * lm[:, s].astype(f32)
            q = (qs[:, 32 * c:32 * c + 32].astype(np.int32) >> (4 * g)) & 0xF
            if with_high:
                q = q + ((b[:, 16:48].astype(np.int32) >> s) & 1) * 16
            out[:, 64 * c + 32 * g:64 * c + 32 * g + 32] = d1[:, None] * q.astype(f32) - m1[:, None]
    return out


def deq_q6_k(b):
    # ql[128] | qh[64] | scales[16] int8 | d f16. Value 128h + 32k + l (k < 4, l < 32): low 4 bits from
    # ql[64h + 32(k % 2) + l] (low nibble for k < 2, high for k >= 2), high 2 bits from bits 2k.. of qh[32h + l];
    # (d * scale[8h + 2k + l // 16]) * (q - 32)
    nb = b.shape[0]
    d = f16_at(b, 208)
    sc = b[:, 192:208].view(np.int8).astype(np.int32)
    out = np.empty((nb, QK_K), f32)
    for h in range(2):
        for k in range(4):
            ql = b[:, 64 * h + 32 * (k % 2):64 * h + 32 * (k % 2) + 32].astype(np.int32) >> (4 * (k // 2)) & 0xF
            qh = (b[:, 128 + 32 * h:128 + 32 * h + 32].astype(np.int32) >> (2 * k)) & 3
            q = (ql | (qh << 4)) - 32
            s = np.repeat(sc[:, 8 * h + 2 * k:8 * h + 2 * k + 2], 16, axis=1)
            e = 128 * h + 32 * k
            out[:, e:e + 32] = (d * s.astype(f32)) * q.astype(f32)
    return out


DEQUANTIZERS = {"Q4_0": deq_q4_0, "Q4_1": deq_q4_1, "Q5_0": deq_q5_0, "Q5_1": deq_q5_1, "Q8_0": deq_q8_0,
                "Q2_K": deq_q2_k, "Q3_K": deq_q3_k, "Q4_K": lambda b: deq_q45_k(b, False),
                "Q5_K": lambda b: deq_q45_k(b, True), "Q6_K": deq_q6_k}


def dequantize(type_name, data, n):
    blocks = as_blocks(data, type_name, n)
    if type_name == "BF16":
        return bf16_to_f32(blocks.reshape(-1).view("<u2")).astype(f32)
    if type_name in PLAIN:
        with np.errstate(over="ignore"):  # F64 values past float32's range become infinities, as a C cast does
            return blocks.reshape(-1).view(PLAIN[type_name]).astype(f32)
    return DEQUANTIZERS[type_name](blocks).reshape(-1).astype(f32)


# ---------------------------------------------------------------- quantizers (simple, valid blocks)

def rnd(x):
    return np.round(np.asarray(x, np.float64)).astype(np.int64)


def to_f16(x):
    return np.asarray(x, f32).astype("<f2").astype(f32)


def q_sym(x, nmax_neg, lo, hi):
    """per row of x: d = absmax / -nmax_neg (as ggml: the extreme value maps to -nmax_neg), q in lo..hi"""
    d = to_f16(signed_absmax(x) / f32(-nmax_neg))
    q = np.clip(rnd(x * safe_inv(d)), lo, hi)
    return d, q


def q_asym(x, levels):
    """per row: min m (the row's min) and d = (max - min) / levels, q in 0..levels"""
    mn, mx = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    d, m = to_f16((mx - mn) / f32(levels)), to_f16(mn)
    q = np.clip(rnd((x - m) * safe_inv(d)), 0, levels)
    return d, m, q


def nibbles(q):
    """(nb, 32) 0..15 -> (nb, 16) bytes: value j low, value j + 16 high"""
    return (q[:, :16] | (q[:, 16:] << 4)).astype(np.uint8)


def qh_bytes(q):
    """bit 4 of each of 32 values -> (nb, 4) bytes of a little-endian uint32"""
    bits = ((q >> 4) & 1).astype(np.uint64)
    word = (bits << np.arange(32, dtype=np.uint64)).sum(axis=1)
    return np.stack([(word >> (8 * i)) & 0xFF for i in range(4)], axis=1).astype(np.uint8)


def quant_q4_0(x, b):
    d, q = q_sym(x, 8, -8, 7)
    put_f16(b, 0, d)
    b[:, 2:18] = nibbles(q + 8)


def quant_q4_1(x, b):
    d, m, q = q_asym(x, 15)
    put_f16(b, 0, d)
    put_f16(b, 2, m)
    b[:, 4:20] = nibbles(q)


def quant_q5_0(x, b):
    d, q = q_sym(x, 16, -16, 15)
    q = q + 16
    put_f16(b, 0, d)
    b[:, 2:6], b[:, 6:22] = qh_bytes(q), nibbles(q & 0xF)


def quant_q5_1(x, b):
    d, m, q = q_asym(x, 31)
    put_f16(b, 0, d)
    put_f16(b, 2, m)
    b[:, 4:8], b[:, 8:24] = qh_bytes(q), nibbles(q & 0xF)


def quant_q8_0(x, b):
    d = to_f16(np.abs(x).max(axis=1, keepdims=True) / f32(127))
    put_f16(b, 0, d)
    b[:, 2:34] = np.clip(rnd(x * safe_inv(d)), -127, 127).astype(np.int8).view(np.uint8)


def k_scale_min(x, sub, levels, scale_bits):
    """per super-block: sub-blocks of `sub` values, each x ~ scale * q - min (min >= 0, q in 0..levels), the scales
    and mins quantized to scale_bits against super-block factors d and dmin"""
    nb = x.shape[0]
    xs = x.reshape(nb, -1, sub)
    mn = np.minimum(xs.min(axis=2), 0)
    scale = (xs.max(axis=2) - mn) / f32(levels)
    top = (1 << scale_bits) - 1
    d = to_f16(scale.max(axis=1, keepdims=True) / f32(top))
    dmin = to_f16((-mn).max(axis=1, keepdims=True) / f32(top))
    ls = np.clip(rnd(scale * safe_inv(d)), 0, top)
    lm = np.clip(rnd(-mn * safe_inv(dmin)), 0, top)
    step = (d * ls.astype(f32))[:, :, None]
    q = np.clip(rnd((xs + (dmin * lm.astype(f32))[:, :, None]) * safe_inv(step)), 0, levels)
    return d, dmin, ls, lm, q.reshape(nb, -1)


def k_sym(x, sub, qmax, scale_max):
    """per super-block: sub-blocks of `sub` values, x ~ (d * ls) * q with q in -qmax..qmax-1, ls in
    -scale_max..scale_max-1"""
    nb = x.shape[0]
    xs = x.reshape(nb, -1, sub)
    scale = signed_absmax(xs)[:, :, 0] / f32(-qmax)
    big = signed_absmax(scale)
    iscale = safe_inv(big) * f32(-scale_max)
    ls = np.clip(rnd(scale * iscale), -scale_max, scale_max - 1)
    d = to_f16(safe_inv(iscale))
    step = (d * ls.astype(f32))[:, :, None]
    q = np.clip(rnd(xs * safe_inv(step)), -qmax, qmax - 1)
    return d, ls, q.reshape(nb, -1)


def quant_q2_k(x, b):
    d, dmin, ls, lm, q = k_scale_min(x, 16, 3, 4)
    b[:, 0:16] = (ls | (lm << 4)).astype(np.uint8)
    qs = np.zeros((x.shape[0], 64), np.int64)
    for h in range(2):
        for j in range(4):
            for g in range(2):
                e = 128 * h + 32 * j + 16 * g
                qs[:, 32 * h + 16 * g:32 * h + 16 * g + 16] |= q[:, e:e + 16] << (2 * j)
    b[:, 16:80] = qs.astype(np.uint8)
    put_f16(b, 80, d)
    put_f16(b, 82, dmin)


def quant_q3_k(x, b):
    d, ls, q = k_sym(x, 16, 4, 32)
    q = q + 4  # 0..7: low 2 bits in qs, bit 2 in hmask
    hmask = np.zeros((x.shape[0], 32), np.int64)
    qs = np.zeros((x.shape[0], 64), np.int64)
    for h in range(2):
        for j in range(4):
            for g in range(2):
                e = 128 * h + 32 * j + 16 * g
                qs[:, 32 * h + 16 * g:32 * h + 16 * g + 16] |= (q[:, e:e + 16] & 3) << (2 * j)
                hmask[:, 16 * g:16 * g + 16] |= (q[:, e:e + 16] >> 2) << (4 * h + j)
    u = ls + 32  # 0..63
    sc = np.zeros((x.shape[0], 12), np.int64)
    for s in range(16):
        sc[:, s % 8] |= (u[:, s] & 0xF) << (0 if s < 8 else 4)
        sc[:, 8 + s % 4] |= (u[:, s] >> 4) << (2 * (s // 4))
    b[:, 0:32], b[:, 32:96], b[:, 96:108] = hmask.astype(np.uint8), qs.astype(np.uint8), sc.astype(np.uint8)
    put_f16(b, 108, d)


def quant_q45_k(x, b, with_high):
    d, dmin, ls, lm, q = k_scale_min(x, 32, 31 if with_high else 15, 6)
    put_f16(b, 0, d)
    put_f16(b, 2, dmin)
    b[:, 4:16] = pack_k4_scales(ls.astype(np.uint8), lm.astype(np.uint8))
    qs = np.zeros((x.shape[0], 128), np.int64)
    qh = np.zeros((x.shape[0], 32), np.int64)
    for c in range(4):
        for g in range(2):
            v = q[:, 64 * c + 32 * g:64 * c + 32 * g + 32]
            qs[:, 32 * c:32 * c + 32] |= (v & 0xF) << (4 * g)
            qh |= (v >> 4) << (2 * c + g)
    if with_high:
        b[:, 16:48], b[:, 48:176] = qh.astype(np.uint8), qs.astype(np.uint8)
    else:
        b[:, 16:144] = qs.astype(np.uint8)


def quant_q6_k(x, b):
    d, ls, q = k_sym(x, 16, 32, 128)
    q = q + 32  # 0..63
    ql = np.zeros((x.shape[0], 128), np.int64)
    qh = np.zeros((x.shape[0], 64), np.int64)
    for h in range(2):
        for k in range(4):
            v = q[:, 128 * h + 32 * k:128 * h + 32 * k + 32]
            o = 64 * h + 32 * (k % 2)
            ql[:, o:o + 32] |= (v & 0xF) << (4 * (k // 2))
            qh[:, 32 * h:32 * h + 32] |= (v >> 4) << (2 * k)
    b[:, 0:128], b[:, 128:192] = ql.astype(np.uint8), qh.astype(np.uint8)
    b[:, 192:208] = ls.astype(np.int8).view(np.uint8)
    put_f16(b, 208, d)


QUANTIZERS = {"Q4_0": quant_q4_0, "Q4_1": quant_q4_1, "Q5_0": quant_q5_0, "Q5_1": quant_q5_1, "Q8_0": quant_q8_0,
              "Q2_K": quant_q2_k, "Q3_K": quant_q3_k, "Q4_K": lambda x, b: quant_q45_k(x, b, False),
              "Q5_K": lambda x, b: quant_q45_k(x, b, True), "Q6_K": quant_q6_k}


def quantize(type_name, x):
    x = np.asarray(x, f32).reshape(-1)
    _, bs, ts = TYPES[type_name]
    if x.size % bs:
        raise ValueError(f"{type_name}: {x.size} values is not a whole number of {bs}-value blocks")
    if type_name == "BF16":
        return f32_to_bf16(x).astype("<u2").tobytes()
    if type_name in PLAIN:
        dt = np.dtype(PLAIN[type_name])
        if dt.kind == "i":
            info = np.iinfo(dt)
            x = np.clip(np.round(x.astype(np.float64)), info.min, info.max)
        return x.astype(dt).tobytes()
    blocks = np.zeros((x.size // bs, ts), np.uint8)
    QUANTIZERS[type_name](x.reshape(-1, bs), blocks)
    return blocks.tobytes()


# ---------------------------------------------------------------- the test tensors

def structured_values(type_name, rng):
    """4 blocks (64 values for the plain types) of normal values, with a zero sub-block, a zero block (the last
    block), large magnitudes and exact zeros among them"""
    _, bs, _ = TYPES[type_name]
    n = 4 * bs if bs > 1 else 64
    x = rng.randn(n).astype(f32)
    if type_name in ("I8", "I16", "I32", "I64"):
        info = np.iinfo(np.dtype(PLAIN[type_name]))
        x = (x * 50).astype(f32)
        x[:4] = [0, -1, max(info.min, -2**31), min(info.max, 2**31 - 128)]
        return x
    x[: max(1, bs // 8)] = 0                   # a zero run at the start of block 0
    x[bs + 3] = 3000.0 if bs > 1 else 65504.0  # an outlier in block 1
    x[2 * bs:3 * bs] *= 100                    # a block of large magnitudes
    x[-bs if bs > 1 else -4:] = 0              # the last block all zero (scales 0)
    if type_name in ("F32", "F16", "BF16", "F64"):
        x[5:9] = [np.inf, -np.inf, np.nan, -0.0]
        x[9] = 1e-7  # a subnormal in f16
    return x


def random_blocks(type_name, rng):
    """4 blocks (64 values for the plain types) of random bytes; every f16 field with an all-ones exponent (inf or
    NaN) gets its top exponent bit cleared, so the quantized values are finite"""
    _, bs, ts = TYPES[type_name]
    nb = 4 if bs > 1 else 64
    b = rng.randint(0, 256, size=(nb, ts)).astype(np.uint8)
    for off in F16_FIELDS.get(type_name, []):
        hi = b[:, off + 1]
        b[:, off + 1] = np.where((hi & 0x7C) == 0x7C, hi & ~np.uint8(0x40), hi)
    return b.reshape(-1), nb * bs


def goldens():
    out = {}
    rng = np.random.RandomState(2024)
    for name in TYPES:
        x = structured_values(name, rng)
        raw = np.frombuffer(quantize(name, x), np.uint8)
        out[name + ".raw"], out[name + ".want"] = raw, dequantize(name, raw, x.size)
        raw, n = random_blocks(name, rng)
        out[name + ".random.raw"], out[name + ".random.want"] = raw, dequantize(name, raw, n)
    return out


def check_round_trips():
    """the quantizers make blocks that dequantize close to the input (a bug in a quantizer and the matching
    dequantizer would not cancel out: each block's error is bounded by its step)"""
    rng = np.random.RandomState(7)
    bad = []
    tol = {"Q4_0": 0.2, "Q4_1": 0.15, "Q5_0": 0.1, "Q5_1": 0.08, "Q8_0": 0.02, "Q2_K": 0.6, "Q3_K": 0.35,
           "Q4_K": 0.15, "Q5_K": 0.08, "Q6_K": 0.04, "F16": 1e-3, "BF16": 1e-2, "F32": 0, "F64": 0}
    for name, t in tol.items():
        x = rng.randn(8 * TYPES[name][1] if TYPES[name][1] > 1 else 256).astype(f32)
        y = dequantize(name, quantize(name, x), x.size)
        err = float(np.abs(y - x).max() / np.abs(x).max())
        if not err <= t:
            bad.append(f"{name}: max error {err:.4f} of the largest value (allowed {t})")
    return bad


def main(argv):
    if len(argv) != 3 or argv[1] not in ("tensors", "check"):
        print(__doc__)
        return 2
    directory = argv[2]
    files = goldens()
    if argv[1] == "tensors":
        os.makedirs(directory, exist_ok=True)
        for key, value in files.items():
            np.save(os.path.join(directory, key + ".npy"), value)
        return 0
    bad = check_round_trips()
    for key, value in files.items():
        path = os.path.join(directory, key + ".npy")
        if not os.path.exists(path):
            bad.append(f"{path} is missing")
            continue
        have = np.load(path)
        if have.dtype != value.dtype or have.shape != value.shape or have.tobytes() != value.tobytes():
            bad.append(f"{path} differs from what `tensors` writes now: regenerate the goldens")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
