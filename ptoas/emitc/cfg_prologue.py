"""The constant prologue of a function PTOAS lowers to CFG blocks (``scf.while`` -> ``goto`` labels).

In such a function PTOAS (LLVM 19.1.7) writes every constant as ``const T vN = lit;`` *before*
``using T = float;``, in the reverse of the order MLIR's greedy rewrite driver meets them. Why
(PTOAS ``tools/ptoas/ptoas.cpp``, ``lib/PTO/Transforms``; MLIR ``FoldUtils.cpp``,
``GreedyPatternRewriteDriver.cpp``):

1. Its EmitC conversion puts ``using T = float;`` (and the kernel macro lines) as ``emitc.verbatim``
   ops at the front of the function's entry block; the constants follow them.
2. The next pass, ``emitc::createFormExpressionsPass``, runs ``applyPatternsAndFoldGreedily`` on the
   module. Populating its worklist, the driver walks every op and hands each constant to its
   ``OperationFolder::insertKnownConstant``, which moves a constant to the front of the entry block
   of its function (the nearest isolated-from-above region) unless it already is the first op or
   follows a constant the folder already owns. The first constant follows a verbatim, so it moves;
   each next one then follows a verbatim or a non-constant op, so it moves in front of the one
   before: the constants end up before ``using T = float;``, in reverse walk order. A constant equal
   (value and type) to one the folder already owns is replaced by that one.
3. Printing: a module with a multi-block function is translated with ``declareVariablesAtTop``, so
   each value is declared at the top in IR order; PTOAS's ``rewriteScalarConstantDecls`` turns a
   declaration with one literal assignment into ``const T vN = lit;`` at the declaration.

The walk order is that of PTOAS's IR, whose earlier passes differ from ours in three places this
module models: every greedy driver (``LoweringSyncToPipe`` runs one on each function) erases
constants nothing uses; ``PTOViewToMemref`` puts a tile's static valid dims (``index`` constants,
``v_row`` then ``v_col``) right before its allocation; ``PlanMemory``'s ``AllocToPointerCast``
puts the tile's ``i64`` address there too, after them. Our plan-memory keeps the addresses at the
top of the function, so a constant used only as a tile address (``alloc_tile`` ``addr``,
``pointer_cast``) is counted at its first tile. (At ``--pto-level=level3`` the addresses are the
source's own constants and PTOAS keeps them where they are; the emitter cannot tell them apart
from planned ones, so a level3 CFG function gets its address constants at its tiles too.)

The same folder step runs on structured functions too (their constants would also come out
reversed before ``using T``); no PTOAS lit test checks that order and ours keeps source order
there (docs/ptoas.md, "Known gaps"). Constants the emitter creates itself (``ctx.hoist``: round
modes ...) stay after ``using T = float;``.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from pypto.ptoas.dialect.isa_misc_ops import BindTileOp
from pypto.ptoas.dialect.tile_ops import AllocTileOp, PointerCastOp
from pypto.ptoas.dialect.types import DYNAMIC

from .context import FuncContext
from .cxx_types import tile_spec
from .scalar import scalar_constant


def is_cfg_function(f: FuncOp) -> bool:
    """Whether PTOAS lowers ``f`` to CFG blocks (it holds an ``scf.while``: our ``goto`` form)."""
    return any(isinstance(op, scf.WhileOp) for op in f.walk())


def _addresses(op: Operation) -> list[SSAValue]:
    """The address operands of a tile allocation."""
    if isinstance(op, PointerCastOp):
        return list(op.addrs)
    if isinstance(op, AllocTileOp) and op.addr is not None:
        return [op.addr]
    return []


def _address_only(op: arith.ConstantOp) -> bool:
    uses = list(op.result.uses)
    return bool(uses) and all(op.result in _addresses(u.operation) for u in uses)


def _valid_dims(op: Operation) -> list[int]:
    """The static valid dims PTOAS's view-to-memref materialises before a tile's allocation."""
    if isinstance(op, AllocTileOp):
        spec = tile_spec(op.result.type)
    else:
        binds = [u.operation for u in op.results[0].uses if isinstance(u.operation, BindTileOp)]
        if not binds or binds[0].valid_row is not None:
            return []
        spec = tile_spec(binds[0].result.type)
    if spec is None or DYNAMIC in (spec.v_row, spec.v_col):
        return []
    return [spec.v_row, spec.v_col]


def cfg_prologue(ctx: FuncContext, f: FuncOp) -> list[str]:
    """Name every used constant of ``f`` and return the ``const`` lines in PTOAS's order (the
    module docstring); the constants' own handler then writes nothing."""
    walk: list[tuple[tuple[str, str], arith.ConstantOp | None]] = []
    deferred: list[arith.ConstantOp] = []
    for op in f.walk():
        if isinstance(op, arith.ConstantOp):
            decl = scalar_constant(op)
            if decl is None:
                continue  # a merge-sort count list: written in place
            if not op.result.uses:
                ctx.define(op.result, "")  # dead: PTOAS's greedy drivers erased it, no line
                continue
            if _address_only(op):
                deferred.append(op)
            else:
                walk.append((decl, op))
        elif isinstance(op, AllocTileOp | PointerCastOp):
            walk.extend((("int32_t", str(d)), None) for d in _valid_dims(op))
            for const in [c for c in deferred if c.result in _addresses(op)]:
                deferred.remove(const)
                decl = scalar_constant(const)
                assert decl is not None
                walk.append((decl, const))
    owned: dict[tuple[str, str], str] = {}
    lines: list[str] = []
    for decl, const in walk:
        if decl not in owned:
            owned[decl] = ctx.fresh()
            lines.append(f"    const {decl[0]} {owned[decl]} = {decl[1]};")
        if const is not None:
            ctx.define(const.result, owned[decl])
    return lines[::-1]
