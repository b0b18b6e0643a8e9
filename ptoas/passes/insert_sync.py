"""``insert-sync``: a set_flag/wait_flag pair for every cross-pipe hazard on a buffer.

Hardware model (Ascend a2a3 / a5 core): each pipe (MTE2 GM->UB/L1, MTE1 L1->L0,
M cube, FIX L0C->*, V vector, MTE3 UB->GM, S scalar) runs its ops in program
order but independently of the other pipes. ``set_flag(P, Q, e)`` is issued
on P and fires once every earlier op of P is done; ``wait_flag(P, Q, e)``
holds every later op of Q until then; ``pipe_barrier(P)`` orders the ops of
P (needed for same-pipe RAW/WAW/WAR on a2a3; PIPE_V needs none on a5);
``pipe_barrier(PIPE_ALL)`` drains everything.

Algorithm: a forward dataflow analysis over the structured control flow of
each ``func.func`` (lattice and transfer functions in :mod:`.sync_state`).
The state says which buffer accesses may still be in flight with respect to
each pipe. At a data op B on pipe Q with accesses ``acc``:

1. every pending access A of another pipe P with ``A.conflicts(b)`` for some
   ``b`` in ``acc`` (overlapping buffers, at least one write: RAW, WAR or
   WAW) is a hazard. While hazards remain, the producer pipe P whose flag
   would clear the most of them gets a pair ``set_flag(P, Q, e);
   wait_flag(P, Q, e)`` right before B; its transfer function removes from
   ``pending[Q]`` everything complete when the set fires -- P's own accesses
   and, transitively, whatever P had itself waited for. So one pair covers
   all hazards from P, and a hazard already ordered through a chain of
   earlier pairs (MTE2 -> V -> MTE3) gets none: no redundant pairs;
2. a conflicting in-flight access of Q itself gets ``pipe_barrier(Q)``
   (not PIPE_S; not PIPE_V on a5);
3. B's accesses become pending for every other pipe.

``scf.if`` analyses both branches from the same state and joins them;
``scf.for`` / ``scf.while`` iterate the body from ``join(entry, body_exit)``
to a fixpoint (the state after the loop also joins the entry state unless an
``scf.for`` with constant bounds surely runs), so hazards across the back edge (iteration i's store vs
iteration i+1's load into the same buffer) are found; a sync placed inside
the loop before the consumer is executed on every iteration, which is always
balanced (each set is waited right away). Decisions are recorded per op
during the analysis; those of the final (fixpoint) visit are inserted.

Existing sync ops are understood by the same transfer functions, so the pass
only adds what is missing: running it twice inserts nothing the second time
(idempotent), and :func:`uncovered_hazards` reports what a module lacks.
Event ids: the smallest of the 8 ids of the pipe pair not in flight at that
point (a pair waited right away frees its id, so ids only exceed 0 next to
hand-written syncs still in flight); more than 8 in flight is an error.
Finally ``pipe_barrier(PIPE_ALL)`` is put before ``return`` (ptoas's tail).

Buffers: on-chip byte ranges once addresses are known, else allocations
(see :mod:`.access`); GM views by kernel argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from pypto.ptoas.dialect import target_arch
from pypto.ptoas.dialect.attrs import SYNC_OP_PIPE, Event, EventAttr, Pipe, PipeAttr, SyncOpType
from pypto.ptoas.dialect.sync_ops import (
    BarrierOp,
    BarrierSyncOp,
    RecordEventOp,
    SetFlagOp,
    WaitEventOp,
    WaitFlagOp,
)

from .access import accesses, constant_int, op_pipe
from .errors import pass_error
from .sync_state import SyncState, join


@dataclass(frozen=True)
class FlagPair:
    """``set_flag(src, dst, e); wait_flag(src, dst, e)`` before an op."""

    src: Pipe
    dst: Pipe
    event: int


@dataclass(frozen=True)
class Barrier:
    """``pipe_barrier(pipe)`` before an op."""

    pipe: Pipe


Action = FlagPair | Barrier


def needs_barrier(pipe: Pipe, arch: str) -> bool:
    """Same-pipe hazards need a barrier on every pipe but S (and V on a5)."""
    return pipe != Pipe.PIPE_S and not (arch == "a5" and pipe == Pipe.PIPE_V)


def _runs_at_least_once(op: Operation) -> bool:
    """An ``scf.for`` with constant bounds lb < ub (no zero-trip path)."""
    if not isinstance(op, scf.ForOp):
        return False
    lb, ub = constant_int(op.lb), constant_int(op.ub)
    return lb is not None and ub is not None and lb < ub


def _event(attr: EventAttr) -> int:
    return int(Event(attr.data).value.removeprefix("EVENT_ID"))


class SyncAnalysis:
    """The dataflow analysis of one function; ``plan`` maps ops to the syncs they lack."""

    def __init__(self, func: FuncOp, arch: str) -> None:
        self.func = func
        self.arch = arch
        self.ids: dict[Operation, int] = {}
        self.plan: dict[Operation, list[Action]] = {}

    def run(self) -> SyncState:
        """Analyse the body; returns the state before the terminator."""
        return self.block(self.func.body.block, SyncState())

    def block(self, block: Block, state: SyncState) -> SyncState:
        """Transfer through a block."""
        for op in block.ops:
            state = self.op(op, state)
        return state

    def op(self, op: Operation, state: SyncState) -> SyncState:
        """Transfer through one op (recording the syncs a data op needs)."""
        if isinstance(op, SetFlagOp):
            state.set_flag(Pipe(op.src_pipe.data), Pipe(op.dst_pipe.data), _event(op.event_id))
        elif isinstance(op, WaitFlagOp):
            state.wait_flag(Pipe(op.src_pipe.data), Pipe(op.dst_pipe.data), _event(op.event_id))
        elif isinstance(op, RecordEventOp):
            state.set_flag(*op.pipes(), _event(op.event_id))
        elif isinstance(op, WaitEventOp):
            state.wait_flag(*op.pipes(), _event(op.event_id))
        elif isinstance(op, BarrierOp):
            state.barrier(Pipe(op.pipe_attr.data))
        elif isinstance(op, BarrierSyncOp):
            state.barrier(SYNC_OP_PIPE[SyncOpType(op.op_type.data)])
        elif isinstance(op, scf.IfOp):
            then = self.block(op.true_region.block, state.copy())
            other = self.block(op.false_region.block, state.copy()) if op.false_region.blocks else state
            return join(then, other)
        elif op.regions and isinstance(op, scf.ForOp | scf.WhileOp | scf.ParallelOp):
            return self.loop(op, state)
        elif op.regions:
            for region in op.regions:
                for block in region.blocks:
                    state = self.block(block, state)
        elif op_pipe(op) is not None:
            self.data_op(op, state)
        return state

    def loop(self, op: Operation, state: SyncState) -> SyncState:
        """Iterate the loop's regions from ``join(entry, exit)`` to a fixpoint."""
        entry = state.copy()
        while True:
            out = entry.copy()
            for region in op.regions:
                for block in region.blocks:
                    out = self.block(block, out)
            new_entry = join(entry, out)
            if new_entry.key() == entry.key():
                return out if _runs_at_least_once(op) else join(state, out)
            entry = new_entry

    def data_op(self, op: Operation, state: SyncState) -> None:
        """Decide and apply the syncs ``op`` needs, then issue its accesses."""
        pipe = op_pipe(op)
        assert pipe is not None
        acc = accesses(op, self.ids.setdefault(op, len(self.ids)))
        actions: list[Action] = []
        conflicts = state.cross_conflicts(pipe, acc)
        while conflicts:
            candidates = sorted({a.pipe for a in conflicts})

            def cleared(p: Pipe, conflicts: list = conflicts) -> int:  # type: ignore[type-arg]
                done = state.issued - state.pend(p)
                return sum(1 for a in conflicts if a in done)

            src = max(candidates, key=cleared)
            event = state.free_event(src, pipe)
            if event is None:
                raise pass_error(op, f"insert-sync: all 8 events of {src.value}->{pipe.value} are in flight")
            actions.append(FlagPair(src, pipe, event))
            state.set_flag(src, pipe, event)
            state.wait_flag(src, pipe, event)
            conflicts = state.cross_conflicts(pipe, acc)
        if needs_barrier(pipe, self.arch) and state.same_conflicts(pipe, acc):
            actions.append(Barrier(pipe))
            state.barrier(pipe)
        self.plan[op] = actions
        state.issue(pipe, acc)


def _sync_ops(action: Action) -> list[Operation]:
    if isinstance(action, Barrier):
        return [BarrierOp.build(properties={"pipe": PipeAttr(action.pipe)})]
    props = {
        "src_pipe": PipeAttr(action.src),
        "dst_pipe": PipeAttr(action.dst),
        "event_id": EventAttr(Event(f"EVENT_ID{action.event}")),
    }
    return [SetFlagOp.build(properties=dict(props)), WaitFlagOp.build(properties=dict(props))]


def _has_tail(block: Block) -> bool:
    last = block.last_op
    prev = last.prev_op if last is not None else None
    return isinstance(prev, BarrierOp) and prev.pipe_attr.data == Pipe.PIPE_ALL


def insert_sync_func(func: FuncOp, arch: str) -> int:
    """Insert the missing syncs of one function; returns how many ops were added."""
    analysis = SyncAnalysis(func, arch)
    analysis.run()
    added = 0
    for op, actions in analysis.plan.items():
        for action in actions:
            for new in _sync_ops(action):
                new.location = op.location
                assert op.parent is not None
                op.parent.insert_op_before(new, op)
                added += 1
    block = func.body.block
    if isinstance(block.last_op, ReturnOp) and not _has_tail(block):
        block.insert_op_before(BarrierOp.build(properties={"pipe": PipeAttr(Pipe.PIPE_ALL)}), block.last_op)
        added += 1
    return added


def uncovered_hazards(module: ModuleOp) -> list[tuple[Operation, Action]]:
    """The (op, missing sync) pairs of a module, without changing it (empty: every hazard is covered)."""
    found: list[tuple[Operation, Action]] = []
    for func in module.walk():
        if isinstance(func, FuncOp) and func.body.blocks:
            analysis = SyncAnalysis(func, target_arch(func))
            analysis.run()
            found.extend((op, a) for op, actions in analysis.plan.items() for a in actions)
    return found


@dataclass(frozen=True)
class InsertSyncPass(ModulePass):
    """``insert-sync`` (see the module docstring)."""

    name = "insert-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Insert the missing syncs of every function."""
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and func.body.blocks:
                insert_sync_func(func, target_arch(func))
