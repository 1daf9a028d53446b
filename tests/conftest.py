"""Shared test set-up: a headless matplotlib with the course's Korean font, and `--nb NN`, the selection of
one notebook's tests (`python3 course.py test NN` passes it; tools/maintain.py says which items are whose)."""

import os
from pathlib import Path

import matplotlib
import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--nb",
        action="append",
        default=[],
        metavar="NN",
        help="keep only the tests of notebook NN (repeatable): its nbval cells, its contract, deck and browser "
        "items, and the unit test modules of the code it saves or imports (tools/maintain.py)",
    )
    parser.addoption(
        "--sweep",
        action="store_true",
        default=False,
        help="the browser sweeps: every notebook in JupyterLab, every deck slide, every page of the built site "
        "(`python3 course.py test --sweep`, run by .ci/run); without it the browser tests check a sample",
    )


# Explorers built under test refuse a text outside their canvas (helpers.widgets; course.py test sets it
# for the notebook passes too, whose kernels inherit it).
os.environ.setdefault("COURSE_CHECK_FIGURES", "1")


def pytest_configure(config):
    config.addinivalue_line("markers", "notebook(*numbers): the notebooks a test module, class or test is about ('03')")
    config.addinivalue_line(
        "markers",
        "each_selected_notebook: the test covers every selected notebook (all of them without --nb), "
        "so `--nb NN` keeps it and it narrows itself with selected_notebooks()",
    )
    config.addinivalue_line(
        "markers",
        "sweep: a browser check repeated over every notebook, deck or page; runs with --sweep (course.py test "
        "--sweep, .ci/run) and in `course.py test NN` for NN, not in the plain `course.py test`, which checks a sample",
    )
    # Agg before anything imports pyplot, so no test ever needs a display.
    matplotlib.use("Agg")
    from helpers.plots import use_korean_font

    use_korean_font()


def selected_numbers(config) -> list[str]:
    """The notebooks `--nb` selects ([] = all)."""
    return sorted({n for value in config.getoption("nb") for n in value.replace(",", " ").split()})


def _own_notebook_markers(item) -> list[str]:
    """`notebook` markers on the test function or its class (a module's pytestmark says what the module is
    about, which the plan already used to pick the module)."""
    marks = list(item.own_markers) + list(getattr(item.cls, "pytestmark", []) if item.cls else [])
    return [str(a) for m in marks if m.name == "notebook" for a in m.args]


def sampling(config) -> bool:
    """True in the plain run: browser fixtures open a sample of the decks and pages (the sweep opens all, a
    `--nb NN` run those of NN)."""
    return not config.getoption("sweep") and not selected_numbers(config)


def pytest_collection_modifyitems(config, items):
    numbers = set(selected_numbers(config))
    if sampling(config):
        swept = [item for item in items if item.get_closest_marker("sweep")]
        if swept:
            config.hook.pytest_deselected(items=swept)
            items[:] = [item for item in items if not item.get_closest_marker("sweep")]
    if not numbers:
        return
    from tools import maintain

    plan = maintain.plan(sorted(numbers))
    units = {p.resolve() for p in plan.units}
    planned = units | {p.resolve() for p in plan.notebooks + plan.contract + plan.browser}
    # A file named on the command line that the plan does not hold (`course.py test 03 tests/test_masks.py`,
    # or notebooks/05_*.ipynb) runs whole.
    named = {(Path(config.invocation_params.dir) / a.split("::")[0]).resolve() for a in config.args}
    kept, dropped = [], []
    for item in items:
        path = Path(str(item.path)).resolve()
        if path in named and path not in planned:
            keep = True
        elif path.suffix == ".ipynb":
            keep = maintain.number_of(path.name) in numbers
        elif item.get_closest_marker("each_selected_notebook"):
            keep = True
        else:
            params = getattr(getattr(item, "callspec", None), "params", {})
            about = maintain.item_notebooks(params, item.cls, _own_notebook_markers(item))
            keep = bool(about & numbers) if about is not None else path in units
        (kept if keep else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def sample_run(request) -> bool:
    """See sampling(): the plain `course.py test` run, whose browser tests check a sample."""
    return sampling(request.config)


@pytest.fixture(scope="session")
def selected_notebooks(request) -> list[str]:
    """The two-digit numbers `--nb` selects ([] = every notebook)."""
    return selected_numbers(request.config)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (tests/test_slides.py, test_site.py; each test opens its own page or
    context): a launch costs about 2 s of CPU. Closed when the module ends: Playwright's sync API runs one at a
    time, and tests/test_browser.py starts its own (its `browser` fixture, beside its JupyterLab)."""
    from tools.browser_support import chromium

    with chromium() as b:
        yield b


# Run in a fresh interpreter by `fresh_imports`: which of these modules `import helpers, helpers.attention`
# brings in, then which importing every lesson module (helpers/lessons/*.py) brings in.
_FRESH_IMPORTS = r"""
import importlib, json, pathlib, sys
watched = ("triton", "ipywidgets")
import helpers, helpers.attention
facts = {"helpers": [m for m in watched if m in sys.modules]}
for path in sorted(pathlib.Path("helpers/lessons").glob("[a-z]*.py")):
    importlib.import_module(f"helpers.lessons.{path.stem}")
facts["lessons"] = [m for m in watched if m in sys.modules]
print(json.dumps(facts))
"""


@pytest.fixture(scope="session")
def fresh_imports() -> dict[str, list[str]]:
    """What a new Python imports with the course's modules: {"helpers": [...], "lessons": [...]} among triton and
    ipywidgets (tests/test_flash_gpu.py, test_structure.py). One interpreter for both: each costs 3-5 s of CPU."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", _FRESH_IMPORTS],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)
