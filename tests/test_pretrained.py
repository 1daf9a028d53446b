"""Notebook 11: MiniLM-L6 loads offline, the saved layer code equals the model, the 11-1 checker and the explorer."""

import math

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

from helpers.exercises import check
from helpers.exercises.ex11 import MISTAKES, reference_layer
from helpers.lessons.pretrained_attention import (
    encode,
    head_explorer,
    layer_attention,
    load_minilm,
    minilm_head_panel,
    offset_mass,
)

pytestmark = pytest.mark.notebook("11")  # `python3 course.py test 11` runs this module


@pytest.fixture(scope="module")
def arrow():
    return encode("Time flies like an arrow")


@pytest.fixture(scope="module")
def model():
    return load_minilm()[1]


def test_model_is_offline_and_shaped(arrow):
    import os

    tokens, weights, hidden = arrow
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert tokens == ["[CLS]", "time", "flies", "like", "an", "arrow", "[SEP]"]
    assert weights.shape == (6, 12, 7, 7) and hidden.shape == (7, 7, 384)
    torch.testing.assert_close(weights.sum(-1), torch.ones(6, 12, 7))


@pytest.mark.parametrize("sentence", ["Time flies like an arrow", "The quick brown fox jumps over the lazy dog."])
def test_layer_attention_equals_the_model(sentence, model):
    _, weights, hidden = encode(sentence)
    with torch.no_grad():
        for layer in range(6):
            ours, values = layer_attention(hidden[layer], model.encoder.layer[layer].attention.self)
            torch.testing.assert_close(ours, weights[layer], atol=1e-5, rtol=0)
            assert values.shape == (12, hidden.shape[1], 32)


def test_reference_layer_equals_the_model(model):
    _, _, hidden = encode("Fruit flies like a banana")
    with torch.no_grad():
        for layer in range(6):
            out = reference_layer(hidden[layer], model.encoder.layer[layer])
            assert (out - hidden[layer + 1]).abs().max() < 1e-4


def test_offset_mass_against_a_loop():
    gen = torch.Generator().manual_seed(0)
    w = torch.softmax(torch.randn(2, 3, 5, 5, generator=gen), -1)
    for offset in (-2, -1, 0, 1, 3):
        want = torch.zeros(2, 3)
        rows = [i for i in range(5) if 0 <= i + offset < 5]
        for i in rows:
            want += w[..., i, i + offset]
        torch.testing.assert_close(offset_mass(w, offset), want / len(rows))


def test_regression_pins(arrow):
    """Numbers the notebook's prose quotes (kept here, not on the slides)."""
    tokens, weights, hidden = arrow
    _, _, h_fruit = encode("Fruit flies like a banana")
    cos = torch.nn.functional.cosine_similarity
    flies = [round(cos(hidden[l, 2], h_fruit[l, 2], dim=0).item(), 3) for l in range(7)]
    like = [round(cos(hidden[l, 3], h_fruit[l, 3], dim=0).item(), 3) for l in range(7)]
    assert flies[1] == 0.917 and like[1] == 0.994 and round(flies[3], 2) == 0.87 and round(like[3], 2) == 0.96
    prev = offset_mass(weights, -1)
    assert divmod(int(prev.argmax()), 12) == (0, 2) and prev.max() > 0.9999
    assert round(offset_mass(weights, 1).max().item(), 2) == 0.54
    to_arrow = weights[:, :, 2, 5]
    assert round(to_arrow.mean().item(), 2) == 0.05 and round(to_arrow.max().item(), 2) == 0.58
    assert (weights[:, :, 2].argmax(-1) == 5).nonzero().tolist() == [[5, 11]]
    cls = weights[..., 0].mean(dim=(-1, -2))
    assert (round(cls[1:5].min().item(), 2), round(cls[1:5].max().item(), 2)) == (0.63, 0.71)


def my_layer(H, block, num_heads=12):
    T, d = H.shape
    a = block.attention.self

    def heads(lin):
        return (H @ lin.weight.T + lin.bias).view(T, num_heads, d // num_heads).transpose(0, 1)

    w = torch.softmax(heads(a.query) @ heads(a.key).transpose(-1, -2) / math.sqrt(d // num_heads), -1)
    ctx = (w @ heads(a.value)).transpose(0, 1).reshape(T, d)
    o, ln1, ln2 = block.attention.output.dense, block.attention.output.LayerNorm, block.output.LayerNorm
    X = torch.nn.functional.layer_norm(H + ctx @ o.weight.T + o.bias, (d,), ln1.weight, ln1.bias, ln1.eps)
    f = torch.nn.functional.gelu(block.intermediate.dense(X))
    return torch.nn.functional.layer_norm(X + block.output.dense(f), (d,), ln2.weight, ln2.bias, ln2.eps)


def test_exercise_11_1_right_answer():
    result = check("11-1", my_layer)
    assert result.passed, result.message


@pytest.mark.parametrize("index", range(len(MISTAKES)))
def test_exercise_11_1_diagnoses_each_mistake(index):
    switches, message = MISTAKES[index]
    result = check("11-1", lambda H, block: reference_layer(H, block, **switches))
    assert not result and message in result.message


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (lambda H, block: H, "그대로 돌려줍니다"),
        (lambda H, block: H[:, :10], "모양"),
        (lambda H, block: 1 / 0, "ZeroDivisionError"),
        (lambda H, block: reference_layer(H, block) * 1.01, "순서를 확인"),
    ],
)
def test_exercise_11_1_other_answers(fn, fragment):
    result = check("11-1", fn)
    assert not result and fragment in result.message


def _via_sublayers(H, b):
    """The layer's own sublayers do the work (any parameter name): the checker sees the calls at run time."""
    X = b.attention(H[None])[0]
    return b.output(b.intermediate(X), X)[0]


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (lambda H, block: block(H[None])[0][0], "block을(를) 불렀습니다"),
        (_via_sublayers, "block.attention(...)을(를) 불렀습니다"),
    ],
)
def test_exercise_11_1_rejects_calling_the_layer(fn, fragment):
    result = check("11-1", fn)
    assert not result and fragment in result.message and "다시 계산하는 연습" in result.message, result.message


def _via_forward_methods(H, b):
    """The sublayers' forward methods called directly: a forward hook would not see these."""
    ctx = b.attention.self.forward(H[None])[0]
    X = b.attention.output.forward(ctx, H[None])
    return b.output.forward(b.intermediate.forward(X), X)[0]


def _via_class_forward(H, b):
    X = type(b.attention).forward(b.attention, H[None])[0]
    return type(b.output).forward(b.output, type(b.intermediate).forward(b.intermediate, X), X)[0]


@pytest.mark.parametrize(
    "fn, fragment",
    [(_via_forward_methods, "block.attention.self(...)을(를)"), (_via_class_forward, "block.attention(...)을(를)")],
)
def test_exercise_11_1_rejects_the_sublayers_forward_called_directly(fn, fragment, model):
    result = check("11-1", fn)
    assert not result and fragment in result.message and ".forward(...)" in result.message, result.message
    layer = model.encoder.layer[0]
    assert all("forward" in type(m).__dict__ for m in (layer, layer.attention, layer.output))  # restored
    assert type(layer).forward.__qualname__.startswith(type(layer).__name__)


def test_exercise_11_1_rejects_fused_attention_fetched_by_its_name():
    result = check("11-1", lambda H, b: getattr(F, "scaled_dot_product_attention")(H, H, H))  # noqa: B009
    assert not result and '"scaled_dot_product_attention"을(를) 문자열로' in result.message, result.message


def _via_fused_attention(H, block):
    """Everything by hand except the attention itself, which F.scaled_dot_product_attention does."""
    T, d = H.shape
    a, o = block.attention.self, block.attention.output

    def heads(lin):
        return (H @ lin.weight.T + lin.bias).view(T, 12, 32).transpose(0, 1)

    ctx = F.scaled_dot_product_attention(heads(a.query), heads(a.key), heads(a.value)).transpose(0, 1).reshape(T, d)
    X = F.layer_norm(
        H + ctx @ o.dense.weight.T + o.dense.bias, (d,), o.LayerNorm.weight, o.LayerNorm.bias, o.LayerNorm.eps
    )
    up, down, ln2 = block.intermediate.dense, block.output.dense, block.output.LayerNorm
    ffn = F.gelu(X @ up.weight.T + up.bias) @ down.weight.T + down.bias
    return F.layer_norm(X + ffn, (d,), ln2.weight, ln2.bias, ln2.eps)


def test_exercise_11_1_rejects_the_fused_attention():
    result = check("11-1", _via_fused_attention)
    assert not result and "scaled_dot_product_attention을(를) 불렀습니다" in result.message, result.message


def test_exercise_11_1_rejects_the_fused_attention_as_an_aten_operator():
    def via_aten(H, block):
        T, d = H.shape
        a = block.attention.self

        def heads(lin):
            return (H @ lin.weight.T + lin.bias).view(T, 12, 32).transpose(0, 1)[None]

        out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(heads(a.query), heads(a.key), heads(a.value))
        return out[0][0].transpose(0, 1).reshape(T, d)

    result = check("11-1", via_aten)
    assert not result and "_scaled_dot_product_flash_attention_for_cpu" in result.message, result.message


def test_exercise_11_1_pre_ln_softmax_axis_and_relu_are_named():
    for switches, fragment in (
        (dict(norm="pre"), "사후 정규화(post-LN)"),
        (dict(softmax_dim=-2), "dim=-1"),
        (dict(gelu="relu"), "ReLU를 썼습니다"),
    ):
        result = check("11-1", lambda H, block, s=switches: reference_layer(H, block, **s))
        assert not result and fragment in result.message, result.message


def test_exercise_11_1_a_shared_linear_without_transpose_crashes_at_the_ffn():
    """Dropping .T in one linear() used everywhere raises at the (1536, 384) FFN matrix: the hint says so."""

    def shared(H, block, num_heads=12):
        T, d = H.shape

        def linear(x, lin):
            return x @ lin.weight + lin.bias  # .T forgotten everywhere

        def heads(lin):
            return linear(H, lin).view(T, num_heads, d // num_heads).transpose(0, 1)

        a = block.attention.self
        w = torch.softmax(heads(a.query) @ heads(a.key).transpose(-1, -2) / math.sqrt(d // num_heads), -1)
        ctx = (w @ heads(a.value)).transpose(0, 1).reshape(T, d)
        ln1, ln2 = block.attention.output.LayerNorm, block.output.LayerNorm
        X = torch.nn.functional.layer_norm(
            H + linear(ctx, block.attention.output.dense), (d,), ln1.weight, ln1.bias, ln1.eps
        )
        f = linear(torch.nn.functional.gelu(linear(X, block.intermediate.dense)), block.output.dense)
        return torch.nn.functional.layer_norm(X + f, (d,), ln2.weight, ln2.bias, ln2.eps)

    result = check("11-1", shared)
    assert not result and "cannot be multiplied" in result.message and "(1536, 384)인 피드포워드" in result.message


def test_the_new_diagnoses_are_distinct_from_the_right_answer(model):
    """tanh-GELU, all biases dropped, q/k/v untransposed and the literal view each move the output beyond 1e-4."""
    _, _, hidden = encode("Time flies like an arrow")
    for switches in (
        dict(gelu="tanh"),
        dict(gelu="relu"),
        dict(bias=(), ffn_bias=False),
        dict(skip_t=("q", "k", "v")),
        dict(split="literal"),
    ):
        with torch.no_grad():
            gap = (reference_layer(hidden[0], model.encoder.layer[0], **switches) - hidden[1]).abs().max()
        assert gap > 1e-4, switches


def test_a_missing_key_bias_changes_nothing(model):
    """q·b_K is the same for every key of a row, so softmax cancels it: the notebook says so."""
    _, _, hidden = encode("Time flies like an arrow")
    with torch.no_grad():
        gap = (reference_layer(hidden[3], model.encoder.layer[3], bias=("q", "v", "o")) - hidden[4]).abs().max()
    assert gap < 1e-4


def test_the_four_named_mistakes_are_diagnosed():
    by_name = {
        "편향": dict(bias=()),
        "√d_head": dict(scale="none"),
        "view(T, d_head, h)": dict(split="wrong"),
        "H @ W.T": dict(transpose=False),
    }
    for fragment, switches in by_name.items():
        result = check("11-1", lambda H, block, s=switches: reference_layer(H, block, **s))
        assert not result and fragment in result.message, result.message


def test_head_panel_and_explorer(arrow):
    tokens, weights, hidden = arrow
    fig, ax = plt.subplots()
    w = minilm_head_panel(ax, 7)(tokens, weights[0, 2], "제목")
    assert ax.get_title() == "제목" and w.shape == (7, 7)
    maps = {"time": arrow, "fruit": encode("Fruit flies like a banana")}
    ex = head_explorer(maps)
    first = ex.png
    ex.set(layer=1, head=8)
    assert ex.figure.axes[0].get_title() == "층 1 · 헤드 8"
    torch.testing.assert_close(torch.as_tensor(ex.last), weights[1, 8])
    assert ex.png != first and ex.renders == 3
    heights = [bar.get_height() for bar in ex.figure.axes[1].patches]  # [CLS], previous, self, next, [SEP]
    assert abs(heights[3] - offset_mass(weights[1, 8], 1).item()) < 1e-6
    assert abs(heights[0] - weights[1, 8, :, 0].mean().item()) < 1e-6
    ex.set(sentence="fruit")
    assert [t.get_text() for t in ex.figure.axes[0].get_xticklabels()][1] == "fruit"
    image = ex.figure.axes[0].images[0].get_array()
    torch.testing.assert_close(torch.as_tensor(image.data), maps["fruit"][1][1, 8])
    # New tick labels are drawn whole; a layer or head moved after that must keep them (a background
    # kept from before the sentence changed brought the old labels back).
    for values in ({"layer": 3}, {"head": 2}, {"sentence": "time"}, {"layer": 5}, {"sentence": "fruit"}, {"head": 11}):
        ex.set(**values)
        assert ex.png == ex.render_png(full=True), values
    assert ex._blit_state is True, "11's explorer drew every frame whole: the moves above checked no background"
    plt.close("all")
