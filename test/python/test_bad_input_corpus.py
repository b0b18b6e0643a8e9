"""The bad-input corpus (issue 16): every tool and the Python API on inputs a
hostile but realistic user gives them. Cases are data: the command (or API
script), the files it finds, the exit code (or exception) and a fragment of the
message. A user mistake exits 1 with a located ``error:`` line, never a
traceback or ``internal error``, and leaves no output file behind.

Classes (issue 16): 1 user mistakes once reported as internal errors,
2 raw exceptions from the front end, 3 partial or stale artefacts, 4 wrong
verdicts or unlocated messages; ``tool`` cases cover each CLI.
"""

from __future__ import annotations

import importlib
import os
import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pypto import errors
from pypto.diagnostics import DiagnosticError

TOOLS: dict[str, str] = {
    "pypto-opt": "pypto.tools.pypto_opt",
    "ptoas": "pypto.ptoas.cli",
    "pto_text": "pypto.ptoas.pto_text",
    "ir-trace": "pypto.tools.ir_trace.cli",
    "memory-map": "pypto.tools.memory_map.cli",
    "bisect": "pypto.debug.bisect",
    "profiling": "pypto.compile_profiling.__main__",
    "device": "pypto.target.__main__",
    "clean_sim_trace": "pypto.tools.clean_sim_trace",
    "swimlane_converter": "pypto.tools.swimlane_converter",
    "deps_viewer": "pypto.tools.deps_viewer",
    "dump_viewer": "pypto.tools.dump_viewer",
    "scope_stats_plot": "pypto.tools.scope_stats_plot",
    "sched_overhead": "pypto.tools.sched_overhead_analysis",
    "upstream_compat": "pypto.tools.upstream_compat",
    "ptoas_lit_compat": "pypto.tools.ptoas_lit_compat",
}
"""Each CLI by its module (its ``main(argv)``)."""

BINARY = bytes(range(256)) * 4
VEC = "!pto.tile_buf<loc=vec, dtype=f32, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def _pto(body: str, attrs: str = "") -> str:
    return f"module{attrs} {{\n  func.func @k() {{\n{body}    return\n  }}\n}}\n"


def _alloc(r: int, c: int, addr: str | None = None) -> str:
    t = VEC.format(r=r, c=c)
    head = f"    %c = arith.constant {addr} : i64\n" if addr is not None else ""
    at = " addr = %c" if addr is not None else ""
    return f"{head}    %a = pto.alloc_tile{at} : {t}\n    pto.tadd ins(%a, %a : {t}, {t}) outs(%a : {t})\n"


DSL_HEAD = "import pypto.language as pl\n\n\n@pl.program\nclass P:\n"
SIG = (
    "    @pl.function(type=pl.FunctionType.Orchestration)\n"
    "    def f(self, a: pl.Tensor[[{shape}], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]])"
    " -> pl.Tensor[[128, 128], pl.FP32]:\n"
)


def _dsl(body: str, shape: str = "128, 128") -> str:
    return DSL_HEAD + SIG.format(shape=shape) + body


ADD_BODY = "        with pl.at(level=pl.Level.CORE_GROUP):\n            out[:] = pl.add(a, a)\n        return out\n"
GOOD_DSL = _dsl(ADD_BODY)


@dataclass(frozen=True)
class Case:
    """One CLI run: ``tool args`` in a folder holding ``files``; ``{d}`` in an
    argument is that folder. ``unchanged`` files must keep their content,
    ``absent`` ones must not exist afterwards."""

    id: str
    cls: str
    tool: str
    args: tuple[str, ...]
    code: int
    message: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    unchanged: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()


def C(id: str, cls: str, tool: str, args: str, code: int, message: str, **kw: object) -> Case:  # noqa: A002
    return Case(id, cls, tool, tuple(args.split()), code, message, **kw)  # type: ignore[arg-type]


# ---- generated: every tool on a missing, binary, folder or empty input --------------------------

INPUT_ARGS: dict[str, str] = {
    "pypto-opt": "{d}/IN",
    "ptoas": "{d}/IN --emit pto",
    "pto_text": "{d}/IN",
    "ir-trace": "{d}/IN -o {d}/r.html",
    "memory-map": "{d}/IN -o {d}/r.html",
    "bisect": "{d}/IN --no-write",
    "profiling": "show {d}/IN",
    "device": "{d}/IN",
    "clean_sim_trace": "{d}/IN",
    "swimlane_converter": "{d}/IN",
    "deps_viewer": "{d}/IN",
    "dump_viewer": "{d}/IN",
    "scope_stats_plot": "{d}/IN",
    "sched_overhead": "--chip-swimlane-records-json {d}/IN --deps-json {d}/IN",
}


def _generated() -> list[Case]:
    out: list[Case] = []
    for tool, args in INPUT_ARGS.items():
        out.append(C(f"{tool}-missing-input", "tool", tool, args.replace("IN", "missing.in"), 1, "missing.in"))
        out.append(
            C(f"{tool}-binary-input", "tool", tool, args.replace("IN", "bin.in"), 1, "bin.in", files={"bin.in": BINARY})
        )
        out.append(C(f"{tool}-empty-input", "tool", tool, args.replace("IN", "empty.in"), 1, "empty.in", files={"empty.in": ""}))
    return out


# Inputs that are a folder where a file is wanted (and the reverse).
FOLDER_INPUT = [
    C("pypto-opt-folder-input", "1", "pypto-opt", "{d}/sub", 1, "sub", files={"sub/x": ""}),
    C("ptoas-folder-input", "1", "ptoas", "{d}/sub", 1, "sub", files={"sub/x": ""}),
    C("profiling-folder-input", "1", "profiling", "show {d}/sub", 1, "sub", files={"sub/x": ""}),
    C("device-folder-input", "1", "device", "{d}/sub", 1, "sub", files={"sub/x": ""}),
    C("ir-trace-file-input", "1", "ir-trace", "{d}/f.py -o {d}/r.html", 1, "not a directory", files={"f.py": "x"}),
    C("bisect-empty-folder", "4", "bisect", "{d}/sub --no-write", 1, "no pass dumps", files={"sub/x": ""}),
]

# -o pointing at a folder or into a missing folder: exit 1, nothing written (class 1 and 3).
OUTPUTS: dict[str, str] = {
    "pypto-opt": "{d}/in.py -o OUT",
    "ptoas": "{d}/in.pto --emit pto -o OUT",
    "ir-trace": "{d}/dump -o OUT",
    "deps_viewer": "{d}/in.json -o OUT",
    "bisect": "{d}/dump --all -o OUT",
}


def _output_cases() -> list[Case]:
    files: dict[str, str | bytes] = {
        "in.py": GOOD_DSL,
        "in.pto": _pto(_alloc(32, 32)),
        "outdir/keep": "k",
        "dump/00_frontend.py": GOOD_DSL,
        "in.json": '{"tasks": [], "edges": []}',
    }
    out: list[Case] = []
    for tool, args in OUTPUTS.items():
        out.append(
            C(f"{tool}-o-is-folder", "1", tool, args.replace("OUT", "{d}/outdir"), 1, "outdir", files=files,
              unchanged=("outdir/keep",))  # fmt: skip
        )
        out.append(
            C(f"{tool}-o-missing-folder", "1", tool, args.replace("OUT", "{d}/nodir/o.txt"), 1, "nodir", files=files,
              absent=("nodir",))  # fmt: skip
        )
    return out


# ---- pypto-opt (classes 1, 3) -------------------------------------------------------------------

JIT_ONLY = "import pypto.language as pl\n\n\n@pl.jit\ndef k(a: pl.Tensor, out: pl.Out[pl.Tensor]):\n    return out\n"
OPT = [
    C("opt-empty-py", "1", "pypto-opt", "{d}/e.py", 1, "found none", files={"e.py": ""}),
    C("opt-jit-only", "1", "pypto-opt", "{d}/j.py", 1, "a @pl.jit kernel is not a program", files={"j.py": JIT_ONLY}),
    C("opt-not-pl", "1", "pypto-opt", "{d}/n.py", 1, "found none", files={"n.py": "x = 1\nprint(x)\n"}),
    C("opt-python-syntax", "2", "pypto-opt", "{d}/s.py", 1, "s.py:", files={"s.py": "def (:\n"}),
    C("opt-missing-resume", "1", "pypto-opt", "--resume {d}/05_after_X.py", 1, "05_after_X.py"),
    C("opt-resume-bad-name", "1", "pypto-opt", "--resume {d}/x.py", 1, "not a pass dump name", files={"x.py": GOOD_DSL}),
    C("opt-missing-reproducer", "1", "pypto-opt", "--run-reproducer {d}/reproducer", 1, "reproducer"),
    C("opt-not-a-reproducer", "4", "pypto-opt", "--run-reproducer {d}/r", 1, "not a pypto reproducer", files={"r": "hello\n"}),
    C("opt-dump-passes-is-file", "1", "pypto-opt", "{d}/in.py -p simplify --dump-passes {d}/f", 1, "f",
      files={"in.py": GOOD_DSL, "f": "x"}, unchanged=("f",)),  # fmt: skip
    C("opt-unknown-pass", "1", "pypto-opt", "{d}/in.py -p simplifyy", 1, "unknown pass 'simplifyy'", files={"in.py": GOOD_DSL}),
    C("opt-bad-pipeline", "1", "pypto-opt", "{d}/in.py -p a{{", 1, "invalid pass pipeline", files={"in.py": GOOD_DSL}),
    C("opt-missing-plugin", "1", "pypto-opt", "{d}/in.py --load-pass-plugin {d}/p.py", 1, "could not open pass plugin",
      files={"in.py": GOOD_DSL}),  # fmt: skip
    C("opt-broken-plugin", "1", "pypto-opt", "{d}/in.py --load-pass-plugin {d}/p.py", 1, "could not load pass plugin",
      files={"in.py": GOOD_DSL, "p.py": "raise ValueError('nope')\n"}),  # fmt: skip
    C("opt-fail-keeps-old-output", "3", "pypto-opt", "{d}/n.py -o {d}/out.py", 1, "found none",
      files={"n.py": "x = 1\n", "out.py": "old\n"}, unchanged=("out.py",)),  # fmt: skip
    C("opt-fail-creates-no-output", "3", "pypto-opt", "{d}/n.py -o {d}/new.py", 1, "found none",
      files={"n.py": "x = 1\n"}, absent=("new.py",)),  # fmt: skip
    C("opt-dump-passes-no-stale-dumps", "3", "pypto-opt", "{d}/in.py -p outline-incore-scopes --dump-passes {d}/dd", 0, "",
      files={"in.py": GOOD_DSL, "dd/02_after_Old.py": "old", "dd/.01_after_X.py.abcd1234.tmp": "", "dd/keep.txt": "k"},
      unchanged=("dd/keep.txt",), absent=("dd/02_after_Old.py", "dd/.01_after_X.py.abcd1234.tmp")),  # fmt: skip
    C("ptoas-dump-dir-is-file", "1", "ptoas", "{d}/in.pto --emit pto --dump-dir {d}/f", 1, "f",
      files={"in.pto": _pto(_alloc(32, 32)), "f": "x"}, unchanged=("f",)),  # fmt: skip
    C("ir-trace-skips-temp-files", "3", "ir-trace", "{d}/dump -o {d}/r.html", 0, "",
      files={"dump/00_frontend.py": GOOD_DSL, "dump/.01_after_A.py.abcd1234.tmp": "partial"}),  # fmt: skip
    C("opt-bad-mlir", "1", "pypto-opt", "{d}/m.mlir", 1, "m.mlir:2:1: error:", files={"m.mlir": "builtin.module { %x = \n"}),
    C("opt-unknown-op-mlir", "1", "pypto-opt", "{d}/m.mlir", 1, "m.mlir:1:", files={"m.mlir": '"foo.bar"() : () -> ()\n'}),
    C("opt-latin1-input", "1", "pypto-opt", "{d}/l.py", 1, "not UTF-8", files={"l.py": "# caf\xe9\n".encode("latin-1")}),
]

# ---- ptoas (classes 1, 4) -----------------------------------------------------------------------

PTOAS = [
    C("ptoas-64MiB-tile", "4", "ptoas", "{d}/k.pto --emit pto", 1, "k.pto:3:5: error: vec tile of 67108864 bytes is larger",
      files={"k.pto": _pto(_alloc(4096, 4096))}),  # fmt: skip
    C("ptoas-64MiB-tile-planned", "4", "ptoas", "{d}/k.pto --emit pto --memory-planner", 1, "is larger than the vec buffer",
      files={"k.pto": _pto(_alloc(4096, 4096))}),  # fmt: skip
    C("ptoas-tile-past-ub", "4", "ptoas", "{d}/k.pto --emit pto", 1, "k.pto:4:5: error: vec tile at address 196000",
      files={"k.pto": _pto(_alloc(64, 64, "196000"))}),  # fmt: skip
    C("ptoas-negative-address", "4", "ptoas", "{d}/k.pto --emit pto", 1, "vec tile at address -32",
      files={"k.pto": _pto(_alloc(64, 64, "-32"))}),  # fmt: skip
    C("ptoas-unknown-arch", "4", "ptoas", "{d}/k.pto --emit pto", 1, "k.pto:1:1: error: unknown pto.target_arch 'z9000'",
      files={"k.pto": _pto("", ' attributes {pto.target_arch = "z9000"}')}),  # fmt: skip
    C("ptoas-unknown-arch-planned", "4", "ptoas", "{d}/k.pto --emit pto --memory-planner", 1, "unknown pto.target_arch",
      files={"k.pto": _pto("", ' attributes {pto.target_arch = "z9000"}')}),  # fmt: skip
    C("ptoas-fail-keeps-output", "3", "ptoas", "{d}/k.pto --emit pto -o {d}/o.pto", 1, "is larger",
      files={"k.pto": _pto(_alloc(4096, 4096)), "o.pto": "old"}, unchanged=("o.pto",)),  # fmt: skip
    C("ptoas-fail-no-output", "3", "ptoas", "{d}/k.pto --emit pto -o {d}/o.pto", 1, "is larger",
      files={"k.pto": _pto(_alloc(4096, 4096))}, absent=("o.pto",)),  # fmt: skip
    C("ptoas-parse-error", "1", "ptoas", "{d}/k.pto --emit pto", 1, "k.pto:2:1: error:", files={"k.pto": "module {\n"}),
    C("ptoas-bad-arch-flag", "1", "ptoas", "{d}/k.pto --arch z9000", 1, "invalid choice", files={"k.pto": _pto("")}),
    C("pto_text-parse-error", "1", "pto_text", "{d}/k.pto", 1, "k.pto:", files={"k.pto": "module { pto.nope }\n"}),
    C("pto_text-usage", "1", "pto_text", "", 2, "usage"),
]

# ---- the other tools (classes 1, 4) -------------------------------------------------------------

NOT_JSON = {"a.json": "not json\n", "b.json": '{"total_seconds": 1.0, "stages": []}\n'}
OTHERS = [
    C("profiling-diff-not-json", "4", "profiling", "diff {d}/a.json {d}/b.json", 1, "a.json: not a pipeline_profile.json",
      files=NOT_JSON),  # fmt: skip
    C("profiling-diff-wrong-json", "4", "profiling", "diff {d}/b.json {d}/c.json", 1, "c.json: not a pipeline_profile.json",
      files={**NOT_JSON, "c.json": '{"a": 1}'}),  # fmt: skip
    C("profiling-show-list", "4", "profiling", "show {d}/c.json", 1, "c.json: not a pipeline_profile.json",
      files={"c.json": "[1, 2]"}),  # fmt: skip
    C("profiling-bad-stage", "4", "profiling", "show {d}/c.json", 1, "c.json: not a pipeline_profile.json",
      files={"c.json": '{"total_seconds": 1, "stages": [{"name": "x"}]}'}),  # fmt: skip
    C("device-binary", "1", "device", "{d}/t.mlir", 1, "t.mlir: target file is not UTF-8", files={"t.mlir": BINARY}),
    C("device-unknown-name", "1", "device", "z9000", 1, "unknown target 'z9000'"),
    C("device-bad-target-text", "1", "device", "{d}/t.mlir", 1, "t.mlir", files={"t.mlir": "npu.target {\n"}),
    C("bisect-negative-rtol", "1", "bisect", "{d} --rtol -1", 2, "argument --rtol: invalid non-negative float"),
    C("bisect-nan-atol", "1", "bisect", "{d} --atol nan", 2, "argument --atol: invalid non-negative float"),
    C("bisect-missing-inputs", "1", "bisect", "{d}/dump --inputs {d}/none.pt", 1, "none.pt",
      files={"dump/00_frontend.py": GOOD_DSL}),  # fmt: skip
    C("bisect-duplicate-snapshot", "4", "bisect", "{d}/dump --no-write", 1, "two snapshots numbered 01",
      files={"dump/00_frontend.py": GOOD_DSL, "dump/01_after_A.py": GOOD_DSL, "dump/01_after_B.py": GOOD_DSL}),  # fmt: skip
    C("bisect-o-missing-folder", "1", "bisect", "{d}/dump -o {d}/no/v.json", 1, "no: output directory does not exist",
      files={"dump/00_frontend.py": GOOD_DSL}),  # fmt: skip
    C("ir-trace-duplicate", "4", "ir-trace", "{d}/dump -o {d}/r.html", 1, "duplicate snapshot index 01",
      files={"dump/00_frontend.py": GOOD_DSL, "dump/01_after_A.py": GOOD_DSL, "dump/01_after_B.py": GOOD_DSL},
      absent=("r.html",)),  # fmt: skip
    C("ir-trace-no-frontend", "4", "ir-trace", "{d}/dump -o {d}/r.html", 1, "missing 00_frontend.py",
      files={"dump/01_after_A.py": GOOD_DSL}, absent=("r.html",)),  # fmt: skip
    C("ir-trace-bad-utf8-snapshot", "4", "ir-trace", "{d}/dump -o {d}/r.html", 1, "not valid UTF-8",
      files={"dump/00_frontend.py": BINARY}, absent=("r.html",)),  # fmt: skip
    C("ir-trace-bad-context", "1", "ir-trace", "{d}/dump --context -3", 2, "--context"),
    C("memory-map-no-dump", "4", "memory-map", "{d}/sub -o {d}/r.html", 1, "sub", files={"sub/x.txt": "x"},
      absent=("r.html",)),  # fmt: skip
    C("ir-trace-failed-compile", "4", "ir-trace", "{d}/dump -o {d}/r.html", 0, "",
      files={"dump/00_frontend.py": GOOD_DSL, "dump/01_after_A.py": GOOD_DSL, "dump/02_failed_B.py": GOOD_DSL}),  # fmt: skip
    C("memory-map-failed-build", "4", "memory-map", "{d}/dump -o {d}/r.html", 1,
      "the compile failed in pass AllocateMemoryAddr (02_failed_AllocateMemoryAddr.py)",
      files={"dump/00_frontend.py": GOOD_DSL, "dump/01_after_InitMemRef.py": GOOD_DSL,
             "dump/02_failed_AllocateMemoryAddr.py": GOOD_DSL}, absent=("r.html",)),  # fmt: skip
    C("swimlane-not-json", "1", "swimlane_converter", "{d}/r.json", 1, "r.json", files={"r.json": "{"}),
    C("swimlane-wrong-json", "4", "swimlane_converter", "{d}/r.json", 1, "r.json", files={"r.json": "[]"}),
    C("deps-not-json", "1", "deps_viewer", "{d}/deps.json", 1, "deps.json", files={"deps.json": "{"}),
    C("deps-wrong-json", "4", "deps_viewer", "{d}/deps.json", 1, "deps.json", files={"deps.json": "[1]"}),
    C("dump-viewer-no-manifest", "1", "dump_viewer", "{d}/sub", 1, "sub", files={"sub/x": ""}),
    C("dump-viewer-bad-task", "1", "dump_viewer", "{d}/sub --task zz", 2, "--task", files={"sub/x": ""}),
    C("scope-stats-not-jsonl", "1", "scope_stats_plot", "{d}/s.jsonl", 1, "s.jsonl", files={"s.jsonl": "{\n"}),
    C("sched-missing-flag", "1", "sched_overhead", "", 1, "--chip-swimlane-records-json is required"),
    C("sched-not-json", "1", "sched_overhead", "--chip-swimlane-records-json {d}/r.json --deps-json {d}/d.json", 1, "r.json",
      files={"r.json": "{", "d.json": "{}"}),  # fmt: skip
    C("clean-sim-trace-missing", "1", "clean_sim_trace", "{d}/nothing", 1, "nothing: no such file or directory"),
    C("clean-sim-trace-bad-pto", "1", "clean_sim_trace", "{d}/k.pto", 1, "k.pto", files={"k.pto": "module {\n"}),
    C("upstream-compat-not-a-checkout", "1", "upstream_compat", "{d}/sub", 1, "no examples/ folder", files={"sub/x": ""}),
    C("ptoas-lit-compat-missing", "1", "ptoas_lit_compat", "{d}/nothing", 1, "no such directory (expected a PTOAS checkout)"),
]

CASES: list[Case] = _generated() + FOLDER_INPUT + _output_cases() + OPT + PTOAS + OTHERS


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _snapshot(root: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {n: (root / n).read_bytes() for n in names}


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PYPTO_BACKTRACE", raising=False)
    monkeypatch.delenv("PTO_BACKTRACE", raising=False)
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_case(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, case.files)
    before = _snapshot(tmp_path, case.unchanged)
    main = importlib.import_module(TOOLS[case.tool]).main
    code = main([a.replace("{d}", str(tmp_path)) for a in case.args])
    err = capsys.readouterr().err
    assert code == case.code, err
    assert case.message in err, err
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 1:
        first = err.splitlines()[0]
        assert "error:" in first or first.startswith("usage:"), err  # one located line (or the usage) first
    assert _snapshot(tmp_path, case.unchanged) == before
    for name in case.absent:
        assert not (tmp_path / name).exists(), name


def test_corpus_covers_every_tool_and_class() -> None:
    assert len(CASES) + len(API_CASES) >= 100
    assert {c.tool for c in CASES} == set(TOOLS)
    assert {c.cls for c in CASES} | {c.cls for c in API_CASES} >= {"1", "2", "3", "4"}


# ---- the Python API (classes 2, 4): a script run in-process raises a pypto.errors class ---------


@dataclass(frozen=True)
class ApiCase:
    """A script (``{d}`` is its folder) whose run raises ``error`` with ``message``."""

    id: str
    cls: str
    script: str
    error: type[BaseException]
    message: str
    files: dict[str, str | bytes] = field(default_factory=dict)


JIT = (
    "import torch\nimport pypto.language as pl\n\n\n@pl.jit\ndef k(a: pl.Tensor, out: pl.Out[pl.Tensor]):\n"
    "    with pl.at(level=pl.Level.CORE_GROUP):\n{body}    return out\n\n\n"
    "a = torch.randn(128, 128)\nout = torch.empty(128, 128)\n{call}\n"
)


def _jit(body: str, call: str = "k.compile(a, out)") -> str:
    return JIT.format(body=body, call=call)


LOADS = "import pypto.language as pl\npl.loads(r'{d}/k.py')\n"
COMPILE = "import pypto.ir as ir\nimport pypto.language as pl\nir.compile(pl.loads(r'{{d}}/k.py'), output_dir=r'{{d}}/{out}')\n"
API_CASES: list[ApiCase] = [
    ApiCase("shape-divides-by-zero", "2", LOADS, errors.ParserError, "division by zero in a constant expression",
            {"k.py": _dsl(ADD_BODY, shape="128, 128 // 0")}),  # fmt: skip
    ApiCase("shape-modulo-zero", "2", LOADS, errors.ParserError, "division by zero", {"k.py": _dsl(ADD_BODY, shape="128 % 0, 128")}),
    ApiCase("loads-bad-utf8", "2", LOADS, errors.ParserSyntaxError, "k.py:2:3: error: the file is not UTF-8 text",
            {"k.py": b"import pypto.language as pl\n# \xff\xfe\n"}),  # fmt: skip
    ApiCase("missing-return", "4", LOADS, errors.ParserError, "declares a result but has no return",
            {"k.py": _dsl("        with pl.at(level=pl.Level.CORE_GROUP):\n            out[:] = pl.add(a, a)\n")}),  # fmt: skip
    ApiCase("recursive-jit", "2", _jit("        out[:] = pl.add(a, a)\n    k(a, out)\n"), errors.ParserSyntaxError,
            "recursive call to 'k' is not supported"),  # fmt: skip
    ApiCase("constant-oob-load", "4", _jit("        t = pl.load(a, [64, 0], [128, 128])\n        pl.store(t, [0, 0], out)\n"),
            errors.ParserError, "window [64:192] in dimension 0 is past the end of the tensor (size 128)"),  # fmt: skip
    ApiCase("negative-offset-load", "4", _jit("        t = pl.load(a, [0, -1], [128, 128])\n        pl.store(t, [0, 0], out)\n"),
            errors.ParserError, "offset -1 in dimension 1 is negative"),  # fmt: skip
    ApiCase("zero-tile-size", "4", _jit("        t = pl.load(a, [0, 0], [0, 128])\n        pl.store(t, [0, 0], out)\n"),
            errors.ParserError, "every tile dimension must be positive"),  # fmt: skip
    ApiCase("negative-tile-size", "4", _jit("        t = pl.load(a, [0, 0], [128, -64])\n        pl.store(t, [0, 0], out)\n"),
            errors.ParserError, "every tile dimension must be positive"),  # fmt: skip
    ApiCase("meta-tensor-run", "2", _jit("        out[:] = pl.add(a, a)\n", "k(a.to('meta'), out.to('meta'))"),
            TypeError, "is a device='meta' tensor"),  # fmt: skip
    ApiCase("unknown-diagnostic-name", "4",
            COMPILE.format(out="b").replace("output_dir=", "disabled_diagnostics=['UnusedVariabel'], output_dir="),
            errors.InvalidArgumentError, "unknown diagnostic 'UnusedVariabel' in disabled_diagnostics; did you mean "
            "'UnusedVariable'?", {"k.py": GOOD_DSL}),  # fmt: skip
    ApiCase("output-dir-is-file", "3", COMPILE.format(out="f"), errors.Error, "output_dir is a file",
            {"k.py": GOOD_DSL, "f": "x"}),  # fmt: skip
    ApiCase("output-dir-foreign", "3", COMPILE.format(out="mine"), errors.Error, "holds no PyPTO build",
            {"k.py": GOOD_DSL, "mine/notes.txt": "keep"}),  # fmt: skip
    ApiCase("reproducer-bad-header", "4", "from pypto.ir import run_reproducer\nrun_reproducer(r'{d}/r')\n", DiagnosticError,
            "r:3:1: error: malformed reproducer header '# first-index: 3x': expected a pass number",
            {"r": "# pypto reproducer v1\n# pipeline: simplify\n# first-index: 3x\n# ---- input IR ----\n"}),  # fmt: skip
]


@pytest.mark.parametrize("case", API_CASES, ids=[c.id for c in API_CASES])
def test_api_case(case: ApiCase, tmp_path: Path) -> None:
    _write(tmp_path, {k: v.replace("{d}", str(tmp_path)) if isinstance(v, str) else v for k, v in case.files.items()})
    script = tmp_path / "script.py"
    script.write_text(case.script.replace("{d}", str(tmp_path)))
    with pytest.raises(case.error) as info:
        runpy.run_path(str(script), run_name="__main__")
    assert case.message in str(info.value)
    if isinstance(info.value, errors.ParserError):
        assert info.value.span is not None, "a DSL error carries its location"


def test_non_ascii_identifier_parses(tmp_path: Path) -> None:
    """Class 2: a non-ASCII name is a valid Python identifier; the DSL keeps it (no xDSL name-hint error)."""
    import pypto.language as pl

    path = tmp_path / "k.py"
    path.write_text(_dsl("        with pl.at(level=pl.Level.CORE_GROUP):\n            données = pl.add(a, a)\n"
                         "            out[:] = données\n        return out\n"))  # fmt: skip
    assert "pl.tensor.assemble(out, données, [0, 0])" in pl.loads(path).as_python()


def test_jit_from_stdin_names_the_problem(tmp_path: Path) -> None:
    """``python - < script.py``: no OSError traceback, a located error saying why."""
    import subprocess
    import sys

    source = _jit("        out[:] = pl.add(a, a)\n")
    env = {**os.environ, "PYPTO_PROG_BUILD_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-"], input=source, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode != 0
    assert "<stdin>:5:1: error: cannot read the source of 'k'" in proc.stderr, proc.stderr
    assert "OSError" not in proc.stderr



# ---- the public API walked with bad arguments: only pypto.errors classes (or OSError naming the file) ----

USER_ERROR_TYPES = (errors.Error, errors.ParserError, DiagnosticError, OSError)


def _program(tmp: Path) -> object:
    import pypto.language as pl

    path = tmp / "good.py"
    path.write_text(GOOD_DSL)
    return pl.loads(path)


def _compile(tmp: Path, **kw: object) -> object:
    import pypto.ir as ir

    return ir.compile(_program(tmp), output_dir=tmp / "build", **kw)  # type: ignore[arg-type]


def _run(tmp: Path, *args: object) -> object:
    from pypto.runtime import run

    return run(_compile(tmp), *args)


def _t(*shape: int, dtype: str = "float32") -> object:
    import torch

    return torch.zeros(*shape, dtype=getattr(torch, dtype))


API_WALK: list[tuple[str, Callable[[Path], object], type[BaseException], str]] = [
    ("compile-strategy", lambda d: _compile(d, strategy="Fast"), errors.InvalidArgumentError, "optimization strategy"),
    ("compile-level", lambda d: _compile(d, verification_level="HIGHEST"), errors.InvalidArgumentError, "verification level"),
    ("compile-planner", lambda d: _compile(d, memory_planner="XYZ"), errors.InvalidArgumentError, "memory planner 'XYZ'"),
    ("compile-platform", lambda d: _compile(d, platform="z9000"), errors.InvalidArgumentError, "platform 'z9000'"),
    ("compile-backend", lambda d: _compile(d, backend_type="Foo"), errors.InvalidArgumentError, "backend_type 'Foo'"),
    ("compile-dump-passes", lambda d: _compile(d, dump_passes="yes"), errors.InvalidArgumentError, "dump_passes='yes'"),
    ("compile-pass-name", lambda d: _compile(d, passes=["InitMemRef"]), errors.ArgumentTypeError,
     "passes[0]: expected a pass class (a PyPTOPass subclass"),  # fmt: skip
    ("compile-dir-under-a-file", lambda d: (d / "f").write_text("x") and __import__("pypto.ir").ir.compile(
        _program(d), output_dir=d / "f" / "b"), errors.Error, "f/b: output_dir cannot be made: "),  # fmt: skip
    ("compile-phase", lambda d: _compile(d, diagnostic_phase="never"), errors.InvalidArgumentError, "diagnostic phase"),
    ("compile-not-program", lambda d: __import__("pypto.ir").ir.compile("x", output_dir=d / "b"), errors.ArgumentTypeError,
     "expected a pypto.ir.Program"),  # fmt: skip
    ("parse-not-text", lambda d: __import__("pypto.language").language.parse(42), errors.ArgumentTypeError, "pl.parse takes"),
    ("loads-missing", lambda d: __import__("pypto.language").language.loads(d / "none.py"), FileNotFoundError, "none.py"),
    ("loads-folder", lambda d: __import__("pypto.language").language.loads(d), IsADirectoryError, "Is a directory"),
    ("run-arg-count", lambda d: _run(d, _t(128, 128)), errors.ArgumentTypeError, "takes 2 arguments"),
    ("run-config-dict", lambda d: __import__("pypto.runtime").runtime.run(_program(d), _t(128, 128), _t(128, 128),
     config={"dump_passes": True}), errors.ArgumentTypeError,
     "config= takes a pypto.runtime.RunConfig (e.g. RunConfig(**{'dump_passes': True})), got dict"),  # fmt: skip
    ("run-shape", lambda d: _run(d, _t(64, 128), _t(128, 128)), errors.InvalidArgumentError, "has shape (64, 128)"),
    ("run-dtype", lambda d: _run(d, _t(128, 128, dtype="float16"), _t(128, 128)), errors.ArgumentTypeError, "dtype float16"),
    ("run-list", lambda d: _run(d, [1, 2], _t(128, 128)), errors.ArgumentTypeError, "must be a tensor"),
    ("resume-bad-name", lambda d: __import__("pypto.ir").ir.resume(d / "05_after_X.py"), DiagnosticError, "05_after_X.py"),
]


@pytest.mark.parametrize(("name", "call", "error", "message"), API_WALK, ids=[w[0] for w in API_WALK])
def test_api_walk(name: str, call: Callable[[Path], object], error: type[BaseException], message: str, tmp_path: Path) -> None:
    with pytest.raises(error) as info:
        call(tmp_path)
    assert isinstance(info.value, USER_ERROR_TYPES), type(info.value)
    assert message in str(info.value)
