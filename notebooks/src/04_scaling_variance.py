# %% [markdown]
# # 04. 왜 √d_k로 나누는가
#
# 쿼리(query)와 키(key)의 내적(dot product)은 키 차원 $d_k$가 커질수록 넓게 퍼지고, 넓게 퍼진 점수(score)는 소프트맥스(softmax)를 포화시켜 기울기(gradient)를 없앱니다. $\sqrt{d_k}$로 나누면 이 퍼짐이 $d_k$와 상관없이 일정해집니다.
#
# **학습 목표**
# - 성분이 독립이고 평균 0, 분산 1이면 $\mathrm{Var}(q\cdot k) = d_k$임을 단계별로 유도하고, 직접 쓴 표본 추출 코드로 확인한다.
# - 점수가 넓게 퍼지면 소프트맥스가 포화(saturation)되어 엔트로피(entropy)와 기울기가 함께 줄어든다는 것을 $d_k$ = 4…1024에서 측정한다.
# - $\sqrt{d_k}$로 나누면 엔트로피·최대 가중치(weight)·기울기가 $d_k$와 상관없이 거의 일정하다는 것을 보이고, $d_k = 64$에서 실제로 무엇이 문제인지 분포로 말할 수 있다.
# - $1/\sqrt{d_k}$를 고정된 온도(temperature) $\tau = \sqrt{d_k}$로 해석한다 (05번 노트북 예고).
#
# **선수 지식**: 01번(소프트맥스), 03번(쿼리·키·밸류와 투영), 분산의 정의
#
# **예상 시간**: 혼자 공부 45분 / 스터디 발표 25분
#
# 출처 목록: [원문 000–004와 인용한 논문](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작하며 "공식 $\mathrm{softmax}(QK^\top/\sqrt{d_k})V$에서 $\sqrt{d_k}$를 빼면 무슨 일이 생길까?"를 물어보세요. 답은 두 단계입니다. ① 점수의 표준편차가 $\sqrt{d_k}$로 자란다(2–3절), ② 넓게 퍼진 점수는 소프트맥스를 원-핫에 가깝게 만들고 기울기를 없앤다(4절). 슬라이더 데모는 6절입니다.

# %% slideshow={"slide_type": "skip"}
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.exercises import check
from helpers.lessons.query_key_value import scaled_dot_product_attention
from helpers.lessons.weighted_average import softmax
from helpers.widgets import Explorer

setup()

# %% [markdown]
# ## 1. 직관: 차원이 크면 내적이 퍼진다
#
# 내적 $q\cdot k = \sum_j q_j k_j$는 $d_k$개 항의 합입니다. 항마다 부호가 제멋대로라 평균은 0 근처에 머물지만, 더하는 항이 많을수록 합이 0에서 멀리 벗어날 여지도 커집니다.
# 같은 방식으로 뽑은 쿼리 하나와 키 8개로, 키 차원(key dimension) $d_k$가 16일 때와 1024일 때의 점수를 비교해 봅니다.

# %%
for d_k in (16, 1024):
    seed_everything(1)
    q = torch.randn(d_k, dtype=torch.float64)        # (d_k,)
    k = torch.randn(8, d_k, dtype=torch.float64)     # (T_k=8, d_k)
    s = k @ q                                        # (8,) raw scores q·k
    print(f"d_k={d_k:>4}: 점수 {s.numpy().round(1)}  최대 가중치 {softmax(s).max():.3f}")

# %% [markdown]
# $d_k = 1024$의 점수는 수십 단위로 흩어져 있고, 소프트맥스는 가장 큰 점수 하나에 가중치를 거의 전부 줍니다. 왜 흩어지는지(2–3절), 그게 왜 학습에 나쁜지(4절)를 차례로 봅니다.
#
# 이것이 스케일을 도입한 논문의 동기이기도 합니다. [Vaswani 등 2017](../SOURCES.md)은 3.2.1절에서, $d_k$가 작을 때는 내적 어텐션과 가법 어텐션(02번)의 성능이 비슷하지만 $d_k$가 크면 스케일 없는 내적 어텐션이 가법 어텐션에 뒤진다고 쓰고, 그 원인을 "내적이 커져 소프트맥스가 기울기가 아주 작은 영역으로 밀려나기 때문이라고 **추정한다**(we suspect)"고 밝힙니다. 각주 4가 바로 2절의 계산, 곧 성분이 평균 0·분산 1이면 $q\cdot k$의 분산이 $d_k$라는 것입니다. Vaswani 등은 이 관찰의 근거로 [Britz 등 2017](../SOURCES.md)의 번역 실험을 인용합니다. 그 실험에서는 가법 어텐션이 곱셈형(내적)보다 조금씩 꾸준히 나았고, 어텐션 차원의 영향은 작았습니다. 02번 노트북이 예고한 "큰 $d_k$에서는 왜 나눠야 하는가"의 답이 이 노트북입니다.

# %% [markdown]
# ## 2. 수학: $\mathrm{Var}(q\cdot k) = d_k$
#
# **가정**: 성분 $q_1,\dots,q_{d_k},k_1,\dots,k_{d_k}$가 모두 서로 독립이고, 각각 평균 0, 분산(variance) 1. (정규분포일 필요는 없습니다.)
#
# **① 한 항의 평균.** 독립이면 곱의 기댓값은 기댓값의 곱이므로
# $$\mathbb{E}[q_j k_j] = \mathbb{E}[q_j]\,\mathbb{E}[k_j] = 0 \quad\Rightarrow\quad \mathbb{E}[q\cdot k] = 0.$$
#
# **② 한 항의 분산.** 평균이 0이므로 분산은 제곱의 기댓값이고, $q_j^2$와 $k_j^2$도 독립입니다.
# $$\mathrm{Var}(q_j k_j) = \mathbb{E}[q_j^2 k_j^2] - \big(\mathbb{E}[q_j k_j]\big)^2 = \mathbb{E}[q_j^2]\,\mathbb{E}[k_j^2] - 0 = 1.$$

# %% [markdown] slideshow={"slide_type": "subslide"}
# **③ 합의 분산.** 항 $q_j k_j$들은 서로 독립이므로 분산이 그대로 더해집니다.
# $$\mathrm{Var}(q\cdot k) = \sum_{j=1}^{d_k} \mathrm{Var}(q_j k_j) = d_k.$$
#
# **④ 나누기.** 상수 $c$에 대해 $\mathrm{Var}(X/c) = \mathrm{Var}(X)/c^2$이므로
# $$\mathrm{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = \frac{d_k}{d_k} = 1.$$
#
# 그러니 점수의 전형적인 크기, 표준편차(standard deviation)는 $\sqrt{d_k}$입니다. $d_k$로 나누면 분산이 $1/d_k$로 너무 줄고, $\sqrt{d_k}$로 나눠야 정확히 1이 됩니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: ②에서 "곱의 분산 = 분산의 곱"은 평균이 0일 때만 성립한다는 점을 짚어 주세요. 일반적으로는 $\mathrm{Var}(XY) = \sigma_X^2\sigma_Y^2 + \mu_X^2\sigma_Y^2 + \mu_Y^2\sigma_X^2$입니다. 연습문제 04-2는 분산이 1이 아닐 때의 변형입니다.

# %% [markdown]
# ## 3. 표본으로 확인하기
#
# 유도를 코드로 옮깁니다. 쿼리와 키를 $n$쌍 뽑아 내적을 구하고, 그 표본 평균과 표본 분산을 잽니다. 시드를 $d_k$마다 정해 두어 누가 실행해도 같은 표본이 나옵니다.

# %% tags=["save"]
import torch


def sample_dot_products(d_k, n, seed=0):
    """n dot products q·k of independent standard-normal q, k of length d_k: shape (n,), float64."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n, d_k, generator=gen, dtype=torch.float64)    # (n, d_k)
    k = torch.randn(n, d_k, generator=gen, dtype=torch.float64)    # (n, d_k)
    return (q * k).sum(dim=-1)                                      # (n,)


DKS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def dot_product_variance(d_ks=DKS, n=10_000):
    """Sample mean and variance of q·k and of q·k/√d_k for each d_k (seed = d_k)."""
    rows = []
    for d_k in d_ks:
        dots = sample_dot_products(d_k, n, seed=d_k)                # (n,)
        rows.append({"d_k": d_k, "mean": dots.mean().item(), "var": dots.var().item(),
                     "var_scaled": (dots / d_k**0.5).var().item()})
    return rows

# %% [markdown] slideshow={"slide_type": "subslide"}
# $d_k$ = 4부터 1024까지 2의 거듭제곱마다 10,000쌍을 뽑습니다. 표본 분산의 상대 표준오차(relative standard error)는 점수가 정규분포라면 $\sqrt{2/n} \approx 1.4\%$이고, 내적은 꼬리가 조금 더 두꺼워서 $\sqrt{(2 + 6/d_k)/n}$, 곧 $d_k = 4$에서 약 1.9%입니다. 허용 오차는 그 세 배가 넘는 **6%** 로 둡니다.

# %%
n = 10_000
stats = dot_product_variance(DKS, n)
print(" d_k | 평균(q·k) | 분산(q·k) | 분산/d_k | 분산(q·k/√d_k)")
for r in stats:
    print(f"{r['d_k']:>4} | {r['mean']:>9.2f} | {r['var']:>9.1f} | {r['var'] / r['d_k']:>8.2f} | {r['var_scaled']:>8.2f}")
for r in stats:
    assert abs(r["var"] / r["d_k"] - 1) < 0.06 and abs(r["var_scaled"] - 1) < 0.06     # Var(q·k) ≈ d_k
    assert abs(r["mean"]) < 4 * math.sqrt(r["d_k"] / n)                               # mean within 4 SE of 0

# %% [markdown] slideshow={"slide_type": "subslide"}
# 로그 축에서 보면 표본 분산이 이론선 $\mathrm{Var} = d_k$ 위에 놓이고, $\sqrt{d_k}$로 나눈 분산은 1에 머뭅니다.

# %%
fig, ax = plt.subplots(figsize=(6.4, 2.6))
ax.plot(DKS, DKS, color="tab:gray", linestyle="--", label="이론: 분산 = d_k")
ax.plot(DKS, [r["var"] for r in stats], "o", color="tab:gray", label="표본 분산(q·k)")
ax.plot(DKS, [r["var_scaled"] for r in stats], "o-", color="tab:blue", label="표본 분산(q·k/√d_k)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks(DKS, [str(d) for d in DKS])
ax.minorticks_off()
ax.set(xlabel="키 차원 d_k (로그 축)", ylabel="분산 (로그 축)", title="내적의 분산은 d_k에 비례하고, √d_k로 나누면 1")
ax.legend(loc="upper left")
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정규분포일 필요가 없다는 것도 확인해 둡니다. 성분이 $\pm 1$ 중 하나(평균 0, 분산 1)인 경우에도 분산은 $d_k$입니다.

# %%
seed_everything(3)
q_pm = torch.randint(0, 2, (10_000, 64)).double() * 2 - 1   # (n, d_k=64), entries ±1
k_pm = torch.randint(0, 2, (10_000, 64)).double() * 2 - 1   # (n, d_k=64)
var_pm = (q_pm * k_pm).sum(dim=-1).var().item()
print(f"±1 성분, d_k=64: 분산(q·k) = {var_pm:.0f}")
assert abs(var_pm / 64 - 1) < 0.06

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 000 다듬기**: [원문 000](../SOURCES.md)은 "$d_k$가 커질 경우, dot product의 **값이 커지게 되어**" 소프트맥스가 한 토큰에 쏠린다고 쓰고, 원문 004도 "값이 너무 커지는 것을 방지"한다고 정리합니다([원문 004](../SOURCES.md)). 틀린 말은 아니지만 더 정확히 말할 수 있습니다. 위 표에서 내적의 **평균은 모든 $d_k$에서 0 근처**입니다. 커지는 것은 값의 **퍼짐**, 곧 표준편차 $\sqrt{d_k}$입니다. 점수들이 0을 중심으로 양쪽으로 멀리 흩어지면 가장 큰 점수와 나머지의 **차이**가 커지고, 소프트맥스는 그 차이만 보기 때문에 포화됩니다(4절). "$|q\cdot k|$가 전형적으로 $\sqrt{d_k}$만큼 커진다"고 읽으면 원문의 말과 이 노트북의 측정이 같은 이야기입니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 쿼리와 키의 차원: $d_q = d_k$
#
# ([원문 001](../SOURCES.md)의 "Key의 차원은 3"은 03번에서 바로잡았습니다: $K_I = [1,0,1,1]$이므로 $d_k = 4$이고, 3은 내적 값입니다.) 쿼리와 키의 차원(성분 수)이 다르면 어떻게 될까요?

# %%
try:
    scaled_dot_product_attention(torch.randn(2, 3), torch.randn(5, 4), torch.randn(5, 7))
    raise AssertionError("a dot product of 3- and 4-dimensional vectors should not compute")
except RuntimeError as err:
    print("d_q=3, d_k=4:", type(err).__name__, "(차원이 다른 두 벡터의 내적은 계산되지 않음)")
out, _ = scaled_dot_product_attention(torch.randn(2, 4), torch.randn(5, 4), torch.randn(5, 7))
print("d_k=4, d_v=7: 출력 모양", tuple(out.shape))
assert out.shape == (2, 7)

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: 원문 000은 $d_q$와 $d_k$가 "거의 같은게 관례"라고 씁니다. 점수가 **내적**이라면 쿼리와 키의 차원(성분 수)은 관례가 아니라 **반드시 같아야** 합니다. 차원이 다르면 내적이 정의되지 않습니다(위 셀의 `RuntimeError`). 다른 점수 함수라면 사정이 다릅니다. 02번의 가법 어텐션은 $q$와 $k$를 각자 다른 행렬로 투영한 뒤 더하므로 $d_q \ne d_k$여도 됩니다. 02번의 내적(general) 점수 $(Wq)^\top k$도 먼저 $W$로 쿼리를 키의 차원으로 옮기므로 64차원 디코더 상태와 128차원 인코더 상태를 비교할 수 있었습니다. 내적 자체는 언제나 같은 차원의 두 벡터 사이에서 계산됩니다. 내적 어텐션에서도 달라도 되는 것은 밸류(value)의 차원 $d_v$입니다.

# %% [markdown]
# ## 4. 넓게 퍼진 점수가 소프트맥스에 하는 일: 포화
#
# 소프트맥스는 점수의 **차이**만 봅니다. 두 점수의 차이가 $\Delta$이면 가중치의 비는 $e^{\Delta}$입니다. 표준편차가 32인 점수($d_k = 1024$)에서는 1등과 2등 차이의 중앙값이 약 12이고(아래 출력), $e^{-12}$는 $10^{-5}$ 정도이니 사실상 원-핫(one-hot)이 됩니다. 이것이 포화입니다.

# %%
seed_everything(4)
top2 = (32 * torch.randn(10_000, 16, dtype=torch.float64)).topk(2, dim=-1).values   # (n, 2): 16 scores, std 32
gap = (top2[:, 0] - top2[:, 1]).median().item()
print(f"표준편차 32, 키 16개: 1등과 2등 점수 차이의 중앙값 {gap:.0f}, e^-차이 = {math.exp(-gap):.0e}")
assert gap > 10 and 11 < gap < 12.5   # "중앙값이 약 12"

# %% [markdown] slideshow={"slide_type": "subslide"}
# 포화가 왜 나쁜지는 소프트맥스의 기울기, 즉 야코비안(Jacobian)을 보면 압니다. $w = \mathrm{softmax}(s)$이면
# $$\frac{\partial w_i}{\partial s_j} = w_i(\delta_{ij} - w_j), \qquad J = \operatorname{diag}(w) - w w^\top.$$
# $w$가 원-핫 $e_m$이면 $J = \operatorname{diag}(e_m) - e_m e_m^\top = 0$입니다. 점수를 조금 바꿔도 가중치가 변하지 않으니, 손실에서 온 기울기가 점수를 거쳐 $W^Q$, $W^K$까지 가지 못합니다. 식을 코드로 옮기고 자동 미분(autograd)과 비교합니다.

# %% tags=["save"]
def softmax_jacobian(w):
    """∂w_i/∂s_j = w_i(δ_ij − w_j) of w = softmax(s), from the weights: (..., T) -> (..., T, T)."""
    return torch.diag_embed(w) - w.unsqueeze(-1) * w.unsqueeze(-2)

# %%
s = torch.tensor([2.0, -1.0, 0.5, 0.0], dtype=torch.float64)
J_auto = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=-1), s)   # (4, 4)
torch.testing.assert_close(softmax_jacobian(softmax(s)), J_auto)
for scale in (1, 10, 100):
    w = softmax(s * scale)
    print(f"점수 × {scale:>3}: 최대 가중치 {w.max():.4f},  ‖J‖ = {softmax_jacobian(w).norm():.0e}")
assert softmax_jacobian(softmax(s * 100)).norm() < 1e-60

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### $d_k$에 따라 측정하기
#
# $d_k$마다 무작위 쿼리 512개와 쿼리마다 키 16개를 뽑아(시드 고정), 점수를 **나누지 않을 때**와 **$\sqrt{d_k}$로 나눌 때** 행마다 네 가지를 잽니다.
# - 엔트로피 $-\sum_i w_i \log w_i$ (키 16개의 균등 분포면 $\log 16 \approx 2.77$, 원-핫이면 0)
# - 최대 가중치 (0.99를 넘으면 "포화된 행"으로 셉니다)
# - 야코비안의 프로베니우스 노름(Frobenius norm) $\|J\|_F$
# - 자동 미분으로 구한 쿼리에 대한 기울기 $\|\partial L/\partial q\|$. 손실은 $L = g\cdot(\text{어텐션 출력})$, $g$는 무작위 벡터입니다.
#
# 같은 역전파에서 점수(소프트맥스의 입력)에 대한 기울기 $\|\partial L/\partial s\|$도 받아 두었다가 4절 끝과 5절에서 씁니다.
#
# 두 기울기는 평균 대신 중앙값("전형적인 행")으로 요약합니다. 1등과 2등이 우연히 비슷한 소수의 행이 평균을 혼자 끌어올리기 때문입니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
SCALES = {"none": lambda d: 1.0, "sqrt": lambda d: d**0.5, "linear": lambda d: float(d)}

def saturation_rows(d_k, scale="sqrt", n_rows=512, n_keys=16, d_v=16, seed=0):
    """Per-row statistics of softmax(q·k / SCALES[scale](d_k)) for random rows (seed + d_k)."""
    if n_keys > 4096:                               # one row's T×T Jacobian (below): over 128 MiB
        raise ValueError(f"n_keys={n_keys}: T×T Jacobian per row over 128 MiB; use n_keys <= 4096")
    if n_rows * n_keys * (d_k + d_v) > 2**24:      # k and v in float64 over 128 MiB: a small kernel may die
        raise ValueError(f"n_rows * n_keys * (d_k + d_v) exceeds 2**24 float64 values (128 MiB): use fewer rows, "
                         f"e.g. n_rows={max(1, 2**24 // (n_keys * (d_k + d_v)))}")
    gen = torch.Generator().manual_seed(seed + d_k)
    q = torch.randn(n_rows, d_k, generator=gen).double().requires_grad_(True)   # (n, d_k)
    k = torch.randn(n_rows, n_keys, d_k, generator=gen).double()                # (n, T, d_k)
    v = torch.randn(n_rows, n_keys, d_v, generator=gen).double()                # (n, T, d_v)
    g = torch.randn(n_rows, d_v, generator=gen).double()                        # (n, d_v): ∂L/∂output
    scores = torch.einsum("nd,ntd->nt", q, k) / SCALES[scale](d_k)              # (n, T)
    scores.retain_grad()                                                         # ∂L/∂s: where saturation acts
    w = torch.softmax(scores, dim=-1)                                            # (n, T)
    out = torch.einsum("nt,ntv->nv", w, v)                                       # (n, d_v)
    (out * g).sum().backward()              # a linear loss: its gradient reaches q only through w
    w, top2 = w.detach(), scores.detach().topk(2, dim=-1).values                 # (n, T), (n, 2)
    jac, step = w.new_empty(n_rows), max(1, 2**21 // n_keys**2)                # (n,)
    for i in range(0, n_rows, step):        # T×T per row: 16 MiB of J at a time (or one row)
        jac[i:i + step] = softmax_jacobian(w[i:i + step]).flatten(-2).norm(dim=-1)
    return {"entropy": torch.special.entr(w).sum(-1), "max_weight": w.max(-1).values,
            "jacobian": jac, "grad_q": q.grad.norm(dim=-1),
            "grad_s": scores.grad.norm(dim=-1), "top_gap": top2[:, 0] - top2[:, 1]}

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def saturation_summary(d_k, scale="sqrt", **kw):
    """Mean entropy and max weight, share of saturated rows (max > 0.99), median ‖J‖, ‖∂L/∂q‖ and ‖∂L/∂s‖."""
    r = saturation_rows(d_k, scale, **kw)
    return {"entropy": r["entropy"].mean().item(), "max_weight": r["max_weight"].mean().item(),
            "saturated": (r["max_weight"] > 0.99).double().mean().item(),
            "jacobian": r["jacobian"].median().item(), "grad_q": r["grad_q"].median().item(),
            "grad_s": r["grad_s"].median().item()}

# %% slideshow={"slide_type": "skip"}
raw = {d: saturation_summary(d, "none") for d in DKS}
scaled = {d: saturation_summary(d, "sqrt") for d in DKS}

# %% slideshow={"slide_type": "subslide"}
print(" d_k | 각 칸: 나누지 않음 / √d_k로 나눔")
print("     | 엔트로피      | 최대 가중치 | 포화 비율   | ‖J‖ 중앙값       | ‖∂L/∂q‖ 중앙값")
for d in DKS:
    a, b = raw[d], scaled[d]
    print(f"{d:>4} | {a['entropy']:.2f} / {b['entropy']:.2f}  | {a['max_weight']:.2f} / {b['max_weight']:.2f}"
          f" | {a['saturated']:.2f} / {b['saturated']:.2f} | {a['jacobian']:<7.2g} / {b['jacobian']:.2f}"
          f" | {a['grad_q']:<#6.2g} / {b['grad_q']:.2f}")

# %% slideshow={"slide_type": "skip"}
def sweep_panels(panels, title):
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 2.9))
    for ax, (key, label, log_y) in zip(axes, panels):
        ax.plot(DKS, [raw[d][key] for d in DKS], "o-", color="tab:gray", markersize=4, label="나누지 않음")
        ax.plot(DKS, [scaled[d][key] for d in DKS], "o-", color="tab:blue", markersize=4, label="√d_k로 나눔")
        ax.set_xscale("log", base=2)
        ax.set_xticks(DKS, [str(d) for d in DKS], fontsize=8)
        ax.minorticks_off()
        ax.set_yscale("log" if log_y else "linear")
        ax.set(xlabel="키 차원 d_k", title=label)
    axes[0].legend(loc="lower left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return axes


# %% slideshow={"slide_type": "subslide"}
axes = sweep_panels([("entropy", "평균 엔트로피", False), ("max_weight", "평균 최대 가중치", False)],
                    "나누지 않으면 가중치가 한 키로 쏠린다 (키 16개, 쿼리 512개)")
axes[0].axhline(math.log(16), color="black", linestyle=":", linewidth=1)
plt.show()

# %% slideshow={"slide_type": "subslide"}
sweep_panels([("jacobian", "‖J‖ 중앙값 (로그 축)", True), ("grad_q", "‖∂L/∂q‖ 중앙값 (로그 축)", True)],
             "나누지 않으면 d_k가 클수록 기울기가 사라진다")
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 그림에서 읽은 내용을 assert로 확인해 둡니다.
# - **나누지 않을 때**: 엔트로피는 $d_k$마다 계속 줄고 최대 가중치는 계속 커집니다. $d_k = 1024$에서는 행의 70% 이상이 포화되고, 야코비안의 중앙값은 $d_k = 4$의 1000분의 1보다 작으며, 쿼리에 대한 기울기도 가장 컸을 때의 100분의 1보다 작습니다.
# - **$\sqrt{d_k}$로 나눌 때**: 네 지표 모두 $d_k$와 상관없이 거의 일정합니다 (최댓값/최솟값 비가 엔트로피 1.05, 최대 가중치 1.2, $\|J\|$ 1.1, $\|\partial L/\partial q\|$ 1.3 미만). 포화된 행은 하나도 없습니다.

# %%
col = lambda table, key: [table[d][key] for d in DKS]
spread = lambda xs: max(xs) / min(xs)
pairs = lambda xs: list(zip(xs, xs[1:]))
assert all(b < a for a, b in pairs(col(raw, "entropy"))) and all(b > a for a, b in pairs(col(raw, "max_weight")))
assert raw[1024]["saturated"] > 0.7 and raw[1024]["jacobian"] < 1e-3 * raw[4]["jacobian"]
assert raw[1024]["grad_q"] < 1e-2 * max(col(raw, "grad_q"))
assert spread(col(scaled, "entropy")) < 1.05 and spread(col(scaled, "max_weight")) < 1.2
assert spread(col(scaled, "jacobian")) < 1.1 and spread(col(scaled, "grad_q")) < 1.3
assert max(col(scaled, "saturated")) == 0.0
print(f"나누지 않음, d_k 4 → 1024: ‖J‖ 중앙값 {raw[4]['jacobian']:.2f} → {raw[1024]['jacobian']:.1g}, "
      f"포화 비율 {raw[4]['saturated']:.2f} → {raw[1024]['saturated']:.2f}")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 나누지 않을 때 $\|\partial L/\partial q\|$의 중앙값이 $d_k = 16$ 근처까지는 오히려 **커지는** 것에 주목하세요. $\partial (q\cdot k)/\partial q = k$이고 $\|k\| \approx \sqrt{d_k}$이므로, 포화되기 전에는 큰 점수가 기울기도 키웁니다. 그러다 소프트맥스가 포화되면 $J \to 0$이 모든 것을 덮어 버립니다. 이 $\|k\|$ 인수를 빼고 포화가 작용하는 곳, 곧 소프트맥스의 입력에서 잰 $\|\partial L/\partial s\|$는 나누지 않으면 $d_k$와 함께 줄기만 합니다(아래 출력). 나누지 않은 모델은 $d_k$에 따라 기울기가 너무 크거나 너무 작아 학습률(learning rate) 하나로 맞추기 어렵습니다. $\sqrt{d_k}$로 나누면 기울기의 중앙값이 $d_k$와 상관없이 1 근처에 머뭅니다. $d_k$가 256 이상이면 나누지 않은 쪽의 중앙값이 더 작고, 1024에서는 100배 넘게 작습니다.

# %%
big = [d for d in DKS if d >= 256]
assert max(col(raw, "grad_q")) > raw[4]["grad_q"]      # before saturating, larger scores mean larger gradients
assert all(raw[d]["grad_q"] < scaled[d]["grad_q"] for d in big)
assert raw[1024]["grad_q"] < scaled[1024]["grad_q"] / 100
assert 0.9 < min(col(scaled, "grad_q")) and max(col(scaled, "grad_q")) < 1.15
print(f"√d_k로 나눔: ‖∂L/∂q‖ 중앙값 {min(col(scaled, 'grad_q')):.1f} ~ {max(col(scaled, 'grad_q')):.1f}")
print("‖∂L/∂s‖ 중앙값 (소프트맥스 입력), 나누지 않음:", {d: float(f"{raw[d]['grad_s']:.2g}") for d in DKS})
print(f"‖∂L/∂s‖ 중앙값, √d_k로 나눔: {min(col(scaled, 'grad_s')):.1f} ~ {max(col(scaled, 'grad_s')):.1f}")
assert all(b < a for a, b in pairs(col(raw, "grad_s"))) and spread(col(scaled, "grad_s")) < 1.1
jac_curves = (col(raw, "jacobian"), col(scaled, "jacobian"))          # drawn again in the d_k explorer (6절)

# %% [markdown]
# ## 5. 트랜스포머의 $d_k = 64$에서는 무엇이 문제인가
#
# 트랜스포머 원 논문은 헤드마다 키 차원이 $d_k = 64$입니다. 위 표(키 16개)에서 이 행을 보면 나누지 않은 쪽의 $\|\partial L/\partial q\|$ **중앙값은 오히려 더 큽니다**. 그러나 그것은 연쇄 법칙(chain rule)의 인수 $\partial(q\cdot k)/\partial q = k$, 곧 $\|k\| \approx \sqrt{d_k} = 8$ 때문입니다. 이 8배는 포화와 상관없이 모든 행에 똑같이 곱해지는 상수라서 학습률을 8배 한 것과 다르지 않습니다. 포화는 그 인수가 없는 소프트맥스의 입력에서 재야 보입니다($\|\partial L/\partial s\|$, 4절 표의 $\|J\|$ 열도 같은 방향). 거기서는 나누지 않은 쪽이 **중앙값에서 이미 약 1/5**입니다. 그런데 모든 행에 똑같이 곱해지는 배수라면 8배든 1/5이든 학습률이나 Adam 같은 옵티마이저(optimizer)가 흡수합니다. 흡수하지 못하는 것은 행마다 다른 크기, 곧 **분포**입니다. 512개 행 각각의 두 기울기를 로그 축 히스토그램으로 그려 봅니다.

# %% slideshow={"slide_type": "subslide"}
rows64 = {name: saturation_rows(64, scale) for name, scale in (("나누지 않음", "none"), ("√d_k로 나눔", "sqrt"))}
HIST_EDGES = np.logspace(-8, 2, 41)                 # the same 40 bins for both series and both panels
fig, axes = plt.subplots(1, 2, figsize=(9.5, 2.9), sharey=True)
for ax, key, label in zip(axes, ("grad_q", "grad_s"), ("‖∂L/∂q‖ (쿼리)", "‖∂L/∂s‖ (소프트맥스 입력)")):
    for (name, r), color in zip(rows64.items(), ("tab:gray", "tab:blue")):
        sns.histplot(x=r[key].clamp_min(1e-8).numpy(), bins=np.log10(HIST_EDGES), log_scale=True, color=color,
                     alpha=0.6, element="step", label=name, ax=ax)   # on a log axis seaborn takes log10 edges
    ax.set(xlabel=f"{label}, 로그 축", ylabel="행의 수", title=f"d_k = 64: {label}")
axes[0].axvline(0.1, color="tab:red", linestyle=":", linewidth=1, label="0.1 (아래 출력의 기준)")
axes[0].legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "skip"}
assert all(HIST_EDGES[0] <= r[key].clamp_min(1e-8).min() and r[key].max() <= HIST_EDGES[-1]
           for r in rows64.values() for key in ("grad_q", "grad_s"))          # every row falls in a bin

# %% slideshow={"slide_type": "subslide"}
for name, r in rows64.items():
    g, sat = r["grad_q"], r["max_weight"] > 0.99
    lo, hi = torch.quantile(g, torch.tensor([0.05, 0.95], dtype=torch.float64)).tolist()
    print(f"{name:<8} 중앙값 {g.median():.1f},  포화된 행 {sat.double().mean():.0%},  기울기 < 0.1인 행 "
          f"{(g < 0.1).double().mean():.0%},  5%~95% 범위 {lo:.0e} ~ {hi:.0f}")
g_raw, sat_raw = rows64["나누지 않음"]["grad_q"], rows64["나누지 않음"]["max_weight"] > 0.99
g_sc = rows64["√d_k로 나눔"]["grad_q"]
s_raw, s_sc = rows64["나누지 않음"]["grad_s"].median(), rows64["√d_k로 나눔"]["grad_s"].median()
print(f"‖∂L/∂s‖ 중앙값: 나누지 않음 {s_raw:.2f}, 나눔 {s_sc:.2f} (나누지 않은 쪽이 약 1/{s_sc / s_raw:.0f})")
assert 4 < s_sc / s_raw < 6 and g_raw.median() / s_raw > 7    # ∂L/∂q carries the extra ‖k‖ ≈ 8
print(f"나누지 않음, 포화된 행만: 기울기 중앙값 {g_raw[sat_raw].median():.2f} (나눈 쪽 중앙값의 약 1/50)")
assert g_raw.median() > g_sc.median() and 0.25 < sat_raw.double().mean() < 0.35 and g_sc.min() > 0.1
assert 0.15 < (g_raw < 0.1).double().mean() < 0.3 and g_raw[sat_raw].median() < g_sc.median() / 20
tiny_raw = (g_raw < 0.01).double().mean().item()
print(f"나누지 않음, 기울기 < 0.01인 행 {tiny_raw:.0%} (포화된 행보다 훨씬 적음)")
assert 0.08 < tiny_raw < 0.15 and tiny_raw < sat_raw.double().mean() / 2

# %% [markdown] slideshow={"slide_type": "subslide"}
# 읽는 법:
# - **나누면** 기울기가 한 덩어리로 모여 있습니다. 중앙값이 약 1이고, 5%~95% 범위가 4배 안쪽이며, 0.1(왼쪽 그림의 빨간 점선)보다 작은 쿼리 기울기가 없습니다.
# - **나누지 않으면** 분포가 아주 작은 값 쪽으로 긴 꼬리를 늘어뜨립니다. 포화되지 않은 행의 $\|\partial L/\partial q\|$는 $\|k\| \approx 8$ 인수 덕에 나눈 쪽보다 **큰** 값을 받고(그래서 중앙값이 1.8), 포화된 약 29%의 행은 중앙값 0.02 정도의 작은 기울기를 받습니다. 5%~95% 범위가 네 자릿수 넘게 벌어집니다. 오른쪽 $\|\partial L/\partial s\|$에서는 그 인수가 없어 회색 분포의 중앙값(0.22)이 파란 분포(1.04)보다 왼쪽에 있습니다.
#
# 그러니 키 16개, $d_k = 64$에서 맞는 말은 "기울기가 사라진다"가 아니라 **"소프트맥스를 지나는 기울기가 중앙값에서 이미 약 1/5이고, 행의 약 30%가 포화되어 기울기가 크게 줄며(쿼리 기울기 0.1 미만이 23%, 0.01 미만이 12%), 나머지 행의 기울기는 자릿수가 몇 단계나 다를 만큼 흩어진다"** 입니다. 학습률 하나로 이 모든 행을 맞출 수 없습니다. $d_k$가 커질수록 포화된 행이 늘어나(1024에서 70% 이상) 결국 중앙값까지 무너집니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 키의 개수에 따라 달라진다
#
# "중앙값은 오히려 크다"는 키 16개에서 잰 결과입니다. $d_k = 64$에 그대로 두고 키의 개수만 4개에서 64개까지 바꿔 봅니다. 키가 많을수록 맨 위에 점수가 몰려 1등과 2등 점수의 차이가 줄어드니 포화는 줄지만, 포화되지 않은 행의 기울기는 더 커집니다.

# %%
n_keys_table = {}
print("키 개수 | ‖∂L/∂q‖ 중앙값: 나누지 않음 / √d_k로 나눔 | 포화 비율(나누지 않음) | 1–2등 점수 차 중앙값")
for n_keys in (4, 8, 16, 32, 64):
    r_raw, r_sc = saturation_rows(64, "none", n_keys=n_keys), saturation_rows(64, "sqrt", n_keys=n_keys)
    med_raw, med_sc = r_raw["grad_q"].median().item(), r_sc["grad_q"].median().item()
    sat = (r_raw["max_weight"] > 0.99).double().mean().item()
    n_keys_table[n_keys] = (med_raw, med_sc, sat, r_raw["top_gap"].median().item())
    print(f"{n_keys:>7} | {med_raw:>5.2f} / {med_sc:.2f}{'':<24} | {sat:>4.0%}{'':<18} | {n_keys_table[n_keys][3]:.1f}")

# %% slideshow={"slide_type": "skip"}
assert n_keys_table[4][0] < n_keys_table[4][1] / 4 and n_keys_table[4][2] > 0.45    # 4 keys: the median collapses
assert n_keys_table[8][0] < n_keys_table[8][1] and n_keys_table[32][0] > 2 * n_keys_table[32][1]
assert all(n_keys_table[a][2] > n_keys_table[b][2] for a, b in pairs(sorted(n_keys_table)))
assert all(n_keys_table[a][3] > n_keys_table[b][3] for a, b in pairs(sorted(n_keys_table)))   # the top-2 gap shrinks
assert 0.6 < n_keys_table[64][1] < 0.7 and n_keys_table[8][1] > 1.1                          # scaled: 0.66 … 1.18

# %% [markdown] slideshow={"slide_type": "subslide"}
# 키가 4개뿐이면 $d_k = 64$에서도 행의 절반 넘게 포화되어 나누지 않은 쪽의 중앙값이 나눈 쪽의 4분의 1 아래로 떨어집니다. 8개면 둘이 비슷하고, 16개 이상이면 나누지 않은 쪽의 중앙값이 더 큽니다. 어느 경우든 나누지 않으면 기울기가 키의 개수와 $d_k$ 양쪽에 따라 크게 달라집니다. 나누면 $d_k$와는 상관없어지지만 키의 개수에 따라서는 여전히 움직입니다(키 8개 1.18, 64개 0.66: 키가 많을수록 가중치가 여러 키에 나뉘어 작아집니다). 토론 질문 4는 이 표를 키가 훨씬 많은 쪽으로 이어 갑니다.
#
# > **원문 바로잡기**: [원문 004](../SOURCES.md)는 $d_k$가 크면 소프트맥스가 한 곳에 몰려 "gradient가 거의 0이 되어 학습이 멈춥니다"라고 쓰고, 그 예로 $d_k = 64$를 듭니다. "학습이 멈춘다"는 과장이지만, 소프트맥스를 지나는 기울기 $\|\partial L/\partial s\|$는 이미 중앙값에서 약 1/5이고 약 30%의 행(키 16개)이 포화되어 기울기가 크게 줄어듭니다. 키가 16개 이상이면 쿼리에 대한 기울기의 중앙값은 오히려 크지만, 그것은 $\|k\| \approx \sqrt{d_k}$ 인수 덕입니다. 키가 4개처럼 적으면 중앙값도 작아지지만 "0이 되어 학습이 멈추는" 정도는 아닙니다. 키 16개에서 쿼리 기울기의 중앙값까지 사라지는 것은 $d_k$가 수백 이상일 때입니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 히스토그램의 회색 분포가 아주 작은 값 쪽으로 긴 꼬리를 늘어뜨린 것을 먼저 보여 주고, "쿼리 기울기의 중앙값만 보면 나누지 않은 쪽이 더 좋아 보인다"는 함정을 짚으세요. 그 차이는 ‖k‖ = √d_k = 8 인수일 뿐이고, 오른쪽 패널(소프트맥스 입력)에서는 나누지 않은 쪽이 중앙값부터 약 1/5입니다. 그 함정도 키 16개에서의 이야기이고, 키 4개면 뒤집힌다는 것을 표로 보여 주세요. 이 측정으로 보면 √d_k로 나누는 이득은 64에서 학습이 불가능해지는 것을 막는 데 있다기보다, 행마다 비슷한 크기의 기울기(나누면 5%~95% 범위가 0.5~2)를 받게 해 학습률 하나로 안정적으로 학습하게 하는 데 있습니다. Vaswani 등도 원인을 "추정한다"고 썼을 뿐이니, 이것도 확정된 설명이 아니라 해석이라고 말해 두세요.

# %% [markdown]
# ### 원문 004의 $[32, 1, 2]$ 예
#
# 원문 004는 $d_k = 64$에서 점수 $[32, 1, 2]$를 예로 들어, 나누기 전 가중치가 $[1.00, 0.00, 0.00]$, 8로 나눈 뒤 $[4, 0.125, 0.25]$의 가중치가 $[0.95, 0.02, 0.03]$인 "부드러운 분포"가 된다고 씁니다.

# %%
seed_scores = torch.tensor([32.0, 1.0, 2.0], dtype=torch.float64)
w_before, w_after = softmax(seed_scores), softmax(seed_scores / math.sqrt(64))
print("나누기 전:", w_before.numpy().round(3), " 나눈 뒤 점수:", (seed_scores / 8).tolist())
print("나눈 뒤:  ", w_after.numpy().round(3), f" 합 {w_after.sum():.3f}")
print(f"32는 d_k=64 점수 표준편차(8)의 {32 / math.sqrt(64):.0f}배")
assert w_after.numpy().round(3).tolist() == [0.958, 0.02, 0.023]   # the seed prints [0.95, 0.02, 0.03]
assert w_after.numpy().round(2).tolist() == [0.96, 0.02, 0.02]
assert w_after.max() > 0.95 and w_before.max() > 0.9999

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: $\mathrm{softmax}([4, 0.125, 0.25]) = [0.958, 0.020, 0.023]$입니다. 원문의 $[0.95, 0.02, 0.03]$은 어느 자리에서 반올림해도 나오지 않습니다(둘째 자리까지면 $[0.96, 0.02, 0.02]$). 더 중요한 것은 이 결과가 "부드러운 분포"가 아니라는 점입니다. 가중치의 96%가 여전히 한 키에 몰려 있습니다. 점수 32는 $d_k = 64$에서 표준편차 8의 **4배**인 드문 값이라, 나눈 뒤에도 두 번째로 큰 점수보다 3.75(표준편차의 약 4배)만큼 앞섭니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 토론 질문 3의 실마리입니다. $\sqrt{d_k}$로 나누는 것은 **전형적인** 점수의 퍼짐을 1로 맞출 뿐, 학습된 모델이 일부러 만든 큰 차이까지 없애지는 않습니다. 토론 전에는 이 말을 하지 마세요.

# %% [markdown]
# ## 6. 슬라이더: $d_k$를 바꿔 보기
#
# 슬라이더로 $d_k$를 4부터 1024까지 바꾸면 한 그림의 네 칸이 함께 바뀝니다.
# - **위 왼쪽**: 내적 $q\cdot k$ 4,000개의 분포. 가로축을 ±100으로 고정해 퍼짐이 자라는 것이 보입니다.
# - **위 오른쪽**: $\sqrt{d_k}$로 나눈 분포. 가로축 ±4(표준화된 축)에서 모양이 그대로입니다.
# - **아래 왼쪽**: 키 8개짜리 소프트맥스 한 행 (회색: 나누지 않음, 파랑: 나눔).
# - **아래 오른쪽**: 4절에서 잰 $\|J\|$ 중앙값 곡선과 현재 $d_k$(빨간 점).
#
# 빠르게 따라오도록 $d_k$마다 필요한 숫자를 미리 계산해 두고, 슬라이더가 움직이면 그림의 막대 높이와 글자만 바꿉니다(접어 둔 셀).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### $d_k$ 탐색기

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def dk_panel_data(d_k, n_samples=4000, n_keys=8, n_bins=40):
    """What the d_k explorer draws for one d_k: histograms of q·k and q·k/√d_k, one softmax row."""
    dots = sample_dot_products(d_k, n_samples, seed=d_k)                          # (n,)
    root = d_k**0.5
    gen = torch.Generator().manual_seed(7 * d_k)
    q = torch.randn(d_k, generator=gen, dtype=torch.float64)                       # (d_k,)
    k = torch.randn(n_keys, d_k, generator=gen, dtype=torch.float64)               # (T, d_k)
    raw_edges, scaled_edges = torch.linspace(-100, 100, 2 * n_bins + 1), torch.linspace(-4, 4, n_bins + 1)
    density = lambda x, e: torch.histogram(x.float(), bins=e, density=True).hist   # (bins,)
    return {"d_k": d_k, "std_raw": dots.std().item(), "std_scaled": (dots / root).std().item(),
            "hist_raw": density(dots, raw_edges), "raw_edges": raw_edges,
            "hist_scaled": density(dots / root, scaled_edges), "scaled_edges": scaled_edges,
            "w_raw": torch.softmax(k @ q, -1), "w_scaled": torch.softmax(k @ q / root, -1)}


def dk_explorer_figure(jacobian_raw, jacobian_scaled, figsize=(9.5, 3.8), dpi=72):
    """The d_k explorer's figure, built once; returns (figure, update(d_k)) that redraws in place."""
    import math

    import matplotlib.pyplot as plt

    data = {d: dk_panel_data(d) for d in DKS}                                      # precomputed per d_k
    fig, ((h_raw, h_sc), (row_ax, jac_ax)) = plt.subplots(2, 2, figsize=figsize, dpi=dpi)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.1, top=0.92, wspace=0.22, hspace=0.55)
    first = data[64]
    step_raw = h_raw.stairs(first["hist_raw"].numpy(), first["raw_edges"].numpy(), fill=True, color="tab:gray", alpha=0.7)
    step_sc = h_sc.stairs(first["hist_scaled"].numpy(), first["scaled_edges"].numpy(), fill=True, color="tab:blue", alpha=0.7)
    h_raw.set(xlim=(-100, 100), ylim=(0, 0.21), xticks=[-100, 0, 100], yticks=[])   # few labels: text is
    h_sc.set(xlim=(-4, 4), ylim=(0, 0.62), xticks=[-4, 0, 4], yticks=[])            # most of a redraw
    bars_raw = row_ax.bar([i - 0.2 for i in range(8)], first["w_raw"].tolist(), width=0.4, color="tab:gray")
    bars_sc = row_ax.bar([i + 0.2 for i in range(8)], first["w_scaled"].tolist(), width=0.4, color="tab:blue")
    row_ax.set(ylim=(0, 1.05), yticks=[0, 1], xticks=[], xlabel="키 8개 (회색: 나누지 않음, 파랑: √d_k로 나눔)",
               ylabel="가중치")
    log_d = torch.log2(torch.tensor(DKS, dtype=torch.float64))                    # plain axes: no log-scale ticks
    jac_ax.plot(log_d.tolist(), torch.log10(torch.tensor(jacobian_raw)).tolist(), "o-", color="tab:gray", markersize=3)
    jac_ax.plot(log_d.tolist(), torch.log10(torch.tensor(jacobian_scaled)).tolist(), "o-", color="tab:blue", markersize=3)
    (marker,) = jac_ax.plot([6, 6], [0, 0], "o", color="tab:red", markersize=7)
    jac_ax.set(xticks=[2, 6, 10], xticklabels=["4", "64", "1024"], xlabel="d_k (로그 축)",
               ylim=(-6, 0.2), yticks=[-6, 0], yticklabels=["10⁻⁶", "1"])
    jac_ax.set_title("‖J‖ 중앙값 (로그 축)", fontsize=10)
    for ax in (h_raw, h_sc, row_ax, jac_ax):
        ax.tick_params(labelfontfamily="DejaVu Sans", labelsize=8)   # no Hangul in ticks: skip the font fallback
    jac_at = {d: (math.log10(a), math.log10(b)) for d, a, b in zip(DKS, jacobian_raw, jacobian_scaled)}

    def update(d_k):
        p = data[d_k]
        step_raw.set_data(p["hist_raw"].numpy())
        step_sc.set_data(p["hist_scaled"].numpy())
        for bar, h in zip(bars_raw, p["w_raw"].tolist()):
            bar.set_height(h)
        for bar, h in zip(bars_sc, p["w_scaled"].tolist()):
            bar.set_height(h)
        marker.set_data([math.log2(d_k)] * 2, jac_at[d_k])
        h_raw.set_title(f"q·k: 표준편차 {p['std_raw']:.1f} (√d_k = {d_k**0.5:.1f})", fontsize=10)
        h_sc.set_title(f"q·k/√d_k: 표준편차 {p['std_scaled']:.2f}", fontsize=10)
        row_ax.set_title(f"소프트맥스 한 행 (d_k = {d_k}): 최대 {p['w_raw'].max():.2f} / {p['w_scaled'].max():.2f}",
                         fontsize=10)
        return p

    return fig, update

# %% tags=["nbval-ignore-output"]
def dk_explorer(value=64):                            # the figure is built once, then redrawn in place
    fig, update = dk_explorer_figure(*jac_curves)
    return Explorer(fig, update, {"d_k": widgets.SelectionSlider(options=list(DKS), value=value, description="d_k")})

dk_explorer(value=64)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 그림 코드로 $d_k$ = 4와 1024를 그립니다.

# %%
shown = {}
fig, update = dk_explorer_figure(*jac_curves, figsize=(9.5, 4.4), dpi=100)
shown[4] = update(4)
plt.show()

# %% slideshow={"slide_type": "subslide"}
fig, update = dk_explorer_figure(*jac_curves, figsize=(9.5, 4.4), dpi=100)
shown[1024] = update(1024)
plt.show()

# %% slideshow={"slide_type": "skip"}
for d_k, p in shown.items():
    assert abs(p["std_raw"] / math.sqrt(d_k) - 1) < 0.05 and abs(p["std_scaled"] - 1) < 0.05
assert shown[1024]["w_raw"].max() > 0.999 and shown[1024]["w_scaled"].max() < 0.9
assert shown[4]["w_raw"].max() < 0.9

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 4에서 1024로 천천히 드래그하면서 위 왼쪽의 회색 분포가 낮고 넓게 퍼지는 동안 위 오른쪽의 파란 분포는 그대로인 것, 아래 왼쪽에서 회색 막대가 하나만 남는 것을 함께 보여 주세요. 오른쪽 아래의 회색 곡선은 $d_k = 32$~64부터 내려가기 시작해 256 이상에서 급격히 떨어집니다.

# %% [markdown]
# ## 7. $\sqrt{d_k}$는 고정된 온도다
#
# 05번 노트북에서 다룰 온도 $\tau$는 $\mathrm{softmax}(z/\tau)$의 $\tau$입니다. 그러니 $q\cdot k$를 $\sqrt{d_k}$로 나누는 것은 **온도를 $\tau = \sqrt{d_k}$로 고정**하는 것과 같습니다. 스케일드 닷프로덕트 어텐션(scaled dot-product attention)이 바로 그 계산인지 확인합니다.

# %%
seed_everything(6)
d_k = 256
q = torch.randn(3, d_k)     # (T_q=3, d_k)
k = torch.randn(16, d_k)    # (T_k=16, d_k)
v = torch.randn(16, 5)      # (T_k=16, d_v=5)
raw_scores = q @ k.T        # (3, 16)

by_temperature = softmax(raw_scores / math.sqrt(d_k))   # softmax(z / τ) with τ = √d_k
out, attn = scaled_dot_product_attention(q, k, v)        # 03's attention
torch.testing.assert_close(attn, by_temperature)
torch.testing.assert_close(out, by_temperature @ v)
torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
print(f"softmax(q·k / τ), τ={math.sqrt(d_k):.0f} = 03번 어텐션의 가중치, 출력 = PyTorch SDPA: 모두 같습니다.")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 다른 온도를 고르면 어떻게 될까요? $d_k = 256$에서 $\tau = 1$(나누지 않음), $\tau = \sqrt{d_k} = 16$, $\tau = d_k = 256$(너무 많이 나눔)을 4절과 같은 방법으로 비교합니다.

# %%
taus = {"τ = 1": "none", "τ = √d_k = 16": "sqrt", "τ = d_k = 256": "linear"}
by_tau = {name: saturation_summary(256, scale) for name, scale in taus.items()}
for name, r in by_tau.items():
    print(f"{name:<14} 엔트로피 {r['entropy']:.2f} (최대 {math.log(16):.2f}), 최대 가중치 {r['max_weight']:.2f}, "
          f"‖∂L/∂q‖ 중앙값 {r['grad_q']:.2g}")
e = [r["entropy"] for r in by_tau.values()]
g = [r["grad_q"] for r in by_tau.values()]
assert e[0] < e[1] < e[2] and e[2] > 0.99 * math.log(16)
assert g[1] > 3 * g[0] and g[1] > 3 * g[2]

# %% [markdown] slideshow={"slide_type": "subslide"}
# $\tau = d_k$로 너무 많이 나누면 가중치가 거의 균등해지고(엔트로피가 최대 $\log 16$에 붙음) 쿼리에 대한 기울기도 다시 작아집니다. 점수 차이가 $1/\sqrt{d_k}$배로 눌려 쿼리가 무엇을 보든 결과가 비슷해지기 때문입니다. $\sqrt{d_k}$는 "너무 뾰족하지도, 너무 평평하지도 않게" 점수의 표준편차를 1로 맞추는 온도입니다. 원문 004의 $\mathrm{softmax}\big(QK^\top/(\tau\sqrt{d_k})\big)$는 이 고정 온도 위에 조절용 온도 $\tau$를 하나 더 곱한 것입니다. 05번 노트북에서 $\tau$를 슬라이더로 움직여 봅니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("04-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **04-1.** 쿼리 `q` (…, T_q, d_k)와 키 `k` (…, T_k, d_k)를 받아 점수 행렬 $qk^\top/\sqrt{d_k}$ (…, T_q, T_k)를 돌려주는 `scaled_scores`를 완성하세요. 앞쪽 배치 차원이 있어도 동작해야 합니다. 03번에서 저장한 `attention_scores`는 부르지 말고 직접 쓰세요(검사가 알아챕니다).

# %%
def scaled_scores(q, k):
    raise NotImplementedError

check("04-1", scaled_scores)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def scaled_scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])

check("04-1", scaled_scores)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **04-2.** $d_k = 64$이고, 쿼리 성분은 평균 0·분산 4, 키 성분은 평균 0·분산 1이며 모두 독립입니다. $q\cdot k$를 어떤 수 $c$로 나눠야 점수의 분산이 1이 될까요? 먼저 2절의 ②를 고쳐 써서 예측하고, 숫자 `c`를 답한 뒤 표본으로 확인하세요.

# %%
c = ...

check("04-2", c)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
c = math.sqrt(64 * 4 * 1)   # Var(q·k) = d_k · Var(q_j) · Var(k_j)

seed_everything(42)
q_ex = 2 * torch.randn(20_000, 64, dtype=torch.float64)   # (n, d_k), variance 4
k_ex = torch.randn(20_000, 64, dtype=torch.float64)       # (n, d_k), variance 1
print(f"표본 분산(q·k / c) = {((q_ex * k_ex).sum(-1) / c).var():.2f}")
check("04-2", c)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **04-3.** 역전파(backward pass)는 J를 만들지 않습니다. 가중치 `w` = softmax(s) (…, T)와 위에서 내려온 기울기 `g` = $\partial L/\partial w$ (…, T)를 받아, J를 만들지 않고 $\partial L/\partial s = J^\top g$를 O(T)로 돌려주는 `softmax_backward(w, g)`를 쓰세요. 4절의 $J = \operatorname{diag}(w) - ww^\top$을 $g$에 곱한 식을 항별로 풀면 T×T 행렬 없이 계산할 수 있습니다. 먼저 손으로 유도하세요. 앞쪽 배치 차원이 있어도 동작해야 합니다. `softmax_jacobian`, `diag`·`diag_embed`·`eye`·`outer`, 자동 미분(`torch.autograd`, `torch.func`)은 쓰지 마세요. 검사가 알아채고, T×T 크기의 텐서를 만들어도 알려 줍니다. 검사는 자동 미분으로 구한 기울기와 비교합니다.

# %%
def softmax_backward(w, g):
    raise NotImplementedError

check("04-3", softmax_backward)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def softmax_backward(w, g):
    wg = (w * g).sum(dim=-1, keepdim=True)   # (..., 1): wᵀg, one number per row
    return w * (g - wg)                       # (..., T): diag(w) g − w (wᵀg); J is symmetric, so Jᵀg = Jg

check("04-3", softmax_backward)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 유도는 "성분이 독립이고 분산 1"을 가정했습니다. 학습이 진행되어 $W^Q$, $W^K$가 바뀌면 이 가정은 깨집니다. 그래도 $\sqrt{d_k}$로 나누는 것이 의미가 있는 이유는 무엇일까요? (힌트: 학습 **시작** 시점, 그리고 모델이 점수를 스스로 키울 수 있다는 점)
# 2. $\sqrt{d_k}$로 나누는 대신 $W^Q$의 초기값을 $1/\sqrt{d_k}$배 작게 하면 같은 효과가 날까요? 학습 중에는 무엇이 달라질까요?
# 3. 포화는 항상 나쁠까요? 어떤 쿼리는 정말로 키 하나만 봐야 합니다. 5절의 $[32, 1, 2]$ 예와 연결해 보세요.
# 4. 키의 개수 $T$가 16에서 수천으로 늘면, 분산이 1인 점수에서도 최대 가중치와 엔트로피는 어떻게 변할까요? $\sqrt{d_k}$만으로 충분할까요? 5절의 키 개수 표(나누지 않은 점수)와 비교해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 3번을 묶어 토론하면 좋습니다. $\sqrt{d_k}$는 "처음부터 포화된 상태로 시작하지 않게" 해 주는 장치이고, 학습된 모델은 필요하면 $W^Q$, $W^K$를 키워 일부러 뾰족한 가중치를 만듭니다. 4번은 `saturation_summary(64, "sqrt", n_keys=1024, n_rows=128)`처럼 직접 돌려 보게 해도 됩니다(행이 많으면 메모리가 커서 `saturation_rows`가 128 MiB를 넘는 요청을 거절하고 줄일 행 수를 알려 줍니다. 키는 4096개까지 받습니다: 행마다 T×T 야코비안을 만들기 때문입니다). 2번에는 µP([Yang 등 2021](../SOURCES.md))를 덧붙일 수 있습니다. µP는 폭을 키워도 하이퍼파라미터가 옮겨 가도록 $\sqrt{d_k}$ 대신 $d_k$로 나눕니다. 학습된 쿼리와 키는 성분끼리 상관되어 내적이 $\sqrt{d_k}$가 아니라 $d_k$에 비례해 자라기 때문입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | $\mathbb{E}[q\cdot k]=0$, $\mathrm{Var}(q\cdot k)=d_k$ | 4단계 유도; $d_k$ = 4…1024 표본 분산이 $d_k$의 ±6% 안 (정규·±1 성분 모두) |
# | $\sqrt{d_k}$로 나누면 분산 1 | 모든 $d_k$에서 1 ± 0.06 |
# | 커지는 것은 평균이 아니라 퍼짐 | 평균은 0 근처, 표준편차 $\sqrt{d_k}$ (원문 000 다듬기) |
# | 나누지 않으면 포화 → 기울기 소실 | $d_k$ 4 → 1024: 엔트로피 계속 감소, 포화 비율 > 70%, $\|J\|$ 중앙값 1000분의 1 미만 |
# | $d_k = 64$의 문제는 분포 | 키 16개: $\|\partial L/\partial s\|$ 중앙값은 이미 약 1/5, $\|\partial L/\partial q\|$ 중앙값이 큰 것은 $\|k\| \approx 8$ 인수; 29%의 행이 포화(기울기 < 0.1인 행 23%, < 0.01인 행 12%); 키 4개면 쿼리 기울기 중앙값도 나눈 쪽의 4분의 1 미만 |
# | 나누면 $d_k$와 무관 | 엔트로피·최대 가중치·$\|J\|$·$\|\partial L/\partial q\|$의 최대/최소 비 < 1.05–1.3 |
# | $1/\sqrt{d_k}$ = 고정 온도 $\tau=\sqrt{d_k}$ | `softmax(s/τ)`, τ = √d_k = 03번 어텐션의 가중치 = PyTorch SDPA; $\tau=d_k$는 너무 평평 |
# | 원문 바로잡기 | 원문 000: $d_q$와 $d_k$는 "거의 같은 게 관례"가 아니라 내적이면 반드시 같음; 원문 004: $d_k = 64$에서 "학습이 멈춘다"는 과장(소프트맥스를 지나는 기울기는 중앙값 약 1/5, 행의 약 30% 포화); $[0.95, 0.02, 0.03]$ → $[0.958, 0.020, 0.023]$ (부드럽지 않음) |
#
# 다음 노트북(05)에서는 온도 $\tau$를 직접 움직이며 $\tau \to 0$과 $\tau \to \infty$의 극한을 봅니다.
