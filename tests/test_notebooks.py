"""The notebook contract (see CONTRIBUTING.md): structure, sources in sync, clean stored outputs, README map."""

import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def text(cell):
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def test_there_are_notebooks_numbered_without_gaps():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers == list(range(1, len(NOTEBOOKS) + 1)), f"numbers {numbers} have gaps or repeats"


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def nb_path(request):
    return request.param


def test_name_is_ascii_and_numbered(nb_path):
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", nb_path.name), nb_path.name


def test_source_exists_and_is_in_sync(nb_path):
    src = ROOT / "notebooks" / "src" / f"{nb_path.stem}.py"
    assert src.exists(), f"{src} (the readable source) is missing"
    want = jupytext.read(src, fmt="py:percent").cells
    got = load(nb_path)["cells"]
    assert [c.cell_type for c in want] == [c["cell_type"] for c in got], (
        "cell types differ: rebuild with course.py build"
    )
    for i, (a, b) in enumerate(zip(want, got)):
        assert a.source == text(b), (
            f"cell {i} differs from its source: run `python3 course.py build {nb_path.name[:2]}`"
        )


def test_title_cell(nb_path):
    first = load(nb_path)["cells"][0]
    assert first["cell_type"] == "markdown"
    body = text(first)
    assert body.startswith(f"# {nb_path.name[:2]}. "), body[:40]
    for part in ("학습 목표", "선수 지식", "예상 시간"):
        assert part in body, f"title cell lacks {part}"


def test_single_setup_cell_first(nb_path):
    code = [c for c in load(nb_path)["cells"] if c["cell_type"] == "code"]
    assert "setup(" in text(code[0]), "the first code cell must call setup()"
    assert sum("setup()" in text(c) for c in code) == 1


def test_slide_metadata_on_every_cell(nb_path):
    for i, cell in enumerate(load(nb_path)["cells"]):
        slide = cell["metadata"].get("slideshow", {}).get("slide_type")
        assert slide in SLIDE_TYPES, f"cell {i} has no valid slide metadata"


def test_sections_exercises_discussion_notes_summary(nb_path):
    cells = load(nb_path)["cells"]
    md = "\n".join(text(c) for c in cells if c["cell_type"] == "markdown")
    for heading in ("## 연습문제", "## 스터디 토론 질문", "## 요약"):
        assert heading in md, f"missing section {heading}"
    summary = md.split("## 요약", 1)[1]
    assert "|---" in summary, "요약 must hold a table"
    notes = [c for c in cells if c["metadata"].get("slideshow", {}).get("slide_type") == "notes"]
    assert notes and all("발표 노트" in text(c) for c in notes), "speaker notes cells (slide type notes) are missing"
    number = nb_path.name[:2]
    ids = set(re.findall(rf'check\("({number}-\d)"', "\n".join(text(c) for c in cells if c["cell_type"] == "code")))
    assert 1 <= len(ids) <= 3, f'expected 1-3 exercises checked with check("{number}-k", ...), found {sorted(ids)}'
    hidden = [c for c in cells if c["metadata"].get("jupyter", {}).get("source_hidden")]
    assert len(hidden) >= len(ids), "each exercise needs a hidden solution cell"
    for ex in ids:
        outs = [o for c in cells if f'check("{ex}"' in text(c) for o in c.get("outputs", [])]
        shown = ["".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", "")) for o in outs]
        assert any("✅" in s for s in shown), f"no stored passing check for {ex}: the solution must pass"


def test_outputs_from_one_clean_run(nb_path):
    code = [c for c in load(nb_path)["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), "not saved after one clean run: rebuild it"
    for i, cell in enumerate(code):
        for out in cell["outputs"]:
            assert out["output_type"] != "error", f"code cell {i} stored an error"
            if out["output_type"] == "stream":
                assert out["name"] != "stderr" or "Warning" not in "".join(out["text"]), (
                    f"code cell {i} shows a warning"
                )
            body = json.dumps(out, ensure_ascii=False)
            assert "missing from font" not in body and "Glyph" not in body, f"code cell {i}: font glyph missing"


def tags(cell):
    return cell["metadata"].get("tags", [])


# Every notebook checks its claims in its own code (20 to 44 run-time asserts each when this was set).
MIN_ASSERTS = 15


class _RunTimeAsserts(ast.NodeVisitor):
    """Counts the assert statements a cell runs: not those inside a def or lambda, which run only if called."""

    def __init__(self):
        self.count = 0

    def visit_Assert(self, node):
        self.count += 1

    def visit_FunctionDef(self, node):
        pass

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef


def count_asserts(code_cells):
    counter = _RunTimeAsserts()
    for i, cell in enumerate(code_cells):
        try:
            counter.visit(ast.parse(text(cell)))
        except SyntaxError as err:
            pytest.fail(f"code cell {i} is not plain Python: {err}")
    return counter.count


def test_count_asserts_counts_statements_not_substrings():
    cells = [
        {"source": "x = 1\nassert x == 1\nfor i in range(3):\n    assert i < 3"},
        {"source": "# assert nothing here\nprint('assert')\nassert_close = 1"},
        {"source": "def f(x):\n    assert x\n    return x\ng = lambda: None"},
    ]
    assert count_asserts(cells) == 2


def test_interactive_with_ignored_output_only_where_needed(nb_path):
    code = [c for c in load(nb_path)["cells"] if c["cell_type"] == "code"]
    widget_cells = [
        c for c in code if any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in c["outputs"])
    ]
    assert widget_cells, "the contract asks for at least one slider"
    assert not any("NBVAL_" in text(c) for c in code), (
        "NBVAL_ comments show in the learner's code and on slides: use the cell tag in the source header"
    )
    ignored = [c for c in code if "nbval-ignore-output" in tags(c) or "nbval-skip" in tags(c)]
    assert all("nbval-ignore-output" in tags(c) for c in widget_cells), (
        "widget cells must be tagged nbval-ignore-output"
    )
    assert len(ignored) <= max(3, len(code) // 4), "too many cells ignore their outputs: nbval would test little"
    asserts = count_asserts(code)
    assert asserts >= MIN_ASSERTS, (
        f"important claims must be asserted: {asserts} assert statements run, want >= {MIN_ASSERTS}"
    )
    # Saved from one clean build (not by JupyterLab): the widget state matches the views, so the
    # static HTML and the offline slides can still show the sliders.
    state = (
        load(nb_path)["metadata"]
        .get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )
    for c in widget_cells:
        for o in c["outputs"]:
            view = o.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view:
                assert view["model_id"] in state, "widget state does not match the slider output: rebuild the notebook"


def test_prose_is_korean_and_finished(nb_path):
    cells = load(nb_path)["cells"]
    md = "".join(text(c) for c in cells if c["cell_type"] == "markdown")
    hangul = len(re.findall(r"[\uac00-\ud7a3]", md))
    letters = len(re.findall(r"[A-Za-z\uac00-\ud7a3]", md))
    assert hangul / letters > 0.5, f"prose is only {hangul / letters:.0%} Hangul"
    everything = md + "".join(text(c) for c in cells)
    assert not re.search(r"\b(TODO|FIXME|XXX|lorem ipsum|placeholder)\b", everything, re.I)


def test_readme_course_map_lists_exactly_the_notebooks():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"notebooks/(\d\d_[a-z0-9_]+\.ipynb)", readme))
    assert listed == {p.name for p in NOTEBOOKS}, (
        f"README map {sorted(listed)} != notebooks {[p.name for p in NOTEBOOKS]}"
    )


def test_glossary_exists_and_readme_links_it():
    assert (ROOT / "GLOSSARY.md").exists()
    assert "GLOSSARY.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_solutions_are_folded_and_off_the_slides(nb_path):
    """Every cell that re-runs check() with a worked answer hides source and output and is no slide."""
    cells = load(nb_path)["cells"]
    solutions = [
        (i, c)
        for i, c in enumerate(cells)
        if c["cell_type"] == "code" and "check(" in text(c) and c["metadata"].get("jupyter", {}).get("source_hidden")
    ]
    assert solutions, "no solution cell found"
    for i, c in solutions:
        assert c["metadata"]["jupyter"].get("outputs_hidden") is True, f"cell {i}: solution output is not folded"
        assert c["metadata"].get("slideshow", {}).get("slide_type") == "skip", f"cell {i}: solution is on a slide"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_answer_notes_are_folded_and_off_the_slides(nb_path):
    """A markdown cell that gives an exercise's answer (풀이 노트, 풀이:, 정답:) is folded and no slide, like
    the solution cells; the handout leaves it out and the site shows it in a closed <details>."""
    for i, cell in enumerate(load(nb_path)["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        body = text(cell).lstrip("#> *")
        hidden = cell["metadata"].get("jupyter", {}).get("source_hidden", False)
        slide = cell["metadata"].get("slideshow", {}).get("slide_type")
        if body.startswith(("풀이 노트", "풀이:", "정답:", "풀이 ")):
            assert hidden, f"cell {i} gives an answer but is not folded: {body[:60]!r}"
        if hidden:
            assert slide == "skip", f"cell {i} is folded but on a slide (slide type {slide})"
