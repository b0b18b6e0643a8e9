"""``ChipWorker`` and ``DeviceTensor``: device memory that stays resident across launches.

::

    worker = ChipWorker()                                  # or ChipWorker(config=RunConfig(platform=...))
    x = worker.alloc_tensor((128, 128), torch.float32, init=torch.randn(128, 128))
    y = worker.alloc_tensor((128, 128), torch.float32)     # zero-filled
    handle = worker.register(compiled, "scale")            # lowered and its kernels built once
    worker.run(handle, x, y)                               # no host copies: y is written where it lives
    handle(y, x)                                           # y's data from the last launch, in place
    host = y.to_torch()                                    # the one copy back
    worker.free_tensor(x)
    worker.close()                                         # or ``with ChipWorker(...) as worker:``

Upstream's constructor and lifecycle are accepted (``config=``, ``level=2``,
``runtime=``, ``enable_sdma=``, ``auto_init=``, ``init``/``close``, the ``with``
block, :class:`RegistrationHandle`); ``run`` returns the
:class:`~pypto.runtime.run.RunResult` (upstream: the outputs), and
``worker.launches`` keeps every launch's result.

A :class:`DeviceTensor` owns a numpy array in the simulated device memory;
``run`` hands that array to the kernels directly (no copy per launch, see
:attr:`~pypto.runtime.run.RunResult.host_copy_bytes`), whereas torch
tensors are copied in and (Out/InOut) back on every launch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import fast_launch
from .config import RunConfig
from .run import RunResult, prepare
from .run import run as run_program
from .runnable import Runnable
from .tensors import DeviceTensor, host_to_numpy


def _torch_dtype(dtype: Any) -> Any:
    import torch

    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        return getattr(torch, dtype.removeprefix("torch."))
    return torch.from_numpy(np.zeros(0, dtype=dtype)).dtype


class RegistrationHandle:
    """A program registered on a :class:`ChipWorker`: call it to launch (upstream's handle)."""

    __test__ = False

    def __init__(self, worker: Any, name: str, compiled: Any, target: Any = None):
        self.worker = worker
        self.name = name
        self.compiled = compiled
        self.target = name if target is None else target
        """What ``worker.run`` dispatches: the registered name (a ChipWorker's), or the compiled program (an L3
        ``DistributedWorker``'s)."""
        self._closed = False

    @property
    def closed(self) -> bool:
        """True after :meth:`unregister` or the worker's ``close``."""
        return self._closed or self.worker.closed

    def __call__(self, *args: Any, config: RunConfig | None = None) -> RunResult:
        if self.closed:
            raise RuntimeError(
                f"the registration {self.name!r} was released (unregister() or its ChipWorker was closed); "
                "register the program again"
            )
        return self.worker.run(self.target, *args, config=config)

    def unregister(self) -> None:
        """Mark this handle closed (the worker keeps the program until ``close``)."""
        self._closed = True

    def __enter__(self) -> RegistrationHandle:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.unregister()

    def __repr__(self) -> str:
        return f"RegistrationHandle({self.name!r})"


class ChipWorker:
    """One simulated chip: device tensors, registered programs and launches."""

    def __init__(
        self,
        config: RunConfig | str | None = None,
        device_id: int = 0,
        *,
        target: Any = None,
        platform: str | None = None,
        level: int = 2,
        runtime: str | None = None,
        enable_sdma: bool = False,
        auto_init: bool | None = None,
    ):
        if level != 2:
            raise ValueError(f"ChipWorker only supports level=2 (one chip); got level={level}")
        if isinstance(config, RunConfig):
            if platform is not None or target is not None:
                raise ValueError("ChipWorker: give either config= or platform=/target=, not both")
            self.config = config
        else:
            name = platform if platform is not None else (config if config is not None else "a2a3sim")
            self.config = RunConfig(platform=name, device_id=device_id, target=target)
        self.runtime = runtime
        self.enable_sdma = enable_sdma
        self.tensors: list[DeviceTensor] = []
        self.programs: dict[str, Any] = {}
        self.launches: list[RunResult] = []
        self._loaded: dict[int, str] = {}
        self._keep: list[Any] = []
        self._replayable: dict[str, fast_launch.Launch] = {}
        """Per registered name, its last launch when it was a replay (:mod:`.fast_launch`)."""
        self.closed = False
        del auto_init  # the simulated chip needs no start-up

    @property
    def platform(self) -> str:
        """The platform launches run on."""
        return self.config.platform

    # ---- lifecycle ---------------------------------------------------------------

    def init(self) -> None:
        """Start (again) after :meth:`close`; a no-op on a live worker."""
        self.closed = False

    def close(self) -> None:
        """Free every device tensor and release every registration. Idempotent."""
        for t in list(self.tensors):
            self.free_tensor(t)
        self.programs.clear()
        self._loaded.clear()
        self._keep.clear()
        self._replayable.clear()
        self.closed = True

    def __enter__(self) -> ChipWorker:
        self.init()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise RuntimeError(f"ChipWorker.{what}: the worker is closed; call init() or use a new ChipWorker")

    # ---- memory ------------------------------------------------------------------

    def alloc_tensor(self, shape: Sequence[int], dtype: Any = None, init: Any = None) -> DeviceTensor:
        """A new device tensor: zero-filled, or ``init`` (a tensor/array of that
        shape, or a scalar) copied in once."""
        import torch

        self._check_open("alloc_tensor")
        tdtype = _torch_dtype(dtype)
        shape_t = tuple(int(d) for d in shape)
        storage = host_to_numpy(torch.zeros(shape_t, dtype=tdtype))
        t = DeviceTensor(self, shape_t, tdtype, storage)
        if init is not None:
            if np.isscalar(init):
                t.copy_from(torch.full(shape_t, init, dtype=tdtype))
            else:
                t.copy_from(init.to(tdtype) if hasattr(init, "to") else init)
        self.tensors.append(t)
        return t

    def free_tensor(self, tensor: DeviceTensor) -> None:
        """Release a device tensor (using it afterwards raises)."""
        if tensor.worker is not self:
            raise ValueError("the tensor belongs to another ChipWorker")
        tensor._array = None
        self.tensors = [t for t in self.tensors if t is not tensor]

    @property
    def allocated_bytes(self) -> int:
        """Bytes held by live device tensors."""
        return sum(t.nbytes for t in self.tensors)

    # ---- programs ----------------------------------------------------------------

    def register(self, program: Any, name: str | None = None) -> RegistrationHandle:
        """Keep a CompiledProgram / Program ready to launch (lowered and its
        kernels built once); returns a handle to call (or to :meth:`run` by).
        Registering the same program again is a cache hit (an alias of the first handle's name)."""
        self._check_open("register")
        original = program
        if name is None and id(original) in self._loaded:
            return RegistrationHandle(self, self._loaded[id(original)], original)
        key = name or getattr(program, "name", None) or str(getattr(program, "output_dir", "program"))
        if name is None:
            base, n = key, 1
            while key in self.programs:
                key, n = f"{base}#{n}", n + 1
        if not isinstance(program, Runnable):
            program = prepare(program, config=self.config)  # lowered now, once (a Runnable keeps its spec)
        self.programs[key] = program
        self._loaded[id(original)] = key
        self._keep.append(original)  # ids stay unique while the worker holds them
        return RegistrationHandle(self, key, original)

    @property
    def aicpu_dlopen_count(self) -> int:
        """Distinct programs loaded by :meth:`register` (upstream's counter of AICPU dlopens: a repeated
        ``register`` of one program, or launches of it, do not add to it)."""
        return len(self._loaded)

    def run(self, program: Any, *args: Any, config: RunConfig | None = None) -> RunResult:
        """Launch a registered program (by handle or name) or any program :func:`pypto.runtime.run` takes."""
        self._check_open("run")
        if isinstance(program, RegistrationHandle):
            program = program.name
        if isinstance(program, str) and program not in self.programs:
            raise KeyError(f"no program registered as {program!r} on this ChipWorker")
        target = self.programs[program] if isinstance(program, str) else program
        cfg = config if config is not None else self.config
        if isinstance(program, str):  # a registered program: straight to its plan when nothing changed
            result = fast_launch.launch(self._replayable, program, target, args, cfg)
        else:
            result = run_program(target, *args, config=cfg)
        self.launches.append(result)
        return result
