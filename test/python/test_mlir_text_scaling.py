"""The MLIR printer names N values of one name hint in linear time (issue 17 goal 3), counted, not timed.

A kernel's ``.pto`` gives many values one hint (``%a__ssa_v0_pview``, ``_1``, ``_2`` ...): the search for a
free suffix started at 1 for each, N^2/2 lookups; it now goes on from the hint's last suffix.
"""

from __future__ import annotations

import pytest
from xdsl.dialects import test
from xdsl.dialects.builtin import ModuleOp

from pypto.core.mlir_text import UniqueNamePrinter, print_mlir


class CountingSet(set[str]):
    """The printer's set of names given, counting the membership tests."""

    tests = 0

    def __contains__(self, name: object) -> bool:
        CountingSet.tests += 1
        return super().__contains__(name)


def name_lookups(n: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """(membership tests, printed text) of printing ``n`` values all hinted ``v``."""
    ops = [test.TestOp(result_types=[test.TestType("t")]) for _ in range(n)]
    for op in ops:
        op.results[0].name_hint = "v"
    original = UniqueNamePrinter._taken

    def counted(self: UniqueNamePrinter) -> set[str]:
        taken = original(self)
        if not isinstance(taken, CountingSet):
            taken = self.__dict__["_taken_names"] = CountingSet(taken)
        return taken

    monkeypatch.setattr(UniqueNamePrinter, "_taken", counted)
    CountingSet.tests = 0
    text = print_mlir(ModuleOp(ops))
    return CountingSet.tests, text


def test_names_of_one_hint_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    small, text = name_lookups(100, monkeypatch)
    large, _ = name_lookups(200, monkeypatch)
    assert "%v = " in text and "%v_1 = " in text and "%v_99 = " in text and "%v_100" not in text
    assert large / small <= 2.1, (small, large)  # from suffix 1 each time: 4x
