"""State of one function's C++ emission: value names, output lines, views, tile placement.

Handlers (one module per op family) are registered by op class with :func:`handles` and
called as ``handler(ctx, op)`` (:func:`handler_of`: the modules of ``LAZY_HANDLER_MODULES``, whose op
classes a typical kernel never builds, are imported on the first op no loaded module handles); they read operand names with :meth:`FuncContext.name`,
bind results with :meth:`FuncContext.define` and write lines with :meth:`FuncContext.line`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from pypto.ptoas.dialect.attrs import AddressSpace
from pypto.ptoas.limits import alignment, capacity

from .errors import EmitError

Handler = Callable[["FuncContext", Operation], None]
HANDLERS: dict[type[Operation], Handler] = {}
LAZY_HANDLER_MODULES = (
    "pypto.ptoas.emitc.isa",
    "pypto.ptoas.emitc.memref",
    "pypto.ptoas.emitc.comm",
    "pypto.ptoas.emitc.pipes",
)
"""Handler modules imported on first need (the ISA additions, memref.alloc, the cross-rank comm ops,
the FIFO / cube-vector pipe ops:
importing them builds op classes a single-chip kernel never uses)."""


def load_all_handlers() -> dict[type[Operation], Handler]:
    """Every handler (the lazily registered modules imported too)."""
    for module in LAZY_HANDLER_MODULES:
        importlib.import_module(module)
    return HANDLERS


def handler_of(op: Operation) -> Handler | None:
    """The handler registered for ``op``'s class, importing the lazy handler modules on a miss."""
    handler = HANDLERS.get(type(op))
    return handler if handler is not None else load_all_handlers().get(type(op))


def handles(*ops: type[Operation]) -> Callable[[Handler], Handler]:
    """Register a handler for these op classes."""

    def register(fn: Handler) -> Handler:
        for cls in ops:
            HANDLERS[cls] = fn
        return fn

    return register


@dataclass
class TilePlacer:
    """Addresses for tiles that come without one (no plan-memory ran): a bump pointer per location.

    Starts above every constant ``addr`` already used in the function; no reuse, so a function
    whose tiles do not fit side by side needs plan-memory.
    """

    next_free: dict[AddressSpace, int] = field(default_factory=dict)

    def reserve(self, loc: AddressSpace, end: int) -> None:
        """Never place below ``end`` in ``loc``."""
        self.next_free[loc] = max(self.next_free.get(loc, 0), end)

    def place(self, loc: AddressSpace, size: int, op: Operation) -> int:
        """The byte address of a new ``size``-byte tile in ``loc``."""
        align = alignment(loc.value)
        addr = -(-self.next_free.get(loc, 0) // align) * align
        cap = capacity(loc.value) or 0
        if addr + size > cap:
            raise EmitError(
                f"tiles without addresses need {addr + size} bytes of {loc.value}, more than its "
                f"{cap} bytes (a2a3); plan memory first (memory_planner=PTOAS)",
                op,
            )
        self.next_free[loc] = addr + size
        return addr


@dataclass
class ViewInfo:
    """A ``!pto.tensor_view``: its GM pointer expression, shape and strides (expressions and constants)."""

    ptr: str
    shape: list[str]
    shape_const: list[int | None]
    strides: list[str]
    stride_const: list[int | None]
    layout: str


class FuncContext:
    """Emission state of one ``func.func``."""

    def __init__(self, first_id: int = 1) -> None:
        self.lines: list[str] = []
        self.hoisted: list[str] = []
        self.indent = 1
        self.names: dict[SSAValue, str] = {}
        self.next_id = first_id
        self.views: dict[SSAValue, ViewInfo] = {}
        self.placer = TilePlacer()
        self.yield_targets: list[list[str] | None] = []
        self.last_loc: str | None = None
        self.pending_loc: str | None = None
        self.pipes: dict[SSAValue | int, tuple[str, str]] = {}
        """FIFO pipes: a ``!pto.pipe`` value (or, once an ``aic/aiv_initialize_pipe`` was lowered,
        a direction: 1 c2v, 2 v2c) -> its ``TPipe<...>`` token and C++ name (``pipes.py``)."""

    # ---------------------------------------------------------------- names
    def fresh(self, prefix: str = "v") -> str:
        """A new C++ variable name ``vN``."""
        name = f"{prefix}{self.next_id}"
        self.next_id += 1
        return name

    def define(self, value: SSAValue, name: str | None = None) -> str:
        """Name a value (a fresh ``vN`` unless given)."""
        name = name or self.fresh()
        self.names[value] = name
        return name

    def name(self, value: SSAValue, op: Operation | None = None) -> str:
        """The C++ expression of a value defined earlier."""
        if value not in self.names:
            hint = f" %{value.name_hint}" if value.name_hint else ""
            raise EmitError(f"uses a value{hint} that has no C++ name (its producer was not emitted)", op)
        return self.names[value]

    @staticmethod
    def const_int(value: SSAValue) -> int | None:
        """The integer of an ``arith.constant`` value, None otherwise."""
        owner = value.owner
        if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return None

    # ---------------------------------------------------------------- output
    def line(self, text: str = "") -> None:
        """One output line at the current indentation (preprocessor lines unindented)."""
        if self.pending_loc is not None:
            loc, self.pending_loc = self.pending_loc, None
            self.last_loc = loc
            self.line(f"// loc: {loc}")
        if text.startswith("#"):
            self.lines.append(text)
        else:
            self.lines.append("    " * self.indent + text if text else "")

    def hoist(self, ctype: str, value: str) -> str:
        """A ``const`` of the function's prologue (PTOAS's EmitC constants: enum arguments
        such as ``RoundMode::CAST_RINT`` come before the body); returns its name."""
        name = self.fresh()
        self.hoisted.append(f"    const {ctype} {name} = {value};")
        return name

    def comment(self, value: SSAValue) -> None:
        """``// pto: %name`` before the declaration of a named value."""
        if value.name_hint:
            self.line(f"// pto: %{value.name_hint}")

    # ---------------------------------------------------------------- walking
    def emit_block(self, block: Block, skip_terminator: bool = False) -> None:
        """Emit the ops of a block in order."""
        ops = list(block.ops)
        if skip_terminator and ops:
            ops = ops[:-1]
        for op in ops:
            self.emit_op(op)

    def loc_comment(self, op: Operation) -> None:
        """``// loc: file:line:col`` before the first C++ line of an op whose ``.pto`` location
        differs from the last one written (the source-line lens maps C++ lines back to DSL lines)."""
        loc = op.location
        if not isinstance(loc, FileLineColLoc):
            return
        text = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        self.pending_loc = None if text == self.last_loc else text

    def emit_op(self, op: Operation) -> None:
        """Emit one op through its registered handler."""
        handler = handler_of(op)
        if handler is None:
            raise EmitError("is not supported by the C++ emitter", op)
        self.loc_comment(op)
        handler(self, op)
