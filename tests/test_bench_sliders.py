"""tools/bench_sliders.py's --cgroup: a cgroup the bench cannot join is one clear line, never a reference
measured outside it. (The bench itself is a benchmark, run by hand: README, bench sliders.)"""

from __future__ import annotations

import os
import sys

import pytest

from tools.bench_sliders import into_cgroup, main, reference_in

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups, /proc and /dev/full are Linux's")


@LINUX
def test_a_cgroup_that_refuses_the_reference_child_stops_the_bench(tmp_path):
    """The child moves itself in first; a write refused at the flush (here /dev/full: ENOSPC, as a cgroup v2
    refuses a move at write time) must stop the bench with the child's error, not measure outside the cgroup."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    (tmp_path / "cgroup.procs").symlink_to("/dev/full")
    with pytest.raises(
        SystemExit, match=r"reference could not run in .*No space left on device.*README: bench sliders"
    ):
        reference_in(tmp_path)


def test_a_folder_that_is_no_cgroup_is_refused_before_anything_starts(tmp_path, capsys, monkeypatch):
    from tools import browser_support

    monkeypatch.setattr(browser_support, "missing_browser", lambda: None)  # the same answer with no Chromium
    assert main(["05", "--cgroup", str(tmp_path)]) == 1
    assert "is not a cgroup folder (no cgroup.procs" in capsys.readouterr().out


@LINUX
def test_moving_the_processes_into_a_cgroup_that_refuses_is_one_line(tmp_path):
    """into_cgroup walks this process's children; a refused write names the process and the README."""
    import subprocess

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    (tmp_path / "cgroup.procs").symlink_to("/dev/full")
    child = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(SystemExit, match=r"cannot move process \d+ into .*README: bench sliders"):
            into_cgroup(tmp_path)
    finally:
        child.kill()
        child.wait()
