"""helpers.attention against PyTorch's own attention and the plain formula."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from helpers.attention import (
    MultiHeadAttention,
    causal_mask,
    chunked_attention,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)

pytestmark = pytest.mark.notebook("09")  # `python3 course.py test 09` runs this module

DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(atol=2e-5, rtol=2e-5), torch.float64: dict(atol=1e-10, rtol=1e-10)}


def plain_attention(q, k, v, mask=None, temperature=1.0):
    """The formula, written as directly as possible (NaN-free only for rows with a visible key)."""
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) * temperature)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def random_qkv(gen, batch, t_q, t_k, d_k, d_v, dtype):
    q = torch.randn(*batch, t_q, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*batch, t_k, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*batch, t_k, d_v, generator=gen, dtype=dtype)
    return q, k, v


SHAPES = [  # (batch dims, T_q, T_k, d_k, d_v)
    ((), 1, 1, 1, 1),
    ((), 5, 7, 8, 3),
    ((2,), 4, 4, 16, 16),
    ((2, 3), 6, 9, 4, 5),
    ((1, 4, 2), 3, 2, 7, 1),
]


# --------------------------------------------------------------------------- softmax


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_matches_torch(dtype, dim):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, 6, generator=gen, dtype=dtype) * 10
    torch.testing.assert_close(softmax(x, dim=dim), torch.softmax(x, dim=dim), **TOL[dtype])


@pytest.mark.parametrize("temperature", [0.01, 0.5, 1.0, 3.0, 1e6])
def test_softmax_temperature_is_division(temperature):
    x = torch.tensor([[1.0, -2.0, 0.5, 3.0]], dtype=torch.float64)
    torch.testing.assert_close(softmax(x, temperature=temperature), torch.softmax(x / temperature, -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_huge_logits_and_tiny_temperature(dtype):
    x = torch.tensor([1e4, 1e4 + 1, -1e4], dtype=dtype)
    w = softmax(x)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w, torch.softmax(x.double(), 0).to(dtype))
    one_hot = softmax(torch.tensor([1.0, 2.0, 3.0], dtype=dtype), temperature=1e-30)
    torch.testing.assert_close(one_hot, torch.tensor([0.0, 0.0, 1.0], dtype=dtype))
    big = softmax(torch.tensor([3e38, -3e38], dtype=torch.float32))
    assert torch.isfinite(big).all() and big[0] == 1


def test_softmax_fully_masked_row_gives_zeros_not_nan():
    x = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")]])
    w = softmax(x)
    torch.testing.assert_close(w, torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
    assert torch.isnan(torch.softmax(x, -1)[1]).all()  # what PyTorch does instead


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan")])
def test_softmax_rejects_bad_temperature(bad):
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        softmax(torch.zeros(3), temperature=bad)


def test_softmax_rejects_nan_and_non_float():
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        softmax(torch.tensor([1.0, float("nan")]))
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        softmax(torch.tensor([1.0, float("inf")]))
    with pytest.raises(ValueError, match="floating-point"):
        softmax(torch.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="torch.Tensor"):
        softmax([1.0, 2.0])


# --------------------------------------------------------------------------- scaled dot-product attention


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch,t_q,t_k,d_k,d_v", SHAPES)
def test_sdpa_matches_torch(dtype, batch, t_q, t_k, d_k, d_v):
    gen = torch.Generator().manual_seed(1)
    q, k, v = random_qkv(gen, batch, t_q, t_k, d_k, d_v, dtype)
    out, w = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), **TOL[dtype])
    ref_out, ref_w = plain_attention(q, k, v)
    torch.testing.assert_close(w, ref_w, **TOL[dtype])
    assert w.shape == (*batch, t_q, t_k) and out.shape == (*batch, t_q, d_v)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_broadcasts_leading_dims(dtype):
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(2, 1, 5, 4, generator=gen, dtype=dtype)  # one query set for every head
    k = torch.randn(1, 3, 6, 4, generator=gen, dtype=dtype)  # one key set for every batch
    v = torch.randn(6, 2, generator=gen, dtype=dtype)  # shared values
    out, w = scaled_dot_product_attention(q, k, v)
    ref_out, ref_w = plain_attention(q, k, v)
    assert out.shape == (2, 3, 5, 2) and w.shape == (2, 3, 5, 6)
    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(w, ref_w, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_shape", [(5, 7), (1, 5, 7), (2, 1, 5, 7), (2, 3, 5, 7), (2, 3, 1, 7)])
def test_sdpa_masks_match_torch(dtype, mask_shape):
    gen = torch.Generator().manual_seed(3)
    q, k, v = random_qkv(gen, (2, 3), 5, 7, 8, 4, dtype)
    mask = torch.rand(mask_shape, generator=gen) > 0.4
    mask[..., 0] = True  # every row sees at least one key, so torch has no NaN to compare
    out, w = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **TOL[dtype])
    assert (w.masked_select(~mask.expand_as(w)) == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_fully_masked_rows_are_zero_not_nan(dtype):
    gen = torch.Generator().manual_seed(4)
    q, k, v = random_qkv(gen, (2,), 4, 6, 8, 3, dtype)
    mask = torch.rand(2, 4, 6, generator=gen) > 0.5
    mask[0, 1] = False  # query 1 of batch 0 may see nothing
    mask[1, 3] = False
    mask[0, 0, 0] = mask[1, 0, 0] = mask[0, 2, 0] = mask[1, 2, 0] = mask[0, 3, 0] = mask[1, 1, 0] = True
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    for b, i in [(0, 1), (1, 3)]:
        assert (w[b, i] == 0).all() and (out[b, i] == 0).all()
    visible = mask.any(-1)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out[visible], ref[visible], **TOL[dtype])
    # the gradient through a fully masked row is finite too
    qg = q.clone().requires_grad_()
    scaled_dot_product_attention(qg, k, v, mask)[0].sum().backward()
    assert torch.isfinite(qg.grad).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("t_q,t_k", [(5, 5), (3, 6), (6, 3), (1, 4)])
def test_sdpa_causal_matches_torch(dtype, t_q, t_k):
    gen = torch.Generator().manual_seed(5)
    q, k, v = random_qkv(gen, (2, 2), t_q, t_k, 4, 3, dtype)
    out, w = scaled_dot_product_attention(q, k, v, causal=True)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    has_key = causal_mask(t_q, t_k).any(-1)  # top-left aligned, like PyTorch
    torch.testing.assert_close(out[..., has_key, :], ref[..., has_key, :], **TOL[dtype])
    assert (w.triu(1) == 0).all()


def test_sdpa_causal_and_mask_combine():
    gen = torch.Generator().manual_seed(6)
    q, k, v = random_qkv(gen, (), 4, 4, 3, 2, torch.float64)
    pad = torch.tensor([True, True, True, False])  # the last key is padding
    out, w = scaled_dot_product_attention(q, k, v, pad, causal=True)
    ref_out, ref_w = plain_attention(q, k, v, causal_mask(4) & pad)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)


@pytest.mark.parametrize("temperature", [0.1, 1.0, 4.0])
def test_sdpa_temperature(temperature):
    gen = torch.Generator().manual_seed(7)
    q, k, v = random_qkv(gen, (3,), 4, 5, 6, 2, torch.float64)
    out, w = scaled_dot_product_attention(q, k, v, temperature=temperature)
    ref_out, ref_w = plain_attention(q, k, v, temperature=temperature)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)
    # temperature multiplies the torch scale: scale = 1 / (sqrt(d_k) * T)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=1 / (math.sqrt(6) * temperature)))


def test_sdpa_large_logits_stay_finite():
    q = torch.tensor([[1e3, 1e3]])
    k = torch.tensor([[1e3, 1e3], [-1e3, 1e3], [1e3, 0.0]])
    v = torch.eye(3)
    out, w = scaled_dot_product_attention(q, k, v)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w, torch.tensor([[1.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="overflowed"):
        scaled_dot_product_attention(torch.full((1, 4), 1e30), torch.full((1, 4), 1e30), torch.ones(1, 1))


def test_sdpa_gradients_match_torch():
    gen = torch.Generator().manual_seed(8)
    q, k, v = (t.requires_grad_() for t in random_qkv(gen, (2,), 3, 4, 5, 2, torch.float64))
    mask = torch.tensor([[True, True, False, True]] * 3)
    scaled_dot_product_attention(q, k, v, mask)[0].square().sum().backward()
    ours = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    F.scaled_dot_product_attention(q, k, v, attn_mask=mask).square().sum().backward()
    for a, b in zip(ours, (q.grad, k.grad, v.grad)):
        torch.testing.assert_close(a, b)


def test_sdpa_dropout_training_and_eval():
    gen = torch.Generator().manual_seed(9)
    q, k, v = random_qkv(gen, (), 6, 6, 4, 6, torch.float64)
    _, w_eval = scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=False)
    _, w_plain = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(w_eval, w_plain)  # eval: no dropout at all
    torch.manual_seed(0)
    out, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=True)
    kept = w != 0
    assert 0 < kept.sum() < kept.numel()
    torch.testing.assert_close(w[kept], (w_plain / 0.5)[kept])  # survivors scaled by 1/(1-p)
    torch.testing.assert_close(out, w @ v)
    # averaged over many draws, the expectation is the undropped weight matrix
    torch.manual_seed(1)
    mean = torch.stack(
        [scaled_dot_product_attention(q, k, v, dropout_p=0.3, training=True)[1] for _ in range(4000)]
    ).mean(0)
    torch.testing.assert_close(mean, w_plain, atol=0.03, rtol=0)


BAD_INPUTS = [
    (dict(q=(3, 4), k=(5, 3), v=(5, 2)), ValueError, "same last dimension d_k"),
    (dict(q=(3, 4), k=(5, 4), v=(6, 2)), ValueError, "same number of positions T_k"),
    (dict(q=(2, 3, 4), k=(3, 5, 4), v=(3, 5, 2)), ValueError, "do not broadcast"),
    (dict(q=(4,), k=(5, 4), v=(5, 2)), ValueError, "at least 2 dimensions"),
]


@pytest.mark.parametrize("shapes,error,message", BAD_INPUTS)
def test_sdpa_bad_shapes(shapes, error, message):
    q, k, v = (torch.zeros(s) for s in (shapes["q"], shapes["k"], shapes["v"]))
    with pytest.raises(error, match=message):
        scaled_dot_product_attention(q, k, v)


def test_sdpa_bad_masks_and_options():
    q, k, v = torch.zeros(3, 4), torch.zeros(5, 4), torch.zeros(5, 2)
    with pytest.raises(ValueError, match="must be boolean"):
        scaled_dot_product_attention(q, k, v, torch.ones(3, 5))
    with pytest.raises(ValueError, match=r"does not broadcast to the scores' shape \(3, 5\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="does not broadcast"):
        scaled_dot_product_attention(q, k, v, torch.ones(2, 3, 5, dtype=torch.bool))  # would add a batch dim
    with pytest.raises(TypeError, match="mask must be a torch.Tensor"):
        scaled_dot_product_attention(q, k, v, [[True] * 5] * 3)
    for p in (-0.1, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"dropout_p must be a number in \[0, 1\)"):
            scaled_dot_product_attention(q, k, v, dropout_p=p)
    for t in (0.0, -2.0):
        with pytest.raises(ValueError, match="temperature"):
            scaled_dot_product_attention(q, k, v, temperature=t)
    with pytest.raises(ValueError, match="share one dtype"):
        scaled_dot_product_attention(q.double(), k, v)
    with pytest.raises(ValueError, match="floating-point"):
        scaled_dot_product_attention(q.long(), k.long(), v.long())
    with pytest.raises(ValueError, match="contains NaN"):
        scaled_dot_product_attention(q, k, torch.full((5, 2), float("nan")))


# --------------------------------------------------------------------------- multi-head attention


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("d_model,heads,t_q,t_k", [(8, 1, 5, 5), (16, 4, 3, 7), (12, 3, 6, 2)])
def test_mha_from_torch_matches(bias, dtype, d_model, heads, t_q, t_k):
    torch.manual_seed(10)
    ref = torch.nn.MultiheadAttention(d_model, heads, bias=bias, batch_first=True).to(dtype).eval()
    ours = MultiHeadAttention.from_torch(ref)
    x = torch.randn(2, t_q, d_model, dtype=dtype)
    mem = torch.randn(2, t_k, d_model, dtype=dtype)
    mask = torch.rand(2, t_q, t_k) > 0.3
    mask[..., 0] = True
    ref_out, ref_w = ref(x, mem, mem, attn_mask=(~mask).repeat_interleave(heads, 0), average_attn_weights=False)
    out, w = ours(x, mem, mem, mask=mask)
    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(w, ref_w, **TOL[dtype])
    self_ref, _ = ref(x, x, x, need_weights=False)
    torch.testing.assert_close(ours(x)[0], self_ref, **TOL[dtype])


def test_mha_causal_matches_torch():
    torch.manual_seed(11)
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True).double().eval()
    ours = MultiHeadAttention.from_torch(ref)
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    ref_out, _ = ref(x, x, x, attn_mask=~causal_mask(5), need_weights=False)
    torch.testing.assert_close(ours(x, causal=True)[0], ref_out)


def test_mha_bad_input():
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by num_heads \(3\)"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="positive integers"):
        MultiHeadAttention(0, 1)
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"shape \(B, T, d_model=8\), got \(2, 3, 6\)"):
        mha(torch.zeros(2, 3, 6))
    with pytest.raises(ValueError, match="share the batch size"):
        mha(torch.zeros(2, 3, 8), torch.zeros(3, 4, 8))
    with pytest.raises(TypeError):
        MultiHeadAttention.from_torch(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="batch_first=True"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2))
    with pytest.raises(ValueError, match="kdim/vdim"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=4, batch_first=True))


# --------------------------------------------------------------------------- chunked (online-softmax) attention


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("block_size", [1, 3, 16, 128, 1000])
@pytest.mark.parametrize("causal", [False, True])
def test_chunked_matches_sdpa(dtype, block_size, causal):
    gen = torch.Generator().manual_seed(12)
    for batch, t_q, t_k, d_k, d_v in SHAPES:
        q, k, v = random_qkv(gen, batch, t_q, t_k, d_k, d_v, dtype)
        got = chunked_attention(q, k, v, block_size=block_size, causal=causal)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        assert got.shape == ref.shape
        torch.testing.assert_close(got, ref, **TOL[dtype])


def test_chunked_large_logits_and_grad():
    gen = torch.Generator().manual_seed(13)
    q, k, v = random_qkv(gen, (2,), 9, 33, 4, 3, torch.float64)
    q = q * 300  # scores in the thousands: exp would overflow without the running max
    torch.testing.assert_close(chunked_attention(q, k, v, block_size=5), F.scaled_dot_product_attention(q, k, v))
    qg = q.clone().requires_grad_()
    chunked_attention(qg, k, v, block_size=4).sum().backward()
    q2 = q.clone().requires_grad_()
    F.scaled_dot_product_attention(q2, k, v).sum().backward()
    torch.testing.assert_close(qg.grad, q2.grad)


def test_chunked_bad_input():
    q, k, v = torch.zeros(3, 4), torch.zeros(5, 4), torch.zeros(5, 2)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="block_size must be a positive integer"):
            chunked_attention(q, k, v, block_size=bad)
    with pytest.raises(ValueError, match="same last dimension"):
        chunked_attention(q, torch.zeros(5, 3), v)
    with pytest.raises(ValueError, match="same number of positions"):
        chunked_attention(q, k, torch.zeros(4, 2))


def test_causal_mask_shape_and_alignment():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert causal_mask(2, 4).tolist() == [[True, False, False, False], [True, True, False, False]]
    for t_q, t_k in itertools.product([1, 3], [1, 4]):
        torch.testing.assert_close(causal_mask(t_q, t_k), torch.ones(t_q, t_k).tril().bool())


# --------------------------------------------------------------------------- the single mask and head helpers


@pytest.mark.parametrize("lengths, t", [([1], 1), ([3, 1, 2], None), ([2, 5], 7), (torch.tensor([4, 4]), 4)])
def test_padding_mask_marks_exactly_the_real_positions(lengths, t):
    got = padding_mask(lengths, t)
    lens = [int(x) for x in lengths]
    width = max(lens) if t is None else t
    want = torch.tensor([[j < n for j in range(width)] for n in lens])
    assert got.dtype == torch.bool and torch.equal(got, want)


def test_padding_mask_as_key_mask_matches_torch_key_padding_mask():
    # nn.MultiheadAttention's key_padding_mask says True = ignore: the opposite convention.
    gen = torch.Generator().manual_seed(3)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).double().eval()
    x = torch.randn(3, 5, 8, generator=gen, dtype=torch.float64)
    keep = padding_mask([5, 2, 3], 5)  # (B, T)
    ours = MultiHeadAttention.from_torch(mha).eval()
    out, _ = ours(x, mask=keep[:, None, :].expand(3, 5, 5))
    ref, _ = mha(x, x, x, key_padding_mask=~keep)
    assert torch.allclose(out, ref, atol=1e-12)


@pytest.mark.parametrize(
    "bad, err, match",
    [
        ([0, 2], ValueError, ">= 1"),
        ([[1, 2]], ValueError, "1-D"),
        ([1.5], ValueError, "integers"),
        ([], ValueError, "non-empty"),
        ([3], ValueError, r"<= t=2"),
    ],
)
def test_padding_mask_rejects_bad_lengths(bad, err, match):
    with pytest.raises(err, match=match):
        padding_mask(bad, 2 if bad == [3] else None)


@pytest.mark.parametrize("b, t, c, h", [(1, 1, 4, 1), (2, 5, 12, 3), (3, 7, 16, 8)])
def test_split_and_merge_heads_are_inverse_and_match_a_reference(b, t, c, h):
    x = torch.randn(b, t, c, dtype=torch.float64)
    heads = split_heads(x, h)
    assert heads.shape == (b, h, t, c // h)
    assert torch.equal(heads, x.reshape(b, t, h, c // h).permute(0, 2, 1, 3))
    assert torch.equal(heads[:, 1 % h, :, :], x[..., (1 % h) * (c // h) : (1 % h + 1) * (c // h)])
    assert torch.equal(merge_heads(heads), x)


def test_split_heads_rejects_bad_shapes():
    with pytest.raises(ValueError, match="divisible by num_heads=3"):
        split_heads(torch.zeros(1, 2, 8), 3)
    with pytest.raises(ValueError, match="positive integer"):
        split_heads(torch.zeros(1, 2, 8), 0)
    with pytest.raises(ValueError, match=r"\(B, h, T, d\)"):
        merge_heads(torch.zeros(1, 2, 3, 4, 5))
    with pytest.raises(TypeError, match="torch.Tensor"):
        split_heads([[1.0]], 1)


def test_causal_mask_rejects_non_positive_sizes():
    assert torch.equal(causal_mask(2, 3), torch.tensor([[True, False, False], [True, True, False]]))
    with pytest.raises(ValueError, match="t_q must be a positive integer"):
        causal_mask(0)


def test_validators_say_what_was_expected():
    from helpers import validate

    with pytest.raises(ValueError, match=r"p must be a number in \[0, 1\], got 1.5"):
        validate.probability("p", 1.5, allow_one=True)
    assert validate.probability("p", 1, allow_one=True) == 1.0
    with pytest.raises(TypeError, match="tau must be a real number, got str"):
        validate.positive_real("tau", "hot")
    with pytest.raises(ValueError, match="contains NaN"):
        validate.finite("x", torch.tensor([1.0, float("nan")]))
    assert validate.lengths("n", [2, 3]).dtype == torch.int64


@pytest.mark.parametrize("t_q, t_k, batch", [(0, 3, (2,)), (3, 0, (2,)), (0, 0, (2,)), (3, 4, (0,)), (3, 0, (2, 2))])
def test_chunked_attention_on_empty_inputs_agrees_with_masked_attention(t_q, t_k, batch):
    # No key at all: masked attention gives zero weights and a zero output; the tiled loop would divide 0 by 0.
    q, k, v = torch.randn(*batch, t_q, 4), torch.randn(*batch, t_k, 4), torch.randn(*batch, t_k, 5)
    out = chunked_attention(q, k, v, block_size=2)
    ref, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == ref.shape == (*batch, t_q, 5) and weights.shape == (*batch, t_q, t_k)
    assert torch.equal(out, ref) and not out.isnan().any()


def test_the_checked_api_shows_its_own_signature_and_the_lesson_code_behind_it():
    import inspect

    from helpers.lessons import complexity_flash, masks

    assert list(inspect.signature(scaled_dot_product_attention).parameters) == [
        "query", "key", "value", "mask", "temperature", "dropout_p", "training", "causal"
    ]  # fmt: skip
    assert inspect.signature(scaled_dot_product_attention).return_annotation is inspect.Signature.empty
    assert scaled_dot_product_attention.__wrapped__ is masks.masked_attention
    assert chunked_attention.__wrapped__ is complexity_flash.chunked_attention
    assert scaled_dot_product_attention.__name__ == "scaled_dot_product_attention"
    assert "returns ``(output, weights)``" in scaled_dot_product_attention.__doc__
    assert list(inspect.signature(MultiHeadAttention).parameters) == ["d_model", "num_heads", "dropout", "bias"]
    assert list(inspect.signature(MultiHeadAttention.forward).parameters) == [
        "self", "query", "key", "value", "mask", "causal"
    ]  # fmt: skip
    assert MultiHeadAttention.__name__ == "MultiHeadAttention" and MultiHeadAttention.__module__ == "helpers.attention"
    assert MultiHeadAttention.__mro__[1] is masks.MaskedMultiHeadAttention


@pytest.mark.parametrize("t_q, t_k", [(3, 0), (0, 3), (0, 0)])
def test_attention_without_keys_or_queries_matches_pytorch(t_q, t_k):
    q, k, v = torch.randn(2, t_q, 4), torch.randn(2, t_k, 4), torch.randn(2, t_k, 5)
    out, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), atol=0, rtol=0)
    assert weights.shape == (2, t_q, t_k)
