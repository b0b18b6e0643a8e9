"""DeriveCallDirections (pass 38): record, on every call, the direction of
each argument, read from the callee's parameter directions (``pl.dir``).

The result is the discardable attribute ``pl.arg_directions`` on ``func.call``:
an ``ArrayAttr`` with one ``#pl<dir In|Out|InOut>`` per argument (scalars and
parameters without ``pl.dir`` are ``In``)::

    %r = func.call @k(%a, %b, %out) {pl.arg_directions = [#pl<dir In>, #pl<dir In>, #pl<dir Out>]} : ...

Upstream prints the same fact as ``attrs={"arg_directions": [pl.adir.input,
pl.adir.input, pl.adir.output_existing]}`` on the call (its 38 dumps); the
mapping is In -> ``input``, Out -> ``output_existing``, InOut -> ``inout``
(:data:`UPSTREAM_ADIR`). Calls to functions outside the module are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from pypto.dialects.enums import ParamDirection, ParamDirectionAttr
from pypto.dialects.program import param_directions

from .base import PyPTOPass
from .init_memref import functions
from .registry import register_pass

ARG_DIRECTIONS = "pl.arg_directions"
"""The discardable attribute on ``func.call`` this pass writes."""

UPSTREAM_ADIR: dict[ParamDirection, str] = {
    ParamDirection.In: "input",
    ParamDirection.Out: "output_existing",
    ParamDirection.InOut: "inout",
}
"""How upstream's dumps spell each direction (``pl.adir.<name>``)."""


def call_directions(call: func.CallOp) -> list[ParamDirection] | None:
    """The recorded argument directions of a call (None if not derived)."""
    a = call.attributes.get(ARG_DIRECTIONS)
    if not isinstance(a, ArrayAttr):
        return None
    out: list[ParamDirection] = []
    for d in a.data:
        if isinstance(d, ParamDirectionAttr):
            out.append(d.data)
        else:  # upstream's spelling, as the front end parses a 38+ dump
            name = getattr(d, "data", "")
            out.append({v: k for k, v in UPSTREAM_ADIR.items()}.get(name, ParamDirection.In))
    return out


def derive_directions(module: ModuleOp) -> int:
    """Annotate every call to a function of ``module``; returns how many."""
    funcs = {f.sym_name.data: f for f in functions(module)}
    n = 0
    for f in funcs.values():
        for op in f.body.walk():
            if not isinstance(op, func.CallOp):
                continue
            callee = funcs.get(op.callee.root_reference.data)
            if callee is None:
                continue
            dirs = param_directions(callee)
            op.attributes[ARG_DIRECTIONS] = ArrayAttr([ParamDirectionAttr(d) for d in dirs])
            n += 1
    return n


@register_pass
@dataclass(frozen=True)
class DeriveCallDirections(PyPTOPass):
    """``pl.arg_directions`` on every call, from the callee's ``pl.dir``."""

    PASS_NAME = "DeriveCallDirections"
    name = "derive-call-directions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        derive_directions(op)
