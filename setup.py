"""Package discovery under pyproject's ``package-dir`` mapping (everything else is in pyproject.toml).

``pypto/`` is the package ``pypto``; ``dialects/``, ``ptoas/`` and ``tools/`` are
``pypto.dialects``, ``pypto.ptoas`` and ``pypto.tools`` (``[tool.setuptools]
package-dir``). setuptools' own ``packages = find`` cannot add such a prefix, so
every package under each mapped folder is found here (``find_packages``): a new
subpackage is never silently left out of the wheel.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).parent


def mapped_packages(package_dir: dict[str, str]) -> list[str]:
    """Every package under each ``package-dir`` folder, named with its mapped prefix."""
    found: list[str] = []
    for name, folder in package_dir.items():
        found += [name] + [f"{name}.{sub}" for sub in find_packages(str(ROOT / folder))]
    return sorted(found)


PACKAGE_DIR = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]

setup(packages=mapped_packages(PACKAGE_DIR))
