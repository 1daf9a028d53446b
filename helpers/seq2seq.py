"""Notebook 02: a GRU encoder-decoder on a toy reversal task, with and without attention.

The task ("뒤집기"): read a sequence of letters, write it backwards. Output step t must
read input position L-1-t, so a model that learns to align shows an anti-diagonal.
"""

from __future__ import annotations

import numbers
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import softmax
from .exercises import Wrong, _call, exercise
from .plots import attention_heatmap, to_numpy, weight_bars

__all__ = [
    "PAD", "BOS", "NUM_SYMBOLS", "ATTENTION_KINDS",
    "make_reversal_batch", "reverse_padded", "padding_mask", "decode_tokens",
    "dot_product_attention", "DotProductAttention", "AdditiveAttention", "Seq2Seq",
    "train_steps", "accuracy_by_length", "accuracy_by_position", "alignment_accuracy",
    "model_from_checkpoint", "checkpoint",
    "draw_accuracy_vs_length", "draw_alignment_step", "alignment_explorer",
]

PAD, BOS = 0, 1  # token ids; letters start at 2
NUM_SYMBOLS = 20  # letters A..T
ATTENTION_KINDS = ("none", "additive", "dot")
_FIRST = 2


# --------------------------------------------------------------------------- checks


def _check_int(name: str, x, low: int = 1) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if x < low:
        raise ValueError(f"{name} must be >= {low}, got {x}")
    return int(x)


def _check_float_tensor(name: str, x, dim: int) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimensions, got shape {tuple(x.shape)}")


def _check_lengths(lengths) -> torch.Tensor:
    if not isinstance(lengths, torch.Tensor) or lengths.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"lengths must be an integer torch.Tensor, got {type(lengths).__name__}"
                        + (f" of dtype {lengths.dtype}" if isinstance(lengths, torch.Tensor) else ""))
    if lengths.dim() != 1 or (lengths < 1).any():
        raise ValueError(f"lengths must be a 1-D tensor of lengths >= 1, got {lengths.tolist()}")
    return lengths


# --------------------------------------------------------------------------- the task


def make_reversal_batch(n: int, min_len: int, max_len: int, *, seed: int,
                        num_symbols: int = NUM_SYMBOLS):
    """Return (src, tgt, lengths): n random letter sequences and their reversals, PAD-padded."""
    n, min_len, max_len = _check_int("n", n), _check_int("min_len", min_len), _check_int("max_len", max_len)
    num_symbols = _check_int("num_symbols", num_symbols, low=2)
    if min_len > max_len:
        raise ValueError(f"min_len ({min_len}) must be <= max_len ({max_len})")
    g = torch.Generator().manual_seed(int(seed))
    lengths = torch.randint(min_len, max_len + 1, (n,), generator=g)  # (B,)
    t = int(lengths.max())
    tokens = torch.randint(_FIRST, _FIRST + num_symbols, (n, t), generator=g)  # (B, T)
    src = tokens.masked_fill(~padding_mask(lengths, t), PAD)
    return src, reverse_padded(src, lengths), lengths


def reverse_padded(src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row's first `length` tokens, keeping the padding at the end."""
    lengths = _check_lengths(lengths)
    if not isinstance(src, torch.Tensor) or src.dim() != 2 or src.shape[0] != len(lengths):
        raise ValueError(f"src must be a (B, T) tensor with B = {len(lengths)}, "
                         f"got {tuple(src.shape) if isinstance(src, torch.Tensor) else type(src).__name__}")
    pos = torch.arange(src.shape[1])  # (T,)
    index = (lengths[:, None] - 1 - pos).clamp(min=0)  # (B, T): output t reads input L-1-t
    return src.gather(1, index).masked_fill(~padding_mask(lengths, src.shape[1]), PAD)


def padding_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """Boolean (B, T) mask, True at real tokens (position < length), False at padding."""
    lengths = _check_lengths(lengths)
    t = int(lengths.max()) if max_len is None else _check_int("max_len", max_len)
    if t < int(lengths.max()):
        raise ValueError(f"max_len ({t}) is shorter than the longest sequence ({int(lengths.max())})")
    return torch.arange(t)[None, :] < lengths[:, None]  # (B, T)


def decode_tokens(ids) -> list[str]:
    """Token ids to labels: letters, '·' for PAD, '<s>' for BOS."""
    out = []
    for i in torch.as_tensor(ids).reshape(-1).tolist():
        out.append("·" if i == PAD else "<s>" if i == BOS else chr(ord("A") + i - _FIRST))
    return out


# --------------------------------------------------------------------------- attention


def _check_attention_inputs(query, keys, values, mask):
    _check_float_tensor("query", query, 2)
    _check_float_tensor("keys", keys, 3)
    values = keys if values is None else values
    _check_float_tensor("values", values, 3)
    b, t = keys.shape[:2]
    if query.shape[0] != b or values.shape[:2] != (b, t):
        raise ValueError(
            "query (B, d_q), keys (B, T, d_k) and values (B, T, d_v) must share B and T, got "
            f"query {tuple(query.shape)}, keys {tuple(keys.shape)}, values {tuple(values.shape)}")
    if mask is not None:
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
            raise TypeError("mask must be a boolean tensor (True = real token), got "
                            + (f"dtype {mask.dtype}" if isinstance(mask, torch.Tensor) else type(mask).__name__))
        if mask.shape != (b, t):
            raise ValueError(f"mask must have shape (B, T) = {(b, t)}, got {tuple(mask.shape)}")
    return values


def _weights_and_context(scores, values, mask):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = softmax(scores, dim=-1)  # (B, T); an all-padding row gets zeros, not NaN
    context = (weights.unsqueeze(1) @ values).squeeze(1)  # (B, d_v)
    return context, weights


def dot_product_attention(query, keys, values=None, mask=None, *, scaled: bool = False):
    """One decoder step of Luong dot attention: score_j = q·k_j (÷√d if scaled); returns (context, weights)."""
    values = _check_attention_inputs(query, keys, values, mask)
    if query.shape[-1] != keys.shape[-1]:
        raise ValueError(f"query and keys need the same size for a dot product, got "
                         f"d_q={query.shape[-1]} and d_k={keys.shape[-1]}")
    scores = (keys @ query.unsqueeze(-1)).squeeze(-1)  # (B, T)
    if scaled:
        scores = scores / query.shape[-1] ** 0.5
    return _weights_and_context(scores, values, mask)


class DotProductAttention(nn.Module):
    """Luong attention: score = q·k, or qᵀWk with ``general=True`` (needed when the sizes differ)."""

    def __init__(self, query_dim: int, key_dim: int, *, general: bool = False, scaled: bool = False):
        super().__init__()
        query_dim, key_dim = _check_int("query_dim", query_dim), _check_int("key_dim", key_dim)
        if not general and query_dim != key_dim:
            raise ValueError(f"a plain dot product needs query_dim == key_dim, got {query_dim} and "
                             f"{key_dim}; use general=True to learn W")
        self.scaled = scaled
        self.W = nn.Linear(query_dim, key_dim, bias=False) if general else None

    def scores(self, query, keys):
        """Scores (B, T) before the softmax."""
        q = query if self.W is None else self.W(query)  # (B, d_k)
        s = (keys @ q.unsqueeze(-1)).squeeze(-1)  # (B, T)
        return s / keys.shape[-1] ** 0.5 if self.scaled else s

    def forward(self, query, keys, values=None, mask=None):
        """query (B, d_q), keys (B, T, d_k), values (B, T, d_v), mask (B, T) -> (context (B, d_v), weights (B, T))."""
        values = _check_attention_inputs(query, keys, values, mask)
        expected = keys.shape[-1] if self.W is None else self.W.in_features
        if query.shape[-1] != expected or (self.W is not None and keys.shape[-1] != self.W.out_features):
            raise ValueError(f"expected query (B, {expected}) and keys (B, T, "
                             f"{keys.shape[-1] if self.W is None else self.W.out_features}), "
                             f"got {tuple(query.shape)} and {tuple(keys.shape)}")
        return _weights_and_context(self.scores(query, keys), values, mask)


class AdditiveAttention(nn.Module):
    """Bahdanau attention: score_j = vᵀ tanh(W_q q + W_k k_j), a one-hidden-layer MLP per key."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int):
        super().__init__()
        self.W_q = nn.Linear(_check_int("query_dim", query_dim), _check_int("hidden_dim", hidden_dim), bias=False)
        self.W_k = nn.Linear(_check_int("key_dim", key_dim), hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def scores(self, query, keys):
        """Scores (B, T) before the softmax."""
        hidden = torch.tanh(self.W_q(query).unsqueeze(1) + self.W_k(keys))  # (B, T, hidden)
        return self.v(hidden).squeeze(-1)  # (B, T)

    def forward(self, query, keys, values=None, mask=None):
        """query (B, d_q), keys (B, T, d_k), values (B, T, d_v), mask (B, T) -> (context (B, d_v), weights (B, T))."""
        values = _check_attention_inputs(query, keys, values, mask)
        if query.shape[-1] != self.W_q.in_features or keys.shape[-1] != self.W_k.in_features:
            raise ValueError(f"expected query (B, {self.W_q.in_features}) and keys (B, T, {self.W_k.in_features}), "
                             f"got {tuple(query.shape)} and {tuple(keys.shape)}")
        return _weights_and_context(self.scores(query, keys), values, mask)


# --------------------------------------------------------------------------- the model


class Seq2Seq(nn.Module):
    """Bidirectional-GRU encoder, GRU decoder. Without attention every step gets the same fixed context."""

    def __init__(self, attention: str = "additive", *, num_symbols: int = NUM_SYMBOLS,
                 emb_dim: int = 16, hidden_dim: int = 64):
        super().__init__()
        if attention not in ATTENTION_KINDS:
            raise ValueError(f"attention must be one of {ATTENTION_KINDS}, got {attention!r}")
        self.config = {"attention": attention, "num_symbols": _check_int("num_symbols", num_symbols, 2),
                       "emb_dim": _check_int("emb_dim", emb_dim), "hidden_dim": _check_int("hidden_dim", hidden_dim)}
        vocab = num_symbols + _FIRST
        h, kv = hidden_dim, 2 * hidden_dim  # encoder states are [forward; backward]: 2H numbers
        self.embed = nn.Embedding(vocab, emb_dim, padding_idx=PAD)
        self.encoder = nn.GRU(emb_dim, h, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(kv, h)  # first decoder state from the fixed context
        self.cell = nn.GRUCell(emb_dim + kv, h)
        self.attention = {
            "none": None,
            "additive": AdditiveAttention(h, kv, h),
            "dot": DotProductAttention(h, kv, general=True),
        }[attention]
        self.out = nn.Linear(h + kv, vocab)

    def encode(self, src, lengths):
        """Encoder states (B, T, 2H), zero at padding, and the fixed context (B, 2H): both directions' last states."""
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(src), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        states, last = self.encoder(packed)  # last: (2, B, H), forward and backward
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True, total_length=src.shape[1])
        return states, torch.cat([last[0], last[1]], dim=-1)  # (B, T, 2H), (B, 2H)

    def forward(self, src, lengths, tgt=None):
        """Logits (B, T, V) and attention weights (B, T_out, T_in) or None; greedy when tgt is None."""
        if not isinstance(src, torch.Tensor) or src.dim() != 2:
            raise ValueError(f"src must be a (B, T) tensor of token ids, got "
                             f"{tuple(src.shape) if isinstance(src, torch.Tensor) else type(src).__name__}")
        lengths = _check_lengths(lengths)
        keys, fixed = self.encode(src, lengths)  # keys = values = encoder states
        mask = padding_mask(lengths, src.shape[1])
        state, prev = torch.tanh(self.bridge(fixed)), torch.full_like(lengths, BOS)  # (B, H), (B,)
        logits, weights = [], []
        for t in range(src.shape[1]):
            if self.attention is None:
                context = fixed  # the fixed context vector: the same at every step
            else:
                context, w = self.attention(state, keys, keys, mask)  # query = decoder state
                weights.append(w)
            state = self.cell(torch.cat([self.embed(prev), context], dim=-1), state)  # (B, H)
            step_logits = self.out(torch.cat([state, context], dim=-1))  # (B, V)
            logits.append(step_logits)
            prev = tgt[:, t] if tgt is not None else step_logits.argmax(-1)
        weights = torch.stack(weights, dim=1) if weights else None  # (B, T_out, T_in)
        return torch.stack(logits, dim=1), weights


def checkpoint(model: Seq2Seq) -> dict:
    """A dict of tensors and plain values that torch.save / load_tensor_dict can round-trip."""
    return {"config": dict(model.config), "state_dict": model.state_dict()}


def model_from_checkpoint(ckpt: dict) -> Seq2Seq:
    """Rebuild a Seq2Seq in eval mode from ``checkpoint(model)``."""
    if not isinstance(ckpt, dict) or not {"config", "state_dict"} <= set(ckpt):
        raise ValueError("expected a dict with 'config' and 'state_dict' (made by checkpoint(model))")
    model = Seq2Seq(**ckpt["config"])
    model.load_state_dict(ckpt["state_dict"])
    return model.eval()


# --------------------------------------------------------------------------- training and evaluation


def _loss(model, src, tgt, lengths):
    logits, _ = model(src, lengths, tgt)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=PAD)


def train_steps(model: Seq2Seq, steps: int, *, seed: int, batch_size: int = 64, min_len: int = 1,
                max_len: int = 20, lr: float = 3e-3, cosine: bool = False, log_every: int = 0):
    """Train with Adam and teacher forcing on fresh seeded batches; return the loss of every step."""
    steps = _check_int("steps", steps)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses, start = [], time.perf_counter()
    for step in range(steps):
        if cosine:  # decay to 0: late steps polish instead of bouncing around
            for group in opt.param_groups:
                group["lr"] = lr * 0.5 * (1 + np.cos(np.pi * step / steps))
        src, tgt, lengths = make_reversal_batch(batch_size, min_len, max_len, seed=seed * 1_000_003 + step,
                                                num_symbols=model.config["num_symbols"])
        loss = _loss(model, src, tgt, lengths)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if log_every and (step + 1) % log_every == 0:
            print(f"step {step + 1:5d}  loss {np.mean(losses[-log_every:]):.4f}  "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    model.eval()
    return losses


@torch.no_grad()
def _predict(model, length, n, seed, teacher_forcing=False):
    src, tgt, lengths = make_reversal_batch(n, length, length, seed=seed, num_symbols=model.config["num_symbols"])
    logits, weights = model.eval()(src, lengths, tgt if teacher_forcing else None)
    return src, tgt, logits.argmax(-1), weights


def accuracy_by_length(model: Seq2Seq, lengths, *, n: int = 100, seed: int = 1234) -> dict:
    """Greedy-decoding accuracy per input length: {'length', 'token', 'sequence'} lists."""
    out = {"length": [], "token": [], "sequence": []}
    for length in lengths:
        _, tgt, pred, _ = _predict(model, _check_int("length", length), _check_int("n", n), seed + int(length))
        correct = pred == tgt  # (n, L)
        out["length"].append(int(length))
        out["token"].append(round(correct.double().mean().item(), 4))
        out["sequence"].append(round(correct.all(dim=1).double().mean().item(), 4))
    return out


def accuracy_by_position(model: Seq2Seq, length: int, *, n: int = 100, seed: int = 1234,
                         teacher_forcing: bool = False) -> np.ndarray:
    """Token accuracy at each output step (length,); with teacher forcing every step sees the true previous letter."""
    _, tgt, pred, _ = _predict(model, _check_int("length", length), _check_int("n", n), seed + int(length),
                               teacher_forcing)
    return (pred == tgt).double().mean(dim=0).numpy()


def alignment_accuracy(weights, tolerance: int = 0) -> float:
    """Fraction of output steps t whose largest weight lies within ``tolerance`` of input L-1-t."""
    tolerance = _check_int("tolerance", tolerance, low=0)
    w = torch.as_tensor(to_numpy(weights))
    if w.dim() == 2:
        w = w.unsqueeze(0)
    if w.dim() != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"weights must be (L, L) or (B, L, L) for one input length, got {tuple(w.shape)}")
    length = w.shape[-1]
    target = length - 1 - torch.arange(length)  # (L,)
    return ((w.argmax(-1) - target).abs() <= tolerance).double().mean().item()


# --------------------------------------------------------------------------- figures and widgets

_STYLE = {"none": ("어텐션 없음 (고정 문맥 벡터)", "tab:red", "o"),
          "additive": ("가법 어텐션 (Bahdanau)", "tab:blue", "s"),
          "dot": ("내적 어텐션 (Luong)", "tab:green", "^")}


def draw_accuracy_vs_length(results: dict, *, metric: str = "sequence", ax=None, title: str | None = None,
                            train_max: int | None = None):
    """Plot accuracy against input length, one line per model in ``results`` ({kind: accuracy dict})."""
    if metric not in ("token", "sequence"):
        raise ValueError(f"metric must be 'token' or 'sequence', got {metric!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6))
    for kind, res in results.items():
        label, color, marker = _STYLE.get(kind, (kind, None, "o"))
        ax.plot(res["length"], res[metric], marker=marker, color=color, label=label, markersize=4)
    if train_max is not None:
        ax.axvline(train_max, color="gray", linestyle=":", linewidth=1)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("입력 길이 L")
    ax.set_ylabel("시퀀스 정확도" if metric == "sequence" else "토큰 정확도")
    ax.set_title(title or "입력 길이에 따른 정확도")
    ax.legend(fontsize=8, loc="lower left")
    return ax


def draw_alignment_step(weights, src_labels, tgt_labels, step: int, *, axes=None):
    """Left: the (T_out, T_in) weights with row ``step`` framed; right: that row as bars. Returns the row."""
    w = to_numpy(weights)
    if w.ndim != 2 or w.shape != (len(tgt_labels), len(src_labels)):
        raise ValueError(f"weights must be (len(tgt_labels), len(src_labels)) = "
                         f"{(len(tgt_labels), len(src_labels))}, got {w.shape}")
    step = _check_int("step", step, low=0)
    if step >= w.shape[0]:
        raise ValueError(f"step must be in 0..{w.shape[0] - 1}, got {step}")
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10.0, 3.6))
    left, right = axes
    attention_heatmap(w, [f"{t}:{c}" for t, c in enumerate(tgt_labels)], list(src_labels), ax=left,
                      annotate=False, colorbar=False, vmax=1.0, title="정렬 (행 = 디코더 단계)")
    left.set_xlabel("입력 토큰 (키·밸류)")
    left.set_ylabel("출력 단계 (쿼리)")
    left.add_patch(plt.Rectangle((-0.5, step - 0.5), w.shape[1], 1, fill=False, edgecolor="tab:red", linewidth=2))
    row = w[step]
    weight_bars(row, [f"{j}:{c}" for j, c in enumerate(src_labels)], ax=right, color="tab:blue", ylim=(0, 1.1),
                title=f"단계 {step}: 출력 '{tgt_labels[step]}' ← 입력 {int(row.argmax())}번 '{src_labels[int(row.argmax())]}'")
    right.set_xlabel("입력 위치: 토큰")
    right.tick_params(axis="x", labelsize=8, rotation=90)
    return row


def alignment_explorer(weights, src_labels, tgt_labels):
    """A slider over the decoder step; redraws that step's attention row."""
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=0, min=0, max=len(tgt_labels) - 1, step=1,
                               description="출력 단계", continuous_update=False)

    def redraw(step):
        draw_alignment_step(weights, src_labels, tgt_labels, step)
        plt.show()

    return widgets.VBox([slider, widgets.interactive_output(redraw, {"step": slider})])


# --------------------------------------------------------------------------- exercises


def _tensor(x, what: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().double()
    try:
        return torch.as_tensor(np.asarray(x, dtype=float))
    except Exception:
        raise Wrong(f"{what}을(를) 텐서로 바꿀 수 없습니다 (받은 것: {type(x).__name__}).") from None


def _ex_cases():
    g = torch.Generator().manual_seed(2)
    return [(torch.randn(3, 4, generator=g, dtype=torch.float64) * s,
             torch.randn(3, 5, 4, generator=g, dtype=torch.float64)) for s in (1.0, 3.0)]


@exercise("02-1")
def _check_dot_step(fn):
    for query, keys in _ex_cases():
        got = _call(fn, query.clone(), keys.clone(), what="dot_attention_step(query, keys)")
        if not (isinstance(got, tuple) and len(got) == 2):
            raise Wrong("(context, weights) 두 값을 튜플로 돌려줘야 합니다.")
        context, weights = _tensor(got[0], "context"), _tensor(got[1], "weights")
        scores = (keys @ query.unsqueeze(-1)).squeeze(-1)  # (B, T)
        want_w = torch.softmax(scores, dim=-1)
        want_c = (want_w.unsqueeze(1) @ keys).squeeze(1)
        if context.shape == want_w.shape and weights.shape == want_c.shape:
            raise Wrong(f"순서가 바뀌었습니다: 첫 값의 모양이 가중치 (B, T) = {tuple(want_w.shape)}, 둘째 값이 문맥 벡터 "
                        f"(B, d) = {tuple(want_c.shape)}입니다. (context, weights) 순서로 돌려주세요.")
        if weights.shape != want_w.shape:
            raise Wrong(f"weights의 모양이 {tuple(weights.shape)}입니다. 배치마다 입력 위치 하나당 가중치 하나, "
                        f"즉 (B, T) = {tuple(want_w.shape)}이어야 합니다.")
        if torch.allclose(weights, scores, atol=1e-6):
            raise Wrong("weights가 소프트맥스 전의 점수 q·k 그대로입니다. 소프트맥스를 T 축(dim=-1)에 적용하세요.")
        if torch.allclose(weights.sum(0), torch.ones(weights.shape[1], dtype=torch.float64), atol=1e-6) \
                and not torch.allclose(weights.sum(-1), torch.ones(weights.shape[0], dtype=torch.float64), atol=1e-6):
            raise Wrong("소프트맥스를 배치 축(dim=0)으로 계산했습니다. 한 쿼리의 가중치는 입력 위치 축(dim=-1)으로 합이 1이어야 합니다.")
        if torch.allclose(weights, torch.softmax(scores / query.shape[-1] ** 0.5, dim=-1), atol=1e-6):
            raise Wrong("점수를 √d로 나눴습니다. 여기서는 Luong의 내적 점수 q·k를 그대로 씁니다.")
        if not torch.allclose(weights, want_w, atol=1e-6):
            raise Wrong(f"가중치가 softmax(q·k)와 다릅니다 (첫 행: {[round(v, 3) for v in weights[0].tolist()]}, "
                        f"기대값: {[round(v, 3) for v in want_w[0].tolist()]}).")
        if context.shape != want_c.shape:
            raise Wrong(f"context의 모양이 {tuple(context.shape)}입니다. 밸류의 가중합은 (B, d) = {tuple(want_c.shape)}입니다.")
        if torch.allclose(context, query, atol=1e-6):
            raise Wrong("context가 쿼리 자체입니다. 문맥 벡터는 인코더 상태(밸류)의 가중합 Σ w_j k_j입니다.")
        if torch.allclose(context, keys.mean(1), atol=1e-6):
            raise Wrong("context가 인코더 상태의 단순 평균입니다. 가중치 w로 가중합을 구하세요.")
        if not torch.allclose(context, want_c, atol=1e-6):
            raise Wrong("context가 Σ_j w_j k_j와 다릅니다. weights와 keys를 (B, 1, T) @ (B, T, d)로 곱해 보세요.")
    return "디코더 상태가 쿼리, 인코더 상태가 키이자 밸류입니다. 가중치는 T 축으로 합이 1입니다."


@exercise("02-2")
def _check_additive_scores(fn):
    g = torch.Generator().manual_seed(3)
    query = torch.randn(2, 3, generator=g, dtype=torch.float64)
    keys = torch.randn(2, 4, 5, generator=g, dtype=torch.float64)
    W_q = torch.randn(6, 3, generator=g, dtype=torch.float64)
    W_k = torch.randn(6, 5, generator=g, dtype=torch.float64)
    v = torch.randn(6, generator=g, dtype=torch.float64)
    got = _tensor(_call(fn, query, keys, W_q, W_k, v, what="additive_scores(query, keys, W_q, W_k, v)"),
                  "additive_scores의 결과")
    pre = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T  # (B, T, h)
    want = torch.tanh(pre) @ v  # (B, T)
    if got.shape != want.shape:
        raise Wrong(f"점수의 모양이 {tuple(got.shape)}입니다. 배치마다 키 하나당 점수 하나, 즉 (B, T) = {tuple(want.shape)}이어야 합니다.")
    if torch.allclose(got, pre @ v, atol=1e-6):
        raise Wrong("tanh가 빠졌습니다. tanh 없이 vᵀ(W_q q + W_k k)는 q와 k의 선형 함수의 합일 뿐이라, "
                    "q가 바뀌면 모든 키의 점수가 똑같이 움직여 가중치가 바뀌지 않습니다.")
    if torch.allclose(got, torch.softmax(want, dim=-1), atol=1e-6):
        raise Wrong("소프트맥스를 적용한 가중치를 돌려줬습니다. 이 함수는 소프트맥스 전의 점수 e_j를 돌려줘야 합니다.")
    if not torch.allclose(got, want, atol=1e-6):
        raise Wrong(f"점수가 vᵀ tanh(W_q q + W_k k_j)와 다릅니다 (첫 행: {[round(x, 3) for x in got[0].tolist()]}, "
                    f"기대값: {[round(x, 3) for x in want[0].tolist()]}).")
    return "가법 점수 e_j = vᵀ tanh(W_q q + W_k k_j): 쿼리와 키를 같은 공간으로 옮겨 더한 뒤 은닉층 하나짜리 작은 신경망으로 점수를 매깁니다."


@exercise("02-3")
def _check_reversal_alignment(fn):
    for length in (1, 4, 7):
        got = _tensor(_call(fn, length, what=f"reversal_alignment({length})"), f"reversal_alignment({length})")
        want = torch.eye(length, dtype=torch.float64).flip(1)
        if got.shape != want.shape:
            raise Wrong(f"reversal_alignment({length})의 모양이 {tuple(got.shape)}입니다. "
                        f"(출력 단계, 입력 위치) = {(length, length)}이어야 합니다.")
        if not torch.allclose(got.sum(-1), torch.ones(length, dtype=torch.float64)):
            raise Wrong(f"각 행(출력 단계)의 합이 1이어야 합니다 (가중치이므로). 지금 행 합: {got.sum(-1).tolist()}.")
        if length > 1 and torch.allclose(got, torch.eye(length, dtype=torch.float64)):
            raise Wrong("대각선입니다: 출력 t가 입력 t를 보는 것은 '복사' 과제의 정렬입니다. "
                        "뒤집기에서 출력 t는 입력 L-1-t를 봅니다.")
        if not torch.allclose(got, want):
            bad = int((got - want).abs().sum(-1).argmax())
            raise Wrong(f"L={length}에서 출력 단계 {bad}의 행이 틀렸습니다: 입력 위치 {length - 1 - bad}에 가중치 1을 두어야 합니다 "
                        f"(받은 행: {got[bad].tolist()}).")
    return "이상적인 뒤집기 정렬은 반대 대각선(anti-diagonal)입니다: 출력 t ← 입력 L-1-t."
