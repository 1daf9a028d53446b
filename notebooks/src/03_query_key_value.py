# %% [markdown]
# # 03. Query, Key, Value
#
# 같은 토큰 벡터에 서로 다른 행렬 세 개를 곱해 "찾는 것(쿼리)", "찾아지는 기준(키)", "전달할 내용(밸류)"을 따로 만드는 이유를 원문의 두 예제를 직접 다시 계산하며 확인합니다.
#
# **학습 목표**
# - 한 토큰에서 쿼리(query)·키(key)·밸류(value)를 세 개의 투영(projection)으로 따로 만드는 이유를 도서관 비유와 계산으로 설명할 수 있다.
# - 원문의 "I am a student"와 "어제 밤에 배가 고파서 치킨을 시켜서 먹었다" 예제를 주어진 입력에서 정확히 다시 계산하고, 원문의 숫자와 결론 중 무엇이 맞고 무엇이 틀렸는지 가려낸다.
# - 학습되지 않은 작은 가중치에서는 어텐션 가중치가 거의 균등하다는 것을 숫자로 보이고, 이런 예제에서 "의미"를 읽어 내면 안 되는 이유를 말할 수 있다.
# - 셀프 어텐션(self-attention)과 크로스 어텐션(cross-attention)의 차이를 모양 $(T_q, T_k)$로 설명할 수 있다.
#
# **선수 지식**: 01번(가중 평균과 소프트맥스), 02번(seq2seq의 인코더·디코더 어텐션). 행렬 곱셈.
#
# **예상 시간**: 혼자 공부 50분 / 스터디 발표 25분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 01번 마지막 그림에서 쿼리·키·밸류가 모두 같은 벡터 x였다는 점을 다시 띄우고 시작하세요. 오늘의 질문은 "왜 같은 x를 그대로 쓰지 않고 행렬 세 개를 곱하는가"입니다. 뒤쪽의 배 예제는 원문 숫자를 하나씩 검증하는 부분이라, 청중에게 "이 숫자 믿어도 될까요?"라고 먼저 물어보면 집중도가 올라갑니다.

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.attention import softmax
from helpers.exercises import check
from helpers.plots import attention_heatmap
from helpers.qkv import (
    bae_top_weight,
    draw_query_grid,
    load_bae,
    load_i_am_a_student,
    max_abs_diff,
    qkv_attention,
    query_explorer,
)

setup()

# %% [markdown]
# ## 1. 같은 토큰, 세 가지 역할
#
# 01번에서는 토큰(token) 벡터 $x$ 하나를 쿼리·키·밸류에 그대로 썼습니다. 그러면 토큰 $i$가 토큰 $j$에 주는 점수(score)는 두 벡터의 내적(dot product) $x_i \cdot x_j$이고, 이것은 $x_j \cdot x_i$와 같습니다. 즉 "$i$가 $j$를 찾는 정도"와 "$j$가 $i$를 찾는 정도"가 **항상 같습니다**.
#
# 언어의 관계는 대개 한쪽 방향입니다. "먹었다"는 "무엇을?"의 답인 "치킨을"을 찾고 싶지만, "치킨을"이 "먹었다"를 똑같은 세기로 찾을 이유는 없습니다. 또 한 단어가 **찾는 것**, 그 단어가 **찾아지는 기준**, 찾아졌을 때 **건네주는 내용**은 서로 다른 정보입니다. 그래서 트랜스포머는 같은 $x$에 학습되는 행렬 세 개를 곱해 역할을 나눕니다.

# %% [markdown]
# ### 도서관 비유
#
# | 역할 | 도서관에서 | 어텐션에서 | 만드는 행렬 |
# |---|---|---|---|
# | 쿼리 $q$ | 검색창에 입력한 검색어 | 이 토큰이 지금 필요로 하는 정보의 모양 | $W^Q$ |
# | 키 $k$ | 책마다 붙은 분류 번호와 주제어 | 각 토큰이 "이런 걸 찾으면 나를 보라"고 내건 표지 | $W^K$ |
# | 밸류 $v$ | 책의 본문 | 선택되었을 때 실제로 건네지는 내용 | $W^V$ |
#
# 검색어와 주제어가 잘 맞는 책일수록 (점수가 높을수록) 본문을 많이 가져옵니다. 주제어가 아무리 잘 맞아도 가져오는 것은 주제어가 아니라 본문입니다. 주제어는 찾는 데 필요한 정보이고 본문은 읽을 내용이므로 둘을 같은 벡터로 둘 이유가 없습니다.
#
# 비유가 어긋나는 곳도 있습니다. 도서관은 맞는 책 한 권을 골라 주지만, 어텐션은 **모든 책의 본문을 가중치(weight)만큼 섞은 것**, 즉 가중합(weighted sum)을 돌려줍니다. 그리고 검색어, 주제어, 본문이 모두 같은 문장의 토큰에서 나옵니다. 사서가 책이기도 한 도서관인 셈입니다.

# %% [markdown]
# ### 수식
#
# 토큰 $T$개를 행으로 쌓은 입력 $X \in \mathbb{R}^{T \times d_{\text{model}}}$에 대해
#
# $$Q = X W^Q,\quad K = X W^K,\quad V = X W^V, \qquad W^Q, W^K \in \mathbb{R}^{d_{\text{model}} \times d_k},\ W^V \in \mathbb{R}^{d_{\text{model}} \times d_v}$$
#
# $$\text{점수 } S = \frac{Q K^\top}{\sqrt{d_k}} \in \mathbb{R}^{T \times T}, \qquad \text{가중치 } A = \mathrm{softmax}_{\text{행}}(S), \qquad \text{출력} = A V \in \mathbb{R}^{T \times d_v}$$
#
# 각 행렬이 학습하는 것:
# - $W^Q$: 토큰을 "나는 지금 어떤 정보가 필요한가"를 나타내는 방향으로 보냅니다.
# - $W^K$: 토큰을 "나는 어떤 질문에 답이 되는가"를 나타내는 방향으로 보냅니다. $W^Q$와 같은 $d_k$차원 공간으로 보내야 내적이 의미를 갖습니다.
# - $W^V$: 토큰이 선택되었을 때 넘길 내용을 만듭니다. 점수 계산에는 쓰이지 않으므로 $d_v$가 $d_k$와 달라도 됩니다.
#
# $W^Q \ne W^K$이면 $S_{ij} = x_i W^Q (W^K)^\top x_j^\top$는 대칭일 필요가 없습니다. 계산으로 확인합니다.

# %%
seed_everything(0)
x = torch.randn(4, 3)                  # (T=4, d_model=3)
w_q, w_k = torch.randn(3, 3), torch.randn(3, 3)

same = x @ x.T                         # (T, T): q = k = x
projected = (x @ w_q) @ (x @ w_k).T    # (T, T): separate projections
print("q = k = x 일 때 대칭?", torch.allclose(same, same.T))
print("W_Q ≠ W_K 일 때 대칭?", torch.allclose(projected, projected.T))
print(f"예: S[0,1] = {projected[0, 1]:.3f},  S[1,0] = {projected[1, 0]:.3f}")
assert torch.allclose(same, same.T)
assert not torch.allclose(projected, projected.T)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "대칭이 아니다"가 핵심입니다. S[0,1]과 S[1,0]을 짚으며 "0번이 1번을 찾는 정도와 1번이 0번을 찾는 정도가 이제 다르다"고 말하세요. 도서관 비유의 한계(한 권을 고르는 게 아니라 모든 책을 섞는다)도 꼭 언급하세요. 청중이 비유를 너무 문자 그대로 받아들이는 것을 막아 줍니다.

# %% [markdown]
# ## 2. "I am a student" (원문 001)
#
# 원문은 "I"의 임베딩(embedding)을 $[1,1,1,1]$로 두고, 세 번째 행만 0이 아닌 $4\times4$ 행렬 $W^Q, W^K, W^V$를 보여 줍니다. 원문이 **적어 둔 것**과 우리가 **가정한 것**을 나눠 두겠습니다.
#
# - 원문에 있는 것: $x_{\text{I}} = [1,1,1,1]$, 세 행렬(세 번째 행만 0이 아님), 그 결과 $Q_{\text{I}}, K_{\text{I}}, V_{\text{I}}$, 점수 $3/\sqrt4 = 1.5$. 행렬이 전체를 보인 것인지 일부만 보인 그림인지는 원문에서 분명하지 않으므로, 적힌 그대로 씁니다.
# - 원문에 없는 것: "am", "a", "student"의 임베딩. 4×4 어텐션 행렬을 만들려면 이것이 필요하므로 이 노트북이 **임의로 골랐습니다** (`data/seed001_i_am_a_student.json`의 `assumed_tokens`). 아래에서 이 세 토큰이 관련된 숫자는 모두 이 가정에 달려 있습니다.
#
# 먼저 원문이 적은 곱셈을 다시 합니다.

# %%
ias = load_i_am_a_student()
x_i = ias["X"][0]                                       # (4,) the stated embedding of "I"
q_i, k_i, v_i = x_i @ ias["W_Q"], x_i @ ias["W_K"], x_i @ ias["W_V"]
print("Q_I =", q_i.tolist(), " K_I =", k_i.tolist(), " V_I =", v_i.tolist())
assert torch.equal(q_i, ias["Q_I"]) and torch.equal(k_i, ias["K_I"]) and torch.equal(v_i, ias["V_I"])

d_k = k_i.numel()
score_ii = (q_i @ k_i) / math.sqrt(d_k)
print(f"q·k = {q_i @ k_i:.0f},  d_k = {d_k},  점수 = {q_i @ k_i:.0f}/√{d_k} = {score_ii:.2f}")
assert score_ii == ias["score_I_I"] == 1.5

# %% [markdown] slideshow={"slide_type": "subslide"}
# 곱셈과 1.5는 맞습니다. 그런데 설명 세 군데가 틀렸습니다.
#
# > **원문 바로잡기 (키 차원)**: 원문은 "Key의 차원은 3"이라고 쓰고는 $\sqrt4$로 나눕니다. $K_{\text{I}} = [1,0,1,1]$은 4차원이므로 키 차원(key dimension)은 $d_k = 4$이고 $\sqrt{d_k} = 2$로 나누는 것이 맞습니다. 3은 차원이 아니라 내적 $q\cdot k$의 값입니다.

# %%
assert d_k == 4 and d_k != ias["claimed_key_dim"]
assert q_i @ k_i == ias["claimed_key_dim"]   # the "3" is the dot product

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (점수와 가중치)**: 원문은 1.5를 "I에 대한 self-attention"이라고 부르지만 1.5는 소프트맥스(softmax)에 넣기 전의 **점수**입니다. "I"가 자기 자신에게 주는 **가중치**는 같은 행의 다른 점수들(다른 토큰들의 키)에 따라 정해지므로 1.5만으로는 알 수 없습니다. 우리가 가정한 임베딩으로는 0.149입니다.
#
# 네 토큰 전체의 점수와 가중치를 계산합니다.

# %%
ias_res = qkv_attention(ias["X"], ias["X"], ias["W_Q"], ias["W_K"], ias["W_V"])
print("임베딩 (1~3행은 가정):\n", ias["X"])
print("점수:\n", ias_res["scores"])
print("가중치:\n", ias_res["weights"])
w_ii = ias_res["weights"][0, 0]
assert ias_res["scores"][0, 0] == 1.5 and abs(w_ii - 0.149) < 5e-4
assert torch.allclose(ias_res["weights"].sum(-1), torch.ones(4, dtype=torch.float64))

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
attention_heatmap(ias_res["scores"], ias["tokens"], ias["tokens"], ax=ax1, title="점수 QKᵀ/√d_k", cmap="Oranges")
attention_heatmap(ias_res["weights"], ias["tokens"], ias["tokens"], ax=ax2, title="가중치 (행의 합 1)")
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (자기 자신)**: 원문은 "당연히 자기 자신에 대한 Attention값이 가장 높다"고 하지만 당연하지 않습니다. 위의 "I" 행에서 가장 큰 가중치는 자기 자신(0.149)이 아니라 "am"(0.668)입니다. 원문의 행렬에서는 $Q$와 $K$가 임베딩의 **세 번째 성분만** 보고 만들어지므로 점수는 $S_{ij} = 3\,x_{i3}\,x_{j3}/2$입니다. 그래서 세 번째 성분이 0이 아닌 모든 쿼리에서 세 번째 성분이 가장 큰 토큰("am", 2)이 1위가 됩니다. 원문은 또 $Q_I \cdot Q_{student}$라고 썼는데, 쿼리끼리가 아니라 $Q_I \cdot K_{student}$입니다.
#
# 원문의 행렬만의 문제도 아닙니다. 투영 없이 $q = k = x$로 두더라도, 같은 방향으로 더 긴 벡터가 있으면 그쪽 점수가 자기 점수보다 큽니다.

# %%
row_i = ias_res["weights"][0]
print("'I' 행의 가중치:", row_i.numpy().round(3), "→ 최대:", ias["tokens"][row_i.argmax()])
assert row_i.argmax() != 0 and ias["tokens"][row_i.argmax()] == "am" and abs(row_i[1] - 0.668) < 5e-4
assert torch.linalg.matrix_rank(ias_res["Q"]) == 1        # Q sees only the third component
x3 = ias["X"][:, 2]
assert torch.equal(ias_res["scores"], 1.5 * torch.outer(x3, x3))   # S_ij = 3·x_i3·x_j3 / √4

x_plain = torch.tensor([[1.0, 1, 1, 1], [2.0, 2, 2, 2]])   # "I" and a longer vector in the same direction
s_plain = x_plain @ x_plain.T
print(f"q = k = x: I·I = {s_plain[0, 0]:.0f},  I·(2×I) = {s_plain[0, 1]:.0f}")
assert s_plain[0, 1] > s_plain[0, 0]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 하나 더 볼 것이 있습니다. 가정한 "a"의 임베딩은 세 번째 성분이 0이라 쿼리가 영벡터이고, 그래서 "a" 행의 점수는 모두 0, 가중치는 모두 1/4입니다. 쿼리가 아무것도 묻지 않으면 모든 키를 똑같이 봅니다.

# %%
print("'a'의 쿼리:", ias_res["Q"][2].tolist(), " 가중치:", ias_res["weights"][2].tolist())
assert torch.allclose(ias_res["weights"][2], torch.full((4,), 0.25, dtype=torch.float64))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 여기서 강조할 것은 "원문이 준 정보로 계산할 수 있는 것은 1.5까지"라는 점입니다. 4×4 행렬은 나머지 세 단어의 임베딩을 가정해야만 나옵니다. "자기 자신이 가장 높다"는 자주 듣는 말이지만 W^Q와 W^K가 다르면 보장되지 않고, 같아도 벡터 길이 때문에 깨진다는 것을 I·(2×I) 예로 보여 주세요.

# %% [markdown]
# ## 3. "어제 밤에 배가 고파서 치킨을 시켜서 먹었다" (원문 003)
#
# 원문은 8개 토큰을 4차원 벡터로 두고 $W_Q, W_K, W_V$를 직접 적은 뒤, 모든 중간 결과를 출력합니다. 목표는 "배"가 과일·신체·선박 중 무엇인지 문맥으로 정하는 것입니다. 원문이 적은 **입력**만 `data/seed003_bae.json`에서 읽고, 원문이 출력한 **숫자**는 `seed_claims`에 따로 두어 우리 계산과 비교합니다.

# %%
bae = load_bae()
tokens, X = bae["tokens"], bae["X"]
claims = bae["claims"]
BAE, GOPASEO = tokens.index("배"), tokens.index("고파서")
print(tokens)
print("X =\n", X)

res = qkv_attention(X, X, bae["W_Q"], bae["W_K"], bae["W_V"])
Q, K, V = res["Q"], res["K"], res["V"]    # (8, 4) each
print(f"Q[0,0] 손 계산: 0.1·0.5 + 0.2·0.2 + 0.1·0.1 + 0.3·0.3 = {0.1*0.5 + 0.2*0.2 + 0.1*0.1 + 0.3*0.3:.2f}")
assert abs(Q[0, 0] - 0.19) < 1e-12

# %% [markdown]
# ### 원문의 숫자와 비교
#
# 각 단계에서 원문이 출력한 행렬과 우리 계산의 가장 큰 차이를 봅니다. 원문은 소수 둘째(또는 셋째) 자리까지 적었으므로 반올림 차이는 0.005(또는 0.0005) 이하여야 합니다.

# %%
for name in ["Q", "K", "V"]:
    diff, idx = max_abs_diff(res[name], claims[name])
    print(f"{name}: 최대 차이 {diff:.3f}  (위치 {idx}: 계산 {res[name][idx]:.2f}, 원문 {claims[name][idx]:.2f})")
    assert diff > 0.05
assert [round(max_abs_diff(res[n], claims[n])[0], 2) for n in "QKV"] == [0.11, 0.12, 0.12]
assert torch.allclose(Q[0], torch.tensor([0.19, 0.15, 0.19, 0.17], dtype=torch.float64))
assert claims["Q"][0].tolist() == [0.17, 0.24, 0.17, 0.22]
seed_qk = claims["Q"] @ claims["K"].T
print(f"원문 QKᵀ vs 원문 자신의 Q·Kᵀ: 최대 차이 {max_abs_diff(seed_qk, claims['QK_T'])[0]:.3f}")
print(f"원문 스케일 점수 vs 원문 QKᵀ/2: 최대 차이 {max_abs_diff(claims['QK_T'] / 2, claims['scaled_scores'])[0]:.4f}")
assert abs(max_abs_diff(seed_qk, claims["QK_T"])[0] - 0.099) < 5e-4
assert max_abs_diff(claims["QK_T"] / 2, claims["scaled_scores"])[0] <= 0.0006

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (행렬 곱)**: 원문의 $Q = XW_Q$, $K = XW_K$, $V = XW_V$는 원문 자신의 $X$와 $W$로 다시 곱하면 나오지 않습니다. 첫 행만 봐도 "어제"의 쿼리는 $[0.19, 0.15, 0.19, 0.17]$인데 원문은 $[0.17, 0.24, 0.17, 0.22]$라고 적었습니다 (최대 차이: $Q$ 0.11, $K$ 0.12, $V$ 0.12). 원문의 $QK^\top$는 원문이 적은 $Q$와 $K$를 곱한 것과도 최대 0.099 다릅니다. 여기까지 원문 안에서 앞뒤가 맞는 단계는 $\sqrt{d_k} = 2$로 나누는 것(차이 0.0005 이하, 반올림 범위)뿐입니다.
#
# 이제 소프트맥스 단계입니다. 원문의 가중치 행렬은 행마다 합이 1이어야 합니다. 8개 항목을 셋째 자리에서 반올림했으므로 반올림만으로 생길 수 있는 합의 오차는 최대 $8 \times 0.0005 = 0.004$입니다.

# %%
seed_row_sums = claims["weights"].sum(-1)
print("원문 가중치의 행 합:", dict(zip(tokens, seed_row_sums.numpy().round(3).tolist())))
bad_rows = [tokens[i] for i in torch.nonzero((seed_row_sums - 1).abs() > 0.004).flatten()]
print("반올림으로 설명되지 않는 행:", bad_rows)
assert bad_rows == ["치킨을"] and abs(seed_row_sums[5] - 0.992) < 1e-9

seed_exp = torch.exp(claims["scaled_scores"][BAE])
print(f"원문 '배' 행: exp 합 {seed_exp.sum():.3f} (원문 {claims['exp_sum_row_bae']:.3f}),",
      f"softmax 최대 차이 {max_abs_diff(seed_exp / seed_exp.sum(), claims['weights_row_bae'])[0]:.4f}")
assert max_abs_diff(seed_exp / seed_exp.sum(), claims["weights_row_bae"])[0] < 0.0006

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (행의 합)**: 원문의 가중치 행렬에서 "치킨을" 행의 합은 0.992로, 반올림으로 설명할 수 있는 범위(±0.004)를 벗어납니다. 원문이 자세히 보여 준 "배" 행의 소프트맥스는 원문의 (틀린) 점수에서 출발했다는 점만 빼면 계산이 맞습니다.
#
# 마지막 단계인 출력과 결론입니다.

# %%
seed_out_bae = claims["weights_row_bae"] @ claims["V"]
print("원문 가중치 × 원문 V ('배' 행):", seed_out_bae.numpy().round(3))
print("원문이 적은 '배'의 출력:       ", claims["output_row_bae"].numpy().round(3))
print("우리가 계산한 '배'의 출력:     ", res["output"][BAE].numpy().round(3))
assert max_abs_diff(seed_out_bae, claims["output_row_bae"])[0] > 0.03
assert torch.allclose(seed_out_bae, torch.tensor([0.242, 0.201, 0.194, 0.176], dtype=torch.float64), atol=5e-4)
assert torch.allclose(res["output"][BAE], torch.tensor([0.202, 0.179, 0.189, 0.209], dtype=torch.float64), atol=5e-4)

final = claims["final_output_text"]
print(f"원문 결론의 출력 {final.tolist()}: 길이 {final.numel()} (d_v = {V.shape[1]}),",
      f"V 첫 열의 최댓값 {V[:, 0].max():.2f} (원문 V: {claims['V'][:, 0].max():.2f})")
assert final.numel() != V.shape[1]
assert final[0] > max(V[:, 0].max(), claims["V"][:, 0].max())

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (출력)**: 원문의 "배" 출력 $[0.275, 0.222, 0.206, 0.183]$은 원문 자신의 가중치와 $V$를 곱한 $[0.242, 0.201, 0.194, 0.176]$과도 다릅니다. 바른 값은 $[0.202, 0.179, 0.189, 0.209]$입니다. 결론에 나오는 "최종 Output $[0.73, 0.32]$"는 앞의 계산 어디에서도 나오지 않습니다. 출력은 4차원이어야 하고, 가중치가 양수이고 합이 1인 가중합은 각 성분이 $V$의 그 열의 최댓값을 넘을 수 없는데 0.73은 $V$ 첫 열의 최댓값(0.28, 원문의 $V$로도 0.32)보다 큽니다.

# %% [markdown]
# ### 숫자가 실제로 보여 주는 것
#
# 원문의 결론은 "배"가 "고파서"에 가장 강하게 연결되어 "사람의 배"로 해석된다는 것입니다. 우리가 계산한 "배" 행을 봅시다.

# %%
row = res["weights"][BAE]
order = row.argsort(descending=True)
print("'배' 행의 가중치 (큰 순서):", [(tokens[j], round(row[j].item(), 4)) for j in order])
rank_gopaseo = (order == GOPASEO).nonzero().item() + 1
print(f"'고파서'의 순위: {rank_gopaseo}/8,  1/8 = 0.125,  최대/최소 = {row.max() / row.min():.3f}")
print(f"모든 가중치와 1/8의 최대 차이: {(res['weights'] - 1 / 8).abs().max():.4f}")
assert row.argmax() == BAE and rank_gopaseo == 7
assert claims["weights_row_bae"][GOPASEO] < claims["weights_row_bae"].max()
assert (res["weights"] - 1 / 8).abs().max() < 0.007

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기 (결론)**: "배"가 가장 많이 보는 토큰은 "고파서"가 아니라 **"배" 자신**(0.131)이고, "고파서"(0.122)는 8개 중 7번째입니다. 원문 자신의 가중치로도 "고파서"(0.122)는 가장 큰 값(0.129)보다 작습니다.
#
# 더 중요한 것은 **모든** 가중치가 균등값 $1/8 = 0.125$에서 0.007 이내라는 점입니다. 이 행렬에서 어떤 의미를 읽어 내는 것은 무리입니다. 이유는 두 가지입니다.
#
# 1. 점수가 작습니다. $X$와 $W$의 성분이 0.5 이하라 점수가 0.03~0.16 범위에 있고, 이렇게 작은 점수 차이는 소프트맥스를 거의 움직이지 못합니다.
# 2. 모든 성분이 양수입니다. 그러면 쿼리들이 거의 같은 방향을 가리키고(쿼리끼리의 코사인 유사도가 모두 0.89 이상), 순위는 쿼리가 아니라 키의 길이가 정합니다. 가장 긴 키는 "배"(‖k‖ = 0.593)이고, **모든 쿼리가 이 키를 1위로** 고릅니다. 관련성이 아니라 키의 크기가 순위를 정합니다.
#
# 그리고 출력의 모든 행이 거의 같아집니다. 균등한 가중치의 가중합은 $V$의 평균이기 때문입니다. 무엇보다 원문의 $W$는 손으로 적은 숫자일 뿐 학습된 것이 아니므로, 이 예제는 **계산 순서**를 보여 줄 뿐 "배"의 뜻에 대해서는 아무것도 보여 주지 않습니다.

# %%
print("각 쿼리의 1위 키:", [tokens[j] for j in res["weights"].argmax(-1)])
print("키의 길이 ‖k‖:", dict(zip(tokens, K.norm(dim=-1).numpy().round(3).tolist())))
q_unit = Q / Q.norm(dim=-1, keepdim=True)                      # (8, 4) query directions
print(f"쿼리끼리의 코사인 유사도 최솟값: {(q_unit @ q_unit.T).min():.3f}")
print(f"점수 범위: {res['scores'].min():.3f} ~ {res['scores'].max():.3f}")
print(f"출력과 V 평균의 최대 차이: {(res['output'] - V.mean(0)).abs().max():.4f}")
assert (res["weights"].argmax(-1) == BAE).all() and K.norm(dim=-1).argmax() == BAE
assert (q_unit @ q_unit.T).min() > 0.89 and abs(K[BAE].norm() - 0.593) < 5e-4
assert (res["output"] - V.mean(0)).abs().max() < 0.002
assert 0.03 < res["scores"].min() and res["scores"].max() < 0.17

# %% [markdown] slideshow={"slide_type": "subslide"}
# 그림으로 보면 더 분명합니다. 위는 $Q, K, V$와 출력(행마다 거의 같은 색), 아래는 점수와 가중치입니다. 가중치 그림의 색 범위를 0~1로 두면 전체가 한 가지 연한 색입니다.

# %%
panels = {"Q": "쿼리 Q = X·W_Q", "K": "키 K = X·W_K", "V": "밸류 V = X·W_V", "output": "출력 = 가중치·V"}
fig, axes = plt.subplots(1, 4, figsize=(13, 3.6))
for ax, (name, title) in zip(axes, panels.items()):
    attention_heatmap(res[name], tokens, [f"{name[0].upper()}{j}" for j in range(4)], ax=ax, title=title,
                      cmap="Greens", vmax=0.4, colorbar=False)
    ax.set_xlabel("차원")
    ax.set_ylabel("")
axes[0].set_ylabel("토큰")
fig.tight_layout()
plt.show()

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.6))
attention_heatmap(res["scores"], tokens, tokens, ax=ax1, title="점수 QKᵀ/2", cmap="Oranges", fmt=".3f",
                  colorbar=False)
attention_heatmap(res["weights"], tokens, tokens, ax=ax2, title="가중치 (색 범위 0~1)", vmax=1.0, fmt=".3f")
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 원문 바로잡기가 많아서 지루해질 수 있습니다. 청중에게는 세 가지만 남기세요. (1) 행렬 곱부터 틀렸다, (2) 맞게 계산해도 가중치는 거의 1/8로 균등하다, (3) 그래서 "배 = 사람의 배"라는 결론은 이 숫자에서 나올 수 없다. 모든 쿼리가 "배"를 1위로 고르는 이유(양수 성분, 긴 키)는 좋은 토론거리입니다.

# %% [markdown]
# ## 4. 쿼리를 골라 보기
#
# 슬라이더로 쿼리 토큰을 고르면 그 토큰의 가중치가 키마다 막대로 그려집니다. 두 번째 슬라이더는 모든 점수에 곱하는 배율입니다 ($W^Q$에 그 수를 곱한 것과 같고, 05번의 온도(temperature)를 그 역수로 둔 것과도 같습니다). 확인할 것:
# - 배율 1에서는 어느 쿼리를 골라도 막대가 점선(균등 1/8)에 붙어 있다.
# - 배율을 키우면 분포가 한쪽으로 쏠리지만, 1위는 어느 쿼리에서나 "배"다.

# %% tags=["nbval-ignore-output"]
query_explorer(res["scores"], tokens)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 그림을 쿼리 "배", "고파서", "먹었다"에 대해, 위는 배율 1, 아래는 배율 50으로 그립니다.

# %%
queries = [BAE, GOPASEO, tokens.index("먹었다")]
grid = draw_query_grid(res["scores"], tokens, queries, scales=(1.0, 50.0))
plt.show()

# %%
print("배율 1, 각 쿼리의 최대 가중치:", grid[0].max(-1).round(3))
print("배율 50, 각 쿼리의 최대 가중치:", grid[1].max(-1).round(3), "→ 1위:", [tokens[j] for j in grid[1].argmax(-1)])
assert (abs(grid[0] - 1 / 8) < 0.007).all()
assert (grid[1].argmax(-1) == BAE).all() and grid[1].max() > 0.5
assert abs(grid[0][0] - row.numpy()).max() < 1e-12

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 "배"에 두고 배율을 천천히 올리세요. 쏠림이 생겨도 1위가 "고파서"로 바뀌지 않는다는 것을 청중이 직접 보게 하는 것이 목적입니다. 배율은 분포를 날카롭게 할 뿐 순위를 바꾸지 않습니다(양수 배율이면 점수의 순서가 그대로입니다).

# %% [markdown]
# ## 5. 셀프 어텐션과 크로스 어텐션
#
# 지금까지는 쿼리·키·밸류가 모두 같은 시퀀스(sequence) $X$에서 나왔습니다. 이것이 **셀프 어텐션**입니다. 02번의 seq2seq에서는 달랐습니다. 디코더(decoder)가 다음 단어를 만들 때 **디코더의 은닉 상태(hidden state)** 로 "무엇이 필요한가"를 묻고, **인코더(encoder)의 은닉 상태들**에서 답을 찾아 가져왔습니다. 이것이 **크로스 어텐션**입니다.
#
# | | 쿼리를 만드는 것 | 키·밸류를 만드는 것 | 가중치의 모양 |
# |---|---|---|---|
# | 셀프 어텐션 | $X$ | 같은 $X$ | $T \times T$ |
# | 크로스 어텐션 | 디코더 은닉 상태 $H_{\text{dec}}$ ($T_q$개) | 인코더 은닉 상태 $H_{\text{enc}}$ ($T_k$개) | $T_q \times T_k$ |
#
# $$Q = H_{\text{dec}} W^Q,\quad K = H_{\text{enc}} W^K,\quad V = H_{\text{enc}} W^V,\qquad \text{출력} = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V \in \mathbb{R}^{T_q \times d_v}$$
#
# 키와 밸류는 반드시 같은 시퀀스에서 나와야 합니다. $j$번째 키로 매긴 가중치를 $j$번째 밸류에 곱하기 때문입니다. 쿼리의 개수는 자유롭습니다. 영어 4토큰을 한국어 3토큰으로 옮기는 작은 예를 계산합니다. 상태와 행렬은 무작위이므로 가중치 패턴에는 의미가 없고, 모양과 성질만 봅니다 (학습된 정렬(alignment)은 02번에서 보았습니다).

# %%
seed_everything(3)
src, tgt = ["I", "am", "a", "student"], ["나는", "학생", "이다"]
h_enc = torch.randn(len(src), 4)        # (T_k=4, d_model=4) encoder states
h_dec = torch.randn(len(tgt), 4)        # (T_q=3, d_model=4) decoder states
w_q, w_k, w_v = (torch.randn(4, 4) / 2 for _ in range(3))

cross = qkv_attention(h_dec, h_enc, w_q, w_k, w_v)
self_enc = qkv_attention(h_enc, h_enc, w_q, w_k, w_v)
print("크로스: 가중치", tuple(cross["weights"].shape), " 출력", tuple(cross["output"].shape))
print("셀프(인코더): 가중치", tuple(self_enc["weights"].shape), " 출력", tuple(self_enc["output"].shape))
assert cross["weights"].shape == (3, 4) and cross["output"].shape == (3, 4)
assert self_enc["weights"].shape == (4, 4)
assert torch.allclose(cross["weights"].sum(-1), torch.ones(3))
torch.testing.assert_close(cross["output"], F.scaled_dot_product_attention(h_dec @ w_q, h_enc @ w_k, h_enc @ w_v))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 크로스 어텐션의 출력은 **인코더 밸류**의 가중합입니다. 디코더 상태는 쿼리를 통해 가중치에만 영향을 줍니다. 인코더를 바꾸면 같은 쿼리에서도 출력이 바뀌고, 디코더를 바꾸면 가중치가 바뀌지만 출력은 여전히 인코더 밸류들의 볼록 결합(convex combination)입니다.

# %%
torch.testing.assert_close(cross["output"], cross["weights"] @ (h_enc @ w_v))
other_dec = qkv_attention(torch.randn(3, 4), h_enc, w_q, w_k, w_v)
v_enc = h_enc @ w_v                                              # (T_k, d_v)
inside = (other_dec["output"] >= v_enc.min(0).values - 1e-6) & (other_dec["output"] <= v_enc.max(0).values + 1e-6)
print("다른 디코더 상태에서도 출력이 인코더 밸류의 범위 안:", bool(inside.all()))
assert inside.all() and not torch.allclose(other_dec["weights"], cross["weights"])

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [4, 4]})
attention_heatmap(cross["weights"], tgt, src, ax=ax1, title="크로스 어텐션 (3 × 4)")
ax1.set_xlabel("인코더 키")
ax1.set_ylabel("디코더 쿼리")
attention_heatmap(self_enc["weights"], src, src, ax=ax2, title="인코더 셀프 어텐션 (4 × 4)")
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 표의 "가중치의 모양" 열을 가리키며 "행은 묻는 쪽, 열은 답하는 쪽"이라고 정리하세요. 트랜스포머 디코더에는 두 종류가 다 들어 있습니다: 디코더끼리의 셀프 어텐션과, 인코더를 보는 크로스 어텐션. 이미지 캡셔닝이나 텍스트-이미지 모델도 같은 구조(텍스트가 쿼리, 이미지 패치가 키·밸류)라고 덧붙이면 좋습니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("03-k", 답)` 한 번으로 확인합니다. 풀이는 숨겨진 셀에 있습니다.
#
# **03-1.** 입력 `X` $(T, d_{\text{model}})$와 세 행렬을 받아 `(output, weights)`를 돌려주는 셀프 어텐션을 완성하세요. `helpers.attention`의 `softmax`는 써도 되지만 `scaled_dot_product_attention`은 쓰지 마세요.

# %%
def self_attention(X, W_Q, W_K, W_V):
    raise NotImplementedError

check("03-1", self_attention)

# %% jupyter={"source_hidden": true}
def self_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V          # (T, d_k), (T, d_k), (T, d_v)
    weights = softmax(Q @ K.T / math.sqrt(Q.shape[-1]))   # (T, T), rows sum to 1
    return weights @ V, weights

check("03-1", self_attention)

# %% [markdown]
# **03-2.** 디코더 상태 `dec` $(T_q, d_{\text{model}})$와 인코더 상태 `enc` $(T_k, d_{\text{model}})$를 받아 크로스 어텐션의 `(output, weights)`를 돌려주세요. 검사는 $T_q = 3$, $T_k = 5$로 합니다.

# %%
def cross_attention(dec, enc, W_Q, W_K, W_V):
    raise NotImplementedError

check("03-2", cross_attention)

# %% jupyter={"source_hidden": true}
def cross_attention(dec, enc, W_Q, W_K, W_V):
    Q = dec @ W_Q                                  # (T_q, d_k): the decoder asks
    K, V = enc @ W_K, enc @ W_V                    # (T_k, d_k), (T_k, d_v): the encoder answers
    weights = softmax(Q @ K.T / math.sqrt(Q.shape[-1]))   # (T_q, T_k)
    return weights @ V, weights

check("03-2", cross_attention)

# %% [markdown]
# **03-3.** 배 예제에서 모든 점수에 양수 `c`를 곱합니다. "배" 행의 가장 큰 가중치가 0.5 이상이 되는 `c`를 하나 찾으세요. `bae_top_weight(c)`는 그 최대 가중치와 그 키를 돌려줍니다. 찾은 뒤, 1위 키가 무엇인지도 보세요.

# %%
c = ...

check("03-3", c)

# %% jupyter={"source_hidden": true}
c = next(c for c in range(1, 1000) if bae_top_weight(c)[0] >= 0.5)   # smallest integer that works
print(c, bae_top_weight(c))

check("03-3", c)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. $W^Q = W^K$로 묶으면 파라미터가 줄어듭니다. 점수 행렬은 어떤 성질을 갖게 되고(1절), 그것이 "먹었다 → 치킨을" 같은 관계를 배우는 데 왜 불리할까요?
# 2. 배 예제에서 모든 쿼리가 "배"를 1위로 골랐습니다. $X$와 $W$의 성분이 모두 양수라서 생긴 일이라면, 실제 모델의 임베딩과 가중치에서는 어떻게 다를까요? 학습된 모델이 특정 토큰(예: 문장 첫 토큰)에 가중치를 몰아주는 현상과 비교해 보세요.
# 3. 원문의 결론("배 = 사람의 배")처럼, 학습되지 않은 손 계산 예제에서 의미를 읽고 싶어지는 이유는 무엇일까요? 어떤 실험을 해야 그런 결론을 말할 수 있을까요?
# 4. 크로스 어텐션에서 키와 밸류는 반드시 같은 시퀀스에서 나와야 합니다. 쿼리는 왜 그럴 필요가 없을까요? 쿼리가 한 개뿐인 크로스 어텐션은 어디에 쓸 수 있을까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번과 3번을 먼저 하세요. 1번은 오늘 1절의 대칭 계산으로 바로 답이 나오고, 3번은 "숫자를 검증하는 습관"이라는 오늘의 부주제를 정리합니다. 2번은 04·05번(점수의 크기, 온도)과 이어지고, 4번은 02번(디코더의 한 시점이 쿼리 하나인 크로스 어텐션)이나 풀링(학습되는 쿼리 하나로 시퀀스 전체를 요약하는 것)으로 이어집니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 쿼리·키를 따로 투영하면 점수가 비대칭이 된다 | $q=k=x$는 대칭, $W^Q \ne W^K$는 비대칭 (assert) |
# | "I am a student": 곱셈과 1.5는 맞고, $d_k = 4$ | 3은 키 차원이 아니라 내적 값 (원문 바로잡기) |
# | 1.5는 점수이고 "자기 자신이 최대"는 보장되지 않는다 | 가정한 임베딩에서 I→I 가중치 0.149, 1위는 am 0.668 |
# | 배 예제: 원문의 $Q, K, V, QK^\top$가 틀렸다 | 최대 차이 0.11~0.12, 원문 자신의 $Q K^\top$와도 0.099 차이 |
# | 원문의 가중치 행 합과 출력이 맞지 않는다 | "치킨을" 행 합 0.992, [0.73, 0.32]는 가중합으로 불가능 |
# | 바르게 계산한 가중치는 거의 균등하고 1위는 "배" 자신 | 모든 가중치가 1/8 ± 0.007, "고파서"는 7위 |
# | 크로스 어텐션: 쿼리는 디코더, 키·밸류는 인코더 | 가중치 $(T_q, T_k) = (3, 4)$, PyTorch와 같은 값 |
#
# 다음 노트북(04)에서는 점수를 왜 $\sqrt{d_k}$로 나누는지, 그리고 점수가 너무 크거나 작을 때 소프트맥스와 기울기에 어떤 일이 생기는지 봅니다.
