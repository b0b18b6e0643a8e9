"""The report: the viewer's assets and the payload inside the shared shell."""

from __future__ import annotations

from typing import Any

from pypto.reports import render_viewer

from .discovery import Dump
from .payload import build_payload

PACKAGE = "pypto.tools.ir_trace"


def render_payload(payload: dict[str, Any]) -> str:
    """The HTML page for an already built payload."""
    return render_viewer(PACKAGE, payload, "which pass changed what, in order")


def render_dump(dump: Dump, context: int = 3, title: str | None = None) -> str:
    """The self-contained HTML report of ``dump``: same input, same bytes."""
    return render_payload(build_payload(dump, context, title))
