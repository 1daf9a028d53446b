"""One implementation per algorithm: unique saved names, and no notebook uses code from a later one."""

import ast
from pathlib import Path

import pytest

from tools import build_notebooks

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "notebooks" / "src"
LESSONS = ROOT / "helpers" / "lessons"

# Which notebook saves each lesson module: helpers.lessons.multi_head_attention -> 7.
NOTEBOOK_OF_MODULE = {build_notebooks.module_name(p): int(p.name[:2]) for p in SRC.glob("[0-9][0-9]_*.py")}

# helpers.attention.X counts as defined by the notebook that teaches X's algorithm.
NOTEBOOK_OF_CORE_NAME = {
    "padding_mask": 2,
    "entropy": 5,
    "split_heads": 7,
    "merge_heads": 7,
    "chunked_attention": 8,
    "softmax": 9,
    "scaled_dot_product_attention": 9,
    "MultiHeadAttention": 9,
    "causal_mask": 9,
    "flash_attention": 14,  # bound on first use (module __getattr__): importing the module does not need 14
}
CORE_MODULE = max(v for k, v in NOTEBOOK_OF_CORE_NAME.items() if k != "flash_attention")

# Infrastructure any notebook may import: it teaches no algorithm.
INFRASTRUCTURE = {
    "helpers",
    "helpers.plots",
    "helpers.widgets",
    "helpers.data",
    "helpers.validate",
    "helpers.exercises",
    "helpers.kernels",
}

# Forward references not fixed yet, as (importer, imported) -> why it is still there.
# Shrink this list; never add to it.
ALLOWED_FORWARD: dict[tuple[str, str], str] = {}


def _saved_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def test_saved_public_names_are_unique_across_lesson_modules():
    owner: dict[str, str] = {}
    clashes = []
    for path in sorted(LESSONS.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for name in sorted(_saved_names(path)):
            if name in owner:
                clashes.append(f"{name}: {owner[name]} and {path.stem}")
            owner.setdefault(name, path.stem)
    assert not clashes, "a saved public name exists twice (rename one, update its users): " + "; ".join(clashes)


def _helpers_imports(tree: ast.AST):
    """Yield (module, name or None, line) for every helpers import anywhere in the tree (functions included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "helpers":
            for alias in node.names:
                if node.module == "helpers" and alias.name in ("setup", "seed_everything"):
                    yield "helpers", alias.name, node.lineno
                elif node.module in ("helpers", "helpers.lessons"):  # a whole module
                    yield f"{node.module}.{alias.name}", None, node.lineno
                else:
                    yield node.module, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "helpers":
                    yield alias.name, None, node.lineno


def _defined_by(module: str, name: str | None) -> int | None:
    """Notebook number that defines what `from module import name` brings in; None for infrastructure."""
    if module in INFRASTRUCTURE or module.startswith("helpers.exercises."):
        return None
    if module.startswith("helpers.lessons."):
        return NOTEBOOK_OF_MODULE[module.split(".")[2]]
    if module == "helpers.attention":
        return NOTEBOOK_OF_CORE_NAME.get(name, CORE_MODULE)
    raise AssertionError(f"unknown helpers module {module}: add it to the structure test")


def _forward_references(label: str, number: int, text: str) -> list[str]:
    found = []
    for module, name, line in _helpers_imports(ast.parse(text)):
        defined = _defined_by(module, name)
        key = f"{module}.{name}" if module == "helpers.attention" and name else module
        if defined is not None and defined > number and (label, key) not in ALLOWED_FORWARD:
            found.append(f"{label}:{line} imports {key} (defined in notebook {defined:02d})")
    return found


def _sources():
    return sorted(SRC.glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("source", _sources(), ids=lambda p: p.stem)
def test_a_notebook_imports_only_what_it_or_an_earlier_notebook_saved(source):
    text = source.read_text(encoding="utf-8")
    bad = _forward_references(source.stem, int(source.name[:2]), text)
    assert not bad, "forward reference (compare with PyTorch instead, or import the earlier lesson): " + "; ".join(bad)


@pytest.mark.parametrize("path", sorted(build_notebooks.generated_modules()), ids=lambda p: p.stem)
def test_a_lesson_module_imports_only_earlier_lessons(path):
    number = NOTEBOOK_OF_MODULE[path.stem]
    label = next(s.stem for s in _sources() if int(s.name[:2]) == number)
    bad = _forward_references(label, number, path.read_text(encoding="utf-8"))
    assert not bad, "a lesson module uses a later notebook's code: " + "; ".join(bad)


def test_the_structure_test_can_fail():
    assert _forward_references("01_weighted_average", 1, "from helpers.lessons.masks import pad_batch\n")
    assert _forward_references("02_seq2seq_attention", 2, "from helpers.attention import softmax\n")
    assert _forward_references("03_query_key_value", 3, "def f():\n    import helpers.attention\n")
    assert not _forward_references("09_masks", 9, "from helpers.lessons.weighted_average import softmax\n")
    assert not _forward_references("01_weighted_average", 1, "from helpers.plots import attention_heatmap\n")
    assert not _forward_references("02_seq2seq_attention", 2, "from helpers.attention import padding_mask\n")
    for importer, key in ALLOWED_FORWARD:  # each allowed entry is still needed
        source = SRC / f"{importer}.py"
        keys = {
            f"{m}.{n}" if m == "helpers.attention" and n else m
            for m, n, _ in _helpers_imports(ast.parse(source.read_text(encoding="utf-8")))
        }
        assert key in keys, f"{importer} no longer imports {key}: remove it from ALLOWED_FORWARD"


def test_importing_every_lesson_module_does_not_import_ipywidgets(fresh_imports):
    assert "ipywidgets" not in fresh_imports["lessons"], (
        "a saved cell imports ipywidgets at module level: import it inside the explorer"
    )


def test_helpers_attention_only_checks_and_delegates_to_lesson_code():
    import inspect

    import helpers.attention as core

    for name in core.__all__:
        obj = getattr(core, name)
        if inspect.isclass(obj):
            taught = [c for c in obj.__mro__[1:] if c.__module__.startswith("helpers.lessons.")]
            assert taught, f"helpers.attention.{name} must subclass a lesson class"
        else:
            taught = getattr(obj, "__wrapped__", None)
            assert taught is not None and taught.__module__.startswith("helpers.lessons."), (
                f"helpers.attention.{name} must be a lesson function behind validate.checked"
            )
    # Bound, not redefined: no exported name is a def or class of its own anywhere in hand-written helpers/.
    for path in sorted((ROOT / "helpers").glob("*.py")):
        defined = {
            node.name
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
        }
        assert not defined & set(core.__all__), (
            f"helpers/{path.name} defines {sorted(defined & set(core.__all__))} a second time: bind the lesson code "
            "with validate.checked / validate.checked_module instead"
        )
    # No algorithm left: the module computes no softmax, exponent or matrix product of its own
    # (the one q·k below is the overflow check, run only for huge inputs).
    text = Path(core.__file__).read_text(encoding="utf-8")
    for forbidden in ("torch.exp(", "torch.softmax(", ".softmax(", "F.dropout(", "transpose(1, 2)", "masked_fill("):
        assert forbidden not in text, f"helpers/attention.py computes {forbidden}: call the lesson code instead"
    assert text.count(" @ ") <= 1


@pytest.mark.parametrize("path", sorted(build_notebooks.generated_modules()), ids=lambda p: p.stem)
def test_a_lesson_module_does_not_import_the_checked_boundary(path):
    # helpers.attention imports the lessons; a lesson importing it back would be a cycle.
    modules = {m for m, _, _ in _helpers_imports(ast.parse(path.read_text(encoding="utf-8")))}
    assert "helpers.attention" not in modules, f"{path.name} imports helpers.attention: import the lesson module"


MAINTAINER_CODE = sorted(
    p for folder in ("helpers", "tests", "tools", "scripts") for p in (ROOT / folder).rglob("*.py")
) + [ROOT / "course.py"]


@pytest.mark.parametrize("path", MAINTAINER_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sys_path_edits_and_tools_never_import_tests(path):
    """The package is installed with `-e .` and course.py sets PYTHONPATH: nothing edits sys.path,
    and tools/ (run without pytest) imports nothing from tests/."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
            raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno} touches sys.path")
        if path.parent.name == "tools" and isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            assert not any(n == "tests" or n.startswith("tests.") for n in names), (
                f"{path.relative_to(ROOT)}:{node.lineno} imports from tests/"
            )
