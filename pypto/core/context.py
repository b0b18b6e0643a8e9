"""The xDSL context every PyPTO tool parses and runs passes in."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.scf import Scf
from xdsl.ir import Dialect

from pypto.dialects import PL


def _pld() -> Dialect:
    from pypto.dialects.distributed_ops import PLD

    return PLD


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func, arith, scf and pl loaded, and pld (multi-chip ops) registered:
    imported and loaded on the first pld op or attribute parsed."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Arith, Scf, PL):
        ctx.load_dialect(dialect)
    ctx.register_dialect("pld", _pld)
    return ctx
