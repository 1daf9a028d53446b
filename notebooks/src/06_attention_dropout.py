# %% [markdown]
# # 06. 어텐션 드롭아웃
#
# 학습 중 어텐션 가중치의 일부를 무작위로 지우고 남은 것을 키우면, 한 번 한 번은 틀리지만 평균으로는 정확한 가중치가 됩니다. 그 계산과 흔한 함정, 그리고 작은 모델에서의 효과를 숫자로 잽니다.
#
# **학습 목표**
# - 어텐션 드롭아웃(dropout)과 1/(1−p) 재조정을 직접 구현하고, 기댓값은 지키지만 행의 합은 1이 아니게 됨을 계산으로 확인한다.
# - 학습 모드(train mode)와 평가 모드(eval mode)를 구분하고, `F.scaled_dot_product_attention`의 `dropout_p`가 평가 모드에서도 지운다는 함정을 고친다.
# - p가 클 때 한 쿼리의 가중치가 통째로 지워질 확률 $p^T$를 계산하고 측정한다.
# - 학습 데이터의 양과 p를 함께 바꾼 실험으로, 드롭아웃이 언제 도움이 되고 언제 해가 되는지 읽는다.
#
# **선수 지식**: 01번(소프트맥스와 가중합), 03번(쿼리·키·밸류). 05번(온도)은 몰라도 됩니다.
#
# **예상 시간**: 혼자 공부 45분 / 스터디 발표 25분
#
# 출처 목록: [원문 000–004와 인용한 논문](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 첫 문장은 "드롭아웃은 가중치를 틀리게 만든다, 그런데 평균으로는 맞다"입니다. 앞 노트북들에서 계속 assert한 "행의 합 = 1"이 오늘 처음으로 깨집니다. 실무에서 가장 자주 보는 버그(평가 모드에서도 켜진 `dropout_p`)는 3절, 슬라이더는 5절, 실험은 6절에 있습니다.

# %% slideshow={"slide_type": "skip"}
import math
import unicodedata
from contextlib import contextmanager

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.data import load_json
from helpers.exercises import check
from helpers.widgets import Explorer

setup()

# %% [markdown]
# ## 1. 직관: 연결을 잠깐 끊는다
#
# 드롭아웃은 학습 중에 무작위로 고른 값을 0으로 만드는 **규제**(regularization) 방법입니다. 어텐션 드롭아웃은 그 대상을 **어텐션 가중치**(weight)로 삼습니다. 가중치 $w_{ij}$는 "쿼리 $i$가 키 $j$를 얼마나 보는가"이므로, 이를 0으로 만드는 것은 그 단계에서 $i \to j$ 연결을 끊는 것과 같습니다.
#
# 남은 가중치는 $1/(1-p)$배로 키웁니다. 코드로는 소프트맥스와 밸류 곱하기 사이의 두 줄입니다.

# %% tags=["save"]
import numpy as np
import torch

from helpers.lessons.query_key_value import attention_scores
from helpers.lessons.weighted_average import softmax


def attention_dropout(weights, p, training=True):  # (..., T_q, T_k)
    """Zero each weight with probability p and scale the survivors by 1/(1-p) (train mode only)."""
    if not training or p == 0.0:
        return weights
    keep = torch.empty_like(weights).bernoulli_(1 - p)  # 1 = keep (probability 1-p), 0 = drop
    return weights * (keep / (1 - p))                   # survivors × 1/(1-p): the expectation stays w


def dropout_attention(q, k, v, mask=None, p=0.0, training=True):
    """03's scaled dot-product attention with attention dropout; returns (output, weights after dropout)."""
    weights = softmax(attention_scores(q, k, mask), dim=-1)   # (..., T_q, T_k), rows sum to 1
    weights = attention_dropout(weights, p, training)         # rows no longer sum to 1
    return weights @ v, weights                               # (..., T_q, d_v), (..., T_q, T_k)


# %% [markdown] slideshow={"slide_type": "subslide"}
# **어디서 왔나.** 드롭아웃 자체는 [Srivastava 등 2014](../SOURCES.md)의 방법입니다. 트랜스포머 논문 [Vaswani 등 2017](../SOURCES.md)이 본문에 적은 드롭아웃은 두 곳입니다: (1) 각 서브층(어텐션, 피드포워드)의 출력을 잔차 연결(residual connection)에 더하기 전, (2) 임베딩과 위치 인코딩의 합. 비율은 기본 모델에서 $P_{drop} = 0.1$입니다(영어–독일어 번역의 큰 모델은 0.3). 어텐션 **가중치**에 거는 드롭아웃은 논문 본문이 아니라 구현에서 자리 잡았습니다. 저자들의 tensor2tensor 코드가 소프트맥스 뒤에 드롭아웃을 걸었고, BERT([Devlin 등 2019](../SOURCES.md))의 `attention_probs_dropout_prob = 0.1`, 그리고 Hugging Face `transformers`가 GPT-2([Radford 등 2019](../SOURCES.md))를 옮긴 설정 `GPT2Config`의 `attn_pdrop = 0.1`이 같은 자리의 설정입니다(GPT-2 논문은 이 값을 적지 않았고, OpenAI가 공개한 GPT-2 코드에는 드롭아웃이 없습니다). 이 노트북의 드롭아웃은 모두 그 자리, 소프트맥스와 밸류 곱하기 사이에 겁니다.

# %% [markdown]
# ### "고양이가 매트 위에 앉았다"에 걸어 보기
#
# 네 토큰(token)의 쿼리·키·밸류는 무작위 벡터입니다. 먼저 드롭아웃 없이(평가 모드) 계산하고, 같은 값을 `p = 0.5`로 한 번 뽑습니다.

# %%
seed_everything(6)
tokens = ["고양이가", "매트", "위에", "앉았다"]
q, k = torch.randn(4, 8), torch.randn(4, 8)   # (T=4, d_k=8)
v = torch.randn(4, 2)                         # (T=4, d_v=2)

out_eval, w = dropout_attention(q, k, v, training=False)
seed_everything(0)
out_drop, w_drop = dropout_attention(q, k, v, p=0.5)
print("왼쪽 네 열: 가중치 W, 오른쪽 네 열: p = 0.5로 한 번 뽑은 결과\n", torch.cat([w, w_drop], dim=1))
print("드롭아웃 뒤 행의 합:", w_drop.sum(dim=-1))

# %% slideshow={"slide_type": "skip"}
kept = w_drop != 0
assert torch.allclose(w.sum(dim=-1), torch.ones(4))
assert torch.allclose(w_drop[kept], w[kept] / (1 - 0.5))   # survivors are doubled, nothing else changes
assert round(w_drop.sum(dim=-1).min().item(), 2) == 0.78 and round(w_drop.sum(dim=-1).max().item(), 2) == 1.07
torch.testing.assert_close(out_eval, F.scaled_dot_product_attention(q, k, v))   # p = 0: PyTorch's attention

# %% [markdown] slideshow={"slide_type": "subslide"}
# 지워진 칸은 정확히 0이고, 남은 칸은 원래 값의 정확히 2배 = 1/(1−0.5)배입니다. 그 결과 **행의 합이 1이 아닙니다**. 이번에 뽑은 결과에서는 0.78부터 1.07까지 행마다 다릅니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "그럼 평균이 틀어지지 않나요?"라는 질문이 나오면 바로 다음 절로 넘어가면 됩니다. 두 줄짜리 `attention_dropout`이 이 노트북의 전부라는 점을 강조하세요.

# %% [markdown]
# ## 2. 수식: 1/(1−p)는 기댓값을 지킨다
#
# 항목마다 독립으로 $m_{ij} \sim \text{Bernoulli}(1-p)$ (1이면 남김)를 뽑아
#
# $$\tilde w_{ij} = \frac{m_{ij}}{1-p}\, w_{ij}, \qquad \mathbb{E}[\tilde w_{ij}] = w_{ij}, \qquad \mathrm{Var}[\tilde w_{ij}] = \frac{p}{1-p}\, w_{ij}^2.$$
#
# 항목이 독립이므로 행의 합 $S_i = \sum_j \tilde w_{ij}$는 $\mathbb{E}[S_i] = 1$, $\mathrm{Var}[S_i] = \frac{p}{1-p} \sum_j w_{ij}^2$ 입니다. 한 키에 몰린 행(큰 $w_{ij}$)일수록 크게 흔들립니다. 20000번 뽑아 식과 비교합니다.

# %% slideshow={"slide_type": "subslide"}
p, n = 0.3, 20000
torch.manual_seed(1)
draws = attention_dropout(w.expand(n, 4, 4), p)            # (n, 4, 4): n independent draws
sums = draws.sum(dim=-1)                                    # (n, 4)
var_formula = p / (1 - p) * (w ** 2).sum(dim=-1)            # (4,)
print("0이 된 비율:", round((draws == 0).float().mean().item(), 2))
print("행 합의 평균:      ", sums.mean(dim=0))
print("행 합의 분산 (측정):", sums.var(dim=0))
print("행 합의 분산 (식):  ", var_formula)

# %% slideshow={"slide_type": "skip"}
assert abs((draws == 0).float().mean().item() - p) < 0.01
assert torch.allclose(sums.mean(dim=0), torch.ones(4), atol=0.01)
assert torch.allclose(sums.var(dim=0), var_formula, rtol=0.05)
assert sums.var(dim=0)[3] > sums.var(dim=0)[1]      # the peaked last row wobbles more than the flat second one
assert round(w[3, 1].item(), 2) == 0.61 and int(w[3].argmax()) == 1
outs = draws @ v                                     # (n, 4, 2): outputs keep their mean too
assert torch.allclose(outs.mean(dim=0), out_eval, atol=0.01)

# %% [markdown]
# 측정과 식이 5% 안에서 맞습니다. "앉았다"처럼 한 키(매트, 0.61)에 몰린 행의 합이 "매트"처럼 고르게 퍼진 행보다 더 흔들립니다. 출력 $\tilde o_i = \sum_j \tilde w_{ij} v_j$의 평균도 평가 모드의 출력과 같습니다(숨긴 셀에서 assert).
#
# 재조정을 빼면 어떨까요? 지우기만 하면 평균은 W가 아니라 (1−p)·W로 줄어듭니다. 학습 때 본 크기와 평가 때 본 크기가 달라지는 셈입니다.

# %%
no_rescale = draws * (1 - p)                  # undo the 1/(1-p): plain "drop only"
print("재조정 없는 평균 / W:", round((no_rescale.mean(dim=0) / w).mean().item(), 2))
assert torch.allclose(no_rescale.mean(dim=0), (1 - p) * w, atol=0.01)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 원래 드롭아웃 논문은 학습 때는 지우기만 하고 평가 때 (1−p)를 곱했습니다. 지금 라이브러리들은 학습 때 1/(1−p)를 곱하는 **역 드롭아웃**(inverted dropout)을 씁니다. 그래서 평가 때는 아무것도 할 필요가 없습니다.

# %% [markdown]
# ## 3. 학습 모드와 평가 모드, 그리고 가장 흔한 함정
#
# 드롭아웃은 학습 모드에서만 켜져야 합니다. 평가 모드는 p와 상관없이 p = 0과 **비트 단위로 같아야** 합니다. 모듈에서는 `self.training`이 그 스위치입니다(`.train()` / `.eval()`로 바뀜). PyTorch의 `nn.MultiheadAttention`으로 확인합니다(07번에서 만들 `MultiHeadAttention`도 같은 스위치를 씁니다).

# %%
seed_everything(3)
mha = nn.MultiheadAttention(8, num_heads=2, dropout=0.5, batch_first=True)
x = torch.randn(1, 4, 8)                          # (B=1, T=4, d_model=8)
train_a, train_b = mha(x, x, x)[0], mha(x, x, x)[0]   # train mode (the default): two different draws
mha.eval()
eval_a, eval_b = mha(x, x, x)[0], mha(x, x, x)[0]
mha.dropout = 0.0
print("학습 모드: 두 호출이 같은가?", torch.equal(train_a, train_b))
print("평가 모드: 두 호출이 같은가?", torch.equal(eval_a, eval_b), "/ p = 0과 같은가?", torch.equal(eval_a, mha(x, x, x)[0]))
assert not torch.allclose(train_a, train_b)
assert torch.equal(eval_a, eval_b) and torch.equal(eval_a, mha(x, x, x)[0])

# %% [markdown]
# ### 함정: `F.scaled_dot_product_attention`에는 학습 모드가 없다
#
# PyTorch의 함수 `F.scaled_dot_product_attention(q, k, v, dropout_p=p)`는 `training` 인자가 없습니다. `dropout_p > 0`이면 **언제나** 지웁니다. 모듈 안에서 이 함수에 `dropout_p=self.p`를 그대로 넘기면 `model.eval()`을 불러도 드롭아웃이 켜져 있습니다.
#
# 이 함수는 GPU에서 FlashAttention([Dao 등 2022](../SOURCES.md)) 같은 융합 커널로 돌 수 있습니다. 그 커널은 가중치 행렬 전체를 메모리에 만들지 않으므로, 드롭아웃도 커널 **안에서** 블록마다 마스크를 만들어 곱합니다. 마스크를 저장하지 않고 난수 생성기의 상태만 저장해 두었다가, 역전파 때 같은 상태에서 같은 마스크를 다시 만들어 씁니다. 그래서 우리 `attention_dropout`과 같은 수식이지만 같은 시드에서 같은 마스크가 나온다는 보장은 없습니다(같은 것은 분포입니다).

# %% tags=["save"]
import torch.nn as nn
import torch.nn.functional as F


class SelfAttentionSDPA(nn.Module):
    """Single-head self-attention through PyTorch's fused function, with attention dropout p."""

    def __init__(self, d_model, p):
        super().__init__()
        self.p = p
        self.qkv = nn.Linear(d_model, 3 * d_model)

    def forward(self, x):                                   # (B, T, C)
        q, k, v = self.qkv(x).chunk(3, dim=-1)              # (B, T, C) each
        # The function has no training flag: pass 0 in eval mode, or it drops there too.
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0)


# %% slideshow={"slide_type": "subslide"}
class BuggySelfAttentionSDPA(SelfAttentionSDPA):
    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.p)   # the bug: always drops


seed_everything(4)
right, buggy = SelfAttentionSDPA(8, p=0.5).eval(), BuggySelfAttentionSDPA(8, p=0.5).eval()
buggy.load_state_dict(right.state_dict())
for name, module in (("고친 모듈", right), ("버그 모듈", buggy)):
    a, b = module(x), module(x)
    print(f"{name}, 평가 모드: 두 호출이 같은가? {torch.equal(a, b)}")
assert torch.equal(right(x), right(x)) and not torch.allclose(buggy(x), buggy(x))

# %% [markdown]
# 버그 모듈은 평가 모드에서도 호출마다 결과가 다릅니다. 검증 손실에 잡음이 섞이고, 배포한 모델의 예측이 흔들립니다. `nn.MultiheadAttention`과 07번의 `MultiHeadAttention`은 안에서 `self.training`을 보므로 이 문제가 없습니다. 함수 `F.scaled_dot_product_attention`을 직접 부를 때만 `dropout_p=self.p if self.training else 0.0`을 직접 써야 합니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: nanoGPT 같은 널리 읽히는 코드도 이 함수를 쓰는 곳에 바로 이 방어 코드(`dropout_p=self.dropout if self.training else 0`)를 넣어 두었습니다. 청중에게 그 한 줄을 보여 주고 "`else 0`을 빼면 무엇이 잘못될까?"를 먼저 물어보세요.

# %% [markdown]
# ## 4. p가 크면: 한 행이 통째로 사라진다
#
# 항목은 독립으로 지워지므로, 키가 $T$개인 한 행이 모두 지워질 확률은 $p^T$입니다. 그 쿼리의 출력은 $\sum_j 0 \cdot v_j = 0$, 즉 영벡터입니다. 키 4개, p = 0.9에서는 $0.9^4 \approx 0.66$: 학습 단계의 셋 중 둘에서 그 쿼리는 아무것도 보지 못합니다.

# %%
p, n = 0.9, 20000
torch.manual_seed(2)
out9, w9 = dropout_attention(q.expand(n, 4, 8), k, v, p=p)   # (n, 4, 2), (n, 4, 4)
dead = (w9 == 0).all(dim=-1)                              # (n, 4): rows with every key dropped
print(f"식 p^T = 0.9^4 = {p ** 4:.4f}, 측정 {dead.float().mean().item():.2f}")
print("통째로 지워진 행의 출력이 모두 0인가?", bool((out9[dead] == 0).all()))
for t_len in (4, 16, 64):
    print(f"T = {t_len:>2}: p = 0.9 → {0.9 ** t_len:.2g},  p = 0.1 → {0.1 ** t_len:.1g}")
assert abs(dead.float().mean().item() - p ** 4) < 0.01 and (out9[dead] == 0).all()

# %% [markdown]
# 짧은 시퀀스(sequence)와 큰 p의 조합에서만 문제가 됩니다. 키가 64개면 p = 0.9에서도 $0.9^{64} \approx 0.0012$입니다. 보통 쓰는 p = 0.1에서는 키가 4개여도 $10^{-4}$입니다.

# %% [markdown]
# ## 원문 보충과 바로잡기
#
# > **원문 보충** ([원문 000](../SOURCES.md)의 코드): 원문은 소프트맥스가 "가중치의 합이 1이 되도록" 만든다고 설명한 뒤 그 가중치에 곧바로 드롭아웃을 겁니다. 이 순서는 틀리지 않았습니다. BERT, GPT-2와 같은 표준 구현입니다. 다만 설명에 한 줄이 빠졌습니다. 그 줄을 지난 가중치는 학습 모드에서 행의 합이 1이 아닙니다. 원문의 순서(점수 → 소프트맥스 → `nn.Dropout` → 밸류와 곱하기)를 그대로 계산하면, 같은 난수에서 우리 `dropout_attention`과 같은 결과가 나오고, 행의 합은 1에서 벗어납니다.

# %% slideshow={"slide_type": "subslide"}
def seed000_order(q, k, v, dropout):
    weights = F.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)   # (T_q, T_k)
    weights = dropout(weights)
    return weights @ v, weights


drop = nn.Dropout(0.1)
seed_everything(4)
theirs_out, theirs_w = seed000_order(q, k, v, drop)
seed_everything(4)
ours_out, ours_w = dropout_attention(q, k, v, p=0.1)
print("원문 순서, 학습 모드의 행 합:", theirs_w.sum(dim=-1))
assert torch.allclose(theirs_w, ours_w) and torch.allclose(theirs_out, ours_out)
assert not torch.allclose(theirs_w.sum(dim=-1), torch.ones(4))
assert torch.allclose(seed000_order(q, k, v, drop.eval())[1].sum(dim=-1), torch.ones(4))

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기** ([원문 004](../SOURCES.md)의 `p=0.1` 예): 주석 "10% 확률로 연결 끊기"는 절반만 맞습니다. 끊기는 비율은 약 10%이지만, 남은 연결은 그대로가 아니라 1/0.9 ≈ 1.111배가 됩니다. 그래서 아무것도 끊기지 않은 행(키 4개면 0.9⁴ ≈ 66%)조차 합이 1.111이고, 합이 정확히 1인 행은 사실상 없습니다.

# %%
torch.manual_seed(5)
draws = attention_dropout(w.expand(20000, 4, 4), 0.1)            # (n, 4, 4)
row_sums = draws.sum(dim=-1)                                     # (n, 4)
ratio = draws[draws != 0] / w.expand_as(draws)[draws != 0]       # survivors / original
intact = ((row_sums - 1 / 0.9).abs() < 1e-5).float().mean().item()
exactly_one = ((row_sums - 1).abs() < 1e-5).float().mean().item()
print(f"끊긴 비율 {(draws == 0).float().mean().item():.2f}, 남은 값/원래 값 {ratio.min().item():.3f} ~ {ratio.max().item():.3f}")
print(f"합이 1.111인 행 {intact:.2f} (식 0.9^4 = {0.9 ** 4:.2f}), 합이 1인 행 {exactly_one:.0f}")
assert abs((draws == 0).float().mean().item() - 0.1) < 0.005
assert torch.allclose(ratio, torch.full_like(ratio, 1 / 0.9))
assert abs(intact - 0.9 ** 4) < 0.01 and exactly_one < 0.001

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 두 원문 모두 "드롭아웃을 어디에 거는가"는 맞습니다(소프트맥스 뒤, 밸류와 곱하기 전). 바로잡는 것은 설명의 빈틈입니다: 남은 값이 커진다는 점, 그리고 그 결과 행의 합이 1이 아니라는 점입니다.

# %% [markdown]
# ## 5. 슬라이더: p를 바꿔 보기
#
# 왼쪽은 한 번 뽑은 결과(칸의 숫자), 오른쪽은 1000번의 평균(색), 행 이름 옆 괄호 안은 그 행의 합입니다. p를 올리면 한 번 뽑은 결과의 행 합이 1에서 멀어지고 남은 칸이 커지며(p = 0.9면 10배) 행이 통째로 0이 되기도 합니다. 평균은 거의 W 그대로입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def dropout_panels(axes, w, labels, n_avg=1000, seed=1):
    """Draw one dropout draw and the mean of n_avg draws on two axes; return update(p) that redraws in place."""
    t_q, t_k = w.shape
    images, row_names = [], []
    for ax in axes:
        images.append(ax.imshow(np.zeros((t_q, t_k)), cmap="Blues", vmin=0.0, vmax=1.5, aspect="auto"))
        ax.set_xticks(range(t_k), labels, fontsize=8)
        ax.set_yticks(range(t_q))
        # The row names with their sums are texts where the tick labels would sit (7 pt = tick length + pad),
        # so a new sum redraws only its text, not the whole figure.
        ax.tick_params(axis="y", labelleft=False)
        row_names.append([ax.annotate(f"{lab} (합 0.00)", (0, i), xycoords=ax.get_yaxis_transform(),
                                      xytext=(-7, 0), textcoords="offset points", ha="right", va="center")
                          for i, lab in enumerate(labels)])
        ax.set_xlabel("키(key)")
    texts = [[axes[0].text(j, i, "", ha="center", va="center", fontsize=8) for j in range(t_k)] for i in range(t_q)]

    def update(p):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            draws = attention_dropout(w.expand(n_avg, t_q, t_k), p)     # (n_avg, T_q, T_k)
        result = {"one": draws[0].numpy(), "mean": draws.mean(dim=0).numpy()}
        for i in range(t_q):                                            # numbers on the one-draw panel only
            for j in range(t_k):
                texts[i][j].set_text(f"{result['one'][i, j]:.2f}")
                texts[i][j].set_color("white" if result["one"][i, j] > 0.9 else "black")
        for ax, im, names, name in zip(axes, images, row_names, ("one", "mean")):
            mat = result[name]
            im.set_data(mat)
            for row_name, lab, s in zip(names, labels, mat.sum(axis=1)):
                row_name.set_text(f"{lab} (합 {s:.2f})")
            ax.set_title(f"p = {p:.2f}: " + ("한 번 뽑은 결과" if name == "one" else f"{n_avg}번 평균"))
        result.update(one_row_sums=result["one"].sum(axis=1), mean_row_sums=result["mean"].sum(axis=1))
        return result

    return update


# %% tags=["nbval-ignore-output"]
fig, axes = plt.subplots(1, 2, figsize=(9.5, 2.9), dpi=72)
update = dropout_panels(axes, w, tokens)
fig.tight_layout()
p_explorer = Explorer(fig, update, {"p": widgets.FloatSlider(value=0.3, min=0.0, max=0.9, step=0.05, description="p")})
p_explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 코드로 p = 0, 0.5, 0.9의 한 번 뽑은 결과(위)와 1000번의 평균(아래)을 그립니다.

# %%
p_values = [0.0, 0.5, 0.9]
fig, axes = plt.subplots(2, 3, figsize=(9.5, 4.3))
panels = {p_: dropout_panels(axes[:, col], w, tokens)(p_) for col, p_ in enumerate(p_values)}
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "skip"}
assert np.allclose(panels[0.0]["one"], w.numpy()) and np.allclose(panels[0.0]["one_row_sums"], 1)
assert np.abs(panels[0.9]["one_row_sums"] - 1).max() > np.abs(panels[0.5]["one_row_sums"] - 1).max()
for p_, r in panels.items():   # the mean of 1000 draws stays within 4 standard errors of 1
    se = np.sqrt(p_ / (1 - p_) * (w ** 2).sum(dim=-1).numpy() / 1000)
    assert np.all(np.abs(r["mean_row_sums"] - 1) <= 4 * se + 1e-6)
p_explorer.set(p=0.9)
assert np.allclose(p_explorer.last["one"], panels[0.9]["one"])   # the slider draws what the static figure shows

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 0.9까지 올리면 한 번 뽑은 결과가 대부분 0이고 남은 몇 칸만 원래의 10배가 됩니다. 4절의 "행이 통째로 사라지는" 경우를 화면에서 찾아보게 하세요. "이 정도면 학습이 될까?"가 다음 절로 넘어가는 질문입니다.

# %% [markdown]
# ## 6. 작은 모델에서의 효과
#
# 드롭아웃의 효과를 재려면 (1) 데이터가 충분할 때는 **규칙을 배우는** 모델과 (2) 데이터가 적을 때는 과적합(overfitting)하는 상황이 함께 필요합니다. 그래서 학습 데이터의 양을 두 번째 축으로 둡니다.
#
# **과제.** 어휘 24개 중 0–7은 긍정, 8–15는 부정, 16–23은 중립 토큰입니다. 맨 앞의 `[CLS]` 뒤에 토큰 10개를 뽑고, 긍정이 부정보다 많으면 1입니다(같으면 동전 던지기). 정답 레이블의 10%는 일부러 뒤집습니다. 외울 잡음이 있어야 과적합이 생기기 때문입니다.
#
# **모델.** 임베딩 → `[CLS]`의 쿼리 하나가 모든 토큰을 보는 어텐션(어텐션 드롭아웃 p) → 선형 분류기. 결정에 쓰이는 것은 `[CLS]` 행의 가중치뿐이라 드롭아웃의 효과가 곧장 드러납니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CLS, SEQ_LEN, LABEL_NOISE = 24, 24, 10, 0.1   # tokens 0-7 positive, 8-15 negative, 16-23 neutral


def make_polarity_task(n, seed):
    """n sequences [CLS, x_1..x_10]; y = 1 if more positive than negative tokens (tie: a coin), 10% flipped."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=g)             # (n, T)
    score = (x < 8).sum(dim=1) - ((x >= 8) & (x < 16)).sum(dim=1)      # (n,): #positive - #negative
    y = torch.where(score == 0, torch.randint(0, 2, (n,), generator=g), (score > 0).long())
    y = torch.where(torch.rand(n, generator=g) < LABEL_NOISE, 1 - y, y)
    return torch.cat([torch.full((n, 1), CLS), x], dim=1), y          # (n, 1 + T), (n,)


# %% tags=["save"] slideshow={"slide_type": "subslide"}
class PolarityClassifier(nn.Module):
    """Embedding -> the [CLS] query attends over all tokens (attention dropout p) -> linear classifier."""

    def __init__(self, p=0.0, d=16):
        super().__init__()
        self.p = p
        self.embed = nn.Embedding(VOCAB + 1, d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.head = nn.Linear(d, 2)

    def forward(self, x):                                              # (B, 1 + T) token ids
        h = self.embed(x)                                              # (B, 1 + T, d)
        out, w = dropout_attention(self.q(h[:, :1]), self.k(h), self.v(h), p=self.p, training=self.training)  # (B, 1, d)
        return self.head(out[:, 0]), w[:, 0]                           # (B, 2), (B, 1 + T)


# %% [markdown] slideshow={"slide_type": "subslide"}
# 학습 루프는 평범합니다. 전체 배치 Adam 300단계, float64(작은 모델이라 빠르고, 컴퓨터가 달라도 결과가 거의 같습니다), 손실과 정확도는 모두 평가 모드에서 잽니다. 시드는 초기 가중치·드롭아웃 난수와 함께 **학습 데이터도** 바꿉니다. 검증 데이터 4000개는 고정입니다.

# %% tags=["save"]
@torch.no_grad()
def evaluate(model, x, y):
    """Eval-mode loss and accuracy; the model's mode is restored."""
    was_training = model.training
    logits = model.eval()(x)[0]
    model.train(was_training)
    return F.cross_entropy(logits, y).item(), (logits.argmax(dim=-1) == y).double().mean().item()


# %% tags=["save"] slideshow={"slide_type": "subslide"}
def train_classifier(n_train, p, seed=0, steps=300, eval_every=25, n_val=4000):
    """Train a PolarityClassifier on n_train examples with attention dropout p; return metrics and curves."""
    x_tr, y_tr = make_polarity_task(n_train, seed=100 + seed)
    x_va, y_va = make_polarity_task(n_val, seed=7)
    torch.manual_seed(seed)
    model = PolarityClassifier(p).double()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    curve = {"step": [], "train_loss": [], "val_loss": []}
    for step in range(1, steps + 1):
        loss = F.cross_entropy(model.train()(x_tr)[0], y_tr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            curve["step"].append(step)
            curve["train_loss"].append(evaluate(model, x_tr, y_tr)[0])
            curve["val_loss"].append(evaluate(model, x_va, y_va)[0])
    (train_loss, train_acc), (val_loss, val_acc) = evaluate(model, x_tr, y_tr), evaluate(model, x_va, y_va)
    return {"n_train": n_train, "p": p, "seed": seed, "train_loss": train_loss, "train_acc": train_acc,
            "val_loss": val_loss, "val_acc": val_acc, "curve": curve}


# %% [markdown]
# ### 도달할 수 있는 정확도의 한계
#
# 레이블의 10%가 뒤집혔고 동점이면 동전이므로, 규칙을 완벽히 아는 모델도 100%를 맞힐 수 없습니다. 동점 확률은 다항분포로 정확히 계산됩니다: 한계 정확도 $= 0.9 \cdot P(\text{동점 아님}) + 0.5 \cdot P(\text{동점})$.

# %%
p_tie = sum(math.comb(SEQ_LEN, a) * math.comb(SEQ_LEN - a, a) for a in range(SEQ_LEN // 2 + 1)) / 3 ** SEQ_LEN
ceiling = (1 - LABEL_NOISE) * (1 - p_tie) + 0.5 * p_tie
x_va, y_va = make_polarity_task(4000, seed=7)
print(f"P(동점) = {p_tie:.3f}, 한계 정확도 = {ceiling:.3f}, 검증 데이터의 다수 클래스 비율 = {max(y_va.double().mean().item(), 1 - y_va.double().mean().item()):.3f}")
assert round(ceiling, 3) == 0.839

# %% [markdown]
# ### 직접 학습하기: 데이터 128개, p = 0과 0.2
#
# 여기서는 p = 0과 p = 0.2, 두 설정을 돌립니다(2코어 CPU에서 10초 안팎). 전체 실험은 `scripts/train_dropout.py`가 학습 데이터 6가지 크기 × p 5가지 × 시드 5개로 돌려 `data/dropout_sweep.json`에 저장했습니다(설정과 실행 환경도 함께 기록). 라이브 실행은 저장된 같은 설정의 실행과 비교합니다.

# %%
live = {p_: train_classifier(128, p_, seed=0) for p_ in (0.0, 0.2)}
sweep = load_json("dropout_sweep.json")
tol = sweep["live_check"]["tolerance"]                    # {"loss": ..., "acc": ...}
for p_, r in live.items():
    stored = next(s for s in sweep["runs"] if (s["n_train"], s["p"], s["seed"]) == (128, p_, 0))
    for m in ("train_loss", "val_loss", "train_acc", "val_acc"):
        assert abs(stored[m] - r[m]) <= tol[m.split("_")[1]], f"p = {p_}, {m}: live {r[m]:.4f}, stored {stored[m]:.4f}"
    print(f"p = {p_}: 학습 정확도 {stored['train_acc']:.2f}, 검증 정확도 {stored['val_acc']:.2f}, 검증 손실 {stored['val_loss']:.2f}")
assert live[0.2]["val_loss"] < live[0.0]["val_loss"] - 0.5 and live[0.0]["train_acc"] > live[0.0]["val_acc"] + 0.1

# %% [markdown]
# 출력한 숫자는 저장된 실행의 값이고, 라이브 실행은 그 값과 손실 0.1, 정확도 0.05 안에서 같아야 합니다(assert). 이 허용 오차는 같은 라이브 실행을 세 가지 수치 환경(CPU 명령어 폭, BLAS 커널, 스레드 수)에서 돌려 **측정한** 최대 차이(손실 0.024, 정확도 0.016)의 서너 배입니다. float64로 학습해도 p = 0 실행은 컴퓨터마다 조금 다르게 끝납니다. 과적합하는 학습이 반올림 수준의 차이를 300단계 동안 키우기 때문입니다. p = 0.2 실행은 1e-8 안에서 같았습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 저장된 실험: 데이터 양 × p

# %% slideshow={"slide_type": "skip"}
ns, ps = sweep["settings"]["n_train"], sweep["settings"]["p_values"]
table = {m: np.array([[[s[m] for s in sweep["runs"] if (s["n_train"], s["p"]) == (n_, p_)] for p_ in ps] for n_ in ns])
         for m in ("train_acc", "val_acc", "val_loss")}      # (N, P, seeds)

# %%
fig, axes = plt.subplots(1, 2, figsize=(9.5, 2.7))
for j, p_ in enumerate(ps):
    for ax, m in zip(axes, ("val_acc", "val_loss")):
        ax.errorbar(ns, table[m][:, j].mean(1), yerr=table[m][:, j].std(1), marker="o", capsize=3, label=f"p = {p_}")
axes[0].axhline(ceiling, color="gray", linestyle=":", label="한계 정확도")
axes[0].set(xscale="log", xlabel="학습 데이터 수", ylabel="검증 정확도", title="검증 정확도 (시드 5개 평균 ± 표준편차)")
axes[1].set(xscale="log", yscale="log", xlabel="학습 데이터 수", ylabel="검증 손실", title="검증 손실")
plt.setp(axes, xticks=ns, xticklabels=[str(n_) for n_ in ns])     # the six training-set sizes, not only 10² and 10³
axes[0].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "skip"}
mean_acc = table["val_acc"].mean(2)                                           # (N, P)
paired = table["val_acc"] - table["val_acc"][:, :1]                           # (N, P, seeds): same seed = same training set
i32, i128, i1024 = ns.index(32), ns.index(128), ns.index(1024)
assert mean_acc[i1024, 0] > ceiling - 0.005                         # with enough data the model learns the rule
assert table["train_acc"][i32, 0].mean() - mean_acc[i32, 0] > 0.3  # with 32 examples it memorises
assert 0.6 <= mean_acc[i32].min() and mean_acc[i32].max() < 0.7   # dropout leaves accuracy in the 0.6s
assert table["val_loss"][i32, 0].mean() > 5 and table["val_loss"][i32, 1:].mean(1).min() < 2.5
assert (paired[i128, ps.index(0.2)] > 0).all() and paired[i128, ps.index(0.2)].mean() > 0.01
assert paired[i1024].mean(1).max() < 0.005 and paired[i1024, -1].mean() < -0.02
assert all(paired[i, -1].mean() < 0 for i in range(ns.index(64), len(ns)))
assert round(table["val_loss"][i32, 0].mean(), 1) == 7.4 and round(table["val_loss"][i32, ps.index(0.2)].mean(), 1) == 2.1
small_p = [paired[i, 1:3][int(paired[i, 1:3].mean(1).argmax())] for i in range(ns.index(256) + 1)]   # the better of 0.1, 0.2
assert all(0.01 < g.mean() < 0.03 and (g > 0).sum() >= 4 for g in small_p)
assert round(table["val_loss"][i32, ps.index(0.5)].mean(), 1) == 1.3 == round(table["val_loss"][i32].mean(1).min(), 1)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 측정이 보여 주는 것을 그대로 읽으면 이렇습니다. 시드가 같으면 학습 데이터도 같으므로, p = 0과의 차이는 **시드별로 짝지어** 비교합니다(아래 표).
#
# - **데이터가 충분하면 모델은 규칙을 배웁니다.** 1024개에서 p = 0의 검증 정확도(0.838)는 한계 0.839와 거의 같습니다: 규칙을 다 배웠습니다. 여기서 드롭아웃은 정확도를 올리지 않고, p = 0.5는 약 0.03을 깎습니다.
# - **데이터가 적으면 과적합합니다.** 32개에서 학습 정확도와 검증 정확도의 차이가 0.3이 넘습니다. 드롭아웃은 여기서 검증 손실을 크게 줄이지만(p = 0의 7.4가 p = 0.2에서 2.1, p = 0.5에서 1.3: 틀린 예측에 대한 확신이 줄어듦), 정확도는 0.02 안팎만 오르고 0.6대에 머뭅니다. 데이터가 모자란 것을 드롭아웃이 메워 주지는 않습니다.
# - **정확도 이득은 작은 p, 중간 크기의 데이터에서 작게 나타납니다.** 데이터가 256개 이하이면 0.1과 0.2 중 나은 쪽이 평균 정확도를 0.01–0.03 올렸고, 시드 5개 중 4개 이상에서 올랐습니다. 128개에서 p = 0.2는 시드 5개 모두에서 올렸습니다(평균 +0.026). 큰 p(0.5)는 64개 이상에서 손해입니다.

# %% slideshow={"slide_type": "subslide"}
def pad(text, width):  # right-align to `width` columns: a Hangul syllable is two columns wide in monospace
    text = str(text)
    return " " * (width - sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)) + text


widths = (7, 25, 22, 11, 15, 29)
header = ("데이터", "가장 좋은 p(정확도 기준)", "짝지은 이득(평균±SD)", "오른 시드", "p=0.5의 이득", "검증 손실 p=0 → 가장 좋은 p")
print("".join(pad(h, w) for h, w in zip(header, widths)))
for i, n_ in enumerate(ns):
    j = int(paired[i].mean(1).argmax())
    g = paired[i, j]
    row = (n_, ps[j], f"{g.mean():+.3f} ± {g.std():.3f}", f"{int((g > 0).sum())}/5", f"{paired[i, -1].mean():+.3f}",
           f"{table['val_loss'][i, 0].mean():.2f} → {table['val_loss'][i, j].mean():.2f}")
    print("".join(pad(c, w) for c, w in zip(row, widths)))

# %% [markdown] slideshow={"slide_type": "skip"}
# (표의 숫자는 저장된 실험에서 온 것이라 어느 컴퓨터에서나 같습니다. 라이브 실행만 새로 계산되며, 위의 허용 오차 안에서 같습니다.)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 이 절의 핵심은 "규제가 효과가 있었다"가 아니라 "언제, 무엇에 효과가 있었는지 숫자로 말한다"입니다. 데이터가 많으면 효과가 없거나 해롭고, 적을 때 손실(확신)을 크게 바꾸며, 정확도 이득은 시드 차이와 견주어야 한다는 세 줄을 칠판에 적으세요.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("06-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **06-1.** 드롭아웃을 학습 때 지우기만 하고 평가 때 $(1-p)$를 곱하는 옛 방식([Srivastava 등 2014](../SOURCES.md)의 원래 드롭아웃)으로 `apply_keep_mask(weights, keep, p, training)`를 완성하세요. `keep`은 `weights`와 같은 모양의 불리언(True = 남김)입니다. 두 방식(옛 방식과 1절의 역 드롭아웃)의 평가 출력이 어떻게 다른지 예상해 보세요.

# %%
def apply_keep_mask(weights, keep, p, training):
    raise NotImplementedError

check("06-1", apply_keep_mask)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def apply_keep_mask(weights, keep, p, training):
    if training:
        return weights * keep        # drop only: each weight's expectation is (1 - p)·w
    return weights * (1 - p)         # eval: scale every weight to that expectation

check("06-1", apply_keep_mask)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **06-2.** 가중치 행 $w = [0.5, 0.3, 0.2]$에 $p = 0.2$로 드롭아웃을 걸었습니다. 행의 합 $S$의 분산 $\mathrm{Var}[S]$를 식으로 구해 **정확한 값**을 숫자 하나로 답하세요(표본으로 잰 추정값은 받지 않습니다). 그다음 `attention_dropout`으로 뽑아 확인해 보세요.

# %%
var_row_sum = ...

check("06-2", var_row_sum)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
var_row_sum = 0.2 / (1 - 0.2) * (0.5 ** 2 + 0.3 ** 2 + 0.2 ** 2)

check("06-2", var_row_sum)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **06-3.** 6절의 `evaluate`는 `model.train(was_training)`으로 모드를 되돌립니다. 하위 모듈마다 모드가 다르면(예: 미세 조정 중 일부 드롭아웃만 평가 모드로 꺼 둔 모델) 어떻게 될까요? 중간에 예외가 나면요? `with eval_mode(module):` 블록 안에서는 모든 하위 모듈이 평가 모드이고, 블록을 나가면(예외로 나가더라도) 하위 모듈마다 **원래 모드**로 돌아가는 컨텍스트 관리자(context manager: `with` 문에 쓰는 객체) `eval_mode(module)`을 쓰세요.

# %%
@contextmanager
def eval_mode(module):
    raise NotImplementedError
    yield module  # the code before yield runs on entering the with block, the code after it on leaving

check("06-3", eval_mode)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
@contextmanager
def eval_mode(module):
    modes = [(m, m.training) for m in module.modules()]    # every submodule's own mode
    module.eval()
    try:
        yield module
    finally:                                               # also when the block raises
        for m, was_training in modes:
            m.training = was_training

check("06-3", eval_mode)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 드롭아웃 뒤 행의 합이 1이 아니면 출력 벡터의 크기도 뽑을 때마다 달라집니다. 다음 층(예: 층 정규화(LayerNorm))에는 어떤 영향이 있을까요? 지운 뒤 남은 가중치를 다시 나눠 합을 1로 맞추는 방식과 비교해 보세요.
# 2. 6절에서 데이터가 많을 때 드롭아웃은 효과가 없거나 해로웠습니다. 큰 언어 모델의 사전 학습에서 어텐션 드롭아웃을 0으로 두는 경우가 많은 이유와 연결해 보세요.
# 3. `F.scaled_dot_product_attention`이 `training` 인자를 받지 않게 설계된 이유는 무엇일까요? 함수와 모듈의 역할 나누기 관점에서 생각해 보세요.
# 4. 평가 모드에서 드롭아웃을 끄지 않고 여러 번 뽑아 평균을 내면(몬테카를로 드롭아웃) 무엇을 더 얻을 수 있을까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 "왜 다시 나누지 않는가"를 묻는 질문입니다. 3번에는 반례가 있습니다: 같은 함수형 API의 `F.dropout(x, p, training=True)`는 `training` 인자를 받습니다(기본값 True라 모듈 밖에서 부르면 평가 때도 켜진 채로 남는, 3절과 같은 함정). 그러니 "함수는 모드를 모른다"는 설계 원칙이라기보다 API마다 다른 선택이고, 어느 쪽이든 모드를 아는 것은 모듈(`self.training`)이라는 점으로 모으세요. 다시 나누면 한 항목의 기댓값이 달라진다는 점(연습문제 06-1의 오답 메시지)을 상기시키세요. 4번은 불확실성 추정으로 이어지는 열린 질문입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 드롭아웃 뒤 남은 가중치는 정확히 1/(1−p)배, 행의 합은 1이 아니다 | `attention_dropout` 한 번 뽑기, 핵심 구현과 같은 칸을 지움 |
# | 행 합의 평균은 1, 분산은 p/(1−p)·Σw² | 20000번 뽑기와 식이 5% 안에서 일치 |
# | 평가 모드 = p = 0 (비트 단위) | `torch.equal` |
# | `F.scaled_dot_product_attention(dropout_p=p)`는 평가 모드에서도 지운다 | 버그 모듈 대 `dropout_p=self.p if self.training else 0.0` |
# | p = 0.9, 키 4개면 행의 66%가 통째로 0, 그 쿼리의 출력은 영벡터 | 식 $p^T$와 측정 |
# | "10% 연결 끊기"는 남은 값 ×1.111 | 원문 바로잡기 |
# | 데이터가 충분하면(1024개) 드롭아웃은 정확도를 올리지 않고 p = 0.5는 깎는다; 적으면 검증 손실을 크게 줄이고, 작은 p가 중간 크기(128개)에서 정확도를 0.03 정도 올린다 | 데이터 6가지 × p 5가지 × 시드 5개 (스크립트, 시드별 짝 비교), 라이브 재현 |
#
# 다음 노트북(07)에서는 헤드를 여러 개로 나누는 멀티 헤드 어텐션(multi-head attention)을 다룹니다. 각 헤드가 자기 가중치 행렬을 갖고, 드롭아웃은 그 행렬마다 따로 걸립니다.
