"""The chip scheduler's deferred completion (``pld.system.defer_wait``), without ranks: a task whose kernel
registered conditions frees its core when its kernel ends but completes (releases its consumers) in an
``async_poll`` phase only once they hold; other tasks run meanwhile; nothing else to run: it blocks,
bounded, and a condition that never holds raises its own error naming the task."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from pypto.runtime.orchestration import KernelPart, Task, TaskGraph
from pypto.runtime.scheduler import Scheduler
from pypto.target.model import load_target


@dataclass
class Run:
    cycles: int
    deferred: list[Any] = field(default_factory=list)


class Signal:
    """A condition that holds at chip cycle ``at`` once ``ready()`` says so (polled, never blocking)."""

    def __init__(self, at: int, ready: Any, timeout_s: float = 5.0):
        self.at, self.ready, self.timeout_s, self.polls = at, ready, timeout_s, 0

    def poll(self) -> int | None:
        self.polls += 1
        return self.at if self.ready() else None

    def timed_out(self, task: str) -> Exception:
        return TimeoutError(f"{task}: never signalled")


def task(tid: int, name: str, deps: set[int] = frozenset()) -> Task:  # type: ignore[assignment]
    return Task(tid, name, "aiv", [], [KernelPart(name, "aiv", [])], deps=set(deps))


def schedule(tasks: list[Task], runs: dict[str, Any], target: Any = None) -> tuple[Scheduler, dict[int, Any]]:
    order: list[str] = []

    def run_part(t: Task, part: KernelPart, block: int, start: int) -> Run:
        order.append(t.func_name)
        return runs[t.func_name](start) if callable(runs[t.func_name]) else runs[t.func_name]

    s = Scheduler(target or load_target("a2a3"), run_part)
    records = {r.task_id: r for r in s.run(TaskGraph(tasks, [], []))}
    s.order = order  # type: ignore[attr-defined]
    return s, records


def test_a_deferred_task_frees_its_core_at_its_kernel_end_and_completes_when_its_condition_holds() -> None:
    published: list[int] = []
    cond = Signal(20000, lambda: bool(published))

    def publisher(start: int) -> Run:
        published.append(start)  # the condition holds once the publisher has run (as a peer's notify would)
        return Run(500)

    graph = [task(0, "waiter"), task(1, "consumer", {0}), task(2, "publisher")]
    s, rec = schedule(graph, {"waiter": Run(100, [cond]), "consumer": Run(50), "publisher": publisher})
    assert s.order == ["waiter", "publisher", "consumer"]  # type: ignore[attr-defined]
    waiter, consumer = rec[0], rec[1]
    assert waiter.end == waiter.start + 100 and waiter.blocks[0].finish < 20000  # the core is free at once
    assert waiter.finish >= 20000  # done once the condition held (its landing cycle)
    assert consumer.dispatch > waiter.finish and consumer.start > 20000
    polls = [p for thread in s.phases for p in thread if p["kind"] == "async_poll"]
    assert len(polls) == 1 and polls[0]["start_cycles"] == waiter.finish and polls[0]["tasks_processed"] == 1


def test_the_freed_core_runs_a_later_task_on_a_target_whose_cores_the_waiters_fill() -> None:
    from dataclasses import replace

    target = load_target("a2a3")
    target = replace(target, aic_cores=1, aiv_per_aic=1)  # one AIV core
    published: list[int] = []
    graph = [task(0, "waiter"), task(1, "consumer", {0}), task(2, "publisher")]
    runs = {"waiter": Run(100, [Signal(9000, lambda: bool(published))]), "consumer": Run(50),
            "publisher": lambda start: published.append(start) or Run(500)}
    s, rec = schedule(graph, runs, target)
    assert rec[2].core_ids == rec[0].core_ids and rec[2].dispatch >= rec[0].blocks[0].finish
    assert rec[1].start > max(rec[0].finish, rec[2].end)


def test_a_condition_already_holding_completes_at_the_retire() -> None:
    cond = Signal(0, lambda: True)
    s, rec = schedule([task(0, "waiter"), task(1, "consumer", {0})], {"waiter": Run(100, [cond]), "consumer": Run(1)})
    assert rec[0].blocks[0].finish <= rec[0].finish < rec[1].dispatch
    assert rec[0].finish - rec[0].blocks[0].finish < 200  # the complete phase, then the async_poll


def test_nothing_else_to_run_blocks_until_the_condition_holds() -> None:
    t0 = time.monotonic()
    cond = Signal(5000, lambda: time.monotonic() - t0 > 0.3)  # "a peer" signals 0.3 s later, in wall time
    s, rec = schedule([task(0, "waiter"), task(1, "consumer", {0})], {"waiter": Run(100, [cond]), "consumer": Run(1)})
    assert cond.polls > 1 and rec[0].finish >= 5000 and rec[1].start > rec[0].finish


def test_a_condition_that_never_holds_is_its_timeout_naming_the_task() -> None:
    cond = Signal(0, lambda: False, timeout_s=0.2)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match=r"task t0 \(@waiter\): never signalled"):
        schedule([task(0, "waiter"), task(1, "consumer", {0})], {"waiter": Run(100, [cond]), "consumer": Run(1)})
    assert time.monotonic() - t0 < 5.0
