"""``ptoas/include/pto_cpu.hpp``'s chip constants agree with the a2a3 target description.

The header's CPU model sizes its buffers (``kCapacity``), checks ``TASSIGN`` addresses
(``kAlign``) and counts event ids (``kEventIds``) per ``TileType``; the target
(``pypto/target/targets/a2a3.mlir``) is where those facts live. The parser below reads
the header's constants, and the comparison fails when either side changes alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import pypto.ptoas
from pypto.target import Target, load_target

HEADER = Path(pypto.ptoas.__file__).parent / "include" / "pto_cpu.hpp"


def _array(text: str, name: str) -> list[int]:
    m = re.search(rf"constexpr\s+std::size_t\s+{name}\[kSpaces\]\s*=\s*\{{([^}}]*)\}};", text)
    assert m is not None, f"{name} not found in the header"
    return [int(v) for v in m.group(1).split(",")]


@dataclass(frozen=True)
class HeaderConstants:
    """The chip constants of ``pto_cpu.hpp``, indexed by ``TileType``."""

    tile_types: list[str]
    spaces: int
    capacity: list[int]
    align: list[int]
    event_ids: int


def header_constants(text: str) -> HeaderConstants:
    """Parse the header's TileType names, kSpaces, kCapacity, kAlign and kEventIds."""
    tile_types = re.search(r"enum class TileType\s*\{([^}]*)\};", text)
    spaces = re.search(r"constexpr int kSpaces = (\d+);", text)
    events = re.search(r"constexpr int kEventIds = (\d+);", text)
    assert tile_types and spaces and events, "the header's chip constants are not where the parser looks"
    return HeaderConstants(
        [n.strip() for n in tile_types.group(1).split(",")],
        int(spaces.group(1)),
        _array(text, "kCapacity"),
        _array(text, "kAlign"),
        int(events.group(1)),
    )


def mismatches(text: str, target: Target) -> list[str]:
    """Where the header's constants differ from ``target`` (empty when they agree)."""
    c = header_constants(text)
    out = []
    if c.spaces != len(c.tile_types):
        out.append(f"kSpaces {c.spaces} != {len(c.tile_types)} TileType values")
    for name, cap, align in zip(c.tile_types, c.capacity, c.align, strict=True):
        if not target.has_space(name):
            out.append(f"TileType::{name} is not a memory space of target {target.name}")
            continue
        if cap != target.capacity_of(name):
            out.append(f"kCapacity[{name}] {cap} != {target.capacity_of(name)}")
        if align != target.alignment_of(name):
            out.append(f"kAlign[{name}] {align} != {target.alignment_of(name)}")
    if c.event_ids != target.event_ids_per_pipe_pair:
        out.append(f"kEventIds {c.event_ids} != npu.events per_pipe_pair {target.event_ids_per_pipe_pair}")
    return out


def test_header_constants_match_the_a2a3_target() -> None:
    text = HEADER.read_text()
    assert header_constants(text).tile_types == ["Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scaling"]
    assert mismatches(text, load_target("a2a3")) == []


def test_a_drifted_header_is_reported() -> None:
    text = HEADER.read_text()
    drifted = text.replace("kCapacity[kSpaces] = {196608,", "kCapacity[kSpaces] = {262144,", 1)
    assert drifted != text
    assert mismatches(drifted, load_target("a2a3")) == ["kCapacity[Vec] 262144 != 196608"]
    drifted = text.replace("kAlign[kSpaces] = {32, 32, 512,", "kAlign[kSpaces] = {32, 32, 32,", 1)
    assert mismatches(drifted, load_target("a2a3")) == ["kAlign[Left] 32 != 512"]


def test_a_changed_target_is_reported(tmp_path: Path) -> None:
    mlir = Path(load_target("a2a3").source or "").read_text()
    edited = mlir.replace('npu.buffer "Acc" bytes = 131072 hw = "L0C" align = 512', 'npu.buffer "Acc" bytes = 262144 hw = "L0C"')
    edited = edited.replace("npu.events per_pipe_pair = 8", "npu.events per_pipe_pair = 16")
    assert edited.count("262144") == 1
    path = tmp_path / "chip.mlir"
    path.write_text(edited)
    assert mismatches(HEADER.read_text(), load_target(path)) == [
        "kCapacity[Acc] 131072 != 262144",
        "kAlign[Acc] 512 != 32",
        "kEventIds 8 != npu.events per_pipe_pair 16",
    ]


@pytest.mark.parametrize("space", ["vec", "Vec", "UB"])
def test_target_space_spellings(space: str) -> None:
    t = load_target("a2a3")
    assert t.space_name(space) == "Vec"
    assert t.capacity_of(space) == 196608
    assert t.alignment_of(space) == t.block_bytes == 32
    assert t.alignment_of("acc") == t.alignment_of("L0C") == 512
