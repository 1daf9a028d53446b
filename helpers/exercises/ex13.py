"""Checkers for notebook 13 (비전에서의 어텐션)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from helpers.lessons.attention_in_vision import patchify

from . import Wrong, answer_tensor, call_learner, exercise, forbid_calls, particle


def _example_features() -> torch.Tensor:
    gen = torch.Generator().manual_seed(13)
    return torch.randn(2, 6, 3, 3, generator=gen, dtype=torch.float64)  # (B, C, H, W)


def _example_weights():
    gen = torch.Generator().manual_seed(31)
    w1 = torch.randn(3, 6, generator=gen, dtype=torch.float64)  # (C/r, C)
    w2 = torch.randn(6, 3, generator=gen, dtype=torch.float64)  # (C, C/r)
    return w1, w2


@exercise("13-1")
def _check_se_gates(fn):
    x = _example_features() + 0.5  # (2, 6, 3, 3); ReLU zeroes 2 of the 6 hidden values, so a missing ReLU shows
    w1, w2 = _example_weights()
    hint = (
        "w1은 nn.Linear.weight 모양 (C/r, C) = (3, 6)이라 z @ w1.T, w2는 (C, C/r) = (6, 3)이라 @ w2.T입니다 "
        "(z는 (B, C) = (2, 6))."
    )
    got = answer_tensor(call_learner(fn, x.clone(), w1, w2, what="se_gates(x, w1, w2)", hint=hint), "se_gates")
    z = x.mean(dim=(2, 3))  # (B, C)
    want = torch.sigmoid(F.relu(z @ w1.T) @ w2.T)  # (B, C)
    if got.shape == (2, 6, 1, 1):
        got = got.reshape(2, 6)
    if got.shape != want.shape:
        raise Wrong(
            f"모양이 {tuple(got.shape)}입니다. x가 (B, C, H, W) = (2, 6, 3, 3)이면 게이트는 "
            f"채널마다 하나, (B, C) = (2, 6)이어야 합니다."
        )
    if torch.allclose(got, want, atol=1e-6):
        return (
            f"게이트 합: {[round(v, 2) for v in got.sum(-1).tolist()]} (1이 아님). 시그모이드는 채널마다 "
            "독립인 0~1 사이의 값이라 여러 채널이 함께 켜질 수 있습니다."
        )
    if torch.allclose(got.sum(-1), torch.ones(2, dtype=torch.float64), atol=1e-6):
        raise Wrong(
            "게이트의 합이 (배치마다) 정확히 1입니다: 소프트맥스를 쓴 것 같습니다. SE는 채널마다 독립인 "
            "시그모이드를 씁니다. 소프트맥스는 채널끼리 경쟁시켜 여러 채널이 동시에 1에 가까울 수 없게 만듭니다."
        )
    if torch.allclose(got.sum(0), torch.ones(6, dtype=torch.float64), atol=1e-6):
        raise Wrong(
            "채널마다 배치 방향(dim=0)의 합이 1입니다: 배치 축으로 소프트맥스를 건 것 같습니다. SE의 게이트는 "
            "이미지마다, 채널마다 독립인 시그모이드입니다. 다른 이미지의 값에 영향을 받으면 안 됩니다."
        )
    if torch.allclose(got, torch.sigmoid(z @ w1.T @ w2.T), atol=1e-6):
        raise Wrong(
            "두 선형층 사이의 ReLU가 빠졌습니다: 게이트가 sigmoid(W2·W1·z)입니다. 기대값은 sigmoid(W2·ReLU(W1·z))입니다."
        )
    if torch.allclose(got, torch.sigmoid(F.relu(x.amax(dim=(2, 3)) @ w1.T) @ w2.T), atol=1e-6):
        raise Wrong("채널마다 최댓값으로 압축했습니다. SE의 squeeze는 전역 평균 풀링, x.mean(dim=(2, 3))입니다.")
    if torch.allclose(got, torch.sigmoid(F.relu(x.sum(dim=(2, 3)) @ w1.T) @ w2.T), atol=1e-6):
        raise Wrong(
            "채널마다 합으로 압축했습니다. SE의 squeeze는 합이 아니라 평균(전역 평균 풀링), "
            "x.mean(dim=(2, 3))입니다. 합을 쓰면 이미지 크기 H·W에 따라 게이트가 달라집니다."
        )
    if torch.allclose(got, torch.sigmoid(F.relu(z @ w1.T @ w2.T)), atol=1e-6):
        raise Wrong(
            "ReLU를 W2 뒤에 걸었습니다: 게이트가 sigmoid(ReLU(W2·W1·z))라 0.5 아래로 내려가지 못합니다. "
            "ReLU는 두 선형층 사이, sigmoid(W2·ReLU(W1·z))입니다."
        )
    if torch.allclose(got, F.relu(z @ w1.T) @ w2.T, atol=1e-6):
        raise Wrong(
            "마지막 시그모이드가 빠졌습니다: 게이트가 0~1 사이가 아닙니다 "
            f"(최소 {got.min().item():.2f}, 최대 {got.max().item():.2f})."
        )
    if got.min() <= 0 or got.max() >= 1:
        raise Wrong(
            f"게이트가 (0, 1) 밖의 값을 가집니다 (최소 {got.min().item():.2f}, 최대 {got.max().item():.2f}). "
            "마지막 활성화는 tanh나 ReLU가 아니라 시그모이드입니다."
        )
    bad = (got - want).abs().argmax().item()
    b, c = divmod(bad, 6)
    raise Wrong(
        f"배치 {b}, 채널 {c}의 게이트가 {got[b, c].item():.4f}인데 기대값은 {want[b, c].item():.4f}입니다. "
        "순서: 평균 풀링 → W1 → ReLU → W2 → 시그모이드."
    )


@exercise("13-2")
def _check_patchify(fn):
    forbid_calls(
        fn,
        {"patchify"},
        "이 문제는 패치 나누기를 reshape와 permute(또는 unfold)로 직접 짜는 연습입니다: 위의 `patchify`는 쓰지 마세요.",
    )
    img = torch.arange(3 * 4 * 6, dtype=torch.float64).reshape(3, 4, 6)  # (C, H, W), every value unique
    got = answer_tensor(call_learner(fn, img.clone(), 2, what="my_patchify(img, 2)"), "my_patchify")
    want = patchify(img, 2)  # (6, 12)
    if got.shape != want.shape:
        hint = ""
        if got.numel() == want.numel():
            hint = " 원소 수는 맞으니 마지막에 (N, C·P·P)로 모으는 reshape를 확인하세요."
        raise Wrong(
            f"모양이 {tuple(got.shape)}입니다. (C, H, W) = (3, 4, 6), P = 2이면 패치 N = (4/2)·(6/2) = 6개, "
            f"토큰 길이 C·P·P = 12, 즉 (6, 12)여야 합니다.{hint}"
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
    cases = [(224, 16), (224, 8), (224, 1), (32, 4), (384, 16)]
    for size, p in cases:
        call = f"attention_matrix_bytes({size}, {p})"
        got = answer_tensor(call_learner(fn, size, p, what=call), "attention_matrix_bytes")
        if got.numel() != 1:
            raise Wrong(
                f"{particle(call, '은/는')} 숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다."
            )
        got = got.item()
        n = (size // p) ** 2
        want = n * n * 4
        if got == want:
            continue
        hints = {
            n * 4: "행렬은 N×N인데 N개만 셌습니다",
            n * n: "원소 수 N²에서 멈췄습니다. float32 하나는 4바이트입니다",
            n * n * 8: "float64(8바이트)로 셌습니다. float32는 4바이트입니다",
            (n + 1) ** 2 * 4: "[CLS] 토큰까지 셌습니다. 이 문제는 패치 토큰 N개만 셉니다",
            (size * size) ** 2 * 4: "픽셀마다 토큰 하나로 셌습니다. 토큰은 P×P 패치 하나입니다",
        }
        hint = hints.get(got, "")
        reason = f" {hint}." if hint else ""
        raise Wrong(f"{call} = {got:g}, 기대값은 N = ({size}/{p})² = {n}, N²·4 = {want:,}바이트입니다.{reason}")
    return "N = (S/P)², 메모리 = N²·4바이트: P를 절반으로 줄이면 N은 4배, 행렬은 16배가 됩니다."
