"""``pypto.core.op_verify``: the same answers as xDSL's verifiers, on valid and broken ops."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_pipeline_kernels import KERNELS, kernel
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i1, i32
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from pypto.core.op_verify import _plan, verify_op, verify_tree
from pypto.pipeline.lower import lower_program


def _outcome(check: Callable[[], None]) -> tuple[type[BaseException], str] | None:
    try:
        check()
    except Exception as e:  # noqa: BLE001 - compared as they are
        return type(e), str(e)
    return None


def _same(op: Operation) -> tuple[type[BaseException], str] | None:
    """Both answers for ``op`` (equal: asserted); the answer."""
    mine, xdsl = _outcome(lambda: verify_op(op)), _outcome(lambda: op.verify(verify_nested_ops=False))
    assert mine == xdsl, op.name
    return mine


def _breakages(op: Operation) -> list[Callable[[], None]]:
    """In-place edits that may make ``op`` invalid."""
    edits: list[Callable[[], None]] = []
    if op.operands:
        edits.append(lambda: setattr(op.operands[0], "_type", i1))
        edits.append(lambda: setattr(op.operands[-1], "_type", StringAttr("not a type")))  # often in a variadic part
        edits.append(lambda: setattr(op, "operands", list(op.operands)[:-1]))  # a segment or a count off by one
        edits.append(lambda: setattr(op, "operands", [*op.operands, op.operands[0]]))
    if op.results:
        edits.append(lambda: setattr(op.results[0], "_type", i32))
    for name in list(op.properties):
        edits.append(lambda name=name: op.properties.pop(name))
        edits.append(lambda name=name: op.properties.__setitem__(name, IntegerAttr(7, i32)))
    edits.append(lambda: op.properties.__setitem__("not_a_property", StringAttr("x")))
    return edits


def _modules(tmp_path: Path) -> list[ModuleOp]:
    out = []
    for name in KERNELS:
        program = kernel(name, tmp_path)
        out += [program.module, lower_program(kernel(name, tmp_path)).module]
    return out


def test_every_op_of_the_kernels_gets_xdsl_answer(tmp_path: Path) -> None:
    """Valid ops pass both; each of several breakages of each op gets the same answer (exception type
    and message) from both, and at least some are rejected by the fast path's own checks."""
    fast_classes = set()
    rejected = 0
    for module in _modules(tmp_path):
        verify_tree(module)
        for op in list(module.walk()):
            assert _same(op) is None
            if _plan(type(op)) is not None:
                fast_classes.add(op.name)
            for index in range(len(_breakages(op))):
                work = module.clone()
                target = next(o for o, p in zip(work.walk(), module.walk(), strict=True) if p is op)
                _breakages(target)[index]()
                rejected += _same(target) is not None
                tree = _outcome(lambda work=work: verify_tree(work))
                assert tree == _outcome(lambda work=work: work.verify())
    assert {"arith.constant", "func.func", "builtin.module", "func.return", "func.call", "pl.tile.load"} <= fast_classes
    assert rejected > 50


def test_a_misplaced_terminator_and_an_empty_body_are_caught(tmp_path: Path) -> None:
    """The structural checks xDSL makes outside ``verify_``: the last op of a function body must be a
    terminator; a function body that needs one cannot be empty."""
    module = lower_program(kernel(next(iter(KERNELS)), tmp_path)).module
    f = next(o for o in module.walk() if o.name == "func.func")
    ret = f.body.block.last_op
    ret.detach()
    with pytest.raises(VerifyException):
        verify_tree(module)
    prev = f.body.block.last_op
    assert prev is not None and _same(prev) is not None
    for o in list(f.body.block.ops)[::-1]:
        o.detach()
        o.erase(safe_erase=False)
    assert _outcome(lambda: verify_tree(module)) == _outcome(module.verify)
