"""The lattice of the insert-sync analysis and its transfer functions.

State at a program point (all sets are of :class:`~.access.Access`):

- ``issued``: accesses that may have been issued on some path;
- ``pending[Q]``: accesses of pipes other than Q not yet known complete before
  the next op of pipe Q;
- ``same[Q]``: accesses of pipe Q issued since the last ``pipe_barrier(Q)``
  and not known complete (same-pipe hazards on on-chip buffers need a barrier);
- ``events[(P, Q, e)]``: for an event set and not yet waited, the accesses
  known complete when it fires.

The sets are :class:`~.access_set.AccessSet` bit sets over one :class:`~.access_set.AccessIndex` per
analysis (every state derived from one initial state shares it), so a transfer costs machine words,
not one step per access issued so far.

Join (control-flow merge) is union for ``issued`` / ``pending`` / ``same``
(an access pending on any path is pending) and intersection for the event
payloads (an event's guarantee must hold on every path), where an access
never issued on one path counts as complete there (a prologue ``set_flag``
before a loop guarantees nothing of the body, yet nothing of it is in flight
on the entry path). Issuing an access removes it from every in-flight
payload (accesses are per op: the payload held that op's earlier instance,
e.g. the previous iteration's). The lattice is finite (accesses are per op
and operand), so the loop fixpoint terminates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ptoas.dialect.attrs import Pipe

from .access import GM, Access
from .access_set import EMPTY, AccessIndex, AccessSet

PIPES: tuple[Pipe, ...] = (
    Pipe.PIPE_S,
    Pipe.PIPE_V,
    Pipe.PIPE_M,
    Pipe.PIPE_MTE1,
    Pipe.PIPE_MTE2,
    Pipe.PIPE_MTE3,
    Pipe.PIPE_FIX,
    Pipe.PIPE_V2,
    Pipe.PIPE_MTE4,
    Pipe.PIPE_MTE5,
)
"""Hardware pipes whose order the analysis tracks."""

EventKey = tuple[Pipe, Pipe, int]
Accesses = AccessSet


@dataclass
class SyncState:
    """One program point's facts (see the module docstring)."""

    issued: Accesses = EMPTY
    pending: dict[Pipe, Accesses] = field(default_factory=dict)
    same: dict[Pipe, Accesses] = field(default_factory=dict)
    events: dict[EventKey, Accesses] = field(default_factory=dict)
    index: AccessIndex = field(default_factory=AccessIndex)

    def copy(self) -> SyncState:
        """An independent copy (the sets themselves are immutable)."""
        return SyncState(self.issued, dict(self.pending), dict(self.same), dict(self.events), self.index)

    def key(self) -> tuple[object, ...]:
        """A comparable snapshot (fixpoint detection)."""

        def norm(d: dict) -> frozenset:  # type: ignore[type-arg]
            return frozenset((k, v) for k, v in d.items() if v or isinstance(k, tuple))

        return (self.issued, norm(self.pending), norm(self.same), frozenset(self.events.items()))

    def pend(self, pipe: Pipe) -> Accesses:
        """``pending[pipe]``."""
        return self.pending.get(pipe, EMPTY)

    # ---- transfer functions -------------------------------------------------------

    def set_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        """``set_flag(src, dst, e)`` fires once every earlier op of ``src`` is done."""
        self.events[(src, dst, event)] = self.issued - self.pend(src)

    def wait_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        """``wait_flag(src, dst, e)``: later ``dst`` ops see what the event guarantees."""
        done = self.events.pop((src, dst, event), EMPTY)
        self.pending[dst] = self.pend(dst) - done
        self.same[dst] = self.same.get(dst, EMPTY) - done

    def barrier(self, pipe: Pipe) -> None:
        """``pipe_barrier(pipe)`` (PIPE_ALL: every pipe drains)."""
        if pipe == Pipe.PIPE_ALL:
            self.pending.clear()
            self.same.clear()
        else:
            self.same[pipe] = EMPTY

    def issue(self, pipe: Pipe, acc: list[Access]) -> None:
        """An op of ``pipe`` with these accesses has been issued."""
        new = AccessSet.of(acc, self.index)
        self.issued |= new
        # an event set before this op cannot guarantee this (re-)issued access:
        # accesses are per op, so the payload held the op's earlier instance
        for key, done in self.events.items():
            if done & new:
                self.events[key] = done - new
        # pipes holding the same pending set (the idle ones) share one union; the old set is kept in
        # the memo so its id stays its own
        grown: dict[int, tuple[Accesses, Accesses]] = {}
        pending = self.pending
        for other in PIPES:
            if other != pipe:
                old = pending.get(other, EMPTY)
                got = grown.get(id(old))
                if got is None:
                    got = grown[id(old)] = (old, old | new)
                pending[other] = got[1]
        self.same[pipe] = self.same.get(pipe, EMPTY) | new

    # ---- queries ------------------------------------------------------------------

    def cross_conflicts(self, pipe: Pipe, acc: list[Access]) -> list[Access]:
        """Pending accesses of other pipes that conflict with ``acc`` (need a flag pair)."""
        return [a for a in self.pend(pipe) if any(a.conflicts(b) for b in acc)]

    def same_conflicts(self, pipe: Pipe, acc: list[Access]) -> bool:
        """Whether an in-flight on-chip access of the same pipe conflicts with ``acc`` (GM DMA stays in order)."""
        return any(a.conflicts(b) for a in self.same.get(pipe, EMPTY) for b in acc if b.buffer.space != GM)

    def free_event(self, src: Pipe, dst: Pipe) -> int | None:
        """The smallest event id of the pair not in flight (None: all 8 busy)."""
        busy = {e for (s, d, e) in self.events if (s, d) == (src, dst)}
        return next((e for e in range(8) if e not in busy), None)


def join(a: SyncState, b: SyncState) -> SyncState:
    """Merge two paths."""
    pending = {p: a.pend(p) | b.pend(p) for p in set(a.pending) | set(b.pending)}
    same = {p: a.same.get(p, EMPTY) | b.same.get(p, EMPTY) for p in set(a.same) | set(b.same)}
    events: dict[EventKey, Accesses] = {}
    for k in set(a.events) | set(b.events):
        if k in a.events and k in b.events:
            # guaranteed on each path, or never issued on it (vacuously complete there)
            pa, pb = a.events[k], b.events[k]
            events[k] = (pa & pb) | (pa - b.issued) | (pb - a.issued)
        else:
            events[k] = EMPTY
    return SyncState(a.issued | b.issued, pending, same, events, a.index)
