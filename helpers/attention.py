"""The course's public attention API: the notebooks' own code behind one set of input checks.

Every algorithm here is defined once, in a visible notebook cell saved to ``helpers.lessons``
(01 softmax → 05 softmax_t/entropy → 09 safe_softmax/masked_attention/MaskedMultiHeadAttention,
02 padding_mask, 07 split_heads/merge_heads, 08 chunked_attention, 14 flash_attention). This module only checks the
inputs (shapes, dtypes, masks, NaN/inf, temperature, dropout_p, block_size) with ``helpers.validate``
and delegates: each export is bound with ``validate.checked`` (or ``validate.checked_module``) to
the lesson code, whose ``__wrapped__`` (or base class) it is; no name is defined a second time here.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from . import validate
from .lessons import complexity_flash as _flash
from .lessons import masks as _masks
from .lessons import multi_head_attention as _mha
from .lessons import seq2seq_attention as _seq2seq
from .lessons import temperature as _temperature

__all__ = ["softmax", "scaled_dot_product_attention", "MultiHeadAttention", "chunked_attention", "causal_mask"]
__all__ += ["padding_mask", "split_heads", "merge_heads", "entropy"]
__all__ += ["flash_attention"]  # noqa: F822 (bound on first use by the module __getattr__ below: Triton loads late)


# --------------------------------------------------------------------------- checks


def _check_qkv(query, key, value) -> tuple[int, ...]:
    """Validate shapes, then that the values are finite; return the broadcast leading (batch) shape."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        validate.tensor(name, x, min_dim=2)
    if not (query.dtype == key.dtype == value.dtype):
        raise ValueError(f"query, key and value must share one dtype, got {query.dtype}, {key.dtype}, {value.dtype}")
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
        batch = tuple(torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2]))
    except RuntimeError:
        raise ValueError(
            "the leading (batch/head) dimensions of query, key and value do not broadcast: "
            f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        ) from None
    for name, x in (("query", query), ("key", key), ("value", value)):
        validate.finite(name, x)
    return batch


def _check_mask(mask, scores_shape) -> None:
    t_q, t_k = scores_shape[-2], scores_shape[-1]
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


def _check_no_overflow(query: torch.Tensor, key: torch.Tensor) -> None:
    """q·k must stay finite; computed only when the inputs are large enough for it to overflow."""
    if query.numel() == 0 or key.numel() == 0:
        return  # no product to overflow (and amax has no maximum to find)
    bound = query.abs().amax().double() * key.abs().amax().double() * query.shape[-1]
    if bound > torch.finfo(query.dtype).max / 4 and not torch.isfinite(query @ key.transpose(-2, -1)).all():
        raise ValueError(f"q·k overflowed {query.dtype} (inputs too large); scale them down or use float64")


# --------------------------------------------------------------------------- masks and heads


def _causal_mask_arguments(t_q: int, t_k: int | None = None, device=None):
    """Boolean (T_q, T_k) mask, True where query i may attend key j <= i (top-left aligned)."""
    t_q = validate.positive_int("t_q", t_q)
    t_k = t_q if t_k is None else validate.positive_int("t_k", t_k)
    return {"t_q": t_q, "t_k": t_k, "device": device}


causal_mask = validate.checked(_masks.causal_mask, _causal_mask_arguments, name="causal_mask")


def _padding_mask_arguments(lengths, t: int | None = None):
    """Boolean (B, T) mask, True at the first ``lengths[b]`` (real) positions, False at padding.

    ``t`` defaults to the longest length. Broadcast it to keys as ``mask[:, None, :]`` (B, 1, T_k).
    """
    lengths = validate.lengths("lengths", lengths)
    t = int(lengths.max()) if t is None else validate.positive_int("t", t)
    if (lengths > t).any():
        raise ValueError(f"every length must be <= t={t}, got lengths {lengths.tolist()}")
    return {"lengths": lengths, "t": t}


padding_mask = validate.checked(_seq2seq.padding_mask, _padding_mask_arguments, name="padding_mask")


def _split_heads_arguments(x: torch.Tensor, num_heads: int):
    """(B, T, C) -> (B, h, T, C/h): cut the features into h heads, then move heads before time."""
    validate.tensor("x", x, 3)
    num_heads = validate.positive_int("num_heads", num_heads)
    if x.dim() != 3 or x.shape[-1] % num_heads:
        raise ValueError(f"x must be (B, T, C) with C divisible by num_heads={num_heads}, got {tuple(x.shape)}")
    return {"x": x, "num_heads": num_heads}


split_heads = validate.checked(_mha.split_heads, _split_heads_arguments, name="split_heads")


def _merge_heads_arguments(x: torch.Tensor):
    """(B, h, T, d) -> (B, T, h*d): the inverse of ``split_heads`` (heads concatenated in order)."""
    validate.tensor("x", x, 4)
    if x.dim() != 4:
        raise ValueError(f"x must be (B, h, T, d), got {tuple(x.shape)}")
    return {"x": x}


merge_heads = validate.checked(_mha.merge_heads, _merge_heads_arguments, name="merge_heads")


# --------------------------------------------------------------------------- softmax


def _softmax_arguments(scores: torch.Tensor, dim: int = -1, temperature: float = 1.0):
    """Numerically stable softmax(scores / temperature) along ``dim`` (09's ``safe_softmax``).

    Entries equal to -inf get weight 0; a slice that is entirely -inf gets all zeros
    (PyTorch's softmax returns NaN there).
    """
    temperature = validate.positive_real("temperature", temperature)
    validate.tensor("scores", scores, min_dim=1)
    if torch.isnan(scores).any() or torch.isposinf(scores).any():
        raise ValueError("scores contain NaN or +inf; softmax needs finite scores (or -inf to mask)")
    return {"scores": scores, "dim": dim, "temperature": temperature}


softmax = validate.checked(_masks.safe_softmax, _softmax_arguments, name="softmax")


def _entropy_arguments(weights: torch.Tensor, dim: int = -1):
    """Entropy −Σ w log w in nats along ``dim``, with 0·log 0 = 0 (05's ``entropy``)."""
    validate.tensor("weights", weights, min_dim=1)
    if (weights < 0).any():
        raise ValueError("weights must be >= 0 (they come out of a softmax)")
    return {"weights": weights, "dim": dim}


entropy = validate.checked(_temperature.entropy, _entropy_arguments, name="entropy")


# --------------------------------------------------------------------------- attention


def _attention_arguments(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    temperature: float = 1.0,
    dropout_p: float = 0.0,
    training: bool = False,
    causal: bool = False,
):
    """softmax(q·kᵀ / (√d_k · temperature)) · v; returns ``(output, weights)`` (09's ``masked_attention``).

    Shapes: query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v); leading dimensions broadcast. ``mask`` is
    boolean, True = may attend. A query whose keys are all masked gets zero weights and a zero output.
    """
    temperature = validate.positive_real("temperature", temperature)
    dropout_p = validate.probability("dropout_p", dropout_p)
    batch = _check_qkv(query, key, value)
    if mask is not None:
        _check_mask(mask, torch.Size(batch + (query.shape[-2], key.shape[-2])))
    _check_no_overflow(query, key)
    return {
        "q": query,
        "k": key,
        "v": value,
        "mask": mask,
        "causal": causal,
        "temperature": temperature,
        "dropout_p": dropout_p,
        "training": training,
    }


def _no_key_output(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """What attention gives a query that has no key to see: zeros (..., T_q, d_v), as PyTorch's SDPA."""
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    return query.new_zeros(*batch, query.shape[-2], value.shape[-1])


def _weights_at_full_shape(taught, q, k, v, **rest) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights broadcast to (..., T_q, T_k), whatever broadcasting the mask left them with; with
    no key at all (T_k = 0) zeros and empty weights (a softmax over nothing has no maximum)."""
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if k.shape[-2] == 0:
        return _no_key_output(q, k, v), q.new_zeros(*batch, q.shape[-2], 0)
    out, weights = taught(q=q, k=k, v=v, **rest)
    return out, weights.expand(*batch, q.shape[-2], k.shape[-2])  # (..., T_q, d_v), (..., T_q, T_k)


scaled_dot_product_attention = validate.checked(
    _masks.masked_attention, _attention_arguments, name="scaled_dot_product_attention", call=_weights_at_full_shape
)


def _module_arguments(d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
    if not (isinstance(d_model, int) and isinstance(num_heads, int)) or d_model <= 0 or num_heads <= 0:
        raise ValueError(f"d_model and num_heads must be positive integers, got {d_model!r} and {num_heads!r}")
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model ({d_model}) must be divisible by num_heads ({num_heads}); "
            f"{d_model} / {num_heads} = {d_model / num_heads:.3g} is not a whole head size"
        )
    return {
        "d_model": d_model,
        "num_heads": num_heads,
        "dropout": validate.probability("dropout", dropout),
        "bias": bias,
    }


def _forward_arguments(module, query, key=None, value=None, mask=None, *, causal: bool = False):
    """Return ``(output (B, T_q, d_model), weights (B, h, T_q, T_k))``.

    ``key`` defaults to ``query`` (self-attention), ``value`` to ``key``. ``mask`` is
    boolean, True = may attend, shaped (T_q, T_k), (B, T_q, T_k) or (B|1, h|1, T_q, T_k).
    """
    key = query if key is None else key
    value = key if value is None else value
    d_model = module.h * module.d
    for name, x in (("query", query), ("key", key), ("value", value)):
        validate.tensor(name, x, min_dim=3)
        if x.dim() != 3 or x.shape[-1] != d_model:
            raise ValueError(f"{name} must have shape (B, T, d_model={d_model}), got {tuple(x.shape)}")
    if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
        raise ValueError(
            "query, key and value must share the batch size and key/value the length T_k, got "
            f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
        )
    if mask is not None:
        shape = torch.Size((query.shape[0], module.h, query.shape[1], key.shape[1]))
        _check_mask(mask.unsqueeze(1) if isinstance(mask, torch.Tensor) and mask.dim() == 3 else mask, shape)
    return {"query": query, "key": key, "value": value, "mask": mask, "causal": causal}


def _from_torch(cls, module: nn.MultiheadAttention):
    """Copy the weights of a ``torch.nn.MultiheadAttention(..., batch_first=True)``."""
    if not isinstance(module, nn.MultiheadAttention):
        raise TypeError(f"expected torch.nn.MultiheadAttention, got {type(module).__name__}")
    if not module.batch_first:
        raise ValueError("the torch module must be built with batch_first=True")
    if not module._qkv_same_embed_dim:
        raise ValueError(f"kdim/vdim ({module.kdim}/{module.vdim}) must equal embed_dim ({module.embed_dim})")
    if module.bias_k is not None or module.add_zero_attn:
        raise ValueError("add_bias_kv and add_zero_attn are not supported")
    ours = cls(module.embed_dim, module.num_heads, dropout=module.dropout, bias=module.in_proj_bias is not None)
    ours.to(dtype=module.in_proj_weight.dtype, device=module.in_proj_weight.device)
    _mha.copy_from_torch(ours, module)  # 07's copy: [W^Q; W^K; W^V] cut in three
    ours.train(module.training)
    return ours


MultiHeadAttention = validate.checked_module(
    _masks.MaskedMultiHeadAttention,
    name="MultiHeadAttention",
    init=_module_arguments,
    forward=_forward_arguments,
    doc="09's ``MaskedMultiHeadAttention`` (07's module with masked attention) with its inputs checked.",
    from_torch=classmethod(_from_torch),
)


def _chunked_arguments(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *, block_size: int = 128, causal: bool = False
):
    """Online-softmax (FlashAttention-style) attention over query tiles and key blocks; output only.

    The algorithm is notebook 08's ``chunked_attention`` (helpers.lessons.complexity_flash); this
    boundary adds the input checks. Shapes: query (..., T_q, d_k), key (..., T_k, d_k), value
    (..., T_k, d_v), leading dimensions broadcast; with ``causal`` query i sees keys j <= i.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    _check_qkv(query, key, value)
    return {"query": query, "key": key, "value": value, "block_size": block_size, "causal": causal}


def _zeros_without_positions(taught, query, key, value, **rest) -> torch.Tensor:
    """No query or no key (T_q = 0 or T_k = 0): the zeros that masked attention gives, without the loop
    (whose running sums would divide 0 by 0)."""
    if query.shape[-2] == 0 or key.shape[-2] == 0:
        return _no_key_output(query, key, value)
    return taught(query=query, key=key, value=value, **rest)


chunked_attention = validate.checked(
    _flash.chunked_attention, _chunked_arguments, name="chunked_attention", call=_zeros_without_positions
)


# --------------------------------------------------------------------------- 14: the Triton kernels

FLASH_HEAD_SIZES = (16, 32, 64, 128)  # tl.arange needs a power of two; tl.dot at least 16


def _flash_arguments(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False):
    """FlashAttention forward and backward as Triton kernels (notebook 14): softmax(QKᵀ/√d)V.

    q, k, v: contiguous (B, h, N, d) tensors of one shape, dtype and device; d in 16, 32, 64, 128;
    float32 or float16 (bfloat16 too on a CUDA GPU). On a CUDA GPU the kernels are compiled; without
    one they run on CPU tensors under Triton's interpreter (small N only: it is slow). ``causal``: query
    i sees keys j <= i. Differentiable: ``loss.backward()`` runs 14's backward kernels.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        validate.tensor(name, x, min_dim=0)
        if x.dim() != 4:
            raise ValueError(f"{name} must have 4 dimensions (B, h, N, d), got shape {tuple(x.shape)}")
    if not (q.shape == k.shape == v.shape):
        raise ValueError(
            "q, k and v must have one shape (B, h, N, d) (self-attention, d_k = d_v), got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k and v must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k and v must be on one device, got {q.device}, {k.device}, {v.device}")
    allowed = (torch.float32, torch.float16) + ((torch.bfloat16,) if q.device.type == "cuda" else ())
    if q.dtype not in allowed:
        cpu_bf16 = q.dtype == torch.bfloat16 and q.device.type != "cuda"
        extra = " (bfloat16 only on a CUDA GPU: Triton's interpreter cannot run it)" if cpu_bf16 else ""
        raise ValueError(f"dtype must be one of {[str(t) for t in allowed]}, got {q.dtype}{extra}")
    if q.shape[-1] not in FLASH_HEAD_SIZES:
        raise ValueError(f"head size d must be one of {list(FLASH_HEAD_SIZES)}, got d={q.shape[-1]}")
    if q.shape[-2] == 0:
        raise ValueError("N must be at least 1 (the sequences are empty)")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not x.is_contiguous():
            raise ValueError(
                f"{name} must be contiguous (the kernel computes addresses as row·d + column); "
                f"call {name}.contiguous() first"
            )
        validate.finite(name, x)
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    gpu = _flash_lesson()
    if q.device.type == "cpu" and not gpu.INTERPRET:
        raise ValueError(
            "q, k and v are on the CPU but Triton compiles for the GPU here (TRITON_INTERPRET is not 1): "
            "move them to the GPU (.cuda()), or set TRITON_INTERPRET=1 before helpers is imported"
        )
    return {"q": q, "k": k, "v": v, "causal": causal}


def _flash_lesson():
    """Notebook 14's module, imported on first use (it imports Triton; `import helpers` chose TRITON_INTERPRET)."""
    try:
        from .lessons import flash_attention_gpu
    except ImportError as err:
        if getattr(err, "name", "") and err.name.split(".")[0] == "triton":
            from .kernels import triton_missing_message

            raise ImportError(triton_missing_message()) from None
        raise
    return flash_attention_gpu


def __getattr__(name: str):
    """``flash_attention`` is bound on first access, so importing helpers does not import Triton."""
    if name != "flash_attention":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        taught = _flash_lesson().flash_attention
    except ImportError as err:
        message = str(err)

        def taught(q, k, v, causal=False):
            raise ImportError(message)

        taught.__module__ = "helpers.lessons.flash_attention_gpu"
    globals()["flash_attention"] = bound = validate.checked(taught, _flash_arguments, name="flash_attention")
    return bound
