"""One kernel's ``.pto`` unit, built by one function for ``ir.compile`` and the runtime.

::

    unit = build_kernel_unit(func, arch, emit_source_loc)   # PtoUnit(name, module, text)
    module = read_kernel_unit(path, func, arch)             # the file compile wrote, as it is now

``ir.compile`` (``build.write_codegen``) writes ``unit.text`` to
``<output_dir>/ptoas/<unit>.pto`` and emits the C++ from ``unit.module``. The
runtime runs that file when there is one (:func:`read_kernel_unit`: a user's
edit to it is what runs) and otherwise (a bare Program run) the module of
``build_kernel_unit(..., emit_source_loc=True)`` (``lower_function``; the text
it would print first is not needed there). The arch is :func:`.program.target_arch_of`
on both paths.

DSL locations: compile's file carries ``loc(...)`` on its ops by default
(``PYPTO_EMIT_PTO_LOC``, on unless ``0``) and keeps them. A file without any
(``emit_source_loc=False``) takes the DSL locations of the unit built
with locations on, op for op, while its ops are still the built unit's ops in
the same order (an edited constant keeps them; an added, removed or changed op
drops them all): the ops then point at their ``.pto`` lines only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from pypto.ptoas.pto_text import has_locations, parse_pto, print_pto

from .function import lower_function


@dataclass
class PtoUnit:
    """A kernel's ``.pto`` module and its text as printed right after the build (before any ptoas pass)."""

    name: str
    module: ModuleOp
    text: str


def build_kernel_unit(func: FuncOp, arch: str, emit_source_loc: bool) -> PtoUnit:
    """The ``.pto`` unit of the on-chip pl function ``func`` for ``arch`` (``a2a3``/``a5``),
    with ``loc(...)`` of the DSL source on its ops when ``emit_source_loc``."""
    module = lower_function(func, emit_source_loc=emit_source_loc, arch=arch)
    return PtoUnit(func.sym_name.data, module, print_pto(module))


def read_kernel_unit(path: Path, func: FuncOp, arch: str) -> ModuleOp:
    """The unit in ``path`` (a ``ptoas/<unit>.pto`` compile wrote, edits and all), parsed;
    DSL locations from the file, else from ``func`` as the module docstring says.
    A syntax error is xDSL's ParseError located in ``path``."""
    module = parse_pto(path.read_text(encoding="utf-8"), str(path))
    if not has_locations(module):
        copy_locations(build_kernel_unit(func, arch, emit_source_loc=True).module, module)
    return module


def copy_locations(source: ModuleOp, dest: ModuleOp) -> bool:
    """Give ``dest``'s ops the locations of ``source``'s when both have the same ops (by name,
    in walk order); returns whether they did."""
    src_ops, dest_ops = list(source.walk()), list(dest.walk())
    if [op.name for op in src_ops] != [op.name for op in dest_ops]:
        return False
    for s, d in zip(src_ops, dest_ops, strict=True):
        d.location = s.location
    return True
