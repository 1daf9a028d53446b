"""Notebook 14's Triton kernels (helpers.lessons.flash_attention_gpu) against PyTorch, under Triton's
interpreter on the CPU (compiled where a CUDA GPU is present); the checked public face
helpers.attention.flash_attention; the tile map; the checkers (helpers.exercises.ex14); and notebook 14
on a machine without Triton (helpers.kernels)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import matplotlib
import pytest
import torch
import torch.nn.functional as F

matplotlib.use("Agg")

import helpers  # noqa: E402,F401  (sets TRITON_INTERPRET before triton is imported)
from helpers import kernels  # noqa: E402
from helpers.exercises import check  # noqa: E402

pytest.importorskip("triton", reason="Triton has wheels for Linux x86_64 only")

from helpers import attention  # noqa: E402
from helpers.lessons import flash_attention_gpu as fa  # noqa: E402

pytestmark = pytest.mark.notebook("14")  # `python3 course.py test 14` runs this module

ROOT = Path(__file__).resolve().parents[1]
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
BOUND = {torch.float32: 5e-6, torch.float16: 1.5e-2}


def _inputs(shape, dtype, seed, grad=False):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=gen).to(DEVICE, dtype).requires_grad_(grad) for _ in range(3)]


def _reference(q, k, v, causal, d_o=None):
    """float64 SDPA and, with d_o, its autograd gradients."""
    ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
    out = F.scaled_dot_product_attention(*ref, is_causal=causal)
    if d_o is None:
        return out.detach(), None
    out.backward(d_o.double())
    return out.detach(), [r.grad for r in ref]


CASES = [  # (B, h, N, d): N a multiple of the tiles, and not; one tile; every head size
    (1, 1, 64, 16),
    (2, 3, 33, 32),
    (1, 2, 130, 64),
    (1, 1, 97, 128),
    (3, 1, 1, 16),
    (1, 1, 5, 32),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", CASES, ids=lambda s: "x".join(map(str, s)))
def test_forward_and_all_three_gradients_equal_pytorch(shape, causal, dtype):
    seed = sum(shape) * 7 + causal
    q, k, v = _inputs(shape, dtype, seed, grad=True)
    d_o = torch.randn(shape, generator=torch.Generator().manual_seed(seed + 1)).to(DEVICE, dtype)
    out = fa.flash_attention(q, k, v, causal)
    out.backward(d_o)
    want, grads = _reference(q, k, v, causal, d_o)
    assert out.dtype == dtype and out.shape == q.shape
    assert (out.double() - want).abs().max() < BOUND[dtype]
    for name, mine, ref in zip("qkv", (q.grad, k.grad, v.grad), grads):
        assert mine.dtype == dtype
        err = (mine.double() - ref).abs().max().item()
        assert err < BOUND[dtype], f"d{name}: {err:.2e}"


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_saved_logsumexp_is_the_rows_logsumexp(causal):
    q, k, v = _inputs((2, 2, 75, 32), torch.float32, 3)
    _, lse = fa.flash_forward(q, k, v, causal)
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(32)
    if causal:
        scores = scores.masked_fill(torch.ones(75, 75, dtype=torch.bool, device=DEVICE).triu(1), -math.inf)
    assert lse.dtype == torch.float32 and lse.shape == (2, 2, 75)
    assert (lse.double() - torch.logsumexp(scores, dim=-1)).abs().max() < 1e-5


def test_large_scores_do_not_overflow():
    q, k, v = _inputs((1, 1, 40, 16), torch.float32, 5)
    q = q * 30  # scores of several hundred: e^s overflows float32 without the running max
    out = fa.flash_attention(q, k, v, True)
    want, _ = _reference(q, k, v, True)
    assert torch.isfinite(out).all() and (out.double() - want).abs().max() < 1e-5


def test_the_gradient_check_can_fail():
    """A backward without D (the softmax Jacobian's row term) gives dQ off by far more than the bound."""
    q, k, v = _inputs((1, 1, 50, 16), torch.float64, 9)
    d_o = torch.randn(1, 1, 50, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(2)).to(DEVICE)
    p = torch.softmax(q @ k.transpose(-2, -1) / 4, dim=-1)
    right = p * (d_o @ v.transpose(-2, -1) - (d_o * (p @ v)).sum(-1, keepdim=True))
    wrong = p * (d_o @ v.transpose(-2, -1))
    assert ((wrong - right) @ k / 4).abs().max() > 100 * BOUND[torch.float32]


def test_tile_config_is_fixed_and_fits_the_kernel():
    for d in (16, 32, 64, 128):
        for dtype in (torch.float32, torch.float16):
            for device in ("cpu", "cuda"):
                cfg = fa.tile_config(d, dtype, torch.device(device))
                assert set(cfg) == {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"}
                assert all(v & (v - 1) == 0 for k, v in cfg.items() if k.startswith("BLOCK"))  # powers of two
                assert cfg["BLOCK_M"] >= 16 and cfg["BLOCK_N"] >= 16  # tl.dot needs 16


# --------------------------------------------------------------------------- the checked public face


def test_public_flash_attention_is_the_lesson_function_behind_checks():
    q, k, v = _inputs((1, 2, 50, 32), torch.float32, 11, grad=True)
    out = attention.flash_attention(q, k, v, causal=True)
    want, _ = _reference(q, k, v, True)
    assert (out.double() - want).abs().max() < 5e-6
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
    assert attention.flash_attention.__wrapped__ is fa.flash_attention
    assert "flash_attention" in attention.__all__


def _ok(shape=(1, 1, 8, 16), dtype=torch.float32):
    return [torch.randn(shape).to(DEVICE, dtype) for _ in range(3)]


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: (*_ok((8, 16)),), ValueError, "(B, h, N, d)"),
        (lambda: (*_ok()[:2], torch.randn(1, 1, 9, 16).to(DEVICE)), ValueError, "one shape"),
        (lambda: (*_ok()[:2], torch.randn(1, 1, 8, 16, dtype=torch.float16).to(DEVICE)), ValueError, "one dtype"),
        (lambda: (*_ok((1, 1, 8, 16), torch.float64),), ValueError, "dtype must be one of"),
        (lambda: (*_ok((1, 1, 8, 48)),), ValueError, "head size d must be one of"),
        (lambda: (*_ok((1, 1, 8, 8)),), ValueError, "head size d must be one of"),
        (lambda: (*_ok((1, 1, 0, 16)),), ValueError, "at least 1"),
        (
            lambda: (*_ok((1, 1, 16, 8))[:0], *[x.transpose(-2, -1) for x in _ok((1, 1, 16, 16))]),
            ValueError,
            "contiguous",
        ),
        (lambda: (_ok()[0] * math.nan, *_ok()[1:]), ValueError, "NaN"),
        (lambda: ([[1.0]], *_ok()[1:]), TypeError, "torch.Tensor"),
        (lambda: (*_ok()[:2], torch.ones(1, 1, 8, 16, dtype=torch.long).to(DEVICE)), ValueError, "floating-point"),
    ],
    ids=[
        "3d",
        "shape",
        "dtype-mix",
        "float64",
        "d48",
        "d8",
        "empty",
        "noncontiguous",
        "nan",
        "list",
        "int",
    ],
)
def test_bad_input_gets_a_clear_error(make, error, words):
    with pytest.raises(error) as err:
        attention.flash_attention(*make())
    assert words in str(err.value)


def test_bf16_on_the_cpu_says_why_not():
    if DEVICE.type == "cuda":
        pytest.skip("bf16 runs on a GPU")
    with pytest.raises(ValueError, match="interpreter cannot run it"):
        attention.flash_attention(*_ok(dtype=torch.bfloat16))


def test_causal_must_be_a_bool():
    with pytest.raises(TypeError, match="causal must be True or False"):
        attention.flash_attention(*_ok(), causal=1)


# --------------------------------------------------------------------------- the tile map and its explorer


def _kernel_visits(n, block_m, block_n, causal):
    visits = 0
    for i in range(math.ceil(n / block_m)):
        visits += len(range(0, min((i + 1) * block_m, n) if causal else n, block_n))
    return visits


@pytest.mark.parametrize("n", [1, 63, 64, 100, 448, 1024])
@pytest.mark.parametrize("tiles", [(32, 32), (64, 32), (128, 64), (16, 64)])
@pytest.mark.parametrize("causal", [False, True])
def test_tile_map_counts_what_the_kernel_loop_visits(n, tiles, causal):
    grid = fa.tile_map(n, *tiles, causal)
    assert int((grid > 0).sum()) == _kernel_visits(n, *tiles, causal)
    # a block is partial exactly when some of its scores are thrown away
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if grid[i, j] == 0:
                continue
            rows = range(i * tiles[0], (i + 1) * tiles[0])  # padded rows past N are computed and dropped
            keys = range(j * tiles[1], (j + 1) * tiles[1])
            kept = all(row < n and key < n and (not causal or key <= row) for row in rows for key in keys)
            assert (grid[i, j] == 1) == kept


def test_tile_explorer_updates_in_place(monkeypatch):
    pytest.importorskip("ipywidgets")
    explorer = fa.tile_explorer()
    first = explorer.png
    explorer.set(n=128, causal=False, tiles="32×32")
    assert explorer.png != first
    ax = explorer.figure.axes[0]
    title = ax.get_title()
    assert "N = 128" in title and "16/16" in title and "100%" in title
    assert ax.get_xlim() == ax.get_ylim()[::-1] == (0, 512), "the axes stay at token positions 0..512"
    assert tuple(ax.images[0].get_extent()) == (0, 128, 128, 0), "N = 128 fills 4×4 blocks of 32 tokens"
    assert len(ax.collections[0].get_segments()) == 3 + 3, "white lines between the 4×4 blocks"
    explorer.set(n=448, causal=True, tiles="128×64")
    assert "19/28" in ax.get_title() and tuple(ax.images[0].get_extent()) == (0, 448, 512, 0), "rows past N"
    assert ax.lines[0].get_xydata().tolist() == [[448, 0], [448, 448], [0, 448]], "the dashed line at N"
    blits = []  # each render's answer from _blit_or_not: True = drawn over kept pixels (not called: drawn whole)
    blit = type(explorer)._blit_or_not
    monkeypatch.setattr(type(explorer), "_blit_or_not", lambda *a: blits.append(blit(*a)) or blits[-1])
    for change in (
        {"n": 256},
        {"tiles": "32×32"},
        {"causal": False},
        {"tiles": "64×32"},
        {"tiles": "128×64"},
        {"n": 192},
    ):
        blits.clear()
        explorer.set(**change)  # no control changes the axes: every move redraws over a kept background
        assert blits == [True], f"{change} drew the figure whole"
        assert ax.get_xlim() == (0, 512) and ax.get_ylim() == (512, 0)
        assert explorer.png == explorer.render_png(full=True)
    assert explorer._blit_state is True


# --------------------------------------------------------------------------- the checkers


def _causal_blocks(n, bm, bn):
    t, r = n // bm, bm // bn
    return r * t * (t + 1) // 2


tm = fa.tile_map  # an alias the checker must still see through


def _via_alias(n, bm, bn):
    return int((tm(n, bm, bn, True) > 0).sum())


def _loop_answer(n, bm, bn):
    return sum((bm // bn) * (i + 1) for i in range(n // bm))


def test_14_1_accepts_closed_forms_and_names_each_shortcut():
    import numpy as np

    assert check("14-1", _causal_blocks).passed
    assert check("14-1", lambda n, bm, bn: (bm // bn) * (n // bm) * (n // bm + 1) / 2).passed
    assert check("14-1", lambda n, bm, bn: np.int64(_causal_blocks(n, bm, bn))).passed
    assert check("14-1", lambda n, bm, bn: np.array([_causal_blocks(n, bm, bn)])).passed
    assert check("14-1", lambda n, bm, bn: torch.tensor(float(_causal_blocks(n, bm, bn)))).passed
    assert check("14-1", lambda n, bm, bn: (n * n / (bm * bn) + n / bn) / 2).passed  # the same, expanded
    wrong = {
        "비인과": lambda n, bm, bn: (n // bm) * (n // bn),
        "절반은 지름길": lambda n, bm, bn: (n // bm) * (n // bn) / 2,
        "r(i + 1)": lambda n, bm, bn: (n // bm) * (n // bm + 1) // 2,
        "빼먹었습니다": lambda n, bm, bn: (bm // bn) * (n // bm) * (n // bm - 1) // 2,
        "점수 쌍": lambda n, bm, bn: n * (n + 1) // 2,
        "숫자 하나": lambda n, bm, bn: "72",
        "tile_map": lambda n, bm, bn: int((fa.tile_map(n, bm, bn, True) > 0).sum()),
        "tm(= tile_map)": _via_alias,
        "반복이 있습니다": _loop_answer,
        "커널의 반복을 세면": lambda n, bm, bn: 3,
    }
    for words, fn in wrong.items():
        result = check("14-1", fn)
        assert not result.passed and words in result.message, (words, result.message)


def _recompute(s, lse, causal):
    p = torch.exp(s - lse[:, None])
    return p.masked_fill(torch.ones_like(p, dtype=torch.bool).triu(1), 0.0) if causal else p


def _manual_softmax(s, causal):
    e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
    if causal:
        e = e * torch.ones_like(e).tril()
    return e / e.sum(dim=-1, keepdim=True)


def test_14_2_accepts_exp_of_s_minus_l_and_diagnoses_mistakes():
    assert check("14-2", _recompute).passed
    assert check("14-2", lambda s, lse, causal: _recompute(s, lse, causal).tolist()).passed
    assert check(
        "14-2", lambda s, lse, causal: torch.exp(s - lse.unsqueeze(-1)).tril() if causal else s.sub(lse[:, None]).exp()
    ).passed
    wrong = {
        "열마다": lambda s, lse, causal: torch.exp(s - lse[None, :]),
        "exp2": lambda s, lse, causal: torch.exp2(s - lse[:, None]),
        "가려진 자리": lambda s, lse, causal: torch.exp(s - lse[:, None]),
        "None": lambda s, lse, causal: None,
        "모양": lambda s, lse, causal: torch.exp(s - lse[:, None])[:, :1],
        "softmax": lambda s, lse, causal: torch.softmax(s, dim=-1),
        "행의 합": lambda s, lse, causal: torch.exp(s),
        "e배 작아지지": lambda s, lse, causal: _manual_softmax(s, causal),
        "float32": lambda s, lse, causal: _recompute(s, lse, causal).float(),
    }
    for words, fn in wrong.items():
        result = check("14-2", fn)
        assert not result.passed and words in result.message, (words, result.message)


def _tf32(x):
    bits = x.view(torch.int32)
    return ((bits + 0xFFF + ((bits >> 13) & 1)) & ~0x1FFF).view(torch.float32)


def _tf32_without_carry(x):
    bits = x.view(torch.int32)
    mantissa = ((bits & 0x7FFFFF) + 0xFFF + ((bits >> 13) & 1)) & 0x7FE000  # the carry out of bit 22 is lost
    return ((bits & ~0x7FFFFF) | mantissa).view(torch.float32)


def test_14_3_compares_bits_and_names_truncation_half_up_and_float16():
    result = check("14-3", _tf32)
    assert result.passed and "2e-6" in result.message
    wrong = {
        "버림": lambda x: (x.view(torch.int32) & ~0x1FFF).view(torch.float32),
        "짝수": lambda x: ((x.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32),
        "float16": lambda x: x.half().float(),
        "None": lambda x: None,
        "dtype": lambda x: _tf32(x).double(),
        "개 값이 다릅니다": lambda x: ((x.view(torch.int32) + 0x800) & ~0xFFF).view(torch.float32),
        "자리올림": _tf32_without_carry,
    }
    for words, fn in wrong.items():
        result = check("14-3", fn)
        assert not result.passed and words in result.message, (words, result.message)


def test_the_reference_tf32_keeps_ten_mantissa_bits():
    x = torch.randn(1000)
    t = _tf32(x)
    assert (t.view(torch.int32) & 0x1FFF).eq(0).all()
    assert ((t - x).abs() <= x.abs() * 2**-11 * (1 + 1e-6)).all()  # half a unit in the 10th bit


# --------------------------------------------------------------------------- no Triton: notebook 14 still runs


def test_skipping_follows_names_from_cell_to_cell():
    skip = kernels.SkipCellsWithoutTriton()
    assert skip.needs_triton("import triton\nX = 1\n")
    assert skip.needs_triton("y = X + 1\n")  # X came from a skipped cell
    assert not skip.needs_triton("X = 2\nprint(X)\n")  # this cell defines X itself
    assert not skip.needs_triton("print(X)\n")  # ... so X exists from now on
    assert skip.needs_triton("z = tl.arange(0, 4)\n")
    assert skip.needs_triton("from helpers.lessons.flash_attention_gpu import tile_map\n")
    assert not skip.needs_triton("%matplotlib inline\n")
    assert skip(["import triton\n"]) == ['print("(Triton이 없어 이 셀은 건너뜁니다: 커널이 필요한 셀입니다.)")\n']


def test_the_missing_triton_message_says_what_to_do():
    message = kernels.triton_missing_message()
    assert "Triton" in message and ("Linux(x86_64·aarch64)" in message or "requirements.txt" in message)


def test_notebook_14_runs_without_triton_and_without_a_traceback(tmp_path):
    """A fake `triton` that fails to import, as on macOS: every cell runs, no error, the note is printed."""
    nbclient = pytest.importorskip("nbclient")
    import jupytext

    fake = tmp_path / "fake" / "triton"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("no Triton wheel for this platform (test)")\n')
    nb = jupytext.read(ROOT / "notebooks" / "src" / "14_flash_attention_gpu.py", fmt="py:percent")
    env = {"PYTHONPATH": f"{fake.parent}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1"}
    old = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        nbclient.NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
        ).execute()
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            assert out["output_type"] != "error", f"a cell failed: {out.get('ename')}: {out.get('evalue')}"
            texts.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")))
    shown = "\n".join(texts)
    assert "Triton이 없습니다" in shown and "건너뜁니다" in shown
    assert "✅" in shown  # the exercises still check (their checkers need no Triton)
    assert "저장된 GPU 결과" in shown


def test_importing_helpers_does_not_import_triton(fresh_imports):
    assert "triton" not in fresh_imports["helpers"], "import helpers (or helpers.attention) imports triton"


def test_the_lesson_function_accepts_non_contiguous_inputs_forward_and_backward():
    """The notebook's own flash_attention (no checks in front) copies to contiguous memory for both passes."""
    gen = torch.Generator().manual_seed(70)
    base = [torch.randn(1, 70, 2, 32, generator=gen).to(DEVICE).requires_grad_() for _ in range(3)]
    q, k, v = (x.transpose(1, 2) for x in base)  # (1, 2, 70, 32), not contiguous
    d_o = torch.randn(1, 2, 70, 32, generator=gen).to(DEVICE)
    for causal in (False, True):
        for x in base:
            x.grad = None
        fa.flash_attention(q, k, v, causal).backward(d_o)
        want, grads = _reference(q, k, v, causal, d_o)
        for mine, ref in zip((b.grad.transpose(1, 2) for b in base), grads):
            assert (mine.double() - ref).abs().max() < 5e-6


def test_a_wrong_keyword_names_the_public_function():
    with pytest.raises(TypeError, match=r"flash_attention\(\): .*scale.*the signature is flash_attention\(q, k, v"):
        attention.flash_attention(*_ok(), scale=2.0)


def _answers(tmp_path, notebook_cell: str, answers: str) -> dict:
    """A notebook's namespace (module __main__) holding ``notebook_cell``, then the learner's ``answers``
    written to a file (so that the checker can read their source) and run in that namespace."""
    scope = {"__name__": "__main__", "math": math, "torch": torch}
    exec(compile(notebook_cell, "<cell>", "exec"), scope)
    answer = tmp_path / "answer.py"
    answer.write_text(answers)
    exec(compile(answers, str(answer), "exec"), scope)
    return scope


def _refused(scope, cases):
    for name, words in cases:
        result = check("14-1", scope[name])
        assert not result.passed and words in result.message, (name, result.message)


def test_14_1_rejects_the_notebooks_own_tile_map_and_hidden_loops(tmp_path):
    """In the notebook tile_map is defined by a cell (module __main__): still 6절's function, still refused."""
    import inspect

    scope = _answers(
        tmp_path,
        inspect.getsource(fa.tile_map),
        "def via_tile_map(n, bm, bn):\n    return int((tile_map(n, bm, bn, True) > 0).sum())\n\n"
        "def via_range(n, bm, bn):\n    return (bm // bn) * sum(range(1, n // bm + 1))\n\n"
        "def recursive(n, bm, bn):\n    return 0 if n <= 0 else recursive(n - bm, bm, bn) + (bm // bn) * (n // bm)\n",
    )
    _refused(scope, (("via_tile_map", "tile_map"), ("via_range", "range 호출"), ("recursive", "재귀")))


def test_14_1_refuses_tile_map_by_name_where_the_lesson_module_cannot_load(tmp_path):
    """Without Triton the lesson module does not import, so a notebook's tile_map is known by its name only."""
    scope = _answers(
        tmp_path,
        "def tile_map(n, block_m, block_n, causal):\n    return torch.ones(1)\n",  # not the lesson's code
        "def direct(n, bm, bn):\n    return int(tile_map(n, bm, bn, True).sum())\n\n"
        "def by_key(n, bm, bn):\n    return int(globals()['tile_map'](n, bm, bn, True).sum())\n\n"
        "def helper(n, bm):\n    return sum(i for i in range(n // bm))\n\n"
        "def via_helper(n, bm, bn):\n    return (bm // bn) * (helper(n, bm) + n // bm)\n",
    )
    _refused(scope, (("direct", "tile_map"), ("by_key", "tile_map"), ("via_helper", "helper 안의")))


def test_14_1_accepts_a_closed_form_that_imports_math_inside(tmp_path):
    answer = "def f(n, bm, bn):\n    import math\n\n    return (bm // bn) * math.comb(n // bm + 1, 2)\n"
    assert check("14-1", _answers(tmp_path, "", answer)["f"]).passed
