"""``pypto-opt`` in-process: ``main([...])`` with captured stdout/stderr."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from pypto.tools.pypto_opt import main

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "test" / "opt" / "Inputs"
PLUGIN = str(INPUTS / "plugin_passes.py")
ADD = str(INPUTS / "add.mlir")

PROGRAM = """\
builtin.module @prog {
  func.func @f(%a: !pl.tensor<16x16xf32>, %b: !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> attributes {pl.func_type = #pl<func_type InCore>} {
    %0 = "pl.tensor.add"(%a, %b) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return %0 : !pl.tensor<16x16xf32>
  }
}
"""

BAD_OP = """\
builtin.module {
  func.func @f(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x64xf32>) {
    %c = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x64xf32>) -> !pl.tensor<128x128xf32>
    func.return
  }
}
"""

DSL = """\
import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(out, pl.tensor.add(a, b), [0, 0])
        return out
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_jit_only_file_is_a_located_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "import pypto.language as pl\n\n\n@pl.jit\ndef k(a: pl.Tensor) -> pl.Tensor:\n    return a\n"
    path = write(tmp_path, "k.py", text)
    code, out, err = run(capsys, path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:4:2: error: a pl file needs exactly one @pl.program class or one @pl.function")
    assert "internal error" not in err


def test_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, write(tmp_path, "p.mlir", PROGRAM))
    assert (code, err) == (0, "")
    assert out == PROGRAM
    code, again, _ = run(capsys, write(tmp_path, "q.mlir", out))
    assert (code, again) == (0, PROGRAM)


def test_generic_form_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, generic, _ = run(capsys, "--print-op-generic", write(tmp_path, "p.mlir", PROGRAM))
    assert code == 0 and generic.startswith('"builtin.module"()')
    code, out, _ = run(capsys, write(tmp_path, "g.mlir", generic))
    assert (code, out) == (0, PROGRAM)


def test_locations_of_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "p.mlir", PROGRAM)
    code, out, _ = run(capsys, "--print-debuginfo", path)
    assert code == 0
    assert (
        f'"pl.tensor.add"(%a, %b) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> loc("{path}":3:5)'
        in out
    )


def test_verifier_error_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.mlir", BAD_OP)
    code, out, err = run(capsys, path)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == f"{path}:3:5: error: pl.tensor.add: operand shapes [128, 128] and [128, 64] do not broadcast"
    assert lines[1].startswith(" 3 |     %c = ")
    assert lines[2] == "   |     ^"
    assert "Traceback" not in err


def test_parse_error_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.mlir", PROGRAM.replace("pl.tensor.add", "pl.tensor.frob"))
    code, _, err = run(capsys, path)
    assert code == 1
    assert err.splitlines()[0] == f"{path}:3:10: error: Operation pl.tensor.frob is not registered"
    assert "^~~~" in err and "Traceback" not in err


def test_missing_file_and_unknown_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope.mlir"))
    assert code == 1 and "error: could not open input file" in err
    code, _, err = run(capsys, "-p", "outline-incore-scope", ADD)
    assert code == 1
    assert "error: unknown pass 'outline-incore-scope'" in err
    assert "hint: did you mean 'outline-incore-scopes'?" in err


def test_pass_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-name-values{prefix=w}", ADD)
    assert code == 0 and '%w = "pl.tensor.add"' in out and '%w_1 = "pl.tensor.exp"(%w)' in out


def test_print_ir_after_all_and_after_change(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--print-ir-after-all", "--print-between-passes"):
        code, _, err = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-noop,test-name-values", flag, ADD)
        assert code == 0
        assert "// -----// IR Dump After TestNoop (test-noop) //----- //" in err
        assert "// -----// IR Dump After TestNameValues (test-name-values) //----- //" in err
    code, _, err = run(
        capsys, "--load-pass-plugin", PLUGIN, "-p", "test-noop,test-name-values", "--print-ir-after-change", ADD
    )
    assert code == 0
    assert "After TestNoop" not in err and "After TestNameValues" in err


def test_dump_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump"
    code, out, _ = run(
        capsys, "--load-pass-plugin", PLUGIN, "-p", "test-noop,test-name-values", "--dump-passes", str(dump), ADD
    )
    assert code == 0
    assert sorted(p.name for p in dump.iterdir()) == [
        "00_input.mlir",
        "01_after_TestNoop.mlir",
        "02_after_TestNameValues.mlir",
    ]
    assert (dump / "02_after_TestNameValues.mlir").read_text() == out
    assert '%0 = "pl.tensor.add"' in (dump / "00_input.mlir").read_text()


def test_time_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-noop", "--time-passes", ADD)
    assert code == 0 and "Pass execution timing report" in err and "test-noop" in err


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.mlir"
    code, out, _ = run(capsys, "-o", str(target), ADD)
    assert code == 0 and out == ""
    assert target.read_text() == Path(ADD).read_text()


def test_split_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = PROGRAM + "\n// -----\n\n" + BAD_OP + "// -----\nbuiltin.module @last {\n}\n"
    path = write(tmp_path, "s.mlir", text)
    code, out, err = run(capsys, "--split-input-file", path)
    assert code == 1
    assert out.count("// -----\n") == 2
    assert out.startswith(PROGRAM) and out.endswith("builtin.module @last {\n}\n")
    # The error is on the line of the whole file.
    assert err.startswith(f"{path}:12:5: error: pl.tensor.add: operand shapes")


def test_verify_diagnostics_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = BAD_OP.replace("    %c =", "    // expected-error @+1 {{do not broadcast}}\n    %c =")
    code, _, err = run(capsys, "--verify-diagnostics", write(tmp_path, "v.mlir", text))
    assert (code, err) == (0, "")


def test_verify_diagnostics_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Missing diagnostic.
    text = PROGRAM.replace("    func.return", "    // expected-error @+1 {{not produced}}\n    func.return")
    path = write(tmp_path, "m.mlir", text)
    code, _, err = run(capsys, "--verify-diagnostics", path)
    assert code == 1
    assert f'{path}:4:8: error: expected error "not produced" was not produced' in err
    # A different message: unexpected + missing.
    text = BAD_OP.replace("    %c =", "    // expected-error @+1 {{dtype}}\n    %c =")
    path = write(tmp_path, "w.mlir", text)
    code, _, err = run(capsys, "--verify-diagnostics", path)
    assert code == 1
    assert 'error: expected error "dtype" was not produced' in err
    assert f"{path}:4:5: error: unexpected error: pl.tensor.add: operand shapes" in err


def test_verify_diagnostics_output_file_only_when_verified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--verify-diagnostics``, ``-o`` is written when the expectations hold and left as it was (an
    old file kept, no new one) when they do not (it was written, empty, with exit 1)."""
    wrong = write(
        tmp_path, "w.mlir", PROGRAM.replace("    func.return", "    // expected-error {{nope}}\n    func.return")
    )
    out = tmp_path / "o.mlir"
    code, _, err = run(capsys, "--verify-diagnostics", wrong, "-o", str(out))
    assert code == 1 and 'expected error "nope" was not produced' in err
    assert not out.exists()
    out.write_text("old\n")
    assert run(capsys, "--verify-diagnostics", wrong, "-o", str(out))[0] == 1
    assert out.read_text() == "old\n"
    text = BAD_OP.replace("    %c =", "    // expected-error @+1 {{do not broadcast}}\n    %c =")
    code, _, err = run(capsys, "--verify-diagnostics", write(tmp_path, "v.mlir", text), "-o", str(out))
    assert (code, err) == (0, "")
    assert out.read_text() == ""  # the failing module prints nothing, as mlir-opt's


def test_verify_diagnostics_warnings_and_pass_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = PROGRAM.replace(
        "    %0 =",
        "    // expected-warning @+2 {{first pl.tensor.add}}\n    // expected-remark @+1 {{saw pl.tensor.add}}\n    %0 =",
    )
    path = write(tmp_path, "r.mlir", text)
    code, _, err = run(capsys, "--verify-diagnostics", "--load-pass-plugin", PLUGIN, "-p", "test-remark-ops", path)
    assert (code, err) == (0, "")
    # Without --verify-diagnostics they are printed, and are not errors.
    code, _, err = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-remark-ops", path)
    assert code == 0 and "warning: first pl.tensor.add" in err and "remark: saw pl.tensor.add" in err
    text = PROGRAM.replace("    %0 =", "    // expected-error @+1 {{test error at pl.tensor.add}}\n    %0 =")
    path = write(tmp_path, "e.mlir", text)
    code, _, err = run(capsys, "--verify-diagnostics", "--load-pass-plugin", PLUGIN, "-p", "test-error-at", path)
    assert (code, err) == (0, "")


def test_pass_breaking_the_ir(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-break-ir", ADD)
    assert code == 1
    assert f"{ADD}:3:5: error: pl.tensor.add: result type" in err
    assert "note: the IR after pass 'test-break-ir' does not verify" in err


def test_internal_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PTO_BACKTRACE", raising=False)
    code, _, err = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-crash", ADD)
    assert code == 2
    assert err.startswith("pypto-opt: internal error in pass 'test-crash': RuntimeError: boom")
    assert "Traceback" not in err
    monkeypatch.setenv("PTO_BACKTRACE", "1")
    code, _, err = run(capsys, "--load-pass-plugin", PLUGIN, "-p", "test-crash", ADD)
    assert code == 2 and "Traceback" in err


def test_dsl_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "k.py", DSL)
    code, out, err = run(capsys, path)
    assert (code, err) == (0, "")
    assert "class K:" in out and "pl.tensor.assemble(out, pl.tensor.add(a, b), [0, 0])" in out
    code, mlir, _ = run(capsys, path, "--emit=mlir")
    assert code == 0 and mlir.startswith("builtin.module @K {") and '"pl.at"()' in mlir
    code, tiles, _ = run(capsys, path, "-p", "outline-incore-scopes,convert-tensor-to-tile-ops")
    assert code == 0 and "def add_incore_0(" in tiles and "pl.tile.add(a__tile, b__tile)" in tiles


def test_dsl_dump_passes_are_dsl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump"
    path = write(tmp_path, "k.py", DSL)
    code, _, _ = run(capsys, path, "-p", "outline-incore-scopes", "--dump-passes", str(dump))
    assert code == 0
    assert sorted(p.name for p in dump.iterdir()) == ["00_input.py", "01_after_OutlineIncoreScopes.py"]


def test_dsl_mistake_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "k.py", DSL.replace("pl.tensor.add(a, b)", "pl.tensor.add(a, nope)"))
    code, _, err = run(capsys, path)
    assert code == 1
    first, source, caret = err.splitlines()[:3]
    assert first.startswith(f"{path}:9:") and "nope" in first and ": error: " in first
    assert source.startswith(" 9 |") and "pl.tensor.add(a, nope)" in source
    assert caret.strip().startswith("|") and "^" in caret
    assert "Traceback" not in err


@pytest.mark.parametrize("mode", ["passes", "resume"])
def test_output_equal_to_input_is_refused(mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming the input (by another spelling too) is a user error and the input keeps its text: the
    output once replaced it (``--emit mlir`` turned the DSL file into MLIR, ``--resume`` a dump into the
    final program)."""
    name = "k.py" if mode == "passes" else "00_frontend.py"
    path = write(tmp_path, name, DSL)
    same = str(tmp_path / "." / name)
    args = [path, "--emit=mlir", "-o", same] if mode == "passes" else ["--resume", path, "-o", same]
    code, out, err = run(capsys, *args)
    assert code == 1 and out == ""
    assert err.startswith(f"pypto-opt: error: {same}: the output path (-o) is the input file {path}"), err
    assert Path(path).read_text() == DSL


def test_output_equal_to_a_pass_plugin_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``--load-pass-plugin`` file is an input too: ``-o`` naming it replaced the plugin with the IR."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text("# registers no pass\n")
    code, out, err = run(capsys, ADD, "--load-pass-plugin", str(plugin), "-o", str(plugin))
    assert (code, out) == (1, "")
    assert err.startswith(f"pypto-opt: error: {plugin}: the output path (-o) is the input file {plugin}"), err
    assert plugin.read_text() == "# registers no pass\n"


def test_dump_passes_into_a_compile_dump_or_the_input_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--dump-passes`` clears an earlier run's dumps from its folder: a build's ``passes_dump/`` (a
    compile's dumps) or a folder holding the input as a dump is refused with nothing deleted (both were
    wiped, the input among them)."""
    build = tmp_path / "passes_dump"
    build.mkdir()
    write(build, "00_frontend.py", DSL)
    dump = write(build, "01_after_InlineFunctions.py", DSL)
    other = tmp_path / "k.py"
    other.write_text(DSL)
    code, out, err = run(capsys, str(other), "-p", "simplify", "--dump-passes", str(build))
    assert (code, out) == (1, "")
    assert err.startswith(f"pypto-opt: error: {build}: the dump folder holds a compile's pass dumps (00_frontend.py)")
    mine = tmp_path / "mine"
    code, _, err = run(capsys, dump, "-p", "simplify", "--dump-passes", str(mine))
    assert code == 0, err
    code, out, err = run(capsys, str(mine / "01_after_Simplify.py"), "-p", "simplify", "--dump-passes", str(mine))
    assert (code, out) == (1, "")
    assert err.startswith(f"pypto-opt: error: {mine}: the dump folder holds the input file 01_after_Simplify.py"), err
    assert sorted(p.name for p in build.iterdir()) == ["00_frontend.py", "01_after_InlineFunctions.py"]
    assert sorted(p.name for p in mine.iterdir()) == ["00_input.py", "01_after_Simplify.py"]


def test_help_says_what_the_inherited_options_do(capsys: pytest.CaptureFixture[str]) -> None:
    """xDSL's help for options pypto-opt handles its own way, or ignores, is replaced: --help said
    --verify-diagnostics and --parsing-diagnostics 'exit with code 0' (they exit 1 on a mismatch or a parse
    error) and offered --shrink, --syntax-highlight and --print-no-properties, which change nothing."""
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "exits with code 0" not in text
    assert "as mlir-opt does: exit 0 when they match, else 1 naming each mismatch" in text
    for option in ("--parsing-diagnostics", "--print-no-properties", "--syntax-highlight", "--shrink"):
        assert f"{option} accepted for xdsl-opt compatibility (no effect)" in text, option


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--resume", "{dump}", "-p", "simplify"], "error: -p does not apply with --resume"),
        (["--resume", "{dump}", "--emit=mlir"], "error: --emit=mlir does not apply with --resume"),
        (["--resume", "{dump}", "--dump-passes", "{tmp}/d"], "error: --dump-passes does not apply with --resume"),
        (["--run-reproducer", "{dump}", "--resume"], "error: --resume does not apply with --run-reproducer"),
        (["{dump}", "--memory-planner", "PTOAS"], "error: --memory-planner applies only with --resume"),
    ],
)
def test_an_option_the_mode_does_not_use_is_refused(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--resume`` / ``--run-reproducer`` run the rest of the Default pipeline and print DSL: ``-p``,
    ``--emit=mlir``, ``--dump-passes`` ... were silently ignored there (the program printed was not what
    was asked for), and ``--memory-planner`` without ``--resume``."""
    dump = write(tmp_path, "00_frontend.py", DSL)
    argv = [f.format(dump=dump, tmp=tmp_path) for f in flags]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (1, ""), err
    assert err.startswith(message), err
    assert not (tmp_path / "d").exists()


def test_parse_error_after_a_prefix_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``#`` (a Python or shell comment) or a ``%`` with no name after it: xDSL's message was the
    unformatted ``Expected suffix identifier after {first_char}``."""
    path = write(tmp_path, "c.mlir", "# a comment\nbuiltin.module {\n}\n")
    code, _, err = run(capsys, path)
    assert code == 1 and err.startswith(f"{path}:1:1: error: Expected suffix identifier after '#'\n"), err


def test_dash_output_is_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o -`` is stdout, as for mlir-opt and ptoas (it wrote a file named ``-``)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, ADD, "-o", "-")
    assert (code, err) == (0, "") and out.startswith("builtin.module @prog {")
    assert not (tmp_path / "-").exists()


def test_stdin_not_utf8_is_named_like_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes that are not UTF-8 on stdin (``pypto-opt < /bin/ls``): stdin's text layer turned them into
    surrogates and the parser said ``Unexpected character``; now the error is the file path's one."""
    data = b"builtin.module {\n}\n\x7fELF\xd0\x01"
    path = tmp_path / "bin.mlir"
    path.write_bytes(data)
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = run(capsys)
    assert (code, out) == (1, "")
    assert err == "pypto-opt: error: <stdin>: input is not UTF-8 text (byte 0xd0 at offset 23)\n", err
    code, out, err = run(capsys, str(path))
    assert (code, out) == (1, "")
    assert err == f"pypto-opt: error: {path}: input is not UTF-8 text (byte 0xd0 at offset 23)\n", err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PROGRAM.encode())))
    assert run(capsys, "-") == (0, PROGRAM, "")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("", "1:1", "expected a module or an operation, found the end of the input: it holds no operation"),
        ("// only a comment\n", "2:1", "expected a module or an operation, found the end of the input: it holds no operation"),
        ("builtin.module {\n}\n}\n", "3:1", "expected an operation, found '}'"),
    ],
)
def test_no_operation_says_what_was_expected(
    text: str, where: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty or comment-only file (or a stray token where an op should start) was xDSL's
    ``Could not parse entire input!``; mlir-opt prints an empty module for an empty file, pypto-opt
    says the file holds no operation (an empty file is far likelier a mistake than a wish)."""
    path = write(tmp_path, "e.mlir", text)
    code, out, err = run(capsys, path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:{where}: error: {message}\n"), err


def test_emit_py_of_a_top_level_op_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A top-level op that is not a function has no pl DSL form: ``--emit py`` printed a class with no body
    (the op silently lost); it is an error naming the op at its location, and ``-o`` is not written."""
    path = write(tmp_path, "g.mlir", "%0 = arith.constant 1 : i32\n")
    out_file = tmp_path / "g.py"
    code, out, err = run(capsys, path, "--emit", "py", "-o", str(out_file))
    assert (code, out) == (1, "")
    assert err.startswith(
        f"{path}:1:1: error: 'arith.constant' at the top level of the module cannot be printed as pl DSL: "
        "a pl program holds only functions (func.func)\n"
    ), err
    assert not out_file.exists()
