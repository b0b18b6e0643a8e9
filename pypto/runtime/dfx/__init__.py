"""Run-time DFX: what each ``RunConfig`` collection flag writes under ``<output_dir>/dfx_outputs/``
(runtime-dfx-formats.md §1).

A :class:`Collector` per enabled flag watches a run (each task part before it is dispatched and after
it completes) and writes its artefact when the run ends. :func:`collectors_for` makes them from a
:class:`~pypto.runtime.config.RunConfig`; a new artefact is a :class:`Collector` subclass registered
with :func:`register`.
"""

from __future__ import annotations

from . import args_dump as args_dump  # registers enable_dump_args
from .base import COLLECTORS, Collector, collectors_for, finish_all, register
from .deps import DepsCollector
from .incore import IncoreCollector
from .pmu import PmuCollector
from .scope_stats import ScopeStatsCollector
from .swimlane import SwimlaneCollector

__all__ = [
    "COLLECTORS",
    "Collector",
    "DepsCollector",
    "IncoreCollector",
    "PmuCollector",
    "ScopeStatsCollector",
    "SwimlaneCollector",
    "collectors_for",
    "finish_all",
    "register",
]
