"""``dfx_outputs/run_report.html`` (issue 12 item 5): its data model on real runs. Every task is there
with the scheduler's times, the dependencies are deps.json's, the PMU rows are pmu.csv's, the head /
tail overheads and idle gaps follow runtime-dfx-formats.md §8, and two identical runs give the same
bytes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from run_report_kernels import embedded, run_kernel

from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.run_report import LEVEL3_ANALYSES, REPORT_NAME, report_model
from pypto.runtime.dfx.sched_overhead import analyze

ALL = {"enable_chip_swimlane": 4, "enable_pmu": 2, "enable_dep_gen": True}


@pytest.fixture(autouse=True)
def _own_flags():
    """These tests set the flags themselves; the suite's own come back after."""
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    yield
    set_dfx_defaults(**saved)


@pytest.mark.parametrize("kernel", ["diamond", "mixed"])
def test_every_task_its_times_deps_and_pmu_rows(tmp_path: Path, kernel: str) -> None:
    result = run_kernel(kernel, tmp_path / "build", **ALL)
    dfx = tmp_path / "build" / "dfx_outputs"
    page = dfx / REPORT_NAME
    assert page in result.dfx_outputs["enable_chip_swimlane"]
    data = embedded(page.read_text())
    assert data == json.loads(json.dumps(report_model(result, 2, 4)))

    # every task, with the scheduler's times and cores
    assert [t["id"] for t in data["tasks"]] == sorted(r.task_id for r in result.tasks) and len(data["tasks"]) == 3
    for rec in result.tasks:
        t = next(t for t in data["tasks"] if t["id"] == rec.task_id)
        assert (t["kernel"], t["cores"]) == (rec.func_name, rec.core_ids)
        assert [t[k] for k in ("dispatch", "start", "end", "finish")] == [rec.dispatch, rec.start, rec.end, rec.finish]
        assert t["preds"] == sorted(rec.deps)
    # a lane per core that ran something, holding exactly its tasks
    used = sorted({c for r in result.tasks for c in r.core_ids})
    assert [c["id"] for c in data["cores"]] == used
    for c in data["cores"]:
        assert c["type"] == result.core_types[c["id"]]
        assert sorted(c["tasks"]) == sorted(r.task_id for r in result.tasks if c["id"] in r.core_ids)

    # the edges are deps.json's (pred, succ) pairs, with their reasons
    deps = json.loads((dfx / "deps.json").read_text())
    assert {(e["pred"], e["succ"]) for e in data["edges"]} == {(int(e["pred"]), int(e["succ"])) for e in deps["edges"]}
    assert all(e["kinds"] for e in data["edges"])
    succs = {t["id"]: t["succs"] for t in data["tasks"]}
    for e in data["edges"]:
        assert e["succ"] in succs[e["pred"]]

    # the PMU rows are pmu.csv's, in its order
    with (dfx / "pmu.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert data["pmu"]["event_type"] == 2 and data["pmu"]["columns"] == rows[0]
    assert [[str(v) for v in r["values"]] for r in data["pmu"]["rows"]] == rows[1:]
    assert [r["task"] for r in data["pmu"]["rows"]] == [int(r[2], 16) for r in rows[1:]]
    parts = sum(len(r.kernel_runs) for r in result.tasks)
    assert len(rows) - 1 == parts


def test_overheads_and_idle_gaps_follow_section_8(tmp_path: Path) -> None:
    result = run_kernel("mixed", tmp_path / "build", enable_chip_swimlane=2)
    data = report_model(result, swimlane_level=2)
    by_core: dict[int, list] = {}
    for r in result.tasks:
        for c in r.core_ids:
            by_core.setdefault(c, []).append(r)
    for rec in result.tasks:
        t = next(t for t in data["tasks"] if t["id"] == rec.task_id)
        ends = [p.end for c in rec.core_ids for p in by_core[c] if p is not rec and p.end <= rec.start]
        want = rec.start - rec.dispatch if not ends else min(rec.start - rec.dispatch, rec.start - max(ends))
        assert t["head"] == max(0, want) and t["tail"] == max(0, rec.finish - rec.end)
    gaps = []
    for c, lst in by_core.items():
        lst.sort(key=lambda r: r.start)
        gaps += [(c, b.task_id, b.start - a.end) for a, b in zip(lst, lst[1:], strict=False) if b.start > a.end]
    found = sorted((f["core"], f["task"], f["cycles"]) for f in data["findings"] if f["kind"] == "idle")
    assert found == sorted(gaps) and gaps  # the join waits on AIV24 for the Group task
    heads = [f for f in data["findings"] if f["kind"] == "head"]
    assert len(heads) == sum(1 for t in data["tasks"] if t["head"]) > 0
    assert [f["cycles"] for f in data["findings"]] == sorted((f["cycles"] for f in data["findings"]), reverse=True)
    assert data["overhead"]["head"]["total"] == sum(t["head"] for t in data["tasks"])
    # the page says which §8 analyses need level 3, and what this run recorded
    assert {a["item"] for a in data["level3"]} == {a["item"] for a in LEVEL3_ANALYSES} >= {"5"}
    assert data["swimlane_level"] == {"requested": 2, "recorded": 2}
    assert data["pmu"] == {"event_type": 0, "columns": [], "rows": []}  # enable_pmu off: no rows
    assert data["sched"] is None  # below level 3: the note, not the analyses


def test_level_4_has_the_section_8_analyses(tmp_path: Path) -> None:
    """At level >= 3 the page holds sched_overhead.analyze() of the run's own records and edges (the six
    analyses, the critical path's tasks as ids) and no longer the "not in this page yet" note."""
    result = run_kernel("mixed", tmp_path / "build", **ALL)
    data = embedded((tmp_path / "build" / "dfx_outputs" / REPORT_NAME).read_text())
    assert data["level3"] == [] and data["swimlane_level"] == {"requested": 4, "recorded": 4}
    s = data["sched"]
    records = json.loads((tmp_path / "build" / "dfx_outputs" / "chip_swimlane_records.json").read_text())
    deps = json.loads((tmp_path / "build" / "dfx_outputs" / "deps.json").read_text())
    want = analyze(records, [(int(e["pred"]), int(e["succ"])) for e in deps["edges"]])
    assert s["overhead"]["verdict"] == want["overhead"]["verdict"]
    assert [e["engine"] for e in s["overhead"]["engines"]] == list(want["overhead"]["engines"])
    assert s["overhead"]["has_overhead"] == pytest.approx(want["overhead"]["has_overhead"], abs=1e-6)
    assert [c["core"] for c in s["switch"]["cores"]] == sorted(want["switch"]["cores"])
    assert s["switch"]["bound_us"] == pytest.approx(list(want["switch"]["bound_us"]), abs=1e-6)
    assert s["head"] == pytest.approx(want["head"], abs=1e-6) and s["tail"] == pytest.approx(want["tail"], abs=1e-6)
    assert s["head"]["Total"] > 0
    assert len(s["threads"]) == len(records["aicpu_scheduler_phases"]) and s["threads"][0]["loops"] > 0
    cp = s["critical_path"]
    assert cp["tasks"] == want["critical_path"]["tasks"]
    join = next(r.task_id for r in result.tasks if r.func_name == "rr_join")
    assert cp["task_ids"][-1] == join and len(cp["task_ids"]) == 2  # a producer of the join, then the join
    assert cp["exec_us"] == pytest.approx(want["critical_path"]["exec_us"], abs=1e-6) and cp["exec_us"] > 0


def test_same_run_same_bytes(tmp_path: Path) -> None:
    pages = []
    for name in ("one", "two"):
        run_kernel("mixed", tmp_path / name / "build", **ALL)
        pages.append((tmp_path / name / "build" / "dfx_outputs" / REPORT_NAME).read_bytes())
    assert pages[0] == pages[1]
    text = pages[0].decode()
    assert str(tmp_path) not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")


def test_written_only_with_the_swimlane(tmp_path: Path) -> None:
    result = run_kernel("diamond", tmp_path / "build", enable_dep_gen=True, enable_pmu=2)
    assert not (tmp_path / "build" / "dfx_outputs" / REPORT_NAME).exists()
    assert all(p.name != REPORT_NAME for paths in result.dfx_outputs.values() for p in paths)
