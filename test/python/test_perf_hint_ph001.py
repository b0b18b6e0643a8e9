"""PH001 end to end: a compile of a kernel whose loads move 16 fp32 (64 B) rows
writes the hint to report/perf_hints.log and one summary line to stderr."""

from __future__ import annotations

from pathlib import Path

import torch

import pypto.language as pl


@pl.jit
def narrow_rows(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 16])
        pl.store(pl.exp(t), [0, 0], out)
    return out


def test_ph001_for_a_16_element_fp32_innermost_dim(tmp_path: Path, capsys) -> None:
    from pypto.ir import compile as ir_compile

    program = narrow_rows.specialize(torch.randn(64, 16), torch.zeros(64, 16))
    compiled = ir_compile(program, output_dir=tmp_path / "b", dump_passes=False)
    log = (Path(compiled.output_dir) / "report" / "perf_hints.log").read_text().splitlines()
    load = [line for line in log if "tile.load" in line]
    assert load == [
        "[perf_hint PH001] TileInnermostDimGranularity: tile.load has innermost dim = 64B (tile fp32[16], "
        "target_memory=Vec); moves 4096B as 64 x 64B rows; recommended >= 512B for backend a2a3 "
        "(L2 cache line = 512B). Consider increasing tile shape on the innermost axis. at test_perf_hint_ph001.py:16:13"
    ]
    err = capsys.readouterr().err
    assert "[perf_hint] 2 hints across 2 sites; see " in err and err.rstrip().endswith("perf_hints.log")


def test_disabled_check_silences_ph001(tmp_path: Path) -> None:
    from pypto.ir import compile as ir_compile

    program = narrow_rows.specialize(torch.randn(64, 16), torch.zeros(64, 16))
    compiled = ir_compile(
        program, output_dir=tmp_path / "b", dump_passes=False, disabled_diagnostics=["TileInnermostDimGranularity"]
    )
    log = (Path(compiled.output_dir) / "report" / "perf_hints.log").read_text()
    assert "PH001" not in log
