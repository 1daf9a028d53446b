"""Paths and loaders for the small files in data/."""

from __future__ import annotations

import json
from pathlib import Path

import torch

__all__ = ["DATA_DIR", "load_json", "save_json", "load_tensor_dict"]

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
