# %% [markdown]
# # 10. 위치 정보
#
# 셀프 어텐션(self-attention)은 토큰의 **순서를 보지 못합니다**. 위치 인코딩(positional encoding)은 그 빈자리에 "몇 번째 토큰인지"를 더하거나(사인·코사인, 학습 임베딩) 쿼리·키를 회전시켜(RoPE) 넣어 줍니다.
#
# **학습 목표**
# - 위치 정보가 없는 셀프 어텐션이 순열 등변성(permutation equivariance)을 갖는다는 것을 계산으로 보이고, 그 결과 어순이 다른 두 문장을 구별하지 못한다는 것을 설명한다.
# - 사인·코사인 위치 인코딩을 식으로 쓰고 구현하며, 오프셋 $k$만큼의 이동이 $p$와 무관한 회전 행렬 $R(k)$라는 것을 확인한다.
# - 학습되는 위치 임베딩의 파라미터 수와 한계(표 밖의 위치)를 사인·코사인 방식과 비교한다.
# - RoPE를 구현해 점수가 상대 위치 $p - r$에만 의존한다는 것을 확인하고, 인접 쌍 방식과 rotate-half 방식이 차원 순서만 다른 같은 방법임을 보이며, 멀티 헤드 층 안에 넣는다.
# - 점수에 거리 벌점을 더하는 ALiBi의 편향 행렬을 직접 만들고, T5의 상대 위치 편향(relative position bias)과 함께 "위치를 점수에 넣는" 방법으로 비교한다.
#
# **선수 지식**: 03번(쿼리·키·밸류), 07번(멀티 헤드 어텐션). 복소수 곱이 회전이라는 사실을 알면 6절이 쉽습니다.
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분
#
# 출처 목록(원문과 논문): [SOURCES.md](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "고양이가 강아지를 쫓았다"와 "강아지가 고양이를 쫓았다"를 먼저 칠판에 쓰고, 어텐션만으로 두 문장을 구별할 수 있는지 청중에게 물어보세요. 1절이 답(구별 못 한다)을 숫자로 보여 주고, 나머지 절은 그 해결책 세 가지(더하기: 사인·코사인, 학습 임베딩 / 회전: RoPE)입니다. 슬라이더는 3절에 있습니다.

# %% slideshow={"slide_type": "skip"}
import math

import matplotlib.pyplot as plt
import torch
import torch.nn as nn

from helpers import seed_everything, setup
from helpers.attention import MultiHeadAttention, scaled_dot_product_attention, softmax
from helpers.exercises import check
from helpers.plots import attention_heatmap

setup()

# %% [markdown]
# ## 1. 셀프 어텐션은 순서를 모른다
#
# 어텐션의 점수(score)는 두 토큰의 **내용**(임베딩(embedding))으로만 계산됩니다. 어느 토큰이 몇 번째에 있는지는 식 어디에도 없습니다. 그래서 입력 토큰의 순서를 섞으면 출력도 **같은 방식으로 섞일 뿐** 값은 그대로입니다. 이것이 순열 등변성입니다.
#
# 순서를 바꾸는 일은 순열 행렬 $P$를 왼쪽에 곱하는 것입니다($P^\top P = I$). 소프트맥스(softmax)는 행마다 따로 계산되고 한 행 안의 원소를 자리와 상관없이 모두 같은 식으로 다루므로, 행과 열을 같은 순열로 섞어도 결과가 똑같이 섞일 뿐입니다($\mathrm{softmax}(PAP^\top) = P\,\mathrm{softmax}(A)\,P^\top$).
#
# $$\begin{aligned}\mathrm{Attn}(PX) &= \mathrm{softmax}\!\left(\frac{PXW_Q\,(PXW_K)^\top}{\sqrt{d_k}}\right)PXW_V \\ &= P\,\mathrm{softmax}\!\left(\frac{XW_QW_K^\top X^\top}{\sqrt{d_k}}\right)P^\top P\,XW_V = P\,\mathrm{Attn}(X)\end{aligned}$$
#
# [원문 004](../SOURCES.md)의 문장 "고양이가 매트 위에 앉았다"의 네 토큰(token)에 무작위 임베딩을 주고, `MultiHeadAttention`에 원래 순서와 섞은 순서를 넣어 봅니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(10)
tokens = ["고양이가", "매트", "위에", "앉았다"]
x = torch.randn(1, 4, 16)                       # (B, T, d_model)
mha = MultiHeadAttention(16, num_heads=2).eval()
perm = torch.tensor([3, 0, 2, 1])               # a new word order

with torch.no_grad():
    out, w = mha(x)                             # (1, 4, 16), (1, 2, 4, 4)
    out_perm, w_perm = mha(x[:, perm])          # attention over the shuffled sentence
print("섞은 순서:", " ".join(tokens[i] for i in perm))
print("섞은 입력의 출력 = 출력을 섞은 것:", torch.allclose(out_perm, out[:, perm], atol=1e-6))
torch.testing.assert_close(out_perm, out[:, perm])
torch.testing.assert_close(w_perm, w[:, :, perm][:, :, :, perm])   # rows and columns move together

# %% [markdown]
# 투영(projection)은 토큰마다 따로 곱해지므로 위의 멀티 헤드 층도 순서를 바꾸면 출력의 순서도 똑같이 바뀔 뿐이었고, 투영이 없는 스케일드 닷프로덕트 어텐션(scaled dot-product attention)은 더 말할 것도 없습니다.

# %% slideshow={"slide_type": "subslide"}
plain, _ = scaled_dot_product_attention(x, x, x)              # (1, 4, 16)
plain_perm, _ = scaled_dot_product_attention(x[:, perm], x[:, perm], x[:, perm])
torch.testing.assert_close(plain_perm, plain[:, perm])
print("'앉았다'의 출력은 어느 순서에서나 같다:", torch.allclose(plain_perm[0, 0], plain[0, 3]))

# %% [markdown]
# ### 어순만 다른 두 문장
#
# 순열 등변성의 결과는 구체적입니다. 서브워드 토크나이저(tokenizer)처럼 조사를 따로 떼면, "고양이가 강아지를 쫓았다"와 "강아지가 고양이를 쫓았다"는 **똑같은 다섯 토큰** {고양이, 강아지, 가, 를, 쫓았다}를 다른 순서로 늘어놓은 것입니다. 뜻은 정반대입니다. 동사 "쫓았다"의 출력이 두 문장에서 다르지 않다면, 이 층 위의 어떤 모델도 누가 누구를 쫓았는지 알 수 없습니다.

# %% slideshow={"slide_type": "subslide"}
vocab = {"고양이": 0, "강아지": 1, "가": 2, "를": 3, "쫓았다": 4}
sent_a = ["고양이", "가", "강아지", "를", "쫓았다"]
sent_b = ["강아지", "가", "고양이", "를", "쫓았다"]
swap = torch.tensor([2, 1, 0, 3, 4])            # sent_b = sent_a[swap]

seed_everything(11)
embed = nn.Embedding(len(vocab), 16)
mha = MultiHeadAttention(16, num_heads=2).eval()


def embed_sentence(words):
    return embed(torch.tensor([[vocab[w] for w in words]]))   # (1, T, 16)


with torch.no_grad():
    xa, xb = embed_sentence(sent_a), embed_sentence(sent_b)
    out_a, w_a = mha(xa)
    out_b, w_b = mha(xb)
assert [sent_a[i] for i in swap] == sent_b
torch.testing.assert_close(out_b, out_a[:, swap])
torch.testing.assert_close(out_b[0, 4], out_a[0, 4])            # the verb cannot tell who chased whom
print("'쫓았다' 출력 (두 문장):", out_a[0, 4, :4], out_b[0, 4, :4], sep="\n")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 가중치(weight) 행렬을 나란히 그리면, 오른쪽은 왼쪽의 행과 열을 같은 방식으로 바꿔 놓은 것일 뿐입니다. "쫓았다" 행(맨 아래)은 두 그림에서 같은 토큰에 같은 가중치를 줍니다. 위치만 바뀌었습니다.

# %%
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.5))
attention_heatmap(w_a[0, 0], sent_a, sent_a, ax=axes[0], title="고양이가 강아지를 쫓았다 (헤드 1)")
attention_heatmap(w_b[0, 0], sent_b, sent_b, ax=axes[1], title="강아지가 고양이를 쫓았다 (헤드 1)")
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# [원문 004](../SOURCES.md)는 CNN과 비교하며 셀프 어텐션은 "모든 것을 한 번에" 본다고 설명합니다. 맞는 말이지만 그 대가는 적혀 있지 않습니다. 커널은 "바로 옆"이 무엇인지 구조로 알지만, 어텐션은 가깝고 먼 것을 구별하지 못합니다. [원문 002](../SOURCES.md)가 트랜스포머는 입력을 "하나의 덩어리"로 받는다고 한 것도 같은 이야기입니다. 덩어리(집합)로 받는 순간 순서는 사라지고, 그래서 위치 인코딩이 필요합니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 여기서 한국어의 특징을 짚으면 토론이 살아납니다. "강아지를 고양이가 쫓았다"는 어순이 달라도 뜻이 같습니다. 조사가 역할을 표시하기 때문입니다. 어절 단위 토큰이라면 순서를 모르는 것이 덜 아프지만, 조사를 떼어 내는 토크나이저에서는 "가"가 어느 명사에 붙었는지가 바로 순서 정보입니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 덧붙임: 소프트맥스는 점수의 순서를 지킨다
#
# > **원문 바로잡기**: [원문 004](../SOURCES.md)는 "앉았다" 행의 점수를 고양이가 0.3, 매트 0.2, 위에 0.4, 앉았다 0.5로 적고, 이어서 그 행의 가중치를 $[0.35, 0.15, 0.20, 0.30]$으로 적어 "고양이가"에 가장 큰 가중치를 줍니다. 소프트맥스는 점수의 순서를 유지하므로 세 번째로 큰 점수(0.3)가 가장 큰 가중치가 될 수 없습니다. 아래 계산처럼 이 점수의 가중치는 $[0.236, 0.214, 0.261, 0.289]$이고(√d_k로 나누면 더 평평해집니다), 가장 큰 가중치는 "앉았다" 자신입니다. 아래의 "점수 × 0.125"는 $\sqrt{d_k} = 8$, 곧 $d_k = 64$를 가정한 것입니다.

# %%
seed_row = torch.tensor([0.3, 0.2, 0.4, 0.5])     # the seed's scores for '앉았다'
for scale in [1.0, 1 / 8]:                         # as written, and divided by sqrt(d_k) = sqrt(64)
    weights = softmax(seed_row * scale)
    print(f"점수 × {scale:.3f} → 가중치 {weights.numpy().round(3)}")
    assert weights.argmax() == 3 and weights[0] < weights[2]
assert torch.allclose(softmax(seed_row), torch.tensor([0.2363, 0.2138, 0.2612, 0.2887]), atol=1e-4)

# %% [markdown]
# ## 2. 사인·코사인 위치 인코딩
#
# [Vaswani 등 2017](../SOURCES.md)의 해결책은 위치 $p$마다 정해진 벡터 $\mathrm{PE}(p) \in \mathbb{R}^{d}$를 임베딩에 **더하는** 것입니다. 차원을 두 개씩 짝지어, 쌍 $i$는 각진동수(angular frequency) $\omega_i$로 도는 사인과 코사인을 씁니다.
#
# $$\mathrm{PE}(p)_{2i} = \sin(p\,\omega_i), \qquad \mathrm{PE}(p)_{2i+1} = \cos(p\,\omega_i), \qquad \omega_i = \frac{1}{10000^{2i/d}}, \quad i = 0, \dots, \tfrac{d}{2}-1.$$

# %% tags=["save"]
import torch


def frequencies(d, base=10000.0):
    """Angular frequencies ω_i = base^(-2i/d) of the d/2 pairs, float64 (d/2,)."""
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def sinusoidal_encoding(T, d, base=10000.0, dtype=torch.float32):
    """(T, d) table: PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i)."""
    angles = torch.arange(T, dtype=torch.float64)[:, None] * frequencies(d, base)   # (T, d/2)
    pe = torch.stack((angles.sin(), angles.cos()), dim=-1)                         # (T, d/2, 2)
    return pe.flatten(-2).to(dtype)                                                 # (T, d): sin, cos, sin, ...


# %% [markdown] slideshow={"slide_type": "subslide"}
# 식을 반복문으로 그대로 옮긴 것과 같은지 확인합니다.

# %%
T, d = 10, 16
loop = torch.zeros(T, d, dtype=torch.float64)
for p in range(T):
    for i in range(d // 2):
        angle = p / 10000 ** (2 * i / d)
        loop[p, 2 * i] = math.sin(angle)
        loop[p, 2 * i + 1] = math.cos(angle)

pe_small = sinusoidal_encoding(T, d, dtype=torch.float64)   # (T, d)
torch.testing.assert_close(pe_small, loop)
print("PE(0)[:6] =", pe_small[0, :6])
print("PE(1)[:6] =", pe_small[1, :6])
torch.testing.assert_close(pe_small.norm(dim=-1), torch.full((T,), math.sqrt(d / 2), dtype=torch.float64))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 모든 $\mathrm{PE}(p)$의 크기(노름)는 $\sqrt{d/2}$로 같습니다(쌍마다 $\sin^2 + \cos^2 = 1$). 위치는 크기가 아니라 **방향**에 담깁니다.
#
# 이 노트북은 논문처럼 사인과 코사인을 번갈아(차원 $2i$, $2i+1$) 놓습니다. tensor2tensor와 fairseq에서 온 구현은 사인 절반과 코사인 절반을 이어 붙이고($[\sin \dots, \cos \dots]$), 각진동수도 $10000^{-i/(d/2-1)}$로 조금 다르게 잡습니다(차원 순서만 바꿔서는 같아지지 않습니다. 아래 셀). Marian처럼 논문의 각진동수를 그대로 쓰고 절반씩 이어 붙이는 구현은 6절의 RoPE처럼 차원 순서만 다릅니다.
#
# 쌍 $i$의 파장(wavelength)은 $2\pi / \omega_i = 2\pi \cdot 10000^{2i/d}$입니다. 첫 쌍은 약 6.3 위치마다 한 바퀴 돌고, 마지막 쌍은 수만 위치에 걸쳐 한 바퀴를 돕니다. 시계의 초침, 분침, 시침처럼 빠른 쌍은 가까운 위치를, 느린 쌍은 먼 위치를 구별합니다.

# %%
T, d = 50, 64
pe = sinusoidal_encoding(T, d)                  # (50, 64)
wavelength = 2 * math.pi / frequencies(d)       # (32,)
print(f"파장: 쌍 0 = {wavelength[0]:.2f}, 쌍 1 = {wavelength[1]:.2f}, 쌍 31 = {wavelength[-1]:,.0f} 위치")
assert torch.all(wavelength[1:] > wavelength[:-1])
assert abs(wavelength[0] - 2 * math.pi) < 1e-9 and 1e4 < wavelength[-1] < 1e5   # ~6.3 and "수만" in the prose
t2t = 10000.0 ** (-torch.arange(d // 2, dtype=torch.float64) / (d // 2 - 1))    # tensor2tensor / fairseq ω_i
print(f"쌍 16의 각진동수: 논문 {frequencies(d)[16]:.2e}, tensor2tensor·fairseq {t2t[16]:.2e}")
assert not torch.allclose(t2t.sort().values, frequencies(d).sort().values)       # other frequencies, not a reordering

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4), width_ratios=(1.1, 1.0))
image = ax1.imshow(pe, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
ax1.set(xlabel="차원", ylabel="위치 p", title="사인·코사인 위치 인코딩 (T=50, d=64)")
fig.colorbar(image, ax=ax1, fraction=0.046, pad=0.04)
for dim in [0, 2, 10, 30]:
    ax2.plot(range(T), pe[:, dim], label=f"차원 {dim} (파장 {wavelength[dim // 2]:.0f})")
ax2.set(xlabel="위치 p", ylabel="값", title="차원이 클수록 느리게 돈다")
ax2.legend(loc="lower left", fontsize=7)
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 상대 위치는 회전이다
#
# 왜 하필 사인과 코사인일까요? 덧셈 정리 때문입니다. 한 쌍을 $(\sin\theta, \cos\theta)$로 두고 $\theta = p\,\omega_i$, $\varphi = k\,\omega_i$라 하면
#
# $$\begin{pmatrix}\sin(\theta+\varphi)\\ \cos(\theta+\varphi)\end{pmatrix} = \begin{pmatrix}\cos\varphi & \sin\varphi\\ -\sin\varphi & \cos\varphi\end{pmatrix}\begin{pmatrix}\sin\theta\\ \cos\theta\end{pmatrix}.$$
#
# 오른쪽 행렬에는 $p$가 없습니다. 이 $2\times2$ 블록 $d/2$개를 대각선에 늘어놓은 $R(k)$는 **모든** 위치 $p$에서 $\mathrm{PE}(p+k) = R(k)\,\mathrm{PE}(p)$를 만족합니다. "$k$칸 뒤"라는 상대 위치가 하나의 선형 변환이므로, 학습되는 투영이 그것을 쉽게 표현할 수 있습니다.

# %% tags=["save"]
def offset_rotation(k, d, base=10000.0):
    """Block-diagonal (d, d) R(k) with R(k) @ PE(p) = PE(p + k) for every p, float64."""
    phi = k * frequencies(d, base)                                  # (d/2,): angle of each pair
    blocks = [torch.tensor([[c, s], [-s, c]]) for c, s in zip(phi.cos().tolist(), phi.sin().tolist())]
    return torch.block_diag(*blocks).to(torch.float64)              # (d, d)


def relative_similarity(offsets, d, base=10000.0):
    """PE(p)·PE(p + k) = Σ_i cos(k·ω_i) for each offset k (no p in it), float64."""
    k = torch.as_tensor(offsets, dtype=torch.float64)
    return torch.cos(k[..., None] * frequencies(d, base)).sum(-1)


# %% slideshow={"slide_type": "subslide"}
pe64 = sinusoidal_encoding(60, 64, dtype=torch.float64)    # (60, 64)
for k in [1, 3, 10, 25]:
    R = offset_rotation(k, 64)                               # (64, 64), built without any p
    # Rows of pe64 are PE(p)ᵀ, so R @ PE(p) for every p at once is pe64 @ R.T.
    torch.testing.assert_close(pe64[: 60 - k] @ R.T, pe64[k:])
R3, R7 = offset_rotation(3, 64), offset_rotation(7, 64)
torch.testing.assert_close(R3 @ R7, offset_rotation(10, 64))          # 3 steps then 7 steps = 10 steps
torch.testing.assert_close(R3 @ R3.T, torch.eye(64, dtype=torch.float64))   # a rotation: orthogonal
print("R(3)의 왼쪽 위 4×4 블록:\n", R3[:4, :4])

# %% [markdown]
# ### 내적은 거리만 본다
#
# 회전은 내적(dot product)을 바꾸지 않으므로 $\mathrm{PE}(p)\cdot\mathrm{PE}(p+k) = \sum_i \cos(k\,\omega_i)$입니다. 이 값에도 $p$가 없습니다. 위치 인코딩끼리의 내적 행렬은 대각선을 따라 값이 같은 모양(토플리츠 행렬, Toeplitz matrix)이 됩니다. 그런데 $\cos$는 짝함수이므로 $k$와 $-k$의 내적이 같습니다. **내적만으로는 앞인지 뒤인지 알 수 없습니다.** 그러면 모델은 앞뒤를 어떻게 구별할까요? 토론 질문 2에서 다룹니다.

# %%
G = pe64 @ pe64.T                                # (60, 60): PE(p)·PE(q)
for k in range(30):
    diag = torch.diagonal(G, offset=k)           # PE(p)·PE(p+k) for every p
    torch.testing.assert_close(diag, relative_similarity(k, 64).expand_as(diag))
    torch.testing.assert_close(torch.diagonal(G, offset=-k), diag)   # +k and -k look the same
profile = relative_similarity(torch.arange(41), 64)                   # (41,)
assert profile[0] == 32 and (profile[1:] < 32).all()
assert (profile[1:6] < profile[:5]).all() and profile[6] > profile[5]   # falls for 5 steps, then rises
print("k = 0..8의 내적:", profile[:9].numpy().round(2))

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4), width_ratios=(1.0, 1.2))
image = ax1.imshow(G, cmap="viridis", aspect="auto")
ax1.set(xlabel="위치 q", ylabel="위치 p", title="PE(p)·PE(q): 대각선마다 같은 값")
fig.colorbar(image, ax=ax1, fraction=0.046, pad=0.04)
ax2.plot(range(41), profile, marker=".")
ax2.set(xlabel="거리 k = |q − p|", ylabel="내적", title="멀어지면 대체로 작아지지만 단조롭지는 않다")
fig.tight_layout()
plt.show()

# %% [markdown]
# 내적은 $k = 0$에서 가장 크고($d/2 = 32$) 처음 다섯 칸 동안은 줄어들지만, 그 뒤로는 물결치며 오르내립니다. 위치 인코딩은 "거리"를 재는 자가 아니라, 모델이 투영을 거쳐 읽어 내는 **재료**입니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: $R(k)$ 슬라이드에서는 시계 비유가 잘 통합니다. "5분 뒤"는 지금이 몇 시든 분침을 30° 돌리는 같은 조작입니다. 사인·코사인 위치 인코딩은 속도가 다른 시곗바늘 32개이고, $R(k)$는 모든 바늘을 각자의 속도로 $k$만큼 돌리는 조작입니다.

# %% [markdown]
# ## 3. 슬라이더: 오프셋 k
#
# 오프셋 $k$를 움직여 보세요. 왼쪽 그림의 점들은 서로 다른 시작 위치 $p = 0, 7, 20$에서 구한 $\mathrm{PE}(p)\cdot\mathrm{PE}(p+k)$인데, 언제나 한 점에 겹칩니다. 오른쪽 그림은 세 각진동수 쌍이 $p$에서 $p+k$로 가며 도는 각도입니다. 쌍 0은 $k$ 라디안(1칸에 약 57°)씩, 느린 쌍은 훨씬 조금씩 돕니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def offset_panel(axes, d=64, max_offset=40, p_values=(0, 7, 20), pairs=None):
    """Draw PE(p)·PE(p+k) (left) and three pairs turning by k·ω_i (right) once; returns update(k)."""
    left, right = axes
    pairs = pairs or (0, max(1, d // 20), max(2, d // 8))           # fast, middle, slow: (0, 3, 8) for d = 64
    grid = torch.arange(-max_offset, max_offset + 1)
    left.plot(grid.numpy(), relative_similarity(grid, d).numpy(), color="tab:gray", lw=1.5)
    vline = left.axvline(0, color="tab:red", ls="--", lw=1)
    # Shrinking markers, so points that coincide (they should) stay visible as rings. (Markers of a line, not
    # scatter: scatter measures its marker's outline on every draw, which took a quarter of a redraw here.)
    dots = [left.plot([0], [0], "o", ms=(140 / (n + 1)) ** 0.5, mew=1.5, zorder=3 + n, label=f"p = {p}")[0]
            for n, p in enumerate(p_values)]
    left.set_xlabel("오프셋 k")
    left.set_ylabel("PE(p)·PE(p+k)")
    left.set_ylim(-0.3 * d / 2, 1.08 * d / 2)
    left.legend(loc="lower left", fontsize=7)
    pe = sinusoidal_encoding(max(p_values) + max_offset + 1, d, dtype=torch.float64)
    omega, p0 = frequencies(d), p_values[0]
    theta = torch.linspace(0, 2 * torch.pi, 200)
    hands = []
    for radius, i, color in zip((1.0, 0.72, 0.44), pairs, ("tab:blue", "tab:orange", "tab:green")):
        right.plot((radius * theta.cos()).numpy(), (radius * theta.sin()).numpy(), color=color, lw=0.6, alpha=0.5)
        # (cos, sin) on the axes so that a growing angle turns counter-clockwise.
        right.plot([radius * float(pe[p0, 2 * i + 1])], [radius * float(pe[p0, 2 * i])], "o", color=color, ms=20**0.5,
                   mew=1.5, zorder=3)
        hands.append((right.plot([0, 0], [0, 0], color=color, lw=2, label=f"쌍 {i}")[0], radius, i))
    legend = right.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)   # outside: no hand hidden
    for text in legend.get_texts():   # the widest label update() writes, so a layout made now leaves room for it
        text.set_text(text.get_text() + ": 359°")
    right.set_xlim(-1.15, 1.15)
    right.set_ylim(-1.15, 1.15)
    right.set_aspect("equal")
    right.set_xlabel("cos 성분")
    right.set_ylabel("sin 성분")
    right.set_title(f"p = {p0} → p + k: 쌍마다 k·ω_i만큼 회전", fontsize=10)

    def update(k):
        vline.set_xdata([k, k])
        values = [float(pe[p] @ pe[p + k]) for p in p_values]        # the same number for every p
        for dot, value in zip(dots, values):
            dot.set_data([k], [value])
        left.set_title(f"k = {k}: 모든 p에서 내적 {values[0]:.2f}", fontsize=10)
        angles = (k * omega[list(pairs)]).rad2deg().tolist()
        for (hand, radius, i), text, angle in zip(hands, legend.get_texts(), angles):
            hand.set_data([0, radius * float(pe[p0 + k, 2 * i + 1])], [0, radius * float(pe[p0 + k, 2 * i])])
            text.set_text(f"쌍 {i}: {angle % 360:.0f}°")
        return {"dots": values, "angles": angles}

    return update


def offset_explorer(d=64, max_offset=40):
    """An offset slider k over offset_panel (the figure is built once and changed in place)."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from helpers.widgets import Explorer

    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8), width_ratios=(1.5, 1.0), dpi=80)
    update = offset_panel(axes, d, max_offset)
    fig.tight_layout()
    slider = widgets.IntSlider(value=1, min=0, max=max_offset, step=1, description="오프셋 k")
    return Explorer(fig, update, {"k": slider})


# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
offset_explorer(d=64, max_offset=40)

# %% [markdown]
# 정적 버전(슬라이드·PDF용): 같은 함수로 $k = 0, 1$과 $k = 5, 20$을 그립니다.

# %% slideshow={"slide_type": "subslide"}
drawn = {}


def static_offsets(ks):
    fig, axes = plt.subplots(2, 2, figsize=(9.5, 4.6), width_ratios=(1.5, 1.0))
    for k, row in zip(ks, axes):
        drawn[k] = offset_panel(row, 64, 40)(k)     # the explorer's own drawing code
    fig.tight_layout()
    plt.show()


# %% slideshow={"slide_type": "subslide"}
static_offsets([0, 1])

# %% slideshow={"slide_type": "subslide"}
static_offsets([5, 20])
for k, result in drawn.items():
    assert max(abs(v - relative_similarity(k, 64).item()) for v in result["dots"]) < 1e-9   # same for every p
    assert abs(result["angles"][0] - math.degrees(k)) < 1e-9                               # pair 0 turns k radians

# %% [markdown]
# ## 4. 학습되는 위치 임베딩
#
# 다른 방법은 위치도 단어처럼 다루는 것입니다. 위치 $0, 1, \dots, L-1$마다 벡터 하나를 두는 `nn.Embedding(L, d)` 표를 만들고, 다른 파라미터와 함께 학습합니다(BERT, GPT-2). 식이 필요 없고 데이터에 맞는 모양을 스스로 찾습니다. Vaswani 등 2017은 학습되는 위치 임베딩과 사인·코사인 인코딩이 거의 같은 결과를 냈다고 보고했습니다(표 3의 (E) 행). 그래도 두 가지 비용이 있습니다. 파라미터가 $L \times d$개 늘어나고, **표에 없는 위치는 아예 표현할 수 없습니다.**

# %% tags=["save"]
import torch.nn as nn


class LearnedPositionalEncoding(nn.Module):
    """Adds a learned vector per position (an nn.Embedding of max_len rows) to (B, T, d) inputs."""

    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Embedding(max_len, d_model)                 # max_len × d parameters

    def forward(self, x):                                           # x: (B, T, d)
        T = x.shape[1]
        if T > self.max_len:                                        # say what went wrong, unlike IndexError
            raise ValueError(f"T={T}: this table has learned positions 0..{self.max_len - 1} only")
        return x + self.table(torch.arange(T))                      # (B, T, d)


# %% slideshow={"slide_type": "subslide"}
seed_everything(12)
table = nn.Embedding(10, 16)                      # positions 0..9
print("파라미터 수:", sum(p.numel() for p in table.parameters()))
for name, (L, dim) in {"BERT-base": (512, 768), "GPT-2 small": (1024, 768)}.items():
    print(f"{name}: {L} × {dim} = {L * dim:,}개")
assert sum(p.numel() for p in table.parameters()) == 10 * 16

try:
    table(torch.arange(12))                       # a 12-token sentence
except IndexError as err:
    print("nn.Embedding:", type(err).__name__, "-", err)
try:
    LearnedPositionalEncoding(10, 16)(torch.zeros(1, 12, 16))
except ValueError as err:
    print("LearnedPositionalEncoding:", err)

# %% [markdown] slideshow={"slide_type": "subslide"}
# PyTorch의 오류 메시지("index out of range in self")는 무엇이 문제인지 말해 주지 않습니다. 위의 `LearnedPositionalEncoding`은 몇 번째 위치까지 배웠는지 알려 줍니다. 반면 사인·코사인 표는 식이므로 원하는 만큼 늘일 수 있고, 길게 만든 표의 앞부분은 짧은 표와 같습니다.

# %%
long = sinusoidal_encoding(5000, 64)              # (5000, 64): no parameters, any length
torch.testing.assert_close(long[:60], sinusoidal_encoding(60, 64))
print("위치 4999의 처음 4개 차원:", long[4999, :4])

# %% [markdown]
# 표를 늘일 수 있다는 것과 모델이 그 위치에서 잘 작동한다는 것은 다른 이야기입니다. 학습 때 본 적 없는 느린 쌍의 각도 조합이 나오기 때문입니다. 긴 문맥을 다루는 최근 모델들이 RoPE(6절)의 위치나 각진동수를 고치는 이유가 여기에 있습니다. **위치 보간**(position interpolation; [Chen 등 2023](../SOURCES.md))은 위치 $p$를 $p \cdot L/L'$로 줄여(학습 길이 $L$, 새 길이 $L'$) 모든 각도를 학습 때 본 범위 안에 넣습니다. 모든 각진동수를 같은 비율로 낮추는 것과 같습니다. **NTK 방식**([bloc97 2023](../SOURCES.md)의 온라인 글; Peng 등 2023이 정리하고 비교)은 밑 10000을 키워 느린 쌍의 각진동수를 더 많이 낮추고, **YaRN**([Peng 등 2023](../SOURCES.md))은 쌍마다 보간 정도를 달리하고 점수의 온도도 조정합니다. 위치 보간과 YaRN 논문의 주요 결과는 긴 문서로 짧게 더 학습(미세 조정)한 뒤의 것입니다(YaRN 논문은 추론 때 배율만 바꾸는 Dynamic-YaRN으로 미세 조정 없이 문맥을 두 배 남짓 늘린 결과도 함께 보고합니다).

# %% [markdown]
# ## 5. 위치를 더하면 어텐션 맵이 달라진다
#
# 1절의 두 문장에 사인·코사인 위치 인코딩을 더하고($X + \mathrm{PE}$), 같은 어텐션 층에 넣어 봅니다. 이제 같은 토큰이라도 자리에 따라 다른 벡터가 되므로 순열 등변성이 깨집니다.
#
# 이 작은 입력(임베딩 성분의 표준편차 약 1)에 기본 초기화의 무작위 층을 쓰면 가중치가 거의 균등해서 차이가 눈에 잘 띄지 않습니다(초기 맵이 얼마나 균등한지는 입력의 크기와 초기화에 달려 있습니다. 12번 5절). 그래서 쿼리·키 투영을 조금 크게 초기화해, 학습된 층처럼 가중치가 뚜렷한 헤드(head) 하나짜리 층을 씁니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(16)
layer = MultiHeadAttention(16, num_heads=1).eval()
with torch.no_grad():
    for weight in (layer.q_proj.weight, layer.k_proj.weight):
        nn.init.normal_(weight, std=0.25)        # sharper scores than the default init
    out_a0, w_a0 = layer(xa)                     # without positions
    out_b0, w_b0 = layer(xb)
    pe5 = sinusoidal_encoding(5, 16)             # (5, 16)
    out_a_pe, w_a_pe = layer(xa + pe5)           # with positions
    out_b_pe, w_b_pe = layer(xb + pe5)

torch.testing.assert_close(out_b0, out_a0[:, swap])                 # still just a reordering
map_gap = (w_b_pe - w_a_pe[:, :, swap][:, :, :, swap]).abs().max().item()
verb_gap = ((out_a_pe[0, 4] - out_b_pe[0, 4]).norm() / out_a_pe[0, 4].norm()).item()
print(f"가중치 행렬: 순서를 맞춰 비교한 최대 차이 {map_gap:.2f}")
print(f"'쫓았다' 출력: 위치 없음 차이 {(out_a0[0, 4] - out_b0[0, 4]).norm().item():.4f}, 위치 있음 상대 차이 {verb_gap:.1%}")
assert map_gap > 0.1 and verb_gap > 0.01
assert not torch.allclose(out_b_pe, out_a_pe[:, swap], atol=1e-3)  # no longer just a reordering

# %% slideshow={"slide_type": "subslide"}
def compare_maps(words, w_plain, w_pos):
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.7))
    title = " ".join(words)
    attention_heatmap(w_plain[0, 0], words, words, ax=axes[0], vmax=1.0, title=f"위치 없음: {title}")
    attention_heatmap(w_pos[0, 0], words, words, ax=axes[1], vmax=1.0, title=f"+ 위치 인코딩: {title}")
    fig.tight_layout()
    plt.show()


compare_maps(sent_a, w_a0, w_a_pe)

# %% slideshow={"slide_type": "subslide"}
compare_maps(sent_b, w_b0, w_b_pe)

# %% [markdown]
# 두 그림의 왼쪽(위치 없음)끼리는 행과 열의 순서를 맞추면 서로 겹칩니다. 오른쪽(위치 인코딩)끼리는 그렇지 않습니다. 예를 들어 "쫓았다" 행에서 "고양이"가 받는 가중치가 문장 첫머리에 있을 때와 셋째 자리에 있을 때 다릅니다.

# %% slideshow={"slide_type": "subslide"}
ia, ib = sent_a.index("고양이"), sent_b.index("고양이")
print(f"'쫓았다' → '고양이' 가중치: 위치 없음 {w_a0[0, 0, 4, ia]:.3f} / {w_b0[0, 0, 4, ib]:.3f}, "
      f"위치 있음 {w_a_pe[0, 0, 4, ia]:.3f} / {w_b_pe[0, 0, 4, ib]:.3f}")
assert torch.isclose(w_a0[0, 0, 4, ia], w_b0[0, 0, 4, ib])
assert (w_a_pe[0, 0, 4, ia] - w_b_pe[0, 0, 4, ib]).abs() > 0.02

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 이 층은 학습되지 않은 무작위 층이라 오른쪽 그림의 패턴 자체에는 뜻이 없습니다. 보여 줄 것은 하나입니다: 위치를 더한 뒤에는 두 문장이 더 이상 "같은 그림을 섞은 것"이 아니므로, 학습이 둘을 구별할 **수 있게** 되었다는 점입니다.

# %% [markdown]
# ## 6. 회전으로 넣는 위치: RoPE
#
# 사인·코사인 인코딩은 위치를 임베딩에 **더했고**, 상대 위치는 그 안에 회전으로 숨어 있었습니다. 회전 위치 임베딩(rotary position embedding, RoPE; [Su 등 2021](../SOURCES.md))은 회전을 직접 씁니다. 투영한 뒤의 쿼리와 키에서 차원 쌍 $(2i, 2i+1)$을 복소수 하나 $z_i = x_{2i} + \mathrm{i}\,x_{2i+1}$로 보고, 위치 $p$의 토큰이면 각도 $p\,\omega_i$만큼 돌립니다: $z_i \mapsto z_i\,e^{\mathrm{i} p \omega_i}$. 밸류(value)는 돌리지 않습니다.
#
# 위치 $p$의 쿼리와 위치 $r$의 키의 점수는 쌍마다
#
# $$\mathrm{Re}\!\left[q_i e^{\mathrm{i}p\omega_i}\,\overline{k_i e^{\mathrm{i}r\omega_i}}\right] = \mathrm{Re}\!\left[q_i\,\overline{k_i}\,e^{\mathrm{i}(p-r)\omega_i}\right]$$
#
# 이므로 절대 위치 $p$, $r$은 사라지고 **차이 $p - r$만** 남습니다. 복소수 곱을 실수로 풀면 쌍마다 $2\times2$ 회전입니다: $(x_{2i}, x_{2i+1}) \mapsto (x_{2i}\cos\theta - x_{2i+1}\sin\theta,\ x_{2i}\sin\theta + x_{2i+1}\cos\theta)$.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def apply_rope(x, positions=None, base=10000.0):
    """RoPE, adjacent pairs: rotate (x[2i], x[2i+1]) of the token at position p by p·ω_i. x: (..., T, d)."""
    T, d = x.shape[-2:]
    positions = torch.arange(T) if positions is None else torch.as_tensor(positions)
    angles = positions.to(torch.float64)[:, None] * frequencies(d, base)     # (T, d/2), float64 for large p
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]                                       # (..., T, d/2): pair (2i, 2i+1)
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (..., T, d/2, 2)
    return rotated.flatten(-2)                                                # (..., T, d)


# %% [markdown]
# 먼저 이 코드가 복소수 곱과 같은지 봅니다.

# %%
seed_everything(13)
d = 16
q, k = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
z = torch.view_as_complex(q.view(d // 2, 2).contiguous())       # (8,): pairs as complex numbers
by_complex = torch.view_as_real(z * torch.exp(1j * 5 * frequencies(d))).flatten()
torch.testing.assert_close(apply_rope(q[None], [5])[0], by_complex)
print("위치 5로 돌린 q[:4]:", apply_rope(q[None], [5])[0, :4])

# %% [markdown] slideshow={"slide_type": "subslide"}
# 같은 $q$와 $k$를 위치 0부터 11까지 놓고 모든 쌍의 점수 $S_{pr} = \tilde q_p \cdot \tilde k_r$를 계산합니다. 점수가 $p - r$에만 의존하면 대각선마다 값이 같아야 합니다.

# %%
T = 12
Q = apply_rope(q.expand(T, d), torch.arange(T))   # (T, d): the same query at positions 0..T-1
K = apply_rope(k.expand(T, d), torch.arange(T))   # (T, d)
S = Q @ K.T                                        # (T, T): S[p, r]
for offset in range(-(T - 1), T):
    diag = torch.diagonal(S, offset=offset)        # entries with r - p = offset
    torch.testing.assert_close(diag, diag[0].expand_as(diag))
far = apply_rope(torch.stack([q, k]), [1000, 1003])            # far away, same distance 3
torch.testing.assert_close(far[0] @ far[1], S[0, 3])
torch.testing.assert_close(Q.norm(dim=-1), q.norm().expand(T))  # rotation keeps the length
assert not torch.allclose(S, S.T)                               # before and after differ
print(f"p − r = −3: {S[0, 3]:.4f},  p − r = +3: {S[3, 0]:.4f}")
offsets = torch.arange(-(T - 1), T)
scores_by_offset = torch.stack([torch.diagonal(S, offset=-int(m))[0] for m in offsets])   # S as a function of p − r

# %% slideshow={"slide_type": "subslide"}
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4), width_ratios=(1.0, 1.2))
attention_heatmap(S, list(range(T)), list(range(T)), ax=ax1, cmap="RdBu_r", vmin=-abs(S).max().item(),
                  vmax=abs(S).max().item(), annotate=False, title="RoPE 점수 S[p, r]: 대각선마다 같다")
ax1.set(xlabel="키 위치 r", ylabel="쿼리 위치 p")
ax2.plot(offsets, scores_by_offset, marker="o")
ax2.axhline(q @ k, color="gray", ls="--", lw=1, label=f"회전 전 q·k = {q @ k:.2f}")
ax2.set(xlabel="상대 위치 p − r", ylabel="점수", title="점수는 p − r의 함수 (좌우 대칭이 아님)")
ax2.legend(loc="lower right", fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 사인·코사인 인코딩끼리의 내적은 $k$와 $-k$가 같았지만, RoPE의 점수는 $q \ne k$이면 "3칸 앞"과 "3칸 뒤"가 다릅니다. 위치 1000과 1003의 점수도 위치 0과 3의 점수와 같습니다.
#
# 위의 무작위 $q$, $k$에서는 거리에 따라 점수가 줄지 않았습니다. 그래도 Su 등 2021은 RoPE의 성질 가운데 하나로 **먼 거리에서의 감쇠**(long-term decay)를 듭니다. 쌍마다 같은 방향을 가리키는 $q$와 $k$(예: 모두 1)라면 점수 $\sum_i 2\cos((p-r)\,\omega_i)$가 거리가 멀수록 평균적으로 작아집니다. 각진동수가 다른 코사인들이 먼 거리에서 서로 상쇄되기 때문입니다.

# %% slideshow={"slide_type": "subslide"}
d_decay = 64
ones = torch.ones(d_decay, dtype=torch.float64)
distances = torch.arange(0, 2001)
rotated = apply_rope(ones.expand(len(distances), d_decay), distances)     # (2001, 64): k at positions 0..2000
decay = rotated @ ones                                                      # (2001,): score of q at 0 and k at r
windows = [(0, 10), (10, 100), (100, 1000), (1000, 2001)]
window_mean = [decay[a:b].abs().mean().item() for a, b in windows]
print("구간별 |점수| 평균 (구간 [0, 10), [10, 100), [100, 1000), [1000, 2000]):", [round(v) for v in window_mean])
assert decay[0] == d_decay and all(a > b for a, b in zip(window_mean, window_mean[1:]))
assert decay[1000:].abs().max() < 0.5 * d_decay

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(7.0, 2.8))
ax.plot(distances, decay, lw=0.8)
ax.set(xscale="symlog", xlabel="거리 |p − r| (로그 눈금)", ylabel="점수", title="q = k = (1, …, 1), d = 64: 멀수록 점수가 작아진다")
fig.tight_layout()
plt.show()

# %% [markdown]
# 감쇠는 어디까지나 점수의 **상한**이 거리에 따라 줄어든다는 성질이고, 학습된 $q$, $k$가 그 상한 가까이 있다는 보장은 아닙니다. 그래서 RoPE는 먼 토큰을 덜 보는 경향을 약하게 줄 뿐, ALiBi(아래)처럼 거리에 비례하는 벌점을 강제하지는 않습니다.

# %% [markdown]
# ### 두 가지 짝짓기: 인접 쌍과 rotate-half
#
# 위 코드는 **인접한** 차원 $(2i, 2i+1)$을 한 쌍으로 돌립니다. RoFormer 논문과 Meta가 공개한 LLaMA 원본 코드(복소수로 바꿔 곱하는 방식)가 이 방식입니다. 그런데 많이 읽히는 Hugging Face의 LLaMA 구현과 GPT-NeoX는 `rotate_half`를 씁니다. 앞 절반 $x_1 = x_{:d/2}$와 뒤 절반 $x_2 = x_{d/2:}$에서 **$i$번 차원과 $i + d/2$번 차원**을 한 쌍으로 돕니다.
#
# $$\mathrm{RoPE}_{\text{half}}(x) = \big[\,x_1\cos\theta - x_2\sin\theta,\ \ x_1\sin\theta + x_2\cos\theta\,\big],\qquad \theta_i = p\,\omega_i$$

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def rotate_half(x):
    """[x1, x2] -> [-x2, x1] on the two halves of the last dimension (Hugging Face / GPT-NeoX)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope_half(x, positions=None, base=10000.0):
    """RoPE, half pairs: dimension i turns with dimension i + d/2 by p·ω_i. x: (..., T, d)."""
    T, d = x.shape[-2:]
    positions = torch.arange(T) if positions is None else torch.as_tensor(positions)
    angles = positions.to(torch.float64)[:, None] * frequencies(d, base)     # (T, d/2)
    cos = torch.cat((angles.cos(), angles.cos()), dim=-1).to(x.dtype)        # (T, d): both halves
    sin = torch.cat((angles.sin(), angles.sin()), dim=-1).to(x.dtype)
    return x * cos + rotate_half(x) * sin                                     # (..., T, d)


# %% [markdown]
# 두 방식은 **차원의 순서만 다른 같은 회전**입니다. 인접 쌍 배치의 차원을 `[0, 2, 4, …, 1, 3, 5, …]` 순서로 다시 늘어놓으면 쌍 $(2i, 2i+1)$이 정확히 $(i, i + d/2)$ 자리로 갑니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(14)
d = 8
x = torch.randn(5, d, dtype=torch.float64)                      # (T, d)
perm = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))   # [0, 2, 4, 6, 1, 3, 5, 7]
print("순열:", perm.tolist())
torch.testing.assert_close(apply_rope_half(x[:, perm]), apply_rope(x)[:, perm])
q2, k2 = torch.randn(2, 5, d, dtype=torch.float64)
scores_adjacent = apply_rope(q2) @ apply_rope(k2).T
scores_half = apply_rope_half(q2[:, perm]) @ apply_rope_half(k2[:, perm]).T
torch.testing.assert_close(scores_half, scores_adjacent)         # the same attention scores
assert not torch.allclose(apply_rope_half(x), apply_rope(x))     # but not the same function of x

# %% [markdown]
# 같은 $x$에 두 함수를 적용하면 결과가 다릅니다. 하지만 쿼리와 키의 차원을 같은 순열로 바꾸면 점수가 똑같습니다. 순열은 $W_Q$, $W_K$의 행 순서를 바꾸는 것과 같으므로, 학습된 모델에게 둘은 같은 방법입니다. 실제로 Meta의 LLaMA 체크포인트를 Hugging Face 형식으로 바꾸는 스크립트는 헤드마다 $W_Q$, $W_K$의 행을 이렇게 재배열해 `rotate_half`로 같은 점수를 얻습니다. 체크포인트와 코드의 방식이 어긋나면 무슨 일이 생기는지는 토론 질문 4에서 다룹니다.

# %% [markdown]
# ### 멀티 헤드 층 안의 RoPE
#
# 실제 모델에서 RoPE는 층마다, 헤드마다 적용됩니다. 입력을 $W_Q$, $W_K$, $W_V$로 투영하고 헤드로 나눈 **뒤**, 각 헤드의 쿼리와 키(크기 $d_{\text{head}}$)를 돌립니다. 밸류는 돌리지 않고, 입력 임베딩에는 아무것도 더하지 않습니다. 모든 층이 자기 쿼리·키에 같은 회전을 다시 적용합니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
from helpers.lessons.masks import MaskedMultiHeadAttention


class RoPEMultiHeadAttention(MaskedMultiHeadAttention):
    """09's multi-head attention with RoPE on each head's queries and keys (after projection; values untouched)."""

    def attend(self, q, k, v, mask):                                # (B, h, T, d_head) each
        q, k = apply_rope(q, self.positions), apply_rope(k, self.positions)   # rotate per head: d_head dims
        return super().attend(q, k, v, mask)                        # 09's masked attention, unchanged

    def forward(self, x, positions=None, mask=None, causal=False):  # x: (B, T, d_model), positions (T,)
        self.positions = positions
        return super().forward(x, mask=mask, causal=causal)


# %% [markdown] slideshow={"slide_type": "subslide"}
# 모든 토큰을 위치 0에 두면(회전 없음) 이 층이 보통의 멀티 헤드 어텐션(09번의 `MaskedMultiHeadAttention`, 이 층의 부모 클래스)과 같은지, 그리고 모든 위치를 한꺼번에 100칸 옮겨도 출력이 같은지(상대 위치만 본다) 확인합니다. 1절의 두 문장도 다시 넣어 봅니다.

# %%
seed_everything(15)
rope_layer = RoPEMultiHeadAttention(16, num_heads=2).eval()
plain_layer = MaskedMultiHeadAttention(16, num_heads=2).eval()
plain_layer.load_state_dict(rope_layer.state_dict())            # the same four projections
x5 = embed_sentence(sent_a).detach()                            # (1, 5, 16): "고양이 가 강아지 를 쫓았다"
with torch.no_grad():
    torch.testing.assert_close(rope_layer(x5, torch.zeros(5))[0], plain_layer(x5)[0])   # no rotation = plain
    out_0, w_0 = rope_layer(x5, torch.arange(5))
    out_100, w_100 = rope_layer(x5, torch.arange(5) + 100)        # every position shifted by 100
    out_a_rope, _ = rope_layer(xa)
    out_b_rope, _ = rope_layer(xb)
torch.testing.assert_close(out_100, out_0, atol=1e-5, rtol=0)
verb_gap_rope = ((out_a_rope[0, 4] - out_b_rope[0, 4]).norm() / out_a_rope[0, 4].norm()).item()
assert verb_gap_rope > 0.01 and not torch.allclose(out_b_rope, out_a_rope[:, swap], atol=1e-3)
print(f"위치를 100칸 옮겨도 출력 차이 < 1e-5, 두 문장의 '쫓았다' 출력 상대 차이 {verb_gap_rope:.0%}")

# %% [markdown] slideshow={"slide_type": "subslide"}
# RoPE를 넣은 층은 회전이 없으면 보통의 멀티 헤드 어텐션과 같고, 전체를 옮겨도 같은 출력을 내며(상대 위치만 보므로), 어순만 다른 두 문장을 구별합니다.
#
# 점수에 위치를 넣는 방법은 이 밖에도 있습니다. **ALiBi**([Press 등 2022](../SOURCES.md))는 회전 대신 점수에 거리에 비례하는 벌점 $-m_i\,|p - r|$를 헤드마다 다른 고정 **벌점 계수**(slope) $m_i$(학습하지 않음)로 더하고, 임베딩에는 아무것도 더하지 않습니다. **T5의 상대 위치 편향**(Raffel 등 2020)은 상대 거리를 구간(bucket)으로 묶어 구간마다 학습되는 스칼라 하나를 헤드별로 점수에 더합니다. 이 편향 표는 층마다 따로 두지 않고 모든 층이 함께 씁니다. ALiBi의 벌점 계수 규칙(아래)은 헤드 수 $h$가 2의 거듭제곱일 때의 것이고, 논문은 그렇지 않은 $h$에 다른 규칙을 씁니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ALiBi의 벌점 계수는 등비수열 $m_i = 2^{-8i/h}$ ($i = 1, \dots, h$)입니다. 헤드 8개면 1/2, …, 1/256입니다. 논문은 인과 언어 모델에서 쓰므로 쿼리 $p$는 $r \le p$인 키만 보고, 벌점은 $-m_i\,(p - r)$입니다.

# %%
def alibi_bias(t, num_heads):  # -> (h, T, T) bias added to the scores, and the slopes (h,)
    slopes = 2.0 ** (-8 * torch.arange(1, num_heads + 1, dtype=torch.float64) / num_heads)   # (h,)
    pos = torch.arange(t, dtype=torch.float64)
    offset = pos[None, :] - pos[:, None]                                # (T, T): r - p, <= 0 for the past
    bias = slopes[:, None, None] * offset                               # (h, T, T): -m (p - r)
    return bias.masked_fill(offset > 0, float("-inf")), slopes          # r > p: the future is masked

bias5, slopes = alibi_bias(5, 8)
print("벌점 계수 m_i (헤드 8개):", [f"1/{round(1 / m)}" for m in slopes.tolist()])
print("헤드 1의 편향 (T = 5, 행 = 쿼리 p, 열 = 키 r):", bias5[0].tolist())
bias2000, _ = alibi_bias(2000, 8)
assert torch.equal(bias2000[:, :5, :5], bias5)                       # no table to outgrow: any length
assert torch.equal(bias2000[:, 1999, 1996], bias2000[:, 3, 0])        # only the distance p - r matters
reach = (10 / slopes).tolist()                                        # distance where the penalty is -10
print("벌점이 −10(가중치가 e^−10 ≈ 4.5e−5배)이 되는 거리:", [round(r) for r in reach])
assert [round(r) for r in reach] == [20 * 2 ** i for i in range(8)]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 편향은 거리 $p - r$만의 식이라 배울 표가 없고, 2,000 토큰에서도 같은 규칙으로 정해집니다. Press 등 2022가 "짧게 학습하고 길게 시험한다(train short, test long)"고 부른 성질입니다. 논문에서는 길이 1,024로 학습한 13억 파라미터 언어 모델이 길이 2,048의 입력에서, 2,048로 학습한 사인·코사인 모델과 같은 퍼플렉서티(perplexity)를 냈습니다. 단서가 있습니다.
#
# - 측정한 것은 언어 모델의 퍼플렉서티입니다. 다음 토큰 예측은 대부분 가까운 문맥으로 풀립니다.
# - 위 계산처럼 벌점이 가장 가파른 헤드($m = 1/2$)는 20 토큰, 가장 완만한 헤드($m = 1/256$)도 2,560 토큰 밖을 벌점 −10 아래로 누릅니다(내용 점수가 이를 넘지 않는 한). 긴 입력을 **견디는** 것이지, 먼 곳의 정보를 **쓰는** 것은 아닙니다. 멀리 떨어진 내용을 찾아야 하는 과제에서는 이 장점을 그대로 기대할 수 없습니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: RoPE는 "더하기 대신 회전"이라고 한 문장으로 요약하세요. 더하면 내용과 위치가 한 벡터에 섞이고, 회전하면 크기(노름, 내용의 세기)는 그대로 두고 방향만 위치에 따라 돌립니다. 그래서 점수에 절대 위치가 남지 않고, 위치 1000과 1003도 0과 3처럼 보입니다. 인접 쌍과 rotate-half의 차이는 청중 중 누군가 Hugging Face 코드를 읽다가 반드시 묻는 질문입니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("10-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **10-1. 위치 읽어 내기.** `PE(p)` 한 줄(차원 `d` = 16 또는 64, float64)만 보고 위치 $p$(0 ≤ p ≤ 5000의 정수)를 돌려주는 `decode_position(pe_row)`를 쓰세요. 먼저 **예측**하세요. 쌍 0의 각도 `atan2(sin, cos)`만으로 충분할까요? 어느 쌍을 써야 5000까지 한 번에 구별되나요? (힌트: 2절의 파장)

# %%
def decode_position(pe_row):
    raise NotImplementedError

check("10-1", decode_position)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "subslide"}
def decode_position(pe_row):
    d = pe_row.shape[-1]
    omega = 10000 ** (-(d - 2) / d)                          # the slowest pair: wavelength > 5000
    angle = math.atan2(pe_row[-2].item(), pe_row[-1].item())  # (sin, cos) -> angle in (-π, π]
    return round(angle / omega)

for d in (16, 64):                                           # atan2 reads half a turn: (-π, π]
    for name, i in (("가장 느린 쌍", d // 2 - 1), ("두 번째로 느린 쌍", d // 2 - 2)):
        wavelength = 2 * math.pi / frequencies(d)[i].item()
        print(f"d = {d}, {name}: 파장 {wavelength:,.0f}, 반 바퀴 {wavelength / 2:,.0f}")

check("10-1", decode_position)

# %% [markdown] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
# 풀이 노트: 쌍 0은 약 6.3 위치마다 한 바퀴 돌아 $p$와 $p + 2\pi$를 구별하지 못합니다(시계의 초침). 가장 느린 쌍(시침)은 $d = 64$에서 파장이 약 47,000, $d = 16$에서 약 19,900이라 5000까지 한 바퀴도 돌지 않습니다. 다만 `atan2`는 $(-\pi, \pi]$의 각도를 돌려주므로, 각도를 그대로 $\omega$로 나누면 읽을 수 있는 것은 **반 바퀴**(파장의 절반)까지이고 그 뒤로는 음수가 나옵니다. 가장 느린 쌍은 반 바퀴도 9,900 이상이라 충분합니다. $d = 16$의 두 번째로 느린 쌍은 파장 6,283으로 5000보다 길지만 반 바퀴는 3,142라서, 각도에 `% (2π)`를 해야 5000까지 읽힙니다. 실제 모델은 모든 쌍을 함께 읽어 가까운 위치는 빠른 쌍으로, 먼 위치는 느린 쌍으로 구별합니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **10-2. 왼쪽 패딩이 있는 배치의 RoPE.** 문장마다 위치가 다른 배치에 RoPE를 적용하는 `my_rope(x, positions)`를 쓰세요. `x`는 `(B, h, T, d)`, `positions`는 `(B, T)`입니다(왼쪽 패딩이면 첫 문장의 실제 토큰이 위치 0부터 시작합니다). 인접 쌍 $(2i, 2i+1)$ 방식으로, 위치 $p$의 쌍을 각도 $p\,\omega_i$만큼 **반시계 방향**으로 돌립니다. 위의 `apply_rope`는 `positions`가 `(T,)`일 때만 맞습니다. 어느 축을 맞춰야 할지 먼저 모양을 적어 보세요.

# %%
def my_rope(x, positions):
    raise NotImplementedError

check("10-2", my_rope)

# %% jupyter={"source_hidden": true}
def my_rope(x, positions):
    d = x.shape[-1]
    omega = 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)        # (d/2,)
    angle = positions.to(torch.float64)[:, None, :, None] * omega             # (B, 1, T, d/2): one per head
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]                                        # (B, h, T, d/2)
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

check("10-2", my_rope)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. "고양이가 강아지를 쫓았다"와 "강아지를 고양이가 쫓았다"는 뜻이 같습니다. 한국어처럼 조사가 역할을 표시하는 언어에서, 토큰을 어절 단위로 자를 때와 조사를 떼어 낼 때 위치 정보의 중요성은 어떻게 달라질까요?
# 2. 사인·코사인 인코딩끼리의 내적은 $k$와 $-k$에서 같았습니다. 그렇다면 모델은 어떻게 "앞 단어"와 "뒤 단어"를 구별할 수 있을까요? $W_Q W_K^\top$가 할 수 있는 일을 생각해 보세요.
# 3. 학습 길이가 512인 모델에 2,000 토큰을 넣어야 합니다. 학습 임베딩, 사인·코사인, RoPE, ALiBi 각각에서 무엇이 문제가 되고, 어떤 우회로가 있을까요?
# 4. 인접 쌍 RoPE로 학습된 체크포인트를 rotate-half 코드로 불러오면 무슨 일이 생길까요? 오류가 날까요, 조용히 틀릴까요? 어떻게 알아챌 수 있을까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 한국어 스터디에서만 할 수 있는 좋은 질문입니다. 청중에게 "순서를 모르는 모델에게 한국어가 영어보다 쉬울까?"라고 바꿔 물어보세요. 2번의 답은 $R(k)$와 $R(-k)$가 다른 행렬이라는 것(방향은 $R(k) \ne R(-k)$에 담겨 있고, 학습되는 $W_Q$, $W_K$가 그것을 끌어내야 합니다), 그리고 투영이 사인과 코사인 성분을 서로 다른 무게로 섞을 수 있다는 것입니다. 4번은 조용히 틀립니다. 모양이 같기 때문에 체크포인트와 코드의 방식이 어긋나도 오류 없이 틀린 결과가 나옵니다. 알려진 문장의 다음 토큰 확률이나 퍼플렉서티로 확인합니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 위치 정보 없는 어텐션은 순열 등변, 어순만 다른 문장을 구별 못 함 | 섞은 입력의 출력 = 출력을 섞은 것; 두 문장의 "쫓았다" 출력이 같음 |
# | 소프트맥스는 점수의 순서를 유지 | 원문의 "앉았다" 가중치는 $[0.236, 0.214, 0.261, 0.289]$ |
# | 사인·코사인 PE: 크기(노름) $\sqrt{d/2}$, $\mathrm{PE}(p+k) = R(k)\,\mathrm{PE}(p)$ | 반복문 식과 일치; 모든 $p$에서 assert, $R(3)R(7) = R(10)$ |
# | $\mathrm{PE}(p)\cdot\mathrm{PE}(p+k)$는 $k$에만 의존하고 $\pm k$ 대칭 | 내적 행렬의 대각선 assert |
# | 학습 임베딩은 표 밖 위치를 표현 못 함 | 위치 10 이상에서 오류; 사인·코사인 표는 5,000까지 늘어남 |
# | 위치를 더하면 등변성이 깨짐 | 두 문장의 "쫓았다" 출력과 가중치가 달라짐 |
# | RoPE: 점수가 $p - r$에만 의존, 앞뒤는 구별 | 대각선 상수, $S \ne S^\top$, 위치 1000/1003 = 0/3 |
# | 인접 쌍 = rotate-half (차원 순열만 다름) | 순열 `[0, 2, …, 1, 3, …]`로 결과와 점수가 일치 |
# | RoPE는 층·헤드마다 투영 뒤의 q, k에만 | 위치 0에서 보통 MHA와 같음, +100 이동에도 같은 출력 |
#
# 다음 노트북(11)에서는 실제 사전 학습 모델(pretrained model)의 어텐션 맵을 들여다봅니다.
