"""Checkers for notebook 08 (O(N²) 비용과 FlashAttention)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch
import torch.nn.functional as F

from helpers.lessons.complexity_flash import (
    GIB,
    linear_attention,
    naive_attention,
    peak_memory_bytes,
    quiet_stderr,
)

from . import Wrong, call_learner, exercise, forbid_calls


def _number(x, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise Wrong(f"{what}: 숫자 하나여야 합니다; 받은 것은 {type(x).__name__}입니다.") from None
    if not math.isfinite(value):
        raise Wrong(f"{what} = {value}: 유한한 숫자여야 합니다.")
    return value


def _memory_profile(fn, *args) -> tuple[int, int]:
    """(peak running total, largest single allocation) in bytes of the tensors fn(*args) allocates."""
    with (
        quiet_stderr(),
        torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof,
    ):
        fn(*args)
    events = sorted(
        (e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns()
    )
    sizes = [e.nbytes() for e in events]  # > 0: allocation, < 0: free
    return max(itertools.accumulate(sizes, initial=0)), max(sizes, default=0)


_MEASURING = {"peak_memory_bytes", "measure", "profile", "_memory_profile"}


@exercise("08-1")
def _naive_peak(fn):
    forbid_calls(
        fn,
        _MEASURING,
        "이 문제는 측정하기 **전에** 텐서 크기로 세는 예측입니다. 재는 함수는 검사기가 부릅니다: "
        "n, d, heads, batch로 바이트 수를 식으로 계산하세요.",
    )
    for n, d, h, b in [(256, 64, 1, 1), (512, 32, 2, 1), (128, 16, 3, 2)]:
        call = f"naive_peak_bytes(n={n}, d={d}, heads={h}, batch={b})"
        got = _number(call_learner(fn, n, d, h, b, what=call), call)
        gen = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(b, h, n, d, generator=gen) for _ in range(3))  # (B, h, N, d) float32
        with torch.no_grad():
            measured = peak_memory_bytes(naive_attention, q, k, v)
        if math.isclose(got, measured, rel_tol=1e-9):
            continue
        square, out = 4 * b * h * n * n, 4 * b * h * n * d  # one (B, h, N, N) and one (B, h, N, d), float32
        hints = [
            (square + out, "N×N 행렬을 하나만 셌습니다: 소프트맥스 결과 P가 만들어질 때 점수 S도 아직 살아 있습니다"),
            (2 * square, "출력 O = P @ V (N×d)를 빠뜨렸습니다: O가 만들어지는 순간 S와 P가 아직 살아 있습니다"),
            (square, "점수 행렬 하나만 셌습니다: 가중치 P와 출력 O도 같은 순간에 살아 있습니다"),
            (2 * square + 3 * out, "입력 Q, K, V는 호출 전에 이미 있던 메모리라 세지 않습니다 (호출 동안 늘어난 양)"),
            (
                (2 * square + out) // (b * h),
                f"헤드 수({h})와 배치({b})를 곱하지 않았습니다: 헤드·배치마다 행렬이 있습니다",
            ),
            (
                2 * square + 2 * out,
                "임시 텐서 q/√d (N×d)까지 셌습니다: 그 텐서는 점수 행렬곱이 끝나면 해제되어, S와 P가 함께 있는 순간에는 "
                "없습니다",
            ),
            (2 * (2 * square + out), "float32는 값 하나가 4바이트입니다 (8바이트로 셌습니다)"),
            ((2 * square + out) / 2**20, "바이트로 답하세요 (MiB로 나눴습니다)"),
            ((2 * square + out) / GIB, "바이트로 답하세요 (GiB로 나눴습니다)"),
        ]
        # 2,162,688 (not 2.16269e+06) beside the measured bytes
        shown = f"{got:,.0f}" if got.is_integer() else f"{got:,.6g}"
        for value, message in hints:
            if math.isclose(got, value, rel_tol=1e-9):
                raise Wrong(f"{call} = {shown}: {message}. 측정한 최대 메모리는 {measured:,}바이트입니다.")
        raise Wrong(
            f"{call} = {shown}, 측정한 최대 메모리는 {measured:,}바이트입니다. "
            "계산 도중 어떤 텐서들이 동시에 살아 있는지 세어 보세요."
        )
    return (
        "예측이 측정과 바이트 단위로 같습니다: 4·B·h·(2N² + Nd). S와 P, 두 N×N 행렬이 출력과 함께 살아 있는 "
        "순간이 최대입니다. N이 2배가 되면 거의 4배입니다."
    )


def _block_state(scores: torch.Tensor, values: torch.Tensor):
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m)
    return m, p.sum(dim=-1, keepdim=True), p @ values


@exercise("08-2")
def _merge_states(fn):
    gen = torch.Generator().manual_seed(8)
    # the last two: large scores, then a gap of 1000 between the blocks' maxima (float64 overflows at e^709)
    for shift_a, shift_b in ((0.0, 0.0), (3.0, -2.0), (-5.0, 4.0), (900.0, 1000.0), (-500.0, 500.0)):
        scores = torch.randn(4, 10, generator=gen, dtype=torch.float64)
        scores[:, :6] += shift_a
        scores[:, 6:] += shift_b
        values = torch.randn(10, 3, generator=gen, dtype=torch.float64)
        a, b = _block_state(scores[:, :6], values[:6]), _block_state(scores[:, 6:], values[6:])
        got = call_learner(fn, a, b, what="merge(state_a, state_b)")
        if not (isinstance(got, (tuple, list)) and len(got) == 3):
            raise Wrong("merge는 (m, l, acc) 세 개를 튜플로 돌려줘야 합니다.")
        m, l, acc = (torch.as_tensor(x, dtype=torch.float64) for x in got)
        m_want = torch.maximum(a[0], b[0])
        ca, cb = torch.exp(a[0] - m_want), torch.exp(b[0] - m_want)
        l_want, acc_want = a[1] * ca + b[1] * cb, a[2] * ca + b[2] * cb
        case = f"(블록 A 점수 {shift_a:+g}, 블록 B 점수 {shift_b:+g})"
        if m.shape != m_want.shape or l.shape != l_want.shape or acc.shape != acc_want.shape:
            raise Wrong(
                f"모양이 다릅니다: m {tuple(m.shape)}, l {tuple(l.shape)}, acc {tuple(acc.shape)}; "
                f"기대 {tuple(m_want.shape)}, {tuple(l_want.shape)}, {tuple(acc_want.shape)}."
            )
        if not (torch.isfinite(m).all() and torch.isfinite(l).all() and torch.isfinite(acc).all()):
            raise Wrong(
                f"{case}에서 NaN/inf가 나옵니다: exp(m_A)처럼 최댓값을 빼지 않은 지수나, 한 블록의 최댓값에 맞춘 "
                "exp(m_B − m_A)처럼 1보다 커질 수 있는 보정 계수는 넘칩니다. 보정 계수는 항상 ≤ 1이어야 합니다: "
                "m = max(m_A, m_B)로 두고 exp(m_A − m), exp(m_B − m)를 곱하세요."
            )
        # Any state with the two invariants is right: acc / l is the attention and l·e^m = Σ e^s over both
        # blocks (m = max with l = Σ e^(s−m), or m = log-sum-exp with l = 1, ...).
        full = torch.softmax(scores, dim=-1) @ values
        total = torch.logsumexp(scores, dim=-1, keepdim=True)  # log Σ e^s
        if (l > 0).all() and torch.allclose(m + torch.log(l), total) and torch.allclose(acc / l, full, atol=1e-10):
            continue
        if torch.allclose(l, l_want) and torch.allclose(acc, acc_want) and not torch.allclose(m, m_want):
            raise Wrong(
                f"{case}: l과 acc는 max(m_A, m_B) 기준으로 맞췄는데 돌려준 m이 그 값이 아닙니다. "
                "m도 max(m_A, m_B)로 돌려주세요."
            )
        if torch.allclose(l, a[1] + b[1]) and not torch.allclose(l, l_want):
            raise Wrong(
                f"{case}: l_A + l_B를 그대로 더했습니다. 두 합은 서로 다른 최댓값을 빼고 구한 것이라 "
                "먼저 exp(m_A − m), exp(m_B − m)를 곱해 같은 기준으로 맞춰야 합니다."
            )
        if torch.allclose(l, a[1] / ca + b[1] / cb) and not torch.allclose(l, l_want):
            raise Wrong(f"{case}: 보정 계수의 부호가 반대입니다. exp(m − m_A)가 아니라 exp(m_A − m) (≤ 1)을 곱하세요.")
        if torch.allclose(acc, a[2] + b[2]) and not torch.allclose(acc, acc_want):
            raise Wrong(f"{case}: acc를 그대로 더했습니다. acc에도 l과 같은 보정 계수를 곱해야 합니다.")
        if not ((l > 0).all() and torch.allclose(m + torch.log(l), total)):
            raise Wrong(
                f"{case}: l·e^m이 두 블록 전체의 지수 합 Σe^s와 다릅니다 "
                "(m = max(m_A, m_B)라면 l = l_A·exp(m_A − m) + l_B·exp(m_B − m))."
            )
        raise Wrong(f"{case}: acc / l이 softmax(점수) @ V와 다릅니다: acc에 l과 같은 보정 계수를 곱했는지 확인하세요.")
    return (
        "두 블록의 상태를 합친 결과의 acc / l이 전체 softmax 어텐션과 일치합니다 "
        "(점수가 1000이어도, 두 블록의 최댓값 차이가 1000이어도)."
    )


def _causal_linear_reference(q, k, v):
    """The N×N form: weights φ(q_i)·φ(k_j) for j <= i only, each row divided by its sum."""
    w = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)  # (..., N, N)
    w = w * torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    return (w / w.sum(dim=-1, keepdim=True)) @ v


@exercise("08-3")
def _causal_linear(fn):
    gen = torch.Generator().manual_seed(83)
    q, k, v = (torch.randn(2, 7, 5, generator=gen, dtype=torch.float64) for _ in range(3))
    got = call_learner(fn, q, k, v, what="causal_linear_attention(q, k, v)")
    if not isinstance(got, (torch.Tensor, np.ndarray)):
        raise Wrong(f"텐서를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
    got = torch.as_tensor(got, dtype=torch.float64)
    want = _causal_linear_reference(q, k, v)
    if got.shape != want.shape:
        raise Wrong(f"출력 모양이 {tuple(got.shape)}입니다. 입력 (2, 7, 5)에 대해 (2, 7, 5)여야 합니다.")
    if not torch.allclose(got, want, atol=1e-8):
        if not torch.isfinite(got).all():
            raise Wrong(
                "출력에 NaN/inf가 있습니다: 분모 φ(q_i)·z_i가 0이 된 행이 있습니다(ReLU처럼 0이 될 수 있는 특징 함수이거나 "
                "0으로 나눔). φ(x) = elu(x) + 1은 늘 양수라 분모가 0이 되지 않습니다."
            )
        if torch.allclose(got, linear_attention(q, k, v), atol=1e-8):
            raise Wrong(
                "인과가 아닌 선형 어텐션입니다: 쿼리 i가 뒤의 키(j > i)까지 봤습니다. "
                "합 φ(K)ᵀV와 φ(K)ᵀ1을 i까지의 누적 합으로 바꾸세요."
            )
        if torch.allclose(got, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-8):
            raise Wrong("소프트맥스 어텐션의 결과입니다. φ(x) = elu(x) + 1 특징 함수로 선형 어텐션을 계산하세요.")
        phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # (..., N, d)
        outer = phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (..., N, d, d_v): φ(k_j) v_jᵀ
        num = torch.cumsum(outer, dim=-3) - outer  # j < i only (row 0 is 0/0: compared from row 1)
        den = torch.cumsum(phi_k, dim=-2) - phi_k
        strict = torch.einsum("...d,...de->...e", phi_q, num) / (phi_q * den).sum(-1, keepdim=True)
        if torch.allclose(got[..., 1:, :], strict[..., 1:, :], atol=1e-8):
            raise Wrong("쿼리 i가 자기 자신(j = i)을 빼고 j < i만 봤습니다. 누적 합에 키 i도 넣으세요.")
        unnormalised = torch.einsum("...d,...de->...e", phi_q, torch.cumsum(outer, dim=-3))
        if torch.allclose(got, unnormalised, atol=1e-8):
            raise Wrong(
                "분모로 나누지 않았습니다: 각 쿼리의 가중치 합이 1이 되도록 φ(q_i)·(φ(k_1) + … + φ(k_i))로 나누세요."
            )
        raise Wrong(
            f"값이 인과 선형 어텐션과 다릅니다 (최대 차이 {(got - want).abs().max().item():.3g}). "
            "출력 i = φ(q_i)·S_i / φ(q_i)·z_i, S_i = Σ_(j≤i) φ(k_j)v_jᵀ, z_i = Σ_(j≤i) φ(k_j)입니다."
        )
    n, d = 2048, 16
    big = [torch.randn(1, n, d, generator=gen) for _ in range(3)]
    peak, largest = _memory_profile(fn, *big)
    matrix, every_state = n * n * 4, n * d * d * 4  # float32: one N×N matrix; all N states S_i (d×d_v each)
    side = math.isqrt(largest // 4)
    square = side * side * 4 == largest  # a float32 c×c block; N·d·d_v = 2^19 values is not a square
    if largest >= 0.9 * matrix:
        raise Wrong(
            f"N = {n}에서 한 번에 만든 가장 큰 텐서가 {largest / 2**20:.1f} MiB입니다: N×N 행렬"
            f"({matrix / 2**20:.0f} MiB)을 만들었습니다. S_i와 z_i는 누적 합이니 N×N 가중치 없이 만들 수 있습니다."
        )
    done = (
        f"값이 같고, N = {n}, d = d_v = {d}에서 최대 메모리 {peak / 2**20:.2f} MiB (N×N 행렬이었다면 "
        f"{matrix / 2**20:.0f} MiB): N×N 행렬 없이 인과 선형 어텐션을 계산했습니다. "
    )
    if largest >= every_state and not square:
        return done + (
            f"다만 모든 S_i(N·d·d_v = {every_state / 2**20:.0f} MiB)를 한꺼번에 저장했습니다. 이 크기는 d·d_v가 N보다 "
            "크면 N×N보다 커집니다(d = d_v = 64, N = 2048이면 32 MiB 대 16 MiB). 상태 S, z 하나만 들고 토큰이나 "
            "청크 단위로 고쳐 가면 d×d_v면 됩니다(풀이 셀): 선형 어텐션이 RNN처럼 생성하는 이유입니다."
        )
    done += (
        "상태 S, z 하나만 들고 고쳐 가므로 모든 S_i(N·d·d_v)를 저장하지 않습니다: 선형 어텐션이 RNN처럼 "
        "토큰 하나에 d×d_v 상태 하나로 생성하는 이유입니다."
    )
    if largest > 4 * n * d:  # larger than one input (N×d): a chunk's block dominates the memory
        size = f"{largest / 2**20:.2f} MiB"
        made = f"청크 {side}×{side} 가중치 블록({size})을" if square else f"N×d 입력보다 큰 텐서({size})를"
        done += f" 다만 {made} 만들었습니다. 청크를 줄이면 메모리도 줄어듭니다."
    return done
