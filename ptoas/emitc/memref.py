"""``memref.alloc`` (PTOAS's internal memref form of a tile) -> a tile, placed as ``alloc_tile`` is.

A lazily registered handler module (``context.LAZY_HANDLER_MODULES``): importing it imports
xDSL's memref dialect, which a kernel lowered by our codegen never uses.
"""

from __future__ import annotations

from xdsl.dialects.memref import AllocOp
from xdsl.ir import Operation

from .context import FuncContext, handles
from .errors import EmitError
from .tiles import declare_tile


@handles(AllocOp)
def _memref_alloc(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, AllocOp)
    if op.dynamic_sizes or op.symbol_operands:
        raise EmitError("dynamic memref tiles are not supported", op)
    declare_tile(ctx, op, op.memref, None)
