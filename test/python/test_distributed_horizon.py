"""The conservative wait rule (pypto.runtime.distributed.horizon): when a wait's simulated clock is final."""

from __future__ import annotations

import time
from pathlib import Path

import dist_wait_programs as dw
import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.distributed.horizon import INF, RankState, first_hold, issue_floors, monotone, settles
from pypto.target.model import load_target

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


def run_rounds(tmp_path: Path, x: torch.Tensor) -> list[int]:
    """rounds_host on 3 ranks; each rank's cycles (its whole clock)."""
    y = torch.zeros_like(x)
    dc = DistributedConfig(device_ids=[0, 1, 2], timeout_s=60.0, num_sub_workers=0)
    config = RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "build"))
    compiled = dw.rounds_host.compile(x, y, config=config)
    compiled(x, y, config=config)
    assert torch.equal(y, x * 4)
    return [rk.cycles for rk in compiled.last_run.ranks]


def test_a_kernel_reusing_a_signal_gets_the_same_cycles_whichever_notify_host_time_delays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rounds_k on 3 ranks: with rank 2's first notify held back in host time, rank 1's round-2 notify reaches
    rank 0 before it; the ranks' cycles are still those of the undisturbed run (rank 0's first wait ends at
    the round-1 notifies, and the work after it is timed from there, not from rank 1's round 2)."""
    from pypto.runtime.distributed.comm import RankComm

    x = torch.randn(3, 2, dw.N)
    undisturbed = run_rounds(tmp_path / "a", x)
    assert len(set(undisturbed)) == 1 and undisturbed[0] > 0  # the ranks run the same kernel at the same times
    notify, held = RankComm.notify, []

    def slow_notify(self: RankComm, signal: str, *args: object, **kw: object) -> None:
        if self.rank == 2 and signal.startswith("w") and not held:
            held.append(signal)
            time.sleep(1.0)
        notify(self, signal, *args, **kw)

    monkeypatch.setattr(RankComm, "notify", slow_notify)  # the forked ranks inherit it
    assert run_rounds(tmp_path / "b", x) == undisturbed


def test_a_rank_blocked_in_a_receive_follows_its_sender_until_the_message_is_sent() -> None:
    # rank 2 (clock 0) waits for message 0 from rank 0, which waits on a cell holding at 5000
    waiting = {0: RankState(0, WAIT, sent=(0, 0, 0)), 1: RankState(INF), 2: RankState(0, recv=(0, 0, 700))}
    floors = issue_floors(waiting, {0: 5000}, HOP)
    assert floors[2] == 5000 + 700 and floors[0] == 5000
    sent = {**waiting, 0: RankState(0, WAIT, sent=(0, 0, 1))}  # the message is on its way: rank 2 will go on
    assert issue_floors(sent, {0: 5000}, HOP)[2] == 0
    untracked = {**waiting, 0: RankState(INF, sent=(0, 0, 0))}  # it may send at any cycle: no bound either
    assert issue_floors(untracked, {}, HOP)[2] == 0


def test_a_kernels_second_credit_barrier_waits_for_the_late_peers_arrival(tmp_path: Path) -> None:
    """credit_k on 2 ranks: rank 0 works before the first pld.tensor.barrier, rank 1 before the second; rank
    0's second wait for rank 1's arrival ends when that arrival lands, not at the first barrier's arrival (its
    credit was taken before the second wait began)."""
    x, y = torch.ones(2, 2, dw.N) * 1e-6, torch.zeros(2, 2, dw.N)
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=60.0, num_sub_workers=0)
    config = RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "build"))
    compiled = dw.credit_host.compile(x, y, config=config)
    compiled(x, y, config=config)
    r0, r1 = (rk.events for rk in compiled.last_run.ranks)
    arrivals = [e["start"] for e in r1 if e["name"] == "notify r0[1] AtomicAdd 1"]
    waits = [e for e in r0 if e["name"] == "wait w0[1] Ge 1"]
    assert len(arrivals) == len(waits) == 2
    hop4 = load_target("a2a3").link.hop_cycles(4, load_target("a2a3").clock_hz)
    assert arrivals[1] > waits[1]["start"] + hop4  # rank 1 arrives late in the second barrier
    assert waits[1]["end"] == arrivals[1] + hop4
