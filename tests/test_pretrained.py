"""helpers.pretrained: MiniLM-L6 loads offline and our attention equals the model's own."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.exercises import check  # noqa: E402
from helpers.pretrained import (  # noqa: E402
    attention_maps,
    contribution_share,
    draw_all_heads,
    draw_head,
    offset_mass,
    recompute_attention,
)


@pytest.fixture(scope="module")
def arrow():
    return attention_maps("Time flies like an arrow")


def test_model_is_offline_and_shaped(arrow, monkeypatch):
    import os

    tokens, weights, hidden = arrow
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert tokens == ["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]"]
    assert weights.shape == (6, 12, 7, 7) and hidden.shape == (7, 7, 384)
    torch.testing.assert_close(weights.sum(-1), torch.ones(6, 12, 7))


@pytest.mark.parametrize("sentence", ["Time flies like an arrow", "The quick brown fox jumps over the lazy dog."])
def test_recomputed_attention_equals_the_model(sentence):
    _, weights, hidden = attention_maps(sentence)
    for layer in range(6):
        ours, values = recompute_attention(hidden[layer], layer)
        torch.testing.assert_close(ours, weights[layer], atol=1e-5, rtol=1e-5)
        assert values.shape == (12, hidden.shape[1], 32)


def test_recompute_bad_input(arrow):
    _, _, hidden = arrow
    with pytest.raises(ValueError, match=r"layer must be in 0..5"):
        recompute_attention(hidden[0], 6)
    with pytest.raises(ValueError, match=r"shape \(T, 384\)"):
        recompute_attention(hidden[0, :, :10], 0)
    with pytest.raises(ValueError, match="non-empty string"):
        attention_maps("  ")


def test_offset_mass_against_a_loop():
    gen = torch.Generator().manual_seed(0)
    w = torch.softmax(torch.randn(2, 3, 5, 5, generator=gen), -1)
    for offset in (-2, -1, 0, 1, 3):
        want = torch.zeros(2, 3)
        rows = [i for i in range(5) if 0 <= i + offset < 5]
        for i in rows:
            want += w[..., i, i + offset]
        torch.testing.assert_close(offset_mass(w, offset), want / len(rows))
    with pytest.raises(ValueError, match="offset must be in"):
        offset_mass(w, 5)


def test_contribution_share_against_a_loop():
    gen = torch.Generator().manual_seed(1)
    w = torch.softmax(torch.randn(2, 4, 4, generator=gen), -1)
    v = torch.randn(2, 4, 3, generator=gen)
    want = torch.zeros(2)
    for h in range(2):
        for i in range(4):
            c = [w[h, i, j] * v[h, j].norm() for j in range(4)]
            want[h] += c[1] / sum(c)
    torch.testing.assert_close(contribution_share(w, v, 1), want / 4)
    with pytest.raises(ValueError, match="disagree"):
        contribution_share(w, v[:, :3], 0)


def test_cls_absorbs_weight_but_brings_little(arrow):
    _, weights, hidden = arrow
    w2, v2 = recompute_attention(hidden[2], 2)
    assert weights[2, :, :, 0].mean() > 0.6
    assert contribution_share(w2, v2, 0).mean() < 0.3


def test_drawing(arrow):
    tokens, weights, _ = arrow
    m = draw_head(tokens, weights, 0, 2)
    torch.testing.assert_close(m, weights[0, 2])
    with pytest.raises(ValueError, match="head in 0..11"):
        draw_head(tokens, weights, 0, 12)
    fig = draw_all_heads(tokens, weights, title="제목")
    assert len(fig.axes) == 72
    plt.close("all")


def test_exercise_11_1(arrow):
    assert check("11-1", (0, 2)).passed
    wrong = check("11-1", (1, 8))
    assert not wrong and "층 1·헤드 8" in wrong.message and "더 큰 헤드" in wrong.message
    assert "두 정수" in check("11-1", "abc").message
    assert "사이여야" in check("11-1", (9, 0)).message
    assert "순서가 바뀌었" in check("11-1", (2, 0)).message
    assert "1부터" in check("11-1", (1, 3)).message


def test_exercise_11_2():
    assert check("11-2", lambda t, w: w[..., 0].mean(dim=(-1, -2))).passed
    sep = check("11-2", lambda t, w: w[..., -1].mean(dim=(-1, -2)))
    assert not sep and "[SEP]" in sep.message
    row = check("11-2", lambda t, w: w[..., 0, :].mean(dim=(-1, -2)))
    assert not row and "행 0" in row.message
    summed = check("11-2", lambda t, w: w[..., 0].mean(dim=1).sum(-1))
    assert not summed and "쿼리 축" in summed.message
    heads = check("11-2", lambda t, w: w[..., 0].mean(dim=-1).sum(-1))
    assert not heads and "헤드 축" in heads.message
    shape = check("11-2", lambda t, w: w[..., 0].mean())
    assert not shape and "6개" in shape.message
