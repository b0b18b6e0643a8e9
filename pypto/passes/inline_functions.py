"""InlineFunctions: functions of type Inline are spliced into their callers.

Upstream's pass 01 replaces every call of a ``FunctionType.Inline`` function
(``@pl.function(type=pl.FunctionType.Inline)``, ``@pl.jit.inline``) by the
callee's body -- parameters bound to the call's arguments, the call's results
bound to the returned values (which take the caller's variable names) -- and
then removes the Inline functions from the
program. Here: each ``func.call`` of an Inline ``func.func`` is replaced by a
clone of the callee's body (locations and name hints kept, so ConvertToSSA
versions the inlined names like the caller's), repeatedly, so that Inline
functions calling Inline functions are inlined too; a recursive Inline
function is a user error. Calls to other functions are left alone.

Selective args dump: an argument the Inline call marks (``pl.dump_tag(x)``
before ``self.helper(x)``, the call's ``pl.dump_vars``) is marked on every
kernel call and CORE_GROUP ``pl.at`` scope of the spliced body that receives
it, as upstream's InlineFunctions transfers ``dump_vars``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from pypto.diagnostics import error_at
from pypto.dialects.enums import FunctionType, Level
from pypto.dialects.program import AtOp, call_dump_indices, function_type, mark_dump_values

from .base import PyPTOPass, is_inside
from .registry import register_pass


def inline_call(call: func.CallOp, callee: func.FuncOp) -> None:
    """Replace ``call`` by a copy of ``callee``'s (single-block) body."""
    if len(callee.body.blocks) != 1:
        raise error_at(callee, f"Inline function '{callee.sym_name.data}' must have a single-block body")
    body = callee.body.block
    block = call.parent_block()
    assert block is not None
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, call.arguments, strict=True))
    returned: list[SSAValue] = []
    created: set[SSAValue] = set()
    marked = [call.arguments[i] for i in call_dump_indices(call)]
    for op in body.ops:
        if isinstance(op, func.ReturnOp):
            returned = [mapping.get(v, v) for v in op.arguments]
            break
        clone = op.clone(mapping)
        created.update(clone.results)
        block.insert_op_before(clone, call)
        if marked:
            transfer_dump_marks(clone, marked)
    for result, value in zip(call.res, returned, strict=True):
        # The caller's variable names the value the inlined body returns.
        if result.name_hint and value in created:
            value.name_hint = result.name_hint
        result.replace_all_uses_with(value)
    call.detach()
    call.erase()


def transfer_dump_marks(root: Operation, marked: list[SSAValue]) -> None:
    """Mark ``marked`` on the kernel calls and CORE_GROUP scopes in ``root`` that receive them."""
    for op in root.walk():
        if isinstance(op, func.CallOp):
            mark_dump_values(op, marked)
        elif isinstance(op, AtOp) and op.scope_level is Level.CORE_GROUP:
            used = {v for inner in op.walk() if inner is not op for v in inner.operands if not is_inside(v, op)}
            extra = [v for v in marked if v in used and v not in op.dumps]
            if extra:
                op.operands = [*op.dumps, *extra]


@register_pass
@dataclass(frozen=True)
class InlineFunctions(PyPTOPass):
    """Splice ``FunctionType.Inline`` functions into their callers, then drop them."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline = {
            f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp) and function_type(f) is FunctionType.Inline
        }
        if not inline:
            return
        # Callees first: an Inline function's own Inline calls are expanded
        # before it is copied anywhere; a cycle is a user error.
        done: set[str] = set()

        def expand(name: str, path: tuple[str, ...]) -> None:
            if name in done:
                return
            if name in path:
                raise error_at(inline[name], f"Inline function '{name}' is recursive ({' -> '.join((*path, name))})")
            for call in _inline_calls(inline[name], inline):
                expand(call.callee.root_reference.data, (*path, name))
                inline_call(call, inline[call.callee.root_reference.data])
            done.add(name)

        for name in sorted(inline):
            expand(name, ())
        for f in [f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data not in inline]:
            for call in _inline_calls(f, inline):
                inline_call(call, inline[call.callee.root_reference.data])
        for f in inline.values():
            f.detach()
            f.erase()


def _inline_calls(f: func.FuncOp, inline: dict[str, func.FuncOp]) -> list[func.CallOp]:
    return [c for c in f.walk() if isinstance(c, func.CallOp) and c.callee.root_reference.data in inline]
