"""``pl.slice(t, shape, offsets, valid_shape=[n, c])`` of a tile: the window's valid shape is ``[n, c]`` on the
device as in the torch reference. ptoas allocated the window valid everywhere, so the device stored all its
rows (16 where 5 were valid) while ``validate_ir``'s torch code stored 5; across cores the pop then took the
static shape."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig


@pl.jit
def _window_exp(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="window_exp"):
        t = pl.load(a, [0, 0], [32, 32])
        s = pl.slice(t, [16, 32], [8, 0], valid_shape=[n, 32])
        pl.store(pl.exp(s), [0, 0], c)
    return c


@pl.jit
def _window_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="window_mm"):
        t = pl.load(a, [0, 0], [32, 32])
        s = pl.slice(t, [16, 32], [8, 0], valid_shape=[n, 32])
        tm = pl.move(s, target_memory=pl.Mem.Mat)  # vector -> cube: n x 32 valid
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_a_slice_with_a_valid_shape_stores_its_valid_rows_only(tmp_path: Path) -> None:
    torch.manual_seed(0)
    a, c = torch.randn(32, 32), torch.full((16, 32), -1.0)
    _window_exp(a, c, 5, config=RunConfig(save_kernels_dir=str(tmp_path / "run")))
    assert torch.allclose(c[:5], torch.exp(a[8:13]), rtol=1e-5, atol=1e-6)
    assert bool((c[5:] == -1.0).all()), "rows past the slice's valid shape were stored"
    expected = c.clone()
    program = ir_compile(_window_exp.specialize(a, c, 5), output_dir=str(tmp_path / "build"))
    program.validate_ir({"a": a, "c": torch.full((16, 32), -1.0), "n": 5}, {"c": expected})  # torch agrees


def test_a_slice_with_a_valid_shape_crosses_to_the_cube(tmp_path: Path) -> None:
    torch.manual_seed(1)
    a, b, c = torch.randn(32, 32), torch.randn(32, 32), torch.full((16, 32), -1.0)
    _window_matmul(a, b, c, 5, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert torch.allclose(c[:5], a[8:13] @ b, rtol=1e-4, atol=1e-4)
    assert bool((c[5:] == -1.0).all())


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("    t = pl.load(a, [0, 0], [16, 32], valid_shape=[-1, 32])\n",
         "pl.tile.load: valid_shape[0] = -1 is outside the tile's 16"),
        ("    t = pl.load(a, [0, 0], [16, 32], valid_shape=[17, 32])\n",
         "pl.tile.load: valid_shape[0] = 17 is outside the tile's 16"),
        ("    t = pl.load(a, [0, 0], [16, 32])\n    s = pl.slice(t, [8, 32], [0, 0], valid_shape=[20, 32])\n",
         "pl.tile.slice: valid_shape[0] = 20 is outside the window's 8"),
    ],
    ids=["load_negative", "load_past_the_tile", "slice_past_the_window"],
)  # fmt: skip
def test_a_static_valid_shape_outside_its_tile_is_a_located_error(body: str, says: str) -> None:
    """Accepted before: the run then stopped in numpy ("could not broadcast input array from shape (17,32) into
    shape (16,32)") or stored a window the user did not mean."""
    src = f"import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\ndef f(a: pl.Tensor[[32, 32], pl.FP32]):\n{body}    return\n"
    with pytest.raises(ParserTypeError) as e:
        pl.parse(src, filename="k.py")
    assert "k.py:" in str(e.value) and says in str(e.value), str(e.value)


@pl.jit
def _add_partial(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_partial"):
        x = pl.load(a, [0, 0], [16, 32])
        y = pl.load(b, [0, 0], [16, 32], valid_shape=[n, 32])
        pl.store(pl.add(x, y), [0, 0], c)
    return c


@pl.jit
def _load_rows(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="load_rows"):
        pl.store(pl.exp(pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])), [0, 0], c)
    return c


def test_run_time_valid_shapes_that_do_not_fit_are_said_in_tile_terms(tmp_path: Path) -> None:
    """The device's error was numpy's: "operands could not be broadcast together with shapes (16,32) (11,32)",
    "could not broadcast input array from shape (20,32) into shape (16,32)"."""
    from pypto.device.interpreter.compiled import KernelError

    a, b = torch.randn(32, 32), torch.randn(16, 32)
    with pytest.raises(KernelError) as e:
        _add_partial(a[:16], b, torch.zeros(16, 32), 11, config=RunConfig(save_kernels_dir=str(tmp_path / "add")))
    assert "pto.tadd: its operands' valid shapes differ (16x32 and 11x32)" in str(e.value), str(e.value)
    assert "test_slice_valid_shape.py:" in str(e.value)
    with pytest.raises(KernelError) as e:
        _load_rows(a, torch.zeros(16, 32), 20, config=RunConfig(save_kernels_dir=str(tmp_path / "load")))
    assert "pto.tload: a valid shape of 20x32 does not fit its 16x32 tile" in str(e.value), str(e.value)
