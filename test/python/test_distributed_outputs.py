"""A multi-chip run that fails never leaves the earlier run's outputs looking current, nor its own partial
ones, and loses nothing: the earlier outputs move to ``dfx_outputs/previous/`` (docs/distributed.md,
"Artefacts"; :mod:`pypto.runtime.distributed.outputs`)."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pypto.runtime.distributed import DistributedConfig, DistributedRunError, allreduce, launch
from pypto.runtime.distributed.chip import begin_dispatch
from pypto.runtime.distributed.outputs import EarlierOutputs
from pypto.runtime.distributed.pool import RankPool

TIMEOUT = 30.0  # generous: the suite shares 2 cores with other runs


def cfg(out: Path, **kw: object) -> DistributedConfig:
    return DistributedConfig(world_size=2, timeout_s=float(kw.pop("timeout_s", TIMEOUT)), output_dir=out, **kw)


def sums(comm: object, n: int) -> torch.Tensor:
    comm.barrier()  # type: ignore[attr-defined]
    return allreduce(comm, torch.full((n,), float(comm.rank + 1)), "Sum", "ring")  # type: ignore[attr-defined]


def dispatch_then_fail_on_rank1(comm: object, *, state: dict | None = None) -> int:
    """Rank 0 writes a chip dispatch's folder (``rank0/d0``) and finishes; rank 1 raises after a barrier."""
    begin_dispatch(comm, "failing_run")  # type: ignore[arg-type]
    comm.barrier()  # type: ignore[attr-defined]
    if comm.rank == 1:  # type: ignore[attr-defined]
        raise ValueError("boom on purpose")
    return 0


def dispatch_ok(comm: object, *, state: dict | None = None) -> int:
    begin_dispatch(comm, "good_run")  # type: ignore[arg-type]
    comm.barrier()  # type: ignore[attr-defined]
    return comm.rank  # type: ignore[attr-defined]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_failed_launch_moves_the_earlier_outputs_to_previous_and_leaves_none_of_its_own(tmp_path: Path) -> None:
    dfx = tmp_path / "dfx_outputs"
    launch(dispatch_ok, cfg(tmp_path))
    launch(sums, cfg(tmp_path), 16)
    first = snapshot(dfx)
    assert {"merged_comm_trace.json", "cross_rank_report.html", "run_report.html", "rank0/comm_events.json",
            "rank1/comm_events.json"} <= set(first)
    assert "rank0/d0/dispatch_program.json" not in first  # the second run had no chip dispatch: d0 went
    (dfx / "notes.txt").write_text("mine")  # the user's: stays where it is
    (dfx / "rank0/d9").mkdir()
    (dfx / "rank0/d9/notes.txt").write_text("mine")  # no dispatch_program.json: the user's too
    with pytest.raises(DistributedRunError) as err:
        launch(dispatch_then_fail_on_rank1, cfg(tmp_path))
    assert err.value.failures[1][1].startswith("ValueError: boom on purpose")
    assert err.value.previous == dfx / "previous"
    assert f"were moved to {dfx / 'previous'}" in str(err.value)
    # nothing at the top looks like a run's: neither the earlier run's files nor the failed run's rank0/d0
    assert sorted(os.listdir(dfx)) == ["notes.txt", "previous", "rank0"]
    assert snapshot(dfx / "rank0") == {"d9/notes.txt": b"mine"}
    assert snapshot(dfx / "previous") == first  # every earlier byte kept
    # a second failure keeps that previous/ (it still holds the last good run's outputs)
    with pytest.raises(DistributedRunError) as err:
        launch(dispatch_then_fail_on_rank1, cfg(tmp_path))
    assert err.value.previous == dfx / "previous" and "were moved to" in str(err.value)
    assert snapshot(dfx / "previous") == first and sorted(os.listdir(dfx)) == ["notes.txt", "previous", "rank0"]
    # a successful run's outputs are the current ones; previous/ is superseded
    launch(dispatch_ok, cfg(tmp_path))
    assert sorted(os.listdir(dfx)) == ["cross_rank_report.html", "merged_comm_trace.json", "notes.txt", "rank0",
                                       "rank1", "run_report.html"]
    assert b"good_run" in (dfx / "rank0/d0/dispatch_program.json").read_bytes()
    assert (dfx / "rank0/d9/notes.txt").read_text() == "mine"
    assert not [n for n in os.listdir(dfx) if n.startswith(".")]  # no hidden folder left


def test_a_failed_first_run_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(DistributedRunError) as err:
        launch(dispatch_then_fail_on_rank1, cfg(tmp_path))
    assert err.value.previous is None and "moved" not in str(err.value)
    assert os.listdir(tmp_path / "dfx_outputs") == []  # rank 0's dispatch folder was the failed run's


def test_a_failed_dispatch_of_a_pool_moves_the_earlier_outputs_to_previous(tmp_path: Path) -> None:
    dfx = tmp_path / "dfx_outputs"
    pool = RankPool(cfg(tmp_path))
    try:
        pool.run(dispatch_ok, output_dir=tmp_path)
        first = snapshot(dfx)
        assert "rank1/d0/dispatch_program.json" in first
        with pytest.raises(DistributedRunError, match=r"were moved to .*previous") as err:
            pool.run(dispatch_then_fail_on_rank1, output_dir=tmp_path)
        assert err.value.previous == dfx / "previous"
        assert os.listdir(dfx) == ["previous"] and snapshot(dfx / "previous") == first
    finally:
        pool.close()


def test_a_killed_runs_partial_outputs_give_way_to_the_outputs_it_set_aside(tmp_path: Path) -> None:
    dfx = tmp_path / "dfx_outputs"
    (dfx / "rank0").mkdir(parents=True)
    (dfx / "rank0/comm_events.json").write_text("earlier")
    (dfx / "merged_comm_trace.json").write_text("earlier")
    killed = EarlierOutputs(tmp_path, 2)
    killed.set_aside()  # a run that is then killed: its aside stays, named with its pid
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = "".join(c if c.isalnum() or c in "_." else "_" for c in socket.gethostname())
    assert killed.aside is not None
    killed.aside.rename(dfx / f".previous-{host}-{int(dead.stdout)}-{secrets.token_hex(4)}")
    (dfx / "rank0").mkdir()
    (dfx / "rank0/comm_events.json").write_text("partial")  # what the killed run wrote
    again = EarlierOutputs(tmp_path, 2)
    again.set_aside()
    assert again.failed() == dfx / "previous"  # the next run fails too: the earlier outputs are previous/
    assert snapshot(dfx) == {"previous/merged_comm_trace.json": b"earlier", "previous/rank0/comm_events.json": b"earlier"}
