"""Checkers for notebook 13 (비전에서의 어텐션)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from helpers.lessons.attention_in_vision import patchify

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle


def _example_features(seed: int = 11) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(2, 6, 3, 3, generator=gen, dtype=torch.float64)  # (B, C, H, W)


def _example_weights():
    gen = torch.Generator().manual_seed(31)
    w1 = torch.randn(3, 6, generator=gen, dtype=torch.float64)  # (C/r, C)
    w2 = torch.randn(6, 3, generator=gen, dtype=torch.float64)  # (C, C/r)
    return w1, w2


def _mlp(z, w1, w2):
    return F.relu(z @ w1.T) @ w2.T  # (B, C): the shared MLP, no biases


@exercise("13-1")
def _check_cbam_channel_gates(fn):
    # (2, 6, 3, 3): some hidden units of W1·avg and W1·max differ in sign, so MLP(avg + max) and a missing ReLU show
    x = _example_features()
    w1, w2 = _example_weights()
    hint = (
        "w1은 nn.Linear.weight 모양 (C/r, C) = (3, 6)이라 z @ w1.T, w2는 (C, C/r) = (6, 3)이라 @ w2.T입니다 "
        "(avg, max는 (B, C) = (2, 6))."
    )
    got = answer_tensor(
        call_learner(fn, x.clone(), w1, w2, what="cbam_channel_gates(x, w1, w2)", hint=hint), "cbam_channel_gates"
    )
    avg, mx = x.mean(dim=(2, 3)), x.amax(dim=(2, 3))  # (B, C) each
    want = torch.sigmoid(_mlp(avg, w1, w2) + _mlp(mx, w1, w2))  # (B, C)
    if got.shape == (2, 6, 1, 1):
        got = got.reshape(2, 6)
    if got.shape != want.shape:
        raise Wrong(
            f"모양이 {tuple(got.shape)}입니다. x가 (B, C, H, W) = (2, 6, 3, 3)이면 게이트는 "
            f"채널마다 하나, (B, C) = (2, 6)이어야 합니다."
        )
    if torch.allclose(got, want, atol=1e-6):
        se = torch.sigmoid(_mlp(avg, w1, w2))
        return (
            f"CBAM 채널 게이트 σ(MLP(avg) + MLP(max)): SE 게이트(평균만)와의 최대 차이 "
            f"{(want - se).abs().max().item():.2f}. 두 풀링이 같은 MLP를 지나 더해진 뒤 시그모이드 한 번입니다."
        )
    mistakes = [
        (torch.sigmoid(_mlp(avg, w1, w2)), "최댓값 풀링 가지가 빠졌습니다: SE 게이트 σ(MLP(avg))입니다"),
        (torch.sigmoid(_mlp(mx, w1, w2)), "평균 풀링 가지가 빠졌습니다: σ(MLP(max))만 구했습니다"),
        (
            torch.sigmoid(_mlp(avg, w1, w2)) + torch.sigmoid(_mlp(mx, w1, w2)),
            "시그모이드를 가지마다 따로 걸고 더했습니다(그러면 0~2). 두 MLP 출력을 먼저 더하고 시그모이드는 한 번입니다",
        ),
        (
            torch.sigmoid(_mlp(avg, w1, w2)) * torch.sigmoid(_mlp(mx, w1, w2)),
            "두 가지의 시그모이드를 곱했습니다. CBAM은 두 MLP 출력을 더한 뒤 시그모이드를 한 번 겁니다",
        ),
        (
            torch.sigmoid(_mlp(avg + mx, w1, w2)),
            "두 풀링 결과를 먼저 더하고 MLP를 한 번 지났습니다. ReLU 때문에 MLP(avg + max) ≠ MLP(avg) + MLP(max)입니다: "
            "두 풀링을 따로 MLP에 넣고 출력을 더하세요",
        ),
        (
            torch.sigmoid((_mlp(avg, w1, w2) + _mlp(mx, w1, w2)) / 2),
            "두 MLP 출력을 평균했습니다(2로 나눔). CBAM은 더하기만 합니다",
        ),
        (
            torch.sigmoid((avg @ w1.T + mx @ w1.T) @ w2.T),
            "ReLU가 빠졌습니다: MLP(z) = W2·ReLU(W1·z)입니다",
        ),
        (
            torch.sigmoid(_mlp(x.sum(dim=(2, 3)), w1, w2) + _mlp(mx, w1, w2)),
            "평균 대신 합으로 압축했습니다. 평균 풀링은 x.mean(dim=(2, 3))입니다",
        ),
        (_mlp(avg, w1, w2) + _mlp(mx, w1, w2), "마지막 시그모이드가 빠졌습니다: 게이트가 0~1 사이가 아닙니다"),
    ]
    for value, why in mistakes:
        if value.shape == got.shape and torch.allclose(got, value, atol=1e-6):
            raise Wrong(f"{why}.")
    if torch.allclose(got.sum(-1), torch.ones(2, dtype=torch.float64), atol=1e-6):
        raise Wrong(
            "게이트의 합이 (배치마다) 정확히 1입니다: 소프트맥스를 쓴 것 같습니다. 채널 게이트는 채널마다 독립인 "
            "시그모이드입니다. 소프트맥스는 채널끼리 경쟁시켜 여러 채널이 동시에 1에 가까울 수 없게 만듭니다."
        )
    if got.min() <= 0 or got.max() >= 1:
        raise Wrong(
            f"게이트가 (0, 1) 밖의 값을 가집니다 (최소 {got.min().item():.2f}, 최대 {got.max().item():.2f}). "
            "마지막 활성화는 시그모이드 한 번입니다."
        )
    bad = (got - want).abs().argmax().item()
    b, c = divmod(bad, 6)
    raise Wrong(
        f"배치 {b}, 채널 {c}의 게이트가 {got[b, c].item():.4f}인데 기대값은 {want[b, c].item():.4f}입니다. "
        "순서: 평균 풀링과 최댓값 풀링 → 각각 같은 MLP(W1 → ReLU → W2) → 더하기 → 시그모이드."
    )


@exercise("13-2")
def _check_patchify(fn):
    why = (
        "이 문제는 패치 나누기를 reshape와 permute(또는 unfold)로 직접 짜는 연습입니다: 위의 `patchify`는 쓰지 마세요."
    )
    forbid_calls(fn, {"patchify"}, why)
    img = torch.arange(3 * 4 * 6, dtype=torch.float64).reshape(3, 4, 6)  # (C, H, W), every value unique
    got = answer_tensor(call_learner(fn, img.clone(), 2, what="my_patchify(img, 2)"), "my_patchify")
    want = patchify(img, 2)  # (6, 12)
    if got.shape != want.shape:
        hint = ""
        if got.numel() == want.numel():
            hint = " 원소 수는 맞으니 마지막에 (N, C·P·P)로 모으는 reshape를 확인하세요."
        raise Wrong(
            f"모양이 {tuple(got.shape)}입니다. (C, H, W) = (3, 4, 6), P = 2이면 패치 N = (4/2)·(6/2) = 6개, "
            f"토큰 차원 C·P·P = 12, 즉 (6, 12)여야 합니다.{hint}"
        )
    if torch.equal(got, want):
        return "(C, H, W) → (N, C·P·P): 패치는 왼쪽 위부터 행 순서, 각 패치는 (채널, 행, 열) 순서로 펼쳤습니다."
    lucid = img.reshape(3, 2, 2, 3, 2).permute(1, 3, 2, 4, 0).reshape(6, 12)  # (p1 p2 c) order
    if torch.equal(got, lucid):
        raise Wrong(
            "패치는 맞게 잘랐지만 한 패치 안의 순서가 (행, 열, 채널)입니다. 이 문제는 (채널, 행, 열) 순서, "
            "즉 패치 블록 (C, P, P)를 그대로 펼친 것을 요구합니다 (Conv2d 가중치와 같은 순서)."
        )
    if torch.equal(got, img.reshape(6, 12)):
        raise Wrong(
            "이미지를 그대로 reshape 했습니다. 그러면 한 '토큰'에 이미지의 한 줄 반이 들어갑니다. "
            "(C, H/P, P, W/P, P)로 나눈 뒤 축을 (H/P, W/P, C, P, P) 순서로 옮기고 펼치세요."
        )
    col_major = img.reshape(3, 2, 2, 3, 2).permute(3, 1, 0, 2, 4).reshape(6, 12)
    if torch.equal(got, col_major):
        raise Wrong(
            "패치 순서가 열 우선입니다 (위에서 아래로 먼저). ViT처럼 왼쪽 위에서 오른쪽으로, 한 줄씩 내려가세요: "
            "패치 1은 패치 0의 오른쪽 이웃이어야 합니다."
        )
    inner_swap = img.reshape(3, 2, 2, 3, 2).permute(1, 3, 0, 4, 2).reshape(6, 12)  # (c, col, row) in a patch
    if torch.equal(got, inner_swap):
        raise Wrong(
            "패치는 맞게 잘랐지만 한 패치 안에서 행과 열이 바뀌었습니다: (채널, 열, 행) 순서입니다. "
            "축을 (H/P, W/P, C, P_행, P_열) 순서로 옮기세요: permute(1, 3, 0, 2, 4)."
        )
    row = int((got != want).any(dim=1).nonzero()[0])
    raise Wrong(
        f"{particle(f'패치 {row}', '이/가')} 다릅니다: {got[row, :4].tolist()}…, 기대값 {want[row, :4].tolist()}…. "
        f"{particle(f'패치 {row}', '은/는')} 이미지의 행 {2 * (row // 3)}–{2 * (row // 3) + 1}, 열 {2 * (row % 3)}–{2 * (row % 3) + 1}입니다."
    )


@exercise("13-3")
def _check_attention_bytes(fn):
    why = "6절의 vit_cost는 헤드 하나, [CLS] 제외의 행렬만 셉니다. 이 문제는 헤드 h개와 [CLS]를 넣어 식을 직접 세우는 연습입니다."
    forbid_calls(fn, {"vit_cost"}, why)
    cases = [(224, 16, 12), (224, 8, 12), (224, 1, 1), (32, 4, 3), (384, 16, 6)]
    for size, p, heads in cases:
        call = f"attention_weight_bytes({size}, {p}, {heads})"
        got = answer_tensor(call_learner(fn, size, p, heads, what=call), "attention_weight_bytes")
        if got.numel() != 1:
            raise Wrong(
                f"{particle(call, '은/는')} 숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다."
            )
        got = got.item()
        n = (size // p) ** 2
        want = heads * (n + 1) ** 2 * 4
        if got == want:
            continue
        if abs(got - want) <= 1e-6 * want:  # the right formula in float32: 10,070,925,316 rounds to 10,070,925,312
            continue
        hints = {
            heads * n * n * 4: "[CLS] 토큰이 빠졌습니다. 토큰은 패치 N개와 [CLS] 하나, 모두 N + 1개입니다",
            (n + 1) ** 2 * 4: "헤드가 하나뿐인 것처럼 셌습니다. 헤드마다 행렬이 하나씩 있습니다",
            heads * (n + 1) * 4: "행렬은 (N + 1)×(N + 1)인데 N + 1개만 셌습니다",
            heads * (n + 1) ** 2: "원소 수에서 멈췄습니다. float32 하나는 4바이트입니다",
            heads * (n + 1) ** 2 * 8: "float64(8바이트)로 셌습니다. float32는 4바이트입니다",
            heads * (n * n + 1) * 4: "[CLS]를 원소 하나로 더했습니다. [CLS]는 행 하나와 열 하나를 더합니다: (N + 1)²",
            heads * (size * size + 1) ** 2 * 4: "픽셀마다 토큰 하나로 셌습니다. 토큰은 P×P 패치 하나입니다",
            heads
            * (n + 1) ** 2
            * 32: "비트로 셌습니다(float32 하나 = 32비트). 바이트 수를 돌려주세요: 하나에 4바이트입니다",
        }
        hint = hints.get(got, "")
        if not hint and want > 0 and any(abs(got * unit / want - 1) < 1e-9 for unit in (1e3, 1e6, 2**10, 2**20)):
            hint = "바이트를 킬로바이트나 메가바이트로 바꿨습니다. 단위를 바꾸지 말고 바이트 수 그대로 돌려주세요"
        reason = f" {hint}." if hint else ""
        raise Wrong(f"{call} = {got:g}, 기대값은 N = ({size}/{p})² = {n}, h·(N + 1)²·4 = {want:,}바이트입니다.{reason}")
    ratio = ((224 // 8) ** 2 + 1) ** 2 / ((224 // 16) ** 2 + 1) ** 2
    return (
        f"h·(N + 1)²·4바이트. 224×224에서 P = 16 → 8이면 {ratio:.2f}배: 패치 행렬만 보면 16배이지만 "
        "[CLS]의 행과 열이 있어 조금 못 미칩니다. 헤드 수는 비율을 바꾸지 않습니다."
    )
