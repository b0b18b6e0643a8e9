"""Replaying a build directory the user has edited or broken: what a failed replay keeps, and bad build files
that get one located error (exit 1), never an internal error.

Every test works on a copy of one build of ``examples/beginner/02_elementwise.py`` (``chunked_add``: c = a + b
on 512x128 in four chunks), compiled once per module (mtimes kept).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from replay_build import UNIT, build_example, edit_pto, snapshot

from pypto.runtime.debug import replay_main


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example(tmp_path_factory.mktemp("hunt_replay") / "chunked_add")


@pytest.fixture
def build(built: Path, tmp_path: Path) -> Path:
    """A private copy of the module's build (mtimes kept)."""
    return Path(shutil.copytree(built, tmp_path / "build"))


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


def _refused_unchanged(build: Path, capsys: pytest.CaptureFixture[str], pattern: str, *args: str) -> str:
    """``replay build *args`` stops with one error matching ``pattern`` and changes no file of the build; the
    error."""
    before = snapshot(build)
    assert replay_main([str(build), *args]) == 1
    err = _one_error(capsys)
    assert re.search(pattern, err.strip()), err
    assert snapshot(build) == before
    return err


# ---- a failed replay keeps the earlier run's artefacts ----------------------------------------------------------------


def test_a_failed_replay_keeps_the_earlier_runs_artefacts(
    build: Path, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    """A replay whose run fails (an edited kernel reading past its argument) left no ``dfx_outputs/``: replay
    removed it before the run, so the earlier run's swimlane and PMU files were lost. Now they stay (those the
    flags would replace moved to ``previous/``, the runtime's rule), and a replay that succeeds still leaves
    its own artefacts alone."""
    dfx = build / "dfx_outputs"
    assert replay_main([str(build), "--swimlane", "--pmu", "2"]) == 0
    earlier = sorted(p.name for p in dfx.iterdir())
    assert "pmu.csv" in earlier and "chip_swimlane_records.json" in earlier
    (dfx / "notes.txt").write_text("mine")
    pmu = (dfx / "pmu.csv").read_bytes()
    capsys.readouterr()

    edit_pto(build, "%c4_index = arith.constant 4 :", "%c4_index = arith.constant 5 :")
    assert replay_main([str(build), "--no-validate"]) == 1  # no flag: nothing to replace
    assert "outside the argument" in capsys.readouterr().err
    assert sorted(p.name for p in dfx.iterdir()) == sorted([*earlier, "notes.txt"])
    assert (dfx / "pmu.csv").read_bytes() == pmu

    assert replay_main([str(build), "--no-validate", "--swimlane"]) == 1
    moved = sorted(p.name for p in (dfx / "previous").iterdir())
    assert "chip_swimlane_records.json" in moved and (dfx / "pmu.csv").read_bytes() == pmu
    capsys.readouterr()


def test_a_replay_that_succeeds_leaves_its_own_artefacts_alone(build: Path, own_dfx_flags: None) -> None:
    """What ``dfx_outputs/`` holds after a replay that succeeded: this run's artefacts, nothing older."""
    dfx = build / "dfx_outputs"
    assert replay_main([str(build), "--swimlane", "--pmu", "2", "--incore-trace", "--dep-gen"]) == 0
    (dfx / "old").mkdir()
    (dfx / "old" / "x.json").write_text("{}")
    (dfx / "incore" / "stale.txt").write_text("x")
    assert replay_main([str(build), "--pmu", "2", "--incore-trace"]) == 0
    left = sorted(str(p.relative_to(dfx)) for p in dfx.rglob("*") if p.is_file())
    assert "pmu.csv" in left and any(name.startswith("incore/") for name in left)
    assert not any(name.startswith(("old", "chip_swimlane", "deps")) or "stale" in name for name in left), left
    assert replay_main([str(build)]) == 0
    assert not dfx.exists()


# ---- a bad kernel_config.py: one located error, nothing changed -------------------------------------------------------


def _set_threads(value: str) -> Any:
    def spoil(build: Path) -> None:
        path = build / "kernel_config.py"
        text = path.read_text()
        assert '"aicpu_thread_num": 0,' in text
        path.write_text(text.replace('"aicpu_thread_num": 0,', f'"aicpu_thread_num": {value},'))

    return spoil


def _append(name: str, text: bytes) -> Any:
    def spoil(build: Path) -> None:
        with open(build / name, "ab") as f:
            f.write(text)

    return spoil


def _replace(name: str, old: str, new: str) -> Any:
    def spoil(build: Path) -> None:
        text = (build / name).read_text()
        assert old in text
        (build / name).write_text(text.replace(old, new, 1))

    return spoil


BAD_KERNEL_CONFIG = {
    # replay: internal error: ValueError: invalid literal for int() with base 10: 'x' (after the splice)
    "aicpu_thread_num a string": (
        _set_threads('"x"'),
        r"kernel_config\.py:4: error: RUNTIME_CONFIG\['aicpu_thread_num'\] must be an integer >= 0 .*got 'x'$",
    ),
    "aicpu_thread_num negative": (_set_threads("-2"), r"kernel_config\.py:4: error: .*got -2$"),
    # replay: internal error: TypeError: unhashable type: 'list'
    "an unhashable key": (
        _append("kernel_config.py", b"KERNELS = [{[]: 1}]\n"),
        r"kernel_config\.py:\d+: error: KERNELS must be a plain literal",
    ),
    # kernel_config.py:None:0: error: ...
    "a null byte": (
        _append("kernel_config.py", b"X = 1\0\n"),
        r"/kernel_config\.py: error: not valid Python: source code string cannot contain null bytes$",
    ),
    # kernel_config.py: error: KERNELS[0] needs ... (no line)
    "a func_id that is no number": (
        _replace("kernel_config.py", '"func_id": 0', '"func_id": "x"'),
        r"kernel_config\.py:16: error: KERNELS\[0\] needs func_id, name, source, core_type \(ValueError: ",
    ),
    # kernel_config.py: error: ORCHESTRATION needs ... (no line)
    "ORCHESTRATION without source": (
        _replace("kernel_config.py", '"source": "orchestration/', '"src": "orchestration/'),
        r"kernel_config\.py:9: error: ORCHESTRATION needs 'source' and 'function_name' \(strings\)$",
    ),
    # a name that is a path: ptoas/../x.pto
    "a kernel name that is a path": (
        _replace("kernel_config.py", f'"name": "{UNIT}"', '"name": "../x"'),
        r"kernel_config\.py:16: error: KERNELS\[0\]: name '\.\./x' is not a function name",
    ),
    "a null byte in golden.py": (
        _append("golden.py", b"X = 1\0\n"),
        r"/golden\.py: error: not valid Python: source code string cannot contain null bytes$",
    ),
}


@pytest.mark.parametrize("name", list(BAD_KERNEL_CONFIG))
def test_a_bad_kernel_config_is_one_located_error(
    build: Path, name: str, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    spoil, pattern = BAD_KERNEL_CONFIG[name]
    spoil(build)
    edit_pto(build, "pto.tadd ins(", "pto.tsub ins(")  # a valid edit: not spliced when the replay stops
    _refused_unchanged(build, capsys, pattern, "--pmu", "2")


# ---- compiled_meta.json that does not match the build: one error naming it ------------------------------------------


def _edit_meta(old: str, new: str, *, golden: bool = True) -> Any:
    def spoil(build: Path) -> None:
        path = build / "compiled_meta.json"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
        if not golden:
            (build / "golden.py").unlink()

    return spoil


BAD_META = {
    # compiled_meta.json: error: not readable as JSON (Expecting ...: line 5 column 4 (char 40))
    "truncated": (
        lambda build: (build / "compiled_meta.json").write_bytes((build / "compiled_meta.json").read_bytes()[:40]),
        r"compiled_meta\.json:5:4: error: not valid JSON: Expecting property name enclosed in double quotes$",
    ),
    # replay: error: argument 'a' has shape (64, 128); the program was compiled for (512, 128) -- after the writes
    "a shape": (
        _edit_meta('"shape": [\n        512,', '"shape": [\n        64,', golden=False),
        r"compiled_meta\.json: error: parameter 'a': shape \[64, 128\], but @chunked_add in "
        r"orchestration/chunked_add\.py takes \[512, 128\]$",
    ),
    "a dtype": (
        _edit_meta('"dtype": "fp32"', '"dtype": "fp16"', golden=False),
        r"compiled_meta\.json: error: parameter 'a': dtype fp16, but @chunked_add .* takes fp32$",
    ),
    "a direction": (
        _edit_meta('"direction": "Out"', '"direction": "InOut"'),
        r"compiled_meta\.json: error: parameter 'c': direction InOut, but @chunked_add .* takes Out$",
    ),
    # replay: internal error: ValueError: dtype 'float99' has no torch dtype
    "an unknown dtype": (
        _edit_meta('"dtype": "fp32"', '"dtype": "float99"', golden=False),
        r"compiled_meta\.json: error: parameter 'a': dtype 'float99' is not a tensor dtype; expected one of .*fp32",
    ),
    # replay: internal error: ValueError: dtype 'hf8' has no torch dtype (the inputs made from the metadata)
    "a dtype torch has not": (
        _edit_meta('"dtype": "fp32"', '"dtype": "hf8"', golden=False),
        r"compiled_meta\.json: error: parameter 'a': torch has no dtype 'hf8' to make its input from; give the inputs",
    ),
    # replay: error: unknown platform 'zz'; expected one of ... (no file named)
    "an unknown platform": (
        _edit_meta('"platform": "a2a3sim"', '"platform": "zz"'),
        r"compiled_meta\.json: error: platform 'zz' is unknown; expected one of a2a3sim",
    ),
}


@pytest.mark.parametrize("name", list(BAD_META))
def test_compiled_meta_that_does_not_match_is_one_error_naming_it(
    build: Path, name: str, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    spoil, pattern = BAD_META[name]
    spoil(build)
    edit_pto(build, "pto.tadd ins(", "pto.tsub ins(")  # a valid edit: not spliced when the replay stops
    _refused_unchanged(build, capsys, pattern, "--pmu", "2")


# ---- golden.py's constants ----------------------------------------------------------------------------------------


def _edit_golden(old: str, new: str) -> Any:
    def spoil(build: Path) -> None:
        path = build / "golden.py"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))

    return spoil


BAD_GOLDEN = {
    # replay: internal error: ValueError: could not convert string to float: 'x' (after the run)
    "RTOL a string": (
        _edit_golden("RTOL = 1e-05", "RTOL = 'x'"),
        r"golden\.py:8: error: RTOL must be a number >= 0, got 'x'$",
    ),
    "ATOL NaN": (
        _edit_golden("ATOL = 1e-05", "ATOL = float('nan')"),
        r"golden\.py:9: error: ATOL must be .*, got nan$",
    ),
    # replay: internal error: TypeError: 'int' object is not iterable
    "__outputs__ a number": (
        _edit_golden("__outputs__ = ['c']", "__outputs__ = 5"),
        r"golden\.py:7: error: __outputs__ must be a list of the output parameters' names, got 5$",
    ),
}


@pytest.mark.parametrize("name", list(BAD_GOLDEN))
def test_bad_golden_constants_are_one_located_error(
    build: Path, name: str, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    spoil, pattern = BAD_GOLDEN[name]
    spoil(build)
    _refused_unchanged(build, capsys, pattern)


# ---- a build file that is not UTF-8: located at the byte's line ------------------------------------------------------

NOT_UTF8 = {
    # compiled_meta.json: error: not readable as JSON ('utf-8' codec can't decode byte 0xe9 in position 509 ...)
    "compiled_meta.json": r"compiled_meta\.json:\d+:2: error: not UTF-8 text \(byte 0xe9 at offset \d+\)",
    "kernel_config.py": r"kernel_config\.py:\d+:2: error: not UTF-8 text \(byte 0xe9 at offset \d+\)",
    "golden.py": r"golden\.py:\d+:2: error: not UTF-8 text \(byte 0xe9 at offset \d+\)",
    f"ptoas/{UNIT}.pto": rf"ptoas/{UNIT}\.pto:\d+:2: error: not UTF-8 text \(byte 0xe9 at offset \d+\)",
    # replay: error: input is not UTF-8 text (byte 0xe9 at offset 6029) -- naming no file
    f"kernels/aiv/{UNIT}.cpp": rf"kernels/aiv/{UNIT}\.cpp:\d+:2: error: not UTF-8 text \(byte 0xe9 at offset \d+\)",
}


@pytest.mark.parametrize("name", list(NOT_UTF8))
def test_a_build_file_that_is_not_utf8_is_located(
    build: Path, name: str, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    edit_pto(build, "pto.tadd ins(", "pto.tsub ins(")  # stale: its kernel C++ is read for the splice
    with open(build / name, "ab") as f:
        f.write(b"\n \xe9\n")
    assert "save the file as UTF-8" in _refused_unchanged(build, capsys, NOT_UTF8[name])


@pytest.mark.parametrize("flags", [[], ["--no-rebuild-from-pto"]])
def test_a_pto_unit_that_renames_its_kernel_is_located_there(
    build: Path, flags: list[str], capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    """A ``.pto`` whose ``func.func`` was renamed parsed and verified, was spliced, and then the run said
    ``replay: error: task t0 (@chunked_add_incore_0): no function @chunked_add_incore_0 (have @renamed)``,
    naming no file, with the kernel C++ already changed."""
    pto = edit_pto(build, f"func.func @{UNIT}(", "func.func @renamed(")
    before = snapshot(build)
    assert replay_main([str(build), "--no-validate", *flags]) == 1
    err = _one_error(capsys)
    assert err == (
        f"{pto}:2:3: error: expected func.func @{UNIT}, the kernel kernel_config.py lists for this unit; "
        "it defines @renamed\n"
    ), err
    assert snapshot(build) == before


def test_inputs_of_the_wrong_shape_name_the_code_that_made_them(
    build: Path, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    """golden.py's generate_inputs (or debug/run.py's make_inputs) edited to make a tensor of another shape or
    dtype: the run said ``replay: error: argument 'a' has shape (64, 128); the program was compiled for
    (512, 128)``, naming neither file, after splicing an edited ``.pto``."""
    import torch

    golden = build / "golden.py"
    text = golden.read_text()
    assert "a = torch.randn((512, 128))" in text
    golden.write_text(text.replace("a = torch.randn((512, 128))", "a = torch.randn((64, 128))", 1))
    edit_pto(build, "pto.tadd ins(", "pto.tsub ins(")
    before = snapshot(build)
    assert replay_main([str(build)]) == 1
    err = _one_error(capsys)
    line = text.splitlines().index("def generate_inputs(params=None):") + 1
    assert err == (
        f"{golden}:{line}: error: generate_inputs returned 'a' of shape [64, 128] and dtype float32; the build "
        "takes [512, 128] and float32 (compiled_meta.json)\n"
    ), err
    assert snapshot(build) == before

    golden.unlink()

    def make_inputs() -> list[tuple[str, Any]]:
        return [
            ("a", torch.zeros(512, 128, dtype=torch.float64)),
            ("b", torch.zeros(512, 128)),
            ("c", torch.zeros(512, 128)),
        ]

    assert replay_main([str(build)], inline_inputs=make_inputs) == 1
    err = _one_error(capsys)
    assert err.startswith(f"{__file__}:") and "make_inputs returned 'a' of shape [512, 128] and dtype float64" in err


def test_replaying_an_unedited_build_rewrites_none_of_its_files(
    build: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    """A replay with no edit and no DFX flag writes nothing into the build, so a read-only build (a shared copy)
    replays; every run rewrote ``runtime/<unit>.pto`` with the same text, and on a read-only build the replay
    failed with ``replay: error: .../runtime/<unit>.pto: Read-only file system``."""
    import errno

    run_module = sys.modules["pypto.runtime.run"]  # pypto.runtime.run the attribute is the function

    assert replay_main([str(build)]) == 0  # the copy's own runtime/ text, as this process prints it
    before = snapshot(build)

    def read_only(path: Path, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(run_module, "atomic_write_text", read_only)
    capsys.readouterr()
    assert replay_main([str(build)]) == 0, capsys.readouterr().err
    assert "golden validation: PASSED (c)" in capsys.readouterr().out
    assert snapshot(build) == before


def test_a_replay_whose_outputs_differ_from_golden_still_prints_its_numbers(
    build: Path, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    """README's loop (edit pto.tadd -> pto.tmul, run debug/run.py, read the new numbers): with golden.py the
    outputs differ, and the replay said only ``output 'c' does not match golden.py``; the cycle table and the
    artefacts written were not printed."""
    edit_pto(build, "pto.tadd ins(", "pto.tmul ins(")
    assert replay_main([str(build), "--swimlane"]) == 1
    out, err = capsys.readouterr()
    assert re.search(rf"t0 +{UNIT} .*\ntotal \d+ cycles", out), out
    assert "dfx_outputs: dfx_outputs/chip_swimlane_records.json" in out and "PASSED" not in out
    assert err.startswith("replay: error: output 'c' does not match golden.py") and len(err.splitlines()) == 1, err


def test_the_root_of_a_build_of_several_entries_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A program of several Orchestration entries builds each into ``next_levels/<entry>/``; replaying the root
    said ``compiled_meta.json: error: missing; a build directory holds compiled_meta.json``."""
    for entry in ("first", "second"):
        (tmp_path / "next_levels" / entry).mkdir(parents=True)
        (tmp_path / "next_levels" / entry / "kernel_config.py").write_text("")
    assert replay_main([str(tmp_path)]) == 1
    err = _one_error(capsys)
    assert err == (
        f"{tmp_path}: error: a build of 2 Orchestration entries, each a build directory of its own: replay one of "
        "next_levels/first, next_levels/second\n"
    ), err


def test_replay_api_tensors_of_the_wrong_shape_change_nothing(build: Path, own_dfx_flags: None) -> None:
    """``replay(dir, a, b, c)`` with a tensor of another shape: the run refused it after the edited ``.pto`` was
    spliced into the kernel C++."""
    import torch

    from pypto.errors import InvalidArgumentError
    from pypto.runtime.debug import replay

    edit_pto(build, "pto.tadd ins(", "pto.tsub ins(")
    before = snapshot(build)
    with pytest.raises(InvalidArgumentError, match=r"replay: argument 'b' of shape \[64, 128\] and dtype float32; "
                       r"the build takes \[512, 128\] and float32"):  # fmt: skip
        replay(build, torch.zeros(512, 128), torch.zeros(64, 128), torch.zeros(512, 128))
    assert snapshot(build) == before


@pytest.mark.parametrize(
    "rel", ["compiled_meta.json", "kernel_config.py", "orchestration/chunked_add.py", f"ptoas/{UNIT}.pto", "golden.py"]
)
def test_a_build_file_that_is_a_directory_is_not_called_missing(
    build: Path, rel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder where a build file should be was reported as ``missing``."""
    path = build / rel
    path.unlink()
    path.mkdir()
    assert replay_main([str(build), "--validate"]) == 1
    err = _one_error(capsys)
    assert err.startswith(f"{path}: error: a directory, not a file; "), err


def test_dfx_outputs_linked_to_another_folder(build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``dfx_outputs`` a symlink to a folder elsewhere (another disk): the run wrote its artefacts there, then
    the listing said ``replay: internal error: ValueError: '.../pmu.csv' is not in the subpath of ...``."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (build / "dfx_outputs").symlink_to(elsewhere, target_is_directory=True)
    assert replay_main([str(build), "--pmu", "2"]) == 0, capsys.readouterr().err
    assert "dfx_outputs: dfx_outputs/pmu.csv\n" in capsys.readouterr().out
    assert (elsewhere / "pmu.csv").is_file()


@pytest.mark.parametrize("rel", ["kernel_config.py", "golden.py", "compiled_meta.json", f"ptoas/{UNIT}.pto"])
def test_a_build_file_saved_with_a_byte_order_mark(build: Path, rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A file an editor saved as "UTF-8 with BOM": kernel_config.py and golden.py (Python reads them so) and
    compiled_meta.json were refused ('invalid non-printable character U+FEFF', 'Unexpected UTF-8 BOM'); a .pto
    said 'Unexpected character' followed by the invisible mark."""
    path = build / rel
    st = path.stat()
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    code = replay_main([str(build)])
    if rel.endswith(".pto"):
        assert code == 1
        err = _one_error(capsys)
        assert err == (
            f"{path}:1:1: error: the file starts with a byte-order mark (U+FEFF, an editor's 'UTF-8 with BOM'); "
            "save it as UTF-8 without one\n"
        ), err
    else:
        assert code == 0, capsys.readouterr().err
        assert "golden validation: PASSED (c)" in capsys.readouterr().out
