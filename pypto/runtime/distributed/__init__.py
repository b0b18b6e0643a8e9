"""Multi-chip runs: one simulated chip per rank, ranks talking over ``torch.distributed`` (docs/distributed.md).

- :class:`DistributedConfig` -- ranks (``device_ids`` / ``world_size``), timeout, launch;
- :func:`launch` -- run ``fn(comm, ...)`` on every rank (local processes, or under ``torchrun``);
- :class:`RankComm` -- a rank's clock, transfers, signals (notify / wait), window put / get, barrier;
- :func:`run_on_chip` -- run a single-chip program on the rank's simulated chip, on its clock;
- :mod:`.collectives` -- allreduce (mesh, ring), broadcast, allgather, reducescatter, alltoall;
- :mod:`.trace` -- ``dfx_outputs/rank{r}/d{k}/`` events and the merged cross-rank Chrome trace.
"""

from __future__ import annotations

from pypto.dialects.distributed_enums import AllreduceMode, NotifyOp, ReduceOp, WaitCmp

from .chip import run_on_chip
from .collectives import allgather, allreduce, alltoall, analytic_cycles, broadcast, reducescatter
from .comm import DistributedRankError, RankComm
from .config import DistributedConfig, under_torchrun
from .launch import DistributedRun, DistributedRunError, RankResult, launch

__all__ = [
    "AllreduceMode", "DistributedConfig", "DistributedRankError", "DistributedRun", "DistributedRunError",
    "NotifyOp", "RankComm", "RankResult", "ReduceOp", "WaitCmp", "allgather", "allreduce", "alltoall",
    "analytic_cycles", "broadcast", "launch", "reducescatter", "run_on_chip", "under_torchrun",
]  # fmt: skip
