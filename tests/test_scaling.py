"""helpers.scaling (notebook 04): variance sampling, entropy, softmax Jacobian, saturation, draw_dk, checkers."""

import math
import time
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers import scaling as sc  # noqa: E402
from helpers.exercises import check  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- variance


def test_sample_dot_products_matches_plain_formula_and_is_deterministic():
    a = sc.sample_dot_products(8, 5, seed=3)
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(5, 8, generator=gen), torch.randn(5, 8, generator=gen)
    torch.testing.assert_close(a, (q * k).sum(-1).double())
    torch.testing.assert_close(a, sc.sample_dot_products(8, 5, seed=3))
    assert a.dtype == torch.float64 and a.shape == (5,)
    assert not torch.equal(a, sc.sample_dot_products(8, 5, seed=4))


def test_sample_dot_products_chunks_large_requests():
    n = sc._CHUNK // 1024 + 7  # more rows than one chunk holds at d_k = 1024
    dots = sc.sample_dot_products(1024, n, seed=0)
    assert dots.shape == (n,) and torch.isfinite(dots).all()


def test_dot_product_variance_is_d_k_and_one_after_scaling():
    stats = sc.dot_product_variance((4, 64, 256), n=8000, seed=1)
    assert stats["d_k"] == [4, 64, 256]
    for d_k, v, vs in zip(stats["d_k"], stats["var"], stats["var_scaled"]):
        assert abs(v / d_k - 1) < 0.07 and abs(vs - 1) < 0.07
        assert math.isclose(vs, v / d_k, rel_tol=1e-9)


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError), (True, TypeError), ("8", TypeError)])
def test_sample_dot_products_bad_d_k(bad, exc):
    with pytest.raises(exc, match="d_k must be a positive integer"):
        sc.sample_dot_products(bad, 10)


def test_sample_dot_products_bad_n():
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        sc.sample_dot_products(4, 0)


# --------------------------------------------------------------------------- entropy and Jacobian


def test_entropy_against_formula_and_limits():
    w = torch.softmax(torch.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]], dtype=torch.float64), dim=-1)
    want = -(w * w.log()).sum(-1)
    torch.testing.assert_close(sc.entropy(w), want)
    assert math.isclose(sc.entropy(w[1]).item(), math.log(3))
    assert sc.entropy(torch.tensor([0.0, 1.0, 0.0])).item() == 0.0  # 0·log 0 = 0, no NaN


def test_entropy_bad_input():
    with pytest.raises(TypeError, match="weights must be a torch.Tensor, got list"):
        sc.entropy([0.5, 0.5])
    with pytest.raises(ValueError, match="floating-point"):
        sc.entropy(torch.tensor([1, 0]))
    with pytest.raises(ValueError, match=">= 0"):
        sc.entropy(torch.tensor([1.5, -0.5]))


def test_softmax_jacobian_matches_autograd_batched():
    s = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    J = sc.softmax_jacobian(torch.softmax(s, dim=-1))
    assert J.shape == (3, 5, 5)
    for i in range(3):
        want = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=-1), s[i])
        torch.testing.assert_close(J[i], want)
    torch.testing.assert_close(sc.jacobian_norm(torch.softmax(s, dim=-1)), J.flatten(1).norm(dim=-1))


def test_jacobian_vanishes_for_one_hot_and_is_known_for_uniform():
    assert sc.jacobian_norm(torch.tensor([0.0, 1.0, 0.0, 0.0])).item() == 0.0
    t = 4
    uniform = torch.full((t,), 1.0 / t, dtype=torch.float64)
    # J = I/T − 11ᵀ/T²: diagonal (1/T − 1/T²), off-diagonal −1/T².
    want = math.sqrt(t * (1 / t - 1 / t**2) ** 2 + (t * t - t) / t**4)
    assert math.isclose(sc.jacobian_norm(uniform).item(), want)


# --------------------------------------------------------------------------- saturation


def test_saturation_stats_matches_a_direct_computation():
    r = sc.saturation_stats(32, "sqrt", n_rows=64, n_keys=6, d_v=3, seed=5)
    q, k, v, g = sc._draw_rows(32, 64, 6, 3, 5)
    q.requires_grad_(True)
    w = torch.softmax(torch.einsum("nd,ntd->nt", q, k) / math.sqrt(32), dim=-1)
    (torch.einsum("nt,ntv->nv", w, v) * g).sum().backward()
    w = w.detach()
    assert math.isclose(r["entropy"], (-(w * w.log()).sum(-1)).mean().item(), rel_tol=1e-9)
    assert math.isclose(r["max_weight"], w.max(-1).values.mean().item(), rel_tol=1e-9)
    assert math.isclose(r["grad_q"], q.grad.norm(dim=-1).median().item(), rel_tol=1e-9)
    jac = torch.stack([torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), torch.log(row)) for row in w])
    assert math.isclose(r["jacobian"], jac.flatten(1).norm(dim=-1).median().item(), rel_tol=1e-6)


def test_saturation_trend_unscaled_vs_scaled():
    d_ks = (4, 64, 1024)
    raw = sc.saturation_sweep(d_ks, "none", n_rows=256)
    scaled = sc.saturation_sweep(d_ks, "sqrt", n_rows=256)
    assert raw["d_k"] == list(d_ks)
    assert raw["entropy"][0] > raw["entropy"][1] > raw["entropy"][2]
    assert raw["jacobian"][2] < 1e-3 * raw["jacobian"][0]
    assert max(scaled["jacobian"]) / min(scaled["jacobian"]) < 1.15
    assert max(scaled["entropy"]) / min(scaled["entropy"]) < 1.05
    over = sc.saturation_stats(1024, "linear", n_rows=256)
    assert over["entropy"] > 0.99 * math.log(16)  # dividing by d_k flattens the weights


def test_saturation_bad_input():
    with pytest.raises(ValueError, match="scale must be one of"):
        sc.saturation_stats(16, "half")
    with pytest.raises(ValueError, match="n_keys must be a positive integer"):
        sc.saturation_stats(16, n_keys=0)
    with pytest.raises(TypeError, match="d_k must be a positive integer"):
        sc.saturation_sweep((4, 8.0))


# --------------------------------------------------------------------------- draw_dk and the slider


def test_draw_dk_returns_the_numbers_it_draws():
    r = sc.draw_dk(1024)
    fig = plt.gcf()
    hist_ax, row_ax, grad_ax = fig.axes
    assert abs(r["std_raw"] / 32 - 1) < 0.05 and abs(r["std_scaled"] - 1) < 0.05
    np.testing.assert_allclose(r["weights_raw"].sum(), 1.0)
    np.testing.assert_allclose(r["weights_scaled"].sum(), 1.0)
    assert r["weights_raw"].max() > 0.999 and r["weights_scaled"].max() < 0.9
    assert math.isclose(r["entropy_scaled"], float(-(r["weights_scaled"] * np.log(r["weights_scaled"])).sum()))
    assert r["jacobian_raw"] == sc.saturation_stats(1024, "none")["jacobian"]
    bar_heights = [p.get_height() for p in row_ax.patches]
    np.testing.assert_allclose(bar_heights, np.concatenate([r["weights_raw"], r["weights_scaled"]]))
    assert "1024" in hist_ax.get_title() and hist_ax.get_xlim() == (-130, 130)
    assert grad_ax.get_xscale() == "log" and grad_ax.get_yscale() == "log"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    assert [str(w.message) for w in caught] == []


def test_draw_dk_into_given_axes_and_small_d_k():
    fig, axes = plt.subplots(1, 3)
    r = sc.draw_dk(4, axes=axes)
    assert plt.gcf() is fig and len(fig.axes) == 3
    assert abs(r["std_raw"] / 2 - 1) < 0.05
    assert r["entropy_raw"] < r["entropy_scaled"]  # dividing by 2 still softens the row


def test_draw_dk_redraws_quickly_once_warm():
    sc.draw_dk(256)
    plt.close("all")
    start = time.perf_counter()
    sc.draw_dk(256)
    plt.gcf().canvas.draw()
    assert time.perf_counter() - start < 3.0  # generous: the test machine is shared


def test_draw_dk_bad_input():
    with pytest.raises(ValueError, match="d_k must be a positive integer, got 0"):
        sc.draw_dk(0)
    with pytest.raises(ValueError, match="axes must hold 3"):
        sc.draw_dk(4, axes=plt.subplots(1, 2)[1])


def test_dk_explorer_is_one_power_of_two_slider():
    import ipywidgets as widgets

    box = sc.dk_explorer(value=64)
    slider, out = box.children
    assert isinstance(slider, widgets.SelectionSlider) and isinstance(out, widgets.Output)
    assert list(slider.options) == [4, 8, 16, 32, 64, 128, 256, 512, 1024] and slider.value == 64
    slider.value = 1024  # triggers a redraw without a browser
    with pytest.raises(ValueError, match="value must be one of"):
        sc.dk_explorer(value=100)


# --------------------------------------------------------------------------- exercises


def _msg(ex, answer):
    r = check(ex, answer)
    return r.passed, r.message


def test_04_1_correct_and_wrong_answers():
    ok, _ = _msg("04-1", lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    assert ok
    cases = {
        "√d_k로 나누지 않았습니다": lambda q, k: q @ k.transpose(-2, -1),
        "d_k = 4로 나눴습니다": lambda q, k: q @ k.transpose(-2, -1) / q.shape[-1],
        "√d_k를 곱했습니다": lambda q, k: q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]),
        "√T_k = √5로 나눴습니다": lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2]),
        "q @ kᵀ 순서": lambda q, k: k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]),
        "k.transpose(-2, -1)": lambda q, k: q @ k.T / math.sqrt(q.shape[-1]),
        "아직 구현하지 않았습니다": lambda q, k: (_ for _ in ()).throw(NotImplementedError),
    }
    for expected, fn in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # k.T on a 3-D tensor is deprecated
            ok, msg = _msg("04-1", fn)
        assert not ok and expected in msg, (expected, msg)


def test_04_2_correct_and_wrong_answers():
    assert check("04-2", 16).passed
    assert check("04-2", torch.tensor(16.0)).passed
    cases = {8: "성분 분산이 1일 때의 답", 256: "분산 그 자체", 64: "제곱근을 빠뜨렸나요",
             32: "σ_q 대신 분산", 10: "분산이 256/100 = 2.56", -16: "양의 유한한 수"}
    for answer, expected in cases.items():
        ok, msg = _msg("04-2", answer)
        assert not ok and expected in msg, (answer, msg)
    assert "숫자 하나를 넘기세요" in _msg("04-2", [16, 16])[1]
    assert "숫자 하나를 넘기세요" in _msg("04-2", "16")[1]
    assert not check("04-2", ...).passed


def test_04_3_correct_and_wrong_answers():
    assert check("04-3", lambda w: torch.diag(w) - torch.outer(w, w)).passed
    cases = {
        "부호가 반대입니다": lambda w: torch.outer(w, w) - torch.diag(w),
        "diag(w)만 있습니다": torch.diag,
        "−w wᵀ만 있습니다": lambda w: -torch.outer(w, w),
        "비대각 성분 −w_i w_j가 빠졌습니다": lambda w: torch.diag(w * (1 - w)),
        "(3, 3) 행렬이어야": lambda w: w,
        "성분 (0, 1)": lambda w: torch.diag(w) - torch.outer(w, w) + torch.eye(len(w)).roll(1, 1) * 0.1,
        "오류를 냈습니다": lambda w: w @ torch.ones(2),
    }
    for expected, fn in cases.items():
        ok, msg = _msg("04-3", fn)
        assert not ok and expected in msg, (expected, msg)
