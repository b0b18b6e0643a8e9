"""Tensors between the host and the simulated device memory: the host <-> numpy copies every run makes,
and :class:`DeviceTensor`, a tensor resident in a :class:`~pypto.runtime.worker.ChipWorker`'s memory."""

from __future__ import annotations

from typing import Any

import numpy as np


def is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def host_to_numpy(x: Any) -> np.ndarray:
    """A contiguous numpy copy of a torch tensor or numpy array (bf16 as uint16 bits)."""
    if is_torch(x):
        import torch

        t = x.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16).copy()
        return t.numpy().copy()
    return np.ascontiguousarray(np.array(x, copy=True))


def numpy_to_host(arr: np.ndarray, dest: Any) -> None:
    """Copy a device array back into ``dest`` (a torch tensor or numpy array) in place."""
    if is_torch(dest):
        import torch

        if dest.dtype == torch.bfloat16:
            src = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
        else:
            src = torch.from_numpy(arr)
        with torch.no_grad():
            dest.copy_(src.reshape(dest.shape))
    else:
        np.copyto(
            dest, arr.reshape(dest.shape).view(dest.dtype) if arr.dtype != dest.dtype else arr.reshape(dest.shape)
        )


def device_to_torch(arr: np.ndarray, element_type: Any = None) -> Any:
    """A torch tensor sharing ``arr`` (bf16 when ``element_type`` is bf16)."""
    import torch

    from pypto.dialects.dtypes import dtype_name

    if element_type is not None and dtype_name(element_type) == "BF16":
        return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(arr)


class DeviceTensor:
    """A tensor resident in a :class:`ChipWorker`'s simulated device memory (``worker``: the one that owns it)."""

    def __init__(self, worker: object, shape: tuple[int, ...], dtype: Any, array: np.ndarray):
        self.worker = worker
        self.shape = shape
        self.dtype = dtype
        self._array: np.ndarray | None = array

    @property
    def freed(self) -> bool:
        """True after :meth:`ChipWorker.free_tensor`."""
        return self._array is None

    @property
    def array(self) -> np.ndarray:
        """The device storage (bf16 as uint16 bits); kernels read and write it in place."""
        if self._array is None:
            raise RuntimeError("use of a freed DeviceTensor")
        return self._array

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return int(self.array.nbytes)

    def to_torch(self) -> Any:
        """A host copy (device -> host)."""
        import torch

        out = torch.empty(self.shape, dtype=self.dtype)
        numpy_to_host(self.array, out)
        return out

    def numpy(self) -> np.ndarray:
        """The device storage itself (no copy)."""
        return self.array

    def copy_from(self, host: Any) -> None:
        """Overwrite the contents from a host tensor/array (host -> device)."""
        src = host_to_numpy(host) if not np.isscalar(host) else np.full(self.shape, host, dtype=self.array.dtype)
        if src.shape != self.array.shape:
            raise ValueError(f"cannot copy a {tuple(src.shape)} tensor into a {self.shape} DeviceTensor")
        np.copyto(self.array, src.view(self.array.dtype) if src.dtype.itemsize == self.array.dtype.itemsize else src)

    def __repr__(self) -> str:
        state = "freed" if self.freed else f"{self.nbytes} B"
        return f"DeviceTensor(shape={self.shape}, dtype={self.dtype}, {state})"
