"""The sliders in a real browser: JupyterLab + headless Debian Chromium, driven by Playwright.

For each notebook in SLIDERS: open it, Run All, wait for the kernel to go idle, check that no
cell shows an error, then drag every slider of the widget cell and check that the readout
and the figure (the PNG under the widget) both changed. A scratch notebook whose callback
stops redrawing proves the check fails when a slider is dead.

One JupyterLab (loopback, random port, its own token and temporary config/runtime/settings
folders) and one browser serve the whole module.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import ROOT, artifact, chromium, missing_browser, skip_or_fail

# (notebook, how to find its slider): the marker is text in the source of the code cell whose
# output is the slider widget; every slider (.noUi-handle) of that cell is dragged.
# To cover a new slider notebook, add one line; entries whose notebook does not exist yet are skipped.
SLIDERS = [
    ("notebooks/01_weighted_average.ipynb", "softmax_explorer("),
    ("notebooks/04_scaling_variance.ipynb", "dk_explorer("),
    ("notebooks/05_temperature.ipynb", "temperature_explorer("),
]

# A slider that redraws only once: the figure is there, but dragging changes nothing.
BROKEN_NOTEBOOK_CELLS = [
    "import matplotlib.pyplot as plt\nimport ipywidgets as widgets\nfrom helpers import setup\n"
    "from helpers.widgets import draw_softmax\nsetup()",
    "drawn = []\n\n"
    "def redraw(s):\n"
    "    if drawn:  # broken on purpose: the callback stops redrawing after the first draw\n"
    "        return\n"
    "    drawn.append(s)\n"
    "    draw_softmax([s, 0.0, 1.0], ['a', 'b', 'c'])\n"
    "    plt.show()\n\n"
    "slider = widgets.FloatSlider(value=1.0, min=-5, max=5, step=0.1, description='s', continuous_update=False)\n"
    "widgets.VBox([slider, widgets.interactive_output(redraw, {'s': slider})])  # broken_explorer(",
]

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

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The server's root: a copy of notebooks/, because JupyterLab saves what it runs and the
    repository's notebooks must keep the outputs of one clean build (nbval compares them)."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns("src", ".ipynb_checkpoints"))
    return root


@pytest.fixture(scope="module")
def scratch_dir(site):
    """A temporary folder inside the server's root."""
    path = Path(tempfile.mkdtemp(prefix="scratch-", dir=site))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, site):
    """A JupyterLab on 127.0.0.1 that touches none of the user's Jupyter folders; yields (url, token)."""
    reason = missing_browser()
    if reason:
        skip_or_fail(reason)
    home = tmp_path_factory.mktemp("jupyter")
    settings = home / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # Keep every cell in the DOM (no virtual scrolling), so the test can find cells by their source.
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # No "get notified about Jupyter news?" toast over the screenshots.
    (settings.parent / "apputils-extension").mkdir()
    (settings.parent / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"}))
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "IPYTHONDIR": str(home / "ipython"),
           "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    # The venv's kernelspec lives in sys.prefix/share/jupyter, which JUPYTER_DATA_DIR does not hide.
    args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.open_browser=False",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={site}",
            "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
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
                    pytest.fail(f"JupyterLab did not start: {(home / 'server.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser(lab):
    with chromium() as b:
        yield b


def open_and_run_all(browser, lab, rel_path: str, shot_prefix: str):
    """Open a notebook in JupyterLab, Run All, wait for idle; return the page (no error outputs)."""
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []

    def loopback_only(route):
        if route.request.url.startswith((url, "data:", "blob:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", loopback_only)
    page.goto(f"{url}/lab/tree/{rel_path}?token={token}&reset")  # reset: only this notebook open
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext", timeout=90_000)
    page.wait_for_function("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                           " return s.session && s.session.kernel && s.session.kernel.status === 'idle'; }",
                           timeout=90_000)
    # The same command as Run → Run All Cells (not awaited: DONE_JS polls for the end, with a timeout).
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(DONE_JS, timeout=120_000, polling=500)
    errors = page.evaluate(ERRORS_JS)
    if errors:
        page.screenshot(path=artifact(f"{shot_prefix}_error.png"))
    assert errors == [], f"{rel_path}: cells show errors after Run All: {[e[:500] for e in errors]}"
    assert outside == [], f"JupyterLab tried to reach the network: {outside}"
    return page


def close(page) -> None:
    """Shut the notebook's kernel down (so kernels do not pile up on a 2-core machine) and close the tab."""
    try:
        page.evaluate("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                      " return w && w.sessionContext ? w.sessionContext.shutdown() : null; }")
    finally:
        page.close()


def widget_cell(page, marker: str):
    cell = page.locator(".jp-CodeCell").filter(has=page.locator(".jp-InputArea", has_text=marker))
    assert cell.count() == 1, f"expected one code cell containing {marker!r}, found {cell.count()}"
    return cell


def figure_src(cell) -> str:
    imgs = cell.locator(".widget-output img, .jupyter-widgets-output-area img")
    return imgs.first.get_attribute("src") if imgs.count() else ""


def drag_each_slider(page, cell, shot_prefix: str) -> list[tuple[str, str]]:
    """Drag every slider of the cell; assert each drag changes the readout and the figure.

    Returns the (readout before, readout after) pairs. Screenshots go to test-artifacts/."""
    handles = cell.locator(".noUi-handle")
    try:  # widget views render asynchronously after the cell has finished
        handles.first.wait_for(timeout=60_000)
    except Exception:
        cell.screenshot(path=artifact(f"{shot_prefix}_no_slider.png"))
        raise AssertionError("the widget cell shows no slider (.noUi-handle) after 60 s") from None
    cell.scroll_into_view_if_needed()
    page.wait_for_function("(img) => img && img.complete && img.naturalWidth > 0",
                           arg=cell.locator(".widget-output img").first.element_handle(timeout=30_000),
                           timeout=30_000)
    changes = []
    for i in range(handles.count()):
        slider = cell.locator(".widget-slider, .widget-hslider").nth(i)
        readout = slider.locator(".widget-readout")
        before_value, before_img = readout_text(readout), figure_src(cell)
        assert before_img.startswith("data:image/png"), "no figure under the widget before dragging"
        cell.screenshot(path=artifact(f"{shot_prefix}_slider{i}_before.png"))
        box = handles.nth(i).bounding_box()
        track = slider.locator(".noUi-target").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        # Move a third of the track towards the side with more room.
        dx = track["width"] / 3 * (1 if x < track["x"] + track["width"] / 2 else -1)
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx / 2, y, steps=5)
        page.mouse.move(x + dx, y, steps=5)
        page.mouse.up()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and figure_src(cell) in ("", before_img):
            page.wait_for_timeout(200)
        after_value, after_img = readout_text(readout), figure_src(cell)
        cell.screenshot(path=artifact(f"{shot_prefix}_slider{i}_after.png"))
        assert after_value != before_value, f"slider {i}: the readout stayed {before_value!r} after the drag"
        assert after_img.startswith("data:image/png") and after_img != before_img, \
            f"slider {i}: the figure did not change when the value went {before_value} -> {after_value}"
        changes.append((before_value, after_value))
    return changes


def readout_text(readout) -> str:
    return readout.evaluate("e => (e.value !== undefined && e.value !== '' ? e.value : e.textContent).trim()")


@pytest.mark.parametrize("notebook, marker", SLIDERS, ids=[Path(n).stem for n, _ in SLIDERS])
def test_slider_redraws_the_figure(browser, lab, notebook, marker):
    if not (ROOT / notebook).exists():
        pytest.skip(f"{notebook} does not exist yet")
    stem = Path(notebook).stem
    page = open_and_run_all(browser, lab, notebook, stem)
    try:
        cell = widget_cell(page, marker)
        changes = drag_each_slider(page, cell, stem)
        assert all(a != b for a, b in changes)
        # One small picture of the slider per notebook for the README (docs/images/, committed).
        cell.screenshot(path=artifact(f"{stem}_slider.png"))
    finally:
        close(page)


def test_dead_slider_is_caught(browser, lab, scratch_dir):
    """The check above must fail when the callback stops redrawing (a tiny scratch notebook)."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in BROKEN_NOTEBOOK_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = scratch_dir / "broken_slider.ipynb"
    nbformat.write(nb, path)
    rel = path.relative_to(scratch_dir.parent).as_posix()
    page = open_and_run_all(browser, lab, rel, "broken_slider")
    try:
        cell = widget_cell(page, "broken_explorer(")
        with pytest.raises(AssertionError, match="the figure did not change"):
            drag_each_slider(page, cell, "broken_slider")
    finally:
        close(page)


def test_rise_extension_is_installed():
    """Live slides: jupyterlab-rise is installed and enabled in the course's JupyterLab."""
    proc = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"],
                          capture_output=True, text=True, timeout=120)
    listing = proc.stdout + proc.stderr
    line = next((l for l in listing.splitlines() if "jupyterlab-rise" in l), "")
    assert "enabled" in line and "OK" in line, f"jupyterlab-rise is not installed/enabled:\n{listing}"


def test_rise_live_slideshow_opens(browser, lab):
    """Live slides: the notebook toolbar has RISE's button, and Alt+R renders the notebook as a reveal.js
    slideshow (a /rise/ panel next to the notebook) whose first slide shows the Hangul title."""
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{url}/lab/tree/notebooks/01_weighted_average.ipynb?token={token}&reset")
        button = page.locator('.jp-NotebookPanel-toolbar [data-command="RISE:preview"]')
        button.wait_for(timeout=90_000)
        assert "Alt+R" in (button.get_attribute("title") or ""), button.get_attribute("title")
        page.locator(".jp-Notebook").first.click()
        page.keyboard.press("Escape")  # command mode, where RISE binds Alt+R
        page.keyboard.press("Alt+r")
        deadline = time.monotonic() + 60
        frame = None
        while frame is None and time.monotonic() < deadline:
            frame = next((f for f in page.frames if "/rise/notebooks/01_weighted_average.ipynb" in f.url), None)
            page.wait_for_timeout(500)
        assert frame is not None, f"Alt+R opened no RISE slideshow: {[f.url for f in page.frames]}"
        frame.wait_for_function("() => document.querySelectorAll('.reveal .slides section').length > 1"
                                " && document.querySelector('.reveal .slides section.present')", timeout=60_000)
        title = frame.evaluate("() => document.querySelector('.reveal .slides section.present').innerText")
        assert "가중 평균에서 어텐션으로" in title, title
        page.screenshot(path=artifact("rise_live_slideshow.png"))
    finally:
        page.close()
