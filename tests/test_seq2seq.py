"""Unit tests of helpers.seq2seq (notebook 02): task data, both attention scores, the model, figures, exercises."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from helpers import seed_everything  # noqa: E402
from helpers.attention import scaled_dot_product_attention  # noqa: E402
from helpers.data import DATA_DIR, load_json, load_tensor_dict  # noqa: E402
from helpers.exercises import check  # noqa: E402
from helpers.seq2seq import (  # noqa: E402
    BOS,
    PAD,
    AdditiveAttention,
    DotProductAttention,
    Seq2Seq,
    accuracy_by_length,
    accuracy_by_position,
    alignment_accuracy,
    alignment_explorer,
    checkpoint,
    decode_tokens,
    dot_product_attention,
    draw_accuracy_vs_length,
    draw_alignment_step,
    make_reversal_batch,
    model_from_checkpoint,
    padding_mask,
    reverse_padded,
    train_steps,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _qkv(b=3, t=5, d=4, dv=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, d, generator=g, dtype=torch.float64)
    k = torch.randn(b, t, d, generator=g, dtype=torch.float64)
    v = torch.randn(b, t, dv, generator=g, dtype=torch.float64)
    return q, k, v


# --------------------------------------------------------------------------- task data


def test_reversal_batch_is_the_reversed_input_with_padding():
    src, tgt, lengths = make_reversal_batch(50, 1, 9, seed=3)
    assert src.shape == tgt.shape == (50, int(lengths.max()))
    assert int(lengths.min()) >= 1 and int(lengths.max()) <= 9
    for s, t, n in zip(src.tolist(), tgt.tolist(), lengths.tolist()):
        assert t[:n] == s[:n][::-1]
        assert s[n:] == t[n:] == [PAD] * (len(s) - n)
        assert PAD not in s[:n] and BOS not in s[:n]


def test_reversal_batch_is_seeded():
    a = make_reversal_batch(8, 2, 6, seed=11)
    b = make_reversal_batch(8, 2, 6, seed=11)
    c = make_reversal_batch(8, 2, 6, seed=12)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], c[0])


def test_reverse_twice_is_identity_and_decode_labels():
    src, _, lengths = make_reversal_batch(20, 1, 7, seed=0)
    assert torch.equal(reverse_padded(reverse_padded(src, lengths), lengths), src)
    assert decode_tokens(torch.tensor([2, 3, 21, PAD, BOS])) == ["A", "B", "T", "·", "<s>"]


@pytest.mark.parametrize("kwargs, exc", [
    ({"n": 0, "min_len": 1, "max_len": 3}, ValueError),
    ({"n": 4, "min_len": 5, "max_len": 3}, ValueError),
    ({"n": 4.0, "min_len": 1, "max_len": 3}, TypeError),
    ({"n": 4, "min_len": 1, "max_len": 3, "num_symbols": 1}, ValueError),
])
def test_reversal_batch_bad_input(kwargs, exc):
    with pytest.raises(exc):
        make_reversal_batch(seed=0, **kwargs)


def test_padding_mask_matches_plain_loop():
    lengths = torch.tensor([3, 1, 5])
    want = torch.tensor([[j < n for j in range(6)] for n in lengths.tolist()])
    assert torch.equal(padding_mask(lengths, 6), want)
    assert padding_mask(lengths).shape == (3, 5)


@pytest.mark.parametrize("lengths, max_len, exc", [
    (torch.tensor([2.0, 3.0]), None, TypeError),
    ([2, 3], None, TypeError),
    (torch.tensor([2, 0]), None, ValueError),
    (torch.tensor([[2, 3]]), None, ValueError),
    (torch.tensor([2, 5]), 4, ValueError),
])
def test_padding_mask_bad_input(lengths, max_len, exc):
    with pytest.raises(exc):
        padding_mask(lengths, max_len)


# --------------------------------------------------------------------------- attention scores


@pytest.mark.parametrize("use_mask", [False, True])
def test_dot_attention_matches_pytorch_sdpa(use_mask):
    q, k, v = _qkv()
    mask = padding_mask(torch.tensor([5, 2, 1]), 5) if use_mask else None
    attn_mask = None if mask is None else mask[:, None, :]  # (B, 1, T): True = may attend
    ctx, w = dot_product_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q[:, None], k, v, attn_mask=attn_mask, scale=1.0)[:, 0]
    assert torch.allclose(ctx, ref, atol=1e-12)
    ref_w = torch.softmax((k @ q[:, :, None]).squeeze(-1).masked_fill(
        ~mask if mask is not None else torch.zeros(3, 5, dtype=torch.bool), float("-inf")), dim=-1)
    assert torch.allclose(w, ref_w, atol=1e-12)
    if use_mask:
        assert (w[~mask] == 0).all()


@pytest.mark.parametrize("use_mask", [False, True])
def test_scaled_dot_attention_matches_course_sdpa(use_mask):
    q, k, v = _qkv(d=8)
    mask = padding_mask(torch.tensor([5, 3, 4]), 5) if use_mask else None
    ctx, w = dot_product_attention(q, k, v, mask, scaled=True)
    ref_out, ref_w = scaled_dot_product_attention(q[:, None], k, v, None if mask is None else mask[:, None, :])
    assert torch.allclose(ctx, ref_out[:, 0], atol=1e-12)
    assert torch.allclose(w, ref_w[:, 0], atol=1e-12)


def test_dot_module_general_matches_projected_sdpa():
    q, k, v = _qkv(d=4)
    att = DotProductAttention(3, 4, general=True).double()
    q3 = q[:, :3].contiguous()
    mask = padding_mask(torch.tensor([4, 5, 2]), 5)
    ctx, w = att(q3, k, v, mask)
    ref = F.scaled_dot_product_attention(att.W(q3)[:, None], k, v, attn_mask=mask[:, None], scale=1.0)[:, 0]
    assert torch.allclose(ctx, ref, atol=1e-12)
    plain = DotProductAttention(4, 4).double()
    assert torch.allclose(plain(q, k, v)[0], dot_product_attention(q, k, v)[0], atol=1e-12)


def _additive_reference(att, q, k, v, mask):
    """Plain formula, one key at a time: e_j = vᵀ tanh(W_q q + W_k k_j)."""
    Wq, Wk, vv = att.W_q.weight, att.W_k.weight, att.v.weight[0]
    b, t = k.shape[:2]
    scores = torch.empty(b, t, dtype=q.dtype)
    for i in range(b):
        for j in range(t):
            scores[i, j] = vv @ torch.tanh(Wq @ q[i] + Wk @ k[i, j])
    scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return torch.einsum("bt,btd->bd", w, v), w


@pytest.mark.parametrize("lengths", [[5, 5, 5], [5, 2, 1]])
def test_additive_attention_matches_plain_formula(lengths):
    seed_everything(0)
    q, k, v = _qkv(d=4)
    att = AdditiveAttention(4, 4, 7).double()
    mask = padding_mask(torch.tensor(lengths), 5)
    ctx, w = att(q, k, v, mask)
    ref_ctx, ref_w = _additive_reference(att, q, k, v, mask)
    assert torch.allclose(w, ref_w, atol=1e-12)
    assert torch.allclose(ctx, ref_ctx, atol=1e-12)
    assert torch.allclose(w.sum(-1), torch.ones(3, dtype=torch.float64))
    assert (w[~mask] == 0).all()


def test_additive_attention_different_sizes_and_default_values():
    q, k, _ = _qkv(d=6)
    att = AdditiveAttention(3, 6, 5).double()
    ctx, w = att(q[:, :3].contiguous(), k)
    assert ctx.shape == (3, 6) and w.shape == (3, 5)
    assert torch.allclose(ctx, torch.einsum("bt,btd->bd", w, k))


def test_additive_score_is_not_a_dot_product():
    # Any bilinear score qᵀMk is 0 for q = 0; the additive score generally is not.
    seed_everything(1)
    att = AdditiveAttention(4, 4, 8).double()
    _, k, _ = _qkv()
    assert att.scores(torch.zeros(3, 4, dtype=torch.float64), k).abs().max() > 1e-3


def test_fully_masked_row_gives_zero_weights_not_nan():
    q, k, v = _qkv()
    mask = torch.zeros(3, 5, dtype=torch.bool)
    mask[0, 0] = True
    for ctx, w in (dot_product_attention(q, k, v, mask), AdditiveAttention(4, 4, 3).double()(q, k, v, mask)):
        assert torch.isfinite(w).all() and torch.isfinite(ctx).all()
        assert (w[1:] == 0).all() and (ctx[1:] == 0).all()


@pytest.mark.parametrize("make, exc", [
    (lambda q, k, v: (q.tolist(), k, v, None), TypeError),
    (lambda q, k, v: (q.long(), k, v, None), ValueError),
    (lambda q, k, v: (q[0], k, v, None), ValueError),
    (lambda q, k, v: (q, k[:2], v, None), ValueError),
    (lambda q, k, v: (q, k, v[:, :4], None), ValueError),
    (lambda q, k, v: (q, k, v, torch.ones(3, 5, dtype=torch.long)), TypeError),
    (lambda q, k, v: (q, k, v, torch.ones(3, 4, dtype=torch.bool)), ValueError),
])
def test_attention_bad_input(make, exc):
    q, k, v = _qkv()
    args = make(q, k, v)
    with pytest.raises(exc):
        dot_product_attention(*args)
    with pytest.raises(exc):
        AdditiveAttention(4, 4, 3).double()(*args)


def test_attention_size_errors():
    q, k, v = _qkv(d=4)
    with pytest.raises(ValueError, match="same size"):
        dot_product_attention(q[:, :3], k, v)
    with pytest.raises(ValueError, match="general=True"):
        DotProductAttention(3, 4)
    with pytest.raises(ValueError, match="expected query"):
        AdditiveAttention(3, 4, 5).double()(q, k, v)
    with pytest.raises(TypeError):
        AdditiveAttention(3.0, 4, 5)


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize("kind", ["none", "additive", "dot"])
def test_model_shapes_and_padding_invariance(kind):
    seed_everything(0)
    model = Seq2Seq(kind, hidden_dim=16).eval()
    src, tgt, lengths = make_reversal_batch(4, 2, 6, seed=5)
    logits, w = model(src, lengths, tgt)
    assert logits.shape == (4, src.shape[1], 22)
    if kind == "none":
        assert w is None
    else:
        assert w.shape == (4, src.shape[1], src.shape[1])
        assert torch.allclose(w.sum(-1), torch.ones(4, src.shape[1]))
        assert (w.masked_select(~padding_mask(lengths)[:, None, :].expand_as(w)) == 0).all()
    # Extra padding must not change a sequence's outputs (packing + mask).
    i = int(lengths.argmin())
    n = int(lengths[i])
    alone, _ = model(src[i:i + 1, :n], lengths[i:i + 1], tgt[i:i + 1, :n])
    assert torch.allclose(alone[0], logits[i, :n], atol=1e-5)


def test_model_bad_input():
    with pytest.raises(ValueError, match="attention must be one of"):
        Seq2Seq("luong")
    model = Seq2Seq("none", hidden_dim=8)
    with pytest.raises(ValueError):
        model(torch.tensor([2, 3, 4]), torch.tensor([3]))
    with pytest.raises(TypeError):
        model(torch.tensor([[2, 3, 4]]), [3])


def test_training_lowers_the_loss_and_is_deterministic():
    def run():
        seed_everything(0)
        model = Seq2Seq("additive", hidden_dim=16)
        return train_steps(model, 25, seed=1, batch_size=16, max_len=5, lr=1e-2)

    a, b = run(), run()
    assert a == b
    assert sum(a[-5:]) / 5 < sum(a[:5]) / 5 - 0.2


def test_checkpoint_round_trip(tmp_path):
    seed_everything(0)
    model = Seq2Seq("dot", hidden_dim=8).eval()
    path = tmp_path / "m.pt"
    torch.save(checkpoint(model), path)
    again = model_from_checkpoint(torch.load(path, weights_only=True))
    src, tgt, lengths = make_reversal_batch(3, 2, 4, seed=0)
    assert torch.equal(model(src, lengths)[0], again(src, lengths)[0])
    with pytest.raises(ValueError):
        model_from_checkpoint({"state_dict": {}})


def test_alignment_accuracy():
    anti = torch.eye(5).flip(1)
    assert alignment_accuracy(anti) == 1.0
    assert alignment_accuracy(torch.eye(5)) == pytest.approx(0.2)  # only the centre agrees
    assert alignment_accuracy(torch.stack([anti, torch.eye(5)])) == pytest.approx(0.6)
    shifted = torch.eye(5).roll(1, dims=1).flip(1)  # every row one column off (the last wraps around)
    assert alignment_accuracy(shifted) == 0.0
    assert alignment_accuracy(shifted, tolerance=1) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        alignment_accuracy(torch.ones(3, 4))
    with pytest.raises(ValueError):
        alignment_accuracy(anti, tolerance=-1)


def test_stored_checkpoints_reproduce_the_stored_story():
    """The shipped models: attention holds up on long inputs, the fixed context does not."""
    results = load_json("seq2seq_results.json")
    plain = model_from_checkpoint(load_tensor_dict("seq2seq_none.pt"))
    additive = model_from_checkpoint(load_tensor_dict("seq2seq_additive.pt"))
    longest = results["config"]["max_len"]
    acc_plain = accuracy_by_length(plain, [longest], n=50)["sequence"][0]
    acc_add = accuracy_by_length(additive, [longest], n=50)["sequence"][0]
    assert acc_add >= 0.9 and acc_plain <= 0.5
    greedy = accuracy_by_position(plain, longest, n=50)
    forced = accuracy_by_position(plain, longest, n=50, teacher_forcing=True)
    assert greedy.shape == forced.shape == (longest,)
    assert greedy[:2].mean() > greedy[-2:].mean() + 0.3  # mistakes pile up along the output
    assert forced.mean() < 0.7 and forced.mean() > greedy.mean()
    assert accuracy_by_position(plain, 5, n=50, teacher_forcing=True).mean() > 0.95
    assert (DATA_DIR / "seq2seq_none.pt").stat().st_size < 2_000_000


# --------------------------------------------------------------------------- figures and widget


def test_draw_alignment_step_returns_the_row():
    w = torch.softmax(torch.randn(4, 6, generator=torch.Generator().manual_seed(0)), dim=-1)
    src, tgt = list("ABCDEF"), list("WXYZ")
    _, axes = plt.subplots(1, 2)
    row = draw_alignment_step(w, src, tgt, 2, axes=axes)
    assert row.shape == (6,) and abs(row - w[2].numpy()).max() < 1e-12
    assert len(axes[1].patches) == 6  # one bar per input token
    assert "'" + tgt[2] + "'" in axes[1].get_title()
    with pytest.raises(ValueError):
        draw_alignment_step(w, src, tgt, 4)
    with pytest.raises(ValueError):
        draw_alignment_step(w, src[:5], tgt, 0)


def test_draw_accuracy_vs_length():
    res = {"none": {"length": [4, 8], "token": [1.0, 0.5], "sequence": [1.0, 0.1]},
           "additive": {"length": [4, 8], "token": [1.0, 1.0], "sequence": [1.0, 0.95]}}
    ax = draw_accuracy_vs_length(res, train_max=8)
    assert len(ax.get_lines()) == 3  # two models + the training-range marker
    assert list(ax.get_lines()[0].get_ydata()) == [1.0, 0.1]
    with pytest.raises(ValueError):
        draw_accuracy_vs_length(res, metric="bleu")


def test_alignment_explorer_builds_a_slider():
    import ipywidgets

    w = torch.eye(3).flip(1)
    box = alignment_explorer(w, list("ABC"), list("CBA"))
    slider = box.children[0]
    assert isinstance(slider, ipywidgets.IntSlider) and (slider.min, slider.max) == (0, 2)


# --------------------------------------------------------------------------- exercises


def _dot_step(query, keys):
    w = torch.softmax(torch.einsum("btd,bd->bt", keys, query), dim=-1)
    return torch.einsum("bt,btd->bd", w, keys), w


def test_exercise_02_1():
    assert check("02-1", _dot_step).passed
    cases = {
        "소프트맥스를 T 축": lambda q, k: (k.mean(1), torch.einsum("btd,bd->bt", k, q)),
        "배치 축": lambda q, k: (k.mean(1), torch.softmax(torch.einsum("btd,bd->bt", k, q), dim=0)),
        "√d로": lambda q, k: (k.mean(1), torch.softmax(torch.einsum("btd,bd->bt", k, q) / 2, dim=-1)),
        "쿼리 자체": lambda q, k: (q, _dot_step(q, k)[1]),
        "단순 평균": lambda q, k: (k.mean(1), _dot_step(q, k)[1]),
        "튜플": lambda q, k: _dot_step(q, k)[0],
        "순서가 바뀌었": lambda q, k: _dot_step(q, k)[::-1],
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
    for fn, needle in ((no_tanh, "tanh가 빠졌"), (weights, "소프트맥스를 적용한"), (wrong_shape, "(B, T)")):
        result = check("02-2", fn)
        assert not result.passed and needle in result.message, result.message
    assert "아직 구현" in check("02-2", lambda *a: (_ for _ in ()).throw(NotImplementedError)).message


def test_exercise_02_3():
    assert check("02-3", lambda n: torch.eye(n).flip(1)).passed
    assert check("02-3", lambda n: [[1.0 if j == n - 1 - i else 0.0 for j in range(n)] for i in range(n)]).passed
    cases = ((lambda n: torch.eye(n), "대각선입니다"),
             (lambda n: torch.eye(n).roll(1, dims=1).flip(1), "출력 단계"),
             (lambda n: torch.ones(n, n), "행(출력 단계)의 합"),
             (lambda n: torch.eye(n)[:, :-1], "모양"))
    for fn, needle in cases:
        result = check("02-3", fn)
        assert not result.passed and needle in result.message, result.message
    assert not check("02-3", ...).passed
