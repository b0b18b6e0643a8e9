"""PTOAS's event-id allocation (``SyncEventIdAllocation``): per pipe pair, 8 ids with interval lists.

Each id of a pipe pair keeps its busy spans as element-index intervals (a list ``[end, begin, end,
begin, ...]``, latest first). A pair (visited at its wait, in element order) takes the lowest ids
free over its span ``[set, wait]``, preferring ids never used; a back-edge pair's span is the whole
function and each of its ids also gets a prologue set before the first element and an epilogue wait
after the last. V->S, S->V and MTE2->V keep one id back (7). A pair that finds no id is merged
("widened") into an earlier pair of the same pipes, loop scope and buffers whose span covers its
set; else its pipe pair is re-allocated with back-edge spans per loop (prologue/epilogue around
that loop); a pair still without an id has its wait turned into a ``PIPE_ALL`` barrier.
"""

from __future__ import annotations

from pypto.ptoas.dialect.attrs import Pipe

from .elements import Element, Kind, Loop, SyncOp

TOTAL = 8
RESERVED = {(Pipe.PIPE_V, Pipe.PIPE_S): 1, (Pipe.PIPE_S, Pipe.PIPE_V): 1, (Pipe.PIPE_MTE2, Pipe.PIPE_V): 1}

PipePair = tuple[Pipe, Pipe]


class EventIds:
    """The allocator over one function's sync IR."""

    def __init__(self, ir: list[Element], groups: list[list[SyncOp]]) -> None:
        self.ir = ir
        self.groups = groups
        self.pools: dict[PipePair, list[list[int]]] = {}
        self.reallocated: list[PipePair] = []  # insertion-ordered set
        self.backward: set[int] = set()  # id() of the prologue/epilogue ops added here

    def run(self) -> None:
        for el in self.ir:
            for s in list(el.before):
                if not s.useless and not s.event_ids and s.kind is not Kind.BARRIER:
                    self.set_event_id(s)
        for el in self.ir:
            self.widen(el.after)
        if self.reallocated:
            for pair in self.reallocated:
                self.pools.pop(pair, None)
            first, last = self.ir[0], self.ir[-1]
            first.before = [s for s in first.before if not (s.kind is Kind.SET and _pair(s) in self.reallocated)]
            last.after = [s for s in last.after if not (s.kind is Kind.WAIT and _pair(s) in self.reallocated)]
            for el in self.ir:
                for s in list(el.before):
                    if s.kind is not Kind.BARRIER and _pair(s) in self.reallocated:
                        self.clear(s)
                        self.set_event_id(s)
            for el in self.ir:
                self.widen(el.after)
        self.no_id_to_pipe_all()

    def clear(self, s: SyncOp) -> None:
        for op in self.groups[s.index]:
            op.event_ids = []

    def _loop_of(self, s: SyncOp) -> Loop:
        assert s.for_end is not None
        loop = self.ir[s.for_end]
        assert isinstance(loop, Loop)
        return loop

    def _span(self, set_op: SyncOp, wait: SyncOp, whole_end: int) -> tuple[int, int]:
        if set_op.for_end is not None:
            if _pair(set_op) in self.reallocated:
                loop = self._loop_of(set_op)
                return loop.begin, loop.end_id
            return 0, whole_end
        return set_op.at, wait.at

    def set_event_id(self, s: SyncOp) -> None:
        set_op, wait = self.groups[s.index][0], self.groups[s.index][1]
        begin, end = self._span(set_op, wait, len(self.ir) - 1)
        slots = self.pools.setdefault(_pair(s), [[] for _ in range(TOTAL)])
        free = [_fits(slots[i], begin, end) for i in range(TOTAL)]
        idle = [not slots[i] for i in range(TOTAL)]
        for i in range(TOTAL - RESERVED.get(_pair(s), 0), TOTAL):
            free[i] = False
        want = s.event_id_num
        got: list[int] = []
        for i in range(TOTAL):
            if len(got) == want:
                break
            if free[i] and idle[i]:
                free[i] = False
                got.append(i)
        for i in range(TOTAL):
            if len(got) == want:
                break
            if free[i]:
                free[i] = False
                got.append(i)
        if not got:
            return
        if len(got) >= want:
            for i in got:
                self.take(s, i)
        elif _pair(s) in self.reallocated:
            self.take(s, got[0])
            s.event_id_num = 1

    def take(self, s: SyncOp, event: int) -> None:
        group = self.groups[s.index]
        for op in group:
            op.event_ids.append(event)
        set_op, wait = group[0], group[1]
        begin, end = self._span(set_op, wait, len(self.ir))
        _occupy(self.pools.setdefault(_pair(s), [[] for _ in range(TOTAL)])[event], begin, end)
        if set_op.for_end is not None:
            self.prologue_epilogue(set_op, wait, event)

    def prologue_epilogue(self, set_op: SyncOp, wait: SyncOp, event: int) -> None:
        """A set before the function (or loop) and a wait after it for a back-edge pair's id."""
        index = len(self.groups)
        front = SyncOp(Kind.SET, set_op.src, set_op.dst, index, set_op.at, set_op.for_end)
        front.dep_roots, front.event_id_num, front.event_ids = set_op.dep_roots, set_op.event_id_num, [event]
        back = front.match(wait.at)
        back.dep_roots, back.event_id_num, back.event_ids = wait.dep_roots, wait.event_id_num, [event]
        if _pair(set_op) in self.reallocated:
            loop = self._loop_of(set_op)
            front.at, back.at = loop.begin, loop.end_id
            front.head_tail = back.head_tail = True
        else:
            front.at, back.at = 0, len(self.ir) - 1
        self.ir[front.at].before.append(front)
        self.ir[back.at].after.append(back)
        self.backward.update((id(front), id(back)))
        self.groups.append([front, back])

    def widen(self, syncs: list[SyncOp]) -> None:
        for s in list(syncs):
            if s.kind is Kind.SET and not s.event_ids and not s.useless and not self.widen_by_other(s):
                if _pair(s) not in self.reallocated:
                    self.reallocated.append(_pair(s))

    def widen_by_other(self, s: SyncOp) -> bool:
        set_op, wait = self.groups[s.index][0], self.groups[s.index][1]
        same = self.find_widen(set_op, wait)
        if same is None:
            return False
        set_op.useless = wait.useless = True
        if set_op.at != same.at:
            self.ir[same.at].after.remove(same)
            self.ir[set_op.at].after.append(same)
            same.at = set_op.at
        return True

    def find_widen(self, set_op: SyncOp, wait: SyncOp) -> SyncOp | None:
        stop = self._loop_of(set_op).begin if set_op.for_end is not None else 0
        i = set_op.at
        while i >= stop:
            el = self.ir[i]
            if isinstance(el, Loop):
                if not el.end:
                    break
                i = el.begin
            for same in el.after:
                if same is set_op or (same.src, same.dst) != (set_op.src, set_op.dst):
                    continue
                if same.for_end != set_op.for_end or same.useless or not same.event_ids:
                    continue
                if not (same.dep_roots and same.dep_roots == set_op.dep_roots):
                    continue
                wait_same = self.groups[same.index][1]
                if wait_same.for_end != wait.for_end:
                    continue
                if same.at < set_op.at <= wait_same.at:
                    return same
            i -= 1
        return None

    def no_id_to_pipe_all(self) -> None:
        for el in self.ir:
            for s in list(el.after):
                if s.kind is Kind.WAIT and s.head_tail:
                    self.move_out_head_tail(s)
                if s.kind is Kind.SET and not s.event_ids and not s.useless:
                    group = self.groups[s.index]
                    group[0].useless = True
                    group[1].set_pipe_all()

    def move_out_head_tail(self, tail: SyncOp) -> None:
        set_op, wait = self.groups[tail.index][0], self.groups[tail.index][1]
        for i, el in enumerate(self.ir):
            if set_op.at < i < wait.at:
                continue
            for s in el.before:
                if (
                    not s.useless
                    and s.index != tail.index
                    and (s.src, s.dst) == (tail.src, tail.dst)
                    and s.event_ids == tail.event_ids
                ):
                    return
        set_op.useless = wait.useless = True
        self.prologue_epilogue(set_op, wait, set_op.event_ids[0])


def _pair(s: SyncOp) -> PipePair:
    return (s.src, s.dst)


def _fits(life: list[int], begin: int, end: int) -> bool:
    """Is an id with busy spans ``life`` free over ``[begin, end]`` (shared endpoints allowed)?"""
    if not life or life[0] <= begin:
        return True
    ok = True
    for j, v in enumerate(life):
        if v <= begin:
            if j % 2 == 0 and life[j - 1] >= end:
                break
            ok = False
        elif j == len(life) - 1:
            if v >= end:
                break
            ok = False
    return ok


def _occupy(life: list[int], begin: int, end: int) -> None:
    """Add the span ``[begin, end]`` to ``life``."""
    if not life:
        life += [end, begin]
    elif life[0] <= begin:
        life[:0] = [end, begin]
    elif life[-1] >= end:
        life += [end, begin]
    elif not _extend(life, begin, end):
        raise AssertionError("insert-sync: cannot record an event-id span")


def _extend(life: list[int], begin: int, end: int) -> bool:
    n = len(life) // 2
    for j in range(n):
        end_old, begin_old = life[2 * j], life[2 * j + 1]
        if end_old >= end > begin_old:
            life[2 * j + 1] = min(begin_old, begin)
            return True
        if end_old > begin >= begin_old:
            life[2 * j] = max(end_old, end)
            return True
        if j < n - 1 and begin_old >= end and begin >= life[2 * (j + 1)]:
            life[2 * (j + 1) : 2 * (j + 1)] = [end, begin]
            return True
    return False


__all__ = ["EventIds"]
