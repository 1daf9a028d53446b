"""helpers.plots, helpers.setup, the check() mechanism, and notebook 01: its saved code and its checkers."""

import functools
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import helpers
from helpers.exercises import EXERCISES, CheckResult, check
from helpers.lessons.weighted_average import (
    softmax,
    softmax_explorer,
    softmax_panels,
    softmax_small_multiples,
    weight_bars,
)
from helpers.plots import attention_heatmap

pytestmark = pytest.mark.notebook("01")  # `python3 course.py test 01` runs this module


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


# --------------------------------------------------------------------------- notebook 01's saved code


@pytest.mark.parametrize(
    "z",
    [
        torch.tensor([2.0, -1.0, 0.5]),
        torch.tensor([1000.0, 1001.0, 1002.0]),
        torch.tensor([-1000.0, -999.0]),
        torch.randn(2, 3, 5) * 50,
        torch.randn(4, 6, dtype=torch.float64),
    ],
)
def test_lesson_softmax_matches_torch_and_core(z):
    torch.testing.assert_close(softmax(z), torch.softmax(z, dim=-1))
    torch.testing.assert_close(softmax(z), helpers.attention.softmax(z))
    assert torch.isfinite(softmax(z)).all()


def test_lesson_softmax_along_another_dim():
    z = torch.randn(3, 4)
    torch.testing.assert_close(softmax(z, dim=0), torch.softmax(z, dim=0))


def test_softmax_panels_returns_weights_and_weighted_sum():
    fig, axes = plt.subplots(1, 2)
    update = softmax_panels(*axes, ["a", "b", "c"], values=[80.0, 60.0, 100.0])
    w = update([0.0, 0.0, np.log(2.0)])
    np.testing.assert_allclose(w, [0.25, 0.25, 0.5])
    assert axes[1].get_title() == "가중합 = 85.00"
    np.testing.assert_allclose([p.get_height() for p in axes[1].patches], w)
    assert [t.get_text() for t in axes[1].texts] == ["0.25", "0.25", "0.50"]
    # the scores are all >= 0: every score bar is grey, none red (red marks a negative score)
    assert [p.get_facecolor() for p in axes[0].patches] == [matplotlib.colors.to_rgba("tab:gray")] * 3
    assert _render(fig) == []
    update([-1.0, 0.0, 0.0])  # a negative score is drawn red, the others stay grey
    assert [p.get_facecolor() for p in axes[0].patches] == [
        matplotlib.colors.to_rgba(c) for c in ("tab:red", "tab:gray", "tab:gray")
    ]
    assert axes[1].get_title().startswith("가중합 = ")


def test_softmax_panels_without_values_has_a_plain_title():
    fig, axes = plt.subplots(1, 2)
    softmax_panels(*axes, ["a", "b"])([0.0, 0.0])
    assert axes[1].get_title() == "소프트맥스 가중치: 양수, 합 1"


def test_softmax_small_multiples_draw_each_setting():
    settings = {"a": torch.zeros(3), "b": torch.tensor([0.0, 0.0, np.log(2.0)])}
    weights = softmax_small_multiples(["x", "y", "z"], settings, values=[80.0, 60.0, 100.0])
    np.testing.assert_allclose(weights["a"], [1 / 3] * 3)
    np.testing.assert_allclose(weights["b"], [0.25, 0.25, 0.5])
    fig = plt.gcf()
    assert [ax.get_title() for ax in fig.axes] == ["a: 점수", "b: 점수", "가중합 = 80.00", "가중합 = 85.00"]
    assert _render(fig) == []


def test_softmax_explorer_updates_in_place():
    import ipywidgets as widgets

    explorer = softmax_explorer(
        ["국어", "영어", "수학", "탐구"], [1.0, 0.5, 2.0, -1.0], values=[88.0, 92.0, 76.0, 63.0]
    )
    sliders = list(explorer.controls.values())
    assert all(isinstance(s, widgets.FloatSlider) and s.continuous_update for s in sliders)
    assert [s.description for s in sliders] == ["국어", "영어", "수학", "탐구"]
    np.testing.assert_allclose(
        explorer.last, torch.softmax(torch.tensor([1.0, 0.5, 2.0, -1.0], dtype=torch.float64), 0)
    )
    fig, artists = explorer.figure, list(explorer.figure.axes[1].patches)
    png, renders = explorer.png, explorer.renders
    explorer.set(s2=5.0)  # 수학 up: the weighted sum moves towards 76
    assert explorer.renders == renders + 1 and explorer.png != png
    assert explorer.figure is fig and list(fig.axes[1].patches) == artists  # same artists, changed in place
    assert explorer.last.argmax() == 2 and explorer.last[2] > 0.9
    assert fig.axes[1].patches[2].get_height() == pytest.approx(explorer.last[2])
    assert abs(float(fig.axes[1].get_title().split("=")[1]) - 76) < 2
    explorer.set(s0=2.0, s1=2.0, s2=2.0, s3=2.0)  # equal scores: uniform weights
    np.testing.assert_allclose(explorer.last, [0.25] * 4)
    assert fig.axes[1].get_title() == "가중합 = 79.75"
    assert fig.get_layout_engine() is None  # a layout engine would draw every frame twice


# --------------------------------------------------------------------------- exercises


def test_check_result_prints_clearly():
    r = CheckResult("01-1", False, "무엇이 틀렸는지")
    assert repr(r) == "[01-1] ❌ 아직: 무엇이 틀렸는지" and not r
    assert repr(CheckResult("01-1", True, "좋아요")).startswith("[01-1] ✅ 정답") and CheckResult("x", True, "")


def test_a_stub_is_reported_once_as_not_yet_written():
    def stub(values, weights):
        raise NotImplementedError

    r = check("01-1", stub)
    assert not r and r.pending and repr(r).startswith("[01-1] ❌ 아직 구현하지 않았습니다.")
    assert repr(r).count("아직") == 1  # not "❌ 아직: 아직 구현하지 …"


def test_check_unknown_id_and_empty_answers():
    with pytest.raises(KeyError, match="unknown exercise '99-9'") as err:
        check("99-9", 1)
    assert "04-1" in str(err.value) and "13-1" in str(err.value)  # every notebook's ids, loaded or not
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
    near = check("01-1", lambda s, w: (w * s).sum() / w.sum() * (1 + 1e-5))  # 80.0008: not "80, 기대값은 80"
    assert not near and "80.0008" in near.message and "기대값은 80입니다" in near.message, near.message
    assert "가깝지만 정확하지 않습니다" in near.message
    clamped = check("01-1", lambda s, w: (w * s).sum() / w.sum().clamp(min=1))  # right only when Σw >= 1
    assert not clamped and "기대값 78" in clamped.message, clamped.message
    far = check("01-1", lambda s, w: (w * s).sum() / w.sum() + 1)
    assert not far and "가깝지만" not in far.message, far.message
    assert "구현하지 않았습니다" in check("01-1", _not_implemented).message


def _not_implemented(*args):
    raise NotImplementedError


def _good_log_softmax(z):
    shifted = z - z.max()
    return shifted - torch.log(torch.exp(shifted).sum())


@pytest.mark.parametrize(
    "fn, words",
    [
        (lambda z: torch.log(torch.exp(z) / torch.exp(z).sum()), "넘쳐"),  # no max subtracted: inf/inf
        (lambda z: torch.log(torch.exp(z - z.max()) / torch.exp(z - z.max()).sum()), "−inf"),  # log(softmax)
        (lambda z: torch.log(torch.exp(z) / torch.exp(z).sum()) if z.max() < 0 else _good_log_softmax(z), "0/0"),
        (lambda z: torch.softmax(z, 0), "로그를 빠뜨렸습니다"),
        (lambda z: z - z.max(), "log Σ"),
        (lambda z: z - torch.log(torch.exp(z).sum()) if z.abs().max() < 100 else _good_log_softmax(z) + 0.5, "합"),
        (lambda z: _good_log_softmax(z)[:1], "모양"),
        # no max subtracted: exp(1000) = inf, log inf = inf, z - inf = -inf everywhere (overflow, not underflow)
        (lambda z: z - torch.log(torch.exp(z).sum()), "넘쳐(overflow) log Σ e^z = inf"),
        (lambda z: (z - z.min()) - torch.log(torch.exp(z - z.min()).sum()), "최솟값을 빼면"),
        (lambda z: z @ "x", "오류"),
    ],
)
def test_ex01_2_log_softmax_diagnoses(fn, words):
    result = check("01-2", fn)
    assert not result and words in result.message, result.message


def _wrapped_log_softmax(z):
    return F.log_softmax(z, dim=-1)


def _log_softmax_wrapper(z):
    return _wrapped_log_softmax(z)


def _keepdim_log_softmax(z):
    m = z.amax(dim=-1, keepdim=True)
    return z - m - torch.log(torch.exp(z - m).sum(dim=-1, keepdim=True))


@pytest.mark.parametrize(
    "fn",
    [
        lambda z: torch.log_softmax(z, dim=-1),
        lambda z: F.log_softmax(z, dim=-1),
        lambda z: z - torch.logsumexp(z, -1),
        lambda z: z - z.logsumexp(dim=-1),
        torch.log_softmax,
        lambda z: torch.nn.LogSoftmax(dim=-1)(z),
        lambda z: z - torch.logcumsumexp(z, -1)[..., -1:],
        lambda z: torch.distributions.Categorical(logits=z).logits,
        _log_softmax_wrapper,  # a helper of the learner's own around the forbidden function
        functools.partial(torch.log_softmax, dim=-1),
        functools.partial(F.log_softmax, dim=-1),
        # the classification loss is −log_softmax: one target per row gives every entry
        lambda z: -F.cross_entropy(z.expand(z.numel(), -1), torch.arange(z.numel()), reduction="none"),
        lambda z: -torch.nn.CrossEntropyLoss(reduction="none")(z.expand(z.numel(), -1), torch.arange(z.numel())),
        lambda z: z - functools.reduce(torch.logaddexp, z),  # logsumexp folded pairwise
        lambda z: torch.distributions.OneHotCategorical(logits=z).logits,
        lambda z: getattr(torch, "log_" + "softmax")(z, dim=-1),  # the name in a string (forbid_calls reads it)
    ],
)
def test_ex01_2_rejects_the_forbidden_shortcuts(fn):
    """The text allows exp, log, max and sum only: log_softmax and logsumexp are the answer, not a tool."""
    result = check("01-2", fn)
    assert not result and "torch.exp, torch.log, max, sum" in result.message, result.message


def test_ex01_2_log_softmax_accepts_right_answers():
    assert check("01-2", _good_log_softmax).passed
    assert check("01-2", _keepdim_log_softmax).passed
    float32 = check("01-2", lambda z: _good_log_softmax(z.float()))  # float32 rounding is not an error
    assert float32.passed, float32.message
    assert "구현하지 않았습니다" in check("01-2", _not_implemented).message


def test_ex01_3_scores_for_weights():
    assert check("01-3", torch.log(torch.tensor([0.7, 0.2, 0.1])) + 5).passed
    assert check("01-3", [np.log(7.0), np.log(2.0), 0.0]).passed
    wrong = check("01-3", [0.7, 0.2, 0.1])  # the weights themselves, not scores
    assert not wrong and "그대로 넣었습니다" in wrong.message and "log" in wrong.message
    near = check("01-3", [2.0, 1.0, 0.0])
    assert not near and "log" in near.message and "[0.7, 0.2, 0.1]" in near.message
    assert "3개" in check("01-3", [1.0, 2.0]).message
    for not_numbers in ("abc", lambda: [1.0, 2.0, 3.0]):  # a string, a function: say what to pass
        message = check("01-3", not_numbers).message
        assert "리스트나 텐서로 넘기세요" in message and "의 결과" not in message


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


def test_numeric_setup_records_what_changes_low_order_digits(monkeypatch):
    from helpers.data import NUMERIC_ENV, numeric_setup

    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS", raising=False)
    record = numeric_setup()
    assert record["torch"] == torch.__version__ and record["threads"] == torch.get_num_threads()
    assert record["env"]["ATEN_CPU_CAPABILITY"] == "default" and "MKL_ENABLE_INSTRUCTIONS" not in record["env"]
    assert set(record["env"]) <= set(NUMERIC_ENV) and record["cpu"] and record["cpu_capability"]


def test_particle_reads_numbers_and_syllables_in_korean():
    from helpers.exercises import particle

    cases = [
        ((8, "은/는"), "8은"),
        ((2, "은/는"), "2는"),
        (("1.0000", "으로/로"), "1.0000으로"),
        ((7, "으로/로"), "7로"),
        ((5, "으로/로"), "5로"),
        ((3, "이/가"), "3이"),
        ((4, "을/를"), "4를"),
        (("가중치", "이/가"), "가중치가"),
        (("점수", "을/를"), "점수를"),
        (("합", "으로/로"), "합으로"),
        (("길", "으로/로"), "길로"),
        (("결과", "과/와"), "결과와"),
        (("행렬", "과/와"), "행렬과"),
        (("q", "은/는"), "q은(는)"),
        (("(N, N)", "이/가"), "(N, N)이(가)"),
    ]
    for args, want in cases:
        assert particle(*args) == want, (args, particle(*args))
    with pytest.raises(ValueError, match="pair must be one of"):
        particle("x", "의")


def test_forbid_calls_sees_the_notebooks_own_copy_of_a_lesson_function(tmp_path):
    """In a notebook the saved cells run in __main__: their functions are still the lesson's, not the learner's."""
    import inspect
    import math

    import torch.nn.functional as F

    import helpers.lessons.query_key_value as qkv
    from helpers.exercises import check

    ns = {"__name__": "__main__", "math": math, "torch": torch, "F": F}
    for name in ("attention_scores", "scaled_dot_product_attention"):
        exec(compile(inspect.getsource(getattr(qkv, name)), "<cell>", "exec"), vars(qkv) | ns, ns)
    answer = tmp_path / "answer.py"  # a file, so that the checker can read the answer's source
    answer.write_text(
        "def self_attention(X, W_Q, W_K, W_V):\n    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)\n"
    )
    scope = dict(ns)
    exec(compile(answer.read_text(), str(answer), "exec"), scope)
    result = check("03-1", scope["self_attention"])
    assert not result.passed and "scaled_dot_product_attention" in result.message, result.message


FORBIDDEN_IN_A_LIST = [torch.softmax]


def _wrapped_softmax(x):
    return torch.softmax(x, dim=-1)


def test_forbid_calls_sees_through_wrappers_defaults_containers_and_partials():
    import functools

    from helpers.exercises import Wrong, forbid_calls

    sm = torch.softmax

    def via_default(x, f=torch.softmax):
        return f(x, dim=-1)

    def via_container(x):
        return [sm][0](x, dim=-1)

    def via_lambda_argument(x):
        return (lambda f: f(x, dim=-1))(sm)

    def via_wrapper(x):
        return _wrapped_softmax(x)

    def via_tuple_default(x, fns=(torch.softmax,)):
        return fns[0](x, dim=-1)

    def via_module_list(x):
        return FORBIDDEN_IN_A_LIST[0](x, dim=-1)

    partial = functools.partial(torch.softmax, dim=-1)
    for fn in (
        via_default,
        via_container,
        via_lambda_argument,
        via_wrapper,
        partial,
        via_tuple_default,
        via_module_list,
    ):
        with pytest.raises(Wrong, match="softmax"):
            forbid_calls(fn, {"softmax"}, "직접 쓰세요.")

    def own(x):
        return x.exp() / x.exp().sum()

    forbid_calls(own, {"softmax"}, "직접 쓰세요.")  # nothing forbidden: no error


# --------------------------------------------------------------------------- defining properties (sharp)
# Each taught algorithm's defining property, through the lesson function itself: a mutation of the lesson
# code (say, dropping the max subtraction) fails here in seconds (CONTRIBUTING.md, "Sharp tests").


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lesson_softmax_at_extreme_logits_is_finite_and_sums_to_one(dtype):
    from helpers.lessons.weighted_average import softmax as lesson_softmax

    z = torch.tensor([[1000.0, -1000.0, 999.0], [-1000.0, -1001.0, -1000.0], [0.0, 0.0, 0.0]], dtype=dtype)
    w = lesson_softmax(z)
    assert torch.isfinite(w).all(), f"softmax overflowed at ±1000 (the max is subtracted first): {w}"
    torch.testing.assert_close(w.sum(dim=-1), torch.ones(3, dtype=dtype), rtol=0, atol=1e-6)
    torch.testing.assert_close(w, torch.softmax(z, dim=-1))
    assert w[0, 1] == 0 and w[0, 0] > w[0, 2] > 0, "order kept, e^-2000 underflows to exactly 0"


def test_lesson_softmax_ignores_a_shift_and_sums_along_dim():
    from helpers.lessons.weighted_average import softmax as lesson_softmax

    z = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * 5
    torch.testing.assert_close(lesson_softmax(z + 700.0, dim=1), lesson_softmax(z, dim=1), rtol=0, atol=1e-12)
    torch.testing.assert_close(lesson_softmax(z, dim=1).sum(dim=1), torch.ones(2, 4, dtype=torch.float64))
