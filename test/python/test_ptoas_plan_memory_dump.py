"""PTOAS's PlanMemory dump on stderr (``end PTO plan Mem!`` + the module in its memref form)
and plan-memory over PTOAS's memref input (``memref.alloc``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pypto.ptoas import cli

T = "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
UB = "memref<16x16x16xf16, #pto.address_space<vec>>"
GM = "memref<16x16x16xf16, #pto.address_space<gm>>"


def _run(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    src = tmp_path / "k.pto"
    src.write_text(body)
    code = cli.main([str(src), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def _copy(name: str) -> str:
    return (
        f"    %{name} = memref.alloc() : {UB}\n"
        f"    pto.tload ins(%arg0 : {GM}) outs(%{name} : {UB})\n"
        f"    pto.tstore ins(%{name} : {UB}) outs(%arg1 : {GM})\n"
    )


def _memref_kernel(body: str) -> str:
    return f"module {{\n  func.func @k(%arg0: {GM}, %arg1: {GM}) {{\n{body}    return\n  }}\n}}\n"


def test_dump_of_tile_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (
        "module {\n  func.func @k() {\n"
        f"    %a = pto.alloc_tile : {T}\n    %d = pto.alloc_tile : {T}\n"
        f"    pto.trsqrt ins(%a : {T}) outs(%d : {T})\n    return\n  }}\n}}\n"
    )
    code, out, err = _run(tmp_path, body, capsys, "--pto-arch=a3")
    assert code == 0, err
    assert err.startswith("end PTO plan Mem!\nmodule")
    # the written tile is planned (pointer_cast of an i64 constant), the read-only one is not
    m = re.search(
        r"%(\d+) = pto.pointer_cast\(%c(\d+)_i64\) : memref<1x16xf32, strided<\[16, 1\]>, #pto.address_space<vec>>", err
    )
    assert m, err
    assert f"%c{m.group(2)}_i64 = arith.constant {m.group(2)} : i64" in err
    assert "memref.alloc() : memref<1x16xf32, strided<[16, 1]>, #pto.address_space<vec>>" in err
    assert re.search(r"pto.trsqrt ins\(%\d+ : memref<1x16xf32, strided<\[16, 1\], offset: \?>", err), err
    assert "#pto.tile_buf_config<blayout=#pto.blayout<row_major>, slayout=#pto.slayout<none_box>" in err
    assert "TRSQRT(" in out and "end PTO" not in out


def test_memref_allocs_are_planned_with_reuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 30 buffers of 8 KiB exceed UB (192 KiB) unless sequential ones share bytes
    code, out, err = _run(tmp_path, _memref_kernel("".join(_copy(f"u{i}") for i in range(30))), capsys)
    assert code == 0, err
    assert "memref.alloc" not in err.split("end PTO plan Mem!")[1]
    assert err.count(f"pto.pointer_cast(%c0_i64) : {UB}") == 30
    assert "TLOAD(" in out


def test_buffers_in_a_loop_do_not_share_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = (
        "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n    %c2 = arith.constant 2 : index\n"
        "    scf.for %i = %c0 to %c2 step %c1 {\n" + _copy("a") + _copy("b") + "    }\n"
    )
    code, _, err = _run(tmp_path, _memref_kernel(loop), capsys)
    assert code == 0, err
    addrs = sorted(int(a) for a in re.findall(r"pto.pointer_cast\(%c(\d+)_i64\)", err))
    assert addrs == [0, 8192], err


def test_col_major_and_compact_strides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    col = (
        T.replace("blayout=row_major", "blayout=col_major").replace("rows=1", "rows=16").replace("v_row=1", "v_row=16")
    )
    compact = T.replace("pad=0>", "pad=0, compact=2>")
    body = (
        "module {\n  func.func @k() {\n"
        f"    %a = pto.alloc_tile : {col}\n    %b = pto.alloc_tile : {compact}\n"
        f"    pto.tprint ins(%a : {col})\n    pto.tprint ins(%b : {compact})\n    return\n  }}\n}}\n"
    )
    code, _, err = _run(tmp_path, body, capsys, "--pto-arch=a3")
    assert code == 0, err
    assert "memref.alloc() : memref<16x16xf32, strided<[1, 16]>, #pto.address_space<vec>>" in err
    assert "memref.alloc() : memref<1x16xf32, strided<[17, 1]>, #pto.address_space<vec>>" in err


@pytest.mark.parametrize("flags", [("--pto-level=level3",), ()])
def test_no_dump_at_level3(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]) -> None:
    body = (
        "module {\n  func.func @k() {\n    %c0 = arith.constant 0 : i64\n"
        f"    %a = pto.alloc_tile addr = %c0 : {T}\n    pto.tprint ins(%a : {T})\n    return\n  }}\n}}\n"
    )
    code, out, err = _run(tmp_path, body, capsys, *flags)
    assert code == 0, err
    assert "end PTO plan Mem!" not in err and "TPRINT" in out


def _reserve(name: str, auto: str = "true", base: str = "") -> str:
    extra = f", base = {base}" if base else ""
    return (
        f'    %{name} = pto.reserve_buffer {{name = "{name}", size = 8192, location = #pto.address_space<vec>, '
        f"auto = {auto}{extra}}} -> i32\n"
    )


def test_reserve_buffer_takes_the_first_hole_after_planning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = _memref_kernel(_reserve("fifo") + _copy("u0")).replace(
        "    return\n  }\n}\n",
        "    return\n  }\n  func.func @peer() {\n"
        '    %imp = pto.import_reserved_buffer {name = "fifo", peer_func = @k} -> i32\n    return\n  }\n}\n',
    )
    code, out, err = _run(tmp_path, body, capsys)
    assert code == 0, err
    assert 'pto.reserve_buffer{name = "fifo", size = 8192, location = <vec>, auto = true, base = 8192} -> i32' in err
    assert f"pto.pointer_cast(%c0_i64) : {UB}" in err
    assert out.count("const int32_t v") == 2 and out.count(" = 8192;") == 2, out  # the reserve and its import


def test_fixed_reserve_buffer_with_allocations_left_to_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(tmp_path, _memref_kernel(_reserve("fifo", "false", "0") + _copy("u0")), capsys)
    assert code == 1 and out == ""
    assert err.strip().endswith(
        "error: 'memref.alloc' op cannot use pto.reserve_buffer with auto = false when local memref.alloc "
        "still requires PlanMemory allocation"
    ), err
