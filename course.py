#!/usr/bin/env python3
"""The course's entry point: set-up on first use, then JupyterLab, tests or notebook builds.

    python3 course.py lab            open the course in JupyterLab
    python3 course.py test [ARGS]    run every test, the browser checks on a sample (ARGS go to pytest)
    python3 course.py test --sweep   the browser checks on everything: every notebook in JupyterLab, every
                                      deck slide, every page of the built site (after `course.py site`)
    python3 course.py test 03 [--fast]  only notebook 03's checks (--fast: one numeric set-up); also
                                      `--nb 03`, a notebook path (its nbval) or a test file (native pass)
    python3 course.py affected FILE ...  the notebooks and tests a change to these files reaches
    python3 course.py build [NN ...] re-execute notebooks from notebooks/src (maintainers)
    python3 course.py build --generate   regenerate helpers/lessons/ from the "save" cells
    python3 course.py slides [NN ...] export offline reveal.js slides to build/slides/
    python3 course.py site [NN ...]   build the static course site in build/site/ (sliders move offline)
    python3 course.py slides-fit [NN ...]  list the slides taller than 960x700 (headless Chromium)
    python3 course.py handout [NN ...]  print A4 PDF handouts to build/handouts/ (headless Chromium)
    python3 course.py bench sliders   time every slider in JupyterLab + headless Chromium
    python3 course.py gpu-bench [--quick]  measure notebook 14's kernels against PyTorch on a CUDA GPU
                                      (data/benchmark_gpu.json); --quick checks the script on a CPU

The first call creates .venv/ with the Python that runs course.py (3.11 or newer; an older one gets a
message and nothing is touched) and installs requirements.lock into it; later calls reuse it and reinstall
only when the lock, pyproject.toml or the venv's Python changed. A .venv made by another Python version or
without pip is made again. COURSE_VENV=build/venv-3.13 uses another venv; COURSE_INSTALLER=pip|uv picks the
installer (default: uv if on PATH, else pip); COURSE_TORCH=cpu (Linux) installs the CPU-only torch from
PyTorch's index instead of PyPI's ~3 GB CUDA build. `python3 tools/lock.py` regenerates the lock files
from requirements.txt (the human-edited list).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
# COURSE_VENV: another venv than .venv (relative to this folder), e.g. CI's second Python in build/venv-3.13.
VENV = ROOT / os.environ.get("COURSE_VENV", ".venv")
STAMP = VENV / ".course-requirements.sha256"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
LOCKS = ("requirements.lock", "requirements-cuda.lock", "pyproject.toml")
SUPPORTED = (3, 11)  # the oldest; 3.11-3.13 are tested, 3.14 has every pinned wheel
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

# This file must stay readable by Python 3.8 (macOS's own python3 is 3.9, Ubuntu 22.04's is 3.10), so that
# an old Python gets the message below instead of a SyntaxError: no match, no except*, no PEP 604 outside
# annotations. tests/test_lock.py parses it with feature_version=(3, 8).
TOO_OLD = """\
이 과정에는 Python 3.11 이상(3.11-3.13에서 확인)이 필요합니다. 지금 실행한 Python은 {found}입니다.
This course needs Python 3.11 or newer (tested on 3.11-3.13); this is Python {found}.
  - Windows:  python.org에서 3.11 이상을 설치한 뒤 `py -3.11 course.py lab` (또는 `py course.py lab`)
  - macOS:    python.org 설치 파일, 또는 `brew install python@3.12` 뒤 `python3.12 course.py lab`
  - Ubuntu 22.04 / Debian 12: `sudo add-apt-repository ppa:deadsnakes/ppa && sudo apt install python3.11 \
python3.11-venv` 뒤 `python3.11 course.py lab`, 또는 uv: `uv python install 3.12` 뒤 `uv run -p 3.12 course.py lab`
  - pyenv:    `pyenv install 3.12 && pyenv local 3.12`
.venv는 건드리지 않았습니다 (.venv was not touched)."""

PIP_FAILED = """\
course: 설치가 실패했습니다 (pip exit code {code}); the install failed. 위의 pip 메시지를 보세요. 흔한 원인:
  - torch 2.13.0 휠이 없는 기계: Intel Mac, macOS 13 이하, Windows on ARM, 32비트 Python.
    지원: Linux x86_64/aarch64, macOS 14 이상 Apple Silicon, Windows x64 (Python 3.11-3.14).
    그 밖의 기계는 Binder나 정적 사이트(`build/site/`)를 쓰세요 (README: Binder, 정적 사이트).
  - 인터넷 연결 (PyPI, Linux에서는 약 3.2 GB) 또는 디스크 공간 (Linux 약 6 GB, macOS/Windows 약 2 GB).
  - Debian/Ubuntu: `sudo apt install python3-venv` (Python 3.12면 python3.12-venv).
  - Windows: `python3` 대신 `py course.py lab`.
고친 뒤 같은 명령을 다시 실행하면 설치를 이어서 합니다 (run the same command again)."""

NO_PIP = """\
course: {venv}에 pip가 없습니다 (the venv has no pip). Debian/Ubuntu에서는 venv 모듈이 따로 나뉘어 있습니다:
  sudo apt install python3-venv     (Python 3.12: python3.12-venv, 3.13: python3.13-venv)
그다음 같은 명령을 다시 실행하세요. course.py가 .venv를 새로 만듭니다 (it will rebuild the venv)."""


def check_python(version_info=None) -> str | None:
    """The message for an unsupported Python, or None. Runs before anything touches .venv."""
    found = version_info or sys.version_info
    if tuple(found[:2]) < SUPPORTED:
        return TOO_OLD.format(found=".".join(str(n) for n in found[:3]))
    return None


def _requirements_hash() -> str:
    digest = hashlib.sha256()
    for name in LOCKS:
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def _venv_python() -> dict:
    """What pyvenv.cfg says about the interpreter that made the venv: {'version': ..., 'executable': ...}."""
    cfg = VENV / "pyvenv.cfg"
    if not cfg.exists():
        return {}
    values = {}
    for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    version = values.get("version") or values.get("version_info", "")
    return {"version": version, "executable": values.get("executable") or values.get("home", "")}


def _stamp() -> str:
    """The lock's hash and the venv's interpreter (version + executable): any change means reinstall."""
    info = _venv_python()
    return f"{_requirements_hash()} python {info.get('version', '?')} {info.get('executable', '?')}"


def _has_pip() -> bool:
    return subprocess.run([str(PYTHON), "-m", "pip", "--version"], capture_output=True).returncode == 0


def _why_rebuild() -> str | None:
    """Why the venv must be made again (or None): missing, made by another Python, broken, or without pip."""
    if not PYTHON.exists():
        return None if not VENV.exists() else "it has no Python"
    made_by = _venv_python().get("version", "")
    running = "{}.{}".format(*sys.version_info[:2])
    if not made_by.startswith(running + "."):
        return f"it was made by Python {made_by or '?'}, and this is Python {sys.version.split()[0]}"
    if subprocess.run([str(PYTHON), "-c", "pass"], capture_output=True).returncode != 0:
        return "its Python does not start"
    if not _has_pip():
        return "it has no pip (Debian/Ubuntu without python3-venv)"
    return None


def _create_venv(clear: bool) -> None:
    try:
        venv.EnvBuilder(with_pip=True, clear=clear).create(VENV)
    except (subprocess.CalledProcessError, SystemExit, OSError) as error:
        print(f"course: creating {VENV.name} failed ({error})", file=sys.stderr)
    if not (PYTHON.exists() and _has_pip()):
        sys.exit(NO_PIP.format(venv=VENV.name))


def _installer() -> list[str]:
    """uv when it is on PATH (COURSE_INSTALLER=pip or uv forces one), else the venv's pip."""
    choice = os.environ.get("COURSE_INSTALLER", "")
    uv = shutil.which("uv") if choice in ("", "uv") else None
    if uv:
        return [uv, "pip", "install", "--python", str(PYTHON)]
    return [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check"]


def ensure_env() -> None:
    """Create the venv and install requirements.lock unless exactly that is installed for this Python."""
    problem = check_python()
    if problem:
        sys.exit(problem)
    wanted = _stamp()
    if STAMP.exists() and STAMP.read_text().strip() == wanted and not _why_rebuild_fast():
        return
    why = _why_rebuild()
    if why:
        if VENV.is_symlink():  # a venv shared with another checkout: never wipe it from here
            sys.exit(f"course: {VENV} cannot be used: {why}. It is a link to a shared venv; fix it there.")
        print(f"course: making {VENV.name} again: {why} ...", flush=True)
        _create_venv(clear=True)
    elif not PYTHON.exists():
        print(f"course: creating {VENV.name} with Python {sys.version.split()[0]} (first run) ...", flush=True)
        _create_venv(clear=False)
    linux = sys.platform.startswith("linux")
    if STAMP.exists():
        size = ""  # an update: only what changed is downloaded
    elif linux and os.environ.get("COURSE_TORCH") != "cpu":
        size = " (Linux: PyPI's torch is the CUDA build, about 3.2 GB to download, 5-7 minutes on a fast line)"
    else:
        size = " (about 0.5 GB to download, a few minutes)"
    print(f"course: installing requirements.lock into {VENV.name}{size} ...", flush=True)
    install = _installer()
    try:
        if linux and os.environ.get("COURSE_TORCH") == "cpu":
            # Opt-in CPU-only torch (torch ~0.2 GB, everything ~0.5 GB, instead of ~3 GB): the same 2.13.0 from PyTorch's CPU index.
            # requirements.lock's torch==2.13.0 then accepts the installed 2.13.0+cpu and pulls no CUDA package.
            subprocess.run(
                install + ["--quiet", "--no-deps", "--index-url", TORCH_CPU_INDEX, "torch==2.13.0+cpu"],
                cwd=ROOT,
                check=True,
            )
        subprocess.run(install + ["--quiet", "-r", "requirements.lock"], cwd=ROOT, check=True)
    except subprocess.CalledProcessError as error:
        sys.exit(PIP_FAILED.format(code=error.returncode))
    _remove_unlocked()
    STAMP.write_text(_stamp() + "\n")


# Installed but pinned by neither lock file: the installer and the course's own package.
NOT_LOCKED = {"pip", "self-attention-course"}


def _unlocked(installed: list[str]) -> list[str]:
    """The names in `installed` that neither lock file pins (names compared as PyPI normalizes them)."""

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    pinned = {norm(n) for n in NOT_LOCKED}
    for lock in LOCKS[:2]:
        for line in (ROOT / lock).read_text(encoding="utf-8").splitlines():
            name = re.match(r"([A-Za-z0-9_.\-]+)==", line)
            if name:
                pinned.add(norm(name.group(1)))
    return sorted({n for n in installed if n and norm(n) not in pinned})


def _remove_unlocked() -> None:
    """Uninstall what an earlier lock installed and this one no longer pins (pip install -r only adds), so that
    an updated venv holds exactly the lock, as a new one does (tests/test_lock.py)."""
    listed = subprocess.run(
        [
            str(PYTHON),
            "-c",
            "from importlib import metadata\nfor d in metadata.distributions(): print(d.metadata['Name'] or '')",
        ],
        capture_output=True,
        text=True,
    )
    extra = _unlocked(listed.stdout.split())
    if listed.returncode == 0 and extra:
        print(f"course: removing what requirements.lock no longer pins: {', '.join(extra)}", flush=True)
        subprocess.run([str(PYTHON), "-m", "pip", "uninstall", "--quiet", "-y", *extra], check=False)


def _why_rebuild_fast() -> bool:
    """The cheap part of _why_rebuild, run on every call: the venv's Python is this Python's version."""
    made_by = _venv_python().get("version", "")
    return not (PYTHON.exists() and made_by.startswith("{}.{}.".format(*sys.version_info[:2])))


def _env(env: dict | None) -> dict:
    # PYTHONPATH: this checkout's helpers/ wins over any other checkout sharing the .venv.
    return {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}


def run(args: list[str], env: dict | None = None) -> int:
    return subprocess.run(args, cwd=ROOT, env=_env(env)).returncode


def start(args: list[str], env: dict | None, log) -> subprocess.Popen:
    """Like run, in the background, with stdout and stderr going to log."""
    return subprocess.Popen(args, cwd=ROOT, env=_env(env), stdout=log, stderr=subprocess.STDOUT)


def cmd_lab(extra: list[str]) -> int:
    args = [str(BIN / "jupyter"), "lab", f"--ServerApp.root_dir={ROOT}", "--LabApp.default_url=/lab/tree/notebooks"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    return run(args + extra)


NBVAL = [
    "--nbval",
    "--nbval-current-env",
    "-p",
    "tools.kernel_zygote",  # one import of torch, matplotlib... per test process, a forked kernel per notebook
    "--nbval-cell-timeout=120",
    "--nbval-sanitize-with",
    "tests/nbval_sanitize.cfg",
]

# The stored outputs must hold on any learner's CPU. A second pass re-runs every notebook as an
# older or non-Intel CPU would (PyTorch's scalar kernels, MKL at SSE4.2, oneDNN at SSE4.1) with
# another thread count, so a printed rounding digit or a fragile tolerance fails here, not there.
PORTABLE_SETUP = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "OMP_NUM_THREADS": "2",
    # This pass runs beside the first one on the same cores: OpenMP threads that spin while they wait
    # for a descheduled partner made one training cell of 13 take 70 s instead of 3. Sleeping while
    # waiting changes no number, only the time.
    "OMP_WAIT_POLICY": "PASSIVE",
}
LINTED = ["helpers", "tests", "tools", "scripts", "notebooks/src", "course.py"]
FORMATTED = ["helpers", "tests", "tools", "scripts", "course.py"]  # pyproject excludes helpers/lessons


def _workers() -> int:
    """COURSE_TEST_WORKERS: processes for the first pass (the portable pass always runs beside it). 1, the default
    on up to 3 cores: one process, with the JupyterLab check moved to the portable pass so both end together
    (2 cores: 4:10, against 4:46 with two xdist workers, which each collect everything and start their own
    kernel zygote); 2 or more (the default on 4+ cores): pytest-xdist workers; 0: every step serially.
    `--sweep` uses at least 2 workers unless 0."""
    default = "2" if (os.cpu_count() or 1) >= 4 else "1"
    value = os.environ.get("COURSE_TEST_WORKERS", default)
    try:
        return max(0, int(value))
    except ValueError:
        print(f"course test: COURSE_TEST_WORKERS={value!r} is not a number; using {default}", file=sys.stderr)
        return int(default)


def cmd_test(extra: list[str]) -> int:
    """Lint and format check, then unit + contract tests with strict nbval (native, 1 thread) and, at the
    same time, strict nbval of the notebooks again under PORTABLE_SETUP with the browser tests' sample (see
    `moved`). Extra ARGS go to both pytest runs. COURSE_TEST_WORKERS=0 runs the passes one after the other.
    `--sweep` runs only the browser modules, on every notebook, deck and page.

    Notebook numbers (`test 03`, `--nb 03`) or paths narrow the run (tools/maintain.py): a number runs
    that notebook's checks only, a notebook path its nbval, a test path that file in the native pass;
    --fast leaves out the portable nbval."""
    from tools import maintain

    try:
        request = maintain.parse_test_args(extra)
    except ValueError as err:
        print(f"course test: {err}", file=sys.stderr)
        return 2
    workers = _workers()
    if request.narrowed:
        check = {"COURSE_CHECK_FIGURES": "1"}
        env = {"native": {"OMP_NUM_THREADS": "1", **check}, "portable": {**PORTABLE_SETUP, **check}, "plain": check}
        runs = maintain.narrowed_steps(request, NBVAL, sequential=workers == 0)
        steps = [(title, [str(PYTHON), "-m", "pytest", *args], env[kind]) for title, args, kind, _ in runs]
        background = [step for step, run_ in zip(steps, runs) if run_[3]]
        steps = [step for step in steps if step not in background] + background
        lint = [
            ("lint (ruff check)", [str(BIN / "ruff"), "check", *LINTED], {}),
            ("format (ruff format --check)", [str(BIN / "ruff"), "format", "--check", *FORMATTED], {}),
        ]
        return _run_steps(lint + steps, background, extra)
    extra = request.pytest_args
    if "--sweep" in extra:  # the browser sweeps only (.ci/run runs them after the plain command)
        args = [a for a in extra if a != "--sweep"]
        modules = [f"tests/{name}" for name in maintain.BROWSER]
        sweep = [
            str(PYTHON),
            "-m",
            "pytest",
            *modules,
            "--sweep",
            # two workers even on 2 cores: the sweeps wait on browsers and kernels more than they compute
            *(["-n", str(max(workers, 2)), "--dist", "loadscope"] if workers else []),
            *args,
        ]
        return _run_steps(
            [
                (
                    "browser sweeps: every notebook, deck slide and site page",
                    sweep,
                    {"OMP_NUM_THREADS": "1", "COURSE_CHECK_FIGURES": "1"},
                )
            ],
            [],
            args,
        )
    # The plain run checks a sample in the browser tests (tests/conftest.py: `sweep` items are left out and the
    # browser fixtures open a few decks and pages); `course.py test --sweep` covers all of them.
    # --dist loadfile (4+ cores): a notebook's nbval cells or a test module stay on one worker, in order, and
    # the browser modules start their JupyterLab and Chromium once.
    xdist = ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else []
    both = os.environ.get("COURSE_TEST_PASSES") != "native" and not request.fast
    # Every explorer built under test (each notebook's, in both passes) refuses a text outside its canvas.
    check = {"COURSE_CHECK_FIGURES": "1"}
    # The portable pass (notebooks only) would end minutes before the first; the browser modules (their
    # plain-run sample: decks, handout cells, site pages 01 and 05, and on <= 3 cores JupyterLab), the
    # benchmark script's CPU check and, on <= 3 cores, the two explorer tests with a second thread run in
    # it instead, so that both passes end together (2 cores, 2026-11-30, in CI with two more explorer
    # tests moved: 4:41 and 4:50; those two went back once 04's saturation test took 8 s less in the first
    # pass). The whole of test_widgets.py (about 75 s) in the portable pass made it end two minutes later.
    moved = (
        [
            "tests/test_slides.py",
            "tests/test_handout.py",
            "tests/test_site.py",
            "tests/test_benchmark_gpu.py",  # notebook 14's benchmark script (--quick) and its kernel check
        ]
        + (
            [
                "tests/test_browser.py",
                "tests/test_widgets.py::test_a_cell_saving_an_explorer_figure_while_a_hand_moves_it_waits_for_the_hand",
                "tests/test_widgets.py::test_a_hand_in_a_subshell_and_a_draw_in_the_main_thread_draw_one_at_a_time",
            ]
            if workers == 1
            else []
        )
        if workers and both
        else []
    )
    steps = [
        ("lint (ruff check)", [str(BIN / "ruff"), "check", *LINTED], {}),
        ("format (ruff format --check)", [str(BIN / "ruff"), "format", "--check", *FORMATTED], {}),
        (
            "tests + notebooks, native CPU, 1 thread",
            [
                str(PYTHON),
                "-m",
                "pytest",
                "tests",
                "notebooks",
                *[f"--deselect={m}" if "::" in m else f"--ignore={m}" for m in moved],
                *NBVAL,
                *xdist,
                *extra,
            ],
            {"OMP_NUM_THREADS": "1", **check},
        ),
        (
            "notebooks again, scalar kernels + SSE4 BLAS, 2 threads"
            + (" (+ browser and explorer tests, GPU benchmark script)" if moved else ""),
            [str(PYTHON), "-m", "pytest", "notebooks", *moved, *NBVAL, *extra],
            {**PORTABLE_SETUP, **check},
        ),
    ]
    if not both:  # quick local loop; CI runs everything
        steps = steps[:3]
    # With workers, the second pass runs beside the first (its output is shown when it ends).
    background = steps[3:] if workers else []
    return _run_steps(steps, background, extra)


def _run_steps(steps: list, background: list, extra: list[str]) -> int:
    """Run `steps` (title, args, env); the last len(background) of them start first, in the background."""
    started = []
    for title, args, env in background:
        print(f"\ncourse test: {title} (started in the background)", flush=True)
        log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        started.append((title, start(args, env, log), log))
    failed = []

    def record(title: str, code: int) -> None:
        # pytest's 5 = "nothing collected": fine when ARGS (e.g. -k test_softmax) leave a pass no notebook.
        if code != 0 and not (code == 5 and extra):
            failed.append(title)

    try:
        for title, args, env in steps[: len(steps) - len(background)]:
            print(f"\ncourse test: {title}", flush=True)
            record(title, run(args, env=env))
    except KeyboardInterrupt:
        for _, proc, _ in started:
            proc.terminate()
        raise
    for title, proc, log in started:
        code = proc.wait()
        log.seek(0)
        print(f"\ncourse test: {title} (output of the background run)", flush=True)
        sys.stdout.write(log.read())
        sys.stdout.flush()
        log.close()
        record(title, code)
    print(
        f"\ncourse test: {len(steps) - len(failed)} of {len(steps)} steps passed"
        + (f"; failed: {', '.join(failed)}" if failed else ""),
        flush=True,
    )
    return 1 if failed else 0


def cmd_affected(extra: list[str]) -> int:
    return run([str(PYTHON), "tools/maintain.py", *extra])


def cmd_build(extra: list[str]) -> int:
    return run([str(PYTHON), "tools/build_notebooks.py", *extra], env={"OMP_NUM_THREADS": "1"})


def cmd_slides(extra: list[str]) -> int:
    # Decks that open with no network: reveal.js, MathJax etc. come from the npm registry once
    # (cached in build/npm-cache/) and are copied next to the HTML, not loaded from CDNs.
    return run([str(PYTHON), "tools/export_slides.py", *extra])


def cmd_site(extra: list[str]) -> int:
    # A static site (index, one page per notebook, glossary) whose explorers play precomputed frames.
    return run([str(PYTHON), "tools/build_site.py", *extra], env={"OMP_NUM_THREADS": "1"})


def cmd_slides_fit(extra: list[str]) -> int:
    return run([str(PYTHON), "tools/measure_slides.py", *extra])


def cmd_handout(extra: list[str]) -> int:
    return run([str(PYTHON), "tools/handout.py", *extra])


def cmd_bench(extra: list[str]) -> int:
    if extra[:1] != ["sliders"]:
        print("usage: python3 course.py bench sliders [NN ...] [--drags K] [--cgroup DIR]")
        return 2
    # the bench runs in ROOT: a path given after --cgroup or --json is the caller's, made absolute here
    args = [str(Path(a).absolute()) if k and extra[k] in ("--cgroup", "--json") else a for k, a in enumerate(extra[1:])]
    return run([str(PYTHON), "tools/bench_sliders.py", *args], env={"OMP_NUM_THREADS": "1"})


def cmd_gpu_bench(extra: list[str]) -> int:
    # Notebook 14's Triton kernels, every SDPA backend, naive and 08's loop on a CUDA GPU (scripts/benchmark_gpu.py).
    return run([str(PYTHON), "scripts/benchmark_gpu.py", *extra])


COMMANDS = {
    "lab": cmd_lab,
    "test": cmd_test,
    "affected": cmd_affected,
    "build": cmd_build,
    "slides": cmd_slides,
    "slides-fit": cmd_slides_fit,
    "handout": cmd_handout,
    "bench": cmd_bench,
    "gpu-bench": cmd_gpu_bench,
    "site": cmd_site,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip())
        return 2
    ensure_env()
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
