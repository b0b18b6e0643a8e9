"""Run-time DFX: what each ``RunConfig`` collection flag writes under ``<output_dir>/dfx_outputs/``
(runtime-dfx-formats.md §1).

A :class:`Collector` per enabled flag watches a run (each task part before it is dispatched and after
it completes) and writes its artefact when the run ends. :func:`collectors_for` makes them from a
:class:`~pypto.runtime.config.RunConfig`; a new artefact is a :class:`Collector` subclass registered
with :func:`register`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import COLLECTORS, Collector, any_enabled, collectors_for, finish_all, register, task_hooks
    from .deps import DepsCollector
    from .incore import IncoreCollector
    from .pmu import PmuCollector
    from .scope_stats import ScopeStatsCollector
    from .swimlane import SwimlaneCollector

# where each public name lives; the collector modules register themselves when imported
_HOME = {
    "COLLECTORS": "base", "Collector": "base", "any_enabled": "base", "collectors_for": "base",
    "finish_all": "base", "register": "base", "task_hooks": "base",
    "DepsCollector": "deps", "IncoreCollector": "incore", "PmuCollector": "pmu",
    "ScopeStatsCollector": "scope_stats", "SwimlaneCollector": "swimlane",
}  # fmt: skip
_REGISTERING = ("args_dump", "deps", "incore", "pmu", "scope_stats", "swimlane")


def __getattr__(name: str) -> object:
    """The public names, imported on first use with every collector module (so ``collectors_for``
    sees them all); a build that only reads ``dfx.base`` (the kernel numbering) imports no collector."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for module in _REGISTERING:
        importlib.import_module(f"{__name__}.{module}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)


__all__ = [
    "COLLECTORS",
    "Collector",
    "DepsCollector",
    "IncoreCollector",
    "PmuCollector",
    "ScopeStatsCollector",
    "SwimlaneCollector",
    "any_enabled",
    "collectors_for",
    "finish_all",
    "register",
    "task_hooks",
]
