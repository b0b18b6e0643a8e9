"""The codegen stage of ``ir.compile``: ``.pto`` units, the ptoas pipeline, C++ files.

::

    <output_dir>/ptoas/<unit>.pto            codegen output (what upstream PyPTO hands to ptoas)
    <output_dir>/ptoas_passes/<unit>/        NN_after_<pass>.mlir   (dump_ptoas_passes=True)
    <output_dir>/ptoas/<unit>.cpp            C++ from pypto.ptoas.emitc.emit_cpp
    <output_dir>/kernels/<aic|aiv>/<unit>.cpp  the C++ between ``// --- ptoas-generated code ---``
                                             and ``// --- Kernel entry point ---``, then the entry

``skip_ptoas=True`` stops after the ``.pto`` files. A unit that fails does not
stop the others; :class:`PartialCodegenError` names every failure at the end.
The kernel file is ``emitc.kernel_source``: the unit's C++ between the markers,
then the runtime entry point. Each unit is a ``kernel_codegen:<unit>`` stage of the active
compile profiler (:mod:`pypto.compile_profiling`).
"""

from __future__ import annotations

import os
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from pypto.compile_profiling import stage
from pypto.core.program import Program
from pypto.dialects.program import function_type
from pypto.errors import PartialCodegenError
from pypto.pipeline.backend import BackendType
from pypto.pipeline.manager import MemoryPlanner
from pypto.ptoas.dialect.attrs import KernelKind, KernelKindAttr
from pypto.ptoas.emitc import emit_cpp, kernel_source
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.utils.atomic import atomic_write_text

from .function import KERNEL_TYPES
from .program import emit_source_loc_enabled, target_arch_of
from .unit import build_kernel_unit


def kernel_dir(module: ModuleOp) -> str:
    """``aic`` for cube kernels, ``aiv`` otherwise."""
    for op in module.body.block.ops:
        kind = op.attributes.get("pto.kernel_kind") if isinstance(op, FuncOp) else None
        if isinstance(kind, KernelKindAttr) and kind.data == KernelKind.cube:
            return "aic"
    return "aiv"


def write_codegen(
    program: Program | ModuleOp,
    output_dir: str | os.PathLike[str],
    *,
    skip_ptoas: bool = False,
    emit_source_loc: bool | None = None,
    dump_ptoas_passes: bool = False,
    memory_planner: MemoryPlanner | str | None = None,
    backend: BackendType | str | None = None,
    platform: str | None = None,
) -> dict[str, Path]:
    """Write the codegen folders for every AIC/AIV/InCore function; returns unit -> ``.pto`` path."""
    out = Path(output_dir)
    module = getattr(program, "module", program)
    assert isinstance(module, ModuleOp)
    loc = emit_source_loc_enabled(emit_source_loc)
    arch = target_arch_of(backend, platform)
    ptoas_on = str(getattr(memory_planner, "value", memory_planner) or "").upper() == "PTOAS"
    written: dict[str, Path] = {}
    failures: dict[str, str] = {}
    for f in [op for op in module.body.block.ops if isinstance(op, FuncOp)]:
        if function_type(f) not in KERNEL_TYPES:
            continue
        name = f.sym_name.data
        try:
            with stage(f"kernel_codegen:{name}"):
                written[name] = _write_unit(f, name, out, arch, loc, skip_ptoas, ptoas_on, dump_ptoas_passes)
        except Exception as e:  # noqa: BLE001 - one failing unit must not stop the others
            failures[name] = str(e).splitlines()[0] if str(e) else type(e).__name__
    if failures:
        lines = "\n".join(f"  {name}: {msg}" for name, msg in failures.items())
        files = {str(p.relative_to(out)): p.read_text() for p in sorted(out.glob("ptoas/*")) + sorted(out.glob("kernels/*/*"))}
        raise PartialCodegenError(f"codegen failed for {len(failures)} kernel(s):\n{lines}", files, failures)
    return written


def _write_unit(
    f: FuncOp, name: str, out: Path, arch: str, loc: bool, skip_ptoas: bool, ptoas_on: bool, dump_ptoas_passes: bool
) -> Path:
    """One kernel's ``.pto`` and (unless ``skip_ptoas``) its ptoas pipeline and C++ files; the ``.pto`` path."""
    built = build_kernel_unit(f, arch, loc)
    unit = built.module
    (out / "ptoas").mkdir(parents=True, exist_ok=True)
    path = out / "ptoas" / f"{name}.pto"
    atomic_write_text(path, built.text, durable=False)
    if skip_ptoas:
        return path
    opts = PtoasOptions(
        memory_planner=ptoas_on,
        insert_sync=True,
        dump_dir=out / "ptoas_passes" / name if dump_ptoas_passes else None,
    )
    run_ptoas_pipeline(unit, opts)
    body = emit_cpp(unit)
    atomic_write_text(out / "ptoas" / f"{name}.cpp", body, durable=False)
    core = kernel_dir(unit)
    kdir = out / "kernels" / core
    kdir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(kdir / f"{name}.cpp", kernel_source(body, name, core), durable=False)
    return path
