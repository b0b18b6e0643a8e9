"""The enumerations of ``pypto.language.distributed`` (``pld``), spelled as upstream's DSL spells them.

``ReduceOp`` (collectives), ``NotifyOp`` (``pld.system.notify``), ``WaitCmp``
(``pld.system.wait``) and ``AllreduceMode`` (``mode="mesh" | "ring"``). The
simulated ranks (:mod:`pypto.runtime.distributed`) execute them; the values
are the DSL spellings so the text forms name them the same way.
"""

from __future__ import annotations

from xdsl.utils.str_enum import StrEnum


class ReduceOp(StrEnum):
    """How a reducing collective combines the ranks' values."""

    Sum = "Sum"
    Max = "Max"
    Min = "Min"
    Prod = "Prod"


class NotifyOp(StrEnum):
    """What a notify does to the peer's signal cell: add its value atomically, or set it."""

    AtomicAdd = "AtomicAdd"
    Set = "Set"


class WaitCmp(StrEnum):
    """How a wait compares its local signal cell with the expected value."""

    Eq = "Eq"
    Ne = "Ne"
    Gt = "Gt"
    Ge = "Ge"
    Lt = "Lt"
    Le = "Le"


class AllreduceMode(StrEnum):
    """``mesh``: every rank reads every peer; ``ring``: reduce-scatter then allgather over neighbours."""

    mesh = "mesh"
    ring = "ring"


def compare(cmp: WaitCmp | str, have: int, expected: int) -> bool:
    """Whether ``have <cmp> expected`` holds."""
    return {
        WaitCmp.Eq: have == expected,
        WaitCmp.Ne: have != expected,
        WaitCmp.Gt: have > expected,
        WaitCmp.Ge: have >= expected,
        WaitCmp.Lt: have < expected,
        WaitCmp.Le: have <= expected,
    }[WaitCmp(cmp)]
