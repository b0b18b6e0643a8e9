"""The ptoas pass pipeline: verify -> [plan-memory] -> [insert-sync], with dumps.

::

    opts = PtoasOptions(arch="a2a3", memory_planner=False, insert_sync=True, dump_dir=Path("ptoas_passes/k"))
    module = run_ptoas_pipeline(module, opts)

- ``arch`` overrides the module's ``pto.target_arch`` (as ptoas's CLI does);
- plan-memory runs re-planning every allocation under ``memory_planner=True``
  (PyPTO's ``memory_planner=PTOAS``); otherwise PyPTO's addresses stand and it
  only runs to give addresses to allocations that have none (level-2 ``.pto``
  input), which the C++ needs;
- ``dump_dir``: ``NN_after_<pass>.mlir`` after each pass (``00_input.mlir``
  first); ``print_ir_after_all``: the same text to that stream, each under
  ``// -----// IR Dump After <pass> //----- //``.

Errors are :class:`pypto.ptoas.pto_text.PTOVerifyError` (with the failing op,
for ``file:line:col`` diagnostics); the pipeline stops at the first one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from pypto.ptoas.context import make_pto_context
from pypto.ptoas.dialect.tile_ops import AllocTileOp
from pypto.ptoas.pto_text import print_pto
from pypto.utils.atomic import atomic_write_text

from .insert_sync import InsertSyncPass
from .plan_memory import PlanMemoryPass
from .verify import VerifyPass

ARCHS = ("a2a3", "a5")


@dataclass
class PtoasOptions:
    """What the pipeline runs (see the module docstring)."""

    arch: str | None = None
    memory_planner: bool = False
    insert_sync: bool = True
    dump_dir: Path | None = None
    print_ir_after_all: TextIO | None = None


def _needs_planning(module: ModuleOp) -> bool:
    return any(isinstance(op, AllocTileOp) and op.addr is None for op in module.walk())


def ptoas_passes(module: ModuleOp, options: PtoasOptions) -> list[ModulePass]:
    """The passes this module goes through."""
    passes: list[ModulePass] = [VerifyPass()]
    if options.memory_planner or _needs_planning(module):
        passes.append(PlanMemoryPass(force=options.memory_planner))
    if options.insert_sync:
        passes.append(InsertSyncPass())
    return passes


def _dump(module: ModuleOp, options: PtoasOptions, index: int, name: str) -> None:
    text: str | None = None
    if options.dump_dir is not None:
        options.dump_dir.mkdir(parents=True, exist_ok=True)
        text = print_pto(module)
        stem = "00_input" if index == 0 else f"{index:02d}_after_{name}"
        atomic_write_text(options.dump_dir / f"{stem}.mlir", text)
    if options.print_ir_after_all is not None and index > 0:
        text = text or print_pto(module)
        options.print_ir_after_all.write(f"// -----// IR Dump After {name} //----- //\n{text}\n")


def run_ptoas_pipeline(
    module: ModuleOp,
    options: PtoasOptions | None = None,
    *,
    ctx: Context | None = None,
    on_pass: Callable[[str, ModuleOp], None] | None = None,
) -> ModuleOp:
    """Run the pipeline in place on ``module`` (returned for chaining)."""
    options = options or PtoasOptions()
    if options.arch is not None:
        if options.arch not in ARCHS:
            raise ValueError(f"unknown arch {options.arch!r} (a2a3 or a5)")
        module.attributes["pto.target_arch"] = StringAttr(options.arch)
    ctx = ctx or make_pto_context()
    _dump(module, options, 0, "input")
    for i, p in enumerate(ptoas_passes(module, options), start=1):
        p.apply(ctx, module)
        _dump(module, options, i, p.name)
        if on_pass is not None:
            on_pass(p.name, module)
    return module
