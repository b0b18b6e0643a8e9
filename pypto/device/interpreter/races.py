"""The sync-race detector: cross-pipe accesses to on-chip bytes not ordered by a flag chain.

Happens-before (vector clocks, one per pipe):

- instructions of one pipe are ordered (in-order queue); each one ticks its
  pipe's own clock entry;
- ``set_flag(P, Q, e)`` snapshots P's clock (everything P did or had waited
  for so far) onto the (P, Q, e) flag; ``wait_flag(P, Q, e)`` joins the oldest
  snapshot into Q's clock, so chains (MTE2 -> V -> MTE3) are transitive;
- ``pipe_barrier(PIPE_ALL)`` joins every clock into every pipe.

Shadow memory, per on-chip space, as sorted non-overlapping byte segments
(split where accesses start and end, so per byte): the last writer (pipe, its clock
tick, the instruction) and, per pipe, the last reader. An access by pipe Q
races when a byte it touches was last written (RAW, WAW) -- or, for a write,
read (WAR) -- by another pipe P at tick t with ``clock[Q][P] < t``. A race is
reported once per (op, other op, kind)::

    race: tadd on PIPE_V reads vec[0:4096] written by tload on PIPE_MTE2 with no flag between (kernels.py:32)

The location is the racing op's DSL ``loc(...)`` (``file:line``), else its
``.pto`` position. Same-pipe ordering needs ``pipe_barrier`` on real a2a3
hardware; this detector treats a pipe as ordered and does not check that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ptoas.dialect.attrs import Pipe

PIPES: tuple[Pipe, ...] = (
    Pipe.PIPE_S,
    Pipe.PIPE_V,
    Pipe.PIPE_M,
    Pipe.PIPE_MTE1,
    Pipe.PIPE_MTE2,
    Pipe.PIPE_MTE3,
    Pipe.PIPE_FIX,
    Pipe.PIPE_V2,
    Pipe.PIPE_MTE4,
    Pipe.PIPE_MTE5,
)
PIPE_INDEX: dict[Pipe, int] = {p: i for i, p in enumerate(PIPES)}
_NP = len(PIPES)


@dataclass(frozen=True)
class Race:
    """One unordered pair of accesses (the first occurrence; ``count`` = how many times seen)."""

    op: str
    pipe: str
    kind: str  # reads | writes
    space: str
    lo: int
    hi: int
    other_op: str
    other_pipe: str
    other_kind: str  # written | read
    location: str | None
    other_location: str | None

    def message(self) -> str:
        """The one-line report."""
        where = f" ({self.location})" if self.location else ""
        return (
            f"race: {self.op} on {self.pipe} {self.kind} {self.space}[{self.lo}:{self.hi}] {self.other_kind} by "
            f"{self.other_op} on {self.other_pipe} with no flag between{where}"
        )

    def __str__(self) -> str:
        return self.message()


@dataclass
class _Access:
    """Who made an access: for messages."""

    op: str
    pipe: Pipe
    location: str | None
    key: object


@dataclass(slots=True)
class _Seg:
    """A byte range of one space with one last writer and per-pipe last readers."""

    lo: int
    hi: int
    w_pipe: int = -1
    w_tick: int = 0
    w_who: int = -1
    reads: dict[int, tuple[int, int]] = field(default_factory=dict)  # pipe -> (tick, who)

    def split(self, at: int) -> _Seg:
        """Cut at ``at``; self keeps ``[lo, at)``, the returned segment is ``[at, hi)``."""
        right = _Seg(at, self.hi, self.w_pipe, self.w_tick, self.w_who, dict(self.reads))
        self.hi = at
        return right


def _short(op_name: str) -> str:
    return op_name.removeprefix("pto.")


class RaceDetector:
    """Vector clocks per pipe and shadow memory per on-chip space."""

    def __init__(self, capacity: dict[str, int]) -> None:
        self.capacity = capacity
        self.clock: list[list[int]] = [[0] * _NP for _ in range(_NP)]
        self.flags: dict[tuple[Pipe, Pipe, int], list[list[int]]] = {}
        self.shadows: dict[str, list[_Seg]] = {}

        self.who: list[_Access] = []
        self.races: list[Race] = []
        self.counts: dict[tuple[object, object, str], int] = {}

    # -- happens-before -------------------------------------------------
    def tick(self, pipe: Pipe, op: str, location: str | None, key: object) -> int:
        """A new instruction on ``pipe``; returns its access id."""
        q = PIPE_INDEX[pipe]
        self.clock[q][q] += 1
        self.who.append(_Access(op, pipe, location, key))
        return len(self.who) - 1

    def set_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        """Snapshot ``src``'s clock onto the flag."""
        self.flags.setdefault((src, dst, event), []).append(list(self.clock[PIPE_INDEX[src]]))

    def wait_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        """Join the oldest snapshot of the flag into ``dst``'s clock."""
        pending = self.flags.get((src, dst, event))
        if pending:
            q = PIPE_INDEX[dst]
            snap = pending.pop(0)
            self.clock[q] = [max(a, b) for a, b in zip(self.clock[q], snap, strict=True)]

    def barrier_all(self) -> None:
        """``pipe_barrier(PIPE_ALL)``: every pipe has seen everything."""
        joined = [max(col) for col in zip(*self.clock, strict=True)]
        self.clock = [list(joined) for _ in range(_NP)]

    # -- accesses -------------------------------------------------------
    def _segments(self, space: str, lo: int, hi: int) -> list[_Seg]:
        """The segments covering exactly ``[lo, hi)`` (split and created as needed), in order."""
        segs = self.shadows.setdefault(space, [])
        i = 0
        while i < len(segs) and segs[i].hi <= lo:
            i += 1
        if i < len(segs) and segs[i].lo < lo:
            segs.insert(i + 1, segs[i].split(lo))
            i += 1
        out: list[_Seg] = []
        pos = lo
        while pos < hi:
            if i < len(segs) and segs[i].lo <= pos:
                seg = segs[i]
                if seg.hi > hi:
                    segs.insert(i + 1, seg.split(hi))
            else:
                seg = _Seg(pos, min(hi, segs[i].lo) if i < len(segs) else hi)
                segs.insert(i, seg)
            out.append(seg)
            pos = seg.hi
            i += 1
        return out

    def access(self, who: int, space: str, lo: int, hi: int, write: bool) -> None:
        """Check and record one access of ``space[lo:hi]`` by access id ``who``."""
        if lo >= hi:
            return
        acc = self.who[who]
        q = PIPE_INDEX[acc.pipe]
        seen = self.clock[q]
        tick = seen[q]
        kind = "writes" if write else "reads"
        for seg in self._segments(space, lo, hi):
            p = seg.w_pipe
            if p >= 0 and p != q and seg.w_tick > seen[p]:
                self._report(acc, space, seg.lo, seg.hi, seg.w_who, kind, "written")
            if write:
                for rp, (rtick, rwho) in seg.reads.items():
                    if rp != q and rtick > seen[rp]:
                        self._report(acc, space, seg.lo, seg.hi, rwho, "writes", "read")
                seg.w_pipe, seg.w_tick, seg.w_who = q, tick, who
                seg.reads.clear()
            else:
                seg.reads[q] = (tick, who)

    def _report(self, acc: _Access, space: str, lo: int, hi: int, other_id: int, kind: str, other_kind: str) -> None:
        other = self.who[other_id]
        key = (acc.key, other.key, kind + other_kind)
        if key in self.counts:
            self.counts[key] += 1
            return
        self.counts[key] = 1
        self.races.append(
            Race(
                _short(acc.op),
                acc.pipe.value,
                kind,
                space,
                lo,
                hi,
                _short(other.op),
                other.pipe.value,
                other_kind,
                acc.location,
                other.location,
            )
        )
