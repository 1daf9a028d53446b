"""helpers.plots, helpers.widgets, helpers.exercises (the 01 checkers), helpers.setup."""

import time
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import helpers  # noqa: E402
import helpers.widgets  # noqa: E402
from helpers.exercises import EXERCISES, CheckResult, check  # noqa: E402
from helpers.plots import attention_heatmap, weight_bars  # noqa: E402
from helpers.widgets import draw_softmax, softmax_explorer  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _render(fig) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    return [str(w.message) for w in caught]


def test_korean_font_renders_hangul_and_minus_without_warnings():
    helpers.setup()
    fig, ax = plt.subplots()
    ax.set_title("어텐션 가중치 −1")
    ax.plot([-1, 1], [-2, 2])
    assert _render(fig) == []
    assert matplotlib.rcParams["axes.unicode_minus"] is True
    assert "NanumGothic" in matplotlib.rcParams["font.family"]


def test_heatmap_labels_and_values():
    w = torch.tensor([[0.7, 0.3], [0.1, 0.9]])
    ax = attention_heatmap(w, ["나는", "학생"], ["키1", "키2"], title="제목")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["키1", "키2"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["나는", "학생"]
    assert sorted(t.get_text() for t in ax.texts) == ["0.10", "0.30", "0.70", "0.90"]
    assert _render(ax.figure) == []


def test_heatmap_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        attention_heatmap(torch.zeros(2, 2, 2))
    with pytest.raises(ValueError, match="key_labels has 3 labels but the matrix has 2"):
        attention_heatmap(torch.zeros(2, 2), key_labels=["a", "b", "c"])


def test_weight_bars_values():
    ax = weight_bars([0.25, 0.75], ["가", "나"])
    assert [round(p.get_height(), 2) for p in ax.patches] == [0.25, 0.75]


def test_draw_softmax_returns_weights_and_weighted_sum():
    values = [80.0, 60.0, 100.0]
    fig, axes = plt.subplots(1, 2)
    w = draw_softmax([0.0, 0.0, np.log(2.0)], ["a", "b", "c"], values=values, axes=axes)
    np.testing.assert_allclose(w, [0.25, 0.25, 0.5])
    assert axes[1].get_title() == "가중합 = 85.00"
    np.testing.assert_allclose([p.get_height() for p in axes[1].patches], w)
    assert _render(fig) == []


def test_draw_softmax_is_fast_and_checks_lengths():
    start = time.perf_counter()
    draw_softmax([1.0, -2.0, 0.5, 3.0], ["국어", "영어", "수학", "탐구"])
    plt.gcf().canvas.draw()
    assert time.perf_counter() - start < 2.0  # generous: a redraw must feel instant
    with pytest.raises(ValueError, match="one score per label"):
        draw_softmax([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="one value per label"):
        draw_softmax([1.0, 2.0], ["a", "b"], values=[1.0])


def test_softmax_explorer_slider_changes_the_figure(monkeypatch):
    import ipywidgets as widgets

    calls = []
    monkeypatch.setattr(helpers.widgets, "draw_softmax", lambda scores, labels, **kw: calls.append(list(scores)))
    box = softmax_explorer(["a", "b"], [0.0, 1.0], values=[10.0, 20.0])
    sliders = [c for c in box.children if isinstance(c, widgets.FloatSlider)]
    assert [s.value for s in sliders] == [0.0, 1.0]
    assert isinstance(box.children[-1], widgets.Output)
    assert calls[-1] == [0.0, 1.0]  # drawn once on creation
    sliders[0].value = 2.5
    assert calls[-1] == [2.5, 1.0]  # moving a slider redraws with the new scores


# --------------------------------------------------------------------------- exercises


def test_check_result_prints_clearly():
    r = CheckResult("01-1", False, "무엇이 틀렸는지")
    assert repr(r) == "[01-1] ❌ 아직: 무엇이 틀렸는지" and not r
    assert repr(CheckResult("01-1", True, "좋아요")).startswith("[01-1] ✅ 정답") and CheckResult("x", True, "")


def test_check_unknown_id_and_empty_answers():
    with pytest.raises(KeyError, match="unknown exercise '99-9'"):
        check("99-9", 1)
    assert "비어 있습니다" in check("01-3", ...).message
    assert "비어 있습니다" in check("01-3", None).message


def test_ex01_1_weighted_average():
    assert check("01-1", lambda s, w: (w * s).sum() / w.sum()).passed
    by_count = check("01-1", lambda s, w: (w * s).sum() / len(s))
    assert not by_count and "항목 수" in by_count.message and "가중치의 합" in by_count.message
    plain = check("01-1", lambda s, w: s.mean())
    assert not plain and "단순 평균" in plain.message
    stopped = check("01-1", lambda s, w: (w * s).sum())
    assert not stopped and "가중합" in stopped.message
    crash = check("01-1", lambda s, w: s @ "x")
    assert not crash and "오류" in crash.message
    assert "구현하지 않았습니다" in check("01-1", _not_implemented).message


def _not_implemented(*args):
    raise NotImplementedError


def test_ex01_2_softmax():
    assert check("01-2", lambda z: torch.exp(z - z.max()) / torch.exp(z - z.max()).sum()).passed
    naive = check("01-2", lambda z: torch.exp(z) / torch.exp(z).sum())
    assert not naive and "최댓값을 빼세요" in naive.message
    no_norm = check("01-2", lambda z: torch.exp(z - z.max()))
    assert not no_norm and "합이" in no_norm.message
    no_exp = check("01-2", lambda z: z / z.sum())
    assert not no_exp and "합으로 나눈 값" in no_exp.message
    by_min = check("01-2", lambda z: torch.exp(z - z.min()) / torch.exp(z - z.min()).sum())
    assert not by_min and "최솟값이 아니라" in by_min.message
    underflow = check("01-2", lambda z: torch.exp(z) / torch.exp(z).sum() if z.max() < 0 else torch.softmax(z, 0))
    assert not underflow and "0/0" in underflow.message
    float32 = check("01-2", lambda z: torch.softmax(z.float(), 0))  # float32 rounding is not an error
    assert float32.passed, float32.message
    wrong_shape = check("01-2", lambda z: torch.softmax(z, 0)[:1])
    assert not wrong_shape and "모양" in wrong_shape.message


def test_ex01_3_scores_for_weights():
    assert check("01-3", torch.log(torch.tensor([0.7, 0.2, 0.1])) + 5).passed
    assert check("01-3", [np.log(7.0), np.log(2.0), 0.0]).passed
    wrong = check("01-3", [0.7, 0.2, 0.1])  # the weights themselves, not scores
    assert not wrong and "그대로 넣었습니다" in wrong.message and "log" in wrong.message
    near = check("01-3", [2.0, 1.0, 0.0])
    assert not near and "log" in near.message and "[0.7, 0.2, 0.1]" in near.message
    assert "3개" in check("01-3", [1.0, 2.0]).message


def test_every_registered_exercise_id_is_well_formed():
    assert {"01-1", "01-2", "01-3"} <= set(EXERCISES)
    for key in EXERCISES:
        number, k = key.split("-")
        assert len(number) == 2 and number.isdigit() and k.isdigit()


def test_setup_is_deterministic():
    helpers.setup()
    a = torch.randn(3)
    helpers.setup()
    assert torch.equal(a, torch.randn(3))
