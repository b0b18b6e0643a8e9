"""pl -> pto codegen: every AIC/AIV/InCore function of a lowered program becomes a ``.pto`` unit.

API::

    lower_function(func, emit_source_loc=False, arch="a2a3") -> ModuleOp
    lower_program(program, emit_source_loc=None, arch=None) -> dict[str, ModuleOp]   # unit name -> module
    write_pto_units(units, out_dir) -> dict[str, Path]                               # ptoas/<unit>.pto
    build_kernel_unit(func, arch, emit_source_loc) -> PtoUnit(name, module, text)     # compile and runtime
    read_kernel_unit(path, func, arch) -> ModuleOp                                   # a unit compile wrote

The input is the program after PyPTO's pass pipeline (every tile has a MemRef
with a byte offset, functions are typed AIC/AIV/InCore), e.g.
``pl.loads(".../passes_dump/49_after_MaterializeValidShapeSymbols.py")``.
``emit_source_loc`` (or ``PYPTO_EMIT_PTO_LOC=1``) attaches
``loc("<file>.py":line:col)`` of the DSL source to every op. Errors are
:class:`pypto.diagnostics.DiagnosticError` located at the pl op.

Modules: ``types`` (pl -> pto types), ``state`` (maps, constants, allocation),
``tile_ops`` (op handlers), ``control`` (blocks, scf), ``function`` (one
function), ``unit`` (the one unit builder compile and the runtime share),
``program`` (units and files).
"""

from .function import KERNEL_TYPES, kernel_kind, lower_function
from .program import emit_source_loc_enabled, lower_program, target_arch_of, write_pto_units
from .unit import PtoUnit, build_kernel_unit, read_kernel_unit

__all__ = [
    "KERNEL_TYPES",
    "PtoUnit",
    "build_kernel_unit",
    "emit_source_loc_enabled",
    "kernel_kind",
    "lower_function",
    "lower_program",
    "read_kernel_unit",
    "target_arch_of",
    "write_pto_units",
]
