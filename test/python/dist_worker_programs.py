"""Programs for test_distributed_worker.py: a prepared L3 worker's HOST callbacks and resident tensors
(module-level, so the forked ranks and the front end see their source)."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

N = 64
SEEN: list[float] = []
"""What the concrete SubWorker ``record_first`` saw (it runs in the test's own process)."""


@pl.program
class AddThenInspect:
    """HOST orchestrator: per rank, ``y[r] = x[r] + x[r]`` on chip r, then the abstract ``inspect`` callback on
    ``y[r]`` and the concrete ``record_first`` on ``y[r]``."""

    @pl.function(type=pl.FunctionType.InCore)
    def double_k(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        t = pl.load(x, [0, 0], [2, N])
        return pl.store(pl.add(t, t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def double(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.double_k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(y: pl.Tensor[[2, N], pl.FP32]):
        """Bound at prepare(callbacks=...)."""
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def record_first(y: pl.Tensor[[2, N], pl.FP32]):
        SEEN.append(float(y[0, 0]))

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[pl.dynamic("R"), 2, N], pl.FP32],
                  y: pl.Out[pl.Tensor[[pl.dynamic("R"), 2, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            out = self.double(x[r], y[r], device=r)
            self.inspect(out)
            self.record_first(out)


@pl.program
class WindowedInspect:
    """As :class:`AddThenInspect` with a window buffer on every rank (so a plan's segments share windows)."""

    @pl.function(type=pl.FunctionType.InCore)
    def double_k(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        t = pl.load(x, [0, 0], [2, N])
        return pl.store(pl.add(t, t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def double(self, x: pl.Tensor[[2, N], pl.FP32], y: pl.Out[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.double_k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(y: pl.Tensor[[2, N], pl.FP32]):
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[pl.dynamic("R"), 2, N], pl.FP32],
                  y: pl.Out[pl.Tensor[[pl.dynamic("R"), 2, N], pl.FP32]]):
        pld.alloc_window_buffer(4096)
        for r in pl.range(pld.world_size()):
            self.inspect(self.double(x[r], y[r], device=r))


@pl.program
class AccumulateThenInspect:
    """HOST orchestrator: per rank, ``acc[r] += x[r]`` on chip r (``acc``: a stacked resident tensor), then the
    abstract ``inspect`` callback on the result."""

    @pl.function(type=pl.FunctionType.InCore)
    def acc_k(self, x: pl.Tensor[[2, N], pl.FP32], acc: pl.InOut[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        t = pl.add(pl.load(x, [0, 0], [2, N]), pl.load(acc, [0, 0], [2, N]))
        return pl.store(t, [0, 0], acc)

    @pl.function(type=pl.FunctionType.Orchestration)
    def accumulate(self, x: pl.Tensor[[2, N], pl.FP32], acc: pl.InOut[pl.Tensor[[2, N], pl.FP32]]) -> pl.Tensor[[2, N], pl.FP32]:
        return self.acc_k(x, acc)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(y: pl.Tensor[[2, N], pl.FP32]):
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, x: pl.Tensor[[pl.dynamic("R"), 2, N], pl.FP32],
                  acc: pl.InOut[pl.Tensor[[pl.dynamic("R"), 2, N], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.inspect(self.accumulate(x[r], acc[r], device=r))


@pl.jit.incore
def accumulate_k(x: pl.Tensor[[2, N], pl.FP32], acc: pl.InOut[pl.Tensor[[2, N], pl.FP32]]):
    t = pl.add(pl.load(x, [0, 0], [2, N]), pl.load(acc, [0, 0], [2, N]))
    return pl.store(t, [0, 0], acc)


@pl.jit
def accumulate(x: pl.Tensor[[2, N], pl.FP32], acc: pl.InOut[pl.Tensor[[2, N], pl.FP32]]):
    return accumulate_k(x, acc)


@pl.jit.host
def accumulate_host(x: pl.Tensor[[2, 2, N], pl.FP32], acc: pl.InOut[pl.Tensor[[2, 2, N], pl.FP32]]):
    """``acc[r] += x[r]`` on rank r: with a stacked resident ``acc``, each chip keeps its shard."""
    for r in pl.range(pld.world_size()):
        accumulate(x[r], acc[r], device=r)


@pl.jit.incore
def copy_k(src: pl.Tensor[[2, N], pl.FP32], dst: pl.Out[pl.Tensor[[2, N], pl.FP32]]):
    return pl.store(pl.load(src, [0, 0], [2, N]), [0, 0], dst)


@pl.jit
def copy(src: pl.Tensor[[2, N], pl.FP32], dst: pl.Out[pl.Tensor[[2, N], pl.FP32]]):
    return copy_k(src, dst)


@pl.jit.host
def read_host(src: pl.Tensor[[2, 2, N], pl.FP32], dst: pl.Out[pl.Tensor[[2, 2, N], pl.FP32]]):
    """``dst[r] = src[r]`` on rank r: reads what another program left in a stacked resident ``src``."""
    for r in pl.range(pld.world_size()):
        copy(src[r], dst[r], device=r)


# ---- rank functions for a RankPool (module-level: a dispatch pickles them by name) -------------


def rank_count(comm: object, *, state: dict) -> tuple[int, int]:
    """This rank process's id and how many dispatches it has served (kept in its state)."""
    import os

    state["n"] = state.get("n", 0) + 1
    return os.getpid(), state["n"]


def rank_raise(comm: object, *, state: dict) -> None:
    """Rank 1 raises; rank 0 waits for it at a barrier (and times out)."""
    if comm.rank == 1:  # type: ignore[attr-defined]
        raise ValueError("boom on purpose")
    comm.barrier()  # type: ignore[attr-defined]


def rank_hang(comm: object, *, state: dict) -> int:
    """Rank 1 never returns (local work that talks to no peer); rank 0 is done at once."""
    import time

    if comm.rank == 1:  # type: ignore[attr-defined]
        time.sleep(3600)
    return comm.rank  # type: ignore[attr-defined]


def rank_exit(comm: object, *, state: dict) -> None:
    """Rank 1's process dies mid-dispatch."""
    import os

    if comm.rank == 1:  # type: ignore[attr-defined]
        os._exit(9)


def rank_open_runs(comm: object, *, state: dict) -> int:
    """How many segmented runs this rank still holds (windows not yet released)."""
    return sum(1 for k in state if isinstance(k, tuple) and k[0] == "run")
