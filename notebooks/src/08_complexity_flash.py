# %% [markdown]
# # 08. O(N²) 비용과 FlashAttention
#
# 어텐션은 모든 쿼리와 모든 키의 쌍을 비교하므로 시퀀스 길이 N이 2배가 되면 일이 4배가 됩니다. 그중 **메모리**는 계산 순서만 바꿔도 N에 비례하게 줄일 수 있다는 것을 직접 재 보고 증명합니다.
#
# **학습 목표**
# - 어텐션의 시간과 메모리가 N에 따라 어떻게 자라는지 측정하고, 로그-로그 그래프의 기울기로 $O(N^2)$와 $O(N)$을 구분한다.
# - N×N 점수 행렬의 메모리(헤드당 $N^2 \cdot 4$ 바이트)를 계산하고, 언제 8/16/80 GiB를 넘는지 안다.
# - 온라인 소프트맥스(online softmax)로 블록(block)마다 최댓값과 합을 고쳐 가며 계산해도 결과가 **정확히** 같은 이유를 설명하고 직접 합칠 수 있다.
# - 윈도 어텐션(window attention)과 선형 어텐션(linear attention)이 비용을 줄이는 대신 무엇을 포기하는지 숫자로 말할 수 있다.
#
# **선수 지식**: 01번(소프트맥스와 최댓값 빼기), 04번(√d_k 스케일링), 07번(헤드와 배치 차원)
#
# **예상 시간**: 혼자 공부 50분 / 스터디 발표 25분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 첫 문장은 "FlashAttention은 계산량을 줄이지 않는다, 메모리를 줄인다"입니다. 오늘 그래프에서 시간의 기울기는 세 방법 모두 2 근처, 메모리의 기울기만 2와 1로 갈린다는 점을 끝까지 붙잡고 가세요. 슬라이더 데모는 5절, 온라인 소프트맥스 손 계산은 3절입니다.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.attention import chunked_attention, scaled_dot_product_attention
from helpers.complexity import (
    GIB,
    attention_flops,
    chunked_extra_bytes,
    draw_memory_vs_n,
    draw_scaling,
    linear_attention,
    linear_attention_weights,
    max_n_for_budget,
    measure,
    memory_explorer,
    naive_attention,
    score_matrix_bytes,
    window_attention,
    window_weight_outside,
)
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
# 입력 $Q, K, V$와 출력 $O$는 $N \times d$뿐인데, 중간 결과만 $N \times N$입니다. 이 중간 결과를 끝까지 만들지 않는 것이 FlashAttention의 핵심입니다.

# %%
for n in [100, 196, 1024, 16384]:
    print(f"N = {n:6,d}: N² = {n * n:13,d}, 행렬 하나 {score_matrix_bytes(n):15,d} B = {score_matrix_bytes(n) / 2**20:9.3f} MiB, "
          f"FLOP(d=64) = {attention_flops(n, 64):.3g}")
vit = score_matrix_bytes(196, heads=12, batch=32)
long_vit = score_matrix_bytes(16384, heads=12, batch=32)
print(f"ViT-Base 설정 (B=32, h=12): N=196 → {vit / 2**20:.1f} MiB, N=16384 → {long_vit / GIB:.0f} GiB")
assert score_matrix_bytes(16384) == GIB and long_vit == 384 * GIB

# %% [markdown]
# > **원문 바로잡기** 원문의 메모리 표(100 토큰 ~40 KB, 16,384 토큰 ~1 GB)는 **헤드 하나, 시퀀스 하나**의 행렬 하나만 센 값입니다(16,384에서 정확히 1 GiB). 바로 위에서 원문이 예로 든 ViT-Base(배치 32, 헤드 12)로 계산하면 N = 196에서도 56.3 MiB, N = 16,384에서는 **384 GiB**입니다. 게다가 아래에서 재 보면 단순 구현은 점수와 가중치 두 행렬을 동시에 들고 있어 그 두 배가 필요합니다.

# %% [markdown]
# ## 2. 직접 재 보기: 작은 N
#
# 세 구현을 비교합니다.
#
# | 이름 | 무엇 |
# |---|---|
# | 단순 구현 | `naive_attention`: 위 식 그대로, $N\times N$ 행렬을 만든다 |
# | 청크 | `chunked_attention`: 키·밸류(value)를 블록으로 나눠 온라인 소프트맥스로 누적 (3절) |
# | SDPA | PyTorch의 `F.scaled_dot_product_attention`: CPU에서도 FlashAttention 방식의 커널을 쓴다 |
#
# **메모리는 어떻게 재나?** 파이썬의 `tracemalloc`은 PyTorch 텐서 메모리를 보지 못합니다. 여기서는 `torch.profiler`(`profile_memory=True`)가 기록하는 텐서 할당·해제 이벤트를 시간 순으로 더해, 호출 동안의 **최대 누적 바이트**를 구합니다(`peak_memory_bytes`). 텐서 메모리만 세지만, 같은 입력이면 매번 같은 값이 나와서 assert할 수 있습니다. 벤치마크 스크립트는 여기에 더해 케이스마다 새 프로세스를 띄워 운영체제가 본 최대 상주 메모리(`/proc/self/status`의 VmHWM)도 잽니다(4절).

# %%
live_ns = [256, 512, 1024, 2048]
live = {(m, n): measure(m, n, 64, timing=False) for n in live_ns for m in ["naive", "chunked", "sdpa"]}
for n in live_ns:
    row = "  ".join(f"{m} {live[(m, n)]['peak_bytes'] / 2**20:7.3f}" for m in ["naive", "chunked", "sdpa"])
    print(f"N = {n:5d}  최대 메모리(MiB): {row}   |  N×N 행렬 하나 {score_matrix_bytes(n) / 2**20:6.2f}")

# %%
for n in live_ns:
    naive_peak, chunked_peak = live[("naive", n)]["peak_bytes"], live[("chunked", n)]["peak_bytes"]
    assert naive_peak == 2 * score_matrix_bytes(n) + n * 64 * 4  # scores + weights + one N×d
    assert abs(chunked_peak / chunked_extra_bytes(n, 64) - 1) < 0.01  # the formula of section 3
    assert live[("sdpa", n)]["peak_bytes"] < score_matrix_bytes(n)
assert live[("sdpa", 2048)]["peak_bytes"] < score_matrix_bytes(2048) / 10
smaller = {m: live[("naive", 2048)]["peak_bytes"] / live[(m, 2048)]["peak_bytes"] for m in ("chunked", "sdpa")}
growth = {m: [live[(m, 2 * n)]["peak_bytes"] / live[(m, n)]["peak_bytes"] for n in live_ns[:-1]] for m in ("naive", "chunked", "sdpa")}
print("N이 2배일 때 메모리 배율:", {m: [round(g, 2) for g in gs] for m, gs in growth.items()})
assert all(3.7 < g <= 4.0 for g in growth["naive"]) and all(g < 3.1 for m in ("chunked", "sdpa") for g in growth[m])
print("N = 2048에서 단순 구현 / 청크, 단순 구현 / SDPA:", {m: round(r, 1) for m, r in smaller.items()})
assert (int(smaller["chunked"]), int(smaller["sdpa"])) == (14, 30)   # quoted below
print("단순 구현 / (N×N 행렬 하나):", [round(live[("naive", n)]["peak_bytes"] / score_matrix_bytes(n), 3) for n in live_ns])

# %% [markdown]
# 단순 구현의 최대 메모리는 $N\times N$ 행렬 **두 개**(점수와 소프트맥스 결과)에 $N \times d$ 행렬 하나를 더한 크기이고, N이 2배가 되면 4배에 가깝게 늘어납니다. 청크와 SDPA는 N = 2048에서 각각 14배, 30배 작고, N이 2배가 될 때 늘어나는 배율도 4보다 작고 대개 2 안팎입니다(타일이나 블록 크기가 N에 따라 바뀌는 구간에서는 1.3배나 3배도 나옵니다). 결과는 모두 같습니다.

# %%
seed_everything(0)
q, k, v = torch.randn(3, 1, 1, 2048, 64).unbind(0)  # (B, h, N, d) each
ref = naive_attention(q.double(), k.double(), v.double())
for name, out in [("단순 구현", naive_attention(q, k, v)), ("청크", chunked_attention(q, k, v)),
                  ("SDPA", F.scaled_dot_product_attention(q, k, v))]:
    err = (out.double() - ref).abs().max().item()
    print(f"{name:6s} float64 기준과의 최대 차이: {err:.1e}")
    assert err < 1e-5
sdpa_vs_naive = (F.scaled_dot_product_attention(q, k, v) - naive_attention(q, k, v)).abs().max().item()
print(f"float32에서 SDPA와 단순 구현의 최대 차이: {sdpa_vs_naive:.1e}")
assert 1e-8 < sdpa_vs_naive < 1e-6  # rounding-level: about 1e-7

# %% [markdown]
# 시간은 기계가 바쁜 정도에 따라 달라지므로 아래 출력은 테스트에서 비교하지 않습니다(숫자는 실행할 때마다 다릅니다).

# %% tags=["nbval-ignore-output"]
for n in live_ns:
    times = {m: measure(m, n, 64, repeat=3)["seconds"] * 1e3 for m in ["naive", "chunked", "sdpa"]}
    print(f"N = {n:5d}  " + "  ".join(f"{m} {t:7.2f} ms" for m, t in times.items()))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시간 표는 청중의 노트북마다 다르게 나옵니다. 여기서는 메모리 표를 강조하세요: 메모리는 결정적(deterministic)이라 assert로 고정했고, 시간은 4절의 저장된 벤치마크로 넘깁니다.

# %% [markdown]
# ## 3. 온라인 소프트맥스: 행렬 없이 정확히 같은 답
#
# 쿼리 하나를 생각합니다. 키를 블록 $1, 2, \dots$로 나누고, 블록 $j$의 점수를 $s^{(j)}$라 합시다. 세 가지 상태를 들고 다닙니다.
#
# - $m$: 지금까지 본 점수의 최댓값 (running max)
# - $\ell$: 지금까지의 $\sum e^{s - m}$ (running sum)
# - $a$: 지금까지의 $\sum e^{s - m} v$ (가중치를 나누기 전의 가중합, $d$차원)
#
# 새 블록이 오면
#
# $$m_{\text{new}} = \max\!\big(m_{\text{old}},\ \max_i s^{(j)}_i\big), \qquad c = e^{\,m_{\text{old}} - m_{\text{new}}} \le 1$$
#
# $$\ell_{\text{new}} = c\,\ell_{\text{old}} + \sum_i e^{\,s^{(j)}_i - m_{\text{new}}}, \qquad a_{\text{new}} = c\,a_{\text{old}} + \sum_i e^{\,s^{(j)}_i - m_{\text{new}}}\, v_i$$
#
# 이고 마지막에 $O = a / \ell$입니다. 보정 계수 $c$가 핵심입니다: 전에 더한 항들은 옛 최댓값을 빼고 지수를 취했으므로, $e^{s - m_{\text{old}}} \cdot e^{m_{\text{old}} - m_{\text{new}}} = e^{s - m_{\text{new}}}$로 새 기준에 맞춰 줍니다. 곱셈 하나로 **정확히** 바뀌므로 근사가 아닙니다. 최댓값을 빼므로 $e^{(\cdot)} \le 1$이라 넘침(overflow)도 없습니다.
#
# 작은 예로 한 단계씩 따라갑니다: 쿼리 1개, 키 6개, 블록 크기 2, float64. 최댓값이 블록마다 바뀌어 보정이 일어나도록 키를 점수 순으로 놓았습니다.

# %%
seed_everything(8)
q1 = torch.randn(1, 2, dtype=torch.float64)  # (1, d=2): one query
k6 = torch.randn(6, 2, dtype=torch.float64)  # (6, d): six keys
v6 = torch.randn(6, 2, dtype=torch.float64)  # (6, d_v=2)
scores = (q1 @ k6.T / math.sqrt(2)).squeeze(0) * 3  # (6,)
order = scores.argsort()  # keys in increasing score: the running max grows at every block
scores, v6 = scores[order], v6[order]
print("점수:", scores.numpy().round(3))

m, l, a = -math.inf, 0.0, torch.zeros(2, dtype=torch.float64)
for j in range(0, 6, 2):
    s, vb = scores[j : j + 2], v6[j : j + 2]
    m_new = max(m, s.max().item())
    c = math.exp(m - m_new)  # exp(-inf) = 0 on the first block
    p = torch.exp(s - m_new)
    l, a, m = c * l + p.sum().item(), c * a + p @ vb, m_new
    print(f"블록 {j // 2 + 1}: m = {m:7.4f}  c = {c:.4f}  ℓ = {l:.4f}  a = {a.numpy().round(4)}  a/ℓ = {(a / l).numpy().round(4)}")

full = torch.softmax(scores, dim=-1) @ v6
print("한 번에 계산한 softmax(s)·V =", full.numpy().round(4))
torch.testing.assert_close(a / l, full, rtol=1e-14, atol=1e-14)

# %% [markdown]
# 블록 1 뒤의 $a/\ell$은 처음 두 키만 본 어텐션이고, 블록이 더해질수록 답에 다가가 마지막에 정확히 일치합니다. `helpers.attention.chunked_attention`은 이것을 쿼리 여러 개(쿼리도 약 1024개씩 타일로 묶음), 배치, 헤드에 대해 한꺼번에 합니다. 인과 마스크(causal mask)가 있으면 대각선 위 블록은 아예 계산하지 않고 대각선 블록에만 마스크를 씌웁니다. 블록 크기와 무관하게 float64에서 기준 구현과 일치합니다.

# %%
seed_everything(9)
q, k, v = torch.randn(3, 2, 3, 300, 16, dtype=torch.float64).unbind(0)  # (B, h, N, d) each
for causal in (False, True):
    ref, _ = scaled_dot_product_attention(q, k, v, causal=causal)
    errs = []
    for block in (1, 7, 64, 128, 1000):
        out = chunked_attention(q, k, v, block_size=block, causal=causal)
        torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
        errs.append((out - ref).abs().max().item())
    print(f"causal={causal!s:5}: 블록 1, 7, 64, 128, 1000의 최대 차이 {max(errs):.1e}")

# %% [markdown]
# 메모리는 얼마나 쓸까요? 구현이 동시에 들고 있는 것은 스케일한 $Q$와 출력 $O$($2Nd$), 점수 타일 두 개(타일 행 $T$ × 블록 $b$), 타일 누적기($Td$)뿐입니다. 헤드당 $4(2Nd + 2Tb + Td + 4T)$ 바이트이고 N에 비례합니다(`chunked_extra_bytes`). 2절에서 잰 값과 1% 안에서 맞았습니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 칠판에 점수 [1, 3 | 2, 5]를 두 블록으로 나눠 손으로 해 보세요. 블록 1 뒤 m=3, ℓ=e⁻²+1; 블록 2에서 m=5, c=e⁻²가 곱해집니다. "예전 합에 보정 계수를 곱한다"가 외울 전부입니다. 연습문제 08-2가 바로 이 합치기입니다.

# %% [markdown]
# ## 4. 넓은 범위: 저장된 벤치마크
#
# 큰 N은 시간이 오래 걸리므로 스크립트 `scripts/benchmark_attention.py`가 잰 결과를 불러옵니다. 다시 재려면 `.venv/bin/python scripts/benchmark_attention.py`(한 스레드, 몇 분). 어떤 기계에서 잰 것인지도 함께 저장돼 있습니다.

# %%
bench = load_json("benchmark_cpu.json")
records = bench["records"]
machine = bench["machine"]
print(f"CPU: {machine['cpu_model']} (논리 코어 {machine['logical_cores']}개, torch 스레드 {machine['torch_threads']}개, "
      f"{machine['cpu_capability']})")
print(f"torch {machine['torch_version']}, {machine['date']}, 총 {bench['seconds_total']:.0f} s")
print(f"float32 행렬곱 최고 속도(한 스레드): {bench['matmul_peak_gflops']:.1f} GFLOP/s")
ns_all = sorted({r["n"] for r in records})
print("N:", ns_all[0], "…", ns_all[-1], "| 단순 구현은", bench["config"]["max_n"]["naive"], "까지")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
time_slopes = draw_scaling(records, "seconds", ax=ax1, fit_min_n=4096, methods=["naive", "chunked", "sdpa"])
mem_slopes = draw_scaling(records, "peak_bytes", ax=ax2, fit_min_n=4096, methods=["naive", "chunked", "sdpa"])
ax1.set_title("시간: 세 방법 모두 기울기 ≈ 2 (N ≥ 4096에서 맞춤)")
ax2.set_title("최대 메모리: 단순 구현만 기울기 ≈ 2 (N ≥ 4096에서 맞춤)")
fig.tight_layout()
plt.show()

# %%
by_n = {(r["method"], r["n"]): r["peak_bytes"] for r in records}
print("시간 기울기:", {m: round(s, 2) for m, s in time_slopes.items()})
print("메모리 기울기:", {m: round(s, 2) for m, s in mem_slopes.items()})
last_doubling = {m: by_n[(m, 32768)] / by_n[(m, 16384)] for m in ["chunked", "sdpa"]}
print("마지막 두 배(16384 → 32768)에서 메모리 배율:", {m: round(r, 2) for m, r in last_doubling.items()})
assert abs(mem_slopes["naive"] - 2) < 0.1
assert all(0.7 < mem_slopes[m] < 1.1 and 1.7 < last_doubling[m] < 2.1 for m in ["chunked", "sdpa"])
assert all(abs(time_slopes[m] - 2) < 0.4 for m in ["naive", "chunked", "sdpa"])

# %% [markdown]
# 시간은 세 방법 모두 $N^2$에 비례합니다: 청크 방식도 모든 쌍의 점수를 계산하기 때문입니다. 시간 기울기는 잴 때마다 조금씩 달라지고 정확히 2도 아닙니다: 작은 N에서는 고정 비용이, 큰 N에서는 $N\times N$ 행렬이 캐시를 벗어나 메모리 대역폭에 묶이는 효과가 섞입니다. 그래서 N ≥ 4096에서만 맞추고, 2 ± 0.4 안인지만 확인합니다. 메모리는 단순 구현만 $N^2$, 나머지는 $N$입니다. 청크와 SDPA의 메모리 기울기가 1보다 조금 작은 것은 N과 무관한 타일 메모리(1 MiB 안팎)가 섞여 있어서이고, N이 커질수록 N이 두 배일 때 메모리도 두 배에 가까워집니다. 이제 계산한 행렬 크기와 잰 값을 나란히 봅니다. "프로세스"는 케이스마다 새 프로세스에서 잰 최대 상주 메모리 증가량(VmHWM − VmRSS)입니다. 작은 N에서는 이미 확보된 메모리를 재사용해 0에 가깝게 나올 수 있어 큰 N에서만 의미가 있습니다.

# %%
by = {(r["method"], r["n"]): r for r in records}
print(f"{'N':>6} {'N×N 행렬':>10} | {'단순: 할당기':>12} {'프로세스':>9} | {'청크: 할당기':>12} {'공식':>8} | {'SDPA':>8}  (MiB)")
for n in ns_all:
    mat = score_matrix_bytes(n) / 2**20
    nv = by.get(("naive", n))
    naive_cols = f"{nv['peak_bytes'] / 2**20:12.1f} {nv['process_peak_bytes'] / 2**20:9.1f}" if nv else f"{'-':>12} {'-':>9}"
    ch, sd = by[("chunked", n)], by[("sdpa", n)]
    print(f"{n:6d} {mat:10.1f} | {naive_cols} | {ch['peak_bytes'] / 2**20:12.2f} "
          f"{chunked_extra_bytes(n, 64) / 2**20:8.2f} | {sd['peak_bytes'] / 2**20:8.2f}")
big = by[("naive", 16384)]
assert 2 * score_matrix_bytes(16384) <= big["peak_bytes"] < 2.1 * score_matrix_bytes(16384)
assert 1.8 * score_matrix_bytes(16384) < big["process_peak_bytes"] < 2.5 * score_matrix_bytes(16384)
assert by[("chunked", 16384)]["peak_bytes"] < 10 * 2**20

# %% [markdown]
# N = 16,384에서 단순 구현은 1 GiB 행렬 두 개, 곧 2 GiB를 잡았고 운영체제가 본 증가량도 거의 같았습니다. 청크 방식은 같은 계산을 10 MiB도 안 되는 메모리로 끝냅니다.
#
# ### 처리량: 청크 구현 대 SDPA
#
# `chunked_attention`은 파이썬 반복문이지만 처리량(throughput)을 높이려고 몇 가지를 했습니다: $1/\sqrt{d}$를 $Q$에 한 번만 곱하기, 쿼리도 타일로 묶어 큰 행렬곱 만들기, 점수 타일 위에서 제자리(in-place) 연산, 인과 마스크는 한 번만 만들고 대각선 블록에서만 쓰기. 처리량은 $4N^2d$ FLOP을 시간으로 나눈 값입니다.

# %%
ratios = bench["chunked_over_sdpa_throughput"]
large = [n for n in ns_all if n >= 4096 and str(n) in ratios]
for n in large:
    ch, sd = by[("chunked", n)], by[("sdpa", n)]
    print(f"N = {n:5d}: 청크 {ch['gflops']:5.1f}, SDPA {sd['gflops']:5.1f} GFLOP/s → 청크/SDPA = {ratios[str(n)]:.2f}")
peak = bench["matmul_peak_gflops"]
print(f"N ≥ 4096 평균: 청크 {np.mean([by[('chunked', n)]['gflops'] for n in large]) / peak:.0%}, "
      f"SDPA {np.mean([by[('sdpa', n)]['gflops'] for n in large]) / peak:.0%} (행렬곱 최고 속도 대비)")
naive_vs_chunked = by[("naive", 16384)]["seconds"] / by[("chunked", 16384)]["seconds"]
print(f"N = 16384에서 단순 구현 시간 / 청크 시간 = {naive_vs_chunked:.2f}")

# %% [markdown]
# > **원문 바로잡기** 원문은 FlashAttention이 "$O(N^2)$이지만 2-4배 빠르다"고 적었습니다. 연산량이 $O(N^2)$로 그대로라는 것은 위 시간 기울기와 맞습니다. 하지만 빨라지는 것은 GPU에서 느린 메모리(HBM)와 오가는 양이 줄기 때문이고, 보장된 배수가 아닙니다. 이 CPU에서 잰 청크/SDPA 비율과 단순 구현 대비 배수는 위에 출력한 값이고, 다른 기계에서 다시 재면 달라집니다: 배수는 하드웨어와 부하에 달린 값이지 알고리즘이 보장하는 값이 아닙니다. 또 원문 코드의 `F.scaled_dot_product_attention`은 "수학적으로" 같은 결과일 뿐, 2절에서 보듯 float32에서는 단순 구현과 반올림 오차만큼(1e-7 수준) 다릅니다.

# %% [markdown]
# ## 5. 행렬이 메모리에 들어가지 않는 지점
#
# 슬라이더로 N(로그 눈금), 헤드 수, 배치를 바꿔 보세요. 빨간 선은 점수 행렬 $4BhN^2$ 바이트, 파란 선은 청크 방식의 작업 메모리, 점선은 8/16/80 GiB입니다.

# %% tags=["nbval-ignore-output"]
memory_explorer()

# %% [markdown]
# 정적 버전(슬라이드·PDF용): 같은 함수로 세 설정을 그립니다.

# %%
settings = [(10, 1, 1), (14, 1, 1), (14, 12, 32)]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
views = [draw_memory_vs_n(log2_n, heads=h, batch=b, ax=ax) for (log2_n, h, b), ax in zip(settings, axes)]
fig.tight_layout()
plt.show()

# %%
for (_log2_n, h, b), view in zip(settings, views):
    print(f"N = {view['n']:6,d}, h = {h:2d}, B = {b:2d}: 점수 {view['matrix_bytes'] / GIB:9.4f} GiB, "
          f"청크 {view['chunked_bytes'] / GIB:.4f} GiB, 들어가는 예산: {[g for g, ok in view['fits'].items() if ok]}")
limits = {g: max_n_for_budget(g * GIB) for g in (8, 16, 80)}
print("헤드 하나, 시퀀스 하나에서 점수 행렬이 들어가는 최대 N:", limits)
assert limits[16] == 65536 and limits[80] == 146_542 and views[2]["fits"] == {8: False, 16: False, 80: False}

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 log₂N = 14에 두고 헤드를 12, 배치를 32로 올려 보세요. 행렬 하나가 1 GiB였는데 384 GiB가 됩니다. 80 GiB GPU 하나로는 헤드 하나, 시퀀스 하나짜리 행렬도 N = 146,542가 한계라는 점이 "긴 문맥 = 메모리 문제"의 출발점입니다.

# %% [markdown]
# ## 6. 다른 길: 윈도 어텐션과 선형 어텐션
#
# FlashAttention은 답을 바꾸지 않고 메모리만 줄입니다. **계산량** 자체를 줄이려면 답을 바꿔야 합니다.
#
# - **윈도 어텐션**: 쿼리 $i$가 $|i - j| \le w$인 키만 봅니다. 점수를 매기는 쌍이 $N^2$에서 약 $N(2w+1)$로 줄어 시간과 메모리가 $O(Nwd)$. 대신 창 밖으로 가는 가중치를 잃습니다.
# - **선형 어텐션**: $e^{q\cdot k}$ 대신 $\phi(q)\cdot\phi(k)$($\phi(x) = \mathrm{elu}(x) + 1$)를 쓰면 결합 법칙으로 $\phi(Q)\,\big(\phi(K)^\top V\big)$를 먼저 계산할 수 있어 시간 $O(Nd^2)$, 상태 $d\times d$. 대신 다른 어텐션이 됩니다.

# %%
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
for name, x in [("무작위 순서", iid), ("이웃이 비슷함", local)]:
    lost = window_weight_outside(x, x, 16)
    out_w = window_attention(x, x, x, window=16)
    out_full = F.scaled_dot_product_attention(x, x, x)
    rel = ((out_w - out_full).norm() / out_full.norm()).item()
    print(f"{name:8s}: w=16 창 밖 가중치 평균 {lost.mean():.1%}, 출력의 상대 차이 {rel:.1%}")
    assert lost.mean() > 0.5 if x is iid else lost.mean() < window_weight_outside(iid, iid, 16).mean()
    assert round(lost.mean().item(), 2) == (0.84 if x is iid else 0.60)

# %% [markdown]
# 창 밖으로 가는 가중치의 몫은 데이터에 달려 있습니다. 순서 구조가 없는 입력에서는 w = 16 창이 가중치의 84%를 놓칩니다. 이웃끼리 비슷한 입력에서는 덜 놓치지만 그래도 60%로, 절반이 넘습니다. 멀리 떨어진 단어를 봐야 하는 문장("어제 밤에 배가 고파서 … 먹었다")에서는 이것이 곧 정보 손실입니다.

# %%
seed_everything(7)
q, k, v = torch.randn(3, 256, 16).unbind(0)  # (N, d) each
lin, soft = linear_attention(q, k, v), F.scaled_dot_product_attention(q, k, v)
rank_lin = torch.linalg.matrix_rank(linear_attention_weights(q, k)).item()
rank_soft = torch.linalg.matrix_rank(torch.softmax(q @ k.T / 4, dim=-1)).item()
print(f"선형 어텐션과 소프트맥스 어텐션 출력의 상대 차이: {((lin - soft).norm() / soft.norm()):.1%}")
print(f"가중치 행렬의 랭크: 선형 {rank_lin} (≤ d = 16), 소프트맥스 {rank_soft} (N = 256)")
print(f"가장 큰 가중치의 평균: 선형 {linear_attention_weights(q, k).amax(-1).mean():.3f}, "
      f"소프트맥스 {torch.softmax(q @ k.T / 4, -1).amax(-1).mean():.3f}")
assert rank_lin <= 16 < rank_soft
assert linear_attention_weights(q, k).amax(-1).mean() < torch.softmax(q @ k.T / 4, -1).amax(-1).mean() / 5

# %% [markdown]
# 선형 어텐션의 가중치 행렬은 $\phi(Q)\phi(K)^\top$이라 랭크가 $d$를 넘을 수 없고, 한 키에 뾰족하게 몰리기 어렵습니다(가장 큰 가중치가 작음). 비용은 저장된 벤치마크에서 확인합니다.

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
cheap = ["chunked", "window", "linear"]
t_slopes = draw_scaling(records, "seconds", ax=ax1, fit_min_n=4096, methods=cheap)
m_slopes = draw_scaling(records, "peak_bytes", ax=ax2, fit_min_n=4096, methods=cheap)
ax1.set_title("시간: 윈도·선형은 기울기 ≈ 1")
ax2.set_title("최대 메모리: 셋 다 기울기 ≈ 1")
fig.tight_layout()
plt.show()
print("시간 기울기:", {m: round(s, 2) for m, s in t_slopes.items()}, "| 메모리 기울기:", {m: round(s, 2) for m, s in m_slopes.items()})
assert abs(t_slopes["window"] - 1) < 0.3 and abs(t_slopes["linear"] - 1) < 0.3
assert all(abs(m_slopes[m] - 1) < 0.25 for m in cheap)

# %% [markdown]
# > **원문 바로잡기** 원문 표는 선형 어텐션을 $O(N \cdot d)$라고 적었습니다. $\phi(K)^\top V$가 $d\times d$ 행렬이라 토큰 하나마다 $d^2$번 곱하므로 시간은 $O(Nd^2)$입니다(위에서 N에 대한 기울기 ≈ 1, 상수에 $d^2$). 윈도 어텐션의 $O(N \cdot W^2)$는 Swin처럼 $W$가 2차원 창의 한 변일 때의 표기이고, 창 안의 토큰 수를 $w$로 쓰면 $O(Nwd)$입니다(점수 쌍 수를 위에서 셌습니다).

# %% [markdown]
# ## 7. GPU에서는?
#
# GPU에서는 단순 구현과 SDPA(FlashAttention/메모리 효율 커널)의 차이가 시간에서도 크게 드러난다고 알려져 있습니다(느린 GPU 메모리와 오가는 양이 줄기 때문). 아래 셀은 CUDA가 있을 때만 직접 잽니다. 출력은 기계마다 다르므로 테스트에서 비교하지 않습니다.

# %% tags=["nbval-ignore-output"]
if torch.cuda.is_available():
    for n in [1024, 4096, 16384]:
        q, k, v = torch.randn(3, 1, 8, n, 64, device="cuda", dtype=torch.float16).unbind(0)  # (B, h, N, d)
        for name, fn in [("naive", naive_attention), ("sdpa", F.scaled_dot_product_attention)]:
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            fn(q, k, v)
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn(q, k, v)
            end.record()
            torch.cuda.synchronize()
            print(f"N = {n:5d} {name:5s}: {start.elapsed_time(end):8.2f} ms, "
                  f"최대 메모리 {(torch.cuda.max_memory_allocated() - base) / 2**20:8.1f} MiB")
else:
    gpu_file = DATA_DIR / "benchmark_gpu.json"
    print("이 기계에는 CUDA GPU가 없어 GPU 결과를 측정하지 않았습니다.")
    print("저장된 GPU 결과도 없습니다" if not gpu_file.exists() else f"저장된 GPU 결과: {gpu_file.name}")

# %% [markdown]
# 이 노트북을 만든 기계에는 GPU가 없었고, 저장소에도 GPU 측정 결과는 없습니다. GPU에 대해서는 여기서 숫자로 주장하지 않습니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("08-k", 답)` 한 번으로 확인합니다. 풀이는 숨겨진 셀에 있습니다.
#
# **08-1.** 시퀀스 길이 `n`, 헤드 수 `heads`, 배치 `batch`, 값 하나의 바이트 수 `bytes_per_value`를 받아 점수 행렬 전체의 크기를 **GiB**($2^{30}$ 바이트)로 돌려주는 `score_gib`를 완성하세요.

# %%
def score_gib(n, heads, batch, bytes_per_value):
    raise NotImplementedError

check("08-1", score_gib)

# %% jupyter={"source_hidden": true}
def score_gib(n, heads, batch, bytes_per_value):
    return batch * heads * n * n * bytes_per_value / 2**30

check("08-1", score_gib)

# %% [markdown]
# **08-2.** 두 키 블록 A, B에서 따로 구한 상태 `state = (m, l, acc)`(모양 `(쿼리, 1)`, `(쿼리, 1)`, `(쿼리, d_v)`)를 하나로 합치는 `merge(state_a, state_b)`를 완성하세요. 합친 상태의 `acc / l`이 두 블록 전체에 대한 어텐션이어야 하고, 점수가 1000처럼 커도 넘치면 안 됩니다.

# %%
def merge(state_a, state_b):
    m_a, l_a, acc_a = state_a
    m_b, l_b, acc_b = state_b
    ...
    return None

check("08-2", merge)

# %% jupyter={"source_hidden": true}
def merge(state_a, state_b):
    m_a, l_a, acc_a = state_a
    m_b, l_b, acc_b = state_b
    m = torch.maximum(m_a, m_b)
    c_a, c_b = torch.exp(m_a - m), torch.exp(m_b - m)  # <= 1: rescale to the common max
    return m, c_a * l_a + c_b * l_b, c_a * acc_a + c_b * acc_b

check("08-2", merge)

# %% [markdown]
# **08-3.** 아래 함수는 선형 어텐션을 맞게 계산하지만 $N\times N$ 행렬을 만듭니다. 결과는 그대로 두고 괄호 위치를 바꿔 $N\times N$ 행렬 없이 계산하도록 고치세요. 검사기는 N = 2048에서 최대 메모리도 잽니다.

# %%
def linear_attention_lean(q, k, v):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # (..., N, d)
    weights = phi_q @ phi_k.transpose(-2, -1)  # (..., N, N)
    return (weights / weights.sum(dim=-1, keepdim=True)) @ v

check("08-3", linear_attention_lean)

# %% jupyter={"source_hidden": true}
def linear_attention_lean(q, k, v):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1  # (..., N, d)
    kv = phi_k.transpose(-2, -1) @ v  # (..., d, d_v)
    norm = phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)  # (..., N, 1)
    return (phi_q @ kv) / norm

check("08-3", linear_attention_lean)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 청크 방식은 FLOP이 같은데 GPU에서는 더 빠르다고 합니다. 계산량이 아니라 무엇이 시간을 결정할 때 이런 일이 생길까요? 이 CPU에서 그렇지 않은 이유는 무엇일까요?
# 2. 학습(역전파)에서는 가중치 행렬 $P$가 기울기 계산에 필요합니다. $P$를 저장하지 않는 FlashAttention은 역전파에서 무엇을 대신 저장하고 무엇을 다시 계산할까요? ($m$과 $\ell$을 떠올려 보세요.)
# 3. 문서 요약 모델에 윈도 어텐션을 쓰면 무엇을 잃을까요? 일부 토큰만 전체를 보게 하는 방법은 어떤 절충일까요?
# 4. 선형 어텐션의 가중치 행렬은 랭크가 $d$ 이하였습니다. 어떤 과제(예: 긴 문맥에서 한 단어를 정확히 복사하기)에서 이것이 문제가 될까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 2번을 묶어 진행하세요. 답의 방향은 "메모리 대역폭이 병목이면 적게 읽고 쓰는 쪽이 이긴다"와 "m, ℓ(또는 logsumexp)만 저장하고 P는 다시 계산한다"입니다. 3·4번은 "답을 바꾸는 근사는 과제에 따라 대가가 다르다"로 정리합니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 점수 행렬은 $4BhN^2$ 바이트: N=16,384에서 헤드당 1 GiB, ViT-Base 설정이면 384 GiB | `score_matrix_bytes`, assert (원문 바로잡기) |
# | 단순 구현은 N×N 행렬 두 개를 동시에 든다 | 할당기 최대 메모리 = 2 × 행렬 크기, 작은 N과 N=16,384에서 assert |
# | 시간은 세 방법 모두 $O(N^2)$, 메모리는 단순 구현만 $O(N^2)$ | 저장된 벤치마크의 로그-로그 기울기 (시간 ≈ 2, 메모리 ≈ 2 / ≈ 1) |
# | 온라인 소프트맥스는 근사가 아니다 | float64에서 손 계산과 `chunked_attention`이 1e-12 안에서 일치 (인과 포함) |
# | 청크 구현의 메모리는 공식 $4(2Nd + 2Tb + Td + 4T)$대로 N에 비례 | 측정값이 공식과 1% 안 |
# | 윈도·선형 어텐션은 시간도 $O(N)$이지만 답이 바뀐다 | 창 밖 가중치, 출력 차이, 랭크 ≤ d |
#
# 다음 노트북부터는 마스크와 위치 정보처럼 "어떤 쌍을 볼지"를 정하는 방법을 다룹니다. 오늘 본 인과 마스크의 블록 건너뛰기가 그 첫 예였습니다.
