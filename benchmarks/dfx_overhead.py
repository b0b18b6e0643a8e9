"""DFX collection overhead: an example's runs on the simulated chip with every run-time DFX flag at its
highest level vs every flag off, in host time.

The default is the models example ``examples/models/01_ffn.py`` (two FFN blocks tiled over rows: 12 and
16 tasks of cube and vector kernels). ``--example`` picks another (every case of its ``CASES`` runs).
Each case is compiled once; a timed run is ``CompiledProgram(*args, config=...)`` with
``enable_chip_swimlane=4, enable_dump_args=2, enable_pmu=2, enable_dep_gen=True, enable_scope_stats=True``
(which forces ``save_kernels``) or with them all off. Prints the best of ``--repeat`` interleaved runs
of each, their ratio (goal <= 1.5x) and the simulated cycles of both, which must be equal (collection
costs nothing on the simulator: asserted). ``--profile`` prints where the flagged run's time goes.

The timed runs repeat one run, so from the second on a program's artefacts are the texts and files of the run
before (``dfx.base.across_runs``, ``utils.atomic.KeptFiles``: the simulated timing does not depend on the
data), but ``args.bin``'s bytes still captured and compared. It also prints a **first run**: each flagged run
after ``forget_earlier_runs()``, as a program's first run (every artefact built and written).

A run is short (about 0.6 ms of host time a task), so the ratio is the per-run cost of the nine files a
flagged run writes (collecting, formatting, writing), and it grows with the machine's load: run it on an
idle machine. ``--no-files`` replaces most collectors' file writes with nothing, which leaves the cost of
collecting and formatting (a diagnostic: those artefacts are not written). Figures before and after:
docs/runtime.md, "What DFX collection costs on the host".

``--clock cpu`` times this process's CPU time instead of wall time (the machine's other load then
counts much less). ``--clock instructions`` counts the user-space instructions of ``--repeat`` runs of each
under valgrind's callgrind instead (a child process per configuration, counting only the timed runs): the
same count on a loaded machine, so it resolves changes of 1% that the clocks cannot; it leaves out the
kernel's time (the file system calls) and the caches.

``--whole-process`` times the example as a user runs it instead: ``python examples/models/01_ffn.py`` in a
fresh process (import, compile with pass dumps, the torch reference, the run on the simulated chip, the
check), with every flag at its highest level (the suite defaults, as the pytest flags set them) vs none,
in the child's CPU time (``--clock cpu``) or wall time.

    .venv/bin/python benchmarks/dfx_overhead.py [--repeat N] [--example PATH] [--profile] [--no-files] [--clock cpu]
    .venv/bin/python benchmarks/dfx_overhead.py --clock instructions [--repeat N] [--example PATH]
    .venv/bin/python benchmarks/dfx_overhead.py --whole-process [--repeat N] [--example PATH] [--clock cpu]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_EXAMPLE = ROOT / "examples" / "models" / "01_ffn.py"
ALL_ON = {"enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_pmu": 2, "enable_dep_gen": True,
          "enable_scope_stats": True}  # fmt: skip
ALL_OFF = dict.fromkeys(ALL_ON, 0)
BEFORE = (
    "before (session 18 start, main cf96852, load 1.6-2, cpu clock, best of 15, eight rounds): 01_ffn 1.69-1.93x "
    "(on 16.0-20.6 ms, off 9.4-11.3 ms); instructions (--clock instructions --repeat 5): 1.556x (on 104.02 M, "
    "off 66.86 M). Session 21 start (7d556c5, every run built and wrote every artefact): cpu 1.90-2.02x, "
    "instructions 1.581x (99.75 / 63.10 M); goal 1.5x"
)


def load_cases(path: Path) -> list[Any]:
    """The ``CASES`` of an example file."""
    sys.path.insert(0, str(path.parent.parent))  # the examples' _harness
    spec = importlib.util.spec_from_file_location(f"dfx_bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.CASES)


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
"""``--clock``: wall time, or this process's CPU time (user + system: its own file writes count, other
processes' load on a shared machine much less)."""


def best_of(fns: list[Callable[[], Any]], repeat: int, clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Fastest of ``repeat`` runs of each function, in seconds of ``clock`` (runs interleaved, so machine
    noise hits all of them alike)."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = clock()
            fn()
            best[i] = min(best[i], clock() - t0)
    return best


def main() -> None:
    """Time both configurations and print the ratio."""
    from pypto.runtime import config as run_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--example", type=Path, default=DEFAULT_EXAMPLE)
    parser.add_argument("--profile", action="store_true", help="cProfile one flagged run (its top 30 functions)")
    parser.add_argument("--sort", default="tottime", help="the profile's order (a pstats key: tottime, cumtime ...)")
    parser.add_argument("--no-files", action="store_true", help="collect and format, but write no file")
    parser.add_argument("--clock", choices=[*sorted(CLOCKS), "instructions"], default="wall",
                        help="wall time (default), this process's CPU time (steadier on a loaded machine) or "
                             "the instructions callgrind counts (the same at any load)")  # fmt: skip
    parser.add_argument("--count-child", choices=("on", "first", "off"), help=argparse.SUPPRESS)  # a callgrind child
    parser.add_argument("--whole-process", action="store_true",
                        help="time `python <example>` in a fresh process, flags on vs off")  # fmt: skip
    opts = parser.parse_args()
    if opts.whole_process:
        whole_process(opts)
        return
    if opts.clock == "instructions" and not opts.count_child:
        instructions(opts)
        return
    if opts.no_files:
        from pypto.runtime.dfx import args_dump, deps, pmu, swimlane

        for module in (args_dump, deps, pmu, swimlane):
            module.write_artefact = lambda path, data: path  # type: ignore[attr-defined]
    run_config.set_dfx_defaults()  # no suite defaults: the configs below say everything
    cases = load_cases(opts.example.resolve())
    with tempfile.TemporaryDirectory(prefix="dfx_overhead_") as tmp_name:
        measure(opts, cases, Path(tmp_name))


def measure(opts: argparse.Namespace, cases: list[Any], tmp: Path) -> None:
    """Compile every case into ``tmp``, time both configurations and print the ratio."""
    from pypto.runtime import RunConfig

    runs: list[tuple[Any, tuple[Any, ...]]] = []
    for case in cases:
        args = case.inputs()
        compiled = case.kernel.specialize(*args)
        from pypto.ir import compile as ir_compile

        runs.append((ir_compile(compiled, output_dir=str(tmp / case.name)), args))

    from pypto.runtime.dfx.base import forget_earlier_runs

    def run_all(flags: dict[str, Any], first: bool = False) -> list[int]:
        cycles = []
        if first:  # as each program's first run: nothing an earlier run built or wrote is reused
            forget_earlier_runs()
        for prog, args in runs:
            prog(*args, config=RunConfig(**flags))
            cycles.append(prog.last_run.total_cycles)
        return cycles

    on_cycles, off_cycles = run_all(ALL_ON), run_all(ALL_OFF)  # warm-up: parse every kernel unit once
    assert on_cycles == off_cycles, f"collection changed the simulated cycles: {on_cycles} vs {off_cycles}"
    if opts.count_child:  # count the instructions of --repeat runs of one configuration (see instructions())
        flags = ALL_OFF if opts.count_child == "off" else ALL_ON
        first = opts.count_child == "first"
        run_all(flags, first)
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True)
        for _ in range(opts.repeat):
            run_all(flags, first)
        subprocess.run(["callgrind_control", "--instr=off", str(os.getpid())], check=True, capture_output=True)
        return
    tasks = sum(len(p.last_run.tasks) for p, _ in runs)
    if opts.profile:
        prof = cProfile.Profile()
        prof.runcall(run_all, ALL_ON)
        pstats.Stats(prof).sort_stats(opts.sort).print_stats(30)
    t_on, t_first, t_off = best_of([lambda: run_all(ALL_ON), lambda: run_all(ALL_ON, first=True),
                                    lambda: run_all(ALL_OFF)], opts.repeat, CLOCKS[opts.clock])  # fmt: skip
    ratio = t_on / t_off
    rel = opts.example.resolve().relative_to(ROOT) if opts.example.resolve().is_relative_to(ROOT) else opts.example
    print(f"example: {rel} ({len(cases)} case(s), {tasks} task(s) a run)")
    unit = "ms" if opts.clock == "wall" else "ms CPU"
    print(f"every flag at its highest level: {t_on * 1e3:.1f} {unit}  simulated cycles {on_cycles}")
    print(f"every flag off:                  {t_off * 1e3:.1f} {unit}  simulated cycles {off_cycles}")
    files = " (no files written: --no-files)" if opts.no_files else ""
    print(f"ratio: {ratio:.2f}x (goal <= 1.5x) {'OK' if ratio <= 1.5 else 'OVER'}{files}")
    print(f"a first run (nothing an earlier run built or wrote reused): {t_first * 1e3:.1f} {unit}, "
          f"{t_first / t_off:.2f}x")  # fmt: skip
    print(BEFORE)


def instructions(opts: argparse.Namespace) -> None:
    """``--clock instructions``: each configuration's ``--repeat`` runs in a child process under callgrind,
    instrumented only while they run; prints the instructions a run and their ratio."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("--clock instructions needs valgrind (callgrind and callgrind_control)")
    counts = {}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYPTO_PROGRESS": "0"}  # no thread spinning between kernels
    for name in ("on", "first", "off"):
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null", sys.executable,
               __file__, "--clock", "instructions", "--count-child", name, "--repeat", str(opts.repeat),
               "--example", str(opts.example)]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode or found is None:
            sys.exit(f"the callgrind child failed:\n{done.stderr[-2000:]}")
        counts[name] = int(found.group(1)) / opts.repeat
    rel = opts.example.resolve().relative_to(ROOT) if opts.example.resolve().is_relative_to(ROOT) else opts.example
    print(f"example: {rel}, instructions a run (callgrind, user space, mean of {opts.repeat})")
    print(f"every flag at its highest level: {counts['on'] / 1e6:.2f} M")
    print(f"every flag off:                  {counts['off'] / 1e6:.2f} M")
    extra = (counts["on"] - counts["off"]) / 1e6
    print(f"ratio: {counts['on'] / counts['off']:.3f}x (the collection's instructions {extra:.2f} M)")
    print(f"a first run (nothing an earlier run built or wrote reused): {counts['first'] / 1e6:.2f} M, "
          f"{counts['first'] / counts['off']:.3f}x")  # fmt: skip


CHILD = """
import runpy, sys
from pypto.runtime import config
config.set_dfx_defaults(**{flags})
sys.argv = [{path!r}]
runpy.run_path({path!r}, run_name="__main__")
"""
"""A whole-process run: the example as a script, the DFX flags as the suite defaults its RunConfigs take."""


def _child_seconds(code: str, cwd: Path, clock: str) -> float:
    """One fresh ``python -c code`` run: its CPU time (user + system, ``clock == "cpu"``) or wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={**os.environ, "PYPTO_PROGRESS": "0"})  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu if clock == "cpu" else wall


def whole_process(opts: argparse.Namespace) -> None:
    """Time the example script in fresh processes, every flag on vs off (interleaved, best of
    ``--repeat``), each in its own copy of the example's folder tree so the build folders are fresh."""
    path = opts.example.resolve()
    best = {"on": float("inf"), "off": float("inf")}
    with tempfile.TemporaryDirectory(prefix="dfx_overhead_") as tmp_name:
        for _ in range(opts.repeat):
            for name, flags in (("on", ALL_ON), ("off", ALL_OFF)):
                cwd = Path(tmp_name) / name
                cwd.mkdir(exist_ok=True)
                code = CHILD.format(flags=flags, path=str(path))
                best[name] = min(best[name], _child_seconds(code, cwd, opts.clock))
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    unit = "s" if opts.clock == "wall" else "s CPU"
    print(f"example: {rel}, whole process (import, compile with dumps, reference, run, check)")
    print(f"every flag at its highest level: {best['on']:.2f} {unit}")
    print(f"every flag off:                  {best['off']:.2f} {unit}")
    ratio = best["on"] / best["off"]
    print(f"ratio: {ratio:.2f}x (goal <= 1.5x) {'OK' if ratio <= 1.5 else 'OVER'}")


if __name__ == "__main__":
    main()
