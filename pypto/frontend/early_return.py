"""Early returns from ``if`` branches (upstream's ``if my_rank == root: ...; return x`` then ``return out``),
rewritten before the body is built into one ``if``/``else`` that assigns the result and one final
``return``: the statements after the ``if`` become its ``else`` branch.

Only a function body whose every path ends in a ``return`` of the same arity is rewritten; anything else
is left as written (and a ``return`` inside an ``if`` stays the located error it was)."""

from __future__ import annotations

import ast

RESULT = "result"
"""The prefix of the names the rewritten branches assign (``result_0``, ...: safe to reuse, as they are assigned only where a return was)."""


def lift_returns(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with early returns out of top-level ``if`` statements folded into one final return."""
    if not any(isinstance(s, ast.If) and _returns_inside(s) for s in body):
        return body
    arity = _arity(body)
    if arity is None:
        return body
    assigned = _assign_results(body, arity)
    if assigned is None:
        return body
    last = body[-1]
    names = [ast.Name(f"{RESULT}_{k}", ast.Load()) for k in range(arity)]
    value: ast.expr | None = None if arity == 0 else names[0] if arity == 1 else ast.Tuple(names, ast.Load())
    ret = ast.Return(value)
    for n in (ret, *names, *([value] if isinstance(value, ast.Tuple) else [])):
        ast.copy_location(n, last)
        n.end_lineno, n.end_col_offset = last.end_lineno, last.end_col_offset
    return [*assigned, ret]


def _returns_inside(s: ast.If) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(s))


def _arity(body: list[ast.stmt]) -> int | None:
    """How many values every ``return`` of ``body`` gives (None when they differ or a path can fall off)."""
    found: set[int] = set()
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            return None
        if isinstance(n, ast.Return):
            found.add(0 if n.value is None else len(n.value.elts) if isinstance(n.value, ast.Tuple) else 1)
    return found.pop() if len(found) == 1 else None


def _assign_results(body: list[ast.stmt], arity: int) -> list[ast.stmt] | None:
    """``body`` (which must end in a return on every path) with each return turned into assignments of
    the result names; an ``if`` holding a return takes the statements after it as its ``else``."""
    out: list[ast.stmt] = []
    for i, s in enumerate(body):
        if isinstance(s, ast.Return):
            return [*out, *_assign(s, arity)] if i == len(body) - 1 else None
        if isinstance(s, ast.If) and _returns_inside(s):
            rest = body[i + 1 :]
            then = _assign_results(s.body, arity) if _ends_in_return(s.body) else None
            if then is None:
                return None
            orelse = _assign_results([*s.orelse, *rest], arity)
            if orelse is None:
                return None
            new = ast.If(s.test, then, orelse)
            return [*out, ast.copy_location(new, s)]
        if any(isinstance(n, ast.Return) for n in ast.walk(s)):
            return None  # a return inside a loop or scope: not rewritten
        out.append(s)
    return None


def _ends_in_return(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _ends_in_return(last.body) and _ends_in_return(last.orelse)


def _assign(ret: ast.Return, arity: int) -> list[ast.stmt]:
    """``return a, b`` -> ``result_0 = a`` and ``result_1 = b``."""
    if arity == 0:
        return []
    assert ret.value is not None
    values = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
    stmts: list[ast.stmt] = []
    for k, v in enumerate(values):
        target = ast.copy_location(ast.Name(f"{RESULT}_{k}", ast.Store()), v)
        stmts.append(ast.copy_location(ast.Assign([target], v), ret))
    return stmts
