"""PTOAS's sync analysis (``InsertSyncAnalysis``): a pair for every hazard its records do not order.

For each compound *now*, the earlier elements are scanned backwards (into loops before it, both
branches of an ``if`` before it, skipping the other branch when inside one) with a record per
multi-buffer slot: ``already`` (pipes already waited for) and ``finder`` (pairs whose wait was
passed). A front compound on pipe P with a dependency on *now* gets ``set(P -> Q)`` after it and a
wait before *now* (a barrier when P = Q) unless ``already[P]``; then ``already[P]`` is set.
Passing a wait whose pipe is *now*'s or already synced marks its pair found; passing that pair's
set then marks its source pipe synced (chains order hazards). At an ``if``/``else`` join only
``already`` is merged (both branches), not ``finder``. At each ``LOOP_END`` every body compound is
re-scanned against the body before it and then the body from the loop end back to itself (the
previous iteration): back-edge pairs, with two event ids when a MAT/VEC buffer is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pypto.ptoas.dialect.attrs import AddressSpace, Pipe

from ..access import Buffer
from .elements import LOCAL_SPACES, Branch, Compound, Element, Kind, Loop, PlaceHolder, SyncOp

SLOTS = 16  # PTOAS's MAX_MULTI_BUFFER_NUM


@dataclass
class Record:
    """One multi-buffer slot's record."""

    already: set[Pipe] = field(default_factory=set)
    finder: set[int] = field(default_factory=set)

    def copy(self) -> Record:
        return Record(set(self.already), set(self.finder))


Records = list[Record]


def _fresh() -> Records:
    return [Record() for _ in range(SLOTS)]


def _copy(records: Records) -> Records:
    return [r.copy() for r in records]


Dep = tuple[Buffer, Buffer]


def _dep_between(a: Sequence[Buffer], b: Sequence[Buffer], out: list[Dep]) -> bool:
    found = False
    for x in a:
        for y in b:
            if x.overlaps(y):
                out.append((x, y))
                found = True
    return found


def event_id_num(deps: Sequence[Dep]) -> int:
    """Two event ids for a back-edge pair on a MAT/VEC buffer (double buffering), else one."""
    return 2 if any(x.space in LOCAL_SPACES or y.space in LOCAL_SPACES for x, y in deps) else 1


class Analysis:
    """Runs the analysis over ``ir``, filling the elements' sync lists and ``groups``."""

    def __init__(self, ir: list[Element], groups: list[list[SyncOp]]) -> None:
        self.ir = ir
        self.groups = groups

    def run(self) -> None:
        for now in self.ir:
            if isinstance(now, Compound):
                self.seq(now, self.ir, 0, now.index, _fresh(), None)
            elif isinstance(now, Loop) and now.end:
                for i in range(now.begin, now.end_id):
                    el = self.ir[i]
                    if isinstance(el, Compound):
                        records = _fresh()
                        back = self.ir[now.begin : i + 1]
                        self.seq(el, back, 0, len(back) - 1, records, now.end_id)
                        self.seq(el, self.ir, el.index, now.end_id, records, now.end_id)
        self.last_pipe_all()

    def seq(
        self, now: Compound, elems: Sequence[Element], begin: int, end: int, records: Records, for_end: int | None
    ) -> None:
        """Scan ``elems[begin:end]`` backwards for fronts of ``now`` (``InsertSeqSync``)."""
        self.update(self.ir[elems[end].index].before, records, now.pipe)
        i = end - 1
        while i >= begin:
            front = elems[i]
            if isinstance(front, Compound):
                self.update(self.ir[front.index].after, records, now.pipe)
                self.insert(now, front, records, for_end)
                self.update(self.ir[front.index].before, records, now.pipe)
            elif isinstance(front, Loop):
                if front.end:
                    inner = _copy(records)
                    length = front.end_id - front.begin
                    self.seq(now, elems, max(begin, i - length), i, inner, for_end)
                    records[:] = inner
                    i -= length
            elif isinstance(front, Branch):
                i -= self.branch(i, now, begin, front, elems, records, for_end)
            i -= 1

    def branch(
        self,
        i: int,
        now: Compound,
        begin: int,
        br: Branch,
        elems: Sequence[Element],
        records: Records,
        for_end: int | None,
    ) -> int:
        if br.kind == "end":
            then_rec = _copy(records)
            at_if, at_else = i - (br.end_id - br.begin), i - (br.end_id - br.branch)
            self.seq(now, elems, at_if, at_else, then_rec, for_end)
            if br.branch != br.end_id:
                else_rec = _copy(records)
                self.seq(now, elems, at_else, i, else_rec, for_end)
                for r, t, e in zip(records, then_rec, else_rec, strict=True):
                    r.already |= t.already & e.already
            else:
                for r, t in zip(records, then_rec, strict=True):
                    r.finder = set(t.finder)
            return br.end_id - br.begin
        if br.kind == "else" and i != begin:
            return br.branch - br.begin
        return 0

    def update(self, syncs: Sequence[SyncOp], records: Records, now_pipe: Pipe) -> None:
        """Transitivity through the syncs hung on an element (``UpdateAlreadySync``)."""
        for s in syncs:
            for slot, rec in enumerate(records):
                if slot == 0 and s.event_id_num > 1 and s.for_end is not None:
                    continue
                if s.kind is Kind.BARRIER:
                    if now_pipe == s.dst:
                        rec.already.add(now_pipe)
                    continue
                if not (s.dst in rec.already or now_pipe == s.dst):
                    continue
                if s.kind is Kind.SET and s.index in rec.finder:
                    rec.already.add(s.src)
                if s.kind is Kind.WAIT:
                    rec.finder.add(s.index)

    def insert(self, now: Compound, front: Compound, records: Records, for_end: int | None) -> None:
        if front.pipe == now.pipe == Pipe.PIPE_S:
            return
        if now.op is front.op and for_end is None:
            return
        if front.pipe in records[0].already:
            return
        deps: list[Dep] = []
        if not self.depends(now, front, deps):
            return
        if for_end is not None:
            for slot in range(1, event_id_num(deps)):
                if front.pipe in records[slot].already:
                    return
        self.add(now, front, deps, for_end)
        new = self.groups[-1][0]
        for slot, rec in enumerate(records):
            if slot == 0 and new.event_id_num > 1:
                continue
            rec.already.add(new.src)

    @staticmethod
    def depends(now: Compound, front: Compound, deps: list[Dep]) -> bool:
        """RAW / WAR / WAW on overlapping buffers, and read/read of an ACC buffer across pipes."""
        found = _dep_between(now.uses, front.defs, deps)
        found |= _dep_between(now.defs, front.uses, deps)
        found |= _dep_between(now.defs, front.defs, deps)
        if now.pipe != front.pipe:
            rr: list[Dep] = []
            if _dep_between(now.uses, front.uses, rr):
                for x, y in rr:
                    if x.space == AddressSpace.acc.value:
                        deps.append((x, y))
                        found = True
        return found

    def add(self, now: Compound, front: Compound, deps: list[Dep], for_end: int | None) -> None:
        index = len(self.groups)
        if now.pipe == front.pipe:
            barrier = SyncOp(Kind.BARRIER, front.pipe, now.pipe, index, now.index, for_end)
            self.ir[now.index].before.append(barrier)
            self.groups.append([barrier])
            return
        roots = frozenset(b for d in deps for b in d)
        set_op = SyncOp(Kind.SET, front.pipe, now.pipe, index, front.index, for_end, dep_roots=roots)
        wait = set_op.match(now.index)
        wait.dep_roots = roots
        if for_end is not None:
            set_op.event_id_num = wait.event_id_num = event_id_num(deps)
        self.ir[front.index].after.append(set_op)
        self.ir[now.index].before.append(wait)
        self.groups.append([set_op, wait])

    def last_pipe_all(self) -> None:
        """A ``PIPE_ALL`` barrier after the last element (the tail barrier)."""
        for el in reversed(self.ir):
            if not isinstance(el, PlaceHolder):
                barrier = SyncOp(Kind.BARRIER, Pipe.PIPE_ALL, Pipe.PIPE_ALL, len(self.groups), el.index, None)
                el.after.append(barrier)
                self.groups.append([barrier])
                return


__all__ = ["SLOTS", "Analysis", "Record", "event_id_num"]
