"""ptoas's last step: ``.pto`` module -> C++ in the shape of pto-dialect.md §8, runnable on the CPU.

- :func:`emit_cpp` (``ptoas/<unit>.cpp``): Tile/GlobalTensor declarations, TASSIGN, TLOAD/TSTORE/
  T<op>, set_flag/wait_flag, TPUSH/TPOP/TFREE (cube <-> vector pipes), the kernel function and an
  ``extern "C"`` wrapper ``ptoas_call_<name>(const int64_t* args)``.
- :func:`kernel_source` (``kernels/<aic|aiv>/<func>.cpp``): that C++ between
  ``// --- ptoas-generated code ---`` and ``// --- Kernel entry point ---``, then ``kernel_entry``.
- :func:`include_dir`: where ``pto_cpu.hpp`` (the CPU implementation of the API) lives.

Modules: ``context`` (names, lines, tile placement, handler registry), ``cxx_types``, one module per
op family (``views``, ``tiles``, ``vector``, ``sync``, ``scalar``; ``pipes`` (the FIFO ops import the
ISA op classes), ``isa``, ``comm`` and ``memref`` are imported on the first op they handle), ``function`` (functions and the unit), ``kernel`` (the
kernels/ wrapper), ``runner`` (call a built kernel from Python).
"""

from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from .errors import EmitError
from .function import CALL_PREFIX, emit_cpp
from .kernel import CODE_MARKER, ENTRY_MARKER, entry_text, kernel_source


def kernel_entry(module: ModuleOp) -> str:
    """The ``kernel_entry`` text for a unit's module (for callers that assemble the kernel file
    themselves; :func:`kernel_source` builds the whole file, core macro included)."""
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp) and op.body.blocks]
    if not funcs:
        raise EmitError("the module has no function with a body")
    return entry_text(emit_cpp(module), funcs[0].sym_name.data)


def include_dir() -> Path:
    """The directory holding ``pto_cpu.hpp`` (pass it to the compiler with ``-I``)."""
    return Path(__file__).resolve().parent.parent / "include"


__all__ = [
    "CALL_PREFIX",
    "CODE_MARKER",
    "ENTRY_MARKER",
    "EmitError",
    "emit_cpp",
    "include_dir",
    "kernel_entry",
    "kernel_source",
]
