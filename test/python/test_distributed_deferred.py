"""Deferred completion (``pld.system.defer_wait``, issue 19): a waiter's kernel ends and frees its core at
once, its task completes (its consumers run) only when the awaited signal lands, so a publisher submitted
after its waiters runs on the freed core; the cycles and the swimlane show the deferral; a signal that
never comes is a timeout naming the rank and the task."""

from __future__ import annotations

import json
import time
from pathlib import Path

import dist_defer_programs as dp
import pytest
import torch

from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.distributed import DistributedRunError

TIMEOUT = 60.0  # generous: the suite shares 2 cores with other runs


def compile_(program: object, tmp_path: Path, timeout_s: float = TIMEOUT) -> object:
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=timeout_s, num_sub_workers=0)
    return ir.compile(program, output_dir=str(tmp_path / "build"), distributed_config=dc)


def two_aiv_target(tmp_path: Path) -> Path:
    """a2a3 with one AI core (1 AIC + 2 AIV) and one scheduler thread: two waiters take every AIV."""
    from pypto.target import model

    text = (Path(model.__file__).parent / "targets/a2a3.mlir").read_text()
    text = text.replace("npu.cores aic = 24 aiv_per_aic = 2", "npu.cores aic = 1 aiv_per_aic = 2")
    text = text.replace("npu.aicpu threads = 3", "npu.aicpu threads = 1")
    path = tmp_path / "two_aiv.mlir"
    path.write_text(text)
    return path


def inputs() -> torch.Tensor:
    x = torch.empty(2, 1, dp.W, dtype=torch.int32)
    x[0].fill_(10)
    x[1].fill_(20)
    return x


def test_a_publisher_submitted_after_its_deferred_waiters_runs_and_their_consumers_read_its_data(
        tmp_path: Path, window_dir: Path) -> None:
    waiters = 2
    compiled = compile_(dp.deferred_program(waiters), tmp_path)
    pto = (compiled.output_dir / "next_levels/chip_orch/ptoas").glob("*.pto")
    assert any("deferred}" in p.read_text() for p in pto)  # pto.comm.twait {cmp = ..., deferred}
    x, out = inputs(), torch.full((2, waiters, dp.W), -1, dtype=torch.int32)
    compiled(x, out, config=RunConfig(enable_chip_swimlane=3, target=str(two_aiv_target(tmp_path))))
    assert torch.equal(out[0], x[1].expand(waiters, dp.W))  # each consumer read the peer's payload
    assert torch.equal(out[1], x[0].expand(waiters, dp.W))

    for r in range(2):
        d = compiled.output_dir / f"dfx_outputs/rank{r}/d0"
        rec = json.loads((d / "chip_swimlane_records.json").read_text())
        core = {row[1]: row for row in rec["aicore_tasks"]}  # task -> [core, task, reg, start, end, r2s]
        cpu = {(row[0], row[1]): row for row in rec["aicpu_tasks"]}  # (core, reg) -> [.., dispatch, finish]
        polls = [p for t in rec["aicpu_scheduler_phases"] for p in t if p["kind"] == "async_poll"]
        waiter_ids, consumer_ids, publisher = [0, 2], [1, 3], 4
        assert len(polls) >= 1 and sum(p["tasks_processed"] for p in polls) == waiters
        first_poll = min(p["start_cycles"] for p in polls)
        for w, c in zip(waiter_ids, consumer_ids, strict=True):
            wc, wreg, _, wend = core[w][0], core[w][2], core[w][3], core[w][4]
            released = cpu[(wc, wreg)][3]
            # the waiter's kernel ends and its core is released long before its completion ...
            assert wend <= released < first_poll
            # ... which comes after the publisher ran, and before its consumer starts
            assert core[publisher][4] < first_poll <= core[c][3]
        assert core[publisher][3] < min(core[c][3] for c in consumer_ids)
        # both AIVs ran a waiter; the publisher ran on the first one freed, before the waiters completed
        assert {core[w][0] for w in waiter_ids} == {1, 2} and core[publisher][0] == core[0][0]
        assert cpu[(core[0][0], core[0][2])][3] <= cpu[(core[publisher][0], core[publisher][2])][2]
        # the deferred wait is a comm event from its registration to the landing of the peer's notify
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        defers = [e for e in events if e["cat"] == "wait" and e["name"].startswith("defer_wait")]
        notify = next(e for e in events if e["cat"] == "notify")
        assert len(defers) == waiters
        assert all(e["consumed"] and e["end"] > e["start"] for e in defers)
        assert notify["start"] < defers[0]["end"]  # the waiters' completions follow this rank's publisher too


def test_a_deferred_wait_whose_signal_never_comes_is_a_timeout_naming_rank_and_task(
        tmp_path: Path, window_dir: Path) -> None:
    compiled = compile_(dp.deferred_program(1, expected=2), tmp_path, timeout_s=3.0)  # the peer only sets 1
    x, out = inputs(), torch.zeros(2, 1, dp.W, dtype=torch.int32)
    t0 = time.monotonic()
    with pytest.raises(DistributedRunError) as err:
        compiled(x, out)
    assert time.monotonic() - t0 < 3.0 + 30.0
    assert set(err.value.failures) == {0, 1}
    for task, message in err.value.failures.values():
        assert task == "chip run chip_orch"
        assert "task t0 (@waiter" in message and "deferred wait on signal" in message
        assert "for Ge 2 timed out after 3 s (the cell holds 1)" in message


def test_work_after_a_defer_wait_in_its_own_kernel_is_named(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from pypto.driver.compiled import CompiledProgram

    compiled = compile_(dp.LoadAfterDefer, tmp_path)
    assert not isinstance(compiled.programs["chip_orch"], CompiledProgram)  # its torch form (a blocking wait)
    err = capfd.readouterr().err
    src = Path(dp.__file__).read_text().splitlines()
    assert "after 'pld.system.defer_wait' in the same kernel" in err
    line = int(err.split(f"{dp.__file__}:")[1].split(":")[0])
    assert "pl.load(payload" in src[line - 1]


@pytest.fixture
def torch_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-rank programs build as their torch form (the fallback of programs with an op that does not lower)."""
    import pypto.driver.distributed as driver

    monkeypatch.setattr(driver, "needs_torch_form", lambda program: True)


def test_the_torch_form_keeps_deferred_completion(tmp_path: Path, window_dir: Path, torch_form: None) -> None:
    """Waiters before their publisher on both ranks: a blocking wait would wait for a publisher that runs
    after it on the peer (each rank's) and time out; deferred, each waiter's task completes before its
    consumer, once the peer's publisher notified."""
    waiters = 2
    compiled = compile_(dp.deferred_program(waiters), tmp_path, timeout_s=10.0)
    script = (compiled.output_dir / "next_levels/chip_orch/torch_program.py").read_text()
    assert "_pld.defer_wait(" in script and "_pld.wait(" not in script
    assert "_pld.run_task('wait_tid', [], True, _task," in script  # the waiter
    assert "_pld.run_task(None, ['wait_tid'], True, _task_1, (out_1, ))" in script  # its consumer: postponable
    x, out = inputs(), torch.full((2, waiters, dp.W), -1, dtype=torch.int32)
    compiled(x, out)
    assert torch.equal(out[0], x[1].expand(waiters, dp.W))
    assert torch.equal(out[1], x[0].expand(waiters, dp.W))
    for r in range(2):
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        defers = [e for e in events if e["cat"] == "wait" and e["name"].startswith("defer_wait")]
        notify = next(e for e in events if e["cat"] == "notify")
        assert len(defers) == waiters and all(e["consumed"] and e["end"] >= e["start"] for e in defers)
        assert defers[0]["end"] > defers[0]["start"]  # the first waiter completes when the peer's notify lands
        assert max(e["start"] for e in defers) < notify["start"]  # registered before this rank's publisher ran


def test_the_torch_form_times_out_a_deferred_wait_naming_its_task(tmp_path: Path, window_dir: Path,
                                                                  torch_form: None) -> None:
    compiled = compile_(dp.deferred_program(1, expected=2), tmp_path, timeout_s=3.0)
    with pytest.raises(DistributedRunError) as err:
        compiled(inputs(), torch.zeros(2, 1, dp.W, dtype=torch.int32))
    for _, message in err.value.failures.values():
        assert "task t1 (wait_tid): deferred wait (for the program's end) on signal" in message
        assert "for Ge 2 timed out after 3 s (the cell holds 1)" in message


def test_the_torch_form_blocks_where_work_follows_the_defer_wait(tmp_path: Path) -> None:
    compiled = compile_(dp.LoadAfterDefer, tmp_path)
    script = (compiled.output_dir / "next_levels/chip_orch/torch_program.py").read_text()
    assert "_pld.wait(" in script and "_pld.defer_wait(" not in script  # its own load reads after the signal
