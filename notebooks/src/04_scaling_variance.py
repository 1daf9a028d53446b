# %% [markdown]
# # 04. 왜 √d_k로 나누는가
#
# 쿼리(query)와 키(key)의 내적(dot product)은 벡터가 길어질수록 넓게 퍼지고, 넓게 퍼진 점수(score)는 소프트맥스(softmax)를 포화시켜 기울기(gradient)를 없앱니다. $\sqrt{d_k}$로 나누면 이 퍼짐이 $d_k$와 상관없이 일정해집니다.
#
# **학습 목표**
# - 성분이 독립이고 평균 0, 분산 1이면 $\mathrm{Var}(q\cdot k) = d_k$임을 단계별로 유도하고, 표본으로 확인한다.
# - 점수가 넓게 퍼지면 소프트맥스가 포화(saturation)되어 엔트로피(entropy)와 기울기가 함께 줄어든다는 것을 $d_k$ = 4…1024에서 측정한다.
# - $\sqrt{d_k}$로 나누면 엔트로피·최대 가중치(weight)·기울기가 $d_k$와 상관없이 거의 일정하다는 것을 보인다.
# - $1/\sqrt{d_k}$를 고정된 온도(temperature) $\tau = \sqrt{d_k}$로 해석한다 (05번 노트북 예고).
#
# **선수 지식**: 01번(소프트맥스), 03번(쿼리·키·밸류와 투영), 분산의 정의
#
# **예상 시간**: 혼자 공부 45분 / 스터디 발표 25분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작하며 "공식 $\mathrm{softmax}(QK^\top/\sqrt{d_k})V$에서 $\sqrt{d_k}$를 빼면 무슨 일이 생길까?"를 물어보세요. 답은 두 단계입니다. ① 점수의 표준편차가 $\sqrt{d_k}$로 자란다(2–3절), ② 넓은 점수는 소프트맥스를 원-핫으로 만들고 기울기를 없앤다(4절). 슬라이더 데모는 5절입니다.

# %%
import math

import matplotlib.pyplot as plt
import torch

from helpers import seed_everything, setup
from helpers.attention import scaled_dot_product_attention, softmax
from helpers.exercises import check
from helpers.scaling import (
    DKS,
    dk_axis,
    dk_explorer,
    dot_product_variance,
    draw_dk,
    entropy,
    jacobian_norm,
    saturation_stats,
    saturation_sweep,
    softmax_jacobian,
)

setup()

# %% [markdown]
# ## 1. 직관: 벡터가 길면 내적이 퍼진다
#
# 내적 $q\cdot k = \sum_j q_j k_j$는 $d_k$개 항의 합입니다. 항마다 부호가 제멋대로라 평균은 0 근처에 머물지만, 더하는 항이 많을수록 합이 0에서 멀리 벗어날 여지도 커집니다.
# 같은 방식으로 뽑은 쿼리 하나와 키 8개로, 키 차원(key dimension) $d_k$가 16일 때와 1024일 때의 점수를 비교해 봅니다.

# %%
for d_k in (16, 1024):
    seed_everything(1)
    q = torch.randn(d_k)        # (d_k,)
    k = torch.randn(8, d_k)     # (T_k=8, d_k)
    s = k @ q                   # (8,) raw scores q·k
    print(f"d_k={d_k:>4}: 점수 {s.numpy().round(1)}  최대 가중치 {softmax(s).max():.4f}")

# %% [markdown]
# $d_k = 1024$의 점수는 수십 단위로 흩어져 있고, 소프트맥스는 가장 큰 점수 하나에 가중치를 거의 전부 줍니다. 왜 흩어지는지(2–3절), 그게 왜 학습에 나쁜지(4절)를 차례로 봅니다.

# %% [markdown]
# ## 2. 수학: $\mathrm{Var}(q\cdot k) = d_k$
#
# **가정**: 성분 $q_1,\dots,q_{d_k},k_1,\dots,k_{d_k}$가 모두 서로 독립이고, 각각 평균 0, 분산(variance) 1. (정규분포일 필요는 없습니다.)
#
# **① 한 항의 평균.** 독립이면 곱의 기댓값은 기댓값의 곱이므로
# $$\mathbb{E}[q_j k_j] = \mathbb{E}[q_j]\,\mathbb{E}[k_j] = 0 \cdot 0 = 0 \quad\Rightarrow\quad \mathbb{E}[q\cdot k] = 0.$$
#
# **② 한 항의 분산.** 평균이 0이므로 분산은 제곱의 기댓값이고, $q_j^2$와 $k_j^2$도 독립입니다.
# $$\mathrm{Var}(q_j k_j) = \mathbb{E}[q_j^2 k_j^2] - \big(\mathbb{E}[q_j k_j]\big)^2 = \mathbb{E}[q_j^2]\,\mathbb{E}[k_j^2] - 0 = 1 \cdot 1 = 1.$$
#
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
# $d_k$ = 4부터 1024까지 2의 거듭제곱마다 $q$, $k$를 10,000쌍씩 뽑아 내적의 표본 평균과 표본 분산을 잽니다. 표본 분산의 상대 표준오차는 점수가 정규분포라면 $\sqrt{2/n} \approx 1.4\%$이고, 내적은 꼬리가 조금 더 두꺼워서 $\sqrt{(2 + 6/d_k)/n}$, 곧 $d_k = 4$에서 약 1.9%입니다. 허용 오차는 그 세 배가 넘는 **6%** 로 둡니다.

# %%
stats = dot_product_variance(DKS, n=10_000, seed=0)
print(" d_k | 평균(q·k) | 분산(q·k) | 분산/d_k | 분산(q·k/√d_k)")
for d_k, m, v, vs in zip(stats["d_k"], stats["mean"], stats["var"], stats["var_scaled"]):
    print(f"{d_k:>4} | {m:>9.2f} | {v:>9.1f} | {v / d_k:>8.3f} | {vs:>8.3f}")

# %%
n = 10_000
for d_k, m, v, vs in zip(stats["d_k"], stats["mean"], stats["var"], stats["var_scaled"]):
    assert abs(v / d_k - 1) < 0.06, (d_k, v)           # Var(q·k) ≈ d_k
    assert abs(vs - 1) < 0.06, (d_k, vs)               # Var(q·k/√d_k) ≈ 1
    assert abs(m) < 4 * math.sqrt(d_k / n), (d_k, m)   # mean within 4 standard errors of 0
print("모든 d_k에서 분산/d_k와 나눈 뒤 분산이 1 ± 0.06 안에 있습니다.")

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.0))
ax.plot(stats["d_k"], stats["d_k"], color="tab:gray", linestyle="--", label="이론: 분산 = d_k")
ax.plot(stats["d_k"], stats["var"], "o", color="tab:gray", label="표본 분산(q·k)")
ax.plot(stats["d_k"], stats["var_scaled"], "o-", color="tab:blue", label="표본 분산(q·k/√d_k)")
dk_axis(ax)
ax.set_yscale("log")
ax.set_ylabel("분산 (로그 축)")
ax.set_title("내적의 분산은 d_k에 비례하고, √d_k로 나누면 1")
ax.legend(loc="upper left")
plt.show()

# %% [markdown]
# 정규분포일 필요가 없다는 것도 확인해 둡니다. 성분이 $\pm 1$ 중 하나(평균 0, 분산 1)인 경우에도 분산은 $d_k$입니다.

# %%
seed_everything(3)
q_pm = torch.randint(0, 2, (10_000, 64)).double() * 2 - 1   # (n, d_k=64), entries ±1
k_pm = torch.randint(0, 2, (10_000, 64)).double() * 2 - 1   # (n, d_k=64)
var_pm = (q_pm * k_pm).sum(dim=-1).var().item()
print(f"±1 성분, d_k=64: 분산(q·k) = {var_pm:.1f}")
assert abs(var_pm / 64 - 1) < 0.06

# %% [markdown]
# > **원문 바로잡기**: 원문(seed 000)은 "$d_k$가 커질 경우, dot product의 **값이 커지게 되어**"라고 쓰고, 다른 원문(seed 004)도 "값이 너무 커지는 것을 방지"한다고 정리합니다. 위 표에서 내적의 **평균은 모든 $d_k$에서 0 근처**($|\text{평균}| < 4\sqrt{d_k/n}$)입니다. 커지는 것은 값 자체가 아니라 **퍼짐**, 즉 표준편차 $\sqrt{d_k}$입니다. 양쪽으로 멀리 흩어진 점수들 사이의 **차이**가 소프트맥스를 포화시킵니다(4절).

# %% [markdown]
# ### 원문의 "I am a student" 예: $d_k$는 몇인가
#
# 원문(seed 001)은 $Q_I = [1,1,1,1]$과 $K_I = [1,0,1,1]$의 내적 3을 구한 뒤 "Key의 차원은 3이므로" $3/\sqrt{4} = 1.5$라고 씁니다. 계산해 봅니다.

# %%
q_i = torch.tensor([1.0, 1, 1, 1])
k_i = torch.tensor([1.0, 0, 1, 1])
d_k_i = k_i.numel()
print(f"q·k = {q_i @ k_i:.0f},  d_k = {d_k_i},  q·k/√d_k = {q_i @ k_i / math.sqrt(d_k_i):.2f}")
assert d_k_i == 4 and (q_i @ k_i).item() == 3.0
assert math.isclose((q_i @ k_i).item() / math.sqrt(d_k_i), 1.5)

# %% [markdown]
# > **원문 바로잡기**: 키 $K_I = [1,0,1,1]$의 차원은 **4**입니다. 3은 내적 값이지 차원이 아닙니다. 원문이 실제로 나눈 $\sqrt{4}$가 맞고, 결과 1.5도 맞습니다. $d_k$는 키 벡터의 성분 수이며, 성분 중 몇 개가 0이든 바뀌지 않습니다.
#
# > **원문 바로잡기**: 원문(seed 000)은 $d_q$와 $d_k$가 "거의 같은게 관례"라고 씁니다. 쿼리와 키의 길이는 관례가 아니라 **반드시 같아야** 합니다. 길이가 다르면 내적이 정의되지 않습니다(아래 셀의 `ValueError`). 길이가 달라도 되는 것은 밸류(value)의 차원 $d_v$입니다.

# %%
try:
    scaled_dot_product_attention(torch.randn(2, 3), torch.randn(5, 4), torch.randn(5, 7))
    raise AssertionError("d_q != d_k should fail")
except ValueError as err:
    print("d_q=3, d_k=4:", str(err).split(",")[0])
out, _ = scaled_dot_product_attention(torch.randn(2, 4), torch.randn(5, 4), torch.randn(5, 7))
print("d_k=4, d_v=7: 출력 모양", tuple(out.shape))
assert out.shape == (2, 7)

# %% [markdown]
# ## 4. 넓은 점수가 소프트맥스에 하는 일: 포화
#
# 소프트맥스는 점수의 **차이**만 봅니다. 두 점수의 차이가 $\Delta$이면 가중치의 비는 $e^{\Delta}$입니다. 표준편차가 32인 점수(= $d_k$ 1024)에서는 1등과 2등의 차이가 보통 10을 넘고, $e^{-10} \approx 4.5\times 10^{-5}$이니 사실상 원-핫(one-hot)이 됩니다. 이것이 포화입니다.

# %%
seed_everything(4)
top2 = (32 * torch.randn(10_000, 16)).topk(2, dim=-1).values   # (n, 2): 16 scores with std 32
gap = (top2[:, 0] - top2[:, 1]).median().item()
print(f"표준편차 32, 키 16개: 1등과 2등 점수 차이의 중앙값 {gap:.1f}, e^-차이 = {math.exp(-gap):.1e}")
assert gap > 10

# %% [markdown]
# 포화가 왜 나쁜지는 소프트맥스의 기울기, 즉 야코비안(Jacobian)을 보면 압니다. $w = \mathrm{softmax}(s)$이면
# $$\frac{\partial w_i}{\partial s_j} = w_i(\delta_{ij} - w_j), \qquad J = \operatorname{diag}(w) - w w^\top.$$
# $w$가 원-핫 $e_m$이면 $J = \operatorname{diag}(e_m) - e_m e_m^\top = 0$입니다. 점수를 조금 바꿔도 가중치가 변하지 않으니, 손실에서 온 기울기가 점수를 거쳐 $W^Q$, $W^K$까지 가지 못합니다.
#
# 먼저 닫힌 식이 자동 미분(autograd)과 같은지 확인합니다.

# %%
s = torch.tensor([2.0, -1.0, 0.5, 0.0], dtype=torch.float64)
J_auto = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=-1), s)   # (4, 4)
J_formula = softmax_jacobian(softmax(s))                                             # (4, 4)
torch.testing.assert_close(J_formula, J_auto)
for scale in (1, 10, 100):
    w = softmax(s * scale)
    print(f"점수 × {scale:>3}: 엔트로피 {entropy(w):.4f},  ‖J‖ = {jacobian_norm(w):.2e}")
assert jacobian_norm(softmax(s * 100)) < 1e-60

# %% [markdown]
# ### $d_k$에 따라 측정하기
#
# $d_k$마다 무작위 쿼리 512개와 쿼리마다 키 16개를 뽑아(시드 고정), 점수를 **나누지 않을 때**와 **$\sqrt{d_k}$로 나눌 때** 다음을 잽니다.
# - 엔트로피 $-\sum_i w_i \log w_i$의 평균 (키 16개의 균등 분포면 $\log 16 \approx 2.77$, 원-핫이면 0)
# - 최대 가중치의 평균, 그리고 최대 가중치가 0.99를 넘는 행(포화된 행)의 비율
# - 야코비안의 프로베니우스 노름(모든 성분 제곱합의 제곱근) $\|J\|_F$의 중앙값
# - 자동 미분으로 구한 쿼리에 대한 기울기 $\|\partial L/\partial q\|$의 중앙값. 손실은 $L = g\cdot(\text{어텐션 출력})$, $g$는 무작위 벡터입니다.
#
# 평균 대신 중앙값을 쓰는 이유: 1등과 2등이 우연히 비슷한 소수의 행은 포화되지 않아 큰 기울기를 가지고, 평균을 혼자 끌어올립니다. 중앙값은 "전형적인 행"을 보여 줍니다.

# %%
raw = saturation_sweep(DKS, "none")
scaled = saturation_sweep(DKS, "sqrt")
print("각 칸: 나누지 않음 / √d_k로 나눔")
print(" d_k | 엔트로피      | 최대 가중치 | 포화 비율   | ‖J‖ 중앙값       | ‖∂L/∂q‖ 중앙값")
for i, d_k in enumerate(DKS):
    print(f"{d_k:>4} | {raw['entropy'][i]:.3f} / {scaled['entropy'][i]:.3f}"
          f" | {raw['max_weight'][i]:.2f} / {scaled['max_weight'][i]:.2f}"
          f" | {raw['saturated'][i]:.2f} / {scaled['saturated'][i]:.2f}"
          f" | {raw['jacobian'][i]:.1e} / {scaled['jacobian'][i]:.2f}"
          f" | {raw['grad_q'][i]:.1e} / {scaled['grad_q'][i]:.2f}")

# %%
fig, axes = plt.subplots(2, 2, figsize=(11, 7))
fig.subplots_adjust(left=0.08, right=0.98, bottom=0.08, top=0.9, wspace=0.25, hspace=0.4)
panels = [("entropy", "평균 엔트로피", False), ("max_weight", "평균 최대 가중치", False),
          ("jacobian", "‖J‖ 중앙값 (로그 축)", True), ("grad_q", "‖∂L/∂q‖ 중앙값 (로그 축)", True)]
for ax, (key, label, log_y) in zip(axes.flat, panels):
    ax.plot(DKS, raw[key], "o-", color="tab:gray", label="나누지 않음")
    ax.plot(DKS, scaled[key], "o-", color="tab:blue", label="√d_k로 나눔")
    dk_axis(ax)
    if log_y:
        ax.set_yscale("log")
    ax.set_ylabel(label)
    ax.set_title("d_k에 따른 " + label.replace(" (로그 축)", ""))
axes[0, 0].axhline(math.log(16), color="black", linestyle=":", linewidth=1, label="균등 분포 log 16")
axes[0, 0].legend(loc="center right")
fig.suptitle("나누지 않으면 포화되고 기울기가 사라진다 (키 16개, 쿼리 512개)")
plt.show()

# %% [markdown]
# 그림이 말하는 것을 assert로 고정합니다.
# - **나누지 않을 때**: 엔트로피는 $d_k$마다 계속 줄고 최대 가중치는 계속 커집니다. $d_k = 1024$에서는 행의 70% 이상이 포화되고, 야코비안의 중앙값은 $d_k = 4$의 1000분의 1보다 작으며, 쿼리에 대한 기울기도 가장 컸을 때의 100분의 1보다 작습니다.
# - **$\sqrt{d_k}$로 나눌 때**: 네 지표 모두 $d_k$와 상관없이 거의 일정합니다 (최댓값/최솟값 비가 엔트로피 1.05, 최대 가중치 1.2, $\|J\|$ 1.1, $\|\partial L/\partial q\|$ 1.3 미만).

# %%
pairs = lambda xs: list(zip(xs, xs[1:]))
assert all(b < a for a, b in pairs(raw["entropy"])), "unscaled entropy must fall with d_k"
assert all(b > a for a, b in pairs(raw["max_weight"])), "unscaled max weight must grow with d_k"
assert raw["saturated"][DKS.index(64)] > 0.25 and raw["saturated"][-1] > 0.7
assert max(raw["grad_q"]) > raw["grad_q"][0]   # before saturating, larger scores mean larger gradients
assert raw["jacobian"][-1] < 1e-3 * raw["jacobian"][0]
assert raw["grad_q"][-1] < 1e-2 * max(raw["grad_q"])
spread = lambda xs: max(xs) / min(xs)
assert spread(scaled["entropy"]) < 1.05 and spread(scaled["max_weight"]) < 1.2
assert spread(scaled["jacobian"]) < 1.1 and spread(scaled["grad_q"]) < 1.3
assert max(scaled["saturated"]) == 0.0
print(f"나누지 않음, d_k 4 → 1024: ‖J‖ {raw['jacobian'][0]:.2f} → {raw['jacobian'][-1]:.1e}, "
      f"엔트로피 {raw['entropy'][0]:.2f} → {raw['entropy'][-1]:.2f}")

# %% [markdown]
# 나누지 않을 때 $\|\partial L/\partial q\|$가 $d_k = 16$ 근처까지는 오히려 **커지는** 것에 주목하세요. $\partial (q\cdot k)/\partial q = k$이고 $\|k\| \approx \sqrt{d_k}$이므로, 포화되기 전에는 큰 점수가 기울기도 키웁니다. 그러다 소프트맥스가 포화되면 $J \to 0$이 모든 것을 덮어 버립니다. 나누지 않은 모델은 $d_k$에 따라 기울기가 너무 크거나 너무 작아 학습률 하나로 맞추기 어렵습니다. $\sqrt{d_k}$로 나누면 $\partial(q\cdot k/\sqrt{d_k})/\partial q = k/\sqrt{d_k}$의 길이가 약 1이고 점수의 분포도 $d_k$와 상관없어지므로, 기울기가 $d_k$와 상관없이 1 근처(0.93~1.09)에 머뭅니다. 원문(seed 000)의 "gradient가 불안정해진다"는 이 그림으로 보면 "작은 $d_k$에서는 조금 크고, 큰 $d_k$에서는 사라진다"입니다. $d_k$가 256 이상이면 나누지 않은 쪽의 기울기가 더 작고, 1024에서는 100배 넘게 작습니다.

# %%
big = [i for i, d_k in enumerate(DKS) if d_k >= 256]
assert all(raw["grad_q"][i] < scaled["grad_q"][i] for i in big)
assert raw["grad_q"][-1] < scaled["grad_q"][-1] / 100
assert round(min(scaled["grad_q"]), 2) == 0.93 and round(max(scaled["grad_q"]), 2) == 1.09
print(f"d_k=1024: ‖∂L/∂q‖ 나누지 않음 {raw['grad_q'][-1]:.1e}, 나눔 {scaled['grad_q'][-1]:.2f}")
print(f"√d_k로 나눔: ‖∂L/∂q‖ 중앙값 {min(scaled['grad_q']):.2f} ~ {max(scaled['grad_q']):.2f}")

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 표에서 $d_k = 64$ 행을 짚으세요. 트랜스포머 원 논문의 헤드 크기가 64입니다. 나누지 않으면 이미 행의 4분의 1 이상이 포화(최대 가중치 > 0.99)되고, 1024에서는 70% 이상입니다. 나누면 하나도 없습니다. 큰 $d_k$에서는 "gradient가 불안정"이라는 흔한 표현보다 "기울기가 사라진다"가 측정과 맞는 표현입니다.

# %% [markdown]
# ### 원문의 $d_k = 64$ 예
#
# 원문(seed 004)은 $d_k = 64$에서 점수 $[32, 1, 2]$를 예로 들어, 나누기 전 가중치가 $[1.00, 0.00, 0.00]$, 8로 나눈 뒤 $[4, 0.125, 0.25]$의 가중치가 $[0.95, 0.02, 0.03]$인 "부드러운 분포"가 된다고 씁니다.

# %%
seed_scores = torch.tensor([32.0, 1.0, 2.0], dtype=torch.float64)
w_before, w_after = softmax(seed_scores), softmax(seed_scores / math.sqrt(64))
print("나누기 전:", w_before.numpy().round(4), " 나눈 뒤 점수:", (seed_scores / 8).tolist())
print("나눈 뒤:  ", w_after.numpy().round(4), f" 합 {w_after.sum():.4f}, 엔트로피 {entropy(w_after):.3f}")
print(f"32는 d_k=64 점수 표준편차(8)의 {32 / math.sqrt(64):.0f}배")
assert torch.allclose(w_after, torch.tensor([0.9576, 0.0199, 0.0225], dtype=torch.float64), atol=1e-4)
assert w_after.max() > 0.95 and w_before.max() > 0.9999
assert w_after.numpy().round(2).tolist() == [0.96, 0.02, 0.02]   # the seed prints [0.95, 0.02, 0.03]

# %% [markdown]
# > **원문 바로잡기**: $\mathrm{softmax}([4, 0.125, 0.25]) = [0.958, 0.020, 0.022]$입니다. 원문의 $[0.95, 0.02, 0.03]$은 반올림이 맞지 않습니다(0.9576 → 0.96, 0.0225 → 0.02). 더 중요한 것은 이 결과가 "부드러운 분포"가 아니라는 점입니다. 가중치의 96%가 여전히 한 키에 몰려 있습니다. 점수 32는 $d_k = 64$에서 표준편차 8의 **4배**인 드문 값이라, 나눈 뒤에도 두 번째로 큰 점수보다 3.75(표준편차의 약 4배)만큼 앞섭니다. $\sqrt{d_k}$로 나누는 것은 **전형적인** 점수의 퍼짐을 1로 맞출 뿐, 학습된 모델이 일부러 만든 큰 차이까지 없애지는 않습니다. 원문의 "gradient가 거의 0이 된다"는 주장 자체는 위 측정과 맞습니다.

# %% [markdown]
# ## 5. 슬라이더: $d_k$를 바꿔 보기
#
# 슬라이더로 $d_k$를 4부터 1024까지 바꾸면 한 그림의 세 칸이 함께 바뀝니다.
# - **왼쪽**: 내적 $q\cdot k$ 4,000개의 분포(회색)와 $\sqrt{d_k}$로 나눈 분포(파랑). 가로축은 고정입니다.
# - **가운데**: 키 8개짜리 소프트맥스 한 행. 제목은 엔트로피(나누지 않음 / 나눔)입니다.
# - **오른쪽**: 위 측정의 $\|J\|$ 중앙값 곡선과 현재 $d_k$(빨간 점).

# %% tags=["nbval-ignore-output"]
dk_explorer(value=64)

# %% [markdown]
# 정적 버전(슬라이드·PDF용): 같은 함수로 $d_k$ = 4, 64, 1024를 그립니다.

# %%
fig, axes = plt.subplots(3, 3, figsize=(13, 10.5))
fig.subplots_adjust(left=0.06, right=0.98, bottom=0.06, top=0.96, wspace=0.3, hspace=0.45)
shown = {d_k: draw_dk(d_k, axes=row) for d_k, row in zip((4, 64, 1024), axes)}
plt.show()

# %%
for d_k, r in shown.items():
    print(f"d_k={d_k:>4}: 표준편차 {r['std_raw']:.2f} / {r['std_scaled']:.2f}, "
          f"엔트로피 {r['entropy_raw']:.3f} / {r['entropy_scaled']:.3f}, "
          f"‖J‖ {r['jacobian_raw']:.1e} / {r['jacobian_scaled']:.2f}")
    assert abs(r["std_raw"] / math.sqrt(d_k) - 1) < 0.05 and abs(r["std_scaled"] - 1) < 0.05
assert shown[1024]["weights_raw"].max() > 0.999 and shown[1024]["weights_scaled"].max() < 0.9
assert shown[4]["jacobian_raw"] > 100 * shown[1024]["jacobian_raw"]

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 4에서 1024로 천천히 끌면서 왼쪽 회색 분포가 납작하게 퍼지는 동안 파란 분포는 그대로인 것, 가운데 회색 막대가 하나만 남는 것을 함께 보여 주세요. 오른쪽 그림의 회색 곡선은 $d_k = 32$~64부터 내려가기 시작해 256 이상에서 급격히 떨어집니다. 이 구간에서는 점수로 돌아가는 기울기가 거의 없어 $W^Q$, $W^K$가 사실상 학습되지 않습니다.

# %% [markdown]
# ## 6. $\sqrt{d_k}$는 고정된 온도다
#
# 05번 노트북에서 다룰 온도 $\tau$는 $\mathrm{softmax}(z/\tau)$의 $\tau$입니다. 그러니 $q\cdot k$를 $\sqrt{d_k}$로 나누는 것은 **온도를 $\tau = \sqrt{d_k}$로 고정**하는 것과 같습니다. 스케일드 닷프로덕트 어텐션(scaled dot-product attention)이 바로 그 계산인지 확인합니다.

# %%
seed_everything(6)
d_k = 256
q = torch.randn(3, d_k)     # (T_q=3, d_k)
k = torch.randn(16, d_k)    # (T_k=16, d_k)
v = torch.randn(16, 5)      # (T_k=16, d_v=5)
raw_scores = q @ k.T        # (3, 16)

by_division = softmax(raw_scores / math.sqrt(d_k))
by_temperature = softmax(raw_scores, temperature=math.sqrt(d_k))
out, attn = scaled_dot_product_attention(q, k, v)
torch.testing.assert_close(by_division, by_temperature)
torch.testing.assert_close(attn, by_temperature)
torch.testing.assert_close(out, by_temperature @ v)
print(f"softmax(q·k/√{d_k}) = softmax(q·k, τ={math.sqrt(d_k):.0f}) = 어텐션 가중치: 세 값이 같습니다.")

# %% [markdown]
# 다른 온도를 고르면 어떻게 될까요? $d_k = 256$에서 $\tau = 1$(나누지 않음), $\tau = \sqrt{d_k} = 16$, $\tau = d_k = 256$(너무 많이 나눔)을 4절과 같은 방법으로 비교합니다.

# %%
taus = {"τ = 1": "none", "τ = √d_k = 16": "sqrt", "τ = d_k = 256": "linear"}
by_tau = {name: saturation_stats(256, scale) for name, scale in taus.items()}
for name, r in by_tau.items():
    print(f"{name:<14} 엔트로피 {r['entropy']:.2f} (최대 {math.log(16):.2f}), 최대 가중치 {r['max_weight']:.2f}, "
          f"‖∂L/∂q‖ 중앙값 {r['grad_q']:.3f}")
e = [r["entropy"] for r in by_tau.values()]
g = [r["grad_q"] for r in by_tau.values()]
assert e[0] < e[1] < e[2] and e[2] > 0.99 * math.log(16)
assert g[1] > 3 * g[0] and g[1] > 3 * g[2]

# %% [markdown]
# $\tau = d_k$로 너무 많이 나누면 가중치가 거의 균등해지고(엔트로피가 최대 $\log 16$에 붙음) 쿼리에 대한 기울기도 다시 작아집니다. 점수 차이가 $1/\sqrt{d_k}$배로 눌려 쿼리가 무엇을 보든 결과가 비슷해지기 때문입니다. $\sqrt{d_k}$는 "너무 뾰족하지도, 너무 평평하지도 않게" 점수의 표준편차를 1로 맞추는 온도입니다. 원문(seed 004)의 $\mathrm{softmax}\big(QK^\top/(\tau\sqrt{d_k})\big)$는 이 고정 온도 위에 조절용 온도 $\tau$를 하나 더 곱한 것입니다. 05번 노트북에서 $\tau$를 슬라이더로 움직여 봅니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("04-k", 답)` 한 번으로 확인합니다. 풀이는 숨겨진 셀에 있습니다.
#
# **04-1.** 쿼리 `q` (…, T_q, d_k)와 키 `k` (…, T_k, d_k)를 받아 점수 행렬 $qk^\top/\sqrt{d_k}$ (…, T_q, T_k)를 돌려주는 `scaled_scores`를 완성하세요. 앞쪽 배치 차원이 있어도 동작해야 합니다.

# %%
def scaled_scores(q, k):
    raise NotImplementedError

check("04-1", scaled_scores)

# %% jupyter={"source_hidden": true}
def scaled_scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])

check("04-1", scaled_scores)

# %% [markdown]
# **04-2.** $d_k = 64$이고, 쿼리 성분은 평균 0·분산 4, 키 성분은 평균 0·분산 1이며 모두 독립입니다. $q\cdot k$를 어떤 수 $c$로 나눠야 점수의 분산이 1이 될까요? 숫자 `c`를 답하세요. (2절의 ②를 다시 보세요.)

# %%
c = ...

check("04-2", c)

# %% jupyter={"source_hidden": true}
c = math.sqrt(64 * 4 * 1)   # Var(q·k) = d_k · Var(q_j) · Var(k_j)

seed_everything(42)
q_ex = 2 * torch.randn(20_000, 64, dtype=torch.float64)   # (n, d_k), variance 4
k_ex = torch.randn(20_000, 64, dtype=torch.float64)       # (n, d_k), variance 1
print(f"표본 분산(q·k / c) = {((q_ex * k_ex).sum(-1) / c).var():.3f}")
check("04-2", c)

# %% [markdown]
# **04-3.** 가중치 벡터 `w` = softmax(s) (길이 T)를 받아 소프트맥스의 야코비안 $J_{ij} = \partial w_i/\partial s_j$ (T×T)를 돌려주는 `my_jacobian`을 완성하세요. `torch.autograd`는 쓰지 말고 4절의 식으로 만드세요.

# %%
def my_jacobian(w):
    raise NotImplementedError

check("04-3", my_jacobian)

# %% jupyter={"source_hidden": true}
def my_jacobian(w):
    return torch.diag(w) - torch.outer(w, w)

check("04-3", my_jacobian)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 유도는 "성분이 독립이고 분산 1"을 가정했습니다. 학습이 진행되어 $W^Q$, $W^K$가 바뀌면 이 가정은 깨집니다. 그래도 $\sqrt{d_k}$로 나누는 것이 의미가 있는 이유는 무엇일까요? (힌트: 학습 **시작** 시점, 그리고 모델이 점수를 스스로 키울 수 있다는 점)
# 2. $\sqrt{d_k}$로 나누는 대신 $W^Q$의 초기값을 $1/\sqrt{d_k}$배 작게 하면 같은 효과가 날까요? 학습 중에는 무엇이 달라질까요?
# 3. 포화는 항상 나쁠까요? 어떤 쿼리는 정말로 키 하나만 봐야 합니다. 4절의 $[32, 1, 2]$ 예와 연결해 보세요.
# 4. 키의 개수 $T$가 16에서 4096으로 늘면, 분산이 1인 점수에서도 최대 가중치와 엔트로피는 어떻게 변할까요? $\sqrt{d_k}$만으로 충분할까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 3번을 묶어 토론하면 좋습니다. $\sqrt{d_k}$는 "처음부터 포화된 상태로 시작하지 않게" 해 주는 장치이고, 학습된 모델은 필요하면 $W^Q$, $W^K$를 키워 일부러 뾰족한 가중치를 만듭니다. 4번은 `saturation_stats(64, "sqrt", n_keys=4096)`처럼 직접 돌려 보게 해도 됩니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | $\mathbb{E}[q\cdot k]=0$, $\mathrm{Var}(q\cdot k)=d_k$ | 4단계 유도; $d_k$ = 4…1024 표본 분산이 $d_k$의 ±6% 안 (정규·±1 성분 모두) |
# | $\sqrt{d_k}$로 나누면 분산 1 | 모든 $d_k$에서 1 ± 0.06 |
# | 커지는 것은 값이 아니라 퍼짐 | 평균은 0 근처, 표준편차 $\sqrt{d_k}$ (원문 바로잡기) |
# | 나누지 않으면 포화 → 기울기 소실 | $d_k$ 4 → 1024: 엔트로피 계속 감소, 포화 비율 > 70%, $\|J\|$ 중앙값 1000분의 1 미만 |
# | 나누면 $d_k$와 무관 | 엔트로피·최대 가중치·$\|J\|$·$\|\partial L/\partial q\|$의 최대/최소 비 < 1.05–1.3 |
# | $1/\sqrt{d_k}$ = 고정 온도 $\tau=\sqrt{d_k}$ | `softmax(s/√d_k)` = `softmax(s, temperature=√d_k)` = 어텐션 가중치; $\tau=d_k$는 너무 평평 |
# | 원문 바로잡기 | "Key의 차원은 3" → 4; $[0.95, 0.02, 0.03]$ → $[0.958, 0.020, 0.022]$ (부드럽지 않음) |
#
# 다음 노트북(05)에서는 온도 $\tau$를 직접 움직이며 $\tau \to 0$과 $\tau \to \infty$의 극한을 봅니다.
