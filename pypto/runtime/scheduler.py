"""The chip: dispatch ready tasks to idle simulated AIC/AIV cores.

Model (discrete events, one time axis in target core cycles):

- the cores come from the target: ``aic_cores`` AIC cores (ids ``0 ..
  aic_cores-1``) and ``aic_cores * aiv_per_aic`` AIV cores (the next ids);
  AIC core *i* and AIV cores ``aic_cores + i*aiv_per_aic + j`` form cluster *i*;
- a task is *ready* when every task it depends on has *finished*; ready tasks
  are taken in submission order (a FIFO per core type, as the AICPU
  scheduler's ready queues);
- at time *t* each ready task goes to the lowest-numbered idle core of its
  type: an ``"aic"`` task to an AIC core, an ``"aiv"`` task to an AIV core,
  a ``"mix"`` (Group) task to a whole cluster (its AIC core and as many of
  its AIV cores as it has AIV parts, all idle), every part starting together;
- ``dispatch = t``; ``start = dispatch + target.dispatch_latency_cycles``;
  ``end = start + cycles`` (the interpreter's cycle count of the kernel; the
  longest part for a Group); ``finish = end`` (the scheduler sees the
  completion at once: no completion latency is modelled); the core is busy
  from dispatch to finish;
- when nothing more can be dispatched, time advances to the next finish.

The kernel of a task runs (numerics and timing, via ``run_part``) when it is
dispatched; since its producers have finished by then, their outputs are in
place. Times are in the units of ``chip_swimlane_records.json``
(runtime-dfx-formats.md §2): raw cycles, with the clock in
:attr:`TaskRecord.clock_hz` to convert to microseconds.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.target import Target

from .orchestration import KernelPart, Task, TaskGraph


@dataclass
class TaskRecord:
    """When and where one task ran (cycles of the target clock ``clock_hz``).

    ``dispatch``: the scheduler hands the task to its core(s); ``start`` /
    ``end``: the kernel runs on the core; ``finish``: the scheduler sees it
    done (its successors may be dispatched from then on). ``core_ids`` are the
    cores it occupied (AIC first for a Group); ``kernel_runs`` one
    :class:`~pypto.device.interpreter.KernelRun` per part."""

    task_id: int
    func_name: str
    core_type: str
    core_ids: list[int]
    dispatch: int
    start: int
    end: int
    finish: int
    deps: list[int]
    clock_hz: float
    kernel_runs: list[Any] = field(default_factory=list)
    part_names: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """``t<id>``."""
        return f"t{self.task_id}"

    @property
    def cycles(self) -> int:
        """Kernel duration (``end - start``)."""
        return self.end - self.start

    def us(self, cycles: int) -> float:
        """``cycles`` in microseconds (runtime-dfx-formats.md: ``c * 1e6 / freq``)."""
        return cycles * 1e6 / self.clock_hz

    @property
    def dispatch_us(self) -> float:
        """Dispatch time in µs."""
        return self.us(self.dispatch)

    @property
    def start_us(self) -> float:
        """Start time in µs."""
        return self.us(self.start)

    @property
    def end_us(self) -> float:
        """End time in µs."""
        return self.us(self.end)

    @property
    def finish_us(self) -> float:
        """Finish time in µs."""
        return self.us(self.finish)

    @property
    def duration_us(self) -> float:
        """``end - start`` in µs."""
        return self.us(self.end - self.start)


@dataclass
class Core:
    """One simulated core."""

    id: int
    type: str  # "aic" | "aiv"
    cluster: int
    busy_until: int = 0
    busy_cycles: int = 0
    kernel_cycles: int = 0
    tasks: list[int] = field(default_factory=list)


def make_cores(target: Target) -> list[Core]:
    """The target's AIC cores, then its AIV cores (``aiv_per_aic`` per cluster)."""
    n_aic, per = int(target.aic_cores), int(target.aiv_per_aic)
    cores = [Core(i, "aic", i) for i in range(n_aic)]
    cores += [Core(n_aic + i * per + j, "aiv", i) for i in range(n_aic) for j in range(per)]
    return cores


RunPart = Callable[[Task, KernelPart], Any]
"""Runs one kernel part and returns its KernelRun (``.cycles``)."""


OrderParts = Callable[[Task], list[KernelPart]]
"""The order to interpret a task's parts in (they run together on the chip; a part that pops what
another pushes is interpreted after it)."""


class Scheduler:
    """Dispatches the tasks of a :class:`TaskGraph` onto the target's cores."""

    def __init__(self, target: Target, run_part: RunPart, order_parts: OrderParts | None = None):
        self.target = target
        self.run_part = run_part
        self.order_parts = order_parts or (lambda task: list(task.parts))
        self.cores = make_cores(target)
        self.latency = int(target.dispatch_latency_cycles)
        self.clock_hz = float(target.clock_hz)

    def _pick(self, task: Task, now: int) -> list[Core] | None:
        """Idle cores for ``task`` at ``now`` (None when none fit)."""
        idle = [c for c in self.cores if c.busy_until <= now]
        if task.core_type in ("aic", "aiv"):
            for c in idle:
                if c.type == task.core_type:
                    return [c]
            return None
        n_aiv = sum(p.core_type == "aiv" for p in task.parts)
        n_aic = sum(p.core_type == "aic" for p in task.parts)
        for cluster in sorted({c.cluster for c in self.cores}):
            aic = [c for c in idle if c.cluster == cluster and c.type == "aic"]
            aiv = [c for c in idle if c.cluster == cluster and c.type == "aiv"]
            if len(aic) >= n_aic and len(aiv) >= n_aiv:
                return aic[:n_aic] + aiv[:n_aiv]
        return None

    def _launch(self, task: Task, cores: list[Core], now: int) -> TaskRecord:
        start = now + self.latency
        done = {id(part): self.run_part(task, part) for part in self.order_parts(task)}
        runs = [done[id(part)] for part in task.parts]
        end = start + max((int(r.cycles) for r in runs), default=0)
        finish = end
        for core in cores:
            core.busy_until = finish
            core.busy_cycles += finish - now
            core.kernel_cycles += end - start
            core.tasks.append(task.id)
        return TaskRecord(
            task.id,
            task.func_name,
            task.core_type,
            [c.id for c in cores],
            now,
            start,
            end,
            finish,
            sorted(task.deps),
            self.clock_hz,
            runs,
            [p.func_name for p in task.parts],
        )

    def run(self, graph: TaskGraph) -> list[TaskRecord]:
        """Simulate the whole graph; returns one record per task (by task id)."""
        tasks = {t.id: t for t in graph.tasks}
        succ = graph.successors()
        waiting = {t.id: len(t.deps) for t in graph.tasks}
        ready: list[int] = sorted(tid for tid, n in waiting.items() if n == 0)
        running: list[tuple[int, int]] = []  # (finish, task id) heap
        records: dict[int, TaskRecord] = {}
        now = 0
        while ready or running:
            still: list[int] = []
            for tid in ready:
                cores = self._pick(tasks[tid], now)
                if cores is None:
                    still.append(tid)
                    continue
                rec = self._launch(tasks[tid], cores, now)
                records[tid] = rec
                heapq.heappush(running, (rec.finish, tid))
            ready = still
            if not running:
                if ready:
                    kinds = sorted({tasks[t].core_type for t in ready})
                    raise RuntimeError(f"tasks {ready} ({', '.join(kinds)}) cannot be placed on this target's cores")
                break
            now = running[0][0]
            while running and running[0][0] <= now:
                _, done = heapq.heappop(running)
                for s in succ[done]:
                    waiting[s] -= 1
                    if waiting[s] == 0:
                        ready.append(s)
            ready.sort()
        if len(records) != len(tasks):
            missing = sorted(set(tasks) - set(records))
            raise RuntimeError(f"tasks {missing} never became ready (a dependency cycle)")
        return [records[t] for t in sorted(records)]

    def per_core_cycles(self) -> dict[int, int]:
        """Kernel cycles (sum of ``end - start``) per core that ran something."""
        return {c.id: c.kernel_cycles for c in self.cores if c.tasks}

    def per_core_busy(self) -> dict[int, int]:
        """Occupied cycles (dispatch to finish, latency included) per core that ran something."""
        return {c.id: c.busy_cycles for c in self.cores if c.tasks}

    def core_types(self) -> list[str]:
        """``"aic"`` / ``"aiv"`` by core id (the swimlane's ``core_types``)."""
        return [c.type for c in sorted(self.cores, key=lambda c: c.id)]
