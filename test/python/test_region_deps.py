"""The task graph's dependencies by region of memory (``orchestration.RegionTracker``), held by hypothesis to
what they must be: every conflicting pair of accesses ordered, no edge without a conflict, and for whole
buffers exactly the last-writer / readers-since edges the graph had before regions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.dialects.enums import ParamDirection
from pypto.runtime.orchestration import DepEdge, RegionTracker

IN, OUT, INOUT = ParamDirection.In, ParamDirection.Out, ParamDirection.InOut


@st.composite
def programs(draw, whole: bool = False) -> list[list[tuple[int, int, int, int, ParamDirection]]]:
    """Tasks of one to three accesses to two memories of 12 elements: (memory, lo, hi, arg, direction)."""
    tasks = []
    for _ in range(draw(st.integers(1, 12))):
        accesses = []
        for arg in range(draw(st.integers(1, 3))):
            lo, hi = (0, 12) if whole else sorted(draw(st.tuples(st.integers(0, 12), st.integers(0, 12))))
            if lo == hi:
                hi = lo + 1
            accesses.append((draw(st.integers(0, 1)), lo, hi, arg, draw(st.sampled_from([IN, OUT, INOUT]))))
        tasks.append(accesses)
    return tasks


def _graph(tasks: list[list[tuple[int, int, int, int, ParamDirection]]]) -> list[list[DepEdge]]:
    tracker, out = RegionTracker(), []
    for tid, accesses in enumerate(tasks):
        out.append([e for e in tracker.edges(accesses) if e.pred != tid])
        tracker.record(tid, accesses)
    return out


def _conflict(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and (a[4] is not IN or b[4] is not IN)


@settings(max_examples=300, deadline=None)
@given(programs())
def test_every_conflict_is_ordered_and_every_edge_is_a_conflict(tasks: list) -> None:
    edges = _graph(tasks)
    before: list[set[int]] = []  # each task's ancestors
    for tid, mine in enumerate(edges):
        before.append(set().union(*({e.pred} | before[e.pred] for e in mine)) if mine else set())
        for e in mine:  # no edge without an overlapping access of which one writes
            assert any(_conflict(a, b) for a in tasks[e.pred] for b in tasks[tid]), (e, tid)
            a = tasks[e.pred][e.pred_arg]
            b = tasks[tid][e.arg]
            assert _conflict(a, b) and e.covered == (a[1] <= b[1] and b[2] <= a[2])
    for j, later in enumerate(tasks):
        for i in range(j):
            if any(_conflict(a, b) for a in tasks[i] for b in later):
                assert i in before[j], (i, j)


@settings(max_examples=300, deadline=None)
@given(programs(whole=True))
def test_whole_buffers_get_the_last_writer_and_readers_since(tasks: list) -> None:
    """The reference is the graph's rule before regions: per buffer, its last writer and its readers since."""
    last: dict[int, int] = {}
    readers: dict[int, set[int]] = {}
    want = []
    for tid, accesses in enumerate(tasks):
        mine = []
        for mem, _, _, arg, direction in accesses:
            if mem in last:
                mine.append((last[mem], arg, "waw" if direction is OUT else "raw"))
            if direction is not IN:
                mine += [(r, arg, "war") for r in sorted(readers.get(mem, set()))]
        want.append([m for m in mine if m[0] != tid])
        for mem, _, _, _, direction in accesses:
            if direction is IN:
                readers.setdefault(mem, set()).add(tid)
            else:
                last[mem] = tid
                readers[mem] = {tid} if direction is INOUT else set()
    assert [[(e.pred, e.arg, e.kind) for e in mine] for mine in _graph(tasks)] == want
