"""Warning checks on a program (pl-dsl.md §6 ``DiagnosticCheck``).

- ``UnusedVariable``: a value the user named is computed and never read
  (pure ops only: stores, assembles into tensors, calls and allocations have
  effects). Compiler-made names (``t__tile``, ``out__store``) are skipped.
- ``OutParamWriteDropped``: an ``Out``/``InOut`` parameter is never written
  in its function (``out = expr`` only rebinds the name, or it is returned as
  it came in); write with ``out[:] = expr``, ``pl.assemble`` or ``pl.store``.

Warnings run at the compile's ``diagnostic_phase`` (PRE_PIPELINE by default:
on the front end's program; POST_PASS: after every pass, into that pass's
``.log``).
"""

from __future__ import annotations

import linecache
import re

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from pypto.diagnostics import Diagnostic, Severity, SourceSpan, emit, op_span
from pypto.dialects.enums import ParamDirection
from pypto.dialects.op_base import PLOp
from pypto.dialects.op_facts import alias_operand, is_view, written_operands
from pypto.dialects.program import param_directions
from pypto.dialects.tensor_ops import TensorAssembleOp, TensorWriteOp
from pypto.dialects.tile_ops import TileAllocOp, TileStoreOp
from pypto.passes.base import base_name

UNUSED_VARIABLE = "UnusedVariable"
OUT_PARAM_WRITE_DROPPED = "OutParamWriteDropped"

_EFFECTFUL = (TileStoreOp, TensorAssembleOp, TensorWriteOp, TileAllocOp, func.CallOp)


def _user_name(v: SSAValue) -> str | None:
    """The user's variable name of ``v``, or None for compiler-made values."""
    if not v.name_hint:
        return None
    base = base_name(v.name_hint, "")
    return None if not base or "__" in base else base


def unused_variables(module: ModuleOp) -> list[tuple[Operation, str]]:
    """(op, name) of every user-named pure value nobody reads."""
    found: list[tuple[Operation, str]] = []
    for op in module.walk():
        if not isinstance(op, PLOp) or isinstance(op, _EFFECTFUL) or op.folded_by_front_end():
            continue  # (a folded value's uses are the constant the front end wrote in its place)
        for r in op.results:
            name = _user_name(r)
            if name is not None and not r.uses:
                found.append((op, name))
    return found


def _written(v: SSAValue) -> bool:
    """Whether tensor ``v`` is written: stored into, assembled into, written in place (an op whose
    result shares its buffer, not a view) or passed to a call, directly, through a loop carry or through a
    view of it (``pl.slice(out, ...)`` passed to a kernel writes ``out``)."""
    seen: set[SSAValue] = set()
    work = [v]
    while work:
        cur = work.pop()
        if cur in seen:
            continue
        seen.add(cur)
        for use in cur.uses:
            user = use.operation
            if isinstance(user, TileStoreOp) and use.index == len(user.operands) - 1:
                return True
            if isinstance(user, TensorAssembleOp) and use.index == 0:
                return True
            if any(getattr(user, f) is cur for f in written_operands(user)):
                return True  # an in-place write: pl.write, a pld signal or RMA target, a collective's signal
            if isinstance(user, func.CallOp):
                return True  # a kernel call writes its Out arguments
            if isinstance(user, scf.ForOp) and use.index >= 3:
                work.append(user.body.block.args[use.index - 2])  # the iter arg
            if is_view(user) and getattr(user, alias_operand(user) or "", None) is cur:
                work.extend(user.results)  # a write to the view is a write to its source
    return False


def dropped_out_params(module: ModuleOp) -> list[tuple[func.FuncOp, str]]:
    out: list[tuple[func.FuncOp, str]] = []
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or not f.body.blocks:
            continue
        for arg, d in zip(f.body.block.args, param_directions(f), strict=True):
            if d is not ParamDirection.In and not _written(arg):
                out.append((f, arg.name_hint or f"arg{arg.index}"))
    return out


def _name_span(span: SourceSpan | None, name: str) -> SourceSpan | None:
    """The span of ``name`` on the op's source line, left of the op (the
    assignment target), so the caret sits under the variable; else ``span``."""
    if span is None:
        return None
    line = linecache.getline(span.filename, span.line)
    pattern = rf"\b{re.escape(name)}\b"
    found = [m.start() for m in re.finditer(pattern, line[: max(span.col - 1, 0)])]
    found = found or [m.start() for m in re.finditer(pattern, line)]
    if not found:
        return span
    col = found[0] + 1
    return SourceSpan(span.filename, span.line, col, span.line, col + len(name))


def check_unused_variables(module: ModuleOp) -> None:
    for op, name in unused_variables(module):
        span = _name_span(op_span(op), name)
        emit(Diagnostic(Severity.WARNING, f"variable '{name}' is assigned but never used", span, rule=UNUSED_VARIABLE))


def _returned_as_is(f: func.FuncOp, hint: str) -> bool:
    """Whether ``f`` returns its parameter named ``hint`` itself (upstream's ``kernel_init_inplace``: ``return
    oi, li, mi`` with nothing written), rather than a value the name was rebound to."""
    args = [a for a in f.body.block.args if (a.name_hint or f"arg{a.index}") == hint]
    return any(isinstance(use.operation, func.ReturnOp) for a in args for use in a.uses)


def check_dropped_out_params(module: ModuleOp) -> None:
    for f, hint in dropped_out_params(module):
        name = base_name(hint, hint)
        why = "it is returned as it came in" if _returned_as_is(f, hint) else f"'{name} = ...' only rebinds the name"
        message = (
            f"Out parameter '{name}' of '{f.sym_name.data}' is never written: {why}; "
            f"write it with '{name}[:] = ...', pl.assemble or pl.store"
        )
        emit(Diagnostic(Severity.WARNING, message, _name_span(op_span(f), name), rule=OUT_PARAM_WRITE_DROPPED))
