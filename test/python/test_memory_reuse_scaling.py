"""MemoryReuse's packing grows linearly with the number of buffer groups (issue 17 goal 3), counted, not timed.

N tiles with disjoint lifetimes (N independent load/add/store chains) all share one buffer; checking a
new group against it scanned every member (N^2/2 lifetime comparisons). The buffer now keeps its
members' lifetimes sorted and bisects.
"""

from __future__ import annotations

import random

import pytest

from pypto.dialects.enums import MemorySpace
from pypto.passes.memory_reuse import Group, can_share, plan_reuse


class CountedGroup(Group):
    """A group counting how often its lifetime (``start`` / ``last``) is read."""

    reads = 0

    def __getattribute__(self, name: str) -> object:
        if name in ("start", "last"):
            CountedGroup.reads += 1
        return super().__getattribute__(name)


def lifetime_reads(n: int) -> int:
    """Lifetime reads of packing ``n`` same-size groups whose lifetimes follow one another."""
    groups = [CountedGroup(f"b{i}", MemorySpace.Vec, 1024, 2 * i, 2 * i + 2) for i in range(n)]
    CountedGroup.reads = 0
    mapping = plan_reuse(groups)
    assert len(mapping) == n - 1 and set(mapping.values()) == {"b0"}  # one buffer for all
    return CountedGroup.reads


def test_packing_reads_lifetimes_linearly() -> None:
    small, large = lifetime_reads(200), lifetime_reads(400)
    assert large / small <= 2.2, (small, large)  # the all-members scan: 4x


def reference_plan(groups: list[Group]) -> dict[str, str]:
    """First-fit-decreasing as the pass's docstring states it: every member checked with ``can_share``."""
    buffers: list[list[Group]] = []
    for g in sorted(groups, key=lambda g: -g.size):
        for members in buffers:
            if all(can_share(g, m) for m in members):
                members.append(g)
                break
        else:
            buffers.append([g])
    return {g.base: members[0].base for members in buffers for g in members[1:]}


@pytest.mark.parametrize("seed", range(20))
def test_packing_matches_the_all_pairs_plan(seed: int) -> None:
    rng = random.Random(seed)
    groups = []
    for i in range(rng.randrange(1, 60)):
        start = rng.randrange(0, 80)
        last = start + rng.choice([0, 0, 1, 2, 3, 5, 8, 20])  # zero-length and touching lifetimes too
        space = rng.choice([MemorySpace.Vec, MemorySpace.Vec, MemorySpace.Mat])
        groups.append(Group(f"b{i}", space, rng.choice([512, 1024, 2048]), start, last))
    groups.sort(key=lambda g: g.start)
    assert plan_reuse(groups) == reference_plan(groups)
