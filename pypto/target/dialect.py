"""The ``npu`` dialect: a chip described as IR.

One ``npu.target`` op holds a chip's description; the ops in its body each
state one fact (docs/target.md lists where every a2a3 number comes from)::

    npu.target @a2a3 clock_hz = 1.85e9 block_bytes = 32 {
      npu.cores aic = 24 aiv_per_aic = 2
      npu.dispatch_latency cycles = 740
      npu.aicpu threads = 3 submit = 185 alloc = 92 complete = 37 release = 19 dispatch = 37
      npu.events per_pipe_pair = 8
      npu.pipe "MTE2" pto = "PIPE_MTE2"
      npu.buffer "Vec" bytes = 196608 hw = "UB"
      npu.buffer "Acc" bytes = 131072 hw = "L0C" align = 512
      npu.op_pipe "TLOAD" dst = "Vec" -> "MTE2"
      npu.op_pipe "TMATMUL", "TGEMV*" -> "CUBE"
      npu.op_pipe "*" -> "VECTOR"
      npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26
      npu.compute_cost "TEXP" dtype = any cols = * slope = 0.0314 bias = 30.1
      npu.matmul_cost a_dtype = fp32 head = 6 per_fractal = 2 fractal_m = 16 fractal_k_bytes = 32 fractal_n = 16
      npu.transfer "GM_TO_UB" gib_per_s = 100.9 hill_peak_gib_per_s = 247.16 hill_k_bytes = 30643
      npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_UB"
      npu.fallback pipe = "MTE2" cycles = 3 + 2 * elems / 64
      npu.fallback op = "TDIVS" dtype = int16 cycles = 4
      npu.sync_cost "set_flag", "wait_flag", "pipe_barrier" cycles = 1
    }

Rules (``npu.op_pipe``, ``npu.transfer_key``) are tried in file order; the
first whose op pattern (an exact name, ``"TGEMV*"`` for a prefix, ``"*"`` for
any) and optional ``src``/``dst`` spaces match wins. Every op may end with an
attribute dictionary (``{note = "..."}``) that the tools ignore.

Verifiers name the op and the field at fault (``npu.buffer "Vec": field
'bytes' must be positive, got 0``); cross-op checks (a rule naming an
undeclared pipe, a duplicate formula row, a pipe without a fallback) live on
``npu.target``. :func:`make_npu_context` is a context with ``builtin`` and
``npu`` loaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, Builtin, FloatAttr, IntegerAttr, StringAttr, f64, i64
from xdsl.ir import Attribute, Block, Dialect, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

_Op = TypeVar("_Op", bound=IRDLOperation)

# ---- small helpers: attributes, numbers, keyword = value syntax ----------------


def _int(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _float(v: float) -> FloatAttr:
    return FloatAttr(float(v), f64)


def _strs(names: Sequence[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([StringAttr(n) for n in names])


def format_float(v: float) -> str:
    """The shortest text of ``v`` that reads back exactly and lexes as an MLIR
    number (``0.0313``, ``26``, ``1.85e9``; fields read with ``parse_number``)."""
    if float(v).is_integer() and abs(v) < 1e6:
        return str(int(v))
    text = repr(float(v))
    for digits in range(0, 17):
        sci = f"{v:.{digits}e}"
        mant, exp = sci.split("e")
        candidate = f"{mant if '.' in mant else mant + '.0'}e{int(exp)}"
        if float(candidate) == v and len(candidate) < len(text):
            text = candidate
            break
    if "e" in text and "." not in text.split("e")[0]:
        mant, exp = text.split("e")
        text = f"{mant}.0e{exp}"
    return text


def _kw(parser: Parser, key: str) -> None:
    parser.parse_keyword(key, f" (the '{key} = ...' field)")
    parser.parse_punctuation("=")


def _parse_int_field(parser: Parser, key: str) -> IntegerAttr:
    _kw(parser, key)
    return _int(parser.parse_integer(allow_boolean=False, context_msg=f" for '{key}'"))


def _parse_num_field(parser: Parser, key: str) -> FloatAttr:
    _kw(parser, key)
    return _float(parser.parse_number(context_msg=f" for '{key}'"))


def _parse_str_field(parser: Parser, key: str) -> StringAttr:
    _kw(parser, key)
    return StringAttr(parser.parse_str_literal(f" for '{key}'"))


def _parse_ident_field(parser: Parser, key: str) -> StringAttr:
    _kw(parser, key)
    return StringAttr(parser.parse_identifier(f" for '{key}'"))


def _parse_names(parser: Parser) -> ArrayAttr[StringAttr]:
    """``"A", "B", ...`` (at least one string)."""
    names = [parser.parse_str_literal(" (a name)")]
    while parser.parse_optional_punctuation(",") is not None:
        names.append(parser.parse_str_literal(" (a name)"))
    return _strs(names)


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _names_text(names: ArrayAttr[StringAttr]) -> str:
    return ", ".join(_q(n.data) for n in names.data)


def _finish(cls: type[_Op], parser: Parser, props: dict[str, Attribute | None]) -> _Op:
    attrs = parser.parse_optional_attr_dict()
    return cls.build(properties={k: v for k, v in props.items() if v is not None}, attributes=attrs)


def _emit(op: IRDLOperation, printer: Printer, text: str) -> None:
    printer.print_string(" " + text)
    printer.print_op_attributes(op.attributes)


class NpuOpError(VerifyException):
    """A target description breaks a rule (the message names the op and field)."""


def _fail(op: NpuOp | TargetOp, field: str, why: str) -> NpuOpError:
    return NpuOpError(f"{op.describe()}: field '{field}' {why}")


def _check_name(op: NpuOp | TargetOp, field: str, value: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise _fail(op, field, f"must be a non-empty name without spaces, got {value!r}")


def _check_positive(op: NpuOp | TargetOp, field: str, value: int | float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise _fail(op, field, f"must be positive, got {value}")


def _check_non_negative(op: NpuOp | TargetOp, field: str, value: int | float) -> None:
    if not (math.isfinite(value) and value >= 0):
        raise _fail(op, field, f"must be a finite number >= 0, got {value}")


# ---- the ops ----------------------------------------------------------------


class NpuOp(IRDLOperation):
    """An op of a target's body (lives directly in ``npu.target``)."""

    traits = lazy_traits_def(lambda: (HasParent(TargetOp),))

    def describe(self) -> str:
        """How errors name this op: its name and its key (``npu.buffer "Vec"``)."""
        return self.name


@irdl_op_definition
class CoresOp(NpuOp):
    """``npu.cores aic = 24 aiv_per_aic = 2``: AI cores (one AIC each) and the AIV per AIC."""

    name = "npu.cores"
    aic = prop_def(IntegerAttr)
    aiv_per_aic = prop_def(IntegerAttr)

    def __init__(self, aic: int, aiv_per_aic: int):
        super().__init__(properties={"aic": _int(aic), "aiv_per_aic": _int(aiv_per_aic)})

    @classmethod
    def parse(cls, parser: Parser) -> CoresOp:
        """Parse ``aic = N aiv_per_aic = M``."""
        return _finish(
            cls,
            parser,
            {"aic": _parse_int_field(parser, "aic"), "aiv_per_aic": _parse_int_field(parser, "aiv_per_aic")},
        )

    def print(self, printer: Printer) -> None:
        """Print ``aic = N aiv_per_aic = M``."""
        _emit(self, printer, f"aic = {self.aic.value.data} aiv_per_aic = {self.aiv_per_aic.value.data}")

    def verify_(self) -> None:
        """Both counts positive."""
        _check_positive(self, "aic", self.aic.value.data)
        _check_positive(self, "aiv_per_aic", self.aiv_per_aic.value.data)


@irdl_op_definition
class DispatchLatencyOp(NpuOp):
    """``npu.dispatch_latency cycles = N``: scheduler dispatch to kernel start, in core cycles."""

    name = "npu.dispatch_latency"
    cycles = prop_def(IntegerAttr)

    def __init__(self, cycles: int):
        super().__init__(properties={"cycles": _int(cycles)})

    @classmethod
    def parse(cls, parser: Parser) -> DispatchLatencyOp:
        """Parse ``cycles = N``."""
        return _finish(cls, parser, {"cycles": _parse_int_field(parser, "cycles")})

    def print(self, printer: Printer) -> None:
        """Print ``cycles = N``."""
        _emit(self, printer, f"cycles = {self.cycles.value.data}")

    def verify_(self) -> None:
        """Non-negative."""
        _check_non_negative(self, "cycles", self.cycles.value.data)


@irdl_op_definition
class AicpuOp(NpuOp):
    """``npu.aicpu threads = 3 submit = 185 alloc = 92 complete = 37 release = 19 dispatch = 37 [drain = 74]``:
    the AICPU side of the chip, in core cycles: scheduler threads (the default of
    ``RunConfig.aicpu_thread_num``), the orchestrator's cost per task submit and per tensor it allocates,
    and a scheduler thread's cost per task it completes, per fanout edge it releases and per task (or SPMD
    block) it dispatches, and, optional (default 0), the prepare step of a ``drain`` that launches every
    block of a ``pl.spmd(..., sync_start=True)`` task at once (pypto.runtime.scheduler). Optional: without
    it one thread runs every step at no cost (a fixed dispatch latency)."""

    name = "npu.aicpu"
    threads = prop_def(IntegerAttr)
    submit = prop_def(IntegerAttr)
    alloc = prop_def(IntegerAttr)
    complete = prop_def(IntegerAttr)
    release = prop_def(IntegerAttr)
    dispatch = prop_def(IntegerAttr)
    drain = opt_prop_def(IntegerAttr)

    FIELDS: ClassVar[tuple[str, ...]] = ("threads", "submit", "alloc", "complete", "release", "dispatch")
    OPTIONAL: ClassVar[tuple[str, ...]] = ("drain",)
    """Fields that may be left out (0 then), printed after the others when set."""

    def __init__(self, **values: int):
        props = {f: _int(values[f]) for f in self.FIELDS}
        props.update({f: _int(values[f]) for f in self.OPTIONAL if values.get(f) is not None})
        super().__init__(properties=props)

    def field(self, name: str) -> int:
        """The value of one field (an absent optional field is 0)."""
        attr = self.properties.get(name)
        if attr is None and name in self.OPTIONAL:
            return 0
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    @classmethod
    def parse(cls, parser: Parser) -> AicpuOp:
        """Parse ``threads = N submit = .. alloc = .. complete = .. release = .. dispatch = .. [drain = ..]``."""
        props: dict[str, Attribute | None] = {f: _parse_int_field(parser, f) for f in cls.FIELDS}
        for f in cls.OPTIONAL:
            if parser.parse_optional_keyword(f) is not None:
                parser.parse_punctuation("=")
                props[f] = _int(parser.parse_integer(allow_boolean=False, context_msg=f" for '{f}'"))
        return _finish(cls, parser, props)

    def print(self, printer: Printer) -> None:
        """Print the fields in their fixed order (an optional field only when set)."""
        names = [*self.FIELDS, *(f for f in self.OPTIONAL if f in self.properties)]
        _emit(self, printer, " ".join(f"{f} = {self.field(f)}" for f in names))

    def verify_(self) -> None:
        """threads positive, the costs non-negative."""
        _check_positive(self, "threads", self.field("threads"))
        for f in (*self.FIELDS[1:], *self.OPTIONAL):
            _check_non_negative(self, f, self.field(f))


@irdl_op_definition
class EventsOp(NpuOp):
    """``npu.events per_pipe_pair = 8``: hardware event ids per (src, dst) pipe pair."""

    name = "npu.events"
    per_pipe_pair = prop_def(IntegerAttr)

    def __init__(self, per_pipe_pair: int):
        super().__init__(properties={"per_pipe_pair": _int(per_pipe_pair)})

    @classmethod
    def parse(cls, parser: Parser) -> EventsOp:
        """Parse ``per_pipe_pair = N``."""
        return _finish(cls, parser, {"per_pipe_pair": _parse_int_field(parser, "per_pipe_pair")})

    def print(self, printer: Printer) -> None:
        """Print ``per_pipe_pair = N``."""
        _emit(self, printer, f"per_pipe_pair = {self.per_pipe_pair.value.data}")

    def verify_(self) -> None:
        """Positive."""
        _check_positive(self, "per_pipe_pair", self.per_pipe_pair.value.data)


@irdl_op_definition
class PipeOp(NpuOp):
    """``npu.pipe "MTE2" pto = "PIPE_MTE2"``: one in-order pipe and its PTO ``PIPE_*`` name."""

    name = "npu.pipe"
    pipe = prop_def(StringAttr)
    pto = prop_def(StringAttr)

    def __init__(self, pipe: str, pto: str):
        super().__init__(properties={"pipe": StringAttr(pipe), "pto": StringAttr(pto)})

    def describe(self) -> str:
        return f"{self.name} {_q(self.pipe.data)}"

    @classmethod
    def parse(cls, parser: Parser) -> PipeOp:
        """Parse ``"NAME" pto = "PIPE_X"``."""
        pipe = StringAttr(parser.parse_str_literal(" (the pipe name)"))
        return _finish(cls, parser, {"pipe": pipe, "pto": _parse_str_field(parser, "pto")})

    def print(self, printer: Printer) -> None:
        """Print ``"NAME" pto = "PIPE_X"``."""
        _emit(self, printer, f"{_q(self.pipe.data)} pto = {_q(self.pto.data)}")

    def verify_(self) -> None:
        """A name, and a PTO pipe spelled ``PIPE_*``."""
        _check_name(self, "pipe", self.pipe.data)
        if not self.pto.data.startswith("PIPE_"):
            raise _fail(self, "pto", f'must be a PTO pipe name like "PIPE_V", got {_q(self.pto.data)}')


@irdl_op_definition
class BufferOp(NpuOp):
    """``npu.buffer "Vec" bytes = 196608 hw = "UB" align = 32``: one on-chip memory space (pl name),
    its size and the alignment of a planned address (default: the target's ``block_bytes``)."""

    name = "npu.buffer"
    space = prop_def(StringAttr)
    size = prop_def(IntegerAttr, prop_name="bytes")
    hw = opt_prop_def(StringAttr)
    align = opt_prop_def(IntegerAttr)

    def __init__(self, space: str, size: int, hw: str | None = None, align: int | None = None):
        props: dict[str, Attribute] = {"space": StringAttr(space), "bytes": _int(size)}
        if hw is not None:
            props["hw"] = StringAttr(hw)
        if align is not None:
            props["align"] = _int(align)
        super().__init__(properties=props)

    def describe(self) -> str:
        return f"{self.name} {_q(self.space.data)}"

    @classmethod
    def parse(cls, parser: Parser) -> BufferOp:
        """Parse ``"SPACE" bytes = N [hw = "NAME"] [align = A]``."""
        space = StringAttr(parser.parse_str_literal(" (the memory space)"))
        size = _parse_int_field(parser, "bytes")
        hw = None
        if parser.parse_optional_keyword("hw") is not None:
            parser.parse_punctuation("=")
            hw = StringAttr(parser.parse_str_literal(" for 'hw'"))
        align = None
        if parser.parse_optional_keyword("align") is not None:
            parser.parse_punctuation("=")
            align = _int(parser.parse_integer(allow_boolean=False, context_msg=" for 'align'"))
        return _finish(cls, parser, {"space": space, "bytes": size, "hw": hw, "align": align})

    def print(self, printer: Printer) -> None:
        """Print ``"SPACE" bytes = N [hw = "NAME"] [align = A]``."""
        hw = f" hw = {_q(self.hw.data)}" if self.hw is not None else ""
        align = f" align = {self.align.value.data}" if self.align is not None else ""
        _emit(self, printer, f"{_q(self.space.data)} bytes = {self.size.value.data}{hw}{align}")

    def verify_(self) -> None:
        """A name, a positive size and a positive power-of-two alignment."""
        _check_name(self, "space", self.space.data)
        _check_positive(self, "bytes", self.size.value.data)
        if self.hw is not None:
            _check_name(self, "hw", self.hw.data)
        if self.align is not None:
            a = self.align.value.data
            if a <= 0 or a & (a - 1):
                raise _fail(self, "align", f"must be a positive power of two, got {a}")


class _RuleOp(NpuOp):
    """``"OP", "OP2*" [src = "S"] [dst = "D"] -> "RESULT"``: first match wins."""

    ops = prop_def(ArrayAttr[StringAttr])
    src = opt_prop_def(StringAttr)
    dst = opt_prop_def(StringAttr)
    RESULT_FIELD: ClassVar[str] = "result"

    def result_name(self) -> str:
        """The rule's answer (a pipe or a transfer key)."""
        attr = self.properties[self.RESULT_FIELD]
        assert isinstance(attr, StringAttr)
        return attr.data

    def op_names(self) -> list[str]:
        """The op patterns the rule applies to."""
        return [n.data for n in self.ops.data]

    def describe(self) -> str:
        return f"{self.name} {_names_text(self.ops)}"

    @classmethod
    def parse(cls, parser: Parser) -> _RuleOp:
        """Parse ``"OP", ... [src = "S"] [dst = "D"] -> "RESULT"``."""
        ops = _parse_names(parser)
        src = dst = None
        if parser.parse_optional_keyword("src") is not None:
            parser.parse_punctuation("=")
            src = StringAttr(parser.parse_str_literal(" for 'src'"))
        if parser.parse_optional_keyword("dst") is not None:
            parser.parse_punctuation("=")
            dst = StringAttr(parser.parse_str_literal(" for 'dst'"))
        parser.parse_punctuation("->")
        result = StringAttr(parser.parse_str_literal(f" for '{cls.RESULT_FIELD}'"))
        return _finish(cls, parser, {"ops": ops, "src": src, "dst": dst, cls.RESULT_FIELD: result})

    def print(self, printer: Printer) -> None:
        """Print ``"OP", ... [src = "S"] [dst = "D"] -> "RESULT"``."""
        text = _names_text(self.ops)
        if self.src is not None:
            text += f" src = {_q(self.src.data)}"
        if self.dst is not None:
            text += f" dst = {_q(self.dst.data)}"
        _emit(self, printer, f"{text} -> {_q(self.result_name())}")

    def verify_(self) -> None:
        """Non-empty names; ``*`` only as a whole pattern or a suffix."""
        if not self.ops.data:
            raise _fail(self, "ops", "must name at least one op")
        for n in self.op_names():
            _check_name(self, "ops", n)
            if "*" in n[:-1]:
                raise _fail(self, "ops", f"may use '*' only at the end of a pattern, got {_q(n)}")
        for field in ("src", "dst"):
            v = self.properties.get(field)
            if isinstance(v, StringAttr):
                _check_name(self, field, v.data)
        _check_name(self, self.RESULT_FIELD, self.result_name())


@irdl_op_definition
class OpPipeOp(_RuleOp):
    """``npu.op_pipe "TLOAD" dst = "Vec" -> "MTE2"``: which pipe an instruction occupies."""

    name = "npu.op_pipe"
    pipe = prop_def(StringAttr)
    RESULT_FIELD: ClassVar[str] = "pipe"


@irdl_op_definition
class TransferKeyOp(_RuleOp):
    """``npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_UB"``: which bandwidth a move uses."""

    name = "npu.transfer_key"
    key = prop_def(StringAttr)
    RESULT_FIELD: ClassVar[str] = "key"


@irdl_op_definition
class ComputeCostOp(NpuOp):
    """``npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26.0``.

    ``cycles = llround(slope * rows * cols + bias)``. ``dtype = any`` and
    ``cols = *`` are wildcards (used after the exact rows)."""

    name = "npu.compute_cost"
    op = prop_def(StringAttr)
    dtype = prop_def(StringAttr)
    cols = opt_prop_def(IntegerAttr)
    slope = prop_def(FloatAttr)
    bias = prop_def(FloatAttr)

    def __init__(self, op: str, dtype: str, cols: int | None, slope: float, bias: float):
        props: dict[str, Attribute] = {
            "op": StringAttr(op),
            "dtype": StringAttr(dtype),
            "slope": _float(slope),
            "bias": _float(bias),
        }
        if cols is not None:
            props["cols"] = _int(cols)
        super().__init__(properties=props)

    def describe(self) -> str:
        cols = "*" if self.cols is None else str(self.cols.value.data)
        return f"{self.name} {_q(self.op.data)} dtype = {self.dtype.data} cols = {cols}"

    @classmethod
    def parse(cls, parser: Parser) -> ComputeCostOp:
        """Parse ``"OP" dtype = D cols = N|* slope = X bias = Y``."""
        op = StringAttr(parser.parse_str_literal(" (the instruction)"))
        dtype = _parse_ident_field(parser, "dtype")
        _kw(parser, "cols")
        cols = None if parser.parse_optional_punctuation("*") is not None else _int(parser.parse_integer(False))
        slope = _parse_num_field(parser, "slope")
        bias = _parse_num_field(parser, "bias")
        return _finish(cls, parser, {"op": op, "dtype": dtype, "cols": cols, "slope": slope, "bias": bias})

    def print(self, printer: Printer) -> None:
        """Print ``"OP" dtype = D cols = N|* slope = X bias = Y``."""
        cols = "*" if self.cols is None else str(self.cols.value.data)
        _emit(
            self,
            printer,
            f"{_q(self.op.data)} dtype = {self.dtype.data} cols = {cols} "
            f"slope = {format_float(self.slope.value.data)} bias = {format_float(self.bias.value.data)}",
        )

    def verify_(self) -> None:
        """Names, positive cols, finite non-negative slope and bias."""
        _check_name(self, "op", self.op.data)
        _check_name(self, "dtype", self.dtype.data)
        if self.cols is not None:
            _check_positive(self, "cols", self.cols.value.data)
        _check_non_negative(self, "slope", self.slope.value.data)
        _check_non_negative(self, "bias", self.bias.value.data)


@irdl_op_definition
class MatmulCostOp(NpuOp):
    """``npu.matmul_cost a_dtype = fp32 head = 6 per_fractal = 2 fractal_m = 16 fractal_k_bytes = 32 fractal_n = 16``.

    ``cycles = head + per_fractal * ceil(m / fractal_m) * ceil(k / (fractal_k_bytes / sizeof(A))) * ceil(n / fractal_n)``;
    ``a_dtype = any`` is the row for every other A dtype."""

    name = "npu.matmul_cost"
    a_dtype = prop_def(StringAttr)
    head = prop_def(IntegerAttr)
    per_fractal = prop_def(IntegerAttr)
    fractal_m = prop_def(IntegerAttr)
    fractal_k_bytes = prop_def(IntegerAttr)
    fractal_n = prop_def(IntegerAttr)

    INT_FIELDS: ClassVar[tuple[str, ...]] = ("head", "per_fractal", "fractal_m", "fractal_k_bytes", "fractal_n")

    def describe(self) -> str:
        return f"{self.name} a_dtype = {self.a_dtype.data}"

    def field(self, name: str) -> int:
        """The value of one integer field."""
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    @classmethod
    def parse(cls, parser: Parser) -> MatmulCostOp:
        """Parse ``a_dtype = D head = .. per_fractal = .. fractal_m = .. fractal_k_bytes = .. fractal_n = ..``."""
        props: dict[str, Attribute | None] = {"a_dtype": _parse_ident_field(parser, "a_dtype")}
        for f in cls.INT_FIELDS:
            props[f] = _parse_int_field(parser, f)
        return _finish(cls, parser, props)

    def print(self, printer: Printer) -> None:
        """Print the fields in their fixed order."""
        text = f"a_dtype = {self.a_dtype.data} " + " ".join(f"{f} = {self.field(f)}" for f in self.INT_FIELDS)
        _emit(self, printer, text)

    def verify_(self) -> None:
        """A dtype name, head >= 0, the rest positive."""
        _check_name(self, "a_dtype", self.a_dtype.data)
        _check_non_negative(self, "head", self.field("head"))
        for f in self.INT_FIELDS[1:]:
            _check_positive(self, f, self.field(f))


@irdl_op_definition
class TransferOp(NpuOp):
    """``npu.transfer "GM_TO_UB" gib_per_s = 100.9 [hill_peak_gib_per_s = P hill_k_bytes = K]``.

    ``cycles = trunc(bytes / 2^30 / gib_per_s * clock_hz)``; the optional Hill
    fit is ``bw(B) = P * B / (K + B)``."""

    name = "npu.transfer"
    key = prop_def(StringAttr)
    gib_per_s = prop_def(FloatAttr)
    hill_peak_gib_per_s = opt_prop_def(FloatAttr)
    hill_k_bytes = opt_prop_def(FloatAttr)

    def describe(self) -> str:
        return f"{self.name} {_q(self.key.data)}"

    @classmethod
    def parse(cls, parser: Parser) -> TransferOp:
        """Parse ``"KEY" gib_per_s = X [hill_peak_gib_per_s = P hill_k_bytes = K]``."""
        key = StringAttr(parser.parse_str_literal(" (the transfer key)"))
        bw = _parse_num_field(parser, "gib_per_s")
        peak = k = None
        if parser.parse_optional_keyword("hill_peak_gib_per_s") is not None:
            parser.parse_punctuation("=")
            peak = _float(parser.parse_number())
            k = _parse_num_field(parser, "hill_k_bytes")
        return _finish(cls, parser, {"key": key, "gib_per_s": bw, "hill_peak_gib_per_s": peak, "hill_k_bytes": k})

    def print(self, printer: Printer) -> None:
        """Print ``"KEY" gib_per_s = X [hill_peak_gib_per_s = P hill_k_bytes = K]``."""
        text = f"{_q(self.key.data)} gib_per_s = {format_float(self.gib_per_s.value.data)}"
        if self.hill_peak_gib_per_s is not None and self.hill_k_bytes is not None:
            text += (
                f" hill_peak_gib_per_s = {format_float(self.hill_peak_gib_per_s.value.data)}"
                f" hill_k_bytes = {format_float(self.hill_k_bytes.value.data)}"
            )
        _emit(self, printer, text)

    def verify_(self) -> None:
        """Positive bandwidths; the Hill fit has both parameters or none."""
        _check_name(self, "key", self.key.data)
        _check_positive(self, "gib_per_s", self.gib_per_s.value.data)
        if (self.hill_peak_gib_per_s is None) != (self.hill_k_bytes is None):
            raise _fail(self, "hill_k_bytes", "and hill_peak_gib_per_s must be given together")
        if self.hill_peak_gib_per_s is not None and self.hill_k_bytes is not None:
            _check_positive(self, "hill_peak_gib_per_s", self.hill_peak_gib_per_s.value.data)
            _check_non_negative(self, "hill_k_bytes", self.hill_k_bytes.value.data)


@irdl_op_definition
class FallbackOp(NpuOp):
    """``npu.fallback pipe = "MTE2" cycles = 3 + 2 * elems / 64`` (integer maths,
    ``elems = rows * cols``), or an op-specific row
    ``npu.fallback op = "TDIVS" [dtype = int16] cycles = 4`` tried first."""

    name = "npu.fallback"
    pipe = opt_prop_def(StringAttr)
    op = opt_prop_def(StringAttr)
    dtype = opt_prop_def(StringAttr)
    base = prop_def(IntegerAttr)
    mul = prop_def(IntegerAttr)
    div = prop_def(IntegerAttr)

    def describe(self) -> str:
        if self.pipe is not None:
            return f"{self.name} pipe = {_q(self.pipe.data)}"
        what = f"op = {_q(self.op.data)}" if self.op is not None else "(no pipe or op)"
        if self.dtype is not None:
            what += f" dtype = {self.dtype.data}"
        return f"{self.name} {what}"

    def cycles(self, elems: int) -> int:
        """``base + mul * elems / div`` in integer maths."""
        return self.base.value.data + self.mul.value.data * elems // self.div.value.data

    @classmethod
    def parse(cls, parser: Parser) -> FallbackOp:
        """Parse ``pipe = "P" | op = "OP" [dtype = D]``, then ``cycles = B [+ [M *] elems / D]``."""
        props: dict[str, Attribute | None] = {}
        if parser.parse_optional_keyword("pipe") is not None:
            parser.parse_punctuation("=")
            props["pipe"] = StringAttr(parser.parse_str_literal(" for 'pipe'"))
        else:
            props["op"] = _parse_str_field(parser, "op")
            if parser.parse_optional_keyword("dtype") is not None:
                parser.parse_punctuation("=")
                props["dtype"] = StringAttr(parser.parse_identifier(" for 'dtype'"))
        _kw(parser, "cycles")
        props["base"] = _int(parser.parse_integer(False))
        mul, div = 0, 1
        if parser.parse_optional_punctuation("+") is not None:
            mul = 1
            if parser.parse_optional_keyword("elems") is None:
                mul = parser.parse_integer(False)
                parser.parse_punctuation("*")
                parser.parse_keyword("elems")
            parser.parse_punctuation("/")
            div = parser.parse_integer(False)
        props["mul"], props["div"] = _int(mul), _int(div)
        return _finish(cls, parser, props)

    def print(self, printer: Printer) -> None:
        """Print the selector and ``cycles = B [+ [M *] elems / D]``."""
        sel = self.describe()[len(self.name) + 1 :]
        text = f"{sel} cycles = {self.base.value.data}"
        mul, div = self.mul.value.data, self.div.value.data
        if mul:
            text += " + " + ("" if mul == 1 else f"{mul} * ") + f"elems / {div}"
        _emit(self, printer, text)

    def verify_(self) -> None:
        """Exactly one of pipe / op; dtype only with op; base, mul >= 0, div > 0."""
        if (self.pipe is None) == (self.op is None):
            raise _fail(self, "pipe", "or 'op' must be given (exactly one)")
        if self.pipe is not None and self.dtype is not None:
            raise _fail(self, "dtype", "selects only op-specific rows (give op = ..., not pipe = ...)")
        _check_non_negative(self, "base", self.base.value.data)
        _check_non_negative(self, "mul", self.mul.value.data)
        _check_positive(self, "div", self.div.value.data)


@irdl_op_definition
class SyncCostOp(NpuOp):
    """``npu.sync_cost "set_flag", "wait_flag" cycles = 1``: cycles of sync intrinsics."""

    name = "npu.sync_cost"
    ops = prop_def(ArrayAttr[StringAttr])
    cycles = prop_def(IntegerAttr)

    def describe(self) -> str:
        return f"{self.name} {_names_text(self.ops)}"

    @classmethod
    def parse(cls, parser: Parser) -> SyncCostOp:
        """Parse ``"NAME", ... cycles = N``."""
        ops = _parse_names(parser)
        return _finish(cls, parser, {"ops": ops, "cycles": _parse_int_field(parser, "cycles")})

    def print(self, printer: Printer) -> None:
        """Print ``"NAME", ... cycles = N``."""
        _emit(self, printer, f"{_names_text(self.ops)} cycles = {self.cycles.value.data}")

    def verify_(self) -> None:
        """Names and a non-negative cost."""
        if not self.ops.data:
            raise _fail(self, "ops", "must name at least one intrinsic")
        for n in self.ops.data:
            _check_name(self, "ops", n.data)
        _check_non_negative(self, "cycles", self.cycles.value.data)


@irdl_op_definition
class LinkOp(NpuOp):
    """``npu.link gb_per_s = B latency_cycles = L``: one chip-to-chip hop (multi-chip runs,
    pypto.runtime.distributed): a transfer of ``n`` bytes over one hop costs
    ``L + ceil(n / (B * 1e9) * clock_hz)`` core cycles. Optional (no multi-chip link then)."""

    name = "npu.link"
    gb_per_s = prop_def(FloatAttr)
    latency_cycles = prop_def(IntegerAttr)

    @classmethod
    def parse(cls, parser: Parser) -> LinkOp:
        """Parse ``gb_per_s = B latency_cycles = L``."""
        bw = _parse_num_field(parser, "gb_per_s")
        return _finish(cls, parser, {"gb_per_s": bw, "latency_cycles": _parse_int_field(parser, "latency_cycles")})

    def print(self, printer: Printer) -> None:
        """Print ``gb_per_s = B latency_cycles = L``."""
        text = f"gb_per_s = {format_float(self.gb_per_s.value.data)} latency_cycles = {self.latency_cycles.value.data}"
        _emit(self, printer, text)

    def verify_(self) -> None:
        """Positive bandwidth, non-negative latency."""
        _check_positive(self, "gb_per_s", self.gb_per_s.value.data)
        _check_non_negative(self, "latency_cycles", self.latency_cycles.value.data)



_SINGLETONS: tuple[type[NpuOp], ...] = (CoresOp, DispatchLatencyOp, EventsOp)


@irdl_op_definition
class TargetOp(IRDLOperation):
    """``npu.target @name clock_hz = F block_bytes = N { ... }``: one chip."""

    name = "npu.target"
    sym_name = prop_def(StringAttr)
    clock_hz = prop_def(FloatAttr)
    block_bytes = prop_def(IntegerAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator(), IsolatedFromAbove())

    def __init__(self, name: str, clock_hz: float, block_bytes: int, ops: Sequence[Operation] = ()):
        super().__init__(
            properties={"sym_name": StringAttr(name), "clock_hz": _float(clock_hz), "block_bytes": _int(block_bytes)},
            regions=[Region(Block(list(ops)))],
        )

    def describe(self) -> str:
        return f"{self.name} @{self.sym_name.data}"

    def body_ops(self, kind: type[_Op]) -> list[_Op]:
        """The body's ops of one kind, in order."""
        return [o for o in self.body.block.ops if isinstance(o, kind)]

    @classmethod
    def parse(cls, parser: Parser) -> TargetOp:
        """Parse ``@name clock_hz = F block_bytes = N [attributes {...}] { ops }``."""
        sym = parser.parse_symbol_name()
        clock = _parse_num_field(parser, "clock_hz")
        block = _parse_int_field(parser, "block_bytes")
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        if not body.blocks:
            body.add_block(Block())
        op = cls.build(
            properties={"sym_name": sym, "clock_hz": clock, "block_bytes": block},
            regions=[body],
            attributes=attrs.data if attrs is not None else {},
        )
        return op

    def print(self, printer: Printer) -> None:
        """Print the header, then the body one op a line."""
        printer.print_string(
            f" @{self.sym_name.data} clock_hz = {format_float(self.clock_hz.value.data)}"
            f" block_bytes = {self.block_bytes.value.data}"
        )
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    def verify_(self) -> None:
        """Header values, one of each singleton op, and the cross-op rules."""
        _check_positive(self, "clock_hz", self.clock_hz.value.data)
        _check_positive(self, "block_bytes", self.block_bytes.value.data)
        for o in self.body.block.ops:
            if not isinstance(o, NpuOp):
                raise NpuOpError(f"{self.describe()}: '{o.name}' is not an npu op")
        for kind in _SINGLETONS:
            found = self.body_ops(kind)
            if len(found) != 1:
                raise NpuOpError(f"{self.describe()}: needs exactly one {kind.name}, found {len(found)}")
        if len(self.body_ops(AicpuOp)) > 1:
            raise NpuOpError(f"{self.describe()}: has more than one npu.aicpu")
        pipes = self._unique(PipeOp, lambda o: o.pipe.data, "pipe")
        self._unique(BufferOp, lambda o: o.space.data, "space")
        keys = self._unique(TransferOp, lambda o: o.key.data, "key")
        self._unique(
            ComputeCostOp,
            lambda o: (o.op.data, o.dtype.data, None if o.cols is None else o.cols.value.data),
            "op/dtype/cols",
        )
        self._unique(MatmulCostOp, lambda o: o.a_dtype.data, "a_dtype")
        self._unique(SyncCostOp, lambda o: tuple(n.data for n in o.ops.data), "ops")
        for rule in self.body_ops(OpPipeOp):
            if rule.pipe.data not in pipes:
                raise _fail(rule, "pipe", f"names {_q(rule.pipe.data)}, which no npu.pipe declares")
        for rule in self.body_ops(TransferKeyOp):
            if rule.key.data not in keys:
                raise _fail(rule, "key", f"names {_q(rule.key.data)}, which no npu.transfer declares")
        covered = set()
        for fb in self.body_ops(FallbackOp):
            if fb.pipe is not None:
                if fb.pipe.data not in pipes:
                    raise _fail(fb, "pipe", f"names {_q(fb.pipe.data)}, which no npu.pipe declares")
                covered.add(fb.pipe.data)
        for p in pipes:
            if p not in covered:
                raise NpuOpError(f"{self.describe()}: pipe {_q(p)} has no npu.fallback pipe = {_q(p)} row")

    def _unique(self, kind: type[_Op], key: Callable[[_Op], object], field: str) -> set[object]:
        seen: set[object] = set()
        for o in self.body_ops(kind):
            k = key(o)
            if k in seen:
                assert isinstance(o, NpuOp)
                raise _fail(o, field, "repeats an earlier row (each must be unique)")
            seen.add(k)
        return seen


NPU_OPS: tuple[type[IRDLOperation], ...] = (
    TargetOp,
    CoresOp,
    DispatchLatencyOp,
    AicpuOp,
    EventsOp,
    PipeOp,
    BufferOp,
    OpPipeOp,
    TransferKeyOp,
    ComputeCostOp,
    MatmulCostOp,
    TransferOp,
    FallbackOp,
    SyncCostOp,
    LinkOp,
)

NPU = Dialect("npu", list(NPU_OPS), [])
"""The ``npu`` dialect (ops only)."""


def make_npu_context(allow_unregistered: bool = False) -> Context:
    """A context with ``builtin`` and ``npu`` loaded (what target files parse in)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    ctx.load_dialect(Builtin)
    ctx.load_dialect(NPU)
    return ctx
