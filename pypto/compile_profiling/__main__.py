"""``python -m pypto.compile_profiling``: read ``pipeline_profile.json`` files.

- ``show A.json``: the stage tree with total and self time per node;
- ``diff A.json B.json``: per-stage deltas (B - A), stages matched by path
  (repeated names, such as the two ``Simplify`` runs, by occurrence).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pypto.errors import Error
from pypto.utils.cli import cli_main

from . import Stage, format_seconds


class ProfileError(Error):
    """A file that is not a readable ``pipeline_profile.json`` (names the file)."""


def load(path: str) -> tuple[float, list[Stage]]:
    """The total and the stages of a ``pipeline_profile.json``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProfileError(f"{path}: not a pipeline_profile.json (not JSON text: {e})") from None
    try:
        return float(data["total_seconds"]), [Stage.from_dict(s) for s in data["stages"]]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        what = f"missing key {e}" if isinstance(e, KeyError) else str(e)
        raise ProfileError(
            f"{path}: not a pipeline_profile.json (expected an object with total_seconds and stages; {what})"
        ) from None


def flatten(stages: list[Stage], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Stage]:
    """Stages by path; the k-th repeat of a name under one parent is ``name#k``."""
    out: dict[tuple[str, ...], Stage] = {}
    seen: dict[str, int] = {}
    for s in stages:
        k = seen.get(s.name, 0)
        seen[s.name] = k + 1
        key = prefix + ((s.name if k == 0 else f"{s.name}#{k + 1}"),)
        out[key] = s
        out.update(flatten(s.children, key))
    return out


def _signed(t: float) -> str:
    return ("+" if t >= 0 else "-") + format_seconds(abs(t))


def show(path: str) -> str:
    """The tree of one profile with self times."""
    total, stages = load(path)
    lines = [f"{'stage':<44} {'total':>10} {'self':>10}", f"{'Total':<44} {format_seconds(total):>10}"]
    for key, s in flatten(stages).items():
        name = "  " * (len(key) - 1) + key[-1]
        lines.append(f"{name:<44} {format_seconds(s.seconds):>10} {format_seconds(s.self_seconds):>10}")
    return "\n".join(lines)


def diff(path_a: str, path_b: str) -> str:
    """Per-stage deltas between two profiles (B - A), in B's order then A-only."""
    ta, sa = load(path_a)
    tb, sb = load(path_b)
    fa, fb = flatten(sa), flatten(sb)
    header = f"{'stage':<44} {'A':>10} {'B':>10} {'delta':>10} {'ratio':>7} {'self delta':>11}"
    lines = [header, _row("Total", ta, tb, None, None)]
    for key in list(fb) + [k for k in fa if k not in fb]:
        a, b = fa.get(key), fb.get(key)
        name = "  " * (len(key) - 1) + key[-1]
        lines.append(
            _row(
                name,
                a.seconds if a else None,
                b.seconds if b else None,
                a.self_seconds if a else None,
                b.self_seconds if b else None,
            )
        )
    return "\n".join(lines)


def _row(name: str, a: float | None, b: float | None, self_a: float | None, self_b: float | None) -> str:
    fa = format_seconds(a) if a is not None else "-"
    fb = format_seconds(b) if b is not None else "-"
    delta = _signed(b - a) if a is not None and b is not None else ("added" if a is None else "removed")
    ratio = f"{b / a:6.2f}x" if a and b is not None else "-"
    self_delta = _signed(self_b - self_a) if self_a is not None and self_b is not None else "-"
    return f"{name:<44} {fa:>10} {fb:>10} {delta:>10} {ratio:>7} {self_delta:>11}"


@cli_main("python -m pypto.compile_profiling")
def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m pypto.compile_profiling", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_show = sub.add_parser("show", help="print one profile with self times")
    p_show.add_argument("profile")
    p_diff = sub.add_parser("diff", help="per-stage deltas between two profiles (B - A)")
    p_diff.add_argument("a")
    p_diff.add_argument("b")
    args = parser.parse_args(argv)
    text = show(args.profile) if args.command == "show" else diff(args.a, args.b)
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
