"""``memref.reinterpret_cast`` as PTOAS's MLIR verifies it (``pypto.ptoas.dialect.memref_compat``)
and its C++ (GM pointer arithmetic)."""

from __future__ import annotations

import re

import pytest

from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.pto_text import parse_pto, verify_pto

KERNEL = """\
module {
  func.func @k(%dst: memref<64xi16, #pto.address_space<gm>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %off = arith.constant OFF : index
    %src = memref.reinterpret_cast %dst to offset: [%off], sizes: [%c1, %c16], strides: [%c16, %c1] : memref<64xi16, #pto.address_space<gm>> to memref<ROWSx16xi16, strided<[16, 1], offset: ?>, #pto.address_space<gm>>
    return
  }
}
"""


def _module(off: int = 0, rows: str = "1"):
    module = parse_pto(KERNEL.replace("OFF", str(off)).replace("ROWS", rows), "k.pto")
    verify_pto(module)
    return module


def test_static_result_of_dynamic_size_operands_is_accepted() -> None:
    """MLIR (PTOAS) takes ``sizes: [%c1, %c16]`` to a static ``1x16`` result; xDSL alone rejects it."""
    _module()
    _module(rows="?")


def test_gm_reinterpret_cast_is_pointer_arithmetic() -> None:
    """No offset: the source pointer itself; an offset: ``__gm__ T* v = src + off;`` (as PTOAS)."""
    assert not re.search(r"__gm__ int16_t\* v\d+ = ", emit_cpp(_module(0)))
    assert re.search(r"__gm__ int16_t\* v\d+ = v1 \+ v\d+;", emit_cpp(_module(16)))


def test_static_sizes_still_checked() -> None:
    text = """\
module {
  func.func @k(%dst: memref<64xi16, #pto.address_space<gm>>) {
    %src = memref.reinterpret_cast %dst to offset: [0], sizes: [2, 16], strides: [16, 1] : memref<64xi16, #pto.address_space<gm>> to memref<1x16xi16, strided<[16, 1]>, #pto.address_space<gm>>
    return
  }
}
"""
    with pytest.raises(Exception, match="size = 2 instead of 1"):
        verify_pto(parse_pto(text, "k.pto"))
