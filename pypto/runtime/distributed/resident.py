"""Worker-resident tensors of a prepared L3 worker: upstream's ``DeviceTensor`` / ``StackedDeviceTensor``.

The parent holds a handle (:class:`DistributedDeviceTensor`, :class:`StackedDeviceTensor`); the data
lives in the rank processes of the worker's :class:`~.pool.RankPool`, in their ``state["resident"]``,
and stays there across dispatches (no host copy in or out: a dispatch reads and writes it in place).

- ``rt.alloc_tensor(shape, dtype, init=)``: one buffer on **every** rank (each chip its own copy,
  ``init`` copied to all), so any rank's dispatch can take it;
- ``rt.alloc_stacked_tensor(host_w, worker_ids=None)``: shard ``i = host_w[i]`` on rank ``worker_ids[i]``
  (default ``range(B)``, ``B = host_w.shape[0]`` at most the world size; the ids distinct); a dispatch on
  rank ``r`` takes the shard that lives there (indexing another rank's shard is an error).

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
    worker_ids: tuple[int, ...] = ()
    """Stacked: ``worker_ids[i]`` is the rank that holds shard ``i``."""

    def shard_of(self, rank: int) -> int | None:
        """The shard ``rank`` holds (stacked), or None."""
        return self.worker_ids.index(rank) if rank in self.worker_ids else None


@dataclass(eq=False)
class DistributedDeviceTensor:
    """A worker-resident tensor (``rt.alloc_tensor``); valid on its worker until freed or closed."""

    worker: Any
    shape: tuple[int, ...]
    dtype: torch.dtype
    id: int = field(default_factory=lambda: next(_IDS))
    freed: bool = False
    worker_ids: tuple[int, ...] = ()
    stacked = False

    @property
    def ref(self) -> ResidentRef:
        return ResidentRef(self.id, self.stacked, tuple(self.shape), str(self.dtype).removeprefix("torch."),
                           tuple(self.worker_ids))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id}, shape={list(self.shape)}, dtype={self.dtype})"


@dataclass(eq=False)
class StackedDeviceTensor(DistributedDeviceTensor):
    """Shard ``i`` on rank ``worker_ids[i]`` (``rt.alloc_stacked_tensor``): ``shape`` is the whole stack's."""

    stacked = True

    @property
    def full_shape(self) -> tuple[int, ...]:
        """The stacked shape ``(B, *tail)`` (upstream's name; ``shape`` is the same)."""
        return tuple(self.shape)


def rank_alloc(comm: Any, ref: ResidentRef, init: Any, *, state: dict[str, Any]) -> None:
    """On each rank: allocate ``ref`` (its shard when stacked: none on a rank outside ``worker_ids``), from
    ``init`` (a tensor, or the whole stack)."""
    shape = ref.shape[1:] if ref.stacked else ref.shape
    shard = ref.shard_of(comm.rank) if ref.stacked else None
    if ref.stacked and shard is None:
        return
    data = torch.zeros(shape, dtype=getattr(torch, ref.dtype))
    if init is not None:
        data.copy_(init[shard] if ref.stacked else init)
    state.setdefault("resident", {})[ref.id] = data


def rank_free(comm: Any, ident: int, *, state: dict[str, Any]) -> None:
    """On each rank: drop a resident tensor."""
    state.setdefault("resident", {}).pop(ident, None)


def rank_read(comm: Any, ident: int, *, state: dict[str, Any]) -> torch.Tensor | None:
    """On each rank: its copy (or shard) of a resident tensor (None: a rank without a shard)."""
    data = state.get("resident", {}).get(ident)
    return None if data is None else data.clone()


def resident_arg(comm: Any, ref: ResidentRef, index: tuple[int, ...], state: dict[str, Any]) -> torch.Tensor:
    """The rank's tensor of a resident argument ``ref[index]`` (a view: a dispatch writes it in place)."""
    data = state.get("resident", {}).get(ref.id)
    if ref.stacked:
        mine = ref.shard_of(comm.rank)
        if not index:
            raise comm.error(f"a StackedDeviceTensor {list(ref.shape)} is passed whole: a dispatch on rank "
                             f"{comm.rank} takes the shard it holds"
                             + (f", w[{mine}]" if mine is not None else " (it holds none)"))
        if index[0] != mine:
            owner = ref.worker_ids[index[0]] if 0 <= index[0] < len(ref.worker_ids) else None
            raise comm.error(f"shard {index[0]} of a StackedDeviceTensor lives on rank {owner}, not on rank "
                             f"{comm.rank} where it is dispatched (alloc_stacked_tensor(worker_ids=) must match "
                             "the program's device= placement)")
        index = index[1:]
    if data is None:
        raise comm.error(f"resident tensor {ref.id} is not on rank {comm.rank} (freed, or from another worker)")
    return data[index] if index else data
