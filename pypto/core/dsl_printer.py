"""The ``pl`` DSL printer: a program held as xDSL IR -> upstream-style Python text.

``print_program(module, explicit)`` writes the form upstream PyPTO prints for
``as_python()`` and pass dumps (docs/ir.md, pl-dsl.md section 4): a header, one
``@pl.program`` class, functions in dependency order (callees first, otherwise
by name), annotated assignments, nested calls for unnamed single-use values,
literals for unnamed constants, loops in the plain rebinding or the explicit
``init_values``/``pl.yield_`` form, and ``with pl.at(...)`` scopes. Naming
decisions live in :mod:`pypto.core.dsl_names`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, FileLineColLoc, FloatAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from pypto.diagnostics import Diagnostic, DiagnosticError, Severity, op_span
from pypto.dialects.dtypes import dtype_name, is_dtype
from pypto.dialects.enums import DEFAULT_ROLE, ForKind, FunctionType, Role
from pypto.dialects.op_base import ArgKind, PLOp
from pypto.dialects.program import (
    EARLY_RESOLVE,
    MANUAL_DEP,
    NO_DEP_ARGS,
    AtOp,
    call_dump_indices,
    for_kind,
    for_stage,
    function_level,
    function_role,
    function_type,
    param_directions,
    task_handle,
    user_deps,
)
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import DYNAMIC, MemRefAttr, PtrType, TensorType, TileType, TileViewAttr
from pypto.utils.ir_fingerprint import fingerprint

from .dsl_names import FunctionAnalysis, const_int, is_literal, py_name

# Python operator precedence, loosest to tightest.
OR, AND, NOT, CMP, BOR, BXOR, BAND, SHIFT, ADD, MUL, UNARY, POW, ATOM = range(13)

Expr = tuple[str, int]

_BINARY: dict[str, tuple[str, int]] = {
    "arith.addi": ("+", ADD),
    "arith.addf": ("+", ADD),
    "arith.subi": ("-", ADD),
    "arith.subf": ("-", ADD),
    "arith.muli": ("*", MUL),
    "arith.mulf": ("*", MUL),
    "arith.divf": ("/", MUL),
    "arith.floordivsi": ("//", MUL),
    "arith.divsi": ("//", MUL),
    "arith.remsi": ("%", MUL),
    "arith.andi": ("&", BAND),
    "arith.ori": ("|", BOR),
    "arith.xori": ("^", BXOR),
    "arith.shli": ("<<", SHIFT),
    "arith.shrsi": (">>", SHIFT),
}
_MINMAX = {
    "arith.minsi": "pl.min",
    "arith.minui": "pl.min",
    "arith.minimumf": "pl.min",
    "arith.minnumf": "pl.min",
    "arith.maxsi": "pl.max",
    "arith.maxui": "pl.max",
    "arith.maximumf": "pl.max",
    "arith.maxnumf": "pl.max",
}
_CASTS = (
    "arith.index_cast",
    "arith.sitofp",
    "arith.fptosi",
    "arith.extf",
    "arith.truncf",
    "arith.extsi",
    "arith.trunci",
)
# arith.cmpi / arith.cmpf predicate number -> Python operator.
_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
_CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=", 6: "!=", 8: "==", 9: ">", 10: ">=", 11: "<", 12: "<=", 13: "!="}
_LOOP_FN = {
    ForKind.Sequential: "range",
    ForKind.Parallel: "parallel",
    ForKind.Unroll: "unroll",
    ForKind.Pipeline: "pipeline",
}


# ---- types ------------------------------------------------------------------------


def _dims(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join("-1" if d == DYNAMIC else str(d) for d in shape) + "]"


def _memref(m: MemRefAttr, quoted: bool) -> str:
    base = json.dumps(m.base.data) if quoted else m.base.data
    return f"pl.MemRef({base}, pl.const({m.offset.data}, pl.INT64), {m.size.data})"


def _view(v: TileViewAttr) -> str:
    return (
        f"pl.TileView(blayout=pl.TileLayout.{v.blayout.data.value}, "
        f"slayout=pl.TileLayout.{v.slayout.data.value}, fractal={v.fractal.data})"
    )


def type_str(t: Attribute, explicit: bool = False) -> str:
    """A type as the DSL annotates it (``pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec]``)."""
    if isinstance(t, TensorType):
        parts = [_dims(t.get_shape()), f"pl.{dtype_name(t.element_type)}"]
        if (m := t.get_memref()) is not None:
            parts.append(_memref(m, quoted=True))
        return f"pl.Tensor[{', '.join(parts)}]"
    if isinstance(t, TileType):
        parts = [_dims(t.get_shape()), f"pl.{dtype_name(t.element_type)}"]
        if (m := t.get_memref()) is not None:
            parts.append(_memref(m, quoted=False))
        parts.append(f"pl.Mem.{t.memory_space.value}")
        view = t.effective_view() if explicit else t.get_view()
        if view is not None:
            parts.append(_view(view))
        return f"pl.Tile[{', '.join(parts)}]"
    if isinstance(t, PtrType):
        return "pl.Ptr"
    if is_dtype(t):
        return f"pl.Scalar[pl.{dtype_name(t)}]"
    return str(t)


def literal(op: arith.ConstantOp) -> Expr:
    """An ``arith.constant`` as a DSL literal: ``0``, ``2.0``, ``True``, ``pl.const(42, pl.INT32)``."""
    val, t = op.value, op.result.type
    if isinstance(val, IntegerAttr):
        n = val.value.data
        if isinstance(t, IntegerType) and t.width.data == 1:
            return ("True" if n else "False"), ATOM
        if dtype_name(t) == "INDEX":
            return str(n), (UNARY if n < 0 else ATOM)
        return f"pl.const({n}, pl.{dtype_name(t)})", ATOM
    if isinstance(val, FloatAttr):
        x = float(val.value.data)
        text = repr(x) if math.isfinite(x) else f"float({str(x)!r})"
        if dtype_name(t) == "FP32":
            return text, (UNARY if x < 0 or text.startswith("-") else ATOM)
        return f"pl.const({text}, pl.{dtype_name(t)})", ATOM
    return str(val), ATOM


# ---- program ------------------------------------------------------------------------


def _callees(f: func.FuncOp) -> list[str]:
    return sorted({op.callee.root_reference.data for op in f.walk() if isinstance(op, func.CallOp)})


def function_order(
    funcs: list[func.FuncOp], callees: Callable[[func.FuncOp], list[str]] = _callees
) -> list[func.FuncOp]:
    """Callees before callers, otherwise by name (upstream's TopologicalSortFunctions); ``callees``
    gives a function's callee names, sorted."""
    by_name = {f.sym_name.data: f for f in sorted(funcs, key=lambda f: f.sym_name.data)}
    done: set[str] = set()
    order: list[func.FuncOp] = []

    def visit(name: str, path: set[str]) -> bool:
        if name in done or name not in by_name:
            return True
        if name in path:
            return False
        path.add(name)
        for callee in callees(by_name[name]):
            if not visit(callee, path):
                return False
        path.discard(name)
        done.add(name)
        order.append(by_name[name])
        return True

    for name in by_name:
        if not visit(name, set()):
            return list(by_name.values())
    return order


def op_loc(op: Operation) -> str | None:
    """``file:line:col`` of an op's DSL location, None when it has none."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def _names_pld(op: Operation) -> bool:
    """Whether ``op`` or an op inside it is a multi-chip ``pld.`` op."""
    return any(o.name.startswith("pld.") for o in op.walk())


class FunctionTextCache:
    """The printed lines of each function, kept while the function is unchanged (its
    :func:`~pypto.utils.ir_fingerprint.fingerprint` equal): a function's text depends only on the
    function itself, so printing a program after a pass that changed one function prints only that
    one (the pass dumps). So are the facts the program printer reads from a function (its callees,
    whether it holds a ``pld.`` op)."""

    def __init__(self) -> None:
        self._texts: dict[func.FuncOp, tuple[list[object], bool, bool, list[str], list[list[str]]]] = {}
        self._facts: dict[func.FuncOp, tuple[list[object], list[str], bool]] = {}

    def facts(self, f: func.FuncOp, now: list[object] | None = None) -> tuple[list[str], bool]:
        """``f``'s callee names (sorted) and whether it holds a ``pld.`` op (``now``: its fingerprint,
        when the caller has it)."""
        now = fingerprint(f) if now is None else now
        got = self._facts.get(f)
        if got is None or got[0] != now:
            got = self._facts[f] = (now, _callees(f), _names_pld(f))
        return got[1], got[2]

    def lines(
        self, f: func.FuncOp, explicit: bool, concise: bool, now: list[object] | None = None
    ) -> tuple[list[str], list[list[str]]]:
        """``f``'s lines and their locations, printed or as printed last time (``now``: its
        fingerprint, when the caller has it)."""
        now = fingerprint(f) if now is None else now
        got = self._texts.get(f)
        if got is not None and got[1] == explicit and got[2] == concise and got[0] == now:
            return got[3], got[4]
        printer = _FunctionPrinter(f, explicit, concise)
        lines = printer.lines()
        self._texts[f] = (now, explicit, concise, lines, printer.locs)
        return lines, printer.locs


def print_program_locs(
    module: ModuleOp, explicit: bool = False, concise: bool = False, cache: FunctionTextCache | None = None
) -> tuple[str, list[list[str]]]:
    """The ``pl`` DSL text of a program module and its line map: per printed line,
    the DSL locations (``file:line:col``) of the ops printed on it (``explicit``, ``concise``: as
    :func:`print_program`; ``cache`` reuses the text of functions unchanged since it printed them)."""
    name = module.sym_name.data if module.sym_name else ""
    lines = [f"# pypto.program: {name}" if name else "# pypto.program", "import pypto.language as pl", ""]
    for op in module.ops:
        if not isinstance(op, func.FuncOp):  # a program class holds only functions: never drop the op silently
            raise DiagnosticError(
                Diagnostic(
                    Severity.ERROR,
                    f"'{op.name}' at the top level of the module cannot be printed as pl DSL: "
                    "a pl program holds only functions (func.func)",
                    op_span(op),
                )
            )
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if cache is not None:
        now = {f: fingerprint(f) for f in funcs}
        facts = {f: cache.facts(f, now[f]) for f in funcs}
        pld = any(has for _, has in facts.values())
        order = function_order(funcs, lambda f: facts[f][0])
    else:
        pld = _names_pld(module)
        order = function_order(funcs)
    if pld:  # multi-chip ops: pypto.language.distributed
        lines.insert(2, "import pypto.language.distributed as pld")
    lines += ["@pl.program", f"class {name or 'Program'}:"]
    locs: list[list[str]] = [[] for _ in lines]
    for f in order:
        if cache is not None:
            f_lines, f_locs = cache.lines(f, explicit, concise, now=now[f])
        else:
            printer = _FunctionPrinter(f, explicit, concise)
            f_lines, f_locs = printer.lines(), printer.locs
        lines += f_lines
        locs += f_locs
    return "\n".join(lines) + "\n", locs


def print_program(module: ModuleOp, explicit: bool = False, concise: bool = False) -> str:
    """The ``pl`` DSL text of a program module; ``explicit`` prints every tile's TileView,
    ``concise`` drops the type annotations of assignments (parameters and returns keep theirs)."""
    return print_program_locs(module, explicit, concise)[0]


def print_function(f: func.FuncOp, explicit: bool = False) -> str:
    """One function as it appears inside the program class (indented by 4)."""
    return "\n".join(_FunctionPrinter(f, explicit).lines()) + "\n"


def decorator(f: func.FuncOp) -> str:
    kind = function_type(f)
    parts = [f"type=pl.FunctionType.{kind.value}"] if kind is not FunctionType.Opaque else []
    if (level := function_level(f)) is not None:
        parts.append(f"level=pl.Level.{level.value}")
    if (role := function_role(f)) is not None:
        parts.append(f"role=pl.Role.{role.value}")
    return "@pl.function" + (f"({', '.join(parts)})" if parts else "")


def takes_self(f: func.FuncOp) -> bool:
    """Upstream drops ``self`` for SubWorker functions (InCore, AIC, AIV, Group)."""
    kind = function_type(f)
    role = function_role(f) or DEFAULT_ROLE.get(kind)
    return role is not Role.SubWorker


class _FunctionPrinter:
    """Prints one ``func.func``: analysis first, then one walk that names and prints."""

    def __init__(self, f: func.FuncOp, explicit: bool, concise: bool = False):
        self.f = f
        self.explicit = explicit
        self.concise = concise
        body = f.body.block
        self.a = FunctionAnalysis(body)
        self.out: list[str] = []
        self.locs: list[list[str]] = []  # per line of out: locations of the ops printed on it
        self._pending: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.current: dict[str, SSAValue] = {}
        self.taken: set[str] = {"pl", "self"}
        self._suffixes: dict[str | None, int] = {}  # _fresh: base -> the suffix it found last
        for op in self.a.liveness.ops():
            for v in op.results:
                if v.name_hint:
                    self.taken.add(py_name(v.name_hint))
            if isinstance(op, TileAllocOp):
                self.taken.add(py_name(op.base.data))
            for region in op.regions:
                for b in region.blocks:
                    self.taken.update(py_name(arg.name_hint) for arg in b.args if arg.name_hint)
        self.taken.update(py_name(arg.name_hint) for arg in body.args if arg.name_hint)

    # ---- names --------------------------------------------------------------------

    def _fresh(self, base: str | None) -> str:
        """The first free ``<base>_<n>`` (n >= 1; ``v<n>``, n >= 0, without a base). Names are never given
        back, so the search goes on from the suffix found last for ``base``: linear in the variables
        sharing a hint, not quadratic."""
        n = self._suffixes.get(base, 0 if base is None else 1)
        stem = "v" if base is None else f"{base}_"
        while f"{stem}{n}" in self.taken:
            n += 1
        self._suffixes[base] = n
        return f"{stem}{n}"

    def define(self, v: SSAValue, pos: int, group: set[str] | None = None, hint: str | None = None) -> str:
        """Bind ``v``'s variable at ``pos`` and return its name.

        The name is the class hint, reused from an earlier variable only for an
        in-place update (``x = f(x, ...)``: the old variable is dead and read by
        ``v``'s op); otherwise -- a live holder, a different dead holder (upstream
        suffixes distinct variables sharing a hint) or a name bound in the same
        statement -- a fresh ``<hint>_<n>``."""
        rep = self.a.find(v)
        if rep in self.names:
            name = self.names[rep]
        else:
            h = hint or self.a.class_hint(rep)
            desired = py_name(h) if h else None
            holder = self.current.get(desired) if desired else None
            clash = (
                holder is not None
                and holder is not rep
                and (self.a.live_after(holder, pos) or not self._reads(v, holder))
            )
            if desired is None or clash or (group is not None and desired in group):
                name = self._fresh(desired)
            else:
                name = desired
            self.names[rep] = name
            self.taken.add(name)
        self.current[name] = rep
        if group is not None:
            group.add(name)
        return name

    def _reads(self, v: SSAValue, holder: SSAValue) -> bool:
        """Whether ``v``'s defining op reads the variable ``holder``."""
        return isinstance(v, OpResult) and any(self.a.find(o) is holder for o in v.owner.operands)

    def ref(self, v: SSAValue) -> Expr:
        """The expression reading ``v``: a literal, a nested call or a name."""
        if is_literal(v):
            assert isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp)
            return literal(v.owner)
        if isinstance(v, OpResult) and v.owner in self.a.inline:
            return self.expr(v.owner)
        rep = self.a.find(v)
        if rep not in self.names:  # use before def (malformed IR): still print something stable
            self.define(v, -2)
        return self.names[rep], ATOM

    def s(self, v: SSAValue) -> str:
        return self.ref(v)[0]

    # ---- expressions ----------------------------------------------------------------

    def _operand(self, v: SSAValue, prec: int, left: bool) -> str:
        text, p = self.ref(v)
        if p < prec or (p == prec and (not left or prec == CMP)):
            return f"({text})"
        return text

    def _infix(self, op: Operation, sym: str, prec: int) -> Expr:
        lhs, rhs = op.operands
        return f"{self._operand(lhs, prec, True)} {sym} {self._operand(rhs, prec, False)}", prec

    def at(self, op: Operation) -> None:
        """Record ``op``'s location for the next printed line."""
        if (loc := op_loc(op)) is not None and loc not in self._pending:
            self._pending.append(loc)

    def expr(self, op: Operation) -> Expr:
        """The DSL expression computing ``op``'s result(s)."""
        self.at(op)
        if isinstance(op, PLOp):
            return self._pl_call(op), ATOM
        name = op.name
        if isinstance(op, arith.ConstantOp):
            return literal(op)
        if name in _BINARY:
            sym, prec = _BINARY[name]
            if sym in ("&", "|") and isinstance(op.results[0].type, IntegerType) and op.results[0].type.width.data == 1:
                sym, prec = ("and", AND) if sym == "&" else ("or", OR)
            return self._infix(op, sym, prec)
        if isinstance(op, arith.CmpiOp) and (sym := _CMPI.get(op.predicate.value.data)):
            return self._infix(op, sym, CMP)
        if isinstance(op, arith.CmpfOp) and (sym := _CMPF.get(op.predicate.value.data)):
            return self._infix(op, sym, CMP)
        if isinstance(op, arith.NegfOp):
            return "-" + self._operand(op.operands[0], UNARY, False), UNARY
        if name in _MINMAX:
            return f"{_MINMAX[name]}({self.s(op.operands[0])}, {self.s(op.operands[1])})", ATOM
        if name in _CASTS:
            return f"pl.cast({self.s(op.operands[0])}, pl.{dtype_name(op.results[0].type)})", ATOM
        if isinstance(op, func.CallOp):
            args = [self.s(v) for v in op.arguments]
            marks = [args[i] for i in call_dump_indices(op) if i < len(args)]
            attrs: list[str] = []
            if marks:  # pl.dump_tag / dumps= marks, in upstream's printed form
                attrs.append(f'"dump_vars": [{", ".join(marks)}]')
            if (handle := task_handle(op)) is not None:  # pl.submit / an outlined ``pl.at(...) as t``
                attrs.append(f'"task_handle": {json.dumps(handle)}')
            if deps := user_deps(op):
                attrs.append(f'"user_deps": [{", ".join(json.dumps(d) for d in deps)}]')
            attrs += [f'"{key[3:]}": True' for key in (MANUAL_DEP, EARLY_RESOLVE) if key in op.attributes]
            if attrs:
                args.append(f"attrs={{{', '.join(attrs)}}}")
            return f"self.{op.callee.root_reference.data}({', '.join(args)})", ATOM
        return f"{name}({', '.join(self.s(v) for v in op.operands)})", ATOM

    def _pl_call(self, op: PLOp) -> str:
        args: list[str] = []
        dyn = list(getattr(op, op.DYN_SIZES)) if op.DYN_SIZES else []
        for arg in op.DSL_ARGS:
            text: str | None = None
            if arg.name == op.DYN_SIZES:
                continue  # written inline in the shape
            if dyn and arg.name == "shape":
                sizes = iter(dyn)
                text = "[" + ", ".join(self.s(next(sizes)) if d == DYNAMIC else str(d) for d in op.properties["shape"].get_values()) + "]"  # type: ignore[attr-defined]
            elif arg.kind is ArgKind.VALUE:
                text = self.s(getattr(op, arg.name))
            elif arg.kind is ArgKind.OPT_VALUE:
                v = getattr(op, arg.name)
                text = None if v is None else self.s(v)
            elif arg.kind is ArgKind.VALUE_LIST:
                vals = list(getattr(op, arg.name))
                text = None if (not vals and not arg.required) else "[" + ", ".join(self.s(v) for v in vals) + "]"
            else:
                assert arg.codec is not None
                attr = op.properties.get(arg.name)
                if attr is None and arg.always and not arg.required and arg.default is not None:
                    attr = arg.codec.to_attr(arg.default)
                if attr is not None and (arg.required or arg.always or arg.codec.from_attr(attr) != arg.default):
                    text = arg.codec.to_dsl(attr)
            if text is not None:
                args.append(f"{arg.name}={text}" if arg.keyword else text)
        return f"{op.name}({', '.join(args)})"

    # ---- statements -----------------------------------------------------------------

    def emit(self, indent: int, text: str) -> None:
        self.out.append("    " * indent + text)
        self.locs.append(self._pending)
        self._pending = []

    def lines(self) -> list[str]:
        f = self.f
        params: list[str] = ["self"] if takes_self(f) else []
        group: set[str] = set(params)
        dirs = param_directions(f)
        for arg, d in zip(f.body.block.args, dirs, strict=True):
            t = type_str(arg.type, self.explicit)
            if d.value != "In":
                t = f"pl.{d.value}[{t}]"
            params.append(f"{self.define(arg, -1, group)}: {t}")
        # Upstream writes return annotations without a tensor's MemRef; the
        # front end takes the returned value's full type back from the body.
        outs = [
            type_str(t.with_memref(None) if isinstance(t, TensorType) else t, self.explicit)
            for t in f.function_type.outputs.data
        ]
        ret = "" if not outs else f" -> {outs[0]}" if len(outs) == 1 else f" -> tuple[{', '.join(outs)}]"
        self.emit(1, decorator(f))
        self.at(f)
        self.emit(1, f"def {f.sym_name.data}({', '.join(params)}){ret}:")
        self.block(f.body.block, 2, top=True)
        return self.out

    def block(self, block: Block, indent: int, top: bool = False) -> None:
        """Print a block's ops (terminators are handled by the enclosing construct)."""
        before = len(self.out)
        for op in block.ops:
            self.statement(op, indent, top)
        if len(self.out) == before:
            self.emit(indent, "pass")

    def statement(self, op: Operation, indent: int, top: bool) -> None:
        a = self.a
        if op in a.inline or (isinstance(op, arith.ConstantOp) and not op.result.name_hint):
            return
        if isinstance(op, func.ReturnOp):
            if op.operands or not (top and op is op.parent_block().last_op):  # type: ignore[union-attr]
                self.at(op)
                self.emit(indent, ("return " + ", ".join(self.s(v) for v in op.operands)).rstrip())
            return
        if isinstance(op, (scf.YieldOp,)) or op.name == "pl.yield":
            return
        if isinstance(op, scf.ForOp):
            return self.for_loop(op, indent)
        if isinstance(op, AtOp):
            return self.at_scope(op, indent)
        if isinstance(op, scf.IfOp):
            return self.if_stmt(op, indent)
        if isinstance(op, func.CallOp) and isinstance(n := op.attributes.get("pl.block_num"), IntegerAttr):
            sync = ", sync_start=True" if "pl.sync_start" in op.attributes else ""  # an SPMD launch
            self.emit(indent, f"with pl.spmd({n.value.data}{sync}):")
            indent += 1
        pos = 2 * a.liveness.index(op)
        if isinstance(op, TileAllocOp):
            name = self.define(op.result, pos, hint=op.base.data)
            self.emit(indent, f"{name}: pl.Ptr = {self.expr(op)[0]}")
            return
        results = list(op.results)
        if all(not r.name_hint and a.use_count.get(r, 0) == 0 for r in results):
            self.emit(indent, self.expr(op)[0])
            return
        rhs = self.expr(op)[0]
        if len(results) == 1:
            self.emit(indent, f"{self.define(results[0], pos)}{self.annot(results[0])} = {rhs}")
        else:
            group: set[str] = set()
            targets = [self.define(r, pos, group) for r in results]
            self.emit(indent, f"{', '.join(targets)} = {rhs}")

    def annot(self, value: SSAValue) -> str:
        """``: <type>`` after an assignment target (nothing when concise)."""
        return "" if self.concise else f": {type_str(value.type, self.explicit)}"

    def _yield_line(self, indent: int, results: list[SSAValue], term: Operation, pos: int) -> None:
        self.at(term)
        values = list(term.operands)
        args = ", ".join(self.s(v) for v in values)
        group: set[str] = set()
        targets = [self.define(r, pos, group) for r in results]
        if len(results) == 1:
            self.emit(indent, f"{targets[0]}{self.annot(results[0])} = pl.yield_({args})")
        else:
            self.emit(indent, f"{', '.join(targets)} = pl.yield_({args})")

    def for_loop(self, op: scf.ForOp, indent: int) -> None:
        a = self.a
        body = op.body.block
        plain = op in a.plain_loops
        lb, ub, step = op.lb, op.ub, op.step
        if const_int(step) == 1:
            bounds = [self.s(ub)] if const_int(lb) == 0 else [self.s(lb), self.s(ub)]
        else:
            bounds = [self.s(lb), self.s(ub), self.s(step)]
        kind = for_kind(op)
        if kind is ForKind.Pipeline:
            bounds.append(f"stage={for_stage(op) or 1}")  # no stage: LowerPipelineLoops reads 1
        pos = 2 * a.liveness.index(op)
        if op.iter_args and not plain:
            inits = [self.s(v) for v in op.iter_args]
            bounds.append(f"init_values=({', '.join(inits)}{',' if len(inits) == 1 else ''})")
        group: set[str] = set()
        target = self.define(body.args[0], pos, group)
        if op.iter_args and not plain:
            carried = [self.define(v, pos, group) for v in body.args[1:]]
            target += f", ({', '.join(carried)}{',' if len(carried) == 1 else ''})"
        self.at(op)
        self.emit(indent, f"for {target} in pl.{_LOOP_FN[kind]}({', '.join(bounds)}):")
        before = len(self.out)
        for inner in body.ops:
            self.statement(inner, indent + 1, False)
        term = body.last_op
        if op.res and not plain:
            assert term is not None
            self._yield_line(indent + 1, list(op.res), term, 2 * a.liveness.end_index(op))
        elif plain:
            for r in op.res:
                self.define(r, 2 * a.liveness.end_index(op))
        if len(self.out) == before:
            self.emit(indent + 1, "pass")

    def at_scope(self, op: AtOp, indent: int) -> None:
        if isinstance(n := op.attributes.get("pl.block_num"), IntegerAttr):  # a scope launched as SPMD blocks
            sync = ", sync_start=True" if "pl.sync_start" in op.attributes else ""
            self.emit(indent, f"with pl.spmd({n.value.data}{sync}):")
            indent += 1
        args = f"level=pl.Level.{op.scope_level.value}"
        if op.name_hint is not None:
            args += f", name_hint={json.dumps(op.name_hint.data)}"
        if op.dumps:
            args += f", dumps=[{', '.join(self.s(v) for v in op.dumps)}]"
        if deps := user_deps(op):
            args += f", deps=[{', '.join(deps)}]"
        if isinstance(no_dep := op.attributes.get(NO_DEP_ARGS), ArrayAttr):
            args += f", no_dep_args=[{', '.join(n.data for n in no_dep.data if isinstance(n, StringAttr))}]"
        if EARLY_RESOLVE in op.attributes:
            args += ", allow_early_resolve=True"
        self.at(op)
        handle = task_handle(op)
        self.emit(indent, f"with pl.at({args})" + (f" as {handle}:" if handle else ":"))
        before = len(self.out)
        body = op.block
        for inner in body.ops:
            self.statement(inner, indent + 1, False)
        term = body.last_op
        assert term is not None
        pos = 2 * self.a.liveness.end_index(op)
        rebind = self.a.rebind.get(op, [])
        for i, r in enumerate(op.res):
            if i in rebind:
                rhs = self.s(term.operands[i])
                self.emit(indent + 1, f"{self.define(r, pos)}{self.annot(r)} = {rhs}")
            else:
                self.define(r, pos)
        if len(self.out) == before:
            self.emit(indent + 1, "pass")

    def if_stmt(self, op: scf.IfOp, indent: int) -> None:
        cond = self.s(op.cond)
        self.at(op)
        self.emit(indent, f"if {cond}:")
        pos = 2 * self.a.liveness.end_index(op)
        for k, region in enumerate((op.true_region, op.false_region)):
            if not region.blocks:
                continue
            body = region.block
            if k == 1:
                if not op.output and all(isinstance(o, scf.YieldOp) for o in body.ops):
                    continue
                self.emit(indent, "else:")
            before = len(self.out)
            for inner in body.ops:
                self.statement(inner, indent + 1, False)
            term = body.last_op
            if op.output and term is not None:
                self._yield_line(indent + 1, list(op.output), term, pos)
            if len(self.out) == before:
                self.emit(indent + 1, "pass")


__all__ = ["print_program", "print_program_locs", "op_loc", "print_function", "type_str", "function_order"]
