"""The build the replay tests work on: ``examples/beginner/02_elementwise.py``'s ``chunked_add`` (c = a + b on
512x128 in four chunks), and what they do to a copy of it (``test_replay``, ``test_hunt_replay``)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from pypto.ir import compile as ir_compile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "beginner" / "02_elementwise.py"
UNIT = "chunked_add_incore_0"


def example_case() -> Any:
    """The example's ``chunked_add`` case (its kernel, inputs and torch reference)."""
    sys.path.insert(0, str(EXAMPLE.parents[1]))
    spec = importlib.util.spec_from_file_location("_replay_example_elementwise", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return next(c for c in module.CASES if c.name == "chunked_add")


def build_example(out: Path, golden: bool = True) -> Path:
    """Compile the case into ``out`` (with its ``golden.py`` unless ``golden`` is False); returns ``out``."""
    case = example_case()
    ir_compile(
        case.kernel.specialize(*case.inputs()), out, dump_passes=False, golden=case.reference if golden else None
    )
    return out


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root``: its bytes and modification time."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()
    }


def edit_pto(build: Path, old: str, new: str) -> Path:
    """Replace ``old`` by ``new`` once in the build's ``ptoas/<unit>.pto``, made newer than its ``.cpp``."""
    pto = build / "ptoas" / f"{UNIT}.pto"
    text = pto.read_text()
    assert old in text
    pto.write_text(text.replace(old, new, 1))
    st = pto.with_suffix(".cpp").stat()
    os.utime(pto, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # newer than its .cpp
    return pto
