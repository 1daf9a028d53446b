"""helpers.dynamics (notebook 12): the lookup task, the model, measurements, training, drawings, checkers.

conftest.py selects the Agg backend and the Korean font."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pytest
import torch

from helpers import dynamics as dy
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def batch():
    return dy.make_lookup_batch(64, torch.Generator().manual_seed(0))


# --------------------------------------------------------------------------- task


def test_batch_layout_and_targets(batch):
    keys, values, target, source = batch["keys"], batch["values"], batch["target"], batch["source"]
    assert keys.shape == values.shape == (64, dy.SEQ_LEN) and target.shape == source.shape == (64, dy.N_QUERIES)
    for n in range(64):
        pairs = keys[n, : dy.N_PAIRS].tolist()
        assert len(set(pairs)) == dy.N_PAIRS  # distinct keys: one answer per query
        assert (values[n, dy.N_PAIRS:] == dy.QUERY_MARK).all() and (values[n, : dy.N_PAIRS] < dy.N_VALUES).all()
        for q in range(dy.N_QUERIES):  # a plain loop as the independent reference
            j = pairs.index(keys[n, dy.N_PAIRS + q].item())
            assert j == source[n, q] and values[n, j] == target[n, q]


def test_batch_is_seeded():
    a = dy.make_lookup_batch(5, torch.Generator().manual_seed(3))
    b = dy.make_lookup_batch(5, torch.Generator().manual_seed(3))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_correct_keys_matches_source(batch):
    c = dy.correct_keys(batch["keys"])
    assert c.dtype == torch.bool and c.shape == (64, dy.N_QUERIES, dy.SEQ_LEN)
    assert (c.sum(-1) == 1).all() and torch.equal(c.float().argmax(-1), batch["source"])
    assert not c[..., dy.N_PAIRS:].any()


def test_token_labels(batch):
    labels = dy.token_labels(batch, 0)
    assert len(labels) == dy.SEQ_LEN and all(l.endswith("?") for l in labels[dy.N_PAIRS:])
    assert labels[0] == f"{dy.KEYS[batch['keys'][0, 0]]}:{batch['values'][0, 0].item()}"


def test_task_bad_input():
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="positive integer"):
            dy.make_lookup_batch(bad)
    with pytest.raises(TypeError, match="torch.Tensor"):
        dy.correct_keys([[0] * dy.SEQ_LEN])
    with pytest.raises(ValueError, match="shape"):
        dy.correct_keys(torch.zeros(2, 7, dtype=torch.long))
    with pytest.raises(ValueError, match="2 dimensions"):
        dy.correct_keys(torch.zeros(dy.SEQ_LEN, dtype=torch.long))


# --------------------------------------------------------------------------- model and measurements


def test_model_attention_equals_the_plain_formula(batch):
    torch.manual_seed(0)
    model = dy.LookupModel().eval()
    logits, weights = model(batch["keys"], batch["values"])
    x = model.key_emb(batch["keys"]) + model.value_emb(batch["values"]) + model.pos_emb.weight
    q, k, v = model.attn.q_proj(x), model.attn.k_proj(x), model.attn.v_proj(x)
    want_w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(32), dim=-1)
    want = model.readout((x + model.attn.out_proj(want_w @ v))[:, dy.N_PAIRS:])
    torch.testing.assert_close(weights[:, 0], want_w)
    torch.testing.assert_close(logits, want)
    torch.testing.assert_close(torch.nn.functional.scaled_dot_product_attention(q, k, v), want_w @ v)


def test_mass_uniform_entropy_against_formulas(batch):
    c = dy.correct_keys(batch["keys"])
    g = torch.Generator().manual_seed(1)
    qw = torch.softmax(torch.randn(c.shape, generator=g), dim=-1)
    want = sum(qw[n, q, batch["source"][n, q]].item() for n in range(64) for q in range(dy.N_QUERIES)) / (64 * 4)
    assert math.isclose(dy.attention_mass(qw, c), want, rel_tol=1e-5)
    assert math.isclose(dy.uniform_mass(c), 1 / dy.SEQ_LEN)
    ent = torch.distributions.Categorical(probs=qw).entropy().mean().item()
    assert math.isclose(dy.row_entropy(qw), ent, rel_tol=1e-5)
    assert dy.row_entropy(c.float()) == 0.0 and math.copysign(1, dy.row_entropy(c.float())) == 1


def test_query_weights_averages_heads():
    w = torch.softmax(torch.randn(3, 2, dy.SEQ_LEN, dy.SEQ_LEN), dim=-1)
    torch.testing.assert_close(dy.query_weights(w), w[:, :, dy.N_PAIRS:].mean(1))
    with pytest.raises(ValueError, match="4 dimensions"):
        dy.query_weights(w[0])
    with pytest.raises(ValueError, match="must end in"):
        dy.query_weights(torch.ones(1, 1, 4, 4))


def test_measurement_bad_input(batch):
    c = dy.correct_keys(batch["keys"])
    with pytest.raises(ValueError, match="one shape"):
        dy.attention_mass(torch.ones(2, 4, 10), c)
    with pytest.raises(ValueError, match="boolean"):
        dy.attention_mass(c.float(), c.float())
    with pytest.raises(TypeError, match="torch.Tensor"):
        dy.row_entropy([[0.5, 0.5]])


def test_first_step_at_or_above():
    assert dy.first_step_at_or_above([0, 5, 10], [0.1, 0.6, 0.4], 0.5) == 5
    assert dy.first_step_at_or_above([0, 5], [0.1, 0.2], 0.5) is None
    with pytest.raises(ValueError, match="one length"):
        dy.first_step_at_or_above([0, 5], [0.1], 0.5)


# --------------------------------------------------------------------------- training and stored data


def test_training_is_deterministic_and_records():
    probe = dy.make_lookup_batch(50, torch.Generator().manual_seed(9))
    threads = torch.get_num_threads()
    m1, log1 = dy.train_lookup(12, seed=3, probe=probe, eval_every=4, save_at=(0, 12))
    m2, log2 = dy.train_lookup(12, seed=3)
    assert torch.get_num_threads() == threads  # restored
    assert log1["loss"] == log2["loss"] and len(log1["loss"]) == 12
    assert [e["step"] for e in log1["eval"]] == [0, 4, 8, 12] and log2["eval"] == []
    assert sorted(log1["checkpoints"]) == [0, 12]
    assert all(torch.equal(v, m1.state_dict()[k]) for k, v in log1["checkpoints"][12].items())
    torch.manual_seed(3)
    assert all(torch.equal(v, log1["checkpoints"][0][k]) for k, v in dy.LookupModel().state_dict().items())
    assert log1["eval"][-1] == {"step": 12, **dy.evaluate(m1, probe)}
    with pytest.raises(ValueError, match="positive integer"):
        dy.train_lookup(0)


def test_stored_run_starts_uniform_and_ends_sharp():
    curves = load_json("dynamics_curves.json")
    ckpt = load_tensor_dict("dynamics_checkpoints.pt")
    assert sorted(ckpt) == curves["steps_saved"]
    run = curves["runs"]["0"]
    assert abs(run["probe"]["mass"][0] - 0.1) < 0.01 and run["probe"]["mass"][-1] > 0.9
    assert run["test"]["accuracy"] == 1.0 and len(run["train_loss"]) == curves["steps"]
    test = dy.make_lookup_batch(200, torch.Generator().manual_seed(1))
    model = dy.LookupModel()
    model.load_state_dict(ckpt[1000])
    got = dy.evaluate(model, test)
    assert got["accuracy"] == 1.0 and got["mass"] > 0.9


# --------------------------------------------------------------------------- drawing and widget


@pytest.fixture(scope="module")
def drawing_inputs(batch):
    ckpt = load_tensor_dict("dynamics_checkpoints.pt")
    small = {s: ckpt[s] for s in (0, 1000)}
    maps = dy.checkpoint_maps(small, batch, 2)
    curve = {"step": [0, 500, 1000], "mass": [0.1, 0.5, 0.9]}
    return maps, curve, dy.token_labels(batch, 2), dy.correct_keys(batch["keys"])[2], small


def test_checkpoint_maps_match_the_model(batch, drawing_inputs):
    maps, _, _, _, small = drawing_inputs
    model = dy.LookupModel().eval()
    model.load_state_dict(small[1000])
    with torch.no_grad():
        want = dy.query_weights(model(batch["keys"], batch["values"])[1])[2]
    assert sorted(maps) == [0, 1000] and torch.equal(maps[1000], want)
    with pytest.raises(ValueError, match="non-empty dict"):
        dy.checkpoint_maps({}, batch)


def test_draw_checkpoint_returns_the_drawn_values(drawing_inputs):
    maps, curve, labels, correct, _ = drawing_inputs
    fig, axes = plt.subplots(1, 2)
    got = dy.draw_checkpoint(1000, maps, curve, labels, correct, axes=axes)
    assert got["map"].shape == (dy.N_QUERIES, dy.SEQ_LEN)
    assert math.isclose(got["mass"], (maps[1000] * correct).sum(-1).mean().item())
    assert got["curve_mass"] == 0.9 and got["mass"] > 0.9
    assert len(axes[0].patches) == dy.N_QUERIES  # one box per correct key
    assert "1000단계" in axes[0].get_title() and axes[1].get_xscale() == "symlog"
    with pytest.raises(ValueError, match="stored steps"):
        dy.draw_checkpoint(7, maps, curve, labels, correct)
    with pytest.raises(ValueError, match="map's shape"):
        dy.draw_checkpoint(0, maps, curve, labels, correct[:2])


def test_checkpoint_explorer_builds_a_slider(drawing_inputs):
    import ipywidgets as widgets

    maps, curve, labels, correct, _ = drawing_inputs
    box = dy.checkpoint_explorer(maps, curve, labels, correct)
    slider = box.children[0]
    assert isinstance(slider, widgets.SelectionSlider) and list(slider.options) == [0, 1000]
    slider.value = 1000  # redraws without error


# --------------------------------------------------------------------------- exercises


def test_12_1_correct_and_wrong():
    def right(keys):
        return (keys[:, dy.N_PAIRS:, None] == keys[:, None, :]) & (torch.arange(dy.SEQ_LEN) < dy.N_PAIRS)

    assert check("12-1", right).passed
    assert check("12-1", lambda k: right(k).int()).passed  # 0/1 is accepted too
    r = check("12-1", lambda k: k[:, dy.N_PAIRS:, None] == k[:, None, :])
    assert not r.passed and "쿼리 자신" in r.message
    r = check("12-1", lambda k: right(k).float().argmax(-1))
    assert not r.passed and "(n, Q)" in r.message
    r = check("12-1", lambda k: right(k)[..., : dy.N_PAIRS])
    assert not r.passed and "쌍 위치 6개만" in r.message
    r = check("12-1", lambda k: k[:, :, None] == k[:, None, :])
    assert not r.passed and "(n, T, T)" in r.message
    r = check("12-1", lambda k: right(k).roll(1, dims=-1))
    assert not r.passed and "정답 키는 위치" in r.message
    r = check("12-1", lambda k: right(k) | (torch.arange(dy.SEQ_LEN) == 0))
    assert not r.passed and "정확히 하나" in r.message
    r = check("12-1", lambda k: right(k).float() * 2)
    assert not r.passed and "True/False" in r.message
    assert "오류" in check("12-1", lambda k: 1 / 0).message


def test_12_2_correct_and_wrong():
    assert check("12-2", lambda qw, c: (qw * c).sum(-1).mean().item()).passed
    assert check("12-2", lambda qw, c: (qw * c).sum(-1).mean()).passed
    cases = {
        "키 축에서도 평균": lambda qw, c: (qw * c).mean(),
        "더하기만": lambda qw, c: (qw * c).sum(),
        "최대 가중치": lambda qw, c: qw.max(-1).values.mean(),
        "첫 번째 쿼리만": lambda qw, c: (qw * c).sum(-1)[:, 0].mean(),
        "정답이 아닌 키": lambda qw, c: (qw * ~c).sum(-1).mean(),
        "숫자 하나": lambda qw, c: (qw * c).sum(-1),
    }
    for hint, fn in cases.items():
        r = check("12-2", fn)
        assert not r.passed and hint in r.message, (hint, r.message)
    r = check("12-2", lambda qw, c: 0.5)
    assert not r.passed and "기대값" in r.message


def test_12_3_correct_and_wrong():
    right = {"key_emb", "value_emb", "pos_emb", "attn.q_proj", "attn.k_proj"}
    assert check("12-3", right).passed and check("12-3", sorted(right)).passed
    r = check("12-3", right | {"attn.v_proj"})
    assert not r.passed and "W^V" in r.message
    r = check("12-3", right | {"readout"})
    assert not r.passed and "출력층" in r.message
    r = check("12-3", right - {"value_emb"})
    assert not r.passed and "value_emb" in r.message and "빠졌" in r.message
    r = check("12-3", {"attn.q_proj", "attn.k_proj"})
    assert not r.passed and "key_emb" in r.message
    r = check("12-3", right | {"W_Q"})
    assert not r.passed and "모르는 이름" in r.message
    r = check("12-3", "attn.q_proj")
    assert not r.passed and "집합" in r.message
    assert not check("12-3", ...).passed
