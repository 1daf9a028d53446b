# %% [markdown]
# # 07. 멀티 헤드 어텐션
#
# 특성 차원을 $h$ 조각으로 나눠 어텐션을 $h$번 따로 계산하면, 파라미터 수와 행렬 곱 연산량은 그대로인데 쿼리마다 서로 다른 곳을 동시에 볼 수 있습니다.
#
# **학습 목표**
# - $(B, T, C) \to (B, h, T, d) \to (B, T, C)$ 모양 바꾸기를 단계별로 따라가고, 흔한 실수 네 가지가 결과를 얼마나 바꾸는지 수치로 확인한다.
# - `helpers`의 구현이 같은 가중치를 넣은 `torch.nn.MultiheadAttention`과 출력·헤드별 가중치까지 같음을 확인한다.
# - 헤드 $h$개(크기 $C/h$)와 헤드 1개(크기 $C$)의 파라미터 수와 연산량을 식으로 세고 측정해, 같은 부분(행렬 곱)과 다른 부분(소프트맥스(softmax) 횟수와 $h \cdot N^2$ 메모리)을 구분한다.
# - 작은 모델을 학습시켜 헤드마다 다른 패턴(이전 토큰, 첫 토큰)을 배우는 것을 어텐션 맵으로 본다.
#
# **선수 지식**: 03번(쿼리·키·밸류와 투영), 04번($\sqrt{d_k}$로 나누는 이유). 06번의 드롭아웃은 몰라도 됩니다.
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작 질문은 "어텐션 한 번으로 '앉았다'가 주어와 장소를 동시에 가져올 수 있을까?"입니다. 1절의 숫자 예가 답(한 번의 가중 평균은 섞어 버린다)을 보여 주고, 6절의 학습된 모델이 헤드 두 개가 실제로 일을 나누는 모습을 보여 줍니다. 시간이 부족하면 3절의 실수 표와 5절의 원문 바로잡기만 짚으세요.

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn as nn

from helpers import seed_everything, setup
from helpers.attention import MultiHeadAttention, causal_mask
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check
from helpers.multihead import (
    MISTAKES,
    OffsetModel,
    accuracy,
    draw_all_heads,
    draw_head,
    head_roles,
    head_selector,
    make_offset_batch,
    manual_mha,
    mean_head_maps,
    measured_matmul_flops,
    merge_heads,
    mha_costs,
    mha_param_formula,
    offset_profile,
    param_count,
    split_heads,
    train_offset_model,
)

setup()

# %% [markdown]
# ## 1. 왜 헤드가 여럿인가
#
# 원문의 문장 "고양이가 매트 위에 앉았다"에서 "앉았다"라는 토큰(token)은 **누가**(고양이가)와 **어디에**(매트 위에)를 둘 다 알고 싶습니다.
# 어텐션 한 번은 쿼리(query)마다 밸류(value)의 가중 평균 **하나**를 돌려줍니다. 가중치(weight)를 두 토큰에 나눠 주면 두 밸류가 한 벡터로 섞입니다.
#
# 숫자로 확인합니다. 두 밸류 $a$, $b$를 반반 섞은 결과는 "주어가 $a$, 장소가 $b$"인 경우와 "주어가 $b$, 장소가 $a$"인 경우에 똑같습니다. 헤드(head)를 두 개 두고 각 헤드가 한 토큰만 본 뒤 결과를 이어 붙이면 두 경우가 구별됩니다.

# %%
a = torch.tensor([1.0, 0.0, 2.0])  # value of the subject token
b = torch.tensor([0.0, 3.0, 1.0])  # value of the place token

one_head_ab = 0.5 * a + 0.5 * b
one_head_ba = 0.5 * b + 0.5 * a
two_heads_ab = torch.cat([a, b])  # head 0 looks at the subject, head 1 at the place
two_heads_ba = torch.cat([b, a])
print("헤드 1개:", one_head_ab, one_head_ba)
print("헤드 2개:", two_heads_ab, two_heads_ba)
assert torch.equal(one_head_ab, one_head_ba)
assert not torch.equal(two_heads_ab, two_heads_ba)

# %% [markdown]
# 멀티 헤드 어텐션(multi-head attention)은 이 생각을 그대로 구현합니다. 단, 헤드를 늘리면서 계산량이 늘지 않도록 **특성 차원을 나눠서** 씁니다. 특성 $C$개를 헤드 $h$개가 $d = C/h$개씩 나눠 가집니다.

# %% [markdown]
# ## 2. 수식
#
# 입력 $X \in \mathbb{R}^{T \times C}$ (토큰 $T$개, 특성 $C$개)에서 헤드 $i$는 자기 투영(projection) $W_i^Q, W_i^K, W_i^V \in \mathbb{R}^{C \times d}$로 쿼리·키(key)·밸류를 만들고 스케일드 닷프로덕트 어텐션(scaled dot-product attention)을 따로 계산합니다.
#
# $$\text{head}_i = \mathrm{softmax}\!\left(\frac{(X W_i^Q)(X W_i^K)^\top}{\sqrt{d}}\right) X W_i^V \in \mathbb{R}^{T \times d}, \qquad d = \frac{C}{h}$$
#
# $$\mathrm{MultiHead}(X) = \big[\text{head}_1 \,\|\, \cdots \,\|\, \text{head}_h\big]\, W^O, \qquad W^O \in \mathbb{R}^{C \times C}$$
#
# 두 가지를 눈여겨봅니다.
#
# - $W_1^Q, \dots, W_h^Q$를 옆으로 나란히 붙이면 $C \times C$ 행렬 하나입니다. 그래서 구현은 $C \to C$ 선형층 **하나**로 $Q$를 한 번에 만든 뒤, 결과의 열을 $d$개씩 잘라 헤드에 나눠 줍니다.
# - 점수(score)를 나누는 수는 헤드 하나의 키 차원(key dimension) $\sqrt{d}$입니다. $\sqrt{C}$가 아닙니다. 내적(dot product)이 $d$개 항의 합이기 때문입니다(04번).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 칠판에 $C \times C$ 행렬을 그리고 세로줄로 $h$칸을 나눠 "칸 하나가 $W_i^Q$"라고 보여 주세요. 이 그림 하나로 "파라미터 수는 $h$와 무관하다"(5절)와 "열을 $d$개씩 자르면 된다"(3절)가 함께 설명됩니다.

# %% [markdown]
# ## 3. 모양 바꾸기: $(B, T, C) \to (B, h, T, d) \to (B, T, C)$
#
# 배치 $B=2$, 토큰 $T=3$, 특성 $C=8$, 헤드 $h=2$(헤드 크기 $d=4$)로 따라갑니다. 값이 어디로 가는지 보이도록 `x[b, t, c] = 100·t + c`로 채웁니다. 백의 자리가 토큰 번호, 나머지가 특성 번호입니다.

# %%
B, T, C, H = 2, 3, 8, 2
D = C // H
x = (100 * torch.arange(T).view(1, T, 1) + torch.arange(C).view(1, 1, C)).expand(B, T, C).float()  # (B, T, C)

step1 = x.view(B, T, H, D)     # (B, T, h, d): cut each token's features into h pieces
step2 = step1.transpose(1, 2)  # (B, h, T, d): heads before time, so each head sees all tokens
print("x:", tuple(x.shape), "→ view:", tuple(step1.shape), "→ transpose:", tuple(step2.shape))
print("헤드 0 (토큰 0·1·2의 특성 0–3):\n", step2[0, 0].int())
print("헤드 1 (토큰 0·1·2의 특성 4–7):\n", step2[0, 1].int())
assert torch.equal(step2[:, 1, 2], x[:, 2, D:2 * D])  # head 1, token 2 = token 2's features 4..7
assert torch.equal(split_heads(x, H), step2)

# %% [markdown]
# 되돌릴 때는 순서를 거꾸로 합니다. `transpose(1, 2)`로 $(B, T, h, d)$를 만든 뒤 마지막 두 축을 합쳐 $(B, T, C)$로 만듭니다. 헤드 0, 1, …의 결과가 순서대로 이어 붙습니다. 이것이 수식의 $[\text{head}_1 \| \cdots \| \text{head}_h]$입니다.

# %%
heads = step2.contiguous()      # (B, h, T, d): attention outputs are computed in this layout
back = heads.transpose(1, 2)    # (B, T, h, d)
print("transpose:", tuple(back.shape), " 메모리 연속(contiguous):", back.is_contiguous())
try:
    back.view(B, T, C)
    view_failed = False
except RuntimeError:
    view_failed = True
merged = back.reshape(B, T, C)  # (B, T, C); reshape copies when view cannot
print("view 실패:", view_failed, " reshape:", tuple(merged.shape))
assert view_failed and torch.equal(merged, x)
assert torch.equal(merge_heads(split_heads(x, H)), x)

# %% [markdown]
# 어텐션의 출력은 $(B, h, T, d)$ 배치로 새로 만들어지므로, 전치한 뒤에는 메모리에서 연속(contiguous)이 아닙니다. 그래서 `view`는 오류를 내고 `reshape`(또는 `.contiguous().view`)를 써야 합니다. 이제 이 조각들로 멀티 헤드 어텐션 전체를 직접 계산하고 `helpers.attention.MultiHeadAttention`의 결과와 비교합니다.

# %%
seed_everything(7)
mha = MultiHeadAttention(d_model=16, num_heads=4).eval()
x = torch.randn(2, 5, 16)  # (B, T, C)
ref_out, ref_w = mha(x)
out, w = manual_mha(mha, x)
print("출력:", tuple(out.shape), " 가중치:", tuple(w.shape))
torch.testing.assert_close(out, ref_out)
torch.testing.assert_close(w, ref_w)

# %% [markdown]
# ### 흔한 실수: 모양은 맞고 값은 틀린 네 가지
#
# 아래 실수들은 모두 **오류 없이 실행되고 모양도 맞습니다**. 그래서 더 위험합니다. 같은 가중치와 입력에서 올바른 출력과의 최대 차이를 잽니다.
#
# | 실수 | 코드 |
# |---|---|
# | `scale_by_d_model` | 점수를 $\sqrt{d}$ 대신 $\sqrt{C}$로 나눔 |
# | `split_without_transpose` | `q.view(B, h, T, d)`: 전치 없이 곧바로 헤드로 나눔 |
# | `merge_without_transpose` | `out.reshape(B, T, C)`: 전치 없이 곧바로 이어 붙임 |
# | `reversed_head_order` | 헤드를 거꾸로 이어 붙임 |

# %%
diffs = {}
for mistake in MISTAKES:
    wrong_out, wrong_w = manual_mha(mha, x, mistake=mistake)
    diffs[mistake] = (wrong_out - ref_out).abs().max().item()
    print(f"{mistake:<24} 최대 |차이| = {diffs[mistake]:.4f}")
out_size = ref_out.abs().max().item()
print(f"{'(출력의 크기)':<22} 최대 |출력| = {out_size:.4f}")
assert min(diffs.values()) > 0.1 * out_size                       # no mistake is a rounding error
assert round(diffs["scale_by_d_model"] / out_size, 2) == 0.15
assert all(diffs[m] > 0.5 * out_size for m in MISTAKES[1:])       # the three layout mistakes: same order as the output

# %% [markdown]
# 모양·순서에 관한 세 실수는 차이가 출력 크기와 같은 자릿수입니다. 차이가 가장 작은 $\sqrt{C}$ 실수도 출력 크기의 15%입니다. 어느 것도 반올림 오차가 아니라 다른 함수를 계산한 것입니다. 실수마다 무엇이 틀어졌는지 봅니다.
#
# **$\sqrt{C}$로 나누기.** 점수가 $\sqrt{h} = 2$배 작아져 가중치가 더 평평해집니다. 행마다 가장 큰 가중치의 평균으로 확인합니다. $h = 1$이면 $C = d$라서 이 실수가 드러나지 않는다는 점도 주의하세요.

# %%
_, w_scaled_wrong = manual_mha(mha, x, mistake="scale_by_d_model")
peak_right, peak_wrong = ref_w.max(-1).values.mean().item(), w_scaled_wrong.max(-1).values.mean().item()
print(f"행별 최대 가중치의 평균: √d로 나눔 {peak_right:.3f}, √C로 나눔 {peak_wrong:.3f}")
assert peak_wrong < peak_right

# %% [markdown]
# **전치 없이 나누기.** 메모리 순서는 "토큰 0의 특성 전부, 토큰 1의 특성 전부, …"입니다. 이것을 곧바로 $(B, h, T, d)$로 읽으면 한 헤드의 "토큰" 행이 실제로는 엉뚱한 토큰의 특성 조각이 됩니다. 앞의 `100·t + c` 텐서로 각 행이 어느 토큰에서 왔는지 봅니다.

# %%
x_id = (100 * torch.arange(3).view(1, 3, 1) + torch.arange(8).view(1, 1, 8)).float()  # (1, T=3, C=8)
right = split_heads(x_id, 2)[0] // 100       # (h, T, d): token index of every entry
wrong = x_id.view(1, 2, 3, 4)[0] // 100     # the same without the transpose
print("올바른 분할, 헤드별 각 행의 출처 토큰:", right[..., 0].int().tolist())
print("전치 없는 분할:                     ", wrong[..., 0].int().tolist())
assert right[..., 0].tolist() == [[0, 1, 2], [0, 1, 2]]
assert wrong[..., 0].tolist() != right[..., 0].tolist()

# %% [markdown]
# 전치 없이 나누면 헤드 0의 세 "토큰"은 실제로는 토큰 0, 0, 1이고 헤드 1은 1, 2, 2입니다. 어텐션이 토큰 사이가 아니라 한 토큰의 특성 조각 사이에서 계산됩니다.
#
# **헤드 순서 바꾸기.** 이어 붙이는 순서 자체는 임의로 정해도 됩니다. 다만 $W^O$의 열이 그 순서를 따라야 합니다. 헤드를 거꾸로 붙이면서 $W^O$의 열 블록도 같은 순서로 바꾸면 결과가 다시 같아집니다.

# %%
rev_out, _ = manual_mha(mha, x, mistake="reversed_head_order")
w_o_blocks = mha.out_proj.weight.view(16, 4, 4)  # (C_out, h, d): column block i multiplies head i
with torch.no_grad():
    fixed = nn.Linear(16, 16)
    fixed.weight.copy_(w_o_blocks.flip(1).reshape(16, 16))
    fixed.bias.copy_(mha.out_proj.bias)
    _, w_heads = manual_mha(mha, x)
    v_heads = split_heads(mha.v_proj(x), 4)                    # (B, h, T, d)
    rev_fixed = fixed(merge_heads((w_heads @ v_heads).flip(1)))
print(f"거꾸로 붙임: {diffs['reversed_head_order']:.4f},  W^O 열도 바꿈: {(rev_fixed - ref_out).abs().max().item():.1e}")
torch.testing.assert_close(rev_fixed, ref_out)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "모양이 맞으면 맞은 것"이라는 믿음을 깨는 것이 이 절의 목적입니다. 네 실수 모두 `assert out.shape == (B, T, C)`를 통과합니다. 청중에게 "이런 버그를 테스트로 잡으려면 무엇과 비교해야 할까?"라고 물어보세요. 답은 다음 절, 독립적인 구현(PyTorch)과 값 비교입니다.

# %% [markdown]
# ## 4. `torch.nn.MultiheadAttention`과 같은가
#
# PyTorch의 모듈은 $W^Q, W^K, W^V$를 세로로 쌓은 $3C \times C$ 행렬 `in_proj_weight` 하나에 담습니다. `MultiHeadAttention.from_torch`는 이것을 세 조각으로 잘라 복사합니다. 같은 입력에서 출력과 **헤드별** 가중치(`average_attn_weights=False`)를 비교합니다. 셀프 어텐션(self-attention)과, 쿼리 길이와 키 길이가 다른 크로스 어텐션(cross-attention) 모두 확인합니다.

# %%
seed_everything(11)
torch_mha = nn.MultiheadAttention(embed_dim=16, num_heads=4, batch_first=True).eval()
ours = MultiHeadAttention.from_torch(torch_mha).eval()
print("in_proj_weight:", tuple(torch_mha.in_proj_weight.shape), "→ q/k/v_proj.weight:", tuple(ours.q_proj.weight.shape))

x = torch.randn(3, 6, 16)       # (B, T_q, C)
memory = torch.randn(3, 9, 16)  # (B, T_k, C): another sequence for cross-attention
for name, (q_in, kv_in) in {"셀프": (x, x), "크로스": (x, memory)}.items():
    t_out, t_w = torch_mha(q_in, kv_in, kv_in, need_weights=True, average_attn_weights=False)
    o_out, o_w = ours(q_in, kv_in)
    torch.testing.assert_close(o_out, t_out)
    torch.testing.assert_close(o_w, t_w)
    print(f"{name} 어텐션: 출력 {tuple(o_out.shape)}, 헤드별 가중치 {tuple(o_w.shape)}, 최대 차이 {(o_out - t_out).abs().max().item():.1e}")

# %% [markdown]
# 마스크(mask)의 뜻은 반대입니다. 이 과정에서는 **True = 볼 수 있음**이고, PyTorch의 불리언 `attn_mask`는 **True = 볼 수 없음**입니다. 인과 마스크(causal mask)로 확인합니다.

# %%
allowed = causal_mask(6)  # (T, T), True = may attend
t_out, t_w = torch_mha(x, x, x, attn_mask=~allowed, need_weights=True, average_attn_weights=False)
o_out, o_w = ours(x, mask=allowed)
torch.testing.assert_close(o_out, t_out)
torch.testing.assert_close(o_w, t_w)
assert (o_w[..., ~allowed] == 0).all()
print("인과 마스크: 같음, 미래 위치의 가중치는 모두 0")

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 마스크 부호가 반대라는 점은 실무에서 가장 자주 나는 버그 중 하나입니다. `~allowed`를 빼고 실행하면 어떻게 되는지 즉석에서 보여 줘도 좋습니다. 모든 키가 가려진 행이 생기면 PyTorch는 NaN을, 이 과정의 구현은 0을 돌려줍니다. 이 차이는 `tests/test_mha_reference.py`가 검사합니다.

# %% [markdown]
# ## 5. 파라미터 수와 연산량: 헤드 $h$개 대 헤드 1개
#
# **파라미터.** 투영 네 개($W^Q, W^K, W^V, W^O$)가 각각 $C \times C$이고 편향이 $C$개씩입니다. 헤드 $i$의 $W_i^Q$는 $C \times d$이고 $h$개를 합치면 $C \times hd = C \times C$이므로, 식에 $h$가 나타나지 않습니다.
#
# $$P = 4C^2 + 4C$$
#
# 식의 값을 `sum(p.numel())`로 센 값, PyTorch 모듈의 값과 비교합니다.

# %%
C = 64
rows = []
for h in [1, 2, 4, 8, 16]:
    n_ours = param_count(MultiHeadAttention(C, h))
    n_torch = param_count(nn.MultiheadAttention(C, h, batch_first=True))
    rows.append((h, C // h, n_ours, n_torch))
    print(f"h={h:>2}, d={C // h:>2}: 우리 구현 {n_ours:,}  PyTorch {n_torch:,}")
print(f"식 4C²+4C = {mha_param_formula(C):,}")
assert all(n_ours == n_torch == mha_param_formula(C) for _, _, n_ours, n_torch in rows)

# %% [markdown]
# **연산량.** 곱셈-덧셈 한 번을 FLOP 2개로 셉니다. 길이 $N$, 배치 1이면
#
# | 단계 | 헤드 1개 ($d = C$) | 헤드 $h$개 ($d = C/h$) |
# |---|---|---|
# | 투영 4개: $(N \times C)(C \times C)$ | $8NC^2$ | $8NC^2$ |
# | 점수 $Q_i K_i^\top$ | $2N^2C$ | $h \cdot 2N^2 d = 2N^2C$ |
# | 가중합 $A_i V_i$ | $2N^2C$ | $h \cdot 2N^2 d = 2N^2C$ |
# | 소프트맥스 | 길이 $N$인 행 $N$개 | 길이 $N$인 행 $hN$개 |
# | 가중치 행렬 메모리 | $N^2$ | $hN^2$ |
#
# 행렬 곱은 헤드 수와 무관하지만, 소프트맥스와 가중치 행렬은 헤드마다 따로 있어서 $h$배가 됩니다. 원문의 ViT-Base 설정($C=768$, $h=12$, $N=196$)에서 식의 행렬 곱 FLOP을 PyTorch의 `FlopCounterMode`가 센 값과 비교합니다.

# %%
seed_everything(0)
x_vit = torch.randn(1, 196, 768)  # (B, N, C): 14×14 patches
measured = {}
for h in (1, 12):
    measured[h] = measured_matmul_flops(MultiHeadAttention(768, h).eval(), x_vit)
    formula = mha_costs(196, 768, h)
    print(f"h={h:>2}: 측정 {measured[h] / 1e9:.4f} GFLOP, 식 {formula['matmul_flops'] / 1e9:.4f} GFLOP,"
          f" 소프트맥스 행 {formula['softmax_rows']:,}, 가중치 {formula['weight_floats']:,}개")
    assert measured[h] == formula["matmul_flops"]
assert measured[1] == measured[12]

# %% [markdown]
# 원문 예의 배치 32로 가중치 행렬 메모리(float32, 4바이트)를 계산하고, 단계별 비율(헤드 12개 / 헤드 1개)을 그립니다.

# %%
one, many = mha_costs(196, 768, 1, batch=32), mha_costs(196, 768, 12, batch=32)
mb = {h: c["weight_floats"] * 4 / 1e6 for h, c in ((1, one), (12, many))}
print(f"가중치 행렬, 배치 32: 헤드 1개 {mb[1]:.2f} MB, 헤드 12개 {mb[12]:.2f} MB")
ratios = {"투영": "projection_flops", "점수": "score_flops", "가중합": "mix_flops",
          "소프트맥스 행": "softmax_rows", "가중치 메모리": "weight_floats"}
ratio_values = {name: many[key] / one[key] for name, key in ratios.items()}
print({name: round(r, 2) for name, r in ratio_values.items()})
assert [ratio_values[k] for k in ("투영", "점수", "가중합")] == [1.0, 1.0, 1.0]
assert ratio_values["소프트맥스 행"] == ratio_values["가중치 메모리"] == 12.0

fig, ax = plt.subplots(figsize=(6.4, 3.4))
bars = ax.bar(list(ratio_values), list(ratio_values.values()),
              color=["tab:gray"] * 3 + ["tab:red"] * 2)
ax.bar_label(bars, fmt="%.0f×")
ax.set_ylabel("헤드 12개 / 헤드 1개")
ax.set_title("ViT-Base 설정(C=768, N=196): 헤드 12개의 비용 비율")
ax.set_ylim(0, 14)
plt.show()

# %% [markdown]
# > **원문 바로잡기**: 원문은 768차원을 헤드 12개로 나누면 "총 연산량은 Single-Head와 동일"하다고 합니다. 행렬 곱 FLOP은 정확히 같습니다(위에서 측정: 두 경우 모두 1.0429 GFLOP). 그러나 소프트맥스는 길이 196인 행을 196번이 아니라 2,352번(12배) 계산하고, 가중치 행렬도 $196^2$개가 아니라 $12 \cdot 196^2 = 460{,}992$개를 만듭니다. 원문 복잡도 표의 "N=196이면 약 150 KB"는 헤드 하나, 예제 하나의 값입니다. 같은 원문의 ViT-Base 예(배치 32, 헤드 12개)에서 한 층의 가중치 행렬은 59.01 MB로, 헤드 하나일 때(4.92 MB)의 12배입니다.

# %%
assert round(measured[12] / 1e9, 4) == 1.0429
vit12 = mha_costs(196, 768, 12)
assert vit12["softmax_rows"] == 2352 and vit12["weight_floats"] == 460_992
assert round(196 ** 2 * 4 / 1e3, 1) == 153.7  # the seed's "about 150 KB": one head, one example
assert (round(mb[12], 2), round(mb[1], 2)) == (59.01, 4.92)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "연산량이 같다"는 말은 반만 맞습니다. FLOP은 같지만, 실제 속도는 메모리를 얼마나 읽고 쓰는지에도 달려 있습니다. $hN^2$ 크기의 가중치 행렬을 만들고 읽는 비용이 긴 시퀀스(sequence)에서 병목이 되는 이유가 08번(FlashAttention)의 출발점입니다.

# %% [markdown]
# ## 6. 헤드마다 다른 패턴을 배운다
#
# 헤드가 정말 일을 나누는지 작은 과제로 확인합니다. 어휘 8개에서 뽑은 토큰 8개 $x_0, \dots, x_7$을 받아, 각 위치 $t \ge 2$에서 다음을 맞히는 과제입니다.
#
# $$y_t = (x_{t-1} - x_0) \bmod 8$$
#
# 각 쿼리는 **바로 앞 토큰**과 **첫 토큰**이라는 서로 다른 두 위치의 값을 알아야 합니다. 뺄셈은 순서가 중요하므로 두 값을 섞어서는 안 됩니다(1절). 모델은 토큰 임베딩(embedding)과 위치 임베딩의 합 → 멀티 헤드 어텐션 층 하나($C = 32$) → 위치마다 같은 작은 MLP입니다.

# %%
x_demo, y_demo = make_offset_batch(2, torch.Generator().manual_seed(0))
print("x:", x_demo[0].tolist())
print("y:", y_demo[0].tolist(), "(t = 0, 1은 채점하지 않음)")
assert y_demo[0, 5].item() == (x_demo[0, 4] - x_demo[0, 0]).item() % 8

# %% [markdown]
# 헤드 2개, 1개, 4개 모델을 시드 5개씩 400단계 학습하는 일은 `scripts/train_multihead.py`가 합니다(CPU 한 코어에서 약 40초). 결과 표는 `data/multihead_runs.json`, 헤드 2개·시드 0 모델의 가중치는 `data/multihead_offset_h2.pt`에 있습니다. 저장된 모델을 불러와 정확도(accuracy)를 여기서 다시 잽니다.

# %%
runs = load_json("multihead_runs.json")
x_test, y_test = make_offset_batch(runs["test_size"], torch.Generator().manual_seed(runs["test_seed"]))

model2 = OffsetModel(num_heads=2)
model2.load_state_dict(load_tensor_dict("multihead_offset_h2.pt"))
model2.eval()
acc2 = accuracy(model2, x_test, y_test)
with torch.no_grad():
    maps2 = mean_head_maps(model2(x_test)[1])  # (h, T, T): weights averaged over 2000 sequences
stored = next(r for r in runs["runs"] if r["num_heads"] == 2 and r["seed"] == 0)
print(f"저장된 헤드 2개 모델: 정확도 {acc2:.4f}, 헤드 역할 {head_roles(maps2)}")
print("헤드별 (이전 토큰, 첫 토큰) 평균 가중치:", [[round(v, 3) for v in row] for row in offset_profile(maps2).tolist()])
assert acc2 == stored["accuracy"] == 1.0
torch.testing.assert_close(offset_profile(maps2), torch.tensor(stored["profile"]), atol=1e-4, rtol=0)
assert sorted(head_roles(maps2)) == ["이전 토큰", "첫 토큰"]

# %% [markdown]
# 슬라이더로 헤드를 골라 그 헤드의 어텐션 맵(테스트 시퀀스 2000개의 평균)을 봅니다. 행이 쿼리 위치, 열이 키 위치입니다.

# %% tags=["nbval-ignore-output"]
head_selector(maps2)

# %% [markdown]
# 정적 버전: 같은 함수로 두 헤드를 나란히 그립니다. 한 헤드는 대각선 바로 아래(이전 토큰), 다른 헤드는 첫 열(첫 토큰)에 가중치를 모읍니다. 채점하지 않는 $t = 0, 1$ 행은 아무 패턴이나 괜찮습니다.

# %%
drawn = draw_all_heads(maps2)
assert len(drawn) == 2 and all(abs(m.sum(axis=1) - 1).max() < 1e-5 for m in drawn)
plt.show()

# %% [markdown]
# ### 여기서 직접 학습하기
#
# 저장된 실행의 처음 150단계를 이 자리에서 다시 돌립니다(같은 시드, 같은 배치 순서). 몇 초면 끝납니다. 손실(loss)과 정확도, 헤드 역할을 봅니다.

# %%
live_model, live_losses = train_offset_model(num_heads=2, steps=150, seed=0)
live_acc = accuracy(live_model, x_test, y_test)
with torch.no_grad():
    live_maps = mean_head_maps(live_model(x_test)[1])
print(f"150단계: 손실 {live_losses[0]:.3f} → {live_losses[-1]:.4f}, 정확도 {live_acc:.4f}, 역할 {head_roles(live_maps)}")
print(f"20단계까지 손실의 범위 {min(live_losses[:20]):.3f}~{max(live_losses[:20]):.3f} (ln 8 = {math.log(8):.3f}), 40단계 {live_losses[40]:.3f}")
assert all(abs(l - math.log(8)) < 0.05 for l in live_losses[:20]) and live_losses[40] < 1.0
assert live_acc >= 0.99 and sorted(head_roles(live_maps)) == ["이전 토큰", "첫 토큰"]

fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
axes[0].plot(live_losses)
axes[0].set_yscale("log")
axes[0].set_xlabel("학습 단계")
axes[0].set_ylabel("손실(교차 엔트로피)")
axes[0].set_title("직접 학습한 헤드 2개 모델")
for i in range(2):
    draw_head(live_maps, i, ax=axes[i + 1], title=f"헤드 {i}: {head_roles(live_maps)[i]}")
fig.tight_layout()
plt.show()

# %% [markdown]
# 손실 곡선은 처음 20단계쯤 ln 8 ≈ 2.08(여덟 가지 답을 고르게 찍을 때의 손실) 근처에서 평평하다가 떨어집니다. 역할 분담은 언제 생길까요? 같은 실행을 30단계에서 멈춰 봅니다.

# %%
early_model, early_losses = train_offset_model(num_heads=2, steps=30, seed=0)
early_acc = accuracy(early_model, x_test, y_test)
with torch.no_grad():
    early_maps = mean_head_maps(early_model(x_test)[1])
early_profile = [[round(v, 2) for v in row] for row in offset_profile(early_maps).tolist()]
print(f"30단계: 손실 {early_losses[-1]:.2f}, 정확도 {early_acc:.2f}, 헤드별 (이전, 첫) {early_profile}")
assert early_acc < 0.5 and sorted(head_roles(early_maps)) == ["이전 토큰", "첫 토큰"]

# %% [markdown]
# 정확도가 아직 절반도 안 되는 30단계에서 이미 두 헤드가 각자 한 위치를 봅니다. 이 과제에서는 "어디를 볼지"가 먼저 정해지고, 그 뒤에 MLP가 두 토큰으로 답을 계산하는 법을 배웁니다.

# %% [markdown]
# ### 헤드가 하나면?
#
# 헤드 1개 모델($d = 32$)도 같은 방식으로 저장해 두었습니다. 한 헤드는 두 위치를 한 가중 평균에 담아야 합니다.

# %%
model1 = OffsetModel(num_heads=1)
model1.load_state_dict(load_tensor_dict("multihead_offset_h1.pt"))
model1.eval()
acc1 = accuracy(model1, x_test, y_test)
with torch.no_grad():
    maps1 = mean_head_maps(model1(x_test)[1])
prev1, first1 = offset_profile(maps1)[0].tolist()
print(f"헤드 1개 모델: 정확도 {acc1:.4f}, 이전 토큰 {prev1:.3f}, 첫 토큰 {first1:.3f}")
assert acc1 == 1.0 and max(prev1, first1) < 0.7 and prev1 + first1 > 0.9
assert (round(prev1, 2), round(first1, 2)) == (0.39, 0.58)   # quoted below and in question 2

fig, ax = plt.subplots(figsize=(4.6, 3.8))
draw_head(maps1, 0, ax=ax, title=f"헤드 1개: 이전 {prev1:.2f} / 첫 토큰 {first1:.2f}")
plt.show()

# %% [markdown]
# 헤드 하나로도 정확도 100%입니다. 그 헤드는 가중치를 두 위치에 **같지 않게**(약 0.39 대 0.58) 나눕니다. 두 밸류가 다른 비율로 섞이면 1절의 "반반 섞기"와 달리 순서 정보가 완전히 사라지지 않고, 뒤의 MLP가 섞인 벡터에서 두 토큰을 풀어냅니다. 즉 이 과제에서 헤드 여러 개는 "가능하게" 만드는 것이 아니라 **깔끔하게 나눠** 맡게 합니다. 시드 5개씩의 결과로 확인합니다.

# %%
summary = {}
for h in (1, 2, 4):
    rs = [r for r in runs["runs"] if r["num_heads"] == h]
    summary[h] = {"정확도": [r["accuracy"] for r in rs], "99% 도달 단계": [r["steps_to_99"] for r in rs],
                  "헤드 합 (이전, 첫)": [[round(sum(p[j] for p in r["profile"]), 2) for j in (0, 1)] for r in rs]}
    print(f"h={h}:", summary[h])
assert all(acc == 1.0 for s in summary.values() for acc in s["정확도"])
two = [r["profile"] for r in runs["runs"] if r["num_heads"] == 2]
assert all(abs(p[0][0] + p[1][0] - 1) < 0.01 and abs(p[0][1] + p[1][1] - 1) < 0.01 for p in two)
assert all(max(r["profile"][0]) < 0.7 for r in runs["runs"] if r["num_heads"] == 1)

fig, ax = plt.subplots(figsize=(6.4, 3.4))
for i, h in enumerate((1, 2, 4)):
    steps = summary[h]["99% 도달 단계"]
    ax.scatter([i + 0.06 * (k - 2) for k in range(len(steps))], steps, s=40, label=f"헤드 {h}개")
ax.set_xticks(range(3), ["헤드 1개", "헤드 2개", "헤드 4개"])
ax.set_ylabel("정확도 99%에 처음 도달한 단계")
ax.set_title("시드 5개: 학습 속도 (25단계마다 측정)")
ax.set_ylim(0, 275)
plt.show()

# %% [markdown]
# 헤드 2개 모델은 시드 5개 모두에서 두 헤드의 가중치를 합치면 "이전 토큰" 쪽이 1, "첫 토큰" 쪽이 1입니다. 두 헤드가 두 위치를 나눠 맡는다는 뜻입니다(시드 0, 2에서는 헤드마다 한 위치에 0.99 이상을 주고, 시드 1, 3, 4에서는 행 한두 개에서 두 헤드가 역할을 맞바꿔 헤드별 평균이 0.77–0.83이 됩니다). 헤드 1개는 어느 쪽에도 0.7 이상을 주지 않습니다. 99%에 도달하는 단계의 중앙값은 헤드 1개 125, 2개 100, 4개 75로 헤드가 많을수록 조금 빠르지만, 시드 5개로는 경향을 보여 줄 뿐입니다.

# %%
medians = {h: sorted(summary[h]["99% 도달 단계"])[2] for h in (1, 2, 4)}
print("중앙값:", medians)
assert medians == {1: 125, 2: 100, 4: 75}

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "헤드 하나로도 100%"라는 결과를 숨기지 말고 먼저 물어보세요: "헤드 하나는 이 과제를 풀 수 있을까?" 대부분 "못 푼다"고 답합니다. 실제로는 0.39/0.58로 섞고 MLP가 풉니다. 멀티 헤드의 이점은 표현 가능성보다 분업의 깔끔함과 학습의 쉬움이라는 점, 그리고 실제 트랜스포머의 헤드는 이렇게 깔끔히 나뉘지 않는 경우가 많다는 점을 함께 말하세요.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("07-k", 답)` 한 번으로 확인합니다. 풀이는 숨겨진 셀에 있습니다.
#
# **07-1.** $(B, T, C)$ 텐서와 헤드 수 `num_heads`를 받아 $(B, h, T, d)$를 돌려주는 `my_split_heads`를 완성하세요. `helpers.multihead.split_heads`를 쓰지 말고 `view`/`reshape`와 `transpose`로 직접 만드세요.

# %%
def my_split_heads(x, num_heads):
    raise NotImplementedError

check("07-1", my_split_heads)

# %% jupyter={"source_hidden": true}
def my_split_heads(x, num_heads):
    b, t, c = x.shape
    return x.view(b, t, num_heads, c // num_heads).transpose(1, 2)

check("07-1", my_split_heads)

# %% [markdown]
# **07-2.** 헤드별 출력 $(B, h, T, d)$를 받아 헤드 0, 1, …을 순서대로 이어 붙인 $(B, T, h \cdot d)$를 돌려주는 `my_merge_heads`를 완성하세요.

# %%
def my_merge_heads(heads):
    raise NotImplementedError

check("07-2", my_merge_heads)

# %% jupyter={"source_hidden": true}
def my_merge_heads(heads):
    b, h, t, d = heads.shape
    return heads.transpose(1, 2).reshape(b, t, h * d)

check("07-2", my_merge_heads)

# %% [markdown]
# **07-3.** `d_model`, `num_heads`, `bias`(편향 사용 여부)를 받아 멀티 헤드 어텐션 층 하나의 파라미터 수를 돌려주는 `mha_param_count`를 식으로 완성하세요(모듈을 만들지 말고).

# %%
def mha_param_count(d_model, num_heads, bias):
    raise NotImplementedError

check("07-3", mha_param_count)

# %% jupyter={"source_hidden": true}
def mha_param_count(d_model, num_heads, bias):
    per_projection = d_model * d_model + (d_model if bias else 0)  # h blocks of C×(C/h) make one C×C
    return 4 * per_projection

check("07-3", mha_param_count)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 파라미터 수와 행렬 곱 연산량이 같다면, 헤드 1개($d = 768$) 대신 헤드 12개($d = 64$)를 쓸 때 **잃는 것**은 무엇일까요? 헤드 크기 $d$가 너무 작아지면(예: $d = 1$) 점수 $q \cdot k$는 어떤 함수가 될까요?
# 2. 헤드 1개 모델은 가중치를 0.39/0.58로 나눠 과제를 풀었습니다. 정확히 0.5/0.5로 나눴다면 풀 수 있었을까요? 1절의 계산과 위치 임베딩을 함께 생각해 보세요.
# 3. 헤드의 이어 붙이는 순서는 임의인데(3절), 학습이 끝난 모델에서 "헤드 3은 문법 헤드"라고 부르는 것은 어떤 의미가 있을까요? 같은 학습을 시드만 바꿔 다시 하면 그 헤드는 같은 번호에 있을까요(위 시드별 결과 참고)?
# 4. 원문은 "고양이가 매트 위에 앉았다"에서 헤드 1은 문법, 헤드 2는 위치, 헤드 3은 의미를 본다고 설명합니다. 이런 역할 구분을 실제 모델에서 확인하려면 무엇을 측정해야 할까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 "저차원 헤드의 표현력" 문제로, 헤드 크기를 너무 줄이면 점수가 표현할 수 있는 관계가 단순해진다는 점을 이끌어 내세요. 3번은 위의 시드별 결과(시드 0과 2에서 '이전 토큰' 헤드의 번호가 다름)를 다시 보여 주면 좋습니다. 4번은 사전 학습된 모델의 어텐션 맵을 보는 다음 주제로 이어집니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 헤드 분할은 view → transpose, 합치기는 transpose → reshape | 값의 출처 토큰 출력, `merge_heads(split_heads(x)) == x` |
# | 흔한 실수($\sqrt{C}$, 전치 누락 두 가지, 헤드 순서)는 모양은 맞고 값은 틀림 | 네 실수 모두 최대 차이 > 0.01; $W^O$ 열을 같이 바꾸면 순서는 상관없음 |
# | `helpers`의 구현 = `torch.nn.MultiheadAttention` | 셀프·크로스·인과 마스크에서 출력과 헤드별 가중치 `assert_close` |
# | 파라미터 $4C^2 + 4C$, $h$와 무관 | `sum(p.numel())` = PyTorch = 식, $h$ = 1…16 |
# | 행렬 곱 FLOP은 같고, 소프트맥스 행과 가중치 메모리는 $h$배 | `FlopCounterMode` 측정 = 식; 배치 32에서 59.01 MB 대 4.92 MB (원문 바로잡기) |
# | 학습된 헤드 2개는 "이전 토큰"과 "첫 토큰"으로 일을 나눔 | 저장된 모델과 직접 학습한 모델 모두 정확도 ≥ 0.99, 역할 assert |
# | 헤드 1개도 이 과제를 풀지만 가중치를 섞어서 품 | 정확도 1.0, 최대 가중치 < 0.7 (시드 5개) |
#
# 다음 노트북(08)에서는 이 $h \cdot N^2$ 가중치 행렬을 아예 만들지 않는 방법, 블록 단위 온라인 소프트맥스(FlashAttention)를 봅니다.
