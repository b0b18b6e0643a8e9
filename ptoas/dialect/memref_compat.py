"""The ``memref`` dialect as PTOAS's MLIR verifies it.

xDSL's ``memref.reinterpret_cast`` rejects a static result size given by a dynamic size operand
(``sizes: [%c1, %c16]`` to ``memref<1x16xi16, ...>``); the MLIR PTOAS builds on accepts it and
checks only sizes that are static on both sides. :data:`MemRefPTOAS` is xDSL's ``memref`` with
that one op relaxed; everything else is xDSL's.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Dialect
from xdsl.utils.exceptions import VerifyException

_DYNAMIC_TO_STATIC = "Expected result type with dynamic size instead of"


class ReinterpretCastOp(memref.ReinterpretCastOp):
    """``memref.reinterpret_cast`` with MLIR's size rule (a dynamic operand may give a static size)."""

    def verify_(self) -> None:
        """Static sizes must agree; a dynamic size operand may have a static result dim."""
        result = self.result.type
        if isinstance(result, MemRefType) and len(result.shape) == len(self.static_sizes):
            for dim, (actual, expected) in enumerate(
                zip(result.get_shape(), self.static_sizes.get_values(), strict=True)
            ):
                if DYNAMIC_INDEX not in (expected, actual) and expected != actual:
                    raise VerifyException(
                        f"Expected result type with size = {expected} instead of {actual} in dim = {dim}"
                    )
        try:
            super().verify_()
        except VerifyException as e:
            if _DYNAMIC_TO_STATIC not in str(e):
                raise


MemRefPTOAS = Dialect(
    "memref",
    [ReinterpretCastOp if op is memref.ReinterpretCastOp else op for op in memref.MemRef.operations],
    list(memref.MemRef.attributes),
)
