"""Element types: the DSL's dtype names and the MLIR types that carry them.

Where MLIR has a builtin type for a DSL dtype we use it (``pl.FP32`` is ``f32``,
``pl.INDEX`` is ``index``); the few with no builtin counterpart (FP4, HF4, ...)
are ``!pl.dtype<NAME>``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from pypto.target.dtypes import BY_NAME


@irdl_attr_definition
class ExtDType(ParametrizedAttribute, TypeAttribute):
    """A DSL element type with no builtin MLIR counterpart: ``!pl.dtype<FP4>``."""

    name = "pl.dtype"
    dtype_name: StringAttr = param_def()

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.dtype_name.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            ident = parser.parse_identifier("a dtype name")
        if ident not in _EXT_NAMES:
            parser.raise_error(f"unknown dtype '{ident}', expected one of {', '.join(_EXT_NAMES)}")
        return (StringAttr(ident),)


_EXT_NAMES = ("FP4", "FP8E8M0", "HF4", "HF8", "TASK_ID")


def _int(width: int, unsigned: bool = False) -> Attribute:
    return IntegerType(width, Signedness.UNSIGNED if unsigned else Signedness.SIGNLESS)


# DSL name -> MLIR type, in the order the DSL documents them.
_TABLE: dict[str, Attribute] = {
    "BOOL": _int(1),
    "INT4": _int(4),
    "INT8": _int(8),
    "INT16": _int(16),
    "INT32": _int(32),
    "INT64": _int(64),
    "UINT4": _int(4, True),
    "UINT8": _int(8, True),
    "UINT16": _int(16, True),
    "UINT32": _int(32, True),
    "UINT64": _int(64, True),
    "FP16": Float16Type(),
    "BF16": BFloat16Type(),
    "FP32": Float32Type(),
    "FP8E4M3FN": Float8E4M3FNType(),
    "FP8E5M2": Float8E5M2Type(),
    "INDEX": IndexType(),
}
for _n in _EXT_NAMES:
    _TABLE[_n] = ExtDType(StringAttr(_n))

DTYPE_NAMES: tuple[str, ...] = tuple(_TABLE)
_BY_TYPE: dict[Attribute, str] = {t: n for n, t in _TABLE.items()}

def dtype_type(name: str) -> Attribute:
    """The MLIR type of a DSL dtype name (``"FP32"`` -> ``f32``)."""
    return _TABLE[name]


def dtype_name(t: Attribute) -> str:
    """The DSL dtype name of an MLIR element type (``f32`` -> ``"FP32"``)."""
    try:
        return _BY_TYPE[t]
    except KeyError:
        raise ValueError(f"type {t} is not a PyPTO dtype") from None


def is_dtype(t: Attribute) -> bool:
    return t in _BY_TYPE


def dtype_bits(t: Attribute) -> int:
    """Bits per element, for byte sizes of tiles and tensors."""
    return BY_NAME[dtype_name(t)].bits


def is_float(t: Attribute) -> bool:
    name = _BY_TYPE.get(t, "")
    return name.startswith(("FP", "BF", "HF"))


def is_integer(t: Attribute) -> bool:
    name = _BY_TYPE.get(t, "")
    return name.startswith(("INT", "UINT")) or name in ("INDEX", "BOOL")
