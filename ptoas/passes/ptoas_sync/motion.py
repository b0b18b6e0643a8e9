"""PTOAS's sync motion (``MoveSyncState``) and redundant-pair removal (``RemoveRedundantSync``).

Motion: in an ``if``, a wait whose set is outside the branch moves before the ``if`` and a set
whose wait is outside moves after it; in a loop (inner loops first), the same for waits and sets
whose partner is outside the loop, except back-edge pairs of that very loop.

Removal: a single-event, non-back-edge pair is dropped when, between its set and its wait,
another pair of the same pipes, loop scope and dependency buffers is both set and waited (loops in
between are skipped; an ``if`` counts only when both branches have one).
"""

from __future__ import annotations

from .elements import Branch, Element, Kind, Loop, SyncOp


def move_syncs(ir: list[Element], groups: list[list[SyncOp]]) -> None:
    """Hoist waits and sink sets out of branches, then out of loops."""
    for el in ir:
        if isinstance(el, Branch) and el.kind == "if":
            bound = (el.begin, el.end_id)
            for i in range(el.begin + 1, el.branch):
                _out_of_branch(ir, groups, ir[i], (el.begin, el.branch), bound)
            if el.end_id == el.branch:
                continue
            for i in range(el.branch + 1, el.end_id):
                _out_of_branch(ir, groups, ir[i], (el.branch, el.end_id), bound)
    for el in ir:
        if isinstance(el, Loop) and el.end:
            for i in range(el.begin + 1, el.end_id):
                _out_of_loop(ir, groups, ir[i], (el.begin, el.end_id))


def _outside(index: int, lo: int, hi: int) -> bool:
    return index >= hi or index <= lo


def _out_of_branch(
    ir: list[Element], groups: list[list[SyncOp]], e: Element, span: tuple[int, int], bound: tuple[int, int]
) -> None:
    before: list[SyncOp] = []
    for s in e.before:
        if s.kind is Kind.WAIT and _outside(groups[s.index][0].at, *span):
            ir[bound[0]].before.append(s)
            s.at = bound[0]
        else:
            before.append(s)
    e.before = before
    after: list[SyncOp] = []
    for s in reversed(e.after):  # PTOAS walks them backwards and keeps that order
        if s.kind is Kind.SET and _outside(groups[s.index][1].at, *span):
            ir[bound[1]].after.insert(0, s)
            s.at = bound[1]
        else:
            after.append(s)
    e.after = after


def _out_of_loop(ir: list[Element], groups: list[list[SyncOp]], e: Element, span: tuple[int, int]) -> None:
    lo, hi = span
    before: list[SyncOp] = []
    for s in e.before:
        if s.kind is Kind.WAIT and s.for_end != hi:
            partner = groups[s.index][0].at
            if partner > hi or partner < lo:
                ir[lo].before.append(s)
                s.at = lo
                continue
        before.append(s)
    e.before = before
    after: list[SyncOp] = []
    for s in reversed(e.after):
        if s.kind is Kind.SET and s.for_end != hi:
            partner = groups[s.index][1].at
            if partner > hi or partner < lo:
                ir[hi].after.insert(0, s)
                s.at = hi
                continue
        after.append(s)
    e.after = after


def remove_redundant(ir: list[Element], groups: list[list[SyncOp]]) -> None:
    """Drop the pairs another pair of the same kind already covers."""
    pairs = [(g[0], g[1]) for g in groups if len(g) == 2]

    def key(p: tuple[SyncOp, SyncOp]) -> tuple[int, int, int]:
        s = p[0]
        return (1, s.for_end, s.index) if s.for_end is not None else (0, 0, s.index)

    pairs.sort(key=key, reverse=True)  # back-edge pairs first (outer loops first), later pairs first
    for set_op, wait in pairs:
        if set_op.event_id_num != 1 or wait.event_id_num != 1:
            continue
        if not (set_op.dep_roots and set_op.dep_roots == wait.dep_roots):
            continue
        if set_op.at < wait.at and _repeat(ir, set_op.at, wait.at, [False] * len(groups), set_op):
            if set_op in ir[set_op.at].after:
                ir[set_op.at].after.remove(set_op)
            if wait in ir[wait.at].before:
                ir[wait.at].before.remove(wait)
            set_op.useless = wait.useless = True


def _repeat(ir: list[Element], begin: int, end: int, finder: list[bool], set_op: SyncOp) -> bool:
    res = False
    for s in ir[begin].after:
        res = _matched(finder, s, set_op) or res
    i = begin + 1
    while i <= end - 1:
        for s in ir[i].before:
            res = _matched(finder, s, set_op) or res
        el = ir[i]
        if isinstance(el, Branch):
            if el.kind != "if":
                i = el.end_id
            else:
                has_else = el.branch < el.end_id
                if (not has_else and end < el.end_id) or (has_else and end < el.branch):
                    pass  # the wait is inside the then branch: go on into it
                elif has_else and el.branch <= end < el.end_id:
                    i = el.branch
                else:
                    copy = list(finder)  # PTOAS passes one copy to both branches
                    if (
                        has_else
                        and _repeat(ir, el.begin, el.branch, copy, set_op)
                        and _repeat(ir, el.branch, el.end_id, copy, set_op)
                    ):
                        return True
                    i = el.end_id
        elif isinstance(el, Loop):
            i = el.end_id
        for s in ir[i].after:
            res = _matched(finder, s, set_op) or res
        i += 1
    for s in ir[end].before:
        res = _matched(finder, s, set_op) or res
    return res


def _matched(finder: list[bool], s: SyncOp, set_op: SyncOp) -> bool:
    if s.kind not in (Kind.SET, Kind.WAIT) or s.index == set_op.index:
        return False
    if s.event_id_num != set_op.event_id_num or s.for_end != set_op.for_end:
        return False
    if not (s.dep_roots and s.dep_roots == set_op.dep_roots):
        return False
    if (s.src, s.dst) != (set_op.src, set_op.dst):
        return False
    if s.kind is Kind.SET:
        finder[s.index] = True
        return False
    return finder[s.index]


__all__ = ["move_syncs", "remove_redundant"]
