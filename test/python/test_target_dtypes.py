"""The one dtype table (:mod:`pypto.target.dtypes`) agrees with the types each column names."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.dialects.dtypes import DTYPE_NAMES, dtype_bits, dtype_type
from pypto.target.dtypes import BY_MLIR, ROWS
from pypto.target.model import DTYPE_BYTES, normalize_dtype


def test_every_dsl_dtype_has_one_row_in_dsl_order() -> None:
    assert tuple(r.name for r in ROWS) == DTYPE_NAMES


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_row_matches_mlir_numpy_and_target(row) -> None:  # type: ignore[no-untyped-def]
    t = dtype_type(row.name)
    assert str(t) == row.mlir and BY_MLIR[str(t)] is row
    assert dtype_bits(t) == row.bits
    if row.numpy is not None:
        assert np.dtype(row.numpy).itemsize * 8 == row.bits
    if row.pto is not None:
        assert DTYPE_BYTES[row.pto] * 8 == row.bits
        for spelling in (row.name, row.mlir, row.cxx, row.torch):
            if spelling is not None:
                assert normalize_dtype(spelling) == row.pto


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_torch_columns_name_torch_dtypes(row) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    compute = getattr(torch, row.torch_compute)
    assert isinstance(compute, torch.dtype)
    if row.torch is not None:
        same = getattr(torch, row.torch)
        assert same.itemsize * 8 == row.bits
        assert str(same).removeprefix("torch.") == row.torch
