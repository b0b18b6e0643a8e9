"""Tile buffers and data movement: alloc_tile, tload/tstore, tmov/textract/tinsert, tmatmul*.

::

    %t = pto.alloc_tile [addr = %a] [valid_row = %r] [valid_col = %c] : T
    pto.tload ins(%pv : P) outs(%t : T)
    pto.tstore ins(%t : T[, %q : i64]) outs(%pv : P) {atomicType = ..., stPhase = ..., reluPreMode = ...}
    pto.tmov ins(%src : T) outs(%dst : T2)
    pto.textract ins(%src, %r, %c : T, index, index) outs(%dst : T2)
    pto.tmatmul ins(%a, %b : Tl, Tr) outs(%c : Tacc)
    pto.tmatmul.acc ins(%cin, %a, %b : Tacc, Tl, Tr) outs(%c : Tacc)
    pto.tmatmul.bias ins(%a, %b, %bias : Tl, Tr, Tb) outs(%c : Tacc)
    %r = pto.treshape %t : T -> T2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    MemRefType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.traits import Pure

from .attrs import (
    AccToVecModeAttr,
    AddressSpace,
    AtomicTypeAttr,
    Pipe,
    ReluPreModeAttr,
    StPhaseAttr,
)
from .base import A2A3, DpsOp, PTOOp, Tile, dims_text, parse_group, partition_count, same_width, target_arch, tile_of
from .types import DYNAMIC, PartitionTensorViewType, TileBufType, element_bits

S = AddressSpace
TileLike = TileBufType | MemRefType
GmLike = PartitionTensorViewType | MemRefType


def _is(t: Attribute, *kinds: type[Attribute]) -> bool:
    return isinstance(t, kinds)


F32, F16, BF16 = Float32Type, Float16Type, BFloat16Type


def _int(t: Attribute, width: int) -> bool:
    return isinstance(t, IntegerType) and t.width.data == width


@irdl_op_definition
class AllocTileOp(PTOOp):
    """A tile buffer; ``valid_row``/``valid_col`` exactly for the ``?`` valid dims; ``addr`` (level 3) in bytes."""

    name = "pto.alloc_tile"
    VALUE_OF_OPERANDS: ClassVar[bool] = True
    addr = opt_operand_def(i64)
    valid_row = opt_operand_def(IndexType)
    valid_col = opt_operand_def(IndexType)
    result = result_def(TileBufType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "(`addr` `=` $addr^)? (`valid_row` `=` $valid_row^)? (`valid_col` `=` $valid_col^)? attr-dict `:` type($result)"
    )

    def verify_(self) -> None:
        """Runtime valid dims given iff the type's valid dim is ``?``; addr is i64."""
        t = self.result.type
        assert isinstance(t, TileBufType)
        for key, dim, value in (("valid_row", t.v_row.data, self.valid_row), ("valid_col", t.v_col.data, self.valid_col)):
            short = "v_row" if key == "valid_row" else "v_col"
            if dim == DYNAMIC and value is None:
                raise self.fail(f"result type has {short}=? and needs '{key} = %value'")
            if dim != DYNAMIC and value is not None:
                raise self.fail(f"is given but the result type has static {short}={dim}", value)
        if self.addr is not None and not _int(self.addr.type, 64):
            raise self.fail(f"expects an i64 byte address, got {self.addr.type}", self.addr)


def _check_count(op: PTOOp, tile: SSAValue, view: SSAValue, role: str) -> None:
    """Partition element count = tile valid element count (when both static)."""
    t = tile_of(tile.type)
    n = partition_count(view.type)
    if t is None or n is None or t.valid_count() is None:
        return
    if n != t.valid_count():
        raise op.fail(
            f"expects {role} static element count ({n}, {view.type}) to equal the tile's valid element count "
            f"({t.valid_count()}, valid {dims_text(t.valid)})",
            view,
        )


@irdl_op_definition
class TLoadOp(DpsOp):
    """GM partition -> vec/mat tile (MTE2)."""

    name = "pto.tload"
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE2
    WRITES_DST_VALID: ClassVar[bool] = True
    src = operand_def(GmLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """dst in vec/mat; same element width; element counts agree."""
        dst = self.tile(self.dst, S.vec, S.mat)
        src_t = self.src.type
        elem = src_t.element_type if _is(src_t, PartitionTensorViewType, MemRefType) else None
        if elem is None or not same_width(elem, dst.dtype):
            raise self.fail(f"element type {elem} and tile dtype {dst.dtype} differ in width", self.src)
        _check_count(self, self.dst, self.src, "src")


ACC_STORE_DST = (F32, F16, BF16)


@irdl_op_definition
class TStoreOp(DpsOp):
    """vec/mat/acc tile -> GM partition (MTE3, FIX for acc); optional pre-quant scalar (acc only)."""

    name = "pto.tstore"
    INTERLEAVED_INS: ClassVar[bool] = True
    src = operand_def(TileLike)
    pre_quant = opt_operand_def(i64)
    dst = operand_def(GmLike)
    stPhase = opt_attr_def(StPhaseAttr)  # noqa: N815 (PTOAS attribute name)
    atomicType = opt_attr_def(AtomicTypeAttr)  # noqa: N815
    reluPreMode = opt_attr_def(ReluPreModeAttr)  # noqa: N815

    def pipe(self) -> Pipe:
        """FIX for an acc source, MTE3 otherwise."""
        t = tile_of(self.src.type)
        return Pipe.PIPE_FIX if t is not None and t.space == S.acc else Pipe.PIPE_MTE3

    def verify_(self) -> None:
        """Source space; acc conversions; element counts agree."""
        src = self.tile(self.src, S.vec, S.mat, S.acc)
        dst_t = self.dst.type
        elem = dst_t.element_type if _is(dst_t, PartitionTensorViewType, MemRefType) else None
        if src.space == S.acc:
            if not (_int(src.dtype, 32) or _is(src.dtype, F32)):
                raise self.fail(f"acc tile dtype {src.dtype} must be i32 or f32", self.src)
            if elem is None or not (_int(elem, 32) or _is(elem, *ACC_STORE_DST)):
                raise self.fail(f"element type {elem} must be i32/f32/f16/bf16 for an acc source", self.dst)
        else:
            if self.pre_quant is not None:
                raise self.fail("pre-quant scalar needs an acc source", self.pre_quant)
            if elem is None or not same_width(elem, src.dtype):
                raise self.fail(f"element type {elem} and tile dtype {src.dtype} differ in width", self.dst)
        if self.pre_quant is not None and not _int(self.pre_quant.type, 64):
            raise self.fail(f"expects i64, got {self.pre_quant.type}", self.pre_quant)
        _check_count(self, self.src, self.dst, "dst")


MOV_PAIRS: dict[tuple[AddressSpace, AddressSpace], Pipe] = {
    (S.mat, S.left): Pipe.PIPE_MTE1,
    (S.mat, S.right): Pipe.PIPE_MTE1,
    (S.mat, S.bias): Pipe.PIPE_MTE1,
    (S.mat, S.scaling): Pipe.PIPE_MTE1,
    (S.acc, S.mat): Pipe.PIPE_FIX,
    (S.acc, S.vec): Pipe.PIPE_FIX,
    (S.vec, S.mat): Pipe.PIPE_FIX,
    (S.vec, S.vec): Pipe.PIPE_V,
}


class _MoveOp(DpsOp):
    """Shared by tmov/textract: allowed location pairs and their pipes."""

    PAIRS: ClassVar[dict[tuple[AddressSpace, AddressSpace], Pipe]] = MOV_PAIRS

    def spaces(self) -> tuple[Tile, Tile]:
        """Source and destination tiles, checked against the allowed pairs."""
        s, d = self.tile(self.src), self.tile(self.dst)
        if s.space is not None and d.space is not None and (s.space, d.space) not in self.PAIRS:
            pairs = ", ".join(f"{a.value}->{b.value}" for a, b in self.PAIRS)
            raise self.fail(f"moves loc={s.space.value} to loc={d.space.value}; allowed: {pairs}", self.dst)
        return s, d

    def pipe(self) -> Pipe:
        """MTE1 (mat->L0), FIX (acc->*, vec->mat), V otherwise."""
        s, d = tile_of(self.src.type), tile_of(self.dst.type)
        if s is None or d is None or s.space is None or d.space is None:
            return Pipe.PIPE_V
        return self.PAIRS.get((s.space, d.space), Pipe.PIPE_V)

    def check_dtypes(self, s: Tile, d: Tile) -> None:
        """Same dtype, except out of acc (f32->f16/bf16 casts) and into bias/scaling."""
        if s.space == S.acc or d.space in (S.bias, S.scaling):
            return
        if s.dtype != d.dtype:
            raise self.fail(f"dtype {d.dtype} differs from the source's {s.dtype}", self.dst)


@irdl_op_definition
class TMovOp(_MoveOp):
    """Tile to tile copy between locations (MTE1 / FIX / V by locations)."""

    name = "pto.tmov"
    INTERLEAVED_INS: ClassVar[bool] = True
    WRITES_DST_VALID: ClassVar[bool] = True
    # PTOAS's operand order (its generic form): src, dst, then the optional quant operands.
    src = operand_def(TileLike)
    dst = operand_def(TileLike)
    fp = opt_operand_def(TileLike)  # acc->mat/vec with vector quant parameters (loc=scaling)
    pre_quant = opt_operand_def(i64)  # acc->* with a scalar quant parameter
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def ins(self) -> list[SSAValue]:
        """src, then fp / pre-quant when present."""
        return [self.src, *(v for v in (self.fp, self.pre_quant) if v is not None)]

    def outs(self) -> list[SSAValue]:
        """dst."""
        return [self.dst]

    @classmethod
    def operands_from(cls, ins: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue | list[SSAValue]]:
        """src, dst, then the fp tile / pre-quant scalar among the other ins."""
        fp = [v for v in ins[1:] if tile_of(v.type) is not None]
        pq = [v for v in ins[1:] if tile_of(v.type) is None]
        return [ins[0], outs[0], fp, pq]

    @classmethod
    def parse(cls, parser: Parser) -> TMovOp:
        """``ins(%src : T[, %fp : Tfp][, %q : i64]) outs(%dst : T2) [attrs]``."""
        start = parser.pos
        parser.parse_keyword("ins")
        ins, attrs, in_types = parse_group(parser, allow_attrs=True)
        parser.parse_keyword("outs")
        outs, _, out_types = parse_group(parser, allow_attrs=False)
        attrs.update(parser.parse_optional_attr_dict())
        if len(outs) != 1 or not 1 <= len(ins) <= 3:
            parser.raise_error("'pto.tmov' expects ins(%src[, %fp][, %pre_quant]) outs(%dst)", start, parser.pos)
        values = parser.resolve_operands(ins, in_types, start)
        (dst,) = parser.resolve_operands(outs, out_types, start)
        fp = [v for v in values[1:] if tile_of(v.type) is not None]
        pq = [v for v in values[1:] if tile_of(v.type) is None]
        if len(fp) > 1 or len(pq) > 1:
            parser.raise_error("'pto.tmov' takes at most one fp tile and one pre-quant scalar", start, parser.pos)
        return cls.build(operands=[values[0], dst, fp, pq], attributes=attrs)
    accToVecMode = opt_attr_def(AccToVecModeAttr)  # noqa: N815
    reluPreMode = opt_attr_def(ReluPreModeAttr)  # noqa: N815

    def verify_(self) -> None:
        """Allowed pair, dtypes, equal valid shapes."""
        s, d = self.spaces()
        self.check_dtypes(s, d)
        self.same_valid(self.src, self.dst)


def is_nd(value: SSAValue) -> bool:
    """PTOAS's ND tile layout (``blayout=row_major, slayout=none_box``); a plain memref counts as ND."""
    t = value.type
    if not isinstance(t, TileBufType):
        return True
    spec = t.spec()
    return spec.blayout.value == "row_major" and spec.slayout.value == "none_box"


def check_a5_vec_vec_nd(op: DpsOp, src: SSAValue, dst: SSAValue, s: Tile, d: Tile) -> None:
    """PTOAS's A5 rule for vec->vec ``textract`` / ``tinsert``: both tiles in ND layout."""
    if target_arch(op) != A2A3 and s.space == S.vec and d.space == S.vec and not (is_nd(src) and is_nd(dst)):
        what = op.name.removeprefix("pto.")
        raise op.fail(f"expects A5 vec->vec {what} src/dst to use ND layout (blayout=row_major, slayout=none_box)")


@irdl_op_definition
class TExtractOp(_MoveOp):
    """A window of ``src`` at (row, col) into ``dst``."""

    name = "pto.textract"
    WRITES_DST_VALID: ClassVar[bool] = True
    src = operand_def(TileLike)
    index_row = operand_def(IndexType)
    index_col = operand_def(IndexType)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Allowed pair, dtypes, dst no larger than src."""
        s, d = self.spaces()
        self.check_dtypes(s, d)
        check_a5_vec_vec_nd(self, self.src, self.dst, s, d)
        if d.shape[0] > s.shape[0] or d.shape[1] > s.shape[1]:
            raise self.fail(f"shape {dims_text(d.shape)} exceeds the source's {dims_text(s.shape)}", self.dst)


@irdl_op_definition
class TInsertOp(DpsOp):
    """``src`` written into ``dst`` at (row, col): acc->mat (FIX); on A5 also vec->mat (MTE3), vec->vec (V)."""

    name = "pto.tinsert"
    src = operand_def(TileLike)
    index_row = operand_def(IndexType)
    index_col = operand_def(IndexType)
    dst = operand_def(TileLike)

    def pipe(self) -> Pipe:
        """FIX, or on A5 MTE3 (vec->mat) / V (vec->vec)."""
        s, d = tile_of(self.src.type), tile_of(self.dst.type)
        if target_arch(self) != A2A3 and s is not None and d is not None and s.space == S.vec:
            return Pipe.PIPE_V if d.space == S.vec else Pipe.PIPE_MTE3
        return Pipe.PIPE_FIX

    def verify_(self) -> None:
        """Locations and dtypes per target; src fits in dst."""
        s, d = self.tile(self.src), self.tile(self.dst)
        if target_arch(self) == A2A3:
            if s.space not in (None, S.acc) or d.space not in (None, S.mat):
                raise self.fail(f"on A2/A3 expects acc->mat, got {s.space}->{d.space}", self.src)
            if not (_is(s.dtype, F32) and _is(d.dtype, F16, BF16)):
                raise self.fail(
                    f"expects A2/A3 tinsert element types to be src=f32, dst=f16/bf16 (got src={s.dtype}, dst={d.dtype})",
                    self.src,
                )
        elif (s.space, d.space) not in ((S.acc, S.mat), (S.vec, S.mat), (S.vec, S.vec)):
            raise self.fail(
                "expects A5 tinsert to use a supported src/dst loc pair: acc->mat, vec->mat, or vec->vec "
                f"(got {s.space}->{d.space})",
                self.src,
            )
        check_a5_vec_vec_nd(self, self.src, self.dst, s, d)
        if s.shape[0] > d.shape[0] or s.shape[1] > d.shape[1]:
            raise self.fail(f"shape {dims_text(s.shape)} exceeds the destination's {dims_text(d.shape)}", self.src)


# (acc, lhs, rhs) element types allowed on A2/A3 (pto-dialect.md §4 Cube).
MATMUL_DTYPES_A2A3: tuple[tuple[type[Attribute] | int, ...], ...] = ((32, 8, 8), (F32, F16, F16), (F32, BF16, BF16), (F32, F32, F32))


def _dtype_key(t: Attribute) -> type[Attribute] | int:
    return t.width.data if isinstance(t, IntegerType) else type(t)


class _CubeOp(DpsOp):
    """tmatmul / tgemv family: left x right -> acc on PIPE_M."""

    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_M

    def write_extent(
        self, dst: SSAValue, valid: Callable[[SSAValue], tuple[int, int] | None]
    ) -> tuple[int, int] | None:
        """lhs valid rows x rhs valid cols of the result (the C++ header's matmul writes those, reading
        only ``acc_in`` / ``bias``)."""
        lhs, rhs = valid(self.lhs), valid(self.rhs)  # type: ignore[attr-defined]
        return (lhs[0], rhs[1]) if lhs is not None and rhs is not None and dst is self.dst else None  # type: ignore[attr-defined]

    def check_cube(self) -> Tile:
        """Locations, dtype triple, m/k/n agreement and range; returns the dst tile."""
        a = self.tile(self.lhs, S.left)
        b = self.tile(self.rhs, S.right)
        c = self.tile(self.dst, S.acc)
        key = (_dtype_key(c.dtype), _dtype_key(a.dtype), _dtype_key(b.dtype))
        if target_arch(self) == A2A3 and key not in MATMUL_DTYPES_A2A3:
            raise self.fail(
                f"dtypes (acc={c.dtype}, lhs={a.dtype}, rhs={b.dtype}) are not one of (i32,i8,i8) (f32,f16,f16) "
                "(f32,bf16,bf16) (f32,f32,f32)",
                self.dst,
            )
        if a.dtype != b.dtype:
            raise self.fail(f"dtype {b.dtype} differs from lhs dtype {a.dtype}", self.rhs)
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise self.fail(f"rows {k2} differ from lhs cols {k} (k)", self.rhs)
        if c.shape != (m, n):
            raise self.fail(f"shape {dims_text(c.shape)} differs from {m}x{n} (lhs rows x rhs cols)", self.dst)
        for what, v in (("m", m), ("k", k), ("n", n)):
            if not 1 <= v <= 4095:
                raise self.fail(f"{what}={v} is outside 1..4095", self.dst)
        return c


class _ProductOp(_CubeOp):
    """``ins(%lhs, %rhs) outs(%dst)``: a plain cube product."""

    lhs = operand_def(TileLike)
    rhs = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Cube checks."""
        self.check_cube()


@irdl_op_definition
class TMatmulOp(_ProductOp):
    """C = A x B."""

    name = "pto.tmatmul"


class _AccProductOp(_CubeOp):
    """``ins(%acc_in, %lhs, %rhs) outs(%dst)``: an accumulating cube product."""

    acc_in = operand_def(TileLike)
    lhs = operand_def(TileLike)
    rhs = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Cube checks; acc_in has dst's dtype."""
        self.check_cube()
        self.same_dtype(self.dst, self.acc_in)


@irdl_op_definition
class TMatmulAccOp(_AccProductOp):
    """C = Cin + A x B."""

    name = "pto.tmatmul.acc"

    def verify_(self) -> None:
        """Cube checks; acc_in like dst."""
        self.check_cube()
        self.tile(self.acc_in, S.acc)
        self.same_dtype(self.dst, self.acc_in)
        self.same_valid(self.dst, self.acc_in)


@irdl_op_definition
class TMatmulBiasOp(_CubeOp):
    """C = A x B + bias (bias: loc=bias, 1 x n)."""

    name = "pto.tmatmul.bias"
    lhs = operand_def(TileLike)
    rhs = operand_def(TileLike)
    bias = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Cube checks; bias row of dst width."""
        c = self.check_cube()
        bias = self.tile(self.bias, S.bias)
        if bias.shape[0] != 1 or bias.shape[1] != c.shape[1]:
            raise self.fail(f"shape {dims_text(bias.shape)} must be 1x{c.shape[1]}", self.bias)


@irdl_op_definition
class TGemvOp(_ProductOp):
    """Matrix-vector product on the cube."""

    name = "pto.tgemv"


@irdl_op_definition
class TGemvAccOp(_AccProductOp):
    """Accumulating matrix-vector product."""

    name = "pto.tgemv.acc"


@irdl_op_definition
class TGemvBiasOp(_CubeOp):
    """Matrix-vector product plus bias."""

    name = "pto.tgemv.bias"
    lhs = operand_def(TileLike)
    rhs = operand_def(TileLike)
    bias = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Cube checks."""
        self.check_cube()
        self.tile(self.bias, S.bias)


@irdl_op_definition
class TReshapeOp(PTOOp):
    """Reinterpret a tile (same location and byte size; aliases the source; PIPE_S)."""

    name = "pto.treshape"
    VALUE_OF_OPERANDS: ClassVar[bool] = True
    src = operand_def(TileLike)
    result = result_def(TileLike)
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def pipe(self) -> Pipe:
        """Scalar pipe."""
        return Pipe.PIPE_S

    def verify_(self) -> None:
        """Same location, same physical byte size."""
        s, r = self.tile(self.src), self.tile(self.result)
        if s.space != r.space:
            raise self.fail(f"result loc {r.space} differs from the source's {s.space}", self.src)
        sb = s.shape[0] * s.shape[1] * element_bits(s.dtype)
        rb = r.shape[0] * r.shape[1] * element_bits(r.dtype)
        if sb != rb:
            raise self.fail(f"result holds {rb // 8} bytes, the source {sb // 8}", self.src)


@irdl_op_definition
class SetValidShapeOp(PTOOp):
    """Update the runtime valid dims of a tile whose valid dims are both ``?``."""

    name = "pto.set_validshape"
    source = operand_def(TileLike)
    valid_row = operand_def(IndexType)
    valid_col = operand_def(IndexType)
    assembly_format = "$source `,` $valid_row `,` $valid_col attr-dict `:` type($source)"

    def verify_(self) -> None:
        """Both valid dims dynamic."""
        t = self.source.type
        if isinstance(t, TileBufType) and t.valid_shape() != (DYNAMIC, DYNAMIC):
            raise self.fail("expects a tile_buf with v_row=? and v_col=?", self.source)


@irdl_op_definition
class TAssignOp(PTOOp):
    """Level 3: bind a tile to a byte address."""

    name = "pto.tassign"
    tile_in = operand_def(TileBufType)
    addr = operand_def(i64)
    result = result_def(TileBufType)
    assembly_format = "$tile_in `,` $addr attr-dict `:` type($tile_in) `->` type($result)"


@irdl_op_definition
class PointerCastOp(PTOOp):
    """After plan-memory: a memref at byte address(es) in its address space."""

    name = "pto.pointer_cast"
    addrs = var_operand_def(i64)
    result = result_def(MemRefType)
    assembly_format = "`(` $addrs `)` attr-dict `:` type($result)"


TILE_OPS: tuple[type[PTOOp], ...] = (
    AllocTileOp,
    TLoadOp,
    TStoreOp,
    TMovOp,
    TExtractOp,
    TInsertOp,
    TMatmulOp,
    TMatmulAccOp,
    TMatmulBiasOp,
    TGemvOp,
    TGemvAccOp,
    TGemvBiasOp,
    TReshapeOp,
    SetValidShapeOp,
    TAssignOp,
    PointerCastOp,
)

