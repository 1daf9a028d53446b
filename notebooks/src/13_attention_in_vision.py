# %% [markdown]
# # 13. 비전에서의 어텐션
#
# 이미지에서도 어텐션(attention)은 "무엇을 얼마나 반영할지 데이터에서 계산한다"는 같은 생각입니다. 채널마다, 위치마다 게이트(gate)를 곱하는 CNN의 어텐션과, 이미지를 패치 토큰으로 잘라 셀프 어텐션(self-attention)을 거는 ViT(Vision Transformer)를 직접 계산합니다.
#
# **학습 목표**
# - Squeeze-and-Excitation(SE)의 채널 어텐션(channel attention)을 구현하고 학습시켜, 게이트가 소프트맥스(softmax)가 아니라 **시그모이드**(sigmoid)여야 하는 이유를 숫자로 설명한다.
# - CBAM식 공간 어텐션(spatial attention)을 학습시켜, 위치별 게이트를 이미지와 나란히 놓은 히트맵(heatmap)으로 읽는다.
# - 이미지를 패치(patch) 토큰(token) $N = HW/P^2$개로 바꾸고, 패치 임베딩(patch embedding)·[CLS] 토큰·위치 임베딩을 거친 작은 ViT를 숫자 이미지로 학습시켜 어텐션 맵, 어텐션 롤아웃, 위치 임베딩의 유사도를 본다.
# - 패치 크기에 따라 $N^2$ 비용과 $N \times N$ 행렬의 메모리가 어떻게 변하는지 계산한다.
#
# **선수 지식**: 01번(소프트맥스), 03번(쿼리·키·밸류), 07번(멀티 헤드 어텐션), 10번(위치 정보: 순열 등변성과 학습되는 위치 임베딩). 합성곱(convolution)과 채널이 무엇인지 알면 좋습니다.
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분
#
# 출처 목록(원문과 논문): [SOURCES.md](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작 질문은 "이미지에서 '집중'한다는 건 무엇에 집중하는 걸까?"입니다. 답은 세 가지입니다: 어떤 **특징(채널)**, 어떤 **위치**, 어떤 **패치끼리**. 이 노트북은 이 순서대로 갑니다. 시간이 부족하면 2절의 시그모이드 대 소프트맥스, 4절의 패치 계산, 5절의 [CLS] 어텐션 그림만 보여 주세요.

# %% slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers import seed_everything, setup
from helpers.attention import entropy, softmax
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check
from helpers.plots import attention_heatmap

setup()

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.lessons.masks import MaskedMultiHeadAttention
from helpers.widgets import Explorer

# %% [markdown]
# ## 1. 이미지에서는 무엇에 집중하나
#
# 합성곱 층은 모든 위치에 **같은** 필터를 씁니다. 학습이 끝나면 필터 값은 입력이 무엇이든 그대로입니다. 어텐션은 여기에 입력에 따라 달라지는 곱셈을 더합니다. 비전에서 흔한 세 가지는 다음과 같습니다.
#
# | 종류 | 무엇마다 수 하나? | 대표 | 이 노트북 |
# |---|---|---|---|
# | 채널 어텐션 | 채널 (특징 종류) | SENet ([Hu 등 2018](../SOURCES.md)) | 2절 |
# | 공간 어텐션 | 위치 (픽셀) | CBAM ([Woo 등 2018](../SOURCES.md)), BAM ([Park 등 2018](../SOURCES.md)) | 3절 |
# | 패치 셀프 어텐션 | 패치 쌍 (쿼리 패치, 키 패치) | ViT ([Dosovitskiy 등 2021](../SOURCES.md)) | 4–5절 |
#
# 셋째가 특별한 이유는 **한 층에서 이미지 전체를 본다**는 점입니다. 3×3 합성곱 한 층은 픽셀 9개만 봅니다. 보폭(stride) 1인 3×3 합성곱을 $L$층 쌓으면 출력 하나가 볼 수 있는 입력의 범위, 곧 수용 영역(receptive field)은 $(2L+1) \times (2L+1)$입니다. 224×224 이미지 전체를 덮으려면 몇 층이 필요한지 계산합니다. 어느 출력 픽셀이냐에 따라 답이 다릅니다. **가운데** 출력은 수용 영역이 224이면 이미지 전체를 보지만, **모서리** 출력이 반대편 모서리까지 보려면 수용 영역이 $2 \cdot 224 - 1 = 447$이어야 합니다.

# %% slideshow={"slide_type": "subslide"}
def receptive_field(layers, kernel=3):
    return 1 + layers * (kernel - 1)

layers_needed = next(L for L in range(1, 1000) if receptive_field(L) >= 224)          # the centre output
corner_layers = next(L for L in range(1, 1000) if receptive_field(L) >= 2 * 224 - 1)  # corner to corner
print(f"3×3 합성곱 1층이 보는 픽셀: {receptive_field(1) ** 2}개")
print(f"가운데 출력이 224×224 전체를 보는 층 수: {layers_needed} (수용 영역 {receptive_field(layers_needed)})")
print(f"모서리 출력이 반대편 모서리까지 보는 층 수: {corner_layers} (수용 영역 {receptive_field(corner_layers)})")
assert receptive_field(1) ** 2 == 9 and layers_needed == 112 and corner_layers == 223

# %% [markdown]
# 보폭과 풀링이 있는 실제 CNN은 훨씬 적은 층으로 넓은 영역을 보지만, 멀리 떨어진 두 위치가 **직접** 만나는 것은 깊은 층에 가서야 가능합니다. 패치 셀프 어텐션에서는 첫 층에서 모든 패치 쌍이 점수(score)를 주고받습니다. 그 대가가 6절의 $N^2$ 비용입니다.

# %% [markdown]
# ## 2. 채널 어텐션: Squeeze-and-Excitation
#
# CNN의 특징 맵(feature map) $X \in \mathbb{R}^{C \times H \times W}$에서 채널 하나는 "세로 경계", "빨간색 부분" 같은 특징 하나의 지도입니다. SE 블록(SENet, Hu 등 2018)은 이미지마다 **채널별 게이트** $s_c \in (0, 1)$를 계산해 채널을 다시 조절합니다.
#
# 1. **Squeeze**: 채널마다 전역 평균 풀링(global average pooling)으로 수 하나를 만듭니다. $z_c = \frac{1}{HW}\sum_{i,j} X_{c,i,j}$
# 2. **Excitation**: 작은 MLP(줄임 비율 $r$)와 시그모이드로 게이트를 만듭니다. $s = \sigma\big(W_2\, \mathrm{ReLU}(W_1 z + b_1) + b_2\big)$, $W_1 \in \mathbb{R}^{\frac{C}{r} \times C}$, $W_2 \in \mathbb{R}^{C \times \frac{C}{r}}$
# 3. **Scale**: 채널 $c$ 전체에 $s_c$를 곱합니다. $\tilde X_{c,i,j} = s_c\, X_{c,i,j}$

# %% tags=["save"] slideshow={"slide_type": "subslide"}
class SqueezeExcitation(nn.Module):
    """SE block: average pool -> Linear(C, C/r) -> ReLU -> Linear(C/r, C) -> sigmoid gates -> rescale."""

    def __init__(self, channels, reduction=4):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):                                             # (B, C, H, W)
        z = x.mean(dim=(2, 3))                                        # (B, C): squeeze
        gates = torch.sigmoid(self.fc2(F.relu(self.fc1(z))))          # (B, C): one gate per channel
        return x * gates[:, :, None, None], gates                     # scale every position of a channel

# %% [markdown] slideshow={"slide_type": "subslide"}
# 게이트는 입력에서 계산되므로, 같은 SE 블록이라도 이미지마다 다른 채널을 키우고 줄입니다. 학습이 끝나면 고정되는 채널별 상수와 다른 점이고, 어텐션이라고 부르는 이유입니다. 모듈이 식 그대로인지 손 계산과 비교합니다.

# %%
seed_everything(2)
se = SqueezeExcitation(channels=8, reduction=4).eval()
x = torch.randn(2, 8, 5, 5)  # (B, C, H, W): two feature maps
out, gates = se(x)
z = x.mean(dim=(2, 3))                                                                  # (B, C)
manual = torch.sigmoid(F.relu(z @ se.fc1.weight.T + se.fc1.bias) @ se.fc2.weight.T + se.fc2.bias)
print("학습 전 게이트 (이미지 0):", [f"{v:.2f}" for v in gates[0].detach()])
torch.testing.assert_close(gates, manual)
torch.testing.assert_close(out, x * gates[:, :, None, None])
assert 0.3 < gates.min() and gates.max() < 0.7  # untrained: every gate near 1/2

# %% [markdown] slideshow={"slide_type": "subslide"}
# 학습 전 게이트는 모두 0.5 근처입니다. 어느 채널을 키울지는 학습해야 정해집니다. 그래서 SE 블록을 잠깐 학습시킵니다. 과제는 일부러 단순하게 만듭니다. 채널 8개 가운데 이미지마다 앞쪽 넷 또는 뒤쪽 넷에만 신호(평균 +2)가 있고 나머지는 잡음입니다. 목표 출력은 "신호 채널은 그대로, 잡음 채널은 0"입니다. 손실은 이 목표와의 평균 제곱 오차(재구성 손실(reconstruction loss))입니다. 분류 같은 실제 과제의 손실이 아닙니다. 실제 SENet에서는 게이트가 분류 손실로, 네트워크 전체와 함께 학습됩니다.
#
# 학습 루프는 3절의 공간 게이트에도 그대로 씁니다. (줄임 비율을 $r = 4$로 하면 은닉 단위가 2개뿐이라, 시드에 따라 ReLU가 모두 꺼진 채 게이트가 상수로 멈추기도 합니다. 여기서는 $r = 2$를 씁니다.)

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def make_channel_batch(n, generator=None, channels=8, size=5):
    """Feature maps whose first or second half of channels carries a signal; target = the signal channels only."""
    half = torch.randint(0, 2, (n, 1), generator=generator)                 # (n, 1): which half
    signal = ((torch.arange(channels) >= channels // 2) == half).float()    # (n, C): 1 on that half
    x = torch.randn(n, channels, size, size, generator=generator) + 2.0 * signal[:, :, None, None]
    return x, x * signal[:, :, None, None]                                  # input, target


def train_gate(module, make_batch, steps=200, batch=32, lr=0.05, seed=0):
    """Fit a gate module so that module(x)[0] ≈ target (a reconstruction loss, not a task loss)."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, target = make_batch(batch, gen)
        loss = F.mse_loss(module(x)[0], target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return module.eval(), losses

# %% slideshow={"slide_type": "subslide"}
seed_everything(2)
se_trained, se_losses = train_gate(SqueezeExcitation(8, reduction=2), make_channel_batch, steps=200)
x_ch, _ = make_channel_batch(200, torch.Generator().manual_seed(7))  # held-out maps
with torch.no_grad():
    g_ch = se_trained(x_ch)[1]                                       # (200, C)
first_half = x_ch[:, :4].mean(dim=(1, 2, 3)) > x_ch[:, 4:].mean(dim=(1, 2, 3))
g_first, g_second = g_ch[first_half].mean(0), g_ch[~first_half].mean(0)
print(f"손실 {se_losses[0]:.2f} → {se_losses[-1]:.2f}")
print("앞쪽 넷에 신호가 있는 이미지의 평균 게이트:", [f"{v:.1f}" for v in g_first])
print("뒤쪽 넷에 신호가 있는 이미지의 평균 게이트:", [f"{v:.1f}" for v in g_second])
assert g_first[:4].min() > 0.9 and g_first[4:].max() < 0.1
assert g_second[4:].min() > 0.9 and g_second[:4].max() < 0.1

# %% [markdown] slideshow={"slide_type": "subslide"}
# 학습된 블록은 같은 가중치로, 이미지에 따라 **다른 채널**을 켭니다. 신호가 앞쪽에 있으면 앞쪽 게이트가 1 가까이, 뒤쪽은 0 가까이 갑니다(그리고 반대). 여러 채널이 동시에 1에 가깝다는 점도 보세요. 게이트 네 개의 합이 4에 가깝습니다.
#
# 파라미터는 $W_1, b_1, W_2, b_2$뿐입니다: $2C^2/r + C/r + C$. 채널 256개, $r = 16$이면 입력·출력 채널이 256개인 3×3 합성곱 층 하나($9C^2 = 589{,}824$개, 편향 제외)의 1.4% 정도입니다.

# %%
def se_params(c, r):
    return 2 * c * c // r + c // r + c

n_se = sum(p.numel() for p in SqueezeExcitation(256, 16).parameters())
print(f"SE(C=256, r=16) 파라미터 {n_se:,}개, 3×3 합성곱의 {n_se / (9 * 256 ** 2):.1%}")
assert n_se == se_params(256, 16) == 8_464

# %% [markdown]
# ### 왜 소프트맥스가 아니라 시그모이드인가
#
# 어텐션 가중치(weight)는 소프트맥스를 거쳐 **합이 1**입니다(01번). SE의 게이트는 다릅니다. 채널마다 따로 시그모이드를 거치므로 **서로 독립**이고, 합에 제약이 없습니다. 그래서 합이 1인 "가중치"와 구별해 이 수를 **게이트**라고 부릅니다. 네 채널의 excitation 출력(시그모이드 직전 값)이 $[3, 2.5, 2, -2]$일 때 두 함수를 비교합니다.

# %%
logits = torch.tensor([3.0, 2.5, 2.0, -2.0])
sig, soft = torch.sigmoid(logits), softmax(logits)
print("시그모이드:", sig, " 합", round(sig.sum().item(), 2))
print("소프트맥스:", soft, " 합", round(soft.sum().item(), 2))
assert (sig > 0.85).sum() == 3        # three channels almost fully on at once
assert (soft > 0.5).sum() <= 1        # softmax: at most one weight can exceed 1/2
assert torch.isclose(soft.sum(), torch.tensor(1.0)) and sig.sum() > 2.8

# %% [markdown] slideshow={"slide_type": "subslide"}
# 차이는 두 가지입니다.
#
# - **경쟁.** 채널 3이 중요해져 출력이 $-2 \to 4$가 되면, 소프트맥스에서는 다른 채널의 가중치가 모두 줄어듭니다. 시그모이드에서는 다른 채널의 게이트가 그대로입니다.
# - **크기.** 채널 64개가 모두 쓸모 있어 출력이 모두 3이라면, 시그모이드는 채널마다 0.95를 곱해 특징을 거의 그대로 두지만, 소프트맥스는 $1/64$을 곱해 모든 채널을 64분의 1로 줄입니다. 채널이 많을수록 심해집니다.

# %%
raised = logits.clone()
raised[3] = 4.0
print(f"채널 0: 시그모이드 {sig[0]:.4f} → {torch.sigmoid(raised)[0]:.4f},  소프트맥스 {soft[0]:.4f} → {softmax(raised)[0]:.4f}")
assert torch.sigmoid(raised)[0] == sig[0] and softmax(raised)[0] < soft[0] / 2

all_on = torch.full((64,), 3.0)
keep_sig, keep_soft = torch.sigmoid(all_on)[0].item(), softmax(all_on)[0].item()
print(f"채널 64개 모두 3: 시그모이드 게이트 {keep_sig:.4f}, 소프트맥스 가중치 {keep_soft:.6f} (= 1/64), 비율 {keep_sig / keep_soft:.1f}배")
assert abs(keep_soft - 1 / 64) < 1e-9 and keep_sig / keep_soft > 60

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 3.2))
pos = np.arange(4)
ax.bar(pos - 0.2, sig.numpy(), width=0.4, label=f"시그모이드 (합 {sig.sum():.2f})")
ax.bar(pos + 0.2, soft.numpy(), width=0.4, label=f"소프트맥스 (합 {soft.sum():.2f})", color="tab:orange")
ax.set_xticks(pos, [f"채널 {i}\n(출력 {v:g})" for i, v in enumerate(logits.tolist())])
ax.set_ylabel("채널에 곱하는 수")
ax.set_ylim(0, 1.1)
ax.set_title("같은 출력, 두 가지 게이트: 독립(시그모이드) 대 경쟁(소프트맥스)")
ax.legend()
plt.show()

# %% [markdown]
# ### 원문 바로잡기: SENet과 BAM의 게이트
#
# [원문 002](../SOURCES.md)는 SENet의 채널별 중요도를 "실제 적용할 때는 Softmax를 통해 정규화해준 뒤 적용"한다고 합니다. SENet은 채널마다 **시그모이드**를 씁니다. 위 예에서 시그모이드 게이트의 합은 2.88이고 세 채널이 0.88 이상으로 동시에 켜지지만, 소프트맥스라면 합이 1로 묶여 0.5를 넘는 채널이 하나뿐(0.5048)입니다. 채널 64개가 모두 중요하면 소프트맥스는 특징을 64분의 1(0.0156배)로 줄입니다.
#
# 원문 002는 BAM(Bottleneck Attention Module, Park 등 2018)의 채널 어텐션을 "SENet과 동일한 방법"이라고 합니다. 평균 풀링 → MLP라는 뼈대는 같지만, BAM은 채널 가지의 출력 $M_c$에 바로 시그모이드를 걸지 않습니다. 공간 가지의 출력 $M_s$와 **더한 뒤** 시그모이드를 한 번 걸고($M = \sigma(M_c + M_s)$, 모양 $C \times H \times W$), 잔차로 적용합니다: $F' = F + F \odot M = F \odot (1 + M)$. 그래서 BAM에서 특징에 곱해지는 수는 1과 2 사이이고, SE처럼 채널을 0 가까이 끌 수 없습니다. 두 방법 모두 소프트맥스는 쓰지 않습니다.

# %% slideshow={"slide_type": "subslide"}
assert round(sig.sum().item(), 2) == 2.88 and round(sig[2].item(), 2) == 0.88
assert round(soft.max().item(), 4) == 0.5048 and round(keep_soft, 4) == 0.0156

seed_everything(3)
m_c = torch.tensor([[0.5, -1.0, 4.0, -4.0]])                  # (B=1, C=4): channel branch
m_s = 2 * torch.randn(1, 3, 3)                                # (B=1, H, W): spatial branch
factor = 1 + torch.sigmoid(m_c[:, :, None, None] + m_s[:, None])  # (1, C, H, W): BAM multiplies F by this
print(f"BAM이 특징에 곱하는 수의 범위: {factor.min():.2f} ~ {factor.max():.2f}")
print("채널 0에 곱하는 수 (위치마다 다름):\n", factor[0, 0].numpy().round(2))
assert 1 < factor.min() and factor.max() < 2
assert factor[0, 0].std() > 0.05  # one channel, different factors at different positions

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "softmax는 나눠 갖기, sigmoid는 각자 켜기"라는 한 줄로 정리하세요. 청중에게 "문장의 단어 중 하나를 고르는 일"과 "이미지의 특징 중 쓸모 있는 것을 모두 남기는 일"의 차이를 물으면 왜 SE가 시그모이드를 쓰는지 스스로 답이 나옵니다. BAM의 $1 + M$은 "끄지 않고 강조만 한다"는 설계라는 점도 함께 짚으세요.

# %% [markdown]
# ## 3. 공간 어텐션: 위치마다 게이트 하나
#
# 채널 어텐션이 "어떤 특징"을 고른다면, 공간 어텐션은 "어느 위치"를 고릅니다. CBAM(Convolutional Block Attention Module, Woo 등 2018)의 공간 가지는 채널 방향으로 평균과 최댓값을 구해 2장짜리 지도를 만들고, $7 \times 7$ 합성곱과 시그모이드로 위치마다 게이트 하나를 만듭니다.
#
# $$M_s = \sigma\Big(\mathrm{conv}_{7\times 7}\big([\,\mathrm{mean}_c X;\ \max_c X\,]\big)\Big) \in (0,1)^{H \times W}, \qquad \tilde X_{c,i,j} = M_{s,i,j}\, X_{c,i,j}$$
#
# CBAM에는 채널 가지도 있고, SE와 달리 **평균 풀링과 최댓값 풀링을 둘 다** 같은 MLP에 넣어 더한 뒤 시그모이드를 겁니다: $M_c = \sigma(\mathrm{MLP}(\mathrm{avg}_{ij} X) + \mathrm{MLP}(\max_{ij} X))$. 채널 게이트를 먼저, 공간 게이트를 나중에 곱합니다. 여기서는 공간 가지만 만들고, 채널 가지는 연습문제 13-1에서 직접 짭니다.

# %% tags=["save"]
class SpatialGate(nn.Module):
    """CBAM's spatial branch: [channel mean, channel max] -> k x k conv -> sigmoid, one gate per position."""

    def __init__(self, kernel_size=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, kernel_size, padding=kernel_size // 2)

    def forward(self, x):                                                                 # (B, C, H, W)
        pooled = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], 1)  # (B, 2, H, W)
        gate = torch.sigmoid(self.conv(pooled))                                           # (B, 1, H, W)
        return x * gate, gate                                                             # same gate for every channel

# %% [markdown] slideshow={"slide_type": "subslide"}
# SE와 짝을 이룹니다. SE는 채널마다 수 하나를 모든 위치에, 공간 게이트는 위치마다 수 하나를 모든 채널에 곱합니다. 잡음 위에 밝은 사각형 하나가 있는 16×16 이미지로, "사각형만 남기고 잡음을 지운 이미지"를 내도록 게이트의 합성곱 파라미터 99개를 같은 `train_gate`로 학습합니다(100단계, 1초 안팎). 이번에도 손실은 재구성 손실입니다. 실제 CBAM의 게이트는 분류 같은 과제의 손실로 학습됩니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def make_shapes(n, generator=None, size=16, channels=3):
    """Noisy images with one bright rectangle each: images (n, C, size, size) and masks (n, size, size)."""
    hw = torch.randint(3, size // 2 + 1, (n, 2), generator=generator)             # (n, 2): height, width
    corner = (torch.rand(n, 2, generator=generator) * (size - hw + 1)).long()     # (n, 2): top, left
    idx = torch.arange(size)
    rows = (idx >= corner[:, :1]) & (idx < (corner + hw)[:, :1])                   # (n, size)
    cols = (idx >= corner[:, 1:]) & (idx < (corner + hw)[:, 1:])                   # (n, size)
    masks = (rows[:, :, None] & cols[:, None, :]).float()                          # (n, size, size)
    colour = 0.6 + 0.4 * torch.rand(n, channels, 1, 1, generator=generator)
    images = masks[:, None] * colour + 0.25 * torch.randn(n, channels, size, size, generator=generator)
    return images, masks


def shape_batch(n, generator=None):
    """(images, images with only the rectangle kept): the spatial gate's reconstruction target."""
    x, masks = make_shapes(n, generator)
    return x, x * masks[:, None]

# %%
seed_everything(0)
gate_model, gate_losses = train_gate(SpatialGate(7), shape_batch, steps=100)
x_shapes, masks = make_shapes(64, torch.Generator().manual_seed(123))  # held-out images
with torch.no_grad():
    gated, gate_map = gate_model(x_shapes)  # (64, 3, 16, 16), (64, 1, 16, 16)
g = gate_map[:, 0]
inside, outside = g[masks > 0].mean().item(), g[masks == 0].mean().item()
print(f"손실 {gate_losses[0]:.2f} → {gate_losses[-1]:.2f};  게이트 평균: 사각형 안 {inside:.2f}, 밖 {outside:.2f}")
assert inside > 0.85 and outside < 0.15
assert sum(p.numel() for p in gate_model.parameters()) == 2 * 7 * 7 + 1 == 99

# %% [markdown] slideshow={"slide_type": "subslide"}
# 위치별 게이트를 히트맵으로 읽습니다. 입력 이미지(왼쪽)와 같은 자리의 공간 게이트(가운데, 0~1, 오른쪽 끝의 색 눈금), 게이트를 곱한 결과(오른쪽, 입력 × 게이트)를 나란히 놓았습니다.

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(2, 3, figsize=(6.0, 3.6))
for row, i in zip(axes, range(2)):
    row[0].imshow(x_shapes[i].permute(1, 2, 0).clamp(0, 1).numpy())
    im = row[1].imshow(g[i].numpy(), cmap="magma", vmin=0, vmax=1)
    row[2].imshow(gated[i].permute(1, 2, 0).clamp(0, 1).numpy())
    for ax in row:
        ax.set_xticks([])
        ax.set_yticks([])
for ax, name in zip(axes[0], ["입력 이미지", "공간 게이트", "입력 × 게이트"]):
    ax.set_title(name, fontsize=10)
fig.colorbar(im, ax=axes, fraction=0.03, pad=0.03).set_ticks([0, 0.5, 1], labels=["0", "0.5", "1"])
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 게이트 지도도 소프트맥스가 아닙니다. 소프트맥스였다면 256개 위치의 합이 1이라, 사각형이 28픽셀이면 그 안의 한 픽셀에 평균 $1/28$ 이하밖에 줄 수 없습니다. 시그모이드 게이트는 사각형 안의 픽셀 **모두**에 1에 가까운 값을 줍니다. 사각형 안 게이트의 합이 넓이와 거의 같습니다.

# %%
area = masks.sum(dim=(1, 2))                         # (64,): rectangle sizes in pixels
inside_sum = (g * masks).sum(dim=(1, 2))             # (64,)
print(f"64장 평균: 사각형 안 게이트 합 / 넓이 = {(inside_sum / area).mean():.2f},  게이트 전체 합의 최솟값 {g.sum(dim=(1, 2)).min():.0f} (소프트맥스라면 1)")
assert (inside_sum / area).mean() > 0.85 and g.sum(dim=(1, 2)).min() > area.min()
w_mean, w_max = gate_model.conv.weight[0].detach()   # (7, 7) each: filters on the mean map and the max map
print(f"학습된 7×7 필터: 평균 지도 쪽 합 {w_mean.sum():.1f}, 최댓값 지도 쪽 합 {w_max.sum():.1f}")
assert w_mean.sum() > 0 > w_max.sum()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 학습된 $7\times7$ 필터를 열어 보면(`gate_model.conv.weight`) 평균 지도 쪽 합은 양수이고, 최댓값 지도 쪽 합은 음수입니다(위 셀). "세 채널이 함께 밝은 곳(평균이 큼) = 사각형, 한 채널만 튄 곳(최댓값만 큼) = 잡음"이라는 규칙으로 읽을 수 있습니다. 실제 CBAM은 채널 게이트를 먼저, 공간 게이트를 나중에 순서대로 곱합니다. BAM은 둘을 더해 한 번에 씁니다(2절).

# %% [markdown]
# ## 4. 이미지를 토큰으로: ViT의 패치
#
# ViT(Dosovitskiy 등 2021)는 합성곱 층을 쌓는 대신 트랜스포머를 이미지에 바로 씁니다. 이미지를 $P \times P$ 패치로 자르고, 각 패치를 펼친 벡터 하나를 토큰 하나로 봅니다.
#
# $$x \in \mathbb{R}^{C \times H \times W} \;\longrightarrow\; x_p \in \mathbb{R}^{N \times (P^2 C)}, \qquad N = \frac{HW}{P^2}$$
#
# 패치는 왼쪽 위부터 한 줄씩 번호를 매기고, 한 패치는 $(C, P, P)$ 블록을 그대로 펼칩니다. 이 규칙대로 자르는 함수 `patchify`의 코드는 접어 두었습니다. `reshape`와 `permute`로 직접 짜 보는 것이 연습문제 13-2입니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def patchify(images, patch):  # (B, C, H, W) or (C, H, W) -> (B, N, C·P·P) or (N, C·P·P)
    x = images[None] if images.dim() == 3 else images
    b, c, h, w = x.shape
    x = x.reshape(b, c, h // patch, patch, w // patch, patch)   # (B, C, gh, P, gw, P)
    x = x.permute(0, 2, 4, 1, 3, 5)                             # (B, gh, gw, C, P, P): grid first
    tokens = x.reshape(b, (h // patch) * (w // patch), c * patch * patch)
    return tokens[0] if images.dim() == 3 else tokens

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def unpatchify(tokens, patch, channels, height, width):
    """The inverse of patchify: (B, N, C·P·P) -> (B, C, H, W)."""
    b = tokens.shape[0]
    x = tokens.reshape(b, height // patch, width // patch, channels, patch, patch).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, channels, height, width)


def load_digits_split(test_fraction=0.2, seed=0):
    """sklearn's 8x8 digits in [0, 1]: x_train (n, 1, 8, 8), y_train, x_test, y_test; a fixed split."""
    from importlib.util import find_spec  # sklearn's import takes seconds: read its small CSV directly
    from pathlib import Path

    folder = Path(list(find_spec("sklearn").submodule_search_locations)[0])
    table = torch.from_numpy(np.loadtxt(folder / "datasets" / "data" / "digits.csv.gz", delimiter=",", dtype=np.float32))
    x, y = table[:, :64].reshape(-1, 1, 8, 8) / 16.0, table[:, 64].long()  # pixels 0..16 -> [0, 1]
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_test = round(len(y) * test_fraction)
    return x[order[n_test:]], y[order[n_test:]], x[order[:n_test]], y[order[:n_test]]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 8×8 숫자 이미지(`sklearn`의 digits), $P = 2$로 해 봅니다.

# %%
x_train, y_train, x_test, y_test = load_digits_split()
digit = x_test[0]                      # (C=1, H=8, W=8), pixels in [0, 1]
tokens = patchify(digit, patch=2)      # (N, P·P·C)
print("이미지", tuple(digit.shape), "→ 토큰", tuple(tokens.shape), f" (N = 64/2² = {64 // 4})")
print("패치 5 (행 2–3, 열 2–3):", tokens[5], " = 픽셀", digit[0, 2:4, 2:4].reshape(-1))
assert tokens.shape == (8 * 8 // 2 ** 2, 2 * 2 * 1) and torch.equal(tokens[5], digit[0, 2:4, 2:4].reshape(-1))
assert torch.equal(tokens[1], digit[0, 0:2, 2:4].reshape(-1))  # patch 1 is the right neighbour
assert torch.equal(unpatchify(tokens[None], 2, 1, 8, 8)[0], digit)

# %% [markdown]
# 원문 002의 ViT 설정, 224×224 RGB 이미지와 $P = 16$이면 토큰은 몇 개이고 토큰 하나의 차원은 얼마일까요?

# %%
image = torch.zeros(3, 224, 224)  # (C, H, W)
vit_tokens = patchify(image, 16)  # (N, P·P·C)
print("224×224×3, P=16 →", tuple(vit_tokens.shape), f"= ({224 // 16}×{224 // 16} 패치, 16·16·3)")
assert vit_tokens.shape == (196, 768) and (224 // 16) ** 2 == 196 != 16 * 16

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: 원문 002는 ViT 논문 제목 "An Image is Worth 16x16 Words"를 "Image는 16×16개의 단어와 같다"고 풀이합니다. 16×16은 단어(토큰)의 **개수**가 아니라 한 단어의 **크기**(16×16 픽셀 패치)입니다. 224×224 이미지는 한 변에 $224/16 = 14$개, 모두 $14 \times 14 = 196$개의 단어가 됩니다. 256개가 아닙니다. 각 단어는 $16 \cdot 16 \cdot 3 = 768$개의 수입니다.

# %% [markdown]
# ### 패치 임베딩은 보폭 $P$인 합성곱이다
#
# 각 패치 벡터에 같은 행렬 $E \in \mathbb{R}^{(P^2C) \times D}$를 곱해 $D$차원 임베딩을 만듭니다. 패치가 겹치지 않으므로, 이것은 커널 크기와 보폭이 모두 $P$인 합성곱과 같은 계산입니다. 실제 구현들이 `Conv2d`를 쓰는 이유입니다. 가중치를 옮겨 담아 확인합니다.

# %%
seed_everything(4)
linear = nn.Linear(3 * 16 * 16, 32)                          # E: one patch (768 numbers) → D = 32
conv = nn.Conv2d(3, 32, kernel_size=16, stride=16)
with torch.no_grad():
    conv.weight.copy_(linear.weight.view(32, 3, 16, 16))      # (D, C, P, P): same (c, row, col) order
    conv.bias.copy_(linear.bias)
    imgs = torch.randn(2, 3, 224, 224)                        # (B, C, H, W)
    by_linear = linear(patchify(imgs, 16))                    # (B, N, D)
    by_conv = conv(imgs).flatten(2).transpose(1, 2)           # (B, D, 14, 14) → (B, N, D)
diff = (by_linear - by_conv).abs().max().item()
print("선형층:", tuple(by_linear.shape), " 합성곱:", tuple(by_conv.shape), f" 최대 차이 < 1e-4: {diff < 1e-4} (float32 반올림 수준)")
torch.testing.assert_close(by_linear, by_conv, atol=1e-4, rtol=1e-4)

# %% [markdown]
# ### [CLS] 토큰과 위치 임베딩
#
# 패치 임베딩 앞에 학습되는 벡터 하나, **[CLS] 토큰**을 붙입니다. 이 토큰은 이미지의 어느 부분도 아니고, 층을 지나며 다른 패치들에서 정보를 모아 마지막에 분류기로 갑니다. 그리고 위치마다 학습되는 벡터, **위치 임베딩**(position embedding)을 더합니다. 위치 인코딩(positional encoding)을 사인·코사인 공식 대신 학습으로 정하는 방식으로, 10번 4절에서 본 것과 같습니다.
#
# $$z_0 = \big[\,x_{\text{cls}};\ x_p^1 E;\ \dots;\ x_p^N E\,\big] + E_{\text{pos}}, \qquad z_0 \in \mathbb{R}^{(1+N) \times D}$$
#
# 그 뒤는 텍스트 트랜스포머와 같은 블록입니다(층 정규화(layer normalization)를 어텐션 앞에 두는 사전 정규화(pre-LN)).

# %% tags=["save"] slideshow={"slide_type": "subslide"}
class Block(nn.Module):
    """Pre-norm transformer block: x + MHA(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d_model, num_heads, hidden):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MaskedMultiHeadAttention(d_model, num_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x):                                # (B, 1+N, D)
        out, weights = self.attn(self.norm1(x))          # weights (B, h, 1+N, 1+N)
        x = x + out
        return x + self.mlp(self.norm2(x)), weights

# %% tags=["save"] slideshow={"slide_type": "subslide"}
class TinyViT(nn.Module):
    """Patches -> linear embedding, [CLS] token, learned position embeddings -> blocks -> head on [CLS]."""

    def __init__(self, image_size=8, patch=2, channels=1, d_model=16, num_heads=2, depth=2, hidden=32, classes=10):
        super().__init__()
        self.patch, n = patch, (image_size // patch) ** 2
        self.embed = nn.Linear(channels * patch * patch, d_model)          # E, the patch embedding
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d_model))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, d_model))    # one learned vector per position
        self.blocks = nn.ModuleList(Block(d_model, num_heads, hidden) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, classes)

    def forward(self, images):                                         # (B, C, H, W)
        tokens = self.embed(patchify(images, self.patch))              # (B, N, D)
        cls = self.cls.expand(tokens.shape[0], -1, -1)                 # (B, 1, D)
        x = torch.cat([cls, tokens], dim=1) + self.pos                 # (B, 1+N, D)
        maps = []
        for block in self.blocks:
            x, weights = block(x)
            maps.append(weights)                                       # per layer (B, h, 1+N, 1+N)
        return self.head(self.norm(x[:, 0])), maps                     # logits from [CLS]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 노트북의 작은 ViT는 $P = 2$($N = 16$), $D = 16$, 헤드(head) 2개, 층 2개입니다. 모양을 따라갑니다.

# %%
seed_everything(5)
vit = TinyViT().eval()
batch = x_test[:4]                                   # (B, 1, 8, 8)
patches = patchify(batch, vit.patch)                 # (B, N, 4)
emb = vit.embed(patches)                             # (B, N, D)
z0 = torch.cat([vit.cls.expand(4, -1, -1), emb], 1) + vit.pos   # (B, 1+N, D)
logits, maps = vit(batch)
print("패치", tuple(patches.shape), "→ 임베딩", tuple(emb.shape), "→ [CLS] 추가 + 위치", tuple(z0.shape))
print("층별 어텐션 가중치:", [tuple(m.shape) for m in maps], " 로짓:", tuple(logits.shape))
print(f"파라미터 {sum(p.numel() for p in vit.parameters()):,}개")
assert z0.shape == (4, 17, 16) and maps[0].shape == (4, 2, 17, 17) and logits.shape == (4, 10)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 위치 임베딩이 왜 필요할까요? 셀프 어텐션은 순열 등변성(permutation equivariance)을 가집니다. 패치 순서를 섞으면 패치 토큰의 출력도 똑같이 섞일 뿐이고, [CLS]의 출력은 **전혀 변하지 않습니다**. 5절에서 쓸 학습된 모델의 저장된 가중치로, 패치를 뒤섞은 이미지를 넣어 봅니다. 그다음 위치 임베딩만 0으로 만들고 다시 넣습니다.

# %%
trained = TinyViT()
trained.load_state_dict(load_tensor_dict("vision_vit.pt"))
trained.eval()
perm = torch.randperm(16, generator=torch.Generator().manual_seed(0))
shuffled = unpatchify(patchify(batch, 2)[:, perm], 2, 1, 8, 8)   # (B, 1, 8, 8): patches moved around
with torch.no_grad():
    before, after = trained(batch)[0], trained(shuffled)[0]
    trained.pos.zero_()
    change_without_pos = (trained(batch)[0] - trained(shuffled)[0]).abs().max().item()
print("예측: 원래", before.argmax(-1).tolist(), "→ 섞은 이미지", after.argmax(-1).tolist())
print(f"로짓의 최대 변화: 위치 임베딩 있음 {(before - after).abs().max():.1f}, 없음 < 1e-4: {change_without_pos < 1e-4}")
assert (before.argmax(-1) != after.argmax(-1)).any() and change_without_pos < 1e-4

# %% [markdown] slideshow={"slide_type": "subslide"}
# 위치 임베딩이 없으면 ViT에게 이미지는 "패치들의 주머니"입니다. 섞인 숫자와 원래 숫자를 구별하지 못합니다.
#
# ### 슬라이더: 패치 크기
#
# 패치 크기를 바꾸면 토큰 수와 토큰 차원 $C \cdot P \cdot P$가 반대로 움직입니다. 빨간 선이 패치 경계, 파란 숫자가 토큰 번호입니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def draw_patch_grid(ax, image, patch):
    """Grey image, red patch borders and blue token numbers; returns the artists and the counts."""
    img = image[0].numpy()
    g = img.shape[0] // patch
    ax.imshow(img, cmap="gray_r", vmin=0, vmax=1)
    artists = [ax.axhline(k * patch - 0.5, color="tab:red", lw=1.2) for k in range(1, g)]
    artists += [ax.axvline(k * patch - 0.5, color="tab:red", lw=1.2) for k in range(1, g)]
    if g * g <= 16:
        artists += [ax.text(c * patch - 0.4, r * patch - 0.25, str(r * g + c), color="tab:blue", fontsize=8,
                            va="top", ha="left", bbox={"facecolor": "white", "alpha": 0.7, "pad": 0.5, "edgecolor": "none"})
                    for r in range(g) for c in range(g)]
    ax.set_xticks([])
    ax.set_yticks([])
    return artists, {"n_tokens": g * g, "token_dim": patch * patch * image.shape[0]}


def patch_size_explorer(image, sizes=(1, 2, 4, 8)):
    """A patch-size slider: every grid is drawn once; moving the slider only shows one of them."""
    import ipywidgets as widgets

    fig, ax = plt.subplots(figsize=(3.8, 3.8), dpi=80)
    grids = {p: draw_patch_grid(ax, image, p) for p in sizes}

    def update(patch):
        for p, (artists, _) in grids.items():
            for a in artists:
                a.set_visible(p == patch)
        counts = grids[patch][1]
        ax.set_title(f"P={patch}: 패치 {counts['n_tokens']}개, 토큰 차원 {counts['token_dim']}")
        return counts

    slider = widgets.SelectionSlider(options=list(sizes), value=sizes[1], description="패치 크기")
    explorer = Explorer(fig, update, {"patch": slider})
    explorer.image.layout.width = f"{round(fig.get_figwidth() * fig.dpi)}px"  # natural size, not the slide's width
    return explorer

# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
patch_explorer = patch_size_explorer(digit)
patch_explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전: 같은 함수로 $P = 1, 2, 4, 8$을 나란히 그립니다. $P = 1$은 픽셀 하나가 토큰(64개), $P = 8$은 이미지 전체가 토큰 하나입니다.

# %%
fig, axes = plt.subplots(1, 4, figsize=(12, 3.4))
grids = []
for p, ax in zip((1, 2, 4, 8), axes):
    grids.append(draw_patch_grid(ax, digit, p)[1])
    ax.set_title(f"P={p}: 패치 {grids[-1]['n_tokens']}개, 토큰 차원 {grids[-1]['token_dim']}")
fig.tight_layout()
plt.show()
assert [g["n_tokens"] for g in grids] == [64, 16, 4, 1] and all(g["n_tokens"] * g["token_dim"] == 64 for g in grids)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: $N \times$ 토큰 차원 $C \cdot P \cdot P = HWC$가 언제나 일정하다는 점(정보는 그대로, 나누는 방법만 다름)을 짚고, "그럼 $P$를 얼마로 할까?"를 물어보세요. 작게 자르면 세밀하지만 토큰이 많아지고, 셀프 어텐션의 비용은 토큰 수의 제곱입니다. 6절의 계산으로 이어집니다.

# %% [markdown]
# ## 5. 작은 ViT를 숫자 이미지로 학습하기
#
# `sklearn`에 들어 있는 8×8 손글씨 숫자 1,797장을 학습 1,438장, 테스트 359장으로 나눴습니다(시드 0으로 섞은 뒤 8:2). 5,018개 파라미터의 `TinyViT`를 120에폭 학습하는 일은 `scripts/train_vision.py`가 아래의 `train_vit`로 했습니다(Adam, 코사인 학습률, CPU 한 코어에서 30초 안팎). 저장된 가중치 `data/vision_vit.pt`를 불러와 정확도(accuracy)를 여기서 다시 구합니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def train_vit(epochs, seed=0, *, lr=3e-3, batch=64, data=None, **model_kw):
    """Adam with a cosine schedule on the digits split; returns (model, per-epoch mean training loss)."""
    x_train, y_train, _, _ = data if data is not None else load_digits_split()
    torch.manual_seed(seed)
    model = TinyViT(**model_kw)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    gen, history = torch.Generator().manual_seed(seed + 1000), []
    for _ in range(epochs):
        model.train()
        order, total = torch.randperm(len(y_train), generator=gen), 0.0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            loss = F.cross_entropy(model(x_train[idx])[0], y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        history.append(total / len(order))
    return model.eval(), history


@torch.no_grad()
def vit_accuracy(model, x, y):
    return (model(x)[0].argmax(-1) == y).double().mean().item()


@torch.no_grad()
def cls_attention(model, images, layer=-1):
    """[CLS] -> patch weights of one layer, mean over heads: (B, N)."""
    return model(images)[1][layer].mean(dim=1)[:, 0, 1:]


def ink_fraction(images, patch):
    """Mean pixel value of every patch: (B, N), 0 for an empty patch."""
    return patchify(images, patch).mean(dim=-1)


def patch_weight_panels(ax_img, ax_w, image, patch, vmax):
    """The digit with its patch grid (grey, left) and one weight per patch (right, its own colour scale).

    Returns (weight image, set_weights(grid, mark, title)) that redraws in place; mark boxes a query patch."""
    img = image[0].numpy()
    g = img.shape[0] // patch
    ax_img.imshow(img, cmap="gray_r", vmin=0, vmax=1)
    for k in range(1, g):
        ax_img.axhline(k * patch - 0.5, color="tab:gray", lw=0.6)
        ax_img.axvline(k * patch - 0.5, color="tab:gray", lw=0.6)
    im = ax_w.imshow(np.zeros((g, g)), cmap="Reds", vmin=0, vmax=vmax)
    boxes = [plt.Rectangle((0, 0), s, s, fill=False, edgecolor="tab:blue", lw=2.5, visible=False)
             for s in (patch, 1)]
    ax_img.add_patch(boxes[0])
    ax_w.add_patch(boxes[1])
    for ax in (ax_img, ax_w):
        ax.set_xticks([])
        ax.set_yticks([])

    def set_weights(grid, mark=None, title=""):
        im.set_data(grid)
        if mark is not None:
            r, c = divmod(mark, g)
            boxes[0].set_xy((c * patch - 0.5, r * patch - 0.5))
            boxes[1].set_xy((c - 0.5, r - 0.5))
        for box in boxes:
            box.set_visible(mark is not None)
        ax_w.set_title(title, fontsize=9)
    return im, set_weights


def weight_rows(images, grids, *, vmax, label, suptitle, top_titles, titles=None, marks=None, figsize=(11, 4.0)):
    """Small multiple: digits on top, one weight grid under each (one colour scale and one colour bar)."""
    fig, axes = plt.subplots(2, len(images), figsize=figsize)
    for i, (image, grid) in enumerate(zip(images, grids)):
        im, set_weights = patch_weight_panels(axes[0, i], axes[1, i], image, 2, vmax)
        set_weights(grid, None if marks is None else marks[i], "" if titles is None else titles[i])
        axes[0, i].set_title(top_titles[i], fontsize=9)
    fig.colorbar(im, ax=axes[1, :], fraction=0.02, pad=0.02, label=label)
    fig.suptitle(suptitle)
    plt.show()


def query_patch_explorer(image, weights, patch, vmax):
    """A query-patch slider: where that patch's query looks (row 1+q of a (1+N, 1+N) map, without [CLS])."""
    import ipywidgets as widgets

    fig, (ax_img, ax_w) = plt.subplots(1, 2, figsize=(6.4, 3.2), dpi=80)
    im, set_weights = patch_weight_panels(ax_img, ax_w, image, patch, vmax)
    fig.colorbar(im, ax=ax_w, fraction=0.046, pad=0.04, label="가중치")
    g = image.shape[-1] // patch

    def update(query):
        row = weights[1 + query, 1:].numpy()  # (N,)
        set_weights(row.reshape(g, g), query, f"패치 {query}의 쿼리 → 패치 (최대 {row.max():.2f})")
        return row

    slider = widgets.IntSlider(value=0, min=0, max=g * g - 1, description="쿼리 패치")
    explorer = Explorer(fig, update, {"query": slider})
    explorer.image.layout.width = f"{round(fig.get_figwidth() * fig.dpi)}px"  # natural size, not the slide's width
    return explorer

# %%
run = load_json("vision_vit.json")
model = TinyViT(**run["model"])
model.load_state_dict(load_tensor_dict("vision_vit.pt"))
model.eval()
acc_test, acc_train = vit_accuracy(model, x_test, y_test), vit_accuracy(model, x_train, y_train)
print(f"파라미터 {sum(p.numel() for p in model.parameters()):,}개;  정확도: 학습 {acc_train:.3f}, 테스트 {acc_test:.3f}")
assert sum(p.numel() for p in model.parameters()) == run["params"] == 5_018
assert round(acc_test, 4) == run["test_accuracy"] and acc_test > 0.95 and acc_train == 1.0

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 3.0))
ax.plot(range(1, run["epochs"] + 1), run["loss"])
ax.set_yscale("log")
ax.set_xlabel("에폭")
ax.set_ylabel("학습 손실 (로그 눈금)")
ax.set_title(f"저장된 학습: 테스트 정확도 {run['test_accuracy']:.1%}")
plt.show()

# %% [markdown]
# ### [CLS]는 어디를 보나
#
# 마지막 층에서 [CLS]의 쿼리(query)가 패치 16개에 준 가중치를 헤드 평균으로 구합니다. 윗줄은 숫자 이미지와 패치 경계, 아랫줄은 같은 자리의 가중치(4×4)입니다. 숫자의 획과 가중치를 한 그림에 섞지 않고 나란히 두었고, 색 눈금(0~0.3)은 여섯 그림 공통입니다.

# %% slideshow={"slide_type": "subslide"}
cls_w = cls_attention(model, x_test)               # (B, N): last layer, mean over heads
ink = ink_fraction(x_test, 2)                      # (B, N): 0 where the patch is blank
with torch.no_grad():
    pred = model(x_test[:6])[0].argmax(-1)
weight_rows(x_test[:6], [w.reshape(4, 4).numpy() for w in cls_w[:6]], vmax=0.3, label="[CLS] → 패치 가중치",
            suptitle="[CLS] → 패치 가중치 (마지막 층, 헤드 평균)", titles=[f"최대 {w.max():.2f}" for w in cls_w[:6]],
            top_titles=[f"정답 {y_test[i].item()}, 예측 {pred[i].item()}" for i in range(6)])

# %% [markdown] slideshow={"slide_type": "subslide"}
# 가중치는 획이 지나가는 패치에 모이고, 빈 패치에는 거의 가지 않습니다. 테스트 이미지 359장 전체에서 확인합니다.

# %%
on_ink, on_empty = cls_w[ink > 0].mean().item(), cls_w[ink == 0].mean().item()
ink_mass = (cls_w * (ink > 0)).sum(-1).mean().item()
print(f"패치 하나당 평균 가중치: 획이 있는 패치 {on_ink:.3f}, 빈 패치 {on_empty:.3f} (10배 이상: {on_ink > 10 * on_empty})")
print(f"[CLS] 행 전체(합 1) 중 획이 있는 패치로 가는 몫 {ink_mass:.2f}  (그런 패치의 비율 {(ink > 0).float().mean():.2f})")
assert abs(on_ink - run["cls_weight_ink"]) < 1e-3 and abs(on_empty - run["cls_weight_empty"]) < 1e-3
assert on_ink > 10 * on_empty and ink_mass > 0.9

# %% [markdown]
# ### 패치끼리의 어텐션
#
# 첫 층의 어텐션 맵 전체는 $(1+N) \times (1+N) = 17 \times 17$입니다. 행이 쿼리 토큰, 열이 키(key) 토큰이고 각 행의 합은 1입니다.

# %% slideshow={"slide_type": "subslide"}
with torch.no_grad():
    first_maps = model(x_test[:1])[1][0][0].mean(0)  # (1+N, 1+N): layer 0, image 0, mean over heads
labels = ["CLS"] + [str(i) for i in range(16)]
fig, ax = plt.subplots(figsize=(5.0, 4.0))
attention_heatmap(first_maps, labels, labels, ax=ax, annotate=False, title="첫 층의 어텐션 가중치 (테스트 이미지 0)")
plt.show()
assert torch.allclose(first_maps.sum(-1), torch.ones(17), atol=1e-5)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 행 하나를 4×4로 접으면 "이 패치가 어느 패치를 보는지"가 보입니다. 슬라이더로 쿼리 패치(파란 상자)를 고릅니다. 왼쪽은 숫자, 오른쪽은 가중치이고 색 눈금은 0~0.15로 고정입니다.

# %% tags=["nbval-ignore-output"]
query_explorer = query_patch_explorer(x_test[0], first_maps, 2, vmax=0.15)
query_explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전: 같은 함수로 쿼리 패치 네 개(왼쪽 위, 가운데 둘, 오른쪽 아래)를 그립니다.

# %% slideshow={"slide_type": "subslide"}
queries = (0, 5, 10, 15)
rows = [first_maps[1 + q, 1:] for q in queries]
weight_rows([x_test[0]] * 4, [r.reshape(4, 4).numpy() for r in rows], vmax=0.15, label="가중치", marks=queries,
            suptitle="첫 층: 쿼리 패치(파란 상자)가 보는 곳", titles=[f"최대 {r.max():.2f}" for r in rows],
            top_titles=[f"패치 {q}의 쿼리" for q in queries], figsize=(8.5, 4.0))
print("패치 키에 간 몫 (나머지는 [CLS]):", [round(r.sum().item(), 2) for r in rows])
assert all(0 < r.sum() <= 1 for r in rows) and all(r.max() < 3 / 17 for r in rows)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 이미지에서 패치 쿼리 네 개의 행마다, 패치 키 가운데 가장 큰 가중치는 균등 분포(1/17 = 0.059)의 1.4~2.4배에 그칩니다. 테스트 이미지 359장 전체에서 두 층을 비교합니다. 엔트로피(entropy, 05번)가 $\log 17$에 가까울수록 17개 키에 고르게 퍼진 것입니다.

# %%
with torch.no_grad():
    all_maps = model(x_test)[1]                         # per layer (B, h, 1+N, 1+N)
ent, cls_ink = [], []
for a in all_maps:
    a = a.mean(1)                                       # (B, 1+N, 1+N): mean over heads
    ent.append(entropy(a[:, 1:]).mean().item())         # patch queries
    cls_ink.append((a[:, 0, 1:] * (ink > 0)).sum(-1).mean().item())
    print(f"{len(ent)}층: 패치 쿼리의 엔트로피 평균 {ent[-1]:.2f} (균등 {np.log(17):.2f}),  "
          f"[CLS] 행 전체(합 1) 중 획이 있는 패치로 가는 몫 {cls_ink[-1]:.2f}")
ink_share = (ink > 0).float().mean().item()
assert np.log(17) - 0.15 < ent[0] < np.log(17)
assert cls_ink[0] < ink_share < 0.9 < cls_ink[1]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 첫 층의 패치 쿼리는 거의 균등하게 넓게 봅니다(엔트로피 2.75, 균등이면 2.83). 첫 층의 [CLS]가 획이 있는 패치에 주는 몫은 0.69로, 그런 패치의 비율(0.73)보다도 작습니다. 첫 층의 [CLS]는 획에 집중하지 않습니다. [CLS]가 획에 가중치를 모으는 것은 마지막 층에서입니다(행 전체의 0.94; [CLS] 자신에게 간 몫을 빼고 패치 몫의 합이 1이 되게 다시 나누면 0.97, 아래 롤아웃과 비교하는 값).

# %% [markdown]
# ### 어텐션 롤아웃: 층을 거친 흐름을 곱하기
#
# 마지막 층의 [CLS] 가중치는 "두 번째 층의 토큰"에 준 가중치이고, 그 토큰은 이미 첫 층에서 다른 패치들과 섞인 뒤입니다. **어텐션 롤아웃**(attention rollout, [Abnar & Zuidema 2020](../SOURCES.md))은 층별 맵을 곱해 "입력 패치에서 [CLS]까지 흘러온 양"을 어림합니다. 잔차 연결(residual connection)이 토큰 자신을 그대로 넘기는 몫을 단위행렬로 더하고($\tfrac12 A + \tfrac12 I$), 행 합이 1이 되게 다시 나눈 뒤 층 순서대로 곱합니다.
#
# $$\tilde A_\ell = \mathrm{norm}\big(\tfrac12 \bar A_\ell + \tfrac12 I\big), \qquad R = \tilde A_L \cdots \tilde A_2 \tilde A_1 \quad (\bar A_\ell: \text{헤드 평균})$$

# %% tags=["save"]
def attention_rollout(maps):  # list over layers of (B, h, T, T) -> (B, T, T)
    t = maps[0].shape[-1]
    eye = torch.eye(t)
    rollout = eye.expand(maps[0].shape[0], t, t)         # (B, T, T)
    for a in maps:
        a = 0.5 * a.mean(dim=1) + 0.5 * eye              # heads averaged, residual as identity
        a = a / a.sum(dim=-1, keepdim=True)              # rows sum to 1 again
        rollout = a @ rollout                            # this layer after the earlier ones
    return rollout

# %% slideshow={"slide_type": "subslide"}
roll = attention_rollout(all_maps)                       # (B, 1+N, 1+N)
roll_cls = roll[:, 0, 1:] / roll[:, 0, 1:].sum(-1, keepdim=True)   # [CLS] row over the patches, renormalised
raw_cls = cls_w / cls_w.sum(-1, keepdim=True)
roll_ink, raw_ink = ((roll_cls * (ink > 0)).sum(-1).mean().item(), (raw_cls * (ink > 0)).sum(-1).mean().item())
print(f"롤아웃에서 [CLS]가 자기 자신에게 남긴 몫 {roll[:, 0, 0].mean():.2f} (마지막 층 가중치만 보면 {all_maps[-1].mean(1)[:, 0, 0].mean():.2f})")
print(f"패치로 간 몫 중 획이 있는 패치의 비율: 롤아웃 {roll_ink:.2f}, 마지막 층 {raw_ink:.2f}")
print(f"가장 큰 패치 가중치의 평균: 롤아웃 {roll_cls.max(-1).values.mean():.2f}, 마지막 층 {raw_cls.max(-1).values.mean():.2f}")
assert torch.allclose(roll.sum(-1), torch.ones(len(x_test), 17), atol=1e-5)
assert ink_share < roll_ink < raw_ink and roll_cls.max(-1).values.mean() < raw_cls.max(-1).values.mean()

# %% slideshow={"slide_type": "subslide"}
weight_rows(x_test[:6], [r.reshape(4, 4).numpy() for r in roll_cls[:6]], vmax=0.3, label="롤아웃 [CLS] → 패치",
            suptitle="어텐션 롤아웃 (패치 몫의 합을 1로 맞춤; 색 눈금은 마지막 층 그림과 같음)",
            titles=[f"최대 {r.max():.2f}" for r in roll_cls[:6]], top_titles=[f"정답 {y.item()}" for y in y_test[:6]])

# %% [markdown] slideshow={"slide_type": "subslide"}
# 롤아웃은 마지막 층만 볼 때보다 **넓게 퍼집니다**. 첫 층의 [CLS]와 패치 쿼리들이 이미지 전체를 고르게 봤기 때문에, 그 흐름을 곱하면 빈 패치에도 몫이 갑니다(패치 몫의 합을 1로 다시 나눈 기준으로 획이 있는 패치의 몫: 롤아웃 0.80, 마지막 층 0.97). 잔차 몫 때문에 [CLS]가 자기 자신에게 남기는 양도 큽니다. 어느 쪽이 "모델이 본 곳"에 더 가까운지는 이 그림만으로 정할 수 없습니다. 롤아웃은 층을 거친 섞임을 고려하지만, 잔차를 정확히 반으로 본다는 가정과 MLP·층 정규화를 무시하는 어림이 들어 있습니다.

# %% [markdown]
# ### 학습된 위치 임베딩은 격자를 배웠을까
#
# ViT 논문에서 학습된 위치 임베딩끼리의 코사인 유사도를 그리면 가까운 패치끼리, 같은 행·열끼리 비슷한 2차원 격자 모양이 나타납니다(큰 데이터로 오래 학습한 모델). 이 작은 모델에서도 그럴까요? 패치 $i$의 위치 벡터와 나머지 16개의 유사도를 4×4로 접어, 패치 $i$의 자리에 놓습니다.

# %%
pos_emb = model.pos[0, 1:].detach()                                  # (N, D): [CLS]'s vector left out
unit = pos_emb / pos_emb.norm(dim=-1, keepdim=True)
cos = unit @ unit.T                                                  # (N, N)
rc = torch.stack([torch.arange(16) // 4, torch.arange(16) % 4], 1)   # (N, 2): row, column of each patch
dist = (rc[:, None] - rc[None]).abs().sum(-1)                        # (N, N): grid (Manhattan) distance
off = ~torch.eye(16, dtype=torch.bool)
corr = np.corrcoef(cos[off].numpy(), -dist[off].float().numpy())[0, 1]
corners = torch.tensor([0, 3, 12, 15])
corner_cos = cos[corners][:, corners][~torch.eye(4, dtype=torch.bool)].mean().item()
print(f"유사도와 (−격자 거리)의 상관 {corr:.2f};  이웃(거리 1) 평균 {cos[dist == 1].mean():.2f}, 나머지 평균 {cos[off & (dist > 1)].mean():.2f}")
print(f"네 모서리 패치(0, 3, 12, 15)끼리의 평균 유사도 {corner_cos:.2f}")
assert abs(corr) < 0.2 and corner_cos > 0.5 > cos[dist == 1].mean()

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(4, 4, figsize=(4.2, 3.9))
for i, ax in enumerate(axes.flat):
    im = ax.imshow(cos[i].reshape(4, 4).numpy(), cmap="RdBu_r", vmin=-1, vmax=1)
    ax.add_patch(plt.Rectangle((i % 4 - 0.5, i // 4 - 0.5), 1, 1, fill=False, edgecolor="black", lw=1.5))
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(im, ax=axes, fraction=0.04, pad=0.03, label="코사인 유사도")
fig.suptitle("위치 임베딩의 코사인 유사도 (검은 테두리: 기준 패치)")
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 격자는 나타나지 않았습니다. 유사도와 격자 거리의 상관은 0에 가깝고, 바로 옆 패치가 특별히 비슷하지도 않습니다. 대신 **네 모서리 패치**가 서로 아주 비슷합니다(평균 0.74). 8×8 숫자에서 모서리는 대개 비어 있으니, 이 모델에게 필요한 위치 정보는 "모서리인가 아닌가"에 가까웠던 것입니다. 학습 이미지 1,438장, 패치 16개로는 2차원 구조를 배울 이유도, 데이터도 부족합니다. ViT 논문의 격자 그림은 큰 데이터에서 나온 결과이고, 위치 임베딩이 늘 격자를 배운다는 뜻은 아닙니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 어텐션 맵을 "모델이 중요하게 본 곳"으로 곧바로 읽는 데는 주의가 필요합니다. 여기서 [CLS]가 획에 가중치를 모은다는 것은 359장 평균으로 확인한 사실이지만, 두 번째 층의 토큰은 이미 첫 층에서 다른 패치들과 섞인 뒤라 "패치 5"가 순수하게 패치 5의 내용만 담고 있지는 않습니다. 롤아웃이 이 섞임을 어림하지만 그것도 가정이 들어간 근사입니다. 11번(실제 모델의 어텐션)에서 본 "가중치는 중요도가 아니다"와 같은 주의입니다.

# %% [markdown]
# ### 여기서 직접 학습하기
#
# 같은 설정으로 10에폭만 학습합니다(몇 초). 120에폭 모델보다 정확도는 낮지만 학습이 실제로 일어나는 것을 봅니다. 짧은 학습의 마지막 자리는 CPU에 따라 조금씩 다르므로, 결과는 두 자리까지만 보여 줍니다.

# %%
live_model, live_loss = train_vit(10, seed=0, data=(x_train, y_train, x_test, y_test), **run["model"])
live_acc = vit_accuracy(live_model, x_test, y_test)
print(f"10에폭: 손실 {live_loss[0]:.1f} → {live_loss[-1]:.1f}, 테스트 정확도 {live_acc:.2f} (저장된 120에폭 모델 {run['test_accuracy']:.2f})")
assert live_loss[-1] < live_loss[0] / 2 and 0.5 < live_acc < run["test_accuracy"]

# %% [markdown]
# ## 6. 비용: 패치 수의 제곱
#
# 셀프 어텐션은 토큰 쌍마다 점수 하나를 만들므로, 헤드 하나·이미지 하나·층 하나에 $N \times N$ 가중치 행렬이 생깁니다. 224×224 이미지에서 $P = 16$, $P = 8$, 그리고 픽셀 하나를 토큰으로 쓰는 경우($P = 1$)를 비교합니다(float32, 4바이트).

# %% tags=["save"]
def vit_cost(image_size, patch, channels=3, bytes_per_value=4):  # one head, one image, patch tokens only
    n = (image_size // patch) ** 2
    return {"n_tokens": n, "token_dim": channels * patch * patch, "pairs": n * n, "bytes": n * n * bytes_per_value}

# %%
costs = {p: vit_cost(224, p) for p in (32, 16, 8, 4, 2, 1)}
for p, c in costs.items():
    print(f"P={p:>2}: N={c['n_tokens']:>6,}  N²={c['pairs']:>15,}  행렬 {c['bytes'] / 1e6:>12,.2f} MB")
assert [costs[p]["n_tokens"] for p in (16, 8, 1)] == [196, 784, 50_176]
assert costs[16]["bytes"] == 153_664 and costs[8]["bytes"] == 2_458_624
assert costs[1]["bytes"] == 10_070_523_904

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 3.4))
ps = list(costs)
ax.bar([f"P={p}" for p in ps], [costs[p]["bytes"] for p in ps], color="tab:blue")
ax.set_yscale("log")
ax.axhline(80e9, color="tab:red", linestyle="--", label="GPU 메모리 80 GB")
ax.set_ylabel("N×N 행렬 하나의 바이트 (로그)")
ax.set_title("224×224 이미지: 패치 크기와 어텐션 행렬의 메모리")
ax.legend(loc="upper left")
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 픽셀 단위 셀프 어텐션은 헤드 하나, 이미지 하나, 층 하나에 10.07 GB입니다(설명을 위해 입력 해상도 224×224에서 계산했습니다. 아래의 SASA는 어텐션 층을 줄기(stem) 뒤의 56×56 이하 특징 맵에서 돌리므로 실제 행렬은 훨씬 작습니다). 헤드 12개면 120 GB가 넘습니다. 그래서 ViT는 패치로 $N$을 줄이고, 다른 방법들은 보는 범위를 줄입니다. 각 픽셀이 주변 $7 \times 7$ 창 안에서만 어텐션을 하면 쌍의 수는 $N \cdot 49$입니다(가장자리 픽셀의 창이 잘리는 것은 무시합니다).

# %%
n_pix = costs[1]["n_tokens"]
print(f"픽셀 단위, 전역: 헤드 하나 {costs[1]['bytes'] / 1e9:.2f} GB, 헤드 12개 {12 * costs[1]['bytes'] / 1e9:.1f} GB")
local_bytes = n_pix * 7 * 7 * 4
print(f"픽셀 단위, 7×7 창: {local_bytes / 1e6:.2f} MB (전역의 {local_bytes / costs[1]['bytes']:.4%})")
assert local_bytes == 9_834_496 and costs[1]["bytes"] == 1024 * local_bytes and 12 * costs[1]["bytes"] > 120e9

# %% [markdown]
# ### 원문 바로잡기: SASA는 CNN에 어텐션을 "끼운" 것이 아니다
#
# 원문 002는 SASA(Stand-Alone Self-Attention, [Ramachandran 등 2019](../SOURCES.md))가 "기존 CNN 모델의 중간에 Self Attention 모듈을 삽입하는 방법"을 썼고, 그래서 "Self Attention만으로 구성된 Vision Model이라고는 할 수 없었죠"라고 합니다. 논문 제목의 "stand-alone"(단독으로 쓰는)이 바로 그 반대의 뜻입니다. SASA는 ResNet의 공간 합성곱(3×3)을 **맨 앞의 줄기를 빼고 모두** 국소 창 셀프 어텐션(주 실험의 창 크기 $7 \times 7$)으로 바꿨습니다. 1×1 합성곱은 위치마다 따로 거는 선형층이라 그대로 둡니다. 논문은 줄기까지 보통의 어텐션으로 바꾸면 성능이 떨어진다고 보고하고, 줄기에는 합성곱을 두거나 따로 고안한 변형 어텐션을 씁니다. 위치 정보는 창 안의 **상대 위치 임베딩**(행·열 오프셋마다 학습되는 벡터)으로 넣습니다. 위 계산(설명을 위해 224×224 입력에서 계산; SASA의 어텐션 층은 줄기 뒤의 56×56 이하 특징 맵에서 돕니다)에서 전역 픽셀 어텐션은 행렬 하나에 10.07 GB, 창을 쓰면 9.83 MB(1024분의 1)입니다. SASA와 ViT의 차이는 "어텐션만 쓰는가"가 아니라 "각 위치가 주변 창을 보는가, 모든 패치를 보는가"입니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "$P$를 절반으로 줄이면 메모리는 몇 배?"를 먼저 물어보세요. 직관적으로 4배라고 답하는 사람이 많습니다. 토큰이 4배, 행렬은 16배입니다. 08번(FlashAttention)은 이 행렬을 메모리에 한꺼번에 만들지 않는 방법이고, 국소 창(SASA, Swin)은 행렬 자체를 작게 만드는 방법입니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("13-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **13-1.** 3절에서 말로만 본 CBAM의 **채널 가지**를 짜 보세요. 특징 맵 `x` $(B, C, H, W)$와 두 행렬 `w1` $(C/r, C)$, `w2` $(C, C/r)$(편향 없는 두 선형층의 `nn.Linear.weight`와 같은 모양, $\mathrm{MLP}(z) = W_2\,\mathrm{ReLU}(W_1 z)$)를 받아 게이트 $M_c = \sigma(\mathrm{MLP}(\mathrm{avg}_{ij} X) + \mathrm{MLP}(\max_{ij} X))$, 모양 $(B, C)$를 돌려주는 `cbam_channel_gates`를 완성하세요. 먼저 예상해 보세요: 두 풀링을 먼저 더한 뒤 MLP에 한 번 넣어도 같을까요?

# %%
def cbam_channel_gates(x, w1, w2):
    raise NotImplementedError

check("13-1", cbam_channel_gates)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def cbam_channel_gates(x, w1, w2):
    def mlp(z):                                      # (B, C) -> (B, C): shared by both branches
        return F.relu(z @ w1.T) @ w2.T
    avg, mx = x.mean(dim=(2, 3)), x.amax(dim=(2, 3))  # (B, C) each: two squeezes
    return torch.sigmoid(mlp(avg) + mlp(mx))         # (B, C): add, then one sigmoid

check("13-1", cbam_channel_gates)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **13-2.** 이미지 `img` $(C, H, W)$와 패치 크기 `p`를 받아 토큰 $(N, C \cdot p \cdot p)$를 돌려주는 `my_patchify`를 `reshape`와 `permute`로 완성하세요(`unfold`나 `F.unfold`를 써도 됩니다). 패치는 왼쪽 위부터 한 줄씩(패치 1은 패치 0의 오른쪽 이웃), 한 패치는 $(C, p, p)$ 블록을 그대로 펼친 순서입니다. 위의 `patchify`는 쓰지 마세요(감싸서 부르거나 `getattr`처럼 이름 문자열로 찾아 불러도 안 됩니다).

# %%
def my_patchify(img, p):
    raise NotImplementedError

check("13-2", my_patchify)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def my_patchify(img, p):
    c, h, w = img.shape
    blocks = img.reshape(c, h // p, p, w // p, p)  # (C, gh, p, gw, p)
    return blocks.permute(1, 3, 0, 2, 4).reshape((h // p) * (w // p), c * p * p)  # (N, C·p·p)

check("13-2", my_patchify)

# %% [markdown]
# **13-3.** 6절의 `vit_cost`는 헤드 하나, [CLS] 제외의 행렬만 셌습니다. 실제 ViT 층 하나는 헤드가 `heads`개이고 [CLS] 토큰도 어텐션에 들어갑니다. 정사각형 이미지의 한 변 `size`, 패치 크기 `p`, 헤드 수 `heads`를 받아 이미지 하나, 층 하나의 어텐션 가중치 전부가 차지하는 float32 바이트 수를 돌려주는 `attention_weight_bytes`를 `vit_cost` 없이 완성하세요. 먼저 예상해 보세요: 224×224, 헤드 12개에서 $P$를 16에서 8로 줄이면 정확히 몇 배일까요?

# %%
def attention_weight_bytes(size, p, heads):
    raise NotImplementedError

check("13-3", attention_weight_bytes)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def attention_weight_bytes(size, p, heads):
    n = (size // p) ** 2 + 1          # patch tokens + [CLS]
    return heads * n * n * 4          # one (N+1)x(N+1) float32 matrix per head

ratio = attention_weight_bytes(224, 8, 12) / attention_weight_bytes(224, 16, 12)
print(f"P = 16 → 8: {ratio:.2f}배 (패치 행렬만이면 {costs[8]['bytes'] / costs[16]['bytes']:.0f}배)")
assert 15.8 < ratio < 16 and costs[8]["bytes"] == 16 * costs[16]["bytes"]
check("13-3", attention_weight_bytes)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. SE 게이트를 소프트맥스로 바꾸면 학습이 어떻게 달라질까요? 채널 수 $C$가 64에서 2048로 늘면 어떤 일이 생기나요? 반대로 "여러 후보 중 하나를 고르는" 어텐션에서 시그모이드를 쓰면 무엇을 잃을까요?
# 2. 4절에서 위치 임베딩이 없으면 ViT가 섞인 이미지를 구별하지 못했습니다. 합성곱 신경망은 위치 임베딩 없이도 왜 이 문제가 없을까요? (힌트: 필터가 보는 이웃)
# 3. 작은 ViT의 [CLS]는 획이 있는 패치를 봤고, 롤아웃은 더 넓게 퍼졌습니다. 어느 그림을 "모델이 숫자를 알아보는 근거"로 발표하겠습니까? 둘 다 아니라면 무엇을 더 확인해야 할까요?
# 4. 고해상도 이미지(예: 1024×1024)를 ViT에 넣으려면 패치를 키울까요, 창을 쓸까요, FlashAttention을 쓸까요? 각 선택이 잃는 것은 무엇인가요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 2절의 "채널 64개 모두 중요" 계산을 다시 띄워 놓고 토론하면 좋습니다. 3번은 정답이 없는 질문입니다. 가중치를 지운 뒤 예측이 얼마나 바뀌는지 보는 실험(11번의 제거 실험)으로 이끌어 보세요. 4번은 08번 노트북의 측정 결과와 함께 이야기하면 구체적입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | SE = 평균 풀링 → MLP → **시그모이드** 게이트 → 채널 곱 | 모듈 = 손 계산; 학습된 SE는 이미지마다 다른 채널을 켬 |
# | 시그모이드 게이트는 독립, 소프트맥스는 경쟁 | 합 2.88 대 1; 64채널이면 1/64 (원문 바로잡기) |
# | BAM: $\sigma(M_c + M_s)$를 잔차로, 곱하는 수 1~2 | CBAM 채널 가지는 평균과 최댓값 풀링 |
# | 공간 게이트는 위치마다 0~1, 합이 1로 묶이지 않음 | 사각형 안 0.85 이상, 밖 0.15 미만 |
# | 패치 $N = HW/P^2$; 패치 임베딩 = 보폭 $P$ 합성곱 | 224, $P=16$ → (196, 768) (원문 바로잡기) |
# | 위치 임베딩이 없으면 패치 순서를 모른다 | 섞인 이미지에서 로짓 변화 $< 10^{-4}$ |
# | 작은 ViT(테스트 97.2%)의 [CLS]는 획에 모인다 | 롤아웃은 더 넓게 퍼짐 (패치 몫 기준 획 0.80 대 0.97) |
# | 이 모델의 위치 임베딩은 격자를 배우지 않았다 | 거리와의 상관 ≈ 0, 네 모서리끼리 0.74 |
# | 비용은 $N^2$: $P$ 절반 → 행렬 16배 | 7×7 창은 1024분의 1 (SASA, 원문 바로잡기) |
#
# ViT에서 텍스트와 달라진 것은 "무엇이 토큰인가"(패치)와 위치를 알려 주는 방법이고, 그 뒤의 셀프 어텐션은 07번의 `MultiHeadAttention`(09번의 `MaskedMultiHeadAttention`) 그대로입니다.
