"""Identity passes for the Default pipeline's names that no module implements.

:func:`register_placeholders` runs when the registry loads (after every other
module of ``pypto.passes`` registered its passes): for each name of
``DEFAULT_PIPELINE`` still unregistered it registers a :class:`PyPTOPass`
with that ``PASS_NAME`` / kebab-case ``name`` that leaves the IR unchanged,
so dump names and numbers match upstream while the real pass is missing. A
real pass added later in its own module wins automatically.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from .base import PyPTOPass
from .pipeline_order import DEFAULT_PIPELINE
from .registry import is_registered, register_pass


@dataclass(frozen=True)
class PlaceholderPass(PyPTOPass):
    """A pipeline pass with no implementation yet: the identity."""

    PASS_NAME: ClassVar[str] = "Placeholder"
    name: ClassVar[str] = "placeholder"
    IS_PLACEHOLDER: ClassVar[bool] = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Leave the module unchanged."""


def make_placeholder(pass_name: str, kebab_name: str) -> type[PyPTOPass]:
    """A new identity pass class named ``pass_name`` / ``kebab_name``.

    A plain subclass: it adds no field, so :class:`PlaceholderPass`'s dataclass methods serve it
    (``dataclass()`` on each of the 23 placeholders was a sizeable part of a fresh compile's set-up)."""
    doc = f"{pass_name}: not implemented yet; leaves the IR unchanged (pipeline placeholder)."
    body = {"PASS_NAME": pass_name, "name": kebab_name, "__doc__": doc, "__module__": __name__,
            "__setattr__": _frozen, "__delattr__": _frozen}  # fmt: skip
    return type(pass_name, (PlaceholderPass,), body)


def _frozen(self: object, name: str, *_: object) -> None:
    """Frozen as a dataclass instance is (the inherited check exempts subclasses)."""
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def register_placeholders() -> list[str]:
    """Register an identity pass for every unregistered pipeline name; returns
    the PyPTO names registered now."""
    added: list[str] = []
    for pass_name, kebab_name in DEFAULT_PIPELINE:
        if not is_registered(kebab_name):
            register_pass(make_placeholder(pass_name, kebab_name))
            added.append(pass_name)
    return added
