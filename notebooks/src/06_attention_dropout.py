# %% [markdown]
# # 06. 어텐션 드롭아웃
#
# 학습 중 어텐션 가중치의 일부를 무작위로 지우고 남은 것을 키우면, 한 번 한 번은 틀리지만 평균으로는 정확한 가중치가 됩니다. 그 대가와 효과를 숫자로 잽니다.
#
# **학습 목표**
# - 가중치 행렬에 드롭아웃(dropout)을 걸면 한 행의 합이 더 이상 1이 아님을 계산으로 확인하고, 그 분산을 식으로 구한다.
# - 1/(1−p) 재조정이 기댓값을 지킨다는 것을 여러 번 뽑은 평균으로 보이고, 오차가 1/√n로 줄어드는 것을 잰다.
# - 학습 모드(train mode)와 평가 모드(eval mode)의 차이를 설명하고, 평가 모드가 p = 0과 똑같음을 확인한다.
# - 작은 어텐션 모델을 여러 p로 학습해, 드롭아웃이 무엇을 개선하고 무엇은 개선하지 못하는지 정직하게 읽는다.
#
# **선수 지식**: 01번(소프트맥스와 가중합), 03번(쿼리·키·밸류), 05번(온도와 엔트로피)
#
# **예상 시간**: 혼자 공부 45분 / 스터디 발표 25분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 첫 문장은 "드롭아웃은 가중치를 틀리게 만든다, 그런데 평균으로는 맞다"입니다. 앞 노트북들에서 계속 assert한 "행의 합 = 1"이 오늘 처음으로 깨집니다. 슬라이더 데모는 4절, 모델 실험은 5절에 있습니다.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.attention import MultiHeadAttention, scaled_dot_product_attention
from helpers.data import load_json
from helpers.dropout import (
    draw_dropout,
    dropout_explorer,
    make_repeat_task,
    mean_error_curve,
    row_sum_variance,
    sample_dropout,
    train_classifier,
)
from helpers.exercises import check
from helpers.plots import attention_heatmap

setup()

# %% [markdown]
# ## 1. 직관: 연결을 잠깐 끊는다
#
# 드롭아웃은 학습 중에 무작위로 고른 값을 0으로 만드는 정규화(regularization) 방법입니다. 어텐션 드롭아웃은 그 대상을 **어텐션 가중치(weight)** 로 삼습니다. 가중치 $w_{ij}$는 "쿼리 $i$가 키 $j$를 얼마나 보는가"이므로, 이를 0으로 만드는 것은 그 단계에서 $i \to j$ 연결을 끊는 것과 같습니다.
#
# "고양이가 매트 위에 앉았다"의 네 토큰(token)으로 시작합니다. 쿼리·키·밸류는 무작위 벡터이고, 우리가 볼 것은 가중치 행렬입니다.

# %%
seed_everything(6)
tokens = ["고양이가", "매트", "위에", "앉았다"]
q = torch.randn(4, 8)   # (T=4, d_k=8)
k = torch.randn(4, 8)   # (T=4, d_k=8)
v = torch.randn(4, 2)   # (T=4, d_v=2): two numbers, so outputs can be drawn as points

out_eval, w = scaled_dot_product_attention(q, k, v)
print("가중치 W:\n", w)
print("행의 합:", w.sum(dim=-1))
assert torch.allclose(w.sum(dim=-1), torch.ones(4))

# %% [markdown]
# 이제 같은 계산에 `dropout_p=0.5, training=True`를 줍니다. 한 번 뽑은 결과입니다.

# %%
seed_everything(0)
out_drop, w_drop = scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=True)
print("드롭아웃 뒤 가중치:\n", w_drop)
print("행의 합:", w_drop.sum(dim=-1))

kept = w_drop != 0
assert torch.allclose(w_drop[kept], w[kept] / (1 - 0.5))   # survivors are doubled, not changed otherwise
assert round(w_drop.sum(dim=-1).min().item(), 2) == 0.78 and round(w_drop.sum(dim=-1).max().item(), 2) == 1.07

# %% [markdown]
# 두 가지가 보입니다. 지워진 칸은 정확히 0이고, 남은 칸은 원래 값의 정확히 2배 = 1/(1−0.5)배입니다. 그 결과 **행의 합이 1이 아닙니다**. 이번에 뽑은 결과에서는 0.78부터 1.07까지 행마다 다릅니다. 드롭아웃 뒤의 행렬은 엄밀히는 더 이상 "가중치"(0 이상, 합 1)가 아닙니다.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
attention_heatmap(w, tokens, tokens, ax=axes[0], title="평가 모드: 가중치 W", vmax=1.1, colorbar=False)
rows = [f"{t} (합 {s:.2f})" for t, s in zip(tokens, w_drop.sum(dim=-1).tolist())]
attention_heatmap(w_drop, rows, tokens, ax=axes[1], title="학습 모드, p = 0.5: 한 번 뽑은 결과", vmax=1.1, colorbar=False)
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 오른쪽 그림의 행 이름 옆 "합" 숫자를 가리키세요. 청중에게 "그럼 평균이 틀어지지 않나요?"라는 질문이 나오면 바로 다음 절로 넘어가면 됩니다.

# %% [markdown]
# ## 2. 수식: 1/(1−p)는 기댓값을 지킨다
#
# 항목마다 독립으로 $m_{ij} \sim \text{Bernoulli}(1-p)$ (1이면 남김)를 뽑아
#
# $$\tilde w_{ij} = \frac{m_{ij}}{1-p}\, w_{ij}, \qquad \mathbb{E}[\tilde w_{ij}] = \frac{1-p}{1-p}\, w_{ij} = w_{ij}.$$
#
# 한 항목의 분산은 $\mathrm{Var}[\tilde w_{ij}] = w_{ij}^2 \frac{p}{1-p}$ 이고, 항목이 독립이므로 행의 합 $S_i = \sum_j \tilde w_{ij}$ 는
#
# $$\mathbb{E}[S_i] = 1, \qquad \mathrm{Var}[S_i] = \frac{p}{1-p} \sum_j w_{ij}^2.$$
#
# 출력 $\tilde o_i = \sum_j \tilde w_{ij} v_j$ 도 평균은 평가 모드의 출력 $o_i$ 그대로이고, 흩어짐은 $\frac{p}{1-p}\sum_j w_{ij}^2 \lVert v_j \rVert^2$ (좌표별 분산의 합)입니다. 한 키에 몰린 행(큰 $w_{ij}$)일수록 드롭아웃에 크게 흔들립니다.
#
# 20000번 뽑아 식과 비교합니다.

# %%
p, n = 0.3, 20000
outs, draws = sample_dropout(q, k, v, p, n, seed=1)       # (n, 4, 2), (n, 4, 4)
sums = draws.sum(dim=-1)                                 # (n, 4): one row sum per draw and query
print("0이 된 항목의 비율:", round((draws == 0).float().mean().item(), 4))
print("행 합의 평균:     ", sums.mean(dim=0))
print("행 합의 분산 (측정):", sums.var(dim=0))
print("행 합의 분산 (식):  ", row_sum_variance(w, p))
assert abs((draws == 0).float().mean().item() - p) < 0.01
assert torch.allclose(sums.mean(dim=0), torch.ones(4), atol=0.01)
assert torch.allclose(sums.var(dim=0), row_sum_variance(w, p), rtol=0.05)
assert sums.var(dim=0)[3] > sums.var(dim=0)[1]     # the peaked last row wobbles more than the flat second one
assert round(w[3, 1].item(), 2) == 0.61 and int(w[3].argmax()) == 1

# %% [markdown]
# 행마다 분산이 다릅니다. "매트"(W의 둘째 행)처럼 가중치가 고르게 퍼진 행보다 "앉았다"처럼 한 키(매트, 0.61)에 몰린 행의 합이 더 크게 흔들립니다: $\sum_j w_{ij}^2$가 더 크기 때문입니다. 출력의 흩어짐도 식대로인지 확인합니다.

# %%
spread_measured = outs.var(dim=0).sum(dim=-1)                             # (4,): total variance per query
spread_formula = p / (1 - p) * (w ** 2) @ (v ** 2).sum(dim=-1)            # (4,)
print("출력 평균과 평가 모드 출력의 최대 차이:", round((outs.mean(dim=0) - out_eval).abs().max().item(), 4))
print("출력 분산 (측정):", spread_measured)
print("출력 분산 (식):  ", spread_formula)
assert torch.allclose(outs.mean(dim=0), out_eval, atol=0.01)
assert torch.allclose(spread_measured, spread_formula, rtol=0.05)

# %% [markdown]
# ### 평균 오차는 1/√n로 준다
#
# n번 뽑은 결과의 평균 $\bar W_n$이 W에 얼마나 가까운지(모든 칸의 RMS 오차) 재 봅니다. 항목 분산이 $w^2 p/(1-p)$이므로 평균의 RMS 오차는 $\sqrt{\overline{w^2}\, p/((1-p)n)}$, 즉 기울기 −1/2인 직선(로그-로그)이어야 합니다.

# %%
ns = np.unique(np.logspace(1, 4, 13).round().astype(int))
curves, slopes = {}, {}
for p_ in (0.1, 0.3, 0.5):
    curves[p_] = mean_error_curve(q, k, p_, ns.tolist(), seed=2)
    slopes[p_] = np.polyfit(np.log(ns), np.log(curves[p_]), 1)[0]
print("로그-로그 기울기:", {p_: round(float(s), 3) for p_, s in slopes.items()})
assert all(-0.6 < s < -0.4 for s in slopes.values())

# %%
fig, ax = plt.subplots(figsize=(6.4, 4.0))
for (p_, err), color in zip(curves.items(), ["tab:blue", "tab:orange", "tab:red"]):
    theory = np.sqrt((w ** 2).mean().item() * p_ / (1 - p_) / ns)
    ax.loglog(ns, err, "o", color=color, label=f"p = {p_} (측정)")
    ax.loglog(ns, theory, "-", color=color, alpha=0.6)
    assert np.all((err / theory > 0.5) & (err / theory < 2.0))
ax.set_xlabel("뽑은 횟수 n")
ax.set_ylabel("평균과 W의 RMS 오차")
ax.set_title("평균 오차 ∝ 1/√n (선: 식)")
ax.legend()
plt.show()

# %% [markdown]
# 재조정을 빼면 어떨까요? 지우기만 하고 1/(1−p)를 곱하지 않으면 평균은 W가 아니라 (1−p)·W로 줄어듭니다. 학습 때 본 크기와 평가 때 본 크기가 달라지는 셈입니다.

# %%
no_rescale = draws * (1 - p)                  # undo the 1/(1-p): plain "drop only"
print("재조정 없는 평균 / W:", round((no_rescale.mean(dim=0) / w).mean().item(), 3))
assert torch.allclose(no_rescale.mean(dim=0), (1 - p) * w, atol=0.01)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 원래 드롭아웃 논문은 학습 때는 지우기만 하고 평가 때 (1−p)를 곱했습니다. 지금 라이브러리들은 반대로 학습 때 1/(1−p)를 곱하는 "역 드롭아웃(inverted dropout)"을 씁니다. 그래서 평가 때는 아무것도 할 필요가 없습니다. 두 방식은 기댓값 면에서 같습니다.

# %% [markdown]
# ## 3. 학습 모드와 평가 모드
#
# 드롭아웃은 학습 모드에서만 켜집니다. 평가 모드에서는 p가 얼마든 p = 0과 **비트 단위로 같아야** 합니다. 함수 인자(`training=`)와 모듈(`.train()` / `.eval()`) 두 경우 모두 확인합니다.

# %%
out_p0, w_p0 = scaled_dot_product_attention(q, k, v)
out_p5, w_p5 = scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=False)
assert torch.equal(w_p5, w_p0) and torch.equal(out_p5, out_p0)

seed_everything(3)
mha = MultiHeadAttention(d_model=8, num_heads=2, dropout=0.5)
x = torch.randn(1, 4, 8)                          # (B=1, T=4, d_model=8)
train_a, train_b = mha(x)[0], mha(x)[0]           # two calls in train mode (the default)
mha.eval()
eval_a, eval_b = mha(x)[0], mha(x)[0]
mha.dropout = 0.0
no_drop = mha(x)[0]
print("학습 모드, 두 호출의 최대 차이:", round((train_a - train_b).abs().max().item(), 4))
print("평가 모드, 두 호출의 최대 차이:", (eval_a - eval_b).abs().max().item())
assert not torch.allclose(train_a, train_b)
assert torch.equal(eval_a, eval_b) and torch.equal(eval_a, no_drop)

# %% [markdown]
# 평가 모드에서 모듈을 부르면 결과가 늘 같고, 드롭아웃이 없는 모듈과 같습니다. 실수하기 쉬운 지점은 검증이나 시각화를 할 때 `model.eval()`을 잊는 것입니다. 그러면 매번 다른 (그리고 행의 합이 1이 아닌) 어텐션 맵을 보게 됩니다. `helpers`의 `scaled_dot_product_attention`도 PyTorch처럼 **드롭아웃을 건 뒤의** 가중치를 돌려주므로, 어텐션 맵을 그릴 때는 평가 모드에서 뽑아야 합니다.

# %% [markdown]
# ### 원문 바로잡기
#
# > **원문 바로잡기** (seed 000의 코드): 원문은 소프트맥스가 "가중치의 합이 1이 되도록" 정규화한다고 설명한 뒤, 코드에서 그 가중치에 곧바로 드롭아웃을 겁니다. 그 줄을 지난 `attention_weights`는 학습 모드에서 행의 합이 1이 아닙니다. 아래에서 원문 코드의 순서(점수 → 소프트맥스 → `nn.Dropout` → 밸류와 곱하기)를 그대로 계산해 보면, 같은 난수에서 우리 함수와 비트 단위로 같고, 행의 합은 1에서 벗어납니다. 평가 모드에서만 행의 합이 1입니다.

# %%
def seed000_order(q, k, v, dropout):
    """The seed's order of operations: scores, softmax, dropout module, then weights @ v."""
    weights = F.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)   # (T_q, T_k)
    weights = dropout(weights)
    return weights @ v, weights

drop = nn.Dropout(0.1)
seed_everything(4)
theirs_out, theirs_w = seed000_order(q, k, v, drop)
seed_everything(4)
ours_out, ours_w = scaled_dot_product_attention(q, k, v, dropout_p=0.1, training=True)
print("원문 순서, 학습 모드의 행 합:", theirs_w.sum(dim=-1))
assert torch.allclose(theirs_w, ours_w) and torch.allclose(theirs_out, ours_out)
assert not torch.allclose(theirs_w.sum(dim=-1), torch.ones(4))
drop.eval()
assert torch.allclose(seed000_order(q, k, v, drop)[1].sum(dim=-1), torch.ones(4))

# %% [markdown]
# > **원문 바로잡기** (seed 004의 `p=0.1` 예): 주석 "10% 확률로 연결 끊기"는 절반만 맞습니다. 끊기는 비율은 실제로 약 10%이지만, 남은 연결은 그대로가 아니라 1/0.9 ≈ 1.111배가 됩니다. 그래서 아무것도 끊기지 않은 행(키 4개면 0.9⁴ ≈ 66%)조차 합이 1이 아니라 1.111이고, 합이 정확히 1인 행은 사실상 없습니다. 아래에서 계산합니다.

# %%
p, n = 0.1, 20000
_, draws = sample_dropout(q, k, v, p, n, seed=5)                  # (n, 4, 4)
cut = (draws == 0).float().mean().item()
ratio = (draws[draws != 0] / w.expand_as(draws)[draws != 0])        # survivors / original
row_sums = draws.sum(dim=-1)                                       # (n, 4)
intact = ((row_sums - 1 / 0.9).abs() < 1e-5).float().mean().item()   # nothing dropped in the row
exactly_one = ((row_sums - 1).abs() < 1e-5).float().mean().item()
print(f"끊긴 비율 {cut:.4f}, 남은 값/원래 값 {ratio.min().item():.4f} ~ {ratio.max().item():.4f}")
print(f"합이 1.111인(하나도 안 끊긴) 행 {intact:.4f} (식 0.9^4 = {0.9 ** 4:.4f}), 합이 1인 행 {exactly_one:.4f}")
assert abs(cut - 0.1) < 0.005
assert torch.allclose(ratio, torch.full_like(ratio, 1 / 0.9))
assert abs(intact - 0.9 ** 4) < 0.01 and exactly_one < 0.001

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 두 원문 모두 "드롭아웃을 어디에 거는가"는 맞습니다(소프트맥스 뒤, 밸류와 곱하기 전). 바로잡는 것은 설명의 빈틈입니다: 남은 값이 커진다는 점, 그리고 그 결과 행의 합이 1이 아니라는 점입니다.

# %% [markdown]
# ## 4. 슬라이더: p를 바꿔 보기
#
# 슬라이더로 p를 0에서 0.9까지 움직이면 왼쪽은 한 번 뽑은 결과, 오른쪽은 1000번의 평균을 보여 줍니다. 행 이름 옆에 행의 합이 있습니다. 확인할 것:
# - p가 커질수록 한 번 뽑은 결과의 행 합이 1에서 멀어지고, 남은 칸의 값이 커진다 (p = 0.9면 10배).
# - 평균은 p와 상관없이 거의 W이고 행 합도 거의 1이다. 다만 p가 클수록 평균도 더 흔들린다: 평균 행 합의 표준오차는 $\sqrt{\frac{p}{1-p}\sum_j w_{ij}^2 / 1000}$ 로, p = 0.9에서 0.05~0.06이다.

# %% tags=["nbval-ignore-output"]
dropout_explorer(q, k, labels=tokens)

# %% [markdown]
# 정적 버전(슬라이드·PDF용): 같은 함수로 p = 0, 0.1, 0.5, 0.9를 그립니다. 위 줄이 한 번 뽑은 결과, 아래 줄이 1000번의 평균입니다.

# %%
p_values = [0.0, 0.1, 0.5, 0.9]
fig, axes = plt.subplots(2, 4, figsize=(16, 7))
panels = {}
for col, p_ in enumerate(p_values):
    panels[p_] = draw_dropout(q, k, p_, labels=tokens, axes=(axes[0, col], axes[1, col]))
fig.tight_layout()
plt.show()

# %%
for p_, r in panels.items():
    print(f"p = {p_}: 한 번의 행 합 {r['one_row_sums'].round(2)}, 평균의 행 합 {r['mean_row_sums'].round(3)}")
assert np.allclose(panels[0.0]["one"], w.numpy()) and np.allclose(panels[0.0]["one_row_sums"], 1)
assert np.abs(panels[0.9]["one_row_sums"] - 1).max() > np.abs(panels[0.1]["one_row_sums"] - 1).max()
se_09 = np.sqrt(row_sum_variance(w, 0.9).numpy() / 1000)          # standard error of the mean row sum, p = 0.9
print("p = 0.9, 평균 행 합의 표준오차:", se_09.round(3))
assert 0.05 <= se_09.min() and se_09.max() < 0.065
for p_, r in panels.items():   # the mean of 1000 draws stays within 4 standard errors of 1
    assert np.all(np.abs(r["mean_row_sums"] - 1) <= 4 * np.sqrt(row_sum_variance(w, p_).numpy() / 1000) + 1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 슬라이더를 0.9까지 올리면 한 번 뽑은 결과가 대부분 0이고 남은 몇 칸만 원래의 10배가 됩니다. "이 정도면 학습이 될까?"를 물어보세요. 다음 절의 실험이 답의 일부입니다: 큰 p에서는 학습 정확도가 떨어집니다.

# %% [markdown]
# ## 5. 작은 모델에서의 효과
#
# 드롭아웃은 정규화입니다. 효과를 보려면 **과적합(overfitting)하는** 모델이 필요합니다. 과제: 길이 8의 토큰 시퀀스(어휘 12개)에서 "첫 토큰이 뒤에 다시 나오는가?"를 맞힙니다. 첫 위치의 쿼리가 같은 토큰의 키를 찾아야 풀리므로 어텐션이 할 일이 분명한 과제입니다. 모델은 임베딩 + 셀프 어텐션(self-attention) 한 층(d = 16, 어텐션 드롭아웃 p) + 분류기이고, 학습 데이터는 일부러 256개만 줍니다. 검증 데이터는 2000개입니다.

# %%
x_val, y_val = make_repeat_task(2000, seed=2)
print("예시 시퀀스:", x_val[0].tolist(), "→ 정답", y_val[0].item())
majority = max(y_val.float().mean().item(), 1 - y_val.float().mean().item())
print(f"검증 데이터에서 늘 다수 클래스를 답할 때의 정확도: {majority:.3f}")

# %% [markdown]
# 여기서는 p = 0과 p = 0.5로 200단계씩만 학습합니다(시드 0, 각각 1초 정도). 손실과 정확도는 모두 평가 모드에서 잽니다.

# %%
live = {p_: train_classifier(p_, seed=0, steps=200, eval_every=20) for p_ in (0.0, 0.5)}
for p_, r in live.items():
    print(f"p = {p_}: 학습 손실 {r['train_loss']:.3f}, 정확도 {r['train_acc']:.3f} | "
          f"검증 손실 {r['val_loss']:.3f}, 정확도 {r['val_acc']:.3f}")
assert live[0.0]["train_acc"] - live[0.0]["val_acc"] > 0.2     # it overfits already
assert live[0.5]["val_loss"] < live[0.0]["val_loss"]

# %% [markdown]
# 전체 실험은 `scripts/train_dropout.py`가 p = 0, 0.1, 0.2, 0.3, 0.5, 0.7 각각 시드 5개로 400단계씩 돌려 `data/dropout_sweep.json`에 저장했습니다. 먼저 위의 라이브 학습이 저장된 시드 0 실행의 처음 200단계와 같은지 확인합니다(같은 코드, 같은 시드이므로 같아야 합니다).

# %%
sweep = load_json("dropout_sweep.json")
runs = sweep["runs"]
for p_, r in live.items():
    stored = next(s for s in runs if s["p"] == p_ and s["seed"] == 0)["curve"]
    upto = len(r["curve"]["step"])                  # the stored curve goes on to step 400
    assert stored["step"][:upto] == r["curve"]["step"]
    for m in ("train_loss", "val_loss"):
        assert np.allclose(stored[m][:upto], r["curve"][m], atol=1e-3)
metrics = ("train_loss", "train_acc", "val_loss", "val_acc", "val_entropy")
ps = sweep["settings"]["p_values"]
table = {m: np.array([[s[m] for s in runs if s["p"] == p_] for p_ in ps]) for m in metrics}  # (P, seeds)
print(" p   학습 정확도  검증 정확도  학습 손실  검증 손실")
for i, p_ in enumerate(ps):
    print(f"{p_:.1f}   {table['train_acc'][i].mean():.3f}       {table['val_acc'][i].mean():.3f}"
          f"       {table['train_loss'][i].mean():.3f}      {table['val_loss'][i].mean():.3f}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for m, label, color in (("train_acc", "학습", "tab:blue"), ("val_acc", "검증", "tab:red")):
    axes[0].errorbar(ps, table[m].mean(1), yerr=table[m].std(1), marker="o", color=color, capsize=3, label=label)
axes[0].axhline(majority, color="gray", linestyle=":", label="다수 클래스")
axes[0].set(xlabel="어텐션 드롭아웃 p", ylabel="정확도", title="정확도 (시드 5개 평균 ± 표준편차)")
axes[0].legend()
for m, label, color in (("train_loss", "학습", "tab:blue"), ("val_loss", "검증", "tab:red")):
    axes[1].errorbar(ps, table[m].mean(1), yerr=table[m].std(1), marker="o", color=color, capsize=3, label=label)
axes[1].set(xlabel="어텐션 드롭아웃 p", ylabel="교차 엔트로피 손실", title="손실")
axes[1].legend()
for s in runs:
    if s["seed"] == 0 and s["p"] in (0.0, 0.3, 0.7):
        axes[2].plot(s["curve"]["step"], s["curve"]["val_loss"], label=f"p = {s['p']}")
axes[2].set(xlabel="학습 단계", ylabel="검증 손실", title="검증 손실의 변화 (시드 0)")
axes[2].legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# 측정이 보여 주는 것을 그대로 읽으면 이렇습니다.
#
# - **과적합은 확실합니다.** p = 0에서 학습 정확도는 0.96인데 검증 정확도는 0.60으로, 다수 클래스를 답하는 것(0.55)보다 조금 나을 뿐입니다. 검증 손실은 첫 평가 시점(1단계, 약 0.69: 늘 반반으로 찍는 예측의 손실 ln 2)이 가장 낮습니다. 그 뒤로는 중간에 잠깐 내려가는 구간이 있어도 대체로 올라가고, 시드 5개 모두 처음 값보다 낮아지지 않습니다.
# - **드롭아웃이 크게 바꾸는 것은 검증 손실입니다.** p가 커질수록 검증 손실이 7.1에서 1.2로 줄어듭니다. 틀린 예측에 대한 확신이 줄어든 것입니다.
# - **검증 정확도는 거의 그대로입니다.** 가장 좋은 p에서도 +0.05 정도이고, 이는 시드 사이의 표준편차(약 0.04)와 같은 크기입니다. 학습과 검증의 정확도 차이는 모든 p에서 0.25 이상 남습니다. 256개로는 풀리지 않는 문제를 드롭아웃이 풀어 주지는 않습니다.
# - **어떤 p에서도 검증 손실은 ln 2 ≈ 0.69 아래로 내려가지 않습니다.** 확률로 보면 모든 모델이 "늘 반반"보다 못합니다. 드롭아웃은 이 간극을 줄일 뿐 뒤집지 못합니다.
# - 큰 p(0.7)는 학습 정확도와 학습 손실을 나쁘게 만듭니다. 정규화의 대가입니다.

# %%
gap = table["train_acc"].mean(1) - table["val_acc"].mean(1)
gain = table["val_acc"].mean(1) - table["val_acc"][0].mean()
print("학습-검증 정확도 차이:", gap.round(3))
print("p = 0 대비 검증 정확도 변화:", gain.round(3), " 시드 표준편차:", table["val_acc"].std(1).mean().round(3))
assert np.all(np.diff(table["val_loss"].mean(1)) < 0)             # val loss falls with every step up in p
assert gap.min() > 0.25                                            # overfitting remains at every p
assert gain.max() < 0.06 and gain.max() < 1.5 * table["val_acc"].std(1).mean()
assert table["train_loss"].mean(1)[-1] > table["train_loss"].mean(1)[0]
assert table["val_loss"].min() > np.log(2)                         # never better than a 50/50 guess
# the numbers quoted in the bullets above
assert (round(table["train_acc"][0].mean(), 2), round(table["val_acc"][0].mean(), 2), round(majority, 2)) == (0.96, 0.60, 0.55)
assert (round(table["val_loss"][0].mean(), 1), round(table["val_loss"][-1].mean(), 1)) == (7.1, 1.2)
assert round(gain.max(), 2) == 0.05 and round(table["val_acc"].std(1).mean(), 2) == 0.04
for s in runs:                                                    # p = 0: best at the very first step, every seed
    if s["p"] == 0.0:
        assert int(np.argmin(s["curve"]["val_loss"])) == 0 and abs(s["curve"]["val_loss"][0] - np.log(2)) < 0.02

# %% [markdown]
# ### "더 다양한 관계를 학습한다"?
#
# seed 004는 어텐션 드롭아웃이 특정 토큰 관계에 과의존하는 것을 막아 "더 다양한 관계"를 학습하게 한다고 설명합니다. 이 주장을 잴 수 있는 형태로 바꾸면 "드롭아웃으로 학습한 모델의 어텐션이 더 퍼진다(엔트로피(entropy)가 크다)"입니다. 평가 모드에서 첫 쿼리의 가중치 엔트로피를 검증 데이터 평균으로 쟀습니다.

# %%
ent = table["val_entropy"].mean(1)
print("p별 평균 엔트로피 (nats):", dict(zip(ps, ent.round(3).tolist())), f" 균등 분포: {np.log(8):.3f}")
print("시드 사이 표준편차:", table["val_entropy"].std(1).round(3))
assert ent.max() < 0.25 * np.log(8)
assert not np.all(np.diff(ent) > 0)
assert [round(float(e), 2) for e in (ent[0], ent.min(), ent[-1])] == [0.30, 0.25, 0.36] and int(ent.argmin()) == 2

# %% [markdown]
# 이 과제에서는 그런 효과가 뚜렷하지 않습니다. 엔트로피는 모든 p에서 균등 분포(2.08)의 1/4에도 못 미칩니다. p에 따라 한 방향으로 늘지도 않습니다: p = 0.2까지는 오히려 줄었다가(0.30 → 0.25) p = 0.7에서 0.36으로 늘어납니다. p = 0.2 이후의 증가(약 0.1)는 시드 사이 표준편차(0.03~0.05)보다 크지만, 어텐션이 여전히 거의 한 키에 몰려 있다는 점은 바뀌지 않습니다. 한 키를 날카롭게 찾는 것이 정답인 과제라 그럴 수 있습니다. 주장이 틀렸다고 결론 내리기보다는, **이 실험으로는 확인되지 않았다**고 적어 둡니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 이 절의 핵심은 "정규화가 효과가 있었다"가 아니라 "무엇에 효과가 있었는지 숫자로 말한다"입니다. 손실은 크게, 정확도는 거의 안 바뀌었다는 결과를 그대로 보여 주고, 토론 질문 2번으로 넘어가세요.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("06-k", 답)` 한 번으로 확인합니다. 풀이는 숨겨진 셀에 있습니다.
#
# **06-1.** 가중치 `weights`, 같은 모양의 불리언 `keep`(True = 남김), 드롭아웃 비율 `p`를 받아 드롭아웃을 적용한 가중치를 돌려주는 `apply_keep_mask`를 완성하세요.

# %%
def apply_keep_mask(weights, keep, p):
    raise NotImplementedError

check("06-1", apply_keep_mask)

# %% jupyter={"source_hidden": true}
def apply_keep_mask(weights, keep, p):
    return weights * keep / (1 - p)

check("06-1", apply_keep_mask)

# %% [markdown]
# **06-2.** 가중치 행 $w = [0.5, 0.3, 0.2]$에 $p = 0.2$로 드롭아웃을 걸었습니다. 행의 합 $S$의 분산 $\mathrm{Var}[S]$는 얼마인가요? 숫자 하나로 답하세요.

# %%
var_row_sum = ...

check("06-2", var_row_sum)

# %% jupyter={"source_hidden": true}
var_row_sum = 0.2 / (1 - 0.2) * (0.5 ** 2 + 0.3 ** 2 + 0.2 ** 2)

check("06-2", var_row_sum)

# %% [markdown]
# **06-3.** 드롭아웃이 들어 있는 모듈 `module`과 입력 `x`를 받아 **평가 모드의** 출력을 돌려주는 `predict(module, x)`를 쓰세요. 기울기는 추적하지 않고, 호출 뒤에는 모듈이 원래 모드로 돌아가 있어야 합니다(학습 도중 검증할 때 쓰는 함수입니다).

# %%
def predict(module, x):
    raise NotImplementedError

check("06-3", predict)

# %% jupyter={"source_hidden": true}
def predict(module, x):
    was_training = module.training
    module.eval()
    with torch.no_grad():
        y = module(x)
    module.train(was_training)
    return y

check("06-3", predict)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 드롭아웃 뒤 행의 합이 1이 아니면 출력 벡터의 크기도 뽑을 때마다 달라집니다. 이것이 다음 층(예: 층 정규화(layer normalization))에 주는 영향은 무엇일까요? 지운 뒤 행을 다시 정규화하는 방식과 비교해 보세요.
# 2. 5절에서 드롭아웃은 검증 손실을 크게 줄였지만 정확도는 거의 바꾸지 못했습니다. 이 결과를 "효과가 있었다"와 "없었다" 중 어느 쪽으로 보고해야 할까요? 무엇을 더 재야 할까요?
# 3. BERT는 어텐션 드롭아웃 0.1을, 원래 ViT는 0을 썼다고 알려져 있습니다. 데이터의 양이나 모델의 크기와 어떤 관계가 있을까요?
# 4. 평가 모드에서 드롭아웃을 끄지 않고 여러 번 뽑아 평균을 내면(몬테카를로 드롭아웃) 무엇을 더 얻을 수 있을까요? 2절의 1/√n 결과와 연결해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 "왜 재정규화하지 않는가"를 묻는 질문입니다. 재정규화하면 한 항목의 기댓값이 W와 달라진다는 점(연습문제 06-1의 오답 메시지)을 상기시키세요. 4번은 불확실성 추정으로 이어지는 열린 질문입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 드롭아웃 뒤 남은 가중치는 정확히 1/(1−p)배, 행의 합은 1이 아니다 | p = 0.5 한 번 뽑기에서 assert |
# | 행 합의 평균은 1, 분산은 p/(1−p)·Σw² | 20000번 뽑기와 식이 5% 안에서 일치 |
# | 평균의 오차는 1/√n로 준다 | 로그-로그 기울기 −0.4 ~ −0.6, 식과 2배 안 |
# | 재조정이 없으면 평균이 (1−p)·W로 준다 | 20000번 평균 |
# | 평가 모드 = p = 0 (비트 단위), 학습 모드는 호출마다 다르다 | `torch.equal` |
# | seed 000의 순서 = 우리 함수, 학습 모드에서 행 합 ≠ 1 | 원문 바로잡기 |
# | "10% 연결 끊기"는 남은 값 ×1.111: 안 끊긴 행(66%)도 합 1.111, 합이 1인 행은 없다 | 원문 바로잡기 |
# | 작은 과적합 모델에서 드롭아웃은 검증 손실을 크게 줄이지만(7.1 → 1.2) 정확도는 시드 차이 수준, 검증 손실은 늘 ln 2 위 | 6개 p × 시드 5개 (스크립트), 시드 0의 처음 200단계 라이브 재현 |
# | "더 다양한 관계" (엔트로피 증가)는 이 과제에서 확인되지 않음 | p별 엔트로피 |
#
# 다음 노트북(07)에서는 헤드를 여러 개로 나누는 멀티 헤드 어텐션(multi-head attention)을 다룹니다. 각 헤드가 자기 가중치 행렬을 갖고, 드롭아웃은 그 행렬마다 따로 걸립니다.
