"""What every ``pto`` tile op shares: operand views, diagnostics, the ``ins/outs`` syntax.

Tile ops are destination-passing style: ``pto.tadd ins(%a, %b : T, T) outs(%d : T)``.
:class:`DpsOp` gives them one custom parser/printer driven by their IRDL operand
definitions: the operands before the last ``OUTS`` ones are the ``ins``, optional
operands (``opt_operand_def``) are filled from the written operands left to right.
The attribute dictionary goes after ``outs(...)`` or, for ops with
``ATTRS_IN_INS`` (tcvt, tcmp, tcolsum), inside ``ins(... {attrs} : ...)`` as
PTOAS prints it; both places are accepted when parsing.

Operands may be ``!pto.tile_buf`` or the internal form
``memref<RxCxT, #pto.address_space<vec>>``; :func:`tile_of` reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, OptOperandDef, VarOperandDef, VerificationContext
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .attrs import AddressSpace, AddressSpaceAttr, BLayout, Pipe
from .types import DYNAMIC, PartitionTensorViewType, TileBufType, element_bits

A2A3 = "a2a3"
A5 = "a5"


@dataclass(frozen=True)
class Tile:
    """An on-chip operand seen uniformly (tile_buf or memref in an address space)."""

    space: AddressSpace | None
    dtype: Attribute
    shape: tuple[int, int]
    valid: tuple[int, int]
    blayout: BLayout | None

    def valid_static(self) -> bool:
        """Both valid dims are known."""
        return DYNAMIC not in self.valid

    def valid_count(self) -> int | None:
        """Number of valid elements, None if dynamic."""
        return self.valid[0] * self.valid[1] if self.valid_static() else None


def tile_of(t: Attribute) -> Tile | None:
    """The tile view of a type, or None if it is not an on-chip buffer type."""
    if isinstance(t, TileBufType):
        return Tile(t.space, t.dtype, t.get_shape(), t.valid_shape(), BLayout(t.blayout.data))
    if isinstance(t, MemRefType):
        space = t.memory_space
        loc = AddressSpace(space.data) if isinstance(space, AddressSpaceAttr) else None
        dims = tuple(t.get_shape())
        if len(dims) == 1:
            dims = (1, dims[0])
        if len(dims) > 2:  # PTOAS's N-D local memrefs (e.g. 16x16x16xf16): leading dims fold into rows
            lead = 1
            for d in dims[:-1]:
                lead = -1 if d < 0 or lead < 0 else lead * d
            dims = (lead, dims[-1])
        shape = (dims[0] if dims[0] >= 0 else DYNAMIC, dims[1] if dims[1] >= 0 else DYNAMIC)
        return Tile(loc, t.element_type, shape, shape, None)
    return None


def is_scalar_type(t: Attribute) -> bool:
    """A builtin integer, index or float type."""
    return isinstance(t, IntegerType | IndexType | AnyFloat)


def describe(t: Attribute) -> str:
    """Short text of a type for messages."""
    tile = tile_of(t)
    if tile is not None and isinstance(t, TileBufType):
        v = "x".join("?" if d == DYNAMIC else str(d) for d in tile.valid)
        return f"tile_buf<{tile.space}, {tile.shape[0]}x{tile.shape[1]}x{tile.dtype}, valid {v}>"
    return str(t)


def same_dims(a: Sequence[int], b: Sequence[int]) -> bool:
    """Equal where both are static."""
    return len(a) == len(b) and all(x == y or DYNAMIC in (x, y) for x, y in zip(a, b, strict=True))


def target_arch(op: Operation) -> str:
    """``a2a3`` or ``a5`` from the enclosing module's ``pto.target_arch`` (default a2a3, as ptoas)."""
    parent: Operation | None = op
    while parent is not None:
        if isinstance(parent, ModuleOp):
            arch = parent.attributes.get("pto.target_arch")
            if isinstance(arch, StringAttr):
                return A5 if arch.data.lower() == "a5" else A2A3
        parent = parent.parent_op()
    return A2A3


class PTOOp(IRDLOperation):
    """Base of all ``pto`` ops: diagnostics that name the op and the operand.

    ``NO_INTERPRETER`` / ``NO_CPP``: why an op has no interpreter handler / no C++
    emitter (test_op_facts fails for an op that lacks one without a reason).
    ``VALUE_OF_OPERANDS``: its results are functions of its operands and the launch's block alone (it
    reads no memory): a tile's or a view's handle, a shape, an address, a block index.
    ``OUTSIDE_RUN``: what it does depends on state outside one core's run (another core or rank, a
    channel, an async DMA session, a cross-core flag): two runs of the same instructions may differ.
    """

    NO_INTERPRETER: ClassVar[str | None] = None
    NO_CPP: ClassVar[str | None] = None
    VALUE_OF_OPERANDS: ClassVar[bool] = False
    OUTSIDE_RUN: ClassVar[bool] = False

    @classmethod
    def create(cls, *, properties: Mapping[str, Attribute] = {}, attributes: Mapping[str, Attribute] = {}, **kw: Any):  # noqa: B006
        """PTOAS's generic form keeps inherent attributes in ``<{...}>`` (properties): the ones this op
        defines as attributes (``reluPreMode`` ...) are moved there."""
        defined = cls.get_irdl_definition().attributes
        moved = {k: v for k, v in properties.items() if k in defined}
        if moved:
            properties = {k: v for k, v in properties.items() if k not in moved}
            attributes = {**attributes, **moved}
        return super().create(properties=properties, attributes=attributes, **kw)

    def operand_name(self, value: SSAValue) -> str:
        """``name (%hint)`` of an operand: its IRDL field name and its SSA name."""
        field = "operand"
        for name, _ in type(self).get_irdl_definition().operands:
            got = getattr(self, name)
            if got is value or (isinstance(got, Sequence) and value in got):
                field = name
                break
        return f"{field} (%{value.name_hint})" if value.name_hint else field

    def fail(self, message: str, operand: SSAValue | None = None) -> VerifyException:
        """A VerifyException ``'pto.x' op message [operand src1 (%t)]``: PTOAS's wording first (its
        tests check the text after ``op``), then the operand it is about."""
        where = f" [operand {self.operand_name(operand)}]" if operand is not None else ""
        return VerifyException(f"'{self.name}' op {message}{where}")

    def tile(self, value: SSAValue, *spaces: AddressSpace) -> Tile:
        """The operand as a tile; it must be one and, if given, in one of ``spaces``."""
        tile = tile_of(value.type)
        if tile is None:
            raise self.fail(f"expects a !pto.tile_buf or an address-space memref, got {value.type}", value)
        if spaces and tile.space is not None and tile.space not in spaces:
            allowed = "/".join(s.value for s in spaces)
            raise self.fail(f"expects loc={allowed}, got loc={tile.space.value}", value)
        return tile

    def scalar_type(self, value: SSAValue) -> Attribute:
        """The operand's type; it must be an integer, index or float scalar."""
        if not is_scalar_type(value.type):
            raise self.fail(f"expects a scalar (integer or float), got {value.type}", value)
        return value.type

    def same_valid(self, a: SSAValue, b: SSAValue, what: str = "valid shape") -> None:
        """``b``'s valid shape equals ``a``'s where both are static."""
        ta, tb = tile_of(a.type), tile_of(b.type)
        if ta is not None and tb is not None and not same_dims(ta.valid, tb.valid):
            raise self.fail(f"{what} {_shape(tb.valid)} differs from {_shape(ta.valid)} of {self.operand_name(a)}", b)

    def same_dtype(self, a: SSAValue, b: SSAValue) -> None:
        """``b``'s element type equals ``a``'s."""
        ta, tb = tile_of(a.type), tile_of(b.type)
        if ta is not None and tb is not None and ta.dtype != tb.dtype:
            raise self.fail(f"dtype {tb.dtype} differs from {ta.dtype} of {self.operand_name(a)}", b)

    def pipe(self) -> Pipe | None:
        """The hardware pipe this op runs on (None: not a pipe op)."""
        return None


def _shape(dims: Sequence[int]) -> str:
    return "x".join("?" if d == DYNAMIC else str(d) for d in dims)


def dims_text(dims: Sequence[int]) -> str:
    """``16x?`` text of a dim list."""
    return _shape(dims)


def partition_count(t: Attribute) -> int | None:
    """Element count of a static partition view, None otherwise."""
    if isinstance(t, PartitionTensorViewType) and t.is_static():
        n = 1
        for d in t.get_shape():
            n *= d
        return n
    if isinstance(t, MemRefType) and all(d >= 0 for d in t.get_shape()):
        n = 1
        for d in t.get_shape():
            n *= d
        return n
    return None


def same_width(a: Attribute, b: Attribute) -> bool:
    """Same element bit width."""
    return element_bits(a) == element_bits(b)


class DpsOp(PTOOp):
    """A destination-passing tile op written ``ins(...) outs(...)``."""

    OUTS: ClassVar[int] = 1
    ATTRS_IN_INS: ClassVar[bool] = False
    INTERLEAVED_INS: ClassVar[bool] = False  # print ``ins(%a : T, %b : T2)`` (tstore with pre-quant)
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_V

    WRITES_DST_VALID: ClassVar[bool] = False
    """The op writes every element of its destination's valid region and reads none of the destination's
    old contents (so in the C++ header; emitc's 0xFF fill analysis, :mod:`pypto.ptoas.emitc.fill`)."""

    def pipe(self) -> Pipe | None:
        """The op's pipe (vector ops: PIPE_V)."""
        return self.PIPE

    def write_extent(
        self, dst: SSAValue, valid: Callable[[SSAValue], tuple[int, int] | None]
    ) -> tuple[int, int] | None:
        """The rows x cols from the origin of its destination ``dst`` that the op writes without reading
        them, given ``valid`` (an operand's static valid shape, None when it is not static). None: not
        known, or the op may keep or read what ``dst`` held (a partial or read-modify-write)."""
        if self.WRITES_DST_VALID and dst in self.outs():
            return valid(dst)
        return None

    def scratch(self) -> list[SSAValue]:
        """Operands whose contents the result does not depend on (none unless the op says so)."""
        return []

    @classmethod
    def operands_from(cls, ins: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue | list[SSAValue]]:
        """The IRDL operand list for these ``ins`` and ``outs`` (ins first, optional ones matched by type)."""
        return _fill_defs(cls, ins, outs)

    def ins(self) -> list[SSAValue]:
        """The ``ins`` operands in order."""
        return list(self.operands[: len(self.operands) - self.OUTS])

    def outs(self) -> list[SSAValue]:
        """The ``outs`` operands (the destinations)."""
        return list(self.operands[len(self.operands) - self.OUTS :])

    @classmethod
    def _count_error(cls, n_ins: int, n_outs: int) -> str | None:
        """Why these operand counts do not fit the op's IRDL operands (None if they do)."""
        defs = cls.get_irdl_definition().operands
        in_defs = defs[: len(defs) - cls.OUTS]
        required = sum(1 for _, d in in_defs if not isinstance(d, VarOperandDef))
        optional = sum(1 for _, d in in_defs if isinstance(d, OptOperandDef))
        if not required <= n_ins <= required + optional:
            want = str(required) if not optional else f"{required}..{required + optional}"
            return f"expects {want} ins operands, got {n_ins}"
        if n_outs != cls.OUTS:
            return f"expects {cls.OUTS} outs operand(s), got {n_outs}"
        return None

    @classmethod
    def parse(cls, parser: Parser) -> DpsOp:
        """Parse ``ins(%a, %b [{attrs}] : T, T) outs(%d : T) [{attrs}]``."""
        start = parser.pos
        parser.parse_keyword("ins")
        ins, attrs, in_types = _parse_group(parser, allow_attrs=True)
        outs: list[UnresolvedOperand] = []
        out_types: list[Attribute] = []
        if cls.OUTS:
            parser.parse_keyword("outs")
            outs, _, out_types = _parse_group(parser, allow_attrs=False)
        attrs.update(parser.parse_optional_attr_dict())
        err = cls._count_error(len(ins), len(outs))
        if err is not None:
            parser.raise_error(f"'{cls.name}' {err}", start, parser.pos)
        in_values = parser.resolve_operands(ins, in_types, start)
        out_values = parser.resolve_operands(outs, out_types, start)
        try:
            operands = _fill_defs(cls, list(in_values), list(out_values))
        except ValueError as e:
            parser.raise_error(str(e), start, parser.pos)
        return cls.build(operands=operands, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print the ``ins/outs`` form."""
        ins, outs = self.ins(), self.outs()
        printer.print_string(" ins(")
        if self.INTERLEAVED_INS:
            printer.print_list(ins, lambda v: (printer.print_operand(v), printer.print_string(" : "), printer.print_attribute(v.type)))
        else:
            printer.print_list(ins, printer.print_operand)
            if self.ATTRS_IN_INS and self.attributes:
                printer.print_string(" ")
                printer.print_attr_dict(self.attributes)
            printer.print_string(" : ")
            printer.print_list([v.type for v in ins], printer.print_attribute)
        printer.print_string(")")
        if outs:
            printer.print_string(" outs(")
            printer.print_list(outs, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in outs], printer.print_attribute)
            printer.print_string(")")
        if not self.ATTRS_IN_INS:
            printer.print_op_attributes(self.attributes)


def _parse_group(parser: Parser, allow_attrs: bool) -> tuple[list[UnresolvedOperand], dict[str, Attribute], list[Attribute]]:
    """``( %a, %b [{attrs}] : T1, T2 )``; also the interleaved ``( %a : T1, %b : T2 )``."""
    parser.parse_punctuation("(")
    values = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(",") is not None:
        values.append(parser.parse_unresolved_operand())
    attrs = parser.parse_optional_attr_dict() if allow_attrs else {}
    parser.parse_punctuation(":")
    types = [parser.parse_type()]
    while parser.parse_optional_punctuation(",") is not None:
        more = parser.parse_optional_unresolved_operand()
        if more is not None:
            values.append(more)
            parser.parse_punctuation(":")
        types.append(parser.parse_type())
    parser.parse_punctuation(")")
    return values, attrs, types


def _fits(d: OptOperandDef, value: SSAValue) -> bool:
    """Does ``value``'s type satisfy the optional operand's constraint? (picks tmov's fp vs pre-quant scalar)."""
    try:
        d.constr.verify((value.type,), VerificationContext())
    except VerifyException:
        return False
    return True


def _fill_defs(cls: type[DpsOp], ins: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue | list[SSAValue]]:
    """One entry per IRDL operand def: a value, or a list for optional defs."""
    defs = cls.get_irdl_definition().operands
    in_defs = defs[: len(defs) - cls.OUTS]
    required = sum(1 for _, d in in_defs if not isinstance(d, VarOperandDef))
    extra = len(ins) - required
    result: list[SSAValue | list[SSAValue]] = []
    pending = list(ins)
    for i, (_, d) in enumerate(in_defs):
        if isinstance(d, OptOperandDef):
            later_required = sum(1 for _, e in in_defs[i + 1 :] if not isinstance(e, VarOperandDef))
            fits = extra > 0 and len(pending) > later_required and _fits(d, pending[0])
            if fits:
                result.append([pending.pop(0)])
                extra -= 1
            else:
                result.append([])
        else:
            result.append(pending.pop(0))
    if pending:
        raise ValueError(f"'{cls.name}' ins operand of type {pending[0].type} fits no optional operand")
    result.extend(outs)
    return result


def fill_operands(cls: type[DpsOp], ins: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue | list[SSAValue]]:
    """The IRDL operand list of a DPS op from its ``ins`` and ``outs`` (optional operands by type, else empty)."""
    return cls.operands_from(ins, outs)


def parse_group(parser: Parser, allow_attrs: bool) -> tuple[list[UnresolvedOperand], dict[str, Attribute], list[Attribute]]:
    """``( %a, %b [{attrs}] : T1, T2 )`` or the interleaved ``( %a : T1, %b : T2 )`` (for custom DPS parsers)."""
    return _parse_group(parser, allow_attrs)

