"""The explorers in a real browser: JupyterLab + headless Debian Chromium, driven by Playwright.

Every notebook whose stored outputs hold a widget (an explorer: `helpers.widgets.Explorer`, or any
ipywidgets view) is opened, Run All, checked for error outputs, and then every control of every
explorer is moved as a hand would (a slider's handle dragged through ten pointer moves, a selector
switched, a checkbox flipped): its readout must change and so must the picture (the image bytes, not
just the URL). The explorers are found from the notebooks themselves, so a new one is covered without
editing this file. A scratch notebook with a working and a dead Explorer (its update stops changing
the figure) proves the check fails when a slider is dead (a `sweep` item: its own kernel and JupyterLab
tab cost about 13 s of the plain run). In the live RISE slideshow the 04 and 05
explorers must render on their slide and follow a drag there too, with no request leaving the machine.

One JupyterLab (loopback, random port, its own token and temporary config/runtime/settings
folders), one browser and one JupyterLab tab serve the whole module: the tab loads JupyterLab's
scripts once, then opens one notebook after another (File → Open), and closes each with its kernel.
Each notebook's check is a class of its own, so pytest-xdist's `--dist loadscope` spreads the
notebooks over the workers; a worker keeps its server, browser and tab while it runs one notebook
class after another (they come in a row) and closes them before another module
(tests/test_slides.py starts its own Playwright, which cannot run beside this one).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tools.browser_support import (
    FIGURE_JS,
    ROOT,
    artifact,
    check_explorer,
    chromium,
    close_all,
    controls_of,
    explorer_cell,
    explorer_cells,
    jupyter_lab,
    lab_tab,
    move_control,
    open_and_run_all,
    wait_figure_settled,
)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WITH_EXPLORERS = [p for p in NOTEBOOKS if explorer_cells(p)]
RISE_NOTEBOOKS = [p for p in WITH_EXPLORERS if p.name[:2] in ("04", "05")]

# Two explorers built with helpers.widgets.Explorer: one works, one is dead (its update changes the
# figure only the first time). The browser check must pass the first and fail the second.
SCRATCH_CELLS = [
    "import ipywidgets as widgets\nimport matplotlib.pyplot as plt\nfrom helpers import setup\n"
    "from helpers.widgets import Explorer\nsetup()",
    "def make(dead):\n"
    "    fig, ax = plt.subplots(figsize=(4, 2.5), dpi=72)\n"
    "    bars = ax.bar(range(3), [1, 1, 1])\n"
    "    ax.set_ylim(0, 6)\n"
    "    drawn = []\n\n"
    "    def update(s, shape):\n"
    "        if dead and drawn:  # broken on purpose: the figure stops changing after the first draw\n"
    "            return\n"
    "        drawn.append(s)\n"
    "        for i, bar in enumerate(bars):\n"
    "            bar.set_height(s * (i + 1) / 3 if shape == 'up' else s * (3 - i) / 3)\n\n"
    "    return Explorer(fig, update, {\n"
    "        's': widgets.FloatSlider(value=1.0, min=0.5, max=5, step=0.1, description='s'),\n"
    "        'shape': widgets.Dropdown(options=['up', 'down'], value='up', description='shape')})",
    "make(dead=False)",
    "make(dead=True)",
]


def explorer_copy(notebook: Path, target: Path) -> None:
    """What JupyterLab runs: the notebook's code cells up to its last explorer, in order (the kernel
    state every explorer sees is the notebook's own), without the prose and the cells after it.
    Rendering some 80 markdown cells (MathJax) and running the exercises took about half of this
    module's CPU; nbval already runs every cell and fails on any error. The RISE notebooks keep every
    cell: their slideshow check needs the slides."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    if notebook not in RISE_NOTEBOOKS:
        last = explorer_cells(notebook)[-1]
        nb.cells = [c for c in nb.cells[: last + 1] if c.cell_type == "code"]
    nbformat.write(nb, target)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The server's root: copies of the notebooks (see explorer_copy), because JupyterLab saves what it
    runs and the repository's notebooks must keep the outputs of one clean build (nbval compares them)."""
    root = tmp_path_factory.mktemp("course")
    (root / "notebooks").mkdir()
    for notebook in WITH_EXPLORERS:
        explorer_copy(notebook, root / "notebooks" / notebook.name)
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
    with jupyter_lab(site, tmp_path_factory.mktemp("jupyter")) as server:
        yield server


@pytest.fixture(scope="module")
def browser(lab):
    with chromium() as b:
        yield b


class Tab:
    """The module's JupyterLab tab, shared by the checks a worker runs in a row."""

    def __init__(self, browser, lab):
        self.browser, self.lab, self.page = browser, lab, None

    @contextmanager
    def session(self):
        """The tab for one check; afterwards its notebooks are closed and their kernels shut down. A
        failed check may leave a dialog or a half-open slideshow behind: the next one gets a new tab."""
        if self.page is None:
            self.page = lab_tab(self.browser, self.lab)
        clean = False
        try:
            yield self.page
            clean = True
        finally:
            try:
                close_all(self.page)
            except Exception:
                clean = False
            if not clean:
                self.page.close()
                self.page = None


@pytest.fixture(scope="module")
def tab(browser, lab):
    shared = Tab(browser, lab)
    yield shared
    if shared.page is not None:
        shared.page.close()


def test_explorers_are_found():
    """Discovery reads the stored outputs: every notebook with a slider is covered below."""
    found = {p.stem: len(explorer_cells(p)) for p in NOTEBOOKS}
    assert sum(found.values()) >= len(NOTEBOOKS), f"fewer explorers than notebooks: {found}"


class ExplorerChecks:
    """One notebook's browser check; a `Test_<notebook>` subclass per notebook below, so that pytest-xdist's
    `--dist loadscope` runs different notebooks on different workers (a class is one scope) while the
    module-scoped server and browser are shared by the notebooks a worker runs in a row."""

    notebook: Path

    def test_every_control_of_every_explorer_redraws(self, tab, site):
        """Run All (the code up to the last explorer: explorer_copy), then move every control of every
        explorer; for 04 and 05 also the RISE slideshow (check_rise_slideshow: the widget on its slide,
        a drag there, nothing requested from outside)."""
        notebook = self.notebook
        with tab.session() as page:
            open_and_run_all(page, f"notebooks/{notebook.name}", notebook.stem)
            for k, index in enumerate(explorer_cells(site / "notebooks" / notebook.name)):
                cell = explorer_cell(page, index)
                changes = check_explorer(page, cell, f"{notebook.stem}_explorer{k}")
                assert cell.locator(".course-explorer").count() == 1, (
                    f"explorer {k} (cell {index}) is not a helpers.widgets.Explorer (it works, but redraws differently)"
                )
                assert changes, f"explorer {k} (cell {index}) has no control"
                # One small picture of each explorer for the README (docs/images/ holds the chosen ones).
                cell.screenshot(path=artifact(f"{notebook.stem}_explorer{k}.png"))
            if notebook in RISE_NOTEBOOKS:  # in the same session: Run All once per notebook (CI time)
                check_rise_slideshow(page, notebook)


# The plain `course.py test` runs one notebook here (every explorer is the same helpers.widgets.Explorer; each
# notebook's update functions are also moved through every frame by the site build and tests/test_site.py);
# `course.py test --sweep` (.ci/run) and `course.py test NN` run every notebook, 04 and 05 with their RISE slideshow.
SAMPLE = "01"
for _nb in WITH_EXPLORERS:  # Test_04_scaling_variance, ...: `-k 04_scaling` still selects one notebook
    _marks = [] if _nb.name.startswith(SAMPLE) else [pytest.mark.sweep]
    globals()[f"Test_{_nb.stem}"] = type(f"Test_{_nb.stem}", (ExplorerChecks,), {"notebook": _nb, "pytestmark": _marks})
del _nb, _marks


@pytest.mark.sweep
def test_dead_explorer_is_caught(tab, scratch_dir):
    """The check above passes a working Explorer and fails one whose update stops changing the figure."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in SCRATCH_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = scratch_dir / "scratch_explorers.ipynb"
    nbformat.write(nb, path)
    rel = path.relative_to(scratch_dir.parent).as_posix()
    with tab.session() as page:
        open_and_run_all(page, rel, "scratch_explorers")
        changes = check_explorer(page, explorer_cell(page, 2), "scratch_working")
        assert [name for name, _, _ in changes] == ["s", "shape"], changes
        with pytest.raises(AssertionError, match="the figure did not change"):
            # The dead one never redraws (the working one takes well under a second), so waiting the
            # full 20 s would only prove it again.
            check_explorer(page, explorer_cell(page, 3), "scratch_dead", settle_s=3)


# The working explorer again, in a kernel without COURSE_CHECK_FIGURES (a learner's: it draws the selector's other
# option ahead after the cell), then a cell that makes its next update sleep 4 s once `slow` holds a value (set
# from the page; a widget's message runs on a kernel subshell, so the kernel is free for it).
BUSY_CELLS = [
    "import os\n\nos.environ.pop('COURSE_CHECK_FIGURES', None)",
    *SCRATCH_CELLS[:2],
    "ex = make(dead=False)\nex",
    "import time\n\nslow, _update = [], ex.update\n"
    "ex.update = lambda **values: (time.sleep(4) if slow and slow.pop() else None, _update(**values))[1]",
]
RUN_IN_KERNEL_JS = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await kernel.requestExecute({code}).done;
}"""


def shown_within(page, cell, before: str, seconds: float) -> tuple[str, float]:
    """The figure once it differs from `before` (or `before` after `seconds`), and how long that took."""
    start, shown = time.monotonic(), before
    while shown == before and time.monotonic() - start < seconds:
        page.wait_for_timeout(50)
        shown = cell.evaluate(FIGURE_JS)
    return shown, time.monotonic() - start


@pytest.mark.sweep
def test_a_kept_frame_shows_while_the_kernel_is_busy(tab, scratch_dir):
    """helpers/explorer_picture.js: a selector switched to the option drawn ahead after the explorer's cell, and a
    slider moved back to a value the kernel drew before, show their frames from the front end's own copy, long
    before the busy kernel (its next update sleeps 4 s) could send them; the kernel's frame, when it comes, is the
    same."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in BUSY_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = scratch_dir / "scratch_busy.ipynb"
    nbformat.write(nb, path)
    with tab.session() as page:
        open_and_run_all(page, path.relative_to(scratch_dir.parent).as_posix(), "scratch_busy")
        cell = explorer_cell(page, 3)
        first = wait_figure_settled(page, cell, "", kernel_idle=True)
        page.evaluate(RUN_IN_KERNEL_JS, "slow.append(1)")
        cell.locator("select").select_option("down")  # drawn ahead after the cell ran, before any hand's move
        down, took = shown_within(page, cell, first, 3)
        assert down != first and took < 2, f"the frame drawn ahead for shape='down' did not show at once ({took:.1f} s)"
        assert wait_figure_settled(page, cell, first, kernel_idle=True) == down  # the kernel's, when it came
        cell.locator("select").select_option("up")
        assert wait_figure_settled(page, cell, down, kernel_idle=True) == first
        cell.locator(".noUi-handle").first.focus()
        page.keyboard.press("ArrowRight")  # s 1.0 -> 1.1, drawn by the kernel
        moved = wait_figure_settled(page, cell, first, kernel_idle=True)
        page.keyboard.press("ArrowLeft")
        assert wait_figure_settled(page, cell, moved, kernel_idle=True) == first and moved != first
        page.evaluate(RUN_IN_KERNEL_JS, "slow.append(1)")
        page.keyboard.press("ArrowRight")  # back to 1.1: the kernel sleeps 4 s before it draws
        shown, took = shown_within(page, cell, first, 3)
        assert shown == moved and took < 2, f"the kept frame for s=1.1 did not show at once ({took:.1f} s)"
        assert wait_figure_settled(page, cell, first, kernel_idle=True) == moved  # the kernel's, when it came


@pytest.mark.sweep
def test_rise_extension_is_installed():
    """Live slides: jupyterlab-rise is installed and enabled in the course's JupyterLab."""
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True, text=True, timeout=120
    )
    listing = proc.stdout + proc.stderr
    line = next((l for l in listing.splitlines() if "jupyterlab-rise" in l), "")
    assert "enabled" in line and "OK" in line, f"jupyterlab-rise is not installed/enabled:\n{listing}"


# RISE's reveal themes other than white/black @import fonts from fonts.googleapis.com (checked in
# jupyterlab-rise 0.43's bundled theme CSS; "simple", its default, asks for News Cycle and Lato). The
# theme comes from the notebook's metadata (`rise.theme`, written by tools/build_notebooks.py), which
# overrides any JupyterLab setting, so the notebooks must name an offline theme.
OFFLINE_RISE_THEMES = {"white"}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_rise_theme_needs_no_outside_fonts(notebook):
    import json

    rise = json.loads(notebook.read_text(encoding="utf-8"))["metadata"].get("rise", {})
    assert rise.get("theme", "simple") in OFFLINE_RISE_THEMES, (
        f"{notebook.stem}: RISE theme {rise.get('theme', 'simple (default)')!r} fetches Google fonts during the "
        f'live slideshow; set "theme": "white" in tools/build_notebooks.py\'s notebook metadata and rebuild'
    )


def rise_frame(page, notebook: Path, timeout_s: float = 60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        frame = next((f for f in page.frames if f"/rise/notebooks/{notebook.name}" in f.url), None)
        if frame is not None:
            return frame
        page.wait_for_timeout(500)
    raise AssertionError(f"Alt+R opened no RISE slideshow: {[f.url for f in page.frames]}")


def check_rise_slideshow(page, notebook: Path) -> None:
    """Live slides: with the explorer's cell selected, Alt+R opens RISE (reveal.js in a /rise/ panel)
    on the explorer's slide; the widget renders there and a drag inside the slideshow changes the
    picture. No request leaves 127.0.0.1 (RISE's default theme would fetch Google fonts)."""
    index = explorer_cells(notebook)[0]
    explorer_cell(page, index)
    # Select the explorer's cell: RISE starts on the slide of the selected cell.
    page.evaluate(
        "(i) => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = i;"
        " nb.mode = 'command'; nb.node.focus(); }",
        index,
    )
    page.keyboard.press("Alt+r")
    frame = rise_frame(page, notebook)
    frame.wait_for_function("() => document.querySelector('.reveal .slides section.present')", timeout=60_000)
    title = frame.evaluate("() => document.querySelector('.reveal .slides section h1').innerText")
    assert notebook.name[:2] in title, title
    present = frame.locator(".reveal .slides section.present")
    cell = present.locator(".jp-CodeCell").filter(has=frame.locator(".widget-slider, .widget-dropdown")).first
    try:
        cell.locator(".widget-slider, .widget-dropdown").first.wait_for(timeout=60_000)
    except Exception:
        page.screenshot(path=artifact(f"rise_{notebook.stem}_no_widget.png"))
        raise AssertionError("the explorer does not render on its RISE slide") from None
    before = wait_figure_settled(page, cell, "", timeout_s=30, quiet_ms=300)
    assert before not in ("", "stale"), "no figure under the explorer on its RISE slide"
    page.screenshot(path=artifact(f"rise_{notebook.stem}_explorer.png"))
    control = controls_of(cell)[0]
    value = control.evaluate("c => c.textContent")
    move_control(page, control)
    after = wait_figure_settled(page, cell, before)
    page.screenshot(path=artifact(f"rise_{notebook.stem}_explorer_moved.png"))
    assert after != before, f"a drag inside RISE did not change the picture (control {value!r})"
    assert page.course_outside == [], (
        f"the live slideshow asked outside for: {page.course_outside} (RISE reads its reveal theme from the "
        "notebook's metadata `rise.theme`; see test_rise_theme_needs_no_outside_fonts)"
    )
