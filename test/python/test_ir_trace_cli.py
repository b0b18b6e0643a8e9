"""pypto-ir-trace command line: arguments, exit codes, error lines, atomic output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.tools.ir_trace import cli
from pypto.tools.ir_trace.synthetic import write_dump

UPSTREAM_ADD = "/work/shared/reference/upstream-builds/add/passes_dump"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_default_output_in_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run([UPSTREAM_ADD], capsys)
    assert (code, err) == (0, "")
    assert out.strip() == "ir_trace.html" and (tmp_path / "ir_trace.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ir_trace.html"]  # no temp file left


def test_explicit_output_context_and_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_path = tmp_path / "r.html"
    code, _, _ = run([UPSTREAM_ADD, "-o", str(out_path), "--context", "0", "--format", "py"], capsys)
    assert code == 0 and '"context":0' in out_path.read_text()
    code, _, _ = run([UPSTREAM_ADD, "--output", str(out_path), "--context", "7"], capsys)
    assert code == 0 and '"context":7' in out_path.read_text()


def test_dash_output_is_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o -`` is stdout, as for pypto-opt and ptoas (it wrote a file named ``-``): the page, no path after it."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run([UPSTREAM_ADD, "-o", "-"], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        ([], "the following arguments are required: PASSES_DUMP"),
        ([UPSTREAM_ADD, "--context", "-1"], "argument --context: must be a non-negative integer: '-1'"),
        ([UPSTREAM_ADD, "--context", "x"], "argument --context: invalid non-negative integer: 'x'"),
        ([UPSTREAM_ADD, "--format", "c"], "argument --format: invalid choice: 'c'"),
        ([UPSTREAM_ADD, "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_argument_errors_exit_2(argv: list[str], what: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("usage: pypto-ir-trace ")
    assert err.splitlines()[-1].startswith(f"pypto-ir-trace: error: {what}")


def test_content_and_io_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gap = tmp_path / "gap"
    gap.mkdir()
    (gap / "00_frontend.py").write_text("x = 1\n")
    (gap / "02_after_B.py").write_text("x = 2\n")
    (tmp_path / "file").write_text("")
    out = str(tmp_path / "o.html")
    cases = [
        ([str(tmp_path / "missing"), "-o", out], f"input directory does not exist: {tmp_path / 'missing'}"),
        ([str(tmp_path / "file"), "-o", out], f"input path is not a directory: {tmp_path / 'file'}"),
        ([str(gap), "-o", out], "missing snapshot index 01 between 00_frontend.py and 02_after_B.py"),
        (
            [UPSTREAM_ADD, "-o", str(tmp_path / "nodir" / "r.html")],
            f"output directory does not exist: {tmp_path / 'nodir'}",
        ),
        ([UPSTREAM_ADD, "-o", str(tmp_path)], f"output path is a directory: {tmp_path}"),
        ([UPSTREAM_ADD, "--format", "mlir", "-o", out], f"missing snapshot 00_*.mlir in {UPSTREAM_ADD}"),
    ]
    for argv, what in cases:
        code, stdout, err = run(argv, capsys)
        assert (code, stdout, err) == (1, "", f"pypto-ir-trace: error: {what}\n"), argv
    assert not (tmp_path / "o.html").exists()


def test_output_equal_to_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming a snapshot, its log or a file the lens reads is a user error and the file keeps its
    text (the page once replaced it)."""
    dump = write_dump(tmp_path / "build" / "passes_dump", passes=2, lines=5)
    (dump / "01_after_Synthetic1.log").write_text("warning\n")
    pto = tmp_path / "build" / "ptoas" / "k.pto"
    pto.parent.mkdir()
    pto.write_text("module {\n}\n")
    for target in (dump / "00_frontend.py", dump / "01_after_Synthetic1.log", pto):
        before = target.read_text()
        code, stdout, err = run([str(tmp_path / "build"), "-o", str(target)], capsys)
        assert (code, stdout) == (1, ""), err
        assert err.startswith(f"pypto-ir-trace: error: {target}: the output path (-o) is the input file"), err
        assert target.read_text() == before


def test_failed_write_leaves_old_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.html"
    report.write_text("old")

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    code, _, err = run([UPSTREAM_ADD, "-o", str(report)], capsys)
    assert code == 1 and err == f"pypto-ir-trace: error: cannot write {report}: No space left on device\n"
    assert report.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


KILL_MID_WRITE = """
import os, signal, sys
from pypto.tools.ir_trace import cli
real_fsync = os.fsync
def die(fd):
    os.kill(os.getpid(), signal.SIGKILL)
os.fsync = die
sys.exit(cli.main(sys.argv[1:]))
"""


def test_killed_mid_write_leaves_no_partial_report(tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    report.write_text("old")
    proc = subprocess.run([sys.executable, "-c", KILL_MID_WRITE, UPSTREAM_ADD, "-o", str(report)], capture_output=True)
    assert proc.returncode == -9
    assert report.read_text() == "old"
    assert all(
        p.name == "r.html" or (p.name.startswith(".r.html.") and p.name.endswith(".tmp")) for p in tmp_path.iterdir()
    )


def test_module_entry_point_same_behaviour(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "passes_dump", 3, 60)
    ok = subprocess.run(
        [sys.executable, "-m", "pypto.tools.ir_trace", str(dump), "-o", str(tmp_path / "a.html")],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and ok.stdout.strip() == str(tmp_path / "a.html")
    bad = subprocess.run(
        [sys.executable, "-m", "pypto.tools.ir_trace", str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert (
        bad.returncode == 1
        and bad.stderr == f"pypto-ir-trace: error: input directory does not exist: {tmp_path / 'nope'}\n"
    )
    arg = subprocess.run(
        [sys.executable, "-m", "pypto.tools.ir_trace", str(dump), "--context", "-2"], capture_output=True, text=True
    )
    assert arg.returncode == 2 and arg.stderr.splitlines()[-1].startswith("pypto-ir-trace: error: argument --context")
    # same input, same bytes through the module entry point too
    subprocess.run(
        [sys.executable, "-m", "pypto.tools.ir_trace", str(dump), "-o", str(tmp_path / "b.html")],
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()


def test_console_script_installed() -> None:
    exe = Path(sys.executable).parent / "pypto-ir-trace"
    if not exe.exists():
        pytest.skip("console script not installed (source checkout)")
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "PASSES_DUMP" in proc.stdout and "--context N" in proc.stdout
