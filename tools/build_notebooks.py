"""Build notebooks/NN_*.ipynb from their readable sources notebooks/src/NN_*.py, executed.

    python3 course.py build             every notebook (after regenerating helpers/lessons/)
    python3 course.py build 01 04       only these numbers
    python3 course.py build 08 --fresh-timings  also store new timings (kept from the last build otherwise)
    python3 course.py build --generate  only regenerate helpers/lessons/ (no execution), then name the
                                        notebooks built from other lesson code (stale: rebuild them)

The source (jupytext percent format) is the truth; the .ipynb is its executed form with the
outputs that nbval compares. Cells without slide metadata get one: '#'/'##' headings start
a slide, '###' headings a sub-slide, everything else continues the current slide.

Show, then save: a code cell tagged ``save`` (``# %% tags=["save"]``) is taught in the notebook
and copied, as written, into ``helpers/lessons/<topic>.py`` (the notebook's file name without
its number), so later notebooks, scripts and tests import the very code the learner read.
A saved cell holds only imports, functions, classes and constant assignments. The imports of all
saved cells become one sorted block at the top of the module (``from __future__`` first, then the
standard library, third-party and first-party groups, as ruff's isort rules want), so a source
needs no ``noqa`` for the way the build joins its cells.

Built notebooks are deterministic: widget model ids are derived from the notebook and the cell
(``stable_widget_ids``), and the metadata records a hash of each lesson module the run imports
(``course.inputs``), which ``build --generate`` compares to name the notebooks that are now stale.
A timing (a cell tagged nbval-ignore-output with no widget) keeps its stored output while its source is
unchanged: a loaded machine's numbers would otherwise change the bytes on every build (--fresh-timings).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from tools.explorer_player import WIDGET_STATE, WIDGET_VIEW

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "notebooks" / "src"
OUT = ROOT / "notebooks"
LESSONS = ROOT / "helpers" / "lessons"
SAVE_TAG = "save"
_ALLOWED = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
FIRST_PARTY = {"helpers", "tools"}
LINE_LENGTH = 120  # pyproject.toml [tool.ruff]


def _section(module: str, level: int) -> int:
    """0 __future__, 1 standard library, 2 third-party, 3 first-party, 4 relative (ruff's isort order)."""
    top = module.split(".")[0]
    if level:
        return 4
    if top == "__future__":
        return 0
    if top in sys.stdlib_module_names:
        return 1
    return 3 if top in FIRST_PARTY else 2


def _member_key(alias: ast.alias) -> tuple:
    """ruff's order-by-type: CONSTANTS, then Classes, then functions and modules."""
    name = alias.name
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name, alias.asname or "")


def _as(alias: ast.alias) -> str:
    return alias.name + (f" as {alias.asname}" if alias.asname else "")


def sorted_import_block(nodes: list[ast.stmt]) -> str:
    """One import block, isort-style: a blank line between sections; within one, `import x` lines,
    then `from x import ...` lines, each by module; the names of one module merged and sorted."""
    plain: set[tuple[int, str, str]] = set()
    froms: dict[tuple[int, int, str], set[tuple]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                plain.add((_section(alias.name, 0), alias.name, _as(alias)))
        else:
            module = node.module or ""
            key = (_section(module, node.level), node.level, module)
            froms.setdefault(key, set()).update(_member_key(a) + (_as(a),) for a in node.names)
    sections: dict[int, list[str]] = {}
    for section, _module, text in sorted(plain, key=lambda t: (t[0], t[1].lower(), t[1], t[2])):
        sections.setdefault(section, []).append(f"import {text}")
    for (section, level, module), members in sorted(
        froms.items(), key=lambda kv: (kv[0][0], -kv[0][1], kv[0][2].lower())
    ):
        names = [m[-1] for m in sorted(members)]
        head = f"from {'.' * level}{module} import "
        line = head + ", ".join(names)
        if len(line) > LINE_LENGTH:
            line = head + "(\n" + "".join(f"    {n},\n" for n in names) + ")"
        sections.setdefault(section, []).append(line)
    return "\n\n".join("\n".join(lines) for _, lines in sorted(sections.items()))


def default_slide_type(cell) -> str:
    if cell.cell_type == "markdown":
        first = cell.source.lstrip().split("\n", 1)[0]
        if first.startswith("# ") or first.startswith("## "):
            return "slide"
        if first.startswith("### "):
            return "subslide"
    return "-"


def is_solution(cell) -> bool:
    """A worked solution: a code cell whose source is folded and that calls the exercise checker."""
    return (
        cell.cell_type == "code"
        and cell.metadata.get("jupyter", {}).get("source_hidden", False)
        and "check(" in cell.source
    )


def load_source(path: Path) -> nbformat.NotebookNode:
    """Read a percent-format source into a notebook with slide metadata and stable cell ids.

    A solution cell is folded whole (source and output: its output often prints the answer) and
    kept off the slides, so a study group works the exercise before anyone sees the answer.
    """
    nb = jupytext.read(path, fmt="py:percent")
    for i, cell in enumerate(nb.cells):
        cell.metadata.setdefault("slideshow", {"slide_type": default_slide_type(cell)})
        if is_solution(cell):
            cell.metadata["slideshow"] = {"slide_type": "skip"}
            cell.metadata["jupyter"]["outputs_hidden"] = True
        cell["id"] = f"c{i:03d}"
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
        "rise": {"scroll": False, "enable_chalkboard": False, "theme": "white"},
    }
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


# --------------------------------------------------------------------------- show, then save


def module_name(source: Path) -> str:
    """'07_multi_head_attention.py' -> 'multi_head_attention' (helpers.lessons.multi_head_attention)."""
    return source.stem.split("_", 1)[1]


def saved_module_text(source: Path) -> str | None:
    """The generated module for one notebook source, or None if it saves no cell."""
    return _saved_module_text(source.name, source.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=64)  # keyed by the text: the tests ask for every module several times
def _saved_module_text(name: str, text: str) -> str | None:
    nb = jupytext.reads(text, fmt="py:percent")
    imports: list[ast.stmt] = []
    bodies: list[str] = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or SAVE_TAG not in cell.metadata.get("tags", []):
            continue
        where = f"{name}, cell {i}"
        try:
            tree = ast.parse(cell.source)
        except SyntaxError as err:
            raise ValueError(f"{where}: a saved cell must be plain Python ({err})") from None
        lines = cell.source.splitlines()
        keep = [True] * len(lines)
        for node in tree.body:
            if not isinstance(node, _ALLOWED):
                raise ValueError(
                    f"{where}, line {node.lineno}: a saved cell may hold only imports, functions, "
                    f"classes and constants, found {type(node).__name__}; move it to another cell"
                )
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if "#" in "\n".join(lines[node.lineno - 1 : node.end_lineno]):
                    raise ValueError(
                        f"{where}, line {node.lineno}: the build sorts the imports of saved cells and "
                        "drops their comments; put the comment on a line of its own above"
                    )
                imports.append(node)
                for j in range(node.lineno - 1, node.end_lineno):
                    keep[j] = False
        body = "\n".join(line for line, k in zip(lines, keep) if k).strip("\n")
        if body:
            bodies.append(body)
    if not bodies and not imports:
        return None
    header = (
        f'"""Generated from notebooks/src/{name} by `python3 course.py build`.\n\n'
        f'Do not edit: change the cells tagged "{SAVE_TAG}" in the notebook source and rebuild.\n'
        '"""\n'
    )
    parts = [header, sorted_import_block(imports)] if imports else [header]
    body = "\n\n\n".join(bodies)
    # isort's spacing: two blank lines before a def or class after the imports, one before a constant.
    first = ast.parse(body).body[:1] if imports else []
    gap = "\n\n" if first and isinstance(first[0], (ast.Assign, ast.AnnAssign)) else "\n\n\n"
    return "\n".join(parts) + gap + body + "\n"


def generated_modules() -> dict[Path, str]:
    """Every generated module, keyed by its path under helpers/lessons/."""
    out = {}
    for source in sorted(SRC.glob("[0-9][0-9]_*.py")):
        text = saved_module_text(source)
        if text is not None:
            out[LESSONS / f"{module_name(source)}.py"] = text
    return out


def write_generated() -> list[Path]:
    """(Re)write helpers/lessons/*.py from the sources; remove modules whose notebook saves nothing."""
    LESSONS.mkdir(exist_ok=True)
    wanted = generated_modules()
    for stale in set(LESSONS.glob("*.py")) - set(wanted) - {LESSONS / "__init__.py"}:
        stale.unlink()
    changed = []
    for path, text in wanted.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


# --------------------------------------------------------------------------- execute


MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


def stable_widget_ids(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """Replace the kernel's random ipywidgets model ids (uuid4) by ids derived from the notebook, the cell and
    the order, so that rebuilding an unchanged notebook writes the same bytes (nbformat writes the widget state
    sorted by id). The models are numbered as a depth-first walk from each widget output (cell by cell) through
    the `IPY_MODEL_<id>` references of their state (children, layout, style), in the order they are written."""
    widgets = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {})
    state = widgets.get("state", {})
    if not state:
        return nb
    order: list[tuple[str, str]] = []  # (old id, where)
    seen: set[str] = set()

    def visit(model: str, where: str) -> None:
        if model in seen or model not in state:
            return
        seen.add(model)
        order.append((model, where))
        for ref in MODEL_REF.findall(json.dumps(state[model], sort_keys=True)):
            visit(ref, where)

    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                visit(view["model_id"], f"cell{i}")
    # Models no output reaches (none in the course today): ordered by their content.
    for model in sorted(set(state) - seen, key=lambda m: json.dumps(state[m], sort_keys=True)):
        visit(model, "unshown")
    new_ids = {
        old: hashlib.sha256(f"{name}/{where}/{k}".encode()).hexdigest()[:32] for k, (old, where) in enumerate(order)
    }
    text = json.dumps(nb)
    for old, new in new_ids.items():
        text = text.replace(old, new)
    out = nbformat.from_dict(json.loads(text))
    moved = out.metadata["widgets"][WIDGET_STATE]
    moved["state"] = {new_ids[old]: moved["state"][new_ids[old]] for old, _ in order}
    return out


def coalesce_streams(nb: nbformat.NotebookNode) -> None:
    """Join a cell's consecutive stdout (or stderr) outputs into one: how the kernel's prints arrive in
    messages depends on timing, so the split would differ from build to build (nbval joins them too)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        joined: list = []
        for output in cell.outputs:
            last = joined[-1] if joined else None
            if (
                output.output_type == "stream"
                and last is not None
                and last.output_type == "stream"
                and last.name == output.name
            ):
                last.text += output.text
            else:
                joined.append(output)
        cell.outputs = joined


def keep_stored_timings(nb: nbformat.NotebookNode, target: Path) -> int:
    """Put back the stored outputs of the cells tagged nbval-ignore-output that hold no widget (the timings:
    08's live measurement) when the cell's source did not change, so that a rebuild writes the same bytes;
    `build --fresh-timings` stores the new ones. Returns how many cells kept their old output."""
    if not target.exists():
        return 0
    old = {c.get("id"): c for c in nbformat.read(target, as_version=4).cells if c.cell_type == "code"}
    kept = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or "nbval-ignore-output" not in cell.metadata.get("tags", []):
            continue
        if any(WIDGET_VIEW in o.get("data", {}) for o in cell.outputs):
            continue
        before = old.get(cell.get("id"))
        if before is not None and before.source == cell.source:
            cell.outputs = before.outputs
            kept += 1
    return kept


def build(path: Path, fresh_timings: bool = False) -> float:
    from tools import maintain

    nb = load_source(path)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=300, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(OUT)}}
    ).execute()
    seconds = time.perf_counter() - start
    if not fresh_timings:
        keep_stored_timings(nb, OUT / f"{path.stem}.ipynb")
    coalesce_streams(nb)
    nb = stable_widget_ids(nb, path.stem)
    # The lesson modules this run read, hashed: `build --generate` names the notebooks they no longer match.
    nb.metadata[maintain.BUILD_KEY] = {"inputs": maintain.build_inputs(path.name[:2])}
    nbformat.write(nb, OUT / f"{path.stem}.ipynb")
    return seconds


def report_stale() -> None:
    """After regenerating helpers/lessons/: the notebooks whose stored outputs came from other lesson code."""
    from tools import maintain

    stale = maintain.stale_notebooks()
    if not stale:
        print("every notebook was built from the current lesson modules", flush=True)
        return
    for number, changed in stale.items():
        print(f"stale: notebooks/{maintain.notebook_path(number).name} (built from other {', '.join(changed)})")
    print(f"rebuild them: python3 course.py build {' '.join(stale)}", flush=True)


def main(args: list[str]) -> int:
    for path in write_generated():
        print(f"generated {path.relative_to(ROOT)}", flush=True)
    fresh_timings = "--fresh-timings" in args
    args = [a for a in args if a != "--fresh-timings"]
    if args == ["--generate"]:
        report_stale()
        return 0
    sources = sorted(SRC.glob("[0-9][0-9]_*.py"))
    if args:
        sources = [p for p in sources if p.name[:2] in args]
    if not sources:
        print(f"no sources match {args} in {SRC}")
        return 1
    for path in sources:
        print(f"{path.name}: {build(path, fresh_timings):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
