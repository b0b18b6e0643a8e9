"""A tile of an element type no on-chip tile holds (``pl.INDEX``, ``pl.INT4``, ``pl.HF4``, ``pl.TASK_ID``) is an
error at the op that makes it, naming the dtype (it was ``!pto.tile_buf: dtype=index is not a PTO element
type``, with no file or line)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.errors import PartialCodegenError
from pypto.runtime import RunConfig

KERNEL = """
import pypto.language as pl


@pl.jit
def cast_through(x: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.cast(x, target_type=pl.{dtype})
        o[:] = pl.cast(t, target_type=pl.FP32)
    return o
"""


@pytest.mark.parametrize("dtype", ["INDEX", "INT4", "HF4", "TASK_ID"])
def test_a_tile_of_a_dtype_no_tile_holds_is_located(tmp_path: Path, dtype: str) -> None:
    source = tmp_path / f"cast_{dtype.lower()}.py"
    source.write_text(KERNEL.format(dtype=dtype))
    namespace: dict[str, object] = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)  # the front end reads the file
    kernel = namespace["cast_through"]
    x, o = torch.randn(16, 32), torch.zeros(16, 32)
    with pytest.raises(PartialCodegenError) as caught:
        kernel(x, o, config=RunConfig(save_kernels_dir=str(tmp_path / "build")))  # type: ignore[operator]
    message = str(caught.value)
    assert f"{source}:8:13: error:" in message, message
    assert f"no on-chip tile holds pl.{dtype} elements" in message, message


def test_the_dtypes_a_tile_holds_still_compile() -> None:
    """The check names only what no tile holds: BOOL and the 8-bit integers still make tiles."""
    from pypto.dialects.dtypes import dtype_type
    from pypto.dialects.types import TileType
    from pypto.ptoas.codegen.types import tile_buf_type

    for name in ("FP32", "FP16", "BF16", "INT8", "UINT8", "INT32", "BOOL"):
        assert tile_buf_type(TileType.get([16, 32], dtype_type(name), pl.Mem.Vec)).rows.data == 16
