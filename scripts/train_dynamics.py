"""Train the key-value lookup model of notebook 12 and store how its attention changes.

    .venv/bin/python scripts/train_dynamics.py        # under 1 minute on one CPU core

Task, model and loop: the cells of notebooks/src/12_attention_during_training.py tagged "save"
(generated into helpers.lessons.attention_during_training): 6 "key:value" pairs (distinct keys A-J, values 0-9) then 4 queries "key?";
each query must output the value stored with its key, so its correct key is known in advance.
For seeds 0..4 it trains 1000 Adam steps (lr 1e-3, batch 64, single thread) and evaluates a fixed
probe batch (500 sequences) every 5 steps: loss, accuracy, attention mass on the correct keys,
row entropy and the weight on query positions. Deterministic on one machine and set-up; another CPU (vector width,
BLAS kernel) changes the last digits, so the files record the set-up that produced them. Writes:

    data/dynamics_curves.json       config, every step's training loss (seed 0), the probe curves
                                    of every seed and the final model's test-set numbers (~100 KB)
    data/dynamics_checkpoints.pt    state_dicts of seed 0 at STEPS_SAVED ({step: state_dict}, ~290 KB)
"""

from __future__ import annotations

import time

import torch

from helpers.data import DATA_DIR, numeric_setup, save_json
from helpers.lessons.attention_during_training import evaluate_lookup, make_lookup_batch, train_lookup

SEEDS = (0, 1, 2, 3, 4)
STEPS, EVAL_EVERY, BATCH, LR, D_MODEL = 1000, 5, 64, 1e-3, 32
STEPS_SAVED = (0, 25, 50, 75, 100, 125, 150, 200, 300, 500, 1000)
PROBE_SEED, PROBE_SIZE = 2024, 500
TEST_SEED, TEST_SIZE = 12345, 2000


def curve(evals: list[dict]) -> dict:
    """List of evaluate_lookup() records -> one list per quantity, rounded for a small readable file."""
    keys = evals[0].keys()
    return {k: [e[k] if k == "step" else round(e[k], 6) for e in evals] for k in keys}


def main() -> None:
    torch.set_num_threads(1)
    probe = make_lookup_batch(PROBE_SIZE, torch.Generator().manual_seed(PROBE_SEED))
    test = make_lookup_batch(TEST_SIZE, torch.Generator().manual_seed(TEST_SEED))
    runs, start = {}, time.perf_counter()
    for seed in SEEDS:
        save_at = STEPS_SAVED if seed == 0 else ()
        model, log = train_lookup(STEPS, seed, probe=probe, eval_every=EVAL_EVERY, save_at=save_at, lr=LR, batch=BATCH)
        runs[str(seed)] = {
            "probe": curve(log["eval"]),
            "test": {k: round(v, 6) for k, v in evaluate_lookup(model, test).items()},
        }
        if seed == 0:
            runs[str(seed)]["train_loss"] = [round(v, 6) for v in log["loss"]]
            torch.save(log["checkpoints"], DATA_DIR / "dynamics_checkpoints.pt")
        print(f"seed {seed}: {runs[str(seed)]['test']}  ({time.perf_counter() - start:.0f} s)", flush=True)
    save_json(
        "dynamics_curves.json",
        {
            "steps": STEPS,
            "eval_every": EVAL_EVERY,
            "batch": BATCH,
            "lr": LR,
            "d_model": D_MODEL,
            "steps_saved": list(STEPS_SAVED),
            "probe_seed": PROBE_SEED,
            "probe_size": PROBE_SIZE,
            "test_seed": TEST_SEED,
            "test_size": TEST_SIZE,
            "setup": numeric_setup(),
            "runs": runs,
        },
    )
    print(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
