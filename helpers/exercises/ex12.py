"""Checkers for notebook 12 (학습하며 변하는 어텐션)."""

from __future__ import annotations

import torch

from helpers.lessons.attention_during_training import (
    KEYS,
    N_PAIRS,
    N_QUERIES,
    SEQ_LEN,
    LookupModel,
    correct_keys,
    make_lookup_batch,
)

from . import Wrong, answer_tensor, call_learner, exercise

PARAM_GROUPS = ("key_emb", "value_emb", "pos_emb", "attn.q_proj", "attn.k_proj", "attn.v_proj",
                "attn.out_proj", "readout")


def _example_keys() -> torch.Tensor:
    """Three fixed sequences used by the checkers."""
    g = torch.Generator().manual_seed(3)
    return make_lookup_batch(3, g)["keys"]


@exercise("12-1")
def _check_correct_keys(fn):
    keys = _example_keys()  # (3, T)
    want = correct_keys(keys)
    got = answer_tensor(call_learner(fn, keys.clone(), what="my_correct_keys(keys)"), "my_correct_keys")
    if got.shape == (keys.shape[0], N_QUERIES):
        raise Wrong("모양이 (n, Q)입니다. 정답 키의 위치 번호 대신, 쿼리마다 T개 위치 각각이 정답인지 표시한 "
                    f"(n, Q, T) = {tuple(want.shape)} 불리언 텐서를 돌려주세요.")
    if got.shape == (keys.shape[0], N_QUERIES, N_PAIRS):
        raise Wrong(f"모양이 (n, Q, {N_PAIRS})입니다. 쌍 위치 {N_PAIRS}개만 남기지 말고 T = {SEQ_LEN}개 위치 모두에 대해 "
                    f"표시하세요(질문 위치는 False): (n, Q, T) = {tuple(want.shape)}.")
    if got.shape == (keys.shape[0], SEQ_LEN, SEQ_LEN):
        raise Wrong(f"모양이 (n, T, T) = {tuple(got.shape)}입니다. 행은 쿼리 위치 {N_PAIRS}..{SEQ_LEN - 1}의 "
                    f"{N_QUERIES}개만 필요합니다: (n, Q, T) = {tuple(want.shape)}.")
    if got.shape != want.shape:
        raise Wrong(f"모양이 {tuple(got.shape)}입니다. keys가 (n, T) = {tuple(keys.shape)}이면 "
                    f"(n, Q, T) = {tuple(want.shape)}여야 합니다.")
    if not ((got == 0) | (got == 1)).all():
        raise Wrong("값이 True/False(또는 1/0)가 아닙니다. 정답 키인 위치만 True로 표시하세요.")
    got = got.bool()
    same_symbol = keys[:, N_PAIRS:, None] == keys[:, None, :]
    if torch.equal(got, same_symbol):
        raise Wrong("키 글자가 같은 위치를 모두 표시했습니다. 쿼리 자신도 글자가 같지만 "
                    f"값이 없습니다('?'). 정답 키는 앞쪽 쌍 위치 0..{N_PAIRS - 1} 중에서만 찾으세요.")
    rows = got.sum(dim=-1)
    if (rows != 1).any():
        n, q = (rows != 1).nonzero()[0].tolist()
        raise Wrong(f"이 과제에서는 쿼리마다 정답 키가 정확히 하나입니다. 시퀀스 {n}의 쿼리 {q}에 "
                    f"{rows[n, q].item()}개가 표시되었습니다.")
    if not torch.equal(got, want):
        n, q = (got != want).any(dim=-1).nonzero()[0].tolist()
        raise Wrong(f"시퀀스 {n}의 쿼리 {q}(키 {KEYS[keys[n, N_PAIRS + q]]})의 정답 키는 위치 "
                    f"{want[n, q].nonzero().item()}인데 위치 {got[n, q].nonzero().item()}를 표시했습니다.")
    return "쿼리의 키 글자와 같은 글자를 가진 쌍 위치 하나: 정답을 미리 아는 과제라서 가능한 정의입니다."


@exercise("12-2")
def _check_mass(fn):
    keys = _example_keys()
    correct = correct_keys(keys)  # (3, Q, T)
    g = torch.Generator().manual_seed(5)
    qw = torch.softmax(3 * torch.randn(correct.shape, generator=g, dtype=torch.float64), dim=-1)  # (3, Q, T)
    want = (qw * correct).sum(-1).mean().item()
    got = answer_tensor(call_learner(fn, qw.clone(), correct.clone(), what="my_mass(qw, correct)"), "my_mass")
    if got.numel() != 1:
        raise Wrong(f"숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다. "
                    "쿼리별 합을 배치와 쿼리에 대해 평균하세요.")
    got = got.item()
    if abs(got - want) < 1e-9:
        uniform = torch.full_like(qw, 1 / SEQ_LEN)
        got_u = answer_tensor(call_learner(fn, uniform, correct.clone(), what="my_mass(균등 가중치, correct)"), "my_mass").item()
        if abs(got_u - 1 / SEQ_LEN) > 1e-9:
            raise Wrong(f"균등 가중치 1/T에서 {got_u:.4g}가 나왔습니다. 기대값은 1/T = {1 / SEQ_LEN}입니다.")
        return f"정답 키 가중치 {want:.4f}; 균등 가중치라면 1/T = {1 / SEQ_LEN}입니다."
    hints = {
        (qw * correct).mean().item(): "키 축에서도 평균을 냈습니다(T로 한 번 더 나눔). 쿼리 한 행의 정답 키 가중치는 합(sum)입니다",
        (qw * correct).sum().item(): "모든 쿼리의 가중치를 더하기만 했습니다. 시퀀스와 쿼리에 대해 평균을 내세요",
        qw.max(-1).values.mean().item(): "행의 최대 가중치를 쟀습니다. 가장 큰 가중치가 정답 키에 있다는 보장은 없습니다",
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
        raise Wrong(f"이름의 집합(set)을 넘겨 주세요, 예: {{\"attn.q_proj\"}}; 받은 것은 {type(answer).__name__}입니다.")
    got = set(answer)
    unknown = got - set(PARAM_GROUPS)
    if unknown:
        raise Wrong(f"모르는 이름 {sorted(unknown)}이 있습니다. param_groups = {sorted(PARAM_GROUPS)} 중에서 고르세요.")
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
            raise Wrong(f"{name}은(는) 어텐션 가중치를 바꾸지 못합니다: {why_not[name]}.")
        if name in want and name not in got:
            raise Wrong(f"{name}이(가) 빠졌습니다: {why_yes[name]}.")
    return "가중치는 softmax(q·k/√d)이므로 q와 k를 만드는 것(입력 임베딩, W^Q, W^K)만 가중치를 바꿉니다."
