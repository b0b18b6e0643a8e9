"""The run report of a large run (upstream's ``04_paged_attention``: 16448 tasks) is built in time linear in its
tasks: it finds the latest earlier end on a core from a sorted list (a scan per task was 4 s of a 21 s collection
on 04). This test holds the fast form to the scan it replaced."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.runtime.dfx.run_report import report_model

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


def _naive_prev_end(tasks: list[Any]) -> dict[int, int]:
    """The run report's ``prev_end`` as it was computed: per core, each task's first slice against every
    earlier slice there of another task."""
    first = {t.task_id: min(b.start for b in t.blocks) for t in tasks}
    by_core: dict[int, list[tuple[int, int, int, int]]] = {}  # (start, end, task, block)
    for t in tasks:
        for b in t.blocks:
            for c in b.core_ids:
                by_core.setdefault(c, []).append((b.start, b.end, t.task_id, b.block_idx))
    out: dict[int, int] = {}
    for lst in by_core.values():
        lst.sort()
        for i, (start, _, task, _) in enumerate(lst):
            if i and start == first[task]:
                ends = [e for _, e, other, _ in lst[:i] if e <= start and other != task]
                if ends:
                    out[task] = max(max(ends), out.get(task) or 0)
    return out


@st.composite
def _tasks(draw: Any) -> list[Any]:
    """Tasks of 1-3 blocks (an SPMD task: blocks of one task may share a core), on up to 4 cores."""
    tasks = []
    for i in range(draw(st.integers(1, 25))):
        blocks = []
        for k in range(draw(st.integers(1, 3))):
            dispatch = draw(st.integers(0, 60))
            start = dispatch + draw(st.integers(0, 10))
            end = start + draw(st.integers(0, 20))  # a block of no cycles too
            cores = sorted(draw(st.sets(st.integers(0, 3), min_size=1, max_size=2)))
            blocks.append(SimpleNamespace(block_idx=k, core_ids=cores, dispatch=dispatch, start=start, end=end,
                                          finish=end + draw(st.integers(0, 5))))  # fmt: skip
        tasks.append(SimpleNamespace(task_id=i, label=f"t{i}", func_name="k", part_names=["k"], core_type="aiv",
                                     core_ids=sorted({c for b in blocks for c in b.core_ids}),
                                     dispatch=min(b.dispatch for b in blocks), start=min(b.start for b in blocks),
                                     end=max(b.end for b in blocks), finish=max(b.finish for b in blocks),
                                     cycles=1, deps=[], blocks=blocks))  # fmt: skip
    return tasks


@settings(max_examples=200, deadline=None)
@given(_tasks())
def test_the_reports_prev_end_is_the_scans(tasks: list[Any]) -> None:
    result = SimpleNamespace(tasks=tasks, core_types=["aiv"] * 4, graph=None, target_name="a2a3", clock_hz=50_000_000,
                             total_cycles=max(t.finish for t in tasks))  # fmt: skip
    model = report_model(result, swimlane_level=2)
    assert {t["id"]: t["prev_end"] for t in model["tasks"] if t["prev_end"] is not None} == _naive_prev_end(tasks)
