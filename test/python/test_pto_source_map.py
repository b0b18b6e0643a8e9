"""``print_pto_with_source_map``: the op positions of a printed ``.pto`` text, recorded while printing, are the
ones a parse of that text gives (the run path prints a kernel unit once instead of printing and parsing it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, parse_pto_with_source_map, print_pto, print_pto_with_source_map

CORPUS = Path("/work/shared/corpus/pto")
UPSTREAM = Path("/work/shared/reference/upstream-builds")


def _inputs() -> list[Path]:
    files = sorted(CORPUS.glob("*.pto")) + sorted(UPSTREAM.rglob("*.pto"))
    return [p for p in files if p.is_file()]


def _parsed(path: Path) -> object | None:
    try:
        return parse_pto(path.read_text(), path.name)
    except Exception:  # noqa: BLE001 -- the corpus's deliberately bad samples
        return None


def _check(module: object, filename: str) -> int:
    """Print with positions, parse the text; the i-th op of each walk has the same position. Returns the ops."""
    text, printed = print_pto_with_source_map(module, filename)  # type: ignore[arg-type]
    assert text == print_pto(module)  # type: ignore[arg-type]
    reparsed, parsed = parse_pto_with_source_map(text, filename)
    ops, again = list(module.walk()), list(reparsed.walk())  # type: ignore[attr-defined]
    assert [o.name for o in ops] == [o.name for o in again]
    for op, twin in zip(ops, again, strict=True):
        # an elided terminator (an empty ``scf.yield``) is neither printed nor parsed: no position either way
        assert printed.positions.get(op) == parsed.positions.get(twin), (filename, op.name)
        assert printed.locate(op) == parsed.locate(twin)
    assert printed.filename == filename
    return len(ops)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
@pytest.mark.parametrize("synced", [False, True])
def test_printed_positions_are_the_parsed_ones_on_the_corpus(synced: bool) -> None:
    checked = 0
    for path in _inputs():
        module = _parsed(path)
        if module is None:
            continue
        if synced:
            try:
                run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 -- samples the verifier rejects
                continue
        checked += _check(module, str(path))
    assert checked > 1000  # the corpus's files were read, not skipped


def test_positions_move_left_past_a_dropped_unknown_location() -> None:
    """An op whose neighbour on the same line carries no ``loc``: the column counts the text as written."""
    text = (
        "module {\n"
        '  func.func @f(%a: i32 loc("k.py":3:1)) {\n'
        '    %0 = arith.addi %a, %a : i32 loc("k.py":4:5)\n'
        "    %1 = arith.addi %0, %0 : i32\n"
        "    return\n"
        "  }\n"
        "}\n"
    )
    module = parse_pto(text)
    assert _check(module, "k.pto") == 5
