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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.dialects.memref import AllocOp

from pypto.ptoas.dialect.misc_ops import SectionCubeOp, SectionVectorOp
from pypto.ptoas.dialect.types import PtrType

from .memory import GmPtr

MAX_KEYS = 64
"""Race-free keys remembered per function: the memo starts over when full (a kernel run with ever new
scalars keeps a bounded memo of its recent keys)."""

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
        if getattr(op, "OUTSIDE_RUN", False) or isinstance(op, CallOp):  # a call: code not analysed here
            return False
        dialect = op.name.split(".", 1)[0]
        if op.regions and dialect != "scf" and not isinstance(op, _REGION_OPS):
            return False
        if not op.results or dialect == "scf" or getattr(op, "VALUE_OF_OPERANDS", False) or isinstance(op, AllocOp):
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
    """The race-free keys of one eligible function of one plan (kept in the plan's facts)."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: dict[tuple[Any, ...], object] = {}

    def race_free(self, key: tuple[Any, ...], target: object) -> bool:
        """Whether a run with ``key`` on ``target`` was found race-free."""
        return self.keys.get(key, _ABSENT) is target

    def remember(self, key: tuple[Any, ...], target: object) -> None:
        """Record a race-free run (holding ``target``, so its id in the key is not reused)."""
        if len(self.keys) >= MAX_KEYS:
            self.keys.clear()
        self.keys[key] = target
