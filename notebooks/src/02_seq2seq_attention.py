# %% [markdown]
# # 02. seq2seq와 어텐션
#
# 인코더–디코더가 입력 전체를 벡터 하나에 담으면 긴 입력에서 쉽게 무너집니다(5절: 같은 학습 예산에서). 디코더가 출력 단계마다 입력을 다시 보게 하는 어텐션(attention)이 이 병목을 어떻게 푸는지, 작은 모델의 코드를 읽고 학습 결과를 측정합니다.
#
# **학습 목표**
# - 같은 학습 예산에서 고정된 문맥 벡터(context vector) 하나가 병목이 된다는 것을 입력 길이별·출력 위치별 정확도로 측정해 보인다.
# - GRU 인코더, 가법(Bahdanau) 어텐션, 내적(Luong) 어텐션, 어텐션을 쓰는 디코더 한 단계를 코드로 읽고 쓸 수 있다.
# - seq2seq 어텐션에서 쿼리(query)는 디코더 상태, 키(key)와 밸류(value)는 인코더 은닉 상태(hidden state)라는 것을 모양(shape)으로 설명한다.
# - 학습된 정렬(alignment)을 히트맵으로 읽고, 뒤집기 과제에서 반대 대각선이 나오는 이유를 설명한다.
#
# **선수 지식**: 01번 노트북(가중 평균, 소프트맥스, 첫 어텐션 계산), RNN/GRU가 토큰을 하나씩 읽으며 은닉 상태를 갱신한다는 정도의 이해
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 오늘의 질문은 하나입니다. "입력을 벡터 하나에 담으면 무엇이 안 되는가, 어텐션은 그것을 어떻게 고치는가." 모델 코드는 노트북 안에 있고, 오래 걸리는 학습은 미리 `scripts/train_seq2seq.py`로 해 두었습니다(한 코어로 3–4분: 저장된 기록의 `total_seconds`). 노트북은 저장된 모델을 불러와 정확도를 다시 잽니다. 발표 중에 학습을 처음부터 돌릴 필요는 없습니다.

# %% slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check
from helpers.lessons.weighted_average import softmax
from helpers.plots import attention_heatmap

setup()

# %% [markdown]
# ## 1. 과제: 글자 뒤집기
#
# seq2seq(sequence-to-sequence) 모델([Cho 등 2014](../SOURCES.md), [Sutskever 등 2014](../SOURCES.md))은 두 부분으로 되어 있습니다. 인코더(encoder)는 입력 시퀀스(sequence)를 토큰(token) 하나씩 읽으며 은닉 상태를 만들고, 디코더(decoder)는 그 정보를 받아 출력 토큰을 하나씩 만듭니다. 번역이 대표적인 예입니다.
#
# 여기서는 번역 대신 **뒤집기** 과제를 씁니다. 입력은 A–T 20개 글자로 된 길이 1–20의 무작위 시퀀스이고, 정답은 그것을 거꾸로 쓴 것입니다.
#
# - 데이터를 코드로 만들 수 있고(시드 고정), 노트북 안에서 정확도를 바로 잴 수 있습니다.
# - **정답 정렬을 미리 압니다.** 길이 $L$인 입력에서 출력 $t$번째 글자는 입력 $L-1-t$번째 글자입니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 길이가 다른 시퀀스를 한 배치로 묶으려고 짧은 시퀀스 뒤를 패딩(`·`)으로 채우고, 어느 칸이 진짜 글자인지는 아래의 패딩 마스크(padding mask) `padding_mask`(True = 진짜 토큰)로 표시합니다. 이 마스크는 뒤의 노트북들(09번의 마스크 등)에서도 그대로 씁니다.

# %% tags=["save"]
import torch


def padding_mask(lengths, t=None):  # (B,) -> (B, T) boolean
    """True at the first lengths[b] positions (real tokens), False at padding; t defaults to the longest."""
    lengths = torch.as_tensor(lengths)
    t = int(lengths.max()) if t is None else t
    return torch.arange(t) < lengths[:, None]                                       # (B, T)


# %% tags=["save"] slideshow={"slide_type": "subslide"}
PAD, BOS, FIRST = 0, 1, 2  # token ids; the letters A..T are 2..21
NUM_SYMBOLS = 20


def make_reversal_batch(n, min_len, max_len, *, seed):
    """(src, tgt, lengths): n random letter sequences and their reversals, PAD after each length."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(min_len, max_len + 1, (n,), generator=g)                 # (B,)
    t = int(lengths.max())
    tokens = torch.randint(FIRST, FIRST + NUM_SYMBOLS, (n, t), generator=g)          # (B, T)
    mask = padding_mask(lengths, t)                                                  # (B, T): True = letter
    src = tokens.masked_fill(~mask, PAD)
    index = (lengths[:, None] - 1 - torch.arange(t)).clamp(min=0)                    # output t reads L-1-t
    return src, src.gather(1, index).masked_fill(~mask, PAD), lengths


def decode_tokens(ids):
    """Token ids -> labels: letters, '·' for PAD, '<s>' for BOS."""
    return ["·" if i == PAD else "<s>" if i == BOS else chr(ord("A") + i - FIRST)
            for i in torch.as_tensor(ids).reshape(-1).tolist()]

# %% slideshow={"slide_type": "subslide"}
src, tgt, lengths = make_reversal_batch(4, 3, 9, seed=0)
for s, t, n in zip(src, tgt, lengths.tolist()):
    print(f"L={n}:  입력 {''.join(decode_tokens(s))}  →  정답 {''.join(decode_tokens(t))}")
print(padding_mask(lengths).int())

# %% slideshow={"slide_type": "skip"}
assert all(t[:n].tolist() == s[:n].flip(0).tolist() for s, t, n in zip(src, tgt, lengths.tolist()))
assert (src[~padding_mask(lengths)] == PAD).all()

# %% [markdown]
# ## 2. 인코더와 고정 문맥 벡터
#
# 인코더는 양방향(bidirectional) GRU입니다. 입력 위치 $j$마다 앞에서 읽은 상태 $\overrightarrow{h}_j$와 뒤에서 읽은 상태 $\overleftarrow{h}_j$를 이어 붙여 은닉 상태 $h_j = [\overrightarrow{h}_j; \overleftarrow{h}_j]$를 만듭니다($2H = 128$차원). 두 방향이 마지막으로 읽은 상태를 이어 붙인 $c = [\overrightarrow{h}_{L-1}; \overleftarrow{h}_0]$가 어텐션 없는 디코더가 받는 **문맥 벡터 하나**입니다.

# %% tags=["save"]
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class Encoder(nn.Module):
    """Bidirectional GRU: one state per input position, plus the fixed context c."""

    def __init__(self, emb_dim, hidden_dim):
        super().__init__()
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, emb, lengths):                     # emb (B, T, E), lengths (B,)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, last = self.gru(packed)                     # last (2, B, H): forward, backward
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=emb.shape[1])
        fixed = torch.cat([last[0], last[1]], dim=-1)    # (B, 2H): c = [h→_{L-1}; h←_0]
        return states, fixed                             # states (B, T, 2H), zero at padding

# %% [markdown] slideshow={"slide_type": "subslide"}
# 어텐션이 없는 디코더는 출력 단계 $t$마다
#
# $$s_t = \mathrm{GRU}\big(s_{t-1},\ [\,\mathrm{emb}(y_{t-1});\ c\,]\big), \qquad p(y_t) = \mathrm{softmax}\big(W_o [\,s_t;\ c\,]\big)$$
#
# 를 계산합니다($\mathrm{emb}(y_{t-1})$는 직전 출력 글자의 임베딩(embedding), 첫 상태는 $s_{-1} = \tanh(W_b\, c)$). $c$는 모든 단계에서 **같은 벡터**입니다. 입력이 길이 3이든 20이든 디코더에 건너가는 정보는 128개의 수로 고정되어 있고, 출력 20개를 모두 이 한 벡터에서 꺼내야 합니다. 이것이 **고정 문맥 벡터의 병목**이고, 5절에서 측정합니다.

# %%
seed_everything(0)
enc, emb = Encoder(emb_dim=16, hidden_dim=64), torch.nn.Embedding(22, 16)
s, _, n = make_reversal_batch(2, 3, 7, seed=1)
with torch.no_grad():
    states, fixed = enc(emb(s), n)
print(f"입력 {tuple(s.shape)}, 길이 {n.tolist()} → 인코더 상태 {tuple(states.shape)}, 문맥 벡터 {tuple(fixed.shape)}")

# %% slideshow={"slide_type": "skip"}
short = int(n.argmin())
assert states.shape == (2, s.shape[1], 128) and fixed.shape == (2, 128)
assert (states[short, int(n[short]):] == 0).all()                            # padding: zero states
torch.testing.assert_close(fixed[short, :64], states[short, int(n[short]) - 1, :64])  # forward half: h→_{L-1}
torch.testing.assert_close(fixed[short, 64:], states[short, 0, 64:])                  # backward half: h←_0

# %% [markdown]
# ## 3. 어텐션: 출력 단계마다 새 문맥 벡터
#
# 해결책은 문맥 벡터를 단계마다 새로 만드는 것입니다. 디코더가 $t$번째 글자를 만들기 직전에, 지금 상태 $s_{t-1}$로 입력의 모든 은닉 상태 $h_0, \dots, h_{L-1}$에 점수(score)를 매기고, 소프트맥스(softmax)로 가중치(weight)를 만들어 은닉 상태의 가중합(weighted sum)을 문맥 벡터로 씁니다.
#
# $$e_{tj} = \mathrm{score}(s_{t-1},\ h_j), \qquad \alpha_{tj} = \frac{\exp(e_{tj})}{\sum_{k} \exp(e_{tk})}, \qquad c_t = \sum_{j} \alpha_{tj}\, h_j$$
#
# 01번 노트북의 두 단계(가중치 계산, 가중합) 그대로입니다. 가중치 행렬 $\alpha$(행 = 출력 단계, 열 = 입력 위치)를 **정렬**이라고 부릅니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# | 역할 | seq2seq 어텐션에서 | 모양 (배치 $B$, 입력 길이 $T$) |
# |---|---|---|
# | 쿼리 | 디코더 상태 $s_{t-1}$: "지금 무엇을 쓸 차례인가" | $(B, H)$ |
# | 키 | 인코더 은닉 상태 $h_j$: 점수를 매길 기준 | $(B, T, 2H)$ |
# | 밸류 | 같은 인코더 은닉 상태 $h_j$: 섞여서 전달될 내용 | $(B, T, 2H)$ |
# | 가중치 $\alpha_{t\cdot}$ | 쿼리 하나당 입력 위치 $T$개 위의 분포, 합 1 | $(B, T)$ |
#
# 원문들은 소프트맥스를 거친 $\alpha$도 "Attention Score"라고 부르지만, 이 과정에서는 소프트맥스 전의 $e$를 점수, 후의 $\alpha$를 가중치라고 구분합니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 점수 함수가 무엇이든, 점수에서 가중합까지는 같습니다. 그 공통 부분이 `attend_scores`입니다(소프트맥스는 01번의 `softmax`). 패딩 칸은 점수를 $-\infty$로 바꿔 $e^{-\infty} = 0$의 가중치를 받습니다.

# %% tags=["save"]
from helpers.lessons.weighted_average import softmax


def attend_scores(scores, values, mask=None):
    """Softmax over the input positions, then the weighted sum of the values."""
    if mask is not None:                                 # mask (B, T): True = real token
        scores = scores.masked_fill(~mask, float("-inf"))  # e^-inf = 0: padding gets no weight
    weights = softmax(scores, dim=-1)                    # (B, T), each row sums to 1
    context = (weights[:, None, :] @ values).squeeze(1)  # (B, 1, T) @ (B, T, d_v) -> (B, d_v)
    return context, weights

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 점수 함수 1: 가법 어텐션
#
# **가법 어텐션**(additive attention, [Bahdanau 등 2015](../SOURCES.md))은 쿼리와 키를 같은 $d_a$차원 공간으로 옮겨 더하고, 은닉층 하나짜리 신경망으로 점수를 매깁니다.
#
# $$e_j = v^\top \tanh\big(W_q\, q + W_k\, k_j\big), \qquad W_q \in \mathbb{R}^{d_a \times d_q},\ W_k \in \mathbb{R}^{d_a \times d_k},\ v \in \mathbb{R}^{d_a}$$

# %% tags=["save"]
class AdditiveAttention(nn.Module):
    """Bahdanau: e_j = vᵀ tanh(W_q q + W_k k_j), a one-hidden-layer network scores each key."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def scores(self, query, keys):                       # query (B, d_q), keys (B, T, d_k)
        hidden = torch.tanh(self.W_q(query)[:, None, :] + self.W_k(keys))  # (B, T, d_a)
        return self.v(hidden).squeeze(-1)                # (B, T)

    def forward(self, query, keys, values, mask=None):
        return attend_scores(self.scores(query, keys), values, mask)  # (B, d_v), (B, T)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 점수 함수 2: 내적 어텐션
#
# **내적 어텐션**(dot-product attention, [Luong 등 2015](../SOURCES.md))은 쿼리와 키의 내적(dot product)입니다. 디코더 상태($H = 64$)와 인코더 상태($2H = 128$)의 차원이 다르므로, 학습되는 행렬 $W$를 끼운 "general" 형태 $e_j = (W q)^\top k_j$를 씁니다. 모든 키의 점수가 행렬곱 한 번입니다. 빌려 오는 것은 Luong 등의 **점수 함수**뿐이고, 디코더 구조는 두 모델이 같습니다(4절).

# %% tags=["save"]
class DotAttention(nn.Module):
    """Luong "general": e_j = (W q)·k_j; W maps the decoder size d_q to the key size d_k."""

    def __init__(self, query_dim, key_dim):
        super().__init__()
        self.W = nn.Linear(query_dim, key_dim, bias=False)

    def scores(self, query, keys):                       # query (B, d_q), keys (B, T, d_k)
        q = self.W(query)                                # (B, d_k)
        return (keys @ q[:, :, None]).squeeze(-1)        # (B, T, d_k) @ (B, d_k, 1) -> (B, T)

    def forward(self, query, keys, values, mask=None):
        return attend_scores(self.scores(query, keys), values, mask)  # (B, d_v), (B, T)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 길이 6과 4인 두 시퀀스(둘째 시퀀스의 마지막 두 칸은 패딩)로 두 모듈을 호출합니다. 모양은 같습니다: `(query (B, d_q), keys (B, T, d_k), values (B, T, d_v), mask (B, T))` → `(context (B, d_v), weights (B, T))`.

# %%
seed_everything(2)
query = torch.randn(2, 3, dtype=torch.float64)     # (B=2, d_q=3): decoder states
keys = torch.randn(2, 6, 5, dtype=torch.float64)   # (B=2, T=6, d_k=5): encoder states, also the values
mask = padding_mask(torch.tensor([6, 4]), 6)       # (B, T)
additive = AdditiveAttention(3, 5, hidden_dim=8).double()
general = DotAttention(3, 5).double()
with torch.no_grad():
    ctx_add, w_add = additive(query, keys, keys, mask)
    ctx_dot, w_dot = general(query, keys, keys, mask)
print("가법 가중치:\n", w_add.numpy().round(3))
print("내적(general) 가중치:\n", w_dot.numpy().round(3))

# %% slideshow={"slide_type": "skip"}
for w, ctx in ((w_add, ctx_add), (w_dot, ctx_dot)):
    torch.testing.assert_close(w.sum(-1), torch.ones(2, dtype=torch.float64))
    assert (w[~mask] == 0).all()
    torch.testing.assert_close(ctx, torch.einsum("bt,btd->bd", w, keys))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 패딩 칸의 가중치는 정확히 0이고, 남은 칸의 가중치 합이 1입니다. 내적 점수는 스케일 $1/\sqrt{d_k}$만 빼면 스케일드 닷프로덕트 어텐션(scaled dot-product attention)과 같은 계산입니다. 이 노트북의 `DotAttention`과 PyTorch의 `F.scaled_dot_product_attention`이 같은 값을 내는지 확인합니다(PyTorch 쪽은 `scale=1.0`으로 나누지 않게 합니다). PyTorch의 불리언 마스크도 True가 "볼 수 있음"입니다.

# %%
q_proj = general.W(query).detach()[:, None, :]   # (B, 1, d_k): W q, one query per batch item
torch_out = F.scaled_dot_product_attention(q_proj, keys, keys, attn_mask=mask[:, None, :], scale=1.0)  # (B, 1, d_k)
torch_w = torch.softmax((q_proj @ keys.transpose(1, 2))[:, 0].masked_fill(~mask, float("-inf")), dim=-1)  # (B, T)
diff = max((ctx_dot - torch_out[:, 0]).abs().max(), (w_dot - torch_w).abs().max()).item()
assert diff < 1e-12
print("DotAttention = torch SDPA: 최대 차이 < 1e-12 (float64 반올림 수준)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: [원문 002](../SOURCES.md)는 Bahdanau 등의 논문이 유사도를 "내적(Dot Product)"으로 구한다고 설명합니다. 그 논문의 점수는 위의 **가법** 점수 $v^\top\tanh(W s_{t-1} + U h_j)$이고, 내적 점수를 체계적으로 쓴 것은 같은 해의 Luong 등입니다. 둘은 실제로 다른 함수입니다: 쿼리가 영벡터이면 $q^\top k$나 $(Wq)^\top k$는 언제나 0이지만, 가법 점수는 $v^\top\tanh(W_k k_j)$로 키마다 다릅니다.

# %%
zero_q = torch.zeros(2, 3, dtype=torch.float64)
with torch.no_grad():
    add_scores, dot_scores = additive.scores(zero_q, keys), general.scores(zero_q, keys)
print("q = 0일 때 가법 점수:", add_scores[0].numpy().round(3))
print("q = 0일 때 내적 점수:", dot_scores[0].numpy().round(3))
assert (dot_scores == 0).all() and add_scores.std() > 0.01
print("파라미터 수  가법:", sum(p.numel() for p in additive.parameters()),
      " 내적(general):", sum(p.numel() for p in general.parameters()))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 두 점수 함수의 차이를 "작은 신경망이 점수를 매긴다(가법)" 대 "벡터끼리 얼마나 같은 방향인가(내적)"로 요약하세요. 트랜스포머가 내적 쪽을 택한 이유(행렬곱 한 번, 그리고 $\sqrt{d_k}$로 나누는 이유)는 04번 노트북에서 다룹니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 역할을 뒤집으면: 원문 002의 Query·Key·Value
#
# > **원문 바로잡기**: 원문 002의 Query·Key·Value 절은 번역 예에서 "번역할 정보"(인코더 쪽)를 쿼리이자 밸류로, 직전 출력값(또는 디코더 은닉 상태)을 키로 둡니다. 그대로 옮기면 키는 디코더 상태 **1개**, 밸류는 인코더 상태 **$T$개**(아래 예에서는 6개)입니다. 키 하나에 밸류 하나가 짝을 이뤄야 하므로(가중치 $(T_q, T_k)$ @ 밸류 $(T_k, d_v)$) 계산되지 않습니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(1)
dec_state = torch.randn(1, 1, 4, dtype=torch.float64)    # (B=1, T=1, d): one decoder state
enc_states = torch.randn(1, 6, 4, dtype=torch.float64)   # (B=1, T=6, d): six encoder states

w_right = softmax(dec_state @ enc_states.transpose(1, 2))   # (1, 1, 6): Q = decoder, K = V = encoder, Luong's q·k
print("바른 역할: 가중치", tuple(w_right.shape), "=", w_right[0, 0].numpy().round(3))
try:
    F.scaled_dot_product_attention(enc_states, dec_state, enc_states)   # Q = encoder, K = decoder, V = encoder
except RuntimeError as err:
    print(f"원문의 역할 (torch SDPA): {type(err).__name__}, 키 {tuple(dec_state.shape)}와 밸류 {tuple(enc_states.shape)}의 길이가 다름")

# %% slideshow={"slide_type": "skip"}
try:
    F.scaled_dot_product_attention(enc_states, dec_state, enc_states)
    raise AssertionError("the seed's roles should not compute")
except RuntimeError:
    pass
torch.testing.assert_close(w_right.sum(), torch.tensor(1.0, dtype=torch.float64))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 모양을 맞추려고 밸류까지 디코더 상태로 바꾸면(Q = 인코더, K = V = 디코더) 계산은 되지만, 쿼리마다 키가 하나뿐이라 소프트맥스가 언제나 1을 내고 **고르는 일 자체가 사라집니다.** 출력은 디코더 상태의 복사본일 뿐 입력에서 아무것도 가져오지 않습니다.

# %%
w_swapped = softmax(enc_states @ dec_state.transpose(1, 2))   # (1, 6, 1): one key per query
out_swapped = F.scaled_dot_product_attention(enc_states, dec_state, dec_state)   # (1, 6, 4)
print("Q = 인코더, K = V = 디코더: 가중치", tuple(w_swapped.shape), "→ 모두", w_swapped.unique().tolist())
assert torch.equal(w_swapped, torch.ones(1, 6, 1, dtype=torch.float64)) and torch.equal(out_swapped, dec_state.expand(1, 6, 4))

# %% [markdown]
# 어텐션이 고르는 대상은 키·밸류 쪽이고, 고르는 주체는 쿼리입니다. seq2seq에서 고르는 대상은 입력(인코더 상태 $T$개)이고, 주체는 지금 출력을 만드는 디코더 상태입니다. 쿼리와 키·밸류가 서로 다른 시퀀스에서 오므로 이것은 크로스 어텐션(cross-attention)입니다. [원문 001](../SOURCES.md)은 인코더의 "임베딩 토큰"과 디코더를 내적한다고 쓰는데, 점수를 매기는 대상은 임베딩이 아니라 문맥을 읽은 인코더 **은닉 상태**입니다.

# %% [markdown]
# ## 4. 디코더 한 단계와 전체 모델
#
# 디코더 한 단계는 세 부분입니다.
#
# 1. 지금 상태 $s_{t-1}$을 쿼리로 문맥 벡터를 만듭니다(어텐션이 없으면 고정된 $c$). 세 모델이 다른 곳은 여기뿐입니다.
# 2. 직전 글자의 임베딩과 문맥 벡터를 이어 붙여 GRU 셀을 한 번 돌립니다: $s_t$.
# 3. 새 상태와 문맥 벡터로 다음 글자의 점수(로짓(logit))를 냅니다.
#
# 이것은 Bahdanau 등의 디코더 구조입니다. 쿼리는 GRU를 돌리기 **전의** 상태 $s_{t-1}$이고, 문맥 벡터는 GRU의 입력으로 들어갑니다. Luong 등은 순서가 반대입니다. RNN을 먼저 한 단계 돌려 얻은 $h_t$를 쿼리로 쓰고, 문맥 벡터는 $\tilde h_t = \tanh(W_c[c_t; h_t])$로 출력 쪽에서 합칩니다. 그러니 이 노트북의 "내적 모델"은 Luong의 general 점수를 Bahdanau 식 디코더에 넣은 혼합형입니다. 일부러 그렇게 했습니다. 두 모델이 점수 함수 하나만 다르므로, 결과의 차이를 점수 함수 탓으로 돌릴 수 있습니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
class Decoder(nn.Module):
    """A GRU cell that writes one letter per step; with attention the context is new every step."""

    def __init__(self, emb_dim, hidden_dim, vocab, attention):
        super().__init__()
        kv = 2 * hidden_dim                              # encoder states are [→; ←]
        self.cell = nn.GRUCell(emb_dim + kv, hidden_dim)
        self.attention = None                            # "none": one fixed context vector
        if attention == "additive":
            self.attention = AdditiveAttention(hidden_dim, kv, hidden_dim)
        elif attention == "dot":
            self.attention = DotAttention(hidden_dim, kv)
        self.out = nn.Linear(hidden_dim + kv, vocab)

    def step(self, emb_prev, state, keys, mask, fixed):
        """emb_prev (B, E), state s_{t-1} (B, H), keys = values = encoder states (B, T, 2H)."""
        if self.attention is None:
            context, weights = fixed, None               # (B, 2H): the same c at every step
        else:
            context, weights = self.attention(state, keys, keys, mask)  # query = s_{t-1}
        state = self.cell(torch.cat([emb_prev, context], dim=-1), state)  # (B, H): s_t
        logits = self.out(torch.cat([state, context], dim=-1))            # (B, V)
        return logits, state, weights

# %% [markdown] slideshow={"slide_type": "subslide"}
# 전체 모델은 임베딩(인코더와 디코더가 함께 씀), 인코더, 첫 상태를 만드는 `bridge`, 디코더입니다. 학습할 때는 매 단계 직전 **정답** 글자를 넣고(교사 강요(teacher forcing)), 평가할 때는 모델이 방금 낸 글자를 넣습니다(탐욕적 디코딩(greedy decoding, 그리디 디코딩)).

# %% tags=["save"]
class Seq2Seq(nn.Module):
    """Embedding + encoder + decoder; attention is "none", "additive" or "dot"."""

    def __init__(self, attention="additive", emb_dim=16, hidden_dim=64):
        super().__init__()
        self.config = {"attention": attention, "emb_dim": emb_dim, "hidden_dim": hidden_dim}
        vocab = FIRST + NUM_SYMBOLS
        self.embed = nn.Embedding(vocab, emb_dim, padding_idx=PAD)  # shared by both sides
        self.encoder = Encoder(emb_dim, hidden_dim)
        self.bridge = nn.Linear(2 * hidden_dim, hidden_dim)  # first state s_{-1} = tanh(W_b c)
        self.decoder = Decoder(emb_dim, hidden_dim, vocab, attention)

    def forward(self, src, lengths, tgt=None):           # src (B, T); with tgt: teacher forcing
        keys, fixed = self.encoder(self.embed(src), lengths)  # (B, T, 2H), (B, 2H)
        mask = padding_mask(lengths, src.shape[1])       # (B, T)
        state, prev = torch.tanh(self.bridge(fixed)), torch.full_like(lengths, BOS)
        logits, weights = [], []
        for t in range(src.shape[1]):
            step_logits, state, w = self.decoder.step(self.embed(prev), state, keys, mask, fixed)
            logits.append(step_logits)
            weights.append(w)
            prev = tgt[:, t] if tgt is not None else step_logits.argmax(-1)
        w = None if weights[0] is None else torch.stack(weights, dim=1)  # (B, T_out, T_in)
        return torch.stack(logits, dim=1), w             # (B, T_out, V)

# %% [markdown] slideshow={"slide_type": "skip"}
# 학습 루프와 평가 함수(정확도를 세는 부분)는 새로운 개념이 없으므로 접어 두었습니다. 손실(loss)은 정답 글자의 교차 엔트로피(cross-entropy)이고, 옵티마이저(optimizer)는 Adam입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import numpy as np
import torch.nn.functional as F


def train_steps(model, steps, *, seed, batch_size=64, min_len=1, max_len=20, lr=3e-3,
                cosine=False, log_every=0):
    """Adam with teacher forcing on fresh seeded batches; returns the loss of every step."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for step in range(steps):
        if cosine:  # decay to 0: late steps polish instead of bouncing around
            for group in opt.param_groups:
                group["lr"] = lr * 0.5 * (1 + np.cos(np.pi * step / steps))
        src, tgt, lengths = make_reversal_batch(batch_size, min_len, max_len, seed=seed * 1_000_003 + step)
        logits, _ = model(src, lengths, tgt)             # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if log_every and (step + 1) % log_every == 0:
            print(f"step {step + 1:5d}  loss {np.mean(losses[-log_every:]):.3f}", flush=True)
    return losses


@torch.no_grad()
def predict(model, length, n, seed, teacher_forcing=False):
    """Greedy (or teacher-forced) predictions for n seeded inputs of one length."""
    src, tgt, lengths = make_reversal_batch(n, length, length, seed=seed)
    logits, weights = model.eval()(src, lengths, tgt if teacher_forcing else None)
    return src, tgt, logits.argmax(-1), weights


def accuracy_by_length(model, lengths, *, n=100, seed=1234):
    """Greedy decoding: token and whole-sequence accuracy for each input length."""
    out = {"length": [], "token": [], "sequence": []}
    for length in lengths:
        _, tgt, pred, _ = predict(model, length, n, seed + length)
        correct = pred == tgt                            # (n, L)
        out["length"].append(length)
        out["token"].append(round(correct.double().mean().item(), 4))
        out["sequence"].append(round(correct.all(dim=1).double().mean().item(), 4))
    return out


def accuracy_by_position(model, length, *, n=100, seed=1234, teacher_forcing=False):
    """Token accuracy at each output step, shape (length,)."""
    _, tgt, pred, _ = predict(model, length, n, seed + length, teacher_forcing)
    return (pred == tgt).double().mean(dim=0).numpy()


def checkpoint(model):
    """What torch.save stores: the config and the weights."""
    return {"config": dict(model.config), "state_dict": model.state_dict()}


def model_from_checkpoint(ckpt, dtype=torch.float64):
    """Rebuild a stored model in eval mode (float64 by default: the same argmax on any CPU)."""
    model = Seq2Seq(**ckpt["config"])
    model.load_state_dict(ckpt["state_dict"])
    return model.to(dtype).eval()

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt

STYLE = {"none": ("어텐션 없음 (고정 문맥 벡터)", "tab:red", "o"),
         "additive": ("가법 어텐션 (Bahdanau)", "tab:blue", "s"),
         "dot": ("내적 어텐션 (Luong general)", "tab:green", "^")}


def draw_accuracy_vs_length(results, *, ax, metric="sequence", title="입력 길이에 따른 정확도", train_max=None):
    """One line per model: accuracy against input length ({kind: accuracy dict})."""
    for kind, res in results.items():
        label, color, marker = STYLE[kind]
        ax.plot(res["length"], res[metric], marker=marker, color=color, label=label, markersize=4)
    if train_max is not None:
        ax.axvline(train_max, color="gray", linestyle=":", linewidth=1)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("입력 길이 L")
    ax.set_ylabel("시퀀스 정확도" if metric == "sequence" else "토큰 정확도")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower left")
    return ax


def draw_position_accuracy(forced, greedy, *, ax):
    """Token accuracy per output step: teacher-forced ({L: (L,) array}) solid, greedy dashed."""
    for (n, acc), color in zip(forced.items(), ["tab:gray", "tab:orange", "tab:red"]):
        ax.plot(range(n), acc, marker="o", markersize=3, color=color, label=f"L={n}, 직전 정답 입력")
    ax.plot(range(len(greedy)), greedy, linestyle="--", color="tab:red", label=f"L={len(greedy)}, 자기 출력 입력")
    ax.set_xticks(range(0, len(greedy), 2))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("출력 단계 t")
    ax.set_ylabel("토큰 정확도")
    ax.set_title("출력 위치별 정확도 (L마다 200개)")
    ax.legend(fontsize=7, loc="upper right")
    return ax


def draw_loss_curves(models, *, ax):
    """Stored training curves ({kind: {"loss_curve": {"step", "loss"}}}) on a log axis."""
    for kind, r in models.items():
        ax.plot(r["loss_curve"]["step"], r["loss_curve"]["loss"], color=STYLE[kind][1], label=STYLE[kind][0])
    ax.set_yscale("log")
    ax.set_xlabel("학습 단계")
    ax.set_ylabel("손실 (로그 축)")
    ax.set_title("학습 곡선 (저장된 기록)")
    ax.legend(fontsize=7, loc="lower left")
    return ax


def alignment_of(model, length, seed):
    """Weights (L, L), input labels and predicted labels for one seeded example."""
    s, _, n = make_reversal_batch(1, length, length, seed=seed)
    with torch.no_grad():
        logits, w = model(s, n)
    return w[0], decode_tokens(s[0]), decode_tokens(logits[0].argmax(-1))


def alignment_panels(ax_map, ax_bar, weights, src_labels, tgt_labels):
    """Draw the alignment and one row's bars once; return update(step) that changes them in place."""
    w = np.asarray(weights, dtype=float)                 # (T_out, T_in)
    t_in = w.shape[1]
    ax_map.imshow(w, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    ax_map.set_xticks(range(t_in), src_labels)
    ax_map.set_yticks(range(w.shape[0]), tgt_labels)
    ax_map.set_xlabel("입력 (키·밸류)")
    ax_map.set_ylabel("출력 단계 (쿼리)")
    frame = ax_map.add_patch(plt.Rectangle((-0.5, -0.5), t_in, 1, fill=False, edgecolor="tab:red", linewidth=2))
    bars = ax_bar.bar(range(t_in), w[0], color="tab:blue")
    texts = [ax_bar.text(j, 0, "", ha="center", va="bottom", fontsize=7) for j in range(t_in)]
    ax_bar.set_xticks(range(t_in), src_labels)
    ax_bar.set_xlabel("입력 위치")
    ax_bar.set_ylim(0, 1.15)
    ax_bar.set_yticks([0, 0.5, 1])
    ax_bar.set_ylabel("가중치")
    title = ax_bar.set_title(" ", fontsize=10)

    def update(step):
        row = w[step]
        frame.set_y(step - 0.5)
        for bar, text, x in zip(bars, texts, row):
            bar.set_height(x)
            text.set_y(x)
            text.set_text(f"{x:.2f}" if x >= 0.05 else "")  # label only the visible bars
        j = int(row.argmax())
        title.set_text(f"단계 {step}: 출력 '{tgt_labels[step]}' ← 입력 {j}번 '{src_labels[j]}'")
        return row

    update(0)
    return update


def alignment_explorer(weights, src_labels, tgt_labels):
    """A slider over the decoder step; the frame and the bars follow it."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.3), dpi=80)
    update = alignment_panels(*axes, weights, src_labels, tgt_labels)
    fig.tight_layout()
    slider = widgets.IntSlider(value=0, min=0, max=len(tgt_labels) - 1, description="출력 단계")
    return Explorer(fig, update, {"step": slider})

# %% [markdown] slideshow={"slide_type": "subslide"}
# 학습이 실제로 손실을 줄이는지 작은 모델로 몇 초만 돌려 봅니다(은닉 차원 32, 길이 1–6, 30단계).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: (재현성) 아래의 작은 학습과 5절 이후의 평가는 float64로 돌립니다. float32 학습은 CPU의 벡터 폭·스레드 수에 따라 마지막 자릿수가 달라지고 그 차이가 단계마다 쌓이지만, float64에서는 그 차이가 소수점 둘째 자리까지 올라오지 않아 어느 컴퓨터에서나 같은 숫자와 같은 글자가 나옵니다. 저장된 모델을 학습한 환경(torch 버전, CPU 명령어 집합, 스레드 수)은 5절의 첫 줄에 찍힙니다.

# %%
seed_everything(0)
live = Seq2Seq("additive", hidden_dim=32).double()
live_losses = train_steps(live, 30, seed=7, batch_size=32, max_len=6, lr=1e-2)
blocks = np.array(live_losses).reshape(3, 10).mean(axis=1)
print("10단계마다 평균 손실:", blocks.round(2))
assert blocks[-1] < blocks[0] - 0.5

# %% [markdown]
# ## 5. 병목 측정: 어텐션 없는 모델
#
# `scripts/train_seq2seq.py`가 위의 코드로 세 모델(임베딩 16, $H = 64$, 같은 시드의 같은 배치, 길이 1–20, 1000단계)을 학습해 `data/`에 저장해 두었습니다. 불러와서 새로 뽑은 시험 데이터로 다시 잽니다. **시퀀스 정확도**는 출력 전체가 정답과 똑같은 비율, **토큰 정확도**는 글자 단위로 맞힌 비율입니다.

# %%
results = load_json("seq2seq_results.json")
config, trained_on = results["config"], results["setup"]
models = {kind: model_from_checkpoint(load_tensor_dict(f"seq2seq_{kind}.pt")) for kind in results["models"]}
MAX_LEN = config["max_len"]
print(f"학습: {config['steps']}단계, 길이 1–{MAX_LEN}, torch {trained_on['torch']}, {trained_on['cpu_capability']}, "
      f"스레드 {trained_on['threads']}개 (저장된 기록)")

N_LIVE, live_lengths = 50, [4, 8, 12, 16, 20]
plain_live = accuracy_by_length(models["none"], live_lengths, n=N_LIVE, seed=99)
for n, tok, seq in zip(plain_live["length"], plain_live["token"], plain_live["sequence"]):
    print(f"L={n:2d}  토큰 정확도 {tok:.3f}  맞힌 시퀀스 {round(seq * N_LIVE):2d}/{N_LIVE}")

# %% slideshow={"slide_type": "skip"}
live_seq = dict(zip(plain_live["length"], plain_live["sequence"]))
assert live_seq[4] > 0.9 and 0.3 < live_seq[8] < 0.8 and live_seq[12] < 0.15 and live_seq[20] == 0

# %% [markdown] slideshow={"slide_type": "subslide"}
# 짧은 입력은 거의 다 맞히지만, 길이 8에서 시퀀스의 절반 가까이를 틀리고 길이 12부터는 통째로 맞히는 출력이 거의 없습니다.
#
# 이 숫자에는 두 효과가 섞여 있습니다. 디코더는 자기가 방금 낸 글자를 다음 단계의 입력으로 받으므로, 한 번 틀리면 그 뒤도 흔들립니다. 문맥 벡터의 한계만 보려면 **매 단계 직전 정답 글자를 넣어 주고**(교사 강요) 출력 위치별로 정확도를 잽니다. 그래도 틀린다면 이 디코더가 **이 학습 예산(1000단계)으로는** 그 글자를 $c$에서 꺼내지 못했다는 뜻입니다. 정보가 $c$에 아예 없다는 증명은 아닙니다.

# %% slideshow={"slide_type": "subslide"}
plain = results["models"]["none"]
forced = {n: accuracy_by_position(models["none"], n, n=200, seed=7, teacher_forcing=True) for n in (5, 10, MAX_LEN)}
greedy = np.array(plain["position_accuracy"])  # (MAX_LEN,): stored, greedy decoding at L = MAX_LEN

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4))
draw_accuracy_vs_length({"none": plain["accuracy"]}, metric="token", ax=ax1, train_max=MAX_LEN,
                        title="어텐션 없음: 길이마다 200개 (저장)")
draw_position_accuracy(forced, greedy, ax=ax2)
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "subslide"}
acc = dict(zip(plain["accuracy"]["length"], plain["accuracy"]["sequence"]))
print(f"시퀀스 정확도 (저장, 길이마다 200개)  L=5: {acc[5]:.2f}  L=10: {acc[10]:.2f}  L={MAX_LEN}: {acc[MAX_LEN]:.2f}")
print("직전 정답을 넣었을 때 평균 토큰 정확도:", {n: round(float(a.mean()), 2) for n, a in forced.items()})
print(f"L={MAX_LEN} 자기 출력을 넣었을 때: 첫 단계 {greedy[0]:.2f}, 마지막 단계 {greedy[-1]:.2f}")
curve = plain["loss_curve"]
steps_arr, loss_arr = np.array(curve["step"]), np.array(curve["loss"])
loss_blocks = [float(loss_arr[(steps_arr > a) & (steps_arr <= a + 200)].mean()) for a in (400, 600, 800)]
print("어텐션 없는 모델의 손실, 200단계씩 평균 (401–600, 601–800, 801–1000):", [round(b, 2) for b in loss_blocks])
print(f"글자 20개(A–T 20종)의 정보량: 20 · log2(20) = {20 * np.log2(20):.1f}비트, 문맥 벡터의 수: {2 * config['hidden_dim']}개")

# %% slideshow={"slide_type": "skip"}
assert acc[5] > 0.9 and acc[10] < 0.3 and acc[MAX_LEN] == 0
assert forced[5].mean() > 0.95 and 0.4 < forced[MAX_LEN].mean() < 0.6  # "절반 가까이"
f20 = forced[MAX_LEN]
assert f20.argmax() == 0 and f20[-1] > f20[10:18].min() + 0.05  # best at t=0, dips, recovers a little at the end
assert forced[MAX_LEN].mean() > greedy.mean() + 0.1 and greedy[0] > greedy[-1] + 0.5
assert forced[10][-1] > forced[10][0] + 0.03 and forced[10].argmax() == 9  # at L=10 the last step is best, not the first
assert loss_blocks[0] > loss_blocks[1] + 0.05 and loss_blocks[1] > loss_blocks[2] + 0.03  # still falling at the end

# %% [markdown] slideshow={"slide_type": "subslide"}
# 직전 정답을 넣어 줘도 길이 20에서는 글자의 절반 가까이를 틀립니다. 길이 5에서는 거의 다 맞히던 같은 모델입니다. 128개의 수에 글자 20개를 담아 두고, 출력 단계마다 그중 알맞은 하나를 꺼내는 일을 GRU가 **이 학습 예산(1000단계) 안에** 해내지 못한 것입니다. 길이 20에서는 첫 출력(입력의 마지막 글자, 순방향 GRU가 가장 최근에 읽은 것)이 가장 잘 맞고 뒤로 갈수록 떨어지다가, 역방향 GRU가 마지막으로 읽은 입력의 첫 글자 쪽(출력의 끝)에서 조금 회복합니다. 길이 10에서는 오히려 마지막 단계가 가장 잘 맞습니다. 점선(자기 출력을 입력으로 받는 실제 생성)은 틀린 글자가 다음 단계를 흔들어 더 빨리 떨어집니다.
#
# 이 측정의 한계도 적어 둡니다. 128개의 수는 A–T 글자 20개(약 86비트)를 담기에 충분하고, [Sutskever 등 2014](../SOURCES.md)는 고정 벡터 하나로도 긴 문장을 번역하는 LSTM을 학습시켰습니다. 위의 손실도 1000단계 끝까지 아직 내려가는 중입니다. 그러니 이 실험이 보여 주는 것은 "정보를 $c$에 담을 수 없다"가 아니라 **"같은 학습 예산에서 어텐션 없는 디코더는 $c$에서 글자를 꺼내지 못하고, 어텐션 모델은 해낸다"** 입니다(6절).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 오른쪽 그림에서 멈추세요. 실선(직전 정답 입력)은 "이 학습 예산으로는 디코더가 c에서 글자를 꺼내지 못했다"는 병목이고(정보가 c에 아예 없다는 증명은 아닙니다: 손실이 아직 내려가는 중), 점선과 실선의 차이는 "한 번 틀리면 계속 틀린다"는 오류 누적입니다. 두 가지를 구분해 두면 뒤에서 어텐션이 고치는 것이 앞의 것이라는 점이 분명해집니다.

# %% [markdown]
# ## 6. 어텐션이 있을 때와 없을 때
#
# | 모델 | 디코더가 단계 $t$에 받는 문맥 |
# |---|---|
# | 어텐션 없음 | $c = [\overrightarrow{h}_{L-1}; \overleftarrow{h}_0]$ (모든 단계에서 같음) |
# | 가법 어텐션 | $c_t = \sum_j \alpha_{tj} h_j$, 점수 $v^\top\tanh(W_q s_{t-1} + W_k h_j)$ |
# | 내적 어텐션 | $c_t = \sum_j \alpha_{tj} h_j$, 점수 $(W s_{t-1})^\top h_j$ |
#
# 왼쪽은 스크립트가 기록한 학습 곡선, 오른쪽은 길이별 시퀀스 정확도입니다. 선은 저장된 결과(길이마다 200개), 빈 점은 이 노트북이 저장된 모델로 방금 새 표본(길이마다 50개)으로 다시 잰 값입니다. 회색 점선 오른쪽은 학습 때 본 적 없는 길이입니다.

# %% slideshow={"slide_type": "subslide"}
live_acc = {kind: plain_live if kind == "none" else accuracy_by_length(m, live_lengths, n=N_LIVE, seed=99)
            for kind, m in models.items()}
stored_acc = {kind: r["accuracy"] for kind, r in results["models"].items()}

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.4))
draw_loss_curves(results["models"], ax=ax1)
draw_accuracy_vs_length(stored_acc, ax=ax2, train_max=MAX_LEN, title="입력 길이에 따른 시퀀스 정확도")
for kind, r in live_acc.items():
    ax2.scatter(r["length"], r["sequence"], facecolors="none", edgecolors=STYLE[kind][1], s=50)
ax2.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.4, 0.07))
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 무엇을 쟀는지 분명히 해 둡니다: **시퀀스 정확도** = 길이 $L$인 무작위 입력 $n$개 중 출력 $L$글자를 모두 맞힌 비율(탐욕적 디코딩). 저장된 값은 길이마다 $n = 200$, 다시 잰 값은 $n = 50$입니다. $n = 50$에서는 한 개를 틀릴 때마다 0.02씩 내려갑니다.

# %%
print(f"다시 잰 값: 맞힌 시퀀스 / {N_LIVE}  (길이 " + ", ".join(map(str, live_lengths)) + ")")
for kind, r in live_acc.items():
    print(f"  {kind:9s}", [round(a * N_LIVE) for a in r["sequence"]])


def wilson_low(k, n, z=1.96):
    """Lower end of the 95% Wilson interval for k successes out of n."""
    p = k / n
    return (p + z**2 / (2 * n) - z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))) / (1 + z**2 / n)


n_eval = config["eval_n"]
for kind in ("additive", "dot"):
    k = round(min(stored_acc[kind]["sequence"][:MAX_LEN]) * n_eval)
    print(f"  {kind:9s} 저장된 값: 길이 1–{MAX_LEN} 중 가장 낮은 길이에서 {k}/{n_eval}, 95% 구간 하한 {wilson_low(k, n_eval):.2f}")

# %% slideshow={"slide_type": "skip"}
for kind in models:  # a fresh sample of 50 vs the stored 200: binomial noise, not a fixed pin
    stored = dict(zip(stored_acc[kind]["length"], stored_acc[kind]["sequence"]))
    assert all(abs(stored[n] - a) < 0.15 for n, a in zip(live_lengths, live_acc[kind]["sequence"]))
for kind in ("additive", "dot"):
    assert min(stored_acc[kind]["sequence"][:MAX_LEN]) >= 0.99 and min(live_acc[kind]["sequence"]) >= 0.9
    assert live_acc[kind]["sequence"][-1] > live_acc["none"]["sequence"][-1] + 0.8
    assert wilson_low(round(min(stored_acc[kind]["sequence"][:MAX_LEN]) * n_eval), n_eval) > 0.95
assert min(live_acc["dot"]["sequence"]) < 0.99  # "0.99 이상" holds for the stored sample only
assert max(stored_acc["none"]["sequence"][15:MAX_LEN]) == 0  # L = 16..20

# %% [markdown] slideshow={"slide_type": "subslide"}
# 학습한 길이 범위(1–20) 안에서 두 어텐션 모델의 시퀀스 정확도는 저장된 표본(길이마다 200개)에서 모든 길이 0.99 이상입니다. 그러나 이것은 표본에 대한 말입니다. 새 표본 50개로 다시 재면 내적 모델은 길이 20에서 50개 중 49개(0.98)를 맞혀 0.99 아래이고, 200개 중 2개를 틀린 길이의 95% 신뢰구간(confidence interval) 하한은 0.96입니다. 이 표본들로 말할 수 있는 것은 "길이 1–20에서 대략 0.96 이상(길이마다 따로 잰 구간)"까지입니다. 어텐션 없는 모델(길이 16부터 0)과의 차이는 이 불확실성보다 훨씬 큽니다.
#
# 파라미터(parameter) 수 차이로는 설명하기 어렵습니다. 어텐션 모델이 더하는 것은 점수 함수의 행렬뿐이고, 그 양은 어텐션 없는 모델의 15%가 안 됩니다.

# %%
for kind, r in results["models"].items():
    print(f"{kind:9s} 파라미터 {r['params']:6d}개")
extra = {kind: r["params"] / results["models"]["none"]["params"] - 1 for kind, r in results["models"].items()}
print("어텐션 없는 모델보다 더 많은 파라미터:", {k: f"{v:.1%}" for k, v in extra.items() if k != "none"})
assert max(extra.values()) < 0.15

# %% [markdown] slideshow={"slide_type": "subslide"}
# 점선 오른쪽, 학습 때 없던 길이에서는 두 어텐션 모델이 갈립니다. 저장된 결과로 확인합니다.

# %%
longest = stored_acc["additive"]["length"][-1]
for kind in ("additive", "dot"):
    print(f"{kind:9s} 길이 {MAX_LEN + 1}–{longest} 시퀀스 정확도:", stored_acc[kind]["sequence"][MAX_LEN:])

# %% slideshow={"slide_type": "skip"}
add_seq = dict(zip(stored_acc["additive"]["length"], stored_acc["additive"]["sequence"]))
assert add_seq[MAX_LEN + 2] > 0.9 and add_seq[MAX_LEN + 3] < 0.8   # "길이 23부터"
assert stored_acc["additive"]["sequence"][-1] < 0.1 and stored_acc["dot"]["sequence"][-1] > 0.9

# %% [markdown]
# 가법 모델은 길이 23부터 급격히 무너지고, 내적 모델은 길이 28에서도 대부분 맞힙니다. 모델 하나씩, 시드 하나로 얻은 결과입니다. 왜 이렇게 갈렸을지는 토론 질문 3에서 생각해 봅니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 정확도 그래프가 이 노트북의 핵심 결과입니다. 빨간 선(어텐션 없음)이 길이 5와 10 사이에서 무너지는 곳, 파란·초록 선이 20까지 버티는 것, 그리고 점선 너머에서 파란 선만 떨어지는 것을 차례로 짚으세요. 마지막 것은 모델 하나씩, 시드 하나로 얻은 결과라는 점도 말해 두세요. "0.99 이상"을 말할 때는 표본 크기(길이마다 200개)를 함께 말하세요. Bahdanau 논문의 "문장 길이에 따른 BLEU" 그림과 비슷한 모양입니다. 토론 질문 3의 실마리(토론 전에는 말하지 마세요): 어텐션은 "어디를 볼지"를 배우지만, 그 위치를 찾는 데 쓰는 정보(인코더와 디코더의 상태가 위치를 세는 방식)는 학습한 길이 범위 안에서만 익혔습니다.

# %% [markdown]
# ## 7. 학습된 정렬 보기
#
# 어텐션 모델이 출력 단계마다 어디를 보는지 가중치 행렬을 그립니다. 행은 출력 단계(쿼리), 열은 입력 위치(키)입니다. 뒤집기를 제대로 배웠다면 출력 $t$는 입력 $L-1-t$를 보므로 **반대 대각선**이 나와야 합니다.

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.4))
for ax, (kind, length) in zip(axes, [("additive", 7), ("additive", 14), ("dot", 14)]):
    w, s_lab, p_lab = alignment_of(models[kind], length, seed=5)
    name = "가법" if kind == "additive" else "내적"
    attention_heatmap(w, p_lab, s_lab, ax=ax, annotate=False, colorbar=False, vmax=1.0, title=f"{name} 어텐션, L={length}")
    ax.set_xlabel("입력 (키·밸류)")
    ax.set_ylabel("출력 (쿼리)")
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 그림에서 읽은 것을 길이 5, 10, 15, 20의 입력 50개씩으로 셉니다: 가장 큰 가중치가 정확히 $L-1-t$에 있는 비율, $L-1-t$ 또는 오른쪽 이웃 $L-t$에 있는 비율, 가장 큰 가중치의 평균.

# %%
rates = {}
for kind in ("additive", "dot"):
    exact, near, peak = [], [], []
    for length in (5, 10, 15, 20):
        _, _, _, w = predict(models[kind], length, 50, seed=300)
        offset = w.argmax(-1) - (length - 1 - torch.arange(length))  # (50, L): 0 = exactly L-1-t
        exact.append((offset == 0).double().mean().item())
        near.append(((offset == 0) | (offset == 1)).double().mean().item())
        peak.append(w.max(-1).values.mean().item())
    rates[kind] = {"exact": np.array(exact), "near": np.array(near), "peak": np.array(peak)}
    print(f"{kind:9s} 정확히 L−1−t: {np.round(exact, 2)}  L−1−t 또는 L−t: {np.round(near, 2)}  최대 가중치 평균: {np.round(peak, 2)}")

# %% slideshow={"slide_type": "skip"}
assert rates["dot"]["exact"].min() > 0.95 and rates["dot"]["peak"].min() > 0.99
assert rates["additive"]["near"].min() == 1.0 and rates["additive"]["exact"].min() > 0.7
assert 0.5 < rates["additive"]["peak"].min() and rates["additive"]["peak"].max() < 0.7

# %% [markdown] slideshow={"slide_type": "subslide"}
# 아무도 "뒤집어라"나 "반대 대각선을 보라"고 알려 주지 않았는데, 정답 글자를 맞히려고 손실을 줄이다 보니 정렬이 생겼습니다. 두 모델의 정렬은 모양이 조금 다릅니다.
#
# - **내적 모델**은 거의 원-핫(one-hot)입니다. 가장 큰 가중치(평균 0.99 이상)가 언제나 정확히 입력 $L-1-t$에 있습니다.
# - **가법 모델**은 폭이 두 칸인 띠입니다. 가장 큰 가중치는 평균 0.5–0.65이고, 언제나 $L-1-t$ 또는 그 오른쪽 이웃 $L-t$에 있습니다. 이웃을 봐도 되는 이유는 인코더 상태가 이웃 글자의 정보도 담고 있기 때문입니다. 오른쪽 이웃 $h_{j+1}$의 순방향 절반 $\overrightarrow{h}_{j+1}$은 글자 $j$를 이미 읽었으므로, 이웃의 상태에서도 글자 $j$를 꺼낼 수 있습니다.
#
# 출력이 100% 맞아도 정렬이 "정답 위치 하나"일 필요는 없습니다. 어텐션 가중치가 보여 주는 것은 디코더가 **어느 위치의 인코더 상태**를 섞었는지입니다. 그 상태에는 방금 본 것처럼 이웃 글자의 정보도 섞여 있으므로, 가중치가 가장 큰 위치의 글자가 곧 출력에 쓰인 정보라고 단정할 수는 없습니다. 어텐션 가중치를 모델의 설명(explanation)으로 읽어도 되는지는 논쟁거리입니다([Jain & Wallace 2019](../SOURCES.md), [Wiegreffe & Pinter 2019](../SOURCES.md)). 11번 노트북에서 다시 다룹니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 학습된 모델 안에서 쿼리·키·밸류 짚기
#
# 4절의 `Decoder.step`을 학습된 가법 모델로 직접 세 번 불러, 각 텐서가 어떤 역할인지 모양과 함께 확인합니다.

# %%
model = models["additive"]
s, _, n = make_reversal_batch(1, 8, 8, seed=5)
with torch.no_grad():
    _, w_model = model(s, n)
    keys, fixed = model.encoder(model.embed(s), n)             # (1, 8, 128): encoder states
    state, prev = torch.tanh(model.bridge(fixed)), torch.tensor([BOS])
    for _step in range(3):
        query = state                                           # (1, 64): decoder state s_{t-1}
        logits, state, w = model.decoder.step(model.embed(prev), query, keys, None, fixed)
        prev = logits.argmax(-1)
print(f"쿼리 (디코더 상태) {tuple(query.shape)},  키 = 밸류 (인코더 상태) {tuple(keys.shape)},  가중치 {tuple(w.shape)}")
print("단계 2의 가중치:", w[0].numpy().round(2))

# %% slideshow={"slide_type": "skip"}
torch.testing.assert_close(w, w_model[:, 2])
assert int(w.argmax()) in (8 - 1 - 2, 8 - 2)  # input L-1-t or its right neighbour
assert keys.shape[-1] == 2 * model.config["hidden_dim"] != model.config["emb_dim"]  # hidden states, not embeddings

# %% [markdown]
# ## 8. 슬라이더: 출력 단계마다 어디를 보나
#
# 슬라이더로 출력 단계를 고르면 왼쪽 정렬 행렬에서 그 행이 빨간 테두리로 표시되고, 오른쪽에 그 행의 가중치가 막대로 나옵니다. 단계를 하나씩 올리며 가중치의 봉우리가 입력의 끝에서 처음으로 한 칸씩 옮겨 가는 것을 보세요.


# %%
w12, s12, p12 = alignment_of(models["additive"], 12, seed=8)
print("입력:", "".join(s12), "  출력:", "".join(p12))

# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
explorer = alignment_explorer(w12, s12, p12)
explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 `alignment_panels`로 출력 단계 0, 5, 11을 그립니다.

# %%
steps = [0, 5, 11]
fig, axes = plt.subplots(2, len(steps), figsize=(9.5, 4.4), height_ratios=[1.2, 1])
rows = [alignment_panels(axes[0, i], axes[1, i], w12, s12, p12)(t) for i, t in enumerate(steps)]
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "skip"}
print({t: (int(r.argmax()), round(float(r.max()), 2)) for t, r in zip(steps, rows)})
assert all(int(r.argmax()) in (12 - 1 - t, 12 - t) for t, r in zip(steps, rows))
assert all(r[12 - 1 - t: 12 - t + 1].sum() > 0.5 for t, r in zip(steps, rows))
explorer.set(step=5)
assert np.array_equal(explorer.last, rows[1])
explorer.set(step=0)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 0에서 11까지 천천히 움직이세요. 막대의 봉우리가 입력의 마지막 글자에서 첫 글자로 한 칸씩 이동합니다. 청중에게 "어텐션 없는 모델이라면 이 그림은 어떻게 생겼을까?"라고 물어보세요. 답: 그릴 가중치가 없습니다. 모든 단계가 같은 벡터 하나를 받습니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("02-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# - 02-1: 내적 어텐션 한 단계 구현
# - 02-2: 가법 점수 구현
# - 02-3: 마스크를 빼먹으면 패딩 칸이 가져가는 가중치 (예측한 뒤 측정)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **02-1.** 디코더 한 단계의 내적 어텐션을 구현하세요. `query`는 디코더 상태 `(B, d)`, `keys`는 인코더 상태 `(B, T, d)`이고 밸류도 `keys`입니다. 점수는 $q \cdot k_j$(나누지 않음)입니다. `(context (B, d), weights (B, T))`를 돌려주세요.

# %%
def dot_attention_step(query, keys):
    raise NotImplementedError

check("02-1", dot_attention_step)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def dot_attention_step(query, keys):
    scores = torch.einsum("btd,bd->bt", keys, query)     # (B, T)
    weights = torch.softmax(scores, dim=-1)              # (B, T): sums to 1 over the input
    context = torch.einsum("bt,btd->bd", weights, keys)  # (B, d)
    return context, weights

check("02-1", dot_attention_step)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **02-2.** 가법 점수 $e_j = v^\top \tanh(W_q q + W_k k_j)$를 구현하세요. `query (B, d_q)`, `keys (B, T, d_k)`, `W_q (d_a, d_q)`, `W_k (d_a, d_k)`, `v (d_a,)`를 받아 소프트맥스 **전**의 점수 `(B, T)`를 돌려줍니다.

# %%
def additive_scores(query, keys, W_q, W_k, v):
    raise NotImplementedError

check("02-2", additive_scores)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def additive_scores(query, keys, W_q, W_k, v):
    hidden = torch.tanh((query @ W_q.T)[:, None, :] + keys @ W_k.T)  # (B, T, d_a)
    return hidden @ v                                                 # (B, T)

check("02-2", additive_scores)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **02-3. (예측한 뒤 측정)** 패딩 위치의 인코더 상태는 영벡터입니다(2절). 학습된 **내적** 모델에서 패딩 마스크를 빼먹으면 패딩 칸들은 가중치를 얼마나 가져갈까요?
#
# 1. 종이에 예측하세요: 영벡터 키의 점수 $(Wq)^\top 0$은 얼마이고, 그 칸의 가중치는 무엇에 비례합니까?
# 2. 예측을 `pad_weight(scores, n_pad)`로 쓰세요: 진짜 글자 칸들의 점수 `scores` `(L,)`와 패딩 칸 수 `n_pad`를 받아, 마스크가 없을 때 **패딩 칸 전체가 가져가는 가중치의 합**을 돌려줍니다.
# 3. 다음 셀들이 학습된 모델에서 마스크를 빼고 잰 값과 예측을 비교합니다.

# %%
def pad_weight(scores, n_pad):
    raise NotImplementedError

check("02-3", pad_weight)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def pad_weight(scores, n_pad):
    # A zero key scores (Wq)·0 = 0, so each padding slot gets e^0 = 1 in the softmax numerator.
    return n_pad / (scores.exp().sum() + n_pad)

check("02-3", pad_weight)

# %% slideshow={"slide_type": "subslide"}
def no_mask_run(model, letters=5, n_pad=7, seed=11):
    """Greedy decoding with the padding mask left out: padding weight per step, measured and predicted."""
    s, _, n = make_reversal_batch(1, letters, letters, seed=seed)
    s = torch.cat([s, torch.full((1, n_pad), PAD)], dim=1)     # (1, letters + n_pad)
    with torch.no_grad():
        keys, fixed = model.encoder(model.embed(s), n)         # keys[:, letters:] are zero vectors
        state, prev = torch.tanh(model.bridge(fixed)), torch.tensor([BOS])
        measured, predicted, out, pad_score = [], [], [], None
        for _step in range(letters):
            scores = model.decoder.attention.scores(state, keys)[0]        # (T,): nothing masked
            pad_score = scores[letters].item() + 0.0 if pad_score is None else pad_score
            logits, state, w = model.decoder.step(model.embed(prev), state, keys, None, fixed)
            measured.append(w[0, letters:].sum().item())
            predicted.append(float(pad_weight(scores[:letters], n_pad)))
            prev = logits.argmax(-1)
            out.append(int(prev))
        masked = model(s[:, :letters], n)[0].argmax(-1)[0].tolist()
    return np.array(measured), np.array(predicted), pad_score, out == masked

# %% slideshow={"slide_type": "subslide"}
runs = {kind: no_mask_run(models[kind]) for kind in ("dot", "additive")}  # 5 letters + 7 padding slots
for kind, (measured, predicted, pad_score, same) in runs.items():
    print(f"{kind:8s} 단계 0에서 패딩 칸의 점수 {pad_score:.2f}")
    print(f"         단계별 패딩 가중치 측정 {measured.round(3)}, 예측 {predicted.round(3)}, 출력 글자 그대로: {same}")

# %% slideshow={"slide_type": "skip"}
measured, predicted, _, same = runs["dot"]
assert np.abs(measured - predicted).max() < 1e-9 and same and 0.01 < measured[0] < 0.05
measured, predicted, pad_score, _ = runs["additive"]
assert pad_score > 1 and 0.18 < measured[0] < 0.2 and np.abs(measured - predicted).max() > 0.15  # "약 19%"

# %% [markdown]
# 내적 모델에서는 예측과 측정이 일치합니다. 진짜 칸의 점수가 크기 때문에 패딩 칸들의 몫은 첫 단계에서 0.02 정도, 그 뒤로는 0에 가깝고 출력 글자도 그대로입니다. 가법 모델에서는 같은 예측이 빗나갑니다. 영벡터 키의 점수가 $v^\top\tanh(W_q s + W_k 0) = v^\top\tanh(W_q s)$로 0이 아니어서(3절 $q = 0$ 실험의 거울상), 패딩 칸들이 첫 단계에서 가중치의 약 19%를 가져갑니다. 밸류가 영벡터라 가중합에 더해지는 것은 없지만, 진짜 칸의 가중치가 모두 그만큼 줄어 첫 단계의 문맥 벡터가 약 0.81배로 작아집니다. 이 예에서 출력 글자가 그대로인 것은 이 모델, 이 입력의 결과일 뿐입니다. 그러니 마스크는 절대 빼먹지 마세요.

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 길이 20에서 어텐션 없는 모델은 첫 출력(입력의 마지막 글자)을 가장 잘 맞혔습니다(길이 10에서는 마지막 출력이 가장 좋았습니다: 5절 그림의 L=10 곡선). 입력을 미리 뒤집어 넣으면([Sutskever 등 2014](../SOURCES.md)가 번역에서 쓴 요령) 무엇이 달라질까요? 실제 번역에서 긴 문장의 어떤 부분이 가장 위험할까요?
# 2. 한국어–영어 번역처럼 어순이 다른 경우, 정렬 행렬은 어떤 모양일까요? 한 출력 단어가 입력의 여러 단어를 봐야 하는 경우 가중치는 어떻게 나타날까요?
# 3. 학습 때 본 적 없는 길이(21 이상)에서 가법 모델은 무너지고 내적 모델은 버텼습니다. 모델은 "입력의 $L-1-t$번째"라는 위치를 무엇으로 알아낼까요? 시드나 학습 단계 수를 바꿔도 같은 결과가 나올지 어떻게 확인하겠습니까? 트랜스포머의 위치 인코딩(positional encoding)과는 어떻게 연결될까요?
# 4. 가법 점수와 내적 점수는 학습 길이 안에서는 비슷한 결과를 냈습니다. 그렇다면 트랜스포머는 왜 내적 쪽을 골랐을까요? 계산량과 하드웨어(행렬곱)의 관점에서 생각해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 3번을 먼저 다루세요. 1번은 병목 측정(5절)을 다시 읽게 하고, 3번은 셀프 어텐션(03번)과 위치 인코딩(10번)으로 이어집니다. 4번은 04번 노트북(왜 $\sqrt{d_k}$로 나누는가)의 예고편입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 같은 학습 예산(1000단계)에서 고정 문맥 벡터 하나는 병목이다 | 어텐션 없는 모델: 시퀀스 정확도 L=5에서 0.9 이상, L=16–20에서 0 (길이마다 200개); 직전 정답을 넣어 줘도 L=20 토큰 정확도 0.6 미만; 손실은 아직 내려가는 중 |
# | 어텐션 = 단계마다 새 문맥 벡터 $c_t = \sum_j \alpha_{tj} h_j$ | `Decoder.step`을 학습된 모델로 직접 불러 모델 전체의 가중치와 같음을 assert |
# | 쿼리 = 디코더 상태, 키 = 밸류 = 인코더 은닉 상태 | 원문 002의 역할(키 = 디코더)은 키 1개·밸류 6개로 모양이 맞지 않아 계산되지 않음 (원문 바로잡기) |
# | 가법 $v^\top\tanh(W_q q + W_k k)$ vs 내적 $(Wq)^\top k$ | 패딩 칸 가중치 0; `DotAttention` = PyTorch SDPA; $q=0$에서 둘이 다름 (원문 바로잡기) |
# | 어텐션은 긴 입력에서도 버틴다 | 두 어텐션 모델: 길이 1–20의 시퀀스 정확도가 표본 200개에서 0.99 이상(95% 구간 하한 0.96), 새 표본 50개로는 0.98 이상; 파라미터는 15% 미만 더 많음 |
# | 모델은 정렬을 스스로 배운다 | 반대 대각선: 최대 가중치가 $L-1-t$ 또는 오른쪽 이웃에 |
# | 패딩 마스크는 빼먹을 수 없다 | 영벡터 키도 $e^{\text{점수}}$에 비례하는 가중치를 받음: 내적 모델은 예측대로 첫 단계 0.02, 가법 모델은 0.19 (02-3) |
#
# 다음 노트북(03)에서는 쿼리·키·밸류를 같은 시퀀스에서 세 가지 투영(projection)으로 만드는 셀프 어텐션(self-attention)으로 넘어갑니다.
