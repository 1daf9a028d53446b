# %% [markdown]
# # 07. 멀티 헤드 어텐션
#
# 특징 차원을 $h$ 조각으로 나눠 어텐션을 $h$번 따로 계산하면, 파라미터 수와 행렬 곱 연산량은 그대로인데 쿼리마다 서로 다른 곳을 동시에 볼 수 있습니다.
#
# **학습 목표**
# - $(B, T, C) \to (B, h, T, d) \to (B, T, C)$ 모양 바꾸기를 단계별로 따라가고, `MultiHeadAttention(nn.Module)`을 직접 써서 같은 가중치를 넣은 `torch.nn.MultiheadAttention`과 같음을 확인한다.
# - 흔한 실수 네 가지(√C로 나누기, 전치 없이 나누기·합치기, 헤드 순서)가 모양은 맞고 값은 틀린다는 것을 수치로 확인한다.
# - 헤드 $h$개와 헤드 1개의 파라미터 수와 연산량을 식으로 세고 측정해, 같은 부분(행렬 곱)과 다른 부분(소프트맥스 횟수, $h \cdot N^2$ 메모리)을 구분한다.
# - MQA/GQA와 KV 캐시가 무엇을 줄이는지 파라미터 수와 메모리로 계산한다.
# - 작은 모델을 학습시켜 헤드마다 다른 패턴(이전 토큰, 첫 토큰)을 배우는 것을 어텐션 맵으로 본다.
#
# **선수 지식**: 03번(쿼리·키·밸류와 투영), 04번($\sqrt{d_k}$로 나누는 이유). 06번의 드롭아웃은 몰라도 됩니다.
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분
#
# 출처 목록: [원문 000–004와 인용한 논문](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작 질문은 "어텐션 한 번으로 '앉았다'가 주어와 장소를 동시에 가져올 수 있을까?"입니다. 1절의 숫자 예가 답(한 번의 가중 평균은 섞어 버린다)을 보여 주고, 8절의 학습된 모델이 헤드 두 개가 실제로 일을 나누는 모습을 보여 줍니다. 시간이 부족하면 3절의 모듈, 5절의 실수 표, 7절의 KV 캐시만 짚으세요.

# %% slideshow={"slide_type": "skip"}
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from helpers import seed_everything, setup
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check
from helpers.lessons.query_key_value import scaled_dot_product_attention
from helpers.widgets import Explorer

setup()

# %% [markdown]
# ## 1. 왜 헤드가 여럿인가
#
# "고양이가 매트 위에 앉았다"에서 "앉았다"라는 토큰(token)은 **누가**(고양이가)와 **어디에**(매트 위에)를 둘 다 알고 싶습니다. 어텐션 한 번은 쿼리(query)마다 밸류(value)의 가중 평균 **하나**를 돌려줍니다. 가중치(weight)를 두 토큰에 반씩 나눠 주면 두 밸류가 한 벡터로 섞여, "주어가 $a$, 장소가 $b$"와 "주어가 $b$, 장소가 $a$"를 구별할 수 없습니다. 헤드(head)를 두 개 두고 각 헤드가 한 토큰만 본 뒤 이어 붙이면 구별됩니다.

# %%
a = torch.tensor([1.0, 0.0, 2.0])  # value of the subject token
b = torch.tensor([0.0, 3.0, 1.0])  # value of the place token
print("헤드 1개:", 0.5 * a + 0.5 * b, 0.5 * b + 0.5 * a)
print("헤드 2개:", torch.cat([a, b]), torch.cat([b, a]))
assert torch.equal(0.5 * a + 0.5 * b, 0.5 * b + 0.5 * a) and not torch.equal(torch.cat([a, b]), torch.cat([b, a]))

# %% [markdown]
# 멀티 헤드 어텐션(multi-head attention)은 이 생각을 그대로 구현합니다([Vaswani 등 2017](../SOURCES.md), 3.2.2절; 헤드 8개, $d = 64$). 단, 헤드를 늘려도 계산량이 늘지 않도록 **특징 차원을 나눠서** 씁니다. 특징 $C$개를 헤드 $h$개가 $d = C/h$개씩 나눠 가집니다.

# %% [markdown]
# ## 2. 수식
#
# 입력 $X \in \mathbb{R}^{T \times C}$에서 헤드 $i$는 자기 투영(projection) $W_i^Q, W_i^K, W_i^V \in \mathbb{R}^{C \times d}$로 쿼리·키(key)·밸류를 만들고 스케일드 닷프로덕트 어텐션(scaled dot-product attention)을 따로 계산합니다.
#
# $$\text{head}_i = \mathrm{softmax}\!\left(\frac{(X W_i^Q)(X W_i^K)^\top}{\sqrt{d}}\right) X W_i^V, \qquad \mathrm{MultiHead}(X) = \big[\text{head}_1 \,\|\, \cdots \,\|\, \text{head}_h\big]\, W^O$$
#
# - $W_1^Q, \dots, W_h^Q$를 옆으로 붙이면 $C \times C$ 행렬 하나입니다. 그래서 구현은 $C \to C$ 선형층 **하나**로 $Q$를 만든 뒤 열을 $d$개씩 잘라 헤드에 나눠 줍니다.
# - 점수(score)를 나누는 수는 헤드 하나의 키 차원 $\sqrt{d}$입니다. $\sqrt{C}$가 아닙니다. 내적이 $d$개 항의 합이기 때문입니다(04번).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 칠판에 $C \times C$ 행렬을 그리고 세로줄로 $h$칸을 나눠 "칸 하나가 $W_i^Q$"라고 보여 주세요. 이 그림 하나로 "MHA의 파라미터 수는 $h$와 무관하다"(6절)와 "열을 $d$개씩 자르면 된다"(3절)가 함께 설명됩니다.

# %% [markdown]
# ## 3. 모양 바꾸기: $(B, T, C) \to (B, h, T, d) \to (B, T, C)$
#
# $B=2$, $T=3$, $C=8$, $h=2$($d=4$)로 따라갑니다. 값이 어디로 가는지 보이도록 `x[b, t, c] = 100·t + c`로 채웁니다. 백의 자리가 토큰 번호, 나머지가 특징 번호입니다.

# %%
B, T, C, H = 2, 3, 8, 2
D = C // H
x = (100 * torch.arange(T).view(1, T, 1) + torch.arange(C).view(1, 1, C)).expand(B, T, C).float()  # (B, T, C)
step1 = x.view(B, T, H, D)     # (B, T, h, d): cut each token's features into h pieces
step2 = step1.transpose(1, 2)  # (B, h, T, d): heads before time, so each head sees all tokens
print("x:", tuple(x.shape), "→ view:", tuple(step1.shape), "→ transpose:", tuple(step2.shape))
print("헤드 0 (토큰 0·1·2의 특징 0–3):\n", step2[0, 0].int())
print("헤드 1 (토큰 0·1·2의 특징 4–7):\n", step2[0, 1].int())
assert torch.equal(step2[:, 1, 2], x[:, 2, D:2 * D])

# %% [markdown] slideshow={"slide_type": "subslide"}
# 되돌릴 때는 거꾸로 `transpose(1, 2)`로 $(B, T, h, d)$를 만든 뒤 마지막 두 축을 합칩니다. 헤드 0, 1, …의 결과가 순서대로 이어 붙습니다: 수식의 $[\text{head}_1 \| \cdots \| \text{head}_h]$입니다.

# %%
back = step2.contiguous().transpose(1, 2)    # (B, T, h, d): attention outputs live in (B, h, T, d) order
try:
    back.view(B, T, C)
    view_failed = False
except RuntimeError:
    view_failed = True
merged = back.reshape(B, T, C)               # (B, T, C); reshape copies when view cannot
print("메모리 연속(contiguous):", back.is_contiguous(), " view 실패:", view_failed, " reshape:", tuple(merged.shape))
assert view_failed and torch.equal(merged, x)

# %% [markdown]
# 어텐션의 출력은 메모리에 $(B, h, T, d)$ 순서로 놓이므로, 전치한 뒤에는 연속이 아닙니다. 그래서 `view`는 오류를 내고 `reshape`(또는 `.contiguous().view`)를 써야 합니다. 아래 모듈의 `split_heads` / `merge_heads`가 바로 이 두 단계이고, 과정 전체에서 이 두 연산은 이것 하나씩만 있습니다(아래에서 위의 단계와 같음을 assert).

# %% [markdown]
# ### 모듈 전체: 투영 → 나누기 → 헤드별 어텐션 → 합치기 → 출력 투영 (마스크(mask)는 True = 볼 수 있음)

# %% tags=["save"]
def split_heads(x, num_heads):  # (B, T, C) -> (B, h, T, d)
    b, t, c = x.shape
    return x.view(b, t, num_heads, c // num_heads).transpose(1, 2)  # cut C into h pieces, heads before time


def merge_heads(x):  # (B, h, T, d) -> (B, T, h·d): heads 0, 1, … in order
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)                   # reshape: the transpose is not contiguous


# %% tags=["save"] slideshow={"slide_type": "subslide"}
import torch
import torch.nn as nn

from helpers.lessons.attention_dropout import dropout_attention


class MultiHeadAttention(nn.Module):  # h heads of size d = C/h; boolean mask: True = may attend

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.h, self.d, self.dropout = num_heads, d_model // num_heads, dropout
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))

    def attend(self, q, k, v, mask):                                 # (B, h, T_q, d), (B, h, T_k, d), (B, h, T_k, d)
        return dropout_attention(q, k, v, mask, self.dropout, self.training)   # 06's attention: √d, not √C

    def forward(self, query, key=None, value=None, mask=None):       # (B, T_q, C), (B, T_k, C), (B, T_k, C)
        key = query if key is None else key
        value = key if value is None else value
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]                                     # (B, 1, T_q, T_k): the same mask for every head
        q, k, v = (split_heads(proj(y), self.h)                      # (B, h, T, d)
                   for proj, y in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        heads, weights = self.attend(q, k, v, mask)                  # (B, h, T_q, d), (B, h, T_q, T_k)
        return self.out_proj(merge_heads(heads)), weights            # (B, T_q, C)


# %% [markdown] slideshow={"slide_type": "subslide"}
# 먼저 `split_heads` / `merge_heads`가 위에서 따라간 단계와 같은지, 그리고 모듈이 헤드마다 03번의 `scaled_dot_product_attention`을 따로 돌려 이어 붙이고 출력 투영을 곱한 것과 같은지 봅니다. 셀프 어텐션과, 쿼리 길이와 키 길이가 다른 크로스 어텐션(cross-attention) 모두 확인합니다.

# %%
assert torch.equal(split_heads(x, H), step2) and torch.equal(merge_heads(step2), x)
seed_everything(7)
ours = MultiHeadAttention(d_model=16, num_heads=4)
x, memory = torch.randn(2, 5, 16), torch.randn(2, 9, 16)     # (B, T_q, C), (B, T_k, C)
for name, kv in (("셀프", x), ("크로스", memory)):
    o_out, o_w = ours(x, kv)
    cols = [slice(4 * i, 4 * i + 4) for i in range(4)]       # head i owns columns 4i..4i+3 of each projection
    by_head = [scaled_dot_product_attention(ours.q_proj(x)[..., c], ours.k_proj(kv)[..., c], ours.v_proj(kv)[..., c])
               for c in cols]                                # 4 × ((B, T_q, 4), (B, T_q, T_k))
    h_out = ours.out_proj(torch.cat([o for o, _ in by_head], dim=-1))   # (B, T_q, C)
    err = max((o_out - h_out).abs().max().item(), (o_w - torch.stack([w for _, w in by_head], 1)).abs().max().item())
    assert err < 1e-5
    print(f"{name} 어텐션: 출력 {tuple(o_out.shape)}, 헤드별 가중치 {tuple(o_w.shape)}, 최대 차이 < 1e-5 (float32 반올림 수준)")

# %% [markdown]
# ## 4. `torch.nn.MultiheadAttention`과 같은가
#
# PyTorch의 모듈은 $W^Q, W^K, W^V$를 세로로 쌓은 $3C \times C$ 행렬 `in_proj_weight` 하나에 담습니다. 세 조각으로 잘라 복사하는 함수를 쓰고, 출력과 **헤드별** 가중치(`average_attn_weights=False`)를 비교합니다.
#
# 주의: `nn.Linear`의 `weight`와 `in_proj_weight`는 수식의 $W$가 아니라 $W^\top$(출력 × 입력)을 저장합니다: `F.linear(x, W, b) = x @ W.T + b`. 수식의 $XW^Q$를 `x @ W`로 옮기면 $C \times C$ 조각이라 모양 오류 없이 틀린 값이 나옵니다(아래 셀의 마지막 줄).

# %% tags=["save"]
def copy_from_torch(ours, torch_mha):
    """Copy nn.MultiheadAttention's weights into our module: in_proj_weight is [W^Q; W^K; W^V] stacked, (3C, C)."""
    projections = (ours.q_proj, ours.k_proj, ours.v_proj)
    with torch.no_grad():
        for proj, w in zip(projections, torch_mha.in_proj_weight.chunk(3)):
            proj.weight.copy_(w)
        if torch_mha.in_proj_bias is not None:                          # bias=False modules have none
            for proj, b in zip(projections, torch_mha.in_proj_bias.chunk(3)):
                proj.bias.copy_(b)
        ours.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return ours


# %% slideshow={"slide_type": "subslide"}
seed_everything(11)
torch_mha = nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True).eval()
with torch.no_grad():
    torch_mha.in_proj_bias.normal_(0, 0.5)          # non-zero biases, so a forgotten bias would show
ours = copy_from_torch(MultiHeadAttention(16, 4), torch_mha)
x, memory = torch.randn(3, 6, 16), torch.randn(3, 9, 16)
for name, kv in (("셀프", x), ("크로스", memory)):
    t_out, t_w = torch_mha(x, kv, kv, need_weights=True, average_attn_weights=False)
    o_out, o_w = ours(x, kv)
    torch.testing.assert_close(o_out, t_out)
    torch.testing.assert_close(o_w, t_w)
    print(f"{name} 어텐션: 출력과 헤드별 가중치가 float32 허용 오차 안에서 같음, 가중치 {tuple(o_w.shape)}")
w_q, b_q = torch_mha.in_proj_weight[:16], torch_mha.in_proj_bias[:16]   # (C_out, C_in): Wᵀ of the formula
torch.testing.assert_close(F.linear(x, w_q, b_q), x @ w_q.T + b_q)
assert not torch.allclose(x @ w_q + b_q, x @ w_q.T + b_q, atol=1e-3)       # same shape, other values
print("F.linear(x, W, b) = x @ W.T + b; x @ W (전치 빠뜨림)는 모양만 같고 값이 다름")

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 마스크의 뜻은 함수마다 다르다
#
# 불리언 마스크의 True가 무엇을 뜻하는지는 함수마다 다릅니다. 그래서 마스크 약속을 말할 때는 **함수 이름을 함께** 말해야 합니다.
#
# | 함수 | 불리언 `attn_mask`/`mask`의 True |
# |---|---|
# | `torch.nn.MultiheadAttention` | 볼 수 **없음** (가림) |
# | `torch.nn.functional.scaled_dot_product_attention` | 볼 수 **있음** |
# | 위의 `MultiHeadAttention` (이 과정) | 볼 수 **있음** |
#
# 인과 마스크(causal mask)로 세 가지를 모두 확인합니다.

# %% slideshow={"slide_type": "subslide"}
allowed = torch.ones(6, 6, dtype=torch.bool).tril()             # (T, T), True = may attend
t_out, t_w = torch_mha(x, x, x, attn_mask=~allowed, need_weights=True, average_attn_weights=False)  # True = hidden
o_out, o_w = ours(x, mask=allowed)                               # True = may attend
q4 = ours.q_proj(x).view(3, 6, 4, 4).transpose(1, 2)             # (B, h, T, d)
k4, v4 = (p(x).view(3, 6, 4, 4).transpose(1, 2) for p in (ours.k_proj, ours.v_proj))
sdpa = F.scaled_dot_product_attention(q4, k4, v4, attn_mask=allowed)   # True = may attend
torch.testing.assert_close(o_out, t_out)
torch.testing.assert_close(o_w, t_w)
torch.testing.assert_close(ours.out_proj(sdpa.transpose(1, 2).reshape(3, 6, 16)), o_out)
assert (o_w[..., ~allowed] == 0).all()
print("nn.MultiheadAttention(attn_mask=~allowed) = F.scaled_dot_product_attention(attn_mask=allowed) = ours(mask=allowed)")
blind = allowed.clone()
blind[2] = False                                                 # query 2 may attend no key at all
with torch.no_grad():
    t_nan = torch_mha(x, x, x, attn_mask=~blind)[0][:, 2].isnan().all().item()
    o_nan = ours(x, mask=blind)[0][:, 2].isnan().all().item()
print(f"모든 키가 가려진 쿼리의 출력이 NaN인가? nn.MultiheadAttention: {t_nan}, 우리 모듈: {o_nan}")
assert t_nan and o_nan

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 마스크 부호는 실무에서 가장 자주 나는 버그 중 하나입니다. 02·09번도 `F.scaled_dot_product_attention`의 약속(True = 볼 수 있음)을 씁니다. 모든 키가 가려진 행이 생기면 `nn.MultiheadAttention`도 위의 `MultiHeadAttention`도 NaN을 돌려줍니다(위 셀의 마지막 줄). 09번의 `MaskedMultiHeadAttention`이 그 행의 가중치와 헤드 출력을 0으로 고칩니다(모듈의 최종 출력에는 출력 투영의 편향만 남습니다; `tests/test_mha_reference.py`).

# %% [markdown]
# ## 5. 흔한 실수: 모양은 맞고 값은 틀린 네 가지
#
# 아래 실수들은 모두 **오류 없이 실행되고 모양도 맞습니다**. 같은 가중치와 입력에서 올바른 출력과의 최대 차이를 잽니다. 접힌 셀의 `mha_steps`가 모듈의 `forward`를 한 줄씩 풀어 쓰고, `mistake`로 한 줄을 바꿉니다(풀어 쓴 코드는 연습문제 07-1의 답과 거의 같으니, 문제를 푼 뒤에 펼쳐 보세요).

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def mha_steps(m, x, mistake=None):
    b, t, c = x.shape
    split = ((lambda y: y.reshape(b, m.h, t, m.d)) if mistake == "전치 없이 나누기"       # rows from the wrong tokens
             else (lambda y: y.view(b, t, m.h, m.d).transpose(1, 2)))
    q, k, v = split(m.q_proj(x)), split(m.k_proj(x)), split(m.v_proj(x))               # (B, h, T, d)
    scale = c if mistake == "√C로 나누기" else m.d
    heads = torch.softmax(q @ k.transpose(-2, -1) / scale ** 0.5, dim=-1) @ v         # (B, h, T, d)
    if mistake == "헤드 순서 뒤집기":
        heads = heads.flip(1)
    merged = (heads.reshape(b, t, c) if mistake == "전치 없이 합치기"
              else heads.transpose(1, 2).reshape(b, t, c))                              # (B, T, C)
    return m.out_proj(merged)


MISTAKES = ["√C로 나누기", "전치 없이 나누기", "전치 없이 합치기", "헤드 순서 뒤집기"]


# %% slideshow={"slide_type": "subslide"}
with torch.no_grad():
    ref_out = ours(x)[0]
    assert torch.allclose(mha_steps(ours, x), ref_out, atol=1e-6)
    rel = {m: ((mha_steps(ours, x, m) - ref_out).abs().max() / ref_out.abs().max()).item() for m in MISTAKES}
for m, r in rel.items():
    print(f"{m:<12} 최대 |차이| / 최대 |출력| = {r:.2f}")
assert min(rel.values()) > 0.1                                    # none is a rounding error

# %% [markdown] slideshow={"slide_type": "subslide"}
# 네 실수 모두 출력 크기의 10% 이상 차이가 납니다. 반올림 오차가 아니라 다른 함수를 계산한 것입니다.
#
# - **√C로 나누기**: 점수가 $\sqrt{h}$배 작아져 가중치가 평평해집니다. $h = 1$이면 $C = d$라서 드러나지 않습니다.
# - **전치 없이 나누기**: 한 헤드의 "토큰" 행이 실제로는 엉뚱한 토큰의 특징 조각입니다(아래 출처 표).
# - **전치 없이 합치기**: 한 토큰의 출력에 다른 토큰의 헤드 출력이 들어갑니다.
# - **헤드 순서 뒤집기**: 순서 자체는 임의지만 $W^O$의 열 블록이 그 순서를 따라야 합니다.

# %%
x_id = (100 * torch.arange(3).view(1, 3, 1) + torch.arange(8).view(1, 1, 8)).float()   # (1, T=3, C=8)
print("올바른 분할, 헤드별 각 행의 출처 토큰:", (split_heads(x_id, 2)[0, :, :, 0] // 100).int().tolist())
print("전치 없는 분할:                     ", (x_id.view(1, 2, 3, 4)[0, :, :, 0] // 100).int().tolist())
w_o = ours.out_proj.weight.view(16, 4, 4)          # (C_out, h, d): column block i multiplies head i
with torch.no_grad():
    flipped = nn.Linear(16, 16)
    flipped.load_state_dict({"weight": w_o.flip(1).reshape(16, 16), "bias": ours.out_proj.bias})
    fixed = copy_from_torch(MultiHeadAttention(16, 4), torch_mha)
    fixed.out_proj = flipped
    assert torch.allclose(mha_steps(fixed, x, "헤드 순서 뒤집기"), ref_out, atol=1e-6)
print("헤드를 뒤집어 붙이고 W^O의 열 블록도 뒤집으면: 원래 출력과 같음 (차이 < 1e-6)")

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "모양이 맞으면 맞은 것"이라는 믿음을 깨는 것이 이 절의 목적입니다. 네 실수 모두 `assert out.shape == (B, T, C)`를 통과합니다. "이런 버그를 테스트로 잡으려면 무엇과 비교해야 할까?"라고 물어보세요. 답은 4절, 독립적인 구현(PyTorch)과 값 비교입니다. 연습문제 07-1의 검사기가 바로 이 네 실수를 진단합니다.

# %% [markdown]
# ## 6. 파라미터 수와 연산량: 헤드 $h$개 대 헤드 1개
#
# **파라미터.** 투영 네 개가 각각 $C \times C$이고 편향이 $C$개씩입니다. 헤드 $i$의 $W_i^Q$는 $C \times d$이고 $h$개를 합치면 $C \times C$입니다. $h$를 바꿔 가며 세어 봅니다.

# %%
C = 64
for h in [1, 2, 4, 8, 16]:
    n_ours = sum(p.numel() for p in MultiHeadAttention(C, h).parameters())
    n_torch = sum(p.numel() for p in nn.MultiheadAttention(C, h, batch_first=True).parameters())
    assert n_ours == n_torch == 4 * C * C + 4 * C
    print(f"h={h:>2}, d={C // h:>2}: 우리 구현 {n_ours:,} = PyTorch {n_torch:,} = 4C²+4C")

# %% [markdown] slideshow={"slide_type": "subslide"}
# **연산량.** 곱셈-덧셈 한 번을 FLOP 2개로 셉니다. 길이 $N$, 배치 1이면
#
# | 단계 | 헤드 1개 ($d = C$) | 헤드 $h$개 ($d = C/h$) |
# |---|---|---|
# | 투영 4개 | $8NC^2$ | $8NC^2$ |
# | 점수 $Q_i K_i^\top$와 가중합 $A_i V_i$ | $4N^2C$ | $h \cdot 4N^2 d = 4N^2C$ |
# | 소프트맥스 / 가중치 행렬 메모리 | 행 $N$개 / $N^2$ | 행 $hN$개 / $hN^2$ |
#
# ViT-Base 설정($C=768$, $h=12$, $N=196$)에서 식의 행렬 곱 FLOP을 PyTorch의 `FlopCounterMode`가 센 값과 비교합니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def mha_costs(n, c, h, batch=1):
    """Matrix-multiply FLOPs (2 per multiply-add), softmax rows and weight-matrix entries of one self-attention call."""
    d = c // h
    return {"matmul_flops": batch * (4 * 2 * n * c * c + h * 2 * (2 * n * n * d)),   # projections + scores + mix
            "softmax_rows": batch * h * n,
            "weight_floats": batch * h * n * n}


# %%
seed_everything(0)
x_vit = torch.randn(1, 196, 768)                       # (B, N, C): 14×14 patches
measured = {}
for h in (1, 12):
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        MultiHeadAttention(768, h)(x_vit)
    measured[h] = counter.get_total_flops()
    cost = mha_costs(196, 768, h)
    assert measured[h] == cost["matmul_flops"]
    print(f"h={h:>2}: 측정 {measured[h] / 1e9:.4f} GFLOP = 식, 소프트맥스 행 {cost['softmax_rows']:,}, 가중치 {cost['weight_floats']:,}개")
assert measured[1] == measured[12] and round(measured[12] / 1e9, 4) == 1.0429

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: [원문 004](../SOURCES.md)는 768차원을 헤드 12개로 나누면 "총 연산량은 Single-Head와 동일"하다고 합니다. 행렬 곱 FLOP은 정확히 같습니다(위에서 측정: 두 경우 모두 1.0429 GFLOP). 그러나 소프트맥스는 길이 196인 행을 196번이 아니라 2,352번(12배) 계산하고, 가중치 행렬도 $196^2$개가 아니라 $12 \cdot 196^2 = 460{,}992$개를 만듭니다. 원문 복잡도 표의 "N=196이면 약 150 KB"는 헤드 하나, 예제 하나의 값입니다(153.7 kB = 150.1 KiB). 같은 원문의 ViT-Base 예(배치 32, 헤드 12개, float32)에서 한 층의 가중치 행렬은 **56.3 MiB**로, 헤드 하나일 때(4.7 MiB)의 12배입니다. 08번도 같은 값을 MiB로 씁니다.

# %%
mib = {h: mha_costs(196, 768, h, batch=32)["weight_floats"] * 4 / 2 ** 20 for h in (1, 12)}
print(f"가중치 행렬, 배치 32, float32: 헤드 1개 {mib[1]:.1f} MiB, 헤드 12개 {mib[12]:.1f} MiB")
assert (round(mib[12], 1), round(mib[1], 1)) == (56.3, 4.7) and round(196 ** 2 * 4 / 2 ** 10, 1) == 150.1

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "연산량이 같다"는 말은 반만 맞습니다. FLOP은 같지만 실제 속도는 메모리를 얼마나 읽고 쓰는지에도 달려 있습니다. $hN^2$ 가중치 행렬을 만들고 읽는 비용이 긴 시퀀스에서 병목이 되는 이유가 08번의 출발점입니다.

# %% [markdown]
# ## 7. 08번으로 가는 다리: MQA, GQA, KV 캐시
#
# 토큰을 하나씩 만들어 내는 디코더(decoder)는 새 토큰마다 앞선 모든 토큰의 키와 밸류가 필요합니다. 매번 다시 계산하지 않고 저장해 두는 것이 **KV 캐시**(KV cache)입니다. 새 쿼리 하나와 캐시의 키·밸류로 계산한 결과는 전체를 인과 마스크로 한 번에 계산한 결과와 같습니다.

# %%
seed_everything(12)
dec = MultiHeadAttention(16, 4).eval()
x = torch.randn(1, 6, 16)                                        # (B, T, C)
with torch.no_grad():
    full = dec(x, mask=torch.ones(6, 6, dtype=torch.bool).tril())[0]   # all positions at once, causal
    steps = [dec(x[:, t:t + 1], x[:, :t + 1])[0] for t in range(6)]   # one new query; keys/values 0..t (the cache)
assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-6)
print("캐시로 한 토큰씩 계산 = 인과 마스크로 한 번에 계산 (차이 < 1e-6)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 캐시는 토큰마다, 층마다 $2 \times (\text{키·밸류 헤드 수}) \times d$개의 수를 저장합니다. **MQA**(multi-query attention, [Shazeer 2019](../SOURCES.md))는 모든 쿼리 헤드가 키·밸류 헤드 하나를 같이 쓰고, **GQA**(grouped-query attention, [Ainslie 등 2023](../SOURCES.md))는 쿼리 헤드 $h$개를 $g$개 그룹으로 묶어 키·밸류 헤드를 $g$개만 둡니다. 계산은 키·밸류 헤드를 그룹 크기만큼 반복해 쓰는 것과 같습니다. PyTorch 함수 `F.scaled_dot_product_attention(..., enable_gqa=True)`가 바로 그것입니다.

# %%
seed_everything(13)
h, g, t, d = 8, 2, 5, 4
q = torch.randn(1, h, t, d)                                      # (B, h, T, d): 8 query heads
k, v = torch.randn(1, g, t, d), torch.randn(1, g, t, d)          # (B, g, T, d): 2 key/value heads
repeated = F.scaled_dot_product_attention(q, k.repeat_interleave(h // g, dim=1), v.repeat_interleave(h // g, dim=1))
assert torch.allclose(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), repeated, atol=1e-6)
print(f"GQA: 쿼리 헤드 {h}개가 키·밸류 헤드 {g}개를 {h // g}개씩 나눠 씀 = 반복한 MHA (차이 < 1e-6)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 큰 모델 하나를 예로 계산합니다: $C = 4096$, 쿼리 헤드 32개($d = 128$), 32층, 문맥 4096 토큰, 16비트(2바이트) 수. 시퀀스 하나의 KV 캐시입니다.

# %%
C, H, D, LAYERS, CTX = 4096, 32, 128, 32, 4096
kv_cache = {}
for name, kv_heads in (("MHA", 32), ("GQA (g = 8)", 8), ("MQA", 1)):
    kv_cache[name] = 2 * LAYERS * CTX * kv_heads * D * 2         # keys and values, every layer and token, 2 bytes
    print(f"{name:<12} 키·밸류 헤드 {kv_heads:>2}: KV 캐시 {kv_cache[name] / 2 ** 30:6.3f} GiB")
assert kv_cache["MHA"] == 2 * 2 ** 30 and kv_cache["MHA"] // kv_cache["GQA (g = 8)"] == 4 and kv_cache["MHA"] // kv_cache["MQA"] == 32

# %% [markdown]
# KV 캐시는 키·밸류 헤드 수에 비례합니다. MHA에서 시퀀스 하나에 2 GiB이던 캐시가 GQA(8그룹)에서는 0.5 GiB, MQA에서는 64 MiB가 됩니다. 투영 파라미터는 어떻게 달라질까요? 연습문제 07-2에서 식으로 세어 보고, 풀이 아래에 접어 둔 표에서 이 모델로 확인합니다. 08번은 같은 질문, "무엇을 메모리에 두고 몇 번 읽는가"를 어텐션 행렬 자체에 던집니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: GQA는 Llama 2(70B)·Llama 3·Mistral 같은 최근 모델이 쓰는 방식으로 알려져 있습니다. 숫자는 위의 가정(32층, 4096 토큰, 16비트)에서 계산한 값이지 특정 모델의 공식 수치가 아니라는 점을 함께 말하세요.

# %% [markdown]
# ## 8. 헤드마다 다른 패턴을 배운다
#
# 헤드가 정말 일을 나누는지 작은 과제로 확인합니다. 어휘 8개에서 뽑은 토큰 8개 $x_0, \dots, x_7$을 받아, 각 위치 $t \ge 2$에서 $y_t = (x_{t-1} - x_0) \bmod 8$을 맞힙니다. 각 쿼리는 **바로 앞 토큰**과 **첫 토큰**이라는 서로 다른 두 위치가 필요하고, 뺄셈은 순서가 중요하므로 두 값을 섞으면 안 됩니다(1절). 모델은 토큰·위치 임베딩(embedding) → 위의 `MultiHeadAttention` 한 층($C = 32$) → 위치마다 같은 피드포워드 블록(MLP)입니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
import torch.nn.functional as F

VOCAB, SEQ_LEN, FIRST_SCORED = 8, 8, 2     # positions t >= 2 are scored


def make_offset_batch(n, generator=None):
    """Random tokens x (n, T) and targets y_t = (x_{t-1} - x_0) mod VOCAB."""
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=generator)   # (n, T)
    return x, (x.roll(1, dims=1) - x[:, :1]) % VOCAB                   # y_0, y_1 are not scored


class OffsetModel(nn.Module):
    """Token + position embeddings -> one MultiHeadAttention layer -> a per-position MLP."""

    def __init__(self, num_heads, d_model=32, hidden=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, d_model), nn.Embedding(SEQ_LEN, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.ReLU(), nn.Linear(hidden, VOCAB))

    def forward(self, x):                                              # (B, T) token ids
        out, weights = self.attn(self.tok(x) + self.pos.weight[: x.shape[1]])
        return self.mlp(out), weights                                  # (B, T, VOCAB), (B, h, T, T)


# %% tags=["save"] slideshow={"slide_type": "subslide"}
def offset_loss(logits, y):
    return F.cross_entropy(logits[:, FIRST_SCORED:].reshape(-1, VOCAB), y[:, FIRST_SCORED:].reshape(-1))


def train_offset_model(num_heads, steps, seed=0, lr=1e-2, batch=128):
    """Adam on fresh random batches; returns (model in eval mode, losses)."""
    torch.manual_seed(seed)
    model, gen = OffsetModel(num_heads), torch.Generator().manual_seed(seed + 1000)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y = make_offset_batch(batch, gen)
        loss = offset_loss(model(x)[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def head_profile(model, x, y):
    """Accuracy at t >= 2 and, per head, the mean weight on the previous and on the first token: (h, 2)."""
    logits, weights = model(x)
    acc = (logits[:, FIRST_SCORED:].argmax(-1) == y[:, FIRST_SCORED:]).double().mean().item()
    maps = weights.mean(dim=0)                                         # (h, T, T): averaged over the batch
    rows = torch.arange(FIRST_SCORED, SEQ_LEN)
    profile = torch.stack([maps[:, rows, rows - 1].mean(-1), maps[:, rows, 0].mean(-1)], dim=-1)
    return acc, maps, profile


# %% [markdown] slideshow={"slide_type": "subslide"}
# 헤드 1, 2, 4개 모델을 시드 5개씩 400단계 학습하는 일은 `scripts/train_multihead.py`가 합니다. 결과 표는 `data/multihead_runs.json`, 시드 0 모델의 가중치는 `data/multihead_offset_h1.pt`, `_h2.pt`에 있습니다. 저장된 헤드 2개 모델을 불러와 정확도(accuracy)와 헤드별 프로필을 여기서 다시 잽니다.

# %%
runs = load_json("multihead_runs.json")
x_test, y_test = make_offset_batch(runs["test_size"], torch.Generator().manual_seed(runs["test_seed"]))
model2 = OffsetModel(num_heads=2)
model2.load_state_dict(load_tensor_dict("multihead_offset_h2.pt"))
acc2, maps2, prof2 = head_profile(model2.eval(), x_test, y_test)
stored = next(r for r in runs["runs"] if r["num_heads"] == 2 and r["seed"] == 0)
print(f"저장된 헤드 2개 모델: 정확도 {acc2:.2f}")
print("헤드별 (이전 토큰, 첫 토큰) 평균 가중치:", [[round(v, 2) for v in row] for row in prof2.tolist()])
assert acc2 == stored["accuracy"] == 1.0
assert torch.allclose(prof2, torch.tensor(stored["profile"], dtype=prof2.dtype), atol=1e-3)
assert sorted(prof2.argmax(dim=1).tolist()) == [0, 1] and prof2.max(dim=1).values.min() > 0.9

# %% [markdown] slideshow={"slide_type": "subslide"}
# 슬라이더로 헤드를 골라 그 헤드의 어텐션 맵(테스트 시퀀스 2000개의 평균)을 봅니다. 행이 쿼리 위치, 열이 키 위치입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def head_panel(ax, maps):
    """Heatmap of one head's mean map on ax; returns update(head) that swaps the data and the title in place."""
    im = ax.imshow(maps[0].numpy(), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(maps.shape[-1]))
    ax.set_yticks(range(maps.shape[-2]), [f"t={i}" for i in range(maps.shape[-2])])
    ax.set_xlabel("키 위치")
    ax.set_ylabel("쿼리 위치")
    rows = torch.arange(FIRST_SCORED, maps.shape[-1])

    def update(head):
        m = maps[head]
        prev, first = m[rows, rows - 1].mean().item(), m[rows, 0].mean().item()
        im.set_data(m.numpy())
        ax.set_title(f"헤드 {head}: 이전 토큰 {prev:.2f}, 첫 토큰 {first:.2f}")
        return {"map": m.numpy(), "prev": prev, "first": first}

    return update


# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(4.8, 3.8), dpi=80)
head_explorer = Explorer(fig, head_panel(ax, maps2), {"head": widgets.IntSlider(value=0, min=0, max=1, description="헤드")})
head_explorer.image.layout.width = "400px"      # keep the small map at its own size instead of the full width
head_explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전: 같은 코드로 두 헤드를 나란히 그립니다. 한 헤드는 대각선 바로 아래(이전 토큰), 다른 헤드는 첫 열(첫 토큰)에 가중치를 모읍니다. 채점하지 않는 $t = 0, 1$ 행은 아무 패턴이나 괜찮습니다.

# %%
fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6))
drawn = [head_panel(ax, maps2)(i) for i, ax in enumerate(axes)]
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "skip"}
assert all(abs(d["map"].sum(axis=1) - 1).max() < 1e-5 for d in drawn)
head_explorer.set(head=1)
assert head_explorer.last["prev"] == drawn[1]["prev"] and head_explorer.renders == 2

# %% [markdown]
# ### 헤드 번호는 시드마다 다르다
#
# 저장된 실행 표에는 헤드 2개 모델 다섯 개(시드 0–4)의 헤드별 프로필이 있습니다. 헤드마다 (이전 토큰, 첫 토큰) 평균 가중치 중 큰 쪽을 그 헤드의 역할로 읽습니다.

# %%
roles = {}
for r in (r for r in runs["runs"] if r["num_heads"] == 2):
    roles[r["seed"]] = ["이전 토큰" if prev > first else "첫 토큰" for prev, first in r["profile"]]
    shares = ", ".join(f"헤드 {i}: {role} {max(p):.2f}" for i, (role, p) in enumerate(zip(roles[r["seed"]], r["profile"])))
    print(f"시드 {r['seed']}: {shares}")
swapped = [seed for seed, rs in roles.items() if rs[0] == "첫 토큰"]
print("헤드 0이 첫 토큰을 맡은 시드:", swapped)
assert all(sorted(rs) == ["이전 토큰", "첫 토큰"] for rs in roles.values())   # every seed splits the two roles
assert swapped == [2, 3]
mixed = [seed for seed, r in ((r["seed"], r) for r in runs["runs"] if r["num_heads"] == 2)
         if all(0.75 < max(p) < 0.85 for p in r["profile"])]
assert mixed == [1, 3, 4]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 다섯 시드 모두 두 헤드가 두 역할을 나눠 맡지만, 어느 번호의 헤드가 어느 역할을 맡는지는 시드 2와 3에서 뒤바뀝니다. 헤드 번호 자체에는 뜻이 없습니다. 초기값의 우연이 누가 무엇을 맡을지 정합니다.
#
# 시드 1, 3, 4의 0.77~0.83은 행 평균입니다. 채점하는 행은 $t = 2, \dots, 7$의 여섯 개이고, 시드 1과 3의 0.83은 거의 정확히 $5/6$입니다. 한 행 안에서 가중치를 나눈 것이 아니라 **여섯 행 중 한 행에서 두 헤드가 역할을 맞바꾼** 것이 아닐까요? 스크립트가 저장한 시드 1과 4의 모델(`data/multihead_offset_h2_seed1.pt`, `_seed4.pt`)을 불러와 행마다, 그리고 예제마다 봅니다.

# %% slideshow={"slide_type": "subslide"}
scored = torch.arange(FIRST_SCORED, SEQ_LEN)                # query rows t = 2..7
prev_share, seen = {}, {}
for seed in (1, 4):
    model_s = OffsetModel(num_heads=2)
    model_s.load_state_dict(load_tensor_dict(f"multihead_offset_h2_seed{seed}.pt"))
    with torch.no_grad():
        w_s = model_s.eval()(x_test)[1]                     # (B, h, T, T): every example
    prev_w, first_w = w_s[..., scored, scored - 1], w_s[..., scored, 0]   # (B, h, 6)
    prev_share[seed] = (prev_w > first_w).double().mean(0)  # (h, 6): share looking back
    seen[seed] = (head_profile(model_s, x_test, y_test), prev_w, first_w)
    for i in range(2):
        print(f"시드 {seed}, 헤드 {i}: 행 t = 2..7에서 이전 토큰을 보는 예제의 비율",
              [round(v, 2) for v in prev_share[seed][i].tolist()])

# %% slideshow={"slide_type": "skip"}
for seed, ((acc_s, _, prof_s), prev_w, first_w) in seen.items():
    stored_s = next(r for r in runs["runs"] if r["num_heads"] == 2 and r["seed"] == seed)
    assert acc_s == 1.0 and torch.allclose(prof_s, torch.tensor(stored_s["profile"], dtype=prof_s.dtype), atol=0.01)
    assert (torch.maximum(prev_w, first_w) > 0.85).all()                   # every example, every row: one position
    assert ((prev_w > first_w)[:, 0] != (prev_w > first_w)[:, 1]).all()    # the two heads always split the roles
assert prev_share[1][0].tolist() == [0.0] + [1.0] * 5                       # seed 1: swapped in row t = 2, every example
assert prev_share[4][0, 1:].tolist() == [1.0] * 4 + [0.0] and 0.3 < 1 - prev_share[4][0, 0] < 0.5   # seed 4: t = 7; t = 2 in ~40%

# %% [markdown] slideshow={"slide_type": "subslide"}
# 짐작이 맞습니다. 모든 예제의 모든 행에서 한 헤드가 한 위치에 0.85 이상을 주고, 두 헤드는 언제나 두 역할을 나눠 맡습니다(위의 assert 셀; 두 모델의 평균 프로필도 위 표의 값과 0.01 안에서 같음). 시드 1에서는 행 $t = 2$에서만, 모든 예제에서 역할을 맞바꿉니다(평균 $5/6 \approx 0.83$). 시드 4(0.77)는 행 $t = 7$에서 역할을 맞바꾸고, 행 $t = 2$에서는 예제의 약 40%에서만 맞바꿉니다: 예제마다는 여전히 한 위치를 보지만, 어느 헤드가 보는지가 토큰에 따라 달라집니다. 평균 0.77 = (4 + 0.6)/6입니다. 두 모델은 스크립트가 저장한 것이라 어느 컴퓨터에서나 같은 숫자가 나옵니다(400단계 학습을 여기서 다시 돌리면 CPU의 수치 커널에 따라 끝자리가 갈라질 수 있습니다).

# %% [markdown]
# ### 여기서 직접 학습하기
#
# 저장된 실행의 처음 150단계를 이 자리에서 다시 돌립니다(같은 시드, 같은 배치 순서, 몇 초). 손실 값의 끝자리는 CPU마다 조금 다를 수 있으므로, 어느 컴퓨터에서나 성립하는 것만 출력하고 확인합니다.

# %%
live_model, live_losses = train_offset_model(num_heads=2, steps=150, seed=0)
live_acc, live_maps, live_prof = head_profile(live_model, x_test, y_test)
print(f"처음 20단계 손실이 모두 ln 8 ≈ {math.log(8):.2f}의 ±0.05 안: {all(abs(l - math.log(8)) < 0.05 for l in live_losses[:20])}")
print(f"150단계 정확도 ≥ 0.99: {live_acc >= 0.99}, 헤드 역할 (이전 토큰 헤드, 첫 토큰 헤드): {sorted(live_prof.argmax(1).tolist()) == [0, 1]}")
assert all(abs(l - math.log(8)) < 0.05 for l in live_losses[:20]) and live_losses[40] < 1.0
assert live_acc >= 0.99 and sorted(live_prof.argmax(1).tolist()) == [0, 1] and live_prof.max(1).values.min() > 0.8

# %% [markdown] slideshow={"slide_type": "subslide"}
# 손실은 처음 20단계쯤 ln 8(여덟 가지 답을 고르게 찍을 때의 손실) 근처에서 평평하다가 떨어집니다. 같은 실행을 30단계에서 멈추면, 정확도가 아직 절반도 안 되는데 두 헤드는 이미 각자 한 위치를 봅니다. "어디를 볼지"가 먼저 정해지고, 그 뒤에 MLP가 두 토큰으로 답을 계산하는 법을 배웁니다.

# %% slideshow={"slide_type": "subslide"}
early_model, _ = train_offset_model(num_heads=2, steps=30, seed=0)
early_acc, early_maps, early_prof = head_profile(early_model, x_test, y_test)
fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.2))
axes[0].plot(live_losses)
axes[0].set(yscale="log", xlabel="학습 단계", ylabel="손실(교차 엔트로피)", title="직접 학습한 헤드 2개 모델")
for i in range(2):
    head_panel(axes[i + 1], early_maps)(i)
    axes[i + 1].set_title(f"30단계, 헤드 {i}", fontsize=10)
fig.tight_layout()
plt.show()
assert early_acc < 0.5 and sorted(early_prof.argmax(1).tolist()) == [0, 1] and early_prof.max(1).values.min() > 0.8

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 헤드가 하나면?
#
# 헤드 1개 모델($d = 32$)도 저장해 두었습니다. 한 헤드는 두 위치를 한 가중 평균에 담아야 합니다.

# %%
model1 = OffsetModel(num_heads=1)
model1.load_state_dict(load_tensor_dict("multihead_offset_h1.pt"))
acc1, maps1, prof1 = head_profile(model1.eval(), x_test, y_test)
prev1, first1 = prof1[0].tolist()
print(f"헤드 1개 모델: 정확도 {acc1:.2f}, 이전 토큰 {prev1:.2f}, 첫 토큰 {first1:.2f}")
assert acc1 == 1.0 and max(prev1, first1) < 0.7 and prev1 + first1 > 0.9

# %% [markdown]
# 헤드 하나로도 정확도 100%입니다. 평균만 보면 두 위치에 고정된 비율로 나누는 것 같지만, 예제마다 보면 다릅니다. 아래 셀은 (1) 예제마다 이전 토큰에 주는 가중치의 범위, (2) 첫 토큰 $x_0$의 값에 따라 첫 토큰에 주는 평균 가중치, (3) 가중치를 모든 예제에서 **정확히 0.5/0.5로 고정**했을 때의 정확도를 잽니다.

# %% slideshow={"slide_type": "subslide"}
with torch.no_grad():
    _, w1 = model1(x_test)                                           # (B, 1, T, T): every example's weights
    prev_ex, first_ex = w1[:, 0, scored, scored - 1], w1[:, 0, scored, 0]   # (B, 6)
    first_by_x0 = [first_ex[x_test[:, 0] == tok].mean().item() for tok in range(VOCAB)]
    h_in = model1.tok(x_test) + model1.pos.weight[:SEQ_LEN]           # (B, T, C)
    half = w1.clone()
    half[..., scored, :] = 0.0
    half[..., scored, scored - 1], half[..., scored, 0] = 0.5, 0.5    # exactly 0.5/0.5 on the two positions
    mixed_v = merge_heads(half @ split_heads(model1.attn.v_proj(h_in), 1))   # (B, T, C)
    logits_half = model1.mlp(model1.attn.out_proj(mixed_v))
acc_half = (logits_half[:, FIRST_SCORED:].argmax(-1) == y_test[:, FIRST_SCORED:]).double().mean().item()
print(f"예제마다 이전 토큰 가중치: {prev_ex.min():.2f} ~ {prev_ex.max():.2f}")
print("x_0 값별 첫 토큰 평균 가중치:", [round(f, 2) for f in first_by_x0])
print(f"0.5/0.5로 고정하면 정확도 {acc_half:.2f} (원래 {acc1:.2f})")
assert prev_ex.min() < 0.05 and prev_ex.max() > 0.9 and max(first_by_x0) - min(first_by_x0) > 0.5
assert 0.4 < acc_half < 0.55

# %% slideshow={"slide_type": "skip"}
pairs = torch.cartesian_prod(torch.arange(VOCAB), torch.arange(VOCAB))   # (64, 2): (x_{t-1}, x_0), equally likely
same = ((pairs[:, 0] - pairs[:, 1]) % VOCAB == (pairs[:, 1] - pairs[:, 0]) % VOCAB).double().mean().item()
symmetric_best = same + (1 - same) / 2   # a function of the unordered pair: sure only when d ≡ −d (d = 0, 4)
assert same == 0.25 and symmetric_best == 0.625 and acc_half < symmetric_best

# %% [markdown] slideshow={"slide_type": "subslide"}
# 한 헤드는 **토큰의 내용에 따라** 비율을 바꿉니다: 이전 토큰 몫이 예제에 따라 거의 0부터 0.9 넘게까지 움직이고, 첫 토큰 몫도 $x_0$에 따라 크게 다릅니다. 두 토큰을 맞바꾸면 비율도 바뀌므로 섞인 벡터가 달라지고, 뒤의 MLP가 그 차이에서 순서를 읽습니다.
#
# 0.5/0.5로 고정하면 정확도가 0.50으로 떨어집니다(왜 그런지는 토론 질문 2). 이 과제에서 헤드 여러 개는 "가능하게" 만드는 것이 아니라 **깔끔하게 나눠** 맡게 합니다. 시드 5개씩의 저장된 결과로 확인합니다.

# %% slideshow={"slide_type": "subslide"}
summary = {h: [r for r in runs["runs"] if r["num_heads"] == h] for h in (1, 2, 4)}
for h, rs in summary.items():
    sums = [[round(sum(p[j] for p in r["profile"]), 2) for j in (0, 1)] for r in rs]
    print(f"h={h}: 정확도 {[r['accuracy'] for r in rs]}, 99% 도달 단계 {[r['steps_to_99'] for r in rs]}, 헤드 합 (이전, 첫) {sums}")
assert all(r["accuracy"] == 1.0 for rs in summary.values() for r in rs)
assert all(abs(sum(p[j] for p in r["profile"]) - 1) < 0.02 for r in summary[2] for j in (0, 1))
assert all(max(r["profile"][0]) < 0.7 for r in summary[1])

# %% [markdown]
# 헤드 2개 모델은 시드 5개 모두에서 두 헤드의 가중치를 합치면 "이전 토큰" 쪽이 1, "첫 토큰" 쪽이 1입니다: 두 헤드가 두 위치를 나눠 맡습니다(시드에 따라 행 한두 개에서 두 헤드가 역할을 맞바꾸기도 합니다). 헤드 1개는 평균으로 어느 쪽에도 0.7 이상을 주지 않습니다(예제마다는 위에서 본 대로 크게 다름). 99% 도달 단계는 시드 5개로는 경향만 보여 줍니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "헤드 하나로도 100%"라는 결과를 숨기지 말고 먼저 물어보세요: "헤드 하나는 이 과제를 풀 수 있을까?" 대부분 "못 푼다"고 답합니다. 멀티 헤드의 이점은 표현 가능성보다 분업의 깔끔함과 학습의 쉬움이라는 점, 그리고 실제 트랜스포머의 헤드는 이렇게 깔끔히 나뉘지 않는 경우가 많다는 점을 함께 말하세요.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("07-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **07-1. 멀티 헤드 어텐션 조립하기.** `torch.nn.MultiheadAttention(batch_first=True)` 모듈 `m`과 입력 `x` $(B, T, C)$를 받아, `m`의 가중치(`m.in_proj_weight`, `m.in_proj_bias`, `m.out_proj`)만으로 셀프 어텐션 출력 $(B, T, C)$를 계산하는 `assemble_mha(m, x)`를 완성하세요. `m(x, x, x)`나 `F.multi_head_attention_forward`는 쓰지 마세요. 위에서 만든 `MultiHeadAttention`·`copy_from_torch`도 쓰지 마세요. `m`을 호출하면 검사기가 알아채고 거절합니다. 검사기는 결과를 `m(x, x, x)[0]`과 비교하고, 다르면 흔한 실수(√C로 나누기, 전치 없이 나누기·합치기, 헤드 순서, Q·K·V 조각 순서, 편향 누락) 중 무엇인지 알려 줍니다.

# %%
def assemble_mha(m, x):
    raise NotImplementedError

check("07-1", assemble_mha)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def assemble_mha(m, x):
    b, t, c = x.shape
    h = m.num_heads
    q, k, v = F.linear(x, m.in_proj_weight, m.in_proj_bias).chunk(3, dim=-1)        # (B, T, C) each
    q, k, v = (y.view(b, t, h, c // h).transpose(1, 2) for y in (q, k, v))           # (B, h, T, d)
    weights = torch.softmax(q @ k.transpose(-2, -1) / (c // h) ** 0.5, dim=-1)       # (B, h, T, T)
    return m.out_proj((weights @ v).transpose(1, 2).reshape(b, t, c))               # (B, T, C)

check("07-1", assemble_mha)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **07-2. GQA의 파라미터 수.** 7절에서 캐시는 $g$에 비례했습니다. 투영 파라미터는 어떨까요? 표를 보기 전에 식으로 세어 보세요. 먼저 예상하세요: 쿼리 헤드 $h$개, 키·밸류 헤드 $g$개인 어텐션 층에서 $h$를 바꾸면 파라미터 수가 바뀔까요, $g$를 바꾸면 바뀔까요? 그다음 `d_model`, `num_heads`, `kv_heads`, `bias`를 받아 층 하나(투영 $W^Q, W^K, W^V, W^O$)의 파라미터 수를 식으로 돌려주는 `gqa_param_count`를 완성하세요. 헤드 크기는 $d = C/h$이고, `bias=True`이면 네 투영 **모두** 편향이 있습니다.

# %%
def gqa_param_count(d_model, num_heads, kv_heads, bias):
    raise NotImplementedError

check("07-2", gqa_param_count)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def gqa_param_count(d_model, num_heads, kv_heads, bias):
    kv_dim = kv_heads * (d_model // num_heads)                 # keys and values: g heads of size d
    weights = 2 * d_model * d_model + 2 * d_model * kv_dim     # W^Q, W^O: C×C; W^K, W^V: C×(g·d)
    biases = 2 * d_model + 2 * kv_dim if bias else 0
    return weights + biases

check("07-2", gqa_param_count)

# %% [markdown] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
# 풀이 노트 (07-2를 푼 뒤에 펼치세요): **7절의 모델로 돌아가기.** 6절의 MHA($g = h$)에서는 식에 $h$가 없었습니다($P = 4C^2 + 4C$). GQA에서는 $W^Q, W^O$가 $C \times C$ 그대로이고 $W^K, W^V$만 $C \times (g \cdot d)$로 줄어듭니다. 7절의 모델($C = 4096$, $d = 128$, 편향 없음)에서 층 하나의 투영 파라미터를 KV 캐시 옆에 놓습니다. 층에는 피드포워드(feed-forward) 블록도 있으니, Llama 계열처럼 게이트가 있는 피드포워드(SwiGLU, 중간 크기 11008, 행렬 3개)를 가정해 함께 셉니다.

# %% tags=["solution"] jupyter={"source_hidden": true, "outputs_hidden": true} slideshow={"slide_type": "skip"}
C, D = 4096, 128                                                  # 7절의 모델
proj_params = {}
for name, kv_heads in (("MHA", 32), ("GQA (g = 8)", 8), ("MQA", 1)):
    proj_params[name] = 2 * C * C + 2 * C * kv_heads * D          # W^Q, W^O: C×C; W^K, W^V: C×(g·d)  (no biases)
    print(f"{name:<12} 키·밸류 헤드 {kv_heads:>2}: 층당 어텐션 투영 파라미터 {proj_params[name] / 1e6:5.1f}M, "
          f"KV 캐시 {kv_cache[name] / 2 ** 30:6.3f} GiB")
assert proj_params["MHA"] == 4 * C * C and proj_params["MHA"] / proj_params["MQA"] < 2 < kv_cache["MHA"] / kv_cache["MQA"]

FFN = 11008                                                       # Llama-style (SwiGLU) hidden size for C = 4096
ffn_params = 3 * C * FFN                                          # gate, up: C×FFN; down: FFN×C  (no biases)
layer_params = proj_params["MHA"] + ffn_params
print(f"피드포워드 {ffn_params / 1e6:.1f}M + 어텐션 투영 {proj_params['MHA'] / 1e6:.1f}M = 층당 약 {layer_params / 1e6:.0f}M "
      f"(어텐션 몫 {proj_params['MHA'] / layer_params:.0%}; 층 정규화의 파라미터 수천 개는 뺌)")
assert 190e6 < layer_params < 210e6 and ffn_params > 2 * proj_params["MHA"]

# %% [markdown] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
# 풀이 노트: 캐시는 $g$에 비례해 32배까지 줄지만, 파라미터는 덜 줍니다(층당 어텐션 투영 67.1M → GQA 41.9M, MQA 34.6M; 피드포워드까지 넣은 층 전체 약 202M에서는 더 작은 몫). 긴 문맥에서 메모리와 메모리 대역폭을 지배하는 것은 캐시입니다.

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 파라미터 수와 행렬 곱 연산량이 같다면, 헤드 1개($d = 768$) 대신 헤드 12개($d = 64$)를 쓸 때 **잃는 것**은 무엇일까요? 헤드 크기 $d$가 너무 작아지면(예: $d = 1$) 점수 $q \cdot k$는 어떤 함수가 될까요?
# 2. 헤드 1개 모델은 예제마다 다른 비율로 두 위치를 섞어 과제를 풀었고, 0.5/0.5로 고정하면 정확도가 0.50으로 떨어졌습니다. 밸류에는 위치 임베딩도 들어 있는데 왜 순서를 잃을까요? 1절의 계산과 연결해 보세요.
# 3. 8절에서 역할과 번호의 관계를 봤습니다. 그렇다면 사전 학습 모델에서 '헤드 3은 문법 헤드'라는 말은 무엇을 근거로 해야 할까요?
# 4. MQA는 KV 캐시를 32배 줄였습니다. 잃는 것은 무엇일까요? GQA가 그 중간에 서는 이유를 생각해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 "저차원 헤드의 표현력" 문제로, 헤드 크기를 너무 줄이면 점수가 표현할 수 있는 관계가 단순해진다는 점을 이끌어 내세요. 2번의 답: 반반 섞으면 위치 부분 $\tfrac12 W_V(\text{pos}_{t-1} + \text{pos}_0)$은 모든 예제에서 같은 상수이고, 토큰 부분 $\tfrac12 W_V(\text{tok}(x_{t-1}) + \text{tok}(x_0))$은 두 토큰에 대칭입니다. 그래서 $x_{t-1} - x_0$과 $x_0 - x_{t-1}$을 구별할 수 없습니다(1절의 계산). 대칭인 함수는 아무리 잘해도 정확도 0.625입니다: 차이가 0이나 4일 때(경우의 1/4)만 두 순서의 답이 같고, 나머지는 반반이므로 $\tfrac14 + \tfrac34 \cdot \tfrac12$입니다(8절의 접힌 셀에서 assert). 위치 임베딩은 "어느 자리의 토큰인지"를 섞인 합에서 떼어 낼 수 없으므로, 헤드 하나는 비율을 토큰마다 다르게 두어야 순서를 남길 수 있습니다(8절의 0.5/0.5 실험: 0.50). 3번은 8절의 시드별 역할 표(시드 2와 3에서 헤드 번호가 뒤바뀜, 시드 1에서는 한 행에서만 맞바꿈)를 다시 보여 주면 좋습니다. 4번은 08번의 메모리 이야기로 이어집니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 나누기는 view → transpose, 합치기는 transpose → reshape | 출처 토큰 표, 핵심 `split_heads`/`merge_heads`와 같음 |
# | 직접 쓴 `MultiHeadAttention` = 핵심 구현 = `torch.nn.MultiheadAttention` | 셀프·크로스·인과 마스크에서 출력과 헤드별 가중치 |
# | 불리언 마스크의 True: `nn.MultiheadAttention`은 가림, `F.scaled_dot_product_attention`과 이 과정은 볼 수 있음 | 인과 마스크로 세 구현이 같음 |
# | 흔한 실수 네 가지는 모양은 맞고 값은 틀림 | 출력 크기의 10% 이상 차이 |
# | 파라미터 $4C^2 + 4C$, 행렬 곱 FLOP은 $h$와 무관; 소프트맥스 행과 가중치 메모리는 $h$배 | `numel` = PyTorch = 식; `FlopCounterMode` = 식; 56.3 MiB 대 4.7 MiB |
# | KV 캐시 = 인과 마스크 계산; GQA = 키·밸류를 반복한 MHA; 캐시는 키·밸류 헤드 수에 비례 | 2 GiB → 0.5 GiB(GQA) → 64 MiB(MQA) |
# | 학습된 헤드 2개는 "이전 토큰"과 "첫 토큰"으로 일을 행마다 나눔, 헤드 1개는 토큰에 따라 다른 비율로 섞어서 품 (0.5/0.5로 고정하면 정확도 0.50) | 저장된 모델과 직접 학습한 모델, 시드 5개, 행별 역할 표 |
#
# 다음 노트북(08)에서는 이 $h \cdot N^2$ 가중치 행렬을 아예 만들지 않는 방법, 블록 단위 온라인 소프트맥스(FlashAttention)를 봅니다.
