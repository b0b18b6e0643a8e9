"""``CompiledProgram``: what ``compile`` returns (the output directory, the programs, the signature).

It is a :class:`pypto.runtime.Runnable`: calling it runs it on the simulated chip.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func

from pypto.core.program import Program
from pypto.dialects.enums import FunctionType, ParamDirection
from pypto.dialects.program import function_type, param_directions
from pypto.pipeline.backend import BackendType
from pypto.pipeline.lower import lower_program
from pypto.utils.tracebacks import api_boundary

from .output_dir import NEXT_LEVELS, REPORT_DIR

if TYPE_CHECKING:
    from pypto.runtime import RunSpec


class CompiledProgram:
    """The result of :func:`compile`: the output directory (path-like), the
    input program, the lowered program and the entry's signature."""

    def __init__(
        self,
        output_dir: Path,
        program: Program | None,
        lowered: Program | None = None,
        *,
        platform: str = "a2a3sim",
        backend_type: BackendType | str = BackendType.Ascend910B,
    ):
        self.output_dir = Path(output_dir)
        self.program = program
        self.lowered = lowered
        self.platform = platform
        self.backend_type = BackendType(getattr(backend_type, "value", backend_type))
        self.orchestration_names: list[str] = []
        self.param_names: list[str] = []
        self.param_shapes: list[tuple[int, ...] | None] = []
        """The entry's tensor parameters' static shapes (None: a scalar, or a dynamic extent)."""
        self.output_indices: list[int] = []
        self.has_return = False
        self._run_spec: RunSpec | None = None
        self._from_dir = False
        self.sub_programs: dict[str, CompiledProgram] = {}
        """A build of several Orchestration entries: each entry's own build (``next_levels/<name>/``)."""
        self._read_signature()

    @property
    def name(self) -> str:
        """The program's name (an entry of a multi-entry build: the entry's)."""
        return getattr(self.program, "name", None) or self.output_dir.name

    def __getitem__(self, name: str) -> CompiledProgram:
        """``compiled["entry"]``: one Orchestration entry of a multi-entry build, a program of its own."""
        subs = self.__dict__.get("sub_programs", {})
        if name not in subs:
            raise KeyError(f"no orchestration {name!r} under {self.output_dir / NEXT_LEVELS}; available: "
                           f"{sorted(subs) or 'none (a single-entry build is called directly)'}")
        return subs[name]

    def __getattr__(self, name: str) -> CompiledProgram:
        """``compiled.entry``: the same as ``compiled["entry"]``."""
        subs = self.__dict__.get("sub_programs", {})
        if name in subs:
            return subs[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _read_signature(self) -> None:
        final = self.lowered or self.program
        if final is None:
            return
        funcs = final.func_ops
        self.orchestration_names = [n for n, f in funcs.items() if function_type(f) is FunctionType.Orchestration]
        entry_name = self.orchestration_names[0] if self.orchestration_names else next(iter(funcs), None)
        if entry_name is None:
            return
        source_funcs = self.program.func_ops if self.program is not None else {}
        entry: func.FuncOp = source_funcs.get(entry_name) or funcs[entry_name]
        self.param_names = [a.name_hint or f"arg{i}" for i, a in enumerate(entry.body.block.args)]
        self.param_shapes = [_static_shape(a.type) for a in entry.body.block.args]
        outs = (ParamDirection.Out, ParamDirection.InOut)
        self.output_indices = [i for i, d in enumerate(param_directions(entry)) if d in outs]
        self.has_return = bool(entry.function_type.outputs.data)

    @classmethod
    def from_dir(
        cls, work_dir: str | os.PathLike[str], platform: str | None = None, backend_type: BackendType | str | None = None
    ) -> CompiledProgram:
        """A callable program from a build directory's metadata (``compiled_meta.json``, ``kernel_config.py``):
        no recompile, no ``.pto`` splice, no binary-cache invalidation (``pypto.runtime.debug`` does those).
        ``platform`` / ``backend_type`` default to the recorded ones; ``program`` is None. A missing or
        malformed file is a ``BuildDirError`` naming it."""
        from pypto.runtime import backend_for_platform
        from pypto.runtime.build_dir import read_kernel_config, read_meta

        out = Path(work_dir).resolve()
        meta = read_meta(out)
        read_kernel_config(out)
        platform = platform or meta.platform
        if backend_type is None:
            backend_type = meta.backend_type if platform == meta.platform else backend_for_platform(platform)
        obj = cls(out, None, None, platform=platform, backend_type=backend_type)
        obj.param_names = meta.param_names
        obj.param_shapes = [_static_dims(p.shape) if p.shape else None for p in meta.params]
        obj.output_indices = [i for i, p in enumerate(meta.params) if p.is_output]
        obj.has_return = meta.num_return_types > 0
        obj._from_dir = True
        return obj

    def __fspath__(self) -> str:
        return str(self.output_dir)

    def __str__(self) -> str:
        return str(self.output_dir)

    def __repr__(self) -> str:
        return f"CompiledProgram({str(self.output_dir)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompiledProgram):
            return self.output_dir == other.output_dir
        if isinstance(other, (str, os.PathLike)):
            return self.output_dir == Path(other).resolve()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.output_dir)

    @property
    def passes_dump(self) -> Path:
        return self.output_dir / "passes_dump"

    @property
    def report_dir(self) -> Path:
        return self.output_dir / REPORT_DIR

    # ---- pypto.debug: per-pass numeric validation (owned by the debug tools) ----

    def validate_ir(
        self, tensors: dict[str, Any], expected: dict[str, Any], *, rtol: float = 5e-2, atol: float = 5e-2
    ) -> None:
        """Run every dump of ``<output_dir>/passes_dump`` through torch codegen
        and check ``expected`` (see ``pypto.debug.validate_pass_ir_codegen_results``);
        ``FileNotFoundError`` when the build has no pass dumps."""
        from pypto.debug import validate_pass_ir_codegen_results  # torch: imported only when used

        dumps = self.output_dir / "passes_dump"
        if not dumps.is_dir():
            raise FileNotFoundError(f"no passes_dump/ under {self.output_dir}; compile with dump_passes=True")
        validate_pass_ir_codegen_results(str(dumps), tensors, expected, rtol=rtol, atol=atol)

    # ---- pypto.runtime: run on the simulated chip (owned by the runtime) ----

    def run_spec(self, args: Sequence[Any] = (), config: Any = None) -> RunSpec:
        """The :class:`pypto.runtime.Runnable` side: the :class:`~pypto.runtime.RunSpec` of this program
        (the lowered program, entry, parameter names, output directory and platform; lowered now when only
        the input is known), the same object on every call. ``ValueError`` when there is no program."""
        if self._run_spec is not None:  # every launch after the first (before the import below: it costs µs)
            return self._run_spec
        from pypto.runtime import RunSpec  # the runtime (numpy) is imported when a program runs

        if self._run_spec is None and self._from_dir:
            from pypto.runtime.build_dir import load_run_spec

            self._run_spec = load_run_spec(self.output_dir, self.platform, self.backend_type.value)
        if self._run_spec is None:
            program = self.lowered or (lower_program(self.program) if self.program is not None else None)
            if program is None:
                raise ValueError(f"{self!r} has no program to run (loaded from a directory?)")
            entry_name = self.orchestration_names[0] if self.orchestration_names else None
            self._run_spec = RunSpec(
                program, entry_name, list(self.param_names), self.output_dir, self.platform, self.backend_type.value
            )
        return self._run_spec

    @api_boundary
    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run on the simulated chip (``pypto.runtime.run``): Out/InOut tensors
        are written into ``args``; returns what the Orchestration function
        returns. The :class:`~pypto.runtime.RunResult` is kept in ``last_run``
        (None with ``config.codegen_only``)."""
        from pypto.runtime import RunConfig, run

        if self.sub_programs:
            raise TypeError(f"{self!r} has several Orchestration entries {sorted(self.sub_programs)}; select one "
                            "explicitly: compiled['<name>'](...) or compiled.<name>(...)")
        if config is not None and getattr(config, "codegen_only", False):
            self.last_run = None
            return None
        if config is None:
            config = RunConfig(platform=self.platform)
        self.last_run = run(self, *args, config=config)
        return self.last_run.outputs


def _static_shape(t: Any) -> tuple[int, ...] | None:
    """A tensor type's shape when every extent is static, else None."""
    get = getattr(t, "get_shape", None)
    if get is None:
        return None
    return _static_dims(get())


def _static_dims(dims: Any) -> tuple[int, ...] | None:
    """``dims`` as ints when every one is a static extent, else None."""
    try:
        shape = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        return None
    return shape if all(d >= 0 for d in shape) else None
