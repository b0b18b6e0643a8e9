"""``pypto.runtime.run``: run a program on the simulated chip.

::

    result = pypto.runtime.run(compiled, a, b, out, config=RunConfig())   # or a Program / @pl.jit function
    result.total_cycles, result.tasks[0].start, result.per_core_cycles, result.races

Steps:

1. the program is lowered: a :class:`~.runnable.Runnable` (a compiled
   program, or a ``@pl.jit`` function compiled on the arguments) hands over
   its lowered program as a :class:`~.runnable.RunSpec`; an ``ir.Program``
   goes through ``lower_program`` (or, with ``save_kernels``, which every DFX flag forces, is compiled
   into a build directory as upstream's ``run`` does);
2. every kernel (AIC/AIV/InCore function) is a ``.pto`` unit: the
   ``<output_dir>/ptoas/<unit>.pto`` compile wrote (edits and all) when there
   is an output directory, else built in memory by the function compile builds
   it with (:func:`pypto.ptoas.codegen.lower_function`, which
   ``build_kernel_unit`` calls before printing); then the ptoas pipeline
   (verify, insert-sync), written to ``<output_dir>/runtime/`` when there is
   an output directory, so instruction records point at real lines;
3. the arguments go to simulated device memory: torch tensors and numpy
   arrays are copied in (counted in :attr:`RunResult.host_copy_bytes`), a
   :class:`~pypto.runtime.tensors.DeviceTensor` is used where it lives;
4. the Orchestration function runs host-side into a task graph
   (:mod:`.orchestration`), which :class:`~.scheduler.Scheduler` dispatches to
   the target's cores, each kernel interpreted by
   :func:`pypto.device.interpreter.run_kernel` (numerics, per-pipe timing,
   race detector when ``config.check_races``);
5. Out/InOut parameters are copied back into the caller's tensors; an In
   parameter is never copied back, and every task's In arguments are
   compared byte for byte before and after it runs (a kernel writing one
   raises :class:`InputWrittenError`; ``RunConfig.check_inputs`` says when:
   with the C++ engine, once per kernel signature by default).
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from pypto.compile_profiling import owned_profiler, profiling_wanted
from pypto.dialects.enums import ParamDirection
from pypto.dialects.program import param_directions
from pypto.dialects.types import TensorType
from pypto.errors import ArgumentTypeError, Error, InvalidArgumentError
from pypto.target import Target, TargetError, load_target, packaged_targets
from pypto.utils.atomic import atomic_write_text
from pypto.utils.gc_policy import fewer_collections, import_long_lived
from pypto.utils.pipe_order import pushers_first
from pypto.utils.progress import progress
from pypto.utils.tracebacks import api_boundary

from .config import PLATFORMS, RunConfig, check_config
from .cpp_engine import EngineReport, engine_run
from .dfx import any_enabled, collectors_for, finish_all, task_hooks
from .dfx.base import earlier_artefacts_aside_on_failure
from .dfx.swimlane import swimlane_records, write_swimlane
from .orchestration import (
    DeviceBuffer,
    KernelPart,
    OrchestrationError,
    Task,
    TaskGraph,
    build_task_graph,
    entry_function,
    numpy_dtype,
)
from .runnable import Runnable, RunSpec
from .scheduler import Scheduler, TaskRecord
from .specs import is_spec_list, run_with_specs
from .tensors import DeviceTensor, device_to_torch, host_to_numpy, is_torch, numpy_to_host

SIM_PLATFORMS = ("a2a3sim", "a5sim")
"""Platforms this machine can run (simulated)."""
SIMULATE_NPU_ENV = "PYPTO_SIMULATE_NPU"
"""Set to ``1``: a hardware platform (``a2a3``) runs on its simulated twin (``a2a3sim``), e.g. for an
unmodified upstream example that names the hardware (``pypto.tools.upstream_compat`` sets it)."""


def runnable_platforms() -> tuple[str, ...]:
    """The platforms a run can use here without ``RunConfig(target=...)``: a simulated one whose packaged
    target exists (``a2a3sim``; a hardware one too with ``PYPTO_SIMULATE_NPU=1``); ``a5sim`` has none yet."""
    packaged = packaged_targets()
    simulate = os.environ.get(SIMULATE_NPU_ENV) == "1"
    return tuple(
        p for p in PLATFORMS if p.removesuffix("sim") in packaged and (p in SIM_PLATFORMS or simulate)
    )


class PlatformError(Error, RuntimeError):
    """A platform this machine cannot run: a hardware one (no NPU here), or one with no packaged target."""


class InputWrittenError(Error, RuntimeError):
    """A kernel wrote a tensor it takes as an In argument."""


@dataclass
class TaskRace:
    """A sync race found in one task's kernel."""

    task_id: int
    func_name: str
    race: Any

    def message(self) -> str:
        """``t<id> <kernel>: race: ...``."""
        return f"t{self.task_id} {self.func_name}: {self.race.message()}"

    def __str__(self) -> str:
        return self.message()


@dataclass
class KernelUnit:
    """One kernel as the interpreter runs it: its ``.pto`` module after insert-sync."""

    name: str
    module: ModuleOp
    positions: dict[Operation, tuple[int, int]]
    pto_file: str
    path: Path | None = None

    def pipe_directions(self) -> tuple[frozenset[str], frozenset[str]]:
        """The cube<->vector pipes this kernel pushes to and pops from (``"c2v"``, ``"v2c"``); cached: a Group
        task's parts are ordered by them on every run (:func:`pipe_order`)."""
        cached = self.__dict__.get("_pipes")
        if cached is None:
            from pypto.ptoas.dialect.pipe_ops import TPopFromAicOp, TPopFromAivOp, TPushToAicOp, TPushToAivOp

            ops = list(self.module.walk())
            pushes = frozenset(op.DIRECTION for op in ops if isinstance(op, TPushToAivOp | TPushToAicOp))
            pops = frozenset(op.DIRECTION for op in ops if isinstance(op, TPopFromAicOp | TPopFromAivOp))
            cached = self.__dict__["_pipes"] = (pushes, pops)
        return cached


@dataclass
class RunResult:
    """The outcome of one run on the simulated chip.

    Times are target core cycles (``clock_hz``): ``tasks`` has one
    :class:`~.scheduler.TaskRecord` per task (dispatch, start, end, finish);
    ``per_core_cycles`` the kernel cycles per core id that ran something
    (``core_types[id]`` is ``"aic"``/``"aiv"``); ``total_cycles`` the
    makespan (last finish, from the orchestrator's first submit at 0); ``races`` the sync
    races (empty unless ``check_races``); ``outputs`` what the Orchestration
    function returned (the caller's tensors for its parameters)."""

    tasks: list[TaskRecord]
    per_core_cycles: dict[int, int]
    per_core_busy: dict[int, int]
    core_types: list[str]
    total_cycles: int
    races: list[TaskRace]
    outputs: Any
    clock_hz: float
    target_name: str
    graph: TaskGraph
    host_copy_bytes: int = 0
    problems: list[str] = field(default_factory=list)
    units: dict[str, KernelUnit] = field(default_factory=dict)
    dfx_outputs: dict[str, list[Path]] = field(default_factory=dict)
    """The run-time DFX artefacts written, by RunConfig flag (``pypto.runtime.dfx``)."""
    module: Any = None
    """The program's module (the kernel functions a DFX artefact numbers, ``pypto.runtime.dfx.deps``)."""
    target: Target | None = None
    """The target the run was simulated on (its facts: request size, pipes, costs)."""
    core_to_thread: list[int] = field(default_factory=list)
    """The AICPU scheduler thread of each core id (:mod:`.scheduler`)."""
    scheduler_phases: list[list[dict[str, Any]]] = field(default_factory=list)
    """Per AICPU scheduler thread, the phases it ran (swimlane level 3 records)."""
    orchestrator_phases: list[list[dict[str, Any]]] = field(default_factory=list)
    """Per orchestrator thread, its submits (swimlane level 4 records)."""
    notes: list[str] = field(default_factory=list)
    """Text blocks a DFX collector adds to :meth:`summary` (the in-core bottleneck tables)."""
    kernel_engine: EngineReport | None = None
    """The compiled-C++ engine's report (``RunConfig.kernel_engine`` ``"cpp"``/``"both"``; :mod:`.cpp_engine`)."""
    profile: dict[str, Any] | None = None
    """The compile profile (``RunConfig(compile_profiling=True)``): ``pipeline_profile.json``'s dict."""
    passed: bool | None = None
    """The seed form (``tensor_specs=``, ``golden=``): whether the outputs matched the golden."""
    error: str | None = None
    """The seed form: which outputs differ from the golden (None when they all match)."""

    @property
    def time_us(self) -> float:
        """``total_cycles`` in microseconds."""
        return self.total_cycles * 1e6 / self.clock_hz

    @property
    def race_messages(self) -> list[str]:
        """One line per race."""
        return [r.message() for r in self.races]

    def per_pipe_busy(self) -> dict[str, int]:
        """Busy cycles per pipe, summed over every kernel run."""
        busy: dict[str, int] = {}
        for t in self.tasks:
            for r in t.kernel_runs:
                for pipe, c in r.per_pipe_busy.items():
                    busy[pipe] = busy.get(pipe, 0) + c
        return busy

    def summary(self) -> str:
        """A short table: one line per task, then the totals."""
        lines = [
            f"{'task':<5} {'kernel':<28} {'core':<9} {'dispatch':>9} {'start':>9} {'end':>9} {'finish':>9} {'cycles':>8}"
        ]
        for t in self.tasks:
            cores = ",".join(f"{self.core_types[c]}{c}" for c in t.core_ids)
            lines.append(
                f"{t.label:<5} {t.func_name:<28} {cores:<9} {t.dispatch:>9} {t.start:>9} {t.end:>9} {t.finish:>9} {t.cycles:>8}"
            )
        lines.append(
            f"total {self.total_cycles} cycles = {self.time_us:.3f} us at {self.clock_hz / 1e9:g} GHz "
            f"({len(self.tasks)} tasks on {len(self.per_core_cycles)} cores; target {self.target_name})"
        )
        lines += [f"\n{note}" for note in self.notes]
        if self.kernel_engine is not None:
            lines.append(self.kernel_engine.summary())
        return "\n".join(lines)

    def swimlane_records(self, level: int = 2) -> dict[str, Any]:
        """``chip_swimlane_records.json`` at ``level`` (runtime-dfx-formats.md §2; see
        :mod:`pypto.runtime.dfx.swimlane`), in target cycles."""
        return swimlane_records(self, level)

    def write_swimlane(self, path: str | os.PathLike[str], level: int = 2) -> Path:
        """Write :meth:`swimlane_records` as JSON (atomically); returns the path."""
        return write_swimlane(self, Path(path), level)


# ---- kernel units --------------------------------------------------------------


def kernel_unit(program: Any, name: str, out_dir: Path | None, arch: str = "a2a3") -> KernelUnit:
    """The ``.pto`` unit of kernel ``name`` after the ptoas pipeline (insert-sync), as the interpreter runs it.

    With an output directory it is ``<out_dir>/ptoas/<name>.pto`` as that file is now (compile wrote it;
    an edit to it is what runs), read by :func:`pypto.ptoas.codegen.read_kernel_unit`; without one (or
    without that file) :func:`pypto.ptoas.codegen.lower_function` builds it in memory, as
    :func:`~pypto.ptoas.codegen.build_kernel_unit` does for compile (without printing its text). After insert-sync the unit is printed
    (to ``<out_dir>/runtime/<name>.pto`` when there is a directory), recording where each op starts, so
    instruction records point at real lines of it (the positions a parse of that text would give, without
    parsing it); their DSL locations are the unit's ``loc(...)`` (see :mod:`pypto.ptoas.codegen.unit`)."""
    with fewer_collections():  # compile work: the compile's collector policy (gc_policy)
        return _kernel_unit(program, name, out_dir, arch)


def _kernel_unit(program: Any, name: str, out_dir: Path | None, arch: str) -> KernelUnit:
    import_long_lived("pypto.ptoas.codegen")  # their first load defines op classes: gc_policy.long_lived
    import_long_lived("pypto.ptoas.passes")
    from pypto.ptoas.codegen import lower_function, read_kernel_unit
    from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
    from pypto.ptoas.pto_text import print_pto_with_source_map
    from pypto.utils.ir_fingerprint import seal

    f = program.func_ops[name]
    compiled = out_dir / "ptoas" / f"{name}.pto" if out_dir is not None else None
    if compiled is not None and compiled.is_file():
        unit = read_kernel_unit(compiled, f, arch)
    else:
        unit = lower_function(f, emit_source_loc=True, arch=arch)
    run_ptoas_pipeline(unit, PtoasOptions(insert_sync=True))
    path = out_dir / "runtime" / f"{name}.pto" if out_dir is not None else None
    filename = str(path) if path is not None else f"{name}.pto"
    text, source_map = print_pto_with_source_map(unit, filename)
    if path is not None and not _holds_text(path, text):  # as it is: a read-only build still runs
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text, durable=False)  # a regenerated artefact, as the pass dumps
    seal(unit)  # nothing edits a unit: its runs find their compiled plan by identity (no fingerprint walk)
    return KernelUnit(name, unit, source_map.positions, filename, path)


def _holds_text(path: Path, text: str) -> bool:
    """Whether the file ``path`` holds ``text`` already (False when it cannot be read)."""
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


@dataclass
class Prepared:
    """A program ready to run: the lowered Program, its entry and output directory."""

    program: Any
    entry: func.FuncOp
    param_names: list[str]
    out_dir: Path | None
    units: dict[str, KernelUnit]
    arch: str = "a2a3"

    def param_types(self) -> list[tuple[int, ...] | None]:
        """Each entry parameter's (shape..., dtype) as :func:`_device_args` checks it; None for a scalar
        (cached: the entry's types do not change)."""
        cached = self.__dict__.get("_param_types")
        if cached is None:
            cached = self.__dict__["_param_types"] = _param_types(self.entry)
        return cached

    def unit(self, name: str) -> KernelUnit:
        """The (cached) kernel unit of ``name``."""
        if name not in self.units:
            self.units[name] = kernel_unit(self.program, name, self.out_dir, self.arch)
        return self.units[name]


_PREPARED: weakref.WeakKeyDictionary[RunSpec, Prepared] = weakref.WeakKeyDictionary()
"""What was prepared from each live RunSpec (a Runnable hands back the same spec for the same program)."""


_RUNNABLE_TYPES: set[type] = set()
"""Classes whose instances are Runnables by a method of the class (a Protocol isinstance check is slow)."""


def _is_runnable(x: Any) -> bool:
    """``isinstance(x, Runnable)``, remembered per class when the class itself defines ``run_spec``."""
    if type(x) in _RUNNABLE_TYPES:
        return True
    if not isinstance(x, Runnable):
        return False
    if callable(getattr(type(x), "run_spec", None)):
        _RUNNABLE_TYPES.add(type(x))
    return True


def _prepare_spec(spec: RunSpec) -> Prepared:
    target_arch_of = import_long_lived("pypto.ptoas.codegen").target_arch_of  # its first load: gc_policy

    cached = _PREPARED.get(spec)
    if cached is not None:
        return cached
    entry = entry_function(spec.program.module, spec.entry_name)
    names = list(spec.param_names) or [a.name_hint or f"arg{i}" for i, a in enumerate(entry.body.block.args)]
    arch = target_arch_of(spec.backend_type, spec.platform)
    prepared = _PREPARED[spec] = Prepared(spec.program, entry, names, spec.output_dir, {}, arch)
    return prepared


def prepare(program_or_compiled: Any, args: Sequence[Any] = (), config: RunConfig | None = None) -> Prepared:
    """What :func:`run` is given, ready to run: a :class:`~.runnable.Runnable`'s spec (cached per spec),
    or a bare ``ir.Program`` / module lowered here (no output directory: its units are built in memory). With
    ``config.save_kernels`` (which every DFX flag forces) a bare program is compiled into a build directory
    instead (``config.save_kernels_dir``, else ``build_output/<name>_<stamp>``, as upstream's ``run`` does),
    where the run's ``dfx_outputs/`` go."""
    from pypto.core.program import Program
    from pypto.pipeline.lower import lower_program
    target_arch_of = import_long_lived("pypto.ptoas.codegen").target_arch_of  # its first load: gc_policy

    target = program_or_compiled
    if isinstance(target, Prepared):
        return target
    if _is_runnable(target):
        return _prepare_spec(target.run_spec(args, config))
    if isinstance(target, ModuleOp):
        target = Program(target)
    if isinstance(target, Program):
        target = specialize_dynamic_entry(target, args)
        if config is not None and config.save_kernels:  # kept (a DFX flag forces it): compiled into a build
            from .runnable import compile_for_run

            with _stage("compile"):
                compiled = compile_for_run(target, config)
            if compiled is not target:
                return _prepare_spec(compiled.run_spec(args, config))
        with _stage("compile"):
            lowered = lower_program(target)
        entry = entry_function(lowered.module)
        names = [a.name_hint or f"arg{i}" for i, a in enumerate(entry.body.block.args)]
        arch = target_arch_of(None, config.platform if config is not None else None)
        return Prepared(lowered, entry, names, None, {}, arch)
    raise TypeError(
        f"cannot run a {type(program_or_compiled).__name__}; pass a CompiledProgram, Program or @pl.jit function"
    )


def specialize_dynamic_entry(program: Any, args: Sequence[Any]) -> Any:
    """A ``@pl.program`` whose entry has ``pl.dynamic`` dimensions, parsed again with them bound to the
    tensors passed (as ``@pl.jit`` does: each distinct extent is its own specialization, so
    ``pl.tensor.dim`` of it is a constant and the kernels it reaches get static shapes). Other programs
    are returned as they are."""
    from pypto.dialects.types import DYNAMIC, TensorType
    from pypto.frontend.jit import torch_type

    hook = getattr(program, "respecialize", None)
    if hook is None:
        return program
    entry = entry_function(program.module)
    params = entry.body.block.args
    if not any(isinstance(p.type, TensorType) and DYNAMIC in p.type.get_shape() for p in params):
        return program
    types = {}
    for p, a in zip(params, args, strict=False):
        t = torch_type(a) if is_torch(a) else None
        if t is not None and p.name_hint and isinstance(p.type, TensorType) and DYNAMIC in p.type.get_shape():
            types[p.name_hint] = t
    specialized = hook(entry.sym_name.data, types)
    specialized.host_orchestrators = program.host_orchestrators
    specialized.sub_workers = program.sub_workers
    return specialized


def resolve_target(config: RunConfig) -> Target:
    """The :class:`~pypto.target.Target` of a run: ``config.target`` (a name or a
    path to a ``.mlir``), else the platform's packaged target."""
    if config.platform not in SIM_PLATFORMS and not (
        os.environ.get(SIMULATE_NPU_ENV) == "1" and f"{config.platform}sim" in SIM_PLATFORMS
    ):
        simulated = ", ".join(p for p in runnable_platforms() if p in SIM_PLATFORMS)
        twin = f"{config.platform}sim"
        if twin in SIM_PLATFORMS and (config.target is not None or config.platform in packaged_targets()):
            hint = f"or set {SIMULATE_NPU_ENV}=1 to run {config.platform!r} on its simulated twin ({twin})"
        elif twin in SIM_PLATFORMS:  # its twin has no packaged target yet: the variable cannot help
            hint = f"its simulated twin {twin} has no packaged target yet"
        else:
            hint = "it has no simulated twin"
        raise PlatformError(
            f"platform {config.platform!r} needs an NPU, which this machine does not have; "
            f"use a simulated platform ({simulated}); {hint}"
        )
    if config.target is not None:
        return load_target(config.target)
    name = config.platform.removesuffix("sim")
    try:
        return load_target(name)
    except TargetError:
        if name in packaged_targets():
            raise
        raise PlatformError(
            f"platform {config.platform!r} cannot run here: there is no packaged target {name!r} for its "
            f"simulated chip (packaged: {', '.join(packaged_targets())}); run on "
            f"{', '.join(runnable_platforms())}, or give RunConfig(target=<a .mlir target file>)"
        ) from None


def _stage(name: str) -> Any:
    """A stage of the active compile profiler (a no-op context when there is none)."""
    from pypto.compile_profiling import stage

    return stage(name)


def _param_types(entry: func.FuncOp) -> list[Any]:
    """Each parameter's (shape, numpy dtype) for a tensor, None for a scalar."""
    out: list[Any] = []
    for p in entry.body.block.args:
        t = p.type
        out.append((tuple(t.get_shape()), np.dtype(numpy_dtype(t.element_type))) if isinstance(t, TensorType) else None)
    return out


def _device_args(
    entry: func.FuncOp, args: Sequence[Any], names: Sequence[str], types: Sequence[Any] | None = None
) -> tuple[list[Any], int]:
    """The entry's arguments in device memory, and the bytes copied from the host (``types``: the
    entry's :func:`_param_types`, when the caller has them)."""
    params = entry.body.block.args
    if types is None:
        types = _param_types(entry)
    if len(args) != len(params):
        raise ArgumentTypeError(f"@{entry.sym_name.data} takes {len(params)} arguments ({', '.join(names)}), got {len(args)}")
    out: list[Any] = []
    copied = 0
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if isinstance(a, DeviceTensor) and types[i] is not None:  # the common case, without the name
            arr = a.array
            if arr.shape == types[i][0] and arr.dtype == types[i][1]:
                out.append(arr)
                continue
        name = names[i] if i < len(names) else f"arg{i}"
        if not isinstance(p.type, TensorType):
            if (
                isinstance(a, DeviceTensor)
                or is_torch(a)
                and getattr(a, "dim", lambda: 0)() > 0
                or isinstance(a, np.ndarray)
            ):
                raise ArgumentTypeError(f"argument '{name}' is a scalar parameter ({p.type}), got a tensor")
            out.append(a.item() if hasattr(a, "item") else a)
            continue
        if isinstance(a, DeviceTensor):
            arr = a.array
        elif is_torch(a) or isinstance(a, np.ndarray):
            if getattr(a, "is_meta", False):
                raise ArgumentTypeError(
                    f"argument '{name}' is a device='meta' tensor (a shape without data); "
                    "run needs tensors with data (on the CPU)"
                )
            arr = host_to_numpy(a)
            copied += arr.nbytes
        else:
            raise ArgumentTypeError(
                f"argument '{name}' must be a tensor (torch, numpy or DeviceTensor), got {type(a).__name__}"
            )
        want_shape, want_dtype = types[i]
        if tuple(arr.shape) != tuple(want_shape):
            raise InvalidArgumentError(
                f"argument '{name}' has shape {tuple(arr.shape)}; the program was compiled for {tuple(want_shape)}"
            )
        if arr.dtype != want_dtype:
            raise ArgumentTypeError(
                f"argument '{name}' has dtype {arr.dtype}; the program expects {p.type.element_type} ({want_dtype})"
            )
        out.append(arr)
    return out, copied


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two byte arrays are equal (compared 8 bytes at a time when the size allows)."""
    if a.size != b.size:
        return False
    wide = np.uint64 if a.size % 8 == 0 else np.uint8
    return bool(np.array_equal(a.view(wide), b.view(wide)))


def _check_inputs_unchanged(task: Task, part: KernelPart, before: list[tuple[int, np.ndarray]]) -> None:
    for index, snapshot in before:
        buf = part.args[index].buffer
        assert buf is not None
        if not _same_bytes(snapshot, buf.array.reshape(-1).view(np.uint8)):
            raise InputWrittenError(
                f"task {task.label} ({part.func_name}) wrote its In argument #{index} ('{buf.name}'); "
                "In parameters are never written"
            )


def pipe_order(task: Task, prepared: Prepared) -> list[KernelPart] | None:
    """A Group task's parts in an order the interpreter can run them one after the other: a part that pops
    a cube<->vector pipe after the part that pushes it. None when pipes go both ways between them (the cube
    pops what the vector pushed, and the other way round): they run interleaved (:func:`_run_together`)."""
    if len(task.parts) < 2:
        return list(task.parts)
    return pushers_first(task.parts, lambda part: prepared.unit(part.func_name).pipe_directions())


@api_boundary
def run(
    program_or_compiled: Any = None,
    *args: Any,
    config: RunConfig | None = None,
    program: Any = None,
    tensor_specs: Sequence[Any] | None = None,
    golden: Any = None,
) -> RunResult:
    """Run a program on the simulated chip (see the module docstring).

    ``program_or_compiled``: a CompiledProgram, an ``ir.Program`` or a
    ``@pl.jit`` function; ``args``: the entry's arguments in parameter order
    (torch tensors, numpy arrays, DeviceTensors, Python scalars); ``config``:
    a :class:`RunConfig` (``platform`` ``"a2a3sim"``, ``target``,
    ``check_races``). Out/InOut tensors are written back into ``args``.

    The seed's form ``run(program=..., tensor_specs=[TensorSpec...], golden=fn, config=...)`` (also
    ``run(program, specs, golden, config)``) builds the arguments from the specs and checks the
    outputs against the golden: :mod:`.specs`. ``config.compile_profiling`` (or
    ``PYPTO_COMPILE_PROFILING``): ``result.profile`` and ``report/pipeline_profile.{txt,json}``."""
    if program is not None:
        if program_or_compiled is not None:
            raise TypeError("run() got the program twice (positionally and as program=)")
        program_or_compiled = program
    if tensor_specs is None and args and isinstance(args[0], list | tuple) and is_spec_list(args[0]) and len(args) <= 3:
        tensor_specs, rest = args[0], list(args[1:])  # run(program, specs, golden, config)
        golden = rest.pop(0) if rest and golden is None else golden
        config = rest.pop(0) if rest and config is None else config
        args = ()
    if program_or_compiled is None:
        raise TypeError("run() needs a program (a CompiledProgram, an ir.Program or a @pl.jit function)")
    check_config(config)
    if tensor_specs is not None:
        if args:
            raise TypeError("run() takes either tensor_specs= or the arguments themselves, not both")
        return run_with_specs(program_or_compiled, tensor_specs, golden, config if config is not None else RunConfig())
    if not args and _takes_arguments(program_or_compiled):
        return ProgramCall(program_or_compiled, config)  # type: ignore[return-value]
    given = config
    config = config if config is not None else RunConfig()
    if not profiling_wanted(config.compile_profiling):  # the common case, without the profiler's stages
        prepared = _loaded(_compiled(program_or_compiled, args, given))
        return _execute(prepared, resolve_target(config), args, config)
    with owned_profiler(config.compile_profiling) as (prof, owned):
        # The compile (cached) first; loading a build's kernels (upstream's on-device compile) is device work.
        compiled = _compiled(program_or_compiled, args, given)
        with _stage("device_execution"):
            prepared = _loaded(compiled)
            result = _execute(prepared, resolve_target(config), args, config)
        if prof is not None:
            result.profile = prof.to_dict()
            if owned and prepared.out_dir is not None:
                prof.write_report(Path(prepared.out_dir) / "report", result.profile)
    return result


def _compiled(program_or_compiled: Any, args: Sequence[Any], config: RunConfig | None) -> Prepared | RunSpec:
    """The compile of a run (cached): a runnable's spec, else the program prepared for ``args``."""
    if _is_runnable(program_or_compiled):
        return program_or_compiled.run_spec(args, config)
    return prepare(program_or_compiled, args, config)


def _loaded(compiled: Prepared | RunSpec) -> Prepared:
    """A run spec's kernels loaded (upstream's on-device compile); a prepared program as it is."""
    return _prepare_spec(compiled) if isinstance(compiled, RunSpec) else compiled


def _takes_arguments(target: Any) -> bool:
    """A front-end Program (``@pl.program``) whose entry has parameters."""
    from pypto.core.program import Program

    if not isinstance(target, Program):
        return False
    try:
        return bool(entry_function(target.module).body.block.args)
    except OrchestrationError:
        return False


class ProgramCall:
    """What ``run(program, config=...)`` without arguments returns (upstream's compile-only form, whose
    result is called with tensors): call it with all the entry's arguments, or with its inputs only (each
    Out parameter is then allocated, zero-filled, from its type). Returns the Out tensors (one: the tensor
    itself); the :class:`RunResult` is kept in ``last_run``."""

    def __init__(self, program: Any, config: RunConfig | None):
        self.program, self.config = program, config
        self.last_run: RunResult | None = None

    def __call__(self, *args: Any, config: RunConfig | None = None) -> Any:
        import torch

        from pypto.dialects.dtypes import dtype_name
        from pypto.dialects.types import DYNAMIC
        from pypto.target.dtypes import BY_NAME

        entry = entry_function(self.program.module)
        dirs = param_directions(entry)
        params = entry.body.block.args
        full = list(args)
        if len(args) != len(params):
            outs = [i for i, d in enumerate(dirs) if d is ParamDirection.Out]
            if len(args) + len(outs) != len(params):
                raise ArgumentTypeError(
                    f"@{entry.sym_name.data} takes {len(params)} arguments ({len(params) - len(outs)} without its Out "
                    f"parameters), got {len(args)}"
                )
            rest = iter(args)
            full = []
            for i, p in enumerate(params):
                if i not in outs:
                    full.append(next(rest))
                    continue
                t = p.type
                if not isinstance(t, TensorType) or DYNAMIC in t.get_shape():
                    raise ArgumentTypeError(f"Out parameter {i} of @{entry.sym_name.data} has no static shape to allocate")
                storage = BY_NAME[dtype_name(t.element_type)].torch
                full.append(torch.zeros(tuple(t.get_shape()), dtype=getattr(torch, storage)))
        self.last_run = run(self.program, *full, config=config if config is not None else self.config)
        result = [full[i] for i, d in enumerate(dirs) if d is ParamDirection.Out]
        return result[0] if len(result) == 1 else tuple(result)


def _execute(prepared: Prepared, target: Target, args: Sequence[Any], config: RunConfig) -> RunResult:
    """Copy the arguments in, run the task graph, copy the outputs back: the ``device_execution`` stage. A run
    that fails moves the earlier run's artefacts its flags would have replaced to ``dfx_outputs/previous/``."""
    entry = prepared.entry
    dev_args, copied = _device_args(entry, args, prepared.param_names, prepared.param_types())
    if config.kernel_engine == "cpp" and not any_enabled(config):  # a recorded run replayed in one C++ call
        from .cpp_plan import try_replay

        replayed = try_replay(prepared, target, args, dev_args, copied, config)
        if replayed is not None:
            _copy_back(entry, args, dev_args)
            return replayed
    with earlier_artefacts_aside_on_failure(config, prepared.out_dir):
        return _execute_run(prepared, target, args, config, dev_args, copied)


def _execute_run(
    prepared: Prepared, target: Target, args: Sequence[Any], config: RunConfig, dev_args: list[Any], copied: int
) -> RunResult:
    """:func:`_execute`'s run of the task graph on the device arguments."""
    entry = prepared.entry
    engine = engine_run(config, prepared)  # the compiled-C++ kernel engine (None: the interpreter alone)
    collectors = collectors_for(config, prepared.out_dir)  # the DFX artefacts the flags ask for
    plan_key = None
    if engine is not None and not collectors:  # record a "cpp" run to replay it (cpp_plan)
        from .cpp_plan import plan_key as make_plan_key

        plan_key = make_plan_key(config, target, dev_args)
    graph = build_task_graph(prepared.program.module, entry, dev_args, prepared.param_names)
    comm_ops = sys.modules.get("pypto.device.interpreter.comm_impls")  # loaded by any multi-rank run
    if comm_ops is not None:
        comm_ops.kernel_parts(sum(t.block_num * len(t.parts) for t in graph.tasks))

    from pypto.device.interpreter import DeviceError, run_kernel

    races: list[TaskRace] = []
    problems: list[str] = []

    channels: dict[tuple[int, int], dict[str, Any]] = {}  # per task block: the cube<->vector pipes its parts share
    for c in collectors:
        c.config = config  # the run's options, for a collector that needs them
    before_hooks, after_hooks = task_hooks(collectors)  # the collectors that watch each task part

    bars: list[Any] = []  # the progress bar of the run (names the task running, counts tasks begun)
    begun: set[int] = set()

    def run_part(task: Task, part: KernelPart, block: int = 0, start: int = 0, pipe_wait: Any = None) -> Any:
        comm = sys.modules.get("pypto.device.interpreter.comm_impls")  # loaded by any multi-rank run
        if comm is not None:
            comm.kernel_start(start)  # a rank link prices the kernel's pto.comm ops from its start on the chip
        bars[0].advance(f"{task.label} @{part.func_name}", steps=0 if task.id in begun else 1)
        begun.add(task.id)
        unit = prepared.unit(part.func_name)
        blk = (block, task.block_num)
        for hook in before_hooks:
            hook(task, part)
        check_in = config.check_inputs is not False if engine is None else engine.wants_input_check(part, blk)
        before = [(a.index, a.buffer.array.reshape(-1).view(np.uint8).copy()) for a in part.args
                  if check_in and a.buffer is not None and a.direction is ParamDirection.In]  # fmt: skip
        try:

            def interpret(values: list[Any]) -> Any:
                return run_kernel(
                    unit.module,
                    part.func_name,
                    values,
                    target=target,
                    check_races=config.check_races,
                    positions=unit.positions,
                    pto_file=unit.pto_file,
                    channels=channels.setdefault((task.id, block), {}),
                    pipe_wait=pipe_wait,
                    block=(block, task.block_num),
                )

            kr = (
                interpret([a.value() for a in part.args])
                if engine is None
                else engine.run_part(task, part, interpret, blk)
            )
        except DeviceError as e:  # name the task too: a kernel may run as many tasks
            raise type(e)(f"task {task.label} (@{part.func_name}): {e}") from e
        if check_in:
            _check_inputs_unchanged(task, part, before)
            if engine is not None:
                engine.inputs_unchanged(part, blk)
        for after in after_hooks:
            after(task, part, kr)
        races.extend(TaskRace(task.id, part.func_name, r) for r in kr.races)
        problems.extend(f"{task.label} {part.func_name}: {p}" for p in kr.problems)
        return kr

    def run_together(task: Task, block: int, start: int) -> list[Any]:
        """The parts of ``task`` that push to each other, interpreted interleaved (one at a time, handing over
        at a pop of an empty pipe): :class:`pypto.utils.interleave.Interleaved`."""
        from pypto.utils.interleave import Interleaved

        if engine is not None:
            raise DeviceError(
                f"{task.label}: " + ", ".join(f"@{p.func_name}" for p in task.parts) + " push to and pop from "
                f"each other (pipes both ways): the {config.kernel_engine!r} kernel engine runs a task's parts one "
                "after the other; the interpreter (kernel_engine='interpreter') interleaves them"
            )
        together = Interleaved([p.func_name for p in task.parts], DeviceError)
        return together.run([lambda p=p: run_part(task, p, block, start, together.wait) for p in task.parts])

    scheduler = Scheduler(target, run_part, lambda task: pipe_order(task, prepared), config.aicpu_thread_num,
                          run_together=run_together)  # fmt: skip
    with progress("run", total=len(graph.tasks)) as bar:
        bars.append(bar)
        records = scheduler.run(graph)
    for (task_id, _), pipes in sorted(channels.items()):
        for direction, left in sorted(pipes.items()):
            if left:
                label = next(t.label for t in graph.tasks if t.id == task_id)
                problems.append(f"{label}: {len(left)} tile(s) pushed {direction} and never popped")

    _copy_back(entry, args, dev_args)
    outputs = _outputs(graph, entry, args, dev_args)
    for r in races:
        print(f"[race] {r.message()}", file=sys.stderr)
    result = RunResult(
        tasks=records,
        per_core_cycles=scheduler.per_core_cycles(),
        per_core_busy=scheduler.per_core_busy(),
        core_types=scheduler.core_types(),
        total_cycles=max((t.finish for t in records), default=0),
        races=races,
        outputs=outputs,
        clock_hz=float(target.clock_hz),
        target_name=str(target.name),
        graph=graph,
        host_copy_bytes=copied,
        problems=problems,
        units=dict(prepared.units),
        module=prepared.program.module,
        target=target,
        core_to_thread=scheduler.core_to_thread,
        scheduler_phases=scheduler.phases,
        orchestrator_phases=scheduler.orchestrator_phases,
    )
    result.kernel_engine = engine.finish() if engine is not None else None
    result.dfx_outputs = finish_all(collectors, result)
    if plan_key is not None and engine is not None:
        from .cpp_plan import keep, record

        types = [getattr(t, "element_type", None) for t in entry.function_type.outputs.data]
        plan = record(engine, graph, dev_args, result, copied, types)
        if plan is not None:
            keep(engine.engine.plans, plan_key, plan)
    return result


def _copy_back(entry: func.FuncOp, args: Sequence[Any], dev_args: Sequence[Any]) -> None:
    """Out / InOut parameters back into the caller's tensors (DeviceTensors are written in place)."""
    if all(isinstance(a, DeviceTensor) or not isinstance(d, np.ndarray) for a, d in zip(args, dev_args, strict=True)):
        return  # nothing to copy (no directions needed)
    dirs = param_directions(entry)
    for a, d, dev in zip(args, dirs, dev_args, strict=True):
        if d is not ParamDirection.In and isinstance(dev, np.ndarray) and not isinstance(a, DeviceTensor):
            numpy_to_host(dev, a)


def _outputs(graph: TaskGraph, entry: func.FuncOp, args: Sequence[Any], dev_args: Sequence[Any]) -> Any:
    """The Orchestration function's return value(s), as the caller's objects where they are parameters."""
    by_array = {id(d): a for a, d in zip(args, dev_args, strict=True) if isinstance(d, np.ndarray)}
    types = list(entry.function_type.outputs.data)
    out: list[Any] = []
    for i, v in enumerate(graph.returns):
        if isinstance(v, DeviceBuffer):
            caller = by_array.get(id(v.array))
            if caller is not None:
                out.append(caller)
            else:
                et = getattr(types[i], "element_type", None) if i < len(types) else None
                out.append(device_to_torch(v.array, et))
        else:
            out.append(v)
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)
