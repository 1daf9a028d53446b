"""Notebook 08: the generated helpers.lessons.complexity_flash (attention variants, cost formulas,
measurement, memory explorer) and the checkers in helpers.exercises.ex08."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.attention import chunked_attention
from helpers.exercises import check
from helpers.lessons.complexity_flash import (
    GIB,
    QUERY_TILE,
    attention_flops,
    chunked_extra_bytes,
    draw_scaling,
    hbm_values,
    linear_attention,
    linear_attention_weights,
    loglog_slope,
    max_n_for_budget,
    measure,
    memory_explorer,
    memory_view,
    naive_attention,
    peak_memory_bytes,
    score_matrix_bytes,
    time_call,
    window_attention,
    window_weight_outside,
)
from helpers.lessons.complexity_flash import chunked_attention as taught

pytestmark = pytest.mark.notebook("08")  # `python3 course.py test 08` runs this module


def qkv(*shape, seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*shape, generator=gen, dtype=dtype) for _ in range(3))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- attention variants


def test_naive_matches_sdpa():
    q, k, v = qkv(2, 3, 17, 8)
    torch.testing.assert_close(naive_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))


@pytest.mark.parametrize("block", [1, 5, 16, 17, 100])
def test_taught_chunked_matches_sdpa_and_survives_large_scores(block):
    q, k, v = qkv(2, 3, 17, 8)
    torch.testing.assert_close(
        taught(q, k, v, block_size=block), F.scaled_dot_product_attention(q, k, v), rtol=0, atol=1e-12
    )
    big = taught(q * 300, k, v, block_size=block)  # scores in the thousands: no overflow
    torch.testing.assert_close(big, F.scaled_dot_product_attention(q * 300, k, v))


@pytest.mark.parametrize("seed", range(6))
def test_taught_chunked_random_shapes(seed):
    """Random T_q, T_k (often not multiples of the block or tile), broadcast leading dims, causal or not."""
    gen = torch.Generator().manual_seed(seed)
    t_q, t_k, d, d_v, block = (
        int(torch.randint(lo, hi, (), generator=gen)) for lo, hi in ((1, 1300), (1, 1300), (1, 20), (1, 20), (1, 300))
    )
    q = torch.randn(2, 1, t_q, d, generator=gen, dtype=torch.float64)  # broadcasts against 3 heads
    k = torch.randn(3, t_k, d, generator=gen, dtype=torch.float64)
    v = torch.randn(1, 3, t_k, d_v, generator=gen, dtype=torch.float64)
    for causal in (False, True):
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        got = taught(q, k, v, block_size=block, causal=causal)
        assert got.shape == (2, 3, t_q, d_v)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)


def test_taught_chunked_float32_and_two_dims():
    q, k, v = qkv(QUERY_TILE + 37, 16, dtype=torch.float32)
    ref = naive_attention(q.double(), k.double(), v.double())
    assert (taught(q, k, v).double() - ref).abs().max() < 1e-5
    assert taught(q, k, v).dtype == torch.float32


def test_taught_chunked_gradients_and_no_inplace_on_autograd_tensors():
    q, k, v = (x.requires_grad_() for x in qkv(2, 700, 5))
    before = [x.detach().clone() for x in (q, k, v)]
    taught(q, k, v, block_size=48, causal=True).square().sum().backward()
    q2, k2, v2 = (x.detach().clone().requires_grad_() for x in (q, k, v))
    F.scaled_dot_product_attention(q2, k2, v2, is_causal=True).square().sum().backward()
    for a, b, orig in ((q, q2, before[0]), (k, k2, before[1]), (v, v2, before[2])):
        torch.testing.assert_close(a.grad, b.grad)
        assert torch.equal(a.detach(), orig)  # the inputs were not modified
    small = tuple(x.requires_grad_() for x in qkv(1, 7, 2))
    assert torch.autograd.gradcheck(lambda *x: taught(*x, block_size=3, causal=True), small, atol=1e-8)


def test_wrapper_is_the_taught_function():
    q, k, v = qkv(1, 2, 300, 8)
    for causal in (False, True):
        assert torch.equal(
            chunked_attention(q, k, v, block_size=64, causal=causal), taught(q, k, v, block_size=64, causal=causal)
        )


def test_hbm_model_favours_the_fused_kernel():
    standard, fused = hbm_values(4096, 64, 192 * 1024 // 2)
    assert standard == 4 * 4096**2 + 4 * 4096 * 64 and 7 < standard / fused < 7.5
    assert hbm_values(4096, 128, 192 * 1024 // 2)[0] > hbm_values(4096, 128, 192 * 1024 // 2)[1]


@pytest.mark.parametrize("window, block", [(0, 4), (1, 3), (3, 128), (5, 7), (40, 16)])
def test_window_matches_band_masked_sdpa(window, block):
    q, k, v = qkv(2, 19, 6)
    pos = torch.arange(19)
    band = (pos[:, None] - pos[None, :]).abs() <= window
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=band)
    torch.testing.assert_close(window_attention(q, k, v, window=window, block_size=block), ref)


def test_window_covering_everything_is_full_attention():
    q, k, v = qkv(1, 12, 4)
    torch.testing.assert_close(window_attention(q, k, v, window=11), F.scaled_dot_product_attention(q, k, v))


def test_linear_attention_matches_its_quadratic_form():
    q, k, v = qkv(2, 9, 5)
    ref = linear_attention_weights(q, k) @ v
    torch.testing.assert_close(linear_attention(q, k, v), ref)
    w = linear_attention_weights(q, k)
    assert (w > 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 9, dtype=torch.float64))
    assert not torch.allclose(linear_attention(q, k, v), F.scaled_dot_product_attention(q, k, v), atol=1e-2)


def test_linear_weights_have_rank_at_most_d():
    q, k, _ = qkv(64, 4)
    assert torch.linalg.matrix_rank(linear_attention_weights(q, k)).item() <= 4


def test_window_weight_outside():
    q, k, _ = qkv(10, 3)
    torch.testing.assert_close(window_weight_outside(q, k, 9), torch.zeros(10, dtype=torch.float64))
    w = torch.softmax(q @ k.T / math.sqrt(3), dim=-1)
    torch.testing.assert_close(window_weight_outside(q, k, 0), 1 - w.diagonal())


# --------------------------------------------------------------------------- chunked attention (this notebook's additions)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q, t_k, block", [(2500, 2500, 128), (1100, 2300, 100), (2300, 700, 256), (5, 3000, 7)])
def test_chunked_multi_tile_matches_sdpa(t_q, t_k, block, causal):
    gen = torch.Generator().manual_seed(t_q)
    q, k, v = (torch.randn(1, t, 8, generator=gen, dtype=torch.float64) for t in (t_q, t_k, t_k))
    torch.testing.assert_close(
        chunked_attention(q, k, v, block_size=block, causal=causal),
        F.scaled_dot_product_attention(q, k, v, is_causal=causal),
    )


def test_chunked_grad_through_multiple_tiles():
    q, k, v = (x.requires_grad_() for x in qkv(1, 1100, 4))
    chunked_attention(q, k, v, block_size=64, causal=True).square().sum().backward()
    q2, k2, v2 = (x.detach().clone().requires_grad_() for x in (q, k, v))
    F.scaled_dot_product_attention(q2, k2, v2, is_causal=True).square().sum().backward()
    for a, b in ((q, q2), (k, k2), (v, v2)):
        torch.testing.assert_close(a.grad, b.grad)


def test_chunked_memory_is_linear_and_matches_formula():
    for n in (512, 2048):
        q, k, v = qkv(1, 1, n, 64, dtype=torch.float32)
        peak = peak_memory_bytes(chunked_attention, q, k, v)
        assert peak == pytest.approx(chunked_extra_bytes(n, 64), rel=0.05)
        assert peak < score_matrix_bytes(n)
    assert peak_memory_bytes(naive_attention, q, k, v) >= 2 * score_matrix_bytes(2048)


# --------------------------------------------------------------------------- formulas and measurement


def test_cost_formulas():
    assert attention_flops(1024, 64) == 4 * 1024**2 * 64
    assert attention_flops(10, 2, heads=3, batch=2) == 4 * 6 * 100 * 2
    assert score_matrix_bytes(16384) == GIB
    assert score_matrix_bytes(16384, heads=12, batch=32) == 384 * GIB
    assert score_matrix_bytes(100, bytes_per_value=2) == 20000
    n = max_n_for_budget(80 * GIB)
    assert score_matrix_bytes(n) <= 80 * GIB < score_matrix_bytes(n + 1)
    assert max_n_for_budget(GIB) == 16384
    assert max_n_for_budget(80 * GIB) == 146_542 and max_n_for_budget(80 * GIB, bytes_per_value=2) == 207_243
    assert chunked_extra_bytes(16384, 64) < score_matrix_bytes(16384) / 50


def test_peak_memory_counts_a_known_allocation():
    assert peak_memory_bytes(lambda: torch.empty(1000, 1000)) == 4_000_000
    assert peak_memory_bytes(lambda: torch.empty(10, dtype=torch.float64).exp()) == 160  # input and result alive
    assert peak_memory_bytes(lambda: [torch.empty(100) for _ in range(3)]) == 1200  # the list keeps all three


def test_time_call_is_a_median_after_a_warm_up(monkeypatch):
    import helpers.lessons.complexity_flash as lesson

    clock = iter([0.0, 1.0, 10.0, 12.0, 20.0, 100.0])  # three timed calls: 1 s, 2 s, 80 s
    monkeypatch.setattr(lesson.time, "perf_counter", lambda: next(clock))
    calls = []
    assert time_call(lambda: calls.append(1), repeat=3) == 2.0  # the median, not the mean (27.7) or best (1)
    assert len(calls) == 4  # one warm-up call, not timed


def test_slope():
    assert loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]) == pytest.approx(2.0)
    assert loglog_slope([10, 100], [5, 50]) == pytest.approx(1.0)


def test_measure_record():
    rec = measure("naive", 128, 16, repeat=1)
    assert rec["method"] == "naive" and rec["n"] == 128 and rec["seconds"] > 0
    assert rec["peak_bytes"] == 2 * 128 * 128 * 4 + 128 * 16 * 4  # S and P, then O
    assert measure("sdpa", 128, 16, timing=False)["seconds"] is None
    with pytest.raises(KeyError):
        measure("flash", 128)


# --------------------------------------------------------------------------- pictures


def test_memory_view_values():
    fig, ax = plt.subplots()
    update = memory_view(ax)
    here = update(14, 12, 32)
    assert here["n"] == 16384 and here["matrix_bytes"] == 384 * GIB
    assert here["fits"] == {8: False, 16: False, 80: False}
    assert here["chunked_bytes"] == chunked_extra_bytes(16384, 64, heads=12, batch=32)
    assert "16,384" in ax.get_title()
    assert update(10, 1, 1)["fits"] == {8: True, 16: True, 80: True}


def test_draw_scaling_returns_slopes():
    records = [{"method": "naive", "n": n, "seconds": 1e-6 * n * n, "peak_bytes": 8 * n * n} for n in (256, 512, 1024)]
    records += [{"method": "chunked", "n": n, "seconds": 1e-6 * n * n, "peak_bytes": 100 * n} for n in (256, 512, 1024)]
    _, ax = plt.subplots()
    slopes = draw_scaling(records, "peak_bytes", ax, ["naive", "chunked"], fit_min_n=1)
    assert slopes["naive"] == pytest.approx(2.0) and slopes["chunked"] == pytest.approx(1.0)
    assert draw_scaling(records, "seconds", ax, ["chunked"], fit_min_n=512)["chunked"] == pytest.approx(2.0)


def test_memory_explorer_updates_in_place():
    explorer = memory_explorer()
    ax = explorer.figure.axes[0]
    red = ax.lines[0]
    before_png, before_y = explorer.png, np.asarray(red.get_ydata(), dtype=float)
    assert explorer.last["n"] == 16384 and explorer.last["matrix_bytes"] == GIB
    explorer.set(heads=12, batch=32)
    assert explorer.renders == 3 and explorer.last["matrix_bytes"] == 384 * GIB
    assert np.allclose(np.asarray(red.get_ydata(), dtype=float), before_y * 384) and explorer.png != before_png
    explorer.set(log2_n=10)
    assert explorer.last["n"] == 1024 and "1,024" in ax.get_title()
    assert len(explorer.figure.axes) == 1 and len(ax.lines) == 4 + 3  # built once: no new artists


# --------------------------------------------------------------------------- exercises


def _msg(result):
    assert not result.passed, result
    return result.message


def test_08_1():
    def right(n, d, h, b):
        return 4 * b * h * (2 * n * n + n * d)

    assert check("08-1", right).passed
    assert "하나만 셌습니다: 소프트맥스" in _msg(check("08-1", lambda n, d, h, b: 4 * b * h * (n * n + n * d)))
    assert "출력 O" in _msg(check("08-1", lambda n, d, h, b: 8 * b * h * n * n))
    assert "입력 Q, K, V" in _msg(check("08-1", lambda n, d, h, b: 4 * b * h * (2 * n * n + 3 * n * d)))
    forgot_heads = _msg(check("08-1", lambda n, d, h, b: 4 * (2 * n * n + n * d)))
    assert "헤드 수(2)와 배치(1)" in forgot_heads and "= 2,162,688:" in forgot_heads, forgot_heads  # not 2.16269e+06
    assert "q/√d" in _msg(check("08-1", lambda n, d, h, b: 4 * b * h * (2 * n * n + 2 * n * d)))
    assert "8바이트" in _msg(check("08-1", lambda n, d, h, b: 2 * right(n, d, h, b)))
    assert "MiB" in _msg(check("08-1", lambda n, d, h, b: right(n, d, h, b) / 2**20))
    assert "동시에 살아" in _msg(check("08-1", lambda n, d, h, b: 12345))
    assert "숫자 하나" in _msg(check("08-1", lambda n, d, h, b: "1 MiB"))


def test_08_1_refuses_measuring_instead_of_predicting():
    def measured(n, d, h, b):
        q = torch.randn(b, h, n, d)
        return peak_memory_bytes(naive_attention, q, q, q)

    def profiled(n, d, h, b):
        with torch.profiler.profile(profile_memory=True):
            pass
        return 0

    for fn, name in (
        (measured, "peak_memory_bytes"),
        (lambda n, d, h, b: measure("naive", n, d)["peak_bytes"], "measure"),
        (profiled, "profile"),
    ):
        message = _msg(check("08-1", fn))
        assert name in message and "예측" in message, message


def _right_merge(a, b):
    m = torch.maximum(a[0], b[0])
    ca, cb = torch.exp(a[0] - m), torch.exp(b[0] - m)
    return m, a[1] * ca + b[1] * cb, a[2] * ca + b[2] * cb


def test_08_2():
    assert check("08-2", _right_merge).passed
    no_rescale = lambda a, b: (torch.maximum(a[0], b[0]), a[1] + b[1], a[2] + b[2])  # noqa: E731
    assert "그대로 더했습니다" in _msg(check("08-2", no_rescale))

    def flipped(a, b):
        m = torch.maximum(a[0], b[0])
        ca, cb = torch.exp(m - a[0]), torch.exp(m - b[0])
        return m, a[1] * ca + b[1] * cb, a[2] * ca + b[2] * cb

    assert "부호가 반대" in _msg(check("08-2", flipped))

    def acc_not_rescaled(a, b):
        m, l, _ = _right_merge(a, b)
        return m, l, a[2] + b[2]

    assert "acc에도" in _msg(check("08-2", acc_not_rescaled))

    def unshifted(a, b):
        m = torch.maximum(a[0], b[0])
        la, lb = a[1] * torch.exp(a[0]), b[1] * torch.exp(b[0])
        return m, (la + lb) / torch.exp(m), (a[2] * torch.exp(a[0]) + b[2] * torch.exp(b[0])) / torch.exp(m)

    assert "NaN/inf" in _msg(check("08-2", unshifted))
    assert "max(m_A, m_B)" in _msg(check("08-2", lambda a, b: (a[0], *_right_merge(a, b)[1:])))
    assert "세 개" in _msg(check("08-2", lambda a, b: _right_merge(a, b)[:2]))


def _causal_lean(q, k, v):
    fq, fk = F.elu(q) + 1, F.elu(k) + 1
    s = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)  # (..., N, d, d_v)
    return (fq.unsqueeze(-1) * s).sum(-2) / (fq * torch.cumsum(fk, dim=-2)).sum(-1, keepdim=True)


def _causal_chunked(q, k, v, chunk=64):  # the solution cell's form: one (d, d_v) state from chunk to chunk
    fq_all, fk_all = F.elu(q) + 1, F.elu(k) + 1
    s = fk_all.new_zeros(*fk_all.shape[:-2], fk_all.shape[-1], v.shape[-1])
    z = fk_all.new_zeros(*fk_all.shape[:-2], fk_all.shape[-1])
    out = []
    for i in range(0, q.shape[-2], chunk):
        fq, fk, vc = fq_all[..., i : i + chunk, :], fk_all[..., i : i + chunk, :], v[..., i : i + chunk, :]
        w = (fq @ fk.transpose(-2, -1)).tril()
        out.append((fq @ s + w @ vc) / (fq @ z.unsqueeze(-1) + w.sum(dim=-1, keepdim=True)))
        s, z = s + fk.transpose(-2, -1) @ vc, z + fk.sum(dim=-2)
    return torch.cat(out, dim=-2)


def test_08_3_every_state_costs_more_than_the_matrix_when_d_squared_exceeds_n():
    n, d = 2048, 64
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, n, d, generator=gen) for _ in range(3))
    with torch.no_grad():
        every = peak_memory_bytes(_causal_lean, q, k, v)
        carried = peak_memory_bytes(_causal_chunked, q, k, v)
        torch.testing.assert_close(_causal_chunked(q, k, v), _causal_lean(q, k, v), rtol=1e-4, atol=1e-5)
    assert every > n * d * d * 4 > n * n * 4  # cumsum keeps all N states (N·d·d_v): more than one N×N matrix
    assert carried < n * n * 4 // 4


def test_08_3():
    def recurrent(q, k, v):  # one d×d_v state updated token by token, as numpy: also accepted
        fq, fk = (F.elu(q) + 1).numpy(), (F.elu(k) + 1).numpy()
        s, z, out = 0, 0, np.zeros(q.shape[:-1] + v.shape[-1:])
        for i in range(q.shape[-2]):
            s = s + fk[..., i, :, None] * v.numpy()[..., i, None, :]
            z = z + fk[..., i, :]
            out[..., i, :] = np.einsum("...d,...de->...e", fq[..., i, :], s) / (fq[..., i, :] * z).sum(-1)[..., None]
        return out

    def quadratic(q, k, v):
        w = ((F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)).tril()
        return (w / w.sum(-1, keepdim=True)) @ v

    def strict(q, k, v):  # j < i: each query misses itself
        fq, fk = F.elu(q) + 1, F.elu(k) + 1
        outer = fk.unsqueeze(-1) * v.unsqueeze(-2)
        s, z = torch.cumsum(outer, dim=-3) - outer, torch.cumsum(fk, dim=-2) - fk
        return torch.nan_to_num((fq.unsqueeze(-1) * s).sum(-2) / (fq * z).sum(-1, keepdim=True))

    def no_division(q, k, v):
        fq, fk = F.elu(q) + 1, F.elu(k) + 1
        return (fq.unsqueeze(-1) * torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)).sum(-2)

    lean = check("08-3", _causal_lean)  # every S_i at once: accepted, told about its N·d·d_v memory
    assert lean.passed and "모든 S_i" in lean.message and "32 MiB 대 16 MiB" in lean.message, lean.message
    assert check("08-3", recurrent).passed
    carried = check("08-3", _causal_chunked)
    assert carried.passed and "상태 S, z 하나만" in carried.message and "모든 S_i(N·d·d_v =" not in carried.message
    assert "가중치 블록" not in carried.message  # chunk 64: its block is smaller than an input
    assert "N×N 행렬(16 MiB)을 만들었습니다" in _msg(check("08-3", quadratic))
    whole = _msg(check("08-3", lambda q, k, v: _causal_chunked(q, k, v, chunk=2048)))  # one chunk: N×N again
    assert "N×N 행렬(16 MiB)을 만들었습니다" in whole
    assert "인과가 아닌" in _msg(check("08-3", linear_attention))
    assert "소프트맥스 어텐션" in _msg(
        check("08-3", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    )
    assert "자기 자신" in _msg(check("08-3", strict))
    assert "분모로 나누지" in _msg(check("08-3", no_division))

    def relu_features(q, k, v):  # φ = relu can be 0: a row of 0/0
        fq, fk = F.relu(q), F.relu(k)
        s = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        return (fq.unsqueeze(-1) * s).sum(-2) / (fq * torch.cumsum(fk, dim=-2)).sum(-1, keepdim=True)

    relu = _msg(check("08-3", relu_features))
    assert "NaN/inf" in relu and "elu(x) + 1" in relu, relu
    assert "정규화" not in _msg(check("08-3", no_division))
    assert "다릅니다" in _msg(check("08-3", lambda q, k, v: _causal_lean(q, k, v) * 1.01))
    assert "모양" in _msg(check("08-3", lambda q, k, v: v[..., :3, :]))
    assert "텐서" in _msg(check("08-3", lambda q, k, v: "answer"))


@pytest.mark.parametrize("chunk", [512, 1024, 1500])
def test_08_3_judges_a_large_chunk_by_its_largest_block_not_the_total(chunk):
    """One state, large chunks: the total peak passes N·d·d_v (512) or nears N×N (1024), yet no S_i is stored
    and the largest tensor is the c×c block (1500: larger than N·d·d_v, but a square block)."""
    result = check("08-3", lambda q, k, v: _causal_chunked(q, k, v, chunk=chunk))
    assert result.passed, result.message
    assert "모든 S_i(N·d·d_v =" not in result.message and "상태 S, z 하나만" in result.message
    assert f"청크 {chunk}×{chunk} 가중치 블록({chunk * chunk * 4 / 2**20:.2f} MiB)" in result.message
    assert "청크를 줄이면 메모리도 줄어듭니다" in result.message


def test_08_2_rejects_merges_whose_rescale_factor_can_exceed_one():
    def to_a(a, b):  # always rescale to block A's max: c_B = e^(m_B − m_A) can exceed 1
        cb = torch.exp(b[0] - a[0])
        return a[0], a[1] + b[1] * cb, a[2] + b[2] * cb

    def to_min(a, b):  # rescale to the smaller max: one factor exceeds 1
        m = torch.minimum(a[0], b[0])
        ca, cb = torch.exp(a[0] - m), torch.exp(b[0] - m)
        return m, a[1] * ca + b[1] * cb, a[2] * ca + b[2] * cb

    for fn in (to_a, to_min):
        message = _msg(check("08-2", fn))
        assert "NaN/inf" in message and "≤ 1" in message and "블록 B 점수 +500" in message, message


def test_08_2_case_labels_carry_one_sign():
    def breaks_on_negative_b(a, b):
        if (a[0].mean() - b[0].mean()) > 3.5:  # only the case "A +3, B -2"
            return a
        return _right_merge(a, b)

    message = _msg(check("08-2", breaks_on_negative_b))
    assert "블록 B 점수 -2" in message and "+-" not in message, message


def test_08_2_accepts_a_log_sum_exp_normalised_state():
    def lse_form(a, b):  # m = log Σ e^s over both blocks, l = 1, acc already divided
        m, l, acc = _right_merge(a, b)
        return m + torch.log(l), torch.ones_like(l), acc / l

    def scaled_form(a, b):  # m = max, but l and acc both carry an extra factor 2: l·e^m is wrong
        m, l, acc = _right_merge(a, b)
        return m, 2 * l, 2 * acc

    assert check("08-2", lse_form).passed
    assert "l·e^m" in _msg(check("08-2", scaled_form))
