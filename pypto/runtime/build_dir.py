"""The build-directory contract (runtime-dfx-formats.md §9): what compile writes so a build re-runs alone.

::

    <build>/kernel_config.py        RUNTIME_CONFIG, ORCHESTRATION, KERNELS (func_id, name, source, core_type, signature)
    <build>/compiled_meta.json      {schema: 1, params[{name, direction, shape, dtype}], num_return_types,
                                     platform, backend_type}
    <build>/orchestration/<entry>.py  the lowered program (host orchestration + kernel signatures) as pl DSL text
    <build>/golden.py               with a golden (pypto.runtime.golden_file)
    <build>/debug/run.py            the re-runner (pypto.runtime.debug.run_script), unless PYPTO_EMIT_DEBUG_RUNNER=0

:func:`write_build_files` writes them (atomically; the same program gives the same bytes). The readers
(:func:`read_meta`, :func:`read_kernel_config`, :func:`load_run_spec`) check what they read and raise
:class:`BuildDirError` naming the file and what was expected. ``kernel_config.py`` is read as data (its
assignments' literals), never executed. :class:`BuildDirProgram` is a build directory as a
:class:`~.runnable.Runnable`.
"""

from __future__ import annotations

import ast
import codecs
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects import func

from pypto.dialects.dtypes import dtype_name
from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type, param_directions
from pypto.dialects.types import TensorType
from pypto.errors import Error
from pypto.target.dtypes import BY_NAME, ROWS
from pypto.utils.atomic import atomic_write_text
from pypto.utils.cli import utf8_fault

from .config import PLATFORMS
from .runnable import RunSpec

KERNEL_CONFIG = "kernel_config.py"
META = "compiled_meta.json"
ORCHESTRATION_DIR = "orchestration"
GOLDEN = "golden.py"
DEBUG_RUNNER = "debug/run.py"
META_SCHEMA = 1
RUNTIME_NAME = "tensormap_and_ringbuffer"
DIRECTIONS = ("In", "Out", "InOut")


class BuildDirError(Error):
    """A build directory is missing a file or holds one that does not read as the contract says."""

    def __init__(self, path: Path | str, message: str):
        super().__init__(f"{path}: error: {message}")
        self.path = Path(path)
        self.message = message


# ---- metadata -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamMeta:
    """One parameter of the entry: name, direction (``In``/``Out``/``InOut``), shape (``[]`` for a scalar), dtype;
    ``value``: a scalar's fixed value (an L3 build's host scalar, traced into its plan), else None."""

    name: str
    direction: str
    shape: list[int]
    dtype: str
    value: Any = None

    @property
    def is_output(self) -> bool:
        return self.direction != "In"

    @property
    def is_tensor(self) -> bool:
        return bool(self.shape)


@dataclass
class BuildMeta:
    """``compiled_meta.json``."""

    params: list[ParamMeta]
    num_return_types: int
    platform: str
    backend_type: str

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def to_json(self) -> str:
        data = {
            "schema": META_SCHEMA,
            "params": [{"name": p.name, "direction": p.direction, "shape": p.shape, "dtype": p.dtype} for p in self.params],
            "num_return_types": self.num_return_types,
            "platform": self.platform,
            "backend_type": self.backend_type,
        }
        return json.dumps(data, indent=2) + "\n"


def dtype_label(element_type: Any) -> str:
    """The metadata name of an element type: pto-isa's (``fp32``), else the DSL's in lower case."""
    row = BY_NAME[dtype_name(element_type)]
    return row.pto or row.name.lower()


def torch_dtype_name(label: str) -> str:
    """The torch dtype name (``float32``) of a metadata dtype (``fp32``); ValueError when torch has none."""
    for row in ROWS:
        if label in (row.pto, row.name.lower()) and row.torch is not None:
            return row.torch
    raise ValueError(f"dtype {label!r} has no torch dtype")


def meta_of(entry: func.FuncOp, param_names: Sequence[str], platform: str, backend_type: str) -> BuildMeta:
    """The metadata of the entry function ``entry`` (the caller's parameter names)."""
    params: list[ParamMeta] = []
    dirs = param_directions(entry)
    for i, (arg, d) in enumerate(zip(entry.body.block.args, dirs, strict=True)):
        name = param_names[i] if i < len(param_names) else (arg.name_hint or f"arg{i}")
        t = arg.type
        if isinstance(t, TensorType):
            params.append(ParamMeta(name, str(d.value), [int(s) for s in t.get_shape()], dtype_label(t.element_type)))
        else:
            params.append(ParamMeta(name, str(d.value), [], dtype_label(t) if _is_dtype(t) else str(t)))
    return BuildMeta(params, len(entry.function_type.outputs.data), platform, str(backend_type))


def _is_dtype(t: Any) -> bool:
    try:
        dtype_name(t)
    except ValueError:
        return False
    return True


def absent(path: Path) -> str:
    """How a build file that is not a regular file is absent: ``a directory, not a file`` or ``missing``."""
    return "a directory, not a file" if path.is_dir() else "missing"


def read_build_text(path: Path, *, strip_bom: bool = False) -> str:
    """The UTF-8 text of the build file ``path``; a BuildDirError naming it when it cannot be read, located at
    the line and column of the first byte that is not UTF-8. ``strip_bom``: without a leading byte-order mark
    (an editor's "UTF-8 with BOM"; Python and JSON readers take the file so)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BuildDirError(path, f"cannot read: {e.strerror or e}") from None
    skip = len(codecs.BOM_UTF8) if strip_bom and data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as e:  # located in the file as it is, its mark included
        line, col, fault = utf8_fault(data, UnicodeDecodeError("utf-8", data, e.start + skip, e.end + skip, e.reason))
        raise BuildDirError(f"{path}:{line}:{col}", f"not UTF-8 text ({fault}); save the file as UTF-8") from None


def read_meta(work_dir: Path | str) -> BuildMeta:
    """``<work_dir>/compiled_meta.json``, checked (BuildDirError naming the file otherwise)."""
    path = Path(work_dir) / META
    if not path.is_file():
        raise BuildDirError(path, f"{absent(path)}; a build directory holds compiled_meta.json (schema 1), written by "
                            "compile")  # fmt: skip
    text = read_build_text(path, strip_bom=True)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise BuildDirError(f"{path}:{e.lineno}:{e.colno}", f"not valid JSON: {e.msg}") from None
    expected = "a JSON object {schema: 1, params: [...], num_return_types, platform, backend_type}"
    if not isinstance(data, dict) or data.get("schema") != META_SCHEMA:
        raise BuildDirError(path, f"expected {expected}, got schema {data.get('schema') if isinstance(data, dict) else data!r}")
    try:
        params = [
            ParamMeta(str(p["name"]), str(p["direction"]), [int(s) for s in p["shape"]], str(p["dtype"]))
            for p in data["params"]
        ]
        meta = BuildMeta(params, int(data["num_return_types"]), str(data["platform"]), str(data["backend_type"]))
    except (KeyError, TypeError, ValueError) as e:
        raise BuildDirError(path, f"expected {expected}; {type(e).__name__}: {e}") from None
    bad = [p.name for p in params if p.direction not in DIRECTIONS]
    if bad:
        raise BuildDirError(path, f"parameter {bad[0]!r}: direction must be one of {', '.join(DIRECTIONS)}")
    known = {r.pto or r.name.lower() for r in ROWS}
    for p in params:
        if p.is_tensor and p.dtype not in known:
            raise BuildDirError(path, f"parameter {p.name!r}: dtype {p.dtype!r} is not a tensor dtype; expected one "
                                f"of {', '.join(sorted(known))}")  # fmt: skip
    if meta.platform not in PLATFORMS:
        raise BuildDirError(path, f"platform {meta.platform!r} is unknown; expected one of {', '.join(PLATFORMS)}")
    return meta


def check_meta_matches(meta: BuildMeta, entry: func.FuncOp, work_dir: Path, orchestration: Path) -> None:
    """BuildDirError naming ``compiled_meta.json`` when its parameters are not those of ``entry`` (the
    orchestration's entry function, in ``orchestration``): their number, directions, shapes and dtypes."""
    path, where = work_dir / META, f"@{entry.sym_name.data} in {orchestration.relative_to(work_dir)}"
    want = meta_of(entry, meta.param_names, meta.platform, meta.backend_type).params
    if len(want) != len(meta.params):
        raise BuildDirError(path, f"lists {len(meta.params)} parameters ({', '.join(meta.param_names)}), but {where} "
                            f"takes {len(want)}")  # fmt: skip
    for got, expected in zip(meta.params, want, strict=True):
        for what in ("direction", "shape", "dtype"):
            if getattr(got, what) != getattr(expected, what):
                raise BuildDirError(path, f"parameter {got.name!r}: {what} {getattr(got, what)}, but {where} "
                                    f"takes {getattr(expected, what)}")  # fmt: skip


# ---- kernel_config.py ---------------------------------------------------------------------------------------------


@dataclass
class KernelEntry:
    """One ``KERNELS`` row."""

    func_id: int
    name: str
    source: str
    core_type: str
    signature: list[str] = field(default_factory=list)


@dataclass
class KernelConfig:
    """``kernel_config.py`` as data."""

    runtime_config: dict[str, Any]
    orchestration: dict[str, Any]
    kernels: list[KernelEntry]

    @property
    def aicpu_thread_num(self) -> int:
        return int(self.runtime_config.get("aicpu_thread_num", 0))


def kernel_config_text(runtime_config: dict[str, Any], orchestration: dict[str, Any], kernels: list[KernelEntry]) -> str:
    """The text of ``kernel_config.py`` (plain literals: readable as data without running it)."""
    lines = [
        "# Kernel and orchestration configuration of this build (runtime-dfx-formats.md 9).",
        "# Paths are relative to this directory. Read by pypto.runtime.debug.replay as data (never executed).",
        "",
        "RUNTIME_CONFIG = {",
        *[f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in runtime_config.items()],
        "}",
        "",
        "ORCHESTRATION = {",
        *[f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in orchestration.items()],
        "}",
        "",
        "KERNELS = [",
    ]
    for k in kernels:
        row = {"func_id": k.func_id, "name": k.name, "source": k.source, "core_type": k.core_type, "signature": k.signature}
        lines.append(f"    {json.dumps(row)},")
    lines += ["]", ""]
    return "\n".join(lines)


def read_kernel_config(work_dir: Path | str) -> KernelConfig:
    """``<work_dir>/kernel_config.py`` read as data; BuildDirError (file, line, what was expected) otherwise."""
    path = Path(work_dir) / KERNEL_CONFIG
    if not path.is_file():
        raise BuildDirError(path, f"{absent(path)}; a build directory holds kernel_config.py, written by compile")
    text = read_build_text(path, strip_bom=True)
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise BuildDirError(syntax_error_location(path, e), f"not valid Python: {e.msg}") from None
    values: dict[str, Any] = {}
    nodes: dict[str, ast.Assign] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("RUNTIME_CONFIG", "ORCHESTRATION", "KERNELS"):
                nodes[name] = node
                try:
                    values[name] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # {[]: 1}: unhashable
                    raise BuildDirError(f"{path}:{node.lineno}", f"{name} must be a plain literal (dict/list of "
                                        "strings and numbers)") from None  # fmt: skip
    for name, kind in (("RUNTIME_CONFIG", dict), ("ORCHESTRATION", dict), ("KERNELS", list)):
        if not isinstance(values.get(name), kind):
            got = "missing" if name not in values else f"a {type(values[name]).__name__}"
            where = f"{path}:{nodes[name].lineno}" if name in nodes else path
            raise BuildDirError(where, f"expected {name} = a {kind.__name__}, {got}")
    threads = values["RUNTIME_CONFIG"].get("aicpu_thread_num", 0)
    if type(threads) is not int or threads < 0:
        raise BuildDirError(f"{path}:{nodes['RUNTIME_CONFIG'].lineno}", "RUNTIME_CONFIG['aicpu_thread_num'] must be an "
                            f"integer >= 0 (0: the platform's default), got {threads!r}")  # fmt: skip
    orch = values["ORCHESTRATION"]
    if not isinstance(orch.get("source"), str) or not isinstance(orch.get("function_name"), str):
        raise BuildDirError(f"{path}:{nodes['ORCHESTRATION'].lineno}", "ORCHESTRATION needs 'source' and "
                            "'function_name' (strings)")  # fmt: skip
    kernels: list[KernelEntry] = []
    rows = getattr(nodes["KERNELS"].value, "elts", [])
    for i, row in enumerate(values["KERNELS"]):
        where = f"{path}:{rows[i].lineno if i < len(rows) else nodes['KERNELS'].lineno}"
        try:
            kernels.append(KernelEntry(int(row["func_id"]), str(row["name"]), str(row["source"]),
                                       str(row["core_type"]), [str(s) for s in row.get("signature", [])]))  # fmt: skip
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise BuildDirError(where, f"KERNELS[{i}] needs func_id, name, source, core_type ({type(e).__name__}: "
                                f"{e})") from None  # fmt: skip
        if not kernels[-1].name.isidentifier():
            raise BuildDirError(where, f"KERNELS[{i}]: name {kernels[-1].name!r} is not a function name (its unit "
                                "is ptoas/<name>.pto)")  # fmt: skip
    return KernelConfig(values["RUNTIME_CONFIG"], orch, kernels)


def syntax_error_location(path: Path | str, error: SyntaxError) -> str:
    """``path:line:col`` of a SyntaxError in ``path``; ``path`` alone when it has no line (a null byte)."""
    return f"{path}:{error.lineno}:{error.offset or 0}" if error.lineno else str(path)


# ---- writing ----------------------------------------------------------------------------------------------------------


def emit_debug_runner_enabled() -> bool:
    """``PYPTO_EMIT_DEBUG_RUNNER`` (on unless ``0``/``false``/``no``)."""
    return os.environ.get("PYPTO_EMIT_DEBUG_RUNNER", "").strip().lower() not in ("0", "false", "no")


def kernel_entries(module: Any, out_dir: Path) -> list[KernelEntry]:
    """The ``KERNELS`` rows of a lowered program: its kernels numbered as every DFX artefact numbers them."""
    from .dfx.base import kernel_func_ids

    funcs = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp)}
    rows: list[KernelEntry] = []
    for name, fid in kernel_func_ids(module).items():
        f = funcs[name]
        core = next((c for c in ("aic", "aiv") if (out_dir / "kernels" / c / f"{name}.cpp").is_file()), None)
        if core is None:
            core = "aic" if function_type(f) is FunctionType.AIC else "aiv"
        sig = [str(d.value) for d in param_directions(f)]
        rows.append(KernelEntry(fid, name, f"kernels/{core}/{name}.cpp", core, sig))
    return rows


def write_build_files(
    out_dir: Path | str,
    lowered_module: Any,
    entry_name: str,
    param_names: Sequence[str],
    platform: str,
    backend_type: str,
    *,
    golden: Any = None,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    text_cache: Any = None,
) -> list[Path]:
    """Write the contract files of a compiled program into ``out_dir``; returns the paths written.

    ``lowered_module``: the program after the pass pipeline; ``entry_name``: its Orchestration function;
    ``param_names``: the user's parameter names; ``golden``: a torch reference (``golden.py``);
    ``text_cache``: a :class:`~pypto.core.dsl_printer.FunctionTextCache` (the pass dumps'), whose text
    of the functions unchanged since the last dump is reused."""
    from pypto.core.dsl_printer import print_program_locs

    from .debug.run_script import run_script_text
    from .golden_file import golden_text
    from .orchestration import entry_function

    out = Path(out_dir)
    entry = entry_function(lowered_module, entry_name)
    meta = meta_of(entry, param_names, platform, backend_type)
    orch_rel = f"{ORCHESTRATION_DIR}/{entry_name}.py"
    files: dict[str, str] = {
        META: meta.to_json(),
        orch_rel: print_program_locs(lowered_module, cache=text_cache)[0],
        KERNEL_CONFIG: kernel_config_text(
            {"runtime": RUNTIME_NAME, "aicpu_thread_num": 0},
            {"source": orch_rel, "function_name": entry_name, "signature": [p.direction for p in meta.params]},
            kernel_entries(lowered_module, out),
        ),
    }
    if golden is not None:
        files[GOLDEN] = golden_text(meta, golden, rtol, atol)
    if emit_debug_runner_enabled():
        files[DEBUG_RUNNER] = run_script_text(meta)
    written: list[Path] = []
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text, durable=False)
        written.append(path)
    return written


# ---- loading a build as a runnable program -----------------------------------------------------------------------------


def load_program(work_dir: Path | str, kconfig: KernelConfig | None = None) -> Any:
    """The lowered Program of a build (``ORCHESTRATION['source']``, parsed; a ParserError is located in it),
    its kernels in ``KERNELS`` func_id order (the numbering of the DFX artefacts)."""
    from pypto.frontend.parser import loads

    work = Path(work_dir)
    kc = kconfig or read_kernel_config(work)
    path = work / kc.orchestration["source"]
    if not path.is_file():
        raise BuildDirError(path, f"{absent(path)}; {KERNEL_CONFIG} names it as ORCHESTRATION['source']")
    program = loads(path)
    block = program.module.body.block
    funcs = {op.sym_name.data: op for op in block.ops if isinstance(op, func.FuncOp)}
    if kc.orchestration["function_name"] not in funcs:
        raise BuildDirError(path, f"has no function {kc.orchestration['function_name']!r} "
                            f"(ORCHESTRATION['function_name'] in {KERNEL_CONFIG})")  # fmt: skip
    for k in sorted(kc.kernels, key=lambda k: k.func_id):
        f = funcs.get(k.name)
        if f is None:
            raise BuildDirError(path, f"has no kernel {k.name!r} (KERNELS in {KERNEL_CONFIG})")
        f.detach()
        block.add_op(f)
    return program


def load_run_spec(work_dir: Path | str, platform: str | None = None, backend_type: str | None = None) -> RunSpec:
    """A :class:`~.runnable.RunSpec` of the build in ``work_dir`` (its metadata, orchestration and ``.pto`` units)."""
    work = Path(work_dir).resolve()
    meta = read_meta(work)
    kc = read_kernel_config(work)
    program = load_program(work, kc)
    entry = next(op for op in program.module.body.block.ops
                 if isinstance(op, func.FuncOp) and op.sym_name.data == kc.orchestration["function_name"])  # fmt: skip
    check_meta_matches(meta, entry, work, work / kc.orchestration["source"])
    from .config import backend_for_platform

    platform = platform or meta.platform
    backend = backend_type or (meta.backend_type if platform == meta.platform else backend_for_platform(platform))
    return RunSpec(program, kc.orchestration["function_name"], meta.param_names, work, platform, backend)


class BuildDirProgram:
    """A build directory as a :class:`~.runnable.Runnable` (``run(BuildDirProgram(dir), *args)``)."""

    def __init__(self, work_dir: Path | str, platform: str | None = None, backend_type: str | None = None):
        self.work_dir = Path(work_dir)
        self.platform = platform
        self.backend_type = backend_type
        self._spec: RunSpec | None = None

    def run_spec(self, args: Sequence[Any] = (), config: Any = None) -> RunSpec:
        if self._spec is None:
            self._spec = load_run_spec(self.work_dir, self.platform, self.backend_type)
        return self._spec
