"""Parts that push to and pop from each other's pipes, run interleaved (one mechanism for the device model
and the torch code of ``pypto.debug.torch_codegen``, whose scripts inline :class:`Interleaved`'s source).

A mixed kernel whose cube part pops what its vector part pushed and the other way round (attention's
``q @ k.T`` -> softmax -> ``p @ v`` in one scope) cannot run its parts one after the other. Each part runs in
a thread of its own, but only one runs at a time: a part goes on until it pops a pipe that holds nothing yet,
then hands over to the next part that can go on (it has not started, or what it waits for has been pushed).
The order is fixed (the parts in turn, from the first), so a run is deterministic, and the simulated timing
does not depend on it: a pop starts no earlier than its push ended (``tpop``'s ``not_before``). When every
unfinished part waits on an empty pipe, none ever will be pushed: the ``error`` class given (the device
model's ``DeviceError``).

The class uses nothing but ``threading`` (imported inside it), so its source stands alone in a generated
script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class Interleaved:
    """Runs ``parts`` (each a callable running one kernel part, whose pops of an empty pipe call :meth:`wait`)
    cooperatively: :meth:`run`. A deadlock raises ``error`` in each waiting part, and from :meth:`run`."""

    def __init__(self, names: Sequence[str], error: type[Exception] = RuntimeError):
        import threading

        self.names = list(names)
        self.error = error
        self._cond = threading.Condition()
        self._turn: int | None = None
        self._done = [False] * len(names)
        self._waiting: list[Any] = [None] * len(names)
        self._raised: list[BaseException] = []
        self._deadlock: str | None = None
        self._current = threading.local()

    def run(self, parts: Sequence[Callable[[], Any]]) -> list[Any]:
        """Each part's result, in order (the first part's error, if one raised: the one the run stopped at; a
        deadlock's only when no part raised another)."""
        import threading

        results: list[Any] = [None] * len(parts)
        errors: list[BaseException | None] = [None] * len(parts)
        deadlocked: list[bool] = [False] * len(parts)

        def body(i: int) -> None:
            self._current.index = i
            with self._cond:
                self._cond.wait_for(lambda: self._turn == i)
            try:
                results[i] = parts[i]()
            except BaseException as e:  # noqa: BLE001 -- handed to the caller's thread
                errors[i], deadlocked[i] = e, self._from_deadlock(e)
            with self._cond:
                self._done[i] = True
                self._hand_over(i)

        threads = [threading.Thread(target=body, args=(i,), name=f"pypto-part-{n}", daemon=True)
                   for i, n in enumerate(self.names)]  # fmt: skip
        for t in threads:
            t.start()
        with self._cond:
            self._turn = 0
            self._cond.notify_all()
        for t in threads:
            t.join()
        first = next((e for e, d in zip(errors, deadlocked, strict=True) if e is not None and not d), None)
        if first is None:
            first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return results

    def _from_deadlock(self, e: BaseException | None) -> bool:
        """``e`` is (or was raised from: a part's runner wraps its errors) a deadlock :meth:`wait` raised."""
        seen: set[int] = set()
        while e is not None and id(e) not in seen:
            if any(e is r for r in self._raised):
                return True
            seen.add(id(e))
            e = e.__cause__ or e.__context__
        return False

    def wait(self, queue: Any) -> None:
        """Called by a part popping the empty pipe ``queue`` (a deque or list): hand over, and return once it
        holds a tile and this part's turn has come again (``error`` when no part can push one)."""
        i = self._current.index
        with self._cond:
            self._waiting[i] = queue
            self._hand_over(i)
            self._cond.wait_for(lambda: self._turn == i or self._deadlock is not None)
            self._waiting[i] = None
            if self._turn != i and self._deadlock is not None:
                self._raised.append(self.error(self._deadlock))
                raise self._raised[-1]

    def _hand_over(self, i: int) -> None:
        """Give the turn to the next part after ``i`` that can go on (under the lock); none: a deadlock,
        every waiting part is woken to raise it."""
        n = len(self.names)
        for k in range(1, n + 1):
            j = (i + k) % n
            if self._done[j]:
                continue
            waits = self._waiting[j]
            if waits is None or waits:
                self._turn = j
                self._cond.notify_all()
                return
        self._turn = None
        if not all(self._done) and self._deadlock is None:
            stuck = ", ".join(f"@{self.names[j]}" for j in range(n) if not self._done[j])
            self._deadlock = (f"{stuck} each pop a pipe the other parts pushed nothing (more) to: the parts of "
                              "the task wait for each other")  # fmt: skip
            self._cond.notify_all()

