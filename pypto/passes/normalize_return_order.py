"""NormalizeReturnOrder: a kernel returns its outputs in Out/InOut parameter order.

As upstream PyPTO's pass 26: for every InCore-like function (InCore, AIC, AIV,
Group) each returned value is traced back to the Out/InOut parameter it writes
(through ``pl.tile.store``'s output operand, loop carries, if results and calls
to other functions of the program). When return ``k`` does not correspond to
the ``k``-th Out/InOut parameter, the returns (and the function's result types)
are permuted so they do, and every ``func.call`` of the function gets its
results permuted back, so callers see the same values. Returns that trace to no
output parameter keep their position; when the returns cannot be put in order
(more outputs than returns, or two returns for one parameter) the function is
left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import FunctionType as FuncSig
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.rewriter import Rewriter

from pypto.core.analysis.functions import KERNEL_KINDS
from pypto.dialects.enums import ParamDirection
from pypto.dialects.program import function_type, param_directions
from pypto.dialects.tile_ops import TileStoreOp

from .base import PyPTOPass
from .registry import register_pass


class _Tracer:
    """Maps values of a function to the parameter index they write."""

    def __init__(self, functions: dict[str, func.FuncOp]):
        self.functions = functions
        self.visiting: set[str] = set()

    def returns(self, f: func.FuncOp) -> list[SSAValue]:
        term = f.body.block.last_op
        return list(term.operands) if isinstance(term, func.ReturnOp) else []

    def param_of(self, f: func.FuncOp, value: SSAValue, depth: int = 0) -> int | None:
        if depth > 64:
            return None
        if isinstance(value, BlockArgument):
            block: Block = value.block
            if block is f.body.block:
                return value.index
            owner = block.parent_op()
            if isinstance(owner, scf.ForOp) and value.index > 0:
                return self.param_of(f, owner.iter_args[value.index - 1], depth + 1)
            return None
        owner = value.owner
        if isinstance(owner, TileStoreOp):
            return self.param_of(f, owner.output, depth + 1)
        index = list(owner.results).index(value)
        if isinstance(owner, scf.ForOp):
            return self.param_of(f, owner.iter_args[index], depth + 1)
        if isinstance(owner, scf.IfOp):
            found = {
                self.param_of(f, r.block.last_op.operands[index], depth + 1)
                for r in owner.regions
                if r.blocks and r.block.last_op is not None
            }
            return found.pop() if len(found) == 1 else None
        if isinstance(owner, func.CallOp):
            callee = self.functions.get(owner.callee.root_reference.data)
            if callee is None or callee.sym_name.data in self.visiting:
                return None
            self.visiting.add(callee.sym_name.data)
            try:
                rets = self.returns(callee)
                j = self.param_of(callee, rets[index], depth + 1) if index < len(rets) else None
            finally:
                self.visiting.discard(callee.sym_name.data)
            return None if j is None else self.param_of(f, owner.arguments[j], depth + 1)
        return None

    def permutation(self, f: func.FuncOp) -> list[int] | None:
        """``perm[old] = new`` putting returns in output-parameter order, or None."""
        rets = self.returns(f)
        outs = [i for i, d in enumerate(param_directions(f)) if d in (ParamDirection.Out, ParamDirection.InOut)]
        if not rets or not outs or len(outs) > len(rets):
            return None
        position = {p: k for k, p in enumerate(outs)}
        perm: list[int] = []
        for i, v in enumerate(rets):
            p = self.param_of(f, v)
            perm.append(position[p] if p in position else i)
        if sorted(perm) != list(range(len(rets))) or perm == list(range(len(rets))):
            return None
        return perm


def _reorder_function(f: func.FuncOp, perm: list[int]) -> None:
    term = f.body.block.last_op
    assert isinstance(term, func.ReturnOp)
    values: list[SSAValue | None] = [None] * len(perm)
    outputs = list(f.function_type.outputs.data)
    types = [outputs[0]] * len(perm)
    for old, new in enumerate(perm):
        values[new] = term.operands[old]
        types[new] = outputs[old]
    new_ret = func.ReturnOp(*[v for v in values if v is not None])
    new_ret.location = term.location
    Rewriter.replace_op(term, new_ret, [])
    f.function_type = FuncSig.from_lists(list(f.function_type.inputs.data), types)


def _reorder_calls(module: ModuleOp, name: str, perm: list[int]) -> None:
    for call in [op for op in module.walk() if isinstance(op, func.CallOp) and op.callee.root_reference.data == name]:
        types = [r.type for r in call.results]
        new_types = list(types)
        for old, new in enumerate(perm):
            new_types[new] = types[old]
        new = func.CallOp(call.callee, list(call.arguments), new_types)
        new.attributes.update(call.attributes)
        new.location = call.location
        block = call.parent_block()
        assert block is not None
        block.insert_op_before(new, call)
        for old, r in enumerate(call.results):
            new.results[perm[old]].name_hint = r.name_hint
            r.replace_all_uses_with(new.results[perm[old]])
        Rewriter.erase_op(call)


@register_pass
@dataclass(frozen=True)
class NormalizeReturnOrder(PyPTOPass):
    """Kernel returns in Out/InOut parameter order; call sites follow."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        for f in functions.values():
            if function_type(f) not in KERNEL_KINDS:
                continue
            perm = _Tracer(functions).permutation(f)
            if perm is None:
                continue
            _reorder_function(f, perm)
            _reorder_calls(op, f.sym_name.data, perm)
