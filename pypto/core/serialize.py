"""``pypto.ir.serialize`` / ``deserialize``: a program (or one function of it) as bytes and back.

The bytes are the program's MLIR text (UTF-8, with locations), so a round trip keeps every op,
type and DSL location; upstream uses msgpack, and only the API is shared.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, StringAttr

from .function import Function
from .program import Program

_MAGIC = b"pypto-ir-mlir\n"


def serialize(node: Program | Function) -> bytes:
    """The bytes of a Program or Function (:func:`deserialize` reads them back)."""
    if isinstance(node, Function):
        module = ModuleOp([node.op.clone()])
        module.sym_name = StringAttr(node.name)
        node = Program(module)
    if not isinstance(node, Program):
        raise TypeError(f"serialize takes a Program or a Function, got {type(node).__name__}")
    return _MAGIC + node.as_mlir().encode()


def deserialize(data: bytes) -> Program:
    """The Program :func:`serialize` wrote (a serialized Function comes back as its one-function program,
    which has the function's ``name``, ``params`` and ``return_types``)."""
    from .mlir_text import parse_mlir

    if not isinstance(data, bytes | bytearray) or not data.startswith(_MAGIC):
        raise ValueError("deserialize: not bytes written by pypto.ir.serialize")
    return Program(parse_mlir(bytes(data[len(_MAGIC) :]).decode(), "<serialized>"))
