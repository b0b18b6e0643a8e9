"""Event-id arrays (``pto.declare_eventid_array`` / ``eventid_array_get`` / ``_set``) with the dynamic
flags: PTOAS's C++ shape, built with g++ against ``pto_cpu.hpp`` (whose flags check that every wait
has its set), and the interpreter on the same kernel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary, KernelRuntimeError
from pypto.ptoas.pto_text import parse_pto


def _kernel(set_slot: int, wait_slot: int) -> str:
    return (
        "module {\n  func.func @k(%p: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        "    %arr = pto.declare_eventid_array -> !pto.eventid_array<4>\n"
        "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
        "    %c2 = arith.constant 2 : index\n    %c3 = arith.constant 3 : index\n"
        "    pto.eventid_array_set %arr[%c0], %c3 : !pto.eventid_array<4>\n"
        "    pto.eventid_array_set %arr[%c1], %c2 : !pto.eventid_array<4>\n"
        f"    %e0 = pto.eventid_array_get %arr[%c{set_slot}] : !pto.eventid_array<4>\n"
        f"    %e1 = pto.eventid_array_get %arr[%c{wait_slot}] : !pto.eventid_array<4>\n"
        "    pto.set_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, %e0]\n"
        "    pto.wait_flag_dyn [#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, %e1]\n"
        "    return\n  }\n}\n"
    )


def test_cpp_shape() -> None:
    cpp = emit_cpp(parse_pto(_kernel(0, 0), "k.pto"))
    assert "PTOAS_EventIdArray<4> v" in cpp
    lines = [ln.strip() for ln in cpp.splitlines()]
    get = next(ln for ln in lines if ln.startswith("int32_t ") and "[" in ln)
    first = get.split()[1]
    i = lines.index(get)
    cast = next(ln for ln in lines[i:] if ln.startswith("event_t "))
    assert cast.endswith(f"= (event_t) {first};")
    assert f"set_flag(PIPE_MTE2, PIPE_V, {cast.split()[1]});" in lines


@pytest.mark.parametrize(("set_slot", "wait_slot", "ok"), [(0, 0, True), (0, 1, False)])
def test_both_engines_pair_the_flags(tmp_path: Path, set_slot: int, wait_slot: int, ok: bool) -> None:
    text = _kernel(set_slot, wait_slot)
    lib = KernelLibrary(build_shared(emit_cpp(parse_pto(text, "k.pto")), tmp_path, name=f"eid_{set_slot}{wait_slot}"))
    if ok:
        lib.call("k", np.zeros(4, np.float32))
        run_kernel(parse_pto(text, "k.pto"), "k", [np.zeros(4, np.float32)])
        return
    with pytest.raises(
        KernelRuntimeError, match=r"wait_flag\(PIPE_MTE2, PIPE_V, EVENT_ID2\) without a matching set_flag"
    ):
        lib.call("k", np.zeros(4, np.float32))
