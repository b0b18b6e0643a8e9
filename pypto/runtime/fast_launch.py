"""A ``ChipWorker`` launch straight to its recorded plan, without :func:`~.run.run`'s look-ups.

A launch of a registered program goes through :func:`pypto.runtime.run`: the argument forms, the
program's spec and prepared form, the target (a ``stat`` of its file), each argument's device array,
the DFX flags and the plan key (:mod:`.cpp_plan`), about 0.05 ms of Python right after an interpreter
run. When such a launch was a replay, the worker remembers what those look-ups found (a
:class:`Launch`), and the next launch of the same name replays the same plan when nothing they read
changed:

- the name still holds the same program object; a Runnable's ``run_spec(args, config)`` is the same spec;
- the RunConfig (of the same class) has every field equal to the remembered one (``extra``'s items too),
  and no compile profiler is active or asked for by ``PYPTO_COMPILE_PROFILING``;
- the arguments are the same DeviceTensors, each holding the same array with the same shape and dtype;
- the plan is still its engine's (not dropped as stale nor evicted) and the engine still the program's;
- the kernels' ``.cpp``, the header and the target file are unchanged: the plan's stamps hold them all
  (:func:`.cpp_plan.replay`), which the full path checks too.

A launch is remembered only when all its arguments are DeviceTensors, its platform is a simulated one
and its ``RunConfig.target`` is None, a packaged target's name or an absolute path (a relative path
names another file from another directory). Anything else, or any difference, takes the full path;
a replay there is remembered in place of the one before (one per name; e.g. interpreter launches in
between keep it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.compile_profiling import ENV_VAR, profiling_wanted
from pypto.compile_profiling import current as current_profiler
from pypto.utils.tracebacks import api_boundary

from . import cpp_plan
from .cpp_engine import _ENGINES
from .run import _PREPARED, SIM_PLATFORMS, Prepared, RunResult
from .run import run as run_program
from .tensors import DeviceTensor


@dataclass
class Launch:
    """What a replayed launch's look-ups found (see the module doc)."""

    program: Any
    """The registered program (a Prepared or a Runnable)."""
    spec: Any
    """The Runnable's spec (None for a Prepared)."""
    config_type: type
    fields: list[Any]
    """The RunConfig's field values, in order."""
    extra: list[tuple[str, Any]]
    """``RunConfig.extra``'s items (the dict may be the same object, changed in place)."""
    tensors: tuple[DeviceTensor, ...]
    arrays: tuple[np.ndarray, ...]
    layouts: tuple[tuple[tuple[int, ...], np.dtype], ...]
    """Each array's (shape, dtype)."""
    prepared: Prepared
    engine: Any
    key: tuple[Any, ...]
    plan: cpp_plan.RunPlan


_ENVIRON = getattr(os.environ, "_data", None) if os.name == "posix" else None
"""``os.environ``'s own dict (bytes keys): a key looked up there raises no KeyError when it is missing, as
``os.environ.get`` does inside (about 6 µs right after an interpreter run)."""
_PROFILING_KEY = ENV_VAR.encode()


def _profiling(config: Any) -> bool:
    """:func:`pypto.compile_profiling.profiling_wanted` of the launch (the environment read only when the
    variable is set)."""
    if config.compile_profiling or current_profiler() is not None:
        return True
    if isinstance(_ENVIRON, dict) and _PROFILING_KEY not in _ENVIRON:
        return False
    return profiling_wanted(False)


def _same_config(launch: Launch, config: Any) -> bool:
    if type(config) is not launch.config_type:
        return False
    try:
        return list(vars(config).values()) == launch.fields and list(config.extra.items()) == launch.extra
    except Exception:  # a field replaced by an object whose == does not give a bool (an array, ...)
        return False


def _replayed(launch: Launch, program: Any, args: Sequence[Any], config: Any) -> RunResult | None:
    """The launch replayed from ``launch``'s plan, or None when something its look-ups read changed."""
    if launch.program is not program or len(args) != len(launch.tensors) or not _same_config(launch, config):
        return None
    for a, t, arr, (shape, dtype) in zip(args, launch.tensors, launch.arrays, launch.layouts, strict=True):
        if a is not t or a._array is not arr or arr.shape != shape or arr.dtype != dtype:
            return None
    if launch.spec is not None and program.run_spec(args, config) is not launch.spec:
        return None
    if _profiling(config):
        return None
    plan, engine, prepared = launch.plan, launch.engine, launch.prepared
    if plan.dropped or _ENGINES.get(id(prepared)) is not engine or engine.out_dir is not prepared.out_dir:
        return None
    return cpp_plan.replay_kept(engine, launch.key, plan, args, 0)


def _remembered(program: Any, args: Sequence[Any], config: Any) -> Launch | None:
    """The :class:`Launch` of the run that just ended, when it was a replay that may be remembered."""
    last = cpp_plan.LAST.replay
    if last is None:
        return None
    prepared, _target, key, plan = last
    target = config.target
    if not plan.target_stamped or config.platform not in SIM_PLATFORMS:
        return None
    if not (target is None or isinstance(target, str) and (os.path.isabs(target) or _packaged(target))):
        return None
    if not all(isinstance(a, DeviceTensor) for a in args):
        return None
    spec = None
    if isinstance(program, Prepared):
        if program is not prepared:  # the replay was of another program (a run nested in this one)
            return None
    else:
        spec = program.run_spec(args, config)
        if _PREPARED.get(spec) is not prepared:
            return None
    engine = _ENGINES.get(id(prepared))
    if engine is None or engine.plans.get(key) is not plan:
        return None
    arrays = tuple(a._array for a in args)
    return Launch(
        program=program,
        spec=spec,
        config_type=type(config),
        fields=list(vars(config).values()),
        extra=list(config.extra.items()),
        tensors=tuple(args),
        arrays=arrays,  # type: ignore[arg-type]
        layouts=tuple((a.shape, a.dtype) for a in arrays),  # type: ignore[union-attr]
        prepared=prepared,
        engine=engine,
        key=key,
        plan=plan,
    )


def _packaged(name: str) -> bool:
    from pypto.target.model import is_packaged_name

    return is_packaged_name(name)


@api_boundary
def launch(launches: dict[str, Launch], name: str, program: Any, args: Sequence[Any], config: Any) -> RunResult:
    """Run ``program`` (registered as ``name``) on ``args``: replayed from ``launches[name]`` when nothing
    changed, else through :func:`pypto.runtime.run`, remembering the launch when it was a replay."""
    remembered = launches.get(name)
    if remembered is not None:
        result = _replayed(remembered, program, args, config)
        if result is not None:
            return result
        if remembered.plan.dropped:  # of no more use (and it keeps the plan's arrays alive)
            del launches[name]
    cpp_plan.LAST.wanted, cpp_plan.LAST.replay = True, None
    try:
        result = run_program(program, *args, config=config)
        fresh = _remembered(program, args, config)
    finally:
        cpp_plan.LAST.wanted, cpp_plan.LAST.replay = False, None
    if fresh is not None:
        launches[name] = fresh
    return result
