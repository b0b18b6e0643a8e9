"""MemoryReuse (pass 34): on-chip buffers whose lifetimes do not overlap share
one allocation; allocations nobody uses any more are removed.

Algorithm (upstream's, docs ``34-memory_reuse.md``):

1. **Liveness** (:class:`pypto.core.analysis.liveness.Liveness`). Ops are
   numbered in program order (pre-order, nested regions included). A value
   lives from its definition to its last use. A use inside a loop that does
   not contain the definition counts at the loop's end (the value is needed on
   every iteration). A loop's results are defined at its end, its iter_args at
   its start; ``scf.yield`` and ``func.return`` are uses.
2. **Groups.** Values naming one buffer (same MemRef base: views, in-place
   results, loop carries, see :mod:`pypto.core.analysis.aliases`) form one group
   (:func:`pypto.core.analysis.buffers.tile_buffers`) whose lifetime is the
   union of theirs. DDR tensors and ``pinned`` allocs take no
   part.
3. **Packing.** Per memory space, groups are taken largest first (ties in
   program order); each joins the first existing buffer all of whose members
   it can share with, else opens a new one. Two groups can share when their
   lifetimes do not overlap (``a.last <= b.def`` or ``b.last <= a.def``: an
   op reads its inputs before it writes its output) and no member's producer
   forbids its output from aliasing an input in the other group
   (:func:`pypto.core.analysis.aliases.forbidden_inputs`: row reductions,
   ``recip``, ``rsqrt``, ``move``, the broadcast vector of ``row_expand_*``,
   widening casts).
4. **Rewrite.** Every member is renamed onto the buffer's first (largest)
   group's base; offsets and sizes stay. Unreferenced allocs are erased.

On upstream's softmax_rows this reproduces the 34 dump exactly: ``t``,
``t__tmp_v0``, ``e``, ``t__tmp_v1`` share ``mem_vec_2``, ``tmp`` keeps
``mem_vec_3`` (``row_sum`` reads it), ``mx`` and ``s`` share ``mem_vec_4``.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from pypto.core.analysis.aliases import forbidden_inputs
from pypto.core.analysis.buffers import tile_buffers
from pypto.core.analysis.liveness import Liveness
from pypto.core.analysis.memref import alloc_ops, alloc_size, memref_of, remove_unused_allocs, rename_bases
from pypto.dialects.enums import MemorySpace
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import TileType

from .base import FunctionPass
from .registry import register_pass


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


def buffer_groups(f: func.FuncOp) -> list[Group]:
    """The reusable on-chip buffer groups of ``f`` (program order of first definition)."""
    allocs: dict[str, TileAllocOp] = {a.base.data: a for a in alloc_ops(f)}
    pinned = {b for b, a in allocs.items() if isinstance(a.pinned, IntegerAttr) and a.pinned.value.data}
    liveness = Liveness(f)
    groups: list[Group] = []
    for base, values in tile_buffers(f).items():
        if base in pinned:
            continue
        t, m = values[0].type, memref_of(values[0].type)
        assert isinstance(t, TileType) and m is not None
        alloc = allocs.get(base)
        size = alloc_size(alloc) if alloc is not None else m.size.data
        life = liveness.buffer_range(values)
        groups.append(Group(base, t.memory_space, size, life.start, life.end, values))
    return sorted(groups, key=lambda g: g.start)


@dataclass
class _Buffer:
    """One packed buffer: its groups, their lifetimes sorted, and, for :meth:`admits`, the unions of their
    value ids and of the ids of the inputs their producers may not write over.

    The members' lifetimes pairwise do not overlap, so sorted by ``(start, last)`` their ``last`` values
    do not decrease either: a lifetime ``[s, l]`` overlaps a member iff the last member starting before
    ``l`` ends after ``s`` -- one bisection instead of a scan of every member (which made the packing
    quadratic in the number of groups when they all share one buffer, as N independent tiles do).
    """

    members: list[Group]
    value_ids: set[int]
    forbidden_ids: set[int]
    lives: list[tuple[int, int]] = field(default_factory=list)
    """The members' ``(start, last)``, sorted."""

    def __post_init__(self) -> None:
        self.lives = sorted((m.start, m.last) for m in self.members)

    def overlaps(self, g: Group) -> bool:
        """``any(_overlap(g, m) for m in self.members)``."""
        i = bisect_left(self.lives, (g.last,))  # the members starting before g.last: lives[:i]
        return i > 0 and self.lives[i - 1][1] > g.start

    def admits(self, g: Group, g_values: set[int], g_forbidden: set[int]) -> bool:
        """``all(can_share(g, m) for m in self.members)``, with the alias checks against the unions (one
        set intersection each instead of one pass over every member's producers)."""
        if g.space != self.members[0].space:  # every member shares the first one's space
            return False
        if self.overlaps(g):
            return False
        return g_forbidden.isdisjoint(self.value_ids) and self.forbidden_ids.isdisjoint(g_values)

    def add(self, g: Group, g_values: set[int], g_forbidden: set[int]) -> None:
        self.members.append(g)
        life = (g.start, g.last)
        self.lives.insert(bisect_left(self.lives, life), life)
        self.value_ids |= g_values
        self.forbidden_ids |= g_forbidden


def _forbidden_ids(g: Group) -> set[int]:
    """Ids of the values a producer in ``g`` may not write over (:func:`_forbids` of ``g`` as the writer)."""
    return {id(v) for op in g.producers() for v in forbidden_inputs(op)}


def plan_reuse(groups: list[Group]) -> dict[str, str]:
    """First-fit-decreasing packing: base -> representative base (renamed ones only)."""
    order = sorted(groups, key=lambda g: -g.size)  # stable: ties stay in program order
    buffers: list[_Buffer] = []
    for g in order:
        g_values, g_forbidden = {id(v) for v in g.values}, _forbidden_ids(g)
        for buf in buffers:
            if buf.admits(g, g_values, g_forbidden):
                buf.add(g, g_values, g_forbidden)
                break
        else:
            buffers.append(_Buffer([g], set(g_values), set(g_forbidden)))
    return {g.base: buf.members[0].base for buf in buffers for g in buf.members[1:]}


def reuse_function(f: func.FuncOp) -> dict[str, str]:
    """Share buffers in one function; returns the renaming applied."""
    mapping = plan_reuse(buffer_groups(f))
    rename_bases(f, mapping)
    remove_unused_allocs(f)
    return mapping


@register_pass
@dataclass(frozen=True)
class MemoryReuse(FunctionPass):
    """Lifetime-based sharing of same-space on-chip buffers."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        reuse_function(f)
