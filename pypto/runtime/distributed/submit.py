"""Asynchronous dispatch on a prepared worker: ``rt.submit`` handles and the order of rank operations.

- :class:`DistributedRunHandle` -- what ``rt.submit(compiled, *args)`` returns at once (upstream's
  ``result(timeout)`` / ``wait(timeout)`` / ``done``): the dispatch runs on a driver thread of the worker.
- :class:`Turnstile` -- the rank processes serve one operation at a time (a plan segment, a resident-tensor
  copy); a :class:`Turn` reserved when the operation is asked for gives them in that order (FIFO), so
  submits reach the ranks in submit order however their driver threads are scheduled.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Turn:
    """One place in a :class:`Turnstile`'s queue (``acquire`` waits for it; ``release`` or ``cancel`` ends it)."""

    def __init__(self, gate: Turnstile, number: int):
        self.gate, self.number = gate, number
        self.held = False

    def acquire(self) -> None:
        """Wait until every earlier turn ended (idempotent while held)."""
        if not self.held:
            self.gate._acquire(self)
            self.held = True

    def release(self) -> None:
        """End this turn (whether or not it was acquired); the next one may go."""
        self.held = False
        self.gate._end(self)


class Turnstile:
    """A FIFO lock whose places are reserved ahead (:meth:`reserve`) and taken later, on any thread."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._next = 0
        self._serving = 0
        self._ended: set[int] = set()

    def reserve(self) -> Turn:
        with self._cv:
            turn = Turn(self, self._next)
            self._next += 1
            return turn

    @contextmanager
    def turn(self) -> Iterator[Turn]:
        """A new turn, taken now and ended on leaving."""
        t = self.reserve()
        t.acquire()
        try:
            yield t
        finally:
            t.release()

    def _acquire(self, turn: Turn) -> None:
        with self._cv:
            self._cv.wait_for(lambda: self._serving == turn.number)

    def _end(self, turn: Turn) -> None:
        with self._cv:
            if turn.number < self._serving or turn.number in self._ended:
                return
            self._ended.add(turn.number)
            while self._serving in self._ended:
                self._ended.discard(self._serving)
                self._serving += 1
            self._cv.notify_all()


class DistributedRunHandle:
    """The completion of one ``rt.submit`` (upstream's handle): ``result(timeout)`` / ``wait(timeout)`` block
    until the dispatch ended and re-raise its error (every call the same cached outcome); ``done`` never
    blocks. An error no caller asked for is raised by the worker's ``close()``."""

    def __init__(self, dispatch_id: int = 0, resident_ids: frozenset[int] = frozenset()):
        self.dispatch_id = dispatch_id
        self.resident_ids = resident_ids
        """The worker-resident tensors the dispatch uses (kept valid until it ends)."""
        self._event = threading.Event()
        self._error: BaseException | None = None
        self.observed = False
        """Whether a caller asked for the outcome (``result`` / ``wait``)."""

    @classmethod
    def completed(cls, error: BaseException | None = None) -> DistributedRunHandle:
        """A handle whose dispatch already ended (a torchrun worker's dispatches run when submitted)."""
        handle = cls()
        handle._finish(error)
        return handle

    def _finish(self, error: BaseException | None) -> None:
        self._error = error
        self._event.set()

    @property
    def done(self) -> bool:
        """Whether the dispatch ended (successfully or not)."""
        return self._event.is_set()

    def result(self, timeout: float | None = None) -> None:
        """Wait (at most ``timeout`` seconds; None: until it ends) and raise the dispatch's error, if any.
        ``TimeoutError`` when it has not ended by then; ``ValueError`` for a negative or infinite timeout."""
        if timeout is not None:
            timeout = float(timeout)
            if timeout < 0 or not math.isfinite(timeout):
                raise ValueError("DistributedRunHandle timeout must be a non-negative finite number of seconds")
        if not self._event.wait(timeout):
            raise TimeoutError("DistributedRunHandle.result() timed out")
        self.observed = True
        if self._error is not None:
            raise self._error

    def wait(self, timeout: float | None = None) -> None:
        """Upstream's alias of :meth:`result`."""
        self.result(timeout)

    def __repr__(self) -> str:
        state = "running" if not self.done else "failed" if self._error is not None else "done"
        return f"<DistributedRunHandle #{self.dispatch_id} {state}>"

    def _ended(self) -> None:
        """Wait until the dispatch ended, without taking its outcome."""
        self._event.wait()
