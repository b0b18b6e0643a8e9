"""A name first assigned inside a loop body and read after the loop (upstream's model examples:
``x = pl.store(t, [..], out)`` in ``for b in pl.range(n)``, then ``return x``). Python gives it
the last iteration's value; here it becomes a loop-carried value whose init is the tensor the
body writes into (a zero-trip loop leaves it unchanged), or 0 for a scalar of a loop that runs
at least once; otherwise a located error."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserSyntaxError


@pl.jit
def store_in_loop(x: pl.Tensor, n: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.tensor.read(n, [0])
        for i in pl.range(rows):
            t = pl.load(x, [i * 16, 0], [16, 64])
            written = pl.store(pl.add(t, t), [i * 16, 0], out)
        out = written
    return out


@pytest.mark.parametrize("rows", [3, 0])
def test_store_result_escapes_the_loop(rows: int) -> None:
    x = torch.randn(64, 64)
    out = torch.zeros(64, 64)
    n = torch.tensor([rows], dtype=torch.int32)
    text = store_in_loop.lower(x, n, out).as_python()
    # carried with the Out tensor as its init
    assert "init_values=(out" in text, text
    store_in_loop(x, n, out)
    torch.testing.assert_close(out[: rows * 16], 2 * x[: rows * 16])
    assert torch.count_nonzero(out[rows * 16 :]) == 0


SCALAR_SRC = '''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for i in pl.range(LOOP):
            off = i * 0
        t = pl.load(x, [off, 0], [16, 64])
        out = pl.store(t, [0, 0], out)
        return out
'''


def test_scalar_escapes_a_loop_that_runs() -> None:
    prog = pl.parse(SCALAR_SRC.replace("LOOP", "3"))
    text = prog.as_python()
    assert "init_values=(" in text


@pytest.mark.parametrize("loop", ["0", "n", "2, 2"])
def test_escaping_name_of_a_loop_that_may_not_run_is_located(loop: str) -> None:
    src = SCALAR_SRC.replace("LOOP", loop)
    if "n" in loop:
        src = src.replace("out: pl.Out", "n: pl.Scalar[pl.INDEX], out: pl.Out")
    with pytest.raises(ParserSyntaxError) as e:
        pl.parse(src)
    msg = str(e.value)
    assert "<string>:6:9:" in msg and "'off' is first assigned inside the loop and read after it" in msg
    assert "define 'off' before the loop" in msg


def test_escaping_tile_is_located() -> None:
    src = '''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for i in pl.range(2):
            t = pl.load(x, [0, 0], [16, 64])
        out = pl.store(t, [0, 0], out)
        return out
'''
    with pytest.raises(ParserSyntaxError, match="'t' is first assigned inside the loop.*not a tensor written in place"):
        pl.parse(src)


def test_name_set_in_both_if_arms_is_not_live_into_the_loop() -> None:
    """``f`` is assigned on both arms before its read, so it is not live at the inner loop's end
    (it used to count as read before assignment, hence live after the inner loop through the
    outer loop's back edge, and be reported as escaping)."""
    src = '''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for j in pl.range(2):
            for i in pl.range(j):
                if i == 0:
                    f = pl.yield_(1)
                else:
                    f = pl.yield_(0)
                t = pl.load(x, [f * 0, 0], [16, 64])
                out = pl.store(t, [0, 0], out)
        return out
'''
    text = pl.parse(src).as_python()
    assert "f: pl.Scalar[pl.INDEX] = pl.yield_(0)" in text
