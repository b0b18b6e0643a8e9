"""Verifier diagnostics in PTOAS's words: the text after ``op`` is PTOAS's, one error per function,
and PTOAS's arch rules for ``tsel`` element types and A5 vec->vec ``textract`` / ``tinsert`` layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.ptoas import cli


def _tile(dtype: str = "f32", blayout: str = "row_major", slayout: str = "none_box", r: int = 16, c: int = 16) -> str:
    return (
        f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={r}, cols={c}, v_row={r}, v_col={c}, "
        f"blayout={blayout}, slayout={slayout}, fractal=512, pad=0>"
    )


def _run(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    src = tmp_path / "k.pto"
    src.write_text(body)
    code = cli.main([str(src), *flags])
    return code, capsys.readouterr().err


def _tsel_func(name: str, dtype: str) -> str:
    t = _tile(dtype)
    return (
        f"  func.func @{name}() {{\n"
        + "".join(f"    %{v} = pto.alloc_tile : {t}\n" for v in ("m", "a", "b", "t", "d"))
        + f"    pto.tsel ins(%m, %a, %b, %t : {t}, {t}, {t}, {t}) outs(%d : {t})\n    return\n  }}\n"
    )


def test_one_error_per_function_in_ptoas_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "module {\n" + _tsel_func("f0", "i8") + _tsel_func("ok", "f32") + _tsel_func("f1", "i8") + "}\n"
    code, err = _run(tmp_path, body, capsys, "--pto-arch=a3")
    assert code == 1
    lines = [ln for ln in err.splitlines() if ": error: " in ln]
    assert [ln.split(":")[1] for ln in lines] == ["8", "26"], err  # f0's and f1's tsel, not ok's
    for ln in lines:
        assert ln.endswith(
            "error: 'pto.tsel' op expects A2/A3 tsel src0, src1, and dst element type to be i16/i32/f16/f32 (got i8)"
        ), ln


def test_tsel_i8_is_fine_on_a5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(tmp_path, "module {\n" + _tsel_func("f0", "i8") + "}\n", capsys, "--pto-arch=a5")
    assert code == 0, err


@pytest.mark.parametrize("op", ["textract", "tinsert"])
def test_a5_vec_vec_needs_nd(tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str) -> None:
    src, dst = _tile("f16", "col_major", "row_major"), _tile("f16")
    if op == "tinsert":
        src, dst = dst, src
    body = (
        "module {\n  func.func @k() {\n    %c0 = arith.constant 0 : index\n"
        f"    %s = pto.alloc_tile : {src}\n    %d = pto.alloc_tile : {dst}\n"
        f"    pto.{op} ins(%s, %c0, %c0 : {src}, index, index) outs(%d : {dst})\n    return\n  }}\n}}\n"
    )
    code, err = _run(tmp_path, body, capsys, "--pto-arch=a5")
    assert code == 1
    assert (
        f"error: 'pto.{op}' op expects A5 vec->vec {op} src/dst to use ND layout (blayout=row_major, slayout=none_box)"
        in err
    )
    code, err = _run(
        tmp_path,
        body.replace("col_major", "row_major").replace("slayout=row_major", "slayout=none_box"),
        capsys,
        "--pto-arch=a5",
    )
    assert code == 0, err
