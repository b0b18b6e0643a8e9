"""NormalizeStmtStructure: identity in PyPTO on xDSL (documented choice).

Upstream's pass 06 reshapes its statement *tree*: every function, ``if`` arm
and loop body becomes a ``SeqStmts``, and runs of consecutive assignments /
expression statements are wrapped in ``OpStmts`` groups. It changes no printed
line (the upstream ``06_after_NormalizeStmtStructure`` dumps equal their
``05`` inputs). xDSL IR has no such tree: every body already is one block
holding a flat list of ops, ended by its terminator, and the verifier enforces
that shape. So the pass has nothing to normalise and leaves the IR unchanged;
it exists so that pipeline names and dump numbers match upstream's. We chose
not to invent a canonical op order here: any reordering would change the
printed program, which upstream's pass never does.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from .base import PyPTOPass
from .registry import register_pass


@register_pass
@dataclass(frozen=True)
class NormalizeStmtStructure(PyPTOPass):
    """Statement-tree normalisation; identity on xDSL's block-structured IR."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
