"""Generated from notebooks/src/13_attention_in_vision.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.lessons.masks import MaskedMultiHeadAttention
from helpers.widgets import Explorer


class SqueezeExcitation(nn.Module):
    """SE block: average pool -> Linear(C, C/r) -> ReLU -> Linear(C/r, C) -> sigmoid gates -> rescale."""

    def __init__(self, channels, reduction=4):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):                                             # (B, C, H, W)
        z = x.mean(dim=(2, 3))                                        # (B, C): squeeze
        gates = torch.sigmoid(self.fc2(F.relu(self.fc1(z))))          # (B, C): one gate per channel
        return x * gates[:, :, None, None], gates                     # scale every position of a channel


def make_channel_batch(n, generator=None, channels=8, size=5):
    """Feature maps whose first or second half of channels carries a signal; target = the signal channels only."""
    half = torch.randint(0, 2, (n, 1), generator=generator)                 # (n, 1): which half
    signal = ((torch.arange(channels) >= channels // 2) == half).float()    # (n, C): 1 on that half
    x = torch.randn(n, channels, size, size, generator=generator) + 2.0 * signal[:, :, None, None]
    return x, x * signal[:, :, None, None]                                  # input, target


def train_gate(module, make_batch, steps=200, batch=32, lr=0.05, seed=0):
    """Fit a gate module so that module(x)[0] ≈ target (a reconstruction loss, not a task loss)."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, target = make_batch(batch, gen)
        loss = F.mse_loss(module(x)[0], target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return module.eval(), losses


class SpatialGate(nn.Module):
    """CBAM's spatial branch: [channel mean, channel max] -> k x k conv -> sigmoid, one gate per position."""

    def __init__(self, kernel_size=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, kernel_size, padding=kernel_size // 2)

    def forward(self, x):                                                                 # (B, C, H, W)
        pooled = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], 1)  # (B, 2, H, W)
        gate = torch.sigmoid(self.conv(pooled))                                           # (B, 1, H, W)
        return x * gate, gate                                                             # same gate for every channel


def make_shapes(n, generator=None, size=16, channels=3):
    """Noisy images with one bright rectangle each: images (n, C, size, size) and masks (n, size, size)."""
    hw = torch.randint(3, size // 2 + 1, (n, 2), generator=generator)             # (n, 2): height, width
    corner = (torch.rand(n, 2, generator=generator) * (size - hw + 1)).long()     # (n, 2): top, left
    idx = torch.arange(size)
    rows = (idx >= corner[:, :1]) & (idx < (corner + hw)[:, :1])                   # (n, size)
    cols = (idx >= corner[:, 1:]) & (idx < (corner + hw)[:, 1:])                   # (n, size)
    masks = (rows[:, :, None] & cols[:, None, :]).float()                          # (n, size, size)
    colour = 0.6 + 0.4 * torch.rand(n, channels, 1, 1, generator=generator)
    images = masks[:, None] * colour + 0.25 * torch.randn(n, channels, size, size, generator=generator)
    return images, masks


def shape_batch(n, generator=None):
    """(images, images with only the rectangle kept): the spatial gate's reconstruction target."""
    x, masks = make_shapes(n, generator)
    return x, x * masks[:, None]


def patchify(images, patch):  # (B, C, H, W) or (C, H, W) -> (B, N, C·P·P) or (N, C·P·P)
    x = images[None] if images.dim() == 3 else images
    b, c, h, w = x.shape
    x = x.reshape(b, c, h // patch, patch, w // patch, patch)   # (B, C, gh, P, gw, P)
    x = x.permute(0, 2, 4, 1, 3, 5)                             # (B, gh, gw, C, P, P): grid first
    tokens = x.reshape(b, (h // patch) * (w // patch), c * patch * patch)
    return tokens[0] if images.dim() == 3 else tokens


def unpatchify(tokens, patch, channels, height, width):
    """The inverse of patchify: (B, N, C·P·P) -> (B, C, H, W)."""
    b = tokens.shape[0]
    x = tokens.reshape(b, height // patch, width // patch, channels, patch, patch).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, channels, height, width)


def load_digits_split(test_fraction=0.2, seed=0):
    """sklearn's 8x8 digits in [0, 1]: x_train (n, 1, 8, 8), y_train, x_test, y_test; a fixed split."""
    from importlib.util import find_spec  # sklearn's import takes seconds: read its small CSV directly
    from pathlib import Path

    folder = Path(list(find_spec("sklearn").submodule_search_locations)[0])
    table = torch.from_numpy(np.loadtxt(folder / "datasets" / "data" / "digits.csv.gz", delimiter=",", dtype=np.float32))
    x, y = table[:, :64].reshape(-1, 1, 8, 8) / 16.0, table[:, 64].long()  # pixels 0..16 -> [0, 1]
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_test = round(len(y) * test_fraction)
    return x[order[n_test:]], y[order[n_test:]], x[order[:n_test]], y[order[:n_test]]


class Block(nn.Module):
    """Pre-norm transformer block: x + MHA(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d_model, num_heads, hidden):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MaskedMultiHeadAttention(d_model, num_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x):                                # (B, 1+N, D)
        out, weights = self.attn(self.norm1(x))          # weights (B, h, 1+N, 1+N)
        x = x + out
        return x + self.mlp(self.norm2(x)), weights


class TinyViT(nn.Module):
    """Patches -> linear embedding, [CLS] token, learned position embeddings -> blocks -> head on [CLS]."""

    def __init__(self, image_size=8, patch=2, channels=1, d_model=16, num_heads=2, depth=2, hidden=32, classes=10):
        super().__init__()
        self.patch, n = patch, (image_size // patch) ** 2
        self.embed = nn.Linear(channels * patch * patch, d_model)          # E, the patch embedding
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d_model))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, d_model))    # one learned vector per position
        self.blocks = nn.ModuleList(Block(d_model, num_heads, hidden) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, classes)

    def forward(self, images):                                         # (B, C, H, W)
        tokens = self.embed(patchify(images, self.patch))              # (B, N, D)
        cls = self.cls.expand(tokens.shape[0], -1, -1)                 # (B, 1, D)
        x = torch.cat([cls, tokens], dim=1) + self.pos                 # (B, 1+N, D)
        maps = []
        for block in self.blocks:
            x, weights = block(x)
            maps.append(weights)                                       # per layer (B, h, 1+N, 1+N)
        return self.head(self.norm(x[:, 0])), maps                     # logits from [CLS]


def draw_patch_grid(ax, image, patch):
    """Grey image, red patch borders and blue token numbers; returns the artists and the counts."""
    img = image[0].numpy()
    g = img.shape[0] // patch
    ax.imshow(img, cmap="gray_r", vmin=0, vmax=1)
    artists = [ax.axhline(k * patch - 0.5, color="tab:red", lw=1.2) for k in range(1, g)]
    artists += [ax.axvline(k * patch - 0.5, color="tab:red", lw=1.2) for k in range(1, g)]
    if g * g <= 16:
        artists += [ax.text(c * patch - 0.4, r * patch - 0.25, str(r * g + c), color="tab:blue", fontsize=8,
                            va="top", ha="left", bbox={"facecolor": "white", "alpha": 0.7, "pad": 0.5, "edgecolor": "none"})
                    for r in range(g) for c in range(g)]
    ax.set_xticks([])
    ax.set_yticks([])
    return artists, {"n_tokens": g * g, "token_dim": patch * patch * image.shape[0]}


def patch_size_explorer(image, sizes=(1, 2, 4, 8)):
    """A patch-size slider: every grid is drawn once; moving the slider only shows one of them."""
    import ipywidgets as widgets

    fig, ax = plt.subplots(figsize=(3.8, 3.8), dpi=80)
    grids = {p: draw_patch_grid(ax, image, p) for p in sizes}

    def update(patch):
        for p, (artists, _) in grids.items():
            for a in artists:
                a.set_visible(p == patch)
        counts = grids[patch][1]
        ax.set_title(f"P={patch}: 패치 {counts['n_tokens']}개, 토큰 차원 {counts['token_dim']}")
        return counts

    slider = widgets.SelectionSlider(options=list(sizes), value=sizes[1], description="패치 크기")
    explorer = Explorer(fig, update, {"patch": slider})
    explorer.image.layout.width = f"{round(fig.get_figwidth() * fig.dpi)}px"  # natural size, not the slide's width
    return explorer


def train_vit(epochs, seed=0, *, lr=3e-3, batch=64, data=None, **model_kw):
    """Adam with a cosine schedule on the digits split; returns (model, per-epoch mean training loss)."""
    x_train, y_train, _, _ = data if data is not None else load_digits_split()
    torch.manual_seed(seed)
    model = TinyViT(**model_kw)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    gen, history = torch.Generator().manual_seed(seed + 1000), []
    for _ in range(epochs):
        model.train()
        order, total = torch.randperm(len(y_train), generator=gen), 0.0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            loss = F.cross_entropy(model(x_train[idx])[0], y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        history.append(total / len(order))
    return model.eval(), history


@torch.no_grad()
def vit_accuracy(model, x, y):
    return (model(x)[0].argmax(-1) == y).double().mean().item()


@torch.no_grad()
def cls_attention(model, images, layer=-1):
    """[CLS] -> patch weights of one layer, mean over heads: (B, N)."""
    return model(images)[1][layer].mean(dim=1)[:, 0, 1:]


def ink_fraction(images, patch):
    """Mean pixel value of every patch: (B, N), 0 for an empty patch."""
    return patchify(images, patch).mean(dim=-1)


def patch_weight_panels(ax_img, ax_w, image, patch, vmax):
    """The digit with its patch grid (grey, left) and one weight per patch (right, its own colour scale).

    Returns (weight image, set_weights(grid, mark, title)) that redraws in place; mark boxes a query patch."""
    img = image[0].numpy()
    g = img.shape[0] // patch
    ax_img.imshow(img, cmap="gray_r", vmin=0, vmax=1)
    for k in range(1, g):
        ax_img.axhline(k * patch - 0.5, color="tab:gray", lw=0.6)
        ax_img.axvline(k * patch - 0.5, color="tab:gray", lw=0.6)
    im = ax_w.imshow(np.zeros((g, g)), cmap="Reds", vmin=0, vmax=vmax)
    boxes = [plt.Rectangle((0, 0), s, s, fill=False, edgecolor="tab:blue", lw=2.5, visible=False)
             for s in (patch, 1)]
    ax_img.add_patch(boxes[0])
    ax_w.add_patch(boxes[1])
    for ax in (ax_img, ax_w):
        ax.set_xticks([])
        ax.set_yticks([])

    def set_weights(grid, mark=None, title=""):
        im.set_data(grid)
        if mark is not None:
            r, c = divmod(mark, g)
            boxes[0].set_xy((c * patch - 0.5, r * patch - 0.5))
            boxes[1].set_xy((c - 0.5, r - 0.5))
        for box in boxes:
            box.set_visible(mark is not None)
        ax_w.set_title(title, fontsize=9)
    return im, set_weights


def weight_rows(images, grids, *, vmax, label, suptitle, top_titles, titles=None, marks=None, figsize=(11, 4.0)):
    """Small multiple: digits on top, one weight grid under each (one colour scale and one colour bar)."""
    fig, axes = plt.subplots(2, len(images), figsize=figsize)
    for i, (image, grid) in enumerate(zip(images, grids)):
        im, set_weights = patch_weight_panels(axes[0, i], axes[1, i], image, 2, vmax)
        set_weights(grid, None if marks is None else marks[i], "" if titles is None else titles[i])
        axes[0, i].set_title(top_titles[i], fontsize=9)
    fig.colorbar(im, ax=axes[1, :], fraction=0.02, pad=0.02, label=label)
    fig.suptitle(suptitle)
    plt.show()


def query_patch_explorer(image, weights, patch, vmax):
    """A query-patch slider: where that patch's query looks (row 1+q of a (1+N, 1+N) map, without [CLS])."""
    import ipywidgets as widgets

    fig, (ax_img, ax_w) = plt.subplots(1, 2, figsize=(6.4, 3.2), dpi=80)
    im, set_weights = patch_weight_panels(ax_img, ax_w, image, patch, vmax)
    fig.colorbar(im, ax=ax_w, fraction=0.046, pad=0.04, label="가중치")
    g = image.shape[-1] // patch

    def update(query):
        row = weights[1 + query, 1:].numpy()  # (N,)
        set_weights(row.reshape(g, g), query, f"패치 {query}의 쿼리 → 패치 (최대 {row.max():.2f})")
        return row

    slider = widgets.IntSlider(value=0, min=0, max=g * g - 1, description="쿼리 패치")
    explorer = Explorer(fig, update, {"query": slider})
    explorer.image.layout.width = f"{round(fig.get_figwidth() * fig.dpi)}px"  # natural size, not the slide's width
    return explorer


def attention_rollout(maps):  # list over layers of (B, h, T, T) -> (B, T, T)
    t = maps[0].shape[-1]
    eye = torch.eye(t)
    rollout = eye.expand(maps[0].shape[0], t, t)         # (B, T, T)
    for a in maps:
        a = 0.5 * a.mean(dim=1) + 0.5 * eye              # heads averaged, residual as identity
        a = a / a.sum(dim=-1, keepdim=True)              # rows sum to 1 again
        rollout = a @ rollout                            # this layer after the earlier ones
    return rollout


def vit_cost(image_size, patch, channels=3, bytes_per_value=4):  # one head, one image, patch tokens only
    n = (image_size // patch) ** 2
    return {"n_tokens": n, "token_dim": channels * patch * patch, "pairs": n * n, "bytes": n * n * bytes_per_value}
