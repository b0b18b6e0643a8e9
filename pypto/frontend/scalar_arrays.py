"""On-core scalar arrays: ``arr = pl.array.create(n, pl.INT32)``, ``arr[i] = v`` / ``x = arr[i]`` and
their spelled forms ``pl.array.update_element(arr, i, v)`` / ``pl.array.get_element(arr, i)``.

Upstream's ``pl.Array[n, dtype]`` is an on-core array whose update is functional (it rebinds the
name, so an array assigned in a loop is a carried value). Here it is a ``[1, n']`` Vec tile (``n``
rounded up to whole 32-byte rows) written element by element with ``pl.tile.write`` (``pto.tsetval``)
and read with ``pl.tile.read`` (``pto.tgetval``): the IR, both text forms, the lowering and the torch
form are those of the tile ops. Arrays are not function parameters (upstream: they do not cross
function boundaries).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from xdsl.ir import Attribute, SSAValue

from pypto.dialects.dtypes import dtype_bits, dtype_type, is_dtype
from pypto.dialects.enums import FunctionType, MemorySpace
from pypto.dialects.op_base import describe_type
from pypto.dialects.types import TileType
from pypto.errors import InvalidOperationError, ParserTypeError, UnsupportedFeatureError

from .constexpr import NotConstant, evaluate
from .scopes import set_name
from .source import dotted
from .sugar import OPS

if TYPE_CHECKING:
    from .builder import FunctionBuilder

ROW_BYTES = 32
"""A Vec tile row holds a whole number of 32-byte blocks: an array's extent is rounded up to it."""


class ScalarArrayMixin:
    """Scalar-array handling for :class:`FunctionBuilder` (``self.scalar_arrays``: name -> extent)."""

    def is_scalar_array(self: FunctionBuilder, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.scalar_arrays

    def scalar_array_create(self: FunctionBuilder, name: str, call: ast.Call) -> None:
        """``name = pl.array.create(n, dtype)``: a zero-based array of ``n`` scalars of ``dtype``."""
        if self.kind is FunctionType.Orchestration:
            raise self.fail(UnsupportedFeatureError, "pl.array.create of scalars belongs in InCore code "
                            "(an on-core array); Orchestration code takes pl.array.create(n, pl.TASK_ID)", call)
        kw = {k.arg: k.value for k in call.keywords}
        n_node = call.args[0] if call.args else kw.get("extent", kw.get("size"))
        dt_node = call.args[1] if len(call.args) > 1 else kw.get("dtype")
        if n_node is None or dt_node is None:
            raise self.fail(InvalidOperationError, "pl.array.create takes (extent, dtype), e.g. "
                            "pl.array.create(16, pl.INT32)", call)
        try:
            n = evaluate(n_node, self.const_env())
        except NotConstant as e:
            raise self.fail(ParserTypeError, f"pl.array.create: the extent must be a compile-time integer ({e.message})",
                            n_node) from None
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise self.fail(ParserTypeError, f"pl.array.create: the extent must be a positive integer, got {n!r}", n_node)
        try:
            dt = evaluate(dt_node, self.src.globals)
        except NotConstant:
            dt = None
        dname = getattr(dt, "dtype_name", None)
        elem = dtype_type(dname) if dname is not None else None
        if elem is None or not is_dtype(elem) or dtype_bits(elem) < 8:
            raise self.fail(ParserTypeError, "pl.array.create: the dtype must be a scalar dtype such as pl.INT32",
                            dt_node)
        per_row = max(1, ROW_BYTES * 8 // dtype_bits(elem))
        padded = -(-n // per_row) * per_row
        attrs = {"shape": [1, padded], "dtype": dt, "target_memory": MemorySpace.Vec}
        v = self.make_op(OPS["pl.tile.create"], {}, _attrs(attrs), call)
        set_name(v, name)
        self.scope.assign(name, v)
        self.scalar_arrays[name] = n
        self.task_arrays.pop(name, None)
        self.task_handles.pop(name, None)

    def scalar_array_rebind(self: FunctionBuilder, name: str, value: ast.expr) -> None:
        """``name = value``: ``name`` is an array after ``pl.array.update_element(arr, ...)``, else not."""
        if isinstance(value, ast.Call) and dotted(value.func) == "pl.array.update_element" and value.args \
                and self.is_scalar_array(value.args[0]):
            self.scalar_arrays[name] = self.scalar_arrays[value.args[0].id]  # type: ignore[attr-defined]
        else:
            self.scalar_arrays.pop(name, None)

    def scalar_array_indices(self: FunctionBuilder, name: str, index: ast.expr) -> list[SSAValue]:
        """``[0, i]`` of ``arr[i]`` (one index; a constant one is checked against the extent)."""
        if isinstance(index, (ast.Tuple, ast.Slice)):
            raise self.fail(ParserTypeError, f"'{name}' is a 1-D scalar array: index it with one integer, {name}[i]",
                            index)
        n = self.scalar_arrays[name]
        try:
            c = evaluate(index, self.const_env())
        except NotConstant:
            c = None
        if isinstance(c, int) and not isinstance(c, bool) and not 0 <= c < n:
            raise self.fail(InvalidOperationError, f"index {c} is out of range for '{name}' (extent {n})", index)
        zero = ast.copy_location(ast.Constant(0), index)
        return self.index_list(ast.copy_location(ast.List([zero, index], ast.Load()), index))

    def scalar_array_read(self: FunctionBuilder, arr: ast.expr, index: ast.expr, node: ast.expr) -> SSAValue:
        """``arr[i]`` / ``pl.array.get_element(arr, i)``: element ``i`` as a scalar."""
        assert isinstance(arr, ast.Name)
        x = self.value(arr)
        idx = self.scalar_array_indices(arr.id, index)
        return self.make_op(OPS["pl.tile.read"], {"input": x, "indices": idx}, {}, node)

    def scalar_array_update(self: FunctionBuilder, arr: ast.expr, index: ast.expr, value: ast.expr,
                            node: ast.AST) -> SSAValue:
        """``arr[i] = v`` / ``pl.array.update_element(arr, i, v)``: the array with element ``i`` set."""
        assert isinstance(arr, ast.Name)
        x = self.value(arr)
        assert isinstance(x.type, TileType)
        elem = x.type.element_type
        idx = self.scalar_array_indices(arr.id, index)
        v = self.value(value, elem)
        if isinstance(v.type, TileType) or hasattr(v.type, "get_shape"):
            raise self.fail(ParserTypeError, f"'{arr.id}' holds scalars: the value must be a scalar, got "
                            f"{describe_type(v.type)}", value)
        if v.type != elem:
            v = self.cast_scalar(v, elem, value)
        return self.make_op(OPS["pl.tile.write"], {"target": x, "indices": idx, "value": v}, {}, node)

    def scalar_array_store(self: FunctionBuilder, target: ast.Subscript, value: ast.expr) -> None:
        """``arr[i] = v``: rebinds ``arr`` to the updated array."""
        assert isinstance(target.value, ast.Name)
        name = target.value.id
        v = self.scalar_array_update(target.value, target.slice, value, target)
        set_name(v, name)
        self.scope.assign(name, v)

    def scalar_array_call(self: FunctionBuilder, path: str, node: ast.Call) -> SSAValue:
        """``pl.array.get_element(arr, i)`` / ``pl.array.update_element(arr, i, v)``."""
        want = 2 if path == "pl.array.get_element" else 3
        if len(node.args) != want or node.keywords:
            form = "(array, index)" if want == 2 else "(array, index, value)"
            raise self.fail(InvalidOperationError, f"{path} takes {form} positionally", node)
        if not self.is_scalar_array(node.args[0]):
            raise self.fail(ParserTypeError, f"{path}: '{ast.unparse(node.args[0])}' is not an array from "
                            "pl.array.create(n, dtype)", node.args[0])
        if want == 2:
            return self.scalar_array_read(node.args[0], node.args[1], node)
        return self.scalar_array_update(node.args[0], node.args[1], node.args[2], node)


def _attrs(values: dict[str, Any]) -> dict[str, Attribute]:
    """``pl.tile.create``'s properties from DSL values (through its argument codecs)."""
    spec = {a.name: a for a in OPS["pl.tile.create"].DSL_ARGS}
    return {k: spec[k].codec.to_attr(v) for k, v in values.items()}
