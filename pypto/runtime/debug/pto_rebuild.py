"""The ``.pto`` -> C++ splice of a build directory, and the kernel binary cache.

A ``ptoas/<unit>.pto`` newer than its ``ptoas/<unit>.cpp`` (the stamp of the last assembly) was edited:
:func:`rebuild_kernel_cpp_from_pto` re-assembles it with our ptoas (verify, plan-memory when needed,
insert-sync, C++ emission), writes the new ``ptoas/<unit>.cpp`` and puts its body between
``// --- ptoas-generated code ---`` and ``// --- Kernel entry point ---`` in ``kernels/{aic,aiv}/<unit>.cpp``;
the text outside the sentinels stays as it is. Every stale unit is assembled before anything is written,
so a ``.pto`` that does not parse or verify raises :class:`PtoUnitError` (``file:line:col: error: ...``)
with nothing changed. ``PYPTO_REBUILD_FROM_PTO=0`` turns the splice off. An L3 build's
``next_levels/*`` sub-builds are scanned too.

:func:`invalidate_binary_cache` deletes ``<build>/cache/kernels/`` (the C++ engine's binaries), nothing else.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.ptoas.emitc.kernel import CODE_MARKER, ENTRY_MARKER
from pypto.utils.atomic import atomic_write_text

from ..build_dir import BuildDirError, read_build_text

PTOAS_BODY_BEGIN = CODE_MARKER
PTOAS_BODY_END = ENTRY_MARKER
CACHE_DIR = "cache/kernels"
"""The C++ engine's binary cache inside a build directory."""


class PtoUnitError(BuildDirError):
    """A ``.pto`` unit that does not parse, verify or assemble; the message is located in the file."""

    def __init__(self, path: Path | str, diagnostic: str):
        Exception.__init__(self, diagnostic)
        self.path = Path(path)


def rebuild_disabled() -> bool:
    """``PYPTO_REBUILD_FROM_PTO`` is ``0``/``false``/``no``."""
    return os.environ.get("PYPTO_REBUILD_FROM_PTO", "").strip().lower() in ("0", "false", "no")


def assemble_unit(path: Path, kernel: str | None = None) -> str:
    """The ptoas C++ of the ``.pto`` unit ``path`` (parse, verify, plan-memory when needed, insert-sync, emit);
    :class:`PtoUnitError` located in ``path`` when it does not parse or verify, or (``kernel``: the name
    ``kernel_config.py`` lists for it) defines no ``func.func @<kernel>``."""
    from xdsl.utils.exceptions import ParseError

    from pypto.ptoas.emitc import emit_cpp
    from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
    from pypto.ptoas.pto_text import PTOVerifyError, format_diagnostic, parse_pto_with_source_map

    try:
        text = read_build_text(path)
    except BuildDirError as e:
        raise PtoUnitError(path, str(e)) from None
    if text.startswith("\ufeff"):
        raise PtoUnitError(path, f"{path}:1:1: error: the file starts with a byte-order mark (U+FEFF, an editor's "
                           "'UTF-8 with BOM'); save it as UTF-8 without one")  # fmt: skip
    source_map = None
    try:
        module, source_map = parse_pto_with_source_map(text, str(path))
        if kernel is not None:
            _check_defines(path, module, source_map, kernel)
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
        return emit_cpp(module)
    except (ParseError, PTOVerifyError) as e:
        raise PtoUnitError(path, format_diagnostic(e, source_map, in_file=True)) from None
    except (ValueError, NotImplementedError) as e:
        raise PtoUnitError(path, f"{path}: error: C++ emission failed: {e}") from None


def _check_defines(path: Path, module: Any, source_map: Any, kernel: str) -> None:
    """:class:`PtoUnitError` at the unit's first function when ``module`` defines no ``func.func @<kernel>``."""
    from xdsl.dialects import func

    funcs = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    if any(f.sym_name.data == kernel for f in funcs):
        return
    where = source_map.locate(funcs[0], True) if funcs else None
    at = f"{path}:{where[1]}:{where[2]}" if where is not None else str(path)
    have = ", ".join(f"@{f.sym_name.data}" for f in funcs) or "none"
    raise PtoUnitError(path, f"{at}: error: expected func.func @{kernel}, the kernel kernel_config.py lists for "
                       f"this unit; it defines {have}")  # fmt: skip


def splice(kernel_text: str, body: str, path: Path) -> str:
    """``kernel_text`` with ``body`` between the sentinels (the rest kept byte for byte)."""
    begin, end = kernel_text.find(PTOAS_BODY_BEGIN), kernel_text.find(PTOAS_BODY_END)
    if begin < 0 or end < 0 or end < begin:
        raise BuildDirError(path, f"cannot splice: expected the lines {PTOAS_BODY_BEGIN!r} then {PTOAS_BODY_END!r}")
    head = kernel_text[: begin + len(PTOAS_BODY_BEGIN)]
    return f"{head}\n{body.rstrip(chr(10))}\n{kernel_text[end:]}"


def stale_units(build: Path) -> list[Path]:
    """``ptoas/*.pto`` of one (sub-)build newer than their ``ptoas/<unit>.cpp`` (or without one)."""
    stale = []
    for pto in sorted((build / "ptoas").glob("*.pto")):
        cpp = pto.with_suffix(".cpp")
        if not cpp.exists() or cpp.stat().st_mtime_ns < pto.stat().st_mtime_ns:
            stale.append(pto)
    return stale


def _builds(work_dir: Path) -> list[Path]:
    """The build root and every ``next_levels/*`` sub-build (L3) that has a ``ptoas/`` folder."""
    dirs = [work_dir]
    nl = work_dir / "next_levels"
    if nl.is_dir():
        dirs += sorted(d for d in nl.iterdir() if d.is_dir())
    return [d for d in dirs if (d / "ptoas").is_dir()]


@dataclass
class Splice:
    """What rebuilding one unit writes: the kernel file(s) and the unit's ``.cpp`` stamp."""

    unit: Path
    writes: list[tuple[Path, str]]


def plan_rebuild(work_dir: Path | str, kernels: Collection[str] = ()) -> list[Splice]:
    """Assemble every stale unit and compute the new files, writing nothing (errors raised here); a unit of the
    build root named in ``kernels`` must define that kernel (:func:`assemble_unit`)."""
    work = Path(work_dir)
    plans: list[Splice] = []
    for build in _builds(work):
        for pto in stale_units(build):
            body = assemble_unit(pto, pto.stem if build == work and pto.stem in kernels else None)
            writes: list[tuple[Path, str]] = []
            for core in ("aic", "aiv"):
                kernel = build / "kernels" / core / f"{pto.stem}.cpp"
                if kernel.is_file():
                    writes.append((kernel, splice(read_build_text(kernel), body, kernel)))
            writes.append((pto.with_suffix(".cpp"), body))  # last: the stamp is newer than the .pto
            plans.append(Splice(pto, writes))
    return plans


def apply_rebuild(work_dir: Path | str, plans: list[Splice]) -> list[str]:
    """Write what :func:`plan_rebuild` computed; returns the kernel files spliced (relative to ``work_dir``)."""
    work = Path(work_dir)
    touched: list[str] = []
    for plan in plans:
        print(f"[pto->cpp] regenerating from {plan.unit.relative_to(work)}")
        for path, text in plan.writes:
            atomic_write_text(path, text, durable=False)
            if path.parent.name in ("aic", "aiv"):
                rel = str(path.relative_to(work))
                print(f"[pto->cpp]   spliced -> {rel}")
                touched.append(rel)
        _stamp_newer(plan.unit.with_suffix(".cpp"), plan.unit)
    return touched


def _stamp_newer(stamp: Path, pto: Path) -> None:
    """Make the unit's ``.cpp`` stamp newer than its ``.pto`` even when the ``.pto``'s time is ahead of the
    clock (copied files, clock skew): else every replay would splice again over a hand edit of the ``.cpp``."""
    pto_ns, st = pto.stat().st_mtime_ns, stamp.stat()
    if st.st_mtime_ns <= pto_ns:
        os.utime(stamp, ns=(st.st_atime_ns, pto_ns + 1))


def rebuild_kernel_cpp_from_pto(work_dir: Path | str) -> list[str]:
    """Re-assemble every ``.pto`` newer than its ``.cpp`` and splice it into its kernel file (module
    docstring); returns the kernel files changed, relative to ``work_dir``. Nothing is written when a
    unit fails (:class:`PtoUnitError`) or with ``PYPTO_REBUILD_FROM_PTO=0``."""
    if rebuild_disabled():
        print("[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)")
        return []
    touched = apply_rebuild(work_dir, plan_rebuild(work_dir))
    print(f"[pto->cpp] updated {len(touched)} kernel cpp(s)" if touched else "[pto->cpp] no .pto changes detected")
    return touched


def invalidate_binary_cache(work_dir: Path | str) -> int:
    """Delete ``<work_dir>/cache/kernels/`` (and each ``next_levels/*`` one): the compiled kernels are
    rebuilt from their ``.cpp`` on the next C++ run. Returns the number of files removed."""
    work = Path(work_dir)
    dirs = [work] + (sorted(d for d in (work / "next_levels").iterdir() if d.is_dir())
                     if (work / "next_levels").is_dir() else [])  # fmt: skip
    removed = 0
    for d in dirs:
        cache = d / CACHE_DIR
        if cache.is_dir():
            removed += sum(1 for p in cache.rglob("*") if p.is_file())
            shutil.rmtree(cache)
    print(f"[cpp->.so] invalidated {removed} cached binary file(s)" if removed else "[cpp->.so] no cached binaries")
    return removed
