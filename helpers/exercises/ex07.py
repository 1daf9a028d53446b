"""Checkers of notebook 07 (multi-head attention): 07-1 assemble nn.MultiheadAttention, 07-2 GQA parameters."""

from __future__ import annotations

import ast
import copy
import inspect
import itertools
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.exercises import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle, source_tree

# T, h and d all differ, so that every layout mistake changes the values (not only the shape).
_CASES = ((2, 5, 12, 3), (1, 7, 12, 2))  # (B, T, C, h)

_MISTAKES = {
    "scale_by_c": "점수를 √C(= √d_model)로 나눴습니다. 헤드 하나의 내적은 d = C/h개 항의 합이므로 √d로 나눠야 합니다.",
    "no_scale": "점수를 √d로 나누지 않았습니다(스케일 1). 헤드 하나의 내적 q·k를 √d = √(C/h)로 나눈 뒤 소프트맥스하세요.",
    "causal": "인과 마스크를 씌웠습니다(쿼리 i가 키 j ≤ i만 봄). m(x, x, x)는 마스크 없이 모든 키를 봅니다.",
    "split_without_transpose": "Q·K·V를 view/reshape로 곧바로 (B, h, T, d)로 만들었습니다. 그러면 한 '헤드'의 행이 "
    "여러 토큰의 특징 조각이 됩니다. (B, T, h, d)로 나눈 뒤 transpose(1, 2) 하세요.",
    "merge_without_transpose": "헤드 출력 (B, h, T, d)를 곧바로 reshape(B, T, C) 했습니다. 한 토큰의 출력에 다른 토큰의 "
    "헤드 출력이 들어갑니다. 먼저 transpose(1, 2)로 (B, T, h, d)를 만든 뒤 합치세요.",
    "head_order": "헤드를 거꾸로 이어 붙였습니다. out_proj의 열 블록은 헤드 0, 1, 2, … 순서를 가정합니다.",
    "no_in_bias": "in_proj_bias를 빠뜨렸습니다. Q·K·V 투영에도 편향이 있습니다: F.linear(x, m.in_proj_weight, m.in_proj_bias).",
    "no_out_bias": "출력 투영의 편향(m.out_proj.bias)을 빠뜨렸습니다. m.out_proj(...)를 그대로 호출하세요.",
    "in_weight_transposed": "Q·K·V 투영에서 가중치를 전치하지 않고 x @ W로 곱했습니다. nn.Linear와 in_proj_weight는 "
    "Wᵀ(출력 × 입력)를 저장하므로 x @ W.T + b, 곧 F.linear(x, W, b)로 곱해야 합니다 (C×C라 모양 오류가 나지 않습니다).",
    "out_weight_transposed": "출력 투영에서 m.out_proj.weight를 전치하지 않고 곱했습니다. nn.Linear는 Wᵀ(출력 × 입력)를 "
    "저장하므로 merged @ W.T + b, 곧 m.out_proj(merged)를 쓰세요.",
}


def _variant(m: nn.MultiheadAttention, x: torch.Tensor, mistake=None, order=(0, 1, 2)):
    """nn.MultiheadAttention's self-attention written out, with one mistake (a name) or several (a tuple) injected."""
    mistakes = set() if mistake is None else {mistake} if isinstance(mistake, str) else set(mistake)
    b, t, c = x.shape
    h = m.num_heads
    d = c // h
    bias = None if "no_in_bias" in mistakes else m.in_proj_bias
    if "in_weight_transposed" in mistakes:  # x @ W per block instead of x @ W.T
        parts = [x @ w for w in m.in_proj_weight.chunk(3)]
        if bias is not None:
            parts = [y + b_ for y, b_ in zip(parts, bias.chunk(3))]
    else:
        parts = F.linear(x, m.in_proj_weight, bias).chunk(3, dim=-1)
    q, k, v = (parts[i] for i in order)
    if "split_without_transpose" in mistakes:
        q, k, v = (y.reshape(b, h, t, d) for y in (q, k, v))
    else:
        q, k, v = (y.view(b, t, h, d).transpose(1, 2) for y in (q, k, v))
    scale = c if "scale_by_c" in mistakes else 1 if "no_scale" in mistakes else d
    scores = q @ k.transpose(-2, -1) / scale**0.5  # (B, h, T, T)
    if "causal" in mistakes:
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    heads = torch.softmax(scores, dim=-1) @ v  # (B, h, T, d)
    if "head_order" in mistakes:
        heads = heads.flip(1)
    if "merge_without_transpose" in mistakes:
        merged = heads.reshape(b, t, c)
    else:
        merged = heads.transpose(1, 2).reshape(b, t, c)
    out_bias = None if "no_out_bias" in mistakes else m.out_proj.bias
    out_weight = m.out_proj.weight.T if "out_weight_transposed" in mistakes else m.out_proj.weight
    return F.linear(merged, out_weight, out_bias)


def _module(c: int, h: int, seed: int) -> nn.MultiheadAttention:
    torch.manual_seed(seed)
    m = nn.MultiheadAttention(c, h, batch_first=True).double().eval()
    with torch.no_grad():  # non-zero biases, so that a forgotten bias shows
        m.in_proj_bias.normal_(0, 0.5)
        m.out_proj.bias.normal_(0, 0.5)
    return m


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, atol=1e-8, rtol=1e-6)


_FORBIDDEN_CALL = (
    "m(x, x, x)로 모듈 자체를 호출했습니다(또는 F.multi_head_attention_forward, 위에서 만든 "
    "MultiHeadAttention·copy_from_torch를 썼습니다). 그러면 검사기가 "
    "비교하는 값을 그대로 돌려주는 셈이라 아무것도 확인되지 않습니다. 이 문제는 m.in_proj_weight, "
    "m.in_proj_bias, m.out_proj만으로 투영 → 헤드 나누기 → 어텐션 → 합치기 → 출력 투영을 직접 계산하는 "
    "연습입니다."
)


# The module itself, PyTorch's functions behind it, and this notebook's own MultiHeadAttention (with the
# copy_from_torch that loads m's weights into it): each one computes the answer without assembling it.
_TAUGHT = {"multi_head_attention_forward", "_native_multi_head_attention", "MultiHeadAttention", "copy_from_torch"}


def _forbid_the_module_by_name(fn) -> None:
    """The shortcut the exercise text forbids, seen in the source: calling the module (the first parameter,
    or its forward) or F.multi_head_attention_forward."""
    try:
        first = next(iter(inspect.signature(fn).parameters))
    except (StopIteration, TypeError, ValueError):
        first = None
    forbid_calls(fn, _TAUGHT | ({first} if first else set()), _FORBIDDEN_CALL)
    if first and _calls_forward_of(fn, first):  # m.forward(...); m.out_proj.forward(...) is fine
        raise Wrong(f"{first}.forward을(를) 불렀습니다. {_FORBIDDEN_CALL}")


def _calls_forward_of(fn, name: str) -> bool:
    """Whether the source of fn calls ``name.forward(...)`` (the module itself, not one of its submodules)."""
    source, tree = source_tree(fn)
    if source is None:
        return False
    if tree is None:  # fall back to the text
        return re.search(rf"(?<![\w.]){re.escape(name)}\s*\.\s*forward\s*\(", source) is not None
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "forward"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
        for node in ast.walk(tree)
    )


def _call_without_the_module(fn, m: nn.MultiheadAttention, x: torch.Tensor, what: str):
    """Run the learner's function, recording any call of m itself or of F.multi_head_attention_forward
    (a second line of defence behind forbid_calls: a call forbid_calls cannot read from the source)."""
    called = []
    hook = m.register_forward_pre_hook(lambda *_: called.append("m"))

    def taught(module, _):  # any MultiHeadAttention (or a subclass) run during the call, wherever it was defined
        if any(k.__name__ == "MultiHeadAttention" for k in type(module).__mro__):
            called.append("MultiHeadAttention")

    global_hook = torch.nn.modules.module.register_module_forward_pre_hook(taught)
    original = F.multi_head_attention_forward

    def spy(*args, **kwargs):
        called.append("F")
        return original(*args, **kwargs)

    F.multi_head_attention_forward = spy
    try:
        result = call_learner(fn, m, x, what=what)
    finally:
        F.multi_head_attention_forward = original
        hook.remove()
        global_hook.remove()
    if "MultiHeadAttention" in called:
        raise Wrong(f"위에서 만든 MultiHeadAttention을 불렀습니다. {_FORBIDDEN_CALL}")
    if called:
        raise Wrong(_FORBIDDEN_CALL)
    return result


@exercise("07-1")
def _assemble(fn):
    _forbid_the_module_by_name(fn)
    for i, (b, t, c, h) in enumerate(_CASES):
        m = _module(c, h, seed=i)
        x = torch.randn(b, t, c, dtype=torch.float64, generator=torch.Generator().manual_seed(10 + i))
        ref = copy.deepcopy(m)  # the learner may change m (m.float(), an in-place edit): compare against a copy
        with torch.no_grad():
            want = ref(x, x, x, need_weights=False)[0]
            result = _call_without_the_module(fn, m, x.clone(), what=f"assemble_mha(m, x), x {tuple(x.shape)}, h={h}")
            if isinstance(result, (tuple, list)) and len(result) == 2 and torch.is_tensor(result[0]):
                raise Wrong(
                    "nn.MultiheadAttention처럼 (출력, 가중치) 두 개를 돌려줬습니다. 이 함수는 출력 텐서 "
                    "(B, T, C) 하나만 돌려주면 됩니다 (m(x, x, x)[0]에 해당하는 것)."
                )
            got = answer_tensor(result, "assemble_mha")
            if got.shape != want.shape:
                raise Wrong(
                    f"결과의 모양이 {tuple(got.shape)}입니다. 입력과 같은 (B, T, C) = {tuple(want.shape)} 모양이어야 합니다."
                )
            if _close(got, want):
                continue
            if torch.allclose(got, want, atol=1e-4, rtol=1e-4):  # float32 rounding, not a mistake in the algorithm
                raise Wrong(
                    f"(h = {h}) 값이 float32 반올림 수준(최대 차이 {(got - want).abs().max().item():.1g})만큼 다릅니다: "
                    "중간에 float32로 바꿨습니다(m.float(), x.float() 등). 검사기는 float64 모듈과 입력을 넘기니 "
                    "dtype을 바꾸지 말고 그대로 계산하세요."
                )
            for mistake, message in _MISTAKES.items():
                if _close(got, _variant(ref, x, mistake)):
                    raise Wrong(f"(h = {h}) {message}")
            for pair in itertools.combinations(_MISTAKES, 2):
                if _close(got, _variant(ref, x, pair)):
                    first, second = (_MISTAKES[p] for p in pair)
                    raise Wrong(f"(h = {h}) 흔한 실수 두 가지가 겹쳤습니다. (1) {first} (2) {second}")
            for order in itertools.permutations(range(3)):
                if order != (0, 1, 2) and _close(got, _variant(ref, x, order=order)):
                    names = "".join("QKV"[j] for j in order)
                    raise Wrong(
                        f"in_proj_weight를 세 조각으로 나눈 순서가 틀렸습니다: 위에서부터 W^Q, W^K, W^V 순서로 "
                        f"쌓여 있는데 {names} 순서로 썼습니다."
                    )
            if i > 0 and not _close(got, want):
                raise Wrong(
                    f"h = {_CASES[0][3]}에서는 맞았지만 h = {h}에서 틀립니다. 헤드 수를 숫자로 적지 말고 "
                    "m.num_heads에서 읽으세요."
                )
            worst = (got - want).abs().max().item()
            raise Wrong(
                f"결과가 m(x, x, x)[0]과 다릅니다 (최대 차이 {worst:.3g}). 흔한 실수(√C나 스케일 누락, 인과 마스크, "
                "나누기·합치기의 전치 누락, 헤드 순서, Q·K·V 순서, 편향, 가중치 전치 누락) 하나나 둘만으로는 설명되지 않습니다. 단계마다 "
                "모양과 값을 찍어 보세요: 소프트맥스의 축(dim=-1: 키 방향)도 확인하세요."
            )
    return (
        "in_proj_weight를 Q·K·V로 자르고, (B, T, h, d) → (B, h, T, d)로 나누고, √d로 나누고, "
        "transpose 뒤 합쳐 out_proj: nn.MultiheadAttention과 같습니다."
    )


def _gqa_params(c: int, h: int, g: int, bias: bool) -> int:
    kv = g * (c // h)
    return 2 * c * c + 2 * c * kv + ((2 * c + 2 * kv) if bias else 0)


@exercise("07-2")
def _gqa_param_count(fn):
    # (64, 16, 2) and (64, 4, 2): h changes at fixed g, and with d = C/h the count changes too
    cases = [
        (64, 8, 8, True),
        (64, 8, 2, True),
        (64, 16, 2, False),
        (64, 4, 2, False),
        (64, 8, 1, False),
        (48, 6, 3, True),
        (4096, 32, 8, False),
    ]
    for c, h, g, bias in cases:
        call = f"gqa_param_count(d_model={c}, num_heads={h}, kv_heads={g}, bias={bias})"
        got = answer_tensor(call_learner(fn, c, h, g, bias, what=call), "gqa_param_count")
        if got.numel() != 1:
            raise Wrong(f"{call}: 숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다.")
        got = got.item()
        want = _gqa_params(c, h, g, bias)
        if got == want:
            continue
        d = c // h
        hints = {
            4 * c * c
            + (4 * c if bias else 0): "키·밸류 투영을 C×C로 셌습니다. 키·밸류 헤드가 g개면 W^K, W^V는 C×(g·d)입니다",
            2 * c * c
            + 2 * c * g * c
            + (
                (2 * c + 2 * g * c) if bias else 0
            ): "키·밸류 투영을 C×(g·C)로 셌습니다. 헤드 하나의 크기는 C가 아니라 d = C/h입니다",
            _gqa_params(c, h, g, not bias): "편향을 " + ("빠뜨렸습니다" if bias else "bias=False인데 더했습니다"),
            c * c + 3 * c * g * d + ((c + 3 * g * d) if bias else 0): "출력 투영 W^O를 C×(g·d)로 셌습니다. "
            "W^O는 쿼리 헤드 h개의 출력(C개)을 받으므로 C×C입니다",
            4 * c * g * d
            + (4 * g * d if bias else 0): "W^Q도 C×(g·d)로 셌습니다. 쿼리 헤드는 h개 그대로라 W^Q는 C×C입니다",
        }
        if bias:  # Qwen-style: biases on the Q, K, V projections only
            hints.setdefault(
                _gqa_params(c, h, g, True) - c,
                "출력 투영 W^O의 편향을 빠뜨렸습니다. bias=True이면 네 투영 모두 편향이 있습니다",
            )
        for fixed in (64, 128):  # a head size copied from 7절 (d = 128) or from the paper (d = 64)
            hints.setdefault(
                2 * c * c + 2 * c * g * fixed + ((2 * c + 2 * g * fixed) if bias else 0),
                f"헤드 크기를 {particle(fixed, '으로/로')} 고정했습니다. 이 문제에서 헤드 크기는 d = C/h라서 h가 바뀌면 d도 바뀝니다",
            )
        hint = hints.get(int(got)) if float(got).is_integer() else None
        shown = f"{int(got):,}" if float(got).is_integer() else f"{got:g}"  # 141,440 like the success message
        raise Wrong(f"{call} = {shown}, 정답은 {want:,}입니다." + (f" {hint}." if hint else ""))
    by_h = {h: _gqa_params(64, h, 2, False) for h in (16, 8, 4)}
    return (
        "2C² + 2C·g·d (+ 편향): 파라미터를 정하는 것은 키·밸류의 총 폭 g·d입니다. C를 고정하고 h를 바꾸면 "
        "d = C/h가 바뀌어 수가 바뀌고 (C = 64, g = 2, 편향 없이 h = "
        + ", ".join(str(h) for h in by_h)
        + "에서 각각 "
        + ", ".join(f"{n:,}" for n in by_h.values())
        + "개; 키·밸류 쪽 폭은 C의 g/h배), 실제 모델처럼 d를 고정하면 g만 중요합니다. "
        "g = h면 MHA의 4C² + 4C (이때는 h와 무관), g = 1이면 MQA입니다."
    )
