"""pypto-ir-trace discovery: snapshot files, gaps, names, UTF-8, .log warnings, validation.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pypto.tools.ir_trace.discovery import IRTraceError, discover

FRONT = "@pl.program\nclass P:\n    def f(self):\n        return 1\n"


def make(tmp: Path, files: dict[str, str | bytes]) -> Path:
    d = tmp / "passes_dump"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return d


def test_order_names_warnings_and_ignored_files(tmp_path: Path) -> None:
    d = make(
        tmp_path,
        {
            "00_frontend.py": FRONT,
            "02_after_B.py": FRONT,
            "01_after_A.py": FRONT,
            "01_after_A.log": "warning: something\n",
            "10_after_C.py.log": "unused",  # no such snapshot
            "fa_fused_EXTRACT.py": "x",
            "notes.txt": "x",
            ".00_frontend.py.abc.tmp": "partial",
        },
    )
    dump = discover(d)
    assert dump.fmt == "py"
    assert [(s.index, s.file, s.name) for s in dump.snapshots] == [
        (0, "00_frontend.py", "frontend"),
        (1, "01_after_A.py", "A"),
        (2, "02_after_B.py", "B"),
    ]
    assert dump.snapshots[1].warning == "warning: something\n"
    assert dump.snapshots[1].warning_file == "01_after_A.log"
    assert dump.snapshots[0].warning is None and dump.verdicts == {}


def test_single_snapshot_is_a_valid_dump(tmp_path: Path) -> None:
    assert len(discover(make(tmp_path, {"00_frontend.py": FRONT})).snapshots) == 1


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "missing 00_frontend.py in {d}"),
        ({"01_after_A.py": "x"}, "missing 00_frontend.py in {d}"),
        (
            {"00_frontend.py": "x", "02_after_B.py": "x"},
            "missing snapshot index 01 between 00_frontend.py and 02_after_B.py",
        ),
        (
            {"00_frontend.py": "x", "01_after_A.py": "x", "01_after_B.py": "x"},
            "duplicate snapshot index 01: 01_after_A.py, 01_after_B.py",
        ),
        ({"00_frontend.py": "x", "01_A.py": "x"}, "malformed snapshot name 01_A.py; expected NN_after_PassName.py"),
        ({"00_frontend.py": "x", "01_after_A.py": b"\xff\xfe"}, "01_after_A.py is not valid UTF-8"),
        (
            {"00_frontend.py": "x", "01_after_A.mlir": "x"},
            "both .py and .mlir snapshots in {d}; choose one with --format",
        ),
    ],
)
def test_bad_dumps(tmp_path: Path, files: dict[str, str | bytes], message: str) -> None:
    d = make(tmp_path, files)
    with pytest.raises(IRTraceError) as e:
        discover(d)
    assert str(e.value) == message.format(d=d)


def test_missing_and_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IRTraceError, match="^input directory does not exist: "):
        discover(tmp_path / "nope")
    (tmp_path / "f").write_text("x")
    with pytest.raises(IRTraceError, match="^input path is not a directory: "):
        discover(tmp_path / "f")


def test_mlir_dump_and_explicit_format(tmp_path: Path) -> None:
    d = make(
        tmp_path,
        {"00_input.mlir": "builtin.module {\n}\n", "01_after_OutlineIncoreScopes.mlir": "builtin.module {\n}\n"},
    )
    dump = discover(d)
    assert dump.fmt == "mlir" and [s.name for s in dump.snapshots] == ["input", "OutlineIncoreScopes"]
    with pytest.raises(IRTraceError, match="missing 00_frontend.py"):
        discover(d, "py")


def test_upstream_dumps_discovered() -> None:
    for name in ("add", "matmul_k", "softmax_rows"):
        dump = discover(f"/work/shared/reference/upstream-builds/{name}/passes_dump")
        assert len(dump.snapshots) == 50 and dump.snapshots[-1].name == "MaterializeValidShapeSymbols"


def _validation(d: Path, data: object) -> None:
    (d / "validation.json").write_text(json.dumps(data))


def test_validation_json(tmp_path: Path) -> None:
    d = make(tmp_path, {"00_frontend.py": FRONT, "01_after_A.py": FRONT, "02_after_B.py": FRONT})
    _validation(
        d,
        {
            "version": 1,
            "snapshots": {
                "00_frontend.py": {"tensors": {"out": {"status": "pass", "max_abs_diff": 0.0}}},
                "01_after_A.py": {
                    "tensors": {
                        "out": {"status": "fail", "max_abs_diff": 0.5},
                        "x": {"status": "pass", "max_abs_diff": 0},
                    }
                },
                "02_after_B.py": {"error": "could not run"},
            },
        },
    )
    v = discover(d).verdicts
    assert v["00_frontend.py"].status == "pass"
    assert v["01_after_A.py"].status == "fail" and [t.name for t in v["01_after_A.py"].tensors] == ["out", "x"]
    assert v["01_after_A.py"].tensors[0].max_abs_diff == 0.5
    assert v["02_after_B.py"].status == "error" and v["02_after_B.py"].message == "could not run"


@pytest.mark.parametrize(
    ("data", "what"),
    [
        ("{", "not JSON"),
        ({"snapshots": {}}, "expected"),
        ({"version": 1, "snapshots": {"09_after_Z.py": {"error": "x"}}}, "unknown snapshot 09_after_Z.py"),
        ({"version": 1, "snapshots": {"00_frontend.py": {"tensors": {"o": {"status": "ok"}}}}}, "needs"),
        (
            {
                "version": 1,
                "snapshots": {"00_frontend.py": {"tensors": {"o": {"status": "pass", "max_abs_diff": "1"}}}},
            },
            "number",
        ),
        ({"version": 1, "snapshots": {"00_frontend.py": {}}}, "no tensors and no error"),
    ],
)
def test_bad_validation_json(tmp_path: Path, data: object, what: str) -> None:
    d = make(tmp_path, {"00_frontend.py": FRONT})
    if isinstance(data, str):
        (d / "validation.json").write_text(data)
    else:
        _validation(d, data)
    with pytest.raises(IRTraceError, match="^invalid validation.json: .*" + what):
        discover(d)
