"""Checkers for notebook 05 (온도)."""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np
import torch

from ..data import load_json
from . import Wrong, answer_tensor, call_learner, called_names, exercise, forbid_calls, particle

SEED_SCORES = (2.0, 1.0, 0.5)  # seed 004's example
NEAR_UNIFORM = 0.01  # "almost uniform": the top weight at most 1/n + 0.01


def _number(x, name: str) -> float:
    if x is None or x is Ellipsis:
        raise Wrong(f"{particle(name, '이/가')} 비어 있습니다. `...` 자리를 채운 뒤 다시 실행하세요.")
    if isinstance(x, (list, tuple)) and len(x) == 1:  # a size-1 container: its one number
        x = x[0]
    if isinstance(x, (torch.Tensor, np.ndarray, np.generic)):  # tensor, array, 0-d array, numpy scalar
        size = x.numel() if isinstance(x, torch.Tensor) else x.size
        if size != 1:
            raise Wrong(
                f"{particle(name, '은/는')} 숫자 하나여야 합니다; 모양 {tuple(x.shape)}의 배열(원소 {size}개)을 받았습니다."
            )
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise Wrong(f"{particle(name, '은/는')} 숫자 하나여야 합니다; 받은 것은 {type(x).__name__}입니다.")
    if not (x > 0 and math.isfinite(x)):
        raise Wrong(f"{name} = {x}: 온도는 0보다 큰 유한한 수여야 합니다.")
    return float(x)


def _top_weight(z: torch.Tensor, tau: float) -> float:
    return torch.softmax(z / tau, dim=-1).max().item()


def _tau_where_top_is(z: torch.Tensor, target: float) -> float:
    """The τ at which the largest weight of softmax(z / τ) equals target (bisection on log τ)."""
    lo, hi = math.log(1e-6), math.log(1e6)
    for _ in range(200):
        mid = (lo + hi) / 2
        if _top_weight(z, math.exp(mid)) > target:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


def _close(a: float, b: float, rel: float = 1e-3) -> bool:
    return abs(a - b) <= rel * abs(b)


PREDICT_REL = 1e-3  # the prediction is a formula: 0.1%
MEASURE_REL = 3e-3  # the measurement: 0.3%, a log grid of 1000 points per decade (4절) is 0.23% apart


@exercise("05-1")
def _predict_then_measure(answer):
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise Wrong("두 값을 (tau_predicted, tau_measured) 순서의 튜플로 넘기세요.")
    z = torch.tensor(SEED_SCORES, dtype=torch.float64)
    n = len(z)
    predicted, measured = _number(answer[0], "tau_predicted"), _number(answer[1], "tau_measured")
    target = 1 / n + NEAR_UNIFORM
    want_pred = ((z.max() - z.mean()) / (n * NEAR_UNIFORM)).item()  # 27.78
    want_meas = _tau_where_top_is(z, target)  # 27.96
    if _close(predicted, want_meas, MEASURE_REL) and _close(measured, want_pred, PREDICT_REL):
        raise Wrong(
            f"두 값의 순서가 바뀌었습니다: {particle(f'{predicted:.4g}', '은/는')} 측정값, "
            f"{particle(f'{measured:.4g}', '은/는')} 1차 근사의 예측값입니다. "
            "(tau_predicted, tau_measured) 순서로 넘기세요."
        )
    # The prediction: (z_max − z̄) / (n τ) = 0.01, solved for τ.
    if not _close(predicted, want_pred, PREDICT_REL):
        if predicted == round(want_pred):
            raise Wrong(
                f"tau_predicted = {predicted:g}: 정수로 반올림한 값으로 보입니다. 식에서 나온 값을 반올림하지 말고 "
                "그대로 넣으세요 (예측은 상대 오차 0.1% 안이어야 합니다)."
            )
        if _close(predicted, want_meas, 2e-3):
            raise Wrong(
                f"tau_predicted(= {predicted:.4g})는 측정값입니다. 예측은 소프트맥스 없이 1차 근사식만으로 "
                "구하세요: 최대 가중치가 1/n보다 큰 정도 (z_max − z̄)/(n·τ)가 0.01이 되는 τ."
            )
        if _close(predicted, 2.0):
            raise Wrong(
                "tau_predicted = 2: 원문이 '거의 균등'이라 부른 온도입니다. 1절에서 본 대로 그때 최대 가중치는 "
                "0.48입니다. 1차 근사에서 최대 가중치 − 1/n = (z_max − z̄)/(n·τ)로 두고 0.01과 같게 푸세요."
            )
        mistakes = {
            (z.max() / (n * NEAR_UNIFORM)).item(): "z̄를 빼지 않았습니다: 균등에서 벗어난 정도는 점수의 평균 z̄에서 잰 "
            "z_max − z̄에 비례합니다 (모든 점수에 같은 수를 더해도 가중치는 그대로이므로).",
            ((z.max() - z.mean()) / NEAR_UNIFORM).item(): "1/n을 빠뜨렸습니다: w_i ≈ (1/n)(1 + (z_i − z̄)/τ)이므로 "
            "w_max − 1/n = (z_max − z̄)/(n·τ)입니다.",
            ((z.max() - z.min()) / (n * NEAR_UNIFORM)).item(): "z_max − z_min을 썼습니다: 1차 근사에서 최대 가중치가 "
            "1/n보다 큰 정도는 평균에서 잰 z_max − z̄로 정해집니다.",
        }
        for value, message in mistakes.items():
            if _close(predicted, value, 5e-3):
                raise Wrong(f"tau_predicted = {predicted:.4g}: {message}")
        raise Wrong(
            f"tau_predicted(= {predicted:.4g})는 1차 근사의 답이 아닙니다. w_max − 1/n ≈ (z_max − z̄)/(n·τ)를 "
            f"0.01과 같게 놓고 τ에 대해 푸세요 (z̄ = {z.mean().item():.4g}, n = {n})."
        )
    # The measurement: the smallest τ with top weight <= 1/3 + 0.01.
    if not _close(measured, want_meas, MEASURE_REL):
        top = _top_weight(z, measured)
        if _close(measured, predicted, 1e-6):
            raise Wrong(
                f"tau_measured가 예측값과 같습니다. 실제로 재 보면 τ = {predicted:.4g}에서 최대 가중치는 "
                f"{particle(f'{top:.6f}', '으로/로')} 1/3 + 0.01 = {target:.6f}보다 조금 큽니다. softmax_t로 τ를 바꿔 가며 재세요."
            )
        if abs(1 / n - torch.softmax(z / measured, dim=-1).min().item() - NEAR_UNIFORM) < 1e-4:
            raise Wrong(
                f"τ = {measured:.4g}에서는 최소 가중치가 1/3 − 0.01입니다. 기준은 최대 가중치가 "
                f"1/3 + 0.01 이하가 되는 것입니다 (그 τ에서 최대 가중치 {top:.4f})."
            )
        if top > target:
            raise Wrong(
                f"τ = {measured:.4g}에서 최대 가중치가 {particle(f'{top:.5f}', '으로/로')} 1/3 + 0.01 = {target:.5f}보다 큽니다: "
                "아직 덜 균등합니다. τ를 키우세요."
            )
        raise Wrong(
            f"τ = {measured:.4g}에서 최대 가중치({top:.5f})는 기준을 만족하지만 가장 작은 τ가 아닙니다: "
            f"더 작은 τ에서도 1/3 + 0.01 = {target:.5f} 이하입니다. 경계를 더 정확히 찾으세요 (상대 오차 0.3% 안: "
            "로그 격자라면 10배마다 1000점, 또는 이웃한 두 점 사이를 보간)."
        )
    gap = (measured - predicted) / measured
    return (
        f"예측 τ ≈ {predicted:.2f}, 측정 τ ≈ {measured:.2f}: 차이는 {abs(gap):.2%}입니다. "
        "근사는 e^x ≈ 1 + x에서 나온 것이라, 버린 항은 1/τ²에 비례하고 τ가 클수록 더 정확해집니다. "
        "그리고 원문의 τ = 2는 '거의 균등'과 거리가 멉니다: 이 기준으로는 열 배 넘게 커야 합니다."
    )


_READY_MADE = {"xlogy", "entr", "entropy", "rel_entr"}
_WHY = (
    "이 문제는 위의 `entropy`가 기대는 `torch.special.xlogy` 없이 "
    "`torch.log`와 `torch.where`(또는 불리언 마스크)로 0 · log 0 = 0을 직접 처리하는 연습입니다."
)


def _renamed_ready_made(fn) -> set[str]:
    """Names the learner calls that are a ready-made entropy under another name
    (``from scipy.stats import entropy as ent``, ``xl = torch.special.xlogy``)."""
    try:
        visible = inspect.getclosurevars(fn)
    except TypeError:
        return set()
    found = set()
    for name in called_names(fn) or set():
        obj = visible.nonlocals.get(name, visible.globals.get(name))
        real = getattr(obj, "__name__", "")
        if name not in _READY_MADE and (real in _READY_MADE or real.removeprefix("special_") in _READY_MADE):
            found.add(f"{name} (= {real.removeprefix('special_')})")
    return found


@exercise("05-2")
def _check_entropy(fn):
    forbid_calls(fn, _READY_MADE, _WHY)
    renamed = _renamed_ready_made(fn)
    if renamed:
        raise Wrong(
            f"{', '.join(sorted(renamed))}을(를) 불렀습니다: 이름만 바꾼, 0 · log 0을 대신 처리해 주는 기성 함수입니다. {_WHY}"
        )
    cases = [
        [0.25, 0.25, 0.25, 0.25],
        [0.7, 0.2, 0.1],
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0],
    ]
    for w in cases:
        x = torch.tensor(w, dtype=torch.float64)
        what = f"my_entropy({w})"
        got = answer_tensor(call_learner(fn, x.clone(), what=what), "my_entropy")
        want = -torch.special.xlogy(x, x).sum()
        if got.numel() != 1:
            raise Wrong(
                f"{what}의 결과는 숫자 하나여야 합니다. 모양 {tuple(got.shape)}의 값을 돌려줬습니다 (.sum()을 빠뜨렸나요?)."
            )
        got = got.reshape(())
        if torch.isnan(got):
            raise Wrong(
                f"{what}의 결과가 NaN입니다: 0 · log 0 = 0 · (−inf) = NaN이 됩니다. "
                "w = 0인 항은 0으로 두세요 (torch.where(w > 0, w, 1)의 로그는 w = 0에서 log 1 = 0)."
            )
        if torch.isclose(got, -want, atol=1e-9) and want > 0:
            raise Wrong(f"{what} = {got.item():.4f}: 부호가 반대입니다. 엔트로피는 −Σ w log w로, 0 이상입니다.")
        if torch.isclose(got, want / math.log(2), atol=1e-9) and want > 0:
            raise Wrong(
                f"{what} = {got.item():.4f}: 밑이 2인 로그(비트)를 썼습니다. 여기서는 자연로그(nat)를 씁니다 "
                f"(정답 {want.item():.4f})."
            )
        if not torch.isclose(got, want, atol=1e-9):
            gap = (got - want).abs().item()
            if gap < 1e-3:  # 4 decimals would print the same number twice: say how far off and the usual cause
                raise Wrong(
                    f"{what} = {got.item():.10f}, 정답 {0.0 + want.item():.10f}: 차이 {gap:.1e}. "
                    "log(w + ε)처럼 로그 안에 작은 수 ε를 더한 것으로 보입니다. 그러면 w > 0인 항의 로그도 ε 정도 "
                    "어긋납니다(w = 1이면 log(1 + ε) ≈ ε). w = 0인 자리만 torch.where(w > 0, w, 1)로 바꿔 "
                    "그 항이 정확히 0이 되게 하세요."
                )
            raise Wrong(f"{what} = {got.item():.4f}, 정답 {0.0 + want.item():.4f} (균등한 n개면 log n, 원-핫이면 0).")
    return "균등한 4개는 log 4 ≈ 1.386, 원-핫은 0: 0 · log 0 항도 올바르게 0으로 처리했습니다."


def _bae_row() -> torch.Tensor:
    """Scaled scores of the query '배' (seed 003): (x W_Q)(X W_K)ᵀ / √d_k."""
    d = load_json("seed003_bae.json")
    x = torch.tensor(d["X"], dtype=torch.float64)  # (T, d_model)
    q = x @ torch.tensor(d["W_Q"], dtype=torch.float64)  # (T, d_k)
    k = x @ torch.tensor(d["W_K"], dtype=torch.float64)  # (T, d_k)
    return (q @ k.T / math.sqrt(q.shape[-1]))[d["tokens"].index("배")]  # (T,)


@exercise("05-3")
def _check_tau_half(tau):
    tau = _number(tau, "tau_half")
    row = _bae_row()
    top = _top_weight(row, tau)
    near_half = 0.49 <= top <= 0.51
    if not near_half and abs(_top_weight(2 * row, tau) - 0.5) <= 0.01:  # found on Q·Kᵀ, which is √d_k = 2 times bae
        raise Wrong(
            f"τ = {tau:.4g}: √d_k로 나누지 않은 점수 QKᵀ에서 찾은 τ로 보입니다(그 점수로는 최대 가중치가 0.5). "
            "`bae`는 이미 QKᵀ/√d_k = QKᵀ/2이므로 찾은 τ가 정확히 2배 큽니다. `bae[2]`로 다시 재세요."
        )
    if not near_half and abs(_top_weight(row / 2, tau) - 0.5) <= 0.01:  # divided by √d_k twice
        raise Wrong(
            f"τ = {tau:.4g}: 점수를 √d_k = 2로 한 번 더 나눈 값에서 찾은 τ로 보입니다(정답의 절반). "
            "`bae`는 이미 √d_k로 나눈 점수이니 그대로 쓰세요."
        )
    if top > 0.51:
        raise Wrong(
            f"τ = {tau:.4g}에서 '배' 행의 최대 가중치가 {particle(f'{top:.3f}', '으로/로')} 0.5보다 큽니다: "
            "너무 날카롭습니다. τ를 키우세요."
        )
    if top < 0.49:
        raise Wrong(
            f"τ = {tau:.4g}에서 '배' 행의 최대 가중치가 {particle(f'{top:.3f}', '으로/로')} 0.5보다 작습니다: "
            "아직 너무 평평합니다. τ를 줄이세요."
        )
    return (
        f"τ = {tau:.4g}에서 최대 가중치 {top:.3f}. √d_k = 2로 나눈 점수를 τ로 한 번 더 나누니, "
        f"실제로는 QKᵀ를 {particle(f'{2 * tau:.4g}', '으로/로')} 나누는 셈입니다."
    )
