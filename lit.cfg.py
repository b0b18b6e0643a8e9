"""lit configuration of PyPTO on xDSL: the lit tests live under ``test/``.

Run ``.venv/bin/lit test`` (or ``.venv/bin/lit test/opt``, or one file).
Tests are ``.mlir``, ``.py`` and ``.test`` files with ``RUN:`` lines, run by
lit's internal shell. ``test/python`` (the pytest tests) and ``Inputs``
folders hold no lit tests.

Substitutions: ``pypto-opt``, ``filecheck``, ``python`` (and ``ptoas`` when
installed) are the tools of the virtualenv lit runs in; ``%shared`` is the
project's shared folder (``../shared`` from the repository root).
"""

# ruff: noqa: F821  (``config`` and ``lit_config`` are provided by lit)

from __future__ import annotations

import os
import shutil
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)  # the venv's bin (not resolved: a venv python is a symlink)

sys.path.insert(0, os.path.join(ROOT, "tools"))
from lit_format import RepoTests  # noqa: E402  (lit pickles the format: it must be importable)


def _tool(name: str) -> str | None:
    path = os.path.join(BIN, name)
    if os.path.exists(path):
        return path
    return shutil.which(name)


def _word(name: str) -> str:
    """A regex matching ``name`` as a command word, not inside a path or a longer name."""
    return r"(?<![\w/.%-])" + name.replace("-", r"\-") + r"(?![\w.-])"


config.name = "pypto"
config.test_format = RepoTests()
config.suffixes = [".mlir", ".py", ".test"]
# Not searched at all (big or irrelevant trees); test/python and Inputs are
# skipped by the format.
config.excludes = ["Inputs", "Output", ".venv", "venv", ".git", "__pycache__", "node_modules", "lit.cfg.py"]
config.test_source_root = ROOT
config.test_exec_root = ROOT

config.substitutions.append(("%shared", os.path.normpath(os.path.join(ROOT, "..", "shared"))))
config.substitutions.append(("%inputs", os.path.join(ROOT, "test", "opt", "Inputs")))
for tool in ("pypto-opt", "filecheck", "ptoas"):
    path = _tool(tool)
    if path is not None:
        config.substitutions.append((_word(tool), path))
        config.available_features.add(tool)
config.substitutions.append((_word("python"), sys.executable))

for var in ("HOME", "TMPDIR", "PTO_BACKTRACE"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
