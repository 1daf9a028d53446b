"""Shared by the browser tests: find Debian's Chromium and Playwright, or skip (or fail) with the reason.

The tests never let Playwright download its own browser: they drive /usr/bin/chromium
(Debian: `apt-get install chromium fonts-nanum`). Without it they skip, unless
COURSE_REQUIRE_BROWSER=1 (set by .ci/run), where a missing browser is a failure.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update"]


def required() -> bool:
    return os.environ.get("COURSE_REQUIRE_BROWSER") == "1"


def skip_or_fail(reason: str) -> None:
    if required():
        pytest.fail(f"{reason} (COURSE_REQUIRE_BROWSER=1 makes this a failure)")
    pytest.skip(reason)


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (it is pinned in requirements.txt)"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install --no-install-recommends chromium fonts-nanum)"
    return None


@contextmanager
def chromium():
    """A headless Debian Chromium driven by Playwright (skips or fails when there is none)."""
    reason = missing_browser()
    if reason:
        skip_or_fail(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def artifact(name: str) -> Path:
    """A path under test-artifacts/ (git-ignored) for screenshots."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name
