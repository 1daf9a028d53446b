"""Attention-dropout sweep for notebook 06: writes data/dropout_sweep.json.

    .venv/bin/python scripts/train_dropout.py        # about 1 minute on one CPU thread

Trains ``helpers.dropout.TinyAttentionClassifier`` on the "does the first token appear again?"
task (256 training sequences, 2000 validation sequences) for every attention-dropout rate in
P_VALUES and every seed in SEEDS, 400 full-batch Adam steps each, and stores the eval-mode
train/validation loss, accuracy and attention entropy, plus loss curves every 20 steps.
Deterministic: single-threaded, fixed data seeds, ``seed`` sets the initial weights and the
dropout draws. The notebook re-trains seed 0 live and checks it against this file.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.data import save_json  # noqa: E402
from helpers.dropout import train_classifier  # noqa: E402

P_VALUES = [0.0, 0.1, 0.2, 0.3, 0.5, 0.7]
SEEDS = [0, 1, 2, 3, 4]
SETTINGS = {"n_train": 256, "n_val": 2000, "steps": 400, "lr": 1e-2}
EVAL_EVERY = 20


def _rounded(obj, digits: int = 5):
    if isinstance(obj, float):
        return round(obj, digits)
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v, digits) for v in obj]
    return obj


def main() -> None:
    torch.set_num_threads(1)
    start = time.perf_counter()
    runs = []
    for p in P_VALUES:
        for seed in SEEDS:
            runs.append(_rounded(train_classifier(p, seed=seed, eval_every=EVAL_EVERY, **SETTINGS)))
            r = runs[-1]
            print(f"p={p:.1f} seed={seed}: train acc {r['train_acc']:.3f}, val acc {r['val_acc']:.3f}, "
                  f"val loss {r['val_loss']:.3f}", flush=True)
    path = save_json("dropout_sweep.json", {
        "task": "label 1 if the first token appears again (vocab 12, length 8)",
        "settings": {**SETTINGS, "eval_every": EVAL_EVERY, "p_values": P_VALUES, "seeds": SEEDS,
                     "torch": torch.__version__},
        "runs": runs,
    })
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
