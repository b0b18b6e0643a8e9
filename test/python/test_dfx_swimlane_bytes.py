"""The bytes of the swimlane collector's artefacts (``chip_swimlane_records.json``, the merged trace,
``run_report.html``) for ``examples/models/08_llama_block.py`` at swimlane levels 1-4 (level 4 with the
in-core view on the page), pinned by their SHA-256 as test_dfx_artefact_bytes.py pins 01_ffn's: making
them cheaper to build must not change a byte. The merged trace's time stamp (its file name) is the only
run-dependent part. A deliberate format change updates :data:`EXPECTED`."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "models" / "08_llama_block.py"
FLAGS: dict[str, dict[str, Any]] = {
    "level1": {"enable_chip_swimlane": 1},
    "level2_pmu1": {"enable_chip_swimlane": 2, "enable_pmu": 1},
    "level3_deps": {"enable_chip_swimlane": 3, "enable_dep_gen": True},
    "level4_all_incore": {"enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_pmu": 2, "enable_dep_gen": True,
                          "enable_scope_stats": True, "enable_incore_trace": True},
}  # fmt: skip
FILES = ("chip_swimlane_records.json", "merged_swimlane.json", "run_report.html")
EXPECTED: dict[str, tuple[str, str, str]] = {
    "level1": (
        "8f623a4762a4c3de1440e0ab16c9216f40c5b9db62f0bc54db5047a28304b2d6",
        "44c648048ecf33a8a5d2be2571716168cc53a3cc7f0ef7ed0849f5806fd7d1ee",
        "e457612257d8eadd51d2f1b01a8d9d7d533f094f485b63b8cd9ccb335752fcf4",
    ),
    "level2_pmu1": (
        "6e1af116e34940ae68dbe4d26812437dd39516f1972633d0994b545f98904a72",
        "bc0fdf23e1e8247a35302ffb8320e8c9612ee4192e92448f526da0054d065c6d",
        "6ed0440108b69bda65643f4d30ccec65e055026e84cee2644f07fc5382058c5d",
    ),
    "level3_deps": (
        "328cf7e5e3f1ec071920f6f8271e0acb8cee3171ba288ecfe2263b89ce6d4f89",
        "e0e8933681c45caeef0dbb337769d1ef4fadefd44a2b9820dc5d1ade6427984d",
        "7375a54ec5d5c86364689f36f452c335b1fc9fe84be98e3ac6be56e14e8860a5",
    ),
    "level4_all_incore": (
        "96d9b942d7ffb546b3e5e9815be028e715c3958f6e8116942201a677b3bcdae6",
        "25bf3cbc7498f0a66a6beacfa6406b7b6ac7be5632509586b03523013aeb3f76",
        "0298c1c1080aeb7ceacbba58e66979fca139817ec164dcfd8987d3ba7ac88d19",
    ),
}
"""Flags -> SHA-256 of :data:`FILES` (the merged trace under its name without the time stamp)."""


def _case() -> Any:
    sys.path.insert(0, str(EXAMPLE.parent.parent))  # the examples' _harness
    spec = importlib.util.spec_from_file_location("dfx_bytes_08_llama_block", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (case,) = module.CASES
    return case


@pytest.mark.usefixtures("own_dfx_flags")
def test_swimlane_artefacts_keep_their_bytes_at_every_level(tmp_path: Path) -> None:
    case = _case()
    args = case.inputs()
    prog = ir_compile(case.kernel.specialize(*args), output_dir=str(tmp_path / "build"))
    out = tmp_path / "build" / "dfx_outputs"
    got: dict[str, tuple[str, ...]] = {}
    for name, flags in FLAGS.items():
        prog(*case.inputs(), config=RunConfig(**flags))
        (trace,) = out.glob("merged_swimlane_*.json")  # the run replaced the previous level's
        paths = [out / FILES[0], trace, out / FILES[2]]
        got[name] = tuple(hashlib.sha256(p.read_bytes()).hexdigest() for p in paths)
    assert got == EXPECTED
