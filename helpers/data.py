"""Paths and loaders for the small files in data/."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import torch

__all__ = ["DATA_DIR", "load_json", "save_json", "load_tensor_dict", "numeric_setup", "cpu_name"]

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def load_json(name: str):
    """Load data/<name> (JSON)."""
    path = DATA_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; it ships with the repository (git checkout data/)")
    return json.loads(path.read_text(encoding="utf-8"))


def save_json(name: str, obj) -> Path:
    """Write data/<name> as readable UTF-8 JSON (used by the scripts that produce data)."""
    path = DATA_DIR / name
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def load_tensor_dict(name: str) -> dict:
    """Load a checkpoint or tensor dict saved with torch.save into data/<name>, on the CPU."""
    path = DATA_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; regenerate it with the script named in the notebook")
    return torch.load(path, map_location="cpu", weights_only=True)


# The environment variables that pick PyTorch's, MKL's and oneDNN's kernels and the thread count.
NUMERIC_ENV = ("OMP_NUM_THREADS", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def numeric_setup() -> dict:
    """What produced a stored result: another CPU, kernel set or thread count changes its last digits."""
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": cpu_name(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "env": {k: os.environ[k] for k in NUMERIC_ENV if k in os.environ},
    }
