"""The ``pl`` front end: Python AST -> xDSL IR (docs/ir.md). The kernel body
is parsed, never executed."""

from .parser import loads, parse, program_from_class, program_from_function, python_source

__all__ = ["loads", "parse", "program_from_class", "program_from_function", "python_source"]
