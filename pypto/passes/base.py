"""What every PyPTO pass shares: the pass base classes and naming helpers.

A pass has two names: ``PASS_NAME`` (CamelCase, as upstream PyPTO prints it in
dump file names, ``09_after_OutlineIncoreScopes.py``) and ``name`` (kebab-case,
the xDSL / ``pypto-opt -p`` spelling, ``outline-incore-scopes``). By default
``PASS_NAME`` is the class name and ``name`` its spelling in
:data:`~pypto.passes.pipeline_order.KEBAB_NAMES` (else :func:`.registry.kebab`).

Passes name the values they create the way upstream does (docs/ir.md "Names"):
from the *base* of an existing name hint (``out__ssa_v1`` -> ``out``) plus a
suffix (``out__tile``); repeats are numbered ``_1``, ``_2`` by the printers
(xDSL strips such suffixes from name hints).
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from pypto.core.analysis.functions import functions
from pypto.dialects.enums import FunctionType

from .registry import kebab_name

# ``x__ssa_v0``, ``t__tmp_v3``, ``acc__iter_v1``, ``acc__rv_v2``, ``x__phi_v3``, ``k__idx_v0``
_VERSION_SUFFIX = re.compile(r"__[a-z]+_v\d+$")
_SSA_VERSION = re.compile(r"^(?P<base>.+)__ssa_v(?P<n>\d+)$")

DEFAULT_BASE = "t"
"""The base name of a value that has no name hint (upstream's ``t__tmp_vN``)."""


@dataclass(frozen=True)
class PyPTOPass(ModulePass):
    """Base of PyPTO's passes: an xDSL ModulePass with its PyPTO name.

    Subclasses implement :meth:`apply`; ``PASS_NAME`` and ``name`` default to
    the class name and its kebab-case spelling (see the module docstring). A
    pass must leave the module verifying.
    """

    PASS_NAME: ClassVar[str]
    name: ClassVar[str]
    DIAGNOSTICS: ClassVar[dict[str, str]] = {}
    """The perf hints this pass emits, check name -> code (names ``disabled_diagnostics`` / ``werror`` know)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "PASS_NAME" not in cls.__dict__:
            cls.PASS_NAME = cls.__name__
        if "name" not in cls.__dict__:
            cls.name = kebab_name(cls.PASS_NAME)

    @abstractmethod
    def apply(self, ctx: Context, op: ModuleOp) -> None: ...


@dataclass(frozen=True)
class FunctionPass(PyPTOPass):
    """A pass that rewrites each function on its own: :meth:`run_on_function`
    runs on every function with a body whose kind is in ``FUNCTION_TYPES``
    (every kind when None), in module order."""

    FUNCTION_TYPES: ClassVar[Collection[FunctionType] | None] = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in functions(op, self.FUNCTION_TYPES):
            self.run_on_function(f, ctx)

    @abstractmethod
    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None: ...


def base_name(hint: str | None, default: str = DEFAULT_BASE) -> str:
    """A name hint without its version suffix: ``out__ssa_v1`` -> ``out``,
    ``t__tmp_v0`` -> ``t``; ``default`` when there is no hint."""
    if not hint:
        return default
    stripped = _VERSION_SUFFIX.sub("", hint)
    return stripped or default


def value_base(value: SSAValue, default: str = DEFAULT_BASE) -> str:
    """The base name of a value's name hint (see :func:`base_name`)."""
    return base_name(value.name_hint, default)


def function_names(f: func.FuncOp) -> set[str]:
    """Every name hint used in a function (arguments and results, nested too)."""
    names: set[str] = set()
    for block in f.body.blocks:
        names.update(a.name_hint for a in block.args if a.name_hint)
    for op in f.body.walk():
        names.update(r.name_hint for r in op.results if r.name_hint)
        for region in op.regions:
            for block in region.blocks:
                names.update(a.name_hint for a in block.args if a.name_hint)
    return names


class NameGen:
    """Deterministic names inside one function.

    xDSL strips a ``_<digits>`` suffix from every name hint, so the IR cannot
    hold ``a__tile_1``: passes give repeated names the same hint (``a__tile``)
    and both printers make them unique in print order (``a__tile``,
    ``a__tile_1``, ...), which is upstream's numbering. This class tracks the
    names in use, for :meth:`next_version`.
    """

    def __init__(self, taken: Iterable[str] = ()):
        self.taken: set[str] = set(taken)

    @classmethod
    def for_function(cls, f: func.FuncOp) -> NameGen:
        return cls(function_names(f))

    def fresh(self, name: str) -> str:
        """``name`` as a hint (recorded as taken); the printers number repeats."""
        self.taken.add(name)
        return name

    def next_version(self, hint: str | None, default: str = DEFAULT_BASE) -> str:
        """The next SSA version of a name: ``out__ssa_v0`` -> ``out__ssa_v1``
        (the smallest version not taken); a name without a version is reused
        as is (the DSL allows rebinding a name)."""
        if not hint:
            return self.fresh(default)
        m = _SSA_VERSION.match(hint)
        if m is None:
            self.taken.add(hint)
            return hint
        base, n = m.group("base"), int(m.group("n")) + 1
        while f"{base}__ssa_v{n}" in self.taken:
            n += 1
        name = f"{base}__ssa_v{n}"
        self.taken.add(name)
        return name


def index_constant(value: int) -> arith.ConstantOp:
    """An unnamed ``arith.constant <value> : index`` (printed inline)."""
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def parent_function(op: Operation) -> func.FuncOp | None:
    """The ``func.func`` an op is nested in, if any."""
    p = op.parent_op()
    while p is not None and not isinstance(p, func.FuncOp):
        p = p.parent_op()
    return p


def is_inside(value: SSAValue, op: Operation) -> bool:
    """Whether ``value`` is defined inside ``op``'s regions (not by ``op`` itself)."""
    owner = value.owner
    if isinstance(owner, Operation):
        return owner is not op and op.is_ancestor(owner)
    return op.is_ancestor(owner)
