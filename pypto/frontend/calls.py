"""Calls: ``pl.tile.X(...)`` / ``pl.tensor.X(...)`` bound through each op's
``DSL_ARGS``, user-level sugar (``pl.add``), ``self.f(...)`` and ``pl.const``."""

from __future__ import annotations

import ast
import difflib
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, BoolAttr, IndexType, IntegerAttr, IntegerType, StringAttr, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue

from pypto.dialects.dtypes import dtype_type, is_dtype, is_float, is_integer
from pypto.dialects.enums import FunctionType
from pypto.dialects.op_base import INTS, ArgKind, OpTypeError, PLOp, describe_type, same_kind_shape_dtype
from pypto.dialects.program import function_type, set_call_dump_indices
from pypto.dialects.tensor_ops import TensorDimOp, TensorRefineShapeOp
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import DYNAMIC, TensorType, TileType
from pypto.errors import (
    InvalidOperationError,
    ParserSyntaxError,
    ParserTypeError,
    ScopeIsolationError,
)

from .constexpr import AdirValue, NotConstant, evaluate, plain
from .dumps import DUMP_VARS_KEY
from .source import dotted
from .statements import mark_spmd
from .sugar import OPS, SUGAR, sugar_op_name

if TYPE_CHECKING:
    from .builder import FunctionBuilder

# Ops an Orchestration function may use outside ``pl.at``.
ORCHESTRATION_OPS = {"pl.tensor.create", "pl.tensor.read", "pl.tensor.slice", "pl.tensor.dim", "pl.tensor.refine_shape"}
PLD_SHORT_FORMS = ("pld.remote_load", "pld.remote_store")
"""Upstream's two-segment ``pld`` names (``pld/op/unified_ops.py``), resolved by :meth:`pld_short_form`."""
PLD_STAGED = ("pld.tile.put", "pld.tile.get")
"""The staged put / get: ``(dst, peer, src, stage, stage2=None, dst_offsets, ...)``, where a list in the
``stage2`` slot is the first region argument (upstream's ``tile_ops._is_region_arg``)."""

SPECIAL = {
    "pl.const", "pl.yield_", "pl.range", "pl.parallel", "pl.unroll", "pl.pipeline", "pl.at", "pl.scope", "pl.dump_tag",
}  # fmt: skip


_FOLD = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.FloorDivSIOp: lambda a, b: a // b if b else None,
    arith.DivSIOp: lambda a, b: int(a / b) if b else None,
    arith.CeilDivSIOp: lambda a, b: -(-a // b) if b else None,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}


def fold_int(v: SSAValue, depth: int = 0) -> int | None:
    """The value of an integer scalar known at compile time: a constant, ``pl.tensor.dim`` of a static
    dimension, or integer arithmetic and casts of those (else None)."""
    op = v.owner
    if depth > 32 or not isinstance(op, Operation):
        return None
    if isinstance(op, arith.ConstantOp):
        value = op.value
        return value.value.data if isinstance(value, IntegerAttr) else None
    if isinstance(op, TensorDimOp):
        return op.static_extent()
    if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.TruncIOp):
        return fold_int(op.operands[0], depth + 1)
    fn = _FOLD.get(type(op))
    if fn is None:
        return None
    a, b = (fold_int(x, depth + 1) for x in op.operands)
    return None if a is None or b is None else fn(a, b)


def _runtime_extent_fits(arg: Attribute, param: Attribute) -> bool:
    """A tensor whose type differs from the parameter's only where one side is dynamic: an Orchestration
    tensor with run-time extents (``pl.create_tensor([16, n])``) passed to a static parameter (the host
    checks each extent when it issues the task), or any tensor to a ``pl.dynamic`` parameter."""
    if not isinstance(arg, TensorType) or not isinstance(param, TensorType) or arg.element_type != param.element_type:
        return False
    got, want = arg.get_shape(), param.get_shape()
    return len(got) == len(want) and all(DYNAMIC in (g, w) or g == w for g, w in zip(got, want, strict=True))


def _suggest(name: str, candidates: list[str]) -> str | None:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def all_call_names() -> list[str]:
    return sorted([*OPS, *(f"pl.{n}" for n in SUGAR), *SPECIAL])


class CallMixin:
    """Call handling for :class:`FunctionBuilder`."""

    def call(self: FunctionBuilder, node: ast.Call, expected: Attribute | None = None) -> Any:
        """Evaluate a call: an SSA value, a list of values, or None."""
        path = dotted(node.func)
        if path is not None and path.startswith("self."):
            return self.func_call(path[5:], node, expected)
        if path == "pl.const":
            return self.const_call(node)
        if path == "pl.yield_":
            raise self.fail(
                ParserSyntaxError, "pl.yield_ must be the value of an assignment ending a loop or if body", node
            )
        if path == "pl.dump_tag":
            raise self.fail(
                ParserSyntaxError, "pl.dump_tag() is a statement; it has no value", node, hint="write: pl.dump_tag(t)"
            )
        if path in ("pl.array.get_element", "pl.array.update_element"):
            return self.scalar_array_call(path, node)
        if path in PLD_SHORT_FORMS:
            return self.pld_short_form(path, node, expected)
        if path in PLD_STAGED and len(node.args) > 4 and isinstance(node.args[4], (ast.List, ast.Tuple)):
            # upstream's printed single-stage subregion form: the region lists follow the stage directly
            args = [*node.args[:4], ast.Constant(None), *node.args[4:]]
            return self.bind_op(OPS[path], path, node, args, node.keywords, expected)
        if path in OPS:
            return self.bind_op(OPS[path], path, node, node.args, node.keywords, expected)
        if path in ("pl.min", "pl.max"):
            return self.scalar_min_max(path, node)
        if path is not None and path.startswith("pl.") and path[3:] in SUGAR:
            spread = next((k.value for k in node.keywords if k.arg is None), None)
            if spread is not None:
                raise self.fail(InvalidOperationError, f"{path} does not take **kwargs", spread)
            return self.sugar_call(
                path[3:], node, list(node.args), {k.arg: k.value for k in node.keywords if k.arg}, expected
            )
        if isinstance(node.func, ast.Name):
            ext = self.program.external_call(self, node)
            if ext is not None:
                return ext
        name = path or ast.unparse(node.func)
        if path is not None and path.startswith("pl."):
            raise self.fail(
                InvalidOperationError, f"unknown op '{name}'", node.func, hint=_suggest(name, all_call_names())
            )
        raise self.fail(
            InvalidOperationError, f"unknown function '{name}'", node.func, hint=_suggest(name, all_call_names())
        )

    # ---- ops ---------------------------------------------------------------

    def bind_op(
        self: FunctionBuilder,
        cls: type,
        shown: str,
        node: ast.Call,
        args: list[ast.expr],
        keywords: list[ast.keyword] | dict[str, ast.expr],
        expected: Attribute | None = None,
        drop: tuple[str, ...] = (),
        rename: dict[str, str] | None = None,
        positional: tuple[str, ...] | None = None,
        default_from: dict[str, str] | None = None,
    ) -> SSAValue:
        """Bind DSL arguments to ``cls.DSL_ARGS`` and build the op."""
        spec = {a.name: a for a in cls.DSL_ARGS}
        order = list(positional or getattr(cls, "POSITIONAL", None) or [a.name for a in cls.DSL_ARGS])
        bound: dict[str, ast.expr] = {}
        if len(args) > len(order):
            raise self.fail(
                InvalidOperationError,
                f"{shown} takes at most {len(order)} positional arguments ({', '.join(order)}), got {len(args)}",
                node,
            )
        for name, a in zip(order, args, strict=False):
            bound[name] = a
        kw = keywords.items() if isinstance(keywords, dict) else [(k.arg, k.value) for k in keywords]
        for key, val in kw:
            if key is None:
                raise self.fail(InvalidOperationError, f"{shown} does not take **kwargs", val)
            if key == "attrs":
                continue
            key = (rename or {}).get(key, key)
            if key in drop:
                bound[key] = val
                continue
            if key not in spec:
                raise self.fail(
                    InvalidOperationError,
                    f"{shown} has no argument '{key}'",
                    val,
                    hint=getattr(cls, "OTHER_LEVEL_ARGS", {}).get(key)
                    or _suggest(key, list(spec))
                    or f"arguments: {', '.join(spec)}",
                )
            if key in bound:
                raise self.fail(InvalidOperationError, f"{shown} got argument '{key}' twice", val)
            bound[key] = val
        for key in drop:
            bound.pop(key, None)
        for dst, src_name in (default_from or {}).items():
            missing = dst not in bound or (isinstance(bound[dst], ast.Constant) and bound[dst].value is None)  # type: ignore[attr-defined]
            if missing and src_name in bound:
                bound[dst] = bound[src_name]
        values: dict[str, Any] = {}
        attrs: dict[str, Attribute] = {}
        like: Attribute | None = None
        for a in cls.DSL_ARGS:
            n = bound.get(a.name)
            if n is None:
                if a.required:
                    raise self.fail(InvalidOperationError, f"{shown}: missing argument '{a.name}'", node)
                continue
            if a.kind in (ArgKind.VALUE, ArgKind.OPT_VALUE):
                if a.kind is ArgKind.OPT_VALUE and isinstance(n, ast.Constant) and n.value is None:
                    continue
                v = self.value(n, like)
                values[a.name] = v
                if like is None and isinstance(v.type, (TileType, TensorType)):
                    like = v.type.element_type
            elif a.kind is ArgKind.VALUE_LIST:
                if isinstance(n, ast.Constant) and n.value is None:
                    continue
                values[a.name] = self.index_list(n)
            else:
                try:
                    py = evaluate(n, self.const_env())
                except NotConstant as e:
                    dyn = getattr(cls, "DYN_SIZES", None)
                    if a.name != "shape" or dyn is None or not isinstance(n, (ast.List, ast.Tuple)):
                        raise self.fail(
                            ParserTypeError, f"{shown}: argument '{a.name}' must be a constant: {e.message}", e.node
                        ) from None
                    py, values[dyn] = self.mixed_shape(n)
                if py is None and not a.required and a.default is None:
                    continue
                if hasattr(py, "dtype") and hasattr(py, "value") and not hasattr(py, "dtype_name"):
                    py = py.value  # pl.const(v, dt) as an attribute value
                assert a.codec is not None
                try:
                    attrs[a.name] = a.codec.to_attr(py)
                except TypeError as e:
                    raise self.fail(ParserTypeError, f"{shown}: argument '{a.name}': {e}", n) from None
        if cls is TileAllocOp:
            if self.target_name is None:
                raise self.fail(
                    ParserSyntaxError, "pl.tile.alloc must be assigned to a name (the allocation's base)", node
                )
            attrs["base"] = StringAttr(self.target_name)
        return self.make_op(cls, values, attrs, node, expected)

    def mixed_shape(self: FunctionBuilder, node: ast.List | ast.Tuple) -> tuple[list[int], list[SSAValue]]:
        """A shape whose entries may be run-time scalars (``[q_tile, head_dim]`` with ``head_dim`` read
        from a config tensor): the constant entries, ``-1`` for each other, and the others' values."""
        if self.kind is not FunctionType.Orchestration or self.at_depth:
            raise self.fail(
                ParserTypeError,
                "a shape entry that is not a compile-time constant is supported in an Orchestration function only",
                node,
                hint="a kernel's tile shapes are static; pass the extent as a scalar and use valid_shape=",
            )
        dims: list[int] = []
        sizes: list[SSAValue] = []
        index = IndexType()
        for e in node.elts:
            try:
                d = plain(evaluate(e, self.const_env()))
            except NotConstant:
                d = None
            if isinstance(d, int) and not isinstance(d, bool):
                dims.append(d)
                continue
            v = self.value(e, index)
            if not (is_dtype(v.type) and is_integer(v.type)) or v.type == i1:
                raise self.fail(ParserTypeError, f"a shape entry must be an integer, got {describe_type(v.type)}", e)
            known = fold_int(v)
            if known is not None and known > 0:  # e.g. pl.tensor.dim of a static (specialized) dimension
                dims.append(known)
                continue
            dims.append(DYNAMIC)
            sizes.append(self.cast_scalar(v, index, e))
        return dims, sizes

    def make_op(
        self: FunctionBuilder,
        cls: type,
        values: dict[str, Any],
        attrs: dict[str, Attribute],
        node: ast.AST,
        expected: Attribute | None = None,
    ) -> SSAValue:
        """Build (with type inference), locate and insert one pl op."""
        name = cls.name  # type: ignore[attr-defined]
        if self.kind is FunctionType.Orchestration and self.at_depth == 0 and name not in ORCHESTRATION_OPS:
            raise self.fail(
                ScopeIsolationError,
                f"'{name}' cannot be used directly in an Orchestration function",
                node,
                hint="put tensor/tile computation inside 'with pl.at(level=pl.Level.CORE_GROUP):' or an InCore function",
            )
        assert issubclass(cls, PLOp)
        try:
            op = cls.build_from_args(values, attrs)
            if expected is not None and expected != op.results[0].type:
                if not same_kind_shape_dtype(op.results[0].type, expected):
                    raise self.fail(
                        ParserTypeError,
                        f"annotated type {describe_type(expected)} does not match the type of the value, "
                        f"{describe_type(op.results[0].type)}",
                        node,
                    )
                op = cls.build_from_args(values, attrs, _keep_view(expected, op.results[0].type))
        except OpTypeError as e:
            raise self.fail(ParserTypeError, str(e), node) from None
        self.emit(op, node)
        return op.results[0]

    # ---- sugar ---------------------------------------------------------------

    def sugar_call(
        self: FunctionBuilder,
        name: str,
        node: ast.expr,
        args: list[ast.expr],
        kwargs: dict[str, ast.expr],
        expected: Attribute | None = None,
    ) -> SSAValue:
        s = SUGAR[name]
        layer = s.layer
        scalar_rhs = False
        if layer == "dispatch":
            first = args[0] if args else next(iter(kwargs.values()), None)
            if first is None:
                raise self.fail(InvalidOperationError, f"pl.{name}: missing its first operand", node)
            v = self.value(first)
            self.pre[id(first)] = v
            if isinstance(v.type, TileType):
                layer = "tile"
            elif isinstance(v.type, TensorType):
                layer = "tensor"
            elif name == "cast" and (is_float(v.type) or isinstance(v.type, IntegerType | IndexType)):
                return self.scalar_cast(v, args, kwargs, node)
            else:
                raise self.fail(
                    ParserTypeError,
                    f"pl.{name}: the first operand must be a tile or tensor, got {describe_type(v.type)}",
                    first,
                )
            if s.scalar_op and len(args) > 1:
                scalar_rhs = self.is_scalar_operand(args[1])
        op_name = sugar_op_name(s, layer, scalar_rhs)
        if op_name not in OPS:
            raise self.fail(InvalidOperationError, f"pl.{name} has no {layer} form", node)
        call = node if isinstance(node, ast.Call) else ast.copy_location(ast.Call(node, [], []), node)
        return self.bind_op(
            OPS[op_name], f"pl.{name}", call, args, kwargs, expected,
            drop=s.drop, rename=s.rename, positional=s.positional, default_from=s.default_from,
        )  # fmt: skip

    def pld_short_form(self: FunctionBuilder, path: str, node: ast.Call, expected: Attribute | None) -> SSAValue:
        """Upstream's ``pld.remote_load`` (= ``pld.tile.remote_load``) and ``pld.remote_store``, which takes
        the tile form for a tile source and the tensor form for a tensor one (its first operand, ``src``)."""
        if path == "pld.remote_load":
            return self.bind_op(OPS["pld.tile.remote_load"], path, node, node.args, node.keywords, expected)
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "src"), None)
        if first is None:
            raise self.fail(InvalidOperationError, f"{path}: missing its first operand 'src'", node)
        v = self.value(first)
        self.pre[id(first)] = v
        tile = isinstance(v.type, TileType)
        return self.bind_op(OPS["pld.tile.remote_store" if tile else "pld.tensor.remote_store"], path, node,
                            node.args, node.keywords, expected, rename={"src": "tile"} if tile else None)

    def scalar_min_max(self: FunctionBuilder, path: str, node: ast.Call) -> SSAValue:
        """``pl.min(a, b)`` / ``pl.max(a, b)`` of two scalars (upstream's scalar min/max; tiles and
        tensors use ``pl.minimum`` / ``pl.maximum``)."""
        if len(node.args) != 2 or node.keywords:
            raise self.fail(InvalidOperationError, f"{path} takes two scalars", node)
        a, b = self._operands(node.args[0], node.args[1], None)
        a, b = self.promote(a, b, node)
        if a.type != b.type or isinstance(a.type, TileType | TensorType):
            raise self.fail(
                ParserTypeError,
                f"{path} takes two scalars of one kind, got {describe_type(a.type)} and {describe_type(b.type)}",
                node,
                hint="use pl.minimum / pl.maximum for tiles and tensors",
            )
        is_min = path == "pl.min"
        if is_float(a.type):
            op: Any = arith.MinimumfOp(a, b) if is_min else arith.MaximumfOp(a, b)
        else:
            op = arith.MinSIOp(a, b) if is_min else arith.MaxSIOp(a, b)
        self.emit(op, node)
        return op.results[0]

    def scalar_cast(
        self: FunctionBuilder, v: SSAValue, args: list[ast.expr], kwargs: dict[str, ast.expr], node: ast.expr
    ) -> SSAValue:
        """``pl.cast(scalar, pl.INDEX)`` / ``pl.cast(n, target_type=pl.FP32)``: an ``arith`` cast."""
        target = args[1] if len(args) > 1 else kwargs.get("target_type", kwargs.get("dtype"))
        if target is None:
            raise self.fail(InvalidOperationError, "pl.cast: missing the target dtype", node)
        try:
            dt = evaluate(target, self.src.globals)
        except NotConstant:
            dt = None
        name = getattr(dt, "dtype_name", None)
        if name is None:
            raise self.fail(ParserTypeError, "pl.cast: the target must be a dtype such as pl.INDEX", target)

        return self.cast_scalar(v, dtype_type(name), node)

    def is_scalar_operand(self: FunctionBuilder, node: ast.expr) -> bool:
        """True for a Python number, ``pl.const`` or a scalar SSA value."""
        try:
            v = evaluate(node, self.src.globals)
            if isinstance(v, (int, float)) or hasattr(v, "dtype"):
                return True
        except NotConstant:
            pass
        if isinstance(node, ast.Name):
            val = self.scope.lookup(node.id)
            return val is not None and not isinstance(val.type, (TileType, TensorType))
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return True
        if isinstance(node, ast.Call) and dotted(node.func) == "pl.cast" and node.args:  # a scalar cast
            return self.is_scalar_operand(node.args[0])
        return False

    # ---- pl.const, self.f --------------------------------------------------------

    def const_call(self: FunctionBuilder, node: ast.Call) -> SSAValue:
        try:
            c = evaluate(node, self.src.globals)
        except NotConstant as e:
            message = e.message if e.message.startswith("pl.const") else f"pl.const: {e.message}"
            raise self.fail(ParserTypeError, message, e.node) from None

        return self.constant(c.value, dtype_type(c.dtype.dtype_name), node)

    def func_call(self: FunctionBuilder, name: str, node: ast.Call, expected: Attribute | None) -> Any:
        keyword = next((k for k in node.keywords if k.arg not in ("attrs", "dumps")), None)  # emit_call's own
        if keyword is not None:  # a parameter by keyword: it read as "takes 1 arguments, got 0"
            spelled = f"{keyword.arg}=" if keyword.arg else "**"
            raise self.fail(InvalidOperationError, f"'{name}' takes its arguments by position; got '{spelled}'",
                            keyword, hint=f"pass them in the parameters' order: self.{name}(x, ...)")  # fmt: skip
        if not self.program.bind_callees:
            callee = self.program.callee(name, node, self)
            return self.emit_call(callee, [self.value(a) for a in node.args], node, expected)
        args = [self.value(a) for a in node.args]  # a specialized build: the callee binds to them
        return self.emit_call(self.program.callee(name, node, self, [a.type for a in args]), args, node, expected)

    def emit_call(
        self: FunctionBuilder, callee: func.FuncOp, args: list[SSAValue], node: ast.Call, expected: Attribute | None
    ) -> Any:
        name = callee.sym_name.data
        params = callee.function_type.inputs.data
        if len(args) != len(params):
            fdef = self.program.defs.get(name, (None,))[0]
            hint = None
            if len(args) < len(params) and fdef is not None and fdef.args.defaults:
                hint = f"a parameter's default ('{ast.unparse(fdef.args.defaults[0])}') applies to a @pl.jit call from Python, " \
                       "not to a call inside a program: pass every argument"  # fmt: skip
            raise self.fail(InvalidOperationError, f"'{name}' takes {len(params)} arguments, got {len(args)}", node,
                            hint=hint)  # fmt: skip
        for i, (a, p) in enumerate(zip(args, params, strict=False)):
            if a.type != p and _same_scalar_category(a.type, p):  # upstream converts an INT64 to an INDEX parameter
                args[i] = a = self.cast_scalar(a, p, node.args[i] if i < len(node.args) else node)
            if p == i1 and isinstance(a.type, (IntegerType, IndexType)) and a.type != i1:
                # an integer flag (``is_first = pl.yield_(1)``) passed to a BOOL parameter: nonzero is True
                at = node.args[i] if i < len(node.args) else node
                zero = self.constant(0, a.type, at)
                args[i] = a = self.emit(arith.CmpiOp(a, zero, "ne"), at).results[0]
            if a.type != p and not same_kind_shape_dtype(a.type, p) and _runtime_extent_fits(a.type, p):
                assert isinstance(p, TensorType)
                shape = INTS.to_attr(list(p.get_shape()))
                args[i] = self.make_op(TensorRefineShapeOp, {"input": a}, {"shape": shape}, node.args[i] if i < len(node.args) else node)
                continue
            if a.type != p and not same_kind_shape_dtype(a.type, p):
                raise self.fail(
                    ParserTypeError,
                    f"argument {i} of '{name}' has type {describe_type(a.type)}, expected {describe_type(p)}",
                    node.args[i] if i < len(node.args) else node,
                )
        outs = list(callee.function_type.outputs.data)
        op = func.CallOp(name, args, outs)
        attrs: ast.expr | None = None
        for k in node.keywords:
            if k.arg == "attrs":
                attrs = k.value
                self.call_attrs(op, k.value)
            elif k.arg == "dumps":
                raise self.fail(
                    ParserTypeError,
                    f"a plain call to '{name}' takes no dumps=",
                    k.value,
                    hint="mark the tensor before the call with pl.dump_tag(t), or use pl.at(..., dumps=[t])",
                )
            else:
                raise self.fail(InvalidOperationError, f"call to '{name}' has no keyword argument '{k.arg}'", k.value)
        set_call_dump_indices(op, self.call_dump_marks(op, node, attrs))
        if self.spmd is not None:
            self.spmd_call(op, callee, node)
        if expected is not None and len(outs) == 1 and not same_kind_shape_dtype(outs[0], expected):
            raise self.fail(
                ParserTypeError,
                f"annotated type {describe_type(expected)} does not match the result of '{name}', {describe_type(outs[0])}",
                node,
            )
        self.emit(op, node)
        if len(outs) == 1:
            return op.res[0]
        return list(op.res) if outs else None

    def spmd_call(self: FunctionBuilder, op: func.CallOp, callee: func.FuncOp, node: ast.Call) -> None:
        """A kernel call inside ``with pl.spmd(n)``: ``pl.block_num = n`` (and ``pl.sync_start``)."""
        if function_type(callee) not in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV, FunctionType.Group):
            raise self.fail(
                InvalidOperationError,
                f"pl.spmd launches kernels; '{callee.sym_name.data}' is a {function_type(callee).value} function",
                node,
            )
        assert self.spmd is not None
        mark_spmd(op, self.spmd)

    def call_attrs(self: FunctionBuilder, op: func.CallOp, node: ast.expr) -> None:
        """``attrs={"arg_directions": [pl.adir.input, ...]}`` -> ``pl.<key>`` attributes
        (``"dump_vars"``, which names values, is read by :meth:`call_dump_marks`)."""
        if not isinstance(node, ast.Dict) or any(k is None for k in node.keys):
            raise self.fail(ParserTypeError, "call attrs must be a dict", node)
        for k, v in zip(node.keys, node.values, strict=True):
            assert k is not None
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise self.fail(ParserTypeError, "call attrs keys must be strings", k)
            if k.value == DUMP_VARS_KEY:
                continue
            if k.value == "dumps":
                raise self.fail(
                    ParserTypeError,
                    'attrs={"dumps": ...} is not supported',
                    k,
                    hint="mark the tensor before the call with pl.dump_tag(t)",
                )
            try:
                val = evaluate(v, self.src.globals)
            except NotConstant as e:
                raise self.fail(ParserTypeError, f"call attrs must be constant: {e.message}", e.node) from None
            op.attributes[f"pl.{k.value}"] = _to_attr(val)


def _to_attr(v: Any) -> Attribute:
    if isinstance(v, bool):
        return BoolAttr.from_bool(v)
    if isinstance(v, int):
        return IntegerAttr(v, i64)
    if isinstance(v, (str, AdirValue)):
        return StringAttr(str(v))
    if isinstance(v, list):
        return ArrayAttr([_to_attr(x) for x in v])
    return StringAttr(str(v))


def _keep_view(annotated: Attribute, inferred: Attribute) -> Attribute:
    """An annotation without a ``pl.TileView`` keeps the view the op gave (``transpose_view``'s layouts)."""
    if isinstance(annotated, TileType) and isinstance(inferred, TileType) and annotated.get_view() is None:
        if (view := inferred.get_view()) is not None:
            return annotated.with_(view=view)
    return annotated


def _same_scalar_category(a: Attribute, b: Attribute) -> bool:
    """Two integer (index included) or two float scalar types, not bool."""
    ints = (IntegerType, IndexType)
    if isinstance(a, ints) and isinstance(b, ints):
        return not (isinstance(a, IntegerType) and a.width.data == 1) and not (isinstance(b, IntegerType) and b.width.data == 1)
    return is_float(a) and is_float(b)
