"""``fingerprint(op)``: what an in-place edit of xDSL IR changes, cheap to compare.

One mechanism for "did this IR change?": the pass-dump writer prints a pass's
output only when it differs from its input, and the device interpreter
recompiles a kernel only when its module was edited (on every run: it is on the
interpreter's per-run path).

An owner that will not edit its IR again may :func:`seal` it: consumers then trust the object's identity
(the device interpreter looks a sealed module's compiled plan up with no walk).
"""

from __future__ import annotations

from xdsl.ir import Operation


def fingerprint(op: Operation) -> list[object]:
    """Everything the printers and the interpreter read from ``op`` and what it contains, as the objects
    themselves (held, so no ``id`` is reused): two fingerprints are equal iff nothing was replaced,
    added, moved or renamed. xDSL attributes are immutable and xDSL replaces an op's operand tuple on
    every operand update (RAUW included), so an op whose properties, types, operands or name hints
    changed yields a different list. Far cheaper than printing.

    (A hand-rolled walk over xDSL's linked lists (``_first_block``/``_next_block``,
    ``_first_op``/``_next_op``) and the fields behind its properties (``_operands``, ``_type``, ``_name``,
    ``_args``): xDSL's generator-based ``walk``, its ``OpOperands`` views and its property calls cost
    several times more per op. xDSL is pinned.)"""
    out: list[object] = []
    append, extend = out.append, out.extend
    stack = [op]
    pop, push = stack.pop, stack.append
    while stack:
        o = pop()
        extend((o, o.location, o._operands))  # noqa: SLF001 -- the tuple itself; see the docstring
        props, attrs = o.properties, o.attributes
        if props:
            extend(props.items())
        if attrs:
            extend(attrs.items())
        for r in o.results:
            extend((r, r._type, r._name))  # noqa: SLF001
        for region in o.regions:
            append(region)
            block = region._first_block  # noqa: SLF001
            while block is not None:
                append(block)
                for a in block._args:  # noqa: SLF001
                    extend((a, a._type, a._name))  # noqa: SLF001
                inner = block._first_op  # noqa: SLF001
                while inner is not None:
                    push(inner)
                    inner = inner._next_op  # noqa: SLF001
                block = block._next_block  # noqa: SLF001
    return out


_SEALED = "_pypto_sealed"


def seal(op: Operation) -> None:
    """Declare ``op`` final: its owner edits neither it nor anything it contains from now on.

    Consumers that would :func:`fingerprint` it on every use may trust its identity instead (an edit made
    after sealing is not seen). The kernel units the runtime parses from their ``.pto`` text are sealed."""
    setattr(op, _SEALED, True)


def is_sealed(op: Operation) -> bool:
    """Whether :func:`seal` was called on ``op``."""
    return getattr(op, _SEALED, False)
