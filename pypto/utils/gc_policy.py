"""``fewer_collections()``: CPython's cycle collector runs less often during a compile.

A compile allocates hundreds of thousands of small IR objects that live until it ends. With the
default thresholds (700, 10, 10) the collector keeps traversing them (and everything imported before)
as they are promoted, so collection time grows faster than the program: at 400 tile ops it was about
a quarter of the compile's CPU time. Inside the block the youngest generation is collected every
50 000 allocations instead of 700; the thresholds in force before are restored on exit (nested blocks
restore what they found). Nothing changes when the collector is disabled or already set that high.

``import pypto.language`` runs under :func:`long_lived` instead: defining the IR classes otherwise made
the import run a full collection of everything imported before it (torch's objects included), and
with the compile's thresholds still a young collection of some 47 000 new objects, classes most of
them (about 50 ms, an eighth of the import).

:func:`collect_then_freeze_at_exit` (registered by ``import pypto``): at interpreter exit, one full
collection and then ``gc.freeze()``. CPython's finalization otherwise runs several full collections,
each traversing every object still alive (torch's, xDSL's IR classes, compiled programs), which made a
process's exit cost 0.3-0.5 s of CPU. ``PYPTO_EXIT_FREEZE=0`` keeps CPython's own exit.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

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


IMPORT_THRESHOLD = 10_000_000
"""The gen0 threshold inside :func:`long_lived`: no collection in the block."""


@contextmanager
def long_lived() -> Iterator[None]:
    """For a block that creates objects living as long as the process (an import defining IR classes):
    no collection inside it, and at its end what the collector tracks goes straight into its oldest
    generation (``gc.freeze()`` then ``gc.unfreeze()``) instead of being traversed by the young
    collections on its way there. Nothing is lost: a full collection still looks at all of it (garbage
    made before the block included, which waits for that one). The thresholds are restored; nothing
    changes when the collector is disabled, and no object is moved when some are frozen already (the
    caller's ``gc.freeze()`` is left as it was)."""
    before = gc.get_threshold()
    if not gc.isenabled():
        yield
        return
    gc.set_threshold(max(before[0], IMPORT_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.set_threshold(*before)


def import_long_lived(name: str) -> ModuleType:
    """``importlib.import_module(name)``; its first import (the modules a first compile loads: passes,
    codegen) runs under :func:`long_lived`."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    with long_lived():
        return importlib.import_module(name)


EXIT_FREEZE_ENV = "PYPTO_EXIT_FREEZE"
"""Environment variable: ``0`` leaves the interpreter's exit to CPython (no :func:`_collect_then_freeze`)."""

_exit_handler_registered = False


def _collect_then_freeze() -> None:
    """The exit handler: collect what is garbage now (the finalizers of objects in unreachable cycles run,
    as in CPython's own exit), then freeze the rest so that the finalization's own collections skip it.

    What is still reachable at exit is then freed by reference counting only, as module globals are
    cleared; an object in a reference cycle that is still alive at exit keeps its memory for the OS to
    reclaim and its ``__del__`` is not called, which CPython does not promise either ("It is not
    guaranteed that ``__del__()`` methods are called for objects that still exist when the interpreter
    exits"). Handlers registered before ``import pypto`` run after this one, as usual; what they
    allocate is collected as usual."""
    if os.environ.get(EXIT_FREEZE_ENV, "1") == "0" or not gc.isenabled():
        return
    gc.collect()
    gc.freeze()


def collect_then_freeze_at_exit() -> None:
    """Register :func:`_collect_then_freeze` with :mod:`atexit` (once per process)."""
    global _exit_handler_registered
    if not _exit_handler_registered:
        _exit_handler_registered = True
        atexit.register(_collect_then_freeze)
