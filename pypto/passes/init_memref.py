"""InitMemRef (pass 32): give every tile and DDR tensor a MemRef, and every
on-chip buffer a ``pl.tile.alloc`` at function entry.

Per function, one counter numbers the buffers the way upstream PyPTO does
(pl-dsl.md §4, upstream ``32_after_InitMemRef`` dumps):

1. tensor parameters first, in order: ``MemRef("mem_ddr_<n>", 0, bytes)``;
2. then every value the body defines, in program order: a tile result gets
   ``MemRef(mem_<space>_<n>, 0, bytes)`` and an alloc
   ``mem_<space>_<n>: pl.Ptr = pl.tile.alloc(pl.Mem.<Space>, bytes)``; a tensor
   result (``pl.tensor.create``, a call's result) gets ``mem_ddr_<n>``;
   the results of ``scf.for`` / ``scf.if`` take a number too (upstream creates
   and then drops one) but share the buffer their ``yield`` carries.

Values that are the same buffer take no number and share the MemRef of their
source (the op class's ``ALIAS_OPERAND``, :func:`pypto.dialects.op_facts.alias_operand`): views (``reshape``; ``tensor.slice``), in-place
results (``matmul_acc`` writes its ``acc``; ``store`` returns its ``output``;
``assemble`` writes its ``target``), loop iter_args (their init). Offsets are 0
until AllocateMemoryAddr.

xDSL types are checked strictly (an ``scf.for`` init, iter_arg, yield and
result must have one type; a call's operands must have the callee's parameter
types), so the pass also

- makes loop carries and ``if`` results one buffer
  (:func:`pypto.core.analysis.aliases.materialize_aliases`),
- reconciles DDR names across calls: a callee's parameter takes the MemRef its
  call sites pass (when they agree) and a call's result takes the callee's
  result type (the tensor the callee writes, usually the caller's ``Out``
  argument). Numbering is unchanged, so the upstream examples print exactly
  as upstream (:func:`pypto.core.analysis.calls.reconcile_calls`).

The MemRef helpers live in :mod:`pypto.core.analysis.memref`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pypto.core.analysis.aliases import materialize_aliases
from pypto.core.analysis.calls import reconcile_calls
from pypto.core.analysis.memref import (
    alloc_ops,
    buffer_bytes,
    buffer_space,
    is_buffer_type,
    make_alloc,
    memref_of,
    set_type,
    space_token,
    sync_signature,
    with_memref,
    yield_of,
)
from pypto.dialects.enums import MemorySpace
from pypto.dialects.op_facts import alias_operand, is_view
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import MemRefAttr, TensorType, TileType

from .base import FunctionPass
from .registry import register_pass


@dataclass
class _Numbering:
    """Assigns MemRefs in one function (upstream's per-function counter)."""

    f: func.FuncOp
    next_id: int = 0

    def __post_init__(self) -> None:
        self.allocs: list[tuple[str, MemorySpace, int]] = []

    def fresh(self, t: TileType | TensorType) -> MemRefAttr:
        n = self.next_id
        self.next_id += 1
        space = buffer_space(t)
        base = f"mem_{space_token(space)}_{n}"
        size = buffer_bytes(t)
        if space != MemorySpace.DDR:
            self.allocs.append((base, space, size))
        return MemRefAttr.get(base, 0, size)

    def assign(self, v: SSAValue, m: MemRefAttr | None) -> None:
        if m is not None and is_buffer_type(v.type) and memref_of(v.type) is None:
            set_type(v, with_memref(v.type, m))

    def assign_fresh(self, v: SSAValue) -> None:
        t = v.type
        if isinstance(t, (TileType, TensorType)) and t.get_memref() is None:
            self.assign(v, self.fresh(t))

    def consume_id(self, v: SSAValue) -> None:
        """Upstream numbers a loop/if/call result and then replaces its MemRef."""
        if is_buffer_type(v.type) and memref_of(v.type) is None:
            self.next_id += 1

    def run(self) -> None:
        entry = self.f.body.blocks.first
        assert entry is not None
        for a in entry.args:
            self.assign_fresh(a)
        self.block(entry)

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def shared(self, op: Operation, result_type: Attribute) -> MemRefAttr | None:
        """The MemRef a view / in-place result shares with its source operand."""
        field = alias_operand(op)
        if field is None:
            return None
        src: SSAValue | None = getattr(op, field, None)
        if src is None:
            return None
        m = memref_of(src.type)
        if m is None:
            return None
        if is_view(op) and isinstance(result_type, (TileType, TensorType)):
            return MemRefAttr.get(m.base.data, m.offset.data, buffer_bytes(result_type) or m.size.data)
        return m

    def op(self, op: Operation) -> None:
        if isinstance(op, TileAllocOp):
            return
        if isinstance(op, scf.ForOp):
            body = op.body.block
            for arg, init in zip(body.args[1:], op.iter_args, strict=False):
                self.assign(arg, memref_of(init.type))
            self.block(body)
            y = yield_of(body)
            for i, r in enumerate(op.results):
                self.consume_id(r)
                if y is not None and i < len(y.operands):
                    self.assign(r, memref_of(y.operands[i].type))
            return
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                for b in region.blocks:
                    self.block(b)
            ys = [yield_of(b) for region in op.regions for b in region.blocks]
            for i, r in enumerate(op.results):
                self.consume_id(r)
                for y in ys:
                    if y is not None and i < len(y.operands) and memref_of(y.operands[i].type) is not None:
                        self.assign(r, memref_of(y.operands[i].type))
                        break
            return
        if isinstance(op, func.CallOp):
            for r in op.results:
                self.assign_fresh(r)  # provisional (upstream's name); reconciled below
            return
        for region in op.regions:
            for b in region.blocks:
                for a in b.args:
                    self.assign_fresh(a)
                self.block(b)
        for r in op.results:
            m = self.shared(op, r.type)
            if m is not None:
                self.assign(r, m)
            else:
                self.assign_fresh(r)

    def insert_allocs(self) -> None:
        entry = self.f.body.blocks.first
        assert entry is not None
        existing = {a.base.data for a in alloc_ops(self.f)}
        new: list[Operation] = []
        seen: set[str] = set()
        for base, space, size in self.allocs:
            if base in seen or base in existing:
                continue
            seen.add(base)
            alloc = make_alloc(base, space, size)
            alloc.location = self.f.location
            new.append(alloc)
        if not new:
            return
        first = entry.first_op
        if first is None:
            entry.add_ops(new)
        else:
            Rewriter.insert_op(new, InsertPoint.before(first))


def init_function(f: func.FuncOp) -> None:
    """Number, type and allocate the buffers of one function."""
    numbering = _Numbering(f)
    numbering.run()
    numbering.insert_allocs()
    sync_signature(f)


@register_pass
@dataclass(frozen=True)
class InitMemRef(FunctionPass):
    """Give every tile / DDR tensor a MemRef and every on-chip buffer an alloc."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        init_function(f)
        materialize_aliases(f)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        super().apply(ctx, op)
        reconcile_calls(op)
