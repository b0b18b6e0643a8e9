"""The chip: the AICPU scheduler threads dispatch ready tasks to idle simulated AIC/AIV cores.

Model (discrete events, one time axis in target core cycles; every cost is a field of the target's
``npu.aicpu`` row, :class:`~pypto.target.model.AicpuCosts`):

- the cores come from the target: ``aic_cores`` AIC cores (ids ``0 ..
  aic_cores-1``) and ``aic_cores * aiv_per_aic`` AIV cores (the next ids);
  AIC core *i* and AIV cores ``aic_cores + i*aiv_per_aic + j`` form cluster *i*;
- the orchestrator (one AICPU thread) submits the tasks in order from cycle 0:
  before task *k*'s submit, one ``alloc`` step (``alloc`` cycles, a level-4 record of its own marked
  ``"kind": "alloc"``) per ``tensor.create`` buffer it is the first task to use; then its ``submit``
  (``submit`` cycles); a submitted task whose producers have all been released enters the shared
  ready queue of its type (aic / aiv / mix) when its submit ends;
- a task is ``block_num`` blocks (``with pl.spmd(n)``: ``n``; 1 for a plain task), each run on its
  own core(s) with its block index (``pl.tile.get_block_idx()``); the blocks are popped one by one,
  each onto the free cores of the thread that pops it, so one task may span several loop iterations
  and threads; it stays in the ready queue until its last block is popped and is done (its fanout
  released) when its last block is retired;
- ``threads`` scheduler threads (``RunConfig.aicpu_thread_num`` overrides it)
  each own the cores of the clusters ``c`` with ``c % threads == i``
  (``core_to_thread``). A thread loops; an iteration runs when it is free and
  has work (a block on its cores has ended, or a queued task fits one of its idle
  cores), and runs its phases back to back:
  ``complete`` (``complete`` cycles per ended block; the block's ``finish`` is the
  phase start, its cores are idle from the phase end), ``release`` (``release``
  cycles per fanout edge of the tasks whose last block this retired; a consumer whose last producer
  this releases enters the ready queue at the phase end, or at its submit end if
  later), ``drain`` (below) and ``dispatch`` (the ready tasks in submission order: each block that fits
  idle cores of the thread is popped, ``dispatch`` cycles each; its ``dispatch``
  time is the end of its pop, when its core receives it; a task none of whose blocks fits is a pop
  miss); idle time is the gap between phases;
- ``drain`` (a ``pl.spmd(n, sync_start=True)`` task, whose blocks must co-start): such a task is
  dispatched only when all its remaining blocks fit the thread's idle cores at once. Until then it
  holds the queue behind it: a later-submitted task competing for the same core type is not popped by
  a thread whose cores could host the whole launch (a pop miss), so the cores drain. When it fits, a
  ``drain`` phase reserves the cores (inner ``drain_prepare``, ``drain`` cycles) and publishes every
  block (inner ``drain_publish``, ``dispatch`` cycles per block): all blocks share the publish end as
  their dispatch time;
- deferred completion (``pld.system.defer_wait``: its kernel registers :class:`Deferred` conditions in
  ``KernelRun.deferred``): the task's blocks retire as any (their cores are free from the ``complete``
  phase on; a block's ``finish`` stays there), but the task is not done: the thread that retired its last
  block polls the conditions (one store read each, at every iteration of any thread) and, once all hold,
  at its first iteration not before the cycle the last one held (and the retire), runs an ``async_poll``
  phase (``complete`` cycles per task, ASSUMPTION: the target has no cost of its own for it) whose start
  is the task's ``finish``, then its ``release`` phase. Meanwhile the other ready tasks run on the freed
  cores. When nothing else can run, the scheduler blocks (polls, bounded by the conditions'
  ``timeout_s``) until one holds; a condition that never holds raises its ``timed_out(task)`` error;
- §2's other kinds are not modelled because nothing on this simulator does what they time:
  ``dummy`` / ``dummy_task`` (the orchestration issues no task without a kernel), ``early_dispatch`` and
  ``resolve`` (no ``allow_early_resolve``: a consumer is resolved in ``release``), ``graph_prepare`` and
  ``predicated_skip`` (no graph tasks or predicates);
- a block goes to the lowest-numbered idle core(s) of its thread of its type: an
  ``"aic"`` task to an AIC core, an ``"aiv"`` task to an AIV core, a ``"mix"``
  (Group) task to a whole cluster (its AIC core and as many of its AIV cores as
  it has AIV parts, all idle), every part starting together;
- ``start = dispatch + target.dispatch_latency_cycles`` (the core's receive to
  start); ``end = start + cycles`` (the interpreter's cycle count of the kernel;
  the longest part for a Group); the core is busy from dispatch to finish. Each
  core counts its dispatches: the ``n``-th block it receives has ``reg_task_id`` ``n``.

Without an ``npu.aicpu`` row (one thread, every cost 0) this is a fixed dispatch
latency: a task is dispatched the moment it is ready. Threads are simulated one
iteration at a time, earliest first; an iteration is atomic (another thread
does not pop between its phases). Collection never changes this timeline: every swimlane level
records the same run.

The kernel of a task runs (numerics and timing, via ``run_part``) when it is
dispatched; since its producers have finished by then, their outputs are in
place. Times are in the units of ``chip_swimlane_records.json``
(runtime-dfx-formats.md §2): raw cycles, with the clock in
:attr:`TaskRecord.clock_hz` to convert to microseconds. The phases the threads
ran are in :attr:`Scheduler.phases` and :attr:`Scheduler.orchestrator_phases`
(§2's level-3 and level-4 records).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pypto.target import Target

from .orchestration import KernelPart, Task, TaskGraph
from .ready_queue import ReadyQueue


@dataclass
class TaskRecord:
    """When and where one task ran (cycles of the target clock ``clock_hz``).

    ``dispatch``: the scheduler hands the task to its core(s); ``start`` /
    ``end``: the kernel runs on the core; ``finish``: the scheduler sees it
    done (its successors may be dispatched from then on; for a task with deferred completion, the
    ``async_poll`` after its conditions held, later than its blocks' ``finish``). ``core_ids`` are the
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
    blocks: list[BlockRecord] = field(default_factory=list)
    """One entry per SPMD block, by block index (one for a plain task). The task's ``dispatch`` /
    ``start`` are its blocks' earliest, ``end`` / ``finish`` their latest, ``core_ids`` and
    ``kernel_runs`` theirs in block order."""

    @property
    def block_num(self) -> int:
        """How many blocks the task ran as (``pl.spmd(n)``; 1 for a plain task)."""
        return max(len(self.blocks), 1)

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
class BlockRecord:
    """One block of a task on its core(s): ``reg_ids`` the per-core dispatch number (1, 2, ... on each
    core; the swimlane's ``reg_task_id``), ``kernel_runs`` one per part."""

    block_idx: int
    core_ids: list[int]
    reg_ids: list[int]
    dispatch: int
    start: int
    end: int
    finish: int
    kernel_runs: list[Any] = field(default_factory=list)


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
    dispatches: int = 0


def make_cores(target: Target) -> list[Core]:
    """The target's AIC cores, then its AIV cores (``aiv_per_aic`` per cluster)."""
    n_aic, per = int(target.aic_cores), int(target.aiv_per_aic)
    cores = [Core(i, "aic", i) for i in range(n_aic)]
    cores += [Core(n_aic + i * per + j, "aiv", i) for i in range(n_aic) for j in range(per)]
    return cores


RunPart = Callable[[Task, KernelPart, int, int], Any]
"""Runs one kernel part as block ``block_idx`` of its task (of ``task.block_num``), starting at chip cycle
``start``, and returns its KernelRun (``.cycles``; ``.deferred``: its completion conditions, if any)."""


class Deferred(Protocol):
    """A completion condition a kernel registered (``pld.system.defer_wait``): its task is done only once
    it holds."""

    timeout_s: float

    def poll(self) -> int | None:
        """The chip cycle the condition held at, or None while it does not (never blocks)."""

    def timed_out(self, task: str) -> Exception:
        """The error to raise when it still does not hold after ``timeout_s`` (``task``: the task's name)."""


OrderParts = Callable[[Task], list[KernelPart] | None]
"""The order to interpret a task's parts in (they run together on the chip; a part that pops what
another pushes is interpreted after it); None: they push to each other, and run interleaved (``RunTogether``)."""

RunTogether = Callable[[Task, int, int], list[Any]]
"""``(task, block, start)``: the runs of a task's parts that push to each other (in ``task.parts`` order),
interpreted interleaved."""


QUEUES = ("aic", "aiv", "mix")
"""The shared ready queues, in the order of the records' queue depths."""


class Scheduler:
    """Dispatches the tasks of a :class:`TaskGraph` onto the target's cores through the AICPU model."""

    def __init__(
        self,
        target: Target,
        run_part: RunPart,
        order_parts: OrderParts | None = None,
        threads: int | None = None,
        run_together: RunTogether | None = None,
    ):
        self.target = target
        self.run_part = run_part
        self.order_parts = order_parts or (lambda task: list(task.parts))
        self.run_together = run_together
        self.cores = make_cores(target)
        self.latency = int(target.dispatch_latency_cycles)
        self.clock_hz = float(target.clock_hz)
        self.costs = target.aicpu
        self.threads = int(threads if threads is not None else self.costs.threads)
        if self.threads < 1:
            raise ValueError(f"aicpu_thread_num must be at least 1, got {self.threads}")
        self.core_to_thread = [c.cluster % self.threads for c in sorted(self.cores, key=lambda c: c.id)]
        self.phases: list[list[dict[str, Any]]] = [[] for _ in range(self.threads)]
        """Per scheduler thread, its phases (§2 ``aicpu_scheduler_phases`` records)."""
        self.orchestrator_phases: list[list[dict[str, Any]]] = [[]]
        """Per orchestrator thread (one), its submits (§2 ``aicpu_orchestrator_phases`` records)."""

    @staticmethod
    def _fit(task: Task, idle: list[Core]) -> list[Core] | None:
        """The lowest-numbered idle cores among ``idle`` that take ``task`` (None when none fit)."""
        if task.core_type in ("aic", "aiv"):
            for c in idle:
                if c.type == task.core_type:
                    return [c]
            return None
        n_aiv = sum(p.core_type == "aiv" for p in task.parts)
        n_aic = sum(p.core_type == "aic" for p in task.parts)
        for cluster in sorted({c.cluster for c in idle}):
            aic = [c for c in idle if c.cluster == cluster and c.type == "aic"]
            aiv = [c for c in idle if c.cluster == cluster and c.type == "aiv"]
            if len(aic) >= n_aic and len(aiv) >= n_aiv:
                return aic[:n_aic] + aiv[:n_aiv]
        return None

    def _launch(
        self, task: Task, block: int, cores: list[Core], dispatch: int, records: dict[int, TaskRecord]
    ) -> BlockRecord:
        """Block ``block`` of ``task`` on ``cores``, handed over at ``dispatch``: runs its parts and
        records it (the task's record is made by its first block, widened by the others); returns its record."""
        start = dispatch + self.latency
        order = self.order_parts(task)
        if order is None:  # the parts push to each other
            assert self.run_together is not None, f"{task.label}: its parts must run interleaved"
            runs = self.run_together(task, block, start)
        else:
            done = {id(part): self.run_part(task, part, block, start) for part in order}
            runs = [done[id(part)] for part in task.parts]
        end = start + max((int(r.cycles) for r in runs), default=0)
        regs = []
        for core in cores:
            core.busy_until = end
            core.kernel_cycles += end - start
            core.tasks.append(task.id)
            core.dispatches += 1
            regs.append(core.dispatches)
        b = BlockRecord(block, [c.id for c in cores], regs, dispatch, start, end, end, runs)
        rec = records.get(task.id)
        if rec is None:
            records[task.id] = TaskRecord(task.id, task.func_name, task.core_type, list(b.core_ids), dispatch, start,
                                          end, end, sorted(task.deps), self.clock_hz, list(runs),
                                          [p.func_name for p in task.parts], [b])  # fmt: skip
            return b
        rec.blocks.append(b)
        rec.core_ids += b.core_ids
        rec.kernel_runs += runs
        rec.start, rec.end = min(rec.start, start), max(rec.end, end)
        rec.finish = max(rec.finish, end)
        return b

    def _submit_times(self, graph: TaskGraph) -> dict[int, int]:
        """The orchestrator: each task's submit end (and its level-4 records). Before task *k*'s submit,
        one ``alloc`` step per ``tensor.create`` buffer it is the first to use (a record of its own,
        marked ``"kind": "alloc"``, with the submit's ``submit_idx`` and ``task_id``)."""
        costs, now = self.costs, 0
        allocated: set[int] = set()
        submitted: dict[int, int] = {}
        lane = self.orchestrator_phases[0]
        for idx, task in enumerate(graph.tasks):
            for p in task.parts:
                for a in p.args:
                    buf = a.buffer
                    if buf is None or not buf.origin.startswith("tensor.create") or id(buf) in allocated:
                        continue
                    allocated.add(id(buf))
                    lane.append({"submit_idx": idx, "task_id": task.id, "start_cycles": now,
                                 "end_cycles": now + costs.alloc, "kind": "alloc"})  # fmt: skip
                    now += costs.alloc
            lane.append({"submit_idx": idx, "task_id": task.id, "start_cycles": now, "end_cycles": now + costs.submit})
            submitted[task.id] = now = now + costs.submit
        return submitted

    def run(self, graph: TaskGraph) -> list[TaskRecord]:
        """Simulate the whole graph; returns one record per task (by task id)."""
        costs = self.costs
        tasks = {t.id: t for t in graph.tasks}
        succ = graph.successors()
        waiting = {t.id: len(t.deps) for t in graph.tasks}
        submitted = self._submit_times(graph)
        kinds = {t.id: (t.core_type, tuple(sorted(p.core_type for p in t.parts))) for t in graph.tasks}
        queue_index = {t.id: QUEUES.index(t.core_type if t.core_type in QUEUES[:2] else "mix") for t in graph.tasks}
        visible = ReadyQueue(kinds, queue_index, len(QUEUES))  # the ready queue: task id -> visible cycle
        for tid, n in waiting.items():
            if n == 0:
                visible[tid] = submitted[tid]
        next_block = {t.id: 0 for t in graph.tasks}  # the next block of each task to dispatch
        unfinished = {t.id: t.block_num for t in graph.tasks}  # blocks not yet retired
        running: list[dict[tuple[int, int], BlockRecord]] = [{} for _ in range(self.threads)]  # per thread: (task id, block) -> its record
        records: dict[int, TaskRecord] = {}
        busy: dict[int, int] = {}  # core id -> the task on it (until its complete phase)
        own = [[c for c in self.cores if self.core_to_thread[c.id] == i] for i in range(self.threads)]
        free_at = [0] * self.threads
        loops = [0] * self.threads
        pending: dict[int, list[Deferred]] = {}  # deferred completion: task id -> its conditions not yet held
        held_at: dict[int, int] = {}  # task id -> the cycle its conditions held (not before its last block retired)
        owner: dict[int, int] = {}  # task id -> the thread that retired its last block (polls it)
        polled: dict[int, int] = {}  # task id -> the cycle it can be completed at (all its conditions held)
        self._check_placeable(graph, own)

        def poll() -> bool:
            """Poll the pending conditions (never blocks); True when a task's conditions now all hold."""
            got = False
            for tid in sorted(pending):
                left_ = []
                for cond in pending[tid]:
                    at = cond.poll()
                    if at is None:
                        left_.append(cond)
                    else:
                        held_at[tid] = max(held_at[tid], int(at))
                pending[tid] = left_
                if not left_:
                    del pending[tid]
                    polled[tid], got = held_at[tid], True
            return got

        def block_on_deferred() -> None:
            """Nothing else can run: wait (wall time, bounded) until a deferred task's conditions hold."""
            deadline = time.monotonic() + min(c.timeout_s for conds in pending.values() for c in conds)
            pause = 0.0005
            while not poll():
                if time.monotonic() > deadline:
                    tid = min(pending)
                    raise pending[tid][0].timed_out(f"task {tasks[tid].label} (@{tasks[tid].func_name})")
                time.sleep(pause)
                pause = min(pause * 2, 0.01)

        depths = visible.depths

        def idle(i: int) -> list[Core]:
            return [c for c in own[i] if c.id not in busy]

        def placement(tid: int, free: list[Core]) -> list[list[Core]]:
            """The cores of the blocks of ``tid`` that fit ``free`` now (all its blocks or none for
            ``sync_start``)."""
            task, free, out = tasks[tid], list(free), []
            for _ in range(task.block_num - next_block[tid]):
                cores = self._fit(task, free)
                if cores is None:
                    break
                out.append(cores)
                free = [c for c in free if c not in cores]
            if task.sync_start and len(out) < task.block_num - next_block[tid]:
                return []
            return out

        sync_tasks = [t.id for t in graph.tasks if t.sync_start]  # the only tasks that can hold others

        def overlap(a: Task, b: Task) -> bool:
            return "mix" in (a.core_type, b.core_type) or a.core_type == b.core_type

        def held(i: int, tid: int, free: list[Core]) -> bool:
            """A drain holds ``tid``: an earlier ``sync_start`` task in the queue competes for its core type
            and does not fit ``free`` yet, although it would fit the thread's cores once they are idle."""
            return any(
                s < tid and s in visible and overlap(tasks[s], tasks[tid]) and not placement(s, free)
                and placement(s, own[i]) for s in sync_tasks
            )  # fmt: skip

        by_kind = {kinds[t.id]: t for t in graph.tasks}  # one task of each kind

        def kind_fits(kind: Any, free: list[Core]) -> bool:
            """A task of ``kind`` (none with ``sync_start``) fits ``free``: one block of it does."""
            return self._fit(by_kind[kind], free) is not None

        def next_action(i: int) -> int | None:
            times = [b.end for b in running[i].values()]
            times += [at for tid, at in polled.items() if owner[tid] == i]
            free = idle(i)
            if sync_tasks:
                times += [v for tid, v in visible.items() if placement(tid, free) and not held(i, tid, free)]
            else:  # nothing can hold a task: the earliest visible of each kind that fits
                for kind in visible.kinds():
                    at = visible.earliest(kind)
                    if at is not None and kind_fits(kind, free):
                        times.append(at)
            return max(free_at[i], min(times)) if times else None

        def phase(i: int, kind: str, start: int, end: int, n: int, at_start: list[int], **extra: int) -> None:
            rec: dict[str, Any] = {"kind": kind, "start_cycles": start, "end_cycles": end, "loop_iter": loops[i],
                                   "tasks_processed": n}  # fmt: skip
            rec.update(extra)
            rec["shared_at_start"], rec["shared_at_end"] = at_start, depths(end)
            self.phases[i].append(rec)

        def launch(i: int, tid: int, cores: list[Core], at: int) -> None:
            """Start the next block of ``tid`` on ``cores`` at cycle ``at``, run by thread ``i``."""
            block = next_block[tid]
            next_block[tid] += 1
            for c in cores:
                busy[c.id] = tid
            running[i][(tid, block)] = self._launch(tasks[tid], block, cores, at, records)

        left = sum(1 for n in unfinished.values() if n)  # tasks not yet done
        while left:
            if pending:
                poll()
            actions = [(t, i) for i in range(self.threads) if (t := next_action(i)) is not None]
            if not actions and pending:
                block_on_deferred()
                continue
            if not actions:
                missing = sorted(t for t, n in unfinished.items() if n)
                raise RuntimeError(f"tasks {missing} never became ready (a dependency cycle)")
            now, i = min(actions)
            loops[i] += 1
            done = sorted((b.end, k) for k, b in running[i].items() if b.end <= now)
            retired: list[int] = []
            if done:
                end = now + costs.complete * len(done)
                phase(i, "complete", now, end, len(done), depths(now))
                for _, key in done:
                    tid = key[0]
                    b = running[i].pop(key)
                    b.finish = now
                    for c in b.core_ids:
                        del busy[c]
                        self.cores[c].busy_cycles += b.finish - b.dispatch
                    unfinished[tid] -= 1
                    conds = [d for r in records[tid].kernel_runs for d in getattr(r, "deferred", ())]
                    if not unfinished[tid] and conds:  # its last block, but its completion is deferred
                        pending[tid], held_at[tid], owner[tid] = conds, now, i
                    elif not unfinished[tid]:  # its last block: the task is done
                        left -= 1
                        records[tid].finish = now
                        retired.append(tid)
                now = end
            ready = sorted(tid for tid, at in polled.items() if owner[tid] == i and at <= now)
            if ready:  # deferred tasks whose conditions held: done now
                end = now + costs.complete * len(ready)
                phase(i, "async_poll", now, end, len(ready), depths(now))
                for tid in ready:
                    del polled[tid]
                    left -= 1
                    records[tid].finish = now
                    retired.append(tid)
                now = end
            if retired:
                edges = [s for tid in retired for s in succ[tid]]
                end = now + costs.release * len(edges)
                at_start, made = depths(now), 0
                for s in edges:
                    waiting[s] -= 1
                    if waiting[s] == 0:
                        visible[s] = max(end, submitted[s])
                        made += 1
                if edges:
                    phase(i, "release", now, end, made, at_start)
                now = end
            for tid in sorted(t for t, v in visible.items() if v <= now and tasks[t].sync_start) if sync_tasks else ():
                fits = placement(tid, idle(i))
                if not fits:
                    continue
                # drain: reserve the idle cores of every block (drain_prepare), then publish them all at
                # once (drain_publish, one dispatch each): the blocks are dispatched together and co-start
                at_start, start = depths(now), now
                ready = now + costs.drain
                now = ready + costs.dispatch * len(fits)
                for cores in fits:
                    launch(i, tid, cores, now)
                del visible[tid]
                phase(i, "drain", start, now, len(fits), at_start)
                phase(i, "drain_prepare", start, ready, len(fits), at_start)
                phase(i, "drain_publish", ready, now, len(fits), depths(ready))
            at_start, start, hit, miss = depths(now), now, 0, 0
            if not sync_tasks:  # in task id order, the first visible task whose kind fits the idle cores
                taken = 0
                while True:
                    free = idle(i)
                    tid = visible.first_ready(start, lambda kind, free=free: kind_fits(kind, free))
                    if tid is None:
                        break
                    taken += 1
                    for cores in placement(tid, free):
                        now += costs.dispatch
                        launch(i, tid, cores, now)
                        hit += 1
                    if next_block[tid] == tasks[tid].block_num:
                        del visible[tid]
                miss = sum(at_start) - taken  # every other task visible at the start did not fit
                if hit:
                    phase(i, "dispatch", start, now, hit, at_start, pop_hit=hit, pop_miss=miss)
                free_at[i] = now
                continue
            for tid in sorted(t for t, v in visible.items() if v <= start):
                free = idle(i)
                fits_ = placement(tid, free) if not tasks[tid].sync_start and not held(i, tid, free) else []
                if not fits_:
                    miss += 1
                    continue
                for cores in fits_:
                    now += costs.dispatch
                    launch(i, tid, cores, now)
                    hit += 1
                if next_block[tid] == tasks[tid].block_num:
                    del visible[tid]
            if hit:
                phase(i, "dispatch", start, now, hit, at_start, pop_hit=hit, pop_miss=miss)
            free_at[i] = now
        return [records[t] for t in sorted(records)]

    def _check_placeable(self, graph: TaskGraph, own: list[list[Core]]) -> None:
        """Every task fits the cores of some thread (a ``sync_start`` task: all its blocks at once)."""
        placeable: set[tuple[Any, ...]] = set()  # tasks alike (core type, parts' cores, blocks at once) fit alike
        for task in graph.tasks:
            need = task.block_num if task.sync_start else 1
            key = (task.core_type, need, tuple(sorted(p.core_type for p in task.parts)))
            if key in placeable:
                continue
            ok = False
            for cores in own:
                free, n = list(cores), 0
                while n < need and (fit := self._fit(task, free)) is not None:
                    free = [c for c in free if c not in fit]
                    n += 1
                ok = ok or n >= need
            if not ok:
                what = f"{need} blocks at once (sync_start)" if need > 1 else "one block"
                raise RuntimeError(
                    f"task {task.label} ({task.core_type}) cannot be placed on this target's cores: "
                    f"no AICPU thread owns idle cores for {what}"
                )
            placeable.add(key)

    def per_core_cycles(self) -> dict[int, int]:
        """Kernel cycles (sum of ``end - start``) per core that ran something."""
        return {c.id: c.kernel_cycles for c in self.cores if c.tasks}

    def per_core_busy(self) -> dict[int, int]:
        """Occupied cycles (dispatch to finish, latency included) per core that ran something."""
        return {c.id: c.busy_cycles for c in self.cores if c.tasks}

    def core_types(self) -> list[str]:
        """``"aic"`` / ``"aiv"`` by core id (the swimlane's ``core_types``)."""
        return [c.type for c in sorted(self.cores, key=lambda c: c.id)]
