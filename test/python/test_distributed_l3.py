"""L3 programs (issue 19): a @pl.jit.host orchestrator compiled into a DistributedCompiledProgram and
run on simulated chips, one process per rank (torch.distributed / gloo): the build directory layout,
from_dir, per-rank chip runs, kernel-body RMA (put, remote_load, notify/wait, barrier) on shared
windows, errors, and upstream's examples/distributed/ run unmodified when a checkout is present."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dist_l3_programs as p3
import pytest
import torch

from pypto.driver.host_trace import HostPlanError
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.distributed import DistributedRunError, launch

TIMEOUT = 60.0  # generous: the suite shares 2 cores with other runs
UPSTREAM = Path(os.environ.get("PYPTO_UPSTREAM_DIR", "/tmp/upstream-pypto")) / "examples" / "distributed"


def config(tmp_path: Path, world: int = 2, **kw: object) -> RunConfig:
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=float(kw.pop("timeout_s", TIMEOUT)),
                           num_sub_workers=0)
    return RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "build"), **kw)


def test_a_host_program_runs_its_chip_program_on_every_rank(tmp_path: Path) -> None:
    torch.manual_seed(0)
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    compiled = p3.chip_host.compile(x, y, config=config(tmp_path))
    assert isinstance(compiled, DistributedCompiledProgram)
    compiled(x, y, config=config(tmp_path, enable_chip_swimlane=4))  # the L2 DFX flags reach each dispatch
    for r in range(2):
        assert torch.allclose(y[r], x[r] * 3 + r, atol=1e-5)
    assert torch.equal(y[2:], torch.zeros(2, 2, p3.N))  # no rank 2 or 3 in a 2-rank run
    out = compiled.output_dir
    assert (out / "orchestration/host_orch.py").read_text().count("def chip_host(") == 1
    meta = json.loads((out / "distributed_meta.json").read_text())
    assert meta["schema"] == 2 and meta["distributed_config"]["device_ids"] == [0, 1]
    assert [d["rank"] for d in meta["host_plan"]["dispatches"]] == [0, 1]
    assert [p["direction"] for p in meta["params"]] == ["In", "Out"]
    assert (out / "next_levels/scale_add/compiled_meta.json").is_file()
    for r in range(2):
        d = out / f"dfx_outputs/rank{r}/d0"
        assert json.loads((d / "dispatch_program.json").read_text()) == {"program": "scale_add"}
        assert len(json.loads((d / "chip_swimlane_records.json").read_text())["aicore_tasks"]) == 1
        assert json.loads((d / "deps.json").read_text())  # on L3 the swimlane co-enables dep_gen (upstream)
        names = json.loads(next(d.glob("name_map*.json")).read_text())["callable_id_to_name"]
        assert "scale_add_k" in names.values()
    cycles = [rk.cycles for rk in compiled.last_run.ranks]
    assert all(c > 0 for c in cycles)  # each chip ran the kernel on its own clock


def test_from_dir_runs_the_build_again_with_four_ranks_compiled(tmp_path: Path) -> None:
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    built = p3.chip_host.compile(x, y, config=config(tmp_path, world=4))
    again = DistributedCompiledProgram.from_dir(built.output_dir)
    assert again.plan.world_size == 4 and sorted(again.programs) == ["scale_add"]
    again(x, y, config=RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1, 2, 3], timeout_s=TIMEOUT)))
    assert torch.allclose(y, x * 3 + torch.arange(4.0).view(4, 1, 1), atol=1e-5)
    with pytest.raises(ValueError, match="compiled for 4 ranks, the run has 2"):
        again(x, y, config=RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1])))


def test_from_dir_names_a_missing_or_broken_meta(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="distributed_meta.json: missing"):
        DistributedCompiledProgram.from_dir(tmp_path)
    (tmp_path / "distributed_meta.json").write_text('{"schema": 2}')
    with pytest.raises(ValueError, match="distributed_meta.json: malformed"):
        DistributedCompiledProgram.from_dir(tmp_path)



@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[1, 2]", r"distributed_meta.json: malformed: got a JSON list; expected a JSON object \{schema: 2"),
        ('{"schema": 2,\n "params": [}', r"distributed_meta.json:2:13: not valid JSON: Expecting value"),
        ('{"schema": 2, "params": [{"name": "x", "direction": "In", "shape": "4", "dtype": "float32"}]}',
         r"distributed_meta.json: parameter 'x': shape must be a list of integers >= 0, got '4'"),
        ('{"schema": 2, "params": [], "distributed_config": {"device_ids": "01"}}',
         r"distributed_meta.json: malformed: distributed_config.device_ids is '01'"),
    ],
)
def test_from_dir_names_what_a_malformed_meta_holds(tmp_path: Path, text: str, says: str) -> None:
    """``from_dir`` itself checks the sidecar's JSON and field types (upstream's contract: it validates field by
    field), so its callers get a ValueError naming the file and the field, not an AttributeError or a run of
    ``device_ids`` ``"01"`` as ``['0', '1']``; replay's message is the same one."""
    (tmp_path / "distributed_meta.json").write_text(text)
    with pytest.raises(ValueError, match=says):
        DistributedCompiledProgram.from_dir(tmp_path)


def test_from_dir_takes_a_meta_saved_with_a_byte_order_mark(tmp_path: Path) -> None:
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    built = p3.chip_host.compile(x, y, config=config(tmp_path))
    meta = built.output_dir / "distributed_meta.json"
    meta.write_bytes(b"\xef\xbb\xbf" + meta.read_bytes())  # an editor's "UTF-8 with BOM"
    assert DistributedCompiledProgram.from_dir(built.output_dir).plan.world_size == 2
    data = meta.read_bytes()
    meta.write_bytes(data[:10] + b"\xff" + data[10:])  # located in the file as it is, its mark counted
    line, col = data[:10].count(b"\n") + 1, 10 - data.rfind(b"\n", 0, 10)
    with pytest.raises(ValueError, match=rf"distributed_meta.json:{line}:{col}: not UTF-8 text \(byte 0xff at offset 10\)"):
        DistributedCompiledProgram.from_dir(built.output_dir)


def test_put_then_notify_wait_moves_each_ranks_data_to_the_next(tmp_path: Path) -> None:
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.put_host.compile(x, y, config=config(tmp_path))
    compiled(x, y)
    assert torch.equal(y, torch.roll(x + 1, 1, dims=0))  # y[r] = x[r-1] + 1
    level = compiled.output_dir / "next_levels/put_next"
    assert "pld.tensor.put(" in (level / "passes_dump/00_frontend.py").read_text()
    trace = json.loads((compiled.output_dir / "dfx_outputs/merged_comm_trace.json").read_text())["traceEvents"]
    starts = [e["id"] for e in trace if e["ph"] == "s"]
    ends = [e["id"] for e in trace if e["ph"] == "f"]
    assert sorted(starts) == sorted(ends) and len(set(starts)) == len(starts)
    cats = {e.get("cat") for e in trace}
    assert {"put", "notify", "wait"} <= cats
    # the wait orders each rank's clock after the peer's put landed: at least one hop of N floats
    run = compiled.last_run
    assert all(rk.cycles > 0 for rk in run.ranks)


def test_put_notify_wait_run_as_pto_comm_ops_with_the_transfer_in_the_chips_cycles(tmp_path: Path) -> None:
    """put_next's pld ops lower to pto.comm.tput/tnotify/twait; each rank's chip runs them against the
    peer's window (the simulator, not the torch form), and its kernel cycles hold the link transfer. The
    notify is issued right behind the put (once the link took its bytes, before it landed) and lands after it."""
    from pypto.driver.compiled import CompiledProgram

    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.put_host.compile(x, y, config=config(tmp_path))
    assert isinstance(compiled.programs["put_next"], CompiledProgram)
    pto = (compiled.output_dir / "next_levels/put_next/ptoas/put_next_k.pto").read_text()
    for op in ("pto.comm.peer_view", "pto.comm.tput(", "pto.comm.tnotify(", "pto.comm.twait("):
        assert op in pto, op
    compiled(x, y)
    assert torch.equal(y, torch.roll(x + 1, 1, dims=0))
    for r in range(2):
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        chip = next(e for e in events if e["cat"] == "chip")
        put = next(e for e in events if e["name"] == f"tput -> r{1 - r}")
        notify = next(e for e in events if e["cat"] == "notify" and e["task"] == "chip run put_next")
        wait = next(e for e in events if e["cat"] == "wait" and e["task"] == "chip run put_next")
        hop4 = notify["remote"]["ts"] - notify["start"]
        assert put["bytes"] == 4 * p3.N and put["end"] - put["start"] > hop4 > 0
        assert chip["start"] <= put["start"] < notify["start"] < put["end"] < notify["remote"]["ts"]
        assert notify["start"] <= wait["start"] <= wait["end"] <= chip["end"]
        # the kernel's own cycles (not a clock added after it): the put and the notify's landing are inside
        assert chip["end"] >= notify["remote"]["ts"] and chip["end"] - chip["start"] >= put["end"] - put["start"]


def test_a_comm_kernel_on_a_single_chip_names_the_op_and_the_dsl_line(tmp_path: Path) -> None:
    from pypto.device.interpreter import DeviceError
    from pypto.runtime import run

    x, y, box = torch.randn(1, p3.N), torch.zeros(1, p3.N), torch.zeros(1, p3.N)
    with pytest.raises(DeviceError, match=r"dist_l3_programs.py:\d+:\d+: pto.comm.get_rank: .* needs the ranks of "
                                          r"a multi-chip launch"):
        run(p3.put_next, x, y, box, torch.zeros(1, p3.N), torch.zeros(1, 1, dtype=torch.int32),
            config=RunConfig(save_kernels_dir=str(tmp_path / "b")))


def test_upstream_short_forms_remote_store_and_remote_load_run_as_pto(tmp_path: Path) -> None:
    from pypto.driver.compiled import CompiledProgram

    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.short_forms_host.compile(x, y, config=config(tmp_path))
    assert isinstance(compiled.programs["short_forms"], CompiledProgram)
    dsl = (compiled.output_dir / "next_levels/short_forms/passes_dump/00_frontend.py").read_text()
    assert "pld.tile.remote_store(" in dsl and "pld.tile.remote_load(" in dsl  # printed in the canonical form
    compiled(x, y)
    assert torch.equal(y, torch.roll(x + 1, 1, dims=0))


def test_a_computed_tensor_pushed_by_tensor_remote_store_goes_from_its_tile(tmp_path: Path) -> None:
    """``pld.tensor.remote_store`` of a value computed on the core: ConvertTensorToTileOps makes it
    ``pld.tile.remote_store`` of the tile (upstream's 1:1 lowering; no GM round trip before the push)."""
    from pypto.driver.compiled import CompiledProgram

    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.push_computed_host.compile(x, y, config=config(tmp_path))
    assert isinstance(compiled.programs["push_computed"], CompiledProgram)
    dumps = compiled.output_dir / "next_levels/push_computed/passes_dump"
    tiled = next(dumps.glob("*_after_ConvertTensorToTileOps.py")).read_text()
    assert "pld.tile.remote_store(" in tiled and "pld.tensor.remote_store(" not in tiled
    compiled(x, y)
    assert torch.equal(y, torch.roll(x + x, 1, dims=0))


def test_atomic_tput_from_both_ranks_adds_up_in_every_window(tmp_path: Path) -> None:
    from pypto.driver.compiled import CompiledProgram

    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.atomic_sum_host.compile(x, y, config=config(tmp_path))
    assert isinstance(compiled.programs["atomic_sum"], CompiledProgram)
    compiled(x, y)
    for r in range(2):
        assert torch.allclose(y[r], x[0] + x[1], atol=1e-6)


def test_all_to_all_v_moves_capacity_blocks_and_publishes_the_clamped_counts(tmp_path: Path) -> None:
    cap, n = p3.CAP, p3.N
    x = torch.randn(2, 2 * cap, n)
    counts = torch.tensor([[[1], [5]], [[2], [0]]], dtype=torch.int32)  # rank r sends counts[r][q] rows to q
    y, rc = torch.zeros(2, 2 * cap, n), torch.zeros(2, 2, 1, dtype=torch.int32)
    compiled = p3.a2av_host.compile(x, counts, y, rc, config=config(tmp_path))
    from pypto.driver.compiled import CompiledProgram

    assert isinstance(compiled.programs["a2av"], CompiledProgram)  # on the chips (LowerCompositeOps), not torch
    pto = (compiled.output_dir / "next_levels/a2av/ptoas/a2av_k.pto").read_text()
    assert pto.count("pto.comm.tput(") == 2 and pto.count("notify_op set") == 2 and "pld." not in pto
    compiled(x, counts, y, rc)
    for r in range(2):
        for q in range(2):  # rank q's block for r lands at rows q * cap of r's target
            assert torch.equal(y[r, q * cap : (q + 1) * cap], x[q, r * cap : (r + 1) * cap])
            assert int(rc[r, q, 0]) == min(int(counts[q, r, 0]), cap)


def test_a_host_level_all_to_all_v_runs_between_the_dispatches_and_costs_link_cycles(tmp_path: Path) -> None:
    """``pld.tensor.all_to_all_v`` in a host orchestrator (upstream's ``builtin.tensor.all_to_all_v``): the
    capacity blocks and the clamped counts move between the ranks, priced by the link model."""
    cap, n = p3.CAP, p3.N
    x = torch.randn(2, 2 * cap, n)
    counts = torch.tensor([[[1], [5]], [[2], [0]]], dtype=torch.int32)  # rank r sends counts[r][q] rows to q
    y, rc = torch.zeros(2, 2 * cap, n), torch.zeros(2, 2, 1, dtype=torch.int32)
    compiled = p3.host_a2av.compile(x, counts, y, rc, config=config(tmp_path))
    assert [d.program for d in compiled.plan.dispatches if d.rank == 0] == ["a2av_stage", "@all_to_all_v", "a2av_read"]
    config_py = compiled.output_dir / "next_levels/builtin.tensor.all_to_all_v__fp32/kernel_config.py"
    assert "'op': 'pld.tensor.all_to_all_v'" in config_py.read_text()
    compiled(x, counts, y, rc)
    for r in range(2):
        for q in range(2):  # rank q's block for r lands at rows q * cap of r's target
            assert torch.equal(y[r, q * cap : (q + 1) * cap], x[q, r * cap : (r + 1) * cap])
            assert int(rc[r, q, 0]) == min(int(counts[q, r, 0]), cap)
    events = json.loads((compiled.output_dir / "dfx_outputs/rank0/comm_events.json").read_text())["events"]
    sent = [e for e in events if e["cat"] == "send" and e["task"] == "alltoall"]
    assert sorted(e["bytes"] for e in sent) == [4, cap * n * 4]  # rank 1's capacity block and count
    assert all(e["peer"] == 1 and e["end"] > e["start"] for e in sent)  # each on the link to rank 1


def test_a_host_create_tensor_is_an_intermediate_and_a_left_out_output_is_returned(tmp_path: Path) -> None:
    """``pl.create_tensor`` in a host orchestrator: a zeroed host tensor per call (in the plan's ``locals``),
    written and read by dispatches; ``compiled(x)`` without the trailing ``pl.Out`` returns it (upstream)."""
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.scratch_host.compile(x, y, config=config(tmp_path))
    assert compiled.plan.locals == [((2, 1, p3.N), "FP32")]
    meta = json.loads((compiled.output_dir / "distributed_meta.json").read_text())["host_plan"]
    assert meta["locals"] == [{"shape": [2, 1, p3.N], "dtype": "FP32"}]
    assert meta["dispatches"][0]["args"][1]["param"] == 2  # after the two parameters
    compiled(x, y)
    assert torch.equal(y, 4 * x)
    got = compiled(x * 2)
    assert isinstance(got, torch.Tensor) and torch.equal(got, 8 * x)


def test_remote_load_after_a_barrier_reads_the_peers_window(tmp_path: Path) -> None:
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.pull_host.compile(x, y, config=config(tmp_path))
    with compiled.prepare() as rt:  # upstream's reusable dispatcher
        rt(x, y)
        assert torch.equal(y, torch.roll(x, 1, dims=0) * 2)  # y[r] = 2 * x[r-1]
        y.zero_()
        rt.run(compiled, x * 3, y)  # windows start cleared on every dispatch
        assert torch.equal(y, torch.roll(x * 3, 1, dims=0) * 2)
    with pytest.raises(RuntimeError, match=r"DistributedWorker.run\(\) called after close\(\)"):
        rt(x, y)


def test_upstreams_full_paths_of_the_pld_short_forms_run_as_the_short_forms(tmp_path: Path) -> None:
    """pld.system.world_size / get_comm_ctx / rank / nranks and pld.tensor.alloc_window_buffer / window
    (upstream's 02-primitives.md, "2-Segment vs 3-Segment Namespace") record the same plan and compile
    into the same kernel as the short forms."""
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    short = p3.pull_host.compile(x, y, config=config(tmp_path / "short"))
    full = p3.pull_host_full.compile(x, y, config=config(tmp_path / "full"))
    assert full.plan.windows == short.plan.windows
    assert [(d.rank, d.args[2:]) for d in full.plan.dispatches] == [(d.rank, d.args[2:]) for d in short.plan.dispatches]
    levels = full.output_dir / "next_levels/pull_prev_full"
    kernel = (levels / "orchestration/pull_prev_full.py").read_text()
    assert "= pld.rank(" in kernel and "= pld.nranks(" in kernel and "pld.system.rank" not in kernel  # one op each
    assert "pto.comm.get_rank" in (levels / "ptoas/pull_prev_full_k.pto").read_text()
    full(x, y)
    assert torch.equal(y, torch.roll(x, 1, dims=0) * 2)  # y[r] = 2 * x[r-1], as pull_host


def test_the_kernel_barrier_runs_as_pto_comm_ops_in_the_chips_cycles(tmp_path: Path) -> None:
    """pld.tensor.barrier lowers to tnotify/twait (a credit barrier): each rank's chip runs it, every
    rank's arrival notify lands before its wait ends, and the signal cells are cleared after it."""
    from pypto.driver.compiled import CompiledProgram

    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.pull_host.compile(x, y, config=config(tmp_path))
    assert isinstance(compiled.programs["pull_prev"], CompiledProgram)
    pto = (compiled.output_dir / "next_levels/pull_prev/ptoas/pull_prev_k.pto").read_text()
    assert pto.count("pto.comm.tnotify(") == 4 and pto.count("pto.comm.twait(") == 2
    compiled(x, y)
    assert torch.equal(y, torch.roll(x, 1, dims=0) * 2)
    for r in range(2):
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        chip = next(e for e in events if e["cat"] == "chip")
        task = "chip run pull_prev"
        notifies = [e for e in events if e["cat"] == "notify" and e["task"] == task]
        waits = [e for e in events if e["cat"] == "wait" and e["task"] == task]
        assert len(notifies) == 4 and len(waits) == 2  # +1 to both ranks; per rank: wait, then -1
        arrivals = notifies[:2]
        assert all(chip["start"] <= e["start"] and e["end"] <= chip["end"] for e in notifies + waits)
        assert chip["end"] - chip["start"] >= arrivals[1]["remote"]["ts"] - arrivals[0]["start"] > 0


def test_a_wait_nobody_notifies_is_reported_with_rank_and_task_within_the_timeout(tmp_path: Path, window_dir: Path) -> None:
    x, y = torch.zeros(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    shm = set(window_dir.glob("pypto-*"))
    compiled = p3.hang_host.compile(x, y, config=config(tmp_path, timeout_s=3.0))
    t0 = time.monotonic()
    with pytest.raises(DistributedRunError) as err:
        compiled(x, y)
    assert time.monotonic() - t0 < 3.0 + 30.0
    assert set(err.value.failures) == {0, 1}
    for task, message in err.value.failures.values():
        assert task == "chip run wait_forever"  # its twait, on the chip
        assert "timed out after 3 s" in message
    assert set(window_dir.glob("pypto-*")) <= shm  # the failed ranks removed their window files


def test_host_program_mistakes_are_named(tmp_path: Path) -> None:
    x, y = torch.zeros(2, 2, p3.N), torch.zeros(2, 2, p3.N)
    src = Path(p3.__file__).read_text().splitlines()
    # Without device=, dispatches go round-robin over the ranks in submit order (upstream's comm-less dispatch).
    plan = p3.no_device_host.compile(x, y, config=config(tmp_path)).plan
    assert [(d.rank, d.program) for d in plan.dispatches] == [(0, "scale_add"), (1, "scale_add")]
    with pytest.raises(HostPlanError, match="needs 16384 bytes, the window buffer has 4096") as e2:
        p3.big_window_host.compile(x, y, config=config(tmp_path / "big"))
    for err, text in ((e2, "pld.window(buf, [64, 64]"),):
        where, line = str(err.value).split(": error: ")[0].rsplit(":", 1)
        assert where == p3.__file__ and text in src[int(line) - 1]  # names the orchestrator's line
    with pytest.raises(ValueError, match=r"chip_host: a multi-chip @pl.jit.host orchestrator is compiled with"):
        p3.chip_host.compile(x, y)
    with pytest.raises(RuntimeError, match=r"pld.world_size\(\) can only be used inside a @pl.jit.host"):
        import pypto.language.distributed as pld

        pld.world_size()


def _examples() -> list[tuple[str, list[str]]]:
    runs = [("01_hello_rank.py", []), ("02_programming_model.py", []), ("03_window_buffer.py", []),
            ("04_barrier.py", ["--use-builtin"]), ("04_barrier.py", []), ("05_remote_load_store.py", ["--mode", "load"]),
            ("05_remote_load_store.py", ["--mode", "store"]), ("06_put_get.py", ["--mode", "put"]),
            ("06_put_get.py", ["--mode", "get"]), ("07_dynamic_rank_count.py", ["--mode", "put"]),
            ("07_dynamic_rank_count.py", ["--mode", "get"])]  # fmt: skip
    return runs


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="no upstream pypto checkout (PYPTO_UPSTREAM_DIR)")
@pytest.mark.parametrize(("example", "flags"), _examples(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_upstream_distributed_examples_run_unmodified(example: str, flags: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "PYPTO_PROG_BUILD_DIR": str(tmp_path / "builds")}
    res = subprocess.run([sys.executable, str(UPSTREAM / example), *flags], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "OK"
    assert "torch form" not in res.stderr + res.stdout  # every kernel ran simulated


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="no upstream pypto checkout (PYPTO_UPSTREAM_DIR)")
@pytest.mark.parametrize(("example", "flags"), _examples(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_upstream_distributed_examples_run_with_four_ranks(example: str, flags: list[str], tmp_path: Path) -> None:
    """Each example on 4 ranks (issue 19: "with 2 and with 4 ranks"). 01-06 fix their rank count in a
    constant and refuse other device counts, so a copy sets ``N_RANKS = 4`` (04's hand-rolled barrier then
    surfaces a 4-row signal with pl.read / pl.write); 07 takes it from ``-d``. Every kernel runs simulated."""
    text = (UPSTREAM / example).read_text(encoding="utf-8")
    if example != "07_dynamic_rank_count.py":
        assert "\nN_RANKS = 2\n" in text
        text = text.replace("\nN_RANKS = 2\n", "\nN_RANKS = 4\n")
    script = tmp_path / example
    script.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYPTO_PROG_BUILD_DIR": str(tmp_path / "builds")}
    res = subprocess.run([sys.executable, str(script), *flags, "-d", "0,1,2,3"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "OK"
    assert "torch form" not in res.stderr + res.stdout
    metas = list((tmp_path / "builds").glob("*/distributed_meta.json"))
    assert metas and all(json.loads(m.read_text())["distributed_config"]["device_ids"] == [0, 1, 2, 3] for m in metas)


def test_kernel_collectives_match_torch_distributed(tmp_path: Path) -> None:
    """Two dispatches per rank (so rank{r}/d0 and d1): mesh Max allreduce + allgather, then ring Sum
    allreduce, against torch.distributed's own all_reduce / all_gather on the same data."""
    from pypto.driver.compiled import CompiledProgram

    x = torch.randn(2, 1, p3.N)
    y, z, g = torch.zeros(2, 1, p3.N), torch.zeros(2, 1, p3.N), torch.zeros(2, 2, p3.N)
    compiled = p3.collective_host.compile(x, y, z, g, config=config(tmp_path))
    # both collectives expand to pto.comm ops on the chip (tests/python/test_distributed_collectives.py: all)
    assert isinstance(compiled.programs["reduce_ring"], CompiledProgram)
    assert isinstance(compiled.programs["reduce_mesh"], CompiledProgram)
    pto = (compiled.output_dir / "next_levels/reduce_ring/ptoas/reduce_ring_k.pto").read_text()
    assert pto.count("pto.comm.twait(") == 3 and "atomic_add" in pto  # the Sum ring: pushes, 3 waits on 2 ranks
    compiled(x, y, z, g)
    ref = launch(p3.torch_reference_collectives, DistributedConfig(world_size=2, timeout_s=TIMEOUT), x)
    for r, (mx, sm, rows) in enumerate(ref.values):
        assert torch.equal(y[r], mx) and torch.allclose(z[r], sm, atol=1e-6) and torch.equal(g[r], rows)
    for r in range(2):
        for k, name in enumerate(("reduce_mesh", "reduce_ring")):
            d = compiled.output_dir / f"dfx_outputs/rank{r}/d{k}/dispatch_program.json"
            assert json.loads(d.read_text()) == {"program": name}
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        chip = next(e for e in events if e["cat"] == "chip" and "reduce_ring" in e["name"])  # holds its waits
        assert sum(e["cat"] == "wait" and e["task"] == "chip run reduce_ring" for e in events) == 3
        assert all(chip["start"] <= e["start"] <= e["end"] <= chip["end"] for e in events
                   if e["cat"] == "wait" and e["task"] == "chip run reduce_ring")


def test_an_l3_program_runs_unchanged_under_torchrun(tmp_path: Path) -> None:
    script = tmp_path / "prog.py"
    script.write_text(p3.put_host_script(str(Path(__file__).parent), str(tmp_path)))
    torchrun = Path(sys.executable).parent / "torchrun"
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    proc = subprocess.run([str(torchrun), "--standalone", "--nproc-per-node", "2", str(script)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert all(r["ok"] for r in results)  # each process has every rank's output slice
    assert results[0]["cycles"] == results[1]["cycles"] > 0


def test_atomic_put_regions_tensor_remote_store_and_wait(tmp_path: Path) -> None:
    from pypto.driver.compiled import CompiledProgram

    x = torch.randn(2, 1, p3.N)
    y, z = torch.zeros(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.accumulate_host.compile(x, y, z, config=config(tmp_path))
    assert isinstance(compiled.programs["accumulate"], CompiledProgram)  # on the chip, not the torch form
    pto = (compiled.output_dir / "next_levels/accumulate/ptoas/accumulate_k.pto").read_text()
    assert pto.count("pto.comm.tput(") == 2  # the put (in its loop) and the tensor-level remote_store
    compiled(x, y, z)
    want = torch.zeros(1, p3.N)
    want[:, : p3.H] = x[0, :, : p3.H] + x[1, :, : p3.H]  # both ranks' halves, atomically added
    for r in range(2):
        assert torch.allclose(y[r], want, atol=1e-6)
    assert torch.equal(z, torch.roll(x, 1, dims=0))  # remote_store into the next rank's box


def test_a_rank_killed_mid_kernel_is_reported_on_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           window_dir: Path) -> None:
    """Rank 1's process dies at its first notify (the forked ranks inherit the patch): the launch reports
    rank 1 as killed in its kernel and rank 0's wait as timed out, within the timeout, and the killed
    rank's window files are not left in the way of the next run."""
    from pypto.runtime.distributed.windows import ChipLink

    real = ChipLink.notify

    def dies_on_rank_1(self: ChipLink, *args: object, **kwargs: object) -> object:
        if self.rank == 1:
            os._exit(9)
        return real(self, *args, **kwargs)

    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = p3.put_host.compile(x, y, config=config(tmp_path, timeout_s=4.0))
    shm = set(window_dir.glob("pypto-*"))
    monkeypatch.setattr(ChipLink, "notify", dies_on_rank_1)
    t0 = time.monotonic()
    with pytest.raises(DistributedRunError) as err:
        compiled(x, y)
    assert time.monotonic() - t0 < 4.0 + 30.0
    task1, why1 = err.value.failures[1]
    assert task1 == "chip run put_next" and "exited with code 9" in why1
    task0, why0 = err.value.failures[0]
    assert task0 == "chip run put_next" and "timed out after 4 s" in why0
    assert set(window_dir.glob("pypto-*")) <= shm  # the launcher removed the killed rank's windows
    monkeypatch.undo()
    compiled(x, y)  # the next run is not disturbed
    assert torch.equal(y, torch.roll(x + 1, 1, dims=0))


@pytest.mark.parametrize("world", [2, 4])
def test_a_pl_program_with_a_host_orchestrator_compiles_with_ir_compile(world: int, tmp_path: Path) -> None:
    from pypto import ir

    assert sorted(p3.GatherSum.functions) == ["chip", "step"]  # the HOST orchestrator runs on the host
    compiled = ir.compile(p3.GatherSum, output_dir=tmp_path / "l3",
                          distributed_config=DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT))
    x, y = torch.randn(world, 1, p3.N), torch.zeros(world, 1, p3.N)
    compiled(x, y)
    assert torch.allclose(y, x.sum(0, keepdim=True).expand_as(y), atol=1e-5)
    meta = json.loads((tmp_path / "l3/distributed_meta.json").read_text())
    assert meta["params"][0]["shape"] == [world, 1, p3.N]  # pl.dynamic("NR") is the world size
    assert meta["host_plan"]["windows"][0] == {"shape": [4 * p3.N], "dtype": "UINT8", "nbytes": 4096}
    with pytest.raises(ValueError, match="GatherSum: a program with a multi-chip HOST orchestrator is compiled"):
        ir.compile(p3.GatherSum)


def test_a_host_level_collective_runs_between_the_dispatches(tmp_path: Path) -> None:
    from pypto import ir

    compiled = ir.compile(p3.HostAllreduce, output_dir=tmp_path / "l3",
                          distributed_config=DistributedConfig(device_ids=[0, 1], timeout_s=TIMEOUT))
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled(x, y)
    assert torch.equal(y, x.max(0, keepdim=True).values.expand_as(y))
    steps = [d["program"] for d in json.loads((tmp_path / "l3/distributed_meta.json").read_text())["host_plan"]
             ["dispatches"] if d["rank"] == 0]  # fmt: skip
    assert steps == ["publish", "@allreduce", "consume"]
    assert sorted(p.name for p in (tmp_path / "l3/next_levels").iterdir()) == [
        "builtin.tensor.allreduce_ring__max__fp32", "consume", "publish"]  # upstream's variant folder
    config = (tmp_path / "l3/next_levels/builtin.tensor.allreduce_ring__max__fp32/kernel_config.py").read_text()
    assert "'op': 'pld.tensor.allreduce'" in config and "'mode': 'ring'" in config
    assert DistributedCompiledProgram.from_dir(tmp_path / "l3").plan.dispatches  # from_dir skips the folder


def test_a_later_dispatch_does_not_overwrite_a_window_a_peer_has_not_read_yet(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 1's publish on rank 1 waits for round 0's read of rank 1's window on rank 0 (made slow here):
    without the cross-rank order rank 0 read round 1's data (upstream's barrier signal-reuse test)."""
    from pypto import ir
    from pypto.runtime import distributed

    slow = distributed.run_on_chip

    def run_on_chip(comm, program, *args, **kw):  # noqa: ANN001, ANN202 - a wrapper of the real one
        if comm.rank == 0 and kw.get("name") == "peek":
            time.sleep(1.0)
        return slow(comm, program, *args, **kw)

    monkeypatch.setattr(distributed, "run_on_chip", run_on_chip)  # the forked ranks inherit it
    compiled = ir.compile(p3.BarrierRounds, output_dir=tmp_path / "l3",
                          distributed_config=DistributedConfig(device_ids=[0, 1], timeout_s=TIMEOUT))
    x = torch.stack([torch.arange(2 * p3.N, dtype=torch.float32).reshape(2, 1, p3.N) + 1000.0 * rd
                     for rd in range(2)])
    y = torch.zeros_like(x)
    compiled(x, y)
    assert torch.equal(y, torch.roll(x, -1, dims=1))
    plan = json.loads((tmp_path / "l3/distributed_meta.json").read_text())["host_plan"]["dispatches"]
    waits = [(d["rank"], d["program"], [(plan[j]["rank"], plan[j]["program"]) for j in d.get("after", [])])
             for d in plan if d.get("after")]
    assert (0, "publish", [(1, "peek")]) in waits and (1, "publish", [(0, "peek")]) in waits


def test_dispatches_of_one_sweep_are_never_ordered_across_ranks() -> None:
    """Kernels of one ``for r`` sweep may wait on each other's notifies: only earlier sweeps order them."""
    from pypto.driver.host_order import cross_rank_order
    from pypto.driver.host_trace import Dispatch, WindowView

    w = WindowView(0, (1, 4), "FP32")
    sweep = [Dispatch(r, "put", [w]) for r in range(2)]
    assert cross_rank_order(sweep, [{0}, {0}]) == [[], []]
    reads = [Dispatch(r, "get", [w]) for r in range(2)]
    assert cross_rank_order(sweep + reads, [{0}, {0}, set(), set()]) == [[], [], [1], [0]]
    assert cross_rank_order(reads + reads, [set()] * 4) == [[], [], [], []]  # reads after reads: no order


def test_a_dispatch_is_not_ordered_after_a_peer_kernel_whose_partner_it_precedes() -> None:
    """``for r: mesh(device=r); ring(device=r)``: mesh(1) is mesh(0)'s partner and precedes ring(1), the
    partner of ring(0); ordering it after either would deadlock. ring(1) may follow mesh(0)."""
    from pypto.driver.host_order import cross_rank_order
    from pypto.driver.host_trace import Dispatch, WindowView

    w = WindowView(0, (1, 4), "FP32")
    plan = [Dispatch(0, "mesh", [w]), Dispatch(0, "ring", [w]), Dispatch(1, "mesh", [w]), Dispatch(1, "ring", [w])]
    assert cross_rank_order(plan, [{0}] * 4) == [[], [], [], [0]]


def test_host_orch_py_renders_the_plan_with_upstreams_per_rank_ordering_tokens() -> None:
    """Every dispatch with a window and every host-level collective carries ``tensors["__comm_d0_ord"][rank]``
    (one allocation per rank) as its last tensor; a window-less dispatch does not; the text is Python."""
    import re

    from pypto.driver.host_trace import Dispatch, HostPlan, HostTensor, WindowBuffer, WindowView
    from pypto.driver.orch_codegen import render

    plan = HostPlan(2, windows=[WindowBuffer(0, (1, 8), "FP32")], locals=[((2, 8), "FP32")], params=1)
    w, x, t = WindowView(0, (1, 8), "FP32"), HostTensor(0, "x", (2, 8), "FP32"), HostTensor(1, "create_tensor0", (2, 8), "FP32")
    plan.dispatches = [Dispatch(0, "put", [x[0], w, 1], outputs={1}), Dispatch(1, "plain", [x[1], t[1]], outputs={1}),
                       Dispatch(0, "@allgather", [w, w, {"options": {}, "numbers": []}]), Dispatch(0, "!reduce", [t])]
    text = render(plan, ["x"])
    compile(text, "host_orch.py", "exec")
    assert re.search(r'tensors\["__comm_d0_ord"\] = \[torch\.zeros\(.*for _ in range\(', text)
    assert 'tensors["create_tensor0"] = torch.zeros((2, 8), dtype=torch.float32)' in text
    blocks = text.split(" = TaskArgs()")[1:]
    token = 'make_tensor_arg(orch._worker, tensors["__comm_d0_ord"][{}]), TensorArgType.INOUT)'
    assert token.format(0) in blocks[0] and "_submit_chip(orch, callables[\"put\"], _ta_0, config, 0)" in blocks[0]
    assert "__comm_d0_ord" not in blocks[1] and 'tensors["create_tensor0"][1]), TensorArgType.OUTPUT_EXISTING' in blocks[1]
    assert token.format(0) in blocks[2] and 'callables["builtin.tensor.allgather__fp32"], _ta_2, _ta_2_config, worker=0' in blocks[2]
    assert 'orch.submit_sub(sub_ids["reduce"], _ta_3)' in blocks[3]


def test_each_host_collective_variant_gets_upstreams_folder_name() -> None:
    from pypto.driver.builtin_levels import variant
    from pypto.driver.host_trace import WindowView

    f32, f16, sig = WindowView(0, (1, 8), "FP32"), WindowView(0, (1, 8), "FP16"), WindowView(1, (2,), "INT32")
    assert variant("allreduce", [f32, sig], {"options": {}}) == "allreduce__sum__fp32"
    assert variant("allreduce", [f16, sig], {"options": {"op": "Max", "mode": "ring"}}) == "allreduce_ring__max__fp16"
    assert variant("broadcast", [f32, sig], {"options": {"root": 1}}) == "broadcast__root1__fp32"
    assert variant("barrier", [sig], {"options": {}}) == "barrier__fp32"
    assert variant("reduce_scatter", [f32, sig], {"options": {}}) == "reduce_scatter__sum__fp32"
    assert variant("all_to_all", [f32, f32, sig], {"options": {}}) == "all_to_all__fp32"
    assert variant("all_to_all_v", [f32, f32, sig, sig, sig], {"options": {}}) == "all_to_all_v__fp32"
