"""Fixpipe quantisation on both engines (issue 18 item 2): ``tstore_fp``, ``tmov.fp``, ``tmov`` with an
fp tile or a pre-quant scalar, ``textract_fp`` and ``tinsert_fp`` on a cube kernel's matmul result.

The documented meaning (docs/ptoas.md): ``dst = to<T>(f32(src) [relu] * scale)`` in float32, integer
destinations rounding half to even and saturating; an fp (scaling) tile gives column ``j``'s scale at
``(0, j)``; a 64-bit parameter (the pre-quant scalar) holds the scale's f32 bits in its low 32 bits.
Interpreter and g++-built C++ must agree bit for bit and match the numpy reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, verify_pto


def _tile(loc: str, dt: str, bl: str, sl: str, fractal: int) -> str:
    return (
        f"!pto.tile_buf<loc={loc}, dtype={dt}, rows=16, cols=16, v_row=16, v_col=16, blayout={bl}, "
        f"slayout={sl}, fractal={fractal}, pad=0>"
    )


MAT = _tile("mat", "f32", "col_major", "row_major", 512)
MAT8 = _tile("mat", "i8", "col_major", "row_major", 512)
LEFT = _tile("left", "f32", "col_major", "row_major", 512)
RIGHT = _tile("right", "f32", "row_major", "col_major", 512)
ACC = _tile("acc", "f32", "col_major", "row_major", 1024)
SCL = _tile("scaling", "f32", "row_major", "row_major", 512)
VEC8 = _tile("vec", "i8", "row_major", "none_box", 512)
PV = "!pto.partition_tensor_view<16x16xf32>"
PV8 = "!pto.partition_tensor_view<16x16xi8>"
TO_GM = f"    pto.tstore ins(%m : {MAT8}) outs(%y_pv : {PV8})\n"


def _view(n: str, dt: str) -> str:
    tv = f"!pto.tensor_view<?x?x{dt}>"
    return (
        f"    %{n}_tv = pto.make_tensor_view %{n}, shape = [%c16, %c16], strides = [%c16, %c1] : {tv}\n"
        f"    %{n}_pv = pto.partition_view %{n}_tv, offsets = [%c0, %c0], sizes = [%c16, %c16] : {tv} -> "
        f"!pto.partition_tensor_view<16x16x{dt}>\n"
    )


def _kernel(tail: str) -> str:
    """c = a @ b in acc, the scales s (16x16 f32, row 0 used) in a scaling tile, then ``tail`` writes y (i8)."""
    args = [("a", "f32"), ("b", "f32"), ("s", "f32"), ("y", "i8")]
    params = ", ".join(f"%{n}: !pto.ptr<{dt}>" for n, dt in args)
    loads = "".join(
        f"    %{n}Mat = pto.alloc_tile : {MAT}\n    pto.tload ins(%{n}_pv : {PV}) outs(%{n}Mat : {MAT})\n"
        for n in "abs"
    )
    return f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k({params}) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
{"".join(_view(n, dt) for n, dt in args)}{loads}    %aLeft = pto.alloc_tile : {LEFT}
    %bRight = pto.alloc_tile : {RIGHT}
    %cAcc = pto.alloc_tile : {ACC}
    %sF = pto.alloc_tile : {SCL}
    pto.tmov ins(%aMat : {MAT}) outs(%aLeft : {LEFT})
    pto.tmov ins(%bMat : {MAT}) outs(%bRight : {RIGHT})
    pto.tmov ins(%sMat : {MAT}) outs(%sF : {SCL})
    pto.tmatmul ins(%aLeft, %bRight : {LEFT}, {RIGHT}) outs(%cAcc : {ACC})
{tail}    return
  }}
}}
"""


RELU = "{reluPreMode = #pto<relu_pre_mode normal_relu>}"
MAT_OUT = f"    %m = pto.alloc_tile : {MAT8}\n"
FORMS = {
    "tstore_fp": f"    pto.tstore_fp ins(%cAcc, %sF : {ACC}, {SCL}) outs(%y_pv : {PV8})\n",
    "tmov.fp": MAT_OUT + f"    pto.tmov.fp ins(%cAcc, %sF : {ACC}, {SCL}) outs(%m : {MAT8})\n" + TO_GM,
    "tmov_fp_relu": MAT_OUT + f"    pto.tmov ins(%cAcc, %sF : {ACC}, {SCL}) outs(%m : {MAT8}) {RELU}\n" + TO_GM,
    # 0x40800000: the f32 bits of 4.0
    "tmov_pre_quant": MAT_OUT
    + "    %q = arith.constant 1082130432 : i64\n"
    + f"    pto.tmov ins(%cAcc, %q : {ACC}, i64) outs(%m : {MAT8})\n"
    + TO_GM,
    # PTOAS's acc -> vec form: TMOV(dst, src, fp)
    "tmov_fp_to_vec": f"    %v = pto.alloc_tile : {VEC8}\n"
    + f"    pto.tmov ins(%cAcc, %sF : {ACC}, {SCL}) outs(%v : {VEC8})\n"
    + f"    pto.tstore ins(%v : {VEC8}) outs(%y_pv : {PV8})\n",
    "textract_fp": MAT_OUT
    + f"    pto.textract_fp ins(%cAcc, %sF, %c0, %c0 : {ACC}, {SCL}, index, index) outs(%m : {MAT8})\n"
    + TO_GM,
    "tinsert_fp": MAT_OUT
    + f"    pto.tinsert_fp ins(%cAcc, %sF, %c0, %c0 : {ACC}, {SCL}, index, index) outs(%m : {MAT8})\n"
    + TO_GM,
}

RNG = np.random.default_rng(18)
A = RNG.standard_normal((16, 16)).astype(np.float32)
B = RNG.standard_normal((16, 16)).astype(np.float32)
S = RNG.uniform(5, 40, (16, 16)).astype(np.float32)


def _reference(form: str) -> np.ndarray:
    c = np.zeros((16, 16), np.float32)
    for k in range(16):  # the matmul both engines do: f32 accumulation in k order
        c = c + A[:, k : k + 1] * B[k : k + 1, :]
    if form == "tmov_fp_relu":
        c = np.where(c < 0, np.float32(0), c)
    scale = np.float32(4.0) if form == "tmov_pre_quant" else S[0]
    return np.clip(np.rint(c * scale).astype(np.float64), -128, 127).astype(np.int8)


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isa-fixpipe")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_fixpipe_quant_agrees_on_both_engines(form: str, build_dir: Path) -> None:
    module = parse_pto(_kernel(FORMS[form]), f"{form}.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    got_i = np.full((16, 16), -7, np.int8)
    run = run_kernel(module, "k", [A.copy(), B.copy(), S.copy(), got_i])
    assert run.races == [], run.race_messages
    lib = KernelLibrary(build_shared(emit_cpp(module), build_dir, name=f"fixpipe_{form.replace('.', '_')}"))
    got_c = np.full((16, 16), -7, np.int8)
    lib.call("k", A.copy(), B.copy(), S.copy(), got_c)
    np.testing.assert_array_equal(got_i, got_c, err_msg=f"{form}: the engines differ")
    ref = _reference(form)
    np.testing.assert_array_equal(got_i, ref, err_msg=f"{form}: not the reference")


def test_the_cases_saturate_and_relu_clamps() -> None:
    """The references reach both int8 bounds (saturation is exercised); relu zeroes the negatives."""
    q = _reference("tstore_fp")
    assert (q == 127).any() and (q == -128).any()
    assert (_reference("tmov_fp_relu") >= 0).all() and (_reference("tmov_fp_relu") == 0).any()


def test_tget_scale_addr_rebinds_the_scaling_tile_on_both_engines(build_dir: Path) -> None:
    """``tget_scale_addr`` (A5) binds a scaling tile to byte ``addr(src) >> 4`` (PTO-ISA): with the left
    tile at 1024, a scaling tile allocated at 2048 then reads the scales tmov put at 64."""
    tail = (
        f"    %sD = pto.alloc_tile addr = %a2048 : {SCL}\n"
        f"    pto.tget_scale_addr ins(%aLeft : {LEFT}) outs(%sD : {SCL})\n"
        f"    pto.tstore_fp ins(%cAcc, %sD : {ACC}, {SCL}) outs(%y_pv : {PV8})\n"
    )
    # The scales move first, so the matmul's syncs order them before tstore_fp reads them through sD
    # (insert-sync sees sF and sD as different buffers, as PTOAS's would).
    mov_s = f"    pto.tmov ins(%sMat : {MAT}) outs(%sF : {SCL})\n"
    mov_a = f"    pto.tmov ins(%aMat : {MAT}) outs(%aLeft : {LEFT})\n"
    text = (
        _kernel(tail)
        .replace(mov_s, "")
        .replace(mov_a, mov_s + mov_a)
        .replace('"a2a3"', '"a5"')
        .replace("    %c16 = arith.constant 16 : index\n", "    %c16 = arith.constant 16 : index\n" + "".join(
            f"    %a{n} = arith.constant {n} : i64\n" for n in (64, 1024, 2048)
        ))
        .replace(f"%aLeft = pto.alloc_tile : {LEFT}", f"%aLeft = pto.alloc_tile addr = %a1024 : {LEFT}")
        .replace(f"%sF = pto.alloc_tile : {SCL}", f"%sF = pto.alloc_tile addr = %a64 : {SCL}")
    )
    module = parse_pto(text, "tget_scale_addr.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    got_i = np.full((16, 16), -7, np.int8)
    run = run_kernel(module, "k", [A.copy(), B.copy(), S.copy(), got_i])
    assert run.races == [], run.race_messages
    (rec,) = [r for r in run.records if r.instr == "TGET_SCALE_ADDR"]
    assert (rec.pipe, rec.end - rec.start) == ("SCALAR", 1)  # its a2a3 fallback row
    lib = KernelLibrary(build_shared(emit_cpp(module), build_dir, name="tget_scale_addr"))
    got_c = np.full((16, 16), -7, np.int8)
    lib.call("k", A.copy(), B.copy(), S.copy(), got_c)
    np.testing.assert_array_equal(got_i, got_c, err_msg="tget_scale_addr: the engines differ")
    np.testing.assert_array_equal(got_i, _reference("tstore_fp"), err_msg="tget_scale_addr: not the reference")
