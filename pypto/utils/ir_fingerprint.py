"""``fingerprint(op)``: what an in-place edit of xDSL IR changes, cheap to compare.

One mechanism for "did this IR change?": the pass-dump writer prints a pass's
output only when it differs from its input, and the device interpreter
recompiles a kernel only when its module was edited.
"""

from __future__ import annotations

from xdsl.ir import Operation


def fingerprint(op: Operation) -> list[object]:
    """Everything the printers and the interpreter read from ``op`` and what it contains, as the objects
    themselves (held, so no ``id`` is reused): two fingerprints are equal iff nothing was replaced,
    added, moved or renamed. xDSL attributes are immutable and xDSL replaces an op's operand tuple on
    every operand update (RAUW included), so an op whose properties, types, operands or name hints
    changed yields a different list. Far cheaper than printing.

    (A hand-rolled walk over ``first_op``/``next_op``: xDSL's generator-based ``walk`` and its
    ``OpOperands`` views cost several times more per op.)"""
    out: list[object] = []
    stack = [op]
    while stack:
        o = stack.pop()
        out.append(o)
        out.append(o.location)
        out.append(o._operands)  # noqa: SLF001 -- the tuple itself; see the docstring (xDSL is pinned)
        out.extend(o.properties.items())
        out.extend(o.attributes.items())
        for r in o.results:
            out.extend((r, r.type, r.name_hint))
        for region in o.regions:
            out.append(region)
            for block in region.blocks:
                out.append(block)
                for a in block.args:
                    out.extend((a, a.type, a.name_hint))
                inner = block.first_op
                while inner is not None:
                    stack.append(inner)
                    inner = inner.next_op
    return out
