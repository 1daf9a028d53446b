"""Checkers for notebook 02 (seq2seq와 어텐션)."""

from __future__ import annotations

import torch

from . import Wrong, answer_tensor, call_learner, exercise, particle

_F64 = torch.float64


def _fmt(x: torch.Tensor) -> list[float]:
    return [round(v, 3) for v in x.reshape(-1).tolist()]


def _squeeze_hint(got: torch.Tensor, want: torch.Tensor) -> str:
    """A hint when the answer only carries an extra axis of length 1 (what bmm or `@ v[:, None]` leaves)."""
    if got.numel() == want.numel() and [n for n in got.shape if n != 1] == [n for n in want.shape if n != 1]:
        axes = [i for i, n in enumerate(got.shape) if n == 1 and (i >= len(want.shape) or want.shape[i] != 1)]
        axis = axes[0] - len(got.shape) if axes else -1
        return f" 값은 맞을 수 있습니다: 길이 1인 축이 하나 더 남았습니다. .squeeze({axis})로 지우세요."
    return ""


@exercise("02-1")
def _dot_attention_step(fn):
    g = torch.Generator().manual_seed(2)
    for scale in (1.0, 3.0):
        query = torch.randn(3, 4, generator=g, dtype=_F64) * scale  # (B, d)
        keys = torch.randn(3, 5, 4, generator=g, dtype=_F64)  # (B, T, d)
        got = call_learner(fn, query.clone(), keys.clone(), what="dot_attention_step(query, keys)")
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            raise Wrong(
                f"(context, weights) 두 값을 튜플(또는 리스트)로 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다."
            )
        context, weights = answer_tensor(got[0], "context"), answer_tensor(got[1], "weights")
        scores = (keys @ query[:, :, None]).squeeze(-1)  # (B, T)
        want_w = torch.softmax(scores, dim=-1)
        want_c = (want_w[:, None, :] @ keys).squeeze(1)  # (B, d)
        if context.shape == want_w.shape and weights.shape == want_c.shape:
            raise Wrong(
                f"순서가 바뀌었습니다: 첫 값의 모양이 가중치 (B, T) = {tuple(want_w.shape)}, 둘째 값이 문맥 벡터 "
                f"(B, d) = {tuple(want_c.shape)}입니다. (context, weights) 순서로 돌려주세요."
            )
        if weights.shape != want_w.shape:
            raise Wrong(
                f"weights의 모양이 {tuple(weights.shape)}입니다. 배치마다 입력 위치 하나당 가중치 하나, "
                f"즉 (B, T) = {particle(tuple(want_w.shape), '이/가')} 되어야 합니다.{_squeeze_hint(weights, want_w)}"
            )
        if torch.allclose(weights, scores, atol=1e-6):
            raise Wrong("weights가 소프트맥스 전의 점수 q·k 그대로입니다. 소프트맥스를 T 축(dim=-1)에 적용하세요.")
        ones = torch.ones(weights.shape[0], dtype=_F64)
        if torch.allclose(weights.sum(0), torch.ones(weights.shape[1], dtype=_F64), atol=1e-6) and not torch.allclose(
            weights.sum(-1), ones, atol=1e-6
        ):
            raise Wrong(
                "소프트맥스를 배치 축(dim=0)으로 계산했습니다. 한 쿼리의 가중치는 입력 위치 축(dim=-1)으로 합이 1이어야 합니다."
            )
        if torch.allclose(weights, torch.softmax(scores / query.shape[-1] ** 0.5, dim=-1), atol=1e-6):
            raise Wrong("점수를 √d로 나눴습니다. 여기서는 Luong의 내적 점수 q·k를 그대로 씁니다.")
        if not torch.allclose(weights, want_w, atol=1e-6):
            raise Wrong(f"가중치가 softmax(q·k)와 다릅니다 (첫 행: {_fmt(weights[0])}, 기대값: {_fmt(want_w[0])}).")
        if context.shape != want_c.shape:
            raise Wrong(
                f"context의 모양이 {tuple(context.shape)}입니다. 밸류의 가중합은 (B, d) = {tuple(want_c.shape)}입니다."
                f"{_squeeze_hint(context, want_c)}"
            )
        if torch.allclose(context, query, atol=1e-6):
            raise Wrong("context가 쿼리 자체입니다. 문맥 벡터는 인코더 상태(밸류)의 가중합 Σ w_j k_j입니다.")
        if torch.allclose(context, keys.mean(1), atol=1e-6):
            raise Wrong("context가 인코더 상태의 단순 평균입니다. 가중치 w로 가중합을 구하세요.")
        if not torch.allclose(context, want_c, atol=1e-6):
            raise Wrong("context가 Σ_j w_j k_j와 다릅니다. weights와 keys를 (B, 1, T) @ (B, T, d)로 곱해 보세요.")
    return "디코더 상태가 쿼리, 인코더 상태가 키이자 밸류입니다. 가중치는 T 축으로 합이 1입니다."


@exercise("02-2")
def _additive_scores(fn):
    g = torch.Generator().manual_seed(3)
    query = torch.randn(2, 3, generator=g, dtype=_F64)
    keys = torch.randn(2, 4, 5, generator=g, dtype=_F64)
    W_q = torch.randn(6, 3, generator=g, dtype=_F64)
    W_k = torch.randn(6, 5, generator=g, dtype=_F64)
    v = torch.randn(6, generator=g, dtype=_F64)
    hint = (
        "힌트: W_q는 (d_a, d_q) = (6, 3), W_k는 (d_a, d_k) = (6, 5) 모양입니다. 행 벡터 쿼리 (B, d_q)와 키 (B, T, d_k)에 "
        "곱하려면 전치해야 합니다: query @ W_q.T, keys @ W_k.T."
    )
    got = answer_tensor(
        call_learner(fn, query, keys, W_q, W_k, v, what="additive_scores(query, keys, W_q, W_k, v)", hint=hint),
        "additive_scores",
    )
    pre = (query @ W_q.T)[:, None, :] + keys @ W_k.T  # (B, T, d_a)
    want = torch.tanh(pre) @ v  # (B, T)
    if got.shape != want.shape:
        raise Wrong(
            f"점수의 모양이 {tuple(got.shape)}입니다. 배치마다 키 하나당 점수 하나, "
            f"즉 (B, T) = {particle(tuple(want.shape), '이/가')} 되어야 합니다.{_squeeze_hint(got, want)}"
        )
    if torch.allclose(got, pre @ v, atol=1e-6):
        raise Wrong(
            "tanh가 빠졌습니다. tanh 없이 vᵀ(W_q q + W_k k)는 q와 k의 선형 함수의 합일 뿐이라, "
            "q가 바뀌면 모든 키의 점수가 똑같이 움직여 가중치가 바뀌지 않습니다."
        )
    if torch.allclose(got, torch.softmax(want, dim=-1), atol=1e-6):
        raise Wrong("소프트맥스를 적용한 가중치를 돌려줬습니다. 이 함수는 소프트맥스 전의 점수 e_j를 돌려줘야 합니다.")
    if not torch.allclose(got, want, atol=1e-6):
        raise Wrong(f"점수가 vᵀ tanh(W_q q + W_k k_j)와 다릅니다 (첫 행: {_fmt(got[0])}, 기대값: {_fmt(want[0])}).")
    return "가법 점수 e_j = vᵀ tanh(W_q q + W_k k_j): 쿼리와 키를 같은 공간으로 옮겨 더한 뒤 은닉층 하나짜리 작은 신경망으로 점수를 매깁니다."


_PAD_CASES = [([2.0, 0.5, -1.0], 2), ([8.0, 1.0, 0.0, -3.0], 3), ([0.3, -0.2], 1), ([-2.0, -4.0, -1.0], 4)]


@exercise("02-3")
def _pad_weight(fn):
    for real, n_pad in _PAD_CASES:
        scores = torch.tensor(real, dtype=_F64)
        what = f"pad_weight({real}, {n_pad})"
        got = answer_tensor(call_learner(fn, scores.clone(), n_pad, what=what), what)
        if got.numel() == n_pad and n_pad > 1:
            raise Wrong(
                f"{particle(what, '이/가')} 칸마다의 가중치 {n_pad}개를 돌려줬습니다. 패딩 칸 전체가 가져가는 가중치의 합 하나를 돌려주세요."
            )
        if got.numel() != 1:
            raise Wrong(f"{what}의 결과가 숫자 하나가 아닙니다 (모양 {tuple(got.shape)}).")
        got = got.reshape(())
        e = scores.exp()
        want = n_pad / (e.sum() + n_pad)  # each zero key scores (Wq)·0 = 0, weight ∝ e^0 = 1
        if torch.isclose(got, want, rtol=1e-6, atol=1e-9):
            continue
        wrong = {
            "zero": (
                torch.tensor(0.0, dtype=_F64),
                "0을 돌려줬습니다. 영벡터 키의 점수는 (Wq)·0 = 0이지만, 가중치는 e^0 = 1에 비례합니다. "
                "가중치가 0이 되려면 점수가 −∞여야 하고, 그것이 마스크가 하는 일입니다.",
            ),
            "uniform": (
                torch.tensor(n_pad / (len(real) + n_pad), dtype=_F64),
                "패딩 칸 수 / 전체 칸 수, 곧 균등한 가중치를 가정했습니다. 진짜 칸의 점수는 0이 아니므로 "
                "가중치는 e^점수에 비례합니다: 패딩 칸 하나는 e^0 = 1, 진짜 칸 j는 e^(e_j).",
            ),
            "one": (
                1 / (e.sum() + 1),
                f"패딩 칸 하나의 가중치입니다. 패딩 칸이 {n_pad}개이면 분자도 분모도 {n_pad}개의 e^0 = 1을 셉니다.",
            ),
            "denominator": (
                n_pad / e.sum(),
                "분모에 진짜 칸의 e^(e_j)만 넣었습니다. 소프트맥스는 마스크가 없는 모든 칸, 곧 패딩 칸의 e^0 = 1까지 "
                "더한 값으로 나눕니다.",
            ),
            "no_exp": (
                n_pad / (scores.sum() + n_pad),
                "exp를 빠뜨렸습니다. 소프트맥스 가중치는 점수가 아니라 e^점수에 비례합니다.",
            ),
            "real": (
                e.sum() / (e.sum() + n_pad),
                "진짜 칸이 가져가는 가중치의 합(1 − 답)을 돌려줬습니다. 패딩 칸 쪽의 합을 돌려주세요.",
            ),
        }
        for guess, message in wrong.values():
            if torch.isclose(got, guess, rtol=1e-6, atol=1e-9):
                raise Wrong(f"{what}: {message}")
        raise Wrong(
            f"{what} = {got.item():.4g}, 기대값은 {want.item():.4g}입니다. 패딩 칸의 점수가 얼마인지부터 적어 보세요."
        )
    return (
        "영벡터 키의 점수는 0, 가중치는 e^0 = 1에 비례합니다: 패딩 칸 n개는 n / (Σ e^(e_j) + n)을 가져갑니다. "
        "진짜 칸의 점수가 클수록 이 몫은 작아집니다."
    )
