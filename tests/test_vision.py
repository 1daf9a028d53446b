"""Notebook 13's saved code (helpers.lessons.attention_in_vision): SE, spatial gate, the gate training
loop, patches, the tiny ViT, rollout, the explorers; the stored model; the regression pins of the
notebook's numbers; the checkers (helpers.exercises.ex13).

conftest.py selects the Agg backend and the Korean font."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.attention import entropy
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check, ex13
from helpers.lessons import attention_in_vision as vi

pytestmark = pytest.mark.notebook("13")  # `python3 course.py test 13` runs this module


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- SE and the gate loop


@pytest.mark.parametrize("c, r", [(8, 4), (6, 3), (16, 16), (5, 1)])
def test_se_matches_the_plain_formula(c, r):
    torch.manual_seed(c * 10 + r)
    se = vi.SqueezeExcitation(c, r)
    x = torch.randn(3, c, 4, 5)
    out, gates = se(x)
    z = x.mean(dim=(2, 3))
    hidden = torch.clamp(z @ se.fc1.weight.T + se.fc1.bias, min=0)
    want = 1 / (1 + torch.exp(-(hidden @ se.fc2.weight.T + se.fc2.bias)))
    torch.testing.assert_close(gates, want)
    for b in range(3):
        for ch in range(c):
            torch.testing.assert_close(out[b, ch], x[b, ch] * gates[b, ch])
    assert se.fc1.out_features == max(1, c // r)
    # PyTorch's own pooling gives the same squeeze
    torch.testing.assert_close(F.adaptive_avg_pool2d(x, 1).flatten(1), z)


def test_se_gates_are_independent_sigmoids_not_softmax():
    torch.manual_seed(0)
    se = vi.SqueezeExcitation(4, 2)
    with torch.no_grad():
        se.fc2.bias.fill_(5.0)  # every channel fully on
    _, gates = se(torch.randn(2, 4, 3, 3))
    assert (gates > 0.9).all() and (gates.sum(-1) > 3.5).all()


def test_channel_batch_targets_keep_one_half():
    x, t = vi.make_channel_batch(50, torch.Generator().manual_seed(1))
    kept = (t != 0).flatten(2).any(-1)  # (n, C): channels kept in the target
    assert x.shape == t.shape == (50, 8, 5, 5)
    assert ((kept[:, :4].all(1) & ~kept[:, 4:].any(1)) | (kept[:, 4:].all(1) & ~kept[:, :4].any(1))).all()
    torch.testing.assert_close(t[kept], x[kept])


def test_trained_se_switches_channels_per_image():
    torch.manual_seed(2)
    se, losses = vi.train_gate(vi.SqueezeExcitation(8, 2), vi.make_channel_batch, steps=200)
    x, _ = vi.make_channel_batch(100, torch.Generator().manual_seed(7))
    with torch.no_grad():
        g = se(x)[1]
    first = x[:, :4].mean((1, 2, 3)) > x[:, 4:].mean((1, 2, 3))
    assert losses[-1] < losses[0] / 10
    assert g[first][:, :4].min() > 0.8 and g[first][:, 4:].max() < 0.2
    assert g[~first][:, 4:].min() > 0.8 and g[~first][:, :4].max() < 0.2


# --------------------------------------------------------------------------- spatial gate


def test_spatial_gate_matches_the_formula():
    torch.manual_seed(1)
    sg = vi.SpatialGate(3)
    x = torch.randn(2, 4, 5, 5)
    out, gate = sg(x)
    pooled = torch.stack([x.mean(1), x.max(1).values], dim=1)
    want = torch.sigmoid(F.conv2d(pooled, sg.conv.weight, sg.conv.bias, padding=1))
    torch.testing.assert_close(gate, want)
    torch.testing.assert_close(out, x * want)
    assert gate.shape == (2, 1, 5, 5)


def test_make_shapes_masks_are_rectangles_and_deterministic():
    x, m = vi.make_shapes(20, torch.Generator().manual_seed(5), size=12)
    x2, m2 = vi.make_shapes(20, torch.Generator().manual_seed(5), size=12)
    assert torch.equal(x, x2) and torch.equal(m, m2)
    assert x.shape == (20, 3, 12, 12) and m.shape == (20, 12, 12)
    for mask in m:
        rows, cols = mask.any(1).nonzero().flatten(), mask.any(0).nonzero().flatten()
        h, w = len(rows), len(cols)
        assert 3 <= h <= 6 and 3 <= w <= 6 and mask.sum() == h * w  # one filled rectangle
        assert rows.max() - rows.min() + 1 == h and cols.max() - cols.min() + 1 == w
    x, t = vi.shape_batch(4, torch.Generator().manual_seed(5))
    assert x.shape == t.shape and ((t == 0) | (t == x)).all()


def test_trained_spatial_gate_finds_the_rectangle():
    torch.manual_seed(0)
    gate, losses = vi.train_gate(vi.SpatialGate(7), vi.shape_batch, steps=60)
    x, m = vi.make_shapes(32, torch.Generator().manual_seed(77))
    with torch.no_grad():
        g = gate(x)[1][:, 0]
    assert losses[-1] < losses[0] / 5
    assert g[m > 0].mean() > 0.8 and g[m == 0].mean() < 0.2


# --------------------------------------------------------------------------- patches


@pytest.mark.parametrize("c, h, w, p", [(1, 8, 8, 2), (3, 4, 6, 2), (3, 224, 224, 16), (2, 6, 6, 3), (1, 5, 5, 1)])
def test_patchify_matches_unfold_and_inverts(c, h, w, p):
    x = torch.randn(2, c, h, w)
    got = vi.patchify(x, p)
    want = F.unfold(x, kernel_size=p, stride=p).transpose(1, 2)  # (B, N, C·P·P), (c, row, col) order
    assert got.shape == (2, (h // p) * (w // p), c * p * p)
    assert torch.equal(got, want)
    assert torch.equal(vi.unpatchify(got, p, c, h, w), x)
    assert torch.equal(vi.patchify(x[0], p), got[0])  # unbatched input
    torch.testing.assert_close(F.fold(want.transpose(1, 2), (h, w), p, stride=p), x)


def test_patch_embedding_equals_strided_conv():
    torch.manual_seed(0)
    lin, conv = nn.Linear(3 * 4 * 4, 8), nn.Conv2d(3, 8, 4, stride=4)
    with torch.no_grad():
        conv.weight.copy_(lin.weight.view(8, 3, 4, 4))
        conv.bias.copy_(lin.bias)
        x = torch.randn(2, 3, 16, 12)
        torch.testing.assert_close(lin(vi.patchify(x, 4)), conv(x).flatten(2).transpose(1, 2))


# --------------------------------------------------------------------------- digits, tiny ViT, rollout


def test_digits_match_sklearn_and_split_is_fixed():
    from sklearn.datasets import load_digits

    x_tr, y_tr, x_te, y_te = vi.load_digits_split()
    assert (len(y_tr), len(y_te)) == (1438, 359)
    digits = load_digits()
    x_all = torch.cat([x_tr, x_te])[:, 0] * 16
    y_all = torch.cat([y_tr, y_te])
    order = torch.randperm(1797, generator=torch.Generator().manual_seed(0))
    order = torch.cat([order[359:], order[:359]])
    np.testing.assert_array_equal(x_all.numpy(), digits.images[order.numpy()].astype(np.float32))
    np.testing.assert_array_equal(y_all.numpy(), digits.target[order.numpy()])
    assert float(x_tr.min()) == 0.0 and float(x_tr.max()) == 1.0


def test_tiny_vit_shapes_params_and_cls_rows():
    torch.manual_seed(0)
    model = vi.TinyViT().eval()
    assert sum(p.numel() for p in model.parameters()) == 5018
    logits, maps = model(torch.rand(3, 1, 8, 8))
    assert logits.shape == (3, 10) and [m.shape for m in maps] == [(3, 2, 17, 17)] * 2
    torch.testing.assert_close(maps[-1].sum(-1), torch.ones(3, 2, 17))
    w = vi.cls_attention(model, torch.rand(3, 1, 8, 8))
    assert w.shape == (3, 16) and (w.sum(-1) < 1).all()


def test_tiny_vit_block_equals_torch_encoder_layer():
    """Our pre-LN block = torch.nn.TransformerEncoderLayer(norm_first=True, GELU) with copied weights."""
    torch.manual_seed(3)
    block = vi.Block(16, 2, 32).eval()
    ref = nn.TransformerEncoderLayer(
        16, 2, 32, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    ).eval()
    with torch.no_grad():
        a = block.attn
        ref.self_attn.in_proj_weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
        ref.self_attn.in_proj_bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
        ref.self_attn.out_proj.weight.copy_(a.out_proj.weight)
        ref.self_attn.out_proj.bias.copy_(a.out_proj.bias)
        ref.linear1.load_state_dict(block.mlp[0].state_dict())
        ref.linear2.load_state_dict(block.mlp[2].state_dict())
        ref.norm1.load_state_dict(block.norm1.state_dict())
        ref.norm2.load_state_dict(block.norm2.state_dict())
        x = torch.randn(2, 17, 16)
        torch.testing.assert_close(block(x)[0], ref(x), atol=1e-5, rtol=1e-5)


def test_vit_without_position_embedding_ignores_patch_order():
    torch.manual_seed(0)
    model = vi.TinyViT().eval()
    x = torch.rand(2, 1, 8, 8)
    shuffled = vi.unpatchify(vi.patchify(x, 2)[:, torch.randperm(16)], 2, 1, 8, 8)
    with torch.no_grad():
        model.pos.zero_()
        torch.testing.assert_close(model(x)[0], model(shuffled)[0], atol=1e-5, rtol=1e-5)


def test_attention_rollout_against_a_loop():
    g = torch.Generator().manual_seed(0)
    maps = [torch.softmax(torch.randn(2, 3, 5, 5, generator=g), -1) for _ in range(3)]
    got = vi.attention_rollout(maps)
    for b in range(2):
        want = np.eye(5)
        for a in maps:
            step = 0.5 * a[b].mean(0).double().numpy() + 0.5 * np.eye(5)
            want = (step / step.sum(1, keepdims=True)) @ want
        np.testing.assert_allclose(got[b].numpy(), want, atol=1e-6)
    one = vi.attention_rollout([torch.eye(5).expand(1, 1, 5, 5)])
    torch.testing.assert_close(one[0], torch.eye(5))  # attending to oneself changes nothing


def test_stored_vit_reproduces_its_record():
    run = load_json("vision_vit.json")
    model = vi.TinyViT(**run["model"])
    model.load_state_dict(load_tensor_dict("vision_vit.pt"))
    model.eval()
    _, _, x_te, y_te = vi.load_digits_split()
    assert round(vi.vit_accuracy(model, x_te, y_te), 4) == run["test_accuracy"] > 0.95
    attn, ink = vi.cls_attention(model, x_te), vi.ink_fraction(x_te, 2)
    assert round(attn[ink > 0].mean().item(), 4) == run["cls_weight_ink"]
    assert run["cls_weight_ink"] > 10 * run["cls_weight_empty"]


def test_short_training_learns():
    data = vi.load_digits_split()
    model, hist = vi.train_vit(5, seed=0, data=data)
    assert len(hist) == 5 and hist[-1] < hist[0]
    assert vi.vit_accuracy(model, data[2], data[3]) > 0.25  # well above chance (0.1) after five epochs


def test_ink_fraction():
    img = torch.zeros(1, 1, 4, 4)
    img[0, 0, 0, 0] = 1.0
    torch.testing.assert_close(vi.ink_fraction(img, 2), torch.tensor([[0.25, 0.0, 0.0, 0.0]]))


# --------------------------------------------------------------------------- the notebook's numbers
# Regression pins moved out of the notebook: the digits its prose quotes, on the maintainer's machine.


@pytest.fixture(scope="module")
def stored_vit():
    run = load_json("vision_vit.json")
    model = vi.TinyViT(**run["model"])
    model.load_state_dict(load_tensor_dict("vision_vit.pt"))
    data = vi.load_digits_split()
    with torch.no_grad():
        maps = model.eval()(data[2])[1]
    return model, data, maps


def test_pins_of_the_vit_maps(stored_vit):
    model, (_, _, x_te, _), maps = stored_vit
    first = maps[0][0].mean(0)
    assert [round(first[1 + q, 1:].max().item(), 3) for q in (0, 5, 10, 15)] == [0.081, 0.093, 0.103, 0.141]
    ink = vi.ink_fraction(x_te, 2) > 0
    ent = [entropy(a.mean(1)[:, 1:]).mean().item() for a in maps]
    cls_ink = [(a.mean(1)[:, 0, 1:] * ink).sum(-1).mean().item() for a in maps]
    assert round(ent[0], 2) == 2.75 and round(cls_ink[0], 3) == 0.689 and round(ink.float().mean().item(), 3) == 0.730
    assert round(cls_ink[1], 3) == 0.943
    roll = vi.attention_rollout(maps)
    rc = roll[:, 0, 1:] / roll[:, 0, 1:].sum(-1, keepdim=True)
    last = maps[-1].mean(1)[:, 0, 1:]
    last = last / last.sum(-1, keepdim=True)
    assert (round((rc * ink).sum(-1).mean().item(), 2), round((last * ink).sum(-1).mean().item(), 2)) == (0.80, 0.97)
    assert round(roll[:, 0, 0].mean().item(), 2) == 0.29


def test_pins_of_the_position_embeddings(stored_vit):
    model = stored_vit[0]
    unit = F.normalize(model.pos[0, 1:].detach(), dim=-1)
    cos = unit @ unit.T
    corners = torch.tensor([0, 3, 12, 15])
    assert round(cos[corners][:, corners][~torch.eye(4, dtype=torch.bool)].mean().item(), 2) == 0.74


# --------------------------------------------------------------------------- explorers


def test_patch_size_explorer_toggles_its_grids():
    img = torch.rand(1, 8, 8)
    ex = vi.patch_size_explorer(img)
    assert ex.controls["patch"].options == (1, 2, 4, 8) and ex.last == {"n_tokens": 16, "token_dim": 4}
    ax = ex.figure.axes[0]
    n_artists = len(ax.lines) + len(ax.texts)
    png = ex.png
    ex.set(patch=4)
    assert ex.last == {"n_tokens": 4, "token_dim": 16} and "P=4" in ax.get_title() and ex.png != png
    assert len(ax.lines) + len(ax.texts) == n_artists  # nothing re-created
    visible = [a for a in ax.lines if a.get_visible()]
    assert len(visible) == 2  # one horizontal and one vertical border for 4 patches
    for p, n in [(1, 64), (2, 16), (4, 4), (8, 1)]:
        _, ax2 = plt.subplots()
        assert vi.draw_patch_grid(ax2, img, p)[1] == {"n_tokens": n, "token_dim": p * p}


def test_query_patch_explorer_updates_in_place():
    img = torch.rand(1, 8, 8)
    w = torch.softmax(torch.randn(17, 17), -1)
    ex = vi.query_patch_explorer(img, w, 2, vmax=0.15)
    assert ex.controls["query"].max == 15
    ax_img, ax_w = ex.figure.axes[:2]
    np.testing.assert_allclose(ex.last, w[1, 1:].numpy())
    ex.set(query=5)
    np.testing.assert_allclose(ex.last, w[6, 1:].numpy())
    np.testing.assert_allclose(ax_w.images[0].get_array(), w[6, 1:].numpy().reshape(4, 4))
    assert ax_w.images[0].get_clim() == (0, 0.15) and "패치 5" in ax_w.get_title()
    assert ax_img.patches[0].get_xy() == (1.5, 1.5) and ax_w.patches[0].get_xy() == (0.5, 0.5)
    assert ex.renders == 2


# --------------------------------------------------------------------------- exercises


def _mlp(z, w1, w2):
    return F.relu(z @ w1.T) @ w2.T


def _cbam_right(x, w1, w2):
    return torch.sigmoid(_mlp(x.mean(dim=(2, 3)), w1, w2) + _mlp(x.amax(dim=(2, 3)), w1, w2))


def test_13_1_checker():
    x, (w1, _w2) = ex13._example_features(), ex13._example_weights()
    h_avg, h_max = x.mean(dim=(2, 3)) @ w1.T, x.amax(dim=(2, 3)) @ w1.T
    assert (h_avg < 0).any() and (h_avg > 0).any()  # the example data can tell a missing ReLU apart
    assert ((h_avg < 0) != (h_max < 0)).any(-1).all()  # ... and MLP(avg + max) from MLP(avg) + MLP(max)
    assert check("13-1", _cbam_right).passed
    assert check("13-1", lambda x, w1, w2: _cbam_right(x, w1, w2)[:, :, None, None]).passed
    avg, mx = (lambda x: x.mean(dim=(2, 3))), (lambda x: x.amax(dim=(2, 3)))
    cases = {
        "최댓값 풀링 가지가 빠졌": lambda x, w1, w2: torch.sigmoid(_mlp(avg(x), w1, w2)),
        "평균 풀링 가지가 빠졌": lambda x, w1, w2: torch.sigmoid(_mlp(mx(x), w1, w2)),
        "가지마다 따로": lambda x, w1, w2: torch.sigmoid(_mlp(avg(x), w1, w2)) + torch.sigmoid(_mlp(mx(x), w1, w2)),
        "곱했습니다": lambda x, w1, w2: torch.sigmoid(_mlp(avg(x), w1, w2)) * torch.sigmoid(_mlp(mx(x), w1, w2)),
        "먼저 더하고": lambda x, w1, w2: torch.sigmoid(_mlp(avg(x) + mx(x), w1, w2)),
        "평균했습니다": lambda x, w1, w2: torch.sigmoid((_mlp(avg(x), w1, w2) + _mlp(mx(x), w1, w2)) / 2),
        "ReLU가 빠졌": lambda x, w1, w2: torch.sigmoid((avg(x) @ w1.T + mx(x) @ w1.T) @ w2.T),
        "합으로 압축": lambda x, w1, w2: torch.sigmoid(_mlp(x.sum(dim=(2, 3)), w1, w2) + _mlp(mx(x), w1, w2)),
        "시그모이드가 빠졌": lambda x, w1, w2: _mlp(avg(x), w1, w2) + _mlp(mx(x), w1, w2),
        "소프트맥스": lambda x, w1, w2: torch.softmax(_mlp(avg(x), w1, w2) + _mlp(mx(x), w1, w2), -1),
        "모양이": lambda x, w1, w2: _cbam_right(x, w1, w2).T,
        "(0, 1) 밖": lambda x, w1, w2: torch.tanh(_mlp(avg(x), w1, w2) + _mlp(mx(x), w1, w2)),
        "기대값": lambda x, w1, w2: _cbam_right(x, w1, w2) * 0.9,
        "z @ w1.T": lambda x, w1, w2: torch.sigmoid(F.relu(x.mean(dim=(2, 3)) @ w1) @ w2),  # .T forgotten: crashes
    }
    for phrase, fn in cases.items():
        result = check("13-1", fn)
        assert not result.passed and phrase in result.message, (phrase, result.message)


def _patchify_ok(img, p):
    c, h, w = img.shape
    return img.reshape(c, h // p, p, w // p, p).permute(1, 3, 0, 2, 4).reshape(-1, c * p * p)


def _patchify_wrapper(img, p):
    return vi.patchify(img, p)  # a wrapper around the lesson function: not the exercise


def _patchify_by_f_unfold(img, p):
    return F.unfold(img[None], kernel_size=p, stride=p)[0].T  # (C·P·P, N) -> (N, C·P·P)


def _patchify_by_tensor_unfold(img, p):
    c = img.shape[0]
    return img.unfold(1, p, p).unfold(2, p, p).permute(1, 2, 0, 3, 4).reshape(-1, c * p * p)


def test_13_2_forbids_patchify_and_allows_unfold():
    assert check("13-2", _patchify_ok).passed
    assert check("13-2", _patchify_by_f_unfold).passed  # the prompt allows unfold
    assert check("13-2", _patchify_by_tensor_unfold).passed
    for fn in (_patchify_wrapper, vi.patchify):
        result = check("13-2", fn)
        assert not result.passed and "patchify을(를)" in result.message, result.message


def _patchify_by_default(img, p, cut=vi.patchify):
    return cut(img, p)


def _patchify_by_container(img, p):
    return [vi.patchify][0](img, p)


def _patchify_by_closure():
    cut = vi.patchify

    def my_patchify(img, p):
        return cut(img, p)

    return my_patchify


def test_13_2_rejects_default_container_and_closure_bypasses():
    for fn in (_patchify_by_default, _patchify_by_container, _patchify_by_closure()):
        result = check("13-2", fn)
        assert not result.passed and "patchify" in result.message and "불렀습니다" in result.message, result.message


def _patchify_by_getattr(img, p):
    return getattr(vi, "patchify")(img, p)  # noqa: B009 (the bypass under test)


def _patchify_by_vars(img, p):
    return vars(vi)["patch" + "ify"](img, p)  # Python folds the two strings into one constant


def _patchify_by_attrgetter(img, p):
    import operator

    return operator.attrgetter("patchify")(vi)(img, p)


def _patchify_helper_by_name(img, p):
    return _lookup_by_name()(img, p)


def _lookup_by_name():
    return vi.__dict__["patchify"]  # the learner's own helper holds the string


def _patchify_with_a_comment_string(img, p):
    """Not patchify: reshape and permute."""
    c, h, w = img.shape
    return img.reshape(c, h // p, p, w // p, p).permute(1, 3, 0, 2, 4).reshape(-1, c * p * p)


def test_13_2_rejects_the_lesson_function_fetched_by_its_name():
    for fn in (_patchify_by_getattr, _patchify_by_vars, _patchify_by_attrgetter, _patchify_helper_by_name):
        result = check("13-2", fn)
        assert not result.passed and '"patchify"을(를) 문자열로' in result.message, (fn.__name__, result.message)
    assert check("13-2", _patchify_with_a_comment_string).passed  # a string that only mentions the name is fine


def test_13_2_checker():

    def p1p2c(img, p):
        c, h, w = img.shape
        return img.reshape(c, h // p, p, w // p, p).permute(1, 3, 2, 4, 0).reshape(-1, c * p * p)

    def col_major(img, p):
        c, h, w = img.shape
        return img.reshape(c, h // p, p, w // p, p).permute(3, 1, 0, 2, 4).reshape(-1, c * p * p)

    def inner_col_row(img, p):
        c, h, w = img.shape
        return img.reshape(c, h // p, p, w // p, p).permute(1, 3, 0, 4, 2).reshape(-1, c * p * p)

    cases = {
        "행과 열이 바뀌었습니다": inner_col_row,
        "(행, 열, 채널)": p1p2c,
        "열 우선": col_major,
        "그대로 reshape": lambda img, p: img.reshape(-1, img.shape[0] * p * p),
        "(6, 12)여야": lambda img, p: _patchify_ok(img, p).T,
        "패치 0": lambda img, p: _patchify_ok(img, p) + 1,
    }
    for phrase, fn in cases.items():
        result = check("13-2", fn)
        assert not result.passed and phrase in result.message, (phrase, result.message)


def _bytes_right(s, p, h):
    return h * ((s // p) ** 2 + 1) ** 2 * 4


def test_13_3_refuses_vit_cost_fetched_by_its_name():
    import helpers.lessons.attention_in_vision as vision

    result = check("13-3", lambda s, p, h: h * getattr(vision, "vit_cost")(s, p)["bytes"])  # noqa: B009
    assert not result and '"vit_cost"을(를) 문자열로' in result.message, result.message


def test_13_3_checker():
    assert check("13-3", _bytes_right).passed
    result = check("13-3", _bytes_right)
    assert "15.88배" in result.message, result.message
    cases = {
        "[CLS] 토큰이 빠졌": lambda s, p, h: h * ((s // p) ** 2) ** 2 * 4,
        "헤드가 하나뿐": lambda s, p, h: ((s // p) ** 2 + 1) ** 2 * 4,
        "N + 1개만": lambda s, p, h: h * ((s // p) ** 2 + 1) * 4,
        "4바이트": lambda s, p, h: h * ((s // p) ** 2 + 1) ** 2,
        "float64": lambda s, p, h: h * ((s // p) ** 2 + 1) ** 2 * 8,
        "원소 하나로": lambda s, p, h: h * (((s // p) ** 2) ** 2 + 1) * 4,
        "픽셀마다": lambda s, p, h: h * (s * s + 1) ** 2 * 4,
        "비트로": lambda s, p, h: h * ((s // p) ** 2 + 1) ** 2 * 32,
        "메가바이트": lambda s, p, h: h * ((s // p) ** 2 + 1) ** 2 * 4 / 1e6,
        "킬로바이트": lambda s, p, h: h * ((s // p) ** 2 + 1) ** 2 * 4 / 2**10,
        "숫자 하나": lambda s, p, h: [1, 2],
    }
    for phrase, fn in cases.items():
        result = check("13-3", fn)
        assert not result.passed and phrase in result.message, (phrase, result.message)
    assert "아직 구현" in check("13-3", lambda s, p, h: (_ for _ in ()).throw(NotImplementedError())).message


def test_13_3_accepts_the_right_formula_in_float32():
    # 224/1: 1·50177²·4 = 10,070,925,316 is not a float32; torch.tensor(…) of a Python float rounds it
    for fn in (
        lambda s, p, h: h * (torch.tensor(s / p) ** 2 + 1) ** 2 * 4,
        lambda s, p, h: h * ((s / p) ** 2 + 1) ** 2 * 4,
    ):
        assert check("13-3", fn).passed
    result = check("13-3", lambda s, p, h: h * (torch.tensor(s / p) ** 2) ** 2 * 4)
    assert not result.passed and "[CLS] 토큰이 빠졌" in result.message, result.message


def test_13_3_forbids_vit_cost():
    def via_vit_cost(s, p, h):
        n = vi.vit_cost(s, p)["n_tokens"]
        return h * (n + 1) ** 2 * 4

    def via_default(s, p, h, cost=vi.vit_cost):
        return h * (cost(s, p)["n_tokens"] + 1) ** 2 * 4

    for fn in (via_vit_cost, via_default):
        result = check("13-3", fn)
        assert not result.passed and "vit_cost" in result.message, result.message
