"""Generated from notebooks/src/02_seq2seq_attention.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from helpers.lessons.weighted_average import softmax


def padding_mask(lengths, t=None):  # (B,) -> (B, T) boolean
    """True at the first lengths[b] positions (real tokens), False at padding; t defaults to the longest."""
    lengths = torch.as_tensor(lengths)
    t = int(lengths.max()) if t is None else t
    return torch.arange(t) < lengths[:, None]                                       # (B, T)


PAD, BOS, FIRST = 0, 1, 2  # token ids; the letters A..T are 2..21
NUM_SYMBOLS = 20


def make_reversal_batch(n, min_len, max_len, *, seed):
    """(src, tgt, lengths): n random letter sequences and their reversals, PAD after each length."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(min_len, max_len + 1, (n,), generator=g)                 # (B,)
    t = int(lengths.max())
    tokens = torch.randint(FIRST, FIRST + NUM_SYMBOLS, (n, t), generator=g)          # (B, T)
    mask = padding_mask(lengths, t)                                                  # (B, T): True = letter
    src = tokens.masked_fill(~mask, PAD)
    index = (lengths[:, None] - 1 - torch.arange(t)).clamp(min=0)                    # output t reads L-1-t
    return src, src.gather(1, index).masked_fill(~mask, PAD), lengths


def decode_tokens(ids):
    """Token ids -> labels: letters, '·' for PAD, '<s>' for BOS."""
    return ["·" if i == PAD else "<s>" if i == BOS else chr(ord("A") + i - FIRST)
            for i in torch.as_tensor(ids).reshape(-1).tolist()]


class Encoder(nn.Module):
    """Bidirectional GRU: one state per input position, plus the fixed context c."""

    def __init__(self, emb_dim, hidden_dim):
        super().__init__()
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, emb, lengths):                     # emb (B, T, E), lengths (B,)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, last = self.gru(packed)                     # last (2, B, H): forward, backward
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=emb.shape[1])
        fixed = torch.cat([last[0], last[1]], dim=-1)    # (B, 2H): c = [h→_{L-1}; h←_0]
        return states, fixed                             # states (B, T, 2H), zero at padding


def attend_scores(scores, values, mask=None):
    """Softmax over the input positions, then the weighted sum of the values."""
    if mask is not None:                                 # mask (B, T): True = real token
        scores = scores.masked_fill(~mask, float("-inf"))  # e^-inf = 0: padding gets no weight
    weights = softmax(scores, dim=-1)                    # (B, T), each row sums to 1
    context = (weights[:, None, :] @ values).squeeze(1)  # (B, 1, T) @ (B, T, d_v) -> (B, d_v)
    return context, weights


class AdditiveAttention(nn.Module):
    """Bahdanau: e_j = vᵀ tanh(W_q q + W_k k_j), a one-hidden-layer network scores each key."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def scores(self, query, keys):                       # query (B, d_q), keys (B, T, d_k)
        hidden = torch.tanh(self.W_q(query)[:, None, :] + self.W_k(keys))  # (B, T, d_a)
        return self.v(hidden).squeeze(-1)                # (B, T)

    def forward(self, query, keys, values, mask=None):
        return attend_scores(self.scores(query, keys), values, mask)  # (B, d_v), (B, T)


class DotAttention(nn.Module):
    """Luong "general": e_j = (W q)·k_j; W maps the decoder size d_q to the key size d_k."""

    def __init__(self, query_dim, key_dim):
        super().__init__()
        self.W = nn.Linear(query_dim, key_dim, bias=False)

    def scores(self, query, keys):                       # query (B, d_q), keys (B, T, d_k)
        q = self.W(query)                                # (B, d_k)
        return (keys @ q[:, :, None]).squeeze(-1)        # (B, T, d_k) @ (B, d_k, 1) -> (B, T)

    def forward(self, query, keys, values, mask=None):
        return attend_scores(self.scores(query, keys), values, mask)  # (B, d_v), (B, T)


class Decoder(nn.Module):
    """A GRU cell that writes one letter per step; with attention the context is new every step."""

    def __init__(self, emb_dim, hidden_dim, vocab, attention):
        super().__init__()
        kv = 2 * hidden_dim                              # encoder states are [→; ←]
        self.cell = nn.GRUCell(emb_dim + kv, hidden_dim)
        self.attention = None                            # "none": one fixed context vector
        if attention == "additive":
            self.attention = AdditiveAttention(hidden_dim, kv, hidden_dim)
        elif attention == "dot":
            self.attention = DotAttention(hidden_dim, kv)
        self.out = nn.Linear(hidden_dim + kv, vocab)

    def step(self, emb_prev, state, keys, mask, fixed):
        """emb_prev (B, E), state s_{t-1} (B, H), keys = values = encoder states (B, T, 2H)."""
        if self.attention is None:
            context, weights = fixed, None               # (B, 2H): the same c at every step
        else:
            context, weights = self.attention(state, keys, keys, mask)  # query = s_{t-1}
        state = self.cell(torch.cat([emb_prev, context], dim=-1), state)  # (B, H): s_t
        logits = self.out(torch.cat([state, context], dim=-1))            # (B, V)
        return logits, state, weights


class Seq2Seq(nn.Module):
    """Embedding + encoder + decoder; attention is "none", "additive" or "dot"."""

    def __init__(self, attention="additive", emb_dim=16, hidden_dim=64):
        super().__init__()
        self.config = {"attention": attention, "emb_dim": emb_dim, "hidden_dim": hidden_dim}
        vocab = FIRST + NUM_SYMBOLS
        self.embed = nn.Embedding(vocab, emb_dim, padding_idx=PAD)  # shared by both sides
        self.encoder = Encoder(emb_dim, hidden_dim)
        self.bridge = nn.Linear(2 * hidden_dim, hidden_dim)  # first state s_{-1} = tanh(W_b c)
        self.decoder = Decoder(emb_dim, hidden_dim, vocab, attention)

    def forward(self, src, lengths, tgt=None):           # src (B, T); with tgt: teacher forcing
        keys, fixed = self.encoder(self.embed(src), lengths)  # (B, T, 2H), (B, 2H)
        mask = padding_mask(lengths, src.shape[1])       # (B, T)
        state, prev = torch.tanh(self.bridge(fixed)), torch.full_like(lengths, BOS)
        logits, weights = [], []
        for t in range(src.shape[1]):
            step_logits, state, w = self.decoder.step(self.embed(prev), state, keys, mask, fixed)
            logits.append(step_logits)
            weights.append(w)
            prev = tgt[:, t] if tgt is not None else step_logits.argmax(-1)
        w = None if weights[0] is None else torch.stack(weights, dim=1)  # (B, T_out, T_in)
        return torch.stack(logits, dim=1), w             # (B, T_out, V)


def train_steps(model, steps, *, seed, batch_size=64, min_len=1, max_len=20, lr=3e-3,
                cosine=False, log_every=0):
    """Adam with teacher forcing on fresh seeded batches; returns the loss of every step."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for step in range(steps):
        if cosine:  # decay to 0: late steps polish instead of bouncing around
            for group in opt.param_groups:
                group["lr"] = lr * 0.5 * (1 + np.cos(np.pi * step / steps))
        src, tgt, lengths = make_reversal_batch(batch_size, min_len, max_len, seed=seed * 1_000_003 + step)
        logits, _ = model(src, lengths, tgt)             # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if log_every and (step + 1) % log_every == 0:
            print(f"step {step + 1:5d}  loss {np.mean(losses[-log_every:]):.3f}", flush=True)
    return losses


@torch.no_grad()
def predict(model, length, n, seed, teacher_forcing=False):
    """Greedy (or teacher-forced) predictions for n seeded inputs of one length."""
    src, tgt, lengths = make_reversal_batch(n, length, length, seed=seed)
    logits, weights = model.eval()(src, lengths, tgt if teacher_forcing else None)
    return src, tgt, logits.argmax(-1), weights


def accuracy_by_length(model, lengths, *, n=100, seed=1234):
    """Greedy decoding: token and whole-sequence accuracy for each input length."""
    out = {"length": [], "token": [], "sequence": []}
    for length in lengths:
        _, tgt, pred, _ = predict(model, length, n, seed + length)
        correct = pred == tgt                            # (n, L)
        out["length"].append(length)
        out["token"].append(round(correct.double().mean().item(), 4))
        out["sequence"].append(round(correct.all(dim=1).double().mean().item(), 4))
    return out


def accuracy_by_position(model, length, *, n=100, seed=1234, teacher_forcing=False):
    """Token accuracy at each output step, shape (length,)."""
    _, tgt, pred, _ = predict(model, length, n, seed + length, teacher_forcing)
    return (pred == tgt).double().mean(dim=0).numpy()


def checkpoint(model):
    """What torch.save stores: the config and the weights."""
    return {"config": dict(model.config), "state_dict": model.state_dict()}


def model_from_checkpoint(ckpt, dtype=torch.float64):
    """Rebuild a stored model in eval mode (float64 by default: the same argmax on any CPU)."""
    model = Seq2Seq(**ckpt["config"])
    model.load_state_dict(ckpt["state_dict"])
    return model.to(dtype).eval()


STYLE = {"none": ("어텐션 없음 (고정 문맥 벡터)", "tab:red", "o"),
         "additive": ("가법 어텐션 (Bahdanau)", "tab:blue", "s"),
         "dot": ("내적 어텐션 (Luong general)", "tab:green", "^")}


def draw_accuracy_vs_length(results, *, ax, metric="sequence", title="입력 길이에 따른 정확도", train_max=None):
    """One line per model: accuracy against input length ({kind: accuracy dict})."""
    for kind, res in results.items():
        label, color, marker = STYLE[kind]
        ax.plot(res["length"], res[metric], marker=marker, color=color, label=label, markersize=4)
    if train_max is not None:
        ax.axvline(train_max, color="gray", linestyle=":", linewidth=1)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("입력 길이 L")
    ax.set_ylabel("시퀀스 정확도" if metric == "sequence" else "토큰 정확도")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower left")
    return ax


def draw_position_accuracy(forced, greedy, *, ax):
    """Token accuracy per output step: teacher-forced ({L: (L,) array}) solid, greedy dashed."""
    for (n, acc), color in zip(forced.items(), ["tab:gray", "tab:orange", "tab:red"]):
        ax.plot(range(n), acc, marker="o", markersize=3, color=color, label=f"L={n}, 직전 정답 입력")
    ax.plot(range(len(greedy)), greedy, linestyle="--", color="tab:red", label=f"L={len(greedy)}, 자기 출력 입력")
    ax.set_xticks(range(0, len(greedy), 2))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("출력 단계 t")
    ax.set_ylabel("토큰 정확도")
    ax.set_title("출력 위치별 정확도 (L마다 200개)")
    ax.legend(fontsize=7, loc="upper right")
    return ax


def draw_loss_curves(models, *, ax):
    """Stored training curves ({kind: {"loss_curve": {"step", "loss"}}}) on a log axis."""
    for kind, r in models.items():
        ax.plot(r["loss_curve"]["step"], r["loss_curve"]["loss"], color=STYLE[kind][1], label=STYLE[kind][0])
    ax.set_yscale("log")
    ax.set_xlabel("학습 단계")
    ax.set_ylabel("손실 (로그 축)")
    ax.set_title("학습 곡선 (저장된 기록)")
    ax.legend(fontsize=7, loc="lower left")
    return ax


def alignment_of(model, length, seed):
    """Weights (L, L), input labels and predicted labels for one seeded example."""
    s, _, n = make_reversal_batch(1, length, length, seed=seed)
    with torch.no_grad():
        logits, w = model(s, n)
    return w[0], decode_tokens(s[0]), decode_tokens(logits[0].argmax(-1))


def alignment_panels(ax_map, ax_bar, weights, src_labels, tgt_labels):
    """Draw the alignment and one row's bars once; return update(step) that changes them in place."""
    w = np.asarray(weights, dtype=float)                 # (T_out, T_in)
    t_in = w.shape[1]
    ax_map.imshow(w, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    ax_map.set_xticks(range(t_in), src_labels)
    ax_map.set_yticks(range(w.shape[0]), tgt_labels)
    ax_map.set_xlabel("입력 (키·밸류)")
    ax_map.set_ylabel("출력 단계 (쿼리)")
    frame = ax_map.add_patch(plt.Rectangle((-0.5, -0.5), t_in, 1, fill=False, edgecolor="tab:red", linewidth=2))
    bars = ax_bar.bar(range(t_in), w[0], color="tab:blue")
    texts = [ax_bar.text(j, 0, "", ha="center", va="bottom", fontsize=7) for j in range(t_in)]
    ax_bar.set_xticks(range(t_in), src_labels)
    ax_bar.set_xlabel("입력 위치")
    ax_bar.set_ylim(0, 1.15)
    ax_bar.set_yticks([0, 0.5, 1])
    ax_bar.set_ylabel("가중치")
    title = ax_bar.set_title(" ", fontsize=10)

    def update(step):
        row = w[step]
        frame.set_y(step - 0.5)
        for bar, text, x in zip(bars, texts, row):
            bar.set_height(x)
            text.set_y(x)
            text.set_text(f"{x:.2f}" if x >= 0.05 else "")  # label only the visible bars
        j = int(row.argmax())
        title.set_text(f"단계 {step}: 출력 '{tgt_labels[step]}' ← 입력 {j}번 '{src_labels[j]}'")
        return row

    update(0)
    return update


def alignment_explorer(weights, src_labels, tgt_labels):
    """A slider over the decoder step; the frame and the bars follow it."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.3), dpi=80)
    update = alignment_panels(*axes, weights, src_labels, tgt_labels)
    fig.tight_layout()
    slider = widgets.IntSlider(value=0, min=0, max=len(tgt_labels) - 1, description="출력 단계")
    return Explorer(fig, update, {"step": slider})
