"""Checkers for notebook 11 (실제 모델의 어텐션): recompute one MiniLM layer from its weights."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from helpers.lessons.pretrained_attention import encode, load_minilm

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle

SENTENCES = ("Time flies like an arrow", "The quick brown fox jumps over the lazy dog.")


def reference_layer(
    H,
    block,
    num_heads=12,
    *,
    bias=("q", "k", "v", "o"),
    scale="d_head",
    split="right",
    transpose=True,
    skip_t=(),
    ffn_bias=True,
    gelu="none",
    norm="post",
    softmax_dim=-1,
):
    """One BERT layer, with switches that reproduce the common mistakes the checker diagnoses.

    bias: which of the q, k, v, o projections keep + b; ffn_bias=False drops the feed-forward biases too.
    transpose=False drops .T in all of q, k, v, o; skip_t names the projections that drop it.
    split: "right", "wrong" (view(T, d_head, h) and its inverse), "wrong-merge" (wrong split, right merge),
    "literal" (view(T, d_head, h).transpose(0, 1): 32 heads of 12 columns). gelu="tanh": the tanh approximation,
    gelu="relu": ReLU instead of GELU.
    norm="pre": pre-LN (GPT-2 style) with this layer's two LayerNorms; softmax_dim=-2: softmax over the queries.
    """
    T, d = H.shape

    def act(u):
        return F.relu(u) if gelu == "relu" else F.gelu(u, approximate=gelu)

    ln1, ln2 = block.attention.output.LayerNorm, block.output.LayerNorm
    src = F.layer_norm(H, (d,), ln1.weight, ln1.bias, ln1.eps) if norm == "pre" else H
    d_head = d // num_heads
    untransposed = set("qkvo") if not transpose else set(skip_t)

    def linear(x, lin, name):
        y = x @ (lin.weight if name in untransposed else lin.weight.T)
        if name in "qkvo":
            return y + lin.bias if name in bias else y
        return y + lin.bias if ffn_bias else y

    def heads(lin, name):  # (T, d) -> (h, T, d_head)
        y = linear(src, lin, name)
        if split == "right":
            return y.view(T, num_heads, d_head).transpose(0, 1)
        if split == "literal":
            return y.view(T, d_head, num_heads).transpose(0, 1)  # (32, T, 12): the "heads" are 12 columns wide
        return y.view(T, d_head, num_heads).permute(2, 0, 1)  # the wrong split

    a = block.attention.self
    q, k, v = heads(a.query, "q"), heads(a.key, "k"), heads(a.value, "v")
    scores = q @ k.transpose(-1, -2)
    divisor = {"d_head": math.sqrt(d_head), "d_model": math.sqrt(d), "none": 1.0}[scale]
    w = torch.softmax(scores / divisor, dim=softmax_dim)
    ctx = w @ v  # (h, T, d_head)
    if split in ("right", "wrong-merge", "literal"):
        context = ctx.transpose(0, 1).reshape(T, d)
    else:  # merged back with the inverse of the wrong split
        context = ctx.permute(1, 2, 0).reshape(T, d)
    if norm == "pre":  # X = H + Attn(LN1(H)), H' = X + FFN(LN2(X))
        X = H + linear(context, block.attention.output.dense, "o")
        up = linear(F.layer_norm(X, (d,), ln2.weight, ln2.bias, ln2.eps), block.intermediate.dense, "up")
        return X + linear(act(up), block.output.dense, "down")
    X = F.layer_norm(H + linear(context, block.attention.output.dense, "o"), (d,), ln1.weight, ln1.bias, ln1.eps)
    up = linear(X, block.intermediate.dense, "up")
    ffn = linear(act(up), block.output.dense, "down")
    return F.layer_norm(X + ffn, (d,), ln2.weight, ln2.bias, ln2.eps)


MISTAKES = [
    (
        dict(bias=()),
        "편향을 빠뜨렸습니다 (쿼리·키·밸류·출력 투영 모두). nn.Linear는 x @ W.T + b입니다: + b를 더하세요.",
    ),
    (
        dict(bias=(), ffn_bias=False),
        "편향을 모든 선형 층에서 빠뜨렸습니다 (쿼리·키·밸류·출력 투영과 피드포워드의 두 층). "
        "nn.Linear는 x @ W.T + b입니다: 여섯 곳 모두 + b를 더하세요.",
    ),
    (
        dict(ffn_bias=False),
        "피드포워드 두 층(384 → 1536 → 384)의 편향을 빠뜨렸습니다. 이 층들도 nn.Linear라서 x @ W.T + b입니다.",
    ),
    (dict(bias=("o",)), "쿼리·키·밸류의 편향 b_Q, b_K, b_V를 빠뜨렸습니다. nn.Linear는 x @ W.T + b입니다."),
    (dict(bias=("k", "v", "o")), "쿼리의 편향 b_Q를 빠뜨렸습니다."),
    (dict(bias=("q", "k", "o")), "밸류의 편향 b_V를 빠뜨렸습니다."),
    (dict(bias=("q", "k", "v")), "출력 투영의 편향 b_O를 빠뜨렸습니다."),
    (
        dict(scale="none"),
        "점수를 √d_head = √32로 나누지 않았습니다. q @ k.T / math.sqrt(d_head)입니다 (d_model = 384가 아니라 헤드 크기 32).",
    ),
    (
        dict(scale="d_model"),
        "점수를 √384 (d_model)로 나눴습니다. 각 헤드의 내적은 32차원이므로 √d_head = √32로 나눕니다.",
    ),
    (
        dict(split="wrong"),
        "헤드를 view(T, d_head, h)로 나눴습니다. 384개 열은 헤드 0의 32개, 헤드 1의 32개, ... 순서이므로 "
        "view(T, h, d_head).transpose(0, 1)이어야 합니다. 원소 수가 같아 오류 없이 틀린 값이 나옵니다.",
    ),
    (
        dict(split="wrong-merge"),
        "헤드를 view(T, d_head, h)로 나눴습니다. 384개 열은 헤드 0의 32개, 헤드 1의 32개, ... "
        "순서이므로 view(T, h, d_head).transpose(0, 1)이어야 합니다.",
    ),
    (
        dict(split="literal"),
        "헤드를 view(T, d_head, h).transpose(0, 1)로 나눴습니다. 그러면 (32, T, 12): 열 32개짜리 헤드 12개가 아니라 "
        "열 12개짜리 '헤드' 32개가 생깁니다. 모양 오류 없이 돌아가지만 틀린 값입니다: view(T, h, d_head)로 나누세요.",
    ),
    (
        dict(transpose=False),
        "파라미터 행렬을 전치하지 않았습니다 (쿼리·키·밸류·출력 투영): H @ W가 아니라 H @ W.T입니다 "
        "(nn.Linear의 weight는 (출력, 입력) 모양). 384×384 정사각 행렬이라 모양 오류 없이 틀린 값이 나옵니다.",
    ),
    (
        dict(skip_t=("q", "k", "v")),
        "쿼리·키·밸류 투영에서 파라미터 행렬을 전치하지 않았습니다 (출력 투영은 맞습니다): H @ W.T입니다. "
        "384×384 정사각 행렬이라 모양 오류 없이 틀린 값이 나옵니다.",
    ),
    (
        dict(gelu="tanh"),
        'GELU를 tanh 근사(F.gelu(x, approximate="tanh"))로 계산했습니다. 이 모델(hidden_act = "gelu")은 '
        "정확한 GELU(erf)를 씁니다: F.gelu(x)의 기본값입니다. 차이는 작지만(약 1e-3) 반올림 수준보다 큽니다.",
    ),
    (
        dict(gelu="relu"),
        '피드포워드의 활성화 함수로 ReLU를 썼습니다. 이 모델(hidden_act = "gelu")은 GELU를 씁니다: F.gelu(x)입니다. '
        "음수 입력에서 ReLU는 0이지만 GELU는 작은 음수 값(최소 약 −0.17)을 내므로 출력이 달라집니다.",
    ),
    (
        dict(norm="pre"),
        "사전 정규화(pre-LN: X = H + Attn(LN₁(H)), H' = X + FFN(LN₂(X)))로 계산했습니다. BERT 계열인 이 모델은 "
        "사후 정규화(post-LN)입니다: 잔차를 더한 **뒤에** 층 정규화를 합니다. X = LN₁(H + Attn(H)), H' = LN₂(X + FFN(X)).",
    ),
    (
        dict(softmax_dim=-2),
        "소프트맥스를 쿼리 축(dim=-2)으로 했습니다. 점수 (h, T_q, T_k)의 각 행(쿼리 하나)이 키들에 대한 분포이므로 "
        "torch.softmax(scores, dim=-1)입니다.",
    ),
]

# Calling the layer, or one of its sublayers, computes the answer instead of the learner.
SHORTCUT = (
    "이 문제는 층을 파라미터 행렬(.weight, .bias)과 F.layer_norm, F.gelu, torch.softmax로 다시 계산하는 연습입니다. "
    "block(...), block.attention(...), block.intermediate(...), block.output(...)처럼 층이나 그 하위 층을 부르면 "
    "(.forward(...)로 직접 불러도) 모델이 대신 계산합니다."
)


def _sublayers(block):
    """The layer and its composite sublayers (not the nn.Linear / nn.LayerNorm leaves)."""
    return {
        "block": block,
        "block.attention": block.attention,
        "block.attention.self": block.attention.self,
        "block.attention.output": block.attention.output,
        "block.intermediate": block.intermediate,
        "block.output": block.output,
    }


def _call_watching_sublayers(fn, H, block, what):
    """Run the learner's function; Wrong if it ran the layer or one of its composite sublayers.

    The watch sits on each sublayer's class ``forward`` for the length of the call, so ``block(...)``,
    ``block.attention.self.forward(...)`` and ``type(block).forward(block, ...)`` are all seen (a forward
    hook sees only the first)."""
    called = []
    watched = {id(module): name for name, module in _sublayers(block).items()}
    originals = {}
    for module in _sublayers(block).values():
        cls = type(module)
        if cls in originals:
            continue
        originals[cls] = cls.__dict__.get("forward")

        def watching(self, *args, _forward=cls.forward, **kwargs):
            if id(self) in watched:
                called.append(watched[id(self)])
            return _forward(self, *args, **kwargs)

        cls.forward = watching
    try:
        result = call_learner(fn, H, block, what=what)
    finally:
        for cls, original in originals.items():
            if original is None:
                del cls.forward
            else:
                cls.forward = original
    if called:
        raise Wrong(f"{particle(called[0] + '(...)', '을/를')} 불렀습니다. {SHORTCUT}")
    return result


SHAPE_HINT = (
    "피드포워드에서 모양 오류가 났다면: nn.Linear의 weight는 (출력, 입력) 모양이라 x @ W.T입니다. "
    "384×384인 쿼리·키·밸류·출력 투영은 전치를 빠뜨려도 돌아가지만, (1536, 384)인 피드포워드 행렬에서 멈춥니다."
)


@exercise("11-1")
def _recompute_layer(fn):
    forbid_calls(fn, {"block"}, SHORTCUT)
    fused = {
        "scaled_dot_product_attention",
        "multi_head_attention_forward",
        # the same kernels reached as ATen operators: torch.ops.aten._scaled_dot_product_…(q, k, v)
        "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "_fused_sdp_choice",
    }
    why_fused = (
        "이 문제는 어텐션 가중치를 q @ k.T / √d_head와 torch.softmax로 직접 계산하는 연습입니다. "
        "scaled_dot_product_attention은 (torch의 것이든 이 과정의 것이든) 소프트맥스와 가중합을 대신 계산합니다."
    )
    forbid_calls(fn, fused, why_fused)
    _, model = load_minilm()
    worst = 0.0
    for sentence in SENTENCES:
        _, _, hidden = encode(sentence)
        for layer in range(6):
            block = model.encoder.layer[layer]
            what = f"my_layer(hidden[{layer}], model.encoder.layer[{layer}]) ('{sentence}')"
            with torch.no_grad():
                try:
                    result = _call_watching_sublayers(fn, hidden[layer].clone(), block, what)
                except Wrong as err:
                    if "cannot be multiplied" in str(err) or "size mismatch" in str(err):
                        raise Wrong(f"{err} {SHAPE_HINT}") from None
                    raise
                got = answer_tensor(result, what)
            want = hidden[layer + 1].double()
            if got.shape != want.shape:
                raise Wrong(
                    f"{what}의 모양이 {tuple(got.shape)}입니다. 입력과 같은 (T, 384) = {tuple(want.shape)}이어야 합니다."
                )
            gap = (got - want).abs().max().item()
            if gap < 1e-4:
                worst = max(worst, gap)
                continue
            with torch.no_grad():
                for switches, message in MISTAKES:
                    variant = reference_layer(hidden[layer], block, **switches).double()
                    if (got - variant).abs().max() < 1e-4:
                        raise Wrong(f"층 {layer}: {message}")
                if (got - hidden[layer].double()).abs().max() < 1e-4:
                    raise Wrong(f"{particle(what, '이/가')} 입력 H를 그대로 돌려줍니다. 층의 출력을 계산해 돌려주세요.")
            raise Wrong(
                f"층 {layer}: 출력이 {particle(f'hidden[{layer + 1}]', '과/와')} 최대 {gap:.3g} 다릅니다. 순서를 확인하세요: 투영 → 헤드 나누기 → "
                "/√32 → 소프트맥스 → 가중합 → 헤드 합치기 → 출력 투영 + H → LayerNorm → 피드포워드(GELU) + X → LayerNorm."
            )
    return "6개 층, 두 문장에서 hidden[ℓ+1]과 같습니다 (최대 차이 < 1e-4: float32 반올림 수준)."
