"""PTOAS's PlanMemory dump: ``end PTO plan Mem!`` then the module in PTOAS's memref form.

PTOAS's PlanMemory pass (``PTOPlanMemory.cpp``) prints, on stderr, the line
``end PTO plan Mem!`` and then the whole module as it stands after planning:
tiles lowered to memrefs by its ``PTOViewToMemref`` pass, each planned buffer a
``pto.pointer_cast`` of an ``i64`` byte-address constant. Its lit tests check
that text; :func:`plan_memory_dump` writes it from our planned module (the same
facts: buffers, byte offsets, address spaces, shapes and strides), without
changing the module:

- an ``alloc_tile`` is ``%N = pto.pointer_cast(%cADDR_i64) : memref<RxCxT,
  strided<[rs, cs]>, #pto.address_space<loc>>`` then ``pto.bind_tile`` of it
  with the tile's ``#pto.tile_buf_config<...>`` (result stride offset ``?``);
  strides as PTOAS's (row-major: ``[cols, 1]``, column-major ``[1, rows]``,
  fractal boxes ``[cols, inner rows]`` / ``[inner cols, rows]``; ``compact=2``
  adds one to the major stride);
- a buffer that no op writes (no ``outs`` use, as PTOAS's liveness gives it no
  life) is not planned by PTOAS: it stays ``memref.alloc()``;
- every other tile-typed value takes the memref type of its tile;
- SSA names as MLIR prints them: ``%cN_i64`` / ``%cN`` / ``%true`` for
  constants, ``%argN`` for block arguments, numbers for the rest.

The ptoas CLI prints it where PTOAS does: whenever PlanMemory runs, i.e. below
``--pto-level=level3`` (see :mod:`pypto.ptoas.cli`).
"""

from __future__ import annotations

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.memref import AllocOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto.ptoas.dialect import DpsOp
from pypto.ptoas.dialect.attrs import AddressSpaceAttr, BLayout, SLayout
from pypto.ptoas.dialect.isa_attrs import TileBufConfigAttr
from pypto.ptoas.dialect.isa_misc_ops import BindTileOp
from pypto.ptoas.dialect.tile_ops import AllocTileOp, PointerCastOp
from pypto.ptoas.dialect.types import TileBufType, TileSpec, element_bits
from pypto.ptoas.pto_text import print_pto

from .plan_memory import buffer_values

PLAN_MEMORY_MARK = "end PTO plan Mem!"
"""The line PTOAS's PlanMemory prints before the module."""

_SLAYOUT_CODE = {SLayout.none_box: 0, SLayout.row_major: 1, SLayout.col_major: 2}


def tile_strides(spec: TileSpec) -> tuple[int, int]:
    """PTOAS's ``[row stride, col stride]`` (elements) of a tile's memref form."""
    major_extra = 1 if spec.compact == 2 else 0
    col_major = spec.blayout == BLayout.col_major
    if spec.slayout == SLayout.none_box:
        if col_major:
            return 1, spec.rows + major_extra
        return spec.cols + major_extra, 1
    elem_bytes = max(1, element_bits(spec.dtype) // 8)
    if spec.fractal == 1024:
        inner_rows, inner_cols = 16, 16
    elif spec.fractal == 32:
        inner_rows, inner_cols = 16, 2
    elif spec.slayout == SLayout.row_major:
        inner_rows, inner_cols = 16, 32 // elem_bytes
    else:
        inner_rows, inner_cols = 32 // elem_bytes, 16
    if col_major:
        return inner_cols, spec.rows + major_extra
    return spec.cols + major_extra, inner_rows


def tile_memref_type(spec: TileSpec, offset_known: bool) -> MemRefType:
    """The memref PTOAS lowers a tile to (``offset: ?`` unless ``offset_known``)."""
    layout = StridedLayoutAttr(list(tile_strides(spec)), 0 if offset_known else None)
    return MemRefType(spec.dtype, [spec.rows, spec.cols], layout, AddressSpaceAttr(spec.loc))


def tile_config(spec: TileSpec) -> TileBufConfigAttr:
    """The tile's ``#pto.tile_buf_config<...>``."""
    blayout = 1 if spec.blayout == BLayout.col_major else 0
    return TileBufConfigAttr(
        IntAttr(blayout),
        IntAttr(_SLAYOUT_CODE[spec.slayout]),
        IntAttr(spec.fractal),
        IntAttr(spec.pad),
        IntAttr(spec.compact),
    )


def _memref_of(t: Attribute) -> Attribute:
    return tile_memref_type(t.spec(), False) if isinstance(t, TileBufType) else t


def _written(op: AllocTileOp) -> bool:
    for value in buffer_values(op):
        for use in value.uses:
            user = use.operation
            if isinstance(user, DpsOp) and use.index >= len(user.operands) - user.OUTS:
                return True
    return False


def _lower_alloc(op: AllocTileOp, written: bool) -> None:
    t = op.result.type
    assert isinstance(t, TileBufType)
    spec = t.spec()
    base_type = tile_memref_type(spec, True)
    if op.addr is not None and written:
        base: Operation = PointerCastOp.build(operands=[[op.addr]], result_types=[base_type])
    else:
        base = AllocOp([], [], base_type)
    dims = [v for v in (op.valid_row, op.valid_col) if v is not None]
    row, col = ([dims[0]], [dims[1]]) if len(dims) == 2 else ([], [])
    bind = BindTileOp.build(
        operands=[base.results[0], row, col],
        result_types=[tile_memref_type(spec, False)],
        properties={"config": tile_config(spec)},
    )
    parent = op.parent
    assert parent is not None
    parent.insert_ops_before([base, bind], op)
    op.result.replace_all_uses_with(bind.result)
    op.detach()
    op.erase()


def _const_name(op: ConstantOp) -> str | None:
    value, t = op.value, op.result.type
    if not isinstance(value, IntegerAttr):
        return None  # PTOAS's dump numbers its float scalars (trems_emitc.pto checks `%[0-9]+`)
    n = value.value.data
    if isinstance(t, IndexType):
        return f"c{n}".replace("-", "_")
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "true" if n else "false"
    return f"c{n}_i{t.width.data}".replace("-", "_") if isinstance(t, IntegerType) else None


def _rename(func: FuncOp) -> None:
    args = 0
    for op in func.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = f"arg{args}"
                    args += 1
        if op is func:
            continue
        for r in op.results:
            r.name_hint = _const_name(op) if isinstance(op, ConstantOp) else None


def _retype(value: SSAValue) -> None:
    new = _memref_of(value.type)
    if new is not value.type:
        value._type = new  # noqa: SLF001 -- a print-only clone: types change without rebuilding ops


def lower_to_memref_form(module: ModuleOp) -> ModuleOp:
    """A copy of ``module`` in PTOAS's post-PlanMemory memref form (for printing only)."""
    clone = module.clone()
    allocs = [op for op in clone.walk() if isinstance(op, AllocTileOp)]
    for op in allocs:
        _lower_alloc(op, _written(op))
    for op in clone.walk():
        for r in op.results:
            _retype(r)
        for region in op.regions:
            block: Block
            for block in region.blocks:
                for arg in block.args:
                    _retype(arg)
        if isinstance(op, FuncOp):
            ft = op.function_type
            op.function_type = FunctionType.from_lists(
                [_memref_of(t) for t in ft.inputs.data], [_memref_of(t) for t in ft.outputs.data]
            )
            _rename(op)
    return clone


def plan_memory_dump(module: ModuleOp) -> str:
    """``end PTO plan Mem!`` and the module in PTOAS's memref form, as PTOAS's PlanMemory prints them."""
    return f"{PLAN_MEMORY_MARK}\n{print_pto(lower_to_memref_form(module)).rstrip()}\n"


__all__ = ["PLAN_MEMORY_MARK", "lower_to_memref_form", "plan_memory_dump", "tile_config", "tile_strides"]
