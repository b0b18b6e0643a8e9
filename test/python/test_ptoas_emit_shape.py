"""The emitted C++ in PTOAS's shape (issue 18 item 4): what PTOAS's FileCheck lines check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pypto.ptoas import cli

T = "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def _run(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    src = tmp_path / "k.pto"
    src.write_text(body)
    code = cli.main([str(src), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def _kernel(name: str, call: str = "") -> str:
    return (
        f"  func.func @{name}() {{\n    %a = pto.alloc_tile : {T}\n"
        f"    pto.tadd ins(%a, %a : {T}, {T}) outs(%a : {T})\n{call}    return\n  }}\n"
    )


def test_callees_come_first_without_prototypes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (
        "module {\n"
        + _kernel("caller", "    func.call @mid() : () -> ()\n")
        + _kernel("mid", "    func.call @leaf() : () -> ()\n")
        + _kernel("leaf")
        + _kernel("alone")
        + "}\n"
    )
    code, out, err = _run(tmp_path, body, capsys)
    assert code == 0, err
    heads = re.findall(r"^(?:__global__ )?AICORE void (\w+)\(\)(.)", out, re.M)
    # a ready queue in module order (leaf, alone), then the callers as they become ready; each once
    assert heads == [("leaf", " "), ("alone", " "), ("mid", " "), ("caller", " ")]


def test_recursion_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "module {\n" + _kernel("k", "    func.call @k() : () -> ()\n") + "}\n"
    code, out, err = _run(tmp_path, body, capsys)
    assert code == 1 and out == ""
    # PTOAS's PlanMemory dump (level2 input) comes first on stderr; the error is the last line
    assert re.match(
        r"^\S+:2:3: error: 'func.func' op recursive function calls are not supported for EmitC C\+\+ emission$",
        err.strip().splitlines()[-1],
    ), err


def test_unsupported_op_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (
        "module {\n  func.func @k() {\n    %c0 = arith.constant 0 : index\n"
        "    scf.index_switch %c0\n    case 1 {\n      scf.yield\n    }\n    default {\n      scf.yield\n    }\n"
        "    return\n  }\n}\n"
    )
    code, _, err = _run(tmp_path, body, capsys)
    assert code == 1 and "internal error" not in err
    assert err.strip().endswith(":4:5: error: 'scf.index_switch' op is not supported by the C++ emitter"), err


def test_single_definition_is_the_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "module {\n  func.func @k(%a: i32) -> i32 {\n    return %a : i32\n  }\n}\n"
    code, _, err = _run(tmp_path, body, capsys)
    assert code == 1 and "PTO entry functions must return void" in err


def test_acc_to_vec_mode_is_qualified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    acc = "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
    vec = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    body = (
        "module {\n  func.func @k() {\n"
        f"    %a = pto.alloc_tile : {acc}\n    %v = pto.alloc_tile : {vec}\n"
        f"    pto.tmov ins(%a : {acc}) outs(%v : {vec}) {{accToVecMode = #pto.acc_to_vec_mode<dual_mode_split_m>}}\n"
        "    return\n  }\n}\n"
    )
    code, out, err = _run(tmp_path, body, capsys, "--pto-arch=a5")
    assert code == 0, err
    assert re.search(r"TMOV<pto::AccToVecMode::DualModeSplitM, ReluPreMode::NoRelu>\(v\d+, v\d+\);", out), out


def test_tgather_mask_and_compare_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from pypto.ptoas.build import build_shared
    from pypto.ptoas.emitc.runner import KernelLibrary

    h = T.replace("f32", "f16")
    i32, u8 = T.replace("f32", "i32"), T.replace("f32", "ui8")
    body = (
        "module {\n  func.func @k(%p: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        f"    %s = pto.alloc_tile : {h}\n    %d = pto.alloc_tile : {h}\n    %k = arith.constant 0.0 : f16\n"
        f"    %t = pto.alloc_tile : {u8}\n    %cd = pto.alloc_tile : {i32}\n    %ci = pto.alloc_tile : {i32}\n"
        f"    pto.tgather ins(%s, {{maskPattern = #pto.mask_pattern<P0010>}} : {h}) outs(%d : {h})\n"
        f"    pto.tgather ins(%s, %k, %t : {h}, f16, {u8}) outs(%ci, %cd : {i32}, {i32}) {{offset = 7 : i32}}\n"
        "    return\n  }\n}\n"
    )
    code, out, err = _run(tmp_path, body, capsys, "--pto-arch=a3")
    assert code == 0, err
    th, ti, tu = (
        re.escape(f"Tile<TileType::Vec, {c}, 1, 16, BLayout::RowMajor, 1, 16") for c in ("half", "int32_t", "uint8_t")
    )
    assert re.search(rf"TGATHER<{th}[^>]*>, {th}[^>]*>, MaskPattern::P0010>\(v\d+, v\d+\);", out), out
    assert re.search(rf"TGATHER<{ti}[^>]*>, {th}[^>]*>, {ti}[^>]*>, {tu}[^>]*>, CmpMode::EQ, 7>\(", out), out
    lib = KernelLibrary(build_shared(out, tmp_path / "build", name="tgather_forms"))
    lib.call("k", np.zeros(4, np.float32))  # both forms run on the CPU (values: test_isa_numerics.py)


def test_tmrgsort_and_trandom_shapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from pypto.ptoas.build import build_shared
    from pypto.ptoas.emitc.runner import KernelLibrary

    s, d = (
        T.replace("cols=16", "cols=128").replace("v_col=16", "v_col=128"),
        T.replace("cols=16", "cols=256").replace("v_col=16", "v_col=256"),
    )
    u32 = T.replace("f32", "ui32")
    body = (
        'module attributes {pto.target_arch = "a5"} {\n'
        "  func.func @k(%p: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        "    %ex = arith.constant dense<[128, 64, 0, -1]> : vector<4xi16>\n    %k = arith.constant 7 : i32\n"
        f"    %a = pto.alloc_tile : {s}\n    %b = pto.alloc_tile : {s}\n    %t = pto.alloc_tile : {d}\n"
        f"    %d = pto.alloc_tile : {d}\n    %r = pto.alloc_tile : {u32}\n"
        f"    pto.tmrgsort ins(%a, %b, %t {{exhausted = true}} : {s}, {s}, {d}) outs(%d, %ex : {d}, vector<4xi16>)\n"
        f"    pto.trandom ins(%k, %k, %k, %k, %k, %k {{rounds = 7 : i32}} : i32, i32, i32, i32, i32, i32) outs(%r : {u32})\n"
        "    return\n  }\n}\n"
    )
    code, out, err = _run(tmp_path, body, capsys)
    assert code == 0, err
    ex = re.search(r"pto::MrgSortExecutedNumList (v\d+) = pto::MrgSortExecutedNumList\{128, 64, 0, 65535\};", out)
    assert ex, out
    assert re.search(
        rf"TMRGSORT<Tile<[^>]*256[^>]*>, Tile<[^>]*256[^>]*>, Tile<[^>]*128[^>]*>, Tile<[^>]*128[^>]*>, true>\(v\d+, {ex.group(1)}, v\d+, v\d+, v\d+\);",
        out,
    ), out
    assert out.index("template <uint16_t Rounds, typename DstTile>") < out.index("PTOAS__TRANDOM<7>(")
    lib = KernelLibrary(build_shared(out, tmp_path / "build", name="mrgsort_trandom"))
    lib.call("k", np.zeros(4, np.float32))  # both run on the CPU (values: test_isa_numerics.py)


@pytest.mark.parametrize(
    ("mlir", "cxx"),
    [("f8E4M3FN", "float8_e4m3_t"), ("f8E4M3", "float8_e4m3_t"), ("f8E5M2", "float8_e5m2_t"), ("f16", "half")],
)
def test_f8_element_types_have_ptoas_spellings(mlir: str, cxx: str) -> None:
    from pypto.ptoas.emitc.cxx_types import element_ctype
    from pypto.ptoas.pto_text import parse_pto

    module = parse_pto(f"module {{\n  func.func @k(%x: {mlir}) {{\n    return\n  }}\n}}\n", "k.pto")
    func = next(iter(module.body.block.ops))
    assert element_ctype(func.body.block.args[0].type) == cxx
