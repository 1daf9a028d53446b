"""Checkers for notebook 09 (마스크)."""

from __future__ import annotations

import ast
import inspect

import torch

from helpers.attention import causal_mask, softmax
from helpers.lessons.masks import attention_mask, fully_masked_rows

from . import LOOP_WORDS, Wrong, call_learner, exercise, forbid_calls, particle, source_tree


def _as_answer_mask(got, what: str, want_shape) -> torch.Tensor:
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"{particle(what, '은/는')} torch.Tensor를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
    if tuple(got.shape) != tuple(want_shape):
        raise Wrong(
            f"{what}의 모양이 {tuple(got.shape)}입니다. (B, T, T) = {tuple(want_shape)}이어야 합니다 "
            "(쿼리 행마다 키 열 하나씩)."
        )
    if got.dtype != torch.bool:
        raise Wrong(
            f"{what}의 dtype이 {got.dtype}입니다. 불리언 마스크(True = 볼 수 있음)를 돌려주세요: "
            "비교 연산(<, >=)이나 & 로 만들면 bool이 됩니다."
        )
    return got


_EX1_CASES = [([3, 1, 4], 4), ([2, 5], 5), ([1], 3)]


def _left_mask(lengths, t, causal=True):
    pos = torch.arange(t)
    real = pos[None, :] >= (t - torch.tensor(lengths))[:, None]  # (B, T)
    mask = real[:, None, :].expand(-1, t, -1)
    return mask & causal_mask(t) if causal else mask


_LOOP_CALLS = {"map": "map(...)", "filter": "filter(...)", "reduce": "reduce(...)", "apply_": "apply_(...)"}


def _loops(fn, depth=0, seen=None) -> set[str]:
    """The loops in fn's source and in the learner's own functions it uses (two levels down):
    statements, comprehensions, and map/filter/reduce, which loop without a loop statement."""
    fn = getattr(fn, "func", fn)  # functools.partial(f, ...) is f
    seen = set() if seen is None else seen
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen or depth > 2:
        return set()
    seen.add(id(code))
    _, tree = source_tree(fn)
    found = set()
    for node in ast.walk(tree) if tree else ():
        if type(node).__name__ in LOOP_WORDS:
            found.add(LOOP_WORDS[type(node).__name__])
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in _LOOP_CALLS:
                found.add(_LOOP_CALLS[name])
    scope = getattr(fn, "__globals__", {})
    for name in code.co_names:
        helper = scope.get(name)
        if inspect.isfunction(helper) and helper.__module__ == getattr(fn, "__module__", None):
            found |= {f"{name} 안의 {loop}" for loop in _loops(helper, depth + 1, seen)}
    return found


@exercise("09-1")
def _check_left_padded_mask(fn):
    loops = sorted(_loops(fn))
    if loops:
        raise Wrong(
            f"반복이 있습니다({', '.join(loops)}). 이 문제는 마스크를 반복문 없이 torch.arange와 비교 연산(>=, <=)으로 "
            "한 번에 만드는 연습입니다: (B, T)의 실제 토큰 표시와 (T, T)의 인과 마스크를 브로드캐스트해 &로 합치세요."
        )
    for lengths, t in _EX1_CASES:
        what = f"left_padded_mask({lengths}, {t})"
        want = _left_mask(lengths, t)
        got = _as_answer_mask(call_learner(fn, torch.tensor(lengths), t, what=what), what, want.shape)
        if torch.equal(got, want):
            continue
        if torch.equal(got, ~want):
            raise Wrong(
                f"{what}: True/False가 뒤집혔습니다. 이 과정의 약속은 True = 볼 수 있음입니다 "
                "(torch.nn.MultiheadAttention만 반대)."
            )
        if torch.equal(got, attention_mask(torch.tensor(lengths), t, causal=True)):
            raise Wrong(
                f"{what}: 오른쪽 패딩의 마스크입니다(실제 토큰이 앞쪽). 왼쪽 패딩에서는 실제 토큰이 뒤쪽 L개, "
                "곧 j >= T - L인 키입니다."
            )
        if torch.equal(got, _left_mask(lengths, t, causal=False)):
            raise Wrong(f"{what}: 패딩만 가렸고 미래 키가 열려 있습니다. 인과 마스크(하삼각, j <= i)와 &로 합치세요.")
        if torch.equal(got, causal_mask(t).expand(len(lengths), t, t)):
            raise Wrong(f"{what}: 인과 마스크만 있고 왼쪽 패딩 키가 열려 있습니다. j < T - L인 키 열을 가리세요.")
        if torch.equal(got, _left_mask(lengths, t, causal=False) & causal_mask(t).T):
            raise Wrong(f"{what}: 상삼각을 썼습니다. 쿼리 i는 키 j <= i만 봐야 하므로 하삼각(tril)입니다.")
        b, i, j = (got != want).nonzero()[0].tolist()
        raise Wrong(
            f"{what}: 문장 {b}의 쿼리 {i}, 키 {j} 칸(0부터 센 번호)이 {got[b, i, j].item()}인데 "
            f"{want[b, i, j].item()}여야 합니다 (길이 {lengths[b]}: 실제 토큰은 뒤쪽 {lengths[b]}개, 인과: j <= i)."
        )
    n = int(fully_masked_rows(_left_mask([3, 1, 4], 4)).sum())
    return (
        f"왼쪽 패딩 키와 미래 키를 함께 가렸습니다. 길이 [3, 1, 4], T = 4이면 전부 False인 행이 {n}개 "
        "(= 왼쪽 패딩 수)이므로, 이 마스크는 그런 행을 0으로 처리하는 소프트맥스(09-2)와 함께 써야 합니다."
    )


def _ex2_cases():
    gen = torch.Generator().manual_seed(9)
    scores = torch.randn(2, 4, 5, generator=gen, dtype=torch.float64) * 3  # (B, T_q, T_k)
    mask = attention_mask([3, 5], 5, t_q=4).clone()
    mask[0, 2] = False  # one query with no visible key at all
    return [
        (scores, mask),
        (torch.tensor([[1000.0, 999.0, -5.0]], dtype=torch.float64), torch.tensor([[True, True, False]])),
        # a large *hidden* score: exp first and × mask after gives inf × 0 = NaN
        (torch.tensor([[0.0, 1000.0, 1.0]], dtype=torch.float64), torch.tensor([[True, False, True]])),
    ]


@exercise("09-2")
def _check_safe_softmax(fn):
    forbidden = {
        "softmax",
        "safe_softmax",
        "softmax_t",
        "_softmax",
        "log_softmax",
        "softmin",
        "Softmax",
        "LogSoftmax",
        "Softmin",
        "scaled_dot_product_attention",
        "masked_attention",
    }
    why = (
        "이 문제는 소프트맥스를 `torch.exp`와 합으로 직접 짜면서 가려진 칸과 전부 가려진 행을 처리하는 연습입니다 "
        "(위의 `safe_softmax`가 소프트맥스 함수로 하는 방법은 이미 봤습니다)."
    )
    forbid_calls(fn, forbidden, why)
    for scores, mask in _ex2_cases():
        what = f"safe_softmax(scores {tuple(scores.shape)}, mask)"
        got = call_learner(fn, scores.clone(), mask.clone(), what=what)
        if not isinstance(got, torch.Tensor):
            raise Wrong(f"{particle(what, '은/는')} 텐서를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
        got = got.to(torch.float64)
        want = softmax(scores.masked_fill(~mask, float("-inf")))
        if got.shape != want.shape:
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 점수와 같은 {tuple(want.shape)}이어야 합니다.")
        dead = fully_masked_rows(mask)
        if torch.isnan(got).any():
            rows = torch.isnan(got).any(-1).nonzero().tolist()
            if dead[torch.isnan(got).any(-1)].any():
                raise Wrong(
                    f"{what}에 NaN이 있습니다 (행 {rows}). 전부 가려진 행입니다: -inf만 있는 행을 "
                    "torch.softmax에 넣으면 0/0 = NaN입니다. 그 행의 가중치는 0으로 두세요."
                )
            top = scores.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)  # the largest visible score
            if ((scores - top > 700) & ~mask)[torch.isnan(got).any(-1)].any():
                raise Wrong(
                    f"{what}에 NaN이 있습니다 (행 {rows}). 그 행에는 아주 큰 점수가 가려진 칸에 있습니다: "
                    "exp를 먼저 하고 마스크를 나중에 곱하면 exp(큰 점수) = inf, inf × 0 = NaN입니다. "
                    "가려진 칸의 점수를 먼저 -inf로 채운 뒤 exp 하세요. (최댓값을 가려진 칸까지 포함해 구했다면 반대로 "
                    "볼 수 있는 칸의 exp가 모두 0으로 언더플로해 0/0 = NaN이 됩니다: 최댓값은 볼 수 있는 칸에서만 구하세요.)"
                )
            raise Wrong(
                f"{what}에 NaN이 있습니다 (행 {rows}). 볼 수 있는 키가 있는 행인데 NaN이라면 exp가 넘친 것입니다 "
                "(점수 1000 → e^1000 = inf, inf/inf = NaN): 지수를 취하기 전에 행의 최댓값을 빼세요."
            )
        if dead.any():
            row = got[dead]
            if torch.allclose(row, torch.full_like(row, 1.0 / mask.shape[-1])):
                raise Wrong(
                    f"{what}: 전부 가려진 행의 가중치가 모두 {particle(f'1/{mask.shape[-1]}', '으로/로')} 균등합니다. "
                    "-1e9 같은 유한한 수로 채우면 이렇게 가려진 패딩을 고르게 섞습니다. 그 행은 전부 0이어야 합니다."
                )
            if not torch.equal(row, torch.zeros_like(row)):
                raise Wrong(
                    f"{what}: 전부 가려진 행의 가중치가 0이 아닙니다 (최대 {row.abs().max().item():.3g}). 전부 0이어야 합니다."
                )
        leaked = got.masked_select(~mask).abs().max().item() if (~mask).any() else 0.0
        if leaked > 1e-12:
            raise Wrong(
                f"{what}: 가려진 칸의 가중치가 0이 아닙니다 (최대 {leaked:.3g}). 마스크가 False인 점수를 -inf로 채우세요."
            )
        if not torch.isfinite(got).all():
            raise Wrong(f"{what}에 inf가 있습니다: 지수를 취하기 전에 행의 최댓값을 빼세요.")
        sums = got[~dead].sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-9):
            top = scores.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True)  # the largest visible score
            off = (got.sum(-1) - 1).abs() > 1e-9  # (B, T_q): rows whose sum is not 1
            if ((scores - top > 700) & ~mask)[off & ~dead].any():
                raise Wrong(
                    f"{what}: 볼 수 있는 키가 있는 행의 합이 1이 아닙니다 ({[round(v, 4) for v in sums.tolist()]}). "
                    "그 행에는 아주 큰 점수가 가려진 칸에 있습니다. 최댓값은 볼 수 있는 칸에서만 구하세요: "
                    "가려진 큰 점수를 빼면 exp가 0으로 언더플로합니다."
                )
            raise Wrong(
                f"{what}: 볼 수 있는 키가 있는 행의 합이 1이 아닙니다 ({[round(v, 4) for v in sums.tolist()]})."
            )
        if not torch.allclose(got, want, atol=1e-9):
            raise Wrong(f"{what}: 값이 기대와 다릅니다 (최대 차이 {(got - want).abs().max().item():.3g}).")
    return "가려진 칸은 정확히 0, 전부 가려진 행은 NaN도 균등 분포도 아닌 0입니다."


def _ex3_setup():
    gen = torch.Generator().manual_seed(3)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    q = torch.randn(1, 4, 8, generator=gen)  # (B, T_q, d)
    kv = torch.randn(1, 5, 8, generator=gen)  # (B, T_k, d)
    masks = [causal_mask(4, 5), attention_mask([3], 5, t_q=4)[0], attention_mask([2], 5, causal=True, t_q=4)[0]]
    return mha, q, kv, masks


@exercise("09-3")
def _check_to_torch_mask(fn):
    from helpers.attention import MultiHeadAttention

    mha, q, kv, masks = _ex3_setup()
    ours = MultiHeadAttention.from_torch(mha).eval()
    for mask in masks:
        what = f"to_torch_mask(mask {tuple(mask.shape)})"
        got = call_learner(fn, mask.clone(), what=what)
        if not isinstance(got, torch.Tensor):
            raise Wrong(f"{particle(what, '은/는')} 텐서를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
        if tuple(got.shape) != tuple(mask.shape):
            raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 마스크와 같은 {tuple(mask.shape)}이어야 합니다.")
        if got.dtype == torch.bool and torch.equal(got, mask):
            raise Wrong(
                f"{what}: 마스크를 그대로 돌려줬습니다. torch.nn.MultiheadAttention의 bool attn_mask는 "
                "True = 가림이라서, 우리 마스크를 그대로 넘기면 볼 칸과 가릴 칸이 뒤바뀝니다."
            )
        if got.is_floating_point() and torch.equal(got, mask.to(got.dtype)):
            raise Wrong(
                f"{what}: 1/0 float 마스크입니다. float attn_mask는 점수에 더해지므로 1을 더해도 아무것도 "
                "가려지지 않습니다. 가릴 칸에 -inf, 볼 칸에 0을 넣으세요."
            )
        if got.is_floating_point() and torch.equal(got, (~mask).to(got.dtype)):
            raise Wrong(
                f"{what}: 가릴 칸이 1, 볼 칸이 0인 float 마스크입니다. 자리는 맞지만 float attn_mask는 가리는 "
                "표시가 아니라 점수에 더해지는 값이라서, 가릴 칸의 점수가 1 커질 뿐 아무것도 가려지지 않습니다 "
                "(오히려 그 칸의 가중치가 e배 커집니다). float로 답하려면 가릴 칸에 -inf, 볼 칸에 0을 넣고, "
                "아니면 불리언 ~mask를 돌려주세요."
            )
        if got.is_floating_point() and bool(torch.isfinite(got).all()) and got.min() > -1e4:
            raise Wrong(
                f"{what}: float 마스크에 큰 음수(-inf)가 하나도 없습니다. float attn_mask는 점수에 더해지므로 "
                f"[{got.min().item():.3g}, {got.max().item():.3g}] 범위의 값은 가중치를 e^(값)배로 바꿀 뿐 0으로 "
                "만들지 못합니다. 가릴 칸(False)에 -inf, 볼 칸(True)에 0을 넣으세요."
            )
        if got.is_floating_point() and (got[mask] < -1e4).all() and (got[~mask] == 0).all():
            raise Wrong(
                f"{what}: float 마스크에서 0과 -inf의 자리가 뒤바뀌었습니다. 볼 수 있는 칸(True)이 0, 가릴 칸(False)이 -inf여야 합니다."
            )
        with torch.no_grad():
            want, _ = ours(q, kv, mask=mask)
            try:
                out, _ = mha(q, kv, kv, attn_mask=got, need_weights=False)
            except Exception as exc:
                hint = (
                    f" float 마스크는 쿼리와 같은 dtype({q.dtype})이어야 합니다 (받은 것: {got.dtype})."
                    if got.is_floating_point() and got.dtype != q.dtype
                    else f". attn_mask는 불리언(~mask)이나 0/-inf float여야 합니다 (받은 것: {got.dtype})."
                    if not got.is_floating_point() and got.dtype != torch.bool
                    else ""
                )
                raise Wrong(
                    f"{particle(what, '을/를')} attn_mask로 넘기자 torch가 오류를 냈습니다: "
                    f"{type(exc).__name__}: {exc}{hint}"
                ) from None
        if torch.isnan(out).any():
            raise Wrong(
                f"{what}: torch 결과에 NaN이 있습니다. 어떤 쿼리 행이 모두 가려졌습니다 (True = 가림인지 확인하세요)."
            )
        if not torch.allclose(out, want, atol=1e-5):
            raise Wrong(
                f"{what}: torch 결과가 우리 MultiHeadAttention(mask)와 다릅니다 "
                f"(최대 차이 {(out - want).abs().max().item():.3g}). 볼 칸과 가릴 칸을 다시 확인하세요."
            )
    return "torch.nn.MultiheadAttention의 결과가 우리 구현과 같습니다: bool이면 ~mask, float이면 0/-inf."
