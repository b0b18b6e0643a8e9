"""The one element-type table: each PyPTO dtype's spellings and storage in every layer.

A row names a dtype as the DSL does (``pl.FP16`` -> ``"FP16"``) and gives its MLIR
spelling, its width, pto-isa's name (the target's cost tables: ``fp16``), the numpy
dtype that stores it in simulated memory (bf16 as its ``uint16`` bits), the C++ type
of the emitted kernels, and the torch dtypes: ``torch`` holds the same values
(``None`` where torch has none), ``torch_compute`` is what torch code computes in
(unsigned and sub-byte integers widened, dtypes torch lacks in float32). Columns
hold names, not objects, so nothing here imports numpy's or torch's types.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DTypeRow:
    """One dtype in every vocabulary (``None``: that layer has no such type)."""

    name: str
    mlir: str
    bits: int
    pto: str | None = None
    numpy: str | None = None
    cxx: str | None = None
    torch: str | None = None
    torch_compute: str = "float32"


_R = DTypeRow
ROWS: tuple[DTypeRow, ...] = (
    _R("BOOL", "i1", 8, None, "uint8", "bool", "bool", "bool"),
    _R("INT4", "i4", 4, torch_compute="int8"),
    _R("INT8", "i8", 8, "int8", "int8", "int8_t", "int8", "int8"),
    _R("INT16", "i16", 16, "int16", "int16", "int16_t", "int16", "int16"),
    _R("INT32", "i32", 32, "int32", "int32", "int32_t", "int32", "int32"),
    _R("INT64", "i64", 64, "int64", "int64", "int64_t", "int64", "int64"),
    _R("UINT4", "ui4", 4, torch_compute="uint8"),
    _R("UINT8", "ui8", 8, "uint8", "uint8", "uint8_t", "uint8", "uint8"),
    _R("UINT16", "ui16", 16, "uint16", "uint16", "uint16_t", "uint16", "int32"),
    _R("UINT32", "ui32", 32, "uint32", "uint32", "uint32_t", "uint32", "int64"),
    _R("UINT64", "ui64", 64, "uint64", "uint64", "uint64_t", "uint64", "int64"),
    _R("FP16", "f16", 16, "fp16", "float16", "half", "float16", "float16"),
    _R("BF16", "bf16", 16, "bf16", "uint16", "bfloat16_t", "bfloat16", "bfloat16"),
    _R("FP32", "f32", 32, "fp32", "float32", "float", "float32", "float32"),
    _R("FP8E4M3FN", "f8E4M3FN", 8, "fp8e4m3fn", torch="float8_e4m3fn", torch_compute="float8_e4m3fn"),
    _R("FP8E5M2", "f8E5M2", 8, "fp8e5m2", torch="float8_e5m2", torch_compute="float8_e5m2"),
    _R("INDEX", "index", 64, cxx="int64_t", torch_compute="int64"),
    _R("FP4", "!pl.dtype<FP4>", 4),
    _R("FP8E8M0", "!pl.dtype<FP8E8M0>", 8),
    _R("HF4", "!pl.dtype<HF4>", 4),
    _R("HF8", "!pl.dtype<HF8>", 8, "hf8"),
    _R("TASK_ID", "!pl.dtype<TASK_ID>", 64, torch_compute="int64"),
)
"""Every PyPTO dtype, in the order the DSL documents them."""

BY_NAME: dict[str, DTypeRow] = {r.name: r for r in ROWS}
"""DSL name -> row."""

BY_MLIR: dict[str, DTypeRow] = {r.mlir: r for r in ROWS}
"""MLIR spelling (``str`` of the xDSL type) -> row."""


def pto_aliases() -> dict[str, str]:
    """Other spellings of each pto-isa dtype name, lower case: the MLIR, C++ and torch
    names (``f32``, ``float``, ``float32`` -> ``fp32``)."""
    out: dict[str, str] = {}
    for r in ROWS:
        if r.pto is None:
            continue
        for other in (r.mlir, r.cxx, r.torch):
            if other is not None and other.lower() != r.pto:
                out[other.lower()] = r.pto
    return out
