"""Expressions: names, literals, scalar arithmetic (``arith``), comparisons,
subscripts (``x[a:b, c:d]`` -> slice, ``x[i, j]`` -> read)."""

from __future__ import annotations

import ast
import difflib
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, i1
from xdsl.ir import Attribute, SSAValue

from pypto.dialects.dtypes import dtype_type, is_float
from pypto.dialects.op_base import describe_type
from pypto.dialects.types import DYNAMIC, TensorType, TileType
from pypto.errors import ParserTypeError, UndefinedVariableError, UnsupportedFeatureError

from . import dsl_objects as D
from .constexpr import NotConstant, evaluate
from .scopes import ConstEnv
from .sugar import OPS

if TYPE_CHECKING:
    from .builder import FunctionBuilder

INDEX = IndexType()
F32 = dtype_type("FP32")

_INT_OPS: dict[type, type] = {
    ast.Add: arith.AddiOp, ast.Sub: arith.SubiOp, ast.Mult: arith.MuliOp,
    ast.FloorDiv: arith.FloorDivSIOp, ast.Div: arith.DivSIOp, ast.Mod: arith.RemSIOp,
}  # fmt: skip
_FLOAT_OPS: dict[type, type] = {
    ast.Add: arith.AddfOp,
    ast.Sub: arith.SubfOp,
    ast.Mult: arith.MulfOp,
    ast.Div: arith.DivfOp,
}
_SHAPED_OPS: dict[type, str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_SYMBOLS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Not: "not", ast.Invert: "~",
}  # fmt: skip
"""Each Python operator's spelling, for messages."""
_CMPI = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge", ast.Eq: "eq", ast.NotEq: "ne"}
_CMPF = {ast.Lt: "olt", ast.LtE: "ole", ast.Gt: "ogt", ast.GtE: "oge", ast.Eq: "oeq", ast.NotEq: "one"}


def _is_int_like(t: Attribute) -> bool:
    return isinstance(t, (IntegerType, IndexType))


def _bits(t: Attribute) -> int:
    """A scalar type's width (``index``: 64)."""
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    return int(t.bitwidth)  # type: ignore[attr-defined]


class ExprMixin:
    """Expression evaluation for :class:`FunctionBuilder`."""

    def value(
        self: FunctionBuilder, node: ast.expr, like: Attribute | None = None, expected: Attribute | None = None
    ) -> SSAValue:
        """The SSA value of an expression; ``like`` types bare literals."""
        if id(node) in self.pre:
            return self.pre.pop(id(node))
        result = self.expr(node, like, expected)
        if not isinstance(result, SSAValue):
            what = "no value" if result is None else f"{len(result)} values"
            raise self.fail(ParserTypeError, f"expected one value, but this expression gives {what}", node)
        return result

    def expr(
        self: FunctionBuilder, node: ast.expr, like: Attribute | None = None, expected: Attribute | None = None
    ) -> Any:
        if isinstance(node, ast.Name):
            return self.name_value(node, like)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return self.literal(node.value, expected or like, node)
            raise self.fail(ParserTypeError, f"a {type(node.value).__name__} literal is not a value here", node)
        if isinstance(node, ast.Call):
            return self.call(node, expected)
        if isinstance(node, ast.BinOp):
            return self.binop(node, like)
        if isinstance(node, ast.UnaryOp):
            return self.unaryop(node, like)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, expected)
        if isinstance(node, ast.Attribute):
            try:
                evaluate(node, self.src.globals)
            except NotConstant as e:
                raise self.fail(UndefinedVariableError, e.message, node) from None
            raise self.fail(ParserTypeError, f"'{ast.unparse(node)}' is a constant, not a value", node)
        kind = {ast.Lambda: "lambda", ast.ListComp: "list comprehension", ast.GeneratorExp: "generator expression",
                ast.DictComp: "dict comprehension", ast.SetComp: "set comprehension", ast.IfExp: "conditional expression",
                ast.JoinedStr: "f-string", ast.Await: "await", ast.Starred: "starred expression",
                ast.NamedExpr: "an assignment expression (:=)", ast.BoolOp: "'and' / 'or'", ast.Dict: "a dict",
                ast.Set: "a set", ast.Tuple: "a tuple value", ast.List: "a list value", ast.Yield: "yield",
                ast.YieldFrom: "yield", ast.Slice: "a slice outside a subscript"}.get(type(node))  # fmt: skip
        raise self.fail(
            UnsupportedFeatureError, f"{kind or type(node).__name__} is not supported in DSL functions", node
        )

    def name_value(self: FunctionBuilder, node: ast.Name, like: Attribute | None) -> SSAValue:
        v = self.scope.lookup(node.id)
        if v is not None:
            return v
        g = self.src.globals.get(node.id)
        if isinstance(g, (int, float)) and not isinstance(g, bool):
            return self.literal(g, like, node)
        if isinstance(g, D.DynVar):
            return self.dynamic_extent(g, node)
        close = difflib.get_close_matches(node.id, sorted(self.scope.names()), n=1)
        raise self.fail(
            UndefinedVariableError,
            f"undefined variable '{node.id}'",
            node,
            hint=f"did you mean '{close[0]}'?" if close else None,
        )

    def dynamic_extent(self: FunctionBuilder, dyn: D.DynVar, node: ast.AST) -> SSAValue:
        """A ``pl.dynamic`` dimension used as a value (``pl.range(NR)``, as upstream's ``DynVar`` is a
        scalar): the INDEX extent of a parameter dimension annotated with it (a constant when the
        parameter's type has it), or arithmetic on such extents."""
        if isinstance(dyn, D.DynExpr):
            a, b = (self.dynamic_extent(x, node) if isinstance(x, D.DynVar) else self.constant(x, INDEX, node)
                    for x in (dyn.lhs, dyn.rhs))  # fmt: skip
            ops = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "//": arith.FloorDivSIOp}
            op = ops[dyn.op](a, b)
            self.emit(op, node)
            return op.result
        for k, param in enumerate(a for a in self.fdef.args.args if a.arg != "self"):
            axis = _annotated_axis(param.annotation, dyn, self.src.globals)
            if axis is None:
                continue
            arg = self.entry_args[k]
            t = arg.type
            assert isinstance(t, TensorType)
            extent = t.get_shape()[axis]
            if extent != DYNAMIC:
                return self.constant(extent, INDEX, node)
            dim = self.make_op(OPS["pl.tensor.dim"], {"input": arg}, {"axis": IntegerAttr(axis, 64)}, node)
            return self.cast_scalar(dim, INDEX, node)
        raise self.fail(
            UndefinedVariableError,
            f"pl.dynamic dimension '{dyn.name}' is not a dimension of a parameter of this function",
            node,
            hint="a dynamic extent is known from the tensor that has it: annotate a parameter with it",
        )

    def literal(self: FunctionBuilder, v: int | float | bool, like: Attribute | None, node: ast.AST) -> SSAValue:
        if isinstance(v, bool):
            return self.constant(v, i1, node)
        if like is None or isinstance(like, (TileType, TensorType)):
            like = like.element_type if like is not None else (INDEX if isinstance(v, int) else F32)  # type: ignore[union-attr]
        if isinstance(v, float) and _is_int_like(like):
            raise self.fail(
                ParserTypeError, f"float literal {v!r} where an integer ({describe_type(like)}) is expected", node
            )
        return self.constant(v, like, node)

    def constant(self: FunctionBuilder, v: int | float | bool, t: Attribute, node: ast.AST) -> SSAValue:
        if is_float(t):
            attr: Attribute = FloatAttr(float(v), t)  # type: ignore[arg-type]
        elif _is_int_like(t):
            if isinstance(v, float) and not v.is_integer():
                raise self.fail(ParserTypeError, f"{v!r} is not an integer ({describe_type(t)} is expected)", node)
            low, high = (-(2**63), 2**63) if isinstance(t, IndexType) else t.value_range()  # type: ignore[union-attr]
            if not low <= int(v) < high:
                raise self.fail(
                    ParserTypeError, f"{int(v)} does not fit in {describe_type(t)} (range [{low}, {high - 1}])", node
                )
            attr = IntegerAttr(int(v), t)  # type: ignore[arg-type]
        else:
            raise self.fail(ParserTypeError, f"cannot make a constant of type {describe_type(t)}", node)
        op = arith.ConstantOp(attr, t)  # type: ignore[arg-type]
        self.emit(op, node)
        return op.result

    def const_env(self: FunctionBuilder) -> ConstEnv:
        """Module globals shadowed by the kernel values in scope (``x.shape``, ``x.dtype``)."""
        return ConstEnv(self.src.globals, self.scope)

    def index_list(self: FunctionBuilder, node: ast.expr) -> list[SSAValue]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            try:  # a constant list such as ``x.shape``
                v = evaluate(node, self.const_env())
            except NotConstant:
                v = None
            if isinstance(v, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in v):
                return [self.constant(d, INDEX, node) for d in v]
            if not isinstance(v, (list, tuple)):  # one index (upstream's ``pl.read(t, i)`` of a 1-D tensor)
                one = self.value(node, INDEX)
                if _is_int_like(one.type):
                    return [self.cast_scalar(one, INDEX, node)]
            raise self.fail(ParserTypeError, "expected a list of indices such as [0, i * 16]", node)
        out = []
        for e in node.elts:
            v = self.value(e, INDEX)
            out.append(self.cast_scalar(v, INDEX, e) if isinstance(v.type, IntegerType) and v.type != i1 else v)
        return out  # an integer index (INT32/INT64 from pl.read) is cast to INDEX, as upstream

    # ---- arithmetic ------------------------------------------------------------

    def _operands(
        self: FunctionBuilder, left: ast.expr, right: ast.expr, like: Attribute | None
    ) -> tuple[SSAValue, SSAValue]:
        lconst = _is_literal(left, self.src.globals)
        rconst = _is_literal(right, self.src.globals)
        if lconst and not rconst:
            r = self.value(right, like)
            return self.value(left, r.type), r
        lv = self.value(left, like)
        return lv, self.value(right, lv.type)

    def promote(self: FunctionBuilder, lv: SSAValue, rv: SSAValue, node: ast.AST) -> tuple[SSAValue, SSAValue]:
        """Two integer (or two float) scalars of different dtypes: the narrower one is cast to the
        wider (upstream's same-category promotion; equal widths take the left dtype)."""
        lt, rt = lv.type, rv.type
        if lt == rt:
            return lv, rv
        same = (_is_int_like(lt) and _is_int_like(rt)) or (is_float(lt) and is_float(rt))
        if not same or lt == i1 or rt == i1:
            return lv, rv
        if _bits(rt) > _bits(lt):
            return self.cast_scalar(lv, rt, node), rv
        return lv, self.cast_scalar(rv, lt, node)

    def cast_scalar(self: FunctionBuilder, v: SSAValue, t: Attribute, node: ast.AST) -> SSAValue:
        """``v`` as a scalar of type ``t`` (integer, index or float; ``arith`` casts)."""
        s = v.type
        if s == t:
            return v
        if _is_int_like(s) and _is_int_like(t):
            if isinstance(s, IndexType) or isinstance(t, IndexType):
                op: Any = arith.IndexCastOp(v, t)
            elif _bits(t) > _bits(s):
                op = arith.ExtSIOp(v, t)
            else:
                op = arith.TruncIOp(v, t)
        elif is_float(s) and is_float(t):
            op = arith.ExtFOp(v, t) if _bits(t) > _bits(s) else arith.TruncFOp(v, t)
        elif _is_int_like(s) and is_float(t):
            if isinstance(s, IndexType):
                v = self.cast_scalar(v, IntegerType(64), node)
            op = arith.SIToFPOp(v, t)
        elif is_float(s) and _is_int_like(t):
            if isinstance(t, IndexType):
                return self.cast_scalar(self.cast_scalar(v, IntegerType(64), node), t, node)
            op = arith.FPToSIOp(v, t)
        else:
            raise self.fail(ParserTypeError, f"cannot cast {describe_type(s)} to {describe_type(t)}", node)
        self.emit(op, node)
        return op.results[0]

    def binop(self: FunctionBuilder, node: ast.BinOp, like: Attribute | None) -> SSAValue:
        try:
            folded = evaluate(node, self.src.globals)
            if isinstance(folded, (int, float)) and not isinstance(folded, bool):
                return self.literal(folded, like, node)
        except (NotConstant, ZeroDivisionError):
            pass
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and self._static(node.right) == 0:
            raise self.fail(ParserTypeError, f"division by zero: the divisor '{ast.unparse(node.right)}' is 0", node.right)
        if type(node.op) in _SHAPED_OPS and not _is_literal(node.left, self.src.globals):
            lv = self.value(node.left, like)
            if isinstance(lv.type, (TileType, TensorType)):
                self.pre[id(node.left)] = lv
                return self.sugar_call(_SHAPED_OPS[type(node.op)], node, [node.left, node.right], {})
            self.pre[id(node.left)] = lv
        lv, rv = self._operands(node.left, node.right, like)
        symbol = _SYMBOLS.get(type(node.op), type(node.op).__name__)
        shaped = next((v.type for v in (lv, rv) if isinstance(v.type, (TileType, TensorType))), None)
        if shaped is not None and type(node.op) in _SHAPED_OPS:  # the tile/tensor is on the right
            raise self.fail(
                UnsupportedFeatureError,
                f"'{symbol}' with a scalar on the left of a {describe_type(shaped)} is not supported",
                node,
                hint="put the tile or tensor on the left (t + s, t * s); s - t is -t + s, s / t is pl.recip(t) * s",
            )
        if shaped is not None:
            raise self.fail(UnsupportedFeatureError, f"operator '{symbol}' is not supported on {describe_type(shaped)}", node)
        lv, rv = self.promote(lv, rv, node)
        if lv.type != rv.type:
            raise self.fail(
                ParserTypeError,
                f"operands have different types: {describe_type(lv.type)} and {describe_type(rv.type)}; insert pl.cast",
                node,
            )
        table = _INT_OPS if _is_int_like(lv.type) else _FLOAT_OPS if is_float(lv.type) else {}
        cls = table.get(type(node.op))
        if cls is None:
            raise self.fail(
                UnsupportedFeatureError, f"operator '{symbol}' is not supported on {describe_type(lv.type)}", node
            )
        op = cls(lv, rv)
        self.emit(op, node)
        return op.results[0]

    def unaryop(self: FunctionBuilder, node: ast.UnaryOp, like: Attribute | None) -> SSAValue:
        if isinstance(node.op, ast.USub):
            try:
                c = evaluate(node, self.src.globals)
                return self.literal(c, like, node)
            except NotConstant:
                pass
            v = self.value(node.operand, like)
            if isinstance(v.type, (TileType, TensorType)):
                self.pre[id(node.operand)] = v
                return self.sugar_call("neg", node, [node.operand], {})
            zero = self.constant(0, v.type, node)
            op = arith.SubiOp(zero, v) if _is_int_like(v.type) else arith.NegfOp(v)
            self.emit(op, node)
            return op.results[0]
        if isinstance(node.op, ast.UAdd):
            return self.value(node.operand, like)
        raise self.fail(UnsupportedFeatureError, f"unary '{_SYMBOLS[type(node.op)]}' is not supported", node)

    def compare(self: FunctionBuilder, node: ast.Compare) -> SSAValue:
        if len(node.ops) != 1:
            raise self.fail(UnsupportedFeatureError, "chained comparisons are not supported", node)
        kind = type(node.ops[0])
        if kind not in _CMPI:
            raise self.fail(UnsupportedFeatureError, f"comparison '{_SYMBOLS[kind]}' is not supported", node)
        lv, rv = self._operands(node.left, node.comparators[0], None)
        lv, rv = self.promote(lv, rv, node)
        if lv.type != rv.type:
            raise self.fail(
                ParserTypeError, f"cannot compare {describe_type(lv.type)} with {describe_type(rv.type)}", node
            )
        if _is_int_like(lv.type):
            op: Any = arith.CmpiOp(lv, rv, _CMPI[kind])
        elif is_float(lv.type):
            op = arith.CmpfOp(lv, rv, _CMPF[kind])
        else:
            raise self.fail(
                UnsupportedFeatureError, f"comparison '{_SYMBOLS[kind]}' is not supported on {describe_type(lv.type)}", node
            )
        self.emit(op, node)
        return op.results[0]

    # ---- subscripts -----------------------------------------------------------------

    def window(
        self: FunctionBuilder, x: SSAValue, node: ast.Subscript
    ) -> tuple[list[int], list[SSAValue]] | list[SSAValue]:
        """``[a:b, c:d]`` -> (static shape, offsets); ``[i, j]`` -> indices."""
        t = x.type
        if not isinstance(t, (TileType, TensorType)):
            raise self.fail(ParserTypeError, f"cannot subscript a {describe_type(t)}", node)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        full = t.get_shape()
        if not any(isinstance(i, ast.Slice) for i in items):
            if len(items) != len(full):
                raise self.fail(ParserTypeError, f"{len(items)} indices for a rank-{len(full)} value", node)
            return [self.value(i, INDEX) for i in items]
        if not all(isinstance(i, ast.Slice) for i in items):
            raise self.fail(UnsupportedFeatureError, "mixing indices and slices is not supported; use slices", node)
        if len(items) > len(full):
            raise self.fail(ParserTypeError, f"{len(items)} slices for a rank-{len(full)} value", node)
        items += [ast.Slice(None, None, None)] * (len(full) - len(items))
        shape: list[int] = []
        offsets: list[SSAValue] = []
        for dim, s in zip(full, items, strict=False):
            assert isinstance(s, ast.Slice)
            if s.step is not None:
                raise self.fail(UnsupportedFeatureError, "slice steps are not supported", s.step)
            lo = self._static(s.lower) if s.lower is not None else 0
            hi = self._static(s.upper) if s.upper is not None else dim
            for bound, v in ((s.lower, lo), (s.upper, hi)):
                if bound is not None and v is not None and v < 0:
                    raise self.fail(
                        ParserTypeError,
                        f"negative slice bound {v}: bounds count from the start (no Python from-the-end indexing)",
                        bound,
                        hint=f"write the offset from the start, e.g. {dim + v}" if dim != DYNAMIC else None,
                    )
            if lo is not None and hi is not None and hi != DYNAMIC:
                size = hi - lo
            elif s.upper is not None and s.lower is not None and (d := self._static_difference(s.upper, s.lower)) is not None:
                size = d  # ``k + A : k + B``, ``i * S : (i + 1) * S``
            else:
                raise self.fail(ParserTypeError, "cannot infer a static slice size; write it as 'k : k + SIZE'", s)
            if size <= 0:
                raise self.fail(ParserTypeError, f"empty slice (size {size})", s)
            shape.append(size)
            offsets.append(self.value(s.lower, INDEX) if s.lower is not None else self.constant(0, INDEX, s))
        return shape, offsets

    def _linear(self: FunctionBuilder, node: ast.expr) -> dict[str, int]:
        """``node`` as a linear form: non-constant sub-expressions (by AST) -> coefficient, ``""`` the
        constant term (``+``, ``-``, and ``*`` by a compile-time integer)."""
        c = self._static(node)
        if c is not None:
            return {"": c}
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            out = dict(self._linear(node.left))
            sign = 1 if isinstance(node.op, ast.Add) else -1
            for k, v in self._linear(node.right).items():
                out[k] = out.get(k, 0) + sign * v
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for x, y in ((node.left, node.right), (node.right, node.left)):
                k = self._static(y)
                if k is not None:
                    return {t: k * v for t, v in self._linear(x).items()}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return {t: -v for t, v in self._linear(node.operand).items()}
        return {ast.dump(node): 1}

    def _static_difference(self: FunctionBuilder, hi: ast.expr, lo: ast.expr) -> int | None:
        """``hi - lo`` when it is a compile-time integer (``k + A : k + B``, ``i * S : (i + 1) * S``)."""
        diff = dict(self._linear(hi))
        for k, v in self._linear(lo).items():
            diff[k] = diff.get(k, 0) - v
        if any(v for k, v in diff.items() if k):
            return None
        return diff.get("", 0)

    def _static(self: FunctionBuilder, node: ast.expr) -> int | None:
        try:
            v = evaluate(node, self.src.globals)
        except NotConstant:
            return None
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def subscript(self: FunctionBuilder, node: ast.Subscript, expected: Attribute | None) -> SSAValue:
        if self.is_scalar_array(node.value):
            return self.scalar_array_read(node.value, node.slice, node)
        x = self.value(node.value)
        w = self.window(x, node)
        layer = "tile" if isinstance(x.type, TileType) else "tensor"
        if isinstance(w, list):
            return self.make_op(OPS[f"pl.{layer}.read"], {"input": x, "indices": w}, {}, node, expected)
        from pypto.dialects.op_base import INTS

        shape, offsets = w
        return self.make_op(
            OPS[f"pl.{layer}.slice"],
            {"input": x, "offset": offsets, "valid_shape": []},
            {"shape": INTS.to_attr(shape)},
            node,
            expected,
        )


def _is_literal(node: ast.expr, env: dict[str, Any]) -> bool:
    try:
        v = evaluate(node, env)
    except NotConstant:
        return False
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _annotated_axis(annotation: ast.expr | None, dyn: D.DynVar, env: dict[str, Any]) -> int | None:
    """The axis of a parameter annotation's shape list (``pl.Tensor[[NR, 64], ...]``) that is ``dyn``."""
    if annotation is None:
        return None
    for lst in (n for n in ast.walk(annotation) if isinstance(n, ast.List)):
        for axis, e in enumerate(lst.elts):
            try:
                if evaluate(e, env) is dyn:
                    return axis
            except NotConstant:
                continue
    return None
