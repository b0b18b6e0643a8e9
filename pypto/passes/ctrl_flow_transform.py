"""CtrlFlowTransform: identity in PyPTO on xDSL (documented choice).

Upstream's pass 03 rewrites ``break`` / ``continue`` inside loops into
structured control flow (guard flags carried through the loop and ``if``s), so
that later passes only see structured loops. Our front end rejects ``break``
and ``continue`` with a located error (``pypto.frontend.statements``)
and our IR (``scf.for`` / ``scf.if`` / ``pl.at``) is structured by
construction: there is nothing left for this pass to do. It is registered so
that the pipeline, dump names and numbering match upstream's (the upstream
``03_after_CtrlFlowTransform`` dumps equal their ``02`` inputs too).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from .base import PyPTOPass
from .registry import register_pass


@register_pass
@dataclass(frozen=True)
class CtrlFlowTransform(PyPTOPass):
    """``break``/``continue`` -> structured control flow; identity on our IR."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
