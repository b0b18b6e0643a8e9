"""The DSL printer names N temporaries in linear time (issue 17 goal 3), counted, not timed.

N chains ``y = pl.add(x, x)`` give N distinct variables of one hint (``y``, ``y_1``, ``y_2`` ...; a kernel's
stores into one tensor do the same: ``out__store_<n>``): the search for a free suffix started at 1 for
each, N^2/2 lookups; it now goes on from the hint's last suffix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pypto.language as pl
from pypto.core import dsl_printer

HEAD = (
    "import pypto.language as pl\n\n\n@pl.program\nclass Chains:\n"
    "    @pl.function(type=pl.FunctionType.Orchestration)\n"
    "    def f(self, a: pl.Tensor[[{rows}, 16], pl.FP32], out: pl.Out[pl.Tensor[[{rows}, 16], pl.FP32]])"
    " -> pl.Tensor[[{rows}, 16], pl.FP32]:\n"
    "        with pl.at(level=pl.Level.CORE_GROUP):\n"
)


def chains(n: int) -> str:
    body = "".join(
        f"            x{i} = pl.load(a, [{16 * i}, 0], [16, 16])\n"
        f"            y = pl.add(x{i}, x{i})\n"
        f"            pl.store(y, [{16 * i}, 0], out)\n"
        for i in range(n)
    )
    return HEAD.format(rows=16 * n) + body + "        return out\n"


class CountingSet(set[str]):
    """A printer's set of names taken, counting the membership tests."""

    tests = 0

    def __contains__(self, name: object) -> bool:
        CountingSet.tests += 1
        return super().__contains__(name)


def name_lookups(n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """(membership tests, text) of printing the program of ``n`` chains."""
    path = tmp_path / f"chains_{n}.py"
    path.write_text(chains(n))
    program = pl.loads(path)
    init = dsl_printer._FunctionPrinter.__init__

    def counted(self: dsl_printer._FunctionPrinter, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        self.taken = CountingSet(self.taken)

    monkeypatch.setattr(dsl_printer._FunctionPrinter, "__init__", counted)
    CountingSet.tests = 0
    text = dsl_printer.print_program(program.module)
    return CountingSet.tests, text


def test_temporaries_named_linearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small, text = name_lookups(100, tmp_path, monkeypatch)
    large, _ = name_lookups(200, tmp_path, monkeypatch)
    assert " y: " in text and " y_1: " in text and " y_99: " in text and "y_100" not in text
    assert large / small <= 2.2, (small, large)  # from suffix 1 each time: 4x
