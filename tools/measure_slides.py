"""Measure every slide of the offline decks in headless Chromium: does each fit 960x700?

    python3 course.py slides-fit [NN ...]   print each deck's slides taller than the slide area

Each deck is exported (as `course.py slides` does) into build/slides-fit/, opened from disk with
the network blocked, and every leaf <section> (a slide or sub-slide) is laid out at its natural
height at reveal's configured size. A slide whose content is taller than 700 px (or wider than
960 px) would scroll in front of a room. The tests (tests/test_slides.py) use `measure()`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

import export_slides  # noqa: E402

WIDTH, HEIGHT = 960, 700
OUT = ROOT / "build" / "slides-fit"

_MEASURE = r"""async ([width, height]) => {
  const leaves = [...document.querySelectorAll('.reveal .slides section')]
    .filter(s => !s.querySelector('section'));
  const style = document.createElement('style');
  style.textContent = `.reveal .slides { width: ${width}px !important; height: auto !important;
      position: static !important; transform: none !important; zoom: 1 !important; left: 0 !important; top: 0 !important; }
    .reveal .slides section { display: block !important; position: static !important; height: auto !important;
      transform: none !important; opacity: 1 !important; visibility: visible !important; top: 0 !important;
      min-height: 0 !important; padding: 0 !important; }
    .reveal .slides section[data-visibility="hidden"], .reveal .slides section aside.notes { display: none !important; }
    .reveal .slides .fragment { opacity: 1 !important; visibility: visible !important; }`;
  document.head.appendChild(style);
  await new Promise(r => setTimeout(r, 300));
  return leaves.map((s, i) => {
    const heading = s.querySelector('h1, h2, h3, h4');
    const text = (heading ? heading.textContent : (s.textContent || '')).trim().replace(/\s+/g, ' ');
    return {index: i, height: Math.ceil(s.scrollHeight), width: Math.ceil(s.scrollWidth),
            title: text.slice(0, 60), empty: s.textContent.trim() === '' && !s.querySelector('img, svg, canvas')};
  });
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
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:"))
               else route.abort())
    page.goto(deck.as_uri())
    page.wait_for_function("() => document.querySelector('.reveal.ready')", timeout=90_000)
    page.wait_for_function("() => !window.MathJax || !MathJax.Hub || MathJax.Hub.queue.pending === 0",
                           timeout=90_000)
    page.wait_for_timeout(500)
    sizes = page.evaluate(_MEASURE, [WIDTH, HEIGHT])
    page.close()
    return sizes


def too_big(sizes: list[dict]) -> list[dict]:
    return [s for s in sizes if s["height"] > HEIGHT or s["width"] > WIDTH]


def main(numbers: list[str]) -> int:
    from browser_support import chromium

    decks = export_decks(numbers)
    worst = 0
    report = {}
    with chromium() as browser:
        for deck in decks:
            sizes = measure(browser, deck)
            bad = too_big(sizes)
            report[deck.name] = sizes
            worst += len(bad)
            print(f"{deck.name}: {len(sizes)} slides, {len(bad)} too big"
                  + "".join(f"\n    slide {s['index']:>3}: {s['width']}x{s['height']} px  {s['title']}" for s in bad),
                  flush=True)
    (OUT / "sizes.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"slides-fit: {worst} slide(s) larger than {WIDTH}x{HEIGHT}")
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
