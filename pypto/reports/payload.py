"""Report payloads from dataclasses: their fields as JSON-ready values."""

from __future__ import annotations

import dataclasses
from typing import Any


def _plain(value: Any) -> Any:
    """Tuples and lists as lists, dicts as dicts, at every depth (what the JSON holds)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def fields_of(obj: Any, skip: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """The dataclass ``obj``'s fields (but ``skip``) as a payload dict, then ``extra``
    (which may replace a field, e.g. with its payload form)."""
    out = {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name not in (*skip, *extra)}
    return out | extra
