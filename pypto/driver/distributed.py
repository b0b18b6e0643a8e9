"""L3 (multi-chip) programs: ``@pl.jit.host`` compiled into a :class:`DistributedCompiledProgram`.

``host_orch.compile(x, y, config=RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1])))``:

1. runs the host orchestrator on stand-ins (:mod:`.host_trace`) and records its plan: the
   window buffers and, per rank, the ``@pl.jit`` programs it dispatches with their arguments;
2. compiles each dispatched program once into ``next_levels/<name>/``: through the whole pipeline
   (an ordinary L2 build), or, with kernel-body ``pld`` ops, as its torch form (:mod:`.comm_program`);
3. writes upstream's L3 layout: ``orchestration/host_orch.py`` (the orchestrator's source),
   ``distributed_meta.json`` (schema, params, platform, backend, ``distributed_config``, and the
   plan) and ``next_levels/``.

Calling the program launches one process per rank (:func:`pypto.runtime.distributed.launch`,
``torch.distributed`` / gloo; or the ranks ``torchrun`` started). Each rank gets its window
buffers (zeroed, at least 4 KiB) and runs its dispatches in order on its own simulated chip
(:func:`~pypto.runtime.distributed.run_on_chip`, on the rank's clock); the Out/InOut slices come
back into the caller's tensors (:mod:`.rank_runner`). Artefacts go to ``<build>/dfx_outputs/rank{r}/d{k}/``.
A ``@pl.program`` with a HOST orchestrator takes the same path from ``ir.compile(...,
distributed_config=)`` (:func:`compile_program_host`).
"""

from __future__ import annotations

import builtins
import inspect
import json
import math
import os
import secrets
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

from pypto.core.program import Program
from pypto.errors import ArgumentTypeError, InvalidArgumentError
from pypto.runtime.build_dir import DEBUG_RUNNER, DIRECTIONS, BuildDirError, emit_debug_runner_enabled, read_build_text
from pypto.runtime.debug.run_script import run_script_text
from pypto.runtime.distributed.config import DistributedConfig, distributed_config_of, under_torchrun
from pypto.runtime.distributed.windows import remove_window_files
from pypto.utils.atomic import atomic_write_text
from pypto.utils.tracebacks import api_boundary

from .builtin_levels import write_builtin_levels
from .comm_program import CommProgram, DistributedBuildError, has_comm_ops, needs_torch_form, torch_form_reasons
from .compile import compile
from .compiled import CompiledProgram
from .host_trace import (
    TORCH_OF,
    HostPlan,
    HostPlanError,
    HostTensor,
    ProgramSelf,
    WindowView,
    annotation_tensor,
    bind_dynamic_dims,
    has_dynamic_dims,
    trace_host,
)
from .orch_codegen import render as render_orchestration
from .output_dir import DISTRIBUTED_META, NEXT_LEVELS, make_output_dir
from .rank_runner import load_level, run_rank, torch_dtype

META_FILE = DISTRIBUTED_META
META_SCHEMA = 2
"""Upstream's ``_META_SCHEMA`` for ``distributed_meta.json``."""
HOST_ORCH = "orchestration/host_orch.py"


def _sample(a: Any) -> Any:
    """The argument a dispatch's program is compiled for: a tensor of its shape, or the number."""
    import torch

    if isinstance(a, HostTensor):
        return torch.zeros(a.shape, dtype=torch_dtype(a.dtype))
    if isinstance(a, WindowView):
        return torch.zeros(a.shape, dtype=torch_dtype(a.dtype))
    return a


def compile_host(host: Any, args: list[Any], config: Any) -> DistributedCompiledProgram:
    """Compile the ``@pl.jit.host`` orchestrator ``host`` for ``args`` (see the module docstring)."""
    dc = distributed_config_of(config)
    names = host.param_names
    plan = trace_host(host.fn, names, args, int(dc.world_size or 0))
    return _build(host.fn, host.__name__, plan, dc, getattr(config, "platform", None),
                  getattr(config, "save_kernels_dir", None), _params(names, args, host.fn))


def compile_program_host(program: Program, dc: Any, *, platform: str | None = None,
                         output_dir: Any = None, bind: dict[str, int] | None = None) -> DistributedCompiledProgram:
    """Compile a ``@pl.program`` whose HOST orchestrator dispatches ``self.<function>(..., device=r)``
    to ranks: the orchestrator's parameter shapes come from its annotations, a ``pl.dynamic`` extent
    from ``bind`` (by name) or else the world size (upstream's leading rank dimension ``NR``).

    A ``pl.dynamic`` extent is resolved when the program is invoked: a call whose tensors bind the
    annotations to other shapes builds the program again for them (same directory), and a program
    whose world-size binding does not compile (``M * 2`` rows of a 128-row window) is built at its
    first call."""
    if dc is None:
        raise ValueError(f"{program.name}: a program with a multi-chip HOST orchestrator is compiled with "
                         "distributed_config=DistributedConfig(device_ids=[...])")
    try:
        compiled = _compile_program_host(program, dc, platform, output_dir, bind)
    except Exception as exc:  # noqa: BLE001 - re-raised unless a call's own binding may compile
        if bind is not None or not _host_dynamic(program):
            raise
        return _deferred(program, dc, platform, output_dir, exc)
    compiled.rebuild = _rebuilder(program, dc, platform)
    compiled.dynamic = _host_dynamic(program)
    return compiled


def as_host_program(program: Program) -> Program:
    """A ``@pl.program`` whose one HOST orchestrator dispatches to a single chip (no ``pld``, no ``device=``),
    compiled with ``distributed_config=``: that orchestrator run on the host as an L3 program's (upstream
    compiles it to a ``DistributedCompiledProgram`` too), its dispatches round-robin over the ranks."""
    name, fn = next(iter(program.host_functions.items()))
    prog = program.clone()
    func = prog.func_ops[name]
    func.detach()
    func.erase()
    prog.host_orchestrators = {name: fn}
    prog.host_functions = {}
    return prog


def _host_dynamic(program: Program) -> bool:
    """True when the HOST orchestrator's parameters have a ``pl.dynamic`` extent."""
    if len(program.host_orchestrators) != 1:
        return False
    fn = next(iter(program.host_orchestrators.values()))
    names, anns = _host_signature(fn)
    try:
        return has_dynamic_dims(anns, names)
    except HostPlanError:
        return False


def _host_signature(fn: Any) -> tuple[list[str], dict[str, Any]]:
    """The HOST orchestrator's parameter names (after ``self``) and evaluated annotations."""
    names = list(inspect.signature(fn).parameters)[1:]
    try:
        anns = inspect.get_annotations(fn, eval_str=True)  # `from __future__ import annotations` too
    except Exception:  # noqa: BLE001 - an annotation that does not evaluate: named below
        anns = dict(fn.__annotations__)
    return names, anns


def _rebuilder(program: Program, dc: Any, platform: str | None) -> Any:
    """``rebuild(compiled, args)``: ``compiled`` built again (in place, same directory) when ``args`` bind
    the HOST orchestrator's ``pl.dynamic`` extents to shapes other than those it was built for."""
    fn = next(iter(program.host_orchestrators.values()))
    names, anns = _host_signature(fn)

    def rebuild(compiled: DistributedCompiledProgram, args: list[Any]) -> None:
        if not all(hasattr(a, "shape") for a in args) or not has_dynamic_dims(anns, names):
            return
        bind = bind_dynamic_dims(names, anns, list(args))
        world = int(distributed_config_of(dc).world_size or 0)
        shapes = [list(annotation_tensor(i, n, anns.get(n), world, bind).full_shape) for i, n in enumerate(names)]
        if compiled.built and shapes == [list(p["shape"]) for p in compiled.params]:
            return
        fresh = _compile_program_host(program, dc, platform, compiled.output_dir, bind)
        compiled.adopt(fresh)

    return rebuild


def _deferred(program: Program, dc: Any, platform: str | None, output_dir: Any,
              exc: Exception) -> DistributedCompiledProgram:
    """A program built at its first call (its annotations bound to the world size do not compile: ``exc``)."""
    dc = distributed_config_of(dc)
    name, fn = next(iter(program.host_orchestrators.items()))
    names, anns = _host_signature(fn)
    world = int(dc.world_size or 0)
    proxies = [annotation_tensor(i, n, anns.get(n), world) for i, n in enumerate(names)]
    params = [{"name": p.name, "direction": _direction(anns.get(p.name)), "shape": list(p.full_shape),
               "dtype": TORCH_OF[p.dtype]} for p in proxies]  # fmt: skip
    out = make_output_dir(name, output_dir)
    compiled = DistributedCompiledProgram(out, HostPlan(world), {}, dc, platform=platform or "a2a3sim", params=params)
    compiled.built = False
    compiled.deferred_error = exc
    compiled.rebuild = _rebuilder(program, dc, platform)
    compiled.dynamic = True
    return compiled


def _compile_program_host(program: Program, dc: Any, platform: str | None, output_dir: Any,
                          bind: dict[str, int] | None) -> DistributedCompiledProgram:
    dc = distributed_config_of(dc)
    if len(program.host_orchestrators) != 1:
        raise ValueError(f"{program.name}: expected one HOST orchestrator, got {sorted(program.host_orchestrators)}")
    name, fn = next(iter(program.host_orchestrators.items()))
    world = int(dc.world_size or 0)
    names, anns = _host_signature(fn)
    proxies = [annotation_tensor(i, n, anns.get(n), world, bind) for i, n in enumerate(names)]
    plan = trace_host(fn, names, proxies, world, self_obj=ProgramSelf(program))
    params = [{"name": p.name, "direction": _direction(anns.get(p.name)), "shape": list(p.full_shape),
               "dtype": TORCH_OF[p.dtype]} for p in proxies]  # fmt: skip
    return _build(fn, name, plan, dc, platform, output_dir, params, dict(getattr(program, "sub_workers", {})))


def _build(fn: Any, name: str, plan: HostPlan, dc: DistributedConfig, platform: str | None, output_dir: Any,
           params: list[dict[str, Any]], sub_workers: dict[str, Any] | None = None) -> DistributedCompiledProgram:
    """Compile each dispatched program into ``next_levels/`` and write the L3 build directory."""
    out = make_output_dir(name, output_dir)
    programs: dict[str, CompiledProgram | CommProgram] = {}
    shapes: dict[str, list[Any]] = {}
    for d in (d for d in plan.dispatches if not d.program.startswith(("@", "!"))):  # not collectives, callbacks
        samples = [_sample(a) for a in d.args]
        sig = [tuple(getattr(s, "shape", ())) for s in samples]
        if d.program in shapes:
            if shapes[d.program] != sig:
                raise HostPlanError(f"{d.program} is dispatched with shapes {sig} on rank {d.rank} but "
                                    f"{shapes[d.program]} before: one L2 program per name")
            continue
        shapes[d.program] = sig
        program = plan.programs[d.program].specialize(*samples)
        level = out / NEXT_LEVELS / d.program
        if needs_torch_form(program):
            why = torch_form_reasons(program)
            if why:
                _torch_form_remark(d.program, why[0])
            programs[d.program] = CommProgram.build(program, d.program, level, why)
        elif has_comm_ops(program):
            programs[d.program] = _compile_or_torch_form(program, d.program, level, platform)
        else:
            programs[d.program] = compile(program, output_dir=level, platform=platform)
    compiled = DistributedCompiledProgram(out, plan, programs, dc, platform=platform or "a2a3sim", params=params,
                                          sub_workers=_sub_workers(sub_workers or {}))
    write_sub_workers(out, sub_workers or {})
    write_builtin_levels(out, plan)
    src = textwrap.dedent(inspect.getsource(fn))
    header = (f"# The host orchestrator of this L3 build (runs on the host CPU; {plan.world_size} ranks), in upstream's\n"
              "# generated-orchestration format (pypto/driver/orch_codegen.py). What runs is its plan, recorded in\n"
              "# distributed_meta.json (window buffers, the dispatches of each rank); its source is at the end.\n")
    source = "".join(f"# {line}".rstrip() + "\n" for line in src.splitlines())
    (out / "orchestration").mkdir(exist_ok=True)
    names = [p["name"] for p in params]
    atomic_write_text(out / HOST_ORCH, header + render_orchestration(plan, names) + "\n\n# The orchestrator's source:\n"
                      + source)
    compiled.write_meta()
    if emit_debug_runner_enabled():  # python <build>/debug/run.py replays it (pypto.runtime.debug, §9)
        from .l3_replay import meta_of

        (out / DEBUG_RUNNER).parent.mkdir(exist_ok=True)
        atomic_write_text(out / DEBUG_RUNNER, run_script_text(meta_of(compiled, out / META_FILE), l3=True))
    return compiled


SUB_WORKERS = "sub_workers"
REQUIRED = "__required__.json"


def _sub_workers(subs: dict[str, Any]) -> dict[str, tuple[Any, bool]]:
    """name -> (the Python function, abstract?) of the program's HOST SubWorkers."""
    return {n: (h.fn, bool(h.requires_runtime_binding)) for n, h in subs.items()}


def write_sub_workers(out: Path, subs: dict[str, Any]) -> None:
    """``sub_workers/__required__.json`` (upstream's manifest of the abstract names) and each concrete
    SubWorker's source as ``sub_workers/<name>.py`` (what :meth:`DistributedCompiledProgram.from_dir` runs)."""
    if not subs:
        return
    folder = out / SUB_WORKERS
    folder.mkdir(exist_ok=True)
    required = sorted(n for n, h in subs.items() if h.requires_runtime_binding)
    atomic_write_text(folder / REQUIRED, json.dumps(required) + "\n")
    for n, h in subs.items():
        if not h.requires_runtime_binding and h.fn is not None:
            src = textwrap.dedent(inspect.getsource(h.fn))
            src = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("@pl.function"))
            atomic_write_text(folder / f"{n}.py", f"# HOST SubWorker {n} (runs on the host between dispatches)\n"
                              f"from __future__ import annotations\n\n{src}\n")


def read_sub_workers(out: Path) -> dict[str, tuple[Any, bool]]:
    """The SubWorkers of a build directory (see :func:`write_sub_workers`)."""
    folder = out / SUB_WORKERS
    if not folder.is_dir():
        return {}
    subs: dict[str, tuple[Any, bool]] = {n: (None, True) for n in json.loads((folder / REQUIRED).read_text())}
    for path in sorted(folder.glob("*.py")):
        env: dict[str, Any] = {}
        exec(builtins.compile(path.read_text(), str(path), "exec"), env)  # noqa: S102 - our own build's source
        subs[path.stem] = (env[path.stem], False)
    return subs


def _compile_or_torch_form(program: Any, name: str, level: Path, platform: str | None) -> CompiledProgram | CommProgram:
    """A per-rank program with ``pld`` ops that all lower to ``pto.comm``: compiled for the chip; when the
    kernel codegen cannot take it (a dynamic-shape window, an op ptoas does not lower yet), it runs as its
    torch form instead, and stderr says why."""
    import shutil

    from pypto.errors import PartialCodegenError

    try:
        return compile(program, output_dir=level, platform=platform)
    except PartialCodegenError as exc:
        shutil.rmtree(level, ignore_errors=True)
        why = str(exc).strip().splitlines()[-1].strip()
        _torch_form_remark(name, why)
        return CommProgram.build(program, name, level, [why])


def _torch_form_remark(name: str, why: str) -> None:
    """Remark (the diagnostics path: stderr outside a collector) that per-rank program ``name`` runs as its
    torch form, and the (first) reason."""
    from pypto.diagnostics import Diagnostic, Severity, emit

    emit(Diagnostic(Severity.REMARK, f"{name}: runs as its torch form on the ranks (no simulated kernel cycles): {why}"))


def _direction(ann: Any) -> str:
    text = ann if isinstance(ann, str) else repr(ann)
    return "Out" if "pl.Out" in text or "Out[" in text else "InOut" if "InOut" in text else "In"


def _params(names: list[str], args: list[Any], fn: Any) -> list[dict[str, Any]]:
    sig = inspect.signature(fn)
    params = []
    for n, a in zip(names, args, strict=True):
        direction = _direction(sig.parameters[n].annotation)
        if hasattr(a, "shape"):
            params.append({"name": n, "direction": direction, "shape": [int(d) for d in a.shape],
                           "dtype": str(a.dtype).removeprefix("torch.")})
        else:  # traced into the plan: its value is what every run of this build takes (replay checks it)
            fixed = {"value": a} if isinstance(a, int | float) and math.isfinite(a) else {}
            params.append({"name": n, "direction": "In", "scalar": True, **fixed})
    return params


META_EXPECTED = (
    "a JSON object {schema: 2, params: [{name, direction, shape, dtype} or {name, scalar: true}], platform, "
    "distributed_config: {device_ids: [int], num_sub_workers, runtime, aicpu_thread_num}, next_levels: [name], "
    "host_plan}"
)
"""What ``distributed_meta.json`` holds (the error message of a malformed one says it)."""


def read_meta_file(path: Path) -> dict[str, Any]:
    """``distributed_meta.json`` read and checked to hold the types compile writes (what
    :meth:`DistributedCompiledProgram.from_dir` and the ranks take as they are); a DistributedBuildError naming the
    file (at the line and column of a JSON or UTF-8 fault) and what was expected otherwise. A schema other than
    :data:`META_SCHEMA` is left to the caller, which names it."""
    try:
        text = read_build_text(path, strip_bom=True)
    except BuildDirError as e:
        raise DistributedBuildError(f"{e.path}: {e.message}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DistributedBuildError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise DistributedBuildError(f"{path}: malformed: got a JSON {type(data).__name__}; expected {META_EXPECTED}")
    problem = _meta_problem(data) if data.get("schema") == META_SCHEMA else None
    if problem is not None:
        raise DistributedBuildError(f"{path}: {problem}")
    return data


def _meta_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a schema-2 sidecar's field types (:func:`read_meta_file`), None when nothing is."""

    def bad(what: str) -> str:
        return f"malformed: {what}; expected {META_EXPECTED}"

    def ints(value: Any) -> bool:
        return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)

    params = data.get("params")
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        return bad(f"params is {params!r:.60}")
    for i, p in enumerate(params):
        name = p.get("name")
        if not isinstance(name, str) or not name:
            return bad(f"params[{i}] has no name")
        if p.get("scalar") is True:
            value = p.get("value", 0)
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"parameter {name!r}: value (the scalar the plan was traced with) must be a number, got {value!r:.60}"
            continue
        if p.get("direction") not in DIRECTIONS:
            return f"parameter {name!r}: direction must be one of {', '.join(DIRECTIONS)}, got {p.get('direction')!r}"
        if not ints(p.get("shape")) or any(d < 0 for d in p["shape"]):
            return f"parameter {name!r}: shape must be a list of integers >= 0, got {p.get('shape')!r}"
        if not isinstance(p.get("dtype"), str):
            return f"parameter {name!r}: dtype must be a torch dtype name (float32), got {p.get('dtype')!r}"
    dc = data.get("distributed_config")
    if not isinstance(dc, dict):
        return bad(f"distributed_config is {dc!r:.60}")
    if not ints(dc.get("device_ids")) or not dc["device_ids"]:
        return bad(f"distributed_config.device_ids is {dc.get('device_ids')!r:.60}")
    for key in ("num_sub_workers", "aicpu_thread_num"):
        if not isinstance(dc.get(key), int) or isinstance(dc.get(key), bool):
            return bad(f"distributed_config.{key} is {dc.get(key)!r:.60}")
    if not isinstance(dc.get("runtime"), str):
        return bad(f"distributed_config.runtime is {dc.get('runtime')!r:.60}")
    levels = data.get("next_levels")
    if not isinstance(levels, list) or not all(isinstance(n, str) and n and "/" not in n for n in levels):
        return bad(f"next_levels is {levels!r:.60}")
    if not isinstance(data.get("host_plan"), dict):
        return bad(f"host_plan is {data.get('host_plan')!r:.60}")
    if not isinstance(data.get("platform", "a2a3sim"), str):
        return bad(f"platform is {data.get('platform')!r:.60}")
    return None


class DistributedCompiledProgram:
    """A compiled L3 program: the build directory (path-like), its plan and its per-rank programs."""

    def __init__(self, output_dir: Path, plan: HostPlan, programs: dict[str, Any],
                 distributed_config: DistributedConfig, *, platform: str = "a2a3sim",
                 params: list[dict[str, Any]] | None = None, sub_workers: dict[str, tuple[Any, bool]] | None = None):
        self._output_dir = Path(output_dir).resolve()
        self.sub_workers: dict[str, tuple[Any, bool]] = dict(sub_workers or {})
        """HOST SubWorkers by name: (the Python function or None, abstract?)."""
        self.plan = plan
        self.programs: dict[str, CompiledProgram | CommProgram] = dict(programs)
        self.distributed_config = distributed_config
        self._platform = platform
        self.params = params or []
        self.last_run: Any = None
        self.built = True
        """False until the first call builds a program deferred for its ``pl.dynamic`` extents."""
        self.deferred_error: Exception | None = None
        self.rebuild: Any = None
        """``rebuild(self, args)``: rebinds the HOST parameters' ``pl.dynamic`` extents to a call's tensors."""
        self.dynamic = False
        """True when the HOST parameters have ``pl.dynamic`` extents: a call of the program binds them (and
        builds it again for other shapes); a prepared worker runs the build it was prepared with."""

    def adopt(self, other: DistributedCompiledProgram) -> None:
        """Take ``other``'s build (the same program rebuilt for other ``pl.dynamic`` extents)."""
        self.plan, self.programs, self.params = other.plan, other.programs, other.params
        self.sub_workers, self.built, self.deferred_error = other.sub_workers, True, None

    def bind_call(self, args: tuple[Any, ...] | list[Any]) -> None:
        """Build for ``args`` when they bind the ``pl.dynamic`` extents to shapes this build is not for."""
        if self.rebuild is not None:
            self.rebuild(self, list(args))
        if not self.built:
            assert self.deferred_error is not None
            raise self.deferred_error

    @property
    def output_dir(self) -> Path:
        return self._output_dir

    @property
    def platform(self) -> str:
        return self._platform

    def __fspath__(self) -> str:
        return str(self._output_dir)

    def __str__(self) -> str:
        return str(self._output_dir)

    def __repr__(self) -> str:
        return f"DistributedCompiledProgram({str(self._output_dir)!r})"

    def write_meta(self) -> None:
        """``distributed_meta.json`` (upstream's keys, plus ``host_plan``), written atomically."""
        dc = self.distributed_config
        meta = {
            "schema": META_SCHEMA,
            "params": self.params,
            "num_return_types": 0,
            "platform": self._platform,
            "backend_type": "Ascend910B",
            "distributed_config": {"device_ids": list(dc.device_ids or []), "num_sub_workers": dc.num_sub_workers,
                                   "runtime": dc.runtime, "aicpu_thread_num": dc.aicpu_thread_num},
            "next_levels": sorted(self.programs),
            "host_plan": self.plan.to_json(),
        }  # fmt: skip
        atomic_write_text(self._output_dir / META_FILE, json.dumps(meta, indent=1, sort_keys=True) + "\n")

    @classmethod
    def from_dir(cls, work_dir: str | os.PathLike[str], platform: str | None = None) -> DistributedCompiledProgram:
        """The program of an L3 build directory (``distributed_meta.json`` and ``next_levels/``), no recompile."""
        out = Path(work_dir).resolve()
        path = out / META_FILE
        if not path.is_file():
            raise DistributedBuildError(f"{path}: missing; recompile the @pl.jit.host program into this directory")
        meta = read_meta_file(path)
        try:
            if meta.get("schema") != META_SCHEMA:
                raise DistributedBuildError(f"{path}: schema {meta.get('schema')!r}, expected {META_SCHEMA}")
            dc = DistributedConfig(**{k: meta["distributed_config"][k] for k in
                                      ("device_ids", "num_sub_workers", "runtime", "aicpu_thread_num")})
            plan = HostPlan.from_json(meta["host_plan"])
            names = [str(n) for n in meta["next_levels"]]
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, DistributedBuildError):
                raise
            raise DistributedBuildError(f"{path}: malformed ({type(exc).__name__}: {exc})") from None
        programs = {n: load_level(out / NEXT_LEVELS / n) for n in names}
        return cls(out, plan, programs, dc, platform=platform or meta.get("platform", "a2a3sim"),
                   params=meta.get("params", []), sub_workers=read_sub_workers(out))

    def _config(self, config: Any) -> DistributedConfig:
        dc = self.distributed_config
        if config is not None and getattr(config, "distributed_config", None) is not None:
            dc = distributed_config_of(config)
        if dc.world_size != self.plan.world_size:
            raise ValueError(f"this program was compiled for {self.plan.world_size} ranks, the run has "
                             f"{dc.world_size} (device_ids={dc.device_ids})")
        return replace(dc, output_dir=dc.output_dir or self._output_dir)

    def sub_worker_names(self) -> set[str]:
        """The program's HOST SubWorkers (what ``prepare(callbacks=)`` may bind)."""
        return set(self.sub_workers)

    def required_callbacks(self) -> set[str]:
        """The abstract (``...``-body) SubWorkers: ``prepare(callbacks=)`` must bind each."""
        return {n for n, (_, abstract) in self.sub_workers.items() if abstract}

    def _check_count(self, args: tuple[Any, ...] | list[Any]) -> None:
        if len(args) != len(self.params):
            names = ", ".join(p["name"] for p in self.params)
            raise TypeError(f"{self!r} takes {len(self.params)} arguments ({names}), got {len(args)}")

    def _check_args(self, args: tuple[Any, ...] | list[Any], *, one_shot: bool = False) -> None:
        """The arguments against the parameters this build is for (:func:`check_host_args`), in the caller:
        a wrong one is refused before any rank sees it (a prepared worker's ranks stay up). ``one_shot``: a
        call of the program, which has bound the ``pl.dynamic`` extents to ``args`` already."""
        self._check_count(args)
        note = ""
        if self.dynamic and not one_shot:
            note = (" (a prepared worker runs the build it was prepared with; calling the program itself "
                    "builds it for other pl.dynamic extents)")
        check_host_args(self.params, args, note)

    @api_boundary
    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run on ``world_size`` simulated chips (one process each); Out/InOut slices land in ``args``
        (trailing ``pl.Out`` parameters left out are made here and returned, as upstream's return style).
        The :class:`~pypto.runtime.distributed.DistributedRun` is kept in ``last_run``. A plan with HOST
        callbacks runs on a worker made for this call (an abstract one must be bound: ``prepare(callbacks=)``)."""
        from pypto.runtime.distributed.resident import DistributedDeviceTensor

        args, returned = self._with_returned_outputs(args)
        self._check_count(args)
        for a in args:
            if isinstance(a, DistributedDeviceTensor):
                raise TypeError(f"{a!r}: a one-shot call takes host tensors only; pass resident tensors to the "
                                "worker that allocated them (with compiled.prepare() as rt: rt(...))")
        self.bind_call(args)  # first: a call may bind the pl.dynamic extents to other shapes (a rebuild)
        self._check_args(args, one_shot=True)
        self._one_shot(args, config)
        return returned[0] if len(returned) == 1 else tuple(returned) if returned else None

    def _with_returned_outputs(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[Any]]:
        """Upstream's return style: a call without its trailing ``pl.Out`` parameters gets them zeroed here
        (their annotated shapes) and returns them."""
        import torch

        missing = self.params[len(args):]
        if not missing or any(p.get("direction") != "Out" or "shape" not in p for p in missing):
            return args, []
        made = [torch.zeros(p["shape"], dtype=getattr(torch, p["dtype"])) for p in missing]  # a torch dtype name
        return (*args, *made), made

    def _one_shot(self, args: tuple[Any, ...], config: Any) -> None:
        from pypto.runtime.distributed import launch
        from pypto.runtime.distributed.worker import DistributedWorker

        if any(d.program.startswith("!") for d in self.plan.dispatches):
            if under_torchrun():
                raise NotImplementedError(f"{self!r}: HOST SubWorker callbacks run between the segments of a plan "
                                          "on persistent local ranks, which a torchrun launch does not have")
            with DistributedWorker(self) as worker:
                worker.run(self, *args, config=config)
            return
        dc = self._config(config)
        paths = {n: str(p.output_dir) for n, p in self.programs.items()}
        token = secrets.token_hex(6)
        args = (*args, *self.plan.new_locals())  # the plan's pl.create_tensor intermediates
        try:
            run = launch(run_rank, dc, self.plan.to_json(), paths, _chip_config(config), list(args), token)
        finally:
            remove_window_files(token)  # a killed rank cannot remove its own
        for rank in run.ranks:
            for param, index, value in rank.value:
                args[param][tuple(index)].copy_(value)
        self.last_run = run

    def run(self, *args: Any, config: Any = None) -> None:
        """Same as calling the program."""
        self(*args, config=config)

    def dispatch_on(self, worker: Any, args: list[Any], config: Any = None) -> None:
        """One dispatch on a prepared worker's persistent ranks (on the worker's driver thread of a submit): the
        plan in segments split at its HOST callbacks (``worker.rank_run``), each callback run on a SubWorker
        executor (``worker.run_callback``) on the host tensors, after the Out slices before it came back."""
        from pypto.runtime.distributed.resident import DistributedDeviceTensor

        from .rank_runner import drop_run, run_steps

        self._check_args(args)
        args = [*args, *self.plan.new_locals()]  # the plan's pl.create_tensor intermediates
        dc = self._config(config)
        paths = {n: str(p.output_dir) for n, p in self.programs.items()}
        token = secrets.token_hex(6)
        plan_json, chip = self.plan.to_json(), _chip_config(config)
        host_args = [a.ref if isinstance(a, DistributedDeviceTensor) else a for a in args]
        steps = self.plan.dispatches
        cuts = [i for i, d in enumerate(steps) if d.program.startswith("!")] + [len(steps)]
        persist = worker.window_persistence(self, bool(self.plan.windows))
        lo, done = 0, False
        try:
            for cut in cuts:
                last = cut == len(steps)
                run = worker.rank_run(run_steps, plan_json, paths, chip, host_args, token, lo, cut, last, persist,
                                      output_dir=dc.output_dir)
                done = last
                for rank in run.ranks:
                    for param, index, value in rank.value:
                        args[param][tuple(index)].copy_(value)
                self.last_run = run
                if not last:
                    self._callback(worker, steps[cut], args)
                    lo = cut + 1
        except Exception:
            if not done and worker.pool.closed is None:  # a callback failed: the ranks drop the run's windows
                worker.rank_run(drop_run, token)
            raise
        finally:
            remove_window_files(token)

    def _callback(self, worker: Any, step: Any, args: list[Any]) -> None:
        """Run the HOST SubWorker of ``step`` on the host tensors: a bound callback gets the list of its
        arguments (``callback(args)``), a concrete SubWorker its arguments; a failure names the rank."""
        from pypto.runtime.distributed import DistributedRunError
        from pypto.runtime.distributed.resident import DistributedDeviceTensor

        name = step.program[1:]
        values: list[Any] = []
        for a in step.args:
            if isinstance(a, HostTensor):
                src, index = args[a.param], tuple(a.index)
                if isinstance(src, DistributedDeviceTensor):
                    index = index[1:] if src.stacked else index  # the shard step.rank holds is w[index[0]]
                    src = worker.read_tensor(src, step.rank)
                values.append(src[index] if index else src)
            else:
                values.append(a)
        bound = worker.callbacks.get(name)
        fn, abstract = self.sub_workers.get(name, (None, True))
        try:
            if bound is not None:
                worker.run_callback(bound, values)
            elif abstract or fn is None:
                raise RuntimeError(f"the abstract SubWorker {name!r} is dispatched unbound "
                                   f"(bind it with prepare(callbacks={{{name!r}: fn}}))")
            else:
                worker.run_callback(fn, *values)
        except Exception as exc:  # noqa: BLE001 - the user's callback: reported with its rank and task
            raise DistributedRunError({step.rank: (f"callback {name}", f"{type(exc).__name__}: {exc}")},
                                      self.plan.world_size) from exc

    def prepare(self, config: Any = None, *, extra_compiled: Any = (), persistent: bool = False,
                reset_persistent_windows: bool | None = None, callbacks: Any = None,
                sub_worker_overrides: Any = None, startup_timeout_s: float | None = None) -> Any:
        """Upstream's prepared worker (``with compiled.prepare() as rt: rt(x, y)``): persistent rank processes
        for this program and ``extra_compiled`` (:class:`pypto.runtime.distributed.worker.DistributedWorker`).
        An abstract HOST SubWorker without a ``callbacks`` entry is a ``ValueError`` here, before anything
        starts. ``persistent=True`` keeps each program's windows on the ranks for the worker's life (made at
        its first dispatch; cleared before each later one unless ``reset_persistent_windows=False``)."""
        from pypto.runtime.distributed.worker import DistributedWorker

        return DistributedWorker(self, list(extra_compiled), callbacks=callbacks,
                                 sub_worker_overrides=sub_worker_overrides, config=config, persistent=persistent,
                                 reset_persistent_windows=reset_persistent_windows,
                                 startup_timeout_s=startup_timeout_s)


def check_host_args(params: list[dict[str, Any]], args: tuple[Any, ...] | list[Any], note: str = "") -> None:
    """Each argument against its parameter of an L3 build (``params``: ``distributed_meta.json``'s): a tensor
    (a host tensor or a prepared worker's resident tensor) of the parameter's shape and dtype, a number for a
    scalar. Worded as the single-chip run's check (:func:`pypto.runtime.run._device_args`): shape an
    :class:`~pypto.errors.InvalidArgumentError` (``note`` appended), the rest an
    :class:`~pypto.errors.ArgumentTypeError`."""
    for p, a in zip(params, args, strict=False):
        name, tensor = p.get("name", "?"), hasattr(a, "shape") and hasattr(a, "dtype")
        if p.get("scalar"):
            if tensor and len(a.shape) > 0:
                raise ArgumentTypeError(f"argument '{name}' is a scalar parameter, got a tensor of shape "
                                        f"{tuple(a.shape)}")
            if "value" in p and not _same_scalar(a, p["value"]):  # the plan holds the value it was traced with
                raise InvalidArgumentError(f"argument '{name}' is {a!r}; this L3 build's plan was traced with "
                                           f"{name}={p['value']!r} ({META_FILE}): the host orchestrator's scalars "
                                           "are fixed at compile time, recompile it for another value")  # fmt: skip
            continue
        if "shape" not in p:
            continue
        if not tensor:
            raise ArgumentTypeError(f"argument '{name}' must be a tensor (a torch.Tensor or a prepared worker's "
                                    f"resident tensor), got {type(a).__name__}")
        got, want = tuple(int(d) for d in a.shape), tuple(int(d) for d in p["shape"])
        if got != want:
            raise InvalidArgumentError(f"argument '{name}' has shape {got}; the program was compiled for {want}{note}")
        dtype = str(a.dtype).removeprefix("torch.")
        if "dtype" in p and dtype != p["dtype"]:
            raise ArgumentTypeError(f"argument '{name}' has dtype {dtype}; the program expects {p['dtype']}")


def _same_scalar(a: Any, want: Any) -> bool:
    """``a`` (a number, a 0-d tensor) is the recorded scalar ``want``."""
    if isinstance(a, str | bytes) or isinstance(a, bool) != isinstance(want, bool):
        return False
    try:
        return float(a) == float(want)
    except (TypeError, ValueError, RuntimeError):
        return False


def _chip_config(config: Any) -> Any:
    """The RunConfig each chip dispatch runs with (without the distributed part)."""
    if config is None or not hasattr(config, "distributed_config"):
        return None
    return replace(config, distributed_config=None)
