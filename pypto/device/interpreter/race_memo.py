"""Race-free runs remembered: a kernel whose accesses cannot depend on data is race-checked once per key.

The race detector's verdict on a run depends only on the sequence of instructions and sync operations
the run executes, with each instruction's pipe and the on-chip byte ranges (space, address, size) of
its tiles (:class:`.races.RaceDetector`: logical ticks, no cycles, no data). :func:`data_independent`
decides, once per compiled plan and conservatively, that nothing a run reads from memory can steer
that sequence: every scalar value (loop bounds, branch conditions, tile addresses, valid shapes,
offsets, event ids) is computed by ``arith``/``scf`` ops and a few pure ``pto`` ops from constants,
scalar arguments and the launch's block index and count, and no op touches state that outlives the
run or crosses cores (channels, comm, async DMA). For such a kernel two runs with the same
:func:`run_key` (scalar arguments bit for bit, each array's dtype and size, the block, the engine, the
target object) execute the same sequence, so the detector finds
the same races in both: a run found race-free need not be checked again (``run_kernel`` then runs
without the detector). A run that races or fails is never remembered, so it is checked again.
docs/device.md "The race rule" states the argument.

The same argument holds for the run's accounting: its timeline (records, queue ends, flag pairs, problems)
is a function of that sequence, each instruction's cost (of its tiles' valid shapes, element types and
spaces, its windows' sizes and the target: no values) and the ops' locations. So the memo also keeps the
timeline of the last few race-free (or unchecked) compiled runs per key, with the locations' source
(:data:`MAX_TIMELINES`); a later run with that key, when its race verdict is known or not asked for, runs
the function's numerics-only form (:attr:`.compiled._Compiler.numerics`) and hands back that timeline
(``KernelRun.accounting == "remembered"``). The timeline is shared by those runs: nothing reads it but to
report (records are built once, on first read, and not changed after).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.dialects.memref import AllocOp

from pypto.ptoas.dialect.base import PTOOp
from pypto.ptoas.dialect.misc_ops import SectionCubeOp, SectionVectorOp
from pypto.ptoas.dialect.types import PtrType

from .memory import GmPtr
from .timing import Timeline

MAX_KEYS = 64
"""Race-free keys remembered per function: the memo starts over when full (a kernel run with ever new
scalars keeps a bounded memo of its recent keys)."""

MAX_TIMELINES = 8
"""Timelines remembered per function (:meth:`RaceMemo.keep_timeline`): each holds a run's rows, so fewer
than race-free keys; the memo's timelines start over when full."""

_REGION_OPS = (FuncOp, SectionCubeOp, SectionVectorOp)
"""Region-holding ops allowed besides ``scf``: their bodies run once, in order."""


def _scalar(t: Any) -> bool:
    return isinstance(t, IntegerType | IndexType | AnyFloat)


def data_independent(func: FuncOp) -> bool:
    """Whether no value read from memory (GM, a tile, an argument array) can reach the control flow, the
    tile addresses and shapes or the event ids of ``func``, and no op depends on state outside the run.

    Conservative, from the op classes' facts (``PTOOp.VALUE_OF_OPERANDS`` / ``PTOOp.OUTSIDE_RUN``): any op with
    results outside ``arith``/``scf``, ``memref.alloc`` and the ops whose results are values of their operands
    (e.g. ``pto.load_scalar``, ``pto.tgetval``), an ``arith`` op on non-scalars, an argument that is neither a
    pointer nor a scalar (tmrgsort's executed-count vector), an op that depends on state outside the run, or a
    call makes the kernel ineligible."""
    for t in func.function_type.inputs.data:
        if not (isinstance(t, PtrType) or _scalar(t)):
            return False
    for op in func.walk():
        if (isinstance(op, PTOOp) and op.OUTSIDE_RUN) or isinstance(op, CallOp):  # a call: code not analysed here
            return False
        dialect = op.name.split(".", 1)[0]
        if op.regions and dialect != "scf" and not isinstance(op, _REGION_OPS):
            return False
        if (
            not op.results
            or dialect == "scf"
            or (isinstance(op, PTOOp) and op.VALUE_OF_OPERANDS)
            or isinstance(op, AllocOp)
        ):
            continue
        if dialect == "arith" and all(_scalar(v.type) for v in (*op.operands, *op.results)):
            continue
        return False
    return True


def run_key(bound: Sequence[Any], block: tuple[int, int], engine: str, target: object) -> tuple[Any, ...] | None:
    """The key of a run of an eligible kernel (None: a value this does not key, run the full detector).

    Scalars bit for bit; each pointer argument's dtype, size and offset (what its bounds checks see); the
    block; the engine; the target by identity (:class:`RaceMemo` keeps it alive). Not keyed: the arrays'
    contents and addresses, hence which arrays share bytes: the detector sees no GM, and in an eligible
    kernel no GM value reaches an address, a shape or a branch (docs/device.md "The race rule")."""
    parts: list[Any] = [block, engine, id(target)]
    append = parts.append
    for v in bound:
        t = type(v)
        if t is GmPtr:
            flat = v.flat
            append((flat.dtype, flat.size, v.offset))
        elif t is float:
            append(v.hex())  # -0.0 and 0.0 apart (1/x tells them apart), NaN payloads apart
        elif t is int or t is bool:
            append((t, v))  # True and 1 apart
        else:
            return None
    return tuple(parts)


_ABSENT = object()


class RaceMemo:
    """The race-free keys and the remembered timelines of one eligible function of one plan (kept in the
    plan's facts)."""

    __slots__ = ("keys", "timelines")

    def __init__(self) -> None:
        self.keys: dict[tuple[Any, ...], object] = {}
        self.timelines: dict[tuple[Any, ...], tuple[object, Timeline]] = {}

    def timeline(self, key: tuple[Any, ...], target: object) -> Timeline | None:
        """The timeline of a run with ``key`` (a :func:`run_key` and the locations' source) on ``target``."""
        got = self.timelines.get(key)
        return got[1] if got is not None and got[0] is target else None

    def keep_timeline(self, key: tuple[Any, ...], target: object, timeline: Timeline) -> None:
        """Remember a finished run's timeline (holding ``target`` and, through ``timeline.locate``, the
        locations' source, so no id in the key is reused while the entry lives)."""
        if len(self.timelines) >= MAX_TIMELINES:
            self.timelines.clear()
        self.timelines[key] = (target, timeline)

    def race_free(self, key: tuple[Any, ...], target: object) -> bool:
        """Whether a run with ``key`` on ``target`` was found race-free."""
        return self.keys.get(key, _ABSENT) is target

    def remember(self, key: tuple[Any, ...], target: object) -> None:
        """Record a race-free run (holding ``target``, so its id in the key is not reused)."""
        if len(self.keys) >= MAX_KEYS:
            self.keys.clear()
        self.keys[key] = target
