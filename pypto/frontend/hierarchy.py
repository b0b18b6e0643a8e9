"""``with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):`` in a HOST orchestrator: outlined into a
chip orchestration function (upstream's OutlineHierarchyScopes, done here on the syntax tree).

A HOST orchestrator runs on the host (:mod:`pypto.driver.host_trace`), so a chip scope in its body cannot
run there: each one becomes an ``Orchestration`` function of the program, named as upstream names an
outlined Hierarchy scope (``{host}_chip_orch_{k}``, or ``name_hint=``), whose parameters are the tensors the
scope reads or writes (the orchestrator's parameters, in its order and with its annotations: one the scope writes with
``pl.assemble`` / ``pl.store`` / ``x[...] =`` / ``pl.write`` is ``pl.Out`` or ``pl.InOut``, any other one an
input). The scope itself becomes a dispatch ``self.{name}(...)`` (round-robin over the chips, as any
dispatch without ``device=``), and a name it assigns that is used after it (``out = pl.assemble(buf, ...)``)
is the written parameter it stands for. The rewritten orchestrator is what runs on the host.
"""

from __future__ import annotations

import ast
import copy
import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pypto.dialects.enums import FunctionType, Level, Role
from pypto.errors import InvalidOperationError, ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.target.dtypes import ROWS

from .constexpr import NotConstant, evaluate
from .scopes import assigned_names, upward_exposed
from .source import Source, dotted

if TYPE_CHECKING:
    from .builder import FunctionInfo

WRITERS: dict[str, int] = {"pl.assemble": 0, "pl.tensor.assemble": 0, "pl.store": 2, "pl.tile.store": 2,
                           "pl.write": 0, "pl.tensor.write": 0}  # fmt: skip
"""DSL calls that write into a tensor argument: call path -> the position of that argument."""


@dataclass(frozen=True)
class AtArgs:
    """What a ``pl.at(...)`` call says about its level and role (its other keywords are the parser's)."""

    level: Level
    role: Role | None
    name_hint: str | None


def at_args(call: ast.Call, src: Source) -> AtArgs:
    """``pl.at(level, role)`` / ``pl.at(level=..., role=..., name_hint=...)``, checked as upstream checks them:
    at most two positional arguments, each once, ``role=`` not at ``CORE_GROUP``, no inline ``SubWorker``."""
    if len(call.args) > 2:
        raise src.error(ParserSyntaxError, f"pl.at() takes at most 2 positional arguments, got {len(call.args)}",
                        call, hint="use pl.at(level) or pl.at(level, role)")
    given: dict[str, ast.expr] = dict(zip(("level", "role"), call.args, strict=False))
    for k in call.keywords:
        if k.arg in ("level", "role", "name_hint"):
            if k.arg in given:
                raise src.error(ParserSyntaxError, f"pl.at() got multiple values for argument '{k.arg}'", k.value)
            given[k.arg] = k.value
    if "level" not in given:
        raise src.error(ParserSyntaxError, "pl.at() requires a level argument", call,
                        hint="pl.at(level=pl.Level.CORE_GROUP) for device work")  # fmt: skip
    values: dict[str, Any] = {}
    for name, node in given.items():
        try:
            values[name] = evaluate(node, src.globals)
        except NotConstant as e:
            raise src.error(ParserTypeError, f"pl.at {name} must be a constant: {e.message}", e.node) from None
    level, role, hint = values["level"], values.get("role"), values.get("name_hint") or None
    if not isinstance(level, Level):
        raise src.error(ParserTypeError, "pl.at level must be a pl.Level member", given.get("level", call))
    if role is not None and not isinstance(role, Role):
        raise src.error(ParserTypeError, "pl.at role must be a pl.Role member", given["role"])
    if hint is not None:
        hint = scope_name_hint(hint, given["name_hint"], src, "pl.at", kernel=level is Level.CORE_GROUP)
    if level is Level.CORE_GROUP and role is not None:
        raise src.error(ParserSyntaxError, "role= is not supported with level=pl.Level.CORE_GROUP", given["role"],
                        hint="drop role= for an InCore scope, or use pl.at(level=pl.Level.CHIP, role=...)")
    if role is Role.SubWorker:
        raise src.error(ParserSyntaxError, "inline 'with pl.at(..., role=pl.Role.SubWorker)' is not supported",
                        given["role"], hint="declare a SubWorker with @pl.function(level=pl.Level.HOST, "
                        "role=pl.Role.SubWorker) inside the @pl.program")  # fmt: skip
    return AtArgs(level, role, hint)


CPP_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
    co_await co_return co_yield compl concept const const_cast consteval constexpr constinit continue decltype
    default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
    int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
    this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
    while xor xor_eq""".split())
"""The keywords and alternative tokens of C++20: a kernel's name is its function's name in the C++ that
ptoas generates, where a keyword cannot name a function ('void void(...)': "expected unqualified-id")."""

CPP_TAKEN = frozenset({"main", "pto", "std"} | {r.cxx for r in ROWS if r.cxx is not None}) - CPP_KEYWORDS
"""Names a kernel's C++ already gives a meaning at file scope: ``main`` (a function returning int),
the namespaces ``pto`` and ``std``, and the C++ element types (``int64_t``, ``half``, ...); a kernel of
that name is "redeclared as different kind of entity"."""


def cpp_kernel_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a kernel in its C++ (None if it can)."""
    if name in CPP_KEYWORDS:
        return f"'{name}' is a C++ keyword"
    if name in CPP_TAKEN:
        return f"'{name}' is already declared in every kernel's C++ (main, the namespaces pto and std, the element types)"
    return None


def scope_name_hint(value: Any, node: ast.expr, src: Source, what: str, kernel: bool = True) -> str | None:
    """A scope's ``name_hint=`` (the outlined function's name): a string that is an identifier and not a
    Python keyword, as upstream requires (``""`` is no hint). The name is the function's name in the dumps
    (which must parse back) and, for a ``kernel`` (a ``CORE_GROUP`` scope, a ``pl.spmd`` launch), the
    kernel's in its C++, so not a C++ keyword either (nor a name that C++ already declares)."""
    if value == "":
        return None
    if not isinstance(value, str) or not value.isidentifier() or keyword.iskeyword(value):
        raise src.error(ParserTypeError, f"{what} name_hint must be a valid non-keyword identifier, got {value!r}",
                        node, hint='e.g. name_hint="fused_add"')  # fmt: skip
    problem = cpp_kernel_name_problem(value) if kernel else None
    if problem is not None:
        raise src.error(ParserTypeError, f"{what} name_hint is the kernel's name in its C++, and {problem}", node,
                        hint=f'e.g. name_hint="{value}_kernel"')  # fmt: skip
    return value


def chip_scope_call(s: ast.stmt) -> ast.Call | None:
    """The ``pl.at(...)`` call of ``with pl.at(...):`` at a level other than ``CORE_GROUP``, else None."""
    if not isinstance(s, ast.With) or len(s.items) != 1:
        return None
    call = s.items[0].context_expr
    if not (isinstance(call, ast.Call) and dotted(call.func) == "pl.at"):
        return None
    level = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "level"), None)
    return call if level is not None and dotted(level) not in (None, "pl.Level.CORE_GROUP") else None


@dataclass
class Outlined:
    """A HOST orchestrator with its chip scopes outlined."""

    host: ast.FunctionDef
    """The orchestrator, each chip scope replaced by its dispatch."""
    chips: list[tuple[ast.FunctionDef, FunctionInfo]] = field(default_factory=list)
    """The chip orchestration functions, in source order."""


def _param_annotations(fdef: ast.FunctionDef) -> dict[str, ast.expr | None]:
    args = fdef.args.posonlyargs + fdef.args.args
    return {a.arg: a.annotation for a in args[1:]}  # after ``self``


def _written(body: list[ast.stmt]) -> set[str]:
    """Names of tensors the statements write into (``pl.assemble(x, ...)``, ``pl.store(v, offs, x)``,
    ``pl.store(..., output_tensor=x)``, ``x[...] = v``)."""
    out: set[str] = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Call):
            pos = WRITERS.get(dotted(node.func) or "")
            if pos is not None and len(node.args) > pos and isinstance(node.args[pos], ast.Name):
                out.add(node.args[pos].id)
            for k in node.keywords:
                if k.arg == "output_tensor" and isinstance(k.value, ast.Name):
                    out.add(k.value.id)
        elif isinstance(node, ast.Assign | ast.AugAssign):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.add(t.value.id)
    return out


def _aliases(body: list[ast.stmt]) -> dict[str, str]:
    """``y = pl.assemble(x, ...)`` / ``y = pl.store(v, offs, x)`` / ``y = x``: ``y`` stands for ``x``."""
    out: dict[str, str] = {}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if not (isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        v, src_name = node.value, None
        if isinstance(v, ast.Name):
            src_name = v.id
        elif isinstance(v, ast.Call):
            pos = WRITERS.get(dotted(v.func) or "")
            if pos is not None and len(v.args) > pos and isinstance(v.args[pos], ast.Name):
                src_name = v.args[pos].id
            kw = next((k.value for k in v.keywords if k.arg == "output_tensor"), None)
            if isinstance(kw, ast.Name):
                src_name = kw.id
        if src_name is not None:
            out[targets[0].id] = out.get(src_name, src_name)
    return out


def _direction(ann: ast.expr | None, written: bool) -> ast.expr | None:
    """The parameter annotation of an outlined chip function: the orchestrator's, ``pl.Out``/``pl.InOut``
    kept for a written tensor (``pl.InOut`` added to an unmarked one), dropped for one only read."""
    if ann is None:
        return None
    wrapped = isinstance(ann, ast.Subscript) and dotted(ann.value) in ("pl.Out", "pl.InOut")
    inner = ann.slice if wrapped else ann  # type: ignore[union-attr]
    if not written:
        return copy.deepcopy(inner)
    if wrapped:
        return copy.deepcopy(ann)
    marker = ast.Attribute(value=ast.Name(id="pl", ctx=ast.Load()), attr="InOut", ctx=ast.Load())
    return ast.Subscript(value=marker, slice=copy.deepcopy(inner), ctx=ast.Load())


class _Outliner:
    def __init__(self, fdef: ast.FunctionDef, src: Source):
        self.fdef, self.src = fdef, src
        self.params = _param_annotations(fdef)
        self.alias: dict[str, str] = {}  # a host local -> the parameter it stands for (a chip scope's result)
        self.chips: list[tuple[ast.FunctionDef, FunctionInfo]] = []

    def stmts(self, body: list[ast.stmt], live_after: set[str]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, s in enumerate(body):
            live = upward_exposed(body[i + 1:]) | live_after
            call = chip_scope_call(s)
            if call is not None:
                out.extend(self.outline(s, call, live))  # type: ignore[arg-type]
                continue
            if isinstance(s, ast.For | ast.While):
                back = live | upward_exposed(s.body)
                s.body = self.stmts(s.body, back)
                s.orelse = self.stmts(s.orelse, live)
            elif isinstance(s, ast.If):
                s.body, s.orelse = self.stmts(s.body, live), self.stmts(s.orelse, live)
            elif isinstance(s, ast.With):
                s.body = self.stmts(s.body, live)
            out.append(s)
        return out

    def param_of(self, name: str) -> str | None:
        name = self.alias.get(name, name)
        return name if name in self.params else None

    def outline(self, s: ast.With, call: ast.Call, live: set[str]) -> list[ast.stmt]:
        args = at_args(call, self.src)
        if args.level is not Level.CHIP or args.role not in (None, Role.Orchestrator):
            raise self.src.error(
                UnsupportedFeatureError,
                f"a HOST orchestrator's pl.at scope runs on a chip: expected level=pl.Level.CHIP, "
                f"role=pl.Role.Orchestrator, got level={args.level}" + (f", role={args.role}" if args.role else ""),
                call)  # fmt: skip
        if s.items[0].optional_vars is not None:
            raise self.src.error(UnsupportedFeatureError, "'with pl.at(level=pl.Level.CHIP) as ...' is not supported",
                                 s.items[0].optional_vars)  # fmt: skip
        name = args.name_hint or f"{self.fdef.name}_chip_orch_{len(self.chips)}"
        assigned = set(assigned_names(s.body))
        reads = upward_exposed(s.body)
        written = _written(s.body)
        local_names = set(assigned_names(self.fdef.body)) | set(self.params)
        order = list(self.params)
        captured: list[str] = []
        def position(n: str) -> tuple[int, str]:  # the orchestrator's parameter order
            p = self.param_of(n)
            return (order.index(p) if p is not None else -1, n)

        for n in sorted((reads | written) - assigned, key=position):
            if n not in local_names:
                continue  # a module-level name: the outlined function sees the same globals
            if self.param_of(n) is None:
                raise self.src.error(
                    UnsupportedFeatureError,
                    f"the pl.at(level=pl.Level.CHIP) scope uses '{n}', which is neither a parameter of the HOST "
                    f"orchestrator '{self.fdef.name}' nor a tensor an earlier chip scope wrote", s)  # fmt: skip
            captured.append(n)
        results: list[tuple[str, str]] = []
        aliases = _aliases(s.body)
        for n in sorted(assigned & live):
            target = aliases.get(n)
            if target is None or target not in captured:
                raise self.src.error(
                    UnsupportedFeatureError,
                    f"'{n}' is computed inside the pl.at(level=pl.Level.CHIP) scope and used after it: only a "
                    "tensor the scope writes into (pl.assemble / pl.store into a parameter) leaves a chip scope", s)
            results.append((n, target))
        from .builder import FunctionInfo  # noqa: PLC0415 - the builder imports this module's checks

        self.chips.append((self.function(name, s, captured, written), FunctionInfo(
            FunctionType.Orchestration, Level.CHIP, Role.Orchestrator)))
        dispatch = ast.Expr(ast.Call(
            func=ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=name, ctx=ast.Load()),
            args=[ast.Name(id=n, ctx=ast.Load()) for n in captured], keywords=[]))  # fmt: skip
        out: list[ast.stmt] = [dispatch]
        for n, target in results:
            out.append(ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Name(id=target, ctx=ast.Load())))
            self.alias[n] = self.alias.get(target, target)
        for node in out:
            ast.copy_location(node, s)
            ast.fix_missing_locations(node)
        return out

    def function(self, name: str, s: ast.With, captured: list[str], written: set[str]) -> ast.FunctionDef:
        params = [ast.arg(arg="self")]
        for n in captured:
            ann = self.params[self.param_of(n) or n]
            params.append(ast.arg(arg=n, annotation=_direction(ann, n in written)))
        fdef = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=copy.deepcopy(s.body), decorator_list=[], returns=None, type_params=[])  # fmt: skip
        ast.copy_location(fdef, s)
        for a in params:
            ast.copy_location(a, s)
        ast.fix_missing_locations(fdef)
        return fdef


def has_chip_scopes(fdef: ast.FunctionDef) -> bool:
    """The function's body holds a ``with pl.at(level=...)`` at a level other than ``CORE_GROUP``."""
    return any(chip_scope_call(n) is not None for n in ast.walk(fdef) if isinstance(n, ast.stmt))


def outline_chip_scopes(fdef: ast.FunctionDef, src: Source) -> Outlined:
    """The HOST orchestrator ``fdef`` with its chip scopes outlined (see the module docstring)."""
    o = _Outliner(fdef, src)
    host = copy.copy(fdef)
    host.body = o.stmts(copy.deepcopy(fdef.body), set())
    if not o.chips:
        return Outlined(fdef)
    if not host.body:
        host.body = [ast.copy_location(ast.Pass(), fdef)]
    return Outlined(host, o.chips)


def host_function(fdef: ast.FunctionDef, src: Source) -> Callable[..., Any]:
    """The Python function of the rewritten orchestrator ``fdef`` (its own file and lines, the source's
    globals), which :mod:`pypto.driver.host_trace` runs in place of the class's method."""
    node = copy.copy(fdef)
    node.decorator_list = []
    module = ast.Module(body=[node], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace: dict[str, Any] = {}
    exec(compile(module, src.filename, "exec"), src.globals, namespace)  # noqa: S102 - the user's own source
    return namespace[fdef.name]


def reject_chip_scope(call: ast.Call, src: Source, where: str) -> None:
    """A located error for a ``pl.at`` scope above ``CORE_GROUP`` outside a HOST orchestrator."""
    args = at_args(call, src)
    if args.level in (Level.AIV, Level.AIC):  # below CORE_GROUP: the compiler places the AIC / AIV work
        raise src.error(InvalidOperationError,
                        f"pl.at(level={args.level}) is not supported: a device region is "
                        "pl.at(level=pl.Level.CORE_GROUP), whose work the compiler splits between AIC and AIV",
                        call, hint="use pl.at(level=pl.Level.CORE_GROUP) for an InCore scope")  # fmt: skip
    raise src.error(InvalidOperationError,
                    f"pl.at(level={args.level}) is a hierarchy scope: it is outlined from a HOST orchestrator "
                    f"(@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)), not from {where}", call,
                    hint="use pl.at(level=pl.Level.CORE_GROUP) for an InCore scope")  # fmt: skip
