"""The conservative wait rule (pypto.runtime.distributed.horizon): when a wait's simulated clock is final."""

from __future__ import annotations

from pypto.runtime.distributed.horizon import INF, RankState, first_hold, issue_floors, monotone, settles

HOP = 100
WAIT = ("s", 0, 1, "Ge")


def add(t: int, v: int = 1, fid: str = "f") -> tuple[int, int, str, str]:
    return (t, v, "AtomicAdd", fid)


def test_first_hold_starts_from_the_cell_as_the_wait_finds_it() -> None:
    entries = [add(50, fid="a"), add(300, -1, "credit"), add(900, fid="b")]
    assert first_hold(entries, 1, "Ge", 0) == (50, 1, ["a"])
    # a wait begun after the credit cleared the first notify holds at the next one, not at the first
    assert first_hold(entries, 1, "Ge", 400) == (900, 1, ["a", "credit", "b"])
    assert first_hold(entries, 2, "Ge", 0)[0] == INF
    assert first_hold([], 0, "Ge", 70) == (70, 0, [])


def test_monotone_only_for_non_negative_adds_under_ge() -> None:
    assert monotone([add(1), add(2)], "Ge")
    assert not monotone([add(1), add(2, -1)], "Ge")
    assert not monotone([add(1)], "Eq")
    assert not monotone([(1, 3, "Set", "f")], "Ge")


def test_a_blocked_rank_floor_rises_to_where_its_own_wait_can_end() -> None:
    # rank 1 waits since 1000 on a cell whose condition holds at 5000 over what arrived; rank 2 runs at 9000
    states = {0: RankState(0, WAIT), 1: RankState(1000, WAIT), 2: RankState(9000)}
    floors = issue_floors(states, {0: 8000, 1: 5000}, HOP)
    assert floors[2] == 9000
    assert floors[1] == 5000  # its wait ends at 5000 unless a notify lands earlier: none can (rank 0 below)
    assert floors[0] == 5000 + HOP  # rank 0 can only be released by rank 1 (from 5000) or rank 2


def test_two_ranks_waiting_on_each_other_ratchet_to_the_fixpoint() -> None:
    # neither condition holds over what arrived: each wait ends only when the other's notify lands
    states = {0: RankState(0, WAIT), 1: RankState(450, WAIT), 2: RankState(2000)}
    floors = issue_floors(states, {0: INF, 1: INF}, HOP)
    assert floors == {0: 2000 + HOP, 1: 2000 + HOP, 2: 2000}  # bounded by the running rank 2
    alone = issue_floors({0: RankState(0, WAIT), 1: RankState(450, WAIT)}, {0: INF, 1: INF}, HOP)
    assert alone == {0: INF, 1: INF}  # waiting on nobody else: no notify can ever come


def test_settles_only_when_no_notify_can_land_earlier() -> None:
    assert settles(5000, [4900, 7000], HOP)
    assert not settles(5000, [4899, 7000], HOP)
    assert not settles(INF, [INF], HOP)
    assert settles(5000, [], HOP)
