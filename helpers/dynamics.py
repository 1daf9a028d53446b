"""Notebook 12 (attention during training): a key-value lookup task whose correct attention is
known, a one-layer model, the training loop with its measurements, drawings, the checkpoint
slider and the exercise checkers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import MultiHeadAttention, _positive_int
from .exercises import Wrong, _as_tensor, _call, exercise
from .plots import attention_heatmap, to_numpy

__all__ = [
    "KEYS", "N_KEYS", "N_VALUES", "QUERY_MARK", "N_PAIRS", "N_QUERIES", "SEQ_LEN",
    "make_lookup_batch", "correct_keys", "token_labels", "LookupModel", "query_weights",
    "attention_mass", "uniform_mass", "row_entropy", "train_lookup", "evaluate",
    "first_step_at_or_above", "checkpoint_maps", "draw_checkpoint", "checkpoint_explorer",
    "PARAM_GROUPS",
]

KEYS = "ABCDEFGHIJ"  # key symbols; values are the digits 0..9
N_KEYS, N_VALUES = len(KEYS), 10
QUERY_MARK = N_VALUES  # value id of a query position: "?" (the value is what is asked for)
N_PAIRS, N_QUERIES = 6, 4
SEQ_LEN = N_PAIRS + N_QUERIES  # 10 positions: 6 "key:value" pairs, then 4 queries "key?"


def _tensor(name: str, x, dim: int) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != dim:
        raise ValueError(f"{name} must have {dim} dimensions, got shape {tuple(x.shape)}")
    return x


# --------------------------------------------------------------------------- task


def make_lookup_batch(n: int, generator: torch.Generator | None = None) -> dict:
    """n sequences of 6 pairs (distinct keys, random values) and 4 queries asking for 4 of those keys.

    Returns a dict of tensors: ``keys`` and ``values`` (n, T) token ids (queries carry QUERY_MARK
    as value), ``target`` (n, Q) the asked values and ``source`` (n, Q) the pair position holding each.
    """
    n = _positive_int("n", n)
    pair_keys = torch.rand(n, N_KEYS, generator=generator).argsort(dim=1)[:, :N_PAIRS]  # (n, P) distinct
    pair_values = torch.randint(0, N_VALUES, (n, N_PAIRS), generator=generator)  # (n, P)
    source = torch.rand(n, N_PAIRS, generator=generator).argsort(dim=1)[:, :N_QUERIES]  # (n, Q) distinct
    keys = torch.cat([pair_keys, pair_keys.gather(1, source)], dim=1)  # (n, T)
    values = torch.cat([pair_values, torch.full((n, N_QUERIES), QUERY_MARK)], dim=1)  # (n, T)
    return {"keys": keys, "values": values, "target": pair_values.gather(1, source), "source": source}


def correct_keys(keys: torch.Tensor) -> torch.Tensor:
    """Boolean (n, Q, T): True where a query's correct key is, the pair position with its key symbol.

    Computed from the key symbols alone: pair positions (< N_PAIRS) whose symbol equals the
    query's. The query positions themselves share the symbol but hold no value, so they are not correct.
    """
    _tensor("keys", keys, 2)
    if keys.shape[1] != SEQ_LEN:
        raise ValueError(f"keys must have shape (n, {SEQ_LEN}), got {tuple(keys.shape)}")
    same = keys[:, N_PAIRS:, None] == keys[:, None, :]  # (n, Q, T)
    is_pair = torch.arange(SEQ_LEN) < N_PAIRS  # (T,)
    return same & is_pair


def token_labels(batch: dict, i: int = 0) -> list[str]:
    """Readable labels of sequence i: 'C:7' for a pair, 'C?' for a query."""
    keys, values = batch["keys"][i].tolist(), batch["values"][i].tolist()
    return [f"{KEYS[k]}?" if v == QUERY_MARK else f"{KEYS[k]}:{v}" for k, v in zip(keys, values)]


# --------------------------------------------------------------------------- model


class LookupModel(nn.Module):
    """Key + value + position embeddings -> one attention layer (residual) -> a linear readout."""

    def __init__(self, d_model: int = 32, num_heads: int = 1):
        super().__init__()
        self.key_emb = nn.Embedding(N_KEYS, d_model)
        self.value_emb = nn.Embedding(N_VALUES + 1, d_model)  # + the query mark "?"
        self.pos_emb = nn.Embedding(SEQ_LEN, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.readout = nn.Linear(d_model, N_VALUES)

    def forward(self, keys: torch.Tensor, values: torch.Tensor):
        """Return logits at the query positions (B, Q, N_VALUES) and attention weights (B, h, T, T)."""
        x = self.key_emb(keys) + self.value_emb(values) + self.pos_emb.weight[: keys.shape[1]]  # (B, T, C)
        out, weights = self.attn(x)  # (B, T, C), (B, h, T, T)
        h = x + out  # (B, T, C)
        return self.readout(h[:, N_PAIRS:]), weights  # (B, Q, V), (B, h, T, T)


def query_weights(weights: torch.Tensor) -> torch.Tensor:
    """The query rows of (B, h, T, T) weights, averaged over heads: (B, Q, T)."""
    _tensor("weights", weights, 4)
    if weights.shape[-2:] != (SEQ_LEN, SEQ_LEN):
        raise ValueError(f"weights must end in ({SEQ_LEN}, {SEQ_LEN}), got {tuple(weights.shape)}")
    return weights[:, :, N_PAIRS:, :].mean(dim=1)  # (B, Q, T)


def attention_mass(qw: torch.Tensor, correct: torch.Tensor) -> float:
    """Mean over queries of the weight sum on the correct keys (1 = all weight on them)."""
    _tensor("qw", qw, 3)
    _tensor("correct", correct, 3)
    if qw.shape != correct.shape or correct.dtype != torch.bool:
        raise ValueError(f"qw and correct must have one shape (n, Q, T) and correct must be boolean, "
                         f"got {tuple(qw.shape)} and {tuple(correct.shape)} {correct.dtype}")
    return (qw * correct).sum(dim=-1).mean().item()


def uniform_mass(correct: torch.Tensor) -> float:
    """The mass that uniform weights 1/T would put on the correct keys."""
    _tensor("correct", correct, 3)
    return (correct.sum(dim=-1).double() / correct.shape[-1]).mean().item()


def row_entropy(qw: torch.Tensor) -> float:
    """Mean entropy (nats) of the query rows: log T for uniform weights, 0 for one-hot."""
    _tensor("qw", qw, 3)
    return -(qw * qw.clamp_min(1e-12).log()).sum(dim=-1).mean().item() + 0.0  # + 0.0: no "-0.000"


def _loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, N_VALUES), target.reshape(-1))


@torch.no_grad()
def evaluate(model: nn.Module, batch: dict) -> dict:
    """Loss, accuracy, attention mass on the correct keys and row entropy on a fixed batch."""
    was_training = model.training
    model.eval()
    logits, weights = model(batch["keys"], batch["values"])
    model.train(was_training)
    qw = query_weights(weights)
    return {
        "loss": _loss(logits, batch["target"]).item(),
        "accuracy": (logits.argmax(-1) == batch["target"]).double().mean().item(),
        "mass": attention_mass(qw, correct_keys(batch["keys"])),
        "entropy": row_entropy(qw),
        "on_queries": qw[..., N_PAIRS:].sum(dim=-1).mean().item(),  # weight on query positions
    }


def train_lookup(steps: int, seed: int = 0, *, probe: dict | None = None, eval_every: int = 10,
                 save_at=(), lr: float = 3e-3, batch: int = 64, d_model: int = 32):
    """Train a LookupModel with Adam on fresh batches, single-threaded so every run is identical.

    Returns (model, log): log["loss"] holds every step's training loss; with a ``probe`` batch,
    log["eval"] holds evaluate() at step 0 and every ``eval_every`` steps; log["checkpoints"]
    holds copies of the state_dict at the steps in ``save_at`` (0 = before training).
    """
    steps = _positive_int("steps", steps)
    eval_every = _positive_int("eval_every", eval_every)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same float sums as scripts/train_dynamics.py
    try:
        torch.manual_seed(seed)
        model = LookupModel(d_model)
        gen = torch.Generator().manual_seed(seed + 1000)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        log = {"loss": [], "eval": [], "checkpoints": {}}

        def record(step):
            if probe is not None and step % eval_every == 0:
                log["eval"].append({"step": step, **evaluate(model, probe)})
            if step in save_at:
                log["checkpoints"][step] = {k: v.clone() for k, v in model.state_dict().items()}

        record(0)
        for step in range(1, steps + 1):
            b = make_lookup_batch(batch, gen)
            loss = _loss(model(b["keys"], b["values"])[0], b["target"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            log["loss"].append(loss.item())
            record(step)
    finally:
        torch.set_num_threads(threads)
    return model.eval(), log


def first_step_at_or_above(steps, values, threshold: float):
    """The first step whose value is >= threshold, or None if it never gets there."""
    steps, values = list(steps), list(values)
    if len(steps) != len(values):
        raise ValueError(f"steps and values must have one length, got {len(steps)} and {len(values)}")
    return next((s for s, v in zip(steps, values) if v >= threshold), None)


# --------------------------------------------------------------------------- drawing


@torch.no_grad()
def checkpoint_maps(checkpoints: dict, batch: dict, i: int = 0, d_model: int = 32) -> dict:
    """For each stored step, the query rows (Q, T) of sequence i's attention weights."""
    if not isinstance(checkpoints, dict) or not checkpoints:
        raise ValueError("checkpoints must be a non-empty dict {step: state_dict}")
    model = LookupModel(d_model).eval()
    maps = {}
    for step in sorted(checkpoints):
        model.load_state_dict(checkpoints[step])
        _, weights = model(batch["keys"][i : i + 1], batch["values"][i : i + 1])
        maps[int(step)] = query_weights(weights)[0]  # (Q, T)
    return maps


def draw_checkpoint(step: int, maps: dict, curve: dict, labels, correct: torch.Tensor, *, axes=None) -> dict:
    """Left: sequence i's query rows at ``step`` with the correct keys boxed; right: the mass curve
    with the step marked. Returns that map, its mass on the correct keys and the curve's value there."""
    if step not in maps:
        raise ValueError(f"step must be one of the stored steps {sorted(maps)}, got {step!r}")
    _tensor("correct", correct, 2)
    qw = maps[step]  # (Q, T)
    if correct.shape != qw.shape:
        raise ValueError(f"correct must have the map's shape {tuple(qw.shape)}, got {tuple(correct.shape)}")
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 3.4), gridspec_kw={"width_ratios": [1.4, 1]})
    ax_map, ax_curve = axes
    mass = (qw * correct).sum(dim=-1).mean().item()
    attention_heatmap(qw, labels[N_PAIRS:], labels, ax=ax_map, vmax=1.0, colorbar=False,
                      title=f"{step}단계: 정답 키 가중치 {mass:.2f}")
    for r, c in correct.nonzero().tolist():  # box the correct key of each query
        ax_map.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="tab:red", lw=2))
    steps, values = curve["step"], curve["mass"]
    ax_curve.plot(steps, values, color="tab:blue")
    ax_curve.axhline(1 / SEQ_LEN, color="gray", linestyle=":", label="균등 1/T")
    at = values[steps.index(step)] if step in steps else float("nan")
    ax_curve.axvline(step, color="tab:red", linestyle="--")
    ax_curve.plot([step], [at], "o", color="tab:red")
    ax_curve.set_xscale("symlog", linthresh=10)
    ax_curve.set_ylim(0, 1)
    ax_curve.set_xlabel("학습 단계 (10 이상은 로그 눈금)")
    ax_curve.set_ylabel("정답 키의 가중치")
    ax_curve.set_title(f"검증 묶음 평균: {at:.2f}")
    ax_curve.legend(loc="upper left")
    return {"map": to_numpy(qw), "mass": mass, "curve_mass": at}


def checkpoint_explorer(maps: dict, curve: dict, labels, correct: torch.Tensor):
    """A slider over the stored steps that redraws the attention map and marks the step on the curve."""
    import ipywidgets as widgets

    slider = widgets.SelectionSlider(options=sorted(maps), value=min(maps), description="학습 단계",
                                     continuous_update=False)

    def redraw(step):
        draw_checkpoint(step, maps, curve, labels, correct)
        plt.show()

    out = widgets.interactive_output(redraw, {"step": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- exercises

PARAM_GROUPS = ("key_emb", "value_emb", "pos_emb", "attn.q_proj", "attn.k_proj", "attn.v_proj",
                "attn.out_proj", "readout")


def _example_keys() -> torch.Tensor:
    """Three fixed sequences used by the checkers."""
    g = torch.Generator().manual_seed(3)
    return make_lookup_batch(3, g)["keys"]


@exercise("12-1")
def _check_correct_keys(fn):
    keys = _example_keys()  # (3, T)
    want = correct_keys(keys)
    got = _as_tensor(_call(fn, keys.clone(), what="my_correct_keys(keys)"), "my_correct_keys")
    if got.shape == (keys.shape[0], N_QUERIES):
        raise Wrong("모양이 (n, Q)입니다. 정답 키의 위치 번호 대신, 쿼리마다 T개 위치 각각이 정답인지 표시한 "
                    f"(n, Q, T) = {tuple(want.shape)} 불리언 텐서를 돌려주세요.")
    if got.shape == (keys.shape[0], N_QUERIES, N_PAIRS):
        raise Wrong(f"모양이 (n, Q, {N_PAIRS})입니다. 쌍 위치 {N_PAIRS}개만 남기지 말고 T = {SEQ_LEN}개 위치 모두에 대해 "
                    f"표시하세요(질문 위치는 False): (n, Q, T) = {tuple(want.shape)}.")
    if got.shape == (keys.shape[0], SEQ_LEN, SEQ_LEN):
        raise Wrong(f"모양이 (n, T, T) = {tuple(got.shape)}입니다. 행은 쿼리 위치 {N_PAIRS}..{SEQ_LEN - 1}의 "
                    f"{N_QUERIES}개만 필요합니다: (n, Q, T) = {tuple(want.shape)}.")
    if got.shape != want.shape:
        raise Wrong(f"모양이 {tuple(got.shape)}입니다. keys가 (n, T) = {tuple(keys.shape)}이면 "
                    f"(n, Q, T) = {tuple(want.shape)}여야 합니다.")
    if not ((got == 0) | (got == 1)).all():
        raise Wrong("값이 True/False(또는 1/0)가 아닙니다. 정답 키인 위치만 True로 표시하세요.")
    got = got.bool()
    same_symbol = keys[:, N_PAIRS:, None] == keys[:, None, :]
    if torch.equal(got, same_symbol):
        raise Wrong("키 글자가 같은 위치를 모두 표시했습니다. 쿼리 자신도 글자가 같지만 "
                    f"값이 없습니다('?'). 정답 키는 앞쪽 쌍 위치 0..{N_PAIRS - 1} 중에서만 찾으세요.")
    rows = got.sum(dim=-1)
    if (rows != 1).any():
        n, q = (rows != 1).nonzero()[0].tolist()
        raise Wrong(f"이 과제에서는 쿼리마다 정답 키가 정확히 하나입니다. 시퀀스 {n}의 쿼리 {q}에 "
                    f"{rows[n, q].item()}개가 표시되었습니다.")
    if not torch.equal(got, want):
        n, q = (got != want).any(dim=-1).nonzero()[0].tolist()
        raise Wrong(f"시퀀스 {n}의 쿼리 {q}(키 {KEYS[keys[n, N_PAIRS + q]]})의 정답 키는 위치 "
                    f"{want[n, q].nonzero().item()}인데 위치 {got[n, q].nonzero().item()}를 표시했습니다.")
    return "쿼리의 키 글자와 같은 글자를 가진 쌍 위치 하나: 정답을 미리 아는 과제라서 가능한 정의입니다."


@exercise("12-2")
def _check_mass(fn):
    keys = _example_keys()
    correct = correct_keys(keys)  # (3, Q, T)
    g = torch.Generator().manual_seed(5)
    qw = torch.softmax(3 * torch.randn(correct.shape, generator=g, dtype=torch.float64), dim=-1)  # (3, Q, T)
    want = (qw * correct).sum(-1).mean().item()
    got = _as_tensor(_call(fn, qw.clone(), correct.clone(), what="my_mass(qw, correct)"), "my_mass")
    if got.numel() != 1:
        raise Wrong(f"숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다. "
                    "쿼리별 합을 배치와 쿼리에 대해 평균하세요.")
    got = got.item()
    if abs(got - want) < 1e-9:
        uniform = torch.full_like(qw, 1 / SEQ_LEN)
        got_u = _as_tensor(_call(fn, uniform, correct.clone(), what="my_mass(균등 가중치, correct)"), "my_mass").item()
        if abs(got_u - 1 / SEQ_LEN) > 1e-9:
            raise Wrong(f"균등 가중치 1/T에서 {got_u:.4g}가 나왔습니다. 기대값은 1/T = {1 / SEQ_LEN}입니다.")
        return f"정답 키 가중치 {want:.4f}; 균등 가중치라면 1/T = {1 / SEQ_LEN}입니다."
    hints = {
        (qw * correct).mean().item(): "키 축에서도 평균을 냈습니다(T로 한 번 더 나눔). 쿼리 한 행의 정답 키 가중치는 합(sum)입니다",
        (qw * correct).sum().item(): "모든 쿼리의 가중치를 더하기만 했습니다. 시퀀스와 쿼리에 대해 평균을 내세요",
        qw.max(-1).values.mean().item(): "행의 최대 가중치를 쟀습니다. 가장 큰 가중치가 정답 키에 있다는 보장은 없습니다",
        (qw * correct).sum(-1)[:, 0].mean().item(): "첫 번째 쿼리만 썼습니다. 쿼리 네 개 모두 평균하세요",
        (qw * ~correct).sum(-1).mean().item(): "정답이 아닌 키의 가중치를 더했습니다(1 − 정답 키 가중치)",
    }
    hint = next((h for v, h in hints.items() if abs(got - v) < 1e-9), None)
    raise Wrong(f"my_mass = {got:.4g}, 기대값은 {want:.4g}입니다." + (f" {hint}." if hint else ""))


def _influences_attention() -> set[str]:
    """Parameter groups whose gradient reaches the attention weights of a random model."""
    torch.manual_seed(0)
    model = LookupModel()
    batch = make_lookup_batch(8, torch.Generator().manual_seed(0))
    _, weights = model(batch["keys"], batch["values"])
    (weights * torch.randn_like(weights)).sum().backward()
    groups = set()
    for name, p in model.named_parameters():
        if p.grad is not None and p.grad.abs().sum() > 0:
            groups.add(name.rsplit(".", 1)[0])
    return groups


@exercise("12-3")
def _check_params(answer):
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
        raise Wrong(f"이름의 집합(set)을 넘겨 주세요, 예: {{\"attn.q_proj\"}}; 받은 것은 {type(answer).__name__}입니다.")
    got = set(answer)
    unknown = got - set(PARAM_GROUPS)
    if unknown:
        raise Wrong(f"모르는 이름 {sorted(unknown)}이 있습니다. PARAM_GROUPS = {list(PARAM_GROUPS)} 중에서 고르세요.")
    want = _influences_attention()
    why_not = {
        "attn.v_proj": "W^V는 밸류만 만듭니다. 점수 q·k에 들어가지 않으므로 가중치는 그대로이고, 무엇이 섞이는지만 바뀝니다",
        "attn.out_proj": "W^O는 가중합이 끝난 뒤에 곱해집니다. 가중치 계산보다 뒤에 있습니다",
        "readout": "출력층은 어텐션 뒤에 있습니다. 이 층은 한 층짜리 모델이라 뒤의 파라미터가 앞의 가중치를 바꾸지 못합니다",
    }
    why_yes = {
        "key_emb": "키 글자 임베딩은 입력 x의 일부라서 q와 k를 모두 바꿉니다",
        "value_emb": "값 임베딩도 입력 x에 더해지므로 q와 k를 바꿉니다('?' 표시 덕분에 쿼리 위치를 피할 수 있습니다)",
        "pos_emb": "위치 임베딩도 입력 x에 더해지므로 q와 k를 바꿉니다",
        "attn.q_proj": "W^Q는 쿼리를 만듭니다. 점수 q·k에 직접 들어갑니다",
        "attn.k_proj": "W^K는 키를 만듭니다. 점수 q·k에 직접 들어갑니다",
    }
    for name in PARAM_GROUPS:
        if name in got and name not in want:
            raise Wrong(f"{name}은(는) 어텐션 가중치를 바꾸지 못합니다: {why_not[name]}.")
        if name in want and name not in got:
            raise Wrong(f"{name}이(가) 빠졌습니다: {why_yes[name]}.")
    return "가중치는 softmax(q·k/√d)이므로 q와 k를 만드는 것(입력 임베딩, W^Q, W^K)만 가중치를 바꿉니다."
