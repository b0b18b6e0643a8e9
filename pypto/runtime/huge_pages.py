"""Byte arrays on transparent huge pages, for buffers a replayed run touches right after other work.

A replayed ``"cpp"`` run (:mod:`.cpp_plan`) zero-fills its ``pl.create_tensor`` buffers and runs its
kernels on them right after the process did other work (an interpreter run, Python), which left neither
their cache lines nor their page-table entries in the CPU. On 4 KiB pages every page costs a TLB walk (on
a VM a nested one); :func:`huge_page_bytes` gives a zeroed uint8 array that starts on a 2 MiB boundary and
is advised ``MADV_HUGEPAGE``, so the kernel may back it with 2 MiB pages (one TLB entry each). The advice
is best effort: without transparent huge pages (not Linux, THP ``never``) the array is ordinary memory.
"""

from __future__ import annotations

import ctypes
import functools
import sys

import numpy as np

HUGE_PAGE = 2 << 20
"""The x86-64 / aarch64 (4 KiB granule) transparent huge page size."""
_MADV_HUGEPAGE = 14


@functools.cache
def _madvise() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def huge_page_bytes(nbytes: int) -> np.ndarray:
    """A zeroed uint8 array of ``nbytes`` starting on a :data:`HUGE_PAGE` boundary, advised to be huge pages."""
    size = max(HUGE_PAGE, -(-nbytes // HUGE_PAGE) * HUGE_PAGE)
    raw = np.empty(size + HUGE_PAGE, dtype=np.uint8)
    start = -raw.__array_interface__["data"][0] % HUGE_PAGE
    block = raw[start : start + size]
    madvise = _madvise()
    if madvise is not None:
        madvise(block.__array_interface__["data"][0], size, _MADV_HUGEPAGE)  # type: ignore[operator]
    block.fill(0)  # touched after the advice: the pages are faulted in as huge ones where the kernel can
    return block[:nbytes]
