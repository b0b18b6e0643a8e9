"""Tile math in numpy: the element-wise, scalar, unary, reduction, expand and conversion kernels.

Values arrive in their compute dtype (float32 for fp32/fp16/bf16 tiles, the
integer dtype for integer tiles) and results are rounded to the destination's
storage type by :func:`pypto.device.interpreter.memory.to_storage`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np


def _exp(a: np.ndarray) -> np.ndarray:
    """exp computed in float64 and rounded to the input's dtype: the same
    value the CPU header computes (``std::exp`` on double), so the two
    implementations agree bit for bit (numpy's float32 exp differs by ulps)."""
    return np.exp(a.astype(np.float64)).astype(a.dtype)


def _sequential_sum(a: np.ndarray, axis: int) -> np.ndarray:
    """Sum along ``axis`` left to right (not numpy's pairwise order), in float32
    for 16/32-bit floats, as the CPU header's reduction loop does."""
    acc_dtype = np.float32 if a.dtype in (np.float16, np.float32) else a.dtype
    lanes = np.moveaxis(a, axis, 0)
    acc = lanes[0].astype(acc_dtype, copy=True)
    for lane in lanes[1:]:
        acc += lane.astype(acc_dtype, copy=False)
    return np.expand_dims(acc.astype(a.dtype, copy=False), axis)


Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]
Unary = Callable[[np.ndarray], np.ndarray]


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        with np.errstate(all="ignore"):
            q = np.trunc(np.true_divide(a, np.where(b == 0, 1, b)))
        return q.astype(a.dtype)
    return np.true_divide(a, b)


def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        return np.fmod(a, np.where(np.asarray(b) == 0, 1, b))
    return np.fmod(a, b)


BINARY: dict[str, Binary] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _div,
    "max": np.maximum,
    "min": np.minimum,
    "rem": _rem,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "shl": np.left_shift,
    "shr": np.right_shift,
}
"""``t<k>`` / ``t<k>s`` / ``tpart<k>`` / ``trowexpand<k>`` / ``tcolexpand<k>`` by ``k``."""

BINARY["expdif"] = lambda a, b: _exp(a - b)
BINARY["lrelu"] = lambda a, s: np.where(a > 0, a, a * s)

UNARY: dict[str, Unary] = {
    "abs": np.abs,
    "neg": np.negative,
    "exp": lambda a: _exp(a),
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "recip": lambda a: 1 / a,
    "relu": lambda a: np.maximum(a, 0),
    "not": np.invert,
    "fillpad": lambda a: a,
}

UNARY_INTO: dict[str, Callable[[np.ndarray, np.ndarray], object]] = {
    "abs": np.abs,  # ufuncs take ``out`` positionally: no Python frame per call
    "neg": np.negative,
    "exp": partial(np.exp, dtype=np.float64),  # in float64, rounded once: as _exp
    "log": np.log,
    "sqrt": np.sqrt,
    "relu": lambda a, out: np.maximum(a, 0, out=out),
}
""":data:`UNARY` kernels that write into ``out`` (an fp32 or fp64 array of the input's dtype and shape)
with the same values as ``UNARY[k](a)`` (``out`` may overlap ``a``: numpy buffers overlaps)."""

ROW_REDUCE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sum": lambda a: _sequential_sum(a, axis=1),
    "max": lambda a: a.max(axis=1, keepdims=True),
    "min": lambda a: a.min(axis=1, keepdims=True),
    "prod": lambda a: a.prod(axis=1, keepdims=True, dtype=a.dtype),
    "argmax": lambda a: a.argmax(axis=1)[:, None],
    "argmin": lambda a: a.argmin(axis=1)[:, None],
}

COL_REDUCE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sum": lambda a: _sequential_sum(a, axis=0),
    "max": lambda a: a.max(axis=0, keepdims=True),
    "min": lambda a: a.min(axis=0, keepdims=True),
}

CMP: dict[str, Binary] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def _round(values: np.ndarray, mode: str) -> np.ndarray:
    """Round to integral values with a PTO round mode (RINT, CAST_RINT, NONE, ODD: ties to even)."""
    if mode in ("FLOOR",):
        return np.floor(values)
    if mode == "CEIL":
        return np.ceil(values)
    if mode == "TRUNC":
        return np.trunc(values)
    if mode == "ROUND":
        return np.sign(values) * np.floor(np.abs(values) + 0.5)
    return np.rint(values)


def round_to_int(values: np.ndarray, mode: str, dtype: np.dtype) -> np.ndarray:
    """Float -> integer with a PTO round mode, saturating to the integer range (in float64: a float32
    ``2**31 - 1`` is ``2**31``, which wrapped to the minimum); NaN is 0."""
    r = _round(np.asarray(values, dtype=np.float64), mode)
    info = np.iinfo(dtype)
    r = np.nan_to_num(r, nan=0.0)
    with np.errstate(invalid="ignore"):  # the ends are chosen below, whatever the cast made of them
        inside = np.clip(r, info.min, info.max).astype(dtype)
    kind = np.dtype(dtype).type
    return np.where(r >= info.max, kind(info.max), np.where(r <= info.min, kind(info.min), inside))


def wrap_to_int(values: np.ndarray, mode: str, dtype: np.dtype) -> np.ndarray:
    """Float -> integer with a PTO round mode, wrapping (tcvt ``sat_mode = OFF``): the rounded value
    modulo 2^bits, two's complement; NaN and +-inf give 0. Exact in float64 (fmod is exact)."""
    bits = np.iinfo(dtype).bits
    with np.errstate(invalid="ignore"):
        r = _round(np.asarray(values, dtype=np.float64), mode)
        r = np.where(np.isfinite(r), r, 0.0)
        span, half = 2.0**bits, 2.0 ** (bits - 1)
        w = np.fmod(r, span)
        w = np.where(w >= half, w - span, np.where(w < -half, w + span, w))
    return w.astype(np.int64).astype(dtype)
