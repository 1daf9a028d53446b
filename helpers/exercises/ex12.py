"""Checkers for notebook 12 (학습하며 변하는 어텐션)."""

from __future__ import annotations

import torch

from helpers.lessons.attention_during_training import (
    SEQ_LEN,
    LookupModel,
    correct_keys,
    make_lookup_batch,
)

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle

PARAM_GROUPS = (
    "key_emb",
    "value_emb",
    "pos_emb",
    "attn.q_proj",
    "attn.k_proj",
    "attn.v_proj",
    "attn.out_proj",
    "readout",
)


def _example_keys() -> torch.Tensor:
    """Three fixed sequences used by the checkers."""
    g = torch.Generator().manual_seed(3)
    return make_lookup_batch(3, g)["keys"]


def _entropy_rises() -> tuple[list[int], list[float], list[float]]:
    """Steps of the stored seed-0 probe curve where the row entropy is above the previous record."""
    from helpers.data import load_json

    probe = load_json("dynamics_curves.json")["runs"]["0"]["probe"]
    steps, ent = probe["step"], probe["entropy"]
    rises = [steps[i] for i in range(1, len(ent)) if ent[i] > ent[i - 1]]
    return rises, steps, ent


def _as_steps(answer) -> list[float]:
    """The learner's steps as a sorted list of numbers (list, tuple, set, tensor, ndarray or one number)."""
    if isinstance(answer, str):
        raise Wrong(f"단계 번호의 리스트를 넘겨 주세요 (예: [10, 20]); 받은 것은 문자열 {answer!r}입니다.")
    if isinstance(answer, (set, frozenset)):
        answer = sorted(answer)
    got = answer_tensor(answer, "step_entropy_up").flatten()
    if not torch.isfinite(got).all():
        raise Wrong("답에 NaN이나 inf가 있습니다. 단계 번호(0, 5, 10, ...)만 넣으세요.")
    return sorted(got.tolist())


@exercise("12-1")
def _check_entropy_rises(answer):
    want, steps, ent = _entropy_rises()
    got = _as_steps(answer)
    if got == [float(s) for s in want]:
        bump = [s for s in want if s > 5]
        return (
            f"엔트로피가 커진 단계 {want}: 급변이 시작되는 {bump[0]}–{bump[-1]}단계에 정답 키 가중치가 오르는데도 "
            "엔트로피가 올라갑니다."
        )
    index = {s: i for i, s in enumerate(steps)}
    if len(got) in (len(steps), len(steps) - 1) and set(got) <= {0.0, 1.0}:
        raise Wrong(
            f"기록마다 참/거짓(0/1)을 {len(got)}개 돌려줬습니다. 그 표시가 참인 자리의 단계 번호만 리스트로 모으세요."
        )
    if len(set(got)) < len(got):
        raise Wrong("같은 단계가 두 번 들어 있습니다. 단계마다 한 번씩만 넣으세요.")
    if got == [float(index[s]) for s in want]:
        raise Wrong('리스트의 번호(인덱스)를 답했습니다. 기록은 5단계마다 있으므로 단계는 curve0["step"][i]입니다.')
    if got == [float(index[s] - 1) for s in want]:
        raise Wrong(
            "np.diff의 인덱스(i − 1)를 답했습니다. np.diff(entropy)[j] = entropy[j + 1] − entropy[j]이므로 커진 기록은 "
            'j + 1번째이고, 그 단계는 curve0["step"][j + 1]입니다 (기록은 5단계마다 있습니다).'
        )
    if got == [float(steps[index[s] - 1]) for s in want]:
        raise Wrong("커지기 직전의 단계를 답했습니다. entropy[i] > entropy[i − 1]이면 답은 그 뒤쪽 단계 step[i]입니다.")
    falls = [steps[i] for i in range(1, len(ent)) if ent[i] < ent[i - 1]]
    if got == [float(s) for s in falls]:
        raise Wrong(
            "엔트로피가 줄어든 단계를 답했습니다. 직전 기록보다 커진(entropy[i] > entropy[i − 1]) 단계를 찾으세요."
        )
    above_start = [steps[i] for i in range(1, len(ent)) if ent[i] > ent[0]]
    if got == [float(s) for s in above_start]:
        raise Wrong("첫 기록(0단계)과 비교했습니다. 바로 직전 기록(5단계 전)과 비교하세요.")
    if got == [float(s) for s in want if s > 5]:
        raise Wrong(
            f"하나가 빠졌습니다: 5단계의 엔트로피도 0단계보다 {ent[1] - ent[0]:.4f} 큽니다. 아주 작아도 커진 것입니다."
        )
    bad = [int(s) if s == int(s) else s for s in got if s not in index]
    if bad:
        raise Wrong(
            f"{particle(bad[:3], '은/는')} 기록된 단계가 아닙니다. 곡선은 0, 5, 10, ..., 1000단계에 기록되어 있습니다."
        )
    extra = [int(s) for s in got if s not in want]
    missing = len([s for s in want if float(s) not in got])
    message = (
        f"엔트로피가 직전보다 커진 단계는 {len(want)}개인데 {len(got)}개를 답했습니다."
        if len(got) != len(want)
        else f"개수({len(want)}개)는 맞지만 단계가 다릅니다."
    )
    if extra:
        message += f" {extra[:3]}단계에서는 엔트로피가 커지지 않았습니다."
    if missing:
        message += f" 빠진 단계가 {missing}개 있습니다."
    raise Wrong(message)


@exercise("12-2")
def _check_mass(fn):
    ready = {"attention_mass", "evaluate_lookup"}
    why = "2절의 식 m = (1/|Q|) Σ_i Σ_{j∈C(i)} α_ij를 qw와 correct로 직접 쓰세요(숨긴 셀의 attention_mass가 답입니다)."
    forbid_calls(fn, ready, why)
    keys = _example_keys()
    correct = correct_keys(keys)  # (3, Q, T)
    g = torch.Generator().manual_seed(5)
    qw = torch.softmax(3 * torch.randn(correct.shape, generator=g, dtype=torch.float64), dim=-1)  # (3, Q, T)
    want = (qw * correct).sum(-1).mean().item()
    got = answer_tensor(call_learner(fn, qw.clone(), correct.clone(), what="my_mass(qw, correct)"), "my_mass")
    if got.numel() != 1:
        raise Wrong(
            f"숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다. "
            "쿼리별 합을 배치와 쿼리에 대해 평균하세요."
        )
    got = got.item()
    if abs(got - want) < 1e-9:
        uniform = torch.full_like(qw, 1 / SEQ_LEN)
        got_u = answer_tensor(
            call_learner(fn, uniform, correct.clone(), what="my_mass(균등 가중치, correct)"), "my_mass"
        ).item()
        if abs(got_u - 1 / SEQ_LEN) > 1e-9:
            raise Wrong(
                f"균등 가중치 1/T에서 {particle(f'{got_u:.4g}', '이/가')} 나왔습니다. 기대값은 1/T = {1 / SEQ_LEN}입니다."
            )
        return f"정답 키 가중치 {want:.4f}; 균등 가중치라면 1/T = {1 / SEQ_LEN}입니다."
    hints = {
        (qw * correct)
        .mean()
        .item(): "키 축에서도 평균을 냈습니다(T로 한 번 더 나눔). 쿼리 한 행의 정답 키 가중치는 합(sum)입니다",
        (qw * correct).sum().item(): "모든 쿼리의 가중치를 더하기만 했습니다. 시퀀스와 쿼리에 대해 평균을 내세요",
        qw.max(-1)
        .values.mean()
        .item(): "행의 최대 가중치를 쟀습니다. 가장 큰 가중치가 정답 키에 있다는 보장은 없습니다",
        (qw * correct).sum(-1)[:, 0].mean().item(): "첫 번째 쿼리만 썼습니다. 쿼리 네 개 모두 평균하세요",
        (qw * ~correct).sum(-1).mean().item(): "정답이 아닌 키의 가중치를 더했습니다(1 − 정답 키 가중치)",
    }
    hint = next((h for v, h in hints.items() if abs(got - v) < 1e-9), None)
    raise Wrong(f"my_mass = {got:.4g}, 기대값은 {want:.4g}입니다." + (f" {hint}." if hint else ""))


def _influences_attention() -> set[str]:
    """Parameter groups whose gradient reaches the attention weights of a random model."""
    torch.manual_seed(0)
    model = LookupModel()
    batch = make_lookup_batch(8, torch.Generator().manual_seed(0))
    _, weights = model(batch["keys"], batch["values"])
    (weights * torch.randn_like(weights)).sum().backward()
    groups = set()
    for name, p in model.named_parameters():
        if p.grad is not None and p.grad.abs().sum() > 0:
            groups.add(name.rsplit(".", 1)[0])
    return groups


@exercise("12-3")
def _check_params(answer):
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
        raise Wrong(f'이름의 집합(set)을 넘겨 주세요, 예: {{"attn.q_proj"}}; 받은 것은 {type(answer).__name__}입니다.')
    got = set(answer)
    unknown = got - set(PARAM_GROUPS)
    if unknown:
        raise Wrong(
            f"모르는 이름 {particle(sorted(unknown), '이/가')} 있습니다. param_groups = {sorted(PARAM_GROUPS)} 중에서 고르세요."
        )
    want = _influences_attention()
    why_not = {
        "attn.v_proj": "W^V는 밸류만 만듭니다. 점수 q·k에 들어가지 않으므로 가중치는 그대로이고, 무엇이 섞이는지만 바뀝니다",
        "attn.out_proj": "W^O는 가중합이 끝난 뒤에 곱해집니다. 가중치 계산보다 뒤에 있습니다",
        "readout": "출력층은 어텐션 뒤에 있습니다. 이 층은 한 층짜리 모델이라 뒤의 파라미터가 앞의 가중치를 바꾸지 못합니다",
    }
    why_yes = {
        "key_emb": "키 글자 임베딩은 입력 x의 일부라서 q와 k를 모두 바꿉니다",
        "value_emb": "값 임베딩도 입력 x에 더해지므로 q와 k를 바꿉니다('?' 표시 덕분에 쿼리 위치를 피할 수 있습니다)",
        "pos_emb": "위치 임베딩도 입력 x에 더해지므로 q와 k를 바꿉니다",
        "attn.q_proj": "W^Q는 쿼리를 만듭니다. 점수 q·k에 직접 들어갑니다",
        "attn.k_proj": "W^K는 키를 만듭니다. 점수 q·k에 직접 들어갑니다",
    }
    for name in PARAM_GROUPS:
        if name in got and name not in want:
            raise Wrong(f"{particle(name, '은/는')} 어텐션 가중치를 바꾸지 못합니다: {why_not[name]}.")
        if name in want and name not in got:
            raise Wrong(f"{particle(name, '이/가')} 빠졌습니다: {why_yes[name]}.")
    return "가중치는 softmax(q·k/√d)이므로 q와 k를 만드는 것(입력 임베딩, W^Q, W^K)만 가중치를 바꿉니다."
