"""Show, then save: helpers/lessons/ is exactly what the notebooks' "save" cells say."""

import ast
import importlib
from pathlib import Path

import pytest

from tools import build_notebooks

ROOT = Path(__file__).resolve().parents[1]

GENERATED = build_notebooks.generated_modules()


def test_generated_modules_match_their_notebooks():
    on_disk = {p for p in (ROOT / "helpers" / "lessons").glob("*.py") if p.name != "__init__.py"}
    assert on_disk == set(GENERATED), (
        f"helpers/lessons/ has {sorted(p.name for p in on_disk)}, the sources save {sorted(p.name for p in GENERATED)}: "
        "run `python3 course.py build --generate`"
    )


@pytest.mark.parametrize("path", sorted(GENERATED), ids=lambda p: p.stem)
def test_generated_module_matches_its_notebook_source(path):
    assert path.exists() and path.read_text(encoding="utf-8") == GENERATED[path], (
        f"{path.name} drifted from its notebook source: edit notebooks/src, then `python3 course.py build --generate`"
    )


@pytest.mark.parametrize("path", sorted(GENERATED), ids=lambda p: p.stem)
def test_generated_module_imports_and_says_where_it_comes_from(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith('"""Generated from notebooks/src/')
    ast.parse(text)
    importlib.import_module(f"helpers.lessons.{path.stem}")


def test_a_saved_cell_with_a_statement_is_refused(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "99_demo.py").write_text('# %% tags=["save"]\ndef f(x):\n    return x\n\nprint(f(1))\n', encoding="utf-8")
    monkeypatch.setattr(build_notebooks, "SRC", src)
    with pytest.raises(ValueError, match="only imports, functions, classes and constants"):
        build_notebooks.generated_modules()


def test_saved_cells_are_copied_verbatim_with_imports_first(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "98_demo.py").write_text(
        '# %% tags=["save"]\nimport torch\n\n\ndef double(x):  # (B, T)\n    return 2 * x\n\n'
        "# %%\nprint(double(torch.ones(1)))\n\n"
        '# %% tags=["save"]\nimport torch\nTAU = 0.5\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(build_notebooks, "SRC", src)
    ((path, text),) = build_notebooks.generated_modules().items()
    assert path.name == "demo.py"
    body = text.split('"""', 2)[2]
    assert body.count("import torch") == 1 and body.index("import torch") < body.index("def double")
    assert "def double(x):  # (B, T)\n    return 2 * x" in text and "TAU = 0.5" in text and "print(" not in text


def test_imports_of_saved_cells_become_one_sorted_block(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "97_demo.py").write_text(
        '# %% tags=["save"]\nimport torch\nfrom helpers.plots import to_numpy\nimport math\n\n\ndef f(x):\n    return x\n\n'
        '# %% tags=["save"]\nfrom __future__ import annotations\nimport numpy as np\nfrom helpers.plots import COLORS, Panel, attention_heatmap\n'
        "import torch.nn.functional as F\nfrom collections import Counter\n\n\ndef g(x):\n    return x\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(build_notebooks, "SRC", src)
    ((_, text),) = build_notebooks.generated_modules().items()
    block = text.split('"""', 2)[2].split("\n\n\ndef f")[0].strip("\n")
    assert block == (
        "from __future__ import annotations\n\n"
        "import math\nfrom collections import Counter\n\n"
        "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n"
        "from helpers.plots import COLORS, Panel, attention_heatmap, to_numpy"
    )


def test_learner_code_carries_no_noqa():
    """The build sorts the imports it joins, so no source needs a linter comment the learner would read."""
    for path in sorted((ROOT / "notebooks" / "src").glob("*.py")):
        assert "noqa" not in path.read_text(encoding="utf-8"), f"{path.name}: a noqa comment in learner code"
