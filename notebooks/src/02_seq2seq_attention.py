# %% [markdown]
# # 02. seq2seq와 어텐션
#
# 인코더–디코더가 입력 전체를 벡터 하나에 담으면 긴 입력에서 무너집니다. 디코더가 출력 단계마다 입력을 다시 보게 하는 어텐션(attention)이 이 병목을 어떻게 푸는지, 작은 모델을 직접 학습시켜 측정합니다.
#
# **학습 목표**
# - 고정된 문맥 벡터(context vector) 하나가 병목이라는 것을 입력 길이별·출력 위치별 정확도로 측정해 보인다.
# - 가법(Bahdanau) 점수와 내적(Luong) 점수를 수식과 코드로 쓰고, 패딩 마스크(padding mask)가 가중치에 하는 일을 확인한다.
# - seq2seq 어텐션에서 쿼리(query)는 디코더 상태, 키(key)와 밸류(value)는 인코더 은닉 상태(hidden state)라는 것을 코드로 짚어 말할 수 있다.
# - 학습된 정렬(alignment)을 히트맵으로 읽고, 뒤집기 과제에서 반대 대각선이 나오는 이유를 설명한다.
#
# **선수 지식**: 01번 노트북(가중 평균, 소프트맥스, 첫 어텐션 계산), RNN/GRU가 토큰을 하나씩 읽으며 은닉 상태를 갱신한다는 정도의 이해
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 오늘의 질문은 하나입니다. "입력을 벡터 하나에 담으면 무엇이 안 되는가, 어텐션은 그것을 어떻게 고치는가." 모델 학습은 미리 `scripts/train_seq2seq.py`로 해 두었고(CPU 한 코어로 5–7분), 노트북은 저장된 모델을 불러와 정확도를 다시 계산합니다. 발표 중에 학습을 처음부터 돌릴 필요는 없습니다.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.attention import scaled_dot_product_attention
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check
from helpers.plots import attention_heatmap
from helpers.seq2seq import (
    BOS,
    AdditiveAttention,
    DotProductAttention,
    Seq2Seq,
    accuracy_by_length,
    accuracy_by_position,
    alignment_accuracy,
    alignment_explorer,
    decode_tokens,
    dot_product_attention,
    draw_accuracy_vs_length,
    draw_alignment_step,
    make_reversal_batch,
    model_from_checkpoint,
    padding_mask,
    train_steps,
)

setup()

# %% [markdown]
# ## 1. 과제: 글자 뒤집기
#
# seq2seq(sequence-to-sequence) 모델은 두 부분으로 되어 있습니다. 인코더(encoder)는 입력 시퀀스(sequence)를 토큰(token) 하나씩 읽으며 은닉 상태를 만들고, 디코더(decoder)는 그 정보를 받아 출력 토큰을 하나씩 만듭니다. 번역이 대표적인 예입니다.
#
# 이 노트북에서는 번역 대신 **뒤집기** 과제를 씁니다. 입력은 A–T 20개 글자로 된 길이 1–20의 무작위 시퀀스이고, 정답은 그것을 거꾸로 쓴 것입니다. 장난감 과제를 고른 이유는 두 가지입니다.
#
# - 데이터를 코드로 만들 수 있고(시드 고정), 노트북 안에서 정확도를 바로 잴 수 있습니다.
# - **정답 정렬을 미리 압니다.** 길이 $L$인 입력에서 출력 $t$번째 글자는 입력 $L-1-t$번째 글자입니다. 모델이 배운 정렬을 정답과 비교할 수 있습니다.

# %%
src, tgt, lengths = make_reversal_batch(4, 3, 9, seed=0)
for s, t, n in zip(src, tgt, lengths.tolist()):
    print(f"L={n}:  입력 {''.join(decode_tokens(s[:n]))}  →  정답 {''.join(decode_tokens(t[:n]))}")
assert all(t[:n].tolist() == s[:n].flip(0).tolist() for s, t, n in zip(src, tgt, lengths.tolist()))

# %% [markdown]
# 길이가 다른 시퀀스를 한 배치로 묶으려고 짧은 시퀀스 뒤를 패딩(`·`)으로 채웁니다. 어느 칸이 진짜 토큰인지는 패딩 마스크가 알려 줍니다(True = 진짜 토큰).

# %%
print(np.array(decode_tokens(src)).reshape(src.shape))
print(padding_mask(lengths).int())

# %% [markdown]
# ## 2. 어텐션 없는 seq2seq: 문맥 벡터 하나
#
# 인코더는 양방향 GRU입니다. 입력 위치 $j$마다 앞에서 읽은 상태 $\overrightarrow{h}_j$와 뒤에서 읽은 상태 $\overleftarrow{h}_j$를 이어 붙여 은닉 상태 $h_j = [\overrightarrow{h}_j; \overleftarrow{h}_j]$를 만듭니다(크기 $2H = 128$).
#
# 어텐션이 없는 디코더가 받는 것은 **문맥 벡터 하나**, $c = [\overrightarrow{h}_{L-1}; \overleftarrow{h}_0]$ 뿐입니다. 두 방향 각각이 마지막으로 읽은 상태입니다. 출력 단계 $t$마다
#
# $$s_t = \mathrm{GRU}\big(s_{t-1},\ [\,\mathrm{emb}(y_{t-1});\ c\,]\big), \qquad p(y_t) = \mathrm{softmax}\big(W_o [\,s_t;\ c\,]\big)$$
#
# 를 계산합니다($\mathrm{emb}(y_{t-1})$는 직전 출력 글자의 임베딩(embedding), 첫 상태는 $s_{-1} = \tanh(W_b\, c)$로 역시 $c$에서 만듭니다). $c$는 모든 단계에서 **같은 벡터**입니다. 입력이 길이 3이든 20이든 디코더에 건너가는 정보는 128개의 수로 고정되어 있고, 출력 20개를 모두 이 한 벡터에서 꺼내야 합니다.
#
# 이것이 정말 병목인지 측정해 봅시다. `scripts/train_seq2seq.py`가 길이 1–20의 입력으로 1000단계 학습한 모델을 불러와, 새로 뽑은 시험 데이터로 정확도(accuracy)를 다시 계산합니다. **시퀀스 정확도**는 출력 전체가 정답과 똑같은 비율, **토큰 정확도**는 글자 단위로 맞힌 비율입니다.

# %%
results = load_json("seq2seq_results.json")
config = results["config"]
models = {kind: model_from_checkpoint(load_tensor_dict(f"seq2seq_{kind}.pt")) for kind in results["models"]}
MAX_LEN = config["max_len"]

seed_everything(0)
live_lengths = [4, 8, 12, 16, 20]
plain_live = accuracy_by_length(models["none"], live_lengths, n=50, seed=99)
for n, tok, seq in zip(plain_live["length"], plain_live["token"], plain_live["sequence"]):
    print(f"L={n:2d}  토큰 정확도 {tok:.3f}  시퀀스 정확도 {seq:.2f}")
live_seq = dict(zip(plain_live["length"], plain_live["sequence"]))
assert live_seq[4] > 0.95 and 0.4 < live_seq[8] < 0.6 and live_seq[12] < 0.1

# %% [markdown]
# 짧은 입력은 거의 다 맞히지만, 길이 8에서 시퀀스의 절반을 틀리고 길이 12부터는 통째로 맞히는 출력이 거의 없습니다.
#
# 그런데 이 숫자에는 두 효과가 섞여 있습니다. 디코더는 자기가 방금 낸 글자를 다음 단계의 입력으로 받으므로, 한 번 틀리면 그 뒤도 흔들립니다. 문맥 벡터의 한계만 보려면 **매 단계 직전 정답 글자를 넣어 주고**(교사 강요(teacher forcing)) 출력 위치별로 정확도를 잽니다. 그래도 틀린다면 그 글자는 $c$에서 꺼낼 수 없었다는 뜻입니다.

# %%
plain = results["models"]["none"]
forced = {n: accuracy_by_position(models["none"], n, n=200, seed=7, teacher_forcing=True) for n in (5, 10, MAX_LEN)}
greedy = np.array(plain["position_accuracy"])  # (MAX_LEN,): stored, greedy decoding at L = MAX_LEN

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
draw_accuracy_vs_length({"none": plain["accuracy"]}, metric="token", ax=ax1, train_max=MAX_LEN,
                        title="어텐션 없음: 길이가 늘면 무너진다")
for n, color in zip(forced, ["tab:gray", "tab:orange", "tab:red"]):
    ax2.plot(range(n), forced[n], marker="o", markersize=3, color=color, label=f"L={n}, 직전 정답 입력")
ax2.plot(range(MAX_LEN), greedy, linestyle="--", color="tab:red", label=f"L={MAX_LEN}, 자기 출력 입력")
ax2.set_xticks(range(0, MAX_LEN, 2))
ax2.set_ylim(0, 1.05)
ax2.set_xlabel("출력 단계 t")
ax2.set_ylabel("토큰 정확도")
ax2.set_title("출력 위치별 정확도")
ax2.legend(fontsize=8, loc="upper right")
plt.show()

# %%
acc = dict(zip(plain["accuracy"]["length"], plain["accuracy"]["sequence"]))
print(f"시퀀스 정확도 (저장)  L=5: {acc[5]:.2f}  L=10: {acc[10]:.2f}  L={MAX_LEN}: {acc[MAX_LEN]:.2f}")
print("직전 정답을 넣었을 때 평균 토큰 정확도:", {n: round(float(a.mean()), 3) for n, a in forced.items()})
print(f"L={MAX_LEN} 자기 출력을 넣었을 때: 첫 단계 {greedy[0]:.2f}, 마지막 단계 {greedy[-1]:.2f}")
assert acc[5] > 0.8 and acc[MAX_LEN] < 0.05
assert forced[5].mean() > 0.95 and 0.4 < forced[MAX_LEN].mean() < 0.6    # "절반 가까이를 틀립니다"
f20 = forced[MAX_LEN]
assert f20.argmax() == 0 and f20[-1] > f20[10:18].min() + 0.1  # best at t=0, dips, recovers at the end
assert forced[MAX_LEN].mean() > greedy.mean() + 0.2 and greedy[0] > greedy[-1] + 0.5

# %% [markdown]
# 직전 정답을 넣어 줘도 길이 20에서는 글자의 절반 가까이를 틀립니다. 길이 5에서는 거의 다 맞히던 같은 모델입니다. 128개의 수에 글자 20개를 담아 두고, 출력 단계마다 그중 알맞은 하나를 꺼내는 일을 GRU가 학습으로 해내지 못한 것입니다. 첫 출력(입력의 마지막 글자, 순방향 GRU가 가장 최근에 읽은 것)이 가장 잘 맞고 뒤로 갈수록 떨어지다가, 역방향 GRU가 마지막으로 읽은 입력의 첫 글자 쪽(출력의 끝)에서 조금 회복합니다. 점선(자기 출력을 입력으로 받는 실제 생성)은 틀린 글자가 다음 단계를 흔들어 더 빨리 떨어집니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 오른쪽 그림에서 멈추세요. 실선(직전 정답 입력)이 "정보가 벡터에 없다"는 병목이고, 점선과 실선의 차이는 "한 번 틀리면 계속 틀린다"는 오류 누적입니다. 두 가지를 구분해 두면 뒤에서 어텐션이 고치는 것이 앞의 것이라는 점이 분명해집니다.

# %% [markdown]
# ## 3. 어텐션: 출력 단계마다 새 문맥 벡터
#
# 해결책은 문맥 벡터를 단계마다 새로 만드는 것입니다. 디코더가 $t$번째 글자를 만들기 직전에, 지금 상태 $s_{t-1}$로 입력의 모든 은닉 상태 $h_0, \dots, h_{L-1}$에 점수(score)를 매기고, 소프트맥스(softmax)로 가중치(weight)를 만들어 은닉 상태의 가중합(weighted sum)을 문맥 벡터로 씁니다.
#
# $$e_{tj} = \mathrm{score}(s_{t-1},\ h_j), \qquad \alpha_{tj} = \frac{\exp(e_{tj})}{\sum_{k} \exp(e_{tk})}, \qquad c_t = \sum_{j} \alpha_{tj}\, h_j$$
#
# 그러고 나서 위의 식에서 $c$를 $c_t$로 바꿔 씁니다. 01번 노트북의 두 단계(가중치 계산, 가중합) 그대로입니다. 역할을 정확히 나누면 다음과 같습니다.
#
# | 역할 | seq2seq 어텐션에서 | 모양 (배치 $B$, 입력 길이 $T$) |
# |---|---|---|
# | 쿼리 | 디코더 상태 $s_{t-1}$: "지금 무엇을 쓸 차례인가" | $(B, H)$ |
# | 키 | 인코더 은닉 상태 $h_j$: 점수를 매길 기준 | $(B, T, 2H)$ |
# | 밸류 | 같은 인코더 은닉 상태 $h_j$: 섞여서 전달될 내용 | $(B, T, 2H)$ |
# | 가중치 $\alpha_{t\cdot}$ | 쿼리 하나당 입력 위치 $T$개 위의 분포, 합 1 | $(B, T)$ |
#
# 가중치 행렬 $\alpha$(행 = 출력 단계, 열 = 입력 위치)를 **정렬**이라고 부릅니다. 원문들은 소프트맥스를 거친 $\alpha$도 "Attention Score"라고 부르지만, 이 과정에서는 소프트맥스 전의 $e$를 점수, 후의 $\alpha$를 가중치라고 구분합니다.
#
# > **원문 바로잡기**: 원문 하나는 그림에서 점수를 입력 단어와 "직전 출력값(<SOS>)"의 유사도로 그리고 괄호 안에서 "직전 디코더 은닉 상태"로 고쳐 적습니다. 고친 쪽이 맞습니다: 쿼리는 직전 출력 토큰이 아니라 디코더 상태입니다(Luong 방식에서는 현재 상태 $s_t$). 그런데 같은 글의 Query·Key·Value 절은 역할을 거꾸로 적습니다. "번역할 정보"(인코더 쪽)를 쿼리로, 직전 출력값(또는 디코더 은닉 상태)을 키로 둡니다. 인코더 상태는 **키이자 밸류**이고 쿼리는 디코더 상태입니다. 역할을 뒤집으면 무엇이 망가지는지 아래에서 계산합니다. 또 다른 원문은 인코더의 "임베딩 토큰"과 디코더를 내적한다고 쓰는데, 점수를 매기는 대상은 임베딩이 아니라 문맥을 읽은 인코더 **은닉 상태**입니다.

# %%
seed_everything(1)
dec_state = torch.randn(1, 4)      # (B=1, d): one decoder state = the query
enc_states = torch.randn(1, 6, 4)  # (B=1, T=6, d): six encoder states = keys and values

context, w_right = dot_product_attention(dec_state, enc_states, enc_states)
# Roles swapped: six encoder states as queries against a single key, the decoder state.
_, w_swapped = scaled_dot_product_attention(enc_states, dec_state[:, None, :], dec_state[:, None, :])
print("바른 역할 가중치 (입력 6곳 위의 분포):", w_right[0].numpy().round(3))
print("뒤집은 역할 가중치 (쿼리마다 키가 하나):", w_swapped[0, :, 0].numpy().round(3))
assert torch.isclose(w_right.sum(), torch.tensor(1.0)) and w_right.max() < 1
assert torch.equal(w_swapped, torch.ones(1, 6, 1))

# %% [markdown]
# 역할을 뒤집으면 쿼리마다 키가 하나뿐이라 소프트맥스가 언제나 1을 내고, 어떤 입력을 볼지 **고르는 일 자체가 사라집니다.** 어텐션이 고르는 대상은 키·밸류 쪽이고, 고르는 주체는 쿼리입니다. seq2seq에서 고르는 대상은 입력(인코더)이고 주체는 지금 출력을 만드는 디코더입니다. 쿼리와 키·밸류가 서로 다른 시퀀스에서 오므로 이것은 크로스 어텐션(cross-attention)입니다.

# %% [markdown]
# ## 4. 점수 함수 두 가지: 가법과 내적
#
# 점수 함수 $\mathrm{score}(q, k)$로 널리 쓰이는 두 가지입니다.
#
# **가법 어텐션(additive attention, Bahdanau 2015)**: 쿼리와 키를 같은 크기 $d_a$의 공간으로 옮겨 더하고, 은닉층 하나짜리 신경망으로 점수를 매깁니다.
#
# $$e_j = v^\top \tanh\big(W_q\, q + W_k\, k_j\big), \qquad W_q \in \mathbb{R}^{d_a \times d_q},\ W_k \in \mathbb{R}^{d_a \times d_k},\ v \in \mathbb{R}^{d_a}$$
#
# **내적 어텐션(dot-product attention, Luong 2015)**: 쿼리와 키의 내적(dot product), 또는 크기가 다를 때 학습되는 행렬 $W$를 끼운 "general" 형태입니다.
#
# $$e_j = q^\top k_j \quad\text{또는}\quad e_j = (W q)^\top k_j, \qquad W \in \mathbb{R}^{d_k \times d_q}$$
#
# 내적 점수는 모든 키에 대해 행렬곱 한 번이면 되고, 가법 점수는 키마다 $\tanh$ 층을 거칩니다. 둘 다 점수 뒤의 소프트맥스와 가중합은 같습니다. 이 노트북의 두 모델은 점수 함수만 다르고, 두 모델 모두 쿼리로 $s_{t-1}$을 씁니다(Luong의 원 논문은 갱신된 $s_t$를 씁니다).

# %% [markdown]
# `helpers/seq2seq.py`의 두 모듈은 같은 모양으로 호출합니다: `attention(query (B, d_q), keys (B, T, d_k), values (B, T, d_v), mask (B, T))` → `(context (B, d_v), weights (B, T))`. 길이 6과 4인 두 시퀀스(둘째 시퀀스의 마지막 두 칸은 패딩)로 확인합니다.

# %%
seed_everything(2)
query = torch.randn(2, 3)      # (B=2, d_q=3): decoder states
keys = torch.randn(2, 6, 5)    # (B=2, T=6, d_k=5): encoder states, also the values
mask = padding_mask(torch.tensor([6, 4]), 6)  # (B, T)

additive = AdditiveAttention(query_dim=3, key_dim=5, hidden_dim=8)
general = DotProductAttention(query_dim=3, key_dim=5, general=True)
with torch.no_grad():
    ctx_add, w_add = additive(query, keys, keys, mask)
    ctx_dot, w_dot = general(query, keys, keys, mask)
print("가법 가중치:\n", w_add)
print("내적(general) 가중치:\n", w_dot)
for w, ctx in ((w_add, ctx_add), (w_dot, ctx_dot)):
    assert torch.allclose(w.sum(-1), torch.ones(2)) and (w[~mask] == 0).all()
    assert torch.allclose(ctx, torch.einsum("bt,btd->bd", w, keys), atol=1e-6)

# %% [markdown]
# 패딩 칸의 가중치는 정확히 0이고, 남은 네 칸의 가중치 합이 1입니다. 마스크는 점수를 $-\infty$로 바꿔 소프트맥스가 그 칸에 $e^{-\infty} = 0$을 주게 합니다.
#
# 내적 점수는 스케일 $1/\sqrt{d_k}$만 빼면 01번 노트북의 스케일드 닷프로덕트 어텐션(scaled dot-product attention)과 같은 계산입니다. 쿼리에 $\sqrt{d_k}$를 곱해 넘기면 이 과정의 `helpers.attention` 구현, 그리고 PyTorch의 구현과 정확히 같은 값이 나와야 합니다.

# %%
q_proj = general.W(query).detach()  # (B, d_k): W q
ours_ctx, ours_w = dot_product_attention(q_proj, keys, keys, mask)
d_k = keys.shape[-1]                # 5
course_out, course_w = scaled_dot_product_attention(q_proj[:, None] * d_k ** 0.5, keys, keys, mask[:, None])
torch_out = F.scaled_dot_product_attention(q_proj[:, None], keys, keys, attn_mask=mask[:, None], scale=1.0)
torch.testing.assert_close(ours_w, w_dot)
torch.testing.assert_close(ours_ctx, course_out[:, 0])
torch.testing.assert_close(ours_w, course_w[:, 0])
torch.testing.assert_close(ours_ctx, torch_out[:, 0])
print("helpers.seq2seq = helpers.attention = torch SDPA: 같음")

# %% [markdown]
# > **원문 바로잡기**: 원문 하나는 Bahdanau 등의 논문(NEURAL MACHINE TRANSLATION BY JOINTLY LEARNING TO ALIGN AND TRANSLATE)이 유사도를 "내적(Dot Product)"으로 구한다고 설명합니다. 그 논문의 점수는 위의 **가법** 점수 $v^\top\tanh(W s_{t-1} + U h_j)$입니다. 내적 점수를 체계적으로 쓴 것은 같은 해의 Luong 등입니다. 둘은 실제로 다른 함수입니다: 쿼리가 0벡터이면 어떤 $q^\top k$나 $q^\top W k$도 0이지만, 가법 점수는 $v^\top\tanh(W_k k_j)$로 키마다 다른 값입니다.

# %%
zero_q = torch.zeros(2, 3)
with torch.no_grad():
    add_scores, dot_scores = additive.scores(zero_q, keys), general.scores(zero_q, keys)
print("q = 0일 때 가법 점수:", add_scores[0].numpy().round(3))
print("q = 0일 때 내적 점수:", dot_scores[0].numpy().round(3))
assert (dot_scores == 0).all() and add_scores.std() > 0.01
print("매개변수 수  가법:", sum(p.numel() for p in additive.parameters()),
      " 내적(general):", sum(p.numel() for p in general.parameters()))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 두 점수 함수의 차이를 "작은 신경망이 점수를 매긴다(가법)" 대 "벡터끼리 얼마나 같은 방향인가(내적)"로 요약하세요. 트랜스포머가 내적 쪽을 택한 이유(행렬곱 한 번, 그리고 $\sqrt{d_k}$로 나누는 이유)는 04번 노트북에서 다룹니다.

# %% [markdown]
# ## 5. 학습: 어텐션이 있을 때와 없을 때
#
# 세 모델은 디코더가 받는 문맥만 다릅니다. 임베딩 크기 16, GRU 은닉 크기 $H = 64$, 같은 시드의 같은 배치, 같은 학습 단계 수입니다.
#
# | 모델 | 디코더가 단계 $t$에 받는 문맥 |
# |---|---|
# | 어텐션 없음 | $c = [\overrightarrow{h}_{L-1}; \overleftarrow{h}_0]$ (모든 단계에서 같음) |
# | 가법 어텐션 | $c_t = \sum_j \alpha_{tj} h_j$, 점수 $v^\top\tanh(W_q s_{t-1} + W_k h_j)$ |
# | 내적 어텐션 | $c_t = \sum_j \alpha_{tj} h_j$, 점수 $(W s_{t-1})^\top h_j$ |
#
# 먼저 학습이 실제로 손실(loss)을 줄이는지 작은 모델로 몇 초만 돌려 봅니다(은닉 크기 32, 길이 1–6, 30단계). 손실은 정답 글자의 교차 엔트로피(cross-entropy)이고, 디코더에는 직전 **정답** 글자를 넣습니다(교사 강요).

# %%
seed_everything(0)
live = Seq2Seq("additive", hidden_dim=32)
live_losses = train_steps(live, 30, seed=7, batch_size=32, max_len=6, lr=1e-2)
blocks = np.array(live_losses).reshape(3, 10).mean(axis=1)
print("10단계마다 평균 손실:", blocks.round(2))
assert blocks[-1] < blocks[0] - 0.5

# %% [markdown]
# 손실이 내려갑니다. 같은 학습을 큰 모델로 1000단계 한 것이 저장된 세 모델입니다. 왼쪽은 스크립트가 기록한 학습 곡선, 오른쪽은 길이별 시퀀스 정확도입니다(선: 저장된 결과, 길이마다 200개; 빈 점: 이 노트북이 저장된 모델로 방금 다시 잰 값, 길이마다 50개). 회색 점선 오른쪽은 학습 때 본 적 없는 길이입니다.

# %%
live_acc = {kind: plain_live if kind == "none" else accuracy_by_length(m, live_lengths, n=50, seed=99)
            for kind, m in models.items()}
stored_acc = {kind: r["accuracy"] for kind, r in results["models"].items()}

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
colors = {"none": "tab:red", "additive": "tab:blue", "dot": "tab:green"}
names = {"none": "어텐션 없음", "additive": "가법 어텐션", "dot": "내적 어텐션"}
for kind, r in results["models"].items():
    ax1.plot(r["loss_curve"]["step"], r["loss_curve"]["loss"], color=colors[kind], label=names[kind])
ax1.set_yscale("log")
ax1.set_xlabel("학습 단계")
ax1.set_ylabel("손실 (로그 축)")
ax1.set_title("학습 곡선 (저장된 기록)")
ax1.legend(fontsize=8, loc="center right")
draw_accuracy_vs_length(stored_acc, ax=ax2, train_max=MAX_LEN, title="입력 길이에 따른 시퀀스 정확도")
for kind, r in live_acc.items():
    ax2.scatter(r["length"], r["sequence"], facecolors="none", edgecolors=colors[kind], s=60)
ax2.legend(fontsize=8, loc="center left", bbox_to_anchor=(0.33, 0.45))
plt.show()

# %%
print("다시 잰 시퀀스 정확도 (길이 " + ", ".join(map(str, live_lengths)) + ")")
for kind, r in live_acc.items():
    print(f"  {kind:9s}", r["sequence"])
for kind in models:
    stored = dict(zip(stored_acc[kind]["length"], stored_acc[kind]["sequence"]))
    assert all(abs(stored[n] - a) < 0.15 for n, a in zip(live_lengths, live_acc[kind]["sequence"]))
for kind in ("additive", "dot"):
    assert min(stored_acc[kind]["sequence"][:MAX_LEN]) >= 0.99 and live_acc[kind]["sequence"][-1] >= 0.9
    assert live_acc[kind]["sequence"][-1] > live_acc["none"]["sequence"][-1] + 0.8
assert max(stored_acc["none"]["sequence"][14:MAX_LEN]) == 0  # L = 15..20

# %% [markdown]
# 학습한 길이 범위(1–20) 안에서 두 어텐션 모델은 모든 길이에서 시퀀스 정확도 0.99 이상을 유지하고, 어텐션 없는 모델은 길이 15부터 0입니다. 매개변수 수 차이로는 설명하기 어렵습니다. 어텐션 모델이 더하는 것은 점수 함수의 행렬뿐이고, 그 양은 어텐션 없는 모델의 15%가 안 됩니다.

# %%
for kind, r in results["models"].items():
    print(f"{kind:9s} 매개변수 {r['params']:6d}개,  학습 {r['train_seconds']:.0f}초 (기록)")
extra = {kind: r["params"] / results["models"]["none"]["params"] - 1 for kind, r in results["models"].items()}
print("어텐션 없는 모델보다 더 많은 매개변수:", {k: f"{v:.1%}" for k, v in extra.items() if k != "none"})
assert max(extra.values()) < 0.15

# %% [markdown]
# 점선 오른쪽, 학습 때 없던 길이에서는 두 어텐션 모델이 갈립니다. 저장된 결과로 확인합니다.

# %%
longest = stored_acc["additive"]["length"][-1]
for kind in ("additive", "dot"):
    print(f"{kind:9s} 길이 {MAX_LEN + 1}–{longest} 시퀀스 정확도:", stored_acc[kind]["sequence"][MAX_LEN:])
add_seq = dict(zip(stored_acc["additive"]["length"], stored_acc["additive"]["sequence"]))
assert add_seq[MAX_LEN + 2] > 0.9 and add_seq[MAX_LEN + 3] < 0.7   # "길이 23부터"
assert stored_acc["additive"]["sequence"][-1] < 0.1 and stored_acc["dot"]["sequence"][-1] > 0.9

# %% [markdown]
# 가법 모델은 길이 23부터 급격히 무너지고, 내적 모델은 길이 28에서도 대부분 맞힙니다. 어텐션은 "어디를 볼지"를 배우지만, 그 위치를 찾는 데 쓰는 정보(인코더와 디코더의 상태가 위치를 세는 방식)는 학습한 길이 범위 안에서만 익혔습니다. 그 범위 밖에서 어떤 점수 함수가 더 잘 버티는지는 이 실험 하나로 일반화할 수 없습니다(토론 질문 3).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 오른쪽 그래프가 이 노트북의 핵심 결과입니다. 빨간 선(어텐션 없음)이 길이 6과 10 사이에서 무너지는 곳, 파란·초록 선이 20까지 버티는 것, 그리고 점선 너머에서 파란 선만 떨어지는 것을 차례로 짚으세요. 마지막 것은 모델 하나씩, 시드 하나로 얻은 결과라는 점도 말해 두세요. Bahdanau 논문의 "문장 길이에 따른 BLEU" 그림과 비슷한 모양입니다.

# %% [markdown]
# ## 6. 학습된 정렬 보기
#
# 어텐션 모델이 출력 단계마다 어디를 보는지 가중치 행렬을 그려 봅니다. 행은 출력 단계(쿼리), 열은 입력 위치(키)입니다. 뒤집기를 제대로 배웠다면 출력 $t$는 입력 $L-1-t$를 보므로 **반대 대각선**이 나와야 합니다.

# %%
def alignment_of(model, length, seed):
    """Weights (L, L), input labels and predicted labels for one seeded example."""
    s, _, n = make_reversal_batch(1, length, length, seed=seed)
    with torch.no_grad():
        logits, w = model(s, n)
    return w[0], decode_tokens(s[0]), decode_tokens(logits[0].argmax(-1))


fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
for ax, (kind, length) in zip(axes, [("additive", 7), ("additive", 14), ("dot", 14)]):
    w, s_lab, p_lab = alignment_of(models[kind], length, seed=5)
    name = "가법" if kind == "additive" else "내적"
    attention_heatmap(w, p_lab, s_lab, ax=ax, annotate=False, colorbar=False, vmax=1.0,
                      title=f"{name} 어텐션, L={length}")
    ax.set_xlabel("입력 (키·밸류)")
    ax.set_ylabel("출력 (쿼리)")
fig.tight_layout()
plt.show()

# %%
rates = {}
for kind in ("additive", "dot"):
    exact, right, peak = [], [], []
    for length in (5, 10, 15, 20):
        s, _, n = make_reversal_batch(50, length, length, seed=300 + length)
        with torch.no_grad():
            _, w = models[kind](s, n)
        offset = w.argmax(-1) - (length - 1 - torch.arange(length))  # (50, L): 0 = exactly L-1-t, 1 = right neighbour
        exact.append(alignment_accuracy(w))
        right.append(((offset == 0) | (offset == 1)).double().mean().item())
        peak.append(w.max(-1).values.mean().item())
    rates[kind] = {"exact": np.array(exact), "right": np.array(right), "peak": np.array(peak)}
    print(f"{kind:9s} (L=5,10,15,20) 최대 가중치가 정확히 L−1−t: {np.round(exact, 2)},  "
          f"L−1−t 또는 L−t: {np.round(right, 2)},  최대 가중치의 평균: {np.round(peak, 2)}")
assert rates["dot"]["exact"].min() > 0.95 and rates["dot"]["peak"].min() > 0.99
assert rates["additive"]["right"].min() == 1.0 and rates["additive"]["exact"].min() > 0.6
assert 0.535 <= rates["additive"]["peak"].min() and rates["additive"]["peak"].max() < 0.615

# %% [markdown]
# 아무도 "뒤집어라"나 "반대 대각선을 보라"고 알려 주지 않았는데, 정답 글자를 맞히려고 손실을 줄이다 보니 정렬이 생겼습니다. 두 모델의 정렬은 모양이 조금 다릅니다.
#
# - **내적 모델**은 거의 원-핫(one-hot)입니다. 가장 큰 가중치(평균 0.99 이상)가 거의 언제나 정확히 입력 $L-1-t$에 있습니다.
# - **가법 모델**은 폭이 두세 칸인 띠입니다. 가장 큰 가중치는 평균 0.54–0.61이고, 언제나 $L-1-t$ 또는 그 오른쪽 이웃 $L-t$에 있습니다. 이웃을 봐도 되는 이유는 인코더가 양방향이기 때문입니다. $h_{j+1}$의 순방향 절반 $\overrightarrow{h}_{j+1}$은 글자 $j$를 이미 읽었으므로, 이웃의 상태에서도 글자 $j$를 꺼낼 수 있습니다.
#
# 출력이 100% 맞아도 정렬이 "정답 위치 하나"일 필요는 없습니다. 어텐션 가중치는 모델이 정보를 **어디서 가져왔는지**를 보여 줄 뿐, 사람이 기대하는 단어 대응과 꼭 같지는 않습니다.

# %% [markdown]
# ### 학습된 모델 안에서 쿼리·키·밸류 짚기
#
# 모델의 디코더를 한 단계씩 손으로 풀어, 각 텐서가 어떤 역할인지 모양과 함께 확인합니다.

# %%
model = models["additive"]
s, _, n = make_reversal_batch(1, 8, 8, seed=5)
with torch.no_grad():
    _, w_model = model(s, n)
    keys, fixed = model.encode(s, n)                 # (1, 8, 128): encoder states
    state = torch.tanh(model.bridge(fixed))          # (1, 64): first decoder state
    prev = torch.tensor([BOS])
    for t in range(3):
        ctx, w = model.attention(state, keys, keys)  # query = decoder state; keys = values = encoder states
        state = model.cell(torch.cat([model.embed(prev), ctx], dim=-1), state)
        prev = model.out(torch.cat([state, ctx], dim=-1)).argmax(-1)
print(f"쿼리 (디코더 상태) {tuple(state.shape)},  키 = 밸류 (인코더 상태) {tuple(keys.shape)}")
print(f"가중치 {tuple(w.shape)},  문맥 벡터 {tuple(ctx.shape)}")
print("단계 2의 가중치:", w[0].numpy().round(3))
torch.testing.assert_close(w, w_model[:, 2])
torch.testing.assert_close(ctx, w @ keys[0])
assert int(w.argmax()) in (8 - 1 - 2, 8 - 2)  # input L-1-t or its right neighbour
assert keys.shape[-1] == 2 * model.config["hidden_dim"] != model.config["emb_dim"]  # hidden states, not embeddings

# %% [markdown]
# ## 7. 슬라이더: 출력 단계마다 어디를 보나
#
# 슬라이더로 출력 단계를 고르면 왼쪽 정렬 행렬에서 그 행이 빨간 테두리로 표시되고, 오른쪽에 그 행의 가중치가 막대로 나옵니다. 단계를 하나씩 올리며 가중치의 봉우리가 입력의 끝에서 처음으로 한 칸씩 옮겨 가는 것을 보세요(가법 모델이라 봉우리가 두세 칸에 걸칩니다).

# %%
w12, s12, p12 = alignment_of(models["additive"], 12, seed=8)
print("입력:", "".join(s12), "  출력:", "".join(p12))

# %% tags=["nbval-ignore-output"]
alignment_explorer(w12, s12, p12)

# %% [markdown]
# 정적 버전(슬라이드·PDF용): 같은 함수로 출력 단계 0, 5, 11을 그립니다.

# %%
steps = [0, 5, 11]
fig, axes = plt.subplots(len(steps), 2, figsize=(10, 10.2))
rows = [draw_alignment_step(w12, s12, p12, t, axes=ax) for t, ax in zip(steps, axes)]
fig.tight_layout()
plt.show()

# %%
print({t: (int(r.argmax()), round(float(r.max()), 3)) for t, r in zip(steps, rows)})
assert all(int(r.argmax()) in (12 - 1 - t, 12 - t) for t, r in zip(steps, rows))
assert all(r[12 - 1 - t: 12 - t + 1].sum() > 0.5 for t, r in zip(steps, rows))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 0에서 11까지 천천히 움직이세요. 막대의 봉우리가 입력의 마지막 글자에서 첫 글자로 한 칸씩 이동합니다. 청중에게 "어텐션 없는 모델이라면 이 그림은 어떻게 생겼을까?"라고 물어보세요. 답: 그릴 가중치가 없습니다. 모든 단계가 같은 벡터 하나를 받습니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("02-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 숨겨진 셀에 있습니다.
#
# **02-1.** 디코더 한 단계의 내적 어텐션을 구현하세요. `query`는 디코더 상태 `(B, d)`, `keys`는 인코더 상태 `(B, T, d)`이고 밸류도 `keys`입니다. 점수는 $q \cdot k_j$(나누지 않음)입니다. `(context (B, d), weights (B, T))`를 돌려주세요.

# %%
def dot_attention_step(query, keys):
    raise NotImplementedError

check("02-1", dot_attention_step)

# %% jupyter={"source_hidden": true}
def dot_attention_step(query, keys):
    scores = torch.einsum("btd,bd->bt", keys, query)   # (B, T)
    weights = torch.softmax(scores, dim=-1)            # (B, T): sums to 1 over the input
    context = torch.einsum("bt,btd->bd", weights, keys)  # (B, d)
    return context, weights

check("02-1", dot_attention_step)

# %% [markdown]
# **02-2.** 가법 점수 $e_j = v^\top \tanh(W_q q + W_k k_j)$를 구현하세요. `query (B, d_q)`, `keys (B, T, d_k)`, `W_q (d_a, d_q)`, `W_k (d_a, d_k)`, `v (d_a,)`를 받아 소프트맥스 **전**의 점수 `(B, T)`를 돌려줍니다.

# %%
def additive_scores(query, keys, W_q, W_k, v):
    raise NotImplementedError

check("02-2", additive_scores)

# %% jupyter={"source_hidden": true}
def additive_scores(query, keys, W_q, W_k, v):
    hidden = torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T)  # (B, T, d_a)
    return hidden @ v                                               # (B, T)

check("02-2", additive_scores)

# %% [markdown]
# **02-3.** 길이 $L$인 뒤집기의 **이상적인 정렬** 행렬 `(L, L)`을 돌려주는 `reversal_alignment(L)`을 쓰세요. 행은 출력 단계, 열은 입력 위치이고, 각 행은 정답 위치에 가중치 1을 둡니다. 풀이 셀은 이 행렬을 학습된 모델의 정렬과 비교합니다.

# %%
def reversal_alignment(L):
    raise NotImplementedError

check("02-3", reversal_alignment)

# %% jupyter={"source_hidden": true}
def reversal_alignment(L):
    return torch.eye(L).flip(1)   # row t has its 1 in column L-1-t

ideal = reversal_alignment(12)
for kind in ("additive", "dot"):
    w_learned, _, _ = alignment_of(models[kind], 12, seed=8)
    agree = (w_learned.argmax(-1) == ideal.argmax(-1)).float().mean().item()
    print(f"{kind:9s} L=12: 최대 가중치가 이상적인 정렬과 같은 행의 비율 {agree:.2f}")

check("02-3", reversal_alignment)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 어텐션 없는 모델은 첫 출력(입력의 마지막 글자)을 가장 잘 맞혔습니다. 입력을 미리 뒤집어 넣으면(Sutskever 등이 번역에서 쓴 요령) 무엇이 달라질까요? 실제 번역에서 긴 문장의 어떤 부분이 가장 위험할까요?
# 2. 한국어–영어 번역처럼 어순이 다른 경우, 정렬 행렬은 어떤 모양일까요? 한 출력 단어가 입력의 여러 단어를 봐야 하는 경우(예: 띄어쓰기 단위와 단어가 다를 때) 가중치는 어떻게 나타날까요?
# 3. 학습 때 본 적 없는 길이(21 이상)에서 가법 모델은 무너지고 내적 모델은 버텼습니다. 모델은 "입력의 $L-1-t$번째"라는 위치를 무엇으로 알아낼까요? 시드나 학습 단계 수를 바꿔도 같은 결과가 나올지 어떻게 확인하겠습니까? 트랜스포머의 위치 인코딩(positional encoding)과는 어떻게 연결될까요?
# 4. 가법 점수와 내적 점수는 이 과제에서 비슷한 결과를 냈습니다. 그렇다면 트랜스포머는 왜 내적 쪽을 골랐을까요? 계산량과 하드웨어(행렬곱)의 관점에서 생각해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 3번을 먼저 다루세요. 1번은 병목 측정(2절)을 다시 읽게 하고, 3번은 셀프 어텐션(03번)과 위치 인코딩(10번)으로 이어집니다. 4번은 04번 노트북(왜 $\sqrt{d_k}$로 나누는가)의 예고편입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 고정 문맥 벡터 하나는 병목이다 | 어텐션 없는 모델: 시퀀스 정확도 L=5에서 0.8 이상, L=20에서 0.05 미만; 직전 정답을 넣어 줘도 L=20 토큰 정확도 0.6 미만 |
# | 어텐션 = 단계마다 새 문맥 벡터 $c_t = \sum_j \alpha_{tj} h_j$ | 모델을 손으로 풀어 $c_t$ = 가중치 @ 인코더 상태 assert |
# | 쿼리 = 디코더 상태, 키 = 밸류 = 인코더 은닉 상태 | 역할을 뒤집으면 가중치가 언제나 1 (원문 바로잡기) |
# | 가법 $v^\top\tanh(W_q q + W_k k)$ vs 내적 $(Wq)^\top k$ | 패딩 칸 가중치 0; 내적 = 과정 구현 = PyTorch SDPA; $q=0$에서 둘이 다름 (원문 바로잡기) |
# | 어텐션은 긴 입력에서도 버틴다 | 두 어텐션 모델: 길이 1–20 모두 시퀀스 정확도 0.99 이상, 매개변수는 15% 미만 더 많음 |
# | 모델은 정렬을 스스로 배운다 | 반대 대각선: 내적 모델은 최대 가중치가 정확히 $L-1-t$에 (> 0.95), 가법 모델은 $L-1-t$와 오른쪽 이웃 $L-t$의 띠에 (언제나) |
#
# 다음 노트북(03)에서는 쿼리·키·밸류를 같은 시퀀스에서 세 가지 투영(projection)으로 만드는 셀프 어텐션(self-attention)으로 넘어갑니다.
