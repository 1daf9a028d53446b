"""Attention-dropout sweep for notebook 06: writes data/dropout_sweep.json.

    .venv/bin/python scripts/train_dropout.py            # the sweep: 150 runs, 760 s on one thread of a busy 2-core machine
    .venv/bin/python scripts/train_dropout.py --live     # print the notebook's live runs (for the tolerance)

Trains ``helpers.lessons.attention_dropout.PolarityClassifier`` (generated from notebook 06) on the
"more positive than negative tokens?" task (10% of labels flipped) for every training-set size in
N_TRAIN, attention-dropout rate in P_VALUES and seed in SEEDS: 300 full-batch Adam steps in float64;
eval-mode train/validation loss and accuracy, loss curves every 25 steps. ``seed`` sets the training
set, the initial weights and the dropout draws; the 4000 validation examples are fixed.

The notebook re-trains (n_train=128, p in {0, 0.2}, seed 0) live and compares with this file at
``live_check.tolerance``. That tolerance comes from running ``--live`` under the three numeric set-ups
of the brief (native, ATEN_CPU_CAPABILITY=default + MKL SSE4_2 + oneDNN SSE41 with 2 threads, avx2 with
2 threads): the largest differences measured are stored as ``measured_bound`` and the tolerance is a few times
larger (see MEASURED_BOUND below).
"""

from __future__ import annotations

import json
import sys
import time

import torch

from helpers.data import numeric_setup, save_json
from helpers.lessons.attention_dropout import train_classifier

N_TRAIN = [32, 64, 128, 256, 512, 1024]
P_VALUES = [0.0, 0.1, 0.2, 0.3, 0.5]
SEEDS = [0, 1, 2, 3, 4]
LIVE = [(128, 0.0, 0), (128, 0.2, 0)]
# Largest |difference| of the live runs' losses and accuracies between the three set-ups (see --live),
# measured 2026-11-23: the p = 0 run drifts (it overfits; float64 rounding differences grow over 300 steps),
# the p = 0.2 run agrees to 1e-8. The tolerance is about 4x (loss) and 3x (accuracy) the measured bound.
MEASURED_BOUND = {"loss": 0.024, "acc": 0.016}
TOLERANCE = {"loss": 0.1, "acc": 0.05}


def _rounded(obj, digits: int = 6):
    """Floats rounded to 6 decimals (the notebook reads 2-3 of them); keeps the file small."""
    if isinstance(obj, float):
        return round(obj, digits)
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v, digits) for v in obj]
    return obj


def live() -> None:
    out = {
        f"{n}/{p}/{s}": {
            m: train_classifier(n, p, seed=s)[m] for m in ("train_loss", "val_loss", "train_acc", "val_acc")
        }
        for n, p, s in LIVE
    }
    print(json.dumps(out))


def main() -> None:
    torch.set_num_threads(1)
    start = time.perf_counter()
    runs = []
    for n in N_TRAIN:
        for p in P_VALUES:
            for seed in SEEDS:
                r = _rounded(train_classifier(n, p, seed=seed))
                runs.append(r)
                print(
                    f"n={n} p={p:.1f} seed={seed}: train acc {r['train_acc']:.3f}, val acc {r['val_acc']:.3f}, "
                    f"val loss {r['val_loss']:.3f}",
                    flush=True,
                )
    path = save_json(
        "dropout_sweep.json",
        {
            "task": "[CLS] + 10 tokens from 24 (8 positive, 8 negative, 8 neutral); y = more positive than "
            "negative (tie: coin), 10% of labels flipped; 4000 fixed validation examples",
            "settings": {
                "n_train": N_TRAIN,
                "p_values": P_VALUES,
                "seeds": SEEDS,
                "steps": 300,
                "lr": 1e-2,
                "d": 16,
                "dtype": "float64",
                "eval_every": 25,
            },
            "produced_by": {
                "script": "scripts/train_dropout.py",
                **numeric_setup(),
                "seconds": round(time.perf_counter() - start),
            },
            "live_check": {
                "runs": [list(r) for r in LIVE],
                "measured_bound": MEASURED_BOUND,
                "tolerance": TOLERANCE,
                "how": "max |difference| of train/val loss and accuracy of the live runs between the "
                "three numeric set-ups (scripts/train_dropout.py --live under each)",
            },
            "runs": runs,
        },
    )
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    live() if "--live" in sys.argv else main()
