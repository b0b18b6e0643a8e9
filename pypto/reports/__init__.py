"""The one HTML report shell shared by every report (ir-trace, memory map, ...)."""

from .html import asset, embed_json, render_report, render_viewer, report_chunks
from .payload import fields_of

__all__ = ["asset", "embed_json", "fields_of", "render_report", "render_viewer", "report_chunks"]
