"""Checkers of notebook 06 (attention dropout): 06-1 original (non-inverted) dropout, 06-2 row-sum variance, 06-3 eval_mode context manager."""

from __future__ import annotations

import math

import torch
import torch.nn as nn

from helpers.exercises import Wrong, answer_tensor, call_learner, exercise, particle

_W = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], dtype=torch.float64)


def _old_dropout_diagnosis(train_got, eval_got, keep, p) -> str | None:
    """What a wrong answer to 06-1 did, or None if neither mode matches a known mistake."""
    kept, scale = _W * keep, 1 / (1 - p)
    train_inverted = torch.allclose(train_got, kept * scale, atol=1e-9)
    eval_plain = torch.allclose(eval_got, _W, atol=1e-9)
    train_ok = torch.allclose(train_got, kept, atol=1e-9)
    if train_inverted and eval_plain:
        return (
            "역 드롭아웃(inverted dropout, 1절의 attention_dropout)으로 답했습니다: 학습 때 1/(1−p)배, 평가 때 그대로. "
            "이 문제는 원래 방식입니다: 학습 때는 지우기만 하고(weights * keep), 평가 때 모든 가중치에 (1−p)를 곱합니다."
        )
    if train_inverted:
        return (
            f"학습 때 살아남은 가중치를 1/(1−p) = {scale:.4g}배 했습니다. 원래 방식은 학습 때 지우기만 합니다(weights * keep). "
            "크기 보정은 평가 때 (1−p)를 곱해서 합니다."
        )
    if train_ok and eval_plain:
        return (
            "평가 때 가중치를 그대로 돌려줬습니다. 학습 때는 한 항목의 기댓값이 (1−p)·w이므로, 평가 때도 같은 크기가 "
            f"되도록 모든 가중치에 (1−p) = {1 - p:g}를 곱해야 합니다."
        )
    if train_ok and torch.allclose(eval_got, _W * p, atol=1e-9):
        return (
            f"평가 때 p = {p:g}를 곱했습니다. 이 노트북의 p는 **지우는** 확률이라 남는 확률은 1−p = {1 - p:g}입니다 "
            "(Srivastava 등 2014의 논문은 p를 남기는 확률로 써서 '평가 때 p를 곱한다'고 적습니다)."
        )
    if train_ok and torch.allclose(eval_got, _W * scale, atol=1e-9):
        return f"평가 때 (1−p)로 나눴습니다. (1−p) = {1 - p:g}를 **곱해야** 학습 때의 기댓값 (1−p)·w와 같아집니다."
    if train_ok and (torch.allclose(eval_got, kept * (1 - p), atol=1e-9) or torch.allclose(eval_got, kept, atol=1e-9)):
        return "평가 때도 keep 마스크로 지웠습니다. 평가 때는 아무것도 지우지 않고, 모든 가중치에 (1−p)만 곱합니다."
    if torch.allclose(train_got, kept * (1 - p), atol=1e-9):
        return "학습 때 (1−p)를 곱했습니다. 원래 방식은 학습 때 지우기만 하고, (1−p)는 평가 때 곱합니다."
    if torch.allclose(train_got, _W * ~keep, atol=1e-9) or torch.allclose(train_got, _W * ~keep * scale, atol=1e-9):
        return "keep이 True인 자리를 0으로 만들었습니다. True는 '남긴다'는 뜻입니다."
    if torch.allclose(train_got, _W, atol=1e-9) or torch.allclose(train_got, _W * (1 - p), atol=1e-9):
        return (
            "학습 때 keep 마스크를 쓰지 않았습니다: 모든 가중치가 남았습니다. keep이 False인 자리는 0이 되도록 "
            "weights에 keep을 곱하세요 (불리언은 곱하면 1과 0이 됩니다)."
        )
    if torch.allclose(train_got, kept / kept.sum(dim=-1, keepdim=True), atol=1e-9):
        return (
            "학습 때 행의 합이 1이 되도록 다시 나눴습니다(합을 1로 다시 맞춤). 그러면 한 항목의 기댓값이 (1−p)·w가 아니게 되어 "
            "평가 때의 (1−p)·w와 맞지 않습니다. 학습 때는 지우기만 하고, 행의 합은 1이 아니어도 됩니다."
        )
    return None


@exercise("06-1")
def _apply_keep_mask(fn):
    keep = torch.tensor([[True, False, True], [True, True, False]])
    for p in (0.25, 0.5):
        got = {}
        for training in (True, False):
            what = f"apply_keep_mask(W, keep, {p}, training={training})"
            got[training] = answer_tensor(call_learner(fn, _W.clone(), keep.clone(), p, training, what=what), what)
            if got[training].shape != _W.shape:
                raise Wrong(
                    f"{what}의 결과 모양이 {tuple(got[training].shape)}입니다. "
                    f"가중치의 모양 {particle(tuple(_W.shape), '과/와')} 같아야 합니다."
                )
        want = {True: _W * keep, False: _W * (1 - p)}
        if all(torch.allclose(got[t], want[t], atol=1e-9) for t in (True, False)):
            continue
        diagnosis = _old_dropout_diagnosis(got[True], got[False], keep, p)
        if diagnosis:
            raise Wrong(diagnosis)
        training = not torch.allclose(got[True], want[True], atol=1e-9)
        diff = (got[training] - want[training]).abs()
        worst = tuple(int(i) for i in divmod(int(diff.argmax()), _W.shape[1]))
        mode = "학습" if training else "평가"
        raise Wrong(
            f"p={p}, {mode} 모드에서 위치 {worst}의 값이 {got[training][worst].item():.4g}인데, "
            f"정답은 {want[training][worst].item():.4g}입니다."
        )
    return (
        "학습 때 지우기만, 평가 때 (1−p)배: 평가 출력이 학습 때의 기댓값 (1−p)·W와 같습니다. "
        "역 드롭아웃(1절)의 평가 출력은 W 그대로이므로, 같은 가중치라면 두 방식의 평가 출력은 (1−p)배 다릅니다."
    )


@exercise("06-2")
def _row_sum_variance(answer):
    w, p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64), 0.2
    got = answer_tensor(answer, "답")
    if got.numel() != 1:
        raise Wrong(f"숫자 하나(분산)를 답해야 합니다. 받은 모양은 {tuple(got.shape)}입니다.")
    got = got.reshape(()).item()
    want = p / (1 - p) * (w**2).sum().item()
    # The formula gives 0.095 to rounding (float32 too); a sampling estimate, even from 10^7 draws, is ~1e-4 off.
    if math.isclose(got, want, rel_tol=1e-6):
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
                "자릿수를 줄이지 말고 식에서 나온 값을 그대로 답하세요."
            )
    if math.isclose(got, want, rel_tol=0.1):
        raise Wrong(
            f"받은 값 {particle(f'{got:.6g}', '은/는')} 정답과 {100 * abs(got - want) / want:.2g}% 다릅니다: 표본으로 잰 추정값으로 보입니다. "
            "이 문제는 식으로 구한 **정확한 값**을 원합니다. 항목마다 분산 w²·p/(1−p)를 구해 더하세요. "
            "표본 분산은 그 값을 확인하는 데 쓰세요."
        )
    if math.isclose(got, 0.0, abs_tol=1e-9):
        raise Wrong("분산이 0이라면 행의 합이 늘 1이라는 뜻인데, 드롭아웃 뒤에는 행의 합이 뽑을 때마다 달라집니다.")
    raise Wrong(
        f"받은 값 {particle(f'{got:.4g}', '은/는')} 정답과 다릅니다. 항목마다 분산 w²·p/(1−p)를 구해 더하세요 "
        "(드롭아웃은 항목마다 독립입니다)."
    )


class _Boom(Exception):
    """The exception the checker raises inside the learner's with block."""


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Sequential(nn.Dropout(0.3), nn.Linear(4, 2)))


def _modes(module: nn.Module) -> dict[str, bool]:
    return {name or "(전체)": m.training for name, m in module.named_modules()}


def _open(fn, module: nn.Module):
    """The learner's context manager for module, or a Wrong that says why it is not one."""
    cm = call_learner(fn, module, what="eval_mode(module)")
    if not (hasattr(type(cm), "__enter__") and hasattr(type(cm), "__exit__")):
        raise Wrong(
            f"eval_mode(module)의 반환값({type(cm).__name__})은 with 문에 쓸 수 없는 객체입니다. "
            "@contextmanager를 붙인 함수에서 yield 하거나, __enter__/__exit__이 있는 클래스를 쓰세요."
        )
    return cm


def _inside(fn, module: nn.Module, fail: bool = False) -> tuple[dict[str, bool], bool]:
    """Run ``with eval_mode(module):`` (raising _Boom inside if fail); the modes seen inside and whether _Boom got out."""
    cm = _open(fn, module)
    seen: dict[str, bool] = {}
    try:
        with cm:
            seen = _modes(module)
            if fail:
                raise _Boom
    except _Boom:
        return seen, True
    except NotImplementedError:
        raise
    except Exception as exc:
        raise Wrong(f"with eval_mode(module): 블록이 오류를 냈습니다: {type(exc).__name__}: {exc}") from None
    return seen, False


def _check_inside(seen: dict[str, bool]) -> None:
    training = [name for name, on in seen.items() if on]
    if seen.get("(전체)"):  # the module itself is still training: eval() was never called on it
        raise Wrong(
            "with 블록 안에서 모듈 자체가 아직 학습 모드입니다: 블록에 들어갈 때 module.eval()을 부르세요 "
            "(module.eval()은 하위 모듈까지 모두 평가 모드로 바꿉니다)."
        )
    if training:
        raise Wrong(
            f"with 블록 안에서 하위 모듈 {', '.join(training)}이(가) 아직 학습 모드입니다(이름은 "
            "module.named_modules()의 이름). module.eval()은 하위 모듈까지 "
            "모두 평가 모드로 바꿉니다 (module.training = False는 그 모듈 하나만 바꿉니다)."
        )


@exercise("06-3")
def _eval_mode(fn):
    for name, prepare in (
        ("학습 모드", lambda net: net.train()),
        ("평가 모드", lambda net: net.eval()),
        ("하위 모듈마다 다른 모드", lambda net: net.train()[2].eval()),
        ("안쪽 모듈 하나만 평가 모드", lambda net: net.train()[2][0].eval()),  # a grandchild unlike its parent
    ):
        net = _net()
        prepare(net)
        before = _modes(net)
        seen, _ = _inside(fn, net)
        _check_inside(seen)
        after = _modes(net)
        if after == before:
            continue
        if not any(after.values()):
            raise Wrong(
                f"블록을 나간 뒤에도 모듈이 평가 모드로 남았습니다(원래: {name}). 들어갈 때 모드를 기억했다가 "
                "나갈 때 되돌리세요."
            )
        if all(after.values()) and not all(before.values()):
            raise Wrong(
                f"원래 {name}였던 모듈이 블록 뒤 모두 학습 모드가 됐습니다. module.train()이나 module.train(was)는 "
                "하위 모듈 **전체**를 같은 모드로 맞춥니다. 하위 모듈마다(module.modules()) 원래 모드를 기억했다가 "
                "하나씩 되돌리세요."
            )
        changed = [n for n in before if before[n] != after[n]]
        raise Wrong(f"원래 {name}였던 모듈에서 블록 뒤 {', '.join(changed)}의 모드가 원래와 다릅니다.")
    net = _net()
    net.train()
    net[2].eval()
    before = _modes(net)
    seen, escaped = _inside(fn, net, fail=True)
    if not escaped:
        raise Wrong(
            "with 블록 안에서 난 예외가 밖으로 나오지 않았습니다: 예외를 삼켰습니다. 모드는 되돌리되 예외는 그대로 "
            "전해야 합니다 (except로 잡지 말고 try/finally를 쓰세요)."
        )
    _check_inside(seen)
    if _modes(net) != before:
        raise Wrong(
            "with 블록 안에서 예외가 나면 원래 모드로 돌아오지 않습니다. yield를 try/finally로 감싸 finally에서 "
            "되돌리세요 (클래스라면 __exit__은 예외가 나도 불립니다)."
        )
    return "블록 안에서는 모든 하위 모듈이 평가 모드, 나오면(예외로 나와도) 하위 모듈마다 원래 모드로 돌아갑니다."
