"""``enable_incore_trace`` (issue 13): ``dfx_outputs/incore/<task_id>_<kernel>/`` -- the clean in-core trace,
``instr_metrics.json`` and the bottleneck table -- and their fidelity to the interpreter and the PMU."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from run_report_kernels import run_kernel
from test_dfx_trace import check_event_format

from pypto.device.interpreter import InstrRecord
from pypto.runtime import RunConfig
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.bottleneck import bottleneck, bottleneck_text
from pypto.runtime.dfx.cleantrace import PIPE_ORDER, Slice, clean_trace
from pypto.runtime.dfx.incore import COLUMN_TYPES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import pipelining  # noqa: E402

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves

CONTRACT_KEYS = {"version", "kernel", "task_id", "core", "core_type", "clock_mhz", "column_types", "instructions",
                 "bottleneck"}  # fmt: skip


def _parts(build: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted((build / "dfx_outputs" / "incore").iterdir())}


def _sums(metrics: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in metrics["instructions"]:
        out[r["pipe"]] = out.get(r["pipe"], 0) + r["cycles"]
    return out


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    saved = dict(__import__("pypto.runtime.config", fromlist=["_DFX_DEFAULTS"])._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        build = tmp_path_factory.mktemp("incore") / "build"
        result = run_kernel("mixed", build, enable_incore_trace=True, enable_pmu=2)
    finally:
        set_dfx_defaults(**saved)
    return result, build


def test_every_task_part_gets_its_folder_with_the_contract_fields(mixed: tuple[Any, Path]) -> None:
    result, build = mixed
    parts = _parts(build)
    want = {f"{t.task_id}_{name}" for t in result.tasks for name in t.part_names}
    assert set(parts) == want and len(want) == 4  # the Group task has an AIC and an AIV part
    assert result.dfx_outputs["enable_incore_trace"] == [
        parts[n] / f for n in sorted(parts) for f in ("trace.clean.json", "instr_metrics.json", "bottleneck.txt")
    ]
    for name, folder in parts.items():
        m = json.loads((folder / "instr_metrics.json").read_text())
        assert set(m) == CONTRACT_KEYS and m["version"] == 1 and m["column_types"] == COLUMN_TYPES
        assert name == f"{m['task_id']}_{m['kernel']}" and m["core"].lower().startswith(m["core_type"])
        assert m["clock_mhz"] == pytest.approx(result.clock_hz / 1e6)
        assert [r["index"] for r in m["instructions"]] == list(range(len(m["instructions"])))
        for r in m["instructions"]:
            assert set(r) == set(COLUMN_TYPES) and r["pipe"] in PIPE_ORDER
            assert r["cycles"] == r["end_cycle"] - r["start_cycle"] >= 0
            assert r["pto_loc"] and r["pto_loc"].count(":") >= 2
        loads = [r for r in m["instructions"] if r["op"] == "pto.tload"]
        assert loads and all(r["bytes"] and r["bytes"] > 0 and r["dsl_loc"] for r in loads)
        assert all(r["vector_util"] is None for r in m["instructions"] if r["pipe"] != "VECTOR")
    vec = [r for f in parts.values() for r in json.loads((f / "instr_metrics.json").read_text())["instructions"]
           if r["vector_util"] is not None]  # fmt: skip
    assert vec and all(0 < r["vector_util"] <= 1 for r in vec)


def test_per_pipe_sums_equal_the_interpreter_and_the_pmu(mixed: tuple[Any, Path]) -> None:
    result, build = mixed
    parts = _parts(build)
    with (build / "dfx_outputs" / "pmu.csv").open() as f:
        pmu = list(csv.DictReader(f))
    checked = 0
    for t in result.tasks:
        for name, run in zip(t.part_names, t.kernel_runs, strict=True):
            m = json.loads((parts[f"{t.task_id}_{name}"] / "instr_metrics.json").read_text())
            sums = _sums(m)
            assert sums == run.per_pipe_busy
            core = int(m["core"][3:])
            (row,) = [r for r in pmu if int(r["task_id"], 16) == t.task_id and int(r["core_id"]) == core]
            for key, pipe in (("vec", "VECTOR"), ("cube", "CUBE"), ("scalar", "SCALAR"), ("mte1", "MTE1"),
                              ("mte2", "MTE2"), ("mte3", "MTE3")):  # fmt: skip
                assert int(row[f"{key}_busy_cycles"]) == sums.get(pipe, 0)
            assert int(row["pmu_total_cycles"]) == run.cycles == m["bottleneck"]["kernel_cycles"]
            checked += 1
    assert checked == 4


def test_the_clean_trace_follows_the_rebuild_rules(mixed: tuple[Any, Path]) -> None:
    _, build = mixed
    for folder in _parts(build).values():
        trace = json.loads((folder / "trace.clean.json").read_text())
        check_event_format(trace)
        events = trace["traceEvents"]
        assert len({e["pid"] for e in events}) == 1  # one process: the core
        names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
        lanes = [names[t].split(" ")[0].split("#")[0] for t in sorted(names)]
        assert lanes == sorted(lanes, key=PIPE_ORDER.__getitem__) and "SCALAR" not in lanes  # dataflow order
        assert not {"SET_FLAG", "WAIT_FLAG", "PIPE_BARRIER"} & {e["name"] for e in events if e["ph"] == "X"}
        clock = trace["metadata"]["clock_mhz"]
        for e in (e for e in events if e["ph"] == "X"):
            assert e["ts"] == pytest.approx(0, abs=1e-9) or e["ts"] > 0
            assert e["dur"] == pytest.approx(e["args"]["cycles"] / clock, abs=2e-6)
        s = {e["id"]: e for e in events if e["ph"] == "s"}
        f = {e["id"]: e for e in events if e["ph"] == "f"}
        for fid, start in s.items():  # no arrow points backwards in time
            assert start["ts"] <= f[fid]["ts"]
    m = json.loads((_parts(build)["1_rr_double"] / "trace.clean.json").read_text())
    assert m["metadata"]["flows"] >= 2  # load -> add -> store are each one arrow


def test_two_runs_write_the_same_bytes(tmp_path: Path) -> None:
    outs = []
    for _ in range(2):
        run_kernel("diamond", tmp_path / "build", enable_incore_trace=True)
        outs.append(
            {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "build" / "dfx_outputs").rglob("*.*")}
        )
    assert outs[0] == outs[1] and len(outs[0]) == 9


def test_the_bottleneck_table(mixed: tuple[Any, Path]) -> None:
    result, build = mixed
    for folder in _parts(build).values():
        m = json.loads((folder / "instr_metrics.json").read_text())
        b = m["bottleneck"]
        busy = _sums(m)
        assert {p["pipe"]: p["busy"] for p in b["pipes"]} == busy
        assert b["bound"]["cycles"] == max(busy.values()) and busy[b["bound"]["pipe"]] == b["bound"]["cycles"]
        assert b["kernel_cycles"] >= b["bound"]["cycles"]
        assert b["ratio"] == pytest.approx(b["kernel_cycles"] / b["bound"]["cycles"], abs=1e-4)
        steps = b["critical_chain"]["steps"]
        assert steps and steps[-1]["end"] == b["kernel_cycles"]  # the chain sets the length
        for a, c in zip(steps, steps[1:], strict=False):
            assert c["start"] >= a["end"] and c["index"] > a["index"]
        first = steps[0]  # from cycle 0, or from a pop waiting on the Group task's other core
        assert (first["after"], first["start"]) == ("kernel start", 0) or (
            first["after"] == "other core" and first["op"].startswith("pto.tpop") and first["start"] > 0
        )
        assert b["critical_chain"]["cycles"] + b["critical_chain"]["idle"] == b["kernel_cycles"]
        top = b["top"]
        assert [t["cycles"] for t in top] == sorted((t["cycles"] for t in top), reverse=True)
        assert all(t["dsl_loc"] for t in top)
        text = (folder / "bottleneck.txt").read_text()
        assert f"kernel cycles    {b['kernel_cycles']:>9}" in text and "critical chain" in text
        assert text.rstrip() in result.summary()  # the run's summary prints every table


def _intervals(metrics: dict[str, Any], pipe: str, op: str) -> list[tuple[int, int]]:
    return sorted(
        (r["start_cycle"], r["end_cycle"]) for r in metrics["instructions"] if r["pipe"] == pipe and r["op"] == op
    )


def test_pipelining_overlaps_mte2_with_vector_and_range_alternates(tmp_path: Path) -> None:
    """benchmarks/pipelining.py: under pl.pipeline(stage=2) a load runs while the previous tile's exp does;
    under pl.range loads and exps alternate."""
    torch.manual_seed(0)
    a = torch.randn(pipelining.NT * pipelining.TR, pipelining.TC)
    got = {}
    for kernel in (pipelining.exp_range, pipelining.exp_pipelined):
        out = torch.zeros_like(a)
        build = tmp_path / kernel.__name__
        kernel(a, out, config=RunConfig(save_kernels_dir=str(build), enable_incore_trace=True))
        torch.testing.assert_close(out, torch.exp(a), rtol=1e-4, atol=1e-4)
        (folder,) = _parts(build).values()
        got[kernel.__name__] = json.loads((folder / "instr_metrics.json").read_text())
    for name, m in got.items():
        loads, exps = _intervals(m, "MTE2", "pto.tload"), _intervals(m, "VECTOR", "pto.texp")
        assert len(loads) == len(exps) == pipelining.NT
        overlaps = sum(1 for lo in loads for ex in exps if min(lo[1], ex[1]) > max(lo[0], ex[0]))
        if name == "exp_pipelined":
            assert overlaps >= pipelining.NT - 2
            assert m["bottleneck"]["bound"]["pipe"] == "MTE2" and m["bottleneck"]["ratio"] < 1.3
        else:
            assert overlaps == 0
            order = [p for _, p in sorted([(s, "M") for s, _ in loads] + [(s, "V") for s, _ in exps])]
            assert order == ["M", "V"] * pipelining.NT
            assert m["bottleneck"]["ratio"] > 1.8
    assert got["exp_pipelined"]["bottleneck"]["kernel_cycles"] < got["exp_range"]["bottleneck"]["kernel_cycles"]


def test_overlapping_slices_pack_into_sub_lanes() -> None:
    slices = [Slice(0, 0, "MTE2", "a", 0, 100), Slice(1, 0, "MTE2", "b", 50, 150), Slice(2, 0, "MTE2", "c", 120, 200),
              Slice(3, 0, "VECTOR", "v", 160, 210), Slice(4, 0, "SCALAR", "s", 0, 10)]  # fmt: skip
    trace = clean_trace(["core0"], slices, [(2, 3, "MTE2->V"), (4, 3, "S->V")], 1.0)
    check_event_format(trace)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    by_name = {e["name"]: names[e["tid"]] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert by_name == {
        "a": "MTE2 (load GM->L1/UB)",
        "b": "MTE2#1",
        "c": "MTE2 (load GM->L1/UB)",
        "v": "VECTOR (compute)",
    }
    assert trace["metadata"]["flows"] == 1 and trace["metadata"]["skipped_flows"] == 1  # SCALAR dropped
    kept = clean_trace(["core0"], slices, [], 1.0, keep_scalar=True)
    assert "SCALAR (setup)" in {e["args"]["name"] for e in kept["traceEvents"] if e["name"] == "thread_name"}


def test_the_flag_is_a_run_config_flag() -> None:
    assert RunConfig(enable_incore_trace=1).enable_incore_trace is True
    assert RunConfig(enable_incore_trace=True).save_kernels  # its files go into the build directory
    with pytest.raises(ValueError, match="enable_incore_trace"):
        RunConfig(enable_incore_trace=2)
    set_dfx_defaults(enable_incore_trace=True)
    try:
        assert RunConfig().enable_incore_trace is True
    finally:
        set_dfx_defaults()


def test_the_bottleneck_of_an_empty_or_sync_only_kernel() -> None:
    empty = bottleneck([], [], 0)
    assert empty["bound"] == {"pipe": None, "cycles": 0} and empty["critical_chain"]["steps"] == []
    assert "kernel cycles            0" in bottleneck_text(empty, "empty")
    sync = [InstrRecord(0, "pto.set_flag", "SET_FLAG", "MTE2", "PIPE_MTE2", 0, 0, "signal", None, None, "x"),
            InstrRecord(1, "pto.wait_flag", "WAIT_FLAG", "VECTOR", "PIPE_V", 0, 0, "wait", None, None, "x")]  # fmt: skip
    table = bottleneck(sync, [(0, 1)], 0)
    assert table["ratio"] is None and table["top"] == [] and table["critical_chain"]["length"] == 0
    text = bottleneck_text(table, "sync only")
    assert "per-pipe bound" not in text and "MTE2" not in text  # no pipe did any work


def test_the_critical_chain_follows_the_binding_dependency() -> None:
    """A vector op waiting on a flag: the chain runs load -> (flag) -> add, not through the vector queue."""
    recs = [
        InstrRecord(0, "pto.tadd", "TADD", "VECTOR", "PIPE_V", 0, 10, "compute", None, "k.py:1:1", "8x8 fp32"),
        InstrRecord(1, "pto.tload", "TLOAD", "MTE2", "PIPE_MTE2", 0, 100, "transfer", None, "k.py:2:1", "gm->vec 256B"),
        InstrRecord(2, "pto.set_flag", "SET_FLAG", "MTE2", "PIPE_MTE2", 100, 100, "signal", None, None, "PIPE_MTE2->PIPE_V e0"),
        InstrRecord(3, "pto.wait_flag", "WAIT_FLAG", "VECTOR", "PIPE_V", 100, 100, "wait", None, None, "PIPE_MTE2->PIPE_V e0"),
        InstrRecord(4, "pto.tmul", "TMUL", "VECTOR", "PIPE_V", 100, 130, "compute", None, "k.py:3:1", "8x8 fp32"),
    ]  # fmt: skip
    table = bottleneck(recs, [(2, 3)], 130)
    steps = table["critical_chain"]["steps"]
    assert [(s["index"], s["after"]) for s in steps] == [(1, "kernel start"), (4, "flag PIPE_MTE2->PIPE_V e0")]
    assert table["critical_chain"]["per_pipe"] == {"MTE2": 100, "VECTOR": 30}
    assert table["bound"] == {"pipe": "MTE2", "cycles": 100} and table["ratio"] == 1.3
    assert [t["op"] for t in table["top"]] == ["pto.tload", "pto.tmul", "pto.tadd"]


def test_a_run_removes_an_earlier_runs_part_folders_it_has_no_part_for(tmp_path: Path) -> None:
    """A part folder of an earlier run (a task graph that changed with the inputs) would read as this run's: it is
    removed once this run's parts are written. A folder that is not a part's, or holds more than a part's files,
    is the user's and stays."""
    build = tmp_path / "build"
    run_kernel("mixed", build, enable_incore_trace=True)
    incore = build / "dfx_outputs" / "incore"
    current = set(_parts(build))
    stale = incore / "999_old_kernel"
    stale.mkdir()
    for name in ("trace.clean.json", "instr_metrics.json", "bottleneck.txt"):
        (stale / name).write_text("{}")
    notes = incore / "notes"
    notes.mkdir()
    (notes / "bottleneck.txt").write_text("mine")
    annotated = incore / "998_old_kernel"
    annotated.mkdir()
    (annotated / "bottleneck.txt").write_text("{}")
    (annotated / "my_comments.md").write_text("mine")
    run_kernel("mixed", build, enable_incore_trace=True)
    assert set(_parts(build)) == current | {"notes", "998_old_kernel"}
    assert (notes / "bottleneck.txt").read_text() == "mine" and (annotated / "my_comments.md").is_file()
    for name in current:
        assert {p.name for p in (incore / name).iterdir()} == {"trace.clean.json", "instr_metrics.json", "bottleneck.txt"}
