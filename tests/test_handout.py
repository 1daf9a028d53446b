"""Handouts (`python3 course.py handout`): A4 PDFs with Hangul, math and figures, no sliders, no solutions.

The cell selection is checked on every notebook without a browser; one notebook is printed in headless
Chromium (offline) and its PDF read back with poppler's `pdftotext`/`pdfinfo` (Debian: poppler-utils,
installed by .ci/run). Without them the PDF test skips, or fails under COURSE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from tools import export_slides, handout
from tools.browser_support import ROOT, missing_browser, skip_or_fail

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PRINTED = "05_temperature"  # the notebook printed by the PDF test (math, figures, a slider, exercises)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_handout_cells(path):
    """No widget output, no hidden solution, no speaker notes; everything else stays, in order."""
    nb = nbformat.read(path, as_version=4)
    printed = handout.handout_notebook(nb)
    assert printed.metadata.get("widgets") is None
    views = [
        o for c in printed.cells if c.cell_type == "code" for o in c.outputs if handout.WIDGET_VIEW in o.get("data", {})
    ]
    assert views == [], "a slider cannot move on paper: widget outputs must be dropped"
    assert not any(handout.slide_type(c) == "notes" for c in printed.cells)
    solutions = [c for c in nb.cells if c.cell_type == "code" and handout.hidden_source(c) and 'check("' in c.source]
    assert solutions, f"{path.stem}: no hidden solution found (the exercise convention changed?)"
    kept_sources = [c.source for c in printed.cells]
    assert not any(s.source in kept_sources for s in solutions), "a hidden solution is printed"
    notes = [c for c in nb.cells if c.cell_type == "markdown" and handout.hidden_source(c)]
    assert not any(n.source in kept_sources for n in notes), "a folded answer note (풀이 노트) is printed"
    assert "## 연습문제" in "\n".join(c.source for c in printed.cells if c.cell_type == "markdown")
    # The explorer's static counterpart (a figure) and every other figure stay.
    figures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    kept = sum("image/png" in o.get("data", {}) for c in printed.cells if c.cell_type == "code" for o in c.outputs)
    solution_figures = sum("image/png" in o.get("data", {}) for c in solutions for o in c.outputs)
    assert kept == figures - solution_figures


@pytest.mark.sweep  # printing takes Chromium ~20 s; the plain run checks test_handout_cells only
@pytest.mark.notebook(PRINTED[:2])
def test_handout_pdf(tmp_path):
    """One notebook printed: A4, a sane page count, the Korean title in the text layer, math typeset."""
    reason = missing_browser()
    if reason:
        skip_or_fail(reason)
    if not (shutil.which("pdftotext") and shutil.which("pdfinfo")):
        skip_or_fail("pdftotext/pdfinfo are missing (Debian: apt-get install poppler-utils)")
    cached = all(
        any(export_slides.DEFAULT_CACHE.glob(f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"))
        for name, version in export_slides.PACKAGES.items()
    )
    if not cached:
        skip_or_fail("MathJax is not in build/npm-cache/ yet: run `python3 course.py slides --fetch-only` once")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "handout.py"), PRINTED[:2], "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pdf = tmp_path / f"{PRINTED}.pdf"
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    width, height = map(float, re.search(r"^Page size:\s+([\d.]+) x ([\d.]+) pts", info, re.M).groups())
    assert abs(width - 595.3) < 2 and abs(height - 841.9) < 2, f"not A4: {width} x {height} pt"
    assert 3 <= pages <= 40, f"{pages} pages for one notebook"
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    title = handout.notebook_title(ROOT / "notebooks" / f"{PRINTED}.ipynb")
    assert re.search(r"[\uac00-\ud7a3]", title), title
    flat = re.sub(r"\s+", " ", text)
    assert title in flat, f"the title {title!r} is not in the PDF's text layer: {flat[:300]!r}"
    assert "학습 목표" in flat and "연습문제" in flat
    assert "발표 노트" not in flat, "speaker notes were printed"
    assert "$$" not in flat and "\\frac" not in flat, "unrendered TeX in the handout"
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True)
    if images.returncode == 0:
        assert len(images.stdout.splitlines()) - 2 >= 3, "the figures are missing from the PDF"
    assert not (tmp_path / "html").exists(), "the intermediate HTML is removed"
