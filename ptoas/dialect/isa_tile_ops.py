"""The rest of PTOAS's destination-passing tile ops (PTOOps.td), in the ``ins(...) outs(...)`` syntax.

::

    pto.tconcat ins(%a, %b : T, T) outs(%d : T)
    pto.tfmod ins(%a, %b : T, T) outs(%d : T)          pto.tfmods ins(%a, %s : T, f32) outs(%d : T)
    pto.tcolprod ins(%s : T) outs(%d : T1)              pto.tcolargmax ins(%s, %tmp : T, T) outs(%d : Ti)
    pto.tci ins(%s {descending = true} : i32) outs(%d : T)
    pto.ttri ins(%diag {upperOrLower = 1 : i32} : i32) outs(%d : T)
    pto.trandom ins(%k0, %k1, %c0, %c1, %c2, %c3 {rounds = 7 : i32} : i32, ...) outs(%d : T)
    pto.tsels ins(%mask, %src, %tmp, %s : Tm, T, T, f32) outs(%d : T)
    pto.tsort32 ins(%src, %idx[, %tmp] : T, Tu32[, T]) outs(%d : T2)
    pto.tmrgsort ins(%src, %blockLen : T, i32) outs(%d : T)                       (format 1)
    pto.tmrgsort ins(%s0, %s1[, %s2, %s3], %tmp {exhausted = false} : ...) outs(%d, %exec : T, vector<4xi16>)
    pto.tgather ins(%src, %indices[, %tmp] : ...) outs(%d : T)                    (index form)
    pto.tgather ins(%src, %k[, %tmp] : T, f16[, T]) outs(%d, %cdst : T, T2)       (compare form)
    pto.tgather ins(%src, {maskPattern = #pto.mask_pattern<P0101>} : T) outs(%d : T)   (mask form)
    pto.tquant ins(%src, %fp[, %offset] : ...) outs(%d : T) {quant_type = #pto<quant_type INT8_SYM>}
    pto.tgetval ins(%src, %off : T, index) outs : f32
    pto.tsync ins(%a, %b : T, T)

Each op's pipe is a class fact (``PIPE`` or ``pipe()``), as PTOAS's ``getPipe``.
``A5_ONLY`` ops are rejected on a2a3 with PTOAS's message.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer

from .attrs import AddressSpace, BLayout, CmpModeAttr, Pipe
from .base import A2A3, DpsOp, dims_text, target_arch, tile_of
from .isa_attrs import GatherOOBAttr, MaskPatternAttr, QuantType, QuantTypeAttr, ScatterAtomicOpAttr, ScatterOOBAttr
from .types import DYNAMIC, PartitionTensorViewType, TileBufType, element_bits

S = AddressSpace
Dps = TileBufType | MemRefType | PartitionTensorViewType


def elem_of(t: Attribute) -> Attribute | None:
    """Element type of a tile, memref or view."""
    tile = tile_of(t)
    if tile is not None:
        return tile.dtype
    if isinstance(t, PartitionTensorViewType | MemRefType):
        return t.element_type
    return None


def _is_int(t: Attribute | None, *widths: int, unsigned: bool | None = None) -> bool:
    if not isinstance(t, IntegerType) or (widths and t.width.data not in widths):
        return False
    if unsigned is None:
        return True
    return (t.signedness.data == Signedness.UNSIGNED) == unsigned


def _is_float(t: Attribute | None, *widths: int) -> bool:
    return isinstance(t, AnyFloat) and (not widths or element_bits(t) in widths)


class IsaOp(DpsOp):
    """Shared checks of the ISA ops."""

    A5_ONLY: ClassVar[str | None] = None  # PTOAS's message when the op is used on a2a3

    def verify_(self) -> None:
        """The a5-only rule, then :meth:`check`."""
        if self.A5_ONLY is not None and target_arch(self) == A2A3:
            raise self.fail(self.A5_ONLY)
        self.check()

    def check(self) -> None:
        """Op-specific rules (none by default)."""

    def loc(self, value: SSAValue, *spaces: AddressSpace, name: str = "") -> None:
        """``value`` is a tile in one of ``spaces`` (PTOAS wording)."""
        t = tile_of(value.type)
        if t is not None and t.space is not None and t.space not in spaces:
            what = name or self.operand_name(value).split(" ")[0]
            raise self.fail(f"expects {what} to use loc={'/'.join(s.value for s in spaces)}")

    def row_major(self, *values: SSAValue, what: str) -> None:
        """All ``values`` are row-major tiles."""
        for v in values:
            t = tile_of(v.type)
            if t is not None and t.blayout is not None and t.blayout != BLayout.row_major:
                raise self.fail(f"expects {what} to use row-major layout")

    def same_elem(self, *values: SSAValue, what: str) -> Attribute | None:
        """All ``values`` have one element type (returned)."""
        elems = [elem_of(v.type) for v in values]
        if any(e != elems[0] for e in elems):
            raise self.fail(f"expects {what} to have the same element type")
        return elems[0]


def _isa(cls: type[IsaOp]) -> type[IsaOp]:
    return irdl_op_definition(cls)


# --- element-wise and reductions -------------------------------------------------------------


@_isa
class TFModOp(IsaOp):
    """``dst = fmod(src0, src1)`` (C ``fmod``: the sign of the dividend)."""

    name = "pto.tfmod"
    KIND: ClassVar[str] = "fmod"
    src0 = operand_def(Dps)
    src1 = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """Row-major, i32/i16/f16/f32, one element type."""
        self.row_major(self.src0, self.src1, self.dst, what="src0, src1, and dst")
        e = self.same_elem(self.src0, self.src1, self.dst, what="src0, src1, and dst")
        if not (_is_int(e, 16, 32) or _is_float(e, 16, 32)):
            arch = "A2/A3" if target_arch(self) == A2A3 else "A5"
            raise self.fail(f"expects {arch} tfmod element type to be i32/i16/f16/f32")
        self.same_valid(self.dst, self.src0)
        self.same_valid(self.dst, self.src1)


@_isa
class TFModSOp(IsaOp):
    """``dst = fmod(src, scalar)``."""

    name = "pto.tfmods"
    KIND: ClassVar[str] = "fmod"
    src = operand_def(Dps)
    scalar = operand_def(AnyAttr())
    dst = operand_def(Dps)

    def check(self) -> None:
        """Row-major, one element type, a scalar."""
        self.row_major(self.src, self.dst, what="src and dst")
        self.same_elem(self.src, self.dst, what="src and dst")
        self.scalar_type(self.scalar)
        self.same_valid(self.dst, self.src)


@_isa
class TConcatOp(IsaOp):
    """``dst = [src0 | src1]`` along columns (valid cols of src0 then of src1)."""

    name = "pto.tconcat"
    src0 = operand_def(Dps)
    src1 = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """vec, row-major, one element type; rows agree; the cols fit."""
        for name, v in (("src0", self.src0), ("src1", self.src1), ("dst", self.dst)):
            self.loc(v, S.vec, name=name)
        self.same_elem(self.src0, self.src1, self.dst, what="src0, src1, and dst")
        self.row_major(self.src0, self.src1, self.dst, what="src0, src1, and dst")
        a, b, d = tile_of(self.src0.type), tile_of(self.src1.type), tile_of(self.dst.type)
        if a is None or b is None or d is None:
            return
        for name, t in (("src0", a), ("src1", b)):
            if DYNAMIC not in (t.valid[0], d.valid[0]) and t.valid[0] != d.valid[0]:
                raise self.fail(f"expects {name} valid row to match dst valid row")
        if DYNAMIC not in (a.valid[1], b.valid[1]) and a.valid[1] + b.valid[1] > d.shape[1]:
            raise self.fail("expects src0.valid_col + src1.valid_col <= dst.cols")


class _ColReduce(IsaOp):
    """One value per column: dst valid = 1 x src valid cols."""

    def check_cols(self) -> None:
        """vec tiles; dst has one row and src's valid cols."""
        self.loc(self.src, S.vec, name="src")  # type: ignore[attr-defined]
        self.loc(self.dst, S.vec, name="dst")  # type: ignore[attr-defined]
        s, d = tile_of(self.src.type), tile_of(self.dst.type)  # type: ignore[attr-defined]
        if s is None or d is None:
            return
        if d.valid[0] not in (1, DYNAMIC):
            raise self.fail(f"expects dst valid rows to be 1, got {d.valid[0]}")
        if DYNAMIC not in (s.valid[1], d.valid[1]) and s.valid[1] != d.valid[1]:
            raise self.fail(f"expects dst valid cols {d.valid[1]} to equal src valid cols {s.valid[1]}")


@_isa
class TColProdOp(_ColReduce):
    """Column product."""

    name = "pto.tcolprod"
    KIND: ClassVar[str] = "prod"
    src = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """Column-reduction shape; one element type."""
        self.check_cols()
        self.same_elem(self.src, self.dst, what="src and dst")


class _ColArgOp(_ColReduce):
    """``ins(%src, %tmp) outs(%dst)``: one index per column."""

    src = operand_def(Dps)
    tmp = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """Column-reduction shape; integer indices."""
        self.check_cols()
        if not _is_int(elem_of(self.dst.type), 32):
            raise self.fail("expects dst element type to be i32/ui32")


@_isa
class TColArgMaxOp(_ColArgOp):
    """Index of each column's max (first on ties)."""

    name = "pto.tcolargmax"
    KIND: ClassVar[str] = "argmax"


@_isa
class TColArgMinOp(_ColArgOp):
    """Index of each column's min (first on ties)."""

    name = "pto.tcolargmin"
    KIND: ClassVar[str] = "argmin"


class _FillPadOp(IsaOp):
    """``ins(%src) outs(%dst)``: copy the valid region, fill the rest with dst's ``pad`` value."""

    src = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """One element type; src no larger than dst."""
        self.same_elem(self.src, self.dst, what="src and dst")
        s, d = tile_of(self.src.type), tile_of(self.dst.type)
        if s is not None and d is not None and (s.shape[0] > d.shape[0] or s.shape[1] > d.shape[1]):
            raise self.fail(f"expects src shape {dims_text(s.shape)} to fit in dst {dims_text(d.shape)}")


@_isa
class TFillPadExpandOp(_FillPadOp):
    """Copy src's valid region into dst and fill dst's pad (dst's ``pad`` value) outside it."""

    name = "pto.tfillpad_expand"


@_isa
class TFillPadInplaceOp(_FillPadOp):
    """Fill the pad region of a tile in place (src and dst are usually the same tile)."""

    name = "pto.tfillpad_inplace"


# --- generators ----------------------------------------------------------------------------


@_isa
class TCIOp(IsaOp):
    """``dst[i] = S + i`` (``descending``: ``S - i``), row-major over the valid region."""

    name = "pto.tci"
    ATTRS_IN_INS: ClassVar[bool] = True
    start = operand_def(IntegerType)
    dst = operand_def(Dps)
    descending = opt_attr_def(BoolAttr)

    def check(self) -> None:
        """Integer destination of the scalar's type."""
        e = elem_of(self.dst.type)
        if not _is_int(e):
            raise self.fail(f"expects dst element type to be an integer, got {e}")
        if isinstance(self.start.type, IntegerType) and element_bits(self.start.type) != element_bits(e):
            raise self.fail(f"expects S ({self.start.type}) to have the width of the dst element type {e}")


@_isa
class TTriOp(IsaOp):
    """Triangular 0/1 mask: ``upperOrLower`` 0 keeps ``j <= i + diagonal``, 1 keeps ``j >= i + diagonal``."""

    name = "pto.ttri"
    ATTRS_IN_INS: ClassVar[bool] = True
    diagonal = operand_def(IntegerType)
    dst = operand_def(Dps)
    upperOrLower = opt_attr_def(IntegerAttr)  # noqa: N815

    def lower(self) -> bool:
        """True for the lower triangle (the default)."""
        a = self.upperOrLower
        return a is None or a.value.data == 0

    def check(self) -> None:
        """upperOrLower is 0 or 1."""
        if self.upperOrLower is not None and self.upperOrLower.value.data not in (0, 1):
            raise self.fail("expects upperOrLower to be 0 (lower) or 1 (upper)")


@_isa
class TRandomOp(IsaOp):
    """Philox random bits (A5): key (2 x i32), counter (4 x i32), ``rounds`` 7 or 10."""

    name = "pto.trandom"
    ATTRS_IN_INS: ClassVar[bool] = True
    A5_ONLY: ClassVar[str | None] = "trandom is only supported for A5 targets"
    key0 = operand_def(IntegerType)
    key1 = operand_def(IntegerType)
    counter0 = operand_def(IntegerType)
    counter1 = operand_def(IntegerType)
    counter2 = operand_def(IntegerType)
    counter3 = operand_def(IntegerType)
    dst = operand_def(Dps)
    rounds = opt_attr_def(IntegerAttr)

    def check(self) -> None:
        """i32 keys and counters; i32/ui32 dst; rounds 7 or 10."""
        self.row_major(self.dst, what="dst")
        if not _is_int(elem_of(self.dst.type), 32):
            raise self.fail("expects dst element type to be i32 or ui32")
        for name in ("key0", "key1", "counter0", "counter1", "counter2", "counter3"):
            if not _is_int(getattr(self, name).type, 32):
                raise self.fail(f"expects {name} to be i32/ui32")
        if self.rounds is not None and self.rounds.value.data not in (7, 10):
            raise self.fail("expects rounds to be 7 or 10")


# --- selection, sort, gather/scatter -------------------------------------------------------


@_isa
class TSelSOp(IsaOp):
    """``dst = mask ? src : scalar`` (mask bits per element)."""

    name = "pto.tsels"
    mask = operand_def(Dps)
    src = operand_def(Dps)
    tmp = operand_def(Dps)
    scalar = operand_def(AnyAttr())
    dst = operand_def(Dps)

    def check(self) -> None:
        """One element type; row-major; allowed dtypes per arch."""
        e = self.same_elem(self.src, self.dst, what="src and dst")
        self.row_major(self.src, self.dst, what="src and dst")
        self.scalar_type(self.scalar)
        if target_arch(self) == A2A3:
            if not (_is_int(e, 16, 32) or _is_float(e, 16, 32)):
                raise self.fail("expects A2/A3 tsels src and dst element type to be i16, i32, f16, or f32")
        elif not (_is_int(e, 8, 16, 32) or _is_float(e, 16, 32)):
            raise self.fail("expects A5 tsels src and dst element type to be i8, i16, i32, f16, or f32")


@_isa
class TSort32Op(IsaOp):
    """Sort each block of 32 values descending; dst holds (value, index) pairs."""

    name = "pto.tsort32"
    src = operand_def(Dps)
    idx = operand_def(Dps)
    tmp = opt_operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """f16/f32 values, u32 indices."""
        e = self.same_elem(self.src, self.dst, what="src and dst")
        if not _is_float(e, 16, 32):
            raise self.fail("expects src and dst element type to be f16 or f32")
        if not _is_int(elem_of(self.idx.type), 32):
            raise self.fail("expects idx element type to be u32")


@_isa
class TMrgSortOp(IsaOp):
    """Merge sorted lists: format 1 ``ins(%src, %blockLen) outs(%dst)``; format 2 ``ins(srcs.., %tmp) outs(%dst, %excuted)``."""

    name = "pto.tmrgsort"
    OUTS: ClassVar[int] = 1
    srcs = var_operand_def(Dps)
    blockLen = opt_operand_def(IntegerType)  # noqa: N815
    dsts = var_operand_def(Dps)
    tmp = opt_operand_def(Dps)
    excuted = opt_operand_def(AnyAttr())
    exhausted = opt_attr_def(BoolAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def format1(self) -> bool:
        """``ins(%src, %blockLen)``."""
        return self.blockLen is not None

    def ins(self) -> list[SSAValue]:
        """Sources (and blockLen / tmp)."""
        if self.format1():
            return [self.srcs[0], self.blockLen]  # type: ignore[list-item]
        return [*self.srcs, self.tmp]  # type: ignore[list-item]

    def outs(self) -> list[SSAValue]:
        """dst (and the excuted vector)."""
        return [*self.dsts] + ([self.excuted] if self.excuted is not None else [])

    @classmethod
    def parse(cls, parser: Parser) -> TMrgSortOp:
        """Both formats."""
        start = parser.pos
        parser.parse_keyword("ins")
        parser.parse_punctuation("(")
        names = [parser.parse_unresolved_operand()]
        while parser.parse_optional_punctuation(",") is not None:
            names.append(parser.parse_unresolved_operand())
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(",") is not None:
            types.append(parser.parse_type())
        parser.parse_punctuation(")")
        parser.parse_keyword("outs")
        outs, out_types = _parse_values_types(parser)
        attrs.update(parser.parse_optional_attr_dict())
        if len(names) != len(types) or len(outs) != len(out_types):
            parser.raise_error("'pto.tmrgsort' operand and type counts differ", start, parser.pos)
        values = parser.resolve_operands(names, types, start)
        out_values = parser.resolve_operands(outs, out_types, start)
        if len(values) == 2 and isinstance(types[1], IntegerType):
            operands = [[values[0]], [values[1]], list(out_values), [], []]
        else:
            if not 3 <= len(values) <= 5 or len(out_values) != 2:
                parser.raise_error(
                    "tmrgsort format2 expects 2 to 4 src operands plus one tmp operand", start, parser.pos
                )
            operands = [list(values[:-1]), [], [out_values[0]], [values[-1]], [out_values[1]]]
            attrs.setdefault("exhausted", BoolAttr.from_bool(False))
        return cls.build(operands=operands, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's print: format 2 always writes ``{exhausted = ...}``."""
        ins = self.ins()
        printer.print_string(" ins(")
        printer.print_list(ins, printer.print_operand)
        if not self.format1():
            flag = self.exhausted is not None and bool(self.exhausted.value.data)
            printer.print_string(" {exhausted = " + ("true" if flag else "false") + "}")
        printer.print_string(" : ")
        printer.print_list([v.type for v in ins], printer.print_attribute)
        printer.print_string(") outs(")
        outs = self.outs()
        printer.print_list(outs, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in outs], printer.print_attribute)
        printer.print_string(")")
        rest = {k: v for k, v in self.attributes.items() if k != "exhausted"}
        if rest:
            printer.print_string(" ")
            printer.print_attr_dict(rest)

    def check(self) -> None:
        """f16/f32 rows; format 1 block length; format 2 excuted vector<4xi16>."""
        first = self.srcs[0]
        e = self.same_elem(first, self.dsts[0], what="src/dst")
        if not _is_float(e, 16, 32):
            raise self.fail("expects element type to be f16 or f32")
        if self.format1():
            s, d = tile_of(first.type), tile_of(self.dsts[0].type)
            if s is not None and s.shape[0] != 1:
                raise self.fail("expects src rows == 1")
            if d is not None and d.shape[0] != 1:
                raise self.fail("expects dst rows == 1")
            if s is not None and d is not None and s.shape[1] != d.shape[1]:
                raise self.fail("expects src/dst cols to match")
            return
        if not 2 <= len(self.srcs) <= 4:
            raise self.fail("format2 expects 2 to 4 srcs")
        ex = self.excuted.type if self.excuted is not None else None
        if not (isinstance(ex, VectorType) and ex.get_shape() == (4,) and _is_int(ex.element_type, 16)):
            raise self.fail("format2 excuted must be vector<4xi16>")


def _parse_values_types(parser: Parser) -> tuple[list[UnresolvedOperand], list[Attribute]]:
    """``( %a, %b : T, T2 )``."""
    parser.parse_punctuation("(")
    names = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(",") is not None:
        names.append(parser.parse_unresolved_operand())
    parser.parse_punctuation(":")
    types = [parser.parse_type()]
    while parser.parse_optional_punctuation(",") is not None:
        types.append(parser.parse_type())
    parser.parse_punctuation(")")
    return names, types


@_isa
class TGatherOp(IsaOp):
    """Gather within a tile: index form, compare form (``outs(%dst, %cdst)``) or mask-pattern form."""

    name = "pto.tgather"
    src = operand_def(Dps)
    indices = opt_operand_def(Dps)
    tmp = opt_operand_def(Dps)
    kValue = opt_operand_def(AnyAttr())  # noqa: N815
    cdst = opt_operand_def(Dps)
    dst = operand_def(Dps)
    maskPattern = opt_attr_def(MaskPatternAttr)  # noqa: N815
    cmpMode = opt_attr_def(CmpModeAttr)  # noqa: N815
    offset = opt_attr_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def ins(self) -> list[SSAValue]:
        """src, then indices or kValue, then tmp."""
        extra = [v for v in (self.indices, self.kValue, self.tmp) if v is not None]
        return [self.src, *extra]

    def outs(self) -> list[SSAValue]:
        """dst (and cdst)."""
        return [self.dst] + ([self.cdst] if self.cdst is not None else [])

    @classmethod
    def parse(cls, parser: Parser) -> TGatherOp:
        """The three forms, as PTOAS parses them."""
        start = parser.pos
        parser.parse_keyword("ins")
        parser.parse_punctuation("(")
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        attrs: dict[str, Attribute] = {}
        extra: list[UnresolvedOperand] = []
        extra_types: list[Attribute] = []
        if parser.parse_optional_punctuation("{") is not None:
            parser.parse_keyword("maskPattern")
            parser.parse_punctuation("=")
            mp = parser.parse_attribute()
            if not isinstance(mp, MaskPatternAttr):
                parser.raise_error("expected #pto.mask_pattern<Pxxxx> for maskPattern", start, parser.pos)
            attrs["maskPattern"] = mp
            parser.parse_punctuation("}")
            parser.parse_punctuation(":")
            src_t = parser.parse_type()
        else:
            extra.append(parser.parse_unresolved_operand())
            while parser.parse_optional_punctuation(",") is not None:
                extra.append(parser.parse_unresolved_operand())
            if len(extra) > 2:
                parser.raise_error("expected at most 3 extra operands in tgather ins(...)", start, parser.pos)
            parser.parse_punctuation(":")
            src_t = parser.parse_type()
            for _ in extra:
                parser.parse_punctuation(",")
                extra_types.append(parser.parse_type())
        parser.parse_punctuation(")")
        parser.parse_keyword("outs")
        outs, out_types = _parse_values_types(parser)
        if len(outs) != len(out_types) or len(outs) > 2:
            parser.raise_error("'pto.tgather' expects outs(%dst[, %cdst] : T[, T])", start, parser.pos)
        attrs.update(parser.parse_optional_attr_dict())
        (src_v,) = parser.resolve_operands([src], [src_t], start)
        extras = parser.resolve_operands(extra, extra_types, start)
        out_v = parser.resolve_operands(outs, out_types, start)
        has_cdst = len(out_v) == 2
        if "maskPattern" in attrs and (extras or has_cdst):
            parser.raise_error("mask-pattern tgather does not take extra ins operands", start, parser.pos)
        indices: list[SSAValue] = []
        kvalue: list[SSAValue] = []
        if has_cdst:
            if not extras or tile_of(extras[0].type) is not None:
                parser.raise_error("compare-form tgather expects a scalar kValue operand", start, parser.pos)
            kvalue = [extras[0]]
        elif extras:
            if tile_of(extras[0].type) is None:
                parser.raise_error(
                    "index-form tgather expects tile-like indices; compare-form must use outs(dst, cdst)",
                    start,
                    parser.pos,
                )
            indices = [extras[0]]
        tmp = [extras[1]] if len(extras) == 2 else []
        operands = [src_v, indices, tmp, kvalue, [out_v[1]] if has_cdst else [], out_v[0]]
        return cls.build(operands=operands, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's print."""
        printer.print_string(" ins(")
        printer.print_operand(self.src)
        printer.print_string(", ")
        if self.maskPattern is not None:
            printer.print_string("{maskPattern = ")
            printer.print_attribute(self.maskPattern)
            printer.print_string("} : ")
            printer.print_attribute(self.src.type)
        else:
            extra = self.ins()[1:]
            printer.print_list(extra, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([self.src.type, *(v.type for v in extra)], printer.print_attribute)
        printer.print_string(") outs(")
        outs = self.outs()
        printer.print_list(outs, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in outs], printer.print_attribute)
        printer.print_string(")")
        rest = {k: v for k, v in self.attributes.items() if k != "maskPattern"}
        if rest:
            printer.print_string(" ")
            printer.print_attr_dict(rest)

    def check(self) -> None:
        """vec, row-major, element types per form and arch."""
        self.loc(self.src, S.vec, name="src and dst")
        self.loc(self.dst, S.vec, name="src and dst")
        se, de = elem_of(self.src.type), elem_of(self.dst.type)
        if self.cdst is not None:
            mode = self.cmpMode.data.value if self.cmpMode is not None else "eq"
            if target_arch(self) == A2A3 and not (_is_float(se, 16, 32) or (mode == "eq" and _is_int(se, 32))):
                raise self.fail(
                    "expects A2/A3 compare-form tgather src element type to be f16/f32, or i32 when cmpMode=eq"
                )
            return
        self.row_major(self.src, self.dst, what="src and dst")
        if self.maskPattern is not None:
            if element_bits(se) != element_bits(de):
                raise self.fail("expects src and dst element sizes to match")
            return
        if se != de:
            raise self.fail("expects src and dst to have the same element type")
        if self.indices is not None and not _is_int(elem_of(self.indices.type)):
            raise self.fail("indices element type must be integer")


@_isa
class TGatherBOp(IsaOp):
    """Block gather: ``dst`` row r = the 32-byte block of src at byte offset ``offsets[r]``."""

    name = "pto.tgatherb"
    src = operand_def(Dps)
    offsets = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """Row-major dst with 1/2/4-byte elements."""
        self.row_major(self.dst, what="dst")
        if element_bits(elem_of(self.dst.type)) not in (8, 16, 32):
            raise self.fail("expects dst element size to be 1, 2, or 4 bytes")


@_isa
class TScatterOp(IsaOp):
    """``dst[indexes[i, j]] = src[i, j]`` (flat element index into dst)."""

    name = "pto.tscatter"
    src = operand_def(Dps)
    indexes = operand_def(Dps)
    dst = operand_def(Dps)

    def pipe(self) -> Pipe:
        """PIPE_S on A2/A3 (a scalar UB loop), PIPE_V on A5."""
        return Pipe.PIPE_S if target_arch(self) == A2A3 else Pipe.PIPE_V

    def check(self) -> None:
        """One element type; i16/i32 indexes."""
        self.same_elem(self.src, self.dst, what="src/dst")
        if not _is_int(elem_of(self.indexes.type), 16, 32):
            raise self.fail("expects indexes element type to be i16/i32")


class _GmIndexedOp(IsaOp):
    """A GM gather/scatter (A5) addressed by an index tile ``idx``."""

    def check(self) -> None:
        """Signless i32 indices."""
        if not _is_int(elem_of(self.idx.type), 32, unsigned=False):  # type: ignore[attr-defined]
            raise self.fail("expects idx element type to be signless i32")


@_isa
class MGatherOp(_GmIndexedOp):
    """GM gather (A5): ``dst[i] = mem[idx[i]]``."""

    name = "pto.mgather"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE2
    A5_ONLY: ClassVar[str | None] = "pto.mgather is only supported on A5 targets"
    mem = operand_def(Dps)
    idx = operand_def(Dps)
    dst = operand_def(Dps)
    gatherOob = opt_attr_def(GatherOOBAttr)  # noqa: N815


@_isa
class MScatterOp(_GmIndexedOp):
    """GM scatter (A5): ``mem[idx[i]] = src[i]`` (optionally atomic)."""

    name = "pto.mscatter"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE3
    A5_ONLY: ClassVar[str | None] = "pto.mscatter is only supported on A5 targets"
    src = operand_def(Dps)
    idx = operand_def(Dps)
    mem = operand_def(Dps)
    scatterAtomicOp = opt_attr_def(ScatterAtomicOpAttr)  # noqa: N815
    scatterOob = opt_attr_def(ScatterOOBAttr)  # noqa: N815


@_isa
class THistogramOp(IsaOp):
    """Byte histogram of ui16 values (A5)."""

    name = "pto.thistogram"
    A5_ONLY: ClassVar[str | None] = "thistogram is only supported on A5"
    src = operand_def(Dps)
    idx = operand_def(Dps)
    dst = operand_def(Dps)
    isMSB = opt_attr_def(BoolAttr)  # noqa: N815

    def check(self) -> None:
        """ui16 -> ui32 with ui8 idx."""
        if not _is_int(elem_of(self.src.type), 16):
            raise self.fail("expects src element type to be ui16")
        if not _is_int(elem_of(self.idx.type), 8):
            raise self.fail("expects idx element type to be ui8")
        if not _is_int(elem_of(self.dst.type), 32):
            raise self.fail("expects dst element type to be ui32")


# --- quantisation, packing -----------------------------------------------------------------


@_isa
class TQuantOp(IsaOp):
    """f32 -> int8 with per-row scale ``fp`` (INT8_SYM) and offset (INT8_ASYM)."""

    name = "pto.tquant"
    src = operand_def(Dps)
    fp = operand_def(Dps)
    offset = opt_operand_def(Dps)
    dst = operand_def(Dps)
    quant_type = opt_attr_def(QuantTypeAttr)

    def check(self) -> None:
        """Offset presence and dst type by quant_type; f32 src."""
        qt = self.quant_type.data if self.quant_type is not None else QuantType.INT8_SYM
        de = elem_of(self.dst.type)
        if qt == QuantType.INT8_SYM:
            if not _is_int(de, 8, unsigned=False):
                raise self.fail("expects dst element type i8 for INT8_SYM quantization")
            if self.offset is not None:
                raise self.fail("INT8_SYM quantization must not have an offset operand")
        else:
            if not _is_int(de, 8, unsigned=True):
                raise self.fail("expects dst element type ui8 for INT8_ASYM quantization")
            if self.offset is None:
                raise self.fail("INT8_ASYM quantization requires an offset operand")
        if not _is_float(elem_of(self.src.type), 32):
            raise self.fail("expects src to have element type f32")


@_isa
class TDequantOp(IsaOp):
    """``dst = (src - offset) * scale`` with per-row scale/offset (i8/i16 -> f32)."""

    name = "pto.tdequant"
    src = operand_def(Dps)
    scale = operand_def(Dps)
    offset = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """PTOAS's element types."""
        if not _is_int(elem_of(self.src.type), 8, 16):
            raise self.fail("expects src element type i8 or i16")
        for name in ("dst", "scale", "offset"):
            if not _is_float(elem_of(getattr(self, name).type), 32):
                raise self.fail(f"expects {name} element type f32")


@_isa
class TPackOp(IsaOp):
    """Narrow elements (A5): keep the low bytes of each element (4->2, 4->1, 2->1)."""

    name = "pto.tpack"
    A5_ONLY: ClassVar[str | None] = "tpack is only supported on A5 targets"
    src = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """Same valid shape; a narrowing size pair."""
        self.same_valid(self.src, self.dst)
        pair = (element_bits(elem_of(self.src.type)) // 8, element_bits(elem_of(self.dst.type)) // 8)
        if pair not in ((4, 2), (4, 1), (2, 1)):
            raise self.fail("expects A5 tpack element-size pair to be 4->2, 4->1, or 2->1 bytes")


# --- scalar access, hints ------------------------------------------------------------------


@_isa
class TSetValOp(IsaOp):
    """``dst.flat[offset] = val`` on the scalar pipe."""

    name = "pto.tsetval"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_S
    offset = operand_def(IndexType)
    val = operand_def(AnyAttr())
    dst = operand_def(Dps)

    def check(self) -> None:
        """val has dst's element type."""
        if self.val.type != elem_of(self.dst.type):
            raise self.fail("expects val type to match dst element type")


@_isa
class TGetValOp(IsaOp):
    """``%v = src.flat[offset]`` on the scalar pipe: ``ins(%src, %off : T, index) outs : f32``."""

    name = "pto.tgetval"
    OUTS: ClassVar[int] = 0
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_S
    src = operand_def(Dps)
    offset = operand_def(IndexType)
    result = result_def(AnyAttr())

    @classmethod
    def parse(cls, parser: Parser) -> TGetValOp:
        """``ins(%src, %off : T, index) outs : T`` [attrs]."""
        start = parser.pos
        parser.parse_keyword("ins")
        names, types = _parse_values_types(parser)
        parser.parse_keyword("outs")
        parser.parse_punctuation(":")
        res = parser.parse_type()
        attrs = parser.parse_optional_attr_dict()
        if len(names) != 2 or len(types) != 2:
            parser.raise_error("'pto.tgetval' expects ins(%src, %offset : T, index)", start, parser.pos)
        values = parser.resolve_operands(names, types, start)
        return cls.build(operands=list(values), result_types=[res], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        printer.print_string(" ins(")
        printer.print_list([self.src, self.offset], printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([self.src.type, self.offset.type], printer.print_attribute)
        printer.print_string(") outs : ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)

    def check(self) -> None:
        """vec source; result of the element type."""
        t = tile_of(self.src.type)
        if t is not None and t.space == S.mat:
            raise self.fail("Ascend hardware does not support reading from Mat tile_buf to Scalar unit")
        if t is not None and t.space not in (None, S.vec):
            raise self.fail("expects src memory space to be vec")
        if self.result.type != elem_of(self.src.type):
            raise self.fail("expects dst type to match src element type")


@_isa
class TPrefetchOp(IsaOp):
    """Prefetch a GM window towards a tile (a cache hint: a no-op on the simulator)."""

    name = "pto.tprefetch"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE2
    src = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """dst in vec/mat; same element size."""
        self.loc(self.dst, S.vec, S.mat, name="dst")
        if element_bits(elem_of(self.src.type)) != element_bits(elem_of(self.dst.type)):
            raise self.fail("expects src and dst element types to have the same element size")


@_isa
class TGetScaleAddrOp(IsaOp):
    """Bind ``dst`` (scaling) to ``src``'s scales (A5): PTO-ISA's ``Address(dst) = Address(src) >> 4``
    (``SHIFT_MX_ADDR``); no data moves. The simulator rebinds dst likewise, whatever the arch."""

    name = "pto.tget_scale_addr"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_S
    A5_ONLY: ClassVar[str | None] = "tget_scale_addr is only supported on A5"
    src = operand_def(Dps)
    dst = operand_def(Dps)

    def check(self) -> None:
        """dst in scaling."""
        t = tile_of(self.dst.type)
        if t is not None and t.space not in (None, S.scaling):
            raise self.fail("expects dst to be in the scaling address space")


@irdl_op_definition
class TSyncOp(DpsOp):
    """``tsync ins(%a, %b : T, T)``: wait for the producers of the listed buffers (no-op on the simulator)."""

    name = "pto.tsync"
    OUTS: ClassVar[int] = 0
    PIPE: ClassVar[Pipe | None] = None
    events = var_operand_def(Dps)

    @classmethod
    def _count_error(cls, n_ins: int, n_outs: int) -> str | None:
        return None if n_outs == 0 else "expects no outs"

    @classmethod
    def parse(cls, parser: Parser) -> TSyncOp:
        """``ins(%a, %b : T, T)`` [attrs]."""
        start = parser.pos
        parser.parse_keyword("ins")
        names, types = _parse_values_types(parser)
        attrs = parser.parse_optional_attr_dict()
        return cls.build(operands=[list(parser.resolve_operands(names, types, start))], attributes=attrs)


# --- fixpipe with vector quant parameters ---------------------------------------------------


class _FpOp(IsaOp):
    """acc source, scaling ``fp`` (per-column quant parameters).

    Simulated as PTO-ISA's fixpipe quantisation: ``dst = to<T>(f32(src) * scale[j])`` in float32
    (integers: round half to even, saturate); ``scale[j]`` is the fp tile's ``(0, j)`` (a 64-bit
    parameter: the f32 bits in its low 32 bits). See docs/ptoas.md, "The whole ISA"."""

    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_FIX

    def check(self) -> None:
        """src in acc (f32/i32), fp in scaling."""
        self.loc(self.src, S.acc, name="src")  # type: ignore[attr-defined]
        self.loc(self.fp, S.scaling, name="fp")  # type: ignore[attr-defined]
        e = elem_of(self.src.type)  # type: ignore[attr-defined]
        if not (_is_float(e, 32) or _is_int(e, 32)):
            raise self.fail("expects src to have element type f32, i32")


@_isa
class TMovFPOp(_FpOp):
    """acc -> mat move with vector quant (``TMOV_FP``)."""

    name = "pto.tmov.fp"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE1  # PTOAS: treated as a data move for sync insertion
    src = operand_def(Dps)
    fp = operand_def(Dps)
    dst = operand_def(Dps)


@_isa
class TStoreFPOp(_FpOp):
    """acc -> GM store with vector quant (``TSTORE_FP``)."""

    name = "pto.tstore_fp"
    src = operand_def(Dps)
    fp = operand_def(Dps)
    dst = operand_def(Dps)


@_isa
class TExtractFPOp(_FpOp):
    """Window of an acc tile at (row, col) with vector quant."""

    name = "pto.textract_fp"
    src = operand_def(Dps)
    fp = operand_def(Dps)
    indexRow = operand_def(IndexType)  # noqa: N815
    indexCol = operand_def(IndexType)  # noqa: N815
    dst = operand_def(Dps)


@_isa
class TInsertFPOp(_FpOp):
    """acc tile written into a mat tile at (row, col) with vector quant."""

    name = "pto.tinsert_fp"
    src = operand_def(Dps)
    fp = operand_def(Dps)
    indexRow = operand_def(IndexType)  # noqa: N815
    indexCol = operand_def(IndexType)  # noqa: N815
    dst = operand_def(Dps)

    def check(self) -> None:
        """acc -> mat with scaling fp."""
        super().check()
        self.loc(self.dst, S.mat, name="dst")


# --- mx (micro-scaled) cube ops ---------------------------------------------------------------


class _MxOp(IsaOp):
    """``a, a_scale, b, b_scale`` on the cube (PIPE_M): left/scaling/right/scaling -> acc.

    Meaning (PTO-ISA's ``TMATMUL_MX`` / ``TGEMV_MX``; PTOAS leaves the scales "target-defined"): the
    operands are 8-bit floats scaled per block of ``MX_BLOCK`` (32) along k, with fp32 accumulation::

        dst[i, j] = init[i, j] + sum_k (a[i, k] * a_scale[i, k // 32]) * (b[k, j] * b_scale[k // 32, j])

    in k order, ``init`` being 0, ``c_in`` (``.acc``) or ``bias[0, j]`` (``.bias``). A scale element is
    its value: ``2^(e - 127)`` for f8E8M0FNU (pto-isa's ``float8_e8m0_t``, the usual scale type), the
    number itself for another float type (PTOAS's tests use f16 scale tiles of the operand's shape:
    their first ``ceil(k / 32)`` columns (a) / rows (b) are the scales). f8E4M3 and f8E4M3FN are both
    read as OCP e4m3fn (PTOAS's one C++ type, ``float8_e4m3_t``). The simulator runs these A5 ops
    whatever the target arch; their cost is ``COST_AS``'s (docs/ptoas.md)."""

    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_M
    MX_BLOCK: ClassVar[int] = 32
    COST_AS: ClassVar[str] = "TMATMUL"
    """The a2a3 cost row these A5-only ops use (the non-mx op's; the scales assumed free)."""

    def check(self) -> None:
        """Locations; on A5 PTOAS's f8 operand and f32 result rules."""
        self.loc(self.a, S.left, name="a")  # type: ignore[attr-defined]
        self.loc(self.b, S.right, name="b")  # type: ignore[attr-defined]
        self.loc(self.a_scale, S.scaling, name="a_scale")  # type: ignore[attr-defined]
        self.loc(self.b_scale, S.scaling, name="b_scale")  # type: ignore[attr-defined]
        self.loc(self.dst, S.acc, name="dst")  # type: ignore[attr-defined]
        if target_arch(self) == A2A3:
            return
        if not all(_is_float(elem_of(v.type), 8) for v in (self.a, self.b)):  # type: ignore[attr-defined]
            raise self.fail("expects A5 mx operands a and b to use fp8 element types")
        if not _is_float(elem_of(self.dst.type), 32):  # type: ignore[attr-defined]
            raise self.fail("expects A5 mx result dst to use f32 element type")


def _mx(op_name: str, acc: bool, bias: bool, doc: str) -> type[IsaOp]:
    body: dict[str, object] = {"name": op_name, "__doc__": doc, "__module__": __name__}
    if acc:
        body["c_in"] = operand_def(Dps)
    body.update(a=operand_def(Dps), a_scale=operand_def(Dps), b=operand_def(Dps), b_scale=operand_def(Dps))
    if bias:
        body["bias"] = operand_def(Dps)
    body["dst"] = operand_def(Dps)
    kind = op_name.split(".")[1]
    if kind == "tgemv":  # PTOAS rejects the gemv family on a2a3 (the matmul family verifies there)
        body["A5_ONLY"] = f"{op_name[4:]} is only supported on A5 targets"
        body["COST_AS"] = "TGEMV"
        body["__annotations__"] = {"A5_ONLY": ClassVar[str | None], "COST_AS": ClassVar[str]}
    cls_name = "T" + "".join(p.capitalize() for p in op_name[5:].split(".")) + "Op"
    return irdl_op_definition(type(cls_name, (_MxOp,), body))


MX_OPS = tuple(
    _mx(
        f"pto.t{kind}.mx{suffix}",
        suffix == ".acc",
        suffix == ".bias",
        f"``{kind}`` with mx scales{suffix} (see _MxOp).",
    )
    for kind in ("matmul", "gemv")
    for suffix in ("", ".acc", ".bias")
)


ISA_TILE_OPS: tuple[type[DpsOp], ...] = (
    TFModOp,
    TFModSOp,
    TConcatOp,
    TColProdOp,
    TColArgMaxOp,
    TColArgMinOp,
    TFillPadExpandOp,
    TFillPadInplaceOp,
    TCIOp,
    TTriOp,
    TRandomOp,
    TSelSOp,
    TSort32Op,
    TMrgSortOp,
    TGatherOp,
    TGatherBOp,
    TScatterOp,
    MGatherOp,
    MScatterOp,
    THistogramOp,
    TQuantOp,
    TDequantOp,
    TPackOp,
    TSetValOp,
    TGetValOp,
    TPrefetchOp,
    TGetScaleAddrOp,
    TSyncOp,
    TMovFPOp,
    TStoreFPOp,
    TExtractFPOp,
    TInsertFPOp,
    *MX_OPS,
)


NOT_SIMULATED: dict[type[DpsOp], str] = {}
"""Ops the simulator does not run, and why (their ``NO_INTERPRETER`` / ``NO_CPP``)."""

NO_CPP: dict[type[DpsOp], str] = {}
"""Ops without a C++ emitter (the others of NOT_SIMULATED are emitted as PTOAS does; the CPU header
fails them at run time)."""

for _cls, _why in NOT_SIMULATED.items():
    _cls.NO_INTERPRETER = _why
for _cls, _why in NO_CPP.items():
    _cls.NO_CPP = _why
