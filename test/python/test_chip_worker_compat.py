"""Upstream's ``ChipWorker`` surface: ``config=``, the ``with`` block, ``close``, registration handles."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.runtime import ChipWorker, RegistrationHandle, RunConfig

ROWS, COLS = 32, 64


@pl.jit
def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [ROWS, COLS])
        tb = pl.load(b, [0, 0], [ROWS, COLS])
        pl.store(pl.add(ta, tb), [0, 0], out)
    return out


@pytest.fixture(scope="module")
def compiled():
    a = torch.zeros(ROWS, COLS)
    return ir.compile(add_kernel.lower(a, a, a), platform="a2a3sim")


def test_config_keyword_and_with_block(compiled) -> None:
    torch.manual_seed(0)
    a, b = torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)
    with ChipWorker(config=RunConfig(platform="a2a3sim")) as w:
        assert w.platform == "a2a3sim"
        resident = w.alloc_tensor((ROWS, COLS), torch.float32, init=b)
        out = torch.zeros(ROWS, COLS)
        result = w.run(compiled, a, resident, out)
        assert result.host_copy_bytes == 2 * a.numel() * 4  # a in, out back; b stays on the device
        torch.testing.assert_close(out, a + b)
    assert w.closed and resident.freed
    with pytest.raises(RuntimeError, match="worker is closed"):
        w.run(compiled, a, b, out)


def test_registration_handle(compiled) -> None:
    a, b = torch.ones(ROWS, COLS), torch.full((ROWS, COLS), 2.0)
    worker = ChipWorker(config=RunConfig(platform="a2a3sim"))
    handle = worker.register(compiled)
    assert isinstance(handle, RegistrationHandle)
    out = torch.zeros(ROWS, COLS)
    handle(a, b, out)
    torch.testing.assert_close(out, a + b)
    out2 = torch.zeros(ROWS, COLS)
    worker.run(handle, b, b, out2)  # a handle also names the program for run()
    torch.testing.assert_close(out2, 2 * b)
    with handle:
        pass
    with pytest.raises(RuntimeError, match="was released"):
        handle(a, b, out)
    worker.close()
    worker.close()  # idempotent
    assert worker.closed


def test_positional_platform_still_works_and_level_checked() -> None:
    assert ChipWorker("a5sim").platform == "a5sim"
    assert ChipWorker(platform="a5sim").platform == "a5sim"
    with pytest.raises(ValueError, match="level=2"):
        ChipWorker(level=3)
    with pytest.raises(ValueError, match="not both"):
        ChipWorker(config=RunConfig(), platform="a2a3sim")


def test_register_twice_is_a_cache_hit(compiled) -> None:
    worker = ChipWorker(config=RunConfig(platform="a2a3sim"))
    assert worker.aicpu_dlopen_count == 0
    h1 = worker.register(compiled)
    h2 = worker.register(compiled)
    assert worker.aicpu_dlopen_count == 1 and h1.name == h2.name
    a = torch.ones(ROWS, COLS)
    out = torch.zeros(ROWS, COLS)
    for _ in range(3):
        h1(a, a, out)
    assert worker.aicpu_dlopen_count == 1  # launches load nothing
    other = ir.compile(add_kernel.lower(a, a, out), platform="a2a3sim")
    h3 = worker.register(other)
    assert worker.aicpu_dlopen_count == 2 and h3.name != h1.name  # same program name, its own entry
    worker.close()
    assert worker.aicpu_dlopen_count == 0
