"""``tcvt`` in PTOAS's C++ shape: its round mode (and ``sat_mode``) as prologue constants passed to
``TCVT``; ``sat_mode`` OFF (wrapping float -> int) runs in both engines (values: test_isa_numerics.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary
from pypto.ptoas.pto_text import parse_pto


def _t(dt: str) -> str:
    return (
        f"!pto.tile_buf<loc=vec, dtype={dt}, rows=1, cols=16, v_row=1, v_col=16, "
        "blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    )


def _kernel(attrs: str) -> str:
    """tload 16 f32 from %p, tcvt them to i16, tstore to %q."""
    views = []
    for n, dt in (("p", "f32"), ("q", "i16")):
        views += [
            f"    %{n}v = pto.make_tensor_view %{n}, shape = [%c1, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?x{dt}>",
            f"    %{n}p = pto.partition_view %{n}v, offsets = [%c0, %c0], sizes = [%c1, %c16] : "
            f"!pto.tensor_view<?x?x{dt}> -> !pto.partition_tensor_view<1x16x{dt}>",
        ]
    return (
        "module {\n  func.func @k(%p: !pto.ptr<f32>, %q: !pto.ptr<i16>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n    %c16 = arith.constant 16 : index\n"
        + "\n".join(views)
        + f"\n    %s = pto.alloc_tile : {_t('f32')}\n    %d = pto.alloc_tile : {_t('i16')}\n"
        f"    pto.tload ins(%pp : !pto.partition_tensor_view<1x16xf32>) outs(%s : {_t('f32')})\n"
        f"    pto.tcvt ins(%s {{{attrs}}} : {_t('f32')}) outs(%d : {_t('i16')})\n"
        f"    pto.tstore ins(%d : {_t('i16')}) outs(%qp : !pto.partition_tensor_view<1x16xi16>)\n    return\n  }}\n}}\n"
    )


def test_modes_are_prologue_constants() -> None:
    cpp = emit_cpp(parse_pto(_kernel("rmode = #pto<round_mode TRUNC>, sat_mode = #pto<saturation_mode OFF>"), "k.pto"))
    sat = re.search(r"const SaturationMode (v\d+) = SaturationMode::OFF;", cpp)
    rm = re.search(r"const RoundMode (v\d+) = RoundMode::CAST_TRUNC;", cpp)
    assert sat and rm and sat.start() < rm.start() < cpp.index("Tile<"), cpp
    assert re.search(rf"TCVT\(v\d+, v\d+, {rm.group(1)}, {sat.group(1)}\);", cpp), cpp


@pytest.mark.parametrize("sat", ["ON", "OFF"])
def test_sat_mode_in_both_engines(tmp_path: Path, sat: str) -> None:
    text = _kernel(f"rmode = #pto<round_mode TRUNC>, sat_mode = #pto<saturation_mode {sat}>")
    lib = KernelLibrary(build_shared(emit_cpp(parse_pto(text, "k.pto")), tmp_path, name=f"tcvt_{sat}"))
    x = np.array([70000.5, -40000.0, 1.0, np.nan] * 4, np.float32)
    want = np.array([4464, 25536, 1, 0] * 4, np.int16) if sat == "OFF" else np.array([32767, -32768, 1, 0] * 4, np.int16)
    for run in (lambda t, a: lib.call("k", *a), lambda t, a: run_kernel(parse_pto(t, "k.pto"), "k", a)):
        out = np.full(16, 7, np.int16)
        run(text, [x.copy(), out])
        np.testing.assert_array_equal(out, want)
