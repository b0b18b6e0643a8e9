"""Vector (PIPE_V) tile ops: element-wise, tile-scalar, unary, ternary, reductions, expands, tcvt, tcmp.

All tiles are ``loc=vec``; a destination has the valid shape of its (main) source.
Each family base class holds the IRDL operands; concrete ops only add a name and
``KIND``, the name of their numpy kernel (``add``, ``rsqrt``, ``sum``...; the
interpreter's numerics tables are keyed by it).

::

    pto.tadd ins(%a, %b : T, T) outs(%d : T)
    pto.tmuls ins(%a, %s : T, f32) outs(%d : T)
    pto.tdivs ins(%s, %a : f32, T) outs(%d : T)             (either order)
    pto.texp ins(%a : T) outs(%d : T)
    pto.trsqrt ins(%a[, %tmp] : T[, T]) outs(%d : T)
    pto.trowsum ins(%src, %tmp : T, T) outs(%d : Tcol)
    pto.trowexpandsub ins(%a, %rowvec : T, Tcol) outs(%d : T)
    pto.texpands ins(%s : f32) outs(%d : T)
    pto.tcvt ins(%src {rmode = #pto<round_mode CAST_RINT>} : T) outs(%d : T2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar, cast

from xdsl.dialects.builtin import AnyFloat, Float16Type, Float32Type, IntegerType, MemRefType
from xdsl.ir import SSAValue
from xdsl.irdl import AnyAttr, irdl_op_definition, operand_def, opt_attr_def, opt_operand_def

from .attrs import AddressSpace, BLayout, CmpModeAttr, RoundModeAttr
from .base import A2A3, DpsOp, Tile, dims_text, target_arch, tile_of
from .isa_attrs import SaturationMode, SaturationModeAttr
from .types import DYNAMIC, TileBufType

VEC = AddressSpace.vec
TileLike = TileBufType | MemRefType


class VectorOp(DpsOp):
    """Helpers of vector ops."""

    KIND: ClassVar[str | None] = None

    def scratch(self) -> list[SSAValue]:
        """The ``tmp`` tile, when the op has one: scratch space (the C++ header's ops ignore it)."""
        tmp = getattr(self, "tmp", None)
        return [tmp] if isinstance(tmp, SSAValue) else []

    def vec(self, value: SSAValue) -> Tile:
        """The operand as a vec tile."""
        return self.tile(value, VEC)

    def row_major(self, value: SSAValue) -> None:
        """Element-wise operands use row_major tiles."""
        t = tile_of(value.type)
        if t is not None and t.blayout is not None and t.blayout != BLayout.row_major:
            raise self.fail(f"expects blayout=row_major, got {t.blayout.value}", value)

    def same_layout(self, dst: SSAValue, src: SSAValue) -> None:
        """``src`` has ``dst``'s block layout."""
        d, t = tile_of(dst.type), tile_of(src.type)
        if d is not None and t is not None and d.blayout != t.blayout:
            got = t.blayout.value if t.blayout is not None else "none"
            want = d.blayout.value if d.blayout is not None else "none"
            raise self.fail(f"expects src blayout={want} (the dst's), got {got}", src)

    def elementwise(self, dst: SSAValue, *srcs: SSAValue, same_dtype: bool = True, row_major: bool = True) -> None:
        """vec, row_major (or, when not ``row_major``, one layout for all); dtypes and valid
        shapes of ``srcs`` equal ``dst``'s."""
        self.vec(dst)
        if row_major:
            self.row_major(dst)
        for s in srcs:
            if not row_major:
                self.same_layout(dst, s)
            self.vec(s)
            if same_dtype:
                self.same_dtype(dst, s)
            self.same_valid(dst, s)

    def scalar_for(self, scalar: SSAValue, tile: SSAValue) -> None:
        """A scalar operand: float for float tiles, integer for integer tiles."""
        st = self.scalar_type(scalar)
        t = tile_of(tile.type)
        if t is None:
            return
        if isinstance(t.dtype, AnyFloat) and not isinstance(st, AnyFloat):
            raise self.fail(f"expects a float scalar for a {t.dtype} tile, got {st}", scalar)
        if isinstance(t.dtype, IntegerType) and not isinstance(st, IntegerType):
            raise self.fail(f"expects an integer scalar for a {t.dtype} tile, got {st}", scalar)


_F = TypeVar("_F", bound="VectorOp")


def _make(base: type[_F], op_name: str, doc: str, **consts: object) -> type[_F]:
    """A concrete IRDL op of a family: a subclass of ``base`` with a name and class constants."""
    short = op_name.removeprefix("pto.")
    body: dict[str, object] = {"name": op_name, "__doc__": doc, "__module__": __name__, **consts}
    body["__annotations__"] = {k: ClassVar[type(v)] for k, v in consts.items()}
    return cast(type[_F], irdl_op_definition(type("T" + short[1:].capitalize() + "Op", (base,), body)))


class BinaryOp(VectorOp):
    """``ins(%src0, %src1 : T, T) outs(%dst : T)``."""

    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    dst = operand_def(TileLike)
    PARTIAL: ClassVar[bool] = False
    WRITES_DST_VALID: ClassVar[bool] = True

    def verify_(self) -> None:
        """Same dtype; valid shape of dst (tpart*: only src0)."""
        if self.PARTIAL:
            self.elementwise(self.dst, self.src0)
            self.vec(self.src1)
            self.same_dtype(self.dst, self.src1)
        else:
            self.elementwise(self.dst, self.src0, self.src1)


def _binary(op_name: str, kind: str, partial: bool = False) -> type[BinaryOp]:
    return _make(BinaryOp, op_name, f"Element-wise ``{op_name[4:]}`` of two tiles.", PARTIAL=partial, KIND=kind)


class BinaryTmpOp(BinaryOp):
    """``ins(%src0, %src1[, %tmp] : T, T[, T]) outs(%dst : T)`` (PTOAS's trem takes a tmp tile)."""

    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)


BINARY_OPS = (
    tuple(_binary(f"pto.t{k}", k) for k in ("add", "sub", "mul", "div", "max", "min", "and", "or", "xor", "shl", "shr"))
    + (_make(BinaryTmpOp, "pto.trem", "Element-wise ``rem`` of two tiles (optional tmp tile).", KIND="rem"),)
    + tuple(_binary(f"pto.tpart{k}", k, partial=True) for k in ("add", "max", "min", "mul"))
)


class TileScalarOp(VectorOp):
    """``ins(%src, %scalar : T, s) outs(%dst : T)``."""

    src = operand_def(TileLike)
    scalar = operand_def(AnyAttr())
    dst = operand_def(TileLike)
    SAME_DTYPE: ClassVar[bool] = True
    WRITES_DST_VALID: ClassVar[bool] = True

    def write_extent(
        self, dst: SSAValue, valid: Callable[[SSAValue], tuple[int, int] | None]
    ) -> tuple[int, int] | None:
        """The dst's valid region; none for ``taxpy`` (dst = scalar * src + dst reads it)."""
        return None if self.KIND == "axpy" else super().write_extent(dst, valid)

    def verify_(self) -> None:
        """Element-wise checks; scalar kind matches the source."""
        self.elementwise(self.dst, self.src, same_dtype=self.SAME_DTYPE)
        self.scalar_for(self.scalar, self.src)


def _tile_scalar(op_name: str, kind: str, same_dtype: bool = True) -> type[TileScalarOp]:
    return _make(TileScalarOp, op_name, f"``{op_name[4:]}`` of a tile and a scalar.", SAME_DTYPE=same_dtype, KIND=kind)


class TileScalarTmpOp(TileScalarOp):
    """``ins(%src, %scalar[, %tmp] : T, s[, T]) outs(%dst : T)`` (PTOAS's trems takes a tmp tile)."""

    src = operand_def(TileLike)
    scalar = operand_def(AnyAttr())
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)


TILE_SCALAR_OPS = (
    *(_tile_scalar(f"pto.t{k}s", k) for k in ("add", "sub", "mul", "max", "min", "and", "or", "xor", "shl", "shr")),
    _make(TileScalarTmpOp, "pto.trems", "``rems`` of a tile and a scalar (optional tmp tile).", SAME_DTYPE=True, KIND="rem"),
    _tile_scalar("pto.tlrelu", "lrelu"),
    _tile_scalar("pto.taxpy", "axpy", same_dtype=False),
)


@irdl_op_definition
class TDivSOp(VectorOp):
    """``tdivs``: tile / scalar, or scalar / tile when the scalar comes first."""

    name = "pto.tdivs"
    KIND: ClassVar[str | None] = "div"
    WRITES_DST_VALID: ClassVar[bool] = True
    src0 = operand_def(AnyAttr())
    src1 = operand_def(AnyAttr())
    dst = operand_def(TileLike)

    def scalar_first(self) -> bool:
        """True for ``ins(%s, %a : f32, T)`` (s / a)."""
        return tile_of(self.src0.type) is None

    def verify_(self) -> None:
        """Exactly one tile and one scalar."""
        tile, scalar = (self.src1, self.src0) if self.scalar_first() else (self.src0, self.src1)
        self.elementwise(self.dst, tile)
        self.scalar_for(scalar, tile)


class UnaryOp(VectorOp):
    """``ins(%src : T) outs(%dst : T)``."""

    src = operand_def(TileLike)
    dst = operand_def(TileLike)
    WRITES_DST_VALID: ClassVar[bool] = True

    def write_extent(
        self, dst: SSAValue, valid: Callable[[SSAValue], tuple[int, int] | None]
    ) -> tuple[int, int] | None:
        """The dst's valid region; none for ``tfillpad`` (a smaller source leaves the rest unless padded)."""
        return None if self.KIND == "fillpad" else super().write_extent(dst, valid)

    def verify_(self) -> None:
        """Element-wise checks; any layout, the src's as the dst's (PTOAS checks no
        layout for unary ops: a ``[N, 1]`` col_major column is N contiguous elements)."""
        self.elementwise(self.dst, self.src, row_major=False)


def _unary(op_name: str, kind: str) -> type[UnaryOp]:
    return _make(UnaryOp, op_name, f"Element-wise ``{op_name[4:]}`` of a tile.", KIND=kind)


UNARY_OPS = tuple(_unary(f"pto.t{k}", k) for k in ("abs", "neg", "exp", "log", "sqrt", "recip", "relu", "not", "fillpad"))


@irdl_op_definition
class TRsqrtOp(VectorOp):
    """``trsqrt`` with an optional tmp tile."""

    name = "pto.trsqrt"
    KIND: ClassVar[str | None] = "rsqrt"
    WRITES_DST_VALID: ClassVar[bool] = True
    src = operand_def(TileLike)
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Element-wise checks (any layout, as unary ops); tmp in vec."""
        self.elementwise(self.dst, self.src, row_major=False)
        if self.tmp is not None:
            self.vec(self.tmp)


class TernaryOp(VectorOp):
    """``ins(%src0, %src1, %src2 : T, T, T) outs(%dst : T)``."""

    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    src2 = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Element-wise checks."""
        self.elementwise(self.dst, self.src0, self.src1, self.src2)


@irdl_op_definition
class TAddCOp(TernaryOp):
    """dst = src0 + src1 + src2."""

    name = "pto.taddc"


@irdl_op_definition
class TSubCOp(TernaryOp):
    """dst = src0 - src1 + src2."""

    name = "pto.tsubc"


class TileScalarTileOp(VectorOp):
    """``ins(%src0, %scalar, %src1 : T, s, T) outs(%dst : T)``."""

    src0 = operand_def(TileLike)
    scalar = operand_def(AnyAttr())
    src1 = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Element-wise checks."""
        self.elementwise(self.dst, self.src0, self.src1)
        self.scalar_for(self.scalar, self.src0)


@irdl_op_definition
class TAddSCOp(TileScalarTileOp):
    """dst = src0 + scalar + src1."""

    name = "pto.taddsc"


@irdl_op_definition
class TSubSCOp(TileScalarTileOp):
    """dst = src0 - scalar + src1."""

    name = "pto.tsubsc"


@irdl_op_definition
class TPReluOp(VectorOp):
    """``tprelu ins(%src0, %src1, %tmp : T, T, T) outs(%dst : T)``."""

    name = "pto.tprelu"
    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    tmp = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Element-wise checks."""
        self.elementwise(self.dst, self.src0, self.src1)
        self.vec(self.tmp)


def _valid(op: VectorOp, value: SSAValue, axis: int, expected: int, what: str) -> None:
    t = tile_of(value.type)
    if t is None or expected == DYNAMIC:
        return
    got = t.valid[axis]
    if got != DYNAMIC and got != expected:
        raise op.fail(f"valid {'rows' if axis == 0 else 'cols'} {got} must be {expected} ({what})", value)


class RowReduceOp(VectorOp):
    """``ins(%src[, %tmp] : T[, T]) outs(%dst : Tcol)``: one value per row (dst rows x 1)."""

    src = operand_def(TileLike)
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)
    ARG: ClassVar[bool] = False

    def write_extent(
        self, dst: SSAValue, valid: Callable[[SSAValue], tuple[int, int] | None]
    ) -> tuple[int, int] | None:
        """Column 0 of the source's valid rows (the C++ header writes one value per source row)."""
        src = valid(self.src)
        return (src[0], 1) if src is not None and dst is self.dst else None

    def verify_(self) -> None:
        """vec tiles; dst valid rows = src valid rows, dst valid cols = 1."""
        s, d = self.vec(self.src), self.vec(self.dst)
        if self.tmp is not None:
            self.vec(self.tmp)
        if not self.ARG:
            self.same_dtype(self.src, self.dst)
        _valid(self, self.dst, 0, s.valid[0], "the source's valid rows")
        _valid(self, self.dst, 1, 1, "one value per row")
        del d


def _row_reduce(kind: str, arg: bool = False) -> type[RowReduceOp]:
    op_name = f"pto.trow{kind}"
    return _make(RowReduceOp, op_name, f"Row reduction ``{op_name[4:]}`` (needs a tmp tile).", ARG=arg, KIND=kind)


ROW_REDUCE_OPS = tuple(_row_reduce(k) for k in ("sum", "max", "min", "prod")) + tuple(
    _row_reduce(k, arg=True) for k in ("argmax", "argmin")
)


class ColReduceOp(VectorOp):
    """``ins(%src : T) outs(%dst : T1)``: one value per column (dst 1 x cols)."""

    src = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """vec tiles; dst valid = 1 x src valid cols."""
        s = self.vec(self.src)
        self.vec(self.dst)
        self.same_dtype(self.src, self.dst)
        _valid(self, self.dst, 0, 1, "one value per column")
        _valid(self, self.dst, 1, s.valid[1], "the source's valid cols")


@irdl_op_definition
class TColMaxOp(ColReduceOp):
    """Column max."""

    name = "pto.tcolmax"
    KIND: ClassVar[str | None] = "max"


@irdl_op_definition
class TColMinOp(ColReduceOp):
    """Column min."""

    name = "pto.tcolmin"
    KIND: ClassVar[str | None] = "min"


@irdl_op_definition
class TColSumOp(ColReduceOp):
    """``tcolsum ins(%src[, %tmp {isBinary = false}] : T[, T]) outs(%dst : T1)``;
    verified as the other column reductions."""

    name = "pto.tcolsum"
    KIND: ClassVar[str | None] = "sum"
    ATTRS_IN_INS: ClassVar[bool] = True
    src = operand_def(TileLike)
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)


class BroadcastOp(VectorOp):
    """``ins(%src : Tv) outs(%dst : T)``: broadcast along ``AXIS`` (0: each row's first
    element across the row; 1: row 0 down every column)."""

    src = operand_def(TileLike)
    dst = operand_def(TileLike)
    AXIS: ClassVar[int] = 0

    def verify_(self) -> None:
        """Same rows (AXIS 0) or same cols (AXIS 1)."""
        d = self.vec(self.dst)
        self.vec(self.src)
        self.same_dtype(self.dst, self.src)
        what = "the destination's valid rows" if self.AXIS == 0 else "the destination's valid cols"
        _valid(self, self.src, self.AXIS, d.valid[self.AXIS], what)


TRowExpandOp = _make(BroadcastOp, "pto.trowexpand", "Broadcast each row's first element across the row.", AXIS=0)
TColExpandOp = _make(BroadcastOp, "pto.tcolexpand", "Broadcast row 0 down every column.", AXIS=1)


class ExpandBinaryOp(VectorOp):
    """``ins(%src0, %vec[, %tmp] : T, Tv[, T]) outs(%dst : T)``: src0 op broadcast(vec)."""

    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)
    AXIS: ClassVar[int] = 0  # 0: per-row vector (rows x 1), 1: per-column vector (1 x cols)
    WRITES_DST_VALID: ClassVar[bool] = True

    def verify_(self) -> None:
        """Element-wise on src0/dst; the vector matches along its axis."""
        self.elementwise(self.dst, self.src0)
        self.vec(self.src1)
        self.same_dtype(self.dst, self.src1)
        d = tile_of(self.dst.type)
        assert d is not None
        what = "one per row of the destination" if self.AXIS == 0 else "one per column of the destination"
        _valid(self, self.src1, self.AXIS, d.valid[self.AXIS], what)
        if self.tmp is not None:
            self.vec(self.tmp)


def _expand(kind: str, axis: int) -> type[ExpandBinaryOp]:
    vec = "row" if axis == 0 else "column"
    op_name = f"pto.t{'row' if axis == 0 else 'col'}expand{kind}"
    doc = f"``{op_name[4:]}``: element-wise with a broadcast {vec} vector."
    return _make(ExpandBinaryOp, op_name, doc, AXIS=axis, KIND=kind)


_EXPAND_KINDS = ("add", "sub", "mul", "div", "max", "min", "expdif")
EXPAND_OPS = tuple(_expand(k, 0) for k in _EXPAND_KINDS) + tuple(_expand(k, 1) for k in _EXPAND_KINDS)


@irdl_op_definition
class TExpandsOp(VectorOp):
    """Fill a tile with a scalar: ``texpands ins(%s : f32) outs(%d : T)``."""

    name = "pto.texpands"
    WRITES_DST_VALID: ClassVar[bool] = True
    scalar = operand_def(AnyAttr())
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """vec destination; scalar kind matches."""
        self.vec(self.dst)
        self.scalar_for(self.scalar, self.dst)


@irdl_op_definition
class TCvtOp(VectorOp):
    """Element type conversion: ``tcvt ins(%src[, %tmp] {rmode = ..., sat_mode = ...} : T[, T]) outs(%dst : T2)``.

    ``sat_mode``: PTOAS's saturation of float -> int results (default ON: out-of-range values clamp;
    OFF: they wrap, the rounded value modulo 2^bits in two's complement, NaN and +-inf giving 0)."""

    name = "pto.tcvt"
    ATTRS_IN_INS: ClassVar[bool] = True
    src = operand_def(TileLike)
    tmp = opt_operand_def(TileLike)
    dst = operand_def(TileLike)
    rmode = opt_attr_def(RoundModeAttr)
    sat_mode = opt_attr_def(SaturationModeAttr)

    def saturates(self) -> bool:
        """Out-of-range float -> int results saturate (PTOAS's default, ``sat_mode`` ON)."""
        return self.sat_mode is None or self.sat_mode.data == SaturationMode.ON

    def verify_(self) -> None:
        """vec tiles with the same shape and the same valid shape."""
        s, d = self.vec(self.src), self.vec(self.dst)
        if s.shape != d.shape:
            raise self.fail(
                f"expects src and dst to have compatible shapes (src {dims_text(s.shape)}, dst {dims_text(d.shape)})",
                self.dst,
            )
        if any(a != b and DYNAMIC not in (a, b) for a, b in zip(s.valid, d.valid, strict=True)):
            raise self.fail(
                f"expects src and dst to have the same valid_shape (src {dims_text(s.valid)}, dst {dims_text(d.valid)})",
                self.dst,
            )


@irdl_op_definition
class TCmpOp(VectorOp):
    """``tcmp ins(%a, %b {cmpMode = #pto<cmp lt>} : T, T) outs(%mask : Tm)``."""

    name = "pto.tcmp"
    ATTRS_IN_INS: ClassVar[bool] = True
    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    dst = operand_def(TileLike)
    cmpMode = opt_attr_def(CmpModeAttr)  # noqa: N815

    def verify_(self) -> None:
        """vec tiles; equal source dtypes and valid shapes."""
        self.vec(self.src0)
        self.vec(self.src1)
        self.vec(self.dst)
        self.same_dtype(self.src0, self.src1)
        self.same_valid(self.src0, self.src1)


@irdl_op_definition
class TCmpSOp(VectorOp):
    """``tcmps ins(%a, %s {cmpMode = ...} : T, s) outs(%mask : Tm)``."""

    name = "pto.tcmps"
    ATTRS_IN_INS: ClassVar[bool] = True
    src = operand_def(TileLike)
    scalar = operand_def(AnyAttr())
    dst = operand_def(TileLike)
    cmpMode = opt_attr_def(CmpModeAttr)  # noqa: N815

    def verify_(self) -> None:
        """vec tiles; scalar kind matches."""
        self.vec(self.src)
        self.vec(self.dst)
        self.scalar_for(self.scalar, self.src)


@irdl_op_definition
class TSelOp(VectorOp):
    """``tsel ins(%mask, %a, %b, %tmp : Tm, T, T, T) outs(%d : T)``."""

    name = "pto.tsel"
    mask = operand_def(TileLike)
    src0 = operand_def(TileLike)
    src1 = operand_def(TileLike)
    tmp = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """Element-wise on the selected operands; PTOAS's element types per arch."""
        self.vec(self.mask)
        self.vec(self.tmp)
        self.elementwise(self.dst, self.src0, self.src1)
        t = tile_of(self.dst.type)
        if t is None:
            return
        a2a3 = target_arch(self) == A2A3
        widths = (16, 32) if a2a3 else (8, 16, 32)
        dtype = t.dtype
        ok = isinstance(dtype, Float16Type | Float32Type) or (
            isinstance(dtype, IntegerType) and dtype.width.data in widths
        )
        if not ok:
            which, allowed = ("A2/A3", "i16/i32/f16/f32") if a2a3 else ("A5", "i8/i16/i32/f16/f32")
            raise self.fail(f"expects {which} tsel src0, src1, and dst element type to be {allowed} (got {dtype})")


@irdl_op_definition
class TTransOp(VectorOp):
    """Transpose: ``ttrans ins(%src, %tmp : T, T) outs(%dst : T2)``."""

    name = "pto.ttrans"
    src = operand_def(TileLike)
    tmp = operand_def(TileLike)
    dst = operand_def(TileLike)

    def verify_(self) -> None:
        """dst valid = transposed src valid."""
        s = self.vec(self.src)
        self.vec(self.dst)
        self.vec(self.tmp)
        self.same_dtype(self.src, self.dst)
        _valid(self, self.dst, 0, s.valid[1], "the source's valid cols")
        _valid(self, self.dst, 1, s.valid[0], "the source's valid rows")


@irdl_op_definition
class TPrintOp(VectorOp):
    """Debug print of a tile: ``tprint ins(%t : T)`` (no outs)."""

    name = "pto.tprint"
    OUTS: ClassVar[int] = 0
    src = operand_def(TileLike)


VECTOR_OPS: tuple[type[DpsOp], ...] = (
    *BINARY_OPS,
    *TILE_SCALAR_OPS,
    TDivSOp,
    *UNARY_OPS,
    TRsqrtOp,
    TAddCOp,
    TSubCOp,
    TAddSCOp,
    TSubSCOp,
    TPReluOp,
    *ROW_REDUCE_OPS,
    TColMaxOp,
    TColMinOp,
    TColSumOp,
    TRowExpandOp,
    TColExpandOp,
    *EXPAND_OPS,
    TExpandsOp,
    TCvtOp,
    TCmpOp,
    TCmpSOp,
    TSelOp,
    TTransOp,
    TPrintOp,
)

