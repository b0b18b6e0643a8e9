"""Synchronisation ops (pto-dialect.md §4 "Sync", §5).

::

    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]        (also #pto.pipe<...>, #pto.event<...>)
    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    pto.set_flag_dyn[<PIPE_MTE2>, <PIPE_V>, %id]
    pto.barrier <PIPE_V>                                    (pipe_barrier(PIPE_V))
    pto.record_event[#pto.pipe_event_type<TLOAD>, #pto.pipe_event_type<TVEC>, <EVENT_ID0>]
    pto.wait_event[...]
    pto.barrier_sync[<TVEC>]
    pto.sync.set #pto.pipe<PIPE_M>, 0      /  pto.sync.wait #pto.pipe<PIPE_M>, 0

The printer writes the short forms (what MLIR prints when the op fixes the
attribute kind); the high-level endpoints of record/wait_event stay qualified
because they may be either ``pipe_event_type`` or ``sync_op_type``.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, i32
from xdsl.irdl import irdl_op_definition, operand_def, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer

from .attrs import (
    SYNC_OP_PIPE,
    EventAttr,
    Pipe,
    PipeAttr,
    PipeEventTypeAttr,
    SyncOpType,
    SyncOpTypeAttr,
    parse_short_enum,
    print_short_enum,
)
from .base import PTOOp

EventTypeLike = PipeEventTypeAttr | SyncOpTypeAttr


def _check_pipe(op: PTOOp, pipe: PipeAttr, what: str) -> None:
    if pipe.data in (Pipe.PIPE_NUM, Pipe.PIPE_UNASSIGNED):
        raise op.fail(f"{what} {pipe.data.value} is not a hardware pipe")


def _parse_pipe_pair(parser: Parser) -> tuple[PipeAttr, PipeAttr]:
    """``[<P>, <P>,`` -- the opening of every flag op."""
    parser.parse_punctuation("[")
    src = parse_short_enum(parser, PipeAttr)
    parser.parse_punctuation(",")
    dst = parse_short_enum(parser, PipeAttr)
    parser.parse_punctuation(",")
    return src, dst


def _print_pipe_pair(printer: Printer, src: PipeAttr, dst: PipeAttr) -> None:
    printer.print_string("[")
    print_short_enum(printer, src)
    printer.print_string(", ")
    print_short_enum(printer, dst)
    printer.print_string(", ")


class _FlagOp(PTOOp):
    """``[src_pipe, dst_pipe, event]`` between two different pipes."""

    src_pipe = prop_def(PipeAttr)
    dst_pipe = prop_def(PipeAttr)
    event_id = prop_def(EventAttr)

    @classmethod
    def parse(cls, parser: Parser) -> _FlagOp:
        """Parse ``[<P>, <P>, <E>]`` (short or qualified)."""
        src, dst = _parse_pipe_pair(parser)
        event = parse_short_enum(parser, EventAttr)
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        return cls.build(properties={"src_pipe": src, "dst_pipe": dst, "event_id": event}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print ``[<P>, <P>, <E>]``."""
        _print_pipe_pair(printer, self.src_pipe, self.dst_pipe)
        print_short_enum(printer, self.event_id)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        """Two distinct hardware pipes (same-pipe ordering is a barrier)."""
        _check_pipe(self, self.src_pipe, "src_pipe")
        _check_pipe(self, self.dst_pipe, "dst_pipe")
        if Pipe.PIPE_ALL in (self.src_pipe.data, self.dst_pipe.data):
            raise self.fail("PIPE_ALL cannot be a flag endpoint")
        if self.src_pipe == self.dst_pipe:
            raise self.fail(f"src and dst pipe are both {self.src_pipe.data.value}; use pto.barrier")


@irdl_op_definition
class SetFlagOp(_FlagOp):
    """``set_flag(src, dst, event)``: the producer pipe signals."""

    name = "pto.set_flag"


@irdl_op_definition
class WaitFlagOp(_FlagOp):
    """``wait_flag(src, dst, event)``: the consumer pipe waits."""

    name = "pto.wait_flag"


class _FlagDynOp(PTOOp):
    """``[src_pipe, dst_pipe, %event_id]`` with a runtime event id."""

    src_pipe = prop_def(PipeAttr)
    dst_pipe = prop_def(PipeAttr)
    event_id = operand_def(IndexType)

    @classmethod
    def parse(cls, parser: Parser) -> _FlagDynOp:
        """Parse ``[<P>, <P>, %id]``."""
        src, dst = _parse_pipe_pair(parser)
        event = parser.parse_operand(IndexType())
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        return cls.build(operands=[event], properties={"src_pipe": src, "dst_pipe": dst}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print ``[<P>, <P>, %id]``."""
        _print_pipe_pair(printer, self.src_pipe, self.dst_pipe)
        printer.print_operand(self.event_id)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class SetFlagDynOp(_FlagDynOp):
    """``set_flag`` with an index event id."""

    name = "pto.set_flag_dyn"


@irdl_op_definition
class WaitFlagDynOp(_FlagDynOp):
    """``wait_flag`` with an index event id."""

    name = "pto.wait_flag_dyn"


@irdl_op_definition
class BarrierOp(PTOOp):
    """``pipe_barrier(pipe)``: order the ops of one pipe (PIPE_ALL: all pipes)."""

    name = "pto.barrier"
    pipe_attr = prop_def(PipeAttr, prop_name="pipe")

    @classmethod
    def parse(cls, parser: Parser) -> BarrierOp:
        """Parse ``<PIPE_V>`` or ``#pto.pipe<PIPE_V>``."""
        pipe = parse_short_enum(parser, PipeAttr)
        attrs = parser.parse_optional_attr_dict()
        return cls.build(properties={"pipe": pipe}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print `` <PIPE_V>``."""
        printer.print_string(" ")
        print_short_enum(printer, self.pipe_attr)
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        """A hardware pipe."""
        _check_pipe(self, self.pipe_attr, "pipe")


class _EventOp(PTOOp):
    """``[src_op, dst_op, event]`` between two high-level op types (lowered via §5)."""

    src_op = prop_def(EventTypeLike)
    dst_op = prop_def(EventTypeLike)
    event_id = prop_def(EventAttr)

    @classmethod
    def parse(cls, parser: Parser) -> _EventOp:
        """Parse ``[#pto.pipe_event_type<K>, #pto.sync_op_type<K>, <E>]`` (``<K>`` = pipe_event_type)."""
        parser.parse_punctuation("[")
        src = parse_short_enum(parser, (PipeEventTypeAttr, SyncOpTypeAttr))
        parser.parse_punctuation(",")
        dst = parse_short_enum(parser, (PipeEventTypeAttr, SyncOpTypeAttr))
        parser.parse_punctuation(",")
        event = parse_short_enum(parser, EventAttr)
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        return cls.build(properties={"src_op": src, "dst_op": dst, "event_id": event}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print qualified endpoints and a short event."""
        printer.print_string(" [")
        printer.print_attribute(self.src_op)
        printer.print_string(", ")
        printer.print_attribute(self.dst_op)
        printer.print_string(", ")
        print_short_enum(printer, self.event_id)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)

    def pipes(self) -> tuple[Pipe, Pipe]:
        """The (src, dst) hardware pipes of the endpoints (pto-dialect.md §5)."""
        return SYNC_OP_PIPE[SyncOpType(self.src_op.data)], SYNC_OP_PIPE[SyncOpType(self.dst_op.data)]


@irdl_op_definition
class RecordEventOp(_EventOp):
    """High-level set_flag: lowered to ``set_flag`` on the mapped pipes."""

    name = "pto.record_event"


@irdl_op_definition
class WaitEventOp(_EventOp):
    """High-level wait_flag: lowered to ``wait_flag`` on the mapped pipes."""

    name = "pto.wait_event"


@irdl_op_definition
class BarrierSyncOp(PTOOp):
    """High-level barrier on the pipe of an op type: ``pto.barrier_sync[<TVEC>]``."""

    name = "pto.barrier_sync"
    OUTSIDE_RUN: ClassVar[bool] = True
    op_type = prop_def(EventTypeLike)

    @classmethod
    def parse(cls, parser: Parser) -> BarrierSyncOp:
        """Parse ``[<K>]``."""
        parser.parse_punctuation("[")
        kind = parse_short_enum(parser, (SyncOpTypeAttr, PipeEventTypeAttr))
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        return cls.build(properties={"op_type": kind}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print ``[<K>]``."""
        printer.print_string("[")
        print_short_enum(printer, self.op_type)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)


class _CrossCoreOp(PTOOp):
    """Cube<->vector signal: ``#pto.pipe<PIPE_M>, 0``."""

    pipe_attr = prop_def(PipeAttr, prop_name="pipe")
    event_id = prop_def(IntegerAttr[IntegerType])

    @classmethod
    def parse(cls, parser: Parser) -> _CrossCoreOp:
        """Parse ``<pipe>, <int>``."""
        pipe = parse_short_enum(parser, PipeAttr)
        parser.parse_punctuation(",")
        event = parser.parse_integer(allow_boolean=False, allow_negative=False)
        attrs = parser.parse_optional_attr_dict()
        return cls.build(properties={"pipe": pipe, "event_id": IntegerAttr(event, i32)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print `` #pto.pipe<P>, N``."""
        printer.print_string(" ")
        printer.print_attribute(self.pipe_attr)
        printer.print_string(f", {self.event_id.value.data}")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class SyncSetOp(_CrossCoreOp):
    """Cross-core set (``ffts_cross_core_sync``)."""

    name = "pto.sync.set"
    OUTSIDE_RUN: ClassVar[bool] = True


@irdl_op_definition
class SyncWaitOp(_CrossCoreOp):
    """Cross-core wait (``wait_flag_dev``)."""

    name = "pto.sync.wait"
    OUTSIDE_RUN: ClassVar[bool] = True


SYNC_OPS: tuple[type[PTOOp], ...] = (
    SetFlagOp,
    WaitFlagOp,
    SetFlagDynOp,
    WaitFlagDynOp,
    BarrierOp,
    RecordEventOp,
    WaitEventOp,
    BarrierSyncOp,
    SyncSetOp,
    SyncWaitOp,
)
