"""The one HTML report shell shared by every report (ir-trace, memory map, ...)."""

from .html import asset, embed_json, embed_json_bytes, render_report, render_viewer, report_chunks
from .payload import fields_of

__all__ = ["asset", "embed_json", "embed_json_bytes", "fields_of", "render_report", "render_viewer", "report_chunks"]
