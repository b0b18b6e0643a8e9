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
   would clear the most of them gets a pair ``set_flag(P, Q, e) ...
   wait_flag(P, Q, e)``; its transfer function removes from ``pending[Q]``
   everything complete when the set fires -- P's own accesses and,
   transitively, whatever P had itself waited for. So one pair covers all
   hazards from P, and a hazard already ordered through a chain of earlier
   pairs (MTE2 -> V -> MTE3) gets none: no redundant pairs;
2. a conflicting in-flight access of Q itself gets ``pipe_barrier(Q)``
   (not PIPE_S; not PIPE_V on a5);
3. B's accesses become pending for every other pipe.

``scf.if`` analyses both branches from the same state and joins them;
``scf.for`` / ``scf.while`` iterate the body from ``join(entry, body_exit)``
to a fixpoint (the state after the loop also joins the entry state unless an
``scf.for`` with constant bounds surely runs), so hazards across the back edge
(iteration i's store vs iteration i+1's load into the same buffer) are found.

Placement (:meth:`SyncAnalysis.place`): the wait goes right before B, the set
as early as the dataflow allows, so independent buffers do not serialise
(in a double-buffered loop the first exp waits only for its own load, not
the second one):

- forward: right after the last producer in B's block (the earliest point
  from which the hazards the pair clears are complete and none of their ops
  is issued again before B), as PTOAS places it, also when no op of P lies
  in between; adjacent to the wait when the block holds no producer and no
  op of P lies in between (a set fires after every earlier op of P);
- back edge: when B is in an ``scf.for`` body and its producers come later in
  that body (the previous iteration's store vs this iteration's load), the
  set goes right after the producer, with a prologue set right before the
  loop and an epilogue wait right after it, so each path is balanced: every
  iteration waits once and sets once, the prologue feeds the first wait and
  the epilogue drains the last set (zero trips: prologue then epilogue). Used
  only when P has more work after the producer in the body (else a set right
  before the wait fires just as early).

Every set is matched by exactly one wait on every path, both in the same block
(or around one loop). Syncs are inserted one at a time in program order and
the function re-analysed (the transfer functions model the sync ops already
there); a placement the re-analysis does not confirm falls back to the
adjacent pair. The re-analysis resumes where the sync went: at that
function-body op (:meth:`SyncAnalysis.resume`), and inside a function-body
``scf.for`` at the first body op that changed, stopping once the state is
again the one the last analysis had (:meth:`SyncAnalysis._memo_loop`), so the
ops analysed stay linear in the op count also inside one loop body. Placing a
sync looks states up by op and walks the block from the wait back to the set
(or, for a back edge, from the block's end back to the producer), never
listing the block, so placement is linear too. Existing sync ops are understood
by the same transfer functions, so the pass only adds what is missing: running
it twice inserts nothing the second time (idempotent), and
:func:`uncovered_hazards` reports what a module lacks.

Event ids: the smallest of the 8 ids of the pipe pair not in flight anywhere
over the pair's span (the events of the analysis states there and the ids of
sync ops inside it), preferring one not used elsewhere in the block (one id
per buffer, as hand-written double buffering does), else reused by liveness;
more than 8 in flight is an error. Finally ``pipe_barrier(PIPE_ALL)`` is put
before ``return`` (ptoas's tail).

Buffers: on-chip byte ranges once addresses are known, else allocations
(see :mod:`.access`); GM views by kernel argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain

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

from .access import Access, accesses, constant_int, op_pipe
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


@dataclass(frozen=True)
class Placement:
    """Where a flag pair goes: ``set_flag`` before ``set_before``, ``wait_flag`` right before ``wait_before``.

    With ``loop`` (a back-edge pair: set late in iteration i, waited early in
    iteration i+1) a prologue ``set_flag`` goes right before the loop and an
    epilogue ``wait_flag`` right after it, so every path stays balanced.
    """

    wait_before: Operation
    set_before: Operation
    loop: scf.ForOp | None
    event: int


@dataclass
class _BodyPass:
    """One fixpoint iteration over a loop body: the entry state's key, the state before each body op, the end."""

    entry: tuple[object, ...]
    before: dict[Operation, SyncState]
    end: SyncState


@dataclass
class _LoopMemo:
    """The passes of a function-body ``scf.for``'s last analysis, and the body ops changed since."""

    passes: list[_BodyPass]
    dirty: set[Operation]


def _span(first: Operation | None, stop: Operation | None) -> list[Operation]:
    """The ops from ``first`` up to ``stop`` (excluded; None: the block's end), walked."""
    out: list[Operation] = []
    while first is not None and first is not stop:
        out.append(first)
        first = first.next_op
    return out


def _precedes(a: Operation, b: Operation) -> bool:
    """Whether ``a`` comes before ``b`` in their block (walked from both at once: as many steps as the
    nearer of ``b`` from ``a`` and the block's end from ``b``)."""
    x: Operation | None = a
    y: Operation | None = b
    while True:
        x = x.next_op if x is not None else None
        y = y.next_op if y is not None else None
        if x is b:
            return True
        if y is a or y is None:
            return y is None
        if x is None:
            return False


def _runs_on(op: Operation, pipe: Pipe) -> bool:
    return any(op_pipe(o) == pipe for o in op.walk())


def _flag_ids(ops: Iterable[Operation], src: Pipe, dst: Pipe) -> set[int]:
    """Event ids of (src, dst) used by sync ops in (or nested in) ``ops``."""
    out: set[int] = set()
    for top in ops:
        for o in top.walk():
            if isinstance(o, SetFlagOp | WaitFlagOp):
                if (Pipe(o.src_pipe.data), Pipe(o.dst_pipe.data)) == (src, dst):
                    out.add(_event(o.event_id))
            elif isinstance(o, RecordEventOp | WaitEventOp) and tuple(o.pipes()) == (src, dst):
                out.add(_event(o.event_id))
    return out


def _busy_ids(states: Iterable[SyncState], src: Pipe, dst: Pipe) -> set[int]:
    return {e for st in states for (s, d, e) in st.events if (s, d) == (src, dst)}


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
        self.snaps: dict[Block, list[SyncState]] = {}
        self._top: list[Operation] = []  # the body block's ops transferred by advance(), in order
        self._top_index: dict[int, int] = {}  # id(op) -> its index in _top
        self._order: list[Operation] = []  # data ops visited by the current advance(), first visit first
        self._seen: set[Operation] = set()
        self._flags: dict[tuple[Block, Pipe, Pipe], set[int]] = {}
        self._accesses: dict[Operation, list[Access]] = {}
        self._by_id: dict[int, Operation] = {}  # the inverse of ids
        self._memos: dict[Operation, _LoopMemo] = {}  # function-body scf.for -> its last analysis
        self._memo_of: dict[Block, _LoopMemo] = {}  # their body blocks
        self._log: tuple[dict[Operation, list[Action] | None], dict[Block, list[SyncState] | None]] | None = None

    def accesses(self, op: Operation) -> list[Access]:
        """:func:`.access.accesses` of a data op, numbered in first-visit order (computed once: the
        pass inserts sync ops only, so a data op's operands never change)."""
        got = self._accesses.get(op)
        if got is None:
            op_id = self.ids.setdefault(op, len(self.ids))
            self._by_id[op_id] = op
            got = self._accesses[op] = accesses(op, op_id)
        return got

    def _tops(self, op_ids: set[int], block: Block) -> set[Operation]:
        """The ops of ``block`` that are or hold the data ops ``op_ids`` (those in the block)."""
        tops: set[Operation] = set()
        for op_id in op_ids:
            top: Operation | None = self._by_id[op_id]
            while top is not None and top.parent is not block:
                top = top.parent_op()
            if top is not None:
                tops.add(top)
        return tops

    def run(self) -> SyncState:
        """Analyse the body; returns the state before the terminator."""
        return self.block(self.func.body.block, SyncState())

    def advance(self, through: int = -1) -> tuple[Operation, Action] | None:
        """Transfer the body block's ops from where the analysis stopped, op by op, until one at an index
        past ``through`` has been transferred and a data op in or under the ops transferred lacks a
        sync; returns the first such op (program order) and its first missing sync, None when every op
        of the function is covered.

        The analysis is forward: what it says of an op depends only on the ops before it (a loop's
        fixpoint is inside the loop op), so stopping at the first op lacking a sync gives the same
        answer as analysing the whole function, and after an edit at body index ``r`` or later only the
        ops from ``r`` on need transferring again (:meth:`resume`). ``insert_sync_func`` adds one sync
        at a time; re-analysing the whole function after each made the pass cubic in op count."""
        body = self.func.body.block
        snaps = self.snaps.setdefault(body, [SyncState()])
        done = self._top
        self._order, self._seen = [], set()
        checked = 0
        found: tuple[Operation, Action] | None = None
        state = snaps[len(done)].copy()
        op = done[-1].next_op if done else body.first_op  # the op list is walked, never copied
        while op is not None:
            state = self.op(op, state)
            self._top_index[id(op)] = len(done)
            done.append(op)
            snaps.append(state.copy())
            if found is None:
                order = self._order
                found = next(((o, self.plan[o][0]) for o in order[checked:] if self.plan[o]), None)
                checked = len(order)
            if found is not None and len(done) > through:
                return found
            op = op.next_op
        return found

    def body_index(self, op: Operation) -> int:
        """The index in the body block of ``op`` or of the body op containing it (counted back to an op
        :meth:`advance` has transferred: an edit's neighbourhood, not the whole block)."""
        body = self.func.body.block
        top: Operation | None = op
        while top is not None and top.parent is not body:
            top = top.parent_op()
        steps = 0
        while top is not None:
            index = self._top_index.get(id(top))
            if index is not None and index < len(self._top) and self._top[index] is top:
                return index + steps
            top = top.prev_op
            steps += 1
        return steps - 1

    def _block_flag_ids(self, block: Block, src: Pipe, dst: Pipe) -> set[int]:
        """``_flag_ids(list(block.ops), src, dst)``, kept up to date by :meth:`note_flags`."""
        key = (block, src, dst)
        got = self._flags.get(key)
        if got is None:
            got = self._flags[key] = _flag_ids(list(block.ops), src, dst)
        return got

    def note_flags(self, new_ops: list[Operation]) -> None:
        """Sync ops were inserted: their event ids count in every block they are in or under."""
        for op in new_ops:
            if not isinstance(op, SetFlagOp | WaitFlagOp):
                continue
            pair, event = (Pipe(op.src_pipe.data), Pipe(op.dst_pipe.data)), _event(op.event_id)
            block = op.parent
            while block is not None:
                known = self._flags.get((block, *pair))
                if known is not None:
                    known.add(event)
                owner = block.parent_op()
                block = owner.parent if owner is not None else None

    def forget_flags(self) -> None:
        """Sync ops were removed: the event ids in use are computed again when next asked, and loops are
        analysed again in full (their memos know insertions only)."""
        self._flags.clear()
        self._memos.clear()
        self._memo_of.clear()

    def note_edit(self, new_ops: list[Operation]) -> None:
        """Ops were inserted: the function-body loop holding one marks its body op that changed."""
        for new in new_ops:
            top: Operation | None = new
            while top is not None and top.parent is not None:
                owner = top.parent.parent_op()
                memo = self._memos.get(owner) if owner is not None else None
                if memo is not None:
                    memo.dirty.add(top)
                    break
                top = owner

    def resume(self, index: int) -> None:
        """Forget the analysis of the body block's ops from ``index`` on (the ops before it are unchanged:
        their states stand, and the state before ``ops[index]`` is where :meth:`advance` restarts)."""
        snaps = self.snaps.setdefault(self.func.body.block, [SyncState()])
        del snaps[index + 1 :]
        for op in self._top[index:]:
            self._top_index.pop(id(op), None)
        del self._top[index:]

    def block(self, block: Block, state: SyncState) -> SyncState:
        """Transfer through a block (recording the state before each op and at its end)."""
        snaps: list[SyncState] = []
        for op in block.ops:
            snaps.append(state.copy())
            state = self.op(op, state)
        snaps.append(state.copy())
        if self._log is not None and block not in self._log[1]:
            self._log[1][block] = self.snaps.get(block)
        self.snaps[block] = snaps
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
        if isinstance(op, scf.ForOp) and op.parent is self.func.body.block and len(op.body.blocks) == 1:
            return self._memo_loop(op, state)
        entry = state.copy()
        for _ in range(1000):
            out = entry.copy()
            for region in op.regions:
                for block in region.blocks:
                    out = self.block(block, out)
            new_entry = join(entry, out)
            if new_entry.key() == entry.key():
                return out if _runs_at_least_once(op) else join(state, out)
            entry = new_entry
        raise pass_error(op, "insert-sync: the loop analysis does not converge")

    def _memo_loop(self, op: scf.ForOp, state: SyncState) -> SyncState:
        """:meth:`loop` for a function-body ``scf.for``, resuming inside its body.

        Each fixpoint iteration whose entry state equals the last analysis's (the usual case after a sync
        went into the body) starts at the first body op that changed, from the state the last analysis
        had there, and stops as soon as the state after an unchanged op equals the one the last analysis
        had after it (the analysis is forward, so the rest of the body and its end state stand). What a
        non-final iteration records (plans, branch states) is undone, so the plans and states kept are
        the final iteration's, as when the whole body is analysed."""
        block = op.body.block
        memo = self._memos.get(op)
        if memo is None:
            memo = self._memos[op] = self._memo_of[block] = _LoopMemo([], set())
        start = self._first_changed(block, memo)
        passes = memo.passes
        resumed_only = bool(passes)
        entry = state.copy()
        for it in range(1000):
            key = entry.key()
            log: tuple[dict[Operation, list[Action] | None], dict[Block, list[SyncState] | None]] = ({}, {})
            self._log = log
            try:
                if it < len(passes) and passes[it].entry == key:
                    out = self._resume_pass(passes[it], start, memo.dirty)
                else:
                    resumed_only = False
                    out, before = self._full_pass(block, entry)
                    passes[it:] = [_BodyPass(key, before, out.copy())]
            finally:
                self._log = None
            new_entry = join(entry, out)
            if new_entry.key() == key:
                del passes[it + 1 :]
                memo.dirty.clear()
                if resumed_only:
                    self._see_lacking(start if start is not None else block.first_op)
                return out if _runs_at_least_once(op) else join(state, out)
            for done, old in log[0].items():  # not the final iteration: its records go
                if old is None:
                    self.plan.pop(done, None)
                else:
                    self.plan[done] = old
            for b, snaps in log[1].items():
                if snaps is None:
                    self.snaps.pop(b, None)
                else:
                    self.snaps[b] = snaps
            entry = new_entry
        raise pass_error(op, "insert-sync: the loop analysis does not converge")

    def _full_pass(self, block: Block, entry: SyncState) -> tuple[SyncState, dict[Operation, SyncState]]:
        """Transfer the whole body from ``entry``: the end state and the state before each op."""
        before: dict[Operation, SyncState] = {}
        state = entry.copy()
        for o in block.ops:
            before[o] = state.copy()
            state = self.op(o, state)
        return state, before

    def _resume_pass(self, done: _BodyPass, start: Operation | None, changed: set[Operation]) -> SyncState:
        """Transfer the body from ``start`` (its first changed op) until the state is again the one ``done``
        had; updates ``done`` and returns the end state."""
        if start is None:
            return done.end.copy()
        before = done.before
        old: Operation | None = start
        while old is not None and old not in before:  # the first unchanged op after the inserted ones
            old = old.next_op
        state = (before[old] if old is not None else done.end).copy()
        remaining = set(changed)
        cur: Operation | None = start
        while cur is not None:
            was_there = cur in before
            before[cur] = state.copy()
            state = self.op(cur, state)
            remaining.discard(cur)
            nxt = cur.next_op
            if was_there and not remaining:
                had = before.get(nxt) if nxt is not None else done.end
                if had is not None and had.key() == state.key():
                    return done.end.copy()
            cur = nxt
        done.end = state.copy()
        return state

    def _first_changed(self, block: Block, memo: _LoopMemo) -> Operation | None:
        """The first body op (program order) that changed since the memo's passes, or None."""
        if not memo.dirty or not memo.passes:
            return None
        first: Operation | None = None
        for op in memo.dirty:
            if first is None or _precedes(op, first):
                first = op
        assert first is not None
        known = memo.passes[0].before
        while first.prev_op is not None and first.prev_op not in known:  # inserted ops run back to an old one
            first = first.prev_op
        return first

    def _see_lacking(self, start: Operation | None) -> None:
        """After a resumed loop: visit the body's data ops from ``start`` up to the first lacking a sync (their
        plans stand), so :meth:`advance` finds it in program order."""
        top = start
        while top is not None:
            for o in top.walk():
                actions = self.plan.get(o)
                if actions is None:
                    continue
                if o not in self._seen:
                    self._seen.add(o)
                    self._order.append(o)
                if actions:
                    return
            top = top.next_op

    def states(self, block: Block) -> tuple[Callable[[Operation | None], SyncState], Callable[[Operation], SyncState]]:
        """``before(op)``: the state before an op of ``block`` (None: at its end); ``after(op)``: after it.

        Looked up by op, without listing the block, where the analysis keeps them so: the function body's
        transferred prefix (:meth:`advance`) and a function-body loop's body (its memo's final pass).
        Another block's ops are numbered once per call."""
        memo = self._memo_of.get(block)
        if memo is not None and memo.passes:
            final = memo.passes[-1]

            def memo_before(op: Operation | None) -> SyncState:
                return final.end if op is None else final.before[op]

            return memo_before, lambda op: memo_before(op.next_op)
        snaps = self.snaps[block]
        if block is self.func.body.block:
            index, top = self._top_index, self._top
            return (
                lambda op: snaps[len(top)] if op is None else snaps[index[id(op)]],
                lambda op: snaps[index[id(op)] + 1],
            )
        where = {op: n for n, op in enumerate(block.ops)}
        return (lambda op: snaps[-1] if op is None else snaps[where[op]]), lambda op: snaps[where[op] + 1]

    def has_snaps(self, block: Block) -> bool:
        """Whether the analysis has states for ``block``."""
        return block in self.snaps or bool((memo := self._memo_of.get(block)) and memo.passes)

    def data_op(self, op: Operation, state: SyncState) -> None:
        """Decide and apply the syncs ``op`` needs, then issue its accesses."""
        pipe = op_pipe(op)
        assert pipe is not None
        acc = self.accesses(op)
        actions: list[Action] = []
        conflicts = state.cross_conflicts(pipe, acc)
        while conflicts:
            candidates = sorted({a.pipe for a in conflicts})

            def cleared(p: Pipe, conflicts: list = conflicts) -> int:  # type: ignore[type-arg]
                issued, pending = state.issued, state.pend(p)  # (a in issued - pending, without building it)
                return sum(1 for a in conflicts if a in issued and a not in pending)

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
        if self._log is not None and op not in self._log[0]:
            self._log[0][op] = self.plan.get(op)
        self.plan[op] = actions
        if op not in self._seen:
            self._seen.add(op)
            self._order.append(op)
        state.issue(pipe, acc)

    def place(self, b: Operation, src: Pipe) -> Placement | None:
        """Where the ``src -> pipe(b)`` pair that ``b`` needs goes (None: no event id free over its span).

        ``need``: the conflicts of ``b`` an adjacent pair would clear. Forward:
        the set goes at the earliest point of ``b``'s block from which on
        ``need`` is complete (right after the last producer, as PTOAS; adjacent when
        no producer is in the block and no ``src`` op lies in between). Back edge
        (``b`` heads an ``scf.for`` body and every producer in ``need`` from the
        body comes later in it): the set goes right after the producer, a
        prologue set before the loop, an epilogue wait after it -- only worth it
        when ``src`` still has work after that point in the body.
        The event id is the smallest of the pair not in flight (nor used by a
        sync op) anywhere over the span between the set and the wait.

        The block is walked from ``b`` (forward) or from its end (back edge), never listed: past the last
        producer ``need`` only grows more complete (no op there issues an access of it), so the earliest
        point is found walking back from ``b`` while it is complete. The ops visited are the pair's span (for a
        back edge: the block's start up to ``b`` and the last producer on to the block's end), not the block.
        """
        dst = op_pipe(b)
        block = b.parent
        assert dst is not None and block is not None
        before, after = self.states(block)
        st = before(b)
        conflicts = st.cross_conflicts(dst, self.accesses(b))
        issued, pending = st.issued, st.pend(src)
        need = frozenset(a for a in conflicts if a in issued and a not in pending)
        producers = self._tops({a.op_id for a in need}, block)  # the ops of b's block issuing (some of) need

        def complete(s: SyncState) -> bool:
            """A set at ``s`` fires after every access of ``need`` (need <= issued - pending[src])."""
            issued, pending = s.issued, s.pend(src)
            return all(a in issued and a not in pending for a in need)

        def free(states: Iterable[SyncState], spanned: Iterable[Operation]) -> int | None:
            busy = _busy_ids(states, src, dst) | _flag_ids(spanned, src, dst)
            taken = busy | self._block_flag_ids(block, src, dst)  # prefer an id of its own in the block (per buffer)
            return next((e for e in range(8) if e not in taken), next((e for e in range(8) if e not in busy), None))

        body = block is self.func.body.block
        # where the producers of ``need`` lie in b's block: "before" or "later" than b (b itself counts as later)
        sides = set() if body else {"later" if top is b or _precedes(b, top) else "before" for top in producers}
        loop = block.parent_op()
        if (
            isinstance(loop, scf.ForOp)
            and loop.parent is not None
            and self.has_snaps(loop.parent)
            and "later" in sides
            and "before" not in sides
        ):  # every producer of ``need`` in the loop body comes later in it: the set goes after the last one
            last = block.last_op
            while last is not None and last not in producers:
                last = last.prev_op
            assert last is not None
            m = last.next_op
            while m is not None and not complete(before(m)):
                m = m.next_op
            if m is not None and any(_runs_on(o, src) for o in _span(m, None)):
                pbefore, pafter = self.states(loop.parent)
                entry = pbefore(loop)
                if all(a in entry.issued and a not in entry.pend(src) for a in need if a in entry.pend(dst)):
                    head, tail = _span(block.first_op, b), _span(m, None)
                    states = chain((entry, pafter(loop)), map(before, head), (st,), map(before, tail), (before(None),))
                    event = free(states, chain(head, tail))
                    if event is not None:
                        return Placement(b, m, loop, event)
        # walk back from b while the set could go there: not across a producer, not where need is incomplete
        k = b
        x = b.prev_op
        while x is not None and x not in producers and complete(before(x)):
            k, x = x, x.prev_op
        # a producer of need before b in the block (in the function body every producer precedes b)
        has_prior = bool(producers) if body else "before" in sides
        spanned = _span(k, b)
        if not has_prior and not any(_runs_on(o, src) for o in spanned):
            k, spanned = b, []  # no producer in the block and no src op in between: adjacent fires just as early
        event = free(chain(map(before, spanned), (st,)), spanned)
        return None if event is None else Placement(b, k, None, event)


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


def _flag(cls: type[SetFlagOp] | type[WaitFlagOp], src: Pipe, dst: Pipe, event: int, at: Operation) -> Operation:
    op = cls.build(
        properties={
            "src_pipe": PipeAttr(src),
            "dst_pipe": PipeAttr(dst),
            "event_id": EventAttr(Event(f"EVENT_ID{event}")),
        }
    )
    op.location = at.location
    return op


def _insert(src: Pipe, dst: Pipe, place: Placement) -> list[Operation]:
    """Insert the flag ops of ``place`` (set, wait; prologue set / epilogue wait around a loop)."""
    e, b = place.event, place.wait_before
    new = [_flag(SetFlagOp, src, dst, e, b), _flag(WaitFlagOp, src, dst, e, b)]
    assert place.set_before.parent is not None and b.parent is not None
    place.set_before.parent.insert_op_before(new[0], place.set_before)
    b.parent.insert_op_before(new[1], b)
    if place.loop is not None:
        assert place.loop.parent is not None
        pro, epi = _flag(SetFlagOp, src, dst, e, place.loop), _flag(WaitFlagOp, src, dst, e, place.loop)
        place.loop.parent.insert_op_before(pro, place.loop)
        place.loop.parent.insert_op_after(epi, place.loop)
        new += [pro, epi]
    return new


def insert_sync_func(func: FuncOp, arch: str) -> int:
    """Insert the missing syncs of one function; returns how many ops were added.

    One sync at a time, in program order: the first op the analysis finds
    lacking gets its first missing sync (placed by :meth:`SyncAnalysis.place`),
    then the analysis goes on with that sync in place (from the body op where
    it went: :meth:`SyncAnalysis.resume`). A placement the analysis does not
    confirm (the consumer still needs a flag from the same pipe) is undone and
    replaced by the adjacent pair.
    """
    added = 0
    adjacent: set[tuple[Operation, Pipe]] = set()
    body = func.body.block
    analysis = SyncAnalysis(func, arch)
    item = analysis.advance()
    for _ in range(100_000):
        if item is None:
            break
        op, action = item
        assert op.parent is not None
        if isinstance(action, Barrier):
            new_ops = _sync_ops(action)
            for new in new_ops:
                new.location = op.location
                op.parent.insert_op_before(new, op)
                added += 1
            analysis.note_edit(new_ops)
            analysis.resume(min(analysis.body_index(o) for o in new_ops))
            item = analysis.advance()
            continue
        place = None if (op, action.src) in adjacent else analysis.place(op, action.src)
        hoisted = place is not None and (place.set_before is not op or place.loop is not None)
        if place is None or not hoisted:
            place = Placement(op, op, None, action.event if place is None else place.event)
        new_ops = _insert(action.src, action.dst, place)
        analysis.note_flags(new_ops)
        analysis.note_edit(new_ops)
        changed_from = min(analysis.body_index(o) for o in new_ops)
        analysis.resume(changed_from)
        if hoisted:
            item = analysis.advance(through=analysis.body_index(op))
            if any(isinstance(a, FlagPair) and a.src == action.src for a in analysis.plan.get(op, [])):
                for new in new_ops:
                    new.detach()
                    new.erase()
                adjacent.add((op, action.src))
                analysis.forget_flags()
                analysis.resume(changed_from)
                item = analysis.advance()
                continue
            added += len(new_ops)
            continue
        added += len(new_ops)
        item = analysis.advance()
    else:
        raise pass_error(func, "insert-sync: no fixpoint")
    if isinstance(body.last_op, ReturnOp) and not _has_tail(body):
        body.insert_op_before(BarrierOp.build(properties={"pipe": PipeAttr(Pipe.PIPE_ALL)}), body.last_op)
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
