"""Checkers for notebook 03 (쿼리·키·밸류)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle


def _pair(result, what: str) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise Wrong(f"{what}: (output, weights) 두 개를 돌려줘야 합니다; 받은 것은 {type(result).__name__}입니다.")
    return answer_tensor(result[0], f"{what}의 output"), answer_tensor(result[1], f"{what}의 weights")


def _case(seed: int, t_q: int, t_k: int, d_model: int = 4, d_k: int = 6, d_v: int = 3):
    g = torch.Generator().manual_seed(seed)
    x_q = torch.randn(t_q, d_model, generator=g, dtype=torch.float64)
    x_kv = torch.randn(t_k, d_model, generator=g, dtype=torch.float64)
    ws = [torch.randn(d_model, d, generator=g, dtype=torch.float64) for d in (d_k, d_k, d_v)]
    return x_q, x_kv, ws


def _reference(x_q, x_kv, w_q, w_k, w_v) -> dict:
    q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return {"Q": q, "K": k, "V": v, "scores": scores, "weights": weights, "output": weights @ v}


def _where(got: torch.Tensor, want: torch.Tensor) -> tuple[int, int]:
    i, j = torch.unravel_index((got - want).abs().argmax(), want.shape)
    return int(i), int(j)


def _swapped(got_out, got_w, ref) -> None:
    """(weights, output) returned in place of (output, weights)."""
    w_shape, o_shape = ref["weights"].shape, ref["output"].shape
    if w_shape != o_shape and got_out.shape == w_shape and got_w.shape == o_shape:
        raise Wrong(
            f"순서가 바뀌었습니다: 첫 값의 모양이 가중치 (T_q, T_k) = {tuple(ref['weights'].shape)}, 둘째 값이 출력 "
            f"(T_q, d_v) = {tuple(ref['output'].shape)}입니다. (output, weights) 순서로 돌려주세요."
        )


def _wrong_weights(x_q, x_kv, ref) -> dict[str, torch.Tensor]:
    """The weights each common mistake gives, keyed by what to tell the learner (shared by 03-1 and 03-2)."""
    q, k, d_k, d_v, d_model = ref["Q"], ref["K"], ref["Q"].shape[-1], ref["V"].shape[-1], x_q.shape[1]
    return {
        "√d_k로 나누지 않았습니다 (softmax(QKᵀ)).": torch.softmax(q @ k.T, -1),
        f"{particle(f'd_k={d_k}', '으로/로')} 나눴습니다. {particle(f'√d_k = {math.sqrt(d_k):.3f}', '으로/로')} "
        "나눠야 합니다.": torch.softmax(q @ k.T / d_k, -1),
        f"{particle(f'√d_model = √{d_model}', '으로/로')} 나눴습니다. 점수를 나누는 수는 "
        f"키 차원의 제곱근 √d_k = √{d_k}입니다.": torch.softmax(q @ k.T / math.sqrt(d_model), -1),
        f"{particle(f'√d_v = √{d_v}', '으로/로')} 나눴습니다. 점수를 나누는 수는 밸류가 아니라 "
        f"키 차원의 제곱근 √d_k = √{d_k}입니다.": torch.softmax(q @ k.T / math.sqrt(d_v), -1),
        "소프트맥스를 열 방향(dim=0)으로 했습니다: 각 쿼리(행)의 가중치 합이 1이어야 합니다.": torch.softmax(
            q @ k.T / math.sqrt(d_k), 0
        ),
        "점수가 전치되었습니다 (KQᵀ): 행은 쿼리, 열은 키여야 합니다 (Q Kᵀ).": torch.softmax(
            k @ q.T / math.sqrt(d_k), -1
        ),
        "투영하지 않은 X끼리(입력끼리) 내적했습니다: 점수는 Q = X W_Q와 K = X W_K로 계산합니다.": torch.softmax(
            x_q @ x_kv.T / math.sqrt(d_model), -1
        ),
    }


# The section-2 functions (and PyTorch's) that 03-1 asks the learner to write out instead.
_SECTION_2 = {"scaled_dot_product_attention", "attention_scores", "SelfAttention"}


@exercise("03-1")
def _self_attention(fn):
    forbid_calls(
        fn,
        _SECTION_2,
        "03-1은 2절의 함수 없이 투영, 점수, 소프트맥스, 가중합을 직접 쓰는 문제입니다 (softmax는 써도 됩니다).",
    )
    x, _, (w_q, w_k, w_v) = _case(31, 5, 5)
    what = "self_attention(X, W_Q, W_K, W_V)"
    got_out, got_w = _pair(call_learner(fn, x, w_q, w_k, w_v, what=what), what)
    ref = _reference(x, x, w_q, w_k, w_v)
    q = ref["Q"]
    _swapped(got_out, got_w, ref)
    if got_w.shape != ref["weights"].shape:
        raise Wrong(
            f"weights의 모양이 {tuple(got_w.shape)}입니다. 토큰 5개의 셀프 어텐션이면 (T, T) = (5, 5)여야 합니다."
        )
    if got_out.shape != ref["output"].shape:
        hint = ""
        if got_out.shape == x.shape:
            hint = " 출력에 X를 섞었나요? 밸류 V = X W_V를 섞어야 합니다."
        elif got_out.shape == q.shape:
            hint = " 출력에 쿼리나 키(d_k차원)를 섞었습니다. 가중합하는 것은 밸류 V = X W_V입니다."
        raise Wrong(
            f"output의 모양이 {tuple(got_out.shape)}입니다. "
            f"(T, d_v) = {particle(tuple(ref['output'].shape), '이/가')} 되어야 합니다.{hint}"
        )
    if torch.allclose(got_w, ref["scores"], atol=1e-6):
        raise Wrong("weights 자리에 점수(QKᵀ/√d_k)를 돌려줬습니다. 소프트맥스를 거쳐야 가중치가 됩니다 (한 행의 합 1).")
    wrong_weights = _wrong_weights(x, x, ref)
    for message, w in wrong_weights.items():
        if torch.allclose(got_w, w, atol=1e-6):
            raise Wrong(f"가중치가 틀렸습니다: {message}")
    if not torch.allclose(got_w, ref["weights"], atol=1e-6):
        i, j = _where(got_w, ref["weights"])
        raise Wrong(f"weights[{i}, {j}] = {got_w[i, j].item():.4f}, 정답 {ref['weights'][i, j].item():.4f}입니다.")
    if not torch.allclose(got_out, ref["output"], atol=1e-6):
        i, j = _where(got_out, ref["output"])
        raise Wrong(
            f"가중치는 맞지만 output[{i}, {j}] = {got_out[i, j].item():.4f}, "
            f"정답 {ref['output'][i, j].item():.4f}입니다 (output = weights @ V)."
        )
    return "세 투영, 점수 QKᵀ/√d_k, 행 방향 소프트맥스, 밸류의 가중합이 모두 맞습니다."


@exercise("03-2")
def _cross_attention(fn):
    forbid_calls(
        fn,
        _SECTION_2,
        "03-2도 03-1처럼 2절의 함수 없이 투영, 점수, 소프트맥스, 가중합을 직접 쓰는 문제입니다 (softmax는 써도 됩니다).",
    )
    dec, enc, (w_q, w_k, w_v) = _case(32, 3, 5)
    what = "cross_attention(dec, enc, W_Q, W_K, W_V)"
    hint = "힌트: 쿼리는 디코더(dec), 키와 밸류는 둘 다 인코더(enc)에서 옵니다."
    got_out, got_w = _pair(call_learner(fn, dec, enc, w_q, w_k, w_v, what=what, hint=hint), what)
    ref = _reference(dec, enc, w_q, w_k, w_v)
    _swapped(got_out, got_w, ref)
    if got_w.shape == (5, 3):
        raise Wrong(
            "weights의 모양이 (5, 3)입니다: 쿼리를 인코더에서 만들었습니다. 쿼리는 디코더 상태 3개, "
            "키는 인코더 상태 5개라서 (T_q, T_k) = (3, 5)여야 합니다."
        )
    if got_w.shape == (3, 3):
        raise Wrong(
            f"weights의 모양이 (3, 3)입니다: 키를 디코더에서 만든 셀프 어텐션입니다. "
            f"키는 인코더 상태 5개에서 만들어 (3, 5)가 되어야 합니다. {hint}"
        )
    if got_w.shape != (3, 5):
        raise Wrong(f"weights의 모양이 {tuple(got_w.shape)}입니다. (T_q, T_k) = (3, 5)여야 합니다.")
    if not torch.allclose(got_w, ref["weights"], atol=1e-6):
        if torch.allclose(got_w, torch.softmax(ref["Q"] @ ref["K"].T, -1), atol=1e-6):
            raise Wrong("√d_k로 나누지 않았습니다. 크로스 어텐션도 점수는 QKᵀ/√d_k입니다.")
        if torch.allclose(got_w, torch.softmax(ref["scores"], 0), atol=1e-6):
            raise Wrong("소프트맥스를 열 방향(dim=0)으로 했습니다: 각 디코더 쿼리(행)의 가중치 합이 1이어야 합니다.")
        if torch.allclose(got_w, ref["scores"], atol=1e-6):
            raise Wrong(
                "weights 자리에 점수(QKᵀ/√d_k)를 돌려줬습니다. 소프트맥스를 거쳐야 가중치가 됩니다 (한 행의 합 1)."
            )
        for message, w in _wrong_weights(dec, enc, ref).items():
            if w.shape == got_w.shape and torch.allclose(got_w, w, atol=1e-6):
                raise Wrong(f"가중치가 틀렸습니다: {message}")
        i, j = _where(got_w, ref["weights"])
        raise Wrong(f"weights[{i}, {j}] = {got_w[i, j].item():.4f}, 정답 {ref['weights'][i, j].item():.4f}입니다.")
    if got_out.shape != ref["output"].shape:
        raise Wrong(
            f"output의 모양이 {tuple(got_out.shape)}입니다. "
            f"(T_q, d_v) = {particle(tuple(ref['output'].shape), '이/가')} 되어야 합니다."
        )
    if not torch.allclose(got_out, ref["output"], atol=1e-6):
        raise Wrong(f"가중치는 맞지만 output이 다릅니다: output = weights @ (enc @ W_V)여야 합니다. {hint}")
    return "쿼리 3개(디코더)가 키·밸류 5개(인코더)를 봅니다: weights (3, 5), output (3, d_v)."


# 03-3: the designed example of notebook 03, section 6. Row "먹었다" has the score c²/√d_k for
# "치킨을" and 0 for the 7 other keys, so its weight is e^s / (e^s + 7) with s = c²/√2.
_TARGET, _TOL, _OTHERS, _D_K = 0.9, 1e-3, 7, 2


def chicken_weight(c: float) -> float:
    """Weight that "먹었다" gives "치킨을" in chicken_example(c), computed with the notebook's code."""
    from helpers.lessons.query_key_value import CHICKEN_TOKENS, chicken_example, scaled_dot_product_attention

    X, W_Q, W_K, W_V = chicken_example(c)
    _, w = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    return float(w[CHICKEN_TOKENS.index("먹었다"), CHICKEN_TOKENS.index("치킨을")])


def _c_for(score: float) -> float:
    return math.sqrt(math.sqrt(_D_K) * score)


_LN = math.log(_TARGET * _OTHERS / (1 - _TARGET))  # ln 63: the score that gives 0.9
_MISTAKES = {
    "√d_k로 나누는 것을 빠뜨렸습니다: 점수는 c²이 아니라 c²/√d_k = c²/√2입니다.": math.sqrt(_LN),
    "다른 키 7개를 빠뜨렸습니다: '먹었다' 행에는 점수 0인 키가 7개 있어 e^s/(e^s + 7) = 0.9를 풀어야 합니다 "
    "(e^s/(e^s + 1)이 아니라).": _c_for(math.log(_TARGET / (1 - _TARGET))),
    "점수를 c/√2로 두었습니다: W^Q와 W^K 둘 다 c를 곱하므로 점수는 c·c/√2 = c²/√2입니다 (c를 제곱근으로 풀어야 합니다).": math.sqrt(
        _D_K
    )
    * _LN,
    "ln(63) 대신 log10(63)을 썼습니다: 소프트맥스의 지수는 자연로그(math.log)로 풉니다.": _c_for(math.log10(63)),
}


@exercise("03-3")
def _chicken_strength(c):
    if isinstance(c, bool) or not isinstance(c, (numbers.Real, torch.Tensor, np.ndarray)):
        raise Wrong(f"세기 c는 숫자 하나여야 합니다; 받은 것은 {type(c).__name__}입니다.")
    c_t = answer_tensor(c, "c")  # a Python number, a 0-d tensor or array, or a one-element one
    if c_t.numel() != 1:
        raise Wrong(f"세기 c는 숫자 하나여야 합니다; 모양 {tuple(c_t.shape)}의 값을 받았습니다.")
    c = c_t.item()
    if not math.isfinite(c):
        raise Wrong(f"{particle(f'c = {c}', '은/는')} 유한한 수가 아닙니다.")
    if c == 0:
        raise Wrong("c = 0이면 모든 점수가 0이라 '먹었다'는 8개 키를 1/8 = 0.125씩 봅니다.")
    w = chicken_weight(c)
    if abs(w - _TARGET) <= _TOL:
        sign = " (c의 부호는 W^Q와 W^K에 함께 곱해지므로 c²에서 사라집니다)" if c < 0 else ""
        return (
            f"c = {c:.4f}에서 먹었다→치킨을 가중치 {w:.4f}입니다. e^s/(e^s + 7) = 0.9에서 s = ln 63, "
            f"s = c²/√2이므로 c = √(√2 · ln 63) ≈ {_c_for(_LN):.4f}.{sign}"
        )
    for message, c_wrong in _MISTAKES.items():
        if math.isclose(abs(c), c_wrong, rel_tol=2e-3):
            raise Wrong(f"c = {c:.4f}이면 가중치가 {w:.4f}입니다. {message}")
    if abs(w - _TARGET) < 0.01:
        side = "큽니다" if w > _TARGET else "작습니다"
        raise Wrong(
            f"c = {c:g}이면 먹었다→치킨을 가중치가 {particle(f'{w:.4f}', '으로/로')} 0.9보다 조금 {side}: "
            "식으로 정확한 c를 구하세요 (점수 c²/√2, 다른 키 7개의 점수 0, e^s/(e^s + 7) = 0.9)."
        )
    if w > _TARGET:
        raise Wrong(
            f"c = {c:g}이면 먹었다→치킨을 가중치가 {particle(f'{w:.4f}', '으로/로')} 0.9보다 큽니다. 크게 할수록 통과하는 문제가 "
            "아닙니다: 가중치가 정확히 0.9가 되는 c를 식으로 구하세요 (점수 c²/√2, 다른 키 7개의 점수 0)."
        )
    raise Wrong(
        f"c = {c:g}이면 먹었다→치킨을 가중치가 {particle(f'{w:.4f}', '으로/로')} 0.9보다 작습니다. "
        "'먹었다' 행의 점수를 적어 보세요: '치킨을'은 c²/√2, 나머지 7개는 0입니다."
    )
