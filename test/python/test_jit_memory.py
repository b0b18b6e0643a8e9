"""Repeated ``@pl.jit`` calls keep memory and artefacts flat (issue 17, goal 6).

One kernel is called 200 times; Python heap (``tracemalloc``, after a GC) and the files under the working
directory are measured after call 60 and after call 200. What a call keeps (the compiled program, its last
run) is allocated by then; anything a call appends to a record list, cache or artefact directory would grow
by 140 calls' worth. The bound tolerates noise (a few hundred bytes of interpreter caches, allocator
slack) but not a leak of 512 bytes per call.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest
import torch

import pypto.language as pl

CALLS = 200
MEASURE_FROM = 60
LEAK_PER_CALL = 512  # bytes: the smallest per-call growth the test must catch


@pl.jit
def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def _files(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file())


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_repeated_jit_calls_keep_memory_flat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the compile writes its build output under the working directory
    a, b = torch.full((32, 32), 1.5), torch.full((32, 32), 2.0)
    out = torch.zeros(32, 32)
    tracemalloc.start()
    try:
        for _ in range(MEASURE_FROM):
            add_kernel(a, b, out)
        heap, files = _traced(), _files(tmp_path)
        for _ in range(CALLS - MEASURE_FROM):
            add_kernel(a, b, out)
        grown, files_after = _traced() - heap, _files(tmp_path)
    finally:
        tracemalloc.stop()
    assert torch.equal(out, torch.full((32, 32), 3.5))
    calls = CALLS - MEASURE_FROM
    assert grown < LEAK_PER_CALL * calls, f"heap grew {grown} B over {calls} calls ({grown / calls:.0f} B per call)"
    assert files_after == files, f"{files_after - files} files written by {calls} calls of a compiled kernel"
