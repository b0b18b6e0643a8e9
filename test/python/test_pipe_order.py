"""pushers_first: the interpretation order of a Group's parts joined by cube<->vector pipes."""

from __future__ import annotations

from pypto.utils.pipe_order import pushers_first

USES = {
    "aic_pushes": ({"c2v"}, set()),
    "aiv_pops": (set(), {"c2v"}),
    "aic_pops": (set(), {"v2c"}),
    "aiv_pushes": ({"v2c"}, set()),
    "both_a": ({"c2v"}, {"v2c"}),
    "both_b": ({"v2c"}, {"c2v"}),
    "plain": (set(), set()),
}


def test_the_popping_part_goes_after_the_pushing_one() -> None:
    assert pushers_first(["aic_pushes", "aiv_pops"], USES.__getitem__) == ["aic_pushes", "aiv_pops"]
    assert pushers_first(["aic_pops", "aiv_pushes"], USES.__getitem__) == ["aiv_pushes", "aic_pops"]


def test_parts_without_pipes_keep_their_order() -> None:
    assert pushers_first(["plain", "aiv_pops", "aic_pushes"], USES.__getitem__) == ["plain", "aic_pushes", "aiv_pops"]


def test_pipes_both_ways_have_no_order() -> None:
    assert pushers_first(["both_a", "both_b"], USES.__getitem__) is None
