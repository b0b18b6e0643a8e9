"""Malformed input to the run-time DFX command-line tools (swimlane_converter, sched_overhead_analysis,
deps_viewer, dump_viewer): one located line and exit 1, never an internal error, a traceback or a partial
output. The inputs are a real run's artefacts with one value changed."""

from __future__ import annotations

import io
import json
import shutil
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from dfx_kernels import chain

from pypto.runtime import RunConfig
from pypto.tools.deps_viewer import main as deps_viewer_main
from pypto.tools.dump_viewer import main as dump_viewer_main
from pypto.tools.sched_overhead_analysis import main as analysis_main
from pypto.tools.swimlane_converter import main as converter_main

pytestmark = pytest.mark.usefixtures("own_dfx_flags")


@pytest.fixture(scope="module")
def dfx_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run's dfx_outputs with every artefact these tools read (level 4 records, deps.json, args dump)."""
    build = tmp_path_factory.mktemp("hunt") / "build"
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    config = RunConfig(save_kernels_dir=str(build), enable_chip_swimlane=4, enable_dump_args=2, enable_dep_gen=True)
    chain(a, x, y, config=config)
    return build / "dfx_outputs"


@pytest.fixture
def dfx(dfx_run: Path, tmp_path: Path) -> Path:
    """A private copy of the run's dfx_outputs."""
    return Path(shutil.copytree(dfx_run, tmp_path / "dfx"))


def _edit(path: Path, change: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _one_error(capsys: pytest.CaptureFixture[str], prog: str, path: Path, message: str) -> str:
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    assert err.startswith(f"{prog}: error: {path}") and message in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


def _set_core_to_thread(r: Any) -> None:
    r["metadata"]["core_to_thread"] = -1


def _set_core_id(r: Any) -> None:
    r["aicore_tasks"][0][0] = -(10**30)


def _set_orch_task_id(r: Any) -> None:
    r["aicpu_orchestrator_phases"][0][0]["task_id"] = "x"


def _set_loop_iter(r: Any) -> None:
    r["aicpu_scheduler_phases"][0][0]["loop_iter"] = None


RECORDS_CASES = [
    (_set_core_to_thread, "metadata.core_to_thread must be a list of integers"),
    (_set_core_id, "'aicore_tasks' must be a list of rows of at least 5 integers"),
    (_set_orch_task_id, "'aicpu_orchestrator_phases' must be a list per thread of records"),
    (_set_loop_iter, "'aicpu_scheduler_phases' must be a list per thread of records"),
]


@pytest.mark.parametrize(("change", "message"), RECORDS_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_bad_records_values_are_one_line_errors(
    dfx: Path, capsys: pytest.CaptureFixture[str], change: Callable[[Any], None], message: str
) -> None:
    """A non-list core_to_thread, a core id no index can be, an orchestrator task id that is text, a loop
    count that is null: each was ``internal error: TypeError / IndexError / ValueError`` (exit 2)."""
    records = dfx / "chip_swimlane_records.json"
    _edit(records, change)
    out = dfx / "out.json"
    assert converter_main([str(records), "-o", str(out), "--overhead"]) == 1
    if change is not _set_orch_task_id:  # the analysis does not read the orchestrator's phases
        _one_error(capsys, "swimlane_converter", records, message)
        argv = ["--chip-swimlane-records-json", str(records), "--deps-json", str(dfx / "deps.json")]
        assert analysis_main(argv) == 1
        _one_error(capsys, "sched_overhead_analysis", records, message)
    else:
        _one_error(capsys, "swimlane_converter", records, message)
    assert not out.exists()


def test_infinite_deps_ids_are_one_line_errors(dfx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An ``Infinity`` edge end (Python's json reads it) was ``internal error: OverflowError`` in both tools."""
    deps = dfx / "deps.json"
    deps.write_text(deps.read_text().replace('"pred":"0"', '"pred":Infinity', 1))
    assert "Infinity" in deps.read_text()
    records = dfx / "chip_swimlane_records.json"
    assert converter_main([str(records), "-o", str(dfx / "out.json")]) == 1
    _one_error(capsys, "swimlane_converter", deps, "does not have the documented tasks/edges")
    assert analysis_main(["--chip-swimlane-records-json", str(records), "--deps-json", str(deps)]) == 1
    _one_error(capsys, "sched_overhead_analysis", deps, "does not have the documented tasks/edges")
    assert not (dfx / "out.json").exists()


def test_deps_viewer_reads_past_an_infinite_sidecar_core(dfx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The sidecar records are optional: an ``Infinity`` core id there is a warning (it was an internal error)."""
    records = dfx / "chip_swimlane_records.json"
    records.write_text(records.read_text().replace("[24,", "[Infinity,", 1))
    assert deps_viewer_main([str(dfx / "deps.json"), "-o", str(dfx / "v.txt")]) == 0
    err = capsys.readouterr().err
    assert "internal error" not in err and f"warning: {records}: not read" in err
    assert "perf_sidecar: no" in (dfx / "v.txt").read_text()


def test_deps_viewer_warns_of_a_negative_sidecar_core(dfx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A negative core id in the sidecar is a warning naming the row (it indexed core_types from its end and
    labelled the task with another core's type, silently)."""
    records = dfx / "chip_swimlane_records.json"
    doc = json.loads(records.read_text())
    doc["aicore_tasks"][0][0] = -1
    records.write_text(json.dumps(doc))
    assert deps_viewer_main([str(dfx / "deps.json"), "-o", str(dfx / "v.txt")]) == 0
    err = capsys.readouterr().err
    assert f"warning: {records}: not read" in err and "aicore_tasks[0] names core -1" in err, err
    assert "perf_sidecar: no" in (dfx / "v.txt").read_text()


def _manifest(dfx: Path) -> Path:
    return dfx / "args_dump" / "args_dump.json"


def _set_role_list(m: Any) -> None:
    m["args"][0]["role"] = ["input"]


def _set_arg_index_path(m: Any) -> None:
    m["args"][0]["arg_index"] = "0/../../x"


def _set_bin_file_null(m: Any) -> None:
    m["bin_file"] = None


def _set_task_id_number(m: Any) -> None:
    m["args"][0]["task_id"] = -1


def _set_task_id_no_prefix(m: Any) -> None:
    m["args"][0]["task_id"] = "10"


DUMP_CASES = [
    (_set_role_list, "args[0] has role ['input'], expected input, output or inout"),
    (_set_task_id_number, "args[0] has task_id -1, expected a string 0x<hex>"),
    (_set_task_id_no_prefix, "args[0] has task_id '10', expected a string 0x<hex>"),
    (_set_arg_index_path, "args[0] has arg_index '0/../../x', expected an integer >= 0"),
    (_set_bin_file_null, "bin_file is null but args[0] has bin_size 8192"),
]


@pytest.mark.parametrize(("change", "message"), DUMP_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_bad_args_dump_manifests_are_one_line_errors(
    dfx: Path, capsys: pytest.CaptureFixture[str], change: Callable[[Any], None], message: str
) -> None:
    """A role that is a list (``unhashable type``), an arg_index that is a path (it names the export file), a
    null bin_file under tensors with bytes (``max() arg is an empty sequence`` after the export folder was
    made): one line naming the manifest, exit 1, nothing exported."""
    _edit(_manifest(dfx), change)
    out = dfx / "exp"
    assert dump_viewer_main([str(dfx / "args_dump"), "--export", "--out", str(out)]) == 1
    _one_error(capsys, "dump_viewer", _manifest(dfx), message)
    assert not out.exists()


def test_an_empty_tensor_exports(dfx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tensor with a 0 in its shape and no bytes is a valid dump: its export says it has no elements (the
    overview grid was ``internal error: ValueError: max() arg is an empty sequence``)."""

    def empty(m: Any) -> None:
        m["args"][0].update(shape=[0, 64], numel=0, bin_size=0)

    _edit(_manifest(dfx), empty)
    out = dfx / "exp"
    assert dump_viewer_main([str(dfx / "args_dump"), "--index", "0", "--export", "--out", str(out)]) == 0
    assert "internal error" not in capsys.readouterr().err
    (text,) = [p.read_text() for p in out.iterdir()]
    assert "## overview (shape [0, 64]: no elements)" in text


def test_rows_sharing_an_export_name_keep_both_files(dfx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two rows with the same task, stage, role and arg_index (an ambiguous arg_index) export two files: the
    later row's name carries its table index (the second file replaced the first, silently)."""

    def twin(m: Any) -> None:
        first, second = m["args"][0], m["args"][1]
        second.update({k: first[k] for k in ("task_id", "stage", "role", "arg_index")})

    _edit(_manifest(dfx), twin)
    out = dfx / "exp"
    assert dump_viewer_main([str(dfx / "args_dump"), "--export", "--out", str(out)]) == 0
    total = len(json.loads(_manifest(dfx).read_text())["args"])
    names = sorted(p.name for p in out.iterdir())
    assert len(names) == total
    assert sum(name.endswith("_idx1.txt") for name in names) == 1


def test_a_failed_export_writes_no_file(dfx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder where the last export file goes: the export fails before writing any file (the earlier
    arguments' files were written, then the error: a partial export)."""
    out = dfx / "exp"
    assert dump_viewer_main([str(dfx / "args_dump"), "--export", "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    shutil.rmtree(out)
    out.mkdir()
    (out / names[-1]).mkdir()
    capsys.readouterr()
    assert dump_viewer_main([str(dfx / "args_dump"), "--export", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and "output path is a directory" in err and str(out / names[-1]) in err
    assert sorted(p.name for p in out.iterdir()) == [names[-1]]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-o", "{records}"], "the output path (-o) is the input file"),
        (["-o", "{deps}"], "the output path (-o) is the input file"),
        (["-o", "{dfx}/t.json", "--perfetto", "{records}"], "the output path (--perfetto) is the input file"),
        (["-o", "{dfx}/t.json", "--perfetto", "{dfx}/t.json"], "--perfetto and -o name the same file"),
    ],
)
def test_swimlane_converter_never_writes_over_an_input(
    dfx: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    """``-o`` (or ``--perfetto``) naming the records or the sibling deps.json replaced that input with the
    trace, exit 0: the run's records were lost. Both outputs one path: the protobuf replaced the JSON."""
    records = dfx / "chip_swimlane_records.json"
    before = {p.name: p.read_bytes() for p in dfx.iterdir() if p.is_file()}
    argv = [a.format(records=records, deps=dfx / "deps.json", dfx=dfx) for a in extra]
    assert converter_main([str(records), *argv]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and message in err and len(err.strip().splitlines()) == 1, err
    assert {p.name: p.read_bytes() for p in dfx.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("tool", ["swimlane_converter", "deps_viewer"])
def test_output_dash_is_stdout(
    dfx: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tool: str
) -> None:
    """``-o -`` is stdout (the reports' convention): it wrote a file named ``-`` in the working folder."""
    monkeypatch.chdir(tmp_path)
    if tool == "swimlane_converter":
        assert converter_main([str(dfx / "chip_swimlane_records.json"), "-o", "-"]) == 0
        assert json.loads(capsys.readouterr().out)["traceEvents"]
    else:
        assert deps_viewer_main([str(dfx / "deps.json"), "-o", "-"]) == 0
        assert capsys.readouterr().out.startswith("SUMMARY\n  source_deps_json: ")
    assert not (tmp_path / "-").exists()


def test_records_from_stdin_read_no_files_of_the_working_folder(
    dfx: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records from stdin have no sibling files: the deps.json and name map of the working folder are read only
    when named (they were picked up silently, drawing another run's arrows and names)."""
    records = (dfx / "chip_swimlane_records.json").read_bytes()
    monkeypatch.chdir(dfx)

    def flows(extra: list[str]) -> int:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(records)))
        assert converter_main(["-", "-o", "-", *extra]) == 0
        events = json.loads(capsys.readouterr().out)["traceEvents"]
        return sum(e.get("ph") == "s" and e.get("name") == "dependency" for e in events)

    assert flows([]) == 0
    assert flows(["--deps-json", "deps.json"]) > 0


def _block(kind: int, doc: Any) -> bytes:
    """One visualize_data.bin block of ``doc`` as JSON (docs/en/dev/04-simulator-trace-cleaning.md)."""
    payload = json.dumps(doc).encode()
    pad = -len(payload) % 4
    return struct.pack("<QBBBB", len(payload) + pad, kind, pad, 0, 0x5A) + payload + b"\0" * pad


def _event(**over: Any) -> dict[str, Any]:
    return {"name": "vadd", "ph": "X", "pid": "core0.veccore0", "tid": "VECTOR", "ts": 1.0, "dur": 2.0, **over}


GOOD_API = {"Cores": ["core0.veccore0"], "Instructions": [{"Address": "0x10", "Cycles": [12]}]}
SET = {"name": "SET_FLAG", "pid": "core0.veccore0", "tid": "MTE2", "args": {"detail": "PIPE:MTE2,TRIGGERPIPE:VEC,"}}


@pytest.mark.parametrize(
    ("events", "api", "message"),
    [
        ({"traceEvents": "none"}, GOOD_API, "the TRACE block has no traceEvents list"),
        ({"traceEvents": [_event(), 7]}, GOOD_API, "TRACE event 1 is 7, expected an object"),
        ({"traceEvents": [_event(args=5)]}, GOOD_API, "TRACE event 0: expected a text name and an args object"),
        ({"traceEvents": [_event(name=["vadd"])]}, GOOD_API, "TRACE event 0: expected a text name"),
        ({"traceEvents": [{**SET, "ph": "B", "ts": "x"}, {**SET, "ph": "E", "ts": 2}]}, GOOD_API,
         "TRACE event 0 ('SET_FLAG') has no numeric ts"),
        ({"traceEvents": [{**SET, "ph": "B", "ts": 1, "pid": ["c"]}, {**SET, "ph": "E", "ts": 2, "pid": ["c"]}]},
         None, ""),
        ({"traceEvents": [_event()]}, {**GOOD_API, "Cores": 2}, "API_INSTR.Cores is not a list"),
    ],
)  # fmt: skip
def test_clean_sim_trace_names_the_dump_and_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], events: Any, api: Any, message: str
) -> None:
    """A TRACE event that is not an object, an args or name of the wrong type, a flag's text ts, a list
    as a flag's pid (unhashable), API_INSTR.Cores not a list: each was ``internal error: AttributeError /
    TypeError / ValueError``; and a TRACE or API_INSTR block of the wrong shape was reported without the
    file's name. Now one line naming the dump (or, for a list pid, a clean trace), nothing written on error."""
    from pypto.tools.clean_sim_trace import main as clean_main

    dump = tmp_path / "visualize_data.bin"
    dump.write_bytes(_block(2, events) + (_block(4, api) if api is not None else b""))
    code = clean_main([str(dump)])
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    if not message:
        assert code == 0 and (tmp_path / "trace.clean.json").is_file()
        return
    assert code == 1 and err.startswith(f"clean_sim_trace: error: {dump}: ") and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["visualize_data.bin"]


def test_clean_sim_trace_of_a_pto_that_is_not_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A build's ``runtime/<kernel>.pto`` that is not UTF-8 was "skipped ... 'utf-8' codec can't decode byte
    0xff in position 0" and then "no kernel could run alone": now the file and what is wrong with it."""
    from pypto.tools.clean_sim_trace import main as clean_main

    (tmp_path / "runtime").mkdir()
    pto = tmp_path / "runtime" / "k.pto"
    pto.write_bytes(b"\xff\xfe module")
    assert clean_main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == f"clean_sim_trace: error: {pto}: the .pto file is not UTF-8 text (byte 0xff at offset 0)\n"
    assert not (tmp_path / "dfx_outputs").exists()


def test_clean_sim_trace_writes_both_files_or_neither(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder named instr_metrics.json where the dump's files go: trace.clean.json was replaced, then the
    error (exit 1): a half-updated pair. Now the earlier trace.clean.json is left as it was."""
    from pypto.tools.clean_sim_trace import main as clean_main

    dump = tmp_path / "visualize_data.bin"
    dump.write_bytes(_block(2, {"traceEvents": [_event()]}) + _block(4, GOOD_API))
    (tmp_path / "trace.clean.json").write_text("earlier")
    (tmp_path / "instr_metrics.json").mkdir()
    assert clean_main([str(dump)]) == 1
    err = capsys.readouterr().err
    assert "output path is a directory" in err and str(tmp_path / "instr_metrics.json") in err, err
    assert (tmp_path / "trace.clean.json").read_text() == "earlier"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["instr_metrics.json", "trace.clean.json", "visualize_data.bin"]
