"""Shared by the browser tests of every HTML report: Debian chromium driven by
Playwright, and a page wrapper that records console errors and every request
(aborting any that would leave the file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium not installed (make test installs it)")


def launch_browser() -> Iterator[object]:
    """Body of a ``browser`` fixture: one headless chromium."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


class ReportPage:
    """A report opened in a fresh context, ready once ``ready`` (JS) holds.

    The context bypasses the page's CSP because Playwright's wait_for_function
    evaluates strings; each report's tests keep one check under its CSP.
    """

    def __init__(
        self,
        browser: object,
        path: Path,
        ready: str,
        scheme: str = "light",
        clipboard: bool = False,
        init: str = "",
    ) -> None:
        self.context = browser.new_context(  # type: ignore[attr-defined]
            color_scheme=scheme, viewport={"width": 1400, "height": 820}, bypass_csp=True
        )
        if clipboard:
            self.context.grant_permissions(["clipboard-read", "clipboard-write"])
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        if init:
            self.page.add_init_script(init)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(path.as_uri())
        self.page.wait_for_function(ready)

    def _route(self, route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        self.requests.append(url)
        if url.startswith(("http:", "https:")):
            route.abort()  # type: ignore[attr-defined]
        else:
            route.continue_()  # type: ignore[attr-defined]

    def ev(self, js: str) -> object:
        return self.page.evaluate(js)

    def close(self) -> None:
        assert not self.errors, self.errors
        assert all(u.startswith(("file:", "data:")) for u in self.requests), self.requests
        self.context.close()
