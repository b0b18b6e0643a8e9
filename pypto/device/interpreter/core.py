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
from .memory import CoreMemory, DType, TileRef
from .races import RaceDetector
from .timing import Timeline

Locs = tuple[str | None, str | None]


@dataclass(frozen=True)
class Pushed:
    """A tile in a cube<->vector pipe: its values (compute dtype), element type, and the cycle its push
    ended on the pushing core (both parts of a Group task start together, so cycles compare)."""

    values: np.ndarray
    dtype: DType
    ready: int


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
    interp: Any = None
    """The xDSL interpreter the compiled engine runs ops it does not compile with (None: not needed)."""
    _locs: dict[int, Locs] = field(default_factory=dict)  # by id(op): ops hash in Python, ints in C
    _race_locs: dict[int, str | None] = field(default_factory=dict)
    set_flag_cycles: int = 0
    wait_flag_cycles: int = 0

    def __post_init__(self) -> None:
        self.set_flag_cycles, self.wait_flag_cycles = self.costs.sync("SET_FLAG"), self.costs.sync("WAIT_FLAG")
        self.timeline.locate = self.locs  # type: ignore[assignment]  # records are located when read
        if self.races is not None:
            self.races.locate = self.race_location  # type: ignore[assignment]

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
        races = self.races
        if races is not None:
            who = races.tick(pipe, op)
            access = races.access
            for t in reads:
                lo = t.addr
                access(who, t.space, lo, lo + t.nbytes, False)
            for t in writes:
                lo = t.addr
                access(who, t.space, lo, lo + t.nbytes, True)

    def set_flag(self, op: Operation, src: Pipe, dst: Pipe, event: int) -> None:
        """A SIGNAL entry; the race detector snapshots ``src``'s clock (its last access's tick: later
        accesses tick past it, so a sync op needs no tick of its own)."""
        self.timeline.signal_of(op.name, (src, dst, event), self.set_flag_cycles, op)
        if self.races is not None:
            self.races.set_flag_of((src, dst, event))

    def wait_flag(self, op: Operation, src: Pipe, dst: Pipe, event: int) -> None:
        """A WAIT entry; the race detector joins the flag into ``dst``."""
        self.timeline.wait_of(op.name, (src, dst, event), self.wait_flag_cycles, op)
        if self.races is not None:
            self.races.wait_flag_of((src, dst, event))

    @staticmethod
    def flag_step(op: Operation, src: Pipe, dst: Pipe, event: int, setting: bool) -> Callable[[object, CoreState], None]:
        """A static ``set_flag`` (``setting``) or ``wait_flag`` prepared once: ``step(env, core)`` runs it
        (:meth:`set_flag` / :meth:`wait_flag` with the flag key and op name resolved ahead)."""
        key, name = (src, dst, event), op.name
        if setting:

            def set_step(env: object, core: CoreState) -> None:
                core.timeline.signal_of(name, key, core.set_flag_cycles, op)
                races = core.races
                if races is not None:
                    races.set_flag_of(key)

            return set_step

        def wait_step(env: object, core: CoreState) -> None:
            core.timeline.wait_of(name, key, core.wait_flag_cycles, op)
            races = core.races
            if races is not None:
                races.wait_flag_of(key)

        return wait_step

    def barrier(self, op: Operation, pipe: Pipe) -> None:
        """``pipe_barrier(pipe)``."""
        self.timeline.barrier(op.name, pipe, self.costs.sync("PIPE_BARRIER"), op)
        if self.races is not None and pipe == Pipe.PIPE_ALL:
            self.races.barrier_all()
