"""Checkers for notebook 01 (가중 평균에서 어텐션으로)."""

from __future__ import annotations

import torch

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle


@exercise("01-1")
def _weighted_average(fn):
    cases = [
        ([80.0, 90.0, 70.0], [2.0, 1.0, 1.0]),
        ([100.0, 50.0], [1.0, 3.0]),
        ([10.0, 20.0, 30.0, 40.0], [0.1, 0.2, 0.3, 0.4]),
        ([5.0], [7.0]),
        ([60.0, 90.0], [0.2, 0.3]),  # weights summing to 0.5: dividing by max(Σw, 1) is not the same
    ]
    for values, weights in cases:
        s, w = torch.tensor(values, dtype=torch.float64), torch.tensor(weights, dtype=torch.float64)
        got = answer_tensor(call_learner(fn, s, w, what=f"weighted_average({values}, {weights})"), "weighted_average")
        want = (w * s).sum() / w.sum()
        if got.numel() != 1:
            raise Wrong(
                f"결과는 숫자 하나여야 합니다. {particle(f'weighted_average({values}, {weights})', '이/가')} "
                f"모양 {tuple(got.shape)}의 값을 돌려줬습니다."
            )
        if torch.isclose(got.reshape(()), want, rtol=1e-6):
            continue
        if torch.isclose(got.reshape(()), (w * s).sum() / len(values), rtol=1e-6):
            raise Wrong(
                f"항목 수로 나눴습니다 (항목 {len(values)}개). 가중 평균은 가중치의 합({w.sum().item():g})으로 나눠야 합니다 "
                f"(값 {values}, 가중치 {weights}: 기대값 {want.item():.4g})."
            )
        if torch.isclose(got.reshape(()), s.mean(), rtol=1e-6):
            raise Wrong(f"가중치를 쓰지 않은 단순 평균({s.mean().item():.4g})입니다. 기대값은 {want.item():.4g}입니다.")
        if torch.isclose(got.reshape(()), (w * s).sum(), rtol=1e-6):
            raise Wrong(
                f"가중합({(w * s).sum().item():.4g})에서 멈췄습니다. 가중치의 합으로 나눠야 평균이 됩니다 (기대값 {want.item():.4g})."
            )
        near = " 가깝지만 정확하지 않습니다." if torch.isclose(got.reshape(()), want, rtol=1e-3) else ""
        raise Wrong(
            f"weighted_average({values}, {weights}) = {got.reshape(()).item():.6g}, "
            f"기대값은 {want.item():.6g}입니다.{near}"
        )
    return "가중치의 합으로 나누는 가중 평균입니다. 가중치가 이미 합 1이면 나눗셈은 1로 나누는 셈입니다."


# Ready-made log-softmax in every form: functions, the nn module, a cumulative variant, a distribution's logits,
# the classification loss that is −log_softmax (one target per row), and logaddexp folded over the scores.
_LOG_SOFTMAX_SHORTCUTS = {
    "log_softmax", "logsumexp", "LogSoftmax", "logcumsumexp", "Categorical", "OneHotCategorical", "Multinomial",
    "cross_entropy", "CrossEntropyLoss", "logaddexp", "logaddexp2",
}  # fmt: skip


@exercise("01-2")
def _log_softmax(fn):
    forbid_calls(
        fn,
        _LOG_SOFTMAX_SHORTCUTS,
        "이 문제는 torch.exp, torch.log, max, sum만으로 만듭니다: log Σ e^z를 넘치지 않게 계산하는 것이 "
        "바로 연습의 내용입니다.",
    )
    cases = [
        [1.0, 2.0, 3.0],
        [0.0, 0.0, 0.0, 0.0],
        [-3.0, 0.5, 2.0, 10.0],
        [1000.0, 1001.0, 1002.0],
        [-1000.0, -999.0],
        [-1000.0, 0.0, 1000.0],  # log(softmax) underflows to -inf here: the right answer is [-2000, -1000, 0]
    ]
    for z in cases:
        x = torch.tensor(z, dtype=torch.float64)
        what = f"my_log_softmax({z})"
        got = answer_tensor(call_learner(fn, x.clone(), what=what), "my_log_softmax")
        want = torch.log_softmax(x, dim=-1)
        if got.shape != want.shape:
            raise Wrong(
                f"{what}의 모양이 {tuple(got.shape)}입니다. 입력과 같은 모양 "
                f"{particle(tuple(want.shape), '이/가')} 되어야 합니다."
            )
        if torch.isnan(got).any():
            if x.max() > 100:
                raise Wrong(
                    f"{what}에 NaN이 나옵니다: exp(1000)이 넘쳐(overflow) inf/inf가 되었습니다. "
                    "지수를 취하기 전에 최댓값을 빼세요."
                )
            raise Wrong(
                f"{what}에 NaN이 나옵니다: 모든 exp가 0으로 사라져 0/0이 되었습니다. 최댓값을 빼면 "
                "가장 큰 지수가 e^0 = 1이 됩니다."
            )
        if torch.isneginf(got).all() and x.max() > 88:
            # z - log Σ e^z without the max shift (or shifted by the minimum): Σ e^z = inf, so every entry is -inf.
            raise Wrong(
                f"{what}의 값이 모두 −inf입니다: exp(z)가 넘쳐(overflow) log Σ e^z = inf가 되었고, "
                "z − inf = −inf입니다. 지수를 취하기 전에 최댓값을 빼세요 (최솟값을 빼면 나머지가 더 커져 "
                "여전히 넘칩니다)."
            )
        if torch.isneginf(got).any():
            i = int(torch.isneginf(got).nonzero()[0])
            raise Wrong(
                f"{what}의 {i + 1}번째 값(인덱스 {i})이 −inf입니다 (정확한 값 {want[i].item():.6g}). 가중치 e^({z[i]:g} − max)가 "
                "0으로 언더플로한 뒤 log를 취했습니다: log(softmax(z))의 순서로는 피할 수 없습니다. "
                "나누기 전에 로그를 취하세요: log(a / S) = log a − log S, 그리고 log e^(z_i − m) = z_i − m."
            )
        if torch.isposinf(got).any():
            raise Wrong(f"{what}에 +inf가 나옵니다: exp가 넘쳤습니다. 지수를 취하기 전에 최댓값을 빼세요.")
        if torch.allclose(got, torch.softmax(x, dim=-1), atol=1e-6):
            raise Wrong(
                f"{particle(what, '이/가')} 가중치 softmax(z) 자체입니다. 로그를 빠뜨렸습니다 (log-softmax는 0 이하입니다)."
            )
        if torch.allclose(got, x - x.max(), atol=1e-6) and not torch.allclose(got, want, atol=1e-6):
            raise Wrong(f"{what} = z − max z에서 멈췄습니다. log Σ e^(z_j − max z)도 빼야 exp(결과)의 합이 1이 됩니다.")
        if not torch.allclose(got, want, rtol=1e-5, atol=1e-5):
            total = torch.exp(got).sum().item()
            raise Wrong(
                f"{what} = {[round(v, 4) for v in got.tolist()]}, 기대값 {[round(v, 4) for v in want.tolist()]} "
                f"(exp(결과)의 합 {total:.4g}, 1이어야 합니다)."
            )
    return (
        "모든 입력에서 정확합니다. [-1000, 0, 1000]의 첫 항 −2000처럼 가중치로는 0이 되는 값도 로그로는 "
        "유한하게 남습니다: PyTorch의 log_softmax와 cross_entropy가 이렇게 계산합니다."
    )


@exercise("01-3")
def _scores_for_weights(scores):
    target = torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64)
    if isinstance(scores, (str, bytes)) or callable(scores):
        raise Wrong(
            f"점수 세 개를 리스트나 텐서로 넘기세요 (예: [2.0, 0.5, -1.0]); 받은 것은 {type(scores).__name__}입니다."
        )
    s = answer_tensor(scores, "점수")
    if s.shape != target.shape:
        raise Wrong(f"점수는 3개여야 합니다 (키 3개); 받은 모양은 {tuple(s.shape)}입니다.")
    if not torch.isfinite(s).all():
        raise Wrong("점수에 NaN이나 inf가 있습니다. 유한한 점수만으로도 만들 수 있습니다.")
    got = torch.softmax(s, dim=-1)
    if torch.allclose(s, target, atol=1e-6):
        raise Wrong(
            "가중치 [0.7, 0.2, 0.1]을 그대로 넣었습니다. 점수는 소프트맥스에 들어가기 전의 수이고, "
            f"softmax([0.7, 0.2, 0.1]) = {[round(v, 3) for v in got.tolist()]}입니다. "
            "힌트: e^(s_i) / e^(s_j) = w_i / w_j이므로 s_i - s_j = log(w_i / w_j)."
        )
    if not torch.allclose(got, target, atol=1e-3):
        worst = int((got - target).abs().argmax())
        raise Wrong(
            f"softmax(점수) = {[round(v, 3) for v in got.tolist()]}; 목표 [0.7, 0.2, 0.1]과 "
            f"{worst + 1}번째 가중치(인덱스 {worst})가 가장 다릅니다. 힌트: 점수 차이 s_i - s_j = log(w_i / w_j)."
        )
    return (
        f"softmax(점수) = {[round(v, 3) for v in got.tolist()]}. 답은 하나가 아닙니다: "
        "모든 점수에 같은 수를 더해도 가중치는 그대로입니다."
    )
