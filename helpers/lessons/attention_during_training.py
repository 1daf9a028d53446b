"""Generated from notebooks/src/12_attention_during_training.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.lessons.masks import MaskedMultiHeadAttention
from helpers.lessons.temperature import entropy
from helpers.widgets import Explorer

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


def correct_keys(keys):  # (n, T) -> (n, Q, T) boolean
    same = keys[:, N_PAIRS:, None] == keys[:, None, :]   # (n, Q, T): same key symbol
    return same & (torch.arange(SEQ_LEN) < N_PAIRS)      # only pair positions hold a value


def query_weights(weights):  # (B, h, T, T) -> (B, Q, T): query rows, mean over heads
    return weights[:, :, N_PAIRS:, :].mean(dim=1)


def row_entropy(qw):  # (n, Q, T) -> mean entropy of the rows in nats
    return entropy(qw).mean().item()


def attention_mass(qw, correct):  # (n, Q, T), (n, Q, T) bool -> float
    return (qw * correct).sum(dim=-1).mean().item()


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
