"""Deferred completion (``pld.system.defer_wait``) in a per-rank program's torch form.

On the simulated chip the scheduler defers a task (:mod:`pypto.runtime.scheduler`). A torch form is a
script whose orchestration runs its tasks in program order; :class:`DeferredTasks`, its ``_pld``, keeps
the deferral there:

- ``_pld.defer_wait`` registers its condition on the running task and returns: the kernel goes on to its
  end (its core is free), the task stays incomplete until the condition holds;
- each scope of the orchestration is a function the script hands to ``_pld.run_task(label, deps, manual,
  fn, holders)``, which runs it at once unless a task it depends on is incomplete: then it is postponed
  (the script goes on with the next tasks, e.g. the publisher the condition waits for; ``holders``, the
  buffers the scope writes in place, stand for its results) and runs as soon as those tasks completed;
- a task depends, in a ``pl.manual_scope``, on the tasks its ``deps=`` name (the latest task with each
  handle); outside one, on every incomplete task (the torch form does not track which tensors a task
  touches, where the chip infers those dependencies; upstream's deferred programs use manual scopes);
- a kernel call of the orchestration (``_pld.task``), or a scope whose results are not buffers it writes
  in place (``holders`` None), cannot be postponed: it waits for its dependencies there;
- the program's end completes everything (a chip run ends when all its tasks are done).

Completing a deferred task moves the rank's clock to the time the notifies that satisfy it landed (a
``defer_wait`` event from the registration to the landing); waiting is bounded by ``timeout_s``, and a
signal that never comes is a :class:`~.comm.DistributedRankError` naming the task and the cell.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pypto.dialects.distributed_enums import WaitCmp, compare


@dataclass
class _Condition:
    """A deferred task's condition: cell ``slot`` of the store signal ``signal``, registered at cycle ``at``."""

    signal: str
    slot: int
    expected: int
    cmp: WaitCmp
    at: int


@dataclass
class _Task:
    number: int
    label: str | None
    fn: Callable[[], Any] | None = None
    """Not run yet (postponed) while set."""
    after: set[int] = field(default_factory=set)
    conditions: list[_Condition] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"t{self.number}" + (f" ({self.label})" if self.label else "")


class DeferredTasks:
    """A rank's :class:`~.windows.KernelComm` with deferred completion (the module docstring); every other
    ``_pld`` call goes to the wrapped one."""

    def __init__(self, kernel_comm: Any):
        self.kernel_comm = kernel_comm
        self.incomplete: dict[int, _Task] = {}  # postponed, or run with conditions that do not hold yet
        self._latest: dict[str, int] = {}  # task handle label -> the number of the latest task with it
        self._count = 0
        self._running: _Task | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel_comm, name)

    # ---- what the script calls ---------------------------------------------------------------

    def run_task(self, label: str | None, deps: Sequence[str], manual: bool, fn: Callable[[], Any],
                 holders: tuple[Any, ...] | None) -> Any:
        """A scope of the orchestration: run ``fn`` now, or postpone it while a task it depends on is
        incomplete (its results are then ``holders``)."""
        task = self._new(label, deps, manual)
        if task.after and holders is not None:
            task.fn = fn
            self.incomplete[task.number] = task
            self.progress()
            return holders
        self.wait_for(task.after, f"task {task.name} (it cannot be postponed)")
        results = self._run(task, fn)
        self.progress()
        return results

    def task(self, label: str | None, deps: Sequence[str], manual: bool) -> None:
        """A kernel call of the orchestration starts (it cannot be postponed): wait for its dependencies."""
        task = self._new(label, deps, manual)
        self.wait_for(task.after, f"task {task.name}")
        self._running = task

    def defer_wait(self, signal: Any, offsets: Sequence[int], expected: int | None = 1, cmp: str = "Ge") -> Any:
        """Register the running task's completion condition and return at once."""
        from .windows import _flat

        task = self._running or self._new(None, (), True)
        b, _ = self.kernel_comm.windows.locate(signal)
        self.kernel_comm.comm.stop_tracking()  # its completion is taken as the notifies arrive (comm.tracked)
        task.conditions.append(_Condition(f"w{b}", _flat(signal, offsets), 1 if expected is None else int(expected),
                                          WaitCmp(cmp), self.kernel_comm.comm.clock))
        self.incomplete[task.number] = task
        return signal

    def finish(self) -> None:
        """The program's end: complete every task."""
        self.wait_for(set(self.incomplete), "the program's end")

    # ---- scheduling ----------------------------------------------------------------------------

    def _new(self, label: str | None, deps: Sequence[str], manual: bool) -> _Task:
        self._count += 1
        task = _Task(self._count, label)
        if manual:
            task.after = {n for n in (self._latest.get(d) for d in deps) if n in self.incomplete}
        else:
            task.after = set(self.incomplete)
        if label is not None:
            self._latest[label] = task.number
        return task

    def _run(self, task: _Task, fn: Callable[[], Any]) -> Any:
        previous, self._running = self._running, task
        try:
            return fn()
        finally:
            self._running = previous
            task.fn = None

    def progress(self) -> bool:
        """Complete the deferred tasks whose conditions hold now and run the postponed tasks whose
        dependencies completed (in program order), until nothing changes; whether anything did."""
        any_change = False
        while True:
            changed = False
            for task in sorted(self.incomplete.values(), key=lambda t: t.number):
                if task.number not in self.incomplete:
                    continue
                if task.fn is not None:
                    if task.after & self.incomplete.keys():
                        continue
                    self._run(task, task.fn)
                    changed = True
                if all(self._holds(c) for c in task.conditions):
                    self._complete(task)
                    changed = True
            if not changed:
                return any_change
            any_change = True

    def _holds(self, c: _Condition) -> bool:
        return compare(c.cmp, self.kernel_comm.comm.signal_value(c.signal, c.slot), c.expected)

    def _complete(self, task: _Task) -> None:
        comm = self.kernel_comm.comm
        for c in task.conditions:
            comm.clock = max(comm.clock, comm.landed(c.signal, c.slot, c.expected, c.cmp, c.at, "defer_wait"))
        del self.incomplete[task.number]

    def wait_for(self, numbers: set[int], what: str) -> None:
        """Block until the tasks ``numbers`` completed (bounded by ``timeout_s``), running what becomes ready."""
        comm = self.kernel_comm.comm
        deadline, pause = time.monotonic() + comm.timeout_s, 0.0005
        while numbers & self.incomplete.keys():
            if self.progress():
                continue
            if time.monotonic() > deadline:
                raise self._timeout(numbers, what)
            time.sleep(pause)
            pause = min(pause * 2, 0.01)

    def _timeout(self, numbers: set[int], what: str) -> Exception:
        comm = self.kernel_comm.comm
        for n in sorted(numbers & set(self.incomplete)):
            task = self.incomplete[n]
            for c in task.conditions:
                have = comm.signal_value(c.signal, c.slot)
                if not compare(c.cmp, have, c.expected):
                    return comm.wait_timeout(c.signal, c.slot, c.expected, c.cmp, have,
                                             f"task {task.name}: deferred wait (for {what})")
        return comm.error(f"{what}: tasks {sorted(numbers & set(self.incomplete))} did not complete within "
                          f"{comm.timeout_s:g} s")
