"""Notebook 09: the generated helpers.lessons.masks (masks, the seed's recipe, the mask explorer)
and the checkers in helpers.exercises.ex09."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from matplotlib.text import Annotation

from helpers.attention import causal_mask, scaled_dot_product_attention, softmax
from helpers.exercises import check
from helpers.lessons.masks import (
    PAD,
    additive_mask,
    attention_mask,
    count_nan,
    draw_mask,
    fully_masked_rows,
    mask_explorer,
    mask_view,
    naive_masked_attention,
    pad_batch,
)

pytestmark = pytest.mark.notebook("09")  # `python3 course.py test 09` runs this module


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _loop_mask(lengths, t, causal=False, t_q=None, mask_queries=False):
    """Reference built entry by entry."""
    t_q = t if t_q is None else t_q
    m = torch.zeros(len(lengths), t_q, t, dtype=torch.bool)
    for b, n in enumerate(lengths):
        for i in range(t_q):
            for j in range(t):
                m[b, i, j] = j < n and (not causal or j <= i) and (not mask_queries or i < n)
    return m


# --------------------------------------------------------------------------- building masks


def test_pad_batch_splits_and_pads():
    tokens, lengths = pad_batch(["a b c", "x", "p q"])
    assert tokens == [["a", "b", "c"], ["x", PAD, PAD], ["p", "q", PAD]]
    assert lengths.tolist() == [3, 1, 2]
    assert pad_batch(["a"], pad="<p>")[0] == [["a"]]


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"causal": True},
        {"mask_queries": True},
        {"causal": True, "mask_queries": True},
        {"t_q": 3},
        {"t_q": 6, "causal": True},
    ],
)
def test_attention_mask_matches_loop(kw):
    lengths = [4, 1, 2]
    assert torch.equal(attention_mask(torch.tensor(lengths), 4, **kw), _loop_mask(lengths, 4, **kw))


def test_fully_masked_rows():
    both = attention_mask(torch.tensor([3, 1]), 3, mask_queries=True)
    assert fully_masked_rows(both).tolist() == [[False, False, False], [False, True, True]]
    assert not fully_masked_rows(attention_mask(torch.tensor([3, 1]), 3, causal=True)).any()


def test_additive_mask_values_and_dtypes():
    m = torch.tensor([[True, False]])
    a = additive_mask(m)
    assert a.dtype == torch.float32 and a[0, 0] == 0 and a[0, 1] == float("-inf")
    assert additive_mask(m, fill=-1e9)[0, 1] == -1e9
    assert additive_mask(m, dtype=torch.float16, fill=-1e9)[0, 1] == float("-inf")  # float16 overflow


def test_masks_agree_with_torch_sdpa_bool_and_additive():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4)
    m = attention_mask(torch.tensor([5, 2, 3]), 5, causal=True)[:, None]  # (B, 1, T, T)
    ours, _ = scaled_dot_product_attention(q, k, v, m)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=m))
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=additive_mask(m)))
    naive, _ = naive_masked_attention(q, k, v, m)
    torch.testing.assert_close(naive, ours)


def test_naive_attention_nan_and_large_negative():
    torch.manual_seed(1)
    x = torch.randn(2, 3, 4)
    m = attention_mask(torch.tensor([3, 1]), 3, mask_queries=True)
    out, w = naive_masked_attention(x, x, x, m)
    assert torch.isnan(w[1, 1:]).all() and not torch.isnan(w[0]).any() and not torch.isnan(w[1, 0]).any()
    assert count_nan(out) == 2 * 4
    out_big, w_big = naive_masked_attention(x, x, x, m, fill=-1e9)
    torch.testing.assert_close(w_big[1, 1:], torch.full((2, 3), 1 / 3))
    torch.testing.assert_close(out_big[1, 2], x[1].mean(0))
    with pytest.raises(RuntimeError):  # -1e9 does not fit float16
        naive_masked_attention(x.half(), x.half(), x.half(), m, fill=-1e9)


def test_count_nan():
    assert count_nan(torch.tensor([1.0, float("nan"), float("nan")])) == 2
    assert count_nan(torch.tensor([1, 2])) == 0


# --------------------------------------------------------------------------- pictures and slider


def test_draw_mask():
    ax = draw_mask(causal_mask(3), list("abc"), list("abc"))
    assert ax.get_title() and [t.get_text() for t in ax.texts][:3] == ["1", "0", "0"]


@pytest.mark.parametrize("length, causal", [(4, False), (2, False), (2, True), (1, True)])
def test_mask_view_returns_masked_weights(length, causal):
    torch.manual_seed(2)
    s = torch.randn(4, 4)
    fig, (a, b) = plt.subplots(1, 2)
    w = mask_view(a, b, s, list("abcd"))(length, causal)
    mask = attention_mask(torch.tensor([length]), 4, causal=causal)[0]
    want = torch.softmax(s.double().masked_fill(~mask, float("-inf")), dim=-1)
    torch.testing.assert_close(torch.from_numpy(w), want)
    names = [t.get_text() for t in b.texts if isinstance(t, Annotation)]  # 4 below the heatmap, then 4 beside
    assert names[:4] == names[4:] == list("abcd")[:length] + [PAD] * (4 - length)
    assert not any(label.get_visible() and label.get_text() for label in b.get_xticklabels() + b.get_yticklabels())
    assert np.array_equal(a.images[0].get_array(), mask.double().numpy())


def test_mask_explorer_updates_in_place():
    torch.manual_seed(3)
    explorer = mask_explorer(torch.randn(5, 5), list("abcde"), length=5)
    ax_mask, ax_w = explorer.figure.axes
    cells = [t for t in ax_w.texts if not isinstance(t, Annotation)]  # the numbers in the cells (not the names)
    n_texts, png = len(ax_w.texts), explorer.png
    explorer.set(length=2)
    assert (explorer.last[:, 2:] == 0).all() and "패딩 3개" in ax_mask.get_title()
    explorer.set(causal=True)
    assert explorer.renders == 3 and explorer.last[0, 0] == 1.0 and "인과" in ax_mask.get_title()
    assert explorer.png != png and len(ax_w.texts) == n_texts and len(cells) == 25  # artists updated, none added
    assert cells[1].get_text() == ""  # a hidden cell (future key) is left blank
    assert cells[0].get_text() == "1.00"


# --------------------------------------------------------------------------- exercises


def _left_keys(lengths, t):
    return torch.arange(t)[None, :] >= (t - lengths)[:, None]  # (B, T)


def _solution_09_1(lengths, t):
    return _left_keys(lengths, t)[:, None, :] & causal_mask(t)


def test_ex1_passes_and_explains_mistakes():
    res = check("09-1", _solution_09_1)
    assert res and "4개" in res.message
    cases = {
        "뒤집혔": lambda l, t: ~_solution_09_1(l, t),
        "오른쪽 패딩": lambda l, t: attention_mask(l, t, causal=True),
        "미래 키가 열려": lambda l, t: _left_keys(l, t)[:, None, :].expand(-1, t, -1),
        "왼쪽 패딩 키가 열려": lambda l, t: causal_mask(t).expand(len(l), t, t),
        "상삼각": lambda l, t: _left_keys(l, t)[:, None, :] & causal_mask(t).T,
        "dtype": lambda l, t: _solution_09_1(l, t).int(),
        "모양": lambda l, t: _solution_09_1(l, t)[0],
        "쿼리 0": lambda l, t: _solution_09_1(l, t) | torch.eye(t, dtype=torch.bool),  # pads see themselves
    }
    for needle, fn in cases.items():
        res = check("09-1", fn)
        assert not res and needle in res.message, (needle, res.message)


def _left_padded_mask_by_loops(lengths, t):
    out = torch.zeros(len(lengths), t, t, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        for i in range(t):
            for j in range(t):
                out[b, i, j] = t - n <= j <= i
    return out


def test_ex1_refuses_loops():
    assert _left_padded_mask_by_loops(torch.tensor([3, 1, 4]), 4).equal(_solution_09_1(torch.tensor([3, 1, 4]), 4))
    for fn in (
        _left_padded_mask_by_loops,
        lambda l, t: torch.stack([_solution_09_1(l[b : b + 1], t)[0] for b in range(len(l))]),
    ):
        res = check("09-1", fn)
        assert not res and "반복이 있습니다" in res.message, res.message


def _loops_in_a_helper(lengths, t):
    return _left_padded_mask_by_loops(lengths, t)


def test_ex1_refuses_loops_by_map_and_in_the_learners_helpers():
    """map(...) loops without a loop statement, and a loop in the learner's own helper is still a loop."""
    by_map = lambda l, t: torch.stack(list(map(lambda n: _solution_09_1(n[None], t)[0], l)))  # noqa: E731
    for fn, needle in ((by_map, "map(...)"), (_loops_in_a_helper, "_left_padded_mask_by_loops 안의 for 반복문")):
        res = check("09-1", fn)
        assert not res and "반복이 있습니다" in res.message and needle in res.message, res.message
    assert check("09-1", _solution_09_1).passed  # the solution's own helpers have no loop


def _exp_softmax(s, m, fill=float("-inf"), dead_rows_zero=True):
    """Softmax written with exp and a sum, as exercise 09-2 asks; the switches make the usual slips."""
    s = s.masked_fill(~m, fill)
    top = s.amax(-1, keepdim=True)
    e = torch.exp(s - (top.nan_to_num(neginf=0.0) if dead_rows_zero else top))
    total = e.sum(-1, keepdim=True)
    return e / (torch.where(total > 0, total, torch.ones_like(total)) if dead_rows_zero else total)


def test_ex2_passes_and_explains_mistakes():
    assert check("09-2", _exp_softmax)
    assert check("09-2", lambda s, m: _exp_softmax(s.double(), m).float())

    def no_max_shift(s, m):
        e = s.masked_fill(~m, float("-inf")).exp()
        total = e.sum(-1, keepdim=True)
        return e / torch.where(total > 0, total, torch.ones_like(total))

    def ignores_mask(s, m):
        e = torch.exp(s - s.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True) * m.any(-1, keepdim=True)

    def uses_torch_softmax(s, m):
        return torch.softmax(s.masked_fill(~m, float("-inf")), -1).masked_fill(~m.any(-1, keepdim=True), 0.0)

    cases = {
        "NaN": lambda s, m: _exp_softmax(s, m, dead_rows_zero=False),
        "넘친": no_max_shift,
        "균등": lambda s, m: _exp_softmax(s, m, fill=-1e9),
        "가려진 칸": ignores_mask,
        "모양": lambda s, m: _exp_softmax(s, m)[0],
        "텐서": lambda s, m: _exp_softmax(s, m).tolist(),
        "softmax을(를) 불렀습니다": uses_torch_softmax,
        "불렀습니다": lambda s, m: softmax(s.masked_fill(~m, float("-inf"))),
    }
    for needle, fn in cases.items():
        res = check("09-2", fn)
        assert not res and needle in res.message, (needle, res.message)


def _exp_then_mask(s, m):
    """exp of every score first, × mask after: a large hidden score gives exp = inf and inf × 0 = NaN."""
    top = s.masked_fill(~m, float("-inf")).amax(-1, keepdim=True)
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    e = torch.exp(s - top) * m
    return e / e.sum(-1, keepdim=True).clamp_min(1e-300)


def test_ex2_rejects_exp_then_mask_with_a_large_hidden_score():
    s, m = torch.tensor([[0.0, 1000.0, 1.0]], dtype=torch.float64), torch.tensor([[True, False, True]])
    assert torch.isnan(_exp_then_mask(s, m)).all()  # the 0 × inf bug the notebook teaches
    res = check("09-2", _exp_then_mask)
    assert not res and "inf × 0 = NaN" in res.message and "먼저 -inf로" in res.message, res.message


def _global_max_then_mask(s, m):
    """The maximum over every key (hidden ones too), × mask after: exp underflows to 0 in the row."""
    e = torch.exp(s - s.amax(-1, keepdim=True)) * m
    return e / e.sum(-1, keepdim=True).clamp_min(1e-300)


def test_ex2_rejects_a_maximum_taken_over_hidden_scores():
    s, m = torch.tensor([[0.0, 1000.0, 1.0]], dtype=torch.float64), torch.tensor([[True, False, True]])
    assert torch.equal(_global_max_then_mask(s, m), torch.zeros(1, 3, dtype=torch.float64))  # the row underflowed
    res = check("09-2", _global_max_then_mask)
    assert not res and "최댓값은 볼 수 있는 칸에서만" in res.message and "언더플로" in res.message, res.message


def _via_softmin(s, m):
    return F.softmin(-s.masked_fill(~m, float("-inf")), dim=-1).nan_to_num(0.0)


def _via_nn_softmin(s, m):
    return torch.nn.Softmin(dim=-1)(-s.masked_fill(~m, float("-inf"))).nan_to_num(0.0)


def _via_nn_softmax(s, m):
    return torch.nn.Softmax(dim=-1)(s.masked_fill(~m, float("-inf"))).nan_to_num(0.0)


def _via_functional_softmax(s, m):
    return F.softmax(s.masked_fill(~m, float("-inf")), dim=-1).nan_to_num(0.0)


def _via_log_softmax(s, m):
    return torch.log_softmax(s.masked_fill(~m, float("-inf")), dim=-1).exp().nan_to_num(0.0)


def _via_safe_softmax(s, m):
    from helpers.lessons.masks import safe_softmax

    return safe_softmax(s.masked_fill(~m, float("-inf")))


def _via_softmax_t(s, m):
    from helpers.lessons.temperature import softmax_t

    return softmax_t(s.masked_fill(~m, float("-inf")), 1.0).nan_to_num(0.0)


@pytest.mark.parametrize(
    "fn, name",
    [
        (_via_nn_softmax, "Softmax"),
        (_via_functional_softmax, "softmax"),
        (_via_log_softmax, "log_softmax"),
        (_via_safe_softmax, "safe_softmax"),
        (_via_softmax_t, "softmax_t"),
        (_via_softmin, "softmin"),
        (_via_nn_softmin, "Softmin"),
    ],
)
def test_ex2_rejects_every_forbidden_softmax(fn, name):
    res = check("09-2", fn)
    assert not res and f"{name}을(를) 불렀습니다" in res.message, res.message


def _via_masked_attention(s, m):
    from helpers.lessons.masks import masked_attention

    return masked_attention(s, s, s, m)[1]


def _via_sdpa(s, m):
    return scaled_dot_product_attention(s, s, s, m)


def _via_default_argument(s, m, sm=torch.softmax):
    return sm(s.masked_fill(~m, float("-inf")), -1).nan_to_num(0.0)


def _via_container(s, m):
    return [torch.softmax][0](s.masked_fill(~m, float("-inf")), -1).nan_to_num(0.0)


@pytest.mark.parametrize(
    "fn, name",
    [
        (_via_masked_attention, "masked_attention"),
        (_via_sdpa, "scaled_dot_product_attention"),
        (_via_default_argument, "기본값(= softmax)"),
        (_via_container, "softmax"),
    ],
)
def test_ex2_rejects_attention_and_hidden_softmax(fn, name):
    res = check("09-2", fn)
    assert not res and f"{name}을(를) 불렀습니다" in res.message, res.message


def _softmax_by_name(s, m):
    return getattr(torch, "softmax")(s.masked_fill(~m, float("-inf")), -1).nan_to_num(0.0)  # noqa: B009 (the bypass)


def test_ex2_rejects_a_softmax_fetched_by_its_name():
    res = check("09-2", _softmax_by_name)
    assert not res and '"softmax"을(를) 문자열로' in res.message, res.message


def test_ex3_passes_and_explains_mistakes():
    assert check("09-3", lambda m: ~m)
    assert check("09-3", lambda m: additive_mask(m))
    cases = {
        "그대로": lambda m: m,
        "1/0 float": lambda m: m.float(),
        "더해지는": lambda m: (~m).float(),  # the right cells, but a float mask is added, not a flag
        "큰 음수(-inf)가 하나도": lambda m: (~m).float() * -10,  # added, but far too small to hide anything
        "자리가 뒤바뀌": lambda m: additive_mask(~m),
        "모양": lambda m: (~m)[0],
        "다릅니다": lambda m: ~m.roll(1, -1),  # every row keeps one key, but the wrong one
        "같은 dtype": lambda m: torch.zeros(m.shape, dtype=torch.float64).masked_fill(~m, float("-inf")),
        "불리언(~mask)이나 0/-inf float": lambda m: (~m).int(),
    }
    for needle, fn in cases.items():
        res = check("09-3", fn)
        assert not res and needle in res.message, (needle, res.message)


# --------------------------------------------------------------------------- the course's masked attention (09)


def test_lesson_causal_mask_is_top_left_aligned():
    from helpers.lessons.masks import causal_mask as lesson_causal_mask

    torch.testing.assert_close(lesson_causal_mask(3, 5), torch.ones(3, 5, dtype=torch.bool).tril())
    assert torch.equal(lesson_causal_mask(4), torch.ones(4, 4, dtype=torch.bool).tril())


def test_safe_softmax_extends_softmax_t_and_zeroes_dead_rows():
    from helpers.lessons.masks import safe_softmax
    from helpers.lessons.temperature import softmax_t

    z = torch.randn(3, 5, dtype=torch.float64)
    torch.testing.assert_close(safe_softmax(z, temperature=0.3), softmax_t(z, 0.3))
    z[1] = float("-inf")
    w = safe_softmax(z)
    assert torch.equal(w[1], torch.zeros(5, dtype=torch.float64)) and not torch.isnan(w).any()
    torch.testing.assert_close(safe_softmax(z.T, dim=0).T[[0, 2]], torch.softmax(z[[0, 2]], -1))


@pytest.mark.parametrize("causal", [False, True])
def test_masked_attention_matches_pytorch(causal):
    from helpers.lessons.masks import masked_attention

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = (torch.arange(5) < torch.tensor([5, 3])[:, None])[:, None, None, :]  # (B, 1, 1, T_k)
    out, w = masked_attention(q, k, v, mask, causal=causal)
    ref = F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask & torch.ones(5, 5, dtype=torch.bool).tril() if causal else mask
    )
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5, dtype=torch.float64))
    dead = torch.zeros(5, 5, dtype=torch.bool)
    out0, w0 = masked_attention(q, k, v, dead)
    assert torch.equal(out0, torch.zeros_like(out0)) and torch.equal(w0, torch.zeros_like(w0))


def test_masked_multi_head_attention_matches_torch_and_zeroes_dead_rows():
    from helpers.lessons.masks import MaskedMultiHeadAttention
    from helpers.lessons.multi_head_attention import MultiHeadAttention, copy_from_torch

    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    ours = copy_from_torch(MaskedMultiHeadAttention(8, 2), t_mha).eval()
    assert isinstance(ours, MultiHeadAttention)
    x = torch.randn(2, 5, 8)
    tri = torch.ones(5, 5, dtype=torch.bool).tril()
    with torch.no_grad():
        want, want_w = t_mha(x, x, x, attn_mask=~tri, average_attn_weights=False)
        got, got_w = ours(x, causal=True)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(got_w, want_w)
        blind = tri.expand(2, 5, 5).clone()
        blind[0, 2] = False  # (B, T_q, T_k): query 2 of item 0 sees nothing
        out, w = ours(x, mask=blind)
    assert not torch.isnan(out).any() and torch.equal(w[0, :, 2], torch.zeros(2, 5))
    torch.testing.assert_close(out[0, 2], t_mha.out_proj.bias.detach())  # zero attention, then the output bias


# --------------------------------------------------------------------------- defining properties (sharp)


def test_causal_attention_never_reads_the_future():
    """Query i's output depends on values 0..i only: changing later values changes no earlier row."""
    from helpers.lessons.masks import causal_mask as lesson_causal_mask
    from helpers.lessons.masks import masked_attention as lesson_masked_attention

    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(2, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    assert lesson_causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    out, w = lesson_masked_attention(q, k, v, causal=True)
    for i in range(6):
        later = v.clone()
        later[:, i + 1 :] += 100.0
        changed, _ = lesson_masked_attention(q, k, later, causal=True)
        torch.testing.assert_close(changed[:, : i + 1], out[:, : i + 1], rtol=0, atol=0)
    assert torch.equal(w.triu(1), torch.zeros_like(w)) and w[:, 0, 0].eq(1).all()


def test_safe_softmax_gives_zeros_to_a_query_with_no_key_and_softmax_elsewhere():
    from helpers.lessons.masks import safe_softmax as lesson_safe_softmax

    s = torch.tensor([[-math.inf, -math.inf], [1000.0, -math.inf], [0.0, 0.0]], dtype=torch.float64)
    w = lesson_safe_softmax(s)
    assert w.tolist() == [[0.0, 0.0], [1.0, 0.0], [0.5, 0.5]]
