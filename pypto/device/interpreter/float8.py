"""The 8-bit float formats of the mx cube ops, as tables of their 256 values (no ``ml_dtypes`` needed).

- ``e4m3fn`` (OCP FP8 E4M3, pto-isa ``float8_e4m3_t``): bias 7, subnormals, no infinities,
  ``S.1111.111`` is NaN (max 448). MLIR's ``f8E4M3`` is read the same way: PTOAS writes both as
  ``float8_e4m3_t`` in C++, so the two engines cannot tell them apart.
- ``e5m2`` (``float8_e5m2_t``): bias 15, IEEE-like (exponent 31: infinity / NaN; max 57344).
- ``e8m0`` (``f8E8M0FNU``, ``float8_e8m0_t``): unsigned, ``2^(code - 127)``, ``0xFF`` is NaN (the
  mx scales).

Decoding is a table lookup; encoding (a store into an f8 tile) rounds to the nearest value, ties to
the even code, overflowing to infinity (e5m2) or NaN (e4m3fn, e8m0); e8m0 has no zero and no sign,
so zero encodes as its smallest value and negatives as NaN. ``pto_cpu.hpp`` (``cpu::f8_table``)
builds the same tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Float8Format:
    """One 8-bit float format and its decode table."""

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    signed: bool = True
    ieee_specials: bool = False  # exponent all ones: inf / NaN (else only the all-ones code is NaN)
    values: np.ndarray = field(init=False, repr=False, compare=False)
    nan_code: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _table(self))
        object.__setattr__(self, "nan_code", 0xFF if not self.signed else (0x7E if self.ieee_specials else 0x7F))

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """float32 values of stored codes (uint8)."""
        return self.values[np.asarray(codes, dtype=np.uint8)]

    def encode(self, values: np.ndarray | float) -> np.ndarray:
        """uint8 codes of float values: nearest, ties to the even code (see the module docstring)."""
        x = np.asarray(values, dtype=np.float32)
        half = 0x80 if self.signed else 0x100
        table = self.values[:half].astype(np.float64)
        finite = np.isfinite(table)
        top = int(np.flatnonzero(finite)[-1])  # the largest finite code (values grow with the code)
        pos = table[: top + 1]
        mag = np.abs(x.astype(np.float64)) if self.signed else x.astype(np.float64)
        hi = np.clip(np.searchsorted(pos, mag), 0, top)
        lo = np.clip(hi - 1, 0, top)
        d_lo, d_hi = np.abs(mag - pos[lo]), np.abs(pos[hi] - mag)
        code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
        over = mag >= pos[top] + (pos[top] - pos[top - 1]) / 2
        inf_code = top + 1 if self.ieee_specials else self.nan_code
        code = np.where(over, inf_code, code)
        if self.signed:
            code = code | np.where(np.signbit(x), 0x80, 0)
        else:
            code = np.where(x < 0, self.nan_code, code)
        return np.where(np.isnan(x), self.nan_code, code).astype(np.uint8)


def _table(f: Float8Format) -> np.ndarray:
    codes = np.arange(256, dtype=np.int64)
    sign_bit = 7 if f.signed else 8
    sign = np.where(f.signed & ((codes >> 7) == 1), -1.0, 1.0)
    body = codes & ((1 << sign_bit) - 1)
    exp = body >> f.man_bits
    man = body & ((1 << f.man_bits) - 1)
    if f.man_bits == 0:  # e8m0: a pure power of two
        values = np.ldexp(1.0, (exp - f.bias).astype(np.int64))
    else:
        frac = man / float(1 << f.man_bits)
        normal = np.ldexp(1.0 + frac, (exp - f.bias).astype(np.int64))
        sub = np.ldexp(frac, 1 - f.bias)
        values = sign * np.where(exp == 0, sub, normal)
    top_exp = (1 << f.exp_bits) - 1
    if f.ieee_specials:
        values = np.where(exp == top_exp, np.where(man == 0, sign * np.inf, np.nan), values)
    else:
        values = np.where(body == (1 << sign_bit) - 1, np.nan, values)
    return values.astype(np.float32)


E4M3FN = Float8Format("e4m3fn", 4, 3, 7)
E5M2 = Float8Format("e5m2", 5, 2, 15, ieee_specials=True)
E8M0 = Float8Format("e8m0", 8, 0, 127, signed=False)
