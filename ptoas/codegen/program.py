"""Program-level codegen: pick the on-chip functions, lower each, write ``ptoas/<unit>.pto``."""

from __future__ import annotations

import os
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from pypto.core.program import Program
from pypto.dialects.program import function_type
from pypto.pipeline.backend import BackendType
from pypto.ptoas.pto_text import print_pto
from pypto.utils.atomic import atomic_write_text

from .function import KERNEL_TYPES
from .unit import build_kernel_unit

ENV_LOC = "PYPTO_EMIT_PTO_LOC"


def emit_source_loc_enabled(flag: bool | None) -> bool:
    """The explicit flag, else ``PYPTO_EMIT_PTO_LOC``, which defaults to on as upstream's does
    (``0``/``false``/``no``/``off`` turn it off: the ``.pto`` then carries no ``loc(...)``)."""
    if flag is not None:
        return flag
    return os.environ.get(ENV_LOC, "").strip().lower() not in ("0", "false", "no", "off")


def target_arch_of(backend_type: BackendType | str | None = None, platform: str | None = None) -> str:
    """``a5`` for Ascend950 / a5* platforms, ``a2a3`` otherwise."""
    text = f"{getattr(backend_type, 'value', backend_type) or ''} {platform or ''}".lower()
    return "a5" if "950" in text or (platform or "").startswith("a5") else "a2a3"


def _module_of(program: Program | ModuleOp) -> ModuleOp:
    module = getattr(program, "module", program)
    if not isinstance(module, ModuleOp):
        raise TypeError(f"expected a pypto Program or a ModuleOp, got {type(program).__name__}")
    return module


def lower_program(program: Program | ModuleOp, *, emit_source_loc: bool | None = None, arch: str | None = None) -> dict[str, ModuleOp]:
    """``{unit name: .pto module}`` for every AIC/AIV/InCore function, in program order."""
    loc = emit_source_loc_enabled(emit_source_loc)
    units: dict[str, ModuleOp] = {}
    for op in _module_of(program).body.block.ops:
        if isinstance(op, FuncOp) and function_type(op) in KERNEL_TYPES:
            units[op.sym_name.data] = build_kernel_unit(op, arch or "a2a3", loc).module
    return units


def write_pto_units(units: dict[str, ModuleOp], out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``<out_dir>/<unit>.pto`` for each unit (atomically); returns the paths."""
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for name, module in units.items():
        path = root / f"{name}.pto"
        atomic_write_text(path, print_pto(module))
        paths[name] = path
    return paths
