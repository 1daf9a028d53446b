"""Checkers of notebook 06 (attention dropout): 06-1 keep mask, 06-2 row-sum variance, 06-3 eval-mode predict."""

from __future__ import annotations

import math

import torch
import torch.nn as nn

from helpers.exercises import Wrong, answer_tensor, call_learner, exercise, particle

_W = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], dtype=torch.float64)


@exercise("06-1")
def _apply_keep_mask(fn):
    keep = torch.tensor([[True, False, True], [True, True, False]])
    for p in (0.25, 0.5):
        got = answer_tensor(
            call_learner(fn, _W.clone(), keep.clone(), p, what=f"apply_keep_mask(W, keep, {p})"), "apply_keep_mask"
        )
        want = _W * keep / (1 - p)
        if got.shape != want.shape:
            raise Wrong(
                f"결과의 모양이 {tuple(got.shape)}입니다. 가중치의 모양 {particle(tuple(want.shape), '과/와')} 같아야 합니다."
            )
        if torch.allclose(got, want, atol=1e-9):
            continue
        if torch.allclose(got, _W * keep, atol=1e-9):
            raise Wrong(
                f"살아남은 가중치를 1/(1−p) = {1 / (1 - p):.4g}배 하지 않았습니다. "
                "그러면 기댓값이 W가 아니라 (1−p)·W로 줄어듭니다."
            )
        if torch.allclose(got, _W * keep * (1 - p), atol=1e-9):
            raise Wrong(f"(1−p)를 곱했습니다. 살아남은 가중치는 (1−p)로 **나눠야** 합니다 (p={p}: ×{1 / (1 - p):.4g}).")
        if torch.allclose(got, _W * ~keep / (1 - p), atol=1e-9) or torch.allclose(got, _W * ~keep / p, atol=1e-9):
            raise Wrong("keep이 True인 자리를 0으로 만들었습니다. True는 '남긴다'는 뜻입니다.")
        if torch.allclose(got, _W * keep / p, atol=1e-9):
            raise Wrong(
                f"p로 나눴습니다. 남는 확률은 1−p이므로 1−p = {particle(f'{1 - p:g}', '으로/로')} 나눠야 합니다."
            )
        if torch.allclose(got, _W / (1 - p), atol=1e-9) or torch.allclose(got, _W, atol=1e-9):
            raise Wrong(
                "keep 마스크를 쓰지 않았습니다: 모든 가중치가 남았습니다. keep이 False인 자리는 0이 되도록 "
                "weights에 keep을 곱하세요 (불리언은 곱하면 1과 0이 됩니다)."
            )
        kept = _W * keep
        if torch.allclose(got, kept / kept.sum(dim=-1, keepdim=True), atol=1e-9):
            raise Wrong(
                "행의 합이 1이 되도록 다시 나눴습니다(합을 1로 다시 맞춤). 그러면 한 항목의 기댓값이 W와 달라집니다. "
                "드롭아웃은 1/(1−p)만 곱하고, 행의 합은 1이 아니어도 됩니다."
            )
        worst = tuple(int(i) for i in divmod(int((got - want).abs().argmax()), want.shape[1]))
        raise Wrong(
            f"p={p}에서 위치 {worst}의 값이 {got[worst].item():.4g}인데, 정답은 {want[worst].item():.4g}입니다."
        )
    return "남긴 가중치만 1/(1−p)배: 항목마다 기댓값이 W와 같습니다."


@exercise("06-2")
def _row_sum_variance(answer):
    w, p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64), 0.2
    got = answer_tensor(answer, "답")
    if got.numel() != 1:
        raise Wrong(f"숫자 하나(분산)를 답해야 합니다. 받은 모양은 {tuple(got.shape)}입니다.")
    got = got.reshape(()).item()
    want = p / (1 - p) * (w**2).sum().item()
    if math.isclose(got, want, rel_tol=1e-3):
        return f"Var = p/(1−p) · Σw² = 0.25 × 0.38 = {want:.4f}. 표준편차로는 {math.sqrt(want):.3f}입니다."
    if math.isclose(got, (w**2).sum().item(), rel_tol=1e-3):
        raise Wrong("Σw² = 0.38에서 멈췄습니다. 한 항목의 분산은 w²·p/(1−p)이므로 p/(1−p) = 0.25를 곱하세요.")
    if math.isclose(got, p * (1 - p) * (w**2).sum().item(), rel_tol=1e-3):
        raise Wrong(
            "p(1−p)를 곱했습니다. 그것은 0/1 마스크의 분산입니다. 살아남은 값은 w/(1−p)이므로 "
            "분산은 w²·p(1−p)/(1−p)² = w²·p/(1−p)입니다."
        )
    if math.isclose(got, p / (1 - p) * w.sum().item(), rel_tol=1e-3) or math.isclose(got, p / (1 - p), rel_tol=1e-3):
        raise Wrong("w가 아니라 w²를 더해야 합니다: 분산은 항목 크기의 제곱에 비례합니다 (Σw² = 0.38).")
    if math.isclose(got, math.sqrt(want), rel_tol=1e-3):
        raise Wrong("표준편차를 답했습니다. 제곱근을 취하기 전의 분산을 답하세요.")
    if math.isclose(got, p * (w**2).sum().item(), rel_tol=1e-3):
        raise Wrong(
            "p만 곱했습니다. 살아남은 값이 w/(1−p)로 커지므로 한 항목의 분산은 w²·p/(1−p)입니다 (p/(1−p) = 0.25)."
        )
    if math.isclose(got, p / (1 - p) ** 2 * (w**2).sum().item(), rel_tol=1e-3):
        raise Wrong(
            "p/(1−p)²를 곱했습니다: 0/1 마스크의 분산을 p(1−p)가 아니라 p로 썼습니다. 살아남은 값은 w/(1−p)이므로 "
            "분산은 w²·p(1−p)/(1−p)² = w²·p/(1−p)입니다."
        )
    for digits in (1, 2):
        scaled = want * 10**digits
        if got == round(got, digits) and got != 0 and abs(got - want) < 10**-digits:
            if math.isclose(got * 10**digits, math.floor(scaled + 1e-9)) and not math.isclose(got, round(want, digits)):
                how = "자른"
            elif math.isclose(got, round(want, digits)):
                how = "반올림한"
            else:
                continue
            raise Wrong(
                f"받은 값 {particle(f'{got:g}', '은/는')} 소수 {digits}자리로 {how} 값으로 보입니다. "
                "자릿수를 줄이지 말고 식에서 나온 값을 그대로 답하세요 (상대 오차 0.1% 안)."
            )
    if math.isclose(got, want, rel_tol=0.1):
        raise Wrong(
            f"받은 값 {particle(f'{got:.4g}', '은/는')} 정답과 {abs(got - want) / want:.1%} 다릅니다: 표본으로 잰 추정값으로 보입니다. "
            "이 문제는 식으로 구한 **정확한 값**을 원합니다. 항목마다 분산 w²·p/(1−p)를 구해 더하세요. "
            "표본 분산은 그 값을 확인하는 데 쓰세요."
        )
    if math.isclose(got, 0.0, abs_tol=1e-9):
        raise Wrong("분산이 0이라면 행의 합이 늘 1이라는 뜻인데, 드롭아웃 뒤에는 행의 합이 뽑을 때마다 달라집니다.")
    raise Wrong(
        f"받은 값 {particle(f'{got:.4g}', '은/는')} 정답과 다릅니다. 항목마다 분산 w²·p/(1−p)를 구해 더하세요 "
        "(드롭아웃은 항목마다 독립입니다)."
    )


@exercise("06-3")
def _predict(fn):
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 2)).double()
    module.train()
    x = torch.randn(3, 4, dtype=torch.float64)
    want = module[2](module[0](x)).detach()  # no dropout = eval mode
    first = answer_tensor(call_learner(fn, module, x, what="predict(module, x)"), "predict")
    if not module.training:
        raise Wrong(
            "호출한 뒤 모듈이 평가 모드로 남았습니다. 학습을 이어가려면 원래 모드(학습 모드)로 되돌려야 합니다 "
            "(was = module.training ... module.train(was))."
        )
    second = answer_tensor(call_learner(fn, module, x, what="predict(module, x)"), "predict")
    if first.shape != want.shape:
        raise Wrong(
            f"결과의 모양이 {tuple(first.shape)}입니다. 모듈의 출력 모양 {particle(tuple(want.shape), '과/와')} 같아야 합니다."
        )
    if not torch.allclose(first, second):
        raise Wrong("같은 입력으로 두 번 불렀더니 결과가 다릅니다: 드롭아웃이 켜져 있습니다. module.eval()을 쓰세요.")
    if torch.allclose(first, 0.5 * want) or torch.allclose(first, 2 * want):
        raise Wrong(
            "출력에 직접 (1−p)나 1/(1−p)를 곱할 필요가 없습니다. 역 드롭아웃(inverted dropout)은 학습 때 이미 "
            "1/(1−p)배를 했으므로 평가 모드는 그냥 드롭아웃을 끄면 됩니다."
        )
    if not torch.allclose(first, want):
        raise Wrong("결과가 결정적이지만 평가 모드의 출력과 다릅니다. 모듈을 그대로 호출하되 평가 모드에서 호출하세요.")
    if torch.is_tensor(first) and first.requires_grad:
        raise Wrong("출력이 기울기를 추적합니다. 예측에는 torch.no_grad()가 필요합니다.")
    module.eval()
    call_learner(fn, module, x, what="predict(module, x)")
    if module.training:
        raise Wrong(
            "평가 모드였던 모듈이 호출 뒤 학습 모드가 됐습니다. module.train()으로 무조건 켜지 말고 "
            "원래 모드를 기억했다가 되돌리세요 (was = module.training ... module.train(was))."
        )
    return "같은 입력에 늘 같은 출력(평가 모드), 호출 뒤에는 학습 모드로 돌아갑니다."
