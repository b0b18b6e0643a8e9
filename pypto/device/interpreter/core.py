"""The state of one simulated core during a run: memory, timeline, race detector, cost model.

:meth:`CoreState.account` is called once per executed pipe instruction by the
pto implementations: it asks the cost model for cycles, appends the timing
record and feeds the instruction's tile reads/writes to the race detector.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from pypto.ptoas.dialect.attrs import Pipe

from .costs import CostModel
from .loop_replay import SYNC, Role
from .memory import CoreMemory, DType, TileRef
from .races import RaceDetector
from .timing import PIPE_NAMES, Timeline, flag_detail

Locs = tuple[str | None, str | None]
Step = Callable[[Any, "CoreState"], None]
"""A prepared op as the compiled engine runs it: ``step(env, core)``."""


@dataclass(frozen=True)
class Pushed:
    """A tile in a cube<->vector pipe: its values (compute dtype), element type, and the cycle its push
    ended on the pushing core (both parts of a Group task start together, so cycles compare)."""

    values: np.ndarray
    dtype: DType
    ready: int


@dataclass
class Locator:
    """An op's locations in one run's ``.pto`` text and DSL source, formatted on first use."""

    positions: dict[Operation, tuple[int, int]]
    pto_file: str
    _locs: dict[int, Locs] = field(default_factory=dict)  # by id(op): ops hash in Python, ints in C
    _race_locs: dict[int, str | None] = field(default_factory=dict)

    def locs(self, op: Operation) -> Locs:
        """(``.pto`` file:line:col, DSL file:line:col) of an op, each None if unknown."""
        got = self._locs.get(id(op))
        if got is None:
            pos = self.positions.get(op)
            pto = f"{self.pto_file}:{pos[0]}:{pos[1]}" if pos else None
            loc = op.location
            dsl = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}" if isinstance(loc, FileLineColLoc) else None
            got = self._locs[id(op)] = (pto, dsl)
        return got

    def race_location(self, op: Operation) -> str | None:
        """``file.py:line`` (DSL) when the op has a loc, else its ``.pto`` position."""
        got = self._race_locs.get(id(op), False)
        if got is False:
            loc = op.location
            if isinstance(loc, FileLineColLoc):
                got = f"{loc.filename.data}:{loc.line.data}"
            else:
                got = self.locs(op)[0]
            self._race_locs[id(op)] = got
        return got


@dataclass
class CoreState:
    """Everything an interpreted kernel touches besides GM."""

    memory: CoreMemory
    costs: CostModel
    positions: dict[Operation, tuple[int, int]] = field(default_factory=dict)
    pto_file: str = "<pto>"
    races: RaceDetector | None = None
    timeline: Timeline = field(default_factory=Timeline)
    block_idx: int = 0
    block_num: int = 1
    subblock_idx: int = 0
    subblock_num: int = 1
    prints: list[str] = field(default_factory=list)
    channels: dict[str, deque[Pushed]] = field(default_factory=dict)
    """The cube<->vector pipes (``"c2v"``, ``"v2c"``) this core pushes to and pops from: the same dict
    for the AIC and AIV parts of one Group task."""
    pipe_wait: Any = None
    """Called with an empty pipe a ``tpop`` reads when the task's parts run interleaved
    (:meth:`pypto.utils.interleave.Interleaved.wait`: returns once the other part pushed); None: the pop is an error."""
    interp: Any = None
    """The xDSL interpreter the compiled engine runs ops it does not compile with (None: not needed)."""
    set_flag_cycles: int = 0
    wait_flag_cycles: int = 0
    deferred: list[Any] = field(default_factory=list)
    """Completion conditions registered by ``pto.comm.twait {deferred}`` (the run's ``KernelRun.deferred``)."""
    link_queue: dict[Pipe, Any] = field(default_factory=dict)
    """Per pipe, its last cross-rank link transfer (:class:`.comm_impls.InFlight`): a transfer issued right
    behind it overlaps its latency."""
    locator: Locator = field(init=False)
    """The ops' locations (shared with the timeline and the race detector, which hold no reference to the
    core: a run's buffers go when it is dropped, with no cycle for the collector)."""

    def __post_init__(self) -> None:
        self.set_flag_cycles, self.wait_flag_cycles = self.costs.sync("SET_FLAG"), self.costs.sync("WAIT_FLAG")
        self.locator = Locator(self.positions, self.pto_file)
        self.timeline.locate = self.locator.locs  # records are located when read
        if self.races is not None:
            self.races.locate = self.locator.race_location  # type: ignore[assignment]

    def locs(self, op: Operation) -> Locs:
        """(``.pto`` file:line:col, DSL file:line:col) of an op, each None if unknown."""
        return self.locator.locs(op)

    def race_location(self, op: Operation) -> str | None:
        """``file.py:line`` (DSL) when the op has a loc, else its ``.pto`` position."""
        return self.locator.race_location(op)

    def channel(self, direction: str) -> deque[Pushed]:
        """The FIFO of one direction (``"c2v"``: cube to vector, ``"v2c"``)."""
        queue = self.channels.get(direction)
        if queue is None:
            queue = self.channels[direction] = deque()
        return queue

    def account(
        self,
        op: Operation,
        instr: str,
        pipe: Pipe,
        cycles: int,
        kind: str,
        reads: list[TileRef],
        writes: list[TileRef],
        detail: str = "",
        not_before: int = 0,
    ) -> None:
        """Time one instruction (starting no earlier than ``not_before``) and check its accesses (the op's
        locations are looked up only when a record or a race is read)."""
        self.timeline.issue(op.name, instr, pipe, cycles, kind, op, detail, not_before)
        if self.races is not None:
            self.races.instruction(pipe, op, reads, writes)

    def set_flag(self, op: Operation, src: Pipe, dst: Pipe, event: int) -> None:
        """A SIGNAL entry; the race detector snapshots ``src``'s clock (its last access's tick: later
        accesses tick past it, so a sync op needs no tick of its own)."""
        self.timeline.signal(op.name, (src, dst, event), self.set_flag_cycles, op)
        if self.races is not None:
            self.races.set_flag((src, dst, event))

    def wait_flag(self, op: Operation, src: Pipe, dst: Pipe, event: int) -> None:
        """A WAIT entry; the race detector joins the flag into ``dst``."""
        self.timeline.wait(op.name, (src, dst, event), self.wait_flag_cycles, op)
        if self.races is not None:
            self.races.wait_flag((src, dst, event))

    @staticmethod
    def flag_step(op: Operation, src: Pipe, dst: Pipe, event: int, setting: bool) -> Step:
        """A static ``set_flag`` (``setting``) or ``wait_flag`` prepared once: ``step(env, core)`` runs it
        (:meth:`set_flag` / :meth:`wait_flag` with the flag key and op name resolved ahead)."""
        key, name = (src, dst, event), op.name
        set_pipe, set_hw = PIPE_NAMES[src]
        wait_pipe, wait_hw = PIPE_NAMES[dst]
        detail = flag_detail(key)
        if setting:

            def set_step(env: object, core: CoreState) -> None:
                # Timeline.signal and RaceDetector.set_flag, inlined (one call per execution)
                tl = core.timeline
                free, rows = tl.free, tl.rows
                start = free.get(src, 0)
                end = free[src] = start + core.set_flag_cycles
                pending = tl.signals.get(key)
                if pending is None:
                    pending = tl.signals[key] = deque()
                pending.append((end, len(rows)))
                rows.append((name, "SET_FLAG", set_pipe, set_hw, start, end, "signal", op, detail))
                races = core.races
                if races is not None:
                    q, snaps = races.index.get(src), races.flags.get(key)
                    if q is None or snaps is None:
                        races.set_flag(key)
                    else:
                        snaps.append(races.clock[q][:])

            set_step.flag = (key, True)  # type: ignore[attr-defined]  # for flag_pair_step
            set_step.inline = (  # type: ignore[attr-defined]  # written out by fused.py (its "set" template)
                "set",
                dict(src=src, key=key, name=name, set_pipe=set_pipe, set_hw=set_hw, op=op, detail=detail),
            )
            set_step.role = Role(SYNC, frozenset((src,)), frozenset((key,)))  # type: ignore[attr-defined]
            return set_step

        def wait_step(env: object, core: CoreState) -> None:
            # Timeline.wait and RaceDetector.wait_flag, inlined when a signal is pending (one call)
            tl = core.timeline
            pending = tl.signals.get(key)
            if not pending:
                tl.wait(name, key, core.wait_flag_cycles, op)
                races = core.races
                if races is not None:
                    races.wait_flag(key)
                return
            free, rows = tl.free, tl.rows
            start = free.get(dst, 0)
            fired, signal_row = pending.popleft()
            if fired > start:
                start = fired
            tl.flag_pairs.append((signal_row, len(rows)))
            end = free[dst] = start + core.wait_flag_cycles
            rows.append((name, "WAIT_FLAG", wait_pipe, wait_hw, start, end, "wait", op, detail))
            races = core.races
            if races is not None:
                snaps, d = races.flags.get(key), races.index.get(dst)
                if not snaps or d is None:
                    races.wait_flag(key)
                else:
                    clock = races.clock
                    clock[d] = list(map(max, clock[d], snaps.popleft()))

        wait_step.flag = (key, False)  # type: ignore[attr-defined]
        wait_step.inline = (  # type: ignore[attr-defined]  # fused.py's "wait" template
            "wait",
            dict(dst=dst, key=key, name=name, wait_pipe=wait_pipe, wait_hw=wait_hw, op=op, detail=detail),
        )
        wait_step.role = Role(SYNC, frozenset((dst,)), frozenset((key,)))  # type: ignore[attr-defined]
        return wait_step

    @staticmethod
    def flag_pair_step(set_op: Operation, set_step: Step, wait_op: Operation, wait_step: Step) -> Step | None:
        """One step for a :meth:`flag_step` ``set_flag`` directly followed by the ``wait_flag`` of the same
        flag (insert-sync's handshake), or None when the two steps are not that. When no older signal of the
        flag is pending, the wait consumes this set's signal: the timeline writes both entries and the race
        detector joins the source pipe's clock into the destination's, with no queue in between; otherwise
        the two steps run as they are."""
        set_flag, wait_flag = getattr(set_step, "flag", None), getattr(wait_step, "flag", None)
        if set_flag is None or wait_flag is None or not set_flag[1] or wait_flag[1] or set_flag[0] != wait_flag[0]:
            return None
        key = set_flag[0]
        src, dst, event = key
        set_pipe, set_hw = PIPE_NAMES[src]
        wait_pipe, wait_hw = PIPE_NAMES[dst]
        detail = flag_detail(key)
        set_name, wait_name = set_op.name, wait_op.name

        def pair(env: object, core: CoreState) -> None:
            # Timeline.signal + Timeline.wait (the wait consumes this signal) and RaceDetector.handshake, inlined
            tl = core.timeline
            if tl.signals.get(key):
                set_step(env, core)
                wait_step(env, core)
                return
            free, rows = tl.free, tl.rows
            start = free.get(src, 0)
            fired = free[src] = start + core.set_flag_cycles
            n = len(rows)
            rows.append((set_name, "SET_FLAG", set_pipe, set_hw, start, fired, "signal", set_op, detail))
            start = free.get(dst, 0)
            if fired > start:
                start = fired
            end = free[dst] = start + core.wait_flag_cycles
            tl.flag_pairs.append((n, n + 1))
            rows.append((wait_name, "WAIT_FLAG", wait_pipe, wait_hw, start, end, "wait", wait_op, detail))
            races = core.races
            if races is not None:
                index = races.index
                q, d = index.get(src), index.get(dst)
                if q is None or d is None:
                    races.handshake(src, dst)
                else:
                    clock = races.clock
                    clock[d] = list(map(max, clock[d], clock[q]))

        pair.role = Role(SYNC, frozenset((src, dst)), frozenset((key,)))  # type: ignore[attr-defined]
        pair.inline = (  # type: ignore[attr-defined]  # fused.py's "pair" template
            "pair",
            dict(
                key=key, src=src, dst=dst, set_step=set_step, wait_step=wait_step, detail=detail,
                set_name=set_name, set_pipe=set_pipe, set_hw=set_hw, set_op=set_op,
                wait_name=wait_name, wait_pipe=wait_pipe, wait_hw=wait_hw, wait_op=wait_op,
            ),
        )  # fmt: skip
        return pair

    def barrier(self, op: Operation, pipe: Pipe) -> None:
        """``pipe_barrier(pipe)``."""
        self.timeline.barrier(op.name, pipe, self.costs.sync("PIPE_BARRIER"), op)
        if self.races is not None and pipe == Pipe.PIPE_ALL:
            self.races.barrier_all()
