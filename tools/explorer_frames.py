"""Precompute every explorer's frames, so its controls move without a kernel (static site, offline decks).

    tools/explorer_frames.py [NN ...]            compute (or reuse) the frames of these notebooks
    tools/explorer_frames.py --mode compute ...  always recompute

A copy of each executed notebook is run again (nbclient) with ``COURSE_EXPLORER_FRAMES=<folder>``;
every ``helpers.widgets.Explorer`` built there walks its frame grid and writes PNGs and a manifest
(see tools/explorer_export.py, ``export_frames``). The explorers are then put in the order of the widget outputs of
the notebook, so the k-th explorer matches the k-th widget output of the stored notebook.

The result is cached in build/explorer-frames/NN_topic/ and keyed by a hash of the notebook, of every
helpers/*.py source and of the two tools that draw them, so a rebuild that changed nothing runs no kernel at all.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tools.explorer_player import WIDGET_VIEW

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CACHE = ROOT / "build" / "explorer-frames"
MODES = ("compute", "cached", "reuse", "off")


def source_hash(notebook: Path) -> str:
    """What the frames depend on: the notebook, the helpers package, this tool and tools/explorer_export.py."""
    digest = hashlib.sha256(notebook.read_bytes())
    for path in sorted((ROOT / "helpers").rglob("*.py")) + [
        Path(__file__),
        Path(__file__).with_name("explorer_export.py"),
    ]:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def widget_model_ids(nb) -> list[str]:
    """The model ids of the widget outputs, in output order."""
    ids = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                ids.append(view["model_id"])
    return ids


@contextlib.contextmanager
def kernel_env(**values: str | None):
    """The environment a kernel started inside inherits: this checkout first on PYTHONPATH, and each
    of `values` set (None: unset); the old values come back afterwards."""

    def apply(env: dict) -> None:
        for key, value in env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", *values)}
    try:
        apply({**values, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), saved["PYTHONPATH"]) if p)})
        yield
    finally:
        apply(saved)


def compute(notebook: Path, target: Path) -> list[dict]:
    """Execute a copy of `notebook` with the frames hook on; write target/NN/ (one per displayed
    explorer, in output order) and target/explorers.json; return the manifests."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    with tempfile.TemporaryDirectory(prefix="explorer-frames-") as tmp:
        raw = Path(tmp) / "raw"
        raw.mkdir()
        with kernel_env(COURSE_EXPLORER_FRAMES=str(raw), OMP_NUM_THREADS="1"):
            NotebookClient(
                nb,
                timeout=1800,  # a joint grid of 240 frames on a busy 2-core machine takes minutes
                kernel_name="python3",
                record_timing=False,
                resources={"metadata": {"path": str(notebook.parent)}},
            ).execute()
        by_model = {}
        for folder in sorted(p for p in raw.iterdir() if p.is_dir()):
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            by_model[manifest["model_id"]] = (folder, manifest)
        shown = [by_model[m] for m in widget_model_ids(nb) if m in by_model]
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        manifests = []
        for k, (folder, manifest) in enumerate(shown):
            shutil.copytree(folder, target / f"{k:02d}")
            manifests.append(manifest)
    (target / "explorers.json").write_text(json.dumps({"count": len(manifests)}), encoding="utf-8")
    return manifests


def frames_for(notebook: Path, mode: str = "cached", cache: Path = CACHE) -> list[tuple[Path, dict]]:
    """[(folder with the PNGs, manifest)] for each explorer of `notebook`, in widget-output order.

    mode "cached": reuse the cache when its hash matches, compute otherwise; "reuse": the cache
    or nothing (never runs a notebook); "compute": always compute; "off": none (the pages keep
    the first frame only)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if mode == "off":
        return []
    key = source_hash(notebook)
    target = cache / notebook.stem / key
    if mode == "reuse" and not (target / "explorers.json").exists():
        import nbformat

        if widget_model_ids(nbformat.read(notebook, as_version=4)):  # the notebook has explorers
            print(
                f"explorer_frames: {notebook.stem}: no frames for the current notebook and helpers/ in {cache} "
                "(--frames reuse computes none): its explorers keep their first picture; "
                "run `python3 course.py site` or use --frames cached",
                file=sys.stderr,
            )
        return []
    if mode == "compute" or not (target / "explorers.json").exists():
        started = time.monotonic()
        shutil.rmtree(cache / notebook.stem, ignore_errors=True)  # older keys are stale
        manifests = compute(notebook, target)
        frames = sum(len(m["frames"]) for m in manifests)
        size = sum(f.stat().st_size for f in target.rglob("*.png"))
        print(
            f"explorer_frames: {notebook.stem}: {len(manifests)} explorer(s), {frames} frames, "
            f"{size / 2**20:.1f} MB in {time.monotonic() - started:.0f} s",
            flush=True,
        )
        for k, manifest in enumerate(manifests):
            for key, texts in list(manifest.get("outside", {}).items())[:3]:
                print(f"explorer_frames: {notebook.stem} explorer {k} frame {key}: text outside the canvas: {texts}")
    count = json.loads((target / "explorers.json").read_text())["count"]
    return [
        (target / f"{k:02d}", json.loads((target / f"{k:02d}" / "manifest.json").read_text(encoding="utf-8")))
        for k in range(count)
    ]


def notebooks_for(numbers: list[str]) -> list[Path]:
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not numbers or p.name[:2] in numbers]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numbers", nargs="*")
    parser.add_argument("--mode", choices=MODES[:2], default="cached")
    args = parser.parse_args(argv)
    for notebook in notebooks_for(args.numbers):
        for folder, manifest in frames_for(notebook, args.mode):
            print(
                f"{folder}: {len(manifest['frames'])} frames ({manifest['mode']}), "
                f"{', '.join(c['name'] for c in manifest['controls'])}; "
                f"{len(manifest.get('outside', {}))} with text outside the canvas"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
