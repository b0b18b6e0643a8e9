"""Tile buffers, data movement and the cube.

- ``alloc_tile`` -> ``Tile<...> v7;`` (``= Tile<...>(rows, cols)`` when a valid dim is ``?``) and
  ``uint64_t v8 = (uint64_t)addr; TASSIGN(v7, v8);``. Without ``addr`` (no plan-memory) the
  emitter places the tile itself (:class:`~pypto.ptoas.emitc.context.TilePlacer`).
  ``pto.pointer_cast`` likewise, and ``memref.alloc`` (internal memref form: :mod:`.memref`).
- ``tmov`` with a quant operand (PTOAS's forms; not modelled, the launch fails): a pre-quant
  scalar -> ``TMOV<..>(d, s, q)``; an fp tile -> ``TMOV_FP<..>(d, s, fp)`` into mat,
  ``TMOV<..>(d, s, fp)`` into vec.
- ``tload`` -> ``TLOAD(tile, gt)``; ``tstore`` -> ``TSTORE[<STPhase::.., TileT, GT, AtomicType::.., ReluPreMode::..>](gt, tile[, q])``;
  ``tmov`` -> ``TMOV(d, s)``; ``textract``/``tinsert`` -> ``TEXTRACT(d, s, r, c)``;
  ``tmatmul[.acc|.bias]`` / ``tgemv*`` -> ``TMATMUL(c, a, b)``, ``TMATMUL_ACC(c, cin, a, b)``, ``TMATMUL_BIAS(c, a, b, bias)``.
- ``treshape`` -> a new tile aliasing the source (``TRESHAPE(d, s)``); ``tassign``;
  ``set_validshape`` -> ``t.SetValidShape(r, c);``. An ``alloc_tile`` with ``?`` valid dims that a
  ``set_validshape`` changes is PTOAS's pair: a static base tile holding the storage
  (``Tile<.., rows, cols, ..> b; TASSIGN(b, a);``) and the dynamic tile over ``b.data()``
  (``__ubuf__ float* p = b.data(); uint64_t q = reinterpret_cast<uint64_t>(p); TASSIGN(t, q);``).
- ``bind_tile`` (PTOAS's memref form) -> a tile of its ``#pto.tile_buf_config`` layout (valid dims
  ``?`` when given as operands) aliasing the source: ``TRESHAPE(d, s)``.
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.ir import Operation, SSAValue

from pypto.ptoas.dialect.attrs import AccToVecModeAttr, AtomicTypeAttr, BLayout, ReluPreModeAttr, SLayout, StPhaseAttr
from pypto.ptoas.dialect.isa_misc_ops import BindTileOp, BitcastOp, DeclareTileMemRefOp, SubsetOp
from pypto.ptoas.dialect.tile_ops import (
    AllocTileOp,
    PointerCastOp,
    SetValidShapeOp,
    TAssignOp,
    TExtractOp,
    TGemvAccOp,
    TGemvBiasOp,
    TGemvOp,
    TInsertOp,
    TLoadOp,
    TMatmulAccOp,
    TMatmulBiasOp,
    TMatmulOp,
    TMovOp,
    TReshapeOp,
    TStoreOp,
)
from pypto.ptoas.dialect.types import DYNAMIC, TileSpec

from .context import FuncContext, handles
from .cxx_types import camel, element_ctype, tile_bytes, tile_ctype, tile_spec
from .errors import EmitError


def _spec(op: Operation, value: SSAValue) -> TileSpec:
    spec = tile_spec(value.type)
    if spec is None:
        raise EmitError(f"expects a tile, got {value.type}", op)
    return spec


def reserve_constant_addresses(ctx: FuncContext, root: Operation) -> None:
    """Keep emitter-placed tiles above every constant ``addr`` of ``root``'s alloc_tile ops."""
    for op in root.walk():
        if isinstance(op, AllocTileOp) and op.addr is not None:
            addr = ctx.const_int(op.addr)
            spec = tile_spec(op.result.type)
            if addr is not None and spec is not None:
                ctx.placer.reserve(spec.loc, addr + tile_bytes(spec))
        if isinstance(op, PointerCastOp) and op.addrs:
            addr = ctx.const_int(op.addrs[0])
            spec = tile_spec(op.result.type)
            if addr is not None and spec is not None:
                ctx.placer.reserve(spec.loc, addr + tile_bytes(spec))


def declare_tile(
    ctx: FuncContext, op: Operation, value: SSAValue, addr: SSAValue | None, valid: tuple[str, str] | None = None
) -> str:
    """Declare the tile ``value`` and TASSIGN it (at ``addr``, or at a placed address)."""
    spec = _spec(op, value)
    ctype = tile_ctype(spec)
    ctx.comment(value)
    name = ctx.define(value)
    if valid is not None:
        ctx.line(f"{ctype} {name} = {ctype}({valid[0]}, {valid[1]});")
    else:
        ctx.line(f"{ctype} {name};")
    if addr is not None:
        where = f"(uint64_t){ctx.name(addr, op)}"
    else:
        where = str(ctx.placer.place(spec.loc, tile_bytes(spec), op))
    ctx.comment(value)
    addr_name = ctx.fresh()
    ctx.line(f"uint64_t {addr_name} = {where};")
    ctx.line(f"TASSIGN({name}, {addr_name});")
    return name


QUALIFIERS = {"vec": "__ubuf__", "mat": "__cbuf__", "left": "__ca__", "right": "__cb__", "acc": "__cc__"}
QUALIFIERS |= {"scaling": "__fbuf__"}
"""PTOAS's pointer qualifier of each on-chip space (bias: ``__gm__``, as PTOAS)."""


@handles(AllocTileOp)
def _alloc_tile(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, AllocTileOp)
    spec = _spec(op, op.result)
    valid = None
    if DYNAMIC in (spec.v_row, spec.v_col):
        row = ctx.name(op.valid_row, op) if op.valid_row is not None else str(spec.v_row)
        col = ctx.name(op.valid_col, op) if op.valid_col is not None else str(spec.v_col)
        valid = (row, col)
        if any(isinstance(use.operation, SetValidShapeOp) for use in op.result.uses):
            _resizable_tile(ctx, op, spec, valid)
            return
    declare_tile(ctx, op, op.result, op.addr, valid)


def _resizable_tile(ctx: FuncContext, op: AllocTileOp, spec: TileSpec, valid: tuple[str, str]) -> None:
    """PTOAS's lowering of a tile whose valid shape ``set_validshape`` changes: a static base tile
    (full valid shape) owns the storage, the dynamic tile is a view of ``base.data()``."""
    base_spec = replace(spec, v_row=spec.rows, v_col=spec.cols)
    base = ctx.fresh()
    ctx.comment(op.result)
    ctx.line(f"{tile_ctype(base_spec)} {base};")
    if op.addr is not None:
        where = f"(uint64_t){ctx.name(op.addr, op)}"
    else:
        where = str(ctx.placer.place(spec.loc, tile_bytes(spec), op))
    addr = ctx.fresh()
    ctx.line(f"uint64_t {addr} = {where};")
    ctx.line(f"TASSIGN({base}, {addr});")
    ctype = tile_ctype(spec)
    name = ctx.define(op.result)
    ctx.line(f"{ctype} {name} = {ctype}({valid[0]}, {valid[1]});")
    data, view = ctx.fresh(), ctx.fresh()
    qualifier = QUALIFIERS.get(spec.loc.value, "__gm__")
    ctx.line(f"{qualifier} {element_ctype(spec.dtype)}* {data} = {base}.data();")
    ctx.line(f"uint64_t {view} = reinterpret_cast<uint64_t>({data});")
    ctx.line(f"TASSIGN({name}, {view});")


@handles(PointerCastOp)
def _pointer_cast(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, PointerCastOp)
    declare_tile(ctx, op, op.result, op.addrs[0] if op.addrs else None)


@handles(BindTileOp)
def _bind_tile(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, BindTileOp)
    base = _spec(op, op.result)
    cfg = op.config
    dynamic = op.valid_row is not None
    spec = TileSpec(
        base.loc,
        base.dtype,
        base.rows,
        base.cols,
        DYNAMIC if dynamic else base.v_row,
        DYNAMIC if dynamic else base.v_col,
        tuple(BLayout)[cfg.blayout.data],
        tuple(SLayout)[cfg.slayout.data],
        cfg.s_fractal_size.data,
        cfg.pad.data,
        cfg.compact.data,
    )
    ctype = tile_ctype(spec)
    ctx.comment(op.result)
    name = ctx.define(op.result)
    if dynamic:
        assert op.valid_col is not None
        ctx.line(f"{ctype} {name} = {ctype}({ctx.name(op.valid_row, op)}, {ctx.name(op.valid_col, op)});")
    else:
        ctx.line(f"{ctype} {name};")
    ctx.line(f"TRESHAPE({name}, {ctx.name(op.source, op)});")


def _assign_at(ctx: FuncContext, op: Operation, value: SSAValue, src: SSAValue, offset: str | None) -> str:
    """PTOAS's view of another tile's bytes: ``Tile<...> v; TASSIGN(v, reinterpret_cast<uint64_t>(p))``
    with ``p`` the source's ``data()`` (plus ``offset`` elements)."""
    spec, src_spec = _spec(op, value), _spec(op, src)
    ctx.comment(value)
    name = ctx.define(value)
    ctx.line(f"{tile_ctype(spec)} {name};")
    data, view = ctx.fresh(), ctx.fresh()
    qualifier = QUALIFIERS.get(src_spec.loc.value, "__gm__")
    where = f"{ctx.name(src, op)}.data()" + (f" + {offset}" if offset else "")
    ctx.line(f"{qualifier} {element_ctype(src_spec.dtype)}* {data} = {where};")
    ctx.line(f"uint64_t {view} = reinterpret_cast<uint64_t>({data});")
    ctx.line(f"TASSIGN({name}, {view});")
    return name


@handles(BitcastOp)
def _bitcast(ctx: FuncContext, op: Operation) -> None:
    """The source's bytes as the result's element type (PTOAS: bind_tile with bitcast view semantics)."""
    assert isinstance(op, BitcastOp)
    name = _assign_at(ctx, op, op.result, op.src, None)
    spec, src = _spec(op, op.result), ctx.name(op.src, op)
    if DYNAMIC in (spec.v_row, spec.v_col):
        ctx.line(f"{name}.SetValidShape({src}.GetValidRow(), {src}.GetValidCol());")


@handles(SubsetOp)
def _subset(ctx: FuncContext, op: Operation) -> None:
    """The ``sizes`` tile at element ``(i, j)`` of the source (PTOAS: memref.subview + bind_tile, i.e. a
    tile assigned at ``data() + i * stride + j``); valid dims ``min(size, pv - off % pv)`` when they
    can be short of the sizes."""
    assert isinstance(op, SubsetOp)
    src_spec = _spec(op, op.source)
    i, j = (ctx.name(v, op) for v in op.offsets)
    col_major = src_spec.blayout == BLayout.col_major
    offset = f"({j}) * {src_spec.rows} + ({i})" if col_major else f"({i}) * {src_spec.cols} + ({j})"
    name = _assign_at(ctx, op, op.result, op.source, offset)
    sizes = [a.value.data for a in op.sizes.data]
    consts = [ctx.const_int(v) for v in op.offsets]
    parent = (src_spec.v_row, src_spec.v_col)
    full = all(
        c is not None and p != DYNAMIC and p > 0 and min(n, p - c % p) == n
        for c, p, n in zip(consts, parent, sizes, strict=True)
    )
    if not full:
        src = ctx.name(op.source, op)
        dims = [
            f"std::min<int64_t>({n}, {src}.{get}() - static_cast<int64_t>({o}) % {src}.{get}())"
            for n, o, get in zip(sizes, (i, j), ("GetValidRow", "GetValidCol"), strict=True)
        ]
        ctx.line(f"{name}.SetValidShape({dims[0]}, {dims[1]});")


@handles(DeclareTileMemRefOp)
def _declare_tile_memref(ctx: FuncContext, op: Operation) -> None:
    """``Tile<...> v;`` without storage (a pop places it), as ``declare_tile``."""
    assert isinstance(op, DeclareTileMemRefOp)
    spec = _spec(op, op.result)
    ctx.comment(op.result)
    ctx.line(f"{tile_ctype(spec)} {ctx.define(op.result)};")


@handles(TAssignOp)
def _tassign(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TAssignOp)
    spec = _spec(op, op.result)
    name = ctx.define(op.result)
    ctx.line(f"{tile_ctype(spec)} {name} = {ctx.name(op.tile_in, op)};")
    ctx.line(f"TASSIGN({name}, (uint64_t){ctx.name(op.addr, op)});")


@handles(TReshapeOp)
def _treshape(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TReshapeOp)
    spec = _spec(op, op.result)
    ctx.comment(op.result)
    name = ctx.define(op.result)
    ctx.line(f"{tile_ctype(spec)} {name};")
    ctx.line(f"TRESHAPE({name}, {ctx.name(op.src, op)});")


@handles(SetValidShapeOp)
def _set_validshape(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, SetValidShapeOp)
    t = ctx.name(op.source, op)
    ctx.line(f"{t}.SetValidShape({ctx.name(op.valid_row, op)}, {ctx.name(op.valid_col, op)});")


@handles(TLoadOp)
def _tload(ctx: FuncContext, op: Operation) -> None:
    src, dst = op.operands
    ctx.line(f"TLOAD({ctx.name(dst, op)}, {ctx.name(src, op)});")


def _enum(op: Operation, key: str, kind: type, cxx: str) -> str | None:
    attr = op.attributes.get(key) or op.properties.get(key)
    if isinstance(attr, kind):
        return f"{cxx}::{camel(attr.data.value)}"  # type: ignore[attr-defined]
    return None


@handles(TStoreOp)
def _tstore(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TStoreOp)
    src, dst = ctx.name(op.src, op), ctx.name(op.dst, op)
    phase = _enum(op, "stPhase", StPhaseAttr, "STPhase")
    atomic = _enum(op, "atomicType", AtomicTypeAttr, "AtomicType")
    relu = _enum(op, "reluPreMode", ReluPreModeAttr, "ReluPreMode")
    if phase == "STPhase::Unspecified":
        phase = None
    params: list[str] = []
    if atomic or relu:
        params = [f"decltype({src})", f"decltype({dst})", atomic or "AtomicType::AtomicNone"]
        if relu:
            params.append(relu)
    if phase:
        params.insert(0, phase)
    targs = f"<{', '.join(params)}>" if params else ""
    args = [dst, src] + ([ctx.name(op.pre_quant, op)] if op.pre_quant is not None else [])
    ctx.line(f"TSTORE{targs}({', '.join(args)});")


@handles(TMovOp)
def _tmov(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, TMovOp)
    src, dst = ctx.name(op.src, op), ctx.name(op.dst, op)
    mode = _enum(op, "accToVecMode", AccToVecModeAttr, "pto::AccToVecMode")  # PTOAS spells it qualified
    relu = _enum(op, "reluPreMode", ReluPreModeAttr, "ReluPreMode")
    params = [p for p in (mode, relu) if p]
    if mode and not relu:
        params.append("ReluPreMode::NoRelu")
    targs = f"<{', '.join(params)}>" if params else ""
    # PTOAS's quant forms (pto_cpu.hpp fails them at run time): a pre-quant scalar is a third argument;
    # an fp tile is TMOV_FP into mat, a third argument of TMOV into vec.
    if op.pre_quant is not None:
        ctx.line(f"TMOV{targs}({dst}, {src}, {ctx.name(op.pre_quant, op)});")
    elif op.fp is not None:
        dst_tile = tile_spec(op.dst.type)
        call = "TMOV" if dst_tile is not None and dst_tile.loc.value == "vec" else "TMOV_FP"
        ctx.line(f"{call}{targs}({dst}, {src}, {ctx.name(op.fp, op)});")
    else:
        ctx.line(f"TMOV{targs}({dst}, {src});")


@handles(TExtractOp, TInsertOp)
def _extract_insert(ctx: FuncContext, op: Operation) -> None:
    src, row, col, dst = (ctx.name(v, op) for v in op.operands)
    ctx.line(f"{op.name[4:].upper()}({dst}, {src}, {row}, {col});")


CUBE = {
    TMatmulOp: "TMATMUL",
    TMatmulAccOp: "TMATMUL_ACC",
    TMatmulBiasOp: "TMATMUL_BIAS",
    TGemvOp: "TGEMV",
    TGemvAccOp: "TGEMV_ACC",
    TGemvBiasOp: "TGEMV_BIAS",
}


@handles(*CUBE)
def _cube(ctx: FuncContext, op: Operation) -> None:
    names = [ctx.name(v, op) for v in op.operands]
    ctx.line(f"{CUBE[type(op)]}({', '.join([names[-1], *names[:-1]])});")
