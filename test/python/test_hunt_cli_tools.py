"""Bad input to ``pypto-opt``, ``ptoas`` and ``pypto-ir-trace``: each case is one located error with exit 1
(never a traceback or an ``internal error``), and no output file is left behind or destroyed."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.ptoas.cli import main as ptoas_main
from pypto.tools.ir_trace.cli import main as ir_trace_main
from pypto.tools.pypto_opt import main as opt_main

SELF_STEP_MLIR = """\
func.func @f() {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %i {
    %x = arith.addi %i, %i : index
  }
  func.return
}
"""

SELF_STEP_PTO = """\
module {
  func.func @k() {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %i {
    }
    return
  }
}
"""


def _user_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    """The stderr of a run that must have been a user error (exit 1, no traceback, no internal error)."""
    err = capsys.readouterr().err
    assert code == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("tool", "suffix", "text", "where"),
    [(opt_main, ".mlir", SELF_STEP_MLIR, ":4:32:"), (ptoas_main, ".pto", SELF_STEP_PTO, ":5:34:")],
    ids=["pypto-opt", "ptoas"],
)
def test_operand_defined_only_in_its_users_region(
    tool: object, suffix: str, text: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``scf.for %i = .. step %i``: the step names the loop's own induction variable. xDSL's parser left
    the op holding a forward-reference placeholder and the verifier crashed (internal error, exit 2)."""
    src = tmp_path / f"in{suffix}"
    src.write_text(text)
    out = tmp_path / "out.txt"
    err = _user_error(capsys, tool([str(src), "-o", str(out)]))  # type: ignore[operator]
    assert f"{src}{where} error: " in err, err
    assert "use of undeclared SSA value %i" in err, err
    assert not out.exists()


def test_pass_option_naming_an_unknown_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-p 'allocate-memory-addr{backend=bogus}'``: the option was taken as given and the pass raised a
    ValueError on its first function (internal error, exit 2); it is a bad pass option (exit 1)."""
    src = tmp_path / "in.mlir"
    src.write_text(
        "func.func @f(%a: !pl.tensor<16x16xf32>) attributes {pl.func_type = #pl<func_type InCore>} {\n"
        "  func.return\n"
        "}\n"
    )
    out = tmp_path / "out.mlir"
    err = _user_error(capsys, opt_main([str(src), "-p", "allocate-memory-addr{backend=bogus}", "-o", str(out)]))
    assert "error: invalid options for pass 'allocate-memory-addr': unknown backend 'bogus'" in err, err
    assert not out.exists()


def _lens_build(root: Path, cycles: str) -> Path:
    """A minimal build directory: one snapshot, its line map (one DSL location) and one in-core record
    of ``cycles`` (JSON text) at that location."""
    (root / "passes_dump").mkdir(parents=True)
    (root / "passes_dump" / "00_frontend.py").write_text("x = 1\n")
    (root / "report").mkdir()
    line_locs = {"version": 1, "locations": ["k.py:1:1"], "maps": [[[0]]], "files": {"00_frontend.py": 0}}
    (root / "report" / "line_locs.json").write_text(json.dumps(line_locs))
    (root / "dfx_outputs" / "incore" / "0_k").mkdir(parents=True)
    (root / "dfx_outputs" / "incore" / "0_k" / "instr_metrics.json").write_text(
        f'{{"version": 1, "instructions": [{{"pipe": "VECTOR", "cycles": {cycles}, "dsl_loc": "k.py:1:1"}}]}}'
    )
    return root


@pytest.mark.parametrize("cycles", ["Infinity", "NaN", "1e400", "-5"])
def test_ir_trace_cycles_not_a_count(cycles: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``"cycles": Infinity`` (or NaN, 1e400: JSON numbers Python reads as float inf/nan) in an
    ``instr_metrics.json`` crashed the lens (``int(inf)``: internal error, exit 2); a negative count was
    taken as is. Each is a bad record, named."""
    build = _lens_build(tmp_path / "b", cycles)
    out = tmp_path / "r.html"
    err = _user_error(capsys, ir_trace_main([str(build), "-o", str(out)]))
    assert 'invalid 0_k/instr_metrics.json: instruction 0 needs a "pipe" string and numeric "cycles"' in err, err
    assert not out.exists()


def test_ir_trace_cycles_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The minimal build of the test above, with a good count, makes its report."""
    build = _lens_build(tmp_path / "b", "12")
    out = tmp_path / "r.html"
    assert ir_trace_main([str(build), "-o", str(out)]) == 0, capsys.readouterr().err
    assert out.is_file()


@pytest.mark.parametrize("index", ["-1", "true", '"0"'])
def test_ir_trace_line_map_index_not_an_index(index: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line map (``report/line_locs.json``) location index of -1 (or ``true``) was read as Python reads
    it, the last (or second) location, and the report showed a wrong source line; it is a bad index."""
    build = _lens_build(tmp_path / "b", "12")
    locs = build / "report" / "line_locs.json"
    locs.write_text(locs.read_text().replace("[[[0]]]", f"[[[{index}]]]"))
    out = tmp_path / "r.html"
    err = _user_error(capsys, ir_trace_main([str(build), "-o", str(out)]))
    assert "invalid line_locs.json: map 0: location indices must be lists of valid indices" in err, err
    assert not out.exists()


def test_tensor_dimension_beyond_i64(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``!pl.tensor<99999999999999999999999x16xf32>`` parsed, and convert-tensor-to-tile-ops failed building
    an ``i64`` constant of it (internal error, exit 2); the shape is a parse error at the type."""
    src = tmp_path / "in.mlir"
    src.write_text(
        "func.func @f(%a: !pl.tensor<99999999999999999999999x16xf32>) -> !pl.tensor<99999999999999999999999x16xf32> "
        "attributes {pl.func_type = #pl<func_type InCore>} {\n"
        '  %0 = "pl.tensor.exp"(%a) : (!pl.tensor<99999999999999999999999x16xf32>) -> '
        "!pl.tensor<99999999999999999999999x16xf32>\n"
        "  func.return %0 : !pl.tensor<99999999999999999999999x16xf32>\n"
        "}\n"
    )
    out = tmp_path / "out.mlir"
    err = _user_error(capsys, opt_main([str(src), "-p", "convert-tensor-to-tile-ops", "-o", str(out)]))
    assert f"{src}:1:29: error: dimension 99999999999999999999999 is too large" in err, err
    assert not out.exists()


def _run_tool(tool: str, out: Path, tmp_path: Path) -> int:
    """Run ``tool`` on a good input with ``-o out``; its exit code."""
    if tool == "pypto-opt":
        src = tmp_path / "in.mlir"
        src.write_text(SELF_STEP_MLIR.replace("step %i", "step %c4"))
        return opt_main([str(src), "-o", str(out)])
    if tool == "ptoas":
        src = tmp_path / "in.pto"
        src.write_text(SELF_STEP_PTO.replace("step %i", "step %c4"))
        return ptoas_main([str(src), "-o", str(out), "--emit", "pto"])
    return ir_trace_main([str(_lens_build(tmp_path / "b", "12")), "-o", str(out)])


@pytest.mark.parametrize("tool", ["pypto-opt", "ptoas", "pypto-ir-trace"])
def test_output_to_a_device_is_written_not_replaced(tool: str, tmp_path: Path) -> None:
    """``-o /dev/null`` (here a link to it, so the test replaces nothing of the system's): the atomic write
    renamed its temporary file over the path, and as root that put a regular file in place of /dev/null
    (or of the /dev/stdout link); a device is written into."""
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    assert _run_tool(tool, link, tmp_path) == 0
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(
    not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)), reason="no /dev/full"
)
@pytest.mark.parametrize("tool", ["pypto-opt", "ptoas"])
def test_failed_write_names_the_output(tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A write that fails with no file name in the OSError (a full disk: here /dev/full, through a link)
    printed ``pypto-opt: error: No space left on device``, naming no file; it names the output path."""
    link = tmp_path / "full"
    link.symlink_to("/dev/full")
    err = _user_error(capsys, _run_tool(tool, link, tmp_path))
    assert f"error: {link}: No space left on device" in err, err


@pytest.mark.skipif(
    not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)), reason="no /dev/full"
)
@pytest.mark.parametrize("tool", ["pypto-opt", "ptoas", "pypto-ir-trace"])
def test_failed_stdout_write_names_stdout(
    tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output to stdout redirected to a full disk printed ``error: No space left on device``, naming
    nothing; it names ``<stdout>``."""
    full = open("/dev/full", "w")  # noqa: SIM115 - closed below, where its unflushed text fails again
    monkeypatch.setattr("sys.stdout", full)
    code = _run_tool(tool, Path("-"), tmp_path)
    monkeypatch.undo()
    with contextlib.suppress(OSError):
        full.close()
    assert "error: <stdout>: No space left on device" in _user_error(capsys, code)


@pytest.mark.parametrize("tool", ["pypto-opt", "ptoas", "pypto-ir-trace"])
def test_output_folder_that_is_a_file(tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o notes.txt/out``: the error said the folder notes.txt 'does not exist' (it does: a file); it says
    it is a file, and the file is kept."""
    notes = tmp_path / "notes.txt"
    notes.write_text("keep\n")
    err = _user_error(capsys, _run_tool(tool, notes / "out", tmp_path))
    assert "output directory is a file, not a directory" in err and str(notes) in err, err
    assert notes.read_text() == "keep\n"


def test_dump_passes_leaves_no_chunk_folder_of_an_earlier_run(tmp_path: Path) -> None:
    """``--dump-passes DIR --split-input-file`` on three chunks, then on two: chunk_02 of the first run
    stayed beside the second run's dumps (and every chunk folder beside a run without the split), so one
    folder mixed two runs; only this run's dumps are left (other files are kept)."""
    func = "func.func @{}() {{\n  func.return\n}}\n"
    three, two = tmp_path / "three.mlir", tmp_path / "two.mlir"
    three.write_text("// -----\n".join(func.format(n) for n in "abc"))
    two.write_text("// -----\n".join(func.format(n) for n in "xy"))
    dumps = tmp_path / "dumps"
    split = ["--split-input-file", "-p", "simplify", "--dump-passes", str(dumps), "-o", str(tmp_path / "o.mlir")]
    assert opt_main([str(three), *split]) == 0
    (dumps / "notes.txt").write_text("mine\n")
    assert opt_main([str(two), *split]) == 0
    assert sorted(p.name for p in dumps.iterdir()) == ["chunk_00", "chunk_01", "notes.txt"]
    assert "@y" in (dumps / "chunk_01" / "00_input.mlir").read_text()
    assert opt_main([str(tmp_path / "two.mlir"), *split[1:]]) == 0  # no split: one input, dumps in the root
    assert sorted(p.name for p in dumps.iterdir()) == ["00_input.mlir", "01_after_Simplify.mlir", "notes.txt"]


def test_ir_trace_on_a_split_runs_dump_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``pypto-ir-trace DIR`` on a ``pypto-opt --split-input-file --dump-passes DIR`` folder said 'missing
    00_frontend.py in DIR'; it says the folder holds chunk folders and names one to give."""
    src = tmp_path / "two.mlir"
    src.write_text("func.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  func.return\n}\n")
    dumps = tmp_path / "dumps"
    assert opt_main([str(src), "--split-input-file", "-p", "simplify", "--dump-passes", str(dumps)]) == 0
    capsys.readouterr()
    out = tmp_path / "r.html"
    err = _user_error(capsys, ir_trace_main([str(dumps), "-o", str(out)]))
    assert "the chunk folders of a split input (chunk_00, chunk_01)" in err and str(dumps / "chunk_00") in err, err
    assert not out.exists()
    assert ir_trace_main([str(dumps / "chunk_00"), "-o", str(out)]) == 0


def test_pass_plugin_that_exits_at_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``--load-pass-plugin`` file calling ``sys.exit(3)`` at import made pypto-opt exit 3 with no
    message; the plugin failed to load (exit 1, named)."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import sys\nsys.exit(3)\n")
    src = tmp_path / "in.mlir"
    src.write_text("func.func @f() {\n  func.return\n}\n")
    err = _user_error(capsys, opt_main([str(src), "--load-pass-plugin", str(plugin)]))
    assert f"could not load pass plugin '{plugin}': SystemExit: 3" in err, err


@pytest.mark.parametrize(
    ("tool", "suffix", "text", "where"),
    [
        (
            opt_main,
            ".mlir",
            "func.func @f() -> i64 {\n  %c = arith.constant 99999999999999999999 : i64\n  func.return %c : i64\n}\n",
            ":2:23:",
        ),
        (
            opt_main,
            ".mlir",
            "func.func @f() attributes {x = 99999999999999999999 : i64} {\n  func.return\n}\n",
            ":1:32:",
        ),
        (
            opt_main,
            ".mlir",
            "#a = 99999999999999999999 : i64\nfunc.func @f() attributes {x = #a} {\n  func.return\n}\n",
            ":1:6:",
        ),
        (
            ptoas_main,
            ".pto",
            "module {\n  func.func @k() {\n    %c = arith.constant 99999999999999999999 : i64\n    return\n  }\n}\n",
            ":3:25:",
        ),
    ],
    ids=["opt-constant", "opt-attribute", "opt-alias", "ptoas-constant"],
)
def test_integer_out_of_range_is_located(
    tool: object, suffix: str, text: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``arith.constant 99999999999999999999 : i64``: xDSL's attribute check raised while parsing and the
    error named no file or line (``error: Integer value ... is out of range``); it is a located parse error."""
    src = tmp_path / f"in{suffix}"
    src.write_text(text)
    err = _user_error(capsys, tool([str(src), "-o", str(tmp_path / "out")]))  # type: ignore[operator]
    assert f"{src}{where} error: Integer value 99999999999999999999 is out of range for type i64" in err, err
    assert not (tmp_path / "out").exists()


def test_integer_type_too_wide(tmp_path: Path) -> None:
    """``1 : i99999999999``: xDSL computed the value range of a 99999999999-bit integer and pypto-opt never
    finished; a width over MLIR's 16777215 is a parse error at the type, in MLIR's words."""
    src = tmp_path / "in.mlir"
    src.write_text("func.func @f() attributes {x = 1 : i99999999999} {\n  func.return\n}\n")
    run = subprocess.run(
        [sys.executable, "-m", "pypto.tools.pypto_opt", str(src)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 1, run.stderr
    assert f"{src}:1:36: error: integer bitwidth is limited to 16777215 bits" in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("tool", "suffix", "text", "message"),
    [
        (
            opt_main,
            ".mlir",
            "func.func @f(%p: !pl.ptr<f32>) {\n  func.return\n}\n",
            ":1:25: error: !pl.ptr takes no parameters, got 1",
        ),
        (
            ptoas_main,
            ".pto",
            "module {\n  func.func @k(%p: !pto.pipe<1, 2>) {\n    return\n  }\n}\n",
            ":2:29: error: !pto.pipe takes no parameters, got 2",
        ),
    ],
    ids=["pl.ptr", "pto.pipe"],
)
def test_type_with_parameters_it_does_not_take(
    tool: object, suffix: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``!pl.ptr<f32>`` (a type without parameters, given one): xDSL's construction raised ``zip() argument 2
    is longer than argument 1`` (internal error, exit 2); it is a parse error naming the count."""
    src = tmp_path / f"in{suffix}"
    src.write_text(text)
    err = _user_error(capsys, tool([str(src), "-o", str(tmp_path / "out")]))  # type: ignore[operator]
    assert f"{src}{message}" in err, err


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("0x7fffffffffffffffffff : f32", "the literal does not fit its type"),
        (
            "dense<99999999999999999999> : tensor<2xi8>",
            "Integer value 99999999999999999999 is out of range for type i8",
        ),
    ],
)
def test_builtin_literal_its_type_cannot_hold(
    literal: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hex float wider than its type, or a dense element out of its type's range: xDSL raised an
    OverflowError / a ValueError while parsing (internal error, exit 2); it is a parse error at the literal."""
    src = tmp_path / "in.mlir"
    src.write_text(f"func.func @f() attributes {{x = {literal}}} {{\n  func.return\n}}\n")
    err = _user_error(capsys, opt_main([str(src)]))
    assert f"{src}:1:32: error: {message}" in err, err


def test_ptoas_signature_type_without_cpp_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel argument of a type C++ has no spelling for: the error was ``k.pto: error: type ... has no C++
    spelling``, naming no line or argument; it is at the function, naming the argument."""
    src = tmp_path / "k.pto"
    src.write_text("module {\n  func.func @k(%a: !pto.tensor_view<?x?xf32>) {\n    return\n  }\n}\n")
    out = tmp_path / "k.cpp"
    err = _user_error(capsys, ptoas_main([str(src), "-o", str(out)]))
    assert f"{src}:2:3: error: 'func.func' op argument 0: type !pto.tensor_view<?x?xf32> has no C++ spelling" in err
    assert not out.exists()


def test_ptoas_missing_return_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel whose ``return`` is missing: the error was ``k.pto: error: Operation pto.tstore terminates
    block ... but is not a terminator`` with no line (xDSL checks it with the op in its block, which ptoas's
    search for the failing op skipped); it is at the op."""
    src = tmp_path / "k.pto"
    src.write_text(
        "module {\n  func.func @k() {\n    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n  }\n}\n"
    )
    out = tmp_path / "k.cpp"
    err = _user_error(capsys, ptoas_main([str(src), "-o", str(out)]))
    assert f"{src}:4:5: error: Operation arith.constant terminates block in single-block region" in err, err
    assert not out.exists()


def test_op_property_of_the_wrong_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pl/pld op property written as another kind of attribute (``core_num = 1 : f16``): the verifier's
    ``assert isinstance(attr, IntegerAttr)`` failed (internal error: AssertionError); it is a located error
    saying what the property must be."""
    text = "op = #pld<reduce_op Sum>, mode = #pld<mode ring>, core_num = 1 : f16"
    src = tmp_path / "in.mlir"
    src.write_text(
        "func.func @f(%d: !pl.tensor<1x256xf32>, %s: !pl.tensor<2x1xi32>) -> !pl.tensor<1x256xf32> {\n"
        f'  %0 = "pld.tensor.allreduce"(%d, %s) <{{{text}}}> : (!pl.tensor<1x256xf32>, !pl.tensor<2x1xi32>) '
        "-> !pl.tensor<1x256xf32>\n"
        "  func.return %0 : !pl.tensor<1x256xf32>\n"
        "}\n"
    )
    err = _user_error(capsys, opt_main([str(src)]))
    message = "attribute 'core_num' must be an integer (such as 1 : i64), got 1.000000e+00 : f16"
    assert f"{src}:2:3: error: pld.tensor.allreduce: {message}" in err, err


@pytest.mark.parametrize(
    ("tool", "suffix", "text", "where"),
    [
        (opt_main, ".mlir", "func.func @k(%a: i32) {\n}\n", ":1:1:"),
        (ptoas_main, ".pto", "module {\n  func.func @k(%a: i32) {\n  }\n}\n", ":2:3:"),
    ],
    ids=["pypto-opt", "ptoas"],
)
def test_empty_body_is_located(
    tool: object, suffix: str, text: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A function whose body block is empty (no ``return``): the error named no line (xDSL checks an empty
    block while verifying the block, which the search for the failing op did not run); it is at the op."""
    src = tmp_path / f"in{suffix}"
    src.write_text(text)
    err = _user_error(capsys, tool([str(src), "-o", str(tmp_path / "out")]))  # type: ignore[operator]
    assert f"{src}{where} error: Operation func.func contains empty block" in err, err


IF_YIELDS = """\
func.func @f(%a: i32, %c: i1) -> i32 {{
  %r = scf.if %c -> (i32) {{
    {then}
  }} else {{
    scf.yield %a : i32
  }}
  func.return %r : i32
}}
"""


@pytest.mark.parametrize(
    ("then", "message"),
    [
        ("%y = arith.addi %a, %a : i32", "'scf.if' op then region yields () but the op returns (i32)"),
        ("scf.yield %c : i1", "'scf.if' op then region yields (i1) but the op returns (i32)"),
    ],
    ids=["no-yield", "wrong-type"],
)
def test_scf_if_yielding_other_than_it_returns(
    then: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ``scf.if`` whose region yields nothing (or an i1 for its i32 result): xDSL's verifier let it
    through, pypto-opt printed it back, and ``-p simplify`` crashed on it (internal error: Erased SSA value
    is used); it is a located verifier error."""
    src = tmp_path / "in.mlir"
    src.write_text(IF_YIELDS.format(then=then))
    out = tmp_path / "out.mlir"
    err = _user_error(capsys, opt_main([str(src), "-p", "simplify", "-o", str(out)]))
    assert f"{src}:2:3: error: {message}" in err, err
    assert not out.exists()
