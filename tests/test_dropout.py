"""Tests of notebook 06's generated code (helpers.lessons.attention_dropout), its explorer and checkers 06-1..3."""

import json
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.attention import scaled_dot_product_attention
from helpers.data import DATA_DIR
from helpers.exercises import check
from helpers.lessons.attention_dropout import (
    CLS,
    SEQ_LEN,
    PolarityClassifier,
    SelfAttentionSDPA,
    attention_dropout,
    dropout_attention,
    dropout_panels,
    evaluate,
    make_polarity_task,
    train_classifier,
)
from helpers.widgets import Explorer

pytestmark = pytest.mark.notebook("06")  # `python3 course.py test 06` runs this module


@pytest.fixture
def qkv():
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 8, generator=g), torch.randn(4, 8, generator=g), torch.randn(4, 2, generator=g)


def test_attention_dropout_matches_torch_dropout(qkv):
    w = torch.softmax(qkv[0] @ qkv[1].T / math.sqrt(8), dim=-1).expand(5, 4, 4)
    torch.manual_seed(7)
    ours = attention_dropout(w, 0.3)
    torch.manual_seed(7)
    ref = F.dropout(w, p=0.3, training=True)
    torch.testing.assert_close(ours, ref)
    assert torch.equal(ours == 0, ref == 0)


def test_attention_dropout_eval_and_p_zero_are_identity(qkv):
    w = torch.rand(3, 4)
    assert attention_dropout(w, 0.5, training=False) is w and attention_dropout(w, 0.0) is w


def test_dropout_attention_matches_the_core_in_both_modes(qkv):
    q, k, v = qkv
    for training in (False, True):
        torch.manual_seed(1)
        out, w = dropout_attention(q, k, v, p=0.4, training=training)
        torch.manual_seed(1)
        ref_out, ref_w = scaled_dot_product_attention(q, k, v, dropout_p=0.4, training=training)
        torch.testing.assert_close(w, ref_w)
        torch.testing.assert_close(out, ref_out)


def test_dropout_attention_masks_with_03s_scores(qkv):
    q, k, v = qkv
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    out, w = dropout_attention(q, k, v, mask, p=0.0)
    assert (w[~mask] == 0).all()
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_row_sum_mean_and_variance(qkv):
    w = torch.softmax(qkv[0] @ qkv[1].T / math.sqrt(8), dim=-1)
    torch.manual_seed(0)
    sums = attention_dropout(w.expand(20000, 4, 4), 0.4).sum(-1)
    torch.testing.assert_close(sums.mean(0), torch.ones(4), atol=0.02, rtol=0)
    torch.testing.assert_close(sums.var(0), 0.4 / 0.6 * (w**2).sum(-1), rtol=0.06, atol=0)


def test_whole_rows_vanish_with_probability_p_to_the_t(qkv):
    q, k, v = qkv
    torch.manual_seed(0)
    out, w = dropout_attention(q.expand(20000, 4, 8), k, v, p=0.9)
    dead = (w == 0).all(-1)
    assert abs(dead.float().mean().item() - 0.9**4) < 0.01 and (out[dead] == 0).all()


def test_sdpa_module_drops_only_in_train_mode():
    torch.manual_seed(0)
    m = SelfAttentionSDPA(8, p=0.5)
    x = torch.randn(2, 4, 8)
    assert not torch.allclose(m(x), m(x))
    m.eval()
    assert torch.equal(m(x), m(x))
    q, k, v = m.qkv(x).chunk(3, dim=-1)
    torch.testing.assert_close(m(x), F.scaled_dot_product_attention(q, k, v))


def test_polarity_task_labels():
    x, y = make_polarity_task(5000, seed=3)
    assert x.shape == (5000, 1 + SEQ_LEN) and (x[:, 0] == CLS).all() and (x[:, 1:] < CLS).all()
    score = (x[:, 1:] < 8).sum(1) - ((x[:, 1:] >= 8) & (x[:, 1:] < 16)).sum(1)
    clear = score != 0
    agree = (y[clear] == (score[clear] > 0).long()).double().mean().item()
    assert abs(agree - 0.9) < 0.015  # 10% of labels flipped
    x2, y2 = make_polarity_task(5000, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)


def test_classifier_shapes_and_modes():
    torch.manual_seed(0)
    model = PolarityClassifier(p=0.5).double()
    x, y = make_polarity_task(16, seed=0)
    logits, w = model(x)
    assert logits.shape == (16, 2) and w.shape == (16, 1 + SEQ_LEN)
    model.eval()
    torch.testing.assert_close(model(x)[1].sum(-1), torch.ones(16, dtype=torch.float64))
    with torch.no_grad():  # eval mode: dropout off, so the loss is the deterministic one
        logits = model(x)[0]
    model.train()
    loss, acc = evaluate(model, x, y)
    assert model.training  # the mode is restored
    assert loss == pytest.approx(F.cross_entropy(logits, y).item())
    assert acc == pytest.approx((logits.argmax(-1) == y).double().mean().item())


def test_train_classifier_learns_with_enough_data():
    r = train_classifier(512, 0.0, seed=0, steps=150)
    assert r["val_acc"] > 0.78 and len(r["curve"]["step"]) == 6


def test_stored_sweep_records_its_setup_and_tolerance():
    sweep = json.loads((DATA_DIR / "dropout_sweep.json").read_text(encoding="utf-8"))
    s = sweep["settings"]
    assert len(sweep["runs"]) == len(s["n_train"]) * len(s["p_values"]) * len(s["seeds"])
    assert (
        sweep["produced_by"]["torch"]
        and sweep["live_check"]["tolerance"]["loss"] >= 3 * sweep["live_check"]["measured_bound"]["loss"]
    )


def test_stored_sweep_reproduces_the_stable_live_run():
    """The p = 0.2 live run agrees across set-ups to 1e-8; it must match the stored run closely."""
    sweep = json.loads((DATA_DIR / "dropout_sweep.json").read_text(encoding="utf-8"))
    stored = next(r for r in sweep["runs"] if (r["n_train"], r["p"], r["seed"]) == (128, 0.2, 0))
    live = train_classifier(128, 0.2, seed=0)
    for m in ("train_loss", "val_loss", "train_acc", "val_acc"):
        assert abs(live[m] - stored[m]) < 1e-4, m


def test_explorer_updates_in_place(qkv):
    w = torch.softmax(qkv[0] @ qkv[1].T / math.sqrt(8), dim=-1)
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6), dpi=72)
    labels = list("abcd")
    explorer = Explorer(
        fig,
        dropout_panels(axes, w, labels, n_avg=200),
        {"p": widgets.FloatSlider(value=0.0, min=0.0, max=0.9, step=0.05)},
    )
    first_png, images = explorer.png, [ax.images[0] for ax in axes]
    np.testing.assert_allclose(explorer.last["one"], w.numpy())
    explorer.set(p=0.9)
    assert explorer.renders == 2 and explorer.png != first_png
    assert [ax.images[0] for ax in axes] == images and all(len(ax.images) == 1 for ax in axes)  # same artists
    one = explorer.last["one"]
    np.testing.assert_allclose(images[0].get_array(), one)
    kept = one != 0
    np.testing.assert_allclose(one[kept], w.numpy()[kept] / 0.1, rtol=1e-5)
    sums = [t.get_text() for t in axes[0].texts if "합" in t.get_text()]  # the row names beside the axis
    assert "p = 0.90" in axes[0].get_title() and sums == [f"{lab} (합 {s:.2f})" for lab, s in zip(labels, one.sum(1))]
    plt.close("all")


def _old_dropout(w, keep, p, training):
    return w * keep if training else w * (1 - p)


def test_check_06_1():
    r = check("06-1", _old_dropout)
    assert r.passed and "(1−p)배 다릅니다" in r.message, r.message
    cases = {
        "역 드롭아웃": lambda w, keep, p, training: w * keep / (1 - p) if training else w,
        "학습 때 살아남은 가중치를": lambda w, keep, p, training: w * keep / (1 - p) if training else w * (1 - p),
        "평가 때 가중치를 그대로": lambda w, keep, p, training: w * keep if training else w,
        "**곱해야**": lambda w, keep, p, training: w * keep if training else w / (1 - p),
        "남는 확률은 1−p": lambda w, keep, p, training: w * keep if training else w * p,
        "평가 때도 keep 마스크로": lambda w, keep, p, training: w * keep if training else w * keep * (1 - p),
        "학습 때 (1−p)를 곱했습니다": lambda w, keep, p, training: w * keep * (1 - p) if training else w * (1 - p),
        "True는": lambda w, keep, p, training: w * ~keep if training else w * (1 - p),
        "keep 마스크를 쓰지 않았습니다": lambda w, keep, p, training: w if training else w * (1 - p),
        "합을 1로 다시 맞춤": lambda w, keep, p, training: (
            (w * keep) / (w * keep).sum(-1, keepdim=True) if training else w * (1 - p)
        ),
        "모양": lambda w, keep, p, training: _old_dropout(w, keep, p, training).flatten(),
        "오류": lambda w, keep, p, training: w @ keep,
        "평가 모드에서 위치": lambda w, keep, p, training: w * keep if training else w * (1 - p) + 0.01,
        "학습 모드에서 위치": lambda w, keep, p, training: w * keep + 0.01 if training else w * (1 - p),
    }
    for phrase, fn in cases.items():
        r = check("06-1", fn)
        assert not r.passed and phrase in r.message, (phrase, r.message)
    assert "구현" in check("06-1", _not_done).message
    assert "오류" in check("06-1", lambda w, keep, p: w * keep).message  # the old three-argument signature


def _not_done(*args):
    raise NotImplementedError


def test_check_06_2():
    assert check("06-2", 0.095).passed and check("06-2", torch.tensor(0.095)).passed
    cases = {
        0.38: "Σw²",
        0.2 * 0.8 * 0.38: "p(1−p)",
        0.25: "w²를",
        0.0: "분산이 0",
        0.5: "정답과 다릅니다",
        math.sqrt(0.095): "표준편차",
        0.2 * 0.38: "p만 곱했습니다",
        0.2 / 0.8**2 * 0.38: "p/(1−p)²",  # 0.11875: 25% off, not a sampling estimate
        0.11: "정답과 다릅니다",  # 16% off: outside the sampling band
    }
    for answer, phrase in cases.items():
        r = check("06-2", answer)
        assert not r.passed and phrase in r.message, (answer, r.message)
    assert "숫자 하나" in check("06-2", [0.1, 0.2]).message
    torch.manual_seed(0)
    w = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    sums = (w * torch.empty(20_000, 3, dtype=torch.float64).bernoulli_(0.8) / 0.8).sum(-1)  # (n,) row sums
    estimate = sums.var().item()  # a Monte-Carlo estimate, not the formula
    assert not math.isclose(estimate, 0.095, rel_tol=1e-3)
    r = check("06-2", estimate)
    assert not r.passed and "정확한 값" in r.message and "표본" in r.message, r.message
    for close in (0.095 * (1 + 5e-4), 0.095 * (1 - 2e-4)):  # what 10^6–10^7 draws give: still an estimate
        r = check("06-2", close)
        assert not r.passed and "표본" in r.message, (close, r.message)
    assert check("06-2", torch.tensor(0.2 / 0.8 * 0.38, dtype=torch.float32)).passed  # float32 rounding is fine
    assert "표본" not in check("06-2", 0.2 / 0.8**2 * 0.38).message
    assert not check("06-2", ...).passed


def test_check_06_2_names_a_rounded_answer_and_attaches_particles_by_sound():
    for answer, how in ((0.1, "반올림한 값"), (0.09, "소수 2자리로 자른 값")):
        r = check("06-2", answer)
        assert not r.passed and how in r.message and "표본" not in r.message, r.message
    assert "반올림" not in check("06-2", 0.09).message
    assert "0.1은" in check("06-2", 0.1).message and "0.09는" in check("06-2", 0.09).message
    r = check("06-2", 0.5)
    assert "0.5는" in r.message and "0.5은" not in r.message, r.message


def test_check_06_3():
    from contextlib import contextmanager

    @contextmanager
    def good(module):
        modes = [(m, m.training) for m in module.modules()]
        module.eval()
        try:
            yield module
        finally:
            for m, was in modes:
                m.training = was

    class GoodClass:
        def __init__(self, module):
            self.module, self.modes = module, [(m, m.training) for m in module.modules()]

        def __enter__(self):
            return self.module.eval()

        def __exit__(self, *exc):
            for m, was in self.modes:
                m.training = was

    @contextmanager
    def no_restore(module):
        module.eval()
        yield module

    @contextmanager
    def top_level_was(module):  # the evaluate pattern: module.train(was) flattens mixed modes
        was = module.training
        module.eval()
        try:
            yield module
        finally:
            module.train(was)

    @contextmanager
    def always_train(module):
        module.eval()
        try:
            yield module
        finally:
            module.train()

    @contextmanager
    def no_finally(module):
        modes = [(m, m.training) for m in module.modules()]
        module.eval()
        yield module
        for m, was in modes:
            m.training = was

    @contextmanager
    def swallows(module):
        modes = [(m, m.training) for m in module.modules()]
        module.eval()
        try:
            yield module
        except Exception:
            pass
        finally:
            for m, was in modes:
                m.training = was

    @contextmanager
    def only_top(module):
        was = module.training
        module.training = False
        try:
            yield module
        finally:
            module.training = was

    @contextmanager
    def children_only(module):  # restores one level down: a grandchild unlike its parent is lost
        modes, was = [(c, c.training) for c in module.children()], module.training
        module.eval()
        try:
            yield module
        finally:
            for c, mode in modes:
                c.train(mode)
            module.training = was

    def not_a_context_manager(module):
        module.eval()

    @contextmanager
    def never_yields(module):
        module.eval()
        if False:
            yield

    @contextmanager
    def never_evals(module):  # e.g. torch.no_grad() in its place: the modes are never touched
        yield module

    assert check("06-3", good).passed and check("06-3", GoodClass).passed
    r = check("06-3", never_evals)  # the module itself still trains: say to call eval(), not list every submodule
    assert not r.passed and "모듈 자체가 아직 학습 모드" in r.message, r.message
    assert "module.eval()을 부르세요" in r.message, r.message
    assert "2.0" not in r.message, r.message
    cases = {
        "평가 모드로 남았습니다": no_restore,
        "하위 모듈 **전체**": top_level_was,
        "원래 평가 모드였던": always_train,
        "try/finally로 감싸": no_finally,
        "예외를 삼켰습니다": swallows,
        "아직 학습 모드": only_top,
        "안쪽 모듈 하나만 평가 모드였던": children_only,
        "with 문에 쓸 수 없는 객체": not_a_context_manager,
        "오류를 냈습니다": never_yields,
    }
    for phrase, fn in cases.items():
        r = check("06-3", fn)
        assert not r.passed and phrase in r.message, (phrase, r.message)

    @contextmanager
    def stub(module):
        raise NotImplementedError
        yield module

    assert "구현" in check("06-3", stub).message
    assert not check("06-3", ...).passed


# --------------------------------------------------------------------------- defining properties (sharp)


def test_attention_dropout_keeps_the_expected_weights():
    """Kept weights are divided by 1 - p (so the expectation is the weight itself); eval mode changes nothing."""
    w = torch.softmax(torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3)), dim=-1)
    torch.manual_seed(0)
    dropped = attention_dropout(w, 0.25)
    kept = dropped != 0
    assert 0 < kept.sum() < w.numel()
    torch.testing.assert_close(dropped[kept], w[kept] / 0.75, rtol=1e-14, atol=0)
    assert torch.equal(attention_dropout(w, 0.25, training=False), w)
    torch.manual_seed(1)
    mean = torch.stack([attention_dropout(w, 0.25) for _ in range(4000)]).mean(dim=0)
    torch.testing.assert_close(mean, w, rtol=0, atol=0.02)
