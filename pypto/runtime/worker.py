"""``ChipWorker`` and ``DeviceTensor``: device memory that stays resident across launches.

::

    worker = ChipWorker()                                  # platform "a2a3sim"
    x = worker.alloc_tensor((128, 128), torch.float32, init=torch.randn(128, 128))
    y = worker.alloc_tensor((128, 128), torch.float32)     # zero-filled
    worker.register(compiled, "scale")                     # lowered and its kernels built once
    worker.run("scale", x, y)                              # no host copies: y is written where it lives
    worker.run("scale", y, x)                              # y's data from the last launch, in place
    host = y.to_torch()                                    # the one copy back
    worker.free_tensor(x)

A :class:`DeviceTensor` owns a numpy array in the simulated device memory;
``run`` hands that array to the kernels directly (no copy per launch, see
:attr:`~pypto.runtime.run.RunResult.host_copy_bytes`), whereas torch
tensors are copied in and (Out/InOut) back on every launch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

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


class ChipWorker:
    """One simulated chip: device tensors, registered programs and launches."""

    def __init__(self, platform: str = "a2a3sim", device_id: int = 0, *, target: Any = None):
        self.config = RunConfig(platform=platform, device_id=device_id, target=target)
        self.tensors: list[DeviceTensor] = []
        self.programs: dict[str, Any] = {}
        self.launches: list[RunResult] = []

    # ---- memory ------------------------------------------------------------------

    def alloc_tensor(self, shape: Sequence[int], dtype: Any = None, init: Any = None) -> DeviceTensor:
        """A new device tensor: zero-filled, or ``init`` (a tensor/array of that
        shape, or a scalar) copied in once."""
        import torch

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

    def register(self, program: Any, name: str | None = None) -> str:
        """Keep a CompiledProgram / Program ready to launch (lowered and its
        kernels built once); returns the name to :meth:`run` it by."""
        key = (
            name
            or getattr(program, "name", None)
            or str(getattr(program, "output_dir", f"program{len(self.programs)}"))
        )
        if not isinstance(program, Runnable):
            program = prepare(program, config=self.config)  # lowered now, once (a Runnable keeps its spec)
        self.programs[key] = program
        return key

    def run(self, program: Any, *args: Any, config: RunConfig | None = None) -> RunResult:
        """Launch a registered program (by name) or any program :func:`pypto.runtime.run` takes."""
        target = self.programs[program] if isinstance(program, str) else program
        cfg = config if config is not None else self.config
        result = run_program(target, *args, config=cfg)
        self.launches.append(result)
        return result
