"""The cube<->vector frontend pipe ops: text forms, verifiers, pipes, directions, accesses."""

from __future__ import annotations

import pytest

from pypto.ptoas.dialect import PTO, DpsOp
from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.dialect.pipe_ops import (
    PIPE_OPS,
    TFreeFromAicOp,
    TFreeFromAivOp,
    TPopFromAicOp,
    TPopFromAivOp,
    TPushToAicOp,
    TPushToAivOp,
)
from pypto.ptoas.passes.access import accesses, buffer_of
from pypto.ptoas.pto_text import PTOVerifyError, parse_pto, print_pto, verify_pto

V = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
VD = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
M = "!pto.tile_buf<loc=mat, dtype=f16, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
C = "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
GM = "memref<16x16xf32, #pto.address_space<gm>>"

BODY = f"""\
    %acc = pto.alloc_tile : {C}
    %v = pto.alloc_tile : {V}
    pto.tpush_to_aiv(%acc : {C}) {{split = 0}}
    pto.tpush_to_aic(%v : {V}) {{split = 1}}
    %t = pto.tpop_from_aic {{split = 0}} -> {V}
    %d = pto.tpop_from_aic(%vr, %vc) {{split = 2}} -> {VD}
    %m = pto.tpop_from_aiv {{split = 1}} -> {M}
    pto.tfree_from_aic {{split = 0}}
    pto.tfree_from_aiv {{split = 1}}"""


def _module_text(body: str, args: str = "%vr: index, %vc: index") -> str:
    return (
        f'module attributes {{pto.target_arch = "a2a3"}} {{\n  func.func @f({args}) {{\n{body}\n    return\n  }}\n}}\n'
    )


def _ops(body: str = BODY) -> dict[type, list]:
    module = parse_pto(_module_text(body))
    verify_pto(module)
    found: dict[type, list] = {}
    for op in module.walk():
        found.setdefault(type(op), []).append(op)
    return found


def _verify(body: str, args: str = "%vr: index, %vc: index") -> str | None:
    module = parse_pto(_module_text(body, args))
    try:
        verify_pto(module)
    except PTOVerifyError as e:
        return e.message
    return None


def test_registered() -> None:
    names = {op.name for op in PTO.operations}
    for op in PIPE_OPS:
        assert op.name in names
    assert [op.name for op in PIPE_OPS] == [
        "pto.tpush_to_aiv",
        "pto.tpush_to_aic",
        "pto.tpop_from_aic",
        "pto.tpop_from_aiv",
        "pto.tfree_from_aic",
        "pto.tfree_from_aiv",
    ]


def test_round_trip_prints_the_written_forms() -> None:
    text = _module_text(BODY)
    module = parse_pto(text)
    verify_pto(module)
    out = print_pto(module)
    assert out == text
    assert print_pto(parse_pto(out)) == out


def test_generic_form_round_trips() -> None:
    text = _module_text(BODY)
    generic = print_pto(parse_pto(text), generic=True)
    assert '"pto.tpush_to_aiv"(%acc) {split = 0 : i64}' in generic
    assert print_pto(parse_pto(generic)) == text


def test_split_is_an_i64_attribute() -> None:
    ops = _ops()
    push = ops[TPushToAivOp][0]
    split = push.attributes["split"]
    assert split.value.data == 0 and split.type.width.data == 64


def test_dps_views() -> None:
    ops = _ops()
    push = ops[TPushToAivOp][0]
    assert isinstance(push, DpsOp)
    assert push.ins() == [push.tile] and push.outs() == []
    pop, pop_dyn = ops[TPopFromAicOp]
    assert isinstance(pop, DpsOp)
    assert pop.ins() == [] and pop.outs() == []
    assert pop.valid_row is None and pop.valid_col is None
    assert pop_dyn.ins() == [pop_dyn.valid_row, pop_dyn.valid_col] and pop_dyn.outs() == []
    assert pop_dyn.result.type == pop_dyn.results[0].type
    assert not isinstance(ops[TFreeFromAicOp][0], DpsOp)


def test_pipes_and_directions() -> None:
    ops = _ops()
    assert ops[TPushToAivOp][0].pipe() == Pipe.PIPE_FIX  # acc: L0C -> GM
    assert ops[TPushToAicOp][0].pipe() == Pipe.PIPE_MTE3  # vec: UB -> GM
    assert ops[TPopFromAicOp][0].pipe() == Pipe.PIPE_MTE2
    assert ops[TPopFromAivOp][0].pipe() == Pipe.PIPE_MTE2
    assert ops[TFreeFromAicOp][0].pipe() is None
    assert ops[TFreeFromAivOp][0].pipe() is None
    assert (TPushToAivOp.DIRECTION, TPopFromAicOp.DIRECTION, TFreeFromAicOp.DIRECTION) == ("c2v", "c2v", "c2v")
    assert (TPushToAicOp.DIRECTION, TPopFromAivOp.DIRECTION, TFreeFromAivOp.DIRECTION) == ("v2c", "v2c", "v2c")


def test_accesses() -> None:
    ops = _ops()
    pop = ops[TPopFromAicOp][0]
    (acc,) = accesses(pop, 7)
    assert acc.write and acc.pipe == Pipe.PIPE_MTE2 and acc.op_id == 7
    assert acc.buffer == buffer_of(pop.result) and acc.buffer.space == "vec"
    push = ops[TPushToAivOp][0]
    (acc,) = accesses(push, 3)
    assert not acc.write and acc.pipe == Pipe.PIPE_FIX and acc.buffer == buffer_of(push.tile)
    assert acc.buffer.space == "acc"
    # the index valid dims name no buffer: only the result tile is accessed
    pop_dyn = ops[TPopFromAicOp][1]
    assert [(a.write, a.pipe) for a in accesses(pop_dyn, 0)] == [(True, Pipe.PIPE_MTE2)]
    assert accesses(ops[TFreeFromAicOp][0], 0) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            f"%acc = pto.alloc_tile : {C}\n    pto.tpush_to_aiv(%acc : {C}) {{split = 3}}",
            "'pto.tpush_to_aiv' op split must be 0, 1 or 2, got 3",
        ),
        (f"%t = pto.tpop_from_aic {{split = 5}} -> {V}", "'pto.tpop_from_aic' op split must be 0, 1 or 2, got 5"),
        ("pto.tfree_from_aiv {split = 7}", "'pto.tfree_from_aiv' op split must be 0, 1 or 2, got 7"),
        (
            "pto.tpush_to_aic(%g : " + GM + ") {split = 0}",
            "'pto.tpush_to_aic' op tile must be an on-chip tile",
        ),
        ("%t = pto.tpop_from_aiv {split = 0} -> " + GM, "'pto.tpop_from_aiv' op result must be an on-chip tile"),
        (
            '%t = "pto.tpop_from_aic"(%vr) <{operandSegmentSizes = array<i32: 1, 0>}> {split = 0} : (index) -> ' + V,
            "'pto.tpop_from_aic' op expects valid_row and valid_col operands to be provided together",
        ),
        (
            f"%t = pto.tpop_from_aic(%vr, %vc) {{split = 0}} -> {V}",
            "'pto.tpop_from_aic' op expects tile result to have dynamic validShape (?, ?) when valid_row/valid_col "
            "operands are provided",
        ),
    ],
)
def test_verifier_errors(body: str, expected: str) -> None:
    message = _verify(body, "%vr: index, %vc: index, %g: " + GM)
    assert message is not None and message.startswith(expected), message


def test_one_valid_dim_is_a_parse_error() -> None:
    with pytest.raises(Exception, match="expects 2 valid dims"):
        parse_pto(_module_text(f"%t = pto.tpop_from_aic(%vr) {{split = 0}} -> {V}"))
