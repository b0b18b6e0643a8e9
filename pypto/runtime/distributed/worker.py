"""``DistributedWorker``: upstream's prepared L3 worker (``compiled.prepare()``, ``pypto.runtime.DistributedWorker``).

Setup happens once: the worker starts one persistent process per rank (:class:`~.pool.RankPool`), and
every dispatch (``rt(*args)``, ``rt.run(compiled, *args)``) runs on those same processes, so what a chip
holds survives from one dispatch to the next, even between different programs: resident tensors
(``rt.alloc_tensor``, ``rt.alloc_stacked_tensor``; :mod:`.resident`) and the loaded programs.

``rt.submit`` returns at once (:mod:`.submit`): each dispatch runs on a driver thread of this process, at
most :data:`MAX_IN_FLIGHT` at a time; the rank processes serve the plan segments of the dispatches in flight
one at a time, in the order they were asked for (a submit's first segment in submit order).

HOST ``SubWorker`` callbacks (``@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)``) run in this
process between the segments of a plan, on a pool of ``num_sub_workers`` threads (upstream: the larger of
``DistributedConfig.num_sub_workers`` and the number of SubWorkers, over the worker's programs), so the
callbacks of dispatches in flight together may run at once; an abstract one (body ``...``) must be bound
with ``callbacks={name: fn}``, checked here, before any process starts. The programs are duck-typed (a
:class:`~pypto.driver.distributed.DistributedCompiledProgram`): ``distributed_config``,
``sub_worker_names()``, ``required_callbacks()`` and ``dispatch_on(worker, args, config)``.
"""

from __future__ import annotations

import math
import operator
import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import torch

from .. import simpler_compat as _wire  # host tensors become dispatch arguments here (looked up per call)
from ..worker import RegistrationHandle
from .config import under_torchrun
from .pool import RankPool
from .resident import DistributedDeviceTensor, StackedDeviceTensor, rank_alloc, rank_free, rank_read
from .submit import DistributedRunHandle, Turn
from .windows import release_windows, remove_window_files

MAX_IN_FLIGHT = 2
"""Submits in flight at once (upstream's two dispatch frames): a third ``submit`` waits for the oldest."""


class DistributedWorker:
    """Dispatch one or several L3 programs on one set of persistent rank processes (module docstring)."""

    def __init__(self, compiled: Any, extra_compiled: Sequence[Any] = (), *, callbacks: dict[str, Callable] | None = None,
                 sub_worker_overrides: dict[str, Callable] | None = None, config: Any = None,
                 persistent: bool = False, reset_persistent_windows: bool | None = None,
                 inherited_host_tensors: Sequence[torch.Tensor] | None = None,
                 startup_timeout_s: float | None = None):
        del config  # upstream's arena pre-warm: nothing to warm on the simulator
        programs = list(compiled) if isinstance(compiled, list | tuple) else [compiled, *extra_compiled]
        if not programs:
            raise ValueError("DistributedWorker needs at least one compiled program")
        if reset_persistent_windows and not persistent:
            raise ValueError("DistributedWorker: reset_persistent_windows=True requires persistent=True")
        if persistent and under_torchrun():
            raise NotImplementedError("prepare(persistent=True) keeps windows on the worker's own rank processes, "
                                      "which a torchrun launch does not have")
        self.persistent = bool(persistent)
        self.reset_persistent_windows = self.persistent if reset_persistent_windows is None else bool(reset_persistent_windows)
        self.window_allocations = 0
        """Window sets allocated on the ranks so far: one per dispatch with windows, or, when persistent, one
        per program (at its first dispatch)."""
        self._window_ids: dict[int, str] = {}
        self._token = secrets.token_hex(4)
        self.programs = programs
        self.config = programs[0].distributed_config
        for p in programs[1:]:
            if list(p.distributed_config.device_ids) != list(self.config.device_ids):
                raise ValueError(f"{p!r} runs on devices {p.distributed_config.device_ids}, this worker on "
                                 f"{self.config.device_ids}: one worker's programs share its chips")
        self.inherited_host_tensors = _inherited(inherited_host_tensors)
        self.callbacks = dict(sub_worker_overrides or {}) | dict(callbacks or {})
        known = set().union(*(p.sub_worker_names() for p in programs))
        unknown = sorted(set(self.callbacks) - known)
        if unknown:
            raise ValueError(f"callbacks names {unknown} are not sub-workers of the prepared program(s) (they have "
                             f"{sorted(known) or 'none'})")
        missing = sorted(set().union(*(p.required_callbacks() for p in programs)) - set(self.callbacks))
        if missing:
            raise ValueError(f"abstract SubWorker(s) {missing} have no implementation: bind them with "
                             f"prepare(callbacks={{{', '.join(repr(m) + ': fn' for m in missing)}}})")
        for name, fn in self.callbacks.items():
            if not callable(fn):
                raise ValueError(f"callbacks[{name!r}]: expected a callable, got {type(fn).__name__}")
        self.num_sub_workers = max([int(p.distributed_config.num_sub_workers) for p in programs]
                                   + [len(p.sub_worker_names()) for p in programs])
        """SubWorker executors (threads running the HOST callbacks), as upstream sizes its pool."""
        self._subs: ThreadPoolExecutor | None = None
        self._admit = threading.Condition()  # guards the dispatches in flight and the worker's bookkeeping
        self._in_flight: list[DistributedRunHandle] = []
        self._failed: list[DistributedRunHandle] = []
        self._next_dispatch = 1
        self._local = threading.local()  # a driver thread's reserved turn on the ranks
        self.closed = False
        self.pool: RankPool | None = None if under_torchrun() else RankPool(self.config, startup_timeout_s)
        self._tensors: dict[int, DistributedDeviceTensor] = {}

    # ---- lifetime -------------------------------------------------------------------------------

    def __enter__(self) -> DistributedWorker:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        unreported = self._close()
        if unreported is None:
            return
        if exc is None:
            unreported.result()
        elif unreported._error is not None:  # the body's own error goes on; the dispatch's is noted on it
            exc.add_note(f"(a dispatch of this DistributedWorker, whose handle nobody asked, also failed: "
                         f"{type(unreported._error).__name__}: {unreported._error})")

    def close(self) -> None:
        """Wait for the dispatches in flight (in submit order), free every resident tensor and end the rank
        processes (idempotent). Raises the first error of a dispatch whose handle nobody asked
        (``result`` / ``wait``), after everything is released (leaving a ``with`` block on an exception of its
        own: that exception, with a note naming the dispatch's)."""
        unreported = self._close()
        if unreported is not None:
            unreported.result()

    def _close(self) -> DistributedRunHandle | None:
        """:meth:`close`, returning the failed dispatch whose handle nobody asked (not raising it)."""
        with self._admit:
            if self.closed:
                return None
            self.closed = True
            in_flight = list(self._in_flight)
        for h in in_flight:
            h._ended()
        if self._subs is not None:
            self._subs.shutdown(wait=True)
        unreported = next((h for h in self._failed if not h.observed), None)
        self._failed.clear()
        for t in self._tensors.values():
            t.freed = True
        self._tensors.clear()
        if self.pool is not None:
            if self._window_ids and self.pool.closed is None:
                for ident in self._window_ids.values():
                    self.pool.run(release_windows, ident)
            self.pool.close()
        for ident in self._window_ids.values():
            remove_window_files(ident)  # a killed rank cannot remove its own
        return unreported

    def _require_open(self, op: str) -> None:
        if self.closed:
            raise RuntimeError(f"DistributedWorker.{op}() called after close()")

    def register(self, compiled: Any) -> RegistrationHandle:
        """A handle that dispatches ``compiled`` (one of this worker's programs) when called (upstream's
        ``rt.register``; the programs are set up when the worker is made, so this only packages ``run``)."""
        self._require_open("register")
        if not any(compiled is p for p in self.programs):
            raise ValueError("DistributedWorker.register(compiled) requires a program this worker was made with")
        return RegistrationHandle(self, getattr(compiled, "name", "l3"), compiled, target=compiled)

    @property
    def _owned_tensors(self) -> list[DistributedDeviceTensor]:
        """The live resident tensors (upstream's name; ``close`` frees them)."""
        return list(self._tensors.values())

    def _live(self) -> RankPool:
        if self.closed:
            raise RuntimeError("this DistributedWorker is closed")
        if self.pool is None:
            raise NotImplementedError("resident tensors need the worker's persistent rank processes "
                                      "(not available under torchrun)")
        return self.pool

    def window_persistence(self, compiled: Any, has_windows: bool) -> tuple[str, bool] | None:
        """For one dispatch of ``compiled``: its persistent windows' id and whether to reset them (None: not
        persistent, the dispatch makes its own); counts the allocation the dispatch makes."""
        if not has_windows:
            return None
        with self._admit:
            if not self.persistent:
                self.window_allocations += 1
                return None
            if id(compiled) not in self._window_ids:
                self._window_ids[id(compiled)] = f"{self._token}p{len(self._window_ids)}"
                self.window_allocations += 1
            return self._window_ids[id(compiled)], self.reset_persistent_windows

    @property
    def _w(self) -> Any:
        """Upstream's tests read ``worker._w._next_alloc_id`` (its runtime's allocation counter); here it is
        :attr:`window_allocations`."""
        return SimpleNamespace(_next_alloc_id=self.window_allocations)

    @property
    def pids(self) -> list[int]:
        """The rank processes' ids: the same for every dispatch of this worker."""
        return self._live().pids

    # ---- dispatch -------------------------------------------------------------------------------

    def run(self, compiled: Any, *args: Any, config: Any = None) -> None:
        """Dispatch ``compiled`` (one of this worker's programs); blocks until every rank is done
        (``submit(...).result()``)."""
        self._require_open("run")
        self.submit(compiled, *args, config=config).result()

    def __call__(self, *args: Any, config: Any = None) -> None:
        if len(self.programs) > 1:
            raise TypeError("rt(*args) is ambiguous on a multi-program DistributedWorker: dispatch each program "
                            "with rt.run(compiled, *args)")
        self.run(self.programs[0], *args, config=config)

    def submit(self, compiled: Any, *args: Any, config: Any = None) -> DistributedRunHandle:
        """Upstream's bounded asynchronous dispatch: returns a :class:`DistributedRunHandle` at once while the
        dispatch runs; a third submit while two are in flight first waits for the oldest. A wrong argument is
        raised here; what goes wrong in the run, by the handle. The dispatch's host tensors and resident
        tensors must not be changed or freed until it ends (``free_tensor`` waits for it)."""
        self._require_open("submit")
        if not any(compiled is p for p in self.programs):
            raise ValueError(f"{compiled!r} is not registered on this worker (pass it in prepare(extra_compiled=))")
        for a in args:
            if isinstance(a, DistributedDeviceTensor) and (a.freed or self._tensors.get(a.id) is not a):
                raise ValueError(f"{a!r} was {'freed' if a.freed else 'allocated by another worker'}: a resident "
                                 "tensor is valid on the worker that allocated it, until freed")
        args = tuple(_wire.make_tensor_arg(self, a) if isinstance(a, torch.Tensor) else a for a in args)
        if self.pool is None:  # torchrun: no processes of our own, each dispatch is a launch, run here
            try:
                compiled(*args, config=config)
            except Exception as exc:  # noqa: BLE001 - kept for handle.result(), as upstream
                return DistributedRunHandle.completed(exc)
            return DistributedRunHandle.completed()
        check = getattr(compiled, "_check_args", None)
        if check is not None:
            check(args)
        resident = frozenset(a.id for a in args if isinstance(a, DistributedDeviceTensor))
        with self._admit:
            # at most MAX_IN_FLIGHT: wait for the oldest, as upstream; and for all before a DFX dispatch (upstream
            # drains then too: the dispatches share dfx_outputs/)
            limit = 1 if config is not None and getattr(config, "dfx_enabled", False) else MAX_IN_FLIGHT
            while not self.closed and len(self._in_flight) >= limit:
                oldest = self._in_flight[0]
                self._admit.wait_for(lambda o=oldest: self.closed or o not in self._in_flight)
            self._require_open("submit")
            handle = DistributedRunHandle(self._next_dispatch, resident)
            self._next_dispatch += 1
            turn = self.pool.turns.reserve()  # the first segment reaches the ranks in submit order
            self._in_flight.append(handle)
        hold = bool(self.persistent and getattr(getattr(compiled, "plan", None), "windows", None))
        threading.Thread(target=self._drive, args=(handle, turn, hold, compiled, args, config), daemon=True,
                         name=f"pypto-dispatch{handle.dispatch_id}").start()
        return handle

    def _drive(self, handle: DistributedRunHandle, turn: Turn, hold: bool, compiled: Any, args: tuple[Any, ...],
               config: Any) -> None:
        """A dispatch's driver thread. ``hold``: the dispatch keeps its turn on the ranks to its end (its
        program's persistent windows are shared by its dispatches, so theirs must not interleave)."""
        error: BaseException | None = None
        self._local.turn, self._local.hold, self._local.driver = turn, hold, True
        try:
            compiled.dispatch_on(self, list(args), config)
        except BaseException as exc:  # noqa: BLE001 - the dispatch's outcome, for its handle
            error = exc
        finally:
            self._local.turn = None
            turn.release()
        with self._admit:
            self._in_flight.remove(handle)
            if error is not None:
                self._failed.append(handle)
            handle._finish(error)
            self._admit.notify_all()

    def rank_run(self, fn: Callable[..., Any], *args: Any, output_dir: Any = None) -> Any:
        """``fn`` on every rank process (:meth:`RankPool.run`); on a dispatch's driver thread its first call
        takes the turn the submit reserved (and every call, when the dispatch holds it)."""
        pool = self.pool
        if pool is None:
            raise NotImplementedError("resident tensors need the worker's persistent rank processes "
                                      "(not available under torchrun)")
        if self.closed and not getattr(self._local, "driver", False):  # a dispatch in flight finishes
            raise RuntimeError("this DistributedWorker is closed")
        turn: Turn | None = getattr(self._local, "turn", None)
        if turn is None:
            return pool.run(fn, *args, output_dir=output_dir)
        try:
            turn.acquire()
            return pool.run(fn, *args, output_dir=output_dir, turn=turn)
        finally:
            if not getattr(self._local, "hold", False):
                self._local.turn = None
                turn.release()

    def run_callback(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a HOST SubWorker callback on one of the ``num_sub_workers`` executors and wait for it (the
        callbacks of dispatches in flight together may run at once; one dispatch's run in its plan's order)."""
        with self._admit:
            if self._subs is None:
                self._subs = ThreadPoolExecutor(max(1, self.num_sub_workers), thread_name_prefix="pypto-subworker")
            subs = self._subs
        turn, hold = getattr(self._local, "turn", None), getattr(self._local, "hold", False)
        return subs.submit(self._in_callback, turn if hold else None, fn, args).result()

    def _in_callback(self, turn: Turn | None, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """A callback of a dispatch that holds its turn may use the worker (``read_tensor`` ...) on that turn."""
        self._local.turn, self._local.hold = turn, turn is not None
        try:
            return fn(*args)
        finally:
            self._local.turn, self._local.hold = None, False

    def _wait_for_users(self, tensor: DistributedDeviceTensor) -> None:
        """Wait for the dispatches in flight that use ``tensor`` (it stays valid until they end)."""
        with self._admit:
            users = [h for h in self._in_flight if tensor.id in h.resident_ids]
        for h in users:
            h._ended()

    # ---- resident tensors -----------------------------------------------------------------------

    def alloc_tensor(self, shape: Sequence[int], dtype: torch.dtype, *, init: Any = None) -> DistributedDeviceTensor:
        """A worker-resident tensor, one buffer on every rank (``init``: copied to each, once). A wrong shape,
        dtype or ``init`` is an error here, before the ranks allocate anything."""
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"alloc_tensor: dtype must be a torch.dtype (torch.float32 ...), got {dtype!r}")
        dims = _shape("alloc_tensor", shape)
        t = DistributedDeviceTensor(self, dims, dtype)
        if init is not None:
            init = torch.as_tensor(init).to(dtype)
            if init.numel() != math.prod(dims):
                raise ValueError(f"alloc_tensor: init has {init.numel()} elements {list(init.shape)}, the tensor "
                                 f"{list(dims)} has {math.prod(dims)}")
            init = init.reshape(dims).contiguous()
        self.rank_run(rank_alloc, t.ref, init)
        self._tensors[t.id] = t
        return t

    def alloc_stacked_tensor(self, host_w: torch.Tensor, *, worker_ids: Sequence[int] | None = None) -> StackedDeviceTensor:
        """Shard ``host_w`` along dim 0: shard ``i`` uploaded to rank ``worker_ids[i]`` (default ``range(B)``).
        ``worker_ids`` must match the program's ``device=`` placement of ``w[i]``; distinct ranks in range."""
        if not isinstance(host_w, torch.Tensor):
            raise TypeError(f"alloc_stacked_tensor(host=...) expects a torch.Tensor, got {type(host_w).__name__}")
        world = int(self.config.world_size or 0)
        if host_w.dim() < 2 or not 1 <= host_w.shape[0] <= world:
            raise ValueError(f"alloc_stacked_tensor: expected a [B, *tail] tensor with 1 <= B <= {world} (one shard "
                             f"per rank), got shape {list(host_w.shape)}")
        b = int(host_w.shape[0])
        ids = tuple(range(b)) if worker_ids is None else tuple(int(w) for w in worker_ids)
        if len(ids) != b:
            raise ValueError(f"alloc_stacked_tensor: worker_ids has {len(ids)} entries, the stack {b} shards")
        if len(set(ids)) != b:
            raise ValueError(f"alloc_stacked_tensor: worker_ids must be distinct (one shard per rank), got {list(ids)}")
        if any(not 0 <= w < world for w in ids):
            raise ValueError(f"alloc_stacked_tensor: worker_ids {list(ids)} out of range [0, {world}) (the world size)")
        t = StackedDeviceTensor(self, tuple(int(d) for d in host_w.shape), host_w.dtype, worker_ids=ids)
        self.rank_run(rank_alloc, t.ref, host_w.detach().contiguous())
        self._tensors[t.id] = t
        return t

    def free_tensor(self, tensor: DistributedDeviceTensor) -> None:
        """Release a resident tensor (on every rank)."""
        if self._tensors.get(tensor.id) is not tensor:
            raise ValueError(f"{tensor!r} is not a live tensor of this worker")
        self._wait_for_users(tensor)
        if self._tensors.pop(tensor.id, None) is None:
            raise ValueError(f"{tensor!r} is not a live tensor of this worker")
        tensor.freed = True
        self.rank_run(rank_free, tensor.id)

    free_stacked_tensor = free_tensor

    def read_tensor(self, tensor: DistributedDeviceTensor, worker_id: int = 0) -> torch.Tensor:
        """A host copy of ``tensor`` as rank ``worker_id`` holds it (its shard when stacked)."""
        if self._tensors.get(tensor.id) is not tensor:
            raise ValueError(f"{tensor!r} is not a live tensor of this worker")
        rank = self._holder(tensor, worker_id, "read_tensor")
        return self.rank_run(rank_read, tensor.id).values[rank]

    def _holder(self, tensor: DistributedDeviceTensor, worker_id: Any, op: str) -> int:
        """``worker_id`` as a rank that holds ``tensor`` (a copy, or its shard when stacked), checked here: a wrong
        one is a ``TypeError`` / ``ValueError`` naming it, never a copy to no rank or a failure on the ranks."""
        try:
            rank = operator.index(worker_id)
        except TypeError:
            raise TypeError(f"{op}: worker_id must be an int (a rank), got {type(worker_id).__name__}") from None
        world = int(self.config.world_size or 0)
        if isinstance(worker_id, bool) or not 0 <= rank < world:
            raise ValueError(f"{op}: worker_id {worker_id!r} out of range [0, {world}) (the world size)")
        if tensor.stacked and rank not in tensor.worker_ids:
            raise ValueError(f"{tensor!r} has no shard on rank {rank} (its worker_ids: {list(tensor.worker_ids)})")
        return rank

    @staticmethod
    def _copy_bytes(op: str, nbytes: Any, default: int, limits: dict[str, int]) -> int:
        """The bytes a copy moves: ``nbytes`` (None: ``default``), at most each of ``limits`` (what each side
        holds), else a ``ValueError`` naming the sizes."""
        n = default if nbytes is None else operator.index(nbytes)
        if n < 0:
            raise ValueError(f"{op}: nbytes must be >= 0, got {n}")
        for side, size in limits.items():
            if n > size:
                raise ValueError(f"{op}: copying {n} bytes, but {side} holds {size}")
        return n

    def copy_from(self, dst: torch.Tensor, src: DistributedDeviceTensor, nbytes: int | None = None, *,
                  worker_id: int = 0) -> None:
        """Copy rank ``worker_id``'s ``src`` into the host tensor ``dst`` (``nbytes``: a prefix)."""
        if self._tensors.get(src.id) is not src:
            raise ValueError(f"{src!r} is not a live tensor of this worker")
        if not isinstance(dst, torch.Tensor):
            raise TypeError(f"copy_from: dst must be a torch.Tensor, got {type(dst).__name__}")
        self._holder(src, worker_id, "copy_from")
        have = dst.numel() * dst.element_size()
        n = self._copy_bytes("copy_from", nbytes, have, {"the host tensor dst": have, f"{src!r}": _shard_bytes(src)})
        data = self.read_tensor(src, worker_id).reshape(-1).view(torch.uint8)
        if dst.is_contiguous():
            dst.reshape(-1).view(torch.uint8)[:n].copy_(data[:n])
            return
        flat = dst.contiguous()  # a strided dst: through a contiguous copy (reshape would write into a copy)
        flat.reshape(-1).view(torch.uint8)[:n].copy_(data[:n])
        dst.copy_(flat)

    def copy_to(self, dst: DistributedDeviceTensor, src: torch.Tensor, nbytes: int | None = None, *,
                worker_id: int = 0) -> None:
        """Copy the host tensor ``src`` into rank ``worker_id``'s ``dst`` (the other ranks keep theirs)."""
        if self._tensors.get(dst.id) is not dst:
            raise ValueError(f"{dst!r} is not a live tensor of this worker")
        if not isinstance(src, torch.Tensor):
            raise TypeError(f"copy_to: src must be a torch.Tensor, got {type(src).__name__}")
        rank = self._holder(dst, worker_id, "copy_to")
        data = src.detach().contiguous().reshape(-1).view(torch.uint8)
        n = self._copy_bytes("copy_to", nbytes, data.numel(), {"the host tensor src": data.numel(),
                                                               f"{dst!r}": _shard_bytes(dst)})
        self.rank_run(_rank_write, dst.id, data[:n].clone(), rank)

    def copy_stacked_from(self, stacked: StackedDeviceTensor, host_out: torch.Tensor) -> None:
        """Read every shard back into ``host_out`` (its dim 0: the ranks)."""
        if self._tensors.get(stacked.id) is not stacked:
            raise ValueError(f"{stacked!r} is not a live tensor of this worker")
        if tuple(host_out.shape) != stacked.full_shape or host_out.dtype != stacked.dtype:
            raise ValueError(f"copy_stacked_from: the host tensor is {list(host_out.shape)} {host_out.dtype}, the "
                             f"stack {list(stacked.full_shape)} {stacked.dtype}")
        values = self.rank_run(rank_read, stacked.id).values
        for i, r in enumerate(stacked.worker_ids):
            host_out[i].copy_(values[r])

    def release_inherited_host_tensor_refs(self) -> None:
        """Drop the ``inherited_host_tensors`` references (upstream: fork-inherited spans named in place; here
        every upload is copied to the ranks, so the tensors are only kept alive until this call)."""
        if self.closed:
            raise RuntimeError("this DistributedWorker is closed")
        self.inherited_host_tensors = ()


def _shape(op: str, shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints (an int: one dimension), else the error naming it."""
    try:
        dims = (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{op}: shape {list(dims)} has a negative dimension")
    return dims


def _shard_bytes(tensor: DistributedDeviceTensor) -> int:
    """The bytes one rank holds of ``tensor`` (its shard when stacked)."""
    shape = tensor.shape[1:] if tensor.stacked else tensor.shape
    return math.prod(shape) * torch.empty((), dtype=tensor.dtype).element_size()


def _inherited(tensors: Sequence[torch.Tensor] | None) -> tuple[torch.Tensor, ...]:
    """Upstream's ``inherited_host_tensors=``: contiguous CPU torch tensors (checked; kept as references)."""
    out = tuple(tensors) if tensors is not None else ()
    for i, t in enumerate(out):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"DistributedWorker inherited_host_tensors[{i}]: expected a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.device.type != "cpu" or not t.is_contiguous():
            raise ValueError(f"DistributedWorker inherited_host_tensors[{i}]: expected a contiguous CPU tensor, got "
                             f"device={t.device} shape={list(t.shape)}{'' if t.is_contiguous() else ' (not contiguous)'}")
    return out


def _rank_write(comm: Any, ident: int, data: torch.Tensor, only: int, *, state: dict[str, Any]) -> None:
    if comm.rank == only:
        state["resident"][ident].reshape(-1).view(torch.uint8)[: data.numel()].copy_(data)
