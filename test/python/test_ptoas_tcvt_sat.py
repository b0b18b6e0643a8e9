"""``tcvt`` in PTOAS's C++ shape: its round mode (and ``sat_mode``) as prologue constants passed to
``TCVT``; ``sat_mode`` OFF (wrapping float -> int) stops both engines with its name."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary, KernelRuntimeError
from pypto.ptoas.pto_text import parse_pto


def _t(dt: str) -> str:
    return (
        f"!pto.tile_buf<loc=vec, dtype={dt}, rows=1, cols=16, v_row=1, v_col=16, "
        "blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    )


def _kernel(attrs: str) -> str:
    return (
        "module {\n  func.func @k(%p: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        f"    %s = pto.alloc_tile : {_t('f32')}\n    %d = pto.alloc_tile : {_t('i16')}\n"
        f"    pto.tcvt ins(%s {{{attrs}}} : {_t('f32')}) outs(%d : {_t('i16')})\n    return\n  }}\n}}\n"
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
    if sat == "ON":
        lib.call("k", np.zeros(4, np.float32))
        run_kernel(parse_pto(text, "k.pto"), "k", [np.zeros(4, np.float32)])
        return
    with pytest.raises(KernelRuntimeError, match="SaturationMode::OFF"):
        lib.call("k", np.zeros(4, np.float32))
    with pytest.raises(Exception, match="sat_mode OFF"):
        run_kernel(parse_pto(text, "k.pto"), "k", [np.zeros(4, np.float32)])
