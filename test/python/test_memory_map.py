"""The memory map (python -m pypto.tools.memory_map): parsing our dumps and the three upstream ones,
aliases, reuse, views, conflicts, lifetimes from data flow, peak and holes, capacity, rejection
messages (before allocation, memory_planner=PTOAS), exit codes, determinism, atomic writes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.tools.memory_map import cli
from pypto.tools.memory_map.model import MemoryMap, MemoryMapError, build_map
from pypto.tools.memory_map.render import build_payload, render_map

UPSTREAM = Path("/work/shared/reference/upstream-builds")
ALLOC = "35_after_AllocateMemoryAddr.py"
KIB = 1024


@pl.jit
def mm_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pl.jit
def mm_softmax(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [i * 16, 0], [16, 128])
            tmp = pl.create_tile([16, 128], dtype=pl.FP32)
            mx = pl.row_max(t, tmp)
            e = pl.exp(pl.row_expand_sub(t, mx))
            s = pl.row_sum(e, tmp)
            pl.store(pl.row_expand_div(e, s), [i * 16, 0], out)
    return out


def _add_args() -> tuple[torch.Tensor, ...]:
    return torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Our own builds: the add kernel, the softmax loop, and softmax with memory_planner=PTOAS."""
    root = tmp_path_factory.mktemp("mm_builds")
    out = {}
    out["add"] = Path(ir.compile(mm_add.specialize(*_add_args()), output_dir=root / "add", dump_passes=True).output_dir)
    sm_args = (torch.randn(64, 128), torch.empty(64, 128))
    out["softmax"] = Path(
        ir.compile(mm_softmax.specialize(*sm_args), output_dir=root / "softmax", dump_passes=True).output_dir
    )
    out["ptoas"] = Path(
        ir.compile(
            mm_softmax.specialize(*sm_args), output_dir=root / "ptoas", dump_passes=True, memory_planner="PTOAS"
        ).output_dir
    )
    return out


def upstream(name: str) -> Path:
    return UPSTREAM / name / "passes_dump" / ALLOC


def space(mm: MemoryMap, name: str, fn: int = 0):
    return next(s for s in mm.functions[fn].spaces if s.space == name)


def members(box) -> list[str]:
    return [t.name for t in box.members]


def variant(tmp_path: Path, src: Path, *edits: tuple[str, str], name: str = ALLOC) -> Path:
    """A copy of ``src`` with textual edits (each must apply exactly once)."""
    text = src.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    dst = tmp_path / name
    dst.write_text(text)
    return dst


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pypto.tools.memory_map", *args], capture_output=True, text=True, check=False
    )


# ----------------------------------------------------------------------------- upstream dumps


def test_upstream_add_aliases_and_peak() -> None:
    mm = build_map(upstream("add"), "Ascend910B")
    assert [f.name for f in mm.functions] == ["add_incore_0"]
    assert mm.functions[0].func_type == "AIV"
    vec = space(mm, "Vec")
    assert [members(b) for b in vec.boxes] == [["a__tile", "t__tile"], ["b__tile"]]
    a, b = vec.boxes
    assert (a.base, a.offset, a.size, a.start, a.end) == ("mem_vec_3", 0, 65536, 10, 13)
    assert (b.base, b.offset, b.size, b.start, b.end) == ("mem_vec_4", 65536, 65536, 11, 12)
    assert vec.capacity == 192 * KIB and vec.high_water == 128 * KIB and not vec.overflow
    assert (vec.peak_bytes, vec.peak_line, vec.peak_boxes) == (128 * KIB, 11, ["Vec-0", "Vec-1"])
    assert vec.holes == [(128 * KIB, 192 * KIB)]
    assert vec.allocs == {"mem_vec_3": 8, "mem_vec_4": 9}
    assert not any(b.conflict or b.kind == "view" for b in vec.boxes)


def test_upstream_softmax_alias_chain_and_reuse() -> None:
    mm = build_map(upstream("softmax_rows"), "Ascend910B")
    vec = space(mm, "Vec")
    chain, tmp, mx, s = vec.boxes
    assert members(chain) == ["t__ssa_v0", "t__tmp_v0", "e__ssa_v0", "t__tmp_v1"]  # in-place chain: one box
    assert members(tmp) == ["tmp__ssa_v0"]
    # mx and s share mem_vec_4 at disjoint times: two boxes, the second reuses the first's address
    assert members(mx) == ["mx__ssa_v0"] and members(s) == ["s__ssa_v0"]
    assert (mx.base, mx.offset) == (s.base, s.offset) == ("mem_vec_4", 16384)
    assert mx.end < s.start and s.reuses == [mx.id]
    assert vec.high_water == 16384 + 64
    assert vec.peak_line == 14 and set(vec.peak_boxes) == {chain.id, tmp.id, mx.id}


def test_upstream_matmul_loop_carry_and_spaces() -> None:
    mm = build_map(upstream("matmul_k"), "Ascend910B")
    fn = mm.functions[0]
    assert (fn.name, fn.func_type) == ("k_blocked", "AIC")
    assert [s.space for s in fn.spaces] == ["Mat", "Left", "Right", "Acc"]
    acc = space(mm, "Acc")
    [box] = acc.boxes
    assert members(box) == ["acc__tile", "acc__iter_v1", "acc__tile_1", "acc__rv_v2"]
    assert [t.producer for t in box.members] == ["tile.matmul", "iter_arg", "tile.matmul_acc", "loop result"]
    assert (box.start, box.end) == (17, 26)
    # detached parser leftovers must not count as uses: the iter-arg is used at line 24 only
    assert box.members[1].use_lines == (24,)
    mat = space(mm, "Mat")
    assert len(mat.boxes) == 4 and [b.reuses for b in mat.boxes][2:] == [["Mat-0"], ["Mat-1"]]
    assert space(mm, "Left").capacity == 64 * KIB and space(mm, "Mat").capacity == 512 * KIB


def test_value_defined_outside_a_loop_lives_to_the_loop_end(tmp_path: Path) -> None:
    # hoist `tmp` (a tile.create) out of the softmax loop: it is read by every iteration
    src = upstream("softmax_rows")
    lines = src.read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if "tmp__ssa_v0: pl.Tile" in ln)
    j = next(k for k, ln in enumerate(lines) if ln.lstrip().startswith("for i__idx_v0"))
    tmp_line = lines.pop(i)[4:]
    lines.insert(j, tmp_line)
    dump = tmp_path / ALLOC
    dump.write_text("\n".join(lines) + "\n")
    mm = build_map(dump, "Ascend910B")
    tmp = next(b for b in space(mm, "Vec").boxes if members(b) == ["tmp__ssa_v0"])
    loop_last = next(k for k, ln in enumerate(lines, 1) if "out__store" in ln)
    assert tmp.start == j + 1 and tmp.end == loop_last
    # its raw use lines stay the two reading statements
    assert len(tmp.members[0].use_lines) == 2 and max(tmp.members[0].use_lines) < loop_last


# ----------------------------------------------------------------------------- our dumps


def test_our_add_dump(builds: dict[str, Path]) -> None:
    dump = cli.find_dump(builds["add"], "AllocateMemoryAddr")
    assert dump.name.endswith("_after_AllocateMemoryAddr.py")
    mm = build_map(dump, "Ascend910B")
    vec = space(mm, "Vec")
    assert mm.functions[0].func_type in ("AIV", "InCore")
    assert vec.high_water == 128 * KIB and vec.peak_bytes == 128 * KIB
    assert any(len(b.members) >= 2 for b in vec.boxes)  # the in-place add
    assert not any(b.conflict for b in vec.boxes)


def test_our_softmax_dump_matches_upstream_structure(builds: dict[str, Path]) -> None:
    ours = build_map(cli.find_dump(builds["softmax"], "AllocateMemoryAddr"), "Ascend910B")
    theirs = build_map(upstream("softmax_rows"), "Ascend910B")
    shape = lambda mm: [(len(b.members), b.size, b.kind) for b in space(mm, "Vec").boxes]  # noqa: E731
    assert shape(ours) == shape(theirs)
    assert space(ours, "Vec").high_water == space(theirs, "Vec").high_water


def test_every_dump_after_allocation_of_our_build_parses(builds: dict[str, Path]) -> None:
    dumps = sorted((builds["softmax"] / "passes_dump").glob("*.py"))
    first = next(i for i, d in enumerate(dumps) if d.name.endswith("_after_AllocateMemoryAddr.py"))
    for d in dumps[first:]:
        mm = build_map(d, "Ascend910B")
        assert space(mm, "Vec").high_water == 16448, d.name


def test_backend_detection(builds: dict[str, Path], tmp_path: Path) -> None:
    dump = cli.find_dump(builds["add"], "AllocateMemoryAddr")
    assert cli.detect_backend(dump)[:2] == ("Ascend910B", False)  # ptoas/*.pto says a2a3
    assert cli.detect_backend(upstream("add"))[:2] == ("Ascend910B", False)  # upstream keeps .pto in kernels/
    alone = tmp_path / "x" / "passes_dump"
    alone.mkdir(parents=True)
    shutil.copy(upstream("add"), alone / ALLOC)
    assert cli.detect_backend(alone / ALLOC)[:2] == ("Ascend910B", True)
    out = tmp_path / "a.html"
    assert cli.main([str(alone / ALLOC), "-o", str(out)]) == 0
    assert "assumed" in out.read_text()
    payload = build_payload(build_map(upstream("add"), "Ascend950"))
    assert payload["backend"] == "Ascend950" and payload["backend_assumed"] is False


# ----------------------------------------------------------------------------- views, conflicts, capacity

_B_REF = "pl.MemRef(mem_vec_4, pl.const(65536, pl.INT64), 65536)"
_T_REF = "t__tile: pl.Tile[[128, 128], pl.FP32, pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 65536)"


def test_conflict_is_red(tmp_path: Path) -> None:
    dump = variant(tmp_path, upstream("add"), (_B_REF, "pl.MemRef(mem_vec_4, pl.const(32768, pl.INT64), 65536)"))
    mm = build_map(dump, "Ascend910B")
    a, b = space(mm, "Vec").boxes
    assert a.conflict and b.conflict and a.conflicts == [b.id] and b.conflicts == [a.id]
    html = render_map(mm)
    assert '"conflict":true' in html and "mm-conflict" in html


def test_view_is_dashed(tmp_path: Path) -> None:
    dump = variant(
        tmp_path,
        upstream("add"),
        (_T_REF, _T_REF.replace("pl.INT64), 65536)", "pl.INT64), 32768)")),
    )
    mm = build_map(dump, "Ascend910B")
    vec = space(mm, "Vec")
    view = next(b for b in vec.boxes if members(b) == ["t__tile"])
    parent = next(b for b in vec.boxes if members(b) == ["a__tile"])
    assert view.kind == "view" and view.parent == parent.id and not view.conflict
    assert "mm-view" in render_map(mm)


def test_clobbered_alias_is_a_conflict(tmp_path: Path) -> None:
    # b__tile written into a__tile's buffer while a__tile is still read
    dump = variant(tmp_path, upstream("add"), (_B_REF, "pl.MemRef(mem_vec_3, pl.const(0, pl.INT64), 65536)"))
    mm = build_map(dump, "Ascend910B")
    [box] = space(mm, "Vec").boxes
    assert box.conflict and any("b__tile" in n and "a__tile" in n for n in box.notes)


def test_high_water_mark_vs_capacity(tmp_path: Path) -> None:
    dump = variant(tmp_path, upstream("add"), (_B_REF, "pl.MemRef(mem_vec_4, pl.const(163840, pl.INT64), 65536)"))
    mm = build_map(dump, "Ascend910B")
    vec = space(mm, "Vec")
    assert vec.high_water == 163840 + 65536 > vec.capacity == 192 * KIB and vec.overflow
    assert not any(b.conflict for b in vec.boxes)
    assert vec.holes[0] == (65536, 163840)  # fragmentation at the peak
    assert '"overflow":true' in render_map(mm)


# ----------------------------------------------------------------------------- rejections


def test_dump_before_memrefs_is_rejected(builds: dict[str, Path]) -> None:
    dump = next((builds["add"] / "passes_dump").glob("*_after_ConvertTensorToTileOps.py"))
    with pytest.raises(MemoryMapError, match="before InitMemRef"):
        build_map(dump, "Ascend910B")


def test_dump_before_allocation_is_rejected(builds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    dump = next((builds["softmax"] / "passes_dump").glob("*_after_InitMemRef.py"))
    assert cli.main([str(dump), "-o", str(dump.with_suffix(".x.html"))]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pypto-memory-map: error: ")
    assert "before AllocateMemoryAddr" in err and "offset 0" in err
    assert not dump.with_suffix(".x.html").exists()


def test_ptoas_planner_is_explained(builds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(builds["ptoas"])]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "memory_planner=PTOAS" in err and "ptoas" in err
    last = sorted((builds["ptoas"] / "passes_dump").glob("*.py"))[-1]
    assert cli.main([str(last), "-o", str(last.with_suffix(".html"))]) == 1
    assert "memory_planner=PTOAS" in capsys.readouterr().err


# ----------------------------------------------------------------------------- CLI


def test_cli_paths_and_default_output(tmp_path: Path) -> None:
    build = tmp_path / "softmax_rows"
    shutil.copytree(UPSTREAM / "softmax_rows", build)
    for path in (build, build / "passes_dump", build / "passes_dump" / ALLOC):
        r = run_cli(str(path))
        assert r.returncode == 0, r.stderr
        out = build / "passes_dump" / "35_after_AllocateMemoryAddr.memory_map.html"
        assert r.stdout.strip() == str(out) and out.is_file() and r.stderr == ""
        out.unlink()
    r = run_cli(str(build), "-p", "InitMemRef", "-o", str(tmp_path / "x.html"))
    assert r.returncode == 1 and "32_after_InitMemRef.py" in r.stderr


def test_cli_exit_codes(tmp_path: Path) -> None:
    missing = run_cli(str(tmp_path / "nope"))
    assert (
        missing.returncode == 1
        and missing.stderr.strip() == f"pypto-memory-map: error: no such file or directory: {tmp_path / 'nope'}"
    )
    bad_backend = run_cli(str(upstream("add")), "-b", "Ascend123")
    assert bad_backend.returncode == 2 and "unknown backend" in bad_backend.stderr
    no_args = run_cli()
    assert no_args.returncode == 2
    (tmp_path / "bad.py").write_text("def f(:\n")
    bad = run_cli(str(tmp_path / "bad.py"), "-o", str(tmp_path / "bad.html"))
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "not a Python pass dump" in bad.stderr
    no_dir = run_cli(str(upstream("add")), "-o", str(tmp_path / "missing" / "x.html"))
    assert no_dir.returncode == 1 and "output directory does not exist" in no_dir.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli(str(empty))
    assert r.returncode == 1 and "neither a pass dump" in r.stderr
    ok = run_cli(str(upstream("matmul_k")), "-o", str(tmp_path / "ok.html"), "-b", "Ascend910B")
    assert ok.returncode == 0 and ok.stdout.strip() == str(tmp_path / "ok.html")


def test_deterministic_and_self_contained(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "matmul_k", tmp_path / "b" / "elsewhere" / "matmul_k"
    shutil.copytree(UPSTREAM / "matmul_k", a)
    shutil.copytree(UPSTREAM / "matmul_k", b)
    assert cli.main([str(a), "-o", str(tmp_path / "1.html")]) == 0
    assert cli.main([str(a), "-o", str(tmp_path / "2.html")]) == 0
    assert cli.main([str(b), "-o", str(tmp_path / "3.html")]) == 0
    one = (tmp_path / "1.html").read_bytes()
    assert one == (tmp_path / "2.html").read_bytes() == (tmp_path / "3.html").read_bytes()
    text = one.decode()
    assert "Content-Security-Policy" in text and "connect-src 'none'" in text
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", text)
    assert str(tmp_path) not in text


def test_atomic_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "map.html"
    out.write_text("old report")

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)  # the atomic writer's rename fails
    assert cli.main([str(upstream("add")), "-o", str(out)]) == 1
    assert out.read_text() == "old report"
    assert "cannot write" in capsys.readouterr().err
    monkeypatch.undo()
    assert cli.main([str(upstream("add")), "-o", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map.html"]  # no temporary file left behind


def test_output_equal_to_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming the dump, or the ``.pto`` the backend is read from, is a user error and the file keeps
    its text (the page once replaced it)."""
    build = tmp_path / "add"
    shutil.copytree(UPSTREAM / "add", build)
    dump = build / "passes_dump" / ALLOC
    pto = next(build.glob("kernels/**/*.pto"))
    for target in (dump, pto):
        before = target.read_bytes()
        assert cli.main([str(build), "-o", str(target)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"pypto-memory-map: error: {target}: the output path (-o) is the input file"), err
        assert err.count("\n") == 1 and target.read_bytes() == before


def test_dump_that_is_a_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``passes_dump/35_after_AllocateMemoryAddr.py`` that is a folder: the map said the build ran with
    memory_planner=PTOAS (it skipped the folder and saw only InitMemRef); it says the dump is not a file."""
    build = tmp_path / "add"
    shutil.copytree(UPSTREAM / "add", build)
    dump = build / "passes_dump" / ALLOC
    dump.unlink()
    dump.mkdir()
    for path in (build, build / "passes_dump"):
        assert cli.main([str(path), "-o", str(tmp_path / "m.html")]) == 1
        err = capsys.readouterr().err
        assert err == f"pypto-memory-map: error: {dump}: the pass dump is not a file (expected the .py the compile wrote)\n"
        assert "PTOAS" not in err and not (tmp_path / "m.html").exists()


def test_dash_output_is_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o -`` is stdout, as for pypto-opt and ptoas (it wrote a file named ``-``): the page, no path after it."""
    monkeypatch.chdir(tmp_path)
    assert cli.main([str(upstream("add")), "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert list(tmp_path.iterdir()) == []
