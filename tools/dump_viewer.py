"""``python -m pypto.tools.dump_viewer [ARGS_DUMP_DIR] [--task T] [--stage S] [--role R] [--arg N] [--index I] [--export]``

Reads an args dump (runtime-dfx-formats.md §6: ``args_dump.json`` and ``args.bin``, written by a run
with ``RunConfig(enable_dump_args=1|2)``) and prints one row per dumped argument: idx (its place in the
manifest), task_id, stage, role, arg (index), dtype, shape, bytes. The filters keep the rows that
match all of them. ``--export`` writes each kept argument to
``<ARGS_DUMP_DIR>/txt/task_<id>_<before|after>_<in|out|inout><arg>.txt`` (or under ``--out DIR``):
a header, an overview grid (the tensor as rows x last dimension, elided with ``...`` beyond 16 x 8)
and every element by index.

ARGS_DUMP_DIR defaults to the newest ``${PYPTO_PROG_BUILD_DIR:-build_output}/*/dfx_outputs/args_dump``;
a build directory or its ``dfx_outputs`` are accepted too. Exit codes: 0 success, 1 a missing or
malformed dump (one line ``dump_viewer: error: <file>: <what>``), 2 argument errors (argparse).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import Error
from pypto.reports.cli import output_path
from pypto.target.dtypes import BY_NAME
from pypto.utils.atomic import atomic_write_files
from pypto.utils.cli import cli_main

PROG = "dump_viewer"
MANIFEST = "args_dump.json"
STAGES = {"before": "before_dispatch", "after": "after_completion"}
ROLES = {"in": "input", "out": "output", "input": "input", "output": "output", "inout": "inout"}
SHORT_ROLE = {"input": "in", "output": "out", "inout": "inout"}
ARG_KEYS = ("task_id", "arg_index", "role", "stage", "kind", "dtype", "shape", "bin_offset", "bin_size")
GRID_ROWS, GRID_COLS = 16, 8


class DumpViewerError(Error):
    """A missing or malformed args dump (the message names the file)."""


# ---- loading ---------------------------------------------------------------------------


def default_dir() -> Path:
    """The newest ``build_output/*/dfx_outputs/args_dump`` (by its manifest's modification time)."""
    root = Path(os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output")
    found = [p.parent for p in root.glob(f"*/dfx_outputs/args_dump/{MANIFEST}")]
    per_rank = [] if found else list(root.glob(f"*/dfx_outputs/rank*/d*/args_dump/{MANIFEST}"))
    if per_rank:
        newest = max(per_rank, key=lambda m: m.stat().st_mtime_ns)
        raise DumpViewerError(
            f"{root}: its args dumps are per rank and dispatch (multi-chip builds); pass one, e.g. {newest.parent}"
        )
    if not found:
        raise DumpViewerError(
            f"{root}/*/dfx_outputs/args_dump: no args dump found (run with RunConfig(enable_dump_args=2), "
            "or pass ARGS_DUMP_DIR)"
        )
    return max(found, key=lambda p: ((p / MANIFEST).stat().st_mtime_ns, str(p)))


def resolve_dir(arg: str | None) -> Path:
    """The args_dump directory: ``arg`` (the directory, its manifest, a build dir or its dfx_outputs)."""
    if arg is None:
        return default_dir()
    p = Path(arg)
    if p.is_file() and p.name == MANIFEST:
        return p.parent
    for d in (p, p / "args_dump", p / "dfx_outputs" / "args_dump"):
        if (d / MANIFEST).is_file():
            return d
    if not p.exists():
        raise DumpViewerError(f"{p}: no such directory")
    ranks = sorted({m.parent for base in (p, p / "dfx_outputs") for m in base.glob(f"rank*/d*/args_dump/{MANIFEST}")})
    if ranks:  # a multi-chip build: a dump per rank and dispatch
        listed = ", ".join(str(d) for d in ranks[:4]) + (", ..." if len(ranks) > 4 else "")
        raise DumpViewerError(f"{p}: a multi-chip build has an args dump per rank and dispatch; pass one: {listed}")
    raise DumpViewerError(f"{p / MANIFEST}: missing (expected an args_dump directory holding {MANIFEST} and args.bin)")


def _check_arg(path: Path, i: int, a: Any) -> None:
    if not isinstance(a, dict):
        raise DumpViewerError(f"{path}: args[{i}] is not an object")
    missing = [k for k in ARG_KEYS if k not in a]
    if missing:
        raise DumpViewerError(f"{path}: args[{i}] lacks {', '.join(missing)}")
    if a["stage"] not in STAGES.values():
        raise DumpViewerError(
            f"{path}: args[{i}] has stage {a['stage']!r}, expected before_dispatch or after_completion"
        )
    if not isinstance(a["role"], str) or a["role"] not in SHORT_ROLE:
        raise DumpViewerError(f"{path}: args[{i}] has role {a['role']!r}, expected input, output or inout")
    task_id = a["task_id"]
    if not isinstance(task_id, str) or task_id[:2].lower() != "0x" or not _is_hex(task_id[2:]):
        raise DumpViewerError(f"{path}: args[{i}] has task_id {task_id!r}, expected a string 0x<hex>")
    if not isinstance(a["shape"], list) or not all(type(d) is int and d >= 0 for d in a["shape"]):
        raise DumpViewerError(f"{path}: args[{i}] has shape {a['shape']!r}, expected a list of sizes")
    if type(a["arg_index"]) is not int or a["arg_index"] < 0:  # it names the export file
        raise DumpViewerError(f"{path}: args[{i}] has arg_index {a['arg_index']!r}, expected an integer >= 0")
    for key in ("bin_offset", "bin_size"):
        if type(a[key]) is not int or a[key] < 0:
            raise DumpViewerError(f"{path}: args[{i}] has {key} {a[key]!r}, expected a byte count (an integer >= 0)")


def _is_hex(digits: str) -> bool:
    return bool(digits) and all(c in "0123456789abcdefABCDEF" for c in digits)


def load(d: Path) -> tuple[dict[str, Any], bytes]:
    """The manifest and the payload file's bytes (empty when ``bin_file`` is null)."""
    path = d / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DumpViewerError(f"{path}: cannot read ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DumpViewerError(f"{path}: not JSON ({e})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("args"), list):
        raise DumpViewerError(f"{path}: expected an object with an 'args' list (runtime-dfx-formats.md §6)")
    for i, a in enumerate(manifest["args"]):
        _check_arg(path, i, a)
    bin_name = manifest.get("bin_file")
    if bin_name is None:
        sized = [i for i, a in enumerate(manifest["args"]) if a["bin_size"]]
        if sized:
            raise DumpViewerError(
                f"{path}: bin_file is null but args[{sized[0]}] has bin_size {manifest['args'][sized[0]]['bin_size']}"
                " (a dump with payload bytes names its bin_file)"
            )
        return manifest, b""
    bin_path = d / str(bin_name)
    try:
        blob = bin_path.read_bytes()
    except OSError as e:
        raise DumpViewerError(f"{bin_path}: cannot read ({e.strerror})") from None
    for i, a in enumerate(manifest["args"]):
        if int(a["bin_offset"]) + int(a["bin_size"]) > len(blob):
            raise DumpViewerError(
                f"{bin_path}: args[{i}] needs bytes [{a['bin_offset']}, +{a['bin_size']}) but the file has {len(blob)}"
            )
    return manifest, blob


# ---- selecting and printing ------------------------------------------------------------


def _task_number(text: str) -> int:
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid task id: {text!r} (a number, or 0x<hex>)") from None


def _stage(text: str) -> str:
    s = STAGES.get(text, text)
    if s not in STAGES.values():
        raise argparse.ArgumentTypeError(f"invalid stage: {text!r} (before, after, before_dispatch, after_completion)")
    return s


def _role(text: str) -> str:
    if text not in ROLES:
        raise argparse.ArgumentTypeError(f"invalid role: {text!r} (input, output, inout, in, out)")
    return ROLES[text]


def select(manifest: dict[str, Any], args: argparse.Namespace) -> list[tuple[int, dict[str, Any]]]:
    """(idx, arg) pairs kept by the filters."""
    rows = []
    for idx, a in enumerate(manifest["args"]):
        if args.index is not None and idx != args.index:
            continue
        if args.task is not None and int(str(a["task_id"]), 16) != args.task:
            continue
        if args.stage is not None and a["stage"] != args.stage:
            continue
        if args.role is not None and a["role"] != args.role:
            continue
        if args.arg is not None and a["arg_index"] != args.arg:
            continue
        rows.append((idx, a))
    return rows


def table(rows: list[tuple[int, dict[str, Any]]]) -> str:
    """The rows as an aligned text table."""
    head = ("idx", "task_id", "stage", "role", "arg", "dtype", "shape", "bytes")
    body = [
        (str(i), str(a["task_id"]), a["stage"], a["role"], str(a["arg_index"]), str(a["dtype"]),
         "x".join(str(d) for d in a["shape"]) or "scalar", str(a["bin_size"]))
        for i, a in rows
    ]  # fmt: skip
    widths = [max(len(r[c]) for r in [head, *body]) for c in range(len(head))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in [head, *body])


# ---- export ------------------------------------------------------------------------------


def values(a: dict[str, Any], blob: bytes) -> np.ndarray | None:
    """A tensor argument's elements (BF16 widened to float32), shaped; None when its dtype has no storage."""
    row = BY_NAME.get(str(a["dtype"]))
    if row is None or row.numpy is None:
        return None
    raw = blob[int(a["bin_offset"]) : int(a["bin_offset"]) + int(a["bin_size"])]
    dt = np.dtype(row.numpy).newbyteorder("<")
    if len(raw) % dt.itemsize:
        return None
    arr = np.frombuffer(raw, dtype=dt)
    if row.name == "BF16":
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    shape = [int(d) for d in a["shape"]]
    return arr.reshape(shape) if int(np.prod(shape)) == arr.size else arr


def _fmt(v: Any) -> str:
    if isinstance(v, np.floating | float):
        return f"{float(v):.7g}"
    return str(v.item() if isinstance(v, np.generic) else v)


def _grid(arr: np.ndarray) -> list[str]:
    m = arr.reshape(1, -1) if arr.ndim < 2 else arr.reshape(-1, arr.shape[-1])
    rows = list(range(m.shape[0]))
    cols = list(range(m.shape[1]))

    def elide(ix: list[int], n: int) -> list[int | None]:
        return list(ix) if len(ix) <= n else [*ix[: n // 2], None, *ix[-(n // 2) :]]

    r_ix, c_ix = elide(rows, GRID_ROWS), elide(cols, GRID_COLS)
    cells = [[("..." if r is None or c is None else _fmt(m[r, c])) for c in c_ix] for r in r_ix]
    labels = ["..." if r is None else str(r) for r in r_ix]
    head = ["" if c is None else str(c) for c in c_ix]
    width = max(len(x) for x in [*head, *(v for row in cells for v in row)])
    lw = max(len(x) for x in labels)
    out = [" " * lw + " | " + " ".join(h.rjust(width) for h in head)]
    out += [
        lbl.rjust(lw) + " | " + " ".join(v.rjust(width) for v in row) for lbl, row in zip(labels, cells, strict=True)
    ]
    return out


def export_text(idx: int, a: dict[str, Any], blob: bytes) -> str:
    """The text file of one argument: header, overview grid, per-index detail."""
    lines = [f"# args_dump arg {idx}"]
    for k in ("task_id", "func_id", "stage", "role", "arg_index", "kind", "dtype", "value", "is_contiguous",
              "shape", "strides", "start_offset", "numel", "bin_offset", "bin_size", "truncated", "overwritten"):  # fmt: skip
        if k in a:
            lines.append(f"{k}: {json.dumps(a[k])}")
    if a.get("kind") == "scalar" or not a["shape"] and int(a["bin_size"]) == 0:
        lines += ["", "## overview", f"value = {json.dumps(a.get('value'))}"]
        return "\n".join(lines) + "\n"
    arr = values(a, blob)
    if arr is not None and arr.size == 0:  # an empty tensor (a 0 in its shape): nothing to draw
        lines += ["", f"## overview (shape {a['shape']}: no elements)"]
        return "\n".join(lines) + "\n"
    if arr is None:
        raw = blob[int(a["bin_offset"]) : int(a["bin_offset"]) + int(a["bin_size"])]
        lines += ["", f"## overview (dtype {a['dtype']} has no numeric view: raw bytes)", raw.hex(" ", 1)]
        return "\n".join(lines) + "\n"
    shown = "x".join(str(d) for d in (arr.shape if arr.ndim >= 2 else (1, arr.size)))
    lines += ["", f"## overview ({shown} as rows x last dimension; ... = elided)", *_grid(arr), "", "## detail"]
    lines += [f"[{', '.join(str(i) for i in ix)}] {_fmt(arr[ix])}" for ix in np.ndindex(arr.shape)]
    return "\n".join(lines) + "\n"


def export_name(a: dict[str, Any]) -> str:
    """``task_<id>_<before|after>_<in|out|inout><arg_index>.txt``."""
    stage = "before" if a["stage"] == "before_dispatch" else "after"
    return f"task_{int(str(a['task_id']), 16)}_{stage}_{SHORT_ROLE[a['role']]}{a['arg_index']}.txt"


def export(rows: list[tuple[int, dict[str, Any]]], blob: bytes, out: Path) -> list[Path]:
    """Write each row's text file under ``out``, all or none (every text is made before anything is written);
    returns the paths. A name two rows share (an ambiguous ``arg_index``) gets the later row's table index
    (``..._idx<i>.txt``), so no row's file replaces another's."""
    files = []
    taken: set[str] = set()
    for idx, a in rows:
        name = export_name(a)
        if name in taken:  # the same task, stage, role and arg_index twice (arg_index_ambiguous): keep both
            name = f"{name.removesuffix('.txt')}_idx{idx}.txt"
        taken.add(name)
        files.append((out / name, export_text(idx, a, blob).encode("utf-8")))
    made = _export_folder(out)
    try:
        atomic_write_files(files)  # a folder in a file's place fails before anything is written
    except BaseException:
        if made:  # nothing was written: the folder this export made goes too
            try:
                out.rmdir()
            except OSError:
                pass  # another process put something there
        raise
    return [p for p, _ in files]


def _export_folder(out: Path) -> bool:
    """Make the export folder ``out`` when it is missing and its parent exists, as upstream makes its ``txt/``
    (a missing parent is refused, as every tool refuses a missing output folder); whether it was made."""
    if out.is_dir():
        return False
    if out.exists():
        raise DumpViewerError(f"{out}: a file, not a folder (the export folder holds a txt file per argument)")
    output_path(out, DumpViewerError)  # its parent: missing, or a file
    try:
        out.mkdir()
    except OSError as e:
        raise DumpViewerError(f"{out}: cannot create the export folder ({e.strerror})") from None
    return True


# ---- the command -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Print or export an args dump (dfx_outputs/args_dump).")
    p.add_argument(
        "dir", metavar="ARGS_DUMP_DIR", nargs="?", help="default: the newest build_output/*/dfx_outputs/args_dump"
    )
    p.add_argument("--task", type=_task_number, help="task id (a number or 0x<hex>)")
    p.add_argument("--stage", type=_stage, help="before|after (before_dispatch|after_completion)")
    p.add_argument("--role", type=_role, help="input|output|inout (or in|out)")
    p.add_argument("--arg", type=int, help="argument index in the kernel call")
    p.add_argument("--index", type=int, help="row index (idx) in the manifest")
    p.add_argument("--export", action="store_true", help="write txt/task_<id>_<before|after>_<role><arg>.txt per row")
    p.add_argument("--out", metavar="DIR", help="export directory (default: ARGS_DUMP_DIR/txt)")
    return p


def run(args: argparse.Namespace) -> str:
    """The text to print."""
    d = resolve_dir(args.dir)
    manifest, blob = load(d)
    rows = select(manifest, args)
    level = manifest.get("dump_args_level")
    text = f"{d}: level {level}, {len(rows)} of {len(manifest['args'])} args\n{table(rows)}"
    if args.export:
        paths = export(rows, blob, Path(args.out) if args.out else d / "txt")
        text += f"\nexported {len(paths)} file(s) to {paths[0].parent if paths else args.out or d / 'txt'}"
    return text


@cli_main(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    print(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
