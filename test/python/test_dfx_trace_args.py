"""The merged trace's §3 details that upstream's swimlane converter defines (runtime-dfx-formats.md §3): the
Worker View bars' hints, the dependency flows' task counts, the AICPU lanes' markers, the labels of a
deps.json without a name map; and the converter's and sched_overhead_analysis's errors on bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_dfx_spmd import _example
from test_dfx_trace import check_event_format

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.runtime.dfx.trace import chrome_trace, chrome_trace_text, deps_facts, func_label, task_label
from pypto.tools.sched_overhead_analysis import main as analysis_main
from pypto.tools.swimlane_converter import main as converter_main

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """09_spmd's ``spmd_scale_add`` (a tensor.create buffer, SPMD tasks of 4 and 2 blocks and a plain one) at
    swimlane level 4 with deps.json: its ``dfx_outputs``."""
    from pypto.runtime import config as run_config

    example = _example()
    build = tmp_path_factory.mktemp("args") / "build"
    saved = dict(run_config._DFX_DEFAULTS)
    run_config.set_dfx_defaults()
    try:
        example.spmd_scale_add(*example.scale_add_inputs(),
                               config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=4,
                                                enable_dep_gen=True))  # fmt: skip
    finally:
        run_config.set_dfx_defaults(**saved)
    return build / "dfx_outputs"


def _events(path: Path) -> list[dict[str, Any]]:
    trace = json.loads(path.read_text())
    check_event_format(trace)
    return trace["traceEvents"]


def _deps(dfx: Path) -> tuple[dict[int, dict[str, Any]], list[tuple[int, int]]]:
    doc = json.loads((dfx / "deps.json").read_text())
    pairs = list(dict.fromkeys((int(e["pred"]), int(e["succ"])) for e in doc["edges"]))
    return {int(t["task_id"]): t for t in doc["tasks"]}, pairs


def _worker_bars(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["ph"] == "X" and e["pid"] == 4 and e["tid"] < 19000]


def _merged(dfx: Path) -> Path:
    (merged,) = dfx.glob("merged_swimlane_*.json")
    return merged


def test_func_ids_without_a_name_are_func_id_letters() -> None:
    """Upstream's letters: func_id + 1 in bijective base 26."""
    assert [func_label(i, {}) for i in (0, 1, 25, 26, 27, 701, 702)] == [
        "func_0_a", "func_1_b", "func_25_z", "func_26_aa", "func_27_ab", "func_701_zz", "func_702_aaa"]  # fmt: skip
    assert func_label(3, {"3": "mine"}) == "mine"


def test_a_deps_json_without_a_name_map_labels_by_func_id(run_dir: Path, tmp_path: Path) -> None:
    """Only the records and deps.json in a folder: §3's ``func_<id>_<letters>(tN)`` (``_spmd`` for an SPMD
    task), and ``event-hint`` carries the func_id of the bar's core type (they read ``task(t0)``)."""
    for name in ("chip_swimlane_records.json", "deps.json"):
        shutil.copy(run_dir / name, tmp_path / name)
    assert converter_main([str(tmp_path / "chip_swimlane_records.json")]) == 0
    tasks, _ = _deps(run_dir)
    core_types = json.loads((run_dir / "chip_swimlane_records.json").read_text())["metadata"]["core_types"]
    bars = _worker_bars(_events(tmp_path / "merged_swimlane.json"))
    assert bars
    for bar in bars:
        raw, core = int(bar["args"]["event-hint"].split(",")[0].removeprefix("Task:t")), (bar["tid"] - 10000) // 10
        kids = tasks[raw]["kernel_ids"]
        fid = kids[0] if core_types[core] == "aic" else kids[1] if kids[1] >= 0 else kids[2]
        assert 0 <= fid < 26
        spmd = "_spmd" if tasks[raw]["block_num"] > 1 else ""
        assert bar["name"] == f"func_{fid}_{chr(ord('a') + fid)}{spmd}({task_label(raw)})"
        assert bar["args"]["event-hint"] == f"Task:{task_label(raw)}, FuncId:{fid}, CoreId:{core}"


def test_worker_bars_carry_upstreams_hints(run_dir: Path) -> None:
    """Every Worker View bar: ``event-hint`` ``Task:tN, FuncId:f, CoreId:c`` and the degree-led ``fanout-hint`` /
    ``fanin-hint`` of deps.json's pairs; the func_id is the run's deps.json's slot for the bar's core type (aic:
    slot 0; aiv: slot 1, else 2), as a trace drawn from that file would say."""
    tasks, pairs = _deps(run_dir)
    core_types = json.loads((run_dir / "chip_swimlane_records.json").read_text())["metadata"]["core_types"]
    bars = _worker_bars(_events(_merged(run_dir)))
    assert bars
    for bar in bars:
        raw = bar["args"]["taskId"]
        core = (bar["tid"] - 10000) // 10
        aic, aiv0, aiv1 = tasks[raw]["kernel_ids"]
        func_id = aic if core_types[core] == "aic" else aiv0 if aiv0 >= 0 else aiv1
        assert func_id >= 0
        outs = [task_label(s) for p, s in pairs if p == raw]
        ins = [task_label(p) for p, s in pairs if s == raw]
        assert bar["args"]["event-hint"] == f"Task:t{raw}, FuncId:{func_id}, CoreId:{core}"
        assert bar["args"]["fanout-hint"] == f"{len(outs)}: [{', '.join(outs)}]"
        assert bar["args"]["fanin-hint"] == f"{len(ins)}: [{', '.join(ins)}]"
    assert any(b["args"]["fanin-hint"] != "0: []" for b in bars) and any(b["args"]["fanout-hint"] != "0: []" for b in bars)


def test_fanin_lists_producers_in_upstreams_order() -> None:
    """Upstream lists a consumer's producers by the producer's first edge, not by the consumer's edges; no
    deps: ``0: []``."""
    records = {"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv"]},
               "aicore_tasks": [[0, 2, 1, 10, 20, 0], [0, 1, 2, 30, 40, 0], [0, 4, 3, 50, 60, 0],
                                [0, 3, 4, 70, 80, 0]]}  # fmt: skip
    bars = {e["args"]["taskId"]: e["args"] for e in chrome_trace(records, None, [(2, 4), (1, 3), (2, 3)])["traceEvents"]
            if e["ph"] == "X"}  # fmt: skip
    assert bars[3]["fanin-hint"] == "2: [t2, t1]" and bars[2]["fanout-hint"] == "2: [t4, t3]"
    alone = chrome_trace(records)["traceEvents"]
    assert {(e["args"]["fanin-hint"], e["args"]["fanout-hint"]) for e in alone if e["ph"] == "X"} == {("0: []", "0: []")}


def test_dependency_flows_carry_the_task_counts(run_dir: Path, tmp_path: Path) -> None:
    """``input_task_count`` / ``output_task_count`` on both ends of each dependency flow (upstream: beside the
    flow's fields): the consumer's and producer's deps.json ``block_num`` (1 for a plain task), in the run's
    trace and the converter's."""
    tasks, _ = _deps(run_dir)
    out = tmp_path / "t.json"
    assert converter_main([str(run_dir / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    for events in (_events(_merged(run_dir)), _events(out)):
        bars = {(e["pid"], e["tid"], e["ts"]): e for e in events if e["ph"] == "X" and e["pid"] in (3, 4)}
        flows = [e for e in events if e["ph"] in "sf" and e["name"] in ("dependency", "hb_violation")]
        assert len(flows) >= 4
        counts = set()
        starts = {e["id"]: e for e in flows if e["ph"] == "s"}
        ends = {e["id"]: e for e in flows if e["ph"] == "f"}
        for f in flows:
            s, e = starts[f["id"]], ends[f["id"]]
            pred = bars[(s["pid"], s["tid"], s["ts"])]["args"]["taskId"]
            succ = bars[(e["pid"], e["tid"], e["ts"])]["args"]["taskId"]
            assert f["output_task_count"] == max(tasks[pred]["block_num"], 1)
            assert f["input_task_count"] == max(tasks[succ]["block_num"], 1)
            counts.add((f["input_task_count"], f["output_task_count"]))
        assert len(counts) > 1  # SPMD and plain ends both seen


def test_alloc_steps_are_markers_on_the_orchestrators_aicpu_lane(run_dir: Path) -> None:
    """§3 / upstream: an alloc is a marker on Worker View's ``AICPU_<scheduler threads + i>`` lane (and stays a
    bar on the orchestrator's lane)."""
    records = json.loads((run_dir / "chip_swimlane_records.json").read_text())
    threads = max(records["metadata"]["core_to_thread"]) + 1
    allocs = [p for p in records["aicpu_orchestrator_phases"][0] if p.get("kind") == "alloc"]
    assert allocs
    events = _events(_merged(run_dir))
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["pid"] == 4 and e.get("tid", 0) >= 19000}
    assert lanes == {19000 + j: f"AICPU_{j}" for j in range(threads + 1)}
    markers = [e for e in events if e["ph"] == "X" and e["pid"] == 4 and e["tid"] >= 19000]
    orch = [e for e in events if e["ph"] == "X" and e["pid"] == 1 and e["name"].startswith("alloc(")]
    assert [m["name"] for m in markers] == [f"alloc({task_label(p['task_id'])})" for p in allocs] == [o["name"] for o in orch]
    assert all(m["tid"] == 19000 + threads and m["dur"] >= 0.02 for m in markers)
    assert [m["ts"] for m in markers] == [o["ts"] for o in orch]
    assert all(m["args"] == {"phase": "alloc", "task_id": p["task_id"], "event-hint": m["name"]}
               for m, p in zip(markers, allocs, strict=True))  # fmt: skip


def _marker_records() -> dict[str, Any]:
    """Level 4 on one AIV core: t1 and t3 run kernels; t2 is a dummy (a marker of thread 0, no kernel), t4 a
    predicated skip, t5 a submit with neither (upstream: an alloc); markers as short as a cycle."""
    return {"chip_swimlane_level": 4, "metadata": {"clock_freq_hz": 1e9, "core_types": ["aiv"], "core_to_thread": [0]},
            "aicore_tasks": [[0, 1, 1, 1000, 2000, 10], [0, 3, 2, 5000, 6000, 10]],
            "aicpu_tasks": [[0, 1, 900, 2100], [0, 2, 4900, 6100]],
            "aicpu_scheduler_phases": [[
                {"kind": "dispatch", "start_cycles": 880, "end_cycles": 900, "loop_iter": 0, "tasks_processed": 1},
                {"kind": "dummy_task", "start_cycles": 3000, "end_cycles": 3000, "loop_iter": 1, "tasks_processed": 0,
                 "task_id": 2},
                {"kind": "predicated_skip", "start_cycles": 3001, "end_cycles": 3001, "loop_iter": 1,
                 "tasks_processed": 0, "task_id": 4},
                {"kind": "dispatch", "start_cycles": 4880, "end_cycles": 4900, "loop_iter": 2, "tasks_processed": 1}]],
            "aicpu_orchestrator_phases": [[
                {"submit_idx": i, "task_id": t, "start_cycles": 100 * i, "end_cycles": 100 * i + 50}
                for i, t in enumerate((1, 2, 3, 4, 5))]]}  # fmt: skip


def test_scheduler_markers_go_to_the_aicpu_lanes_and_anchor_arrows() -> None:
    """``dummy_task`` / ``predicated_skip`` records: Worker View markers on ``AICPU_<thread>`` (not Sched bars),
    at least 0.02 us unless the next marker starts sooner; a task with no kernel bar gets its dependency
    arrows from its marker; a submit of a task with no row, no marker and no deps.json entry is an alloc."""
    records = _marker_records()
    facts = deps_facts({1: {"kernel_ids": [-1, 7, -1]}, 2: {"kernel_ids": [-1, -1, -1]},
                        3: {"kernel_ids": [-1, 7, -1]}, 4: {"kernel_ids": [-1, 30, -1]}},
                       [(1, 2), (2, 3)])  # fmt: skip
    events = chrome_trace(records, deps=facts)["traceEvents"]
    check_event_format({"traceEvents": events})
    markers = {e["name"]: e for e in events if e["ph"] == "X" and e["pid"] == 4 and e["tid"] >= 19000}
    assert set(markers) == {"dummy(t2)", "func_30_ae(t4)", "alloc(t5)"}
    dummy, skip = markers["dummy(t2)"], markers["func_30_ae(t4)"]
    assert markers["alloc(t5)"]["tid"] == 19001  # AICPU_<scheduler threads + 0>
    assert dummy["tid"] == skip["tid"] == 19000
    assert dummy["args"] == {"loop_iter": 1, "task_id": 2, "event-hint": "dummy(t2)", "phase": "dummy_task"}
    assert skip["args"] == {"loop_iter": 1, "task_id": 4, "event-hint": "func_30_ae(t4)", "predicated_pass": False}
    assert dummy["dur"] == pytest.approx(0.001) and skip["dur"] == 0.02  # the next marker is 1 ns later
    assert not [e for e in events if e["ph"] == "X" and e["pid"] == 2 and e["args"]["phase"] in ("dummy_task",
                                                                                                 "predicated_skip")]
    flows = [e for e in events if e["ph"] == "s" and e["name"] in ("dependency", "hb_violation") and e["pid"] == 4]
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert sorted((f["tid"], ends[f["id"]]["tid"]) for f in flows) == [(10000, 19000), (19000, 10000)]
    alone = chrome_trace(records)["traceEvents"]  # no deps.json: t5 has no row and no marker
    allocs = [e for e in alone if e["ph"] == "X" and e["pid"] == 4 and e["name"].startswith("alloc(")]
    assert [(e["name"], e["tid"]) for e in allocs] == [("alloc(t5)", 19001)]
    assert {e["name"] for e in alone if e["ph"] == "X" and e["tid"] == 19000} == {"dummy(t2)", "task(t4)"}


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(chip_swimlane_level=9), "chip_swimlane_level is 9, not one of 1, 2, 3, 4"),
    (lambda r: r["aicpu_scheduler_phases"][0][1].update(kind=5), "aicpu_scheduler_phases[0][1].kind is 5, not one of"),
    (lambda r: r["aicpu_scheduler_phases"][0][0].update(kind="dispatched"), '[0][0].kind is "dispatched", not one of'),
    (lambda r: r["metadata"].update(core_types=["aiv", "aic"][:0]), "aicore_tasks[0] is on core 0, but metadata.core_types has 0"),
    (lambda r: r["metadata"].update(core_types=["AIV"]), 'metadata.core_types[0] is "AIV", not "aic" or "aiv"'),
])  # fmt: skip
def test_the_converter_refuses_records_it_would_misdraw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, message: str
) -> None:
    """A level §2 does not have, a phase kind it does not list (drawn as ``5(1)``), a core with no core type
    (a lane ``CORE_3``): one located line, no output. A run's own records (``trusted``) are not checked."""
    records = _marker_records()
    change(records)
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(records))
    assert converter_main([str(bad), "-o", str(tmp_path / "t.json")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].count(f"{bad}: ") == 1 and message in err[0], err
    assert not (tmp_path / "t.json").exists()
    json.loads(chrome_trace_text(records, trusted=True))  # drawn as it is


def test_a_bad_deps_field_is_one_line_naming_file_and_field(run_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """Both tools check deps.json with deps_viewer's reader: the file and the field, once (the analysis said
    the file twice and Python's words; the converter Python's words)."""
    doc = json.loads((run_dir / "deps.json").read_text())
    doc["edges"][0]["pred"] = "abc"
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps(doc))
    records = tmp_path / "chip_swimlane_records.json"
    shutil.copy(run_dir / "chip_swimlane_records.json", records)
    capsys.readouterr()
    assert analysis_main(["--chip-swimlane-records-json", str(records), "--deps-json", str(deps)]) == 1
    assert converter_main([str(records)]) == 1  # the sibling deps.json
    want = f'{deps}: deps.json does not have the documented tasks/edges: edges[0].pred: expected a uint64 as a JSON ' \
           f'string, got "abc"'
    err = capsys.readouterr().err.splitlines()
    assert err == [f"sched_overhead_analysis: error: {want}", f"swimlane_converter: error: {want}"]
    assert not (tmp_path / "merged_swimlane.json").exists()


@pytest.mark.parametrize("main", [converter_main, analysis_main])
def test_help_describes_the_tool_in_a_whole_sentence(main: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The ``--help`` description: a sentence ending in a full stop, with no reST markup (the converter's had an
    unclosed backquote, the analysis's stopped at "...: the six")."""
    main(["--help"])  # cli_main: argparse's exit is the return code
    text = capsys.readouterr().out
    description = " ".join(text.split("\n\n")[1].split())
    assert description.endswith(").") or description.endswith("."), description
    assert "`" not in description and ":mod:" not in description and not description.endswith("six")
    assert len(description.split()) >= 8


WORKER_ARGS = ["event-hint", "fanout-hint", "fanin-hint", "duration-us", "kernel-duration-us", "local_setup_us", "taskId"]
SCHEDULER_ARGS = ["event-hint", "dispatch-time-us", "finish-time-us", "aicpu-duration-us", "taskId"]
"""Upstream's args of a Worker View (pid 4) and a Scheduler View (pid 3) bar, in its order."""


def test_task_id_is_the_raw_integer_id() -> None:
    """``taskId`` on both views' bars is upstream's raw id, ``ring << 32 | local``, as a JSON integer (it was the
    label string ``"r1t7"``); the label stays in the name and the event-hint."""
    raw = (1 << 32) | 7
    records = {"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv"]},
               "aicore_tasks": [[0, raw, 1, 10, 20, 2], [0, 3, 2, 30, 40, 0]],
               "aicpu_tasks": [[0, 1, 5, 22], [0, 2, 25, 41]]}  # fmt: skip
    text = chrome_trace_text(records)
    assert f'"taskId":{raw}}}' in text and '"taskId":3}' in text
    bars = [e for e in json.loads(text)["traceEvents"] if e["ph"] == "X"]
    assert sorted((e["pid"], e["args"]["taskId"]) for e in bars) == [(3, 3), (3, raw), (4, 3), (4, raw)]
    ringed = [e for e in bars if e["args"]["taskId"] == raw]
    assert {e["name"] for e in ringed} == {"task(r1t7)"}
    assert {e["args"]["event-hint"] for e in ringed} == {"Task:r1t7, FuncId:-1, CoreId:0"}


def test_both_views_bars_carry_upstreams_args(run_dir: Path, tmp_path: Path) -> None:
    """A Scheduler View bar carries upstream's ``event-hint`` (its Worker View bar's), ``dispatch-time-us``,
    ``finish-time-us``, ``aicpu-duration-us`` and ``taskId`` (it had ``taskId`` only); a Worker View bar also
    its ``duration-us``: the run's trace and the converter's, with the records' dispatch and finish cycles."""
    records = json.loads((run_dir / "chip_swimlane_records.json").read_text())
    freq = records["metadata"]["clock_freq_hz"]
    cpu = {(r[0], r[1]): r for r in records["aicpu_tasks"]}
    raw_of = {(r[0], r[2]): r[1] for r in records["aicore_tasks"]}
    out = tmp_path / "t.json"
    assert converter_main([str(run_dir / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    for events in (_events(_merged(run_dir)), _events(out)):
        workers = {(e["tid"], e["args"]["taskId"]): e for e in _worker_bars(events)}
        views = [e for e in events if e["ph"] == "X" and e["pid"] == 3]
        assert len(views) == len(cpu) == len(workers)
        for bar in workers.values():
            assert list(bar["args"]) == WORKER_ARGS and bar["args"]["duration-us"] == bar["dur"]
        cycles = {(raw_of[key], (key[0] * 10 + 10000)): row[3] - row[2] for key, row in cpu.items()}
        for bar in views:
            args = bar["args"]
            assert list(args) == SCHEDULER_ARGS
            assert args["event-hint"] == workers[(bar["tid"], args["taskId"])]["args"]["event-hint"]
            assert args["dispatch-time-us"] == bar["ts"] and args["aicpu-duration-us"] == bar["dur"]
            assert args["finish-time-us"] == pytest.approx(bar["ts"] + bar["dur"], abs=2e-6)
            assert args["aicpu-duration-us"] == pytest.approx(cycles[(args["taskId"], bar["tid"])] * 1e6 / freq, abs=2e-6)


def _queue_records() -> dict[str, Any]:
    """Level 3 on one AIV core: a thread's phases, each with queue depths at its start and end but the last
    dispatch (its end only); a resolve inside the complete."""
    depths = [([1, 0, 0], [0, 0, 0]), ([0, 1, 0], [0, 2, 1]), ([5, 5, 5], [6, 6, 6]), ([0, 3, 0], [0, 4, 0])]
    kinds = [("dispatch", 10, 20), ("complete", 30, 40), ("release", 50, 60), ("complete", 70, 80)]
    phases = [{"kind": k, "start_cycles": s, "end_cycles": e, "loop_iter": n, "tasks_processed": 1,
               "shared_at_start": d[0], "shared_at_end": d[1]} for n, ((k, s, e), d) in enumerate(zip(kinds, depths, strict=True))]
    phases.insert(2, {"kind": "resolve", "start_cycles": 32, "end_cycles": 35, "loop_iter": 1, "tasks_processed": 1,
                      "shared_at_start": [0, 0, 0], "shared_at_end": [0, 0, 0]})
    phases.append({"kind": "dispatch", "start_cycles": 90, "end_cycles": 95, "loop_iter": 4, "tasks_processed": 1,
                   "shared_at_end": [7, 7, 7]})
    return {"chip_swimlane_level": 3, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv"], "core_to_thread": [0]},
            "aicore_tasks": [[0, 1, 1, 22, 28, 0]], "aicpu_tasks": [[0, 1, 20, 29]],
            "aicpu_scheduler_phases": [phases]}  # fmt: skip


def test_the_queue_counter_samples_the_end_of_complete_and_dispatch_phases() -> None:
    """Upstream's ``shared_ready_queue``: one sample per complete / dispatch phase, its end depths at its end, and
    only when it has both depth lists (the others' are zero-filled: a sample at every phase's start and end drew
    false dips); the counter's lane is ``shared_ready_queue (global)``."""
    events = chrome_trace(_queue_records())["traceEvents"]
    check_event_format({"traceEvents": events})
    bars = [e for e in events if e["ph"] == "X" and e["pid"] == 2]
    want = [(round(b["ts"] + b["dur"], 6), d) for b, d in zip(bars, [[0, 0, 0], [0, 2, 1], None, None, [0, 4, 0], None], strict=True)
            if d is not None]  # fmt: skip
    assert [b["name"] for b in bars] == ["dispatch(1)", "complete(1)", "resolve(1)", "release(1)", "complete(1)",
                                         "dispatch(1)"]  # fmt: skip
    samples = [(e["ts"], [e["args"]["AIC"], e["args"]["AIV"], e["args"]["MIX"]]) for e in events if e["ph"] == "C"]
    assert samples == want
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name" and e["pid"] == 2}
    assert lanes[3999] == "shared_ready_queue (global)"


def test_the_inner_scheduler_lane_is_named_as_its_thread() -> None:
    """Upstream names a thread's second lane (tid + 1: resolve) ``Sched_i`` too (it was ``Sched_i_inner``)."""
    events = chrome_trace(_queue_records())["traceEvents"]
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name" and e["pid"] == 2}
    assert lanes[30000] == lanes[30001] == "Sched_0"
    assert [e["name"] for e in events if e["ph"] == "X" and e["pid"] == 2 and e["tid"] == 30001] == ["resolve(1)"]


def _mixed_records() -> tuple[dict[str, Any], Any]:
    """Level 2, an AIC core and three AIV cores (1 us a cycle): t1 a mixed task on cores 0-2 (its core 2 row ends
    after t2 starts), t2 after it on core 3; t3 a mixed SPMD task (2 blocks: AIC on core 0, AIV on cores 1 and
    2, core 2's the earlier) before t4 on core 3; and their deps.json facts."""
    rows = [(0, 1, 100, 200), (1, 1, 110, 210), (2, 1, 105, 300), (3, 2, 250, 400),
            (0, 3, 500, 550), (1, 3, 505, 560), (2, 3, 502, 560), (3, 4, 700, 800)]  # fmt: skip
    regs: dict[int, int] = {}
    aicore, aicpu = [], []
    for core, raw, start, end in rows:
        reg = regs[core] = regs.get(core, 0) + 1
        aicore.append([core, raw, reg, start, end, 0])
        aicpu.append([core, reg, start - 2, end + 5])
    records = {"chip_swimlane_level": 2,
               "metadata": {"clock_freq_hz": 1e6, "core_types": ["aic", "aiv", "aiv", "aiv"]},
               "aicore_tasks": aicore, "aicpu_tasks": aicpu}  # fmt: skip
    facts = deps_facts({1: {"kernel_ids": [5, 6, 6]}, 2: {"kernel_ids": [-1, 7, -1]},
                        3: {"kernel_ids": [5, 6, 6], "block_num": 2}, 4: {"kernel_ids": [-1, 7, -1]}},
                       [(1, 2), (3, 4)])  # fmt: skip
    return records, facts


def test_dependency_arrows_leave_every_core_of_a_mixed_task() -> None:
    """Upstream's anchors: a plain mixed task's arrows leave each of its bars (every core; it was the earliest
    only), each an ``hb_violation`` when that bar ends after the consumer's starts; an SPMD task's leave its
    earliest bar per func_id (a mixed SPMD task: its AIC and its AIV kernel's). Both views; without deps.json a
    task on several core types is not SPMD (upstream's rule): t3's arrows leave every bar too."""
    records, facts = _mixed_records()
    for deps in (facts, None):
        events = chrome_trace(records, edges=[(1, 2), (3, 4)], deps=deps)["traceEvents"]
        check_event_format({"traceEvents": events})
        ends = {e["id"]: e for e in events if e["ph"] == "f"}
        flows = sorted((e["pid"], e["tid"], ends[e["id"]]["tid"], e["name"]) for e in events
                       if e["ph"] == "s" and e["name"] in ("dependency", "hb_violation"))  # fmt: skip
        t1 = [(pid, 10000 + 10 * core, 10030, "hb_violation" if core == 2 else "dependency")
              for pid in (3, 4) for core in (0, 1, 2)]  # fmt: skip
        t3 = [(pid, 10000 + 10 * core, 10030, "dependency") for pid in (3, 4) for core in ((0, 2) if deps else (0, 1, 2))]
        assert flows == sorted(t1 + t3), deps
        counts = {(e["tid"], e["input_task_count"], e["output_task_count"]) for e in events
                  if e["ph"] == "s" and e["pid"] == 4 and e["ts"] > 300}  # fmt: skip
        assert counts == ({(10000, 1, 2), (10020, 1, 2)} if deps else {(10000, 1, 1), (10010, 1, 1), (10020, 1, 1)})


def _x(events: list[dict[str, Any]], pid: int) -> list[dict[str, Any]]:
    return [e for e in events if e["ph"] == "X" and e["pid"] == pid]


def test_only_resolve_is_drawn_on_the_second_scheduler_lane() -> None:
    """§3 / upstream: ``Sched_i``'s tid + 1 holds its ``resolve`` phases only; ``drain_prepare`` and
    ``drain_publish`` stay on ``Sched_i``, nested inside their ``drain`` (they were on tid + 1)."""
    records = _queue_records()
    records["aicpu_scheduler_phases"][0][5:5] = [
        {"kind": k, "start_cycles": s, "end_cycles": e, "loop_iter": 3, "tasks_processed": 2}
        for k, s, e in (("drain", 82, 88), ("drain_prepare", 82, 85), ("drain_publish", 85, 88))]  # fmt: skip
    events = chrome_trace(records)["traceEvents"]
    check_event_format({"traceEvents": events})  # Sched_0's bars disjoint or nested
    lanes = {e["name"]: e["tid"] for e in _x(events, 2)}
    assert lanes.pop("resolve(1)") == 30001
    assert {"drain(2)", "drain_prepare(2)", "drain_publish(2)"} <= set(lanes) and set(lanes.values()) == {30000}


def _attributed_records() -> dict[str, Any]:
    """:func:`_queue_records` with three more task rows: one finishing inside the second complete phase, one
    between two phases (upstream: the next complete's), one after the last complete (none's)."""
    records = _queue_records()
    records["aicore_tasks"] += [[0, 2, 2, 62, 68, 0], [0, 3, 3, 42, 44, 0], [0, 4, 4, 85, 90, 0]]
    records["aicpu_tasks"] += [[0, 2, 61, 75], [0, 3, 41, 45], [0, 4, 84, 99]]
    return records


def test_phase_bars_carry_upstreams_args() -> None:
    """Upstream's phase args: ``phase``, ``loop_iter``, ``tasks_processed``, both depth lists as
    ``shared_at_start (aic,aiv,mix)`` / ``shared_at_end (aic,aiv,mix)`` (only when the phase has both), and on
    a complete phase ``finishes_processed`` (its tasks_processed) and ``finish_rows_attributed``: the task rows
    whose finish it holds, or, between phases, the next complete's (the rows finishing at 29 go to the one at
    30-40, at 45 and 75 to the one at 70-80, at 99 to none)."""
    records = _attributed_records()
    events = chrome_trace(records)["traceEvents"]
    phases = records["aicpu_scheduler_phases"][0]
    bars = _x(events, 2)
    assert len(bars) == len(phases)
    rows = {30: 1, 70: 2}  # complete start cycle -> rows: 29 (before it); 45 (between) and 75 (inside)
    for bar, p in zip(bars, phases, strict=True):
        want: dict[str, Any] = {"phase": p["kind"], "loop_iter": p["loop_iter"], "tasks_processed": p["tasks_processed"]}
        if "shared_at_start" in p and "shared_at_end" in p:
            want["shared_at_start (aic,aiv,mix)"] = p["shared_at_start"]
            want["shared_at_end (aic,aiv,mix)"] = p["shared_at_end"]
        if p["kind"] == "complete":
            want["finishes_processed"] = p["tasks_processed"]
            want["finish_rows_attributed"] = rows[p["start_cycles"]]
        assert bar["args"] == want and list(bar["args"]) == list(want), (bar["args"], want)
    del phases[0]["loop_iter"]  # upstream reads a missing loop_iter as 0
    assert _x(chrome_trace(records)["traceEvents"], 2)[0]["args"]["loop_iter"] == 0


def test_a_runs_complete_phases_attribute_every_finish(run_dir: Path, tmp_path: Path) -> None:
    """A run's complete phase starts at the finish of each task row it retires (the simulated scheduler
    records a row's finish as the phase's start; a run's complete phases may touch, a finish at one's end
    being the next one's): its ``finish_rows_attributed`` are those rows, every row once (the run's trace
    and the converter's)."""
    records = json.loads((run_dir / "chip_swimlane_records.json").read_text())
    threads = records["metadata"]["core_to_thread"]
    out = tmp_path / "t.json"
    assert converter_main([str(run_dir / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    for events in (_events(_merged(run_dir)), _events(out)):
        total = 0
        for i, phases in enumerate(records["aicpu_scheduler_phases"]):
            drawn = [p for p in phases if p["kind"] not in ("dummy_task", "predicated_skip")]
            bars = [e for e in _x(events, 2) if e["tid"] in (30000 + 10 * i, 30001 + 10 * i)]
            for bar, p in zip(bars, drawn, strict=True):
                if p["kind"] == "complete":
                    held = sum(threads[c] == i and f == p["start_cycles"] for c, _, _, f in records["aicpu_tasks"])
                    assert bar["args"]["finish_rows_attributed"] == held
                    assert bar["args"]["finishes_processed"] == p["tasks_processed"]
                    total += held
        assert total == len(records["aicpu_tasks"])


def test_events_carry_upstreams_cat_id_cname_and_sort_indexes(run_dir: Path, tmp_path: Path) -> None:
    """As upstream writes them: metadata ``cat`` ``__metadata``, a ``process_sort_index`` (= pid) per process,
    ``thread_sort_index`` 100 on the queue counter's lane; task bars and AICPU markers ``cat`` ``event`` with
    distinct integer ``id``s, phase bars ``scheduler`` (complete ``good``, dispatch ``terrible``), orchestrator
    bars ``orchestrator`` (submit ``rail_animation``), alloc markers ``olive``, counters ``queue``; a
    dependency flow's ends and a complete flow's start carry the ``bind_id`` of the bar they sit on."""
    out = tmp_path / "t.json"
    assert converter_main([str(run_dir / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    for events in (_events(_merged(run_dir)), _events(out)):
        meta = [e for e in events if e["ph"] == "M"]
        assert {e["cat"] for e in meta} == {"__metadata"}
        assert {e["pid"]: e["args"]["sort_index"] for e in meta if e["name"] == "process_sort_index"} == {
            1: 1, 2: 2, 3: 3, 4: 4}  # fmt: skip
        assert [(e["pid"], e["tid"], e["args"]) for e in meta if e["name"] == "thread_sort_index"] == [
            (2, 3999, {"sort_index": 100})]  # fmt: skip
        tasks = [e for e in events if e["ph"] == "X" and e["pid"] in (3, 4)]
        assert {e["cat"] for e in tasks} == {"event"}
        ids = [e["id"] for e in tasks]
        assert all(type(i) is int for i in ids) and len(set(ids)) == len(ids)
        cnames = {(e["name"].split("(")[0], e["cname"]) for e in _x(events, 2)}
        assert {("complete", "good"), ("dispatch", "terrible")} <= cnames
        assert {e["cat"] for e in _x(events, 2)} == {"scheduler"}
        assert {(e["cat"], e["cname"]) for e in _x(events, 1) if e["name"].startswith("submit(")} == {
            ("orchestrator", "rail_animation")}  # fmt: skip
        allocs = [e for e in _x(events, 4) if e["name"].startswith("alloc(")]
        assert allocs and {e["cname"] for e in allocs} == {"olive"}
        assert {e["cat"] for e in events if e["ph"] == "C"} == {"queue"}
        at = {(e["pid"], e["tid"], e["ts"]): e["id"] for e in tasks}
        deps = [e for e in events if e["ph"] in "sf" and e["name"] in ("dependency", "hb_violation")]
        assert deps and all(e["bind_id"] == at[(e["pid"], e["tid"], e["ts"])] for e in deps)
        for e in events:
            if e["ph"] == "s" and e["name"] == "complete":
                (bar,) = [b for b in tasks if b["pid"] == e["pid"] and b["tid"] == e["tid"]
                          and b["ts"] <= e["ts"] <= b["ts"] + b["dur"]]  # fmt: skip
                assert e["bind_id"] == bar["id"]


def _overlap_records() -> dict[str, Any]:
    """Level 2, one AIV core (1 us a cycle): t1's Scheduler View bar (dispatch 5, finish 50) overlaps t2's
    (20-60); t3 (55-70) starts after t1's finish."""
    return {"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv"]},
            "aicore_tasks": [[0, 1, 1, 10, 30, 0], [0, 2, 2, 35, 45, 0], [0, 3, 3, 58, 65, 0]],
            "aicpu_tasks": [[0, 1, 5, 50], [0, 2, 20, 60], [0, 3, 55, 70]]}  # fmt: skip


def test_overlapping_scheduler_view_bars_move_to_the_next_lane() -> None:
    """§3: a core's Scheduler View bar that starts before the core's previous one finishes goes to tid + 1
    (named as the core's lane); one starting after goes back to tid; their flows start and end there."""
    events = chrome_trace(_overlap_records(), edges=[(2, 3)])["traceEvents"]
    check_event_format({"traceEvents": events})  # the lanes' bars disjoint
    assert {e["args"]["taskId"]: e["tid"] for e in _x(events, 3)} == {1: 10000, 2: 10001, 3: 10000}
    lanes = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name" and e["pid"] == 3}
    assert lanes == {10000: "AIV_0", 10001: "AIV_0"}
    (flow,) = [e for e in events if e["ph"] == "s" and e["pid"] == 3 and e["name"] in ("dependency", "hb_violation")]
    assert flow["tid"] == 10001


def test_a_finish_at_time_0_draws_no_scheduler_view_bar() -> None:
    """Upstream draws no Scheduler View bar whose finish is <= 0 µs (a 0 is "not recorded"; a bar from its
    dispatch to 0 had a negative duration), nor its dependency flows; its Worker View bar and flows stay."""
    records = _overlap_records()
    records["aicpu_tasks"][1][3] = 0
    events = chrome_trace(records, edges=[(1, 2), (2, 3)])["traceEvents"]
    check_event_format({"traceEvents": events})
    assert sorted(e["args"]["taskId"] for e in _x(events, 3)) == [1, 3]
    assert sorted(e["args"]["taskId"] for e in _x(events, 4)) == [1, 2, 3]
    flows = [e for e in events if e["ph"] == "s" and e["name"] in ("dependency", "hb_violation")]
    assert sorted(e["pid"] for e in flows) == [4, 4]


def test_a_task_without_a_kernel_bar_anchors_its_arrows_on_every_marker() -> None:
    """Upstream: the dependency arrows of a task with no kernel row leave and reach each of its markers (a
    dummy run twice: both), not only its earliest."""
    records = _marker_records()
    records["aicpu_scheduler_phases"][0].insert(3, {"kind": "dummy_task", "start_cycles": 3500, "end_cycles": 3500,
                                                    "loop_iter": 2, "tasks_processed": 0, "task_id": 2})  # fmt: skip
    facts = deps_facts({1: {"kernel_ids": [-1, 7, -1]}, 2: {"kernel_ids": [-1, -1, -1]},
                        3: {"kernel_ids": [-1, 7, -1]}}, [(1, 2), (2, 3)])  # fmt: skip
    events = chrome_trace(records, deps=facts)["traceEvents"]
    check_event_format({"traceEvents": events})
    dummies = {e["id"]: e["ts"] for e in _x(events, 4) if e["name"] == "dummy(t2)"}
    assert len(dummies) == 2
    flows = [e for e in events if e["ph"] in "sf" and e["pid"] == 4 and e["name"] in ("dependency", "hb_violation")]
    ends = {e["id"]: e for e in flows if e["ph"] == "f"}
    into = sorted(ends[e["id"]]["bind_id"] for e in flows if e["ph"] == "s" and e["tid"] == 10000)
    out_of = sorted(e["bind_id"] for e in flows if e["ph"] == "s" and e["tid"] == 19000)
    assert into == out_of == sorted(dummies)


def test_the_queue_lane_is_named_whenever_there_are_scheduler_phases() -> None:
    """Upstream names ``shared_ready_queue (global)`` (and sorts it after the threads) whenever the records have
    scheduler phases, with or without queue samples; without scheduler phases there is no such lane."""
    events = chrome_trace(_marker_records())["traceEvents"]  # phases without depth lists: no samples
    assert not [e for e in events if e["ph"] == "C"]
    lane = [(e["name"], e["args"]) for e in events if e["ph"] == "M" and e.get("tid") == 3999]
    assert lane == [("thread_name", {"name": "shared_ready_queue (global)"}), ("thread_sort_index", {"sort_index": 100})]
    assert not [e for e in chrome_trace(_overlap_records())["traceEvents"] if e.get("tid") == 3999]


def test_a_finish_where_two_complete_phases_touch_is_the_later_ones() -> None:
    """Upstream's rule (the last complete starting at or before the finish that holds it): a row finishing at
    40, where one complete phase ends and the next starts, is the later one's (the simulated scheduler
    records a finish at the start of the phase that retires it): its ``finish_rows_attributed`` and the
    row's ``complete`` flow (it went to the earlier one, the first holding the finish)."""
    phases = [{"kind": "complete", "start_cycles": s, "end_cycles": e, "loop_iter": n, "tasks_processed": n}
              for n, (s, e) in enumerate(((30, 40), (40, 50)))]  # fmt: skip
    records = {"chip_swimlane_level": 3, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv"], "core_to_thread": [0]},
               "aicore_tasks": [[0, 1, 1, 12, 38, 0]], "aicpu_tasks": [[0, 1, 10, 40]],
               "aicpu_scheduler_phases": [phases]}  # fmt: skip
    events = chrome_trace(records)["traceEvents"]
    check_event_format({"traceEvents": events})
    assert [e["args"]["finish_rows_attributed"] for e in _x(events, 2)] == [0, 1]
    later = _x(events, 2)[1]
    done = [e for e in events if e["ph"] == "f" and e["name"] == "complete"]  # from both views' bars
    assert len(done) == 2 and all(later["ts"] <= e["ts"] <= later["ts"] + later["dur"] for e in done)


@pl.jit
def _crossed(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    """The last task reads y (task 1's) before x (task 0's): its edges are found in that order."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cx_first"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cx_second"):
        y[:] = pl.mul(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cx_join"):
        z[:] = pl.sub(y, x)
    return x, y, z


def test_a_runs_trace_lists_producers_as_the_converter_reading_its_deps_json(tmp_path: Path) -> None:
    """A run's own merged trace takes its pairs in deps.json's order, so every bar's hints are the ones upstream's
    converter derives from the run's deps.json (the run passed its pairs sorted by producer: ``2: [t0, t1]`` where
    the converter said ``2: [t1, t0]``)."""
    import torch

    from pypto.runtime import config as run_config

    build = tmp_path / "build"
    saved = dict(run_config._DFX_DEFAULTS)
    run_config.set_dfx_defaults()
    try:
        _crossed(*(torch.randn(16, 32) for _ in range(4)),
                 config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=2, enable_dep_gen=True))  # fmt: skip
    finally:
        run_config.set_dfx_defaults(**saved)
    out = tmp_path / "converted.json"
    assert converter_main([str(build / "dfx_outputs" / "chip_swimlane_records.json"), "-o", str(out)]) == 0

    def hints(events: list[dict[str, Any]]) -> dict[tuple[int, int], tuple[str, str]]:
        return {(e["tid"], e["args"]["taskId"]): (e["args"]["fanin-hint"], e["args"]["fanout-hint"])
                for e in _worker_bars(events)}  # fmt: skip

    ours, theirs = hints(_events(_merged(build / "dfx_outputs"))), hints(_events(out))
    assert ours == theirs
    assert ("2: [t1, t0]", "0: []") in ours.values()


def _flow_pairs(events: list[dict[str, Any]], name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (start, end) events of each ``name`` flow."""
    ends = {e["id"]: e for e in events if e["ph"] == "f" and e["name"] == name}
    return [(e, ends[e["id"]]) for e in events if e["ph"] == "s" and e["name"] == name]


def _views(run_dir: Path) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The run's merged trace events and each core's scheduler thread."""
    records = json.loads((run_dir / "chip_swimlane_records.json").read_text())
    threads = records["metadata"]["core_to_thread"]
    return _events(_merged(run_dir)), {10000 + 10 * c: t for c, t in enumerate(threads)}


def test_complete_flows_leave_each_tasks_anchors_on_both_views(run_dir: Path, tmp_path: Path) -> None:
    """Upstream's ``complete``: one per task and anchor (an SPMD task's earliest bar, a plain task's every bar) on
    Worker View and on Scheduler View, from 0.01 us before the bar's end (bound to it), to the thread of the task's
    last-finishing block at that finish (it was one per block, from Worker View at the bar's middle)."""
    out = tmp_path / "t.json"
    assert converter_main([str(run_dir / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    for events in (_views(run_dir)[0], _events(out)):
        lanes = _views(run_dir)[1]
        got = sorted((s["pid"], s["tid"], s["ts"], s["bind_id"], f["pid"], f["tid"], f["ts"])
                     for s, f in _flow_pairs(events, "complete"))  # fmt: skip
        want = []
        for task in {e["args"]["taskId"] for e in _x(events, 3)}:
            views = [e for e in _x(events, 3) if e["args"]["taskId"] == task]
            last = max(views, key=lambda e: e["args"]["finish-time-us"])
            to = (2, 30000 + 10 * lanes[last["tid"] - (last["tid"] - 10000) % 10], last["args"]["finish-time-us"])
            for pid in (3, 4):
                bars = [e for e in _x(events, pid) if e["args"].get("taskId") == task]
                anchors = [min(bars, key=lambda e: (e["ts"], e["tid"]))] if len(bars) > 1 else bars  # 09's SPMD: 1 kernel
                want += [(pid, b["tid"], round(b["ts"] + b["dur"] - 0.01, 6), b["id"], *to) for b in anchors]
        assert got == sorted(want)
        assert {p for p, *_ in got} == {3, 4} and len(got) == 2 * 3


def _ready_records() -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """Level 3 on two AIV cores (1 us a cycle), core 0 on scheduler thread 0, core 1 on thread 1: t1 (core 0)
    retired by thread 0's complete phase (100-135), t2 (core 1) by thread 1's (120-130), though it finishes
    later; t3 needs both (dispatched at 140), t4 needs t1 (dispatched at 105, before its complete ended), t5
    needs t2 (dispatched at 130, where that complete ends). Times count from cycle 10."""
    aicore = [[0, 1, 1, 20, 90, 0], [1, 2, 1, 20, 120, 0], [0, 4, 2, 112, 115, 0], [0, 3, 3, 145, 150, 0],
              [1, 5, 2, 135, 138, 0]]  # fmt: skip
    aicpu = [[0, 1, 10, 100], [1, 1, 10, 125], [0, 2, 105, 118], [0, 3, 140, 160], [1, 2, 130, 139]]
    phases = [[{"kind": "complete", "start_cycles": 100, "end_cycles": 135, "loop_iter": 0, "tasks_processed": 2},
               {"kind": "dispatch", "start_cycles": 138, "end_cycles": 142, "loop_iter": 1, "tasks_processed": 1}],
              [{"kind": "complete", "start_cycles": 120, "end_cycles": 130, "loop_iter": 0, "tasks_processed": 1}]]
    records = {"chip_swimlane_level": 3,
               "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv", "aiv"], "core_to_thread": [0, 1]},
               "aicore_tasks": aicore, "aicpu_tasks": aicpu, "aicpu_scheduler_phases": phases}  # fmt: skip
    return records, [(1, 3), (2, 3), (1, 4), (2, 5)]


def test_complete_to_ready_leaves_the_complete_that_satisfies_the_last_fanin() -> None:
    """Upstream's ``complete→ready``: the complete phases, in order of their end, count their tasks' consumers'
    fanins; the one satisfying a consumer's last draws it from 0.01 us before its end to the consumer's dispatch
    on pid 2 (its thread's lane), none when the consumer was dispatched before that end. t3's is thread 0's
    complete (it ends last; t2 finishes last); t4 has none. It went from the last-finishing producer's phase
    to the consumer's Scheduler View bar, t4's too."""
    records, edges = _ready_records()
    events = chrome_trace(records, edges=edges)["traceEvents"]
    check_event_format({"traceEvents": events})
    got = sorted((s["pid"], s["tid"], s["ts"], f["pid"], f["tid"], f["ts"]) for s, f in _flow_pairs(events, "complete→ready"))
    assert got == [(2, 30000, 124.99, 2, 30000, 130.0), (2, 30010, 119.99, 2, 30010, 120.0)]


def test_dispatch_flows_go_to_both_views_from_the_dispatch(run_dir: Path) -> None:
    """Upstream's ``dispatch``: two per task row, from its core's thread's lane at the row's dispatch, to its
    Worker View lane at the kernel's start and to its Scheduler View bar at the dispatch (bound to it); it was
    one, to Worker View, from the middle of the dispatch phase."""
    events, lanes = _views(run_dir)
    pairs = _flow_pairs(events, "dispatch")
    got = sorted((s["pid"], s["tid"], s["ts"], f["pid"], f["tid"], f["ts"], f.get("bind_id")) for s, f in pairs)
    want = []
    for bar in _x(events, 3):
        core_lane = bar["tid"] - (bar["tid"] - 10000) % 10
        (work,) = [e for e in _worker_bars(events) if e["tid"] == core_lane and e["args"]["taskId"] == bar["args"]["taskId"]]
        sched = (2, 30000 + 10 * lanes[core_lane], bar["ts"])
        want += [(*sched, 3, bar["tid"], bar["ts"], bar["id"]),
                 (*sched, 4, core_lane, round(work["ts"] + work["args"]["local_setup_us"], 6), None)]  # fmt: skip
    assert len(want) == 14 and got == sorted(want)
    assert all("bind_id" not in s for s, _ in pairs)


def test_submit_to_dispatch_is_one_per_row_from_the_submits_end(run_dir: Path) -> None:
    """Upstream's ``submit→dispatch``: one per task row (each SPMD block), from the end of its task's submit bar
    to the row's dispatch on its thread's lane (it was one per task, from the submit's middle)."""
    events, lanes = _views(run_dir)
    submits = {e["args"]["task_id"]: e for e in _x(events, 1) if e["args"]["phase"] == "orch_submit"}
    got = sorted((s["pid"], s["tid"], s["ts"], f["pid"], f["tid"], f["ts"]) for s, f in _flow_pairs(events, "submit→dispatch"))
    want = []
    for bar in _x(events, 3):
        sub = submits[bar["args"]["taskId"]]
        core_lane = bar["tid"] - (bar["tid"] - 10000) % 10
        want.append((1, sub["tid"], round(sub["ts"] + sub["dur"], 6), 2, 30000 + 10 * lanes[core_lane], bar["ts"]))
    assert len(want) == 7 and got == sorted(want)


def test_processes_and_scheduler_view_lanes_are_named_when_they_have_data() -> None:
    """Upstream names a process only when it has its data (Worker View always; Scheduler View with a bar there;
    the scheduler and the orchestrator with their phases) and a core's Scheduler View lane only when a bar is
    on it; its file is ``{"traceEvents": [...]}`` (no ``displayTimeUnit``)."""
    def named(trace: dict[str, Any]) -> tuple[set[str], dict[int, int]]:
        events = trace["traceEvents"]
        procs = {e["args"]["name"] for e in events if e["name"] == "process_name"}
        assert {e["pid"] for e in events if e["name"] == "process_sort_index"} == {
            e["pid"] for e in events if e["name"] == "process_name"}  # fmt: skip
        return procs, {e["tid"] for e in events if e["name"] == "thread_name" and e["pid"] == 3}

    records = _overlap_records()
    records["metadata"]["core_types"].append("aiv")
    records["aicore_tasks"].append([1, 4, 1, 10, 20, 0])
    records["aicpu_tasks"].append([1, 1, 5, 0])  # no finish: no Scheduler View bar on core 1
    trace = chrome_trace(records)
    assert set(trace) == {"traceEvents"}
    assert named(trace) == ({"Scheduler View", "Worker View"}, {10000, 10001})
    for row in records["aicpu_tasks"]:
        row[3] = 0
    assert named(chrome_trace(records)) == ({"Worker View"}, set())
    assert named(chrome_trace(_ready_records()[0]))[0] == {"AICPU Scheduler", "Scheduler View", "Worker View"}
    assert named(chrome_trace(_marker_records()))[0] == {"AICPU Orchestrator", "AICPU Scheduler", "Scheduler View",
                                                         "Worker View"}  # fmt: skip
