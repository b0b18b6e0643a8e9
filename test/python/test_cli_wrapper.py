"""The shared CLI wrapper (pypto.utils.cli): user errors exit 1 with one
located line, bugs exit 2 with ``internal error``, and every tool uses it."""

from __future__ import annotations

import errno
import importlib
import inspect
import re
from pathlib import Path

import pytest

from pypto.diagnostics import Diagnostic, DiagnosticError, Severity, SourceSpan
from pypto.errors import Error
from pypto.utils.cli import cli_main, read_input_text, run_cli

# Every command-line entry point of the package: module, attribute.
ENTRY_POINTS = [
    ("pypto.tools.pypto_opt", "main"),
    ("pypto.ptoas.cli", "main"),
    ("pypto.ptoas.pto_text", "main"),
    ("pypto.tools.ir_trace.cli", "main"),
    ("pypto.tools.memory_map.cli", "main"),
    ("pypto.debug.bisect", "main"),
    ("pypto.compile_profiling.__main__", "main"),
    ("pypto.target.__main__", "main"),
    ("pypto.tools.clean_sim_trace", "main"),
    ("pypto.tools.swimlane_converter", "main"),
    ("pypto.tools.deps_viewer", "main"),
    ("pypto.tools.dump_viewer", "main"),
    ("pypto.tools.scope_stats_plot", "main"),
    ("pypto.tools.sched_overhead_analysis", "main"),
]


@pytest.fixture(autouse=True)
def _no_backtrace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYPTO_BACKTRACE", raising=False)
    monkeypatch.delenv("PTO_BACKTRACE", raising=False)


def test_user_error_is_one_line_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        raise Error("k.py: wrong thing")

    assert run_cli("tool", body) == 1
    assert capsys.readouterr().err == "tool: error: k.py: wrong thing\n"


def test_located_diagnostic_keeps_its_location(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        raise DiagnosticError(Diagnostic(Severity.ERROR, "bad op", SourceSpan("k.py", 3, 5)))

    assert run_cli("tool", body) == 1
    assert capsys.readouterr().err.startswith("k.py:3:5: error: bad op")


def test_os_error_names_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def body() -> int:
        (tmp_path / "missing" / "x").read_text()
        return 0

    assert run_cli("tool", body) == 1
    err = capsys.readouterr().err
    assert err.startswith("tool: error: ") and "missing/x: No such file or directory" in err
    assert "Traceback" not in err


def test_bug_is_internal_error_exit_2(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def body() -> int:
        raise KeyError("oops")

    assert run_cli("tool", body) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "tool: internal error: KeyError: 'oops'"
    assert "bug in PyPTO" in err and "PYPTO_BACKTRACE=1" in err and "Traceback" not in err
    monkeypatch.setenv("PYPTO_BACKTRACE", "1")
    assert run_cli("tool", body) == 2
    assert "Traceback" in capsys.readouterr().err


def test_exit_codes_pass_through_and_interrupt(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("tool", lambda: 3) == 3
    assert run_cli("tool", lambda: None) == 0

    def interrupted() -> int:
        raise KeyboardInterrupt

    def usage() -> int:
        raise SystemExit(2)

    assert run_cli("tool", interrupted) == 130
    assert run_cli("tool", usage) == 2
    assert "interrupted" in capsys.readouterr().err


def test_cli_main_decorator_passes_argv(capsys: pytest.CaptureFixture[str]) -> None:
    @cli_main("t")
    def main(argv: list[str] | None = None) -> int:
        if argv == ["bad"]:
            raise Error("bad argument")
        return 0

    assert main([]) == 0
    assert main(["bad"]) == 1 and "t: error: bad argument" in capsys.readouterr().err


def test_read_input_text_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.dat"
    path.write_bytes(b"ok\xff\xfe")
    with pytest.raises(Error, match=r"bin\.dat: input is not UTF-8 text \(byte 0xff at offset 2\)"):
        read_input_text(path)
    with pytest.raises(OSError) as info:
        read_input_text(tmp_path / "none")
    assert info.value.errno == errno.ENOENT


@pytest.mark.parametrize(("module", "attr"), ENTRY_POINTS)
def test_every_entry_point_goes_through_the_wrapper(module: str, attr: str) -> None:
    main = getattr(importlib.import_module(module), attr)
    source = inspect.getsource(inspect.getmodule(main))  # type: ignore[arg-type]
    assert "cli_main(" in source or "report_main(" in source, f"{module}.{attr} is not wrapped"
    assert not re.search(r"(print|write)\(.*internal error", source), f"{module} prints its own internal error"


def test_console_scripts_are_listed() -> None:
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    scripts = [line.split("=")[1].strip().strip('"') for line in text.split("[project.scripts]")[1].split("\n\n")[0].splitlines()[1:]]
    listed = {f"{m}:{a}" for m, a in ENTRY_POINTS}
    assert scripts and all(s in listed for s in scripts)


def test_the_caret_stays_under_a_tab_indented_token() -> None:
    """The caret line copies the source line's tabs (a tab-indented kernel had its caret drawn to the
    left of the token: the tabs were padded as single spaces)."""
    from pypto.diagnostics import source_excerpt

    lines = ["def k():\n", "\t\treturn pl.exp(nope)\n"]
    source, caret = source_excerpt(SourceSpan("k.py", 2, 17, 2, 21), lines)
    assert source == " 2 | \t\treturn pl.exp(nope)"
    assert caret == "   | \t\t              ^~~~"
    assert source.expandtabs(8).index("nope") == caret.expandtabs(8).index("^")
