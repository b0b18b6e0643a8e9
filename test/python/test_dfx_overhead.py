"""The scheduler-overhead counters (runtime-dfx-formats.md §8) that ``swimlane_converter --overhead`` draws
on pid 2, and the merged trace as Perfetto's native protobuf (``--perfetto``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from dfx_kernels import chain

from pypto.runtime import RunConfig
from pypto.runtime.dfx.overhead import COUNTERS, overhead_events, overhead_series
from pypto.runtime.dfx.trace import chrome_trace
from pypto.tools.swimlane_converter import main as converter_main

# 1 cycle = 1 µs. Cores: 0 aic, 1 and 2 aiv. t0 (aiv, core 1) runs first; t1 (aiv) needs t0 and is ready
# at t0's end (200) but dispatched only at 300, while core 2 (and core 1 from t0's finish, 210) sits idle;
# t2 (aic, core 0) is independent and keeps the one aic core busy until 360.
RECORDS: dict[str, Any] = {
    "chip_swimlane_level": 2,
    "metadata": {"clock_freq_hz": 1e6, "num_cores": 3, "core_types": ["aic", "aiv", "aiv"]},
    "aicore_tasks": [[1, 0, 0, 110, 200, 10], [1, 1, 1, 310, 400, 10], [0, 2, 2, 105, 350, 5]],
    "aicpu_tasks": [[1, 0, 100, 210], [1, 1, 300, 410], [0, 2, 100, 360]],
}
EDGES = [(0, 1)]


pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


def test_overhead_counters_of_a_three_task_graph() -> None:
    first = dict.fromkeys(COUNTERS, 0) | {"oh_aiv_idle": 1}  # at the window's start (105): t0 and t2 running
    assert overhead_series(RECORDS, EDGES) == [
        (105, first),
        (200, {"oh_aiv_ready": 1, "oh_aiv_overhead": 1, "oh_has_overhead": 1}),  # t1 ready, an aiv core idle
        (210, {"oh_aiv_idle": 2}),  # t0 finished
        (300, {"oh_aiv_idle": 1, "oh_aiv_ready": 0, "oh_aiv_overhead": 0, "oh_has_overhead": 0}),  # t1 dispatched
        (360, {"oh_aic_idle": 1}),  # t2 finished
        (400, {"oh_aic_idle": 0, "oh_aiv_idle": 0}),  # the window's end: all back to 0
    ]
    events = overhead_events(RECORDS, EDGES)
    assert all(e["ph"] == "C" and e["pid"] == 2 for e in events)
    assert {e["name"] for e in events} == set(COUNTERS)
    overhead = [(e["ts"], e["args"]["value"]) for e in events if e["name"] == "oh_aiv_overhead"]
    assert overhead == [(5.0, 0), (100.0, 1), (200.0, 0)]  # µs from the base (100 cycles), as the bars
    # without the dependency t1 is ready at its own dispatch: never waiting, no overhead
    assert all(e["args"]["value"] == 0 for e in overhead_events(RECORDS, []) if e["name"].endswith("overhead"))


def test_all_overhead_needs_every_engine() -> None:
    # t2 (aic) now also waits on t0 and is dispatched late: from 200 both engines idle with ready work
    records = json.loads(json.dumps(RECORDS))
    records["aicore_tasks"][2] = [0, 2, 2, 260, 350, 10]
    records["aicpu_tasks"][2] = [0, 2, 250, 360]
    series = dict(overhead_series(records, [(0, 1), (0, 2)]))
    assert series[200]["oh_all_overhead"] == 1 and series[200]["oh_aic_overhead"] == 1
    assert series[250] == {"oh_aic_ready": 0, "oh_aic_idle": 0, "oh_aic_overhead": 0, "oh_all_overhead": 0}




def _run(tmp_path: Path) -> Path:
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=2, enable_dep_gen=True))
    return build / "dfx_outputs"


def test_converter_overhead_and_perfetto_on_a_run(tmp_path: Path) -> None:
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
    dfx = _run(tmp_path)
    out, pf = tmp_path / "merged.json", tmp_path / "merged.pftrace"
    argv = [str(dfx / "chip_swimlane_records.json"), "-o", str(out), "--overhead", "--perfetto", str(pf)]
    assert converter_main(argv) == 0
    events = json.loads(out.read_text())["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and {e["name"] for e in counters} == set(COUNTERS) and {e["pid"] for e in counters} == {2}
    # the chain's consumer waits for its producer: it is ready at k_first's end, never before
    records = json.loads((dfx / "chip_swimlane_records.json").read_text())
    ready = [e["args"]["value"] for e in counters if e["name"] == "oh_aiv_ready"]
    assert max(ready) <= 1 and len(records["aicore_tasks"]) == 2

    trace = pb.Trace.FromString(pf.read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")}
    evs = [p.track_event for p in trace.packet if p.HasField("track_event")]
    T = pb.TrackEvent
    begins = [e for e in evs if e.type == T.TYPE_SLICE_BEGIN]
    assert len(begins) == sum(1 for e in events if e["ph"] == "X") == 4  # 2 worker + 2 scheduler-view bars
    assert sum(1 for e in evs if e.type == T.TYPE_SLICE_END) == len(begins)
    assert sorted(e.name for e in begins) == sorted(e["name"] for e in events if e["ph"] == "X")
    flows = sorted(f for e in begins for f in e.flow_ids)
    assert flows == sorted(f for e in begins for f in e.terminating_flow_ids)
    assert flows == sorted(e["id"] for e in events if e["ph"] == "s") and len(flows) >= 2  # pid 4 and pid 3
    assert sum(1 for e in evs if e.type == T.TYPE_COUNTER) == sum(len(e["args"]) for e in counters)
    names = {d.name for d in tracks.values() if d.HasField("counter")}
    assert names == set(COUNTERS)
    procs = {d.process.process_name for d in tracks.values() if d.HasField("process")}
    assert procs == {"Scheduler View", "Worker View", "pid 2"}  # level 2: no phases, only the overhead counters on pid 2 (unnamed, as upstream)
    assert all(tracks[e.track_uuid].HasField("thread") for e in begins)
    # deterministic: converting again writes the same bytes
    again = tmp_path / "again.pftrace"
    assert converter_main(argv[:-1] + [str(again)]) == 0
    assert again.read_bytes() == pf.read_bytes()


def test_perfetto_keeps_nested_and_touching_slices_in_order() -> None:
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
    from pypto.runtime.dfx.perfetto import perfetto_trace

    trace = chrome_trace(RECORDS, {0: "a", 1: "b", 2: "c"}, EDGES)
    data = pb.Trace.FromString(perfetto_trace(trace))
    stack: dict[int, list[str]] = {}
    for p in data.packet:
        if p.HasField("track_event"):
            e = p.track_event
            if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                stack.setdefault(e.track_uuid, []).append(e.name)
            else:
                assert stack[e.track_uuid].pop()  # every end closes an open slice of its lane
    assert all(not s for s in stack.values())


def test_converter_names_a_missing_perfetto_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "chip_swimlane_records.json"
    records.write_text(json.dumps(RECORDS))
    assert converter_main([str(records), "--perfetto", str(tmp_path / "nope" / "t.pftrace")]) == 1
    assert "output directory does not exist" in capsys.readouterr().err


def test_write_artefact_replaces_whole_files_and_leaves_no_temporary(tmp_path: Path) -> None:
    from pypto.runtime.dfx.base import write_artefact

    path = tmp_path / "a.json"
    write_artefact(path, "old\n")
    write_artefact(path, "new é\r\n")  # text is UTF-8, newlines kept as given
    write_artefact(tmp_path / "b.bin", bytes(range(256)))
    assert path.read_bytes() == "new é\r\n".encode() and (tmp_path / "b.bin").read_bytes() == bytes(range(256))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin"]
    with pytest.raises(TypeError):
        write_artefact(path, 3)  # type: ignore[arg-type]
    assert path.read_bytes() == "new é\r\n".encode() and sorted(p.name for p in tmp_path.iterdir()) == [
        "a.json",
        "b.bin",
    ]


@pytest.mark.parametrize(
    "obj",
    [{}, [], {"a": [], "b": {}}, [1, -2, 3.5, 1e300, 1e-7, -0.0, True, False, None, "x"], {"é\n\"": "\u2603\\", 7: [[]]},
     {"rows": [[0, 4294967296, 1, 1000, 1600, 20]], "f": float("nan"), "g": [float("inf"), float("-inf")]},
     (1, (2, [3])), {"n": 2**70}],
)  # fmt: skip
def test_json_text_holds_json_dumps_values(obj: Any) -> None:
    from pypto.runtime.dfx.base import json_text

    text = json_text(obj)
    assert json.dumps(json.loads(text)) == json.dumps(obj)  # the same document (NaN compares as text)
    assert json_text(obj) == text  # deterministic


def test_json_text_puts_each_outer_item_on_its_own_line() -> None:
    from pypto.runtime.dfx.base import json_text

    doc = {"tasks": [{"id": 0, "args": [{"shape": [2, 3]}]}, {"id": 1, "args": []}], "n": 2, "empty": []}
    assert json_text(doc).splitlines() == [
        "{",
        ' "tasks": [',
        '  {"id":0,"args":[{"shape":[2,3]}]},',
        '  {"id":1,"args":[]}',
        " ],",
        ' "n": 2,',
        ' "empty": []',
        "}",
    ]


def test_json_text_leaves_other_values_to_json() -> None:
    import numpy as np

    from pypto.runtime.dfx.base import json_text

    with pytest.raises(ValueError):
        json_text({"v": float("nan")}, allow_nan=False)
    assert json.loads(json_text({"v": np.float64(0.1), 1.5: 2, None: 3, True: 4})) == {
        "v": 0.1, "1.5": 2, "null": 3, "true": 4
    }  # fmt: skip
    with pytest.raises(TypeError):
        json_text({(1, 2): 3})  # json's key rule
    with pytest.raises(TypeError):
        json_text([np.int64(3)])
