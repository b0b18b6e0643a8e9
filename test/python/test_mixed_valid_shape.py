"""A tile whose valid shape is known only at run time crossing between the cube and vector parts of a mixed
kernel (ExpandMixedKernel's ``tpush`` / ``tpop``). The pop took the tile's static shape, so the run stopped
with "pops a 16x32 tile but the cube side pushed 11x32"; the pop now declares the pushed tile's valid shape
(``valid_shape=``, from the op classes' valid-shape rules), in the IR, the ``.pto``, the C++ and the torch code."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig


@pl.jit
def _rows_then_relu(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_relu"):
        ta = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        v = pl.move(acc, target_memory=pl.Mem.Vec)  # cube -> vector: n x 32 valid
        pl.store(pl.relu(v), [0, 0], c)
    return c


@pl.jit
def _scaled_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_mm"):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[n - 1, 32])
        tm = pl.move(pl.mul(t, 2.0), target_memory=pl.Mem.Mat)  # vector -> cube: (n - 1) x 32 valid
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def _blocks_exp(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="blocks_exp"):
        for i in pl.range(2):
            ta = pl.load(a, [i * 16, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
            tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat, valid_shape=[32, n + 4])
            acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
            v = pl.move(acc, target_memory=pl.Mem.Vec)  # n x (n + 4) valid, in a loop
            pl.store(pl.exp(v), [i * 16, 0], c)
    return c


def test_cube_to_vector_with_run_time_rows(tmp_path: Path) -> None:
    torch.manual_seed(0)
    a, b, c = torch.randn(16, 32), torch.randn(32, 32), torch.full((16, 32), -7.0)
    _rows_then_relu(a, b, c, 11, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert torch.allclose(c[:11], torch.relu(a[:11] @ b), atol=1e-4)
    assert bool((c[11:] == -7.0).all()), "rows past the valid shape were stored"
    pto = next(tmp_path.rglob("mm_relu_aiv.pto")).read_text()
    assert "pto.tpop_from_aic(%arg" in pto and "v_row=?, v_col=?" in pto, pto
    cpp = next(tmp_path.rglob("kernels/aiv/mm_relu_aiv.cpp")).read_text()
    assert "TPOP_FROM_AIC" in cpp
    # the torch code of every pass's dump (each reparsed) gives the same numbers
    program = ir_compile(_rows_then_relu.specialize(a, b, c, 11), output_dir=str(tmp_path / "build"))
    expected = torch.cat([torch.relu(a[:11] @ b), torch.full((5, 32), -7.0)])
    program.validate_ir({"a": a, "b": b, "c": torch.full((16, 32), -7.0), "n": 11}, {"c": expected})


def test_vector_to_cube_with_run_time_rows(tmp_path: Path) -> None:
    torch.manual_seed(1)
    a, b, c = torch.randn(16, 32), torch.randn(32, 32), torch.full((16, 32), -7.0)
    _scaled_rows(a, b, c, 11, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert torch.allclose(c[:10], 2 * a[:10] @ b, atol=1e-4)
    assert bool((c[10:] == -7.0).all())


def test_run_time_rows_and_columns_in_a_loop(tmp_path: Path) -> None:
    torch.manual_seed(2)
    a, b, c = torch.randn(32, 32), torch.randn(32, 32), torch.full((32, 32), -1.0)
    _blocks_exp(a, b, c, 9, config=RunConfig(save_kernels_dir=str(tmp_path)))
    for i in range(2):
        block = c[i * 16 : (i + 1) * 16]
        assert torch.allclose(block[:9, :13], torch.exp(a[i * 16 : i * 16 + 9] @ b[:, :13]), rtol=1e-4, atol=1e-4)
        assert bool((block[9:] == -1.0).all()) and bool((block[:, 13:] == -1.0).all())


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("pl.tile.tpop_from_aic(shape=[16, 32], dtype=pl.FP32, valid_shape=[20, 32])",
         "valid_shape[0] = 20 is outside the tile's 16"),
        ("pl.tile.tpop_from_aic(shape=[16, 32], dtype=pl.FP32, valid_shape=[n])",
         "operand 'valid_shape' has 1 entries, expected 2"),
        ("pl.tile.tpop_from_aic(shape=[2, 16, 32], dtype=pl.FP32, valid_shape=[n, 16, 32])",
         "valid_shape= needs a 2-D tile, got shape [2, 16, 32]"),
    ],
)  # fmt: skip
def test_a_wrong_pop_valid_shape_is_a_located_error(call: str, says: str) -> None:
    src = (
        "import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.AIV)\n"
        f"def f(n: pl.Scalar[pl.INDEX]):\n    t = {call}\n    return\n"
    )
    with pytest.raises(ParserTypeError) as e:
        pl.parse(src, filename="k.py")
    assert "k.py:5:" in str(e.value) and says in str(e.value), str(e.value)
