"""Train the toy "previous token and first token" models of notebook 07 and store the results.

    .venv/bin/python scripts/train_multihead.py                    # 15 runs, 243 s on one thread of a busy 2-core machine
    .venv/bin/python scripts/train_multihead.py --checkpoints-only # only the 2-head seeds 1 and 4 (about 10 s)

Task and model: ``helpers.lessons.multi_head_attention`` (generated from notebook 07): tokens x_0..x_7
from a vocabulary of 8, target y_t = (x_{t-1} - x_0) mod 8, scored at t >= 2; token + position
embeddings, one ``MultiHeadAttention`` layer (d_model 32), a per-position MLP. For num_heads in (1, 2, 4)
and seeds 0..4 it trains 400 Adam steps (the loop of ``train_offset_model``) and records the test
accuracy, the first step (checked every 25) with test accuracy >= 0.99, and each head's mean weight on
the previous and on the first token. Writes (single thread, fixed seeds; the set-up is recorded):

    data/multihead_runs.json       the table above
    data/multihead_offset_h2.pt    state_dict of the 2-head model, seed 0
    data/multihead_offset_h1.pt    state_dict of the 1-head model, seed 0
    data/multihead_offset_h2_seed1.pt, _seed4.pt   the 2-head models of seeds 1 and 4 (notebook 07 reads
                                   their rows: the heads swap roles in one row), with their set-up under
                                   "checkpoints" in the JSON (--checkpoints-only retrains just these two and
                                   keeps the table: a 400-step run's last digits differ between CPUs)
"""

from __future__ import annotations

import sys
import time

import torch

from helpers.data import DATA_DIR, load_json, numeric_setup, save_json
from helpers.lessons.multi_head_attention import (
    OffsetModel,
    head_profile,
    make_offset_batch,
    offset_loss,
)

HEADS = (1, 2, 4)
SEEDS = (0, 1, 2, 3, 4)
STEPS, EVAL_EVERY, BATCH, LR, D_MODEL = 400, 25, 128, 1e-2, 32
TEST_SEED, TEST_SIZE = 12345, 2000
ROLE_SWAP_SEEDS = (1, 4)  # 2-head seeds whose checkpoints notebook 07 reads row by row


def checkpoint_name(num_heads: int, seed: int) -> str:
    return f"multihead_offset_h{num_heads}.pt" if seed == 0 else f"multihead_offset_h{num_heads}_seed{seed}.pt"


def save_checkpoint(model, record: dict) -> dict:
    """Write the state_dict; return the note on its set-up that goes under "checkpoints" in the JSON."""
    name = checkpoint_name(record["num_heads"], record["seed"])
    torch.save(model.state_dict(), DATA_DIR / name)
    return {"file": name, "profile": record["profile"], "accuracy": record["accuracy"], **numeric_setup()}


def run(num_heads: int, seed: int, test):
    """One training run: the loop of train_offset_model plus evaluations every EVAL_EVERY steps."""
    x_test, y_test = test
    torch.manual_seed(seed)
    model = OffsetModel(num_heads, D_MODEL)
    gen = torch.Generator().manual_seed(seed + 1000)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    reached = None
    for step in range(1, STEPS + 1):
        x, y = make_offset_batch(BATCH, gen)
        loss = offset_loss(model(x)[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if reached is None and step % EVAL_EVERY == 0:
            if head_profile(model.eval(), x_test, y_test)[0] >= 0.99:
                reached = step
            model.train()
    acc, _, profile = head_profile(model.eval(), x_test, y_test)
    return model, {
        "num_heads": num_heads,
        "seed": seed,
        "accuracy": round(acc, 4),
        "steps_to_99": reached,
        "final_loss": round(loss.item(), 5),
        "profile": [[round(v, 4) for v in row] for row in profile.tolist()],
    }


def checkpoints_only(test) -> None:
    """Retrain only the role-swap seeds, keep the stored table, record these checkpoints' set-up."""
    stored = load_json("multihead_runs.json")
    notes = stored.get("checkpoints", [])
    for seed in ROLE_SWAP_SEEDS:
        model, record = run(2, seed, test)
        print(record, flush=True)
        notes = [n for n in notes if n["file"] != checkpoint_name(2, seed)] + [save_checkpoint(model, record)]
    save_json("multihead_runs.json", {**stored, "checkpoints": notes})


def main() -> None:
    torch.set_num_threads(1)
    test = make_offset_batch(TEST_SIZE, torch.Generator().manual_seed(TEST_SEED))
    if "--checkpoints-only" in sys.argv[1:]:
        checkpoints_only(test)
        return
    runs, notes, start = [], [], time.perf_counter()
    for h in HEADS:
        for seed in SEEDS:
            model, record = run(h, seed, test)
            runs.append(record)
            print(record, flush=True)
            if seed == 0 and h in (1, 2):
                torch.save(model.state_dict(), DATA_DIR / checkpoint_name(h, seed))
            if h == 2 and seed in ROLE_SWAP_SEEDS:
                notes.append(save_checkpoint(model, record))
    save_json(
        "multihead_runs.json",
        {
            "steps": STEPS,
            "eval_every": EVAL_EVERY,
            "batch": BATCH,
            "lr": LR,
            "d_model": D_MODEL,
            "test_seed": TEST_SEED,
            "test_size": TEST_SIZE,
            "produced_by": {
                "script": "scripts/train_multihead.py",
                **numeric_setup(),
                "seconds": round(time.perf_counter() - start),
            },
            "runs": runs,
            "checkpoints": notes,
        },
    )
    print(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
