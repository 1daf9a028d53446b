# %% [markdown]
# # 08. O(N²) 비용과 FlashAttention
#
# 어텐션은 모든 쿼리와 모든 키의 쌍을 비교하므로 시퀀스 길이 N이 2배가 되면 일이 4배가 됩니다. 계산 순서를 바꾸면 N×N 행렬을 만들지 않고도 **정확히 같은** 답을 얻을 수 있고, FlashAttention은 여기에 느린 메모리(HBM)의 읽기·쓰기 양을 줄이는 설계를 더해 메모리와 실제 시간을 함께 줄입니다.
#
# **학습 목표**
# - 어텐션의 시간과 메모리가 N에 따라 어떻게 자라는지 측정하고, 로그-로그 그래프의 직선에서 증가 지수(2 또는 1)를 읽는다.
# - N×N 점수 행렬의 메모리(헤드당 $N^2 \times$ 값 하나의 바이트 수)를 계산하고, 언제 8/16/80 GiB를 넘는지 안다.
# - 키 블록(block)마다 최댓값과 합을 고쳐 가는 온라인 소프트맥스(online softmax)로 청크 어텐션 `chunked_attention`을 직접 짜고, 결과가 반올림 수준까지 같고 PyTorch의 융합 커널 속도에 가깝게 나옴을 잰다.
# - FlashAttention이 빠른 이유(HBM/SRAM 계층, IO 복잡도, 커널 융합, 역전파의 재계산)를 설명하고, 파이썬 수준의 블록 반복문과 무엇이 다른지 말한다.
# - 윈도 어텐션(window attention)과 선형 어텐션(linear attention)이 비용을 줄이는 대신 무엇을 포기하는지 숫자로 말할 수 있다.
#
# **선수 지식**: 01번(소프트맥스와 최댓값 빼기), 04번(√d_k 스케일링), 07번(헤드와 배치 차원)
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분 (제목에 *(건너뛰기 가능)* 이 붙은 절은 발표 시간이 짧으면 건너뜁니다)
#
# 출처 목록: [원문 000–004와 인용한 논문](../SOURCES.md). 이 노트북의 "원문 바로잡기"는 모두 [원문 004](../SOURCES.md)의 복잡도 표와 코드를 바로잡습니다(07번의 ViT-Base·150 KB 바로잡기와 같은 원문).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 첫 문장은 "FlashAttention은 계산량을 줄이지 않는다. HBM 읽기·쓰기 양을 줄여서 빨라지고, N×N 행렬을 만들지 않으니 메모리도 N에 비례한다"입니다. 오늘 그래프에서 시간의 증가 지수는 N ≤ 8192에서 세 방법 모두 2 근처이고(단순 구현의 N = 16,384 한 점은 원인을 확인하지 못한 이상치로 따로 봄), 메모리의 지수만 2와 1로 갈린다는 점, 그리고 4절에서 직접 짠 청크 어텐션이 이 CPU에서 PyTorch 융합 커널 속도의 몇 %까지 오는지(6절의 표)를 끝까지 붙잡고 가세요. 슬라이더 데모는 7절, 온라인 소프트맥스 손 계산은 3절입니다. 발표 시간이 짧으면 건너뛰어도 되는 절: 5절의 "메모리는 어떻게 재나?", 6절의 "메모리: 계산과 측정" 표, 9절(GPU). 제목에 *(건너뛰기 가능)* 으로 표시했습니다.

# %% slideshow={"slide_type": "skip"}
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.data import DATA_DIR, load_json
from helpers.exercises import check

setup()
torch.set_num_threads(1)  # the same single thread as the stored benchmark

# %% [markdown]
# ## 1. 왜 N²인가
#
# 셀프 어텐션(self-attention)에서 쿼리(query) N개가 키(key) N개를 모두 봅니다. 스케일드 닷프로덕트 어텐션(scaled dot-product attention)을 식 그대로 계산하면 점수(score) 행렬 $S$와 가중치(weight) 행렬 $P$가 둘 다 $N \times N$입니다.
#
# $$S = \frac{QK^\top}{\sqrt{d}} \in \mathbb{R}^{N\times N}, \qquad P = \mathrm{softmax}(S), \qquad O = PV \in \mathbb{R}^{N\times d}$$
#
# - **시간**: $QK^\top$와 $PV$가 각각 $N^2 d$번의 곱셈-덧셈, 곧 $2N^2d$ FLOP이므로 합쳐 $4N^2d$ FLOP.
# - **메모리**: float32 한 값이 4바이트이므로 행렬 하나가 헤드 하나, 시퀀스 하나당 $4N^2$ 바이트. 배치 $B$, 헤드 $h$면 $4BhN^2$.
#
# 입력 $Q, K, V$와 출력 $O$는 $N \times d$뿐인데, 중간 결과만 $N \times N$입니다. 이 노트북은 [Vaswani 등 2017](../SOURCES.md)의 식 그대로인 이 구현을 **단순 구현**이라 부릅니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
GIB = 2**30


def attention_flops(n, d, heads=1, batch=1):
    """Multiply-adds of QKᵀ and PV, 2 FLOPs each: 4·B·h·N²·d."""
    return 4 * batch * heads * n * n * d


def score_matrix_bytes(n, heads=1, batch=1, bytes_per_value=4):
    """Bytes of the (B, h, N, N) score matrix (float32: 4 bytes a value)."""
    return batch * heads * n * n * bytes_per_value


def max_n_for_budget(budget_bytes, heads=1, batch=1, bytes_per_value=4):
    """Largest N whose (B, h, N, N) score matrix fits in budget_bytes."""
    return math.isqrt(int(budget_bytes // score_matrix_bytes(1, heads, batch, bytes_per_value)))


# %% slideshow={"slide_type": "subslide"}
for n in [100, 196, 1024, 16384]:
    print(f"N = {n:6,d}: N² = {n * n:13,d}, 행렬 하나 {score_matrix_bytes(n) / 2**20:9.3f} MiB, "
          f"FLOP(d=64) = {attention_flops(n, 64):.3g}")
vit = score_matrix_bytes(196, heads=12, batch=32)
long_vit = score_matrix_bytes(16384, heads=12, batch=32)
print(f"ViT-Base 설정 (B=32, h=12): N=196 → {vit / 2**20:.1f} MiB, N=16384 → {long_vit / GIB:.0f} GiB")
assert score_matrix_bytes(16384) == GIB and long_vit == 384 * GIB

# %% [markdown]
# > **원문 바로잡기**: [원문 004](../SOURCES.md)의 메모리 표(100 토큰 ~40 KB, 16,384 토큰 ~1 GB)는 **헤드 하나, 시퀀스 하나**의 행렬 하나만 센 값입니다(16,384에서 정확히 1 GiB). 원문이 예로 든 ViT-Base(배치 32, 헤드 12)로 계산하면 N = 196에서도 56.3 MiB, N = 16,384에서는 **384 GiB**입니다. 행렬 하나만 센 값이라는 점도 기억해 두세요: 실제 호출이 동시에 몇 개를 들고 있는지는 5절에서 예측하고 잽니다.

# %% [markdown]
# ## 2. FlashAttention의 주장: HBM 읽기·쓰기 양
#
# FlashAttention([Dao 등 2022](../SOURCES.md))의 제목은 "**Fast** and **Memory-Efficient** Exact Attention with **IO-Awareness**"입니다. 논문은 두 가지를 함께 주장합니다: N×N 행렬을 만들지 않아 메모리가 N에 비례하고, 느린 메모리를 덜 읽고 써서 **실제 시간**(wall-clock)도 줄어든다는 것입니다. 둘 다 같은 설계에서 나옵니다. GPU의 메모리는 두 층입니다.
#
# | | 크기 (A100, 논문의 숫자) | 대역폭 |
# |---|---|---|
# | HBM (GPU 본체 메모리, 느림) | 40–80 GB | 약 1.5–2.0 TB/s |
# | SRAM (연산 장치 옆, 빠름) | SM 108개 × 192 KB | 약 19 TB/s |
#
# %% [markdown] slideshow={"slide_type": "subslide"}
# 어텐션의 연산은 대부분 HBM에서 읽고 쓰는 시간에 묶입니다(memory-bound). 식 그대로 짜면 $QK^\top$ 커널이 $S$를 HBM에 쓰고, 소프트맥스 커널이 $S$를 읽어 $P$를 쓰고, 마지막 커널이 $P$를 다시 읽습니다. FlashAttention은 이 셋을 **하나의 커널로 합쳐서**(커널 융합, kernel fusion) 점수 블록이 SRAM 안에서만 살다 사라지게 합니다. 그러려면 소프트맥스를 블록 단위로 나눠 계산해야 하고, 그 도구가 3절의 온라인 소프트맥스입니다([Milakov & Gimelshein 2018](../SOURCES.md)는 정규화 합 $\ell$을 한 번에 훑으며 고치는 방법을 냈고, 가중합 $a$까지 같은 보정 계수로 들고 가는 것은 [Rabe & Staats 2021](../SOURCES.md)과 FlashAttention의 확장입니다). 점수 블록이 HBM에 가지 않으니 N×N 행렬이 생기지 않고, 메모리가 N에 비례하는 것도 같은 설계에서 나옵니다.
#
# %% [markdown] slideshow={"slide_type": "subslide"}
# HBM 읽기·쓰기 양(IO 복잡도)으로 쓰면, $M$이 SRAM 크기(값의 개수)일 때
#
# $$\text{표준 구현: } \Theta(Nd + N^2), \qquad \text{FlashAttention: } \Theta\!\left(\frac{N^2 d^2}{M}\right)$$
#
# 입니다. $d = 64$–$128$이고 $M$이 약 10만 개이면 $d^2/M$이 1보다 훨씬 작습니다. 논문의 반복 구조대로 HBM에서 읽고 쓰는 값의 개수를 세어 봅니다(상수까지 센 모형이지 측정이 아닙니다).

# %% tags=["save"]
def hbm_values(n, d, sram):
    """Values read or written in slow memory: the standard three kernels vs one fused kernel."""
    standard = 2 * n * d + n * n + n * n + n * n + (n * n + n * d) + n * d  # QK→S, S→P, PV→O
    cols = math.ceil(sram / (4 * d))  # key/value block that fits in SRAM with its query tile
    fused = 2 * n * d + math.ceil(n / cols) * (3 * n * d + 4 * n)  # K, V once; Q, O, m, ℓ per key block
    return standard, fused


# %% slideshow={"slide_type": "subslide"}
sram = 192 * 1024 // 2  # one A100 SM: 192 KB of fp16 values
for d in (64, 128):
    standard, fused = hbm_values(4096, d, sram)
    print(f"N = 4096, d = {d:3d}: M/d² = {sram / d**2:4.1f}, HBM 값 개수 표준 {standard / 1e6:5.1f}M, "
          f"융합 {fused / 1e6:5.1f}M → {standard / fused:.1f}배 적음")
    assert standard > 1.5 * fused

# %% [markdown] slideshow={"slide_type": "subslide"}
# $d$가 클수록 SRAM에 들어가는 블록이 작아져 이득이 줄어듭니다($M/d^2$). 그래도 두 경우 모두 N×N 행렬을 HBM에 쓰고 읽는 표준 구현보다 적습니다.
#
# **역전파**(backward pass)에는 $P$가 필요합니다. FlashAttention은 $P$($N^2$개)를 저장하지 않고 출력 $O$와 행마다의 통계 $m_i, \ell_i$($N$개씩, 논문의 Algorithm 1)만 저장한 뒤, 역전파에서 $S = QK^\top$를 블록마다 **다시 계산**해 $P = e^{S - m}/\ell$을 복원합니다. FlashAttention-2([Dao 2024](../SOURCES.md))는 둘을 logsumexp $L_i = m_i + \log \ell_i$ 하나로 합쳐 $P = e^{S - L}$로 씁니다(FlashAttention-2의 주된 기여는 그 밖의 세 가지입니다: 행렬곱이 아닌 연산(지수, 재조정)의 FLOP 줄이기, 시퀀스 방향의 병렬화, 한 블록 안 워프(warp) 사이의 일 나누기. 6절의 `exp2` 단계가 첫째와 같은 방향의 손질입니다). FLOP은 늘지만 HBM 읽기·쓰기 양이 줄어 역전파도 더 빠릅니다. 3절에서 이 복원이 정확한지 확인합니다.
#
# **이 노트북의 파이썬 코드는 FlashAttention 커널이 아닙니다.** PyTorch 연산 하나하나가 별도의 커널이라 블록 반복문도 점수 블록을 매번 메모리에 쓰고 다시 읽습니다. 메모리 **사용량**은 줄지만 느린 메모리의 **읽기·쓰기 양**은 융합 커널 하나만큼은 줄지 않습니다(CPU에서는 작은 블록이 캐시에 남아 있어 그나마 싸게 다시 읽습니다). 이것은 [Rabe & Staats 2021](../SOURCES.md)에 더 가깝습니다: 키를 나눠 누적하면 쿼리 하나에는 $O(1)$, 셀프 어텐션 전체에는 $O(\log n)$의 추가 메모리면 된다는 것을 보였고, 실제 구현은 속도를 위해 $O(\sqrt{n})$를 씁니다. 진짜 융합 커널은 PyTorch 안에 있습니다. CPU에서 `F.scaled_dot_product_attention`(SDPA)이 어느 커널로 가는지 프로파일러로 확인합니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import contextlib
import itertools
import math
import os
import sys
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F


@contextlib.contextmanager
def quiet_stderr():
    """The profiler's C++ side prints start/stop lines on fd 2; keep them out of notebook outputs."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def peak_memory_bytes(fn, *args, **kwargs):
    """Peak tensor bytes the CPU allocator held during fn(*args): running sum of the profiler's memory events."""
    with quiet_stderr(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                                profile_memory=True) as prof:
        fn(*args, **kwargs)
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    return max(itertools.accumulate((e.nbytes() for e in events), initial=0))


def time_call(fn, *args, repeat=3):
    """Median of ``repeat`` wall-clock timings in seconds, after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def attention_method(name):
    """The attention variants compared in notebook 08 and scripts/benchmark_attention.py."""
    if name == "window":  # window and linear attention are defined in section 8
        return lambda q, k, v: window_attention(q, k, v, window=128)
    if name == "linear":
        return linear_attention
    return {"naive": naive_attention, "chunked": chunked_attention, "sdpa": F.scaled_dot_product_attention}[name]


METHOD_NAMES = ("naive", "chunked", "sdpa", "window", "linear")


def measure(method, n, d=64, repeat=3, seed=0, timing=True):
    """Time and allocator peak of one method on (1, 1, N, d) float32 inputs from a fixed seed."""
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 1, n, d, generator=gen) for _ in range(3))  # (B, h, N, d)
    fn = attention_method(method)
    with torch.no_grad():
        peak = peak_memory_bytes(fn, q, k, v)
        seconds = time_call(fn, q, k, v, repeat=repeat) if timing else None
    return {"method": method, "n": n, "d": d, "seconds": seconds, "peak_bytes": peak}


def dispatched_ops(fn, *args, pattern="scaled_dot_product"):
    """Names of the ops fn(*args) runs that contain pattern, from torch.profiler."""
    with quiet_stderr(), torch.profiler.profile() as prof:
        fn(*args)
    return sorted({e.key for e in prof.key_averages() if pattern in e.key})


# %%
sdpa_ops = dispatched_ops(F.scaled_dot_product_attention, *torch.randn(3, 1, 1, 256, 64).unbind(0))
print("SDPA가 부른 연산:", sdpa_ops)
assert "aten::_scaled_dot_product_flash_attention_for_cpu" in sdpa_ops

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 표의 두 대역폭(약 2 TB/s 대 19 TB/s)을 먼저 보여 주고 "계산은 빠른데 재료를 나르는 길이 좁다"로 요약하세요. CPU에도 같은 구조가 있습니다: 캐시(빠름, 작음)와 DRAM(느림, 큼). 4절의 쿼리 타일은 점수 블록을 캐시 크기로 맞추는 같은 생각입니다.

# %% [markdown]
# ## 3. 온라인 소프트맥스: 손으로 한 단계씩
#
# 쿼리 하나를 생각합니다. 키를 블록 $1, 2, \dots$로 나누고, 블록 $j$의 점수를 $s^{(j)}$라 합시다. 세 가지 상태를 들고 다닙니다: 지금까지의 최댓값 $m$, 합 $\ell = \sum e^{s - m}$, 나누기 전의 가중합 $a = \sum e^{s - m} v$ ($d$차원). 새 블록이 오면
#
# $$m_{\text{new}} = \max\!\big(m_{\text{old}},\ \max_i s^{(j)}_i\big), \qquad c = e^{\,m_{\text{old}} - m_{\text{new}}} \le 1$$
#
# $$\ell_{\text{new}} = c\,\ell_{\text{old}} + \sum_i e^{\,s^{(j)}_i - m_{\text{new}}}, \qquad a_{\text{new}} = c\,a_{\text{old}} + \sum_i e^{\,s^{(j)}_i - m_{\text{new}}}\, v_i$$
#
# 이고 마지막에 $O = a / \ell$입니다. 전에 더한 항은 옛 최댓값을 빼고 지수를 취했으므로 $e^{s - m_{\text{old}}} \cdot e^{m_{\text{old}} - m_{\text{new}}} = e^{s - m_{\text{new}}}$로 새 기준에 맞춥니다. 곱셈 하나로 정확히 바뀌므로 근사가 아니고, $e^{(\cdot)} \le 1$이라 넘침(overflow)도 없습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 쿼리 1개, 키 6개, 블록 크기 2, float64. 최댓값이 블록마다 바뀌도록 키를 점수 순으로 놓았습니다.

# %%
seed_everything(8)
q1 = torch.randn(1, 2, dtype=torch.float64)  # (1, d=2): one query
k6 = torch.randn(6, 2, dtype=torch.float64)  # (6, d): six keys
v6 = torch.randn(6, 2, dtype=torch.float64)  # (6, d_v=2)
scores = (q1 @ k6.T / math.sqrt(2)).squeeze(0) * 3  # (6,)
order = scores.argsort()  # keys in increasing score: the running max grows at every block
scores, v6 = scores[order], v6[order]

m, l, a = -math.inf, 0.0, torch.zeros(2, dtype=torch.float64)
for j in range(0, 6, 2):
    s, vb = scores[j : j + 2], v6[j : j + 2]
    m_new = max(m, s.max().item())
    c = math.exp(m - m_new)  # exp(-inf) = 0 on the first block
    p = torch.exp(s - m_new)
    l, a, m = c * l + p.sum().item(), c * a + p @ vb, m_new
    print(f"블록 {j // 2 + 1}: m = {m:7.4f}  c = {c:.4f}  ℓ = {l:.4f}  a/ℓ = {(a / l).numpy().round(4)}")

full = torch.softmax(scores, dim=-1) @ v6
print("한 번에 계산한 softmax(s)·V =", full.numpy().round(4))
torch.testing.assert_close(a / l, full, rtol=1e-14, atol=1e-14)
lse = m + math.log(l)  # L = m + log ℓ: one number per query instead of the whole row of P
torch.testing.assert_close(torch.exp(scores - lse), torch.softmax(scores, dim=-1), rtol=0, atol=1e-14)
print(f"L = m + log ℓ = {lse:.4f}: exp(s − L)가 softmax(s)와 같음 (차이 < 1e-14)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 블록 1 뒤의 $a/\ell$은 처음 두 키만 본 어텐션이고, 블록이 더해질수록 답에 다가가 마지막에 일치합니다(float64에서 차이 $10^{-14}$ 미만을 assert). 끝난 뒤의 $m$과 $\ell$만 있으면 가중치 행 전체를 $e^{s - L}$로 다시 만들 수 있습니다: 2절의 역전파가 $P$ 대신 이것을 저장하는 이유입니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 용어 셋을 그림 하나로 묶으세요: 세로축에 쿼리를 **타일**로, 가로축에 키를 **블록**으로 자른 격자를 그리고, 칸 하나가 한 번에 계산하는 점수 블록, 그 격자를 한 칸씩 훑는 방법 전체가 **청크 어텐션**입니다. 칠판에 점수 [1, 3 | 2, 5]를 두 블록으로 나눠 손으로 해 보세요. 블록 1 뒤 m=3, ℓ=e⁻²+1; 블록 2에서 m=5, c=e⁻²가 곱해집니다. "예전 합에 보정 계수를 곱한다"가 외울 전부입니다. 연습문제 08-2가 바로 이 합치기입니다.

# %% [markdown]
# ## 4. 청크 어텐션: `chunked_attention`
#
# 이제 모든 쿼리에 3절을 한꺼번에 적용합니다. 쿼리는 `QUERY_TILE`개씩 **타일**(tile)로, 키와 밸류는 `block_size`개씩 **블록**으로 나눕니다. 상태 $m, \ell$은 쿼리마다 하나씩 `(B, n, 1)`, 가중합은 `(B, n, d_v)`이고, 한 번에 존재하는 점수는 `(B, n, b)` 블록 하나뿐이라 N×N 행렬은 생기지 않습니다. 이 함수가 이 과정의 라이브러리 함수이고(`helpers.attention.chunked_attention`은 입력 검사만 더해 이것을 부릅니다), 6절의 벤치마크도 이 함수를 잽니다.
#
# %% [markdown] slideshow={"slide_type": "subslide"}
# 읽기 쉬운 3절의 식을 그대로 옮기되, 속도를 위해 네 가지를 했습니다. 각각이 얼마나 빨라지게 하는지는 6절에서 잰 값으로 봅니다.
#
# - **쿼리 타일**: 쿼리 전체 대신 512개씩 처리하면 점수 블록이 CPU 캐시에 남아 있는 동안 곧바로 다시 읽힙니다.
# - **제자리 연산**(in-place operation): `s.sub_(m).exp2_()`는 점수 블록 위에 덮어써 점수 크기의 새 버퍼를 만들지 않고, 점수 블록 버퍼 하나(`scratch`)를 모든 블록에 다시 씁니다. 자동 미분은 역전파에 쓸 값이 덮어써지면 안 되므로, 입력이 기울기를 요구하면(`grad`) 새 텐서를 만드는 연산으로 바꿉니다.
# - **`baddbmm_`**: $c \cdot a + PV$에서 행렬곱이 결과를 $c \cdot a$ 위에 바로 더합니다(곱 $PV$를 담을 새 텐서와 덧셈 한 번이 사라짐).
# - **`exp2`**: $e^x = 2^{x \log_2 e}$이므로 $\log_2 e/\sqrt{d}$를 $Q$에 **한 번** 곱해 두면 모든 지수를 더 빠른 `exp2`로 계산할 수 있습니다. $m$과 $\ell$은 밑이 2인 단위로 바뀔 뿐 $a/\ell$은 같습니다. FlashAttention 커널들도 같은 방법을 씁니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
QUERY_TILE = 512  # queries per tile: a (B, 512, 128) score block stays in the CPU cache


def chunked_attention(query, key, value, *, block_size=128, causal=False):  # (..., T, d) each
    """softmax(QKᵀ/√d)V, query tile by key block (online softmax); causal: keys j <= i."""
    (t_q, d), (t_k, d_v) = query.shape[-2:], value.shape[-2:]
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    scale = math.log2(math.e) / math.sqrt(d)  # e^x = 2^(x·log2 e): exponents become exp2
    q = (query * scale).expand(*lead, t_q, d).reshape(-1, t_q, d)  # (B, T_q, d), scaled once
    k_t = key.expand(*lead, t_k, d).reshape(-1, t_k, d).transpose(1, 2)  # (B, d, T_k)
    v = value.expand(*lead, t_k, d_v).reshape(-1, t_k, d_v)  # (B, T_k, d_v)
    grad = torch.is_grad_enabled() and any(x.requires_grad for x in (query, key, value))
    scratch = None if grad else q.new_empty(len(q), min(QUERY_TILE, t_q), block_size)
    pos, out = torch.arange(max(t_q, t_k), device=q.device), q.new_empty(len(q), t_q, d_v)
    for i in range(0, t_q, QUERY_TILE):
        q_i = q[:, i : i + QUERY_TILE]  # (B, n, d)
        n = q_i.shape[1]
        m = q.new_full((len(q), n, 1), -math.inf)  # (B, n, 1) running max
        l, acc = q.new_zeros(len(q), n, 1), q.new_zeros(len(q), n, d_v)  # sum, weighted sum
        for j in range(0, min(t_k, i + n) if causal else t_k, block_size):
            b = min(block_size, t_k - j)
            s = torch.bmm(q_i, k_t[:, :, j : j + b], out=None if grad else scratch[:, :n, :b])
            if causal and j + b > i + 1:  # the block crosses the diagonal
                s.masked_fill_(pos[j : j + b] > pos[i : i + n, None], -math.inf)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            c, m = torch.exp2(m - m_new), m_new  # c <= 1 rescales the old sums
            p = torch.exp2(s - m) if grad else s.sub_(m).exp2_()  # (B, n, b), in place
            l = (l * c).add_(p.sum(dim=-1, keepdim=True))
            acc = (acc * c).baddbmm_(p, v[:, j : j + b])  # c·acc + p @ v_j in one call
        out[:, i : i + n] = acc / l
    return out.reshape(*lead, t_q, d_v)  # (..., T_q, d_v)


# %% [markdown] slideshow={"slide_type": "subslide"}
# 기준(식 그대로 N×N을 만드는 구현)과 PyTorch의 `F.scaled_dot_product_attention`과 비교합니다. float64에서는 블록 크기, 인과 마스크, $T_q \ne T_k$와 무관하게 차이가 $10^{-12}$ 미만이어야 하고, float32에서는 반올림 수준($10^{-5}$ 미만)이어야 합니다. 정확한 자릿수는 CPU와 BLAS 커널마다 다르므로 경계만 확인해 출력합니다.

# %% tags=["save"]
def naive_attention(q, k, v):  # (..., N, d) each
    """softmax(QKᵀ/√d)V that builds the full (..., N, N) score and weight matrices."""
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)  # (..., N, N)
    return torch.softmax(scores, dim=-1) @ v  # (..., N, d_v)


# %% slideshow={"slide_type": "subslide"}
seed_everything(9)
q, k, v = torch.randn(3, 2, 3, 700, 16, dtype=torch.float64).unbind(0)  # (B, h, N, d) each: two query tiles
ref = naive_attention(q, k, v)
for block in (1, 7, 128, 1000):
    torch.testing.assert_close(chunked_attention(q, k, v, block_size=block), ref, rtol=0, atol=1e-12)
    for t_q in (700, 300):  # T_q = T_k and T_q < T_k
        causal = F.scaled_dot_product_attention(q[..., :t_q, :], k, v, is_causal=True)
        torch.testing.assert_close(chunked_attention(q[..., :t_q, :], k, v, block_size=block, causal=True),
                                   causal, rtol=0, atol=1e-12)
torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v), ref, rtol=0, atol=1e-12)
print("float64, 블록 1·7·128·1000: 기준 구현, SDPA(인과 마스크 포함, T_q ≠ T_k)와 최대 차이 < 1e-12")

q32, k32, v32 = (t.float() for t in (q, k, v))
assert (chunked_attention(q32, k32, v32).double() - ref).abs().max() < 1e-5
print("float32: float64 기준과 최대 차이 < 1e-5 (반올림 수준)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 메모리 공식도 세울 수 있습니다. `chunked_attention`이 동시에 들고 있는 것은 스케일한 $Q$와 출력 $O$($2Nd$), 점수 블록 버퍼(타일 행 $T$ × 블록 $b$), 누적기와 그 새 값($2Td$), 행마다의 벡터 몇 개($4T$), 그리고 인과 마스크에 쓰는 위치 번호 $N$개(8바이트씩)뿐입니다: 헤드당 $4(2Nd + Tb + 2Td + 4T)$ 바이트에 $8N$ 바이트, N에 비례합니다. 5절에서 측정값과 맞춰 봅니다.

# %% tags=["save"]
def chunked_extra_bytes(n, d, block_size=128, heads=1, batch=1, bytes_per_value=4):
    """Memory chunked_attention allocates: scaled Q and O, the score block, two accumulators, row vectors,
    and the N int64 positions of the causal mask."""
    tile = min(QUERY_TILE, n)
    return batch * heads * (2 * n * d + tile * block_size + 2 * tile * d + 4 * tile) * bytes_per_value + 8 * n


# %% [markdown]
# ## 5. 직접 재 보기: 작은 N의 메모리
#
# 세 구현을 비교합니다: **단순 구현**(`naive_attention`, N×N 행렬을 만든다), **청크 어텐션**(chunked attention, `chunked_attention`, 4절), **SDPA**(PyTorch의 융합 커널).
#
# %% [markdown] slideshow={"slide_type": "subslide"}
# **메모리는 어떻게 재나?** *(건너뛰기 가능)* 파이썬의 `tracemalloc`은 PyTorch 텐서 메모리를 보지 못합니다. 여기서는 `torch.profiler`(`profile_memory=True`)가 기록하는 텐서 할당·해제 이벤트를 시간 순으로 더해 호출 동안의 **최대 누적 바이트**를 구합니다(2절의 접힌 셀에 있는 `peak_memory_bytes`). 텐서 메모리만 세지만, 같은 입력이면 매번 같은 값이 나와서 assert할 수 있습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **연습문제 08-1** 아래 측정을 보기 전에 예측합니다. float32 입력 `(batch, heads, n, d)`에서 `naive_attention`이 호출 동안 늘리는 최대 메모리(바이트)를 돌려주는 `naive_peak_bytes(n, d, heads, batch)`를 완성하세요. 검사기가 실제로 재어 바이트 단위로 비교합니다. 힌트: 어떤 텐서들이 **동시에** 살아 있을까요?

# %%
def naive_peak_bytes(n, d, heads, batch):
    raise NotImplementedError

check("08-1", naive_peak_bytes)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def naive_peak_bytes(n, d, heads, batch):
    return 4 * batch * heads * (2 * n * n + n * d)  # S and P (N×N each) alive while O (N×d) is made

check("08-1", naive_peak_bytes)

# %%
live_ns = [256, 512, 1024, 2048]
methods = ["naive", "chunked", "sdpa"]
live = {(m, n): measure(m, n, 64, timing=False)["peak_bytes"] for n in live_ns for m in methods}
for n in live_ns:
    row = "  ".join(f"{m} {live[(m, n)] / 2**20:7.3f}" for m in methods)
    print(f"N = {n:5d}  최대 메모리(MiB): {row}   |  N×N 행렬 하나 {score_matrix_bytes(n) / 2**20:6.2f}")
smaller = {m: live[("naive", 2048)] / live[(m, 2048)] for m in ("chunked", "sdpa")}
print("N = 2048에서 단순 구현이 몇 배 더 쓰나:", {m: f"{r:.0f}배" for m, r in smaller.items()})

# %% slideshow={"slide_type": "skip"}
growth = {m: [live[(m, 2 * n)] / live[(m, n)] for n in live_ns[:-1]] for m in methods}
for n in live_ns:
    assert live[("naive", n)] == 2 * score_matrix_bytes(n) + n * 64 * 4  # scores + weights + one N×d
    assert abs(live[("chunked", n)] / chunked_extra_bytes(n, 64) - 1) < 0.01  # the formula of section 4
    assert live[("sdpa", n)] < score_matrix_bytes(n)
assert all(3.7 < g <= 4.0 for g in growth["naive"]) and all(g < 3.1 for m in ("chunked", "sdpa") for g in growth[m])
assert smaller["chunked"] > 10 and smaller["sdpa"] > 10

# %% [markdown] slideshow={"slide_type": "subslide"}
# 단순 구현의 최대 메모리는 정확히 $N\times N$ 행렬 **두 개**(점수와 소프트맥스 결과)에 $N \times d$ 하나를 더한 크기이고, N이 2배가 되면 4배에 가깝게 늘어납니다. 청크 어텐션은 4절의 공식과 1% 안에서 맞고, 청크와 SDPA 모두 N = 2048에서 10배 넘게 작습니다(위 접힌 셀에서 assert).
#
# 시간은 CPU와 기계가 바쁜 정도에 따라 달라지므로 아래 출력은 테스트에서 비교하지 않고, 여기서 결론도 끌어내지 않습니다. 노트북에 저장된 출력도 이 노트북을 마지막으로 실행한 기계의 값이라, 6절의 벤치마크를 잰 기계와 다를 수 있습니다(처리량이 6절에 적힌 행렬곱 최고 속도를 넘으면 더 빠른 기계입니다). 세 방법을 번갈아 세 번씩 재어 중앙값을 씁니다(바쁜 순간이 세 방법에 똑같이 걸리도록). 여러분의 기계에서 6절의 저장된 결과와 비교해 보세요.

# %% tags=["nbval-ignore-output"]
with torch.no_grad():
    for n in live_ns:
        q, k, v = torch.randn(3, 1, 1, n, 64).unbind(0)  # (B, h, N, d) each
        runs = {m: [] for m in methods}
        for _ in range(3):  # alternate the methods: a busy moment hits all of them
            for m in methods:
                runs[m].append(time_call(attention_method(m), q, k, v, repeat=1))
        print(f"N = {n:5d}  " + "  ".join(f"{m} {np.median(t) * 1e3:7.2f} ms" for m, t in runs.items()))

# %% [markdown]
# ## 6. 넓은 범위: 저장된 벤치마크
#
# 큰 N은 오래 걸리므로 `scripts/benchmark_attention.py`가 잰 결과를 불러옵니다(다시 재려면 `.venv/bin/python scripts/benchmark_attention.py`, 한 스레드, 몇 분). 어떤 기계에서 잰 것인지도 함께 저장돼 있습니다.

# %%
bench = load_json("benchmark_cpu.json")
records, machine = bench["records"], bench["machine"]
print(f"CPU: {machine['cpu_model']} (논리 코어 {machine['logical_cores']}개, torch 스레드 {machine['torch_threads']}개, "
      f"{machine['cpu_capability']}), torch {machine['torch_version']}, {machine['date']}")
print(f"float32 행렬곱 최고 속도(한 스레드): {bench['matmul_peak_gflops']:.1f} GFLOP/s")
ns_all = sorted({r["n"] for r in records})
by = {(r["method"], r["n"]): r for r in records}
print("N:", ns_all[0], "…", ns_all[-1], "| 단순 구현은", bench["config"]["max_n"]["naive"], "까지")

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
METHOD_LABELS = {"naive": "단순 구현 (N×N)", "chunked": "청크 (온라인 소프트맥스)", "sdpa": "PyTorch SDPA",
                 "window": "윈도 (w=128)", "linear": "선형 어텐션"}
METHOD_COLORS = {"naive": "tab:red", "chunked": "tab:blue", "sdpa": "tab:green",
                 "window": "tab:purple", "linear": "tab:orange"}


def loglog_slope(ns, ys):
    """Least-squares slope of log(y) against log(N): y ∝ N^slope."""
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(ys, float)), 1)[0])


def draw_scaling(records, quantity, ax, methods, fit_min_n=4096, fit_max_n=None):
    """Log-log plot of 'seconds' or 'peak_bytes' against N per method; returns the exponents fitted on
    fit_min_n <= N <= fit_max_n (every N from fit_min_n when fit_max_n is None)."""
    slopes = {}
    for method in methods:
        rows = sorted((r for r in records if r["method"] == method and r.get(quantity)), key=lambda r: r["n"])
        ns = np.array([r["n"] for r in rows], dtype=float)
        ys = np.array([r[quantity] for r in rows], dtype=float) * (1e3 if quantity == "seconds" else 1 / 2**20)
        fit = (ns >= fit_min_n) & (ns <= (fit_max_n or np.inf))
        slopes[method] = loglog_slope(ns[fit], ys[fit])
        ax.loglog(ns, ys, "o-", color=METHOD_COLORS[method], base=2,
                  label=f"{METHOD_LABELS[method]}: 지수 {slopes[method]:.2f}")
    ax.set_xlabel("시퀀스 길이 N")
    ax.set_ylabel("시간 (ms)" if quantity == "seconds" else "최대 메모리 (MiB)")
    ax.legend(fontsize=8)
    return slopes


# %% [markdown] slideshow={"slide_type": "subslide"}
# 로그-로그 그래프에서 $y \propto N^p$는 $\log y = p \log N + c$인 직선이고, N이 2배가 되면 $y$는 $2^p$배가 됩니다. 이 $p$를 **증가 지수**(growth exponent)라 부르겠습니다. 메모리는 N ≥ 4096의 점으로, 시간은 1024 ≤ N ≤ 8192의 점으로 직선을 맞춥니다. 시간에서 N = 16,384를 빼는 이유는 아래에서 봅니다.

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.9))
time_slopes = draw_scaling(records, "seconds", ax1, methods, fit_min_n=1024, fit_max_n=8192)
mem_slopes = draw_scaling(records, "peak_bytes", ax2, methods)
ax1.set_title("시간: 세 방법 모두 지수 ≈ 2 (1024 ≤ N ≤ 8192)")
ax2.set_title("최대 메모리: 단순 구현만 지수 ≈ 2")
fig.tight_layout()
plt.show()
print("시간 지수:", {m: round(s, 1) for m, s in time_slopes.items()},
      "| 메모리 지수:", {m: round(s, 1) for m, s in mem_slopes.items()})

# %% slideshow={"slide_type": "skip"}
last_doubling = {m: by[(m, 32768)]["peak_bytes"] / by[(m, 16384)]["peak_bytes"] for m in ["chunked", "sdpa"]}
assert abs(mem_slopes["naive"] - 2) < 0.1
assert all(0.7 < mem_slopes[m] < 1.1 and 1.7 < last_doubling[m] < 2.1 for m in ["chunked", "sdpa"])
assert all(abs(time_slopes[m] - 2) < 0.2 for m in methods)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 시간의 지수는 세 방법 모두 2 근처입니다: 청크 어텐션도 모든 쌍의 점수를 계산하므로 FLOP이 $N^2$에 비례하기 때문입니다. 메모리는 단순 구현만 $N^2$, 나머지는 $N$입니다(N과 무관한 타일 메모리가 섞여 지수가 1보다 조금 작습니다). 지수가 2라는 것은 처리량($4N^2d$ FLOP ÷ 시간)이 N과 상관없이 일정하다는 뜻입니다. 저장된 모든 N에서 처리량을 계산해 봅니다.

# %%
rates = {m: {n: attention_flops(n, 64) / by[(m, n)]["seconds"] / 1e9 for n in ns_all if (m, n) in by} for m in methods}
print("N:" + "".join(f"{n:>7}" for n in ns_all[:7]) + "   (GFLOP/s)")
for m in methods:
    print(f"{m:>7}" + "".join(f"{rates[m][n]:7.0f}" for n in ns_all[:7]))
flat = {m: [rates[m][n] for n in ns_all if 1024 <= n <= 8192] for m in methods}
assert all(max(r) / min(r) < 1.5 for r in flat.values())                 # 1024..8192: flat throughput
assert rates["naive"][16384] < 0.6 * rates["naive"][8192]                 # the one point that drops
assert all(rates[m][16384] > 0.75 * rates[m][8192] for m in ("chunked", "sdpa"))
assert bench["config"]["repeat_large_n"] == 2                             # N > 4096: two interleaved repeats
assert rates["naive"][256] > 1.5 * max(rates["naive"][n] for n in ns_all if 512 <= n <= 8192)  # the step: 256→512
big_ns = [n for n in ns_all if n >= 4096 and ("naive", n) in by]
with_outlier = loglog_slope(big_ns, [by[("naive", n)]["seconds"] for n in big_ns])
print(f"단순 구현의 시간 지수: 1024 ≤ N ≤ 8192에서 {time_slopes['naive']:.2f}, N = 16,384를 넣어 N ≥ 4096으로 맞추면 {with_outlier:.2f}")
assert with_outlier > time_slopes["naive"] + 0.3

# %% [markdown] slideshow={"slide_type": "subslide"}
# 세 방법 모두 N = 1024부터 8192까지 처리량이 거의 일정합니다(assert: 최대와 최소의 비 1.5 미만). 8192에서 행렬 하나가 256 MiB로 어떤 캐시보다 훨씬 큰데도 단순 구현의 처리량은 그대로입니다. 작은 N(256)에서 단순 구현이 빠른 것은 행렬이 아직 캐시(L2)에 들어가기 때문으로 보입니다(이 기계의 캐시 크기는 재지 않았습니다).
#
# 예외는 단순 구현의 **N = 16,384 한 점**입니다: 처리량이 8192의 절반 아래로 떨어집니다. 이 한 점을 넣어 직선을 맞추면 지수가 2보다 한참 커지지만(위 마지막 줄), 그 원인은 이 데이터로 확인되지 않습니다. N > 4096은 모두 두 번씩 재었고(`repeat_large_n`), 16,384만 처리량이 떨어집니다. 2 GiB를 새로 할당할 때의 페이지 폴트나 같은 기계를 쓰는 다른 작업의 메모리 압박이 후보입니다. 그래서 이 노트북은 시간 지수를 N ≤ 8192에서 읽고, 16,384는 원인을 모르는 이상치로 따로 둡니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 같은 FLOP, 다른 시간
#
# 세 방법의 FLOP은 같은데($4N^2d$) 시간은 같지 않습니다. 저장된 결과(이 기계에서 방법을 번갈아 잰 중앙값)에서 배수를 계산합니다.

# %%
ratio_ns = [n for n in ns_all if n >= 1024 and ("naive", n) in by]
vs_chunked = {n: by[("naive", n)]["seconds"] / by[("chunked", n)]["seconds"] for n in ratio_ns}
vs_sdpa = {n: by[("naive", n)]["seconds"] / by[("sdpa", n)]["seconds"] for n in ratio_ns}
doubling = {n: by[("naive", 2 * n)]["seconds"] / by[("naive", n)]["seconds"] for n in ratio_ns[:-1]}
print("단순 구현 시간 / 청크 시간:", {n: f"{r:.1f}" for n, r in vs_chunked.items()})
print("단순 구현 시간 / SDPA 시간:", {n: f"{r:.1f}" for n, r in vs_sdpa.items()})
print("N이 2배일 때 단순 구현의 시간 배율 (FLOP은 4배):", {f"{n}→{2 * n}": f"{r:.1f}" for n, r in doubling.items()})
steady = [n for n in ratio_ns if n <= 8192]
assert all(1.8 < vs_sdpa[n] < 2.6 for n in steady) and all(1.2 < vs_chunked[n] < 2.0 for n in steady)
assert all(3.5 < doubling[n] < 4.5 for n in steady if n < 8192) and doubling[8192] > 6   # 8192→16384: the outlier

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 기계에서 단순 구현은 N = 1024–8192에서 SDPA보다 꾸준히 약 2배, 청크 어텐션보다 1.3–1.9배 느렸습니다(위 assert). N이 2배가 될 때 시간은 FLOP처럼 4배 안팎이라, 뒤처지는 정도가 N과 함께 커지지는 않습니다(예외는 위의 16,384 한 점). 단순 구현은 N×N 점수 행렬과 가중치 행렬을 통째로 메모리에 쓰고 다시 읽는데, 행렬이 L2 캐시보다 커지면(N ≥ 512) 읽기·쓰기가 더 느린 계층(L3·DRAM)으로 밀려나기 때문으로 보입니다(캐시 크기를 재지 않아 이 데이터로 확인하지는 않았습니다): 그 일정한 몫이 약 2배의 차이입니다. 블록 단위로 계산하는 두 방법은 작은 점수 블록이 캐시에 남아 있는 동안 곧바로 다시 읽습니다. 2절의 IO 논리를 CPU의 캐시와 DRAM에서 작게 본 셈입니다.
#
# 다만 **몇 배인지, 어느 N에서 벌어지기 시작하는지는 법칙이 아닙니다.** 캐시 크기, 메모리 대역폭, 그리고 같은 기계를 쓰는 다른 작업에 따라 달라집니다. 5절의 실시간 측정처럼 N = 2048에서는 단순 구현이 청크 어텐션과 비슷하거나 더 빠를 수도 있습니다. GPU에서는 사정이 또 다릅니다: 커널이 끝나면 SRAM의 내용이 남지 않으므로, 파이썬 수준의 블록 반복문은 블록마다 HBM에 쓰고 읽습니다. 그래서 GPU에서 이득을 보려면 융합 커널이 필요합니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 메모리: 계산과 측정 *(건너뛰기 가능)*
#
# "프로세스"는 케이스마다 새 프로세스에서 운영체제가 본 최대 상주 메모리 증가량(VmHWM − VmRSS)입니다. 작은 N에서는 이미 확보된 메모리를 재사용해 0에 가깝게 나올 수 있어 큰 N에서만 의미가 있습니다.

# %%
print(f"{'N':>6} {'N×N 행렬':>9} | {'단순: 할당기':>11} {'프로세스':>8} | {'청크':>7} {'공식':>7} | {'SDPA':>6}  (MiB)")
for n in ns_all:
    nv = by.get(("naive", n))
    naive_cols = f"{nv['peak_bytes'] / 2**20:11.1f} {nv['process_peak_bytes'] / 2**20:8.1f}" if nv else f"{'-':>11} {'-':>8}"
    print(f"{n:6d} {score_matrix_bytes(n) / 2**20:9.1f} | {naive_cols} | {by[('chunked', n)]['peak_bytes'] / 2**20:7.2f} "
          f"{chunked_extra_bytes(n, 64) / 2**20:7.2f} | {by[('sdpa', n)]['peak_bytes'] / 2**20:6.2f}")
big = by[("naive", 16384)]
assert 2 * score_matrix_bytes(16384) <= big["peak_bytes"] < 2.1 * score_matrix_bytes(16384)
assert 1.8 * score_matrix_bytes(16384) < big["process_peak_bytes"] < 2.5 * score_matrix_bytes(16384)
assert abs(by[("chunked", 16384)]["peak_bytes"] / chunked_extra_bytes(16384, 64) - 1) < 0.01
assert by[("chunked", 16384)]["peak_bytes"] < 10 * 2**20

# %% [markdown] slideshow={"slide_type": "subslide"}
# N = 16,384에서 단순 구현은 1 GiB 행렬 두 개, 곧 2 GiB를 잡았고 운영체제가 본 증가량도 거의 같았습니다. 청크 어텐션은 같은 계산을 10 MiB도 안 되는 메모리로 끝냅니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 처리량: 직접 짠 청크 어텐션 대 SDPA
#
# 처리량(throughput)은 $4N^2d$ FLOP을 시간으로 나눈 값입니다. 4절의 `chunked_attention`을 PyTorch의 융합 커널(SDPA)과 비교합니다. 벤치마크는 헤드 8개, N = 8192, d = 64, float32, 한 스레드에서 두 함수를 **번갈아** 여러 번 재고 중앙값을 씁니다. 같은 기계를 다른 사람도 쓰고 있어서, 번갈아 재야 바쁜 순간이 두 함수에 똑같이 걸리고 비율이 흔들리지 않습니다.

# %%
head, abl = bench["headline"], bench["ablation"]
print(f"N = {head['n']}, 헤드 {head['heads']}, d = {head['d']}, 반복 {head['repeat']}회 중앙값: "
      f"청크 {head['gflops']['chunked']:.0f}, SDPA {head['gflops']['sdpa']:.0f} GFLOP/s "
      f"(행렬곱 최고 {bench['matmul_peak_gflops']:.0f}) → 청크/SDPA = {head['chunked_over_sdpa']:.0%}")
print(f"\n속도 기법을 하나씩 더할 때 (N = {abl['n']}, 헤드 {abl['heads']}, SDPA 처리량 대비):")
korean = {"key blocks only": "키 블록만", "+ query tiles": "+ 쿼리 타일", "+ in-place": "+ 제자리 연산"}
for step, ratio in abl["over_sdpa"].items():
    print(f"  {ratio:4.0%}  {korean.get(step, step)}")

# %% slideshow={"slide_type": "skip"}
steps = list(abl["over_sdpa"].values())
gains = dict(zip(list(abl["over_sdpa"])[1:], np.diff(steps)))   # what each technique adds
assert head["chunked_over_sdpa"] >= 0.8 and steps[-1] >= 0.8 and steps[-1] > steps[0] + 0.15
assert min(gains["+ query tiles"], gains["+ exp2 = chunked_attention"]) > max(gains["+ in-place"], gains["+ baddbmm_"])

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 기계에서 4절의 파이썬 반복문이 융합 커널 처리량의 80% 넘게 나옵니다(assert). 표를 위에서부터 읽으면 각 기법이 얻는 것이 보입니다. 모든 쿼리를 한꺼번에 처리하는 "키 블록만" 버전은 점수 블록이 `(8, 4096, 128)`, 16 MiB라 캐시에 들어가지 않습니다. 쿼리 타일(512개)로 블록을 2 MiB로 줄이면 블록이 캐시에 남은 채로 다시 읽혀, `exp2`와 함께 가장 크게 빨라집니다(두 단계의 차이는 공유 기계의 잡음 안이라 순위는 매기지 않습니다). 제자리 연산과 `baddbmm_`은 점수 크기의 새 버퍼와 곱 $PV$를 담을 텐서를 없애 조금씩 더하고, `exp2`가 남은 시간의 큰 몫이던 지수 계산을 줄입니다. 행렬곱 두 번은 어느 방법이든 같으므로, 남은 차이는 파이썬 반복과 별도 커널 사이의 읽기·쓰기입니다. 비율은 이 CPU와 이 PyTorch 버전의 값입니다. 헤드가 하나인 저장 기록(`chunked_over_sdpa_throughput`)처럼 행렬곱이 작으면 반복문의 고정 비용이 더 드러나 비율이 낮습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: [원문 004](../SOURCES.md)는 FlashAttention이 "$O(N^2)$이지만 2-4배 빠르다"고 적었습니다. 연산량이 $O(N^2)$로 그대로라는 것은 위 시간 지수와 맞습니다. "2–4배"는 FlashAttention-2 논문([Dao 2024](../SOURCES.md))이 앞선 FlashAttention을 요약한 말이고, FlashAttention 논문 자체가 GPU에서 잰 값은 과제마다 다릅니다: GPT-2 학습이 HuggingFace 구현보다 3배, BERT-large 학습이 MLPerf 기록보다 15%, Long Range Arena가 2.4배, 어텐션 연산만 최대 7.6배(논문 그림 1) 빨랐습니다. 빨라지는 이유는 HBM 읽기·쓰기 양이 줄기 때문이고(2절), 보장된 배수가 아니라 하드웨어와 과제에 달린 값입니다. 또 원문 004의 코드에 나오는 `F.scaled_dot_product_attention`은 "수학적으로" 같은 결과일 뿐, float32에서는 단순 구현과 반올림 오차만큼 다릅니다(아래).

# %%
seed_everything(0)
q, k, v = torch.randn(3, 1, 1, 2048, 64).unbind(0)  # (B, h, N, d) each, float32
ref64 = naive_attention(q.double(), k.double(), v.double())
for _name, out in [("단순 구현", naive_attention(q, k, v)), ("청크", chunked_attention(q, k, v)),
                  ("SDPA", F.scaled_dot_product_attention(q, k, v))]:
    assert (out.double() - ref64).abs().max() < 1e-5
print("float32의 세 구현 모두 float64 기준과 최대 차이 < 1e-5")
sdpa_vs_naive = (F.scaled_dot_product_attention(q, k, v) - naive_attention(q, k, v)).abs().max().item()
assert 0 < sdpa_vs_naive < 1e-5
print("SDPA와 단순 구현: 0이 아니지만 1e-5 미만 (float32 반올림 수준, 자릿수는 CPU마다 다름)")

# %% [markdown]
# ## 7. 행렬이 메모리에 들어가지 않는 지점
#
# 슬라이더로 N(로그 눈금), 헤드 수, 배치를 바꿔 보세요. 빨간 선은 float32 점수 행렬 $4BhN^2$ 바이트, 파란 선은 청크 어텐션의 작업 메모리, 점선은 8/16/80 GiB입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
MEMORY_GRID = np.unique(np.round(np.logspace(4, 24, 81, base=2)).astype(int))
BUDGETS_GIB = (8, 16, 80)


def memory_view(ax, d=64):
    """Build the memory-vs-N plot once on ax; return update(log2_n, heads, batch) that moves its artists."""
    matrix_line, = ax.loglog(MEMORY_GRID, MEMORY_GRID * 0.0 + 1, color="tab:red", base=2, label="N×N 점수 행렬 (float32)")
    chunk_line, = ax.loglog(MEMORY_GRID, MEMORY_GRID * 0.0 + 1, color="tab:blue", base=2, label="청크 어텐션 작업 메모리")
    dots, = ax.plot([], [], "ko", ms=5)
    here_line = ax.axvline(1, color="gray", lw=0.8, ls=":")
    labels = []
    for i, budget in enumerate(BUDGETS_GIB):
        ax.axhline(budget, color="gray", lw=0.8, ls="--")
        labels.append(ax.text(MEMORY_GRID[0], budget / 1.3 if i == 0 else budget * 1.3, "", fontsize=7,
                              color="dimgray", va="top" if i == 0 else "bottom"))
    ax.set(xlabel="시퀀스 길이 N", ylabel="메모리", xlim=(2**4, 2**24), ylim=(2**-21, 2**17))
    ax.set_xticks([2**k for k in (4, 8, 12, 16, 20, 24)], ["16", "256", "4,096", "65,536", "1M", "16M"])
    ax.set_yticks([2**-20, 2**-10, 1, 2**10], ["1 KiB", "1 MiB", "1 GiB", "1 TiB"])  # plain labels: fast redraw
    ax.minorticks_off()
    ax.legend(fontsize=8, loc="lower right")

    def update(log2_n, heads, batch):
        n = int(round(2**log2_n))
        matrix_line.set_ydata([score_matrix_bytes(int(m), heads, batch) / GIB for m in MEMORY_GRID])
        chunk_line.set_ydata([chunked_extra_bytes(int(m), d, heads=heads, batch=batch) / GIB for m in MEMORY_GRID])
        view = {"n": n, "matrix_bytes": score_matrix_bytes(n, heads, batch),
                "chunked_bytes": chunked_extra_bytes(n, d, heads=heads, batch=batch)}
        dots.set_data([n, n], [view["chunked_bytes"] / GIB, view["matrix_bytes"] / GIB])
        here_line.set_xdata([n, n])
        for text, budget in zip(labels, BUDGETS_GIB):
            text.set_text(f"{budget} GiB: N ≤ {max_n_for_budget(budget * GIB, heads, batch):,}")
        view["fits"] = {budget: view["matrix_bytes"] <= budget * GIB for budget in BUDGETS_GIB}
        ax.set_title(f"N = {n:,} (B={batch}, h={heads}): 점수 {view['matrix_bytes'] / 2**20:,.1f} MiB, "
                     f"청크 {view['chunked_bytes'] / 2**20:,.2f} MiB", fontsize=9)
        return view

    return update


def memory_explorer(d=64):
    """Sliders for log2 N, heads and batch over one memory_view figure (the site plays every combination
    of N = 2^8..2^20, h in 1/8/12/32 and B in 1/8/32/64)."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=80)
    controls = {"log2_n": widgets.FloatSlider(value=14, min=8, max=20, step=0.5, description="log₂ N"),
                "heads": widgets.IntSlider(value=1, min=1, max=32, description="헤드 h"),
                "batch": widgets.IntSlider(value=1, min=1, max=64, description="배치 B")}
    frames = {"log2_n": [float(k) for k in range(8, 21)], "heads": [1, 8, 12, 32], "batch": [1, 8, 32, 64]}
    return Explorer(fig, memory_view(ax, d), controls, frames=frames)


# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
memory_explorer()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 `memory_view`로 세 설정을 그립니다.

# %% slideshow={"slide_type": "subslide"}
settings = [(10, 1, 1), (14, 1, 1), (14, 12, 32)]
fig, axes = plt.subplots(1, 3, figsize=(13, 3.9))
views = [memory_view(ax)(log2_n, h, b) for (log2_n, h, b), ax in zip(settings, axes)]
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "subslide"}
for (_log2_n, h, b), view in zip(settings, views):
    print(f"N = {view['n']:6,d}, h = {h:2d}, B = {b:2d}: 점수 {view['matrix_bytes'] / 2**20:11,.1f} MiB, "
          f"청크 {view['chunked_bytes'] / 2**20:8.2f} MiB, 들어가는 예산: {[g for g, ok in view['fits'].items() if ok]}")
limits = {dtype: {g: max_n_for_budget(g * GIB, bytes_per_value=nbytes) for g in (8, 16, 80)}
          for dtype, nbytes in (("float32", 4), ("bf16", 2))}
print("헤드 하나, 시퀀스 하나의 점수 행렬이 들어가는 최대 N:", limits)
assert limits["float32"][80] == 146_542 and limits["bf16"][80] == 207_243
assert views[2]["fits"] == {8: False, 16: False, 80: False}

# %% [markdown] slideshow={"slide_type": "subslide"}
# 80 GiB GPU 하나로도 float32 점수 행렬은 헤드 하나, 시퀀스 하나에서 N = 146,542가 한계입니다. 값 하나가 2바이트인 bf16이면 $\sqrt{2}$배인 약 207,000입니다. 헤드와 배치를 곱하면 한계는 훨씬 낮아집니다. "긴 문맥 = 메모리 문제"의 출발점이고, 행렬을 만들지 않는 FlashAttention이 긴 문맥의 기본 도구가 된 이유입니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 log₂N = 14에 두고 헤드를 12, 배치를 32로 올려 보세요. 행렬 하나가 1 GiB였는데 384 GiB가 됩니다. float32 가정이라는 점, bf16이면 한계가 √2배라는 점을 짚으세요.

# %% [markdown]
# ## 8. 다른 길: 윈도 어텐션과 선형 어텐션
#
# FlashAttention은 답을 바꾸지 않습니다. **계산량** 자체를 줄이려면 답을 바꿔야 합니다.
#
# - **윈도 어텐션**: 쿼리 $i$가 $|i - j| \le w$인 키, 곧 양옆 $w$개씩 $2w+1$개만 봅니다($w$는 창의 **반폭**, 창이 쿼리를 따라 미끄러짐). Longformer([Beltagy 등 2020](../SOURCES.md))의 지역 어텐션이 이런 방식입니다. 점수를 매기는 쌍이 $N^2$에서 약 $N(2w+1)$로 줄어 시간은 $O(Nwd)$, 점수 메모리는 $O(Nw)$(아래 구현처럼 쿼리 블록 $b$개씩 하면 한 번에 $b(b+2w)$개)에 출력 $O(Nd)$입니다. 대신 창 밖으로 가는 가중치를 잃습니다. Swin([Liu 등 2021](../SOURCES.md))의 창 어텐션은 다릅니다: 이미지를 **겹치지 않는** $M \times M$ 창으로 나눠 창 안에서만 보고, 한 층 걸러 창을 창 크기의 절반($\lfloor M/2 \rfloor$ 토큰)만큼 밀어(shifted window) 이웃 창을 잇습니다. 창 가장자리의 토큰은 바로 옆 창의 이웃을 못 보고, 같은 창 안의 $M-1$칸 떨어진 토큰은 봅니다.
# - **선형 어텐션**([Katharopoulos 등 2020](../SOURCES.md)): $e^{q\cdot k}$ 대신 $\phi(q)\cdot\phi(k)$($\phi(x) = \mathrm{elu}(x) + 1$)를 쓰면 결합 법칙으로 $\phi(Q)\,\big(\phi(K)^\top V\big)$를 먼저 계산할 수 있어 시간 $O(Nd^2)$, 상태 $d\times d$. 대신 다른 어텐션이 됩니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def window_attention(q, k, v, window, block_size=128):  # (..., N, d) each, self-attention
    """Query i sees only keys j with |i − j| <= window; one query block at a time, O(N·window)."""
    n = q.shape[-2]
    out = q.new_empty(q.shape[:-1] + (v.shape[-1],))  # (..., N, d_v)
    pos = torch.arange(n)
    for q0 in range(0, n, block_size):
        q1 = min(q0 + block_size, n)
        k0, k1 = max(0, q0 - window), min(n, q1 + window)  # the only keys this block can see
        s = q[..., q0:q1, :] @ k[..., k0:k1, :].transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., b, keys)
        far = (pos[q0:q1, None] - pos[None, k0:k1]).abs() > window
        out[..., q0:q1, :] = torch.softmax(s.masked_fill(far, -math.inf), dim=-1) @ v[..., k0:k1, :]
    return out


# %% tags=["save"] slideshow={"slide_type": "subslide"}
def linear_attention(q, k, v):  # (..., N, d) each
    """φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1) with φ = elu + 1: O(N·d²), no N×N matrix."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # positive features
    kv = phi_k.transpose(-2, -1) @ v  # (..., d, d_v): the whole sequence in one d×d_v state
    return (phi_q @ kv) / (phi_q @ phi_k.sum(dim=-2).unsqueeze(-1))  # (..., N, d_v)


def linear_attention_weights(q, k):
    """The (..., N, N) weights linear attention uses implicitly: φ(q)·φ(k), rows normalised."""
    w = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)
    return w / w.sum(dim=-1, keepdim=True)


def window_weight_outside(q, k, window):
    """Per query, the share of full softmax weight on keys farther than window."""
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)  # (..., N, N)
    far = (torch.arange(q.shape[-2])[:, None] - torch.arange(k.shape[-2])[None, :]).abs() > window
    return (weights * far).sum(dim=-1)  # (..., N)


# %% slideshow={"slide_type": "subslide"}
n, w = 4096, 128
band = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs() <= w
print(f"N = {n}, w = {w}: 점수 쌍 {int(band.sum()):,} (전체의 {band.float().mean():.1%}) = N(2w+1) − w(w+1) = {n * (2 * w + 1) - w * (w + 1):,}")
assert int(band.sum()) == n * (2 * w + 1) - w * (w + 1)

seed_everything(6)
n_small, d = 512, 16
iid = torch.randn(n_small, d)  # no order structure
local = torch.empty(n_small, d)  # neighbours are similar: x_t = 0.98 x_(t-1) + noise
local[0] = torch.randn(d)
for t in range(1, n_small):
    local[t] = 0.98 * local[t - 1] + math.sqrt(1 - 0.98**2) * torch.randn(d)
lost = {}
for name, x in [("무작위 순서", iid), ("이웃이 비슷함", local)]:
    lost[name] = window_weight_outside(x, x, 16).mean().item()
    full = F.scaled_dot_product_attention(x, x, x)
    rel = ((window_attention(x, x, x, 16) - full).norm() / full.norm()).item()
    print(f"{name:8s}: w=16 창 밖 가중치 평균 {lost[name]:.0%}, 출력의 상대 차이 {rel:.0%}")
assert round(lost["무작위 순서"], 2) == 0.84 and round(lost["이웃이 비슷함"], 2) == 0.60

# %% [markdown] slideshow={"slide_type": "subslide"}
# 창 밖으로 가는 가중치의 몫은 데이터에 달려 있습니다. 순서 구조가 없는 입력에서는 w = 16 창이 가중치의 84%를 놓칩니다. 이웃끼리 비슷한 입력에서는 덜 놓치지만 그래도 60%로, 절반이 넘습니다. 멀리 떨어진 단어를 봐야 하는 문장("어제 밤에 배가 고파서 … 먹었다")에서는 이것이 곧 정보 손실입니다.

# %%
seed_everything(7)
q, k, v = torch.randn(3, 256, 16).unbind(0)  # (N, d) each
lin, soft = linear_attention(q, k, v), F.scaled_dot_product_attention(q, k, v)
w_lin, w_soft = linear_attention_weights(q, k), torch.softmax(q @ k.T / 4, dim=-1)
rank_lin = torch.linalg.matrix_rank(linear_attention_weights(q.double(), k.double())).item()  # float64: a clean rank
rank_soft = torch.linalg.matrix_rank(w_soft.double()).item()
print(f"선형 어텐션과 소프트맥스 어텐션 출력의 상대 차이: {((lin - soft).norm() / soft.norm()):.0%}")
print(f"가중치 행렬의 랭크: 선형 {rank_lin} (≤ d = 16), 소프트맥스 {rank_soft} (N = 256)")
print(f"가장 큰 가중치의 평균: 선형 {w_lin.amax(-1).mean():.3f}, 소프트맥스 {w_soft.amax(-1).mean():.3f}")
assert rank_lin <= 16 < rank_soft and w_lin.amax(-1).mean() < w_soft.amax(-1).mean() / 5

# %% [markdown] slideshow={"slide_type": "subslide"}
# 선형 어텐션의 가중치 행렬은 $\phi(Q)\phi(K)^\top$이라 랭크가 $d$를 넘을 수 없고, 한 키에 뾰족하게 몰리기 어렵습니다(가장 큰 가중치가 작음). 비용은 저장된 벤치마크에서 확인합니다.

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.9))
cheap = ["chunked", "window", "linear"]
t_slopes = draw_scaling(records, "seconds", ax1, cheap)
m_slopes = draw_scaling(records, "peak_bytes", ax2, cheap)
ax1.set_title("시간: 윈도·선형은 지수 ≈ 1 (N ≥ 4096에서 맞춤)")
ax2.set_title("최대 메모리: 셋 다 지수 1 이하 (N에 비례 + 고정 버퍼)")
fig.tight_layout()
plt.show()
assert abs(t_slopes["window"] - 1) < 0.3 and abs(t_slopes["linear"] - 1) < 0.3
assert all(0.6 < m_slopes[m] < 1.1 for m in cheap)  # N-proportional, plus a fixed block buffer

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: [원문 004](../SOURCES.md)의 표는 선형 어텐션을 $O(N \cdot d)$라고 적었습니다. $\phi(K)^\top V$가 $d\times d$ 행렬이라 토큰 하나마다 $d^2$번 곱하므로 시간은 $O(Nd^2)$입니다(위에서 N에 대한 지수 ≈ 1, 상수에 $d^2$). 윈도 어텐션의 $O(N \cdot W^2)$는 Swin처럼 $W$가 2차원 창의 한 변일 때의 표기입니다(창 하나에 $W^2$개 토큰). 이 노트북처럼 반폭 $w$로 쓰면 쿼리마다 키가 $2w+1$개라 시간이 $O(Nwd)$입니다.

# %% [markdown]
# ## 9. GPU에서는? *(건너뛰기 가능)*
#
# 이 노트북의 모든 측정은 CPU에서 했습니다. GPU에 대해서는 논문이 잰 값(6절의 원문 바로잡기)을 인용할 뿐 이 노트북의 숫자로 주장하지 않습니다. **GPU 커널은 [14번 노트북](14_flash_attention_gpu.ipynb)에서** 다룹니다: 4절의 온라인 소프트맥스를 Triton 커널(순전파와 역전파)로 옮겨 GPU 없이도 PyTorch와 비교하고, GPU에서 잰 처리량과 메모리는 `python3 course.py gpu-bench`가 `data/benchmark_gpu.json`에 저장해 14번이 그립니다(저장된 측정이 없으면 없다고 말합니다). CUDA GPU가 있는 학습자는 아래 셀에서 직접 재 볼 수도 있습니다(출력은 기계마다 달라 테스트에서 비교하지 않습니다). N = 16,384, 헤드 8개, fp16에서 단순 구현의 $S$와 $P$는 합쳐 약 8 GiB라 메모리가 작은 GPU에서는 넘칠 수 있습니다. 그때는 그 사실을 출력하고 다음으로 넘어갑니다.

# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
if torch.cuda.is_available():
    for n in [1024, 4096, 16384]:
        q, k, v = torch.randn(3, 1, 8, n, 64, device="cuda", dtype=torch.float16).unbind(0)  # (B, h, N, d)
        need = 2 * score_matrix_bytes(n, heads=8, bytes_per_value=2)  # naive: S and P at once
        print(f"N = {n:5d}: 단순 구현의 S와 P {need / GIB:.2f} GiB, GPU에 남은 메모리 {torch.cuda.mem_get_info()[0] / GIB:.1f} GiB")
        for name in ("naive", "sdpa"):
            fn = attention_method(name)
            try:
                fn(q, k, v)
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(q, k, v)
                end.record()
                torch.cuda.synchronize()
            except torch.OutOfMemoryError:
                torch.cuda.empty_cache()
                print(f"N = {n:5d} {name:5s}: GPU 메모리 부족 (OutOfMemoryError)")
                continue
            print(f"N = {n:5d} {name:5s}: {start.elapsed_time(end):8.2f} ms, "
                  f"최대 메모리 {(torch.cuda.max_memory_allocated() - base) / 2**20:8.1f} MiB")
else:
    print("이 기계에는 CUDA GPU가 없어 GPU를 재지 않았습니다.",
          "저장된 GPU 결과:", "없음" if not (DATA_DIR / "benchmark_gpu.json").exists() else "data/benchmark_gpu.json (14번 7절)")

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("08-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다. 08-1과 그 풀이는 5절의 측정 바로 앞에 있습니다.
#
# **08-2.** 두 키 블록 A, B에서 따로 구한 상태 `state = (m, l, acc)`(모양 `(쿼리, 1)`, `(쿼리, 1)`, `(쿼리, d_v)`)를 하나로 합치는 `merge(state_a, state_b)`를 완성하세요. 합친 상태는 두 가지를 만족하면 됩니다: `acc / l`이 두 블록 전체에 대한 어텐션이고, `l·e^m`이 두 블록 전체의 지수 합 $\sum e^{s}$입니다(3절처럼 `m = max(m_A, m_B)`로 맞춰도, `m`을 logsumexp로 두고 `l = 1`로 맞춰도 됩니다). 점수가 1000처럼 크거나 **두 블록의 최댓값 차이**가 1000처럼 커도 넘치면 안 됩니다: 보정 계수는 항상 1 이하여야 합니다.

# %%
def merge(state_a, state_b):
    m_a, l_a, acc_a = state_a
    m_b, l_b, acc_b = state_b
    ...
    return None

check("08-2", merge)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def merge(state_a, state_b):
    m_a, l_a, acc_a = state_a
    m_b, l_b, acc_b = state_b
    m = torch.maximum(m_a, m_b)
    c_a, c_b = torch.exp(m_a - m), torch.exp(m_b - m)  # <= 1: rescale to the common max
    return m, c_a * l_a + c_b * l_b, c_a * acc_a + c_b * acc_b

check("08-2", merge)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **08-3.** 8절의 `linear_attention`은 쿼리마다 **모든** 키를 봅니다. 생성 모델에 쓰려면 쿼리 $i$가 키 $j \le i$만 봐야 합니다(인과). 이 인과 선형 어텐션의 출력은
#
# $$o_i = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i}, \qquad S_i = \sum_{j \le i} \phi(k_j)\, v_j^\top \in \mathbb{R}^{d \times d_v}, \qquad z_i = \sum_{j \le i} \phi(k_j)$$
#
# 입니다($\phi(x) = \mathrm{elu}(x) + 1$). N×N 행렬 없이 이것을 계산하는 `causal_linear_attention(q, k, v)`를 완성하세요(입력 `(..., N, d)`). 검사기는 N×N 가중치 행렬에 인과 마스크를 씌운 식과 값을 비교하고, N = 2048에서 최대 메모리도 잽니다. 힌트: $S_i$와 $z_i$는 $i$에 대한 **누적 합**입니다. `torch.cumsum`으로 모든 $S_i$를 한꺼번에 만들면 가장 짧지만 $N \cdot d \cdot d_v$개를 저장하므로, $d\,d_v > N$이면(예: $d = d_v = 64$, $N = 2048$) N×N 행렬보다 커집니다. 상태 $S, z$ 하나만 들고 토큰(또는 청크) 단위로 고쳐 가면 $d \times d_v$면 됩니다: 선형 어텐션이 RNN처럼 생성할 수 있는 이유입니다. 검사기는 두 방식을 모두 받고, 어느 쪽인지 알려 줍니다.

# %%
def causal_linear_attention(q, k, v):  # (..., N, d) each
    # φ(x) = F.elu(x) + 1; S_i and z_i are running sums over the keys j <= i
    ...
    return None

check("08-3", causal_linear_attention)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def causal_linear_attention(q, k, v, chunk=64):  # one (d, d_v) state carried from chunk to chunk
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # (..., N, d)
    s = phi_k.new_zeros(*phi_k.shape[:-2], phi_k.shape[-1], v.shape[-1])  # (..., d, d_v): S of earlier chunks
    z = phi_k.new_zeros(*phi_k.shape[:-2], phi_k.shape[-1])  # (..., d): z of earlier chunks
    out = []
    for i in range(0, q.shape[-2], chunk):
        fq, fk, vc = phi_q[..., i : i + chunk, :], phi_k[..., i : i + chunk, :], v[..., i : i + chunk, :]
        w = (fq @ fk.transpose(-2, -1)).tril()  # (..., c, c): keys j <= i inside the chunk
        num = fq @ s + w @ vc  # (..., c, d_v): earlier chunks through the state, this chunk directly
        den = fq @ z.unsqueeze(-1) + w.sum(dim=-1, keepdim=True)  # (..., c, 1)
        out.append(num / den)
        s, z = s + fk.transpose(-2, -1) @ vc, z + fk.sum(dim=-2)  # fold the chunk into the state
    return torch.cat(out, dim=-2)  # (..., N, d_v)

check("08-3", causal_linear_attention)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 6절의 배수(단순 구현이 SDPA보다 약 2배 느림)와 그 차이가 벌어지기 시작한 N(256→512)은 이 기계 하나의 측정입니다. L2 캐시가 몇 배 큰 CPU나 메모리 대역폭이 절반인 노트북에서는 차이가 어느 N에서 시작되고 몇 배가 될지 예측한 뒤, 여러분의 기계에서 5절의 시간 셀로 확인해 보세요. GPU에서 단순 구현과 융합 커널의 배수는 이 CPU의 약 2배보다 클까요, 작을까요? 무엇이 그것을 정할까요?
# 2. 2절에서 FlashAttention은 $P$를 저장하는 대신 역전파에서 $S$를 다시 계산해 더 빨라졌습니다. 반대로 재계산이 더는 이득이 아닌 경우는 언제일까요? N, d, 그리고 빠른 메모리의 크기와 대역폭을 바꿔 가며 생각해 보세요(3절의 `exp(S − L)` 복원에 드는 일과 $P$를 HBM에서 읽어 오는 일을 견주어 보세요).
# 3. 문서 요약 모델에 윈도 어텐션을 쓰면 무엇을 잃을까요? 일부 토큰만 전체를 보게 하는 방법은 어떤 절충일까요?
# 4. 선형 어텐션의 가중치 행렬은 랭크가 $d$ 이하였습니다. 어떤 과제(예: 긴 문맥에서 한 단어를 정확히 복사하기)에서 이것이 문제가 될까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 2번을 묶어 진행하세요. 답의 방향은 "N×N 행렬이 어느 메모리 계층에 들어가느냐가 시작점을 정하고(캐시가 크면 더 큰 N에서 벌어진다), 연산 속도에 비해 대역폭이 좁을수록 배수가 커진다"와 "재계산은 HBM 왕복이 재계산 FLOP보다 비쌀 때만 이득이다: N×N이 빠른 메모리에 통째로 들어갈 만큼 N이 작거나, 대역폭에 비해 연산이 느린 하드웨어라면 저장하는 쪽이 낫다"입니다. GPU의 배수는 논문의 측정(6절 원문 바로잡기: 어텐션만 최대 7.6배)과 14번 노트북으로 이어 가세요. 파이썬 블록 반복문은 메모리 사용량을 줄이지만 HBM 읽기·쓰기 양은 커널 하나만큼 줄이지 못한다는 점(Rabe & Staats)도 함께 짚으세요. 3·4번은 "답을 바꾸는 근사는 과제에 따라 대가가 다르다"로 정리합니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 점수 행렬은 $4BhN^2$ 바이트(float32): ViT-Base 설정, N=16,384에서 384 GiB | `score_matrix_bytes` (원문 바로잡기) |
# | FlashAttention의 주장은 메모리와 속도 둘 다: 융합 커널이 HBM 읽기·쓰기 양을 $\Theta(N^2d^2/M)$으로 줄인다 | 읽기·쓰기 양 모형, CPU SDPA의 융합 커널 이름 |
# | 온라인 소프트맥스는 근사가 아니다 | `chunked_attention` = 기준 = SDPA, 인과 마스크·$T_q \ne T_k$ 포함 (float64 1e-12, float32 1e-5) |
# | 직접 짠 청크 어텐션이 융합 커널의 80% 넘게 나온다 (이 CPU, 한 스레드) | 번갈아 잰 중앙값, 기법별 표 (6절) |
# | 역전파는 $m, \ell$ (또는 $L = m + \log \ell$)로 $P$를 복원한다 | $e^{s-L}$ = softmax (1e-14, 3절) |
# | 시간은 셋 다 $O(N^2)$, 메모리는 단순 구현만 $O(N^2)$ | 증가 지수: 시간 ≈ 2 (1024 ≤ N ≤ 8192), 메모리 ≈ 2 / ≈ 1 |
# | 같은 FLOP이어도 시간은 다르다: 이 기계에서 단순 구현은 SDPA보다 꾸준히 약 2배 느렸다(N×N 행렬의 L3·DRAM 읽기·쓰기 때문으로 보이나 캐시 크기는 재지 않음; 배수는 기계마다 다름). N = 16,384의 급락은 원인을 모르는 이상치 | 저장된 벤치마크의 처리량과 배수 |
# | 80 GiB 한계 N: float32 146,542, bf16 207,243 | `max_n_for_budget` |
# | 윈도·선형 어텐션은 $O(N)$이지만 답이 바뀐다 | 창 밖 가중치, 랭크 ≤ d |

# %% [markdown] slideshow={"slide_type": "subslide"}
# 다음 노트북은 마스크로 "어떤 쌍을 볼지"를 정합니다. 4절의 인과 마스크 블록 건너뛰기가 그 첫 예였습니다. 4절의 반복문을 GPU 커널로 옮기는 것은 14번 노트북입니다.
#
# **참고 문헌** ([SOURCES.md](../SOURCES.md)): Dao 등 2022 (FlashAttention), Dao 2024 (FlashAttention-2), Milakov & Gimelshein 2018 (온라인 소프트맥스), Rabe & Staats 2021, Katharopoulos 등 2020 (선형 어텐션), Beltagy 등 2020 (Longformer), Liu 등 2021 (Swin).
