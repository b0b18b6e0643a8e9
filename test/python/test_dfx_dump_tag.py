"""Selective args dump (runtime-dfx-formats.md §6, upstream's "Selective tensor dump"): ``pl.dump_tag(t)``
and ``pl.at(..., dumps=[t])`` in the front end, their IR (``pl.dump_vars`` on ``func.call``, the
``dumps`` operands of ``pl.at``) through the printer, the parser and the pipeline, the level-1 dump
of a real run, and ``dump_viewer`` reading it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from xdsl.dialects import func

import pypto.language as pl
from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.dialects.program import AtOp, call_dump_indices
from pypto.errors import InvalidOperationError, ParserError, ParserSyntaxError, ParserTypeError, UndefinedVariableError
from pypto.ir import compile as pypto_compile
from pypto.runtime import RunConfig, run
from pypto.tools import dump_viewer

pytestmark = pytest.mark.usefixtures("own_dfx_flags")

T = "pl.Tensor[[16, 128], pl.FP32]"
KERNEL = f"""\
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        pl.store(pl.load(a, [0, 0], [16, 128]), [0, 0], out)
        return out
"""


def prog(body: str, kernel: str = KERNEL) -> str:
    """A program: the kernel ``k(a, out)`` and ``main(a, b, s, out)`` (Orchestration) with ``body``."""
    lines = "".join(f"        {ln}\n" for ln in body.splitlines())
    return (
        "import pypto.language as pl\n\n@pl.program\nclass P:\n" + kernel + "\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        f"    def main(self, a: {T}, b: {T}, s: pl.Scalar[pl.FP32], out: pl.Out[{T}]) -> {T}:\n"
        f"{lines}        return out\n"
    )


def calls(p: pl.Program, name: str = "main") -> list[tuple[str, tuple[int, ...]]]:
    """Each kernel call of ``name``: its callee and marked argument positions."""
    f = next(o for o in p.module.ops if isinstance(o, func.FuncOp) and o.sym_name.data == name)
    return [(c.callee.root_reference.data, call_dump_indices(c)) for c in f.walk() if isinstance(c, func.CallOp)]


# ---- front end ---------------------------------------------------------------------------------


def test_tag_marks_later_calls_by_value_not_name() -> None:
    p = pl.parse(
        prog(
            "out = self.k(a, out)\n"  # before the tag: unmarked
            "pl.dump_tag(a)\n"
            "out = self.k(a, out)\n"  # a marked
            "pl.dump_tag(out)\n"
            "out = self.k(a, out)\n"  # a and out (the value tagged) marked
            "out = self.k(b, out)\n"  # out is a new value now: unmarked
            "a = self.k(b, a)\n"  # a (tagged) is the Out argument here: marked
            "out = self.k(a, out)\n"  # a rebound: unmarked
        )
    )
    assert calls(p) == [("k", ()), ("k", (0,)), ("k", (0, 1)), ("k", ()), ("k", (1,)), ("k", ())]


def test_loop_carries_the_tag_and_scopes_take_tags_and_dumps() -> None:
    p = pl.parse(
        prog(
            "pl.dump_tag(out)\n"
            "for i in pl.range(2):\n"
            "    out = self.k(a, out)\n"  # the loop-carried out: tagged
            "with pl.at(level=pl.Level.CORE_GROUP, name_hint='sc', dumps=[b]):\n"
            "    out[:] = pl.add(b, a)\n"  # out after the loop is the loop's result: untagged
            "pl.dump_tag(a)\n"
            "with pl.at(level=pl.Level.CORE_GROUP, name_hint='sc2'):\n"
            "    out[:] = pl.add(a, b)\n"
        )
    )
    assert calls(p) == [("k", (1,))]
    scopes = [o for o in p.module.walk() if isinstance(o, AtOp)]
    assert [[v.name_hint for v in s.dumps] for s in scopes] == [["b"], ["a"]]


def test_untyped_function_may_tag() -> None:
    """An untyped function becomes the Orchestration when its scopes are outlined."""
    text = prog("pl.dump_tag(a)\nout = self.k(a, out)").replace(
        "@pl.function(type=pl.FunctionType.Orchestration)", "@pl.function"
    )
    assert calls(pl.parse(text)) == [("k", (0,))]


def _where(text: str, line_has: str, at: str) -> tuple[int, int]:
    lines = text.splitlines()
    n = next(i for i, ln in enumerate(lines) if line_has in ln)
    return n + 1, lines[n].rindex(at) + 1


BAD_KERNEL = KERNEL.replace("        pl.store(", "        pl.dump_tag(a)\n        pl.store(")
SCOPE = "with pl.at(level=pl.Level.CORE_GROUP{}):\n    out[:] = pl.add(a, a)"


@pytest.mark.parametrize(
    ("body", "line_has", "at", "cls", "message"),
    [
        ("out = self.k(a, out)", "pl.dump_tag(a)", "pl.dump_tag", ParserSyntaxError,
         "pl.dump_tag() is only valid inside an Orchestration or Inline function, not in the InCore function 'k'"),
        ("with pl.at(level=pl.Level.CORE_GROUP):\n    pl.dump_tag(a)\n    out[:] = pl.add(a, a)", "pl.dump_tag(a)",
         "pl.dump_tag", ParserSyntaxError, "pl.dump_tag() inside a pl.at scope: the scope's body becomes a kernel"),
        ("pl.dump_tag(a, out)", "pl.dump_tag", "pl.dump_tag", ParserSyntaxError,
         "pl.dump_tag() takes exactly one positional argument (no keywords)"),
        ("pl.dump_tag(a + a)", "pl.dump_tag", "a + a", ParserSyntaxError,
         "pl.dump_tag() argument must be a bare variable name"),
        ("pl.dump_tag(nope)", "pl.dump_tag", "nope", UndefinedVariableError,
         "pl.dump_tag() argument 'nope' is not defined at this point"),
        ("pl.dump_tag(s)", "pl.dump_tag", "s", ParserTypeError,
         "pl.dump_tag() argument 's' has type pl.Scalar[pl.FP32], expected a tensor"),
        ("t = pl.dump_tag(a)", "pl.dump_tag", "pl.dump_tag", ParserSyntaxError,
         "pl.dump_tag() is a statement; it has no value"),
        ("out = self.k(a, out, dumps=[a])", "dumps=", "[a]", ParserTypeError,
         "a plain call to 'k' takes no dumps="),
        ("out = self.k(a, out, attrs={'dumps': ['a']})", "attrs=", "'dumps'", ParserTypeError,
         'attrs={"dumps": ...} is not supported'),
        ("out = self.k(a, out, attrs={'dump_vars': [b]})", "attrs=", "b", ParserTypeError,
         "attrs[\"dump_vars\"] entry 'b' is not an argument of this call"),
        ("out = self.k(a, out, attrs={'dump_vars': [s]})", "attrs=", "s", ParserTypeError,
         "attrs[\"dump_vars\"] entry 's' has type pl.Scalar[pl.FP32], expected a tensor"),
        (SCOPE.format(", dumps=b"), "dumps=", "b", ParserTypeError, "pl.at dumps= must be a list of tensor variables"),
        (SCOPE.format(", dumps=['a']"), "dumps=", "'a'", ParserTypeError,
         "pl.at dumps= entries must be tensor variables, got ''a''"),
        (SCOPE.format(", dumps=[b]"), "dumps=", "b", ParserTypeError, "pl.at dumps= entry 'b' is not used in this scope"),
        (SCOPE.format(", dumps=[nope]"), "dumps=", "nope", UndefinedVariableError,
         "pl.at dumps= entry 'nope' is not defined at this point"),
        (SCOPE.format(", dumps=[s]"), "dumps=", "s", ParserTypeError, "pl.at dumps= entry 's' has type pl.Scalar[pl.FP32]"),
        (SCOPE.format(", dumps=[a]").replace("CORE_GROUP", "HOST"), "dumps=", "pl.at(", InvalidOperationError,
         "pl.at(level=HOST) is a hierarchy scope"),  # outside a HOST orchestrator: the level is the error
    ],
)  # fmt: skip
def test_bad_uses_are_located_errors(body: str, line_has: str, at: str, cls: type[ParserError], message: str) -> None:
    text = prog(body, BAD_KERNEL if "InCore function 'k'" in message else KERNEL)
    with pytest.raises(cls) as info:
        pl.parse(text, filename="k.py")
    line, col = _where(text, line_has, at)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"k.py:{line}:{col}: error: "), first
    assert message in first
    assert "Traceback" not in str(info.value)


# ---- printer, parser, pipeline ----------------------------------------------------------------

TAGGED = prog(
    "pl.dump_tag(a)\n"
    "out = self.k(a, out)\n"
    "with pl.at(level=pl.Level.CORE_GROUP, name_hint='twice', dumps=[b]):\n"
    "    out[:] = pl.add(b, b)\n"
)


def test_printed_forms_round_trip() -> None:
    p = pl.parse(TAGGED)
    text = p.as_python()
    assert 'out: pl.Tensor[[16, 128], pl.FP32] = self.k(a, out, attrs={"dump_vars": [a]})' in text
    assert 'with pl.at(level=pl.Level.CORE_GROUP, name_hint="twice", dumps=[b]):' in text
    again = pl.parse(text)
    assert again.as_python() == text
    assert calls(again) == calls(p) == [("k", (0,))]
    assert [[v.name_hint for v in o.dumps] for o in again.module.walk() if isinstance(o, AtOp)] == [["b"]]
    assert pl.parse(again.as_python()).as_mlir(debuginfo=False) == again.as_mlir(debuginfo=False)
    mlir = p.as_mlir(debuginfo=False)
    assert "{pl.dump_vars = [0 : i64]}" in mlir and '"pl.at"(%b)' in mlir
    assert print_mlir(parse_mlir(mlir), debuginfo=False) == mlir


def test_marks_survive_the_pipeline(tmp_path: Path) -> None:
    compiled = pypto_compile(pl.parse(TAGGED), output_dir=str(tmp_path / "b"), dump_passes=True)
    dumps = sorted((tmp_path / "b" / "passes_dump").glob("[0-9][0-9]_*.py"))
    assert len(dumps) > 40
    for d in dumps:  # each dump reads back to the same text
        text = d.read_text()
        assert pl.parse(text, filename=str(d)).as_python() == text, d.name
    last = dumps[-1].read_text()
    assert 'self.k(a__ssa_v0, out__ssa_v0, attrs={"dump_vars": [a__ssa_v0]})' in last
    assert 'self.twice(b__ssa_v0, out__ssa_v1, attrs={"dump_vars": [b__ssa_v0]})' in last
    assert compiled.lowered is not None and calls(compiled.lowered) == [("k", (0,)), ("twice", (0,))]


# ---- the run: level 1 dumps the marked tensors only ---------------------------------------------


def _run(build: Path, level: int) -> tuple[dict[str, Any], bytes, dict[str, torch.Tensor]]:
    torch.manual_seed(1)
    t = {"a": torch.randn(16, 128), "b": torch.randn(16, 128), "out": torch.zeros(16, 128)}
    compiled = pypto_compile(pl.parse(TAGGED), output_dir=str(build))
    run(compiled, t["a"], t["b"], 0.5, t["out"], config=RunConfig(enable_dump_args=level))
    torch.testing.assert_close(t["out"], 2 * t["b"])
    d = build / "dfx_outputs" / "args_dump"
    return json.loads((d / "args_dump.json").read_text()), (d / "args.bin").read_bytes(), t


def _rows(m: dict[str, Any]) -> list[tuple[int, str, int, str, str]]:
    return [(int(a["task_id"], 16), a["stage"], a["arg_index"], a["role"], a["kind"]) for a in m["args"]]


def _payloads(m: dict[str, Any], blob: bytes) -> dict[tuple[int, str, int], np.ndarray]:
    return {
        (int(a["task_id"], 16), a["stage"], a["arg_index"]): np.frombuffer(
            blob[a["bin_offset"] : a["bin_offset"] + a["bin_size"]], "<f4"
        ).reshape(a["shape"])
        for a in m["args"]
    }


def test_level1_keeps_the_tagged_and_listed_tensors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m, blob, t = _run(tmp_path / "l1", 1)
    # task 0 = k(a, out): a tagged, an input -> before only; task 1 = twice(b, out): b listed
    assert _rows(m) == [(0, "before_dispatch", 0, "input", "tensor"), (1, "before_dispatch", 0, "input", "tensor")]
    assert m["dump_args_level"] == 1 and (m["total_args"], m["input_args"], m["output_args"]) == (2, 2, 0)
    got = _payloads(m, blob)
    np.testing.assert_array_equal(got[0, "before_dispatch", 0], t["a"].numpy())
    np.testing.assert_array_equal(got[1, "before_dispatch", 0], t["b"].numpy())
    # level 2: every argument (the outs too), the level-1 rows among them with the same bytes
    m2, blob2, _ = _run(tmp_path / "l2", 2)
    assert _rows(m2) == [
        (0, "before_dispatch", 0, "input", "tensor"), (0, "after_completion", 1, "output", "tensor"),
        (1, "before_dispatch", 0, "input", "tensor"), (1, "after_completion", 1, "output", "tensor"),
    ]  # fmt: skip
    full = _payloads(m2, blob2)
    for key, arr in got.items():
        np.testing.assert_array_equal(arr, full[key])
    # dump_viewer reads the partial dump: its table and its export
    d = tmp_path / "l1" / "dfx_outputs" / "args_dump"
    assert dump_viewer.main([str(d)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{d}: level 1, 2 of 2 args" and len(lines) == 4
    assert lines[3].split() == ["1", "0x0000000000000001", "before_dispatch", "input", "0", "FP32", "16x128", "8192"]
    assert dump_viewer.main([str(d), "--export"]) == 0
    assert sorted(p.name for p in (d / "txt").iterdir()) == ["task_0_before_in0.txt", "task_1_before_in0.txt"]
    detail = (d / "txt" / "task_1_before_in0.txt").read_text().split("\n## detail\n")[1].splitlines()
    assert detail[129] == f"[1, 1] {float(t['b'][1, 1]):.7g}"


@pl.jit.inline
def _double(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.add(x, x)
    return y


@pl.jit
def _tag_at_inline_call(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    pl.dump_tag(b)
    y = _double(b, y)  # the tag rides the Inline call onto the spliced scope's task
    y = _double(a, y)  # untagged
    return y


def test_jit_tag_through_an_inline_helper(tmp_path: Path) -> None:
    a, b, y = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 64)
    _tag_at_inline_call(a, b, y, config=RunConfig(save_kernels_dir=str(tmp_path / "j"), enable_dump_args=1))
    torch.testing.assert_close(y, 2 * a)
    d = tmp_path / "j" / "dfx_outputs" / "args_dump"
    m, blob = json.loads((d / "args_dump.json").read_text()), (d / "args.bin").read_bytes()
    assert _rows(m) == [(0, "before_dispatch", 0, "input", "tensor")]
    np.testing.assert_array_equal(_payloads(m, blob)[0, "before_dispatch", 0], b.numpy())
