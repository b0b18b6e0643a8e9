"""The scheduler's shared ready queue, indexed so that an AICPU loop iteration costs O(log n), not O(n).

:class:`ReadyQueue` maps each visible task id (its producers released) to the cycle it becomes
visible, like the dict the scheduler walked before; on a model-sized graph (paged attention: 16k tasks,
thousands visible at once, three or four loop iterations per task) those walks made the scheduler
quadratic. It answers the loop's questions from indexes kept up to date on every insert and removal:

- :meth:`depths`: how many visible tasks of each queue (aic, aiv, mix) are visible at a cycle (a
  sorted list of visible cycles per queue, bisected);
- :meth:`earliest`: the earliest visible cycle of a kind of task (a heap per kind, entries of removed
  tasks dropped when they reach the top);
- :meth:`first_ready`: the lowest task id, among the tasks visible at ``start`` whose kind passes a
  test, that a dispatch phase examines next (a heap of task ids per kind, filled from a per-kind heap by
  cycle as ``start`` moves on; the scheduler's iteration starts never go back in time, and when one
  does the answer is found by a walk instead).

A kind is anything hashable the caller says tasks alike share (the scheduler's: the core type and the
parts' core types): tasks of one kind fit the same idle cores.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Hashable, Iterator


class ReadyQueue:
    """Visible task id -> visible cycle, with per-queue and per-kind indexes (see the module docstring)."""

    def __init__(self, kind_of: dict[int, Hashable], queue_of: dict[int, int], queues: int = 3):
        self._at: dict[int, int] = {}
        self._kind_of = kind_of
        self._queue_of = queue_of
        self._times: list[list[int]] = [[] for _ in range(queues)]
        self._by_time: dict[Hashable, list[tuple[int, int]]] = {}  # all visible, lazily pruned
        self._pending: dict[Hashable, list[tuple[int, int]]] = {}  # not yet moved to _ready
        self._ready: dict[Hashable, list[tuple[int, int]]] = {}  # visible at or before _horizon, by task id
        self._horizon: int | None = None

    # ---- the mapping the scheduler reads and writes ------------------------------------------

    def __contains__(self, tid: object) -> bool:
        return tid in self._at

    def __getitem__(self, tid: int) -> int:
        return self._at[tid]

    def __len__(self) -> int:
        return len(self._at)

    def __iter__(self) -> Iterator[int]:
        return iter(self._at)

    def items(self) -> Iterator[tuple[int, int]]:
        """(task id, visible cycle) pairs."""
        return iter(list(self._at.items()))

    def __setitem__(self, tid: int, at: int) -> None:
        if tid in self._at:
            del self[tid]
        self._at[tid] = at
        bisect.insort(self._times[self._queue_of[tid]], at)
        kind = self._kind_of[tid]
        heapq.heappush(self._by_time.setdefault(kind, []), (at, tid))
        if self._horizon is not None and at <= self._horizon:
            heapq.heappush(self._ready.setdefault(kind, []), (tid, at))
        else:
            heapq.heappush(self._pending.setdefault(kind, []), (at, tid))

    def __delitem__(self, tid: int) -> None:
        at = self._at.pop(tid)
        times = self._times[self._queue_of[tid]]
        del times[bisect.bisect_left(times, at)]
        # the heaps keep the entry until it reaches the top (it is no longer in _at)

    # ---- the indexed queries -------------------------------------------------------------------

    def depths(self, t: int) -> list[int]:
        """Per queue, how many tasks are visible at cycle ``t``."""
        return [bisect.bisect_right(times, t) for times in self._times]

    def earliest(self, kind: Hashable) -> int | None:
        """The earliest visible cycle of a task of ``kind`` (None when none is visible)."""
        heap = self._by_time.get(kind)
        while heap:
            at, tid = heap[0]
            if self._at.get(tid) == at:
                return at
            heapq.heappop(heap)
        return None

    def kinds(self) -> list[Hashable]:
        """The kinds seen so far."""
        return list(self._by_time)

    def first_ready(self, start: int, take: Callable[[Hashable], bool]) -> int | None:
        """The lowest id of a task visible at ``start`` whose kind ``take`` accepts (None: none)."""
        if self._horizon is not None and start < self._horizon:  # back in time: walk
            ids = [tid for tid, at in self._at.items() if at <= start and take(self._kind_of[tid])]
            return min(ids, default=None)
        self._horizon = start
        for kind, heap in self._pending.items():
            ready = self._ready.setdefault(kind, [])
            while heap and heap[0][0] <= start:
                at, tid = heapq.heappop(heap)
                if self._at.get(tid) == at:
                    heapq.heappush(ready, (tid, at))
        best: int | None = None
        for kind, heap in self._ready.items():
            while heap and self._at.get(heap[0][0]) != heap[0][1]:
                heapq.heappop(heap)
            if heap and (best is None or heap[0][0] < best) and take(kind):
                best = heap[0][0]
        return best
