"""PTOAS's C++ control-flow shape, run: ``scf.while`` as ``goto`` labels, ``index`` as ``int32_t``
with ``size_t`` loop counters (issue 18 item 4).

Each kernel runs in the interpreter (no races) and, emitted to C++ and built with g++ against
``pto_cpu.hpp``, on copies of the same inputs; both must give the numpy reference bit for bit. The
counts are chosen so that a wrong trip count shows: a ``while`` that stops at its condition, a
loop with a negative lower bound (the ``size_t`` counter must still compare as signed) and one
with an upper bound below its lower bound (no trip).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_isa_numerics import F16, A, Case, _synced, check_both_engines

from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, verify_pto

ARGS = [("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)]


def _plus(x: np.ndarray, *steps: float) -> np.ndarray:
    """``x + s0 + s1 + ...`` in float32, one rounding per step (as the kernels add)."""
    for step in steps:
        x = (x + np.float32(step)).astype(np.float32)
    return x


ADD1 = f"pto.tadds ins(%d_t, %one : {F16}, f32) outs(%d_t : {F16})"

CASES: dict[str, Case] = {
    # while (i < 5) { d += 1; if (i == 2) d += 10; i += 1 }  -> d = a + 5 + 10
    "while": Case(
        ARGS,
        f"""
        %c5 = arith.constant 5 : index
        %c2 = arith.constant 2 : index
        %one = arith.constant 1.0 : f32
        %ten = arith.constant 10.0 : f32
        pto.tmov ins(%a_t : {F16}) outs(%d_t : {F16})
        %n = scf.while (%i = %c0) : (index) -> index {{
          %lt = arith.cmpi slt, %i, %c5 : index
          scf.condition(%lt) %i : index
        }} do {{
        ^bb0(%j: index):
          {ADD1}
          %two = arith.cmpi eq, %j, %c2 : index
          scf.if %two {{
            pto.tadds ins(%d_t, %ten : {F16}, f32) outs(%d_t : {F16})
          }}
          %next = arith.addi %j, %c1 : index
          scf.yield %next : index
        }}
        """,
        {"a": A},
        {"d": _plus(A, 1, 1, 1, 10, 1, 1)},
    ),
    # for i in [-3, 2): d += 1 (5 trips); for i in [2, -1): never
    "for_signed_bounds": Case(
        ARGS,
        f"""
        %cm3 = arith.constant -3 : index
        %cm1 = arith.constant -1 : index
        %c2 = arith.constant 2 : index
        %one = arith.constant 1.0 : f32
        pto.tmov ins(%a_t : {F16}) outs(%d_t : {F16})
        scf.for %i = %cm3 to %c2 step %c1 {{
          {ADD1}
        }}
        scf.for %i = %c2 to %cm1 step %c1 {{
          {ADD1}
        }}
        """,
        {"a": A},
        {"d": _plus(A, 1, 1, 1, 1, 1)},
    ),
}


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("control-flow-cpp")


@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreter_and_cpp_agree(name: str, build_dir: Path) -> None:
    check_both_engines(CASES[name], name, build_dir, "cf")


def test_while_is_goto_labels_and_index_is_int32() -> None:
    """PTOAS's shape: the loop's labels in order, ``index`` as ``int32_t``, ``size_t`` counters."""
    cpp = emit_cpp(_synced(CASES["while"], "while"))
    header = cpp.index("goto label")
    label = cpp[header + 5 : cpp.index(";", header)]
    order = [f"goto {label};", f"{label}:;", "if (", "goto label", "} else {", "goto label", ": {", f"goto {label};"]
    at = header
    for piece in order:
        at = cpp.index(piece, at)
    loops = emit_cpp(_synced(CASES["for_signed_bounds"], "for"))
    assert re.search(r"const int32_t v\d+ = -3;", loops)  # an index constant (i64 addresses stay int64_t)
    assert re.search(r"for \(size_t (i\d+) = v\d+; \(int32_t\) \1 < v\d+; \1 \+= v\d+\) \{", loops)


def _prologue(src: str) -> tuple[list[str], list[str]]:
    """The ``const`` literals before ``using T = float;`` and those after it, in order."""
    module = parse_pto(src, "prologue.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions())
    body = emit_cpp(module).split("void k() {", 1)[1]
    head, tail = body.split("using T = float;", 1)
    consts = re.compile(r"const (\w+) v\d+ = ([^;]+);")
    return [" ".join(m) for m in consts.findall(head)], [" ".join(m) for m in consts.findall(tail.split("#if")[0])]


PROLOGUE_TILE = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
PROLOGUE_BODY = f"""
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %one = arith.constant 1.0 : f32
    %t = pto.alloc_tile : {PROLOGUE_TILE}
"""


def test_cfg_function_constants_come_reversed_before_using_t() -> None:
    """A function PTOAS lowers to CFG blocks: its constants before ``using T = float;`` in the reverse
    of MLIR's greedy walk (cfg_prologue.py): the tile's address, its valid dims, then the source's
    constants reversed; the unused ``%c8`` is dropped. A structured function keeps source order after it."""
    loop = f"""
    %n = scf.while (%i = %c0) : (index) -> index {{
      %lt = arith.cmpi slt, %i, %c4 : index
      scf.condition(%lt) %i : index
    }} do {{
    ^bb0(%j: index):
      pto.tadds ins(%t, %one : {PROLOGUE_TILE}, f32) outs(%t : {PROLOGUE_TILE})
      %next = arith.addi %j, %one_i : index
      scf.yield %next : index
    }}"""
    src = (
        "module {\n  func.func @k() {\n    %one_i = arith.constant 1 : index"
        + PROLOGUE_BODY
        + loop
        + "\n    return\n  }\n}\n"
    )
    before, after = _prologue(src)
    assert before == ["int64_t 0", "int32_t 16", "float 1.0f", "int32_t 4", "int32_t 0", "int32_t 1"]
    assert after == []
    structured = (
        PROLOGUE_BODY
        + f"""
    scf.for %i = %c0 to %c4 step %one_i {{
      pto.tadds ins(%t, %one : {PROLOGUE_TILE}, f32) outs(%t : {PROLOGUE_TILE})
    }}"""
    )
    src = "module {\n  func.func @k() {\n    %one_i = arith.constant 1 : index" + structured + "\n    return\n  }\n}\n"
    before, after = _prologue(src)
    assert before == []
    assert after[:5] == ["int64_t 0", "int32_t 1", "int32_t 0", "int32_t 4", "int32_t 8"]
