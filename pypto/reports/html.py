"""THE HTML report shell: one self-contained page (styles, scripts and JSON
data embedded, no network) with a title bar and a theme toggle that starts
from the browser's ``prefers-color-scheme``. Every report builds on it."""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

# No request can leave the page: everything is inline, and the policy says so.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; font-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
)


@functools.cache
def asset(package: str, name: str) -> str:
    """The text of ``assets/<name>`` in ``package`` (read once per process: a report written after every
    run does not read its assets again)."""
    return resources.files(package).joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(payload: Any) -> str:
    """``payload`` as deterministic JSON safe inside ``<script>``: sorted keys,
    and ``<``, ``>``, ``&``, U+2028, U+2029 escaped."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for raw, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, esc)
    return text


@functools.lru_cache(maxsize=256)
def _inline(code: str, tag: str) -> str:
    """``code`` to inline in a ``<tag>`` element (checked once per text: a report written after every run
    inlines the same assets each time)."""
    if f"</{tag}" in code.lower():
        raise ValueError(f"inline {tag} must not contain '</{tag}'")
    return code


def render_report(
    title: str,
    payload: Any,
    *,
    body: str,
    scripts: Sequence[str] = (),
    styles: Sequence[str] = (),
    subtitle: str = "",
) -> str:
    """One self-contained HTML page: the shell around ``body`` with ``styles``,
    ``scripts`` and ``payload`` (read in scripts as ``PyptoReport.data``)."""
    chunks = report_chunks(title, payload, body=body, scripts=scripts, styles=styles, subtitle=subtitle)
    return b"".join(chunks).decode("utf-8")


def report_chunks(
    title: str,
    payload: Any,
    *,
    body: str,
    scripts: Sequence[str] = (),
    styles: Sequence[str] = (),
    subtitle: str = "",
    payload_json: bytes | None = None,
) -> list[bytes]:
    """:func:`render_report`'s page as UTF-8 byte strings to write one after the other: the shell's fixed
    parts are built and encoded once per process for a set of assets (a report written after every run
    formats only its subtitle and payload). ``payload_json``: ``payload`` already spelled as
    :func:`embed_json` spells it, UTF-8 (a caller with a faster encoder of the same text; ``payload`` is
    then not read)."""
    head, middle, tail = _shell(title, body, tuple(scripts), tuple(styles))
    data = embed_json(payload).encode("utf-8") if payload_json is None else payload_json
    return [head, html.escape(subtitle).encode("utf-8"), middle, data, tail]


@functools.lru_cache(maxsize=64)
def _shell(title: str, body: str, scripts: tuple[str, ...], styles: tuple[str, ...]) -> tuple[bytes, bytes, bytes]:
    """The page around its subtitle and payload: (up to the subtitle, between them, after the payload)."""
    shell_css = asset("pypto.reports", "shell.css")
    shell_js = asset("pypto.reports", "shell.js")
    theme_init = asset("pypto.reports", "theme_init.js")
    style = "\n".join(_inline(s, "style") for s in (shell_css, *styles))
    script = "\n".join(_inline(s, "script") for s in scripts)
    head = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="color-scheme" content="light dark">
<title>{html.escape(title)}</title>
<style>
{style}
</style>
<script>
{_inline(theme_init, "script")}
</script>
</head>
<body>
<header class="report-bar">
<h1 class="report-title">{html.escape(title)}</h1>
<span class="report-subtitle">"""
    middle = f"""</span>
<span class="report-bar-fill"></span>
<span class="report-bar-extra" id="report-bar-extra"></span>
<button type="button" class="report-button" id="theme-toggle" title="Toggle light / dark theme">Theme</button>
</header>
<main class="report-main" id="report-main">
{body}
</main>
<script type="application/json" id="report-data">"""
    tail = f"""</script>
<script>
{_inline(shell_js, "script")}
</script>
<script>
{script}
</script>
</body>
</html>
"""
    return head.encode("utf-8"), middle.encode("utf-8"), tail.encode("utf-8")


def render_viewer(package: str, payload: Any, subtitle: str) -> str:
    """A tool's report: its viewer (``assets/viewer.html``, ``viewer.css``, ``viewer.js`` in
    ``package``) in the shell, titled ``payload["title"]``."""
    return render_report(
        payload["title"],
        payload,
        body=asset(package, "viewer.html"),
        styles=[asset(package, "viewer.css")],
        scripts=[asset(package, "viewer.js")],
        subtitle=subtitle,
    )
