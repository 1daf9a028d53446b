"""The maintainer's map of the course: which notebook, lesson module and test reaches which, read from the imports.

    python3 course.py affected FILE ...   the notebooks and tests a change to these files reaches
    python3 course.py test 03 [--fast]    notebook 03's checks only (course.py asks `plan` what to run)
    python3 tools/maintain.py map         every notebook's tests (the table in CONTRIBUTING.md)

Everything here is derived from the sources with `ast`, never from a hand list:

- a notebook NN *saves* the lesson module ``helpers.lessons.<topic>`` (its file name without the number)
  and *uses* the helpers modules its source ``notebooks/src/NN_*.py`` imports;
- a test module is *about* the notebooks named by its ``pytestmark = pytest.mark.notebook("NN")``
  (unit tests of a lesson module are tagged with the notebook that saves it); ``tests/conftest.py`` reads
  the same marker, and the per-notebook parameters of the contract tests, to select items exactly;
- ``affected`` follows imports transitively (a lesson module, a hand-written helper, a checker) and
  ignores the package ``helpers/__init__.py``'s own imports, which every module loads anyway.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "notebooks" / "src"
NOTEBOOKS = ROOT / "notebooks"
HELPERS = ROOT / "helpers"
LESSONS = HELPERS / "lessons"
TESTS = ROOT / "tests"
SCRIPTS = ROOT / "scripts"

# Test modules whose items carry their notebook per item (a parameter naming the notebook, a Test_NN class
# or a function marker): they are collected for every notebook and conftest keeps that notebook's items.
CONTRACT = (
    "test_notebooks.py",
    "test_sources.py",
    "test_structure.py",
    "test_generated.py",
)
# Decks, handouts, the site and JupyterLab in a browser: per-notebook items too, but they compute no numbers,
# so `course.py test NN` runs them beside the portable nbval pass (as the full run does with the decks).
BROWSER = ("test_slides.py", "test_handout.py", "test_site.py", "test_browser.py")
# Test modules about no notebook (the widget machinery, Binder, this map, the lock): run by the full suite only.
GENERAL = (
    "test_widgets.py",
    "test_explorer_picture.py",
    "test_bench_sliders.py",
    "test_binder.py",
    "test_maintain.py",
    "test_lock.py",
    "test_kernel_zygote.py",
)

NUMBER = re.compile(r"^(\d\d)(?:_|$)")
CHECK_ID = re.compile(r"""\bcheck\(\s*["'](\d\d)-\d""")


def number_of(name: str) -> str | None:
    """'03_query_key_value.ipynb' / '03' -> '03'; anything else -> None."""
    match = NUMBER.match(Path(name).name)
    return match.group(1) if match else None


@functools.cache
def sources() -> dict[str, Path]:
    """{'01': notebooks/src/01_weighted_average.py, ...}"""
    return {p.name[:2]: p for p in sorted(SRC.glob("[0-9][0-9]_*.py"))}


def notebook_path(number: str) -> Path:
    return NOTEBOOKS / f"{sources()[number].stem}.ipynb"


def saved_module(number: str) -> str:
    """The lesson module a notebook's save cells become (whether or not it saves any)."""
    return "helpers.lessons." + sources()[number].stem.split("_", 1)[1]


@functools.cache
def owner_of_module() -> dict[str, str]:
    """{'helpers.lessons.query_key_value': '03', 'helpers.exercises.ex03': '03', ...}"""
    owners = {saved_module(n): n for n in sources()}
    owners.update({f"helpers.exercises.ex{n}": n for n in sources()})
    return owners


# --------------------------------------------------------------------------- imports


def module_name(path: Path) -> str | None:
    """helpers/lessons/masks.py -> 'helpers.lessons.masks'; helpers/__init__.py -> 'helpers'; else None."""
    rel = path.resolve().relative_to(ROOT)
    if rel.parts[0] != "helpers" or rel.suffix != ".py":
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def helpers_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(HELPERS.rglob("*.py"))}


def _resolve(module: str, name: str | None) -> str:
    """`from module import name`: the submodule if `name` is one, else `module`."""
    if name and f"{module}.{name}" in helpers_modules():
        return f"{module}.{name}"
    return module


@functools.cache
def imports_of(path: Path) -> frozenset[str]:
    """The helpers modules a file imports anywhere (functions included): 'helpers.lessons.masks', ...
    Importing a submodule also counts as importing its packages (Python runs their __init__ first)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path) if path.resolve().is_relative_to(HELPERS) else None
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level and here:  # from . import attention (inside helpers/)
                package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    package = package.rsplit(".", 1)[0]
                base = f"{package}.{node.module}" if node.module else package
            else:
                base = node.module or ""
            if base.split(".")[0] != "helpers":
                continue
            found.update(_resolve(base, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "helpers")
    for module in list(found):
        parts = module.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    found.discard(here)
    return frozenset(m for m in found if m in helpers_modules())


def check_ids_in(path: Path) -> frozenset[str]:
    """Notebook numbers of the exercises a file checks: check("03-1", ...) -> '03'."""
    return frozenset(CHECK_ID.findall(path.read_text(encoding="utf-8")))


def _marker_numbers(tree: ast.Module) -> set[str]:
    """The numbers in a module-level `pytestmark = pytest.mark.notebook("03", ...)` (or a list of marks)."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            for call in ast.walk(node.value):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "notebook":
                    found.update(a.value for a in call.args if isinstance(a, ast.Constant))
    return found


@functools.cache
def test_modules() -> dict[Path, frozenset[str]]:
    """{tests/test_qkv.py: {'03'}, ...}: every test module and the notebooks its pytestmark names."""
    return {
        p: frozenset(_marker_numbers(ast.parse(p.read_text(encoding="utf-8")))) for p in sorted(TESTS.glob("test_*.py"))
    }


def unit_modules() -> dict[Path, frozenset[str]]:
    """The test modules about some notebook's code (neither contract, browser nor general)."""
    skip = set(CONTRACT) | set(BROWSER) | set(GENERAL)
    return {p: tags for p, tags in test_modules().items() if p.name not in skip}


# --------------------------------------------------------------------------- one notebook


def boundary_notebook() -> str:
    """The notebook whose code the checked boundary helpers.attention binds last (09: masked_attention,
    MaskedMultiHeadAttention): the latest lesson module it imports at load time (14's, bound on first use,
    is not one). Its tests (test_attention, test_mha_reference) are tagged with it."""
    tree = ast.parse(helpers_modules()["helpers.attention"].read_text(encoding="utf-8"))
    names = [
        f"helpers.lessons.{alias.name}"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("lessons")
        for alias in node.names
    ]
    return max(owner_of_module()[n] for n in names)


def lesson_notebooks_used(number: str) -> set[str]:
    """The notebooks whose code notebook NN saves or imports: its own, the owner of every lesson module its
    source imports, and for the checked boundary helpers.attention the notebook it wraps (boundary_notebook)."""
    owners = owner_of_module()
    used = {number}
    for module in imports_of(sources()[number]):
        if module.startswith("helpers.lessons."):
            used.add(owners[module])
        elif module == "helpers.attention":
            used.add(boundary_notebook())
    return used


@dataclass
class Plan:
    """What `course.py test NN ...` runs: nbval of `notebooks`, the unit modules, and the contract and browser
    modules (conftest keeps only the selected notebooks' items of those, given `--nb`)."""

    numbers: list[str]
    notebooks: list[Path] = field(default_factory=list)
    units: list[Path] = field(default_factory=list)
    contract: list[Path] = field(default_factory=list)
    browser: list[Path] = field(default_factory=list)


def units_for(numbers: list[str]) -> list[Path]:
    """Unit test modules of these notebooks: those tagged with a notebook whose code it saves or imports,
    and those that check its exercises."""
    wanted = set().union(*(lesson_notebooks_used(n) for n in numbers))
    return [path for path, tags in unit_modules().items() if tags & wanted or check_ids_in(path) & set(numbers)]


def plan(numbers: list[str]) -> Plan:
    unknown = [n for n in numbers if n not in sources()]
    if unknown:
        raise ValueError(f"no notebook numbered {', '.join(unknown)} (there are {min(sources())}–{max(sources())})")
    numbers = sorted(set(numbers))
    return Plan(
        numbers=numbers,
        notebooks=[notebook_path(n) for n in numbers],
        units=units_for(numbers),
        contract=[TESTS / name for name in CONTRACT],
        browser=[TESTS / name for name in BROWSER],
    )


def item_notebooks(params: dict, cls: type | None, marker_args: list[str]) -> set[str] | None:
    """The notebooks one collected test item is about, from its per-notebook parameters (a notebook path or
    stem, a lesson module path, a two-digit number), its class's `notebook` and its `notebook` markers;
    None when it is about no particular notebook (a check over all of them, or a plain unit test)."""
    found: set[str] = set(marker_args)
    values = list(params.values()) + ([getattr(cls, "notebook", None)] if cls is not None else [])
    for value in values:
        if isinstance(value, Path):
            try:
                rel = value.resolve().relative_to(ROOT)
            except ValueError:
                continue
            if rel.parts[:1] == ("notebooks",) and number_of(value.name):
                found.add(number_of(value.name))
            elif rel.parts[:2] == ("helpers", "lessons"):
                owner = owner_of_module().get(module_name(value))
                if owner:
                    found.add(owner)
        elif isinstance(value, str) and number_of(value) and number_of(value) in sources():
            found.add(number_of(value))
    return found or None


# --------------------------------------------------------------------------- course.py test ARGS

# pytest options whose value is the next argument: `-k 03` is a keyword expression, not notebook 03.
VALUE_OPTIONS = {
    "-k", "-m", "-n", "-p", "-o", "-W", "-c", "-r", "--deselect", "--ignore", "--ignore-glob", "--maxfail",
    "--dist", "--tb", "--rootdir", "--durations", "--durations-min", "--basetemp", "--junitxml", "--junit-xml",
    "--nbval-cell-timeout", "--nbval-sanitize-with", "--log-level", "--confcutdir", "--override-ini",
    "--import-mode", "--capture", "--color", "--numprocesses", "--maxprocesses", "--timeout",
}  # fmt: skip


@dataclass
class TestRequest:
    numbers: list[str] = field(default_factory=list)  # `03`, `--nb 03`: all of notebook 03's checks
    notebook_paths: list[Path] = field(default_factory=list)  # notebooks/03_*.ipynb: its nbval only
    test_paths: list[str] = field(default_factory=list)  # tests/test_qkv.py[::name]: native pass only
    fast: bool = False  # --fast: strict nbval in the native set-up only
    pytest_args: list[str] = field(default_factory=list)  # everything else, to every pytest run

    @property
    def narrowed(self) -> bool:
        return bool(self.numbers or self.notebook_paths or self.test_paths)


def parse_test_args(args: list[str]) -> TestRequest:
    """Split `course.py test` ARGS into notebook numbers, notebook and test paths, --fast and pytest's own."""
    req = TestRequest()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--fast":
            req.fast = True
        elif arg == "--nb" or arg.startswith("--nb="):
            if arg == "--nb":
                i += 1
                if i == len(args):
                    raise ValueError("--nb needs a notebook number, e.g. --nb 03")
                value = args[i]
            else:
                value = arg.split("=", 1)[1]
            req.numbers += [_number(v) for v in value.replace(",", " ").split()]
        elif arg in VALUE_OPTIONS:
            req.pytest_args += args[i : i + 2]
            i += 1
        elif arg.startswith("-"):
            req.pytest_args.append(arg)
        elif re.fullmatch(r"\d{1,2}", arg):
            req.numbers.append(_number(arg))
        else:
            path = (ROOT / arg.split("::")[0]).resolve()
            if not path.exists():
                raise ValueError(f"{arg}: neither a notebook number (03), a path nor a pytest option")
            rel = path.relative_to(ROOT)
            if path.suffix == ".ipynb" or (rel.parts[:1] == ("notebooks",) and path.is_dir()):
                req.notebook_paths += [path] if path.is_file() else sorted(path.glob("[0-9][0-9]_*.ipynb"))
            elif rel.parts[:2] == ("notebooks", "src") and number_of(path.name):
                req.notebook_paths.append(notebook_path(number_of(path.name)))
            else:
                req.test_paths.append(arg)
        i += 1
    req.numbers = sorted(set(req.numbers))
    return req


def _number(text: str) -> str:
    number = text.zfill(2)
    if number not in sources():
        raise ValueError(f"no notebook numbered {text} (there are {min(sources())}–{max(sources())})")
    return number


def narrowed_steps(req: TestRequest, nbval: list[str], sequential: bool) -> list[tuple[str, list[str], str, bool]]:
    """The pytest runs of a narrowed `course.py test`: [(title, pytest args, set-up, in the background)], set-up
    "native" (1 thread), "portable" (PORTABLE_SETUP) or "plain". The native run holds the notebooks' nbval, the
    unit and contract tests and the named test files; beside it (on the other core) run the portable nbval
    and the deck, handout, site and browser items, which compute no numbers (native with --fast)."""
    p = plan(req.numbers) if req.numbers else Plan(numbers=[])
    notebooks = sorted(set(p.notebooks) | set(req.notebook_paths))
    nb_opts = [f"--nb={n}" for n in req.numbers]
    rel = [_rel(x) for x in notebooks]
    native = rel + [_rel(x) for x in p.units + p.contract] + req.test_paths
    side = [_rel(x) for x in p.browser]
    label = " ".join(req.numbers + [x.name[:2] for x in req.notebook_paths] + req.test_paths)
    steps = [(f"{label}: native CPU, 1 thread", [*native, *nb_opts, *nbval, *req.pytest_args], "native", False)]
    if req.fast or not notebooks:
        if side:
            steps.append(
                (f"{label}: decks, handout, site, browser", [*side, *nb_opts, *req.pytest_args], "plain", True)
            )
    else:
        extra = " (+ decks, handout, site, browser)" if side else ""
        steps.append(
            (
                f"{label}: nbval again, scalar kernels + SSE4 BLAS, 2 threads{extra}",
                [*rel, *side, *nb_opts, *nbval, *req.pytest_args],
                "portable",
                True,
            )
        )
    if sequential:
        steps = [(title, args, env, False) for title, args, env, _ in steps]
    return steps


# --------------------------------------------------------------------------- affected


def _python_files() -> list[Path]:
    return (
        sorted(HELPERS.rglob("*.py"))
        + sorted(SRC.glob("[0-9][0-9]_*.py"))
        + sorted(TESTS.glob("*.py"))
        + sorted(SCRIPTS.glob("*.py"))
    )


def importers(module: str) -> set[Path]:
    """Every file that imports `module`, directly or through other helpers modules (not through the package
    __init__'s own imports: `import helpers` loads helpers.attention, but a file using only helpers.plots does
    not depend on it)."""
    reached: set[str] = {module}
    files: set[Path] = set()
    changed = True
    while changed:
        changed = False
        for path in _python_files():
            name = module_name(path) if path.resolve().is_relative_to(HELPERS) else None
            if path in files or name == "helpers":
                continue
            if imports_of(path) & reached:
                files.add(path)
                if name and name not in reached:
                    reached.add(name)
                    changed = True
    return files


@dataclass
class Reach:
    notebooks: set[str] = field(default_factory=set)  # their .ipynb must be rebuilt / re-checked
    tests: set[Path] = field(default_factory=set)
    scripts: set[Path] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)  # helpers modules reached
    notes: list[str] = field(default_factory=list)


def affected(paths: list[str]) -> Reach:
    """The notebooks, tests and scripts a change to these files reaches."""
    reach = Reach()
    for raw in paths:
        path = (ROOT / raw).resolve() if not Path(raw).is_absolute() else Path(raw).resolve()
        try:
            rel = path.relative_to(ROOT)
        except ValueError:
            reach.notes.append(f"{raw}: outside the repository")
            continue
        modules: list[str] = []
        number = number_of(path.name)
        if rel.parts[:2] == ("notebooks", "src") and number in sources():
            reach.notebooks.add(number)
            modules.append(saved_module(number))
            modules.append(f"helpers.exercises.ex{number}")  # its checkers belong with it (no import needed)
        elif rel.parts[:1] == ("notebooks",) and rel.suffix == ".ipynb" and number in sources():
            reach.notebooks.add(number)
            reach.notes.append(f"{rel}: generated; edit notebooks/src/{sources()[number].name} and rebuild")
        elif rel.parts[:1] == ("helpers",) and rel.suffix == ".py":
            name = module_name(path)
            modules.append(name)
            owner = owner_of_module().get(name)
            if owner:
                reach.notebooks.add(owner)
            if name == "helpers":
                reach.notes.append("helpers/__init__.py: every notebook, test and script imports it")
                reach.notebooks.update(sources())
        elif rel.parts[:1] == ("tests",):
            reach.tests.add(path)
        elif rel.parts[:1] == ("scripts",):
            reach.scripts.add(path)
        else:
            reach.notes.append(f"{rel}: not a notebook, helper, test or script (run the full `course.py test`)")
        for module in modules:
            if module not in helpers_modules():
                continue
            reach.modules.add(module)
            for user in importers(module):
                user_rel = user.relative_to(ROOT)
                if user_rel.parts[:2] == ("notebooks", "src"):
                    reach.notebooks.add(user.name[:2])
                elif user_rel.parts[0] == "tests" and user.name.startswith("test_"):
                    reach.tests.add(user)
                elif user.name == "conftest.py":
                    reach.notes.append(f"tests/conftest.py imports {module}: every test loads it")
                elif user_rel.parts[0] == "scripts":
                    reach.scripts.add(user)
                elif module_name(user):
                    reach.modules.add(module_name(user))
    # The tests about each notebook reached (its unit tests, and checker tests that need no import).
    for number in reach.notebooks:
        reach.tests.update(p for p, tags in unit_modules().items() if number in tags or number in check_ids_in(p))
    return reach


# --------------------------------------------------------------------------- stale notebooks

BUILD_KEY = "course"  # notebook metadata: {"course": {"inputs": {"helpers/lessons/x.py": "<sha256[:16]>"}}}


def build_inputs(number: str) -> dict[str, str]:
    """The generated lesson modules a notebook's run reads (the ones its source imports, transitively through
    lesson modules, and its own saved module), each with a hash of its text: stored in the notebook's
    metadata at build time, so `build --generate` can say which notebooks no longer match their inputs."""
    import hashlib

    wanted = {m for m in imports_of(sources()[number]) if m.startswith("helpers.lessons.") and m != "helpers.lessons"}
    if saved_module(number) in helpers_modules():
        wanted.add(saved_module(number))
    pending = list(wanted)
    while pending:
        for module in imports_of(helpers_modules()[pending.pop()]):
            if module.startswith("helpers.lessons.") and module not in wanted:
                wanted.add(module)
                pending.append(module)
    out = {}
    for module in sorted(wanted):
        path = helpers_modules()[module]
        text = path.read_bytes().replace(b"\r\n", b"\n")  # the same hash in a checkout with CRLF line ends
        out[path.relative_to(ROOT).as_posix()] = hashlib.sha256(text).hexdigest()[:16]  # one key on every OS
    return out


def stale_notebooks() -> dict[str, list[str]]:
    """{number: [changed inputs]} for each built notebook whose lesson-module inputs changed since its build
    (a notebook built before the hashes were stored counts as stale for every input)."""
    import json

    helpers_modules.cache_clear()
    stale = {}
    for number in sources():
        path = notebook_path(number)
        if not path.exists():
            stale[number] = ["(not built)"]
            continue
        stored = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(BUILD_KEY, {}).get("inputs")
        now = build_inputs(number)
        if stored is None:
            stale[number] = ["(built before input hashes were stored)"]
            continue
        changed = sorted(k for k in set(now) | set(stored) if now.get(k) != stored.get(k))
        if changed:
            stale[number] = changed
    return stale


# --------------------------------------------------------------------------- command line


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def tests_map() -> str:
    """A markdown table: each notebook, the modules it uses, its unit test modules."""
    rows = ["| notebook | saves | uses code of | unit test modules (`course.py test NN`) |", "|---|---|---|---|"]
    for number, source in sources().items():
        saved = saved_module(number)
        saves = f"`{saved.split('.')[-1]}`" if saved in helpers_modules() else "–"
        used = ", ".join(sorted(lesson_notebooks_used(number) - {number})) or "–"
        units = ", ".join(f"`{p.name}`" for p in units_for([number])) or "–"
        rows.append(f"| {source.stem} | {saves} | {used} | {units} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if argv[:1] == ["map"]:
        print(tests_map())
        return 0
    if argv[:1] == ["stale"]:
        for number, changed in stale_notebooks().items():
            print(f"{number}: {', '.join(changed)}")
        return 0
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python3 course.py affected FILE ...  (files relative to the repository root)")
        return 2
    reach = affected(argv)
    for note in reach.notes:
        print(f"note: {note}")
    numbers = sorted(reach.notebooks)
    print(f"notebooks ({len(numbers)}): {' '.join(numbers) or '-'}")
    if numbers:
        print(f"  rebuild:  python3 course.py build {' '.join(numbers)}")
        print(f"  test:     python3 course.py test {' '.join(numbers)}")
    print(f"tests ({len(reach.tests)}):")
    for path in sorted(reach.tests):
        print(f"  {_rel(path)}")
    if reach.scripts:
        print(f"scripts ({len(reach.scripts)}): {' '.join(_rel(p) for p in sorted(reach.scripts))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
