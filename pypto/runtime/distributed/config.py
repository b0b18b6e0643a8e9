"""``DistributedConfig``: how many ranks a multi-chip run has and how they are launched."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

import torch.multiprocessing as mp

from pypto.errors import ArgumentTypeError, InvalidArgumentError

_MAX_TIMEOUT_S = 1e9
"""Above any run's length (31 years), below what ``datetime.timedelta`` takes."""

TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
"""The environment ``torchrun`` sets in each worker; all present means "launched by torchrun"."""


@dataclass
class DistributedConfig:
    """The ranks of a run: one simulated chip per rank, one process per rank.

    ``device_ids`` (upstream's spelling) names the chip of each rank (rank ``r``
    writes its ``k``-th chip dispatch to ``dfx_outputs/rank{r}/d{k}/``); ``world_size`` alone means
    ``device_ids = range(world_size)``. ``timeout_s`` bounds every wait, receive and
    the whole launch: a rank that fails or hangs is reported, never waited on forever.
    ``start_method`` is torch.multiprocessing's: ``fork`` where the OS has it (a rank starts in
    well under a second: no re-import of torch), else ``spawn`` (the rank function must then be
    importable and the script guarded by ``if __name__ == "__main__"``).
    ``target`` is the chip description whose ``npu.link`` prices transfers.
    """

    device_ids: list[int] | None = None
    world_size: int | None = None
    timeout_s: float = 60.0
    start_method: str = field(default_factory=lambda: "fork" if "fork" in mp.get_all_start_methods() else "spawn")
    target: Any = "a2a3"
    output_dir: str | os.PathLike[str] | None = None
    """Where ``dfx_outputs/`` goes (none: no artefacts are written)."""
    num_sub_workers: int = 0
    """Upstream's SubWorker executors: a prepared worker runs its HOST callbacks on the largest of this and its
    programs' SubWorker counts (threads of the caller's process; :mod:`.worker`)."""
    runtime: str = "tensormap_and_ringbuffer"
    """Upstream's Simpler runtime flavour (recorded in ``distributed_meta.json``)."""
    aicpu_thread_num: int = 0
    """Upstream's AICPU threads (0: the architecture default; recorded)."""
    dispatch_timeout_s: float | None = None
    """Bounds one whole run: a :func:`.launch` (also a one-shot L3 call) or a dispatch of a prepared worker
    (:mod:`.pool`); a rank without a result by then is reported as hung, with its task, and ended (None: only
    the waits are bounded by ``timeout_s``)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.device_ids is None and self.world_size is None:
            raise ValueError("DistributedConfig needs device_ids=[...] or world_size=N")
        if self.world_size is not None and (isinstance(self.world_size, bool) or not isinstance(self.world_size, int)):
            raise ArgumentTypeError(f"DistributedConfig: world_size must be an int, got {self.world_size!r}")
        for name in ("timeout_s", "dispatch_timeout_s"):
            value = getattr(self, name)
            if value is None and name == "dispatch_timeout_s":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ArgumentTypeError(f"DistributedConfig: {name} must be a number of seconds, got {value!r}")
            if not (0 < value < _MAX_TIMEOUT_S):  # NaN fails too; timedelta takes no infinity
                raise InvalidArgumentError(
                    f"DistributedConfig: {name} must be positive and finite (seconds), got {value!r}"
                    + ("; None: no limit" if name == "dispatch_timeout_s" else "")
                )
        if self.device_ids is None:
            self.device_ids = list(range(int(self.world_size or 0)))
        self.device_ids = [int(d) for d in self.device_ids]
        if self.world_size is None:
            self.world_size = len(self.device_ids)
        if self.world_size != len(self.device_ids) or self.world_size < 1:
            raise ValueError(
                f"DistributedConfig: world_size={self.world_size} but device_ids={self.device_ids} "
                f"(expected one device id per rank, at least one rank)"
            )
        if len(set(self.device_ids)) != len(self.device_ids):
            raise ValueError(f"DistributedConfig: device_ids {self.device_ids} repeat a device")
        if self.start_method not in mp.get_all_start_methods():
            raise ValueError(f"DistributedConfig: start_method {self.start_method!r} is not one of "
                             f"{', '.join(mp.get_all_start_methods())}")
        if any(d < 0 for d in self.device_ids):
            raise ValueError(f"DistributedConfig: device_ids must be non-negative, got {self.device_ids}")
        if self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig: num_sub_workers must be non-negative, got {self.num_sub_workers}")
        if self.aicpu_thread_num < 0 or self.aicpu_thread_num == 1:
            raise ValueError("DistributedConfig: aicpu_thread_num must be 0 (the default) or at least 2, "
                             f"got {self.aicpu_thread_num}")


def under_torchrun(env: dict[str, str] | None = None) -> bool:
    """Whether this process is a worker that ``torchrun`` started (its rendezvous variables are set)."""
    env = os.environ if env is None else env
    return all(v in env for v in TORCHRUN_VARS)


def torchrun_rank(env: dict[str, str] | None = None) -> tuple[int, int]:
    """``(RANK, WORLD_SIZE)`` of a ``torchrun`` worker, its variables checked: a value that is not an integer,
    a rank outside the world or a port outside 1-65535 is an :class:`InvalidArgumentError` naming the variable
    (not ``invalid literal for int()``, or a connect timeout of a rank that can never join)."""
    env = os.environ if env is None else env
    values: dict[str, int] = {}
    for name in ("RANK", "WORLD_SIZE", "MASTER_PORT"):
        try:
            values[name] = int(env[name])
        except ValueError:
            raise InvalidArgumentError(f"torchrun environment: {name}={env[name]!r} is not an integer") from None
    rank, world, port = values["RANK"], values["WORLD_SIZE"], values["MASTER_PORT"]
    if world < 1 or not 0 <= rank < world:
        raise InvalidArgumentError(f"torchrun environment: RANK={rank} is not a rank of WORLD_SIZE={world} (0 to {world - 1})")
    if not 0 < port < 65536:
        raise InvalidArgumentError(f"torchrun environment: MASTER_PORT={port} is not a TCP port (1-65535)")
    if not env["MASTER_ADDR"].strip():
        raise InvalidArgumentError("torchrun environment: MASTER_ADDR is empty")
    return rank, world


def distributed_config_of(config: Any) -> DistributedConfig:
    """The :class:`DistributedConfig` of ``config``: itself, or a ``RunConfig``'s ``distributed_config``
    (whose ``target``, when set, prices the links)."""
    if isinstance(config, DistributedConfig):
        return config
    dc = getattr(config, "distributed_config", None)
    if not isinstance(dc, DistributedConfig):
        raise TypeError(
            f"a multi-chip run needs a DistributedConfig or RunConfig(distributed_config=DistributedConfig(...)), "
            f"got {type(config).__name__}" + ("" if dc is None else f" with distributed_config={type(dc).__name__}")
        )
    if getattr(config, "target", None) is not None:
        dc = replace(dc, target=config.target)
    return dc
