"""Malformed and unusual kernels: each is a located front-end error (file, line, what was expected),
never a Python traceback, an internal error or a silent acceptance."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import (
    ArgumentTypeError,
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)

T = "pl.Tensor[[16, 128], pl.FP32]"


def src(body: str, params: str = f"x: {T}, o: pl.Out[{T}]") -> str:
    """An InCore function ``f(params)`` with ``body`` (line 5 on) returning ``o``."""
    lines = "".join(f"    {ln}\n" for ln in body.splitlines())
    return f"import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\ndef f({params}):\n{lines}    return o\n"


def fail(text: str, cls: type[ParserError] = ParserError) -> ParserError:
    """The located error ``pl.parse`` raises for ``text`` (a ``ParserError`` of class ``cls``)."""
    with pytest.raises(cls) as info:
        pl.parse(text, filename="k.py")
    assert info.value.location is not None and info.value.location.filename == "k.py"
    return info.value


# ---- constants: pl.const, pl.TileView, integer literals -------------------------------------------


@pytest.mark.parametrize(
    "call",
    ["pl.const()", "pl.const(1, 3)", "pl.const('a', pl.INT32)", "pl.const(1, pl.INT32, foo=1)", "pl.const(1, value=1)"],
)
def test_pl_const_with_wrong_arguments(call: str) -> None:
    """Was a TypeError / AttributeError / ValueError from constructing the constant."""
    err = fail(src(f"t = {call}"), ParserTypeError)
    assert "pl.const takes a number and a dtype" in err.message
    assert err.location is not None and err.location.line == 5


def test_pl_tile_view_with_too_many_arguments() -> None:
    """Was a TypeError from ``TileView.__init__``."""
    tile = "pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec, pl.TileView(1, 2, 3, 4, 5)]"
    err = fail(src("pass", params=f"x: {tile}, o: pl.Out[{T}]"), ParserTypeError)
    assert "pl.TileView takes (blayout=, slayout=, fractal=)" in err.message


def test_pl_tile_view_fractal_not_an_integer() -> None:
    """Was a ValueError from ``int('a')`` (and 1.5 was silently truncated)."""
    for fractal in ("'a'", "1.5"):
        tile = f"pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec, pl.TileView(fractal={fractal})]"
        err = fail(src("pass", params=f"x: {tile}, o: pl.Out[{T}]"), ParserTypeError)
        assert "fractal= must be a positive integer" in err.message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("t = pl.const(300, pl.INT8)", "300 does not fit in pl.Scalar[pl.INT8]"),
        ("t = pl.const(-1, pl.UINT8)", "-1 does not fit in pl.Scalar[pl.UINT8]"),
        ("t = 100000000000000000000000", "does not fit in pl.Scalar[pl.INDEX]"),
        ("for i in pl.range(100000000000000000000000):\n    pass", "does not fit in pl.Scalar[pl.INDEX]"),
        ("t = pl.const(1.5, pl.INT32)", "1.5 is not an integer"),
    ],
)
def test_integer_constant_out_of_range(body: str, message: str) -> None:
    """Was an xDSL VerifyException (INT8), or silently accepted (an INDEX literal past 64 bits, a
    fractional pl.const of an integer dtype truncated)."""
    err = fail(src(body), ParserTypeError)
    assert message in err.message
    assert err.location is not None and err.location.line == 5


# ---- what a decorator is applied to ------------------------------------------------------------------


def _at_decorator(err: ParserError, decorator: str) -> None:
    """``err`` is located in this file, at a line applying ``decorator``."""
    assert err.location is not None and err.location.filename == __file__
    with open(__file__, encoding="utf-8") as f:
        line = f.read().splitlines()[err.location.line - 1]
    assert decorator in line, line


def test_function_decorator_on_async_def() -> None:
    """Was an AssertionError (an internal error)."""
    with pytest.raises(ParserSyntaxError) as info:

        @pl.function(type=pl.FunctionType.InCore)
        async def f(x: pl.Tensor[[16, 128], pl.FP32]):
            return x

    assert "@pl.function decorates a def, not async def 'f'" in info.value.message
    _at_decorator(info.value, "@pl.function")


def test_function_decorator_on_a_class_or_lambda() -> None:
    """Were AssertionErrors."""
    with pytest.raises(ParserSyntaxError) as info:

        @pl.function
        class K:
            pass

    assert "not class 'K'" in info.value.message and info.value.hint == "decorate a class with @pl.program"
    _at_decorator(info.value, "@pl.function")
    with pytest.raises(ParserSyntaxError) as info:
        pl.function(lambda x: x)  # pl.function
    assert "not a lambda" in info.value.message
    _at_decorator(info.value, "pl.function(lambda")


def test_function_decorator_applied_twice() -> None:
    """Was an AttributeError ('Program' object has no attribute '__qualname__')."""
    with pytest.raises(ParserSyntaxError) as info:

        @pl.function
        @pl.function
        def f(x: pl.Tensor[[16, 128], pl.FP32]):
            return x

    assert "not a DSL program or kernel" in info.value.message
    _at_decorator(info.value, "@pl.function")


def test_program_decorator_on_a_function() -> None:
    """Was an AssertionError."""
    with pytest.raises(ParserSyntaxError) as info:

        @pl.program
        def f(x: pl.Tensor[[16, 128], pl.FP32]):
            return x

    assert "@pl.program decorates a class, not function 'f'" in info.value.message
    _at_decorator(info.value, "@pl.program")


def test_jit_decorator_on_async_def_or_class() -> None:
    """Were AssertionErrors when the kernel was compiled (a class: a TypeError about its arguments)."""
    with pytest.raises(ParserSyntaxError) as info:

        @pl.jit
        async def k(a: pl.Tensor):
            return a

    assert "@pl.jit decorates a def, not async def 'k'" in info.value.message
    _at_decorator(info.value, "@pl.jit")
    with pytest.raises(ParserSyntaxError) as info:

        @pl.jit
        class K:
            pass

    assert "not class 'K'" in info.value.message
    _at_decorator(info.value, "@pl.jit")


# ---- windows: subscript writes and slices -----------------------------------------------------------


def test_subscript_write_window_must_match_the_value() -> None:
    """Was silently accepted: ``o[0:8, :] = x`` wrote all 16 rows of ``x`` (the window's size was ignored)."""
    err = fail(src("o[0:8, :] = x"), ParserTypeError)
    assert err.message == "the window o[0:8, :] has shape [8, 128], but the value written to it has shape [16, 128]"
    assert err.location is not None and (err.location.line, err.location.col) == (5, 5)


@pytest.mark.parametrize("body", ["o[8:24, :] = x", "o = pl.assemble(o, x, [8, 0])"])
def test_write_past_the_end(body: str) -> None:
    """Was silently accepted (pl.load checked its constant window; a write did not). A slice past the end
    stays legal: a read-only, padded window (test_runtime_shapes)."""
    err = fail(src(body), ParserTypeError)
    assert "pl.tensor.assemble: window [8:24] in dimension 0 is past the end of the tensor (size 16)" in err.message
    assert err.location is not None and err.location.line == 5


def test_negative_slice_bound() -> None:
    """Was 'window shape [17, 128] exceeds the input shape' for ``x[-1:, :]`` (or silently a negative offset)."""
    err = fail(src("t = x[-4:, :]"), ParserTypeError)
    assert "negative slice bound -4" in err.message and err.hint == "write the offset from the start, e.g. 12"
    assert err.location is not None and (err.location.line, err.location.col) == (5, 11)


# ---- operators ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", ["t = 1 // 0", "a = 4\nt = a % 0", "t = x / 0"])
def test_division_by_constant_zero(body: str) -> None:
    """Was silently accepted (an integer division by zero at run time)."""
    err = fail(src(body), ParserTypeError)
    assert "division by zero" in err.message


@pytest.mark.parametrize(("op", "symbol"), [("**", "**"), ("%", "%"), ("//", "//")])
def test_unsupported_operator_on_a_tensor(op: str, symbol: str) -> None:
    """Was 'operands have different types: ... insert pl.cast' (the scalar was typed like the tensor)."""
    err = fail(src(f"t = x {op} 2"), UnsupportedFeatureError)
    assert err.message == f"operator '{symbol}' is not supported on pl.Tensor[[16, 128], pl.FP32]"


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_scalar_on_the_left_of_a_tile(op: str) -> None:
    """Was 'operands have different types: pl.Scalar[pl.FP32] and pl.Tile[...]; insert pl.cast'."""
    err = fail(src(f"a = pl.load(x, [0, 0], [16, 128])\nt = 2.0 {op} a"), UnsupportedFeatureError)
    assert err.message.startswith(f"'{op}' with a scalar on the left of a pl.Tile[[16, 128], pl.FP32")
    assert err.hint is not None and "put the tile or tensor on the left" in err.hint


def test_membership_comparison() -> None:
    """Was 'cannot compare pl.Scalar[pl.FP32] with pl.Tensor[...]'."""
    err = fail(src("t = 1 in x"), UnsupportedFeatureError)
    assert err.message == "comparison 'in' is not supported"


# ---- @pl.jit call arguments ----------------------------------------------------------------------------


@pl.jit
def _add(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


def test_jit_argument_given_twice() -> None:
    """Was silently accepted (``a=`` dropped) or 'takes 2 arguments (a, out), got 1'."""
    a = torch.zeros(16, 128)
    with pytest.raises(ArgumentTypeError, match="got multiple values for argument 'a'"):
        _add.specialize(a, out=a, a=a)
    with pytest.raises(ArgumentTypeError, match="got multiple values for argument 'a'"):
        _add.specialize(a, a=a)


def test_jit_keywords_only_bind_by_name() -> None:
    """Was ``out=`` bound to the first parameter ``a`` (only keyword arguments skipped the count check)."""
    with pytest.raises(ArgumentTypeError, match=r"takes 2 arguments \(a, out\), got 1: missing 'a'"):
        _add.specialize(out=torch.zeros(16, 128))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, 2], "argument 'a' of _add() is a list: a @pl.jit kernel takes tensors and numbers"),
        (None, "argument 'a' of _add() is None"),
        (torch.zeros(16, 128, dtype=torch.complex64), "argument 'a' of _add() has dtype complex64, which has no PyPTO dtype"),
    ],
)
def test_jit_argument_not_a_tensor_or_number(value: object, message: str) -> None:
    """Was a TypeError ('unhashable type: list', or the dtype without the argument's name); None for a
    scalar parameter ran the kernel on garbage."""
    with pytest.raises(ArgumentTypeError) as info:
        _add.specialize(value, torch.zeros(16, 128))
    assert message in str(info.value)


# ---- annotations, loops and syntax the DSL does not have -----------------------------------------------


@pytest.mark.parametrize("dim", ["-128", "0"])
def test_shape_dimension_not_positive(dim: str) -> None:
    """Was accepted, then an error at a later op's line from a pass ('every tile dimension must be positive')."""
    err = fail(src("pass", params=f"x: pl.Tensor[[{dim}, 128], pl.FP32], o: pl.Out[{T}]"), ParserTypeError)
    assert err.message == f"shape dimension {dim} is not positive"
    assert err.location is not None and (err.location.line, err.location.col) == (4, 21)


def test_shape_dimension_beyond_i64() -> None:
    """Was accepted; the printed IR then did not parse back ('dimension ... is too large') and a pass building
    its i64 constant failed."""
    dim = 2**63
    err = fail(src("pass", params=f"x: pl.Tensor[[{dim}, 128], pl.FP32], o: pl.Out[{T}]"), ParserTypeError)
    assert err.message == f"shape dimension {dim} is too large: a dimension is at most {dim - 1} (i64)"
    assert err.location is not None and (err.location.line, err.location.col) == (4, 21)


def test_out_of_out() -> None:
    """Was silently accepted as one pl.Out."""
    err = fail(src("pass", params=f"x: {T}, o: pl.Out[pl.Out[{T}]]"), ParserTypeError)
    assert err.message == "pl.Out wraps a type, not another direction (pl.Out)"


@pytest.mark.parametrize("step", ["0", "-1"])
def test_loop_step_not_positive(step: str) -> None:
    """Was accepted: step 0 compiled to a loop that never ends, ``pl.range(3, -1, -1)`` ran no iteration."""
    err = fail(src(f"for i in pl.range(3, -1, {step}):\n    pass"), ParserTypeError)
    assert err.message == f"pl.range step must be positive, got {step}"
    assert err.location is not None and err.location.line == 5


def test_double_star_keywords_on_an_op() -> None:
    """Was 'pl.exp: missing its first operand' (the ``**`` mapping was dropped)."""
    err = fail(src("t = pl.exp(**{'x': x})"), InvalidOperationError)
    assert err.message == "pl.exp does not take **kwargs"


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("t = (y := 3)", "an assignment expression (:=)"),
        ("t = x and x", "'and' / 'or'"),
        ("try:\n    pass\nexcept* Exception:\n    pass", "try statements"),
    ],
)
def test_unsupported_syntax_named_as_python_writes_it(body: str, what: str) -> None:
    """Were named by their AST class (NamedExpr, BoolOp, TryStar)."""
    err = fail(src(body), UnsupportedFeatureError)
    assert err.message == f"{what} is not supported in DSL functions"


@pytest.mark.parametrize(
    ("decorator", "message"),
    [
        ("@pl.function(pl.FunctionType.InCore)", "@pl.function takes keyword arguments only"),
        ("@pl.function(level=3)", "level must be a pl.Level member"),
        ("@pl.function(role='x')", "role must be a pl.Role member"),
    ],
)
def test_function_decorator_arguments(decorator: str, message: str) -> None:
    """Were silently accepted (a positional type was dropped: the function became Opaque)."""
    text = f"import pypto.language as pl\n\n{decorator}\ndef f(x: {T}):\n    return x\n"
    err = fail(text)
    assert err.message == message
    assert err.location is not None and err.location.line == 3
