"""Checkers for notebook 14 (FlashAttention을 GPU 커널로). None of them needs Triton: they run where
notebook 14 skips its kernel cells (macOS, Windows)."""

from __future__ import annotations

import ast
import inspect
import math
import numbers

import numpy as np
import torch
import torch.nn.functional as F

from . import LOOP_WORDS, Wrong, answer_tensor, call_learner, called_names, exercise, forbid_calls, source_tree


def _forward_blocks(n: int, block_m: int, block_n: int) -> int:
    """The causal forward kernel's loops (6절's tile map), counted: program i visits range(0, min((i + 1)·B_M, N), B_N)."""
    return sum(len(range(0, min((i + 1) * block_m, n), block_n)) for i in range(math.ceil(n / block_m)))


HIDDEN_LOOPS = {"range", "map", "arange", "sum", "reduce", "cumsum", "tril", "tril_indices", "count_nonzero"}


def _loops(fn, depth: int = 0) -> list[str]:
    """The loops in the learner's function, in words: loop statements, comprehensions, calls that loop in
    disguise (range, sum, tril().count_nonzero() ...), recursion, and the same in the learner's own helpers
    it calls (one level down). Empty when its source cannot be read."""
    _, tree = source_tree(fn)
    if tree is None:
        return []
    found = {LOOP_WORDS[type(node).__name__] for node in ast.walk(tree) if type(node).__name__ in LOOP_WORDS}
    calls = called_names(fn) or set()
    found |= {f"{name} 호출" for name in calls & HIDDEN_LOOPS}
    if getattr(fn, "__name__", None) in calls:
        found.add("자기 자신을 부르는 재귀")
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    if imported & {"itertools", "functools"}:
        found.add("itertools·functools")
    scope = getattr(fn, "__globals__", {})
    for name in calls if depth == 0 else ():
        helper = scope.get(name)
        if helper is not fn and inspect.isfunction(helper) and helper.__module__ in ("__main__", fn.__module__):
            found |= {f"{name} 안의 {word}" for word in _loops(helper, depth + 1)}
    return sorted(found)


def _names_tile_map(fn) -> bool:
    """The notebook's own tile_map (module __main__, also where Triton is missing), by any name."""
    scope, code = getattr(fn, "__globals__", {}), getattr(fn, "__code__", None)
    stack = [code] if code else []
    while stack:
        current = stack.pop()
        stack += [c for c in current.co_consts if inspect.iscode(c)]
        if "tile_map" in current.co_consts or "tile_map_view" in current.co_consts:
            return True  # globals()["tile_map"]
        for name in current.co_names:
            if getattr(scope.get(name), "__name__", None) in ("tile_map", "tile_map_view"):
                return True
    return False


def _as_float(got, call: str = "causal_blocks(...)") -> float:
    """A number the learner returned (int, float, NumPy scalar, one-element tensor or array), as a float."""
    single = (isinstance(got, torch.Tensor) and got.numel() == 1) or (isinstance(got, np.ndarray) and got.size == 1)
    if isinstance(got, bool | np.bool_) or not (isinstance(got, numbers.Real) or single):
        raise Wrong(f"{call}의 결과는 숫자 하나(블록 수)여야 합니다; 받은 것은 {type(got).__name__}입니다.")
    return float(got.reshape(())) if single else float(got)


def _wrong_formulas() -> dict:
    def t(n, bm):
        return n // bm

    return {
        "dense": lambda n, bm, bn: t(n, bm) * n // bn,
        "half": lambda n, bm, bn: t(n, bm) * (n // bn) / 2,
        "no_r": lambda n, bm, bn: t(n, bm) * (t(n, bm) + 1) // 2,
        "no_diagonal": lambda n, bm, bn: (bm // bn) * t(n, bm) * (t(n, bm) - 1) // 2,
        "pairs": lambda n, bm, bn: n * (n + 1) // 2,
        "blocks_only": lambda n, bm, bn: (n // bn) * (n // bn + 1) // 2,
    }


HINTS_14_1 = [
    ("dense", "비인과의 수(모든 타일이 모든 키 블록을 방문)입니다. 인과에서는 대각선에서 멈춥니다"),
    ("half", "전체의 절반은 지름길입니다. 대각선에 걸친 블록은 통째로 방문하므로 절반보다 많습니다"),
    ("no_r", "타일 i가 방문하는 것은 키 블록 i + 1개가 아니라 r(i + 1)개입니다(B_M = r·B_N)"),
    ("no_diagonal", "대각선에 걸친 블록을 빼먹었습니다. 타일 i는 대각선 블록까지 r(i + 1)개를 방문합니다"),
    ("pairs", "점수 쌍(j ≤ i)의 수를 셌습니다. 세는 것은 방문하는 키 블록 수입니다"),
    ("blocks_only", "키 블록 크기 B_N으로 N×N을 정사각형 블록으로 나눈 수입니다. 쿼리 타일은 B_M = r·B_N행입니다"),
]


@exercise("14-1")
def _causal_blocks(fn):
    why = "6절의 tile_map을 부르지 말고, 반복 범위에서 닫힌 식을 유도하세요."
    forbid_calls(fn, {"tile_map", "tile_map_view"}, why)
    if _names_tile_map(fn):
        raise Wrong(f"tile_map을 불렀습니다. {why}")
    loops = _loops(fn)
    if loops:
        raise Wrong(
            f"반복이 있습니다({', '.join(loops)}). 타일 i가 방문하는 블록 수를 더한 합을 "
            "반복 없이 닫힌 식으로 쓰세요 (1 + 2 + … + T = T(T + 1)/2)."
        )
    cases = [(1024, 128, 64), (512, 64, 32), (4096, 128, 64), (256, 64, 64), (1536, 128, 32), (64, 64, 16)]
    for n, bm, bn in cases:
        call = f"causal_blocks({n}, {bm}, {bn})"
        value = _as_float(call_learner(fn, n, bm, bn, what=call), call)
        want = _forward_blocks(n, bm, bn)
        if value == want:
            continue
        # the hint whose formula the answer follows on every case (one case can fit two formulas)
        answers = [_as_float(call_learner(fn, *c, what=f"causal_blocks{c}")) for c in cases]
        formulas = _wrong_formulas()
        for name, message in HINTS_14_1:
            if all(a == formulas[name](*c) for a, c in zip(answers, cases)):
                raise Wrong(f"{call} = {value:g}: {message}. 커널의 반복을 세면 {want}개입니다.")
        raise Wrong(
            f"{call} = {value:g}, 커널의 반복을 세면 {want}개입니다. T = N/B_M개의 타일 중 타일 i는 "
            "키 블록 몇 개를 방문할까요? 그 합을 닫힌 식으로 쓰세요."
        )
    return (
        "모든 경우에 커널의 반복 수와 같습니다: r·T(T + 1)/2 (T = N/B_M, r = B_M/B_N). 비인과 r·T²의 "
        "(T + 1)/(2T)이므로 T가 클수록 절반에 다가갑니다. 같은 B_M·B_N을 쓴다면 역전파의 dK·dV 커널도 정확히 "
        "같은 (타일, 블록) 쌍을 방문합니다: 키 블록 j는 대각선을 품은 타일부터 끝까지 돕니다."
    )


def _weights(n: int, causal: bool, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    s = torch.randn(n, n, generator=gen, dtype=torch.float64) * 3
    if causal:
        s_masked = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    else:
        s_masked = s
    lse = torch.logsumexp(s_masked, dim=-1)  # (N,)
    return s, lse, torch.softmax(s_masked, dim=-1)


@exercise("14-2")
def _recompute_weights(fn):
    forbid_calls(
        fn,
        {"softmax", "log_softmax", "logsumexp", "scaled_dot_product_attention"},
        "저장한 L만으로 가중치를 만드는 연습입니다: exp(s − L) 하나면 됩니다.",
    )
    gen = torch.Generator().manual_seed(14)
    for n, causal in ((5, False), (7, True), (1, True), (12, False), (12, True)):
        s, lse, want = _weights(n, causal, gen)
        call = f"recompute_weights(s, lse, causal={causal}) (N = {n})"
        got = call_learner(fn, s.clone(), lse.clone(), causal, what=call)
        if got is None:
            raise Wrong(f"{call}: None을 돌려줍니다. `...` 자리를 채워 (N, N) 가중치 행렬을 돌려주세요.")
        got = torch.as_tensor(got) if isinstance(got, torch.Tensor) else answer_tensor(got, call)
        if not got.is_floating_point():
            got = got.double()
        if got.shape != want.shape:
            raise Wrong(f"{call}의 모양이 {tuple(got.shape)}입니다. 필요한 모양: (N, N) = {tuple(want.shape)}.")
        if got.dtype != torch.float64 and torch.allclose(got.double(), want, rtol=1e-5, atol=1e-7):
            raise Wrong(f"{call}의 결과가 {got.dtype}입니다. 입력처럼 float64로 계산해 돌려주세요.")
        got = got.double()
        if torch.allclose(got, want, rtol=1e-9, atol=1e-12):
            shifted = answer_tensor(call_learner(fn, s.clone(), lse.clone() + 1.0, causal, what=call), call).double()
            if not torch.allclose(shifted, want / math.e, rtol=1e-9, atol=1e-12):
                raise Wrong(
                    f"{call}: lse를 1만큼 키웠는데 결과가 e배 작아지지 않습니다. 행을 직접 합해 나누지 말고, "
                    "저장된 L만으로 exp(s − L)을 계산하세요 (역전파는 행 전체를 한 번에 볼 수 없습니다)."
                )
            continue
        if torch.allclose(got, torch.exp(s - lse[None, :]), rtol=1e-9) and n > 1:
            raise Wrong(f"{call}: lse를 열마다 뺐습니다. L은 행(쿼리)마다 하나이니 lse[:, None]으로 행마다 빼세요.")
        if torch.allclose(got, torch.exp2(s - lse[:, None]), rtol=1e-9) or torch.allclose(
            got, torch.exp2(s - lse[:, None] * math.log2(math.e)), rtol=1e-9
        ):
            raise Wrong(
                f"{call}: exp2를 썼습니다. s와 L은 자연로그 단위이니 exp를 쓰세요 (커널은 둘 다 log2 단위로 바꿔 exp2를 씁니다)."
            )
        if causal and torch.allclose(got, torch.exp(s - lse[:, None]), rtol=1e-9):
            raise Wrong(f"{call}: 가려진 자리(j > i)가 0이 아닙니다. 인과이면 대각선 위를 0으로 두세요.")
        rows = got.sum(dim=-1)
        if causal and torch.allclose(got, want.tril(-1), atol=1e-12):
            raise Wrong(f"{call}: 대각선(j = i)까지 가렸습니다. 가릴 곳은 j > i, 곧 triu(1)입니다.")
        sums = (
            ""
            if torch.allclose(rows, torch.ones_like(rows))
            else f" (행의 합 {[round(float(r), 4) for r in rows[:3]]} …, 1이어야 합니다)"
        )
        raise Wrong(
            f"{call}: softmax와 최대 {float((got - want).abs().max()):.3g} 다릅니다{sums}. P = exp(s − L)을 행마다 계산하세요."
        )
    return "exp(s − L)이 소프트맥스와 같습니다 (인과 포함, 상대 차이 < 1e-9). 역전파는 이렇게 N개짜리 L만으로 P를 타일마다 다시 만듭니다."


def _reference_tf32(x: torch.Tensor) -> torch.Tensor:
    bits = x.view(torch.int32)
    return ((bits + 0xFFF + ((bits >> 13) & 1)) & ~0x1FFF).view(torch.float32)


def _tf32_inputs() -> torch.Tensor:
    gen = torch.Generator().manual_seed(32)
    normal = torch.randn(200, generator=gen)
    ties = []
    for kept_last in (0, 1):  # exactly half way: the lower 13 bits are 0x1000; ties go to the even side
        bits = torch.tensor([0x3F800000 | (kept_last << 13) | 0x1000], dtype=torch.int32)
        ties.append(bits.view(torch.float32))
    special = torch.tensor([0.0, -0.0, 1.0, -2.5, 1e6, -3e7, 1.9999999, 3.4e38, 1e-30, math.inf])
    return torch.cat([normal, *ties, special])


@exercise("14-3")
def _to_tf32(fn):
    x = _tf32_inputs()
    want = _reference_tf32(x.clone())
    got = call_learner(fn, x.clone(), what="to_tf32(x)")
    if got is None:
        raise Wrong("to_tf32(x)가 None을 돌려줍니다. `...` 자리를 채워 반올림한 float32 텐서를 돌려주세요.")
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"to_tf32(x)는 torch.Tensor를 돌려줘야 합니다; 받은 것은 {type(got).__name__}입니다.")
    if got.dtype != torch.float32 or got.shape != x.shape:
        raise Wrong(
            f"to_tf32(x)의 dtype·모양이 {got.dtype}, {tuple(got.shape)}입니다. float32, {tuple(x.shape)} 그대로여야 "
            "합니다 (TF32는 float32 안에 담긴 값입니다)."
        )
    if torch.equal(got.view(torch.int32), want.view(torch.int32)):
        q, k, v = torch.randn(3, 2, 4, 128, 64, generator=torch.Generator().manual_seed(3)).unbind(0)
        exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
        rounded = F.scaled_dot_product_attention(_reference_tf32(q).double(), _reference_tf32(k).double(), v.double())
        err = float((rounded - exact).abs().max())
        assert err > 1e-4  # far above the 2e-6 bound of section 3
        return (
            f"비트 단위로 같습니다 (가운데는 짝수 쪽, 지수로의 자리올림 포함). Q와 K를 TF32로 반올림하면(Triton의 tl.dot처럼 버리면 더 큽니다) 어텐션 출력이 최대 "
            f"{err:.1e} 변합니다: 3절의 float32 경계 2e-6의 수백 배라서, GPU에서 TF32로 곱하면 그 검사는 떨어집니다."
        )
    chopped = (x.view(torch.int32) & ~0x1FFF).view(torch.float32)
    half_up = ((x.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)
    if torch.equal(got.view(torch.int32), chopped.view(torch.int32)):
        raise Wrong(
            "아래 13비트를 지우기만 했습니다(버림). 가장 가까운 값으로 반올림해야 합니다: 지우기 전에 절반을 더하세요."
        )
    if torch.equal(got.view(torch.int32), half_up.view(torch.int32)):
        raise Wrong(
            "반올림은 맞지만 정확히 가운데(아래 13비트 = 0x1000)일 때 항상 올렸습니다. 남는 마지막 비트가 짝수가 되는 쪽으로 보내세요."
        )
    no_carry = ((x.view(torch.int32) & ~0x7FFFFF) | (want.view(torch.int32) & 0x7FFFFF)).view(torch.float32)
    carries = (want.view(torch.int32) >> 23) != (x.view(torch.int32) >> 23)
    if (
        carries.any()
        and torch.equal(got[~carries].view(torch.int32), want[~carries].view(torch.int32))
        and torch.equal(got[carries].view(torch.int32), no_carry[carries].view(torch.int32))
    ):
        raise Wrong(
            "반올림이 가수를 넘칠 때(예: 1.9999999 → 2.0) 지수로 자리올림하지 않았습니다. 비트 전체(부호·지수·가수)를 "
            "정수로 보고 더하면 자리올림이 저절로 됩니다."
        )
    as_half = x.half().float()
    if torch.equal(got[torch.isfinite(as_half)], as_half[torch.isfinite(as_half)]):
        raise Wrong(
            "float16을 거쳤습니다. 가수는 같은 10비트지만 float16의 지수는 5비트라 1e6·3.4e38은 inf, 1e-30은 0이 됩니다. "
            "TF32는 float32의 지수 8비트를 그대로 둡니다."
        )
    diff = got != want
    where = int(diff.nonzero()[0, 0]) if diff.any() else 0
    raise Wrong(
        f"{int(diff.sum())}개 값이 다릅니다. 예: x = {float(x[where])!r} → 받은 값 {float(got[where])!r}, "
        f"TF32 반올림 {float(want[where])!r}. 가수 23비트 중 위 10비트를 남기고 아래 13비트를 반올림으로 없애세요."
    )
