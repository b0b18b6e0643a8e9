"""MemoryReuse (pass 34): on-chip buffers whose lifetimes do not overlap share
one allocation; allocations nobody uses any more are removed.

Algorithm (upstream's, docs ``34-memory_reuse.md``):

1. **Positions.** Ops are numbered in program order (pre-order, nested regions
   included). A value lives from its definition to its last use. A use inside
   a loop that does not contain the definition counts at the loop's end (the
   value is needed on every iteration). A loop's results are defined at its
   end, its iter_args at its start; ``scf.yield`` and ``func.return`` are uses.
2. **Groups.** Values naming one buffer (same MemRef base: views, in-place
   results, loop carries, see MaterializeSemanticAliases) form one group whose
   lifetime is the union of theirs. DDR tensors and ``pinned`` allocs take no
   part.
3. **Packing.** Per memory space, groups are taken largest first (ties in
   program order); each joins the first existing buffer all of whose members
   it can share with, else opens a new one. Two groups can share when their
   lifetimes do not overlap (``a.last <= b.def`` or ``b.last <= a.def``: an
   op reads its inputs before it writes its output) and no member's producer
   forbids its output from aliasing an input in the other group
   (:func:`~.materialize_semantic_aliases.forbidden_inputs`: row reductions,
   ``recip``, ``rsqrt``, ``move``, the broadcast vector of ``row_expand_*``,
   widening casts).
4. **Rewrite.** Every member is renamed onto the buffer's first (largest)
   group's base; offsets and sizes stay. Unreferenced allocs are erased.

On upstream's softmax_rows this reproduces the 34 dump exactly: ``t``,
``t__tmp_v0``, ``e``, ``t__tmp_v1`` share ``mem_vec_2``, ``tmp`` keeps
``mem_vec_3`` (``row_sum`` reads it), ``mx`` and ``s`` share ``mem_vec_4``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from pypto.dialects.enums import MemorySpace
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import TileType

from .base import PyPTOPass
from .init_memref import alloc_ops, function_values, functions, memref_of, remove_unused_allocs, rename_bases
from .materialize_semantic_aliases import forbidden_inputs
from .registry import register_pass


class Positions:
    """Program-order positions of a function's ops and its values' lifetimes."""

    def __init__(self, f: func.FuncOp):
        self.pos: dict[int, int] = {}
        self.end: dict[int, int] = {}
        self._n = 0
        for block in f.body.blocks:
            self._number_block(block)

    def _number_block(self, block: Block) -> None:
        for op in block.ops:
            self._number(op)

    def _number(self, op: Operation) -> None:
        self.pos[id(op)] = self._n
        self._n += 1
        for region in op.regions:
            for block in region.blocks:
                self._number_block(block)
        self.end[id(op)] = self._n - 1

    def op_pos(self, op: Operation) -> int:
        return self.pos[id(op)]

    def definition(self, v: SSAValue) -> int:
        """Where ``v`` starts to live."""
        if isinstance(v, BlockArgument):
            parent = v.block.parent_op()
            if parent is None or isinstance(parent, func.FuncOp):
                return -1
            return self.op_pos(parent)
        owner = v.owner
        assert isinstance(owner, Operation)
        if owner.regions:  # loop / if results exist once the op is done
            return self.end[id(owner)]
        return self.op_pos(owner)

    def _defined_inside(self, v: SSAValue, loop: Operation) -> bool:
        owner = v.owner
        if isinstance(owner, Operation):
            return loop.is_ancestor(owner) and owner is not loop
        return loop.is_ancestor(owner)  # a block: inside when loop contains it

    def use_position(self, v: SSAValue, user: Operation) -> int:
        """Where a use of ``v`` by ``user`` ends ``v``'s life (loop-aware)."""
        p = self.op_pos(user)
        anc = user.parent_op()
        while anc is not None and not isinstance(anc, func.FuncOp):
            if isinstance(anc, scf.ForOp) and not self._defined_inside(v, anc):
                p = max(p, self.end[id(anc)])
            anc = anc.parent_op()
        return p

    def last_use(self, v: SSAValue) -> int:
        last = self.definition(v)
        for use in v.uses:
            if id(use.operation) in self.pos:  # ignore stray users outside the function
                last = max(last, self.use_position(v, use.operation))
        return last


@dataclass
class Group:
    """All values naming one on-chip buffer."""

    base: str
    space: MemorySpace
    size: int
    start: int
    last: int
    values: list[SSAValue] = field(default_factory=list)

    def producers(self) -> list[Operation]:
        return [v.owner for v in self.values if isinstance(v.owner, Operation)]


def _overlap(a: Group, b: Group) -> bool:
    return not (a.last <= b.start or b.last <= a.start)


def _forbids(writer: Group, other: Group) -> bool:
    """Whether a producer in ``writer`` may not write over an input in ``other``."""
    other_ids = {id(v) for v in other.values}
    for op in writer.producers():
        for v in forbidden_inputs(op):
            if id(v) in other_ids:
                return True
    return False


def can_share(a: Group, b: Group) -> bool:
    return a.space == b.space and not _overlap(a, b) and not _forbids(a, b) and not _forbids(b, a)


def alloc_size(alloc: TileAllocOp) -> int:
    """The byte size an alloc reserves."""
    size = alloc.size
    assert isinstance(size, IntegerAttr)
    return size.value.data


def buffer_groups(f: func.FuncOp) -> list[Group]:
    """The reusable on-chip buffer groups of ``f`` (program order of first definition)."""
    allocs: dict[str, TileAllocOp] = {a.base.data: a for a in alloc_ops(f)}
    pinned = {b for b, a in allocs.items() if isinstance(a.pinned, IntegerAttr) and a.pinned.value.data}
    positions = Positions(f)
    groups: dict[str, Group] = {}
    for v in function_values(f):
        t = v.type
        m = memref_of(t)
        if m is None or not isinstance(t, TileType) or m.base.data in pinned:
            continue
        base = m.base.data
        start, last = positions.definition(v), positions.last_use(v)
        g = groups.get(base)
        if g is None:
            alloc = allocs.get(base)
            size = alloc_size(alloc) if alloc is not None else m.size.data
            g = groups[base] = Group(base, t.memory_space, size, start, last)
        else:
            g.start, g.last = min(g.start, start), max(g.last, last)
        g.values.append(v)
    return sorted(groups.values(), key=lambda g: g.start)


def plan_reuse(groups: list[Group]) -> dict[str, str]:
    """First-fit-decreasing packing: base -> representative base (renamed ones only)."""
    order = sorted(groups, key=lambda g: -g.size)  # stable: ties stay in program order
    buffers: list[list[Group]] = []
    for g in order:
        for buf in buffers:
            if all(can_share(g, member) for member in buf):
                buf.append(g)
                break
        else:
            buffers.append([g])
    return {g.base: buf[0].base for buf in buffers for g in buf[1:]}


def reuse_function(f: func.FuncOp) -> dict[str, str]:
    """Share buffers in one function; returns the renaming applied."""
    mapping = plan_reuse(buffer_groups(f))
    rename_bases(f, mapping)
    remove_unused_allocs(f)
    return mapping


@register_pass
@dataclass(frozen=True)
class MemoryReuse(PyPTOPass):
    """Lifetime-based sharing of same-space on-chip buffers."""

    PASS_NAME = "MemoryReuse"
    name = "memory-reuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in functions(op):
            reuse_function(f)
