"""Function extraction: the line range of each function in a snapshot.

Python snapshots: top-level functions and direct methods of top-level classes
(key ``name`` or ``Class.name``), decorators included, found with :mod:`ast`.
MLIR snapshots: ``func.func @name`` regions (key ``@name``, or
``@module::@name`` when several modules define the same name), found by brace
matching. ``None`` means the snapshot cannot be parsed safely.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Function:
    """One function: its key and its lines ``[start, end)`` (0-based)."""

    key: str
    start: int
    end: int


_ODD_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _node_range(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first - 1, node.end_lineno or node.lineno


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defs(body: list[ast.stmt], offset: int, prefix: str = "") -> list[Function]:
    """Functions of a statement list (and direct methods of its classes when top level)."""
    found: list[Function] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start, end = _node_range(node)
            found.append(Function(prefix + node.name, start + offset, end + offset))
        elif isinstance(node, ast.ClassDef) and not prefix:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    start, end = _node_range(item)
                    found.append(Function(f"{node.name}.{item.name}", start + offset, end + offset))
    return found


def _full(text: str) -> list[Function] | None:
    tree = _parse(text)
    return None if tree is None else _defs(tree.body, 0)


class _Unsafe(Exception):
    """The chunked parse cannot vouch for the result: parse the whole text."""


@functools.lru_cache(maxsize=16384)
def _chunk(text: str, prefix: str) -> tuple[Function, ...]:
    """Functions of one chunk (lines relative to it); ``_Unsafe`` when it does not parse."""
    tree = _parse(text)
    if tree is None:
        raise _Unsafe
    return tuple(_defs(tree.body, 0, prefix))


@functools.lru_cache(maxsize=4096)
def _class_name(header: str) -> str:
    tree = _parse(header + "\n    pass\n")
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.ClassDef):
        raise _Unsafe
    return tree.body[0].name


_CONTINUATION = ("else", "elif", "except", "finally", ")", "]", "}", "#")
_MEMBER = re.compile(r"^    (?:@|def |async def )")


def _starts(lines: list[str], lo: int, hi: int, indent: str, is_start: Callable[[str], bool]) -> list[int]:
    """Chunk start lines in ``[lo, hi)``: statement starts at ``indent``, decorators kept with their def."""
    out = [lo]
    prev_decorator = False
    for k in range(lo, hi):
        line = lines[k]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        start = is_start(line)
        if start and k > lo and not prev_decorator:
            out.append(k)
        prev_decorator = line.startswith(indent + "@")
    return out


def _shifted(fs: tuple[Function, ...], offset: int) -> list[Function]:
    return [Function(f.key, f.start + offset, f.end + offset) for f in fs]


def _class_chunk(lines: list[str], lo: int, hi: int, header: int) -> list[Function]:
    body = [k for k in range(header + 1, hi) if lines[k].strip() and not lines[k].lstrip().startswith("#")]
    if not lines[header].rstrip().endswith(":") or not body:
        raise _Unsafe
    if any(not lines[k].startswith("    ") for k in body) or lines[body[0]].startswith("     "):
        raise _Unsafe  # class body not indented by exactly four spaces
    starts = _starts(lines, header + 1, hi, "    ", lambda line: bool(_MEMBER.match(line)))
    members = starts if _MEMBER.match(lines[starts[0]]) else starts[1:]
    first = members[0] if members else hi
    name = _class_name("\n".join(lines[lo:first]))
    found: list[Function] = []
    for s, e in zip(members, [*members[1:], hi], strict=False):
        chunk = "\n".join(line[4:] for line in lines[s:e])
        found += _shifted(_chunk(chunk, f"{name}."), s)
    return found


def _chunked(lines: list[str]) -> list[Function]:
    """Functions found chunk by chunk (each top-level statement, each class member), cached by text."""
    starts = _starts(
        lines, 0, len(lines), "", lambda line: not line[0].isspace() and not line.startswith(_CONTINUATION)
    )
    found: list[Function] = []
    for lo, hi in zip(starts, [*starts[1:], len(lines)], strict=False):
        header = next((k for k in range(lo, hi) if lines[k].strip() and not lines[k].startswith(("@", "#"))), None)
        if header is not None and lines[header].startswith("class "):
            found += _class_chunk(lines, lo, hi, header)
        else:
            found += _shifted(_chunk("\n".join(lines[lo:hi]), ""), lo)
    return found


def python_functions(text: str) -> list[Function] | None:
    """Top-level functions and direct methods of top-level classes.

    Snapshots of one dump share most of their text, so each top-level
    statement and class member is parsed on its own and cached; anything the
    chunking cannot vouch for is parsed whole."""
    if _ODD_BREAKS.search(text):
        return None  # ast and str.splitlines would number lines differently
    lines = text.splitlines()
    try:
        found: list[Function] | None = _chunked(lines) if lines else []
    except _Unsafe:
        found = _full(text)
    return None if found is None else _unique(found)


_FUNC = re.compile(r"^\s*func\.func\s+(?:(?:public|private|nested)\s+)?@(\"(?:[^\"\\]|\\.)*\"|[\w$.\-]+)")
_MODULE = re.compile(r"^\s*(?:builtin\.)?module\s+@(\"(?:[^\"\\]|\\.)*\"|[\w$.\-]+)")


def _depth_change(line: str) -> int:
    """Net ``{`` minus ``}`` outside string literals and ``//`` comments."""
    depth = 0
    in_str = False
    k = 0
    n = len(line)
    while k < n:
        c = line[k]
        if in_str:
            if c == "\\":
                k += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "/" and line.startswith("//", k):
            break
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        k += 1
    return depth


def mlir_functions(text: str) -> list[Function] | None:
    """``func.func @name`` regions, keyed ``@name`` (qualified by module when ambiguous)."""
    lines = text.splitlines()
    found: list[tuple[str, str, int, int]] = []  # module, name, start, end
    modules: list[tuple[int, str]] = []  # (depth inside, name)
    depth = 0
    k = 0
    while k < len(lines):
        line = lines[k]
        m = _FUNC.match(line)
        if m:
            start, base = k, depth
            while True:
                depth += _depth_change(lines[k])
                if depth < base:
                    return None
                if depth == base:
                    break
                k += 1
                if k == len(lines):
                    return None
            found.append((modules[-1][1] if modules else "", m.group(1), start, k + 1))
            k += 1
            continue
        mod = _MODULE.match(line)
        depth += _depth_change(line)
        if depth < 0:
            return None
        if mod and depth > (modules[-1][0] if modules else 0):
            modules.append((depth, mod.group(1)))
        while modules and depth < modules[-1][0]:
            modules.pop()
        k += 1
    if depth != 0:
        return None
    names = [name for _, name, _, _ in found]
    out = [Function(f"@{name}" if names.count(name) == 1 else f"@{mod}::@{name}", s, e) for mod, name, s, e in found]
    return _unique(out)


def _unique(found: list[Function]) -> list[Function] | None:
    keys = [f.key for f in found]
    return found if len(set(keys)) == len(keys) else None


def extract(text: str, fmt: str) -> list[Function] | None:
    """The functions of a snapshot in format ``py`` or ``mlir``."""
    return mlir_functions(text) if fmt == "mlir" else python_functions(text)


def short_labels(keys: Iterable[str], fmt: str) -> dict[str, str]:
    """Display label per key: the short name unless two keys share it."""
    keys = sorted(set(keys))

    def short(key: str) -> str:
        return key.rsplit("::", 1)[-1] if fmt == "mlir" else key.rsplit(".", 1)[-1]

    count: dict[str, int] = {}
    for key in keys:
        count[short(key)] = count.get(short(key), 0) + 1
    return {key: short(key) if count[short(key)] == 1 else key for key in keys}


def lines_of(lines: Sequence[str], fn: Function) -> Sequence[str]:
    """The lines of ``fn``."""
    return lines[fn.start : fn.end]
