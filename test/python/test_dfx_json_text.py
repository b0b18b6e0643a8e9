"""``pypto.runtime.dfx.base.json_text``: the artefacts' JSON, byte for byte ``json.dumps(indent=1)``
(its own encoder is only faster)."""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

import pytest

from pypto.runtime.dfx.base import json_text


class Kind(IntEnum):
    A = 3


CASES: list[Any] = [
    {},
    [],
    "",
    0,
    -7,
    1.5,
    None,
    True,
    False,
    {"a": [], "b": {}, "c": [[]], "d": [{}], "e": [1, [2, [3, {"x": None}]]]},
    {"tasks": [{"task_id": "4294967296", "kernel_ids": [0, -1, -1], "args": [{"idx": 0, "shape": [64, 128]}]}]},
    [[0, 1, 1, 740, 2015, 740], [24, 2, 2, 3181, 3739, 740]],
    {"clock": 1.85e9, "tiny": 1e-300, "neg": -0.0, "third": 1 / 3, "big": 2**70},
    {"unicode": "caf\u00e9 \u2028 \U0001f600", "quote": 'a"b\\c\n\t', "ctrl": "\x00\x1f"},
    ("tuple", (1, 2), [("nested", 3.25)]),
    {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf")},
    {7: "int key", 2.5: "float key", None: "none key", True: "bool key"},
    {"enum": Kind.A, "enum_list": [Kind.A]},
]


@pytest.mark.parametrize("obj", CASES, ids=range(len(CASES)))
def test_same_text_as_json_dumps(obj: Any) -> None:
    assert json_text(obj) == json.dumps(obj, indent=1)


def test_disallowed_nan_raises_as_json_dumps() -> None:
    for bad in ({"x": [float("nan")]}, [float("inf")], float("-inf")):
        with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
            json_text(bad, allow_nan=False)
    assert json_text({"x": 1.0}, allow_nan=False) == json.dumps({"x": 1.0}, indent=1)


def test_unserializable_value_raises_type_error() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        json_text({"x": object()})
