"""The merged swimlane (runtime-dfx-formats.md §3): the Chrome trace a swimlane run writes, and
``python -m pypto.tools.swimlane_converter``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from dfx_kernels import chain

from pypto.runtime import RunConfig
from pypto.runtime.dfx.trace import chrome_trace, task_label
from pypto.tools.swimlane_converter import main as converter_main

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


def _run(tmp_path: Path) -> tuple[Any, Path]:
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=2))
    return chain.compile(a, x, y, config=RunConfig(save_kernels_dir=str(build))).last_run, build / "dfx_outputs"


def check_event_format(trace: dict[str, Any]) -> None:
    """The Chrome Trace Event rules Perfetto's UI relies on."""
    events = trace["traceEvents"]
    assert {e["ph"] for e in events} <= {"M", "X", "C", "s", "f"}
    assert all(e["ts"] >= 0 for e in events if "ts" in e)  # Perfetto's protobuf refuses a time before 0
    for e in events:
        if e["ph"] == "C":  # a counter track: numeric series at a µs time
            assert isinstance(e["ts"], float) and e["args"] and all(isinstance(v, int | float) for v in e["args"].values())
    lanes: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            assert isinstance(e["ts"], float) and isinstance(e["dur"], float) and e["dur"] >= 0
            lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for bars in lanes.values():  # on one tid: disjoint or nested
        bars.sort(key=lambda b: (b[0], -b[1]))
        open_: list[float] = []
        for start, end in bars:
            while open_ and open_[-1] <= start:
                open_.pop()
            assert not open_ or end <= open_[-1], bars
            open_.append(end)
    starts = sorted(e["id"] for e in events if e["ph"] == "s")
    ends = sorted(e["id"] for e in events if e["ph"] == "f")
    assert starts == ends and len(set(starts)) == len(starts)
    assert all(e.get("bp") == "e" for e in events if e["ph"] == "f")


def test_a_swimlane_run_writes_the_merged_trace(tmp_path: Path) -> None:
    result, dfx = _run(tmp_path)
    (merged,) = dfx.glob("merged_swimlane_*.json")
    trace = json.loads(merged.read_text())
    check_event_format(trace)
    bars = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == 4]
    assert sorted(e["name"] for e in bars) == ["k_first(t0)", "k_second(t1)"]
    records = json.loads((dfx / "chip_swimlane_records.json").read_text())
    freq = records["metadata"]["clock_freq_hz"]
    cycles = [c for r in records["aicore_tasks"] for c in r[3:5]] + [c for r in records["aicpu_tasks"] for c in r[2:4]]
    base = min(c for c in cycles if c)  # §2's reader: µs from the smallest non-zero cycle value; 0 stays 0.0

    def us(c: int) -> float:
        return (c - base) * 1e6 / freq if c else 0.0

    first = next(e for e in bars if e["name"] == "k_first(t0)")
    row = next(r for r in records["aicore_tasks"] if r[1] == 0)
    assert first["ts"] == pytest.approx(us(row[3] - row[5]), abs=1e-6)  # from receive
    assert first["ts"] + first["dur"] == pytest.approx(us(row[4]), abs=1e-6)
    assert first["args"]["kernel-duration-us"] == pytest.approx(us(row[4]) - us(row[3]), abs=1e-6)
    flows = [e for e in trace["traceEvents"] if e["ph"] == "s" and e["pid"] == 4]
    assert [f["name"] for f in flows] == ["dependency"]  # k_second reads x, which k_first writes
    # level 2: no scheduler or orchestrator phases, so (upstream's rule) no such processes
    assert {m["args"]["name"] for m in trace["traceEvents"] if m["name"] == "process_name"} == {
        "Scheduler View", "Worker View"}  # fmt: skip


def test_a_late_producer_is_an_hb_violation() -> None:
    records = {"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv", "aiv"]},
               "aicore_tasks": [[0, 0, 0, 10, 50, 0], [1, 1, 1, 20, 60, 0]],
               "aicpu_tasks": [[0, 0, 5, 55], [1, 1, 6, 65]]}  # fmt: skip
    trace = chrome_trace(records, {0: "p", 1: "c"}, [(0, 1)])
    check_event_format(trace)
    assert {e["name"] for e in trace["traceEvents"] if e["ph"] == "s"} == {"hb_violation"}
    assert task_label((2 << 32) | 7) == "r2t7" and task_label(7) == "t7"


def test_the_converter_reads_a_run_and_rejects_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, dfx = _run(tmp_path)
    out = tmp_path / "trace.json"
    assert converter_main([str(dfx / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    trace = json.loads(out.read_text())
    check_event_format(trace)
    assert sorted(e["name"] for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == 4) == ["task(t0)", "task(t1)"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"metadata": {}}')
    assert converter_main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "clock_freq_hz" in err and "Traceback" not in err
    assert not (tmp_path / "merged_swimlane.json").exists()
    done = subprocess.run([sys.executable, "-m", "pypto.tools.swimlane_converter", str(tmp_path / "nope.json")],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1 and "nope.json" in done.stderr and "Traceback" not in done.stderr


def test_a_swimlane_run_writes_the_name_map(tmp_path: Path) -> None:
    """§1: the name map is written when the swimlane (or dep_gen) is on; the converter labels from it."""
    _, dfx = _run(tmp_path)
    (name_map,) = dfx.glob("name_map_*.json")
    assert name_map.name == "name_map_build.json"
    data = json.loads(name_map.read_text())
    assert data["level"] == 2 and data["orchestrator_name"] is None
    assert sorted(data["callable_id_to_name"].values()) == ["k_first", "k_second"]


def test_level_3_draws_complete_and_complete_to_ready_flows(tmp_path: Path) -> None:
    """§3: ``complete`` (task bar -> its complete phase) per task from each view, and ``complete→ready`` (the
    producer's complete phase -> the consumer's dispatch on its scheduler thread's lane) for the one dependency."""
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(tmp_path / "build"), enable_chip_swimlane=3))
    (merged,) = (tmp_path / "build" / "dfx_outputs").glob("merged_swimlane_*.json")
    trace = json.loads(merged.read_text())
    check_event_format(trace)
    starts = [e for e in trace["traceEvents"] if e["ph"] == "s"]
    assert sorted(e["pid"] for e in starts if e["name"] == "complete") == [3, 3, 4, 4]
    (ready,) = [e for e in starts if e["name"] == "complete→ready"]
    assert ready["pid"] == 2
    (end,) = [e for e in trace["traceEvents"] if e["ph"] == "f" and e["id"] == ready["id"]]
    second = next(e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == 3 and e["name"] == "k_second(t1)")
    assert end["pid"] == 2 and end["ts"] == second["ts"] and ready["ts"] <= end["ts"]


def test_phase_bars_carry_upstreams_fields_whatever_else_the_record_holds(tmp_path: Path) -> None:
    """A scheduler phase bar's ``args`` are upstream's fields, led by ``phase``, ``loop_iter`` and
    ``tasks_processed``: a record's other fields (``pop_hit``, ``pop_miss``, a field of its own named
    ``phase``) are not copied (they were: its own fields in its order), whatever order it holds them in; the
    run's trusted text is the checked one's."""
    from pypto.runtime.dfx.records import swimlane_records
    from pypto.runtime.dfx.trace import chrome_trace_text

    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=4))
    result = chain.compile(a, x, y, config=RunConfig(save_kernels_dir=str(build))).last_run
    records = swimlane_records(result, 4)
    names = {t.task_id: t.func_name for t in result.tasks}
    edges = [(d, t.task_id) for t in result.tasks for d in sorted(t.deps)]
    plain = chrome_trace_text(records, names, edges)
    assert chrome_trace_text(records, names, edges, trusted=True) == plain
    odd = json.loads(json.dumps(records))  # a phase with its fields in another order, one with a "phase" field
    phases = odd["aicpu_scheduler_phases"][0]
    phases[0] = {"start_cycles": phases[0]["start_cycles"], **phases[0]}
    phases[1] = {**phases[1], "phase": "mine"}
    assert chrome_trace_text(odd, names, edges) == plain
    bars = [e for e in json.loads(plain)["traceEvents"] if e["ph"] == "X" and e["pid"] == 2]
    assert len(bars) == len(phases) and any("pop_hit" in p for p in phases)
    for bar, phase in zip(bars, records["aicpu_scheduler_phases"][0], strict=True):
        assert list(bar["args"])[:3] == ["phase", "loop_iter", "tasks_processed"]
        assert bar["args"]["phase"] == phase["kind"] and bar["args"]["loop_iter"] == phase["loop_iter"]
        assert not {"pop_hit", "pop_miss", "shared_at_start", "shared_at_end"} & set(bar["args"])


@pytest.mark.parametrize("name", ["plain_kernel", "k\u00e9rnel", "del\x7f", 'quo"te\\', "tab\tnl\n\x01", "\u2028x"])
def test_labels_are_spelled_as_json_spells_them(name: str) -> None:
    """A task label goes to orjson as it is only where orjson spells it as ``json.dumps`` does (ASCII but
    DEL); any other is json's spelling (``\\u`` escapes): the trace text is json's text of its own events."""
    from pypto.runtime.dfx.trace import chrome_trace_text

    records = {"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1e6, "core_types": ["aiv", "aiv"]},
               "aicore_tasks": [[0, 0, 1, 10, 50, 2], [1, 1, 1, 60, 90, 3]],
               "aicpu_tasks": [[0, 1, 5, 55], [1, 1, 56, 95]]}  # fmt: skip
    text = chrome_trace_text(records, {0: name, 1: "c"}, [(0, 1)], trusted=True)
    assert text == json.dumps(json.loads(text), separators=(",", ":")) + "\n"
    assert f"{name}(t0)" in {e["name"] for e in json.loads(text)["traceEvents"]}


def test_a_run_replaces_an_earlier_runs_merged_trace(tmp_path: Path) -> None:
    """The other artefacts beside it are the new run's, so an earlier run's time-stamped trace is stale: it is
    removed once the new one is written (a folder run once a second would otherwise fill with them). The
    converter's own ``merged_swimlane.json`` and other files are the user's and stay."""
    _, dfx = _run(tmp_path)
    (first,) = dfx.glob("merged_swimlane_*.json")
    older = first.rename(dfx / "merged_swimlane_20000101_000000.json")  # as a run long ago named it
    mine = [dfx / "merged_swimlane.json", dfx / "merged_swimlane_notes.json"]
    for path in mine:
        path.write_text("{}")
    _run(tmp_path)
    (merged,) = dfx.glob("merged_swimlane_[0-9]*.json")
    assert merged != older and not older.exists()
    assert all(path.read_text() == "{}" for path in mine)
    check_event_format(json.loads(merged.read_text()))


def test_a_failed_write_keeps_the_earlier_merged_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the run's files cannot be written, nothing of the earlier run's is removed: it moves, unchanged, to
    ``dfx_outputs/previous/`` (a failed run's rule), so nothing left in ``dfx_outputs/`` reads as this run's."""
    from pypto.runtime.dfx import base

    _, dfx = _run(tmp_path)
    (first,) = dfx.glob("merged_swimlane_*.json")
    older = first.rename(dfx / "merged_swimlane_20000101_000000.json")
    kept = older.read_text()

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(base, "atomic_write_files", full_disk)
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    with pytest.raises(OSError, match="No space"):
        chain(a, x, y, config=RunConfig(save_kernels_dir=str(tmp_path / "build"), enable_chip_swimlane=2))
    assert not list(dfx.glob("merged_swimlane_*.json"))
    assert [p.name for p in (dfx / "previous").glob("merged_swimlane_*.json")] == [older.name]
    assert (dfx / "previous" / older.name).read_text() == kept


def test_a_level_1_trace_starts_at_the_first_receive(tmp_path: Path) -> None:
    """At level 1 nothing is recorded before the first bar's receive (no dispatch, no phase): the trace's times
    start there. They started at the first row's start, which put that bar at -0.4 us, and the converter's
    ``--perfetto`` failed with an internal error (a negative protobuf timestamp)."""
    pytest.importorskip("perfetto.trace_builder.proto_builder")
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=1))
    dfx = build / "dfx_outputs"
    (merged,) = dfx.glob("merged_swimlane_*.json")
    trace = json.loads(merged.read_text())
    check_event_format(trace)
    assert min(e["ts"] for e in trace["traceEvents"] if "ts" in e) == 0.0
    out, pf = tmp_path / "t.json", tmp_path / "t.pftrace"
    assert converter_main([str(dfx / "chip_swimlane_records.json"), "-o", str(out), "--perfetto", str(pf)]) == 0
    def times(t: dict[str, Any]) -> list[tuple[float, float]]:
        return sorted((e["ts"], e["dur"]) for e in t["traceEvents"] if e["ph"] == "X")

    assert pf.stat().st_size > 0 and times(json.loads(out.read_text())) == times(trace)


def test_the_converter_draws_pairs_and_refuses_another_artefact_as_deps_or_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """§3 draws a dependency per (pred, succ) pair: a pair's several rows (explicit and tensormap) are one
    arrow, as in the run's own trace. Another artefact given as ``--deps-json`` or ``--func-names`` is a
    one-line error naming it (it was read as no edges and no names), and an output that cannot be written
    leaves the other one unwritten."""
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=2, enable_dep_gen=True))
    dfx = build / "dfx_outputs"
    records, deps = dfx / "chip_swimlane_records.json", json.loads((dfx / "deps.json").read_text())
    doubled = tmp_path / "doubled.json"
    doubled.write_text(json.dumps({**deps, "edges": deps["edges"] * 2}))

    def arrows(path: Path) -> int:
        return sum(e["ph"] == "s" and e["name"] == "dependency" for e in json.loads(path.read_text())["traceEvents"])

    (merged,) = dfx.glob("merged_swimlane_*.json")
    out = tmp_path / "t.json"
    assert converter_main([str(records), "--deps-json", str(doubled), "-o", str(out)]) == 0
    assert arrows(out) == arrows(merged) == 2  # one pair, on the worker and the scheduler views
    for flag, wrong, message in (("--deps-json", records, "does not have the documented tasks/edges: expected a top-level 'edges' list"),
                                 ("--func-names", dfx / "deps.json", "expected a name map")):  # fmt: skip
        assert converter_main([str(records), flag, str(wrong), "-o", str(tmp_path / "w.json")]) == 1
        err = capsys.readouterr().err
        assert err.count(str(wrong)) == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "w.json").exists()
    (tmp_path / "folder").mkdir()
    argv = [str(records), "-o", str(tmp_path / "p.json"), "--perfetto", str(tmp_path / "folder")]
    assert converter_main(argv) == 1
    assert "output path is a directory" in capsys.readouterr().err and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r["metadata"].update(clock_freq_hz=0), "clock_freq_hz must be a positive number"),
    (lambda r: r["aicore_tasks"][0].__setitem__(3, "a"), "'aicore_tasks' must be a list of rows of at least 5 integers"),
    (lambda r: r["aicpu_tasks"][0].__setitem__(2, None), "'aicpu_tasks' must be a list of rows of at least 4 integers"),
    (lambda r: r["aicore_tasks"][0].__setitem__(5, "7"), "'aicore_tasks' must be a list of rows of at least 5 integers"),
    (lambda r: r["aicpu_scheduler_phases"][0][0].__setitem__("end_cycles", "9"), "'aicpu_scheduler_phases' must be"),
])  # fmt: skip
def test_malformed_records_are_one_line_errors_in_both_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, message: str
) -> None:
    """A records file whose clock is 0 or whose cycles are not integers: each tool names the file and what is
    wrong (they were internal errors: a division by zero, a str minus a str)."""
    from pypto.tools.sched_overhead_analysis import main as analysis_main

    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=3, enable_dep_gen=True))
    dfx = build / "dfx_outputs"
    records = json.loads((dfx / "chip_swimlane_records.json").read_text())
    change(records)
    capsys.readouterr()  # the run's own lines
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(records))
    assert converter_main([str(bad), "-o", str(tmp_path / "t.json")]) == 1
    assert analysis_main(["--chip-swimlane-records-json", str(bad), "--deps-json", str(dfx / "deps.json")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.count(f"{bad}: ") == 1 and message in line for line in err), err
    assert not (tmp_path / "t.json").exists()
