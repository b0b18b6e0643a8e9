"""Worker-resident tensors of a prepared L3 worker: upstream's ``DeviceTensor`` / ``StackedDeviceTensor``.

The parent holds a handle (:class:`DistributedDeviceTensor`, :class:`StackedDeviceTensor`); the data
lives in the rank processes of the worker's :class:`~.pool.RankPool`, in their ``state["resident"]``,
and stays there across dispatches (no host copy in or out: a dispatch reads and writes it in place).

- ``rt.alloc_tensor(shape, dtype, init=)``: one buffer on **every** rank (each chip its own copy,
  ``init`` copied to all), so any rank's dispatch can take it;
- ``rt.alloc_stacked_tensor(host_w)``: shard ``i = host_w[i]`` on rank ``i`` (``host_w.shape[0]`` is
  the world size); a dispatch on rank ``r`` takes ``w[r]`` (indexing another rank's shard is an error).

The functions below run on the ranks (through :meth:`~.pool.RankPool.run`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import torch

_IDS = itertools.count(1)


@dataclass(frozen=True)
class ResidentRef:
    """What a dispatch carries for a resident argument: its id and whether it is stacked (one shard a rank)."""

    id: int
    stacked: bool
    shape: tuple[int, ...]
    dtype: str


@dataclass(eq=False)
class DistributedDeviceTensor:
    """A worker-resident tensor (``rt.alloc_tensor``); valid on its worker until freed or closed."""

    worker: Any
    shape: tuple[int, ...]
    dtype: torch.dtype
    id: int = field(default_factory=lambda: next(_IDS))
    freed: bool = False
    stacked = False

    @property
    def ref(self) -> ResidentRef:
        return ResidentRef(self.id, self.stacked, tuple(self.shape), str(self.dtype).removeprefix("torch."))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id}, shape={list(self.shape)}, dtype={self.dtype})"


@dataclass(eq=False)
class StackedDeviceTensor(DistributedDeviceTensor):
    """Shard ``i`` on rank ``i`` (``rt.alloc_stacked_tensor``): ``shape`` is the whole stack's."""

    stacked = True


def rank_alloc(comm: Any, ref: ResidentRef, init: Any, *, state: dict[str, Any]) -> None:
    """On each rank: allocate ``ref`` (its shard when stacked), from ``init`` (a tensor, or per-rank shards)."""
    shape = ref.shape[1:] if ref.stacked else ref.shape
    data = torch.zeros(shape, dtype=getattr(torch, ref.dtype))
    if init is not None:
        data.copy_(init[comm.rank] if ref.stacked else init)
    state.setdefault("resident", {})[ref.id] = data


def rank_free(comm: Any, ident: int, *, state: dict[str, Any]) -> None:
    """On each rank: drop a resident tensor."""
    state.setdefault("resident", {}).pop(ident, None)


def rank_read(comm: Any, ident: int, *, state: dict[str, Any]) -> torch.Tensor:
    """On each rank: its copy (or shard) of a resident tensor."""
    return state.get("resident", {})[ident].clone()


def resident_arg(comm: Any, ref: ResidentRef, index: tuple[int, ...], state: dict[str, Any]) -> torch.Tensor:
    """The rank's tensor of a resident argument ``ref[index]`` (a view: a dispatch writes it in place)."""
    data = state.get("resident", {}).get(ref.id)
    if data is None:
        raise comm.error(f"resident tensor {ref.id} is not on rank {comm.rank} (freed, or from another worker)")
    if ref.stacked:
        if not index:
            raise comm.error(f"a StackedDeviceTensor {list(ref.shape)} is passed whole: a dispatch on rank "
                             f"{comm.rank} takes its shard w[{comm.rank}]")
        if index[0] != comm.rank:
            raise comm.error(f"shard {index[0]} of a StackedDeviceTensor lives on rank {index[0]}, not on rank "
                             f"{comm.rank} where it is dispatched")
        index = index[1:]
    return data[index] if index else data
