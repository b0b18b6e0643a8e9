"""Entry points: printed programs (``pl.parse``, ``pl.loads``) and decorated
Python classes/functions (``@pl.program``, ``@pl.function``)."""

from __future__ import annotations

import ast
import copy
import inspect
import linecache
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

from xdsl.ir import Attribute

from pypto.core.program import HostFunction, Program
from pypto.diagnostics import SourceSpan
from pypto.dialects.enums import Level, Role
from pypto.errors import (
    ArgumentTypeError,
    ParserError,
    ParserSyntaxError,
    ProgramCountError,
    PythonSyntaxError,
    UnsupportedFeatureError,
)
from pypto.utils.cli import utf8_fault
from pypto.utils.tracebacks import api_boundary

from .builder import FunctionInfo, ProgramBuilder, function_info
from .hierarchy import has_chip_scopes, host_function, outline_chip_scopes
from .source import Source, dotted


def _is_decorator(dec: ast.expr, name: str) -> bool:
    return dotted(dec.func if isinstance(dec, ast.Call) else dec) == name


def _is_jit(dec: ast.expr) -> bool:
    """``@pl.jit``, ``@pl.jit.incore``, ``@pl.jit(...)``..."""
    name = dotted(dec.func if isinstance(dec, ast.Call) else dec) or ""
    return name == "pl.jit" or name.startswith("pl.jit.")


def _syntax_tree(text: str, filename: str, lines: list[str]) -> ast.Module:
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as e:
        span = SourceSpan(filename, e.lineno or 1, e.offset or 1)
        raise PythonSyntaxError(f"invalid Python syntax: {e.msg}", span, source_lines=lines) from None


def program_from_class(
    cls_node: ast.ClassDef, src: Source, entry_types: tuple[str, dict[str, Attribute]] | None = None
) -> Program:
    """A ``@pl.program`` class -> Program (its ``@pl.function`` methods). ``entry_types``: one function's
    parameter types (by name) that its ``pl.dynamic`` dimensions bind to (:meth:`Program.specialize`)."""
    pb = ProgramBuilder(cls_node.name, src)
    hosts: list[str] = []
    defs: list[tuple[ast.FunctionDef, FunctionInfo]] = []
    for item in cls_node.body:
        if isinstance(item, ast.FunctionDef):
            dec = next((d for d in item.decorator_list if _is_decorator(d, "pl.function")), None)
            if dec is None:
                raise src.error(
                    ParserSyntaxError, f"method '{item.name}' of a @pl.program class needs @pl.function", item
                )
            defs.append((item, function_info(dec, src)))
        elif isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
            continue
        elif isinstance(item, ast.Pass):
            continue
        else:
            raise src.error(ParserSyntaxError, "a @pl.program class holds only @pl.function methods", item)
    subs = {f.name: is_abstract_body(f) for f, info in defs if is_host_sub_worker(info)}
    single_hosts: list[str] = []
    rewritten: dict[str, Any] = {}  # a HOST orchestrator whose chip scopes were outlined -> the function that runs
    for i, (item, info) in enumerate(list(defs)):
        if is_host_orchestrator(info) and has_chip_scopes(item):
            outlined = outline_chip_scopes(item, src)
            defs[i] = (outlined.host, info)
            defs[i + 1:i + 1] = outlined.chips
            rewritten[item.name] = host_function(outlined.host, src)
    for item, info in defs:
        if item.name in subs:  # a HOST callback: Python run by the L3 worker (pypto.driver.distributed)
            continue
        if is_multichip_host(item, info, subs):  # runs on the host at compile time: pypto.driver.host_trace
            hosts.append(item.name)
            continue
        if info.level is Level.HOST and info.role in (None, Role.Orchestrator):
            single_hosts.append(item.name)  # a single-chip HOST orchestrator: L3 with distributed_config=
        pb.add(item, info)
    if entry_types is not None:
        pb.bind_callees = True
        pb.function(*entry_types)  # built first, so its callees bind to its specialized types
    program = pb.build()
    program.host_orchestrators = {n: rewritten.get(n) for n in hosts}  # the others are filled in by @pl.program
    program.host_functions = {n: rewritten.get(n) for n in single_hosts}
    program.sub_workers = {n: HostFunction(n, None, abstract) for n, abstract in subs.items()}
    program.respecialize = lambda name, types: program_from_class(cls_node, src, (name, types))
    return program


def is_multichip_host(fdef: ast.FunctionDef, info: FunctionInfo, sub_workers: Any = ()) -> bool:
    """A HOST-level orchestrator that dispatches to ranks (its body uses ``pld`` or ``device=``, or calls
    a HOST ``SubWorker`` of the class)."""
    if info.level is not Level.HOST or info.role not in (None, Role.Orchestrator):
        return False
    body = ast.unparse(fdef)
    return "pld." in body or "device=" in body or any(f"self.{n}(" in body for n in sub_workers)


def is_host_orchestrator(info: FunctionInfo) -> bool:
    """``@pl.function(level=pl.Level.HOST[, role=pl.Role.Orchestrator])``: an orchestrator run on the host."""
    return info.level is Level.HOST and info.role in (None, Role.Orchestrator)


def is_host_sub_worker(info: FunctionInfo) -> bool:
    """``@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)``: a Python callback on the host."""
    return info.level is Level.HOST and info.role is Role.SubWorker


def is_abstract_body(fdef: ast.FunctionDef) -> bool:
    """The body is ``...`` (after an optional docstring): a callback bound at ``prepare(callbacks=)``.
    A bare ``pass`` is a concrete no-op, as upstream."""
    body = list(fdef.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and body[0].value.value is Ellipsis


def program_from_function(fdef: ast.FunctionDef, src: Source, dec: ast.expr) -> Program:
    pb = ProgramBuilder(fdef.name, src)
    info = function_info(dec, src)
    pb.add(fdef, info)
    program = pb.build()
    program.source_defs = {fdef.name: (fdef, info, src)}
    return program


@api_boundary
def parse(text: str, filename: str = "<string>") -> Program:
    """Parse printed DSL text (header, ``import``, one ``@pl.program`` class or
    one ``@pl.function``) into a Program; never executes it."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"pl.parse takes the program text (str), got {type(text).__name__}; use pl.loads for a path")
    lines = text.splitlines()
    tree = _syntax_tree(text, filename, lines)
    src = Source(filename, lines)
    found: list[tuple[ast.AST, ast.expr]] = []
    jits: list[ast.expr] = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            for d in node.decorator_list:
                if _is_decorator(d, "pl.program") or _is_decorator(d, "pl.function"):
                    found.append((node, d))
                elif _is_jit(d):
                    jits.append(d)
    if len(found) != 1:
        raise _program_count_error(src, found, jits)
    node, dec = found[0]
    if isinstance(node, ast.ClassDef):
        if not _is_decorator(dec, "pl.program"):
            raise src.error(ParserSyntaxError, "a class must be decorated with @pl.program", dec)
        return program_from_class(node, src)
    assert isinstance(node, ast.FunctionDef)
    return program_from_function(node, src, dec)


_NEEDS = "a pl file needs exactly one @pl.program class or one @pl.function"


def _program_count_error(src: Source, found: list[tuple[ast.AST, ast.expr]], jits: list[ast.expr]) -> ParserError:
    """The located error of a file without exactly one program: at the second
    program, else at a ``@pl.jit`` decorator, else at the file's first line."""
    if found:
        return src.error(
            ProgramCountError,
            f"{_NEEDS}, found {len(found)}",
            found[1][1],
            hint="put the functions in one @pl.program class",
        )
    if jits:
        return src.error(
            ProgramCountError,
            f"{_NEEDS}; a @pl.jit kernel is not a program until it is specialized on sample arguments",
            jits[0],
            hint="call the kernel (or kernel.compile(...)) with sample tensors and read the program it prints "
            "to passes_dump/00_frontend.py",
        )
    return ProgramCountError(f"{_NEEDS}, found none", SourceSpan(src.filename, 1, 1), source_lines=src.lines)


@api_boundary
def loads(path: str | Path) -> Program:
    """Parse a printed DSL file (bytes that are not UTF-8 are a located
    :class:`~pypto.errors.ParserSyntaxError`)."""
    p = Path(path)
    data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, col, fault = utf8_fault(data, e)
        raise ParserSyntaxError(
            f"the file is not UTF-8 text ({fault})",
            SourceSpan(str(p), line, col),
            hint="save the file as UTF-8",
        ) from None
    return parse(text, filename=str(p))


def check_decorated(obj: Any, decorator: str, *, want_class: bool = False, frame: Any = None) -> None:
    """``obj`` is what ``@<decorator>`` takes: a class (``want_class``) or a plain ``def`` (not a lambda,
    an ``async def``, a class or an object another decorator made); else a located ParserSyntaxError, at
    the decorator line of ``frame`` (the frame applying the decorator) or where ``obj`` is defined."""
    if want_class:
        ok = inspect.isclass(obj)
    else:
        ok = inspect.isfunction(obj) and obj.__name__ != "<lambda>" and not (
            inspect.iscoroutinefunction(obj) or inspect.isasyncgenfunction(obj)
        )
    if ok:
        return
    from .jit import JitKernel

    if isinstance(obj, (Program, JitKernel)):
        got, hint = "a DSL program or kernel", "apply one of @pl.program, @pl.function, @pl.jit once"
    elif inspect.isclass(obj):
        got, hint = f"class '{obj.__name__}'", "decorate a class with @pl.program"
    elif inspect.isfunction(obj) and obj.__name__ == "<lambda>":
        got, hint = "a lambda", "write the kernel as a def"
    elif inspect.isfunction(obj) and not want_class:
        got, hint = f"async def '{obj.__name__}'", "write the kernel as a plain def"
    elif inspect.isfunction(obj):
        got, hint = f"function '{obj.__name__}'", "use @pl.function, or put the function in a @pl.program class"
    else:
        got, hint = f"an object of type {type(obj).__name__}", None
    span = _definition_span(obj, frame)
    lines = [ln.rstrip("\n") for ln in linecache.getlines(span.filename)] if span is not None else None
    raise ParserSyntaxError(
        f"@{decorator} decorates a {'class' if want_class else 'def'}, not {got}", span, hint=hint, source_lines=lines
    )


def _definition_span(obj: Any, frame: Any) -> SourceSpan | None:
    """The decorator line being applied in ``frame``, else the first line of ``obj``'s definition."""
    if frame is not None:
        return SourceSpan(frame.f_code.co_filename, frame.f_lineno or 1, 1)
    defs = getattr(obj, "source_defs", None)
    if isinstance(defs, dict) and defs:
        fdef, _, src = next(iter(defs.values()))
        return src.span(fdef)
    code = getattr(getattr(obj, "fn", obj), "__code__", None)
    if code is not None:
        return SourceSpan(code.co_filename, code.co_firstlineno, 1)
    try:
        _, start = inspect.getsourcelines(obj)
        return SourceSpan(inspect.getsourcefile(obj) or "<unknown>", max(start, 1), 1)
    except (OSError, TypeError):
        return None


def python_source(obj: Any) -> tuple[ast.AST, Source]:
    """The AST of a decorated Python function/class with file line numbers and
    columns, and its Source (file lines for carets, globals for constants)."""
    try:
        filename = inspect.getsourcefile(obj) or "<unknown>"
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        code = getattr(obj, "__code__", None)
        where = code.co_filename if code is not None else getattr(inspect.getmodule(obj), "__name__", "<unknown>")
        line = code.co_firstlineno if code is not None else 1
        raise UnsupportedFeatureError(
            f"cannot read the source of '{getattr(obj, '__qualname__', obj)}' (defined in {where}): "
            "the DSL parses a kernel from its source file",
            SourceSpan(where, line, 1),
            hint="save the script to a .py file and run that (not python - or python -c)",
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    first = next((ln for ln in lines if ln.strip()), "")
    first_d = next((ln for ln in dedented.splitlines(True) if ln.strip()), "")
    col_offset = len(first) - len(first_d)
    tree = ast.parse(dedented, filename=filename)
    ast.increment_lineno(tree, max(start, 1) - 1)
    file_lines = [ln.rstrip("\n") for ln in linecache.getlines(filename)] or [ln.rstrip("\n") for ln in lines]
    fn = obj if inspect.isfunction(obj) else None
    env: dict[str, Any] = dict(getattr(fn, "__globals__", None) or vars(inspect.getmodule(obj) or object()))
    if fn is not None and fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=False):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    node = tree.body[0]
    canonical_dsl_names(node, env)
    return node, Source(filename, file_lines, col_offset, env)


DSL_MODULES = {"pypto.language": "pl", "pypto.language.distributed": "pld"}
"""The DSL modules by the name the front end reads them under (``pl.add``, ``pld.rank``)."""


def canonical_dsl_names(node: ast.AST, env: dict[str, Any]) -> None:
    """Spell the DSL the way the front end reads it, in place: a name bound to a DSL module under another
    name (``import pypto.language as pp``) becomes ``pl``, and a name bound to one of its members
    (``from pypto.language import FunctionType``, ``FP32``) becomes ``pl.<member>``. Only names the
    code reads and never assigns; the nodes keep their source positions. (They read as "is not a
    compile-time constant" before.)"""
    read, assigned = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (read if isinstance(n.ctx, ast.Load) else assigned).add(n.id)
        elif isinstance(n, ast.arguments):
            assigned.update(a.arg for a in [*n.args, *n.kwonlyargs])
    aliases: dict[str, ast.expr] = {}
    members: dict[int, tuple[str, str]] | None = None
    for name in read - assigned - set(DSL_MODULES.values()):
        value = env.get(name)
        if isinstance(value, types.ModuleType):
            if value.__name__ in DSL_MODULES:
                aliases[name] = ast.Name(DSL_MODULES[value.__name__], ast.Load())
            continue
        if value is None or isinstance(value, bool | int | float | str | bytes):
            continue
        if members is None:
            members = _dsl_members()
        if id(value) in members:
            canon, attr = members[id(value)]
            aliases[name] = ast.Attribute(ast.Name(canon, ast.Load()), attr, ast.Load())
    if aliases:
        _Respell(aliases).visit(node)


def _dsl_members() -> dict[int, tuple[str, str]]:
    """The public members of the DSL modules imported so far, by identity: ``(module's name, member)``."""
    members: dict[int, tuple[str, str]] = {}
    for module_name, canon in DSL_MODULES.items():
        module = sys.modules.get(module_name)
        for attr, value in vars(module).items() if module is not None else ():
            if not attr.startswith("_") and not isinstance(value, bool | int | float | str | bytes | type(None)):
                members.setdefault(id(value), (canon, attr))
    return members


class _Respell(ast.NodeTransformer):
    """Replace the names read that :func:`canonical_dsl_names` respells."""

    def __init__(self, spelled: dict[str, ast.expr]) -> None:
        self.spelled = spelled

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 (the ast visitor's name)
        spelled = self.spelled.get(node.id) if isinstance(node.ctx, ast.Load) else None
        if spelled is None:
            return node
        new = copy.deepcopy(spelled)
        for part in ast.walk(new):
            ast.copy_location(part, node)
            if hasattr(node, "end_col_offset"):
                part.end_lineno, part.end_col_offset = node.end_lineno, node.end_col_offset
        return new
