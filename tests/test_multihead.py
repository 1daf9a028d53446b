"""Tests of notebook 07's generated code (helpers.lessons.multi_head_attention), its explorer and checkers 07-1, 07-2."""

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from helpers import attention as core
from helpers.data import load_json, load_tensor_dict
from helpers.exercises import check
from helpers.lessons import multi_head_attention as mh
from helpers.widgets import Explorer

pytestmark = pytest.mark.notebook("07")  # `python3 course.py test 07` runs this module


def _torch_pair(c, h, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(c, h, batch_first=True).to(dtype).eval()
    with torch.no_grad():
        ref.in_proj_bias.normal_(0, 0.5)
        ref.out_proj.bias.normal_(0, 0.5)
    return ref, mh.copy_from_torch(mh.MultiHeadAttention(c, h).to(dtype), ref)


@pytest.mark.parametrize("b,t_q,t_k,c,h", [(2, 5, 5, 16, 4), (1, 3, 7, 12, 3), (3, 4, 4, 8, 1), (2, 6, 2, 24, 8)])
def test_lesson_module_equals_torch_and_the_core(b, t_q, t_k, c, h):
    ref, ours = _torch_pair(c, h)
    x, mem = torch.randn(b, t_q, c, dtype=torch.float64), torch.randn(b, t_k, c, dtype=torch.float64)
    want, want_w = ref(x, mem, mem, average_attn_weights=False)
    got, got_w = ours(x, mem)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got_w, want_w)
    hardened = core.MultiHeadAttention(c, h).double().eval()
    hardened.load_state_dict(ours.state_dict())
    torch.testing.assert_close(hardened(x, mem)[0], got)


def test_mask_conventions_of_the_three_functions():
    ref, ours = _torch_pair(16, 4)
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    allowed = core.causal_mask(6)
    torch.testing.assert_close(ours(x, mask=allowed)[0], ref(x, x, x, attn_mask=~allowed)[0])
    q, k, v = (p(x).view(2, 6, 4, 4).transpose(1, 2) for p in (ours.q_proj, ours.k_proj, ours.v_proj))
    torch.testing.assert_close(
        F.scaled_dot_product_attention(q, k, v, attn_mask=allowed),
        torch.softmax((q @ k.transpose(-2, -1) / 2).masked_fill(~allowed, -torch.inf), -1) @ v,
    )


def test_kv_cache_steps_equal_the_causal_pass():
    torch.manual_seed(0)
    m = mh.MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 7, 16)
    with torch.no_grad():
        full = m(x, mask=core.causal_mask(7))[0]
        steps = torch.cat([m(x[:, t : t + 1], x[:, : t + 1])[0] for t in range(7)], dim=1)
    torch.testing.assert_close(steps, full, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("b,n,c,h", [(1, 196, 768, 12), (2, 10, 64, 4), (1, 5, 32, 1)])
def test_cost_formula_matches_flop_counter(b, n, c, h):
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        mh.MultiHeadAttention(c, h)(torch.randn(b, n, c))
    cost = mh.mha_costs(n, c, h, batch=b)
    assert counter.get_total_flops() == cost["matmul_flops"]
    assert cost["weight_floats"] == b * h * n * n and cost["softmax_rows"] == b * h * n


def test_offset_batch_targets():
    x, y = mh.make_offset_batch(50, torch.Generator().manual_seed(3))
    assert x.shape == y.shape == (50, mh.SEQ_LEN)
    for t in range(1, mh.SEQ_LEN):
        assert torch.equal(y[:, t], (x[:, t - 1] - x[:, 0]) % mh.VOCAB)


def test_head_profile_on_an_exact_pattern():
    class Ideal(nn.Module):
        def forward(self, x):
            t = x.shape[1]
            prev = torch.zeros(t, t)
            prev[torch.arange(1, t), torch.arange(t - 1)] = 1.0
            prev[0, 0] = 1.0
            first = torch.zeros(t, t)
            first[:, 0] = 1.0
            y = (x.roll(1, dims=1) - x[:, :1]) % mh.VOCAB
            return F.one_hot(y, mh.VOCAB).float(), torch.stack([prev, first]).expand(x.shape[0], 2, t, t)

    x, y = mh.make_offset_batch(20, torch.Generator().manual_seed(0))
    acc, maps, profile = mh.head_profile(Ideal(), x, y)
    assert acc == 1.0 and maps.shape == (2, mh.SEQ_LEN, mh.SEQ_LEN)
    torch.testing.assert_close(profile, torch.tensor([[1.0, 0.0], [0.0, 1.0]]))


def test_short_training_specializes_the_two_heads():
    model, losses = mh.train_offset_model(2, steps=150, seed=0)
    x, y = mh.make_offset_batch(500, torch.Generator().manual_seed(7))
    acc, _, profile = mh.head_profile(model, x, y)
    assert losses[-1] < 0.05 * losses[0] and acc >= 0.99
    assert sorted(profile.argmax(1).tolist()) == [0, 1] and profile.max(1).values.min() > 0.8


def test_stored_models_match_the_stored_table():
    runs = load_json("multihead_runs.json")
    assert runs["produced_by"]["script"] == "scripts/train_multihead.py"
    x, y = mh.make_offset_batch(runs["test_size"], torch.Generator().manual_seed(runs["test_seed"]))
    for h in (1, 2):
        model = mh.OffsetModel(h)
        model.load_state_dict(load_tensor_dict(f"multihead_offset_h{h}.pt"))
        acc, _, profile = mh.head_profile(model.eval(), x, y)
        record = next(r for r in runs["runs"] if r["num_heads"] == h and r["seed"] == 0)
        assert acc == record["accuracy"]
        torch.testing.assert_close(profile, torch.tensor(record["profile"]), atol=1e-4, rtol=0)


def test_role_swap_checkpoints_match_their_note_and_the_table():
    """07 reads the 2-head seeds 1 and 4 row by row from these files: each matches the profile recorded with it
    (its own set-up) exactly and the table's run of that seed (another CPU) within 0.01."""
    runs = load_json("multihead_runs.json")
    x, y = mh.make_offset_batch(runs["test_size"], torch.Generator().manual_seed(runs["test_seed"]))
    notes = {n["file"]: n for n in runs["checkpoints"]}
    for seed in (1, 4):
        note = notes[f"multihead_offset_h2_seed{seed}.pt"]
        assert note["threads"] == 1 and note["cpu_capability"]
        model = mh.OffsetModel(2)
        model.load_state_dict(load_tensor_dict(note["file"]))
        acc, _, profile = mh.head_profile(model.eval(), x, y)
        record = next(r for r in runs["runs"] if r["num_heads"] == 2 and r["seed"] == seed)
        assert acc == note["accuracy"] == record["accuracy"] == 1.0
        torch.testing.assert_close(profile, torch.tensor(note["profile"]), atol=1e-4, rtol=0)
        torch.testing.assert_close(profile, torch.tensor(record["profile"]), atol=0.01, rtol=0)


def test_head_explorer_updates_in_place():
    maps = torch.softmax(torch.randn(3, 8, 8), dim=-1)
    fig, ax = plt.subplots(figsize=(4.8, 3.8), dpi=72)
    explorer = Explorer(fig, mh.head_panel(ax, maps), {"head": widgets.IntSlider(value=0, min=0, max=2)})
    image, first_png = ax.images[0], explorer.png
    explorer.set(head=2)
    assert list(ax.images) == [image] and explorer.renders == 2 and explorer.png != first_png
    torch.testing.assert_close(torch.as_tensor(image.get_array()), maps[2])
    rows = torch.arange(2, 8)
    assert explorer.last["prev"] == pytest.approx(maps[2][rows, rows - 1].mean().item())
    assert ax.get_title().startswith("헤드 2:")
    plt.close("all")


# --------------------------------------------------------------------------- exercises


def _assemble(mistake=None, order=(0, 1, 2), fixed_h=None):
    def fn(m, x):
        b, t, c = x.shape
        h = fixed_h or m.num_heads
        d = c // h
        bias = None if mistake == "no_in_bias" else m.in_proj_bias
        parts = F.linear(x, m.in_proj_weight, bias).chunk(3, dim=-1)
        q, k, v = (parts[i] for i in order)
        if mistake == "split":
            q, k, v = (y.reshape(b, h, t, d) for y in (q, k, v))
        else:
            q, k, v = (y.view(b, t, h, d).transpose(1, 2) for y in (q, k, v))
        heads = torch.softmax(q @ k.transpose(-2, -1) / (c if mistake == "scale" else d) ** 0.5, -1) @ v
        if mistake == "order":
            heads = heads.flip(1)
        merged = heads.reshape(b, t, c) if mistake == "merge" else heads.transpose(1, 2).reshape(b, t, c)
        if mistake == "no_out_bias":
            return merged @ m.out_proj.weight.T
        return m.out_proj(merged)

    return fn


@pytest.mark.parametrize(
    "kind,phrase",
    [
        ("scale", "√C"),
        ("split", "transpose(1, 2)"),
        ("merge", "곧바로 reshape"),
        ("order", "거꾸로"),
        ("no_in_bias", "in_proj_bias"),
        ("no_out_bias", "out_proj.bias"),
    ],
)
def test_check_07_1_diagnoses_each_mistake(kind, phrase):
    r = check("07-1", _assemble(kind))
    assert not r.passed and phrase in r.message, r.message


def _assemble_with(in_transposed=False, out_transposed=False, scale_c=False, in_bias=True):
    def fn(m, x):
        b, t, c = x.shape
        h = m.num_heads
        d = c // h
        ws, bs = m.in_proj_weight.chunk(3), m.in_proj_bias.chunk(3)
        q, k, v = ((x @ (w if in_transposed else w.T)) + (bb if in_bias else 0) for w, bb in zip(ws, bs))
        q, k, v = (y.view(b, t, h, d).transpose(1, 2) for y in (q, k, v))
        heads = torch.softmax(q @ k.transpose(-2, -1) / (c if scale_c else d) ** 0.5, -1) @ v
        merged = heads.transpose(1, 2).reshape(b, t, c)
        w_o = m.out_proj.weight
        return merged @ (w_o if out_transposed else w_o.T) + m.out_proj.bias

    return fn


def test_check_07_1_names_a_weight_used_without_its_transpose():
    assert check("07-1", _assemble_with()).passed
    r = check("07-1", _assemble_with(in_transposed=True))
    assert not r.passed and "x @ W.T + b" in r.message and "Q·K·V" in r.message, r.message
    r = check("07-1", _assemble_with(out_transposed=True))
    assert not r.passed and "m.out_proj.weight를 전치하지" in r.message, r.message


def test_check_07_1_names_two_mistakes_at_once():
    r = check("07-1", _assemble_with(scale_c=True, in_bias=False))
    assert not r.passed and "두 가지가 겹쳤습니다" in r.message, r.message
    assert "√C" in r.message and "in_proj_bias" in r.message, r.message


def test_check_07_1_names_an_output_weight_pair_and_rewords_the_fallback():
    good = _assemble()
    r = check("07-1", lambda m, x: (good(m, x), None))
    assert not r.passed and "(출력, 가중치)" in r.message, r.message
    r = check("07-1", lambda m, x: x)
    assert "하나나 둘만으로는 설명되지 않습니다" in r.message and "는 아닙니다" not in r.message, r.message


def test_check_07_1_names_a_missing_scale_and_a_causal_mask():
    def sdpa(m, x, **kwargs):
        b, t, c = x.shape
        q, k, v = (
            y.unflatten(-1, (m.num_heads, -1)).transpose(1, 2)
            for y in F.linear(x, m.in_proj_weight, m.in_proj_bias).chunk(3, dim=-1)
        )
        return m.out_proj(F.scaled_dot_product_attention(q, k, v, **kwargs).transpose(1, 2).flatten(2))

    assert check("07-1", sdpa).passed
    r = check("07-1", lambda m, x: sdpa(m, x, scale=1.0))
    assert not r.passed and "나누지 않았습니다" in r.message, r.message
    r = check("07-1", lambda m, x: sdpa(m, x, is_causal=True))
    assert not r.passed and "인과 마스크" in r.message, r.message


def test_check_07_1_survives_an_answer_that_changes_the_module():
    """A learner's m.float() (in place) or an in-place edit of m's weights gets a message, not a traceback."""
    good = _assemble()
    r = check("07-1", lambda m, x: good(m.float(), x.float()))  # no traceback; rounding-level: passes or says float32
    assert r.passed or ("float32" in r.message and "m.num_heads" not in r.message), r.message

    def zero_bias(m, x):
        with torch.no_grad():
            m.in_proj_bias.zero_()
        return good(m, x)

    r = check("07-1", zero_bias)
    assert not r.passed and "in_proj_bias" in r.message, r.message


def test_check_07_1_other_answers():
    assert check("07-1", _assemble()).passed
    assert "순서가 틀렸습니다" in check("07-1", _assemble(order=(1, 0, 2))).message
    assert "m.num_heads" in check("07-1", _assemble(fixed_h=3)).message
    assert "모양" in check("07-1", lambda m, x: x[:, 0]).message
    assert "다릅니다" in check("07-1", lambda m, x: x).message
    assert "오류" in check("07-1", lambda m, x: x @ x).message
    assert not check("07-1", lambda m, x: (_ for _ in ()).throw(NotImplementedError)).passed


def test_check_07_1_allows_forward_of_a_submodule():
    def via_out_proj_forward(m, x):  # m.out_proj.forward(merged): a submodule, not the module itself
        b, t, c = x.shape
        q, k, v = (
            y.view(b, t, m.num_heads, -1).transpose(1, 2)
            for y in F.linear(x, m.in_proj_weight, m.in_proj_bias).chunk(3, -1)
        )
        heads = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, -1) @ v
        return m.out_proj.forward(heads.transpose(1, 2).reshape(b, t, c))

    r = check("07-1", via_out_proj_forward)
    assert r.passed, r.message

    def own_forward(mha, x):  # the first parameter's forward, whatever its name: refused from the source
        return mha.forward(x, x, x)[0]

    r = check("07-1", own_forward)
    assert not r.passed and "mha.forward을(를) 불렀습니다" in r.message, r.message


def test_check_07_1_runtime_guard_catches_a_call_the_source_does_not_show():
    def sneaky(mha, x):  # calls the module under another name: no forbidden name is called in the source
        run = mha
        return run(x, x, x)[0]

    r = check("07-1", sneaky)
    assert not r.passed and "모듈 자체를 호출했습니다" in r.message, r.message


@pytest.mark.parametrize(
    "forbidden",
    [
        lambda m, x: m(x, x, x)[0],
        lambda m, x: m(x, x, x, need_weights=False)[0],
        lambda m, x: m.forward(x, x, x)[0],
        lambda m, x: F.multi_head_attention_forward(
            x.transpose(0, 1),
            x.transpose(0, 1),
            x.transpose(0, 1),
            m.embed_dim,
            m.num_heads,
            m.in_proj_weight,
            m.in_proj_bias,
            None,
            None,
            False,
            0.0,
            m.out_proj.weight,
            m.out_proj.bias,
            training=False,
        )[0].transpose(0, 1),
    ],
)
def test_check_07_1_refuses_calling_the_module(forbidden):
    r = check("07-1", forbidden)
    assert not r.passed and "모듈 자체를 호출했습니다" in r.message, r.message
    assert "불렀습니다" in r.message, r.message  # seen in the source by forbid_calls, before anything runs
    assert F.multi_head_attention_forward.__name__ == "multi_head_attention_forward"  # restored after the check
    assert check("07-1", _assemble()).passed  # no hook left behind


def _via_the_lesson_module(m, x):
    return mh.copy_from_torch(mh.MultiHeadAttention(m.embed_dim, m.num_heads).double(), m)(x)[0]


class _Renamed(mh.MultiHeadAttention):  # a subclass under another name: only the run-time guard sees it
    pass


_HIDDEN = {"cls": _Renamed}


def _via_a_renamed_subclass(m, x):
    return _load_and_run(_HIDDEN["cls"](m.embed_dim, m.num_heads).double(), m, x)


def _load_and_run(ours, m, x):
    c = m.embed_dim
    with torch.no_grad():
        for proj, w, b in zip(
            (ours.q_proj, ours.k_proj, ours.v_proj), m.in_proj_weight.chunk(3), m.in_proj_bias.chunk(3)
        ):
            proj.weight.copy_(w)
            proj.bias.copy_(b)
        ours.out_proj.load_state_dict(m.out_proj.state_dict())
    assert ours.q_proj.weight.shape == (c, c)
    return ours(x)[0]


def _native(m, x):
    c, h = m.embed_dim, m.num_heads
    w, b = m.in_proj_weight, m.in_proj_bias
    return torch._native_multi_head_attention(x, x, x, c, h, w, b, m.out_proj.weight, m.out_proj.bias)[0]


@pytest.mark.parametrize(
    "shortcut,phrase",
    [
        (_via_the_lesson_module, "불렀습니다"),
        (_via_a_renamed_subclass, "MultiHeadAttention을 불렀습니다"),
        (_native, "_native_multi_head_attention"),
        (
            lambda m, x: mh.copy_from_torch(mh.MultiHeadAttention(m.embed_dim, m.num_heads).double(), m)(x)[0],
            "불렀습니다",
        ),
    ],
)
def test_check_07_1_refuses_the_notebooks_own_module_and_pytorchs_native_kernel(shortcut, phrase):
    r = check("07-1", shortcut)
    assert not r.passed and phrase in r.message and "MultiHeadAttention" in r.message, r.message
    assert check("07-1", _assemble()).passed  # the global hook is removed after the check


def _gqa(c, h, g, bias):
    kv = g * (c // h)
    return 2 * c * c + 2 * c * kv + ((2 * c + 2 * kv) if bias else 0)


@pytest.mark.parametrize(
    "fn,phrase",
    [
        (lambda c, h, g, bias: 4 * c * c + (4 * c if bias else 0), "C×C로 셌습니다"),
        (lambda c, h, g, bias: 2 * c * c + 2 * c * g * c + ((2 * c + 2 * g * c) if bias else 0), "d = C/h"),
        (lambda c, h, g, bias: _gqa(c, h, g, not bias), "편향"),
        (lambda c, h, g, bias: c * c + 3 * c * g * (c // h) + ((c + 3 * g * (c // h)) if bias else 0), "W^O"),
        (lambda c, h, g, bias: 4 * c * g * (c // h) + (4 * g * (c // h) if bias else 0), "W^Q"),
        (lambda c, h, g, bias: 7, "정답은"),
        (lambda c, h, g, bias: _gqa(c, h, g, bias) - (c if bias else 0), "W^O의 편향"),
        (lambda c, h, g, bias: 2 * c * c + 2 * c * g * 128 + ((2 * c + 2 * g * 128) if bias else 0), "128로 고정"),
        (lambda c, h, g, bias: 2 * c * c + 2 * c * g * 8 + ((2 * c + 2 * g * 8) if bias else 0), "정답은"),
        (lambda c, h, g, bias: [1, 2], "숫자 하나"),
    ],
)
def test_check_07_2_wrong_answers(fn, phrase):
    r = check("07-2", fn)
    assert not r.passed and phrase in r.message, r.message


def test_check_07_2_wrong_answer_shows_numbers_with_separators():
    r = check("07-2", lambda c, h, g, bias: 2 * c * c + 2 * c * g * 128 + ((2 * c + 2 * g * 128) if bias else 0))
    assert not r.passed and "= 141,440, 정답은 16,640입니다" in r.message, r.message


def test_check_07_2_accepts_the_formula_and_agrees_with_modules():
    r = check("07-2", _gqa)
    assert r.passed, r.message
    # the success message no longer claims that h does not matter: it shows h changing the count at fixed g
    assert "9,216" in r.message and "10,240" in r.message and "12,288" in r.message, r.message
    assert "줄어드는 것은 키·밸류 쪽(g)뿐" not in r.message
    assert [_gqa(64, h, 2, False) for h in (16, 8, 4)] == [9216, 10240, 12288]
    # g = h is plain multi-head attention: the torch module's count
    assert _gqa(64, 8, 8, True) == sum(p.numel() for p in nn.MultiheadAttention(64, 8).parameters())
