"""Notebook 02's generated module (helpers.lessons.seq2seq_attention), its stored models and its exercise checkers."""

import importlib.util
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import seed_everything
from helpers.attention import padding_mask, scaled_dot_product_attention
from helpers.data import DATA_DIR, load_json, load_tensor_dict
from helpers.exercises import check
from helpers.lessons.seq2seq_attention import (
    BOS,
    PAD,
    AdditiveAttention,
    DotAttention,
    Encoder,
    Seq2Seq,
    accuracy_by_length,
    accuracy_by_position,
    alignment_explorer,
    alignment_of,
    alignment_panels,
    attend_scores,
    checkpoint,
    decode_tokens,
    draw_accuracy_vs_length,
    draw_loss_curves,
    draw_position_accuracy,
    make_reversal_batch,
    model_from_checkpoint,
    predict,
    train_steps,
)

pytestmark = pytest.mark.notebook("02")  # `python3 course.py test 02` runs this module

F64 = torch.float64


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def stored():
    return {kind: model_from_checkpoint(load_tensor_dict(f"seq2seq_{kind}.pt")) for kind in ("none", "additive", "dot")}


def _qkv(b=3, t=5, d=4, dv=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(b, d, generator=g, dtype=F64),
        torch.randn(b, t, d, generator=g, dtype=F64),
        torch.randn(b, t, dv, generator=g, dtype=F64),
    )


# --------------------------------------------------------------------------- task data


def test_reversal_batch_is_the_reversed_input_with_padding():
    src, tgt, lengths = make_reversal_batch(50, 1, 9, seed=3)
    assert src.shape == tgt.shape == (50, int(lengths.max()))
    assert int(lengths.min()) >= 1 and int(lengths.max()) <= 9
    for s, t, n in zip(src.tolist(), tgt.tolist(), lengths.tolist()):
        assert t[:n] == s[:n][::-1]
        assert s[n:] == t[n:] == [PAD] * (len(s) - n)
        assert PAD not in s[:n] and BOS not in s[:n]
    assert torch.equal(src != PAD, padding_mask(lengths))  # the course's one padding mask


def test_reversal_batch_is_seeded_and_labels_decode():
    a, b, c = (make_reversal_batch(8, 2, 6, seed=s) for s in (11, 11, 12))
    assert all(torch.equal(x, y) for x, y in zip(a, b)) and not torch.equal(a[0], c[0])
    assert decode_tokens(torch.tensor([2, 3, 21, PAD, BOS])) == ["A", "B", "T", "·", "<s>"]


# --------------------------------------------------------------------------- attention modules


@pytest.mark.parametrize("lengths", [None, [5, 2, 1]])
def test_dot_attention_matches_pytorch_and_course_sdpa(lengths):
    q, k, v = _qkv(d=4)
    mask = None if lengths is None else padding_mask(torch.tensor(lengths), 5)
    att = DotAttention(3, 4).double()
    q3 = q[:, :3].contiguous()
    ctx, w = att(q3, k, v, mask)
    wq = att.W(q3)[:, None, :]  # (B, 1, d_k)
    attn_mask = None if mask is None else mask[:, None, :]
    ref = F.scaled_dot_product_attention(wq, k, v, attn_mask=attn_mask, scale=1.0)[:, 0]
    course, course_w = scaled_dot_product_attention(wq * 4**0.5, k, v, attn_mask)
    torch.testing.assert_close(ctx, ref, atol=1e-12, rtol=0)
    torch.testing.assert_close(ctx, course[:, 0], atol=1e-12, rtol=0)
    torch.testing.assert_close(w, course_w[:, 0], atol=1e-12, rtol=0)
    if mask is not None:
        assert (w[~mask] == 0).all()


def _additive_reference(att, q, k, v, mask):
    """The formula one key at a time: e_j = vᵀ tanh(W_q q + W_k k_j)."""
    Wq, Wk, vv = att.W_q.weight.detach(), att.W_k.weight.detach(), att.v.weight[0].detach()
    scores = torch.tensor(
        [[float(vv @ torch.tanh(Wq @ q[i] + Wk @ k[i, j])) for j in range(k.shape[1])] for i in range(k.shape[0])],
        dtype=F64,
    )
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.einsum("bt,btd->bd", w, v), w


@pytest.mark.parametrize("lengths", [[5, 5, 5], [5, 2, 1]])
def test_additive_attention_matches_the_formula(lengths):
    seed_everything(0)
    q, k, v = _qkv(d=4)
    att = AdditiveAttention(4, 4, 7).double()
    mask = padding_mask(torch.tensor(lengths), 5)
    ctx, w = att(q, k, v, mask)
    ref_ctx, ref_w = _additive_reference(att, q, k, v, mask)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(ctx, ref_ctx)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, dtype=F64))
    assert (w[~mask] == 0).all()


def test_attend_scores_is_softmax_then_weighted_sum():
    _, k, v = _qkv()
    scores = torch.randn(3, 5, dtype=F64)
    ctx, w = attend_scores(scores, v)
    torch.testing.assert_close(w, torch.softmax(scores, -1))
    torch.testing.assert_close(ctx, torch.einsum("bt,btd->bd", w, v))


def test_additive_score_is_not_a_dot_product():
    seed_everything(1)
    _, k, _ = _qkv()
    zero = torch.zeros(3, 4, dtype=F64)
    assert AdditiveAttention(4, 4, 8).double().scores(zero, k).abs().max() > 1e-3
    assert (DotAttention(4, 4).double().scores(zero, k) == 0).all()


# --------------------------------------------------------------------------- encoder, decoder, model


def test_encoder_fixed_context_is_both_directions_last_states():
    seed_everything(0)
    enc, emb = Encoder(8, 6).double(), torch.nn.Embedding(22, 8).double()
    src, _, lengths = make_reversal_batch(4, 2, 7, seed=1)
    states, fixed = enc(emb(src), lengths)
    for b, n in enumerate(lengths.tolist()):
        assert (states[b, n:] == 0).all()
        torch.testing.assert_close(fixed[b, :6], states[b, n - 1, :6])
        torch.testing.assert_close(fixed[b, 6:], states[b, 0, 6:])


@pytest.mark.parametrize("kind", ["none", "additive", "dot"])
def test_model_shapes_and_padding_invariance(kind):
    seed_everything(0)
    model = Seq2Seq(kind, hidden_dim=16).double().eval()
    src, tgt, lengths = make_reversal_batch(4, 2, 6, seed=5)
    with torch.no_grad():
        logits, w = model(src, lengths, tgt)
    assert logits.shape == (4, src.shape[1], 22)
    if kind == "none":
        assert w is None
    else:
        assert w.shape == (4, src.shape[1], src.shape[1])
        torch.testing.assert_close(w.sum(-1), torch.ones(4, src.shape[1], dtype=F64))
        assert (w.masked_select(~padding_mask(lengths)[:, None, :].expand_as(w)) == 0).all()
    i = int(lengths.argmin())
    n = int(lengths[i])
    with torch.no_grad():
        alone, _ = model(src[i : i + 1, :n], lengths[i : i + 1], tgt[i : i + 1, :n])
    torch.testing.assert_close(alone[0], logits[i, :n])  # extra padding changes nothing


def test_decoder_step_by_hand_equals_the_model(stored):
    model = stored["additive"]
    s, _, n = make_reversal_batch(1, 8, 8, seed=5)
    with torch.no_grad():
        logits_all, w_all = model(s, n)
        keys, fixed = model.encoder(model.embed(s), n)
        state, prev = torch.tanh(model.bridge(fixed)), torch.tensor([BOS])
        for t in range(8):
            logits, state, w = model.decoder.step(model.embed(prev), state, keys, None, fixed)
            torch.testing.assert_close(w, w_all[:, t])
            torch.testing.assert_close(logits, logits_all[:, t])
            prev = logits.argmax(-1)


def test_training_lowers_the_loss_and_is_deterministic():
    def run():
        seed_everything(0)
        return train_steps(Seq2Seq("additive", hidden_dim=16).double(), 20, seed=1, batch_size=8, max_len=4, lr=2e-2)

    a, b = run(), run()
    assert a == b
    assert sum(a[-5:]) / 5 < sum(a[:5]) / 5 - 0.2


def test_checkpoint_round_trip(tmp_path):
    seed_everything(0)
    model = Seq2Seq("dot", hidden_dim=8).eval()
    torch.save(checkpoint(model), tmp_path / "m.pt")
    again = model_from_checkpoint(torch.load(tmp_path / "m.pt", weights_only=True), dtype=torch.float32)
    src, _, lengths = make_reversal_batch(3, 2, 4, seed=0)
    with torch.no_grad():
        assert torch.equal(model(src, lengths)[0], again(src, lengths)[0])


# --------------------------------------------------------------------------- stored models and results


def _train_script():
    path = Path(__file__).resolve().parents[1] / "scripts" / "train_seq2seq.py"
    spec = importlib.util.spec_from_file_location("train_seq2seq", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_results_record_their_config_and_setup():
    results = load_json("seq2seq_results.json")
    assert results["config"] == _train_script().CONFIG
    assert {"torch", "cpu_capability", "threads", "total_seconds"} <= set(results["setup"])
    assert set(results["models"]) == {"none", "additive", "dot"}
    for kind in results["models"]:
        assert (DATA_DIR / f"seq2seq_{kind}.pt").stat().st_size < 1_000_000


def test_stored_checkpoints_reproduce_the_stored_story(stored):
    """Attention holds up to the longest training length, the fixed context does not (float64 evaluation)."""
    results = load_json("seq2seq_results.json")
    longest = results["config"]["max_len"]
    acc = {kind: accuracy_by_length(m, [5, longest], n=50)["sequence"] for kind, m in stored.items()}
    assert acc["additive"][1] >= 0.9 and acc["dot"][1] >= 0.9
    assert acc["none"][0] >= 0.8 and acc["none"][1] <= 0.05
    greedy = accuracy_by_position(stored["none"], longest, n=50)
    forced = accuracy_by_position(stored["none"], longest, n=50, teacher_forcing=True)
    assert greedy.shape == forced.shape == (longest,)
    assert greedy[:2].mean() > greedy[-2:].mean() + 0.3  # mistakes pile up along the output
    assert greedy.mean() < forced.mean() < 0.7
    # The stored evaluation (n = 200 per length) is what the notebook quotes.
    seq = {k: r["accuracy"]["sequence"] for k, r in results["models"].items()}
    assert min(seq["additive"][:longest]) >= 0.99 and min(seq["dot"][:longest]) >= 0.99
    assert max(seq["none"][15:longest]) == 0
    assert seq["additive"][longest + 1] > 0.9 and seq["additive"][longest + 2] < 0.8 and seq["dot"][-1] > 0.9


def test_learned_alignment_is_the_anti_diagonal_band(stored):
    for kind, exact_min in (("additive", 0.7), ("dot", 0.95)):
        _, _, _, w = predict(stored[kind], 12, 50, seed=300)
        offset = w.argmax(-1) - (11 - torch.arange(12))
        assert ((offset == 0) | (offset == 1)).all()
        assert (offset == 0).double().mean() > exact_min


# --------------------------------------------------------------------------- figures and explorer


def test_draw_helpers():
    res = {
        "none": {"length": [4, 8], "token": [1.0, 0.5], "sequence": [1.0, 0.1]},
        "additive": {"length": [4, 8], "token": [1.0, 1.0], "sequence": [1.0, 0.95]},
    }
    _, (a1, a2, a3) = plt.subplots(1, 3)
    draw_accuracy_vs_length(res, ax=a1, train_max=8)
    assert len(a1.get_lines()) == 3 and list(a1.get_lines()[0].get_ydata()) == [1.0, 0.1]
    draw_position_accuracy({3: np.ones(3), 5: np.zeros(5)}, np.full(5, 0.5), ax=a2)
    assert len(a2.get_lines()) == 3
    draw_loss_curves({"dot": {"loss_curve": {"step": [25, 50], "loss": [2.0, 1.0]}}}, ax=a3)
    assert a3.get_yscale() == "log"


def test_alignment_panels_update_in_place():
    w = torch.softmax(torch.randn(4, 6, generator=torch.Generator().manual_seed(0), dtype=F64), dim=-1)
    fig, (left, right) = plt.subplots(1, 2)
    update = alignment_panels(left, right, w, list("ABCDEF"), list("WXYZ"))
    n_artists = len(left.patches) + len(right.patches) + len(right.texts)
    row = update(2)
    np.testing.assert_array_equal(row, w[2].numpy())
    assert [b.get_height() for b in right.patches] == pytest.approx(w[2].tolist())
    assert left.patches[0].get_y() == 1.5 and "'Y'" in right.get_title()
    assert len(left.patches) + len(right.patches) + len(right.texts) == n_artists  # nothing re-created


def test_alignment_explorer_follows_the_slider(stored):
    w, s_lab, p_lab = alignment_of(stored["additive"], 6, seed=8)
    explorer = alignment_explorer(w, s_lab, p_lab)
    first, renders = explorer.png, explorer.renders
    slider = explorer.controls["step"]
    assert (slider.min, slider.max, slider.continuous_update) == (0, 5, True)
    explorer.set(step=3)
    np.testing.assert_array_equal(explorer.last, w[3].numpy())
    assert explorer.renders == renders + 1 and explorer.png != first
    assert int(explorer.last.argmax()) in (6 - 1 - 3, 6 - 3)


# --------------------------------------------------------------------------- exercises


def _dot_step(query, keys):
    w = torch.softmax(torch.einsum("btd,bd->bt", keys, query), dim=-1)
    return torch.einsum("bt,btd->bd", w, keys), w


def test_exercise_02_1():
    assert check("02-1", _dot_step).passed
    assert check("02-1", lambda q, k: list(_dot_step(q, k))).passed  # a list [context, weights] is fine too
    assert check("02-1", lambda q, k: tuple(t.numpy() for t in _dot_step(q, k))).passed
    cases = {
        "소프트맥스를 T 축": lambda q, k: (k.mean(1), torch.einsum("btd,bd->bt", k, q)),
        "배치 축": lambda q, k: (k.mean(1), torch.softmax(torch.einsum("btd,bd->bt", k, q), dim=0)),
        "√d로": lambda q, k: (k.mean(1), torch.softmax(torch.einsum("btd,bd->bt", k, q) / 2, dim=-1)),
        "쿼리 자체": lambda q, k: (q, _dot_step(q, k)[1]),
        "단순 평균": lambda q, k: (k.mean(1), _dot_step(q, k)[1]),
        "튜플": lambda q, k: _dot_step(q, k)[0],
        "순서가 바뀌었": lambda q, k: _dot_step(q, k)[::-1],
        ".squeeze(-1)로 지우세요": lambda q, k: (_dot_step(q, k)[0], _dot_step(q, k)[1][..., None]),  # bmm's (B, T, 1)
        ".squeeze(-2)로 지우세요": lambda q, k: (_dot_step(q, k)[0][:, None], _dot_step(q, k)[1]),  # (B, 1, d)
        "오류": lambda q, k: q @ k,
    }
    for needle, fn in cases.items():
        result = check("02-1", fn)
        assert not result.passed and needle in result.message, (needle, result.message)


def test_exercise_02_2():
    def good(q, k, W_q, W_k, v):
        return torch.tanh((q @ W_q.T).unsqueeze(1) + k @ W_k.T) @ v

    assert check("02-2", good).passed
    no_tanh = lambda q, k, W_q, W_k, v: ((q @ W_q.T).unsqueeze(1) + k @ W_k.T) @ v  # noqa: E731
    weights = lambda *a: torch.softmax(good(*a), dim=-1)  # noqa: E731
    wrong_shape = lambda *a: good(*a).T  # noqa: E731
    no_transpose = lambda q, k, W_q, W_k, v: torch.tanh((q @ W_q).unsqueeze(1) + k @ W_k) @ v  # noqa: E731
    for fn, needle in (
        (no_tanh, "tanh가 빠졌"),
        (weights, "소프트맥스를 적용한"),
        (wrong_shape, "(B, T)"),
        (no_transpose, "W_q는 (d_a, d_q) = (6, 3)"),
        (lambda q, k, W_q, W_k, v: good(q, k, W_q, W_k, v)[..., None], ".squeeze(-1)로 지우세요"),  # @ v[:, None]
    ):
        result = check("02-2", fn)
        assert not result.passed and needle in result.message, result.message
    assert "아직 구현" in check("02-2", lambda *a: (_ for _ in ()).throw(NotImplementedError)).message


def test_exercise_02_3_diagnoses_each_mistake():
    assert check("02-3", lambda s, n: n / (s.exp().sum() + n)).passed
    assert check(
        "02-3", lambda s, n: torch.softmax(torch.cat([s, torch.zeros(n, dtype=s.dtype)]), 0)[len(s) :].sum()
    ).passed
    cases = {
        "e^0 = 1에 비례": lambda s, n: 0.0,
        "균등한 가중치": lambda s, n: n / (len(s) + n),
        "패딩 칸 하나의 가중치": lambda s, n: 1 / (s.exp().sum() + 1),
        "분모에 진짜 칸": lambda s, n: n / s.exp().sum(),
        "exp를 빠뜨렸": lambda s, n: n / (s.sum() + n),
        "1 − 답": lambda s, n: s.exp().sum() / (s.exp().sum() + n),
        "pad_weight([2.0, 0.5, -1.0], 2)가 칸마다의 가중치": lambda s, n: torch.full((n,), 1.0) / (s.exp().sum() + n),
        "기대값은": lambda s, n: 0.5,
        "오류": lambda s, n: s @ s[None],
    }
    for needle, fn in cases.items():
        result = check("02-3", fn)
        assert not result.passed and needle in result.message, (needle, result.message)
        assert "**" not in result.message, result.message  # plain text: the message is not rendered as Markdown
    assert not check("02-3", ...).passed


def test_exercise_02_3_prediction_matches_the_trained_dot_model(stored):
    """The notebook's claim: for the dot model the formula predicts the measured padding weight."""
    model = stored["dot"]
    s, _, n = make_reversal_batch(1, 5, 5, seed=11)
    s = torch.cat([s, torch.full((1, 7), PAD)], dim=1)
    with torch.no_grad():
        keys, fixed = model.encoder(model.embed(s), n)
        state = torch.tanh(model.bridge(fixed))
        scores = model.decoder.attention.scores(state, keys)[0]
        _, _, w = model.decoder.step(model.embed(torch.tensor([BOS])), state, keys, None, fixed)
    assert (scores[5:] == 0).all()
    torch.testing.assert_close(w[0, 5:].sum(), 7 / (scores[:5].exp().sum() + 7))
