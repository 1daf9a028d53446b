"""Export the notebooks to reveal.js slide decks that open with no network at all.

    python3 course.py slides            every notebook -> build/slides/NN_topic.slides.html
    python3 course.py slides 01 05      only these numbers
    tools/export_slides.py --out DIR    another output folder (the tests use a temporary one)
    tools/export_slides.py --fetch-only only fill the npm cache (the set-up step before offline tests)
    --frames cached|reuse|compute|off   the explorers' precomputed frames (default cached: reuse
                                        build/explorer-frames/, compute what is missing; reuse: the
                                        cache only, never run a notebook; off: none)

`jupyter nbconvert --to slides` writes HTML that loads reveal.js, require.js, jQuery, MathJax and
the widget renderer from CDNs, so a deck opened offline (a meeting room, a plane) is blank. This
tool fetches those libraries once through the npm registry (`npm pack`, pinned versions, kept in
build/npm-cache/ and reused), copies the files a deck needs into DIR/lib/, and points nbconvert at
them with relative URLs, so DIR can be zipped, moved and opened from disk.

Every explorer's widget output becomes the static player of tools/explorer_player.py (its frames,
computed by tools/explorer_frames.py, go to DIR/frames/), so its controls move with no kernel.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.parse
from pathlib import Path

from tools import explorer_frames, explorer_player, site_chrome

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "build" / "slides"
DEFAULT_CACHE = ROOT / "build" / "npm-cache"

# Pinned: reveal.js 4.0.2 is the version nbconvert 7's reveal template is written for; MathJax 2.7.7
# is the version nbconvert's `mathjax_url` expects; html-manager 1.x renders ipywidgets 8 state.
PACKAGES = {
    "reveal.js": "4.0.2",
    "requirejs": "2.3.8",
    "jquery": "2.2.4",
    "mathjax": "2.7.7",
    "@jupyter-widgets/html-manager": "1.0.15",
}

# What each package contributes to DIR/lib/<name>/ (paths inside the npm tarball's package/).
# MathJax is 60 MB unpacked; a deck needs the CommonHTML output, the TeX input and the TeX fonts.
FILES = {
    "reveal.js": [
        "dist/reveal.js",
        "dist/reveal.css",
        "dist/reset.css",
        "dist/theme/white.css",
        "dist/theme/fonts/source-sans-pro",
        "plugin/notes",
        "LICENSE",
    ],
    "requirejs": ["require.js"],
    "jquery": ["dist/jquery.min.js", "LICENSE.txt"],
    "mathjax": [
        "MathJax.js",
        "config/TeX-AMS_CHTML-full.js",
        "config/Safe.js",
        "config/local",
        "extensions",
        "jax/element",
        "jax/input/TeX",
        "jax/output/CommonHTML",
        "jax/output/PreviewHTML",
        "fonts/HTML-CSS/TeX/woff",
        "fonts/HTML-CSS/TeX/otf",
        "localization",
        "LICENSE",
    ],
    "@jupyter-widgets/html-manager": [
        "dist/embed-amd.js",
        "dist/*.woff",
        "dist/*.woff2",
        "dist/*.ttf",
        "dist/*.eot",
        "dist/*.svg",
        "dist/embed.js.LICENSE.txt",
    ],
}

# nbconvert's reveal template imports MermaidJS as an ES module from a CDN on every page. The
# notebooks draw no Mermaid diagrams, and Chromium refuses ES modules from file:// anyway, so the
# import gets an inline no-op module instead (a data: URI, so nothing is fetched).
MERMAID_STUB = "data:text/javascript," + urllib.parse.quote("export default {initialize() {}};")


# The course's slide stylesheet, placed after reveal's theme so it wins. It only sizes things for a
# 960x700 slide: figures scale down to the slide's width and to a height that leaves room for a heading
# and a sentence (aspect ratio kept, nothing cropped), text and code slightly smaller than nbconvert's
# 20/19 px, tighter headings, 4 px instead of reveal's 20 px of blank above and below each slide,
# code and printed lines longer than the slide wrapped (they were cut off at the right edge).
# Nothing is hidden; tests/test_slides.py checks that every slide fits.
COURSE_CSS = """
:root { --jp-content-font-size1: 18px; --jp-ui-font-size1: 18px; --jp-code-font-size: 16px; }
.reveal h1 { font-size: 1.9em; margin-bottom: 0.4em; }
.reveal h2 { font-size: 1.45em; margin-bottom: 0.35em; }
.reveal h3 { font-size: 1.2em; margin-bottom: 0.3em; }
.reveal p, .reveal li { line-height: 1.35; }
.reveal section img { max-width: 100%; height: auto; }
.reveal .jp-OutputArea-output img { max-height: 480px; width: auto; object-fit: contain; }
.reveal .jp-Cell { padding-top: 2px; padding-bottom: 2px; }
.reveal .slides > section, .reveal .slides > section > section { padding: 4px 0; }
.course-mark { display: inline-block; width: 1.05em; height: 1.05em; vertical-align: -0.17em; }
.course-mark svg { display: block; width: 100%; height: 100%; }
.reveal pre { box-sizing: border-box; }  /* nbconvert's width: inherit + padding overflowed every code box by 13 px */
.reveal .jp-InputArea-editor pre, .reveal .jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.reveal h1, .reveal h2, .reveal h3, .reveal h4, .reveal h5, .reveal h6 { text-transform: none; }  /* the theme upper-cased k, p, "I am a student" */
.reveal td .MathJax_CHTML, .reveal th .MathJax_CHTML { white-space: nowrap; }
"""

# Run by the deck once reveal.js is initialised (the template's require callback calls courseDeck):
# - after MathJax typesets (at start-up and after the template re-renders the new slide on every
#   change), reveal lays the slide out again: it centres a slide by its height, and a slide that
#   MathJax grew after that opened cut off at the bottom (02 §6, 07 §6.1);
# - the speaker notes keep only MathML for each formula (Chromium, Firefox and Safari draw it): the
#   speaker window copies a note's HTML without MathJax's stylesheet, so MathJax's CommonHTML spans
#   plus its hidden MathML showed every formula twice there;
# - a link to a heading in the same deck (#id) goes to the slide holding the heading (reveal itself
#   only understands ids on <section>s and went to the first slide).
DECK_JS = r"""
window.courseDeck = function (Reveal) {
  var hub = window.MathJax && MathJax.Hub;
  function notesAsMathML() {
    document.querySelectorAll('.reveal aside.notes').forEach(function (aside) {
      aside.querySelectorAll('.MathJax_Display, .MathJax_CHTML, .MathJax').forEach(function (shown) {
        if (!shown.isConnected || shown.closest('.MJX_Assistive_MathML')) return;
        var math = shown.querySelector('.MJX_Assistive_MathML math');
        if (math) shown.replaceWith(math.cloneNode(true));
      });
      aside.querySelectorAll('.MathJax_Preview, script[type^="math/"]').forEach(function (e) { e.remove(); });
    });
  }
  function settle() { Reveal.layout(); notesAsMathML(); }
  function afterTypesetting() { if (hub) hub.Queue(settle); else settle(); }
  if (hub) hub.Register.StartupHook('End', afterTypesetting);
  if (Reveal.isReady()) afterTypesetting(); else Reveal.on('ready', afterTypesetting);
  Reveal.on('slidechanged', afterTypesetting);
  document.addEventListener('click', function (e) {
    var a = e.target.closest && e.target.closest('a[href^="#"]');
    var href = a && a.getAttribute('href');
    if (!href || href.charAt(1) === '/' || href.length < 2) return;
    var id = href.slice(1), target = document.getElementById(id);  // nbconvert's ids are percent-encoded
    if (!target) { try { target = document.getElementById(decodeURIComponent(id)); } catch (err) { return; } }
    var slide = target && target.closest('.reveal .slides section');
    if (!slide || target === slide) return;
    var where = Reveal.getIndices(slide);
    e.preventDefault();
    Reveal.slide(where.h, where.v);
  });
};
"""

# Template text the export edits (checked: a newer nbconvert that changes it fails loudly here).
TEMPLATE_EDITS = [
    # →/← (and a clicker's →/←) go through every slide and sub-slide in order, as Space/PageDown do.
    ("Reveal.initialize({", "Reveal.initialize({\n            navigationMode: 'linear',"),
    (
        "Reveal.addEventListener('slidechanged', update);",
        "Reveal.addEventListener('slidechanged', update);\n        courseDeck(Reveal);",
    ),
    # MathJax's automatic line-breaking broke table cells into one syllable a line (07's FLOP table).
    ("automatic: true", "automatic: false"),
    # The template re-renders the new slide's math on every slide change, outside MathJax's queue. A deck
    # opened at a slide (#/6/0) did that while the first typesetting was still running: in about one
    # opening in three (9 of 30 here), formulas stayed half-made (no MathJax_CHTML class: the table-cell
    # nowrap rule missed them) or the re-render never ended. Queued, it runs after the typesetting, and
    # the deck's re-layout (courseDeck) after it.
    (
        "MathJax.Hub.Rerender(Reveal.getCurrentSlide());",
        "MathJax.Hub.Queue(['Rerender', MathJax.Hub, Reveal.getCurrentSlide()]);",
    ),
]

# A note cell starts "발표 노트:" so that it reads as one in JupyterLab and on the site.
NOTES_LABEL = re.compile(r"^\s*발표 노트\s*:\s*")

# Links a deck may hold to the repository (../SOURCES.md, a notebook), as pages of the slides folder.
LINKS = [
    (r'href="(?:\.\./|\./)?SOURCES\.md', 'href="sources.html'),
    (r'href="(?:\.\./|\./)?GLOSSARY\.md', 'href="glossary.html'),
    (r'href="(?:\.\./|\./)?(?:notebooks/)?(\d\d_[A-Za-z0-9_]+)\.ipynb', r'href="\1.slides.html'),
]


def lib_dir_name(package: str) -> str:
    return package.split("/")[-1]


def fetch(cache: Path) -> dict[str, Path]:
    """Return {package: unpacked folder}, running `npm pack` only for tarballs not in the cache."""
    cache.mkdir(parents=True, exist_ok=True)
    unpacked = {}
    for package, version in PACKAGES.items():
        tarball = cache / f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
        if not tarball.exists():
            npm = shutil.which("npm")
            if npm is None:
                raise SystemExit(
                    "export_slides: `npm` is needed once to fetch reveal.js, MathJax and friends "
                    f"into {cache} (Debian: apt-get install npm); later runs reuse that cache."
                )
            print(f"export_slides: npm pack {package}@{version}", flush=True)
            subprocess.run(
                [npm, "pack", "--silent", f"{package}@{version}", "--pack-destination", str(cache)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        target = cache / "unpacked" / f"{lib_dir_name(package)}-{version}"
        if not (target / "package" / "package.json").exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            with tarfile.open(tarball) as tar:
                tar.extractall(target, filter="data")
        unpacked[package] = target / "package"
    return unpacked


# The speaker view (S) in Korean, in the README's terms: reveal's notes plugin builds that window from
# HTML and script held as one string in notes.js, so its labels are edited there, each text found once
# (a newer reveal.js that changes one fails loudly here). Inside that string a quote is \\".
SPEAKER_VIEW = "reveal.js/plugin/notes/notes.js"
SPEAKER_VIEW_EDITS = [
    ("<title>reveal.js - Speaker View</title>", "<title>발표자 화면</title>"),
    ("Loading speaker view...", "발표자 화면을 여는 중..."),
    ('label\\">Upcoming</span>', 'label\\">다음 슬라이드</span>'),
    (
        'label\\">Time <span class=\\"reset-button\\">Click to Reset</span>',
        'label\\">시간 <span class=\\"reset-button\\">눌러서 초기화</span>',
    ),
    ("Pacing – Time to finish current slide", "이 슬라이드에 남은 시간"),
    ('label\\">Notes</h4>', 'label\\">발표 노트</h4>'),
    ("'default': 'Default'", "'default': '기본'"),
    ("'wide': 'Wide'", "'wide': '가로형'"),
    ("'tall': 'Tall'", "'tall': '세로형'"),
    ("'notes-only': 'Notes only'", "'notes-only': '노트만'"),
    ("toLocaleTimeString( 'en-US'", "toLocaleTimeString( 'ko-KR'"),  # the clock: 오후 05:51
    (
        "Speaker view popup failed to open. Please make sure popups are allowed and reopen the speaker view.",
        "발표자 화면 창을 열지 못했습니다. 이 페이지에서 팝업을 허용한 뒤 S를 다시 누르세요.",
    ),
    ("layoutLabel.innerHTML = 'Layout'", "layoutLabel.innerHTML = '레이아웃'"),
]


def install_libs(unpacked: dict[str, Path], lib: Path) -> None:
    """Copy the files the decks load into lib/ (skipped when a stamp says they are already there)."""
    stamp = lib / ".versions.json"
    wanted = json.dumps({"packages": PACKAGES, "files": FILES, "speaker": SPEAKER_VIEW_EDITS}, sort_keys=True)
    if stamp.exists() and stamp.read_text() == wanted:
        return
    shutil.rmtree(lib, ignore_errors=True)
    for package in FILES:
        copy_package_files(unpacked, package, lib / lib_dir_name(package))
    speaker = lib / SPEAKER_VIEW
    text = speaker.read_text(encoding="utf-8")
    for old, new in SPEAKER_VIEW_EDITS:
        if text.count(old) != 1:
            raise SystemExit(
                f"export_slides: reveal.js's speaker view changed; {old!r} not found once in {SPEAKER_VIEW}"
            )
        text = text.replace(old, new)
    speaker.write_text(text, encoding="utf-8")
    stamp.write_text(wanted)


def copy_package_files(unpacked: dict[str, Path], package: str, dst: Path) -> None:
    """Copy FILES[package] (globs inside the unpacked npm package) to dst, keeping their layout."""
    src = unpacked[package]
    for pattern in FILES[package]:
        matches = sorted(src.glob(pattern))
        if not matches:
            raise SystemExit(f"export_slides: {package} has no {pattern}")
        for path in matches:
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                shutil.copytree(path, target, dirs_exist_ok=True)
            else:
                shutil.copy2(path, target)


def exporter_config() -> dict:
    """The nbconvert settings (the same traits as --SlidesExporter.* on the command line): local URLs."""
    return {
        "SlidesExporter": {
            "reveal_url_prefix": "lib/reveal.js",
            "require_js_url": "lib/requirejs/require.js",
            "jquery_url": "lib/jquery/dist/jquery.min.js",
            # MathJax.js itself, not latest.js: latest.js asks the CDN for the newest 2.x version.
            "mathjax_url": "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
            "widget_renderer_url": "lib/html-manager/dist/embed-amd.js",
            "reveal_theme": "white",
            "reveal_number": "c/t",  # current/total in the corner: the audience can name a slide
            "reveal_scroll": False,  # a slide that does not fit is a bug (tests/test_slides.py), not a scrolling page
        },
        # Slides show outputs; the code stays visible because the lessons are about the code.
        "TemplateExporter": {"exclude_input_prompt": True, "exclude_output_prompt": True},
    }


def export(notebook: Path, out: Path, frames: str = "cached") -> Path:
    import nbformat
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    exporter = SlidesExporter(config=Config(exporter_config()))
    exporter.mermaid_js_url = MERMAID_STUB  # a plain trait in nbconvert 7.17, not settable by config
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:  # the speaker view heads the notes 발표 노트 already; the notebook's own label goes
        if cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes":
            cell.source = NOTES_LABEL.sub("", cell.source, count=1)
    explorer_player.replace_widgets(nb, explorer_frames.frames_for(notebook, frames), out, "frames", notebook.stem)
    title = html.escape(deck_title(notebook))
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    for old, new in (
        (f"<title>{title} slides</title>", f"<title>{title} · 슬라이드</title>"),
        ('<html lang="en">', '<html lang="ko">'),
    ):
        if body.count(old) != 1:
            raise SystemExit(f"export_slides: nbconvert's reveal template changed; {old!r} not found once")
        body = body.replace(old, new)
    start = body.index("<body")  # ❌/✅ as inline SVG marks, as on the site (no emoji font needed)
    body = body[:start] + site_chrome.emoji_marks(body[start:])
    head_end = body.index("</head>")
    body = (
        f'{body[:head_end]}<style type="text/css" id="course-css">{COURSE_CSS}</style>\n'
        f"{explorer_player.head_html()}{body[head_end:]}"
    )
    body_end = body.rindex("</body>")
    body = (
        body[:body_end]
        + explorer_player.script_html()
        + f'<script type="text/javascript" id="course-deck-js">{DECK_JS}</script>\n'
        + body[body_end:]
    )
    for old, new in TEMPLATE_EDITS:
        if body.count(old) != 1:
            raise SystemExit(f"export_slides: nbconvert's reveal template changed; {old!r} not found once")
        body = body.replace(old, new)
    body = fix_links(body)
    target = out / f"{notebook.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def deck_title(notebook: Path) -> str:
    """ "05. 온도(temperature)": the number and the notebook's first heading, as the site names the page."""
    import nbformat

    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    title = re.sub(r"^\d\d[.:]?\s*", "", line[2:].strip())
                    return f"{notebook.name[:2]}. {title}"
    return notebook.stem


def fix_links(body: str) -> str:
    for pattern, replacement in LINKS:
        body = re.sub(pattern, replacement, body)
    return body


def write_pages(out: Path) -> None:
    """SOURCES.md and GLOSSARY.md as pages of the slides folder, so a deck's citations work offline
    and travel with the folder (a zip of build/slides/)."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    for source, name, title in (("SOURCES.md", "sources.html", "출처"), ("GLOSSARY.md", "glossary.html", "용어집")):
        content = fix_links(markdown2html_mistune((ROOT / source).read_text(encoding="utf-8")))
        (out / name).write_text(
            '<!DOCTYPE html>\n<html lang="ko"><head><meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title} · 슬라이드</title>\n<style>{PAGE_CSS}</style></head>\n"
            f'<body><p><a href="index.html">← 슬라이드 목록</a> (브라우저의 뒤로 가기는 보던 슬라이드로 돌아갑니다)</p>\n'
            f"{content}\n</body></html>\n",
            encoding="utf-8",
        )


PAGE_CSS = """
body { max-width: 960px; margin: 0 auto; padding: 8px 16px 40px; line-height: 1.6;
  font-family: "NanumGothic", "Nanum Gothic", "Noto Sans KR", sans-serif; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
code { background: #f4f4f4; padding: 0 2px; }
a.anchor-link { visibility: hidden; margin-left: 0.3em; text-decoration: none; }
:hover > a.anchor-link { visibility: visible; }
"""


def write_index(out: Path) -> None:
    """A plain page linking every deck in the folder, so a presenter can start from one file."""
    decks = sorted(out.glob("[0-9][0-9]_*.slides.html"))
    notebooks = {p.stem: p for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    names = {d.name: d.name.removesuffix(".slides.html") for d in decks}
    items = "\n".join(
        f'<li><a href="{d.name}">{html.escape(deck_title(notebooks[n]) if n in notebooks else n)}</a></li>'
        for d, n in ((d, names[d.name]) for d in decks)
    )
    (out / "index.html").write_text(
        '<!DOCTYPE html>\n<html lang="ko"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>슬라이드 · 손으로 익히는 셀프 어텐션</title>\n<style>{PAGE_CSS}</style></head>\n"
        f"<body><h1>손으로 익히는 셀프 어텐션: 슬라이드</h1>\n<ul>\n{items}\n</ul>\n"
        "<p>인터넷 없이 열립니다. <b>→ · Space · PageDown</b>(클리커의 다음 단추)은 모든 슬라이드를 순서대로 "
        "넘기고(하위 슬라이드 포함), <b>← · PageUp</b>은 되돌아갑니다. 오른쪽 아래 번호는 현재/전체 슬라이드입니다.</p>\n"
        "<p><b>S</b> 발표자 화면(노트, 다음 슬라이드, 타이머) · <b>F</b> 전체 화면 · <b>Esc</b> 전체 슬라이드 보기(개요). "
        "발표 노트는 발표자 화면에만 나옵니다.</p>\n"
        "<p>슬라이더를 만진 뒤에는 방향키와 Home · End가 슬라이더를 움직입니다. Space · PageDown · PageUp · Esc · "
        "S · F · N · P는 슬라이더를 만진 뒤에도 슬라이드쇼에서 하던 일을 그대로 하고, 그 키를 누르거나 슬라이더 밖을 누르면 "
        "방향키도 다시 슬라이드를 넘깁니다.</p>\n"
        '<p><a href="glossary.html">용어집</a> · <a href="sources.html">출처</a></p>\n'
        "</body></html>\n",
        encoding="utf-8",
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*", help="notebook numbers (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument(
        "--fetch-only",
        action="store_true",
        help="only fill the npm cache (CI runs this before the tests, which stay offline)",
    )
    parser.add_argument(
        "--frames",
        choices=explorer_frames.MODES,
        default="cached",
        help="explorer frames: the cache (computing what is missing), the cache only, recompute, or none",
    )
    args = parser.parse_args(argv)
    if args.fetch_only:
        fetch(args.cache)
        return 0

    notebooks = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if args.numbers:
        notebooks = [p for p in notebooks if p.name[:2] in args.numbers]
    if not notebooks:
        print(f"export_slides: no notebook matches {args.numbers} in {NOTEBOOKS}")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    install_libs(fetch(args.cache), args.out / "lib")
    for notebook in notebooks:
        print(export(notebook, args.out, args.frames), flush=True)
    write_index(args.out)
    write_pages(args.out)
    print(f"export_slides: open {args.out / 'index.html'} in a browser (works offline; zip the folder to share)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
