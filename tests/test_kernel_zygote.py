"""tools/kernel_zygote.py: the nbval passes' kernels are forked from one process that imported torch & co.

A kernel from the zygote must behave as a fresh `ipykernel_launcher` would: its own process and memory, the
environment, working folder and sys.path the kernel spec gave it, interrupts that reach it, an end when it is shut
down; and a request the zygote cannot serve faithfully (another numeric set-up) gets a plain kernel instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ZYGOTE = ROOT / "tools" / "kernel_zygote.py"
pytest.importorskip("jupyter_client")
if os.name == "nt":
    pytest.skip("no fork on Windows: every kernel starts plain there", allow_module_level=True)


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zygote")
    path = str(folder / "socket")
    # the fork machinery with a cheap preload (the real list costs ~7 s of imports); numpy stands in for torch
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COURSE_KERNEL_ZYGOTE_PRELOAD": "ipykernel.kernelapp,numpy"}
    proc = subprocess.Popen([sys.executable, "-m", "tools.kernel_zygote", "serve", path], env=env, cwd=ROOT)
    deadline = time.monotonic() + 120
    while not os.path.exists(path):
        assert proc.poll() is None and time.monotonic() < deadline, "the zygote did not start"
        time.sleep(0.05)
    yield path, env
    proc.terminate()
    proc.wait(timeout=10)


def kernel(path: str, env: dict, folder: Path, strict: bool = True):
    """A started kernel (manager, client) whose spec runs `kernel_zygote.py start`."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec = folder / "kernels" / "zygote"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(ZYGOTE), "start", path, "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "z", "language": "python"}))
    km = KernelManager(
        kernel_name="zygote", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder / "kernels")])
    )
    km.start_kernel(env={**env, "COURSE_KERNEL_ZYGOTE_STRICT": "1" if strict else "0"}, cwd=str(folder))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def run(kc, code: str) -> str:
    """Execute `code`; return what it printed (stdout), or raise with the kernel's error."""
    reply = kc.execute_interactive(code, timeout=60, output_hook=lambda msg: printed.append(msg))
    printed_text = "".join(m["content"].get("text", "") for m in printed if m["msg_type"] == "stream")
    printed.clear()
    assert reply["content"]["status"] == "ok", reply["content"]
    return printed_text


printed: list = []

FACTS = (
    "import os, sys, json\n"
    "print(json.dumps({'pid': os.getpid(), 'cwd': os.getcwd(), 'marker': os.environ.get('COURSE_TEST_MARKER'),"
    " 'tools_on_path': any(p.rstrip('/').endswith('tools') for p in sys.path),"
    " 'preloaded': 'numpy' in sys.modules, 'x': globals().get('x')}))\n"
    "x = 1"
)


def test_a_forked_kernel_is_a_fresh_kernel_with_its_own_environment(zygote, tmp_path):
    path, env = zygote
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = kernel(path, {**env, "COURSE_TEST_MARKER": "first"}, tmp_path / "a")
    second = kernel(path, {**env, "COURSE_TEST_MARKER": "second"}, tmp_path / "b")
    try:
        a, b = (json.loads(run(kc, FACTS)) for _, kc in (first, second))
        assert a["pid"] != b["pid"] and a["x"] is None and b["x"] is None, (a, b)  # nothing shared
        assert (a["marker"], b["marker"]) == ("first", "second")  # the environment the kernel spec gave
        assert Path(a["cwd"]) == tmp_path / "a" and Path(b["cwd"]) == tmp_path / "b"
        assert not a["tools_on_path"], "the zygote's own folder leaked onto the kernel's sys.path"
        assert a["preloaded"], "numpy was not preloaded: the zygote saves nothing"
        assert run(first[1], "print(x + 1)").strip() == "2"  # the state is the kernel's own
        # an interrupt reaches the forked kernel (the stub forwards SIGINT)
        msg = first[1].execute("import time\ntry:\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('stopped')")
        time.sleep(1.0)
        first[0].interrupt_kernel()
        reply = first[1].get_shell_msg(timeout=20)
        assert reply["parent_header"]["msg_id"] == msg and reply["content"]["status"] == "ok"
    finally:
        for km, kc in (first, second):
            kc.stop_channels()
            km.shutdown_kernel(now=False)
    for facts in (a, b):  # a shut-down kernel is gone
        deadline = time.monotonic() + 10
        while _alive(facts["pid"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(facts["pid"]), f"kernel {facts['pid']} outlived its shutdown"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_another_numeric_set_up_is_refused_and_gets_a_plain_kernel(zygote, tmp_path):
    """A kernel that must run with other OpenMP threads (read once when the library loads) cannot come from this
    zygote: strictly, the stub says why and fails; normally it starts a plain kernel that has its own set-up."""
    path, env = zygote
    other = {**env, "OMP_NUM_THREADS": "2"}  # the zygote's is 1
    stub = subprocess.run(
        [sys.executable, str(ZYGOTE), "start", path, "-f", str(tmp_path / "unused.json")],
        env={**other, "COURSE_KERNEL_ZYGOTE_STRICT": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stub.returncode == 3 and "OMP_NUM_THREADS" in stub.stderr, stub.stderr
    km, kc = kernel(path, other, tmp_path, strict=False)
    try:
        facts = json.loads(run(kc, FACTS + "\nprint(os.environ['OMP_NUM_THREADS'])").splitlines()[0])
        assert not facts["preloaded"], facts  # a plain, fresh process (it imports numpy only when asked)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_test_command_runs_the_notebooks_through_the_zygote():
    """course.py's nbval arguments load the plugin (a change that drops it brings back 3-7 s a notebook)."""
    import course  # course.py's folder is on PYTHONPATH (course.py test sets it)

    assert "tools.kernel_zygote" in course.NBVAL
