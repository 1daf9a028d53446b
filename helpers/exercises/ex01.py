"""Checkers for notebook 01 (가중 평균에서 어텐션으로)."""

from __future__ import annotations

import torch

from . import Wrong, answer_tensor, call_learner, exercise


@exercise("01-1")
def _weighted_average(fn):
    cases = [
        ([80.0, 90.0, 70.0], [2.0, 1.0, 1.0]),
        ([100.0, 50.0], [1.0, 3.0]),
        ([10.0, 20.0, 30.0, 40.0], [0.1, 0.2, 0.3, 0.4]),
        ([5.0], [7.0]),
    ]
    for scores, weights in cases:
        s, w = torch.tensor(scores, dtype=torch.float64), torch.tensor(weights, dtype=torch.float64)
        got = answer_tensor(call_learner(fn, s, w, what=f"weighted_average({scores}, {weights})"), "weighted_average")
        want = (w * s).sum() / w.sum()
        if got.numel() != 1:
            raise Wrong(f"결과는 숫자 하나여야 합니다. weighted_average({scores}, {weights})가 모양 {tuple(got.shape)}의 값을 돌려줬습니다.")
        if torch.isclose(got.reshape(()), want, rtol=1e-6):
            continue
        if torch.isclose(got.reshape(()), (w * s).sum() / len(scores), rtol=1e-6):
            raise Wrong(f"항목 수({len(scores)})로 나눴습니다. 가중 평균은 가중치의 합({w.sum().item():g})으로 나눠야 합니다 "
                        f"(점수 {scores}, 가중치 {weights}: 기대값 {want.item():.4g}).")
        if torch.isclose(got.reshape(()), s.mean(), rtol=1e-6):
            raise Wrong(f"가중치를 쓰지 않은 단순 평균({s.mean().item():.4g})입니다. 기대값은 {want.item():.4g}입니다.")
        if torch.isclose(got.reshape(()), (w * s).sum(), rtol=1e-6):
            raise Wrong(f"가중합({(w * s).sum().item():.4g})에서 멈췄습니다. 가중치의 합으로 나눠야 평균이 됩니다 (기대값 {want.item():.4g}).")
        raise Wrong(f"weighted_average({scores}, {weights}) = {got.reshape(()).item():.4g}, 기대값은 {want.item():.4g}입니다.")
    return "가중치의 합으로 나누는 가중 평균입니다. 가중치가 이미 합 1이면 나눗셈은 1로 나누는 셈입니다."


@exercise("01-2")
def _softmax(fn):
    cases = [
        [1.0, 2.0, 3.0],
        [0.0, 0.0, 0.0, 0.0],
        [-3.0, 0.5, 2.0, 10.0],
        [1000.0, 1001.0, 1002.0],
        [-1000.0, -999.0],
        [-1000.0, 0.0, 1000.0],  # subtracting the minimum instead of the maximum overflows here
    ]
    for z in cases:
        x = torch.tensor(z, dtype=torch.float64)
        got = answer_tensor(call_learner(fn, x.clone(), what=f"my_softmax({z})"), "my_softmax")
        want = torch.softmax(x, dim=-1)
        if got.shape != want.shape:
            raise Wrong(f"my_softmax({z})의 모양이 {tuple(got.shape)}입니다. 입력과 같은 모양 {tuple(want.shape)}이어야 합니다.")
        if torch.isnan(got).any() or torch.isinf(got).any():
            if x.abs().max() < 100:
                raise Wrong(f"my_softmax({z})에 NaN/inf가 나옵니다. 작은 점수에서도 그렇다면 0으로 나누고 있지 않은지 보세요 "
                            "(exp의 합으로 나눠야 합니다).")
            if x.min() < 0 < x.max():
                raise Wrong(f"my_softmax({z})에 NaN/inf가 나옵니다: 지수의 인자가 1000을 넘었습니다. 최솟값이 아니라 "
                            "최댓값을 빼야 가장 큰 지수가 e^0 = 1이 됩니다 (softmax(z) = softmax(z - max z)).")
            if x.max() > 0:
                raise Wrong(f"my_softmax({z})에 NaN/inf가 나옵니다: exp(1000)은 넘칩니다(overflow). "
                            "지수를 취하기 전에 최댓값을 빼세요 (softmax(z) = softmax(z - max z)).")
            raise Wrong(f"my_softmax({z})에 NaN/inf가 나옵니다: exp(-1000)은 0이 되어 분모가 0입니다(0/0). "
                        "지수를 취하기 전에 최댓값을 빼면 가장 큰 지수가 e^0 = 1이 됩니다 (softmax(z) = softmax(z - max z)).")
        if (got < 0).any():
            raise Wrong(f"my_softmax({z})에 음수 가중치가 있습니다: {got.tolist()}. exp를 빠뜨리지 않았나요?")
        if not torch.isclose(got.sum(), torch.tensor(1.0, dtype=torch.float64), atol=1e-6):
            raise Wrong(f"my_softmax({z})의 합이 {got.sum().item():.6g}입니다. 합으로 나눠 1이 되게 하세요.")
        if torch.allclose(got, x / x.sum(), atol=1e-6):
            raise Wrong(f"my_softmax({z})가 점수를 합으로 나눈 값입니다. 먼저 exp로 모든 점수를 양수로 만든 뒤 exp의 합으로 "
                        "나누세요 (점수가 음수이면 음수 가중치가 나옵니다).")
        if not torch.allclose(got, want, atol=1e-6):
            raise Wrong(f"my_softmax({z}) = {[round(v, 4) for v in got.tolist()]}, 기대값 {[round(v, 4) for v in want.tolist()]}.")
    return "양수이고, 합이 1이며, 큰 입력에서도 넘치지 않습니다."


@exercise("01-3")
def _scores_for_weights(scores):
    target = torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64)
    s = answer_tensor(scores, "scores")
    if s.shape != target.shape:
        raise Wrong(f"점수는 3개여야 합니다 (키 3개); 받은 모양은 {tuple(s.shape)}입니다.")
    if not torch.isfinite(s).all():
        raise Wrong("점수에 NaN이나 inf가 있습니다. 유한한 점수만으로도 만들 수 있습니다.")
    got = torch.softmax(s, dim=-1)
    if torch.allclose(s, target, atol=1e-6):
        raise Wrong("가중치 [0.7, 0.2, 0.1]을 그대로 넣었습니다. 점수는 소프트맥스에 들어가기 전의 수이고, "
                    f"softmax([0.7, 0.2, 0.1]) = {[round(v, 3) for v in got.tolist()]}입니다. "
                    "힌트: e^(s_i) / e^(s_j) = w_i / w_j이므로 s_i - s_j = log(w_i / w_j).")
    if not torch.allclose(got, target, atol=5e-3):
        worst = int((got - target).abs().argmax())
        raise Wrong(f"softmax(점수) = {[round(v, 3) for v in got.tolist()]}; 목표 [0.7, 0.2, 0.1]과 "
                    f"{worst}번째 가중치가 가장 다릅니다. 힌트: 점수 차이 s_i - s_j = log(w_i / w_j).")
    return (f"softmax(점수) = {[round(v, 3) for v in got.tolist()]}. 답은 하나가 아닙니다: "
            "모든 점수에 같은 수를 더해도 가중치는 그대로입니다.")
