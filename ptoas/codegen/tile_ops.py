"""Lowering of the pl tile ops to pto ops (one handler per pl op family).

Each pl tile op class names its pto op (``PTO_OP``); :data:`HANDLERS` maps every
pl tile op class to its family's handler, which builds that pto op.

Every pl tile result gets its own ``pto.alloc_tile`` at its MemRef address
(as upstream PyPTO does), then the pto op writes it destination-passing
style. ``pl.tile.matmul_acc`` accumulates in place into its ``acc`` tile when
both share a MemRef. ``pl.tile.load`` / ``pl.tile.store`` go through a
``pto.partition_view`` of the parameter's ``pto.make_tensor_view``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import BoolAttr, IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue

from pypto.diagnostics import error_at
from pypto.dialects import op_families as F
from pypto.dialects.enums import AtomicType, AtomicTypeAttr
from pypto.dialects.op_base import PLOp
from pypto.dialects.tensor_ops import TensorDimOp, TensorReadOp, TensorWriteOp
from pypto.dialects.tile_ops import (
    TILE_OPS,
    TileAllocOp,
    TileCreateOp,
    TileExtractOp,
    TileFillpadOp,
    TileLoadOp,
    TileMoveOp,
    TileReadOp,
    TileStoreOp,
    TileTransposeViewOp,
    TileWriteOp,
    _BlockQueryOp,
    _TpopOp,
    _TpushOp,
)
from pypto.dialects.types import MemRefAttr, TensorType, TileType, flat_shape
from pypto.ptoas.dialect import DpsOp, op_class
from pypto.ptoas.dialect.attrs import AtomicType as PtoAtomicType
from pypto.ptoas.dialect.attrs import AtomicTypeAttr as PtoAtomicTypeAttr
from pypto.ptoas.dialect.attrs import RoundMode, RoundModeAttr
from pypto.ptoas.dialect.base import fill_operands
from pypto.ptoas.dialect.isa_misc_ops import LoadScalarOp, StoreScalarOp
from pypto.ptoas.dialect.tile_ops import TInsertOp, TReshapeOp
from pypto.ptoas.dialect.types import DYNAMIC, element_bits
from pypto.ptoas.dialect.vector_ops import ExpandBinaryOp, TColSumOp, TRsqrtOp
from pypto.ptoas.dialect.view_ops import MakeTensorViewOp, PartitionViewOp

from .state import LoweringState, TileRef, check, mem_key
from .types import UnsupportedType, partition_view_type, tile_buf_type

Handler = Callable[[LoweringState, Operation], None]

CAST_MODES = {
    "round": RoundMode.ROUND,
    "rint": RoundMode.RINT,
    "floor": RoundMode.FLOOR,
    "ceil": RoundMode.CEIL,
    "trunc": RoundMode.TRUNC,
    "odd": RoundMode.ODD,
    "none": RoundMode.NONE,
}


def pto_op(src: Operation) -> type[Operation]:
    """The pto op class a pl tile op lowers to (the class it names in ``PTO_OP``)."""
    name = src.PTO_OP if isinstance(src, PLOp) else None
    if name is None:
        raise error_at(src, f"ptoas codegen: '{src.name}' names no pto op")
    cls = op_class(name)
    if cls is None:
        raise error_at(src, f"ptoas codegen: '{src.name}' names '{name}', which is no pto op")
    return cls


def _dps(
    st: LoweringState,
    src: Operation,
    cls: type[Operation],
    ins: list[SSAValue | list[SSAValue]],
    dst: TileRef | SSAValue,
    **attrs: Attribute,
) -> None:
    """Build, check and append one destination-passing pto op (``dst``: a tile, or tstore's view)."""
    out = dst.value if isinstance(dst, TileRef) else dst
    if issubclass(cls, DpsOp) and all(isinstance(v, SSAValue) for v in ins):
        operands = fill_operands(cls, ins, [out])  # optional operands (trem's tmp...) left empty
    else:
        operands = [*ins, out]
    op = cls.build(operands=operands, attributes=attrs)
    check(op, src)
    st.emit(op, src)


def _result(st: LoweringState, src: Operation, valid: tuple[SSAValue, SSAValue] | None) -> TileRef:
    """Allocate the pl op's (single) tile result and record it."""
    res = src.results[0]
    ref = st.alloc(res.type, valid, src, res.name_hint)
    st.tiles[res] = ref
    return ref


def _valid(ref: TileRef) -> tuple[SSAValue, SSAValue]:
    return ref.valid_row, ref.valid_col


def lower_binary(st: LoweringState, src: Operation) -> None:
    """tile.add/sub/mul/div -> tadd/tsub/tmul/tdiv."""
    a, b = st.tile(src.operands[0], src), st.tile(src.operands[1], src)
    _dps(st, src, pto_op(src), [a.value, b.value], _result(st, src, _valid(a)))


def lower_scalar(st: LoweringState, src: Operation) -> None:
    """tile.adds/... -> tadds/... (tile, scalar)."""
    a = st.tile(src.operands[0], src)
    s = st.scalar(src.operands[1], src)
    _dps(st, src, pto_op(src), [a.value, s], _result(st, src, _valid(a)))


def lower_unary(st: LoweringState, src: Operation) -> None:
    """tile.exp/neg/... -> texp/tneg/... (TRsqrtOp: its optional tmp stays empty)."""
    a = st.tile(src.operands[0], src)
    cls = pto_op(src)
    ins: list[SSAValue | list[SSAValue]] = [a.value, []] if cls is TRsqrtOp else [a.value]
    _dps(st, src, cls, ins, _result(st, src, _valid(a)))


PAD_CODES = {"null": 0, "zero": 1, "max": 2, "min": 3}
"""``pl.PadValue`` -> the tile_buf ``pad`` parameter."""


def lower_fillpad(st: LoweringState, src: Operation) -> None:
    """tile.fillpad(t, pad_value=v) -> ``pto.tfillpad ins(t) outs(dst)``: dst is valid everywhere and its
    tile_buf carries the pad value (as upstream: ``pad=3`` for ``pl.PadValue.min``)."""
    assert isinstance(src, TileFillpadOp)
    a = st.tile(src.input, src)
    pad = src.properties.get("pad_value")
    code = PAD_CODES[pad.data.value if pad is not None else "zero"]  # type: ignore[attr-defined]
    res = src.results[0]
    ref = st.alloc(res.type, None, src, res.name_hint, pad=code)
    st.tiles[res] = ref
    _dps(st, src, pto_op(src), [a.value], ref)


def lower_row_reduce(st: LoweringState, src: Operation) -> None:
    """row_sum/max/min(input, tmp) -> trowsum/... ins(src, tmp): rows x 1."""
    a, tmp = st.tile(src.operands[0], src), st.tile(src.operands[1], src)
    dst = _result(st, src, (a.valid_row, st.const(1)))
    _dps(st, src, pto_op(src), [a.value, tmp.value], dst)


def lower_transpose(st: LoweringState, src: Operation) -> None:
    """transpose(input, 0, 1, tmp) -> ttrans ins(src, tmp): the valid dims swap."""
    a, tmp = st.tile(src.operands[0], src), st.tile(src.operands[1], src) if len(src.operands) > 1 else None
    if tmp is None:
        raise error_at(src, "ptoas codegen: pl.tile.transpose needs its scratch tile (tmp_tile)")
    dst = _result(st, src, (a.valid_col, a.valid_row))
    _dps(st, src, pto_op(src), [a.value, tmp.value], dst)


def lower_col_reduce(st: LoweringState, src: Operation) -> None:
    """col_sum(input, tmp) -> tcolsum ins(src, tmp {isBinary = false}); col_sum(input) -> tcolsum ins(src);
    col_max -> tcolmax ins(src) (the scratch tile is optional: ``pl.col_sum(t)`` has none)."""
    a = st.tile(src.operands[0], src)
    dst = _result(st, src, (st.const(1), a.valid_col))
    cls = pto_op(src)
    if cls is TColSumOp and len(src.operands) > 1:
        tmp = st.tile(src.operands[1], src)
        _dps(st, src, cls, [a.value, [tmp.value]], dst, isBinary=BoolAttr.from_bool(False))
    elif cls is TColSumOp:
        _dps(st, src, cls, [a.value, []], dst)
    else:
        _dps(st, src, cls, [a.value], dst)


def lower_expand(st: LoweringState, src: Operation) -> None:
    """row_expand/col_expand(input, vec) -> trowexpand/tcolexpand ins(vec);
    row_expand_<k>/col_expand_<k> -> trowexpand<k>/tcolexpand<k> ins(input, vec)."""
    a, v = st.tile(src.operands[0], src), st.tile(src.operands[1], src)
    dst = _result(st, src, _valid(a))
    cls = pto_op(src)
    if issubclass(cls, ExpandBinaryOp):
        _dps(st, src, cls, [a.value, v.value, []], dst)
    else:
        _dps(st, src, cls, [v.value], dst)


def lower_matmul(st: LoweringState, src: Operation) -> None:
    """matmul(lhs, rhs) -> tmatmul; matmul_acc(acc, lhs, rhs) -> tmatmul.acc (in place when same MemRef)."""
    if isinstance(src, F.MatmulAccOp):
        acc, lhs, rhs = (st.tile(v, src) for v in src.operands)
        res = src.results[0]
        if isinstance(res.type, TileType) and acc.key is not None and mem_key(res.type) == acc.key:
            dst = acc
            st.tiles[res] = acc
        else:
            dst = _result(st, src, _valid(acc))
        _dps(st, src, pto_op(src), [acc.value, lhs.value, rhs.value], dst)
        return
    lhs, rhs = st.tile(src.operands[0], src), st.tile(src.operands[1], src)
    dst = _result(st, src, (lhs.valid_row, rhs.valid_col))
    _dps(st, src, pto_op(src), [lhs.value, rhs.value], dst)


def lower_cast(st: LoweringState, src: Operation) -> None:
    """cast(input, target_type, mode) -> tcvt ins(src {rmode}) (no tmp)."""
    a = st.tile(src.operands[0], src)
    dst = _result(st, src, _valid(a))
    mode = src.properties.get("mode")
    rmode = CAST_MODES[F.STR.from_attr(mode)] if mode is not None else RoundMode.ROUND  # mode: verified (CastOp)
    _dps(st, src, pto_op(src), [a.value, []], dst, rmode=RoundModeAttr(rmode))


def lower_move(st: LoweringState, src: Operation) -> None:
    """move(tile, target_memory) -> tmov (mat->left/right: MTE1; acc->vec/mat: FIX; vec->vec: V)."""
    a = st.tile(src.operands[0], src)
    _dps(st, src, pto_op(src), [a.value], _result(st, src, _valid(a)))


def lower_extract(st: LoweringState, src: Operation) -> None:
    """extract(input, [r, c], shapes) / slice(input, [r, c]) -> textract ins(src, r, c); a slice's
    ``valid_shape`` is its result's valid shape (the window is otherwise valid everywhere)."""
    a = st.tile(src.operands[0], src)
    if isinstance(src, F.SliceOp):
        offsets = list(src.operands[1:3])
    else:
        offsets = list(src.operands[1:])
    if len(offsets) != 2:
        raise error_at(src, f"ptoas codegen: '{src.name}' needs 2-D offsets, got {len(offsets)}")
    r, c = (st.scalar(v, src) for v in offsets)
    given = list(src.valid_shape) if isinstance(src, F.SliceOp) else []  # slice(..., valid_shape=[vr, vc])
    if given and len(given) != 2:
        raise error_at(src, f"ptoas codegen: '{src.name}' needs a 2-D valid_shape, got {len(given)} entries")
    valid = (st.scalar(given[0], src), st.scalar(given[1], src)) if given else None
    _dps(st, src, pto_op(src), [a.value, r, c], _result(st, src, valid))


def lower_create(st: LoweringState, src: Operation) -> None:
    """create(shape) -> alloc_tile only (no data movement)."""
    _result(st, src, None)


def lower_full(st: LoweringState, src: Operation) -> None:
    """full(shape, dtype, value) -> alloc_tile + texpands ins(%value)."""
    dst = _result(st, src, None)
    t = src.results[0].type
    value = src.properties["value"]
    raw = getattr(getattr(value, "value", None), "data", None)
    if raw is None:
        raise error_at(src, "ptoas codegen: pl.tile.full needs a constant fill value")
    assert isinstance(t, TileType)
    _dps(st, src, pto_op(src), [st.const(raw, t.element_type)], dst)


def lower_reshape(st: LoweringState, src: Operation) -> None:
    """reshape(input, shape) -> %r = pto.treshape %src (aliases the source); between an N-D tile and its
    flattened 2-D form (FlattenTileNdTo2D's reshapes around an N-D load or store) the same tile."""
    a = st.tile(src.operands[0], src)
    res = src.results[0]
    assert isinstance(res.type, TileType)
    shape, before = res.type.get_shape(), src.operands[0].type
    if isinstance(before, TileType) and (len(shape), len(before.get_shape())) != (2, 2):  # N-D <-> flat 2-D
        flat = flat_shape(shape)
        if DYNAMIC not in flat and flat == flat_shape(before.get_shape()):
            st.tiles[res] = a
            return
    try:
        t = tile_buf_type(res.type)
    except UnsupportedType as e:
        raise error_at(src, f"ptoas codegen: '{src.name}': {e}") from None
    op = TReshapeOp.build(operands=[a.value], result_types=[t])
    op.result.name_hint = res.name_hint
    st.emit(op, src)
    st.tiles[res] = TileRef(op.result, st.const(t.rows.data), st.const(t.cols.data), a.key)


def _partition(st: LoweringState, src: Operation, tensor: SSAValue, offsets: list[SSAValue], sizes: list[SSAValue]) -> SSAValue:
    view = st.view(tensor, src)
    t = tensor.type
    assert isinstance(t, TensorType)
    if len(offsets) != len(t.get_shape()) or len(sizes) != len(offsets):
        raise error_at(src, f"ptoas codegen: '{src.name}' window rank differs from the tensor's {len(t.get_shape())}")
    pv_type = partition_view_type([st.static(s) for s in sizes], t.element_type)
    op = PartitionViewOp.build(operands=[view, offsets, sizes], result_types=[pv_type])
    hint = tensor.name_hint
    op.result.name_hint = f"{hint}_pview" if hint else None
    st.emit(op, src)
    return op.result


def lower_load(st: LoweringState, src: Operation) -> None:
    """load(tensor, offsets, shapes, valid_shapes) -> partition_view + alloc_tile + tload."""
    tensor = src.operands[0]
    t = tensor.type
    if not isinstance(t, TensorType):
        raise error_at(src, "ptoas codegen: pl.tile.load reads a tensor parameter")
    rank = len(t.get_shape())
    offsets = [st.scalar(v, src) for v in src.operands[1 : 1 + rank]]
    valid = [st.scalar(v, src) for v in src.operands[1 + rank :]]
    if len(valid) != rank:
        shapes = src.properties["shapes"]
        valid = [st.const(int(d)) for d in getattr(shapes, "get_values", lambda: [])()]
    if rank == 2:
        dst = _result(st, src, (valid[0], valid[1]))
    else:  # an N-D window (FlattenTileNdTo2D keeps the load N-D): one 2-D tile of its flattened shape
        dst = _flat_result(st, src, valid)
    pv = _partition(st, src, tensor, offsets, valid)
    _dps(st, src, pto_op(src), [pv], dst)


def _flat_result(st: LoweringState, src: Operation, valid: list[SSAValue]) -> TileRef:
    """The 2-D tile of an N-D load's result (``[d0, ..., dk]`` -> ``[d0 * ... * dk-1, dk]``, as
    FlattenTileNdTo2D flattens; ``pto.tload`` fills it row-major from the N-D window). Its valid rows are
    the product of the leading valid extents, which must be constants."""
    res = src.results[0]
    t = res.type
    assert isinstance(t, TileType)
    leading = [st.static(v) for v in valid[:-1]]
    if DYNAMIC in leading:
        raise error_at(src, f"ptoas codegen: '{src.name}': a rank-{len(valid)} window with a dynamic leading "
                            "extent cannot be loaded into one 2-D tile; load 2-D windows")  # fmt: skip
    ref = st.alloc(t.with_(shape=flat_shape(t.get_shape()), view=None), (st.const(prod(leading)), valid[-1]), src,
                   res.name_hint)  # fmt: skip
    st.tiles[res] = ref
    return ref


def lower_store(st: LoweringState, src: Operation) -> None:
    """store(tile, offsets, output) -> partition_view (tile's valid shape) + tstore; the result is the output's view."""
    tile = st.tile(src.operands[0], src)
    out = src.operands[-1]
    t = out.type
    if not isinstance(t, TensorType):
        raise error_at(src, "ptoas codegen: pl.tile.store writes a tensor")
    rank = len(t.get_shape())
    offsets = [st.scalar(v, src) for v in src.operands[1:-1]]
    written = src.operands[0].type
    if rank > 2 and isinstance(written, TileType) and len(written.get_shape()) == rank:  # an N-D tile's window
        sizes = [st.const(d) for d in written.get_shape()]
    else:  # a 2-D tile into [1, ..., 1, rows, cols]; a [1, n] tile into a 1-D tensor
        sizes = [st.const(1)] * (rank - 2) + [tile.valid_row, tile.valid_col][-rank:]
    pv = _partition(st, src, out, offsets, sizes)
    attrs: dict[str, Attribute] = {}
    atomic = src.properties.get("atomic")
    if isinstance(atomic, AtomicTypeAttr) and atomic.data is AtomicType.Add:
        attrs["atomicType"] = PtoAtomicTypeAttr(PtoAtomicType.atomic_add)
    _dps(st, src, pto_op(src), [tile.value, []], pv, **attrs)
    st.views[src.results[0]] = st.view(out, src)




def lower_assemble(st: LoweringState, src: Operation) -> None:
    """assemble(target, source, [r, c]) -> ``pto.tmov`` of source into a window tile aliasing the result
    (Acc FP32 -> Mat FP16/BF16: ``pto.tinsert`` into the result, the cube's FIXPIPE write-back).

    The window is an ``alloc_tile`` at ``result_addr + (r * cols + c) * elem`` with the result's
    row pitch (cols) and the source's valid shape; the result reuses the target's tile when
    both share a MemRef (else the target is copied first). Needs planned, constant offsets.
    """
    target, source = st.tile(src.operands[0], src), st.tile(src.operands[1], src)
    res = src.results[0]
    t = res.type
    if not isinstance(t, TileType) or t.get_memref() is None:
        raise error_at(src, "ptoas codegen: pl.tile.assemble needs tiles with planned addresses")
    if target.key is not None and target.key == mem_key(t):
        dst = target
    else:
        dst = _result(st, src, _valid(target))
        st.move(target, dst, src)
    st.tiles[res] = dst
    src_t = src.operands[1].type
    if F.fixpipe_narrowing(src_t, t):
        # The FIXPIPE write-back: ``pto.tinsert`` at (r, c), run-time offsets allowed, converting
        # FP32 to FP16 / BF16 on the way (a folded ``pl.cast(..., mode="rint")``).
        r, c = (st.scalar(v, src) for v in src.operands[2:4])
        _dps(st, src, TInsertOp, [source.value, r, c], dst)
        return
    r, c = (st.static(st.scalar(v, src)) for v in src.operands[2:4])
    if DYNAMIC in (r, c):
        raise error_at(src, "ptoas codegen: pl.tile.assemble needs constant offsets")
    cols = t.get_shape()[1]
    assert isinstance(src_t, TileType)
    rows = src_t.get_shape()[0]
    elem = element_bits(t.element_type) // 8
    memref = t.get_memref()
    assert memref is not None
    window_t = t.with_(shape=(rows, cols), memref=MemRefAttr.get(memref.base.data, memref.offset.data + (r * cols + c) * elem, rows * cols * elem))
    window = st.alloc(window_t, _valid(source), src, f"{res.name_hint}_window" if res.name_hint else None)
    _dps(st, src, pto_op(src), [source.value], window)


def lower_alloc(st: LoweringState, src: Operation) -> None:
    """pl.tile.alloc: no pto op (tiles carry their address)."""


def _split_attr(src: Operation) -> IntegerAttr:
    split = src.properties.get("split")
    if split is None:
        split = src.attributes.get("split")
    return IntegerAttr(split.value.data if isinstance(split, IntegerAttr) else 0, i64)


def lower_tpush(st: LoweringState, src: Operation) -> None:
    """pl.tile.tpush_to_aiv/aic -> ``pto.tpush_to_aiv(%t : T) {split = N}`` (upstream PyPTO's form)."""
    tile = st.tile(src.operands[0], src)
    op = pto_op(src).build(operands=[tile.value], attributes={"split": _split_attr(src)})
    check(op, src)
    st.emit(op, src)


def lower_tpop(st: LoweringState, src: Operation) -> None:
    """pl.tile.tpop_from_aic/aiv -> ``%t = pto.tpop_from_aic [(%vr, %vc)] {split = N} -> T``: the popped tile lives in a
    pipe slot, not at the pl tile's MemRef, so it is its own buffer (no MemRef key)."""
    res = src.results[0]
    t = res.type
    if not isinstance(t, TileType):
        raise error_at(src, f"ptoas codegen: '{src.name}' produces {t}, expected a tile")
    shape = t.get_shape()
    given = [st.scalar(v, src) for v in src.valid_shape]  # the pushed tile's run-time valid shape (a _TpopOp's)
    try:
        buf = tile_buf_type(t) if given else tile_buf_type(t, (shape[0], shape[1]))
    except UnsupportedType as e:
        raise error_at(src, f"ptoas codegen: '{src.name}': {e}") from None
    dims = ([given[0]], [given[1]]) if given else ([], [])
    op = pto_op(src).build(operands=list(dims), result_types=[buf], attributes={"split": _split_attr(src)})
    op.results[0].name_hint = res.name_hint
    check(op, src)
    st.emit(op, src)
    valid = (given[0], given[1]) if given else (st.const(shape[0]), st.const(shape[1]))
    st.tiles[res] = TileRef(op.results[0], *valid, None)


def lower_block_query(st: LoweringState, src: Operation) -> None:
    """pl.tile.get_block_idx/get_block_num -> ``pto.get_block_idx`` (i64), cast to the pl ``index``."""
    query = st.emit(pto_op(src).build(result_types=[i64]), src)
    cast = st.emit(arith.IndexCastOp(query.results[0], IndexType()), src)
    if src.results[0].name_hint:
        cast.results[0].name_hint = src.results[0].name_hint
    st.scalars[src.results[0]] = cast.results[0]


FAMILY_HANDLERS: tuple[tuple[type[Operation], Handler], ...] = (
    (F.BinaryOp, lower_binary),
    (F.ScalarBinaryOp, lower_scalar),
    (TileFillpadOp, lower_fillpad),
    (F.UnaryOp, lower_unary),
    (F.RowReduceOp, lower_row_reduce),
    (F.ColReduceOp, lower_col_reduce),
    (F.TransposeOp, lower_transpose),
    (F.ExpandOp, lower_expand),
    (F.MatmulOp, lower_matmul),
    (F.MatmulAccOp, lower_matmul),
    (F.CastOp, lower_cast),
    (TileMoveOp, lower_move),
    (TileExtractOp, lower_extract),
    (F.SliceOp, lower_extract),
    (TileCreateOp, lower_create),
    (F.FullOp, lower_full),
    (F.ReshapeOp, lower_reshape),
    (TileTransposeViewOp, lower_reshape),
    (TileLoadOp, lower_load),
    (TileStoreOp, lower_store),
    (TileAllocOp, lower_alloc),
    (F.AssembleOp, lower_assemble),
    (_TpushOp, lower_tpush),
    (_TpopOp, lower_tpop),
    (_BlockQueryOp, lower_block_query),
)
"""The handler of each pl op family (or single op)."""


def _family_handler(cls: type[Operation]) -> Handler | None:
    """The handler of the first family in :data:`FAMILY_HANDLERS` that ``cls`` derives from.

    Read from ``cls.__mro__``, not ``issubclass``: the op classes are ABCs, and a first ``issubclass``
    against an ABC that says no walks all of that base's subclasses (about 65 ms for the table below in
    a fresh process). No family is registered as a virtual subclass, so the answer is the same."""
    mro = cls.__mro__
    return next((h for base, h in FAMILY_HANDLERS if base in mro), None)


def _table() -> dict[type[Operation], Handler]:
    handlers = {cls: _family_handler(cls) for cls in TILE_OPS if not getattr(cls, "NO_PTO", None)}
    return {cls: h for cls, h in handlers.items() if h is not None}


def _gm_element(st: LoweringState, src: Operation, tensor: SSAValue, indices: Sequence[SSAValue]) -> tuple[SSAValue, SSAValue]:
    """The GM pointer of kernel parameter ``tensor`` and the row-major offset of element ``indices``."""
    view = st.view(tensor, src).owner
    if not isinstance(view, MakeTensorViewOp):
        raise error_at(src, f"ptoas codegen: {src.name} needs a tensor parameter")
    t = tensor.type
    assert isinstance(t, TensorType)
    return view.ptr, _linear(st, src, t.get_shape(), indices)


def _linear(st: LoweringState, src: Operation, shape: Sequence[int], indices: Sequence[SSAValue]) -> SSAValue:
    """The row-major flat offset of element ``indices`` of a ``shape`` array (upstream's flat offset)."""
    linear: SSAValue | None = None
    for k, idx in enumerate(indices):
        term = st.scalar(idx, src)
        stride = 1
        for d in shape[k + 1 :]:
            stride *= d
        if stride != 1:
            term = st.emit(arith.MuliOp(term, st.const(stride)), src).results[0]
        linear = term if linear is None else st.emit(arith.AddiOp(linear, term), src).results[0]
    assert linear is not None
    return linear


def lower_gm_read(st: LoweringState, src: Operation) -> None:
    """pl.tensor.read(param, [i, j]) in a kernel -> ``pto.load_scalar %ptr[i * cols + j]`` (row-major)."""
    assert isinstance(src, TensorReadOp)
    ptr, offset = _gm_element(st, src, src.input, src.indices)
    t = src.input.type
    assert isinstance(t, TensorType)
    op = st.emit(LoadScalarOp.build(operands=[ptr, offset], result_types=[t.element_type]), src)
    if src.results[0].name_hint:
        op.results[0].name_hint = src.results[0].name_hint
    st.scalars[src.results[0]] = op.results[0]


def lower_gm_write(st: LoweringState, src: Operation) -> None:
    """pl.tensor.write(param, [i, j], v) in a kernel -> ``pto.store_scalar %v, %ptr[i * cols + j]``
    (upstream's tensor.write codegen); its result names the same tensor."""
    assert isinstance(src, TensorWriteOp)
    ptr, offset = _gm_element(st, src, src.target, src.indices)
    st.emit(StoreScalarOp.build(operands=[ptr, offset, st.scalar(src.value, src)]), src)
    st.views[src.results[0]] = st.view(src.target, src)


def lower_tile_read(st: LoweringState, src: Operation) -> None:
    """pl.tile.read(t, [i, j]) -> ``pto.tgetval ins(%t, %off)`` (the flat offset in the tile's shape)."""
    from pypto.ptoas.dialect.isa_tile_ops import TGetValOp  # the ISA ops: loaded by the kernels that use them

    assert isinstance(src, TileReadOp)
    tile = st.tile(src.input, src)
    shape = src.input.type.get_shape()  # type: ignore[attr-defined]
    off = _linear(st, src, shape, src.indices)
    op = st.emit(TGetValOp.build(operands=[tile.value, off], result_types=[src.results[0].type]), src)
    if src.results[0].name_hint:
        op.results[0].name_hint = src.results[0].name_hint
    st.scalars[src.results[0]] = op.results[0]


def lower_tile_write(st: LoweringState, src: Operation) -> None:
    """pl.tile.write(t, [i, j], v) -> ``pto.tsetval ins(%off, %v) outs(%t)`` (upstream's tile.write
    codegen); the result is the same tile."""
    from pypto.ptoas.dialect.isa_tile_ops import TSetValOp  # the ISA ops: loaded by the kernels that use them

    assert isinstance(src, TileWriteOp)
    tile = st.tile(src.target, src)
    off = _linear(st, src, src.target.type.get_shape(), src.indices)  # type: ignore[attr-defined]
    st.emit(TSetValOp.build(operands=[off, st.scalar(src.value, src), tile.value]), src)
    st.tiles[src.results[0]] = tile


def lower_dim(st: LoweringState, src: Operation) -> None:
    """pl.tensor.dim(param, axis) in a kernel: the parameter's (static) extent, a constant."""
    assert isinstance(src, TensorDimOp)
    extent = src.static_extent()
    if extent is None:
        raise error_at(src, "ptoas codegen: pl.tensor.dim of a dynamic extent (the kernel's shapes are static)")
    st.scalars[src.results[0]] = st.const(extent, src.results[0].type)


HANDLERS: dict[type[Operation], Handler] = {
    **_table(), TensorReadOp: lower_gm_read, TensorWriteOp: lower_gm_write, TensorDimOp: lower_dim,
    TileReadOp: lower_tile_read, TileWriteOp: lower_tile_write,
}
"""pl tile op class -> handler (and the kernel's GM scalar read); ops missing here are reported as unsupported."""
