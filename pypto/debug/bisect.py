"""Find the first pass whose torch-codegen results diverge.

``python -m pypto.debug.bisect BUILD_DIR_OR_DUMP [--inputs FILE] [--rtol R] [--atol A] [--all] [-o FILE | --no-write]``

The snapshots of ``passes_dump/`` (``00_frontend.py``, ``NN_after_<Pass>.py``)
are run through :func:`pypto.debug.torch_codegen` on the same inputs. The
reference is the frontend snapshot's outputs (its Out/InOut parameters), or
the ``expected`` tensors of ``--inputs``. A binary search over the snapshots
finds the first divergent one (a snapshot that fails to run counts as
divergent), then its neighbours are re-run to confirm (previous passes, this
one fails). The report names the pass, the function(s) it changed, the worst
tensor and its max abs diff; ``passes_dump/validation.json`` receives every
verdict computed, in the schema ``pypto-ir-trace`` reads::

    {"version": 1, "reference": "00_frontend.py" | "expected",
     "first_divergent": "NN_after_X.py" | null, "pass": "X" | null, "functions": [...],
     "snapshots": {"NN_after_X.py": {"tensors": {"out": {"status": "pass" | "fail",
                   "max_abs_diff": float | null, "message": str?}}, "error": str?}}}

``-o FILE`` writes the verdicts elsewhere, ``--no-write`` not at all; ``--all``
validates every snapshot instead of bisecting.

``--inputs FILE``: ``torch.save`` of a dict, either ``{"tensors": {...},
"expected": {...}}`` or just the input tensors by parameter name (missing Out
parameters are zero-filled, missing inputs random). Without it, inputs are
random (seed 0). Exit status: 0 no divergence, 3 divergence found, 1 bad input
(a located ``error:`` line), 2 a bug in PyPTO (:func:`pypto.utils.cli.cli_main`).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from pypto.core.program import Program
from pypto.dialects.dtypes import dtype_name
from pypto.dialects.enums import ParamDirection
from pypto.dialects.program import param_directions
from pypto.dialects.types import DYNAMIC, TensorType
from pypto.errors import Error
from pypto.frontend.parser import loads
from pypto.utils.atomic import atomic_write_text, check_writable_path
from pypto.utils.cli import check_output_not_input, cli_main

from .torch_ops import torch_dtype
from .validate import TensorCheck, compare, entry_function, param_key, run_dump

VALIDATION_FILE = "validation.json"
_SNAPSHOT = re.compile(r"^(\d+)_(frontend|after_(?P<pass>.+))\.py$")


EXIT_DIVERGED = 3
"""The exit status when a divergent snapshot is found (1 is a user error, 2 a bug)."""


class BisectError(Error):
    """Bad input (path, inputs file, a frontend that does not run): exit 1."""


@dataclass
class Verdict:
    """One snapshot's comparison with the reference."""

    file: str
    checks: list[TensorCheck] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(c.ok for c in self.checks)

    @property
    def worst(self) -> TensorCheck | None:
        bad = [c for c in self.checks if not c.ok] or self.checks
        return max(bad, key=lambda c: (not math.isnan(c.max_abs_diff), c.max_abs_diff), default=None)

    def to_json(self) -> dict[str, Any]:
        tensors: dict[str, Any] = {}
        for c in self.checks:
            finite = math.isfinite(c.max_abs_diff)
            entry: dict[str, Any] = {"status": "pass" if c.ok else "fail", "max_abs_diff": c.max_abs_diff if finite else None}
            if not finite:
                entry["message"] = "shape mismatch or NaN"
            tensors[c.name] = entry
        out: dict[str, Any] = {"tensors": tensors}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class BisectResult:
    """The outcome: every verdict computed and the first divergent snapshot."""

    dump_dir: Path
    files: list[Path]
    reference: str
    verdicts: dict[str, Verdict]
    first_divergent: str | None = None
    functions: list[str] = field(default_factory=list)
    confirmed: bool = False

    @property
    def pass_name(self) -> str | None:
        return snapshot_pass(self.first_divergent) if self.first_divergent else None


def snapshot_pass(file: str) -> str:
    """``03_after_Simplify.py`` -> ``Simplify``; ``00_frontend.py`` -> ``frontend``."""
    m = _SNAPSHOT.match(file)
    return (m.group("pass") or m.group(2)) if m else Path(file).stem


def find_dump_dir(path: str | os.PathLike[str]) -> Path:
    """The ``passes_dump/`` of a build dir, a dump dir itself, or a dump file's directory."""
    p = Path(path)
    if p.is_file():
        if not _SNAPSHOT.match(p.name):
            raise BisectError(f"{path}: not a pass dump (00_frontend.py or NN_after_<Pass>.py)")
        p = p.parent
    if (p / "passes_dump").is_dir():
        p = p / "passes_dump"
    if not p.is_dir():
        raise BisectError(f"no such build or dump directory: {path}")
    if not snapshots(p):
        raise BisectError(f"no pass dumps (00_frontend.py, NN_after_<Pass>.py) in {p}")
    return p


def snapshots(dump_dir: Path) -> list[Path]:
    """The snapshot files in pipeline order (failure dumps and others ignored);
    two snapshots with one number, or one that cannot be read, are a
    :class:`BisectError` (the folder mixes builds or is damaged)."""
    found = sorted((int(m.group(1)), f) for f in dump_dir.iterdir() if (m := _SNAPSHOT.match(f.name)) and f.is_file())
    for (a, fa), (b, fb) in zip(found, found[1:], strict=False):
        if a == b:
            raise BisectError(f"{dump_dir}: two snapshots numbered {a:02d} ({fa.name}, {fb.name}): the folder mixes builds")
    for _, f in found:
        if not os.access(f, os.R_OK):
            raise BisectError(f"{f}: snapshot is not readable")
    return [f for _, f in found]


# ---- inputs --------------------------------------------------------------


def _dtype(t: TensorType) -> torch.dtype:
    return getattr(torch, torch_dtype(t.element_type).removeprefix("torch."))


def _static_shape(t: TensorType) -> tuple[int, ...]:
    shape = t.get_shape()
    if DYNAMIC in shape:
        raise BisectError(f"a parameter has a dynamic shape {list(shape)}; pass --inputs")
    return shape


def _random(t: TensorType, gen: torch.Generator) -> torch.Tensor:
    shape, dtype = _static_shape(t), _dtype(t)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    return torch.randint(-4, 5, shape, generator=gen).to(dtype)


def complete_inputs(program: Program, tensors: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """``tensors`` plus zero-filled Out parameters and random In/InOut tensors
    for the entry parameters it lacks (keys are parameter base names)."""
    entry = entry_function(program)
    names = [arg.name_hint or "" for arg in entry.args]
    used = set()
    for name in names:
        try:
            used.add(param_key(name, tensors))
        except KeyError:
            pass
    unknown = sorted(set(tensors) - used)
    if unknown:
        plain = ", ".join(re.sub(r"__[a-z]+_v\d+$", "", n) for n in names)
        raise BisectError(f"--inputs names no parameter {', '.join(map(repr, unknown))}; the parameters are: {plain}")
    gen = torch.Generator().manual_seed(seed)
    full = dict(tensors)
    for arg, direction in zip(entry.args, param_directions(entry), strict=True):
        name = arg.name_hint or ""
        try:
            param_key(name, full)
            continue
        except KeyError:
            pass
        key = re.sub(r"__[a-z]+_v\d+$", "", name)
        if not isinstance(arg.type, TensorType):
            raise BisectError(f"parameter {name!r} ({dtype_name(arg.type)}) needs a value; pass --inputs")
        if direction is ParamDirection.Out:
            full[key] = torch.zeros(_static_shape(arg.type), dtype=_dtype(arg.type))
        else:
            full[key] = _random(arg.type, gen)
    return full


def output_names(program: Program, tensors: Mapping[str, Any]) -> list[str]:
    """The tensor keys of the entry's Out/InOut parameters (all tensor
    parameters when it has none)."""
    entry = entry_function(program)
    pairs = list(zip(entry.args, param_directions(entry), strict=True))
    outs = [a for a, d in pairs if d is not ParamDirection.In] or [a for a, _ in pairs if isinstance(a.type, TensorType)]
    return [param_key(a.name_hint or "", tensors) for a in outs]


def load_inputs(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, torch.Tensor] | None]:
    """``(tensors, expected or None)`` from a ``torch.save``-d dict; a file of another shape is a
    :class:`BisectError` naming the file and the entry."""
    try:
        with warnings.catch_warnings():  # torch's notes on a plain pickle's protocol: the error below says it
            warnings.simplefilter("ignore")
            data = torch.load(path, weights_only=True)
    except OSError:
        raise
    except Exception:  # not a torch.save file, or one holding more than tensors and numbers (torch's own
        # message is a page on weights_only, or a bare pickle opcode)
        raise BisectError(
            f"{path}: cannot read the inputs: not a torch.save file of a dict of tensors "
            "(torch.load(weights_only=True) refused it)"
        ) from None
    if not isinstance(data, dict):
        raise BisectError(f"{path}: expected a dict of tensors, got {type(data).__name__}")
    if "tensors" not in data:
        return _named(path, "", data, scalars=True), None
    expected = data.get("expected")
    extra = sorted(map(repr, set(data) - {"tensors", "expected"}))
    if extra:
        raise BisectError(f"{path}: unknown key(s) {', '.join(extra)} beside 'tensors' (and 'expected')")
    return _named(path, "tensors", data["tensors"], scalars=True), (
        None if expected is None else _named(path, "expected", expected, scalars=False)
    )


def _named(path: str | os.PathLike[str], key: str, value: Any, *, scalars: bool) -> dict[str, Any]:
    """``value`` checked to be a dict of tensors by name (and numbers, for a scalar parameter)."""
    where = f"{path}: {key!r}" if key else f"{path}:"
    if not isinstance(value, dict):
        raise BisectError(f"{where} expected a dict of tensors by name, got {type(value).__name__}")
    kinds = (torch.Tensor, bool, int, float) if scalars else (torch.Tensor,)
    for name, v in value.items():
        if not isinstance(name, str):
            raise BisectError(f"{where} the key {name!r} is not a parameter name (a str)")
        if not isinstance(v, kinds):
            what = "a tensor or a number" if scalars else "a tensor"
            raise BisectError(f"{where} {name!r} must be {what}, got {type(v).__name__}")
    return dict(value)


# ---- evaluation --------------------------------------------------------------


def evaluate(path: Path, tensors: Mapping[str, Any], reference: Mapping[str, torch.Tensor], rtol: float, atol: float) -> Verdict:
    """Run one snapshot and compare it with ``reference`` (never raises)."""
    try:
        run = run_dump(path, tensors)
    except Exception as e:  # a snapshot that does not run diverges
        return Verdict(path.name, [], f"{type(e).__name__}: {e}".splitlines()[0][:500])
    checks = [compare(k, run.get(k), want, rtol, atol) for k, want in reference.items()]
    return Verdict(path.name, checks)


def changed_functions(before: Path, after: Path) -> list[str]:
    """Functions whose definition differs between two snapshots (kernels
    before orchestration functions; new functions included)."""

    def defs(path: Path) -> dict[str, tuple[str, bool]]:
        try:
            tree = ast.parse(path.read_text())
        except (OSError, SyntaxError):
            return {}
        out: dict[str, tuple[str, bool]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                orch = any("Orchestration" in ast.unparse(d) for d in node.decorator_list)
                out[node.name] = (ast.dump(node), orch)
        return out

    old, new = defs(before), defs(after)
    changed = [n for n, (body, _) in new.items() if old.get(n, ("", False))[0] != body]
    return sorted(changed, key=lambda n: (new[n][1], n))


def bisect_dump(
    path: str | os.PathLike[str],
    tensors: Mapping[str, Any] | None = None,
    expected: Mapping[str, torch.Tensor] | None = None,
    *,
    rtol: float = 5e-2,
    atol: float = 5e-2,
    check_all: bool = False,
    log: Callable[[str], None] = lambda s: None,
) -> BisectResult:
    """Binary-search the snapshots of ``path`` for the first divergent one."""
    dump_dir = find_dump_dir(path)
    files = snapshots(dump_dir)
    front = loads(files[0])
    inputs = complete_inputs(front, tensors or {})
    verdicts: dict[str, Verdict] = {}
    if expected is not None:
        outputs = output_names(front, inputs)
        unknown = sorted(set(expected) - set(outputs))
        if unknown:
            raise BisectError(
                f"the expected tensors name {', '.join(map(repr, unknown))}, which is not an output of the entry; "
                f"its outputs are: {', '.join(outputs)}"
            )
        wrong = next(((k, v) for k, v in expected.items() if not isinstance(v, torch.Tensor)), None)
        if wrong is not None:
            raise BisectError(f"expected[{wrong[0]!r}] must be a torch.Tensor, got {type(wrong[1]).__name__}")
        reference, ref_name = dict(expected), "expected"
    else:
        try:
            run = run_dump(files[0], inputs)
        except Exception as e:
            raise BisectError(f"the reference snapshot {files[0].name} does not run: {e}") from e
        reference = {k: run[k] for k in output_names(front, inputs)}
        ref_name = files[0].name
        verdicts[files[0].name] = Verdict(files[0].name, [TensorCheck(k, 0.0, True) for k in reference])

    def check(i: int, fresh: bool = False) -> bool:
        name = files[i].name
        if fresh or name not in verdicts:
            v = evaluate(files[i], inputs, reference, rtol, atol)
            if not fresh:
                verdicts[name] = v
                w = v.worst
                detail = v.error or (f"{w.name!r} max_abs_diff {w.max_abs_diff:.6e}" if w else "no tensors")
                log(f"  {name}: {'pass' if v.ok else 'FAIL'} ({detail})")
            return v.ok
        return verdicts[name].ok

    result = BisectResult(dump_dir, files, ref_name, verdicts)
    if check_all:
        bad = [i for i in range(len(files)) if not check(i)]
        first = bad[0] if bad else None
    elif not check(0):
        first = 0
    elif check(len(files) - 1):
        first = None
    else:
        lo, hi = 0, len(files) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if check(mid) else (lo, mid)
        first = hi
    if first is not None:
        result.first_divergent = files[first].name
        result.confirmed = not check(first, fresh=True) and (first == 0 or check(first - 1, fresh=True))
        if first > 0:
            result.functions = changed_functions(files[first - 1], files[first])
    return result


def write_validation(result: BisectResult, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the verdicts (atomically) to ``path``, default ``passes_dump/validation.json``."""
    data = {
        "version": 1,
        "reference": result.reference,
        "first_divergent": result.first_divergent,
        "pass": result.pass_name,
        "functions": result.functions,
        "snapshots": {f: result.verdicts[f].to_json() for f in sorted(result.verdicts)},
    }
    target = Path(path) if path is not None else result.dump_dir / VALIDATION_FILE
    atomic_write_text(target, json.dumps(data, indent=2, sort_keys=False) + "\n")
    return target


def report_lines(result: BisectResult) -> list[str]:
    """The human summary of a bisect."""
    if result.first_divergent is None:
        return [f"no divergence: {len(result.files)} snapshots match {result.reference}"]
    v = result.verdicts[result.first_divergent]
    lines = [f"first divergent pass: {result.pass_name} ({result.first_divergent})"]
    lines.append(f"function: {', '.join(result.functions) if result.functions else '(no function text changed)'}")
    w = v.worst
    if v.error:
        lines.append(f"error: {v.error}")
    if w is not None:
        lines.append(f"worst tensor: {w.name!r}, max_abs_diff: {w.max_abs_diff:.6e}")
    index = [f.name for f in result.files].index(result.first_divergent)
    if index == 0:
        lines.append(f"the frontend snapshot already differs from {result.reference}: the program (or reference) is wrong")
    else:
        prev = result.files[index - 1].name
        state = "confirmed" if result.confirmed else "NOT confirmed (results not reproducible)"
        lines.append(f"{state}: {prev} matches, {result.first_divergent} diverges")
    return lines


def _tolerance(text: str) -> float:
    """An argparse type: a finite float >= 0."""
    value = float(text)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(text)
    return value


_tolerance.__name__ = "non-negative float"


@cli_main("python -m pypto.debug.bisect")
def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m pypto.debug.bisect", description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a build directory, its passes_dump/, or a dump file")
    ap.add_argument("--inputs", help="torch.save-d dict of input tensors (optionally {'tensors':..., 'expected':...})")
    ap.add_argument("--rtol", type=_tolerance, default=5e-2)
    ap.add_argument("--atol", type=_tolerance, default=5e-2)
    ap.add_argument("--all", action="store_true", help="validate every snapshot instead of bisecting")
    ap.add_argument("-o", "--output", help=f"where to write the verdicts (default: <dump>/{VALIDATION_FILE})")
    ap.add_argument("--no-write", action="store_true", help=f"do not write {VALIDATION_FILE}")
    args = ap.parse_args(argv)
    tensors, expected = load_inputs(args.inputs) if args.inputs else ({}, None)
    dump_dir = find_dump_dir(args.path)
    files = snapshots(dump_dir)
    if args.output:
        check_writable_path(args.output)
        check_output_not_input(args.output, [*files, args.inputs])
    print(f"bisect: {dump_dir} ({len(files)} snapshots)")
    result = bisect_dump(dump_dir, tensors, expected, rtol=args.rtol, atol=args.atol, check_all=args.all, log=print)
    for line in report_lines(result):
        print(line)
    if not args.no_write:
        print(f"wrote {write_validation(result, args.output)}")
    return 0 if result.first_divergent is None else EXIT_DIVERGED


if __name__ == "__main__":
    sys.exit(main())
