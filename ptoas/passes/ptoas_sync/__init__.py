"""PTOAS's insert-sync, ported: what ``ptoas --enable-insert-sync`` runs (PTOAS's tool, PTOAS's pairs).

Per function (``lib/PTO/Transforms/InsertSync/`` of PTOAS a56b18c, read for facts; our own code):
skip a function that already has set/wait flags or events; :func:`.elements.translate` it into
the flat sync IR; :class:`.analysis.Analysis` (a pair per hazard its records do not order,
back-edge pairs, the ``PIPE_ALL`` tail); :func:`.motion.move_syncs`;
:func:`.motion.remove_redundant` (not with gather/scatter ops); :class:`.event_ids.EventIds`;
:func:`.codegen.emit_syncs`. Buffers and their overlap are :mod:`..access`'s (byte ranges once
planned), where PTOAS compares root allocations.

Our own pipeline (``pypto`` compile, the runtime, ``insert-sync`` in ``pypto-opt``) keeps
:mod:`..insert_sync`, the dataflow pass that orders each hazard once; this one is
``ptoas-insert-sync``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from pypto.ptoas.dialect import target_arch
from pypto.ptoas.dialect.sync_ops import RecordEventOp, SetFlagOp, WaitEventOp, WaitFlagOp

from .analysis import Analysis
from .codegen import emit_syncs
from .elements import SyncOp, translate
from .event_ids import EventIds
from .motion import move_syncs, remove_redundant

_GATHER_SCATTER = frozenset({"pto.tgather", "pto.tgatherb", "pto.tscatter", "pto.mgather", "pto.mscatter"})


def ptoas_insert_sync_func(func: FuncOp, arch: str) -> int:
    """Run PTOAS's insert-sync on one function; returns how many ops were added."""
    if any(isinstance(op, SetFlagOp | WaitFlagOp | RecordEventOp | WaitEventOp) for op in func.walk()):
        return 0
    ir = translate(func.body)
    if len(ir) <= 1:
        return 0
    groups: list[list[SyncOp]] = []
    Analysis(ir, groups).run()
    move_syncs(ir, groups)
    if not any(op.name in _GATHER_SCATTER for op in func.walk()):
        remove_redundant(ir, groups)
    EventIds(ir, groups).run()
    return emit_syncs(func, ir, arch)


@dataclass(frozen=True)
class PtoasInsertSyncPass(ModulePass):
    """``ptoas-insert-sync`` (see the module docstring)."""

    name = "ptoas-insert-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """PTOAS's insert-sync on every function with a body."""
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and func.body.blocks:
                ptoas_insert_sync_func(func, target_arch(func))


__all__ = ["PtoasInsertSyncPass", "ptoas_insert_sync_func"]
