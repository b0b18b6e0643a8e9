"""A disk cache of parsed targets: a fresh process reads a pickle instead of parsing the ``.mlir``.

Parsing ``a2a3.mlir`` through the xDSL parser is a large share of a fresh process's first compile
(AllocateMemoryAddr asks for the block size); the parsed :class:`~pypto.target.model.Target` is
plain data. The file is ``<cache dir>/target-<key>.pickle``; the key hashes the target file's path,
mtime and size, the Python version and the source files that build a Target (this package's
``model.py`` and ``dialect.py``), so an edit to any of them misses. The cache directory is
``PYPTO_CACHE_DIR``, else ``$XDG_CACHE_HOME/pypto``, else ``~/.cache/pypto``; ``PYPTO_CACHE_DIR=0``
(or empty) turns the cache off. A file that cannot be read or written is ignored (parsed again).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path
from typing import Any

ENV_VAR = "PYPTO_CACHE_DIR"
_SOURCES = (Path(__file__).with_name("model.py"), Path(__file__).with_name("dialect.py"))


def cache_dir() -> Path | None:
    """Where the cache lives (None: off)."""
    value = os.environ.get(ENV_VAR)
    if value is not None:
        return None if value.strip() in ("", "0") else Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pypto"


def _file(key: tuple[str, int, int]) -> Path | None:
    root = cache_dir()
    if root is None:
        return None
    h = hashlib.sha256(repr((key, sys.version_info[:3])).encode())
    for src in _SOURCES:
        st = src.stat()
        h.update(f"{src}:{st.st_mtime_ns}:{st.st_size}".encode())
    return root / f"target-{h.hexdigest()[:24]}.pickle"


def load(key: tuple[str, int, int], expected: type) -> Any:
    """The cached target of ``key`` (an instance of ``expected``), or None."""
    try:
        path = _file(key)
        if path is None or not path.is_file():
            return None
        value = pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - a bad cache file means "parse again"
        return None
    return value if isinstance(value, expected) else None


def store(key: tuple[str, int, int], target: Any) -> None:
    """Keep ``target`` for ``key`` (best effort: an unwritable directory is ignored)."""
    try:
        path = _file(key)
        if path is None:
            return
        from pypto.utils.atomic import atomic_write_bytes

        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, pickle.dumps(target, protocol=pickle.HIGHEST_PROTOCOL), durable=False)
    except Exception:  # noqa: BLE001 - the cache is an optimisation only
        return
