"""Evaluate constant DSL expressions (enum members, dtypes, numbers, lists,
``pl.const``, ``pl.MemRef``, ``pl.TileView``) without executing user code."""

from __future__ import annotations

import ast
import enum
from collections.abc import Mapping
from typing import Any

from pypto.dialects import enums as E
from pypto.dialects.distributed_enums import AllreduceMode, NotifyOp, ReduceOp, WaitCmp

from . import dsl_objects as D
from .source import dotted

# ``pl.<Name>`` -> enum class.
ENUMS: dict[str, type[enum.Enum]] = {
    "Mem": E.MemorySpace,
    "MemorySpace": E.MemorySpace,
    "Level": E.Level,
    "Role": E.Role,
    "FunctionType": E.FunctionType,
    "PadValue": E.PadValue,
    "TileLayout": E.TileLayout,
    "AtomicType": E.AtomicType,
    "CastMode": E.CastMode,
    "ParamDirection": E.ParamDirection,
    "ForKind": E.ForKind,
    "ScopeMode": D.ScopeMode,
}


PLD_ENUMS: dict[str, type[enum.Enum]] = {
    e.__name__: e for e in (ReduceOp, NotifyOp, WaitCmp, AllreduceMode, E.AtomicType)
}
"""The ``pld.<Enum>.<member>`` constants (pypto.language.distributed)."""


class NotConstant(Exception):
    """The expression is not a compile-time constant; ``node`` says where."""

    def __init__(self, node: ast.AST, message: str):
        super().__init__(message)
        self.node = node
        self.message = message


class AdirValue(str):
    """``pl.adir.<name>``: a call-argument direction in printed dumps."""


class ValueInfo:
    """The static facts of an in-scope tensor or tile value, for ``x.shape``
    (a list of ints) and ``x.dtype`` (``pl.FP32``) in constant arguments."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: list[int] | None, dtype: D.DType):
        self.shape = shape  # None when a dimension is dynamic
        self.dtype = dtype


def resolve_pl(path: str) -> Any:
    """The constant a ``pl.X[.Y]`` path names, or raise KeyError."""
    parts = path.split(".")
    if parts[0] == "pld" and len(parts) == 3 and parts[1] in PLD_ENUMS:  # import pypto.language.distributed as pld
        members = PLD_ENUMS[parts[1]].__members__
        if parts[2] in members:
            return members[parts[2]]
        raise KeyError(path)
    if parts[0] != "pl" or len(parts) < 2:
        raise KeyError(path)
    if len(parts) == 2 and parts[1] in D.DTYPES:
        return D.DTYPES[parts[1]]
    if len(parts) == 3 and parts[1] in ENUMS:
        cls = ENUMS[parts[1]]
        name = parts[2]
        members = cls.__members__
        if name in members:
            return members[name]
        raise KeyError(path)
    if len(parts) == 3 and parts[1] == "adir":
        return AdirValue(parts[2])
    raise KeyError(path)


def evaluate(node: ast.AST, env: Mapping[str, Any] | None = None) -> Any:
    """The Python value of a constant expression; raises NotConstant."""
    env = {} if env is None else env
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in ("shape", "dtype"):
        info = env.get(node.value.id)
        if isinstance(info, ValueInfo):
            if node.attr == "dtype":
                return info.dtype
            if info.shape is None:
                raise NotConstant(node, f"'{node.value.id}.shape' has a dynamic dimension")
            return list(info.shape)
    if isinstance(node, ast.Subscript):
        base = evaluate(node.value, env)
        index = evaluate(node.slice, env)
        if isinstance(base, list) and isinstance(index, int) and not isinstance(index, bool):
            if -len(base) <= index < len(base):
                return base[index]
            raise NotConstant(node, f"index {index} is out of range for a list of {len(base)}")
        raise NotConstant(node, "expected a constant list indexed by a constant integer")
    if isinstance(node, (ast.List, ast.Tuple)):
        return [evaluate(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            evaluate(k, env) if k is not None else None: evaluate(v, env)
            for k, v in zip(node.keys, node.values, strict=False)
        }
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = evaluate(node.operand, env)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
        raise NotConstant(node, "expected a number after the sign")
    if isinstance(node, ast.BinOp):
        a, b = evaluate(node.left, env), evaluate(node.right, env)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.FloorDiv: lambda: a // b,
               ast.Div: lambda: a / b, ast.Mod: lambda: a % b}  # fmt: skip
        if type(node.op) in ops and all(isinstance(v, (int, float)) for v in (a, b)):
            try:
                return ops[type(node.op)]()
            except ZeroDivisionError:
                raise NotConstant(node, f"division by zero in a constant expression ({a!r} by {b!r})") from None
            except OverflowError:
                raise NotConstant(node, "constant expression overflows") from None
        dyn = (D.DynVar, int)
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)) and any(isinstance(v, D.DynVar) for v in (a, b)):
            if all(isinstance(v, dyn) and not isinstance(v, bool) for v in (a, b)):
                return ops[type(node.op)]()  # a pl.dynamic extent expression (M * 2)
        raise NotConstant(node, "unsupported constant arithmetic")
    path = dotted(node)
    if path is not None:
        if path in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[path]
        try:
            return resolve_pl(path)
        except KeyError:
            pass
        if "." not in path and path in env:
            v = env[path]
            if isinstance(v, (int, float, bool, str, D.DType, D.DynVar, enum.Enum)) or v is None:
                return v
        raise NotConstant(node, f"'{path}' is not a compile-time constant")
    if isinstance(node, ast.Call):
        fn = dotted(node.func)
        if fn not in ("pl.const", "pl.TileView"):
            raise NotConstant(node, f"call to '{fn or '?'}' is not a compile-time constant")
        starred = next((a for a in node.args if isinstance(a, ast.Starred)), None)
        if starred is not None or any(k.arg is None for k in node.keywords):
            raise NotConstant(starred or node, f"{fn}: * and ** arguments are not supported")
        args = [evaluate(a, env) for a in node.args]
        kwargs = {k.arg: evaluate(k.value, env) for k in node.keywords if k.arg}
        if fn == "pl.const":
            return _const_value(node, args, kwargs)
        return _tile_view(node, args, kwargs)
    raise NotConstant(node, "expected a compile-time constant")


def _bind(node: ast.Call, names: tuple[str, ...], args: list[Any], kwargs: dict[str, Any], usage: str) -> dict[str, Any]:
    """``args`` and ``kwargs`` of a constant call bound to its parameter ``names`` (NotConstant with
    ``usage`` for too many, unknown or repeated arguments)."""
    bound = dict(zip(names, args, strict=False))
    if len(args) > len(names) or any(k not in names or k in bound for k in kwargs):
        raise NotConstant(node, usage)
    return bound | kwargs


def _const_value(node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> D.ConstValue:
    """``pl.const(value, dtype)``: a number (or bool) and a ``pl`` dtype, else NotConstant."""
    usage = "pl.const takes a number and a dtype: pl.const(0, pl.INT32)"
    bound = _bind(node, ("value", "dtype"), args, kwargs, usage)
    value, dtype = bound.get("value"), bound.get("dtype")
    if not isinstance(value, (int, float)) or not isinstance(dtype, D.DType):
        raise NotConstant(node, usage)
    return D.ConstValue(value, dtype)


def _tile_view(node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> D.TileView:
    """``pl.TileView(blayout=, slayout=, fractal=, ...)``, else NotConstant."""
    names = ("blayout", "slayout", "fractal")
    known = {k: v for k, v in kwargs.items() if k in names}
    bound = _bind(node, names, args, known, "pl.TileView takes (blayout=, slayout=, fractal=)")
    extra = {k: v for k, v in kwargs.items() if k not in names}
    return D.TileView(**bound, **extra)


def plain(value: Any) -> Any:
    """Unwrap ``pl.const`` values (``pl.const(0, pl.INT64)`` -> ``0``)."""
    if isinstance(value, D.ConstValue):
        return value.value
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
