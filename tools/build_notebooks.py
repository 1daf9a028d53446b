"""Build notebooks/NN_*.ipynb from their readable sources notebooks/src/NN_*.py, executed.

    python3 course.py build          every notebook
    python3 course.py build 01 04    only these numbers

The source (jupytext percent format) is the truth; the .ipynb is its executed form with the
outputs that nbval compares. Cells without slide metadata get one: '#'/'##' headings start
a slide, '###' headings a sub-slide, everything else continues the current slide.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "notebooks" / "src"
OUT = ROOT / "notebooks"


def default_slide_type(cell) -> str:
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().split("\n", 1)[0]
        if first.startswith("# ") or first.startswith("## "):
            return "slide"
        if first.startswith("### "):
            return "subslide"
    return "-"


def load_source(path: Path) -> nbformat.NotebookNode:
    """Read a percent-format source into a notebook with slide metadata and stable cell ids."""
    nb = jupytext.read(path, fmt="py:percent")
    for i, cell in enumerate(nb.cells):
        cell.metadata.setdefault("slideshow", {"slide_type": default_slide_type(cell)})
        cell["id"] = f"c{i:03d}"
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
        "rise": {"scroll": True, "enable_chalkboard": False, "theme": "simple"},
    }
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def build(path: Path) -> float:
    nb = load_source(path)
    start = time.perf_counter()
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(OUT)}}).execute()
    seconds = time.perf_counter() - start
    nbformat.write(nb, OUT / f"{path.stem}.ipynb")
    return seconds


def main(numbers: list[str]) -> int:
    sources = sorted(SRC.glob("[0-9][0-9]_*.py"))
    if numbers:
        sources = [p for p in sources if p.name[:2] in numbers]
    if not sources:
        print(f"no sources match {numbers} in {SRC}")
        return 1
    for path in sources:
        print(f"{path.name}: {build(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
