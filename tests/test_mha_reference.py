"""helpers.attention.MultiHeadAttention (and .from_torch) against torch.nn.MultiheadAttention(batch_first=True).

Masks: ours are True = may attend (as in F.scaled_dot_product_attention); nn.MultiheadAttention's boolean attn_mask is True = may NOT attend, shaped
(T_q, T_k) or (B*h, T_q, T_k). A query row with every key masked gives NaN in torch and zero
weights in ours, so such rows are compared separately.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn as nn

from helpers.attention import MultiHeadAttention

pytestmark = pytest.mark.notebook("09")  # `python3 course.py test 09` runs this module

TOL = {torch.float32: dict(atol=2e-5, rtol=2e-5), torch.float64: dict(atol=1e-10, rtol=1e-10)}


def make_pair(d_model, num_heads, *, bias=True, dtype=torch.float32, dropout=0.0, seed=0):
    """A torch module with random (also non-zero bias) weights and our copy of it, both in eval mode."""
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, bias=bias, batch_first=True)
    ref = ref.to(dtype)
    if bias:
        with torch.no_grad():
            ref.in_proj_bias.normal_(0, 0.5)
            ref.out_proj.bias.normal_(0, 0.5)
    ref.eval()
    return ref, MultiHeadAttention.from_torch(ref).eval()


def torch_forward(ref, q, k, v, allowed=None, num_heads=None):
    """Run torch with our (True = allowed) mask translated to its convention; per-head weights."""
    attn_mask = None
    if allowed is not None:
        b, t_q, t_k = q.shape[0], q.shape[1], k.shape[1]
        if allowed.dim() == 2:
            attn_mask = ~allowed
        else:
            full = allowed if allowed.dim() == 4 else allowed.unsqueeze(1)
            full = full.expand(b, num_heads, t_q, t_k)
            attn_mask = ~full.reshape(b * num_heads, t_q, t_k)
    return ref(q, k, v, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)


SHAPES = [  # (B, T_q, T_k, d_model, h)
    (1, 1, 1, 4, 1),
    (2, 5, 5, 8, 2),
    (3, 4, 7, 12, 3),
    (2, 9, 3, 16, 4),
    (4, 6, 6, 24, 8),
    (1, 17, 11, 32, 16),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_outputs_and_per_head_weights_match(shape, bias, dtype):
    b, t_q, t_k, c, h = shape
    ref, ours = make_pair(c, h, bias=bias, dtype=dtype, seed=sum(shape))
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(b, t_q, c, generator=gen, dtype=dtype)
    kv = torch.randn(b, t_k, c, generator=gen, dtype=dtype)
    value = torch.randn(b, t_k, c, generator=gen, dtype=dtype)
    cases = {"self": (q, q, q)} if t_q == t_k else {}
    cases.update({"cross": (q, kv, kv), "cross, separate value": (q, kv, value)})
    for name, (qq, kk, vv) in cases.items():
        want_out, want_w = torch_forward(ref, qq, kk, vv)
        got_out, got_w = ours(qq, kk, vv)
        assert got_out.dtype == dtype and got_w.shape == (b, h, t_q, kk.shape[1]), name
        torch.testing.assert_close(got_out, want_out, **TOL[dtype], msg=name)
        torch.testing.assert_close(got_w, want_w, **TOL[dtype], msg=name)


def test_self_attention_defaults_key_and_value_to_query():
    ref, ours = make_pair(8, 2)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(ours(x)[0], ref(x, x, x)[0])


def test_weights_are_not_averaged_and_average_matches_torch_default():
    ref, ours = make_pair(8, 4)
    x = torch.randn(2, 5, 8)
    _, w = ours(x)
    _, w_avg = ref(x, x, x)  # torch's default averages over heads
    torch.testing.assert_close(w.mean(dim=1), w_avg, **TOL[torch.float32])
    assert not torch.allclose(w[:, 0], w[:, 1])  # heads really differ


def _random_allowed(shape, gen, p=0.6):
    return torch.rand(shape, generator=gen) < p


MASK_SHAPES = {  # our accepted mask shapes, as functions of (B, h, T_q, T_k)
    "(T_q, T_k)": lambda b, h, q, k: (q, k),
    "(B, T_q, T_k)": lambda b, h, q, k: (b, q, k),
    "(B, h, T_q, T_k)": lambda b, h, q, k: (b, h, q, k),
    "(1, h, T_q, T_k)": lambda b, h, q, k: (1, h, q, k),
    "(B, 1, T_q, T_k)": lambda b, h, q, k: (b, 1, q, k),
    "(1, 1, T_q, T_k)": lambda b, h, q, k: (1, 1, q, k),
}


@pytest.mark.parametrize("mask_kind", list(MASK_SHAPES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_boolean_masks_of_every_accepted_shape(mask_kind, dtype):
    b, t_q, t_k, c, h = 3, 5, 7, 12, 3
    ref, ours = make_pair(c, h, dtype=dtype, seed=5)
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(b, t_q, c, generator=gen, dtype=dtype)
    kv = torch.randn(b, t_k, c, generator=gen, dtype=dtype)
    allowed = _random_allowed(MASK_SHAPES[mask_kind](b, h, t_q, t_k), gen)
    allowed[..., 1, :] = False  # query 1 sees no key at all (in every head and batch)
    allowed[..., 0, :] = True  # query 0 sees every key

    want_out, want_w = torch_forward(ref, q, kv, kv, allowed, num_heads=h)
    got_out, got_w = ours(q, kv, mask=allowed)

    full = (
        allowed.expand(b, h, t_q, t_k)
        if allowed.dim() == 4
        else (allowed.unsqueeze(1).expand(b, h, t_q, t_k) if allowed.dim() == 3 else allowed.expand(b, h, t_q, t_k))
    )
    dead = ~full.any(dim=-1)  # (B, h, T_q): rows with every key masked
    assert dead[:, :, 1].all() and not dead[:, :, 0].any()

    live = ~dead
    torch.testing.assert_close(got_w[live], want_w[live], **TOL[dtype])
    assert (got_w[~full] == 0).all()  # masked keys get exactly zero weight
    assert (got_w[dead] == 0).all()  # fully masked rows: zeros in ours ...
    assert torch.isnan(want_w[dead]).all()  # ... NaN in torch

    rows_live = live.all(dim=1)  # (B, T_q): no head is fully masked for this query
    torch.testing.assert_close(got_out[rows_live], want_out[rows_live], **TOL[dtype])
    rows_dead = dead.all(dim=1)
    assert rows_dead[:, 1].all()
    # every head contributed zeros, so only the output projection's bias is left
    expected = ours.out_proj.bias.expand(int(rows_dead.sum()), c)
    torch.testing.assert_close(got_out[rows_dead], expected, **TOL[dtype])
    assert torch.isfinite(got_out).all()


def test_key_padding_as_a_batch_mask_matches_key_padding_mask():
    b, t_q, t_k, c, h = 3, 4, 6, 8, 2
    ref, ours = make_pair(c, h, seed=9)
    q, kv = torch.randn(b, t_q, c), torch.randn(b, t_k, c)
    lengths = torch.tensor([6, 3, 1])
    padded = torch.arange(t_k).unsqueeze(0) >= lengths.unsqueeze(1)  # (B, T_k), True = padding
    want_out, want_w = ref(q, kv, kv, key_padding_mask=padded, need_weights=True, average_attn_weights=False)
    allowed = (~padded).unsqueeze(1).expand(b, t_q, t_k)  # (B, T_q, T_k)
    got_out, got_w = ours(q, kv, mask=allowed)
    torch.testing.assert_close(got_out, want_out, **TOL[torch.float32])
    torch.testing.assert_close(got_w, want_w, **TOL[torch.float32])
    assert (got_w[2, :, :, 1:] == 0).all() and torch.allclose(got_w[2, :, :, 0], torch.ones(h, t_q))


def test_causal_flag_matches_torch_causal_mask():
    ref, ours = make_pair(16, 4, seed=3)
    x = torch.randn(2, 7, 16)
    tri_blocked = torch.ones(7, 7, dtype=torch.bool).triu(1)  # torch: True = blocked
    want_out, want_w = ref(x, x, x, attn_mask=tri_blocked, need_weights=True, average_attn_weights=False)
    got_out, got_w = ours(x, causal=True)
    torch.testing.assert_close(got_out, want_out, **TOL[torch.float32])
    torch.testing.assert_close(got_w, want_w, **TOL[torch.float32])


def test_eval_mode_ignores_dropout_and_train_mode_uses_it():
    ref, ours = make_pair(8, 2, dropout=0.5, seed=4)
    assert ours.dropout == 0.5 and not ours.training
    x = torch.randn(2, 6, 8)
    torch.testing.assert_close(ours(x)[0], ref(x, x, x)[0])
    ours.train()
    torch.manual_seed(0)
    _, w_train = ours(x)
    kept = w_train[w_train > 0]
    _, w_eval = ours.eval()(x)
    assert (w_train == 0).any()
    # survivors are scaled by 1 / (1 - p) = 2
    torch.testing.assert_close(w_train[w_train > 0], 2 * w_eval[w_train > 0])
    assert kept.numel() < w_eval.numel()


def test_from_torch_copies_training_flag_dtype_and_keeps_weights_independent():
    ref = nn.MultiheadAttention(8, 2, batch_first=True).double()
    ours = MultiHeadAttention.from_torch(ref)
    assert ours.training and ours.q_proj.weight.dtype == torch.float64
    with torch.no_grad():
        ref.in_proj_weight.add_(1.0)
    assert not torch.allclose(ours.q_proj.weight, ref.in_proj_weight[:8])  # a copy, not a view
    no_bias = MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, bias=False, batch_first=True))
    assert no_bias.q_proj.bias is None and no_bias.out_proj.bias is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_gradients_match(dtype, bias):
    b, t_q, t_k, c, h = 2, 4, 5, 12, 3
    ref, ours = make_pair(c, h, bias=bias, dtype=dtype, seed=6)
    gen = torch.Generator().manual_seed(3)
    q0 = torch.randn(b, t_q, c, generator=gen, dtype=dtype)
    kv0 = torch.randn(b, t_k, c, generator=gen, dtype=dtype)
    probe = torch.randn(b, t_q, c, generator=gen, dtype=dtype)
    allowed = _random_allowed((b, t_q, t_k), gen, p=0.7)
    allowed[..., 0] = True  # no fully masked rows: torch's NaN would poison its gradients

    grads = {}
    for name, module, run in (
        ("torch", ref, lambda q, kv: torch_forward(ref, q, kv, kv, allowed, num_heads=h)),
        ("ours", ours, lambda q, kv: ours(q, kv, mask=allowed)),
    ):
        q, kv = q0.clone().requires_grad_(), kv0.clone().requires_grad_()
        module.zero_grad()
        out, w = run(q, kv)
        ((out * probe).sum() + (w**2).sum()).backward()
        grads[name] = (q.grad, kv.grad)
    tol = {torch.float32: dict(atol=1e-4, rtol=1e-4), torch.float64: TOL[torch.float64]}[dtype]
    for g_ours, g_ref in zip(grads["ours"], grads["torch"]):
        torch.testing.assert_close(g_ours, g_ref, **tol)
    w_grad = torch.cat([ours.q_proj.weight.grad, ours.k_proj.weight.grad, ours.v_proj.weight.grad])
    torch.testing.assert_close(w_grad, ref.in_proj_weight.grad, **tol)
    torch.testing.assert_close(ours.out_proj.weight.grad, ref.out_proj.weight.grad, **tol)
    if bias:
        b_grad = torch.cat([ours.q_proj.bias.grad, ours.k_proj.bias.grad, ours.v_proj.bias.grad])
        torch.testing.assert_close(b_grad, ref.in_proj_bias.grad, **tol)
        torch.testing.assert_close(ours.out_proj.bias.grad, ref.out_proj.bias.grad, **tol)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(batch_first=False), "batch_first=True"),
        (dict(batch_first=True, kdim=4, vdim=4), "kdim/vdim"),
        (dict(batch_first=True, add_bias_kv=True), "add_bias_kv"),
        (dict(batch_first=True, add_zero_attn=True), "add_zero_attn"),
    ],
)
def test_from_torch_rejects_unsupported_modules(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, **kwargs))


def test_from_torch_rejects_other_modules():
    with pytest.raises(TypeError, match="MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(8, 8))


@pytest.mark.parametrize(
    "d_model, num_heads, match",
    [
        (10, 3, "divisible"),
        (0, 1, "positive"),
        (8, 0, "positive"),
        (8.0, 2, "positive"),
        (8, -2, "positive"),
    ],
)
def test_constructor_errors(d_model, num_heads, match):
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention(d_model, num_heads)


@pytest.mark.parametrize("dropout", [-0.1, 1.0, True])
def test_constructor_rejects_bad_dropout(dropout):
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadAttention(8, 2, dropout=dropout)


def test_forward_input_errors():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"\(B, T, d_model=8\)"):
        mha(torch.randn(2, 5, 6))
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        mha(torch.randn(5, 8))
    with pytest.raises(ValueError, match=r"\(B, T, d_model=8\)"):
        mha(torch.randn(1, 2, 5, 8))
    with pytest.raises(ValueError, match="floating-point"):
        mha(torch.ones(2, 5, 8, dtype=torch.long))
    with pytest.raises(TypeError, match="torch.Tensor"):
        mha([[0.0] * 8])
    with pytest.raises(ValueError, match="batch size"):
        mha(x, torch.randn(3, 5, 8))
    with pytest.raises(ValueError, match="batch size"):
        mha(x, torch.randn(2, 4, 8), torch.randn(2, 6, 8))


def test_forward_mask_errors():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="boolean"):
        mha(x, mask=torch.ones(5, 5))
    with pytest.raises(TypeError, match="torch.Tensor"):
        mha(x, mask=[[True] * 5] * 5)
    for bad in [(5, 4), (3, 5, 5), (2, 3, 5, 5), (2, 5)]:
        with pytest.raises(ValueError, match="does not broadcast"):
            mha(x, mask=torch.ones(bad, dtype=torch.bool))


def test_all_accepted_mask_shapes_run_and_agree_with_each_other():
    """The same logical mask written in each accepted shape gives the same result."""
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    base = torch.rand(5, 5) < 0.6
    base[:, 0] = True
    forms = [
        base,
        base.expand(2, 5, 5),
        base.expand(2, 2, 5, 5),
        base.expand(1, 2, 5, 5),
        base.expand(2, 1, 5, 5),
        base.expand(1, 1, 5, 5),
    ]
    outs = [mha(x, mask=m)[0] for m in forms]
    for a, b in itertools.pairwise(outs):
        torch.testing.assert_close(a, b)
