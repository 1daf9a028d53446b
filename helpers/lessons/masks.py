"""Generated from notebooks/src/09_masks.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers.lessons.attention_dropout import attention_dropout
from helpers.lessons.multi_head_attention import MultiHeadAttention
from helpers.lessons.query_key_value import attention_scores
from helpers.lessons.seq2seq_attention import padding_mask
from helpers.lessons.temperature import softmax_t
from helpers.lessons.weighted_average import softmax
from helpers.plots import attention_heatmap

PAD = "[PAD]"


def pad_batch(sentences, pad=PAD):
    """Split sentences on spaces, pad to the longest; return the token lists and the lengths (B,)."""
    tokens = [s.split() for s in sentences]
    t = max(len(toks) for toks in tokens)
    return [toks + [pad] * (t - len(toks)) for toks in tokens], torch.tensor([len(toks) for toks in tokens])


def count_nan(x):
    """Number of NaN entries in a tensor."""
    return int(torch.isnan(x).sum())


def fully_masked_rows(mask):
    """(...,) boolean: True for a query row with no key it may attend."""
    return ~mask.any(dim=-1)


def additive_mask(mask, dtype=torch.float32, fill=float("-inf")):
    """Float mask to add to the scores: 0 where True (may attend), fill where False (in dtype: -1e9 -> -inf in fp16)."""
    return torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, torch.tensor(float(fill)).to(dtype))


def causal_mask(t_q, t_k=None, device=None):  # -> (T_q, T_k) boolean
    """Query i may see key j only if j <= i (lower triangle; aligned top-left when T_q != T_k)."""
    t_k = t_q if t_k is None else t_k
    return torch.arange(t_k, device=device)[None, :] <= torch.arange(t_q, device=device)[:, None]  # [i, j] = j <= i


def attention_mask(lengths, t, causal=False, t_q=None, mask_queries=False):
    """(B, T_q, T_k) boolean: padded keys hidden (and the future if causal); query rows stay open."""
    keys = padding_mask(lengths, t)  # (B, T_k)
    t_q = t if t_q is None else t_q
    mask = keys[:, None, :].expand(-1, t_q, -1)  # (B, T_q, T_k): every query hides the padded columns
    if causal:
        mask = mask & causal_mask(t_q, t)
    if mask_queries:  # the "both sides" mask of many tutorials: padded query rows hidden too
        mask = mask & keys[:, :, None]
    return mask.contiguous()


def draw_mask(mask, query_labels=None, key_labels=None, ax=None, title="마스크 (1 = 볼 수 있음)", annotate=True):
    """Heatmap of one (T_q, T_k) boolean mask: green 1 = may attend, white 0 = hidden."""
    return attention_heatmap(mask.double(), query_labels, key_labels, ax=ax, title=title, cmap="Greens",
                             vmin=0.0, vmax=1.6, colorbar=False, fmt=".0f", annotate=annotate)


def token_names(ax, t, names):
    """Token names under and beside a t×t heatmap, where tick labels would sit (tick length + pad), as texts:
    a new name then redraws only its text, not the whole figure. Made with the widest of `names`, so the layout
    has room for every name; the axis labels are moved past them. Returns (names below, names beside)."""
    rc, renderer = plt.rcParams, ax.figure.canvas.get_renderer()
    probe = ax.text(0, 0, "", fontsize=rc["xtick.labelsize"])
    widths = {}
    for name in names:
        probe.set_text(name)
        widths[name] = probe.get_window_extent(renderer).width
    probe.remove()
    widest = max(names, key=widths.get)
    ax.set_xticks(range(t))
    ax.set_yticks(range(t))
    ax.tick_params(labelbottom=False, labelleft=False)
    gap_x = rc["xtick.major.size"] + rc["xtick.major.pad"]  # points from the axes to a tick label
    gap_y = rc["ytick.major.size"] + rc["ytick.major.pad"]
    below = [ax.annotate(widest, (j, 0), xycoords=ax.get_xaxis_transform(), xytext=(0, -gap_x),
                         textcoords="offset points", rotation=45, ha="right", va="top", fontsize=rc["xtick.labelsize"])
             for j in range(t)]
    beside = [ax.annotate(widest, (0, i), xycoords=ax.get_yaxis_transform(), xytext=(-gap_y, 0),
                          textcoords="offset points", ha="right", va="center", fontsize=rc["ytick.labelsize"])
              for i in range(t)]
    points = 72 / ax.figure.dpi  # points per pixel
    tall = below[0].get_window_extent(renderer).height * points  # the rotated name's height, in points
    wide = beside[0].get_window_extent(renderer).width * points
    # Without tick labels an axis label sits labelpad past the tick marks (pointing out, as here): add the pad
    # and the names.
    ax.set_xlabel("키(key)", labelpad=rc["xtick.major.pad"] + tall + rc["axes.labelpad"])
    ax.set_ylabel("쿼리(query)", labelpad=rc["ytick.major.pad"] + wide + rc["axes.labelpad"])
    return below, beside


def mask_view(ax_mask, ax_weights, scores, tokens, annotate=True):
    """Build the mask (left) and weight (right) heatmaps once; return update(length, causal) that redraws them."""
    t = len(tokens)
    s = torch.as_tensor(scores, dtype=torch.float64)
    im_mask = ax_mask.imshow(np.zeros((t, t)), cmap="Greens", vmin=0.0, vmax=1.6, aspect="auto")
    im_w = ax_weights.imshow(np.zeros((t, t)), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    texts = [[ax_weights.text(j, i, "", ha="center", va="center", fontsize=8) for j in range(t)]
             for i in range(t)] if annotate else []
    names = [token_names(ax, t, [*tokens, PAD]) for ax in (ax_mask, ax_weights)]  # [(below, beside)] per heatmap
    ax_weights.set_title("가중치 (가려진 칸 = 0)")

    def update(length, causal):
        mask = attention_mask(torch.tensor([length]), t, causal=causal)[0]  # (T, T)
        weights = softmax(s.masked_fill(~mask, float("-inf")))  # (T, T)
        im_mask.set_data(mask.double().numpy())
        im_w.set_data(weights.numpy())
        labels = list(tokens[:length]) + [PAD] * (t - length)
        for below, beside in names:
            for label, x_name, y_name in zip(labels, below, beside):
                x_name.set_text(label)
                y_name.set_text(label)
        for i, row in enumerate(texts):
            for j, text in enumerate(row):  # hidden cells stay blank: fewer texts to draw
                text.set_text(f"{weights[i, j]:.2f}" if mask[i, j] else "")
                text.set_color("white" if weights[i, j] > 0.6 else "black")
        kind = "패딩 + 인과" if causal else "패딩"
        ax_mask.set_title(f"{kind} 마스크: 실제 {length}개, 패딩 {t - length}개")
        return weights.numpy()

    return update


def mask_explorer(scores, tokens, length=None, causal=False):
    """A slider for the number of real tokens and a causal checkbox over one mask_view figure."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, (ax_mask, ax_weights) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=72)
    update = mask_view(ax_mask, ax_weights, scores, tokens)
    fig.tight_layout()
    controls = {"length": widgets.IntSlider(value=len(tokens) if length is None else length, min=1, max=len(tokens),
                                            description="실제 토큰 수", style={"description_width": "initial"}),
                "causal": widgets.Checkbox(value=causal, description="인과 마스크")}
    return Explorer(fig, update, controls)


def naive_masked_attention(q, k, v, mask, fill=float("-inf")):  # (..., T, d) each, mask (..., T_q, T_k)
    """The common recipe: scores.masked_fill(~mask, fill), torch.softmax, weights @ v; returns (out, weights)."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (..., T_q, T_k)
    weights = torch.softmax(scores.masked_fill(~mask, fill), dim=-1)  # a row with no key: 0/0 = NaN
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def safe_softmax(scores, dim=-1, temperature=1.0):  # (..., T) -> (..., T)
    """05's softmax_t, except that a slice that is all -inf (no key to see) gets all zeros, not NaN."""
    dead = torch.isneginf(scores).all(dim=dim, keepdim=True)                    # (..., 1): no key to see
    return softmax_t(scores.masked_fill(dead, 0.0), temperature, dim) * ~dead   # dead rows: uniform × 0 = 0


def masked_attention(q, k, v, mask=None, *, causal=False, temperature=1.0, dropout_p=0.0, training=False):
    """03's scores -> safe_softmax -> 06's dropout -> weighted sum; returns (output, weights)."""
    if causal:
        tri = causal_mask(q.shape[-2], k.shape[-2], device=q.device)            # (T_q, T_k)
        mask = tri if mask is None else mask & tri
    weights = safe_softmax(attention_scores(q, k, mask), temperature=temperature)   # (..., T_q, T_k)
    weights = attention_dropout(weights, dropout_p, training)
    return weights @ v, weights                                              # (..., T_q, d_v), (..., T_q, T_k)


class MaskedMultiHeadAttention(MultiHeadAttention):
    """07's module with masked_attention inside: a query with no key gets zeros; causal=True hides the future."""

    def attend(self, q, k, v, mask):                                         # (B, h, T, d) each
        return masked_attention(q, k, v, mask, dropout_p=self.dropout, training=self.training)

    def forward(self, query, key=None, value=None, mask=None, causal=False):
        if causal:
            t_k = query.shape[1] if key is None else key.shape[1]
            tri = causal_mask(query.shape[1], t_k, device=query.device)      # (T_q, T_k)
            mask = tri if mask is None else mask & tri
        return super().forward(query, key, value, mask)
