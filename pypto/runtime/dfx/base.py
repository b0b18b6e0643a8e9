"""The collector protocol and registry of the run-time DFX artefacts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from xdsl.dialects import func

from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type
from pypto.utils.atomic import atomic_write_bytes

DFX_DIR = "dfx_outputs"
"""The folder of the run-time artefacts inside a build directory."""

RECORDED_LEVEL = 4
"""The highest swimlane level the simulated chip records."""


def write_artefact(path: Path, data: str | bytes) -> Path:
    """Write a run-time artefact atomically (``pypto.utils.atomic``, text as UTF-8), without fsync as the
    pass dumps: a reader never sees it half-written and a failure leaves the old file. Returns ``path``."""
    atomic_write_bytes(path, data.encode("utf-8") if isinstance(data, str) else data, durable=False)
    return path


_ENC = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


def json_text(obj: Any, *, allow_nan: bool = True) -> str:
    """``json.dumps(obj, indent=1, allow_nan=allow_nan)``, byte for byte, in a fraction of its time (with
    an indent ``json`` runs its pure-Python encoder, the most of what collecting costs once the run is
    over). Dicts with str/int keys, lists, tuples, str, int, float, bool and None are encoded here; any
    other value sends the whole object to ``json.dumps``."""
    parts: list[str] = []
    try:
        _encode(obj, "\n", parts, allow_nan)
    except _Other:
        return json.dumps(obj, indent=1, allow_nan=allow_nan)
    return "".join(parts)


class _Other(Exception):
    """A value :func:`json_text` leaves to ``json.dumps``."""


def _encode(o: Any, nl: str, out: list[str], allow_nan: bool) -> None:
    t = type(o)
    if t is str:
        out.append(_ENC(o))
    elif t is int:
        out.append(int.__repr__(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif t is float:
        if o != o or o in (float("inf"), float("-inf")):
            if not allow_nan:
                raise _Other  # json.dumps raises its own ValueError
            out.append("NaN" if o != o else ("Infinity" if o > 0 else "-Infinity"))
        else:
            out.append(float.__repr__(o))
    elif t is list or t is tuple:
        if not o:
            out.append("[]")
            return
        inner = nl + " "
        out.append("[")
        for i, v in enumerate(o):
            out.append(inner if i == 0 else "," + inner)
            _encode(v, inner, out, allow_nan)
        out.append(nl + "]")
    elif t is dict:
        if not o:
            out.append("{}")
            return
        inner = nl + " "
        out.append("{")
        for i, (k, v) in enumerate(o.items()):
            if type(k) is str:
                key = _ENC(k)
            elif type(k) is int:
                key = '"' + int.__repr__(k) + '"'
            else:
                raise _Other
            out.append((inner if i == 0 else "," + inner) + key + ": ")
            _encode(v, inner, out, allow_nan)
        out.append(nl + "}")
    else:
        raise _Other


class Collector:
    """Watches one run for one flag (``FLAG``, a ``RunConfig`` field) at ``level`` and writes its
    artefact(s) under ``out_dir`` (``<build>/dfx_outputs``) when the run ends."""

    FLAG: ClassVar[str] = ""

    def __init__(self, level: int, out_dir: Path):
        self.level = level
        self.out_dir = out_dir

    def before_task(self, task: Any, part: Any) -> None:
        """Before ``part`` of ``task`` is dispatched (its arguments hold their inputs)."""

    def after_task(self, task: Any, part: Any, kernel_run: Any) -> None:
        """After ``part`` of ``task`` completed (``kernel_run``: the interpreter's result)."""

    def finish(self, result: Any) -> list[Path]:
        """Write the artefact(s) for the finished run (a :class:`~pypto.runtime.run.RunResult`)."""
        return []


COLLECTORS: dict[str, type[Collector]] = {}
"""RunConfig flag -> the collector that serves it."""


def register(cls: type[Collector]) -> type[Collector]:
    """Class decorator: ``cls`` serves ``cls.FLAG``."""
    COLLECTORS[cls.FLAG] = cls
    return cls


def collectors_for(config: Any, build_dir: Path | None) -> list[Collector]:
    """A collector per flag enabled in ``config`` (levels as normalized by RunConfig); none without a
    build directory to write into."""
    if build_dir is None:
        return []
    out = Path(build_dir) / DFX_DIR
    made: list[Collector] = []
    for flag, cls in COLLECTORS.items():
        level = int(getattr(config, flag, 0) or 0)
        if level:
            made.append(cls(level, out))
    return made


def finish_all(collectors: Sequence[Collector], result: Any) -> dict[str, list[Path]]:
    """Every collector's artefacts, by flag."""
    return {c.FLAG: c.finish(result) for c in collectors}


def kernel_func_ids(module: Any) -> dict[str, int]:
    """Kernel function name -> func_id: the program's AIC / AIV / InCore functions in module order (the one
    numbering of deps.json, the name map, pmu.csv and args_dump)."""
    kinds = (FunctionType.AIC, FunctionType.AIV, FunctionType.InCore)
    names = [
        op.sym_name.data for op in module.body.block.ops if isinstance(op, func.FuncOp) and function_type(op) in kinds
    ]
    return {n: i for i, n in enumerate(names)}
