"""Cross-core pipes (cube <-> vector): push, pop, free.

- ``pto.tpush_to_aiv(%t : T) {split = N}`` -> ``TPUSH_TO_AIV(v7, N);`` (``tpush_to_aic``: ``TPUSH_TO_AIC``);
- ``%t = pto.tpop_from_aic[(%vr, %vc)] {split = N} -> T`` -> the tile declared and placed like an
  ``alloc_tile`` without ``addr`` (``Tile<...> v9[ = Tile<...>(vr, vc)];``, ``TASSIGN`` at a
  :class:`~pypto.ptoas.emitc.context.TilePlacer` address), then ``TPOP_FROM_AIC(v9, N);``
  (``tpop_from_aiv``: ``TPOP_FROM_AIV``). Without the valid-dim operands a ``?`` valid dim is
  the tile's full dim;
- ``pto.tfree_from_aic {split = N}`` -> ``TFREE_FROM_AIC(N);`` (``tfree_from_aiv``: ``TFREE_FROM_AIV``).

- ``%a = pto.reserve_buffer{...base = B} -> i32`` -> ``const int32_t v = B;`` (its planned base);
  ``pto.import_reserved_buffer{name, peer_func}`` -> the base of the peer function's
  reserve_buffer of that name.

On the CPU (``pto_cpu.hpp``) each direction is one process-wide FIFO of tile copies; only
``split = 0`` runs there.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from pypto.ptoas.dialect.isa_misc_ops import ImportReservedBufferOp, ReserveBufferOp
from pypto.ptoas.dialect.pipe_ops import (
    TFreeFromAicOp,
    TFreeFromAivOp,
    TPopFromAicOp,
    TPopFromAivOp,
    TPushToAicOp,
    TPushToAivOp,
)

from .context import FuncContext, handles
from .errors import EmitError
from .tiles import declare_tile

PUSH = {TPushToAivOp: "TPUSH_TO_AIV", TPushToAicOp: "TPUSH_TO_AIC"}
POP = {TPopFromAicOp: "TPOP_FROM_AIC", TPopFromAivOp: "TPOP_FROM_AIV"}
FREE = {TFreeFromAicOp: "TFREE_FROM_AIC", TFreeFromAivOp: "TFREE_FROM_AIV"}


def _split(op: Operation) -> int:
    split = getattr(op, "split", None)  # the verified ``split`` IntegerAttr of every pipe op
    if not isinstance(split, IntegerAttr):
        raise EmitError("has no integer 'split' attribute", op)
    return split.value.data


@handles(*PUSH)
def _push(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TPushToAivOp | TPushToAicOp)
    ctx.line(f"{PUSH[type(op)]}({ctx.name(op.tile, op)}, {_split(op)});")


@handles(*POP)
def _pop(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TPopFromAicOp | TPopFromAivOp)
    valid = None
    if op.valid_row is not None and op.valid_col is not None:
        valid = (ctx.name(op.valid_row, op), ctx.name(op.valid_col, op))
    tile = declare_tile(ctx, op, op.result, None, valid)
    ctx.line(f"{POP[type(op)]}({tile}, {_split(op)});")


@handles(*FREE)
def _free(ctx: FuncContext, op: Operation) -> None:
    ctx.line(f"{FREE[type(op)]}({_split(op)});")


def _base(op: ReserveBufferOp) -> int:
    base = op.attributes.get("base")
    if not isinstance(base, IntegerAttr):
        raise EmitError("reserve_buffer has no base (plan-memory places it)", op)
    return base.value.data


@handles(ReserveBufferOp)
def _reserve_buffer(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, ReserveBufferOp)
    ctx.line(f"const int32_t {ctx.define(op.addr)} = {_base(op)};")


@handles(ImportReservedBufferOp)
def _import_reserved_buffer(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, ImportReservedBufferOp)
    name, peer = op.attributes["name"], op.attributes["peer_func"]
    assert isinstance(name, StringAttr) and isinstance(peer, SymbolRefAttr)
    module = op.get_toplevel_object()
    funcs = [f for f in module.walk() if isinstance(f, FuncOp)] if isinstance(module, ModuleOp) else []
    found = [
        r
        for f in funcs
        if f.sym_name.data == peer.root_reference.data
        for r in f.walk()
        if isinstance(r, ReserveBufferOp) and r.attributes.get("name") == name
    ]
    if not found:
        raise EmitError(f"no reserve_buffer named {name} in @{peer.root_reference.data}", op)
    ctx.line(f"const int32_t {ctx.define(op.addr)} = {_base(found[0])};")
