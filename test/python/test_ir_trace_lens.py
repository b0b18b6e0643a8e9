"""The source-line lens of pypto-ir-trace and its inputs: the dump writer's line map
(report/line_locs.json, beside passes_dump/), ptoas's ``// loc`` comments, the .pto ``loc()`` and the
in-core ``instr_metrics.json`` records; errors on bad inputs."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.tools.ir_trace.cli import main
from pypto.tools.ir_trace.discovery import IRTraceError, discover
from pypto.tools.ir_trace.lens import build_lens, load_line_locs, loc_key
from pypto.tools.ir_trace.payload import build_payload
from pypto.tools.ir_trace.render import render_dump

HERE = Path(__file__).resolve()


@pl.jit
def lens_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def _source_line(text: str) -> int:
    """The line number of ``text`` in this file."""
    lines = HERE.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line and "_source_line" not in line)


ADD_LINE = _source_line("out[:] = pl.add(a, b)")
KEY = f"{HERE.name}:{ADD_LINE}"


def args() -> tuple[torch.Tensor, ...]:
    return torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lens") / "build"
    ir.compile(lens_add.specialize(*args()), output_dir=out, dump_passes=True)
    return out


def metrics(kernel: str, rows: list[tuple[str, int, str | None]]) -> dict[str, object]:
    """An ``instr_metrics.json`` following the shared contract."""
    ins, t = [], 0
    for k, (pipe, cycles, dsl) in enumerate(rows):
        ins.append(
            {
                "index": k,
                "pipe": pipe,
                "start_cycle": t,
                "end_cycle": t + cycles,
                "cycles": cycles,
                "op": "pto.tadd" if pipe == "VECTOR" else "pto.tload",
                "pto_loc": None,
                "dsl_loc": dsl,
                "bytes": None,
                "vector_util": None,
            }
        )
        t += cycles
    return {
        "version": 1,
        "kernel": kernel,
        "task_id": 0,
        "core": "AIV0",
        "core_type": "aiv",
        "clock_mhz": 1850.0,
        "column_types": {
            "index": "int",
            "pipe": "enum",
            "start_cycle": "cycles",
            "end_cycle": "cycles",
            "cycles": "cycles",
            "op": "str",
            "pto_loc": "loc",
            "dsl_loc": "loc",
            "bytes": "bytes",
            "vector_util": "ratio",
        },
        "instructions": ins,
        "bottleneck": {},
    }


def write_metrics(build: Path, data: dict[str, object]) -> Path:
    d = build / "dfx_outputs" / "incore" / f"0_{data['kernel']}"
    d.mkdir(parents=True, exist_ok=True)
    path = d / "instr_metrics.json"
    path.write_text(json.dumps(data))
    return path


# ---- the line map ---------------------------------------------------------------


def test_line_map_covers_every_dump_line(build: Path) -> None:
    dump = build / "passes_dump"
    locs = load_line_locs(build)
    assert locs is not None
    snapshots = sorted(p.name for p in dump.glob("[0-9]*.py"))
    assert sorted(locs) == snapshots
    for name in snapshots:
        assert len(locs[name]) == len((dump / name).read_text().splitlines()), name


def test_frontend_line_carries_the_kernel_line(build: Path) -> None:
    dump = build / "passes_dump"
    locs = load_line_locs(build)
    assert locs is not None
    lines = (dump / "00_frontend.py").read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "pl.tensor.add(" in line)
    assert {loc_key(x) for x in locs["00_frontend.py"][k]} == {KEY}
    # the tile op after conversion carries the same DSL line
    after = next(n for n in sorted(locs) if n.endswith("ConvertTensorToTileOps.py"))
    lines = (dump / after).read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "pl.tile.add(" in line)
    assert KEY in {loc_key(x) for x in locs[after][k]}


def test_cpp_has_loc_comments(build: Path) -> None:
    cpp = next((build / "ptoas").glob("*.cpp")).read_text()
    assert f"// loc: {HERE.name}:{ADD_LINE}:" in cpp
    lines = cpp.splitlines()
    k = next(i for i, line in enumerate(lines) if line.strip().startswith("TADD("))
    before = [line for line in lines[:k] if "// loc: " in line]
    assert before and f"{HERE.name}:{ADD_LINE}:" in before[-1]


# ---- the lens payload -----------------------------------------------------------


def _lens(build: Path) -> dict:
    payload = build_payload(discover(build), 3)
    assert payload["lens"] is not None
    return payload["lens"]


def test_lens_maps_pto_and_cpp_to_the_dsl_line(build: Path) -> None:
    lens = _lens(build)
    idx = lens["dsl"].index(KEY)
    pto = [t for sec in lens["pto"] for _, d, t, _ in sec["lines"] if d == idx]
    assert any(t.startswith("pto.tadd") for t in pto)
    assert not any(t.startswith("pto.tload") for t in pto)  # the loads are the with line's
    cpp = [t for sec in lens["cpp"] for _, d, t, _ in sec["lines"] if d == idx]
    assert any(t.startswith("TADD(") for t in cpp)
    assert all(t.startswith("TLOAD(") is False for t in cpp)
    assert lens["incore"] is None
    # every text has a map, one entry per line
    payload = build_payload(discover(build), 3)
    for ti, text in enumerate(payload["texts"]):
        assert lens["maps"][ti] is not None and len(lens["maps"][ti].split(";")) == len(text.splitlines())


def test_lens_cycles_from_instr_metrics(build: Path, tmp_path: Path) -> None:
    b = tmp_path / "b"
    shutil.copytree(build, b)
    with_line = f"{HERE}:{ADD_LINE}:18"
    write_metrics(
        b,
        metrics(
            "lens_add_incore_0",
            [
                ("MTE2", 120, f"{HERE}:{ADD_LINE - 1}:5"),
                ("VECTOR", 70, with_line),
                ("VECTOR", 5, with_line),
                ("MTE3", 9, None),
            ],
        ),
    )
    lens = _lens(b)
    idx = str(lens["dsl"].index(KEY))
    assert lens["incore"]["cycles"][idx] == {"VECTOR": 75}
    assert lens["incore"]["count"][idx] == 2
    other = str(lens["dsl"].index(f"{HERE.name}:{ADD_LINE - 1}"))
    assert lens["incore"]["cycles"][other] == {"MTE2": 120}
    assert lens["incore"]["runs"] == [
        {"dir": "0_lens_add_incore_0", "kernel": "lens_add_incore_0", "core": "AIV0", "task": 0}
    ]


def test_bare_dump_without_line_map_has_no_lens(tmp_path: Path) -> None:
    up = tmp_path / "passes_dump"
    shutil.copytree("/work/shared/reference/upstream-builds/add/passes_dump", up)
    assert build_payload(discover(up), 3)["lens"] is None


def test_report_is_deterministic_and_from_a_build_dir(build: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert main([str(build), "-o", str(a)]) == 0
    assert main([str(build / "passes_dump"), "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert str(build) not in a.read_text()  # no absolute paths


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("report/line_locs.json", "{nope", "invalid line_locs.json: not JSON"),
        ("report/line_locs.json", '{"version": 2}', 'invalid line_locs.json: expected {"version": 1'),
        (
            "report/line_locs.json",
            '{"version": 1, "locations": [], "maps": [[[3]]], "files": {"00_frontend.py": 0}}',
            "invalid line_locs.json: map 0: location indices",
        ),
        (
            "dfx_outputs/incore/0_k/instr_metrics.json",
            '{"version": 1, "instructions": [{"pipe": "VECTOR"}]}',
            'invalid 0_k/instr_metrics.json: instruction 0 needs a "pipe" string and numeric "cycles"',
        ),
        ("dfx_outputs/incore/0_k/instr_metrics.json", "[]", "invalid 0_k/instr_metrics.json: expected"),
    ],
)
def test_bad_inputs_are_one_line_errors(
    build: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str, message: str
) -> None:
    b = tmp_path / "b"
    shutil.copytree(build, b)
    (b / file).parent.mkdir(parents=True, exist_ok=True)
    (b / file).write_text(text)
    out = tmp_path / "r.html"
    assert main([str(b), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pypto-ir-trace: error: ") and message in err and "Traceback" not in err
    assert not out.exists()
    with pytest.raises(IRTraceError):
        build_lens(discover(b), list(range(len(discover(b).snapshots))), 99)


def _incore_flag() -> bool:
    from pypto.runtime.config import RunConfig

    return "enable_incore_trace" in {f.name for f in dataclasses.fields(RunConfig)}


@pytest.mark.skipif(not _incore_flag(), reason="RunConfig(enable_incore_trace=True) does not exist yet")
def test_lens_cycles_from_a_real_run(tmp_path: Path) -> None:
    from pypto.runtime.config import RunConfig

    a = args()
    compiled = ir.compile(lens_add.specialize(*a), output_dir=tmp_path / "run", dump_passes=True)
    compiled(*a, config=RunConfig(enable_incore_trace=True))
    lens = _lens(Path(compiled.output_dir))
    assert lens["incore"] is not None and lens["incore"]["runs"]
    idx = str(lens["dsl"].index(KEY))
    assert lens["incore"]["cycles"][idx].get("VECTOR", 0) > 0


def test_render_size_budget_on_upstream_add() -> None:
    """At most 0.1x upstream's 2.2 MB report on the same dumps (add kernel)."""
    dump = discover("/work/shared/reference/upstream-builds/add/passes_dump")
    html = render_dump(dump)
    assert len(html.encode()) <= 220_000
    assert '"hl":{"runs":[' in html
