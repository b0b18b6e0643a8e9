"""Multi-rank runs (``pypto.runtime.distributed.launch``) given a user's mistake: the launch ends within
its timeout with a :class:`DistributedRunError` naming the rank and what was wrong, never a crashed
process, a hang or silently wrong data."""

from __future__ import annotations

import re

import pytest
import torch

from pypto.runtime.distributed import (
    DistributedConfig,
    DistributedRunError,
    RankComm,
    allgather,
    allreduce,
    broadcast,
    launch,
)

TIMEOUT = 20.0
"""Every wait's bound; ``dispatch_timeout_s`` bounds each whole launch, so no test here can hang."""


def _cfg(world: int = 2) -> DistributedConfig:
    return DistributedConfig(world_size=world, timeout_s=TIMEOUT, dispatch_timeout_s=60.0)


def _allreduce_rank_sized(comm: RankComm, mode: str) -> torch.Tensor:
    """Rank 0 reduces 4 elements, the others 8."""
    return allreduce(comm, torch.ones(4 if comm.rank == 0 else 8), "Sum", mode)


def _broadcast_rank_sized(comm: RankComm) -> torch.Tensor:
    return broadcast(comm, torch.zeros(4 if comm.rank == 0 else 8), 0)


def _allgather_rank_dtype(comm: RankComm) -> torch.Tensor:
    return allgather(comm, torch.zeros(4, dtype=torch.float32 if comm.rank == 0 else torch.float16))


@pytest.mark.parametrize(
    ("fn", "args", "receiver", "message"),
    [
        (_allreduce_rank_sized, ("ring",), 1, r"ring rs 0: rank 0 sent 8 bytes, rank 1 expects 16 \(a \[4\] float32"),
        (_allreduce_rank_sized, ("mesh",), 1, r"allreduce mesh: rank 0 sent 16 bytes, rank 1 expects 32 \(a \[8\] float32"),
        (_broadcast_rank_sized, (), 1, r"broadcast: rank 0 sent 16 bytes, rank 1 expects 32"),
        (_allgather_rank_dtype, (), 0, r"allgather: rank 1 sent 8 bytes, rank 0 expects 16"),
    ],
)
def test_ranks_with_different_shapes_are_named(fn: object, args: tuple, receiver: int, message: str) -> None:
    """A receive of a message larger than its buffer aborted the rank's process in gloo ("exited with code -6
    (killed or crashed)"); one smaller than its buffer returned the buffer's uninitialised bytes as data
    (a broadcast of 4 floats into 8 gave ``6.4e11``)."""
    with pytest.raises(DistributedRunError) as e:
        launch(fn, _cfg(), *args)
    task, text = e.value.failures[receiver]
    assert re.search(message, text), (task, text)
    assert "shapes or dtypes differ" in text
    assert all("killed or crashed" not in m for _, m in e.value.failures.values()), str(e.value)
