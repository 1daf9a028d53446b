"""Notebook 10's saved code (helpers.lessons.positional_encoding) against plain formulas, complex numbers and
PyTorch; the offset explorer; the 10-1 and 10-2 checkers."""

import math

import matplotlib.pyplot as plt
import pytest
import torch

from helpers.attention import MultiHeadAttention
from helpers.exercises import check
from helpers.exercises.ex10 import _rope_half, reference_rope
from helpers.lessons.positional_encoding import (
    LearnedPositionalEncoding,
    RoPEMultiHeadAttention,
    apply_rope,
    apply_rope_half,
    frequencies,
    offset_explorer,
    offset_panel,
    offset_rotation,
    relative_similarity,
    rotate_half,
    sinusoidal_encoding,
)

pytestmark = pytest.mark.notebook("10")  # `python3 course.py test 10` runs this module


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
    torch.testing.assert_close(pe.norm(dim=-1), torch.full((50,), 4.0))  # sqrt(d/2)
    assert sinusoidal_encoding(0, 4).shape == (0, 4)
    torch.testing.assert_close(sinusoidal_encoding(300, 32)[:50], pe)  # a longer table extends the shorter


def test_frequencies():
    torch.testing.assert_close(frequencies(8), torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64))
    assert frequencies(64)[0] == 1.0 and torch.all(frequencies(64)[1:] < frequencies(64)[:-1])


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


def test_relative_similarity_is_the_dot_product_for_every_p():
    pe = loop_encoding(60, 32)
    gram = pe @ pe.T
    for k in range(-20, 21):
        diag = torch.diagonal(gram, offset=k)
        torch.testing.assert_close(diag, relative_similarity(k, 32).expand_as(diag))
    torch.testing.assert_close(
        relative_similarity([0, 3], 32), torch.tensor([16.0, gram[5, 8].item()], dtype=torch.float64)
    )


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
    assert not torch.isclose(a[0] @ a[1], b[0] @ b[1])  # +3 and -3 differ


# --------------------------------------------------------------------------- learned positions


def test_learned_positional_encoding():
    torch.manual_seed(0)
    enc = LearnedPositionalEncoding(10, 8)
    assert sum(p.numel() for p in enc.parameters()) == 80
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(enc(x), enc.table.weight[:6].expand(2, 6, 8))
    with pytest.raises(ValueError, match="positions 0..9 only"):
        enc(torch.zeros(1, 11, 8))
    with pytest.raises(IndexError):  # what the plain table does, for contrast
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


# --------------------------------------------------------------------------- the two RoPE conventions


def hf_rotate_half_rope(x, positions, base=10000.0):
    """Hugging Face LLaMA's apply_rotary_pos_emb, re-typed: emb = cat(freqs, freqs); x*cos + rotate_half(x)*sin."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.as_tensor(positions, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def test_rope_half_matches_the_hugging_face_formula_and_the_checker_reference():
    x = torch.randn(2, 3, 6, 8, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    pos = torch.tensor([0, 1, 2, 5, 9, 40])
    torch.testing.assert_close(apply_rope_half(x, pos), hf_rotate_half_rope(x, pos))
    torch.testing.assert_close(_rope_half(x[:1], pos[None])[0], hf_rotate_half_rope(x[0], pos))
    torch.testing.assert_close(rotate_half(torch.tensor([1.0, 2.0, 3.0, 4.0])), torch.tensor([-3.0, -4.0, 1.0, 2.0]))


@pytest.mark.parametrize("d", [2, 8, 64])
def test_conventions_are_equal_up_to_a_permutation(d):
    x = torch.randn(7, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64)
    perm = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))
    pos = torch.tensor([0, 3, 1, 8, 100, 2, 2])
    torch.testing.assert_close(apply_rope_half(x[:, perm], pos), apply_rope(x, pos)[:, perm])


def test_rope_layer_is_plain_mha_at_position_zero_and_shift_invariant():
    torch.manual_seed(0)
    rope, plain = RoPEMultiHeadAttention(16, 4).eval(), MultiHeadAttention(16, 4).eval()
    plain.load_state_dict(rope.state_dict())
    x = torch.randn(2, 6, 16)
    with torch.no_grad():
        torch.testing.assert_close(rope(x, torch.zeros(6))[0], plain(x)[0])
        out, w = rope(x)
        torch.testing.assert_close(rope(x, torch.arange(6) + 50)[0], out, atol=1e-5, rtol=0)
        assert w.shape == (2, 4, 6, 6)
        # Values are not rotated: with a single token the output is out_proj(v) at any position.
        one = x[:, :1]
        torch.testing.assert_close(rope(one, [37])[0], plain.out_proj(plain.v_proj(one)))


# --------------------------------------------------------------------------- the offset explorer


@pytest.mark.parametrize("k", [0, 1, 7, 40])
def test_offset_panel_returns_dot_products_and_angles(k):
    fig, axes = plt.subplots(1, 2)
    result = offset_panel(axes, 32, 40, p_values=(0, 3, 11), pairs=(0, 2, 5))(k)
    pe = loop_encoding(11 + k + 1, 32)
    want = [float(pe[p] @ pe[p + k]) for p in (0, 3, 11)]
    torch.testing.assert_close(
        torch.tensor(result["dots"], dtype=torch.float64), torch.tensor(want, dtype=torch.float64)
    )
    omega = frequencies(32)
    torch.testing.assert_close(
        torch.tensor(result["angles"], dtype=torch.float64),
        torch.tensor([math.degrees(k * omega[i].item()) for i in (0, 2, 5)], dtype=torch.float64),
    )
    assert f"k = {k}" in axes[0].get_title()


def test_offset_explorer_updates_in_place():
    ex = offset_explorer(d=16, max_offset=10)
    left, right = ex.figure.axes
    n_artists = len(left.get_children()) + len(right.get_children())
    first = ex.png
    ex.set(k=5)
    assert ex.renders == 2 and ex.png != first
    assert left.get_title().startswith("k = 5") and abs(ex.last["angles"][0] - math.degrees(5)) < 1e-9
    assert list(left.lines[1].get_xdata()) == [5, 5]  # the red marker moved
    assert len(left.get_children()) + len(right.get_children()) == n_artists  # nothing re-created
    assert max(abs(v - relative_similarity(5, 16).item()) for v in ex.last["dots"]) < 1e-9


# --------------------------------------------------------------------------- exercises


def decode_ok(row):
    d = row.shape[-1]
    return round(math.atan2(row[-2].item(), row[-1].item()) / 10000 ** (-(d - 2) / d))


def decode_pair0(row):
    return math.atan2(row[0].item(), row[1].item()) % (2 * math.pi)


def decode_swapped(row):
    d = row.shape[-1]
    return math.atan2(row[-1].item(), row[-2].item()) / 10000 ** (-(d - 2) / d)


def decode_middle_pair(row):
    i = 3
    d = row.shape[-1]
    return math.atan2(row[2 * i].item(), row[2 * i + 1].item()) / 10000 ** (-2 * i / d)


def decode_second_slowest_pair(row):
    """Pair d/2 - 2 without % 2π: at d = 16 its wavelength is 6,283 > 4321, but atan2 covers only half of it."""
    i = row.shape[-1] // 2 - 2
    d = row.shape[-1]
    return math.atan2(row[2 * i].item(), row[2 * i + 1].item()) / 10000 ** (-2 * i / d)


def decode_second_slowest_pair_wrapped(row):
    """The same pair with % 2π: right up to 6,283 at d = 16, so it passes every position <= 5000."""
    i = row.shape[-1] // 2 - 2
    d = row.shape[-1]
    return round((math.atan2(row[2 * i].item(), row[2 * i + 1].item()) % (2 * math.pi)) / 10000 ** (-2 * i / d))


def decode_wrong_exponent(row):
    d = row.shape[-1]
    return math.atan2(row[-2].item(), row[-1].item()) / 10000 ** (-(d - 2) / 2 / d)


def decode_wrong_exponent_rounded(row):
    """The slowest pair with ω = 10000^(−(d/2 − 1)/d), rounded: 0 at p = 3, so "k times p" cannot see it."""
    return round(decode_wrong_exponent(row))


def decode_by_asin(row):
    """The sin component alone: asin reads [−π/2, π/2] only (p = 5000 at d = 16 is past π/2)."""
    return round(math.asin(row[-2].item()) / frequencies(row.shape[-1])[-1].item())


def decode_acos(row):
    """The cos component alone: right here, since every angle up to p = 5000 is below π."""
    return round(math.acos(row[-1].item()) / frequencies(row.shape[-1])[-1].item())


def decode_double(row):
    return 2 * decode_ok(row)


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (decode_pair0, "쌍 0의 각도만"),
        (decode_swapped, "인자 순서"),
        (decode_middle_pair, "쌍 3의 각도"),
        (decode_middle_pair, "한 바퀴 이상"),
        (decode_second_slowest_pair, "반 바퀴(파장의 절반, 3,142 위치)"),
        (decode_wrong_exponent, "맞게 골랐지만 ω를 10000^(−31/64)로"),
        (decode_wrong_exponent_rounded, "맞게 골랐지만 ω를 10000^(−31/64)로"),
        (decode_double, "배입니다"),
        (decode_by_asin, "asin으로"),
        (lambda row: torch.zeros(2), "숫자 하나"),
        (lambda row: 17, "기대값"),
    ],
)
def test_exercise_10_1_wrong_answers(fn, fragment):
    result = check("10-1", fn)
    assert not result and fragment in result.message, result.message


def test_exercise_10_1_right_answer():
    assert check("10-1", decode_ok).passed
    assert check("10-1", decode_second_slowest_pair_wrapped).passed  # % 2π uses the whole wavelength
    assert check("10-1", decode_acos).passed


def test_exercise_10_1_rounded_raw_pair0_angle_is_named_and_wavelengths_keep_a_decimal():
    """round(atan2) of pair 0 is 0 at p = 6 (angle 6 − 2π); the message must not call 2π "6"."""
    result = check("10-1", lambda row: round(math.atan2(row[0].item(), row[1].item())))
    assert not result and "쌍 0의 각도만" in result.message, result.message
    from helpers.exercises.ex10 import _positions

    assert _positions(2 * math.pi) == "6.3" and _positions(2 * math.pi * 10000 ** (14 / 16)) == "19,869"


def rope_ok(x, positions):
    return reference_rope(x, positions)


def _rope_no_head_axis(x, positions):
    """The common slip: angles (B, T, d/2) without the head axis, which cannot broadcast against (B, h, T, d/2)."""
    d = x.shape[-1]
    angle = positions.to(torch.float64)[:, :, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), -1).flatten(-2)


def _rope_cat_halves(x, positions):
    """Right angles and rotation, but the rotated components concatenated instead of interleaved."""
    d = x.shape[-1]
    angle = positions.to(torch.float64)[:, None, :, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.cat((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), -1)


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (lambda x, p: reference_rope(x, -p), "방향이 반대"),
        (lambda x, p: _rope_half(x, p), "rotate_half"),
        (lambda x, p: reference_rope(x, torch.arange(x.shape[2]).expand(x.shape[0], -1)), "왼쪽 패딩"),
        (lambda x, p: reference_rope(x, p[:1].expand(x.shape[0], -1)), "첫 문장의 위치"),
        (lambda x, p: reference_rope(x, p) * 1.1, "크기(노름)가 변했"),
        (lambda x, p: x[0], "모양"),
        (lambda x, p: apply_rope(x, p), "오류"),
        (_rope_no_head_axis, "헤드 축을 맞추세요"),
        (lambda x, p: x.clone(), "그대로 돌려줬습니다"),
        (_rope_cat_halves, "torch.cat으로 이어 붙였습니다"),
    ],
)
def test_exercise_10_2_wrong_answers(fn, fragment):
    result = check("10-2", fn)
    assert not result and fragment in result.message, result.message


def test_exercise_10_2_rotate_half_hint_fires_for_a_neox_style_answer():
    """A learner who copies the Hugging Face / GPT-NeoX code gets the convention hint, not a generic 'values differ'."""

    def neox(x, positions):
        d = x.shape[-1]
        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        freqs = positions.double()[..., None] * inv_freq  # (B, T, d/2)
        emb = torch.cat((freqs, freqs), dim=-1)[:, None]  # (B, 1, T, d)
        return x * emb.cos() + rotate_half(x) * emb.sin()

    result = check("10-2", neox)
    assert not result and "앞 절반과 뒤 절반" in result.message


def test_exercise_10_2_one_frequency_and_right_answer():
    def one_freq(x, positions):
        a = positions.double()[:, None, :, None]
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()), -1).flatten(-2)

    result = check("10-2", one_freq)
    assert not result and "같은 각도 p" in result.message

    def exponent_slip(x, positions):
        d = x.shape[-1]
        omega = 10000 ** (-torch.arange(d // 2, dtype=torch.float64) / d)  # 10000^(-i/d): should be -2i/d
        a = positions.double()[:, None, :, None] * omega
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()), -1).flatten(-2)

    result = check("10-2", exponent_slip)
    assert not result and "10000^(−i/d)" in result.message
    assert check("10-2", rope_ok).passed
