"""Statements: assignments, subscript writes, loops (``scf.for``), ``if``
(``scf.if``), ``with pl.at`` scopes, ``pl.yield_`` and ``return``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, IntegerType, StringAttr, UnitAttr, i1, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue

from pypto.dialects.enums import ForKind, FunctionType, Level
from pypto.dialects.op_base import describe_type, same_kind_shape_dtype
from pypto.dialects.op_facts import alias_operand, is_view
from pypto.dialects.program import (
    EARLY_RESOLVE,
    MANUAL_DEP,
    NO_DEP_ARGS,
    AtOp,
    YieldOp,
    set_for_kind,
)
from pypto.dialects.tile_ops import TileGetBlockIdxOp
from pypto.dialects.types import DYNAMIC, TensorType, TileType
from pypto.errors import (
    InvalidOperationError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)

from .constexpr import NotConstant, evaluate
from .dsl_objects import ScopeMode
from .hierarchy import at_args, reject_chip_scope, scope_name_hint
from .scopes import Scope, assigned_names, loaded_names, must_defined, set_name, upward_exposed
from .source import dotted
from .sugar import OPS
from .tasks import Dep, TaskSet

if TYPE_CHECKING:
    from .builder import FunctionBuilder

LOOPS = {"pl.range": ForKind.Sequential, "range": ForKind.Sequential, "pl.parallel": ForKind.Parallel,
         "pl.unroll": ForKind.Unroll, "pl.pipeline": ForKind.Pipeline}  # fmt: skip

_OPTIMIZATIONS = {"pl.split", "pl.optimizations.split", "pl.cross_core_slot", "pl.optimizations.cross_core_slot"}
"""The entries of ``pl.at(..., optimizations=[...])``."""
_SPLIT_MODES = {"pl.SplitMode.NONE", "pl.SplitMode.UP_DOWN", "pl.SplitMode.LEFT_RIGHT"}

_UNSUPPORTED = {ast.While: "while loops", ast.Try: "try statements", ast.ClassDef: "class definitions",
                ast.FunctionDef: "nested functions", ast.AsyncFunctionDef: "nested functions", ast.Lambda: "lambda",
                ast.Delete: "del", ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Import: "import",
                ast.ImportFrom: "import", ast.Raise: "raise", ast.Assert: "assert", ast.Break: "break",
                ast.Continue: "continue", ast.AsyncFor: "async for", ast.AsyncWith: "async with",
                ast.Match: "match statements", ast.TryStar: "try statements"}  # fmt: skip


@dataclass
class Frame:
    """A region being built (loop, if arm, scope) and its ``pl.yield_``."""

    kind: str
    yield_values: list[SSAValue] | None = None
    yield_targets: list[str] = field(default_factory=list)
    yield_node: ast.AST | None = None
    yield_sets: dict[int, TaskSet] = field(default_factory=dict)  # task arrays yielded, by position


def _is_yield(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func) == "pl.yield_"


class StmtMixin:
    """Statement handling for :class:`FunctionBuilder`."""

    def stmts(self: FunctionBuilder, body: list[ast.stmt], live_after: set[str]) -> None:
        # Names live after each statement (read before being reassigned), built back to front in one pass
        # (re-walking every suffix made long bodies quadratic).
        live: list[set[str]] = [set()] * len(body)
        acc = set(live_after)
        for i in range(len(body) - 1, -1, -1):
            live[i] = acc
            s = body[i]
            simple = isinstance(s, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return))
            acc = (acc - must_defined([s])) | (loaded_names([s]) if simple else upward_exposed([s]))
        for i, s in enumerate(body):
            if self.returned is not None:
                raise self.fail(UnsupportedFeatureError, "statements after 'return' are not supported", s)
            self.stmt(s, live[i])

    def stmt(self: FunctionBuilder, s: ast.stmt, live: set[str]) -> None:
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise self.fail(UnsupportedFeatureError, "chained assignment is not supported", s)
            self.assign(s.targets[0], s.value, None)
        elif isinstance(s, ast.AnnAssign):
            if s.value is None:
                raise self.fail(UnsupportedFeatureError, "a declaration without a value is not supported", s)
            ann = self.ann.parse(s.annotation)
            self.assign(s.target, s.value, ann.type, match_space=not ann.space_free)
        elif isinstance(s, ast.AugAssign):
            self.assign(s.target, ast.copy_location(ast.BinOp(s.target if not isinstance(s.target, ast.Name) else ast.Name(s.target.id, ast.Load(), lineno=s.target.lineno, col_offset=s.target.col_offset, end_lineno=s.target.end_lineno, end_col_offset=s.target.end_col_offset), s.op, s.value), s), None)  # fmt: skip
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return  # docstring
            if _is_yield(s.value):
                self.yield_stmt(s.value, [], s)
            elif isinstance(s.value, ast.Call) and dotted(s.value.func) == "pl.dump_tag":
                self.dump_tag_stmt(s.value, s)
            elif isinstance(s.value, ast.Call):
                self.call(s.value)
            else:
                raise self.fail(UnsupportedFeatureError, "an expression statement must be a call", s)
        elif isinstance(s, ast.For):
            self.for_stmt(s, live)
        elif isinstance(s, ast.If):
            self.if_stmt(s, live)
        elif isinstance(s, ast.With):
            self.with_stmt(s, live)
        elif isinstance(s, ast.Return):
            self.return_stmt(s)
        elif isinstance(s, ast.Pass):
            return
        else:
            what = _UNSUPPORTED.get(type(s), type(s).__name__)
            raise self.fail(UnsupportedFeatureError, f"{what} is not supported in DSL functions", s)

    # ---- assignment -------------------------------------------------------------

    def bind(self: FunctionBuilder, name: str, v: SSAValue) -> None:
        if v.name_hint is None:
            set_name(v, name)
        self.scope.assign(name, v)

    def assign(
        self: FunctionBuilder,
        target: ast.expr,
        value: ast.expr,
        annotated: Attribute | None,
        *,
        match_space: bool = True,
    ) -> None:
        """``target = value`` (``annotated``: the declared type, if any).

        ``match_space=False`` (a tile annotation without a memory space)
        checks only the shape and dtype, and the value keeps its own space."""
        if _is_yield(value):
            assert isinstance(value, ast.Call)
            names = self.target_names(target)
            self.yield_stmt(value, names, target)
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in self.task_arrays:
            self.task_array_store(target, value)
            return
        if isinstance(target, ast.Subscript) and self.is_scalar_array(target.value):
            self.scalar_array_store(target, value)
            return
        if isinstance(target, ast.Subscript):
            self.subscript_write(target, value)
            return
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and dotted(value.func) == "pl.array.create":
            if _task_dtype(value):
                self.task_array_create(target.id, value)
            else:
                self.scalar_array_create(target.id, value)
            return
        if isinstance(target, ast.Name):
            self.scalar_array_rebind(target.id, value)
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and dotted(value.func) == "pl.system.task_dummy":
            self.task_dummy(target.id, value)
            return
        if isinstance(value, ast.Call) and dotted(value.func) == "pl.submit":
            self.submit(target, value)
            return
        if isinstance(target, ast.Name):
            self.target_name = target.id
            try:
                v = self.expr(value, annotated, annotated if match_space else None)
            finally:
                self.target_name = None
            if not isinstance(v, SSAValue):
                raise self.fail(ParserTypeError, "the right-hand side gives no single value", value)
            if annotated is not None and not match_space and isinstance(annotated, TileType):
                if isinstance(v.type, TileType):
                    annotated = TileType.get(annotated.get_shape(), annotated.element_type, v.type.memory_space)
            if annotated is not None and v.type != annotated and not same_kind_shape_dtype(v.type, annotated):
                raise self.fail(
                    ParserTypeError,
                    f"annotated type {describe_type(annotated)} does not match the value's type {describe_type(v.type)}",
                    target,
                )
            self.bind(target.id, v)
            return
        if isinstance(target, ast.Tuple):
            names = self.target_names(target)
            vals = self.expr(value)
            if not isinstance(vals, list) or len(vals) != len(names):
                n = len(vals) if isinstance(vals, list) else 1
                raise self.fail(ParserTypeError, f"cannot unpack {n} values into {len(names)} names", target)
            for n, v in zip(names, vals, strict=False):
                self.bind(n, v)
            return
        raise self.fail(UnsupportedFeatureError, f"assignment to {type(target).__name__} is not supported", target)

    def target_names(self: FunctionBuilder, target: ast.expr) -> list[str]:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]  # type: ignore[attr-defined]
        raise self.fail(UnsupportedFeatureError, "expected a name or a tuple of names", target)

    def subscript_write(self: FunctionBuilder, target: ast.Subscript, value: ast.expr) -> None:
        """``out[a:b, c:d] = v`` -> ``out = pl.*.assemble(out, v, [a, c])``."""
        if not isinstance(target.value, ast.Name):
            raise self.fail(
                UnsupportedFeatureError, "only a named tensor or tile can be written through a subscript", target
            )
        dst = self.value(target.value)
        w = self.window(dst, target)
        if not isinstance(w, tuple):
            raise self.fail(
                UnsupportedFeatureError, "element writes (x[i, j] = v) are not supported; use slices", target
            )
        shape, offsets = w
        src = self.value(value, dst.type)
        got = list(src.type.get_shape()) if isinstance(src.type, (TileType, TensorType)) else None
        if got is not None and DYNAMIC not in got and got != shape:
            raise self.fail(
                ParserTypeError,
                f"the window {ast.unparse(target)} has shape {shape}, but the value written to it has shape {got}",
                target,
                hint="make the slice bounds match the value's shape",
            )
        layer = "tile" if isinstance(dst.type, TileType) else "tensor"
        v = self.make_op(OPS[f"pl.{layer}.assemble"], {"target": dst, "source": src, "offset": offsets}, {}, target)
        set_name(v, target.value.id)
        self.scope.assign(target.value.id, v)

    # ---- pl.yield_, return --------------------------------------------------------------

    def yield_stmt(self: FunctionBuilder, call: ast.Call, names: list[str], node: ast.AST) -> None:
        if not self.frames or self.frames[-1].kind not in ("for", "if"):
            raise self.fail(ParserSyntaxError, "pl.yield_ outside a loop or if body", call)
        frame = self.frames[-1]
        if frame.yield_values is not None:
            raise self.fail(ParserSyntaxError, "a second pl.yield_ in the same body", call)
        if call.keywords:
            raise self.fail(InvalidOperationError, "pl.yield_ takes no keyword arguments", call)
        frame.yield_values = []
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Name) and a.id in self.task_arrays:
                if frame.kind != "for":
                    raise self.fail(UnsupportedFeatureError, "an if cannot yield task handles; a loop can carry them", a)
                frame.yield_sets[i] = self.task_arrays[a.id]
            else:
                frame.yield_values.append(self.value(a))
        if names and len(names) != len(call.args):
            raise self.fail(ParserTypeError, f"pl.yield_ gives {len(call.args)} values to {len(names)} names", node)
        frame.yield_targets = names
        frame.yield_node = call

    def return_stmt(self: FunctionBuilder, s: ast.Return) -> None:
        if any(f.kind != "scope" for f in self.frames):
            raise self.fail(UnsupportedFeatureError, "'return' inside a loop, if or pl.at scope is not supported", s)
        if s.value is None:
            vals: list[SSAValue] = []
        elif isinstance(s.value, ast.Tuple):
            vals = [self.value(e) for e in s.value.elts]
        elif isinstance(s.value, ast.Call) and isinstance(got := self.expr(s.value), list) and got:
            vals = got  # ``return self.step(...)`` of a function returning a tuple
        elif isinstance(s.value, ast.Call) and isinstance(got, SSAValue):
            vals = [got]
        else:
            vals = [self.value(s.value)]
        self.returned = (vals, s)
        self.emit(func.ReturnOp(*vals), s)

    # ---- regions ---------------------------------------------------------------------

    def region(
        self: FunctionBuilder, kind: str, block: Block, scope: Scope, body: list[ast.stmt], live: set[str]
    ) -> Frame:
        """Build ``body`` into ``block`` with its own scope; returns its frame."""
        saved = (self.block, self.scope)
        frame = Frame(kind)
        self.block, self.scope = block, scope
        self.frames.append(frame)
        try:
            self.stmts(body, live)
        finally:
            self.frames.pop()
            self.block, self.scope = saved
        return frame

    def for_stmt(self: FunctionBuilder, s: ast.For, live_after: set[str]) -> None:
        it = s.iter
        path = dotted(it.func) if isinstance(it, ast.Call) else None
        if path == "pl.spmd" and isinstance(it, ast.Call):
            self.spmd_loop(s, it, live_after)
            return
        if path not in LOOPS or not isinstance(it, ast.Call):
            raise self.fail(
                UnsupportedFeatureError, "loops must iterate over pl.range / pl.parallel / pl.unroll / pl.pipeline", it
            )
        if s.orelse:
            raise self.fail(UnsupportedFeatureError, "for ... else is not supported", s)
        kind = LOOPS[path]
        if any(k.arg is None for k in it.keywords):
            raise self.fail(UnsupportedFeatureError, f"{path}(**...) is not supported: write its keywords out", it)
        kw = {k.arg: k.value for k in it.keywords}
        unknown = set(kw) - ({"init_values", "stage"} if kind is ForKind.Pipeline else {"init_values"})
        if unknown:
            name = sorted(unknown)[0]
            raise self.fail(
                InvalidOperationError,
                f"{path} has no argument '{name}'",
                it,
                hint="stage= (the pipeline depth) belongs to pl.pipeline(n, stage=F)" if name == "stage" else None,
            )
        if not 1 <= len(it.args) <= 3:
            raise self.fail(InvalidOperationError, f"{path} takes 1 to 3 positional arguments (start, stop, step)", it)
        step = self._static(it.args[2]) if len(it.args) == 3 else None
        if step is not None and step <= 0:
            raise self.fail(
                ParserTypeError,
                f"{path} step must be positive, got {step}",
                it.args[2],
                hint="a loop counts up; for a reverse order use i in pl.range(n) and the index n - 1 - i",
            )
        index = IndexType()
        bounds = [self.value(a, index) for a in it.args]
        bounds = [self.cast_scalar(b, index, a) if isinstance(b.type, IntegerType) and b.type != i1 else b for a, b in zip(it.args, bounds, strict=False)]
        for a, b in zip(it.args, bounds, strict=False):
            if b.type != index:
                raise self.fail(
                    ParserTypeError, f"loop bounds must be pl.INDEX scalars, got {describe_type(b.type)}", a
                )
        if len(bounds) == 1:
            bounds = [self.constant(0, index, it), bounds[0]]
        if len(bounds) == 2:
            bounds.append(self.constant(1, index, it))
        stage = self.pipeline_stage(it, kw.get("stage")) if kind is ForKind.Pipeline else None
        # Target: ``i`` or ``i, (a, b)`` with explicit init_values.
        explicit: list[str] = []
        inits: list[SSAValue] = []
        carried_sets: list[tuple[int, TaskSet, TaskSet]] = []  # (position, init, in the body)
        if "init_values" in kw:
            iv = kw["init_values"]
            if not isinstance(iv, (ast.Tuple, ast.List)):
                raise self.fail(ParserSyntaxError, "init_values must be a tuple", iv)
            # Task-handle arrays are carried at compile time (sets of handles), not as loop values.
            task_pos = [i for i, e in enumerate(iv.elts) if isinstance(e, ast.Name) and e.id in self.task_arrays]
            inits = [self.value(e) for i, e in enumerate(iv.elts) if i not in task_pos]
            if not (isinstance(s.target, ast.Tuple) and len(s.target.elts) == 2):
                raise self.fail(ParserSyntaxError, "with init_values the loop target must be 'i, (x, ...)'", s.target)
            idx_node, carried_node = s.target.elts
            explicit = self.target_names(carried_node)
            if len(explicit) != len(iv.elts):
                raise self.fail(
                    ParserSyntaxError, f"{len(explicit)} loop-carried names for {len(iv.elts)} init_values", carried_node
                )
            for i in task_pos:
                init_set = self.task_arrays[iv.elts[i].id]  # type: ignore[attr-defined]
                carried_sets.append((i, init_set, TaskSet(members=[init_set])))
                self.task_arrays[explicit[i]] = carried_sets[-1][2]
            explicit = [n for i, n in enumerate(explicit) if i not in task_pos]
        else:
            idx_node = s.target
        if not isinstance(idx_node, ast.Name):
            raise self.fail(UnsupportedFeatureError, "the loop variable must be a name", idx_node)
        # Live at the back edge: what the next iteration reads before writing.
        body_live = live_after | upward_exposed(s.body)
        # With explicit init_values the loop is in SSA form: no implicit carries.
        implicit = [
            n for n in assigned_names(s.body)
            if not explicit and n != idx_node.id and self.scope.lookup(n) is not None and n in body_live
        ]  # fmt: skip
        inits += [self.scope.lookup(n) for n in implicit]  # type: ignore[misc]
        # First assigned in the body and read after the loop: carried too, its init chosen once the body is built.
        escaping = [
            n for n in assigned_names(s.body)
            if not explicit and n != idx_node.id and self.scope.lookup(n) is None and n in live_after
        ]  # fmt: skip
        names = explicit + implicit
        block = Block(arg_types=[index, *(v.type for v in inits)])
        scope = Scope(self.scope)
        set_name(block.args[0], idx_node.id)
        scope.assign(idx_node.id, block.args[0])
        for n, a in zip(names, block.args[1:], strict=False):
            set_name(a, n)
            scope.assign(n, a)
        self.carry_dump_tags(inits, list(block.args[1:]))
        frame = self.region("for", block, scope, s.body, body_live)
        if (explicit or carried_sets) and frame.yield_values is None:
            raise self.fail(ParserSyntaxError, "a loop with init_values must end with 'x = pl.yield_(...)'", s)
        if set(frame.yield_sets) != {i for i, _, _ in carried_sets}:
            raise self.fail(
                ParserTypeError,
                "pl.yield_ must give a task-handle array exactly where init_values has one",
                frame.yield_node or s,
            )
        for i, init_set, body_set in carried_sets:
            body_set.members.append(frame.yield_sets[i])  # the next iteration's value
            if frame.yield_targets:  # after the loop: the last iteration's (or the init's, for no iteration)
                self.task_arrays[frame.yield_targets[i]] = TaskSet(members=[init_set, frame.yield_sets[i]])
        frame.yield_targets = [n for i, n in enumerate(frame.yield_targets) if i not in frame.yield_sets]
        escaping = [n for n in escaping if not self.is_task_name(n)]
        yields = list(frame.yield_values or []) + [scope.lookup(n) for n in implicit]  # type: ignore[misc]
        for n in escaping:
            last = scope.vars.get(n)
            if last is None:
                raise self.fail(
                    ParserSyntaxError, f"'{n}' is not assigned on every path of the loop body and not defined before it", s
                )
            inits.append(self.escaping_init(n, last, block, inits, bounds, s))
            arg = block.insert_arg(last.type, len(block.args))
            set_name(arg, n)
            yields.append(last)
        names += escaping
        if len(yields) != len(inits):
            raise self.fail(
                ParserTypeError,
                f"pl.yield_ gives {len(yields)} values for {len(inits)} loop-carried values",
                frame.yield_node or s,
            )
        for n, y, i in zip(names, yields, inits, strict=False):
            if y.type != i.type and not same_kind_shape_dtype(y.type, i.type):
                raise self.fail(
                    ParserTypeError,
                    f"loop-carried '{n}' starts as {describe_type(i.type)} but the body gives {describe_type(y.type)}",
                    frame.yield_node or s,
                )
        yop = scf.YieldOp(*yields)
        yop.location = self.src.loc(frame.yield_node or s)
        block.add_op(yop)
        op = scf.ForOp(bounds[0], bounds[1], bounds[2], inits, Region(block))
        set_for_kind(op, kind, stage)
        self.emit(op, s)
        result_names = (frame.yield_targets or explicit) + implicit + escaping
        for n, r in zip(result_names, op.results, strict=False):
            set_name(r, n)
            self.scope.assign(n, r)

    def pipeline_stage(self: FunctionBuilder, call: ast.Call, node: ast.expr | None) -> int:
        """``stage=`` of ``pl.pipeline(..., stage=F)``: required, a compile-time integer >= 1 (upstream's rule)."""
        if node is None:
            raise self.fail(
                InvalidOperationError,
                "pl.pipeline needs stage= (the pipeline depth, a positive integer)",
                call,
                hint="pl.pipeline(n, stage=2); for a loop that is not pipelined use pl.range(n)",
            )
        try:
            stage = evaluate(node, self.src.globals)
        except NotConstant as e:
            raise self.fail(ParserTypeError, f"stage must be a constant: {e.message}", e.node) from None
        if isinstance(stage, bool) or not isinstance(stage, int) or not 1 <= stage < 2**63:
            raise self.fail(
                ParserTypeError,
                f"pl.pipeline stage must be a positive integer, got {stage!r}",
                node,
                hint="the number of iterations in flight, typically 2 to 4: stage=2",
            )
        return stage

    def escaping_init(
        self: FunctionBuilder,
        name: str,
        last: SSAValue,
        block: Block,
        inits: list[SSAValue],
        bounds: list[SSAValue],
        s: ast.For,
    ) -> SSAValue:
        """The init of a name first assigned in a loop body and read after the loop.

        Python gives it the last iteration's value. When that value is written in place
        into a tensor from outside the loop (``x = pl.store(t, [..], out)``), the init is
        that tensor (a zero-trip loop leaves it unchanged, as upstream's ConvertToSSA does
        with an Out parameter); a scalar of a loop with a constant trip count >= 1 starts
        as 0 (never read); anything else is a located error."""
        root = write_root(last, block, inits)
        if root is not None and root.type == last.type:
            return root
        trips = static_trip_count(bounds)
        if trips is not None and trips >= 1 and not isinstance(last.type, (TensorType, TileType)):
            return self.constant(0, last.type, s)
        why = "the loop may run zero times" if trips is None or trips < 1 else "its value is not a tensor written in place"
        raise self.fail(
            ParserSyntaxError,
            f"'{name}' is first assigned inside the loop and read after it, and {why}",
            s,
            hint=f"define '{name}' before the loop",
        )

    def if_stmt(self: FunctionBuilder, s: ast.If, live_after: set[str]) -> None:
        cond = self.value(s.test)
        if cond.type != i1:
            raise self.fail(
                ParserTypeError, f"an if condition must be a pl.BOOL scalar, got {describe_type(cond.type)}", s.test
            )
        then_names, else_names = assigned_names(s.body), assigned_names(s.orelse)
        implicit = [
            n for n in dict.fromkeys(then_names + else_names)
            if n in live_after and (self.scope.lookup(n) is not None or (n in then_names and n in else_names))
        ]  # fmt: skip
        arms: list[tuple[Block, Frame, Scope]] = []
        for body in (s.body, s.orelse):
            block, scope = Block(), Scope(self.scope)
            frame = self.region("if", block, scope, body, live_after)
            arms.append((block, frame, scope))
        (tb, tf, ts), (eb, ef, es) = arms
        explicit = tf.yield_targets or ef.yield_targets
        if (tf.yield_values is None) != (ef.yield_values is None):
            raise self.fail(ParserSyntaxError, "both arms of a value-producing if must end with pl.yield_", s)
        if tf.yield_values is not None:
            implicit = []  # explicit pl.yield_ arms are in SSA form
        yields: list[list[SSAValue]] = []
        for frame, scope in ((tf, ts), (ef, es)):
            vals = list(frame.yield_values or [])
            for n in implicit:
                v = scope.lookup(n)
                if v is None:
                    raise self.fail(
                        ParserSyntaxError, f"'{n}' is assigned in only one arm of the if and not defined before it", s
                    )
                vals.append(v)
            yields.append(vals)
        types = [v.type for v in yields[0]]
        if [v.type for v in yields[1]] != types:
            raise self.fail(ParserTypeError, "the two arms of the if give values of different types", s)
        for block, vals, frame in ((tb, yields[0], tf), (eb, yields[1], ef)):
            y = scf.YieldOp(*vals)
            y.location = self.src.loc(frame.yield_node or s)
            block.add_op(y)
        false_region = Region(eb) if (s.orelse or types) else Region()
        op = scf.IfOp(cond, types, Region(tb), false_region)
        self.emit(op, s)
        for n, r in zip(list(explicit) + implicit, op.results, strict=False):
            set_name(r, n)
            self.scope.assign(n, r)

    def with_stmt(self: FunctionBuilder, s: ast.With, live_after: set[str]) -> None:
        if len(s.items) != 1 or not isinstance(s.items[0].context_expr, ast.Call):
            raise self.fail(UnsupportedFeatureError, "only 'with pl.at(...):' scopes are supported", s)
        item = s.items[0]
        call = item.context_expr
        assert isinstance(call, ast.Call)
        path = dotted(call.func)
        if item.optional_vars is not None and (path != "pl.at" or not isinstance(item.optional_vars, ast.Name)):
            raise self.fail(
                UnsupportedFeatureError,
                "'with ... as name' is supported only as 'with pl.at(...) as task:' (a task handle for deps=[task])",
                item.optional_vars,
            )
        if path in ("pl.scope", "pl.manual_scope"):
            self.runtime_scope_stmt(s, call, live_after)
            return
        if path == "pl.cluster":
            self.cluster_scope(s, call, live_after)
            return
        if path == "pl.spmd":
            self.spmd_scope(s, call, live_after)
            return
        if path != "pl.at":
            raise self.fail(
                UnsupportedFeatureError, f"unsupported context manager '{path or ast.unparse(call.func)}'", call
            )
        kw: dict[str, Any] = {}
        dumps_node: ast.expr | None = None
        deps: list[Dep] = []
        no_dep: list[str] = []
        early = False
        for k in call.keywords:
            if k.arg is None:
                raise self.fail(UnsupportedFeatureError, "pl.at(**...) is not supported: write its keywords out", call)
            if k.arg == "optimizations":
                self.at_optimizations(k.value)
                continue
            if k.arg == "deps":
                deps = self.task_deps(k.value)
                continue
            if k.arg == "no_dep_args":
                no_dep = self.no_dep_names(k.value)
                continue
            if k.arg == "allow_early_resolve":
                early = evaluate(k.value, self.src.globals) if isinstance(k.value, ast.Constant) else None
                if not isinstance(early, bool):
                    raise self.fail(ParserTypeError, "pl.at allow_early_resolve= takes True or False", k.value)
                continue
            if k.arg == "dumps":
                dumps_node = k.value
                continue
            if k.arg not in ("level", "role", "name_hint"):
                raise self.fail(InvalidOperationError, f"pl.at has no argument '{k.arg}'", k.value)
        at = at_args(call, self.src)  # level, role, name_hint: checked as upstream checks them
        if at.level is not Level.CORE_GROUP:  # a hierarchy scope: outlined from a HOST orchestrator (.hierarchy)
            reject_chip_scope(call, self.src, f"the {self.kind.value} function '{self.fdef.name}'")
        level = at.level
        if at.name_hint is not None:
            kw["name_hint"] = at.name_hint
        block, scope = Block(), Scope(self.scope)
        self.at_depth += 1
        try:
            self.region("at", block, scope, s.body, live_after)
        finally:
            self.at_depth -= 1
        outs = [n for n in assigned_names(s.body) if n in live_after and n in scope.vars]
        vals = [scope.vars[n] for n in outs]
        y = YieldOp(*vals)
        y.location = self.src.loc(s)
        block.add_op(y)
        dumps = self.at_dumps(dumps_node, block, level)
        op = AtOp(level, Region(block), [v.type for v in vals], kw.get("name_hint"), dumps)
        if self.spmd is not None:  # with pl.spmd(n): with pl.at(...): the outlined kernel's call launches n blocks
            mark_spmd(op, self.spmd)
        handle = None
        if isinstance(item.optional_vars, ast.Name):
            handle = self.new_task_handle(item.optional_vars.id)
        self.link_tasks(op, handle, deps)
        if no_dep:
            op.attributes[NO_DEP_ARGS] = ArrayAttr(StringAttr(n) for n in no_dep)
        if self.manual_depth:
            op.attributes[MANUAL_DEP] = UnitAttr()
        if early:
            op.attributes[EARLY_RESOLVE] = UnitAttr()
        self.emit(op, s)
        for n, r in zip(outs, op.res, strict=False):
            set_name(r, n)
            self.scope.assign(n, r)

    def runtime_scope_stmt(self: FunctionBuilder, s: ast.With, call: ast.Call, live_after: set[str]) -> None:
        """``with pl.scope():`` / ``pl.scope(mode=pl.ScopeMode.MANUAL)`` / ``pl.manual_scope()`` (the MANUAL
        one's alias): a runtime scope of the orchestration, checked as upstream checks it: only ``mode=``;
        not in a kernel nor in a ``pl.at`` scope; no MANUAL scope in a MANUAL one, nor an AUTO one; a
        hand-placed AUTO scope needs ``auto_scope=False`` (the compiler places them otherwise)."""
        if dotted(call.func) == "pl.manual_scope":
            if call.args or call.keywords:
                raise self.fail(InvalidOperationError, "pl.manual_scope() takes no arguments", call)
            manual, what = True, "pl.manual_scope()"
        else:
            if call.args:
                raise self.fail(
                    ParserSyntaxError,
                    "pl.scope() takes only a 'mode=' keyword, not positional arguments",
                    call,
                    hint="with pl.scope(): or with pl.scope(mode=pl.ScopeMode.MANUAL):",
                )
            mode = ScopeMode.AUTO
            for k in call.keywords:
                if k.arg != "mode":
                    raise self.fail(
                        InvalidOperationError,
                        f"pl.scope has no argument '{k.arg}'" if k.arg else "pl.scope(**...) is not supported",
                        k.value,
                        hint="its one keyword is mode=pl.ScopeMode.AUTO or mode=pl.ScopeMode.MANUAL",
                    )
                try:
                    mode = evaluate(k.value, self.src.globals)
                except NotConstant as e:
                    raise self.fail(ParserTypeError, f"pl.scope mode must be a constant: {e.message}", e.node) from None
                if not isinstance(mode, ScopeMode):
                    raise self.fail(
                        ParserTypeError, "pl.scope mode= takes pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL", k.value
                    )
            manual = mode is ScopeMode.MANUAL
            what = "pl.scope(mode=pl.ScopeMode.MANUAL)" if manual else "pl.scope()"
        if self.kind in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV) or self.at_depth:
            where = "a pl.at scope" if self.at_depth else f"the {self.kind.value} function '{self.fdef.name}'"
            raise self.fail(
                UnsupportedFeatureError,
                f"'with {what}' is a runtime scope of the orchestration, not valid inside {where}",
                call,
                hint="put it in the Orchestration function, around the pl.at scopes or kernel calls it groups",
            )
        if self.manual_depth:
            raise self.fail(
                UnsupportedFeatureError,
                f"{'a manual' if manual else 'an AUTO'} scope may not be nested inside a manual scope",
                call,
                hint="the runtime forbids it: move it out of the enclosing manual scope, or flatten the two",
            )
        if not manual and self.info.extra.get("auto_scope", True) is not False:
            raise self.fail(
                UnsupportedFeatureError,
                "a hand-placed AUTO 'with pl.scope():' needs auto_scope=False",
                call,
                hint="with auto_scope=True (the default) the compiler places the AUTO scopes: use "
                "@pl.jit(auto_scope=False) / @pl.function(..., auto_scope=False), or pl.scope(mode=pl.ScopeMode.MANUAL)",
            )
        self.runtime_scope = True
        saved = self.frames
        self.frames = [*saved, Frame("scope")]
        self.manual_depth += manual
        try:
            self.stmts(s.body, live_after)
        finally:
            self.frames = saved
            self.manual_depth -= manual

    def at_optimizations(self: FunctionBuilder, node: ast.expr) -> None:
        """``pl.at(..., optimizations=[pl.split(pl.SplitMode.X), pl.cross_core_slot(slot_num=N)])``, checked as
        upstream checks it: a list literal written at the call site, each entry once. Both shape how upstream
        divides the scope's work between AIC and AIV (the split mode, the cross-core ring depth); the kernel
        computes the same numbers without them, so they are read and dropped."""
        hint = "write the list inline: optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]"
        if not isinstance(node, ast.List):
            raise self.fail(ParserSyntaxError, "pl.at(optimizations=...) must be a list literal", node, hint=hint)
        seen: set[str] = set()
        for e in node.elts:
            path = dotted(e.func) if isinstance(e, ast.Call) else None
            name = path.rsplit(".", 1)[-1] if path in _OPTIMIZATIONS else None
            if name is None or not isinstance(e, ast.Call):
                raise self.fail(
                    ParserSyntaxError,
                    f"pl.at optimizations= entries are pl.split(mode) or pl.cross_core_slot(slot_num=N), got {ast.unparse(e)}",
                    e,
                    hint=hint,
                )
            if name in seen:
                raise self.fail(ParserSyntaxError, f"pl.{name}(...) is given twice in optimizations=[...]", e)
            seen.add(name)
            slot = next((k.value for k in e.keywords if k.arg == "slot_num"), None)
            if name == "split" and (len(e.args) != 1 or dotted(e.args[0]) not in _SPLIT_MODES):
                raise self.fail(
                    ParserTypeError, "pl.split takes one pl.SplitMode member: NONE, UP_DOWN or LEFT_RIGHT", e,
                    hint="pl.split(pl.SplitMode.UP_DOWN)",
                )  # fmt: skip
            if name == "cross_core_slot" and (e.args or slot is None):
                raise self.fail(ParserTypeError, "pl.cross_core_slot takes slot_num=N only", e,
                                hint="pl.cross_core_slot(slot_num=4)")  # fmt: skip
            if any(k.arg != "slot_num" for k in e.keywords):
                bad = next(k for k in e.keywords if k.arg != "slot_num")
                raise self.fail(InvalidOperationError, f"pl.{name} has no argument '{bad.arg}'", bad.value or e)
            if slot is not None and not (
                isinstance(slot, ast.Constant) and type(slot.value) is int and slot.value > 0
            ):
                raise self.fail(
                    ParserTypeError, f"slot_num must be a positive integer literal, got {ast.unparse(slot)}", slot
                )

    def no_dep_names(self: FunctionBuilder, node: ast.expr) -> list[str]:
        """``no_dep_args=[out]``: outer tensors (by name) the task keeps out of dependency tracking."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(ParserTypeError, "pl.at no_dep_args= takes a list of tensors, e.g. no_dep_args=[out]", node)
        names = []
        for e in node.elts:
            v = self.scope.lookup(e.id) if isinstance(e, ast.Name) else None
            if v is None or not isinstance(getattr(v, "type", None), TensorType):
                raise self.fail(
                    ParserTypeError,
                    f"pl.at no_dep_args=: '{ast.unparse(e)}' is not a tensor defined before the scope",
                    e,
                )
            names.append(e.id)
        return names

    def cluster_scope(self: FunctionBuilder, s: ast.With, call: ast.Call, live_after: set[str]) -> None:
        """``with pl.cluster():`` in an Orchestration function: upstream co-schedules the AIC and AIV kernels
        it calls on one physical cluster (a Group). Here its body is parsed as it stands: each kernel call
        stays its own task (the simulated scheduler places them; results are the same)."""
        if call.args or call.keywords:
            raise self.fail(InvalidOperationError, "pl.cluster() takes no arguments", call)
        if self.kind is not FunctionType.Orchestration or self.at_depth:
            raise self.fail(UnsupportedFeatureError, "pl.cluster groups kernel calls: use it in an Orchestration function", call)
        self.stmts(s.body, live_after)

    def spmd_launch(self: FunctionBuilder, call: ast.Call) -> SpmdLaunch:
        """The block count (and ``sync_start``) of a ``pl.spmd(n)`` / ``pl.spmd(core_num=n, sync_start=)``
        in an Orchestration function (a located error otherwise)."""
        if self.kind is not FunctionType.Orchestration:
            raise self.fail(UnsupportedFeatureError, "pl.spmd launches kernels: use it in an Orchestration function", call)
        if self.spmd is not None:
            raise self.fail(UnsupportedFeatureError, "pl.spmd scopes do not nest", call)
        kw: dict[str, Any] = {}
        for k in call.keywords:
            if k.arg not in ("core_num", "sync_start", "name_hint"):
                raise self.fail(InvalidOperationError, f"pl.spmd has no argument '{k.arg}' (core_num, sync_start)", k.value)
            try:
                kw[k.arg] = evaluate(k.value, self.src.globals)
            except NotConstant as e:
                raise self.fail(ParserTypeError, f"pl.spmd {k.arg} must be a constant: {e.message}", e.node) from None
        if len(call.args) > 1 or (call.args and "core_num" in kw):
            raise self.fail(InvalidOperationError, "pl.spmd takes one block count: pl.spmd(n) or pl.spmd(core_num=n)", call)
        if call.args:
            try:
                kw["core_num"] = evaluate(call.args[0], self.src.globals)
            except NotConstant as e:
                raise self.fail(ParserTypeError, f"pl.spmd's block count must be a constant: {e.message}", e.node) from None
        n = kw.get("core_num")
        node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "core_num"), call)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise self.fail(ParserTypeError, f"pl.spmd's block count must be a positive integer, got {n!r}", node)
        name = None
        if "name_hint" in kw:
            hint_node = next(k.value for k in call.keywords if k.arg == "name_hint")
            name = scope_name_hint(kw["name_hint"], hint_node, self.src, "pl.spmd")
        return SpmdLaunch(n, bool(kw.get("sync_start", False)), name_hint=name)

    def spmd_scope(self: FunctionBuilder, s: ast.With, call: ast.Call, live_after: set[str]) -> None:
        """``with pl.spmd(n):`` / ``pl.spmd(core_num=n, sync_start=False)`` in an Orchestration
        function: every kernel call (and ``pl.at`` scope) of the body launches as one task of ``n``
        blocks, each block on its own core reading its index with ``pl.tile.get_block_idx()`` (the calls
        carry ``pl.block_num`` and, when set, ``pl.sync_start``). A body that launches nothing is
        rejected (every block would do the same work)."""
        self.spmd = self.spmd_launch(call)
        saved = self.frames
        self.frames = [*saved, Frame("spmd")]
        try:
            self.stmts(s.body, live_after)
        finally:
            self.frames = saved
            launch, self.spmd = self.spmd, None
        if not launch.calls:
            raise self.fail(InvalidOperationError, "a 'with pl.spmd(...)' body must launch a kernel (call one)", s)

    def spmd_loop(self: FunctionBuilder, s: ast.For, call: ast.Call, live_after: set[str]) -> None:
        """``for i in pl.spmd(n):``: the body is one device scope (a ``pl.at(level=CORE_GROUP)``,
        outlined into a kernel) launched as ``n`` blocks, ``i`` bound to ``pl.tile.get_block_idx()``."""
        if not isinstance(s.target, ast.Name):
            raise self.fail(UnsupportedFeatureError, "the pl.spmd loop variable must be a name", s.target)
        if s.orelse:
            raise self.fail(UnsupportedFeatureError, "for ... else is not supported", s)
        launch = self.spmd_launch(call)
        block, scope = Block(), Scope(self.scope)
        idx = TileGetBlockIdxOp.build(result_types=[IndexType()])
        idx.location = self.src.loc(s.target)
        block.add_op(idx)
        set_name(idx.results[0], s.target.id)
        scope.assign(s.target.id, idx.results[0])
        self.at_depth += 1
        try:
            self.region("at", block, scope, s.body, live_after)
        finally:
            self.at_depth -= 1
        outs = [n for n in assigned_names(s.body) if n in live_after and n in scope.vars and n != s.target.id]
        vals = [scope.vars[n] for n in outs]
        y = YieldOp(*vals)
        y.location = self.src.loc(s)
        block.add_op(y)
        op = AtOp(Level.CORE_GROUP, Region(block), [v.type for v in vals], launch.name_hint)
        mark_spmd(op, launch)
        self.emit(op, s)
        for n, r in zip(outs, op.res, strict=False):
            set_name(r, n)
            self.scope.assign(n, r)


def mark_spmd(op: Operation, launch: SpmdLaunch) -> None:
    """``op`` (a kernel call or a ``pl.at`` scope) launches as ``launch.block_num`` blocks."""
    op.attributes["pl.block_num"] = IntegerAttr(launch.block_num, i64)
    if launch.sync_start:
        op.attributes["pl.sync_start"] = IntegerAttr.from_bool(True)
    launch.calls += 1


@dataclass
class SpmdLaunch:
    """The ``with pl.spmd(...)`` scope being built: its block count and the kernel calls it marked."""

    block_num: int
    sync_start: bool = False
    calls: int = 0
    name_hint: str | None = None


def mark_runtime_scope(f: func.FuncOp) -> None:
    """Functions whose body was ``with pl.scope():`` (printed dumps)."""
    f.attributes["pl.runtime_scope"] = UnitAttr()


def _task_dtype(call: ast.Call) -> bool:
    """``pl.array.create(n, pl.TASK_ID)`` (an array of task handles, not of scalars)."""
    dtype = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
    return dtype is not None and dotted(dtype) == "pl.TASK_ID"


def write_root(v: SSAValue, block: Block, inits: list[SSAValue]) -> SSAValue | None:
    """The value from outside the loop whose buffer ``v`` is written into in place
    (following in-place writes, loop-carried tensors and inner loops' results), or None."""
    while True:
        if isinstance(v, BlockArgument):
            if v.block is block:
                k = v.index - 1
                return inits[k] if 0 <= k < len(inits) else None
            return None if _within(v.block, block) else v
        assert isinstance(v, OpResult)
        op = v.op
        if not _within(op.parent_block(), block):
            return v
        if isinstance(op, scf.ForOp):
            v = op.iter_args[v.index]
            continue
        field_name = alias_operand(op)
        if field_name is None or is_view(op):
            return None
        v = getattr(op, field_name)


def _within(b: Block | None, block: Block) -> bool:
    """``b`` is ``block`` or nested in it."""
    while b is not None:
        if b is block:
            return True
        parent = b.parent_op()
        b = parent.parent_block() if parent is not None else None
    return False


def static_trip_count(bounds: list[SSAValue]) -> int | None:
    """The trip count of ``range(start, stop, step)`` when all three are constants."""
    vals = []
    for b in bounds:
        if not (isinstance(b, OpResult) and isinstance(b.op, arith.ConstantOp)):
            return None
        vals.append(b.op.value.value.data)  # type: ignore[union-attr]
    start, stop, step = vals
    return len(range(start, stop, step)) if step else None
