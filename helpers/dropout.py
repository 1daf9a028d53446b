"""Notebook 06 (attention dropout): dropout draws, the p slider, a tiny model to train, checkers."""

from __future__ import annotations

import math
import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import scaled_dot_product_attention
from .exercises import Wrong, _as_tensor, _call, exercise
from .plots import attention_heatmap, to_numpy

__all__ = [
    "sample_dropout",
    "mean_error_curve",
    "row_sum_variance",
    "draw_dropout",
    "dropout_explorer",
    "make_repeat_task",
    "TinyAttentionClassifier",
    "evaluate",
    "train_classifier",
]


# --------------------------------------------------------------------------- checks


def _as_p(p, high: float = 1.0) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"p must be a real number, got {type(p).__name__}")
    if not (0.0 <= p < high):
        raise ValueError(f"p must be in [0, {high:g}), got {p}")
    return float(p)


def _as_count(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    return int(n)


def _as_matrix(name: str, x) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 2 or not x.is_floating_point():
        raise ValueError(f"{name} must be a 2-D float tensor (T, d), got shape {tuple(x.shape)}, dtype {x.dtype}")
    return x


# --------------------------------------------------------------------------- dropout draws


def sample_dropout(query, key, value, p: float, n: int, *, seed: int = 0):
    """n independent train-mode draws; returns ``(outputs (n, T_q, d_v), weights (n, T_q, T_k))``.

    Uses its own seeded RNG stream, so it neither depends on nor disturbs the global one.
    """
    query, key, value = (_as_matrix(nm, x) for nm, x in (("query", query), ("key", key), ("value", value)))
    p, n = _as_p(p), _as_count("n", n)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        q = query.expand(n, *query.shape)  # (n, T_q, d_k): one independent dropout mask per copy
        return scaled_dot_product_attention(q, key, value, dropout_p=p, training=True)


def mean_error_curve(query, key, p: float, ns, *, seed: int = 0) -> np.ndarray:
    """RMS error between the mean of the first n dropout draws and the eval weights, for each n."""
    ns = [_as_count("each n", n) for n in ns]
    if not ns:
        raise ValueError("ns must contain at least one draw count, got an empty list")
    _, exact = scaled_dot_product_attention(query, key, key)  # (T_q, T_k): eval weights
    _, draws = sample_dropout(query, key, key, p, max(ns), seed=seed)  # (N, T_q, T_k)
    running = draws.double().cumsum(dim=0) / torch.arange(1, max(ns) + 1).view(-1, 1, 1)  # mean of first n
    return np.array([(running[n - 1] - exact.double()).pow(2).mean().sqrt().item() for n in ns])


def row_sum_variance(weights, p: float) -> torch.Tensor:
    """Variance of each row sum after dropout: p/(1−p) · Σ_j w_ij²."""
    w = _as_matrix("weights", weights)
    p = _as_p(p)
    return p / (1 - p) * w.pow(2).sum(dim=-1)


# --------------------------------------------------------------------------- the p slider


def draw_dropout(query, key, p: float, *, labels=None, seed: int = 1, n_avg: int = 1000, axes=None) -> dict:
    """Left: one dropout draw of the weights; right: the mean of ``n_avg`` draws. Row sums on the y axis.

    Returns the drawn matrices and their row sums as numpy arrays.
    """
    p = _as_p(p)
    n_avg = _as_count("n_avg", n_avg)
    _, draws = sample_dropout(query, key, key, p, n_avg, seed=seed)  # (n_avg, T_q, T_k)
    one, mean = to_numpy(draws[0]), to_numpy(draws.mean(dim=0))
    t_q, t_k = one.shape
    labels = list(labels) if labels is not None else [str(i) for i in range(t_q)]
    if len(labels) != t_q or t_q != t_k:
        raise ValueError(f"need a square weight matrix and one label per token: {len(labels)} labels, "
                         f"matrix of shape ({t_q}, {t_k})")
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10.0, 3.8))
    vmax = max(1.0, float(one.max()))
    for ax, mat, name in ((axes[0], one, "한 번 뽑은 드롭아웃"), (axes[1], mean, f"{n_avg}번 평균")):
        sums = mat.sum(axis=1)
        rows = [f"{lab} (합 {s:.2f})" for lab, s in zip(labels, sums)]
        attention_heatmap(mat, rows, labels, ax=ax, title=f"p = {p:.2f}: {name}", vmax=vmax, colorbar=False)
    return {"one": one, "one_row_sums": one.sum(axis=1), "mean": mean, "mean_row_sums": mean.sum(axis=1)}


def dropout_explorer(query, key, *, labels=None, n_avg: int = 1000):
    """A p slider (0 … 0.9); the figure redraws one dropout draw and the mean of many."""
    import ipywidgets as widgets

    slider = widgets.FloatSlider(value=0.3, min=0.0, max=0.9, step=0.05, description="p",
                                 continuous_update=False)

    def redraw(p):
        draw_dropout(query, key, p, labels=labels, n_avg=n_avg)
        plt.tight_layout()
        plt.show()

    out = widgets.interactive_output(redraw, {"p": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- a tiny model that overfits


def make_repeat_task(n: int, *, vocab: int = 12, seq_len: int = 8, seed: int = 0):
    """Random token sequences; label 1 if the first token appears again later. Returns ``(x (n, T), y (n,))``."""
    n, vocab, seq_len = _as_count("n", n), _as_count("vocab", vocab), _as_count("seq_len", seq_len)
    if seq_len < 2:
        raise ValueError(f"seq_len must be >= 2 (a first token and at least one more), got {seq_len}")
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, vocab, (n, seq_len), generator=g)  # (n, T)
    y = (x[:, 1:] == x[:, :1]).any(dim=1).long()  # (n,)
    return x, y


class TinyAttentionClassifier(nn.Module):
    """Embeddings + one self-attention layer with attention dropout; the first position's output is classified."""

    def __init__(self, vocab: int = 12, seq_len: int = 8, d_model: int = 16, dropout_p: float = 0.0):
        super().__init__()
        self.dropout_p = _as_p(dropout_p)
        self.tok = nn.Embedding(_as_count("vocab", vocab), _as_count("d_model", d_model))
        self.pos = nn.Parameter(0.5 * torch.randn(_as_count("seq_len", seq_len), d_model))
        self.q, self.k, self.v = (nn.Linear(d_model, d_model) for _ in range(3))
        self.out = nn.Linear(d_model, 2)

    def forward(self, x: torch.Tensor):
        """Return ``(logits (B, 2), weights (B, T, T))``."""
        if not isinstance(x, torch.Tensor) or x.dtype != torch.long or x.dim() != 2:
            raise ValueError(f"x must be a (B, T) tensor of token ids (torch.long), got {getattr(x, 'shape', x)}")
        h = self.tok(x) + self.pos  # (B, T, d)
        out, weights = scaled_dot_product_attention(
            self.q(h), self.k(h), self.v(h), dropout_p=self.dropout_p, training=self.training
        )
        return self.out(out[:, 0]), weights  # the first token's query decides


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Eval-mode loss, accuracy and mean entropy (nats) of the first query's weights; restores the mode."""
    was_training = model.training
    model.eval()
    logits, weights = model(x)
    model.train(was_training)
    w0 = weights[:, 0]  # (B, T_k): what the deciding query looks at
    ent = -(w0 * w0.clamp_min(1e-12).log()).sum(dim=-1).mean()
    return {"loss": F.cross_entropy(logits, y).item(),
            "acc": (logits.argmax(dim=-1) == y).float().mean().item(),
            "entropy": ent.item()}


def train_classifier(p: float, *, n_train: int = 256, n_val: int = 2000, steps: int = 400,
                     lr: float = 1e-2, seed: int = 0, eval_every: int = 0) -> dict:
    """Train a TinyAttentionClassifier with attention dropout p (full batch, Adam); return its metrics.

    The data are fixed (seeds 1 and 2), ``seed`` sets the initial weights and the dropout draws.
    With ``eval_every`` > 0 the result also holds eval-mode curves every that many steps.
    """
    p, steps = _as_p(p), _as_count("steps", steps)
    x_tr, y_tr = make_repeat_task(n_train, seed=1)
    x_va, y_va = make_repeat_task(n_val, seed=2)
    torch.manual_seed(seed)
    model = TinyAttentionClassifier(dropout_p=p)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    curve = {"step": [], "train_loss": [], "val_loss": []}
    for step in range(1, steps + 1):
        model.train()
        loss = F.cross_entropy(model(x_tr)[0], y_tr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if eval_every and (step % eval_every == 0 or step == 1):
            curve["step"].append(step)
            curve["train_loss"].append(evaluate(model, x_tr, y_tr)["loss"])
            curve["val_loss"].append(evaluate(model, x_va, y_va)["loss"])
    train, val = evaluate(model, x_tr, y_tr), evaluate(model, x_va, y_va)
    result = {"p": p, "seed": seed, "train_loss": train["loss"], "train_acc": train["acc"],
              "val_loss": val["loss"], "val_acc": val["acc"], "val_entropy": val["entropy"]}
    if eval_every:
        result["curve"] = curve
    return result


# --------------------------------------------------------------------------- exercises


_W = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], dtype=torch.float64)


@exercise("06-1")
def _apply_keep_mask(fn):
    keep = torch.tensor([[True, False, True], [True, True, False]])
    for p in (0.25, 0.5):
        got = _as_tensor(_call(fn, _W.clone(), keep.clone(), p, what=f"apply_keep_mask(W, keep, {p})"),
                         "apply_keep_mask")
        want = _W * keep / (1 - p)
        if got.shape != want.shape:
            raise Wrong(f"결과의 모양이 {tuple(got.shape)}입니다. 가중치와 같은 모양 {tuple(want.shape)}이어야 합니다.")
        if torch.allclose(got, want, atol=1e-9):
            continue
        if torch.allclose(got, _W * keep, atol=1e-9):
            raise Wrong(f"살아남은 가중치를 1/(1−p) = {1 / (1 - p):.4g}배 하지 않았습니다. "
                        "그러면 기댓값이 W가 아니라 (1−p)·W로 줄어듭니다.")
        if torch.allclose(got, _W * keep * (1 - p), atol=1e-9):
            raise Wrong(f"(1−p)를 곱했습니다. 살아남은 가중치는 (1−p)로 **나눠야** 합니다 (p={p}: ×{1 / (1 - p):.4g}).")
        if torch.allclose(got, _W * ~keep / (1 - p), atol=1e-9) or torch.allclose(got, _W * ~keep / p, atol=1e-9):
            raise Wrong("keep이 True인 자리를 0으로 만들었습니다. True는 '남긴다'는 뜻입니다.")
        if torch.allclose(got, _W * keep / p, atol=1e-9):
            raise Wrong(f"p로 나눴습니다. 남는 확률은 1−p이므로 1−p = {1 - p:g}로 나눠야 합니다.")
        kept = _W * keep
        if torch.allclose(got, kept / kept.sum(dim=-1, keepdim=True), atol=1e-9):
            raise Wrong("행의 합이 1이 되도록 다시 나눴습니다(재정규화). 그러면 한 항목의 기댓값이 W와 달라집니다. "
                        "드롭아웃은 1/(1−p)만 곱하고, 행의 합은 1이 아니어도 됩니다.")
        worst = tuple(int(i) for i in divmod(int((got - want).abs().argmax()), want.shape[1]))
        raise Wrong(f"p={p}에서 위치 {worst}의 값이 {got[worst].item():.4g}인데, 정답은 {want[worst].item():.4g}입니다.")
    return "남긴 가중치만 1/(1−p)배: 항목마다 기댓값이 W와 같습니다."


@exercise("06-2")
def _row_sum_variance(answer):
    w, p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64), 0.2
    got = _as_tensor(answer, "답")
    if got.numel() != 1:
        raise Wrong(f"숫자 하나(분산)를 답해야 합니다. 받은 모양은 {tuple(got.shape)}입니다.")
    got = got.reshape(()).item()
    want = p / (1 - p) * (w ** 2).sum().item()
    if math.isclose(got, want, rel_tol=1e-3):
        return f"Var = p/(1−p) · Σw² = 0.25 × 0.38 = {want:.4f}. 표준편차로는 {math.sqrt(want):.3f}입니다."
    if math.isclose(got, (w ** 2).sum().item(), rel_tol=1e-3):
        raise Wrong("Σw² = 0.38에서 멈췄습니다. 한 항목의 분산은 w²·p/(1−p)이므로 p/(1−p) = 0.25를 곱하세요.")
    if math.isclose(got, p * (1 - p) * (w ** 2).sum().item(), rel_tol=1e-3):
        raise Wrong("p(1−p)를 곱했습니다. 그것은 0/1 마스크의 분산입니다. 살아남은 값은 w/(1−p)이므로 "
                    "분산은 w²·p(1−p)/(1−p)² = w²·p/(1−p)입니다.")
    if math.isclose(got, p / (1 - p) * w.sum().item(), rel_tol=1e-3) or math.isclose(got, p / (1 - p), rel_tol=1e-3):
        raise Wrong("w가 아니라 w²를 더해야 합니다: 분산은 항목 크기의 제곱에 비례합니다 (Σw² = 0.38).")
    if math.isclose(got, math.sqrt(want), rel_tol=1e-3):
        raise Wrong("표준편차를 답했습니다. 제곱근을 취하기 전의 분산을 답하세요.")
    if math.isclose(got, p * (w ** 2).sum().item(), rel_tol=1e-3):
        raise Wrong("p만 곱했습니다. 살아남은 값이 w/(1−p)로 커지므로 한 항목의 분산은 w²·p/(1−p)입니다 "
                    "(p/(1−p) = 0.25).")
    if math.isclose(got, 0.0, abs_tol=1e-9):
        raise Wrong("분산이 0이라면 행의 합이 늘 1이라는 뜻인데, 드롭아웃 뒤에는 행의 합이 뽑을 때마다 달라집니다.")
    raise Wrong(f"받은 값 {got:.4g}은 정답과 다릅니다. 항목마다 분산 w²·p/(1−p)를 구해 더하세요 "
                "(드롭아웃은 항목마다 독립입니다).")


@exercise("06-3")
def _predict(fn):
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 2)).double()
    module.train()
    x = torch.randn(3, 4, dtype=torch.float64)
    want = module[2](module[0](x)).detach()  # no dropout = eval mode
    first = _as_tensor(_call(fn, module, x, what="predict(module, x)"), "predict")
    if not module.training:
        raise Wrong("호출한 뒤 모듈이 평가 모드로 남았습니다. 학습을 이어가려면 원래 모드(학습 모드)로 되돌려야 합니다 "
                    "(was = module.training ... module.train(was)).")
    second = _as_tensor(_call(fn, module, x, what="predict(module, x)"), "predict")
    if first.shape != want.shape:
        raise Wrong(f"결과의 모양이 {tuple(first.shape)}입니다. 모듈의 출력 모양 {tuple(want.shape)}이어야 합니다.")
    if not torch.allclose(first, second):
        raise Wrong("같은 입력으로 두 번 불렀더니 결과가 다릅니다: 드롭아웃이 켜져 있습니다. module.eval()을 쓰세요.")
    if torch.allclose(first, 0.5 * want) or torch.allclose(first, 2 * want):
        raise Wrong("출력에 직접 (1−p)나 1/(1−p)를 곱할 필요가 없습니다. 역 드롭아웃(inverted dropout)은 학습 때 이미 "
                    "1/(1−p)배를 했으므로 평가 모드는 그냥 드롭아웃을 끄면 됩니다.")
    if not torch.allclose(first, want):
        raise Wrong("결과가 결정적이지만 평가 모드의 출력과 다릅니다. 모듈을 그대로 호출하되 평가 모드에서 호출하세요.")
    if torch.is_tensor(first) and first.requires_grad:
        raise Wrong("출력이 기울기를 추적합니다. 예측에는 torch.no_grad()가 필요합니다.")
    module.eval()
    _call(fn, module, x, what="predict(module, x)")
    if module.training:
        raise Wrong("평가 모드였던 모듈이 호출 뒤 학습 모드가 됐습니다. module.train()으로 무조건 켜지 말고 "
                    "원래 모드를 기억했다가 되돌리세요 (was = module.training ... module.train(was)).")
    return "같은 입력에 늘 같은 출력(평가 모드), 호출 뒤에는 학습 모드로 돌아갑니다."
