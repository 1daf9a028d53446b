"""Notebook kernels that start without paying for their imports again: a fork server for the nbval passes.

Every notebook runs in a kernel of its own (nbval starts one per notebook, as a learner's JupyterLab does). Each
of those kernels used to spend 3-7 s of CPU importing the same modules (IPython and ipykernel, torch, torch's
optimizer machinery, matplotlib, seaborn with scipy and pandas, ipywidgets) before the notebook's first
line ran: about 140 of the test command's ~570 CPU-seconds. Here one *zygote* process imports them once per test
process and then forks a fresh kernel for each notebook. A forked kernel is still a new process with its own memory
(nothing one notebook does reaches another); the only difference from `python -m ipykernel_launcher` is that those
modules are already in `sys.modules`, as they would be after the notebook's own first import cell.

    serve SOCKET        the zygote: import, then fork one kernel per request on the Unix socket SOCKET
    start SOCKET ARGS   what the kernel spec runs (`ARGS` = ipykernel's, e.g. `-f {connection_file}`): ask the
                        zygote for a kernel, forward signals to it and exit when it exits. Without a zygote (no
                        socket, another numeric set-up, a zygote that refused to fork) it becomes
                        `python -m ipykernel_launcher ARGS` itself, so a kernel always starts.

The zygote forks only while it has no thread but its own and OpenBLAS's (which stops them around a fork): a
fork beside running threads can copy a held lock; it checks before each fork. Environment variables that a
library reads once at import or load time (OpenMP, MKL, oneDNN, ATen's CPU capability, the hash seed, Python's
path) must be those the kernel would get: a request whose values differ from the zygote's is refused, and the
stub starts a plain kernel. `helpers` is not preloaded: importing it asks torch.cuda.is_available(), after which
no process may fork.

As a pytest plugin (`-p tools.kernel_zygote`: course.py's NBVAL arguments, .ci/run's Python 3.13 step) it starts
one zygote per pytest process whose collected items include notebooks (pytest_collection_finish);
COURSE_KERNEL_ZYGOTE=0 turns it off, and it is always off on Windows (no fork). tests/test_kernel_zygote.py
checks it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# Read at import or library load time: a forked kernel would silently keep the zygote's values.
FROZEN_ENV = (
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "MKL_NUM_THREADS",
    "MKL_ENABLE_INSTRUCTIONS",
    "ONEDNN_MAX_CPU_ISA",
    "ATEN_CPU_CAPABILITY",
    "OPENBLAS_NUM_THREADS",
    "KMP_AFFINITY",
    "PYTHONHASHSEED",
    "PYTHONPATH",
    "MPLBACKEND",
    "TRITON_INTERPRET",
)
INLINE = "module://matplotlib_inline.backend_inline"  # what ipykernel sets when MPLBACKEND is unset
PRELOAD = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "torch",
    "torch.nn.functional",
    "torch._dynamo",  # building any torch.optim optimizer imports it: 2 s
    "matplotlib.pyplot",
    "matplotlib_inline.backend_inline",
    "koreanize_matplotlib",
    "seaborn",  # helpers.plots' heatmaps: seaborn pulls in scipy.stats and pandas
    "ipywidgets",
)  # not helpers: importing it asks torch.cuda.is_available(), and no process may fork once CUDA is touched


def defaults() -> dict:
    """What a fresh kernel would set before the notebook's code runs: ipykernel's matplotlib backend, and
    helpers' TRITON_INTERPRET (torch._dynamo imports triton, which must see it). With a CUDA build of torch the
    value depends on the GPU, which the zygote must not ask about: it is left unset, and torch._dynamo is not
    preloaded then (see serve)."""
    import torch  # preloaded anyway; importing it touches no GPU (torch.version.cuda is the build, not a device)

    found = {"MPLBACKEND": INLINE}
    if torch.version.cuda is None:  # a CPU-only build: no GPU to find
        found["TRITON_INTERPRET"] = "1"
    return found


def frozen_env(env, preset: dict) -> dict:
    env = {**preset, **env}
    return {name: env.get(name) for name in FROZEN_ENV}


def _send(conn: socket.socket, data: bytes, fds: list[int] = ()) -> None:
    header = struct.pack("!I", len(data))
    if fds:
        socket.send_fds(conn, [header], list(fds))
    else:
        conn.sendall(header)
    conn.sendall(data)


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("the other end closed the socket")
        data += chunk
    return data


def _recv(conn: socket.socket, with_fds: int = 0) -> tuple[bytes, list[int]]:
    if with_fds:
        header, fds, _, _ = socket.recv_fds(conn, 4, with_fds)
        header += _recv_exactly(conn, 4 - len(header))
    else:
        header, fds = _recv_exactly(conn, 4), []
    (size,) = struct.unpack("!I", header)
    return _recv_exactly(conn, size), list(fds)


def threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


# --------------------------------------------------------------------------- the zygote


def serve(path: str) -> int:
    preset = defaults()
    for name, value in preset.items():
        os.environ.setdefault(name, value)
    mine, before = frozen_env(os.environ, preset), dict(os.environ)
    import importlib

    # numpy's and scipy's OpenBLAS start their thread pools at import when more than one thread is allowed
    # (the portable pass: OMP_NUM_THREADS=2). OpenBLAS stops them before a fork (pthread_atfork) and starts them
    # again in the child, so those may exist; a thread started by anything else makes forking unsafe.
    for name in ("numpy", "scipy.linalg"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    blas_threads = threads()
    preload = os.environ.get("COURSE_KERNEL_ZYGOTE_PRELOAD")  # tests/test_kernel_zygote.py: a cheap list
    for name in preload.split(",") if preload else PRELOAD:
        if name == "torch._dynamo" and "TRITON_INTERPRET" not in os.environ:
            continue  # it imports triton, which reads TRITON_INTERPRET once
        try:
            importlib.import_module(name)
        except Exception as err:  # a missing optional module only costs its import time later
            print(f"kernel_zygote: not preloaded {name}: {err}", file=sys.stderr)
    # What the imports put in the environment (torch._dynamo: TORCHINDUCTOR_CACHE_DIR) a kernel gets too.
    added = {**preset, **{k: v for k, v in os.environ.items() if k not in before}}
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked kernels are reaped by the system
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    listener.bind(tmp)
    listener.listen(16)
    os.replace(tmp, path)  # the socket appears only once the zygote is ready
    while True:
        conn, _ = listener.accept()
        try:
            data, fds = _recv(conn, with_fds=3)
            request = json.loads(data)
            refusal = None
            if frozen_env(request["env"], preset) != mine:
                differ = [k for k, v in frozen_env(request["env"], preset).items() if mine[k] != v]
                refusal = f"the kernel's {', '.join(differ)} differ from the zygote's"
            elif threads() > blas_threads:
                refusal = f"the zygote has {threads()} threads (its BLAS {blas_threads}); forking now is unsafe"
            if refusal:
                _send(conn, json.dumps({"refused": refusal}).encode())
                conn.close()
                for fd in fds:
                    os.close(fd)
                continue
            pid = os.fork()
        except Exception as err:  # a broken request must not end the zygote
            print(f"kernel_zygote: bad request: {err}", file=sys.stderr)
            conn.close()
            continue
        if pid == 0:
            listener.close()
            request["env"] = {**added, **request["env"]}
            _become_kernel(conn, fds, request)  # never returns
        conn.close()
        for fd in fds:
            os.close(fd)


def _become_kernel(conn: socket.socket, fds: list[int], request: dict) -> None:
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [sys.executable, *request["argv"]]
        _send(conn, json.dumps({"pid": os.getpid()}).encode())

        def orphaned():  # the stub is gone (killed): a kernel nobody can reach ends itself
            try:
                conn.recv(1)
            finally:
                os._exit(1)

        threading.Thread(target=orphaned, daemon=True).start()
        from ipykernel import kernelapp

        kernelapp.launch_new_instance(argv=request["argv"])
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# --------------------------------------------------------------------------- the kernel spec's command


def start(path: str, argv: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
        _send(conn, json.dumps(request).encode(), [0, 1, 2])
        reply = json.loads(_recv(conn)[0])
    except (OSError, EOFError, ValueError) as err:
        reply = {"refused": f"no zygote at {path}: {err}"}
    if "pid" not in reply:
        conn.close()
        if os.environ.get("COURSE_KERNEL_ZYGOTE_STRICT") == "1":  # tests/test_kernel_zygote.py
            print(f"kernel_zygote: {reply['refused']}", file=sys.stderr)
            return 3
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *argv])
    pid = reply["pid"]

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    try:  # the kernel holds the other end: EOF when it exits
        while conn.recv(4096):
            pass
    except OSError:
        pass
    return 0


# --------------------------------------------------------------------------- as a pytest plugin
# `pytest -p tools.kernel_zygote` (course.py's NBVAL arguments): a zygote per pytest process (each xdist worker),
# started when the collected items hold a notebook; nbval's kernel spec then runs `start`.

_ZYGOTE: dict = {}


def pytest_collection_finish(session):
    if os.environ.get("COURSE_KERNEL_ZYGOTE", "1") == "0" or os.name == "nt" or _ZYGOTE:
        return
    if not any(str(item.path).endswith(".ipynb") for item in session.items):
        return
    try:
        from nbval import kernel as nbval_kernel
    except ImportError:
        return
    root = Path(__file__).resolve().parent.parent
    folder = tempfile.mkdtemp(prefix="course-zygote-")
    path = os.path.join(folder, "socket")
    log = open(os.path.join(folder, "zygote.log"), "w")  # noqa: SIM115 (kept open while the zygote runs)
    process = subprocess.Popen(
        # -m from the course folder (on PYTHONPATH already): tools/ itself stays off the kernels' sys.path
        [sys.executable, "-m", "tools.kernel_zygote", "serve", path],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=root,
    )
    _ZYGOTE.update(process=process, folder=folder, log=log)
    manager = nbval_kernel.NbvalKernelspecManager
    plain = manager.get_kernel_spec

    def get_kernel_spec(self, kernel_name):
        spec = plain(self, kernel_name)
        if kernel_name == nbval_kernel.CURRENT_ENV_KERNEL_NAME:
            deadline = time.monotonic() + 60
            while not os.path.exists(path) and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)  # the zygote is still importing: waiting costs no more than importing here
            spec.argv = [sys.executable, str(Path(__file__).resolve()), "start", path, *spec.argv[3:]]
        return spec

    manager.get_kernel_spec = get_kernel_spec


def pytest_unconfigure(config):
    if _ZYGOTE:
        _ZYGOTE["process"].terminate()
        try:
            _ZYGOTE["process"].wait(timeout=10)
        except subprocess.TimeoutExpired:
            _ZYGOTE["process"].kill()
        _ZYGOTE["log"].close()
        import shutil

        shutil.rmtree(_ZYGOTE["folder"], ignore_errors=True)
        _ZYGOTE.clear()


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "serve":
        return serve(argv[1])
    if len(argv) >= 2 and argv[0] == "start":
        return start(argv[1], argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
