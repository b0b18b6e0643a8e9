"""Cube<->vector frontend pipes: push a tile to the other core kind, pop it there, free the slot.

::

    pto.tpush_to_aiv(%t : !pto.tile_buf<...>) {split = 0}        (cube -> vector)
    pto.tpush_to_aic(%t : !pto.tile_buf<...>) {split = 0}        (vector -> cube)
    %t = pto.tpop_from_aic {split = 0} -> !pto.tile_buf<...>     (vector pops what the cube pushed)
    %t = pto.tpop_from_aic(%vr, %vc) {split = 0} -> !pto.tile_buf<...>   (dynamic valid row/col, index)
    %t = pto.tpop_from_aiv {split = 0} -> !pto.tile_buf<...>     (cube pops what the vector pushed)
    pto.tfree_from_aic {split = 0}                               (release the popped slot)
    pto.tfree_from_aiv {split = 0}

``split`` is 0 (whole tile), 1 or 2 (split between the two vector cores), an
i64 ``IntegerAttr`` in the attribute dictionary. ``DIRECTION`` is ``c2v`` for
the cube->vector pipe (tpush_to_aiv, tpop_from_aic, tfree_from_aic) and
``v2c`` for the other one. On a2a3 the data goes through GM: a push is a
fixpipe (L0C->GM, ``acc`` tiles) or MTE3 (UB/L1->GM) store, a pop an MTE2
load (GM->UB/L1). Pushes and pops are :class:`DpsOp` with no ``outs``: a
push's ``ins`` is its tile, a pop's ``ins`` its optional valid dims, and the
pop's result is the tile it writes.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from .attrs import AddressSpace, Pipe
from .base import DpsOp, PTOOp, tile_of
from .types import DYNAMIC, TileBufType

TileLike = TileBufType | MemRefType
SPLITS = (0, 1, 2)


def _check_split(op: PTOOp) -> None:
    split = op.attributes.get("split")
    assert isinstance(split, IntegerAttr)
    if split.value.data not in SPLITS:
        raise op.fail(f"split must be 0, 1 or 2, got {split.value.data}")


def _print_attrs(printer: Printer, op: PTOOp) -> None:
    """`` {split = N, ...}``: ``split`` without its ``: i64`` (the default integer type)."""
    if not op.attributes:
        return
    printer.print_string(" {")

    def entry(item: tuple[str, Attribute]) -> None:
        name, value = item
        printer.print_identifier_or_string_literal(name)
        if name == "split" and isinstance(value, IntegerAttr) and value.type == i64:
            printer.print_string(f" = {value.value.data}")
            return
        printer.print_string(" = ")
        printer.print_attribute(value)

    printer.print_list(op.attributes.items(), entry)
    printer.print_string("}")


def _check_on_chip(op: PTOOp, t: Attribute, what: str, value: SSAValue | None = None) -> None:
    tile = tile_of(t)
    if tile is None or tile.space is None or tile.space == AddressSpace.gm:
        raise op.fail(f"{what} must be an on-chip tile (!pto.tile_buf or address-space memref), got {t}", value)


class _PushOp(DpsOp):
    """``(%t : T) {split = N}``: send an on-chip tile to the other core kind."""

    OUTSIDE_RUN: ClassVar[bool] = True

    OUTS: ClassVar[int] = 0
    DIRECTION: ClassVar[str] = ""
    tile = operand_def(TileLike)  # type: ignore[assignment]  (shadows PTOOp.tile(); unused here)
    split = attr_def(IntegerAttr[IntegerType])

    @classmethod
    def parse(cls, parser: Parser) -> _PushOp:
        """Parse ``(%t : T) {split = N}``."""
        start = parser.pos
        parser.parse_punctuation("(")
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        (value,) = parser.resolve_operands([operand], [ty], start)
        return cls.build(operands=[value], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print ``(%t : T) {split = N}``."""
        printer.print_string("(")
        printer.print_operand(self.tile)
        printer.print_string(" : ")
        printer.print_attribute(self.tile.type)
        printer.print_string(")")
        _print_attrs(printer, self)

    def verify_(self) -> None:
        """split in {0, 1, 2}; the tile is on chip."""
        _check_split(self)
        _check_on_chip(self, self.tile.type, "tile", self.tile)

    def pipe(self) -> Pipe | None:
        """PIPE_FIX for an ``acc`` tile (L0C->GM), else PIPE_MTE3 (UB/L1->GM)."""
        tile = tile_of(self.tile.type)
        if tile is not None and tile.space == AddressSpace.acc:
            return Pipe.PIPE_FIX
        return Pipe.PIPE_MTE3


@irdl_op_definition
class TPushToAivOp(_PushOp):
    """Cube pushes a tile to the vector core (``TPUSH`` c2v)."""

    name = "pto.tpush_to_aiv"
    DIRECTION: ClassVar[str] = "c2v"


@irdl_op_definition
class TPushToAicOp(_PushOp):
    """Vector pushes a tile to the cube core (``TPUSH`` v2c)."""

    name = "pto.tpush_to_aic"
    DIRECTION: ClassVar[str] = "v2c"


class _PopOp(DpsOp):
    """``[(%vr, %vc)] {split = N} -> T``: receive a tile the other core kind pushed."""

    OUTSIDE_RUN: ClassVar[bool] = True

    OUTS: ClassVar[int] = 0
    DIRECTION: ClassVar[str] = ""
    valid_row = opt_operand_def(IndexType)
    valid_col = opt_operand_def(IndexType)
    result = result_def(TileLike)
    split = attr_def(IntegerAttr[IntegerType])
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def parse(cls, parser: Parser) -> _PopOp:
        """Parse ``[(%vr, %vc)] {split = N} -> T``."""
        start = parser.pos
        dims: list[SSAValue] = []
        if parser.parse_optional_punctuation("(") is not None:
            names = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
            parser.parse_punctuation(")")
            if len(names) != 2:
                parser.raise_error(
                    f"'{cls.name}' expects 2 valid dims (valid_row, valid_col), got {len(names)}", start, parser.pos
                )
            dims = list(parser.resolve_operands(names, [IndexType()] * len(names), start))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation("->")
        ty = parser.parse_type()
        row, col = ([dims[0]], [dims[1]]) if dims else ([], [])
        return cls.build(operands=[row, col], result_types=[ty], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print ``[(%vr, %vc)] {split = N} -> T``."""
        dims = list(self.operands)
        if dims:
            printer.print_string("(")
            printer.print_list(dims, printer.print_operand)
            printer.print_string(")")
        _print_attrs(printer, self)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        """split in {0, 1, 2}; valid_row and valid_col both or neither; the result is on chip."""
        _check_split(self)
        if (self.valid_row is None) != (self.valid_col is None):
            raise self.fail("expects valid_row and valid_col operands to be provided together")
        _check_on_chip(self, self.result.type, "result")
        t = self.result.type
        if (
            self.valid_row is not None
            and isinstance(t, TileBufType)
            and DYNAMIC not in (t.spec().v_row, t.spec().v_col)
        ):
            raise self.fail(
                "expects tile result to have dynamic validShape (?, ?) when valid_row/valid_col operands are provided"
            )

    def pipe(self) -> Pipe | None:
        """PIPE_MTE2 (GM->UB/L1)."""
        return Pipe.PIPE_MTE2


@irdl_op_definition
class TPopFromAicOp(_PopOp):
    """Vector pops a tile the cube pushed (``TPOP`` c2v)."""

    name = "pto.tpop_from_aic"
    DIRECTION: ClassVar[str] = "c2v"


@irdl_op_definition
class TPopFromAivOp(_PopOp):
    """Cube pops a tile the vector pushed (``TPOP`` v2c)."""

    name = "pto.tpop_from_aiv"
    DIRECTION: ClassVar[str] = "v2c"


class _FreeOp(PTOOp):
    """``{split = N}``: release the pipe slot of the last pop."""

    OUTSIDE_RUN: ClassVar[bool] = True

    DIRECTION: ClassVar[str] = ""
    split = attr_def(IntegerAttr[IntegerType])

    @classmethod
    def parse(cls, parser: Parser) -> _FreeOp:
        """Parse ``{split = N}``."""
        return cls.build(attributes=parser.parse_optional_attr_dict())

    def print(self, printer: Printer) -> None:
        """Print `` {split = N}``."""
        _print_attrs(printer, self)

    def verify_(self) -> None:
        """split in {0, 1, 2}."""
        _check_split(self)


@irdl_op_definition
class TFreeFromAicOp(_FreeOp):
    """Vector releases the slot of a tile popped from the cube (c2v)."""

    name = "pto.tfree_from_aic"
    DIRECTION: ClassVar[str] = "c2v"


@irdl_op_definition
class TFreeFromAivOp(_FreeOp):
    """Cube releases the slot of a tile popped from the vector (v2c)."""

    name = "pto.tfree_from_aiv"
    DIRECTION: ClassVar[str] = "v2c"


PIPE_OPS: tuple[type[PTOOp], ...] = (
    TPushToAivOp,
    TPushToAicOp,
    TPopFromAicOp,
    TPopFromAivOp,
    TFreeFromAicOp,
    TFreeFromAivOp,
)
