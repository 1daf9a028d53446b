"""Offline slides (`python3 course.py slides`): every deck loads only local files and renders offline.

The decks are built into a temporary folder with tools/export_slides.py from the npm tarballs cached in
build/npm-cache/ (filled by `python3 course.py slides` or `--fetch-only`; the tests themselves never
touch the network). The plain run exports the SAMPLE decks and walks 01 in headless Chromium with every non-file
request aborted; the sweep (`course.py test --sweep`) exports and walks all of them.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tools import export_slides, measure_slides
from tools.browser_support import ROOT, artifact, explorer_cells, skip_or_fail

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


OPENED = "01_weighted_average"  # the deck opened in the browser
# The plain `course.py test` exports these decks only (01 is opened and walked slide by slide, 02 holds a math-table
# slide, 05 the slider the clicker test touches); `--sweep` and `--nb NN` runs export and walk theirs (07 holds
# the other math-table slide).
SAMPLE = ("01", "02", "05")


def exported(selected_notebooks: list[str], sample_run: bool = False) -> list[Path]:
    """The notebooks the `decks` fixture exported: all, those `--nb` selects, or the plain run's sample."""
    if sample_run:
        return [p for p in NOTEBOOKS if p.name[:2] in SAMPLE]
    return [p for p in NOTEBOOKS if not selected_notebooks or p.name[:2] in selected_notebooks]


def each_deck(extra_marks=()) -> list:
    """Every deck as a parameter; those outside the sample are `sweep` items."""
    return [
        pytest.param(p.stem, marks=[*extra_marks] + ([] if p.name[:2] in SAMPLE else [pytest.mark.sweep]), id=p.stem)
        for p in NOTEBOOKS
    ]


HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.fixture(scope="module")
def decks(tmp_path_factory, selected_notebooks, sample_run) -> Path:
    """Every notebook exported (each deck is checked for external references; about 2 s a notebook), only
    the notebooks `--nb` selects, or the plain run's SAMPLE."""
    cached = all(
        any(export_slides.DEFAULT_CACHE.glob(f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"))
        for name, version in export_slides.PACKAGES.items()
    )
    if not cached:  # tests never touch the network: the cache is filled by a set-up step
        skip_or_fail(
            "the slide libraries are not in build/npm-cache/ yet: run `python3 course.py slides` "
            "once (it fetches reveal.js and MathJax through npm), then test again"
        )
    out = tmp_path_factory.mktemp("slides")
    # "reuse": the decks get players where build/explorer-frames/ has them (CI builds the site
    # first, so all of them) and never re-run the notebooks here; tests/test_site.py computes its own.
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "export_slides.py"),
            *(SAMPLE if sample_run else selected_notebooks),
            "--out",
            str(out),
            "--frames",
            "reuse",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


# --------------------------------------------------------------------------- static references


class References(HTMLParser):
    """Collect every URL the page itself loads: src/href/data/srcset attributes, CSS url()/@import
    in <style> and style="", and string literals in inline scripts (import, require, src = '...').
    Hyperlinks (<a href>) are not loaded, and xmlns/xlink namespace attributes are not references."""

    LOADING = {"src", "data", "poster", "srcset"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[tuple[str, str]] = []  # (where, url)
        self._in: str | None = None
        self._script_type = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name, value in attrs.items():
            if value is None:
                continue
            if name in self.LOADING:
                for part in value.split(",") if name == "srcset" else [value]:
                    self.urls.append((f"<{tag} {name}>", part.strip().split(" ")[0]))
            elif name in ("href", "xlink:href") and tag != "a":
                self.urls.append((f"<{tag} {name}>", value))
            elif name == "style":
                self.urls += [(f"<{tag} style>", u) for u in css_urls(value)]
        if tag in ("style", "script"):
            self._in, self._script_type = tag, (attrs.get("type") or "").lower()

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "style":
            self.urls += [("<style>", u) for u in css_urls(data)]
        elif self._in == "script" and self._script_type in ("", "text/javascript", "module", "application/javascript"):
            self.urls += [("<script>", u) for u in script_urls(data)]


def css_urls(css: str) -> list[str]:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)  # comments mention URLs that nothing loads
    found = re.findall(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)""", css)
    found = [a or b or c for a, b, c in found]
    found += re.findall(r"""@import\s+["']([^"']+)["']""", css)
    return found


def script_urls(js: str) -> list[str]:
    """String literals in inline code that name a resource: any http(s)://, ws(s):// or //host URL, plus
    the targets of import, require([...]) and src = '...' (these must then be local)."""
    js = re.sub(r"^\s*//.*$", "", js, flags=re.M)
    literals = re.findall(r"""["']([^"'\n]*)["']""", js)
    loaded = [s for s in literals if re.match(r"^((https?|wss?|ftp):)?//", s, re.I)]
    loaded += re.findall(r"""\bimport\s+(?:[\w{}\s,*]+\s+from\s+)?["']([^"']+)["']""", js)
    for block in re.findall(r"require\(\s*(?:\{.*?\}\s*,\s*)?\[(.*?)\]", js, flags=re.S):
        loaded += re.findall(r"""["']([^"']+)["']""", block)
    loaded += re.findall(r"""(?:src|Src)\s*=\s*["']([^"']+)["']""", js)
    return loaded


def is_local(url: str) -> bool:
    """Relative paths, #fragments and data: URIs only (an absolute /path would break once moved)."""
    if url.startswith(("data:", "#")) or url == "":
        return True
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and not url.startswith(("/", "\\"))


def references(page: Path) -> list[tuple[str, str]]:
    parser = References()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.urls


def local_file(base: Path, url: str) -> Path:
    return (base.parent / unquote(urlsplit(url).path)).resolve()


def test_reference_checker_is_precise():
    html = """<html><head>
      <script src="lib/a.js"></script><script src="https://cdn.example/x.js"></script>
      <link rel="stylesheet" href="//fonts.example/css">
      <style>/* see https://example.org */ @import url("https://evil/font.css"); .a{background:url(b.png)}</style>
      <script>require(["lib/r.js", "http://cdn/r.js"], f); var s = 'https://unpkg.com/x.js';
      import m from 'data:text/javascript,1';</script>
      <script type="application/vnd.jupyter.widget-state+json">{"u": "https://not.loaded/state"}</script>
      </head><body><p>Read https://example.com in prose.</p><a href="https://example.com">link</a>
      <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="#g"/></svg>
      <img src="data:image/png;base64,AAAA"></body></html>"""
    parser = References()
    parser.feed(html)
    external = sorted({u for _, u in parser.urls if not is_local(u)})
    assert external == [
        "//fonts.example/css",
        "http://cdn/r.js",
        "https://cdn.example/x.js",
        "https://evil/font.css",
        "https://unpkg.com/x.js",
    ]
    assert {"lib/a.js", "b.png", "lib/r.js", "#g"} <= {u for _, u in parser.urls}


@pytest.mark.each_selected_notebook
def test_decks_exist_for_every_notebook(decks, selected_notebooks, sample_run):
    built = sorted(p.name for p in decks.glob("*.slides.html"))
    assert built == sorted(f"{p.stem}.slides.html" for p in exported(selected_notebooks, sample_run))
    assert (decks / "index.html").exists()


@pytest.mark.parametrize("stem", each_deck())
def test_deck_loads_nothing_external(decks, stem):
    """Every reference in the deck, and in the CSS files it loads (recursively), is local and exists."""
    deck = decks / f"{stem}.slides.html"
    pending = [(deck, where, url) for where, url in references(deck)]
    assert any("reveal.js" in url for _, _, url in pending), "the deck does not load reveal.js at all?"
    seen: set[Path] = set()
    while pending:
        page, where, url = pending.pop()
        assert is_local(url), f"{page.name} {where} loads an external URL: {url}"
        if url.startswith(("data:", "#")) or not url:
            continue
        target = local_file(page, url)
        assert target.is_file(), f"{page.name} {where} loads {url}, which is not in the slides folder"
        assert decks.resolve() in target.parents, f"{url} points outside the slides folder"
        if target.suffix == ".css" and target not in seen:
            seen.add(target)
            pending += [(target, "css", u) for u in css_urls(target.read_text(encoding="utf-8"))]


@pytest.mark.notebook(OPENED[:2])
def test_speaker_notes_are_notes_not_slides(decks):
    nb = json.loads((ROOT / "notebooks" / f"{OPENED}.ipynb").read_text(encoding="utf-8"))
    notes = [c for c in nb["cells"] if c["metadata"].get("slideshow", {}).get("slide_type") == "notes"]
    html = (decks / f"{OPENED}.slides.html").read_text(encoding="utf-8")
    assert notes, "the notebook has no speaker notes to check"
    assert html.count('<aside class="notes">') == len(notes)


def slide_type(cell) -> str:
    return cell["metadata"].get("slideshow", {}).get("slide_type", "-")


@pytest.mark.parametrize("stem", each_deck())
def test_skipped_cells_are_not_on_the_slides(decks, stem):
    """Cells of slide type `skip` (set-up, assert-only, long helper cells) stay in the notebook only."""
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    html = (decks / f"{stem}.slides.html").read_text(encoding="utf-8")
    shown = len(re.findall(r'<div[^>]* class="jp-Cell ', html))
    assert shown == sum(slide_type(c) != "skip" for c in nb["cells"]), (
        f"{stem}: {shown} cells in the deck, but {sum(slide_type(c) == 'skip' for c in nb['cells'])} of "
        f"{len(nb['cells'])} cells are `skip`"
    )
    assert "reveal_scroll" not in html and "var scroll = false" in html, "slides must not turn into scrolling pages"


# --------------------------------------------------------------------------- offline browser


def only_local(page) -> list[str]:
    """Abort every request that is not a file: or data: URL; return the list of those attempted."""
    attempted: list[str] = []

    def route(r):
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            attempted.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return attempted


# Read once per deck, before any navigation: the leaves (slides and sub-slides) in document order, a
# recorder of every slide change, the headings reveal's theme would upper-case, the speaker notes that
# still hold MathJax's own output, and the in-deck links (#id) whose target is missing.
DECK_FACTS_JS = r"""async () => {
  const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  Reveal.slide(0, 0);
  const leaves = [...document.querySelectorAll('.reveal .slides section')].filter(s => !s.querySelector('section'));
  window.courseVisited = [];
  Reveal.on('slidechanged', e => window.courseVisited.push(leaves.indexOf(e.currentSlide)));
  const headings = [...document.querySelectorAll('.reveal .slides h1, .reveal .slides h2, .reveal .slides h3')];
  const notes = [...document.querySelectorAll('.reveal aside.notes')];
  const byId = h => document.getElementById(h.slice(1)) || document.getElementById(decodeURIComponent(h.slice(1)));
  const anchors = [...document.querySelectorAll('.reveal .slides a[href^="#"]')]
    .map(a => a.getAttribute('href')).filter(h => h.length > 1 && h[1] !== '/');
  return {
    leaves: leaves.length,
    headings: headings.length,
    transformed: headings.filter(h => getComputedStyle(h).textTransform !== 'none').map(h => h.textContent.trim()),
    notes: notes.length,
    notesWithMath: notes.filter(n => n.querySelector('math')).length,
    notesLabelled: notes.filter(n => n.textContent.trim().startsWith('발표 노트')).length,
    notesTwice: notes.filter(n => n.querySelector('.MathJax_CHTML, .MathJax_Preview, .MJX_Assistive_MathML'))
      .map(n => n.textContent.trim().slice(0, 60)),
    anchors: anchors.length,
    missingAnchors: anchors.filter(h => !byId(h)),
  };
}"""

# Click the last in-deck link to a heading: the deck must show the slide that holds the heading.
ANCHOR_JS = r"""async () => {
  const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
  const links = [...document.querySelectorAll('.reveal .slides a[href^="#"]')]
    .filter(a => a.getAttribute('href').length > 1 && a.getAttribute('href')[1] !== '/');
  if (!links.length) return null;
  const a = links[links.length - 1], h = a.getAttribute('href');
  const target = document.getElementById(h.slice(1)) || document.getElementById(decodeURIComponent(h.slice(1)));
  Reveal.slide(0, 0);
  a.click();
  return {href: h, shown: Reveal.getCurrentSlide().contains(target)};
}"""


@pytest.fixture(scope="module")
def opened_decks(decks, browser, selected_notebooks, sample_run) -> dict[str, dict]:
    """Every deck opened once (the plain run: OPENED only), in one browser page (network blocked): its facts,
    the slides → reaches from the first slide (one press more than there are slides: the last must not move),
    the in-deck link clicked, then every slide measured (tools/measure_slides.py)."""
    page = browser.new_page(viewport={"width": 998, "height": 727})
    attempted = only_local(page)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    opened = {}
    walked = [ROOT / "notebooks" / f"{OPENED}.ipynb"] if sample_run else exported(selected_notebooks)
    for notebook in walked:
        measure_slides.open_deck(page, decks / f"{notebook.stem}.slides.html")
        facts = page.evaluate(DECK_FACTS_JS)
        for _ in range(facts["leaves"]):
            page.keyboard.press("ArrowRight")
        facts["visited"] = page.evaluate("() => window.courseVisited")
        facts["anchor"] = page.evaluate(ANCHOR_JS)
        facts["sizes"] = measure_slides.measure_page(page)
        opened[notebook.stem] = facts
    page.close()
    assert attempted == [], f"a deck tried to reach the network: {attempted[:5]}"
    assert errors == [], f"JavaScript errors in the decks: {errors[:5]}"
    return opened


@pytest.mark.each_selected_notebook
def test_arrow_right_alone_reaches_every_slide_in_order(opened_decks):
    """A presenter pressing → (or a clicker sending →) sees every slide and sub-slide once, in document
    order (reveal's navigationMode 'linear'); before, → skipped the sub-slides: 145 of 569 slides."""
    wrong = {
        stem: f"{f['leaves']} slides, → visited {f['visited'][:12]}..."
        for stem, f in opened_decks.items()
        if f["visited"] != list(range(1, f["leaves"]))
    }
    assert not wrong, f"→ does not reach every slide in order: {wrong}"
    assert all(f["leaves"] >= 10 for f in opened_decks.values()), {s: f["leaves"] for s, f in opened_decks.items()}


@pytest.mark.each_selected_notebook
def test_headings_keep_their_case(opened_decks):
    """The reveal theme's text-transform: uppercase turned "오프셋 k" into "오프셋 K" (K is the key matrix)."""
    for stem, f in opened_decks.items():
        assert f["headings"] > 0 and f["transformed"] == [], f"{stem}: headings re-cased by CSS: {f['transformed'][:5]}"


@pytest.mark.each_selected_notebook
def test_speaker_notes_show_each_formula_once(opened_decks):
    """The notes a speaker window copies hold MathML only, not MathJax's CommonHTML spans plus its hidden
    MathML (which the speaker window, without MathJax's stylesheet, showed as the formula twice), and do
    not repeat the window's label 발표 노트."""
    twice = {stem: f["notesTwice"] for stem, f in opened_decks.items() if f["notesTwice"]}
    assert not twice, f"speaker notes still holding MathJax's output: {twice}"
    labelled = {stem: f["notesLabelled"] for stem, f in opened_decks.items() if f["notesLabelled"]}
    assert not labelled, f"notes starting 발표 노트 under the speaker view's own label 발표 노트: {labelled}"
    assert sum(f["notes"] for f in opened_decks.values()) > 0, "no speaker note was checked"
    with_math = [stem for stem in opened_decks if notes_with_math(ROOT / "notebooks" / f"{stem}.ipynb")]
    if with_math:  # `course.py test 09` opens one deck, whose notes have no formula
        assert sum(opened_decks[s]["notesWithMath"] for s in with_math) > 0, (
            f"no note with a formula checked in {with_math}"
        )


def notes_with_math(notebook: Path) -> int:
    """How many of a notebook's speaker-note cells hold a formula ($...$)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    notes = [c for c in cells if c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"]
    return sum("$" in "".join(c["source"]) for c in notes)


@pytest.mark.each_selected_notebook
def test_in_deck_links_reach_their_slide(opened_decks):
    for stem, f in opened_decks.items():
        assert f["missingAnchors"] == [], f"{stem}: links to no element: {f['missingAnchors']}"
        if f["anchor"] is not None:
            assert f["anchor"]["shown"], f"{stem}: clicking {f['anchor']['href']} did not show its slide"
    assert any(f["anchor"] for f in opened_decks.values()), "no in-deck link was clicked"


@pytest.mark.each_selected_notebook
def test_every_slide_fits_960x700(opened_decks):
    """Every slide and sub-slide of every deck fits reveal's 960x700 slide area, as reveal lays it out
    and places it (tools/measure_slides.py: each leaf section made current, its scrollHeight/scrollWidth
    and its position inside the box read once MathJax has re-typeset it)."""
    too_big = []
    for stem, f in opened_decks.items():
        sizes = f["sizes"]
        assert sizes, f"{stem}: no slides measured"
        too_big += [
            f'{stem} slide {s["index"]}: {s["width"]}x{s["height"]} px at ({s["left"]}, {s["top"]}), "{s["title"]}"'
            for s in measure_slides.too_big(sizes)
        ]
    assert not too_big, (
        f"{len(too_big)} slide(s) larger than {measure_slides.WIDTH}x{measure_slides.HEIGHT} "
        "(split with ### / subslide, or make cells `skip`; `python3 course.py slides-fit NN`):\n" + "\n".join(too_big)
    )


@pytest.mark.notebook(OPENED[:2])
def test_deck_renders_offline_in_chromium(decks, browser):
    attempted: list[str] = []

    def only_files(route):
        url = route.request.url
        if url.startswith(("file:", "data:")):
            route.continue_()
        else:
            attempted.append(url)
            route.abort()

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.route("**/*", only_files)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((decks / f"{OPENED}.slides.html").as_uri())
    page.wait_for_function("() => document.querySelector('.reveal.ready')", timeout=90_000)
    # MathJax typesets asynchronously: wait until its queue is empty and something was rendered.
    page.wait_for_function(
        "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
        " && document.querySelectorAll('.MathJax_CHTML, mjx-container').length > 0",
        timeout=90_000,
    )
    # The sliders render from the widget state stored in the notebook, when it holds the shown views
    # (nbconvert emits a widget-view script only then); the static counterpart figures always show.
    html = (decks / f"{OPENED}.slides.html").read_text(encoding="utf-8")
    has_widget_state = '<script type="application/vnd.jupyter.widget-view+json">' in html
    if has_widget_state:
        page.wait_for_function("() => document.querySelectorAll('.widget-slider').length > 0", timeout=90_000)
    page.screenshot(path=artifact(f"slides_{OPENED}_title.png"))
    facts = page.evaluate(r"""async () => {
      const visibleText = root => {  // text a viewer sees: no <script> (MathJax keeps TeX there)
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: n =>
          n.parentElement.closest('script, style, aside.notes, .MJX_Assistive_MathML')
            ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
        let s = ''; while (walker.nextNode()) s += walker.currentNode.data + '\n'; return s;
      };
      const h1 = document.querySelector('.slides section h1');
      const h1Width = h1.getBoundingClientRect().width;  // measured on the title slide, shown now
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = getComputedStyle(h1).font;
      const text = visibleText(document.querySelector('.slides'));
      const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
      const figures = [...document.querySelectorAll('.jp-OutputArea-output img')]
        .filter(i => i.src.startsWith('data:image/png') && !i.closest('.widget-output')).length;
      const slider = document.querySelector('.widget-slider');
      const widget = slider ? slider.closest('section') : null;
      if (widget) { const where = Reveal.getIndices(widget); Reveal.slide(where.h, where.v); }
      const notes = [...document.querySelectorAll('aside.notes')];
      return {
        h1: h1.textContent, h1Width,
        // A font without Hangul draws every syllable as the same box as an unassigned code point.
        hangulWidth: ctx.measureText('가중 평균').width, tofuWidth: ctx.measureText('\u{10FFFD}\u{10FFFD} \u{10FFFD}\u{10FFFD}').width,
        math: document.querySelectorAll('.MathJax_CHTML, mjx-container').length,
        mathErrors: document.querySelectorAll('.MathJax_Error, merror, [data-mjx-error]').length,
        rawDisplayMath: (text.match(/\$\$/g) || []).length,
        rawTex: (text.match(/\\(frac|sqrt|sum|exp|mathrm|top)\b/g) || []).slice(0, 5),
        notesShown: notes.filter(n => n.offsetParent !== null || n.getBoundingClientRect().height > 0).length,
        notesInOwnSection: notes.filter(n => n.parentElement.tagName === 'SECTION' &&
          visibleText(n.parentElement).trim() === '').length,
        sliders: document.querySelectorAll('.widget-slider').length,
        figures,
        widgetFigure: widget ? widget.querySelectorAll('.widget-output img, .jupyter-widgets-output-area img, img.widget-image').length : 0,
      };
    }""")
    page.wait_for_timeout(800)  # the slide transition
    page.screenshot(path=artifact(f"slides_{OPENED}_widget.png"))

    assert attempted == [], f"the deck tried to reach the network: {attempted}"
    assert errors == [], f"JavaScript errors: {errors}"
    assert HANGUL.search(facts["h1"]) and facts["h1Width"] > 0, facts
    assert facts["hangulWidth"] > 0 and facts["hangulWidth"] != facts["tofuWidth"], f"Hangul renders as boxes: {facts}"
    assert facts["math"] > 0 and facts["mathErrors"] == 0, facts
    assert facts["rawDisplayMath"] == 0 and facts["rawTex"] == [], f"unrendered TeX in the slides: {facts}"
    assert facts["notesShown"] == 0 and facts["notesInOwnSection"] == 0, f"speaker notes show as slides: {facts}"
    assert facts["figures"] > 0, f"no figure (static counterparts included) shows in the deck: {facts}"
    if has_widget_state:
        assert facts["sliders"] > 0 and facts["widgetFigure"] > 0, f"the widgets' stored state did not render: {facts}"


def test_course_py_has_the_slides_command():
    assert '"slides"' in (ROOT / "course.py").read_text(encoding="utf-8")


@pytest.mark.notebook(OPENED[:2])
def test_speaker_view_shows_the_notes_offline(decks, browser):
    """Pressing S opens reveal's speaker view (the notes plugin) from file:// with no network; on a slide
    whose notebook section has a `notes` cell, the speaker view shows that cell's text."""
    nb = json.loads((ROOT / "notebooks" / f"{OPENED}.ipynb").read_text(encoding="utf-8"))
    notes = ["".join(c["source"]) for c in nb["cells"] if slide_type(c) == "notes"]
    assert notes, f"{OPENED} has no speaker notes to show"
    attempted: list[str] = []

    def only_files(route):
        if route.request.url.startswith(("file:", "data:", "about:")):
            route.continue_()
        else:
            attempted.append(route.request.url)
            route.abort()

    context = browser.new_context(viewport={"width": 1100, "height": 760})
    context.route("**/*", only_files)  # the popup and its iframes too
    page = context.new_page()
    page.goto((decks / f"{OPENED}.slides.html").as_uri())
    page.wait_for_function("() => document.querySelector('.reveal.ready')", timeout=90_000)
    expected = page.evaluate("""async () => {
      const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
      const aside = document.querySelector('.reveal .slides aside.notes');
      const where = Reveal.getIndices(aside.closest('section'));
      Reveal.slide(where.h, where.v);
      return aside.innerText.trim(); }""")
    with page.expect_popup(timeout=30_000) as popup:
        page.keyboard.press("s")
    speaker = popup.value
    speaker.wait_for_function(
        "() => { const v = document.querySelector('.speaker-controls-notes .value');"
        " return v && v.innerText.trim().length > 0; }",
        timeout=60_000,
    )
    shown = speaker.evaluate("() => document.querySelector('.speaker-controls-notes .value').innerText.trim()")
    # its labels in Korean, as the README names them (export_slides.SPEAKER_VIEW_EDITS)
    labels = speaker.evaluate("""() => [document.title,
      ...[...document.querySelectorAll('.label, .speaker-layout-label, .reset-button, .pacing-title')].map(e => e.textContent.trim()),
      ...[...document.querySelectorAll('.speaker-layout-dropdown option')].map(o => o.textContent.trim())]""")
    labels.append(speaker.evaluate("() => document.querySelector('.clock-value').textContent"))  # 오후 5:51, not PM
    speaker.screenshot(path=artifact(f"slides_{OPENED}_speaker_view.png"))
    context.close()
    english = [t for t in labels if re.search(r"[A-Za-z]{2,}", t)]
    assert labels[0] == "발표자 화면" and "발표 노트" in labels and not english, f"speaker view labels: {labels}"
    assert expected and shown[:40] == expected[:40], (
        f"speaker view shows {shown[:80]!r}, the slide's notes are {expected[:80]!r}"
    )
    assert any(shown[:20] in re.sub(r"\s+", " ", n) for n in notes), "the speaker view's text is not a notes cell"
    assert attempted == [], f"the speaker view tried to reach the network: {attempted}"


# Every control of every static player in a deck: set it as the player's own input handler sees it
# and require another frame, decoded, in the same task (the mouse and keyboard are exercised on one
# deck in tests/test_site.py). Runs where build/explorer-frames/ holds every notebook's frames, as in
# CI, which builds the site first; the decks are exported with --frames reuse.
SWAP_ALL_JS = """async () => {
  const out = [];
  for (const root of document.querySelectorAll('.course-explorer[data-explorer]')) {
    await Promise.all((root._coursePreloaded || []).map(i => i.decode().catch(() => null)));
    const img = root.querySelector('img.course-frame');
    const controls = [...root.querySelectorAll('[data-control]')];
    for (const [i, el] of controls.entries()) {
      // A hand moves one control at a time: what the last move preloads (the frames one move away) is
      // decoded before the next move, as it is between two real inputs.
      await Promise.all((root._coursePreloaded || []).map(im => im.decode().catch(() => null)));
      // A drawn explorer (01) keeps its background frame and redraws its SVG instead.
      const drawn = root.querySelector('svg.course-drawing');
      const before = drawn ? drawn.innerHTML : img.getAttribute('src');
      if (el.type === 'checkbox') el.checked = !el.checked;
      else if (el.tagName === 'SELECT') el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
      else el.value = String(Number(el.value) > 0 ? 0 : Number(el.max));
      el.dispatchEvent(new Event('input', {bubbles: true}));
      out.push({control: i, changed: (drawn ? drawn.innerHTML : img.getAttribute('src')) !== before,
                complete: img.complete && img.naturalWidth > 0});
    }
  }
  return {players: document.querySelectorAll('.course-explorer[data-explorer]').length, moves: out};
}"""


@pytest.mark.each_selected_notebook
def test_every_deck_explorer_swaps_frames_offline(decks, browser, selected_notebooks, sample_run):
    pages = sorted(decks.glob("[0-9][0-9]_*.slides.html"))
    with_players = [p for p in pages if "data-explorer=" in p.read_text(encoding="utf-8")]
    wanted = len(exported(selected_notebooks, sample_run))
    if len(with_players) < wanted:
        skip_or_fail(f"frames cached for {len(with_players)} of {wanted} decks: run `python3 course.py site` first")
    outside = []
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.route(
        "**/*",
        lambda r: (
            r.continue_()
            if r.request.url.startswith(("file:", "data:"))
            else (outside.append(r.request.url), r.abort())
        ),
    )
    page = context.new_page()
    for path in pages:
        page.goto(path.as_uri(), wait_until="load")
        result = page.evaluate(SWAP_ALL_JS)
        notebook = ROOT / "notebooks" / path.name.replace(".slides.html", ".ipynb")
        assert result["players"] == len(explorer_cells(notebook)), f"{path.name}: not every explorer is static"
        bad = [m for m in result["moves"] if not (m["changed"] and m["complete"])]
        assert result["moves"] and not bad, f"{path.name}: controls that showed no new decoded frame: {bad}"
    context.close()
    assert outside == [], f"a deck tried to reach the network: {outside}"


@pytest.mark.parametrize(
    ("stem", "h", "v"),
    [("02_seq2seq_attention", 6, 0), pytest.param("07_multi_head_attention", 6, 1, marks=pytest.mark.sweep)],
)
def test_slides_with_math_tables_open_inside_the_box(decks, browser, stem, h, v):
    """Opened directly at it, a slide whose table MathJax typesets after reveal centred it (02 §6,
    07 §6.1) lies inside the 960x700 box: the review saw both open cut off at the bottom."""
    slide = measure_slides.opened_at(browser, decks / f"{stem}.slides.html", h, v)
    assert slide["mathTable"], f"{stem} #/{h}/{v} is no longer the slide with a math table: {slide}"
    assert not measure_slides.too_big([slide]), f"{stem} #/{h}/{v} opens outside the 960x700 box: {slide}"


@pytest.mark.notebook("02")
def test_slide_change_rerenders_math_after_typesetting(decks, browser):
    """The template re-renders a new slide's math on every slide change. It must wait for MathJax's own
    queue: run beside the first typesetting of a deck opened at a slide, about one opening in three
    left formulas half-made or a re-render that never ended (CI failed on 02 #/6/0). Here MathJax is
    kept busy for 1.5 s and the slide changed meanwhile: the re-render begins only after that."""
    page = browser.new_page(viewport={"width": 998, "height": 727})
    attempted = only_local(page)
    measure_slides.open_deck(page, decks / "02_seq2seq_attention.slides.html")
    order = page.evaluate("""async () => {
      const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
      const order = [];
      MathJax.Hub.signal.Interest(m => { if (/Rerender/.test(String(m[0]))) order.push(String(m[0])); }, true);
      MathJax.Hub.Queue(() => {
        order.push('busy');
        const done = MathJax.Callback(() => order.push('idle'));
        setTimeout(done, 1500);
        return done;  // the queue waits for it, as for a typesetting under way
      });
      Reveal.slide(6, 0);
      const start = performance.now();
      while (!order.includes('End Rerender') && performance.now() - start < 8000)
        await new Promise(r => setTimeout(r, 20));
      return order;
    }""")
    page.close()
    assert attempted == []
    assert order == ["busy", "idle", "Begin Rerender", "End Rerender"], (
        f"re-render not queued after MathJax's work, or not ended in 8 s: {order}"
    )


SLIDER_STATE_JS = """() => ({slide: window.courseLeaves.indexOf(window.courseReveal.getCurrentSlide()),
  value: window.courseSlider.value, focused: document.activeElement === window.courseSlider,
  overview: window.courseReveal.isOverview()})"""


@pytest.mark.notebook("05")
def test_focused_slider_keeps_only_arrows_home_end(decks, browser):
    """After a slider is touched, the arrows, Home and End move it, and every key a clicker or a
    presenter sends to the deck (Space, PageDown, PageUp, Esc, N) still drives the deck."""
    deck = decks / "05_temperature.slides.html"
    if "data-explorer=" not in deck.read_text(encoding="utf-8"):  # exported without frames: no static slider
        skip_or_fail(
            "05's frames are not in build/explorer-frames/ for the current code: run `python3 course.py site` first"
        )
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    attempted = only_local(page)
    measure_slides.open_deck(page, deck)
    at = page.evaluate("""async () => {
      const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
      Reveal.configure({transition: 'none', backgroundTransition: 'none'});
      window.courseReveal = Reveal;
      window.courseLeaves = [...document.querySelectorAll('.reveal .slides section')].filter(s => !s.querySelector('section'));
      window.courseSlider = document.querySelector('.reveal .course-explorer input[type=range]');
      return window.courseLeaves.indexOf(window.courseSlider.closest('section')); }""")
    assert at > 0, "05 has no slider on a slide"

    def touch(value: int = 1) -> None:  # go to the slider's slide, set it and give it the focus
        page.evaluate(
            f"""() => {{ const w = courseReveal.getIndices(courseLeaves[{at}]); courseReveal.slide(w.h, w.v);
              courseSlider.value = '{value}'; courseSlider.focus(); }}"""
        )

    def press(key: str) -> dict:
        page.keyboard.press(key)
        return page.evaluate(SLIDER_STATE_JS)

    touch()
    assert press("ArrowRight") == {"slide": at, "value": "2", "focused": True, "overview": False}
    assert press("Home") == {"slide": at, "value": "0", "focused": True, "overview": False}
    assert press("End")["slide"] == at
    for key, slide in [("Space", at + 1), ("PageDown", at + 1), ("PageUp", at - 1), ("n", at + 1)]:
        touch()
        state = press(key)
        assert state == {"slide": slide, "value": "1", "focused": False, "overview": False}, f"{key}: {state}"
    touch()
    state = press("Escape")
    assert state["overview"] and not state["focused"] and state["value"] == "1", f"Escape: {state}"
    page.close()
    assert attempted == []


class Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@functools.cache
def parsed(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text(encoding="utf-8"))
    return links


@pytest.mark.notebook(OPENED[:2])
def test_no_dead_link_in_the_slides_folder(decks):
    """Every link in every deck, the index and the sources/glossary pages that travel with the decks
    names a file in the folder and, with a #fragment, an element of that file (reveal's #/h/v aside)."""
    pages = sorted(decks.glob("*.html"))
    assert {"index.html", "sources.html", "glossary.html"} <= {p.name for p in pages}
    dead, checked, cited = [], 0, 0
    for page in pages:
        for href in parsed(page).hrefs:
            parts = urlsplit(href)
            if parts.scheme in ("http", "https", "mailto") or href.startswith("#/"):
                continue
            checked += 1
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            cited += target.name == "sources.html" and page.name.endswith(".slides.html")
            if not target.is_file() or decks.resolve() not in target.parents:
                dead.append(f"{page.name}: {href} (no such file in the slides folder)")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed(target).ids
                if parts.fragment not in ids and unquote(parts.fragment) not in ids:
                    dead.append(f"{page.name}: {href} (no element with that id)")
    assert not dead, f"{len(dead)} dead link(s):\n" + "\n".join(dead[:20])
    assert checked > 0 and cited > 0, "no citation link to the sources page was checked"


@pytest.mark.notebook(OPENED[:2])
def test_index_tells_how_to_drive_the_decks(decks):
    text = (decks / "index.html").read_text(encoding="utf-8")
    assert "PageDown" in text and "Space" in text and "슬라이더" in text
    assert "방향키로 넘기고" not in text
    # Decks are named as the site names their pages, and ❌/✅ are drawn marks (no emoji font needed).
    for deck in sorted(decks.glob("[0-9][0-9]_*.slides.html")):
        page = deck.read_text(encoding="utf-8")
        title = export_slides.deck_title(next((ROOT / "notebooks").glob(f"{deck.name[:2]}_*.ipynb")))
        assert f">{title}</a>" in text and f"<title>{title} · 슬라이드</title>" in page, title
        assert '<html lang="ko">' in page, f"{deck.name}: the deck is not marked as Korean"
        start = page.index("<body")
        visible = re.sub(r"<script\b.*?</script>|<[^>]*>", "", page[start:], flags=re.S)
        assert not re.search("[\u274c\u2705]", visible), f"{deck.name}: an emoji mark left as a character"
