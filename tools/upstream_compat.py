"""``python -m pypto.tools.upstream_compat <upstream checkout>``: how much of upstream PyPTO's own code runs here.

Two sets, each item in its own subprocess with this interpreter (so the ``pypto`` it imports is ours) and a
timeout:

- **examples**: every script of the checkout's ``examples/`` (a ``.py`` directly in ``examples/<folder>/``, or
  deeper with a ``__main__`` guard), run as ``python -m examples.<folder>.<name>`` from the checkout's root
  (``examples/runtime/``'s ``DistributedCompiledProgram`` scripts run on the prepared L3 worker,
  ``examples/distributed/``'s ``@pl.jit.host`` programs on one gloo process per rank). A script that exits 0 after printing
  ``skipped (needs ...)`` (upstream's graceful degradation without a device) counts as failed;
- **manual blocks**: every ``<!-- doctest: run -->`` block of ``docs/en/user/``, run after the page's
  ``<!-- doctest: setup -->`` blocks with ``__PLATFORM__`` replaced by the platform (``a2a3sim``).

It prints one line per item, ``examples N/M`` and ``manual blocks N/M``, and per failure the first error
line of its output. The exit status is 0 when every counted item passed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pypto.utils.cli import InputError, cli_main

PLATFORM = "a2a3sim"
_SKIPPED = re.compile(r"^skipped \(needs[^\n]*", re.M)
_FENCE = re.compile(r"<!--\s*doctest:\s*(setup|run)\s*-->[ \t]*\n```python[ \t]*\n(.*?)\n```", re.S)
_ERROR_LINE = re.compile(r"^(?:[\w.]+(?:Error|Exception|Exit|Interrupt)|error|FAIL|AssertionError)\b[^\n]*", re.M)


class ToolError(InputError):
    """A one-line error for the command line (exit 1 through :func:`~pypto.utils.cli.cli_main`)."""


@dataclass(frozen=True)
class Item:
    """One thing to run: a label, the argv tail after the interpreter, and a script text (or None)."""

    label: str
    argv: tuple[str, ...]
    script: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How one item ended."""

    item: Item
    passed: bool
    seconds: float
    first_error: str


def example_modules(root: Path) -> list[Item]:
    """The example scripts to run."""
    base = root / "examples"
    if not base.is_dir():
        raise ToolError(f"{root}: no examples/ folder (expected an upstream PyPTO checkout)")
    items: list[Item] = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(root)
        parts = rel.with_suffix("").parts
        if path.name == "__init__.py" or len(parts) < 3:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(parts) > 3 and "__main__" not in text:
            continue  # a helper module of a nested example package
        module = ".".join(parts)
        items.append(Item(module, ("-m", module)))
    return items


def manual_blocks(root: Path, platform: str) -> list[Item]:
    """One item per ``doctest: run`` block of ``docs/en/user/``: the page's setup blocks, then the block."""
    base = root / "docs" / "en" / "user"
    if not base.is_dir():
        raise ToolError(f"{root}: no docs/en/user/ folder (expected an upstream PyPTO checkout)")
    items: list[Item] = []
    for page in sorted(base.rglob("*.md")):
        text = page.read_text(encoding="utf-8", errors="replace")
        blocks = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)]
        setup = "\n".join(code for kind, code, _ in blocks if kind == "setup")
        for kind, code, line in blocks:
            if kind != "run":
                continue
            script = f"{setup}\n\n{code}\n" if setup else f"{code}\n"
            label = f"{page.relative_to(root).as_posix()}:{line}"
            items.append(Item(label, (), script.replace("__PLATFORM__", platform)))
    return items


def first_error(output: str, returncode: int | None) -> str:
    """The line that says what went wrong: the last exception line, else the last non-empty line."""
    if returncode is None:
        return "timed out"
    hits = _ERROR_LINE.findall(output)
    if hits:
        return hits[-1].strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {returncode}"


def run_item(item: Item, root: Path, timeout: float) -> Outcome:
    """Run one item in a fresh interpreter that imports from the checkout's root (``PYTHONPATH``) but
    works in a temporary folder, so its build output never lands in the checkout."""
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=path, PYPTO_SIMULATE_NPU="1")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="upstream_compat_") as tmp:
        argv = list(item.argv)
        if item.script is not None:
            script = Path(tmp) / "block.py"
            script.write_text(item.script, encoding="utf-8")
            argv = [str(script)]
        try:
            proc = subprocess.run(
                [sys.executable, *argv], cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout
            )
            output, code = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            output, code = str(exc.stdout or "") + str(exc.stderr or ""), None
    seconds = time.monotonic() - start
    skipped = _SKIPPED.search(output) if code == 0 else None
    if skipped is not None:  # exit 0, but it did not run: upstream's "no device" fallback
        return Outcome(item, False, seconds, skipped.group(0).strip())
    return Outcome(item, code == 0, seconds, "" if code == 0 else first_error(output, code))


def run_set(name: str, items: Sequence[Item], root: Path, timeout: float, verbose: bool) -> list[Outcome]:
    """Run a set, printing one line per item as it ends."""
    outcomes = []
    for item in items:
        outcome = run_item(item, root, timeout)
        outcomes.append(outcome)
        if verbose:
            status = "PASS" if outcome.passed else "FAIL"
            print(f"{status}  {name}  {item.label}  ({outcome.seconds:.1f} s)", flush=True)
    return outcomes


def summary(name: str, outcomes: Sequence[Outcome]) -> list[str]:
    """``<name> N/M`` and one line per failure with its first error line."""
    passed = sum(o.passed for o in outcomes)
    lines = [f"{name} {passed}/{len(outcomes)}"]
    lines += [f"  FAIL {o.item.label}: {o.first_error}" for o in outcomes if not o.passed]
    return lines


@cli_main("upstream_compat")
def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: 0 all pass, 1 some fail or the checkout is unusable."""
    parser = argparse.ArgumentParser(prog="upstream_compat", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="root of an upstream PyPTO checkout")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per item (default 120)")
    parser.add_argument("--platform", default=PLATFORM, help="replaces __PLATFORM__ (default a2a3sim)")
    parser.add_argument("--only", choices=("examples", "manual"), help="run one set only")
    parser.add_argument("-k", dest="match", default="", help="run only items whose label contains this")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    root = args.checkout.resolve()
    examples = example_modules(root)
    blocks = manual_blocks(root, args.platform)
    lines: list[str] = []
    ok = True
    if args.only in (None, "examples"):
        chosen = [i for i in examples if args.match in i.label]
        outcomes = run_set("example", chosen, root, args.timeout, not args.quiet)
        lines += summary("examples", outcomes)
        ok &= all(o.passed for o in outcomes)
    if args.only in (None, "manual"):
        chosen = [i for i in blocks if args.match in i.label]
        outcomes = run_set("manual", chosen, root, args.timeout, not args.quiet)
        lines += summary("manual blocks", outcomes)
        ok &= all(o.passed for o in outcomes)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
