"""A pass plugin for the lit tests: ``test-boom`` raises (a PyPTO bug)."""

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pypto.passes.base import PyPTOPass
from pypto.passes.registry import register_pass


@register_pass
@dataclass(frozen=True)
class TestBoom(PyPTOPass):
    PASS_NAME: ClassVar[str] = "TestBoom"
    name: ClassVar[str] = "test-boom"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("boom in a test pass")
