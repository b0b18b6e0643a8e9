"""Type annotations -> xDSL types (``pl.Tensor[...]``, ``pl.Tile[...]``,
``pl.Scalar[...]``, ``pl.Ptr``, ``pl.Out[...]``, ``tuple[...]``, ``pld.CommCtx``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute

from pypto.diagnostics import Diagnostic, Severity, emit
from pypto.dialects.dtypes import dtype_type
from pypto.dialects.enums import MemorySpace, ParamDirection, TileLayout
from pypto.dialects.types import DYNAMIC, MAX_DIM, MemRefAttr, PtrType, TensorType, TileType, TileViewAttr
from pypto.errors import ParserTypeError

from . import dsl_objects as D
from .constexpr import NotConstant, evaluate, plain
from .source import Source, dotted


@dataclass
class Annot:
    """A parsed annotation: its type (None for a bare ``pl.Tensor`` that takes
    shape and dtype from a sample argument) and its parameter direction."""

    type: Attribute | None
    direction: ParamDirection = ParamDirection.In
    bare_kind: str | None = None  # "Tensor" when the type comes from a sample
    # A ``pl.Tile[shape, dtype]`` with no memory space, MemRef or TileView: on an
    # assignment it constrains shape and dtype only and the value keeps its own
    # space (``acc: pl.Tile[[64, 64], pl.FP32] = pl.matmul(l, r)`` is an Acc tile).
    space_free: bool = False


def _items(node: ast.Subscript) -> list[ast.expr]:
    s = node.slice
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


class AnnotationParser:
    """Turns annotation expressions into types, raising located ParserTypeErrors."""

    def __init__(self, src: Source):
        self.src = src

    def fail(self, message: str, node: ast.AST, hint: str | None = None) -> ParserTypeError:
        err = self.src.error(ParserTypeError, message, node, hint)
        assert isinstance(err, ParserTypeError)
        return err

    def const(self, node: ast.AST) -> object:
        try:
            return evaluate(node, self.src.globals)
        except NotConstant as e:
            raise self.fail(e.message, e.node) from None

    def dtype(self, node: ast.AST) -> Attribute:
        v = self.const(node)
        if not isinstance(v, D.DType):
            raise self.fail("expected a dtype such as pl.FP32", node)
        return dtype_type(v.dtype_name)

    def shape(self, node: ast.AST) -> list[int]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail("expected a shape list such as [128, 128]", node)
        dims: list[int] = []
        for e in node.elts:
            if isinstance(e, ast.Call) and dotted(e.func) == "pl.dynamic":
                dims.append(DYNAMIC)
                continue
            v = plain(self.const(e))
            if isinstance(v, D.DynVar):
                dims.append(DYNAMIC)
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise self.fail("shape dimensions must be integer literals or pl.dynamic(...) dimensions", e)
            if v <= 0 and v != DYNAMIC:  # -1 is how printed IR writes a dynamic dimension
                raise self.fail(f"shape dimension {v} is not positive", e, hint='a run-time extent is pl.dynamic("M")')
            if v > MAX_DIM:  # an MLIR shape dimension is an int64
                raise self.fail(f"shape dimension {v} is too large: a dimension is at most {MAX_DIM} (i64)", e)
            dims.append(v)
        return dims

    def memref(self, node: ast.Call) -> MemRefAttr:
        if len(node.args) != 3:
            raise self.fail("pl.MemRef takes (base, offset, size)", node)
        base_node = node.args[0]
        if isinstance(base_node, ast.Name):
            base = base_node.id
        elif isinstance(base_node, ast.Constant) and isinstance(base_node.value, str):
            base = base_node.value
        else:
            raise self.fail("the MemRef base must be an allocation name", base_node)
        offset, size = plain(self.const(node.args[1])), plain(self.const(node.args[2]))
        if not isinstance(offset, int) or not isinstance(size, int):
            raise self.fail("the MemRef offset and size must be integers", node)
        return MemRefAttr.get(base, offset, size)

    def tile_view(self, node: ast.Call) -> TileViewAttr:
        v = self.const(node)
        assert isinstance(v, D.TileView)
        bl = v.blayout or TileLayout.row_major
        sl = v.slayout or TileLayout.none_box
        if not isinstance(bl, TileLayout) or not isinstance(sl, TileLayout):
            raise self.fail("TileView layouts must be pl.TileLayout members", node)
        fractal = plain(v.fractal)
        if isinstance(fractal, bool) or not isinstance(fractal, int) or fractal <= 0:
            raise self.fail(f"TileView fractal= must be a positive integer, got {fractal!r}", node)
        return TileViewAttr.get(bl, sl, fractal)

    def parse(self, node: ast.expr) -> Annot:
        """A parameter / assignment annotation."""
        path = dotted(node)
        if path in ("pl.Tensor", "pl.Tile"):
            return Annot(None, bare_kind=path[3:])
        if path == "pl.Ptr":
            return Annot(PtrType())
        if path == "pld.CommCtx":  # the handle pld.get_comm_ctx returns: an index (the context is implicit)
            return Annot(IndexType())
        if path is not None and path.startswith("pl."):
            try:
                v = evaluate(node)
            except NotConstant:
                v = None
            if isinstance(v, D.DType):
                return Annot(dtype_type(v.dtype_name))
        if isinstance(node, ast.Subscript):
            head = dotted(node.value)
            items = _items(node)
            if head in ("pl.Out", "pl.InOut"):
                if len(items) != 1:
                    raise self.fail(f"{head} takes one type", node)
                nested = dotted(items[0].value) if isinstance(items[0], ast.Subscript) else None
                if nested in ("pl.Out", "pl.InOut"):
                    raise self.fail(f"{head} wraps a type, not another direction ({nested})", items[0])
                inner = self.parse(items[0])
                direction = ParamDirection.Out if head == "pl.Out" else ParamDirection.InOut
                if (
                    direction is ParamDirection.InOut
                    and inner.type is not None
                    and not isinstance(inner.type, (TensorType, TileType))
                ):
                    raise self.fail("a Scalar parameter cannot be InOut", node)
                return Annot(inner.type, direction, inner.bare_kind)
            if head == "pl.Scalar":
                if len(items) != 1:
                    raise self.fail("pl.Scalar takes one dtype", node)
                return Annot(self.dtype(items[0]))
            if head == "pl.Tensor":
                return Annot(self.tensor(node, items))
            if head == "pld.DistributedTensor":  # a window view: written in place, visible to the peers
                return Annot(self.tensor(node, items), ParamDirection.InOut)
            if head == "pl.Tile":
                return Annot(self.tile(node, items), space_free=len(items) == 2)
        raise self.fail(
            "unsupported type annotation",
            node,
            hint="use pl.Tensor[[...], dtype], pl.Tile[[...], dtype, pl.Mem.X], pl.Scalar[dtype], pl.Out[...]",
        )

    def tensor(self, node: ast.Subscript, items: list[ast.expr]) -> TensorType:
        if len(items) < 2:
            raise self.fail("pl.Tensor needs a shape and a dtype: pl.Tensor[[128, 128], pl.FP32]", node)
        memref = None
        for extra in items[2:]:
            if isinstance(extra, ast.Call) and dotted(extra.func) == "pl.MemRef":
                memref = self.memref(extra)
            elif isinstance(extra, ast.Call) and dotted(extra.func) == "pl.TensorView":
                continue
            else:
                raise self.fail(
                    "unsupported pl.Tensor annotation item (expected pl.MemRef(...) or pl.TensorView(...))", extra
                )
        return TensorType.get(self.shape(items[0]), self.dtype(items[1]), memref)

    def tile(self, node: ast.Subscript, items: list[ast.expr]) -> TileType:
        if len(items) < 2:
            raise self.fail("pl.Tile needs a shape and a dtype: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec]", node)
        shape = self.shape(items[0])
        memref: MemRefAttr | None = None
        view: TileViewAttr | None = None
        space = MemorySpace.Vec
        for extra in items[2:]:
            fn = dotted(extra.func) if isinstance(extra, ast.Call) else None
            if isinstance(extra, ast.Subscript) and isinstance(extra.value, ast.Call):
                if dotted(extra.value.func) == "pl.MemRef":
                    self.slotted(extra.value)
                    continue
            if fn == "pl.MemRef":
                memref = self.memref(extra)  # type: ignore[arg-type]
            elif fn == "pl.TileView":
                view = self.tile_view(extra)  # type: ignore[arg-type]
            else:
                v = self.const(extra)
                if not isinstance(v, MemorySpace):
                    raise self.fail(
                        "unsupported pl.Tile annotation item (expected pl.MemRef, pl.Mem.X or pl.TileView)", extra
                    )
                if v is MemorySpace.DDR:
                    raise self.fail("a tile cannot live in DDR; use pl.Tensor", extra)
                space = v
        return TileType.get(shape, self.dtype(items[1]), space, memref, view)

    def slotted(self, call: ast.Call) -> None:
        """``pl.MemRef("name", slots=N)[i]``: checked, then left to the planner (a located warning says
        so): the tile gets the planner's own buffer, so the numbers are the same but the slot rotation
        (which only removes a same-buffer hazard between iterations) is not modelled."""
        slots = next((k.value for k in call.keywords if k.arg == "slots"), None)
        n = self.const(slots) if slots is not None else None
        if not call.args or not isinstance(self.const(call.args[0]), str):
            raise self.fail('a slotted MemRef needs a name: pl.MemRef("ub", slots=2)[i % 2]', call)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise self.fail("slots= must be a positive integer: pl.MemRef(\"ub\", slots=2)[i % 2]", slots or call)
        emit(
            Diagnostic(
                Severity.WARNING,
                f"slotted buffer pl.MemRef(..., slots={n})[...]: the memory planner places this tile in one "
                "buffer (same results; the slot rotation that lets iterations overlap is not modelled)",
                self.src.span(call),
                hint="for overlapping iterations, use pl.pipeline(n, stage=2)",
                source_lines=self.src.lines,
            )
        )

    def returns(self, node: ast.expr | None) -> list[Attribute] | None:
        """A function's ``-> T`` / ``-> tuple[A, B]`` (None when absent)."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None if node is None else []
        if isinstance(node, ast.Subscript) and dotted(node.value) in ("tuple", "pl.Tuple", "typing.Tuple", "Tuple"):
            return [self.required(e) for e in _items(node)]
        return [self.required(node)]

    def required(self, node: ast.expr) -> Attribute:
        a = self.parse(node)
        if a.type is None:
            raise self.fail(f"a bare pl.{a.bare_kind} needs a shape and dtype here", node)
        return a.type
