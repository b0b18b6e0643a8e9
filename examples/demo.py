"""`make demo`: the hello-world kernel through every tool that exists.

It compiles the kernel with pass dumps, checks every dump's semantics against
torch (``validate_ir``), writes the memory map (when that tool is installed), then runs the compiled program on the simulated a2a3
chip with the run-time DFX flags on (swimlane, PMU, dependency graph, in-core trace), checks its
output against torch, prints the task's timeline and cycle total and writes the
chip swimlane records and the run report (``dfx_outputs/run_report.html``), then the
IR-trace report of the build (its source-line lens shows each line's cycles); last, where every
artefact went (with ``debug/run.py``, which replays the build).
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
    config = RunConfig(dump_passes=PassDumpLevel.CONCISE)
    compiled = hello_world.compile(a, b, out, config=config)
    build = Path(compiled.output_dir)
    dumps = build / "passes_dump"
    print(f"compiled hello_world -> {build}")
    artefacts: list[tuple[str, Path]] = [("pass dumps", dumps)]
    snapshots = sorted(p.name for p in dumps.glob("*.py"))
    print(f"  ({len(snapshots)} pass snapshots: {snapshots[0]} .. {snapshots[-1]})")
    artefacts.append(("perf hints", build / "report" / "perf_hints.log"))
    artefacts += [("ptoas unit", p) for p in sorted((build / "ptoas").glob("*.pto"))]
    artefacts += [("kernel C++", p) for p in sorted((build / "kernels").glob("*/*.cpp"))]

    print("checking every pass dump against torch (validate_ir):")
    log = io.StringIO()
    with contextlib.redirect_stdout(log):  # one block per dump; raises on a mismatch
        compiled.validate_ir({"a": a, "b": b, "out": out}, {"out": a + b})
    checks = [line for line in log.getvalue().splitlines() if line.startswith("validate tensor")]
    failed = [line for line in checks if not line.endswith("pass: True")]
    print(f"  {len(checks) - len(failed)}/{len(checks)} dumps match torch")
    if failed:
        print("\n".join(failed))
        return 1

    try:
        from pypto.tools.memory_map.cli import main as memory_map
    except ImportError:
        memory_map = None
    if memory_map is not None:
        mm = build / "memory_map.html"
        with contextlib.redirect_stdout(io.StringIO()):
            if memory_map([str(build), "-o", str(mm)]) != 0:
                return 1
        artefacts.append(("memory map", mm))

    # ---- run on the simulated chip ----
    print("running on the simulated a2a3 chip (platform a2a3sim):")
    run_config = RunConfig(
        dump_passes=PassDumpLevel.CONCISE,
        enable_chip_swimlane=4,
        enable_pmu=2,
        enable_dep_gen=True,
        enable_incore_trace=True,
    )
    compiled(a, b, out, config=run_config)
    result = compiled.last_run
    want = a + b
    if not torch.allclose(out, want, rtol=1e-5, atol=1e-5):
        print(f"  MISMATCH vs torch: max abs diff {(out - want).abs().max().item():.3e}")
        return 1
    print(f"  out matches torch (a + b), max abs diff {(out - want).abs().max().item():.1e}")
    if result.races:
        print("\n".join(f"  {m}" for m in result.race_messages))
        return 1
    print("  no sync race")
    for line in result.summary().splitlines():
        print(f"  {line}")
    pipes = ", ".join(f"{p} {c}" for p, c in sorted(result.per_pipe_busy().items(), key=lambda kv: -kv[1]))
    print(f"  busy cycles per pipe: {pipes}")
    print(f"cycle total: {result.total_cycles} cycles ({result.time_us:.3f} us)")
    artefacts += [("run .pto", u.path) for u in result.units.values() if u.path is not None]
    artefacts.append(("swimlane", result.write_swimlane(build / "dfx_outputs" / "chip_swimlane_records.json")))
    artefacts += [("run report", p) for p in result.dfx_outputs.get("enable_chip_swimlane", []) if p.suffix == ".html"]
    artefacts += [
        ("in-core trace", p) for p in result.dfx_outputs.get("enable_incore_trace", []) if p.name == "trace.clean.json"
    ]

    # the IR-trace report on the build directory: after the run, so its source-line lens has the cycles
    from pypto.tools.ir_trace.cli import main as ir_trace

    report = build / "ir_trace.html"
    with contextlib.redirect_stdout(io.StringIO()):  # the tool prints its output path
        if ir_trace([str(build), "-o", str(report)]) != 0:
            return 1
    artefacts.append(("ir trace + lens", report))
    if (build / "debug" / "run.py").is_file():
        artefacts.append(("replay script", build / "debug" / "run.py"))

    print("artefacts:")
    for label, path in artefacts:
        _artefact(label, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
