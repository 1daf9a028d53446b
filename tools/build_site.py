"""Build the static course site: every notebook as a page, readable anywhere, every slider moving.

    python3 course.py site                  every notebook -> build/site/
    python3 course.py site 04 05            only these pages (the index still lists every notebook)
    tools/build_site.py --out DIR           another folder (the tests build into a temporary one)
    tools/build_site.py --frames cached     reuse cached explorer frames, compute when missing (default);
                         reuse | compute | off   cached frames only, never run a notebook / always recompute /
                                                 leave the widgets out

Pages come from the executed notebooks (nbconvert's HTMLExporter, lab template): stored outputs and
figures, code highlighted by pygments, math by MathJax 2.7.7 copied from the npm cache the decks use
(build/npm-cache/), worked solutions folded in <details>, speaker notes (slide type `notes`) left
out, previous/next links and the course map on every page, GLOSSARY.md and SOURCES.md as pages.
Each explorer's widget output is replaced by the static player of tools/explorer_player.py, over
frames computed by tools/explorer_frames.py. Links are relative, so the folder works from file://,
from any static web host (GitHub Pages) and zipped.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import sys
import time
from pathlib import Path

from tools import explorer_frames, explorer_player, export_slides, site_chrome

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "build" / "site"
COURSE_TITLE = "손으로 익히는 셀프 어텐션"
MATHJAX_URL = "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
HANDOUTS = ROOT / "build" / "handouts"
# Search: MiniSearch from the npm registry (cached in build/npm-cache/ like the decks' reveal.js),
# its UMD build copied to lib/minisearch/index.js.
MINISEARCH = ("minisearch", "7.2.0")
# The repository's public address, for the "저장소" and "Binder에서 열기" buttons on every notebook
# page. None is written in README or binder/, so it is a setting: --repo-url, $COURSE_REPO_URL or
# the git remote `origin`; with none, the two buttons are left out.
REPO_URL = ""

SITE_CSS = (
    """
html { -webkit-text-size-adjust: 100%; }
body { margin: 0;
  font-family: "NanumGothic", "Nanum Gothic", "Noto Sans KR", "Noto Sans CJK KR", "Apple SD Gothic Neo",
    "Malgun Gothic", "맑은 고딕", sans-serif; }
body, .jp-RenderedHTMLCommon { font-size: 17px; line-height: 1.7; word-break: keep-all; overflow-wrap: break-word; }
:root { --jp-content-font-family: "NanumGothic", "Nanum Gothic", "Noto Sans KR", "Noto Sans CJK KR", sans-serif;
  --jp-ui-font-family: var(--jp-content-font-family); --jp-content-line-height: 1.7; --jp-content-font-size1: 17px; }
.course-page { max-width: 980px; margin: 0 auto; padding: 0 16px 48px; box-sizing: border-box; }
.course-nav { display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; justify-content: space-between; align-items: baseline;
  border-bottom: 1px solid #ddd; padding: 10px 0; margin-bottom: 12px; font-size: 15px; }
.course-nav.bottom { border-bottom: none; border-top: 1px solid #ddd; margin-top: 32px; }
.course-nav a { color: #0b5cad; text-decoration: none; }
.course-nav a:hover { text-decoration: underline; }
.course-page .jp-Notebook { padding: 0; }
.course-page .jp-Cell { padding: 2px 0; }
.course-page .jp-InputPrompt, .course-page .jp-OutputPrompt { display: none; }
.course-page .jp-RenderedHTMLCommon { padding-right: 0; }
.course-page .jp-RenderedImage img, .course-page .jp-OutputArea-output img { max-width: 100%; height: auto; }
.course-page pre { overflow-x: auto; }
details.course-solution { border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 10px; margin: 8px 0; background: #f8fafc; }
details.course-solution > summary { cursor: pointer; font-weight: bold; color: #0b5cad; }
table.course-map { border-collapse: collapse; width: 100%; }
table.course-map th, table.course-map td { border-bottom: 1px solid #e3e3e3; padding: 6px 8px; text-align: left; vertical-align: top; }
table.course-map td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
table.course-map td.time { white-space: nowrap; color: #555; }
.course-md table { border-collapse: collapse; } .course-md th, .course-md td { border: 1px solid var(--c-border); padding: 4px 8px; }
table.course-map th, table.course-map td { border-color: var(--c-border); } table.course-map td.time { color: var(--c-muted); }
"""
    + site_chrome.CHROME_CSS
)

# nbconvert's lab template plus: code cells folded in JupyterLab (worked solutions: a checker call or the
# tag "solution"; and the code that builds a figure) wrapped, with their outputs, in a closed <details>; no require.js from a CDN (the pages load no widget manager).
TEMPLATE = r"""{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{% block codecell %}
{%- if cell.metadata.get('jupyter', {}).get('source_hidden', False) -%}
<details class="course-solution"><summary>
{%- if 'check(' in cell.source or 'solution' in cell.metadata.get('tags', []) -%}풀이 보기 (먼저 풀어 본 뒤에 여세요){%- else -%}접어 둔 코드 보기{%- endif -%}
</summary>
{{ super() }}
</details>
{%- else -%}
{{ super() }}
{%- endif -%}
{% endblock codecell %}
{% block markdowncell %}
{%- if cell.metadata.get('jupyter', {}).get('source_hidden', False) -%}
<details class="course-solution"><summary>풀이 노트 보기 (먼저 풀어 본 뒤에 여세요)</summary>
{{ super() }}
</details>
{%- else -%}
{{ super() }}
{%- endif -%}
{% endblock markdowncell %}
"""


def course_map() -> list[dict]:
    """The README's course map table: number, title, notebook file, summary, time estimates."""
    rows = []
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for m in re.finditer(r"^\| (\d\d) \| \[([^\]]+)\]\(notebooks/([^)]+)\.ipynb\) \| (.+?) \| (.+?) \|$", text, re.M):
        rows.append({"number": m[1], "title": m[2], "stem": m[3], "summary": m[4], "time": m[5]})
    if not rows:
        raise SystemExit("build_site: no course map table found in README.md")
    return rows


def fix_links(body: str) -> str:
    """Notebook and repository links as site links (relative)."""
    body = re.sub(r'href="(?:\.\./|\./)?(?:notebooks/)?(\d\d_[A-Za-z0-9_]+)\.ipynb', r'href="\1.html', body)
    body = re.sub(r'href="(?:\.\./)?GLOSSARY\.md', 'href="glossary.html', body)
    return re.sub(r'href="(?:\.\./)?SOURCES\.md', 'href="sources.html', body)


def nav(rows: list[dict], at: int | None, where: str = "top", linked: set[str] | None = None) -> str:
    """Course map, previous/next notebook (a link only where that page was built), glossary, sources."""
    parts = ['<a href="index.html">과정 지도</a>']

    def neighbour(row: dict, rel: str, label: str) -> str:
        if linked is not None and row["stem"] not in linked:  # a partial build: no dead link
            return html.escape(label)
        return f'<a href="{row["stem"]}.html" rel="{rel}">{html.escape(label)}</a>'

    if at is not None:
        if at > 0:
            prev = rows[at - 1]
            parts.append(neighbour(prev, "prev", f"← {prev['number']}. {prev['title']}"))
        if at + 1 < len(rows):
            nxt = rows[at + 1]
            parts.append(neighbour(nxt, "next", f"{nxt['number']}. {nxt['title']} →"))
    parts += ['<a href="glossary.html">용어집</a>', '<a href="sources.html">출처</a>']
    return f'<nav class="course-nav {where}">{" ".join(f"<span>{p}</span>" for p in parts)}</nav>'


class Site:
    """What every page shares: the course map, which notebook pages exist (for the sidebar), the
    repository address, and the search documents gathered page by page."""

    def __init__(self, out: Path, rows: list[dict], linked: set[str], repo: str = ""):
        self.out, self.rows, self.linked, self.repo = out, rows, linked, repo
        self.docs: list[dict] = []

    def sidebar(self, current: str) -> str:
        entries = [("index.html", "과정 지도")]
        entries += [
            (f"{r['stem']}.html", f"{r['number']}. {r['title']}") for r in self.rows if r["stem"] in self.linked
        ]
        entries += [("glossary.html", "용어집"), ("sources.html", "출처")]
        return site_chrome.sidebar(entries, current)

    def frame(self, content: str, current: str, short_title: str, at: int | None) -> str:
        """Top bar, sidebar, the page between its navigation bars, the in-page contents; and the page's
        sections into the search index."""
        hs = site_chrome.headings(content)
        self.docs += site_chrome.search_sections(current, short_title, f"<body>{content}</body>")
        exercises = site_chrome.exercises_anchor(hs)
        contents = site_chrome.toc(hs, exercises)
        return (
            site_chrome.top_bar(COURSE_TITLE, exercises, bool(contents))
            + '\n<div class="course-layout">\n'
            + self.sidebar(current)
            + f'\n<div class="course-page" id="course-main">\n{nav(self.rows, at, linked=self.linked)}\n{content}\n'
            + f"{nav(self.rows, at, 'bottom', self.linked)}\n</div>\n{contents}\n</div>\n"
        )

    def actions(self, stem: str) -> str:
        """The row under a notebook page's title: .ipynb, handout PDF, Binder, repository."""
        links = [f'<a href="notebooks/{stem}.ipynb" download>노트북 받기 (.ipynb)</a>']
        if (self.out / "handouts" / f"{stem}.pdf").exists():
            links.append(f'<a href="handouts/{stem}.pdf">핸드아웃 PDF</a>')
        binder = binder_url(self.repo, stem)
        if binder:
            links.append(f'<a href="{html.escape(binder)}" rel="noopener">Binder에서 열기</a>')
        if self.repo:
            links.append(f'<a href="{html.escape(self.repo)}" rel="noopener">저장소</a>')
        return f'<div class="course-actions">{"".join(links)}</div>'


def repo_url(given: str | None = None) -> str:
    """--repo-url, else $COURSE_REPO_URL, else REPO_URL, else the git remote `origin` (as https)."""
    import os
    import subprocess

    url = given or os.environ.get("COURSE_REPO_URL") or REPO_URL
    if not url:
        try:
            url = subprocess.run(
                ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            url = ""
    m = re.match(r"git@github\.com:(.+)$", url)
    if m:
        url = f"https://github.com/{m[1]}"
    if not url.startswith("https://"):
        return ""
    return re.sub(r"\.git$", "", url.rstrip("/"))


def binder_url(repo: str, stem: str) -> str:
    m = re.match(r"https://github\.com/([^/]+)/([^/]+)$", repo)
    return f"https://mybinder.org/v2/gh/{m[1]}/{m[2]}/HEAD?urlpath=lab/tree/notebooks/{stem}.ipynb" if m else ""


def polish(content: str) -> str:
    """Korean alt text, emoji-free ❌/✅, tables in scroll boxes."""
    return site_chrome.wrap_tables(site_chrome.emoji_marks(site_chrome.korean_alt_text(content)))


HEAD_EXTRA = (
    f'<script id="course-theme-js">{site_chrome.THEME_HEAD_JS}</script>\n'
    f'<style type="text/css" id="course-site-css">{SITE_CSS}</style>\n'
)


def wrap(body: str, site: Site, at: int, title: str, stem: str) -> str:
    """Our stylesheet, title, top bar, sidebar, contents and scripts around an nbconvert page."""
    body = re.sub(r"<title>.*?</title>", f"<title>{html.escape(title)}</title>", body, count=1, flags=re.S)
    body = re.sub(r"<html[^>]*>", '<html lang="ko">', body, count=1)
    head_end = body.index("</head>")
    body = body[:head_end] + HEAD_EXTRA + explorer_player.head_html() + body[head_end:]
    m = re.search(r"<body[^>]*>", body)
    end = body.rindex("</body>")
    content = polish(fix_links(body[m.end() : end]))
    h1_end = content.find("</h1>")
    if h1_end >= 0:
        content = content[: h1_end + 5] + site.actions(stem) + content[h1_end + 5 :]
    row = site.rows[at]
    framed = site.frame(content, f"{stem}.html", f"{row['number']}. {row['title']}", at)
    return (
        body[: m.end()]
        + "\n"
        + framed
        + explorer_player.script_html()
        + f'<script id="course-chrome-js">{site_chrome.CHROME_JS}</script>\n'
        + body[end:]
    )


def exporter():
    import jinja2
    from nbconvert import HTMLExporter

    exp = HTMLExporter(
        template_name="lab",
        extra_loaders=[jinja2.DictLoader({"course_site.html.j2": TEMPLATE})],
        template_file="course_site.html.j2",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    exp.mathjax_url = MATHJAX_URL
    exp.mermaid_js_url = export_slides.MERMAID_STUB
    exp.require_js_url = ""
    exp.mermaid_layout_elk_js_url = ""  # only loaded for Mermaid diagrams, which the notebooks do not draw
    return exp


def notebook_page(notebook: Path, site: Site, at: int, frames_mode: str) -> tuple[str, int]:
    import nbformat

    out, rows = site.out, site.rows
    nb = nbformat.read(notebook, as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("slideshow", {}).get("slide_type") != "notes"]
    explorers = explorer_frames.frames_for(notebook, frames_mode)
    shown = explorer_player.replace_widgets(nb, explorers, out, "frames", notebook.stem)
    # --frames off (or an explorer without frames): no widget manager on the site, so a short note
    # takes the widget's place instead of nbconvert's widget renderer from a CDN.
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if explorer_player.WIDGET_VIEW in output.get("data", {}):
                output["data"] = {
                    "text/html": '<p class="course-explorer-note">슬라이더는 JupyterLab에서 움직입니다.</p>'
                }
    # the notebook itself (to download and run) and its handout, when one was printed
    (out / "notebooks").mkdir(exist_ok=True)
    shutil.copyfile(notebook, out / "notebooks" / notebook.name)
    handout = HANDOUTS / f"{notebook.stem}.pdf"
    if handout.exists():
        (out / "handouts").mkdir(exist_ok=True)
        shutil.copyfile(handout, out / "handouts" / handout.name)
    row = rows[at]
    title = f"{row['number']}. {row['title']} · {COURSE_TITLE}"
    body, _ = exporter().from_notebook_node(nb, resources={"metadata": {"name": title}})
    target = out / f"{notebook.stem}.html"
    target.write_text(wrap(body, site, at, title, notebook.stem), encoding="utf-8")
    return title, shown


def markdown_page(source: Path, name: str, title: str, site: Site) -> None:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    content = fix_links(markdown2html_mistune(source.read_text(encoding="utf-8")))
    if name == "glossary.html":
        content = term_rows(content)
    (site.out / name).write_text(page(title, f'<div class="course-md">{content}</div>', site, name), encoding="utf-8")


def term_rows(content: str) -> str:
    """Each glossary row an anchor and a search section of its own (`data-term`): searching a term
    finds its row, not the whole glossary."""
    seen: set[str] = set()

    def mark(m: re.Match) -> str:
        term = " ".join(re.sub(r"<[^>]+>", "", m[1]).split())
        ident = "용어-" + re.sub(r"\s+", "-", html.unescape(term))
        if not term or ident in seen:
            return m[0]
        seen.add(ident)
        return f'<tr id="{html.escape(ident)}" data-term="{html.escape(html.unescape(term))}"><td>{m[1]}</td>'

    return re.sub(r"<tr>\s*<td>(.*?)</td>", mark, content, flags=re.S)


def page(title: str, content: str, site: Site, name: str) -> str:
    framed = site.frame(polish(content), name, title.split(" · ")[0], None)
    return (
        '<!DOCTYPE html>\n<html lang="ko"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n{HEAD_EXTRA}</head>\n"
        f"<body>\n{framed}"
        f'<script id="course-chrome-js">{site_chrome.CHROME_JS}</script>\n'
        "</body></html>\n"
    )


def inline_code(text: str) -> str:
    """The README's `code` spans as <code>, the rest escaped."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def index_page(site: Site) -> str:
    items = []
    for r in site.rows:
        name = html.escape(r["title"])
        link = f'<a href="{r["stem"]}.html">{name}</a>' if r["stem"] in site.linked else name
        items.append(
            f'<tr><td class="num">{r["number"]}</td><td>{link}</td><td>{inline_code(r["summary"])}</td>'
            f'<td class="time">{html.escape(r["time"])}</td></tr>'
        )
    run = (
        f'저장소(<a href="{html.escape(site.repo)}">{html.escape(site.repo)}</a>)를 받아'
        if site.repo
        else "저장소를 받아"
    )
    content = (
        f'<h1 id="course-map">{COURSE_TITLE}</h1>\n'
        "<p>셀프 어텐션(self-attention)을 직접 계산하고, 슬라이더로 만져 보고, 테스트로 확인하는 한국어 과정의 읽기용 사이트입니다. "
        "각 페이지는 실행해 둔 노트북 그대로이고, 슬라이더는 Jupyter 커널 없이 움직입니다(미리 계산해 둔 그림으로, 01번은 브라우저가 직접 그려서). "
        "위의 검색 칸에서 과정 전체를 찾을 수 있고, 페이지마다 노트북 파일(.ipynb)을 받을 수 있습니다. "
        f"코드를 직접 고쳐 실행하려면 {run} <code>python3 course.py lab</code>으로 JupyterLab에서 여세요.</p>\n"
        '<table class="course-map"><thead><tr><th>번호</th><th>노트북</th><th>한 줄 요약</th>'
        "<th>예상 시간 (혼자 / 발표)</th></tr></thead>\n<tbody>\n" + "\n".join(items) + "\n</tbody></table>\n"
    )
    return page(f"과정 지도 · {COURSE_TITLE}", content, site, "index.html")


def install_mathjax(out: Path, cache: Path) -> None:
    """MathJax 2.7.7 (the files the decks use) into out/lib/mathjax/, from the npm cache."""
    unpacked = export_slides.fetch(cache)
    dst = out / "lib" / "mathjax"
    stamp = dst / ".version"
    if stamp.exists() and stamp.read_text() == export_slides.PACKAGES["mathjax"]:
        return
    shutil.rmtree(dst, ignore_errors=True)
    export_slides.copy_package_files(unpacked, "mathjax", dst)
    stamp.write_text(export_slides.PACKAGES["mathjax"])


def install_minisearch(out: Path, cache: Path) -> None:
    """MiniSearch's UMD build into out/lib/minisearch/ (with its licence), `npm pack`ed once into the cache."""
    import subprocess
    import tarfile

    name, version = MINISEARCH
    tarball = cache / f"{name}-{version}.tgz"
    if not tarball.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit(f"build_site: `npm` is needed once to fetch {name}@{version} into {cache}")
        cache.mkdir(parents=True, exist_ok=True)
        print(f"build_site: npm pack {name}@{version}", flush=True)
        subprocess.run(
            [npm, "pack", "--silent", f"{name}@{version}", "--pack-destination", str(cache)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    dst = out / "lib" / "minisearch"
    dst.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as tar:
        for member, target in (("package/dist/umd/index.js", "index.js"), ("package/LICENSE.txt", "LICENSE.txt")):
            (dst / target).write_bytes(tar.extractfile(member).read())


def search_docs_kept(out: Path, rebuilt: set[str]) -> list[dict]:
    """Search documents of notebook pages this run did not rebuild (`course.py site 04`), from the last index."""
    old = out / "search-index.js"
    if not old.exists():
        return []
    text = old.read_text(encoding="utf-8")
    try:
        docs = json.loads(text[text.index("=") + 1 :].strip().rstrip(";"))
    except ValueError:
        return []
    return [
        {k: v for k, v in d.items() if k != "id"}
        for d in docs
        if re.match(r"\d\d_", d["p"]) and d["p"] not in rebuilt and (out / d["p"]).exists()
    ]


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(
    out: Path,
    numbers: list[str],
    frames_mode: str = "cached",
    cache: Path = export_slides.DEFAULT_CACHE,
    repo: str | None = None,
) -> dict:
    started = time.monotonic()
    rows = course_map()
    out.mkdir(parents=True, exist_ok=True)
    install_mathjax(out, cache)
    install_minisearch(out, cache)
    chosen = [r for r in rows if not numbers or r["number"] in numbers]
    linked = {r["stem"] for r in chosen} | {r["stem"] for r in rows if (out / f"{r['stem']}.html").exists()}
    site = Site(out, rows, linked, repo_url(repo))
    built, explorers = set(), 0
    for at, row in enumerate(rows):
        if row not in chosen:
            continue
        notebook = NOTEBOOKS / f"{row['stem']}.ipynb"
        _, shown = notebook_page(notebook, site, at, frames_mode)
        built.add(row["stem"])
        explorers += shown
        print(f"build_site: {row['stem']}.html ({shown} explorer(s))", flush=True)
    (out / "index.html").write_text(index_page(site), encoding="utf-8")
    markdown_page(ROOT / "GLOSSARY.md", "glossary.html", f"용어집 · {COURSE_TITLE}", site)
    markdown_page(ROOT / "SOURCES.md", "sources.html", f"출처 · {COURSE_TITLE}", site)
    docs = search_docs_kept(out, {f"{s}.html" for s in built}) + site.docs
    (out / "search-index.js").write_text(site_chrome.search_index_js(docs), encoding="utf-8")
    return {
        "pages": len(built),
        "explorers": explorers,
        "seconds": time.monotonic() - started,
        "bytes": folder_size(out),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*", help="notebook numbers (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=export_slides.DEFAULT_CACHE)
    parser.add_argument("--frames", choices=explorer_frames.MODES, default="cached")
    parser.add_argument(
        "--repo-url", default=None, help="the repository's public https address (Binder and repository buttons)"
    )
    args = parser.parse_args(argv)
    result = build(args.out, args.numbers, args.frames, args.cache, args.repo_url)
    print(
        f"build_site: {result['pages']} page(s), {result['explorers']} explorer(s) in {result['seconds']:.0f} s, "
        f"{result['bytes'] / 2**20:.1f} MB; open {args.out / 'index.html'} (zip the folder to share)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
