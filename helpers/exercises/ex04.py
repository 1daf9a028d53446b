"""Checkers for notebook 04 (왜 √d_k로 나누는가)."""

from __future__ import annotations

import math
import numbers
import tracemalloc

import numpy as np
import torch

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle


def _batch_transpose_hint(fn) -> str:
    """Which transpose broke the batched case: probe with a cube (B = T_k = d_k = 4), where every one runs."""
    gen = torch.Generator().manual_seed(41)
    q = torch.randn(4, 2, 4, generator=gen, dtype=torch.float64)  # (B, T_q, d_k)
    k = torch.randn(4, 4, 4, generator=gen, dtype=torch.float64)  # (B, T_k, d_k)
    try:
        got = torch.as_tensor(fn(q.clone(), k.clone()), dtype=torch.float64)
    except Exception:
        got = None
    fix = "k.transpose(-2, -1)로 마지막 두 축(T_k, d_k)만 바꾸세요."
    if got is not None and got.shape == (4, 2, 4):
        if torch.allclose(got, q @ k.transpose(0, 1) / 2, atol=1e-5):
            return (
                "k.transpose(0, 1)은 배치 차원이 있으면 첫 두 축, 곧 배치 축 B와 키 축 T_k를 맞바꿉니다 "
                f"((B, T_k, d_k) → (T_k, B, d_k)): 2차원에서만 kᵀ입니다. {fix}"
            )
        if torch.allclose(got, q @ k.permute(2, 1, 0) / 2, atol=1e-5):
            return f"k.T는 모든 축의 순서를 뒤집어 (B, T_k, d_k)를 (d_k, T_k, B)로 만듭니다. {fix}"
    return f"2차원에서만 맞는 전치(k.T, k.transpose(0, 1))는 배치 축까지 옮깁니다. {fix}"


# 03's section 2 already saved this very computation: 04-1 asks for it written out, not called.
_LESSON_03 = {"attention_scores", "scaled_dot_product_attention", "SelfAttention"}


@exercise("04-1")
def _scaled_scores(fn):
    forbid_calls(
        fn,
        _LESSON_03,
        "04-1은 03번의 attention_scores를 부르지 않고 q @ kᵀ / √d_k를 직접 쓰는 문제입니다 "
        "(배치 차원이 있을 때 어느 축을 바꿔야 하는지가 연습의 내용입니다).",
    )
    gen = torch.Generator().manual_seed(4)
    cases = [((3, 4), (5, 4)), ((1, 9), (6, 9)), ((4, 16), (4, 16)), ((2, 3, 8), (2, 5, 8))]
    for q_shape, k_shape in cases:
        q = torch.randn(q_shape, generator=gen, dtype=torch.float64)
        k = torch.randn(k_shape, generator=gen, dtype=torch.float64)
        what = f"scaled_scores(q {q_shape}, k {k_shape})"
        hint = (
            ""
            if len(q_shape) == 3
            else "2차원 (T, d_k) 입력에도 동작해야 합니다: torch.bmm은 3차원만 받으니 @(torch.matmul)를 쓰세요."
        )
        try:
            got = answer_tensor(call_learner(fn, q.clone(), k.clone(), what=what, hint=hint), what)
        except Wrong as wrong:
            if len(q_shape) == 3:
                raise Wrong(f"{wrong} 배치 차원이 있는 입력에서 실패했습니다: {_batch_transpose_hint(fn)}") from None
            raise
        raw = q @ k.transpose(-2, -1)  # (..., T_q, T_k)
        d_k, want = q_shape[-1], raw / math.sqrt(q_shape[-1])
        if got.shape != want.shape:
            if got.shape == want.transpose(-2, -1).shape:
                raise Wrong(
                    f"{what}의 모양이 {tuple(got.shape)}입니다. 행이 쿼리, 열이 키인 "
                    f"{particle(tuple(want.shape), '이/가')} 되어야 합니다: q @ kᵀ 순서를 확인하세요."
                )
            raise Wrong(
                f"{what}의 모양이 {tuple(got.shape)}입니다. "
                f"(…, T_q, T_k) = {particle(tuple(want.shape), '이/가')} 되어야 합니다."
            )
        if torch.allclose(got, want, atol=1e-5):
            continue
        if torch.allclose(got, raw, atol=1e-5):
            raise Wrong(f"√d_k로 나누지 않았습니다 ({what}: d_k = {d_k}). 점수의 분산이 1이 아니라 d_k가 됩니다.")
        if torch.allclose(got, raw / d_k, atol=1e-5):
            raise Wrong(
                f"{particle(f'd_k = {d_k}', '으로/로')} 나눴습니다. {particle(f'√d_k = {math.sqrt(d_k):.3g}', '으로/로')} "
                f"나눠야 분산이 1이 됩니다 (d_k로 나누면 분산이 {particle(f'1/d_k = {1 / d_k:.3g}', '으로/로')} 줄어 "
                "가중치가 너무 평평해집니다)."
            )
        if torch.allclose(got, raw * math.sqrt(d_k), atol=1e-5):
            raise Wrong(f"√d_k를 곱했습니다. 나눠야 합니다 ({what}).")
        for name, n in (("T_q", q_shape[-2]), ("T_k", k_shape[-2])):
            if n != d_k and torch.allclose(got, raw / math.sqrt(n), atol=1e-5):
                raise Wrong(
                    f"{particle(f'√{name} = √{n}', '으로/로')} 나눴습니다. d_k는 q와 k의 마지막 축, 곧 키 차원({d_k})입니다."
                )
        worst = tuple(int(i) for i in torch.unravel_index((got - want).abs().argmax(), want.shape))
        raise Wrong(
            f"{what}: 위치 {worst}의 점수가 {got[worst].item():.6g}인데 "
            f"{particle(f'{want[worst].item():.6g}', '이/가')} 되어야 합니다."
        )
    return "q @ kᵀ / √d_k: 배치 차원이 있어도 마지막 두 축만 다룹니다."


_VAR_Q, _VAR_K, _DK_EX2 = 4.0, 1.0, 64


@exercise("04-2")
def _scale_factor(c):
    if isinstance(c, bool) or not isinstance(c, (numbers.Real, torch.Tensor, np.ndarray)):
        raise Wrong(f"숫자 하나를 넘기세요; 받은 것은 {type(c).__name__}입니다.")
    c_t = answer_tensor(c, "c")
    if c_t.numel() != 1:
        raise Wrong(f"숫자 하나를 넘기세요; 모양 {tuple(c_t.shape)}의 텐서를 받았습니다.")
    c = c_t.item()
    var = _DK_EX2 * _VAR_Q * _VAR_K
    want = math.sqrt(var)
    if math.isclose(c, want, rel_tol=1e-6):
        return f"Var(q·k) = d_k·σ_q²·σ_k² = {var:g}, 그래서 c = √{var:g} = {want:g}."
    if math.isclose(c, -want, rel_tol=1e-6):
        return (
            f"c = {c:g}도 됩니다: 점수를 c로 나누면 분산은 c²으로 나뉘므로 부호는 상관없습니다. "
            f"Var(q·k) = d_k·σ_q²·σ_k² = {var:g}, |c| = √{var:g} = {want:g} (보통은 양수 {particle(f'{want:g}', '을/를')} 씁니다)."
        )
    if not (math.isfinite(c) and c != 0):
        raise Wrong(f"c = {c}: 나누는 수는 0이 아닌 유한한 수여야 합니다.")
    c = abs(c)  # the sign drops out of Var(q·k / c) = Var(q·k) / c²: diagnose |c|
    if math.isclose(c, math.sqrt(_DK_EX2), rel_tol=1e-6):
        raise Wrong(
            f"{particle(f'c = √d_k = {c:g}', '은/는')} 성분 분산이 1일 때의 답입니다. 여기서는 Var(q_j) = {_VAR_Q:g}라서 "
            f"Var(q·k) = d_k·Var(q_j)·Var(k_j)입니다."
        )
    if math.isclose(c, var, rel_tol=1e-6):
        raise Wrong(
            f"{particle(f'c = {c:g}', '은/는')} 분산 그 자체입니다. 점수를 c로 나누면 분산은 c²으로 나뉘므로 "
            "c는 표준편차(분산의 제곱근)여야 합니다."
        )
    if math.isclose(c, _DK_EX2, rel_tol=1e-6):
        raise Wrong(
            f"{particle(f'c = d_k = {c:g}', '으로/로')} 나누면 분산이 "
            f"{particle(f'{var:g}/{c * c:g} = {var / c**2:.3g}', '이/가')} 됩니다. 제곱근을 빠뜨렸나요?"
        )
    if math.isclose(c, _VAR_Q * math.sqrt(_DK_EX2), rel_tol=1e-6):
        raise Wrong(
            f"c = {c:g}: σ_q 대신 {particle(f'분산 σ_q² = {_VAR_Q:g}', '을/를')} 곱했습니다. "
            f"q의 표준편차는 √{_VAR_Q:g}입니다."
        )
    if math.isclose(c, want, rel_tol=0.03):
        raise Wrong(
            f"{particle(f'c = {c:g}', '은/는')} 정답에 가깝지만(분산 {var / c**2:.3f}) 정확하지 않습니다. 표본에서 잰 표준편차는 "
            "표본마다 조금씩 다릅니다: 표본값이 아니라 식 Var(q·k) = d_k·Var(q_j)·Var(k_j)로 정확한 c를 구하세요."
        )
    raise Wrong(
        f"{particle(f'c = {c:g}', '으로/로')} 나누면 점수의 분산이 "
        f"{particle(f'{var:g}/{c * c:.4g} = {var / c**2:.4g}', '이/가')} 됩니다. 1이 되어야 합니다."
    )


# What 04-3 rules out: section 4's Jacobian, the matrices it is built from, and automatic differentiation
# in every form (torch.autograd, torch.func, forward-mode duals).
_AUTOGRAD = {
    "softmax_jacobian", "diag", "diag_embed", "diagflat", "outer", "eye",
    "autograd", "func", "jacobian", "jacrev", "jacfwd", "vjp", "jvp", "grad", "backward", "hessian",
    "make_dual", "unpack_dual", "dual_level",
}  # fmt: skip


class _LargestTensor(torch.overrides.TorchFunctionMode):
    """Records the largest number of elements of any tensor a torch function or tensor method returns."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


class _PythonMemoryPeak:
    """The peak of memory allocated through Python's allocator (NumPy arrays, lists) inside the block, in bytes.
    Torch tensors use their own allocator: _LargestTensor watches those."""

    def __enter__(self):
        self.peak, self._started = 0, not tracemalloc.is_tracing()
        if self._started:
            tracemalloc.start()
        tracemalloc.reset_peak()
        self._base = tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, *exc):
        self.peak = tracemalloc.get_traced_memory()[1] - self._base
        if self._started:
            tracemalloc.stop()
        return False


def _softmax_vjp(s, g):
    """∂L/∂s of L = g·softmax(s), by autograd: the reference 04-3 is checked against."""
    s = s.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(torch.softmax(s, dim=-1), s, g)
    return grad


@exercise("04-3")
def _softmax_backward(fn):
    why = (
        "04-3은 4절의 softmax_jacobian이나 diag·outer로 T×T 행렬을 만들지 않고, 자동 미분도 없이 "
        "J = diag(w) − w wᵀ를 g에 곱한 식을 풀어 O(T)로 계산하는 문제입니다."
    )
    forbid_calls(fn, _AUTOGRAD, why)
    gen = torch.Generator().manual_seed(43)
    for shape in ((5,), (3, 7), (2, 3, 4), (1, 64)):
        s = 2 * torch.randn(shape, generator=gen, dtype=torch.float64)
        g = torch.randn(shape, generator=gen, dtype=torch.float64)
        w = torch.softmax(s, dim=-1)
        what = f"softmax_backward(w, g) (모양 {shape})"
        batched = len(shape) > 1
        hint = "w·g는 마지막 축으로만 합하고 keepdim=True로 축을 남기세요 (…, 1)." if batched else ""
        mode = _LargestTensor()
        with mode, _PythonMemoryPeak() as memory:
            got = call_learner(fn, w.clone(), g.clone(), what=what, hint=hint)
        got = answer_tensor(got, what)
        want = _softmax_vjp(s, g)  # (..., T)
        T = shape[-1]
        if T >= 64 and mode.largest >= T * T:
            raise Wrong(
                f"{what}: 원소 {mode.largest}개짜리 텐서를 만들었습니다 (T×T = {T * T}). 역전파는 J를 만들지 않습니다: "
                "J g를 항별로 풀면 w와 g의 원소별 곱과 내적 하나로 충분합니다."
            )
        if T >= 64 and memory.peak >= 4 * T * T:  # a float32 T×T array; an O(T) answer stays under 8 KB
            raise Wrong(
                f"{what}: NumPy 배열이나 파이썬 리스트로 약 {memory.peak // 1024} KB를 썼습니다: T×T = {T * T}개 "
                "원소의 행렬을 만든 크기입니다. 역전파는 J를 만들지 않습니다: J g를 항별로 풀면 w와 g의 원소별 곱과 "
                "내적 하나로 충분합니다."
            )
        if got.shape != want.shape:
            raise Wrong(
                f"{what}의 모양이 {tuple(got.shape)}입니다. 점수 s와 같은 "
                f"{particle(tuple(want.shape), '이/가')} 되어야 합니다. {hint}".strip()
            )
        if torch.allclose(got, want, atol=1e-10):
            continue
        wg = (w * g).sum(-1, keepdim=True)  # (..., 1): w·g
        close = lambda x, got=got: torch.allclose(got, x, atol=1e-8)  # noqa: E731
        if close(-want):
            raise Wrong(f"{what}: 부호가 반대입니다. J = diag(w) − w wᵀ에서 빼는 쪽은 w wᵀ 항입니다.")
        if close(w * g):
            raise Wrong(
                f"{what}: diag(w) g 항만 있습니다. −w wᵀ g 항이 빠졌습니다: wᵀg는 숫자 하나(w·g)이고, "
                "한 점수가 오르면 다른 가중치가 모두 줄어드는 효과가 이 항입니다."
            )
        if close(g):
            raise Wrong(f"{what}: g를 그대로 돌려줬습니다. 소프트맥스를 지나며 J가 곱해져야 합니다.")
        if close(w * (g + wg)):
            raise Wrong(f"{what}: w wᵀ g 항의 부호가 반대입니다. J = diag(w) − w wᵀ이므로 빼야 합니다.")
        if close(w * g - wg):
            raise Wrong(
                f"{what}: w wᵀ g에서 앞의 w가 빠졌습니다. wᵀg = w·g는 숫자 하나이고, w wᵀ g는 그 수를 곱한 벡터 w입니다."
            )
        if batched and close(w * (g - (w * g).sum())):
            raise Wrong(
                f"{what}: w·g를 배치 전체로 합했습니다. 행마다 따로, 마지막 축으로만 합하세요 "
                "(sum(dim=-1, keepdim=True))."
            )
        worst = tuple(int(i) for i in torch.unravel_index((got - want).abs().argmax(), want.shape))
        raise Wrong(
            f"{what}: 위치 {worst}의 값이 {got[worst].item():.6g}인데 자동 미분으로는 "
            f"{want[worst].item():.6g}입니다. J g를 항별로 다시 풀어 보세요."
        )
    return (
        "자동 미분과 같습니다: 행렬 T×T 없이 원소별 곱과 내적 하나로 O(T)입니다. 역전파에는 Jᵀg가 필요하지만 "
        "소프트맥스의 J는 대칭(Jᵀ = J)이라 J g와 같습니다. 일반 함수에서는 전치를 잊으면 틀립니다."
    )
