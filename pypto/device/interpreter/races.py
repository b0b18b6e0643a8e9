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

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pypto.ptoas.dialect.attrs import Pipe


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


def _join(a: list[int], b: list[int]) -> list[int]:
    """The element-wise maximum of two clocks (a comprehension: cheaper than ``map(max, ...)`` per entry)."""
    return [x if x >= y else y for x, y in zip(a, b, strict=True)]


def _short(op_name: str) -> str:
    return op_name.removeprefix("pto.")


class RaceDetector:
    """Vector clocks per pipe and shadow memory per on-chip space.

    A vector has one entry per pipe seen so far (a kernel touches 3-5 of the
    10), so joins stay short; a new pipe widens every clock and snapshot.

    An access is remembered by its op (an xDSL operation, or anything with a ``name``); ``locate`` gives
    an op's location when a race is reported (formatted only then)."""

    def __init__(self, capacity: dict[str, int], locate: Callable[[object], str | None] | None = None) -> None:
        self.capacity = capacity
        self.index: dict[Pipe, int] = {}
        self.clock: list[list[int]] = []
        self.flags: dict[tuple[Pipe, Pipe, int], deque[list[int]]] = {}
        self.shadows: dict[str, list[_Seg]] = {}
        self._exact: dict[tuple[str, int], _Seg] = {}

        self.locate: Callable[[object], str | None] = locate or (lambda op: None)
        self.who: list[tuple[object, Pipe]] = []  # (op, pipe) per access id
        self.races: list[Race] = []
        self.counts: dict[tuple[object, object, str], int] = {}

    def _pipe(self, pipe: Pipe) -> int:
        """The vector index of ``pipe`` (widening every vector the first time it is seen)."""
        got = self.index.get(pipe)
        if got is None:
            got = self.index[pipe] = len(self.index)
            for vec in self.clock:
                vec.append(0)
            for pending in self.flags.values():
                for snap in pending:
                    snap.append(0)
            self.clock.append([0] * len(self.index))
        return got

    # -- happens-before -------------------------------------------------
    def set_flag(self, key: tuple[Pipe, Pipe, int]) -> None:
        """Snapshot src's clock onto the flag ``key`` = (src, dst, event)."""
        q = self.index.get(key[0])
        if q is None:
            q = self._pipe(key[0])
        pending = self.flags.get(key)
        if pending is None:
            pending = self.flags[key] = deque()
        pending.append(self.clock[q][:])

    def wait_flag(self, key: tuple[Pipe, Pipe, int]) -> None:
        """Join the oldest snapshot of the flag ``key`` = (src, dst, event) into dst's clock."""
        pending = self.flags.get(key)
        if pending:
            q = self.index.get(key[1])
            if q is None:
                q = self._pipe(key[1])
            self.clock[q] = _join(self.clock[q], pending.popleft())

    def handshake(self, src: Pipe, dst: Pipe) -> None:
        """:meth:`set_flag` then :meth:`wait_flag` of a ``src`` -> ``dst`` flag with no snapshot pending:
        the destination's clock joins the source's as it is (the snapshot would be taken and consumed at
        once)."""
        q = self.index.get(src)
        if q is None:
            q = self._pipe(src)
        d = self.index.get(dst)
        if d is None:
            d = self._pipe(dst)
        clock = self.clock
        clock[d] = _join(clock[d], clock[q])

    def barrier_all(self) -> None:
        """``pipe_barrier(PIPE_ALL)``: every pipe has seen everything."""
        if not self.clock:
            return
        joined = [max(col) for col in zip(*self.clock, strict=True)]
        self.clock = [list(joined) for _ in self.clock]

    # -- accesses -------------------------------------------------------
    def _segments(self, space: str, lo: int, hi: int) -> list[_Seg]:
        """The segments covering exactly ``[lo, hi)`` (split and created as needed), in order.

        Segments are only ever split (their ``lo`` kept) or added, never removed, so a segment remembered
        by its ``(space, lo)`` that still ends at ``hi`` is exactly the range: a tile accessed again (the
        common case) is found without a scan."""
        exact = self._exact.get((space, lo))
        if exact is not None and exact.hi == hi:
            return [exact]
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
        if len(out) == 1:
            self._exact[(space, lo)] = out[0]
        return out

    def instruction(self, pipe: Pipe, op: object, reads: Sequence[Any], writes: Sequence[Any]) -> None:
        """A new instruction ``op`` on ``pipe`` (it ticks the pipe's clock), then :meth:`access` of every tile
        it reads and writes (objects with ``space``, ``addr`` and ``nbytes``; a tile seen before is found by
        its exact segment, inline)."""
        q = self.index.get(pipe)
        if q is None:
            q = self._pipe(pipe)
        seen = self.clock[q]
        seen[q] += 1
        who = self.who
        who.append((op, pipe))
        me = len(who) - 1
        exact = self._exact
        tick = seen[q]
        for t in reads:
            lo = t.addr
            hi = lo + t.nbytes
            seg = exact.get((t.space, lo))
            if seg is None or seg.hi != hi or lo >= hi:
                self.access(me, t.space, lo, hi, False)
                continue
            p = seg.w_pipe
            if p >= 0 and p != q and seg.w_tick > seen[p]:
                self._report(who[me], t.space, lo, hi, seg.w_who, "reads", "written")
            seg.reads[q] = (tick, me)
        for t in writes:
            lo = t.addr
            hi = lo + t.nbytes
            seg = exact.get((t.space, lo))
            if seg is None or seg.hi != hi or lo >= hi:
                self.access(me, t.space, lo, hi, True)
                continue
            p = seg.w_pipe
            if p >= 0 and p != q and seg.w_tick > seen[p]:
                self._report(who[me], t.space, lo, hi, seg.w_who, "writes", "written")
            reads_of = seg.reads
            if reads_of:
                for rp, (rtick, rwho) in reads_of.items():
                    if rp != q and rtick > seen[rp]:
                        self._report(who[me], t.space, lo, hi, rwho, "writes", "read")
                reads_of.clear()
            seg.w_pipe, seg.w_tick, seg.w_who = q, tick, me

    def instruction_1(self, acc: tuple[object, Pipe], read: Any, write: Any) -> None:
        """:meth:`instruction` of an instruction reading at most one tile and writing at most one (``read``,
        ``write``: the tile or None), its ``(op, pipe)`` given as one tuple made once per op (a data op's
        step calls this on every execution)."""
        pipe = acc[1]
        q = self.index.get(pipe)
        if q is None:
            q = self._pipe(pipe)
        seen = self.clock[q]
        seen[q] += 1
        who = self.who
        me = len(who)
        who.append(acc)
        tick = seen[q]
        if read is not None:
            lo = read.addr
            hi = lo + read.nbytes
            seg = self._exact.get((read.space, lo))
            if seg is None or seg.hi != hi or lo >= hi:
                self.access(me, read.space, lo, hi, False)
            else:
                p = seg.w_pipe
                if p >= 0 and p != q and seg.w_tick > seen[p]:
                    self._report(acc, read.space, lo, hi, seg.w_who, "reads", "written")
                seg.reads[q] = (tick, me)
        if write is not None:
            lo = write.addr
            hi = lo + write.nbytes
            seg = self._exact.get((write.space, lo))
            if seg is None or seg.hi != hi or lo >= hi:
                self.access(me, write.space, lo, hi, True)
                return
            p = seg.w_pipe
            if p >= 0 and p != q and seg.w_tick > seen[p]:
                self._report(acc, write.space, lo, hi, seg.w_who, "writes", "written")
            reads_of = seg.reads
            if reads_of:
                for rp, (rtick, rwho) in reads_of.items():
                    if rp != q and rtick > seen[rp]:
                        self._report(acc, write.space, lo, hi, rwho, "writes", "read")
                reads_of.clear()
            seg.w_pipe, seg.w_tick, seg.w_who = q, tick, me

    def access(self, who: int, space: str, lo: int, hi: int, write: bool) -> None:
        """Check and record one access of ``space[lo:hi]`` by access id ``who``."""
        if lo >= hi:
            return
        acc = self.who[who]
        q = self.index[acc[1]]
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

    def _report(
        self,
        acc: tuple[object, Pipe],
        space: str,
        lo: int,
        hi: int,
        other_id: int,
        kind: str,
        other_kind: str,
    ) -> None:
        op, pipe = acc
        other_op, other_pipe = self.who[other_id]
        count_key = (op, other_op, kind + other_kind)
        if count_key in self.counts:
            self.counts[count_key] += 1
            return
        self.counts[count_key] = 1
        self.races.append(
            Race(
                _short(op.name),  # type: ignore[attr-defined]
                pipe.value,
                kind,
                space,
                lo,
                hi,
                _short(other_op.name),  # type: ignore[attr-defined]
                other_pipe.value,
                other_kind,
                self.locate(op),
                self.locate(other_op),
            )
        )
