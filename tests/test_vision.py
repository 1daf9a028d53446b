"""helpers.vision (notebook 13): SE, BAM gate, spatial gate, patches, tiny ViT, cost, drawings, checkers.

conftest.py selects the Agg backend and the Korean font."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers import vision as vi
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- SE and BAM


@pytest.mark.parametrize("c, r", [(8, 4), (6, 3), (16, 16), (5, 1)])
def test_se_matches_the_plain_formula(c, r):
    torch.manual_seed(c * 10 + r)
    se = vi.SqueezeExcitation(c, r)
    x = torch.randn(3, c, 4, 5, dtype=torch.float64)
    se = se.double()
    out, gates = se(x)
    z = x.sum(dim=(2, 3)) / (4 * 5)  # average pooling written out
    hidden = np.maximum(z.numpy() @ se.fc1.weight.detach().numpy().T + se.fc1.bias.detach().numpy(), 0)
    logits = hidden @ se.fc2.weight.detach().numpy().T + se.fc2.bias.detach().numpy()
    want = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose(gates.detach().numpy(), want, rtol=1e-12)
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


def test_se_bad_input():
    with pytest.raises(ValueError, match="positive integer"):
        vi.SqueezeExcitation(0, 1)
    with pytest.raises(ValueError, match="must not exceed"):
        vi.SqueezeExcitation(4, 8)
    se = vi.SqueezeExcitation(4, 2)
    with pytest.raises(ValueError, match="4 channels"):
        se(torch.randn(1, 3, 2, 2))
    with pytest.raises(ValueError, match="4 dimensions"):
        se(torch.randn(4, 2, 2))
    with pytest.raises(TypeError, match="torch.Tensor"):
        se(np.zeros((1, 4, 2, 2)))
    with pytest.raises(ValueError, match="floating-point"):
        se(torch.zeros(1, 4, 2, 2, dtype=torch.long))


def test_bam_gate_is_sigmoid_of_the_broadcast_sum():
    c = torch.tensor([[1.0, -2.0]])
    s = torch.tensor([[[0.0, 3.0], [-1.0, 0.5]]])
    gate = vi.bam_gate(c, s)
    assert gate.shape == (1, 2, 2, 2)
    for ch in range(2):
        for i in range(2):
            for j in range(2):
                want = 1 / (1 + np.exp(-(c[0, ch].item() + s[0, i, j].item())))
                assert abs(gate[0, ch, i, j].item() - want) < 1e-6
    factor = 1 + gate
    assert (factor > 1).all() and (factor < 2).all()
    with pytest.raises(ValueError, match="batch sizes differ"):
        vi.bam_gate(torch.zeros(2, 3), torch.zeros(1, 4, 4))
    with pytest.raises(ValueError, match="2 dimensions"):
        vi.bam_gate(torch.zeros(3), torch.zeros(1, 4, 4))


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
    with pytest.raises(ValueError, match="odd"):
        vi.SpatialGate(4)


def test_make_shapes_masks_are_rectangles_and_deterministic():
    x, m = vi.make_shapes(20, size=12, seed=5)
    x2, m2 = vi.make_shapes(20, size=12, seed=5)
    assert torch.equal(x, x2) and torch.equal(m, m2)
    assert x.shape == (20, 3, 12, 12) and m.shape == (20, 12, 12)
    for mask in m:
        rows, cols = mask.any(1).nonzero().flatten(), mask.any(0).nonzero().flatten()
        h, w = len(rows), len(cols)
        assert 3 <= h <= 6 and 3 <= w <= 6 and mask.sum() == h * w  # one filled rectangle
        assert rows.max() - rows.min() + 1 == h and cols.max() - cols.min() + 1 == w
    with pytest.raises(ValueError, match="at least 6"):
        vi.make_shapes(2, size=4)


def test_trained_spatial_gate_finds_the_rectangle():
    gate, losses = vi.train_spatial_gate(steps=60, seed=0)
    x, m = vi.make_shapes(32, seed=77)
    with torch.no_grad():
        g = gate(x)[1][:, 0]
    assert losses[-1] < losses[0] / 5
    assert g[m > 0].mean() > 0.8 and g[m == 0].mean() < 0.2


# --------------------------------------------------------------------------- patches and cost


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


def test_patch_bad_input():
    with pytest.raises(ValueError, match="not divisible"):
        vi.patchify(torch.randn(1, 7, 8), 2)
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        vi.patchify(torch.randn(8, 8), 2)
    with pytest.raises(ValueError, match="positive integer"):
        vi.patchify(torch.randn(1, 8, 8), 0)
    with pytest.raises(TypeError, match="torch.Tensor"):
        vi.patchify([[0.0]], 1)
    with pytest.raises(ValueError, match="do not fit"):
        vi.unpatchify(torch.randn(1, 15, 4), 2, 1, 8, 8)


def test_vit_cost_numbers():
    assert vi.vit_cost(224, 16) == {"n_tokens": 196, "token_dim": 768, "pairs": 38_416, "bytes": 153_664}
    assert vi.vit_cost(224, 8)["bytes"] == 2_458_624
    assert vi.vit_cost(224, 1)["n_tokens"] == 50_176 and vi.vit_cost(224, 1)["bytes"] == 10_070_523_904
    assert vi.vit_cost(224, 16, channels=1, bytes_per_value=2)["bytes"] == 196 ** 2 * 2
    with pytest.raises(ValueError, match="not divisible"):
        vi.vit_cost(224, 15)
    with pytest.raises(ValueError, match="positive integer"):
        vi.vit_cost(224, True)


# --------------------------------------------------------------------------- digits and tiny ViT


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
    with pytest.raises(ValueError, match="test_fraction"):
        vi.load_digits_split(1.5)


def test_tiny_vit_shapes_params_and_cls_rows():
    torch.manual_seed(0)
    model = vi.TinyViT().eval()
    assert sum(p.numel() for p in model.parameters()) == 5018
    logits, maps = model(torch.rand(3, 1, 8, 8))
    assert logits.shape == (3, 10) and [m.shape for m in maps] == [(3, 2, 17, 17)] * 2
    torch.testing.assert_close(maps[-1].sum(-1), torch.ones(3, 2, 17))
    w = vi.cls_attention(model, torch.rand(3, 1, 8, 8))
    assert w.shape == (3, 16) and (w.sum(-1) < 1).all()
    with pytest.raises(ValueError, match="not divisible"):
        vi.TinyViT(image_size=8, patch=3)


def test_vit_without_position_embedding_ignores_patch_order():
    torch.manual_seed(0)
    model = vi.TinyViT().eval()
    x = torch.rand(2, 1, 8, 8)
    shuffled = vi.unpatchify(vi.patchify(x, 2)[:, torch.randperm(16)], 2, 1, 8, 8)
    with torch.no_grad():
        model.pos.zero_()
        torch.testing.assert_close(model(x)[0], model(shuffled)[0], atol=1e-5, rtol=1e-5)


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


# --------------------------------------------------------------------------- drawings and widgets


def test_draw_patch_grid_returns_counts():
    img = torch.rand(1, 8, 8)
    for p, n in [(1, 64), (2, 16), (4, 4), (8, 1)]:
        _, ax = plt.subplots()
        assert vi.draw_patch_grid(img, p, ax=ax) == {"n_tokens": n, "token_dim": p * p}
        assert ax.get_title()
    with pytest.raises(ValueError, match="not divisible"):
        vi.draw_patch_grid(img, 3)
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        vi.draw_patch_grid(torch.rand(3, 8, 8), 2)


def test_draw_patch_and_query_attention():
    img = torch.rand(8, 8)
    w = torch.softmax(torch.randn(17, 17), -1)
    grid = vi.draw_query_attention(img, w, 2, 5)
    np.testing.assert_allclose(grid, w[6, 1:].numpy().reshape(4, 4), rtol=1e-6)
    assert "패치 5" in plt.gca().get_title()
    _, ax = plt.subplots()
    vi.draw_query_attention(img, w, 2, 3, ax=ax, vmax=0.5)
    assert ax.images[-1].get_clim() == (0, 0.5)  # a shared colour scale
    grid = vi.draw_patch_attention(img, w[0, 1:], 2, mark=0, title="t")
    assert grid.shape == (4, 4)
    with pytest.raises(ValueError, match="one weight per patch"):
        vi.draw_patch_attention(img, torch.ones(15), 2)
    with pytest.raises(ValueError, match="patch index"):
        vi.draw_query_attention(img, w, 2, 16)
    with pytest.raises(ValueError, match="square"):
        vi.draw_query_attention(img, w[:5], 2, 0)


def test_widgets_build():
    pytest.importorskip("ipywidgets")
    box = vi.patch_size_explorer(torch.rand(8, 8))
    assert box.children[0].options == (1, 2, 4, 8)
    box = vi.query_patch_explorer(torch.rand(8, 8), torch.softmax(torch.randn(17, 17), -1), 2)
    assert box.children[0].max == 15


# --------------------------------------------------------------------------- exercises


def _se_right(x, w1, w2):
    return torch.sigmoid(F.relu(x.mean(dim=(2, 3)) @ w1.T) @ w2.T)


def test_13_1_checker():
    x, (w1, _w2) = vi._example_features() + 0.5, vi._example_weights()
    hidden = x.mean(dim=(2, 3)) @ w1.T
    assert (hidden < 0).any() and (hidden > 0).any()  # the example data can tell a missing ReLU apart
    assert check("13-1", _se_right).passed
    assert check("13-1", lambda x, w1, w2: _se_right(x, w1, w2)[:, :, None, None]).passed
    cases = {
        "소프트맥스": lambda x, w1, w2: torch.softmax(F.relu(x.mean(dim=(2, 3)) @ w1.T) @ w2.T, -1),
        "ReLU가 빠졌": lambda x, w1, w2: torch.sigmoid(x.mean(dim=(2, 3)) @ w1.T @ w2.T),
        "최댓값": lambda x, w1, w2: torch.sigmoid(F.relu(x.amax(dim=(2, 3)) @ w1.T) @ w2.T),
        "시그모이드가 빠졌": lambda x, w1, w2: F.relu(x.mean(dim=(2, 3)) @ w1.T) @ w2.T,
        "모양이": lambda x, w1, w2: _se_right(x, w1, w2).T,
        "합으로 압축": lambda x, w1, w2: torch.sigmoid(F.relu(x.sum(dim=(2, 3)) @ w1.T) @ w2.T),
        "W2 뒤에": lambda x, w1, w2: torch.sigmoid(F.relu(x.mean(dim=(2, 3)) @ w1.T @ w2.T)),
        "배치 축": lambda x, w1, w2: torch.softmax(F.relu(x.mean(dim=(2, 3)) @ w1.T) @ w2.T, 0),
        "(0, 1) 밖": lambda x, w1, w2: torch.tanh(F.relu(x.mean(dim=(2, 3)) @ w1.T) @ w2.T),
        "기대값": lambda x, w1, w2: _se_right(x, w1, w2) * 0.9,
    }
    for phrase, fn in cases.items():
        result = check("13-1", fn)
        assert not result.passed and phrase in result.message, (phrase, result.message)


def test_13_2_checker():
    assert check("13-2", lambda img, p: vi.patchify(img, p)).passed

    def p1p2c(img, p):
        c, h, w = img.shape
        return img.reshape(c, h // p, p, w // p, p).permute(1, 3, 2, 4, 0).reshape(-1, c * p * p)

    def col_major(img, p):
        c, h, w = img.shape
        return img.reshape(c, h // p, p, w // p, p).permute(3, 1, 0, 2, 4).reshape(-1, c * p * p)

    cases = {
        "(행, 열, 채널)": p1p2c,
        "열 우선": col_major,
        "그대로 reshape": lambda img, p: img.reshape(-1, img.shape[0] * p * p),
        "(6, 12)여야": lambda img, p: vi.patchify(img, p).T,
        "패치 0": lambda img, p: vi.patchify(img, p) + 1,
    }
    for phrase, fn in cases.items():
        result = check("13-2", fn)
        assert not result.passed and phrase in result.message, (phrase, result.message)


def test_13_3_checker():
    assert check("13-3", lambda s, p: ((s // p) ** 2) ** 2 * 4).passed
    cases = {
        "N개만": lambda s, p: (s // p) ** 2 * 4,
        "4바이트": lambda s, p: ((s // p) ** 2) ** 2,
        "float64": lambda s, p: ((s // p) ** 2) ** 2 * 8,
        "[CLS]": lambda s, p: ((s // p) ** 2 + 1) ** 2 * 4,
        "픽셀마다": lambda s, p: (s * s) ** 2 * 4,
        "숫자 하나": lambda s, p: [1, 2],
    }
    for phrase, fn in cases.items():
        result = check("13-3", fn)
        assert not result.passed and phrase in result.message, (phrase, result.message)
    assert "아직 구현" in check("13-3", lambda s, p: (_ for _ in ()).throw(NotImplementedError())).message
