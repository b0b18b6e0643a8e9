"""DeriveCallDirections (pass 38): record, on every call, the direction of
each argument, read from the callee's parameter directions (``pl.dir``).

The result is the discardable attribute ``pl.arg_directions`` on ``func.call``:
an ``ArrayAttr`` with one ``#pl<dir In|Out|InOut>`` per argument (scalars and
parameters without ``pl.dir`` are ``In``)::

    %r = func.call @k(%a, %b, %out) {pl.arg_directions = [#pl<dir In>, #pl<dir In>, #pl<dir Out>]} : ...

Upstream prints the same fact as ``attrs={"arg_directions": [pl.adir.input,
pl.adir.input, pl.adir.output_existing]}`` on the call (its 38 dumps); the
mapping is In -> ``input``, Out -> ``output_existing``, InOut -> ``inout``
(:data:`pypto.core.analysis.calls.UPSTREAM_ADIR`). Calls to functions outside the module are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from pypto.core.analysis.calls import ARG_DIRECTIONS
from pypto.core.analysis.functions import calls_in, functions_by_name
from pypto.dialects.enums import ParamDirectionAttr
from pypto.dialects.program import param_directions

from .base import PyPTOPass
from .registry import register_pass


def derive_directions(module: ModuleOp) -> int:
    """Annotate every call to a function of ``module``; returns how many."""
    funcs = functions_by_name(module)
    n = 0
    for f in funcs.values():
        for op, callee in calls_in(f, funcs):
            dirs = param_directions(callee)
            op.attributes[ARG_DIRECTIONS] = ArrayAttr([ParamDirectionAttr(d) for d in dirs])
            n += 1
    return n


@register_pass
@dataclass(frozen=True)
class DeriveCallDirections(PyPTOPass):
    """``pl.arg_directions`` on every call, from the callee's ``pl.dir``."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        derive_directions(op)
