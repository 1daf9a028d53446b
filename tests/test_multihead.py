"""helpers.multihead (notebook 07): reshapes, mistakes, cost counts, toy task, drawings, checkers.

conftest.py selects the Agg backend and the Korean font."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn as nn

from helpers import multihead as mh
from helpers.attention import MultiHeadAttention
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- reshapes


@pytest.mark.parametrize("b, t, c, h", [(1, 1, 4, 1), (2, 5, 12, 3), (3, 4, 16, 16), (2, 7, 8, 2)])
def test_split_and_merge_match_the_plain_permute(b, t, c, h):
    x = torch.randn(b, t, c)
    want = x.reshape(b, t, h, c // h).permute(0, 2, 1, 3)
    got = mh.split_heads(x, h)
    assert got.shape == (b, h, t, c // h)
    assert torch.equal(got, want)
    assert torch.equal(mh.merge_heads(got), x)
    assert torch.equal(mh.merge_heads(got.contiguous()), x)
    # head i holds features i*d ... i*d + d - 1 of every token
    assert torch.equal(got[:, h - 1], x[..., (h - 1) * (c // h):])


def test_split_merge_errors():
    with pytest.raises(ValueError, match="not divisible"):
        mh.split_heads(torch.randn(2, 3, 10), 3)
    with pytest.raises(ValueError, match="3 dimensions"):
        mh.split_heads(torch.randn(3, 8), 2)
    with pytest.raises(ValueError, match="positive integer"):
        mh.split_heads(torch.randn(2, 3, 8), 0)
    with pytest.raises(ValueError, match="positive integer"):
        mh.split_heads(torch.randn(2, 3, 8), True)
    with pytest.raises(TypeError, match="torch.Tensor"):
        mh.split_heads([[1.0]], 1)
    with pytest.raises(ValueError, match="4 dimensions"):
        mh.merge_heads(torch.randn(2, 3, 8))


# --------------------------------------------------------------------------- manual forward and mistakes


def _module(c=16, h=4, seed=0):
    torch.manual_seed(seed)
    return MultiHeadAttention(c, h).eval()


def test_manual_mha_equals_module_and_torch():
    torch.manual_seed(1)
    ref = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(ref).eval()
    x = torch.randn(3, 6, 16)
    out, w = mh.manual_mha(ours, x)
    want_out, want_w = ref(x, x, x, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, want_out)
    torch.testing.assert_close(w, want_w)
    torch.testing.assert_close(out, ours(x)[0])


@pytest.mark.parametrize("mistake", mh.MISTAKES)
def test_every_mistake_changes_the_output_but_not_the_shape(mistake):
    mha, x = _module(), torch.randn(2, 5, 16)
    right, _ = mh.manual_mha(mha, x)
    wrong, w = mh.manual_mha(mha, x, mistake=mistake)
    assert wrong.shape == right.shape and w.shape == (2, 4, 5, 5)
    assert (wrong - right).abs().max() > 1e-3


def test_scale_mistake_is_invisible_with_one_head_and_flattens_weights_otherwise():
    mha1, x = _module(16, 1), torch.randn(2, 5, 16)
    torch.testing.assert_close(mh.manual_mha(mha1, x, "scale_by_d_model")[0], mh.manual_mha(mha1, x)[0])
    mha4 = _module(16, 4)
    right_w = mh.manual_mha(mha4, x)[1]
    wrong_w = mh.manual_mha(mha4, x, "scale_by_d_model")[1]
    assert wrong_w.max(-1).values.mean() < right_w.max(-1).values.mean()


def test_split_mistake_is_harmless_only_for_a_single_token():
    mha = _module()
    x = torch.randn(2, 1, 16)  # T = 1: every row comes from the only token
    torch.testing.assert_close(mh.manual_mha(mha, x, "split_without_transpose")[0], mh.manual_mha(mha, x)[0])


def test_manual_mha_errors():
    mha = _module()
    with pytest.raises(ValueError, match="mistake must be"):
        mh.manual_mha(mha, torch.randn(1, 2, 16), mistake="typo")
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        mh.manual_mha(nn.MultiheadAttention(16, 4), torch.randn(1, 2, 16))
    with pytest.raises(ValueError, match=r"\(B, T, 16\)"):
        mh.manual_mha(mha, torch.randn(1, 2, 8))


# --------------------------------------------------------------------------- costs


@pytest.mark.parametrize("c, h, bias", [(8, 1, True), (64, 4, True), (64, 16, False), (48, 3, False)])
def test_param_formula_matches_both_modules(c, h, bias):
    want = mh.mha_param_formula(c, bias)
    assert mh.param_count(MultiHeadAttention(c, h, bias=bias)) == want
    assert mh.param_count(nn.MultiheadAttention(c, h, bias=bias, batch_first=True)) == want
    assert want == 4 * c * c + (4 * c if bias else 0)


@pytest.mark.parametrize("b, t, c, h", [(1, 7, 16, 1), (2, 7, 16, 4), (3, 5, 24, 8), (1, 12, 32, 32)])
def test_matmul_flops_formula_matches_flop_counter(b, t, c, h):
    measured = mh.measured_matmul_flops(MultiHeadAttention(c, h), torch.randn(b, t, c))
    costs = mh.mha_costs(t, c, h, batch=b)
    assert measured == costs["matmul_flops"]
    assert costs["weight_floats"] == b * h * t * t and costs["softmax_rows"] == b * h * t
    one = mh.mha_costs(t, c, 1, batch=b)
    assert costs["matmul_flops"] == one["matmul_flops"]
    assert costs["weight_floats"] == h * one["weight_floats"]


def test_cost_errors():
    with pytest.raises(ValueError, match="not divisible"):
        mh.mha_costs(10, 10, 3)
    with pytest.raises(ValueError, match="seq_len"):
        mh.mha_costs(0, 8, 2)
    with pytest.raises(ValueError, match="d_model"):
        mh.mha_param_formula(-4)
    with pytest.raises(TypeError, match="nn.Module"):
        mh.param_count(torch.randn(3))
    with pytest.raises(TypeError, match="nn.Module"):
        mh.measured_matmul_flops(lambda x: x, torch.randn(3))


# --------------------------------------------------------------------------- toy task


def test_offset_batch_targets_and_determinism():
    x, y = mh.make_offset_batch(50, torch.Generator().manual_seed(3))
    assert x.shape == y.shape == (50, mh.SEQ_LEN) and x.max() < mh.VOCAB and x.min() >= 0
    for n in range(50):
        for t in range(1, mh.SEQ_LEN):
            assert y[n, t] == (x[n, t - 1] - x[n, 0]) % mh.VOCAB
    x2, _ = mh.make_offset_batch(50, torch.Generator().manual_seed(3))
    assert torch.equal(x, x2)
    with pytest.raises(ValueError, match="positive integer"):
        mh.make_offset_batch(0)


def _ideal_maps(t=mh.SEQ_LEN):
    prev = torch.zeros(t, t)
    prev[torch.arange(1, t), torch.arange(t - 1)] = 1.0
    prev[0, 0] = 1.0
    first = torch.zeros(t, t)
    first[:, 0] = 1.0
    mixed = 0.5 * prev + 0.5 * first
    return torch.stack([prev, first, mixed])  # (3, T, T)


def test_offset_profile_and_roles_on_exact_patterns():
    maps = _ideal_maps()
    torch.testing.assert_close(mh.offset_profile(maps), torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]))
    assert mh.head_roles(maps) == ["이전 토큰", "첫 토큰", "섞임"]
    assert mh.head_roles(maps, threshold=0.5) == ["이전 토큰", "첫 토큰", "이전 토큰"]
    with pytest.raises(ValueError, match="3 dimensions"):
        mh.offset_profile(maps[0])
    with pytest.raises(ValueError, match=r"\(h, T, T\)"):
        mh.offset_profile(torch.rand(2, 3, 4))
    with pytest.raises(ValueError, match="4 dimensions"):
        mh.mean_head_maps(maps)


def test_short_training_specializes_the_two_heads():
    model, losses = mh.train_offset_model(2, steps=120, seed=0)
    x, y = mh.make_offset_batch(500, torch.Generator().manual_seed(7))
    assert losses[-1] < 0.05 * losses[0]
    assert mh.accuracy(model, x, y) >= 0.99
    with torch.no_grad():
        maps = mh.mean_head_maps(model(x)[1])
    assert sorted(mh.head_roles(maps)) == ["이전 토큰", "첫 토큰"]


def test_stored_models_match_the_stored_table():
    runs = load_json("multihead_runs.json")
    x, y = mh.make_offset_batch(runs["test_size"], torch.Generator().manual_seed(runs["test_seed"]))
    for h in (1, 2):
        model = mh.OffsetModel(h)
        model.load_state_dict(load_tensor_dict(f"multihead_offset_h{h}.pt"))
        model.eval()
        record = next(r for r in runs["runs"] if r["num_heads"] == h and r["seed"] == 0)
        assert mh.accuracy(model, x, y) == record["accuracy"]
        with torch.no_grad():
            profile = mh.offset_profile(mh.mean_head_maps(model(x)[1]))
        torch.testing.assert_close(profile, torch.tensor(record["profile"]), atol=1e-4, rtol=0)


def test_accuracy_scores_only_positions_from_two_on():
    x, y = mh.make_offset_batch(20, torch.Generator().manual_seed(0))

    class Oracle(nn.Module):
        """Right at every scored position, wrong at t = 0, 1."""

        def forward(self, tokens):
            logits = nn.functional.one_hot(y, mh.VOCAB).float()  # (B, T, V)
            logits[:, : mh.FIRST_SCORED] = logits[:, : mh.FIRST_SCORED].roll(1, dims=-1)
            return logits, None

    assert mh.accuracy(Oracle(), x, y) == 1.0
    y_wrong = y.clone()
    y_wrong[0, mh.FIRST_SCORED] = (y[0, mh.FIRST_SCORED] + 1) % mh.VOCAB
    expected = 1 - 1 / (20 * (mh.SEQ_LEN - mh.FIRST_SCORED))
    assert mh.accuracy(Oracle(), x, y_wrong) == pytest.approx(expected)


# --------------------------------------------------------------------------- drawing


def test_draw_head_returns_that_heads_matrix_and_titles_it():
    maps = _ideal_maps()
    _, ax = plt.subplots()
    w = mh.draw_head(maps, 1, ax=ax)
    assert (w == maps[1].numpy()).all()
    assert ax.get_title() == "헤드 1: 이전 토큰 0.00, 첫 토큰 1.00"
    assert ax.get_xlabel() == "키(key)"
    for bad in (3, -1, 1.0, True):
        with pytest.raises(ValueError, match=r"head must be an integer in \[0, 2\]"):
            mh.draw_head(maps, bad)


def test_draw_all_heads_draws_one_panel_per_head():
    maps = _ideal_maps()
    drawn = mh.draw_all_heads(maps)
    fig = plt.gcf()
    assert len(drawn) == 3 and len(fig.axes) == 3
    assert [ax.get_title() for ax in fig.axes] == ["헤드 0", "헤드 1", "헤드 2"]
    assert all((d == m.numpy()).all() for d, m in zip(drawn, maps))


def test_head_selector_builds_a_slider_over_the_heads():
    import ipywidgets as widgets

    box = mh.head_selector(_ideal_maps())
    slider = box.children[0]
    assert isinstance(slider, widgets.IntSlider) and (slider.min, slider.max, slider.value) == (0, 2, 0)
    slider.value = 2  # redraws without error
    with pytest.raises(ValueError, match="3 dimensions"):
        mh.head_selector(torch.rand(4, 4))


# --------------------------------------------------------------------------- exercises


def _split_ok(x, h):
    b, t, c = x.shape
    return x.view(b, t, h, c // h).transpose(1, 2)


def _merge_ok(o):
    b, h, t, d = o.shape
    return o.transpose(1, 2).reshape(b, t, h * d)


def _unimplemented(*args):
    raise NotImplementedError


@pytest.mark.parametrize("answer, message", [
    (lambda x, h: x.view(x.shape[0], x.shape[1], h, -1), "transpose(1, 2)가 빠졌습니다"),
    (lambda x, h: x.view(x.shape[0], h, x.shape[1], -1), "값이 섞였습니다"),
    (lambda x, h: x, "모양이 (2, 5, 12)입니다"),
    (lambda x, h: _split_ok(x, h).flip(1), "처음 다른 위치"),
    (lambda x, h: x.nonexistent(), "오류를 냈습니다: AttributeError"),
    (_unimplemented, "아직 구현하지 않았습니다"),
    (..., "답이 비어 있습니다"),
])
def test_check_07_1_wrong_answers(answer, message):
    result = check("07-1", answer)
    assert not result.passed and message in result.message, result.message


def test_check_07_1_accepts_correct_answers():
    assert check("07-1", _split_ok).passed
    assert check("07-1", mh.split_heads).passed
    assert check("07-1", lambda x, h: x.reshape(x.shape[0], x.shape[1], h, -1).permute(0, 2, 1, 3)).passed


@pytest.mark.parametrize("answer, message", [
    (lambda o: o.reshape(o.shape[0], o.shape[2], -1), "값이 섞였습니다"),
    (lambda o: _merge_ok(o.flip(1)), "거꾸로"),
    (lambda o: o.transpose(1, 2), "reshape가 빠졌습니다"),
    (lambda o: o.reshape(o.shape[0], -1), "모양이 (2, 60)입니다"),
    (lambda o: _merge_ok(o) + 1, "처음 다른 위치"),
    (_unimplemented, "아직 구현하지 않았습니다"),
])
def test_check_07_2_wrong_answers(answer, message):
    result = check("07-2", answer)
    assert not result.passed and message in result.message, result.message


def test_check_07_2_accepts_correct_answers():
    assert check("07-2", _merge_ok).passed
    assert check("07-2", mh.merge_heads).passed


@pytest.mark.parametrize("answer, message", [
    (lambda c, h, bias: 4 * c * c, "편향 4·C개(각 Linear의 bias)를 빠뜨렸습니다"),
    (lambda c, h, bias: 4 * c * c + 4 * c, "bias=False인데"),
    (lambda c, h, bias: 3 * c * c + (3 * c if bias else 0), "출력 투영 W^O"),
    (lambda c, h, bias: h * (4 * c * c + (4 * c if bias else 0)), "헤드마다 C×C 행렬을 따로 세었습니다"),
    (lambda c, h, bias: 4 * c * (c // h) + (4 * (c // h) if bias else 0), "헤드 하나 분량"),
    (lambda c, h, bias: 7, "정답은"),
    (lambda c, h, bias: [1, 2], "숫자 하나"),
    (_unimplemented, "아직 구현하지 않았습니다"),
])
def test_check_07_3_wrong_answers(answer, message):
    result = check("07-3", answer)
    assert not result.passed and message in result.message, result.message


def test_check_07_3_accepts_correct_answers():
    assert check("07-3", lambda c, h, bias: mh.mha_param_formula(c, bias)).passed
    assert check("07-3", lambda c, h, bias: mh.param_count(MultiHeadAttention(c, h, bias=bias))).passed
