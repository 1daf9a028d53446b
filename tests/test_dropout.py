"""Unit tests for helpers.dropout (notebook 06): draws, formulas, the slider function, the model, checkers."""

import math

import matplotlib
import numpy as np
import pytest
import torch
import torch.nn.functional as F

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from helpers.dropout import (  # noqa: E402
    TinyAttentionClassifier,
    draw_dropout,
    dropout_explorer,
    evaluate,
    make_repeat_task,
    mean_error_curve,
    row_sum_variance,
    sample_dropout,
    train_classifier,
)
from helpers.exercises import check  # noqa: E402


@pytest.fixture
def qkv():
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 8, generator=g), torch.randn(4, 8, generator=g), torch.randn(4, 2, generator=g)


# --------------------------------------------------------------------------- draws


def test_sample_dropout_matches_torch_dropout_on_softmax(qkv):
    q, k, v = qkv
    out, w = sample_dropout(q, k, v, 0.3, 5, seed=7)
    torch.manual_seed(7)
    ref_w = F.dropout(torch.softmax(q @ k.T / math.sqrt(8), dim=-1).expand(5, 4, 4), p=0.3, training=True)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(out, ref_w @ v)
    assert out.shape == (5, 4, 2) and w.shape == (5, 4, 4)


def test_sample_dropout_is_seeded_and_leaves_global_rng_alone(qkv):
    q, k, v = qkv
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = sample_dropout(q, k, v, 0.5, 3, seed=1)[1]
    after = torch.rand(1)
    b = sample_dropout(q, k, v, 0.5, 3, seed=1)[1]
    assert torch.equal(a, b) and torch.equal(before, after)
    assert not torch.equal(a[0], a[1])  # each copy gets its own mask


def test_p_zero_gives_the_eval_weights(qkv):
    q, k, v = qkv
    _, w = sample_dropout(q, k, v, 0.0, 2)
    torch.testing.assert_close(w[0], torch.softmax(q @ k.T / math.sqrt(8), dim=-1))


def test_row_sum_variance_formula_and_sampling(qkv):
    q, k, v = qkv
    w = torch.tensor([[0.5, 0.3, 0.2], [1.0, 0.0, 0.0]])
    torch.testing.assert_close(row_sum_variance(w, 0.2), torch.tensor([0.095, 0.25]))
    _, draws = sample_dropout(q, k, v, 0.4, 20000, seed=0)
    exact = torch.softmax(q @ k.T / math.sqrt(8), dim=-1)
    torch.testing.assert_close(draws.sum(-1).var(0), row_sum_variance(exact, 0.4), rtol=0.06, atol=0)


def test_mean_error_curve_shrinks_like_one_over_sqrt_n(qkv):
    q, k, _ = qkv
    ns = [10, 100, 1000, 10000]
    err = mean_error_curve(q, k, 0.3, ns, seed=0)
    slope = np.polyfit(np.log(ns), np.log(err), 1)[0]
    assert -0.65 < slope < -0.35
    assert np.all(mean_error_curve(q, k, 0.0, ns) < 1e-6)


@pytest.mark.parametrize("bad, exc", [(1.0, ValueError), (-0.1, ValueError), ("0.1", TypeError), (True, TypeError)])
def test_bad_p(qkv, bad, exc):
    q, k, v = qkv
    with pytest.raises(exc, match="p must"):
        sample_dropout(q, k, v, bad, 2)
    with pytest.raises(exc, match="p must"):
        row_sum_variance(torch.ones(2, 2), bad)


def test_bad_inputs(qkv):
    q, k, v = qkv
    with pytest.raises(ValueError, match="n must be >= 1"):
        sample_dropout(q, k, v, 0.1, 0)
    with pytest.raises(TypeError, match="n must be an integer"):
        sample_dropout(q, k, v, 0.1, 2.5)
    with pytest.raises(ValueError, match="2-D float tensor"):
        sample_dropout(q.unsqueeze(0), k, v, 0.1, 2)
    with pytest.raises(TypeError, match="torch.Tensor"):
        row_sum_variance([[0.5, 0.5]], 0.1)
    with pytest.raises(ValueError, match="empty"):
        mean_error_curve(q, k, 0.1, [])


# --------------------------------------------------------------------------- the slider function


def test_draw_dropout_returns_the_drawn_numbers(qkv):
    q, k, _ = qkv
    fig, axes = plt.subplots(1, 2)
    r = draw_dropout(q, k, 0.5, labels=list("abcd"), n_avg=2000, axes=axes)
    _, draws = sample_dropout(q, k, k, 0.5, 2000, seed=1)
    np.testing.assert_allclose(r["one"], draws[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(r["one_row_sums"], r["one"].sum(1))
    np.testing.assert_allclose(r["mean"], draws.mean(0).numpy(), rtol=1e-5)
    assert np.abs(r["mean_row_sums"] - 1).max() < 0.1
    assert "합" in axes[0].get_yticklabels()[0].get_text() and "p = 0.50" in axes[0].get_title()
    plt.close(fig)


def test_draw_dropout_p_zero_and_bad_labels(qkv):
    q, k, _ = qkv
    r = draw_dropout(q, k, 0.0, n_avg=3)
    np.testing.assert_allclose(r["one_row_sums"], 1, rtol=1e-6)
    with pytest.raises(ValueError, match="one label per token"):
        draw_dropout(q, k, 0.1, labels=["a"], n_avg=3)
    plt.close("all")


def test_dropout_explorer_builds_a_slider(qkv):
    q, k, _ = qkv
    box = dropout_explorer(q, k, n_avg=10)
    slider = box.children[0]
    assert (slider.min, slider.max, slider.description) == (0.0, 0.9, "p")
    plt.close("all")


# --------------------------------------------------------------------------- the model


def test_repeat_task_labels():
    x, y = make_repeat_task(500, seed=3)
    want = torch.tensor([int(row[0] in row[1:].tolist()) for row in x])
    assert torch.equal(y, want) and x.shape == (500, 8)
    assert torch.equal(make_repeat_task(5, seed=3)[0], x[:5])
    with pytest.raises(ValueError, match="seq_len"):
        make_repeat_task(5, seq_len=1)


def test_classifier_train_vs_eval():
    torch.manual_seed(0)
    model = TinyAttentionClassifier(dropout_p=0.5)
    x, y = make_repeat_task(16)
    logits, w = model(x)
    assert logits.shape == (16, 2) and w.shape == (16, 8, 8)
    assert not torch.allclose(w.sum(-1), torch.ones(16, 8))  # train mode: rows no longer sum to 1
    model.eval()
    a, b = model(x)[0], model(x)[0]
    assert torch.equal(a, b)
    metrics = evaluate(model.train(), x, y)
    assert model.training and 0 <= metrics["acc"] <= 1 and 0 <= metrics["entropy"] <= math.log(8)
    ref = F.cross_entropy(model.eval()(x)[0], y).item()
    assert metrics["loss"] == pytest.approx(ref)
    with pytest.raises(ValueError, match="token ids"):
        model(x.float())


def test_train_classifier_is_deterministic_and_learns():
    a = train_classifier(0.0, n_train=64, n_val=64, steps=30, eval_every=10)
    b = train_classifier(0.0, n_train=64, n_val=64, steps=30, eval_every=10)
    assert a == b and a["curve"]["step"] == [1, 10, 20, 30]
    assert a["train_loss"] < a["curve"]["train_loss"][0]


# --------------------------------------------------------------------------- exercises


W = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]], dtype=torch.float64)


def test_check_06_1():
    assert check("06-1", lambda w, keep, p: w * keep / (1 - p)).passed
    cases = {
        "1/(1−p)": lambda w, keep, p: w * keep,
        "나눠야": lambda w, keep, p: w * keep * (1 - p),
        "True는": lambda w, keep, p: w * ~keep / (1 - p),
        "p로 나눴습니다": lambda w, keep, p: w * keep / p,
        "재정규화": lambda w, keep, p: (w * keep) / (w * keep).sum(-1, keepdim=True),
        "모양": lambda w, keep, p: (w * keep / (1 - p)).flatten(),
        "오류": lambda w, keep, p: w @ keep,
    }
    for phrase, fn in cases.items():
        r = check("06-1", fn)
        assert not r.passed and phrase in r.message, (phrase, r.message)
    assert "NotImplementedError" in check("06-1", _not_done).message or "구현" in check("06-1", _not_done).message


def _not_done(*args):
    raise NotImplementedError


def test_check_06_2():
    assert check("06-2", 0.095).passed and check("06-2", torch.tensor(0.095)).passed
    cases = {0.38: "Σw²", 0.2 * 0.8 * 0.38: "p(1−p)", 0.25: "w²를", 0.0: "분산이 0", 0.5: "정답과 다릅니다",
             math.sqrt(0.095): "표준편차", 0.2 * 0.38: "p만 곱했습니다"}
    for answer, phrase in cases.items():
        r = check("06-2", answer)
        assert not r.passed and phrase in r.message, (answer, r.message)
    assert "숫자 하나" in check("06-2", [0.1, 0.2]).message
    assert not check("06-2", ...).passed


def test_check_06_3():
    def good(module, x):
        was = module.training
        module.eval()
        with torch.no_grad():
            y = module(x)
        module.train(was)
        return y

    def no_restore(module, x):
        module.eval()
        with torch.no_grad():
            return module(x)

    def with_grad(module, x):
        was = module.training
        module.eval()
        y = module(x)
        module.train(was)
        return y

    def scaled(module, x):
        with torch.no_grad():
            return module[2](module[0](x)) * 0.5

    def always_train(module, x):
        module.eval()
        with torch.no_grad():
            y = module(x)
        module.train()
        return y

    assert check("06-3", good).passed
    cases = {"원래 모드": no_restore, "드롭아웃이 켜져": lambda m, x: m(x).detach(), "기울기": with_grad,
             "(1−p)": scaled, "평가 모드의 출력과 다릅니다": lambda m, x: torch.zeros(3, 2, dtype=torch.float64),
             "모양": lambda m, x: torch.zeros(2, dtype=torch.float64), "평가 모드였던": always_train}
    for phrase, fn in cases.items():
        r = check("06-3", fn)
        assert not r.passed and phrase in r.message, (phrase, r.message)
