"""Notebook 03: the saved lesson code (helpers.lessons.query_key_value), its explorer and the 03 checkers."""

import math
import re

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.attention import scaled_dot_product_attention as core_attention
from helpers.exercises import check
from helpers.exercises.ex03 import chicken_weight
from helpers.lessons.query_key_value import (
    CHICKEN_TOKENS,
    SelfAttention,
    chicken_example,
    query_explorer_figure,
    scaled_dot_product_attention,
)
from helpers.lessons.query_key_value import attention_scores as lesson_attention_scores
from helpers.lessons.query_key_value import scaled_dot_product_attention as sdpa
from helpers.plots import use_korean_font
from helpers.widgets import Explorer

pytestmark = pytest.mark.notebook("03")  # `python3 course.py test 03` runs this module


@pytest.fixture(autouse=True)
def _close_figures():
    use_korean_font()  # Hangul labels without missing-glyph warnings
    yield
    plt.close("all")


def _random(seed, *shapes, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g, dtype=dtype) for s in shapes]


# --------------------------------------------------------------------------- scaled_dot_product_attention()


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_attention_matches_torch_and_core_with_masks(dtype, tol):
    q, k, v = _random(0, (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4), dtype=dtype)
    padding = (torch.arange(7) < torch.tensor([7, 4])[:, None])[:, None, None, :]  # (B, 1, 1, T_k)
    causal = torch.ones(5, 7, dtype=torch.bool).tril()
    for mask in (None, padding, causal, padding & causal):
        out, w = scaled_dot_product_attention(q, k, v, mask)
        assert out.shape == (2, 3, 5, 4) and w.shape == (2, 3, 5, 7)
        assert (out - F.scaled_dot_product_attention(q, k, v, attn_mask=mask)).abs().max() < tol
        core_out, core_w = core_attention(q, k, v, mask)
        assert (w - core_w).abs().max() < tol and (out - core_out).abs().max() < tol
    _, w = scaled_dot_product_attention(q, k, v, padding)
    assert torch.all(w[1, ..., 4:] == 0)


def test_attention_scores_are_scaled_and_masked_with_minus_inf():
    q, k = _random(3, (2, 4, 9), (2, 5, 9))
    mask = torch.ones(4, 5, dtype=torch.bool).tril()
    scores = lesson_attention_scores(q, k, mask)
    torch.testing.assert_close(scores[..., mask], (q @ k.transpose(-2, -1) / 3.0)[..., mask])
    assert torch.isneginf(scores[..., ~mask]).all()
    torch.testing.assert_close(lesson_attention_scores(q, k), q @ k.transpose(-2, -1) / 3.0)


def test_attention_unbatched_and_cross_shapes():
    q, k, v = _random(1, (3, 6), (5, 6), (5, 2))
    out, w = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(w, torch.softmax(q @ k.T / math.sqrt(6), -1))
    assert out.shape == (3, 2)


def test_self_attention_module_keeps_batch_items_apart():
    torch.manual_seed(0)
    module = SelfAttention(d_model=4, d_k=4)
    x = torch.randn(4, 4, 4)
    x2 = x.clone()
    x2[1] += 1.0
    with torch.no_grad():
        (y, _), (y2, _) = module(x), module(x2)
        want, _ = scaled_dot_product_attention(module.w_q(x), module.w_k(x), module.w_v(x))
    assert torch.equal(y[0], y2[0]) and not torch.equal(y[1], y2[1])
    torch.testing.assert_close(y, want)
    assert SelfAttention(8, 4, 3)(torch.randn(2, 5, 8))[0].shape == (2, 5, 3)


# --------------------------------------------------------------------------- the designed example


def test_chicken_example_is_asymmetric_and_has_the_closed_form():
    X, W_Q, W_K, W_V = chicken_example(3.0)
    _, w = scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)
    eat, chicken = CHICKEN_TOKENS.index("먹었다"), CHICKEN_TOKENS.index("치킨을")
    assert w[eat, chicken] > 0.98 and w[chicken, eat] == 1 / 8
    for c in (0.5, 1.0, 2.4, 3.0):
        s = c * c / math.sqrt(2)
        assert math.isclose(chicken_weight(c), math.exp(s) / (math.exp(s) + 7), rel_tol=1e-12)


# --------------------------------------------------------------------------- the query explorer


def test_query_explorer_updates_bars_in_place():
    scores = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]], dtype=torch.float64)
    fig, update = query_explorer_figure(scores, ["a", "b", "c"])
    ax = fig.axes[0]
    bars_before = list(ax.patches)
    explorer = Explorer(
        fig,
        update,
        {
            "query": widgets.SelectionSlider(options=[("a", 0), ("b", 1)], value=0),
            "scale": widgets.FloatLogSlider(value=1.0, base=10, min=0, max=2),
        },
    )
    torch.testing.assert_close(explorer.last, torch.softmax(scores[0], -1))
    png = explorer.png
    explorer.set(query=1, scale=2.0)
    torch.testing.assert_close(explorer.last, torch.softmax(scores[1] * 2.0, -1))
    assert [p.get_height() for p in ax.patches] == pytest.approx(explorer.last.tolist())
    assert list(ax.patches) == bars_before  # same artists, new heights
    assert "'b'" in ax.get_title() and "'a'" in ax.get_title()  # query b, winner a
    assert explorer.png != png and explorer.renders == 3


def test_query_panels_for_the_static_grid():
    scores = torch.zeros(2, 4)
    fig, update = query_explorer_figure(scores, list("wxyz"), n_panels=2)
    assert len(fig.axes) == 2
    assert update(1, 5.0, panel=1).tolist() == pytest.approx([0.25] * 4)
    assert "'x'" in fig.axes[1].get_title()


# --------------------------------------------------------------------------- exercise 03-1


def good_self_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    w = torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), -1)
    return w @ V, w


def test_03_1_accepts_correct():
    assert check("03-1", good_self_attention).passed


def _variant(weights_fn=None, output_fn=None):
    def fn(X, W_Q, W_K, W_V):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        w = weights_fn(X, Q, K) if weights_fn else torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), -1)
        out = output_fn(X, Q, V, w) if output_fn else w @ V
        return out, w

    return fn


@pytest.mark.parametrize(
    "fn, text",
    [
        (_variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T, -1)), "√d_k로 나누지 않았습니다"),
        (
            _variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T / math.sqrt(X.shape[1]), -1)),
            "√d_model = √4로 나눴",
        ),
        (_variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T / math.sqrt(3), -1)), "√d_v = √3으로 나눴"),
        (_variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T / Q.shape[-1], -1)), "d_k=6으로 나눴습니다"),
        (_variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T / math.sqrt(6), 0)), "열 방향"),
        (_variant(weights_fn=lambda X, Q, K: torch.softmax(K @ Q.T / math.sqrt(6), -1)), "전치"),
        (_variant(weights_fn=lambda X, Q, K: torch.softmax(X @ X.T / 2, -1)), "투영하지 않은 X"),
        (_variant(weights_fn=lambda X, Q, K: Q @ K.T / math.sqrt(6)), r"점수\(QKᵀ/√d_k\)를 돌려줬습니다"),
        (_variant(output_fn=lambda X, Q, V, w: w @ X), "출력에 X를 섞었나요"),
        (_variant(output_fn=lambda X, Q, V, w: w @ Q), "쿼리나 키"),
        (_variant(output_fn=lambda X, Q, V, w: 2 * (w @ V)), "가중치는 맞지만 output"),
        (lambda X, W_Q, W_K, W_V: X, r"\(output, weights\) 두 개"),
        (lambda X, W_Q, W_K, W_V: (X @ W_V, torch.ones(5, 4)), r"\(T, T\) = \(5, 5\)"),
        ("not a function", "함수를 넘겨야"),
        (lambda X, W_Q, W_K, W_V: X @ X @ X, "오류를 냈습니다"),
        (lambda X, W_Q, W_K, W_V: good_self_attention(X, W_Q, W_K, W_V)[::-1], "순서가 바뀌었습니다"),
    ],
)
def test_03_1_rejects_typical_mistakes(fn, text):
    result = check("03-1", fn)
    assert not result.passed
    assert re.search(text, result.message), result.message


def _with_lesson_attention_scores(X, W_Q, W_K, W_V):
    w = torch.softmax(lesson_attention_scores(X @ W_Q, X @ W_K), -1)  # section 2's attention_scores, renamed
    return w @ (X @ W_V), w


def _with_sdpa(X, W_Q, W_K, W_V):
    return sdpa(X @ W_Q, X @ W_K, X @ W_V)  # section 2's scaled_dot_product_attention, renamed


def _with_core_attention(X, W_Q, W_K, W_V):
    return core_attention(X @ W_Q, X @ W_K, X @ W_V)  # helpers.attention's checked copy, renamed


@pytest.mark.parametrize(
    "fn",
    [
        lambda X, W_Q, W_K, W_V: scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V),
        _with_lesson_attention_scores,
        _with_sdpa,
        _with_core_attention,
        lambda X, W_Q, W_K, W_V: (
            F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V),
            torch.softmax((X @ W_Q) @ (X @ W_K).T / math.sqrt(W_Q.shape[1]), -1),
        ),
    ],
)
def test_03_1_rejects_the_section_2_function(fn):
    """The text says: write it out, without section 2's scaled_dot_product_attention."""
    result = check("03-1", fn)
    assert not result.passed and "2절의 함수 없이" in result.message, result.message


def attention_scores(Q, K):
    """A learner's own helper that happens to share section 2's name (a global of this module, as in a notebook)."""
    return Q @ K.T / math.sqrt(Q.shape[-1])


def self_attention_with_own_helper(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    w = torch.softmax(attention_scores(Q, K), -1)
    return w @ V, w


def test_03_1_accepts_a_learners_own_helper_named_like_section_2():
    """Only the library's functions are off limits, not a name: the learner's attention_scores is fine."""
    result = check("03-1", self_attention_with_own_helper)
    assert result.passed, result.message


def test_03_1_stub_says_not_implemented():
    def stub(X, W_Q, W_K, W_V):
        raise NotImplementedError

    result = check("03-1", stub)
    assert not result.passed and "구현하지 않았습니다" in result.message


# --------------------------------------------------------------------------- exercise 03-2


def good_cross(dec, enc, W_Q, W_K, W_V):
    Q, K, V = dec @ W_Q, enc @ W_K, enc @ W_V
    w = torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), -1)
    return w @ V, w


def test_03_2_accepts_correct():
    assert check("03-2", good_cross).passed


@pytest.mark.parametrize(
    "fn, text",
    [
        (lambda dec, enc, *w: good_cross(enc, dec, *w), "쿼리를 인코더에서"),
        (lambda dec, enc, *w: good_cross(dec, dec, *w), "키를 디코더에서"),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (dec @ W_V), wts))(
                torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(6), -1)
            ),
            "키와 밸류는 둘 다 인코더",
        ),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (enc @ W_V), wts))(
                torch.softmax(dec @ W_Q @ (enc @ W_K).T, -1)
            ),
            "√d_k로 나누지 않았습니다",
        ),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ enc, wts))(
                torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(6), -1)
            ),
            "output의 모양",
        ),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (enc @ W_V), wts))(
                torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(6), 0)
            ),
            "열 방향",
        ),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda s: (torch.softmax(s, -1) @ (enc @ W_V), s))(
                dec @ W_Q @ (enc @ W_K).T / math.sqrt(6)
            ),
            "점수(QKᵀ/√d_k)를 돌려줬습니다",
        ),
        (lambda dec, enc, *w: good_cross(dec, enc, *w)[::-1], "순서가 바뀌었습니다"),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (enc @ W_V), wts))(
                torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(4), -1)
            ),
            "√d_model = √4로 나눴습니다",  # the same diagnoses as 03-1, not just the differing entry
        ),
        (
            lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (enc @ W_V), wts))(
                torch.softmax(dec @ W_Q @ (enc @ W_K).T / 6, -1)
            ),
            "d_k=6으로 나눴습니다",
        ),
    ],
)
def test_03_2_rejects_typical_mistakes(fn, text):
    result = check("03-2", fn)
    assert not result.passed and text in result.message, result.message


def _cross_via_section_2(dec, enc, W_Q, W_K, W_V):
    return sdpa(dec @ W_Q, enc @ W_K, enc @ W_V)  # section 2's function, imported under another name


@pytest.mark.parametrize(
    "fn",
    [
        lambda dec, enc, W_Q, W_K, W_V: scaled_dot_product_attention(dec @ W_Q, enc @ W_K, enc @ W_V),
        lambda dec, enc, W_Q, W_K, W_V: core_attention(dec @ W_Q, enc @ W_K, enc @ W_V),
        lambda dec, enc, W_Q, W_K, W_V: (lambda w: (w @ (enc @ W_V), w))(
            torch.softmax(lesson_attention_scores(dec @ W_Q, enc @ W_K), -1)
        ),
        _cross_via_section_2,
    ],
)
def test_03_2_rejects_the_section_2_functions(fn):
    """Like 03-1: the text asks for the cross attention written out, without section 2's functions."""
    result = check("03-2", fn)
    assert not result.passed and "03-1처럼 2절의 함수 없이" in result.message, result.message


# --------------------------------------------------------------------------- exercise 03-3


def test_03_3_accepts_the_exact_strength():
    c = math.sqrt(math.sqrt(2) * math.log(63))
    for answer in (c, -c, torch.tensor(c, dtype=torch.float64), round(c, 3), np.array(2.4206), np.float32(c)):
        result = check("03-3", answer)
        assert result.passed and "ln 63" in result.message, result.message


@pytest.mark.parametrize(
    "c, text",
    [
        (10**9, "크게 할수록 통과하는 문제가 아닙니다"),
        (2.43, "0.9029로 0.9보다 조금 큽니다: 식으로 정확한 c를 구하세요"),
        (2.41, "0.9보다 조금 작습니다: 식으로 정확한 c를 구하세요"),
        (np.array([2.4, 2.5]), "숫자 하나여야"),
        (5.0, "0.9보다 큽니다"),
        (1.0, "0.2246으로 0.9보다 작습니다"),
        (math.sqrt(math.log(63)), "√d_k로 나누는 것을 빠뜨렸습니다"),
        (math.sqrt(math.sqrt(2) * math.log(9)), "다른 키 7개를 빠뜨렸습니다"),
        (math.sqrt(2) * math.log(63), "c²/√2"),
        (math.sqrt(math.sqrt(2) * math.log10(63)), "자연로그"),
        (0, "1/8"),
        ("2.4", "숫자 하나"),
        (float("inf"), "유한한 수가 아닙니다"),
        (..., "답이 비어 있습니다"),
    ],
)
def test_03_3_diagnoses(c, text):
    result = check("03-3", c)
    assert not result.passed and text in result.message, result.message


# --------------------------------------------------------------------------- defining properties (sharp)


def test_scores_are_the_dot_products_divided_by_sqrt_dk_exactly():
    q, k = _random(3, (2, 5, 16), (2, 7, 16))
    torch.testing.assert_close(lesson_attention_scores(q, k) * 4.0, q @ k.transpose(-2, -1), rtol=1e-14, atol=0)


def test_attention_with_huge_scores_is_finite_and_each_row_sums_to_one():
    """Scores in the tens of thousands (01's softmax must subtract the max): weights finite, rows sum to 1,
    the output a convex combination of the values."""
    q, k, v = _random(4, (1, 6, 8), (1, 6, 8), (1, 6, 3), dtype=torch.float32)
    out, w = sdpa(q * 1e4, k, v)
    assert torch.isfinite(w).all() and torch.isfinite(out).all(), "attention overflowed at large scores"
    torch.testing.assert_close(w.sum(dim=-1), torch.ones(1, 6))
    assert (out <= v.amax(dim=-2, keepdim=True) + 1e-5).all() and (out >= v.amin(dim=-2, keepdim=True) - 1e-5).all()
