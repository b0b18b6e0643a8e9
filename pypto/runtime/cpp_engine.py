"""The compiled-C++ kernel engine: ``RunConfig(kernel_engine="cpp" | "both")``.

::

    result = pypto.runtime.run(compiled, a, b, out, config=RunConfig(kernel_engine="both"))
    result.kernel_engine.diffs        # per task output: max abs / rel difference cpp vs interpreter
    result.kernel_engine.notes        # e.g. "kernels/aiv/f.cpp no longer matches ptoas/f.pto ..."

Each kernel's ``<work_dir>/kernels/{aic,aiv}/<func>.cpp`` (what compile wrote, edits and all) is
built by g++ against ``pto_cpu.hpp`` (:func:`pypto.ptoas.build.build_library`) into
``<work_dir>/cache/kernels/<func>-<key>.so``; the key covers the ``.cpp``, the header, the flags
and the compiler, so an edited ``.cpp`` is rebuilt (older builds of that kernel are removed) unless
``recompile_kernels=False``, which takes the cached library as it is. The library is called
through ctypes on the task's own buffers (their data addresses; no copy): one call per launch,
``pto_cpu_call`` (block, ``kernel_entry``, error status).

Who computes what:

- ``"cpp"``: the numbers come from the compiled kernel. Cycles, records, races and every DFX
  artefact still come from the interpreter, which runs the ``.pto`` on scratch copies of the
  buffers the kernel writes. Its result is kept per (kernel, argument shapes/dtypes, scalar
  values): the device model's timing does not depend on tensor values, so a later task or launch
  with the same signature reuses it and costs only the C++ call. The C++ engine is therefore fast
  from the second call of a kernel signature on (``benchmarks/kernel_engine.py``); the first pays
  one interpreter run for its cycles. A repeated run on the same device tensors replays its recorded
  launches in one C++ call, without the orchestration walk and the scheduler (:mod:`.cpp_plan`).
- ``"both"``: the interpreter runs on the task's buffers (its numbers are the run's result, so
  every task's two runs see the same inputs), the compiled kernel on copies of the buffers it
  writes; :attr:`EngineReport.diffs` has one :class:`OutputDiff` per written argument.

The run's byte-for-byte check that no task wrote an In argument (an O(input) copy and compare, which
costs more than a memory-bound compiled kernel) runs with ``"cpp"`` on the first run of each kernel
signature, until one passes (:meth:`EngineRun.wants_input_check`; ``RunConfig.check_inputs=True``:
every run). Which arguments a kernel writes is a property of its code, as its cycles are.

A kernel runs as the SPMD block the runtime names, ``block=(index, count)``
(``get_block_idx()``/``get_block_num()`` in the C++); a plain task is block 0 of 1.

A ``.cpp`` whose ptoas part differs from what the ``.pto`` now emits (edited by hand) gets a note:
the cycles come from the ``.pto``, which no longer matches the ``.cpp``. A ``.cpp`` g++ rejects
raises :class:`KernelBuildError` naming the file and line (g++'s message); nothing is left in the
cache for it. No g++ on the machine is a :class:`KernelBuildError` too.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import sys
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.dialects.enums import ParamDirection
from pypto.errors import Error

CACHE_DIR = Path("cache") / "kernels"
"""The binary cache, relative to the build directory (``invalidate_binary_cache`` deletes it)."""

ENGINE_FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off")
"""g++ flags added to ``pypto.ptoas.build.BASE_FLAGS`` (no ``-ffast-math``; ``-ffp-contract=off``: no
multiply-add fused into one rounding, which g++ does by default where the ISA has FMA, e.g. aarch64:
fp32 results stay those of the interpreter; ``-march=native``: the host's vector width, so a build's
cache key also covers the host CPU, :func:`host_cpu`)."""


@functools.cache
def host_cpu() -> str:
    """What ``-march=native`` compiles for: the CPU's model name and feature flags (``/proc/cpuinfo``; else
    the platform's machine and processor). Part of a kernel library's cache key, so a build directory
    moved to another machine builds its kernels again instead of running instructions the CPU lacks."""
    import platform

    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    wanted = ("model name", "flags", "features", "cpu model", "isa")
    lines = sorted(
        {ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.split(":", 1)[0].strip().lower() in wanted}
    )
    return "\n".join(lines) or f"{platform.machine()} {platform.processor()}"


class KernelBuildError(Error):
    """A kernel's C++ could not be built (g++ rejected it, or there is no g++)."""


class KernelEngineError(Error):
    """The C++ engine cannot run a kernel (no build directory, no ``.cpp``, arguments that do not fit)."""


@dataclass(frozen=True)
class OutputDiff:
    """One written argument of one task, compiled kernel against interpreter."""

    task: str
    func_name: str
    arg_index: int
    name: str
    max_abs: float
    max_rel: float
    mismatched: int
    numel: int

    @property
    def differs(self) -> bool:
        """Whether any element differs (NaN equals NaN)."""
        return self.mismatched > 0

    def message(self) -> str:
        """``t0 add_incore_0 arg #2 'c': 3/16384 differ, max abs 1e-07, max rel 2e-08``."""
        what = f"{self.mismatched}/{self.numel} differ" if self.differs else "identical"
        return (
            f"{self.task} {self.func_name} arg #{self.arg_index} '{self.name}': {what}, "
            f"max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}"
        )


@dataclass
class EngineReport:
    """What the C++ engine did in one run (``RunResult.kernel_engine``)."""

    engine: str
    libraries: dict[str, Path] = field(default_factory=dict)
    """Kernel name -> the shared library that ran."""
    diffs: list[OutputDiff] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    interpreter_runs: int = 0
    """Kernel runs the interpreter made (timing; with ``"cpp"`` only the first of each signature)."""
    cpp_calls: int = 0
    input_checks: int = 0
    """Kernel runs whose In arguments were compared before and after (``RunConfig.check_inputs``)."""
    interpreter_seconds: float = 0.0
    """Host time in the interpreter's kernel runs."""
    cpp_seconds: float = 0.0
    """Host time in the compiled kernels' calls."""
    interpreter_cpu_seconds: float = 0.0
    """The run thread's CPU time in the interpreter's kernel runs (other processes' load counts less)."""
    cpp_cpu_seconds: float = 0.0
    """The run thread's CPU time in the compiled kernels' calls."""
    replayed: bool = False
    """The run replayed a recorded plan in one C++ call (:mod:`.cpp_plan`): no orchestration walk, no scheduler."""

    @property
    def differing(self) -> list[OutputDiff]:
        """The outputs where the engines disagree."""
        return [d for d in self.diffs if d.differs]

    def summary(self) -> str:
        """A few lines: engine, notes, and each output that differs (or that all agree)."""
        lines = [
            f"kernel engine {self.engine}: {self.cpp_calls} C++ call(s) in {self.cpp_seconds * 1e3:.2f} ms"
            f"{' (a recorded run replayed in one call)' if self.replayed else ''}, "
            f"{self.interpreter_runs} interpreter run(s) in {self.interpreter_seconds * 1e3:.2f} ms, "
            f"{self.input_checks} In-argument check(s)"
        ]
        lines += [f"note: {n}" for n in self.notes]
        if self.engine == "both":
            bad = self.differing
            lines += [d.message() for d in bad] or [f"all {len(self.diffs)} outputs identical"]
        return "\n".join(lines)


# ---- building ------------------------------------------------------------------------------------


def kernel_source(work_dir: Path, func_name: str) -> Path:
    """``<work_dir>/kernels/{aic,aiv}/<func_name>.cpp``; KernelEngineError when there is none."""
    for core in ("aiv", "aic"):
        path = work_dir / "kernels" / core / f"{func_name}.cpp"
        if path.is_file():
            return path
    raise KernelEngineError(
        f"kernel_engine: no C++ for kernel '{func_name}': expected {work_dir}/kernels/aiv/{func_name}.cpp "
        "or kernels/aic/ (compile writes them; was the build made with skip_ptoas?)"
    )


def _build_error(src: Path, e: Exception) -> KernelBuildError:
    stderr = getattr(e, "stderr", "") or ""
    if not stderr:  # no compiler at all
        return KernelBuildError(f"kernel_engine='cpp' cannot build {src}: {e} (install g++ or set PTOAS_CXX)")
    first = next((ln for ln in stderr.splitlines() if ": error:" in ln), stderr.strip().splitlines()[0])
    return KernelBuildError(f"{first}\ng++ could not build the kernel {src}:\n{stderr.rstrip()}")


def _remove(paths: Sequence[Path]) -> None:
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def source_key(src: Path) -> str:
    """The cache key of a kernel ``.cpp`` as it is now (its library is ``<func>-<key>.so``)."""
    from pypto.ptoas.build import cache_key

    return cache_key(src.read_text(encoding="utf-8"), (*ENGINE_FLAGS, host_cpu()))


def build_kernel(work_dir: Path, func_name: str, recompile: bool = True) -> Path:
    """The shared library of kernel ``func_name`` in ``<work_dir>/cache/kernels/`` (built when needed).

    ``recompile=False`` takes an existing build of the kernel whatever its key (the newest); a
    build is made only when there is none."""
    from pypto.ptoas.build import BuildError, build_library

    src = kernel_source(work_dir, func_name)
    cache = work_dir / CACHE_DIR
    builds = sorted(cache.glob(f"{func_name}-*.so"), key=lambda p: p.stat().st_mtime)
    if not recompile and builds:
        return builds[-1]
    lib = cache / f"{func_name}-{source_key(src)}.so"
    if lib.is_file():
        return lib
    try:
        build_library(src, lib, ENGINE_FLAGS)
    except BuildError as e:
        _remove(builds)  # no binary of this kernel stays behind to be mistaken for the edited source
        raise _build_error(src, e) from None
    _remove([b for b in builds if b != lib])
    return lib


@functools.cache
def _header() -> Path:
    from pypto.ptoas.build import HEADER
    from pypto.ptoas.emitc import include_dir

    return include_dir() / HEADER


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


# ---- calling -------------------------------------------------------------------------------------

_SCALAR_WRAPPERS = {"half": "F16", "double": "F64"}


def _scalar_slots(src: Path, func_name: str) -> list[str]:
    """The C++ type of each parameter of the kernel's ptoas function, read from the ``.cpp``."""
    from pypto.ptoas.emitc.errors import EmitError
    from pypto.ptoas.emitc.kernel import entry_params

    try:
        _, params = entry_params(src.read_text(encoding="utf-8"), func_name)
    except EmitError as e:
        raise KernelEngineError(f"{src}: {e}") from None
    return [ctype for ctype, _ in params]


def _address(v: Any) -> int:
    """An array argument's int64 slot: its data address (no copy)."""
    if not v.flags.c_contiguous:
        raise KernelEngineError("kernel array arguments must be C-contiguous")
    return int(v.__array_interface__["data"][0])


def _scalar_slot(ctype: str) -> Callable[[Any], int]:
    """The int64 slot of a scalar of C++ type ``ctype``: an integer as itself, a float as the bits the
    C++ type wants (fp32 for ``float``, half / double through ``runner.F16`` / ``runner.F64``)."""
    from pypto.ptoas.emitc import runner

    wrapper = _SCALAR_WRAPPERS.get(ctype)

    def slot(v: Any) -> int:
        if isinstance(v, np.ndarray):
            return _address(v)
        if wrapper is None and ctype != "float" and isinstance(v, int):
            return int(v)
        if wrapper is not None:
            v = getattr(runner, wrapper)(float(v))
        elif ctype == "float":
            v = float(v)
        return int(runner.pack_args(v)[0])

    return slot


def _slot_of(ctype: str) -> Callable[[Any], int]:
    """How one parameter of C++ type ``ctype`` becomes its int64 slot (chosen once per kernel)."""
    if ctype.rstrip().endswith("*"):
        return lambda v: _address(v) if isinstance(v, np.ndarray) else int(v)
    return _scalar_slot(ctype)


@dataclass
class _Kernel:
    """A loaded kernel library and its parameters' C++ types."""

    library: Any
    ctypes_: list[str]
    source: Path
    _entry: Any = None

    def __post_init__(self) -> None:
        lib = self.library.lib
        self._entry = lib.kernel_entry  # looked up and typed once, not per call
        self._entry.restype = None
        self._entry_address = ctypes.c_void_p(ctypes.cast(self._entry, ctypes.c_void_p).value)
        try:  # one host call per launch (block, entry, status); a build of an older header has none
            self._launch: Any = lib.pto_cpu_call
        except AttributeError:
            self._launch = None
        else:
            self._launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
            self._launch.restype = ctypes.c_int
        self._slots = ctypes.c_int64 * max(1, len(self.ctypes_))
        self._converters = [_slot_of(c) for c in self.ctypes_]

    @property
    def entry_address(self) -> int:
        """The address of the library's ``kernel_entry`` (for ``pto_cpu_run_calls``)."""
        return int(self._entry_address.value or 0)

    def slots(self, func_name: str, values: Sequence[Any]) -> list[int]:
        """The int64 argument slots of ``values`` (arrays by address)."""
        if len(values) != len(self.ctypes_):
            raise KernelEngineError(
                f"{self.source}: @{func_name} takes {len(self.ctypes_)} parameters in the C++, "
                f"the task passes {len(values)}"
            )
        try:
            return [f(v) for f, v in zip(self._converters, values, strict=True)]
        except KernelEngineError as e:
            raise KernelEngineError(f"{self.source}: {e}") from None

    def call(self, func_name: str, values: Sequence[Any], block: tuple[int, int] = (0, 1)) -> list[int]:
        """Run the kernel on ``values`` (arrays by address) as block ``block`` = (index, count): one
        ctypes call (``pto_cpu_call``: block, ``kernel_entry``, status) on an int64 slot array.
        Returns the slots it passed."""
        slots = self.slots(func_name, values)
        array = self._slots(*slots)
        if self._launch is not None:
            if not self._launch(self._entry_address, array, block[0], block[1]):
                return slots
        else:
            self.library.set_block(block[0], block[1])
            self._entry(array)
        self.raise_error()
        return slots

    def raise_error(self) -> None:
        """KernelEngineError with the library's message of the last failed launch (if any)."""
        message = self.library.last_error()
        if message:
            from pypto.ptoas.emitc import runner

            e = runner.KernelRuntimeError(message)
            raise KernelEngineError(f"{self.source}: the compiled kernel stopped: {e}") from None


_NOCODE = re.compile(r"^\s*(//.*)?$")


def _code_lines(text: str) -> list[str]:
    """The lines of C++ that are code (comment-only and blank lines dropped, trailing space stripped)."""
    return [ln.rstrip() for ln in text.splitlines() if not _NOCODE.match(ln)]


def cpp_matches_pto(src: Path, unit_module: Any) -> bool:
    """Whether the ptoas part of a kernel ``.cpp`` is what the ``.pto`` unit emits now (comments aside)."""
    from pypto.ptoas.emitc import CODE_MARKER, ENTRY_MARKER, emit_cpp

    text = src.read_text(encoding="utf-8")
    if CODE_MARKER not in text or ENTRY_MARKER not in text:
        return False
    body = text.split(CODE_MARKER, 1)[1].split(ENTRY_MARKER, 1)[0]
    try:
        return _code_lines(body) == _code_lines(emit_cpp(unit_module))
    except Exception:  # noqa: BLE001 - a unit ptoas cannot emit does not match any .cpp
        return False


# ---- comparing -----------------------------------------------------------------------------------


def _as_float(a: np.ndarray, dsl_dtype: str | None) -> np.ndarray:
    flat = a.reshape(-1)
    if (dsl_dtype or "").upper() == "BF16" and flat.dtype == np.uint16:
        return (flat.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return flat.astype(np.float64)


def compare(reference: np.ndarray, other: np.ndarray, dsl_dtype: str | None = None) -> tuple[float, float, int]:
    """(max abs diff, max rel diff, elements that differ) of two arrays; NaN equals NaN."""
    x, y = _as_float(reference, dsl_dtype), _as_float(other, dsl_dtype)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    with np.errstate(all="ignore"):
        same = (x == y) | (nan_x & nan_y)
        diff = np.where(same, 0.0, np.abs(x - y))
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN against a number
        rel = np.where(same, 0.0, diff / np.maximum(np.abs(x), np.finfo(np.float64).tiny))
    mismatched = int(np.count_nonzero(~same))
    if not mismatched:
        return 0.0, 0.0, 0
    return float(diff.max()), float(rel.max()), mismatched


# ---- the engine ----------------------------------------------------------------------------------


@dataclass
class RecordedCall:
    """One launch of a compiled kernel in a ``"cpp"`` run: what :mod:`.cpp_plan` needs to repeat it."""

    kernel: _Kernel
    slots: list[int]
    block: tuple[int, int]
    label: str
    """``task t3 (@gate_proj)``: names the launch in an error."""
    values: list[Any]
    """The arguments (arrays and scalars) it ran on."""


Interpret = Callable[[list[Any]], Any]
"""Runs the task's kernel through the interpreter on the given argument values; returns its KernelRun."""


class KernelEngine:
    """The C++ engine for one prepared program (libraries, timing kept per kernel signature)."""

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir
        self.kernels: dict[tuple[str, bool], _Kernel] = {}
        self.timings: dict[tuple[Any, ...], Any] = {}
        self.built: dict[tuple[Any, ...], Path] = {}
        self.checked: dict[tuple[str, int, int], bool] = {}
        self.inputs_verified: set[tuple[Any, ...]] = set()
        """Kernel signatures whose In arguments a run has checked unchanged (``RunConfig.check_inputs``)."""
        self.plans: dict[tuple[Any, ...], Any] = {}
        """Recorded ``"cpp"`` runs by :func:`.cpp_plan.plan_key` (:class:`.cpp_plan.RunPlan`)."""
        self.plan_blockers: dict[int, bool] = {}
        """Per program module (by id): whether its host code reads tensor elements (no plans then)."""
        self.out_dir: Any = None
        """The prepared program's ``out_dir`` object of the last run (a replay checks it is the same)."""

    def kernel(self, func_name: str, recompile: bool) -> _Kernel:
        """The loaded library of ``func_name`` (built on first use in this run)."""
        from pypto.ptoas.emitc.runner import KernelLibrary

        key = (func_name, recompile)
        src = kernel_source(self.work_dir, func_name)
        stamp = (str(src), recompile, *_stamp(src), *_stamp(_header()))
        lib_path = self.built.get(stamp)
        if lib_path is None or not lib_path.is_file():  # hash the .cpp only when it (or the header) changed
            lib_path = self.built[stamp] = build_kernel(self.work_dir, func_name, recompile)
        k = self.kernels.get(key)
        if k is None or k.library.path != lib_path:
            k = self.kernels[key] = _Kernel(KernelLibrary(lib_path), _scalar_slots(src, func_name), src)
        return k

    def reset_pipes(self) -> None:
        """Empty the C++ cube<->vector FIFOs (shared by every kernel library of the process)."""
        for k in self.kernels.values():
            k.library.lib.pto_cpu_reset_pipes()
            return


_ENGINES: dict[int, KernelEngine] = {}
"""The engine of each live prepared program, by ``id`` (dropped when the program is)."""


class EngineRun:
    """The engine's part of one :func:`pypto.runtime.run`: call :meth:`run_part` for every kernel part."""

    def __init__(
        self,
        mode: str,
        engine: KernelEngine,
        recompile: bool,
        units: Callable[[str], Any],
        check_inputs: bool | None = None,
    ) -> None:
        self.mode = mode
        self.check_inputs = check_inputs
        self.engine = engine
        self.recompile = recompile
        self.units = units
        self.report = EngineReport(mode)
        self._kernels: dict[str, _Kernel] = {}
        self._signatures: dict[tuple[int, tuple[int, int]], tuple[Any, ...]] = {}
        """Each kernel part's signature in this run, by (id of the part, block): computed once."""
        self.calls: list[RecordedCall] = []
        """The compiled kernels' launches of a ``"cpp"`` run, in order (:mod:`.cpp_plan` replays them)."""

    def _kernel(self, func_name: str) -> _Kernel:
        k = self._kernels.get(func_name)
        if k is not None:
            return k
        k = self._kernels[func_name] = self.engine.kernel(func_name, self.recompile)
        if len(self._kernels) == 1:
            self.engine.reset_pipes()
        self.report.libraries[func_name] = k.library.path
        check = (func_name, id(self.units(func_name).module), k.source.stat().st_mtime_ns)
        if check not in self.engine.checked:
            self.engine.checked[check] = cpp_matches_pto(k.source, self.units(func_name).module)
        rel = k.source.relative_to(self.engine.work_dir)
        if not self.engine.checked[check]:
            self._note(
                f"{rel} does not match ptoas/{func_name}.pto (edited by hand?): the numbers come from the .cpp; "
                "cycles and DFX come from the .pto, which no longer matches the .cpp"
            )
        if not self.recompile and not k.library.path.name.endswith(f"-{source_key(k.source)}.so"):
            self._note(
                f"recompile_kernels=False: {func_name} runs the cached build {k.library.path.name}, "
                f"not the current {rel}"
            )
        return k

    def _note(self, note: str) -> None:
        if note not in self.report.notes:
            self.report.notes.append(note)
            print(f"[kernel_engine] {note}", file=sys.stderr)

    @staticmethod
    def _signature(func_name: str, unit: Any, values: Sequence[Any], block: tuple[int, int]) -> tuple[Any, ...]:
        sig: list[Any] = [func_name, id(unit.module), block]
        for v in values:
            sig.append(("t", v.shape, v.dtype.str) if isinstance(v, np.ndarray) else ("s", type(v).__name__, v))
        return tuple(sig)

    def _part_signature(
        self, part: Any, block: tuple[int, int], values: Sequence[Any] | None = None
    ) -> tuple[Any, ...]:
        key = (id(part), block)
        sig = self._signatures.get(key)
        if sig is None:
            values = [a.value() for a in part.args] if values is None else values
            sig = self._signatures[key] = self._signature(part.func_name, self.units(part.func_name), values, block)
        return sig

    def wants_input_check(self, part: Any, block: tuple[int, int] = (0, 1)) -> bool:
        """Whether the run compares this part's In arguments before and after it (``RunConfig.check_inputs``:
        by default ``"both"`` always, ``"cpp"`` until a run of the kernel signature passed the check)."""
        if self.check_inputs is None:
            check = self.mode == "both" or self._part_signature(part, block) not in self.engine.inputs_verified
        else:
            check = self.check_inputs
        self.report.input_checks += check
        return check

    def inputs_unchanged(self, part: Any, block: tuple[int, int] = (0, 1)) -> None:
        """Record that this part's kernel signature left its In arguments unchanged."""
        self.engine.inputs_verified.add(self._part_signature(part, block))

    def _interpret(self, interpret: Interpret, values: list[Any]) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        kr = interpret(values)
        self.report.interpreter_seconds += time.perf_counter() - t0
        self.report.interpreter_cpu_seconds += time.thread_time() - c0
        self.report.interpreter_runs += 1
        return kr

    def _call(
        self, kernel: _Kernel, task: Any, part: Any, values: list[Any], block: tuple[int, int], record: bool = False
    ) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            slots = kernel.call(part.func_name, values, block)
        except KernelEngineError as e:  # name the task too: a kernel may run as many tasks
            raise KernelEngineError(f"task {task.label} (@{part.func_name}): {e}") from None
        if record:
            self.calls.append(RecordedCall(kernel, slots, block, f"task {task.label} (@{part.func_name})", values))
        self.report.cpp_seconds += time.perf_counter() - t0
        self.report.cpp_cpu_seconds += time.thread_time() - c0
        self.report.cpp_calls += 1

    def run_part(self, task: Any, part: Any, interpret: Interpret, block: tuple[int, int] = (0, 1)) -> Any:
        """Run one kernel part as SPMD block ``block`` = (index, count): the C++ for numbers, the
        interpreter for timing (see the module doc)."""
        kernel = self._kernel(part.func_name)
        values = [a.value() for a in part.args]
        written = [i for i, a in enumerate(part.args) if a.buffer is not None and a.direction is not ParamDirection.In]
        scratch = list(values)  # the written buffers copied, for the run whose numbers are not kept

        def copy_written() -> list[Any]:
            for i in written:
                scratch[i] = values[i].copy()
            return scratch

        if self.mode == "cpp":
            sig = self._part_signature(part, block, values)
            kr = self.engine.timings.get(sig)
            if kr is None:
                kr = self.engine.timings[sig] = self._interpret(interpret, copy_written())
            self._call(kernel, task, part, values, block, record=True)
            return kr
        copy_written()
        kr = self._interpret(interpret, values)  # "both": the interpreter's numbers are the result
        self._call(kernel, task, part, scratch, block)
        for i in written:
            arg = part.args[i]
            max_abs, max_rel, bad = compare(values[i], scratch[i], arg.dtype)
            name = arg.buffer.name if arg.buffer is not None else f"arg{i}"
            self.report.diffs.append(
                OutputDiff(task.label, part.func_name, i, name, max_abs, max_rel, bad, int(values[i].size))
            )
        return kr

    def finish(self) -> EngineReport:
        """The run's report; each output where the engines differ is printed to stderr."""
        for d in self.report.differing:
            print(f"[kernel_engine] cpp vs interpreter: {d.message()}", file=sys.stderr)
        return self.report


def engine_run(config: Any, prepared: Any) -> EngineRun | None:
    """The engine of a run under ``config`` (None for the interpreter alone)."""
    mode = getattr(config, "kernel_engine", "interpreter")
    if mode == "interpreter":
        return None
    work_dir = prepared.out_dir
    if work_dir is None:
        raise KernelEngineError(
            f"kernel_engine={mode!r} runs the build directory's kernels/*.cpp, and this program has none: "
            "run a CompiledProgram (ir.compile writes one) or a @pl.jit function"
        )
    engine = _ENGINES.get(id(prepared))
    if engine is None or engine.work_dir != Path(work_dir):
        engine = _ENGINES[id(prepared)] = KernelEngine(Path(os.fspath(work_dir)))
        weakref.finalize(prepared, _ENGINES.pop, id(prepared), None)
    engine.out_dir = work_dir
    return EngineRun(
        mode,
        engine,
        bool(getattr(config, "recompile_kernels", True)),
        prepared.unit,
        getattr(config, "check_inputs", None),
    )
