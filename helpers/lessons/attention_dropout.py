"""Generated from notebooks/src/06_attention_dropout.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.lessons.query_key_value import attention_scores
from helpers.lessons.weighted_average import softmax


def attention_dropout(weights, p, training=True):  # (..., T_q, T_k)
    """Zero each weight with probability p and scale the survivors by 1/(1-p) (train mode only)."""
    if not training or p == 0.0:
        return weights
    keep = torch.empty_like(weights).bernoulli_(1 - p)  # 1 = keep (probability 1-p), 0 = drop
    return weights * (keep / (1 - p))                   # survivors × 1/(1-p): the expectation stays w


def dropout_attention(q, k, v, mask=None, p=0.0, training=True):
    """03's scaled dot-product attention with attention dropout; returns (output, weights after dropout)."""
    weights = softmax(attention_scores(q, k, mask), dim=-1)   # (..., T_q, T_k), rows sum to 1
    weights = attention_dropout(weights, p, training)         # rows no longer sum to 1
    return weights @ v, weights                               # (..., T_q, d_v), (..., T_q, T_k)


class SelfAttentionSDPA(nn.Module):
    """Single-head self-attention through PyTorch's fused function, with attention dropout p."""

    def __init__(self, d_model, p):
        super().__init__()
        self.p = p
        self.qkv = nn.Linear(d_model, 3 * d_model)

    def forward(self, x):                                   # (B, T, C)
        q, k, v = self.qkv(x).chunk(3, dim=-1)              # (B, T, C) each
        # The function has no training flag: pass 0 in eval mode, or it drops there too.
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0)


def dropout_panels(axes, w, labels, n_avg=1000, seed=1):
    """Draw one dropout draw and the mean of n_avg draws on two axes; return update(p) that redraws in place."""
    t_q, t_k = w.shape
    images, row_names = [], []
    for ax in axes:
        images.append(ax.imshow(np.zeros((t_q, t_k)), cmap="Blues", vmin=0.0, vmax=1.5, aspect="auto"))
        ax.set_xticks(range(t_k), labels, fontsize=8)
        ax.set_yticks(range(t_q))
        # The row names with their sums are texts where the tick labels would sit (7 pt = tick length + pad),
        # so a new sum redraws only its text, not the whole figure.
        ax.tick_params(axis="y", labelleft=False)
        row_names.append([ax.annotate(f"{lab} (합 0.00)", (0, i), xycoords=ax.get_yaxis_transform(),
                                      xytext=(-7, 0), textcoords="offset points", ha="right", va="center")
                          for i, lab in enumerate(labels)])
        ax.set_xlabel("키(key)")
    texts = [[axes[0].text(j, i, "", ha="center", va="center", fontsize=8) for j in range(t_k)] for i in range(t_q)]

    def update(p):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            draws = attention_dropout(w.expand(n_avg, t_q, t_k), p)     # (n_avg, T_q, T_k)
        result = {"one": draws[0].numpy(), "mean": draws.mean(dim=0).numpy()}
        for i in range(t_q):                                            # numbers on the one-draw panel only
            for j in range(t_k):
                texts[i][j].set_text(f"{result['one'][i, j]:.2f}")
                texts[i][j].set_color("white" if result["one"][i, j] > 0.9 else "black")
        for ax, im, names, name in zip(axes, images, row_names, ("one", "mean")):
            mat = result[name]
            im.set_data(mat)
            for row_name, lab, s in zip(names, labels, mat.sum(axis=1)):
                row_name.set_text(f"{lab} (합 {s:.2f})")
            ax.set_title(f"p = {p:.2f}: " + ("한 번 뽑은 결과" if name == "one" else f"{n_avg}번 평균"))
        result.update(one_row_sums=result["one"].sum(axis=1), mean_row_sums=result["mean"].sum(axis=1))
        return result

    return update


VOCAB, CLS, SEQ_LEN, LABEL_NOISE = 24, 24, 10, 0.1   # tokens 0-7 positive, 8-15 negative, 16-23 neutral


def make_polarity_task(n, seed):
    """n sequences [CLS, x_1..x_10]; y = 1 if more positive than negative tokens (tie: a coin), 10% flipped."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=g)             # (n, T)
    score = (x < 8).sum(dim=1) - ((x >= 8) & (x < 16)).sum(dim=1)      # (n,): #positive - #negative
    y = torch.where(score == 0, torch.randint(0, 2, (n,), generator=g), (score > 0).long())
    y = torch.where(torch.rand(n, generator=g) < LABEL_NOISE, 1 - y, y)
    return torch.cat([torch.full((n, 1), CLS), x], dim=1), y          # (n, 1 + T), (n,)


class PolarityClassifier(nn.Module):
    """Embedding -> the [CLS] query attends over all tokens (attention dropout p) -> linear classifier."""

    def __init__(self, p=0.0, d=16):
        super().__init__()
        self.p = p
        self.embed = nn.Embedding(VOCAB + 1, d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.head = nn.Linear(d, 2)

    def forward(self, x):                                              # (B, 1 + T) token ids
        h = self.embed(x)                                              # (B, 1 + T, d)
        out, w = dropout_attention(self.q(h[:, :1]), self.k(h), self.v(h), p=self.p, training=self.training)  # (B, 1, d)
        return self.head(out[:, 0]), w[:, 0]                           # (B, 2), (B, 1 + T)


@torch.no_grad()
def evaluate(model, x, y):
    """Eval-mode loss and accuracy; the model's mode is restored."""
    was_training = model.training
    logits = model.eval()(x)[0]
    model.train(was_training)
    return F.cross_entropy(logits, y).item(), (logits.argmax(dim=-1) == y).double().mean().item()


def train_classifier(n_train, p, seed=0, steps=300, eval_every=25, n_val=4000):
    """Train a PolarityClassifier on n_train examples with attention dropout p; return metrics and curves."""
    x_tr, y_tr = make_polarity_task(n_train, seed=100 + seed)
    x_va, y_va = make_polarity_task(n_val, seed=7)
    torch.manual_seed(seed)
    model = PolarityClassifier(p).double()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    curve = {"step": [], "train_loss": [], "val_loss": []}
    for step in range(1, steps + 1):
        loss = F.cross_entropy(model.train()(x_tr)[0], y_tr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            curve["step"].append(step)
            curve["train_loss"].append(evaluate(model, x_tr, y_tr)[0])
            curve["val_loss"].append(evaluate(model, x_va, y_va)[0])
    (train_loss, train_acc), (val_loss, val_acc) = evaluate(model, x_tr, y_tr), evaluate(model, x_va, y_va)
    return {"n_train": n_train, "p": p, "seed": seed, "train_loss": train_loss, "train_acc": train_acc,
            "val_loss": val_loss, "val_acc": val_acc, "curve": curve}
