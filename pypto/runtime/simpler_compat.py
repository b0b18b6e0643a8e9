"""The part of the Simpler runtime's Python API (hw-native-sys/simpler) that upstream PyPTO's programs call
directly, on the simulated chips: ``simpler.task_interface`` (``CallConfig``, ``TaskArgs``,
``TensorArgType``), ``simpler.worker.Worker`` and ``simpler_setup.torch_interop.make_tensor_arg``.

Upstream uses Simpler as its device runtime; a hand-written L3 (its ``test_l3_manual``) drives a level-3
``Worker`` itself: ``register`` a ``ChipCallable`` (:func:`pypto.runtime.device_runner.compile_and_assemble`)
and Python SubWorker callables, ``init()``, then ``run(orch_fn)`` where ``orch_fn(orch, args, config)``
queues ``orch.submit_next_level(cid, task_args, call_config, worker=k)`` (chip ``k``) and
``orch.submit_sub(cid, task_args)``. Here each submit runs when it is queued, in submission order (an order
Simpler's dependency inference also respects), the chip task on its own simulated chip, the SubWorker in this
process with the tensors themselves as its arguments (``_tensor_from_continuous`` returns them).

:func:`make_tensor_arg` is the one place a host tensor becomes a dispatch argument: a prepared
:class:`~pypto.runtime.DistributedWorker` passes every host tensor of a dispatch through it (looked up on this
module at call time, as upstream's dispatch calls ``torch_interop.make_tensor_arg``), so a test that records
what it is handed sees what the dispatch really sent (resident tensors are not host tensors).

This is not a ``simpler`` package: ``pypto.tools.upstream_st`` maps ``simpler.task_interface``,
``simpler.worker`` and ``simpler_setup.torch_interop`` to this module on its own ``sys.path`` for the tests
it runs, and nowhere else.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch


class TensorArgType(enum.IntEnum):
    """How a chip task uses a tensor argument (Simpler's names)."""

    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4


@dataclass
class CallConfig:
    """Per-dispatch runtime settings of a chip task (``aicpu_thread_num``; others are kept, not used)."""

    aicpu_thread_num: int | None = None
    block_dim: int | None = None


@dataclass
class TaskArgs:
    """A task's arguments in order: tensors with their :class:`TensorArgType`, and scalars."""

    items: list[tuple[Any, TensorArgType | None]] = field(default_factory=list)

    def add_tensor(self, tensor: Any, arg_type: TensorArgType = TensorArgType.INPUT) -> None:
        self.items.append((tensor, TensorArgType(arg_type)))

    def add_scalar(self, value: Any) -> None:
        self.items.append((value, None))

    def values(self) -> list[Any]:
        return [v for v, _ in self.items]


def make_tensor_arg(worker: Any, tensor: Any) -> torch.Tensor:
    """A host tensor as a dispatch argument of ``worker``: the tensor itself (zero-copy; a chip's writes reach
    it). It must be a contiguous CPU torch tensor, as upstream requires."""
    del worker
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"make_tensor_arg: expected a torch.Tensor, got {type(tensor).__name__}")
    if tensor.device.type != "cpu" or not tensor.is_contiguous():
        raise ValueError(f"make_tensor_arg: expected a contiguous CPU tensor, got device={tensor.device} "
                         f"shape={list(tensor.shape)}")
    return tensor


class Orchestrator:
    """What ``Worker.run`` hands ``orch_fn``: queue chip tasks and SubWorker calls."""

    def __init__(self, worker: Worker):
        self._worker = worker

    def submit_next_level(self, cid: int, args: TaskArgs, config: CallConfig | None = None, *,
                          worker: int | None = None) -> None:
        """Run registered chip callable ``cid`` on chip ``worker`` (an index into ``device_ids``; required)."""
        w = self._worker
        target = w._callable(cid, "submit_next_level")
        if worker is None or not 0 <= int(worker) < len(w.device_ids):
            raise ValueError(f"submit_next_level: worker= must name a chip 0..{len(w.device_ids) - 1}, got {worker!r}")
        from .config import RunConfig

        threads = config.aicpu_thread_num if config is not None else None
        run_config = RunConfig(platform=w.platform, device_id=int(w.device_ids[int(worker)]), aicpu_thread_num=threads)
        target(*args.values(), config=run_config)

    def submit_sub(self, cid: int, args: TaskArgs) -> None:
        """Call registered SubWorker ``cid`` with the task's arguments (a list)."""
        self._worker._callable(cid, "submit_sub")(args.values())


class Worker:
    """Simpler's ``Worker`` at level 3: chips ``device_ids`` and SubWorkers driven by a Python ``orch_fn``."""

    def __init__(self, level: int = 3, device_ids: Any = (0,), num_sub_workers: int = 0, platform: str = "a2a3sim",
                 runtime: str | None = None, chip_bootstrap_configs: Any = None, **_: Any):
        if level != 3:
            raise ValueError(f"Worker: only level=3 is provided here, got level={level}")
        self.device_ids = [int(d) for d in device_ids]
        if not self.device_ids:
            raise ValueError("Worker: device_ids must name at least one chip")
        self.num_sub_workers, self.platform, self.runtime = int(num_sub_workers), platform, runtime
        del chip_bootstrap_configs
        self._registry: list[Any] = []
        self._state = "new"

    def register(self, target: Any) -> int:
        """Register a chip callable (from ``compile_and_assemble``) or a Python SubWorker; its id."""
        if self._state != "new":
            raise RuntimeError("Worker.register(): register everything before init()")
        if not callable(target):
            raise TypeError(f"Worker.register(): expected a ChipCallable or a Python callable, got {type(target).__name__}")
        self._registry.append(target)
        return len(self._registry) - 1

    def init(self) -> None:
        if self._state != "new":
            raise RuntimeError(f"Worker.init(): the worker is {self._state}")
        self._state = "ready"

    def _callable(self, cid: int, what: str) -> Callable[..., Any]:
        if self._state != "ready":
            raise RuntimeError(f"{what}: the worker is {self._state} (call init() first)")
        if not 0 <= int(cid) < len(self._registry):
            raise ValueError(f"{what}: no registered callable {cid}")
        return self._registry[int(cid)]

    def run(self, orch_fn: Callable[..., Any], args: Any = None, config: Any = None) -> None:
        """Call ``orch_fn(orchestrator, args, config)``; every task it submits has run when this returns."""
        if self._state != "ready":
            raise RuntimeError(f"Worker.run(): the worker is {self._state} (call init() first)")
        orch_fn(Orchestrator(self), args, config)

    def close(self) -> None:
        self._state = "closed"
