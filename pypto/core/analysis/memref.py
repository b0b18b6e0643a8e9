"""MemRef utilities: read, retype and rename the buffers (MemRef bases) of a
``pl`` function, and keep its ``pl.tile.alloc`` ops in step.

Shared by InitMemRef, MaterializeSemanticAliases, MemoryReuse and
AllocateMemoryAddr (passes 32-35) and by :mod:`pypto.core.analysis.aliases`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import FunctionType, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto.dialects.enums import MemorySpace, MemorySpaceAttr
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import DYNAMIC, MemRefAttr, TensorType, TileType


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


def yield_of(block: Block) -> Operation | None:
    """The ``scf.yield`` ending ``block``, if any."""
    last = block.last_op
    return last if isinstance(last, scf.YieldOp) else None


def alloc_size(alloc: TileAllocOp) -> int:
    """The byte size an alloc reserves."""
    size = alloc.size
    assert isinstance(size, IntegerAttr)
    return size.value.data
