"""Architecture figure: import cycles among the project's modules.

Reads every module of the installed layout (``pypto/``, ``dialects/`` as ``pypto.dialects``, ``ptoas/`` as
``pypto.ptoas``, ``tools/`` as ``pypto.tools``, from pyproject's ``package-dir``), collects every import
statement (module level and inside functions) and ``importlib.import_module("pypto...")`` call, and prints the
strongly connected components of that graph twice:

- *explicit*: the import statements only (what import-linter checks);
- *with parents*: also the implicit import of each imported module's parent packages, which Python runs
  first (``from pypto.runtime.run import y`` runs ``pypto/runtime/__init__.py``): a package ``__init__`` that
  re-exports a higher layer ties every module that imports from below it into that layer's cycle.

    .venv/bin/python benchmarks/import_cycles.py [-v]
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_dirs() -> dict[str, Path]:
    """Package name -> folder, from pyproject's setuptools ``package-dir``."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {pkg: ROOT / folder for pkg, folder in setup["package-dir"].items() if pkg}


def modules() -> dict[str, Path]:
    """Every module's dotted name -> its file."""
    dirs = package_dirs()
    found: dict[str, Path] = {}
    for pkg, folder in dirs.items():
        nested = {Path(dirs[p]).resolve() for p in dirs if p != pkg and p.startswith(pkg + ".")}
        for path in folder.rglob("*.py"):
            if any(parent.resolve() in nested for parent in path.parents):
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([pkg, *parts])] = path
    return found


def imported_names(name: str, path: Path, known: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Dotted names imported by one module (relative imports resolved; ``known``: the project's modules)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from pkg import mod`` imports the module ``pkg.mod`` (the package only for its other names),
            # as grimp/import-linter count it.
            names.update(f"{module}.{a.name}" for a in node.names)
            if not all(f"{module}.{a.name}" in known for a in node.names):
                names.add(module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee == "import_module" and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return names


def import_graph(with_parents: bool) -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    mods = modules()

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in mods:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        targets = {owner(n) for n in imported_names(name, path, set(mods)) if n.startswith("pypto")}
        if with_parents:
            for t in list(targets):
                parts = (t or "").split(".")
                targets.update(".".join(parts[:i]) for i in range(1, len(parts)))
        graph[name] = {t for t in targets if t and t != name and t in mods}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found, key=len, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list the modules of each cycle")
    args = parser.parse_args()
    for label, with_parents in (("explicit", False), ("with parents", True)):
        graph = import_graph(with_parents)
        comps = cycles(graph)
        print(
            f"{label:>12}: {len(graph)} modules, {len(comps)} cycles, {sum(map(len, comps))} modules in cycles, "
            f"largest {len(comps[0]) if comps else 0}"
        )
        if args.verbose:
            for comp in comps:
                print(f"    {len(comp)}: {' '.join(comp)}")


if __name__ == "__main__":
    main()
