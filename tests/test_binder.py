"""Binder (repo2docker) configuration: static facts offline; with repo2docker available, its Dockerfile.

(That binder/requirements.txt pins the same versions as requirements.lock is checked in test_lock.py.)
Set COURSE_REPO2DOCKER=/path/to/repo2docker, or put repo2docker on PATH, to run the --no-build check;
it needs no Docker daemon and no network. .ci/run installs jupyter-repo2docker into its own venv
(build/repo2docker-venv, never the course's .venv) and sets COURSE_REPO2DOCKER, so CI always runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def test_binder_files_exist():
    for name in ("runtime.txt", "apt.txt", "requirements.txt", "postBuild"):
        assert (BINDER / name).is_file(), f"binder/{name} is missing"
    assert os.access(BINDER / "postBuild", os.X_OK), "binder/postBuild must be executable"


def test_runtime_and_apt():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    packages = (BINDER / "apt.txt").read_text().split()
    assert "fonts-nanum" in packages, "Hangul in the browser needs fonts-nanum"


def test_requirements_use_the_cpu_torch_index_and_install_the_course():
    lines = [l.strip() for l in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines, "torch must come from the CPU index"
    assert any(re.fullmatch(r"torch==[\d.]+\+cpu", l) for l in lines), "pin the +cpu torch build"
    # repo2docker installs requirements that reference local paths after copying the repository,
    # from the repository root, so `-e .` finds pyproject.toml and `helpers` becomes importable.
    assert "-e ." in lines


def test_postbuild_opens_jupyterlab_on_notebooks(tmp_path):
    """postBuild writes a Jupyter config whose default URL is the notebooks folder."""
    subprocess.run(
        ["bash", str(BINDER / "postBuild")], env={**os.environ, "HOME": str(tmp_path)}, check=True, timeout=60
    )
    config = json.loads((tmp_path / ".jupyter" / "jupyter_server_config.json").read_text())
    for app in ("ServerApp", "LabApp", "JupyterNotebookApp"):
        assert config[app]["default_url"] == "/lab/tree/notebooks"


def repo2docker() -> str | None:
    return os.environ.get("COURSE_REPO2DOCKER") or shutil.which("repo2docker")


def test_repo2docker_reads_the_binder_folder():
    exe = repo2docker()
    if not exe:
        pytest.skip("no repo2docker on PATH and COURSE_REPO2DOCKER is not set")
    proc = subprocess.run([exe, "--no-build", "--debug", str(ROOT)], capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "python=3.11" in out, "runtime.txt (python-3.11) was not read"
    assert re.search(r"apt-get install .*fonts-nanum", out), "apt.txt was not read"
    install = out.find('pip install --no-cache-dir -r "binder/requirements.txt"')
    assert install >= 0, "binder/requirements.txt is not installed"
    assert out.rfind("src/ ${REPO_DIR}/", 0, install) >= 0, (
        "binder/requirements.txt (with -e .) must be installed after the repository is copied"
    )
    assert "./binder/postBuild" in out, "postBuild does not run"
