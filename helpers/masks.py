"""Notebook 09 (masks): padding and causal masks, the NaN pitfall, the mask slider, checkers.

Convention everywhere: a boolean mask is True where a query MAY attend a key (the same as
``torch.nn.functional.scaled_dot_product_attention``; ``torch.nn.MultiheadAttention`` is the opposite).
"""

from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch

from .attention import causal_mask, softmax
from .exercises import Wrong, _call, exercise
from .plots import attention_heatmap, to_numpy

__all__ = [
    "PAD",
    "pad_batch",
    "padding_mask",
    "attention_mask",
    "fully_masked_rows",
    "naive_masked_attention",
    "additive_mask",
    "count_nan",
    "draw_mask",
    "draw_masked_attention",
    "mask_explorer",
]

PAD = "[PAD]"


# --------------------------------------------------------------------------- checks


def _as_lengths(lengths) -> torch.Tensor:
    """Lengths as a 1-D int64 tensor of non-negative integers."""
    if isinstance(lengths, (str, bytes)) or lengths is None:
        raise TypeError(f"lengths must be a list or 1-D tensor of integers, got {type(lengths).__name__}")
    try:
        t = torch.as_tensor(lengths)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"lengths must be a list or 1-D tensor of integers, got {type(lengths).__name__}") from None
    if t.dtype == torch.bool or t.is_floating_point() or t.is_complex():
        raise TypeError(f"lengths must hold integers, got dtype {t.dtype}")
    if t.dim() != 1:
        raise ValueError(f"lengths must be 1-D (one length per sentence), got shape {tuple(t.shape)}")
    if (t < 0).any():
        raise ValueError(f"lengths must be >= 0, got {t.tolist()}")
    return t.long()


def _as_size(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _check_bool_mask(mask) -> torch.Tensor:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be boolean (True = may attend), got dtype {mask.dtype}")
    if mask.dim() < 1:
        raise ValueError(f"mask must have at least 1 dimension, got shape {tuple(mask.shape)}")
    return mask


# --------------------------------------------------------------------------- building masks


def pad_batch(sentences, pad: str = PAD) -> tuple[list[list[str]], torch.Tensor]:
    """Split sentences on spaces (or take token lists), pad to the longest; return tokens and lengths."""
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, (list, tuple)) or not sentences:
        raise TypeError(f"sentences must be a non-empty list of strings or token lists, got {sentences!r:.60}")
    tokens = []
    for s in sentences:
        if isinstance(s, str):
            tokens.append(s.split())
        elif isinstance(s, (list, tuple)) and all(isinstance(t, str) for t in s):
            tokens.append(list(s))
        else:
            raise TypeError(f"each sentence must be a string or a list of strings, got {s!r:.60}")
    t = max(len(toks) for toks in tokens)
    lengths = torch.tensor([len(toks) for toks in tokens])  # (B,)
    return [toks + [pad] * (t - len(toks)) for toks in tokens], lengths


def padding_mask(lengths, t: int) -> torch.Tensor:
    """(B, T) boolean: True at the first ``lengths[b]`` (real) positions, False at the padding."""
    lengths, t = _as_lengths(lengths), _as_size("T", t)
    if (lengths > t).any():
        raise ValueError(f"every length must be <= T={t}, got lengths {lengths.tolist()}")
    return torch.arange(t) < lengths[:, None]  # (B, T)


def attention_mask(lengths, t: int, *, causal: bool = False, t_q: int | None = None,
                   mask_queries: bool = False) -> torch.Tensor:
    """(B, T_q, T) boolean: key padding (and the causal triangle); query rows stay open unless ``mask_queries``.

    ``t`` is the key length; ``t_q`` the query length (default ``t``, self-attention).
    ``mask_queries=True`` also closes the padded query rows (self-attention only): the
    "both sides" mask of many tutorials, whose padded rows are entirely False.
    """
    keys = padding_mask(lengths, t)  # (B, T_k)
    t_q = t if t_q is None else _as_size("t_q", t_q)
    mask = keys[:, None, :].expand(-1, t_q, -1)  # (B, T_q, T_k)
    if causal:
        mask = mask & causal_mask(t_q, t)
    if mask_queries:
        if t_q != t:
            raise ValueError(f"mask_queries needs self-attention (t_q == t), got t_q={t_q}, t={t}")
        mask = mask & keys[:, :, None]
    return mask.contiguous()


def fully_masked_rows(mask) -> torch.Tensor:
    """Boolean (...,) over the last dim: True for a query row with no key it may attend."""
    return ~_check_bool_mask(mask).any(dim=-1)


def additive_mask(mask, dtype: torch.dtype = torch.float32, fill: float = float("-inf")) -> torch.Tensor:
    """Float mask to add to the scores: 0 where True (may attend), ``fill`` where False."""
    mask = _check_bool_mask(mask)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch.dtype, got {dtype!r}")
    if isinstance(fill, bool) or not isinstance(fill, numbers.Real) or fill > 0 or fill != fill:
        raise ValueError(f"fill must be a number <= 0 (or -inf), got {fill!r}")
    # Converting the Python float keeps the dtype's own overflow (-1e9 in float16 becomes -inf).
    fill_value = torch.tensor(float(fill)).to(dtype)
    return torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, fill_value)


def naive_masked_attention(query, key, value, mask, fill: float = float("-inf")):
    """The common recipe: scores.masked_fill(~mask, fill), torch.softmax, weights @ v; returns (out, weights).

    With ``fill=-inf`` a fully masked row gives NaN; with a large finite ``fill`` it gives uniform weights.
    """
    for name, x in (("query", query), ("key", key), ("value", value)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point torch.Tensor, got {type(x).__name__}")
    mask = _check_bool_mask(mask)
    if isinstance(fill, bool) or not isinstance(fill, numbers.Real) or fill > 0:
        raise ValueError(f"fill must be a number <= 0 (or -inf), got {fill!r}")
    scores = query @ key.transpose(-2, -1) / query.shape[-1] ** 0.5  # (..., T_q, T_k)
    try:
        scores = scores.masked_fill(~mask, fill)
    except RuntimeError as exc:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not fit the scores {tuple(scores.shape)} "
                         f"or fill {fill} overflows {scores.dtype}: {exc}") from None
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights  # (..., T_q, d_v), (..., T_q, T_k)


def count_nan(x) -> int:
    """Number of NaN entries in a tensor."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    return int(torch.isnan(x).sum()) if x.is_floating_point() else 0


# --------------------------------------------------------------------------- pictures


def draw_mask(mask, query_labels=None, key_labels=None, *, ax=None, title: str = "마스크 (1 = 볼 수 있음)",
              annotate: bool = True):
    """Heatmap of one (T_q, T_k) boolean mask: dark green 1 = may attend, white 0 = masked."""
    mask = _check_bool_mask(mask)
    if mask.dim() != 2:
        raise ValueError(f"draw one (T_q, T_k) mask at a time, got shape {tuple(mask.shape)}")
    return attention_heatmap(mask.double(), query_labels, key_labels, ax=ax, title=title, cmap="Greens",
                             vmin=0.0, vmax=1.6, colorbar=False, fmt=".0f", annotate=annotate)


def draw_masked_attention(scores, tokens, length: int, causal: bool = False, axes=None, *,
                          compact: bool = False) -> np.ndarray:
    """Mask (left) and weights (right) of one sentence whose first ``length`` tokens are real; return the weights."""
    s = torch.as_tensor(to_numpy(scores), dtype=torch.float64)
    t = len(tokens)
    if s.dim() != 2 or s.shape != (t, t):
        raise ValueError(f"need a square (T, T) score matrix with one token per row: "
                         f"{t} tokens, scores of shape {tuple(s.shape)}")
    if isinstance(length, bool) or not isinstance(length, (numbers.Integral, np.integer)) or not 1 <= length <= t:
        raise ValueError(f"length must be an integer in [1, {t}], got {length!r}")
    mask = attention_mask([int(length)], t, causal=bool(causal))[0]  # (T, T)
    weights = softmax(s.masked_fill(~mask, float("-inf")))  # (T, T)
    labels = list(tokens[:length]) + [PAD] * (t - length)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11.0, 4.4))
    left, right = axes
    kind = "패딩 + 인과" if causal else "패딩"
    draw_mask(mask, labels, labels, ax=left, annotate=not compact,
              title=f"{kind} 마스크: 실제 {length}개, 패딩 {t - length}개")
    attention_heatmap(weights, labels, labels, ax=right, vmax=1.0, annotate=not compact, colorbar=not compact,
                      title="가중치 (가려진 칸 = 0)")
    return weights.numpy()


def mask_explorer(scores, tokens, length: int | None = None, causal: bool = False):
    """A slider for the number of real tokens and a causal checkbox, redrawing ``draw_masked_attention``."""
    import ipywidgets as widgets

    t = len(tokens)
    slider = widgets.IntSlider(value=t if length is None else length, min=1, max=t, step=1,
                               description="실제 토큰 수", continuous_update=False,
                               style={"description_width": "initial"})
    box = widgets.Checkbox(value=causal, description="인과 마스크")

    def redraw(length, causal):
        draw_masked_attention(scores, tokens, length, causal)
        plt.show()

    out = widgets.interactive_output(redraw, {"length": slider, "causal": box})
    return widgets.VBox([widgets.HBox([slider, box]), out])


# --------------------------------------------------------------------------- exercises


def _as_answer_mask(got, what: str, want_shape) -> torch.Tensor:
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"{what}는 torch.Tensor를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
    if tuple(got.shape) != tuple(want_shape):
        raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. (B, T, T) = {tuple(want_shape)}이어야 합니다 "
                    "(쿼리 행마다 키 열 하나씩).")
    if got.dtype != torch.bool:
        raise Wrong(f"{what}의 dtype이 {got.dtype}입니다. 불리언 마스크(True = 볼 수 있음)를 돌려주세요: "
                    "비교 연산(<, >=)이나 & 로 만들면 bool이 됩니다.")
    return got


_EX1_CASES = [([3, 1, 4], 4), ([2, 5], 5), ([1], 3)]


@exercise("09-1")
def _check_make_mask(fn):
    for lengths, t in _EX1_CASES:
        what = f"make_mask({lengths}, {t})"
        want = attention_mask(lengths, t, causal=True)
        got = _as_answer_mask(_call(fn, torch.tensor(lengths), t, what=what), what, want.shape)
        if torch.equal(got, want):
            continue
        if torch.equal(got, ~want):
            raise Wrong(f"{what}: True/False가 뒤집혔습니다. 이 과정의 약속은 True = 볼 수 있음입니다 "
                        "(torch.nn.MultiheadAttention만 반대).")
        if torch.equal(got, attention_mask(lengths, t)):
            raise Wrong(f"{what}: 패딩만 가렸고 미래 키가 열려 있습니다. 인과 마스크(하삼각)와 &로 합치세요.")
        if torch.equal(got, causal_mask(t).expand(len(lengths), t, t)):
            raise Wrong(f"{what}: 인과 마스크만 있고 패딩 키가 열려 있습니다. 길이보다 뒤의 키 열을 가리세요.")
        if torch.equal(got, attention_mask(lengths, t, causal=True, mask_queries=True)):
            n = int(fully_masked_rows(got).sum())
            raise Wrong(f"{what}: 패딩 쿼리 행까지 가려서 전부 False인 행이 {n}개 생겼습니다. "
                        "-inf + torch.softmax라면 이 행들이 NaN이 됩니다. 키(열)만 가리세요.")
        upper = padding_mask(lengths, t)[:, None, :] & causal_mask(t).T
        if torch.equal(got, upper):
            raise Wrong(f"{what}: 상삼각을 썼습니다. 쿼리 i는 키 j ≤ i만 봐야 하므로 하삼각(tril)입니다.")
        b, i, j = (got != want).nonzero()[0].tolist()
        raise Wrong(f"{what}: 문장 {b}의 쿼리 {i}, 키 {j} 칸(0부터 센 번호)이 {got[b, i, j].item()}인데 {want[b, i, j].item()}여야 합니다 "
                    f"(길이 {lengths[b]}, 인과: j ≤ i).")
    return "패딩 키와 미래 키를 함께 가렸고, 길이가 1 이상이면 전부 False인 행이 없습니다."


def _ex2_cases():
    gen = torch.Generator().manual_seed(9)
    scores = torch.randn(2, 4, 5, generator=gen, dtype=torch.float64) * 3  # (B, T_q, T_k)
    mask = attention_mask([3, 5], 5, t_q=4).clone()
    mask[0, 2] = False  # one query with no visible key at all
    return [(scores, mask), (torch.tensor([[1000.0, 999.0, -5.0]], dtype=torch.float64),
                             torch.tensor([[True, True, False]]))]


@exercise("09-2")
def _check_safe_softmax(fn):
    for scores, mask in _ex2_cases():
        what = f"safe_softmax(scores {tuple(scores.shape)}, mask)"
        got = _call(fn, scores.clone(), mask.clone(), what=what)
        if not isinstance(got, torch.Tensor):
            raise Wrong(f"{what}는 텐서를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
        got = got.to(torch.float64)
        want = softmax(scores.masked_fill(~mask, float("-inf")))
        if got.shape != want.shape:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 점수와 같은 {tuple(want.shape)}이어야 합니다.")
        dead = fully_masked_rows(mask)
        if torch.isnan(got).any():
            rows = torch.isnan(got).any(-1).nonzero().tolist()
            if dead[torch.isnan(got).any(-1)].any():
                raise Wrong(f"{what}에 NaN이 있습니다 (행 {rows}). 모든 키가 가려진 행입니다: -inf만 있는 행을 "
                            "torch.softmax에 넣으면 0/0 = NaN입니다. 그 행의 가중치는 0으로 두세요.")
            raise Wrong(f"{what}에 NaN이 있습니다 (행 {rows}). 볼 수 있는 키가 있는 행인데 NaN이라면 exp가 넘친 것입니다 "
                        "(점수 1000 → e^1000 = inf, inf/inf = NaN): 지수를 취하기 전에 행의 최댓값을 빼세요.")
        if dead.any():
            row = got[dead]
            if torch.allclose(row, torch.full_like(row, 1.0 / mask.shape[-1])):
                raise Wrong(f"{what}: 모든 키가 가려진 행의 가중치가 모두 1/{mask.shape[-1]}로 균등합니다. "
                            "-1e9 같은 유한한 수로 채우면 이렇게 가려진 패딩을 고르게 섞습니다. 그 행은 전부 0이어야 합니다.")
            if not torch.equal(row, torch.zeros_like(row)):
                raise Wrong(f"{what}: 모든 키가 가려진 행의 가중치가 0이 아닙니다 (최대 {row.abs().max().item():.3g}). 전부 0이어야 합니다.")
        leaked = got.masked_select(~mask).abs().max().item() if (~mask).any() else 0.0
        if leaked > 1e-12:
            raise Wrong(f"{what}: 가려진 칸의 가중치가 0이 아닙니다 (최대 {leaked:.3g}). 마스크가 False인 점수를 -inf로 채우세요.")
        if not torch.isfinite(got).all():
            raise Wrong(f"{what}에 inf가 있습니다: 지수를 취하기 전에 행의 최댓값을 빼세요.")
        sums = got[~dead].sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-9):
            raise Wrong(f"{what}: 볼 수 있는 키가 있는 행의 합이 1이 아닙니다 ({[round(v, 4) for v in sums.tolist()]}).")
        if not torch.allclose(got, want, atol=1e-9):
            raise Wrong(f"{what}: 값이 기대와 다릅니다 (최대 차이 {(got - want).abs().max().item():.3g}).")
    return "가려진 칸은 정확히 0, 볼 키가 없는 행은 NaN도 균등 분포도 아닌 0입니다."


def _ex3_setup():
    gen = torch.Generator().manual_seed(3)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    q = torch.randn(1, 4, 8, generator=gen)  # (B, T_q, d)
    kv = torch.randn(1, 5, 8, generator=gen)  # (B, T_k, d)
    masks = [causal_mask(4, 5), attention_mask([3], 5, t_q=4)[0], attention_mask([2], 5, causal=True, t_q=4)[0]]
    return mha, q, kv, masks


@exercise("09-3")
def _check_to_torch_mask(fn):
    from .attention import MultiHeadAttention

    mha, q, kv, masks = _ex3_setup()
    ours = MultiHeadAttention.from_torch(mha).eval()
    for mask in masks:
        what = f"to_torch_mask(mask {tuple(mask.shape)})"
        got = _call(fn, mask.clone(), what=what)
        if not isinstance(got, torch.Tensor):
            raise Wrong(f"{what}는 텐서를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
        if tuple(got.shape) != tuple(mask.shape):
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 마스크와 같은 {tuple(mask.shape)}이어야 합니다.")
        if got.dtype == torch.bool and torch.equal(got, mask):
            raise Wrong(f"{what}: 마스크를 그대로 돌려줬습니다. torch.nn.MultiheadAttention의 bool attn_mask는 "
                        "True = 가림이라서, 우리 마스크를 그대로 넘기면 볼 칸과 가릴 칸이 뒤바뀝니다.")
        if got.is_floating_point() and torch.equal(got, mask.to(got.dtype)):
            raise Wrong(f"{what}: 1/0 float 마스크입니다. float attn_mask는 점수에 더해지므로 1을 더해도 아무것도 "
                        "가려지지 않습니다. 가릴 칸에 -inf, 볼 칸에 0을 넣으세요.")
        if got.is_floating_point() and (got[mask] < -1e4).all() and (got[~mask] == 0).all():
            raise Wrong(f"{what}: float 마스크에서 0과 -inf의 자리가 뒤바뀌었습니다. 볼 수 있는 칸(True)이 0, 가릴 칸(False)이 -inf여야 합니다.")
        with torch.no_grad():
            want, _ = ours(q, kv, mask=mask)
            try:
                out, _ = mha(q, kv, kv, attn_mask=got, need_weights=False)
            except Exception as exc:
                raise Wrong(f"{what}를 attn_mask로 넘기자 torch가 오류를 냈습니다: {type(exc).__name__}: {exc}") from None
        if torch.isnan(out).any():
            raise Wrong(f"{what}: torch 결과에 NaN이 있습니다. 어떤 쿼리 행이 모두 가려졌습니다 (True = 가림인지 확인하세요).")
        if not torch.allclose(out, want, atol=1e-5):
            raise Wrong(f"{what}: torch 결과가 우리 MultiHeadAttention(mask)와 다릅니다 "
                        f"(최대 차이 {(out - want).abs().max().item():.3g}). 볼 칸과 가릴 칸을 다시 확인하세요.")
    return "torch.nn.MultiheadAttention의 결과가 우리 구현과 같습니다: bool이면 ~mask, float이면 0/-inf."
