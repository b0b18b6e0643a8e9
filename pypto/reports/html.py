"""THE HTML report shell: one self-contained page (styles, scripts and JSON
data embedded, no network) with a title bar and a theme toggle that starts
from the browser's ``prefers-color-scheme``. Every report builds on it."""

from __future__ import annotations

import functools
import html
import json
import math
from collections.abc import Sequence
from importlib import resources
from typing import Any

import orjson

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


_SCRIPT_ESCAPES = tuple((raw.encode("utf-8"), esc) for raw, esc in (
    ("<", b"\\u003c"), (">", b"\\u003e"), ("&", b"\\u0026"), ("\u2028", b"\\u2028"), ("\u2029", b"\\u2029"),
))  # fmt: skip


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float as None (what orjson writes for them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate as U+FFFD: a file name's undecodable byte (``os.listdir``'s
    ``\udcff``) or a JSON input's ``"\ud800"`` has no UTF-8 spelling."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def embed_json_bytes(payload: Any) -> bytes:
    """``payload`` as deterministic JSON safe inside ``<script>``, UTF-8: sorted keys, compact, ``<``, ``>``,
    ``&``, U+2028 and U+2029 escaped; NaN and infinities as ``null`` (JSON has no spelling for them).
    Through orjson: its text is ``json.dumps``'s for strings, ints, bools, None, lists and dicts with string
    keys, and a float below 1e-4 is spelled without an exponent (``0.00001``, the same number to any JSON
    reader). What orjson does not take (a non-string key, an int beyond 64 bits, a numpy scalar, a lone
    surrogate) goes through json, under the same NaN rule; a lone surrogate (only ever inside a string) is
    written as its JSON escape (``\udcff``)."""
    try:
        text = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError
        text = json.dumps(_finite(payload), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "backslashreplace"
        )
    for raw, esc in _SCRIPT_ESCAPES:
        if raw in text:
            text = text.replace(raw, esc)
    return text


def embed_json(payload: Any) -> str:
    """:func:`embed_json_bytes` as text."""
    return embed_json_bytes(payload).decode("utf-8")


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
) -> list[bytes]:
    """:func:`render_report`'s page as UTF-8 byte strings to write one after the other: the shell's fixed
    parts are built and encoded once per process for a set of assets (a report written after every run
    formats only its subtitle and payload)."""
    head, middle, tail = _shell(title, body, tuple(scripts), tuple(styles))
    data = embed_json_bytes(payload)
    return [head, utf8(html.escape(subtitle)), middle, data, tail]


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
    return utf8(head), utf8(middle), tail.encode("utf-8")


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
