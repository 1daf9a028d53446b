"""Handouts: one A4 PDF per notebook, for study-group members who read on paper or a tablet.

    python3 course.py handout            every notebook -> build/handouts/NN_topic.pdf
    python3 course.py handout 01 05      only these numbers
    tools/handout.py --out DIR           another output folder (the tests use a temporary one)

Each notebook becomes nbconvert HTML (JupyterLab's look, local MathJax from the npm cache that
`course.py slides` fills), which headless Chromium (the tests' /usr/bin/chromium, driven by
Playwright, with every non-file request aborted) prints to PDF. What a reader on paper needs differs
from the notebook in four ways:
- a slider cannot move on paper: widget outputs are dropped, and the static counterpart (the small
  multiple of several slider values right after every explorer) carries the picture;
- the hidden solution cells of 연습문제 are left out (the exercise and its empty answer cell stay);
- 발표 노트 (slide type `notes`) is for the presenter and is left out, and so are folded answer notes
  (markdown cells with a hidden source, 풀이 노트);
- collapsed cells (plotting code the learner need not read) show their output only.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
from pathlib import Path

from tools import export_slides
from tools.explorer_player import WIDGET_VIEW

ROOT = Path(__file__).resolve().parents[1]

NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "build" / "handouts"
REMOVE_INPUT = "course-handout-remove-input"

PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm 16mm 14mm; }
:root { --jp-content-font-size1: 12.5px; --jp-code-font-size: 11px; --jp-ui-font-size1: 12px;
        --jp-cell-prompt-width: 0px; }
body { margin: 0; padding: 0; }
.jp-Notebook { padding: 0 !important; }
.jp-InputPrompt, .jp-OutputPrompt { display: none !important; }
.jp-Cell { padding: 2px 0; }
.jp-OutputArea-output img { max-width: 100%; height: auto; break-inside: avoid; }
.jp-RenderedHTMLCommon table { break-inside: avoid; }
.jp-CodeCell .jp-InputArea, .jp-OutputArea-child { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
pre { white-space: pre-wrap; word-break: break-word; }
.course-handout-note { color: #555; font-style: italic; font-size: 11px; margin: 2px 0 6px 0; }
"""


def slide_type(cell) -> str:
    return cell.metadata.get("slideshow", {}).get("slide_type", "-")


def hidden_source(cell) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


def handout_notebook(nb):
    """A copy of the notebook as printed: no widgets, no hidden solutions, no speaker notes."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)  # no widget state: nothing for the widget renderer to draw
    cells, in_exercises = [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    in_exercises = line.strip() == "## 연습문제"
        if slide_type(cell) == "notes":
            continue
        if cell.cell_type == "markdown" and hidden_source(cell):
            continue  # a folded answer note (풀이 노트): a reader works the exercise first
        if cell.cell_type == "code":
            if hidden_source(cell) and (in_exercises or "check(" in cell.source):
                continue  # the solution (also one placed before a measurement): a reader tries it first
            outputs = [o for o in cell.get("outputs", []) if WIDGET_VIEW not in o.get("data", {})]
            if len(outputs) < len(cell.get("outputs", [])):
                outputs.append(
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {
                            "text/html": '<p class="course-handout-note">(노트북에서는 여기에 슬라이더가 있습니다. '
                            "인쇄본에서는 바로 아래 그림이 여러 값을 한꺼번에 보여 줍니다.)</p>",
                            "text/plain": "",
                        },
                    }
                )
            cell.outputs = outputs
            if hidden_source(cell):  # TagRemovePreprocessor drops the input, keeps the output
                cell.metadata.setdefault("tags", []).append(REMOVE_INPUT)
        cells.append(cell)
    nb.cells = cells
    return nb


def to_html(notebook: Path, html_dir: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config(
        {
            "HTMLExporter": {
                "mathjax_url": "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
                "require_js_url": "lib/requirejs/require.js",
                "exclude_input_prompt": True,
                "exclude_output_prompt": True,
            },
            "TagRemovePreprocessor": {"enabled": True, "remove_input_tags": [REMOVE_INPUT]},
        }
    )
    exporter = HTMLExporter(config=config, template_name="lab")
    exporter.mermaid_js_url = export_slides.MERMAID_STUB  # no CDN module import
    nb = handout_notebook(nbformat.read(notebook, as_version=4))
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": notebook.stem}})
    head_end = body.index("</head>")
    body = f'{body[:head_end]}<style type="text/css">{PRINT_CSS}</style>\n{body[head_end:]}'
    target = html_dir / f"{notebook.stem}.html"
    target.write_text(body, encoding="utf-8")
    return target


def print_pdf(browser, html: Path, pdf: Path, title: str) -> None:
    outside: list[str] = []

    def only_files(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page = browser.new_page()
    page.route("**/*", only_files)
    page.goto(html.as_uri())
    page.wait_for_function(
        "() => !window.MathJax || (MathJax.Hub && MathJax.Hub.queue.pending === 0 && MathJax.Hub.queue.running === 0)",
        timeout=120_000,
    )
    page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=60_000)
    page.wait_for_timeout(300)
    footer = (
        '<div style="font-size:8px; width:100%; text-align:center; color:#666;">'
        f'{title} · <span class="pageNumber"></span> / <span class="totalPages"></span></div>'
    )
    page.pdf(
        path=str(pdf),
        format="A4",
        print_background=True,
        display_header_footer=True,
        header_template="<span></span>",
        footer_template=footer,
        margin={"top": "14mm", "bottom": "16mm", "left": "13mm", "right": "13mm"},
    )
    page.close()
    if outside:
        raise SystemExit(f"handout: {html.name} tried to reach the network: {outside}")


def notebook_title(notebook: Path) -> str:
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook.stem


def build(numbers: list[str], out: Path = DEFAULT_OUT, cache: Path = export_slides.DEFAULT_CACHE) -> list[Path]:
    from tools.browser_support import chromium, missing_browser

    if missing_browser():
        raise SystemExit(f"handout: {missing_browser()}")
    notebooks = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if numbers:
        notebooks = [p for p in notebooks if p.name[:2] in numbers]
    if not notebooks:
        raise SystemExit(f"handout: no notebook matches {numbers} in {NOTEBOOKS}")
    html_dir = out / "html"
    html_dir.mkdir(parents=True, exist_ok=True)
    export_slides.install_libs(export_slides.fetch(cache), html_dir / "lib")
    pdfs = []
    with chromium() as browser:
        for notebook in notebooks:
            pdf = out / f"{notebook.stem}.pdf"
            print_pdf(browser, to_html(notebook, html_dir), pdf, notebook_title(notebook))
            print(pdf, flush=True)
            pdfs.append(pdf)
    return pdfs


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*", help="notebook numbers (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--keep-html", action="store_true", help="keep the intermediate HTML in OUT/html/")
    args = parser.parse_args(argv)
    build(args.numbers, args.out)
    if not args.keep_html:
        shutil.rmtree(args.out / "html", ignore_errors=True)
    print(f"handout: PDFs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
