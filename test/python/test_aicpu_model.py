"""The AICPU model of the simulated chip (pypto.runtime.scheduler): orchestrator submits and allocs,
scheduler threads with their complete/release/dispatch phases and shared ready queues, each step's
cost from the target's ``npu.aicpu`` row; and what swimlane levels 3 and 4 record of it
(runtime-dfx-formats.md §2) and draw in the merged trace (§3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from test_dfx_trace import check_event_format

import pypto.language as pl
from pypto.runtime import RunConfig, run
from pypto.runtime.dfx.trace import chrome_trace
from pypto.target.model import TARGETS_DIR, load_target


@pl.jit
def three(a: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([32, 128], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_first"):  # t0
        tmp[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_second"):  # t1 reads tmp: waits for t0
        y[:] = pl.mul(tmp, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_alone"):  # t2: independent
        z[:] = pl.mul(a, a)
    return y, z


pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


@pytest.fixture
def two_clusters(tmp_path: Path) -> Path:
    """a2a3 with two clusters of one AIC + one AIV (AIV cores 2 and 3) and its own AICPU costs."""
    text = (TARGETS_DIR / "a2a3.mlir").read_text()
    text = text.replace("npu.cores aic = 24 aiv_per_aic = 2", "npu.cores aic = 2 aiv_per_aic = 1")
    start = text.index("  npu.aicpu ")
    end = text.index("\n", start)
    row = "  npu.aicpu threads = 2 submit = 100 alloc = 50 complete = 10 release = 5 dispatch = 20 drain = 30"
    text = text[:start] + row + text[end:]
    path = tmp_path / "two_clusters.mlir"
    path.write_text(text)
    return path


def _run(threads: int | None, target: Path | None = None, level: int = 0, build: Path | None = None) -> Any:
    a, y, z = torch.randn(32, 128), torch.zeros(32, 128), torch.zeros(32, 128)
    config = RunConfig(aicpu_thread_num=threads, target=str(target) if target else None,
                       enable_chip_swimlane=level, save_kernels_dir=str(build) if build else None)  # fmt: skip
    if build is None:
        result = run(three.specialize(a, y, z), a, y, z, config=config)
    else:  # through the @pl.jit call, which writes dfx_outputs/ into the build directory
        three(a, y, z, config=config)
        result = three.compile(a, y, z, config=RunConfig(save_kernels_dir=str(build))).last_run
    torch.testing.assert_close(y, (a + a) * a)
    torch.testing.assert_close(z, a * a)
    return result


def _expected(result: Any, target: Any, threads: int) -> dict[str, Any]:
    """The timeline reckoned by hand from the target's costs and the three kernels' cycles.

    The orchestrator runs from cycle 0: t0 is the first task to use ``tmp`` (a ``pl.create_tensor``),
    so one ``alloc`` step (its own level-4 record) precedes t0's ``submit``; t1 and t2 only submit.
    t0 and t2 are ready when submitted; t1 when t0's complete and release phases have retired t0."""
    c, lat = target.aicpu, target.dispatch_latency_cycles
    k0, k1, k2 = (t.cycles for t in result.tasks)
    a0 = c.alloc  # tmp's alloc step, before t0's submit
    s0 = a0 + c.submit
    s1, s2 = s0 + c.submit, s0 + 2 * c.submit  # tmp is allocated once
    d0 = s0 + c.dispatch  # thread 0 pops t0 as soon as it is submitted
    e0 = d0 + lat + k0
    d2 = s2 + c.dispatch  # t2 is ready at its submit and an idle AIV core waits
    e2 = d2 + lat + k2
    assert s2 < e0 < e2, "the reckoning below assumes t0 ends after t2 is dispatched and before t2 ends"
    release_end = e0 + c.complete + c.release  # t0 retired, its one fanout edge released: t1 ready
    d1 = release_end + c.dispatch
    e1 = d1 + lat + k1
    assert e1 > e2 > d1
    return {"submit": [(0, a0), (a0, s0), (s0, s1), (s1, s2)], "dispatch": [d0, d1, d2], "start": [d0 + lat, d1 + lat, d2 + lat],
            "end": [e0, e1, e2], "finish": [e0, e1, e2], "total": e1, "release_end": release_end}  # fmt: skip


def test_one_thread_reckoned_by_hand() -> None:
    target = load_target("a2a3")
    result = _run(threads=1)
    want = _expected(result, target, 1)
    assert [t.dispatch for t in result.tasks] == want["dispatch"]
    assert [t.start for t in result.tasks] == want["start"]
    assert [t.end for t in result.tasks] == want["end"]
    assert [t.finish for t in result.tasks] == want["finish"]
    assert result.total_cycles == want["total"]
    assert [t.core_ids for t in result.tasks] == [[24], [24], [25]]  # t1 reuses t0's core once t0 is retired
    (orch,) = result.orchestrator_phases
    assert [(p["start_cycles"], p["end_cycles"]) for p in orch] == want["submit"]
    assert [(p.get("kind"), p["task_id"]) for p in orch] == [("alloc", 0), (None, 0), (None, 1), (None, 2)]
    c = target.aicpu
    (sched,) = result.scheduler_phases
    e0, e1, e2 = want["end"]
    d0, d1, d2 = want["dispatch"]
    s2 = want["submit"][3][1]  # t2's submit end (after tmp's alloc and three submits)
    assert [(p["kind"], p["start_cycles"], p["end_cycles"], p["tasks_processed"]) for p in sched] == [
        ("dispatch", d0 - c.dispatch, d0, 1),
        ("dispatch", s2, d2, 1),
        ("complete", e0, e0 + c.complete, 1),
        ("release", e0 + c.complete, want["release_end"], 1),
        ("dispatch", want["release_end"], d1, 1),
        ("complete", e2, e2 + c.complete, 1),
        ("complete", e1, e1 + c.complete, 1),
    ]
    assert [p["loop_iter"] for p in sched] == [1, 2, 3, 3, 3, 4, 5]
    # the shared queues [aic, aiv, mix]: t0 alone when the first dispatch starts; t1 after the release
    assert [(p["shared_at_start"], p["shared_at_end"]) for p in sched[:5]] == [
        ([0, 1, 0], [0, 0, 0]), ([0, 1, 0], [0, 0, 0]), ([0, 0, 0], [0, 0, 0]), ([0, 0, 0], [0, 1, 0]),
        ([0, 1, 0], [0, 0, 0])]  # fmt: skip
    assert all((p["pop_hit"], p["pop_miss"]) == (1, 0) for p in sched if p["kind"] == "dispatch")


def test_costs_and_threads_come_from_the_target(two_clusters: Path) -> None:
    """Two threads, one cluster each: t2 cannot go to thread 0 (its only AIV core runs t0) and is
    dispatched by thread 1 at the same time it would have been."""
    target = load_target(str(two_clusters))
    assert target.aicpu.threads == 2 and target.aicpu.dispatch == 20 and target.aicpu.drain == 30
    assert load_target("a2a3").aicpu.drain == 74  # the optional field, set in a2a3.mlir
    result = _run(threads=None, target=two_clusters)  # the target's default: 2 threads
    want = _expected(result, target, 2)
    assert [t.dispatch for t in result.tasks] == want["dispatch"]
    assert [t.finish for t in result.tasks] == want["finish"]
    assert result.total_cycles == want["total"]
    assert result.core_to_thread == [0, 1, 0, 1]  # AIC 0, AIC 1, AIV 2 (cluster 0), AIV 3 (cluster 1)
    assert [t.core_ids for t in result.tasks] == [[2], [2], [3]]
    t0_thread, t1_thread = result.scheduler_phases
    assert [p["kind"] for p in t0_thread] == ["dispatch", "complete", "release", "dispatch", "complete"]
    assert [p["kind"] for p in t1_thread] == ["dispatch", "complete"]
    assert t1_thread[0]["end_cycles"] == want["dispatch"][2]


def test_a_target_without_aicpu_costs_is_a_fixed_latency(tmp_path: Path) -> None:
    text = (TARGETS_DIR / "a2a3.mlir").read_text()
    start = text.index("  npu.aicpu ")
    path = tmp_path / "free.mlir"
    path.write_text(text[:start] + text[text.index("\n", start) + 1 :])
    result = _run(threads=None, target=path)
    lat = load_target("a2a3").dispatch_latency_cycles
    t0, t1, t2 = result.tasks
    assert t0.dispatch == t2.dispatch == 0 and t1.dispatch == t0.finish == t0.end
    assert all(t.start - t.dispatch == lat for t in result.tasks)


def test_bad_thread_count() -> None:
    with pytest.raises(ValueError, match="aicpu_thread_num"):
        _run(threads=0)


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_levels_record_cumulatively_and_cost_nothing(tmp_path: Path, level: int) -> None:
    base = _run(threads=1)
    result = _run(threads=1, level=level, build=tmp_path / "build")
    assert [(t.dispatch, t.start, t.end, t.finish) for t in result.tasks] == [
        (t.dispatch, t.start, t.end, t.finish) for t in base.tasks]  # fmt: skip
    records = json.loads((tmp_path / "build" / "dfx_outputs" / "chip_swimlane_records.json").read_text())
    assert records["chip_swimlane_level"] == level
    assert ("aicpu_tasks" in records) is (level >= 2)
    assert ("aicpu_scheduler_phases" in records) is ("core_to_thread" in records["metadata"]) is (level >= 3)
    assert ("aicpu_orchestrator_phases" in records) is (level >= 4)
    assert records["aicore_tasks"] == base.swimlane_records(1)["aicore_tasks"]
    if level >= 3:
        assert records["metadata"]["core_to_thread"] == [0] * 72
        (sched,) = records["aicpu_scheduler_phases"]
        keys = ["kind", "start_cycles", "end_cycles", "loop_iter", "tasks_processed"]
        for p in sched:
            extra = ["pop_hit", "pop_miss"] if p["kind"] == "dispatch" else []
            assert list(p) == keys + extra + ["shared_at_start", "shared_at_end"]
            assert len(p["shared_at_start"]) == len(p["shared_at_end"]) == 3
    if level >= 4:
        (orch,) = records["aicpu_orchestrator_phases"]
        submit = ["submit_idx", "task_id", "start_cycles", "end_cycles"]
        assert [list(p) for p in orch] == [[*submit, "kind"]] + [submit] * 3  # tmp's alloc, then 3 submits
        assert [p["task_id"] for p in orch] == [0, 0, 1, 2] and orch[0]["kind"] == "alloc"


def test_level_4_trace_draws_the_aicpu_lanes(tmp_path: Path) -> None:
    _run(threads=1, level=4, build=tmp_path / "build")
    (merged,) = (tmp_path / "build" / "dfx_outputs").glob("merged_swimlane_*.json")
    trace = json.loads(merged.read_text())
    check_event_format(trace)
    events = trace["traceEvents"]
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert lanes[(1, 4000)] == "Orch_0" and lanes[(2, 30000)] == "Sched_0" and (2, 3999) in lanes
    submits = [e for e in events if e["ph"] == "X" and e["pid"] == 1]
    assert [e["name"] for e in submits] == ["alloc(t0)", "submit(t0)", "submit(t1)", "submit(t2)"]
    assert submits[0]["args"] == {"phase": "orch_alloc", "submit_idx": 0, "task_id": 0}
    assert submits[1]["args"] == {"phase": "orch_submit", "submit_idx": 0, "task_id": 0}
    phases = [e["name"] for e in events if e["ph"] == "X" and e["pid"] == 2]
    assert phases == ["dispatch(1)", "dispatch(1)", "complete(1)", "release(1)", "dispatch(1)", "complete(1)",
                      "complete(1)"]  # fmt: skip
    queue = [e for e in events if e["ph"] == "C"]
    assert queue and all(e["tid"] == 3999 and set(e["args"]) == {"AIC", "AIV", "MIX"} for e in queue)
    flows = [e["name"] for e in events if e["ph"] == "s"]
    # a dispatch flow to each view per task (upstream: pid 2 -> 4 and pid 2 -> 3), a submit->dispatch per task
    assert flows.count("dispatch") == 2 * 3 and flows.count("submit→dispatch") == 3
    ends = [e["pid"] for e in events if e["ph"] == "f" and e["name"] == "dispatch"]
    assert sorted(ends) == [3, 3, 3, 4, 4, 4]
    assert flows.count("dependency") == 2  # t0 -> t1 on pid 4 and its pid 3 mirror
    # a dispatch flow leaves the scheduler lane inside its dispatch phase (at the dispatch time) and lands on one of
    # the task's bars: its Scheduler View bar (which starts at the dispatch) or its Worker View bar (at its start)
    bars = [e for e in events if e["ph"] == "X"]

    def on_a_bar(e: dict, pid: int) -> bool:
        return any(b["pid"] == pid and b["tid"] == e["tid"] and b["ts"] - 1e-9 <= e["ts"] <= b["ts"] + b["dur"] + 1e-9
                   for b in bars)  # fmt: skip

    for s in (e for e in events if e["ph"] == "s" and e["name"] == "dispatch"):
        f = next(e for e in events if e["ph"] == "f" and e["id"] == s["id"])
        assert s["pid"] == 2 and on_a_bar(s, 2)
        assert f["pid"] in (3, 4) and on_a_bar(f, f["pid"])


@pl.jit.incore
def _copy_rows(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    row = pl.tile.get_block_idx() * 16
    pl.store(pl.load(x, [row, 0], [16, 128]), [row, 0], out)
    return out


@pl.jit.incore
def _square(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [32, 128])
    pl.store(pl.mul(t, t), [0, 0], out)
    return out


@pl.jit
def _drained(a: pl.Tensor, b: pl.Tensor, p: pl.Out[pl.Tensor], q: pl.Out[pl.Tensor], r: pl.Out[pl.Tensor]):
    p = _square(a, p)  # t0: one AIV core
    with pl.spmd(2, sync_start=True):  # t1: both AIV cores at once
        q = _copy_rows(b, q)
    r = _square(b, r)  # t2: independent, but submitted after t1
    return p, q, r


def test_sync_start_drains_reckoned_by_hand(two_clusters: Path) -> None:
    """One thread, two AIV cores (2 and 3). t0 takes core 2. t1 (2 blocks, sync_start) does not fit one
    idle core, so it drains: t2, submitted after it, is held although core 3 is idle. When t0 ends, one
    iteration retires it (complete), then drains t1: ``drain`` cycles to reserve both cores
    (drain_prepare) and one ``dispatch`` per block to publish them (drain_publish); both blocks share that
    dispatch time and start together. t2 waits for a core until t1's blocks are retired."""
    target = load_target(str(two_clusters))
    c, lat = target.aicpu, target.dispatch_latency_cycles
    a, b = torch.randn(32, 128), torch.randn(32, 128)
    p, q, r = torch.zeros(32, 128), torch.zeros(32, 128), torch.zeros(32, 128)
    config = RunConfig(aicpu_thread_num=1, target=str(two_clusters))
    result = run(_drained.specialize(a, b, p, q, r), a, b, p, q, r, config=config)
    torch.testing.assert_close(p, a * a)
    torch.testing.assert_close(q, b)
    torch.testing.assert_close(r, b * b)
    t0, t1, t2 = result.tasks
    s0, s2 = c.submit, 3 * c.submit  # t0's and t2's submit ends (no tensor.create: submits only)
    assert t0.dispatch == s0 + c.dispatch and t0.core_ids == [2]
    e0 = t0.end
    assert e0 > s2, "the reckoning assumes t0 runs past every submit"
    publish = e0 + c.complete + c.drain + 2 * c.dispatch
    assert [blk.dispatch for blk in t1.blocks] == [publish, publish]  # published together
    assert [blk.start for blk in t1.blocks] == [publish + lat] * 2 and sorted(t1.core_ids) == [2, 3]
    assert t2.dispatch > t1.finish  # held by the drain, though core 3 was idle from the start
    (sched,) = result.scheduler_phases
    kinds = [(p["kind"], p["start_cycles"], p["end_cycles"], p["tasks_processed"]) for p in sched]
    drain_at = e0 + c.complete
    assert kinds[:5] == [
        ("dispatch", s0, s0 + c.dispatch, 1),
        ("complete", e0, drain_at, 1),
        ("drain", drain_at, publish, 2),
        ("drain_prepare", drain_at, drain_at + c.drain, 2),
        ("drain_publish", drain_at + c.drain, publish, 2),
    ]
    assert {p["loop_iter"] for p in sched[1:5]} == {2}  # complete and drain: one loop iteration
    # the merged trace: drain and its inner phases on Sched_0 (upstream: only resolve goes to the +1 lane),
    # nested inside it; a dispatch flow per block
    trace = chrome_trace(result.swimlane_records(4), {}, [])
    check_event_format(trace)  # the lane's bars are disjoint or nested
    events = trace["traceEvents"]
    assert not [e for e in events if e["pid"] == 2 and e.get("tid") == 30001]  # no resolve: no second lane
    outer = {e["name"]: e for e in events if e["ph"] == "X" and e["pid"] == 2 and e["tid"] == 30000}
    drain = outer["drain(2)"]
    for inner in (outer["drain_prepare(2)"], outer["drain_publish(2)"]):
        assert drain["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= drain["ts"] + drain["dur"] + 1e-6
    assert sum(e["ph"] == "s" and e["name"] == "dispatch" for e in events) == 2 * 4  # t0, t1's two blocks, t2: to both views


def test_the_drain_field_is_optional_and_round_trips() -> None:
    from pypto.target.model import parse_target_op, print_target_op

    text = (TARGETS_DIR / "a2a3.mlir").read_text()
    assert "drain = 74" in print_target_op(parse_target_op(text))  # printed when set
    without = text.replace("dispatch = 37 drain = 74", "dispatch = 37")
    printed = print_target_op(parse_target_op(without))
    assert "dispatch = 37" in printed and "drain" not in printed  # left out: not printed, and 0
    assert load_target("a2a3").aicpu.drain == 74
