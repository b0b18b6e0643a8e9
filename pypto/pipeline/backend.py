"""``BackendType``: the code generation target (pl-dsl.md §6)."""

from __future__ import annotations

from enum import StrEnum


class BackendType(StrEnum):
    """The code generation target."""

    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"
