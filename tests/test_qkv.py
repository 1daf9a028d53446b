"""Unit tests for helpers.qkv (notebook 03): projections, seed data, query picker, exercise checkers."""

import math
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from helpers.exercises import check  # noqa: E402
from helpers.plots import use_korean_font  # noqa: E402
from helpers.qkv import (  # noqa: E402
    bae_top_weight,
    draw_query_grid,
    draw_query_weights,
    load_bae,
    load_i_am_a_student,
    max_abs_diff,
    project,
    qkv_attention,
    query_explorer,
)


@pytest.fixture(autouse=True)
def _close_figures():
    use_korean_font()   # Hangul labels without missing-glyph warnings
    yield
    plt.close("all")


def _random(seed, *shapes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g, dtype=torch.float64) for s in shapes]


# --------------------------------------------------------------------------- computations


def test_project_matches_bias_free_linear():
    x, w_q, w_k, w_v = _random(0, (5, 4), (4, 6), (4, 6), (4, 3))
    q, k, v = project(x, w_q, w_k, w_v)
    for got, w in ((q, w_q), (k, w_k), (v, w_v)):
        lin = torch.nn.Linear(4, w.shape[1], bias=False, dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(w.T)
        torch.testing.assert_close(got, lin(x))
    assert v.shape == (5, 3)


@pytest.mark.parametrize("args, error, text", [
    (([[1.0]], torch.eye(1), torch.eye(1), torch.eye(1)), TypeError, "x must be a torch.Tensor"),
    ((torch.ones(4), torch.eye(4), torch.eye(4), torch.eye(4)), ValueError, "2-D"),
    ((torch.ones(3, 4, dtype=torch.long), torch.eye(4), torch.eye(4), torch.eye(4)), ValueError, "floating-point"),
    ((torch.ones(3, 4), torch.ones(5, 4), torch.eye(4), torch.eye(4)), ValueError, "w_q must have 4 rows"),
    ((torch.ones(3, 4), torch.ones(4, 2), torch.ones(4, 3), torch.eye(4)), ValueError, "same d_k"),
])
def test_project_bad_input(args, error, text):
    with pytest.raises(error, match=text):
        project(*args)


def test_qkv_attention_self_and_cross_match_torch():
    x_q, x_kv, w_q, w_k, w_v = _random(1, (3, 4), (5, 4), (4, 6), (4, 6), (4, 2))
    for xq in (x_q, x_kv):  # cross (T_q=3, T_k=5), then self (5, 5)
        r = qkv_attention(xq, x_kv, w_q, w_k, w_v)
        q, k, v = xq @ w_q, x_kv @ w_k, x_kv @ w_v
        torch.testing.assert_close(r["scores"], q @ k.T / math.sqrt(6))
        torch.testing.assert_close(r["weights"], torch.softmax(q @ k.T / math.sqrt(6), dim=-1))
        torch.testing.assert_close(r["output"], F.scaled_dot_product_attention(q, k, v))
        assert r["weights"].shape == (xq.shape[0], 5) and r["output"].shape == (xq.shape[0], 2)


def test_qkv_attention_rejects_mismatched_d_model():
    x_q, x_kv, w = _random(2, (3, 4), (5, 3), (4, 4))
    with pytest.raises(ValueError, match="share d_model"):
        qkv_attention(x_q, x_kv, w, w, w)


def test_max_abs_diff_value_and_index():
    a = torch.zeros(2, 3)
    b = torch.zeros(2, 3)
    b[1, 2] = -0.5
    b[0, 0] = 0.1
    assert max_abs_diff(a, b) == (0.5, (1, 2))
    with pytest.raises(ValueError, match="shapes differ"):
        max_abs_diff(torch.zeros(2), torch.zeros(3))


# --------------------------------------------------------------------------- seed data


def test_bae_inputs_are_the_seeds():
    bae = load_bae()
    assert bae["tokens"] == ["어제", "밤에", "배", "가", "고파서", "치킨을", "시켜서", "먹었다"]
    assert bae["X"].shape == (8, 4) and all(bae[k].shape == (4, 4) for k in ("W_Q", "W_K", "W_V"))
    assert bae["X"][2].tolist() == [0.5, 0.3, 0.2, 0.1]
    assert bae["W_Q"][2].tolist() == [0.1, 0.5, 0.3, 0.1]
    assert bae["W_K"][1].tolist() == [0.1, 0.3, 0.2, 0.5]
    assert bae["W_V"][0].tolist() == [0.3, 0.1, 0.2, 0.4]
    assert bae["claims"]["weights"].shape == (8, 8) and bae["claims"]["strongest_key_for_bae"] == "고파서"


def test_bae_weights_nearly_uniform_and_led_by_bae():
    bae = load_bae()
    r = qkv_attention(bae["X"], bae["X"], bae["W_Q"], bae["W_K"], bae["W_V"])
    assert (r["weights"] - 1 / 8).abs().max() < 0.007
    assert (r["weights"].argmax(-1) == 2).all()
    # The seed's Q is not X W_Q (first row: 0.19 computed vs 0.17 printed).
    assert abs(r["Q"][0, 0] - 0.19) < 1e-12 and max_abs_diff(r["Q"], bae["claims"]["Q"])[0] > 0.1


def test_i_am_a_student_reproduces_stated_numbers():
    s = load_i_am_a_student()
    x_i = s["X"][0]
    assert x_i.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert torch.equal(x_i @ s["W_Q"], s["Q_I"]) and torch.equal(x_i @ s["W_K"], s["K_I"])
    assert torch.equal(x_i @ s["W_V"], s["V_I"])
    r = qkv_attention(s["X"], s["X"], s["W_Q"], s["W_K"], s["W_V"])
    assert r["scores"][0, 0] == s["score_I_I"] == 1.5
    assert s["tokens"][int(r["weights"][0].argmax())] == "am"   # not "I" itself


def test_bae_top_weight_grows_with_scale_and_keeps_winner():
    w1, tok1 = bae_top_weight(1.0)
    w50, tok50 = bae_top_weight(50.0)
    assert tok1 == tok50 == "배" and abs(w1 - 0.1311) < 1e-4 and w50 > 0.5
    with pytest.raises(ValueError, match="> 0"):
        bae_top_weight(0.0)


# --------------------------------------------------------------------------- query picker


def test_draw_query_weights_returns_the_softmax_row():
    scores = torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]])
    fig, ax = plt.subplots()
    w = draw_query_weights(scores, ["a", "b", "c"], 1, scale=2.0, query_tokens=["p", "b"], ax=ax)
    torch.testing.assert_close(torch.as_tensor(w), torch.softmax(scores[1].double() * 2.0, -1))
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx(w.tolist())
    assert "'b'" in ax.get_title() and "'a'" in ax.get_title()   # query b, winner a


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(query=3), ValueError, r"query must be an integer row index in \[0, 3\)"),
    (dict(query=True), ValueError, "query must be an integer"),
    (dict(query=0, scale=0.0), ValueError, "scale must be a finite number > 0"),
    (dict(query=0, scale="2"), TypeError, "scale must be a real number"),
])
def test_draw_query_weights_bad_input(kwargs, error, text):
    with pytest.raises(error, match=text):
        draw_query_weights(torch.zeros(3, 3), ["a", "b", "c"], **kwargs)


def test_draw_query_weights_wrong_label_count():
    with pytest.raises(ValueError, match="T_k=2"):
        draw_query_weights(torch.zeros(2, 3), ["a", "b"], 0)
    with pytest.raises(ValueError, match="one query label per row"):
        draw_query_weights(torch.zeros(2, 3), ["a", "b", "c"], 0)   # 3 labels for 2 query rows
    ax = plt.subplots()[1]
    draw_query_weights(torch.zeros(2, 3), ["a", "b", "c"], 1, query_tokens=["p", "q"], ax=ax)
    assert "'q'" in ax.get_title()


def test_draw_query_grid_shape_and_values():
    scores = torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    rows = draw_query_grid(scores, ["x", "y"], [0, 2], scales=(1.0, 10.0), query_tokens=["p", "q", "r"])
    assert rows.shape == (2, 2, 2)
    torch.testing.assert_close(torch.as_tensor(rows[1, 0]), torch.softmax(scores[0].double() * 10, -1))
    assert rows[0, 1].tolist() == pytest.approx([0.5, 0.5])
    with pytest.raises(ValueError, match="at least one query"):
        draw_query_grid(scores, ["x", "y"], [])


def test_query_explorer_builds_two_sliders():
    box = query_explorer(torch.zeros(3, 3), ["a", "b", "c"])
    pick, scale = box.children[:2]
    assert pick.value == 2 and scale.value == 1.0 and len(box.children) == 3


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


@pytest.mark.parametrize("fn, text", [
    (_variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T, -1)), "√d_k로 나누지 않았습니다"),
    (_variant(weights_fn=lambda X, Q, K: torch.softmax(Q @ K.T / Q.shape[-1], -1)), "d_k=6로 나눴습니다"),
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
])
def test_03_1_rejects_typical_mistakes(fn, text):
    result = check("03-1", fn)
    assert not result.passed
    assert re.search(text, result.message), result.message


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


@pytest.mark.parametrize("fn, text", [
    (lambda dec, enc, *w: good_cross(enc, dec, *w), "쿼리를 인코더에서"),
    (lambda dec, enc, *w: good_cross(dec, dec, *w), "키를 디코더에서"),
    (lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (dec @ W_V), wts))(
        torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(6), -1)), "키와 밸류는 둘 다 인코더"),
    (lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (enc @ W_V), wts))(
        torch.softmax(dec @ W_Q @ (enc @ W_K).T, -1)), "√d_k로 나누지 않았습니다"),
    (lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ enc, wts))(
        torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(6), -1)), "output의 모양"),
    (lambda dec, enc, W_Q, W_K, W_V: (lambda wts: (wts @ (enc @ W_V), wts))(
        torch.softmax(dec @ W_Q @ (enc @ W_K).T / math.sqrt(6), 0)), "열 방향"),
    (lambda dec, enc, W_Q, W_K, W_V: (lambda s: (torch.softmax(s, -1) @ (enc @ W_V), s))(
        dec @ W_Q @ (enc @ W_K).T / math.sqrt(6)), "점수(QKᵀ/√d_k)를 돌려줬습니다"),
])
def test_03_2_rejects_typical_mistakes(fn, text):
    result = check("03-2", fn)
    assert not result.passed and text in result.message, result.message


# --------------------------------------------------------------------------- exercise 03-3


@pytest.mark.parametrize("c", [43, 50.0, 100, torch.tensor(60.0)])
def test_03_3_accepts_large_enough_scale(c):
    result = check("03-3", c)
    assert result.passed and "'배' 자신" in result.message


@pytest.mark.parametrize("c, text", [
    (10, "아직 0.5보다 작습니다"),
    (0.5, "1보다 크게"),
    (-100, "≤ 0"),
    ("50", "숫자 하나"),
    (float("nan"), "유한한 수가 아닙니다"),
    (..., "답이 비어 있습니다"),
])
def test_03_3_rejects(c, text):
    result = check("03-3", c)
    assert not result.passed and text in result.message, result.message
