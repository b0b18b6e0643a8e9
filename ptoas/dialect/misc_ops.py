"""Runtime queries and core sections.

::

    %b = pto.get_block_idx           (i64; also get_block_num, get_subblock_idx, get_subblock_num)
    pto.section.cube { ... }         (#if defined(__DAV_CUBE__) ... #endif)
    pto.section.vector { ... }
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import i64
from xdsl.ir import Block
from xdsl.irdl import irdl_op_definition, region_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator, Pure

from .base import PTOOp


class _QueryOp(PTOOp):
    """A runtime query returning i64."""

    VALUE_OF_OPERANDS: ClassVar[bool] = True

    result = result_def(i64)
    traits = traits_def(Pure())
    assembly_format = "attr-dict"


@irdl_op_definition
class GetBlockIdxOp(_QueryOp):
    """Index of this core in the launch."""

    name = "pto.get_block_idx"


@irdl_op_definition
class GetBlockNumOp(_QueryOp):
    """Number of cores in the launch."""

    name = "pto.get_block_num"


@irdl_op_definition
class GetSubBlockIdxOp(_QueryOp):
    """Index of this vector core in its group (0..1)."""

    name = "pto.get_subblock_idx"


@irdl_op_definition
class GetSubBlockNumOp(_QueryOp):
    """Number of vector cores in a group."""

    name = "pto.get_subblock_num"


class _SectionOp(PTOOp):
    """Code for one core kind only; one block, no terminator."""

    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    @classmethod
    def parse(cls, parser: Parser) -> _SectionOp:
        """Parse ``{ ... }`` and an optional attribute dictionary."""
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        if not body.blocks:
            body.add_block(Block())
        return cls.build(regions=[body], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """Print `` { ... }``."""
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class SectionCubeOp(_SectionOp):
    """Cube-core code (``__DAV_CUBE__``)."""

    name = "pto.section.cube"


@irdl_op_definition
class SectionVectorOp(_SectionOp):
    """Vector-core code (``__DAV_VEC__``)."""

    name = "pto.section.vector"


MISC_OPS: tuple[type[PTOOp], ...] = (
    GetBlockIdxOp,
    GetBlockNumOp,
    GetSubBlockIdxOp,
    GetSubBlockNumOp,
    SectionCubeOp,
    SectionVectorOp,
)

