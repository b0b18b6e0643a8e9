"""Replay a build directory on the simulated chip, without the Python source.

::

    from pypto.runtime import RunConfig
    from pypto.runtime.debug import replay
    result = replay("build_output/<dir>", a, b, out, config=RunConfig(enable_pmu=2, enable_chip_swimlane=4))

    python -m pypto.runtime.debug.replay build_output/<dir> --pmu 2 --swimlane --dump-args --dep-gen --scope-stats

Before anything is written, the directory is checked: ``compiled_meta.json``, ``kernel_config.py``, the
orchestration it names and every kernel's ``ptoas/<unit>.pto`` must read (parse and verify); a problem is a
:class:`~pypto.runtime.build_dir.BuildDirError` naming the file (the ``.pto`` line too) with nothing changed.
Then edited ``.pto`` units are spliced into their kernel C++ (``rebuild_from_pto``;
:mod:`.pto_rebuild`), the C++ engine's binary cache is dropped (``recompile``) and the run writes its
artefacts per the config's flags; once it succeeded ``dfx_outputs/`` holds them alone (a failed run leaves the
earlier run's: the runtime moves those it would have replaced to ``dfx_outputs/previous/``). The simulated chip runs the directory's ``.pto`` units
(the edited text), the orchestration in ``orchestration/`` and the parameters of ``compiled_meta.json``.

Inputs: the tensors given; none -> ``golden.py``'s ``generate_inputs`` when there is one, else inputs built
from the recorded shapes and dtypes. ``validate=True`` compares the outputs with ``golden.py``.

An L3 (distributed) build (:func:`is_l3_build`) replays through ``pypto.driver.l3_replay`` (:func:`l3_replayer`):
every ``next_levels/<name>/`` sub-build is checked and spliced as above, then the plan runs on its ranks.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pypto.errors import InvalidArgumentError
from pypto.utils.cli import cli_main

from ..build_dir import (
    GOLDEN,
    KERNEL_CONFIG,
    META,
    BuildDirError,
    BuildDirProgram,
    BuildMeta,
    absent,
    load_run_spec,
    read_kernel_config,
    read_meta,
)
from ..config import KERNEL_ENGINES, RunConfig
from ..dfx.base import DFX_DIR, RECORDED_LEVEL
from ..golden_file import (
    check_outputs,
    expected_outputs,
    generate_inputs,
    inputs_from_meta,
    load_golden,
    mismatched_input,
    run_user_code,
    user_inputs,
)
from ..run import SIMULATE_NPU_ENV, RunResult, run, runnable_platforms
from .pto_rebuild import (
    apply_rebuild,
    assemble_unit,
    invalidate_binary_cache,
    plan_rebuild,
    rebuild_disabled,
    stale_units,
)


def is_l3_build(work_dir: Path) -> bool:
    """An L3 (distributed) build: ``orchestration/host_orch.py`` and no top-level ``kernel_config.py`` (§9)."""
    return not (work_dir / KERNEL_CONFIG).exists() and (work_dir / "orchestration" / "host_orch.py").exists()


def l3_replayer() -> Any:
    """The module that replays L3 builds (``pypto.driver.l3_replay``: the L3 program lives in the driver layer,
    above this one), found through the ``pypto.replay`` entry point ``l3`` that ``pyproject.toml`` declares."""
    from importlib.metadata import entry_points

    found = list(entry_points(group="pypto.replay", name="l3"))
    if not found:
        raise BuildDirError(Path("."), "no L3 replayer is installed (the pypto.replay entry point 'l3'): install "
                            "the project (pip install -e .) to replay L3 builds")  # fmt: skip
    return found[0].load()


def check_build(work_dir: Path) -> None:
    """Fail early (BuildDirError) when ``work_dir`` is not a build directory replay runs."""
    if not work_dir.is_dir():
        raise BuildDirError(work_dir, "not a directory; expected a build directory (build_output/<name>_...)")
    if is_l3_build(work_dir):
        return
    host_orch = work_dir / "orchestration" / "host_orch.py"
    if not (work_dir / KERNEL_CONFIG).exists() and (work_dir / L3_META).is_file():
        raise BuildDirError(host_orch, f"{absent(host_orch)}; an L3 build ({L3_META}) holds orchestration/host_orch.py, "
                            "written by compile: recompile the @pl.jit.host program into this directory")  # fmt: skip
    if not (work_dir / KERNEL_CONFIG).exists() and (work_dir / "next_levels").is_dir():
        found = (work_dir / "next_levels").glob(f"*/{KERNEL_CONFIG}")
        entries = sorted(str(d.parent.relative_to(work_dir)) for d in found)
        if entries:
            raise BuildDirError(work_dir, f"a build of {len(entries)} Orchestration entries, each a build directory of "
                                f"its own: replay one of {', '.join(entries)}")  # fmt: skip


def preflight(work: Path, rebuild: bool) -> tuple[Any, list[Any]]:
    """Everything read and checked before a write: the kernel config, and the splices to make."""
    read_meta(work)
    kc = read_kernel_config(work)
    for k in kc.kernels:
        pto = work / "ptoas" / f"{k.name}.pto"
        if not pto.is_file():
            raise BuildDirError(pto, f"{absent(pto)}; {KERNEL_CONFIG} lists kernel {k.name!r}, whose .pto unit the "
                                "simulated chip runs")  # fmt: skip
    plans = plan_rebuild(work, [k.name for k in kc.kernels]) if rebuild else []
    planned = {p.unit.resolve() for p in plans}
    for k in kc.kernels:  # the units not re-assembled must still parse, verify and define their kernel
        pto = work / "ptoas" / f"{k.name}.pto"
        if pto.resolve() not in planned:
            assemble_unit(pto, k.name)
    return kc, plans


def replay(
    work_dir: Path | str,
    *tensors: Any,
    config: RunConfig | None = None,
    recompile: bool = True,
    rebuild_from_pto: bool = True,
    validate: bool = False,
) -> RunResult:
    """Run the build in ``work_dir`` (module docstring); returns the :class:`~pypto.runtime.RunResult`.

    ``tensors``: the entry's arguments in parameter order (Out/InOut written in place), none for the
    directory's own inputs; ``config``: platform, DFX flags (``RunConfig()`` when None);
    ``recompile``: drop the C++ engine's cached binaries (False: ``config.recompile_kernels=False``);
    ``rebuild_from_pto``: splice edited ``.pto`` into the kernel C++ (also off with
    ``PYPTO_REBUILD_FROM_PTO=0``); ``validate``: check the outputs against ``golden.py``
    (AssertionError naming the output that differs)."""
    work = Path(work_dir)
    check_build(work)
    config = config if config is not None else RunConfig()
    rebuild = rebuild_from_pto and not rebuild_disabled()
    why = "rebuild_from_pto=False" if not rebuild_from_pto else "PYPTO_REBUILD_FROM_PTO=0"
    if is_l3_build(work):
        return _replay_l3(work, tensors, config, recompile, rebuild, validate, "" if rebuild else why)
    kc, plans = preflight(work, rebuild)
    meta = read_meta(work)
    spec = load_run_spec(work, config.platform, None)
    golden, named, expected = _inputs(work, meta, META, tensors, validate)

    # ---- writes from here on ----
    if rebuild:
        touched = apply_rebuild(work, plans)
        print(f"[pto->cpp] updated {len(touched)} kernel cpp(s)" if touched else "[pto->cpp] no .pto changes detected")
    else:
        stale = [str(p.relative_to(work)) for p in stale_units(work)]
        print(f"[pto->cpp] skipped ({why})" + (f"; edited but not spliced: {', '.join(stale)}" if stale else ""))
    if recompile:
        invalidate_binary_cache(work)
    elif hasattr(config, "recompile_kernels"):
        config = dataclasses.replace(config, recompile_kernels=False)
    if config.aicpu_thread_num is None and kc.aicpu_thread_num > 0:
        config = dataclasses.replace(config, aicpu_thread_num=kc.aicpu_thread_num)
    result = run(_Spec(spec), *[v for _, v in named], config=config)
    keep_only_written(work / DFX_DIR, result.dfx_outputs)
    result.replay_inputs = named  # type: ignore[attr-defined]
    if expected is not None:
        check_outputs(golden, named, expected)
    return result


def _replay_l3(work: Path, tensors: Sequence[Any], config: RunConfig, recompile: bool, rebuild: bool,
               validate: bool, why_skipped: str) -> Any:
    """:func:`replay` of an L3 build (:mod:`pypto.driver.l3_replay`); returns its ``DistributedRun``."""
    l3 = l3_replayer()
    program = l3.load(work, platform=config.platform)  # read once: its metadata, then its run
    meta = l3.meta_of(program, work / L3_META)
    golden, named, expected = _inputs(work, meta, L3_META, tensors, validate)
    run_result = l3.replay(work, *[v for _, v in named], config=config, recompile=recompile, rebuild=rebuild,
                           why_skipped=why_skipped, program=program)
    run_result.replay_inputs = named
    if expected is not None:
        check_outputs(golden, named, expected)
    return run_result


def _inputs(work: Path, meta: BuildMeta, meta_file: str, tensors: Sequence[Any],
            validate: bool) -> tuple[Any, list[tuple[str, Any]], dict[str, Any] | None]:
    """The replay's golden module (or None), its arguments as ``(name, value)`` pairs, and the outputs golden.py
    expects when ``validate``: the ``tensors`` given (checked against ``meta``, read from ``meta_file``), else
    golden.py's ``generate_inputs``, else inputs made from the recorded shapes and dtypes. Nothing is written."""
    golden = load_golden(work) if validate or (not tensors and (work / GOLDEN).is_file()) else None
    if not tensors:
        if golden is not None:
            named = generate_inputs(golden, meta, meta_file)
        else:
            named = inputs_from_meta(meta, work / meta_file)
    else:
        if len(tensors) != len(meta.params):
            raise TypeError(f"replay: the build takes {len(meta.params)} arguments ({', '.join(meta.param_names)}), "
                            f"got {len(tensors)}")  # fmt: skip
        named = list(zip(meta.param_names, tensors, strict=True))
        bad = mismatched_input(named, meta, meta_file)
        if bad is not None:
            raise InvalidArgumentError(f"replay: argument {bad}")
    expected = expected_outputs(golden, named) if validate and golden is not None else None
    return golden, named, expected


L3_META = "distributed_meta.json"
"""An L3 build's metadata (its parameters, platform, ``distributed_config`` and plan)."""


def keep_only_written(out: Path, written: dict[str, list[Path]]) -> None:
    """After a run that succeeded, remove what ``out`` (``dfx_outputs/``) holds besides the artefacts the run
    wrote (``written``: ``RunResult.dfx_outputs``), so it holds this run's alone (none: ``out`` goes). Never
    before the run: a replay that fails keeps the earlier run's artefacts (the runtime moves those its flags
    would have replaced to ``dfx_outputs/previous/``). A symlink or a file at ``out`` is left as it is."""
    keep = {p.resolve() for paths in written.values() for p in paths}
    if out.is_symlink() or not out.is_dir():
        return
    if keep:
        _remove_unkept(out, keep)
    else:
        shutil.rmtree(out, ignore_errors=True)


def _remove_unkept(folder: Path, keep: set[Path]) -> None:
    """Remove the entries of ``folder`` that are not in ``keep`` and hold nothing in it."""
    for entry in sorted(folder.iterdir()):
        path = entry.resolve()
        if path in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            if any(path in k.parents for k in keep):
                _remove_unkept(entry, keep)
            else:
                shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink(missing_ok=True)


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to the build folder ``root`` (resolved) when it is under it, else as it is; links are
    not followed (``dfx_outputs/`` may be a link to another disk)."""
    path = Path(os.path.abspath(path))
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


class _Spec(BuildDirProgram):
    """A loaded spec as a Runnable."""

    def __init__(self, spec: Any):
        super().__init__(spec.output_dir)
        self._spec = spec


# ---- command line ------------------------------------------------------------------------------------------------------


def _parser(default_platform: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pypto.runtime.debug.replay",
        description="Re-run a build directory on the simulated chip (edited .pto spliced in), "
        "writing a fresh dfx_outputs/ per the flags.",
    )
    p.add_argument("work_dir", type=Path, help="the build directory (build_output/<name>_...)")
    p.add_argument("--platform", default=default_platform, choices=runnable_platforms(),
                   help="simulated platform (default: the recorded one); offered: the ones that run here (a packaged "
                   f"target; a hardware one only with {SIMULATE_NPU_ENV}=1)")  # fmt: skip
    p.add_argument("--pmu", type=_non_negative, default=0, metavar="N",
                   help="PMU event type (dfx_outputs/pmu.csv; 0: off)")  # fmt: skip
    p.add_argument("--swimlane", action="store_const", const=RECORDED_LEVEL, default=0,
                   help=f"swimlane records at level {RECORDED_LEVEL} (use --swimlane-level N for less)")  # fmt: skip
    p.add_argument("--swimlane-level", type=int, default=None, choices=range(RECORDED_LEVEL + 1), metavar="N",
                   help="swimlane level 0-4 (takes precedence over --swimlane)")  # fmt: skip
    p.add_argument("--dump-args", nargs="?", type=int, const=1, default=0, choices=range(3), metavar="N",
                   help="argument dump: bare = 1 (marked tensors), 2 = every argument")  # fmt: skip
    p.add_argument("--dep-gen", action="store_true", help="dfx_outputs/deps.json")
    p.add_argument("--scope-stats", action="store_true", help="dfx_outputs/scope_stats/scope_stats.jsonl")
    p.add_argument(
        "--incore-trace", action="store_true", help="dfx_outputs/incore/: in-core trace and bottleneck table"
    )
    p.add_argument("--kernel-engine", choices=KERNEL_ENGINES, default="interpreter",
                   help="what computes the numbers: the interpreter, the kernels' compiled C++, or both (their "
                   "differences are reported)")  # fmt: skip
    p.add_argument("--no-recompile", action="store_true", help="keep the C++ engine's cached kernel binaries")
    p.add_argument("--no-rebuild-from-pto", action="store_true", help="do not splice edited .pto into the kernel C++")
    p.add_argument("--validate", action=argparse.BooleanOptionalAction, default=None,
                   help="check the outputs against golden.py (default: when there is one)")  # fmt: skip
    p.add_argument("--log-level", type=_log_level, default=None, metavar="LEVEL",
                   help="PyPTO log level (debug, info, warn, error, null)")  # fmt: skip
    return p


def _non_negative(text: str) -> int:
    """An argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid non-negative integer: {text!r}")
    return value


def _log_level(text: str) -> Any:
    """An argparse type: a PyPTO log level by name or number (``null``: none, ``timing``: info)."""
    from pypto.log import parse_level

    try:
        return parse_level({"null": "none", "timing": "info"}.get(text.strip().lower(), text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _set_log_level(level: Any) -> None:
    from pypto.log import set_log_level

    set_log_level(level)


@cli_main("replay")
def main(
    argv: Sequence[str] | None = None,
    *,
    inline_inputs: Callable[[], Sequence[tuple[str, Any]]] | None = None,
    user_compare: Callable[..., None] | None = None,
    default_platform: str | None = None,
) -> int:
    """The command line (also ``debug/run.py``'s, which passes its ``make_inputs`` and ``_user_compare``);
    returns the exit code: 0, 1 for a bad directory / failed validation (one ``error:`` line, no traceback)."""
    args = _parser(default_platform).parse_args(argv)
    if args.log_level is not None:
        _set_log_level(args.log_level)
    work: Path = args.work_dir
    check_build(work)
    l3 = is_l3_build(work)
    meta = l3_replayer().read_meta(work) if l3 else read_meta(work)
    meta_path = work / (L3_META if l3 else META)
    has_golden = (work / GOLDEN).is_file()
    validate = has_golden if args.validate is None else args.validate
    if validate and not has_golden:
        raise BuildDirError(
            work / GOLDEN, f"{absent(work / GOLDEN)}; --validate needs the golden.py compile writes for a golden"
        )
    golden = load_golden(work) if validate or (has_golden and inline_inputs is None) else None
    if golden is not None:
        named = generate_inputs(golden, meta, meta_path.name)
    elif inline_inputs is not None:
        named = user_inputs(None, "make_inputs", inline_inputs, meta=meta, meta_file=meta_path.name)
    else:
        named = inputs_from_meta(meta, meta_path)
    config = RunConfig(
        platform=args.platform or meta.platform,
        enable_pmu=args.pmu,
        enable_chip_swimlane=args.swimlane_level if args.swimlane_level is not None else args.swimlane,
        enable_dump_args=args.dump_args,
        enable_dep_gen=args.dep_gen,
        enable_scope_stats=args.scope_stats,
        enable_incore_trace=args.incore_trace,
        kernel_engine=args.kernel_engine,
    )
    expected = expected_outputs(golden, named) if validate and golden is not None else None  # before: InOut
    result = replay(work, *[v for _, v in named], config=config, recompile=not args.no_recompile,
                    rebuild_from_pto=not args.no_rebuild_from_pto)  # fmt: skip
    print(result.summary())  # the numbers of the run also when its outputs then differ from golden.py's
    root = work.resolve()
    if l3:  # each rank's chip dispatches wrote dfx_outputs/rank{r}/d{k}/ in its own process
        dfx = work / DFX_DIR
        found = [p for p in dfx.rglob("*") if p.is_file() and "previous" not in p.relative_to(dfx).parts]
        written = sorted(_shown(p, root) for p in found)
    else:
        written = sorted({_shown(p, root) for paths in result.dfx_outputs.values() for p in paths})
    print(f"dfx_outputs: {', '.join(written)}" if written else "dfx_outputs: none (no DFX flag given)")
    if expected is not None:
        check_outputs(golden, named, expected)
        print(f"golden validation: PASSED ({', '.join(p.name for p in meta.params if p.is_output)})")
    elif user_compare is not None:
        run_user_code(None, "_user_compare", user_compare, *[v for _, v in named])
    return 0
