"""Notebook 07 (multi-head attention): head reshapes, common mistakes, cost counts, a toy task
whose heads learn different offsets, the head-selector widget and the exercise checkers."""

from __future__ import annotations

import math
import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import MultiHeadAttention, _positive_int
from .exercises import Wrong, _as_tensor, _call, exercise
from .plots import attention_heatmap, to_numpy

__all__ = [
    "split_heads", "merge_heads", "MISTAKES", "manual_mha",
    "param_count", "mha_param_formula", "mha_costs", "measured_matmul_flops",
    "VOCAB", "SEQ_LEN", "FIRST_SCORED", "make_offset_batch", "OffsetModel",
    "train_offset_model", "accuracy", "offset_profile", "head_roles",
    "mean_head_maps", "draw_head", "draw_all_heads", "head_selector",
]


def _tensor(name: str, x, dim: int) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimensions, got shape {tuple(x.shape)}")
    return x


# --------------------------------------------------------------------------- reshapes


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, h, T, C/h): cut the features into h heads, then move heads before time."""
    _tensor("x", x, 3)
    num_heads = _positive_int("num_heads", num_heads)
    b, t, c = x.shape
    if c % num_heads:
        raise ValueError(f"the feature size C={c} is not divisible by num_heads={num_heads}")
    return x.view(b, t, num_heads, c // num_heads).transpose(1, 2)  # (B, h, T, d)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, h, T, d) -> (B, T, h*d): the inverse of ``split_heads`` (heads concatenated in order)."""
    _tensor("x", x, 4)
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)  # (B, T, C)


MISTAKES = ("scale_by_d_model", "split_without_transpose", "merge_without_transpose", "reversed_head_order")


def manual_mha(module: MultiHeadAttention, x: torch.Tensor, mistake: str | None = None):
    """Self-attention with ``module``'s weights, step by step; ``mistake`` injects one of MISTAKES."""
    if not isinstance(module, MultiHeadAttention):
        raise TypeError(f"module must be helpers.attention.MultiHeadAttention, got {type(module).__name__}")
    if mistake is not None and mistake not in MISTAKES:
        raise ValueError(f"mistake must be None or one of {MISTAKES}, got {mistake!r}")
    _tensor("x", x, 3)
    b, t, c = x.shape
    h, d = module.num_heads, module.head_dim
    if c != module.d_model:
        raise ValueError(f"x must have shape (B, T, {module.d_model}), got {tuple(x.shape)}")

    def split(y):
        if mistake == "split_without_transpose":
            return y.reshape(b, h, t, d)  # right shape, rows from the wrong tokens
        return split_heads(y, h)

    q, k, v = split(module.q_proj(x)), split(module.k_proj(x)), split(module.v_proj(x))  # (B, h, T, d)
    scale_dim = c if mistake == "scale_by_d_model" else d
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(scale_dim), dim=-1)  # (B, h, T, T)
    heads = weights @ v  # (B, h, T, d)
    if mistake == "merge_without_transpose":
        merged = heads.reshape(b, t, c)
    elif mistake == "reversed_head_order":
        merged = merge_heads(heads.flip(1))
    else:
        merged = merge_heads(heads)  # (B, T, C)
    return module.out_proj(merged), weights


# --------------------------------------------------------------------------- costs


def param_count(module: nn.Module) -> int:
    """Number of trainable numbers in a module: sum of p.numel()."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters())


def mha_param_formula(d_model: int, bias: bool = True) -> int:
    """4·C² weights (W^Q, W^K, W^V, W^O) plus 4·C biases; the number of heads does not appear."""
    c = _positive_int("d_model", d_model)
    return 4 * c * c + (4 * c if bias else 0)


def mha_costs(seq_len: int, d_model: int, num_heads: int, batch: int = 1) -> dict:
    """FLOPs (2 per multiply-add) and memory of one self-attention call, split by stage."""
    n, c = _positive_int("seq_len", seq_len), _positive_int("d_model", d_model)
    h, b = _positive_int("num_heads", num_heads), _positive_int("batch", batch)
    if c % h:
        raise ValueError(f"d_model={c} is not divisible by num_heads={h}")
    d = c // h
    costs = {
        "projection_flops": b * 4 * 2 * n * c * c,  # Q, K, V and output: (N, C) @ (C, C) each
        "score_flops": b * h * 2 * n * n * d,  # Q_i K_iᵀ per head: 2·N²·d
        "mix_flops": b * h * 2 * n * n * d,  # weights_i @ V_i per head
        "softmax_rows": b * h * n,  # each row: a max, N exps, a sum, N divisions
        "weight_floats": b * h * n * n,  # the (N, N) weight matrix of every head
    }
    costs["matmul_flops"] = costs["projection_flops"] + costs["score_flops"] + costs["mix_flops"]
    return costs


def measured_matmul_flops(module: nn.Module, x: torch.Tensor) -> int:
    """Matrix-multiply FLOPs of ``module(x)`` counted by torch.utils.flop_counter."""
    from torch.utils.flop_counter import FlopCounterMode

    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        module(x)
    return counter.get_total_flops()


# --------------------------------------------------------------------------- toy task

VOCAB, SEQ_LEN = 8, 8
FIRST_SCORED = 2  # positions t >= 2, where "previous token" and "first token" differ


def make_offset_batch(n: int, generator: torch.Generator | None = None):
    """Random tokens x (n, T) and targets y_t = (x_{t-1} - x_0) mod VOCAB; scored for t >= 2."""
    n = _positive_int("n", n)
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=generator)  # (n, T)
    y = (x.roll(1, dims=1) - x[:, :1]) % VOCAB  # (n, T); y_0, y_1 are not scored
    return x, y


class OffsetModel(nn.Module):
    """Token + position embeddings -> one multi-head attention layer -> a per-position MLP."""

    def __init__(self, num_heads: int, d_model: int = 32, hidden: int = 64):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model)
        self.pos = nn.Embedding(SEQ_LEN, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.ReLU(), nn.Linear(hidden, VOCAB))

    def forward(self, x: torch.Tensor):
        """Return logits (B, T, VOCAB) and attention weights (B, h, T, T)."""
        e = self.tok(x) + self.pos.weight[: x.shape[1]]  # (B, T, C)
        out, weights = self.attn(e)
        return self.mlp(out), weights


def _task_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits[:, FIRST_SCORED:].reshape(-1, VOCAB), y[:, FIRST_SCORED:].reshape(-1))


def train_offset_model(num_heads: int, steps: int, seed: int = 0, *, d_model: int = 32,
                       lr: float = 1e-2, batch: int = 128):
    """Train an OffsetModel with Adam on fresh random batches; return (model, losses)."""
    steps = _positive_int("steps", steps)
    torch.manual_seed(seed)
    model = OffsetModel(num_heads, d_model)
    gen = torch.Generator().manual_seed(seed + 1000)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y = make_offset_batch(batch, gen)
        loss = _task_loss(model(x)[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of scored positions (t >= 2) predicted right."""
    logits, _ = model(x)
    return (logits[:, FIRST_SCORED:].argmax(-1) == y[:, FIRST_SCORED:]).double().mean().item()


def mean_head_maps(weights: torch.Tensor) -> torch.Tensor:
    """Average (B, h, T_q, T_k) weights over the batch: (h, T_q, T_k)."""
    _tensor("weights", weights, 4)
    return weights.detach().mean(dim=0)


def offset_profile(maps: torch.Tensor) -> torch.Tensor:
    """Per head, mean weight on the previous token and on the first token over rows t >= 2: (h, 2)."""
    _tensor("maps", maps, 3)
    t = maps.shape[-1]
    if maps.shape[-2] != t or t <= FIRST_SCORED:
        raise ValueError(f"maps must be (h, T, T) with T > {FIRST_SCORED}, got {tuple(maps.shape)}")
    rows = torch.arange(FIRST_SCORED, t)
    prev = maps[:, rows, rows - 1].mean(dim=-1)  # (h,)
    first = maps[:, rows, 0].mean(dim=-1)  # (h,)
    return torch.stack([prev, first], dim=-1)


def head_roles(maps: torch.Tensor, threshold: float = 0.8) -> list[str]:
    """Name each head by the offset it attends to: '이전 토큰', '첫 토큰' or '섞임'."""
    profile = offset_profile(maps)
    roles = []
    for prev, first in profile.tolist():
        roles.append("이전 토큰" if prev >= threshold else "첫 토큰" if first >= threshold else "섞임")
    return roles


# --------------------------------------------------------------------------- drawing


def draw_head(maps: torch.Tensor, head: int, *, ax=None, title: str | None = None) -> np.ndarray:
    """Heatmap of one head's mean weights (rows: query positions); return that (T, T) matrix."""
    _tensor("maps", maps, 3)
    h = maps.shape[0]
    if isinstance(head, bool) or not isinstance(head, numbers.Integral) or not 0 <= head < h:
        raise ValueError(f"head must be an integer in [0, {h - 1}], got {head!r}")
    w = to_numpy(maps[head])
    labels = [f"t={i}" for i in range(w.shape[0])]
    if title is None:
        prev, first = offset_profile(maps)[head].tolist()
        title = f"헤드 {head}: 이전 토큰 {prev:.2f}, 첫 토큰 {first:.2f}"
    attention_heatmap(w, labels, [f"{i}" for i in range(w.shape[1])], ax=ax, title=title,
                      vmax=1.0, annotate=False, colorbar=False)
    return w


def draw_all_heads(maps: torch.Tensor, *, figsize=None) -> list[np.ndarray]:
    """All heads side by side (the static counterpart of ``head_selector``)."""
    _tensor("maps", maps, 3)
    h = maps.shape[0]
    fig, axes = plt.subplots(1, h, figsize=figsize or (3.2 * h, 3.4), squeeze=False)
    drawn = [draw_head(maps, i, ax=ax, title=f"헤드 {i}") for i, ax in enumerate(axes[0])]
    fig.tight_layout()
    return drawn


def head_selector(maps: torch.Tensor):
    """A head slider that redraws that head's attention map."""
    import ipywidgets as widgets

    _tensor("maps", maps, 3)
    slider = widgets.IntSlider(value=0, min=0, max=maps.shape[0] - 1, description="헤드",
                               continuous_update=False)

    def redraw(head):
        _, ax = plt.subplots(figsize=(4.6, 3.8))
        draw_head(maps, head, ax=ax)
        plt.show()

    out = widgets.interactive_output(redraw, {"head": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- exercises

_EX_B, _EX_T, _EX_H, _EX_D = 2, 5, 3, 4  # T != h != d so every mix-up shows in the shape or values


def _example_input() -> torch.Tensor:
    return torch.arange(_EX_B * _EX_T * _EX_H * _EX_D, dtype=torch.float64).reshape(
        _EX_B, _EX_T, _EX_H * _EX_D)


@exercise("07-1")
def _check_split(fn):
    x = _example_input()  # (2, 5, 12)
    got = _as_tensor(_call(fn, x.clone(), _EX_H, what="split_heads(x, 3)"), "split_heads")
    want = x.view(_EX_B, _EX_T, _EX_H, _EX_D).transpose(1, 2)
    if got.shape == (_EX_B, _EX_T, _EX_H, _EX_D):
        raise Wrong("모양이 (B, T, h, d) = (2, 5, 3, 4)입니다. 헤드 축을 시간 축 앞으로 옮기는 "
                    "transpose(1, 2)가 빠졌습니다; 기대하는 모양은 (B, h, T, d) = (2, 3, 5, 4)입니다.")
    if got.shape != want.shape:
        raise Wrong(f"모양이 {tuple(got.shape)}입니다. x가 (B, T, C) = (2, 5, 12), h = 3이면 "
                    f"(B, h, T, d) = (2, 3, 5, 4)여야 합니다.")
    if torch.equal(got, x.reshape(_EX_B, _EX_H, _EX_T, _EX_D)):
        raise Wrong("모양은 (2, 3, 5, 4)로 맞지만 값이 섞였습니다: view/reshape로 곧바로 (B, h, T, d)를 만들면 "
                    "한 '헤드'의 행들이 여러 토큰의 특성을 이어 붙인 조각이 됩니다. "
                    "먼저 (B, T, h, d)로 나눈 뒤 transpose(1, 2) 하세요.")
    if not torch.equal(got, want):
        bad = (got != want).nonzero()[0].tolist()
        raise Wrong(f"모양은 맞지만 값이 다릅니다 (처음 다른 위치 {bad}: {got[tuple(bad)].item():g}, "
                    f"정답 {want[tuple(bad)].item():g}). 헤드 h의 특성은 원래 열 h·d … h·d+d−1이어야 합니다.")
    return "(B, T, C) → (B, T, h, d) → (B, h, T, d): 각 헤드가 모든 토큰의 자기 몫 d개 특성을 갖습니다."


@exercise("07-2")
def _check_merge(fn):
    x = _example_input()
    heads = x.view(_EX_B, _EX_T, _EX_H, _EX_D).transpose(1, 2).contiguous()  # (2, 3, 5, 4)
    got = _as_tensor(_call(fn, heads.clone(), what="merge_heads(heads)"), "merge_heads")
    if got.shape == (_EX_B, _EX_T, _EX_H, _EX_D):
        raise Wrong("모양이 (B, T, h, d) = (2, 5, 3, 4)입니다. 마지막 두 축을 합쳐 (B, T, h·d) = (2, 5, 12)로 "
                    "이어 붙이는 reshape가 빠졌습니다.")
    if got.shape != x.shape:
        raise Wrong(f"모양이 {tuple(got.shape)}입니다. (B, h, T, d) = (2, 3, 5, 4)를 합치면 "
                    f"(B, T, h·d) = (2, 5, 12)여야 합니다.")
    if torch.equal(got, heads.reshape(_EX_B, _EX_T, _EX_H * _EX_D)):
        raise Wrong("모양은 (2, 5, 12)로 맞지만 값이 섞였습니다: (B, h, T, d)를 곧바로 reshape하면 "
                    "한 토큰의 출력에 다른 토큰의 헤드 출력이 들어갑니다. 먼저 transpose(1, 2)로 "
                    "(B, T, h, d)를 만든 뒤 reshape 하세요.")
    if torch.equal(got, heads.flip(1).transpose(1, 2).reshape(_EX_B, _EX_T, -1)):
        raise Wrong("헤드가 거꾸로 이어 붙었습니다 (헤드 2, 1, 0 순서). W^O의 열은 헤드 0, 1, 2 순서를 "
                    "가정하므로 헤드 순서를 바꾸면 출력이 달라집니다.")
    if not torch.equal(got, x):
        bad = (got != x).nonzero()[0].tolist()
        raise Wrong(f"모양은 맞지만 값이 다릅니다 (처음 다른 위치 {bad}: {got[tuple(bad)].item():g}, "
                    f"정답 {x[tuple(bad)].item():g}).")
    return "merge_heads(split_heads(x, h)) == x: 두 연산은 서로의 역입니다."


@exercise("07-3")
def _check_param_count(fn):
    cases = [(64, 1, True), (64, 4, True), (64, 16, True), (512, 8, True), (48, 3, False), (768, 12, False)]
    for c, h, bias in cases:
        call = f"mha_param_count(d_model={c}, num_heads={h}, bias={bias})"
        got = _as_tensor(_call(fn, c, h, bias, what=call), "mha_param_count")
        if got.numel() != 1:
            raise Wrong(f"{call}는 숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다.")
        got = got.item()
        want = mha_param_formula(c, bias)
        if got == want:
            continue
        hints = {
            4 * c * c + 4 * c: "bias=False인데 편향 4·C개를 더했습니다",
            4 * c * c: "편향 4·C개(각 Linear의 bias)를 빠뜨렸습니다",
            3 * c * c + (3 * c if bias else 0): "출력 투영 W^O (C² + C개)를 빠뜨렸습니다",
            4 * h * c * c + (4 * h * c if bias else 0): "헤드마다 C×C 행렬을 따로 세었습니다. "
            "헤드 하나의 투영은 C×(C/h)이므로 h개를 합쳐도 C×C입니다",
            4 * c * (c // h) + (4 * (c // h) if bias else 0): "헤드 하나 분량(C×C/h)만 세었습니다. "
            "h개 헤드를 모두 합쳐야 합니다",
        }
        hint = hints.get(int(got)) if float(got).is_integer() else None
        reason = f" {hint}." if hint else ""
        raise Wrong(f"{call} = {got:g}, 정답은 {want}입니다.{reason}")
    return "4·C² + 4·C: 헤드 수 h는 파라미터 수에 나타나지 않습니다 (h는 C를 나누는 방법일 뿐)."
