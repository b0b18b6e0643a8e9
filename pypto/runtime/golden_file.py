"""``golden.py`` of a build directory: inputs and the expected outputs, without the user's source.

::

    __outputs__ = ["c"]                 # the Out / InOut parameters
    RTOL = 1e-05
    ATOL = 1e-05
    def generate_inputs(params):        # [(name, tensor)] in parameter order (seeded; outputs zero)
    def compute_golden(tensors, params):  # writes the expected outputs into tensors[name]

The golden is a torch reference given to compile (``RunConfig(golden=fn)`` / ``compile(golden=fn)``):
either ``fn(tensors, params)`` writing ``tensors[out]`` in place (it becomes ``compute_golden``), or a
function of the input (``In``) parameters returning the outputs (a tensor, a tuple in order, or a dict
name -> tensor), kept as ``_reference``. Its source is copied in, with the modules and constants it reads
from its globals and the Python helper functions it calls; anything else it reads is a ValueError at
compile. :func:`inputs_source` is also the input builder of a build without a golden (``debug/run.py``,
``replay``).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import textwrap
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pypto.errors import Error

from .build_dir import (
    GOLDEN,
    META,
    BuildDirError,
    BuildMeta,
    absent,
    read_build_text,
    syntax_error_location,
    torch_dtype_name,
)

_T = TypeVar("_T")

_CONSTANT_TYPES = (int, float, str, bool, type(None))


def inputs_source(meta: BuildMeta, name: str = "generate_inputs") -> str:
    """``def <name>(params=None)``: every parameter in order, seeded (``torch.manual_seed(0)``): inputs
    ``randn`` (integers ``randint(-8, 8)``), outputs zero, scalars 1 (or their recorded value)."""
    lines = [f"def {name}(params=None):", '    """The arguments in parameter order, as (name, value) pairs."""',
             "    torch.manual_seed(0)"]  # fmt: skip
    for p in meta.params:
        if not p.is_tensor:
            value = p.value if p.value is not None else 1.0 if p.dtype.startswith(("fp", "bf")) else 1
            lines.append(f"    {p.name} = {value!r}")
            continue
        dt = f"torch.{torch_dtype_name(p.dtype)}"
        shape = tuple(p.shape)
        if p.direction == "Out":
            lines.append(f"    {p.name} = torch.zeros({shape}, dtype={dt})")
        elif p.dtype.startswith(("fp", "bf")):
            lines.append(f"    {p.name} = torch.randn({shape}).to({dt})")
        elif p.dtype == "bool":
            lines.append(f"    {p.name} = torch.randint(0, 2, {shape}).to({dt})")
        else:
            lines.append(f"    {p.name} = torch.randint(-8, 8, {shape}).to({dt})")
    lines.append("    return [" + ", ".join(f"({p.name!r}, {p.name})" for p in meta.params) + "]")
    return "\n".join(lines) + "\n"


def inputs_from_meta(meta: BuildMeta, path: Path | str = META) -> list[tuple[str, Any]]:
    """The arguments :func:`inputs_source` builds, as ``[(name, value)]``; a BuildDirError naming ``path`` (the
    build's ``compiled_meta.json``) for a tensor whose dtype torch has not (the inputs must then be given)."""
    import torch

    for p in meta.params:
        if p.is_tensor:
            try:
                torch_dtype_name(p.dtype)
            except ValueError:
                raise BuildDirError(path, f"parameter {p.name!r}: torch has no dtype {p.dtype!r} to make its input "
                                    "from; give the inputs (golden.py, or the tensors to replay())") from None  # fmt: skip

    scope: dict[str, Any] = {"torch": torch}
    exec(compile(inputs_source(meta, "_inputs"), "<inputs>", "exec"), scope)  # noqa: S102 - our own text
    return list(scope["_inputs"]())


# ---- the reference's source ------------------------------------------------------------------------------------------


def _function_source(fn: Callable[..., Any], new_name: str) -> str:
    """``fn``'s definition renamed ``new_name`` (a lambda becomes ``new_name = lambda ...``)."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise ValueError(f"golden {fn!r}: its source is not available ({e}); define it in a .py file") from None
    try:
        tree = ast.parse(src)
    except SyntaxError:
        tree = ast.parse(f"(\n{src}\n)")
        src = f"(\n{src}\n)"
    code = fn.__code__
    args = list(code.co_varnames[: code.co_argcount])
    for node in ast.walk(tree):
        if fn.__name__ == "<lambda>" and isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == args:
            return f"{new_name} = {ast.get_source_segment(src, node)}\n"
        if isinstance(node, ast.FunctionDef) and node.name == fn.__name__:
            lines = src.splitlines()[node.lineno - 1 : node.end_lineno]
            body = textwrap.dedent("\n".join(lines))
            return body.replace(f"def {fn.__name__}(", f"def {new_name}(", 1) + "\n"
    raise ValueError(f"golden {fn!r}: cannot find its definition in its source")


def _names_read(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names_read(c)
    return names


def _preamble(fn: Callable[..., Any], seen: set[str] | None = None) -> tuple[list[str], list[str]]:
    """The imports and constants ``fn`` reads from its globals and closure (sorted: deterministic), and the
    sources of the Python functions it calls (helpers of the same file, their own needs first)."""
    seen = seen if seen is not None else set()
    heads: list[str] = []
    helpers: list[str] = []
    scope = dict(fn.__globals__)
    if fn.__closure__:
        scope.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__), strict=True))
    for name in sorted(_names_read(fn.__code__) | set(fn.__code__.co_freevars)):
        if name not in scope or name in seen:
            continue  # a builtin, an attribute name (co_names holds both), or already brought
        value = scope[name]
        if isinstance(value, types.ModuleType):
            mod = value.__name__
            if mod == name == "torch":
                continue
            heads.append(f"import {mod}" if mod == name else f"import {mod} as {name}")
        elif isinstance(value, _CONSTANT_TYPES) or (
            isinstance(value, tuple) and all(isinstance(v, _CONSTANT_TYPES) for v in value)
        ):
            heads.append(f"{name} = {value!r}")
        elif isinstance(value, types.FunctionType) and not value.__module__.startswith("torch"):
            seen.add(name)
            sub_heads, sub_helpers = _preamble(value, seen)
            heads += sub_heads
            helpers += [*sub_helpers, _function_source(value, name)]
        elif callable(value) and getattr(value, "__module__", "").startswith("torch"):
            heads.append(f"from {value.__module__} import {value.__name__} as {name}")
        else:
            raise ValueError(
                f"golden {fn.__qualname__} reads {name!r} ({type(value).__name__}), which golden.py cannot "
                "carry: use modules, constants and functions"
            )
        seen.add(name)
    return heads, helpers


def golden_text(meta: BuildMeta, golden: Callable[..., Any], rtol: float, atol: float) -> str:
    """The text of ``golden.py`` for ``golden`` (see the module docstring)."""
    if not callable(golden):
        raise ValueError(f"golden must be a function (a torch reference), got {type(golden).__name__}")
    outputs = [p.name for p in meta.params if p.is_output]
    params = list(inspect.signature(golden).parameters)
    in_place = params == ["tensors", "params"]
    heads, helpers = _preamble(golden)
    lines = ['"""Golden of this build (pypto.runtime.golden_file): inputs and expected outputs."""', "",
             "import torch", *dict.fromkeys(heads), "", *[h + "\n" for h in helpers],
             f"__outputs__ = {outputs!r}", f"RTOL = {rtol!r}", f"ATOL = {atol!r}", "", "",
             inputs_source(meta), ""]  # fmt: skip
    if in_place:
        lines += [_function_source(golden, "compute_golden")]
    else:
        ins = [p.name for p in meta.params if not p.is_output]
        call = ", ".join(f"tensors[{n!r}]" for n in ins)
        lines += [
            _function_source(golden, "_reference"),
            "",
            "def compute_golden(tensors, params):",
            '    """Write the reference\'s outputs into tensors[name]."""',
            f"    result = _reference({call})",
            "    if isinstance(result, dict):",
            "        items = list(result.items())",
            "    elif isinstance(result, (tuple, list)):",
            "        items = list(zip(__outputs__, result))",
            "    else:",
            "        items = [(__outputs__[0], result)]",
            "    for name, value in items:",
            "        tensors[name][:] = value",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---- reading it back ---------------------------------------------------------------------------------------------------


def load_golden(work_dir: Path | str) -> types.ModuleType:
    """``<work_dir>/golden.py`` as a module; BuildDirError when it is missing or lacks the contract's names."""
    path = Path(work_dir) / GOLDEN
    if not path.is_file():
        raise BuildDirError(path, f"{absent(path)}; validating needs the golden.py compile writes for a golden")
    text = read_build_text(path, strip_bom=True)  # Python reads it so
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise BuildDirError(syntax_error_location(path, e), f"not valid Python: {e.msg}") from None
    spec = importlib.util.spec_from_file_location("_pypto_replay_golden", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    run_user_code(path, "golden.py", spec.loader.exec_module, module)
    for name in ("__outputs__", "generate_inputs", "compute_golden"):
        if not hasattr(module, name):
            raise BuildDirError(path, f"expected {name} (golden.py defines __outputs__, RTOL, ATOL, "
                                "generate_inputs(params), compute_golden(tensors, params))")  # fmt: skip
    outputs = module.__outputs__
    if not isinstance(outputs, list | tuple) or not all(isinstance(n, str) for n in outputs):
        raise BuildDirError(_assigned_at(path, tree, "__outputs__"), "__outputs__ must be a list of the output "
                            f"parameters' names, got {outputs!r}")  # fmt: skip
    for name in ("RTOL", "ATOL"):
        value = getattr(module, name, 1e-5)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:  # not NaN either
            raise BuildDirError(_assigned_at(path, tree, name), f"{name} must be a number >= 0, got {value!r}")
    return module


def _assigned_at(path: Path, tree: ast.Module, name: str) -> str:
    """``path:line`` of the last top-level assignment to ``name`` in ``tree`` (``path`` without one)."""
    lines = [node.lineno for node in tree.body if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]  # fmt: skip
    return f"{path}:{lines[-1]}" if lines else str(path)


def _source_file(path: Path | str | None, fn: Callable[..., Any], what: str) -> Path | str:
    """``path``, else the file ``fn`` is defined in."""
    return path if path is not None else getattr(getattr(fn, "__code__", None), "co_filename", what)


def run_user_code(path: Path | str | None, what: str, fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)``, code of the build's editable ``path`` (``golden.py``, ``debug/run.py``; None: the file
    ``fn`` is defined in): an exception it raises is the user's, a BuildDirError located at its innermost line
    in ``path`` (``what`` raised ``Type: message``), never a PyPTO internal error. PyPTO's own errors pass as
    they are."""
    try:
        return fn(*args)
    except Error:
        raise
    except Exception as e:
        path = _source_file(path, fn, what)
        where, target, tb = Path(path), Path(path).resolve(), e.__traceback__
        while tb is not None:
            if Path(tb.tb_frame.f_code.co_filename).resolve() == target:
                where = f"{path}:{tb.tb_lineno}"
            tb = tb.tb_next
        raise BuildDirError(where, f"{what} raised {type(e).__name__}: {e}") from e


def user_inputs(path: Path | str | None, what: str, fn: Callable[..., Any], *args: Any, meta: BuildMeta,
                meta_file: str = META) -> list[Any]:
    """``fn(*args)`` (:func:`run_user_code`) as the build's arguments: ``(name, value)`` pairs, one per
    parameter of ``meta`` in order; anything else is a BuildDirError naming ``path`` and what was expected
    (``meta_file``: the sidecar ``meta`` was read from, ``distributed_meta.json`` for an L3 build)."""
    got = run_user_code(path, what, fn, *args)
    try:
        named = [(name, value) for name, value in got]
    except (TypeError, ValueError):
        named = None
    if named is None or [name for name, _ in named] != list(meta.param_names):
        shown = f"({', '.join(str(n) for n, _ in named)})" if named is not None else " ".join(repr(got).split())[:80]
        raise BuildDirError(
            _source_file(path, fn, what),
            f"{what} must return the arguments as [(name, value), ...] in {meta_file}'s parameter order "
            f"({', '.join(meta.param_names)}), got {shown}",
        )
    bad = mismatched_input(named, meta, meta_file)
    if bad is not None:
        code, where = getattr(fn, "__code__", None), _source_file(path, fn, what)
        if code is not None and Path(code.co_filename).resolve() == Path(where).resolve():
            where = f"{where}:{code.co_firstlineno}"  # the function's def line
        raise BuildDirError(where, f"{what} returned {bad}")
    return named


def mismatched_input(named: Sequence[tuple[str, Any]], meta: BuildMeta, meta_file: str = META) -> str | None:
    """``'a' of shape [..] and dtype ..; the build takes [..] and ..`` for the first tensor of ``named`` (the
    arguments in parameter order) whose shape or dtype is not the one ``meta`` records; None when all are.
    Scalars and values that are no tensor are left to the run."""
    for (name, value), param in zip(named, meta.params, strict=True):
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if not param.is_tensor or shape is None or dtype is None:
            continue
        try:
            want_dtype = torch_dtype_name(param.dtype)
        except ValueError:  # no torch dtype (hf8): a tensor of its storage type; the run checks it
            want_dtype = str(dtype).removeprefix("torch.")
        got = (list(shape), str(dtype).removeprefix("torch."))
        want = (param.shape, want_dtype)
        if got != want:
            return (f"{name!r} of shape {got[0]} and dtype {got[1]}; the build takes {want[0]} and {want[1]} "
                    f"({meta_file})")  # fmt: skip
    return None


def generate_inputs(golden: types.ModuleType, meta: BuildMeta, meta_file: str = META) -> list[Any]:
    """``golden.generate_inputs({})`` as the arguments (:func:`user_inputs`)."""
    return user_inputs(golden.__file__, "generate_inputs", golden.generate_inputs, {}, meta=meta, meta_file=meta_file)


def expected_outputs(golden: types.ModuleType, named: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """``compute_golden`` on copies of ``named`` (call before the run: InOut tensors change)."""
    tensors = {n: v.clone() if hasattr(v, "clone") else v for n, v in named}
    run_user_code(golden.__file__, "compute_golden", golden.compute_golden, tensors, {})
    unknown = [n for n in golden.__outputs__ if n not in tensors]
    if unknown:
        raise BuildDirError(
            golden.__file__, f"__outputs__ names {unknown[0]!r}, not an argument ({', '.join(tensors)})"
        )
    return {n: tensors[n] for n in golden.__outputs__}


class GoldenMismatchError(Error, AssertionError):
    """An output that does not match ``golden.py`` (also an ``AssertionError``)."""


def check_outputs(golden: types.ModuleType, named: Sequence[tuple[str, Any]], expected: dict[str, Any]) -> list[str]:
    """Compare the outputs in ``named`` with ``expected`` (``RTOL``/``ATOL`` of golden.py); AssertionError
    naming the first output that differs; returns the names checked."""
    import torch

    rtol, atol = float(getattr(golden, "RTOL", 1e-5)), float(getattr(golden, "ATOL", 1e-5))
    got = dict(named)
    for name, want in expected.items():
        actual = got[name]
        if not torch.allclose(actual.float(), want.float(), rtol=rtol, atol=atol):
            diff = (actual.float() - want.float()).abs().max().item()
            raise GoldenMismatchError(
                f"output {name!r} does not match golden.py (max abs diff {diff:.3e}, rtol={rtol}, atol={atol})"
            )
    return list(expected)
