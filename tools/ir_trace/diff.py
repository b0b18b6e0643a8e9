"""The diff model: line diff of two snapshots, aligned replacement rows and
changed-character spans.

A diff is a list of *ops* that walk both sides with implicit cursors (compact
and easy to replay in the viewer):

* ``[0, n]`` n equal lines, ``[1, n]`` n deleted lines, ``[2, n]`` n inserted
  lines;
* ``[3, a_spans, b_spans]`` one replaced line on each side; the spans are flat
  ``[start, end, ...]`` character ranges that changed.

The line diff is a patience diff (lines unique on both sides anchor it, then
each gap is diffed again) with :class:`difflib.SequenceMatcher` for gaps
without unique lines, so ordinary passes stay near-linear. Inside a
replacement block, lines equal after removing leading whitespace are paired
first, then single-line calls with the same qualified op name, then what is
left positionally.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Op = list  # [kind, ...] as described above
EQ, DEL, INS, REP = 0, 1, 2, 3

_FALLBACK_CELLS = 4_000_000  # largest gap (lines x lines) diffed without anchors
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_MLIR_OP = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*(?:\.[\w$]+)+)"?')


@dataclass(frozen=True)
class LineDiff:
    """A diff of two line lists: its ops and inserted / deleted line counts."""

    ops: list[Op]
    inserted: int
    deleted: int

    @property
    def changed(self) -> bool:
        return bool(self.inserted or self.deleted)


# ---- line matching ---------------------------------------------------------


def _unique_anchors(
    a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Lines occurring exactly once in both ranges, longest increasing run."""
    seen_a: dict[str, int] = {}
    for i in range(alo, ahi):
        line = a[i]
        seen_a[line] = -1 if line in seen_a else i
    seen_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if line in seen_a:
            seen_b[line] = -1 if line in seen_b else j
    pairs = sorted((i, seen_b[line]) for line, i in seen_a.items() if i >= 0 and seen_b.get(line, -1) >= 0)
    if not pairs:
        return []
    # patience sorting: longest increasing subsequence of b positions
    tails: list[int] = []
    tail_idx: list[int] = []
    prev = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_idx.append(k)
        else:
            tails[pos] = j
            tail_idx[pos] = k
        prev[k] = tail_idx[pos - 1] if pos else -1
    out: list[tuple[int, int]] = []
    k = tail_idx[-1]
    while k >= 0:
        out.append(pairs[k])
        k = prev[k]
    out.reverse()
    return out


def matching_blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """Equal runs ``(i, j, n)`` of a patience diff, in order."""
    blocks: list[tuple[int, int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        start = alo
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            alo += 1
            blo += 1
        if alo > start:
            blocks.append((start, blo - (alo - start), alo - start))
        n = 0
        while alo < ahi - n and blo < bhi - n and a[ahi - 1 - n] == b[bhi - 1 - n]:
            n += 1
        if n:
            blocks.append((ahi - n, bhi - n, n))
            ahi -= n
            bhi -= n
        if alo == ahi or blo == bhi:
            continue
        anchors = _unique_anchors(a, alo, ahi, b, blo, bhi)
        if anchors:
            pi, pj = alo, blo
            for i, j in anchors:
                blocks.append((i, j, 1))
                if i > pi and j > pj:
                    stack.append((pi, i, pj, j))
                pi, pj = i + 1, j + 1
            if ahi > pi and bhi > pj:
                stack.append((pi, ahi, pj, bhi))
        elif (ahi - alo) * (bhi - blo) <= _FALLBACK_CELLS:
            sm = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            blocks.extend((alo + i, blo + j, n) for i, j, n in sm.get_matching_blocks() if n)
    blocks.sort()
    return blocks


# ---- intraline emphasis ----------------------------------------------------


@functools.lru_cache(maxsize=65536)
def char_spans(before: str, after: str) -> tuple[list[int], list[int]]:
    """Changed character ranges of two lines (flat ``[start, end, ...]``), by token."""
    ta, tb = _TOKEN.findall(before), _TOKEN.findall(after)
    oa = [0]
    for t in ta:
        oa.append(oa[-1] + len(t))
    ob = [0]
    for t in tb:
        ob.append(ob[-1] + len(t))
    sa: list[int] = []
    sb: list[int] = []
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        _add_span(sa, oa[i1], oa[i2])
        _add_span(sb, ob[j1], ob[j2])
    return sa, sb


def _add_span(spans: list[int], start: int, end: int) -> None:
    if start == end:
        return
    if spans and spans[-1] == start:
        spans[-1] = end
    else:
        spans += [start, end]


# ---- op names (for aligning replacement blocks) ----------------------------


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


@functools.lru_cache(maxsize=65536)
def py_op_name(line: str) -> str | None:
    """``pl.tile.add`` for ``x: T = pl.tile.add(a, b)``; ``None`` unless a single-line call."""
    try:
        tree = ast.parse(line.strip())
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.Expr | ast.Return) else None
    return _dotted(value.func) if isinstance(value, ast.Call) else None


def mlir_op_name(line: str) -> str | None:
    """``pl.tensor.add`` for ``%0 = "pl.tensor.add"(...)``; ``None`` if no op."""
    m = _MLIR_OP.match(line)
    return m.group(1) if m else None


# ---- replacement blocks ----------------------------------------------------

Pairing = list[tuple[int | None, int | None]]


def _pair_equal(keys_a: Sequence[object], keys_b: Sequence[object]) -> list[tuple[int, int]]:
    """Index pairs of equal keys (``None`` never matches) in order."""
    if not keys_a or not keys_b or len(keys_a) * len(keys_b) > _FALLBACK_CELLS:
        return []
    ka = [k if k is not None else ("\0a", i) for i, k in enumerate(keys_a)]
    kb = [k if k is not None else ("\0b", j) for j, k in enumerate(keys_b)]
    sm = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    return [(i + t, j + t) for i, j, n in sm.get_matching_blocks() for t in range(n)]


def _split_by(
    pairs: list[tuple[int, int]], na: int, nb: int, inner: Callable[[int, int, int, int], Pairing]
) -> Pairing:
    """Rows: the pairs, with ``inner`` aligning each gap between them."""
    rows: Pairing = []
    pi = pj = 0
    for i, j in [*pairs, (na, nb)]:
        rows += inner(pi, i, pj, j)
        if i < na:
            rows.append((i, j))
        pi, pj = i + 1, j + 1
    return rows


def align_block(a: Sequence[str], b: Sequence[str], op_name: Callable[[str], str | None]) -> Pairing:
    """Rows of a replacement block: ``(i, j)`` pairs, ``(i, None)`` deletions, ``(None, j)`` insertions."""

    def positional(alo: int, ahi: int, blo: int, bhi: int) -> Pairing:
        n = min(ahi - alo, bhi - blo)
        rows: Pairing = [(alo + k, blo + k) for k in range(n)]
        rows += [(i, None) for i in range(alo + n, ahi)]
        rows += [(None, j) for j in range(blo + n, bhi)]
        return rows

    def by_op(alo: int, ahi: int, blo: int, bhi: int) -> Pairing:
        if alo == ahi or blo == bhi:
            return positional(alo, ahi, blo, bhi)
        pairs = _pair_equal([op_name(x) for x in a[alo:ahi]], [op_name(y) for y in b[blo:bhi]])
        rows = _split_by(pairs, ahi - alo, bhi - blo, lambda i1, i2, j1, j2: positional(i1, i2, j1, j2))
        return [(None if i is None else i + alo, None if j is None else j + blo) for i, j in rows]

    pairs = _pair_equal([x.lstrip() for x in a], [y.lstrip() for y in b])
    return _split_by(pairs, len(a), len(b), by_op)


# ---- the diff --------------------------------------------------------------


class _OpList:
    """Accumulates ops, merging runs of the same kind."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.inserted = self.deleted = 0

    def run(self, kind: int, n: int) -> None:
        if n <= 0:
            return
        if kind == INS:
            self.inserted += n
        elif kind == DEL:
            self.deleted += n
        if self.ops and self.ops[-1][0] == kind and kind != REP:
            self.ops[-1][1] += n
        else:
            self.ops.append([kind, n])

    def replace(self, before: str, after: str) -> None:
        if before == after:
            self.run(EQ, 1)
            return
        sa, sb = char_spans(before, after)
        self.inserted += 1
        self.deleted += 1
        self.ops.append([REP, sa, sb])


def diff_lines(a: Sequence[str], b: Sequence[str], op_name: Callable[[str], str | None] = py_op_name) -> LineDiff:
    """The diff of line lists ``a`` -> ``b``."""
    out = _OpList()
    i = j = 0
    for bi, bj, n in [*matching_blocks(a, b), (len(a), len(b), 0)]:
        if i < bi and j < bj:
            block_a, block_b = a[i:bi], b[j:bj]
            for ri, rj in align_block(block_a, block_b, op_name):
                if ri is not None and rj is not None:
                    out.replace(block_a[ri], block_b[rj])
                elif ri is not None:
                    out.run(DEL, 1)
                else:
                    out.run(INS, 1)
        else:
            out.run(DEL, bi - i)
            out.run(INS, bj - j)
        out.run(EQ, n)
        i, j = bi + n, bj + n
    return LineDiff(out.ops, out.inserted, out.deleted)


def apply_ops(ops: Sequence[Op], a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int | None, int | None]]:
    """The rows ``(kind, i, j)`` a diff describes (``kind`` in eq/del/ins/rep); a checking aid."""
    rows: list[tuple[str, int | None, int | None]] = []
    i = j = 0
    for op in ops:
        kind = op[0]
        if kind == REP:
            rows.append(("rep", i, j))
            i, j = i + 1, j + 1
            continue
        for _ in range(op[1]):
            if kind == EQ:
                rows.append(("eq", i, j))
                i, j = i + 1, j + 1
            elif kind == DEL:
                rows.append(("del", i, None))
                i += 1
            else:
                rows.append(("ins", None, j))
                j += 1
    if i != len(a) or j != len(b):
        raise ValueError(f"ops cover {i}/{len(a)} and {j}/{len(b)} lines")
    return rows


def fold(ops: Sequence[Op], context: int) -> list[tuple[str, int, int]]:
    """Visible row ranges and folded ranges of a diff with ``context`` lines kept
    around each change: ``("show" | "fold", first_row, end_row)``. The viewer
    folds the same way; a fold of a single line is shown instead."""
    kinds: list[bool] = []  # per row: equal?
    for op in ops:
        kinds += [op[0] == EQ] * (1 if op[0] == REP else op[1])
    out: list[tuple[str, int, int]] = []
    n = len(kinds)
    r = 0
    while r < n:
        if not kinds[r]:
            s = r
            while r < n and not kinds[r]:
                r += 1
            _push(out, "show", s, r)
            continue
        s = r
        while r < n and kinds[r]:
            r += 1
        lo = s if s == 0 else s + context
        hi = r if r == n else r - context
        if hi - lo >= 2:
            _push(out, "show", s, lo)
            out.append(("fold", lo, hi))
            _push(out, "show", hi, r)
        else:
            _push(out, "show", s, r)
    return out


def _push(out: list[tuple[str, int, int]], kind: str, s: int, e: int) -> None:
    if e <= s:
        return
    if out and out[-1][0] == kind and out[-1][2] == s:
        out[-1] = (kind, out[-1][1], e)
    else:
        out.append((kind, s, e))
