"""The source-line lens works on every example in examples/: each kernel's build has a
line map for every dump, and its .pto ops and C++ lines map to DSL lines that the pass
dumps carry (so clicking either way finds something)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_examples import CASES, _mark_known_failure, compile_case

from pypto.tools.ir_trace.discovery import discover
from pypto.tools.ir_trace.payload import build_payload


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_example_has_a_lens(case_id: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _mark_known_failure(request, case_id)
    compiled = compile_case(CASES[case_id], tmp_path / "build")
    payload = build_payload(discover(Path(compiled.output_dir)), 3)
    lens = payload["lens"]
    assert lens is not None and lens["dsl"], "no lens"
    assert all(m is not None for m in lens["maps"]), "a dump without its line map"
    in_dumps = {int(x) for m in lens["maps"] for line in m.split(";") for x in line.split(".") if x}
    pto = {d for sec in lens["pto"] for _, d, _, _ in sec["lines"]}
    cpp = {d for sec in lens["cpp"] for _, d, _, _ in sec["lines"]}
    assert pto, "no .pto op with a location"
    assert cpp, "no C++ line after a // loc comment"
    assert pto <= in_dumps and cpp <= in_dumps, "a .pto op or C++ line whose DSL line no dump carries"
    front = lens["maps"][payload["passes"][0]["text"]]
    assert any(front.split(";")), "no line of 00_frontend.py carries a location"
