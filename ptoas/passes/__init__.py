"""The ptoas pass pipeline as xDSL ``ModulePass``es: verify -> plan-memory -> insert-sync.

API::

    run_ptoas_pipeline(module, PtoasOptions(arch=None, memory_planner=False, insert_sync=True,
                                            dump_dir=None, print_ir_after_all=None)) -> ModuleOp
    VerifyPass(), PlanMemoryPass(force=False), InsertSyncPass()      # usable alone
    uncovered_hazards(module) -> [(op, missing sync)]                 # checker, changes nothing
    strip_sync(module) -> int                                         # remove set/wait/barrier ops

Modules: ``access`` (buffers and accesses), ``access_set`` (bit sets of
accesses), ``sync_state`` (the analysis lattice), ``insert_sync`` (the pass and its algorithm), ``plan_memory``,
``verify``, ``pipeline``, ``errors``.
"""

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp

from pypto.ptoas.dialect.sync_ops import SYNC_OPS, SyncSetOp, SyncWaitOp

from .insert_sync import Barrier, FlagPair, InsertSyncPass, SyncAnalysis, insert_sync_func, uncovered_hazards
from .pipeline import ARCHS, PtoasOptions, ptoas_passes, run_ptoas_pipeline
from .verify import VerifyPass

if TYPE_CHECKING:
    from .plan_memory import PlanMemoryPass, plan_func


def __getattr__(name: str) -> object:
    """``PlanMemoryPass`` and ``plan_func``, imported on first use (with xDSL's memref dialect)."""
    if name in ("PlanMemoryPass", "plan_func"):
        from . import plan_memory

        return getattr(plan_memory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def strip_sync(module: ModuleOp) -> int:
    """Erase every intra-core sync op (set/wait flag and event, barriers); returns how many."""
    kinds = tuple(k for k in SYNC_OPS if k not in (SyncSetOp, SyncWaitOp))
    doomed = [op for op in module.walk() if isinstance(op, kinds)]
    for op in doomed:
        op.detach()
        op.erase()
    return len(doomed)


__all__ = [
    "ARCHS",
    "Barrier",
    "FlagPair",
    "InsertSyncPass",
    "PlanMemoryPass",
    "PtoasOptions",
    "SyncAnalysis",
    "VerifyPass",
    "insert_sync_func",
    "plan_func",
    "ptoas_passes",
    "run_ptoas_pipeline",
    "strip_sync",
    "uncovered_hazards",
]
