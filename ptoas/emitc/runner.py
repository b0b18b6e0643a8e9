"""Call a kernel built by :func:`pypto.ptoas.build.build_shared` on host memory (ctypes).

Arguments go in int64 slots, as the generated wrappers expect: a torch tensor (or numpy array)
by its data address (it must be contiguous), an int as itself, a float as its fp32 bit pattern
(:class:`F16` / :class:`F64` for other widths). A failure inside the kernel (bad TASSIGN, a
wait_flag without its set_flag, ...) raises :class:`KernelRuntimeError` with the header's message.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .function import CALL_PREFIX


class KernelRuntimeError(RuntimeError):
    """The kernel stopped on a check of pto_cpu.hpp."""


@dataclass(frozen=True)
class F16:
    """A half-precision scalar argument."""

    value: float


@dataclass(frozen=True)
class F64:
    """A double-precision scalar argument."""

    value: float


def _slot(value: Any) -> int:
    if hasattr(value, "data_ptr"):
        if not value.is_contiguous():
            raise ValueError("kernel tensor arguments must be contiguous")
        return int(value.data_ptr())
    if hasattr(value, "__array_interface__") and hasattr(value, "flags"):
        if not value.flags.c_contiguous:
            raise ValueError("kernel array arguments must be C-contiguous")
        return int(value.__array_interface__["data"][0])  # the address (``.ctypes.data`` is several times slower)
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, F16):
        return struct.unpack("<H", struct.pack("<e", value.value))[0]
    if isinstance(value, F64):
        return struct.unpack("<q", struct.pack("<d", value.value))[0]
    if isinstance(value, float):
        return struct.unpack("<I", struct.pack("<f", value))[0]
    raise TypeError(f"cannot pass {type(value).__name__} to a kernel")


def pack_args(*values: Any) -> ctypes.Array[ctypes.c_int64]:
    """The int64 argument array of these values."""
    return (ctypes.c_int64 * max(1, len(values)))(*(_slot(v) for v in values))


class KernelLibrary:
    """A loaded kernel shared library."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.lib = ctypes.CDLL(str(self.path))
        self.lib.pto_cpu_last_error.restype = ctypes.c_char_p
        self.lib.pto_cpu_set_block.argtypes = [ctypes.c_int64, ctypes.c_int64]

    def last_error(self) -> str:
        """Message of the last failed launch on this thread ('' after success)."""
        return (self.lib.pto_cpu_last_error() or b"").decode()

    def set_block(self, idx: int, num: int) -> None:
        """Block identity for ``get_block_idx()``/``get_block_num()`` in later calls."""
        self.lib.pto_cpu_set_block(idx, num)

    def call(self, func_name: str, *args: Any) -> None:
        """Run ``ptoas_call_<func_name>`` (the unit's wrapper); raise KernelRuntimeError on failure."""
        fn = getattr(self.lib, CALL_PREFIX + func_name)
        fn.restype = ctypes.c_int
        if fn(pack_args(*args)) != 0:
            raise KernelRuntimeError(self.last_error())

    def kernel_entry(self, *args: Any) -> None:
        """Run ``kernel_entry(args)`` (the kernels/ wrapper); raise KernelRuntimeError on failure."""
        fn = self.lib.kernel_entry
        fn.restype = None
        fn(pack_args(*args))
        message = self.last_error()
        if message:
            raise KernelRuntimeError(message)
