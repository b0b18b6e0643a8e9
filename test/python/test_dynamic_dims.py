"""``pl.dynamic`` outside a kernel body: a module-level dimension used in annotations (issue 15).

A dynamic dimension takes the extent of the tensor bound to it (a JIT call's tensor, or a caller's
argument); each distinct extent is its own specialization."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError

M = pl.dynamic("M")
N = pl.dynamic("N")
TILE = 32


@pl.jit.incore
def scale_rows(x: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    out = pl.store(pl.mul(pl.load(x, [0, 0], [TILE, 64]), 2.0), [0, 0], out)
    return out


@pl.jit
def static_entry(x: pl.Tensor[[TILE, 64], pl.FP32], out: pl.Out[pl.Tensor[[TILE, 64], pl.FP32]]):
    return scale_rows(x, out)  # M binds to 32 here


@pl.jit
def dynamic_entry(x: pl.Tensor[[N, 64], pl.FP32], out: pl.Out[pl.Tensor[[N, 64], pl.FP32]]):
    return scale_rows(x, out)


def test_dynvar_object() -> None:
    assert isinstance(M, pl.DynVar) and M.name == "M" and repr(M) == "pl.dynamic('M')"
    with pytest.raises(ValueError, match="expected an identifier"):
        pl.dynamic("not a name")


def test_callee_dimension_binds_to_the_callers_extent() -> None:
    torch.manual_seed(0)
    x = torch.randn(TILE, 64)
    out = torch.zeros(TILE, 64)
    text = static_entry.lower(x, out).as_python()
    assert "pl.Tensor[[32, 64], pl.FP32" in text and "?" not in text
    static_entry(x, out)
    torch.testing.assert_close(out, x * 2.0)


@pytest.mark.parametrize("extent", [TILE, 3 * TILE])
def test_entry_dimension_takes_each_extent(extent: int) -> None:
    torch.manual_seed(extent)
    x = torch.randn(extent, 64)
    out = torch.zeros(extent, 64)
    dynamic_entry(x, out)
    torch.testing.assert_close(out[:TILE], x[:TILE] * 2.0)
    assert torch.count_nonzero(out[TILE:]) == 0  # the kernel writes one tile only


def test_static_dimension_mismatch_is_located() -> None:
    with pytest.raises(ParserTypeError, match=r"parameter 'x' is declared .*\[\?, 64\].* but gets .*\[32, 48\]") as e:
        dynamic_entry(torch.zeros(TILE, 48), torch.zeros(TILE, 48))
    assert "test_dynamic_dims.py" in str(e.value)
