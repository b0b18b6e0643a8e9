"""``arith``, ``scf`` and ``func.call`` as plain C++ statements.

- ``arith.constant`` -> ``const int32_t v5 = 16;`` (an ``index``); binary ops -> ``int32_t v7 = v5 * v6;``;
  unsigned ops cast through ``uintN_t``; ``cmpi``/``cmpf`` -> ``bool``; ``select`` -> ``?:``;
  casts -> ``(T)v``.
- ``scf.for`` over ``index`` -> PTOAS's ``for (size_t i9 = lb; (int32_t) i9 < ub; i9 += step) { ... }``
  (``index`` is ``int32_t``; the counter is read as ``(int32_t) i9``, so negative bounds still
  compare as signed); over an integer type, a counter of that type. Iteration arguments are
  variables declared before the loop and assigned by ``scf.yield``; the loop results are those
  variables.
- ``scf.if`` -> ``if (c) { ... } else { ... }``; results are variables declared before it. A
  comparison whose only use is the condition of the ``scf.if`` right after it is written inside
  the condition (PTOAS's EmitC expressions: ``if ((int32_t) i9 == v3) {``).
- ``scf.while`` -> PTOAS's ``goto`` form (it lowers the loop to CFG blocks)::

      goto label1;
      label1:;
      <before region>
      if (cond) { <body args> = ...; goto label2; } else { <results> = ...; goto label3; }
      label2: { <after region>; <before args> = ...; goto label1; }
      label3:;
- ``func.call`` -> a call (at most one result).
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pypto.ptoas.dialect.sync_ops import SYNC_OPS
from pypto.ptoas.dialect.types import TensorViewType

from .context import FuncContext, handles
from .cxx_types import MRGSORT_LIST, element_ctype, is_mrgsort_list, value_ctype
from .errors import EmitError


def _float_literal(value: float, t: Attribute) -> str:
    """A C++ literal of a float constant of type ``t``."""
    if math.isnan(value):
        text = "std::numeric_limits<float>::quiet_NaN()"
    elif math.isinf(value):
        text = ("-" if value < 0 else "") + "std::numeric_limits<float>::infinity()"
    else:
        text = repr(float(value))
        if "e" not in text and "." not in text:
            text += ".0"
        if not isinstance(t, Float32Type | Float16Type | BFloat16Type):
            return text
        text += "f"
    if isinstance(t, Float16Type):
        return f"(half){text}"
    if isinstance(t, BFloat16Type):
        return f"bfloat16_t({text})"
    return text


def _int_literal(value: int, t: Attribute) -> str:
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "true" if value else "false"
    if -(2**31) <= value < 2**31:
        return str(value)
    return f"{value}LL"


def scalar_constant(op: arith.ConstantOp) -> tuple[str, str] | None:
    """The C++ type and literal of a scalar constant (None for a merge-sort count list)."""
    value, t = op.value, op.result.type
    if isinstance(value, IntegerAttr):
        return element_ctype(t), _int_literal(value.value.data, t)
    if isinstance(value, FloatAttr):
        return element_ctype(t), _float_literal(value.value.data, t)
    if is_mrgsort_list(t) and isinstance(value, DenseIntOrFPElementsAttr):
        return None
    raise EmitError(f"constant {value} (not a scalar) is not supported", op)


@handles(arith.ConstantOp)
def _constant(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp)
    if op.result in ctx.names:
        return  # already declared in the prologue of a CFG function (cfg_prologue.py)
    decl = scalar_constant(op)
    if decl is None:
        assert isinstance(op.value, DenseIntOrFPElementsAttr)
        counts = [int(v) & 0xFFFF for v in op.value.get_values()]  # PTOAS prints them unsigned
        counts = counts * 4 if len(counts) == 1 else counts  # a splat
        name = ctx.define(op.result)
        ctx.line(f"{MRGSORT_LIST} {name} = {MRGSORT_LIST}{{{', '.join(map(str, counts))}}};")
        return
    name = ctx.define(op.result)
    ctx.line(f"const {decl[0]} {name} = {decl[1]};")


BINARY = {
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivSIOp: "/",
    arith.RemSIOp: "%",
    arith.AndIOp: "&",
    arith.OrIOp: "|",
    arith.XOrIOp: "^",
    arith.ShLIOp: "<<",
    arith.ShRSIOp: ">>",
    arith.AddfOp: "+",
    arith.SubfOp: "-",
    arith.MulfOp: "*",
    arith.DivfOp: "/",
}
UNSIGNED = {arith.DivUIOp: "/", arith.RemUIOp: "%", arith.ShRUIOp: ">>"}
MINMAX = {
    arith.MaxSIOp: ">",
    arith.MinSIOp: "<",
    arith.MaxUIOp: ">",
    arith.MinUIOp: "<",
    arith.MaximumfOp: ">",
    arith.MinimumfOp: "<",
    arith.MaxnumfOp: ">",
    arith.MinnumfOp: "<",
}
CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!=", 8: "==", 9: ">", 10: ">=", 11: "<", 12: "<=", 13: "!="}
CASTS = (
    arith.IndexCastOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.ExtFOp,
    arith.TruncFOp,
)


def _unsigned(t: Attribute) -> str:
    width = 32 if isinstance(t, IndexType) else t.width.data if isinstance(t, IntegerType) else 64
    return f"uint{max(width, 8)}_t"


def _result(ctx: FuncContext, op: Operation, expr: str) -> None:
    t = op.results[0].type
    name = ctx.define(op.results[0])
    ctx.line(f"{element_ctype(t)} {name} = {expr};")


@handles(*BINARY)
def _binary(ctx: FuncContext, op: Operation) -> None:
    a, b = (ctx.name(v, op) for v in op.operands)
    _result(ctx, op, f"{a} {BINARY[type(op)]} {b}")


@handles(*UNSIGNED)
def _unsigned_binary(ctx: FuncContext, op: Operation) -> None:
    a, b = (ctx.name(v, op) for v in op.operands)
    t = op.results[0].type
    u = _unsigned(t)
    _result(ctx, op, f"({element_ctype(t)})(({u}){a} {UNSIGNED[type(op)]} ({u}){b})")


@handles(*MINMAX)
def _minmax(ctx: FuncContext, op: Operation) -> None:
    a, b = (ctx.name(v, op) for v in op.operands)
    t = op.results[0].type
    if isinstance(op, arith.MaxUIOp | arith.MinUIOp):
        u = _unsigned(t)
        a, b = f"({u}){a}", f"({u}){b}"
    cmp = MINMAX[type(op)]
    _result(ctx, op, f"({element_ctype(t)})({a} {cmp} {b} ? {a} : {b})")


@handles(arith.CeilDivSIOp, arith.FloorDivSIOp)
def _divround(ctx: FuncContext, op: Operation) -> None:
    a, b = (ctx.name(v, op) for v in op.operands)
    fn = "ceildiv" if isinstance(op, arith.CeilDivSIOp) else "floordiv"
    _result(ctx, op, f"({element_ctype(op.results[0].type)})pto::cpu::{fn}({a}, {b})")


@handles(arith.NegfOp)
def _negf(ctx: FuncContext, op: Operation) -> None:
    _result(ctx, op, f"-{ctx.name(op.operands[0], op)}")


@handles(arith.CmpiOp, arith.CmpfOp)
def _cmp(ctx: FuncContext, op: Operation) -> None:
    pred = op.properties["predicate"]
    assert isinstance(pred, IntegerAttr)
    p = pred.value.data
    a, b = (ctx.name(v, op) for v in op.operands)
    if isinstance(op, arith.CmpiOp):
        if p >= 6:
            u = _unsigned(op.operands[0].type)
            a, b = f"({u}){a}", f"({u}){b}"
        rel = CMPI[p]
    else:
        if p in (0, 15) or p not in CMPF:
            _result(ctx, op, "true" if p == 15 else "false")
            return
        rel = CMPF[p]
    if _only_an_if_condition(op):
        ctx.names[op.results[0]] = f"{a} {rel} {b}"
        return
    _result(ctx, op, f"{a} {rel} {b}")


def _only_an_if_condition(op: Operation) -> bool:
    """Whether ``op``'s result is used once, as the condition of the ``scf.if`` right after it
    (only sync ops in between: insert-sync's waits hoisted before the ``if``, as PTOAS writes it)."""
    uses = list(op.results[0].uses)
    user = uses[0].operation if len(uses) == 1 else None
    if not (isinstance(user, scf.IfOp) and user.cond is op.results[0]):
        return False
    nxt = op.next_op
    while isinstance(nxt, SYNC_OPS):
        nxt = nxt.next_op
    return nxt is user


@handles(arith.SelectOp)
def _select(ctx: FuncContext, op: Operation) -> None:
    c, a, b = (ctx.name(v, op) for v in op.operands)
    t = op.results[0].type
    name = ctx.define(op.results[0])
    ctx.line(f"{value_ctype(t)} {name} = {c} ? {a} : {b};")


@handles(*CASTS)
def _cast(ctx: FuncContext, op: Operation) -> None:
    src = ctx.name(op.operands[0], op)
    if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
        src = f"({_unsigned(op.operands[0].type)}){src}"
    _result(ctx, op, f"({element_ctype(op.results[0].type)}){src}")


@handles(arith.BitcastOp)
def _bitcast(ctx: FuncContext, op: Operation) -> None:
    src = ctx.name(op.operands[0], op)
    t = element_ctype(op.results[0].type)
    name = ctx.define(op.results[0])
    ctx.line(f"{t} {name};")
    ctx.line(f"std::memcpy(&{name}, &{src}, sizeof({name}));")


# ----------------------------------------------------------------------------- scf


def _assign_yield(ctx: FuncContext, op: Operation) -> None:
    """Assign an ``scf.yield``'s operands to the enclosing construct's variables (None: a static view)."""
    targets = ctx.yield_targets[-1] if ctx.yield_targets else None
    if not op.operands:
        return
    if targets is None or len(targets) != len(op.operands):
        raise EmitError("yields values where none are expected", op)
    pairs = [(t, v) for t, v in zip(targets, op.operands, strict=True) if t is not None]
    values = [ctx.name(v, op) for _, v in pairs]
    if len(pairs) == 1:
        ctx.line(f"{pairs[0][0]} = {values[0]};")
        return
    temps = []
    for v, (_, value) in zip(values, pairs, strict=True):
        tmp = ctx.fresh("t")
        ctx.line(f"{value_ctype(value.type)} {tmp} = {v};")
        temps.append(tmp)
    for (target, _), tmp in zip(pairs, temps, strict=True):
        ctx.line(f"{target} = {tmp};")


def _yield_operand(region_block: Block, index: int) -> SSAValue | None:
    last = region_block.last_op
    if isinstance(last, scf.YieldOp) and index < len(last.operands):
        return last.operands[index]
    return None


def _bind_view(ctx: FuncContext, op: Operation, result: SSAValue, sources: list[SSAValue | None]) -> None:
    """A tensor_view result of scf: every path must carry the same (already emitted) view."""
    known = [s for s in sources if s is not None and s in ctx.views]
    if not known or any(s is None or (s not in ctx.views and s is not known[0]) for s in sources):
        raise EmitError("tensor_view results must carry the same view on every path", op)
    if any(ctx.views[s] != ctx.views[known[0]] for s in known):
        raise EmitError("tensor_view results must carry the same view on every path", op)
    ctx.views[result] = ctx.views[known[0]]
    ctx.names[result] = ctx.names[known[0]]


@handles(scf.YieldOp)
def _yield(ctx: FuncContext, op: Operation) -> None:
    _assign_yield(ctx, op)


@handles(scf.ForOp)
def _for(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, scf.ForOp)
    lb, ub, step = (ctx.name(v, op) for v in (op.lb, op.ub, op.step))
    body = op.body.block
    iv = body.args[0]
    variables: list[str | None] = []
    for i, (arg, init, res) in enumerate(zip(body.args[1:], op.iter_args, op.results, strict=True)):
        if isinstance(arg.type, TensorViewType):
            carried = _yield_operand(body, i)
            _bind_view(ctx, op, arg, [init])
            _bind_view(ctx, op, res, [init, init if carried is arg else carried])
            variables.append(None)
            continue
        var = ctx.define(arg)
        ctx.names[res] = var
        ctx.line(f"{value_ctype(arg.type)} {var} = {ctx.name(init, op)};")
        variables.append(var)
    ivname = ctx.fresh("i")
    if isinstance(iv.type, IndexType):
        counter = f"({element_ctype(iv.type)}) {ivname}"
        ctx.define(iv, counter)
        ctx.line(f"for (size_t {ivname} = {lb}; {counter} < {ub}; {ivname} += {step}) {{")
    else:
        ctx.define(iv, ivname)
        ctx.line(f"for ({element_ctype(iv.type)} {ivname} = {lb}; {ivname} < {ub}; {ivname} += {step}) {{")
    ctx.indent += 1
    ctx.yield_targets.append(variables)
    ctx.emit_block(body)
    ctx.yield_targets.pop()
    ctx.indent -= 1
    ctx.line("}")


@handles(scf.IfOp)
def _if(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    cond = ctx.name(op.cond, op)
    variables: list[str | None] = []
    for i, res in enumerate(op.results):
        if isinstance(res.type, TensorViewType):
            paths = [_yield_operand(r.blocks[0], i) if r.blocks else None for r in (op.true_region, op.false_region)]
            _bind_view(ctx, op, res, paths)
            variables.append(None)
            continue
        var = ctx.define(res)
        init = "" if value_ctype(res.type).startswith("Tile<") else "{}"
        ctx.line(f"{value_ctype(res.type)} {var}{init};")
        variables.append(var)
    ctx.line(f"if ({cond}) {{")
    ctx.indent += 1
    ctx.yield_targets.append(variables)
    ctx.emit_block(op.true_region.block)
    else_blocks = op.false_region.blocks
    has_else = bool(else_blocks) and any(not isinstance(o, scf.YieldOp) or o.operands for o in else_blocks[0].ops)
    if has_else:
        ctx.indent -= 1
        ctx.line("} else {")
        ctx.indent += 1
        ctx.emit_block(else_blocks[0])
    ctx.yield_targets.pop()
    ctx.indent -= 1
    ctx.line("}")


def _variables(ctx: FuncContext, op: Operation, values: list[SSAValue], inits: list[str] | None = None) -> list[str]:
    """A C++ variable per value (named after it), declared here (initialised from ``inits``)."""
    names = []
    for i, value in enumerate(values):
        if isinstance(value.type, TensorViewType):
            raise EmitError("scf.while cannot carry a tensor_view", op)
        ctype = value_ctype(value.type)
        var = ctx.define(value)
        init = f" = {inits[i]}" if inits is not None else "" if ctype.startswith("Tile<") else "{}"
        ctx.line(f"{ctype} {var}{init};")
        names.append(var)
    return names


def _assign(ctx: FuncContext, targets: list[str], values: list[str]) -> None:
    for target, value in zip(targets, values, strict=True):
        ctx.line(f"{target} = {value};")


@handles(scf.WhileOp)
def _while(ctx: FuncContext, op: Operation) -> None:
    """PTOAS's CFG form of ``scf.while`` (module docstring): variables for the before-region arguments,
    the after-region arguments and the results, declared before the first ``goto``; labels end with
    ``;`` and the body is a braced block, so no ``goto`` jumps over a declaration."""
    assert isinstance(op, scf.WhileOp)
    before, after = op.before_region.block, op.after_region.block
    cond = before.last_op
    if not isinstance(cond, scf.ConditionOp):
        raise EmitError("the before region must end with scf.condition", op)
    inits = [ctx.name(v, op) for v in op.arguments]
    header_vars = _variables(ctx, op, list(before.args), inits)
    body_vars = _variables(ctx, op, list(after.args))
    result_vars = _variables(ctx, op, list(op.results))
    header, body, exit_ = ctx.fresh("label"), ctx.fresh("label"), ctx.fresh("label")
    ctx.line(f"goto {header};")
    ctx.line(f"{header}:;")
    ctx.emit_block(before, skip_terminator=True)
    carried = [ctx.name(v, cond) for v in cond.args]
    ctx.line(f"if ({ctx.name(cond.condition, cond)}) {{")
    ctx.indent += 1
    _assign(ctx, body_vars, carried)
    ctx.line(f"goto {body};")
    ctx.indent -= 1
    ctx.line("} else {")
    ctx.indent += 1
    _assign(ctx, result_vars, carried)
    ctx.line(f"goto {exit_};")
    ctx.indent -= 1
    ctx.line("}")
    ctx.line(f"{body}: {{")
    ctx.indent += 1
    ctx.yield_targets.append(list(header_vars))
    ctx.emit_block(after)
    ctx.yield_targets.pop()
    ctx.line(f"goto {header};")
    ctx.indent -= 1
    ctx.line("}")
    ctx.line(f"{exit_}:;")


@handles(func.CallOp)
def _call(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    args = ", ".join(ctx.name(v, op) for v in op.arguments)
    callee = op.callee.root_reference.data
    if len(op.results) > 1:
        raise EmitError("calls with more than one result are not supported", op)
    if op.results:
        name = ctx.define(op.results[0])
        ctx.line(f"{value_ctype(op.results[0].type)} {name} = {callee}({args});")
    else:
        ctx.line(f"{callee}({args});")
