"""Train the three GRU encoder-decoders of notebook 02 on the reversal task and store them in data/.

    .venv/bin/python scripts/train_seq2seq.py            # all three models
    .venv/bin/python scripts/train_seq2seq.py none dot   # only these (the JSON keeps the others)

The models are the notebook's own code (helpers.lessons.seq2seq_attention, generated from the
cells of notebooks/src/02_seq2seq_attention.py tagged "save"): "none" (one fixed context
vector), "additive" (Bahdanau scores) and "dot" (Luong (Wq)·k scores), same sizes, same seeded
batches. Each is trained in float32 with Adam, teacher forcing and a cosine learning-rate decay on
inputs of length 1..max_len, then evaluated in float64 by greedy decoding on a seeded test set of
eval_n inputs for every length 1..max_len + extra_lengths (the last ones lie beyond training).

Writes data/seq2seq_{none,additive,dot}.pt (config + state_dict) and data/seq2seq_results.json
(config, the set-up that trained them, parameter counts, loss curves, accuracy vs length, accuracy
by output position at max_len). One thread; deterministic on one machine. Training in float32
drifts across CPUs (vector width, BLAS), so a rerun elsewhere gives slightly different models;
the notebook reads the stored ones. About 1.5-3.5 minutes per model on one quiet core.
"""

from __future__ import annotations

import sys
import time

import torch

from helpers import seed_everything
from helpers.data import DATA_DIR, load_json, numeric_setup, save_json
from helpers.lessons.seq2seq_attention import (
    Seq2Seq,
    accuracy_by_length,
    accuracy_by_position,
    checkpoint,
    model_from_checkpoint,
    train_steps,
)

KINDS = ("none", "additive", "dot")
CONFIG = {
    "emb_dim": 16,
    "hidden_dim": 64,  # model
    "min_len": 1,
    "max_len": 20,
    "batch_size": 64,  # task
    "steps": 1000,
    "lr": 3e-3,
    "train_seed": 0,  # training (float32)
    "eval_n": 200,
    "eval_seed": 1234,
    "extra_lengths": 8,  # evaluation (float64, greedy)
}
LOSS_EVERY = 25  # the JSON stores the mean loss of each block of this many steps


def setup_used() -> dict:
    """What produced the numbers: torch, CPU, kernels, threads."""
    return {**numeric_setup(), "date": time.strftime("%Y-%m-%d")}


def train_one(kind: str) -> dict:
    """Train one model, save its checkpoint, return its entry for the JSON."""
    c = CONFIG
    seed_everything(c["train_seed"])  # same initial draws and batches for every kind
    model = Seq2Seq(kind, emb_dim=c["emb_dim"], hidden_dim=c["hidden_dim"])
    start = time.perf_counter()
    losses = train_steps(
        model,
        c["steps"],
        seed=c["train_seed"],
        batch_size=c["batch_size"],
        min_len=c["min_len"],
        max_len=c["max_len"],
        lr=c["lr"],
        cosine=True,
        log_every=100,
    )
    seconds = time.perf_counter() - start
    ckpt = checkpoint(model)
    torch.save(ckpt, DATA_DIR / f"seq2seq_{kind}.pt")
    evaluated = model_from_checkpoint(ckpt)  # float64, as the notebook evaluates
    lengths = range(1, c["max_len"] + c["extra_lengths"] + 1)
    blocks = [losses[i : i + LOSS_EVERY] for i in range(0, len(losses), LOSS_EVERY)]
    return {
        "params": sum(p.numel() for p in model.parameters()),
        "train_seconds": round(seconds, 1),
        "loss_curve": {
            "step": [min(i + LOSS_EVERY, len(losses)) for i in range(0, len(losses), LOSS_EVERY)],
            "loss": [round(sum(b) / len(b), 4) for b in blocks],
        },
        "accuracy": accuracy_by_length(evaluated, list(lengths), n=c["eval_n"], seed=c["eval_seed"]),
        "position_accuracy": [
            round(float(a), 4)
            for a in accuracy_by_position(evaluated, c["max_len"], n=c["eval_n"], seed=c["eval_seed"])
        ],
    }


def main(kinds: list[str]) -> int:
    torch.set_num_threads(1)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        print(f"unknown model kinds {bad}; choose from {KINDS}")
        return 2
    path = DATA_DIR / "seq2seq_results.json"
    results = load_json(path.name) if path.exists() and set(kinds) != set(KINDS) else {}
    if results.get("config", CONFIG) != CONFIG:
        results = {}  # a changed config invalidates the models trained under the old one
    results["config"] = CONFIG
    results["setup"] = setup_used()
    models = results.setdefault("models", {})
    start = time.perf_counter()
    for kind in kinds:
        print(f"== {kind}", flush=True)
        models[kind] = train_one(kind)
        acc = models[kind]["accuracy"]
        print(
            f"   {models[kind]['train_seconds']} s; sequence accuracy at L=5/10/15/20:",
            [acc["sequence"][acc["length"].index(n)] for n in (5, 10, 15, 20)],
            flush=True,
        )
    results["setup"]["total_seconds"] = round(time.perf_counter() - start, 1)
    results["models"] = {k: models[k] for k in KINDS if k in models}
    save_json(path.name, results)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(KINDS)))
