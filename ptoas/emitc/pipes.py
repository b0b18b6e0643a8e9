"""Cross-core pipes (cube <-> vector): push, pop, free.

PTOAS's FIFO (its C++ shape, as its tests check it):

- ``%p = pto.initialize_l2g2l_pipe {dir_mask, slot_size, slot_num[, local_slot_num, flag_base,
  nosplit]}(%gm, %local[, %peer])`` -> ``auto v9 = TPipe<flag_base, Direction::DIR_.., slot_size,
  slot_num, local_slot_num, nosplit>(gm, c2v_buf, v2c_buf);`` (the local buffer is the c2v one for
  ``dir_mask = 1``, the v2c one for 2, both for 3; the other is a hoisted ``const int32_t v = 0;``);
  ``initialize_l2l_pipe`` likewise with ``nullptr`` for GM and ``local_slot_num`` 2. ``flag_base``
  and ``nosplit`` are settled as PTOAS's passes settle them (``fifo_rules.resolve_pipe_inits``).
  On a5 the GM directions of an l2g2l pipe are ``DIR_C2V_GM`` / ``DIR_V2C_GM``;
- ``pto.tpush(%t, %p) {split = N}`` -> ``TPUSH<TPipe<..>, Tile<..>, TileSplitAxis::..>(v9, t);``,
  ``pto.tpop`` -> ``TPOP<..>(v9, t);`` (its tile a ``pto.declare_tile``: ``Tile<...> t;``, placed by
  the pop), ``pto.tfree(%p)`` -> ``TFREE<TPipe<..>, TileSplitAxis::..>(v9);``;
- a function with ``aic/aiv_initialize_pipe`` is lowered as PTOAS's PTOLowerFrontendPipeOps does:
  the init becomes one pipe (a2a3: ``initialize_l2g2l_pipe`` over ``gm_slot_buffer`` with
  ``slot_num = local_slot_num`` 8, or 4 for both directions; a5: ``initialize_l2l_pipe``), and
  ``tpush_to_aiv``... become ``TPUSH``/``TPOP``/``TFREE`` on it; a popped tile with valid-dim
  operands is ``Tile<..> t; t.SetValidShape(vr, vc);``, one with ``?`` valid dims and none
  ``Tile<..> t = Tile<..>(rows, cols);``.

PyPTO's own ``.pto`` (no ``aic/aiv_initialize_pipe``) keeps the one-FIFO-per-direction calls:

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
from xdsl.ir import Operation, SSAValue

from pypto.ptoas.dialect import target_arch
from pypto.ptoas.dialect.base import A2A3
from pypto.ptoas.dialect.isa_misc_ops import (
    AicInitializePipeOp,
    AivInitializePipeOp,
    DeclareTileOp,
    ImportReservedBufferOp,
    InitializeL2G2LPipeOp,
    InitializeL2LPipeOp,
    ReserveBufferOp,
    TFreeOp,
    TPopOp,
    TPushOp,
)
from pypto.ptoas.dialect.misc_ops import GetSubBlockIdxOp, GetSubBlockNumOp
from pypto.ptoas.dialect.pipe_ops import (
    TFreeFromAicOp,
    TFreeFromAivOp,
    TPopFromAicOp,
    TPopFromAivOp,
    TPushToAicOp,
    TPushToAivOp,
)
from pypto.ptoas.dialect.types import DYNAMIC
from pypto.ptoas.passes.fifo_rules import PipeInit, int_attr, resolve_pipe_inits

from .context import FuncContext, handles
from .cxx_types import tile_ctype, tile_spec
from .errors import EmitError
from .tiles import declare_tile

PUSH = {TPushToAivOp: "TPUSH_TO_AIV", TPushToAicOp: "TPUSH_TO_AIC"}
POP = {TPopFromAicOp: "TPOP_FROM_AIC", TPopFromAivOp: "TPOP_FROM_AIV"}
FREE = {TFreeFromAicOp: "TFREE_FROM_AIC", TFreeFromAivOp: "TFREE_FROM_AIV"}


def _split(op: Operation) -> int:
    split = getattr(op, "split", None) or op.attributes.get("split")  # verified: every pipe op has one
    if not isinstance(split, IntegerAttr):
        raise EmitError("has no integer 'split' attribute", op)
    return split.value.data


SPLIT_AXES = ("TileSplitAxis::TILE_NO_SPLIT", "TileSplitAxis::TILE_UP_DOWN", "TileSplitAxis::TILE_LEFT_RIGHT")
C2V, V2C = 1, 2
FRONTEND_DIR = {TPushToAivOp: C2V, TPopFromAicOp: C2V, TFreeFromAicOp: C2V}
FRONTEND_DIR |= {TPushToAicOp: V2C, TPopFromAivOp: V2C, TFreeFromAivOp: V2C}


def needs_nosplit_guard(func: FuncOp) -> bool:
    """PTOAS's a5 vector guard: a vector function on a5 with a ``split = 0`` FIFO op and no
    ``get_subblock_idx/num`` of its own runs its body on sub-block 0 only
    (``if (get_subblockid() == 0) { ... }``)."""
    if target_arch(func) == A2A3:
        return False
    ops = list(func.walk())
    if any(isinstance(op, GetSubBlockIdxOp | GetSubBlockNumOp) for op in ops):
        return False
    fifo = (TPushOp, TPopOp, TFreeOp, *PUSH, *POP, *FREE)
    return any(isinstance(op, fifo) and _split(op) == 0 for op in ops)


def _settled(op: Operation) -> PipeInit:
    module = op.get_toplevel_object()
    if not isinstance(module, ModuleOp):
        raise EmitError("is not inside a module", op)
    return resolve_pipe_inits(module).get(op, PipeInit(False, 0))


def _direction(dir_mask: int, gm: bool, a5: bool, op: Operation) -> str:
    if dir_mask == 3:
        return "Direction::DIR_BOTH"
    if dir_mask not in (C2V, V2C):
        raise EmitError(f"has dir_mask = {dir_mask}; expected 1, 2 or 3", op)
    name = "DIR_C2V" if dir_mask == C2V else "DIR_V2C"
    return f"Direction::{name}{'_GM' if gm and a5 else ''}"


def _tpipe(
    ctx: FuncContext, op: Operation, gm: str | None, local: list[SSAValue], slots: tuple[int, int, int]
) -> tuple[str, str]:
    """Write ``auto v = TPipe<...>(gm, c2v, v2c);`` and return (its token, its name)."""
    dir_mask = int_attr(op, "dir_mask") or 0
    settled = _settled(op)
    a5 = target_arch(op) != A2A3
    token = (
        f"TPipe<{settled.flag_base}, {_direction(dir_mask, gm is not None, a5, op)}, {slots[0]}, {slots[1]}, "
        f"{slots[2]}, {'true' if settled.nosplit else 'false'}>"
    )
    names = [ctx.name(v, op) for v in local]
    if dir_mask == 3:
        if len(names) < 2:
            raise EmitError("with dir_mask = 3 needs the c2v and the v2c local buffer", op)
        c2v, v2c = names[0], names[1]
    else:
        zero = ctx.hoist("int32_t", "0")
        c2v, v2c = (names[0], zero) if dir_mask == C2V else (zero, names[0])
    name = ctx.fresh()
    ctx.line(f"auto {name} = {token}({gm if gm is not None else 'nullptr'}, {c2v}, {v2c});")
    return token, name


@handles(InitializeL2G2LPipeOp, InitializeL2LPipeOp)
def _init_fifo(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, InitializeL2G2LPipeOp | InitializeL2LPipeOp)
    slot_size, slot_num = int_attr(op, "slot_size") or 0, int_attr(op, "slot_num") or 0
    addrs = list(op.addrs)
    if isinstance(op, InitializeL2G2LPipeOp):
        local_slots = int_attr(op, "local_slot_num")
        slots = (slot_size, slot_num, slot_num if local_slots is None else local_slots)
        ctx.pipes[op.pipe_result] = _tpipe(ctx, op, ctx.name(addrs[0], op), addrs[1:], slots)
    else:
        ctx.pipes[op.pipe_result] = _tpipe(ctx, op, None, addrs, (slot_size, slot_num, 2))


@handles(AicInitializePipeOp, AivInitializePipeOp)
def _frontend_init(ctx: FuncContext, op: Operation) -> None:
    """PTOAS's PTOLowerFrontendPipeOps: one pipe for the init's directions."""
    assert isinstance(op, AicInitializePipeOp | AivInitializePipeOp)
    dir_mask = int_attr(op, "dir_mask") or 0
    slot_size = int_attr(op, "slot_size") or 0
    slot_num = 4 if dir_mask == 3 else 8
    local = {C2V: [op.c2v_consumer_buf], V2C: [op.v2c_consumer_buf]}.get(dir_mask)
    local = local or [op.c2v_consumer_buf, op.v2c_consumer_buf]
    if target_arch(op) == A2A3:
        if op.gm_slot_buffer is None:
            raise EmitError("requires 'gm_slot_buffer' when lowering to a2/a3", op)
        pipe = _tpipe(ctx, op, ctx.name(op.gm_slot_buffer, op), local, (slot_size, slot_num, slot_num))
    else:
        pipe = _tpipe(ctx, op, None, local, (slot_size, slot_num, 2))
    for direction in (C2V, V2C):
        if dir_mask in (direction, 3):
            ctx.pipes[direction] = pipe


def _pipe(ctx: FuncContext, key: SSAValue | int, op: Operation) -> tuple[str, str]:
    if key not in ctx.pipes:
        which = "C2V" if key == C2V else "V2C"
        raise EmitError(
            f"requires the dominating initialize_pipe op to enable {which}"
            if isinstance(key, int)
            else "uses a pipe whose initialize op was not emitted",
            op,
        )
    return ctx.pipes[key]


def _axis(op: Operation) -> str:
    split = _split(op)
    if split not in (0, 1, 2):
        raise EmitError(f"has split = {split}; expected 0, 1 or 2", op)
    return SPLIT_AXES[split]


def _tile_call(ctx: FuncContext, call: str, op: Operation, pipe: tuple[str, str], tile: SSAValue) -> None:
    spec = tile_spec(tile.type)
    if spec is None:
        raise EmitError(f"expects a tile, got {tile.type}", op)
    ctx.line(f"{call}<{pipe[0]}, {tile_ctype(spec)}, {_axis(op)}>({pipe[1]}, {ctx.name(tile, op)});")


@handles(TPushOp)
def _tpush(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TPushOp)
    _tile_call(ctx, "TPUSH", op, _pipe(ctx, op.pipe_handle, op), op.tile)


@handles(TPopOp)
def _tpop(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TPopOp)
    _tile_call(ctx, "TPOP", op, _pipe(ctx, op.pipe_handle, op), op.tile)


@handles(TFreeOp)
def _tfree(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TFreeOp)
    token, name = _pipe(ctx, op.pipe_handle, op)
    ctx.line(f"TFREE<{token}, {_axis(op)}>({name});")


def _declare(ctx: FuncContext, op: Operation, value: SSAValue) -> str:
    """``Tile<...> v;`` without storage (a pop places it); ``?`` valid dims start full."""
    spec = tile_spec(value.type)
    if spec is None:
        raise EmitError(f"expects a tile, got {value.type}", op)
    ctype = tile_ctype(spec)
    ctx.comment(value)
    name = ctx.define(value)
    if DYNAMIC in (spec.v_row, spec.v_col):
        rows, cols = ctx.hoist("int64_t", str(spec.rows)), ctx.hoist("int64_t", str(spec.cols))
        ctx.line(f"{ctype} {name} = {ctype}({rows}, {cols});")
    else:
        ctx.line(f"{ctype} {name};")
    return name


@handles(DeclareTileOp)
def _declare_tile(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, DeclareTileOp)
    _declare(ctx, op, op.tile)


@handles(*PUSH)
def _push(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TPushToAivOp | TPushToAicOp)
    if ctx.pipes:
        _tile_call(ctx, "TPUSH", op, _pipe(ctx, FRONTEND_DIR[type(op)], op), op.tile)
        return
    ctx.line(f"{PUSH[type(op)]}({ctx.name(op.tile, op)}, {_split(op)});")


@handles(*POP)
def _pop(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TPopFromAicOp | TPopFromAivOp)
    if ctx.pipes:
        pipe = _pipe(ctx, FRONTEND_DIR[type(op)], op)
        if op.valid_row is not None and op.valid_col is not None:
            spec = tile_spec(op.result.type)
            assert spec is not None
            ctx.comment(op.result)
            name = ctx.define(op.result)
            ctx.line(f"{tile_ctype(spec)} {name};")
            ctx.line(f"{name}.SetValidShape({ctx.name(op.valid_row, op)}, {ctx.name(op.valid_col, op)});")
        else:
            _declare(ctx, op, op.result)
        _tile_call(ctx, "TPOP", op, pipe, op.result)
        return
    valid = None
    if op.valid_row is not None and op.valid_col is not None:
        valid = (ctx.name(op.valid_row, op), ctx.name(op.valid_col, op))
    tile = declare_tile(ctx, op, op.result, None, valid)
    ctx.line(f"{POP[type(op)]}({tile}, {_split(op)});")


@handles(*FREE)
def _free(ctx: FuncContext, op: Operation) -> None:
    if ctx.pipes:
        token, name = _pipe(ctx, FRONTEND_DIR[type(op)], op)
        ctx.line(f"TFREE<{token}, {_axis(op)}>({name});")
        return
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
