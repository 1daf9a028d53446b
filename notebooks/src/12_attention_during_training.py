# %% [markdown]
# # 12. 학습하며 변하는 어텐션
#
# 정답 어텐션을 미리 아는 과제로 작은 모델을 학습시키며, 어텐션 맵이 언제 어떻게 "정답 키"로 모이는지 단계별로 따라갑니다.
#
# **학습 목표**
# - 정답 키가 정의되는 과제(키-밸류 찾기)를 만들고, "정답 키에 실린 가중치"를 식으로 정의한 뒤 코드로 구현한다(연습문제 12-2).
# - 초기화 직후의 어텐션 맵이 어떤 모습인지(정답 키 가중치는 균등값 $1/T$ 근처이지만 정확히 $1/T$은 아니고, 이 노트북의 모델에서는 행 하나하나도 균등이 아님) 계산으로 확인한다.
# - 한 층짜리 모델과 학습 루프를 직접 쓰고, 저장된 체크포인트(checkpoint)로 학습 단계별 어텐션 맵과 손실·정확도 곡선을 함께 읽는다.
# - 같은 학습의 처음 150단계를 직접 다시 돌려, 저장된 곡선과 겹치는지 확인한다.
#
# **선수 지식**: 03번(쿼리·키·밸류와 투영), 07번(멀티 헤드 어텐션과 작은 모델 학습). 05번의 엔트로피를 알면 좋습니다.
#
# **예상 시간**: 혼자 공부 45분 / 스터디 발표 25분
#
# 출처 목록(원문과 논문): [SOURCES.md](../SOURCES.md)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 시작 질문은 "학습된 모델의 어텐션 맵은 처음부터 그런 모양이었을까?"입니다. 이 노트북의 핵심 그림은 6절의 곡선(정답 키 가중치·손실·정확도)과 7절의 슬라이더입니다. 시간이 부족하면 5절의 원문 확인과 6절, 7절만 보여 주세요. 4절의 학습 루프는 코드를 짧게 훑고 넘어가도 됩니다.

# %% slideshow={"slide_type": "skip"}
import math

import matplotlib.pyplot as plt
import torch

from helpers import seed_everything, setup
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check

setup()

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.lessons.masks import MaskedMultiHeadAttention
from helpers.lessons.temperature import entropy
from helpers.widgets import Explorer

# %% [markdown]
# ## 1. 정답을 미리 아는 과제: 사전 찾기
#
# 학습된 모델의 어텐션 맵을 보고 "잘 배웠다"고 말하려면, 어디를 봐야 맞는지 먼저 알아야 합니다. 그래서 정답 어텐션이 정의되는 과제를 만듭니다.
#
# 한 시퀀스(sequence)는 위치 10개입니다. 앞의 6개는 `키:값` 쌍(키 글자는 A–J 가운데 서로 다른 6개, 값은 숫자 0–9), 뒤의 4개는 `키?` 형태의 질문입니다. 각 질문 위치에서 그 키에 적혀 있던 값을 맞혀야 합니다. 도서관에서 청구 기호로 책을 찾는 것과 같습니다. 질문의 키 글자가 쿼리(query), 쌍의 키 글자가 키(key), 쌍의 값이 밸류(value) 역할을 합니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
KEYS = "ABCDEFGHIJ"           # key symbols; values are the digits 0..9
N_KEYS, N_VALUES = 10, 10
QUERY_MARK = N_VALUES         # value id of a query position: "?"
N_PAIRS, N_QUERIES = 6, 4
SEQ_LEN = N_PAIRS + N_QUERIES  # 6 "key:value" pairs, then 4 queries "key?"


def make_lookup_batch(n, generator=None):
    """n sequences: keys/values (n, T) ids, target (n, Q) asked values, source (n, Q) their pair positions."""
    pair_keys = torch.rand(n, N_KEYS, generator=generator).argsort(dim=1)[:, :N_PAIRS]    # (n, P) distinct
    pair_values = torch.randint(0, N_VALUES, (n, N_PAIRS), generator=generator)           # (n, P)
    source = torch.rand(n, N_PAIRS, generator=generator).argsort(dim=1)[:, :N_QUERIES]    # (n, Q) distinct
    keys = torch.cat([pair_keys, pair_keys.gather(1, source)], dim=1)                     # (n, T)
    values = torch.cat([pair_values, torch.full((n, N_QUERIES), QUERY_MARK)], dim=1)      # (n, T)
    return {"keys": keys, "values": values, "target": pair_values.gather(1, source), "source": source}


def token_labels(batch, i=0):
    """Readable labels of sequence i: 'C:7' for a pair, 'C?' for a query."""
    keys, values = batch["keys"][i].tolist(), batch["values"][i].tolist()
    return [f"{KEYS[k]}?" if v == QUERY_MARK else f"{KEYS[k]}:{v}" for k, v in zip(keys, values)]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 아래에서 만드는 시퀀스 500개는 학습에 쓰지 않고 학습 중의 변화를 지켜보는 데만 쓰는 **관찰 묶음**(probe set)입니다. 이 노트북의 모든 곡선은 이 묶음에서 구한 값입니다.

# %%
probe = make_lookup_batch(500, torch.Generator().manual_seed(2024))  # fixed, never trained on
labels = token_labels(probe, 0)
print("시퀀스 0:", " ".join(labels))
print("맞힐 값:", probe["target"][0].tolist(), " 그 값이 있는 쌍 위치:", probe["source"][0].tolist())

# %% [markdown]
# 각 질문 $i$의 **정답 키** $C(i)$는 질문과 같은 키 글자를 가진 **쌍 위치**입니다. 질문 위치 자신도 같은 글자를 갖지만 값이 없으므로(`?`) 정답이 아닙니다. 이 정의를 코드로 적고, 데이터를 만들 때 기록한 쌍 위치와 같은지, 질문마다 정답 키가 정확히 하나인지 확인합니다.

# %% tags=["save"]
def correct_keys(keys):  # (n, T) -> (n, Q, T) boolean
    same = keys[:, N_PAIRS:, None] == keys[:, None, :]   # (n, Q, T): same key symbol
    return same & (torch.arange(SEQ_LEN) < N_PAIRS)      # only pair positions hold a value

# %% slideshow={"slide_type": "subslide"}
correct = correct_keys(probe["keys"])  # (500, Q, T)
print("시퀀스 0의 정답 키 위치:", correct[0].nonzero()[:, 1].tolist())
assert (correct.sum(dim=-1) == 1).all()
assert torch.equal(correct.float().argmax(dim=-1), probe["source"])
assert not correct[..., N_PAIRS:].any()  # query positions are never correct keys

# %% [markdown]
# ## 2. 정답 키에 실린 가중치
#
# 한 층짜리 어텐션의 가중치(weight) $\alpha_{ij}$는 질문 $i$가 위치 $j$를 얼마나 보는지입니다. 질문들의 정답 키 가중치를 평균한 값을 학습 내내 기록합니다.
#
# $$m = \frac{1}{|Q|} \sum_{i \in Q} \sum_{j \in C(i)} \alpha_{ij}, \qquad 0 \le m \le 1$$
#
# 비교 기준이 둘 있습니다. 모든 위치를 똑같이 보는 균등 가중치 $\alpha_{ij} = 1/T$이면 $m = |C(i)|/T = 1/10$이고, 정답 키만 보는 원-핫(one-hot) 가중치이면 $m = 1$입니다. 가중치가 얼마나 퍼져 있는지는 엔트로피(entropy) $H = -\sum_j \alpha_{ij} \log \alpha_{ij}$로 나타냅니다. 균등이면 $\log T = \log 10 \approx 2.30$, 원-핫이면 0입니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def query_weights(weights):  # (B, h, T, T) -> (B, Q, T): query rows, mean over heads
    return weights[:, :, N_PAIRS:, :].mean(dim=1)


def row_entropy(qw):  # (n, Q, T) -> mean entropy of the rows in nats
    return entropy(qw).mean().item()

# %% [markdown]
# 식 $m$을 코드로 옮기는 일은 연습문제 12-2로 남겨 둡니다. 아래 숨긴 셀의 `attention_mass(qw, correct)`가 그 답이고, 이 노트북의 곡선은 모두 그 함수로 구했습니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def attention_mass(qw, correct):  # (n, Q, T), (n, Q, T) bool -> float
    return (qw * correct).sum(dim=-1).mean().item()

# %%
uniform = torch.full(correct.shape, 1 / SEQ_LEN)  # (500, Q, T)
one_hot = correct.float()
print(f"균등: m = {attention_mass(uniform, correct):.3f}, H = {row_entropy(uniform):.3f}")
print(f"원-핫: m = {attention_mass(one_hot, correct):.3f}, H = {row_entropy(one_hot):.3f}")
assert math.isclose(attention_mass(uniform, correct), 0.1, abs_tol=1e-6)
assert math.isclose(row_entropy(uniform), math.log(10), rel_tol=1e-6) and attention_mass(one_hot, correct) == 1.0

# %% [markdown]
# ## 3. 모델: 한 층짜리 작은 트랜스포머
#
# 위치마다 키 글자 임베딩(embedding), 값 임베딩(`?` 포함), 위치 임베딩을 더해 벡터 $x_t$ ($C = 32$)를 만듭니다. 그 위에 헤드(head) 하나의 셀프 어텐션(self-attention) 층(07번의 `MultiHeadAttention`에 마스크 처리를 더한 09번의 `MaskedMultiHeadAttention`)과 잔차 연결(residual connection, 입력을 출력에 그대로 더하기)을 두고, 질문 위치의 벡터를 선형 출력층으로 값 10개의 로짓(logit)으로 바꿉니다.
#
# $$h_t = x_t + \mathrm{MHA}(x)_t, \qquad \text{로짓}_i = W^{\text{out}} h_i \quad (i \in Q)$$
#
# 과제를 풀려면 질문 위치의 쿼리가 같은 글자 쌍의 키와 맞아야 하고($W^Q$, $W^K$), 그 쌍의 값이 밸류로 실려 와야 합니다($W^V$, $W^O$).

# %% tags=["save"] slideshow={"slide_type": "subslide"}
class LookupModel(nn.Module):
    """Key + value + position embeddings -> one attention layer (residual) -> a linear readout."""

    def __init__(self, d_model=32, num_heads=1):
        super().__init__()
        self.key_emb = nn.Embedding(N_KEYS, d_model)
        self.value_emb = nn.Embedding(N_VALUES + 1, d_model)  # + the query mark "?"
        self.pos_emb = nn.Embedding(SEQ_LEN, d_model)
        self.attn = MaskedMultiHeadAttention(d_model, num_heads)
        self.readout = nn.Linear(d_model, N_VALUES)

    def forward(self, keys, values):  # (B, T), (B, T)
        x = self.key_emb(keys) + self.value_emb(values) + self.pos_emb.weight  # (B, T, C)
        out, weights = self.attn(x)                                            # (B, T, C), (B, h, T, T)
        h = x + out                                                            # residual
        return self.readout(h[:, N_PAIRS:]), weights                           # (B, Q, V), (B, h, T, T)

# %%
seed_everything(0)
model = LookupModel()
n_params = sum(p.numel() for p in model.parameters())
logits, weights = model(probe["keys"][:2], probe["values"][:2])
print(f"파라미터 {n_params:,}개, 로짓 {tuple(logits.shape)}, 가중치 {tuple(weights.shape)}")
assert logits.shape == (2, N_QUERIES, 10) and weights.shape == (2, 1, SEQ_LEN, SEQ_LEN)

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **원문 바로잡기**: [원문 004](../SOURCES.md)는 어텐션 맵이 학습되는 과정에서 "W_Q, W_K, W_V 행렬이" 의미 있는 관계를 포착하는 방향으로 학습된다고 설명합니다. 세 행렬 모두 학습되는 것은 맞지만, **어텐션 맵(가중치)을 바꾸는 것은 $W^Q$와 $W^K$(그리고 입력 $x$)뿐**입니다. 가중치는 $\mathrm{softmax}(qk^\top/\sqrt{d})$이고 그 층의 $W^V$는 이 식에 없습니다(층이 여럿이면 앞 층의 $W^V$는 다음 층의 입력 $x$를 바꾸므로, 다음 층의 맵에는 입력을 거쳐 영향을 줍니다). 한 층짜리인 이 모델에서 $W^V$와 $W^O$를 무작위 값으로 바꿔도 가중치는 한 자리도 변하지 않고 출력만 바뀝니다.

# %%
seed_everything(1)
with torch.no_grad():
    x = torch.randn(3, SEQ_LEN, 32)  # (B, T, C)
    out_before, w_before = model.attn(x)
    model.attn.v_proj.weight.normal_()
    model.attn.out_proj.weight.normal_()
    out_after, w_after = model.attn(x)
print(f"가중치: 비트까지 같음 {torch.equal(w_after, w_before)};  출력의 최대 변화 > 1: {(out_after - out_before).abs().max().item() > 1}")
assert torch.equal(w_after, w_before) and (out_after - out_before).abs().max() > 1

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "어텐션 맵이 바뀐다 = 무엇이 바뀐 것인가?"를 짚어 주세요. 맵은 $q$와 $k$만의 함수입니다. $W^V$는 "무엇을 가져오는가"를, $W^Q$·$W^K$는 "어디를 보는가"를 배웁니다. 연습문제 12-3이 같은 질문을 파라미터 이름으로 다시 묻습니다.

# %% [markdown]
# ## 4. 학습 루프
#
# 학습은 평범합니다. 매 단계 새 배치 64개를 만들고, 질문 위치의 교차 엔트로피(cross-entropy)를 Adam으로 줄입니다. 다른 점은 `eval_every` 단계마다 관찰 묶음에서 손실(loss), 정확도(accuracy), 정답 키 가중치, 엔트로피, 질문 위치(`?`)에 실린 가중치를 기록하고, `save_at`의 단계에서 파라미터를 복사해 둔다는 것뿐입니다. 스레드를 하나로 고정하면 한 컴퓨터에서는 덧셈 순서까지 같아져 몇 번을 돌려도 같은 수가 나옵니다.

# %% tags=["save"]
@torch.no_grad()
def evaluate_lookup(model, batch):
    """Loss, accuracy, mass on the correct keys, row entropy and weight on query positions."""
    logits, weights = model.eval()(batch["keys"], batch["values"])
    qw = query_weights(weights)  # (n, Q, T)
    return {"loss": F.cross_entropy(logits.flatten(0, 1), batch["target"].flatten()).item(),
            "accuracy": (logits.argmax(-1) == batch["target"]).double().mean().item(),
            "mass": attention_mass(qw, correct_keys(batch["keys"])),
            "entropy": row_entropy(qw),
            "on_queries": qw[..., N_PAIRS:].sum(dim=-1).mean().item()}

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def train_lookup(steps, seed=0, *, probe=None, eval_every=10, save_at=(), lr=1e-3, batch=64):
    """Adam on fresh batches, one thread; returns (model, {"loss", "eval", "checkpoints"})."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same float sums as scripts/train_dynamics.py
    torch.manual_seed(seed)
    model, gen = LookupModel(), torch.Generator().manual_seed(seed + 1000)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    log = {"loss": [], "eval": [], "checkpoints": {}}
    for step in range(steps + 1):
        if probe is not None and step % eval_every == 0:
            log["eval"].append({"step": step, **evaluate_lookup(model, probe)})
        if step in save_at:
            log["checkpoints"][step] = {k: v.clone() for k, v in model.state_dict().items()}
        if step == steps:
            break
        b = make_lookup_batch(batch, gen)
        logits = model.train()(b["keys"], b["values"])[0]                # (B, Q, V)
        loss = F.cross_entropy(logits.flatten(0, 1), b["target"].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        log["loss"].append(loss.item())
    torch.set_num_threads(threads)
    return model.eval(), log

# %% [markdown] slideshow={"slide_type": "subslide"}
# 긴 학습은 `scripts/train_dynamics.py`가 이 함수로 했습니다(시드 0–4, 학습률 $10^{-3}$, 배치 64, 1000단계, CPU 한 코어에서 1분 안쪽). 시드 0 모델의 파라미터는 단계 0, 25, 50, …, 1000에서 `data/dynamics_checkpoints.pt`에 저장되어 있고, 관찰 묶음에서 5단계마다 구한 곡선은 `data/dynamics_curves.json`에 있습니다. 파일에는 그 학습을 돌린 환경(PyTorch 버전, CPU 명령어 집합, 스레드 수)도 적혀 있습니다.

# %%
curves = load_json("dynamics_curves.json")
checkpoints = load_tensor_dict("dynamics_checkpoints.pt")  # {step: state_dict}
run0 = curves["runs"]["0"]
curve0 = run0["probe"]  # lists over step = 0, 5, ..., 1000
assert curves["probe_seed"] == 2024 and curves["probe_size"] == 500
print("저장된 단계:", sorted(checkpoints))
print("저장한 환경: PyTorch", curves["setup"]["torch"], "/ 스레드", curves["setup"]["threads"])

# %% [markdown]
# ## 5. 학습 전: 어텐션 맵은 균등한가
#
# 먼저 단계 0의 체크포인트가 시드 0으로 새로 만든 모델과 같은지, 관찰 묶음에서 구한 값이 저장된 값과 같은지 확인합니다. 같은 시드라도 컴퓨터에 따라 초기값의 마지막 자리가 조금 다를 수 있어서, 비교는 $10^{-5}$까지 허용합니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: (재현성) 같은 시드라도 정규분포 난수를 만드는 코드가 CPU의 벡터 명령어(AVX-512, AVX2, 스칼라)에 따라 달라서, 임베딩 초기값의 마지막 자리가 다를 수 있습니다. 한 컴퓨터에서 세 설정을 흉내 내어 구한 최대 차이는 $1.3 \times 10^{-6}$이었고, 그래서 비교를 $10^{-5}$까지 허용합니다.

# %%
torch.manual_seed(0)
fresh = LookupModel()
assert all(torch.allclose(v, checkpoints[0][k], rtol=0, atol=1e-5) for k, v in fresh.state_dict().items())
init = evaluate_lookup(fresh, probe)
print({k: round(v, 2) for k, v in init.items()}, f" 정답 키 가중치를 셋째 자리까지: {init['mass']:.3f}")
assert all(math.isclose(init[k], curve0[k][0], abs_tol=1e-4) for k in ("loss", "mass", "accuracy"))
assert abs(init["mass"] - 0.1) < 0.01 and abs(init["accuracy"] - 0.1) < 0.02 and init["loss"] > math.log(10)

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정답 키 가중치는 0.097로 균등값 0.1과 거의 같고, 정확도도 우연 수준(0.1)입니다. 손실 2.90은 값 10개를 똑같이 찍을 때의 $\ln 10 \approx 2.30$보다도 큽니다. 그렇다면 맵 자체도 균등할까요? 행마다 가장 큰 가중치와 엔트로피를 봅니다.

# %%
with torch.no_grad():
    qw0 = query_weights(fresh(probe["keys"], probe["values"])[1])  # (500, Q, T)
row_max = qw0.max(dim=-1).values.mean().item()
print(f"행 최대 가중치의 평균 {row_max:.2f} (균등이면 0.1), 엔트로피 {row_entropy(qw0):.2f} (균등이면 {math.log(10):.2f})")
assert 0.2 < row_max < 0.3 and row_entropy(qw0) < 0.9 * math.log(10)   # skewed: entropy under 90% of its maximum

# %% [markdown]
# 균등하지 않습니다. 행마다 가장 큰 가중치가 평균 0.26으로 균등값 0.1의 2.6배입니다. 다만 그 "쏠림"이 정답 키와 무관하게 무작위라서, 500개 시퀀스에 걸쳐 평균하면 정답 키 가중치가 $1/T$ 가까이(0.097) 됩니다. $1/T$에 가까운 것은 **평균**이지 맵 하나하나가 아닙니다.
#
# ### 원문 확인: "학습 초기의 맵은 거의 균일하다"
#
# [원문 004](../SOURCES.md)는 네 단어 문장의 학습 초기(랜덤 가중치) 맵을 모든 값이 0.24–0.26인 "거의 균일 분포"로 보여 줍니다. 원문에는 이 표를 만든 계산이 없으니, 어떤 초기화에서 이런 표가 나오는지 직접 확인합니다. 먼저 이 노트북 모델의 초기 파라미터로 네 위치짜리 입력 500개를 넣어 봅니다.

# %% slideshow={"slide_type": "subslide"}
with torch.no_grad():
    x4 = fresh.key_emb(probe["keys"][:, :4]) + fresh.value_emb(probe["values"][:, :4]) + fresh.pos_emb.weight[:4]  # (500, 4, C)
    _, w4 = fresh.attn(x4)  # (500, 1, 4, 4)
    scores4 = fresh.attn.q_proj(x4) @ fresh.attn.k_proj(x4).transpose(-2, -1) / math.sqrt(32)  # (500, 4, 4)


def near_uniform_share(w):  # share of rows with every weight within 0.24-0.26
    return ((w - 0.25).abs().amax(dim=-1) <= 0.01).double().mean().item()


def entropy_ratio(w):  # mean row entropy / its maximum log T: 1 = uniform
    return row_entropy(w) / math.log(w.shape[-1])


print(f"네 위치: 행 최대 가중치 평균 {w4.max(dim=-1).values.mean().item():.2f}, "
      f"0.24–0.26 안의 행 {near_uniform_share(w4):.0%}, 엔트로피/최대 {entropy_ratio(w4):.2f}, "
      f"점수 표준편차 {scores4.std().item():.1f}")
assert 0.45 < w4.max(dim=-1).values.mean() < 0.6 and near_uniform_share(w4) == 0.0 and entropy_ratio(w4) < 0.9
assert 0.8 < scores4.std().item() < 1.3

# %% [markdown] slideshow={"slide_type": "subslide"}
# 행 최대 가중치가 평균 0.51(균등 0.25의 두 배)이고, 모든 값이 0.24–0.26 안에 드는 행은 하나도 없습니다. 이 모델(임베딩 세 개를 더한 입력, PyTorch 기본 초기화)에서는 점수 $q \cdot k/\sqrt{d}$의 표준편차가 약 1이라 가중치가 $e^{\pm 1}$배 정도씩 차이 나기 때문입니다. 같은 점수를 줄여 보면, 원문의 표처럼 거의 모든 행이 0.24–0.26 안에 들려면 점수의 표준편차가 얼마나 작아야 할까요?

# %%
shares = {}
for target_std in (0.3, 0.1, 0.02):
    w_small = torch.softmax(scores4 * (target_std / scores4.std()), dim=-1)  # same scores, shrunk
    shares[target_std] = near_uniform_share(w_small)
    print(f"점수 표준편차 {target_std}: 0.24–0.26 안의 행 {shares[target_std]:.0%}")
assert shares[0.3] < 0.05 and shares[0.02] > 0.9

# %% [markdown]
# 표준편차가 0.02 정도는 되어야 합니다. 실제 트랜스포머의 초기화는 어떨까요? BERT([Devlin 등 2019](../SOURCES.md))식 초기화(가중치 $\mathcal{N}(0, 0.02^2)$, 층 정규화(layer normalization)를 거친 입력)에서 점수의 표준편차는 대략 $0.02^2 \cdot d_{\text{model}}$입니다(각 $q_i$의 분산이 $d_{\text{model}} \cdot 0.02^2$이고, $\sqrt{d_{\text{head}}}$로 나누면 헤드 차원은 약분됩니다). BERT-base 크기($d_{\text{model}} = 768$, 헤드 12개)를 직접 만들어 봅니다.

# %% slideshow={"slide_type": "subslide"}
def bert_style_scores(d_model, n_heads, t=4, n=500, std=0.02, seed=0):
    """Scores q·k/√d_head of a freshly initialised layer: LayerNorm'd input, W ~ N(0, std²)."""
    g = torch.Generator().manual_seed(seed)
    x = F.layer_norm(torch.randn(n, t, d_model, generator=g), (d_model,))  # (n, t, d)
    w_q, w_k = (std * torch.randn(d_model, d_model, generator=g) for _ in range(2))
    d_head = d_model // n_heads
    q = (x @ w_q.T).view(n, t, n_heads, d_head).transpose(1, 2)  # (n, h, t, d_head)
    k = (x @ w_k.T).view(n, t, n_heads, d_head).transpose(1, 2)
    return q @ k.transpose(-2, -1) / math.sqrt(d_head)  # (n, h, t, t)


for d_model, n_heads in ((768, 12), (32, 1)):
    s = bert_style_scores(d_model, n_heads)
    print(f"d_model={d_model}: 점수 표준편차 {s.std().item():.2f} (공식 {0.02 ** 2 * d_model:.2f}), "
          f"0.24–0.26 안의 행 {near_uniform_share(s.softmax(-1)):.0%}, 엔트로피/최대 {entropy_ratio(s.softmax(-1)):.2f}")
    if d_model == 768:
        assert 0.25 < s.std() < 0.35 and near_uniform_share(s.softmax(-1)) < 0.01
        assert 0.97 < entropy_ratio(s.softmax(-1)) < 0.99
    else:
        assert s.std() < 0.02 and near_uniform_share(s.softmax(-1)) > 0.9 and entropy_ratio(s.softmax(-1)) > 0.999

# %% [markdown] slideshow={"slide_type": "subslide"}
# BERT-base 크기에서는 초기 점수 표준편차가 0.31이라 0.24–0.26 안에 드는 행이 1%도 되지 않습니다. 그러나 "±0.01"은 임의로 정한 잣대입니다. 퍼짐을 재는 이 과정의 잣대인 엔트로피(2절, 05번)로 보면 학습된 맵에 비해 거의 균일합니다.
#
# > **원문 확인**: 원문의 표는 표준 초기화(가중치 표준편차 0.02)를 쓴 작은 모델($d_{\text{model}} = 32$)에서 실제로 나오는 모습이고, BERT-base 크기에서도 엔트로피로는 최대의 97% 이상이라 거의 균일합니다. 다만 이 노트북의 모델처럼 PyTorch 기본 초기화에 임베딩 세 개를 더하면 점수 표준편차가 약 1이라 처음부터 쏠려 있습니다(엔트로피가 최대의 90% 미만). 초기 맵이 균일한지는 초기화 규칙에 달려 있습니다. 정답 키 가중치의 초기값도 정확히 $1/T$이 아닙니다. 쏠림이 정답과 무관하면 (쌍 위치 여섯 곳에 실린 가중치)/6 근처이고(아래 괄호 안, 차이 0.02 미만), 시드 0에서는 0.097 ≈ $1/T$이지만 다른 시드에서는 0.08–0.13입니다(10절의 시드 다섯 개, 아래 계산).

# %%
start = {seed: (run["probe"]["mass"][0], (1 - run["probe"]["on_queries"][0]) / N_PAIRS) for seed, run in curves["runs"].items()}
print("단계 0의 정답 키 가중치 (쌍 위치 가중치/6):", {seed: f"{m:.3f} ({pairs:.3f})" for seed, (m, pairs) in start.items()})
assert f"{start['0'][0]:.3f}" == "0.097" and all(abs(m - pairs) < 0.02 for m, pairs in start.values())
lo, hi = min(m for m, _ in start.values()), max(m for m, _ in start.values())
assert 0.08 < lo < 0.085 and 0.125 < hi < 0.13 and sum(abs(m - 1 / SEQ_LEN) > 0.005 for m, _ in start.values()) >= 3

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 05번(온도)과 연결하세요. 초기 점수의 크기가 초기 맵의 "온도"를 정합니다. 초기화 규칙을 바꾸면(예: $W^Q$를 0 근처로) 정말 균등한 맵에서 출발하게 할 수 있고, 그때만 정답 키 가중치가 정확히 $1/T$입니다. 쏠린 맵에서는 쏠림이 쌍 위치와 질문 위치에 어떻게 나뉘는지에 따라 시드마다 0.08–0.13으로 달라집니다.

# %% [markdown]
# ## 6. 학습 곡선: 언제 무엇이 바뀌나
#
# 저장된 곡선 세 개를 나란히 그립니다. 왼쪽은 정답 키 가중치와 질문 위치(`?`)에 실린 가중치, 가운데는 손실(세로축만 로그 눈금), 오른쪽은 정확도입니다. 모두 같은 관찰 묶음에서 5단계마다 구한 값이고, 가로축은 보통의(선형) 눈금입니다. 파란 띠는 정답 키 가중치가 0.25에서 0.75로 오르는 구간입니다.

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"} tags=["save"]
def first_step_at_or_above(steps, values, threshold):
    """The first step whose value is >= threshold, or None if it never gets there."""
    return next((s for s, v in zip(steps, values) if v >= threshold), None)


@torch.no_grad()
def checkpoint_maps(checkpoints, batch, i=0):
    """For each stored step, the query rows (Q, T) of sequence i's attention weights."""
    model, maps = LookupModel().eval(), {}
    for step in sorted(checkpoints):
        model.load_state_dict(checkpoints[step])
        maps[int(step)] = query_weights(model(batch["keys"][i:i + 1], batch["values"][i:i + 1])[1])[0]
    return maps


def map_panel(ax, labels, correct):
    """A (Q, T) heatmap with the correct keys boxed in red; returns set_map(qw, title) that redraws it in place."""
    q, t = correct.shape
    im = ax.imshow(torch.zeros(q, t).numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    cells = [[ax.text(j, i, "", ha="center", va="center", fontsize=8) for j in range(t)] for i in range(q)]
    for r, c in correct.nonzero().tolist():
        ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="tab:red", lw=2))
    ax.set_xticks(range(t), labels, rotation=45, ha="right")
    ax.set_yticks(range(q), labels[N_PAIRS:])
    ax.set_xlabel("키(key)")
    ax.set_ylabel("질문(쿼리)")

    def set_map(qw, title):
        w = qw.numpy()
        im.set_data(w)
        for i in range(q):
            for j in range(t):
                cells[i][j].set_text(f"{w[i, j]:.2f}")
                cells[i][j].set_color("white" if w[i, j] > 0.6 else "black")
        ax.set_title(title)
    return im, set_map


def checkpoint_explorer(maps, curve, labels, correct):
    """Slider over the stored steps: sequence i's map (left) and the probe-set curve with the step marked."""
    import ipywidgets as widgets

    fig, (ax_map, ax_curve) = plt.subplots(1, 2, figsize=(9.5, 3.4), dpi=72, gridspec_kw={"width_ratios": [1.4, 1]})
    _, set_map = map_panel(ax_map, labels, correct)
    ax_curve.plot(curve["step"], curve["mass"], color="tab:blue")
    ax_curve.axhline(1 / SEQ_LEN, color="gray", linestyle=":", label="균등 1/T")
    line = ax_curve.axvline(0, color="tab:red", linestyle="--")
    (dot,) = ax_curve.plot([0], [0], "o", color="tab:red")
    ax_curve.set(ylim=(0, 1), xlabel="학습 단계", ylabel="정답 키의 가중치")
    ax_curve.legend(loc="lower right")
    fig.tight_layout()

    def update(step):
        mass = attention_mass(maps[step][None], correct[None])
        at = curve["mass"][curve["step"].index(step)]
        set_map(maps[step], f"{step}단계: 이 시퀀스의 정답 키 가중치 {mass:.2f}")
        line.set_xdata([step, step])
        dot.set_data([step], [at])
        ax_curve.set_title(f"관찰 묶음 평균: {at:.2f}")
        return {"map": maps[step], "mass": mass, "curve_mass": at}

    slider = widgets.SelectionSlider(options=sorted(maps), value=min(maps), description="학습 단계")
    return Explorer(fig, update, {"step": slider})

# %%
steps = curve0["step"]
mass, loss, acc, on_q = curve0["mass"], curve0["loss"], curve0["accuracy"], curve0["on_queries"]
click = {th: first_step_at_or_above(steps, mass, th) for th in (0.25, 0.5, 0.75, 0.9)}
print(f"정답 키 가중치: 0단계 {mass[0]:.2f} → 1000단계 {mass[-1]:.2f};  처음 도달한 단계 {click}")
assert abs(mass[0] - 1 / SEQ_LEN) < 0.01 and mass[-1] > 0.9 and acc[-1] == 1.0

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def plot_curves(steps, mass, on_q, loss, acc, band):
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.3))
    axes[0].plot(steps, mass, label="정답 키")
    axes[0].plot(steps, on_q, label="질문 위치(?)", color="tab:orange")
    axes[0].axhline(1 / SEQ_LEN, color="gray", linestyle=":", label="균등 1/T")
    axes[0].set_ylabel("가중치 (관찰 묶음 평균)")
    axes[0].legend(loc="center right")
    axes[1].plot(steps, loss, color="tab:red")
    axes[1].axhline(math.log(10), color="gray", linestyle=":", label="우연 수준 ln 10")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("손실 (로그 눈금)")
    axes[1].legend(loc="center right")   # clear of the curve's start and of the ln 10 line
    axes[2].plot(steps, acc, color="tab:green")
    axes[2].set_ylabel("정확도")
    for ax, title in zip(axes, ["어텐션", "손실(교차 엔트로피)", "정확도"]):
        ax.set_xlabel("학습 단계")
        ax.axvspan(*band, color="tab:blue", alpha=0.15)
        ax.set_title(title)
    fig.tight_layout()
    plt.show()

# %% slideshow={"slide_type": "subslide"}
plot_curves(steps, mass, on_q, loss, acc, band=(click[0.25], click[0.75]))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 급변은 처음 150단계 안에서 일어나고, 1000단계까지의 나머지는 긴 꼬리입니다. 그림에서 읽은 것을 단계별 표로 정리합니다.

# %%
below_chance = first_step_at_or_above(steps, [-v for v in loss], -math.log(10))  # loss first under ln 10
at = {s: i for i, s in enumerate(steps)}
drop_share = (loss[at[50]] - loss[at[150]]) / (loss[0] - loss[-1])
print(f"{'단계':>6} {'정답 키':>7} {'질문 위치':>7} {'손실':>8} {'정확도':>6}")
for s in (0, below_chance, click[0.25], click[0.75], 150, 1000):
    i = at[s]
    print(f"{s:>6} {mass[i]:>9.2f} {on_q[i]:>9.2f} {loss[i]:>10.4f} {acc[i]:>8.3f}")
print(f"50–150단계가 차지하는 손실 감소: {drop_share:.0%}")
assert (below_chance, click[0.25], click[0.75]) == (40, 55, 110) and 0.7 < drop_share < 0.8
assert on_q[0] > 0.4 > 0.15 > on_q[at[50]] and mass[at[40]] < 0.2
assert acc[at[150]] > 0.99 and loss[at[150]] > 100 * loss[-1] and mass[-1] - mass[at[150]] < 0.1

# %% [markdown] slideshow={"slide_type": "subslide"}
# | 구간 | 단계 | 정답 키 가중치 | 질문 위치(`?`) 가중치 | 손실 | 정확도 |
# |---|---|---|---|---|---|
# | 출발 | 0 | 0.10 | 0.41 | 2.90 | 0.10 |
# | 느린 출발: 손실이 $\ln 10 \approx 2.30$ 아래로 | 40 | 0.18 | 0.14 | 2.30 | 0.17 |
# | 급변 시작: 정답 키 0.25 | 55 | 0.25 | 0.10 | 2.15 | 0.24 |
# | 급변 끝: 정답 키 0.75 | 110 | 0.77 | 0.02 | 0.49 | 0.93 |
# | 긴 꼬리의 시작 | 150 | 0.91 | 0.01 | 0.049 | 0.999 |
# | 끝 | 1000 | 0.96 | 0.00 | 0.0003 | 1.000 |

# %% [markdown] slideshow={"slide_type": "subslide"}
# - **느린 출발**: 처음 40단계 동안 손실은 우연 수준($\ln 10$)보다 높고, 정답 키 가중치는 0.18까지만 오릅니다. 그사이 질문 위치에 실린 가중치가 0.41(질문이 10개 중 4개이므로 균등이면 0.4)에서 0.14로 먼저 떨어집니다. 이 실행(시드 0)은 "쌍 쪽을 본다"를 먼저 배웁니다(10절에서 보듯 모든 시드가 그렇지는 않습니다).
# - **급변**: 정답 키 가중치가 0.25에서 0.75로 오르는 데 55단계가 걸리고, 50–150단계의 100단계에 손실 감소의 75%가 몰려 있습니다. 정확도는 정답 키 가중치를 따라 오릅니다.
# - **긴 꼬리**: 150단계에 정확도는 이미 0.999이고, 그 뒤 손실은 100배 넘게 더 줄지만 정답 키 가중치는 0.91에서 0.96으로 조금만 오릅니다. 그동안 무엇이 바뀌는지는 토론 질문 2에서 다룹니다.
#
# 손실이 오래 평평하다가 갑자기 떨어지는 긴 정체(plateau)는 이 과제에서 **나타나지 않았습니다**. 정체라고 부를 만한 구간은 40단계 정도이고, 그 동안에도 손실은 조금씩 줄었습니다. [Olsson 등 2022](../SOURCES.md)는 자연어로 학습한 두 층 이상의 모델에서, 유도 헤드(induction head)가 생기는 짧은 구간에 문맥 내 학습(in-context learning) 능력이 갑자기 좋아지고 학습 손실 곡선에 작은 '혹'(bump)이 생기는 상전이(phase change)를 보고했습니다. 긴 정체 뒤에 손실이 급락하는 모습은 합성 과제에서 보고되었습니다(예: [Reddy 2024](../SOURCES.md)). (가로축을 로그 눈금으로 그리면 처음 50단계가 그림 폭의 절반 이상을 차지해 정체가 실제보다 길어 보입니다. 그래서 여기서는 선형 눈금을 씁니다.)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 청중에게 먼저 예측을 받으세요. "정답 키 가중치, 손실, 정확도 중 무엇이 먼저 움직일까?" 이 과제에서는 셋이 같은 구간(파란 띠)에서 함께 움직이고, 손실만 그 뒤로 오래 더 줄어듭니다. "정체 뒤의 급변"을 기대했다면 그것이 나타나지 않았다는 점도 결과입니다. 긴 꼬리(150단계 뒤)에서는 어디를 볼지는 정해졌고, 그 뒤에는 답에 대한 확신이 커집니다(토론 질문 2의 답). 긴 정체 뒤의 급락은 합성 과제에서 보고되어 있고(Reddy 2024), 자연어 모델에서 유도 헤드가 생길 때는 손실 곡선에 작은 혹이 생길 뿐입니다(Olsson 등 2022).

# %% [markdown]
# ## 7. 슬라이더로 학습 단계 넘겨 보기
#
# 관찰 묶음의 시퀀스 0 하나를 저장된 단계마다 모델에 넣어, 질문 4개의 가중치 행(4 × 10)을 그립니다. 빨간 테두리가 각 질문의 정답 키이고, 오른쪽 곡선의 빨간 점이 지금 단계입니다.

# %%
maps = checkpoint_maps(checkpoints, probe, 0)  # {step: (Q, T)}
correct0 = correct[0]                           # (Q, T)
print({step: round(attention_mass(m[None], correct0[None]), 2) for step, m in maps.items()})

# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
explorer = checkpoint_explorer(maps, curve0, labels, correct0)
explorer

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전: 같은 그리기 함수(`map_panel`)로 단계 0, 50, 100, 1000의 맵을 나란히 그립니다.

# %%
shown = (0, 50, 100, 1000)
fig, axes = plt.subplots(1, len(shown), figsize=(13, 3.2), sharey=True)
for ax, s in zip(axes, shown):
    _, set_map = map_panel(ax, labels, correct0)
    set_map(maps[s], f"{s}단계: 정답 키 {attention_mass(maps[s][None], correct0[None]):.2f}")
for ax in axes[1:]:
    ax.set_ylabel("")
fig.tight_layout()
plt.show()

# %% slideshow={"slide_type": "subslide"}
row_max0 = {s: (round(maps[s].max(-1).values.min().item(), 2), round(maps[s].max(-1).values.max().item(), 2)) for s in shown}
hits = {s: int((maps[s].argmax(dim=-1) == probe["source"][0]).sum()) for s in shown}
top50 = [labels[int(maps[50][r].argmax())] for r in range(N_QUERIES)]
print("행 최대 가중치 (가장 작은 행, 가장 큰 행):", row_max0)
print("정답 키가 가장 진한 행의 수:", hits, " 50단계에 각 질문이 가장 많이 보는 위치:", top50)
assert attention_mass(maps[0][None], correct0[None]) < 0.2 < 0.9 < attention_mass(maps[1000][None], correct0[None])
assert set(top50) == {"F:1", "I:9"} and hits[50] < 4 and hits[1000] == 4

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 시퀀스에서 0단계의 맵은 정답과 상관없이 흩어져 있습니다. 50단계에는 질문 위치(`?`)에 실린 가중치가 줄었고, 네 질문이 모두 같은 두 쌍(F:1, I:9)을 가장 많이 봅니다. 맵은 조금 날카로워졌는데 틀린 곳을 봅니다. 100단계에는 네 질문 중 세 개에서 정답 키가 가장 진하고, 1000단계에는 모든 행이 거의 원-핫입니다. 시퀀스 하나의 이야기가 관찰 묶음 전체에서도 맞는지, 행마다 가장 큰 가중치가 어디에 있는지 셉니다.

# %%
model_at = LookupModel().eval()
argmax_share, mean_row_max = {}, {}
for step in (0, 50, 100, 1000):
    model_at.load_state_dict(checkpoints[step])
    with torch.no_grad():
        qw_at = query_weights(model_at(probe["keys"], probe["values"])[1])  # (500, Q, T)
    top = qw_at.argmax(dim=-1)  # (500, Q)
    argmax_share[step] = ((top < N_PAIRS).double().mean().item(), (top == probe["source"]).double().mean().item())
    mean_row_max[step] = qw_at.max(dim=-1).values.mean().item()
    print(f"{step:>4}단계: 행 최대 가중치 평균 {mean_row_max[step]:.2f}, 최대 가중치가 쌍 위치에 {argmax_share[step][0]:.2f}, 정답 키에 {argmax_share[step][1]:.2f}")
assert argmax_share[50][0] > 0.95 and argmax_share[50][1] < 0.35 and argmax_share[1000][1] == 1.0
assert mean_row_max[50] > 1.8 * mean_row_max[0]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 50단계에 행 최대 가중치의 평균은 0.26에서 0.51로 두 배가 되었고, 그 최대 가중치는 99%가 쌍 위치에 있지만 정답 키에 있는 것은 29%뿐입니다(쌍 6개 중 아무거나 고르면 17%). 이 실행에서는 "쌍 쪽을 본다"가 "어느 쌍인지 안다"보다 먼저 왔습니다. 가중치가 한곳에 모였다고 해서 맞는 곳에 모인 것은 아닙니다.

# %% [markdown]
# ## 8. 마지막 체크포인트 다시 평가하기
#
# 저장된 곡선을 믿는 대신, 1000단계 파라미터를 불러와 학습에도 관찰에도 쓰지 않은 새 시퀀스 2000개로 정확도와 정답 키 가중치를 여기서 다시 구합니다. 스크립트가 같은 시퀀스로 구한 값과 비교합니다.

# %%
final = LookupModel()
final.load_state_dict(checkpoints[1000])
test = make_lookup_batch(curves["test_size"], torch.Generator().manual_seed(curves["test_seed"]))
final_eval = evaluate_lookup(final, test)
print({k: round(v, 3) for k, v in final_eval.items()})
assert final_eval["accuracy"] == 1.0 and final_eval["mass"] > 0.9
assert all(math.isclose(final_eval[k], run0["test"][k], abs_tol=1e-4) for k in run0["test"])

# %% [markdown]
# ## 9. 여기서 직접 학습하기
#
# 같은 시드, 같은 배치 순서로 처음 150단계를 이 자리에서 다시 돌립니다(몇 초). 무엇이 같게 나올까요?
#
# - **같은 컴퓨터, 같은 설정**: `train_lookup`은 스레드를 하나로 고정해 덧셈 순서까지 같게 하므로 손실이 같은 수로 나옵니다. 차이는 저장할 때 소수 여섯째 자리에서 반올림한 정도($10^{-6}$ 정도 이하)입니다.
# - **다른 컴퓨터**: 계산 경로가 달라 마지막 자리가 조금씩 다를 수 있습니다. 그래서 검사는 $10^{-3}$까지 허용하고 출력도 그 한계만 보여 줍니다.
# - **다른 시드나 배치 순서**: 차이가 이보다 훨씬 큽니다(10절).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: (재현성) PyTorch는 CPU의 벡터 명령어(AVX-512, AVX2, 스칼라)에 따라 다른 계산 경로를 씁니다. 한 컴퓨터에서 세 설정을 흉내 내어 150단계를 돌려 보니 손실과 정답 키 가중치의 차이는 세 설정 모두 $10^{-6}$ 아래였습니다(학습이 짧고 모델이 작아 반올림 차이가 거의 자라지 않음). 다른 종류의 CPU나 더 긴 학습에서는 더 벌어질 수 있어 검사는 $10^{-3}$까지 허용합니다.

# %% slideshow={"slide_type": "subslide"}
live_model, live = train_lookup(150, seed=0, probe=probe, eval_every=5, lr=curves["lr"], batch=curves["batch"])
live_mass = [e["mass"] for e in live["eval"]]
loss_diff = max(abs(a - b) for a, b in zip(live["loss"], run0["train_loss"][:150]))
mass_diff = max(abs(a - b) for a, b in zip(live_mass, mass))
print(f"150단계: 훈련 손실의 최대 차이 < 1e-3: {loss_diff < 1e-3},  정답 키 가중치의 최대 차이 < 1e-3: {mass_diff < 1e-3}")
print(f"정답 키 가중치 {live_mass[0]:.2f} → {live_mass[-1]:.2f}")
assert len(live_mass) == 31 and loss_diff < 1e-3 and mass_diff < 1e-3
assert live_mass[-1] > 0.9 > 0.2 > live_mass[0]

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 3.2))
ax.plot(steps[:61], mass[:61], color="lightgray", lw=6, label="저장된 곡선 (300단계까지)")
ax.plot([e["step"] for e in live["eval"]], live_mass, "o-", ms=3, color="tab:blue", label="직접 학습 (150단계)")
ax.set_xlabel("학습 단계")
ax.set_ylabel("정답 키의 가중치")
ax.set_title("직접 학습한 처음 150단계는 저장된 곡선과 겹친다")
ax.set_ylim(0, 1)
ax.legend(loc="lower right")
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 여기서 `seed=0`을 다른 값으로 바꿔 즉석에서 다시 돌려 보세요(몇 초). 곡선의 모양은 비슷하지만 급변이 오는 시점은 달라집니다. 다음 절이 시드 5개로 이를 정리합니다. 같은 시드로도 CPU가 다르면 마지막 자리가 달라진다는 점은 "재현성"을 토론할 좋은 재료입니다.

# %% [markdown]
# ## 10. 시드를 바꾸면
#
# 스크립트는 시드 0–4로 같은 학습을 다섯 번 했습니다. 정답 키 가중치가 0.25, 0.5, 0.75에 처음 도달한 단계와 마지막 값을 봅니다.

# %% slideshow={"slide_type": "subslide"}
table = {}
for seed, run in curves["runs"].items():
    p = run["probe"]
    table[seed] = [first_step_at_or_above(p["step"], p["mass"], th) for th in (0.25, 0.5, 0.75)]
    print(f"시드 {seed}: 0.25/0.5/0.75 도달 {table[seed]}, 0.25→0.75 {table[seed][2] - table[seed][0]}단계, "
          f"마지막 {p['mass'][-1]:.2f}, 정확도 {run['test']['accuracy']:.3f}")
widths = [t[2] - t[0] for t in table.values()]
halves = [t[1] for t in table.values()]
assert all(run["test"]["accuracy"] == 1.0 and run["probe"]["mass"][-1] > 0.95 for run in curves["runs"].values())
assert (min(halves), max(halves)) == (60, 100) and (min(widths), max(widths)) == (40, 55)

# %% slideshow={"slide_type": "subslide"}
lowest = {}
for seed, run in curves["runs"].items():
    p = run["probe"]
    i = min(range(len(p["mass"])), key=p["mass"].__getitem__)  # where the mass curve is lowest
    lowest[seed] = (p["step"][i], round(p["mass"][i], 3), round(p["on_queries"][i], 2))
print("곡선의 최저점 (단계, 정답 키 가중치, 질문 위치 가중치):", lowest)
dipped = [seed for seed, (_, m, _) in lowest.items() if m < 0.09]
assert dipped == ["1", "2", "3"] and all(10 <= lowest[s][0] <= 20 and lowest[s][2] > 0.6 for s in dipped)

# %% slideshow={"slide_type": "subslide"}
fig, ax = plt.subplots(figsize=(6.4, 3.2))
for seed, run in curves["runs"].items():
    ax.plot(run["probe"]["step"], run["probe"]["mass"], label=f"시드 {seed}")
ax.set_xlim(0, 300)
ax.set_xlabel("학습 단계 (300단계까지)")
ax.set_ylabel("정답 키의 가중치")
ax.set_title("시드 5개: 급변의 시점은 다르고 모양은 비슷하다")
ax.legend(loc="lower right", fontsize=8)
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정답 키 가중치가 0.5를 넘는 시점은 시드에 따라 60단계에서 100단계까지 흩어지지만, 0.25에서 0.75까지 걸리는 시간은 40–55단계로 비슷합니다. 다섯 번 모두 정확도 1.0, 정답 키 가중치 0.95 이상으로 끝납니다. 출발도 한결같지 않습니다. 시드 1, 2, 3에서는 10–20단계에서 정답 키 가중치가 가장 낮아지고, 균등값 0.1보다 한참 **아래**입니다(시드 1은 0.025). 그때 질문 위치(`?`)에 실린 가중치는 0.68–0.83입니다. 시드 0이 "쌍 쪽을 본다"를 먼저 배운 것과 반대로, 이 세 시드는 먼저 질문 위치 쪽으로 쏠렸다가 돌아옵니다. 학습 초기의 순서는 시드마다 다를 수 있습니다. 시드 다섯 개로 본 경향일 뿐, 분포를 말하기에는 적은 수입니다.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("12-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **12-1. 엔트로피 곡선 읽기.** 4절의 `train_lookup(eval_every=5)`은 `evaluate_lookup`으로 질문 행의 평균 엔트로피(2절의 $H$)도 5단계마다 기록했지만, 6절의 그림에는 없습니다. 정답 키 가중치는 0.1에서 0.96까지 오릅니다. 그동안 엔트로피는 줄기만 할까요? 먼저 예측한 뒤, `curve0["entropy"]`에서 엔트로피가 직전 기록(5단계 전)보다 **커진** 단계를 모두 리스트로 답하세요. 단계 번호는 `curve0["step"]`에 있습니다. 답을 찾으면 정답 키 가중치와 함께 그려 보고, 7절의 50단계 맵과 이어서 설명해 보세요.

# %%
entropy_curve = curve0["entropy"]  # mean row entropy (nats) of the probe set, at curve0["step"]
step_entropy_up = ...

check("12-1", step_entropy_up)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
entropy_curve = curve0["entropy"]
step_entropy_up = [s for s, h, h_before in zip(steps[1:], entropy_curve[1:], entropy_curve[:-1]) if h > h_before]

fig, ax = plt.subplots(figsize=(6.4, 3.0))
ax.plot(steps[:41], entropy_curve[:41], color="tab:purple", label="엔트로피 (nat)")
ax.plot(steps[:41], mass[:41], color="tab:blue", label="정답 키 가중치")
ax.plot(step_entropy_up, [entropy_curve[s // 5] for s in step_entropy_up], "o", color="tab:red", label="직전보다 커진 단계")
ax.set_xlabel("학습 단계 (200단계까지)")
ax.set_title("정답 키 가중치가 오르는 동안의 엔트로피")
ax.legend(loc="upper right", fontsize=8)
plt.show()

check("12-1", step_entropy_up)

# %% [markdown] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
# 풀이 노트: 엔트로피는 대체로 줄지만, 급변이 시작되는 55–65단계(정답 키 가중치 0.25 부근)에 잠시 **올라갑니다**(5단계의 상승은 아주 작습니다). 7절에서 50단계의 맵은 틀린 두 쌍(F:1, I:9)에 모여 있었습니다. 가중치가 틀린 곳에서 정답 키로 옮겨 가는 동안 여러 키에 나뉘므로, 그 사이에는 맵이 오히려 흐려집니다. 엔트로피만 보고 "맵이 흐려졌다 = 나빠졌다"고 읽으면 안 되는 이유입니다. 반대로 엔트로피가 너무 빨리 0 가까이 무너지는 엔트로피 붕괴(entropy collapse)는 큰 모델에서 학습 불안정의 신호로 보고되어 있습니다([Zhai 등 2023](../SOURCES.md)).

# %% [markdown] slideshow={"slide_type": "subslide"}
# **12-2.** 질문 행의 가중치 `qw` (n, Q, T)와 정답 표시 `correct` (n, Q, T)를 받아 정답 키 가중치 $m$(2절의 식, 숫자 하나)을 돌려주는 `my_mass`를 완성하세요. 숨긴 셀의 `attention_mass`는 부르지 말고 식에서 직접 쓰세요. 균등 가중치에서 $1/T$가 나와야 합니다.

# %%
def my_mass(qw, correct):
    raise NotImplementedError

check("12-2", my_mass)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def my_mass(qw, correct):
    return (qw * correct).sum(dim=-1).mean().item()

check("12-2", my_mass)

# %% [markdown]
# **12-3.** 이 모델의 파라미터 묶음 가운데, 값을 바꾸면 (학습 없이, 지금 이 순간의 forward에서) **어텐션 가중치가 바뀔 수 있는** 것들의 집합(set)을 적으세요. 3절의 `forward`를 따라가며 예측한 뒤 확인하세요.

# %%
param_groups = sorted({name.rsplit(".", 1)[0] for name, _ in LookupModel().named_parameters()})
print(param_groups)
my_groups = ...

check("12-3", my_groups)

# %% jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
my_groups = {"key_emb", "value_emb", "pos_emb", "attn.q_proj", "attn.k_proj"}

check("12-3", my_groups)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 5절에서 초기 맵은 행마다 쏠려 있었지만 정답 키 가중치의 초기값은 $1/T$ 근처(시드별 0.08–0.13)였습니다. 학습의 출발점으로 "균등한 맵"과 "무작위로 쏠린 맵" 중 어느 쪽이 유리할까요? 소프트맥스의 기울기(gradient)를 떠올려 보세요(04번).
# 2. 150단계에 정확도는 이미 0.999였는데, 그 뒤에도 손실은 100배 넘게 더 줄었습니다. 그동안 모델 안에서는 무엇이 바뀌고 있을까요? 정답 키 가중치와 출력층 로짓의 크기를 함께 생각해 보세요.
# 3. 이 과제에서는 긴 정체가 나타나지 않았습니다. 정답 키를 찾으려면 두 층이 협력해야 하는 과제(예: 키와 값이 서로 다른 위치에 있는 시퀀스)라면 곡선이 어떻게 달라질까요?
# 4. 실제 언어 모델에서는 "정답 키"를 미리 알 수 없습니다. 학습 중 어텐션 맵의 변화를 보고 싶다면 무엇을 기록해야 할까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 3번이 가장 좋은 토론거리입니다. 키와 값을 다른 위치에 두면 한 층이 "값 위치에 앞 위치의 키를 복사"하고 다음 층이 그 키로 찾아야 하므로, 두 층이 동시에 맞아야 손실이 줄어듭니다. 이런 합성 과제에서 긴 정체 뒤의 급락이 보고되어 있습니다(Reddy 2024). Olsson 등 2022가 자연어 모델에서 본 유도 헤드의 "상전이"는 문맥 내 학습 능력의 급변과 손실 곡선의 작은 혹이었습니다. 직접 실험해 볼 과제로 남겨 두세요. 4번은 엔트로피, 위치별 평균 가중치처럼 "정답 없이 구할 수 있는 양"으로 이끄세요.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 정답 키: 질문과 같은 키 글자의 쌍 위치 | 만들 때 기록한 위치와 같음, 질문마다 하나 |
# | 맵을 바꾸는 것은 $W^Q$, $W^K$, 입력 임베딩뿐 | $W^V$, $W^O$를 바꿔도 가중치 동일 (원문 바로잡기) |
# | 초기 정답 키 가중치 ≈ $1/T$ (시드별 0.08–0.13); 이 노트북의 모델(기본 초기화)에서는 행 하나하나가 균등이 아님 | 시드 0: 정답 키 0.097, 행 최대 평균 0.26 |
# | 원문의 초기 맵(모든 값 0.24–0.26)은 표준 초기화의 작은 모델($d_{\text{model}} = 32$)에서 그대로 나옴; BERT-base도 엔트로피로는 거의 균일 (원문 확인) | $d_{\text{model}} = 32$: 점수 표준편차 0.02 미만; BERT-base식: 표준편차 0.31, 엔트로피/최대 0.97 이상; 이 노트북의 모델은 0.9 미만 |
# | 정답 키 가중치 0.1 → 0.96, 정확도 0.1 → 1.0 | 저장된 곡선, 새 시퀀스 2000개 |
# | 급변(0.25 → 0.75)은 55단계, 긴 정체는 없음 | 손실 감소의 75%가 50–150단계 |
# | 직접 학습한 150단계 ≈ 저장된 곡선 | 훈련 손실·정답 키 가중치의 차이 < $10^{-3}$ |
# | 날카로움 ≠ 정답 | 50단계: 최대 가중치의 99%가 쌍 위치에, 정답 키에는 29% |
# | 급변 시점은 시드마다 60–100단계 | 폭은 40–55단계, 모두 정확도 1.0 |
#
# 11번(사전 학습 모델(pretrained model)의 어텐션 맵)과 비교해 보세요. 그곳에는 "정답 키"가 없어서, 무엇을 관찰해야 하는지부터 다시 물어야 합니다.
