"""`make demo`: the hello-world kernel through every tool that exists.

It compiles the kernel with pass dumps, checks every dump's semantics against
torch (``validate_ir``), writes the IR-trace report (and the memory map when
that tool is installed) and prints where every artefact went.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import torch
from hello_world import hello_world

from pypto.ir import PassDumpLevel
from pypto.runtime import RunConfig


def _artefact(label: str, path: Path) -> None:
    print(f"  {label:<16} {path}")


def main() -> int:
    torch.manual_seed(0)
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    out = torch.zeros(128, 128)
    compiled = hello_world.compile(a, b, out, config=RunConfig(dump_passes=PassDumpLevel.CONCISE))
    build = Path(compiled.output_dir)
    dumps = build / "passes_dump"
    print(f"compiled hello_world -> {build}")
    _artefact("pass dumps", dumps)
    print(f"  ({len(list(dumps.glob('*.py')))} snapshots: {min(p.name for p in dumps.glob('*.py'))} .. {max(p.name for p in dumps.glob('*.py'))})")
    _artefact("perf hints", build / "report" / "perf_hints.log")

    print("checking every pass dump against torch (validate_ir):")
    compiled.validate_ir({"a": a, "b": b, "out": out}, {"out": a + b})

    from pypto.tools.ir_trace.cli import main as ir_trace

    report = build / "ir_trace.html"
    with contextlib.redirect_stdout(io.StringIO()):  # the tool prints its output path
        if ir_trace([str(dumps), "-o", str(report)]) != 0:
            return 1
    _artefact("ir trace", report)

    try:
        from pypto.tools.memory_map.cli import main as memory_map
    except ImportError:
        memory_map = None
    if memory_map is not None:
        mm = build / "memory_map.html"
        if memory_map([str(build), "-o", str(mm)]) != 0:
            return 1
        _artefact("memory map", mm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
