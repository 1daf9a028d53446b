"""Unit tests of helpers.position (notebook 10) against the plain formulas, complex numbers and PyTorch."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.attention import MultiHeadAttention  # noqa: E402
from helpers.exercises import check  # noqa: E402
from helpers.position import (  # noqa: E402
    LearnedPositionalEncoding,
    apply_rope,
    draw_offset,
    frequencies,
    offset_explorer,
    offset_rotation,
    relative_similarity,
    sinusoidal_encoding,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def loop_encoding(T, d, base=10000.0):
    """The paper's formula written as a loop: the independent reference."""
    pe = torch.zeros(T, d, dtype=torch.float64)
    for p in range(T):
        for i in range(d // 2):
            pe[p, 2 * i] = math.sin(p / base ** (2 * i / d))
            pe[p, 2 * i + 1] = math.cos(p / base ** (2 * i / d))
    return pe


def complex_rope(x, positions, base=10000.0):
    """RoPE as complex multiplication: pair (x_2i, x_2i+1) -> (x_2i + i x_2i+1) e^{i p ω_i}."""
    d = x.shape[-1]
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    omega = torch.tensor([base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)
    angle = torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega
    return torch.view_as_real(z * torch.polar(torch.ones_like(angle), angle)).reshape(x.shape)


# --------------------------------------------------------------------------- sinusoidal


@pytest.mark.parametrize("T, d, base", [(10, 16, 10000.0), (7, 2, 10000.0), (33, 64, 10000.0), (5, 8, 100.0)])
def test_sinusoidal_matches_loop_formula(T, d, base):
    torch.testing.assert_close(sinusoidal_encoding(T, d, base, dtype=torch.float64), loop_encoding(T, d, base))


def test_sinusoidal_basic_properties():
    pe = sinusoidal_encoding(50, 32)
    assert pe.shape == (50, 32) and pe.dtype == torch.float32
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 16))
    torch.testing.assert_close(pe.norm(dim=-1), torch.full((50,), 4.0))   # sqrt(d/2)
    assert sinusoidal_encoding(0, 4).shape == (0, 4)
    torch.testing.assert_close(sinusoidal_encoding(300, 32)[:50], pe)     # a longer table extends the shorter


def test_frequencies():
    torch.testing.assert_close(frequencies(8), torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64))
    assert frequencies(64)[0] == 1.0 and torch.all(frequencies(64)[1:] < frequencies(64)[:-1])


@pytest.mark.parametrize("args, exc", [
    ((10, 7), ValueError), ((10, 0), ValueError), ((-1, 4), ValueError),
    ((2.5, 4), TypeError), ((10, "8"), TypeError), ((True, 4), TypeError),
])
def test_sinusoidal_bad_input(args, exc):
    with pytest.raises(exc):
        sinusoidal_encoding(*args)


@pytest.mark.parametrize("base, exc", [(1.0, ValueError), (0.5, ValueError), (float("inf"), ValueError), ("x", TypeError)])
def test_bad_base(base, exc):
    with pytest.raises(exc):
        frequencies(8, base)


# --------------------------------------------------------------------------- offsets


@pytest.mark.parametrize("k", [0, 1, 4, 17, -3])
def test_offset_rotation_maps_every_position(k):
    d, T = 16, 40
    pe = loop_encoding(T, d)
    R = offset_rotation(k, d)
    for p in range(max(0, -k), min(T, T - k)):
        torch.testing.assert_close(R @ pe[p], pe[p + k])
    torch.testing.assert_close(R @ R.T, torch.eye(d, dtype=torch.float64))
    off_block = R.clone()
    for i in range(0, d, 2):
        off_block[i : i + 2, i : i + 2] = 0
    assert off_block.abs().max() == 0


def test_offset_rotation_composes_and_inverts():
    torch.testing.assert_close(offset_rotation(2, 8) @ offset_rotation(5, 8), offset_rotation(7, 8))
    torch.testing.assert_close(offset_rotation(-4, 8), offset_rotation(4, 8).T)
    with pytest.raises(TypeError):
        offset_rotation(1.5, 8)
    with pytest.raises(ValueError):
        offset_rotation(1, 5)


def test_relative_similarity_is_the_dot_product_for_every_p():
    pe = loop_encoding(60, 32)
    gram = pe @ pe.T
    for k in range(-20, 21):
        diag = torch.diagonal(gram, offset=k)
        torch.testing.assert_close(diag, relative_similarity(k, 32).expand_as(diag))
    torch.testing.assert_close(relative_similarity([0, 3], 32), torch.tensor([16.0, gram[5, 8].item()], dtype=torch.float64))


# --------------------------------------------------------------------------- RoPE


@pytest.mark.parametrize("shape", [(6, 8), (2, 3, 5, 16)])
def test_rope_matches_complex_reference(shape):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    pos = torch.tensor([0, 1, 5, 2, 9, 100][: shape[-2]])
    got = apply_rope(x, pos)
    assert got.shape == x.shape and got.dtype == x.dtype
    torch.testing.assert_close(got.double(), complex_rope(x, pos), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(apply_rope(x), apply_rope(x, torch.arange(shape[-2])))


def test_rope_matches_2x2_rotation_and_position_zero():
    x = torch.tensor([[1.0, 0.0, 3.0, 4.0]], dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, [0]), x)
    got = apply_rope(x, [2])[0]
    w1 = 10000 ** (-2 / 4)
    rot = lambda a: torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64)  # noqa: E731
    torch.testing.assert_close(got[:2], rot(2.0) @ x[0, :2])
    torch.testing.assert_close(got[2:], rot(2 * w1) @ x[0, 2:])


def test_rope_scores_depend_only_on_offset():
    gen = torch.Generator().manual_seed(1)
    q, k = torch.randn(32, generator=gen, dtype=torch.float64), torch.randn(32, generator=gen, dtype=torch.float64)
    for p, r in [(0, 0), (3, 1), (10, 4), (50, 50), (7, 12)]:
        a = apply_rope(torch.stack([q, k]), [p, r])
        b = apply_rope(torch.stack([q, k]), [p + 37, r + 37])
        torch.testing.assert_close(a[0] @ a[1], b[0] @ b[1])
    a = apply_rope(torch.stack([q, k]), [5, 2])
    b = apply_rope(torch.stack([q, k]), [2, 5])
    assert not torch.isclose(a[0] @ a[1], b[0] @ b[1])   # +3 and -3 differ


@pytest.mark.parametrize("x, positions, exc", [
    ([[1.0, 2.0]], None, TypeError),
    (torch.ones(3, 4, dtype=torch.long), None, ValueError),
    (torch.ones(4), None, ValueError),
    (torch.ones(3, 5), None, ValueError),
    (torch.ones(3, 4), [0, 1], ValueError),
    (torch.ones(3, 4), "abc", TypeError),
])
def test_rope_bad_input(x, positions, exc):
    with pytest.raises(exc):
        apply_rope(x, positions)


# --------------------------------------------------------------------------- learned positions


def test_learned_positional_encoding():
    torch.manual_seed(0)
    enc = LearnedPositionalEncoding(10, 8)
    assert sum(p.numel() for p in enc.parameters()) == 80
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(enc(x), enc.table.weight[:6].expand(2, 6, 8))
    with pytest.raises(ValueError, match="T=11 exceeds the 10 positions"):
        enc(torch.zeros(1, 11, 8))
    with pytest.raises(ValueError):
        enc(torch.zeros(6, 8))
    with pytest.raises(ValueError):
        LearnedPositionalEncoding(0, 8)
    with pytest.raises(IndexError):       # what the plain table does, for contrast
        enc.table(torch.arange(11))


def test_positions_break_permutation_equivariance():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2).eval()
    x = torch.randn(1, 5, 16)
    perm = torch.tensor([4, 2, 0, 1, 3])
    with torch.no_grad():
        torch.testing.assert_close(mha(x[:, perm])[0], mha(x)[0][:, perm])
        pe = sinusoidal_encoding(5, 16)
        assert not torch.allclose(mha(x[:, perm] + pe)[0], mha(x + pe)[0][:, perm], atol=1e-4)


# --------------------------------------------------------------------------- drawing


@pytest.mark.parametrize("k", [0, 1, 7, 40])
def test_draw_offset_returns_dot_products_and_angles(k):
    result = draw_offset(k, 32, max_offset=40, p_values=(0, 3, 11), pairs=(0, 2, 5))
    pe = loop_encoding(11 + k + 1, 32)
    want = [float(pe[p] @ pe[p + k]) for p in (0, 3, 11)]
    np.testing.assert_allclose(result["dots"], want, atol=1e-9)
    np.testing.assert_allclose(result["dots"], relative_similarity(k, 32).item(), atol=1e-9)
    omega = frequencies(32)
    np.testing.assert_allclose(result["angles"], np.degrees([k * omega[i].item() for i in (0, 2, 5)]))
    fig = plt.gcf()
    assert len(fig.axes) == 2 and "k = " in fig.axes[0].get_title()


def test_draw_offset_on_given_axes_and_bad_input():
    fig, axes = plt.subplots(1, 2)
    draw_offset(3, 16, axes=axes)
    assert axes[0].get_xlabel() and axes[1].get_xlabel()
    for kwargs, exc in [(dict(k=1.5), TypeError), (dict(k=1, d=15), ValueError),
                        (dict(k=1, pairs=(0, 99)), ValueError), (dict(k=-5, p_values=(0, 2)), ValueError)]:
        with pytest.raises(exc):
            draw_offset(**kwargs)


def test_offset_explorer_builds_a_slider():
    box = offset_explorer(d=16, max_k=10, k=2)
    slider = box.children[0]
    assert slider.value == 2 and slider.max == 10


# --------------------------------------------------------------------------- exercises


def _sinusoidal_ok(T, d):
    return sinusoidal_encoding(T, d, dtype=torch.float64)


def _sin_cos_swapped(T, d):
    return sinusoidal_encoding(T, d).view(T, d // 2, 2).flip(-1).flatten(-2)


def _halves(T, d):
    pe = sinusoidal_encoding(T, d)
    return torch.cat((pe[:, 0::2], pe[:, 1::2]), dim=-1)


def _per_dim_exponent(T, d):
    p, j = torch.arange(T)[:, None].double(), torch.arange(d).double()
    return torch.where(j % 2 == 0, torch.sin(p / 10000 ** (j / d)), torch.cos(p / 10000 ** (j / d)))


def _multiplied(T, d):
    p, j = torch.arange(T)[:, None].double(), torch.arange(d).double()
    angle = p * 10000 ** (j // 2 * 2 / d)
    return torch.where(j % 2 == 0, angle.sin(), angle.cos())


@pytest.mark.parametrize("fn, fragment", [
    (_sin_cos_swapped, "sin과 cos의 자리가 바뀌었습니다"),
    (_halves, "앞 절반에 sin"),
    (_per_dim_exponent, "지수에 차원 번호 j"),
    (_multiplied, "나누지 않고 곱했습니다"),
    (lambda T, d: sinusoidal_encoding(T, d).T, "행과 열이 바뀌었습니다"),
    (lambda T, d: torch.zeros(T, d + 2), "모양이"),
    (lambda T, d: sinusoidal_encoding(T, d) * 1.1, "값이 다릅니다"),
    (lambda T, d: 1 / 0, "ZeroDivisionError"),
])
def test_exercise_10_1_wrong_answers(fn, fragment):
    result = check("10-1", fn)
    assert not result.passed and fragment in result.message, result.message


def test_exercise_10_1_right_answer():
    assert check("10-1", _sinusoidal_ok).passed


def _rotation_transposed(k, d):
    return offset_rotation(k, d).T


def _rotation_one_angle(k, d):
    return torch.block_diag(*[offset_rotation(k, 2)] * (d // 2))


def _rotation_leaky(k, d):
    r = offset_rotation(k, d)
    r[0, 3] = 0.5
    return r


@pytest.mark.parametrize("fn, fragment", [
    (_rotation_transposed, "회전 방향이 반대"),
    (_rotation_one_angle, "같은 각도"),
    (_rotation_leaky, "2×2 블록 밖"),
    (lambda k, d: torch.eye(d + 1), "모양이"),
    (lambda k, d: torch.eye(d), "PE(p + 1)와 다릅니다"),
])
def test_exercise_10_2_wrong_answers(fn, fragment):
    result = check("10-2", fn)
    assert not result.passed and fragment in result.message, result.message


def test_exercise_10_2_right_answer():
    assert check("10-2", offset_rotation).passed


def _rope_backwards(x, positions):
    return apply_rope(x, -positions)


def _rope_neox(x, positions):
    half = torch.cat((x[:, 0::2], x[:, 1::2]), dim=-1)
    out = apply_rope(half, positions)
    return torch.cat((out[:, 0::2], out[:, 1::2]), dim=-1)


def _rope_one_frequency(x, positions):
    angle = positions.double()[:, None].expand(-1, x.shape[-1] // 2)
    c, s = angle.cos(), angle.sin()
    return torch.stack((x[:, 0::2] * c - x[:, 1::2] * s, x[:, 0::2] * s + x[:, 1::2] * c), -1).flatten(-2)


@pytest.mark.parametrize("fn, fragment", [
    (_rope_backwards, "회전 방향이 반대"),
    (_rope_neox, "GPT-NeoX"),
    (_rope_one_frequency, "같은 각도 p로"),
    (lambda x, positions: x + sinusoidal_encoding(len(positions), x.shape[-1], dtype=x.dtype), "길이가 변했습니다"),
    (lambda x, positions: x[:, :4], "모양이"),
    (lambda x, positions: apply_rope(x, positions).flip(-1), "값이 다릅니다"),
])
def test_exercise_10_3_wrong_answers(fn, fragment):
    result = check("10-3", fn)
    assert not result.passed and fragment in result.message, result.message


def test_exercise_10_3_right_answer():
    assert check("10-3", apply_rope).passed
    assert check("10-3", lambda x, positions: complex_rope(x, positions)).passed
