"""xDSL ``InterpreterFunctions`` for the ``pto`` dialect.

:class:`PTOFunctions` holds the :class:`~pypto.device.interpreter.core.CoreState`
and has one ``@impl`` per pto op class: GM views and tile allocation return
Python values (:class:`~pypto.device.interpreter.memory.GmPtr`,
:class:`TensorView`, :class:`PartitionView`, :class:`TileRef`); every
destination-passing op computes its result into the core's byte buffers and
is then accounted (pipe, cycles, record, race check) by :func:`_dps`; sync ops
drive the timeline and the race detector's clocks.

Each op class maps to a :data:`Prepare`: called once per op, it resolves what
the op's attributes fix (pipes, event ids, instruction name, cost formula)
and returns the :data:`Run` that executes it. The xDSL engine prepares an op
on its first execution; the compiled engine (:mod:`.compiled`) when it
compiles the function. Handlers run inside ``np.errstate(all="ignore")``
(set once per kernel by :func:`~.run.run_kernel`): float overflow and NaN are
values, as on the device.

The handlers are keyed by op class (:data:`PTO_HANDLERS`); a data op's numerics
come from its family's handler and the numpy kernel its class names (``KIND``,
a key of the :mod:`.numerics` tables).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from pypto.ptoas.dialect import PTO_OPS, DpsOp, tile_of
from pypto.ptoas.dialect import misc_ops as M
from pypto.ptoas.dialect import pipe_ops as P
from pypto.ptoas.dialect import sync_ops as S
from pypto.ptoas.dialect import tile_ops as T
from pypto.ptoas.dialect import vector_ops as V
from pypto.ptoas.dialect import view_ops as VW
from pypto.ptoas.dialect.attrs import SYNC_OP_PIPE, Pipe, SyncOpType
from pypto.ptoas.dialect.tile_ops import TExtractOp, TInsertOp, TMovOp, _CubeOp
from pypto.ptoas.dialect.types import DYNAMIC, PartitionTensorViewType, TileBufType

from . import numerics as nm
from .core import CoreState, Pushed
from .costs import instr_name
from .memory import (
    F32,
    F64,
    DeviceError,
    GmPtr,
    PartitionView,
    PeerGmPtr,
    TensorView,
    TileRef,
    dtype_of,
    to_compute,
    to_storage,
)
from .timing import PIPE_NAMES

Handler = Callable[[CoreState, Interpreter, Any, PythonValues], PythonValues]
"""An op's semantics, reading what it needs from the op on every call."""
Run = Callable[[CoreState, Interpreter, PythonValues], PythonValues]
"""One prepared op: its semantics on a core, given the operand values."""
Prepare = Callable[[Any], Run]
"""Resolves an op's static facts once and returns its :data:`Run`."""


def per_call(handler: Handler) -> Prepare:
    """A :data:`Prepare` for a handler with nothing to resolve ahead."""

    def prepare(op: Any) -> Run:
        return lambda core, interp, args: handler(core, interp, op, args)

    prepare.handler = handler  # type: ignore[attr-defined]  # for _dps: the handler called with no wrapper
    return prepare


def tile_ref(t: Any, addr: int, valid: tuple[int, int] | None = None) -> TileRef:
    """A TileRef for a tile_buf / address-space memref type at ``addr``."""
    tile = tile_of(t)
    if tile is None or tile.space is None:
        raise DeviceError(f"{t} is not an on-chip tile type")
    rows, cols = tile.shape
    v = valid or tile.valid
    valid = (rows if v[0] == DYNAMIC else v[0], cols if v[1] == DYNAMIC else v[1])
    col_major = tile.blayout is not None and tile.blayout.value == "col_major"
    return TileRef(tile.space.value, addr, dtype_of(tile.dtype), rows, cols, valid, col_major)


# -- accounting of destination-passing ops --------------------------------------------------------


Tiles = Sequence[TileRef]
"""A data op's input or output tiles."""
Cost = Callable[[CoreState, Tiles, Tiles, PythonValues], tuple[int, str, str]]
"""A data op's (cycles, kind, detail). ``cost.of_tile`` (``"out"``: the output tile, ``"main"``: the first input
tile, else the output), when set, says the result depends only on that tile's valid shape, element type and
space and on ``core.costs``: the fused loop (:mod:`.fused`) reuses it while the tile and its valid shape are
the same objects; ``"store"``: on the first input tile's space, valid shape and element type and the last
operand (a ``PartitionView``'s sizes and element type), reused while those are the same."""
Measured = tuple[tuple[int, str, str], Tiles, Tiles]
"""What a data op's accounting needs: its (cycles, kind, detail), input tiles and output tiles."""


def _cube_cost(instr: str) -> Cost:
    def cost(core: CoreState, ins: Tiles, outs: Tiles, args: PythonValues) -> tuple[int, str, str]:
        a, b = (t for t in ins if t.space in ("left", "right"))
        m, k = a.valid
        n = b.valid[1]
        return core.costs.matmul(m, k, n, a.dtype.name), "compute", f"{m}x{k}x{n} {a.dtype.name}"

    return cost


def _tload_cost(instr: str) -> Cost:
    memo: dict[tuple[object, ...], tuple[int, str, str]] = {}

    def cost(core: CoreState, ins: Tiles, outs: Tiles, args: PythonValues) -> tuple[int, str, str]:
        d = outs[0]
        key = (core.costs, d.valid, d.dtype.name, d.space)
        got = memo.get(key)
        if got is None:
            nbytes = d.valid[0] * d.valid[1] * d.dtype.itemsize
            got = memo[key] = (
                core.costs.transfer(instr, None, d.space, nbytes),
                "transfer",
                f"gm->{d.space} {nbytes}B",
            )
        return got

    cost.of_tile = "out"  # type: ignore[attr-defined]  # a function of the out tile's facts (fused.py)
    return cost


def _tstore_cost(instr: str) -> Cost:
    memo: dict[tuple[object, ...], tuple[int, str, str]] = {}

    def cost(core: CoreState, ins: Tiles, outs: Tiles, args: PythonValues) -> tuple[int, str, str]:
        s = ins[0]
        pv = args[-1]
        if isinstance(pv, PartitionView):
            key: tuple[object, ...] = (core.costs, s.space, pv.sizes, pv.ptr.dtype.name)
        else:
            key = (core.costs, s.space, s.valid, s.dtype.name)
        got = memo.get(key)
        if got is None:
            if isinstance(pv, PartitionView):
                count = 1
                for d in pv.sizes:
                    count *= d
                nbytes = count * pv.ptr.dtype.itemsize
            else:
                nbytes = s.valid[0] * s.valid[1] * s.dtype.itemsize
            got = memo[key] = (
                core.costs.transfer(instr, s.space, None, nbytes),
                "transfer",
                f"{s.space}->gm {nbytes}B",
            )
        return got

    cost.of_tile = "store"  # type: ignore[attr-defined]  # into a window: of ins[0]'s space, the window's facts
    return cost


def _move_cost(instr: str, moved_is_src: bool) -> Cost:
    def cost(core: CoreState, ins: Tiles, outs: Tiles, args: PythonValues) -> tuple[int, str, str]:
        s, d = ins[0], outs[0]
        moved = s if moved_is_src else d
        nbytes = moved.valid[0] * moved.valid[1] * d.dtype.itemsize
        return core.costs.transfer(instr, s.space, d.space, nbytes), "transfer", f"{s.space}->{d.space} {nbytes}B"

    return cost


def _compute_cost(instr: str) -> Cost:
    memo: dict[tuple[object, ...], tuple[int, str, str]] = {}

    def cost(core: CoreState, ins: Tiles, outs: Tiles, args: PythonValues) -> tuple[int, str, str]:
        main = ins[0] if ins else outs[0]
        key = (core.costs, main.valid, main.dtype.name)
        got = memo.get(key)
        if got is None:
            rows, cols = main.valid
            name = main.dtype.name
            got = memo[key] = (core.costs.compute(instr, name, rows, cols), "compute", f"{rows}x{cols} {name}")
        return got

    cost.of_tile = "main"  # type: ignore[attr-defined]  # of the first input tile's (else the output's)
    return cost


REPEAT_PRICED = ("TSORT32", "TMRGSORT", "TGATHERB")
"""Ops priced per repeat of their one vector intrinsic (vbitsort, vmrgsort4, vgatherb): the target's row
for each is ``head + slope * elems`` with ``elems`` the instruction's repeat count (:func:`repeats`)."""

VECTOR_REPEAT_BYTES = 256
"""One vector repeat: 256 B (a2a3; docs/reference a2a3-costs.md)."""


def repeats(instr: str, ins: Tiles, outs: Tiles, args: PythonValues) -> int:
    """The repeat count of the op's intrinsic, over all rows (head charged once per op):

    - TSORT32 (vbitsort): one repeat per block of 32 values, 32 (value, index) pairs = 256 B of dst;
    - TMRGSORT (vmrgsort4, repeat = bits [7:0] of its config): format 1 one repeat per group of 4 lists of
      ``blockLen`` elements (``valid cols / (4 * blockLen)`` a row); format 2 one merge of its 2-4 lists
      (1 a row of dst);
    - TGATHERB (vgatherb): one repeat per 256 B (8 blocks of 32 B) of dst's valid elements."""
    if instr == "TSORT32":
        rows, cols = ins[0].valid
        return rows * -(-cols // 32)
    if instr == "TMRGSORT":
        if len(ins) == 1 and len(args) == 3:  # format 1 (src, blockLen, dst)
            rows, cols = ins[0].valid
            block = max(1, int(args[1]))
            return rows * max(1, cols // (4 * block))
        return (outs[0] if outs else ins[0]).valid[0]  # one merge a row (the sources' rows are dst's)
    d = outs[0]  # the offsets name every 32-byte block of dst: one pass over its valid bytes
    return max(1, -(-(d.valid[0] * d.valid[1] * d.dtype.itemsize) // VECTOR_REPEAT_BYTES))


def _repeat_cost(instr: str) -> Cost:
    def cost(core: CoreState, ins: Tiles, outs: Tiles, args: PythonValues) -> tuple[int, str, str]:
        n = repeats(instr, ins, outs, args)
        main = ins[0] if ins else outs[0]
        return core.costs.compute(instr, main.dtype.name, 1, n), "compute", f"{n} repeats {main.dtype.name}"

    return cost


FIXPIPE_QUANT = {"TSTORE_FP": "TSTORE", "TMOV_FP": "TMOV", "TEXTRACT_FP": "TEXTRACT", "TINSERT_FP": "TINSERT"}
"""The fixpipe vector-quant forms and the plain instruction whose cost row (the a2a3 fallback) they use."""


def _cost_of(op: DpsOp, instr: str) -> Cost:
    """The cost formula of one data op: cube, DMA, tile move or vector compute."""
    if isinstance(op, _CubeOp) or hasattr(op, "COST_AS"):  # the mx ops: the non-mx cube row (a2a3 fallback)
        return _cube_cost(instr)
    if instr == "TLOAD":
        return _tload_cost(instr)
    if instr == "TSTORE":
        return _tstore_cost(instr)
    if instr in FIXPIPE_QUANT:  # priced as the plain move from acc (the target has no _FP rows)
        base = FIXPIPE_QUANT[instr]
        return _tstore_cost(base) if base == "TSTORE" else _move_cost(base, base == "TINSERT")
    if isinstance(op, TMovOp | TExtractOp | TInsertOp):
        return _move_cost(instr, isinstance(op, TInsertOp))
    if instr in REPEAT_PRICED:
        return _repeat_cost(instr)
    return _compute_cost(instr)


def _dps(numerics: Prepare) -> Prepare:
    """Run a data op's numerics, then time it and check its accesses.

    A vector or DMA op's cost depends only on its tiles' valid shapes, element types and spaces (and the
    target): the (cycles, kind, detail) of each is computed once per op and kept by that key."""

    handler: Handler | None = getattr(numerics, "handler", None)

    def prepare(op: DpsOp) -> Run:
        compute = numerics(op) if handler is None else None
        n_in = len(op.operands) - op.OUTS
        outs_at = _out_positions(op, n_in)
        pipe, instr = op.pipe() or Pipe.PIPE_V, instr_name(op.name)
        cost = _cost_of(op, instr)
        name = op.name
        tiles = _static_tiles(op, outs_at)
        single = tiles is not None and len(tiles[0]) <= 1 and len(tiles[1]) <= 1  # the common case: unrolled
        i0 = tiles[0][0] if single and tiles[0] else -1  # type: ignore[index]
        o0 = tiles[1][0] if single and tiles[1] else -1  # type: ignore[index]

        def operands(args: PythonValues) -> tuple[Tiles, Tiles]:
            """The input and output tiles among the operand values."""
            if single:
                return ((args[i0],) if i0 >= 0 else ()), ((args[o0],) if o0 >= 0 else ())
            if tiles is None:
                tiles_at = [(i, v) for i, v in enumerate(args) if type(v) is TileRef]
                return [v for i, v in tiles_at if i not in outs_at], [v for i, v in tiles_at if i in outs_at]
            return [args[i] for i in tiles[0]], [args[i] for i in tiles[1]]

        def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
            if compute is None:
                handler(core, interp, op, args)  # type: ignore[misc]
            else:
                compute(core, interp, args)
            ins: Tiles
            outs: Tiles
            if single:  # operands(args), inlined
                ins = (args[i0],) if i0 >= 0 else ()
                outs = (args[o0],) if o0 >= 0 else ()
            else:
                ins, outs = operands(args)
            cycles, kind, detail = cost(core, ins, outs, args)
            core.timeline.issue(name, instr, pipe, cycles, kind, op, detail)  # account(), inlined
            races = core.races
            if races is not None:
                races.instruction(pipe, op, ins, outs)
            return ()

        def probe(core: CoreState, args: PythonValues) -> Measured:
            """What the accounting of a run with these operands needs, without running it."""
            ins, outs = operands(args)
            return cost(core, ins, outs, args), ins, outs

        def check(core: CoreState, interp: Interpreter, args: PythonValues, want: Measured) -> Measured | None:
            """The numerics, then None when the accounting is ``want`` (the same tile objects and cost), else
            the accounting's :func:`probe` (loop replay: the accounting is checked, not done)."""
            if compute is None:
                handler(core, interp, op, args)  # type: ignore[misc]
            else:
                compute(core, interp, args)
            w_cost, ins, outs = want
            if single:
                if (i0 >= 0 and not _same_place(args[i0], ins[0])) or (o0 >= 0 and not _same_place(args[o0], outs[0])):
                    return probe(core, args)
            else:
                now_ins, now_outs = operands(args)
                if len(now_ins) != len(ins) or len(now_outs) != len(outs):
                    return probe(core, args)
                if not all(map(_same_place, now_ins, ins)) or not all(map(_same_place, now_outs, outs)):
                    return probe(core, args)
            got = cost(core, ins, outs, args)
            return None if got is w_cost or got == w_cost else (got, ins, outs)

        def account(core: CoreState, measured: Measured) -> None:
            """Time the instruction and check its accesses, as :func:`run` does after the numerics."""
            (cycles, kind, detail), ins, outs = measured
            core.timeline.issue(name, instr, pipe, cycles, kind, op, detail)
            races = core.races
            if races is not None:
                races.instruction(pipe, op, ins, outs)

        target_pipe, pipe_name = PIPE_NAMES[pipe]
        acc = (op, pipe)  # the race detector's record of an access by this op (RaceDetector.instruction_1)

        def step_of(gather: Callable[[Any], PythonValues]) -> Callable[[Any, CoreState], None]:
            """:func:`run` as the compiled engine's step, its operands gathered from the slots by ``gather``
            (one call per execution: the queue end and the record written here, as
            :meth:`~.timing.Timeline.issue` does)."""

            def step(env: Any, core: CoreState) -> None:
                args = gather(env)
                if compute is None:
                    handler(core, core.interp, op, args)  # type: ignore[misc]
                else:
                    compute(core, core.interp, args)
                ins: Tiles
                outs: Tiles
                if single:
                    ins = (args[i0],) if i0 >= 0 else ()
                    outs = (args[o0],) if o0 >= 0 else ()
                else:
                    ins, outs = operands(args)
                cycles, kind, detail = cost(core, ins, outs, args)
                tl = core.timeline
                free = tl.free
                start = free.get(pipe, 0)
                end = free[pipe] = start + cycles
                tl.rows.append((name, instr, target_pipe, pipe_name, start, end, kind, op, detail))
                races = core.races
                if races is not None:
                    if single:
                        races.instruction_1(acc, ins[0] if ins else None, outs[0] if outs else None)
                    else:
                        races.instruction(pipe, op, ins, outs)

            if single:  # fused.py's "data" template writes this step out
                step.inline = (  # type: ignore[attr-defined]
                    "data",
                    dict(
                        gather=gather, compute=compute, handler=handler, op=op, i0=i0, o0=o0, cost=cost, pipe=pipe,
                        name=name, instr=instr, target_pipe=target_pipe, pipe_name=pipe_name, acc=acc,
                    ),
                )  # fmt: skip
            return step

        def numerics_step_of(gather: Callable[[Any], PythonValues]) -> Callable[[Any, CoreState], None]:
            """The numerics of :func:`step_of`'s step alone: no cost, no record, no race check (a run whose
            accounting is remembered, :mod:`.race_memo`; fused.py's "numerics" template writes it out)."""
            if compute is None:

                def step(env: Any, core: CoreState) -> None:
                    handler(core, core.interp, op, gather(env))  # type: ignore[misc]

            else:

                def step(env: Any, core: CoreState) -> None:
                    compute(core, core.interp, gather(env))

            step.inline = ("numerics", dict(gather=gather, compute=compute, handler=handler, op=op))  # type: ignore[attr-defined]
            return step

        run.check, run.probe, run.account, run.pipe = check, probe, account, pipe  # type: ignore[attr-defined]
        run.step_of, run.numerics_step_of = step_of, numerics_step_of  # type: ignore[attr-defined]
        return run

    return prepare


def _same_place(a: TileRef, b: TileRef) -> bool:
    """The same tile, or one at the same bytes (what the race detector sees of it; its cost is compared
    apart): a tile allocated in a loop body is a new object every iteration."""
    return a is b or (a.addr == b.addr and a.nbytes == b.nbytes and a.space == b.space)


def _out_positions(op: Any, n_in: int) -> frozenset[int]:
    """Operand positions of the outputs: the last ``OUTS``, or where ``outs()`` puts them for an op whose
    optional inputs follow its output (``INTERLEAVED_INS``: ``tmov``'s src, dst, fp / pre-quant)."""
    if getattr(op, "INTERLEAVED_INS", False):
        outs = op.outs()
        return frozenset(i for i, v in enumerate(op.operands) if any(v is o for o in outs))
    return frozenset(range(n_in, len(op.operands)))


def _static_tiles(op: Operation, outs_at: frozenset[int]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Positions of the tile operands among the inputs and among the outputs, when the operand types fix
    them (tile_buf: a tile; scalar or view: not), else None (found from the values on every run)."""
    ins: list[int] = []
    outs: list[int] = []
    for i, v in enumerate(op.operands):
        if isinstance(v.type, TileBufType):
            (outs if i in outs_at else ins).append(i)
        elif not isinstance(v.type, PartitionTensorViewType | IntegerType | IndexType | AnyFloat):
            return None
    return tuple(ins), tuple(outs)


# -- data-op numerics ----------------------------------------------------------------------------


def _rd(core: CoreState, t: TileRef, shape: tuple[int, int] | None = None, copy: bool = False) -> np.ndarray:
    """A tile's values (a view of its bytes when no conversion is needed: the result must not be written
    into unless ``copy``; writing results over an overlapping input is safe, numpy buffers overlaps)."""
    x = core.memory.read(t, copy)
    return x if shape is None else x[: shape[0], : shape[1]]


def _wr(core: CoreState, t: TileRef, values: np.ndarray) -> None:
    values = np.asarray(values)
    if values.ndim < 2:
        core.memory.write(t, values)
        return
    r = min(values.shape[0], t.rows)
    c = min(values.shape[1], t.cols)
    core.memory.write(t, values[:r, :c], r, c)


def _scalar(s: Any, t: TileRef) -> Any:
    return np.float32(s) if t.dtype.is_float and t.dtype.compute == np.float32 else s


def binary(kind: str, partial: bool = False) -> Handler:
    """``tadd``-style ops (``tpart*``: dst = src0 where src1 does not reach)."""
    fn = nm.BINARY[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, b, d = args[0], args[1], args[-1]  # trem may carry a tmp tile
        if partial:
            x, y = _rd(core, a, copy=True), _rd(core, b)
            r, c = min(x.shape[0], y.shape[0]), min(x.shape[1], y.shape[1])
            x[:r, :c] = fn(x[:r, :c], y[:r, :c])
            _wr(core, d, x)
        else:
            _wr(core, d, fn(_rd(core, a, d.valid), _rd(core, b, d.valid)))
        return ()

    return h


def tile_scalar(kind: str) -> Handler:
    """``tadds``-style ops, ``taxpy`` (dst += src * s)."""
    fn = nm.BINARY.get(kind)

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, s, d = args[0], args[1], args[-1]  # trems may carry a tmp tile
        if kind == "axpy":
            _wr(core, d, _rd(core, d) + _rd(core, a, d.valid) * _scalar(s, d))
        else:
            assert fn is not None
            _wr(core, d, fn(_rd(core, a, d.valid), _scalar(s, a)))
        return ()

    return h


def tdivs(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """tile / scalar, or scalar / tile."""
    s0, s1, d = args
    if isinstance(s0, TileRef):
        _wr(core, d, nm.BINARY["div"](_rd(core, s0, d.valid), _scalar(s1, s0)))
    else:
        _wr(core, d, nm.BINARY["div"](np.asarray(_scalar(s0, s1)), _rd(core, s1, d.valid)))
    return ()


def unary(kind: str) -> Handler:
    """``texp``-style ops (an optional tmp operand comes before the destination).

    An fp32/fp64 tile into one of the same type and valid shape is computed straight into the destination's
    bytes (:data:`~.numerics.UNARY_INTO`: the same ufunc loop, no temporaries)."""
    fn = nm.UNARY[kind]
    into = nm.UNARY_INTO.get(kind)
    direct = (F32, F64)

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, d = args[0], args[-1]
        if into is not None and a.dtype is d.dtype and a.dtype in direct and a.valid == d.valid:
            vr, vc = a.valid
            src, dst = a.raw_view, d.raw_view
            if src is None:
                src = core.memory.raw(a)
            if dst is None:
                dst = core.memory.raw(d)
            if vr != a.rows or vc != a.cols:
                src, dst = src[:vr, :vc], dst[:vr, :vc]
            into(src, dst)
            return ()
        _wr(core, d, fn(_rd(core, a, d.valid)))
        return ()

    return h


def ternary(sign: int, with_scalar: bool) -> Handler:
    """taddc/tsubc (a ± b + c) and taddsc/tsubsc (a ± s + b)."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, mid, c, d = args
        m = _scalar(mid, a) if with_scalar else _rd(core, mid, d.valid)
        _wr(core, d, _rd(core, a, d.valid) + sign * m + _rd(core, c, d.valid))
        return ()

    return h


def tprelu(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """a if a > 0 else a * b."""
    a, b, _tmp, d = args
    x, y = _rd(core, a, d.valid), _rd(core, b, d.valid)
    _wr(core, d, np.where(x > 0, x, x * y))
    return ()


def row_reduce(kind: str) -> Handler:
    """trowsum/max/min/prod/argmax/argmin (one value per row)."""
    fn = nm.ROW_REDUCE[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        src, d = args[0], args[-1]
        _wr(core, d, fn(_rd(core, src)))
        return ()

    return h


def col_reduce(kind: str) -> Handler:
    """tcolsum/max/min (one value per column)."""
    fn = nm.COL_REDUCE[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        src, d = args[0], args[-1]
        _wr(core, d, fn(_rd(core, src)))
        return ()

    return h


def expand(axis: int, kind: str | None) -> Handler:
    """trowexpand/tcolexpand (broadcast) and their binary forms (src0 op broadcast vector)."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        d = args[-1]
        vr, vc = d.valid
        if kind is None:
            v = _rd(core, args[0])
            v = v[:vr, :1] if axis == 0 else v[:1, :vc]
            _wr(core, d, np.broadcast_to(v, (vr, vc)))
            return ()
        x, v = _rd(core, args[0], d.valid), _rd(core, args[1])
        v = v[:vr, :1] if axis == 0 else v[:1, :vc]
        _wr(core, d, nm.BINARY[kind](x, v))
        return ()

    return h


def texpands(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Fill the valid region with a scalar."""
    s, d = args
    core.memory.write(d, np.full(d.valid, s, dtype=d.dtype.compute))
    return ()


def tcvt(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Convert element types with the op's round mode (default CAST_RINT); float -> int saturates, or
    with ``sat_mode = OFF`` wraps (:func:`~.numerics.wrap_to_int`)."""
    src, d = args[0], args[-1]
    x = _rd(core, src, d.valid)
    mode = op.rmode.data.value if op.rmode is not None else "CAST_RINT"
    if src.dtype.is_float and not d.dtype.is_float:
        to_int = nm.round_to_int if op.saturates() else nm.wrap_to_int
        core.memory.write(d, to_int(x, mode, d.dtype.storage), x.shape[0], x.shape[1])
    else:
        _wr(core, d, x.astype(np.float64) if d.dtype.name == "fp64" else x)
    return ()


def tcmp(scalar: bool) -> Handler:
    """tcmp/tcmps: 1 where the comparison holds, else 0 (one element per element, not bit-packed)."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, b, d = args
        x = _rd(core, a)
        y = _scalar(b, a) if scalar else _rd(core, b, x.shape)
        mode = op.cmpMode.data.value if op.cmpMode is not None else "eq"
        _wr(core, d, nm.CMP[mode](x, y).astype(d.dtype.compute))
        return ()

    return h


def tsel(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """a where mask != 0, else b."""
    mask, a, b, _tmp, d = args
    x, y = _rd(core, a, d.valid), _rd(core, b, d.valid)
    m = _rd(core, mask)[: x.shape[0], : x.shape[1]]
    _wr(core, d, np.where(m != 0, x, y))
    return ()


def ttrans(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Transpose the valid region."""
    src, _tmp, d = args
    _wr(core, d, _rd(core, src).T)
    return ()


def tprint(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Keep the tile's values in ``core.prints``."""
    core.prints.append(np.array2string(_rd(core, args[0])))
    return ()


def tload(op: Any) -> Run:
    """GM window -> tile valid region (a bit copy; the widths agree)."""

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        pv, d = args
        vr, vc = valid = d.valid
        w = pv.view
        if w is None:
            w = pv.window()
        if w.size != vr * vc:
            raise DeviceError(f"tload moves {w.size} elements into a tile with valid {vr}x{vc}")
        if pv.ptr.__class__ is PeerGmPtr:  # a remote load (pld.tile.remote_load): the link first
            from .comm_impls import remote_fetch, remote_tile

            remote_tile(core, op, pv.ptr.peer, w.size * w.itemsize, False)
            remote_fetch(op, w)
        if w.shape != valid:
            w = np.ascontiguousarray(w).reshape(vr, vc)
        raw = d.raw_view
        if raw is None:
            raw = core.memory.raw(d)
        if vr != d.rows or vc != d.cols:
            raw = raw[:vr, :vc]
        storage = d.dtype.storage
        raw[...] = w if w.dtype is storage else w.view(storage)
        return ()

    return run


def _remote_done(op: Any, window: np.ndarray, add: np.ndarray | None, gdt: Any) -> None:
    """A store through a peer's view reaches its owner: the written bytes (``add`` None), or ``add`` added."""
    from .comm_impls import remote_add, remote_commit

    if add is None:
        remote_commit(op, window)
    else:
        remote_add(op, window, add, gdt.name)


def tstore(op: Any) -> Run:
    """Tile valid region -> GM window (acc: converted; relu and atomic add honoured)."""
    relu = op.reluPreMode is not None and op.reluPreMode.data.value == "normal_relu"
    atomic = op.atomicType is not None and op.atomicType.data.value == "atomic_add"

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        s, pv = args[0], args[-1]
        window = pv.view
        if window is None:
            window = pv.window()
        gdt = pv.ptr.dtype
        vr, vc = valid = s.valid
        if window.size != vr * vc:
            raise DeviceError(f"tstore moves a tile with valid {vr}x{vc} into {window.size} GM elements")
        remote = pv.ptr.__class__ is PeerGmPtr
        if remote:  # a remote store (pld.tile.remote_store): the link first, the owner's bytes after
            from .comm_impls import remote_tile

            remote_tile(core, op, pv.ptr.peer, window.size * window.itemsize, True)
        if s.space != "acc" and not relu and not atomic and gdt.itemsize == s.dtype.itemsize:
            raw = s.raw_view
            if raw is None:
                raw = core.memory.raw(s)
            if vr != s.rows or vc != s.cols:
                raw = raw[:vr, :vc]
            if window.shape == valid:
                storage = gdt.storage
                window[...] = raw if raw.dtype is storage else raw.view(storage)
            else:
                window[...] = np.ascontiguousarray(raw).view(gdt.storage).reshape(window.shape)
            if remote:
                _remote_done(op, window, None, gdt)
            return ()
        x = _rd(core, s)
        if relu:
            x = np.maximum(x, 0)
        if atomic and remote:  # added at the owner, atomically
            _remote_done(op, window, to_storage(x, gdt).reshape(window.shape), gdt)
            return ()
        if atomic:
            x = to_compute(np.ascontiguousarray(window), gdt).reshape(x.shape) + x
        window[...] = to_storage(x, gdt).reshape(window.shape)
        if remote:
            _remote_done(op, window, None, gdt)
        return ()

    return run


def quant_param(bits: Any) -> np.ndarray:
    """Fixpipe quant parameters -> float32 scales: a 64-bit parameter holds the f32 scale's bits in its
    low 32 bits (the sign / offset fields above them are not modelled); a float one is the scale."""
    arr = np.asarray(bits)
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 8:
        return (arr.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return arr.astype(np.float32)


def fp_scales(core: CoreState, fp: TileRef, cols: int) -> np.ndarray:
    """The per-column scales of a scaling (``fp``) tile: its row 0, column ``j`` for moved column ``j``."""
    if fp.cols < cols:
        raise DeviceError(f"the fp tile has {fp.cols} quant parameters for {cols} columns")
    raw = core.memory.raw(fp)[0, :cols]
    return quant_param(raw if raw.dtype.itemsize == 8 else to_compute(raw, fp.dtype))


def fixpipe_quant(x: np.ndarray, scale: np.ndarray | np.float32, relu: bool, dt: Any) -> np.ndarray:
    """Fixpipe quantisation: ``f32(x)`` (relu first when asked) times the scale in float32, then to
    ``dt``: integers round half to even and saturate, floats round to nearest even."""
    y = x.astype(np.float32)
    if relu:
        y = np.where(y < 0, np.float32(0), y)
    y = y * scale
    if not dt.is_float:
        info = np.iinfo(dt.storage)
        return np.clip(np.rint(y).astype(np.float64), info.min, info.max).astype(dt.storage)
    return y


def _relu(op: Any) -> bool:
    relu = getattr(op, "reluPreMode", None)
    return relu is not None and relu.data.value == "normal_relu"


def tmov(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Tile copy between spaces (acc -> other: converted; relu honoured). With an fp tile (``tmov.fp``
    too) or a pre-quant scalar: :func:`fixpipe_quant` by column (:func:`fp_scales`) or by the scalar."""
    if isinstance(op, TMovOp):  # src, dst[, fp | pre-quant scalar]
        s, d = args[0], args[1]
    else:  # tmov.fp: src, fp, dst
        s, d = args[0], args[2]
    x = _rd(core, s, d.valid)
    if len(args) == 3:
        q = args[2] if isinstance(op, TMovOp) else args[1]
        scale = fp_scales(core, q, x.shape[1]) if isinstance(q, TileRef) else quant_param(np.int64(q))
        _wr(core, d, fixpipe_quant(x, scale, _relu(op), d.dtype))
        return ()
    if _relu(op):
        x = np.maximum(x, 0)
    _wr(core, d, x)
    return ()


def textract(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """dst = src[r:r+vr, c:c+vc]."""
    s, r, c, d = args
    vr, vc = d.valid
    if r < 0 or c < 0 or r + vr > s.rows or c + vc > s.cols:
        raise DeviceError(f"textract window {vr}x{vc} at ({r}, {c}) exceeds the {s.rows}x{s.cols} source")
    _wr(core, d, to_compute(core.memory.raw(s)[r : r + vr, c : c + vc], s.dtype))
    return ()


def tinsert(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """dst[r:r+vr, c:c+vc] = src (converted)."""
    s, r, c, d = args
    vr, vc = s.valid
    if r < 0 or c < 0 or r + vr > d.rows or c + vc > d.cols:
        raise DeviceError(f"tinsert window {vr}x{vc} at ({r}, {c}) exceeds the {d.rows}x{d.cols} destination")
    core.memory.raw(d)[r : r + vr, c : c + vc] = to_storage(_rd(core, s), d.dtype)
    return ()


def matmul(mode: str) -> Handler:
    """tmatmul[.acc|.bias] and tgemv*: fp32 (int32 for int8) accumulation."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        d = args[-1]
        lhs, rhs = (args[1], args[2]) if mode == "acc" else (args[0], args[1])
        a, b = _rd(core, lhs), _rd(core, rhs)
        k = min(a.shape[1], b.shape[0])
        acc_t = np.int32 if np.issubdtype(a.dtype, np.integer) else np.float32
        out = a[:, :k].astype(acc_t) @ b[:k, :].astype(acc_t)
        if mode == "acc":
            out = out + _rd(core, args[0], out.shape)
        elif mode == "bias":
            out = out + _rd(core, args[2])[:1, : out.shape[1]]
        _wr(core, d, out)
        return ()

    return h


DATA_FAMILIES: tuple[tuple[type[DpsOp], Callable[[Any], Handler]], ...] = (
    (V.BinaryOp, lambda c: binary(c.KIND, partial=c.PARTIAL)),
    (V.TileScalarOp, lambda c: tile_scalar(c.KIND)),
    (V.TDivSOp, lambda c: tdivs),
    (V.UnaryOp, lambda c: unary(c.KIND)),
    (V.TRsqrtOp, lambda c: unary(c.KIND)),
    (V.TAddCOp, lambda c: ternary(1, False)),
    (V.TSubCOp, lambda c: ternary(-1, False)),
    (V.TAddSCOp, lambda c: ternary(1, True)),
    (V.TSubSCOp, lambda c: ternary(-1, True)),
    (V.TPReluOp, lambda c: tprelu),
    (V.RowReduceOp, lambda c: row_reduce(c.KIND)),
    (V.ColReduceOp, lambda c: col_reduce(c.KIND)),
    (V.BroadcastOp, lambda c: expand(c.AXIS, None)),
    (V.ExpandBinaryOp, lambda c: expand(c.AXIS, c.KIND)),
    (V.TExpandsOp, lambda c: texpands),
    (V.TCvtOp, lambda c: tcvt),
    (V.TCmpOp, lambda c: tcmp(False)),
    (V.TCmpSOp, lambda c: tcmp(True)),
    (V.TSelOp, lambda c: tsel),
    (V.TTransOp, lambda c: ttrans),
    (V.TPrintOp, lambda c: tprint),
    (T.TMovOp, lambda c: tmov),
    (T.TExtractOp, lambda c: textract),
    (T.TInsertOp, lambda c: tinsert),
    (T.TMatmulOp, lambda c: matmul("plain")),
    (T.TMatmulAccOp, lambda c: matmul("acc")),
    (T.TMatmulBiasOp, lambda c: matmul("bias")),
    (T.TGemvOp, lambda c: matmul("plain")),
    (T.TGemvAccOp, lambda c: matmul("acc")),
    (T.TGemvBiasOp, lambda c: matmul("bias")),
)
"""Numerics of the data ops by family (or op) class, made from the class's facts (``KIND``: the
numpy kernel in :mod:`.numerics`; ``AXIS``; ``PARTIAL``)."""


def data_handlers() -> dict[type[Operation], Prepare]:
    """Numerics by op class."""
    prepared: dict[type[Operation], Prepare] = {}
    for op_cls in PTO_OPS:
        make = next((m for family, m in DATA_FAMILIES if issubclass(op_cls, family)), None)
        if make is not None:
            prepared[op_cls] = per_call(make(op_cls))
    prepared[T.TLoadOp], prepared[T.TStoreOp] = tload, tstore
    return prepared


# -- views, buffers, sync, queries ---------------------------------------------------------------


def make_tensor_view(op: Any) -> Run:
    """A pointer with shape and strides."""
    n = len(op.shape)

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        ptr = args[0]
        if not isinstance(ptr, GmPtr):
            raise DeviceError(f"make_tensor_view expects a GM pointer argument, got {type(ptr).__name__}")
        return (TensorView(ptr, tuple(args[1 : 1 + n]), tuple(args[1 + n :])),)

    run.pure = True  # type: ignore[attr-defined]  # no accounting: loop replay runs it as it is
    return run


def partition_view(op: Any) -> Run:
    """A window at offsets with sizes."""
    n = len(op.offsets)
    if n == 2 and len(op.sizes) == 2:

        def run_2d(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
            view, o0, o1, n0, n1 = args
            if len(view.shape) == 2:
                return (view.partition_2d(o0, o1, n0, n1),)
            return (view.partition((o0, o1), (n0, n1)),)

        def value_step(ins: tuple[int, ...], out: int) -> Callable[[Any, CoreState], None]:
            """:func:`run_2d` as the compiled engine's step over the slots ``ins`` (one call per execution)."""
            v, a, b, c, d = ins

            def step(env: Any, core: CoreState) -> None:
                view = env[v]
                if len(view.shape) == 2:
                    env[out] = view.partition_2d(env[a], env[b], env[c], env[d])
                else:
                    env[out] = view.partition((env[a], env[b]), (env[c], env[d]))

            step.inline = ("view_2d", dict(v=v, a=a, b=b, c=c, d=d, out=out))  # type: ignore[attr-defined]
            return step

        run_2d.pure = True  # type: ignore[attr-defined]
        run_2d.value_step = value_step  # type: ignore[attr-defined]
        return run_2d

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        return (args[0].partition(args[1 : 1 + n], args[1 + n :]),)

    run.pure = True  # type: ignore[attr-defined]
    return run


def alloc_tile(op: Any) -> Run:
    """A tile at ``addr`` (or placed by the interpreter), with runtime valid dims."""
    has_addr, has_vr, has_vc = op.addr is not None, op.valid_row is not None, op.valid_col is not None
    t = op.result.type
    assert isinstance(t, TileBufType)
    static = tile_ref(t, 0)
    v_row, v_col = t.v_row.data, t.v_col.data

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        it = iter(args)
        addr = next(it) if has_addr else None
        vr = next(it) if has_vr else None
        vc = next(it) if has_vc else None
        if vr is None and vc is None:
            valid = static.valid
        else:  # tile_ref's valid dims, without rebuilding the tile from its type on every run
            r, c = (v_row if vr is None else vr, v_col if vc is None else vc)
            valid = (static.rows if r == DYNAMIC else r, static.cols if c == DYNAMIC else c)
        if addr is None:
            addr = core.memory.place(op, static.space, static.nbytes)
        return (TileRef(static.space, addr, static.dtype, static.rows, static.cols, valid, static.col_major),)

    run.pure = True  # type: ignore[attr-defined]  # loop replay: no accounting; a placement is kept per op
    return run


def set_validshape(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Update a tile's runtime valid dims."""
    tile, r, c = args
    tile.valid = (r, c)
    return ()


def treshape(op: Any) -> Run:
    """The same bytes seen as another tile type (a scalar-pipe instruction); the result type's tile is
    read once."""
    static = tile_ref(op.result.type, 0)

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        src = args[0]
        res = TileRef(static.space, src.addr, static.dtype, static.rows, static.cols, static.valid, static.col_major)
        core.account(
            op, "TRESHAPE", Pipe.PIPE_S, core.costs.compute("TRESHAPE", src.dtype.name, 1, 1), "compute", [], []
        )
        return (res,)

    return run


def tassign(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Level 3: the tile at a byte address."""
    tile, addr = args
    return (TileRef(tile.space, addr, tile.dtype, tile.rows, tile.cols, tile.valid, tile.col_major),)


def memref_alloc(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """An address-space memref allocation (internal form): placed by the interpreter."""
    tile = tile_ref(op.memref.type, 0)
    tile.addr = core.memory.place(op, tile.space, tile.nbytes)
    return (tile,)


def pointer_cast(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """After plan-memory: the memref tile at its byte address."""
    return (tile_ref(op.result.type, args[0]),)


def _event(attr: Any) -> int:
    return int(attr.data.value.removeprefix("EVENT_ID"))


def sync_handler(cls: type[Operation]) -> Prepare:
    """set/wait flag (static or dynamic ids), record/wait event, barriers, cross-core sync: accounting only
    (``run.accounting_only``: timeline entries and race-detector clocks, no values)."""

    def prepare(op: Any) -> Run:
        run = _sync_run(op)
        run.accounting_only = True  # type: ignore[attr-defined]  # a numerics-only run drops it (compiled.py)
        return run

    def _sync_run(op: Any) -> Run:
        if cls is S.BarrierOp:
            pipe = op.pipe_attr.data
            return lambda core, interp, args: core.barrier(op, pipe) or ()
        if cls is S.BarrierSyncOp:
            pipe = SYNC_OP_PIPE[SyncOpType(op.op_type.data)]
            return lambda core, interp, args: core.barrier(op, pipe) or ()
        if issubclass(cls, S._CrossCoreOp):  # cross-core: nothing to order on one core
            pipe, instr = op.pipe_attr.data, instr_name(op.name)

            def cross_core(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
                core.timeline.issue(op.name, instr, pipe, 0, "signal", op, "cross-core")
                return ()

            return cross_core
        if issubclass(cls, S._EventOp):
            (src, dst), event = op.pipes(), _event(op.event_id)
        else:
            src, dst = op.src_pipe.data, op.dst_pipe.data
            event = None if issubclass(cls, S._FlagDynOp) else _event(op.event_id)
        setting = cls in (S.SetFlagOp, S.SetFlagDynOp, S.RecordEventOp)
        act = CoreState.set_flag if setting else CoreState.wait_flag

        if event is None:

            def dynamic(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
                act(core, op, src, dst, int(args[0]))
                return ()

            return dynamic

        step = CoreState.flag_step(op, src, dst, event, setting)

        def static(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
            step(None, core)
            return ()

        static.step = step  # type: ignore[attr-defined]  # the compiled engine's one call (compiled._handler_step)
        return static

    return prepare


def section(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``pto.section.cube/vector``: one core runs both sections in order."""
    interp.run_ssacfg_region(op.body, (), op.name)
    return ()


# -- cube <-> vector pipes ------------------------------------------------------------------------

_PEER = {"c2v": ("cube", "vector"), "v2c": ("vector", "cube")}


def _check_split(split: int) -> None:
    if split != 0:
        raise DeviceError(
            f"{{split = {split}}}: a split pipe feeds two vector cores, which the device model does not run "
            "(only split = 0)"
        )


def tpush(op: Any) -> Run:
    """``tpush_to_aiv`` / ``tpush_to_aic``: the tile's values go into the pipe (on a2a3 through GM: costed as a
    store from the tile's space), ready for the other core when the push ends."""
    direction, pipe, instr, split = op.DIRECTION, op.pipe(), instr_name(op.name), op.split.value.data

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        _check_split(split)
        t = args[0]
        values = core.memory.read(t)
        nbytes = values.size * t.dtype.itemsize
        cycles = core.costs.transfer("TSTORE", t.space, None, nbytes)
        core.account(op, instr, pipe, cycles, "transfer", [t], [], f"{t.space}->{_PEER[direction][1]} {nbytes}B")
        core.channel(direction).append(Pushed(values, t.dtype, core.timeline.free[pipe]))
        return ()

    return run


def tpop(op: Any) -> Run:
    """``tpop_from_aic`` / ``tpop_from_aiv``: the oldest pushed tile, into a pipe slot the interpreter places
    (costed as a load into the result's space; it starts no earlier than the push ended)."""
    direction, pipe, instr, split = op.DIRECTION, op.pipe(), instr_name(op.name), op.split.value.data
    shape = tile_ref(op.result.type, 0)
    dynamic = len(op.operands) == 2
    pusher, popper = _PEER[direction]

    def run(core: CoreState, interp: Interpreter, args: PythonValues) -> PythonValues:
        _check_split(split)
        queue = core.channel(direction)
        if not queue and core.pipe_wait is not None:  # interleaved parts (:mod:`pypto.utils.interleave`): the pusher goes on
            core.pipe_wait(queue)
        if not queue:
            raise DeviceError(
                f"nothing to pop: the {pusher} side pushed no (more) tiles to the {popper} side (a pipe pops "
                "what the other part of the Group task pushed; run_kernel takes the shared pipes as channels=)"
            )
        item = queue.popleft()
        valid = (args[0], args[1]) if dynamic else shape.valid
        if item.values.shape != tuple(valid):
            raise DeviceError(
                f"pops a {valid[0]}x{valid[1]} tile but the {pusher} side pushed "
                f"{item.values.shape[0]}x{item.values.shape[1]}"
            )
        addr = core.memory.place(op, shape.space, shape.nbytes)
        tile = TileRef(shape.space, addr, shape.dtype, shape.rows, shape.cols, valid, shape.col_major)
        core.memory.write(tile, item.values)
        nbytes = item.values.size * tile.dtype.itemsize
        cycles = core.costs.transfer("TLOAD", None, tile.space, nbytes)
        detail = f"{_PEER[direction][0]}->{tile.space} {nbytes}B"
        core.account(op, instr, pipe, cycles, "transfer", [], [tile], detail, not_before=item.ready)
        return (tile,)

    return run


def misc_handlers() -> dict[type[Operation], Prepare]:
    """Non-data ops by class."""
    h: dict[type[Operation], Prepare] = {
        cls: per_call(fn)
        for cls, fn in {
            VW.GetTensorViewDimOp: lambda c, i, op, a: (a[0].shape[a[1]],),
            VW.AddPtrOp: lambda c, i, op, a: (GmPtr(a[0].flat, a[0].offset + a[1], a[0].dtype),),
            T.SetValidShapeOp: set_validshape,
            T.TAssignOp: tassign,
            T.PointerCastOp: pointer_cast,
            M.GetBlockIdxOp: lambda c, i, op, a: (c.block_idx,),
            M.GetBlockNumOp: lambda c, i, op, a: (c.block_num,),
            M.GetSubBlockIdxOp: lambda c, i, op, a: (c.subblock_idx,),
            M.GetSubBlockNumOp: lambda c, i, op, a: (c.subblock_num,),
            M.SectionCubeOp: section,
            M.SectionVectorOp: section,
            P.TFreeFromAicOp: lambda c, i, op, a: (),
            P.TFreeFromAivOp: lambda c, i, op, a: (),
        }.items()
    }
    h[VW.MakeTensorViewOp], h[VW.PartitionViewOp], h[T.AllocTileOp] = make_tensor_view, partition_view, alloc_tile
    h[T.TReshapeOp] = treshape
    h[P.TPushToAivOp] = h[P.TPushToAicOp] = tpush
    h[P.TPopFromAicOp] = h[P.TPopFromAivOp] = tpop
    for cls in S.SYNC_OPS:
        h[cls] = sync_handler(cls)
    return h


@dataclass
class PTOFunctions(InterpreterFunctions):
    """Implementations of the pto ops on one core's state (each op prepared on first execution)."""

    core: CoreState
    prepared: dict[Operation, Run] = field(default_factory=dict)


def _attach(cls: type[InterpreterFunctions], op_cls: type[Operation], prepare: Prepare) -> None:
    def run(self: PTOFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        fast = self.prepared.get(op)
        if fast is None:
            fast = self.prepared[op] = prepare(op)
        return fast(self.core, interpreter, args)

    setattr(cls, "run_" + op_cls.name.replace(".", "_"), impl(op_cls)(run))


def _pto_handlers() -> dict[type[Operation], Prepare]:
    from .comm_impls import COMM_HANDLERS  # the cross-rank pto.comm ops
    from .isa_impls import ISA_DATA, ISA_MISC  # the rest of the ISA (imports this module's helpers' peers)

    data, misc = data_handlers(), misc_handlers()
    data.update({cls: per_call(fn) for cls, fn in ISA_DATA.items()})
    misc.update(ISA_MISC)
    misc.update({cls: per_call(fn) for cls, fn in COMM_HANDLERS.items()})
    out: dict[type[Operation], Prepare] = {}
    for op_cls in PTO_OPS:
        if op_cls in data:
            out[op_cls] = _dps(data[op_cls])
        elif op_cls in misc:
            out[op_cls] = misc[op_cls]
    out[memref.AllocOp] = per_call(memref_alloc)
    return out


PTO_HANDLERS: dict[type[Operation], Prepare] = _pto_handlers()
"""Every implemented op class's :data:`Prepare`: registered with the xDSL interpreter as
:class:`PTOFunctions` and called by the compiled engine (:mod:`.compiled`) at compile time."""

for _op_cls, _prepare in PTO_HANDLERS.items():
    _attach(PTOFunctions, _op_cls, _prepare)
register_impls(PTOFunctions)

UNSUPPORTED: tuple[str, ...] = tuple(sorted(o.name for o in PTO_OPS if o not in PTO_HANDLERS))
"""pto ops the interpreter does not run (an error names the op if one is reached)."""
