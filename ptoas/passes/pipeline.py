"""The ptoas pass pipeline: verify -> [plan-memory] -> [insert-sync], with dumps.

::

    opts = PtoasOptions(arch="a2a3", memory_planner=False, insert_sync=True, dump_dir=Path("ptoas_passes/k"))
    module = run_ptoas_pipeline(module, opts)

- ``arch`` overrides the module's ``pto.target_arch`` (as ptoas's CLI does);
- plan-memory runs re-planning every allocation under ``memory_planner=True``
  (PyPTO's ``memory_planner=PTOAS``); otherwise PyPTO's addresses stand and it
  only runs to give addresses to allocations that have none (level-2 ``.pto``
  input), which the C++ needs;
- ``ptoas_sync``: insert-sync is PTOAS's (:mod:`.ptoas_sync`, what ``ptoas
  --enable-insert-sync`` runs) instead of ours (:mod:`.insert_sync`);
- ``dump_dir``: ``NN_after_<pass>.mlir`` after each pass (``00_input.mlir``
  first); ``print_ir_after_all``: the same text to that stream, each under
  ``// -----// IR Dump After <pass> //----- //``;
- ``plan_memory_dump``: PTOAS's PlanMemory dump (``end PTO plan Mem!`` and the
  module in its memref form, :mod:`.plan_memory_dump`) to that stream after
  plan-memory, which then always runs (as PTOAS's does below level3).

Errors are :class:`pypto.ptoas.pto_text.PTOVerifyError` (with the failing op,
for ``file:line:col`` diagnostics); the pipeline stops at the first one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from pypto.pipeline.pass_runner import DumpListener, PassListener, PassRunner, PrintIRListener
from pypto.ptoas.context import make_pto_context
from pypto.ptoas.dialect.isa_misc_ops import ReserveBufferOp
from pypto.ptoas.dialect.tile_ops import AllocTileOp
from pypto.ptoas.limits import ARCHS
from pypto.ptoas.pto_text import print_pto

from .insert_sync import InsertSyncPass
from .verify import VerifyPass


@dataclass
class PtoasOptions:
    """What the pipeline runs (see the module docstring)."""

    arch: str | None = None
    memory_planner: bool = False
    insert_sync: bool = True
    ptoas_sync: bool = False
    dump_dir: Path | None = None
    dump_inputs: tuple[Path, ...] = ()
    """The files the run reads: a ``dump_dir`` holding one as a dump is refused (``DumpListener``)."""
    print_ir_after_all: TextIO | None = None
    plan_memory_dump: TextIO | None = None


def _needs_planning(module: ModuleOp) -> bool:
    return any(
        (isinstance(op, AllocTileOp) and op.addr is None)
        or (op.name == "memref.alloc" and _local_memref_alloc(op))
        or (isinstance(op, ReserveBufferOp) and "base" not in op.attributes)
        for op in module.walk()
    )


def _local_memref_alloc(op: Operation) -> bool:
    from .plan_memory import local_memref_alloc  # imports xDSL's memref: only for a module that has one

    return local_memref_alloc(op)


def ptoas_passes(module: ModuleOp, options: PtoasOptions) -> list[ModulePass]:
    """The passes this module goes through."""
    passes: list[ModulePass] = [VerifyPass(check_addresses=not options.memory_planner)]
    if options.memory_planner or options.plan_memory_dump is not None or _needs_planning(module):
        from .plan_memory import PlanMemoryPass

        passes.append(PlanMemoryPass(force=options.memory_planner))
    if options.insert_sync and options.ptoas_sync:
        from .ptoas_sync import PtoasInsertSyncPass

        passes.append(PtoasInsertSyncPass())
    elif options.insert_sync:
        passes.append(InsertSyncPass())
    return passes


def _after_header(pass_: ModulePass) -> str:
    return f"// -----// IR Dump After {pass_.name} //----- //"


class PlanMemoryDumpListener(PassListener):
    """Writes PTOAS's PlanMemory dump to ``stream`` after the plan-memory pass."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        from .plan_memory import PlanMemoryPass
        from .plan_memory_dump import plan_memory_dump

        if isinstance(pass_, PlanMemoryPass):
            self.stream.write(plan_memory_dump(module))
            self.stream.flush()


def ptoas_listeners(options: PtoasOptions) -> list[PassListener]:
    """The dump and print-IR listeners ``options`` ask for (dumps are named by
    the passes' xDSL names: ``01_after_verify.mlir``)."""
    listeners: list[PassListener] = []
    if options.dump_dir is not None:
        listeners.append(
            DumpListener(options.dump_dir, print_pto, ".mlir", name=lambda p: p.name, inputs=options.dump_inputs)
        )
    if options.print_ir_after_all is not None:
        listeners.append(PrintIRListener(options.print_ir_after_all, print_pto, header=_after_header))
    if options.plan_memory_dump is not None:
        listeners.append(PlanMemoryDumpListener(options.plan_memory_dump))
    return listeners


def run_ptoas_pipeline(
    module: ModuleOp,
    options: PtoasOptions | None = None,
    *,
    ctx: Context | None = None,
    listeners: Sequence[PassListener] = (),
) -> ModuleOp:
    """Run the pipeline in place on ``module`` (returned for chaining) through
    the shared :class:`~pypto.pipeline.pass_runner.PassRunner`; ``listeners`` see
    every pass after the dump and print listeners."""
    options = options or PtoasOptions()
    if options.arch is not None:
        if options.arch not in ARCHS:
            raise ValueError(f"unknown arch {options.arch!r} (a2a3 or a5)")
        module.attributes["pto.target_arch"] = StringAttr(options.arch)
    ctx = ctx or make_pto_context()
    runner = PassRunner(ptoas_passes(module, options), [*ptoas_listeners(options), *listeners])
    return runner.run(ctx, module)
