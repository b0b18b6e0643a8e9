"""The one HTML report shell shared by every report (ir-trace, memory map, ...)."""

from .html import asset, embed_json, render_report

__all__ = ["asset", "embed_json", "render_report"]
