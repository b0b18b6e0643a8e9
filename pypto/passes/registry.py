"""One pass registry: the PassManager, ``pypto-opt`` and lit tests see the same
passes under the same names (``OutlineIncoreScopes`` in dumps,
``outline-incore-scopes`` on the command line)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from xdsl.passes import ModulePass

_PASSES: dict[str, type[ModulePass]] = {}


def kebab(pass_name: str) -> str:
    """``AllocateMemoryAddr`` -> ``allocate-memory-addr``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", pass_name).lower()


def kebab_name(pass_name: str) -> str:
    """A pass's kebab-case name: the pipeline's spelling, else :func:`kebab`."""
    from .pipeline_order import KEBAB_NAMES

    return KEBAB_NAMES.get(pass_name) or kebab(pass_name)


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: register a ModulePass under its ``name`` (kebab-case)
    and remember its PyPTO name (``PASS_NAME``, CamelCase). A real pass
    replaces a pipeline placeholder of the same name (see ``placeholders``)."""
    old = _PASSES.get(cls.name)
    if old is not None and old is not cls and not getattr(old, "IS_PLACEHOLDER", False):
        raise ValueError(f"pass name {cls.name!r} registered twice")
    _PASSES[cls.name] = cls
    return cls


_NOT_PASSES = {"base", "registry", "placeholders", "pipeline_order"}


_loaded = False
_loading = False
_load_lock = threading.RLock()
"""Held while the passes load: another thread's first compile waits for the whole registry (it saw a
half-filled one and failed with "unknown pass"); the loading thread's own lookups pass through."""


def _load_builtin_passes() -> None:
    """Import every module of this package once: each registers its passes."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:  # loaded by another thread meanwhile, or a lookup inside the load
            return
        _loading = True
        try:
            _import_pass_modules()
        finally:
            _loading = False
        _loaded = True


def _import_pass_modules() -> None:
    """Import every pass module, then register the placeholders."""
    import importlib
    import pkgutil

    from pypto.utils.gc_policy import long_lived

    from . import __path__ as package_path

    with long_lived():  # the pass classes live as long as the process
        for info in sorted(pkgutil.iter_modules(package_path), key=lambda m: m.name):
            if info.name not in _NOT_PASSES and not info.name.startswith("_"):
                importlib.import_module(f"{__package__}.{info.name}")
        # Last: identity passes for the pipeline names no module registered, so a
        # real pass written in its own module always wins.
        from .placeholders import register_placeholders

        register_placeholders()


def is_registered(name: str) -> bool:
    """Whether a pass is registered under this kebab-case name (no loading)."""
    return name in _PASSES


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every registered pass by kebab-case name (the shape xDSL's driver wants)."""
    _load_builtin_passes()
    return {name: (lambda c=cls: c) for name, cls in sorted(_PASSES.items())}


def get_pass(name: str) -> type[ModulePass]:
    """A pass class by kebab-case or CamelCase name."""
    _load_builtin_passes()
    key = name if name in _PASSES else kebab_name(name)
    if key not in _PASSES:
        raise KeyError(f"unknown pass {name!r}; known: {', '.join(sorted(_PASSES))}")
    return _PASSES[key]
