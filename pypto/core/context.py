"""The xDSL context every PyPTO tool parses and runs passes in."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.scf import Scf

from pypto.dialects import PL
from pypto.dialects.distributed_ops import PLD


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func, arith, scf, pl and pld (multi-chip ops) loaded."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Arith, Scf, PL, PLD):
        ctx.load_dialect(dialect)
    return ctx
