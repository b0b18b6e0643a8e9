"""xDSL's func / arith / scf / builtin interpreter functions, imported without ``xdsl.interpreters``' own
``__init__``.

That ``__init__`` imports the interpreter of every xDSL dialect (riscv, linalg, snitch, ...: over a
second, most of a first kernel run's time) to define ``register_implementations``, which the device
interpreter does not use. The package is put in ``sys.modules`` unexecuted, with a module
``__getattr__`` that runs the real ``__init__`` the first time anything asks for a name it defines, so
``from xdsl.interpreters import register_implementations`` elsewhere still works (xDSL is pinned).
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

_PACKAGE = "xdsl.interpreters"


def _defer_package_init() -> None:
    """Register ``xdsl.interpreters`` without running its ``__init__`` (unless it is already imported)."""
    if _PACKAGE in sys.modules:
        return
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader
    state = {"ran": False}

    def __getattr__(name: str) -> Any:  # noqa: N807 -- PEP 562 module hook
        if state["ran"]:
            raise AttributeError(f"module {_PACKAGE!r} has no attribute {name!r}")
        state["ran"] = True
        loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[_PACKAGE] = package


_defer_package_init()

from xdsl.interpreters.arith import ArithFunctions  # noqa: E402
from xdsl.interpreters.builtin import BuiltinFunctions  # noqa: E402
from xdsl.interpreters.func import FuncFunctions  # noqa: E402
from xdsl.interpreters.scf import ScfFunctions  # noqa: E402

__all__ = ["ArithFunctions", "BuiltinFunctions", "FuncFunctions", "ScfFunctions"]
