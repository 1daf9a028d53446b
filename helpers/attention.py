"""Attention functions and modules, written to be read next to the notebooks."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import validate

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "chunked_attention",
    "causal_mask",
    "padding_mask",
    "split_heads",
    "merge_heads",
    "entropy",
]


# --------------------------------------------------------------------------- checks


def _check_qkv(query, key, value) -> tuple[int, ...]:
    """Validate shapes; return the broadcast leading (batch) shape."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        validate.tensor(name, x, min_dim=2)
    if not (query.dtype == key.dtype == value.dtype):
        raise ValueError(
            "query, key and value must share one dtype, got "
            f"{query.dtype}, {key.dtype}, {value.dtype}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must have the same last dimension d_k, got "
            f"query {tuple(query.shape)} (d_k={query.shape[-1]}) and "
            f"key {tuple(key.shape)} (d_k={key.shape[-1]})"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            "key and value must have the same number of positions T_k (dim -2), got "
            f"key {tuple(key.shape)} and value {tuple(value.shape)}"
        )
    try:
        return tuple(torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2]))
    except RuntimeError:
        raise ValueError(
            "the leading (batch/head) dimensions of query, key and value do not broadcast: "
            f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        ) from None


def causal_mask(t_q: int, t_k: int | None = None, device=None) -> torch.Tensor:
    """Boolean (T_q, T_k) mask, True where query i may attend key j <= i (top-left aligned)."""
    t_q = validate.positive_int("t_q", t_q)
    t_k = t_q if t_k is None else validate.positive_int("t_k", t_k)
    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, t: int | None = None) -> torch.Tensor:
    """Boolean (B, T) mask, True at the first ``lengths[b]`` (real) positions, False at padding.

    ``t`` defaults to the longest length. Broadcast it to keys as ``mask[:, None, :]`` (B, 1, T_k).
    """
    lengths = validate.lengths("lengths", lengths)
    t = int(lengths.max()) if t is None else validate.positive_int("t", t)
    if (lengths > t).any():
        raise ValueError(f"every length must be <= t={t}, got lengths {lengths.tolist()}")
    return torch.arange(t) < lengths[:, None]  # (B, T)


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, h, T, C/h): cut the features into h heads, then move heads before time."""
    validate.tensor("x", x, 3)
    num_heads = validate.positive_int("num_heads", num_heads)
    b, t, c = x.shape
    if x.dim() != 3 or c % num_heads:
        raise ValueError(f"x must be (B, T, C) with C divisible by num_heads={num_heads}, got {tuple(x.shape)}")
    return x.view(b, t, num_heads, c // num_heads).transpose(1, 2)  # (B, h, T, d)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, h, T, d) -> (B, T, h*d): the inverse of ``split_heads`` (heads concatenated in order)."""
    validate.tensor("x", x, 4)
    if x.dim() != 4:
        raise ValueError(f"x must be (B, h, T, d), got {tuple(x.shape)}")
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)  # (B, T, C)


# --------------------------------------------------------------------------- softmax


def _masked_softmax(scores: torch.Tensor, scale: float, dim: int = -1) -> torch.Tensor:
    """softmax(scores * scale); -inf entries get weight 0, all -inf rows give all zeros."""
    row_max = scores.amax(dim=dim, keepdim=True)
    # A row that is entirely -inf has no finite max; shifting by 0 keeps exp() at 0, not NaN.
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    # Shift before scaling, so a tiny temperature cannot overflow the exponent.
    exp = torch.exp((scores - row_max) * scale)
    total = exp.sum(dim=dim, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))


def softmax(scores: torch.Tensor, dim: int = -1, temperature: float = 1.0) -> torch.Tensor:
    """Numerically stable softmax(scores / temperature) along ``dim``.

    Entries equal to -inf get weight 0; a slice that is entirely -inf gets all zeros
    (PyTorch's softmax returns NaN there).
    """
    temperature = validate.positive_real("temperature", temperature)
    validate.tensor("scores", scores, min_dim=1)
    if torch.isnan(scores).any() or torch.isposinf(scores).any():
        raise ValueError("scores contain NaN or +inf; softmax needs finite scores (or -inf to mask)")
    return _masked_softmax(scores, 1.0 / temperature, dim=dim)


def entropy(weights: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Entropy −Σ w log w in nats along ``dim``, with 0·log 0 = 0."""
    validate.tensor("weights", weights, min_dim=1)
    if (weights < 0).any():
        raise ValueError("weights must be >= 0 (they come out of a softmax)")
    # xlogy gives exactly 0 where w == 0, where w * log(w) would give NaN; 0.0 - x turns -0.0 into 0.0.
    return 0.0 - torch.special.xlogy(weights, weights).sum(dim=dim)


# --------------------------------------------------------------------------- attention


def _combine_masks(mask, causal: bool, scores_shape, device) -> torch.Tensor | None:
    t_q, t_k = scores_shape[-2], scores_shape[-1]
    if mask is not None:
        if not isinstance(mask, torch.Tensor):
            raise TypeError(f"mask must be a torch.Tensor, got {type(mask).__name__}")
        if mask.dtype != torch.bool:
            raise ValueError(
                f"mask must be boolean (True = may attend), got dtype {mask.dtype}; "
                "use mask.bool() or build it with a comparison"
            )
        try:
            fits = torch.broadcast_shapes(mask.shape, scores_shape) == scores_shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
                f"{tuple(scores_shape)} (..., T_q={t_q}, T_k={t_k})"
            )
    if causal:
        tri = causal_mask(t_q, t_k, device=device)
        mask = tri if mask is None else mask & tri
    return mask


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    temperature: float = 1.0,
    dropout_p: float = 0.0,
    training: bool = False,
    causal: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q·kᵀ / (√d_k · temperature)) · v; returns ``(output, weights)``.

    Shapes: query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v);
    leading dimensions broadcast. ``mask`` is boolean, True = may attend. A query
    whose keys are all masked gets zero weights and a zero output.
    """
    temperature = validate.positive_real("temperature", temperature)
    dropout_p = validate.probability("dropout_p", dropout_p)
    batch = _check_qkv(query, key, value)
    for name, x in (("query", query), ("key", key), ("value", value)):
        validate.finite(name, x)

    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1)  # (..., T_q, T_k)
    scores_shape = torch.Size(batch + tuple(scores.shape[-2:]))
    scores = scores.expand(scores_shape)
    if not torch.isfinite(scores).all():
        raise ValueError(
            f"q·k overflowed {query.dtype} (inputs too large); scale them down or use float64"
        )
    mask = _combine_masks(mask, causal, scores_shape, query.device)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))

    weights = _masked_softmax(scores, 1.0 / (math.sqrt(d_k) * temperature))
    if training and dropout_p > 0:
        # Dropout acts on the weights; survivors are scaled by 1/(1-p) to keep the expectation.
        weights = F.dropout(weights, p=dropout_p, training=True)
    return weights @ value, weights  # (..., T_q, d_v), (..., T_q, T_k)


class MultiHeadAttention(nn.Module):
    """Batch-first multi-head attention: h heads of size d_model / h, then an output projection."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if not (isinstance(d_model, int) and isinstance(num_heads, int)) or d_model <= 0 or num_heads <= 0:
            raise ValueError(
                f"d_model and num_heads must be positive integers, got {d_model!r} and {num_heads!r}"
            )
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads ({num_heads}); "
                f"{d_model} / {num_heads} = {d_model / num_heads:.3g} is not a whole head size"
            )
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.dropout = validate.probability("dropout", dropout)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # (B, h, T, d)

    def _check_input(self, name: str, x) -> None:
        validate.tensor(name, x, min_dim=3)
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"{name} must have shape (B, T, d_model={self.d_model}), got {tuple(x.shape)}"
            )

    def forward(self, query, key=None, value=None, mask=None, *, causal: bool = False):
        """Return ``(output (B, T_q, d_model), weights (B, h, T_q, T_k))``.

        ``key`` defaults to ``query`` (self-attention), ``value`` to ``key``. ``mask`` is
        boolean, True = may attend, shaped (T_q, T_k), (B, T_q, T_k) or (B|1, h|1, T_q, T_k).
        """
        key = query if key is None else key
        value = key if value is None else value
        for name, x in (("query", query), ("key", key), ("value", value)):
            self._check_input(name, x)
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(
                "query, key and value must share the batch size and key/value the length T_k, got "
                f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        if isinstance(mask, torch.Tensor) and mask.dim() == 3:
            mask = mask.unsqueeze(1)  # (B, 1, T_q, T_k): the same mask for every head

        q = self._split_heads(self.q_proj(query))  # (B, h, T_q, d)
        k = self._split_heads(self.k_proj(key))  # (B, h, T_k, d)
        v = self._split_heads(self.v_proj(value))  # (B, h, T_k, d)
        out, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout_p=self.dropout, training=self.training, causal=causal
        )
        b, _, t_q, _ = out.shape
        out = out.transpose(1, 2).reshape(b, t_q, self.d_model)  # (B, T_q, d_model)
        return self.out_proj(out), weights

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a ``torch.nn.MultiheadAttention(..., batch_first=True)``."""
        if not isinstance(module, nn.MultiheadAttention):
            raise TypeError(f"expected torch.nn.MultiheadAttention, got {type(module).__name__}")
        if not module.batch_first:
            raise ValueError("the torch module must be built with batch_first=True")
        if not module._qkv_same_embed_dim:
            raise ValueError(
                f"kdim/vdim ({module.kdim}/{module.vdim}) must equal embed_dim ({module.embed_dim})"
            )
        if module.bias_k is not None or module.add_zero_attn:
            raise ValueError("add_bias_kv and add_zero_attn are not supported")
        bias = module.in_proj_bias is not None
        ours = cls(module.embed_dim, module.num_heads, dropout=module.dropout, bias=bias)
        ours.to(dtype=module.in_proj_weight.dtype, device=module.in_proj_weight.device)
        with torch.no_grad():
            for proj, w in zip(
                (ours.q_proj, ours.k_proj, ours.v_proj), module.in_proj_weight.chunk(3, dim=0)
            ):
                proj.weight.copy_(w)
            if bias:
                for proj, b in zip(
                    (ours.q_proj, ours.k_proj, ours.v_proj), module.in_proj_bias.chunk(3, dim=0)
                ):
                    proj.bias.copy_(b)
            ours.out_proj.weight.copy_(module.out_proj.weight)
            if module.out_proj.bias is not None:
                ours.out_proj.bias.copy_(module.out_proj.bias)
        ours.train(module.training)
        return ours


def chunked_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    block_size: int = 128,
    causal: bool = False,
) -> torch.Tensor:
    """Online-softmax (FlashAttention-style) attention over query tiles and key blocks; output only.

    The algorithm is notebook 08's ``chunked_attention`` (helpers.lessons.complexity_flash); this
    wrapper adds the input checks. Shapes: query (..., T_q, d_k), key (..., T_k, d_k), value
    (..., T_k, d_v), leading dimensions broadcast; with ``causal`` query i sees keys j <= i.
    """
    from .lessons.complexity_flash import chunked_attention as taught  # the lesson imports nothing from here

    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    batch = _check_qkv(query, key, value)
    for name, x in (("query", query), ("key", key), ("value", value)):
        validate.finite(name, x)
    t_q, t_k, d_v = query.shape[-2], key.shape[-2], value.shape[-1]
    if t_q == 0 or t_k == 0:
        return query.new_zeros(batch + (t_q, d_v))
    return taught(query, key, value, block_size=block_size, causal=causal)
