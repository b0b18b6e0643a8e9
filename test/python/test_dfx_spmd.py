"""SPMD tasks on the simulated chip (``with pl.spmd(n)``, examples/advanced/09_spmd.py): the blocks run
with their own block index on their own cores, the AICPU model dispatches them one by one, and every
DFX flag at every level shows the blocks as runtime-dfx-formats.md §2-§8 say."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch
from test_dfx_trace import check_event_format

import pypto.language as pl
from pypto.errors import ParserError
from pypto.runtime import RunConfig, run
from pypto.runtime.dfx.run_report import report_model
from pypto.runtime.dfx.sched_overhead import analyze
from pypto.target.model import load_target
from pypto.tools import deps_viewer

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves

ROOT = Path(__file__).resolve().parents[2]
SPMD_BLOCKS = {0: 4, 1: 2, 2: 1}  # t0 scale_rows x4, t1 add_rows_strided x2, t2 matmul_64 plain
ALL_FLAGS = {"enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_pmu": 2, "enable_dep_gen": True,
             "enable_scope_stats": True}  # fmt: skip


def _example() -> ModuleType:
    sys.path.insert(0, str(ROOT / "examples"))
    spec = importlib.util.spec_from_file_location("pypto_example_spmd_dfx", ROOT / "examples/advanced/09_spmd.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = _example()


def _run(build: Path, **flags: Any) -> tuple[Any, Path]:
    """The example's ``spmd_scale_add`` run with ``flags``; checks its numbers against torch."""
    torch.manual_seed(0)
    args = EXAMPLE.scale_add_inputs()
    EXAMPLE.spmd_scale_add(*args, config=RunConfig(save_kernels_dir=str(build), aicpu_thread_num=1, **flags))
    want = EXAMPLE.scale_add_reference(*args[:3])
    torch.testing.assert_close(args[3], want["out"], rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(args[4], want["total"], rtol=1e-3, atol=1e-3)
    result = EXAMPLE.spmd_scale_add.compile(*args, config=RunConfig(save_kernels_dir=str(build))).last_run
    return result, build / "dfx_outputs"


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """One run with every flag at its highest level."""
    from pypto.runtime import config as run_config

    saved = dict(run_config._DFX_DEFAULTS)
    run_config.set_dfx_defaults()
    try:
        return _run(tmp_path_factory.mktemp("spmd") / "build", **ALL_FLAGS)
    finally:
        run_config.set_dfx_defaults(**saved)


def test_blocks_run_on_their_own_cores_one_dispatch_each(full: tuple[Any, Path]) -> None:
    result, _ = full
    c = load_target("a2a3").aicpu
    assert [t.block_num for t in result.tasks] == [4, 2, 1]
    for t in result.tasks:
        assert [b.block_idx for b in t.blocks] == list(range(t.block_num))
        cores = [core for b in t.blocks for core in b.core_ids]
        assert len(cores) == len(set(cores)) == t.block_num  # each block on a core of its own, at once
        assert {result.core_types[x] for x in cores} == {"aic" if t.task_id == 2 else "aiv"}
        dispatches = [b.dispatch for b in t.blocks]
        assert dispatches == [dispatches[0] + k * c.dispatch for k in range(t.block_num)]  # popped one by one
        assert (t.dispatch, t.start) == (min(dispatches), min(b.start for b in t.blocks))
        assert (t.end, t.finish) == (max(b.end for b in t.blocks), max(b.finish for b in t.blocks))
    t0, t1, _ = result.tasks
    assert min(b.dispatch for b in t1.blocks) > t0.finish  # released only when t0's last block is retired
    first = result.scheduler_phases[0][0]
    assert (first["kind"], first["tasks_processed"], first["pop_hit"]) == ("dispatch", 4, 4)  # t0's 4 blocks


def test_a_block_reads_its_index() -> None:
    """Block b of a 4-block launch copies row chunk b of x to chunk (block_num - 1 - b) of out: the
    chunks come out reversed only if every block reads its own index and the launch's block count."""

    @pl.jit.incore
    def reverse_chunks(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        b = pl.tile.get_block_idx()
        t = pl.load(x, [b * 8, 0], [8, 64])
        pl.store(t, [(pl.tile.get_block_num() - 1 - b) * 8, 0], out)
        return out

    @pl.jit
    def launch(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.spmd(core_num=4):
            out = reverse_chunks(x, out)
        return out

    x, out = torch.randn(32, 64), torch.zeros(32, 64)
    launch(x, out)
    torch.testing.assert_close(out, torch.cat([x[24:], x[16:24], x[8:16], x[:8]]))


def test_spmd_outside_orchestration_is_a_located_error() -> None:
    with pytest.raises(ParserError, match="pl.spmd") as e:

        @pl.jit.incore
        def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.spmd(2):
                t = pl.load(x, [0, 0], [8, 64])
            pl.store(t, [0, 0], out)
            return out

        bad.lower(torch.zeros(8, 64), torch.zeros(8, 64))
    assert "test_dfx_spmd.py" in str(e.value)


@pytest.mark.parametrize("count", ["0", "n"])
def test_bad_block_count_is_a_located_error(count: str) -> None:
    src = f"""
import pypto.language as pl
n = 3.5

@pl.jit.incore
def k(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    pl.store(pl.load(x, [0, 0], [8, 64]), [0, 0], out)
    return out

@pl.jit
def launch(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd({count}):
        out = k(x, out)
    return out
"""
    path = Path(__file__).parent / f"_spmd_bad_{count}.py"
    path.write_text(src)
    try:
        spec = importlib.util.spec_from_file_location(f"_spmd_bad_{count}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with pytest.raises(ParserError, match="block count must be a positive integer") as e:
            module.launch.lower(torch.zeros(8, 64), torch.zeros(8, 64))
        assert f"_spmd_bad_{count}.py:12" in str(e.value)
    finally:
        path.unlink()


def _swimlane(out: Path) -> dict[str, Any]:
    return json.loads((out / "chip_swimlane_records.json").read_text())


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_swimlane_rows_per_block_at_every_level(tmp_path: Path, full: tuple[Any, Path], level: int) -> None:
    result, out = _run(tmp_path / "build", enable_chip_swimlane=level) if level < 4 else full
    records = _swimlane(out)
    assert records["chip_swimlane_level"] == level
    assert set(records) == {"chip_swimlane_level", "metadata", "aicore_tasks"} | (
        {"aicpu_tasks"} if level >= 2 else set()) | ({"aicpu_scheduler_phases"} if level >= 3 else set()) | (
        {"aicpu_orchestrator_phases"} if level >= 4 else set())  # fmt: skip
    assert set(records["metadata"]) == {"clock_freq_hz", "num_cores", "core_types"} | (
        {"core_to_thread"} if level >= 3 else set())  # fmt: skip
    rows = records["aicore_tasks"]
    assert len(rows) == sum(SPMD_BLOCKS.values()) and all(len(r) == 6 for r in rows)
    by_task = {raw: [r for r in rows if r[1] == raw] for raw in SPMD_BLOCKS}
    for raw, n in SPMD_BLOCKS.items():  # one row per block, all with the task's token, each on its own core
        assert len(by_task[raw]) == n and len({r[0] for r in by_task[raw]}) == n
        blocks = result.tasks[raw].blocks
        assert sorted(r[3:] for r in by_task[raw]) == sorted([b.start, b.end, b.start - b.dispatch] for b in blocks)
    keys = [(r[0], r[2]) for r in rows]
    assert len(set(keys)) == len(keys)  # (core_id, reg_task_id) is a key
    for core in {r[0] for r in rows}:  # reg_task_id counts the core's dispatches: 1, 2, ...
        assert sorted(r[2] for r in rows if r[0] == core) == list(range(1, 1 + sum(r[0] == core for r in rows)))
    if level >= 2:
        cpu = {(r[0], r[1]): r for r in records["aicpu_tasks"]}
        assert set(cpu) == set(keys)
        for r in rows:  # the join: dispatch <= start - receive_to_start, end <= finish
            d, f = cpu[(r[0], r[2])][2:]
            assert d + r[5] == r[3] and r[4] <= f
    if level >= 3:
        dispatched = sum(p["pop_hit"] for t in records["aicpu_scheduler_phases"] for p in t if p["kind"] == "dispatch")
        assert dispatched == sum(SPMD_BLOCKS.values())  # one pop per block
    if level >= 4:
        (orch,) = records["aicpu_orchestrator_phases"]
        assert [(p.get("kind", "submit"), p["task_id"]) for p in orch] == [
            ("alloc", 0), ("submit", 0), ("submit", 1), ("submit", 2)]  # fmt: skip
    assert rows == _swimlane(full[1])["aicore_tasks"]  # collection costs nothing: every level, the same figures


def test_deps_json_and_viewer_show_the_blocks(full: tuple[Any, Path]) -> None:
    _, out = full
    doc = json.loads((out / "deps.json").read_text())
    assert [(t["task_id"], t["block_num"]) for t in doc["tasks"]] == [("0", 4), ("1", 2), ("2", 1)]
    assert all(set(t) == {"task_id", "scope", "kernel_ids", "block_num", "args"} for t in doc["tasks"])
    assert sorted({(e["pred"], e["succ"]) for e in doc["edges"]}) == [("0", "1"), ("1", "2")]
    assert deps_viewer.main([str(out / "deps.json")]) == 0
    text = (out / "deps_viewer.txt").read_text()
    assert "TASK 0 kind=submit func_id=[-1,0,-1] SPMD block num = 4 fanin=0 fanout=1\n" in text
    assert "TASK 1 kind=submit func_id=[-1,1,-1] SPMD block num = 2 fanin=1 fanout=1\n" in text
    assert "TASK 2 kind=submit func_id=[2,-1,-1] fanin=1 fanout=0\n" in text  # a plain task: no SPMD mark
    if shutil.which("dot") is None or importlib.util.find_spec("graphviz") is None:
        pytest.skip("Graphviz not installed (make test installs Debian graphviz and the PyPI package)")
    assert deps_viewer.main([str(out / "deps.json"), "--format", "html"]) == 0
    html = (out / "deps_viewer.html").read_text()
    assert ">x4<" in html and ">x2<" in html and ">x1<" not in html  # SPMD marks
    assert html.lower().count('stroke="#c62828"') >= 2  # SPMD red borders
    assert "0 · scale_rows ↓0 ↑1" in html and "2 · matmul_64 ↓1 ↑0" in html


def test_merged_trace_labels_and_anchors(full: tuple[Any, Path]) -> None:
    _, out = full
    (merged,) = out.glob("merged_swimlane_*.json")
    trace = json.loads(merged.read_text())
    check_event_format(trace)
    events = trace["traceEvents"]
    worker = [e for e in events if e["ph"] == "X" and e["pid"] == 4 and e["tid"] < 19000]  # AICPU_j lanes: markers
    assert sorted(e["name"] for e in worker) == sorted(
        ["scale_rows_spmd(t0)"] * 4 + ["add_rows_strided_spmd(t1)"] * 2 + ["matmul_64(t2)"])  # fmt: skip
    assert len({e["tid"] for e in worker if e["name"] == "scale_rows_spmd(t0)"}) == 4  # a lane per block's core
    deps = [e for e in events if e["ph"] == "s" and e["name"] in ("dependency", "hb_violation")]
    assert len(deps) == 2 * 2  # an SPMD task: one anchor per func_id (its earliest slice): 2 pairs, pid 4 and pid 3
    def earliest(label: str) -> tuple[int, float]:
        bar = min((e for e in worker if e["name"].endswith(f"({label})")), key=lambda e: (e["ts"], e["tid"]))
        return bar["tid"], bar["ts"]

    # each arrow leaves its producer's earliest block bar (t0 -> t1, t1 -> t2)
    assert sorted((e["tid"], e["ts"]) for e in deps if e["pid"] == 4) == sorted([earliest("t0"), earliest("t1")])
    assert sum(e["name"] == "dispatch" for e in events if e["ph"] == "s") == 14  # per block: to both views
    orch = [e["name"] for e in events if e["ph"] == "X" and e["pid"] == 1]
    assert orch == ["alloc(t0)", "submit(t0)", "submit(t1)", "submit(t2)"]


def test_pmu_rows_per_block(tmp_path: Path, full: tuple[Any, Path]) -> None:
    result, out = full
    lines = (out / "pmu.csv").read_text().splitlines()
    rows = [dict(zip(lines[0].split(","), line.split(","), strict=True)) for line in lines[1:]]
    assert [r["task_id"] for r in rows] == ["0x" + f"{t:016x}" for t, n in SPMD_BLOCKS.items() for _ in range(n)]
    cores = {int(r["core_id"]) for r in rows if r["task_id"].endswith("0")}
    assert cores == {c for b in result.tasks[0].blocks for c in b.core_ids}
    for r, b in zip(rows, [b for t in result.tasks for b in t.blocks], strict=True):
        assert int(r["pmu_total_cycles"]) == b.end - b.start  # each block's own kernel run
    for event in (1, 4, 5, 6, 7, 8):
        _, o = _run(tmp_path / f"pmu{event}", enable_pmu=event)
        body = (o / "pmu.csv").read_text().splitlines()
        assert len(body) == 1 + sum(SPMD_BLOCKS.values()) and body[1].endswith(f",{event}")


@pytest.mark.parametrize("level", [1, 2])
def test_args_dump_after_the_last_block(tmp_path: Path, full: tuple[Any, Path], level: int) -> None:
    """The after-completion capture of an SPMD task holds every block's rows (taken after its last block)."""
    _, out = full if level == 2 else _run(tmp_path / "build", enable_dump_args=level)
    doc = json.loads((out / "args_dump" / "args_dump.json").read_text())
    assert doc["dump_args_level"] == level
    if level == 1:  # partial: nothing marked with dumps= in the example
        assert doc["total_args"] == 0
        return
    blob = (out / "args_dump" / "args.bin").read_bytes()
    (scaled,) = [a for a in doc["args"] if a["task_id"] == f"0x{0:016x}" and a["stage"] == "after_completion"]
    (x,) = [a for a in doc["args"] if a["task_id"] == f"0x{0:016x}" and a["stage"] == "before_dispatch"]

    def arr(a: dict[str, Any]) -> np.ndarray:
        return np.frombuffer(blob[a["bin_offset"] : a["bin_offset"] + a["bin_size"]], "<f4").reshape(a["shape"])

    np.testing.assert_allclose(arr(scaled), 2.0 * arr(x), rtol=1e-6)  # all 4 blocks' rows, not block 3's only


def test_args_dump_copies_no_earlier_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An SPMD task's after-completion states are captured after its last block only: what an earlier block
    left is never copied when the next block writes over it (with the run's input check no state of this
    run is overwritten after its capture, so nothing is copied), and the dump holds the same rows."""
    from pypto.runtime.dfx import args_dump

    copies: list[int] = []
    freeze = args_dump._Payload.freeze

    def counted(self: Any) -> None:
        if self.array is not None:
            copies.append(self.nbytes)
        freeze(self)

    monkeypatch.setattr(args_dump._Payload, "freeze", counted)
    _, out = _run(tmp_path / "build", enable_dump_args=2)
    assert copies == []
    doc = json.loads((out / "args_dump" / "args_dump.json").read_text())
    after = [int(a["task_id"], 16) for a in doc["args"] if a["stage"] == "after_completion"]
    assert sorted(set(after)) == sorted(SPMD_BLOCKS)  # each task's outputs, once


def test_scope_stats_and_run_report(full: tuple[Any, Path]) -> None:
    result, out = full
    lines = (out / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["version"] == 6 and len(lines) > 1
    model = report_model(result, 2, 4)
    tasks = {t["id"]: t for t in model["tasks"]}
    assert [tasks[i]["block_num"] for i in SPMD_BLOCKS] == [4, 2, 1]
    assert [len(tasks[i]["blocks"]) for i in SPMD_BLOCKS] == [4, 2, 1]
    bars = [b for c in model["cores"] for b in c["bars"]]
    assert sorted((b["task"], b["block"]) for b in bars) == [(t, k) for t, n in SPMD_BLOCKS.items() for k in range(n)]
    assert len(model["pmu"]["rows"]) == sum(SPMD_BLOCKS.values())
    assert model["sched"]["window"]["spmd"] == [{"task": 0, "blocks": 4, "rows": 4}, {"task": 1, "blocks": 2, "rows": 2}]
    assert (out / "run_report.html").read_text().count("add_rows_strided") >= 1


def test_sched_overhead_analysis_cli(full: tuple[Any, Path]) -> None:
    _, out = full
    proc = subprocess.run(
        [sys.executable, "-m", "pypto.tools.sched_overhead_analysis", "--chip-swimlane-records-json",
         str(out / "chip_swimlane_records.json"), "--deps-json", str(out / "deps.json")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "3 tasks, 7 core rows, 2 dependency pairs" in proc.stdout
    assert "spmd: t0 x4 blocks (4 core rows), t1 x2 blocks (2 core rows)\n" in proc.stdout
    a = analyze(_swimlane(out), [(0, 1), (1, 2)])
    assert a["critical_path"]["tasks"] == ["t0", "t1", "t2"]


def test_swimlane_converter_reads_the_spmd_run(full: tuple[Any, Path], tmp_path: Path) -> None:
    """The upstream-format tool path: records + deps.json + name map -> the same SPMD labels and anchors."""
    _, out = full
    dest = tmp_path / "merged.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pypto.tools.swimlane_converter", str(out / "chip_swimlane_records.json"),
         "-o", str(dest), "--overhead"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    trace = json.loads(dest.read_text())
    check_event_format(trace)
    names = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == 4]
    assert names.count("scale_rows_spmd(t0)") == 4 and names.count("add_rows_strided_spmd(t1)") == 2
    assert "matmul_64(t2)" in names
    counters = {e["name"] for e in trace["traceEvents"] if e["ph"] == "C"}
    assert {"oh_aiv_idle", "oh_has_overhead", "shared_ready_queue"} <= counters


def test_scope_forms_launch_blocks() -> None:
    """``for i in pl.spmd(n)`` (upstream's loop form) and ``with pl.spmd(n): with pl.at(...)`` outline
    their body into one kernel whose call is the SPMD launch; ``sync_start`` co-starts the blocks."""

    @pl.jit
    def loop_form(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        for i in pl.spmd(2):
            off = i * 64
            out = pl.store(pl.add(pl.load(a, [off, 0], [64, 128]), pl.load(b, [off, 0], [64, 128])), [off, 0], out)
        return out

    @pl.jit
    def at_form(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.spmd(4, sync_start=True):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="quarter"):
                row = pl.tile.get_block_idx() * 32
                pl.store(pl.mul(pl.load(a, [row, 0], [32, 128]), 3.0), [row, 0], out)
        return out

    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    result = run(loop_form.specialize(a, b, out), a, b, out)
    torch.testing.assert_close(out, a + b)
    assert [t.block_num for t in result.tasks] == [2]
    assert "with pl.spmd(2):" in str(loop_form.lower(a, b, out))  # the printed program keeps the launch
    out = torch.zeros(128, 128)
    result = run(at_form.specialize(a, out), a, out)
    torch.testing.assert_close(out, 3 * a)
    (t,) = result.tasks
    assert t.func_name == "quarter" and t.block_num == 4
    assert len({blk.dispatch for blk in t.blocks}) == 1  # sync_start: one drain publishes every block
    assert any(p["kind"] == "drain" for thread in result.scheduler_phases for p in thread)


def test_incore_trace_has_one_folder_per_block(tmp_path: Path) -> None:
    """Each block of an SPMD task is its own kernel run: its own in-core folder (``_b<idx>``), on its own
    core, whose cycles are that block's (no block overwrites another's files)."""
    result, dfx = _run(tmp_path / "build", enable_incore_trace=True)
    folders = sorted(p.name for p in (dfx / "incore").iterdir())
    want = sorted(
        f"{t.task_id}_{name}" + (f"_b{b.block_idx}" if len(t.blocks) > 1 else "")
        for t in result.tasks for b in t.blocks for name in {p.func_name for p in result.graph.tasks[t.task_id].parts}
    )  # fmt: skip
    assert folders == want and any(name.endswith("_b3") for name in folders)
    for task, blocks in SPMD_BLOCKS.items():
        if blocks > 1:  # a task's blocks each on their own core
            mine = [f for f in folders if f.startswith(f"{task}_")]
            cores = {json.loads((dfx / "incore" / f / "instr_metrics.json").read_text())["core"] for f in mine}
            assert len(mine) == len(cores) == blocks, mine
