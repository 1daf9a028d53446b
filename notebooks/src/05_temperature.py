# %% [markdown]
# # 05. 온도(temperature)
#
# 점수를 소프트맥스에 넣기 전에 수 하나 τ로 나누기만 하면, 같은 점수로 날카로운 가중치도 평평한 가중치도 만들 수 있습니다. 그 수 τ가 온도입니다.
#
# **학습 목표**
# - softmax(z/τ)를 직접 구현하고, τ가 가중치의 순서는 그대로 두고 "얼마나 한쪽으로 쏠리는지"만 바꾼다는 것을 계산으로 보인다.
# - τ→0이면 원-핫(one-hot)이 되고(동점이면 똑같이 나눔) τ→∞이면 균등해진다는 극한을 유도하고 수치로 확인한다.
# - 엔트로피(entropy)와 최대 가중치를 τ의 함수로 그리고, 실제 어텐션(attention) 맵이 날카로워지려면 τ가 얼마나 작아야 하는지 계산한다.
# - 스케일드 닷프로덕트 어텐션의 1/√d_k가 고정된 온도 √d_k라는 것, 그리고 지식 증류와 언어 모델 샘플링에서도 온도가 같은 방식으로 분포의 쏠림을 조절한다는 것을 설명할 수 있다.
#
# **선수 지식**: 01번(소프트맥스), 03번(쿼리·키·밸류와 "배" 예제), 04번(√d_k로 나누는 이유)
#
# **예상 시간**: 혼자 공부 40분 / 스터디 발표 20분
#
# 출처 목록: [원문 000–004와 인용한 논문](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 첫 문장은 "온도는 점수를 나누는 수 하나일 뿐"입니다. 오늘 보여 줄 것은 세 가지입니다. (1) 양 끝(τ→0, τ→∞)에서 무슨 일이 생기는지, (2) 03번의 "배" 어텐션 맵이 거의 평평한데 τ를 얼마나 낮춰야 날카로워지는지(4절 슬라이더), (3) 지식 증류와 ChatGPT류 모델의 샘플링에서도 같은 식 softmax(z/τ)가 쓰인다는 것.

# %% slideshow={"slide_type": "skip"}
import math

import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers import seed_everything, setup
from helpers.data import load_json
from helpers.exercises import check
from helpers.lessons.query_key_value import scaled_dot_product_attention
from helpers.lessons.weighted_average import weight_bars

setup()

# %% [markdown]
# ## 1. 점수를 τ로 나눈다
#
# 01번에서 점수(score)를 3배 하면 소프트맥스(softmax) 가중치(weight)가 한쪽으로 쏠리는 것을 보았습니다. 점수를 키우는 대신 **나누는 수**로 적으면, 그 수가 온도(temperature) τ입니다.
#
# $$\mathrm{softmax}_\tau(z)_i = \frac{e^{z_i/\tau}}{\sum_j e^{z_j/\tau}}, \qquad \tau > 0$$
#
# - τ < 1: 점수 차이가 커진 것처럼 작동해 큰 점수에 더 몰아줍니다(차갑다, 날카롭다).
# - τ > 1: 점수 차이가 줄어든 것처럼 작동해 고르게 나눕니다(뜨겁다, 평평하다).
# - $e^{z/\tau}$는 $z$에 대해 증가 함수이므로 **가중치의 순서는 어떤 τ에서도 같습니다.** 바뀌는 것은 쏠림의 정도뿐입니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 코드로는 01번의 `softmax`에 나눗셈 하나가 더해집니다. 최댓값을 빼므로 τ가 아주 작아도 가장 큰 지수는 $e^0 = 1$입니다(01번의 `softmax`도 안에서 최댓값을 빼므로, 빼는 순서가 문제 되는 것은 $z/\tau$ 자체가 넘치는 드문 경우뿐입니다: 2절 끝). `tau`가 텐서여도 브로드캐스팅으로 여러 온도를 한 번에 계산합니다(4절에서 씁니다).

# %% tags=["save"]
from helpers.lessons.weighted_average import softmax


def softmax_t(z, tau, dim=-1):  # z (..., T), tau a number or a tensor broadcastable to z -> (..., T)
    """softmax(z / tau) with 01's softmax; the max is subtracted before dividing by tau."""
    shifted = z - z.amax(dim=dim, keepdim=True)   # (..., T), every entry <= 0: a tiny tau cannot overflow
    return softmax(shifted / tau, dim=dim)        # (..., T), each slice sums to 1


# %% [markdown] slideshow={"slide_type": "subslide"}
# [원문 004](../SOURCES.md)의 점수 `[2.0, 1.0, 0.5]`로 세 온도의 가중치를 계산하고, 그 결과가 PyTorch와 같은지 확인합니다.

# %%
z = torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)
taus = [0.5, 1.0, 2.0]
by_tau = {tau: softmax_t(z, tau) for tau in taus}
for tau, w in by_tau.items():
    print(f"τ = {tau}: z/τ = {(z / tau).tolist()}  가중치 = {w.numpy().round(4)}  합 = {w.sum():.4f}")

for tau, w in by_tau.items():
    torch.testing.assert_close(w, torch.softmax(z / tau, dim=0))   # PyTorch
    assert torch.equal(w.argsort(), z.argsort())                   # the order never changes

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: 원문 004는 τ = 1에서 `[0.59, 0.22, 0.13]`, τ = 2에서 `[0.42, 0.25, 0.20]`이라고 적었습니다. 두 줄 모두 합이 1이 아닙니다(0.94, 0.87). 계산한 값은 τ = 1에서 **[0.6285, 0.2312, 0.1402]**, τ = 2에서 **[0.4810, 0.2918, 0.2272]**입니다. τ = 0.5의 `[0.84, 0.11, 0.04]`는 반올림 범위 안에서 맞습니다(0.8438, 0.1142, 0.0420). 또 원문은 τ = 2를 "거의 균등(uniform)"이라고 했지만, 가장 큰 가중치(0.48)가 가장 작은 가중치(0.23)의 두 배가 넘고 균등값 1/3에서도 멉니다(연습문제 05-1에서 "거의 균등"이 되는 τ를 예측하고 재 봅니다).

# %%
seed_claims = {1.0: [0.59, 0.22, 0.13], 2.0: [0.42, 0.25, 0.20], 0.5: [0.84, 0.11, 0.04]}
for tau, claimed in seed_claims.items():
    claimed = torch.tensor(claimed, dtype=torch.float64)
    off = (claimed - by_tau[tau]).abs().max().item()
    print(f"τ = {tau}: 원문 합 {claimed.sum():.2f}, 계산과의 최대 차이 {off:.4f}")
assert abs(sum(seed_claims[1.0]) - 1) > 0.05 and abs(sum(seed_claims[2.0]) - 1) > 0.1
torch.testing.assert_close(by_tau[1.0], torch.tensor([0.6285, 0.2312, 0.1402], dtype=torch.float64), atol=1e-4, rtol=0)
torch.testing.assert_close(by_tau[2.0], torch.tensor([0.4810, 0.2918, 0.2272], dtype=torch.float64), atol=1e-4, rtol=0)
assert (torch.tensor(seed_claims[0.5], dtype=torch.float64) - by_tau[0.5]).abs().max() < 0.005
assert by_tau[2.0].max() > 2 * by_tau[2.0].min()

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.0), sharey=True)
for ax, (tau, w) in zip(axes, by_tau.items()):
    weight_bars(w, ["z=2.0", "z=1.0", "z=0.5"], ax=ax, title=f"τ = {tau}", ylim=(0, 1), ylabel="")
    ax.axhline(1 / 3, color="gray", ls="--", lw=1)
axes[0].set_ylabel("가중치 (점선: 균등 1/3)")
fig.suptitle("같은 점수, 다른 온도")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 2. 양 끝: τ→0과 τ→∞
#
# 가장 큰 점수를 $m = \max_j z_j$라 하고 분자·분모에 $e^{-m/\tau}$를 곱하면
#
# $$\mathrm{softmax}_\tau(z)_i = \frac{e^{(z_i - m)/\tau}}{\sum_j e^{(z_j - m)/\tau}}.$$
#
# - **τ→0**: $z_j < m$인 항은 $(z_j - m)/\tau \to -\infty$이므로 $e^{\cdots} \to 0$, $z_j = m$인 항은 $e^0 = 1$입니다. 최댓값이 $k$개면 그 $k$개가 $1/k$씩 나눠 갖습니다. 동점이 없으면 원-핫, 곧 argmax입니다.
# - **τ→∞**: 모든 지수가 0으로 가서 $e^0 = 1$이 되므로 $n$개가 $1/n$씩 갖는 균등 분포입니다. 더 정확히는 $w_i \approx \frac{1}{n}\left(1 + \frac{z_i - \bar z}{\tau}\right)$로, 균등에서 벗어난 정도가 $1/\tau$로 줄어듭니다($\bar z$는 점수의 평균).

# %% [markdown] slideshow={"slide_type": "subslide"}
# 동점이 있는 점수 `[1, 3, 3, 0]`으로 두 극한을 확인합니다. τ = 10⁴에서는 균등에서 벗어난 정도에 τ를 곱해 1차 근사의 $(z_i - \bar z)/n$과 비교합니다.

# %%
z_tie = torch.tensor([1.0, 3.0, 3.0, 0.0], dtype=torch.float64)
cold = softmax_t(z_tie, 1e-3)
hot = softmax_t(z_tie, 1e4)
n = len(z_tie)
print("τ = 0.001:", cold.numpy().round(4))
print("τ = 10000:", hot.numpy().round(4))
# Deviation from uniform, magnified by τ: it approaches (z_i − z̄)/n.
print("(w − 1/n)·τ  :", ((hot - 1 / n) * 1e4).numpy().round(4))
print("(z − z̄)/n    :", ((z_tie - z_tie.mean()) / n).numpy().round(4))

torch.testing.assert_close(cold, torch.tensor([0.0, 0.5, 0.5, 0.0], dtype=torch.float64))   # ties split evenly
torch.testing.assert_close(hot, torch.full((4,), 0.25, dtype=torch.float64), atol=1e-3, rtol=0)
torch.testing.assert_close((hot - 1 / n) * 1e4, (z_tie - z_tie.mean()) / n, atol=1e-3, rtol=0)

# %% [markdown] slideshow={"slide_type": "subslide"}
# τ가 작으면 $z/\tau$가 수천이 되어 교과서 공식의 $e^{z/\tau}$가 넘칩니다(float32에서는 88.7을 넘으면 inf). `softmax_t`는 최댓값을 빼므로 τ = 0.001에서도 위처럼 정확한 값을 냅니다. 01번의 `softmax(z / τ)`도 나눈 **뒤에** 최댓값을 빼므로 여기서는 똑같이 안전합니다. 빼는 순서가 갈리는 것은 $z/\tau$ 자체가 float32의 최댓값(약 $3.4 \times 10^{38}$)을 넘을 때뿐입니다(아래 마지막 두 줄: $z = 10^{30}$, τ = $10^{-9}$).

# %%
z32 = z_tie.float()
textbook = torch.exp(z32 / 1e-3) / torch.exp(z32 / 1e-3).sum()
print("교과서 공식 (float32, τ = 0.001):", textbook)
print("softmax_t                      :", softmax_t(z32, 1e-3))
assert torch.isnan(textbook).any()
assert torch.isfinite(softmax_t(z32, 1e-3)).all() and torch.isfinite(softmax(z32 / 1e-3)).all()   # 01's softmax too
huge = torch.tensor([1e30, 0.0])                     # z/τ = 1e39 > 3.4e38: only the division itself overflows
print("z = [1e30, 0], τ = 1e-9: softmax(z / τ) =", softmax(huge / 1e-9), " softmax_t =", softmax_t(huge, 1e-9))
assert torch.isnan(softmax(huge / 1e-9)).any() and torch.equal(softmax_t(huge, 1e-9), torch.tensor([1.0, 0.0]))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "τ→0이면 argmax"라고만 말하면 동점일 때 무엇이 나오는지 질문이 나옵니다. `[1, 3, 3, 0]`의 결과 `[0, 0.5, 0.5, 0]`을 보여 주고, 극한이 "가장 큰 점수들에 똑같이 나눈 것"이라고 정확히 말하세요. argmax는 그중 하나(보통 첫 번째)를 고르는 것이라 극한과 다릅니다.

# %% [markdown]
# ## 3. 엔트로피와 최대 가중치를 τ의 함수로
#
# "얼마나 쏠렸는가"를 숫자 하나로 재는 두 방법입니다.
#
# - **최대 가중치** $\max_i w_i$: $1/n$(균등)부터 1(원-핫)까지.
# - **엔트로피** $H(w) = -\sum_i w_i \log w_i$ (자연로그, 단위 nat): 0(원-핫)부터 $\log n$(균등)까지. $0 \cdot \log 0 = 0$으로 약속합니다. $e^{H}$는 "실제로 몇 개의 키를 보는가"로 읽을 수 있습니다(원-핫 1개, 균등 $n$개).

# %% [markdown] slideshow={"slide_type": "subslide"}
# τ는 $10^{-3}$부터 $10^{2}$까지, 가장 큰 값이 가장 작은 값의 10만 배인 범위를 움직여야 하므로 **로그 눈금**으로 훑습니다. 점수 세 가지를 비교합니다.
#
# 1. 원문 004의 `[2.0, 1.0, 0.5]`
# 2. 03번 "배" 문장에서 쿼리(query) "배"의 점수 한 행 ([원문 003](../SOURCES.md)의 X, W_Q, W_K로 계산; 4절에서 자세히)
# 3. 더 날카로운 비교 대상: 표준정규분포에서 뽑은 쿼리·키(key) 8개, 키 차원(key dimension, d_k) 64, 점수 = q·k/√64

# %%
bae_data = load_json("seed003_bae.json")
tokens = bae_data["tokens"]
X = torch.tensor(bae_data["X"], dtype=torch.float64)           # (T, d_model) = (8, 4)
Q = X @ torch.tensor(bae_data["W_Q"], dtype=torch.float64)     # (T, d_k)
K = X @ torch.tensor(bae_data["W_K"], dtype=torch.float64)     # (T, d_k)
V = X @ torch.tensor(bae_data["W_V"], dtype=torch.float64)     # (T, d_v)
bae = Q @ K.T / math.sqrt(Q.shape[-1])                         # (T, T) scaled scores

seed_everything(5)
q_rand = torch.randn(8, 64, dtype=torch.float64)   # (T, d_k): standard-normal queries
k_rand = torch.randn(8, 64, dtype=torch.float64)   # (T, d_k): standard-normal keys
random_scores = q_rand @ k_rand.T / math.sqrt(64)  # (T, T)
rows = {"원문 004 [2, 1, 0.5]": z, "'배' 행 (d_k = 4)": bae[2], "무작위 행 (d_k = 64)": random_scores[0]}

# %% [markdown] slideshow={"slide_type": "subslide"}
# 엔트로피는 과정 전체에서 이 함수 하나로 잽니다. $w \log w$를 그대로 계산하면 $w = 0$에서 $0 \cdot (-\infty)$ = NaN이 되므로, $0 \cdot \log 0 = 0$을 지키는 `torch.special.xlogy(w, w)`를 씁니다.

# %% tags=["save"]
import torch


def entropy(weights, dim=-1):  # (..., T) -> (...)
    """-Σ w log w in nats along dim, with 0·log 0 = 0."""
    return 0.0 - torch.special.xlogy(weights, weights).sum(dim=dim)   # 0.0 - x turns -0.0 into 0.0


# %% slideshow={"slide_type": "subslide"}
def sweep(scores, taus):  # scores (T,), taus (n,) -> entropy (n,), max weight (n,)
    w = softmax_t(scores, torch.as_tensor(taus)[:, None])   # (n, T): one row per temperature
    return entropy(w).numpy(), w.amax(dim=-1).numpy()


tau_grid = np.logspace(-3, 2, 51)
sweeps = {name: sweep(s, tau_grid) for name, s in rows.items()}
for name, s in rows.items():
    (h1,), (m1,) = sweep(s, [1.0])
    print(f"{name:<22} n = {len(s)}  τ=1: 엔트로피 {h1:.4f} / log n = {math.log(len(s)):.4f}, 최대 가중치 {m1:.4f}")

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.1))
for name, (h, top) in sweeps.items():
    ax1.semilogx(tau_grid, h, label=name)
    ax2.semilogx(tau_grid, top, label=name)
for ax in (ax1, ax2):
    ax.axvline(1.0, color="gray", ls=":", lw=1)
    ax.set_xlabel("온도 τ (로그 눈금)")
ax1.axhline(math.log(8), color="gray", ls="--", lw=1)
ax1.set(title="엔트로피 (점선: log 8)", ylabel="엔트로피 (nat)")
ax2.set(title="최대 가중치", ylabel="최대 가중치", ylim=(0, 1.05))
ax2.legend(loc="upper right", fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 세 곡선 모두 같은 방향으로 움직이지만(τ가 커지면 엔트로피는 오르고 최대 가중치는 내려감) **놓인 자리가 다릅니다.** 같은 곡선을 옮겨 놓은 것은 아닙니다. 점수가 세 개뿐인 원문 004 행은 엔트로피가 $\log 3$까지만, 최대 가중치가 $1/3$까지만 가므로 곡선의 높이부터 다릅니다. 두 성질(단조성, 양 끝 값)을 먼저 확인합니다.

# %% slideshow={"slide_type": "skip"}
for name, (h, top) in sweeps.items():
    n = len(rows[name])
    assert np.all(np.diff(h) >= -1e-12), name        # entropy rises with τ
    assert np.all(np.diff(top) <= 1e-12), name       # the top weight falls with τ
    assert top[-1] < 1 / n + 0.02 and h[-1] > math.log(n) - 0.01, name
assert sweeps["무작위 행 (d_k = 64)"][1][0] > 0.999
assert sweeps["'배' 행 (d_k = 4)"][1][0] > 0.999

# %% [markdown] slideshow={"slide_type": "subslide"}
# 곡선이 어디서 꺾이는지는 점수가 얼마나 퍼져 있는지가 정합니다. 엔트로피가 $\tfrac12 \log n$이 되는 τ와 점수의 표준편차(`torch.std`의 기본값, $n-1$로 나누는 표본 표준편차)를 나란히 놓아 봅니다. 마지막 줄은 점수와 τ를 함께 30배 해도 곡선이 그대로인지 확인합니다.

# %%
for name, (h, _) in sweeps.items():
    s, n = rows[name], len(rows[name])
    tau_mid = float(np.exp(np.interp(0.5 * math.log(n), h, np.log(tau_grid))))
    print(f"{name:<22} 표본 표준편차 {s.std().item():.4f}, 엔트로피가 절반인 τ ≈ {tau_mid:.3f}, 비 {tau_mid / s.std().item():.2f}")
    assert 0.5 < tau_mid / s.std().item() < 0.75, name
assert min(rows[k].std().item() for k in list(rows)[::2]) > 25 * rows["'배' 행 (d_k = 4)"].std().item()
h_bae, top_bae = sweeps["'배' 행 (d_k = 4)"]
h_x30, top_x30 = sweep(30 * rows["'배' 행 (d_k = 4)"], 30 * tau_grid)      # scores ×30 and τ ×30: same curve
assert np.allclose(h_x30, h_bae, atol=1e-12) and np.allclose(top_x30, top_bae, atol=1e-12)
print("'배' 행: 점수 ×30, τ ×30 → 엔트로피·최대 가중치 곡선이 그대로 (차이 < 1e-12)")

# %% [markdown]
# 세 행 모두 엔트로피가 절반이 되는 τ가 점수의 표본 표준편차의 0.5~0.75배입니다($n$으로 나누는 표준편차를 쓰면 비가 조금 커져 이 띠를 벗어나는 행도 있으니, 띠보다 "같은 자릿수"라는 점이 요점입니다). τ로 나누는 것은 점수를 1/τ배 하는 것과 같으므로, 곡선의 위치는 점수의 퍼짐이 정합니다. "배" 행은 표준편차가 약 0.03으로 다른 두 행보다 25배 넘게 작아서 곡선 전체가 왼쪽으로 밀려 있고, τ = 1에서 이미 균등 분포와 거의 구별되지 않습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: 원문 004는 τ = 0.5의 `[0.84, 0.11, 0.04]`를 "거의 hard attention"이라 부릅니다. 하드 어텐션(hard attention)은 키 하나만 고르는 원-핫 가중치로, 엔트로피가 0이고 실제로 보는 키가 $e^0 = 1$개입니다. 이 분포의 엔트로피는 **0.524 nat**으로 최댓값 $\log 3 = 1.099$의 절반 가까이(48%)이고, $e^{H} \approx 1.69$개의 키를 보는 셈이며, 가중치의 16%가 나머지 두 키에 실려 출력에 그대로 섞입니다. "한쪽으로 쏠렸다"는 맞지만 "거의 하드"는 아닙니다. 게다가 원문은 5절에서 다룰 `[0.95, 0.02, 0.03]`(실제로 계산하면 `[0.96, 0.02, 0.02]`, 엔트로피 0.20 nat로 이보다 **더** 날카로움)을 "부드러운 분포"라고 불러, 두 표현이 서로 어긋납니다.

# %%
w_half = softmax_t(z, 0.5)
w_dk = softmax_t(torch.tensor([32.0, 1.0, 2.0], dtype=torch.float64), math.sqrt(64))
for name, w in {"τ = 0.5 (원문: 거의 hard)": w_half, "[32, 1, 2]/8 (원문: 부드러운)": w_dk}.items():
    h = entropy(w).item()
    print(f"{name:<28} 가중치 {w.numpy().round(4)}  엔트로피 {h:.3f} nat = log 3의 {h / math.log(3):.0%}, "
          f"e^H = {math.exp(h):.2f}개, 최대 밖의 가중치 {1 - w.max().item():.2f}")
assert abs(entropy(w_half).item() - 0.524) < 5e-4 and 0.45 < entropy(w_half).item() / math.log(3) < 0.5
assert entropy(w_dk) < entropy(w_half) and 1 - w_half.max() > 0.15

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 그래프에서 키가 8개인 두 곡선("배" 행, 무작위 행)이 비슷한 모양으로 좌우에 놓인다는 점을 짚으세요. 점수가 세 개인 원문 004 행은 끝값이 $\log 3$, $1/3$이라 모양이 다릅니다. τ를 바꾸는 것과 점수 전체를 배율만큼 키우는 것은 같은 일이라서, 한 행의 점수를 c배 하면 그 곡선이 로그 눈금에서 정확히 c배 자리로 옮겨 갑니다(위 셀의 마지막 줄: ×30 확인). 곡선의 위치는 점수 간격이 정합니다. 이것이 5절(1/√d_k = 고정 온도)의 복선입니다. "거의 hard attention" 바로잡기에서는 숫자 하나(e^H ≈ 1.69개의 키)만 기억하게 하면 충분합니다.

# %% [markdown]
# ## 4. 실제 어텐션 맵: "어제 밤에 배가 고파서 치킨을 시켜서 먹었다"
#
# 3절에서 원문 003의 입력 X(8 × 4)와 투영(projection) 행렬 W_Q, W_K로 $Q = XW_Q$, $K = XW_K$를 계산하고 점수 $QK^\top/\sqrt{d_k}$ ($d_k = 4$)를 만들었습니다. 그 위에 온도 τ를 한 번 더 적용한 $\mathrm{softmax}(QK^\top / (\sqrt{d_k}\,\tau))$를 봅니다.

# %%
print("토큰:", tokens)
# QKᵀ/2 has at most 5 decimals here (X and W have 1): print all 5, no rounding tie can flip across CPUs.
print("'배' 행의 점수:", " ".join(f"{v:.5f}" for v in bae[2].tolist()))
spread = bae.amax(dim=-1) - bae.amin(dim=-1)
print("행마다 (최대 − 최소) 점수:", " ".join(f"{v:.5f}" for v in spread.tolist()))
w1 = softmax_t(bae, 1.0)
print(f"τ = 1 가중치의 범위: {w1.min():.4f} ~ {w1.max():.4f} (균등 1/8 = 0.125)")
assert spread.max() < 0.1 and (w1 - 1 / 8).abs().max() < 0.01

# %% [markdown] slideshow={"slide_type": "subslide"}
# 점수 간격이 0.1도 안 되어 τ = 1의 가중치는 모두 0.125 ± 0.01이고, 이 맵은 "무엇을 보는지"를 거의 말해 주지 않습니다. τ를 얼마나 낮춰야 "배" 행이 한 키에 몰릴까요? 최대 가중치는 τ에 대해 단조 감소하므로, 촘촘한 로그 격자에서 0.9를 지나는 τ를 보간으로 읽습니다(온도를 `(n, 1, 1)` 텐서로 주면 격자 전체가 한 번에 계산됩니다).

# %%
fine = torch.logspace(-4, 0, 4001, dtype=torch.float64)     # (n,) τ grid, 1000 points per decade
top = softmax_t(bae, fine[:, None, None]).amax(dim=-1)      # (n, T): largest weight of every row at every τ


def tau_at(row_top, target):  # the τ where a falling curve row_top(τ) crosses target
    return float(np.exp(np.interp(-target, -row_top.numpy(), fine.log().numpy())))


tau_bae_09 = tau_at(top[:, 2], 0.9)
tau_all_09 = min(tau_at(top[:, i], 0.9) for i in range(len(tokens)))
print(f"'배' 행의 최대 가중치가 0.9가 되는 τ ≈ {tau_bae_09:.4f}  (QKᵀ를 약 {2 * tau_bae_09:.4f}로 나누는 셈)")
print(f"모든 행이 0.9 이상이 되려면 τ ≤ {tau_all_09:.4f}")
assert abs(softmax_t(bae[2], tau_bae_09).max().item() - 0.9) < 1e-4
assert tau_bae_09 < 0.01 and tau_all_09 < tau_bae_09

# %% [markdown] slideshow={"slide_type": "subslide"}
# "배" 행이 0.9에 이르려면 τ ≈ 0.009, 곧 점수를 약 110배 키워야 합니다. 이 예제의 입력과 투영 행렬이 0~0.5의 작은 수이고 d_k = 4라서 점수 $QK^\top/\sqrt{d_k}$가 0.03~0.16에 머물기 때문입니다. 학습된 모델은 τ를 낮추지 않고도 이것을 해낼 수 있을까요? (토론 질문 1)

# %% [markdown] slideshow={"slide_type": "skip"}
# 아래 접힌 셀은 슬라이더 그림을 만드는 코드입니다. 그림을 한 번만 만들고, τ가 바뀌면 히트맵의 값(`set_data`)과 막대 높이, 제목만 바꿉니다. 색 눈금은 0~1로 고정해 평평한 맵은 정말 평평하게 보입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
import numpy as np
import torch


def temperature_panels(ax_map, ax_row, scores, tokens, row, fixed_labels=True):
    """Heatmap of softmax(scores / τ) on a fixed 0–1 scale and the bars of one row, drawn once.

    Returns (update, image): update(tau) changes the artists in place and returns the (T, T) weights.
    fixed_labels pins axis labels and titles (fast redraws); a layout engine places them otherwise.
    """
    t = len(tokens)
    image = ax_map.imshow(np.zeros((t, t)), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax_map.set_xticks(range(t), tokens, rotation=45, ha="right")
    ax_map.set_yticks(range(t), tokens)
    ax_map.set(xlabel="키(key)", ylabel="쿼리(query)")
    ax_map.add_patch(plt.Rectangle((-0.5, row - 0.5), t, 1, fill=False, edgecolor="tab:red", lw=2))
    bars = ax_row.bar(range(t), np.zeros(t), color="tab:red")
    ax_row.axhline(1 / t, color="gray", ls="--", lw=1)
    ax_row.set_xticks(range(t), tokens, rotation=45, ha="right")
    ax_row.set(ylim=(0, 1.05), ylabel="가중치")
    fixed = {"y": 1.01} if fixed_labels else {}
    map_title, row_title = ax_map.set_title(" ", **fixed), ax_row.set_title(" ", **fixed)
    if fixed_labels:  # fixed positions: matplotlib then skips measuring every tick label on every frame
        ax_map.xaxis.set_label_coords(0.5, -0.24)
        ax_map.yaxis.set_label_coords(-0.2, 0.5)
        ax_row.yaxis.set_label_coords(-0.12, 0.5)

    def update(tau):
        w = softmax_t(scores, tau)                          # (T, T)
        image.set_data(w.numpy())
        for bar, h in zip(bars, w[row].tolist()):
            bar.set_height(h)
        h_row = entropy(w[row])                             # entropy of the highlighted row
        map_title.set_text(f"어텐션 가중치, τ = {tau:.3g}")
        row_title.set_text(f"'{tokens[row]}' 행: 엔트로피 {h_row:.2f}, 최대 {w[row].max():.2f}")
        return w.numpy()

    return update, image


def temperature_explorer(scores, tokens, row, tau=1.0):
    """One log-scale τ slider (0.001 .. 10) over the attention map and one row's weights."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    # Fixed margins, no layout engine: tight/constrained layout would add a second full draw to every frame.
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.0), width_ratios=(1.2, 1.0))
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.23, top=0.92, wspace=0.38)
    update, image = temperature_panels(*axes, scores, tokens, row)
    fig.colorbar(image, ax=axes[0], fraction=0.046, pad=0.02)   # the fixed 0–1 scale of the weights
    slider = widgets.FloatLogSlider(value=tau, base=10, min=-3, max=1, step=0.05, description="τ",
                                    readout_format=".3g")
    return Explorer(fig, update, {"tau": slider}, dpi=90)   # dpi 90: about 15% less work per frame than 100


def temperature_small_multiples(scores, tokens, row, taus, figsize=(10, 4.6)):
    """The explorer's panels for several τ side by side, one shared 0–1 colour bar (the static counterpart)."""
    fig, axes = plt.subplots(2, len(taus), figsize=figsize, height_ratios=(1.25, 1.0), layout="constrained")
    maps = {}
    for i, tau in enumerate(taus):
        update, image = temperature_panels(axes[0, i], axes[1, i], scores, tokens, row, fixed_labels=False)
        maps[tau] = update(tau)
        axes[0, i].set_title(f"τ = {tau:g}")
        axes[1, i].set_title(f"'{tokens[row]}' 행, τ = {tau:g}", fontsize=9)
        if i:
            axes[0, i].set(yticklabels=[], ylabel="")
            axes[1, i].set(yticklabels=[], ylabel="")
    fig.colorbar(image, ax=axes[0, :], fraction=0.03, pad=0.02, label="가중치 (0~1 고정)")
    return fig, maps


# %% [markdown] slideshow={"slide_type": "subslide"}
# 슬라이더로 τ를 10에서 0.001까지 움직여 보세요. 왼쪽은 전체 가중치 맵(색 눈금 0~1 고정), 오른쪽은 빨간 테두리의 "배" 행입니다.

# %% tags=["nbval-ignore-output"]
explorer = temperature_explorer(bae, tokens, row=2, tau=1.0)
explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 코드(`temperature_panels`)로 τ = 1, 0.1, 0.02, 0.003을 나란히 그립니다. 색 눈금은 네 맵이 함께 쓰는 0~1입니다.

# %%
static_taus = [1.0, 0.1, 0.02, 0.003]
fig, maps = temperature_small_multiples(bae, tokens, 2, static_taus)
fig.suptitle("온도를 낮추면 '배' 문장의 어텐션 맵이 날카로워진다")
plt.show()

# %% slideshow={"slide_type": "subslide"}
for tau, w in maps.items():
    print(f"τ = {tau:<5} '배' 행: 최대 {w[2].max():.3f}, 엔트로피 {entropy(torch.from_numpy(w[2])).item():.3f}, "
          f"가장 많이 보는 키 '{tokens[int(w[2].argmax())]}'")
assert np.allclose(maps[1.0], torch.softmax(bae, dim=-1).numpy())
assert maps[1.0].max() < 0.14 and maps[0.003].min(axis=1).max() < 1e-3
assert (maps[0.003].argmax(axis=1) == 2).all() and (maps[0.003].max(axis=1) > 0.9).all()
np.testing.assert_allclose(explorer.last, maps[1.0])   # the slider's first frame is the τ = 1 map

# %% [markdown] slideshow={"slide_type": "subslide"}
# τ→0에서는 **모든 쿼리가 "배" 열로** 몰립니다. "배"의 키 벡터가 모든 쿼리와의 내적에서 가장 크기 때문입니다. 온도는 이미 있는 순서를 과장할 뿐, 순서를 바꾸지 않습니다.
#
# > **원문 바로잡기**: 원문 003은 "배"가 "고파서"와 가장 강하게 연결된다고 결론 내립니다. 계산해 보면 "배" 행에서 "고파서"의 점수는 8개 중 **7번째**이고, 가장 큰 점수는 "배" 자신입니다. τ를 아무리 낮춰도 "고파서"의 가중치는 0으로 갑니다. 원문이 직접 적은 "배" 행의 가중치에서도 "고파서"(0.122)는 최댓값(0.129)이 아닙니다.

# %%
claims = bae_data["seed_claims"]
rank = [tokens[i] for i in bae[2].argsort(descending=True)]
print("'배' 행 점수 순위:", rank)
print("원문이 적은 '배' 행 가중치:", claims["weights_row_bae"], "→ '고파서' =", claims["weights_row_bae"][4])
assert claims["strongest_key_for_bae"] == "고파서" and rank.index("고파서") == 6 and rank[0] == "배"
assert claims["weights_row_bae"][4] < max(claims["weights_row_bae"])
assert maps[0.003][2, tokens.index("고파서")] < 1e-6

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 1에서 시작해 천천히 내리세요. 0.1까지는 변화가 작고("배" 행의 최대 가중치 0.13 → 0.19), 0.02 근처에서 "배" 열이 뚜렷해지며(0.57), 0.003에서는 모든 행이 "배" 열 하나로 몰립니다. "언제 바뀌기 시작하느냐는 점수 간격이 정한다"는 3절의 결론을 눈으로 확인하는 장면입니다. 원문 바로잡기는 "온도는 순서를 과장할 뿐 바꾸지 않는다"와 함께 말하면 자연스럽습니다.

# %% [markdown]
# ## 5. 1/√d_k는 고정된 온도다
#
# 스케일드 닷프로덕트 어텐션(scaled dot-product attention)의 점수 나눗셈은 그 자체가 온도입니다.
#
# $$\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) = \mathrm{softmax}_{\tau}\!\left(QK^\top\right), \qquad \tau = \sqrt{d_k}.$$
#
# 04번에서 본 것처럼 q·k의 분산은 d_k이므로, τ = √d_k는 점수 간격을 d_k와 상관없이 1 정도로 맞추는 **d_k에 따라 정해진 고정 온도**입니다. 03번의 `scaled_dot_product_attention`이 바로 온도 √d_k의 `softmax_t`이고, 점수를 τ = t로 한 번 더 나누면 전체 온도는 $t\sqrt{d_k}$가 됩니다(09번의 `masked_attention(..., temperature=t)`가 이 t입니다).

# %%
_, attn = scaled_dot_product_attention(Q, K, V)                # 03's attention: (T, T) weights
torch.testing.assert_close(attn, softmax_t(Q @ K.T, math.sqrt(Q.shape[-1])))
for t in [1.0, 0.1, 0.003]:
    torch.testing.assert_close(softmax_t(bae, t), softmax_t(Q @ K.T, t * math.sqrt(Q.shape[-1])))
print("scaled_dot_product_attention = softmax_t(QKᵀ, √d_k), softmax_t(QKᵀ/√d_k, t) = softmax_t(QKᵀ, t·√d_k): 확인")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 원문 004는 d_k = 64일 때 점수 `[32, 1, 2]`를 √64 = 8로 나누는 예를 듭니다. 이것을 온도 8로 읽으면 바로 계산됩니다.
#
# > **원문 바로잡기**: 원문 004는 나눈 뒤의 가중치를 `[0.95, 0.02, 0.03]`이라 적고 "부드러운 분포"라 부릅니다. 계산한 값은 **[0.9576, 0.0199, 0.0225]**로, 셋째 값은 0.02이고 첫째 값은 0.96에 가깝습니다. 최대 가중치 0.96(엔트로피 0.20 nat, 균등이면 1.10)은 부드럽다기보다 여전히 한 키에 크게 쏠린 분포입니다. 나눗셈은 원-핫(1.0000)을 면하게 해 줄 뿐입니다.

# %%
print("softmax([32, 1, 2] / 8) =", w_dk.numpy().round(4), f" 엔트로피 {entropy(w_dk):.3f} / log 3 = {math.log(3):.3f}")
torch.testing.assert_close(w_dk, torch.tensor([0.9576, 0.0199, 0.0225], dtype=torch.float64), atol=1e-4, rtol=0)
assert w_dk.max() > 0.95 and entropy(w_dk) < 0.25

# %% [markdown] slideshow={"slide_type": "subslide"}
# 무작위 쿼리·키로 "d_k가 클 때 나누지 않으면(τ = 1) 포화(saturation)되고, τ = √d_k면 d_k와 상관없이 비슷한 엔트로피"가 되는지도 봅니다. 어텐션 맵처럼 쿼리 32개가 **같은 키 8개**를 봅니다(점수 행렬 $qk^\top$, 32 × 8).

# %%
seed_everything(7)
for d_k in [4, 64, 1024]:
    q = torch.randn(32, d_k, dtype=torch.float64)           # (T_q=32, d_k)
    k = torch.randn(8, d_k, dtype=torch.float64)            # (T_k=8, d_k)
    qk = q @ k.T                                             # (32, 8): 32 queries, the same 8 keys
    h_raw = entropy(softmax_t(qk, 1.0)).mean().item()
    h_scaled = entropy(softmax_t(qk, math.sqrt(d_k))).mean().item()
    print(f"d_k = {d_k:>4}: 평균 엔트로피 τ=1 {h_raw:.2f}, τ=√d_k {h_scaled:.2f}  (log 8 = {math.log(8):.2f})")
    assert 1.0 < h_scaled < 2.0
    if d_k >= 64:
        assert h_raw < 0.5

# %% [markdown]
# ## 6. 다른 곳의 온도
#
# 온도는 어텐션만의 것이 아닙니다. 소프트맥스가 있는 곳이면 어디서나 τ가 같은 방식으로 분포의 쏠림을 조절합니다. 두 가지를 작은 예로 계산합니다.
#
# ### 지식 증류: τ > 1의 부드러운 정답
#
# 지식 증류(knowledge distillation)에서는 큰 교사(teacher) 모델의 출력 분포를 작은 학생(student) 모델이 따라 하게 합니다. 교사의 로짓(logit)을 τ = 1로 소프트맥스하면 정답에 확률이 크게 몰립니다. 그래도 아래 예에서 "호랑이"(0.074)처럼 그럴듯한 오답은 보이지만, 아주 작은 확률들 사이의 차이, 곧 "자동차가 비행기보다 조금 더 고양이 같다"는 정보는 둘 다 0.001 미만으로 묻혀 교차 엔트로피에 거의 영향을 주지 못합니다. [Hinton 등 2015](../SOURCES.md)의 예: BMW 사진을 쓰레기 트럭으로 볼 확률은 아주 작지만 당근으로 볼 확률보다는 훨씬 큽니다. τ > 1로 부드럽게 만든 **소프트 타깃**(soft target)은 이런 작은 확률들의 순서를 드러냅니다. 아래 로짓은 지어낸 예입니다.

# %%
classes = ["고양이", "호랑이", "개", "자동차", "비행기"]
teacher = torch.tensor([6.0, 3.5, 2.5, -1.0, -2.0], dtype=torch.float64)   # made-up logits
student = torch.tensor([4.0, 1.0, 2.0, 0.0, -1.0], dtype=torch.float64)
soft = {}
for tau in [1.0, 4.0, 10.0]:
    soft[tau] = softmax_t(teacher, tau)
    print(f"τ = {tau:>4}: " + "  ".join(f"{c} {p:.4f}" for c, p in zip(classes, soft[tau].tolist())))
assert all(torch.equal(p.argsort(), teacher.argsort()) for p in soft.values())
assert soft[1.0][3:].max() < 0.001 and soft[4.0][3] > 0.05
assert soft[1.0][1] > 0.05                          # τ = 1: the likely wrong answer (호랑이) is visible

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: 원문 004는 지식 증류에서 "teacher 모델의 attention"을 τ > 1로 부드럽게 전달한다고 적었습니다. 온도로 부드럽게 만드는 것은 어텐션 가중치가 아니라 교사 모델의 **출력 로짓**입니다. Hinton 등 2015(Hinton, Vinyals & Dean, "Distilling the Knowledge in a Neural Network")는 마지막 소프트맥스 층에 들어가는 클래스 로짓 $z_i$를 $q_i = e^{z_i/\tau} / \sum_j e^{z_j/\tau}$로 부드럽게 만든 확률을 소프트 타깃으로 삼고, 학생의 로짓도 **같은 온도 τ**로 소프트맥스해 두 분포의 교차 엔트로피를 줄입니다(정답 레이블 항은 τ = 1로 따로 더함). 소프트 타깃 항의 기울기가 $1/\tau^2$로 줄어들기 때문에 그 항에 $\tau^2$를 곱합니다. 어텐션을 따라 배우게 하는 증류는 따로 있는 기법이고, 아래의 두 예는 온도를 쓰지 않습니다. 트랜스포머의 어텐션 가중치를 따라 하게 하는 MiniLM([Wang 등 2020](../SOURCES.md))은 교사와 학생의 마지막 층에서 셀프 어텐션 분포(소프트맥스 가중치) 사이의 KL 발산을 줄입니다(밸류끼리의 관계, 곧 softmax(VVᵀ/√d_k) 사이의 KL 발산도 함께 줄임). 이름이 비슷한 [Zagoruyko & Komodakis 2017](../SOURCES.md)의 attention transfer는 CNN의 활성값으로 만든 **공간 어텐션 맵**($\sum_c |A_c|^p$)을 L2 노름으로 나눠 비교하는 것으로, 이 과정의 어텐션 가중치와는 다른 대상입니다. 이 노트북은 Hinton 등의 방식대로 출력 로짓에 온도를 씁니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# τ가 크면 두 분포 사이의 KL 발산(Kullback-Leibler divergence)의 기울기(gradient)가 약 $1/\tau^2$에 비례해 작아집니다(교사 분포는 고정이므로 KL 발산과 교차 엔트로피의 기울기는 같습니다). 그래서 증류 손실(loss)에는 보통 $\tau^2$를 곱해 기울기 크기를 τ와 상관없이 맞춥니다. 학생 로짓에 대한 기울기를 직접 재 봅니다.

# %%
grads = {}
for tau in [1.0, 2.0, 4.0, 8.0, 16.0]:
    s = student.clone().requires_grad_(True)
    p_t = softmax_t(teacher, tau)
    kl = (p_t * (p_t.log() - torch.log_softmax(s / tau, dim=-1))).sum()
    kl.backward()
    grads[tau] = s.grad.norm().item()
    print(f"τ = {tau:>4}: KL = {kl.item():.4f}, |기울기| = {grads[tau]:.5f}, τ²·|기울기| = {tau ** 2 * grads[tau]:.4f}")
assert 3.5 < grads[8.0] / grads[16.0] < 4.5

# %% [markdown]
# τ를 8에서 16으로 두 배 하면 기울기는 약 4배 작아집니다(τ가 작은 쪽에서는 아직 이 비례가 성립하지 않습니다). $\tau^2$을 곱한 값은 τ가 커질수록 한 값으로 모입니다.

# %% [markdown]
# ### 언어 모델의 샘플링: 다양성과 τ
#
# 언어 모델은 다음 토큰(token)의 로짓을 내고, 그 소프트맥스에서 토큰을 하나 **뽑습니다**. 이것이 샘플링(sampling)입니다. τ가 작으면 늘 가장 그럴듯한 토큰만 나오고(τ→0은 argmax, 곧 탐욕적(그리디) 디코딩(greedy decoding)), τ가 크면 엉뚱한 토큰도 자주 나옵니다. "어제 밤에 배가 고파서 치킨을 ___" 다음 토큰의 분포를 지어내고, 시드를 고정한 생성기로 τ마다 1000번 뽑습니다.

# %% slideshow={"slide_type": "subslide"}
def sample_counts(logits, tau, n, seed=0):  # logits (V,) -> counts (V,) of n draws from softmax(logits / τ)
    gen = torch.Generator().manual_seed(seed)
    draws = torch.multinomial(softmax_t(logits, tau), n, replacement=True, generator=gen)   # (n,)
    return torch.bincount(draws, minlength=len(logits))


next_tokens = ["시켜서", "먹었다", "주문했다", "튀겼다", "샀다", "포장했다", "그렸다", "버렸다"]
next_logits = torch.tensor([3.0, 2.2, 1.5, 0.5, 0.0, -0.5, -1.5, -2.5], dtype=torch.float64)   # made-up
sample_taus = [0.1, 0.5, 1.0, 1.5, 3.0]
counts = {tau: sample_counts(next_logits, tau, n=1000) for tau in sample_taus}
diversity = {}
for tau, c in counts.items():
    diversity[tau] = ((c > 0).sum().item(), entropy(c.double() / c.sum()).item())
    print(f"τ = {tau:<3}: 나온 토큰 {diversity[tau][0]}종, 표본 엔트로피 {diversity[tau][1]:.2f}, "
          f"'{next_tokens[0]}' {c[0].item()}회, '{next_tokens[-1]}' {c[-1].item()}회")
assert counts[0.1][0] == 1000                     # nearly greedy: always the top token
assert all(diversity[a][1] < diversity[b][1] for a, b in zip(sample_taus, sample_taus[1:]))

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(9.5, 3.4))
width = 0.16
for i, tau in enumerate(sample_taus):
    ax.bar(np.arange(len(next_tokens)) + (i - 2) * width, counts[tau].numpy(), width, label=f"τ = {tau}")
ax.set_xticks(range(len(next_tokens)), next_tokens)
ax.set(title="'치킨을 ___': 1000번 뽑은 다음 토큰", ylabel="횟수")
ax.legend(fontsize=8)
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 청중이 가장 익숙한 온도는 챗봇 API의 `temperature` 옵션일 것입니다. 여기서 "τ = 0.1이면 1000번 모두 '시켜서'", "τ = 3이면 '버렸다'도 수십 번"이라는 숫자를 보여 주고, 어텐션의 온도와 수식이 똑같다는 점(softmax(z/τ))을 연결하세요. 차이는 어텐션은 가중치로 **섞고**, 샘플링은 확률로 **하나를 고른다**는 것뿐입니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("05-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **05-1. 예측한 뒤 재기.** 원문 004는 점수 `[2.0, 1.0, 0.5]`가 τ = 2에서 "거의 균등"하다고 했지만, 1절에서 본 대로 τ = 2의 최대 가중치는 0.48입니다. 최대 가중치가 **1/3 + 0.01 이하**가 되는 가장 작은 τ를 "거의 균등"의 기준으로 삼읍시다.
# 1. **예측**: 소프트맥스를 계산하지 말고, 2절의 1차 근사 $w_i \approx \frac{1}{n}\left(1 + \frac{z_i - \bar z}{\tau}\right)$만으로 그 τ를 구해 `tau_predicted`에 넣으세요.
# 2. **측정**: `softmax_t`로 τ를 바꿔 가며(이분법이나 촘촘한 격자) 실제 τ를 찾아 `tau_measured`에 넣으세요.
# 3. 두 값이 얼마나, 왜 다른지 생각해 보세요. 검사기가 두 값을 비교해 줍니다. 예측은 식에서 나온 값을 **반올림하지 말고** 넣으세요(상대 오차 0.1% 안). 측정은 상대 오차 0.3% 안이면 맞습니다: 4절처럼 10배마다 1000점인 로그 격자면 이웃한 점의 간격이 0.23%라 충분하고, 이분법이면 20번쯤 돌리면 됩니다.

# %%
tau_predicted = ...
tau_measured = ...

check("05-1", (tau_predicted, tau_measured))

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
z_seed = torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)
tau_predicted = ((z_seed.max() - z_seed.mean()) / (len(z_seed) * 0.01)).item()   # (z_max − z̄) / (n · 0.01)

lo, hi = 1.0, 1000.0                 # the top weight falls as τ grows: bisection on log τ
for _ in range(60):
    mid = math.sqrt(lo * hi)
    if softmax_t(z_seed, mid).max() > 1 / 3 + 0.01:
        lo = mid
    else:
        hi = mid
tau_measured = hi

check("05-1", (tau_predicted, tau_measured))

# %% [markdown] slideshow={"slide_type": "subslide"}
# **05-2.** 가중치 벡터 `w`(0 이상, 합 1)의 엔트로피 $-\sum_i w_i \log w_i$ (자연로그)를 돌려주는 `my_entropy`를 구현하세요. 원-핫 가중치처럼 0이 들어 있어도 NaN이 아니라 올바른 값이 나와야 합니다. 위의 `entropy`와 그것이 쓰는 `torch.special.xlogy`(그리고 `torch.special.entr`)는 쓰지 말고, `torch.log`와 `torch.where`(또는 불리언 마스크)로 $0 \cdot \log 0 = 0$을 직접 처리하세요.

# %%
def my_entropy(w):
    raise NotImplementedError

check("05-2", my_entropy)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def my_entropy(w):
    safe = torch.where(w > 0, w, torch.ones_like(w))   # log(1) = 0, so w = 0 terms vanish
    return -(w * torch.log(safe)).sum()

check("05-2", my_entropy)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **05-3.** "배" 행(`bae[2]`)의 최대 가중치가 **0.5**(±0.01)가 되는 온도 τ를 찾아 `tau_half`에 넣으세요. 4절처럼 촘촘한 격자에서 읽어도 되고, τ를 바꿔 가며 `softmax_t(bae[2], τ).max()`를 보거나 직접 이분법을 짜도 됩니다. `bae`는 이미 $\sqrt{d_k}$로 나눈 점수라는 점에 주의하세요. 찾은 τ가 3절의 "엔트로피가 절반인 τ"와 어떻게 다른지도 비교해 보세요.

# %%
tau_half = ...

check("05-3", tau_half)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
lo, hi = math.log(1e-4), math.log(1.0)          # bisection on log τ: the top weight falls as τ grows
for _ in range(60):
    mid = (lo + hi) / 2
    if softmax_t(bae[2], math.exp(mid)).max() > 0.5:
        lo = mid
    else:
        hi = mid
tau_half = math.exp((lo + hi) / 2)

check("05-3", tau_half)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 4절의 "배" 어텐션 맵은 τ = 1에서 거의 균등했습니다. 학습된 모델이라면 같은 효과를 τ를 낮추지 않고 어떻게 얻을까요? (투영 행렬 W_Q, W_K의 크기를 생각해 보세요.)
# 2. τ를 학습되는 파라미터로 두는 모델도 있습니다. 어텐션 점수에 학습되는 온도를 두는 것과 W_Q에 상수를 곱하는 것은 무엇이 같고 무엇이 다를까요?
# 3. τ→0의 극한(하드 어텐션, 원-핫)은 미분할 수 있을까요? 소프트맥스의 기울기가 τ가 작아질 때 어떻게 되는지 04번의 포화와 연결해 보세요.
# 4. 언어 모델 샘플링에서 τ = 0(탐욕적(그리디) 디코딩)이 항상 가장 좋은 답을 줄까요? 같은 문장이 반복되는 현상과 연결해 이야기해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 2번을 묶어 "온도는 점수의 크기 조절과 같다"는 결론으로 모으세요. W_Q를 c배 하면(쿼리 편향이 없거나 편향도 함께 c배 하면) 점수가 c배가 되어 τ = 1/c와 정확히 같습니다. "학습되는 온도는 값 하나"라는 것은 차이가 아닙니다: W_Q 전체에 곱한 배율 c도 값 하나입니다. 실제 차이는 최적화에 있습니다. τ에 오는 기울기의 크기가 W_Q의 원소에 오는 것과 다르고, 가중치 감쇠(weight decay)가 W_Q의 크기는 줄이지만 따로 둔 τ는 건드리지 않게 할 수 있으며, log τ로 두고 학습하면 τ가 늘 양수이고 배율을 곱셈으로 움직입니다. 그리고 점수 크기를 W_Q로 정할 수 없는 경우가 있습니다. Swin Transformer V2([Liu 등 2022](../SOURCES.md))의 코사인 어텐션은 q와 k의 크기(노름)를 1로 맞춘 뒤 코사인을 점수로 쓰므로 점수가 −1~1에 갇히고, 그 크기를 정할 수 있는 것은 학습되는 온도 τ뿐입니다. 3번은 04번(포화와 야코비안)으로 이어집니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | softmax(z/τ)는 순서를 지키고 쏠림만 바꾼다 | `softmax_t` = PyTorch, argsort 불변 |
# | τ→0: 최댓값들이 똑같이 나눔, τ→∞: 균등 (1/τ 속도) | `[1, 3, 3, 0]` → `[0, 0.5, 0.5, 0]`; 1차 근사 일치 |
# | 엔트로피는 τ에 대해 증가, 최대 가중치는 감소 | 로그 눈금 51점에서 단조성 assert |
# | `[0.84, 0.11, 0.04]`는 "거의 하드"가 아니다 | 엔트로피 = log 3의 48%, e^H ≈ 1.69개 |
# | "배" 맵: τ = 1에서 거의 균등, 0.9가 되려면 τ ≈ 0.0092 | 모든 행은 τ ≤ 0.0037; 순서는 그대로 ("고파서" 7위) |
# | 1/√d_k = 고정 온도 √d_k | 03의 `scaled_dot_product_attention` = softmax_t(QKᵀ, √d_k); 온도 t를 더하면 t√d_k |
# | 증류의 온도는 교사의 출력 로짓에; 기울기 ∝ 1/τ² | 기울기 비 (τ = 8 대 16) ≈ 4 |
# | 샘플링: τ가 클수록 다양하다 | 표본 엔트로피가 τ에 대해 증가 |
#
# 다음 노트북(06)에서는 가중치 행렬에 직접 잡음을 넣는 어텐션 드롭아웃을 봅니다.
