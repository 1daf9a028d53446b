"""Checkers for notebook 10 (위치 정보): reading a position back from PE(p), and RoPE on a padded batch."""

from __future__ import annotations

import math

import torch

from helpers.lessons.positional_encoding import apply_rope, frequencies, sinusoidal_encoding

from . import Wrong, answer_tensor, call_learner, exercise, particle

POSITIONS = (0, 3, 6, 7, 50, 999, 4321, 5000)


def _positions(x: float) -> str:
    """A wavelength in positions: one decimal under 100 (pair 0's 2π is 6.3, not 6), thousands separators above."""
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


def _angle_of_pair(pe_row: torch.Tensor, i: int) -> float:
    return math.atan2(pe_row[2 * i].item(), pe_row[2 * i + 1].item())  # (sin, cos) -> angle


def _matches(value: float, angle: float, omega: float) -> bool:
    """Whether value is angle / omega (raw or % 2π), rounded or not."""
    for x in (angle / omega, (angle % (2 * math.pi)) / omega):
        if abs(value - x) < 1e-6 or abs(value - round(x)) < 1e-9:
            return True
    return False


@exercise("10-1")
def _decode_position(fn):
    for d in (64, 16):
        table = sinusoidal_encoding(max(POSITIONS) + 1, d, dtype=torch.float64)  # (5001, d)
        omega = frequencies(d)
        for p in POSITIONS:
            row = table[p].clone()
            what = f"decode_position(PE({p}))  (d = {d})"
            got = answer_tensor(call_learner(fn, row, what=what), what)
            if got.numel() != 1:
                raise Wrong(
                    f"{what}의 결과가 숫자 하나가 아니라 모양 {tuple(got.shape)}입니다. 위치 p 하나를 돌려주세요."
                )
            value = got.reshape(()).item()
            if abs(value - p) < 1e-3:
                continue
            angle0 = _angle_of_pair(row, 0)
            if (
                abs(value - angle0 % (2 * math.pi)) < 1e-3
                or abs(value - angle0) < 1e-3
                or abs(value - round(angle0 % (2 * math.pi))) < 1e-9
                or abs(value - round(angle0)) < 1e-9
            ):
                raise Wrong(
                    f"{what} = {value:.3g}: 쌍 0의 각도만 썼습니다. 쌍 0은 2π ≈ 6.3 위치마다 한 바퀴 돌아서, "
                    f"{p}인 위치를 그보다 2π의 배수만큼 앞선 위치와 구별하지 못합니다. 파장이 5000보다 긴 쌍을 쓰세요."
                )
            swapped = math.atan2(row[-1].item(), row[-2].item()) / omega[-1].item()
            if abs(value - swapped) < 0.5 + 1e-6:
                raise Wrong(
                    f"{what} = {value:.4g}: atan2의 인자 순서가 바뀌었습니다. 차원 2i가 sin, 2i+1이 cos이므로 "
                    "atan2(pe_row[2i], pe_row[2i+1])입니다."
                )
            slow_angle = _angle_of_pair(row, d // 2 - 1)
            for exponent in ((d // 2 - 1) / d, 1.0):  # i/d instead of 2i/d, and i = d/2 (one pair too far)
                wrong = 10000.0**-exponent
                if _matches(value, slow_angle, wrong) and _matches(
                    answer_tensor(call_learner(fn, table[4321].clone(), what=what), what).reshape(-1)[0].item(),
                    _angle_of_pair(table[4321], d // 2 - 1),
                    wrong,
                ):
                    raise Wrong(
                        f"{what} = {value:.4g}: 가장 느린 쌍의 각도는 맞게 골랐지만 ω를 "
                        f"{particle(f'10000^(−{exponent * d:g}/{d})', '으로/로')} "
                        f"나눴습니다. 쌍 i의 ω_i = 10000^(−2i/d)이고 가장 느린 쌍은 i = d/2 − 1 = {d // 2 - 1}이므로 "
                        f"ω = 10000^(−{d - 2}/{d})입니다 (frequencies(d)[-1])."
                    )
            candidates = {}
            for i in range(d // 2):
                for wrapped, x in ((False, _angle_of_pair(row, i)), (True, _angle_of_pair(row, i) % (2 * math.pi))):
                    x /= omega[i].item()
                    gap = min(abs(value - x), abs(value - round(x)))
                    if gap < candidates.get(i, (math.inf,))[0]:
                        candidates[i] = (gap, wrapped)
            i = min(candidates, key=candidates.get)
            if candidates[i][0] < 1e-6:
                wavelength = 2 * math.pi / omega[i].item()
                if p >= wavelength:
                    raise Wrong(
                        f"{what} = {value:.4g}: 쌍 {i}의 각도를 썼습니다. 이 쌍의 파장은 {_positions(wavelength)} 위치라서, "
                        f"{p}인 위치에서는 이미 한 바퀴 이상 돌아 각도가 되풀이됩니다. 더 느린 쌍을 쓰세요."
                    )
                raise Wrong(
                    f"{what} = {value:.4g}: 쌍 {i}의 각도를 atan2 그대로 썼습니다. 이 쌍의 파장은 {_positions(wavelength)} 위치로 "
                    f"{p}보다 길지만, atan2는 (−π, π]의 각도를 돌려주므로 반 바퀴(파장의 절반, {_positions(wavelength / 2)} 위치)를 "
                    "넘으면 음수 각도가 나옵니다. 각도를 % (2π)로 [0, 2π)에 옮기거나, 파장의 절반이 5000보다 긴 더 느린 쌍을 쓰세요."
                )
            slowest = frequencies(d)[-1].item()
            if (
                abs(value - math.asin(row[-2].item()) / slowest) < 1e-6
                or abs(value - round(math.asin(row[-2].item()) / slowest)) < 1e-9
            ):
                raise Wrong(
                    f"{what} = {value:.4g}: sin 성분만 asin으로 되돌렸습니다. asin은 [−π/2, π/2]의 각도만 돌려주므로, "
                    f"각도가 π/2를 넘는 위치(여기서는 {p})에서는 다른 위치와 구별하지 못합니다. "
                    "sin과 cos을 함께 쓰는 atan2(sin, cos)를 쓰세요."
                )
            other = 999 if p != 999 else 50
            again = answer_tensor(call_learner(fn, table[other].clone(), what=what), what).reshape(-1)[0].item()
            if p > 0 and abs(value / p - again / other) < 1e-6 * abs(value / p):
                raise Wrong(
                    f"{what} = {value:.4g}: 답이 언제나 p의 {value / p:.4g}배입니다. 각도를 나누는 ω_i = 10000^(−2i/d)를 "
                    "확인하세요 (쌍 i의 지수는 2i/d이고, 마지막 쌍은 i = d/2 − 1)."
                )
            raise Wrong(f"{what} = {value:.6g}, 기대값 {p}. 가장 느린 쌍(마지막 두 차원)의 각도를 ω로 나눠 보세요.")
    return "가장 느린 쌍은 5000까지 한 바퀴도 돌지 않으므로 각도 하나로 위치가 정해집니다 (d = 64와 16에서 확인)."


def _rope_half(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """GPT-NeoX / Hugging Face rotate-half: cat(x1 cos − x2 sin, x1 sin + x2 cos), halves x1 | x2."""
    d = x.shape[-1]
    angle = positions.to(torch.float64)[:, None, :, None] * frequencies(d)  # (B, 1, T, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def reference_rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Adjacent-pair RoPE with one row of positions per sequence: x (B, h, T, d), positions (B, T)."""
    return torch.stack([apply_rope(x[b], positions[b]) for b in range(x.shape[0])])


@exercise("10-2")
def _check_rope(fn):
    gen = torch.Generator().manual_seed(10)
    x = torch.randn(2, 3, 5, 8, generator=gen, dtype=torch.float64)  # (B, h, T, d)
    positions = torch.tensor([[0, 0, 0, 1, 2], [0, 1, 2, 3, 4]])  # sentence 0 is left-padded by two
    what = "my_rope(x (2, 3, 5, 8), positions [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4]])"
    hint = "각도는 (B, 1, T, d/2)로 헤드 축을 맞추세요: positions[:, None, :, None] * ω."
    got = answer_tensor(call_learner(fn, x.clone(), positions.clone(), what=what, hint=hint), what)
    want = reference_rope(x, positions)
    if got.shape != want.shape:
        raise Wrong(f"{what}의 모양이 {tuple(got.shape)}입니다. x와 같은 모양 {tuple(x.shape)}이어야 합니다.")
    if torch.allclose(got, want, atol=1e-6):
        return "문장마다 자기 위치로, 헤드마다 같은 각도로 돌렸습니다. 왼쪽 패딩이 있어도 실제 토큰의 상대 위치가 보존됩니다."
    if torch.allclose(got, reference_rope(x, -positions), atol=1e-6):
        raise Wrong(
            "회전 방향이 반대입니다 (각도 −p·ω_i). (x_2i + i·x_2i+1)에 e^(+i·p·ω_i)를 곱하세요: "
            "(x1 cos − x2 sin, x1 sin + x2 cos)."
        )
    if torch.allclose(got, x, atol=1e-6):
        raise Wrong(
            "x를 그대로 돌려줬습니다: 아무 쌍도 돌지 않았습니다. 위치 p의 쌍 (2i, 2i+1)을 각도 p·ω_i만큼 돌리세요: "
            "(x1 cos − x2 sin, x1 sin + x2 cos), x1 = x[..., 0::2], x2 = x[..., 1::2]."
        )
    if torch.allclose(got, torch.cat((want[..., 0::2], want[..., 1::2]), dim=-1), atol=1e-6):
        raise Wrong(
            "돌린 두 성분을 torch.cat으로 이어 붙였습니다: 결과의 앞 절반이 모든 쌍의 첫 성분, 뒤 절반이 둘째 성분입니다. "
            "각도와 회전은 맞습니다. 쌍 i의 두 성분은 제자리(차원 2i, 2i+1)로 돌아가야 합니다: "
            "torch.stack((…, …), dim=-1).flatten(-2)로 번갈아 끼워 넣으세요."
        )
    if not torch.allclose(got.norm(dim=-1), x.norm(dim=-1), atol=1e-6):
        raise Wrong(
            "벡터의 크기(노름)가 변했습니다. 회전은 크기를 바꾸지 않습니다: 같은 쌍의 두 차원에 같은 각도의 cos, sin을 쓰세요."
        )
    if torch.allclose(got, _rope_half(x, positions), atol=1e-6):
        raise Wrong(
            "앞 절반과 뒤 절반을 짝지었습니다 (rotate_half: Hugging Face LLaMA, GPT-NeoX 방식). 이 문제는 인접한 "
            "차원 (2i, 2i+1)을 한 쌍으로 돌리는 방식입니다. 두 방식은 차원 순열만큼 다릅니다 (6절)."
        )
    arange = torch.arange(5).expand(2, 5)
    if torch.allclose(got, reference_rope(x, arange), atol=1e-6):
        raise Wrong(
            "모든 문장에 위치 0..T−1을 썼습니다. 첫 문장은 왼쪽 패딩 두 개 뒤에서 위치 0이 시작합니다: "
            "positions를 문장마다 따로 쓰세요."
        )
    if torch.allclose(got, reference_rope(x, positions[:1].expand(2, 5)), atol=1e-6):
        raise Wrong("두 문장 모두 첫 문장의 위치를 썼습니다. positions (B, T)의 문장 축을 x의 문장 축 B에 맞추세요.")
    d = x.shape[-1]
    angle = positions.to(torch.float64)[:, None, :, None].expand(2, 1, 5, d // 2)  # ω_i = 1 for every pair
    x1, x2 = x[..., 0::2], x[..., 1::2]
    one_freq = torch.stack((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), dim=-1).flatten(
        -2
    )
    if torch.allclose(got, one_freq, atol=1e-6):
        raise Wrong("모든 쌍을 같은 각도 p로 돌렸습니다. 쌍 i의 각도는 p·ω_i이고 ω_i = 10000^(−2i/d)입니다.")
    slip = 10000.0 ** (-torch.arange(d // 2, dtype=torch.float64) / d)  # ω_i = 10000^(−i/d): the exponent halved
    angle = positions.to(torch.float64)[:, None, :, None] * slip  # (B, 1, T, d/2)
    slow = torch.stack((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), dim=-1).flatten(-2)
    if torch.allclose(got, slow, atol=1e-6):
        raise Wrong(
            "각진동수를 ω_i = 10000^(−i/d)로 썼습니다. 쌍 i(차원 2i, 2i+1)의 각진동수는 10000^(−2i/d)입니다: "
            "지수의 분자는 쌍 번호 i가 아니라 차원 번호 2i입니다 (torch.arange(0, d, 2) / d). 모양과 축은 맞습니다."
        )
    bad = torch.nonzero((got - want).abs() > 1e-6)[0].tolist()
    raise Wrong(
        f"값이 다릅니다. 처음 다른 곳은 (문장, 헤드, 위치, 차원) = {tuple(bad)}: {got[tuple(bad)].item():.4f}, "
        f"기대값 {want[tuple(bad)].item():.4f}. 각도 (B, T, d/2)를 헤드 축에 맞게 (B, 1, T, d/2)로 바꿨는지 보세요."
    )
