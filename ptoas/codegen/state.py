"""The per-function lowering state: value maps, the constant pool, tile allocation.

:class:`LoweringState` is what the op handlers (:mod:`.tile_ops`) and the
control-flow lowering (:mod:`.control`) share while one pl function is turned
into one pto ``func.func``:

- ``scalars``: pl scalar value -> pto scalar value;
- ``views``: pl tensor value -> its ``!pto.tensor_view`` (a store's result and a
  loop-carried tensor map to the view of the tensor they update);
- ``tiles``: pl tile value -> :class:`TileRef` (the ``pto.alloc_tile`` value and
  its valid rows / cols);
- constants are pooled (one ``arith.constant`` per value and type, named as
  upstream names them: ``%c0_i64``, ``%c128_index``) and placed at the top of
  the function.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    AnyFloat,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from pypto.core.op_verify import verify_tree
from pypto.diagnostics import error_at
from pypto.dialects.types import TileType
from pypto.ptoas.dialect.tile_ops import AllocTileOp, TMovOp
from pypto.ptoas.dialect.types import DYNAMIC

from .types import UnsupportedType, tile_buf_type

MemKey = tuple[str, int, int]
"""(space, byte offset, byte size) of a tile's MemRef."""


@dataclass(frozen=True)
class TileRef:
    """A pto tile: its alloc value, valid rows / cols (index values) and where it lives."""

    value: SSAValue
    valid_row: SSAValue
    valid_col: SSAValue
    key: MemKey | None

    def same_buffer(self, other: TileRef) -> bool:
        """Both name the same bytes (same MemRef, or the very same alloc when unplanned)."""
        if self.key is not None and other.key is not None:
            return self.key == other.key
        return self.value is other.value


def mem_key(t: TileType) -> MemKey | None:
    """The MemRef of a tile as a comparable key (None before AllocateMemoryAddr)."""
    m = t.get_memref()
    if m is None:
        return None
    return (t.memory_space.value, m.offset.data, m.size.data)


def _const_name(value: int | float, t: Attribute) -> str:
    if isinstance(t, IndexType):
        suffix = "index"
    elif isinstance(t, IntegerType):
        suffix = f"i{t.width.data}"
    else:
        suffix = str(t)
    if isinstance(value, float):
        return f"cst_{suffix}"
    text = str(value) if value >= 0 else f"m{-value}"
    return f"c{text}_{suffix}"


@dataclass
class LoweringState:
    """Everything one function's lowering needs (see the module docstring)."""

    emit_loc: bool
    entry: Block
    scalars: dict[SSAValue, SSAValue] = field(default_factory=dict)
    views: dict[SSAValue, SSAValue] = field(default_factory=dict)
    tiles: dict[SSAValue, TileRef] = field(default_factory=dict)
    consts: dict[tuple[object, Attribute], SSAValue] = field(default_factory=dict)
    const_ops: list[Operation] = field(default_factory=list)
    block: Block | None = None

    # ---- emission -----------------------------------------------------------------

    def loc_of(self, src: Operation | None) -> Attribute | None:
        """``loc("<file>.py":line:col)`` of the pl op (basename, as upstream) when locations are on."""
        if not self.emit_loc or src is None or not isinstance(src.location, FileLineColLoc):
            return None
        loc = src.location
        return FileLineColLoc(StringAttr(os.path.basename(loc.filename.data)), loc.line, loc.column)

    def emit(self, op: Operation, src: Operation | None) -> Operation:
        """Append ``op`` to the current block, located at the pl op ``src``."""
        loc = self.loc_of(src)
        if loc is not None:
            op.location = loc  # type: ignore[assignment]
        assert self.block is not None
        self.block.add_op(op)
        return op

    def const(self, value: int | float, t: Attribute | None = None) -> SSAValue:
        """The pooled ``arith.constant`` of this value and type (default ``index``)."""
        t = IndexType() if t is None else t
        key = (value, t)
        if key not in self.consts:
            if isinstance(t, AnyFloat):
                attr: Attribute = FloatAttr(float(value), t)
            else:
                attr = IntegerAttr(int(value), t)
            op = ConstantOp(attr)
            op.result.name_hint = _const_name(value, t)
            self.const_ops.append(op)
            self.consts[key] = op.result
        return self.consts[key]

    def finish_constants(self) -> None:
        """Put the pooled constants at the top of the function (upstream order: i64 first)."""
        ordered = sorted(self.const_ops, key=lambda op: not isinstance(op.result.type, IntegerType))
        first = self.entry.first_op
        for op in ordered:
            if first is None:
                self.entry.add_op(op)
            else:
                self.entry.insert_op_before(op, first)

    # ---- values -------------------------------------------------------------------

    def scalar(self, value: SSAValue, at: Operation) -> SSAValue:
        """The pto scalar of a pl scalar (constants are pooled on first use)."""
        if value in self.scalars:
            return self.scalars[value]
        owner = value.owner
        if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr | FloatAttr):
            v = owner.value.value.data
            mapped = self.const(v, value.type)
            self.scalars[value] = mapped
            return mapped
        raise error_at(at, f"ptoas codegen: operand of '{at.name}' ({value.type}) is not a scalar it can lower")

    def tile(self, value: SSAValue, at: Operation) -> TileRef:
        """The pto tile of a pl tile value."""
        if value not in self.tiles:
            raise error_at(at, f"ptoas codegen: operand of '{at.name}' is not a tile defined in this function")
        return self.tiles[value]

    def view(self, value: SSAValue, at: Operation) -> SSAValue:
        """The ``!pto.tensor_view`` of a pl tensor value."""
        if value not in self.views:
            raise error_at(at, f"ptoas codegen: tensor operand of '{at.name}' does not come from a parameter")
        return self.views[value]

    @staticmethod
    def static(value: SSAValue) -> int:
        """The constant of an index value, DYNAMIC when it is not one."""
        owner = value.owner
        if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return DYNAMIC

    # ---- tiles --------------------------------------------------------------------

    def alloc(
        self,
        t: Attribute,
        valid: tuple[SSAValue, SSAValue] | None,
        src: Operation,
        name: str | None,
        pad: int = 0,
    ) -> TileRef:
        """A ``pto.alloc_tile`` for a pl tile type at its MemRef address (``addr`` omitted before planning;
        ``pad``: the tile_buf's pad value)."""
        if not isinstance(t, TileType):
            raise error_at(src, f"ptoas codegen: '{src.name}' produces {t}, expected a tile")
        try:
            buf = tile_buf_type(t, pad=pad)
        except UnsupportedType as e:
            raise error_at(src, f"ptoas codegen: '{src.name}': {e}") from None
        if valid is None:
            valid = (self.const(buf.rows.data), self.const(buf.cols.data))
        memref = t.get_memref()
        addr = [self.const(memref.offset.data, i64)] if memref is not None else []
        op = AllocTileOp.build(operands=[addr, [valid[0]], [valid[1]]], result_types=[buf])
        op.result.name_hint = name
        self.emit(op, src)
        return TileRef(op.result, valid[0], valid[1], mem_key(t))

    def move(self, src: TileRef, dst: TileRef, at: Operation) -> None:
        """``pto.tmov`` between two tiles (loop-carried / branch results in different buffers)."""
        self.emit(TMovOp.build(operands=[src.value, dst.value, [], []]), at)  # no fp / pre-quant operand


def check(op: Operation, at: Operation) -> None:
    """Run the new pto op's verifier now, so a lowering bug is reported at the pl op."""
    try:
        verify_tree(op)
    except VerifyException as e:
        raise error_at(at, f"ptoas codegen produced an invalid op: {e}") from None
