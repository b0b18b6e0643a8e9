"""PTOAS's sync IR: a function as a flat list of elements, and the sync operations hung on them.

One :class:`Compound` per op with a pipe (its ``defs``/``uses`` buffers, :mod:`..access`),
``LOOP_BEGIN``/``LOOP_END`` (:class:`Loop`) around each ``scf.for``/``scf.while`` body,
``IF_BEGIN``, then-body, a :class:`PlaceHolder`, ``ELSE_BEGIN``, else-body, a placeholder,
``IF_END`` (:class:`Branch`) for each ``scf.if``. Every element has ``before``/``after`` lists of
:class:`SyncOp`; a pair (set, wait) or a barrier is one entry of the pass's ``groups`` list, whose
position is the ops' ``index``. :func:`translate` builds the list (PTOAS's ``PTOIRTranslator``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from xdsl.dialects import scf
from xdsl.ir import Operation, Region

from pypto.ptoas.dialect.attrs import AddressSpace, Pipe

from ..access import Buffer, accesses, op_pipe


class Kind(Enum):
    """What a :class:`SyncOp` is."""

    SET = "set"
    WAIT = "wait"
    BARRIER = "barrier"


@dataclass(eq=False)
class SyncOp:
    """One set_flag, wait_flag or pipe_barrier the pass plans (PTOAS's ``SyncOperation``)."""

    kind: Kind
    src: Pipe
    dst: Pipe
    index: int  # position of its group in the pass's ``groups``
    at: int  # the element it hangs on
    for_end: int | None  # a back-edge pair: the LOOP_END element of its loop
    event_ids: list[int] = field(default_factory=list)
    dep_roots: frozenset[Buffer] = frozenset()
    event_id_num: int = 1
    useless: bool = False
    head_tail: bool = False  # a loop-level prologue/epilogue of a re-allocated pipe pair

    def match(self, at: int) -> SyncOp:
        """The partner op (wait of a set, set of a wait) at element ``at``."""
        kind = {Kind.SET: Kind.WAIT, Kind.WAIT: Kind.SET}.get(self.kind, Kind.BARRIER)
        return SyncOp(kind, self.src, self.dst, self.index, at, self.for_end)

    def set_pipe_all(self) -> None:
        """Degrade to a ``PIPE_ALL`` barrier (no event id left)."""
        self.kind, self.src, self.dst = Kind.BARRIER, Pipe.PIPE_ALL, Pipe.PIPE_ALL


@dataclass(eq=False)
class Element:
    """An element of the sync IR, with the syncs to put before and after it."""

    index: int
    op: Operation | None
    before: list[SyncOp] = field(default_factory=list)
    after: list[SyncOp] = field(default_factory=list)


@dataclass(eq=False)
class Compound(Element):
    """An op with a pipe."""

    pipe: Pipe = Pipe.PIPE_S
    defs: list[Buffer] = field(default_factory=list)
    uses: list[Buffer] = field(default_factory=list)


@dataclass(eq=False)
class Loop(Element):
    """``LOOP_BEGIN`` (``end`` False) or ``LOOP_END`` of a loop spanning elements begin..end."""

    begin: int = 0
    end_id: int = 0
    end: bool = False


@dataclass(eq=False)
class Branch(Element):
    """``IF_BEGIN``, ``ELSE_BEGIN`` or ``IF_END`` (``kind``) of an ``scf.if``."""

    kind: str = "if"  # "if" | "else" | "end"
    begin: int = 0
    branch: int = 0
    end_id: int = 0


@dataclass(eq=False)
class PlaceHolder(Element):
    """The end of a branch body (its ``scf.yield``, or the ``scf.if`` when it has no else)."""

    virtual_else: bool = False
    parent_if: Operation | None = None


LOCAL_SPACES = frozenset({AddressSpace.mat.value, AddressSpace.vec.value})


def translate(body: Region) -> list[Element]:
    """The sync IR of a function body, in program order."""
    out: list[Element] = []
    _region(body, out)
    return out


def _region(region: Region, out: list[Element]) -> None:
    for block in region.blocks:
        for op in block.ops:
            _op(op, out)


def _op(op: Operation, out: list[Element]) -> None:
    if isinstance(op, scf.ForOp | scf.WhileOp):
        begin = Loop(len(out), op)
        out.append(begin)
        for region in op.regions:
            _region(region, out)
        begin.begin, begin.end_id = begin.index, len(out)
        out.append(Loop(len(out), op, begin=begin.index, end_id=len(out), end=True))
        return
    if isinstance(op, scf.IfOp):
        head = Branch(len(out), op, kind="if", begin=len(out))
        out.append(head)
        _region(op.true_region, out)
        out.append(PlaceHolder(len(out), op.true_region.block.last_op))
        head.branch = len(out)
        els = Branch(len(out), op, kind="else", begin=head.index, branch=head.branch)
        out.append(els)
        has_else = bool(op.false_region.blocks)
        if has_else:
            _region(op.false_region, out)
        out.append(
            PlaceHolder(
                len(out),
                op.false_region.block.last_op if has_else else op,
                virtual_else=not has_else,
                parent_if=None if has_else else op,
            )
        )
        head.end_id = els.end_id = len(out)
        out.append(Branch(len(out), op, kind="end", begin=head.index, branch=head.branch, end_id=len(out)))
        return
    pipe = op_pipe(op)
    if pipe is not None and pipe != Pipe.PIPE_UNASSIGNED:
        acc = accesses(op, len(out))
        out.append(
            Compound(
                len(out),
                op,
                pipe=pipe,
                defs=[a.buffer for a in acc if a.write],
                uses=[a.buffer for a in acc if not a.write],
            )
        )
        return
    for region in op.regions:  # sections and other region holders: their ops in place
        _region(region, out)


__all__ = ["LOCAL_SPACES", "Branch", "Compound", "Element", "Kind", "Loop", "PlaceHolder", "SyncOp", "translate"]
