"""Types of the ``pto`` dialect (pto-dialect.md §2).

::

    !pto.ptr<f16>
    !pto.tensor_view<?x?xf32>
    !pto.partition_tensor_view<16x16xf32>
    !pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=64,
                  blayout=row_major, slayout=none_box, fractal=512, pad=0>
    !pto.tile_buf<vec, 16x64xf32, valid=16x?, blayout=col_major, fractal=1024>

Both tile_buf spellings parse to the same type; the printer always writes the
key list (the spelling of PyPTO's output and of most PTOAS tests), with
``compact=`` only when it is not 0. Dynamic dims (``?``) are stored as -1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float8E4M3FNType,
    Float8E4M3Type,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .attrs import TILE_LOCS, AddressSpace, AddressSpaceAttr, BLayout, BLayoutAttr, SLayout, SLayoutAttr

DYNAMIC = -1
FLOAT8 = (Float8E4M3Type, Float8E4M3FNType, Float8E5M2Type)  # the mx (micro-scaled) cube operands
SCALE8 = (Float8E8M0FNUType,)  # f8E8M0FNU: the mx ops' per-block power-of-two scales (pto-isa float8_e8m0_t)
FRACTALS = (16, 32, 512, 1024)
PAD_VALUES = {0: "null", 1: "zero", 2: "max", 3: "min"}
COMPACT_MODES = {0: "null", 1: "normal", 2: "row_plus_one"}
TILE_KEYS = ("loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal", "pad")


def is_element_type(t: Attribute) -> bool:
    """A PTO element type: i1..i64 (signless or unsigned), f16, bf16, f32 (f64 too), f8 and e8m0 (mx ops)."""
    if isinstance(t, IntegerType):
        return t.width.data in (1, 8, 16, 32, 64) and t.signedness.data != Signedness.SIGNED
    return isinstance(t, (Float16Type, BFloat16Type, Float32Type, Float64Type, *FLOAT8, *SCALE8))


def element_bits(t: Attribute) -> int:
    """Bit width of an element type (index counts as 64)."""
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, FLOAT8 + SCALE8):
        return 8
    return {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}.get(type(t), 0)


def _dims(shape: ArrayAttr[IntAttr]) -> tuple[int, ...]:
    return tuple(d.data for d in shape.data)


def _dim_text(d: int) -> str:
    return "?" if d == DYNAMIC else str(d)


def _print_shaped(printer: Printer, shape: ArrayAttr[IntAttr], element_type: Attribute) -> None:
    for d in shape.data:
        printer.print_string(_dim_text(d.data) + "x")
    printer.print_attribute(element_type)


def _parse_shaped(parser: AttrParser, what: str) -> tuple[ArrayAttr[IntAttr], Attribute]:
    pos = parser.pos
    dims, element_type = parser.parse_ranked_shape()
    if not is_element_type(element_type):
        parser.raise_error(f"{what}: {element_type} is not a PTO element type", pos, parser.pos)
    return ArrayAttr(IntAttr(DYNAMIC if d < 0 else d) for d in dims), element_type


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """A GM pointer to elements: ``!pto.ptr<f32>``."""

    name = "pto.ptr"
    element_type: Attribute = param_def()

    def print_parameters(self, printer: Printer) -> None:
        """Print ``<T>``."""
        printer.print_string("<")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        """Parse ``<T>``."""
        with parser.in_angle_brackets():
            pos = parser.pos
            t = parser.parse_type()
            if not is_element_type(t):
                parser.raise_error(f"!pto.ptr: {t} is not a PTO element type", pos, parser.pos)
        return (t,)


class _ViewBase(ParametrizedAttribute, TypeAttribute):
    """A GM view: a shape (``?`` = dynamic) and an element type."""

    shape: ArrayAttr[IntAttr] = param_def()
    element_type: Attribute = param_def()

    @classmethod
    def get(cls, shape: Sequence[int], element_type: Attribute) -> _ViewBase:
        """The view of this shape and element type."""
        return cls(ArrayAttr(IntAttr(d) for d in shape), element_type)

    def get_shape(self) -> tuple[int, ...]:
        """The dims, -1 for dynamic ones."""
        return _dims(self.shape)

    def rank(self) -> int:
        """Number of dims written."""
        return len(self.shape.data)

    def is_static(self) -> bool:
        """No dynamic dim."""
        return DYNAMIC not in self.get_shape()

    def print_parameters(self, printer: Printer) -> None:
        """Print ``<16x?xf32>``."""
        printer.print_string("<")
        _print_shaped(printer, self.shape, self.element_type)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        """Parse ``<16x?xf32>``."""
        with parser.in_angle_brackets():
            shape, element_type = _parse_shaped(parser, f"!{cls.name}")
        if not shape.data:
            parser.raise_error(f"!{cls.name} needs at least one dim")
        return shape, element_type


@irdl_attr_definition
class TensorViewType(_ViewBase):
    """A GM tensor descriptor: ``!pto.tensor_view<?x?xf32>``."""

    name = "pto.tensor_view"


@irdl_attr_definition
class PartitionTensorViewType(_ViewBase):
    """A window of a tensor_view: ``!pto.partition_tensor_view<16x16xf32>`` (rank 1..5)."""

    name = "pto.partition_tensor_view"

    def verify(self) -> None:
        """Rank 1..5."""
        if not 1 <= self.rank() <= 5:
            raise VerifyException(f"!pto.partition_tensor_view has rank {self.rank()}, expected 1..5")


@dataclass(frozen=True)
class TileSpec:
    """The parameters of a tile_buf in Python form (``-1`` = dynamic valid dim)."""

    loc: AddressSpace
    dtype: Attribute
    rows: int
    cols: int
    v_row: int
    v_col: int
    blayout: BLayout = BLayout.row_major
    slayout: SLayout = SLayout.none_box
    fractal: int = 512
    pad: int = 0
    compact: int = 0

    def problems(self) -> list[str]:
        """What is wrong with these parameters (empty when valid)."""
        out: list[str] = []
        if self.loc not in TILE_LOCS:
            out.append(f"loc={self.loc.value} is not an on-chip tile location")
        if not is_element_type(self.dtype):
            out.append(f"dtype={self.dtype} is not a PTO element type")
        for key, n in (("rows", self.rows), ("cols", self.cols)):
            if n < 0:
                out.append(f"{key}={n} is negative")
        for key, v, n in (("v_row", self.v_row, self.rows), ("v_col", self.v_col, self.cols)):
            if v != DYNAMIC and not 0 <= v <= n:
                out.append(f"{key}={v} is outside 0..{n}")
        if self.fractal not in FRACTALS:
            out.append(f"fractal={self.fractal} is not one of {', '.join(map(str, FRACTALS))}")
        if self.pad not in PAD_VALUES:
            out.append(f"pad={self.pad} is not one of 0..3")
        if self.compact not in COMPACT_MODES:
            out.append(f"compact={self.compact} is not one of 0..2")
        return out


@irdl_attr_definition
class TileBufType(ParametrizedAttribute, TypeAttribute):
    """An on-chip 2-D buffer: ``!pto.tile_buf<loc=vec, dtype=f32, rows=16, ...>``."""

    name = "pto.tile_buf"
    loc: AddressSpaceAttr = param_def()
    dtype: Attribute = param_def()
    rows: IntAttr = param_def()
    cols: IntAttr = param_def()
    v_row: IntAttr = param_def()
    v_col: IntAttr = param_def()
    blayout: BLayoutAttr = param_def()
    slayout: SLayoutAttr = param_def()
    fractal: IntAttr = param_def()
    pad: IntAttr = param_def()
    compact: IntAttr = param_def()

    @staticmethod
    def from_spec(s: TileSpec) -> TileBufType:
        """The type of these parameters."""
        return TileBufType(
            AddressSpaceAttr(s.loc),
            s.dtype,
            IntAttr(s.rows),
            IntAttr(s.cols),
            IntAttr(s.v_row),
            IntAttr(s.v_col),
            BLayoutAttr(s.blayout),
            SLayoutAttr(s.slayout),
            IntAttr(s.fractal),
            IntAttr(s.pad),
            IntAttr(s.compact),
        )

    def spec(self) -> TileSpec:
        """The parameters in Python form."""
        return TileSpec(
            AddressSpace(self.loc.data),
            self.dtype,
            self.rows.data,
            self.cols.data,
            self.v_row.data,
            self.v_col.data,
            BLayout(self.blayout.data),
            SLayout(self.slayout.data),
            self.fractal.data,
            self.pad.data,
            self.compact.data,
        )

    @property
    def space(self) -> AddressSpace:
        """The tile's location."""
        return AddressSpace(self.loc.data)

    def get_shape(self) -> tuple[int, int]:
        """Physical (rows, cols)."""
        return self.rows.data, self.cols.data

    def valid_shape(self) -> tuple[int, int]:
        """Valid (rows, cols); -1 where dynamic."""
        return self.v_row.data, self.v_col.data

    def verify(self) -> None:
        """Parameter ranges (pto-dialect.md §2 table)."""
        problems = self.spec().problems()
        if problems:
            raise VerifyException("!pto.tile_buf: " + "; ".join(problems))

    def print_parameters(self, printer: Printer) -> None:
        """Print the key-list spelling."""
        s = self.spec()
        printer.print_string(f"<loc={s.loc.value}, dtype=")
        printer.print_attribute(s.dtype)
        printer.print_string(
            f", rows={s.rows}, cols={s.cols}, v_row={_dim_text(s.v_row)}, v_col={_dim_text(s.v_col)}"
            f", blayout={s.blayout.value}, slayout={s.slayout.value}, fractal={s.fractal}, pad={s.pad}"
        )
        if s.compact:
            printer.print_string(f", compact={s.compact}")
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        """Parse either spelling (key list or compact)."""
        start = parser.pos
        with parser.in_angle_brackets():
            if parser.parse_optional_keyword("loc") is not None:
                spec = _parse_key_list(parser)
            else:
                spec = _parse_compact(parser)
        problems = spec.problems()
        if problems:
            parser.raise_error("!pto.tile_buf: " + "; ".join(problems), start, parser.pos)
        return TileBufType.from_spec(spec).parameters


def _parse_valid_dim(parser: AttrParser) -> int:
    if parser.parse_optional_punctuation("?") is not None:
        return DYNAMIC
    return parser.parse_integer(allow_boolean=False, allow_negative=False)


def _parse_key_list(parser: AttrParser) -> TileSpec:
    """``loc=vec, dtype=f32, rows=.., cols=.., v_row=.., v_col=.., blayout=.., slayout=.., fractal=.., pad=..[, compact=..]``.

    ``loc`` has been consumed; the keys must come in this order.
    """
    values: dict[str, object] = {}
    for i, key in enumerate(TILE_KEYS):
        if i:
            parser.parse_punctuation(",", f" before '{key}=' in !pto.tile_buf")
            parser.parse_keyword(key, f" (!pto.tile_buf keys come in the order {', '.join(TILE_KEYS)})")
        parser.parse_punctuation("=")
        if key == "loc":
            values[key] = parser.parse_str_enum(AddressSpace)
        elif key == "dtype":
            values[key] = parser.parse_type()
        elif key in ("v_row", "v_col"):
            values[key] = _parse_valid_dim(parser)
        elif key == "blayout":
            values[key] = parser.parse_str_enum(BLayout)
        elif key == "slayout":
            values[key] = parser.parse_str_enum(SLayout)
        else:
            values[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
    if parser.parse_optional_punctuation(",") is not None:
        parser.parse_keyword("compact", " (the only key allowed after 'pad=')")
        parser.parse_punctuation("=")
        values["compact"] = parser.parse_integer(allow_boolean=False, allow_negative=False)
    return TileSpec(**values)  # type: ignore[arg-type]


def _parse_compact(parser: AttrParser) -> TileSpec:
    """``vec, 16x64xf32[, valid=16x?][, blayout=..][, slayout=..][, fractal=..][, pad=..][, compact=..]``."""
    loc = parser.parse_str_enum(AddressSpace)
    parser.parse_punctuation(",")
    pos = parser.pos
    dims, dtype = parser.parse_ranked_shape()
    if len(dims) != 2 or DYNAMIC in dims:
        parser.raise_error("!pto.tile_buf shape must be static and 2-D (RxCxT)", pos, parser.pos)
    rows, cols = dims
    values: dict[str, object] = {}
    while parser.parse_optional_punctuation(",") is not None:
        key = parser.parse_identifier("!pto.tile_buf key")
        parser.parse_punctuation("=")
        if key == "valid":
            v_row = _parse_valid_dim(parser)
            parser.parse_shape_delimiter()
            values["v_row"], values["v_col"] = v_row, _parse_valid_dim(parser)
        elif key == "blayout":
            values[key] = parser.parse_str_enum(BLayout)
        elif key == "slayout":
            values[key] = parser.parse_str_enum(SLayout)
        elif key in ("fractal", "pad", "compact"):
            values[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
        else:
            parser.raise_error(f"unknown !pto.tile_buf key '{key}'")
    values.setdefault("v_row", rows)
    values.setdefault("v_col", cols)
    return TileSpec(loc, dtype, rows, cols, **values)  # type: ignore[arg-type]


PTO_TYPES: tuple[type[Attribute], ...] = (PtrType, TensorViewType, PartitionTensorViewType, TileBufType)
