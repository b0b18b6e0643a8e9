"""The in-kernel ``pld.tensor.*`` collectives as compositions of the point-to-point ``pld`` ops.

Run by LowerCompositeOps (upstream's pass lowers them there too, into loops of the same ops); each
collective whose :meth:`~pypto.dialects.distributed_ops.PldOp.pto_blocker` is None becomes barriers,
remote tile loads, puts / gets, notifies and waits, unrolled over the static world size ``W`` (the
signal's first extent; of upstream's ring signal ``[2 * (W - 1), W]``, its last; ``me`` is the run-time rank, ``pld.rank``). Those lower to ``pto.comm.*``
(``ptoas/codegen/comm_ops.py``) and cost link cycles on the simulated chip. Upstream's algorithm per
collective (``src/ir/transforms/lower_composite_ops_pass.cpp``):

- ``allreduce`` mesh: ``barrier``; every rank ``p``'s ``data`` read in rank
  order (``remote_load``; the own one is local) and combined (``add / maximum / minimum / mul`` for
  Sum / Max / Min / Prod); ``barrier`` (nobody overwrites before all read); ``store``. Every rank combines
  in the same order, so all end with the same bits. A ``data`` over
  :attr:`~pypto.dialects.distributed_ops.AllreduceOp.MESH_UB_BYTES` goes chunk by chunk (tiles of at most
  :data:`CHUNK_BYTES`, :func:`blocks`), as upstream's mesh: one ``barrier``, then per group of chunks the
  reads (rank by rank, a rank's chunks back to back: the link pipelines them), the combinations (in rank
  order; the last chunk first, and the stores too, so the first chunk's buffer is freed last and one flag
  orders the next reads after all of them), a ``barrier`` and the chunks' ``store``s. Upstream's group is one chunk; here it is
  ``MESH_UB_BYTES / CHUNK_BYTES`` = 4 chunks (64 KiB of accumulators in UB, as the one-piece form holds), since
  a barrier's ``2 W`` notifies cost far more link cycles than a chunk's reads. With ``core_num = n > 1`` (the kernel launched as ``n``
  SPMD blocks, ``pl.spmd(n)``) block ``b`` (``pl.tile.get_block_idx()``) does this for its share, columns
  ``[b * C / n, (b + 1) * C / n)``, its barriers credit barriers on lane ``b`` of a ``[W, lanes >= n]`` signal
  (cell ``[p, b]`` counts block ``b`` of rank ``p``'s arrivals), so the blocks synchronise with their peers
  only. On a ring-shaped signal (``mode=ring`` whose ``C % W != 0``)
  both barriers are credit barriers on its last column (cell ``[p, W - 1]`` counts rank ``p``'s arrivals;
  the ring below uses column 0).
- ``allreduce`` ring, op Sum: the same rounds as pushes (:func:`_ring_push_sum`: an atomic-add ``put``
  of a whole segment into the right neighbour per reduce-scatter round, a ``put`` per allgather round,
  GM to GM).
- ``allreduce`` ring, other ops (``C % W == 0``; otherwise the mesh above): ``W`` column segments of ``C / W``,
  ``W - 1`` reduce-scatter steps (step ``s`` reads segment ``(me - s - 1) % W`` of the left neighbour in
  tiles of at most :data:`CHUNK_BYTES` (upstream's 16 KiB), up to :data:`BURST_BYTES` of them back to back,
  combines each with its own, stores it) then ``W - 1`` allgather steps (step ``s`` copies segment
  ``(me - s) % W`` from the left with one ``get``, GM to GM). Neighbour signals instead of barriers: cell 0 of the right
  neighbour counts the rounds this rank finished (its wait ``>= t`` before round ``t``: the left's
  segment is in place; by the ring's chain the right has read what this round overwrites), cell 1
  of the left one says "done reading you" at the end; both are cleared by credit (atomic ``-n``), so
  the signal (``W >= 2`` cells) can be used again. Each segment is reduced once and then copied, so
  all ranks end with the same bits.
- ``broadcast``: ``barrier``; ``get`` of ``root``'s ``data`` (the root reads itself, as upstream).
- ``allgather`` (``local_data`` ``[1, C]``, ``target`` ``[W, C]``): ``put`` of ``local_data`` into row
  ``me`` of every rank's ``target``; ``barrier``.
- ``reduce_scatter`` (``target`` ``[W, C]``): ``barrier``; row ``me`` combined with row ``me`` of every
  other rank (``remote_load``, ranks ``me + 1, me + 2 ...``); ``barrier``; ``store`` into row ``me``.
- ``all_to_all`` (``[W, C]`` both): ``put`` of row ``d`` of ``input`` into row ``me`` of rank ``d``'s
  ``target``, for every ``d``; ``barrier``.
- ``all_to_all_v`` (``[W * MAX_RECV, C]`` both): per ``d`` a ``put`` of the capacity block ``d`` into block
  ``me`` of rank ``d``'s ``target`` and a Set ``notify`` of the clamped ``send_counts[d]`` into rank ``d``'s
  ``recv_counts[me]``; ``barrier`` (:func:`lower_all_to_all_v`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.dialects import distributed_ops as D
from pypto.dialects import op_families as F
from pypto.dialects.distributed_enums import NotifyOp, ReduceOp, WaitCmp
from pypto.dialects.dtypes import dtype_bits
from pypto.dialects.enums import AtomicType, MemorySpace, enum_attr
from pypto.dialects.tile_ops import (
    TileAddOp,
    TileGetBlockIdxOp,
    TileLoadOp,
    TileMaximumOp,
    TileMinimumOp,
    TileMulOp,
    TileStoreOp,
)
from pypto.dialects.types import TensorType

COMBINE = {ReduceOp.Sum: TileAddOp, ReduceOp.Max: TileMaximumOp, ReduceOp.Min: TileMinimumOp, ReduceOp.Prod: TileMulOp}


def world_size(signal: SSAValue) -> int:
    """The static world size of a ``[W(, lanes)]`` signal (its first extent)."""
    t = signal.type
    assert isinstance(t, TensorType)
    return int(t.get_shape()[0])


class Emit:
    """New ops for one collective, inserted before it with its location; ``rank()`` is ``pld.rank``."""

    def __init__(self, op: Operation, anchor: SSAValue):
        self.op, self.anchor, self.new = op, anchor, list[Operation]()
        self._me: SSAValue | None = None

    def add(self, o: Operation) -> SSAValue:
        o.location = self.op.location
        self.new.append(o)
        return o.results[0]

    def const(self, v: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(v, IndexType())))

    def rank(self) -> SSAValue:
        if self._me is None:
            ctx = self.add(D.GetCommCtxOp.build_from_args({"tensor": self.anchor}, {}))
            self._me = self.add(D.RankOp.build_from_args({"ctx": ctx}, {}))
        return self._me

    def ring(self, shift: int, world: int) -> SSAValue:
        """``(me + shift) % world`` (``shift >= 0``)."""
        if shift % world == 0:
            return self.rank()
        s = self.add(arith.AddiOp(self.rank(), self.const(shift % world)))
        return self.add(arith.RemSIOp(s, self.const(world)))

    def barrier(self, sig: SSAValue) -> SSAValue:
        return self.add(D.BarrierOp.build_from_args({"signal": sig}, {}))

    def cell(self, sig: SSAValue, i: int) -> list[SSAValue]:
        t = sig.type
        assert isinstance(t, TensorType)
        return [self.const(i)] + [self.const(0) for _ in t.get_shape()[1:]]

    def notify(self, sig: SSAValue, peer: SSAValue, i: int | Sequence[SSAValue], value: int) -> SSAValue:
        """Add ``value`` to cell ``i`` (a row, or explicit offsets) of ``peer``'s ``sig``."""
        at = self.cell(sig, i) if isinstance(i, int) else list(i)
        return self.add(D.SystemNotifyOp.build_from_args(
            {"target": sig, "peer": peer, "offsets": at, "value": self.const(value)},
            {"op": enum_attr(NotifyOp.AtomicAdd)}))

    def wait(self, sig: SSAValue, i: int | Sequence[SSAValue], expected: int) -> SSAValue:
        """Wait until cell ``i`` (a row, or explicit offsets) of the own ``sig`` is ``>= expected``."""
        at = self.cell(sig, i) if isinstance(i, int) else list(i)
        return self.add(D.SystemWaitOp.build_from_args(
            {"signal": sig, "offsets": at, "expected": self.const(expected)},
            {"cmp": enum_attr(WaitCmp.Ge)}))

    def column_barrier(self, sig: SSAValue, world: int, column: SSAValue | None = None) -> SSAValue:
        """The credit barrier of ``pld.tensor.barrier`` on one column of a 2-D signal: by default the last
        column of a ring-shaped ``[rounds, W]`` one (cell ``[p, W - 1]`` counts rank ``p``'s arrivals;
        ``rounds >= W``, and the ring's own cells are in column 0), or ``column`` (an SPMD block's lane of a
        ``[W, lanes]`` one): a notify to every rank, then per rank a wait and a credit."""
        last = self.const(world - 1) if column is None else column
        for p in range(world):
            sig = self.notify(sig, self.const(p), [self.rank(), last], 1)
        for q in range(world):
            at = [self.const(q), last]
            sig = self.wait(sig, at, 1)
            sig = self.notify(sig, self.rank(), at, -1)
        return sig

    def remote_load(self, t: SSAValue, peer: SSAValue, offs: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue:
        return self.add(D.TileRemoteLoadOp.build_from_args({"target": t, "peer": peer, "offsets": list(offs)},
                                                           {"shape": F.INTS.to_attr(list(shape))}))

    def load(self, t: SSAValue, offs: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue:
        return self.add(TileLoadOp.build_from_args(
            {"tensor": t, "offsets": list(offs), "valid_shapes": [self.const(d) for d in shape]},
            {"shapes": F.INTS.to_attr(list(shape)), "target_memory": enum_attr(MemorySpace.Vec)}))

    def store(self, tile: SSAValue, offs: Sequence[SSAValue], t: SSAValue) -> SSAValue:
        return self.add(TileStoreOp.build_from_args({"tile": tile, "offsets": list(offs), "output": t}, {}))

    def combine(self, kind: ReduceOp, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(COMBINE[kind].build_from_args({"lhs": a, "rhs": b}, {}))

    def put(self, dst: SSAValue, peer: SSAValue, src: SSAValue, dst_offs: Sequence[SSAValue],
            src_offs: Sequence[SSAValue], shape: Sequence[int], atomic: bool = False) -> SSAValue:
        attrs = {"shape": F.INTS.to_attr(list(shape))}
        if atomic:
            attrs["atomic"] = enum_attr(AtomicType.Add)
        return self.add(D.TensorPutOp.build_from_args(
            {"dst": dst, "peer": peer, "src": src, "dst_offsets": list(dst_offs), "src_offsets": list(src_offs)},
            attrs))

    def get(self, dst: SSAValue, peer: SSAValue, src: SSAValue, offs: Sequence[SSAValue],
            shape: Sequence[int]) -> SSAValue:
        """``peer``'s ``src[offs : offs + shape]`` into the same place of this rank's ``dst`` (GM to GM)."""
        return self.add(D.TensorGetOp.build_from_args(
            {"dst": dst, "peer": peer, "src": src, "dst_offsets": list(offs), "src_offsets": list(offs)},
            {"shape": F.INTS.to_attr(list(shape))}))

    def replace(self, result: SSAValue) -> None:
        """Insert the new ops before the collective and make ``result`` its value."""
        block = self.op.parent_block()
        assert block is not None
        block.insert_ops_before(self.new, self.op)
        result.name_hint = self.op.results[0].name_hint
        self.op.results[0].replace_all_uses_with(result)
        Rewriter.erase_op(self.op)


def _shape(v: SSAValue) -> list[int]:
    t = v.type
    assert isinstance(t, TensorType)
    return [int(d) for d in t.get_shape()]


def _reduce_op(op: D.AllreduceOp | D.ReduceScatterOp) -> ReduceOp:
    return ReduceOp(op.op.data) if op.op is not None else ReduceOp.Sum


def lower_allreduce(op: D.AllreduceOp) -> None:
    """The mesh or ring expansion of the module docstring."""
    assert op.signal is not None
    rows, cols = _shape(op.data)
    world = op.world()
    e = Emit(op, op.data)
    if op.lowers_as_ring() and _reduce_op(op) is ReduceOp.Sum:
        e.replace(_ring_push_sum(e, op.data, op.signal, rows, cols, world))
        return
    if op.lowers_as_ring():
        e.replace(_ring_allreduce(e, op.data, op.signal, rows, cols, world, _reduce_op(op)))
        return
    e.replace(_mesh_allreduce(e, op, rows, cols, world))


def _mesh_allreduce(e: Emit, op: D.AllreduceOp, rows: int, cols: int, world: int) -> SSAValue:
    """The mesh of the module docstring: in one piece or in chunk groups, by the whole kernel or per SPMD block."""
    assert op.signal is not None
    by_col = op.ring_shaped_signal()  # a ring signal whose columns do not divide: the mesh on its last column
    n = op.core_count()  # SPMD blocks: block b reduces columns [b * share, (b + 1) * share), its barriers on lane b
    share = cols // n
    block = e.add(TileGetBlockIdxOp.build(result_types=[IndexType()])) if n > 1 else None
    base = e.add(arith.MuliOp(block, e.const(share))) if block is not None else None

    def barrier(sig: SSAValue) -> SSAValue:
        if block is not None:
            return e.column_barrier(sig, world, block)
        return e.column_barrier(sig, world) if by_col else e.barrier(sig)

    def column(c0: int) -> SSAValue:
        if base is None:
            return e.const(c0)
        return base if c0 == 0 else e.add(arith.AddiOp(base, e.const(c0)))

    t_ = op.data.type
    assert isinstance(t_, TensorType)
    whole = [(0, rows, 0, share)]
    chunks = whole if not op.mesh_is_chunked() else blocks(rows, share, max(1, dtype_bits(t_.element_type) // 8))
    per_group = max(1, D.AllreduceOp.MESH_UB_BYTES // CHUNK_BYTES)  # chunks held in UB between two barriers
    sig, data = barrier(op.signal), op.data
    for g in range(0, len(chunks), per_group):
        group = chunks[g:g + per_group]
        at = [[e.const(r0), column(c0)] for r0, _, c0, _ in group]
        accs: list[SSAValue | None] = [None] * len(group)
        for p in range(world):  # rank p's chunks of the group back to back (one link latency), then combined
            peer = e.const(p)
            loads = [e.remote_load(data, peer, a, [nr, nc]) for a, (_, nr, _, nc) in zip(at, group, strict=True)]
            for i in reversed(range(len(group))):  # the first load's buffer freed last: one flag before the next
                acc = accs[i]
                accs[i] = loads[i] if acc is None else e.combine(_reduce_op(op), acc, loads[i])
        sig = barrier(sig)  # every rank read these chunks of mine before I overwrite them
        for a, acc in reversed(list(zip(at, accs, strict=True))):  # the first chunk's buffer freed last
            assert acc is not None
            data = e.store(acc, a, data)
    return data


CHUNK_BYTES = 16 * 1024
"""The bytes of one ring tile (upstream's ``kAllReduceChunkBytes``): a segment moves in tiles of at most this."""

BURST_BYTES = 128 * 1024
"""The UB bytes of the pulled ring's tiles read from the left neighbour back to back (a burst), before any of
them is combined or stored: the link pipelines transfers issued one after another on a pipe, and any other
entry on it (a local load, a flag) waits for them to land, so each burst pays the link latency once. 128 KiB
leaves UB room (192 KiB) for the own tiles combined with them."""


def blocks(rows: int, cols: int, elem_bytes: int) -> list[tuple[int, int, int, int]]:
    """``(row, nrows, col, ncols)`` tiles of at most :data:`CHUNK_BYTES` covering ``[rows, cols]``: whole
    rows while a row fits, else column pieces of each row."""
    per_row = cols * elem_bytes
    if per_row <= CHUNK_BYTES:
        step = max(1, CHUNK_BYTES // per_row)
        return [(r, min(step, rows - r), 0, cols) for r in range(0, rows, step)]
    width = CHUNK_BYTES // elem_bytes
    return [(r, 1, c, min(width, cols - c)) for r in range(rows) for c in range(0, cols, width)]


def _ring_allreduce(e: Emit, data: SSAValue, sig: SSAValue, rows: int, cols: int, world: int,
                    kind: ReduceOp) -> SSAValue:
    seg = cols // world
    t_ = data.type
    assert isinstance(t_, TensorType)
    tiles = blocks(rows, seg, max(1, dtype_bits(t_.element_type) // 8))
    per_burst = max(1, BURST_BYTES // (tiles[0][1] * tiles[0][3] * max(1, dtype_bits(t_.element_type) // 8)))
    left, right = e.ring(world - 1, world), e.ring(1, world)
    rounds = 2 * (world - 1)
    sig = e.notify(sig, right, 0, 1)  # round 0: my data is in place
    for t in range(1, rounds + 1):
        sig = e.wait(sig, 0, t)  # the left neighbour finished round t - 1
        reduce = t <= world - 1
        s = t if reduce else t - (world - 1)
        index = e.ring(world - s - 1 if reduce else world - s, world)
        base = e.add(arith.MuliOp(index, e.const(seg)))
        if not reduce:  # a copy: the left's whole segment in one get (one link latency, no UB)
            data = e.get(data, left, data, [e.const(0), base], [rows, seg])
            if t < rounds:
                sig = e.notify(sig, right, 0, 1)
            continue
        for g in range(0, len(tiles), per_burst):  # nobody reads this segment of mine in this round
            at = [[e.const(r0), base if c0 == 0 else e.add(arith.AddiOp(base, e.const(c0)))]
                  for r0, _, c0, _ in tiles[g:g + per_burst]]
            shapes = [[nr, nc] for _, nr, _, nc in tiles[g:g + per_burst]]
            recv = [e.remote_load(data, left, a, sh) for a, sh in zip(at, shapes, strict=True)]  # back to back
            order = list(reversed(range(len(at))))  # the burst's first tile last: its buffer is freed last
            own = {order[0]: e.load(data, at[order[0]], shapes[order[0]])}
            for k, i in enumerate(order):  # the next own tile loads while this one is combined and stored
                if k + 1 < len(order):
                    own[order[k + 1]] = e.load(data, at[order[k + 1]], shapes[order[k + 1]])
                data = e.store(e.combine(kind, recv[i], own.pop(i)), at[i], data)
        if t < rounds:
            sig = e.notify(sig, right, 0, 1)
    sig = e.notify(sig, left, 1, 1)  # done reading the left neighbour
    sig = e.wait(sig, 1, 1)  # the right one is done reading me
    sig = e.notify(sig, e.rank(), 0, -rounds)  # clear both cells by credit (a fast left's next round stays)
    e.notify(sig, e.rank(), 1, -1)
    return data


def _ring_push_sum(e: Emit, data: SSAValue, sig: SSAValue, rows: int, cols: int, world: int) -> SSAValue:
    """The Sum ring as pushes (``tput``, GM to GM, a whole segment per round: no UB tiles): round ``t``
    of the reduce-scatter atomically adds segment ``(me - t) % W`` into the right neighbour's, round
    ``W - 1 + s`` of the allgather copies segment ``(me - s + 1) % W`` into it; cell 0 counts the rounds
    the left neighbour pushed into me, cell 1 says the right one is ready to be pushed into."""
    seg = cols // world
    zero = e.const(0)
    left, right = e.ring(world - 1, world), e.ring(1, world)
    rounds = 2 * (world - 1)
    sig = e.notify(sig, left, 1, 1)  # my data is in place: the left neighbour may push into me
    sig = e.wait(sig, 1, 1)
    for t in range(1, rounds + 1):
        if t >= 2:
            sig = e.wait(sig, 0, t - 1)  # the left neighbour's round t - 1 landed in me
        reduce = t <= world - 1
        shift = world - t if reduce else world - (t - (world - 1)) + 1
        col = e.add(arith.MuliOp(e.ring(shift, world), e.const(seg)))
        data = e.put(data, right, data, [zero, col], [zero, col], [rows, seg], atomic=reduce)
        sig = e.notify(sig, right, 0, 1)
    sig = e.wait(sig, 0, rounds)  # the last segment landed in me
    sig = e.notify(sig, e.rank(), 0, -rounds)  # clear both cells by credit (a fast neighbour's next call stays)
    e.notify(sig, e.rank(), 1, -1)
    return data


def lower_broadcast(op: D.BroadcastOp) -> None:
    e = Emit(op, op.data)
    e.barrier(op.signal)
    root = int(op.arg_view().attr("root"))
    get = e.add(D.TensorGetOp.build_from_args({"dst": op.data, "peer": e.const(root), "src": op.data}, {}))
    e.replace(get)


def lower_allgather(op: D.AllgatherOp) -> None:
    _, cols = _shape(op.target)
    e = Emit(op, op.target)
    zero, me = e.const(0), e.rank()
    target = op.target
    for p in range(world_size(op.signal)):
        target = e.put(target, e.const(p), op.local_data, [me, zero], [zero, zero], [1, cols])
    e.barrier(op.signal)
    e.replace(target)


def lower_reduce_scatter(op: D.ReduceScatterOp) -> None:
    _, cols = _shape(op.target)
    world = world_size(op.signal)
    e = Emit(op, op.target)
    zero, me = e.const(0), e.rank()
    sig = e.barrier(op.signal)
    acc = e.load(op.target, [me, zero], [1, cols])
    for k in range(1, world):
        acc = e.combine(_reduce_op(op), acc, e.remote_load(op.target, e.ring(k, world), [me, zero], [1, cols]))
    e.barrier(sig)
    e.replace(e.store(acc, [me, zero], op.target))


def lower_all_to_all(op: D.AllToAllOp) -> None:
    _, cols = _shape(op.target)
    e = Emit(op, op.target)
    zero, me = e.const(0), e.rank()
    target = op.target
    for d in range(world_size(op.signal)):
        dest = e.const(d)
        target = e.put(target, dest, op.input, [me, zero], [dest, zero], [1, cols])
    e.barrier(op.signal)
    e.replace(target)


def lower_all_to_all_v(op: D.AllToAllVOp) -> None:
    """``MAX_RECV = rows / W``: per rank ``d`` a ``put`` of ``input`` rows ``d * MAX_RECV ..`` (the whole
    capacity block) into rows ``me * MAX_RECV ..`` of rank ``d``'s ``target``, and a Set ``notify`` of
    ``min(max(send_counts[d], 0), MAX_RECV)`` (read from GM) into rank ``d``'s ``recv_counts[me]``; ``barrier``."""
    from pypto.dialects.tensor_ops import TensorReadOp

    rows, cols = _shape(op.target)
    world = world_size(op.signal)
    cap = rows // world
    e = Emit(op, op.target)
    zero, me = e.const(0), e.rank()
    base = e.add(arith.MuliOp(me, e.const(cap)))
    target, recv = op.target, op.recv_counts
    lo, hi = e.add(arith.ConstantOp(IntegerAttr(0, i32))), e.add(arith.ConstantOp(IntegerAttr(cap, i32)))
    for d in range(world):
        dest = e.const(d)
        target = e.put(target, dest, op.input, [base, zero], [e.const(d * cap), zero], [cap, cols])
        at = [dest] + [zero for _ in _shape(op.send_counts)[1:]]
        n = e.add(TensorReadOp.build_from_args({"input": op.send_counts, "indices": at}, {}))
        n = e.add(arith.MinSIOp(e.add(arith.MaxSIOp(n, lo)), hi))
        cell = [me] + [zero for _ in _shape(recv)[1:]]
        recv = e.add(D.SystemNotifyOp.build_from_args({"target": recv, "peer": dest, "offsets": cell, "value": n},
                                                      {"op": enum_attr(NotifyOp.Set)}))
    e.barrier(op.signal)
    e.replace(target)


LOWERINGS = {
    D.AllreduceOp: lower_allreduce,
    D.BroadcastOp: lower_broadcast,
    D.AllgatherOp: lower_allgather,
    D.ReduceScatterOp: lower_reduce_scatter,
    D.AllToAllOp: lower_all_to_all,
    D.AllToAllVOp: lower_all_to_all_v,
}
"""Collective op class -> its expansion (applied when the op's ``pto_blocker()`` is None)."""
