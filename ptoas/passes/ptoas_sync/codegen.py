"""PTOAS's sync codegen (``SyncCodegen``): the planned syncs as ops around their elements' ops.

Syncs go before / after their element's op (a loop's ``LOOP_BEGIN`` syncs before the loop op,
its ``LOOP_END`` ones after it; an ``if``'s ``IF_BEGIN``/``IF_END`` likewise; a placeholder's at
its branch's ``scf.yield``, making an else block when an ``if`` without one needs it). Duplicate
sets / waits of the same pipes and ids at one op are merged, a multi-event pair uses its first
id, a barrier next to the same barrier is dropped (PIPE_V barriers on a5 too), and the
``PIPE_ALL`` barrier becomes the tail barrier before ``return``.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation
from xdsl.traits import IsTerminator

from pypto.ptoas.dialect.attrs import Event, EventAttr, Pipe, PipeAttr
from pypto.ptoas.dialect.sync_ops import BarrierOp, SetFlagOp, WaitFlagOp

from .elements import Branch, Compound, Element, Kind, Loop, PlaceHolder, SyncOp


def _same(a: SyncOp, b: SyncOp) -> bool:
    if (a.kind, a.src, a.dst) != (b.kind, b.src, b.dst):
        return False
    return a.event_ids == b.event_ids if b.kind is not Kind.BARRIER else True


def _merge(dst: list[SyncOp], src: list[SyncOp]) -> None:
    for s in src:
        if s.useless:
            continue
        if any(e is s or (not e.useless and _same(e, s)) for e in dst):
            continue
        dst.append(s)


def emit_syncs(func: FuncOp, ir: list[Element], arch: str) -> int:
    """Insert the syncs of ``ir`` into ``func``; returns how many ops were added."""
    plan: dict[Operation, tuple[list[SyncOp], list[SyncOp]]] = {}

    def at(op: Operation) -> tuple[list[SyncOp], list[SyncOp]]:
        return plan.setdefault(op, ([], []))

    for el in ir:
        if isinstance(el, Compound) and el.op is not None:
            before, after = at(el.op)
            _merge(before, el.before)
            _merge(after, el.after)
        elif isinstance(el, PlaceHolder):
            op = el.op
            if el.virtual_else:
                assert isinstance(el.parent_if, scf.IfOp)
                if el.before or el.after:
                    el.parent_if.false_region.add_block(Block([scf.YieldOp()]))
                    op = el.parent_if.false_region.block.last_op
                else:
                    continue
            assert op is not None
            before, after = at(op)
            _merge(before, el.before)
            _merge(after, el.after)
        elif isinstance(el, Loop) and el.end and el.op is not None:
            before, after = at(el.op)
            _merge(before, ir[el.begin].before)
            _merge(after, el.after)
        elif isinstance(el, Branch) and el.kind == "end" and el.op is not None:
            before, after = at(el.op)
            _merge(before, ir[el.begin].before)
            _merge(after, el.after)
    added = 0
    tail = False
    for op in list(func.walk()):
        if op not in plan:
            continue
        before, after = plan[op]
        for s in before:
            added, tail = _insert(op, s, True, arch, added, tail)
        for s in reversed(after):
            added, tail = _insert(op, s, False, arch, added, tail)
    if tail:
        for ret in [o for o in func.walk() if isinstance(o, ReturnOp)]:
            barrier = BarrierOp.build(properties={"pipe": PipeAttr(Pipe.PIPE_ALL)})
            barrier.location = ret.location
            assert ret.parent is not None
            ret.parent.insert_op_before(barrier, ret)
            added += 1
    return added


def _insert(op: Operation, s: SyncOp, before: bool, arch: str, added: int, tail: bool) -> tuple[int, bool]:
    if s.useless:
        return added, tail
    block = op.parent
    assert block is not None
    at_op = before or op.has_trait(IsTerminator)
    if s.kind is Kind.BARRIER:
        if arch == "a5" and s.src == Pipe.PIPE_V:
            return added, tail
        if s.src == Pipe.PIPE_ALL and s.dst == Pipe.PIPE_ALL:
            return added, True
        neighbour = op.prev_op if at_op else op.next_op
        if isinstance(neighbour, BarrierOp) and neighbour.pipe_attr.data == s.src:
            return added, tail
        new: Operation = BarrierOp.build(properties={"pipe": PipeAttr(s.src)})
    else:
        cls = WaitFlagOp if s.kind is Kind.WAIT else SetFlagOp
        new = cls.build(
            properties={
                "src_pipe": PipeAttr(s.src),
                "dst_pipe": PipeAttr(s.dst),
                "event_id": EventAttr(Event(f"EVENT_ID{s.event_ids[0]}")),
            }
        )
    new.location = op.location
    if at_op:
        block.insert_op_before(new, op)
    else:
        block.insert_op_after(new, op)
    return added + 1, tail


__all__ = ["emit_syncs"]
