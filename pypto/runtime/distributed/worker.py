"""``DistributedWorker``: upstream's prepared L3 worker (``compiled.prepare()``, ``pypto.runtime.DistributedWorker``).

Setup happens once: the worker starts one persistent process per rank (:class:`~.pool.RankPool`), and
every dispatch (``rt(*args)``, ``rt.run(compiled, *args)``) runs on those same processes, so what a chip
holds survives from one dispatch to the next, even between different programs: resident tensors
(``rt.alloc_tensor``, ``rt.alloc_stacked_tensor``; :mod:`.resident`) and the loaded programs.

HOST ``SubWorker`` callbacks (``@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)``) run in this
process between the dispatches of a plan; an abstract one (body ``...``) must be bound with
``callbacks={name: fn}``, checked here, before any process starts. The programs are duck-typed (a
:class:`~pypto.driver.distributed.DistributedCompiledProgram`): ``distributed_config``,
``sub_worker_names()``, ``required_callbacks()`` and ``dispatch_on(worker, args, config)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .config import under_torchrun
from .pool import RankPool
from .resident import DistributedDeviceTensor, StackedDeviceTensor, rank_alloc, rank_free, rank_read


class DistributedRunHandle:
    """``rt.submit(...)``: here a dispatch runs to its end before ``submit`` returns (already done)."""

    def __init__(self, error: BaseException | None = None):
        self._error = error

    @property
    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> None:
        """Raise the dispatch's error, if it had one."""
        del timeout
        if self._error is not None:
            raise self._error

    wait = result


class DistributedWorker:
    """Dispatch one or several L3 programs on one set of persistent rank processes (module docstring)."""

    def __init__(self, compiled: Any, extra_compiled: Sequence[Any] = (), *, callbacks: dict[str, Callable] | None = None,
                 sub_worker_overrides: dict[str, Callable] | None = None, config: Any = None,
                 persistent: bool = False, reset_persistent_windows: bool | None = None,
                 startup_timeout_s: float | None = None):
        del config, reset_persistent_windows  # upstream's arena pre-warm: nothing to warm on the simulator
        programs = list(compiled) if isinstance(compiled, list | tuple) else [compiled, *extra_compiled]
        if not programs:
            raise ValueError("DistributedWorker needs at least one compiled program")
        if persistent:
            raise NotImplementedError("prepare(persistent=True): windows kept across dispatches are not "
                                      "supported on the simulated ranks (each dispatch starts them cleared)")
        self.programs = programs
        self.config = programs[0].distributed_config
        for p in programs[1:]:
            if list(p.distributed_config.device_ids) != list(self.config.device_ids):
                raise ValueError(f"{p!r} runs on devices {p.distributed_config.device_ids}, this worker on "
                                 f"{self.config.device_ids}: one worker's programs share its chips")
        self.callbacks = dict(sub_worker_overrides or {}) | dict(callbacks or {})
        known = set().union(*(p.sub_worker_names() for p in programs))
        unknown = sorted(set(self.callbacks) - known)
        if unknown:
            raise ValueError(f"callbacks {unknown}: no HOST SubWorker of that name (the programs have "
                             f"{sorted(known) or 'none'})")
        missing = sorted(set().union(*(p.required_callbacks() for p in programs)) - set(self.callbacks))
        if missing:
            raise ValueError(f"abstract SubWorker(s) {missing} have no implementation: bind them with "
                             f"prepare(callbacks={{{', '.join(repr(m) + ': fn' for m in missing)}}})")
        for name, fn in self.callbacks.items():
            if not callable(fn):
                raise ValueError(f"callbacks[{name!r}]: expected a callable, got {type(fn).__name__}")
        self.closed = False
        self.pool: RankPool | None = None if under_torchrun() else RankPool(self.config, startup_timeout_s)
        self._tensors: dict[int, DistributedDeviceTensor] = {}

    # ---- lifetime -------------------------------------------------------------------------------

    def __enter__(self) -> DistributedWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free every resident tensor and end the rank processes (idempotent)."""
        if self.closed:
            return
        self.closed = True
        for t in self._tensors.values():
            t.freed = True
        self._tensors.clear()
        if self.pool is not None:
            self.pool.close()

    def _live(self) -> RankPool:
        if self.closed:
            raise RuntimeError("this DistributedWorker is closed")
        if self.pool is None:
            raise NotImplementedError("resident tensors need the worker's persistent rank processes "
                                      "(not available under torchrun)")
        return self.pool

    @property
    def pids(self) -> list[int]:
        """The rank processes' ids: the same for every dispatch of this worker."""
        return self._live().pids

    # ---- dispatch -------------------------------------------------------------------------------

    def run(self, compiled: Any, *args: Any, config: Any = None) -> None:
        """Dispatch ``compiled`` (one of this worker's programs); blocks until every rank is done."""
        if self.closed:
            raise RuntimeError("this DistributedWorker is closed")
        if not any(compiled is p for p in self.programs):
            raise ValueError(f"{compiled!r} is not registered on this worker (pass it in prepare(extra_compiled=))")
        for a in args:
            if isinstance(a, DistributedDeviceTensor) and (a.freed or self._tensors.get(a.id) is not a):
                raise ValueError(f"{a!r} was {'freed' if a.freed else 'allocated by another worker'}: a resident "
                                 "tensor is valid on the worker that allocated it, until freed")
        if self.pool is None:
            compiled(*args, config=config)
        else:
            compiled.dispatch_on(self, list(args), config)

    def __call__(self, *args: Any, config: Any = None) -> None:
        if len(self.programs) > 1:
            raise TypeError("this worker has several programs: dispatch each with rt.run(compiled, *args)")
        self.run(self.programs[0], *args, config=config)

    def submit(self, compiled: Any, *args: Any, config: Any = None) -> DistributedRunHandle:
        """Upstream's bounded asynchronous dispatch; here it runs to its end first (a done handle)."""
        try:
            self.run(compiled, *args, config=config)
        except Exception as exc:  # noqa: BLE001 - kept for handle.result(), as upstream
            return DistributedRunHandle(exc)
        return DistributedRunHandle()

    # ---- resident tensors -----------------------------------------------------------------------

    def alloc_tensor(self, shape: Sequence[int], dtype: torch.dtype, *, init: Any = None) -> DistributedDeviceTensor:
        """A worker-resident tensor, one buffer on every rank (``init``: copied to each, once)."""
        t = DistributedDeviceTensor(self, tuple(int(d) for d in shape), dtype)
        if init is not None:
            init = torch.as_tensor(init).to(dtype).reshape(t.shape).contiguous()
        self._live().run(rank_alloc, t.ref, init)
        self._tensors[t.id] = t
        return t

    def alloc_stacked_tensor(self, host_w: torch.Tensor) -> StackedDeviceTensor:
        """Shard ``host_w`` along dim 0: shard ``i`` uploaded to rank ``i``."""
        world = int(self.config.world_size or 0)
        if host_w.dim() < 1 or host_w.shape[0] != world:
            raise ValueError(f"alloc_stacked_tensor: expected dim 0 of size {world} (one shard per rank), "
                             f"got shape {list(host_w.shape)}")
        t = StackedDeviceTensor(self, tuple(int(d) for d in host_w.shape), host_w.dtype)
        self._live().run(rank_alloc, t.ref, host_w.detach().contiguous())
        self._tensors[t.id] = t
        return t

    def free_tensor(self, tensor: DistributedDeviceTensor) -> None:
        """Release a resident tensor (on every rank)."""
        if self._tensors.pop(tensor.id, None) is None:
            raise ValueError(f"{tensor!r} is not a live tensor of this worker")
        tensor.freed = True
        self._live().run(rank_free, tensor.id)

    free_stacked_tensor = free_tensor

    def read_tensor(self, tensor: DistributedDeviceTensor, worker_id: int = 0) -> torch.Tensor:
        """A host copy of ``tensor`` as rank ``worker_id`` holds it (its shard when stacked)."""
        if self._tensors.get(tensor.id) is not tensor:
            raise ValueError(f"{tensor!r} is not a live tensor of this worker")
        return self._live().run(rank_read, tensor.id).values[worker_id]

    def copy_from(self, dst: torch.Tensor, src: DistributedDeviceTensor, nbytes: int | None = None, *,
                  worker_id: int = 0) -> None:
        """Copy rank ``worker_id``'s ``src`` into the host tensor ``dst`` (``nbytes``: a prefix)."""
        data = self.read_tensor(src, worker_id).reshape(-1).view(torch.uint8)
        out = dst.reshape(-1).view(torch.uint8)
        n = out.numel() if nbytes is None else int(nbytes)
        out[:n].copy_(data[:n])

    def copy_to(self, dst: DistributedDeviceTensor, src: torch.Tensor, nbytes: int | None = None, *,
                worker_id: int = 0) -> None:
        """Copy the host tensor ``src`` into rank ``worker_id``'s ``dst`` (the other ranks keep theirs)."""
        if self._tensors.get(dst.id) is not dst:
            raise ValueError(f"{dst!r} is not a live tensor of this worker")
        data = src.detach().contiguous().reshape(-1).view(torch.uint8)
        n = data.numel() if nbytes is None else int(nbytes)
        self._live().run(_rank_write, dst.id, data[:n].clone(), int(worker_id))

    def copy_stacked_from(self, stacked: StackedDeviceTensor, host_out: torch.Tensor) -> None:
        """Read every shard back into ``host_out`` (its dim 0: the ranks)."""
        if self._tensors.get(stacked.id) is not stacked:
            raise ValueError(f"{stacked!r} is not a live tensor of this worker")
        for r, shard in enumerate(self._live().run(rank_read, stacked.id).values):
            host_out[r].copy_(shard)

    def release_inherited_host_tensor_refs(self) -> None:
        """Upstream drops fork-inherited host tensor references; nothing is retained here."""


def _rank_write(comm: Any, ident: int, data: torch.Tensor, only: int, *, state: dict[str, Any]) -> None:
    if comm.rank == only:
        state["resident"][ident].reshape(-1).view(torch.uint8)[: data.numel()].copy_(data)
