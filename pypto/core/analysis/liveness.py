"""Liveness of the SSA values of a structured xDSL region, in the manner of MLIR's ``Liveness``.

Built once for a root op (a ``func.func``), it numbers every op nested in the
root's regions in pre-order (``index``; ``end_index`` is the index of the last
op nested in an op) and answers, per value, where it is defined, where it is
used and how long it lives; per block, which values are live on entry and exit.

The rules, shared by MemoryReuse, ptoas ``plan-memory``, the memory map and the
DSL printer:

- A value is defined at its op; the results of an op with regions (a loop, an
  ``if``) at that op's end (they exist once its regions ran). A block argument
  is defined at its block's parent op; the root's own arguments at ``-1``.
- A use at ``user`` keeps the value live until ``user``. A use nested in a loop
  (:data:`LOOP_OPS`) that does not contain the definition keeps the value live
  until that loop's end: the next iteration reads it again.
- MLIR's coarser view is there too: :meth:`Liveness.end_operation` is the last
  op of the defining block that is or contains a use, and
  :meth:`Liveness.block_range` lasts to that op's end.

Ranges assume structured control flow (the ``scf``, ``pl`` and ``pto`` ops:
one block a region). Live-in/live-out sets also follow branch successors.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

LOOP_OPS: tuple[type[Operation], ...] = (scf.ForOp, scf.WhileOp)
"""Ops whose regions run repeatedly: a value read inside stays live to their end."""


@dataclass(frozen=True)
class LiveRange:
    """From the index where a value (or buffer) starts to live to its last one."""

    start: int
    end: int

    def union(self, other: LiveRange) -> LiveRange:
        """The smallest range covering both."""
        return LiveRange(min(self.start, other.start), max(self.end, other.end))


@dataclass(frozen=True)
class Use:
    """One read of a value, seen from the value's defining block."""

    user: Operation
    anchor: Operation
    """The op of the defining block that is or contains ``user`` (MLIR's ancestor in block)."""
    loops: tuple[Operation, ...]
    """The loops around ``user`` inside the defining block, innermost first."""


def defining_block(value: SSAValue) -> Block | None:
    """The block a value is defined in (a block argument's own block)."""
    if isinstance(value, BlockArgument):
        return value.block
    owner = value.owner
    assert isinstance(owner, Operation)
    return owner.parent_block()


class Liveness:
    """Liveness of every value used or defined inside ``root`` (see the module docstring)."""

    def __init__(self, root: Operation, loop_ops: tuple[type[Operation], ...] = LOOP_OPS):
        self.root = root
        self.loop_ops = loop_ops
        self._index: dict[Operation, int] = {}
        self._end: dict[Operation, int] = {}
        self._blocks: list[Block] = []
        n = 0
        for region in root.regions:
            for block in region.blocks:
                n = self._number(block, n)
        self._uses: dict[SSAValue, list[Use]] = {}
        self._live_in: dict[Block, dict[SSAValue, None]] = {b: {} for b in self._blocks}
        for op in self._index:
            for v in op.operands:
                self._record(v, op)
        self._live_out: dict[Block, dict[SSAValue, None]] = {b: {} for b in self._blocks}
        self._flow()

    # ---- construction

    def _number(self, block: Block, n: int) -> int:
        self._blocks.append(block)
        for op in block.ops:
            self._index[op] = n
            n += 1
            for region in op.regions:
                for inner in region.blocks:
                    n = self._number(inner, n)
            self._end[op] = n - 1
        return n

    def _record(self, value: SSAValue, user: Operation) -> None:
        """Note a use: the blocks it is live into and the loops that re-read it."""
        home = defining_block(value)
        home_region = home.parent if home is not None else None
        loops: list[Operation] = []
        anchor = user
        block = user.parent_block()
        while block is not None and block is not home:
            self._live_in[block][value] = None
            if block.parent is home_region:
                break  # a sibling block of the definition: successors carry it (see _flow)
            parent = block.parent_op()
            if parent is None or parent is self.root:
                break
            if isinstance(parent, self.loop_ops):
                loops.append(parent)
            anchor = parent
            block = parent.parent_block()
        self._uses.setdefault(value, []).append(Use(user, anchor, tuple(loops)))

    def _flow(self) -> None:
        """Live-out sets: what successors need, and what a loop body reads again."""
        changed = True
        while changed:
            changed = False
            for block in reversed(self._blocks):
                live_in, live_out = self._live_in[block], self._live_out[block]
                needed = list(live_in) if isinstance(block.parent_op(), self.loop_ops) else []
                last = block.last_op
                for succ in last.successors if last is not None else ():
                    needed.extend(self._live_in.get(succ, ()))
                defined = {*block.args, *(r for op in block.ops for r in op.results)}
                for v in needed:
                    if v not in live_out:
                        live_out[v] = None
                        changed = True
                    if v not in defined and v not in live_in:
                        live_in[v] = None
                        changed = True

    # ---- program points

    def index(self, op: Operation) -> int:
        """The pre-order number of ``op`` (the first op of the root's body is 0)."""
        return self._index[op]

    def end_index(self, op: Operation) -> int:
        """The number of the last op nested in ``op`` (``op``'s own when it has none)."""
        return self._end[op]

    def contains(self, op: Operation) -> bool:
        """Whether ``op`` is nested in the root."""
        return op in self._index

    def ops(self) -> Iterable[Operation]:
        """The ops nested in the root, in pre-order."""
        return self._index.keys()

    # ---- values

    def definition(self, value: SSAValue) -> int:
        """Where ``value`` starts to live."""
        if isinstance(value, BlockArgument):
            parent = value.block.parent_op()
            return -1 if parent is None or parent is self.root else self._index[parent]
        owner = value.owner
        assert isinstance(owner, Operation)
        return self._end[owner] if owner.regions else self._index[owner]

    def uses(self, value: SSAValue) -> list[Use]:
        """The reads of ``value`` by ops inside the root, in program order."""
        return self._uses.get(value, [])

    def use_index(self, use: Use) -> int:
        """Where a use ends its value's life: the user, or the end of the outermost loop around it."""
        if use.loops:
            return max(self._index[use.user], self._end[use.loops[-1]])
        return self._index[use.user]

    def live_range(self, value: SSAValue) -> LiveRange:
        """From the definition to the last use (loop-aware)."""
        start = self.definition(value)
        return LiveRange(start, max([start, *(self.use_index(u) for u in self.uses(value))]))

    def live_ranges(self, values: Iterable[SSAValue] | None = None) -> dict[SSAValue, LiveRange]:
        """The live range of each value (default: every value defined in the root)."""
        return {v: self.live_range(v) for v in (self.values() if values is None else values)}

    def end_operation(self, value: SSAValue) -> Operation | None:
        """MLIR's end operation: the last op of the defining block that is or contains a use."""
        anchors = [u.anchor for u in self.uses(value)]
        return max(anchors, key=self._index.__getitem__, default=None)

    def block_range(self, value: SSAValue) -> LiveRange:
        """MLIR's granularity: from the definition to the end of :meth:`end_operation`."""
        start = self.definition(value)
        end = self.end_operation(value)
        return LiveRange(start, start if end is None else max(start, self._end[end]))

    def buffer_range(self, values: Iterable[SSAValue], coarse: bool = False) -> LiveRange:
        """The life of a buffer several values name (views, in-place results, loop
        carries): the union of their live ranges (``coarse``: block ranges)."""
        ranges = [self.block_range(v) if coarse else self.live_range(v) for v in values]
        assert ranges, "a buffer names at least one value"
        out = ranges[0]
        for r in ranges[1:]:
            out = out.union(r)
        return out

    def is_dead_after(self, value: SSAValue, op: Operation) -> bool:
        """Whether nothing reads ``value`` once ``op`` (and all nested in it) has run."""
        return self.live_range(value).end <= self._end[op]

    def values(self) -> Iterator[SSAValue]:
        """Every value the root defines: block arguments and results, in pre-order."""
        for block in self._blocks:
            yield from block.args
            for op in block.ops:
                yield from op.results

    # ---- blocks

    def blocks(self) -> list[Block]:
        """The blocks nested in the root, in pre-order."""
        return list(self._blocks)

    def live_in(self, block: Block) -> list[SSAValue]:
        """The values defined outside ``block`` that it (or an op nested in it) reads."""
        return list(self._live_in[block])

    def live_out(self, block: Block) -> list[SSAValue]:
        """The values live when ``block`` ends: read by a successor, or again by the next loop iteration."""
        return list(self._live_out[block])
