"""``torch_codegen``: PyPTO IR -> runnable Python source using torch.

The script starts with the helpers of :mod:`pypto.debug.torch_runtime`, then
has one Python function per IR function, with the same name and parameters.
``exec`` it and call the entry with torch tensors: DDR tensors are passed by
reference, so stores/assembles into Out parameters land in the caller's
tensors. Structure maps one to one:

- ``scf.for`` -> ``for i in range(lb, ub, step)``; loop-carried values are
  plain variables updated at the end of each iteration (the ``scf.yield``).
- ``scf.if`` -> ``if``/``else`` assigning the results in each arm;
  ``scf.while`` -> ``while True`` with a ``break`` on the condition.
- ``pl.at`` scopes are inlined; ``func.call`` is a Python call; ``arith`` is
  Python arithmetic on ints/floats; ``pl.tile.alloc`` and ``system.*`` ops are
  no-ops (addresses do not change the numerics).
- cube<->vector pipes (``pl.tile.tpush_*`` / ``tpop_*``) are FIFOs in the
  script (``_tpush`` / ``_tpop``); a Group function calls the part that pushes
  a pipe before the part that pops it.
- At a ``func.return`` whose values pair up with the Out/InOut parameters,
  a returned tensor that is a different buffer is copied into its parameter.

``check_shapes=True`` asserts the shape and dtype of every tensor/tile value
(parameters on entry, results on definition) against the IR types.
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Sequence

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from pypto.core.function import Function
from pypto.core.program import Program
from pypto.dialects.enums import ParamDirection
from pypto.dialects.op_base import PLOp
from pypto.dialects.program import AtOp, YieldOp, param_directions
from pypto.dialects.tile_ops import TileTpopFromAicOp, TileTpopFromAivOp, TileTpushToAicOp, TileTpushToAivOp
from pypto.dialects.types import TensorType, TileType
from pypto.utils.pipe_order import pushers_first

from . import torch_runtime
from .torch_ops import lowering, py_number, torch_dtype


class TorchCodegenError(NotImplementedError):
    """An op (or construct) has no torch lowering; the message names it."""


# arith ops as Python expressions over their operands {0}, {1}, {2}.
_ARITH: dict[str, str] = {
    "arith.addi": "({0} + {1})", "arith.subi": "({0} - {1})", "arith.muli": "({0} * {1})",
    "arith.divsi": "_divsi({0}, {1})", "arith.divui": "({0} // {1})", "arith.floordivsi": "({0} // {1})",
    "arith.ceildivsi": "(-(-{0} // {1}))", "arith.ceildivui": "(-(-{0} // {1}))",
    "arith.remsi": "_remsi({0}, {1})", "arith.remui": "({0} % {1})",
    "arith.addf": "({0} + {1})", "arith.subf": "({0} - {1})", "arith.mulf": "({0} * {1})",
    "arith.divf": "({0} / {1})", "arith.negf": "(-{0})",
    "arith.maxsi": "max({0}, {1})", "arith.maxui": "max({0}, {1})", "arith.maximumf": "max({0}, {1})",
    "arith.maxnumf": "max({0}, {1})", "arith.minsi": "min({0}, {1})", "arith.minui": "min({0}, {1})",
    "arith.minimumf": "min({0}, {1})", "arith.minnumf": "min({0}, {1})",
    "arith.andi": "({0} & {1})", "arith.ori": "({0} | {1})", "arith.xori": "({0} ^ {1})",
    "arith.shli": "({0} << {1})", "arith.shrsi": "({0} >> {1})", "arith.shrui": "({0} >> {1})",
    "arith.index_cast": "int({0})", "arith.index_castui": "int({0})", "arith.extsi": "int({0})",
    "arith.extui": "int({0})", "arith.trunci": "int({0})", "arith.fptosi": "int({0})", "arith.fptoui": "int({0})",
    "arith.sitofp": "float({0})", "arith.uitofp": "float({0})", "arith.extf": "float({0})",
    "arith.truncf": "float({0})", "arith.select": "({1} if {0} else {2})",
}  # fmt: skip
_CMPI = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]
_CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!=", 8: "==", 9: ">", 10: ">=", 11: "<", 12: "<=", 13: "!="}
_RESERVED = {"torch", "self", "Any", "Sequence", "annotations"}
_IDENT = re.compile(r"\W")


def runtime_source() -> str:
    """The helper preamble every generated script starts with."""
    return inspect.getsource(torch_runtime)


class _FunctionEmitter:
    """Emits one ``func.func`` as a Python function."""

    def __init__(self, f: func.FuncOp, check_shapes: bool):
        self.f = f
        self.check_shapes = check_shapes
        self.lines: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.taken: set[str] = set(_RESERVED) | {n for n in dir(torch_runtime) if n.startswith("_")}
        self.yield_targets: list[list[str]] = []

    # ---- names -------------------------------------------------------------

    def bind(self, value: SSAValue) -> str:
        """A fresh Python identifier for ``value`` (from its name hint)."""
        base = _IDENT.sub("_", value.name_hint or "v") or "v"
        if base[0].isdigit():
            base = f"v_{base}"
        name, n = base, 0
        while name in self.taken or keyword.iskeyword(name) or name.startswith("__"):
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        self.names[value] = name
        return name

    def v(self, value: SSAValue) -> str:
        """The Python expression of ``value`` (constants inline)."""
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return _literal(owner)
        if value not in self.names:
            raise TorchCodegenError(f"{self.f.sym_name.data}: value {value.name_hint or '?'} used before definition")
        return self.names[value]

    def vs(self, values: Sequence[SSAValue]) -> str:
        return "[" + ", ".join(self.v(x) for x in values) + "]"

    # ---- output ------------------------------------------------------------

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def check(self, depth: int, value: SSAValue) -> None:
        t = value.type
        if self.check_shapes and isinstance(t, (TensorType, TileType)):
            name = self.names[value]
            self.emit(depth, f"_check({name}, {list(t.get_shape())}, {torch_dtype(t.element_type)}, {name!r})")

    def assign(self, depth: int, results: Sequence[SSAValue], expr: str) -> None:
        if not results:
            self.emit(depth, expr)
            return
        targets = [self.bind(r) for r in results]
        self.emit(depth, f"{', '.join(targets)} = {expr}")
        for r in results:
            self.check(depth, r)

    def move(self, depth: int, targets: Sequence[str], values: Sequence[SSAValue]) -> None:
        """``t0, t1 = v0, v1`` (simultaneous, so swaps are safe)."""
        if targets:
            rhs = ", ".join(self.v(x) for x in values)
            self.emit(depth, f"{', '.join(targets)} = {rhs}{',' if len(values) == 1 and len(targets) > 1 else ''}")

    # ---- functions, blocks, ops ------------------------------------------------

    def function(self) -> list[str]:
        params = [self.bind(a) for a in self.f.args]
        kind = self.f.attributes.get("pl.func_type")
        self.emit(0, f"def {self.f.sym_name.data}({', '.join(params)}):")
        self.emit(1, f'"""IR function {self.f.sym_name.data}{f" ({kind.data.value})" if kind else ""}."""')  # type: ignore[attr-defined]
        for a in self.f.args:
            self.check(1, a)
        self.block(self.f.body.block, 1)
        return self.lines

    def block(self, block: Block, depth: int) -> None:
        start = len(self.lines)
        ops = list(block.ops)
        if block is self.f.body.block and _is_group(self.f):
            ops = _pushers_first(self.f, ops)
        for op in ops:
            self.op(op, depth)
        if len(self.lines) == start:
            self.emit(depth, "pass")

    def op(self, op: Operation, depth: int) -> None:
        if isinstance(op, arith.ConstantOp):
            return
        if op.name in _ARITH:
            self.assign(depth, op.results, _ARITH[op.name].format(*(self.v(x) for x in op.operands)))
        elif isinstance(op, arith.CmpiOp | arith.CmpfOp):
            self.compare(op, depth)
        elif isinstance(op, scf.ForOp):
            self.for_(op, depth)
        elif isinstance(op, scf.IfOp):
            self.if_(op, depth)
        elif isinstance(op, scf.WhileOp):
            self.while_(op, depth)
        elif isinstance(op, scf.YieldOp | YieldOp):
            self.move(depth, self.yield_targets[-1], list(op.operands))
        elif isinstance(op, AtOp):
            self.yield_targets.append([self.bind(r) for r in op.res])
            self.emit(depth, f"# pl.at(level={op.scope_level.value})")
            inner = self.spmd_loop(op, depth)
            self.block(op.block, inner)
            self.yield_targets.pop()
            for r in op.res:
                self.check(depth, r)
        elif isinstance(op, func.CallOp):
            inner = self.spmd_loop(op, depth)
            self.assign(inner, op.results, f"{op.callee.string_value()}({', '.join(self.v(x) for x in op.arguments)})")
        elif isinstance(op, func.ReturnOp):
            self.return_(op, depth)
        elif isinstance(op, PLOp):
            self.pl_op(op, depth)
        elif op.name.startswith(("system.", "pl.system.")):
            self.emit(depth, f"# {op.name}: no-op")
            for r in op.results:
                self.emit(depth, f"{self.bind(r)} = None")
        else:
            raise TorchCodegenError(f"torch_codegen: no torch lowering for op {op.name} (in {self.f.sym_name.data})")

    def spmd_loop(self, op: Operation, depth: int) -> int:
        """A launch of ``pl.block_num`` = n blocks (``pl.spmd``) runs its body once per block, the
        block's index in ``_BLOCK`` for ``get_block_idx``; returns the body's depth."""
        blocks = op.attributes.get("pl.block_num")
        if not isinstance(blocks, IntegerAttr):
            return depth
        self.emit(depth, f"for _ in _spmd({blocks.value.data}):")
        return depth + 1

    def pl_op(self, op: PLOp, depth: int) -> None:
        found = lowering(op)
        if found is None:
            raise TorchCodegenError(f"torch_codegen: no torch lowering for op {op.name} (in {self.f.sym_name.data})")
        fn, keeps_valid = found
        args = op.arg_view()
        expr = fn(self, op, args)
        if keeps_valid:
            first = next(iter(op.operands))
            expr = f"_like({expr}, {self.v(first)})"
        self.assign(depth, op.results, expr)

    def compare(self, op: arith.CmpiOp | arith.CmpfOp, depth: int) -> None:
        pred = op.predicate.value.data
        if isinstance(op, arith.CmpiOp):
            sym = _CMPI[pred]
        elif pred in (0, 15):
            self.assign(depth, op.results, str(pred == 15))
            return
        else:
            sym = _CMPF.get(pred, "==")
        self.assign(depth, op.results, f"({self.v(op.lhs)} {sym} {self.v(op.rhs)})")

    def for_(self, op: scf.ForOp, depth: int) -> None:
        body = op.body.block
        iv, carried = body.args[0], body.args[1:]
        names = [self.bind(a) for a in carried]
        self.move(depth, names, list(op.iter_args))
        self.emit(depth, f"for {self.bind(iv)} in range({self.v(op.lb)}, {self.v(op.ub)}, {self.v(op.step)}):")
        self.yield_targets.append(names)
        self.block(body, depth + 1)
        self.yield_targets.pop()
        results = [self.bind(r) for r in op.results]
        if results:
            self.emit(depth, f"{', '.join(results)} = {', '.join(names)}")
            for r in op.results:
                self.check(depth, r)

    def if_(self, op: scf.IfOp, depth: int) -> None:
        results = [self.bind(r) for r in op.results]
        self.emit(depth, f"if {self.v(op.cond)}:")
        self.yield_targets.append(results)
        self.block(op.true_region.block, depth + 1)
        if op.false_region.blocks and (results or any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops)):
            self.emit(depth, "else:")
            self.block(op.false_region.block, depth + 1)
        self.yield_targets.pop()
        for r in op.results:
            self.check(depth, r)

    def while_(self, op: scf.WhileOp, depth: int) -> None:
        before, after = op.before_region.block, op.after_region.block
        loop_vars = [self.bind(a) for a in before.args]
        results = [self.bind(r) for r in op.results]
        after_vars = [self.bind(a) for a in after.args]
        self.move(depth, loop_vars, list(op.arguments))
        self.emit(depth, "while True:")
        for inner in before.ops:
            if isinstance(inner, scf.ConditionOp):
                self.move(depth + 1, results, list(inner.args))
                self.emit(depth + 1, f"if not {self.v(inner.condition)}:")
                self.emit(depth + 2, "break")
                self.move(depth + 1, after_vars, list(inner.args))
            else:
                self.op(inner, depth + 1)
        self.yield_targets.append(loop_vars)
        self.block(after, depth + 1)
        self.yield_targets.pop()

    def return_(self, op: func.ReturnOp, depth: int) -> None:
        values = list(op.arguments)
        dirs = param_directions(self.f)
        outs = [a for a, d in zip(self.f.args, dirs, strict=True) if d is not ParamDirection.In]
        if values and len(values) == len(outs):
            for param, value in zip(outs, values, strict=True):
                if param is not value:
                    self.emit(depth, f"_write_out({self.v(param)}, {self.v(value)})")
        if not values:
            self.emit(depth, "return None")
        elif len(values) == 1:
            self.emit(depth, f"return {self.v(values[0])}")
        else:
            self.emit(depth, f"return ({', '.join(self.v(x) for x in values)})")


def _literal(op: arith.ConstantOp) -> str:
    attr = op.value
    if isinstance(attr, IntegerAttr):
        v = attr.value.data
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return str(bool(v))
        return str(v)
    if isinstance(attr, FloatAttr):
        return py_number(float(attr.value.data))
    raise TorchCodegenError(f"torch_codegen: unsupported constant {attr}")


def _is_group(f: func.FuncOp) -> bool:
    kind = f.attributes.get("pl.func_type")
    return kind is not None and getattr(kind.data, "value", None) == "Group"  # type: ignore[attr-defined]


_PUSH = (TileTpushToAivOp, TileTpushToAicOp)
_POP = (TileTpopFromAicOp, TileTpopFromAivOp)


def _pushers_first(group: func.FuncOp, ops: list[Operation]) -> list[Operation]:
    """A Group's calls with each part that pops a pipe after the part that pushes it (the parts run
    together on the chip; here they run one after the other, so the FIFO holds what was pushed). Calls
    that push to each other keep their order (their pops then fail at run time, naming the pipe)."""
    module = group.parent_op()
    callees = {f.sym_name.data: f for f in (module.walk() if module is not None else []) if isinstance(f, func.FuncOp)}

    def pipes(op: Operation) -> tuple[set[str], set[str]]:
        callee = callees.get(op.callee.string_value()) if isinstance(op, func.CallOp) else None
        ops = list(callee.walk()) if callee is not None else []
        return {o.DIRECTION for o in ops if isinstance(o, _PUSH)}, {o.DIRECTION for o in ops if isinstance(o, _POP)}

    calls = [op for op in ops if isinstance(op, func.CallOp)]
    ordered = iter(pushers_first(calls, pipes) or calls)
    return [next(ordered) if isinstance(op, func.CallOp) else op for op in ops]


def _functions(node: Program | ModuleOp | func.FuncOp) -> list[func.FuncOp]:
    if isinstance(node, func.FuncOp):
        return [node]
    if isinstance(node, Function):
        return [node.op]
    if isinstance(node, ModuleOp):
        node = Program(node)
    if isinstance(node, Program):
        return list(node.func_ops.values())
    raise TypeError(f"torch_codegen expects a Program, a module or a function, got {type(node).__name__}")


def torch_codegen(node: Program | ModuleOp | func.FuncOp, *, check_shapes: bool = False) -> str:
    """Runnable Python/torch source for ``node`` (a Program, its module, or one
    function): the helper preamble then one Python function per IR function,
    with the IR's names. ``check_shapes`` adds shape/dtype assertions."""
    functions = _functions(node)
    parts = [
        "# Generated by pypto.debug.torch_codegen: the IR's semantics in torch.",
        runtime_source().rstrip("\n"),
    ]
    for f in functions:
        parts.append("\n\n" + "\n".join(_FunctionEmitter(f, check_shapes).function()))
    return "\n".join(parts) + "\n"
