"""Notebook 05 (온도): its saved code (helpers.lessons.temperature) and its checkers (helpers.exercises.ex05)."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from helpers.attention import entropy, softmax
from helpers.data import load_json
from helpers.exercises import check
from helpers.lessons.temperature import (
    softmax_t,
    temperature_explorer,
    temperature_panels,
    temperature_small_multiples,
)

pytestmark = pytest.mark.notebook("05")  # `python3 course.py test 05` runs this module

Z = torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _bae():
    d = load_json("seed003_bae.json")
    x = torch.tensor(d["X"], dtype=torch.float64)
    q, k = x @ torch.tensor(d["W_Q"], dtype=torch.float64), x @ torch.tensor(d["W_K"], dtype=torch.float64)
    return d["tokens"], q @ k.T / math.sqrt(q.shape[-1])


# --------------------------------------------------------------------------- softmax_t


@pytest.mark.parametrize("tau", [1e-3, 0.5, 1.0, 2.0, 1e4])
def test_softmax_t_matches_torch_and_core(tau):
    gen = torch.Generator().manual_seed(5)
    for z in [
        Z,
        torch.randn(4, 6, generator=gen, dtype=torch.float64),
        torch.randn(2, 3, 5, generator=gen, dtype=torch.float64) * 10,
    ]:
        torch.testing.assert_close(softmax_t(z, tau), torch.softmax(z / tau, dim=-1))
        torch.testing.assert_close(softmax_t(z, tau), softmax(z, temperature=tau))


def test_softmax_t_float32_at_a_tiny_temperature_is_within_rounding():
    # z/τ ~ 1e4 at τ = 1e-3: subtracting the max before or after dividing changes the exponent by
    # about eps·|z|/τ ≈ 1e-7 · 30 / 1e-3 = 3e-3, so float32 agrees to ~1e-2 relative, not to 1e-5.
    z = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(6)) * 10
    got, want = softmax_t(z, 1e-3), torch.softmax(z.double() / 1e-3, dim=-1).float()
    assert torch.isfinite(got).all() and torch.allclose(got.sum(-1), torch.ones(2, 3))
    torch.testing.assert_close(got, want, rtol=2e-2, atol=1e-6)


def test_softmax_t_limits_and_overflow():
    ties = torch.tensor([1.0, 3.0, 3.0, 0.0])  # float32: exp(3 / 0.001) overflows in the textbook formula
    torch.testing.assert_close(softmax_t(ties, 1e-3), torch.tensor([0.0, 0.5, 0.5, 0.0]))
    torch.testing.assert_close(softmax_t(ties, 1e6), torch.full((4,), 0.25), atol=1e-5, rtol=0)


def test_softmax_t_broadcasts_a_tensor_of_temperatures():
    taus = torch.tensor([0.1, 1.0, 10.0], dtype=torch.float64)
    w = softmax_t(Z, taus[:, None])  # (3, T)
    for i, tau in enumerate(taus.tolist()):
        torch.testing.assert_close(w[i], torch.softmax(Z / tau, dim=-1))
    _, bae = _bae()
    grid = softmax_t(bae, taus[:, None, None])  # (3, T, T)
    torch.testing.assert_close(grid[1], torch.softmax(bae, dim=-1))
    assert entropy(w).diff().gt(0).all()  # entropy rises with τ


# --------------------------------------------------------------------------- the τ explorer and its panels


def test_temperature_panels_update_in_place():
    tokens, bae = _bae()
    fig, axes = plt.subplots(1, 2)
    update, image = temperature_panels(*axes, bae, tokens, row=2)
    bars = list(axes[1].patches)
    w = update(0.02)
    np.testing.assert_allclose(w, torch.softmax(bae / 0.02, dim=-1).numpy(), atol=1e-12)
    np.testing.assert_allclose(image.get_array(), w)
    assert image.get_clim() == (0.0, 1.0)  # the fixed colour scale
    np.testing.assert_allclose([b.get_height() for b in bars], w[2])
    assert axes[0].get_title() == "어텐션 가중치, τ = 0.02"
    assert axes[1].get_title() == f"'배' 행: 엔트로피 {entropy(torch.from_numpy(w[2])):.2f}, 최대 {w[2].max():.2f}"
    w2 = update(0.003)
    assert list(axes[1].patches) == bars and w2[2].argmax() == 2 and w2[2].max() > 0.99
    assert axes[0].get_title() == "어텐션 가중치, τ = 0.003"
    fig.canvas.draw()


def test_temperature_panels_without_fixed_labels_still_draw():
    tokens, bae = _bae()
    fig, axes = plt.subplots(1, 2, layout="constrained")
    update, _ = temperature_panels(*axes, bae, tokens, row=0, fixed_labels=False)
    assert update(1.0).shape == (8, 8)
    fig.canvas.draw()


def test_temperature_small_multiples_share_one_fixed_colour_bar():
    tokens, bae = _bae()
    fig, maps = temperature_small_multiples(bae, tokens, 2, [1.0, 0.003])
    assert list(maps) == [1.0, 0.003] and len(fig.axes) == 5  # 2 maps, 2 bar charts, 1 colour bar
    for tau, w in maps.items():
        np.testing.assert_allclose(w, torch.softmax(bae / tau, dim=-1).numpy(), atol=1e-12)
    assert all(ax.images[0].get_clim() == (0.0, 1.0) for ax in fig.axes[:4] if ax.images)
    assert fig.axes[-1].get_ylabel() == "가중치 (0~1 고정)"
    fig.canvas.draw()


def test_temperature_explorer_has_one_log_slider_that_redraws_in_place():
    import ipywidgets as widgets

    tokens, bae = _bae()
    explorer = temperature_explorer(bae, tokens, row=2, tau=1.0)
    (slider,) = explorer.controls.values()
    assert isinstance(slider, widgets.FloatLogSlider) and slider.continuous_update
    assert slider.base == 10 and (slider.min, slider.max) == (-3.0, 1.0) and slider.value == 1.0
    np.testing.assert_allclose(explorer.last, torch.softmax(bae, dim=-1).numpy(), atol=1e-12)
    fig, image, png, renders = explorer.figure, explorer.figure.axes[0].images[0], explorer.png, explorer.renders
    explorer.set(tau=0.01)
    assert explorer.renders == renders + 1 and explorer.png != png
    assert explorer.figure is fig and fig.axes[0].images[0] is image  # the same artists, new data
    np.testing.assert_allclose(image.get_array(), explorer.last)
    assert explorer.last[2].max() > 0.8 and "τ = 0.01" in fig.axes[0].get_title()
    assert fig.get_layout_engine() is None  # a layout engine would draw every frame twice


def test_temperature_explorer_slider_redraws_in_place_at_low_dpi():
    """Behaviour, not wall-clock (performance lives in benchmarks): each slider move is one render into the same
    figure and artists, at dpi 90, with no layout engine and no new figure."""
    tokens, bae = _bae()
    explorer = temperature_explorer(bae, tokens, row=2)
    fig, image, figures = explorer.figure, explorer.figure.axes[0].images[0], plt.get_fignums()
    assert explorer.dpi == 90 and fig.get_layout_engine() is None
    for tau in np.logspace(-3, 1, 4):
        renders, png = explorer.renders, explorer.png
        explorer.controls["tau"].value = float(tau)
        assert explorer.renders == renders + 1 and explorer.png != png
        assert explorer.figure is fig and fig.axes[0].images[0] is image
        np.testing.assert_allclose(image.get_array(), torch.softmax(bae / float(tau), dim=-1).numpy(), atol=1e-6)
    assert plt.get_fignums() == figures


# --------------------------------------------------------------------------- 05-1: predict, then measure


def _measured_tau(target=1 / 3 + 0.01):
    lo, hi = 1.0, 1000.0
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if torch.softmax(Z / mid, dim=-1).max() > target else (lo, mid)
    return hi


PREDICTED = ((Z.max() - Z.mean()) / (3 * 0.01)).item()  # 27.78


def test_05_1_accepts_prediction_and_measurement():
    result = check("05-1", (PREDICTED, _measured_tau()))
    assert result.passed, result.message
    assert "27.78" in result.message and "27.96" in result.message and "차이는 0.6" in result.message
    assert "안으로 맞습니다" not in result.message


def test_05_1_names_a_swapped_tuple():
    result = check("05-1", (_measured_tau(), PREDICTED))
    assert not result and "순서가 바뀌었습니다" in result.message, result.message
    assert check("05-1", [torch.tensor(PREDICTED), _measured_tau() * 1.0005]).passed


def test_05_1_accepts_a_measurement_read_off_a_1000_per_decade_log_grid():
    grid = np.logspace(-4, 4, 8001)  # 4절's resolution: 1000 points per decade, 0.23% apart
    tops = torch.softmax(Z[None, :] / torch.from_numpy(grid)[:, None], dim=-1).amax(-1).numpy()
    on_grid = float(grid[np.argmax(tops <= 1 / 3 + 0.01)])  # the first grid point that meets the criterion
    assert on_grid != pytest.approx(_measured_tau(), rel=1e-3)  # outside the old 0.1% tolerance
    result = check("05-1", (PREDICTED, on_grid))
    assert result.passed, result.message


def test_05_1_a_rounded_prediction_is_told_it_is_rounded():
    result = check("05-1", (28, _measured_tau()))
    assert not result and "반올림" in result.message and "측정값" not in result.message, result.message
    assert "28는" not in result.message


@pytest.mark.parametrize(
    "answer, words",
    [
        ((..., ...), "비어 있습니다"),
        (27.78, "튜플"),
        (("27", 28.0), "숫자 하나"),
        ((-1.0, 28.0), "0보다 큰"),
        ((2.0, 28.0), "원문이 '거의 균등'"),
        ((2.0 / 0.03, 28.0), "z̄를 빼지 않았습니다"),
        (((2.0 - 7 / 6) / 0.01, 28.0), "1/n을 빠뜨렸습니다"),
        ((1.5 / 0.03, 28.0), "z_max − z_min"),
        ((27.956, 28.0), "측정값입니다"),
        ((10.0, 28.0), "1차 근사의 답이 아닙니다"),
    ],
)
def test_05_1_diagnoses_the_prediction(answer, words):
    result = check("05-1", answer)
    assert not result and words in result.message, result.message


@pytest.mark.parametrize(
    "measured, words",
    [
        (PREDICTED, "예측값과 같습니다"),
        (22.176, "최소 가중치"),
        (10.0, "τ를 키우세요"),
        (40.0, "가장 작은 τ가 아닙니다"),
    ],
)
def test_05_1_diagnoses_the_measurement(measured, words):
    result = check("05-1", (PREDICTED, measured))
    assert not result and words in result.message, result.message


# --------------------------------------------------------------------------- 05-2 and 05-3


def test_05_2_accepts_safe_entropy():
    assert check("05-2", lambda w: -(w * torch.where(w > 0, w, 1.0).log()).sum()).passed
    assert check("05-2", lambda w: -(w[w > 0] * w[w > 0].log()).sum()).passed


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda w: -torch.special.xlogy(w, w).sum(), "xlogy을(를) 불렀습니다"),
        (lambda w: torch.special.entr(w).sum(), "entr을(를) 불렀습니다"),
        (lambda w: entropy(w), "entropy을(를) 불렀습니다"),
    ],
)
def test_05_2_asks_for_the_masking_by_hand(fn, words):
    result = check("05-2", fn)
    assert not result and words in result.message, result.message


def test_05_2_sees_a_ready_made_entropy_under_another_name():
    from torch.special import entr as ent  # the same function, renamed on import
    from torch.special import xlogy as xl

    for fn in (lambda w: ent(w).sum(), lambda w: -xl(w, w).sum()):
        result = check("05-2", fn)
        assert not result and "이름만 바꾼" in result.message, result.message


def test_05_2_sees_scipy_entropy_renamed_on_import():
    stats = pytest.importorskip("scipy.stats")
    ent = stats.entropy

    result = check("05-2", lambda w: torch.tensor(ent(w.numpy())))
    assert not result and "ent" in result.message and "= entropy)" in result.message, result.message


def test_05_2_refuses_scipy_rel_entr():
    special = pytest.importorskip("scipy.special")

    result = check("05-2", lambda w: -torch.tensor(special.rel_entr(w.numpy(), 1.0)).sum())
    assert not result and "rel_entr을(를) 불렀습니다" in result.message, result.message


@pytest.mark.parametrize("eps", [1e-9, 1e-8, 1e-6])
def test_05_2_small_epsilon_is_named_not_shown_as_equal_numbers(eps):
    # log(w + ε) is off by about ε: at 4 decimals the message used to read "= -0.0000, 정답 -0.0000"
    result = check("05-2", lambda w: -(w * (w + eps).log()).sum())
    assert not result and "ε" in result.message and "차이" in result.message, result.message
    assert "-0.0000," not in result.message and "정답 -0" not in result.message, result.message


def test_05_2_nan_hint_does_not_suggest_a_forbidden_function():
    result = check("05-2", lambda w: -(w * w.log()).sum())
    assert not result and "NaN" in result.message and "xlogy" not in result.message, result.message


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda w: -(w * w.log()).sum(), "NaN"),
        (lambda w: (w * torch.where(w > 0, w, 1.0).log()).sum(), "부호"),
        (lambda w: -(w * torch.where(w > 0, w, 1.0).log2()).sum(), "밑이 2"),
        (lambda w: -(w * torch.where(w > 0, w, 1.0).log()), "숫자 하나"),
        (lambda w: -(w * (w + 1e-3).log()).sum(), "정답"),
    ],
)
def test_05_2_rejects_typical_mistakes(fn, words):
    result = check("05-2", fn)
    assert not result and words in result.message


def test_05_3_accepts_tau_for_half():
    _, bae = _bae()
    lo, hi = math.log(1e-4), 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if softmax_t(bae[2], math.exp(mid)).max() > 0.5 else (lo, mid)
    tau = math.exp(lo)
    assert check("05-3", tau).passed
    assert check("05-3", torch.tensor(tau)).passed
    for same in (torch.tensor([tau]), np.array([tau]), np.array(tau), np.float64(tau), np.float32(tau), [tau], (tau,)):
        assert check("05-3", same).passed, type(same)


def _tau_half(scores):
    lo, hi = math.log(1e-4), 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if softmax_t(scores, math.exp(mid)).max() > 0.5 else (lo, mid)
    return math.exp(lo)


def test_05_3_names_a_tau_found_on_unscaled_or_twice_scaled_scores():
    _, bae = _bae()
    unscaled = _tau_half(2 * bae[2])  # Q·Kᵀ without the /√d_k that bae already has: τ twice too big
    result = check("05-3", unscaled)
    assert not result and "√d_k로 나누지 않은" in result.message and "2배" in result.message, result.message
    result = check("05-3", _tau_half(bae[2] / 2))
    assert not result and "한 번 더 나눈" in result.message, result.message


def test_05_3_particles_follow_the_number():
    result = check("05-3", 1.0)
    assert "로 0.5보다" in result.message or "으로 0.5보다" in result.message
    assert not any(bad in result.message for bad in ("3로 ", "6로 ", "0로 "))


def test_05_3_accepts_an_int_and_names_an_array_of_several():
    result = check("05-3", 1)  # an int is a number: judged, not refused
    assert not result and "τ를 줄이세요" in result.message
    result = check("05-3", np.array([0.02, 0.03]))
    assert not result and "원소 2개" in result.message
    assert "원소 0개" in check("05-3", torch.tensor([])).message


@pytest.mark.parametrize(
    "answer, words",
    [
        (1.0, "τ를 줄이세요"),
        (0.001, "τ를 키우세요"),
        (0.0, "0보다 큰"),
        (-0.02, "0보다 큰"),
        ("0.02", "숫자 하나"),
        (True, "숫자 하나"),
    ],
)
def test_05_3_rejects_wrong_tau(answer, words):
    result = check("05-3", answer)
    assert not result and words in result.message


def test_stub_answers_say_not_yet():
    def stub(*args):
        raise NotImplementedError

    assert "아직 구현하지" in check("05-2", stub).message
    assert "비어 있습니다" in check("05-3", ...).message
    assert "비어 있습니다" in check("05-1", ...).message


# --------------------------------------------------------------------------- defining properties (sharp)


@pytest.mark.parametrize("tau", [1e-4, 0.5, 1.0, 50.0])
def test_softmax_t_is_softmax_of_z_over_tau_even_at_extreme_scores(tau):
    from helpers.lessons.temperature import softmax_t as lesson_softmax_t

    z = torch.tensor([[1000.0, -1000.0, 999.5, 0.0]], dtype=torch.float64)
    w = lesson_softmax_t(z, tau)
    assert torch.isfinite(w).all(), f"softmax_t overflowed at tau={tau}"
    torch.testing.assert_close(w, torch.softmax(z / tau, dim=-1), rtol=1e-12, atol=1e-300)
    torch.testing.assert_close(lesson_softmax_t(z, 1.0), torch.softmax(z, dim=-1))


def test_entropy_is_between_zero_and_log_t():
    from helpers.lessons.temperature import entropy as lesson_entropy

    t = 5
    assert lesson_entropy(torch.full((t,), 1 / t, dtype=torch.float64)).item() == pytest.approx(math.log(t), abs=1e-12)
    assert lesson_entropy(torch.eye(t, dtype=torch.float64)).tolist() == [0.0] * t
    w = torch.softmax(torch.randn(8, t, dtype=torch.float64, generator=torch.Generator().manual_seed(2)), dim=-1)
    h = lesson_entropy(w)
    assert ((h > 0) & (h < math.log(t))).all()
