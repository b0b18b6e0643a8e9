"""The PassManager: an ordered list of passes, run with verification after
each one and a callback (the dump writer) after each successful pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from pypto.errors import Error

from .context import make_context
from .passes.base import PyPTOPass
from .passes.convert_tensor_to_tile_ops import ConvertTensorToTileOps
from .passes.outline_incore_scopes import OutlineIncoreScopes
from .program import Program

PassCallback = Callable[[int, type[PyPTOPass], Program], None]
"""Called after pass number ``index`` (1-based) has run and verified."""

DEFAULT_PASSES: tuple[type[PyPTOPass], ...] = (OutlineIncoreScopes, ConvertTensorToTileOps)
"""The pipeline ``compile`` runs (the upstream passes implemented so far)."""


class VerificationError(Error):
    """The IR failed verification after a pass (the pass is named)."""

    def __init__(self, pass_name: str, detail: str):
        self.pass_name = pass_name
        self.detail = detail
        super().__init__(f"IR verification failed after {pass_name}: {detail}")


class PassManager:
    """Runs an ordered list of pass classes over a Program, in place."""

    def __init__(self, passes: Sequence[type[PyPTOPass]] | None = None, *, verify: bool = True):
        self.passes: list[type[PyPTOPass]] = list(DEFAULT_PASSES if passes is None else passes)
        self.verify = verify

    @property
    def pass_names(self) -> list[str]:
        """The passes' CamelCase names, in order (as the dumps name them)."""
        return [p.PASS_NAME for p in self.passes]

    def run(self, program: Program | ModuleOp, callback: PassCallback | None = None, ctx: Context | None = None) -> Program:
        """Run every pass over ``program`` (modified in place) and return it.

        After each pass the module is verified (``VerificationError`` names the
        pass on failure), then ``callback(index, pass_class, program)`` runs.
        """
        prog = program if isinstance(program, Program) else Program(program)
        ctx = ctx or make_context()
        for index, pass_cls in enumerate(self.passes, start=1):
            pass_cls().apply(ctx, prog.module)
            if self.verify:
                try:
                    prog.module.verify()
                except VerifyException as e:
                    raise VerificationError(pass_cls.PASS_NAME, str(e)) from e
            if callback is not None:
                callback(index, pass_cls, prog)
        return prog
