"""The ``ptoas`` console script: outputs, dumps and every error path (no traceback, no partial output)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.ptoas import cli

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS = SHARED / "corpus" / "pto"
REJECTED = [
    "tcvt_verify_invalid.pto",
    "tstore_verify_shape_valid_mismatch_invalid.pto",
    "pto_entry_nonvoid_rejected.pto",
    "tinsert_verify_a2a3_invalid_dtype.pto",
]
VADD = CORPUS / "vadd.pto"
LOCATED = re.compile(r"^\S+:\d+:\d+: error: .+")

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/pto not available")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def has_emitc() -> bool:
    try:
        from pypto.ptoas.emitc import emit_cpp  # noqa: F401
    except ImportError:
        return False
    return True


@needs_corpus
def test_emit_pto_with_sync(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "vadd.pto"
    code, _, err = run([str(VADD), "-o", str(out), "--emit", "pto", "--enable-insert-sync"], capsys)
    assert code == 0, err
    text = out.read_text()
    assert "pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]" in text
    assert "pto.alloc_tile addr = " in text  # planned: the input has no addresses


@needs_corpus
def test_no_sync_without_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(VADD), "--emit", "pto"], capsys)
    assert code == 0 and "set_flag" not in out


@needs_corpus
def test_arch_overrides_module(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(VADD), "--emit", "pto", "--arch", "a5"], capsys)
    assert code == 0 and 'pto.target_arch = "a5"' in out


@needs_corpus
def test_dump_dir_and_print_ir_after_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "dumps"
    args = [str(VADD), "--emit", "pto", "--enable-insert-sync", "--memory-planner", "--print-ir-after-all", "--dump-dir", str(d)]
    code, _, err = run(args, capsys)
    assert code == 0
    assert sorted(p.name for p in d.iterdir()) == [
        "00_input.mlir",
        "01_after_verify.mlir",
        "02_after_plan-memory.mlir",
        "03_after_insert-sync.mlir",
    ]
    assert err.count("// -----// IR Dump After") == 3


@needs_corpus
@pytest.mark.parametrize("name", REJECTED)
def test_rejected_corpus_files(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.cpp"
    code, stdout, err = run([str(CORPUS / name), "-o", str(out), "--enable-insert-sync"], capsys)
    assert code == 1
    assert LOCATED.match(err.strip()), err
    assert "Traceback" not in err
    assert not out.exists() and stdout == ""


def test_parse_error_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.pto"
    bad.write_text("module {\n  func.func @k() {\n    pto.tadd ins(\n  }\n}\n")
    out = tmp_path / "o.cpp"
    code, _, err = run([str(bad), "-o", str(out)], capsys)
    assert code == 1 and err.startswith(f"{bad}:") and ": error: " in err
    assert not out.exists()


def test_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([str(tmp_path / "nope.pto")], capsys)
    assert code == 1 and "error: cannot read input" in err


def test_plan_memory_overflow_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = "!pto.tile_buf<loc=vec, dtype=f32, rows=256, cols=256, v_row=256, v_col=256, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    src = tmp_path / "big.pto"
    src.write_text(
        "module {\n  func.func @k() {\n"
        f"    %a = pto.alloc_tile : {t}\n"
        f"    pto.tadd ins(%a, %a : {t}, {t}) outs(%a : {t})\n"
        "    return\n  }\n}\n"
    )
    code, _, err = run([str(src), "--emit", "pto"], capsys)
    assert code == 1
    assert err.startswith(f"{src}:3:5: error: vec tile of 262144 bytes is larger than the vec buffer"), err


def test_internal_error_has_no_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "k.pto"
    src.write_text("module {\n  func.func @k() {\n    return\n  }\n}\n")

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(cli, "run_ptoas_pipeline", boom)
    monkeypatch.delenv("PTO_BACKTRACE", raising=False)
    monkeypatch.delenv("PYPTO_BACKTRACE", raising=False)
    code, _, err = run([str(src), "--emit", "pto"], capsys)
    assert code == 2 and err.splitlines()[0] == "ptoas: internal error: RuntimeError: bug"
    assert "Traceback" not in err and "PYPTO_BACKTRACE=1" in err


@needs_corpus
def test_cpp_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not has_emitc():
        pytest.skip("pypto.ptoas.emitc (C++ emission, issue 5 item 4) is not available")
    out = tmp_path / "vadd.cpp"
    code, _, err = run([str(VADD), "-o", str(out), "--enable-insert-sync"], capsys)
    assert code == 0, err
    assert "set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0)" in out.read_text()


def test_console_script_runs() -> None:
    exe = Path(sys.executable).with_name("ptoas")
    if not exe.exists():
        pytest.skip("the ptoas console script is not installed (pip install -e .)")
    res = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    assert res.returncode == 0 and "--enable-insert-sync" in res.stdout
