"""Notebook 13 (attention in vision): SE channel gates, a CBAM-style spatial gate, ViT patches,
a tiny ViT on the 8×8 digits, the cost of N² over patches, the two widgets and the checkers."""

from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import MultiHeadAttention, _positive_int
from .exercises import Wrong, _as_tensor, _call, exercise
from .plots import to_numpy

__all__ = [
    "SqueezeExcitation", "bam_gate", "SpatialGate", "make_shapes", "train_spatial_gate",
    "patchify", "unpatchify", "vit_cost", "load_digits_split", "TinyViT", "train_vit",
    "vit_accuracy", "cls_attention", "ink_fraction", "draw_patch_grid", "draw_patch_attention",
    "draw_query_attention", "patch_size_explorer", "query_patch_explorer",
]


def _tensor(name: str, x, dims: tuple[int, ...]) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.dim() not in dims:
        want = " or ".join(str(d) for d in dims)
        raise ValueError(f"{name} must have {want} dimensions, got shape {tuple(x.shape)}")
    return x


# --------------------------------------------------------------------------- channel attention


class SqueezeExcitation(nn.Module):
    """SE block: average pool → Linear(C, C/r) → ReLU → Linear(C/r, C) → sigmoid gates → rescale."""

    def __init__(self, channels: int, reduction: int = 4):
        super().__init__()
        channels, reduction = _positive_int("channels", channels), _positive_int("reduction", reduction)
        if reduction > channels:
            raise ValueError(f"reduction ({reduction}) must not exceed channels ({channels})")
        self.channels = channels
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x: torch.Tensor):
        """Return ``(x * gates, gates)``: output (B, C, H, W), one gate in (0, 1) per channel (B, C)."""
        _tensor("x", x, (4,))
        if x.shape[1] != self.channels:
            raise ValueError(f"x must have {self.channels} channels (B, C, H, W), got shape {tuple(x.shape)}")
        squeezed = x.mean(dim=(2, 3))  # (B, C): one number per channel
        gates = torch.sigmoid(self.fc2(F.relu(self.fc1(squeezed))))  # (B, C), independent per channel
        return x * gates[:, :, None, None], gates


def bam_gate(channel_logits: torch.Tensor, spatial_logits: torch.Tensor) -> torch.Tensor:
    """BAM's gate σ(M_c + M_s): (B, C) and (B, H, W) logits broadcast to (B, C, H, W); apply as x·(1 + gate)."""
    _tensor("channel_logits", channel_logits, (2,))
    _tensor("spatial_logits", spatial_logits, (3,))
    if channel_logits.shape[0] != spatial_logits.shape[0]:
        raise ValueError(f"batch sizes differ: channel_logits {tuple(channel_logits.shape)}, "
                         f"spatial_logits {tuple(spatial_logits.shape)}")
    return torch.sigmoid(channel_logits[:, :, None, None] + spatial_logits[:, None])  # (B, C, H, W)


# --------------------------------------------------------------------------- spatial attention


class SpatialGate(nn.Module):
    """CBAM-style spatial gate: [channel mean, channel max] → k×k conv → sigmoid, one gate per position."""

    def __init__(self, kernel_size: int = 7):
        super().__init__()
        kernel_size = _positive_int("kernel_size", kernel_size)
        if kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd so the map keeps its size, got {kernel_size}")
        self.conv = nn.Conv2d(2, 1, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor):
        """Return ``(x * gate, gate)``: output (B, C, H, W) and the gate map (B, 1, H, W)."""
        _tensor("x", x, (4,))
        pooled = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)  # (B, 2, H, W)
        gate = torch.sigmoid(self.conv(pooled))  # (B, 1, H, W)
        return x * gate, gate


def make_shapes(n: int, size: int = 16, channels: int = 3, seed: int = 0):
    """Noisy images with one bright rectangle each: images (n, C, size, size) and masks (n, size, size)."""
    n, size, channels = (_positive_int(k, v) for k, v in (("n", n), ("size", size), ("channels", channels)))
    if size < 6:
        raise ValueError(f"size must be at least 6 to hold a rectangle, got {size}")
    gen = torch.Generator().manual_seed(seed)
    hw = torch.randint(3, size // 2 + 1, (n, 2), generator=gen)  # (n, 2): height and width
    corner = (torch.rand(n, 2, generator=gen) * (size - hw + 1)).long()  # (n, 2): top and left
    idx = torch.arange(size)
    rows = (idx >= corner[:, :1]) & (idx < (corner + hw)[:, :1])  # (n, size)
    cols = (idx >= corner[:, 1:]) & (idx < (corner + hw)[:, 1:])  # (n, size)
    masks = (rows[:, :, None] & cols[:, None, :]).float()  # (n, size, size)
    colour = 0.6 + 0.4 * torch.rand(n, channels, 1, 1, generator=gen)  # (n, C, 1, 1)
    noise = 0.25 * torch.randn(n, channels, size, size, generator=gen)
    images = masks[:, None] * colour + noise  # (n, C, H, W)
    return images, masks


def train_spatial_gate(steps: int = 100, seed: int = 0, kernel_size: int = 7, batch: int = 32):
    """Fit a SpatialGate so that x·gate keeps the rectangle and removes the noise; return (gate, losses)."""
    steps = _positive_int("steps", steps)
    torch.manual_seed(seed)
    module = SpatialGate(kernel_size)
    opt = torch.optim.Adam(module.parameters(), lr=0.05)
    x_all, mask_all = make_shapes(steps * batch, seed=seed + 1)  # every step sees new images
    losses = []
    for step in range(steps):
        x, mask = x_all[step * batch:(step + 1) * batch], mask_all[step * batch:(step + 1) * batch]
        out, _ = module(x)
        loss = F.mse_loss(out, x * mask[:, None])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return module.eval(), losses


# --------------------------------------------------------------------------- patches and cost


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """(B, C, H, W) or (C, H, W) → (B, N, C·P·P) or (N, C·P·P); patches row by row, each flattened as (c, row, col)."""
    _tensor("images", images, (3, 4))
    patch = _positive_int("patch", patch)
    single = images.dim() == 3
    x = images[None] if single else images  # (B, C, H, W)
    b, c, h, w = x.shape
    if h % patch or w % patch:
        raise ValueError(f"image size {h}×{w} is not divisible by the patch size {patch}")
    gh, gw = h // patch, w // patch
    x = x.reshape(b, c, gh, patch, gw, patch)  # (B, C, gh, P, gw, P)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, gh, gw, C, P, P): grid first, then one patch's pixels
    tokens = x.reshape(b, gh * gw, c * patch * patch)  # (B, N, C·P·P)
    return tokens[0] if single else tokens


def unpatchify(tokens: torch.Tensor, patch: int, channels: int, height: int, width: int) -> torch.Tensor:
    """The inverse of ``patchify``: (B, N, C·P·P) → (B, C, H, W)."""
    _tensor("tokens", tokens, (3,))
    patch, c = _positive_int("patch", patch), _positive_int("channels", channels)
    h, w = _positive_int("height", height), _positive_int("width", width)
    b, n, dim = tokens.shape
    if h % patch or w % patch or n != (h // patch) * (w // patch) or dim != c * patch * patch:
        raise ValueError(f"tokens {tuple(tokens.shape)} do not fit a {c}×{h}×{w} image with patch {patch}: "
                         f"expected (B, {(h // patch) * (w // patch)}, {c * patch * patch})")
    x = tokens.reshape(b, h // patch, w // patch, c, patch, patch).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, c, h, w)  # (B, C, H, W)


def vit_cost(image_size: int, patch: int, channels: int = 3, bytes_per_value: int = 4) -> dict:
    """Tokens N = (S/P)², token size C·P², pairs N², and bytes of one N×N weight matrix (one head, one image)."""
    s, p = _positive_int("image_size", image_size), _positive_int("patch", patch)
    c, nbytes = _positive_int("channels", channels), _positive_int("bytes_per_value", bytes_per_value)
    if s % p:
        raise ValueError(f"image_size {s} is not divisible by patch {p}")
    n = (s // p) ** 2
    return {"n_tokens": n, "token_dim": c * p * p, "pairs": n * n, "bytes": n * n * nbytes}


# --------------------------------------------------------------------------- tiny ViT on the digits


def _digits_file():
    # Importing sklearn takes seconds; the digits are one small CSV inside its package, read directly.
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("scikit-learn is not installed: run the README's set-up command")
    return Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz"


def load_digits_split(test_fraction: float = 0.2, seed: int = 0):
    """sklearn's 8×8 digits scaled to [0, 1]: (x_train (n, 1, 8, 8), y_train, x_test, y_test), fixed split."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    table = torch.from_numpy(np.loadtxt(_digits_file(), delimiter=",", dtype=np.float32))  # (1797, 65)
    x = table[:, :64].reshape(-1, 1, 8, 8) / 16.0  # (1797, 1, 8, 8): pixels 0..16 → [0, 1]
    y = table[:, 64].long()
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_test = round(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


class _Block(nn.Module):
    """Pre-norm transformer block: x + MHA(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d_model: int, num_heads: int, hidden: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x):
        out, weights = self.attn(self.norm1(x))
        x = x + out
        return x + self.mlp(self.norm2(x)), weights


class TinyViT(nn.Module):
    """Patches → linear embedding, [CLS] token, learned position embeddings → blocks → head on [CLS]."""

    def __init__(self, image_size: int = 8, patch: int = 2, channels: int = 1, d_model: int = 16,
                 num_heads: int = 2, depth: int = 2, hidden: int = 32, classes: int = 10):
        super().__init__()
        image_size, patch = _positive_int("image_size", image_size), _positive_int("patch", patch)
        if image_size % patch:
            raise ValueError(f"image_size {image_size} is not divisible by patch {patch}")
        self.patch, self.n_patches = patch, (image_size // patch) ** 2
        self.embed = nn.Linear(channels * patch * patch, d_model)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d_model))
        self.pos = nn.Parameter(0.02 * torch.randn(1, self.n_patches + 1, d_model))
        self.blocks = nn.ModuleList(_Block(d_model, num_heads, hidden) for _ in range(_positive_int("depth", depth)))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, classes)

    def forward(self, images: torch.Tensor):
        """Return logits (B, classes) and each layer's weights [(B, h, 1+N, 1+N), ...]; token 0 is [CLS]."""
        tokens = self.embed(patchify(images, self.patch))  # (B, N, d)
        cls = self.cls.expand(tokens.shape[0], -1, -1)  # (B, 1, d)
        x = torch.cat([cls, tokens], dim=1) + self.pos  # (B, 1+N, d)
        maps = []
        for block in self.blocks:
            x, weights = block(x)
            maps.append(weights)
        return self.head(self.norm(x[:, 0])), maps


def train_vit(epochs: int, seed: int = 0, *, lr: float = 3e-3, batch: int = 64, data=None, **model_kw):
    """Train a TinyViT with Adam on the digits split; return (model, per-epoch mean training losses)."""
    epochs = _positive_int("epochs", epochs)
    x_train, y_train, _, _ = data if data is not None else load_digits_split()
    torch.manual_seed(seed)
    model = TinyViT(**model_kw)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    gen = torch.Generator().manual_seed(seed + 1000)
    history = []
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
def vit_accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of images classified right."""
    return (model(x)[0].argmax(-1) == y).double().mean().item()


@torch.no_grad()
def cls_attention(model: TinyViT, images: torch.Tensor, layer: int = -1) -> torch.Tensor:
    """[CLS]→patch weights of one layer, averaged over heads: (B, N); each row sums to 1 minus [CLS]→[CLS]."""
    _, maps = model(images)
    return maps[layer].mean(dim=1)[:, 0, 1:]  # (B, N)


def ink_fraction(images: torch.Tensor, patch: int) -> torch.Tensor:
    """Mean pixel value of every patch: (B, N), 0 for an empty patch."""
    return patchify(images, patch).mean(dim=-1)  # (B, N)


# --------------------------------------------------------------------------- drawing


def _image_2d(image) -> np.ndarray:
    img = to_numpy(image)
    if img.ndim == 3 and img.shape[0] == 1:
        img = img[0]
    if img.ndim != 2:
        raise ValueError(f"image must be (H, W) or (1, H, W), got shape {img.shape}")
    return img


def draw_patch_grid(image, patch: int, *, ax=None, title: str | None = None) -> dict:
    """Draw an image with its patch grid and numbered patches; return N and the token size."""
    img = _image_2d(image)
    patch = _positive_int("patch", patch)
    h, w = img.shape
    if h % patch or w % patch:
        raise ValueError(f"image size {h}×{w} is not divisible by the patch size {patch}")
    gh, gw = h // patch, w // patch
    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.6))
    ax.imshow(img, cmap="gray_r", vmin=0, vmax=1)
    for k in range(1, gh):
        ax.axhline(k * patch - 0.5, color="tab:red", linewidth=1.2)
    for k in range(1, gw):
        ax.axvline(k * patch - 0.5, color="tab:red", linewidth=1.2)
    if gh * gw <= 16:
        for r in range(gh):
            for c in range(gw):
                ax.text(c * patch - 0.4, r * patch - 0.25, str(r * gw + c), color="tab:blue",
                        fontsize=8, va="top", ha="left",
                        bbox={"facecolor": "white", "alpha": 0.7, "pad": 0.5, "edgecolor": "none"})
    n, dim = gh * gw, patch * patch
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title or f"P={patch}: 패치 {n}개, 토큰 길이 {dim}")
    return {"n_tokens": n, "token_dim": dim}


def draw_patch_attention(image, weights, patch: int, *, ax=None, title: str | None = None,
                         mark: int | None = None, vmax: float | None = None) -> np.ndarray:
    """Overlay one weight per patch (N,) on the image; return the weights as a (grid, grid) array."""
    img = _image_2d(image)
    w = to_numpy(weights).reshape(-1)
    h, wd = img.shape
    patch = _positive_int("patch", patch)
    gh, gw = h // patch, wd // patch
    if h % patch or wd % patch or len(w) != gh * gw:
        raise ValueError(f"need one weight per patch: {gh * gw} patches of size {patch} in a {h}×{wd} image, "
                         f"got {len(w)} weights")
    grid = w.reshape(gh, gw)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.4, 3.4))
    ax.imshow(img, cmap="gray_r", vmin=0, vmax=1)
    ax.imshow(np.kron(grid, np.ones((patch, patch))), cmap="Reds", alpha=0.55, vmin=0,
              vmax=vmax if vmax is not None else max(grid.max(), 1e-9))
    if mark is not None:
        r, c = divmod(int(mark), gw)
        ax.add_patch(plt.Rectangle((c * patch - 0.5, r * patch - 0.5), patch, patch, fill=False,
                                   edgecolor="tab:blue", linewidth=2.5))
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    return grid


def draw_query_attention(image, weights, patch: int, query: int, *, ax=None,
                         vmax: float | None = None) -> np.ndarray:
    """Where patch ``query`` looks: row 1+query of a (1+N, 1+N) map, without [CLS], over the image.

    Pass one ``vmax`` to several panels so that their colours are comparable."""
    w = to_numpy(weights)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be a square (1+N, 1+N) map, got shape {w.shape}")
    n = w.shape[0] - 1
    if isinstance(query, bool) or not isinstance(query, numbers.Integral) or not 0 <= query < n:
        raise ValueError(f"query must be a patch index in [0, {n - 1}], got {query!r}")
    row = w[1 + query, 1:]  # (N,): weights of this patch's query on the patch keys
    return draw_patch_attention(image, row, patch, ax=ax, mark=query, vmax=vmax,
                                title=f"패치 {query}의 쿼리 → 패치 (최대 {row.max():.2f})")


def patch_size_explorer(image, sizes=(1, 2, 4, 8)):
    """A patch-size slider redrawing the patch grid on ``image``."""
    import ipywidgets as widgets

    slider = widgets.SelectionSlider(options=list(sizes), value=sizes[1] if len(sizes) > 1 else sizes[0],
                                     description="패치 크기", continuous_update=False)

    def redraw(patch):
        draw_patch_grid(image, patch)
        plt.show()

    out = widgets.interactive_output(redraw, {"patch": slider})
    return widgets.VBox([slider, out])


def query_patch_explorer(image, weights, patch: int, vmax: float | None = None):
    """A query-patch slider redrawing where that patch attends over the image (one colour scale if ``vmax``)."""
    import ipywidgets as widgets

    n = to_numpy(weights).shape[0] - 1
    slider = widgets.IntSlider(value=0, min=0, max=n - 1, description="쿼리 패치", continuous_update=False)

    def redraw(query):
        draw_query_attention(image, weights, patch, query, vmax=vmax)
        plt.show()

    out = widgets.interactive_output(redraw, {"query": slider})
    return widgets.VBox([slider, out])


# --------------------------------------------------------------------------- exercises


def _example_features() -> torch.Tensor:
    gen = torch.Generator().manual_seed(13)
    return torch.randn(2, 6, 3, 3, generator=gen, dtype=torch.float64)  # (B, C, H, W)


def _example_weights():
    gen = torch.Generator().manual_seed(31)
    w1 = torch.randn(3, 6, generator=gen, dtype=torch.float64)  # (C/r, C)
    w2 = torch.randn(6, 3, generator=gen, dtype=torch.float64)  # (C, C/r)
    return w1, w2


@exercise("13-1")
def _check_se_gates(fn):
    x = _example_features() + 0.5  # (2, 6, 3, 3); ReLU zeroes 2 of the 6 hidden values, so a missing ReLU shows
    w1, w2 = _example_weights()
    got = _as_tensor(_call(fn, x.clone(), w1, w2, what="se_gates(x, w1, w2)"), "se_gates")
    z = x.mean(dim=(2, 3))  # (B, C)
    want = torch.sigmoid(F.relu(z @ w1.T) @ w2.T)  # (B, C)
    if got.shape == (2, 6, 1, 1):
        got = got.reshape(2, 6)
    if got.shape != want.shape:
        raise Wrong(f"모양이 {tuple(got.shape)}입니다. x가 (B, C, H, W) = (2, 6, 3, 3)이면 게이트는 "
                    f"채널마다 하나, (B, C) = (2, 6)이어야 합니다.")
    if torch.allclose(got, want, atol=1e-6):
        return (f"게이트 합: {[round(v, 2) for v in got.sum(-1).tolist()]} (1이 아님). 시그모이드는 채널마다 "
                "독립인 0~1 사이의 값이라 여러 채널이 함께 켜질 수 있습니다.")
    if torch.allclose(got.sum(-1), torch.ones(2, dtype=torch.float64), atol=1e-6):
        raise Wrong("게이트의 합이 (배치마다) 정확히 1입니다: 소프트맥스를 쓴 것 같습니다. SE는 채널마다 독립인 "
                    "시그모이드를 씁니다. 소프트맥스는 채널끼리 경쟁시켜 여러 채널이 동시에 1에 가까울 수 없게 만듭니다.")
    if torch.allclose(got.sum(0), torch.ones(6, dtype=torch.float64), atol=1e-6):
        raise Wrong("채널마다 배치 방향(dim=0)의 합이 1입니다: 배치 축으로 소프트맥스를 건 것 같습니다. SE의 게이트는 "
                    "이미지마다, 채널마다 독립인 시그모이드입니다. 다른 이미지의 값에 영향을 받으면 안 됩니다.")
    if torch.allclose(got, torch.sigmoid(z @ w1.T @ w2.T), atol=1e-6):
        raise Wrong("두 선형층 사이의 ReLU가 빠졌습니다: 게이트가 sigmoid(W2·W1·z)입니다. 기대값은 sigmoid(W2·ReLU(W1·z))입니다.")
    if torch.allclose(got, torch.sigmoid(F.relu(x.amax(dim=(2, 3)) @ w1.T) @ w2.T), atol=1e-6):
        raise Wrong("채널마다 최댓값으로 압축했습니다. SE의 squeeze는 전역 평균 풀링, x.mean(dim=(2, 3))입니다.")
    if torch.allclose(got, torch.sigmoid(F.relu(x.sum(dim=(2, 3)) @ w1.T) @ w2.T), atol=1e-6):
        raise Wrong("채널마다 합으로 압축했습니다. SE의 squeeze는 합이 아니라 평균(전역 평균 풀링), "
                    "x.mean(dim=(2, 3))입니다. 합을 쓰면 이미지 크기 H·W에 따라 게이트가 달라집니다.")
    if torch.allclose(got, torch.sigmoid(F.relu(z @ w1.T @ w2.T)), atol=1e-6):
        raise Wrong("ReLU를 W2 뒤에 걸었습니다: 게이트가 sigmoid(ReLU(W2·W1·z))라 0.5 아래로 내려가지 못합니다. "
                    "ReLU는 두 선형층 사이, sigmoid(W2·ReLU(W1·z))입니다.")
    if torch.allclose(got, F.relu(z @ w1.T) @ w2.T, atol=1e-6):
        raise Wrong("마지막 시그모이드가 빠졌습니다: 게이트가 0~1 사이가 아닙니다 "
                    f"(최소 {got.min().item():.2f}, 최대 {got.max().item():.2f}).")
    if got.min() <= 0 or got.max() >= 1:
        raise Wrong(f"게이트가 (0, 1) 밖의 값을 가집니다 (최소 {got.min().item():.2f}, 최대 {got.max().item():.2f}). "
                    "마지막 활성화는 tanh나 ReLU가 아니라 시그모이드입니다.")
    bad = (got - want).abs().argmax().item()
    b, c = divmod(bad, 6)
    raise Wrong(f"배치 {b}, 채널 {c}의 게이트가 {got[b, c].item():.4f}인데 기대값은 {want[b, c].item():.4f}입니다. "
                "순서: 평균 풀링 → W1 → ReLU → W2 → 시그모이드.")


@exercise("13-2")
def _check_patchify(fn):
    img = torch.arange(3 * 4 * 6, dtype=torch.float64).reshape(3, 4, 6)  # (C, H, W), every value unique
    got = _as_tensor(_call(fn, img.clone(), 2, what="my_patchify(img, 2)"), "my_patchify")
    want = patchify(img, 2)  # (6, 12)
    if got.shape != want.shape:
        hint = ""
        if got.numel() == want.numel():
            hint = " 원소 수는 맞으니 마지막에 (N, C·P·P)로 모으는 reshape를 확인하세요."
        raise Wrong(f"모양이 {tuple(got.shape)}입니다. (C, H, W) = (3, 4, 6), P = 2이면 패치 N = (4/2)·(6/2) = 6개, "
                    f"토큰 길이 C·P·P = 12, 즉 (6, 12)여야 합니다.{hint}")
    if torch.equal(got, want):
        return "(C, H, W) → (N, C·P·P): 패치는 왼쪽 위부터 행 순서, 각 패치는 (채널, 행, 열) 순서로 펼쳤습니다."
    lucid = img.reshape(3, 2, 2, 3, 2).permute(1, 3, 2, 4, 0).reshape(6, 12)  # (p1 p2 c) order
    if torch.equal(got, lucid):
        raise Wrong("패치는 맞게 잘랐지만 한 패치 안의 순서가 (행, 열, 채널)입니다. 이 문제는 (채널, 행, 열) 순서, "
                    "즉 패치 블록 (C, P, P)를 그대로 펼친 것을 요구합니다 (Conv2d 가중치와 같은 순서).")
    if torch.equal(got, img.reshape(6, 12)):
        raise Wrong("이미지를 그대로 reshape 했습니다. 그러면 한 '토큰'에 이미지의 한 줄 반이 들어갑니다. "
                    "(C, H/P, P, W/P, P)로 나눈 뒤 축을 (H/P, W/P, C, P, P) 순서로 옮기고 펼치세요.")
    col_major = img.reshape(3, 2, 2, 3, 2).permute(3, 1, 0, 2, 4).reshape(6, 12)
    if torch.equal(got, col_major):
        raise Wrong("패치 순서가 열 우선입니다 (위에서 아래로 먼저). ViT처럼 왼쪽 위에서 오른쪽으로, 한 줄씩 내려가세요: "
                    "패치 1은 패치 0의 오른쪽 이웃이어야 합니다.")
    row = int((got != want).any(dim=1).nonzero()[0])
    raise Wrong(f"패치 {row}이(가) 다릅니다: {got[row, :4].tolist()}…, 기대값 {want[row, :4].tolist()}…. "
                f"패치 {row}은(는) 이미지의 행 {2 * (row // 3)}–{2 * (row // 3) + 1}, 열 {2 * (row % 3)}–{2 * (row % 3) + 1}입니다.")


@exercise("13-3")
def _check_attention_bytes(fn):
    cases = [(224, 16), (224, 8), (224, 1), (32, 4), (384, 16)]
    for size, p in cases:
        call = f"attention_matrix_bytes({size}, {p})"
        got = _as_tensor(_call(fn, size, p, what=call), "attention_matrix_bytes")
        if got.numel() != 1:
            raise Wrong(f"{call}는 숫자 하나를 돌려줘야 하는데 모양 {tuple(got.shape)}의 값을 돌려줬습니다.")
        got = got.item()
        n = (size // p) ** 2
        want = n * n * 4
        if got == want:
            continue
        hints = {
            n * 4: "행렬은 N×N인데 N개만 셌습니다",
            n * n: "원소 수 N²에서 멈췄습니다. float32 하나는 4바이트입니다",
            n * n * 8: "float64(8바이트)로 셌습니다. float32는 4바이트입니다",
            (n + 1) ** 2 * 4: "[CLS] 토큰까지 셌습니다. 이 문제는 패치 토큰 N개만 셉니다",
            (size * size) ** 2 * 4: "픽셀마다 토큰 하나로 셌습니다. 토큰은 P×P 패치 하나입니다",
        }
        hint = hints.get(got, "")
        reason = f" {hint}." if hint else ""
        raise Wrong(f"{call} = {got:g}, 기대값은 N = ({size}/{p})² = {n}, N²·4 = {want:,}바이트입니다.{reason}")
    return "N = (S/P)², 메모리 = N²·4바이트: P를 절반으로 줄이면 N은 4배, 행렬은 16배가 됩니다."
