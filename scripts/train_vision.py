"""Train the tiny ViT of notebook 13 on sklearn's 8×8 digits and store the result.

    .venv/bin/python scripts/train_vision.py        # about 30 s on one CPU core (a minute on a busy one)

Model (TinyViT, written out in notebooks/src/13_attention_in_vision.py and generated into
helpers.lessons.attention_in_vision): 2×2 patches (16 tokens of 4 pixels) → Linear(4, 16), a [CLS] token,
learned position embeddings, two pre-norm blocks with notebook 09's MaskedMultiHeadAttention (2 heads)
and a GELU MLP (16 → 32 → 16), a linear head on [CLS]; 5,018 parameters. Data: the fixed 80/20
split of load_digits_split (seed 0: 1,438 training and 359 test images).
Training: train_vit (same module), Adam (lr 3e-3, cosine schedule), batch 64, EPOCHS epochs, seed 0,
single thread, so every run on one machine writes the same numbers; another CPU set-up changes
the last digits, so the record says which set-up produced it. Writes:

    data/vision_vit.pt      the model's state_dict (about 30 KB)
    data/vision_vit.json    configuration, per-epoch training loss, train/test accuracy, and the mean
                            [CLS]→patch weight of the last layer on patches with and without ink
"""

from __future__ import annotations

import time

import torch

from helpers.data import DATA_DIR, numeric_setup, save_json
from helpers.lessons.attention_in_vision import (
    cls_attention,
    ink_fraction,
    load_digits_split,
    train_vit,
    vit_accuracy,
)

EPOCHS, SEED, LR, BATCH = 120, 0, 3e-3, 64
MODEL = {
    "image_size": 8,
    "patch": 2,
    "channels": 1,
    "d_model": 16,
    "num_heads": 2,
    "depth": 2,
    "hidden": 32,
    "classes": 10,
}


def main() -> None:
    torch.set_num_threads(1)
    data = load_digits_split()
    start = time.perf_counter()
    model, history = train_vit(EPOCHS, SEED, lr=LR, batch=BATCH, data=data, **MODEL)
    x_train, y_train, x_test, y_test = data
    attn = cls_attention(model, x_test)  # (B, N)
    ink = ink_fraction(x_test, MODEL["patch"])  # (B, N)
    record = {
        "epochs": EPOCHS,
        "seed": SEED,
        "lr": LR,
        "batch": BATCH,
        "model": MODEL,
        "params": sum(p.numel() for p in model.parameters()),
        "train_size": len(y_train),
        "test_size": len(y_test),
        "train_accuracy": round(vit_accuracy(model, x_train, y_train), 4),
        "test_accuracy": round(vit_accuracy(model, x_test, y_test), 4),
        "loss": [round(v, 5) for v in history],
        "cls_weight_ink": round(attn[ink > 0].mean().item(), 4),
        "cls_weight_empty": round(attn[ink == 0].mean().item(), 4),
        "setup": numeric_setup(),
    }
    torch.save(model.state_dict(), DATA_DIR / "vision_vit.pt")
    save_json("vision_vit.json", record)
    print({k: v for k, v in record.items() if k != "loss"})
    print(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
