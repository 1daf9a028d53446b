# %% [markdown]
# # 03. 쿼리·키·밸류: 한 토큰의 세 가지 역할
#
# 같은 토큰 벡터에 서로 다른 행렬 세 개를 곱해 "찾는 것(쿼리)", "찾아지는 기준(키)", "전달할 내용(밸류)"을 따로 만드는 이유를, 어텐션 함수를 직접 짜고 원문의 예제를 다시 계산하며 확인합니다.
#
# **학습 목표**
# - 한 토큰에서 쿼리(query)·키(key)·밸류(value)를 세 개의 투영(projection)으로 따로 만드는 이유를 도서관 비유와 직접 설계한 예제로 설명할 수 있다.
# - 배치와 마스크를 받는 스케일드 닷프로덕트 어텐션을 직접 쓰고, PyTorch의 `F.scaled_dot_product_attention`과 같은 값을 내는지 확인한다.
# - 원문의 "I am a student", "배" 예제, `SimpleSelfAttention` 코드를 다시 계산하고 실행해 무엇이 맞고 무엇이 틀렸는지 가려낸다.
# - 셀프 어텐션(self-attention)과 크로스 어텐션(cross-attention)의 차이를 가중치의 모양 $(T_q, T_k)$로 설명할 수 있다.
#
# **선수 지식**: 01번(가중 평균과 소프트맥스), 02번(seq2seq의 인코더·디코더 어텐션). 행렬 곱셈.
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 01번 마지막 그림에서 쿼리·키·밸류가 모두 같은 벡터 x였다는 점을 다시 띄우고 시작하세요. 오늘의 질문은 "왜 같은 x를 그대로 쓰지 않고 행렬 세 개를 곱하는가"입니다. 뒤쪽의 원문 예제들은 숫자와 코드를 하나씩 검증하는 부분이라, 청중에게 "이 숫자 믿어도 될까요?"라고 먼저 물어보면 집중도가 올라갑니다.

# %% slideshow={"slide_type": "skip"}
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import seaborn as sns
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.data import load_json
from helpers.exercises import check
from helpers.widgets import Explorer

setup()

# %% [markdown]
# ## 1. 같은 토큰, 세 가지 역할
#
# 01번에서는 토큰(token) 벡터 $x$ 하나를 쿼리·키·밸류에 그대로 썼습니다. 그러면 토큰 $i$가 토큰 $j$에 주는 점수(score)는 두 벡터의 내적(dot product) $x_i \cdot x_j$이고, 이것은 $x_j \cdot x_i$와 같습니다. 즉 **점수로 잰** "$i$가 $j$를 찾는 정도"와 "$j$가 $i$를 찾는 정도"는 항상 같습니다(가중치는 행마다 따로 소프트맥스를 거치므로 다를 수 있습니다: 6절).
#
# 언어의 관계는 대개 한쪽 방향입니다. "먹었다"는 "무엇을?"의 답인 "치킨을"을 찾고 싶지만, "치킨을"이 "먹었다"를 똑같은 세기로 찾을 이유는 없습니다. 또 한 단어가 **찾는 것**, 그 단어가 **찾아지는 기준**, 찾아졌을 때 **건네주는 내용**은 서로 다른 정보입니다. 그래서 트랜스포머는 같은 $x$에 학습되는 행렬 세 개를 곱해 역할을 나눕니다.

# %% [markdown]
# ### 도서관 비유 ([원문 004](../SOURCES.md))
#
# | 역할 | 도서관에서 | 어텐션에서 | 만드는 행렬 |
# |---|---|---|---|
# | 쿼리 $q$ | 검색창에 입력한 검색어 | 이 토큰이 지금 필요로 하는 정보의 모양 | $W^Q$ |
# | 키 $k$ | 책마다 붙은 분류 번호와 주제어 | 각 토큰이 "이런 걸 찾으면 나를 보라"고 내건 표지 | $W^K$ |
# | 밸류 $v$ | 책의 본문 | 선택되었을 때 실제로 건네지는 내용 | $W^V$ |
#
# 검색어와 주제어가 잘 맞는 책일수록 (점수가 높을수록) 본문을 많이 가져옵니다. 주제어가 아무리 잘 맞아도 가져오는 것은 주제어가 아니라 본문입니다. 주제어는 찾는 데 쓰는 정보이고 본문은 읽을 내용이므로 둘을 같은 벡터로 둘 이유가 없습니다.
#
# 비유가 어긋나는 곳도 있습니다. 도서관은 맞는 책 한 권을 골라 주지만, 어텐션은 **모든 책의 본문을 가중치(weight)만큼 섞은 것**, 즉 가중합(weighted sum)을 돌려줍니다. 그리고 검색어, 주제어, 본문이 모두 같은 문장의 토큰에서 나옵니다. 사서가 책이기도 한 도서관인 셈입니다.

# %% [markdown]
# ### 수식
#
# 트랜스포머 논문([Vaswani 등 2017](../SOURCES.md))의 스케일드 닷프로덕트 어텐션입니다. 토큰 $T$개를 행으로 쌓은 입력 $X \in \mathbb{R}^{T \times d_{\text{model}}}$에 대해
#
# $$Q = X W^Q,\quad K = X W^K,\quad V = X W^V, \qquad W^Q, W^K \in \mathbb{R}^{d_{\text{model}} \times d_k},\ W^V \in \mathbb{R}^{d_{\text{model}} \times d_v}$$
#
# $$\text{점수 } S = \frac{Q K^\top}{\sqrt{d_k}} \in \mathbb{R}^{T \times T}, \qquad \text{가중치 } A = \mathrm{softmax}_{\text{행}}(S), \qquad \text{출력} = A V \in \mathbb{R}^{T \times d_v}$$
#
# - $W^Q$: 토큰을 "나는 지금 어떤 정보가 필요한가"를 나타내는 방향으로 보냅니다.
# - $W^K$: 토큰을 "나는 어떤 질문에 답이 되는가"를 나타내는 방향으로 보냅니다. $W^Q$와 같은 $d_k$차원 공간으로 보내야 내적을 계산할 수 있습니다.
# - $W^V$: 토큰이 선택되었을 때 넘길 내용을 만듭니다. 점수 계산에는 쓰이지 않으므로 $d_v$가 $d_k$와 달라도 됩니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# $W^Q \ne W^K$이면 $S_{ij} = x_i W^Q (W^K)^\top x_j^\top$는 대칭일 필요가 없습니다. 계산으로 확인합니다.

# %%
seed_everything(0)
x = torch.randn(4, 3)                  # (T=4, d_model=3)
w_q, w_k = torch.randn(3, 3), torch.randn(3, 3)

same = x @ x.T                         # (T, T): q = k = x
projected = (x @ w_q) @ (x @ w_k).T    # (T, T): separate projections
print("q = k = x 일 때 대칭?", torch.allclose(same, same.T))
print("W_Q ≠ W_K 일 때 대칭?", torch.allclose(projected, projected.T))
print(f"예: S[0,1] = {projected[0, 1]:.2f},  S[1,0] = {projected[1, 0]:.2f}")
assert torch.allclose(same, same.T)
assert not torch.allclose(projected, projected.T)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "대칭이 아니다"가 핵심입니다. S[0,1]과 S[1,0]을 짚으며 "0번이 1번을 찾는 정도와 1번이 0번을 찾는 정도가 이제 다르다"고 말하세요. [원문 004](../SOURCES.md)에서 가져온 도서관 비유의 한계(한 권을 고르는 게 아니라 모든 책을 섞는다)도 꼭 언급하세요. 청중이 비유를 너무 문자 그대로 받아들이는 것을 막아 줍니다.

# %% [markdown]
# ## 2. 코드: 배치와 마스크가 있는 어텐션
#
# 수식을 그대로 옮깁니다. 실제 모델의 텐서에는 앞쪽에 배치(batch)와 헤드(head) 축이 붙으므로, 전치는 `k.T`가 아니라 **마지막 두 축만** 바꾸는 `k.transpose(-2, -1)`로 합니다. 마스크(mask)는 불리언 텐서이고 **True = 볼 수 있음**입니다(이 과정 전체의 약속이며, `F.scaled_dot_product_attention`의 불리언 `attn_mask`와 같습니다). 가려진 키의 점수를 $-\infty$로 바꾸면 소프트맥스에서 가중치가 정확히 0이 됩니다.

# %% tags=["save"]
import torch

from helpers.lessons.weighted_average import softmax


def attention_scores(q, k, mask=None):
    """q kᵀ / √d_k, with -inf where the boolean mask is False (True = may attend)."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5   # (..., T_q, T_k), divided by √d_k
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))   # blocked keys: weight exactly 0
    return scores


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / √d_k) v with 01's softmax; returns (output, weights)."""
    weights = softmax(attention_scores(q, k, mask), dim=-1)   # (..., T_q, T_k), each row sums to 1
    return weights @ v, weights                               # (..., T_q, d_v), (..., T_q, T_k)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 시퀀스 2개(배치 크기 2), 헤드 3개, 토큰 5개짜리 입력에 두 번째 문장은 길이가 3뿐이라고 가정한 패딩 마스크(padding mask)와 인과 마스크(causal mask)를 함께 걸고, PyTorch의 함수와 비교합니다. 두 구현은 계산 순서가 조금씩 달라 반올림 오차만큼 다를 수 있으므로, 차이가 float64 반올림 수준(1e-12)보다 작은지를 확인합니다.

# %%
seed_everything(1)
B, H, T, D = 2, 3, 5, 8
q, k, v = (torch.randn(B, H, T, D, dtype=torch.float64) for _ in range(3))   # (B, h, T, d)
lengths = torch.tensor([5, 3])
padding = (torch.arange(T) < lengths[:, None])[:, None, None, :]             # (B, 1, 1, T_k)
causal = torch.ones(T, T, dtype=torch.bool).tril()                            # (T_q, T_k)
mask = padding & causal                                                       # (B, 1, T_q, T_k)

out, weights = scaled_dot_product_attention(q, k, v, mask)
torch_out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
print("출력 모양", tuple(out.shape), " 가중치 모양", tuple(weights.shape))
print("PyTorch와의 최대 차이 < 1e-12:", bool((out - torch_out).abs().max() < 1e-12))
assert (out - torch_out).abs().max() < 1e-12
assert torch.all(weights[1, :, :, 3:] == 0)                 # padded keys get exactly zero weight
assert torch.allclose(weights.sum(-1), torch.ones(B, H, T, dtype=torch.float64))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 함수를 투영 세 개와 묶으면 셀프 어텐션 모듈이 됩니다. 쿼리·키·밸류가 모두 같은 입력 `x`에서 나오고, 배치 축은 그대로 지나갑니다. 7절에서 원문의 코드를 고칠 때 이 모듈을 씁니다.

# %% tags=["save"]
import torch.nn as nn


class SelfAttention(nn.Module):
    """One head of self-attention on (B, T, d_model): three projections, then attention."""

    def __init__(self, d_model, d_k, d_v=None):
        super().__init__()
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_v or d_k, bias=False)

    def forward(self, x, mask=None):                          # x: (B, T, d_model)
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)       # (B, T, d_k), (B, T, d_k), (B, T, d_v)
        return scaled_dot_product_attention(q, k, v, mask)  # (B, T, d_v), (B, T, T)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 코드에서 짚을 곳은 세 줄입니다. `transpose(-2, -1)`(배치가 있어도 마지막 두 축만), `/ q.shape[-1] ** 0.5`(√d_k로 나누기, 04번 주제), `softmax(dim=-1)`(각 쿼리의 행이 합 1). 마스크의 True가 "볼 수 있음"이라는 것도 말해 두세요. `nn.MultiheadAttention`의 `attn_mask`는 반대로 True가 "가림"이라 07번에서 다시 나옵니다.

# %% [markdown]
# ## 3. "I am a student" ([원문 001](../SOURCES.md))
#
# 원문은 "I"의 임베딩(embedding)을 $[1,1,1,1]$로 두고, 세 번째 행만 0이 아닌 $4\times4$ 행렬 $W^Q, W^K, W^V$를 보여 줍니다. 원문이 **적어 둔 것**과 우리가 **가정한 것**을 나눠 둡니다.
#
# - 원문에 있는 것: $x_{\text{I}} = [1,1,1,1]$, 세 행렬, 그 결과 $Q_{\text{I}}, K_{\text{I}}, V_{\text{I}}$, 점수 $3/\sqrt4 = 1.5$.
# - 원문에 없는 것: "am", "a", "student"의 임베딩. 4×4 어텐션 행렬을 만들려면 이것이 필요하므로 이 노트북이 **임의로 골랐습니다** (`data/seed001_i_am_a_student.json`의 `assumed_tokens`). 이 세 토큰이 관련된 숫자는 모두 이 가정에 달려 있습니다.

# %% slideshow={"slide_type": "subslide"}
ias = load_json("seed001_i_am_a_student.json")
ias_tokens, stated = ias["tokens"], ias["stated"]
X_ias = torch.tensor([ias["embeddings"][t] for t in ias_tokens], dtype=torch.float64)   # (4, 4): row 0 stated
W_Q1, W_K1, W_V1 = (torch.tensor(stated[n], dtype=torch.float64) for n in ("W_Q", "W_K", "W_V"))
q_i, k_i, v_i = X_ias[0] @ W_Q1, X_ias[0] @ W_K1, X_ias[0] @ W_V1                      # (4,) each
print("Q_I =", q_i.tolist(), " K_I =", k_i.tolist(), " V_I =", v_i.tolist())
assert q_i.tolist() == stated["Q_I"] and k_i.tolist() == stated["K_I"] and v_i.tolist() == stated["V_I"]

d_k = k_i.numel()
score_ii = (q_i @ k_i) / math.sqrt(d_k)
print(f"q·k = {q_i @ k_i:.0f},  d_k = {d_k},  점수 = {q_i @ k_i:.0f}/√{d_k} = {score_ii:.2f}")
assert score_ii == stated["score_I_I"] == 1.5
assert d_k == 4 and q_i @ k_i == stated["claimed_key_dim"]   # the seed's "3" is the dot product

# %% [markdown] slideshow={"slide_type": "subslide"}
# 곱셈과 1.5는 맞습니다. 그런데 설명은 다섯 군데가 틀렸습니다. 세 가지는 바로 아래에서 바로잡고, 나머지 둘(자기 자신이 1위라는 주장과 $Q_I \cdot Q_{student}$)은 네 토큰의 가중치를 계산한 다음에 봅니다.
#
# > **원문 바로잡기 (벡터와 행렬)**: 원문은 $[1,1,1,1]\cdot W^Q = \begin{bmatrix}\cdots\end{bmatrix} = Q_I = [1,1,1,1]$처럼 등호 사이에 $4\times4$ 행렬 $W^Q$ 자체를 적어, 벡터와 행렬을 같다고 씁니다. 행렬은 곱셈에 쓰이는 재료이고, 곱한 **결과**가 벡터 $Q_I$입니다: $x_I W^Q = Q_I$.
#
# > **원문 바로잡기 (키 차원)**: 원문은 "Key의 차원은 3"이라고 쓰고는 $\sqrt4$로 나눕니다. $K_{\text{I}} = [1,0,1,1]$은 4차원이므로 키 차원(key dimension)은 $d_k = 4$이고, 3은 내적 $q\cdot k$의 값입니다.
#
# > **원문 바로잡기 (점수와 가중치)**: 원문은 1.5를 "I에 대한 self-attention"이라고 부르지만 1.5는 소프트맥스(softmax)에 넣기 전의 **점수**입니다. "I"가 자기 자신에게 주는 **가중치**는 같은 행의 다른 점수들에 따라 정해지므로 1.5만으로는 알 수 없습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 네 토큰 전체의 점수와 가중치입니다. 가정한 임베딩으로는 "I"가 자기 자신에게 주는 가중치가 0.149입니다.

# %%
ias_out, ias_w = scaled_dot_product_attention(X_ias @ W_Q1, X_ias @ W_K1, X_ias @ W_V1)
ias_scores = (X_ias @ W_Q1) @ (X_ias @ W_K1).T / 2                        # (4, 4) = QKᵀ/√4
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 2.5))
sns.heatmap(ias_scores.numpy(), annot=True, fmt=".2f", cmap="Oranges", xticklabels=ias_tokens,
            yticklabels=ias_tokens, ax=ax1, cbar=False)
sns.heatmap(ias_w.numpy(), annot=True, fmt=".3f", cmap="Blues", vmin=0, vmax=1, xticklabels=ias_tokens,
            yticklabels=ias_tokens, ax=ax2)
ax1.set(title="점수 QKᵀ/√d_k", xlabel="키", ylabel="쿼리")
ax2.set(title="가중치 (행의 합 1)", xlabel="키", ylabel="")
plt.setp([a.get_yticklabels() for a in fig.axes], rotation=0)      # seaborn turns crowded labels
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (자기 자신)**: 원문은 "당연히 자기 자신에 대한 Attention값이 가장 높다"고 하지만 당연하지 않습니다. 점수는 자기 쿼리와 **다른** 행렬로 만든 키의 내적이라, 자기 자신과의 점수가 가장 크다는 보장이 없습니다. 원문의 행렬에서는 $Q$와 $K$가 임베딩의 **세 번째 성분만** 보고 만들어지므로 점수가 $S_{ij} = 3\,x_{i3}\,x_{j3}/2$입니다. 그래서 세 번째 성분이 양수인 쿼리에서는 세 번째 성분이 가장 큰 토큰이 1위가 되고, 음수인 쿼리에서는 반대로 가장 작은 토큰이 1위, 0인 쿼리에서는 모든 키가 같습니다(아래 "a"). 원문은 "am", "a", "student"의 임베딩을 적지 않았으므로 구체적인 숫자는 **이 노트북이 가정한 임베딩에서** 나온 것입니다. 가정한 임베딩에서는 "I" 행의 가장 큰 가중치가 자기 자신(0.149)이 아니라 "am"(0.668)입니다. 원문은 또 $Q_I \cdot Q_{student}$라고 썼는데, 쿼리끼리가 아니라 $Q_I \cdot K_{student}$입니다.
#
# 투영 없이 $q = k = x$로 두더라도, 같은 방향으로 크기(노름)가 더 큰 벡터가 있으면 그쪽 점수가 자기 점수보다 큽니다. 그리고 가정한 "a"는 세 번째 성분이 0이라 쿼리가 영벡터이고, 모든 키를 똑같이 1/4씩 봅니다.

# %%
row_i = ias_w[0]
print("'I' 행의 가중치:", row_i.numpy().round(3), "→ 최대:", ias_tokens[row_i.argmax()])
x_plain = torch.tensor([[1.0, 1, 1, 1], [2.0, 2, 2, 2]])    # "I" and a longer vector in the same direction
print(f"q = k = x: I·I = {x_plain[0] @ x_plain[0]:.0f},  I·(2×I) = {x_plain[0] @ x_plain[1]:.0f}")
print("'a'의 쿼리:", (X_ias[2] @ W_Q1).tolist(), " 가중치:", ias_w[2].tolist())

# %% slideshow={"slide_type": "skip"}
assert ias_tokens[row_i.argmax()] == "am" and abs(row_i[0] - 0.149) < 5e-4 and abs(row_i[1] - 0.668) < 5e-4
assert torch.linalg.matrix_rank(X_ias @ W_Q1) == 1                            # Q sees only the third component
assert torch.equal(ias_scores, 1.5 * torch.outer(X_ias[:, 2], X_ias[:, 2]))  # S_ij = 3·x_i3·x_j3 / √4
assert x_plain[0] @ x_plain[1] > x_plain[0] @ x_plain[0]
assert torch.allclose(ias_w[2], torch.full((4,), 0.25, dtype=torch.float64))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 원문이 준 정보로 계산할 수 있는 것은 1.5까지라는 점을 강조하세요. 4×4 행렬은 나머지 세 단어의 임베딩을 가정해야만 나옵니다. "자기 자신이 가장 높다"는 자주 듣는 말이지만 W^Q와 W^K가 다르면 보장되지 않고, 같아도 벡터의 크기(노름) 때문에 깨진다는 것을 I·(2×I) 예로 보여 주세요.

# %% [markdown]
# ## 4. "어제 밤에 배가 고파서 치킨을 시켜서 먹었다" ([원문 003](../SOURCES.md))
#
# 원문은 8개 토큰을 4차원 벡터로 두고 $W_Q, W_K, W_V$를 직접 적은 뒤 모든 중간 결과를 출력합니다. 목표는 "배"가 과일·신체·선박 중 무엇인지 문맥으로 정하는 것입니다. 원문이 적은 **입력**만 `data/seed003_bae.json`에서 읽고, 원문이 출력한 **숫자**(`seed_claims`)는 우리 계산과 비교하는 데만 씁니다.

# %%
bae = load_json("seed003_bae.json")
tokens = bae["tokens"]
X, W_Q, W_K, W_V = (torch.tensor(bae[n], dtype=torch.float64) for n in ("X", "W_Q", "W_K", "W_V"))
claims = {n: torch.tensor(c, dtype=torch.float64) if isinstance(c, list) else c for n, c in bae["seed_claims"].items()}
BAE, GOPASEO = tokens.index("배"), tokens.index("고파서")

Q, K, V = X @ W_Q, X @ W_K, X @ W_V                 # (8, 4) each
output, weights = scaled_dot_product_attention(Q, K, V)   # (8, 4), (8, 8)
scores = Q @ K.T / math.sqrt(4)                     # (8, 8)
print(f"Q[0,0] 손 계산: 0.1·0.5 + 0.2·0.2 + 0.1·0.1 + 0.3·0.3 = {0.1*0.5 + 0.2*0.2 + 0.1*0.1 + 0.3*0.3:.2f}")
assert abs(Q[0, 0] - 0.19) < 1e-12

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 원문의 숫자와 비교
#
# 원문이 출력한 단계마다, 원문 자신의 앞 단계 숫자(또는 원문의 $X$, $W$)로 다시 계산한 값과의 가장 큰 차이를 한 표로 봅니다. 원문은 $Q, K, V$를 소수 둘째 자리, 점수·가중치·출력을 셋째 자리까지 적었습니다. 원문이 **적은 숫자로 다시 곱했다면** 차이는 마지막 자리의 반올림, 곧 0.005(셋째 자리는 0.0005)뿐입니다. 원문이 반올림하기 **전**의 값으로 계산했다면 앞 단계의 반올림 오차가 곱셈과 소프트맥스를 거쳐 커질 수 있으므로, 표의 "반올림 한계"는 그 최댓값을 원문의 숫자로 계산해 넉넉히 잡습니다. 예를 들어 $Q$와 $K$의 성분이 각각 0.005까지 틀리면 $(QK^\top)_{ij}$는 $0.005\,(\sum_c |Q_{ic}| + \sum_c |K_{jc}|) + 4 \cdot 0.005^2$까지 움직이고, 적을 때 0.0005가 더해집니다. 가중치 8개의 행 합은 $1 \pm 8 \times 0.0005 = 1 \pm 0.004$여야 합니다.

# %% slideshow={"slide_type": "subslide"}
def max_diff(a, b):
    return (a - b).abs().max().item()


seed_row_sums = claims["weights"].sum(-1)                       # (8,)
seed_exp = torch.exp(claims["scaled_scores"][BAE])              # (8,)
seed_w_bae = seed_exp / seed_exp.sum()                          # (8,) softmax of the seed's scores
seed_out_bae = claims["weights_row_bae"] @ claims["V"]          # (4,)
r2, r3 = 0.005, 0.0005              # half a unit in the 2nd / 3rd decimal: what printing a number can change
abs_q, abs_k, abs_v = claims["Q"].abs().sum(-1), claims["K"].abs().sum(-1), claims["V"].abs().sum(0)
bound = {  # the most rounding can explain if the seed computed from unrounded numbers, rounding only what it printed
    "QKᵀ": (r2 * (abs_q[:, None] + abs_k[None, :])).max().item() + 4 * r2**2 + r3,   # Q, K each off by ≤ r2
    "QKᵀ/2": r3 / 2 + r3,                                                             # QKᵀ off by ≤ r3
    "'배' 행 가중치": (seed_w_bae * math.expm1(2 * r3)).max().item() + r3,           # scores off by ≤ r3
    "'배' 출력": (r2 * claims["weights_row_bae"].sum() + r3 * abs_v.max()).item() + 8 * r2 * r3 + r3,
}

# %% slideshow={"slide_type": "subslide"}
checks = [  # (step, what is compared, largest difference, most that rounding explains)
    ("Q = XW_Q", "원문 X·W_Q", max_diff(Q, claims["Q"]), r2),
    ("K = XW_K", "원문 X·W_K", max_diff(K, claims["K"]), r2),
    ("V = XW_V", "원문 X·W_V", max_diff(V, claims["V"]), r2),
    ("QKᵀ", "원문 Q·원문 Kᵀ", max_diff(claims["Q"] @ claims["K"].T, claims["QK_T"]), bound["QKᵀ"]),
    ("QKᵀ/2", "원문 QKᵀ / 2", max_diff(claims["QK_T"] / 2, claims["scaled_scores"]), bound["QKᵀ/2"]),
    ("가중치 행 합", "1", (seed_row_sums - 1).abs().max().item(), 8 * r3),
    ("'배' 행 가중치", "원문 점수의 softmax", max_diff(seed_w_bae, claims["weights_row_bae"]), bound["'배' 행 가중치"]),
    ("'배' 출력", "원문 가중치 × 원문 V", max_diff(seed_out_bae, claims["output_row_bae"]), bound["'배' 출력"]),
]
print(f"{'단계':<12}{'다시 계산한 것':<20}{'최대 차이':>8}  반올림 한계   반올림으로 설명됨?")
for step, ref, diff, allowed in checks:
    print(f"{step:<12}{ref:<20}{diff:>8.4f}{allowed:>12.4f}   {'예' if diff <= allowed + 1e-12 else '아니오'}")

# %% slideshow={"slide_type": "subslide"}
print("행 합이 1 ± 0.004를 벗어나는 행:", [tokens[i] for i in torch.nonzero((seed_row_sums - 1).abs() > 0.004).flatten()])
print("'어제'의 쿼리: 계산", Q[0].numpy().round(2), " 원문", claims["Q"][0].numpy())
print("'배'의 출력: 원문", claims["output_row_bae"].numpy().round(3), " 원문 가중치×원문 V", seed_out_bae.numpy().round(3),
      " 바른 값", output[BAE].numpy().round(3))
final = claims["final_output_text"]
print(f"원문 결론의 출력 {final.tolist()}: 성분 {final.numel()}개 (d_v = {V.shape[1]}),",
      f"V 첫 열의 최댓값 {V[:, 0].max():.2f} (원문 V: {claims['V'][:, 0].max():.2f})")

# %% slideshow={"slide_type": "skip"}
diffs = {step: diff for step, _, diff, _ in checks}
explained = {step: diff <= allowed + 1e-12 for step, _, diff, allowed in checks}
assert [step for step, ok in explained.items() if ok] == ["QKᵀ/2", "'배' 행 가중치"]
assert [round(diffs[n], 2) for n in ("Q = XW_Q", "K = XW_K", "V = XW_V")] == [0.11, 0.12, 0.12]
assert torch.allclose(Q[0], torch.tensor([0.19, 0.15, 0.19, 0.17], dtype=torch.float64))
assert abs(diffs["QKᵀ"] - 0.099) < 5e-4 and diffs["QKᵀ"] > 7 * bound["QKᵀ"] and abs(bound["QKᵀ"] - 0.0123) < 5e-5
assert abs(bound["'배' 출력"] - 0.0065) < 5e-5 and diffs["'배' 출력"] > 5 * bound["'배' 출력"]
assert [tokens[i] for i in torch.nonzero((seed_row_sums - 1).abs() > 0.004).flatten()] == ["치킨을"]
assert abs(seed_row_sums[5] - 0.992) < 1e-9 and abs(diffs["'배' 출력"] - 0.033) < 5e-4
assert torch.allclose(seed_out_bae, torch.tensor([0.242, 0.201, 0.194, 0.176], dtype=torch.float64), atol=5e-4)
assert torch.allclose(output[BAE], torch.tensor([0.202, 0.179, 0.189, 0.209], dtype=torch.float64), atol=5e-4)
assert final.numel() != V.shape[1] and final[0] > max(V[:, 0].max(), claims["V"][:, 0].max())

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (계산)**: 앞뒤가 맞는 단계는 $\sqrt{d_k} = 2$로 나누기와 "배" 행의 소프트맥스뿐입니다. ① $Q, K, V$는 원문 자신의 $X$와 $W$로 다시 곱하면 나오지 않습니다("어제"의 쿼리는 $[0.19, 0.15, 0.19, 0.17]$, 원문은 $[0.17, 0.24, 0.17, 0.22]$). ② 원문의 $QK^\top$는 원문의 $Q$와 $K$를 곱한 것과도 최대 0.099 다릅니다(반올림으로는 많아야 0.0123). ③ "치킨을" 행의 가중치 합은 0.992로 반올림 범위를 벗어납니다. ④ "배"의 출력 $[0.275, 0.222, 0.206, 0.183]$은 원문 자신의 가중치와 $V$를 곱한 $[0.242, 0.201, 0.194, 0.176]$과도 0.033까지 다르고(반올림으로는 많아야 0.0065), 바른 값은 $[0.202, 0.179, 0.189, 0.209]$입니다. ⑤ 결론의 "최종 Output $[0.73, 0.32]$"는 어디에서도 나오지 않습니다. 출력은 4차원이어야 하고, 합 1인 양의 가중치로 섞은 값은 $V$의 각 열의 최댓값(첫 열 0.28, 원문의 $V$로도 0.32)을 넘을 수 없습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 숫자가 실제로 보여 주는 것
#
# 원문의 결론은 "배"가 "고파서"에 가장 강하게 연결되어 "사람의 배"로 해석된다는 것입니다. 우리가 계산한 "배" 행을 봅니다.

# %%
row = weights[BAE]
order = row.argsort(descending=True)
print("'배' 행의 가중치 (큰 순서):", [(tokens[j], round(row[j].item(), 3)) for j in order])
rank_gopaseo = (order == GOPASEO).nonzero().item() + 1
print(f"'고파서'의 순위: {rank_gopaseo}/8,  모든 가중치와 1/8 = 0.125의 최대 차이: {(weights - 1 / 8).abs().max():.3f}")
print("각 쿼리의 1위 키:", [tokens[j] for j in weights.argmax(-1)])
print("키의 크기(노름) ‖k‖:", dict(zip(tokens, K.norm(dim=-1).numpy().round(3).tolist())))
q_unit = Q / Q.norm(dim=-1, keepdim=True)                      # (8, 4) query directions
print(f"쿼리끼리의 코사인 유사도 최솟값: {(q_unit @ q_unit.T).min():.3f},",
      f"점수 범위: {scores.min():.3f} ~ {scores.max():.3f}")

# %% slideshow={"slide_type": "skip"}
assert row.argmax() == BAE and rank_gopaseo == 7
assert claims["weights_row_bae"][GOPASEO] < claims["weights_row_bae"].max()
assert (weights - 1 / 8).abs().max() < 0.007
assert (weights.argmax(-1) == BAE).all() and K.norm(dim=-1).argmax() == BAE
assert (q_unit @ q_unit.T).min() > 0.89 and abs(K[BAE].norm() - 0.593) < 5e-4
assert (output - V.mean(0)).abs().max() < 0.002
assert 0.03 < scores.min() and scores.max() < 0.17
assert all({round(x, 1) for x in W.flatten().tolist()} <= {0.1, 0.2, 0.3, 0.4, 0.5} for W in (W_Q, W_K, W_V))
assert (W_V.min(), W_V.max()) == (0.1, 0.4) and max(W_Q.max(), W_K.max()) == 0.5  # hand-picked one-decimal numbers

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (결론)**: "배"가 가장 많이 보는 토큰은 "고파서"가 아니라 **"배" 자신**(0.131)이고, "고파서"(0.122)는 8개 중 7번째입니다. 원문 자신의 가중치로도 "고파서"(0.122)는 가장 큰 값(0.129)보다 작습니다.
#
# 더 중요한 것은 **모든** 가중치가 균등값 $1/8 = 0.125$에서 0.007 이내라는 점입니다. 이 행렬에서 의미를 읽어 내는 것은 무리입니다.
#
# 1. 점수가 작습니다. $X$와 $W$의 성분이 0.5 이하라 점수가 0.03~0.16 범위에 있고, 이렇게 작은 점수 차이는 소프트맥스를 거의 움직이지 못합니다.
# 2. 모든 성분이 양수입니다. 그러면 쿼리들이 거의 같은 방향을 가리키고(코사인 유사도(cosine similarity) 0.89 이상), 순위는 쿼리보다 **거의** 키의 크기(노름) $\|k\|$가 정합니다(크기가 거의 같은 키끼리는 순서가 바뀌기도 합니다). 크기가 가장 큰 키는 "배"(‖k‖ = 0.593)이고, **모든 쿼리가 이 키를 1위로** 고릅니다.
#
# 그래서 출력의 모든 행이 거의 같습니다(균등한 가중치의 가중합은 $V$의 평균). 원문은 $V$를 만드는 행렬을 "학습된 $W_V$"라고 부르지만, 그 성분은 0.1~0.4(다른 $W$는 0.1~0.5)에서 손으로 고른 숫자일 뿐 학습된 것이 아닙니다. 그러므로 이 예제는 **계산 순서**를 보여 줄 뿐 "배"의 뜻에 대해서는 아무것도 보여 주지 않습니다.

# %% slideshow={"slide_type": "subslide"}
panels = {"Q": (Q, "쿼리 Q = X·W_Q"), "K": (K, "키 K = X·W_K"), "V": (V, "밸류 V = X·W_V"),
          "O": (output, "출력 = 가중치·V")}
fig, axes = plt.subplots(1, 4, figsize=(9.5, 3.2), sharey=True)
for ax, (name, (m, title)) in zip(axes, panels.items()):
    sns.heatmap(m.numpy(), annot=True, fmt=".2f", annot_kws={"size": 7}, cmap="Greens", vmin=0, vmax=0.4,
                cbar=False, xticklabels=[f"{name}{j}" for j in range(4)], yticklabels=tokens, ax=ax)
    ax.set(title=title, xlabel="차원")
axes[0].set_ylabel("토큰")
plt.setp([a.get_yticklabels() for a in fig.axes], rotation=0)      # seaborn turns crowded labels
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 점수와 가중치입니다. 가중치 그림의 색 범위를 0~1로 두면 전체가 한 가지 연한 색입니다.

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 2.8))
sns.heatmap(scores.numpy(), annot=True, fmt=".2f", annot_kws={"size": 7}, cmap="Oranges", cbar=False,
            xticklabels=tokens, yticklabels=tokens, ax=ax1)
sns.heatmap(weights.numpy(), annot=True, fmt=".3f", annot_kws={"size": 7}, cmap="Blues", vmin=0, vmax=1,
            xticklabels=tokens, yticklabels=tokens, ax=ax2)
ax1.set(title="점수 QKᵀ/2", xlabel="키", ylabel="쿼리")
ax2.set(title="가중치 (색 범위 0~1)", xlabel="키")
for a in (ax1, ax2):                                 # seaborn turns crowded labels: Hangul upright in both panels
    a.tick_params(axis="both", rotation=0, labelsize=8)
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 비교 표는 한 장으로 보여 주고 넘어가세요. 청중에게는 세 가지만 남기세요. (1) 행렬 곱부터 틀렸다, (2) 맞게 계산해도 가중치는 거의 1/8로 균등하다, (3) 그래서 "배 = 사람의 배"라는 결론은 이 숫자에서 나올 수 없다. 모든 쿼리가 "배"를 1위로 고르는 이유(양수 성분, 크기가 큰 키)는 좋은 토론거리입니다.

# %% [markdown]
# ## 5. 쿼리를 골라 보기
#
# 슬라이더로 쿼리 토큰을 고르면 그 토큰의 가중치가 키마다 막대로 그려집니다. 두 번째 슬라이더는 모든 점수에 곱하는 배율입니다($W^Q$에 그 수를 곱한 것과 같고, 05번의 온도(temperature)를 그 역수로 둔 것과도 같습니다). 확인할 것:
# - 배율 1에서는 어느 쿼리를 골라도 막대가 점선(균등 1/8)에 붙어 있다.
# - 배율을 키우면 분포가 한쪽으로 쏠리지만, 1위는 어느 쿼리에서나 "배"다.
#
# 그림을 그리는 코드는 접어 둔 셀(`query_explorer_figure`)에 있습니다. 그림을 한 번 만들고, 슬라이더가 움직이면 막대의 높이와 제목만 바꿉니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 쿼리 탐색기

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def query_explorer_figure(scores, tokens, n_panels=1, figsize=(8.0, 3.0)):
    """Bar panels of softmax(scale · scores[query]); returns (figure, update(query, scale, panel=0))."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n_panels, figsize=figsize, squeeze=False, sharey=True)
    panels = []
    for ax in axes[0]:
        bars = ax.bar(range(len(tokens)), [0.0] * len(tokens), color="tab:blue")
        labels = [ax.text(j, 0.0, "", ha="center", va="bottom", fontsize=8) for j in range(len(tokens))]
        ax.axhline(1 / len(tokens), color="gray", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(tokens)), tokens, rotation=45, fontsize=8)
        ax.set_ylim(0, 1.05)
        panels.append((ax, bars, labels))
    panels[0][0].set_ylabel("가중치")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.25, top=0.86, wspace=0.08)

    def update(query, scale, panel=0):
        ax, bars, labels = panels[panel]
        w = torch.softmax(scores[query] * scale, dim=-1)       # (T_k,)
        top = int(w.argmax())
        for j, (bar, label) in enumerate(zip(bars, labels)):
            bar.set_height(float(w[j]))
            bar.set_color("tab:orange" if j == top else "tab:blue")
            label.set_position((j, float(w[j])))
            label.set_text(f"{w[j]:.2f}")
        ax.set_title(f"쿼리 '{tokens[query]}' (배율 {scale:g}): 1위 '{tokens[top]}' {w[top]:.3f}", fontsize=9)
        return w

    return fig, update

# %% tags=["nbval-ignore-output"]
fig, update = query_explorer_figure(scores, tokens)
query_explorer = Explorer(fig, update, {
    "query": widgets.SelectionSlider(options=[(t, i) for i, t in enumerate(tokens)], value=BAE, description="쿼리"),
    "scale": widgets.FloatLogSlider(value=1.0, base=10, min=0, max=2, step=0.05, description="점수 배율"),
}, dpi=80)
query_explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 그림 코드로 쿼리 "배", "고파서", "먹었다"를 배율 1과 배율 50에서 그립니다.

# %%
queries = [BAE, GOPASEO, tokens.index("먹었다")]
grid = {}
fig, update = query_explorer_figure(scores, tokens, n_panels=3, figsize=(9.5, 2.6))
grid[1.0] = torch.stack([update(query, 1.0, panel=i) for i, query in enumerate(queries)])     # (3, 8)
plt.show()

# %% slideshow={"slide_type": "subslide"}
fig, update = query_explorer_figure(scores, tokens, n_panels=3, figsize=(9.5, 2.6))
grid[50.0] = torch.stack([update(query, 50.0, panel=i) for i, query in enumerate(queries)])   # (3, 8)
plt.show()

# %% slideshow={"slide_type": "skip"}
print("배율 1, 각 쿼리의 최대 가중치:", grid[1.0].max(-1).values.numpy().round(3))
print("배율 50, 각 쿼리의 최대 가중치:", grid[50.0].max(-1).values.numpy().round(3),
      "→ 1위:", [tokens[j] for j in grid[50.0].argmax(-1)])
assert (abs(grid[1.0] - 1 / 8) < 0.007).all() and torch.allclose(grid[1.0][0], row)
assert (grid[50.0].argmax(-1) == BAE).all() and grid[50.0].max() > 0.5

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 "배"에 두고 배율을 천천히 올리세요. 쏠림이 생겨도 1위가 "고파서"로 바뀌지 않는다는 것을 청중이 직접 보게 하는 것이 목적입니다. 양수 배율은 점수의 순서를 바꾸지 않으므로 분포를 날카롭게 할 뿐 순위를 바꾸지 못합니다.

# %% [markdown]
# ## 6. 투영이 하는 일을 설계해 보기
#
# 원문의 행렬은 아무 의미 없이 고른 숫자라서 어텐션이 아무것도 하지 않았습니다. 이번에는 같은 문장에서 **투영이 무엇을 할 수 있는지** 보이도록 행렬을 직접 설계합니다. 각 토큰의 임베딩은 문법 역할을 나타내는 특징 5개(시간, 주어, 목적어, 형용사, 타동사)로 만듭니다. "고프다"는 목적어 없이 주어만 받는 형용사입니다. 조사 "가"는 이 작은 예에서 특징이 모두 0입니다.
#
# - $W^Q$: 타동사는 "내 목적어는 어디 있나?"(쿼리 공간의 1번 축), 형용사("고파서")는 "내 주어는 어디 있나?"(2번 축)를 묻습니다.
# - $W^K$: 목적어는 1번 축, 주어는 2번 축에 "나는 목적어다 / 주어다"라는 키를 내겁니다.
# - $W^V = I$: 밸류는 임베딩 그대로여서 출력의 각 성분이 어떤 역할의 정보를 얼마나 가져왔는지 바로 읽힙니다.
#
# 세기 $c$는 두 행렬에 곱하는 수이고, 점수는 $c^2/\sqrt{d_k}$가 됩니다($d_k = 2$).

# %% tags=["save"] slideshow={"slide_type": "subslide"}
CHICKEN_TOKENS = ["어제", "밤에", "배", "가", "고파서", "치킨을", "시켜서", "먹었다"]
CHICKEN_FEATURES = ["시간", "주어", "목적어", "형용사", "타동사"]


def chicken_example(c=3.0):
    """Designed X (8, 5), W_Q and W_K (5, 2), W_V (5, 5): each predicate looks for its argument."""
    roles = {"어제": 0, "밤에": 0, "배": 1, "고파서": 3, "치킨을": 2, "시켜서": 4, "먹었다": 4}
    X = torch.zeros(len(CHICKEN_TOKENS), 5, dtype=torch.float64)
    for token, feature in roles.items():
        X[CHICKEN_TOKENS.index(token), feature] = 1.0
    W_Q = torch.zeros(5, 2, dtype=torch.float64)
    W_Q[4, 0] = c      # a transitive verb asks: where is my object?
    W_Q[3, 1] = c      # an adjective (subject only) asks: where is my subject?
    W_K = torch.zeros(5, 2, dtype=torch.float64)
    W_K[2, 0] = c      # an object answers the first question
    W_K[1, 1] = c      # a subject answers the second
    return X, W_Q, W_K, torch.eye(5, dtype=torch.float64)

# %% [markdown] slideshow={"slide_type": "subslide"}
# $c = 3$으로 계산해 봅니다.

# %%
Xc, W_Qc, W_Kc, W_Vc = chicken_example(3.0)
ch_out, ch_w = scaled_dot_product_attention(Xc @ W_Qc, Xc @ W_Kc, Xc @ W_Vc)   # (8, 5), (8, 8)
ch_scores = (Xc @ W_Qc) @ (Xc @ W_Kc).T / math.sqrt(2)               # (8, 8)
EAT, CHICKEN, HUNGRY = (CHICKEN_TOKENS.index(t) for t in ("먹었다", "치킨을", "고파서"))
print(f"점수: 먹었다→치킨을 {ch_scores[EAT, CHICKEN]:.2f},  치킨을→먹었다 {ch_scores[CHICKEN, EAT]:.2f}")
print(f"가중치: 먹었다→치킨을 {ch_w[EAT, CHICKEN]:.3f},  치킨을→먹었다 {ch_w[CHICKEN, EAT]:.3f} (= 1/8, 아무 선호 없음)")
print(f"고파서→배 {ch_w[HUNGRY, CHICKEN_TOKENS.index('배')]:.3f}")
print("'먹었다'의 출력 (특징별):", dict(zip(CHICKEN_FEATURES, ch_out[EAT].numpy().round(2).tolist())))

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 4.2))
sns.heatmap(ch_w.numpy(), annot=True, fmt=".3f", annot_kws={"size": 7}, cmap="Blues", vmin=0, vmax=1,
            xticklabels=CHICKEN_TOKENS, yticklabels=CHICKEN_TOKENS, ax=ax)
ax.set(title="설계한 투영의 가중치 (c = 3)", xlabel="키", ylabel="쿼리")
plt.setp([a.get_yticklabels() for a in fig.axes], rotation=0)      # seaborn turns crowded labels
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# "먹었다"는 가중치의 거의 전부를 "치킨을"에 주고, 그 결과 "먹었다"의 출력에 "목적어" 특징이 실립니다. 동사가 자기 목적어의 정보를 가져온 것입니다. 반대 방향은 아닙니다. "치킨을"의 쿼리는 영벡터라 "먹었다"에 주는 **점수가 0**이고, 모든 키를 1/8씩 볼 뿐입니다. 이 **비대칭**은 쿼리와 키를 서로 다른 행렬로 만들었기 때문에 점수 자체에 들어 있습니다.
#
# 행렬 하나 $W$를 쿼리와 키에 함께 쓰면 **점수** $S = XW(XW)^\top/\sqrt{d_k}$가 언제나 대칭입니다. "먹었다"가 "치킨을"에 주는 점수와 "치킨을"이 "먹었다"에 주는 점수가 같습니다. 그래도 **가중치**는 행마다 따로 소프트맥스를 거치므로 한쪽만 보는 모양이 나올 수는 있습니다. 다만 방법은 하나뿐입니다. $S$는 그람 행렬(Gram matrix, 벡터들끼리의 내적을 모은 행렬)이라 $S_{ij}^2 \le S_{ii} S_{jj}$이므로, $i$가 자기 자신보다 $j$에 더 큰 점수를 주면($S_{ij} > S_{ii}$) $j$는 반드시 $i$보다 자기 자신에게 더 큰 점수를 줍니다($S_{jj} > S_{ij}$). 상대 행에 더 센 경쟁자(대개 자기 자신)가 있어야 합니다. 아래는 행렬 하나가 동사를 $[1, 0]$, 목적어를 $[3, 0]$으로 보내는 예입니다.

# %% slideshow={"slide_type": "subslide"}
W_shared = torch.zeros(5, 2, dtype=torch.float64)
W_shared[4, 0], W_shared[2, 0] = 1.0, 3.0          # transitive verbs -> [1, 0], the object -> [3, 0]
shared = Xc @ W_shared                             # (8, 2): the same vectors are queries and keys
S_shared = shared @ shared.T / math.sqrt(2)        # (8, 8)
w_shared = torch.softmax(S_shared, dim=-1)         # (8, 8) row-wise weights
print(f"행렬 하나, 점수: 먹었다→치킨을 {S_shared[EAT, CHICKEN]:.2f}, 치킨을→먹었다 {S_shared[CHICKEN, EAT]:.2f} (항상 대칭)")
print(f"가중치: 먹었다→치킨을 {w_shared[EAT, CHICKEN]:.3f}, 치킨을→먹었다 {w_shared[CHICKEN, EAT]:.3f}, "
      f"치킨을→치킨을 {w_shared[CHICKEN, CHICKEN]:.3f} (자기 점수 {S_shared[CHICKEN, CHICKEN]:.2f})")
diag = S_shared.diagonal()
assert torch.equal(S_shared, S_shared.T) and (S_shared**2 <= diag[:, None] * diag[None, :] + 1e-12).all()
assert abs(w_shared[EAT, CHICKEN] - 0.479) < 5e-4 and abs(w_shared[CHICKEN, EAT] - 0.014) < 5e-4
assert abs(w_shared[CHICKEN, CHICKEN] - 0.964) < 5e-4 and S_shared[CHICKEN, CHICKEN] > S_shared[CHICKEN, EAT]
assert ch_w[EAT, CHICKEN] > 0.98 and ch_w[CHICKEN, EAT] == 1 / 8 and ch_w[HUNGRY, 2] > 0.98
assert ch_scores[EAT, CHICKEN] > 6 and ch_scores[CHICKEN, EAT] == 0
assert ch_out[EAT, 2] > 0.98                        # the verb's output now carries "object"

# %% [markdown] slideshow={"slide_type": "subslide"}
# 점수는 양쪽 모두 2.12인데, 가중치는 0.479와 0.014로 한쪽만 봅니다. "치킨을"이 "먹었다"를 거의 보지 않는 것은 자기 자신에게 더 큰 점수(6.36)를 주기 때문이고, 그래서 "치킨을"의 가중치는 0.964가 자기 자신에게 갑니다. 행렬 하나로는 "한쪽만 본다"를 **경쟁자를 세워서만** 만들 수 있습니다. $W^Q$와 $W^K$를 따로 두면 점수 자체가 방향을 가집니다. "치킨을"은 "먹었다"에 점수 0을 주고, 그러려고 다른 무엇을 세게 볼 필요가 없습니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 실제 모델의 투영은 이렇게 깔끔하지 않고, 한 헤드가 여러 관계를 섞어 배웁니다. 그래도 "쿼리 공간의 한 축 = 하나의 질문, 키 공간의 같은 축 = 그 질문의 답"이라는 그림은 학습된 헤드를 해석할 때 출발점이 됩니다(11번). 세기 c를 줄이면 가중치가 1/8 쪽으로 돌아간다는 것은 연습문제 03-3에서 계산합니다.

# %% [markdown]
# ## 7. [원문 002](../SOURCES.md)의 `SimpleSelfAttention` 바로잡기
#
# 원문 002는 "가장 일반적인 방식"이라며 셀프 어텐션 모듈을 보여 줍니다. 그 코드의 핵심 세 줄은 (1) 키를 `transpose(0, 1)`로 전치하고, (2) 점수를 `softmax(..., dim=1)`로 정규화하고, (3) $\sqrt{d_k}$로 나누지 않습니다. 입력이 배치 없는 `(T, E)` 하나일 때는 (1)과 (2)의 문제가 드러나지 않습니다. 실제 모델처럼 `(B, T, E)` 배치를 넣어 하나씩 확인합니다. 아래 함수는 그 세 줄을 그대로 흉내 낸 것입니다.

# %% slideshow={"slide_type": "subslide"}
def seed_style_attention(q, k, v):                 # the seed's three lines, reproduced to test them
    energy = q @ k.transpose(0, 1)                 # swaps axes 0 and 1, whatever they are
    return torch.softmax(energy, dim=1) @ v        # dim=1, no division by √d_k


seed_everything(2)
x = torch.randn(2, 5, 8)                           # (B=2, T=5, E=8)
try:
    seed_style_attention(x, x, x)
except RuntimeError as err:
    print("(2, 5, 8) 입력:", type(err).__name__, "-", str(err).split(" at ")[0])

x = torch.randn(4, 4, 4)                           # B = T = E = 4: no error at all
y = seed_style_attention(x, x, x)
x_changed = x.clone()
x_changed[1] += 1.0                                # change batch item 1 only
y_changed = seed_style_attention(x_changed, x_changed, x_changed)
print("B = T = E = 4: 1번 문장만 바꿨는데 0번 문장의 출력이 바뀜:", bool((y[0] - y_changed[0]).abs().max() > 1e-3))

# %% [markdown] slideshow={"slide_type": "subslide"}
# (1) `transpose(0, 1)`은 **0번과 1번 축**을 바꿉니다. `(T, E)`에서는 그것이 마지막 두 축이지만, `(B, T, E)`에서는 배치 축과 시간 축이 바뀝니다. 모양이 맞지 않으면 오류가 나서 차라리 다행이고, $B = T = E$처럼 모양이 우연히 맞으면 **오류 없이** 0번 문장의 쿼리가 다른 문장의 토큰들과 곱해집니다. 위에서 1번 문장만 바꿨는데 0번 문장의 출력이 바뀐 것이 그 증거입니다. 마지막 두 축만 바꾸는 `transpose(-2, -1)`을 써야 합니다.
#
# (2) 전치를 고쳐도 `dim=1`이 남습니다. `(B, T_q, T_k)` 점수에서 `dim=1`은 **쿼리 축**이라, 한 키에 대해 모든 쿼리의 합이 1이 되고 각 쿼리의 행 합은 1이 아닙니다.

# %%
seed_everything(3)
q, k = torch.randn(2, 5, 8), torch.randn(2, 5, 8)            # (B=2, T=5, d=8)
energy = q @ k.transpose(-2, -1)                              # (B, T_q, T_k): transpose fixed
row_sums = torch.softmax(energy, dim=1).sum(-1)               # what each query's weights add up to
print(f"dim=1: 각 쿼리의 가중치 합 {row_sums.min():.2f} ~ {row_sums.max():.2f}")
print("dim=-1: 각 쿼리의 가중치 합이 모두 1:", torch.allclose(torch.softmax(energy, dim=-1).sum(-1), torch.ones(2, 5)))
assert row_sums.min() < 0.5 and row_sums.max() > 1.5

# %% [markdown] slideshow={"slide_type": "subslide"}
# (3) 나누지 않으면 점수의 표준편차가 $\sqrt{d_k}$로 커져 소프트맥스가 한 키에 쏠립니다(04번의 주제). 투영된 성분의 분산이 1이라고 두고, $d_k = 512$, 토큰 $N = 128$개에서 각 쿼리의 최대 가중치를 평균 냅니다.

# %%
seed_everything(4)
q, k = torch.randn(16, 128, 512), torch.randn(16, 128, 512)   # (B, N, d_k), unit-variance components
energy = q @ k.transpose(-2, -1)                              # (B, N, N)
top_raw = torch.softmax(energy, dim=-1).amax(-1).mean().item()
top_scaled = torch.softmax(energy / math.sqrt(512), dim=-1).amax(-1).mean().item()
print(f"평균 최대 가중치: 나누지 않음 {top_raw:.2f},  √d_k로 나눔 {top_scaled:.2f}  (균등이면 1/128 = {1 / 128:.3f})")
assert 0.85 < top_raw < 0.97 and 0.04 < top_scaled < 0.10

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (`SimpleSelfAttention`)**: 원문 002가 "가장 일반적인 방식"이라고 소개한 코드는 배치 입력에서 (1) `transpose(0, 1)` 때문에 실패하거나, $B = T = E$이면 조용히 문장끼리 섞고, (2) `dim=1` 때문에 쿼리 축으로 정규화해 각 쿼리의 가중치 합이 위처럼 1에서 멀리 벗어나며, (3) $\sqrt{d_k}$로 나누지 않아 $d_k = 512$에서 평균 최대 가중치가 약 0.9(나누면 약 0.07)입니다. 가장 일반적인 방식은 `transpose(-2, -1)`, `softmax(dim=-1)`, `/ √d_k`입니다. 2절의 `SelfAttention`이 그렇게 고친 모듈입니다. 배치 항목이 서로 섞이지 않는지 같은 실험으로 확인합니다.

# %%
seed_everything(5)
module = SelfAttention(d_model=4, d_k=4)
x = torch.randn(4, 4, 4)                                      # B = T = E = 4, the case that fooled the seed code
x_changed = x.clone()
x_changed[1] += 1.0
with torch.no_grad():
    (y, w), (y_changed, _) = module(x), module(x_changed)
print("고친 모듈: 1번 문장만 바꾸면 0번 문장의 출력은 그대로:", torch.equal(y[0], y_changed[0]))
print("가중치 모양", tuple(w.shape), "/ 각 쿼리의 합이 1:", torch.allclose(w.sum(-1), torch.ones(4, 4)))
assert torch.equal(y[0], y_changed[0]) and torch.allclose(w.sum(-1), torch.ones(4, 4))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 세 가지 실패를 순서대로 실행하며 보여 주세요. 가장 위험한 것은 오류가 나지 않는 경우(B = T = E)입니다. "테스트할 때는 배치 크기와 길이와 차원을 서로 다른 수로 두라"는 실전 요령으로 마무리하면 좋습니다.

# %% [markdown]
# ## 8. 셀프 어텐션과 크로스 어텐션
#
# 지금까지는 쿼리·키·밸류가 모두 같은 시퀀스(sequence) $X$에서 나왔습니다. 이것이 **셀프 어텐션**입니다. 02번의 seq2seq에서는 디코더(decoder)가 다음 단어를 만들 때 **디코더의 은닉 상태(hidden state)** 로 "무엇이 필요한가"를 묻고, **인코더(encoder)의 은닉 상태들**에서 답을 가져왔습니다. 이것이 **크로스 어텐션**입니다.
#
# | | 쿼리를 만드는 것 | 키·밸류를 만드는 것 | 가중치의 모양 |
# |---|---|---|---|
# | 셀프 어텐션 | $X$ | 같은 $X$ | $T \times T$ |
# | 크로스 어텐션 | 디코더 은닉 상태 $H_{\text{dec}}$ ($T_q$개) | 인코더 은닉 상태 $H_{\text{enc}}$ ($T_k$개) | $T_q \times T_k$ |
#
# $$Q = H_{\text{dec}} W^Q,\quad K = H_{\text{enc}} W^K,\quad V = H_{\text{enc}} W^V,\qquad \text{출력} = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V \in \mathbb{R}^{T_q \times d_v}$$
#
# 꼭 필요한 조건은 **키 하나에 밸류 하나**가 같은 위치들에서 짝지어 있는 것입니다. $j$번째 키로 매긴 가중치를 $j$번째 밸류에 곱하기 때문입니다. 그래서 키와 밸류의 개수 $T_k$가 같아야 하고, 보통은 같은 시퀀스에서 나오지만 같은 위치에 대응하기만 하면 서로 다른 표현에서 만들어도 됩니다. 쿼리의 개수 $T_q$는 자유롭습니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(6)
src, tgt = ["I", "am", "a", "student"], ["나는", "학생", "이다"]
h_enc = torch.randn(len(src), 4)           # (T_k=4, d_model=4) encoder states
h_dec = torch.randn(len(tgt), 4)           # (T_q=3, d_model=4) decoder states
w_q, w_k, w_v = (torch.randn(4, 4) / 2 for _ in range(3))

cross_out, cross_w = scaled_dot_product_attention(h_dec @ w_q, h_enc @ w_k, h_enc @ w_v)  # (3, 4), (3, 4)
self_out, self_w = scaled_dot_product_attention(h_enc @ w_q, h_enc @ w_k, h_enc @ w_v)    # (4, 4), (4, 4)
print("크로스: 가중치", tuple(cross_w.shape), " 출력", tuple(cross_out.shape))
print("셀프(인코더): 가중치", tuple(self_w.shape), " 출력", tuple(self_out.shape))
try:
    scaled_dot_product_attention(h_dec @ w_q, h_enc @ w_k, h_dec @ w_v)   # 4 keys but 3 values
except RuntimeError as err:
    print("키 4개, 밸류 3개:", type(err).__name__)
assert cross_w.shape == (3, 4) and self_w.shape == (4, 4)
torch.testing.assert_close(cross_out, F.scaled_dot_product_attention(h_dec @ w_q, h_enc @ w_k, h_enc @ w_v))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 크로스 어텐션의 출력은 **인코더 밸류**의 가중합입니다. 디코더 상태는 쿼리를 통해 가중치에만 영향을 주므로, 디코더 상태를 바꿔도 출력은 여전히 인코더 밸류들의 볼록 결합(convex combination)입니다. 상태와 행렬이 무작위이므로 아래 가중치 패턴에는 의미가 없습니다(학습된 정렬(alignment)은 02번에서 보았습니다).

# %%
other_out, other_w = scaled_dot_product_attention(torch.randn(3, 4) @ w_q, h_enc @ w_k, h_enc @ w_v)
v_enc = h_enc @ w_v                                                  # (T_k, d_v)
inside = (other_out >= v_enc.min(0).values - 1e-6) & (other_out <= v_enc.max(0).values + 1e-6)
print("다른 디코더 상태에서도 출력이 인코더 밸류의 범위 안:", bool(inside.all()))
assert inside.all() and not torch.allclose(other_w, cross_w)

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
sns.heatmap(cross_w.numpy(), annot=True, fmt=".2f", cmap="Blues", vmin=0, vmax=1, cbar=False,
            xticklabels=src, yticklabels=tgt, ax=ax1)
sns.heatmap(self_w.numpy(), annot=True, fmt=".2f", cmap="Blues", vmin=0, vmax=1,
            xticklabels=src, yticklabels=src, ax=ax2)
ax1.set(title="크로스 어텐션 (3 × 4)", xlabel="인코더 키", ylabel="디코더 쿼리")
ax2.set(title="인코더 셀프 어텐션 (4 × 4)", xlabel="키", ylabel="쿼리")
plt.setp([a.get_yticklabels() for a in fig.axes], rotation=0)      # seaborn turns crowded labels
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (트랜스포머의 구성)**: 원문 002는 트랜스포머의 "Encoder와 Decoder에는 각각의 Self Attention과 Attention 모듈이 포함"된다고 씁니다. 인코더에도 인코더 출력을 보는 어텐션이 따로 있는 것처럼 읽히지만, 인코더 층에는 **셀프 어텐션만** 있습니다. 디코더 층에는 미래를 가린(인과 마스크) 셀프 어텐션과, 인코더 출력을 키·밸류로 쓰는 크로스 어텐션이 둘 다 있습니다. 원문 001의 "(Encoder 단에서 스스로 Attention score를 생성하기 때문에 Self-attention)"도 같은 오해를 부릅니다. 셀프 어텐션은 디코더에도 있고, "셀프"는 쿼리와 키·밸류가 같은 시퀀스에서 나온다는 뜻입니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 표의 "가중치의 모양" 열을 가리키며 "행은 묻는 쪽, 열은 답하는 쪽"이라고 정리하세요. 트랜스포머 디코더에는 두 종류가 다 들어 있습니다. 크로스 어텐션은 텍스트와 이미지 사이에도 쓰인다고 덧붙이되, 역할은 과제마다 다릅니다. 캡셔닝이나 시각-언어 모델(VLM, 예: Flamingo)은 텍스트가 쿼리, 이미지가 키·밸류이고, 텍스트로 이미지를 만드는 모델(Stable Diffusion의 U-Net)은 반대로 이미지 잠재 표현이 쿼리, 텍스트 토큰이 키·밸류입니다. "만들고 있는 쪽이 묻는다"로 기억하면 됩니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("03-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **03-1.** 입력 `X` $(T, d_{\text{model}})$와 세 행렬을 받아 `(output, weights)`를 돌려주는 셀프 어텐션을 완성하세요. 2절의 `scaled_dot_product_attention`(과 `attention_scores`, PyTorch의 같은 함수)은 쓰지 말고 직접 쓰세요(검사가 알아챕니다). `softmax`는 써도 됩니다.

# %%
def self_attention(X, W_Q, W_K, W_V):
    raise NotImplementedError

check("03-1", self_attention)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def self_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V                              # (T, d_k), (T, d_k), (T, d_v)
    weights = torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), dim=-1)   # (T, T), rows sum to 1
    return weights @ V, weights

check("03-1", self_attention)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **03-2.** 디코더 상태 `dec` $(T_q, d_{\text{model}})$와 인코더 상태 `enc` $(T_k, d_{\text{model}})$를 받아 크로스 어텐션의 `(output, weights)`를 돌려주세요. 03-1처럼 2절의 함수 없이 직접 쓰세요(`softmax`는 써도 됩니다). 검사는 $T_q = 3$, $T_k = 5$로 합니다.

# %%
def cross_attention(dec, enc, W_Q, W_K, W_V):
    raise NotImplementedError

check("03-2", cross_attention)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def cross_attention(dec, enc, W_Q, W_K, W_V):
    Q = dec @ W_Q                                  # (T_q, d_k): the decoder asks
    K, V = enc @ W_K, enc @ W_V                    # (T_k, d_k), (T_k, d_v): the encoder answers
    weights = torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), dim=-1)   # (T_q, T_k)
    return weights @ V, weights

check("03-2", cross_attention)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **03-3.** 6절의 설계한 예제에서 "먹었다"가 "치킨을"에 주는 가중치가 **정확히 0.9**(±0.001)가 되는 세기 `c`를 구하세요. 먼저 종이에서 푸세요: "먹었다" 행의 점수는 "치킨을"에서 얼마이고 나머지 7개 키에서는 얼마인가요? 그 점수들의 소프트맥스가 0.9가 되는 조건을 $c$에 대한 식으로 풀고, 그다음 `chicken_example(c)`와 `scaled_dot_product_attention`으로 확인하세요. (아주 큰 `c`는 통과하지 않습니다.)

# %%
c = ...

check("03-3", c)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
# Row "먹었다": score c²/√2 for "치킨을", 0 for the other 7 keys.
# e^s / (e^s + 7) = 0.9  ⇒  s = ln(0.9 · 7 / 0.1) = ln 63  ⇒  c = sqrt(√2 · ln 63)
c = math.sqrt(math.sqrt(2) * math.log(63))
Xe, W_Qe, W_Ke, W_Ve = chicken_example(c)
_, w_e = scaled_dot_product_attention(Xe @ W_Qe, Xe @ W_Ke, Xe @ W_Ve)
print(f"c = {c:.4f}: 먹었다→치킨을 {w_e[CHICKEN_TOKENS.index('먹었다'), CHICKEN_TOKENS.index('치킨을')]:.4f}")

check("03-3", c)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 학습된 모델에서 $W^Q = W^K$로 묶으면 바로 앞 토큰에 가장 큰 가중치를 주는 이전 토큰 헤드(previous-token head, 07번)를 만들기 어렵습니다. 왜 그럴까요? 6절의 $S_{ij}^2 \le S_{ii} S_{jj}$를 모든 위치 $i$에 적용해 보세요.
# 2. 배 예제에서 모든 쿼리가 "배"를 1위로 골랐습니다. $X$와 $W$의 성분이 모두 양수라서 생긴 일이라면, 학습된 모델에서는 어떻게 다를까요? 학습된 모델이 특정 토큰(예: 문장 첫 토큰)에 가중치를 몰아주는 현상과 비교해 보세요.
# 3. 원문의 결론("배 = 사람의 배")처럼, 학습되지 않은 손 계산 예제에서 의미를 읽고 싶어지는 이유는 무엇일까요? 어떤 실험을 해야 그런 결론을 말할 수 있을까요?
# 4. 7절은 한 배치 항목만 바꿔 다른 항목의 출력이 그대로인지 보는 검사로 버그를 찾았습니다. 패딩 마스크와 인과 마스크가 제대로 걸렸는지는 어떤 입력과 어떤 검사로 확인하겠습니까?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 3번을 먼저 하세요. 1번은 6절의 부등식을 한 번 더 쓰는 문제입니다. 토큰 $i$가 자기 자신보다 $i-1$에 여유 $m$만큼 큰 점수를 주려면 $S_{i,i-1} > S_{ii} + m$이고, $S_{i,i-1}^2 \le S_{ii}S_{i-1,i-1}$에서 $S_{i-1,i-1} > S_{i,i-1} > S_{ii} + m$입니다. 이것이 모든 위치에서 성립하려면 자기 점수 $S_{ii} = \|x_i W\|^2/\sqrt{d_k} \ge 0$이 한 칸마다 $m$씩 줄어야 하므로, 길이 $n$이면 첫 토큰은 $S_{00} > (n-1)\,m$이어야 합니다: 앞쪽 토큰의 벡터가 문장 길이만큼 커져야 하니 긴 문장에서는 사실상 만들 수 없습니다. $W^Q \ne W^K$이면 쿼리는 "한 칸 앞 위치"를, 키는 "내 위치"를 나타내게 해 곧바로 만듭니다(07번의 이전 토큰 헤드). 3번은 "숫자를 검증하는 습관"이라는 오늘의 부주제를 정리합니다. 2번은 04·05번(점수의 크기, 온도)과 이어지고, 4번은 7절의 "하나만 바꾸고 나머지가 그대로인지 본다"를 시간 축과 패딩 칸에 옮기는 문제입니다. 패딩 마스크는 패딩 칸의 입력을 아무 값(큰 난수 등)으로 바꿔도 진짜 토큰들의 출력이 그대로이고 패딩 칸의 가중치가 정확히 0인지, 인과 마스크는 위치 $t$ 뒤의 토큰만 바꿔도 위치 $t$까지의 출력이 그대로이고 가중치 행렬의 대각선 위가 모두 0인지 봅니다. 입력은 B, T, d를 모두 다른 수로, 시퀀스마다 길이를 다르게 고르면 좋습니다(09번에서 이 검사들을 직접 합니다).

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 쿼리·키를 따로 투영해야 점수가 비대칭이 될 수 있다 | $q=k=x$나 행렬 하나면 점수가 항상 대칭(가중치의 비대칭은 더 센 경쟁자가 있을 때만: 0.479 vs 0.014, 치킨을→자신 0.964); 따로 두면 먹었다→치킨을 0.99, 반대는 점수 0·가중치 1/8 |
# | 배치·마스크 어텐션 10줄이 PyTorch와 같다 | `F.scaled_dot_product_attention`과 차이 < 1e-12 (float64) |
# | "I am a student": 곱셈과 1.5는 맞고, $d_k = 4$ | 3은 내적 값; 1.5는 가중치가 아니라 점수; 가정한 임베딩에서 1위는 자기 자신이 아니라 am 0.668 |
# | 배 예제: 원문의 $Q, K, V$, 행 합, 출력, 결론이 틀렸다 | 비교 표 한 장: 최대 차이 0.11~0.12, "치킨을" 행 합 0.992, [0.73, 0.32]는 가중합으로 불가능 |
# | 바르게 계산한 배 예제의 가중치는 거의 균등하다 | 모든 가중치가 1/8 ± 0.007, 1위는 "배" 자신, "고파서"는 7위 |
# | 원문 002의 코드는 배치에서 틀린다 | `transpose(0, 1)` 오류 또는 배치 섞임, `dim=1` 행 합 ≠ 1, 나누지 않으면 최대 가중치 약 0.9 |
# | 크로스 어텐션: 쿼리는 디코더, 키·밸류는 인코더 | 가중치 $(T_q, T_k) = (3, 4)$; 키와 밸류는 같은 위치에 하나씩 |
#
# 다음 노트북(04)에서는 점수를 왜 $\sqrt{d_k}$로 나누는지, 점수가 너무 크거나 작을 때 소프트맥스와 기울기에 어떤 일이 생기는지 봅니다.
