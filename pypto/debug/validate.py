"""Run pass dumps through torch codegen and compare their outputs.

``validate_pass_ir_codegen_results(dir_or_file, tensors, expected)`` takes each
sorted ``*.py`` dump (or one file), parses it (``pl.loads``), generates torch
code with shape checks, calls the entry function (the only function, else the
first Orchestration) on clones of ``tensors`` (by parameter name; a name's
``__ssa_v<N>`` suffix may be dropped) and checks every ``expected`` tensor
against the clone of the same name after the call (Out parameters are written
in place). Prints, per dump (pl-dsl.md §7)::

    ==================== 02_after_ConvertTensorToTileOps ====================
    validate tensor: 'out', max_abs_diff: 1.234567e-03, pass: True

The lower-level :func:`run_dump` / :func:`compare` are shared with the bisect.
"""

from __future__ import annotations
import __future__

import linecache
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects import func

from pypto.core.program import Program
from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type
from pypto.frontend.parser import parse
from pypto.frontend.scopes import ascii_name

from .torch_codegen import preamble, torch_codegen

_SSA_SUFFIX = re.compile(r"__ssa_v\d+$")
_ANY_SUFFIX = re.compile(r"__[a-z]+_v\d+$")


def collect_ir_files(path: str | os.PathLike[str]) -> list[Path]:
    """The ``*.py`` dumps of a directory in sorted order, or the one file given."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"IR path does not exist: {p}")
    if p.is_file():
        if p.suffix != ".py":
            raise ValueError(f"IR file must be a .py file, got: {p}")
        return [p]
    files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix == ".py")
    if not files:
        raise ValueError(f"no .py IR files found under: {p}")
    return files


def entry_function(program: Program) -> func.FuncOp:
    """The only function, else the first Orchestration (printed order), else
    the first function no other function calls."""
    fns = list(program.func_ops.values())
    if not fns:
        raise ValueError("the program has no functions")
    if len(fns) == 1:
        return fns[0]
    for f in fns:
        if function_type(f) is FunctionType.Orchestration:
            return f
    called = {op.callee.string_value() for f in fns for op in f.walk() if isinstance(op, func.CallOp)}
    return next((f for f in fns if f.sym_name.data not in called), fns[0])


def param_key(name: str, available: Mapping[str, Any]) -> str:
    """The key of ``available`` for parameter ``name``: the name itself, else
    without its ``__ssa_v<N>`` (then any ``__<kind>_v<N>``) suffix; a key may be the
    parameter's Python name (``输出``) or the IR's ASCII spelling (``u8f93u51fa``)."""
    spelled = {ascii_name(k): k for k in available if isinstance(k, str)}
    for key in (name, _SSA_SUFFIX.sub("", name), _ANY_SUFFIX.sub("", name)):
        if key in available:
            return key
        if key in spelled:
            return spelled[key]
    raise KeyError(f"cannot resolve a tensor for parameter {name!r}; available keys: {sorted(available)}")


def compile_entry(program: Program, label: str, *, check_shapes: bool = True) -> tuple[func.FuncOp, Callable[..., Any]]:
    """Generate and ``exec`` torch code for ``program``; return its entry
    function and the generated callable (tracebacks show the generated code)."""
    entry = entry_function(program)
    code = torch_codegen(program, check_shapes=check_shapes)
    filename = f"<torch_codegen {label}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": f"pypto_torch_codegen_{abs(hash(label))}"}
    pre = preamble()
    if code.startswith(pre + "\n"):  # the helpers: compiled once, run per script (fresh module state)
        exec(_preamble_code(pre), namespace)  # noqa: S102 - running generated code is the point
        body = "\n" * pre.count("\n") + code[len(pre) :]  # the functions, at their lines of ``code``
    else:
        body = code
    # (the preamble's ``from __future__ import annotations`` holds for the functions too)
    exec(compile(body, filename, "exec", flags=__future__.annotations.compiler_flag), namespace)  # noqa: S102 - running generated code is the point
    return entry, namespace[entry.sym_name.data]


_PREAMBLE: dict[str, Any] = {}
PREAMBLE_FILE = "<torch_codegen preamble>"


def _preamble_code(text: str) -> Any:
    """The compiled helper preamble of the generated scripts (compiling it was most of a dump's cost)."""
    if text not in _PREAMBLE:
        linecache.cache[PREAMBLE_FILE] = (len(text), None, text.splitlines(True), PREAMBLE_FILE)
        _PREAMBLE.clear()
        _PREAMBLE[text] = compile(text, PREAMBLE_FILE, "exec")
    return _PREAMBLE[text]


def run_program(program: Program, tensors: Mapping[str, Any], label: str = "program") -> dict[str, Any]:
    """Run ``program``'s entry on clones of ``tensors`` (by parameter name);
    returns the clones after the call (Out parameters updated in place)."""
    entry, fn = compile_entry(program, label)
    run = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in tensors.items()}
    args = [run[param_key(a.name_hint or "", run)] for a in entry.args]
    fn(*args)
    return run


def run_dump(path: Path, tensors: Mapping[str, Any], text: str | None = None) -> dict[str, Any]:
    """:func:`run_program` on one dump file (``text``: its contents, if read
    already); an execution failure is re-raised naming the file
    (AssertionError for shape checks, else RuntimeError)."""
    program = parse(path.read_text() if text is None else text, filename=str(path))
    try:
        return run_program(program, tensors, path.name)
    except AssertionError as e:
        raise AssertionError(f"{path}: {e}") from e
    except KeyError:
        raise
    except Exception as e:
        raise RuntimeError(f"{path}: generated torch code failed: {type(e).__name__}: {e}") from e


@dataclass(frozen=True)
class TensorCheck:
    """One expected tensor compared after one dump."""

    name: str
    max_abs_diff: float
    ok: bool


def compare(name: str, actual: Any, expected: torch.Tensor, rtol: float, atol: float) -> TensorCheck:
    """``torch.allclose`` plus the max abs diff (inf on a shape mismatch, NaN fails)."""
    if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != tuple(expected.shape):
        return TensorCheck(name, math.inf, False)
    a, e = actual.to(torch.float64), expected.to(torch.float64)
    diff = float((a - e).abs().max().item()) if a.numel() else 0.0
    ok = bool(torch.allclose(a, e, rtol=rtol, atol=atol)) and not math.isnan(diff)
    return TensorCheck(name, diff, ok)


def _check_args(tensors: Any, expected: Any, rtol: Any, atol: Any) -> None:
    for what, d in (("tensors", tensors), ("expected", expected)):
        if not isinstance(d, Mapping) or not all(isinstance(k, str) for k in d):
            raise TypeError(f"{what} must be a dict[str, torch.Tensor], got {type(d).__name__}")
    for k, v in expected.items():
        if not isinstance(v, torch.Tensor):
            raise TypeError(f"expected[{k!r}] must be a torch.Tensor, got {type(v).__name__}")
    for what, x in (("rtol", rtol), ("atol", atol)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or x < 0:
            raise ValueError(f"{what} must be a non-negative number, got {x!r}")


def validate_pass_ir_codegen_results(
    dir_or_file: str | os.PathLike[str],
    tensors: Mapping[str, torch.Tensor],
    expected: Mapping[str, torch.Tensor],
    *,
    rtol: float = 5e-2,
    atol: float = 5e-2,
) -> None:
    """Check every dump's torch-codegen results against ``expected``.

    Raises ``AssertionError`` naming the dump file, the tensor and its max abs
    diff on the first mismatch; ``FileNotFoundError`` / ``ValueError`` for a
    missing path or no dumps; ``RuntimeError`` when generated code fails.
    """
    _check_args(tensors, expected, rtol, atol)
    previous: tuple[str, dict[str, Any]] | None = None
    for path in collect_ir_files(dir_or_file):
        text = path.read_text()
        if previous is not None and previous[0] == text:
            run = previous[1]  # an unchanged snapshot (identity pass): same code, same results
        else:
            run = run_dump(path, tensors, text)
            previous = (text, run)
        print("=" * 20, path.stem, "=" * 20)
        for key, want in expected.items():
            if key not in run:
                raise ValueError(f"{path}: expected key {key!r} is not among the tensors {sorted(run)}")
            got = run[key]
            if isinstance(got, torch.Tensor) and tuple(got.shape) != tuple(want.shape):  # not a divergence
                raise AssertionError(
                    f"{path}: tensor {key!r} has shape {tuple(got.shape)}, expected[{key!r}] has shape "
                    f"{tuple(want.shape)}"
                )
            c = compare(key, got, want, float(rtol), float(atol))
            print(f"validate tensor: {key!r}, max_abs_diff: {c.max_abs_diff:.6e}, pass: {c.ok}")
            if not c.ok:
                raise AssertionError(
                    f"{path}: tensor {key!r} mismatch, max abs diff {c.max_abs_diff:.6e} "
                    f"exceeds the tolerance (rtol={rtol:.3e}, atol={atol:.3e})"
                )
