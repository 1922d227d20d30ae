"""Launching Debian's chromium for the browser tests (Playwright's own download does not work here)."""

from __future__ import annotations

import shutil

import pytest

#: As the machine notes say: headless, no sandbox as root, and no background connections
#: (the closed network refuses them, many at a time).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_or_skip() -> str:
    """The chromium executable; skip the test (with the reason) when it or Playwright is missing."""
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright for Python is not installed")
    return found
