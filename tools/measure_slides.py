"""Measure every slide of the offline decks in headless Chromium: does each fit 960x700?

    python3 course.py slides-fit [NN ...]   print each deck's slides taller than the slide area

Each deck is exported (as `course.py slides` does) into build/slides-fit/, opened from disk with
the network blocked, and every leaf <section> (a slide or sub-slide) is laid out at its natural
height at reveal's configured size. A slide whose content is taller than 700 px (or wider than
960 px), or that reveal placed so that part of it lies outside the 960x700 box (it centres a slide by
its height, and MathJax may grow it afterwards), is cut off in front of a room. The tests
(tests/test_slides.py) use `measure()` and `opened_at()`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tools import export_slides

ROOT = Path(__file__).resolve().parents[1]

WIDTH, HEIGHT = 960, 700
OUT = ROOT / "build" / "slides-fit"

# Reveal's own test: it centres a slide with top = (700 - section.scrollHeight) / 2 and pins it to the
# top when that is negative, so a leaf <section> whose scrollHeight (its padding included, in reveal's
# real layout: fonts, MathJax, images decoded) exceeds 700 runs off the bottom. Each leaf is made the
# current slide in turn (no transition) and its scrollHeight/scrollWidth are read there. This was
# checked against screenshots at 960x700: a slide read as 700 ends just above the bottom edge, one read
# as 1010 is cut off. (Laying every section out at once with `height: auto` instead, as this tool first
# did, was off by -40 px to +90 px: it dropped reveal's section padding and changed the layout.)
# A code line wider than the slide scrolls sideways inside its cell; its hidden part counts as width.
_MEASURE = r"""async () => {
  const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  const leaves = [...document.querySelectorAll('.reveal .slides section')]
    .filter(s => !s.querySelector('section'));
  // One animation frame after each slide change (waiting two gave the same sizes on all 569 slides,
  // at twice the time).
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const sizes = [];
  for (const [i, s] of leaves.entries()) {
    const where = Reveal.getIndices(s);
    const seen = Reveal.getIndices(), moved = seen.h !== where.h || seen.v !== (where.v || 0);
    const begun = window.__courseMathJax ? __courseMathJax.begun : 0;
    Reveal.slide(where.h, where.v);  // hidden fragments take their space in the layout too
    await frame();
    // The template re-renders a slide's math on every slide change (MathJax.Hub.Rerender; export_slides
    // queues it on the Hub, a deck exported before that ran it outside the queue): for about 100 ms the
    // formulas are thinner and the slide is shorter (07 §6.1: 245 px instead of 288 px). A slide with
    // math is read once its re-render ended.
    if (moved && window.__courseMathJax && s.querySelector('script[type^="math/"]')) {
      const start = performance.now();
      while (!(__courseMathJax.begun > begun && __courseMathJax.ended === __courseMathJax.begun)
             && performance.now() - start < 5000) await new Promise(r => setTimeout(r, 10));
      await frame();
    }
    // Whatever the deck queued on this slide change (MathJax re-typesetting it, then reveal's layout)
    // runs before the slide is read, as it does before a room sees it.
    if (window.MathJax && MathJax.Hub) { await new Promise(r => MathJax.Hub.Queue(r)); await frame(); }
    // Where reveal placed the slide, in slide pixels (reveal scales the 960x700 box by a transform).
    const box = s.parentElement.closest('.slides') || document.querySelector('.reveal .slides');
    const scale = Reveal.getScale() || 1;
    const r = s.getBoundingClientRect(), b = box.getBoundingClientRect();
    const top = (r.top - b.top) / scale, left = (r.left - b.left) / scale;
    const heading = s.querySelector('h1, h2, h3, h4');
    const text = (heading ? heading.textContent : (s.textContent || '')).replace(/\u00b6/g, '')
      .trim().replace(/\s+/g, ' ');
    // A code line or output wider than its box scrolls inside it: cut off on the slide, so count it.
    const hidden = Math.max(0, ...[...s.querySelectorAll('*')]
      .filter(e => !e.closest('.MathJax_CHTML, .MathJax, .MJX_Assistive_MathML, mjx-container, script, style')
                   && getComputedStyle(e).overflowX !== 'visible')
      .map(e => e.scrollWidth - e.clientWidth));
    sizes.push({index: i, height: Math.ceil(s.scrollHeight),
                top: Math.round(top), bottom: Math.ceil(top + s.scrollHeight),
                left: Math.round(left), right: Math.ceil(left + s.scrollWidth),
                width: Math.ceil(Math.max(s.scrollWidth, s.clientWidth + (hidden > 1 ? hidden : 0))),
                title: text.slice(0, 60), empty: s.textContent.trim() === '' && !s.querySelector('img, svg, canvas')});
  }
  Reveal.slide(0, 0);
  return sizes;
}"""


def export_decks(numbers: list[str], out: Path = OUT) -> list[Path]:
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if numbers:
        notebooks = [p for p in notebooks if p.name[:2] in numbers]
    out.mkdir(parents=True, exist_ok=True)
    export_slides.install_libs(export_slides.fetch(export_slides.DEFAULT_CACHE), out / "lib")
    return [export_slides.export(nb, out) for nb in notebooks]


def measure(browser, deck: Path) -> list[dict]:
    """The natural size of every leaf slide of one deck (opened with the network blocked)."""
    # Just under 960x700 plus reveal's 4% margin: reveal then scales the slide by a CSS transform
    # (layout at exactly 960 px wide). Above scale 1 it uses CSS zoom, which re-wraps text differently.
    page = browser.new_page(viewport={"width": 998, "height": 727})
    page.route(
        "**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:")) else route.abort()
    )
    open_deck(page, deck)
    sizes = measure_page(page)
    page.close()
    return sizes


def open_deck(page, deck: Path, hash: str = "") -> None:
    """Open a deck (optionally at #/h/v) and wait until reveal is ready and MathJax has typeset it."""
    page.add_init_script(_MATHJAX_WATCH)
    page.goto(deck.as_uri() + hash)
    page.wait_for_function("() => document.querySelector('.reveal.ready')", timeout=90_000)
    # Every deck loads MathJax (nbconvert's template), after reveal is ready: wait for it to be there, started and
    # done, not only for an empty queue (before MathJax has loaded there is no queue at all: a busy machine measured
    # 02 §6 before its table was typeset).
    # Then every math script tex2jax made must have its typeset jax (a deck whose text still holds $…$
    # has not been preprocessed yet).
    page.wait_for_function(
        r"""() => {
          if (!(window.MathJax && MathJax.Hub && MathJax.isReady && MathJax.Hub.queue.pending === 0
                && !MathJax.Hub.queue.running)) return false;
          const raw = [...document.querySelectorAll('.reveal .jp-RenderedMarkdown')].some(e => /\$[^$\n]+\$/.test(e.textContent));
          const scripts = document.querySelectorAll('.reveal script[type^="math/tex"]').length;
          if (raw || MathJax.Hub.getAllJax().length < scripts) return false;
          // ...and no re-render is under way or has just ended (the template re-renders the slide a deck
          // opens at, after the first typesetting: measured in the middle of it, 07 §6.1's formulas had
          // no MathJax_CHTML class yet and its table was not found as math).
          const w = window.__courseMathJax;
          return w.begun === w.ended && performance.now() - w.last > 400
            && MathJax.Hub.getAllJax().every(j => { const f = document.getElementById(j.inputID + '-Frame');
                                                    return !f || f.classList.contains('MathJax_CHTML'); });
        }""",
        timeout=90_000,
    )
    page.wait_for_timeout(100)


# Run in the page before its own scripts: MathJax reads a window.MathJax object as its configuration and
# calls AuthorInit once its Hub exists, so every Rerender (begun/ended) and the time of MathJax's last
# message are counted from the start (MathJax keeps no full history of its messages to ask later).
_MATHJAX_WATCH = r"""
window.__courseMathJax = {begun: 0, ended: 0, last: performance.now()};
window.MathJax = {AuthorInit: function () {
  var w = window.__courseMathJax;
  MathJax.Hub.signal.Interest(function (message) {
    w.last = performance.now();
    if (message[0] === 'Begin Rerender') w.begun += 1;
    if (message[0] === 'End Rerender') w.ended += 1;
  });
}};
"""


def measure_page(page) -> list[dict]:
    """measure() on a deck already open in `page` (leaves it on the first slide)."""
    return page.evaluate(_MEASURE)


# The slide a presenter sees right after opening a deck at it (no navigation): reveal centred it once.
_CURRENT = r"""async () => {
  const Reveal = await new Promise(r => require(['lib/reveal.js/dist/reveal.js'], r));
  const s = Reveal.getCurrentSlide(), scale = Reveal.getScale() || 1;
  const r = s.getBoundingClientRect(), b = document.querySelector('.reveal .slides').getBoundingClientRect();
  const top = (r.top - b.top) / scale, left = (r.left - b.left) / scale;
  return {index: -1, mathTable: !!s.querySelector('table .MathJax_CHTML, table mjx-container'), title: ((s.querySelector('h1, h2, h3') || s).textContent || '').trim().slice(0, 60),
          height: Math.ceil(s.scrollHeight), width: Math.ceil(s.scrollWidth),
          top: Math.round(top), bottom: Math.ceil(top + s.scrollHeight),
          left: Math.round(left), right: Math.ceil(left + s.scrollWidth)};
}"""


def opened_at(browser, deck: Path, h: int, v: int = 0) -> dict:
    """Size and place of slide (h, v) when the deck is opened directly at it (#/h/v), as reveal left it."""
    page = browser.new_page(viewport={"width": 998, "height": 727})
    page.route(
        "**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:")) else route.abort()
    )
    open_deck(page, deck, f"#/{h}/{v}")
    found = page.evaluate(_CURRENT)
    page.close()
    return found


def too_big(sizes: list[dict]) -> list[dict]:
    """Slides larger than the box, or placed so that part of them lies outside it (1 px of rounding allowed)."""
    return [s for s in sizes if s["height"] > HEIGHT or s["width"] > WIDTH or outside(s)]


def outside(s: dict) -> bool:
    return s["top"] < -1 or s["left"] < -1 or s["bottom"] > HEIGHT + 1 or s["right"] > WIDTH + 1


def main(numbers: list[str]) -> int:
    from tools.browser_support import chromium

    decks = export_decks(numbers)
    worst = 0
    report = {}
    with chromium() as browser:
        for deck in decks:
            sizes = measure(browser, deck)
            bad = too_big(sizes)
            report[deck.name] = sizes
            worst += len(bad)
            print(
                f"{deck.name}: {len(sizes)} slides, {len(bad)} too big"
                + "".join(
                    f"\n    slide {s['index']:>3}: {s['width']}x{s['height']} px at ({s['left']}, {s['top']}) px  {s['title']}"
                    for s in bad
                ),
                flush=True,
            )
    (OUT / "sizes.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"slides-fit: {worst} slide(s) larger than {WIDTH}x{HEIGHT}")
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
