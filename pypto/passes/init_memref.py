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
  (:func:`pypto.passes.materialize_semantic_aliases.materialize_aliases`),
- reconciles DDR names across calls: a callee's parameter takes the MemRef its
  call sites pass (when they agree) and a call's result takes the callee's
  result type (the tensor the callee writes, usually the caller's ``Out``
  argument). Numbering is unchanged, so the upstream examples print exactly
  as upstream.

The helpers at the top of this module (MemRef access, retyping, renaming a
buffer, alloc bookkeeping) are shared by passes 33-35.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import FunctionType, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pypto.dialects.enums import MemorySpace, MemorySpaceAttr
from pypto.dialects.op_facts import alias_operand, is_view
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import DYNAMIC, MemRefAttr, TensorType, TileType

from .base import PyPTOPass
from .registry import register_pass

# ---------------------------------------------------------------------------
# Shared MemRef helpers (used by InitMemRef, MaterializeSemanticAliases,
# MemoryReuse and AllocateMemoryAddr)
# ---------------------------------------------------------------------------

def memref_of(t: Attribute) -> MemRefAttr | None:
    """The MemRef a tile or tensor type carries (None for other types)."""
    if isinstance(t, (TileType, TensorType)):
        return t.get_memref()
    return None


def is_buffer_type(t: Attribute) -> bool:
    """Tiles and tensors are buffers; scalars, indices and pointers are not."""
    return isinstance(t, (TileType, TensorType))


def with_memref(t: Attribute, m: MemRefAttr | None) -> Attribute:
    """``t`` with its MemRef replaced (tiles keep their view)."""
    if isinstance(t, TileType):
        return t.with_(memref=m)
    if isinstance(t, TensorType):
        return t.with_memref(m)
    return t


def set_type(v: SSAValue, t: Attribute) -> None:
    """Retype an SSA value in place (xDSL exposes ``type`` read-only)."""
    v._type = t  # pyright: ignore[reportPrivateUsage]


def buffer_bytes(t: TileType | TensorType) -> int:
    """Static byte size of a tile or tensor; 0 for a dynamic shape (upstream)."""
    if DYNAMIC in t.get_shape():
        return 0
    return t.num_bytes()


def space_token(space: MemorySpace) -> str:
    """``Vec`` -> ``vec``: the space part of a base name ``mem_vec_3``."""
    return space.value.lower()


def buffer_space(t: Attribute) -> MemorySpace:
    """The memory space a buffer type lives in (tensors: DDR)."""
    return t.memory_space if isinstance(t, TileType) else MemorySpace.DDR


def function_values(f: func.FuncOp) -> Iterator[SSAValue]:
    """Every block argument and op result of a function, in program order."""

    def block_values(block: Block) -> Iterator[SSAValue]:
        yield from block.args
        for op in block.ops:
            yield from op_values(op)

    def op_values(op: Operation) -> Iterator[SSAValue]:
        for region in op.regions:
            for block in region.blocks:
                yield from block_values(block)
        yield from op.results

    for block in f.body.blocks:
        yield from block_values(block)


def return_op(f: func.FuncOp) -> func.ReturnOp | None:
    """The ``func.return`` of a single-block function, if any."""
    block = f.body.blocks.first
    if block is None:
        return None
    last = block.last_op
    return last if isinstance(last, func.ReturnOp) else None


def sync_signature(f: func.FuncOp) -> None:
    """Make ``f``'s function type match its block arguments and its returns."""
    block = f.body.blocks.first
    if block is None:
        return
    ret = return_op(f)
    outputs = list(ret.operand_types) if ret is not None else list(f.function_type.outputs.data)
    new = FunctionType.from_lists(list(block.arg_types), outputs)
    if new != f.function_type:
        f.function_type = new


def rebase(f: func.FuncOp, fn: Callable[[MemRefAttr], MemRefAttr | None]) -> bool:
    """Replace every MemRef in ``f`` by ``fn(memref)`` (None keeps it); returns
    whether anything changed. The function signature follows."""
    changed = False
    for v in function_values(f):
        m = memref_of(v.type)
        if m is None:
            continue
        new = fn(m)
        if new is not None and new != m:
            set_type(v, with_memref(v.type, new))
            changed = True
    if changed:
        sync_signature(f)
    return changed


def rename_bases(f: func.FuncOp, mapping: dict[str, str]) -> bool:
    """Rename buffers (MemRef bases) in ``f`` simultaneously; offsets and
    sizes stay. Returns whether anything changed."""
    if not mapping:
        return False

    def fn(m: MemRefAttr) -> MemRefAttr | None:
        new = mapping.get(m.base.data)
        return None if new is None else MemRefAttr.get(new, m.offset.data, m.size.data)

    return rebase(f, fn)


def strip_bases(f: func.FuncOp, bases: set[str]) -> bool:
    """Drop the MemRef of every DDR tensor in ``f`` naming one of ``bases``."""
    changed = False
    for v in function_values(f):
        m = memref_of(v.type)
        if m is not None and isinstance(v.type, TensorType) and m.base.data in bases:
            set_type(v, with_memref(v.type, None))
            changed = True
    if changed:
        sync_signature(f)
    return changed


def alloc_ops(f: func.FuncOp) -> list[TileAllocOp]:
    """The ``pl.tile.alloc`` ops of a function, in order."""
    return [op for op in f.body.walk() if isinstance(op, TileAllocOp)]


def used_bases(f: func.FuncOp) -> set[str]:
    """Every MemRef base some value of ``f`` refers to."""
    out: set[str] = set()
    for v in function_values(f):
        m = memref_of(v.type)
        if m is not None:
            out.add(m.base.data)
    return out


def remove_unused_allocs(f: func.FuncOp) -> int:
    """Erase allocs no tile refers to any more; returns how many."""
    used = used_bases(f)
    n = 0
    for op in alloc_ops(f):
        if op.base.data not in used and not op.result.uses:
            op.detach()
            op.erase()
            n += 1
    return n


def make_alloc(base: str, space: MemorySpace, size: int) -> TileAllocOp:
    """``<base>: pl.Ptr = pl.tile.alloc(pl.Mem.<space>, size)``."""
    op = TileAllocOp.build_from_args(
        {},
        {"space": MemorySpaceAttr(space), "size": IntegerAttr(size, i64), "base": StringAttr(base)},
    )
    assert isinstance(op, TileAllocOp)
    op.result.name_hint = base
    return op


def functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks.first is not None]


def yield_of(block: Block) -> Operation | None:
    last = block.last_op
    return last if isinstance(last, scf.YieldOp) else None


# ---------------------------------------------------------------------------
# InitMemRef
# ---------------------------------------------------------------------------


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


def _callees(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in functions(module)}


def _fresh_base(f: func.FuncOp, space: str, taken: set[str]) -> str:
    n = 0
    while f"mem_{space}_{n}" in taken:
        n += 1
    return f"mem_{space}_{n}"


def reconcile_calls(module: ModuleOp) -> None:
    """Make call sites and callees agree on DDR MemRefs (see module docstring).

    A callee parameter whose call sites all pass the same MemRef is renamed to
    it (inside the callee; a callee-local buffer that already used that name
    gets a fresh one); then each call's results take the callee's result types.
    Repeats until stable (a call graph is a DAG: a few rounds).
    """
    funcs = _callees(module)
    for _ in range(len(funcs) + 2):
        changed = False
        sites: dict[str, list[func.CallOp]] = {}
        for f in funcs.values():
            for op in f.body.walk():
                if isinstance(op, func.CallOp) and op.callee.root_reference.data in funcs:
                    sites.setdefault(op.callee.root_reference.data, []).append(op)
        for name, calls in sites.items():
            callee = funcs[name]
            entry = callee.body.blocks.first
            assert entry is not None
            mapping: dict[str, str] = {}
            for i, param in enumerate(entry.args):
                if not isinstance(param.type, TensorType):
                    continue
                pm = memref_of(param.type)
                passed = {memref_of(c.arguments[i].type) for c in calls if i < len(c.arguments)}
                if pm is not None and len(passed) == 1:
                    (am,) = passed
                    if am is not None and am.base.data != pm.base.data:
                        mapping[pm.base.data] = am.base.data
                    if am is not None:
                        continue
                if pm is None and passed == {None}:
                    continue
                # Call sites disagree (or the parameter lost its MemRef): no
                # single type can satisfy func.call's verifier, so the tensor
                # goes without a DDR MemRef on both sides.
                if pm is not None:
                    changed |= strip_bases(callee, {pm.base.data})
                for c in calls:
                    caller = c.parent_op()
                    while caller is not None and not isinstance(caller, func.FuncOp):
                        caller = caller.parent_op()
                    cm = memref_of(c.arguments[i].type) if i < len(c.arguments) else None
                    if caller is not None and cm is not None:
                        changed |= strip_bases(caller, {cm.base.data})
            if mapping:
                # A callee-local buffer already named like a caller buffer moves aside.
                taken = used_bases(callee) | set(mapping.values())
                for b in used_bases(callee):
                    if b in mapping.values() and b not in mapping and b.startswith("mem_ddr_"):
                        new = _fresh_base(callee, "ddr", taken)
                        taken.add(new)
                        mapping[b] = new
                changed |= rename_bases(callee, mapping)
        for f in funcs.values():
            fmap: dict[str, str] = {}
            for op in f.body.walk():
                if not isinstance(op, func.CallOp) or op.callee.root_reference.data not in funcs:
                    continue
                outs = funcs[op.callee.root_reference.data].function_type.outputs.data
                for r, t in zip(op.results, outs, strict=False):
                    rm, tm = memref_of(r.type), memref_of(t)
                    if r.type == t:
                        continue
                    if rm is not None and tm is not None and rm.base.data != tm.base.data:
                        fmap[rm.base.data] = tm.base.data
                    else:
                        set_type(r, t)
                        changed = True
            if fmap:
                changed |= rename_bases(f, fmap)
            sync_signature(f)
        if not changed:
            return


def init_function(f: func.FuncOp) -> None:
    """Number, type and allocate the buffers of one function."""
    numbering = _Numbering(f)
    numbering.run()
    numbering.insert_allocs()
    sync_signature(f)


@register_pass
@dataclass(frozen=True)
class InitMemRef(PyPTOPass):
    """Give every tile / DDR tensor a MemRef and every on-chip buffer an alloc."""

    PASS_NAME = "InitMemRef"
    name = "init-memref"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from .materialize_semantic_aliases import materialize_aliases

        for f in functions(op):
            init_function(f)
            materialize_aliases(f)
        reconcile_calls(op)


__all__ = [
    "InitMemRef",
    "alloc_ops",
    "buffer_bytes",
    "buffer_space",
    "function_values",
    "functions",
    "init_function",
    "is_buffer_type",
    "make_alloc",
    "memref_of",
    "rebase",
    "reconcile_calls",
    "remove_unused_allocs",
    "rename_bases",
    "set_type",
    "space_token",
    "strip_bases",
    "sync_signature",
    "used_bases",
    "with_memref",
    "yield_of",
]
