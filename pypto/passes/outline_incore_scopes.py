"""OutlineIncoreScopes: every ``pl.at(level=CORE_GROUP)`` scope becomes an
InCore function, called from its parent, which becomes Orchestration.

What upstream PyPTO's pass 09 does (see the ``09_after_OutlineIncoreScopes``
dumps):

- the new ``func.func`` is named by the scope's ``name_hint``, else
  ``<parent>_incore_<n>`` (``n`` counts the parent's scopes from 0); it is
  inserted before its parent. A ``name_hint`` already taken is disambiguated
  as upstream does: by an earlier scope of the same parent, the smallest free
  ``<hint>_<n>``; by another function, ``<parent>_<hint>`` (then ``_<n>``);
- its parameters are the values defined outside the scope that the body uses,
  in first-use order, with their name hints (``arith.constant``s are cloned
  in instead); a tensor the scope writes (``pl.tensor.assemble`` target,
  ``pl.tile.store`` output, also through loop carries) is an ``Out`` parameter
  (``InOut`` if the scope reads it before writing it); otherwise a parameter
  keeps the direction of the parent parameter it comes from;
- a scope result that is a write of such a tensor is returned as the *Out
  parameter itself* (upstream returns ``out__ssa_v0``, not the assemble result);
  a written tensor that the scope does not yield is returned too, and the
  call's result replaces the tensor's uses after the scope;
- an unnamed ``pl.tile.store`` result is named ``<out>__store``;
- the scope becomes a ``func.call`` whose results replace the scope's results;
  the scope's ``dumps`` (``pl.at(..., dumps=[t])``, ``pl.dump_tag``) become the
  call's ``pl.dump_vars``: the positions of those tensors among its arguments
  (a listed tensor the body no longer uses is dropped, as upstream does).

Scopes of other levels are left for OutlineHierarchyScopes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from pypto.diagnostics import error_at
from pypto.dialects.enums import FunctionType, Level, ParamDirection
from pypto.dialects.op_base import INTS, describe_type
from pypto.dialects.program import (
    EARLY_RESOLVE,
    MANUAL_DEP,
    NO_DEP_ARGS,
    NO_DEP_INDICES,
    AtOp,
    YieldOp,
    function_type,
    mark_dump_values,
    param_direction,
    set_function_type,
    set_param_directions,
    set_task_links,
    task_handle,
    user_deps,
)
from pypto.dialects.tensor_ops import TensorAssembleOp, TensorCreateOp, TensorSliceOp
from pypto.dialects.tile_ops import TileStoreOp
from pypto.dialects.types import DYNAMIC, TensorType, TileType

from .base import FunctionPass, NameGen, index_constant, is_inside, value_base
from .registry import register_pass

_KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)


def write_target(op: Operation) -> SSAValue | None:
    """The tensor an op writes (assemble target / store output), if any."""
    if isinstance(op, TensorAssembleOp):
        return op.target
    if isinstance(op, TileStoreOp):
        return op.output
    return None


def buffer_root(value: SSAValue, scope: Operation) -> SSAValue | None:
    """The value from outside ``scope`` whose buffer ``value`` is, following
    writes (assemble/store results), loop carries and loop/if results; None
    for a value the scope creates."""
    seen: set[SSAValue] = set()
    while value not in seen:
        seen.add(value)
        if not is_inside(value, scope):
            return value
        owner = value.owner
        if isinstance(value, OpResult):
            assert isinstance(owner, Operation)
            target = write_target(owner)
            if target is not None:
                value = target
            elif isinstance(owner, scf.ForOp):
                value = owner.iter_args[value.index]
            elif isinstance(owner, scf.IfOp):
                term = owner.true_region.block.last_op
                if term is None or value.index >= len(term.operands):
                    return None
                value = term.operands[value.index]
            else:
                return None
        elif isinstance(value, BlockArgument):
            parent = owner.parent_op() if isinstance(owner, Block) else None
            if isinstance(parent, scf.ForOp) and value.index > 0:
                value = parent.iter_args[value.index - 1]
            else:
                return None
        else:
            return None
    return None


@dataclass
class _Capture:
    """What the scope does with one value from outside it."""

    value: SSAValue
    first_read: int | None = None
    first_write: int | None = None


@dataclass
class _ScopeInfo:
    captures: list[_Capture] = field(default_factory=list)
    constants: list[arith.ConstantOp] = field(default_factory=list)

    def find(self, value: SSAValue) -> _Capture | None:
        for c in self.captures:
            if c.value is value:
                return c
        return None


def analyse_scope(scope: AtOp) -> _ScopeInfo:
    """The scope's free values (first-use order) and how it reads/writes them."""
    info = _ScopeInfo()
    seen: set[SSAValue] = set()
    for pos, op in enumerate(scope.walk()):
        if op is scope:
            continue
        for idx, operand in enumerate(op.operands):
            if not is_inside(operand, scope) and operand not in seen:
                seen.add(operand)
                owner = operand.owner
                if isinstance(owner, arith.ConstantOp):
                    info.constants.append(owner)
                else:
                    info.captures.append(_Capture(operand))
            root = buffer_root(operand, scope)
            cap = info.find(root) if root is not None else None
            if cap is None or not isinstance(root.type, TensorType):  # type: ignore[union-attr]
                continue
            target = write_target(op)
            is_write = target is operand and _operand_is_target(op, idx)
            if is_write:
                cap.first_write = pos if cap.first_write is None else cap.first_write
            elif isinstance(op, scf.ForOp | scf.YieldOp | YieldOp):
                continue  # carries the buffer along; neither reads nor writes it
            else:
                cap.first_read = pos if cap.first_read is None else cap.first_read
    return info


def _operand_is_target(op: Operation, index: int) -> bool:
    if isinstance(op, TensorAssembleOp):
        return index == 0
    if isinstance(op, TileStoreOp):
        return index == len(op.operands) - 1
    return False


def _direction(f: func.FuncOp, cap: _Capture) -> ParamDirection:
    v = cap.value
    parent_dir = ParamDirection.In
    if isinstance(v, BlockArgument) and v.block is f.body.blocks.first:
        parent_dir = param_direction(f, v.index)
    if cap.first_write is None:
        return parent_dir
    if parent_dir is ParamDirection.InOut:
        return ParamDirection.InOut
    if cap.first_read is not None and cap.first_read < cap.first_write:
        return ParamDirection.InOut
    return ParamDirection.Out


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    cur: Operation | None = op
    while cur is not None and cur.parent_block() is not block:
        cur = cur.parent_op()
    return cur


class OutlineScope(RewritePattern):
    """Rewrite one CORE_GROUP ``pl.at`` into a call of a new InCore function."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}
        self.outlined: dict[str, set[str]] = {}  # parent -> names its scopes got

    def function_name(self, scope: AtOp, parent: func.FuncOp, module: ModuleOp) -> str:
        taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
        if scope.name_hint is not None:
            name = scope.name_hint.data
            local = self.outlined.setdefault(parent.sym_name.data, set())
            if name in taken:
                base = name if name in local else f"{parent.sym_name.data}_{name}"
                name = base
                n = 0
                while name in taken:
                    name, n = f"{base}_{n}", n + 1
            local.add(name)
            return name
        n = self.counters.get(parent.sym_name.data, 0)
        while f"{parent.sym_name.data}_incore_{n}" in taken:
            n += 1
        self.counters[parent.sym_name.data] = n + 1
        return f"{parent.sym_name.data}_incore_{n}"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, AtOp) or op.scope_level is not Level.CORE_GROUP:
            return
        scope = op
        parent = scope.parent_op()
        while parent is not None and not isinstance(parent, func.FuncOp):
            parent = parent.parent_op()
        module = parent.parent_op() if parent is not None else None
        if parent is None or not isinstance(module, ModuleOp):
            raise error_at(scope, "pl.at(level=pl.Level.CORE_GROUP) must be inside a function of a program")
        kind = function_type(parent)
        if kind in _KERNEL_TYPES:
            raise error_at(
                scope,
                f"pl.at(level=pl.Level.CORE_GROUP) inside the {kind.value} function "
                f"'{parent.sym_name.data}' (CORE_GROUP scopes cannot nest)",
            )
        _reject_results_that_are_not_tensors(scope)
        views = _keep_window_valid_shapes(scope)
        name = self.function_name(scope, parent, module)
        info = analyse_scope(scope)
        dirs = [_direction(parent, c) for c in info.captures]
        params = [c.value for c in info.captures]

        # What the function returns: scope results first, then written tensors
        # the scope does not yield (their call results replace later uses).
        term = scope.block.last_op
        assert isinstance(term, YieldOp)
        returns: list[SSAValue] = []  # in-scope values or captured params
        returned_caps: set[SSAValue] = set()
        for y in term.values:
            root = buffer_root(y, scope)
            cap = info.find(root) if root is not None else None
            if cap is not None and cap.first_write is not None:
                returns.append(cap.value)
                returned_caps.add(cap.value)
            else:
                returns.append(y)
        extra = [c.value for c in info.captures if c.first_write is not None and c.value not in returned_caps]
        returns.extend(extra)

        # A tensor the scope creates and yields (upstream's "absorbed output"): the parent creates it
        # and passes it as an Out parameter, which the body assembles the value into.
        escapes: list[tuple[int, SSAValue, SSAValue]] = []  # (return index, in-scope value, parent tensor)
        for i, y in enumerate(term.values):
            t = y.type
            returned = any(isinstance(u.operation, func.ReturnOp) for u in scope.results[i].uses)  # a rebound Out: an error later
            if returns[i] is y and isinstance(t, TensorType) and DYNAMIC not in t.get_shape() and buffer_root(y, scope) is None and not returned:
                create = TensorCreateOp.build_from_args({}, {"shape": INTS.to_attr(list(t.get_shape())), "dtype": t.element_type})
                create.location = y.owner.location if isinstance(y.owner, Operation) else scope.location
                create.results[0].name_hint = f"{value_base(y)}_out"
                rewriter.insert(create, InsertPoint.before(scope))
                params.append(create.results[0])
                dirs.append(ParamDirection.Out)
                returns[i] = create.results[0]
                escapes.append((i, y, create.results[0]))

        # The new function: the scope's ops moved into a fresh block.
        block = Block(arg_types=[v.type for v in params])
        for arg, v in zip(block.args, params, strict=True):
            arg.name_hint = v.name_hint
        for const in info.constants:
            clone = const.clone()
            block.add_op(clone)
            const.result.replace_uses_with_if(clone.result, lambda use: scope.is_ancestor(use.operation))
        for body_op in list(scope.block.ops):
            body_op.detach()
            if body_op is not term:
                block.add_op(body_op)
        for arg, v in zip(block.args, params, strict=True):
            v.replace_uses_with_if(arg, lambda use, b=block: b.is_ancestor(use.operation))
        arg_of = dict(zip(params, block.args, strict=True))
        for _, y, tensor in escapes:
            zeros = [index_constant(0) for _ in y.type.get_shape()]  # type: ignore[attr-defined]
            write = TensorAssembleOp.build_from_args({"target": arg_of[tensor], "source": y, "offset": [z.result for z in zeros]}, {})
            write.location = term.location
            for o in (*zeros, write):
                block.add_op(o)
        ret_vals = [arg_of.get(v, v) for v in returns]
        ret = func.ReturnOp(*ret_vals)
        ret.location = term.location
        block.add_op(ret)
        term.erase(safe_erase=False)

        new_fn = func.FuncOp(name, ([v.type for v in params], [v.type for v in ret_vals]), Region(block))
        new_fn.location = scope.location
        set_function_type(new_fn, FunctionType.InCore)
        set_param_directions(new_fn, dirs)
        names = NameGen.for_function(new_fn)
        for view in views:  # the window's next version inside the kernel (its parameter keeps the name)
            view.result.name_hint = names.next_version(view.input.name_hint)
        for inner in new_fn.body.walk():
            if isinstance(inner, TileStoreOp) and not inner.result.name_hint:
                inner.result.name_hint = names.fresh(f"{value_base(inner.output)}__store")
        rewriter.insert(new_fn, InsertPoint.before(parent))

        # The call replaces the scope.
        call = func.CallOp(name, params, [v.type for v in ret_vals])
        call.location = scope.location
        mark_dump_values(call, scope.dumps)  # the scope's dumps= become the task's marked arguments
        for key in ("pl.block_num", "pl.sync_start"):  # a scope under pl.spmd: its call launches the blocks
            if key in scope.attributes:
                call.attributes[key] = scope.attributes[key]
        set_task_links(call, task_handle(scope), user_deps(scope))  # ``as t`` / ``deps=[t]`` go to the task
        _copy_dep_options(scope, call)
        rewriter.insert(call, InsertPoint.before(scope))
        parent_names = NameGen.for_function(parent)
        for res, old in zip(call.res, scope.res, strict=False):
            res.name_hint = old.name_hint
            old.replace_all_uses_with(res)
        call_block = call.parent_block()
        assert call_block is not None
        order = {o: i for i, o in enumerate(call_block.ops)}
        call_pos = order[call]
        for res, v in zip(call.res[len(scope.res) :], extra, strict=True):
            res.name_hint = parent_names.next_version(v.name_hint)

            def after_call(use: object, pos: int = call_pos) -> bool:
                top = _ancestor_in(use.operation, call_block)  # type: ignore[attr-defined]
                return top is not None and order.get(top, -1) > pos

            v.replace_uses_with_if(res, after_call)
        rewriter.erase(scope)
        if function_type(parent) is FunctionType.Opaque:
            set_function_type(parent, FunctionType.Orchestration)


def _keep_window_valid_shapes(scope: AtOp) -> list[TensorSliceOp]:
    """A window with a run-time valid shape made outside the scope (``pl.slice(a, [16, 32], [r, 0],
    valid_shape=[n, 32])`` in the Orchestration function) and only read inside it keeps that valid shape in the
    kernel: the scope reads it through a slice of the whole window with the same valid shape, so its extents
    become the kernel's parameters (as upstream's MaterializeValidShapeSymbols passes them) and the window stays
    the task's argument. Without it the kernel read all the window's rows, the torch reference ``n`` of them.
    Returns the slices it put in the scope."""
    windows: dict[TensorSliceOp, None] = {}
    views: list[TensorSliceOp] = []
    for op in scope.walk():
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, TensorSliceOp) and owner.valid_shape and not owner.sizes and not is_inside(operand, scope):
                windows[owner] = None
    for window in windows:
        inside = [u for u in window.result.uses if scope.is_ancestor(u.operation)]
        if any(write_target(u.operation) is window.result or isinstance(u.operation, scf.ForOp | scf.YieldOp | YieldOp)
               for u in inside):  # fmt: skip
            continue  # written (or carried) in the scope: the window itself
        zeros = [index_constant(0) for _ in window.offset]
        view = window.clone()
        view.operands = [window.result, *(z.result for z in zeros), *window.valid_shape]
        first = scope.block.first_op
        assert first is not None
        for new in (*zeros, view):
            scope.block.insert_op_before(new, first)
        for use in inside:
            use.operation.operands[use.index] = view.result
        views.append(view)
    return views


def _reject_results_that_are_not_tensors(scope: AtOp) -> None:
    """A scope result must be a tensor: the outlined kernel's call is a task, whose results are the tensors it
    writes, so a scalar or a tile it computed cannot reach the code after it (a scalar: the run failed, the
    task's result was a tensor buffer where the scalar was read; a tile: KernelCodegenError in
    ConvertTensorToTileOps, after the earlier passes ran)."""
    term = scope.block.last_op
    assert isinstance(term, YieldOp)
    for y, r in zip(term.values, scope.res, strict=True):
        if isinstance(y.type, TensorType):
            continue
        name = value_base(r if r.name_hint else y)
        if isinstance(y.type, TileType):
            hint = f"store '{name}' into a tensor inside the scope (out = pl.store({name}, offsets, out)) and read that tensor after it"
        else:
            hint = f"compute '{name}' before the scope (a scalar from outside is passed in), or write it into a tensor"
        raise error_at(
            y.owner if isinstance(y.owner, Operation) else scope,
            f"'{name}' is a {describe_type(y.type)} computed inside the pl.at(level=pl.Level.CORE_GROUP) scope "
            "and used after it: a kernel gives back only the tensors it writes",
            hint=hint,
        )


def _copy_dep_options(scope: AtOp, call: func.CallOp) -> None:
    """``no_dep_args=`` (outer tensor names -> the call's argument positions), ``pl.manual_scope`` and
    ``allow_early_resolve=`` go from the scope to its task's call."""
    names = scope.attributes.get(NO_DEP_ARGS)
    if isinstance(names, ArrayAttr):
        wanted = {n.data for n in names.data if isinstance(n, StringAttr)}
        marks = [i for i, a in enumerate(call.arguments) if value_base(a) in wanted]
        if marks:
            call.attributes[NO_DEP_INDICES] = ArrayAttr(IntegerAttr(i, i64) for i in marks)
    for key in (MANUAL_DEP, EARLY_RESOLVE):
        if key in scope.attributes:
            call.attributes[key] = UnitAttr()


@register_pass
@dataclass(frozen=True)
class OutlineIncoreScopes(FunctionPass):
    """``pl.at(level=CORE_GROUP)`` scopes -> InCore functions + calls."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        pattern = OutlineScope()
        scopes = [s for s in f.walk() if isinstance(s, AtOp) and s.scope_level is Level.CORE_GROUP]
        for scope in scopes:
            if scope.parent is None:  # already removed (nested in an outlined scope)
                continue
            pattern.match_and_rewrite(scope, PatternRewriter(scope))
