"""Generated from notebooks/src/07_multi_head_attention.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.lessons.attention_dropout import dropout_attention


def split_heads(x, num_heads):  # (B, T, C) -> (B, h, T, d)
    b, t, c = x.shape
    return x.view(b, t, num_heads, c // num_heads).transpose(1, 2)  # cut C into h pieces, heads before time


def merge_heads(x):  # (B, h, T, d) -> (B, T, h·d): heads 0, 1, … in order
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)                   # reshape: the transpose is not contiguous


class MultiHeadAttention(nn.Module):  # h heads of size d = C/h; boolean mask: True = may attend

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.h, self.d, self.dropout = num_heads, d_model // num_heads, dropout
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))

    def attend(self, q, k, v, mask):                                 # (B, h, T_q, d), (B, h, T_k, d), (B, h, T_k, d)
        return dropout_attention(q, k, v, mask, self.dropout, self.training)   # 06's attention: √d, not √C

    def forward(self, query, key=None, value=None, mask=None):       # (B, T_q, C), (B, T_k, C), (B, T_k, C)
        key = query if key is None else key
        value = key if value is None else value
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]                                     # (B, 1, T_q, T_k): the same mask for every head
        q, k, v = (split_heads(proj(y), self.h)                      # (B, h, T, d)
                   for proj, y in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        heads, weights = self.attend(q, k, v, mask)                  # (B, h, T_q, d), (B, h, T_q, T_k)
        return self.out_proj(merge_heads(heads)), weights            # (B, T_q, C)


def copy_from_torch(ours, torch_mha):
    """Copy nn.MultiheadAttention's weights into our module: in_proj_weight is [W^Q; W^K; W^V] stacked, (3C, C)."""
    projections = (ours.q_proj, ours.k_proj, ours.v_proj)
    with torch.no_grad():
        for proj, w in zip(projections, torch_mha.in_proj_weight.chunk(3)):
            proj.weight.copy_(w)
        if torch_mha.in_proj_bias is not None:                          # bias=False modules have none
            for proj, b in zip(projections, torch_mha.in_proj_bias.chunk(3)):
                proj.bias.copy_(b)
        ours.out_proj.load_state_dict(torch_mha.out_proj.state_dict())
    return ours


def mha_costs(n, c, h, batch=1):
    """Matrix-multiply FLOPs (2 per multiply-add), softmax rows and weight-matrix entries of one self-attention call."""
    d = c // h
    return {"matmul_flops": batch * (4 * 2 * n * c * c + h * 2 * (2 * n * n * d)),   # projections + scores + mix
            "softmax_rows": batch * h * n,
            "weight_floats": batch * h * n * n}


VOCAB, SEQ_LEN, FIRST_SCORED = 8, 8, 2     # positions t >= 2 are scored


def make_offset_batch(n, generator=None):
    """Random tokens x (n, T) and targets y_t = (x_{t-1} - x_0) mod VOCAB."""
    x = torch.randint(0, VOCAB, (n, SEQ_LEN), generator=generator)   # (n, T)
    return x, (x.roll(1, dims=1) - x[:, :1]) % VOCAB                   # y_0, y_1 are not scored


class OffsetModel(nn.Module):
    """Token + position embeddings -> one MultiHeadAttention layer -> a per-position MLP."""

    def __init__(self, num_heads, d_model=32, hidden=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, d_model), nn.Embedding(SEQ_LEN, d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.ReLU(), nn.Linear(hidden, VOCAB))

    def forward(self, x):                                              # (B, T) token ids
        out, weights = self.attn(self.tok(x) + self.pos.weight[: x.shape[1]])
        return self.mlp(out), weights                                  # (B, T, VOCAB), (B, h, T, T)


def offset_loss(logits, y):
    return F.cross_entropy(logits[:, FIRST_SCORED:].reshape(-1, VOCAB), y[:, FIRST_SCORED:].reshape(-1))


def train_offset_model(num_heads, steps, seed=0, lr=1e-2, batch=128):
    """Adam on fresh random batches; returns (model in eval mode, losses)."""
    torch.manual_seed(seed)
    model, gen = OffsetModel(num_heads), torch.Generator().manual_seed(seed + 1000)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y = make_offset_batch(batch, gen)
        loss = offset_loss(model(x)[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def head_profile(model, x, y):
    """Accuracy at t >= 2 and, per head, the mean weight on the previous and on the first token: (h, 2)."""
    logits, weights = model(x)
    acc = (logits[:, FIRST_SCORED:].argmax(-1) == y[:, FIRST_SCORED:]).double().mean().item()
    maps = weights.mean(dim=0)                                         # (h, T, T): averaged over the batch
    rows = torch.arange(FIRST_SCORED, SEQ_LEN)
    profile = torch.stack([maps[:, rows, rows - 1].mean(-1), maps[:, rows, 0].mean(-1)], dim=-1)
    return acc, maps, profile


def head_panel(ax, maps):
    """Heatmap of one head's mean map on ax; returns update(head) that swaps the data and the title in place."""
    im = ax.imshow(maps[0].numpy(), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(maps.shape[-1]))
    ax.set_yticks(range(maps.shape[-2]), [f"t={i}" for i in range(maps.shape[-2])])
    ax.set_xlabel("키 위치")
    ax.set_ylabel("쿼리 위치")
    rows = torch.arange(FIRST_SCORED, maps.shape[-1])

    def update(head):
        m = maps[head]
        prev, first = m[rows, rows - 1].mean().item(), m[rows, 0].mean().item()
        im.set_data(m.numpy())
        ax.set_title(f"헤드 {head}: 이전 토큰 {prev:.2f}, 첫 토큰 {first:.2f}")
        return {"map": m.numpy(), "prev": prev, "first": first}

    return update
