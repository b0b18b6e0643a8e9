"""Symbol tables and the AST analyses that decide what a region carries out
(loop iter_args, ``pl.at`` results, ``if`` results)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from xdsl.ir import SSAValue

from pypto.dialects.dtypes import dtype_name
from pypto.dialects.types import DYNAMIC, TensorType, TileType

from . import dsl_objects as D
from .constexpr import ValueInfo


class Scope:
    """Python names -> SSA values, chained to the enclosing region's scope."""

    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self.vars: dict[str, SSAValue] = {}

    def lookup(self, name: str) -> SSAValue | None:
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        return None

    def assign(self, name: str, value: SSAValue) -> None:
        self.vars[name] = value

    def names(self) -> set[str]:
        out: set[str] = set()
        s: Scope | None = self
        while s is not None:
            out |= set(s.vars)
            s = s.parent
        return out


class ConstEnv(Mapping[str, Any]):
    """Names for the constant evaluator: a kernel value in scope shadows the
    module globals; tensor and tile values appear as :class:`ValueInfo`
    (so ``x.shape`` / ``x.dtype`` are constants), other values are absent."""

    def __init__(self, globals_: Mapping[str, Any], scope: Scope):
        self.globals = globals_
        self.scope = scope

    def __getitem__(self, name: str) -> Any:
        v = self.scope.lookup(name)
        if v is None:
            return self.globals[name]
        t = v.type
        if isinstance(t, (TensorType, TileType)):
            shape = list(t.get_shape())
            return ValueInfo(None if DYNAMIC in shape else shape, D.DTYPES[dtype_name(t.element_type)])
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.globals)

    def __len__(self) -> int:
        return len(self.globals)


def _target_names(t: ast.AST, out: list[str]) -> None:
    if isinstance(t, ast.Name):
        out.append(t.id)
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _target_names(e, out)
    elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
        out.append(t.value.id)  # ``out[:] = v`` rebinds ``out``
    elif isinstance(t, ast.Starred):
        _target_names(t.value, out)


def assigned_names(stmts: Iterable[ast.stmt]) -> list[str]:
    """Names (re)bound by these statements, nested bodies included, in order of
    first assignment. Loop variables of nested loops are local to them."""
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                _target_names(t, out)
        elif isinstance(s, (ast.AnnAssign, ast.AugAssign)):
            _target_names(s.target, out)
        elif isinstance(s, ast.For):
            inner = assigned_names(s.body)
            local: list[str] = []
            _target_names(s.target, local)
            out.extend(n for n in inner if n not in local)
        elif isinstance(s, ast.If):
            out.extend(assigned_names(s.body))
            out.extend(assigned_names(s.orelse))
        elif isinstance(s, ast.With):
            out.extend(assigned_names(s.body))
    seen: set[str] = set()
    return [n for n in out if not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]


def loaded_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name read anywhere in these nodes."""
    out: set[str] = set()
    for n in nodes:
        for sub in ast.walk(n):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                out.add(sub.id)
    return out


def must_defined(stmts: Iterable[ast.stmt]) -> set[str]:
    """Names these statements always assign: straight-line assignments, ``with`` bodies
    (which always run) and names both arms of an ``if`` assign; not names assigned only
    inside a loop or in one branch."""
    defined: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.With):
            defined |= must_defined(s.body)
        elif isinstance(s, ast.If) and s.orelse:
            defined |= must_defined(s.body) & must_defined(s.orelse)
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            defined |= set(assigned_names([s]))
    return defined


def upward_exposed(stmts: Iterable[ast.stmt]) -> set[str]:
    """Names these statements may read before assigning them (the names live
    at their entry, e.g. at a loop's back edge). Loops and branches are looked
    into: a name a loop body assigns before reading it is not exposed by the
    loop (a later scope reusing a name does not keep an earlier value alive)."""
    defined: set[str] = set()
    exposed: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.With):
            reads = loaded_names(s.items) | upward_exposed(s.body)
        elif isinstance(s, ast.For):
            targets = {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
            reads = loaded_names([s.iter]) | (upward_exposed(s.body) - targets) | upward_exposed(s.orelse)
        elif isinstance(s, ast.While):
            reads = loaded_names([s.test]) | upward_exposed(s.body) | upward_exposed(s.orelse)
        elif isinstance(s, ast.If):
            reads = loaded_names([s.test]) | upward_exposed(s.body) | upward_exposed(s.orelse)
        else:
            reads = loaded_names([s])
            if isinstance(s, ast.AugAssign):
                reads |= set(assigned_names([s]))
        exposed |= reads - defined
        defined |= must_defined([s])
    return exposed


def set_name(v: SSAValue, name: str) -> None:
    """Give ``v`` the name hint ``name``. xDSL drops a trailing ``_<digits>``
    (``mem_vec_3`` -> ``mem_vec``), as its MLIR parser does, so both text forms
    agree; an alloc keeps its full name in its ``base`` property. A Python name
    xDSL refuses (one that starts with a letter outside ASCII: ``变量``) is given
    its :func:`ascii_name`; ``données`` stays as written, as the dumps print it."""
    v.name_hint = name if SSAValue.is_valid_name(name) else ascii_name(name)


_MLIR_NAME = re.compile(r"[A-Za-z_$.-][A-Za-z0-9_$.-]*")
"""A value name MLIR's text (and xDSL) takes as it is."""


def ascii_name(name: str) -> str:
    """``name`` with each character MLIR's value names cannot hold spelled ``u<hex code point>``
    (``变量`` -> ``u53d8u91cf``): Python identifiers may be any Unicode letters, MLIR's are ASCII."""
    spelled = "".join(c if c.isascii() and (c.isalnum() or c in "_$.-") else f"u{ord(c):x}" for c in name)
    return spelled if _MLIR_NAME.fullmatch(spelled) else f"_{spelled}"
