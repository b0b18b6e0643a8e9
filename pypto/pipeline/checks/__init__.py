"""Post-pipeline checks: diagnostics computed on the fully lowered IR, after
the last pass of the pipeline.

Entry point for the pipeline (call it once, after the last pass)::

    from pypto.pipeline.checks import run_post_pipeline_checks

    diagnostics = run_post_pipeline_checks(module, backend="a2a3")

It runs every check not listed in ``disabled`` and emits each finding through
:func:`pypto.diagnostics.emit` (so a surrounding ``diagnostics.collecting()``
or the PassManager's collector receives them; with none they print to stderr),
then returns them in emission order. Perf hints are ``Severity.REMARK``
diagnostics with a ``code``; :func:`pypto.pipeline.perf_hints.format_hint` renders one in upstream's
``perf_hints.log`` / stderr shape. Compiles run these checks through
:func:`run_checks` (below; the checks register themselves with ``perf_hints.register_check``).

Checks:

- ``TileInnermostDimGranularity`` (PH001, :mod:`.tile_granularity`): every
  ``tile.load`` / ``tile.store`` whose innermost dimension is below 512 B on
  a2a3 (128 B on a5), one hint per site.

``backend`` is ``"a2a3"`` (also ``"a2a3sim"``, ``"Ascend910B"``) or ``"a5"``
(``"a5sim"``, ``"Ascend950"``).
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import ModuleOp

from pypto.diagnostics import Diagnostic, collecting, emit
from pypto.pipeline.perf_hints import DiagnosticPhase, DiagnosticPolicy, register_check, registered_checks

from .tile_granularity import CODE as PH001
from .tile_granularity import RULE as TILE_INNERMOST_DIM_GRANULARITY
from .tile_granularity import check_tile_granularity
from .warnings import (
    OUT_PARAM_WRITE_DROPPED,
    UNUSED_VARIABLE,
    check_dropped_out_params,
    check_unused_variables,
)

CHECKS: tuple[str, ...] = (TILE_INNERMOST_DIM_GRANULARITY,)
"""Every post-pipeline check, by rule name (``DiagnosticCheck`` names)."""


@register_check(TILE_INNERMOST_DIM_GRANULARITY, DiagnosticPhase.POST_PIPELINE, hint=True, code=PH001)
def _tile_innermost_dim_granularity(module: ModuleOp) -> None:
    for _, d in check_tile_granularity(module, _backend()):
        emit(d)


@register_check(UNUSED_VARIABLE, DiagnosticPhase.PRE_PIPELINE)
def _unused_variable(module: ModuleOp) -> None:
    check_unused_variables(module)


@register_check(OUT_PARAM_WRITE_DROPPED, DiagnosticPhase.PRE_PIPELINE)
def _out_param_write_dropped(module: ModuleOp) -> None:
    check_dropped_out_params(module)


def _backend() -> str:
    from pypto.pipeline.manager import current_options

    return "a5" if current_options().platform.startswith("a5") else "a2a3"


def run_post_pipeline_checks(
    module: ModuleOp, backend: str = "a2a3", disabled: Iterable[str] = ()
) -> list[Diagnostic]:
    """Run the post-pipeline checks on ``module`` directly (outside a compile);
    emit and return their diagnostics."""
    out: list[Diagnostic] = []
    if TILE_INNERMOST_DIM_GRANULARITY not in set(disabled):
        out.extend(d for _, d in check_tile_granularity(module, backend))
    for d in out:
        emit(d)
    return out


__all__ = [
    "CHECKS",
    "PH001",
    "TILE_INNERMOST_DIM_GRANULARITY",
    "check_tile_granularity",
    "run_post_pipeline_checks",
]


def run_checks(module: ModuleOp, phase: DiagnosticPhase, policy: DiagnosticPolicy) -> list[Diagnostic]:
    """Run the enabled checks of ``phase``; returns what they emitted and the
    policy keeps (each stamped with its check name as rule)."""
    if policy.muted:
        return []
    out: list[Diagnostic] = []
    for c in registered_checks():
        if c.name in policy.disabled:
            continue
        # A hint check runs at its own phase; a warning check at the phase the
        # compile's diagnostic_phase selects (its registered phase is a default).
        if (c.hint and c.phase is not phase) or (not c.hint and phase is not policy.phase):
            continue
        with collecting() as got:
            c.fn(module)
        for d in got.items:
            d.rule = d.rule or c.name
        out.extend(got.items)
    return [d for d in out if policy.keeps(d)]
