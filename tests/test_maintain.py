"""tools/maintain.py (course.py test NN, affected, stale notebooks) and the deterministic build's helpers."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest

from tools import build_notebooks, maintain

ROOT = maintain.ROOT
T = ROOT / "tests"


# --------------------------------------------------------------------------- course.py test ARGS


def test_numbers_and_nb_select_notebooks_but_k_stays_a_keyword():
    assert maintain.parse_test_args(["03"]).numbers == ["03"]
    assert maintain.parse_test_args(["--nb", "3", "--nb=05,07"]).numbers == ["03", "05", "07"]
    req = maintain.parse_test_args(["-k", "03", "-x"])
    assert not req.narrowed and req.pytest_args == ["-k", "03", "-x"]
    req = maintain.parse_test_args(["05", "--fast", "-x"])
    assert req.numbers == ["05"] and req.fast and req.pytest_args == ["-x"]


def test_paths_narrow_the_run():
    req = maintain.parse_test_args(["tests/test_qkv.py::test_03_1_accepts_correct"])
    assert req.test_paths == ["tests/test_qkv.py::test_03_1_accepts_correct"] and not req.numbers
    req = maintain.parse_test_args(["notebooks/05_temperature.ipynb", "notebooks/src/03_query_key_value.py"])
    assert [p.name for p in req.notebook_paths] == ["05_temperature.ipynb", "03_query_key_value.ipynb"]
    steps = maintain.narrowed_steps(maintain.parse_test_args(["tests/test_qkv.py"]), ["--nbval"], sequential=False)
    assert [(s[1][0], s[2]) for s in steps] == [("tests/test_qkv.py", "native")], "a test file: one native run"


@pytest.mark.parametrize("bad", [["99"], ["--nb"], ["no/such/file.py"]])
def test_bad_arguments_are_refused_with_a_message(bad):
    with pytest.raises(ValueError, match="notebook|path"):
        maintain.parse_test_args(bad)


def test_steps_of_one_notebook():
    steps = maintain.narrowed_steps(maintain.parse_test_args(["03"]), ["--nbval"], sequential=False)
    (native, native_args, native_env, bg0), (_, side_args, side_env, bg1) = steps
    assert native_env == "native" and not bg0 and side_env == "portable" and bg1
    assert "notebooks/03_query_key_value.ipynb" in native_args and "notebooks/03_query_key_value.ipynb" in side_args
    assert "tests/test_qkv.py" in native_args and "tests/test_slides.py" in side_args and "--nb=03" in side_args
    assert not any("05_" in a or "01_" in a for a in native_args + side_args)
    fast = maintain.narrowed_steps(maintain.parse_test_args(["03", "--fast"]), ["--nbval"], sequential=True)
    assert [s[2] for s in fast] == ["native", "plain"] and not any(s[3] for s in fast)
    assert not any(a.endswith(".ipynb") for a in fast[1][1]), "--fast: no second nbval"


def test_plan_holds_the_tests_of_the_code_a_notebook_saves_and_imports():
    names = lambda numbers: {p.name for p in maintain.plan(numbers).units}  # noqa: E731
    assert names(["03"]) == {"test_qkv.py", "test_core_helpers.py"}  # 03 saves query_key_value, imports 01
    assert names(["01"]) == {"test_core_helpers.py"}
    assert {"test_position.py", "test_masks.py", "test_attention.py"} <= names(["10"])  # via helpers.attention
    assert "test_qkv.py" not in names(["08"]) and "test_flash_gpu.py" not in names(["10"])
    with pytest.raises(ValueError, match="no notebook numbered 42"):
        maintain.plan(["42"])


def test_items_are_given_their_notebook_exactly():
    nb = ROOT / "notebooks" / "05_temperature.ipynb"
    lesson = ROOT / "helpers" / "lessons" / "query_key_value.py"
    assert maintain.item_notebooks({"nb_path": nb}, None, []) == {"05"}
    assert maintain.item_notebooks({"stem": "01_weighted_average"}, None, []) == {"01"}
    assert maintain.item_notebooks({"path": lesson}, None, []) == {"03"}
    assert maintain.item_notebooks({}, type("C", (), {"notebook": nb}), []) == {"05"}
    assert maintain.item_notebooks({}, None, ["04", "05"]) == {"04", "05"}
    # an escaped τ (\\u03c4) or an exercise id is not notebook 03; a plain unit test is about no notebook
    assert maintain.item_notebooks({"tau": "\\u03c4", "exercise": "03-1", "x": 3}, None, []) is None


def test_conftest_keeps_only_the_selected_notebooks_items():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_sources.py", "tests/test_generated.py", "--nb", "03"]
        + ["--collect-only", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert ids and all("[03]" in i or "[query_key_value]" in i for i in ids), out.stdout
    assert any("test_generated_module_matches_its_notebook_source[query_key_value]" in i for i in ids)


def test_every_test_module_says_which_notebook_it_is_about():
    """A unit test module carries pytestmark = pytest.mark.notebook("NN") for a notebook whose lesson code or
    checkers it imports (helpers.attention counts as the notebook it wraps), and every lesson module is tested."""
    owners = maintain.owner_of_module()
    tagged: set[str] = set()
    for path, tags in maintain.test_modules().items():
        if path.name in maintain.CONTRACT + maintain.BROWSER + maintain.GENERAL:
            assert not tags, f"{path.name} is a per-item module: tag items, not the module"
            continue
        assert tags, f"{path.name}: add pytestmark = pytest.mark.notebook('NN') (see tools/maintain.py)"
        reachable = {owners[m] for m in maintain.imports_of(path) if m in owners} | maintain.check_ids_in(path)
        if "helpers.attention" in maintain.imports_of(path):
            reachable.add(maintain.boundary_notebook())
        assert tags <= reachable, f"{path.name} is tagged {sorted(tags)} but uses the code of {sorted(reachable)}"
        tagged |= tags
    saving = {n for n in maintain.sources() if maintain.saved_module(n) in maintain.helpers_modules()}
    assert saving <= tagged, f"no unit test module is tagged with notebook(s) {sorted(saving - tagged)}"


def test_marker_reader_reads_what_pytest_reads():
    tree = ast.parse('import pytest\npytestmark = [pytest.mark.notebook("03", "04"), pytest.mark.slow]\n')
    assert maintain._marker_numbers(tree) == {"03", "04"}


# --------------------------------------------------------------------------- affected


def names(paths) -> set[str]:
    return {Path(p).name for p in paths}


def test_a_notebook_source_reaches_the_users_of_its_lesson_module():
    reach = maintain.affected(["notebooks/src/01_weighted_average.py"])
    assert {"01", "02", "03", "05", "09", "12"} <= reach.notebooks and "08" not in reach.notebooks
    assert {"test_core_helpers.py", "test_qkv.py", "test_temperature.py"} <= names(reach.tests)


def test_a_lesson_module_reaches_its_notebook_the_importers_and_their_tests():
    reach = maintain.affected(["helpers/lessons/masks.py"])
    assert reach.notebooks == {"09", "10", "12", "13"}  # 09 saves it; 10 and 13 through helpers.attention
    assert {"test_masks.py", "test_attention.py", "test_position.py"} <= names(reach.tests)
    assert "scripts/train_dynamics.py" in {str(p.relative_to(ROOT)) for p in reach.scripts}


def test_a_checker_reaches_its_notebook_and_its_tests():
    reach = maintain.affected(["helpers/exercises/ex03.py"])
    assert reach.notebooks == {"03"} and names(reach.tests) == {"test_qkv.py", "test_core_helpers.py"}


def test_a_hand_written_helper_reaches_everything_that_imports_it():
    reach = maintain.affected(["helpers/validate.py"])
    assert "helpers.attention" in reach.modules and {"10", "13"} <= reach.notebooks
    assert {"test_attention.py", "test_mha_reference.py"} <= names(reach.tests)
    assert maintain.affected(["helpers/__init__.py"]).notebooks == set(maintain.sources())
    assert maintain.affected(["README.md"]).notes, "a file outside the map says so"


# --------------------------------------------------------------------------- deterministic builds, stale


def _widget_notebook(ids: list[str]) -> nbformat.NotebookNode:
    slider, layout, box = ids
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("w")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a\n"),
        nbformat.v4.new_output("stream", name="stdout", text="b\n"),
        nbformat.v4.new_output(
            "display_data", data={build_notebooks.WIDGET_VIEW: {"model_id": box, "version_major": 2}}
        ),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("x", id="c000"), cell]
    cell["id"] = "c001"  # as load_source numbers them
    state = {
        layout: {"model_name": "LayoutModel", "state": {}},
        slider: {"model_name": "FloatSliderModel", "state": {"layout": f"IPY_MODEL_{layout}"}},
        box: {"model_name": "VBoxModel", "state": {"children": [f"IPY_MODEL_{slider}"]}},
    }
    nb.metadata["widgets"] = {build_notebooks.WIDGET_STATE: {"state": state, "version_major": 2}}
    return nb


def test_widget_ids_come_from_the_notebook_and_cell_not_from_chance():
    built = []
    for _ in range(2):
        nb = _widget_notebook([uuid.uuid4().hex for _ in range(3)])
        build_notebooks.coalesce_streams(nb)
        built.append(nbformat.writes(build_notebooks.stable_widget_ids(nb, "05_demo")))
    assert built[0] == built[1]
    nb = json.loads(built[0])
    state = nb["metadata"]["widgets"][build_notebooks.WIDGET_STATE]["state"]
    box = nb["cells"][1]["outputs"][1]["data"][build_notebooks.WIDGET_VIEW]["model_id"]
    assert state[box]["model_name"] == "VBoxModel", "nbformat writes the state sorted by the new ids"
    assert state[box]["state"]["children"][0][len("IPY_MODEL_") :] in state, "references follow the new ids"
    assert "".join(nb["cells"][1]["outputs"][0]["text"]) == "a\nb\n", "consecutive prints are one output"
    other = nbformat.writes(build_notebooks.stable_widget_ids(_widget_notebook(["1" * 32, "2" * 32, "3" * 32]), "06"))
    assert box not in other, "another notebook gets other ids"


def test_every_stored_notebook_was_built_from_the_current_lesson_modules():
    # A "save" cell edited without rebuilding the notebooks that import its module leaves outputs that no
    # longer come from the shipped code (02-13 stayed so for a session after softmax_bars moved out of 01).
    stale = maintain.stale_notebooks()
    assert not stale, (
        f"stored outputs from other lesson code: {stale}; rebuild: python3 course.py build {' '.join(stale)}"
    )


def test_build_inputs_are_the_same_in_a_crlf_checkout(tmp_path, monkeypatch):
    lf = maintain.build_inputs("05")
    # POSIX keys (as_posix): this line can fail only on Windows, where str(Path) has backslashes
    assert lf and all(key.startswith("helpers/lessons/") and "\\" not in key for key in lf), lf
    modules = dict(maintain.helpers_modules())
    for module, path in modules.items():  # every lesson module copied with CRLF line ends (git autocrlf)
        if module.startswith("helpers.lessons."):
            copy = tmp_path / path.relative_to(maintain.ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
            modules[module] = copy
    monkeypatch.setattr(maintain, "helpers_modules", lambda: modules)
    monkeypatch.setattr(maintain, "ROOT", tmp_path)
    assert maintain.build_inputs("05") == lf


def test_stale_notebooks_are_those_built_from_other_lesson_code(tmp_path, monkeypatch):
    monkeypatch.setattr(maintain, "NOTEBOOKS", tmp_path)
    for number in maintain.sources():
        nb = nbformat.v4.new_notebook()
        nb.metadata[maintain.BUILD_KEY] = {"inputs": maintain.build_inputs(number)}
        nbformat.write(nb, maintain.notebook_path(number))
    assert maintain.stale_notebooks() == {}
    assert set(maintain.build_inputs("05")) == {
        "helpers/lessons/query_key_value.py",
        "helpers/lessons/temperature.py",
        "helpers/lessons/weighted_average.py",
    }
    path = maintain.notebook_path("05")
    nb = nbformat.read(path, as_version=4)
    nb.metadata[maintain.BUILD_KEY]["inputs"]["helpers/lessons/weighted_average.py"] = "0" * 16
    nbformat.write(nb, path)
    assert maintain.stale_notebooks() == {"05": ["helpers/lessons/weighted_average.py"]}
    maintain.notebook_path("03").unlink()
    assert maintain.stale_notebooks()["03"] == ["(not built)"]


def test_contributing_shows_the_current_tests_map():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    shown = text.split("<!-- tests-map -->\n", 1)[1].split("\n<!-- /tests-map -->", 1)[0]
    assert shown == maintain.tests_map(), "the notebook -> tests map changed: paste `python3 tools/maintain.py map`"


def test_a_timing_keeps_its_stored_output_while_its_source_is_unchanged(tmp_path):
    def notebook(timing: str, source: str = "time_it()") -> nbformat.NotebookNode:
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(source, id="c000", metadata={"tags": ["nbval-ignore-output"]})
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=timing)]
        plain = nbformat.v4.new_code_cell("1", id="c001")
        plain.outputs = [nbformat.v4.new_output("stream", name="stdout", text=timing)]
        nb.cells = [cell, plain]
        return nb

    target = tmp_path / "08_demo.ipynb"
    nbformat.write(notebook("0.24 ms\n"), target)
    new = notebook("3.10 ms\n")
    assert build_notebooks.keep_stored_timings(new, target) == 1
    assert new.cells[0].outputs[0].text == "0.24 ms\n" and new.cells[1].outputs[0].text == "3.10 ms\n"
    changed = notebook("3.10 ms\n", source="time_it(n=2)")
    assert build_notebooks.keep_stored_timings(changed, target) == 0, "a changed cell stores its new timing"
