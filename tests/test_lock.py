"""The set-up: requirements.lock is what is installed, Binder agrees, and course.py's first steps on any Python.

The lock (tools/lock.py, uv's universal resolution of requirements.txt) pins every package for Python
3.11-3.14 on every supported platform; requirements-cuda.lock pins, as constraints, the CUDA packages that
only PyPI's Linux torch wheel pulls in. The venv running these tests must hold exactly the lock's packages
that apply here, plus the constrained CUDA packages that the installed torch itself requires (none for a
CPU-only torch), each at its pinned version.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
CUDA_LOCK = ROOT / "requirements-cuda.lock"
BINDER = ROOT / "binder" / "requirements.txt"
# The installer, and the course's own package (the lock's `-e .` line, checked below).
NOT_LOCKED = {"pip", "self-attention-course"}

PLATFORMS = {
    "Linux x86_64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
    "Linux aarch64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
    "macOS arm64": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"},
    "Windows x64": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64"},
}
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]


def requirements(path: Path) -> list[Requirement]:
    reqs = []
    for line in path.read_text().splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith(("#", "-")):
            reqs.append(Requirement(line))
    return reqs


def pins(path: Path, environment: dict | None = None) -> dict[str, str]:
    """name -> pinned version of the lines whose marker holds in environment (default: this interpreter)."""
    out = {}
    for req in requirements(path):
        if req.marker is None or req.marker.evaluate(environment):
            name = canonicalize_name(req.name)
            assert name not in out, f"{path.name}: two pins of {name} hold at once"
            (spec,) = req.specifier
            assert spec.operator == "==", f"{path.name}: {req} is not an exact pin"
            out[name] = spec.version
    return out


def same(installed: str, pinned: str) -> bool:
    return Version(Version(installed).public) == Version(pinned)  # torch 2.13.0+cpu is torch==2.13.0


def test_the_installed_packages_are_exactly_the_lock():
    wanted = pins(LOCK)
    cuda = pins(CUDA_LOCK)
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    # What the installed torch itself asks for on this machine: PyPI's Linux wheel lists the CUDA packages,
    # a CPU-only wheel none.
    torch_needs = {
        canonicalize_name(Requirement(r).name)
        for r in metadata.requires("torch") or []
        if Requirement(r).marker is None or Requirement(r).marker.evaluate({"extra": ""})
    }
    missing = sorted(set(wanted) - set(installed))
    assert not missing, f"in requirements.lock but not installed: {missing}"
    wrong = {n: (installed[n], wanted[n]) for n in wanted if not same(installed[n], wanted[n])}
    assert not wrong, f"installed version != requirements.lock (installed, locked): {wrong}"
    extra = set(installed) - set(wanted) - NOT_LOCKED
    unexplained = sorted(n for n in extra if n not in cuda)
    assert not unexplained, f"installed but in no lock file (rerun python3 tools/lock.py?): {unexplained}"
    for name in extra:
        assert same(installed[name], cuda[name]), f"{name} {installed[name]} != requirements-cuda.lock {cuda[name]}"
    cuda_for_torch = {n for n in cuda if n in torch_needs}
    assert cuda_for_torch <= set(installed), f"torch needs {sorted(cuda_for_torch - set(installed))}"


def test_the_course_package_is_installed_editable():
    # (PYTHONPATH may also show the build's *.egg-info in the checkout: look at every copy.)
    found = [
        json.loads(d.read_text("direct_url.json") or "{}")
        for d in metadata.distributions()
        if canonicalize_name(d.metadata["Name"]) == "self-attention-course"
    ]
    assert any(f.get("dir_info", {}).get("editable") for f in found), f"not installed with -e .: {found}"


def test_torch_pins_exactly_the_cuda_packages_left_out_of_the_lock():
    """The CUDA set is only torch's: nothing else in the lock names one of them."""
    cuda = set(pins(CUDA_LOCK, {**PLATFORMS["Linux x86_64"], "python_full_version": "3.13.0"}))
    assert {"cuda-toolkit", "nvidia-cudnn-cu13", "nvidia-nccl-cu13"} <= cuda
    assert all(n.startswith(("nvidia-", "cuda-")) for n in cuda), cuda
    for line in LOCK.read_text().splitlines():
        via = line.partition("# via ")[2]
        name = line.split("==")[0].strip()
        assert not (name.startswith(("nvidia-", "cuda-"))), f"{name} belongs in requirements-cuda.lock"
        assert not any(v.strip().startswith(("nvidia-", "cuda-")) for v in via.split(",")), line
    assert "-c requirements-cuda.lock" in LOCK.read_text().splitlines()


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_lock_pins_one_version_of_everything_on_every_supported_platform(platform, python):
    env = {**PLATFORMS[platform], "python_version": python, "python_full_version": python + ".0", "os_name": ""}
    env["os_name"] = "nt" if platform.startswith("Windows") else "posix"
    locked = pins(LOCK, env)  # asserts one exact pin per package
    top = pins(ROOT / "requirements.txt", env)
    assert {n: locked.get(n) for n in top} == top, "requirements.lock disagrees with requirements.txt"
    assert locked["torch"] == "2.13.0"
    assert ("triton" in locked) == platform.startswith("Linux")


def test_binder_installs_the_same_pins_with_the_cpu_torch():
    env = {**PLATFORMS["Linux x86_64"], "python_version": "3.11", "python_full_version": "3.11.0"}
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    binder = pins(BINDER, env)
    assert binder.pop("torch") == "2.13.0+cpu"
    locked = pins(LOCK, env)
    assert locked.pop("torch") == "2.13.0"
    assert binder == locked, f"binder/requirements.txt differs: {set(binder.items()) ^ set(locked.items())}"
    lines = BINDER.read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines and "-e ." in lines


def _course_module(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("course_under_test", ROOT / "course.py")
    course = importlib.util.module_from_spec(spec)
    monkeypatch.setenv("COURSE_VENV", str(tmp_path / "venv"))
    spec.loader.exec_module(course)
    return course


def test_course_py_is_python_38_syntax():
    """An old Python must be able to read course.py, or it never prints the message below."""
    ast.parse((ROOT / "course.py").read_text(encoding="utf-8"), feature_version=(3, 8))


@pytest.mark.parametrize("old", [(3, 8, 10), (3, 9, 6), (3, 10, 13)])
def test_an_old_python_gets_one_message_and_no_venv(old, tmp_path):
    # A real run of course.py (python -c pretends to be the old version before running it as __main__).
    code = (
        f"import runpy, sys; sys.version_info = {old!r} + ('final', 0); sys.argv = ['course.py', 'lab']; "
        "runpy.run_path('course.py', run_name='__main__')"
    )
    venv = tmp_path / "venv"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "COURSE_VENV": str(venv)}, capture_output=True
    )
    out = proc.stdout.decode() + proc.stderr.decode("utf-8")
    assert proc.returncode == 1, out
    assert "Traceback" not in out, out
    found = ".".join(map(str, old))
    assert "Python 3.11 이상" in out and "Python 3.11 or newer" in out and found in out, out
    for hint in ("python.org", "py -3.11", "deadsnakes", "uv python install", "pyenv install"):
        assert hint in out, f"the message lacks {hint!r}: {out}"
    assert not venv.exists(), "the venv was touched before the version check"


def test_a_venv_of_another_python_is_made_again(monkeypatch, tmp_path):
    course = _course_module(monkeypatch, tmp_path)
    course.BIN.mkdir(parents=True)
    course.PYTHON.symlink_to(sys.executable)
    (course.VENV / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.10.13\nexecutable = /usr/bin/python3.10\n")
    assert "made by Python 3.10.13" in course._why_rebuild()
    assert course._why_rebuild_fast()
    running = "{}.{}.{}".format(*sys.version_info[:3])
    (course.VENV / "pyvenv.cfg").write_text(f"version = {running}\nexecutable = {sys.executable}\n")
    assert not course._why_rebuild_fast()
    # this test's interpreter has pip, so the venv is healthy
    assert course._why_rebuild() is None
    assert running in course._stamp() and sys.executable in course._stamp()


def test_a_venv_without_pip_is_made_again(monkeypatch, tmp_path):
    course = _course_module(monkeypatch, tmp_path)
    course.BIN.mkdir(parents=True)
    course.PYTHON.symlink_to(sys.executable)
    running = "{}.{}.{}".format(*sys.version_info[:3])
    (course.VENV / "pyvenv.cfg").write_text(f"version = {running}\n")
    monkeypatch.setattr(course, "_has_pip", lambda: False)
    assert "no pip" in course._why_rebuild() and "python3-venv" in course._why_rebuild()
    assert "python3-venv" in course.NO_PIP


def test_a_failed_install_is_a_hint_not_a_traceback(monkeypatch, tmp_path, capsys):
    course = _course_module(monkeypatch, tmp_path)
    monkeypatch.setattr(course, "_why_rebuild", lambda: None)
    monkeypatch.setattr(course, "_create_venv", lambda clear: None)
    monkeypatch.setenv("COURSE_INSTALLER", "pip")

    def fail(args, **kwargs):
        raise subprocess.CalledProcessError(1, args)

    monkeypatch.setattr(course.subprocess, "run", fail)
    with pytest.raises(SystemExit) as stop:
        course.ensure_env()
    message = str(stop.value.code)
    for hint in ("Intel Mac", "macOS 13", "Windows on ARM", "python3-venv", "py course.py lab", "Binder"):
        assert hint in message, f"the hint lacks {hint!r}: {message}"
    assert not course.STAMP.exists()


def test_requirements_txt_says_what_it_is():
    text = (ROOT / "requirements.txt").read_text()
    assert "CPU-only build" not in text.split("torch==")[0].replace("CPU-only build of the same version", "")
    for fact in ("tools/lock.py", "requirements.lock", "3.11", "CUDA"):
        assert fact in text, f"requirements.txt's comments do not mention {fact}"


def test_an_update_removes_what_the_lock_no_longer_pins(monkeypatch, tmp_path):
    """`pip install -r` only adds: after a lock drops a package (jsonschema 4.24.1 dropped rfc3987-syntax and lark),
    course.py uninstalls it, comparing names as PyPI normalizes them."""
    course = _course_module(monkeypatch, tmp_path)
    installed = ["lark", "rfc3987_syntax", "JSONSchema", "jupyterlab_widgets", "pip", "self_attention_course"]
    assert course._unlocked(installed + ["nvidia-cublas", ""]) == ["lark", "rfc3987_syntax"]
