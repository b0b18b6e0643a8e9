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
    args = [
        str(VADD),
        "--emit",
        "pto",
        "--enable-insert-sync",
        "--memory-planner",
        "--print-ir-after-all",
        "--dump-dir",
        str(d),
    ]
    code, _, err = run(args, capsys)
    assert code == 0
    assert sorted(p.name for p in d.iterdir()) == [
        "00_input.mlir",
        "01_after_verify.mlir",
        "02_after_plan-memory.mlir",
        "03_after_ptoas-insert-sync.mlir",
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


@pytest.mark.parametrize(("space", "rows", "addr", "align"), [("vec", 16, 3, 32), ("vec", 16, 48, 32), ("left", 16, 256, 512)])
def test_an_unaligned_tile_address_is_refused(
    space: str, rows: int, addr: int, align: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tile address must be a multiple of its space's alignment (32 B vec, 512 B L0): ``addr = 3`` was
    accepted and the device model ran the tile there, overlapping its neighbour."""
    t = (f"!pto.tile_buf<loc={space}, dtype=f16, rows={rows}, cols=16, v_row={rows}, v_col=16, blayout=row_major, "
         "slayout=none_box, fractal=512, pad=0>")  # fmt: skip
    src = tmp_path / "unaligned.pto"
    src.write_text(
        "module {\n  func.func @k() {\n"
        f"    %c = arith.constant {addr} : i64\n"
        f"    %a = pto.alloc_tile addr = %c : {t}\n"
        "    return\n  }\n}\n"
    )
    code, _, err = run([str(src), "--emit", "pto"], capsys)
    assert code == 1
    assert err.startswith(f"{src}:4:5: error: {space} tile at address {addr} is not {align}-byte aligned"), err
    src.write_text(src.read_text().replace(f"constant {addr} ", f"constant {2 * align} "))
    code, _, err = run([str(src), "--emit", "pto"], capsys)
    assert code == 0, err


def test_internal_error_has_no_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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


# ---- PTOAS's command line (issue 18 item 3) ----

TILE = "!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=8, v_row=8, v_col=8, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def _kernel(tmp_path: Path, addr: bool, arch: str | None = None) -> Path:
    attrs = f' attributes {{pto.target_arch = "{arch}"}}' if arch else ""
    alloc = "%c0 = arith.constant 0 : i64\n    %a = pto.alloc_tile addr = %c0" if addr else "%a = pto.alloc_tile"
    src = tmp_path / ("addr.pto" if addr else "noaddr.pto")
    src.write_text(
        f"module{attrs} {{\n  func.func @k() {{\n    {alloc} : {TILE}\n"
        f"    pto.tadd ins(%a, %a : {TILE}, {TILE}) outs(%a : {TILE})\n    return\n  }}\n}}\n"
    )
    return src


@pytest.mark.parametrize(
    ("flags", "expected"),
    [(["--pto-arch=a3"], "a2a3"), (["--pto-arch", "A5"], "a5"), (["--arch", "a5"], "a5"), ([], "a5")],
)
def test_pto_arch(flags: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _kernel(tmp_path, addr=False, arch="a5")  # the module's own arch stands when no flag is given
    code, out, err = run([str(src), "--emit", "pto", *flags], capsys)
    assert code == 0, err
    assert f'pto.target_arch = "{expected}"' in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--pto-arch=a2"], "Error: invalid --pto-arch='a2'. Expected 'a3' or 'a5'."),
        (["--pto-level=level9"], "Error: invalid --pto-level='level9'. Expected 'level1', 'level2', or 'level3'."),
    ],
)
def test_invalid_arch_and_level(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.cpp"
    code, _, err = run([str(_kernel(tmp_path, addr=False)), "-o", str(out), *flags], capsys)
    assert code == 1 and err.strip() == message
    assert not out.exists()


def test_usage_error_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(_kernel(tmp_path, addr=False)), "--no-such-option"]) == 1  # as PTOAS (LLVM's parser)
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_pto_level_addr_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_addr, without = _kernel(tmp_path, addr=True), _kernel(tmp_path, addr=False)
    code, _, err = run([str(without), "--emit", "pto", "--pto-level=level3"], capsys)
    assert code == 1 and err.startswith(f"{without}:3:5: error: 'pto.alloc_tile' op requires 'addr' operand"), err
    code, _, err = run([str(with_addr), "--emit", "pto", "--pto-level=level2"], capsys)
    assert code == 1 and "unexpected 'addr' operand: only supported when --pto-level=level3" in err
    for src, level in ((with_addr, "level3"), (without, "LEVEL2")):
        code, _, err = run([str(src), "--emit", "pto", f"--pto-level={level}"], capsys)
        assert code == 0, err
    for src in (with_addr, without):  # no --pto-level: both forms are accepted
        code, _, err = run([str(src), "--emit", "pto"], capsys)
        assert code == 0, err


def test_stdin_and_dash_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(_kernel(tmp_path, addr=False).read_text()))
    code, out, err = run(["--emit", "pto", "-o", "-", "--disable-infer-layout", "--emit-addptr-trace"], capsys)
    assert code == 0, err
    assert "pto.tadd" in out and not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    ("flags", "layout"), [(["--pto-arch=a3"], "row_major"), (["--pto-arch=a5"], "col_major"), ([], "row_major")]
)
def test_left_tiles_take_the_arch_layout(
    flags: list[str], layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PTOAS's parser arch scope: a Left tile's blayout is the arch's (a3 row_major, a5 col_major)."""
    left = "!pto.tile_buf<loc=left, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
    src = tmp_path / "left.pto"
    src.write_text(
        f'module attributes {{pto.target_arch = "a3"}} {{\n  func.func @k() {{\n    %a = pto.alloc_tile : {left}\n    return\n  }}\n}}\n'
    )
    code, out, err = run([str(src), "--emit", "pto", *flags], capsys)
    assert code == 0, err
    assert f"loc=left, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout={layout}" in out


@pytest.mark.parametrize("emit", ["cpp", "pto"])
def test_output_equal_to_input_is_refused(emit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming the input ``.pto`` is a user error and the ``.pto`` keeps its text (the C++ or the
    re-printed ``.pto`` once replaced it)."""
    src = _kernel(tmp_path, addr=False)
    before = src.read_text()
    code, out, err = run([str(src), "--emit", emit, "-o", str(tmp_path / "." / src.name)], capsys)
    assert code == 1 and out == ""
    assert err.startswith(f"ptoas: error: {tmp_path / '.' / src.name}: the output path (-o) is the input file {src}")
    assert src.read_text() == before


def test_dump_dir_holding_a_compile_dump_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--dump-dir`` clears an earlier run's dumps from its folder: a build's ``passes_dump/`` is refused
    with nothing deleted (its dumps were wiped)."""
    dump = tmp_path / "passes_dump"
    dump.mkdir()
    for name in ("00_frontend.py", "01_after_InlineFunctions.py"):
        (dump / name).write_text("x\n")
    code, out, err = run([str(_kernel(tmp_path, addr=False)), "--emit", "pto", "--dump-dir", str(dump)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"ptoas: error: {dump}: the dump folder holds a compile's pass dumps (00_frontend.py)")
    assert sorted(p.name for p in dump.iterdir()) == ["00_frontend.py", "01_after_InlineFunctions.py"]


def test_parse_error_after_a_prefix_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """xDSL's message for a ``#``, ``%``, ``^`` or ``!`` with no name after it had ``{first_char}`` unformatted."""
    src = tmp_path / "c.pto"
    src.write_text("module {\n  func.func @k() {\n    %  = arith.constant 0 : i64\n    return\n  }\n}\n")
    code, _, err = run([str(src), "--emit", "pto"], capsys)
    assert code == 1 and err == f"{src}:3:5: error: Expected suffix identifier after '%'\n", err


def test_dump_dir_holding_the_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A dump of an earlier run given as the input, with that run's ``--dump-dir``: the clearing of the
    earlier dumps deleted the input; it is refused with nothing deleted."""
    dump = tmp_path / "dumps"
    code, _, err = run([str(_kernel(tmp_path, addr=False)), "--emit", "pto", "--dump-dir", str(dump)], capsys)
    assert code == 0, err
    names = sorted(p.name for p in dump.iterdir())
    again = dump / names[-1]
    code, out, err = run([str(again), "--emit", "pto", "--dump-dir", str(dump)], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"ptoas: error: {dump}: the dump folder holds the input file {again.name}"), err
    assert sorted(p.name for p in dump.iterdir()) == names


def test_input_not_utf8_names_the_byte_and_offset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A binary file as input (``ptoas /bin/ls``) is named as pypto-opt names it: the byte and its offset
    (it printed Python's codec message)."""
    path = tmp_path / "bin.pto"
    path.write_bytes(b"module {\n}\n\x7fELF\xd0\x01")
    code, out, err = run([str(path)], capsys)
    assert (code, out) == (1, "")
    assert err == f"ptoas: error: {path}: input is not UTF-8 text (byte 0xd0 at offset 15)\n", err
