"""Generated from notebooks/src/04_scaling_variance.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

import torch


def sample_dot_products(d_k, n, seed=0):
    """n dot products q·k of independent standard-normal q, k of length d_k: shape (n,), float64."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n, d_k, generator=gen, dtype=torch.float64)    # (n, d_k)
    k = torch.randn(n, d_k, generator=gen, dtype=torch.float64)    # (n, d_k)
    return (q * k).sum(dim=-1)                                      # (n,)


DKS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def dot_product_variance(d_ks=DKS, n=10_000):
    """Sample mean and variance of q·k and of q·k/√d_k for each d_k (seed = d_k)."""
    rows = []
    for d_k in d_ks:
        dots = sample_dot_products(d_k, n, seed=d_k)                # (n,)
        rows.append({"d_k": d_k, "mean": dots.mean().item(), "var": dots.var().item(),
                     "var_scaled": (dots / d_k**0.5).var().item()})
    return rows


def softmax_jacobian(w):
    """∂w_i/∂s_j = w_i(δ_ij − w_j) of w = softmax(s), from the weights: (..., T) -> (..., T, T)."""
    return torch.diag_embed(w) - w.unsqueeze(-1) * w.unsqueeze(-2)


SCALES = {"none": lambda d: 1.0, "sqrt": lambda d: d**0.5, "linear": lambda d: float(d)}

def saturation_rows(d_k, scale="sqrt", n_rows=512, n_keys=16, d_v=16, seed=0):
    """Per-row statistics of softmax(q·k / SCALES[scale](d_k)) for random rows (seed + d_k)."""
    if n_keys > 4096:                               # one row's T×T Jacobian (below): over 128 MiB
        raise ValueError(f"n_keys={n_keys}: T×T Jacobian per row over 128 MiB; use n_keys <= 4096")
    if n_rows * n_keys * (d_k + d_v) > 2**24:      # k and v in float64 over 128 MiB: a small kernel may die
        raise ValueError(f"n_rows * n_keys * (d_k + d_v) exceeds 2**24 float64 values (128 MiB): use fewer rows, "
                         f"e.g. n_rows={max(1, 2**24 // (n_keys * (d_k + d_v)))}")
    gen = torch.Generator().manual_seed(seed + d_k)
    q = torch.randn(n_rows, d_k, generator=gen).double().requires_grad_(True)   # (n, d_k)
    k = torch.randn(n_rows, n_keys, d_k, generator=gen).double()                # (n, T, d_k)
    v = torch.randn(n_rows, n_keys, d_v, generator=gen).double()                # (n, T, d_v)
    g = torch.randn(n_rows, d_v, generator=gen).double()                        # (n, d_v): ∂L/∂output
    scores = torch.einsum("nd,ntd->nt", q, k) / SCALES[scale](d_k)              # (n, T)
    scores.retain_grad()                                                         # ∂L/∂s: where saturation acts
    w = torch.softmax(scores, dim=-1)                                            # (n, T)
    out = torch.einsum("nt,ntv->nv", w, v)                                       # (n, d_v)
    (out * g).sum().backward()              # a linear loss: its gradient reaches q only through w
    w, top2 = w.detach(), scores.detach().topk(2, dim=-1).values                 # (n, T), (n, 2)
    jac, step = w.new_empty(n_rows), max(1, 2**21 // n_keys**2)                # (n,)
    for i in range(0, n_rows, step):        # T×T per row: 16 MiB of J at a time (or one row)
        jac[i:i + step] = softmax_jacobian(w[i:i + step]).flatten(-2).norm(dim=-1)
    return {"entropy": torch.special.entr(w).sum(-1), "max_weight": w.max(-1).values,
            "jacobian": jac, "grad_q": q.grad.norm(dim=-1),
            "grad_s": scores.grad.norm(dim=-1), "top_gap": top2[:, 0] - top2[:, 1]}


def saturation_summary(d_k, scale="sqrt", **kw):
    """Mean entropy and max weight, share of saturated rows (max > 0.99), median ‖J‖, ‖∂L/∂q‖ and ‖∂L/∂s‖."""
    r = saturation_rows(d_k, scale, **kw)
    return {"entropy": r["entropy"].mean().item(), "max_weight": r["max_weight"].mean().item(),
            "saturated": (r["max_weight"] > 0.99).double().mean().item(),
            "jacobian": r["jacobian"].median().item(), "grad_q": r["grad_q"].median().item(),
            "grad_s": r["grad_s"].median().item()}


def dk_panel_data(d_k, n_samples=4000, n_keys=8, n_bins=40):
    """What the d_k explorer draws for one d_k: histograms of q·k and q·k/√d_k, one softmax row."""
    dots = sample_dot_products(d_k, n_samples, seed=d_k)                          # (n,)
    root = d_k**0.5
    gen = torch.Generator().manual_seed(7 * d_k)
    q = torch.randn(d_k, generator=gen, dtype=torch.float64)                       # (d_k,)
    k = torch.randn(n_keys, d_k, generator=gen, dtype=torch.float64)               # (T, d_k)
    raw_edges, scaled_edges = torch.linspace(-100, 100, 2 * n_bins + 1), torch.linspace(-4, 4, n_bins + 1)
    density = lambda x, e: torch.histogram(x.float(), bins=e, density=True).hist   # (bins,)
    return {"d_k": d_k, "std_raw": dots.std().item(), "std_scaled": (dots / root).std().item(),
            "hist_raw": density(dots, raw_edges), "raw_edges": raw_edges,
            "hist_scaled": density(dots / root, scaled_edges), "scaled_edges": scaled_edges,
            "w_raw": torch.softmax(k @ q, -1), "w_scaled": torch.softmax(k @ q / root, -1)}


def dk_explorer_figure(jacobian_raw, jacobian_scaled, figsize=(9.5, 3.8), dpi=72):
    """The d_k explorer's figure, built once; returns (figure, update(d_k)) that redraws in place."""
    import math

    import matplotlib.pyplot as plt

    data = {d: dk_panel_data(d) for d in DKS}                                      # precomputed per d_k
    fig, ((h_raw, h_sc), (row_ax, jac_ax)) = plt.subplots(2, 2, figsize=figsize, dpi=dpi)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.1, top=0.92, wspace=0.22, hspace=0.55)
    first = data[64]
    step_raw = h_raw.stairs(first["hist_raw"].numpy(), first["raw_edges"].numpy(), fill=True, color="tab:gray", alpha=0.7)
    step_sc = h_sc.stairs(first["hist_scaled"].numpy(), first["scaled_edges"].numpy(), fill=True, color="tab:blue", alpha=0.7)
    h_raw.set(xlim=(-100, 100), ylim=(0, 0.21), xticks=[-100, 0, 100], yticks=[])   # few labels: text is
    h_sc.set(xlim=(-4, 4), ylim=(0, 0.62), xticks=[-4, 0, 4], yticks=[])            # most of a redraw
    bars_raw = row_ax.bar([i - 0.2 for i in range(8)], first["w_raw"].tolist(), width=0.4, color="tab:gray")
    bars_sc = row_ax.bar([i + 0.2 for i in range(8)], first["w_scaled"].tolist(), width=0.4, color="tab:blue")
    row_ax.set(ylim=(0, 1.05), yticks=[0, 1], xticks=[], xlabel="키 8개 (회색: 나누지 않음, 파랑: √d_k로 나눔)",
               ylabel="가중치")
    log_d = torch.log2(torch.tensor(DKS, dtype=torch.float64))                    # plain axes: no log-scale ticks
    jac_ax.plot(log_d.tolist(), torch.log10(torch.tensor(jacobian_raw)).tolist(), "o-", color="tab:gray", markersize=3)
    jac_ax.plot(log_d.tolist(), torch.log10(torch.tensor(jacobian_scaled)).tolist(), "o-", color="tab:blue", markersize=3)
    (marker,) = jac_ax.plot([6, 6], [0, 0], "o", color="tab:red", markersize=7)
    jac_ax.set(xticks=[2, 6, 10], xticklabels=["4", "64", "1024"], xlabel="d_k (로그 축)",
               ylim=(-6, 0.2), yticks=[-6, 0], yticklabels=["10⁻⁶", "1"])
    jac_ax.set_title("‖J‖ 중앙값 (로그 축)", fontsize=10)
    for ax in (h_raw, h_sc, row_ax, jac_ax):
        ax.tick_params(labelfontfamily="DejaVu Sans", labelsize=8)   # no Hangul in ticks: skip the font fallback
    jac_at = {d: (math.log10(a), math.log10(b)) for d, a, b in zip(DKS, jacobian_raw, jacobian_scaled)}

    def update(d_k):
        p = data[d_k]
        step_raw.set_data(p["hist_raw"].numpy())
        step_sc.set_data(p["hist_scaled"].numpy())
        for bar, h in zip(bars_raw, p["w_raw"].tolist()):
            bar.set_height(h)
        for bar, h in zip(bars_sc, p["w_scaled"].tolist()):
            bar.set_height(h)
        marker.set_data([math.log2(d_k)] * 2, jac_at[d_k])
        h_raw.set_title(f"q·k: 표준편차 {p['std_raw']:.1f} (√d_k = {d_k**0.5:.1f})", fontsize=10)
        h_sc.set_title(f"q·k/√d_k: 표준편차 {p['std_scaled']:.2f}", fontsize=10)
        row_ax.set_title(f"소프트맥스 한 행 (d_k = {d_k}): 최대 {p['w_raw'].max():.2f} / {p['w_scaled'].max():.2f}",
                         fontsize=10)
        return p

    return fig, update
