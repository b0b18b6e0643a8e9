"""AST -> xDSL: one :class:`FunctionBuilder` per ``def``, one
:class:`ProgramBuilder` per ``@pl.program`` class (docs/ir.md)."""

from __future__ import annotations

import ast
import copy
import difflib
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import BoolAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from pypto.core.program import Program
from pypto.dialects.enums import FunctionType, Level, ParamDirection, Role
from pypto.dialects.op_base import describe_type, same_kind_shape_dtype
from pypto.dialects.program import set_function_type, set_param_directions
from pypto.dialects.types import DYNAMIC, TensorType
from pypto.errors import ParserError, ParserSyntaxError, ParserTypeError, UndefinedVariableError

from .annotations import AnnotationParser
from .calls import CallMixin
from .constexpr import NotConstant, evaluate
from .dumps import DumpMixin
from .early_return import lift_returns
from .expressions import ExprMixin
from .hierarchy import cpp_kernel_name_problem
from .scalar_arrays import ScalarArrayMixin
from .scopes import Scope, set_name
from .source import Source, dotted
from .statements import Frame, SpmdLaunch, StmtMixin, mark_runtime_scope
from .tasks import Dep, TaskMixin, TaskSet


@dataclass
class FunctionInfo:
    """What a ``@pl.function(...)`` decorator says."""

    kind: FunctionType = FunctionType.Opaque
    level: Level | None = None
    role: Role | None = None
    extra: dict[str, Any] = field(default_factory=dict)


FUNCTION_KWARGS = ("type", "level", "role", "attrs", "auto_scope", "strict_ssa", "external_source")


def function_info(dec: ast.expr, src: Source) -> FunctionInfo:
    """Read ``@pl.function`` / ``@pl.function(type=..., ...)``."""
    info = FunctionInfo()
    if not isinstance(dec, ast.Call):
        return info
    if dec.args:
        raise src.error(
            ParserSyntaxError, "@pl.function takes keyword arguments only", dec.args[0],
            hint="write @pl.function(type=pl.FunctionType.InCore)",
        )  # fmt: skip
    for k in dec.keywords:
        if k.arg not in FUNCTION_KWARGS:
            raise src.error(ParserSyntaxError, f"@pl.function has no argument '{k.arg}'", k.value)
        try:
            v = evaluate(k.value, src.globals)
        except NotConstant as e:
            raise src.error(ParserTypeError, f"@pl.function {k.arg} must be a constant: {e.message}", e.node) from None
        if k.arg == "type":
            if not isinstance(v, FunctionType):
                raise src.error(ParserTypeError, "type must be a pl.FunctionType member", k.value)
            info.kind = v
        elif k.arg == "level":
            if v is not None and not isinstance(v, Level):
                raise src.error(ParserTypeError, "level must be a pl.Level member", k.value)
            info.level = v
        elif k.arg == "role":
            if v is not None and not isinstance(v, Role):
                raise src.error(ParserTypeError, "role must be a pl.Role member", k.value)
            info.role = v
        else:
            info.extra[k.arg] = v
    return info


class FunctionBuilder(ExprMixin, CallMixin, StmtMixin, DumpMixin, TaskMixin, ScalarArrayMixin):
    """Builds one ``func.func`` from a Python ``def``."""

    def __init__(
        self,
        program: ProgramBuilder,
        src: Source,
        fdef: ast.FunctionDef,
        info: FunctionInfo,
        param_types: dict[str, Attribute] | None = None,
    ):
        self.program = program
        self.src = src
        self.fdef = fdef
        self.info = info
        self.kind = info.kind
        self.param_types = param_types or {}
        self.ann = AnnotationParser(src)
        self.block = Block()
        self.scope = Scope()
        self.frames: list[Frame] = []
        self.at_depth = 0
        self.pre: dict[int, SSAValue] = {}
        self.target_name: str | None = None
        self.returned: tuple[list[SSAValue], ast.Return] | None = None
        self.entry_args: list[BlockArgument] = []  # the function's parameters (pl.dynamic extents read them)
        self.runtime_scope = False
        self.task_handles: dict[str, str] = {}  # ``with pl.at(...) as name`` -> its label
        self.task_arrays: dict[str, TaskSet] = {}  # ``pl.array.create(n, pl.TASK_ID)`` / task_dummy -> its set
        self.scalar_arrays: dict[str, int] = {}  # ``pl.array.create(n, pl.INT32)`` -> its extent
        self.pending_deps: list[tuple[Operation, list[Dep]]] = []  # ``deps=`` resolved when the body is read
        self.manual_depth = 0  # inside ``with pl.manual_scope():``
        self.dump_tagged: dict[SSAValue, None] = {}  # pl.dump_tag'd values, in tag order
        self.spmd: SpmdLaunch | None = None  # the enclosing ``with pl.spmd(...)``

    def fail(self, cls: type[ParserError], message: str, node: ast.AST, hint: str | None = None) -> ParserError:
        return self.src.error(cls, message, node, hint)

    def emit(self, op: Operation, node: ast.AST) -> Operation:
        op.location = self.src.loc(node)
        self.block.add_op(op)
        return op

    def params(self) -> tuple[list[str], list[Attribute], list[ParamDirection]]:
        args = self.fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.fail(ParserSyntaxError, "DSL functions take plain positional parameters only", self.fdef)
        params = list(args.args)
        if params and params[0].arg == "self":
            params = params[1:]
        names, types, dirs = [], [], []
        for p in params:
            override = self.param_types.get(p.arg)
            if p.annotation is None:
                if override is None:
                    raise self.fail(ParserTypeError, f"parameter '{p.arg}' has no type annotation", p,
                                    hint="annotate it, e.g. 'x: pl.Tensor[[128, 128], pl.FP32]'")  # fmt: skip
                a_type, direction = override, ParamDirection.In
            else:
                a = self.ann.parse(p.annotation)
                a_type, direction = a.type or override, a.direction
                if override is not None and a.type is None:
                    a_type = override
                elif override is not None and a.type is not None:
                    a_type = self.bind_dynamic(p, a.type, override)
            if a_type is None:
                raise self.fail(ParserTypeError, f"parameter '{p.arg}': a bare pl.Tensor needs a shape and dtype",
                                p.annotation or p, hint="write pl.Tensor[[128, 128], pl.FP32], or use @pl.jit with sample tensors")  # fmt: skip
            names.append(p.arg)
            types.append(a_type)
            dirs.append(direction)
        return names, types, dirs

    def bind_dynamic(self, p: ast.arg, declared: Attribute, actual: Attribute) -> Attribute:
        """A ``pl.dynamic`` dimension takes the extent of the tensor passed (the JIT's sample tensor, or the
        caller's argument); the static dimensions and the dtype must agree."""
        if not isinstance(declared, TensorType) or DYNAMIC not in declared.get_shape():
            return declared
        if not isinstance(actual, TensorType) or DYNAMIC in actual.get_shape():
            return declared
        want, got = declared.get_shape(), actual.get_shape()
        if (
            len(want) != len(got)
            or declared.element_type != actual.element_type
            or any(w not in (DYNAMIC, g) for w, g in zip(want, got, strict=True))
        ):
            raise self.fail(
                ParserTypeError,
                f"parameter '{p.arg}' is declared {describe_type(declared)} but gets {describe_type(actual)}",
                p.annotation or p,
                hint="a pl.dynamic dimension takes any extent; the other dimensions and the dtype must match",
            )
        return TensorType.get(got, declared.element_type, declared.get_memref())

    def build(self) -> func.FuncOp:
        if self.kind in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV):
            problem = cpp_kernel_name_problem(self.fdef.name)
            if problem is not None:  # a kernel's name is its function's in the C++ (g++: "expected unqualified-id")
                raise self.fail(ParserSyntaxError, f"the name of an {self.kind.value} function is its kernel's name in "
                                f"the C++, and {problem}", self.fdef, hint=f"rename it, e.g. '{self.fdef.name}_kernel'")  # fmt: skip
        names, types, dirs = self.params()
        declared = self.declared_returns()
        self.block = Block(arg_types=types)
        self.entry_args = list(self.block.args)
        for n, a in zip(names, self.block.args, strict=False):
            set_name(a, n)
            self.scope.assign(n, a)
        self.stmts(lift_returns(self.fdef.body), set())
        self.resolve_task_deps()
        if self.returned is None:
            if declared:
                raise self.fail(
                    ParserSyntaxError, f"function '{self.fdef.name}' declares a result but has no return", self.fdef
                )
            ret = func.ReturnOp()
            ret.location = self.src.loc(self.fdef)
            self.block.add_op(ret)
            outs: list[Attribute] = []
        else:
            outs = self.result_types(declared)
        f = func.FuncOp(self.fdef.name, (types, outs), Region(self.block))
        f.location = self.src.loc(self.fdef)
        if self.kind is not FunctionType.Opaque:
            set_function_type(f, self.kind, self.info.level, self.info.role)
        if any(d is not ParamDirection.In for d in dirs):
            set_param_directions(f, dirs)
        for key, val in self.info.extra.items():
            if key in ("auto_scope", "strict_ssa") and isinstance(val, bool):
                if val != (key == "auto_scope"):
                    f.attributes[f"pl.{key}"] = BoolAttr.from_bool(val)
        if self.runtime_scope:
            mark_runtime_scope(f)
        return f

    def declared_returns(self) -> list[Attribute] | None:
        node = self.fdef.returns
        if node is None:
            return None
        items = node.slice.elts if isinstance(node, ast.Subscript) and dotted(node.value) in ("tuple", "pl.Tuple") and isinstance(node.slice, ast.Tuple) else [node]  # fmt: skip
        if any(self.ann.parse(i).type is None for i in items if not (isinstance(i, ast.Constant) and i.value is None)):
            return None  # bare pl.Tensor: take the returned values' types
        return self.ann.returns(node)

    def result_types(self, declared: list[Attribute] | None) -> list[Attribute]:
        assert self.returned is not None
        vals, node = self.returned
        actual = [v.type for v in vals]
        if declared is None:
            return actual
        if len(declared) != len(actual):
            raise self.fail(
                ParserTypeError, f"returns {len(actual)} values, but the function declares {len(declared)}", node
            )
        for d, a in zip(declared, actual, strict=False):
            if d != a and not same_kind_shape_dtype(d, a) and not _binds_dynamic(d, a):
                raise self.fail(
                    ParserTypeError, f"returns {describe_type(a)}, but the function declares {describe_type(d)}", node
                )
        return actual  # MemRefs/views on the returned values win (func.return needs equal types)


def _binds_dynamic(declared: Attribute, actual: Attribute) -> bool:
    """A declared ``pl.dynamic`` dimension that the returned value has bound (``[Q_HEADS, 1]`` -> ``[16, 1]``)."""
    if not isinstance(declared, TensorType) or not isinstance(actual, TensorType):
        return False
    want, got = declared.get_shape(), actual.get_shape()
    return (
        declared.element_type == actual.element_type
        and len(want) == len(got)
        and all(w in (DYNAMIC, g) for w, g in zip(want, got, strict=True))
    )


class ProgramBuilder:
    """Collects a program's functions; builds callees before callers so call
    result types match the callee's final signature."""

    def __init__(self, name: str, src: Source):
        self.name = name
        self.src = src
        self.defs: dict[str, tuple[ast.FunctionDef, FunctionInfo, Source]] = {}
        self.built: dict[str, func.FuncOp] = {}
        self.building: set[str] = set()
        self.order: list[str] = []
        self.bind_callees = False  # a specialized build: a function's pl.dynamic dims bind to its first caller's

    def add(self, fdef: ast.FunctionDef, info: FunctionInfo, src: Source | None = None) -> None:
        src = src or self.src
        if fdef.name in self.defs:
            raise src.error(ParserSyntaxError, f"function '{fdef.name}' is defined twice", fdef)
        self.defs[fdef.name] = (fdef, info, src)
        self.order.append(fdef.name)

    def function(self, name: str, param_types: dict[str, Attribute] | None = None) -> func.FuncOp:
        if name not in self.built:
            fdef, info, src = self.defs[name]
            self.building.add(name)
            try:
                self.built[name] = FunctionBuilder(self, src, fdef, info, param_types).build()
            finally:
                self.building.discard(name)
        return self.built[name]

    def callee(
        self, name: str, node: ast.Call, caller: FunctionBuilder, arg_types: list[Attribute] | None = None
    ) -> func.FuncOp:
        if name in self.building:
            raise caller.fail(ParserSyntaxError, f"recursive call to '{name}' is not supported", node)
        if name not in self.defs:
            close = difflib.get_close_matches(name, self.order, n=1)
            raise caller.fail(
                UndefinedVariableError,
                f"program '{self.name}' has no function '{name}'",
                node.func,
                hint=f"did you mean 'self.{close[0]}'?" if close else None,
            )
        if arg_types is None or name in self.built:
            return self.function(name)
        params = [p.arg for p in self.defs[name][0].args.args if p.arg != "self"]
        return self.function(name, dict(zip(params, arg_types, strict=False)))  # its pl.dynamic dims bind

    def external_call(self, caller: FunctionBuilder, node: ast.Call) -> Any:
        """A call to a plain name (``kernel(a, b)``) of a module-level ``@pl.function``: the function joins
        this program (as upstream adds it), its ``pl.dynamic`` dimensions bound to the arguments; None
        for any other name."""
        assert isinstance(node.func, ast.Name)
        target = caller.src.globals.get(node.func.id)
        defs = getattr(target, "source_defs", None)
        if not isinstance(defs, dict) or len(defs) != 1:
            return None
        ((name, (fdef, info, src)),) = defs.items()
        if name in self.building:
            raise caller.fail(ParserSyntaxError, f"recursive call to '{name}' is not supported", node)
        args = [caller.value(a) for a in node.args]
        if name not in self.defs:
            fnode = copy.copy(fdef)
            fnode.decorator_list = []
            self.add(fnode, info, src)
        elif self.defs[name][0].lineno != fdef.lineno or self.defs[name][2].filename != src.filename:
            raise caller.fail(ParserSyntaxError, f"two different functions named '{name}' in one program", node)
        params = [p.arg for p in fdef.args.args if p.arg != "self"]
        callee = self.function(name, {p: a.type for p, a in zip(params, args, strict=False)})
        return caller.emit_call(callee, args, node, None)

    def build(self) -> Program:
        for name in self.order:
            self.function(name)
        module = ModuleOp([self.built[n] for n in self.order])
        module.sym_name = StringAttr(self.name)
        return Program(module)
