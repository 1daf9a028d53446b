# %% [markdown]
# # 09. 마스크
#
# 마스크(mask)는 어떤 쿼리(query)가 어떤 키(key)를 볼 수 있는지 정하는 불리언 행렬입니다. 길이가 다른 문장을 묶은 배치와 디코더(decoder)에 꼭 필요하고, 잘못 쓰면 손실(loss)이 NaN이 됩니다.
#
# **학습 목표**
# - 패딩 마스크(padding mask)와 인과 마스크(causal mask)를 직접 만들고, 합친 마스크와 가중치를 그림으로 읽는다.
# - 볼 수 있는 키가 하나도 없는 쿼리 행(**전부 가려진 행**, fully masked row)에서 `-inf` + `torch.softmax`가 NaN을 내고, 그 NaN이 다음 층(layer)과 손실, 기울기(gradient)로 번져 가는 과정을 NaN 개수로 따라간다.
# - `-1e9`로 가리는 방법의 한계(균등 가중치, float16 넘침)를 0 가중치 처리와 비교한다.
# - 불리언 마스크와 더하는 마스크, `torch.nn.MultiheadAttention`의 반대 약속(True = 가림)을 구별한다.
# - 크로스 어텐션(cross-attention)에서 키 쪽 패딩만 가리는 이유를 확인하고, 디코더 전용 모델의 배치 생성에서 왼쪽 패딩, 위치 번호, 인과 마스크를 함께 맞춘다.
#
# **선수 지식**: 01번(소프트맥스(softmax)), 03번(셀프 어텐션(self-attention)과 크로스 어텐션), 07번(멀티 헤드 어텐션)
#
# **예상 시간**: 혼자 공부 50분 / 스터디 발표 25분
#
# 출처 목록(원문과 논문): [SOURCES.md](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 첫 문장으로 "마스크는 한 줄짜리 코드인데, 그 한 줄 때문에 학습이 NaN으로 끝나는 일이 아주 흔하다"를 던지세요. 오늘의 핵심 장면은 4절의 NaN 개수 표입니다. 시간이 부족하면 2절 그림 → 4절 → 5절 순서로만 보여 줘도 됩니다.

# %% slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from helpers import seed_everything, setup
from helpers.exercises import check
from helpers.lessons.multi_head_attention import copy_from_torch
from helpers.lessons.query_key_value import scaled_dot_product_attention
from helpers.plots import attention_heatmap

setup()

# %% [markdown]
# ## 1. 길이가 다른 문장을 한 배치로
#
# 세 문장을 한 번에 처리하려면 하나의 텐서 `(B, T, d)`에 담아야 하고, 그러려면 짧은 문장 뒤를 `[PAD]` 토큰(token)으로 채워 길이를 맞춰야 합니다. 여기서는 띄어쓰기 단위로 자른 단어를 토큰으로 씁니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers.lessons.seq2seq_attention import padding_mask
from helpers.lessons.weighted_average import softmax
from helpers.plots import attention_heatmap

PAD = "[PAD]"


def pad_batch(sentences, pad=PAD):
    """Split sentences on spaces, pad to the longest; return the token lists and the lengths (B,)."""
    tokens = [s.split() for s in sentences]
    t = max(len(toks) for toks in tokens)
    return [toks + [pad] * (t - len(toks)) for toks in tokens], torch.tensor([len(toks) for toks in tokens])


def count_nan(x):
    """Number of NaN entries in a tensor."""
    return int(torch.isnan(x).sum())


def fully_masked_rows(mask):
    """(...,) boolean: True for a query row with no key it may attend."""
    return ~mask.any(dim=-1)


def additive_mask(mask, dtype=torch.float32, fill=float("-inf")):
    """Float mask to add to the scores: 0 where True (may attend), fill where False (in dtype: -1e9 -> -inf in fp16)."""
    return torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, torch.tensor(float(fill)).to(dtype))


# %%
sentences = ["어제 밤에 배가 고파서 치킨을 시켜서 먹었다", "고양이가 매트 위에 앉았다", "나는 학생 이다"]
tokens, lengths = pad_batch(sentences)
B, T = len(tokens), len(tokens[0])
for row in tokens:
    print(" | ".join(f"{t:^5}" for t in row))
print("길이:", lengths.tolist(), " T =", T)

# %% [markdown] slideshow={"slide_type": "subslide"}
# `[PAD]`는 아무 뜻이 없는 자리 채우기입니다. 그런데 어텐션은 모든 키에 점수(score)를 매기므로, 가리지 않으면 "고양이가"의 표현에 `[PAD]` 세 개의 밸류(value)가 섞여 들어갑니다. 같은 문장이 배치에서 어떤 문장과 함께 묶였는지(패딩이 몇 개인지)에 따라 결과가 달라지는 셈입니다.
#
# 마스크 $m_{ij} \in \{0, 1\}$ (1 = 쿼리 $i$가 키 $j$를 볼 수 있음)를 쓰면 가중치(weight)는
#
# $$w_{ij} = \frac{m_{ij}\, e^{s_{ij}}}{\sum_{j'} m_{ij'}\, e^{s_{ij'}}}$$
#
# 입니다. 구현에서는 $m_{ij} = 0$인 점수를 $-\infty$로 바꾸고 평소처럼 소프트맥스를 합니다. $e^{-\infty} = 0$이기 때문입니다. 이 과정 전체에서 마스크는 **True = 볼 수 있음**으로 약속합니다 (`torch.nn.functional.scaled_dot_product_attention`과 같은 약속).

# %% [markdown] slideshow={"slide_type": "subslide"}
# 먼저 가리지 않았을 때 패딩이 결과를 얼마나 바꾸는지 잽니다. "고양이가 매트 위에 앉았다"를 패딩 없이 혼자 처리한 결과와, 패딩 3개를 붙여 처리한 결과를 비교합니다.

# %%
seed_everything(0)
d = 8
x = torch.randn(B, T, d)                         # (B, T, d): token embeddings, pads included
cat_alone, _ = scaled_dot_product_attention(x[1:2, :4], x[1:2, :4], x[1:2, :4])   # (1, 4, d)
cat_unmasked, _ = scaled_dot_product_attention(x[1:2], x[1:2], x[1:2])            # (1, 7, d)
cat_masked, _ = scaled_dot_product_attention(x[1:2], x[1:2], x[1:2], padding_mask(lengths[1:2], T)[:, None, :])
gap_unmasked = (cat_unmasked[:, :4] - cat_alone).abs().max().item()
gap_masked = (cat_masked[:, :4] - cat_alone).abs().max().item()
assert gap_unmasked > 0.1 and gap_masked < 1e-6
print(f"혼자 처리한 결과와의 최대 차이: 가리지 않음 {gap_unmasked:.2f}, 패딩 마스크 < 1e-6 (반올림 수준)")

# %% [markdown]
# ## 2. 패딩 마스크와 인과 마스크
#
# - **패딩 마스크**: 키 $j$가 패딩이면 모든 쿼리가 그 키를 못 봅니다. 문장마다 길이 $L_b$가 다르므로 `(B, T)` 불리언 `j < L_b`를 만들고, 쿼리 축으로 펼쳐 `(B, T, T)`로 씁니다. **열**을 가리는 마스크입니다.
# - **인과 마스크**: 디코더가 다음 토큰을 예측할 때 미래 토큰을 미리 보면 안 되므로 쿼리 $i$는 키 $j \le i$만 봅니다. 하삼각 행렬이고, 배치의 모든 문장에 같습니다.
# - **둘 다**: 두 불리언 마스크의 논리곱(`&`)입니다.
#
# 둘 다 `torch.arange`와 비교 연산 한 번이면 됩니다.
#
# $$m^{\text{pad}}_{bij} = [\,j < L_b\,], \qquad m^{\text{causal}}_{ij} = [\,j \le i\,], \qquad m_{bij} = m^{\text{pad}}_{bij} \wedge m^{\text{causal}}_{ij}$$

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def causal_mask(t_q, t_k=None, device=None):  # -> (T_q, T_k) boolean
    """Query i may see key j only if j <= i (lower triangle; aligned top-left when T_q != T_k)."""
    t_k = t_q if t_k is None else t_k
    return torch.arange(t_k, device=device)[None, :] <= torch.arange(t_q, device=device)[:, None]  # [i, j] = j <= i


# %%
pad_keys = padding_mask(lengths, T)  # (B, T): True at real tokens, 02's padding_mask
print("padding_mask:\n", pad_keys.int())
assert torch.equal(pad_keys, torch.arange(T)[None, :] < lengths[:, None])
assert torch.equal(causal_mask(T), torch.ones(T, T, dtype=torch.bool).tril())

# %% [markdown] slideshow={"slide_type": "subslide"}
# 패딩 마스크는 02번에서 만든 `padding_mask`를 그대로 쓰고, 인과 마스크는 위의 `causal_mask`가 이 과정의 유일한 구현입니다(위 assert는 `torch.tril`과 같음을 확인합니다). 배치의 `(B, T_q, T_k)` 마스크는 이 둘을 펼치고 합쳐 만듭니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 쿼리와 키의 길이가 다를 때(`T_q ≠ T_k`) `causal_mask(t_q, t_k)`는 **왼쪽 위에 맞춥니다**: 쿼리 $i$는 키 $0..i$를 봅니다. KV 캐시(KV cache)로 한 토큰씩 생성할 때는 사정이 다릅니다. 새 쿼리 하나가 캐시된 키들 **뒤**의 마지막 위치이므로, 필요한 것은 오른쪽 아래에 맞춘 마스크($j \le i + T_k - T_q$), 즉 전체 인과 마스크의 마지막 $T_q$행입니다. `causal_mask(1, T_k)`를 그대로 쓰면 새 토큰이 첫 키 하나만 봅니다. PyTorch의 `F.scaled_dot_product_attention(..., is_causal=True)`도 왼쪽 위에 맞추므로 같은 함정이 있고, KV 캐시에는 오른쪽 아래에 맞춘 `torch.nn.attention.bias.causal_lower_right(T_q, T_k)`를 `attn_mask`로 넘깁니다(아래 셀에서 확인).

# %%
t_cache = 5                                                    # 4 cached keys + the new token's own key
top_left = causal_mask(1, t_cache)                             # (1, T_k): aligned top-left
bottom_right = causal_mask(t_cache)[-1:]                       # (1, T_k): last row of the full causal mask
print("causal_mask(1, 5):", top_left.int().tolist(), "  KV 캐시의 새 쿼리에 필요한 행:", bottom_right.int().tolist())
assert top_left.sum() == 1 and bool(bottom_right.all())

# %% slideshow={"slide_type": "subslide"}
seed_everything(3)
q_new, k_cache = torch.randn(1, 1, 1, 4), torch.randn(1, 1, t_cache, 4)     # (B, h, T_q, d), (B, h, T_k, d)
sdpa_causal = F.scaled_dot_product_attention(q_new, k_cache, k_cache, is_causal=True)
sdpa_lower_right = F.scaled_dot_product_attention(q_new, k_cache, k_cache, attn_mask=causal_lower_right(1, t_cache))
assert torch.equal(sdpa_causal, k_cache[:, :, :1])                        # is_causal=True: only the first key
torch.testing.assert_close(sdpa_lower_right, F.scaled_dot_product_attention(q_new, k_cache, k_cache))  # all 5 keys
print("SDPA is_causal=True: 첫 키만 봄 / causal_lower_right: 키 5개를 모두 봄")

# %% tags=["save"]
def attention_mask(lengths, t, causal=False, t_q=None, mask_queries=False):
    """(B, T_q, T_k) boolean: padded keys hidden (and the future if causal); query rows stay open."""
    keys = padding_mask(lengths, t)  # (B, T_k)
    t_q = t if t_q is None else t_q
    mask = keys[:, None, :].expand(-1, t_q, -1)  # (B, T_q, T_k): every query hides the padded columns
    if causal:
        mask = mask & causal_mask(t_q, t)
    if mask_queries:  # the "both sides" mask of many tutorials: padded query rows hidden too
        mask = mask & keys[:, :, None]
    return mask.contiguous()


# %% slideshow={"slide_type": "subslide"}
pad_mask = attention_mask(lengths, T)  # (B, T, T): key padding only
both_mask = attention_mask(lengths, T, causal=True)  # (B, T, T): key padding & causal
assert torch.equal(pad_mask, pad_keys[:, None, :].expand(B, T, T))
assert torch.equal(both_mask, pad_mask & causal_mask(T))
assert not fully_masked_rows(both_mask).any()  # key 0 is always real and always in the past

# %% [markdown] slideshow={"slide_type": "subslide"}
# 초록 칸(1)이 볼 수 있는 칸, 흰 칸(0)이 가려진 칸입니다. 먼저 세 문장의 패딩 마스크입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def draw_mask(mask, query_labels=None, key_labels=None, ax=None, title="마스크 (1 = 볼 수 있음)", annotate=True):
    """Heatmap of one (T_q, T_k) boolean mask: green 1 = may attend, white 0 = hidden."""
    return attention_heatmap(mask.double(), query_labels, key_labels, ax=ax, title=title, cmap="Greens",
                             vmin=0.0, vmax=1.6, colorbar=False, fmt=".0f", annotate=annotate)


# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, B, figsize=(12, 3.9))
for b in range(B):
    draw_mask(pad_mask[b], tokens[b], tokens[b], ax=axes[b], title=f"패딩 마스크: 문장 {b + 1} (길이 {lengths[b]})",
              annotate=False)
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 인과 마스크는 모든 문장에 같은 삼각형이고, 패딩과 합치면 삼각형에서 `[PAD]` 열이 지워집니다.

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, 3, figsize=(12, 3.9))
draw_mask(causal_mask(T), tokens[0], tokens[0], ax=axes[0], title="인과 마스크 (모든 문장)", annotate=False)
for ax, b in zip(axes[1:], (1, 2)):
    draw_mask(both_mask[b], tokens[b], tokens[b], ax=ax, title=f"패딩 + 인과: 문장 {b + 1}", annotate=False)
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 패딩 마스크는 `[PAD]` **열**을 지우고, `[PAD]` **행**(패딩 위치의 쿼리)은 그대로 둡니다. 그래서 어느 행도 전부 0이 되지 않습니다. 이 선택이 왜 중요한지는 4절에서 봅니다.
#
# 이제 같은 마스크로 가중치를 계산합니다. 가려진 칸의 가중치는 정확히 0이고, 각 행의 합은 1입니다.

# %%
out, weights = scaled_dot_product_attention(x, x, x, both_mask)   # (B, T, d), (B, T, T)
print("가려진 칸의 가중치가 모두 정확히 0:", bool((weights[~both_mask] == 0).all()))
print("문장 2의 행 합:", [round(v, 4) for v in weights.sum(-1)[1].tolist()])
assert torch.equal(weights[~both_mask], torch.zeros(int((~both_mask).sum())))
assert torch.allclose(weights.sum(-1), torch.ones(B, T))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 세 문장의 가중치입니다. 가려진 칸은 0, 행마다 합이 1입니다.

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, B, figsize=(12, 4.2))
for b in range(B):
    attention_heatmap(weights[b], tokens[b], tokens[b], ax=axes[b], vmax=1.0, colorbar=False,
                      title=f"패딩 + 인과 가중치: 문장 {b + 1}")
fig.tight_layout()
plt.show()

# %% [markdown]
# ### 인과 마스크가 지키는 것
#
# "미래를 보지 않는다"는 말을 계산으로 확인합니다. 첫 문장의 뒤쪽 토큰 세 개(위치 4~6)의 임베딩(embedding)을 마구 바꿔도, 위치 0~3의 출력은 한 자리도 바뀌지 않아야 합니다. 마스크가 없으면 바뀝니다.

# %%
seed_everything(1)
x_future = x.clone()
x_future[0, 4:] = torch.randn(3, d) * 5                         # new "future" tokens for sentence 1
causal_a, _ = scaled_dot_product_attention(x[:1], x[:1], x[:1], causal_mask(T))
causal_b, _ = scaled_dot_product_attention(x_future[:1], x_future[:1], x_future[:1], causal_mask(T))
plain_a, _ = scaled_dot_product_attention(x[:1], x[:1], x[:1])
plain_b, _ = scaled_dot_product_attention(x_future[:1], x_future[:1], x_future[:1])
print(f"위치 0~3 출력의 최대 변화: 인과 마스크 {(causal_a - causal_b)[:, :4].abs().max():.1f} (비트 단위로 같음), "
      f"마스크 없음 {(plain_a - plain_b)[:, :4].abs().max():.2f}")
assert torch.equal(causal_a[:, :4], causal_b[:, :4])
assert (plain_a - plain_b)[:, :4].abs().max() > 0.1

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 마스크 그림에서 "패딩은 열, 인과는 삼각형"이라는 두 모양만 기억하게 하세요. 청중에게 "패딩 행은 왜 안 가렸을까?"를 물어 두고 답은 4절로 미룹니다. 인과 마스크 확인 셀은 "미래를 바꿔도 과거 출력이 비트 단위로 같다"는 점이 요점입니다.

# %% [markdown]
# ## 3. 슬라이더: 패딩 수와 인과 마스크
#
# 첫 문장(7토큰)의 점수 행렬 하나를 고정하고, 실제 토큰 수를 줄여 뒤쪽을 `[PAD]`로 바꿔 봅니다. 확인할 것:
# - 패딩 열은 언제나 0이고, 남은 칸들이 합 1을 나눠 가진다.
# - 인과 마스크를 켜면 위 삼각형이 0이 되고, 첫 행은 언제나 자기 자신에게 가중치 1을 준다.
# - 패딩 행(아래쪽 `[PAD]` 쿼리)에도 가중치가 있다: 실제 토큰만 보기 때문에 NaN이 아니다.

# %%
seed_everything(4)
demo_tokens = tokens[0]
demo_scores = torch.randn(T, T) * 1.5     # (T, T): fixed scores, only the mask changes

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def token_names(ax, t, names):
    """Token names under and beside a t×t heatmap, where tick labels would sit (tick length + pad), as texts:
    a new name then redraws only its text, not the whole figure. Made with the widest of `names`, so the layout
    has room for every name; the axis labels are moved past them. Returns (names below, names beside)."""
    rc, renderer = plt.rcParams, ax.figure.canvas.get_renderer()
    probe = ax.text(0, 0, "", fontsize=rc["xtick.labelsize"])
    widths = {}
    for name in names:
        probe.set_text(name)
        widths[name] = probe.get_window_extent(renderer).width
    probe.remove()
    widest = max(names, key=widths.get)
    ax.set_xticks(range(t))
    ax.set_yticks(range(t))
    ax.tick_params(labelbottom=False, labelleft=False)
    gap_x = rc["xtick.major.size"] + rc["xtick.major.pad"]  # points from the axes to a tick label
    gap_y = rc["ytick.major.size"] + rc["ytick.major.pad"]
    below = [ax.annotate(widest, (j, 0), xycoords=ax.get_xaxis_transform(), xytext=(0, -gap_x),
                         textcoords="offset points", rotation=45, ha="right", va="top", fontsize=rc["xtick.labelsize"])
             for j in range(t)]
    beside = [ax.annotate(widest, (0, i), xycoords=ax.get_yaxis_transform(), xytext=(-gap_y, 0),
                          textcoords="offset points", ha="right", va="center", fontsize=rc["ytick.labelsize"])
              for i in range(t)]
    points = 72 / ax.figure.dpi  # points per pixel
    tall = below[0].get_window_extent(renderer).height * points  # the rotated name's height, in points
    wide = beside[0].get_window_extent(renderer).width * points
    # Without tick labels an axis label sits labelpad past the tick marks (pointing out, as here): add the pad
    # and the names.
    ax.set_xlabel("키(key)", labelpad=rc["xtick.major.pad"] + tall + rc["axes.labelpad"])
    ax.set_ylabel("쿼리(query)", labelpad=rc["ytick.major.pad"] + wide + rc["axes.labelpad"])
    return below, beside


def mask_view(ax_mask, ax_weights, scores, tokens, annotate=True):
    """Build the mask (left) and weight (right) heatmaps once; return update(length, causal) that redraws them."""
    t = len(tokens)
    s = torch.as_tensor(scores, dtype=torch.float64)
    im_mask = ax_mask.imshow(np.zeros((t, t)), cmap="Greens", vmin=0.0, vmax=1.6, aspect="auto")
    im_w = ax_weights.imshow(np.zeros((t, t)), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    texts = [[ax_weights.text(j, i, "", ha="center", va="center", fontsize=8) for j in range(t)]
             for i in range(t)] if annotate else []
    names = [token_names(ax, t, [*tokens, PAD]) for ax in (ax_mask, ax_weights)]  # [(below, beside)] per heatmap
    ax_weights.set_title("가중치 (가려진 칸 = 0)")

    def update(length, causal):
        mask = attention_mask(torch.tensor([length]), t, causal=causal)[0]  # (T, T)
        weights = softmax(s.masked_fill(~mask, float("-inf")))  # (T, T)
        im_mask.set_data(mask.double().numpy())
        im_w.set_data(weights.numpy())
        labels = list(tokens[:length]) + [PAD] * (t - length)
        for below, beside in names:
            for label, x_name, y_name in zip(labels, below, beside):
                x_name.set_text(label)
                y_name.set_text(label)
        for i, row in enumerate(texts):
            for j, text in enumerate(row):  # hidden cells stay blank: fewer texts to draw
                text.set_text(f"{weights[i, j]:.2f}" if mask[i, j] else "")
                text.set_color("white" if weights[i, j] > 0.6 else "black")
        kind = "패딩 + 인과" if causal else "패딩"
        ax_mask.set_title(f"{kind} 마스크: 실제 {length}개, 패딩 {t - length}개")
        return weights.numpy()

    return update


def mask_explorer(scores, tokens, length=None, causal=False):
    """A slider for the number of real tokens and a causal checkbox over one mask_view figure."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, (ax_mask, ax_weights) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=72)
    update = mask_view(ax_mask, ax_weights, scores, tokens)
    fig.tight_layout()
    controls = {"length": widgets.IntSlider(value=len(tokens) if length is None else length, min=1, max=len(tokens),
                                            description="실제 토큰 수", style={"description_width": "initial"}),
                "causal": widgets.Checkbox(value=causal, description="인과 마스크")}
    return Explorer(fig, update, controls)


# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
mask_explorer(demo_scores, demo_tokens, length=5, causal=False)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 `mask_view`로 세 설정을 그립니다. 왼쪽부터 패딩 없음, 실제 4개(패딩 3개), 실제 4개 + 인과 마스크이고, 위가 마스크, 아래가 가중치입니다.

# %% slideshow={"slide_type": "subslide"}
settings = [(7, False), (4, False), (4, True)]
fig, axes = plt.subplots(2, 3, figsize=(12, 4.9))
shown = {}
for col, (n_real, causal) in enumerate(settings):
    shown[(n_real, causal)] = mask_view(axes[0, col], axes[1, col], demo_scores, demo_tokens, annotate=False)(n_real, causal)
    axes[1, col].set_title(f"가중치: 실제 {n_real}개" + (" + 인과" if causal else ""))
fig.tight_layout()
plt.show()
print("실제 4개(패딩 3개)일 때 첫 행:", shown[(4, False)][0].round(3).tolist())

# %% slideshow={"slide_type": "skip"}
for (n_real, _causal), w in shown.items():
    assert abs(w[:, n_real:]).sum() == 0 and abs(w.sum(-1) - 1).max() < 1e-12
w4c = shown[(4, True)]
assert w4c[0, 0] == 1.0 and abs(w4c[:4][torch.ones(4, 7).triu(1).bool().numpy()]).max() == 0
assert (w4c[4:] > 0).sum() == 3 * 4        # pad queries see the 4 real keys, nothing is NaN

# %% [markdown]
# ## 4. 전부 가려진 행: NaN 함정
#
# 어떤 쿼리에게 볼 수 있는 키가 하나도 없으면 그 행의 점수가 전부 $-\infty$가 됩니다. 이런 행을 **전부 가려진 행**이라 부릅니다. 소프트맥스는
#
# $$w_{ij} = \frac{e^{-\infty}}{\sum_{j'} e^{-\infty}} = \frac{0}{0} = \text{NaN}$$
#
# 이 됩니다. 안정화를 위해 빼는 최댓값도 $-\infty$라서 $-\infty - (-\infty) = \text{NaN}$이 먼저 나옵니다. 한 행으로 확인합니다.

# %%
row = torch.tensor([1.0, 2.0, 3.0]).masked_fill(torch.tensor([True, True, True]), float("-inf"))
print("점수:", row.tolist(), "→ torch.softmax:", torch.softmax(row, dim=-1).tolist())
print("01번의 softmax:", softmax(row).tolist())
assert torch.isnan(torch.softmax(row, dim=-1)).all() and torch.isnan(softmax(row)).all()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 어떤 경우에 이런 행이 생길까요? 길이 0인 문장이 배치에 섞였을 때, 그리고 흔하게는 **패딩 쿼리의 행까지 가린 마스크**를 쓸 때입니다. 많은 튜토리얼이 패딩 마스크를 `(B, 1, T, T)` 모양으로 만들면서 **쿼리나 키 중 하나라도 패딩이면** 그 칸을 가립니다. True(볼 수 있음)로 쓰면 "쿼리도 실제 토큰이고 키도 실제 토큰"인 칸만 남기는 논리곱입니다. 그러면 `[PAD]` 쿼리의 행은 모든 칸이 가려집니다.

# %%
both_sides = attention_mask(lengths, T, mask_queries=True)  # (B, T, T): hidden if the query OR the key is padding
print("전부 가려진 행의 수 (문장별):", fully_masked_rows(both_sides).sum(-1).tolist())
assert fully_masked_rows(both_sides).sum() == (T - lengths).sum()

# %% [markdown] slideshow={"slide_type": "subslide"}
# [원문 000](../SOURCES.md)의 어텐션 코드는 점수를 `masked_fill(mask == 0, -inf)`로 가리고 `F.softmax`를 하며, 마스크 모양으로 `(B, 1, T, T)`와 `(B, 1, 1, T)`를 둘 다 허용합니다. 같은 방식을 그대로 옮긴 `naive_masked_attention`을 위 배치에 돌려 봅니다.

# %% tags=["save"]
def naive_masked_attention(q, k, v, mask, fill=float("-inf")):  # (..., T, d) each, mask (..., T_q, T_k)
    """The common recipe: scores.masked_fill(~mask, fill), torch.softmax, weights @ v; returns (out, weights)."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (..., T_q, T_k)
    weights = torch.softmax(scores.masked_fill(~mask, fill), dim=-1)  # a row with no key: 0/0 = NaN
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


# %% slideshow={"slide_type": "subslide"}
def seed_recipe(x, mask_b11t_or_b1tt):
    """The seed's recipe on (B, 1, T, d) inputs: masked_fill(mask == 0, -inf), torch.softmax."""
    return naive_masked_attention(x[:, None], x[:, None], x[:, None], mask_b11t_or_b1tt)

_, w_b1tt = seed_recipe(x, both_sides[:, None])          # (B, 1, T, T) "both sides" padding mask
_, w_b11t = seed_recipe(x, pad_keys[:, None, None])      # (B, 1, 1, T) key padding mask
print("(B,1,T,T) 마스크: NaN 가중치", count_nan(w_b1tt), "개, NaN 행", int(torch.isnan(w_b1tt).any(-1).sum()), "개")
print("(B,1,1,T) 마스크: NaN 가중치", count_nan(w_b11t), "개")
empty_batch = torch.tensor([4, 0])                        # a batch with an empty sentence
_, w_empty = seed_recipe(x[:2, :4], padding_mask(empty_batch, 4)[:, None, None])  # all False for the empty one
print("길이 0인 문장이 있으면 (B,1,1,T)도: NaN 가중치", count_nan(w_empty), "개")
assert count_nan(w_b1tt) == 7 * T and count_nan(w_b11t) == 0 and count_nan(w_empty) == 4 * 4

# %% [markdown]
# > **원문 바로잡기**: 원문 코드는 `(B, 1, T, T)`와 `(B, 1, 1, T)` 마스크를 받지만, 전부 가려진 행을 처리하지 않습니다. 그래서 패딩 쿼리 행까지 가린 `(B, 1, T, T)` 패딩 마스크를 넣으면 이 배치에서 가중치 $7 \times 7 = 49$개가 NaN이 됩니다 (패딩 7개 위치의 행 전체). `(B, 1, 1, T)` 키 패딩 마스크는 NaN을 내지 않지만, 길이 0인 문장이 섞이면 그 문장의 가중치 16개가 모두 NaN입니다. 인과 마스크처럼 전부 가려진 행이 없는 `(B, 1, T, T)` 마스크는 문제없습니다.

# %% [markdown]
# ### NaN이 번지는 길
#
# NaN 행은 패딩 위치이니 "나중에 손실에서 빼면 되지 않나?" 싶습니다. 안 됩니다. 층을 두 개 쌓아 NaN이 번져 가는 과정을 단계마다 NaN 개수로 따라갑니다. 두 번째 어텐션은 일부러 키 패딩만 가리는 올바른 마스크를 씁니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(5)
linear = torch.nn.Linear(d, d)
real = padding_mask(lengths, T)                                  # (B, T)

h1, w1 = naive_masked_attention(x, x, x, both_sides)             # layer 1: "both sides" mask
h2 = linear(h1)                                                  # (B, T, d)
h3, w3 = naive_masked_attention(h2, h2, h2, pad_mask)            # layer 2: key padding only
loss = h3[real].pow(2).mean()                                    # loss over real tokens only
loss.backward()
steps = {"1층 가중치": w1, "1층 출력": h1, "선형층": h2, "2층 가중치": w3, "2층 출력": h3,
         "손실": loss, "선형층 가중치의 기울기": linear.weight.grad}
for name, t in steps.items():
    print(f"{name}: NaN {count_nan(t)} / {t.numel()}")
print("2층 출력에서 NaN이 된 실제 토큰 (문장별):", (torch.isnan(h3).any(-1) & real).sum(-1).tolist())
assert count_nan(w1) == 49 and count_nan(h2) == 7 * d
assert (torch.isnan(h3).any(-1) & real).sum() == 4 + 3 and torch.isnan(loss)
assert torch.isnan(linear.weight.grad).all()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 두 번째 어텐션에서 패딩 키는 가중치 0으로 제대로 가려졌는데도 실제 토큰이 NaN이 되었습니다. IEEE 754에서 $0 \times \text{NaN} = \text{NaN}$이기 때문입니다. 가중치 0이 곱해지는 밸류가 NaN이면 가중합도 NaN입니다. 그래서 패딩이 있는 두 문장(`고양이가…`, `나는…`)의 모든 토큰이 NaN이 되고, 손실도 NaN입니다.
#
# 더 교묘한 경우도 있습니다. 1층 바로 뒤에서 실제 토큰만 골라 손실을 만들면 손실은 멀쩡한 수인데, **기울기**는 NaN입니다. 역전파에서 선형층 가중치의 기울기는 (출력 기울기)ᵀ × (입력)인데, 패딩 행의 출력 기울기 0이 입력의 NaN과 곱해지기 때문입니다.

# %%
linear.zero_grad()
early_loss = linear(h1.detach())[real].pow(2).mean()      # layer 1 output has NaN only at pad rows
early_loss.backward()
print(f"손실 = {early_loss.item():.4f} (유한), 기울기 NaN {count_nan(linear.weight.grad)} / {linear.weight.numel()}")
assert torch.isfinite(early_loss) and torch.isnan(linear.weight.grad).all()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: NaN 표를 위에서 아래로 읽어 주세요: 49 → 56 → 56 → 문장 두 개 전체 → 손실 → 기울기 전부. 그리고 "손실은 멀쩡한데 기울기만 NaN" 셀을 보여 주면, 옵티마이저 한 번 만에 모든 가중치가 NaN이 되는 이유가 설명됩니다. 실제로는 첫 업데이트 뒤 손실이 갑자기 nan으로 찍히는 모습으로 나타납니다.

# %% [markdown]
# ### PyTorch의 함수는 어떻게 할까?
#
# 가정하지 말고 이 노트북이 고정한 torch(`requirements.txt`의 2.13.0)로 직접 잽니다. 같은 `both_sides` 마스크를 `F.scaled_dot_product_attention`에 넣고, `torch.nn.MultiheadAttention`에는 두 번째 문장의 모든 키를 가리는 `key_padding_mask`를 넣습니다 (이 모듈은 True = 가림, 5절).

# %%
print("torch", torch.__version__.split("+")[0])
sdpa_out = F.scaled_dot_product_attention(x, x, x, attn_mask=both_sides)          # (B, T, d)
print("F.scaled_dot_product_attention: NaN", count_nan(sdpa_out), "개, 패딩 행 출력의 최대 절댓값",
      sdpa_out[~real].abs().max().item())

seed_everything(6)
torch_mha = torch.nn.MultiheadAttention(d, 2, batch_first=True)
all_hidden = torch.tensor([[False] * T, [True] * T])                              # (2, T): True = hidden
y_w, _ = torch_mha(x[:2], x[:2], x[:2], key_padding_mask=all_hidden)              # need_weights=True (default)
y_now, _ = torch_mha(x[:2], x[:2], x[:2], key_padding_mask=all_hidden, need_weights=False)
print("nn.MultiheadAttention, need_weights=True : 2번 문장 NaN", count_nan(y_w[1]), "/", y_w[1].numel())
print("nn.MultiheadAttention, need_weights=False: 2번 문장 NaN", count_nan(y_now[1]), "/", y_now[1].numel())
assert count_nan(sdpa_out) == 0 and sdpa_out[~real].abs().max() == 0
assert count_nan(y_w[1]) == T * d and count_nan(y_now[1]) == 0
assert torch.equal(y_now[1], torch_mha.out_proj.bias.expand(T, d))   # zero attention, then the output bias

# %% [markdown] slideshow={"slide_type": "subslide"}
# 고정된 torch 2.13의 `F.scaled_dot_product_attention`은 전부 가려진 행에 0을 돌려줍니다. 이것은 이 버전의 동작이지 약속된 규칙이 아닙니다: 2023년의 torch 2.0–2.1에서는 같은 입력에 NaN을 돌려준다는 보고가 있었고(pytorch/pytorch#103749, #103963), 0을 돌려주게 된 것은 그 뒤의 변경입니다. 위 셀의 assert는 torch를 올렸을 때 이 동작이 바뀌면 먼저 알려 줍니다. 반면 `nn.MultiheadAttention`은 같은 입력인데도 `need_weights`(기본값 True)에 따라 결과가 다릅니다. 가중치를 돌려주는 경로에서는 NaN, `need_weights=False`(내부에서 SDPA 사용)에서는 0 어텐션 뒤 출력 투영(projection)의 편향만 남습니다. 버전과 옵션에 따라 달라지는 동작에 기대지 말고, 마스크를 만들 때 전부 가려진 행이 없게 하거나 그런 행을 직접 0으로 처리하는 편이 안전합니다.
#
# ### 이 과정의 처리: 가중치 0, 출력 0
#
# `safe_softmax`는 05번의 `softmax_t`를 넓힙니다. 점수가 모두 $-\infty$인 행(전부 가려진 행)을 찾아 그 행을 0으로 채운 뒤 소프트맥스를 하고, 그 행에 0을 곱합니다. 그 행의 가중치는 모두 0, 출력도 0입니다. `masked_attention`은 03번의 `attention_scores`, `safe_softmax`, 06번의 `attention_dropout`, 위의 `causal_mask`를 잇기만 하고, `MaskedMultiHeadAttention`은 07번 모듈의 `attend` 한 메서드만 바꿉니다. 이 셋이 09번 이후 이 과정의 어텐션이고, `helpers.attention`은 여기에 입력 검사만 더합니다.

# %% tags=["save"]
from helpers.lessons.attention_dropout import attention_dropout
from helpers.lessons.multi_head_attention import MultiHeadAttention
from helpers.lessons.query_key_value import attention_scores
from helpers.lessons.temperature import softmax_t


def safe_softmax(scores, dim=-1, temperature=1.0):  # (..., T) -> (..., T)
    """05's softmax_t, except that a slice that is all -inf (no key to see) gets all zeros, not NaN."""
    dead = torch.isneginf(scores).all(dim=dim, keepdim=True)                    # (..., 1): no key to see
    return softmax_t(scores.masked_fill(dead, 0.0), temperature, dim) * ~dead   # dead rows: uniform × 0 = 0


# %% tags=["save"] slideshow={"slide_type": "subslide"}
def masked_attention(q, k, v, mask=None, *, causal=False, temperature=1.0, dropout_p=0.0, training=False):
    """03's scores -> safe_softmax -> 06's dropout -> weighted sum; returns (output, weights)."""
    if causal:
        tri = causal_mask(q.shape[-2], k.shape[-2], device=q.device)            # (T_q, T_k)
        mask = tri if mask is None else mask & tri
    weights = safe_softmax(attention_scores(q, k, mask), temperature=temperature)   # (..., T_q, T_k)
    weights = attention_dropout(weights, dropout_p, training)
    return weights @ v, weights                                              # (..., T_q, d_v), (..., T_q, T_k)


# %% tags=["save"] slideshow={"slide_type": "subslide"}
class MaskedMultiHeadAttention(MultiHeadAttention):
    """07's module with masked_attention inside: a query with no key gets zeros; causal=True hides the future."""

    def attend(self, q, k, v, mask):                                         # (B, h, T, d) each
        return masked_attention(q, k, v, mask, dropout_p=self.dropout, training=self.training)

    def forward(self, query, key=None, value=None, mask=None, causal=False):
        if causal:
            t_k = query.shape[1] if key is None else key.shape[1]
            tri = causal_mask(query.shape[1], t_k, device=query.device)      # (T_q, T_k)
            mask = tri if mask is None else mask & tri
        return super().forward(query, key, value, mask)


# %% [markdown]
# 같은 2층 실험을 다시 돌립니다.

# %% slideshow={"slide_type": "subslide"}
linear.zero_grad()
print("safe_softmax:", safe_softmax(row).tolist())
g1, v1 = masked_attention(x, x, x, both_sides)
g3, _ = masked_attention(linear(g1), linear(g1), linear(g1), pad_mask)
safe_loss = g3[real].pow(2).mean()
safe_loss.backward()
print(f"가려진 행: 가중치 합 {v1[~real].sum().item()}, 출력 최대 |값| {g1[~real].abs().max().item()}")
print(f"손실 = {safe_loss.item():.4f}, NaN: 출력 {count_nan(g3)}, 기울기 {count_nan(linear.weight.grad)}")
assert torch.equal(safe_softmax(row), torch.zeros(3))
assert torch.equal(v1[~real], torch.zeros(7, T)) and torch.equal(g1[~real], torch.zeros(7, d))
assert count_nan(g3) == 0 and torch.isfinite(safe_loss) and count_nan(linear.weight.grad) == 0
torch.testing.assert_close(g1, sdpa_out)

# %% [markdown]
# ### 다른 흔한 처방: `-inf` 대신 `-1e9`
#
# `-inf` 대신 아주 큰 음수로 채우면 NaN은 사라집니다. 하지만 전부 가려진 행은 점수가 모두 같은 $-10^9$이므로 소프트맥스가 **균등한 가중치** $1/T$를 줍니다. 그 행의 출력은 0이 아니라 `[PAD]`를 포함한 모든 밸류의 평균, 즉 의미 없는 값이 됩니다. 학습을 망치지는 않지만(손실에서 빠진다면) "가렸다"는 뜻과는 다릅니다.

# %%
out_big, w_big = naive_masked_attention(x, x, x, both_sides, fill=-1e9)
print("패딩 행의 가중치 (문장 2, 마지막 행):", [round(v, 4) for v in w_big[1, -1].tolist()])
print("그 행의 출력 = 모든 밸류의 평균?", torch.allclose(out_big[1, -1], x[1].mean(0)))
assert count_nan(w_big) == 0 and torch.allclose(w_big[~real], torch.full((7, T), 1 / T))
assert torch.allclose(out_big[~real], x.mean(1, keepdim=True).expand(B, T, d)[~real], atol=1e-6)
torch.testing.assert_close(w_big[real], v1[real])          # real rows: same as -inf

# %% [markdown] slideshow={"slide_type": "subslide"}
# 실제 토큰의 행은 `-1e9`로도 `-inf`와 똑같습니다 (마지막 assert). 문제는 낮은 정밀도에서 생깁니다. float16의 가장 큰 수는 65504이므로 $-10^9$는 float16으로 나타낼 수 없습니다.

# %%
scores16 = (x[1] @ x[1].T / d ** 0.5).half()                          # (T, T) float16 scores
try:
    scores16.masked_fill(~pad_mask[1], -1e9)
except RuntimeError as err:
    print("float16 masked_fill(-1e9) 오류:", err)
print("-1e9를 float16으로 바꾸면:", torch.tensor(-1e9).half().item())
print("float16 최솟값:", torch.finfo(torch.float16).min, " 그 값에 점수 -20을 더하면:",
      (torch.tensor(torch.finfo(torch.float16).min).half() + torch.tensor(-20.0).half()).item())
min32 = torch.tensor(torch.finfo(torch.float32).min)                 # float32 tensor, not a Python float
print("float32 최솟값 마스크 두 개를 더하면:", (min32 + min32).item(), " bfloat16으로 바꾸면:", min32.bfloat16().item())
additive16 = additive_mask(both_sides[1], dtype=torch.float16, fill=-1e9)      # -1e9 already became -inf
nan_rows16 = int(torch.isnan(torch.softmax(scores16.float() + additive16.float(), -1)).any(-1).sum())
print("float16으로 만든 -1e9 더하는 마스크 + softmax: NaN 행", nan_rows16, "개")
assert torch.tensor(-1e9).half().item() == float("-inf")
assert torch.isinf(torch.tensor(torch.finfo(torch.float16).min).half() + torch.tensor(-20.0).half())
assert (min32 + min32).item() == min32.bfloat16().item() == float("-inf") and nan_rows16 == T - lengths[1]

# %% slideshow={"slide_type": "subslide"}
# How negative must a score be before finfo.min + score overflows? Scan float16 scores 0 .. -40.
min16 = torch.tensor(torch.finfo(torch.float16).min, dtype=torch.float16)
neg_scores = -torch.arange(0, 40, 2 ** -7).half()                     # (5120,) float16 scores, step 1/128
to_inf16 = torch.isinf(min16 + neg_scores)                             # (5120,)
threshold16 = neg_scores[to_inf16].max().item()
threshold32 = -(2.0 ** 103)                                            # half a float32 step at finfo.min
print(f"float16: finfo.min + 점수 = -inf가 되는 점수: {threshold16:g} 이하 (-16보다 크면 finfo.min 그대로)")
print(f"float32: 같은 일이 일어나려면 점수가 {threshold32:.1e} 이하여야 합니다")
assert threshold16 == -16 and not to_inf16[neg_scores > -16].any()
assert torch.isinf(min32 + torch.tensor(threshold32)) and not torch.isinf(min32 + torch.tensor(-1e30))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 세 가지 함정이 보입니다. float16 텐서에 `masked_fill(..., -1e9)`는 아예 오류를 내고, float32에서 만든 `-1e9` 마스크를 float16으로 바꾸면 `-inf`가 되어 NaN 문제로 되돌아갑니다. `torch.finfo(dtype).min`을 쓰면 표현은 되지만, 두 가지 경우에 넘쳐서(overflow) 역시 `-inf`가 됩니다. 하나는 패딩·인과 마스크를 각각 최솟값으로 만들어 더할 때로, float32에서도 일어납니다. 다른 하나는 최솟값에 음수 점수를 더할 때인데, float16에서 점수가 −16 이하일 때만 생깁니다(위 계산: 맨 끝의 float16 간격이 32라서 그 절반부터 넘칩니다). float32에서는 점수가 약 $-10^{31}$ 이하여야 하므로 실제로는 일어나지 않습니다. 어느 방식을 팀의 규칙으로 삼을지는 토론 질문 4에서 다룹니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: (토론 질문 4의 답) 가장 깔끔한 길은 불리언 마스크를 끝까지 들고 가다가 소프트맥스 직전에 `-inf`로 채우고, 전부 가려진 행은 0으로 처리하는 것입니다.
#
# 청중에게 "-1e9면 해결 아닌가요?"라는 질문이 꼭 나옵니다. 답은 두 가지입니다: (1) 전부 가려진 행은 NaN 대신 [PAD]를 포함한 모든 밸류의 평균이 나온다, (2) 혼합 정밀도(float16)에서는 -1e9가 -inf로 바뀌거나 masked_fill이 실패한다. bfloat16은 범위가 float32와 거의 같아서 (2)는 덜하지만 (1)은 그대로입니다. 다만 `torch.finfo(torch.float32).min`을 bfloat16으로 바꾸면 bfloat16의 최댓값을 넘어 반올림되어 `-inf`가 됩니다(위 셀). Hugging Face 코드에서 이 함정이 나타나는 모습입니다.

# %% [markdown]
# ## 5. 불리언 마스크, 더하는 마스크, 그리고 반대 약속
#
# 마스크를 넘기는 방법은 두 가지입니다.
#
# - **불리언 마스크(boolean mask)**: 볼 수 있는 칸 True. 소프트맥스 직전에 False 칸을 $-\infty$로 채웁니다.
# - **더하는 마스크(additive mask)**: float 행렬 $A$ (볼 칸 0, 가릴 칸 $-\infty$)를 점수에 더합니다: $\mathrm{softmax}(s + A)$. 위치별 편향(bias)도 같은 자리에 더할 수 있어 편리합니다.
#
# 두 방법은 같은 결과를 냅니다. `F.scaled_dot_product_attention`의 불리언 약속은 우리와 같습니다.

# %%
q_, k_, v_ = x[:, None], x[:, None], x[:, None]                     # (B, 1, T, d): one head
ours, _ = masked_attention(q_, k_, v_, both_mask[:, None])
by_bool = F.scaled_dot_product_attention(q_, k_, v_, attn_mask=both_mask[:, None])
by_add = F.scaled_dot_product_attention(q_, k_, v_, attn_mask=additive_mask(both_mask[:, None]))
assert (ours - by_bool).abs().max() < 1e-6 and (ours - by_add).abs().max() < 1e-6
print("우리 구현 vs SDPA(불리언), SDPA(더하는 마스크): 최대 차이 < 1e-6 (float32 반올림 수준)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 그런데 `torch.nn.MultiheadAttention`의 불리언 `attn_mask`와 `key_padding_mask`는 **True = 가림**으로 반대입니다. 우리 마스크를 그대로 넘기면 볼 칸과 가릴 칸이 뒤바뀝니다. 같은 가중치를 복사한 우리 `MaskedMultiHeadAttention`과 비교합니다.

# %%
seed_everything(7)
t_mha = torch.nn.MultiheadAttention(d, 2, batch_first=True).eval()
o_mha = copy_from_torch(MaskedMultiHeadAttention(d, 2), t_mha).eval()
tri = causal_mask(T)                                                        # (T, T): True = may attend
with torch.no_grad():
    want, _ = o_mha(x, mask=both_mask)
    straight, _ = t_mha(x, x, x, attn_mask=tri, key_padding_mask=pad_keys)  # our masks passed as they are
    fixed, _ = t_mha(x, x, x, attn_mask=~tri, key_padding_mask=~pad_keys)
print("그대로 넘김: NaN", count_nan(straight), "개, NaN 행(문장별)", torch.isnan(straight).any(-1).sum(-1).tolist(),
      ", NaN이 아닌 칸의 최대 차이", round((straight - want).nan_to_num().abs().max().item(), 1))
assert (fixed - want).abs().max() < 1e-6
print("~mask로 넘김: 최대 차이 < 1e-6 (float32 반올림 수준)")
assert torch.isnan(straight).any(-1).sum(-1).tolist() == [7, 1, 1]
assert (straight - want).nan_to_num().abs().max() > 0.1

# %% [markdown] slideshow={"slide_type": "subslide"}
# 우리 인과 마스크를 그대로 넘기면 torch는 쿼리 $i$에게 **미래 키만** 보여 줍니다. 마지막 행은 볼 미래가 없으니 전부 가려져 NaN이 됩니다. 패딩 마스크도 뒤집혀 실제 토큰이 가려지고 `[PAD]`만 보입니다. 패딩이 없는 첫 문장은 모든 키가 가려져 일곱 행 전부가 NaN입니다 (NaN 행: 7 + 1 + 1 = 9개). 고치는 방법은 `~mask` 한 글자입니다. 더하는 마스크(0 / $-\infty$)는 두 약속 어디에서나 같은 뜻이라 헷갈릴 일이 없습니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "True가 무슨 뜻인가"는 라이브러리마다 다릅니다. PyTorch 안에서도 `F.scaled_dot_product_attention`(True = 참여)과 `nn.MultiheadAttention`(True = 가림)이 반대입니다. 코드 리뷰에서 마스크 변수 이름을 `keep`/`allowed`처럼 뜻이 드러나게 짓자는 제안을 해 보세요.

# %% [markdown]
# ## 6. 크로스 어텐션의 마스크
#
# 번역 모델의 크로스 어텐션에서 쿼리는 디코더의 토큰(영어 문장), 키와 밸류는 인코더(encoder)의 토큰(한국어 문장)입니다. 두 시퀀스(sequence)의 길이가 다르므로 마스크는 `(B, T_q, T_k)`이고, 가려야 하는 것은 **키 쪽(인코더) 패딩**뿐입니다. 번역 중 디코더는 원문 전체를 봐도 되므로 인과 마스크도 필요 없습니다.

# %%
src_tokens, src_len = pad_batch(["나는 학생 이다", "고양이가 매트 위에 앉았다"])
tgt_tokens, tgt_len = pad_batch(["I am a student", "The cat sat on the mat"])
T_k, T_q = len(src_tokens[0]), len(tgt_tokens[0])
cross_mask = attention_mask(src_len, T_k, t_q=T_q)             # (B, T_q, T_k): encoder padding only
print("T_q =", T_q, " T_k =", T_k, " 마스크 모양:", tuple(cross_mask.shape))

seed_everything(8)
enc = torch.randn(2, T_k, d)                                   # (B, T_k, d): encoder outputs
dec = torch.randn(2, T_q, d)                                   # (B, T_q, d): decoder states
cross = MaskedMultiHeadAttention(d, 2)
y, w_cross = cross(dec, enc, mask=cross_mask)                  # (B, T_q, d), (B, h, T_q, T_k)
assert w_cross[0, :, :, 3].abs().max() == 0 and count_nan(y) == 0

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
for b in range(2):
    attention_heatmap(w_cross[b].mean(0).detach(), tgt_tokens[b], src_tokens[b], ax=axes[b], vmax=1.0,
                      colorbar=False, title=f"크로스 어텐션 가중치 (헤드 평균): 문장 {b + 1}")
    axes[b].set_xlabel("키: 인코더 토큰")
    axes[b].set_ylabel("쿼리: 디코더 토큰")
fig.tight_layout()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 첫 문장의 디코더 쪽 `[PAD]` 두 행은 가리지 않았습니다. 그 행들도 실제 인코더 토큰을 보고 멀쩡한 출력을 만듭니다. 그래도 괜찮은 이유는 손실이 디코더의 패딩 위치를 **빼고** 계산되기 때문입니다. 크로스 어텐션에서 각 쿼리 행은 서로 섞이지 않으므로, 패딩 쿼리의 출력은 실제 위치 어디에도 흘러가지 않습니다. 숫자로 확인합니다: 디코더의 패딩 위치 입력을 쓰레기 값으로 바꿔도 손실과 기울기가 그대로입니다.

# %%
target = torch.randn(2, T_q, d)                                # (B, T_q, d): regression targets
tgt_real = padding_mask(tgt_len, T_q)                          # (B, T_q): loss only on real targets

def cross_loss(dec_in):
    """Loss over real decoder positions; returns (loss, gradient of the output projection)."""
    cross.zero_grad()
    out, _ = cross(dec_in, enc, mask=cross_mask)
    loss = (out - target).pow(2).mean(-1)[tgt_real].mean()
    loss.backward()
    return loss.detach(), cross.out_proj.weight.grad.clone()

garbage = dec.clone()
garbage[~tgt_real] = torch.randn(int((~tgt_real).sum()), d) * 100
loss_a, grad_a = cross_loss(dec)
loss_b, grad_b = cross_loss(garbage)
print(f"손실: 원래 {loss_a.item():.4f}, 패딩 쿼리를 바꾼 뒤 {loss_b.item():.4f}")
print("기울기 최대 차이:", (grad_a - grad_b).abs().max().item())
torch.testing.assert_close(loss_a, loss_b)
torch.testing.assert_close(grad_a, grad_b)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 반대로 쿼리 쪽 패딩까지 가리면(행 전체 False) `-inf` 방식에서는 그 행이 NaN이 되고, 손실을 `0`을 곱하는 방식으로 가리면 $0 \times \text{NaN}$ 때문에 손실이 NaN입니다. 쿼리 행을 가려서 얻는 것은 없고 위험만 생깁니다.

# %%
over_mask = cross_mask & tgt_real[:, :, None]                          # also close the decoder pad rows
out_nan, _ = naive_masked_attention(dec, enc, enc, over_mask)
per_pos = (out_nan - target).pow(2).mean(-1)                           # (B, T_q)
masked_loss = (per_pos * tgt_real).sum() / tgt_real.sum()              # zero out the pad positions
print("쿼리까지 가린 마스크: NaN 행", int(torch.isnan(out_nan).any(-1).sum()), "개, 0을 곱해 가린 손실 =", masked_loss.item())
assert torch.isnan(masked_loss) and fully_masked_rows(over_mask).sum() == 2

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 원칙은 "키는 가리고, 쿼리는 손실에서 뺀다"입니다. 셀프 어텐션에서도 같습니다: 패딩 쿼리 행의 출력은 다음 층에서 키·밸류로 쓰이지만 거기서 다시 키 패딩 마스크로 가려지므로 실제 토큰에 닿지 않습니다. 1절 셀은 이것을 한 층에서 확인했고, 두 층의 경우는 토론 질문 1입니다. 디코더의 셀프 어텐션은 인과 + 키 패딩, 크로스 어텐션은 인코더 키 패딩만 씁니다.

# %% [markdown]
# ## 7. 실전: 디코더 전용 모델의 배치 생성과 왼쪽 패딩
#
# GPT 같은 디코더 전용(decoder-only) 모델로 프롬프트 여러 개를 한 배치에서 이어 쓸 때, 다음 토큰은 각 프롬프트의 **마지막 위치**에서 나온 출력으로 예측합니다. 그래서 생성할 때는 패딩을 **왼쪽**에 붙입니다(left padding). 그러면 세 가지를 함께 맞춰야 합니다.
#
# - **마스크**: 키 패딩 + 인과. 실제 토큰이 뒤쪽 $L_b$개이므로 키 패딩 마스크는 $[\,j \ge T - L_b\,]$입니다.
# - **위치 번호**: 실제 토큰의 위치가 0부터 시작하도록 패딩 수만큼 당깁니다: `position = cumsum(real) − 1` (패딩 자리는 0).
# - **전부 가려진 행**: 왼쪽 패딩의 쿼리 $i$는 $j \le i$인 키만 보는데, 그 키가 모두 패딩입니다. 4절의 함정이 여기서는 저절로 생깁니다.
#
# 임베딩 표와 위치 임베딩 표, 인과 셀프 어텐션 한 층으로 된 작은 모형으로 확인합니다. 기준은 프롬프트 하나를 패딩 없이 혼자 처리한 결과입니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(10)
prompts = [p.split() for p in ["어제 밤에 배가 고파서", "고양이가 앉았다", "나는 학생"]]
vocab = {w: i for i, w in enumerate(sorted({w for p in prompts for w in p}))}
pad_id = len(vocab)
emb, pos_emb = torch.randn(len(vocab) + 1, d), torch.randn(8, d)  # token table ([PAD] last), position table
lens = torch.tensor([len(p) for p in prompts])
T_gen = int(lens.max())


def last_position_state(ids, real, positions):  # (B, T) each -> (B, d): what predicts the next token
    h = emb[ids] + pos_emb[positions]  # (B, T, d)
    mask = real[:, None, :] & causal_mask(ids.shape[1])  # (B, T, T): key padding & causal
    out, _ = masked_attention(h, h, h, mask)  # a row with no key gives 0, not NaN
    return out[:, -1]


# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
left_ids = torch.tensor([[pad_id] * (T_gen - len(p)) + [vocab[w] for w in p] for p in prompts])
left_real = torch.arange(T_gen)[None, :] >= (T_gen - lens)[:, None]  # (B, T): real tokens are the last L_b

# %% slideshow={"slide_type": "subslide"}
alone = torch.cat([last_position_state(torch.tensor([[vocab[w] for w in p]]), torch.ones(1, len(p), dtype=torch.bool),
                                     torch.arange(len(p))[None]) for p in prompts])
left_pos = (left_real.cumsum(-1) - 1).clamp(min=0)  # (B, T): 0, 1, ... from the first real token
right_ids = torch.tensor([[vocab[w] for w in p] + [pad_id] * (T_gen - len(p)) for p in prompts])
plain_pos = torch.arange(T_gen).expand(len(prompts), -1)
cases = {"왼쪽 패딩 + 당긴 위치": last_position_state(left_ids, left_real, left_pos),
         "왼쪽 패딩 + 위치 0..T−1": last_position_state(left_ids, left_real, plain_pos),
         "오른쪽 패딩, 마지막 위치": last_position_state(right_ids, padding_mask(lens, T_gen), plain_pos)}
same = {name: [bool(x < 1e-6) for x in (state - alone).abs().amax(-1)] for name, state in cases.items()}
print("위치:\n", left_pos)
for name, flags in same.items():
    print(f"{name:16s}: 프롬프트별로 혼자 처리한 결과와 같은가 (차이 < 1e-6) {flags}")
assert same == {"왼쪽 패딩 + 당긴 위치": [True] * 3, "왼쪽 패딩 + 위치 0..T−1": [True, False, False],
                "오른쪽 패딩, 마지막 위치": [True, False, False]}

# %% [markdown] slideshow={"slide_type": "subslide"}
# 위치를 당기지 않으면 같은 프롬프트라도 패딩 수에 따라 위치 임베딩이 달라져 결과가 바뀝니다. 오른쪽 패딩에서는 짧은 프롬프트의 마지막 위치가 `[PAD]` 쿼리라서, 다음 토큰을 패딩의 출력으로 예측하게 됩니다. 실제 마지막 토큰의 위치를 골라 읽어도 문제가 남습니다: 새로 만든 토큰은 텐서 끝(패딩 뒤)에 붙으므로 실제 토큰 사이에 패딩이 끼고, 새 토큰의 위치 번호도 따로 고쳐야 합니다. 왼쪽 패딩이면 실제 토큰이 언제나 오른쪽 끝에 붙어 있어 새 토큰을 그냥 이어 붙이면 됩니다. Hugging Face `transformers`가 생성할 때 `padding_side="left"`를 권하는 이유입니다.
#
# 남은 것은 전부 가려진 행입니다. 왼쪽 패딩의 마스크에서 그런 행을 세고, 4절의 흔한 방식(`-inf` + `torch.softmax`)에 넣어 봅니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
left_mask = left_real[:, None, :] & causal_mask(T_gen)  # (B, T, T): the mask of exercise 09-1
h_left = emb[left_ids] + pos_emb[left_pos]  # (B, T, d)
_, w_left = naive_masked_attention(h_left, h_left, h_left, left_mask)
nan_rows = int(torch.isnan(w_left).any(-1).sum())
assert torch.equal(fully_masked_rows(left_mask).sum(-1), T_gen - lens) and nan_rows == int((T_gen - lens).sum())

# %% slideshow={"slide_type": "subslide"}
has_nan_rows = torch.isnan(w_left).any(-1).any(-1).tolist()  # per prompt; the count itself is 09-1's question
print(f"왼쪽 패딩 마스크, -inf + torch.softmax: 프롬프트별로 NaN 행이 있는가 {has_nan_rows}")
assert nan_rows > 0 and has_nan_rows == (lens < T_gen).tolist()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 패딩이 있는 프롬프트마다 NaN 행이 생깁니다(마스크를 만드는 코드와, 그런 행이 몇 개 생기는지는 연습문제 09-1에서 직접 구합니다). 한 층에서는 패딩 행에만 있지만, 4절에서 본 것처럼 다음 층에서 $0 \times \text{NaN}$으로 실제 토큰까지 번집니다. 그래서 배치 생성 코드는 전부 가려진 행을 0으로 처리하는 어텐션(이 과정의 `masked_attention`, 고정된 torch의 SDPA)을 쓰거나, 패딩 쿼리가 자기 자신은 보게 하는 식으로 마스크를 고칩니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "생성은 왼쪽 패딩, 학습은 오른쪽 패딩이 흔하다"를 한 문장으로 남기세요. 확인할 세 가지는 마스크, 위치 번호, 전부 가려진 행입니다. 마스크를 만드는 코드는 숨겨 두었으니 연습문제 09-1에서 청중이 직접 만들게 하세요.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("09-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **09-1.** 7절처럼 **왼쪽**에 패딩한 배치의 디코더 마스크 `(B, T, T)`(키 패딩 + 인과, True = 볼 수 있음)를 돌려주는 `left_padded_mask(lengths, T)`를 반복문 없이 `torch.arange`와 비교 연산으로 만드세요(`check`가 반복문을 찾아냅니다). 먼저 예측해 보세요: 길이 `[3, 1, 4]`, `T = 4`이면 전부 False인 행이 몇 개일까요?

# %%
def left_padded_mask(lengths, T):
    raise NotImplementedError

check("09-1", left_padded_mask)

# %% jupyter={"source_hidden": true}
def left_padded_mask(lengths, T):
    pos = torch.arange(T)
    real = pos[None, :] >= (T - lengths)[:, None]  # (B, T): the real tokens are the last L_b
    return real[:, None, :] & (pos[None, :] <= pos[:, None])  # (B, T, T): real key and j <= i

check("09-1", left_padded_mask)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **09-2.** 점수 `scores`(`(..., T_q, T_k)`, float64)와 불리언 마스크 `mask`를 받아 가중치를 돌려주는 `my_safe_softmax`를 만드세요. 가려진 칸은 정확히 0, 전부 가려진 행은 **모두 0**이어야 합니다 (NaN도, 균등 분포도 아님). 위의 `safe_softmax`는 소프트맥스 함수에 맡겼으니, 여기서는 소프트맥스 함수(`torch.softmax`, `F.softmax`, `nn.Softmax`, `safe_softmax` 등)를 쓰지 말고 `torch.exp`와 합으로 직접 짜세요. 큰 점수에서 넘치지 않도록 볼 수 있는 칸의 최댓값을 빼는 것(01번)과, 전부 가려진 행에서 그 최댓값이 $-\infty$라는 점을 함께 처리해야 합니다. 가려진 칸의 점수가 아주 커도(예: 1000) NaN이 나오면 안 됩니다.

# %%
def my_safe_softmax(scores, mask):
    raise NotImplementedError

check("09-2", my_safe_softmax)

# %% jupyter={"source_hidden": true}
def my_safe_softmax(scores, mask):
    s = scores.masked_fill(~mask, float("-inf"))                  # hidden keys: e^(-inf) = 0 below
    m = s.amax(dim=-1, keepdim=True).nan_to_num(neginf=0.0)      # row max; a fully masked row: shift by 0
    e = torch.exp(s - m)                                         # (..., T_q, T_k), no overflow
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0)                 # a fully masked row: 0 / 1 = 0

check("09-2", my_safe_softmax)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **09-3.** 우리 약속(True = 볼 수 있음)의 `(T_q, T_k)` 마스크를 받아 `torch.nn.MultiheadAttention(..., attn_mask=...)`에 넘길 마스크로 바꾸는 `to_torch_mask`를 만드세요. 검사는 torch 모듈의 결과를 같은 가중치의 우리 `MultiHeadAttention`과 비교합니다. 불리언으로 답해도, 0/−∞ float로 답해도 됩니다.

# %%
def to_torch_mask(mask):
    raise NotImplementedError

check("09-3", to_torch_mask)

# %% jupyter={"source_hidden": true}
def to_torch_mask(mask):
    return ~mask   # torch's boolean attn_mask: True = NOT allowed

check("09-3", to_torch_mask)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 패딩 위치의 쿼리 행을 가리지 않으면 그 행은 "쓰레기" 출력을 만듭니다. 이 출력이 다음 층에서 실제 토큰에 절대 닿지 않는다는 주장을 셀프 어텐션 두 층에 대해 증명해 보세요. 어떤 조건(키 패딩 마스크, 위치별 연산만 있는 FFN)이 필요한가요?
# 2. 배치 안의 문장을 길이순으로 정렬해 묶으면(bucketing) 패딩이 줄어듭니다. 마스크가 있는데도 이렇게 하는 이유는 무엇일까요? 결과(출력)와 비용 중 무엇이 달라지나요?
# 3. `torch.nn.MultiheadAttention`의 동작이 `need_weights` 하나로 NaN과 0 사이를 오갔습니다. 라이브러리의 이런 동작에 기대는 코드를 테스트로 어떻게 지킬 수 있을까요?
# 4. `-1e9`, `finfo.min`, `-inf` + 0 처리 중 무엇을 팀의 규칙으로 삼겠습니까? float16/bfloat16 학습, 마스크 합치기, 디버깅 편의성을 기준으로 토론해 보세요.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번은 종이에 두 층을 그려 보면 금방 풀립니다: 쿼리 행은 서로 섞이지 않고, 섞이는 곳(키)은 가려져 있습니다. 3번은 4절에서 torch 동작을 assert로 고정해 둔 이유와 연결하세요: torch를 올렸을 때 이 노트북의 테스트가 먼저 알려 줍니다(SDPA도 예전 버전에서는 NaN이었습니다).

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 가리지 않은 패딩은 결과를 바꾼다 | 혼자 처리한 문장과 차이 > 0.1, 패딩 마스크로는 < 1e-6 |
# | 패딩 = 키 열, 인과 = 하삼각, 합치면 `&` | 02의 `padding_mask`, `causal_mask` = `torch.tril`, 미래를 바꿔도 과거 출력 불변 |
# | 전부 가려진 행: `-inf` + `torch.softmax` = NaN | 원문 방식 `(B,1,T,T)` 마스크에서 NaN 49개 (원문 바로잡기) |
# | NaN은 다음 층, 손실, 기울기로 번진다 | 0 × NaN = NaN: 실제 토큰 7개, 손실, 기울기 |
# | SDPA는 0, `nn.MultiheadAttention`은 옵션에 따라 NaN/0 | 고정된 torch 2.13에서 assert (예전 SDPA는 NaN) |
# | `-1e9`: 균등 가중치, float16에서 오류 또는 `-inf` | 가중치 1/7, 최솟값 두 개의 합 = `-inf` |
# | `nn.MultiheadAttention`의 불리언 마스크는 True = 가림 | `~mask`로 일치 |
# | 크로스 어텐션은 인코더 키 패딩만 가린다 | 패딩 쿼리를 바꿔도 손실·기울기 동일 |
# | 배치 생성: 왼쪽 패딩 + 당긴 위치 + 인과·키 패딩 | 혼자 처리한 결과와 같음; 패딩이 있는 프롬프트마다 전부 가려진 행이 생김 (몇 개인지는 09-1) |

# %% [markdown] slideshow={"slide_type": "subslide"}
# 마스크는 어떤 토큰을 볼지 정할 뿐, 토큰의 순서는 알려 주지 않습니다. 어텐션이 순서를 모른다는 사실(순열 등변성(permutation equivariance))과 그 해결책인 위치 인코딩(positional encoding)은 다음 주제입니다.
