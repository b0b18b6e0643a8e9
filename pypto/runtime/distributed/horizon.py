"""When a wait's simulated clock is final: the conservative (Chandy-Misra) rule of :meth:`.comm.RankComm.wait`.

A wait on a signal cell ends at the first simulated time its condition holds over **every** notify that will
ever reach the cell, not only those that arrived in host time. Each rank publishes on the store a *floor*: a
lower bound on the cycle at which it issues any notify from now on (:class:`RankState`; ``inf``: it sends
none that this rule tracks). A notify of another rank's cell lands a link hop after it is issued (the
lookahead ``hop``), so a waiter whose condition first holds at ``t`` over the notifies it has seen may settle
at ``t`` once every other rank's floor is at least ``t - hop``.

A rank blocked in a wait publishes the wait itself (its signal cell and condition) with the cycle it started
at; any rank can then bound that rank's floor from the cell's notifies and the others' floors
(:func:`issue_floors`: the least fixpoint of ``floor_r = max(start_r, min(first_r, min_{s != r} floor_s +
hop))``, ``first_r`` the time its condition first holds over the notifies seen), so two ranks waiting on each
other settle in one poll, without rounds of null messages.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pypto.dialects.distributed_enums import NotifyOp, WaitCmp, compare

INF = math.inf


@dataclass(frozen=True)
class RankState:
    """What a rank published: ``floor``, a lower bound on the cycle of every notify it issues from now on
    (``inf``: none tracked: it finished, or runs outside the tracked class); ``wait``: the wait it is blocked in
    (``signal``, ``slot``, ``expected``, ``cmp``), None when it is not blocked in one (``floor`` is then its
    clock, which only grows); when blocked, ``floor`` is the cycle the wait started at. A rank blocked in a
    receive cannot go on before its sender sends: when that message was not sent yet, its floor follows the
    sender's plus the receive's hop."""

    floor: float
    wait: tuple[str, int, int, str] | None = None
    recv: tuple[int, int, int] | None = None
    """Blocked in a receive instead: (the sender, the message's number from it, the receive's hop in cycles)."""
    sent: tuple[int, ...] = ()
    """Messages sent to each rank so far (a receive's message not among them comes after ``floor``)."""


Entry = tuple[float, int, str, str]
"""A notify of a cell: (the cycle it lands, its value, its NotifyOp value, its flow id)."""


def first_hold(entries: Iterable[Entry], expected: int, cmp: WaitCmp | str, start: float) -> tuple[float, int, list[str]]:
    """The first simulated time not before ``start`` at which the cell (0, then ``entries`` taken in landing
    order) compares ``cmp`` with ``expected`` (``inf``: never over these notifies), the cell's value then and
    the flow ids of the notifies taken up to then."""
    value, used = 0, []
    ordered = sorted(entries)
    k = 0
    while k < len(ordered) and ordered[k][0] <= start:  # the cell as the wait finds it
        t, v, op, fid = ordered[k]
        value = value + v if op == NotifyOp.AtomicAdd.value else v
        used.append(fid)
        k += 1
    if compare(cmp, value, expected):
        return start, value, used
    for t, v, op, fid in ordered[k:]:
        value = value + v if op == NotifyOp.AtomicAdd.value else v
        used.append(fid)
        if compare(cmp, value, expected):
            return t, value, used
    return INF, value, used


def monotone(entries: Iterable[Entry], cmp: WaitCmp | str) -> bool:
    """Once it holds, later notifies cannot undo it: a ``Ge`` / ``Gt`` wait on a cell that only non-negative
    AtomicAdds reached (ASSUMPTION: a cell's later notifies are of the same kind)."""
    return WaitCmp(cmp) in (WaitCmp.Ge, WaitCmp.Gt) and all(
        op == NotifyOp.AtomicAdd.value and v >= 0 for _, v, op, _ in entries)


def issue_floors(states: dict[int, RankState], firsts: dict[int, float], hop: int) -> dict[int, float]:
    """Per rank, a lower bound on the cycle of any notify or message it still issues: a running rank, its
    published floor; a rank ``r`` blocked in a wait, the least fixpoint of ``max(start_r, min(firsts[r],
    min_{s != r} floor_s + hop))`` (its wait cannot end before the notifies that can still reach its cell land;
    ``firsts[r]``: when its condition first holds from ``start_r`` on over the notifies seen, read after
    ``states``); a rank blocked in a receive of a message its sender had not sent, ``max(clock_r, floor_s +
    the receive's hop)``. Iterated from below, every step is a valid bound; a value past every finite input by
    more than a hop per rank can only grow without end (ranks waiting on each other and on nobody else):
    ``inf``."""
    floors = {r: s.floor for r, s in states.items()}
    blocked = [r for r, s in states.items() if (s.wait is not None or s.recv is not None) and s.floor != INF]
    finite = [v for v in [*floors.values(), *firsts.values()] if v != INF]
    cap = max(finite, default=0) + max([hop, *(s.recv[2] for s in states.values() if s.recv)]) * (len(states) + 1)

    def raised(r: int, low: list[tuple[int, float]]) -> float:
        st = states[r]
        if st.recv is not None:
            sender, seq, lookahead = st.recv
            sent = states[sender].sent if sender in states else ()
            after = floors.get(sender, INF)
            if (sent[r] if r < len(sent) else 0) > seq or after == INF:  # on its way, or an untracked sender
                return st.floor
            return max(st.floor, after + lookahead)
        others = next((v for s, v in low if s != r), INF)
        return max(st.floor, min(firsts.get(r, INF), others + hop))

    changed = True
    while changed:
        changed = False
        low = sorted(floors.items(), key=lambda kv: kv[1])[:2]  # the two smallest: min over the others in O(1)
        for r in blocked:
            new = raised(r, low)
            if new > cap:
                new = INF
            if new > floors[r]:
                floors[r], changed = new, True
                low = sorted(floors.items(), key=lambda kv: kv[1])[:2]
    return floors


def settles(first: float, others: Sequence[float], hop: int) -> bool:
    """A wait whose condition first holds at ``first`` over the notifies seen is final: no notify still to
    come (from ranks whose floors are ``others``, a hop before it lands) lands before ``first``."""
    return first != INF and first <= min(others, default=INF) + hop
