"""The ``pl`` front end: Python AST -> xDSL IR (docs/ir.md). The kernel body
is parsed, never executed. ``pypto.language`` re-exports its public names
(``pl.parse`` / ``pl.loads`` are :mod:`.parser`'s)."""
