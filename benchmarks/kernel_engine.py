"""The compiled-C++ kernel engine against the interpreter, in host time (goal: the C++ engine >= 20x faster).

Two examples, each compiled once into a temporary directory, its tensors in a ``ChipWorker`` (no host
copies per launch), warm-up launches (the interpreter parses the ``.pto``; the C++ engine builds the
``.so`` into ``<work_dir>/cache/kernels/``, takes each kernel's cycles from one interpreter run, kept
for its signature, and records its second launch, which later launches replay in one C++ call:
``pypto.runtime.cpp_plan``; the benchmark asserts its timed launches were replays), then the best of
``--repeat`` rounds, the engines interleaved:

- ``chunked_add`` (``examples/beginner/02_elementwise.py``): the largest example by work size, ``c = a + b``
  in 128-row chunks, its ``ROWS`` set to ``--rows`` (default 8192: three 8192x128 fp32 tensors, 12 MiB).
  Lines: ``run`` (a whole ``ChipWorker.run``; with the C++ engine a replay of the recorded launch, whose
  result is asserted), ``run, In check`` (the same with ``RunConfig(check_inputs=True)``: every launch
  copies and compares the In tensors, as every launch did before ``check_inputs``; no replay) and
  ``kernel`` (the kernel alone: ``run_kernel`` against the library's ``kernel_entry`` on the same
  arrays). Asserts the fp32 result bit-identical between the engines and equal to ``a + b``, and the
  same cycles.
- ``llama_mlp_block`` (``examples/models/08_llama_block.py``): the largest example program (24 tasks of
  6 kernels: RMSNorm, SwiGLU and the residual add on vector cores, three projections on cube cores).
  Lines: ``run`` (with the C++ engine a replay: one C++ call for the 24 kernel launches) and
  ``kernels`` (the time of the 24 kernel runs of each engine within one ``kernel_engine="both"`` launch:
  ``EngineReport.interpreter_seconds`` against ``cpp_seconds``, with ``--clock cpu`` the run thread's CPU
  time ``interpreter_cpu_seconds`` against ``cpp_cpu_seconds``; one ctypes call per kernel run).
  Asserts every vector kernel's outputs bit-identical between the engines, the cube kernels' within the
  case's tolerance (fp32 sums in another order), and the result close to the reference.

Each line prints both times and their ratio against the goal; the last lines recall the previous
session's figures. ``--clock cpu`` times this process's CPU time (steadier on a shared machine).

    .venv/bin/python benchmarks/kernel_engine.py [--rows N] [--repeat N] [--clock cpu]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOAL = 20.0
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
BEFORE = (
    "before (session 14 start, main 886ae69, load 1.8-2.0, cpu clock, best of 20; the cube matmul with separate "
    "multiplies and adds, the touched on-chip prefix refilled with 0xFF before every launch): chunked_add run "
    "5.7-7.6x, In check 1.4-1.6x, kernel 3.2-3.3x; llama_mlp_block run 15.1-15.8x (C++ 0.45-0.46 ms), kernels 5.6x"
)


def _load(rel: str) -> Any:
    sys.path.insert(0, str(EXAMPLES))
    path = EXAMPLES / rel
    spec = importlib.util.spec_from_file_location(f"kernel_engine_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _best(fns: dict[str, Callable[[], Any]], repeat: int, clock: Callable[[], float]) -> dict[str, float]:
    """The best time of each function over ``repeat`` rounds, the functions interleaved in each round
    (a machine whose load changes affects all alike)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            best[name] = min(best[name], clock() - t0)
    return best


def _line(what: str, interp: float, cpp: float, unit: str) -> str:
    ratio = interp / cpp
    return (
        f"  {what:<15} interpreter {interp * 1e3:9.2f} {unit}   cpp {cpp * 1e3:8.2f} {unit}   ratio {ratio:6.1f}x"
        f"   (goal >= {GOAL:g}x: {'met' if ratio >= GOAL else 'NOT met'})"
    )


def bench_chunked_add(rows: int, repeat: int, clock: Callable[[], float], unit: str) -> list[str]:
    """chunked_add at ``rows`` x 128: run, run with the In check, kernel alone."""
    import numpy as np
    import torch

    from pypto.device.interpreter import run_kernel
    from pypto.ir import compile as ir_compile
    from pypto.ptoas.emitc.runner import KernelLibrary
    from pypto.runtime import ChipWorker, RunConfig
    from pypto.runtime.cpp_engine import build_kernel

    example = _load("beginner/02_elementwise.py")
    example.ROWS = rows
    torch.manual_seed(0)
    a, b = torch.randn(rows, 128), torch.randn(rows, 128)
    with tempfile.TemporaryDirectory(prefix="pypto-kernel-engine-") as tmp:
        compiled = ir_compile(
            example.chunked_add.specialize(a, b, torch.zeros_like(a)), output_dir=tmp, dump_passes=False
        )
        worker = ChipWorker()
        da, db = worker.alloc_tensor(a.shape, init=a), worker.alloc_tensor(b.shape, init=b)
        outs = {eng: worker.alloc_tensor(a.shape) for eng in ("interpreter", "cpp")}
        configs = {eng: RunConfig(kernel_engine=eng) for eng in outs}
        checked = {eng: RunConfig(kernel_engine=eng, check_inputs=True) for eng in outs}
        name = worker.register(compiled, "chunked_add")
        results = {eng: worker.run(name, da, db, outs[eng], config=configs[eng]) for eng in outs}  # warm-up
        got = {eng: outs[eng].to_torch() for eng in outs}
        assert torch.equal(got["cpp"], got["interpreter"]), "the fp32 results of the two engines differ"
        assert torch.equal(got["cpp"], a + b), "the result is not a + b"
        assert results["cpp"].total_cycles == results["interpreter"].total_cycles

        def launches(cfgs: dict[str, Any]) -> dict[str, Callable[[], Any]]:
            return {e: (lambda e=e: worker.run(name, da, db, outs[e], config=cfgs[e])) for e in outs}

        worker.run(name, da, db, outs["cpp"], config=configs["cpp"])  # recorded: later launches replay it
        run_s = _best(launches(configs), repeat, clock)
        outs["cpp"].copy_from(torch.zeros_like(a))
        assert worker.run(name, da, db, outs["cpp"], config=configs["cpp"]).kernel_engine.replayed
        assert torch.equal(outs["cpp"].to_torch(), a + b), "a replayed launch did not compute a + b"
        checked_s = _best(launches(checked), repeat, clock)

        unit_ = results["interpreter"].units
        kname = next(iter(unit_))
        lib = KernelLibrary(build_kernel(Path(tmp), kname))
        arrays = [da.array, db.array, outs["cpp"].array]
        target = results["interpreter"].target
        mod = unit_[kname].module
        kernel_s = _best(
            {
                "interpreter": lambda: run_kernel(mod, kname, arrays, target=target),
                "cpp": lambda: lib.kernel_entry(*arrays),
            },
            repeat,
            clock,
        )
        assert np.array_equal(outs["cpp"].array, (a + b).numpy())

    mib = 3 * a.numel() * 4 / 2**20
    return [
        f"chunked_add, {rows}x128 fp32 ({mib:.0f} MiB in+out), 1 task; results bit-identical",
        _line("run", run_s["interpreter"], run_s["cpp"], unit),
        _line("run, In check", checked_s["interpreter"], checked_s["cpp"], unit),
        _line("kernel", kernel_s["interpreter"], kernel_s["cpp"], unit),
    ]


def bench_llama(repeat: int, clock: Callable[[], float], unit: str, cpu: bool) -> list[str]:
    """llama_mlp_block: the whole launch, and the kernels' host time within a ``"both"`` launch."""
    import torch

    from pypto.runtime import ChipWorker, RunConfig
    from pypto.runtime.cpp_engine import kernel_source

    module = _load("models/08_llama_block.py")
    from _harness import compile_case  # the examples' harness (on sys.path since _load)

    (case,) = module.CASES
    args = case.inputs()
    with tempfile.TemporaryDirectory(prefix="pypto-kernel-engine-") as tmp:
        compiled = compile_case(case, Path(tmp) / "build", dump_passes=False)
        work_dir = Path(compiled.output_dir)
        worker = ChipWorker()
        dev = [worker.alloc_tensor(t.shape, init=t) for t in args]
        name = worker.register(compiled, case.name)
        configs = {eng: RunConfig(kernel_engine=eng) for eng in ("interpreter", "cpp")}
        for cfg in (*configs.values(), configs["cpp"]):  # warm-up; the second cpp launch is recorded
            result = worker.run(name, *dev, config=cfg)
        out = dev[case.param_names.index(case.outputs[0])].to_torch()
        want = case.reference(*args[: len(args) - len(case.outputs)])[case.outputs[0]]
        torch.testing.assert_close(out, want, rtol=case.rtol, atol=case.atol)

        run_s = _best({e: (lambda c=c: worker.run(name, *dev, config=c)) for e, c in configs.items()}, repeat, clock)
        assert worker.run(name, *dev, config=configs["cpp"]).kernel_engine.replayed

        both = RunConfig(kernel_engine="both")
        kernels = {"interpreter": float("inf"), "cpp": float("inf")}
        vector = cube = 0
        for _ in range(repeat):
            with contextlib.redirect_stderr(io.StringIO()):  # "both" prints each cube output's last-bit differences
                report = worker.run(name, *dev, config=both).kernel_engine
            assert report is not None
            interp, cpp = (
                (report.interpreter_cpu_seconds, report.cpp_cpu_seconds)
                if cpu
                else (report.interpreter_seconds, report.cpp_seconds)
            )
            kernels["interpreter"] = min(kernels["interpreter"], interp)
            kernels["cpp"] = min(kernels["cpp"], cpp)
            for d in report.diffs:
                if kernel_source(work_dir, d.func_name).parent.name == "aiv":
                    assert not d.differs, f"vector kernel output differs between the engines: {d.message()}"
                    vector += 1
                else:
                    assert d.max_abs <= case.atol, f"cube kernel output beyond the case's tolerance: {d.message()}"
                    cube += 1
    return [
        f"llama_mlp_block, {len(result.tasks)} tasks; {vector // repeat} vector outputs bit-identical, "
        f"{cube // repeat} cube outputs within atol {case.atol:g}",
        _line("run", run_s["interpreter"], run_s["cpp"], unit),
        _line("kernels", kernels["interpreter"], kernels["cpp"], unit),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8192, help="rows of chunked_add's 128-column tensors")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="wall time or this process's CPU time")
    opts = parser.parse_args()
    if opts.rows <= 0 or opts.rows % 128:
        parser.error(f"--rows must be a positive multiple of 128, got {opts.rows}")
    if opts.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {opts.repeat}")
    clock = CLOCKS[opts.clock]
    unit = "ms" if opts.clock == "wall" else "ms CPU"
    lines = bench_chunked_add(opts.rows, opts.repeat, clock, unit) + bench_llama(
        opts.repeat, clock, unit, opts.clock == "cpu"
    )
    print(f"best of {opts.repeat}, {opts.clock} clock")
    print("\n".join(lines))
    print(BEFORE)


if __name__ == "__main__":
    main()
