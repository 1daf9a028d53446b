#!/usr/bin/env python3
"""The course's entry point: set-up on first use, then JupyterLab, tests or notebook builds.

    python3 course.py lab            open the course in JupyterLab
    python3 course.py test [ARGS]    run every test (ARGS go to pytest)
    python3 course.py build [NN ...] re-execute notebooks from notebooks/src (maintainers)
    python3 course.py build --generate   regenerate helpers/lessons/ from the "save" cells
    python3 course.py slides [NN ...] export offline reveal.js slides to build/slides/
    python3 course.py site [NN ...]   build the static course site in build/site/ (sliders move offline)
    python3 course.py slides-fit [NN ...]  list the slides taller than 960x700 (headless Chromium)
    python3 course.py handout [NN ...]  print A4 PDF handouts to build/handouts/ (headless Chromium)
    python3 course.py bench sliders   time every slider in JupyterLab + headless Chromium
    python3 course.py gpu-bench [--quick]  measure notebook 14's kernels against PyTorch on a CUDA GPU
                                      (data/benchmark_gpu.json); --quick checks the script on a CPU

The first call creates .venv/ and installs requirements.txt into it; later calls reuse it
and reinstall only when requirements.txt or pyproject.toml changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".course-requirements.sha256"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def _requirements_hash() -> str:
    digest = hashlib.sha256()
    for name in ("requirements.txt", "pyproject.toml"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ensure_env() -> None:
    """Create .venv and install the pinned requirements unless they are already installed."""
    if sys.version_info[:2] != (3, 11):
        print(
            f"note: the course is pinned and tested on Python 3.11; this is {sys.version.split()[0]}", file=sys.stderr
        )
    if not PYTHON.exists():
        print("course: creating .venv (first run) ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = _requirements_hash()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    print("course: installing requirements.txt into .venv (about 2 minutes the first time) ...", flush=True)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check"]
    subprocess.run(pip + ["--quiet", "--upgrade", "pip"], cwd=ROOT, check=True)
    subprocess.run(pip + ["--quiet", "-r", "requirements.txt"], cwd=ROOT, check=True)
    STAMP.write_text(wanted + "\n")


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
    """COURSE_TEST_WORKERS: pytest-xdist workers for the first pass (default 2); 0 runs everything serially."""
    value = os.environ.get("COURSE_TEST_WORKERS", "2")
    try:
        return max(0, int(value))
    except ValueError:
        print(f"course test: COURSE_TEST_WORKERS={value!r} is not a number; using 2", file=sys.stderr)
        return 2


def cmd_test(extra: list[str]) -> int:
    """Lint and format check, then unit + contract + browser tests with strict nbval (native, 1 thread)
    and, at the same time, strict nbval of the notebooks again under PORTABLE_SETUP. Extra ARGS go to
    both pytest runs. COURSE_TEST_WORKERS=0 runs the passes one after the other, each in one process."""
    workers = _workers()
    # --dist loadscope: a notebook's nbval cells (one file), a test module or a test class stay on one
    # worker, in order; the browser tests are one class per notebook and share a JupyterLab per worker.
    xdist = ["-n", str(workers), "--dist", "loadscope"] if workers else []
    both = os.environ.get("COURSE_TEST_PASSES") != "native"
    # The portable pass (notebooks only) ends minutes before the first; browser tests that compute no
    # numbers (the offline decks, the handout PDF, the built site's explorers) run in it instead, so
    # that the first pass, the longer one, is shorter.
    moved = (
        [
            "tests/test_slides.py",
            "tests/test_handout.py",
            "tests/test_site.py::test_every_explorer_of_the_built_site_moves",
            "tests/test_site.py::test_built_site_fits_screens_links_and_search",
            "tests/test_benchmark_gpu.py",  # notebook 14's benchmark script (--quick) and its kernel check
        ]
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
            {"OMP_NUM_THREADS": "1"},
        ),
        (
            "notebooks again, scalar kernels + SSE4 BLAS, 2 threads" + (" (+ slides, handout, site)" if moved else ""),
            [str(PYTHON), "-m", "pytest", "notebooks", *moved, *NBVAL, *extra],
            PORTABLE_SETUP,
        ),
    ]
    if not both:  # quick local loop; CI runs everything
        steps = steps[:3]
    # With workers, the second pass runs beside the first (its output is shown when it ends).
    background = steps[3:] if workers else []
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
        print("usage: python3 course.py bench sliders [NN ...] [--drags K]")
        return 2
    return run([str(PYTHON), "tools/bench_sliders.py", *extra[1:]], env={"OMP_NUM_THREADS": "1"})


def cmd_gpu_bench(extra: list[str]) -> int:
    # Notebook 14's Triton kernels, every SDPA backend, naive and 08's loop on a CUDA GPU (scripts/benchmark_gpu.py).
    return run([str(PYTHON), "scripts/benchmark_gpu.py", *extra])


COMMANDS = {
    "lab": cmd_lab,
    "test": cmd_test,
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
