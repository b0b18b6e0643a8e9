"""Every front-end error class: message, location and caret."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import (
    InvalidOperationError,
    ParserError,
    ParserTypeError,
    ScopeIsolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)

T = "pl.Tensor[[16, 128], pl.FP32]"


def src(body: str, kind: str = "InCore", params: str = f"x: {T}, o: pl.Out[{T}]") -> str:
    lines = "".join(f"    {ln}\n" for ln in body.splitlines())
    return f"import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.{kind})\ndef f({params}):\n{lines}    return o\n"


def fail(text: str, cls: type[ParserError]) -> ParserError:
    with pytest.raises(cls) as info:
        pl.parse(text, filename="k.py")
    return info.value


def test_unknown_op_did_you_mean() -> None:
    err = fail(src("t = pl.tile.lod(x, [0, 0], [16, 128])"), InvalidOperationError)
    assert "unknown op 'pl.tile.lod'" in err.message
    assert err.hint == "did you mean 'pl.tile.load'?"
    text = str(err)
    assert text.splitlines()[0] == "k.py:5:9: error: unknown op 'pl.tile.lod'"
    assert text.splitlines()[1] == " 5 |     t = pl.tile.lod(x, [0, 0], [16, 128])"
    assert text.splitlines()[2] == "   |         ^~~~~~~~~~~"
    assert err.span == {"filename": "k.py", "begin_line": 5, "begin_column": 9, "end_line": 5, "end_column": 20}


def test_unknown_sugar() -> None:
    err = fail(src("t = pl.ad(x, x)"), InvalidOperationError)
    assert err.hint == "did you mean 'pl.add'?"


def test_wrong_arity() -> None:
    err = fail(src("t = pl.tile.exp(x, x, x)"), InvalidOperationError)
    assert "takes at most" in err.message


def test_missing_argument() -> None:
    err = fail(src("t = pl.tensor.add(x)"), InvalidOperationError)
    assert "missing argument 'rhs'" in err.message


def test_unknown_keyword() -> None:
    err = fail(src("t = pl.load(x, [0, 0], [16, 128], target_memori=pl.Mem.Vec)"), InvalidOperationError)
    assert "no argument 'target_memori'" in err.message
    assert err.hint == "did you mean 'target_memory'?"


def test_type_error_from_op() -> None:
    err = fail(src("t = pl.add(x, pl.create_tensor([16, 128], dtype=pl.FP16))"), ParserTypeError)
    assert "pl.tensor.add" in err.message and "insert pl.cast" in err.message
    assert err.location is not None and (err.location.line, err.location.col) == (5, 9)
    assert "^" in str(err)


def test_shape_error_from_op() -> None:
    err = fail(
        src("a = pl.load(x, [0, 0], [16, 128])\nb = pl.load(x, [0, 0], [8, 128])\nc = pl.add(a, b)"), ParserTypeError
    )
    assert "shape" in err.message and err.location is not None and err.location.line == 7


def test_scope_isolation() -> None:
    err = fail(src("o = pl.add(x, x)", kind="Orchestration"), ScopeIsolationError)
    assert "'pl.tensor.add' cannot be used directly in an Orchestration function" in err.message
    assert err.hint is not None and "pl.at" in err.hint


def test_orchestration_may_create_tensors() -> None:
    program = pl.parse(src("t = pl.create_tensor([4, 4], dtype=pl.FP32)", kind="Orchestration"))
    assert "f" in program.functions


def test_missing_annotation() -> None:
    err = fail(src("pass", params=f"x, o: pl.Out[{T}]"), ParserTypeError)
    assert "parameter 'x' has no type annotation" in err.message
    assert err.location is not None and err.location.line == 4 and err.location.col == 7


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("while True:\n    pass", "while loops"),
        ("try:\n    pass\nexcept Exception:\n    pass", "try statements"),
        ("g = lambda: 1", "lambda"),
        ("class C:\n    pass", "class definitions"),
        ("for i in pl.range(4):\n    break", "break"),
        ("t = [i for i in x]", "list comprehension"),
    ],
)
def test_unsupported_syntax(body: str, what: str) -> None:
    err = fail(src(body), UnsupportedFeatureError)
    assert what in err.message
    assert err.location is not None and err.location.line >= 5


def test_undefined_variable() -> None:
    err = fail(src("t = pl.exp(xx)"), UndefinedVariableError)
    assert err.message == "undefined variable 'xx'"
    assert err.hint == "did you mean 'x'?"
    assert str(err).splitlines()[2] == "   |                ^~"


def test_decorated_function_reports_file_lines() -> None:
    with pytest.raises(UndefinedVariableError) as info:

        @pl.function(type=pl.FunctionType.InCore)
        def f(x: pl.Tensor[[16, 128], pl.FP32]):
            return pl.exp(nope)  # noqa: F821

    err = info.value
    assert err.location is not None and err.location.filename == __file__
    import inspect

    here = inspect.currentframe()
    assert here is not None
    lines = open(__file__).read().splitlines()
    assert "nope" in lines[err.location.line - 1]
    assert lines[err.location.line - 1][err.location.col - 1 :].startswith("nope")
    assert "return pl.exp(nope)" in str(err)


def test_bad_annotation() -> None:
    err = fail(src("pass", params="x: pl.Tensor[[16, 128]], o: int"), ParserTypeError)
    assert "shape and a dtype" in err.message


def test_parse_needs_one_program() -> None:
    """A file without exactly one program is a located user error (also the ValueError upstream's
    pl.parse raises, so upstream code catching ValueError still works)."""
    with pytest.raises(ParserError, match="exactly one") as none:
        pl.parse("import pypto.language as pl\n", filename="k.py")
    assert isinstance(none.value, ValueError)
    assert str(none.value).startswith("k.py:1:1: error: a pl file needs exactly one @pl.program")
    two = "import pypto.language as pl\n@pl.function\ndef f(): pass\n@pl.function\ndef g(): pass\n"
    with pytest.raises(ParserError, match="found 2") as second:
        pl.parse(two, filename="k.py")
    assert second.value.location is not None and second.value.location.line == 4


def test_parse_of_a_jit_kernel_points_at_its_decorator() -> None:
    text = "import pypto.language as pl\n\n\n@pl.jit\ndef k(x):\n    pass\n"
    with pytest.raises(ParserError, match="@pl.jit kernel is not a program") as err:
        pl.parse(text, filename="k.py")
    assert str(err.value).startswith("k.py:4:2: error: a pl file needs exactly one @pl.program class")


def test_a_program_function_called_with_a_parameter_by_keyword() -> None:
    """``self.f(x=x)`` names the keyword (it read as "'f' takes 2 arguments, got 0"); ``attrs=`` stays."""
    text = (
        "import pypto.language as pl\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        f"    def f(self, x: {T}, o: pl.Out[{T}]) -> {T}:\n"
        "        o = pl.assemble(o, pl.add(x, x), [0, 0])\n        return o\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        f"    def main(self, x: {T}, o: pl.Out[{T}]) -> {T}:\n"
        "        return self.f(x=x, o=o)\n"
    )
    err = fail(text, InvalidOperationError)
    assert str(err).splitlines()[0] == "k.py:12:23: error: 'f' takes its arguments by position; got 'x='"
