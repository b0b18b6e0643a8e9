"""The state of one simulated core during a run: memory, timeline, race detector, cost model.

:meth:`CoreState.account` is called once per executed pipe instruction by the
pto implementations: it asks the cost model for cycles, appends the timing
record and feeds the instruction's tile reads/writes to the race detector.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from pypto.ptoas.dialect.attrs import Pipe

from .costs import CostModel
from .memory import CoreMemory, TileRef
from .races import RaceDetector
from .timing import InstrRecord, Timeline

Locs = tuple[str | None, str | None]


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
    _locs: dict[Operation, Locs] = field(default_factory=dict)

    def locs(self, op: Operation) -> Locs:
        """(``.pto`` file:line:col, DSL file:line:col) of an op, each None if unknown."""
        got = self._locs.get(op)
        if got is None:
            pos = self.positions.get(op)
            pto = f"{self.pto_file}:{pos[0]}:{pos[1]}" if pos else None
            loc = op.location
            dsl = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}" if isinstance(loc, FileLineColLoc) else None
            got = self._locs[op] = (pto, dsl)
        return got

    def race_location(self, op: Operation) -> str | None:
        """``file.py:line`` (DSL) when the op has a loc, else its ``.pto`` position."""
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}"
        return self.locs(op)[0]

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
    ) -> InstrRecord:
        """Time one instruction and check its accesses."""
        rec = self.timeline.issue(op.name, instr, pipe, cycles, kind, self.locs(op), detail)
        if self.races is not None:
            who = self.races.tick(pipe, op.name, self.race_location(op), op)
            for t in reads:
                self.races.access(who, t.space, t.addr, t.addr + t.nbytes, False)
            for t in writes:
                self.races.access(who, t.space, t.addr, t.addr + t.nbytes, True)
        return rec

    def set_flag(self, op: Operation, src: Pipe, dst: Pipe, event: int) -> None:
        """A SIGNAL entry; the race detector snapshots ``src``."""
        self.timeline.signal(op.name, src, dst, event, self.costs.sync("SET_FLAG"), self.locs(op))
        if self.races is not None:
            self.races.tick(src, op.name, None, op)
            self.races.set_flag(src, dst, event)

    def wait_flag(self, op: Operation, src: Pipe, dst: Pipe, event: int) -> None:
        """A WAIT entry; the race detector joins the flag into ``dst``."""
        self.timeline.wait(op.name, src, dst, event, self.costs.sync("WAIT_FLAG"), self.locs(op))
        if self.races is not None:
            self.races.wait_flag(src, dst, event)
            self.races.tick(dst, op.name, None, op)

    def barrier(self, op: Operation, pipe: Pipe) -> None:
        """``pipe_barrier(pipe)``."""
        self.timeline.barrier(op.name, pipe, self.costs.sync("PIPE_BARRIER"), self.locs(op))
        if self.races is not None and pipe == Pipe.PIPE_ALL:
            self.races.barrier_all()
