"""``memref.alloc`` (PTOAS's internal memref form of a tile) -> a tile, placed as ``alloc_tile`` is;
``memref.reinterpret_cast`` of a GM pointer -> pointer arithmetic.

A lazily registered handler module (``context.LAZY_HANDLER_MODULES``): importing it imports
xDSL's memref dialect, which a kernel lowered by our codegen never uses.
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.memref import AllocOp
from xdsl.ir import Operation

from pypto.ptoas.dialect.attrs import AddressSpaceAttr
from pypto.ptoas.dialect.memref_compat import ReinterpretCastOp

from .context import FuncContext, handles
from .cxx_types import element_ctype
from .errors import EmitError
from .tiles import declare_tile


@handles(AllocOp)
def _memref_alloc(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, AllocOp)
    if op.dynamic_sizes or op.symbol_operands:
        raise EmitError("dynamic memref tiles are not supported", op)
    declare_tile(ctx, op, op.memref, None)


@handles(ReinterpretCastOp)
def _reinterpret_cast(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, ReinterpretCastOp)
    t = op.result.type
    assert isinstance(t, MemRefType)
    space = t.memory_space
    if isinstance(space, AddressSpaceAttr) and space.data.value != "gm":
        raise EmitError("of an on-chip memref is not supported", op)
    src = ctx.name(op.source, op)
    offsets = list(op.offsets)
    static = op.static_offsets.get_values()
    if not offsets and all(o == 0 for o in static):
        ctx.names[op.result] = src
        return
    if offsets and ctx.const_int(offsets[0]) == 0:
        ctx.names[op.result] = src
        return
    off = ctx.name(offsets[0], op) if offsets else str(static[0])
    name = ctx.define(op.result)
    ctx.line(f"__gm__ {element_ctype(t.element_type)}* {name} = {src} + {off};")
