"""Checkers for notebook 11 (실제 모델의 어텐션): recompute one MiniLM layer from its weights."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from helpers.lessons.pretrained_attention import encode, load_minilm

from . import Wrong, answer_tensor, call_learner, exercise

SENTENCES = ("Time flies like an arrow", "The quick brown fox jumps over the lazy dog.")


def reference_layer(H, block, num_heads=12, *, bias=("q", "k", "v", "o"), scale="d_head",
                    split="right", transpose=True):
    """One BERT layer, with switches that reproduce the common mistakes the checker diagnoses."""
    T, d = H.shape
    d_head = d // num_heads

    def linear(x, lin, name):
        y = x @ (lin.weight.T if transpose or name not in "qkvo" else lin.weight)
        return y + lin.bias if name not in "qkvo" or name in bias else y

    def heads(lin, name):  # (T, d) -> (h, T, d_head)
        y = linear(H, lin, name)
        if split == "right":
            return y.view(T, num_heads, d_head).transpose(0, 1)
        return y.view(T, d_head, num_heads).permute(2, 0, 1)  # the wrong split

    a = block.attention.self
    q, k, v = heads(a.query, "q"), heads(a.key, "k"), heads(a.value, "v")
    scores = q @ k.transpose(-1, -2)
    divisor = {"d_head": math.sqrt(d_head), "d_model": math.sqrt(d), "none": 1.0}[scale]
    w = torch.softmax(scores / divisor, dim=-1)
    ctx = w @ v  # (h, T, d_head)
    if split in ("right", "wrong-merge"):
        context = ctx.transpose(0, 1).reshape(T, d)
    else:  # merged back with the inverse of the wrong split
        context = ctx.permute(1, 2, 0).reshape(T, d)
    ln1, ln2 = block.attention.output.LayerNorm, block.output.LayerNorm
    X = F.layer_norm(H + linear(context, block.attention.output.dense, "o"), (d,), ln1.weight, ln1.bias, ln1.eps)
    ffn = linear(F.gelu(linear(X, block.intermediate.dense, "up")), block.output.dense, "down")
    return F.layer_norm(X + ffn, (d,), ln2.weight, ln2.bias, ln2.eps)


MISTAKES = [
    (dict(bias=()), "편향을 빠뜨렸습니다 (쿼리·키·밸류·출력 투영 모두). nn.Linear는 x @ W.T + b입니다: + b를 더하세요."),
    (dict(bias=("o",)), "쿼리·키·밸류의 편향 b_Q, b_K, b_V를 빠뜨렸습니다. nn.Linear는 x @ W.T + b입니다."),
    (dict(bias=("k", "v", "o")), "쿼리의 편향 b_Q를 빠뜨렸습니다."),
    (dict(bias=("q", "k", "o")), "밸류의 편향 b_V를 빠뜨렸습니다."),
    (dict(bias=("q", "k", "v")), "출력 투영의 편향 b_O를 빠뜨렸습니다."),
    (dict(scale="none"), "점수를 √d_head = √32로 나누지 않았습니다. q @ k.T / math.sqrt(d_head)입니다 (d_model = 384가 아니라 헤드 크기 32)."),
    (dict(scale="d_model"), "점수를 √384 (d_model)로 나눴습니다. 각 헤드의 내적은 32차원이므로 √d_head = √32로 나눕니다."),
    (dict(split="wrong"), "헤드를 view(T, d_head, h)로 나눴습니다. 384개 열은 헤드 0의 32개, 헤드 1의 32개, ... 순서이므로 "
                                "view(T, h, d_head).transpose(0, 1)이어야 합니다. 원소 수가 같아 오류 없이 틀린 값이 나옵니다."),
    (dict(split="wrong-merge"), "헤드를 view(T, d_head, h)로 나눴습니다. 384개 열은 헤드 0의 32개, 헤드 1의 32개, ... "
                                             "순서이므로 view(T, h, d_head).transpose(0, 1)이어야 합니다."),
    (dict(transpose=False), "가중치를 전치하지 않았습니다: H @ W가 아니라 H @ W.T입니다 (nn.Linear의 weight는 (출력, 입력) 모양). "
                            "384×384 정사각 행렬이라 모양 오류 없이 틀린 값이 나옵니다."),
]


@exercise("11-1")
def _recompute_layer(fn):
    _, model = load_minilm()
    worst = 0.0
    for sentence in SENTENCES:
        _, _, hidden = encode(sentence)
        for layer in range(6):
            block = model.encoder.layer[layer]
            what = f"my_layer(hidden[{layer}], model.encoder.layer[{layer}]) ('{sentence}')"
            with torch.no_grad():
                got = answer_tensor(call_learner(fn, hidden[layer].clone(), block, what=what), what)
            want = hidden[layer + 1].double()
            if got.shape != want.shape:
                raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. 입력과 같은 (T, 384) = {tuple(want.shape)}이어야 합니다.")
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
                    raise Wrong(f"{what}가 입력 H를 그대로 돌려줍니다. 층의 출력을 계산해 돌려주세요.")
            raise Wrong(f"층 {layer}: 출력이 hidden[{layer + 1}]과 최대 {gap:.3g} 다릅니다. 순서를 확인하세요: 투영 → 헤드 나누기 → "
                        "/√32 → 소프트맥스 → 가중합 → 헤드 합치기 → 출력 투영 + H → LayerNorm → 피드포워드(GELU) + X → LayerNorm.")
    return "6개 층, 두 문장에서 hidden[ℓ+1]과 같습니다 (최대 차이 < 1e-4: float32 반올림 수준)."
