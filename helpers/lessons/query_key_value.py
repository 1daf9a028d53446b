"""Generated from notebooks/src/03_query_key_value.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import torch
import torch.nn as nn

from helpers.lessons.weighted_average import softmax


def attention_scores(q, k, mask=None):
    """q kᵀ / √d_k, with -inf where the boolean mask is False (True = may attend)."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5   # (..., T_q, T_k), divided by √d_k
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))   # blocked keys: weight exactly 0
    return scores


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / √d_k) v with 01's softmax; returns (output, weights)."""
    weights = softmax(attention_scores(q, k, mask), dim=-1)   # (..., T_q, T_k), each row sums to 1
    return weights @ v, weights                               # (..., T_q, d_v), (..., T_q, T_k)


class SelfAttention(nn.Module):
    """One head of self-attention on (B, T, d_model): three projections, then attention."""

    def __init__(self, d_model, d_k, d_v=None):
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_v or d_k, bias=False)

    def forward(self, x, mask=None):                          # x: (B, T, d_model)
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)       # (B, T, d_k), (B, T, d_k), (B, T, d_v)
        return scaled_dot_product_attention(q, k, v, mask)  # (B, T, d_v), (B, T, T)


def query_explorer_figure(scores, tokens, n_panels=1, figsize=(8.0, 3.0)):
    """Bar panels of softmax(scale · scores[query]); returns (figure, update(query, scale, panel=0))."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n_panels, figsize=figsize, squeeze=False, sharey=True)
    panels = []
    for ax in axes[0]:
        bars = ax.bar(range(len(tokens)), [0.0] * len(tokens), color="tab:blue")
        labels = [ax.text(j, 0.0, "", ha="center", va="bottom", fontsize=8) for j in range(len(tokens))]
        ax.axhline(1 / len(tokens), color="gray", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(tokens)), tokens, rotation=45, fontsize=8)
        ax.set_ylim(0, 1.05)
        panels.append((ax, bars, labels))
    panels[0][0].set_ylabel("가중치")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.25, top=0.86, wspace=0.08)

    def update(query, scale, panel=0):
        ax, bars, labels = panels[panel]
        w = torch.softmax(scores[query] * scale, dim=-1)       # (T_k,)
        top = int(w.argmax())
        for j, (bar, label) in enumerate(zip(bars, labels)):
            bar.set_height(float(w[j]))
            bar.set_color("tab:orange" if j == top else "tab:blue")
            label.set_position((j, float(w[j])))
            label.set_text(f"{w[j]:.2f}")
        ax.set_title(f"쿼리 '{tokens[query]}' (배율 {scale:g}): 1위 '{tokens[top]}' {w[top]:.3f}", fontsize=9)
        return w

    return fig, update


CHICKEN_TOKENS = ["어제", "밤에", "배", "가", "고파서", "치킨을", "시켜서", "먹었다"]
CHICKEN_FEATURES = ["시간", "주어", "목적어", "형용사", "타동사"]


def chicken_example(c=3.0):
    """Designed X (8, 5), W_Q and W_K (5, 2), W_V (5, 5): each predicate looks for its argument."""
    roles = {"어제": 0, "밤에": 0, "배": 1, "고파서": 3, "치킨을": 2, "시켜서": 4, "먹었다": 4}
    X = torch.zeros(len(CHICKEN_TOKENS), 5, dtype=torch.float64)
    for token, feature in roles.items():
        X[CHICKEN_TOKENS.index(token), feature] = 1.0
    W_Q = torch.zeros(5, 2, dtype=torch.float64)
    W_Q[4, 0] = c      # a transitive verb asks: where is my object?
    W_Q[3, 1] = c      # an adjective (subject only) asks: where is my subject?
    W_K = torch.zeros(5, 2, dtype=torch.float64)
    W_K[2, 0] = c      # an object answers the first question
    W_K[1, 1] = c      # a subject answers the second
    return X, W_Q, W_K, torch.eye(5, dtype=torch.float64)
