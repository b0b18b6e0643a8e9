"""The bytes of every DFX artefact of one flagged run of the models example (the run
``benchmarks/dfx_overhead.py`` times), pinned by their SHA-256: a change that makes collection cheaper must
not change a byte of what it writes. The run's folder (in ``args_dump.json``'s ``run_dir``) and the merged
trace's time stamp (in its file name) are the only run-dependent parts; they are normalised first.

A deliberate format change updates :data:`EXPECTED` (``PYPTO_PRINT_ARTEFACT_HASHES=1`` prints the new table).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "models" / "01_ffn.py"
ALL_ON = {"enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_pmu": 2, "enable_dep_gen": True,
          "enable_scope_stats": True}  # fmt: skip
STAMP = re.compile(r"merged_swimlane_\d{8}_\d{6}\.json")

EXPECTED: dict[str, dict[str, str]] = {
    "ffn_gelu": {
        "args_dump/args.bin": "caedcc123cda248fd2c614699f0dbc96afd2f93e808903f1766292c28ec290c7",
        "args_dump/args_dump.json": "63d72f64c783c71aa3537a4af28e8eec6fdef975226ae9b9eb11e332def622dd",
        "chip_swimlane_records.json": "cf8b3b06ba3d27fb99cbf5f4f5ae0f9f03b349fd8571c18cb9cb307b0cb3eb99",
        "deps.json": "b042987b18b8fa5ba2aa7ad108186a7140dae517fcb5a06110e0aebd56aa623d",
        "merged_swimlane.json": "a8f9125592fcbdc17ab02169e6c058f4111ca0809d0dc92e60722c5ed81d098a",
        "name_map_ffn_gelu.json": "86d24b72582eb29ff393bb7b8898b1a230a9a0de36f8888b7ef8cf679be34bab",
        "pmu.csv": "711b3fec3b4722d00327516d3043fdb2fcbeb1a01d6d3997fca27c4015d470cf",
        "run_report.html": "992513b464509b57ceb0e8e424ff613cfd8ba1e7d449d3bf8eb8f89e57e40b98",
        "scope_stats/scope_stats.jsonl": "593927cd2167cf77a89071ce19c29c6e1e0e8c90e73877042c7c96cfce78eef5",
    },
    "ffn_swiglu": {
        "args_dump/args.bin": "ecb8ec64127167f176d4ad4991eb82095176a7b30e29dd66f4348c14cfa2dd77",
        "args_dump/args_dump.json": "2c31a66f221cb2cd0c942d06ffb1eb2efced0df17ef905f97ae73e34a30425ca",
        "chip_swimlane_records.json": "18bf13daa5326e9d993e91e889c8039d5b477280d9e68486f69001fe87e6c89a",
        "deps.json": "8ae199c131b6c538d6dda9d5905f941dc1441ca09a4c3a3ab0b886906e57a8ce",
        "merged_swimlane.json": "e40c55a9b66c772a6f3b0a2f8170f6bc685ea5d7398569d16a535214e6cb3d34",
        "name_map_ffn_swiglu.json": "a9fd825675742ca78928af8e008ca64a727a1e0db9c46bca8c243c1c6f06f10c",
        "pmu.csv": "ae881a425f64733f0a445faf08141dcdb4a832ad84abefcc488b8e02b564d79f",
        "run_report.html": "4bbb6d41523a429d728e799bc287941b30372d025a4cf23005d6b7f37787651f",
        "scope_stats/scope_stats.jsonl": "29127c652ba83e18a4048885c4f0eefe452f729d22c509a681f8378825343ea2",
    },
}
"""Case -> artefact (relative to ``dfx_outputs``) -> SHA-256 of its normalised bytes."""


def _cases() -> list[Any]:
    sys.path.insert(0, str(EXAMPLE.parent.parent))  # the examples' _harness
    spec = importlib.util.spec_from_file_location("dfx_bytes_01_ffn", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.CASES)


def artefact_hashes(build: Path) -> dict[str, str]:
    """SHA-256 of each file under ``build/dfx_outputs`` (its run folder and trace time stamp normalised)."""
    out: dict[str, str] = {}
    root = build / "dfx_outputs"
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes().replace(json.dumps(str(build))[1:-1].encode(), b"<build>")
        out[STAMP.sub("merged_swimlane.json", path.relative_to(root).as_posix())] = hashlib.sha256(data).hexdigest()
    return out


@pytest.mark.usefixtures("own_dfx_flags")
def test_flagged_run_writes_the_pinned_bytes(tmp_path: Path) -> None:
    got: dict[str, dict[str, str]] = {}
    for case in _cases():
        args = case.inputs()
        prog = ir_compile(case.kernel.specialize(*args), output_dir=str(tmp_path / case.name))
        runs = []
        for _ in range(2):  # a second run in the same folder (reused copy blocks, replaced files) too
            prog(*case.inputs(), config=RunConfig(**ALL_ON))  # fresh inputs: a run writes its outputs
            # a run a second later writes a new time-stamped trace and removes the earlier one
            assert len(list((tmp_path / case.name / "dfx_outputs").glob("merged_swimlane_*.json"))) == 1
            runs.append(artefact_hashes(tmp_path / case.name))
        assert runs[0] == runs[1]
        got[case.name] = runs[1]
    if os.environ.get("PYPTO_PRINT_ARTEFACT_HASHES"):
        print(json.dumps(got, indent=4, sort_keys=True))
    assert got == EXPECTED
