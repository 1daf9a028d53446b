"""Notebook 04: the saved lesson code (helpers.lessons.scaling_variance), the d_k explorer, the 04 checkers."""

import functools
import math
import warnings

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from helpers.attention import entropy
from helpers.exercises import check
from helpers.exercises.ex04 import _LargestTensor
from helpers.lessons.query_key_value import attention_scores
from helpers.lessons.query_key_value import scaled_dot_product_attention as sdpa03
from helpers.lessons.scaling_variance import (
    DKS,
    dk_explorer_figure,
    dk_panel_data,
    dot_product_variance,
    sample_dot_products,
    saturation_rows,
    saturation_summary,
    softmax_jacobian,
)
from helpers.lessons.scaling_variance import softmax_jacobian as sj
from helpers.plots import use_korean_font
from helpers.widgets import Explorer

pytestmark = pytest.mark.notebook("04")  # `python3 course.py test 04` runs this module


@pytest.fixture(autouse=True)
def close_figures():
    use_korean_font()
    yield
    plt.close("all")


# --------------------------------------------------------------------------- variance


def test_sample_dot_products_matches_the_formula_and_is_seeded():
    gen = torch.Generator().manual_seed(3)
    q, k = (
        torch.randn(50, 6, generator=gen, dtype=torch.float64),
        torch.randn(50, 6, generator=gen, dtype=torch.float64),
    )
    torch.testing.assert_close(sample_dot_products(6, 50, seed=3), (q * k).sum(-1))
    assert torch.equal(sample_dot_products(6, 50, seed=3), sample_dot_products(6, 50, seed=3))
    assert not torch.equal(sample_dot_products(6, 50, seed=3), sample_dot_products(6, 50, seed=4))


def test_dot_product_variance_is_d_k_and_one_after_scaling():
    rows = dot_product_variance((4, 64, 256), n=20_000)
    assert [r["d_k"] for r in rows] == [4, 64, 256]
    for r in rows:
        assert abs(r["var"] / r["d_k"] - 1) < 0.05 and abs(r["var_scaled"] - 1) < 0.05
        assert abs(r["mean"]) < 4 * math.sqrt(r["d_k"] / 20_000)


# --------------------------------------------------------------------------- Jacobian and saturation


def test_softmax_jacobian_matches_autograd_batched():
    s = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    J = softmax_jacobian(torch.softmax(s, dim=-1))
    assert J.shape == (3, 5, 5)
    for i in range(3):
        torch.testing.assert_close(J[i], torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), s[i]))
    assert softmax_jacobian(torch.tensor([0.0, 1.0, 0.0])).abs().max() == 0


def test_saturation_rows_match_a_direct_computation():
    r = saturation_rows(32, "sqrt", n_rows=64, n_keys=6, d_v=3, seed=5)
    gen = torch.Generator().manual_seed(5 + 32)
    q = torch.randn(64, 32, generator=gen).double().requires_grad_(True)
    k = torch.randn(64, 6, 32, generator=gen).double()
    v = torch.randn(64, 6, 3, generator=gen).double()
    g = torch.randn(64, 3, generator=gen).double()
    w = torch.softmax((q[:, None, :] * k).sum(-1) / math.sqrt(32), dim=-1)
    ((w[:, :, None] * v).sum(1) * g).sum().backward()
    torch.testing.assert_close(r["grad_q"], q.grad.norm(dim=-1))
    torch.testing.assert_close(r["entropy"], entropy(w.detach()))
    torch.testing.assert_close(r["max_weight"], w.detach().max(-1).values)
    jac = torch.stack(
        [torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), torch.log(row)) for row in w.detach()]
    )
    torch.testing.assert_close(r["jacobian"], jac.flatten(1).norm(dim=-1))


def test_saturation_summary_trend_unscaled_vs_scaled():
    raw = [saturation_summary(d, "none", n_rows=256) for d in (4, 64, 1024)]
    scaled = [saturation_summary(d, "sqrt", n_rows=256) for d in (4, 64, 1024)]
    assert raw[0]["entropy"] > raw[1]["entropy"] > raw[2]["entropy"]
    assert raw[2]["jacobian"] < 1e-3 * raw[0]["jacobian"] and raw[2]["saturated"] > 0.6
    assert max(r["jacobian"] for r in scaled) / min(r["jacobian"] for r in scaled) < 1.15
    assert all(r["saturated"] == 0 for r in scaled)
    assert saturation_summary(1024, "linear", n_rows=256)["entropy"] > 0.99 * math.log(16)


def test_d_k_64_numbers_quoted_in_the_notebook():
    raw, scaled = saturation_summary(64, "none"), saturation_summary(64, "sqrt")
    assert round(raw["grad_q"], 1) == 1.8 and round(scaled["grad_q"], 2) == 1.03
    assert round(raw["saturated"], 2) == 0.29


# --------------------------------------------------------------------------- the d_k explorer


def test_dk_panel_data_histograms_are_densities():
    p = dk_panel_data(16)
    widths = p["scaled_edges"].diff()
    assert math.isclose(float((p["hist_scaled"] * widths).sum()), 1.0, rel_tol=1e-3)
    assert abs(p["std_raw"] / 4 - 1) < 0.05 and abs(p["std_scaled"] - 1) < 0.05
    torch.testing.assert_close(p["w_raw"].sum(), torch.tensor(1.0, dtype=torch.float64))


def test_dk_explorer_updates_the_same_artists():
    jac = [0.3] * len(DKS)
    fig, update = dk_explorer_figure(jac, jac)
    artists = {ax: (list(ax.patches), list(ax.lines)) for ax in fig.axes}
    explorer = Explorer(fig, update, {"d_k": widgets.SelectionSlider(options=list(DKS), value=64)})
    assert explorer.last["d_k"] == 64
    png, title = explorer.png, fig.axes[0].get_title()
    explorer.set(d_k=1024)
    assert explorer.last["d_k"] == 1024 and explorer.png != png and fig.axes[0].get_title() != title
    assert {ax: (list(ax.patches), list(ax.lines)) for ax in fig.axes} == artists
    row_ax = fig.axes[2]
    heights = [p.get_height() for p in row_ax.patches]
    assert heights == pytest.approx(explorer.last["w_raw"].tolist() + explorer.last["w_scaled"].tolist())
    assert max(heights[:8]) > 0.99


# --------------------------------------------------------------------------- exercises


def _msg(ex, answer):
    r = check(ex, answer)
    return r.passed, r.message


def test_04_1_correct_and_wrong_answers():
    ok, _ = _msg("04-1", lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    assert ok
    ok, msg = _msg("04-1", lambda q, k: q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1]))
    assert ok, msg  # float32 rounding is not an error
    ok, msg = _msg("04-1", lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + 1e-3)
    assert not ok and "되어야 합니다" in msg, msg
    cases = {
        "√d_k로 나누지 않았습니다": lambda q, k: q @ k.transpose(-2, -1),
        "d_k = 4로 나눴습니다": lambda q, k: q @ k.transpose(-2, -1) / q.shape[-1],
        "√d_k를 곱했습니다": lambda q, k: q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]),
        "√T_k = √5로 나눴습니다": lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2]),
        "q @ kᵀ 순서": lambda q, k: k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]),
        "k.T는 모든 축의 순서를 뒤집어": lambda q, k: q @ k.T / math.sqrt(q.shape[-1]),
        "배치 축 B와 키 축 T_k를 맞바꿉니다": lambda q, k: q @ k.transpose(0, 1) / math.sqrt(q.shape[-1]),
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
    negative = check("04-2", -16)  # Var(q·k / c) = Var(q·k) / c²: the sign drops out
    assert negative.passed and "부호는 상관없습니다" in negative.message, negative.message
    cases = {
        8: "c = √d_k = 8은 성분 분산이 1일 때의 답",
        -8: "성분 분산이 1일 때의 답",
        256: "c = 256은 분산 그 자체",
        64: "제곱근을 빠뜨렸나요",
        32: "σ_q 대신 분산",
        10: "분산이 256/100 = 2.56이 됩니다",
        15.91: "표본값이 아니라 식 Var(q·k)",  # the sample standard deviation, 0.6 % off
        16.3: "표본값이 아니라 식 Var(q·k)",
        0: "0이 아닌 유한한 수",
        float("inf"): "0이 아닌 유한한 수",
    }
    for answer, expected in cases.items():
        ok, msg = _msg("04-2", answer)
        assert not ok and expected in msg, (answer, msg)
    assert "숫자 하나를 넘기세요" in _msg("04-2", [16, 16])[1]
    assert "숫자 하나를 넘기세요" in _msg("04-2", "16")[1]
    assert not check("04-2", ...).passed


def _softmax_backward(w, g):
    return w * (g - (w * g).sum(-1, keepdim=True))  # (..., T): Jᵀg without J


def test_04_3_accepts_the_o_t_backward():
    result = check("04-3", _softmax_backward)
    assert result.passed and "대칭" in result.message, result.message
    # the same answer against autograd, on shapes the checker does not use
    s, g = torch.randn(4, 2, 9, dtype=torch.float64, requires_grad=True), torch.randn(4, 2, 9, dtype=torch.float64)
    (want,) = torch.autograd.grad(torch.softmax(s, -1), s, g)
    torch.testing.assert_close(_softmax_backward(torch.softmax(s, -1).detach(), g), want)


def _first_term_only(w, g):
    return w * g  # the w·g term is missing


def test_04_3_diagnoses_the_common_mistakes():
    cases = {
        "부호가 반대입니다": lambda w, g: -_softmax_backward(w, g),
        "diag(w) g 항만 있습니다": _first_term_only,
        "w wᵀ g 항의 부호가 반대": lambda w, g: w * (g + (w * g).sum(-1, keepdim=True)),
        "앞의 w가 빠졌습니다": lambda w, g: w * g - (w * g).sum(-1, keepdim=True),
        "g를 그대로 돌려줬습니다": lambda w, g: g,
        "배치 전체로 합했습니다": lambda w, g: w * (g - (w * g).sum()),
        "keepdim=True": lambda w, g: w * (g - (w * g).sum(-1)),  # (B, T) - (B,): a broadcasting error
        "모양이": lambda w, g: _softmax_backward(w, g)[..., :1],
        "자동 미분으로는": lambda w, g: _softmax_backward(w, g) + 0.1,
    }
    for expected, fn in cases.items():
        ok, msg = _msg("04-3", fn)
        assert not ok and expected in msg, (expected, msg)


def _via_jacobian_matrix(w, g):
    outer = w.unsqueeze(-1) * w.unsqueeze(-2)  # (..., T, T): J's second term, built
    return w * g - (outer @ g.unsqueeze(-1)).squeeze(-1)


def test_04_3_notices_a_t_by_t_tensor():
    """Right numbers, but through a (T, T) matrix: the exercise asks for O(T)."""
    ok, msg = _msg("04-3", _via_jacobian_matrix)
    assert not ok and "T×T = 4096" in msg, msg
    ok, msg = _msg("04-3", lambda w, g: w * g - torch.einsum("...i,...j,...j->...i", w, w, g) * 0 - _outer_einsum(w, g))
    assert not ok and "T×T" in msg, msg


def _jacobian_in_numpy(w, g):
    wn, gn = w.numpy(), g.numpy()
    jac = -wn[..., :, None] * wn[..., None, :]  # (..., T, T) outside torch: the tensor watch does not see it
    idx = np.arange(wn.shape[-1])
    jac[..., idx, idx] += wn
    return torch.from_numpy((jac @ gn[..., None])[..., 0])


def _jacobian_in_lists(w, g):
    rows = []
    for wr, gr in zip(w.reshape(-1, w.shape[-1]).tolist(), g.reshape(-1, g.shape[-1]).tolist(), strict=True):
        jac = [[(a if i == j else 0.0) - a * b for j, b in enumerate(wr)] for i, a in enumerate(wr)]
        rows.append([sum(jr[j] * gr[j] for j in range(len(gr))) for jr in jac])
    return torch.tensor(rows, dtype=torch.float64).reshape(w.shape)


@pytest.mark.parametrize("fn", [_jacobian_in_numpy, _jacobian_in_lists])
def test_04_3_notices_a_t_by_t_matrix_outside_torch(fn):
    ok, msg = _msg("04-3", fn)
    assert not ok and "T×T = 4096개" in msg, msg


def _o_t_in_numpy(w, g):
    wn, gn = w.numpy(), g.numpy()
    return torch.from_numpy(wn * (gn - (wn * gn).sum(-1, keepdims=True)))


def _o_t_in_lists(w, g):
    rows = []
    for wr, gr in zip(w.reshape(-1, w.shape[-1]).tolist(), g.reshape(-1, g.shape[-1]).tolist(), strict=True):
        dot = sum(a * b for a, b in zip(wr, gr, strict=True))
        rows.append([a * (b - dot) for a, b in zip(wr, gr, strict=True)])
    return torch.tensor(rows, dtype=torch.float64).reshape(w.shape)


@pytest.mark.parametrize("fn", [_o_t_in_numpy, _o_t_in_lists])
def test_04_3_accepts_an_o_t_answer_outside_torch(fn):
    ok, msg = _msg("04-3", fn)
    assert ok, msg


def test_04_1_refuses_03s_attention_scores():
    for fn in (attention_scores, lambda q, k: attention_scores(q, k), lambda q, k: sdpa03(q, k, k)[1].log()):
        ok, msg = _msg("04-1", fn)
        assert not ok and "03번의 attention_scores를 부르지 않고" in msg, msg


def _outer_einsum(w, g):
    return torch.einsum("...ij,...j->...i", torch.einsum("...i,...j->...ij", w, w), g)


def _with_sj(w, g):
    return (sj(w) @ g.unsqueeze(-1)).squeeze(-1)  # section 4's softmax_jacobian, imported under another name


def _wrapped_jacobian(w, g):
    return _with_sj(w, g)  # a helper of the learner's own does not hide the call


def _vjp_of_softmax(w, g):
    return torch.func.vjp(lambda s: torch.softmax(s, -1), torch.log(w))[1](g)[0]


def _forward_mode(w, g):
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        s = fwAD.make_dual(torch.log(w), g)  # J is symmetric, so Jg = Jᵀg
        return fwAD.unpack_dual(torch.softmax(s, -1)).tangent


def _autograd_grad(w, g):
    s = torch.log(w).requires_grad_(True)
    return torch.autograd.grad(torch.softmax(s, -1), s, g)[0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda w, g: (softmax_jacobian(w) @ g.unsqueeze(-1)).squeeze(-1),
        _with_sj,
        _wrapped_jacobian,
        lambda w, g: (torch.diag_embed(w) - w.unsqueeze(-1) * w.unsqueeze(-2)) @ g,
        lambda w, g: (torch.diag(w) - torch.outer(w, w)) @ g,
        lambda w, g: torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), torch.log(w)) @ g,
        lambda w, g: torch.func.jacrev(lambda s: torch.softmax(s, -1))(torch.log(w)) @ g,
        lambda w, g: torch.func.jacfwd(lambda s: torch.softmax(s, -1))(torch.log(w)) @ g,
        _vjp_of_softmax,
        _forward_mode,
        _autograd_grad,
        functools.partial(_with_sj),
    ],
)
def test_04_3_rejects_jacobians_and_autograd(fn):
    """The text says: no softmax_jacobian, no diag/diag_embed/outer, no automatic differentiation."""
    ok, msg = _msg("04-3", fn)
    assert not ok and "T×T 행렬을 만들지 않고, 자동 미분도 없이" in msg, msg


def test_04_1_bmm_on_2d_input_gets_a_hint():
    ok, msg = _msg("04-1", lambda q, k: torch.bmm(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1]))
    assert not ok and "torch.bmm은 3차원만" in msg, msg


def test_saturation_rows_refuses_a_request_too_large_for_a_small_kernel():
    with pytest.raises(ValueError, match="exceeds 2\\*\\*24"):
        saturation_rows(64, "sqrt", n_keys=4096)  # 512 rows: about 1.3 GB of k and v
    with pytest.raises(ValueError, match="n_keys=4097: T×T Jacobian per row over 128 MiB; use n_keys <= 4096"):
        saturation_rows(1, "sqrt", n_keys=4097, n_rows=1)  # one row's J alone would be over 128 MiB
    with pytest.raises(ValueError, match="n_keys=4097: T×T Jacobian"):  # said first: fewer rows would not help
        saturation_rows(64, "sqrt", n_keys=4097)
    assert saturation_rows(1, "sqrt", n_keys=4096, n_rows=1)["jacobian"].shape == (1,)
    # The size the presenter's note suggests for question 4. Its 128 Jacobians of 1024×1024 would be 1 GiB
    # at once (3.5 GB peak when J was formed for all rows: more than a Binder kernel gets): the largest
    # tensor must be k.
    with _LargestTensor() as seen:
        r = saturation_rows(64, "sqrt", n_keys=1024, n_rows=128)
    assert r["grad_q"].shape == r["jacobian"].shape == (128,)
    assert seen.largest == 128 * 1024 * 64, f"a tensor of {seen.largest:,} values: J is formed for too many rows"
    with _LargestTensor() as seen:  # small k: the largest tensor is a part of J, two rows of 1024×1024 (16 MiB)
        saturation_rows(8, "sqrt", n_keys=1024, n_rows=8, d_v=8)
    assert seen.largest == 2**21, f"a part of J of {seen.largest:,} values, not 2**21"


def test_saturation_rows_jacobian_in_parts_is_the_whole_one():
    """J a few rows at a time (600 keys: 5 rows per part, so 5 + 5 + 3) equals J formed for all rows at once,
    bit for bit, last short part included."""
    r = saturation_rows(8, "none", n_rows=13, n_keys=600, seed=2)
    gen = torch.Generator().manual_seed(2 + 8)
    q = torch.randn(13, 8, generator=gen).double()
    k = torch.randn(13, 600, 8, generator=gen).double()
    w = torch.softmax(torch.einsum("nd,ntd->nt", q, k), dim=-1)
    assert torch.equal(r["jacobian"], softmax_jacobian(w).flatten(-2).norm(dim=-1))
