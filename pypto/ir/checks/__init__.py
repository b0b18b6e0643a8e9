"""Post-pipeline checks: diagnostics computed on the fully lowered IR, after
the last pass of the pipeline.

Entry point for the pipeline (call it once, after the last pass)::

    from pypto.ir.checks import run_post_pipeline_checks

    diagnostics = run_post_pipeline_checks(module, backend="a2a3")

It runs every check not listed in ``disabled`` and emits each finding through
:func:`pypto.diagnostics.emit` (so a surrounding ``diagnostics.collecting()``
or the PassManager's collector receives them; with none they print to stderr),
then returns them in emission order. Perf hints are ``Severity.REMARK``
diagnostics with a ``code``; :func:`perf_hint_line` renders one in upstream's
``perf_hints.log`` / stderr shape.

Checks:

- ``TileInnermostDimGranularity`` (PH001, :mod:`.tile_granularity`): every
  ``tile.load`` / ``tile.store`` whose innermost dimension is below 512 B on
  a2a3 (128 B on a5), one hint per site.

``backend`` is ``"a2a3"`` (also ``"a2a3sim"``, ``"Ascend910B"``) or ``"a5"``
(``"a5sim"``, ``"Ascend950"``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from xdsl.dialects.builtin import ModuleOp

from pypto.diagnostics import Diagnostic, emit

from .tile_granularity import CODE as PH001
from .tile_granularity import RULE as TILE_INNERMOST_DIM_GRANULARITY
from .tile_granularity import check_tile_granularity

CHECKS: tuple[str, ...] = (TILE_INNERMOST_DIM_GRANULARITY,)
"""Every post-pipeline check, by rule name (``DiagnosticCheck`` names)."""


def run_post_pipeline_checks(
    module: ModuleOp, backend: str = "a2a3", disabled: Iterable[str] = ()
) -> list[Diagnostic]:
    """Run the post-pipeline checks on ``module``, emit and return their diagnostics."""
    off = set(disabled)
    out: list[Diagnostic] = []
    if TILE_INNERMOST_DIM_GRANULARITY not in off:
        for _, d in check_tile_granularity(module, backend):
            out.append(d)
    for d in out:
        emit(d)
    return out


def perf_hint_line(d: Diagnostic, relative_to: str | None = None) -> str:
    """``[perf_hint PH001] TileInnermostDimGranularity: <msg> at <file>:<line>:<col>``
    (pl-dsl.md §6); the file is made relative to ``relative_to`` when given."""
    text = f"[perf_hint {d.code}] {d.rule}: {d.message}"
    if d.span is not None:
        name = d.span.filename
        if relative_to is not None:
            try:
                name = os.path.relpath(name, relative_to)
            except ValueError:
                pass
        text += f" at {name}:{d.span.line}:{d.span.col}"
    return text


__all__ = [
    "CHECKS",
    "PH001",
    "TILE_INNERMOST_DIM_GRANULARITY",
    "check_tile_granularity",
    "perf_hint_line",
    "run_post_pipeline_checks",
]
