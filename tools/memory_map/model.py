"""The memory map model: on-chip tiles of a pass dump, their addresses and lifetimes.

How a dump becomes a map
------------------------
The dump is parsed twice, both times without executing it:

* ``pl.loads`` gives the IR. Every tile-typed SSA value (an op result, a
  function parameter, a loop iter-arg, a loop / ``if`` result) whose type
  carries a ``MemRef`` in an on-chip space is one *tile*. Its lifetime comes
  from the IR's data flow, not from text spans: it starts at its definition
  and ends at its last use; a use nested in a loop that the value was defined
  outside of keeps the value alive to that loop's end (it is read again by the
  next iteration): :class:`pypto.core.analysis.liveness.Liveness`, the one
  liveness MemoryReuse and ptoas ``plan-memory`` use, mapped to dump lines. Loop-carried values chain naturally: the init value dies at
  the ``for``, the iter-arg is born there, the yielded value dies at the
  ``pl.yield_`` that also defines the loop result.
* Python's ``ast`` gives the printed names and the statement spans. Every IR
  op carries its location (dump file line:column); a location is mapped to
  the statement that contains it, so a multi-line statement counts as one
  point in time and highlights all of its lines. The printed names (``t__tile_1``)
  come from the assignment targets of that statement, because xDSL name hints
  drop numeric suffixes.

Time is measured in dump lines: the map's vertical axis is the function's
printed text, one row a line, so the IR sits beside the picture.

Grouping (pl-dsl.md §8): values with the same (space, base, offset, size)
whose lifetimes touch or overlap are one *box* with aliases (in-place ops,
loop carries, ``if`` merges); disjoint lifetimes at the same address are
separate boxes (reuse). A box overlapping another box of the same base whose
range contains it is a *view* (drawn dashed). Boxes overlapping in address and
in time with different bases, or partially overlapping ones, are *conflicts*
(red); so is an alias whose buffer is redefined while an older alias is still
read later ("clobber").
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from pypto.core.analysis.liveness import Liveness, Use
from pypto.dialects.dtypes import dtype_name
from pypto.dialects.enums import MemorySpace
from pypto.dialects.types import DYNAMIC, TileType
from pypto.reports.cli import ReportError

SPACE_ORDER: tuple[str, ...] = ("Vec", "Mat", "Left", "LeftScale", "Right", "RightScale", "Acc", "Bias", "ScalarLocal")
"""Panel order (pl-dsl.md §8; ScalarLocal last, shown only when used)."""

KERNEL_TYPES = ("AIC", "AIV", "InCore")

BACKENDS: dict[str, str] = {
    "ascend910b": "Ascend910B",
    "a2a3": "Ascend910B",
    "a2a3sim": "Ascend910B",
    "ascend950": "Ascend950",
    "a5": "Ascend950",
    "a5sim": "Ascend950",
}
"""Accepted backend spellings (``-b`` and ``pto.target_arch``) -> backend name."""


class MemoryMapError(ReportError):
    """A dump the memory map cannot draw; the message is one line for the user."""


class UnassignedAddressesError(MemoryMapError):
    """The dump has MemRefs but no addresses yet (before AllocateMemoryAddr, or PTOAS planner)."""


@dataclass(frozen=True)
class Tile:
    """One SSA value with an on-chip MemRef."""

    name: str
    space: str
    base: str
    offset: int
    size: int
    shape: tuple[int | None, ...]
    dtype: str
    producer: str
    view: str
    start: int
    end: int
    def_lines: tuple[int, ...]
    use_lines: tuple[int, ...]


@dataclass
class Box:
    """One rectangle: an address range over one lifetime (aliases merged)."""

    id: str
    space: str
    base: str
    offset: int
    size: int
    start: int
    end: int
    members: list[Tile]
    kind: str = "tile"  # "tile" | "view"
    parent: str | None = None  # the containing box of a view
    conflicts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reuses: list[str] = field(default_factory=list)  # earlier boxes at an overlapping address

    @property
    def conflict(self) -> bool:
        return bool(self.conflicts or any(n.startswith("clobber") for n in self.notes))

    @property
    def label(self) -> str:
        return self.members[0].name


@dataclass
class SpaceMap:
    """One memory space of one kernel function."""

    space: str
    capacity: int | None
    boxes: list[Box]
    allocs: dict[str, int]  # base -> alloc line
    high_water: int = 0
    peak_bytes: int = 0
    peak_line: int = 0
    peak_boxes: list[str] = field(default_factory=list)
    holes: list[tuple[int, int]] = field(default_factory=list)

    @property
    def overflow(self) -> bool:
        return self.capacity is not None and self.high_water > self.capacity


@dataclass
class FunctionMap:
    """The on-chip memory of one kernel function."""

    name: str
    func_type: str
    first_line: int
    last_line: int
    spaces: list[SpaceMap]


@dataclass
class MemoryMap:
    """Everything the report shows about one dump."""

    dump: Path
    lines: list[str]
    short_lines: list[str]
    functions: list[FunctionMap]
    backend: str
    backend_assumed: bool
    backend_source: str


# --------------------------------------------------------------------------- text side (ast)


@dataclass
class _Text:
    """Statement spans and assignment targets of the dump text."""

    lines: list[str]
    stmt_span: dict[int, tuple[int, int]]  # any line -> (first, last) line of its statement
    targets: dict[int, list[str]]  # statement first line -> assigned names, in order
    params: dict[int, list[str]]  # def line -> parameter names (no self)
    short: list[str]


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names(elt)]
    return []


def _cut(line_text: str, cuts: list[tuple[int, int]]) -> str:
    for a, b in sorted(cuts, reverse=True):
        line_text = line_text[:a] + line_text[b:]
    return line_text


def _read_text(text: str, filename: str) -> _Text:
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as e:
        raise MemoryMapError(f"{filename}:{e.lineno}: not a Python pass dump: {e.msg}") from None
    lines = text.splitlines()
    span: dict[int, tuple[int, int]] = {}
    targets: dict[int, list[str]] = {}
    params: dict[int, list[str]] = {}
    cuts: dict[int, list[tuple[int, int]]] = {}

    def cut(node: ast.AST | None, lead: int) -> None:
        # drop ": <annotation>" when it sits on one line (the "short" IR view)
        if node is None or node.lineno != node.end_lineno:  # type: ignore[attr-defined]
            return
        start = node.col_offset - lead  # type: ignore[attr-defined]
        cuts.setdefault(node.lineno, []).append((start, node.end_col_offset))  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            first = node.lineno
            if isinstance(node, (ast.For, ast.If, ast.With, ast.While, ast.FunctionDef, ast.ClassDef)):
                # a compound statement is its header; ast.walk is breadth-first, so the
                # statements of the body (visited later) override these lines
                body0 = node.body[0] if node.body else None
                body_first = (
                    min([body0.lineno, *(d.lineno for d in getattr(body0, "decorator_list", []))])
                    if body0 is not None
                    else node.lineno + 1
                )
                first = min([first, *(d.lineno for d in getattr(node, "decorator_list", []))])
                last = max(node.lineno, body_first - 1)
            else:
                last = node.end_lineno or node.lineno
            for ln in range(first, last + 1):
                span[ln] = (first, last)
        if isinstance(node, ast.AnnAssign):
            targets[node.lineno] = _names(node.target)
            cut(node.annotation, 2)
        elif isinstance(node, ast.Assign):
            targets[node.lineno] = [n for t in node.targets for n in _names(t)]
        elif isinstance(node, ast.For):
            targets[node.lineno] = _names(node.target)
        elif isinstance(node, ast.FunctionDef):
            args = [a for a in node.args.args if a.arg != "self"]
            params[node.lineno] = [a.arg for a in args]
            for d in node.decorator_list:
                params.setdefault(d.lineno, [a.arg for a in args])
            for a in args:
                cut(a.annotation, 2)
    # The annotation cut starts at ": " before the annotation; guard against odd spacing.
    short = []
    for i, ln in enumerate(lines, start=1):
        ok = [(a, b) for a, b in cuts.get(i, []) if ln[a : a + 2] == ": "]
        short.append(_cut(ln, ok))
    return _Text(lines, span, targets, params, short)


# --------------------------------------------------------------------------- IR side


_LOC = re.compile(r":(\d+):(\d+)\)?\s*$")


def _line(op: Operation) -> int | None:
    """The dump line of ``op`` (read from its location, not its printed text: a file name that is not
    UTF-8 cannot be printed)."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return loc.line.data
    m = _LOC.search(str(loc))
    return int(m.group(1)) if m else None


def _space_name(space: MemorySpace) -> str:
    return space.value


def _on_chip(v: SSAValue) -> TileType | None:
    t = v.type
    if isinstance(t, TileType) and t.get_memref() is not None and t.memory_space != MemorySpace.DDR:
        return t
    return None


def _view_text(t: TileType) -> str:
    v = t.effective_view()
    implicit = "" if t.get_view() is not None else " (implicit)"
    return f"blayout={v.blayout.data.value}, slayout={v.slayout.data.value}, fractal={v.fractal.data}{implicit}"


def _dtype(t: TileType) -> str:
    try:
        return dtype_name(t.element_type)
    except ValueError:
        return str(t.element_type)


class _Function:
    """Lifetimes of the on-chip tiles of one ``func.func``."""

    def __init__(self, fn: func.FuncOp, text: _Text):
        self.fn = fn
        self.text = text
        self.liveness = Liveness(fn)
        self.def_line = self.stmt(_line(fn) or 1)
        lines = [ln for op in fn.walk() if (ln := _line(op)) is not None]
        self.first_line = min([self.text.stmt_span.get(self.def_line, (self.def_line, 0))[0], *lines])
        self.last_line = max([self.text.stmt_span.get(ln, (ln, ln))[1] for ln in lines] or [self.first_line])

    # -- positions

    def stmt(self, line: int) -> int:
        """The first line of the statement containing ``line``."""
        return self.text.stmt_span.get(line, (line, line))[0]

    def stmt_last(self, line: int) -> int:
        return self.text.stmt_span.get(line, (line, line))[1]

    def op_line(self, op: Operation) -> int:
        ln = _line(op)
        return self.stmt(ln) if ln is not None else self.def_line

    def region_end(self, op: Operation) -> int:
        """The last line of a region op (a loop's or ``if``'s last statement)."""
        ends = [self.stmt_last(ln) for inner in op.walk() if inner is not op and (ln := _line(inner)) is not None]
        return max(ends, default=self.op_line(op))

    def region_result_line(self, op: Operation) -> int:
        """Where a loop / ``if`` result is printed: its (last) ``pl.yield_`` line."""
        best = None
        for region in op.regions:
            for block in region.blocks:
                term = block.last_op
                if isinstance(term, scf.YieldOp) and (ln := _line(term)) is not None:
                    ln = self.stmt(ln)
                    if ln != self.op_line(op):
                        best = ln if best is None else max(best, ln)
        return best if best is not None else self.stmt(self.region_end(op))

    # -- values

    def definition(self, v: SSAValue) -> tuple[int, str, str]:
        """(line, printed name, producer) of ``v``."""
        if isinstance(v, OpResult):
            op = v.op
            if op.regions:
                line = self.region_result_line(op)
                producer = "loop result" if isinstance(op, scf.ForOp) else "if result"
            else:
                line = self.op_line(op)
                producer = op.name.removeprefix("pl.")
            names = self.text.targets.get(line, [])
            name = names[v.index] if len(names) == len(op.results) else (v.name_hint or f"%{v.index}")
            return line, name, producer
        assert isinstance(v, BlockArgument)
        owner = v.block.parent_op()
        if isinstance(owner, func.FuncOp):
            names = self.text.params.get(self.def_line, [])
            name = names[v.index] if v.index < len(names) else (v.name_hint or f"arg{v.index}")
            return self.def_line, name, "param"
        assert owner is not None
        line = self.op_line(owner)
        names = self.text.targets.get(line, [])
        name = names[v.index] if v.index < len(names) else (v.name_hint or f"arg{v.index}")
        return line, name, "iter_arg" if isinstance(owner, scf.ForOp) else "block arg"

    def use_point(self, use: Use) -> tuple[int, int]:
        """(printed line of the use, line up to which the use keeps its value alive:
        the end of the outermost loop around it that does not define the value)."""
        user = use.user
        if isinstance(user, scf.YieldOp) and (parent := user.parent_op()) is not None and parent.regions:
            line = self.region_result_line(parent) if parent.results else self.op_line(user)
        else:
            line = self.op_line(user)
        return line, max([self.stmt_last(line), *(self.region_end(loop) for loop in use.loops)])

    def tiles(self) -> list[Tile]:
        values: list[SSAValue] = list(self.fn.body.block.args) if self.fn.body.blocks else []
        for op in self.fn.walk():
            if op is self.fn:
                continue
            values.extend(op.results)
            for region in op.regions:
                for block in region.blocks:
                    values.extend(block.args)
        out: list[Tile] = []
        for v in values:
            t = _on_chip(v)
            if t is None:
                continue
            mr = t.get_memref()
            assert mr is not None
            line, name, producer = self.definition(v)
            # uses by ops outside the function body (detached leftovers of the parser) do not count
            uses = [self.use_point(use) for use in self.liveness.uses(v)]
            end = max([self.stmt_last(line), *(live for _, live in uses)])
            shape = tuple(None if d == DYNAMIC else d for d in t.get_shape())
            out.append(
                Tile(
                    name=name,
                    space=_space_name(t.memory_space),
                    base=mr.base.data,
                    offset=mr.offset.data,
                    size=mr.size.data,
                    shape=shape,
                    dtype=_dtype(t),
                    producer=producer,
                    view=_view_text(t),
                    start=line,
                    end=end,
                    def_lines=tuple(range(line, self.stmt_last(line) + 1)),
                    use_lines=tuple(sorted({ln for u, _ in uses for ln in range(u, self.stmt_last(u) + 1)} - {line})),
                )
            )
        out.sort(key=lambda t: (t.start, t.name))
        return out

    def allocs(self) -> dict[str, int]:
        """Alloc variable name -> line of its ``pl.tile.alloc`` (the prologue)."""
        found: dict[str, int] = {}
        for op in self.fn.walk():
            if op.name == "pl.tile.alloc":
                line = self.op_line(op)
                names = self.text.targets.get(line, [])
                if names:
                    found[names[0]] = line
        return found


# --------------------------------------------------------------------------- grouping


def _group(tiles: Sequence[Tile], space: str) -> list[Box]:
    """Alias groups of one space: same (base, offset, size), touching lifetimes."""
    by_key: dict[tuple[str, int, int], list[Tile]] = {}
    for t in tiles:
        by_key.setdefault((t.base, t.offset, t.size), []).append(t)
    boxes: list[Box] = []
    for (base, off, size), members in by_key.items():
        members = sorted(members, key=lambda t: (t.start, t.end, t.name))
        current: Box | None = None
        for t in members:
            if current is not None and t.start <= current.end:
                for m in current.members:
                    if m.start < t.start < m.end and t.producer not in ("iter_arg", "loop result", "if result"):
                        current.notes.append(
                            f"clobber: {t.name} (line {t.start}) overwrites {m.name}, still read until line {m.end}"
                        )
                current.members.append(t)
                current.end = max(current.end, t.end)
                continue
            current = Box(
                id="",
                space=space,
                base=base,
                offset=off,
                size=size,
                start=t.start,
                end=t.end,
                members=[t],
            )
            boxes.append(current)
    boxes.sort(key=lambda b: (b.start, b.offset, b.end, b.base, b.label))
    for i, b in enumerate(boxes):
        b.id = f"{space}-{i}"
    return boxes


def _overlap(a0: int, a1: int, b0: int, b1: int) -> bool:
    return a0 < b1 and b0 < a1


def _classify(boxes: list[Box]) -> None:
    """Views, conflicts and reuse between the boxes of one space."""
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if not _overlap(a.offset, a.offset + a.size, b.offset, b.offset + b.size):
                continue
            in_time = a.start <= b.end and b.start <= a.end
            if not in_time:
                first, second = (a, b) if a.end < b.start else (b, a)
                second.reuses.append(first.id)
                continue
            if a.base == b.base and (a.offset, a.size) != (b.offset, b.size):
                outer, inner = (a, b) if a.size >= b.size else (b, a)
                if outer.offset <= inner.offset and inner.offset + inner.size <= outer.offset + outer.size:
                    inner.kind = "view"
                    inner.parent = outer.id
                    continue
            if a.base == b.base and (a.offset, a.size) == (b.offset, b.size):
                # same buffer, overlapping lifetimes, not merged: cannot happen after grouping
                continue
            a.conflicts.append(b.id)
            b.conflicts.append(a.id)


def _union(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _peak(sm: SpaceMap, first: int, last: int) -> None:
    """The line where the most bytes are live, the boxes live there, the free holes."""
    best = (-1, first)
    for line in range(first, last + 1):
        live = [b for b in sm.boxes if b.start <= line <= b.end]
        used = sum(e - s for s, e in _union((b.offset, b.offset + b.size) for b in live))
        if used > best[0]:
            best = (used, line)
    sm.peak_bytes, sm.peak_line = max(best[0], 0), best[1]
    live = [b for b in sm.boxes if b.start <= sm.peak_line <= b.end]
    sm.peak_boxes = [b.id for b in live]
    limit = sm.capacity if sm.capacity is not None else sm.high_water
    limit = max(limit, sm.high_water)
    holes: list[tuple[int, int]] = []
    cursor = 0
    for s, e in _union((b.offset, b.offset + b.size) for b in live):
        if s > cursor:
            holes.append((cursor, s))
        cursor = max(cursor, e)
    if cursor < limit:
        holes.append((cursor, limit))
    sm.holes = holes


# --------------------------------------------------------------------------- entry points


def _check_assigned(fmaps: list[FunctionMap], dump: Path) -> None:
    """Reject dumps whose addresses were never assigned (≥2 bases of a space all at 0)."""
    for fm in fmaps:
        for sm in fm.spaces:
            bases = {b.base for b in sm.boxes}
            if len(bases) >= 2 and all(b.offset == 0 for b in sm.boxes):
                raise UnassignedAddressesError(
                    f"{dump.name}: {fm.name} has {len(bases)} {sm.space} buffers all at offset 0: addresses are "
                    "not assigned yet (a dump taken before AllocateMemoryAddr, or a build with "
                    "memory_planner=PTOAS, which leaves addresses to ptoas)"
                )


def build_map(
    dump: Path,
    backend: str,
    backend_assumed: bool = False,
    backend_source: str = "",
    capacity_of: Callable[[str, str], int | None] | None = None,
) -> MemoryMap:
    """Parse ``dump`` and build its memory map for ``backend``.

    ``capacity_of(space, backend) -> int | None`` defaults to
    :func:`pypto.core.target_caps.capacity` (``None`` where it has no number)."""
    from pypto.frontend.parser import parse

    try:
        text = dump.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise MemoryMapError(f"cannot read {dump}: {getattr(e, 'strerror', None) or e}") from None
    info = _read_text(text, str(dump))
    try:
        program = parse(text, filename=str(dump))
    except Exception as e:  # noqa: BLE001 - any parse failure is a bad dump for the user
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MemoryMapError(f"cannot parse {dump.name} as a pass dump: {first}") from None
    cap = capacity_of or _capacity
    fmaps: list[FunctionMap] = []
    for name, fn in program.func_ops.items():
        ftype = fn.attributes.get("pl.func_type")
        ftype_name = getattr(getattr(ftype, "data", None), "value", "Opaque") if ftype is not None else "Opaque"
        f = _Function(fn, info)
        tiles = f.tiles()
        if not tiles:
            continue
        alloc_lines = f.allocs()
        spaces: list[SpaceMap] = []
        present = {t.space for t in tiles}
        for space in [s for s in SPACE_ORDER if s in present] + sorted(present - set(SPACE_ORDER)):
            st = [t for t in tiles if t.space == space]
            boxes = _group(st, space)
            _classify(boxes)
            sm = SpaceMap(
                space=space,
                capacity=cap(space, backend),
                boxes=boxes,
                allocs={b: alloc_lines[b] for b in sorted({t.base for t in st}) if b in alloc_lines},
                high_water=max(t.offset + t.size for t in st),
            )
            _peak(sm, f.first_line, f.last_line)
            spaces.append(sm)
        fmaps.append(FunctionMap(name, ftype_name, f.first_line, f.last_line, spaces))
    if not fmaps:
        raise MemoryMapError(
            f"{dump.name}: no on-chip tile has a MemRef: the dump was taken before InitMemRef; "
            "use the dump after AllocateMemoryAddr (the default -p)"
        )
    fmaps.sort(key=lambda fm: (fm.func_type not in KERNEL_TYPES, fm.first_line))
    _check_assigned(fmaps, dump)
    return MemoryMap(dump, info.lines, info.short, fmaps, backend, backend_assumed, backend_source)


def _capacity(space: str, backend: str) -> int | None:
    from pypto.core.target_caps import capacity

    try:
        return capacity(MemorySpace(space), backend)
    except (ValueError, KeyError):
        return None


def normalize_backend(name: str) -> str | None:
    """The backend name for ``-b`` / ``pto.target_arch`` spellings, else None."""
    return BACKENDS.get(name.strip().lower())
