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

from tools.explorer_player import WIDGET_VIEW

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


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


# --------------------------------------------------------------------------- JupyterLab + explorers
# Shared by tests/test_browser.py and tools/bench_sliders.py.


def explorer_cells(notebook: Path) -> list[int]:
    """Indices (among all cells) of the code cells whose stored output is a widget: the explorers.

    Found from the notebook itself, so a new explorer is covered without touching the tests."""
    import json

    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    return [
        i
        for i, c in enumerate(cells)
        if c["cell_type"] == "code" and any(WIDGET_VIEW in o.get("data", {}) for o in c.get("outputs", []))
    ]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyter_lab(site: Path, home: Path):
    """A JupyterLab on 127.0.0.1 serving `site`, touching none of the user's Jupyter folders (all
    under `home`); yields (url, token)."""
    import json
    import secrets
    import subprocess
    import sys
    import time
    import urllib.request

    reason = missing_browser()
    if reason:
        skip_or_fail(reason)
    settings = home / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True, exist_ok=True)
    # Keep every cell in the DOM (no virtual scrolling), so the test can find cells by index.
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # No "get notified about Jupyter news?" toast over the screenshots.
    (settings.parent / "apputils-extension").mkdir(exist_ok=True)
    (settings.parent / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"})
    )
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        "PYTHONHASHSEED": "0",
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    # The venv's kernelspec lives in sys.prefix/share/jupyter, which JUPYTER_DATA_DIR does not hide.
    args = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={site}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    log = (home / "server.log").open("w")
    server = subprocess.Popen(args, cwd=site, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not start: {(home / 'server.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.5)
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


ERRORS_JS = """() => [
  ...document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
  .map(e => e.textContent).filter(t => /Error|Traceback/.test(t)).concat(
  [...document.querySelectorAll('.jp-RenderedText[data-mime-type*="error"]')].map(e => e.textContent))"""

# True once every code cell has an execution count (none queued or running) and the kernel is idle.
# (The model, not the prompts: cells with hidden input show no prompt.)
DONE_JS = """() => {
  const nb = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = nb && nb.sessionContext && nb.sessionContext.session && nb.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  const code = nb.content.widgets.filter(c => c.model.type === 'code');
  return code.length > 0 && code.every(c => c.model.executionCount !== null)
    && document.querySelectorAll('.jp-Notebook .jp-mod-running, .jp-Notebook .jp-mod-pending').length === 0;
}"""


def lab_tab(browser, lab, *, viewport=(1400, 1000)):
    """One JupyterLab tab, loaded once (its scripts take seconds) and reused for notebook after
    notebook. Every request beyond the loopback server is refused and recorded in
    ``page.course_outside``."""
    url, token = lab
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.course_outside = []

    def loopback_only(route):
        if route.request.url.startswith((url, "data:", "blob:")):
            route.continue_()
        else:
            page.course_outside.append(route.request.url)
            route.abort()

    page.route("**/*", loopback_only)
    page.goto(f"{url}/lab?token={token}&reset")  # reset: no notebook left open from another session
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-LabShell')", timeout=90_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    return page


# The notebook at `path` is the current widget and its kernel is idle.
OPENED_JS = """(path) => {
  const w = window.jupyterapp.shell.currentWidget, s = w && w.sessionContext;
  return !!(w && w.context && w.context.path === path && s && s.session && s.session.kernel
    && s.session.kernel.status === 'idle');
}"""


def open_and_run_all(page, rel_path: str, shot_prefix: str, *, run_all_timeout_s=240):
    """Open a notebook in the JupyterLab tab `page` (from ``lab_tab``), Run All, wait for idle;
    assert no cell shows an error and no request left the loopback server."""
    page.course_outside.clear()
    # The same commands as File → Open and Run → Run All Cells (not awaited: polled, with a timeout).
    page.evaluate("(p) => { window.jupyterapp.commands.execute('docmanager:open', {path: p}); }", rel_path)
    page.wait_for_function(OPENED_JS, arg=rel_path, timeout=90_000)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(DONE_JS, timeout=run_all_timeout_s * 1000, polling=500)
    errors = page.evaluate(ERRORS_JS)
    if errors:
        page.screenshot(path=artifact(f"{shot_prefix}_error.png"))
    assert errors == [], f"{rel_path}: cells show errors after Run All: {[e[:500] for e in errors]}"
    assert page.course_outside == [], f"JupyterLab tried to reach the network: {page.course_outside}"


def close_all(page) -> None:
    """Shut down the kernel of every open notebook (kernels must not pile up on a 2-core machine) and
    close every panel of the main area without a save prompt, so the tab is ready for the next one."""
    page.evaluate(
        """() => {
      const app = window.jupyterapp;
      for (const w of Array.from(app.shell.widgets('main'))) {
        const session = w.sessionContext && w.sessionContext.session;
        // Asked, not awaited: the server stops the kernel while the next notebook opens.
        if (session) app.serviceManager.sessions.shutdown(session.id).catch(() => null);
        w.dispose();
      }
    }"""
    )


def explorer_cell(page, index: int):
    """The locator of notebook cell `index` (marked in the DOM through JupyterLab's model)."""
    found = page.evaluate(
        """(i) => { const nb = window.jupyterapp.shell.currentWidget.content;
      const cell = nb.widgets[i]; if (!cell) return false;
      cell.node.setAttribute('data-course-cell', String(i)); return true; }""",
        index,
    )
    assert found, f"the notebook has no cell {index}"
    return page.locator(f'[data-course-cell="{index}"]')


# Every control an explorer may have, in DOM order; each kind knows how to read and to move itself.
CONTROLS = ".widget-slider, .widget-hslider, .widget-dropdown, .widget-checkbox, .widget-toggle-buttons, .widget-radio"

STATE_JS = """(c) => {
  const r = c.querySelector('.widget-readout');
  if (r) return (r.value !== undefined && r.value !== '' ? r.value : r.textContent).trim();
  const sel = c.querySelector('select'); if (sel) return sel.value;
  const box = c.querySelector('input[type=checkbox]'); if (box) return String(box.checked);
  const on = c.querySelector('button.mod-active'); if (on) return on.textContent.trim();
  const radio = c.querySelector('input[type=radio]:checked'); if (radio) return radio.value;
  return c.textContent.trim();
}"""

# A fingerprint of the pixels the explorer shows: the bytes of every image in the cell's output
# (blob: URLs are fetched, so a re-render of the same PNG under a new URL counts as "unchanged").
FIGURE_JS = """async (cell) => {
  const imgs = [...cell.querySelectorAll('.jp-OutputArea img')].filter(i => i.src);
  let h = 2166136261 >>> 0, n = 0;
  for (const img of imgs) {
    let bytes;
    if (img.src.startsWith('data:')) bytes = new TextEncoder().encode(img.src);
    else { try { bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer()); } catch (e) { return 'stale'; } }
    for (const b of bytes) { h ^= b; h = Math.imul(h, 16777619) >>> 0; }
    n += bytes.length;
  }
  return imgs.length ? `${imgs.length}:${n}:${h}` : '';
}"""


def control_kind(control) -> str:
    classes = control.get_attribute("class") or ""
    for kind in ("slider", "dropdown", "checkbox", "toggle-buttons", "radio"):
        if f"widget-{kind}" in classes or (kind == "slider" and "widget-hslider" in classes):
            return kind
    return "unknown"


def control_label(control) -> str:
    """The control's description (a checkbox keeps it next to the box, not in .widget-label)."""
    texts = control.locator(".widget-label, .widget-label-basic").all_text_contents()
    texts = [t.replace("\u200b", "").strip() for t in texts]
    return next((t for t in texts if t), control_kind(control))


def controls_of(cell) -> list:
    found = cell.locator(CONTROLS)
    return [found.nth(i) for i in range(found.count())]


# The current notebook's kernel has no message in hand (an explorer's redraws are comm messages).
KERNEL_IDLE_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget, s = w && w.sessionContext;
  const k = s && s.session && s.session.kernel;
  return !k || k.status === 'idle';
}"""


def wait_figure_settled(
    page, cell, before: str, *, timeout_s: float = 20.0, quiet_ms: int = 600, kernel_idle: bool = False
) -> str:
    """Wait until the figure differs from `before` and then stays the same for `quiet_ms` (the
    renders of a continuous drag have arrived); return its fingerprint (== before on a timeout).
    With `kernel_idle` (JupyterLab, the explorer's notebook current) the quiet spell must also end
    with the kernel idle, so a short one suffices: a queued redraw would have made it busy."""
    import time

    deadline = time.monotonic() + timeout_s
    current = cell.evaluate(FIGURE_JS)
    while current in ("", "stale", before) and time.monotonic() < deadline:
        page.wait_for_timeout(150)
        current = cell.evaluate(FIGURE_JS)
    while time.monotonic() < deadline:
        page.wait_for_timeout(quiet_ms)
        again = cell.evaluate(FIGURE_JS)
        if again == current and (not kernel_idle or page.evaluate(KERNEL_IDLE_JS)):
            break
        current = again
    return current


def move_control(page, control, *, fraction: float = 0.6, steps: int = 10) -> None:
    """Move one control as a hand would: drag a slider's handle a fraction of its track (towards the
    side with more room, through `steps` pointer moves; far enough to change a two-stop slider),
    pick another option, or flip a checkbox."""
    kind = control_kind(control)
    if kind == "slider":
        handle = control.locator(".noUi-handle").first
        box, track = handle.bounding_box(), control.locator(".noUi-target").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        dx = track["width"] * fraction * (1 if x < track["x"] + track["width"] / 2 else -1)
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y, steps=steps)
        page.mouse.up()
    elif kind == "dropdown":
        select = control.locator("select")
        options = select.locator("option").all_text_contents()
        current = select.evaluate("s => s.selectedIndex")
        select.select_option(index=(current + 1) % len(options))
    elif kind == "checkbox":
        control.locator("input[type=checkbox]").click()
    elif kind == "toggle-buttons":
        control.locator("button:not(.mod-active)").first.click()
    elif kind == "radio":
        control.locator("input[type=radio]:not(:checked)").first.check()
    else:
        raise AssertionError(f"do not know how to move a control with classes {control.get_attribute('class')}")


def check_explorer(page, cell, shot_prefix: str, *, settle_s: float = 20.0) -> list[tuple[str, str, str]]:
    """Move every control of one explorer cell; each move must change its readout and the figure.

    `page` moves the mouse (coordinates are the page's, also for a cell inside the RISE iframe);
    `cell` is a locator in the page or in a frame.

    `settle_s` bounds the wait for a redraw after each move (a figure that never changes costs all of it).
    Returns (control, value before, value after) for each control. A failed move leaves a screenshot in
    test-artifacts/."""
    import time

    try:  # widget views render asynchronously after the cell has finished
        cell.locator(CONTROLS).first.wait_for(timeout=60_000)
    except Exception:
        cell.screenshot(path=artifact(f"{shot_prefix}_no_control.png"))
        raise AssertionError("the explorer cell shows no control (slider or selector) after 60 s") from None
    cell.scroll_into_view_if_needed()
    deadline = time.monotonic() + 30
    while cell.evaluate(FIGURE_JS) in ("", "stale") and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    changes = []
    for i, control in enumerate(controls_of(cell)):
        name = control_label(control)
        before_value = control.evaluate(STATE_JS)
        before_img = cell.evaluate(FIGURE_JS)
        assert before_img not in ("", "stale"), f"control {i} ({name}): no figure under the explorer"
        control.scroll_into_view_if_needed()
        move_control(page, control)
        after_img = wait_figure_settled(page, cell, before_img, timeout_s=settle_s, quiet_ms=250, kernel_idle=True)
        after_value = control.evaluate(STATE_JS)
        if after_value == before_value or after_img == before_img:
            cell.screenshot(path=artifact(f"{shot_prefix}_control{i}_after.png"))
        assert after_value != before_value, f"control {i} ({name}): the readout stayed {before_value!r} after the move"
        assert after_img != before_img, (
            f"control {i} ({name}): the figure did not change when the value went {before_value} -> {after_value}"
        )
        changes.append((name, before_value, after_value))
    return changes
