# %% [markdown]
# # 01. 가중 평균에서 어텐션으로
#
# 어텐션(attention)은 새로운 발명이라기보다 **가중 평균**(weighted average)에 "가중치를 데이터에서 계산한다"는 한 가지 생각을 더한 것입니다.
#
# **학습 목표**
# - 수능 성적의 평균을 가중 평균으로 계산하고, 가중치의 합으로 나눠야 하는 이유를 숫자로 확인한다.
# - 어텐션을 "① 가중치를 계산한다, ② 그 가중치로 가중합을 구한다"의 두 단계로 설명할 수 있다.
# - 소프트맥스(softmax)가 임의의 실수 점수(score)를 양수이고 합이 1인 가중치로 바꾸는 방법과, 큰 점수에서 생기는 일을 안다.
# - 수치적으로 안정된 소프트맥스를 직접 구현하고 검사할 수 있다.
#
# **선수 지식**: 평균의 뜻, 파이썬과 PyTorch 텐서의 기초 (이 과정의 첫 노트북입니다)
#
# **예상 시간**: 혼자 공부 40분 / 스터디 발표 20분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작하며 "어텐션은 가중 평균이다"라는 한 문장을 먼저 던지세요. 오늘 끝날 때 이 문장이 왜 맞는지, 그리고 무엇이 더해져야 어텐션이 되는지(가중치를 데이터로부터 계산) 설명할 수 있으면 성공입니다. 슬라이더 데모는 4절에 있습니다.

# %% slideshow={"slide_type": "skip"}
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.exercises import check
from helpers.plots import attention_heatmap

setup()

# %% [markdown]
# ## 1. 수능 성적의 평균
#
# [원문 002](../SOURCES.md)의 예를 따라, 국어·영어·수학은 100점 만점이고 탐구 네 과목은 50점 만점이라고 합시다. 만점은 모두 더해 500점입니다. 지금의 수능에서는 탐구를 두 과목까지 고르므로, 네 과목은 원문의 설정을 따른 것입니다. 이 노트북에서 **점수**(score)라는 말은 소프트맥스에 들어가는 수(3절)에만 쓰고, 시험에서 받은 점수는 **원점수**(raw mark)라고 부릅니다.
# 한 학생의 원점수가 아래와 같을 때, 이 학생의 "평균 성적"은 몇 %일까요?

# %%
subjects = ["국어", "영어", "수학", "물리", "화학", "생명", "지구"]
full_marks = torch.tensor([100.0, 100, 100, 50, 50, 50, 50])
raw = torch.tensor([88.0, 92, 76, 30, 28, 35, 33])

total_percent = raw.sum() / full_marks.sum() * 100
print(f"총점 {raw.sum():.0f} / {full_marks.sum():.0f} = {total_percent:.2f}%")
assert round(total_percent.item(), 2) == 76.40

# %% [markdown] slideshow={"slide_type": "subslide"}
# 총점을 만점으로 나눈 이 숫자는 사실 **과목별 백분율의 가중 평균**입니다. 과목 $i$의 백분율을 $x_i = \text{원점수}_i / \text{만점}_i \times 100$, 가중치(weight)를 만점의 비율 $w_i = \text{만점}_i / \sum_j \text{만점}_j$ 로 두면
#
# $$\frac{\sum_i \text{원점수}_i}{\sum_j \text{만점}_j} \times 100 = \sum_i \underbrace{\frac{\text{만점}_i}{\sum_j \text{만점}_j}}_{w_i} \cdot \underbrace{\frac{\text{원점수}_i}{\text{만점}_i} \times 100}_{x_i}, \qquad w_i \ge 0,\ \sum_i w_i = 1.$$
#
# 국영수의 가중치(0.2)는 탐구 과목의 가중치(0.1)의 두 배입니다. 코드로 확인합니다.

# %%
percent = raw / full_marks * 100           # (7,) per-subject percentage
weights = full_marks / full_marks.sum()    # (7,) sums to 1
weighted = (weights * percent).sum()
plain = percent.mean()

print("가중치:", [round(v, 2) for v in weights.tolist()])
print(f"가중 평균 = {weighted:.2f}%,  단순 평균 = {plain:.2f}%")
assert torch.isclose(weighted, total_percent)
assert torch.isclose(weights.sum(), torch.tensor(1.0))
assert torch.allclose(weights, torch.tensor([0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1]))
assert plain < weighted

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 학생은 탐구 백분율이 낮습니다. 단순 평균은 탐구 네 과목을 국영수와 같은 무게로 세므로, 탐구가 7개 중 4개 몫을 차지해 가중 평균보다 낮게 나옵니다. 그림으로 보면 가중치가 어디에 얼마나 실리는지가 드러납니다.

# %% [markdown] slideshow={"slide_type": "skip"}
# 아래 접힌 셀은 가중치 한 줄을 막대로 그리고 막대마다 값을 적는 함수 `weight_bars`를 정의합니다(05번 노트북에서도 불러 씁니다).

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
from helpers.plots import to_numpy


def weight_bars(weights, labels=None, *, ax=None, title=None, ylabel="가중치", color="tab:blue", ylim=(0.0, 1.0)):
    """Bar chart of one row of weights, each bar labelled with its value."""
    w = to_numpy(weights).reshape(-1)                      # (T,)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    x = np.arange(len(w))
    ax.bar(x, w, color=color)
    ax.set_xticks(x, labels if labels is not None else x)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    for xi, wi in zip(x, w):
        ax.text(xi, wi, f"{wi:.2f}", ha="center", va="bottom", fontsize=8)
    return ax

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 2.7))
weight_bars(weights, subjects, ax=ax1, title="과목별 가중치 (합 1)", ylim=(0, 0.3))
bars = ax2.bar(range(7), percent, color="tab:orange")
ax2.bar_label(bars, labels=[f"{p:.0f}" for p in percent.tolist()], label_type="center", color="white", fontsize=9)
ax2.axhline(weighted.item(), color="tab:blue", linestyle="--", label=f"가중 평균 {weighted:.1f}%")
ax2.axhline(plain.item(), color="gray", linestyle=":", label=f"단순 평균 {plain:.1f}%")
ax2.set(xticks=range(7), xticklabels=subjects, ylim=(0, 125), ylabel="%", title="과목별 백분율 (막대 안: 백분율)")
ax2.legend(loc="upper center", ncol=2, frameon=False)   # above the tallest bar (92%), clear of the lines
plt.show()

# %% [markdown]
# ### 가중치의 합으로 나눠야 평균이 된다
#
# 가중치를 "국영수 2, 탐구 1"처럼 합이 1이 아닌 수로 적으면, 백분율의 가중합(weighted sum)을 **가중치의 합**(여기서는 10)으로 나눠야 평균이 됩니다.
#
# > **원문 바로잡기**: 원문 002는 원점수를 "그대로 더해서 나눠주면 곤란"하다며 "과목별 점수에 해당 가중치를 곱해준 뒤 총 개수로 나눠줘야" 한다고 설명합니다. 첫 문장은 "과목 수로 나누면" 곤란하다는 뜻이라면 맞습니다. 다만 원점수를 그대로 더해도 만점의 합(500)으로 나누면 그것이 바로 가중 평균입니다(위에서 76.40%). 바로잡아야 할 것은 둘째 문장의 분모입니다. "총 개수"를 과목 수(7)로 읽으면 평균이 되지 않습니다. 아래 계산처럼 모든 과목이 만점인 학생이 142.86%가 됩니다. 나눠야 하는 수는 가중치의 합(10)이고, 가중치의 합이 이미 1이라면 나눌 필요가 없습니다.

# %% slideshow={"slide_type": "subslide"}
w_raw = torch.tensor([2.0, 2, 2, 1, 1, 1, 1])
perfect = torch.full((7,), 100.0)

by_count = (w_raw * perfect).sum() / len(w_raw)
by_weight_sum = (w_raw * perfect).sum() / w_raw.sum()
print(f"만점 학생, 개수로 나눔: {by_count:.2f}%   가중치 합으로 나눔: {by_weight_sum:.2f}%")
print(f"이 학생, 가중치 합으로 나눔: {(w_raw * percent).sum() / w_raw.sum():.2f}%")
assert w_raw.sum() == 10 and round(by_count.item(), 2) == 142.86
assert torch.isclose(by_weight_sum, torch.tensor(100.0))
assert torch.isclose((w_raw * percent).sum() / w_raw.sum(), weighted)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "개수로 나누면 만점이 142.86%"라는 결과를 보여 주고 청중에게 왜 그런지 물어보세요. 답(가중치의 합으로 나눠야 한다)은 곧 소프트맥스가 하는 일, 즉 가중치의 합을 1로 맞추는 일로 이어집니다.

# %% [markdown]
# ## 2. 어텐션 = 가중치 계산 + 가중합
#
# 수능 예에서 한 일은 두 단계였습니다.
#
# 1. **가중치를 정한다**: 항목마다 $w_i \ge 0$, $\sum_i w_i = 1$.
# 2. **가중합을 구한다**: $\text{출력} = \sum_i w_i\, v_i$.
#
# 어텐션도 똑같습니다. 다른 점은 두 가지입니다. 항목 $v_i$가 숫자가 아니라 **벡터**(예: 단어의 임베딩(embedding))이고, 가중치를 사람이 정하지 않고 **데이터에서 계산**한다는 점입니다. 무엇을 찾는지 나타내는 쿼리(query)와 각 항목이 무엇인지 나타내는 키(key)를 비교해 점수를 매기고, 그 점수를 가중치로 바꿉니다. 섞이는 내용 벡터는 밸류(value)라고 부릅니다.
#
# 가중치가 합 1인 양수이므로 출력은 항상 밸류 벡터들의 **볼록 결합**(convex combination)입니다. 밸류 벡터들의 볼록 껍질(convex hull), 곧 그 점들을 모두 감싸는 가장 작은 볼록 영역 안에 놓입니다.

# %%
values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, -0.5]])   # (3, 2): three value vectors
w = torch.tensor([0.7, 0.2, 0.1])                                # (3,)
output = w @ values                                              # (2,)
print("출력 =", output)
# Inside the triangle: solve output = Σ c_i v_i with Σ c_i = 1 independently; all c_i >= 0.
coef = torch.linalg.solve(torch.cat([values.T, torch.ones(1, 3)]), torch.cat([output, torch.ones(1)]))
assert (coef >= 0).all() and torch.allclose(coef, w)

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.fill(values[:, 0], values[:, 1], color="tab:blue", alpha=0.1)
ax.scatter(values[:, 0], values[:, 1], s=80 + 600 * w, color="tab:blue")
for i, (x, y) in enumerate(values.tolist()):
    ax.annotate(f"v{i + 1} (w={w[i]:.1f})", (x, y), textcoords="offset points", xytext=(6, 6))
ax.scatter(*output.tolist(), marker="*", s=250, color="tab:red", label="출력 = Σ wᵢ vᵢ")
ax.set_title("가중합은 밸류들의 볼록 결합")
ax.legend(loc="lower right")
ax.set_aspect("equal")
ax.margins(0.25)
plt.show()

# %% [markdown]
# ## 3. 점수를 가중치로: 소프트맥스
#
# 쿼리와 키를 비교한 점수는 임의의 실수입니다. 음수일 수도, 아주 클 수도 있습니다. 점수를 그냥 합으로 나누면 어떻게 될까요?

# %%
scores = torch.tensor([2.0, -1.0, 0.5])
naive = scores / scores.sum()
print("합으로 나눈 '가중치':", naive)
assert (naive < 0).any() and (naive > 1).any()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 음수 가중치와 1보다 큰 가중치가 나옵니다. 점수의 합이 0이면 나눌 수조차 없습니다. 그래서 먼저 $e^{z}$로 모든 점수를 양수로 만든 뒤 합으로 나눕니다. 이것이 소프트맥스입니다.
#
# $$\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_j e^{z_j}}$$
#
# 성질 네 가지를 계산으로 확인합니다: ① 모든 가중치가 양수, ② 합이 1, ③ 점수의 순서를 유지, ④ 모든 점수에 같은 수를 더해도 결과가 같음.

# %%
sm_weights = torch.softmax(scores, dim=-1)   # PyTorch's softmax; we write our own in a moment
print("소프트맥스 가중치:", sm_weights)
assert (sm_weights > 0).all()                                 # ①
assert torch.isclose(sm_weights.sum(), torch.tensor(1.0))     # ②
assert torch.equal(sm_weights.argsort(), scores.argsort())    # ③
assert torch.allclose(torch.softmax(scores + 100.0, dim=-1), sm_weights)    # ④

# %% [markdown]
# ### 점수가 커지면: 한 곳으로 쏠린다
#
# 점수의 **차이**가 커질수록 가장 큰 점수의 가중치가 1에 다가가, 가중치가 거의 원-핫(one-hot)이 됩니다. 뒤의 04번 노트북에서 이 현상이 학습을 어떻게 방해하는지 봅니다.

# %%
for k in [1, 5, 20]:
    print(f"점수 × {k:>2}: 가중치 = {torch.softmax(scores * k, dim=-1).numpy().round(4)}")
assert torch.softmax(scores * 20, dim=-1).max() > 0.9999

# %% [markdown]
# ### 큰 점수에서 넘치는 지수
#
# float32의 $e^{z}$는 $z \approx 88.72$를 넘으면 무한대(inf)가 됩니다(float32 최댓값의 로그). 교과서 공식을 그대로 쓰면 inf/inf = NaN이 나옵니다.

# %%
assert torch.isfinite(torch.exp(torch.tensor(88.72))) and torch.isinf(torch.exp(torch.tensor(88.73)))
big = torch.tensor([1000.0, 1001.0, 1002.0])
textbook = torch.exp(big) / torch.exp(big).sum()
print("교과서 공식:", textbook)
assert torch.isnan(textbook).all()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 해결책은 성질 ④입니다. 모든 점수에서 최댓값 $m = \max_j z_j$를 빼도 결과는 같습니다. 분자와 분모에 똑같이 $e^{-m}$이 곱해질 뿐이기 때문입니다.
#
# $$\mathrm{softmax}(z)_i = \frac{e^{z_i - m}}{\sum_j e^{z_j - m}}$$
#
# 이제 가장 큰 지수는 $e^0 = 1$이라 넘칠 수 없고, 분모는 1 이상이라 0이 될 수 없습니다. 이 과정에서 쓸 소프트맥스를 직접 적습니다. 마지막 축을 따라 계산하므로 행렬(쿼리마다 한 행)에도 그대로 쓸 수 있습니다.

# %% tags=["save"]
def softmax(z, dim=-1):  # (..., T) -> (..., T)
    """softmax(z) = exp(z - max z) / sum exp(z - max z): the largest exponent is e^0 = 1."""
    shifted = z - z.amax(dim=dim, keepdim=True)   # (..., T), every entry <= 0
    e = torch.exp(shifted)                         # (..., T), in (0, 1]
    return e / e.sum(dim=dim, keepdim=True)        # (..., T), each slice sums to 1


# %% slideshow={"slide_type": "subslide"}
print("softmax:", softmax(big))
print("최댓값을 뺀 점수:", (big - big.max()).tolist(), "→ 지수", torch.exp(big - big.max()))

# Same result as PyTorch's softmax, on small, huge and batched scores.
seed_everything(0)
batch = torch.randn(2, 3, 5) * 50                  # (B, T_q, T_k)
for z in [scores, big, -big, batch]:
    torch.testing.assert_close(softmax(z), torch.softmax(z, dim=-1))
torch.testing.assert_close(softmax(batch).sum(dim=-1), torch.ones(2, 3))
print("softmax = torch.softmax: float32 반올림 범위(assert_close) 안에서 같음")

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "softmax(z) = softmax(z − max z)"가 왜 성립하는지 칠판에 한 줄로 보여 주세요: 분자와 분모에 똑같이 $e^{-\max z}$가 곱해질 뿐입니다. 이 한 줄이 PyTorch를 비롯한 주요 라이브러리의 소프트맥스 구현에 들어 있습니다. `-big`(모두 −1000 근처)에서는 반대로 모든 지수가 0으로 사라져 0/0이 되는데, 같은 한 줄이 그 경우도 고칩니다.

# %% [markdown]
# ## 4. 슬라이더로 느껴 보기
#
# 국어·영어·수학·탐구 네 영역에 "얼마나 중요하게 볼지" 점수를 주고, 소프트맥스가 그 점수를 가중치로 바꾸게 해 봅시다. 오른쪽 그림 제목은 그 가중치로 구한 백분율의 가중합입니다. 슬라이더를 움직이며 확인할 것:
# - 점수에 모두 같은 수를 더하면(모든 슬라이더를 같이 올리면) 가중치가 변하지 않는다.
# - 한 점수만 크게 올리면 가중합이 그 과목의 백분율에 가까워진다.
# - 음수 점수도 양수 가중치가 된다.

# %%
areas = ["국어", "영어", "수학", "탐구"]
area_percent = torch.tensor([88.0, 92.0, 76.0, (30 + 28 + 35 + 33) / 200 * 100])
area_scores = torch.tensor([1.0, 0.5, 2.0, -1.0])
print("영역별 백분율:", area_percent.tolist())

# %% [markdown] slideshow={"slide_type": "skip"}
# 아래 접힌 셀은 슬라이더 그림을 만드는 코드입니다. 그림을 **한 번만** 만들고, 슬라이더가 움직이면 막대 높이·글자·제목만 바꿉니다(`softmax`로 가중치 계산). 그래서 슬라이더를 움직이는 동안에도 그림이 손을 따라옵니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
import numpy as np
import torch


def softmax_panels(ax_scores, ax_weights, labels, values=None):
    """Score bars and softmax-weight bars, drawn once; returns update(scores) -> weights (numpy)."""
    x = np.arange(len(labels))
    score_bars = ax_scores.bar(x, np.zeros(len(labels)), color="tab:gray")
    ax_scores.axhline(0, color="black", linewidth=0.8)
    ax_scores.set(xticks=x, xticklabels=labels, ylim=(-6.5, 6.5), title="점수(score): 임의의 실수")
    weight_rects = ax_weights.bar(x, np.zeros(len(labels)), color="tab:blue")
    texts = [ax_weights.text(xi, 0.0, "", ha="center", va="bottom", fontsize=9) for xi in x]
    ax_weights.set(xticks=x, xticklabels=labels, ylim=(0, 1.15), ylabel="가중치")
    v = None if values is None else torch.as_tensor(values, dtype=torch.float64)   # (n,)

    def update(scores):
        s = torch.as_tensor(scores, dtype=torch.float64)   # (n,)
        w = softmax(s)                                      # (n,)
        for bar, si in zip(score_bars, s.tolist()):
            bar.set_height(si)
            bar.set_color("tab:red" if si < 0 else "tab:gray")
        for bar, text, wi in zip(weight_rects, texts, w.tolist()):
            bar.set_height(wi)
            text.set_y(wi)
            text.set_text(f"{wi:.2f}" if wi >= 0.005 else "<0.01")   # 0.0001 is not 0
        ax_weights.set_title("소프트맥스 가중치: 양수, 합 1" if v is None else f"가중합 = {float(w @ v):.2f}")
        return w.numpy()

    return update


def softmax_explorer(labels, scores, values=None, low=-5.0, high=5.0):
    """One slider per score; the figure is built once and follows the hand while dragging."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer
    from tools.explorer_export import softmax_bars

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.0), dpi=80)
    # Fixed margins, no layout engine: with layout="tight" or "constrained" every frame would be drawn whole.
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.12, top=0.88, wspace=0.25)
    update = softmax_panels(*axes, labels, values)
    sliders = {f"s{i}": widgets.FloatSlider(value=float(s), min=low, max=high, step=0.1, description=str(label))
               for i, (label, s) in enumerate(zip(labels, scores))}
    # Without a kernel (site, decks) the browser draws these two panels itself, for every slider step.
    return Explorer(fig, lambda **kw: update([kw[f"s{i}"] for i in range(len(labels))]), sliders,
                    drawing=softmax_bars(*axes, values))


def softmax_small_multiples(labels, settings, values=None, figsize=(10, 4.4)):
    """The explorer's panels for several score settings side by side (the static counterpart); returns the weights."""
    fig, axes = plt.subplots(2, len(settings), figsize=figsize)
    weights = {}
    for col, (name, scores) in enumerate(settings.items()):
        weights[name] = softmax_panels(axes[0, col], axes[1, col], labels, values)(scores)
        axes[0, col].set_title(f"{name}: 점수")
    fig.tight_layout()
    return weights


# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
explorer = softmax_explorer(areas, area_scores.tolist(), values=area_percent)
explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 코드(`softmax_panels`)로 세 점수 설정을 나란히 그립니다: 균등, 수학만 높음, 처음 점수 × 3.

# %%
settings = {"모든 점수 0": torch.zeros(4), "수학만 3": torch.tensor([0.0, 0.0, 3.0, 0.0]), "처음 점수 × 3": area_scores * 3}
results = softmax_small_multiples(areas, settings, values=area_percent)
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 균등하면 가중합은 네 영역 백분율의 단순 평균(79.75)이고, 수학에 가중치 0.87이 실리면 가중합(76.65)이 수학 백분율 76에 다가갑니다. 마지막 설정에서 탐구의 점수 −3은 가중치 0.0001이 되어 막대로는 보이지 않지만 0은 아닙니다.

# %%
sums = {name: float(r @ area_percent.double().numpy()) for name, r in results.items()}
print("가중치:", {name: r.round(4).tolist() for name, r in results.items()})
print("가중합:", {name: round(v, 2) for name, v in sums.items()})
assert abs(sums["모든 점수 0"] - area_percent.mean().item()) < 1e-9 and round(sums["모든 점수 0"], 2) == 79.75
assert results["수학만 3"].argmax() == 2 and round(results["수학만 3"].max(), 2) == 0.87
assert round(sums["수학만 3"], 2) == 76.65 and abs(sums["수학만 3"] - 76) < abs(sums["모든 점수 0"] - 76)
assert results["처음 점수 × 3"].max() > softmax(area_scores).max().item()
assert 0 < results["처음 점수 × 3"][3] < 5e-4
np.testing.assert_allclose(explorer.last, softmax(area_scores.double()).numpy())   # the slider's first frame

# %% [markdown]
# ## 5. 첫 어텐션 계산
#
# 이제 두 단계를 모두 데이터로 계산합니다. 쿼리 $q$와 키 $k_i$의 **내적**(dot product)으로 점수를 매기고, 키 차원(key dimension) $d_k$(벡터의 성분 수)의 제곱근으로 나눈 뒤(이유는 04번 노트북), 소프트맥스로 가중치를 만들고, 밸류의 가중합을 구합니다.
#
# $$\alpha_i = \mathrm{softmax}_i\!\left(\frac{q \cdot k_i}{\sqrt{d_k}}\right), \qquad \text{출력} = \sum_i \alpha_i v_i$$

# %% [markdown] slideshow={"slide_type": "subslide"}
# 직접 구현한 계산(위의 `softmax`)과 PyTorch의 구현(`F.scaled_dot_product_attention`, 가중치는 `torch.softmax`)이 같은 값을 내는지 봅니다.

# %%
seed_everything(1)
q = torch.randn(1, 4)   # (T_q=1, d_k=4): one query
k = torch.randn(3, 4)   # (T_k=3, d_k=4): three keys
v = torch.randn(3, 2)   # (T_k=3, d_v=2): three values

d_k = q.shape[-1]
by_hand_weights = softmax(q @ k.T / math.sqrt(d_k))   # step 1: weights (1, 3)
by_hand = by_hand_weights @ v                                 # step 2: weighted sum (1, 2)
out = F.scaled_dot_product_attention(q, k, v)                # PyTorch: (1, 2)
print("가중치:", by_hand_weights)
print("출력:", by_hand)
torch.testing.assert_close(by_hand_weights, torch.softmax(q @ k.T / math.sqrt(d_k), dim=-1))
torch.testing.assert_close(by_hand, out)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 쿼리가 여러 개면 가중치는 행렬이 됩니다. 행이 쿼리, 열이 키이고 **각 행의 합이 1**입니다. 이 그림을 어텐션 맵(attention map)이라 부릅니다. 여기서는 같은 벡터 `x`를 쿼리·키·밸류로 모두 쓰는데, 이 예에서는 자기 자신과의 내적 $\lVert x_i \rVert^2$가 가장 커서 대각선이 진합니다(크기가 더 큰 벡터와의 내적이 더 클 수도 있어서 늘 그렇지는 않습니다).

# %%
seed_everything(2)
tokens = ["나는", "학생", "이다"]
x = torch.randn(3, 4)                        # (T=3, d=4): the same tokens give q, k and v
attn = softmax(x @ x.T / math.sqrt(x.shape[-1]))   # (T, T): row i = weights of query i
fig, ax = plt.subplots(figsize=(4.6, 2.5))
attention_heatmap(attn, tokens, tokens, ax=ax, title="어텐션 가중치 (행의 합 = 1)")
plt.show()
assert torch.allclose(attn.sum(dim=-1), torch.ones(3)) and torch.equal(attn.argmax(dim=-1), torch.arange(3))

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 여기서 쿼리·키·밸류가 모두 같은 x라는 점을 짚고 넘어가세요. 같은 벡터를 세 역할에 쓰는 것이 어색하다는 느낌이 바로 03번 노트북(세 가지 투영)의 동기입니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("01-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다. 01-2의 풀이는 '예측 확인' 셀 다음에 있습니다.
#
# **01-1.** 값 텐서 `values`(예: 과목별 백분율)와 가중치 텐서 `weights`(합이 1이 아닐 수도 있음)를 받아 가중 평균을 돌려주는 `weighted_average`를 완성하세요.

# %%
def weighted_average(values, weights):
    raise NotImplementedError

check("01-1", weighted_average)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def weighted_average(values, weights):
    return (weights * values).sum() / weights.sum()

check("01-1", weighted_average)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **01-2.** 분류 모델의 손실(loss)에는 소프트맥스의 출력(확률)이 아니라 그 로그 $\log \mathrm{softmax}(z)_i$가 들어갑니다(05번의 지식 증류(knowledge distillation)도 마찬가지입니다). 먼저 **예측**해 보세요: 안정된 `softmax`에 로그를 씌운 `torch.log(softmax(z))`는 `z = [-1000, 0, 1000]`에서 무엇을 낼까요? (정확한 값은 $[-2000, -1000, 0]$입니다.) 예측을 적어 두고 다음 장 「예측 확인」에서 확인하세요. 그리고 어떤 점수에서도 정확한 유한값을 내는 `my_log_softmax`를 `torch.exp`, `torch.log`, `max`, `sum`만으로 구현하세요. 완성된 답인 `torch.log_softmax`, `torch.logsumexp`, `nn.LogSoftmax`와 그 값을 손실로 바꿔 담은 `F.cross_entropy`(그리고 `logcumsumexp`, `logaddexp`, `Categorical`의 `logits`)는 쓰지 마세요(검사가 알아챕니다). (힌트: 나눗셈의 로그는 로그의 뺄셈입니다.)

# %%
def my_log_softmax(z):
    raise NotImplementedError

check("01-2", my_log_softmax)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### 예측 확인
#
# 앞 장에서 적어 둔 예측과 비교하세요. 정확한 값은 $[-2000, -1000, 0]$입니다.

# %%
print(torch.log(softmax(torch.tensor([-1000.0, 0.0, 1000.0]))))   # predicted on the slide before

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def my_log_softmax(z):
    shifted = z - z.max()                              # the largest entry is 0
    return shifted - torch.log(torch.exp(shifted).sum())   # log(e^a / S) = a - log S, no log(0)

check("01-2", my_log_softmax)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **01-3.** 소프트맥스를 거쳐 가중치 `[0.7, 0.2, 0.1]`이 되는 점수 세 개를 찾으세요. (힌트: 두 점수의 차이와 두 가중치의 비율 사이의 관계)

# %%
my_scores = ...

check("01-3", my_scores)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
my_scores = torch.log(torch.tensor([0.7, 0.2, 0.1]))

check("01-3", my_scores)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 수능 예에서 가중치는 사람이 정했습니다. 번역 모델에서 "이번 단어를 만들 때 원문의 어느 단어를 볼지"를 사람이 정할 수 없는 이유는 무엇일까요?
# 2. 소프트맥스 대신 점수를 $\max(z_i, 0)$로 자르고 합으로 나누면 어떤 문제가 생길까요? 모든 점수가 음수인 경우를 생각해 보세요.
# 3. 어텐션의 출력이 밸류들의 볼록 결합이라는 사실은 장점일까요, 한계일까요? 밸류에 없는 방향의 정보를 만들 수 있을까요?
# 4. 점수를 3배 하면 가중치가 한쪽으로 쏠렸습니다. 이것이 학습에 좋은 때와 나쁜 때는 언제일까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 토론은 1번과 3번을 먼저 하세요. 1번은 02번 노트북(seq2seq)으로, 3번은 멀티 헤드와 출력 투영(07번)으로 이어집니다. 4번은 04·05번(스케일링, 온도)의 예고편입니다.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 총점/만점은 과목별 백분율의 가중 평균이다 | 가중치 0.2·0.1, 두 값이 같음을 assert |
# | 가중 평균은 가중치의 **합**으로 나눈다 | 개수로 나누면 만점이 142.86% (원문 바로잡기) |
# | 어텐션 = ① 가중치 계산 ② 밸류의 가중합 | 출력이 밸류의 볼록 결합 |
# | 소프트맥스: 양수, 합 1, 순서 유지, 평행이동 불변 | 네 성질을 assert |
# | 큰 점수 차이 → 한 키로 쏠림; 큰 점수 → 지수 넘침 | ×20에서 최대 가중치 > 0.9999; float32는 $e^{88.73}$ = inf |
# | 최댓값을 빼는 `softmax`는 넘치지 않는다 | PyTorch의 소프트맥스와 같음 (±1000, 배치 입력에서 assert) |
# | 어텐션: 손 계산 = PyTorch | `assert_close` 두 번 |
#
# 다음 노트북(02)에서는 가중치를 **학습된 모델이 계산**하는 첫 사례, seq2seq 번역 모델의 어텐션을 직접 학습시켜 봅니다.
