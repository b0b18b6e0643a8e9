"""``sched_overhead_analysis`` (runtime-dfx-formats.md §8): the six analyses on a hand-made run small
enough to reckon by hand, on a real run's records and deps.json, and its errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from dfx_kernels import chain as twice

from pypto.runtime import RunConfig
from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.sched_overhead import analyze, format_report, percentiles
from pypto.tools.sched_overhead_analysis import main

# 1 cycle = 1 µs. Cores: 0 aic, 1 and 2 aiv; thread 0 owns cores 0 and 1, thread 1 core 2.
#   core 0: t2 d95 s100 e200 f205, t5 d190 s215 e350 f360   (t5 dispatched before t2 ended: switch gap 15)
#   core 1: t0 d100 s110 e200 f210, t1 d190 s230 e300 f300  (t1 dispatched before t0 ended: switch gap 30)
#   core 2: t4 d220 s225 e260 f265, t3 d330 s340 e400 f420
# deps: t0 -> t1 (twice), t1 -> t3, t0 -> t4. Window [100, 400]: makespan 300.
# aiv overhead: t4 ready at 200 (t0's end), dispatched 220, an aiv core idle from 210 (t0's finish): 10;
# t3 ready at 300, dispatched 330, both aiv cores idle: 30. aic never has a waiting task.
RECORDS: dict[str, Any] = {
    "chip_swimlane_level": 3,
    "metadata": {"clock_freq_hz": 1e6, "num_cores": 3, "core_types": ["aic", "aiv", "aiv"], "core_to_thread": [0, 0, 1]},
    "aicore_tasks": [[0, 2, 2, 100, 200, 5], [0, 5, 5, 215, 350, 25], [1, 0, 0, 110, 200, 10], [1, 1, 1, 230, 300, 40],
                     [2, 4, 4, 225, 260, 5], [2, 3, 3, 340, 400, 10]],
    "aicpu_tasks": [[0, 2, 95, 205], [0, 5, 190, 360], [1, 0, 100, 210], [1, 1, 190, 300], [2, 4, 220, 265],
                    [2, 3, 330, 420]],
    "aicpu_scheduler_phases": [
        [{"kind": "dispatch", "start_cycles": 90, "end_cycles": 100, "loop_iter": 1, "tasks_processed": 2, "pop_hit": 2, "pop_miss": 1},
         {"kind": "dispatch", "start_cycles": 185, "end_cycles": 190, "loop_iter": 2, "tasks_processed": 2, "pop_hit": 2, "pop_miss": 0},
         {"kind": "complete", "start_cycles": 205, "end_cycles": 212, "loop_iter": 3, "tasks_processed": 2},
         {"kind": "release", "start_cycles": 212, "end_cycles": 215, "loop_iter": 3, "tasks_processed": 1},
         {"kind": "complete", "start_cycles": 300, "end_cycles": 305, "loop_iter": 4, "tasks_processed": 1},
         {"kind": "resolve", "start_cycles": 301, "end_cycles": 303, "loop_iter": 4, "tasks_processed": 1},
         {"kind": "complete", "start_cycles": 360, "end_cycles": 366, "loop_iter": 5, "tasks_processed": 1}],
        [{"kind": "async_poll", "start_cycles": 200, "end_cycles": 204, "loop_iter": 1, "tasks_processed": 0},
         {"kind": "dispatch", "start_cycles": 215, "end_cycles": 220, "loop_iter": 2, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 1},
         {"kind": "complete", "start_cycles": 265, "end_cycles": 268, "loop_iter": 3, "tasks_processed": 1},
         {"kind": "dummy_task", "start_cycles": 280, "end_cycles": 281, "loop_iter": 3, "tasks_processed": 1, "task_id": 9},
         {"kind": "dispatch", "start_cycles": 325, "end_cycles": 330, "loop_iter": 4, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0},
         {"kind": "complete", "start_cycles": 420, "end_cycles": 424, "loop_iter": 5, "tasks_processed": 1}],
    ],
}  # fmt: skip
EDGES = [(0, 1), (0, 1), (1, 3), (0, 4)]
DEPS = {"tasks": [], "tensors": [], "edges": [{"pred": str(p), "succ": str(s), "arg": -1, "source": "explicit",
                                               "flags": ["wait", "retain"]} for p, s in EDGES]}  # fmt: skip


@pytest.fixture(autouse=True)
def _own_flags():
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    yield
    set_dfx_defaults(**saved)


def test_the_six_analyses_by_hand() -> None:
    a = analyze(RECORDS, EDGES)
    assert a["window"]["makespan_us"] == 300.0 and a["window"]["edges"] == 3  # the duplicate pair counts once
    # 1. aiv 10 + 30 = 40 µs in overhead = 13.3% (>= 8%: partial); aic none, so all_overhead never
    o = a["overhead"]
    assert o["engines"]["aiv"]["overhead_us"] == 40.0 and o["engines"]["aic"]["overhead_us"] == 0.0
    assert o["all_overhead_us"] == 0.0 and o["has_overhead_us"] == 40.0
    assert o["has_overhead"] == pytest.approx(40 / 3) and o["verdict"] == "partial"
    # 2. core 0: gap [200, 215] all independent; core 1: gap [200, 230], of which [210, 220] in aiv overhead
    sw = a["switch"]["cores"]
    assert (sw[0]["count"], sw[0]["total_us"], sw[0]["overhead_us"], sw[0]["independent_us"]) == (1, 15.0, 0.0, 15.0)
    assert (sw[1]["min_us"], sw[1]["mean_us"], sw[1]["max_us"]) == (30.0, 30.0, 30.0)
    assert (sw[1]["overhead_us"], sw[1]["independent_us"]) == (10.0, 20.0)
    assert sw[2]["count"] == 0  # t3 was dispatched after t4 ended
    assert a["switch"]["bound_us"] == (0.0, 15.0)  # [min over cores, aic min 15 + aiv min 0]
    # 3. heads 5 15 | 10 30 | 5 10;  4. tails 5 10 | 10 0 | 5 20
    assert a["head"] == pytest.approx({"P10": 5, "P25": 6.25, "P50": 10, "P75": 13.75, "P90": 22.5, "P95": 26.25,
                                       "P99": 29.25, "Max": 30, "Mean": 12.5, "Total": 75})  # fmt: skip
    assert a["tail"] == pytest.approx({"P10": 2.5, "P25": 5, "P50": 7.5, "P75": 10, "P90": 15, "P95": 17.5,
                                       "P99": 19.5, "Max": 20, "Mean": 50 / 6, "Total": 50})  # fmt: skip
    # 5. thread 0: span 90..366 = 276 µs over 5 loops; busy 36 (the inner resolve not counted); 4 hits, 1 miss;
    # thread 1: busy 21 (its dummy_task at 280 is a Worker-lane marker, not a loop phase)
    t0, t1 = a["threads"]
    assert (t0["loops"], t0["ns_per_loop"], t0["complete_us"], t0["dispatch_us"], t0["async_poll_us"]) == (
        5, 55200.0, 18.0, 15.0, 0.0)  # fmt: skip
    assert (t0["idle_us"], t0["pop_hit_rate"]) == (240.0, 80.0)
    assert (t0["fanout_mean"], t0["fanout_max"], t0["fanin_mean"], t0["fanin_max"]) == (0.75, 2, 0.25, 1)
    assert (t1["loops"], t1["ns_per_loop"], t1["complete_us"], t1["async_poll_us"], t1["idle_us"]) == (
        5, 44800.0, 7.0, 4.0, 203.0)  # fmt: skip
    assert t1["pop_hit_rate"] == pytest.approx(200 / 3)
    assert (t1["fanout_max"], t1["fanin_mean"], t1["fanin_max"]) == (0, 1.0, 1)
    # 6. t0 -> t1 -> t3: sched (340-300) + (230-200) + root (110-100) = 80, exec 90+70+60 = 220,
    # span 420 - 100 = 320, other 20
    cp = a["critical_path"]
    assert cp["tasks"] == ["t0", "t1", "t3"]
    assert (cp["sched_us"], cp["exec_us"], cp["other_us"], cp["span_us"]) == (80.0, 220.0, 20.0, 320.0)
    assert (cp["sched"], cp["exec"], cp["other"]) == pytest.approx((80 / 3, 220 / 3, 20 / 3))
    text = format_report(a)
    assert "verdict: partial" in text and "path: t0 -> t1 -> t3" in text
    assert "P90=22.500" in text and "makespan bound: [0.000, 15.000] us" in text


def test_a_runs_records_take_the_same_counters_either_way() -> None:
    """``trusted=True`` (a run's records, not checked or converted again) and a file's records (checked, their
    numbers read as ints) give the same analyses, the overhead counters included."""
    edges = [(p, s) for p, s in EDGES] + [(2, 5), (9, 3)]  # a pair outside the records is dropped either way
    assert analyze(RECORDS, edges, trusted=True) == analyze(RECORDS, edges)
    level2_cores = {**RECORDS, "metadata": {**RECORDS["metadata"], "core_types": ["aic", "aiv"]}}  # core 2 untyped
    assert analyze(level2_cores, edges, trusted=True) == analyze(level2_cores, edges)


def test_verdicts_and_empty_percentiles() -> None:
    names = ("P10", "P25", "P50", "P75", "P90", "P95", "P99", "Max", "Mean", "Total")
    assert percentiles([]) == dict.fromkeys(names, 0.0)
    assert percentiles([7])["P99"] == 7
    # t3 ready at 250 instead (t1 ends 250): 10 + 80 = 90 µs of aiv overhead out of 300 -> scheduler-bound
    rec = json.loads(json.dumps(RECORDS))
    rec["aicore_tasks"][3][4] = 250
    rec["aicpu_tasks"][3][3] = 250
    assert analyze(rec, EDGES)["overhead"]["verdict"] == "scheduler-bound"
    assert analyze(RECORDS, [])["overhead"]["verdict"] == "not scheduler-bound"


def _run(tmp_path: Path, **flags: Any) -> Path:
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    twice(a, x, y, config=RunConfig(save_kernels_dir=str(tmp_path / "build"), **flags))
    torch.testing.assert_close(y, 2 * a * a)
    return tmp_path / "build" / "dfx_outputs"


def test_a_real_run_reports_all_six(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dfx = _run(tmp_path, enable_chip_swimlane=4, enable_dep_gen=True)
    argv = [
        "--chip-swimlane-records-json",
        str(dfx / "chip_swimlane_records.json"),
        "--deps-json",
        str(dfx / "deps.json"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for title in ("1. OVERHEAD PER ENGINE", "2. AICORE SWITCH GAPS", "3. HEAD OH", "4. TAIL OH", "5. SCHEDULER THREADS",
                  "6. CRITICAL PATH"):  # fmt: skip
        assert title in out
    assert "path: t0 -> t1" in out and "verdict: " in out
    records = json.loads((dfx / "chip_swimlane_records.json").read_text())
    a = analyze(records, [(0, 1)])
    assert analyze(records, [(0, 1)], trusted=True) == a
    freq = records["metadata"]["clock_freq_hz"]
    kernels = sum(r[4] - r[3] for r in records["aicore_tasks"]) * 1e6 / freq  # the chain runs both tasks
    assert a["critical_path"]["exec_us"] == pytest.approx(kernels)
    assert a["threads"][0]["pop_hit_rate"] == 100.0 and a["threads"][0]["loops"] >= 2
    assert main(argv) == 0 and capsys.readouterr().out == out  # deterministic


def test_errors_name_the_file_and_what_is_needed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "chip_swimlane_records.json"
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps(DEPS))
    records.write_text(json.dumps(RECORDS | {"chip_swimlane_level": 2}))
    assert main(["--chip-swimlane-records-json", str(records), "--deps-json", str(deps)]) == 1
    err = capsys.readouterr().err
    assert str(records) in err and "level >= 3" in err and "Traceback" not in err
    records.write_text(json.dumps(RECORDS))
    assert main(["--chip-swimlane-records-json", str(records), "--deps-json", str(deps)]) == 0
    assert "verdict: partial" in capsys.readouterr().out  # the same numbers through deps.json's string ids
    missing = tmp_path / "nope" / "deps.json"
    assert main(["--chip-swimlane-records-json", str(records), "--deps-json", str(missing)]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and "enable_dep_gen=True" in err
    assert main(["--chip-swimlane-records-json", str(records)]) == 1
    assert "--deps-json is required" in capsys.readouterr().err
    deps.write_text("{")
    assert main(["--chip-swimlane-records-json", str(records), "--deps-json", str(deps)]) == 1
    assert f"{deps}:1:2: the deps.json is not JSON" in capsys.readouterr().err
    assert main(["--chip-swimlane-records-json", str(records), "--deps-json", str(records)]) == 1  # another artefact
    assert f"{records}: deps.json does not have the documented tasks/edges" in capsys.readouterr().err
    done = subprocess.run([sys.executable, "-m", "pypto.tools.sched_overhead_analysis", "--chip-swimlane-records-json",
                           str(tmp_path / "none.json"), "--deps-json", str(deps)], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1 and "none.json" in done.stderr and "Traceback" not in done.stderr


def test_a_level_2_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dfx = _run(tmp_path, enable_chip_swimlane=2, enable_dep_gen=True)
    assert main(["--chip-swimlane-records-json", str(dfx / "chip_swimlane_records.json"),
                 "--deps-json", str(dfx / "deps.json")]) == 1  # fmt: skip
    assert "chip_swimlane_level is 2" in capsys.readouterr().err
