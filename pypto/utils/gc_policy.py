"""``fewer_collections()``: CPython's cycle collector runs less often during a compile.

A compile allocates hundreds of thousands of small IR objects that live until it ends. With the
default thresholds (700, 10, 10) the collector keeps traversing them (and everything imported before)
as they are promoted, so collection time grows faster than the program: at 400 tile ops it was about
a quarter of the compile's CPU time. Inside the block the youngest generation is collected every
50 000 allocations instead of 700; the thresholds in force before are restored on exit (nested blocks
restore what they found). Nothing changes when the collector is disabled or already set that high.

``import pypto.language`` runs under it too: defining the IR classes otherwise made the import run a
full collection of everything imported before it (torch's objects included).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_THRESHOLDS = (50_000, 20, 10)
"""gen0, gen1, gen2 thresholds inside :func:`fewer_collections`."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's thresholds to :data:`COMPILE_THRESHOLDS` for the block."""
    before = gc.get_threshold()
    if not gc.isenabled() or before[0] >= COMPILE_THRESHOLDS[0]:
        yield
        return
    gc.set_threshold(*(max(a, b) for a, b in zip(before, COMPILE_THRESHOLDS, strict=True)))
    try:
        yield
    finally:
        gc.set_threshold(*before)
