"""MaterializeSemanticAliases (pass 33): buffers the program's semantics require
to be one allocation become one allocation.

In-place results, views, loop carries and ``if`` results share one buffer
(:mod:`pypto.core.analysis.aliases` says which and how); allocations nobody
refers to any more are removed.

InitMemRef already applies the aliases (xDSL's strict typing needs the loop
carries to be one type), so on InitMemRef's output this pass changes nothing,
as upstream's 33 dumps equal its 32 dumps; run alone on IR whose in-place
results have buffers of their own, it merges them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto.core.analysis.aliases import materialize_aliases
from pypto.core.analysis.calls import reconcile_calls

from .base import FunctionPass
from .registry import register_pass


@register_pass
@dataclass(frozen=True)
class MaterializeSemanticAliases(FunctionPass):
    """Loop-carried and in-place buffers share one allocation."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        materialize_aliases(f)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        super().apply(ctx, op)
        reconcile_calls(op)
