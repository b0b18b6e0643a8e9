"""``pl.cast`` of a scalar (upstream's form, used by examples/distributed/): one arith cast, printed back as
``pl.cast(x, pl.DTYPE)`` and parsed again; a bad target is a located error."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserError

SRC = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
          r: pl.Scalar[pl.INT32]) -> pl.Tensor[[8, 8], pl.FP32]:
        f = pl.cast(r, TARGET)
        t = pl.add(pl.load(x, [0, 0], [8, 8]), f)
        y = pl.store(t, [0, 0], y)
        return y
"""


@pytest.mark.parametrize("target", ["pl.FP32", "target_type=pl.FP32"])
def test_a_scalar_cast_is_one_arith_op_and_round_trips(target: str) -> None:
    prog = pl.parse(SRC.replace("TARGET", target), filename="k.py")
    casts = [op.name for op in prog.module.walk() if op.name.startswith("arith.") and op.name != "arith.constant"]
    assert casts == ["arith.sitofp"]
    text = prog.as_python()
    assert "pl.cast(r, pl.FP32)" in text
    assert pl.parse(text).as_python() == text


@pytest.mark.parametrize(("target", "message"), [("pl.INT64", "arith.extsi"), ("pl.INT16", "arith.trunci")])
def test_integer_widths(target: str, message: str) -> None:
    src = SRC.replace("f = pl.cast(r, TARGET)\n", f"i = pl.cast(r, {target})\n        f = pl.cast(i, pl.FP32)\n")
    names = [op.name for op in pl.parse(src, filename="k.py").module.walk()]
    assert message in names


def test_a_bad_target_is_a_located_error() -> None:
    with pytest.raises(ParserError, match=r"k\.py:9:.*pl\.cast: the target must be a dtype"):
        pl.parse(SRC.replace("TARGET", "3"), filename="k.py")


@pl.jit.incore
def _add_rank(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]], r: pl.Scalar[pl.INT32]):
    t = pl.add(pl.load(x, [0, 0], [8, 8]), pl.cast(r, target_type=pl.FP32))
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def _per_rank(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]], r: pl.Scalar[pl.INT32]):
    return _add_rank(x, y, r)


def test_the_cast_scalar_reaches_the_chip() -> None:
    x, y = torch.randn(8, 8), torch.zeros(8, 8)
    _per_rank(x, y, 5)
    assert torch.allclose(y, x + 5)
