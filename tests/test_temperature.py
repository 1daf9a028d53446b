"""Unit tests of helpers.temperature (notebook 05) against plain formulas and PyTorch."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.exercises import check  # noqa: E402
from helpers.temperature import (  # noqa: E402
    bae_scores,
    draw_temperature,
    entropy,
    sample_tokens,
    tau_for_max_weight,
    temperature_explorer,
    temperature_sweep,
)

Z = torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- entropy


def test_entropy_matches_formula_and_torch_distribution():
    w = torch.softmax(torch.randn(4, 6, dtype=torch.float64), dim=-1)
    want = -(w * w.log()).sum(-1)
    torch.testing.assert_close(entropy(w), want)
    torch.testing.assert_close(entropy(w), torch.distributions.Categorical(probs=w).entropy())


def test_entropy_edge_cases():
    assert entropy(torch.tensor([1.0, 0.0, 0.0])).item() == 0.0
    assert not math.copysign(1.0, entropy(torch.tensor([0.0, 1.0])).item()) < 0  # no -0.0
    assert entropy(torch.full((8,), 1 / 8)).item() == pytest.approx(math.log(8))
    assert entropy(torch.ones(2, 3) / 3, dim=0).shape == (3,)


@pytest.mark.parametrize("bad, exc", [([0.5, 0.5], TypeError), (torch.tensor([1, 0]), ValueError),
                                      (torch.tensor([1.5, -0.5]), ValueError)])
def test_entropy_bad_input(bad, exc):
    with pytest.raises(exc):
        entropy(bad)


# --------------------------------------------------------------------------- sweep and τ search


def test_sweep_matches_torch_softmax():
    taus = [0.1, 1.0, 7.0]
    sw = temperature_sweep(Z, taus)
    for i, tau in enumerate(taus):
        w = torch.softmax(Z / tau, dim=-1)
        assert sw["max_weight"][i] == pytest.approx(w.max().item())
        assert sw["entropy"][i] == pytest.approx(-(w * w.log()).sum().item())
    np.testing.assert_allclose(sw["tau"], taus)


def test_sweep_limits_and_batch_shape():
    sw = temperature_sweep(torch.tensor([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), [1e-4, 1e6])
    assert sw["max_weight"].shape == (2, 2)
    np.testing.assert_allclose(sw["max_weight"][0], [0.5, 0.25], atol=1e-5)  # ties split; flat row
    np.testing.assert_allclose(sw["entropy"][1], [math.log(4)] * 2, atol=1e-5)


@pytest.mark.parametrize("scores, taus, exc", [
    (Z, [0.0], ValueError), (Z, [-1.0], ValueError), (Z, [float("inf")], ValueError),
    (Z, ["1"], TypeError), (Z, [], ValueError), ([1.0, float("nan")], [1.0], ValueError),
    ("abc", [1.0], TypeError), ([], [1.0], ValueError),
])
def test_sweep_bad_input(scores, taus, exc):
    with pytest.raises(exc):
        temperature_sweep(scores, taus)


@pytest.mark.parametrize("target", [0.4, 0.5, 0.9, 0.999])
def test_tau_for_max_weight_hits_target(target):
    tau = tau_for_max_weight(Z, target)
    assert torch.softmax(Z / tau, dim=-1).max().item() == pytest.approx(target, abs=1e-9)


def test_tau_for_max_weight_with_ties():
    z = torch.tensor([3.0, 3.0, 0.0], dtype=torch.float64)
    tau = tau_for_max_weight(z, 0.45)
    assert torch.softmax(z / tau, dim=-1).max().item() == pytest.approx(0.45, abs=1e-9)
    with pytest.raises(ValueError, match="tied"):
        tau_for_max_weight(z, 0.6)  # two tied maxima can never exceed 1/2


@pytest.mark.parametrize("scores, target, exc", [
    (Z, 1 / 3, ValueError), (Z, 1.0, ValueError), (Z, "0.5", TypeError),
    (torch.ones(2, 3), 0.5, ValueError),
])
def test_tau_for_max_weight_bad_input(scores, target, exc):
    with pytest.raises(exc):
        tau_for_max_weight(scores, target)


def test_tau_for_max_weight_out_of_range():
    with pytest.raises(ValueError, match="widen"):
        tau_for_max_weight(Z, 0.9, lo=1.0, hi=2.0)  # the top weight is at most 0.63 there


# --------------------------------------------------------------------------- seed-003 scores, sampling


def test_bae_scores_match_scaled_dot_product():
    tokens, s = bae_scores()
    assert tokens[2] == "배" and s.shape == (8, 8)
    x = torch.tensor([[0.5, 0.3, 0.2, 0.1]], dtype=torch.float64)  # the row of '배' in X
    w_q = torch.tensor([[0.5, 0.1, 0.2, 0.2], [0.2, 0.3, 0.1, 0.4], [0.1, 0.5, 0.3, 0.1],
                        [0.3, 0.1, 0.4, 0.2]], dtype=torch.float64)
    w_k = torch.tensor([[0.4, 0.2, 0.1, 0.3], [0.1, 0.3, 0.2, 0.5], [0.2, 0.4, 0.5, 0.1],
                        [0.3, 0.2, 0.1, 0.4]], dtype=torch.float64)
    # The '배' query against its own key: (x W_Q)·(x W_K) / √4.
    assert s[2, 2].item() == pytest.approx(((x @ w_q) @ (x @ w_k).T).item() / 2)
    assert int(s[2].argmax()) == 2


def test_sample_tokens_is_seeded_and_follows_temperature():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    a = sample_tokens(logits, 1.0, n=500, seed=3)
    assert torch.equal(a, sample_tokens(logits, 1.0, n=500, seed=3))
    assert a.sum().item() == 500 and a.shape == (4,)
    assert sample_tokens(logits, 1e-3, n=200)[0].item() == 200
    hot = sample_tokens(logits, 100.0, n=4000, seed=1).double() / 4000
    torch.testing.assert_close(hot, torch.full((4,), 0.25, dtype=torch.float64), atol=0.03, rtol=0)


@pytest.mark.parametrize("kw, exc", [({"n": 0}, ValueError), ({"n": 2.5}, ValueError),
                                     ({"tau": 0.0}, ValueError), ({"logits": torch.ones(2, 2)}, ValueError)])
def test_sample_tokens_bad_input(kw, exc):
    args = {"logits": torch.zeros(3), "tau": 1.0, "n": 10} | kw
    with pytest.raises(exc):
        sample_tokens(args["logits"], args["tau"], args["n"])


# --------------------------------------------------------------------------- drawing and widget


@pytest.mark.parametrize("tau", [10.0, 1.0, 0.01, 0.001])
def test_draw_temperature_returns_softmax_weights(tau):
    tokens, s = bae_scores()
    w = draw_temperature(s, tokens, tau, 2)
    np.testing.assert_allclose(w, torch.softmax(s / tau, dim=-1).numpy(), atol=1e-12)
    fig = plt.gcf()
    left, right = fig.axes[0], fig.axes[1]
    assert f"τ = {tau:.3g}" in left.get_title()
    assert "'배' 행" in right.get_title()
    heights = [p.get_height() for p in right.patches]
    np.testing.assert_allclose(heights, w[2], atol=1e-12)


def test_draw_temperature_compact_on_given_axes():
    tokens, s = bae_scores()
    fig, axes = plt.subplots(2, 1)
    w = draw_temperature(s, tokens, 0.003, 5, axes=axes, compact=True)
    assert len(fig.axes) == 2  # compact: no colour bar added
    assert not any(t.get_visible() for t in axes[1].texts)
    assert w.argmax(axis=1).tolist() == [2] * 8


@pytest.mark.parametrize("args, exc", [
    ((torch.zeros(3, 3), ["a", "b"], 1.0, 0), ValueError),
    ((torch.zeros(3), ["a", "b", "c"], 1.0, 0), ValueError),
    ((torch.zeros(2, 3), ["a", "b"], 1.0, 0), ValueError),
    ((torch.zeros(3, 3), ["a", "b", "c"], 1.0, 3), ValueError),
    ((torch.zeros(3, 3), ["a", "b", "c"], 1.0, 1.0), ValueError),
    ((torch.zeros(3, 3), ["a", "b", "c"], -1.0, 0), ValueError),
])
def test_draw_temperature_bad_input(args, exc):
    with pytest.raises(exc):
        draw_temperature(*args)


def test_temperature_explorer_has_one_log_slider_that_redraws():
    import ipywidgets as widgets

    tokens, s = bae_scores()
    box = temperature_explorer(s, tokens, row=2, tau=1.0)
    sliders = [c for c in box.children if isinstance(c, widgets.FloatLogSlider)]
    assert len(sliders) == 1
    slider = sliders[0]
    assert slider.base == 10 and (slider.min, slider.max) == (-3.0, 1.0) and slider.value == 1.0
    before = len(plt.get_fignums())
    slider.value = 0.01  # the interactive_output callback runs without a browser
    assert len(plt.get_fignums()) == before + 1
    assert "τ = 0.01" in plt.gcf().axes[0].get_title()


# --------------------------------------------------------------------------- exercise checkers


def _msg(exercise_id, answer):
    result = check(exercise_id, answer)
    return result.passed, result.message


def test_05_1_accepts_stable_softmax():
    def good(z, tau):
        e = torch.exp((z - z.max()) / tau)
        return e / e.sum()

    assert _msg("05-1", good)[0]
    assert _msg("05-1", lambda z, tau: torch.softmax(z / tau, dim=-1))[0]


@pytest.mark.parametrize("fn, words", [
    (lambda z, tau: torch.exp(z / tau) / torch.exp(z / tau).sum(), "넘칩니다"),
    (lambda z, tau: torch.softmax(z * tau, dim=-1), "곱했습니다"),
    (lambda z, tau: torch.softmax(z, dim=-1), "빠뜨렸습니다"),
    (lambda z, tau: torch.exp((z - z.max()) / tau), "합이"),
    (lambda z, tau: torch.softmax(z / tau, dim=-1)[:-1], "모양"),
    (lambda z, tau: 1 / 0, "ZeroDivisionError"),
])
def test_05_1_rejects_typical_mistakes(fn, words):
    passed, message = _msg("05-1", fn)
    assert not passed and words in message


def test_05_2_accepts_safe_entropy():
    assert _msg("05-2", lambda w: -torch.special.xlogy(w, w).sum())[0]


@pytest.mark.parametrize("fn, words", [
    (lambda w: -(w * w.log()).sum(), "NaN"),
    (lambda w: torch.special.xlogy(w, w).sum(), "부호"),
    (lambda w: -torch.special.xlogy(w, w).sum() / math.log(2), "밑이 2"),
    (lambda w: -torch.special.xlogy(w, w), "숫자 하나"),
    (lambda w: -(w * (w + 1e-3).log()).sum(), "정답"),
])
def test_05_2_rejects_typical_mistakes(fn, words):
    passed, message = _msg("05-2", fn)
    assert not passed and words in message


def test_05_3_accepts_tau_for_half():
    _, s = bae_scores()
    tau = tau_for_max_weight(s[2], 0.5)
    assert _msg("05-3", tau)[0]
    assert _msg("05-3", torch.tensor(tau))[0]


@pytest.mark.parametrize("answer, words", [
    (1.0, "τ를 줄이세요"), (0.001, "τ를 키우세요"), (0.0, "0보다 큰"), (-0.02, "0보다 큰"),
    ("0.02", "숫자 하나"), (True, "숫자 하나"),
])
def test_05_3_rejects_wrong_tau(answer, words):
    passed, message = _msg("05-3", answer)
    assert not passed and words in message


def test_stub_answers_say_not_yet():
    def stub(*args):
        raise NotImplementedError

    for exercise_id in ("05-1", "05-2"):
        assert "아직 구현하지" in _msg(exercise_id, stub)[1]
    assert "비어 있습니다" in _msg("05-3", ...)[1]
