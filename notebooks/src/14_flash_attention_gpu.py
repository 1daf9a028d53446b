# %% [markdown]
# # 14. FlashAttention을 GPU 커널로
#
# 08번에서 파이썬 반복문으로 짠 온라인 소프트맥스를 **Triton 커널**로 옮깁니다. 순전파(forward pass) 커널 하나와, FlashAttention([Dao 등 2022](../SOURCES.md))처럼 가중치를 저장하지 않고 재계산(recomputation)하는 역전파(backward pass) 커널 둘을 직접 읽고, GPU가 없는 컴퓨터에서도 Triton의 인터프리터로 같은 커널을 돌려 PyTorch와 값·기울기를 비교합니다.
#
# **학습 목표**
# - GPU의 구조(스트리밍 멀티프로세서, HBM, 공유 메모리와 레지스터)와 Triton 프로그램·그리드를 설명하고, 08번의 파이썬 반복문이 GPU에서 느린 이유를 HBM 읽기·쓰기 양으로 센다.
# - 08번의 온라인 소프트맥스(m, ℓ, exp2 보정)를 한 줄씩 옮긴 순전파 커널을 읽고, 인과·비인과, 타일의 배수가 아닌 N, float32·float16에서 `F.scaled_dot_product_attention`과 비교한다.
# - 역전파를 유도하고(D = rowsum(dO ∘ O)), 저장한 logsumexp로 가중치를 재계산하는 dK·dV 커널과 dQ 커널을 `torch.autograd.Function`으로 묶어 autograd의 기울기와 비교한다.
# - 인과 마스크에서 건너뛰는 키 블록 수를 세고, TF32가 검사를 깨뜨리는 이유를 설명하고, GPU 벤치마크를 어떻게 재고 읽는지 안다.
#
# **선수 지식**: 08번(온라인 소프트맥스, `chunked_attention`, HBM/SRAM), 09번(인과 마스크), 04번(√d_k)
#
# **예상 시간**: 혼자 공부 70분 / 스터디 발표 35분 (제목에 *(건너뛰기 가능)* 이 붙은 절은 발표 시간이 짧으면 건너뜁니다)

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 한 문장으로 시작하세요. "08번의 반복문과 오늘의 커널은 같은 식이다. 다른 것은 반복문의 한 단계가 HBM을 거치느냐, 레지스터 안에서 끝나느냐뿐이다." GPU가 없는 사람도 모든 셀을 돌릴 수 있다는 점(Triton 인터프리터)을 먼저 보여 주세요. 슬라이더 데모는 6절(타일 지도), 손 계산은 4절(역전파의 D)입니다. 시간이 짧으면 *(건너뛰기 가능)* 표시가 붙은 1절의 "반복문이 GPU에서 느린 이유"와 5절(TF32)을 건너뜁니다. 1절을 건너뛰었다면 토론 질문 2·3 전에 1절의 HBM 모형을 한 줄로 소개하세요.

# %% slideshow={"slide_type": "skip"}
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from helpers import seed_everything, setup
from helpers.data import DATA_DIR
from helpers.exercises import check
from helpers.kernels import triton_or_skip
from helpers.lessons.complexity_flash import attention_flops

setup()
torch.set_num_threads(1)
HAVE_TRITON = triton_or_skip()  # no Triton wheel (macOS, Windows): the kernel cells print a note instead

# %% [markdown]
# ## 1. GPU 한 화면
#
# GPU는 작은 계산 묶음을 아주 많이 동시에 돌리는 장치입니다. 어텐션 커널에 필요한 부분만 보면 다음과 같습니다.
#
# | 부분 | 하는 일 | 크기 (H100 SXM, 제조사 사양) |
# |---|---|---|
# | 스트리밍 멀티프로세서(streaming multiprocessor, SM) | 커널의 프로그램(바로 아래 "Triton 프로그램"에서 설명; CUDA의 스레드 블록(thread block))을 받아 실행하는 연산 단위. 자원이 허락하면 여러 개를 동시에. 텐서 코어(tensor core)가 행렬곱을 한다 | 132개 |
# | 레지스터(register) | SM 안, 가장 빠름. 누적기(accumulator) `acc`, `m`, `ℓ`이 여기 산다 | SM마다 256 KB |
# | 공유 메모리(shared memory, 08의 SRAM) | SM 안, 빠름. 타일을 잠시 올려 두는 곳 | SM마다 최대 228 KB |
# | HBM | GPU 본체 메모리, 크고 느림. Q, K, V, O가 사는 곳 | 80 GB, 3.35 TB/s |
#
# fp16 텐서 코어의 행렬곱 최고 성능은 약 989 TFLOP/s입니다(희소성(sparsity)을 쓰지 않는 값, [NVIDIA 2022](../SOURCES.md)). 바이트 하나를 HBM에서 가져오는 동안 수백 FLOP을 할 수 있다는 뜻입니다(아래 출력). 이 숫자들은 제조사 사양입니다. 실제 장치에서 잰 대역폭과 행렬곱 성능은 7절의 벤치마크가 저장합니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Triton 프로그램.** Triton([Tillet 등 2019](../SOURCES.md))에서 커널 코드는 **프로그램**(program) 하나가 할 일을 적은 것입니다. 프로그램 하나는 쿼리 타일 하나를 맡고, `tl.program_id(0)`로 자기가 몇 번째 타일인지 압니다. 실행할 때 프로그램의 개수를 **그리드**(grid)로 정하면, GPU가 프로그램들을 SM에 나눠 동시에 돌립니다. 이 노트북의 순전파 그리드는 (쿼리 타일 수, 배치 × 헤드)입니다.
#
# 프로그램 안에서 `tl.load`는 HBM에서 타일 하나를 읽고 `tl.store`는 씁니다. 그 사이의 계산(`tl.dot`, `tl.exp2`, `tl.max`)은 모두 레지스터와 공유 메모리 안에서 끝납니다. 08번의 반복문과 다른 점이 바로 이것입니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **08번의 반복문이 GPU에서 느린 이유** *(건너뛰기 가능)*. `chunked_attention`의 키 블록 한 단계는 PyTorch 연산 12개(`bmm`, `amax`, `maximum`, 보정값의 뺄셈과 `exp2`, `sub_`, `exp2_`, 곱하기 두 번, `sum`, `add_`, `baddbmm_`)이고, GPU에서는 연산 하나가 커널 하나입니다. 커널이 끝날 때마다 결과는 HBM에 쓰이고 다음 커널이 다시 읽습니다. 점수 블록(쿼리 타일 하나의 512행 × 키 블록 하나의 키 128개)은 `bmm`이 한 번 쓰고, `amax`·`sum`·`baddbmm_`이 한 번씩 읽고, `sub_`·`exp2_`가 한 번씩 읽고 써서 단계마다 8번 HBM을 오갑니다. 이것을 세어, 융합 커널이 Q를 한 번, K·V를 쿼리 타일마다 한 번 읽고 O를 한 번 쓰는 양과 비교합니다(세는 모형이지 측정이 아닙니다. L2 캐시는 무시합니다).

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def loop_hbm_bytes(n, d, tile=512, block=128, bytes_per_value=2):
    """HBM bytes of 08's chunked_attention run op by op on a GPU (one head): per key block the score
    block is written by bmm, read by amax, sum and baddbmm_, read and rewritten by sub_ and exp2_; acc twice."""
    steps = math.ceil(n / tile) * math.ceil(n / block)
    score_block, acc = tile * block, tile * d
    per_step = 8 * score_block + 4 * acc + 2 * block * d + acc  # S 8 passes; acc r/w twice; K, V; the q tile
    return steps * per_step * bytes_per_value


def fused_hbm_bytes(n, d, tile=128, bytes_per_value=2):
    """HBM bytes of one fused forward kernel (one head): every query tile reads all of K and V once."""
    return (math.ceil(n / tile) * 2 * n * d + 2 * n * d) * bytes_per_value + 4 * n  # + Q, O; + L (float32)


# %% slideshow={"slide_type": "subslide"}
for n in (1024, 8192):
    loop, fused = loop_hbm_bytes(n, 64), fused_hbm_bytes(n, 64)
    launches = 12 * math.ceil(n / 512) * math.ceil(n / 128)
    print(f"N = {n:5,d}, d = 64, fp16, 헤드 하나: 반복문 {loop / 2**20:7.1f} MiB, 커널 {launches:5,d}번 실행 | "
          f"융합 커널 {fused / 2**20:6.2f} MiB, 1번 → {loop / fused:.1f}배")
    assert 9 < loop / fused < 11
print(f"바이트당 FLOP(사양): {989e12 / 3.35e12:.0f} (곱셈-덧셈 {989e12 / 3.35e12 / 2:.0f}번)")
seconds_at_3tb = loop_hbm_bytes(8192, 64) * 16 * 4 / 3.35e12  # B·h = 64 heads, at the datasheet bandwidth
print(f"N = 8,192, 배치 4 × 헤드 16: 모형에서 반복문이 HBM을 오가는 시간 {seconds_at_3tb * 1e3:.0f} ms "
      f"(3.35 TB/s 사양 기준), 같은 FLOP을 989 TFLOP/s로 하면 {attention_flops(8192, 64, 16, 4) / 989e12 * 1e3:.2f} ms")
assert seconds_at_3tb > 20 * attention_flops(8192, 64, 16, 4) / 989e12
fused_at_3tb = fused_hbm_bytes(8192, 64) * 16 * 4 / 3.35e12
step_blocks = 16 * 4 * 512 * 128 * 2  # one step's (512, 128) score blocks of all 64 heads, fp16
print(f"같은 모형의 융합 커널: {fused_at_3tb * 1e3:.1f} ms | 반복문 한 단계의 점수 블록(헤드 64개): "
      f"{step_blocks / 2**20:.0f} MiB < L2 50 MB")
assert fused_at_3tb > attention_flops(8192, 64, 16, 4) / 989e12 and step_blocks < 50e6
launch_us = 5  # an assumed few microseconds per kernel launch (not measured here)
print(f"커널 실행 준비 시간(launch overhead, 한 번에 {launch_us} µs로 가정): 12,288번 → {12_288 * launch_us / 1e3:.0f} ms")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 모형에서 반복문은 같은 FLOP을 하면서 HBM을 약 10배 더 오가고, 사양대로라면 HBM을 오가는 시간이 계산 시간의 20배가 넘습니다. 커널 실행 하나에 몇 마이크로초씩 드는 준비 시간도 단계마다 붙어서, 이 크기에서는 HBM 왕복보다 클 수도 있습니다(위 출력의 가정). 융합 커널은 점수 블록을 레지스터 밖으로 내보내지 않으므로 이 비용들이 사라집니다.
#
# 모형은 L2 캐시(50 MB)를 무시했습니다. 이 크기에서 한 단계의 점수 블록은 헤드 64개를 합쳐도 L2에 들어가므로(위 출력), 반복문의 실제 HBM 양은 모형보다 적을 수 있습니다. 같은 모형에서 융합 커널도 K·V를 쿼리 타일마다 다시 읽어 계산 시간보다 긴 값(위 출력)이 나오므로, 여러 프로그램이 같은 K·V를 L2에서 나눠 읽는 것이 융합 커널에도 중요합니다. 실제 배수는 7절처럼 재야 압니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "커널 하나 = HBM 왕복 하나"를 칠판에 적으세요. 반복문의 한 단계에서 점수 블록이 8번 HBM을 오간다는 것을 08번 4절의 코드 줄과 하나씩 짝지어 보여 주면 좋습니다. 제조사 사양이라는 점, L2 캐시(50 MB)가 일부를 흡수한다는 점도 짚으세요: 실제 배수는 모형보다 작을 수 있고, 그래서 7절에서 잽니다.

# %% [markdown]
# ## 2. GPU가 없어도: Triton 인터프리터
#
# Triton은 `TRITON_INTERPRET=1`이 설정되어 있으면 `@triton.jit` 커널을 컴파일하지 않고 **인터프리터**(interpreter)로 돌립니다. 프로그램을 하나씩 차례로 실행하고 `tl.dot`, `tl.exp2` 같은 연산을 NumPy로 계산하므로, CPU 텐서만 있는 컴퓨터에서도 **같은 커널 코드**가 반올림 오차 안에서 같은 답을 냅니다(다른 점은 5절과 토론 질문 4). 느리므로 작은 입력만 씁니다. 이 변수는 `triton`을 처음 import하기 **전에** 정해져야 합니다. `tl.zeros` 같은 Triton 자신의 함수도 import할 때 `@triton.jit` 함수로 정의되기 때문입니다(순서를 바꾸면 `Cannot call @triton.jit'd outside of the scope of a kernel` 오류가 납니다). 그래서 이 과정은 `import helpers`가 가장 먼저 정합니다: CUDA GPU가 없으면 1(인터프리터), 있으면 0(컴파일). 직접 짠 스크립트라면 첫 줄에 `os.environ["TRITON_INTERPRET"] = "1"`을 두세요.
#
# 인터프리터가 하지 못하는 것도 있습니다: bf16 `tl.dot`(틀린 값이 나옴), `@triton.autotune`(GPU 없이 실행 단계에서 실패), TF32(5절). 그래서 이 커널은 타일 크기를 고정하고, CPU에서는 float32와 float16만 씁니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
import math
import os

import torch

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # `import helpers` chose it: 1 without a CUDA GPU

import triton
import triton.language as tl

LOG2E = math.log2(math.e)  # e^x = 2^(x·log2 e), as in 08


def tile_config(d, dtype, device):
    """Fixed tiles (no autotune): (BLOCK_M queries, BLOCK_N keys, warps, pipeline stages) of the forward."""
    if device.type != "cuda":  # the interpreter: warps and stages are ignored, small tiles show the edges
        return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 1}
    if dtype == torch.float32:  # 4-byte tiles: half the size, so they fit in shared memory
        return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4 if d <= 64 else 8, "num_stages": 3}


# %% [markdown] slideshow={"slide_type": "subslide"}
# `tile_config`의 네 숫자가 무엇을 맞바꾸는지:
#
# - **BLOCK_M**(쿼리 타일)이 크면 K와 V를 HBM에서 읽는 횟수(타일 수 $N/B_M$)가 줄지만, 누적기 `acc`($B_M \times d$, float32)가 레지스터를 더 차지합니다. 레지스터가 모자라면 값이 느린 메모리로 밀려납니다(스필, spill).
# - **BLOCK_N**(키 블록)이 크면 `tl.dot` 하나가 커져 텐서 코어가 바빠지지만, 점수 블록 $B_M \times B_N$도 레지스터에 있어야 합니다.
# - **num_warps**: 프로그램 하나를 돌리는 워프(warp, 32스레드 묶음) 수. $d = 128$이면 타일이 커서 8개가 낫습니다.
# - **num_stages**: 다음 키 블록을 미리 공유 메모리로 읽어 두는 단계 수(파이프라이닝, pipelining). 늘리면 기다림이 줄지만 공유 메모리를 더 씁니다.
#
# GPU에서 가장 좋은 값은 장치마다 달라 보통 `@triton.autotune`으로 고릅니다. 여기서는 인터프리터에서도 돌도록 한 가지로 고정했고, 7절의 벤치마크가 이 값으로 잽니다.

# %% [markdown]
# ## 3. 순전파 커널: 08번의 반복문이 그대로
#
# 프로그램 하나가 쿼리 타일 하나($B_M$개 행)를 맡아, 키 블록을 처음부터 끝까지 돌며 08번 3절의 세 상태를 갱신합니다. 점수는 $\log_2 e/\sqrt{d}$를 곱해 밑이 2인 단위로 두고 `exp2`를 씁니다(08번 4절과 같음).
#
# $$m \leftarrow \max(m, \max_j s_j), \quad c = 2^{m_{\text{old}} - m}, \quad \ell \leftarrow c\,\ell + \textstyle\sum_j 2^{s_j - m}, \quad \text{acc} \leftarrow c\,\text{acc} + P V_j$$
#
# 끝나면 $O = \text{acc}/\ell$을 쓰고, 역전파를 위해 행마다 logsumexp 하나 $L = (m + \log_2 \ell)\ln 2$(자연로그 단위)를 저장합니다. 입력은 연속된(contiguous) `(B, h, N, d)` 텐서라서 `(행, 열)`의 주소가 `base + 행·d + 열`입니다. 위치가 N 이상인 키는 `mask=`로 읽지 않고(0으로 채움) 그 점수를 $-\infty$로 두며, 위치가 N 이상인 쿼리 행도 `mask=`로 읽지 않고(0으로 채움) 계산만 한 뒤 결과를 저장하지 않습니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
@triton.jit
def flash_forward_kernel(Q, K, V, O, L, n, qk_scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_m, head = tl.program_id(0) * BLOCK_M, tl.program_id(1).to(tl.int64)  # a query tile, a head
    Q, K, V, O = Q + head * n * D, K + head * n * D, V + head * n * D, O + head * n * D
    rows, dims = start_m + tl.arange(0, BLOCK_M), tl.arange(0, D)  # (BLOCK_M,), (D,)
    in_q = rows[:, None] < n  # (BLOCK_M, 1): rows past N are neither read nor written
    q = tl.load(Q + rows[:, None] * D + dims[None, :], mask=in_q, other=0.0)  # (BLOCK_M, D)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running max, log2 units
    l = tl.zeros([BLOCK_M], tl.float32)  # running sum of 2^(s - m)
    acc = tl.zeros([BLOCK_M, D], tl.float32)  # running weighted sum of values
    end = tl.minimum(start_m + BLOCK_M, n) if CAUSAL else n  # causal: stop at the diagonal
    for start_n in range(0, end, BLOCK_N):
        keys = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
        in_k = keys < n  # the last block may run past N
        k_t = tl.load(K + keys[None, :] * D + dims[:, None], mask=in_k[None, :], other=0.0)
        s = tl.dot(q, k_t, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N), log2
        keep = in_k[None, :] & (keys[None, :] <= rows[:, None]) if CAUSAL else in_k[None, :]
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))  # (BLOCK_M,)
        c = tl.exp2(m - m_new)  # <= 1: rescales the old sums
        p = tl.exp2(s - m_new[:, None])  # (BLOCK_M, BLOCK_N)
        l = l * c + tl.sum(p, axis=1)
        v = tl.load(V + keys[:, None] * D + dims[None, :], mask=in_k[:, None], other=0.0)
        acc = acc * c[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)  # (BLOCK_M, D)
        m = m_new
    o = (acc / l[:, None]).to(O.dtype.element_ty)
    tl.store(O + rows[:, None] * D + dims[None, :], o, mask=in_q)
    tl.store(L + head * n + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < n)  # ·ln 2


# %% [markdown] slideshow={"slide_type": "subslide"}
# 08번 4절의 `chunked_attention`과 줄마다 짝이 맞습니다.
#
# | 08번 (파이썬, PyTorch 연산) | 이 커널 (프로그램 하나) |
# |---|---|
# | `for i in range(0, t_q, QUERY_TILE)` | 그리드의 `tl.program_id(0)`: 타일마다 프로그램 하나, 동시에 |
# | `q = query * scale` | `tl.dot(...) * qk_scale` (같은 $\log_2 e/\sqrt d$) |
# | `torch.bmm(q_i, k_t[:, :, j:j+b])` | `tl.dot(q, k_t)`: 점수 블록은 레지스터에만 |
# | `s.masked_fill_(... , -inf)` | `tl.where(keep, s, -inf)`: 인과 마스크와 N의 끝을 함께 |
# | `c = exp2(m - m_new)`, `l * c + p.sum()` | 같은 식 |
# | `(acc * c).baddbmm_(p, v_j)` | `acc * c[:, None] + tl.dot(p, v)` |
# | `out[:, i:i+n] = acc / l` | `tl.store(..., acc / l)`, 그리고 $L$도 저장 |
#
# 다른 점은 두 가지뿐입니다. 반복 한 단계가 커널 12개(와 그 HBM 왕복)가 아니라 같은 프로그램 안의 몇 줄이라서 점수 블록이 HBM에 가지 않고, 쿼리 타일을 파이썬 반복문이 차례로 도는 대신 그리드의 프로그램들이 동시에 돕니다. 인과일 때 대각선 위의 키 블록을 건너뛰는 것(`end`)은 08번의 `min(t_k, i + n)`과 같습니다. 64비트 주소(`.to(tl.int64)`)는 B·h·N·d가 $2^{31}$을 넘어도 주소가 넘치지 않게 합니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# 커널을 부르는 쪽은 출력과 $L$의 자리를 만들고, 그리드를 정해 실행합니다. `kernel[grid](...)`의 대괄호가 그리드입니다. `PRECISION`은 5절에서 다룹니다.

# %% tags=["save"]
def flash_forward(q, k, v, causal=False):  # (B, h, N, d) each, contiguous
    """Run the forward kernel: O (B, h, N, d) and the row log-sum-exp L (B, h, N), float32."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # addresses are row·d + column
    b, h, n, d = q.shape
    o, lse = torch.empty_like(q), torch.empty(b, h, n, device=q.device, dtype=torch.float32)
    cfg = tile_config(d, q.dtype, q.device)
    grid = (triton.cdiv(n, cfg["BLOCK_M"]), b * h)  # one program per (query tile, head)
    flash_forward_kernel[grid](q, k, v, o, lse, n, LOG2E / math.sqrt(d), D=d, CAUSAL=causal,
                               PRECISION="ieee" if q.dtype == torch.float32 else "tf32", **cfg)
    return o, lse


# %% [markdown] slideshow={"slide_type": "subslide"}
# PyTorch의 `F.scaled_dot_product_attention`과 비교합니다. N = 100과 77은 타일(인터프리터에서 64, GPU fp16에서 128)의 배수가 아니어서 마지막 타일이 넘칩니다. 기준은 float64로 계산하고, 경계만 assert해서 출력합니다(정확한 자릿수는 CPU마다 다릅니다). GPU가 있으면 같은 셀이 컴파일된 커널로 돕니다(이 저장소의 출력은 CPU 인터프리터의 것이고, GPU에서는 아직 돌려 보지 않았습니다).

# %%
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("커널 실행:", "GPU에서 컴파일" if DEVICE.type == "cuda" else "CPU에서 Triton 인터프리터")
seed_everything(14)
worst, bounds = {}, {torch.float32: 2e-6, torch.float16: 4e-3}
for dtype, bound in bounds.items():
    for causal in (False, True):
        for shape in ((1, 2, 100, 32), (2, 1, 77, 64), (1, 1, 40, 16)):
            q, k, v = (torch.randn(shape, device=DEVICE).to(dtype) for _ in range(3))  # (B, h, N, d)
            o, lse = flash_forward(q, k, v, causal)
            ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
            err = (o.double() - ref).abs().max().item()
            worst[(dtype, causal)] = max(err, worst.get((dtype, causal), 0.0))
            assert err < bound, (dtype, causal, shape, err)
for dtype, causal in worst:
    print(f"{str(dtype):13s} 인과={causal!s:5s}: float64 SDPA와 최대 차이 < {bounds[dtype]:.0e}")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 저장한 $L$이 정말 점수 행의 logsumexp인지도 확인합니다. 인과 마스크가 있으면 가려진 키는 합에서 빠집니다.

# %%
q, k, v = (torch.randn(1, 2, 100, 32, device=DEVICE) for _ in range(3))
scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(32)  # (1, 2, 100, 100)
for causal in (False, True):
    _, lse = flash_forward(q, k, v, causal)
    masked = scores.masked_fill(torch.ones(100, 100, dtype=torch.bool, device=DEVICE).triu(1), -math.inf) if causal else scores
    assert (lse.double() - torch.logsumexp(masked, dim=-1)).abs().max() < 1e-5
assert lse.shape == (1, 2, 100) and lse.dtype == torch.float32  # one float32 number per row, whatever the input dtype
print("L = logsumexp(s): 인과·비인과 모두 float64 기준과 차이 < 1e-5")
print("첫 행의 L (인과):", round(lse[0, 0, 0].item(), 4), "= 점수 하나뿐:", round(scores[0, 0, 0, 0].item(), 4))
assert abs(lse[0, 0, 0].item() - scores[0, 0, 0, 0].item()) < 1e-5  # row 0 sees only key 0

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 인과 마스크에서 첫 행은 키 하나만 보므로 L이 그 점수 하나와 같다는 마지막 줄을 짚으세요: "logsumexp는 부드러운 최댓값이다." float16 경계가 float32보다 2000배 큰 이유는 출력 O를 float16으로 저장하기 때문입니다(PV 곱 앞에서 P도 float16으로 바꿉니다): |O|가 2–4이면 float16 반올림(가수 10비트)만으로 최대 약 1e-3이 됩니다. 기준도 같은 float16 입력으로 계산했으므로 입력의 반올림은 차이에 들어가지 않습니다.

# %% [markdown]
# ## 4. 역전파: P를 저장하지 않고 재계산한다
#
# 출력의 기울기 $dO$가 오면 $Q, K, V$의 기울기가 필요합니다. $S = QK^\top/\sqrt d$, $P = \mathrm{softmax}(S)$, $O = PV$에서 연쇄 법칙으로
#
# $$dV = P^\top dO, \qquad dP = dO\,V^\top, \qquad dS_{ij} = P_{ij}\big(dP_{ij} - D_i\big), \qquad dQ = \frac{dS\,K}{\sqrt d}, \qquad dK = \frac{dS^\top Q}{\sqrt d}$$
#
# 입니다. 소프트맥스의 야코비안에서 나오는 $D_i = \sum_j P_{ij}\, dP_{ij}$는 $dP_{ij} = dO_i \cdot v_j$를 넣으면 $dO_i \cdot \sum_j P_{ij} v_j = dO_i \cdot O_i$가 됩니다. 곧 $D = \mathrm{rowsum}(dO \circ O)$: N×N 행렬 없이 행마다 숫자 하나입니다. $P$는 저장한 $L$로 $P_{ij} = e^{S_{ij} - L_i}$처럼 타일마다 다시 만듭니다(재계산, recomputation; 행마다 $L$ 하나만 저장하는 것은 [Dao 2024](../SOURCES.md)의 방식). 먼저 작은 예에서 이 식들이 autograd와 같은지 확인합니다.

# %% slideshow={"slide_type": "subslide"}
seed_everything(4)
q, k, v, d_o = torch.randn(4, 5, 8, dtype=torch.float64).unbind(0)  # (N=5, d=8) each, and dO
q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
o = F.scaled_dot_product_attention(q, k, v)
o.backward(d_o)
with torch.no_grad():
    p = torch.softmax(q @ k.T / math.sqrt(8), dim=-1)  # (5, 5)
    big_d = (d_o * o).sum(-1)  # (5,): D = rowsum(dO ∘ O)
    torch.testing.assert_close(big_d, (p * (d_o @ v.T)).sum(-1), rtol=0, atol=1e-14)  # = Σ_j P_ij dP_ij
    ds = p * (d_o @ v.T - big_d[:, None])  # (5, 5)
    for mine, auto in ((ds @ k / math.sqrt(8), q.grad), (ds.T @ q / math.sqrt(8), k.grad), (p.T @ d_o, v.grad)):
        torch.testing.assert_close(mine, auto, rtol=0, atol=1e-13)
print("dQ, dK, dV 식 = autograd (float64, 차이 < 1e-13)")
print("D =", big_d.numpy().round(3))

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 노트북은 역전파의 일을 키 블록마다 dK·dV, 쿼리 타일마다 dQ로 나눕니다. 일을 나누는 방식은 Triton의 fused attention 튜토리얼([SOURCES.md](../SOURCES.md)의 "튜토리얼과 공개 구현")과 같습니다(튜토리얼은 두 반복문을 한 커널 안에서 프로그램마다 차례로 돌리고, 이 노트북은 읽기 쉽도록 Umar Jamil의 구현처럼 두 커널로 따로 띄웁니다). **dK·dV 커널**은 키 블록 하나를 고정하고 쿼리 타일을 돌며 $dK_j, dV_j$를 레지스터에 누적하고, **dQ 커널**은 쿼리 타일 하나를 고정하고 키 블록을 돌며 $dQ_i$를 누적합니다. 프로그램마다 쓰는 자리가 겹치지 않으므로 원자적 덧셈(atomic add)이 필요 없는 대신, 두 커널이 $S$와 $dP$를 각각 계산하므로 행렬곱이 5개가 아니라 7개입니다. FlashAttention-2의 CUDA 구현([Dao 2024](../SOURCES.md))은 주 반복문을 커널 하나에서 돌며 키 블록마다 dK·dV를 누적하고, dQ는 여러 스레드 블록이 원자적 덧셈으로 더합니다. 두 커널 모두 $P$를 $L$로 재계산하고, 인과일 때 대각선 위의 블록은 건너뜁니다. $D$는 커널 전에 PyTorch 한 줄로 구합니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
@triton.jit
def flash_backward_dkdv_kernel(Q, K, V, dO, L, Delta, dK, dV, n, qk_scale, sm_scale,
                               D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                               CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_n, head = tl.program_id(0) * BLOCK_N, tl.program_id(1).to(tl.int64)  # a key block, a head
    Q, K, V, dO = Q + head * n * D, K + head * n * D, V + head * n * D, dO + head * n * D
    L, Delta = L + head * n, Delta + head * n
    keys, dims = start_n + tl.arange(0, BLOCK_N), tl.arange(0, D)  # (BLOCK_N,), (D,)
    kv, in_k = keys[:, None] * D + dims[None, :], keys[:, None] < n  # (BLOCK_N, D) offsets
    k, v = tl.load(K + kv, mask=in_k, other=0.0), tl.load(V + kv, mask=in_k, other=0.0)
    dk, dv = tl.zeros([BLOCK_N, D], tl.float32), tl.zeros([BLOCK_N, D], tl.float32)
    begin = (start_n // BLOCK_M) * BLOCK_M if CAUSAL else 0  # earlier queries never see it
    for start_m in range(begin, n, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,)
        in_q = rows < n
        q_t = tl.load(Q + rows[None, :] * D + dims[:, None], mask=in_q[None, :], other=0.0)
        do = tl.load(dO + rows[:, None] * D + dims[None, :], mask=in_q[:, None], other=0.0)
        lse = tl.load(L + rows, mask=in_q, other=0.0) * 1.4426950408889634  # log2 units
        delta = tl.load(Delta + rows, mask=in_q, other=0.0)  # (BLOCK_M,)
        keep = in_q[None, :] & (keys[:, None] <= rows[None, :]) if CAUSAL else in_q[None, :]
        s_t = tl.dot(k, q_t, input_precision=PRECISION) * qk_scale  # (BLOCK_N, BLOCK_M) = Sᵀ
        p_t = tl.exp2(tl.where(keep, s_t - lse[None, :], float("-inf")))  # Pᵀ, recomputed from L
        dv += tl.dot(p_t.to(do.dtype), do, input_precision=PRECISION)  # dV = Pᵀ dO
        dp_t = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # dPᵀ = (dO Vᵀ)ᵀ
        ds_t = p_t * (dp_t - delta[None, :])  # dSᵀ = Pᵀ ∘ (dPᵀ − D)
        dk += tl.dot(ds_t.to(q_t.dtype), tl.trans(q_t), input_precision=PRECISION)  # dSᵀ Q
    tl.store(dK + head * n * D + kv, (dk * sm_scale).to(dK.dtype.element_ty), mask=in_k)
    tl.store(dV + head * n * D + kv, dv.to(dV.dtype.element_ty), mask=in_k)


# %% tags=["save"] slideshow={"slide_type": "subslide"}
@triton.jit
def flash_backward_dq_kernel(Q, K, V, dO, L, Delta, dQ, n, qk_scale, sm_scale,
                             D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    start_m, head = tl.program_id(0) * BLOCK_M, tl.program_id(1).to(tl.int64)  # a query tile, a head
    Q, K, V, dO = Q + head * n * D, K + head * n * D, V + head * n * D, dO + head * n * D
    rows, dims = start_m + tl.arange(0, BLOCK_M), tl.arange(0, D)  # (BLOCK_M,), (D,)
    qo, in_q = rows[:, None] * D + dims[None, :], rows[:, None] < n  # (BLOCK_M, D) offsets
    q, do = tl.load(Q + qo, mask=in_q, other=0.0), tl.load(dO + qo, mask=in_q, other=0.0)
    lse = tl.load(L + head * n + rows, mask=rows < n, other=0.0) * 1.4426950408889634  # log2
    delta = tl.load(Delta + head * n + rows, mask=rows < n, other=0.0)  # (BLOCK_M,)
    dq = tl.zeros([BLOCK_M, D], tl.float32)
    end = tl.minimum(start_m + BLOCK_M, n) if CAUSAL else n  # causal: stop at the diagonal
    for start_n in range(0, end, BLOCK_N):
        keys = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
        in_k = keys[None, :] < n
        k_t = tl.load(K + keys[None, :] * D + dims[:, None], mask=in_k, other=0.0)  # (D, BLOCK_N)
        v_t = tl.load(V + keys[None, :] * D + dims[:, None], mask=in_k, other=0.0)  # (D, BLOCK_N)
        keep = in_k & (keys[None, :] <= rows[:, None]) if CAUSAL else in_k
        s = tl.dot(q, k_t, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N)
        p = tl.exp2(tl.where(keep, s - lse[:, None], float("-inf")))  # P, recomputed from L
        dp = tl.dot(do, v_t, input_precision=PRECISION)  # dP = dO Vᵀ
        ds = p * (dp - delta[:, None])  # dS = P ∘ (dP − D)
        dq += tl.dot(ds.to(k_t.dtype), tl.trans(k_t), input_precision=PRECISION)  # dQ = dS K
    tl.store(dQ + head * n * D + qo, (dq * sm_scale).to(dQ.dtype.element_ty), mask=in_q)


# %% [markdown] slideshow={"slide_type": "subslide"}
# 두 커널을 `torch.autograd.Function`으로 묶으면 `loss.backward()`가 이 커널들을 부릅니다. 순전파는 입력 $Q, K, V$ 말고는 $O$와 $L$만 저장합니다: N×N은 어디에도 없습니다. 역전파의 타일은 순전파와 다르게 잡습니다(dK·dV는 키 블록을 크게, dQ는 쿼리 타일을 크게). 고정한 쪽이 누적기가 되기 때문입니다.

# %% tags=["save"] slideshow={"slide_type": "subslide"}
class FlashAttention(torch.autograd.Function):
    """softmax(QKᵀ/√d)V with the Triton kernels above: forward saves O and L, backward recomputes P."""

    @staticmethod
    def forward(ctx, q, k, v, causal):  # (B, h, N, d) each
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # the backward kernels need them too
        o, lse = flash_forward(q, k, v, causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    @torch.autograd.function.once_differentiable  # the kernels have no backward of their own
    def backward(ctx, d_o):
        q, k, v, o, lse = ctx.saved_tensors
        (b, h, n, d), d_o, gpu = q.shape, d_o.contiguous(), q.device.type == "cuda"
        delta = (d_o.float() * o.float()).sum(dim=-1)  # (B, h, N): D = rowsum(dO ∘ O)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        small, big = (32, 128 if d <= 64 else 64) if gpu else (32, 64)  # the fixed side accumulates
        args = (q, k, v, d_o, lse, delta)
        opts = {"D": d, "CAUSAL": ctx.causal, "PRECISION": "ieee" if q.dtype == torch.float32 else "tf32",
                "num_warps": 4 if d <= 64 else 8, "num_stages": 2 if gpu else 1}
        grid, scales = (triton.cdiv(n, big), b * h), (n, LOG2E / math.sqrt(d), 1 / math.sqrt(d))
        flash_backward_dkdv_kernel[grid](*args, dk, dv, *scales, BLOCK_M=small, BLOCK_N=big, **opts)
        flash_backward_dq_kernel[grid](*args, dq, *scales, BLOCK_M=big, BLOCK_N=small, **opts)
        return dq, dk, dv, None


# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 과정의 공개 함수 `helpers.attention.flash_attention`이 부르는 것이 아래 함수입니다(입력 검사를 더해서). 손실 하나를 정해 `backward()`를 부르고, 같은 입력을 float64로 바꿔 PyTorch SDPA와 autograd로 구한 세 기울기와 비교합니다. 인과·비인과, 타일의 배수가 아닌 N(100, 77), float32와 float16입니다. 이 저장소의 출력은 CPU 인터프리터에서 나온 것이고, GPU에서 컴파일된 커널로 이 검사를 돌려 본 적은 아직 없습니다. CPU에서 통과한 검사가 GPU에서 왜 달라질 수 있는지는 5절과 토론 질문 4에서 다룹니다.

# %% tags=["save"]
def flash_attention(q, k, v, causal=False):  # (B, h, N, d) each
    """FlashAttention forward and backward in Triton (compiled on a GPU, interpreted on a CPU)."""
    return FlashAttention.apply(q, k, v, causal)


# %% slideshow={"slide_type": "subslide"}
seed_everything(41)
grad_worst = {}
for dtype, bound in ((torch.float32, 5e-6), (torch.float16, 1e-2)):
    for causal in (False, True):
        for shape in ((1, 2, 100, 32), (2, 1, 77, 16)):
            q, k, v = (torch.randn(shape, device=DEVICE).to(dtype).requires_grad_() for _ in range(3))
            d_o = torch.randn(shape, device=DEVICE).to(dtype)
            flash_attention(q, k, v, causal).backward(d_o)
            ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
            F.scaled_dot_product_attention(*ref, is_causal=causal).backward(d_o.double())
            assert q.grad.dtype == k.grad.dtype == v.grad.dtype == dtype  # gradients in the inputs' dtype
            for name, mine, want in zip("QKV", (q.grad, k.grad, v.grad), (r.grad for r in ref)):
                err = (mine.double() - want).abs().max().item()
                grad_worst[(dtype, causal, name)] = max(err, grad_worst.get((dtype, causal, name), 0.0))
                assert err < bound, (dtype, causal, shape, name, err)
for dtype, bound in ((torch.float32, 5e-6), (torch.float16, 1e-2)):
    print(f"{str(dtype):13s}: dQ, dK, dV가 float64 autograd와 최대 차이 < {bound:.0e} (인과·비인과, N = 100, 77)")

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 비교는 버그를 잡을 수 있을까요? $D$를 빼먹은(소프트맥스 야코비안의 $-P_{ij}P_{ik}$ 항을 빠뜨린) 역전파는 dV는 맞고 dQ·dK만 틀립니다. 위 식으로 직접 확인합니다.

# %%
seed_everything(5)
with torch.no_grad():
    q, k, v, d_o = torch.randn(4, 50, 16, dtype=torch.float64).unbind(0)
    p = torch.softmax(q @ k.T / 4, dim=-1)  # (50, 50), √16 = 4
    o = p @ v
    right = p * (d_o @ v.T - (d_o * o).sum(-1, keepdim=True))  # dS with D
    forgot = p * (d_o @ v.T)  # dS without D
    rel = ((forgot - right) @ k).norm() / (right @ k).norm()
    rel_k = ((forgot - right).T @ q).norm() / (right.T @ q).norm()
print(f"D를 빼먹으면 dQ의 상대 오차 {rel:.0%}, dK {rel_k:.0%}: 반올림 수준(float32 1e-6)과 비교할 수도 없이 커서 검사가 잡습니다")
assert rel > 0.1
assert rel_k > 0.1

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: D_i = dO_i · O_i 유도를 칠판에 한 줄로 쓰세요. "P의 한 행 전체가 필요할 것 같은데, 출력 O가 이미 그 가중합을 갖고 있다"가 핵심입니다. 역전파 커널 두 개를 나누는 이유(누적 대상이 겹치지 않게 프로그램을 나눈다: dK·dV는 키 블록마다, dQ는 쿼리 타일마다)와 그 대가(S와 dP를 두 번 계산: 행렬곱 7개)도 짚으세요. FlashAttention-2의 CUDA 구현은 반대로 커널 하나에서 dQ를 원자적 덧셈으로 더합니다(기본 설정에서는 더하는 순서가 매번 달라 비트 단위로 재현되지 않음; `deterministic` 옵션이 있습니다).

# %% [markdown]
# ## 5. TF32: 같은 커널이 GPU에서 검사에 떨어질 수 있는 이유 *(건너뛰기 가능)*
#
# 커널을 부를 때 float32이면 `PRECISION="ieee"`를 넘겼습니다. Triton의 `tl.dot`은 float32 입력에서 기본으로 **TF32**(TensorFloat-32)를 씁니다. TF32는 float32의 지수 8비트는 그대로 두고 가수(mantissa)를 23비트에서 **10비트**로 줄여 텐서 코어로 곱합니다. 가장 가까운 값으로 반올림하면 상대 오차가 최대 $2^{-11} \approx 4.9\times 10^{-4}$로 float16과 같은 수준이고, 아래 13비트를 그냥 버리면 최대 $2^{-10}$입니다(Triton의 `tl.dot`은 반올림 명령 없이 float32 비트를 넘겨, 아래 13비트가 사실상 버려집니다). 인터프리터는 TF32를 흉내 내지 않으므로(NumPy float32로 곱함), `ieee`를 넘기지 않았다면 CPU에서 통과한 2e-6 검사가 GPU에서만 떨어졌을 것입니다. 연습문제 14-3에서 TF32 반올림을 직접 만들어, 그 크기를 CPU에서 잽니다.

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: "CPU에서 통과한 테스트가 GPU에서 떨어지면 먼저 TF32를 의심하라"를 남기세요. PyTorch도 `torch.backends.cuda.matmul.allow_tf32`로 같은 선택을 합니다(기본은 꺼짐). 학습에서는 TF32로 충분한 경우가 많지만, 정확도 검사에서는 `ieee`를 명시해야 합니다.

# %% [markdown]
# ## 6. 인과 마스크와 타일 건너뛰기: 타일 지도
#
# 인과 어텐션에서 쿼리 $i$는 키 $j \le i$만 봅니다. 프로그램(쿼리 타일) 하나가 도는 키 블록은 대각선을 포함하는 블록에서 끝나므로(`end`), 대각선 위의 블록은 읽지도 계산하지도 않습니다. 대각선에 걸친 블록은 계산하되 일부를 `tl.where`로 버립니다. 아래 함수는 (쿼리 타일, 키 블록)마다 무엇을 하는지 셉니다: 0 = 건너뜀, 1 = 계산한 점수를 모두 사용, 2 = 계산하고 일부 버림(대각선, 또는 위치가 N 이상인 키나 쿼리 행).

# %% tags=["save"] slideshow={"slide_type": "subslide"}
def tile_map(n, block_m, block_n, causal):
    """(query tiles, key blocks) grid of the forward kernel: 0 skipped, 1 computed and all kept,
    2 computed with some scores thrown away (the diagonal, keys past N, or query rows past N)."""
    tiles, blocks = math.ceil(n / block_m), math.ceil(n / block_n)
    grid = torch.zeros(tiles, blocks, dtype=torch.int64)
    for i in range(tiles):
        end = min((i + 1) * block_m, n) if causal else n  # the kernel's loop bound
        for j in range(math.ceil(end / block_n)):
            last_key, first_row = min((j + 1) * block_n, n) - 1, i * block_m
            partial = (j + 1) * block_n > n or (i + 1) * block_m > n or (causal and last_key > first_row)
            grid[i, j] = 2 if partial else 1
    return grid


# %%
dense, causal_grid = tile_map(1024, 128, 64, False), tile_map(1024, 128, 64, True)
visited = int((causal_grid > 0).sum())
print(f"N = 1024, 타일×블록 128×64: 비인과 {int((dense > 0).sum())}개, 인과 {visited}개 방문 "
      f"({visited / dense.numel():.1%}), 그중 계산하고 일부 버리는 블록(주황) {int((causal_grid == 2).sum())}개")
assert int((dense > 0).sum()) == 8 * 16 and visited == 72  # a little more than half (the text's 72 / 128)
useful = 1024 * 1025 // 2  # pairs j <= i
print(f"인과에서 실제로 쓰는 점수 {useful:,}개 / 계산하는 점수 {visited * 128 * 64:,}개 = {useful / (visited * 128 * 64):.1%}")
assert round(useful / (visited * 128 * 64), 2) == 0.89  # the text's 89%

# %% [markdown] slideshow={"slide_type": "subslide"}
# 인과에서는 절반보다 조금 많은 블록(72 / 128)만 계산하고, 계산한 점수의 약 89%를 씁니다. 인과 커널의 처리량은 관례상 실제로 쓰는 쌍만큼, 곧 비인과 FLOP의 절반으로 셉니다(7절의 벤치마크도 그렇게 셉니다). 컨트롤로 N, 인과 여부, 타일×블록(BLOCK_M × BLOCK_N)을 바꿔 보세요. 축은 토큰 위치(0–512)로 고정되어 있어서, N을 줄이면 색칠된 격자가 왼쪽 위 구석으로 줄어들고, 타일×블록을 바꾸면 칸을 나누는 흰 선의 간격이 바뀝니다. 점선은 시퀀스의 끝(위치 N)을 표시합니다(N = 512에서는 테두리와 겹칩니다). N이 쿼리 타일 크기의 배수가 아니면(예: 128×64에서 N = 448) 마지막 쿼리 타일이 점선 아래까지 이어집니다. 가로 점선 아래에 색칠된 행(위치 N 이상)은 범위 밖 행(out-of-range rows)입니다: 텐서 밖의 위치라 읽지 않고 0으로 채워 계산만 하고, 결과는 저장하지 않습니다. 09번의 패딩 행([PAD] 쿼리의 행)은 입력에 있는 위치지만, 이 행은 텐서 밖에 있습니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import matplotlib.pyplot as plt
from matplotlib import patheffects
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.ticker import MultipleLocator

TILE_COLORS = ListedColormap(["#d0d0d0", "#4c72b0", "#dd8452"])
TILE_SHAPES = {"32×32": (32, 32), "64×32": (64, 32), "128×64": (128, 64)}


def tile_map_view(ax, max_n=None):
    """Draw tile_map on ax in token positions, white lines on the query-tile and key-block edges and a dashed
    line at N; update(n, causal, tiles) redraws it in place and returns the counts. With max_n the axes stay at
    0..max_n (rounded up to whole tiles) for every N and tile shape, so no control changes them and each move
    redraws only the map, the lines and the texts; without it they fit the tiles of each N."""
    image = ax.imshow(tile_map(256, 64, 32, False).numpy(), cmap=TILE_COLORS, vmin=0, vmax=2, aspect="auto",
                      interpolation="nearest")
    edges = ax.add_collection(LineCollection([], colors="white", linewidths=0.8), autolim=False)
    (end,) = ax.plot([], [], color="black", linestyle="--", linewidth=1)  # the sequence's end: past it, out-of-range rows
    end_label = ax.text(0, 0, "N ", ha="right", va="top", fontsize=9,
                        path_effects=[patheffects.withStroke(linewidth=2, foreground="white")])  # readable on any cell
    ax.set_xlabel("키 위치 (토큰), 세로 선 사이 = 키 블록")
    ax.set_ylabel("쿼리 위치 (토큰)\n가로 선 사이 = 쿼리 타일 = 프로그램")
    ax.xaxis.set_major_locator(MultipleLocator(128))
    ax.yaxis.set_major_locator(MultipleLocator(128))
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=TILE_COLORS(i), edgecolor="none") for i in range(3)]  # paints once
    ax.legend(handles, ["건너뜀", "모두 사용", "계산하고 일부 버림"], fontsize=8, loc="upper right",
              bbox_to_anchor=(1.0, -0.14), ncol=3, frameon=False)
    if max_n:  # the largest padded extent over the tile shapes: set once, so no move changes the axes
        size = max(math.ceil(max_n / b) * b for shape in TILE_SHAPES.values() for b in shape)
        ax.set(xlim=(0, size), ylim=(size, 0))

    def update(n, causal, tiles):
        block_m, block_n = TILE_SHAPES[tiles]
        grid = tile_map(n, block_m, block_n, causal)  # (query tiles, key blocks)
        height, width = grid.shape[0] * block_m, grid.shape[1] * block_n  # tokens, padded to whole tiles
        image.set_data(grid.numpy())
        image.set_extent((0, width, height, 0))
        edges.set_segments([[(x, 0), (x, height)] for x in range(block_n, width, block_n)]
                           + [[(0, y), (width, y)] for y in range(block_m, height, block_m)])
        end.set_data([n, n, 0], [0, n, n])  # x = N down to the corner, then y = N back to the left edge
        end_label.set_position((n, 0))
        if not max_n:
            ax.set(xlim=(0, width), ylim=(height, 0))
        visited = int((grid > 0).sum())
        useful = n * (n + 1) // 2 if causal else n * n
        view = {"visited": visited, "total": grid.numel(), "used": useful / (visited * block_m * block_n)}
        ax.set_title(f"N = {n}, 타일×블록 {tiles}, {'인과' if causal else '비인과'}\n블록 {visited}/{grid.numel()} 방문, "
                     f"계산한 점수 중 {view['used']:.0%} 사용", fontsize=9)
        return view

    return update


def tile_explorer():
    """Sliders for N, causal and the tile shape over one tile_map_view figure."""
    import ipywidgets as widgets

    from helpers.widgets import Explorer

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=80)
    fig.subplots_adjust(left=0.14, right=0.97, top=0.87, bottom=0.22)
    controls = {"n": widgets.IntSlider(value=512, min=64, max=512, step=64, description="N"),
                "causal": widgets.Checkbox(value=True, description="인과 마스크"),
                "tiles": widgets.Dropdown(options=list(TILE_SHAPES), value="64×32", description="타일×블록")}
    return Explorer(fig, tile_map_view(ax, max_n=controls["n"].max), controls)


# %% tags=["nbval-ignore-output"] slideshow={"slide_type": "subslide"}
tile_explorer()

# %% [markdown] slideshow={"slide_type": "subslide"}
# 정적 버전(슬라이드·PDF용): 같은 `tile_map_view`로 세 설정을 그립니다(타일×블록 = BLOCK_M × BLOCK_N).

# %% slideshow={"slide_type": "subslide"}
settings = [(512, False, "64×32"), (512, True, "64×32"), (448, True, "128×64")]
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
views = [tile_map_view(ax, max_n=512)(*s) for s, ax in zip(settings, axes)]  # the explorer's 0..512 axes
fig.subplots_adjust(left=0.065, right=0.99, top=0.86, bottom=0.24, wspace=0.3)
plt.show()
for (n, causal, tiles), view in zip(settings, views):
    print(f"N = {n}, {tiles}, 인과={causal!s:5s}: 블록 {view['visited']:3d}/{view['total']:3d}, 사용 {view['used']:.1%}")
assert views[0]["used"] == 1.0  # non-causal, N a multiple of both tiles: nothing thrown away
assert views[1]["visited"] == visited  # 512 with 64×32 tiles: the same count as 1024 with 128×64

# %% [markdown] slideshow={"slide_type": "subslide"}
# 타일만 키운 경우(N = 512, 128×64)와 N = 448에서 범위 밖 행을 뺀 경우의 사용 비율은 다음 셀에서, N을 바꿔 가며 본 사용 비율은 그다음 셀에서 셉니다. `used`는 그림 제목의 '사용', 곧 계산한 점수(방문한 블록 수 × $B_M$ × $B_N$) 가운데 쓰는 점수의 몫을 구합니다.

# %%
def used(n, block_m, block_n, causal=True):
    """The share of the scores a kernel computes that it keeps (the title's 사용)."""
    visited = int((tile_map(n, block_m, block_n, causal) > 0).sum())  # blocks computed
    return (n * (n + 1) // 2 if causal else n * n) / (visited * block_m * block_n)


big = tile_map(512, 128, 64, True)  # the tiles alone made bigger, N kept at 512
big_used = used(512, 128, 64)
assert used(512, 64, 32) == views[1]["used"] and used(512, 64, 32, causal=False) == views[0]["used"]  # the titles' 사용
print(f"N = 512, 128×64, 인과=True : 블록 {int((big > 0).sum()):3d}/{big.numel():3d}, 사용 {big_used:.1%} (N은 그대로, 타일만 키움)")
assert views[2]["used"] < big_used < views[1]["used"]  # bigger tiles waste more; N = 448 past the last tile, more still
assert (round(views[1]["used"], 2), round(big_used, 2), round(views[2]["used"], 2)) == (0.89, 0.80, 0.65)  # the text's
query_tiles = math.ceil(448 / 128)  # 4 query tiles reach row 511
out_of_range = (query_tiles * 128 - 448) * 448  # scores of the out-of-range rows 448-511 against the 448 keys
in_range_used = 448 * 449 // 2 / (views[2]["visited"] * 128 * 64 - out_of_range)
print(f"N = 448, 128×64에서 범위 밖 행 {out_of_range // 448}개를 빼고 세면 사용 {in_range_used:.1%}")
assert out_of_range == 64 * 448 and round(in_range_used, 2) == 0.79  # without them: about the 80% at N = 512

# %% slideshow={"slide_type": "subslide"}
saw = [round(100 * used(n, 128, 64)) for n in range(64, 513, 64)]
print(f"128×64, 인과, N = 64, 128, …, 512: 사용 {saw} %")
assert saw == [25, 50, 45, 67, 57, 75, 65, 80]  # the presenter note's sawtooth: out-of-range rows whenever 128 ∤ N
rise = [used(n, 64, 32) for n in range(64, 513, 64)]
assert all(a < b for a, b in zip(rise, rise[1:])) and (round(rise[0], 2), round(rise[-1], 2)) == (0.51, 0.89)  # the note's 51% to 89%
narrow = used(512, 128, 32)
assert round(narrow, 4) == round(big_used, 4)  # the waste depends on B_M only: 128×32 uses the same 80%
waste = 1 - used(8192, 128, 64)  # a (64, 128) tile map
assert abs(waste - 128 / 8192) < 0.05 * 128 / 8192  # at large N the waste is about B_M / N

# %% [markdown] slideshow={"slide_type": "subslide"}
# 쿼리 타일($B_M$)이 클수록 대각선에서 버리는 몫이 커집니다. N = 512에서 타일×블록이 64×32이면 계산한 점수의 89%를, 128×64이면 80%만 씁니다. N이 $B_N$의 배수이고 $B_N$이 $B_M$을 나누면 버리는 몫은 키 블록 크기 $B_N$과 상관없습니다(128×32도 80%). 탐색기의 세 모양은 슬라이더의 어느 N에서나 이 조건을 채웁니다. N이 쿼리 타일 크기의 배수가 아니면 마지막 쿼리 타일이 N을 넘어 더 버립니다. 위의 정적 그림(세 설정) 가운데 오른쪽(N = 448, 128×64)에서 맨 아래 쿼리 타일은 위치 384–511을 맡으므로, 점선 아래의 448–511행은 범위 밖 행이라 계산한 뒤 모두 버립니다. 그래서 사용 비율이 65%로 떨어집니다. 이 범위 밖 행을 빼고 세면 79%로, N = 512, 128×64의 80%(`used`를 정의한 셀 출력의 첫 줄)와 거의 같습니다. 타일이 작을수록 버리는 몫은 줄지만 프로그램이 많아지고 `tl.dot`이 작아집니다. 큰 N에서는 버리는 몫이 대략 $B_M/N$으로 줄어, 버리는 계산만 보면 인과 커널의 처리량이 비인과에 다가갑니다(인과에서는 프로그램마다 일의 양이 달라 긴 프로그램 몇 개만 끝까지 도는 꼬리(tail)가 생기고, 실제 처리량에는 이 꼬리도 들어가므로 7절의 벤치마크로 GPU에서 재야 압니다).

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 기본 타일×블록(64×32)에서 인과 마스크를 켠 채 N을 64에서 512로 올려 보세요. 주황색(대각선) 블록 수는 타일 수에 비례해, 파란색은 대략 그 제곱으로 늘어 "사용" 비율이 51%에서 89%(N = 512)까지 오르며 100%에 다가갑니다. 128×64로 바꾸면 128의 배수가 아닌 N(64, 192, 320, 448)에서 범위 밖 행이 생기고, 앞 값이 있는 192·320·448에서는 바로 앞보다 떨어져 톱니 모양으로 오르내립니다(25, 50, 45, 67, 57, 75, 65, 80%). 연습문제 14-1은 이 방문 수를 반복문 없이 닫힌 식으로 세는 문제입니다.

# %% [markdown]
# ## 7. GPU 벤치마크: 재는 법과 저장된 결과
#
# `scripts/benchmark_gpu.py`가 CUDA GPU에서 단순 구현, SDPA의 네 백엔드(FlashAttention-2, cuDNN, 메모리 효율, math), 08번의 반복문(fp16, N ≤ 8192만), 이 노트북의 커널(순전파, 순전파+역전파)을 fp16·bf16, d = 64·128, 인과·비인과, N = 1K–16K에서 재고 `data/benchmark_gpu.json`에 씁니다. 시간은 `triton.testing.do_bench`(워밍업 뒤 여러 번 잰 중앙값), 처리량은 $4BhN^2d$ FLOP(인과는 절반, 순전파+역전파는 3.5배: 역전파를 행렬곱 5개로 세는 FlashAttention 논문들의 관례)을 시간으로 나눈 값, 메모리는 호출 동안 늘어난 최대 할당량입니다. 장치의 HBM 대역폭(큰 복사)과 행렬곱 최고 성능(큰 `torch.mm`)도 함께 잽니다.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ```bash
# python3 course.py gpu-bench          # CUDA GPU가 있는 기계에서: data/benchmark_gpu.json
# python3 course.py gpu-bench --quick  # GPU 없이: 인터프리터로 작은 크기만 (스크립트 점검용)
# ```

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
import json
import statistics

GPU_METHOD_LABELS = {"triton": "이 노트북의 커널", "triton_full": "이 노트북의 커널(비인과)", "sdpa_flash": "SDPA FlashAttention-2", "sdpa_cudnn": "SDPA cuDNN",
                 "sdpa_efficient": "SDPA 메모리 효율", "sdpa_math": "SDPA math", "naive": "단순 구현",
                 "chunked": "08번 반복문"}


def load_gpu_benchmark(path):
    """The stored benchmark (scripts/benchmark_gpu.py), or None when no GPU run was stored."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def benchmark_series(result, metric, *, dtype, d, causal, mode="forward"):
    """{method: ([N ...], [value ...])} of one setting; metric is "tflops" or "peak_bytes"."""
    series = {}
    for r in result["records"]:
        if (r["dtype"], r["d"], r["causal"], r["mode"]) == (dtype, d, causal, mode) and r.get(metric) is not None:
            xs, ys = series.setdefault(r["method"], ([], []))
            xs.append(r["n"])
            ys.append(r[metric])
    return series


def draw_gpu_benchmark(result, axes, *, dtype="float16", d=64, causal=False):
    """TFLOP/s and peak extra memory vs N of every method, on two axes."""
    for ax, metric in zip(axes, ("tflops", "peak_bytes")):
        for method, (xs, ys) in benchmark_series(result, metric, dtype=dtype, d=d, causal=causal).items():
            scale = 1 if metric == "tflops" else 2**-20
            ax.plot(xs, [y * scale for y in ys], "o-", label=GPU_METHOD_LABELS.get(method, method), lw=2.5 if method == "triton" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("시퀀스 길이 N")
        if metric == "peak_bytes":
            ax.set_yscale("log")
    axes[0].set_ylabel("TFLOP/s")
    axes[1].set_ylabel("최대 추가 메모리 (MiB)")
    axes[0].legend(fontsize=7)
    axes[0].set_title(f"{result['device']}: {dtype}, d = {d}, {'인과' if causal else '비인과'}", fontsize=9)


# %%
gpu_result = load_gpu_benchmark(DATA_DIR / "benchmark_gpu.json")
if gpu_result is None:
    print("저장된 GPU 결과가 아직 없습니다: data/benchmark_gpu.json이 없습니다.")
    print("이 과정의 저장소를 만든 기계에는 GPU가 없었습니다. 숫자는 GPU가 있는 기계에서 잰 뒤에만 싣습니다.")
    print("CUDA GPU가 있으면 `python3 course.py gpu-bench`로 재고, 이 셀을 다시 실행하면 아래에 그림이 나옵니다.")
else:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    draw_gpu_benchmark(gpu_result, axes)
    fig.tight_layout()
    plt.show()
    print(f"장치: {gpu_result['device']} | 잰 HBM 대역폭 {gpu_result['bandwidth_gbps']:,.0f} GB/s, 행렬곱 "
          f"{gpu_result['matmul_tflops']['float16']:.0f} TFLOP/s (fp16)")
assert gpu_result is None or gpu_result["records"]

# %% [markdown] slideshow={"slide_type": "subslide"}
# 이 노트북의 역전파는 행렬곱이 7개라서, 위 관례(5개)로 센 순전파+역전파 처리량은 실제로 한 일을 약 1.3배(4.5/3.5) 적게 셉니다. 측정이 없는 동안 이 노트북은 GPU에서 잰 숫자를 하나도 주장하지 않습니다(1절의 숫자는 사양과 모형입니다). 측정이 생기면 위 셀이 처리량과 메모리를 N에 대해 그리고, 아래 셀이 비율을 계산합니다: 이 노트북의 커널 ÷ SDPA의 FlashAttention-2 백엔드, ÷ cuDNN 백엔드(순전파), 순전파+역전파의 같은 비율, 인과 ÷ 비인과(모두 N ≥ 4096에서의 중앙값). 그 비율은 **그 GPU 하나의** 측정입니다.

# %% tags=["save"] jupyter={"source_hidden": true} slideshow={"slide_type": "skip"}
def benchmark_ratios(result, *, dtype="float16", min_n=4096):
    """Medians over N >= min_n: ours ÷ SDPA's FlashAttention-2 and cuDNN backends, per (d, mode, causal);
    and ours causal ÷ ours non-causal (TFLOP/s counted on the unmasked half), per (d, mode)."""
    table = {}
    for d in sorted({r["d"] for r in result["records"]}):
        for mode in ("forward", "forward_backward"):
            ours = {}
            for causal in (False, True):
                series = benchmark_series(result, "tflops", dtype=dtype, d=d, causal=causal, mode=mode)
                ours[causal] = dict(zip(*series.get("triton", ([], []))))
                for other in ("sdpa_flash", "sdpa_cudnn"):
                    theirs = dict(zip(*series.get(other, ([], []))))
                    ratios = [ours[causal][n] / theirs[n] for n in ours[causal] if n >= min_n and n in theirs]
                    if ratios:
                        table[(d, mode, causal, other)] = statistics.median(ratios)
            same = [ours[True][n] / ours[False][n] for n in ours[True] if n >= min_n and n in ours[False]]
            if same:
                table[(d, mode, True, "triton_full")] = statistics.median(same)
    return table


# %%
if gpu_result is None:
    print("비율: 저장된 GPU 결과가 없어 계산하지 않습니다.")
else:
    for (d, mode, causal, other), ratio in benchmark_ratios(gpu_result).items():
        mine = "이 노트북의 커널(인과)" if other == "triton_full" else "이 노트북의 커널"
        print(f"d = {d:3d}, {mode:16s}, 인과={causal!s:5s}: {mine} ÷ {GPU_METHOD_LABELS[other]} = {ratio:.2f}")

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: GPU가 있는 스터디원이 있으면 모임 전에 `python3 course.py gpu-bench`를 돌려 JSON을 가져오게 하세요. 그림에서 볼 것: (1) 단순 구현과 SDPA math의 메모리는 N²로 자라고 융합 커널들은 N에 비례하는지, (2) 08번 반복문은 메모리는 작지만 처리량이 융합 커널들보다 크게 낮은지(1절의 모형: 커널 실행과 HBM 왕복), (3) 융합 커널들 사이의 차이는 타일·파이프라이닝·워프 분업 같은 세부에서 나온다는 것.

# %% [markdown]
# ## 연습문제
#
# 각 문제는 `check("14-k", 답)` 한 번으로 확인합니다. 틀리면 무엇이 틀렸는지 알려 줍니다. 풀이는 답 셀 아래의 접힌 셀에 있습니다(JupyterLab에서는 접힌 부분을, 사이트에서는 '풀이 보기'를 누르면 보입니다). 슬라이드와 핸드아웃에는 풀이가 없습니다.
#
# **14-1.** 6절의 `tile_map`은 방문하는 블록을 반복문으로 셌습니다. 이번에는 **반복 없이** 닫힌 식(closed form)으로 셉니다. N이 $B_M$의 배수이고 $B_M = r \cdot B_N$($r$은 정수)일 때, 인과 순전파에서 모든 프로그램이 방문하는 키 블록 수의 합을 닫힌 식으로 돌려주는 `causal_blocks(n, block_m, block_n)`을 완성하세요. 먼저 손으로 예측하세요: 타일 $i$($i = 0, 1, \dots$)는 키 블록을 몇 개 방문할까요? 검사기는 커널의 반복을 그대로 세어 비교하고, 반복문·컴프리헨션(comprehension)·`sum`·`range`·재귀와 `tile_map` 호출은 거절합니다.

# %%
def causal_blocks(n, block_m, block_n):  # n % block_m == 0, block_m % block_n == 0
    raise NotImplementedError

check("14-1", causal_blocks)

# %% jupyter={"source_hidden": true}
def causal_blocks(n, block_m, block_n):
    t, r = n // block_m, block_m // block_n  # tiles; key blocks per tile
    return r * t * (t + 1) // 2  # tile i visits r(i + 1) blocks: r(1 + 2 + … + T)

check("14-1", causal_blocks)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **14-2.** 역전파가 쓰는 것은 $P$가 아니라 행마다 하나인 $L$입니다. 점수 `s`(모양 `(N, N)`, 이미 $1/\sqrt d$를 곱한 자연로그 단위)와 커널이 저장한 `lse`(모양 `(N,)`)로 가중치 행렬 $P$를 다시 만드는 `recompute_weights(s, lse, causal)`를 완성하세요. 소프트맥스 관련 함수(`softmax`, `log_softmax`, `logsumexp`)는 쓰지 말고 `exp` 하나로 만드세요. 인과이면 가려진 자리는 0이어야 합니다. 4절의 식을 마스크와 함께 직접 옮겨 보는 짧은 연습입니다.

# %%
def recompute_weights(s, lse, causal):  # s: (N, N), lse: (N,)
    ...
    return None

check("14-2", recompute_weights)

# %% jupyter={"source_hidden": true}
def recompute_weights(s, lse, causal):
    p = torch.exp(s - lse[:, None])  # (N, N): e^(s − L) = softmax, row by row
    if causal:
        p = p.masked_fill(torch.ones_like(p, dtype=torch.bool).triu(1), 0.0)  # keys j > i
    return p

check("14-2", recompute_weights)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **14-3.** float32 텐서를 TF32로 반올림하는 `to_tf32(x)`를 완성하세요: 가수 23비트 중 위의 10비트만 남기고, 아래 13비트를 없애되 **가장 가까운 값으로 반올림**합니다(정확히 가운데이면 짝수 쪽). 힌트: `x.view(torch.int32)`로 비트를 정수로 보세요. 아래 13비트를 지우기 전에 얼마를 더하면 가장 가까운 값이 될까요? 아래 13비트가 정확히 0x1000(가운데)일 때 짝수 쪽으로 보내려면 어느 비트를 보면 될까요? NaN은 다루지 않습니다. (이 연습은 IEEE 기본 규칙인 "가운데이면 짝수 쪽"을 씁니다. PTX의 변환 명령 `cvt.rna.tf32.f32`는 정확히 가운데일 때 0에서 먼 쪽으로 보내고, Triton의 `tl.dot`은 버림을 씁니다). 검사기는 여러 값에서 비트 단위로 비교한 뒤, 이것으로 Q와 K를 반올림했을 때 어텐션 출력이 얼마나 변하는지 재서 알려 줍니다.

# %%
def to_tf32(x):  # float32 tensor
    ...
    return None

check("14-3", to_tf32)

# %% jupyter={"source_hidden": true}
def to_tf32(x):
    bits = x.view(torch.int32)
    keep = (bits >> 13) & 1  # the last kept mantissa bit: ties go to even
    rounded = (bits + 0xFFF + keep) & ~0x1FFF  # add just under half (or half when odd), drop 13 bits
    return rounded.view(torch.float32)

check("14-3", to_tf32)

# %% [markdown]
# ## 스터디 토론 질문
#
# 1. 순전파 커널은 `acc`, `m`, `ℓ`을 레지스터에 두고 점수 블록을 HBM에 쓰지 않습니다. $d$가 256이면 `BLOCK_M = 128`의 `acc`는 몇 KB일까요(float32)? 레지스터(SM당 256 KB)와 비교해 타일을 어떻게 바꿔야 할지 토론해 보세요.
# 2. FlashAttention-2처럼 커널 하나에서 dK·dV를 누적하고 dQ는 float32 버퍼에 원자적 덧셈으로 더하면 행렬곱은 4절에서 본 대로 5개로 줄어듭니다. 그 대신 HBM 읽기·쓰기 양과 재현성(reproducibility)은 이 노트북의 두 커널 방식과 비교해 어떻게 달라질까요? 1절의 모형처럼 세어 보세요.
# 3. 역전파는 행렬곱 5개(재계산한 $QK^\top$, $dV$, $dP$, $dQ$, $dK$)로 순전파(2개)의 2.5배이고, 이 노트북의 두 커널은 $S$와 $dP$를 두 번 계산해 7개입니다. 그래도 $P$를 저장하는 것보다 빠를 수 있는 조건은 무엇일까요? 1절의 HBM 모형과 연결해 보세요.
# 4. CPU 인터프리터에서 통과한 검사가 GPU에서 떨어질 수 있는 이유를 세 가지 들어 보세요(예: TF32). 어떤 것이 버그이고 어떤 것이 허용할 차이일까요?

# %% [markdown] slideshow={"slide_type": "notes"}
# 발표 노트: 1번의 답은 128 × 256 × 4바이트 = 128 KB로, SM 레지스터의 절반을 누적기 하나가 씁니다(fp16 q 타일도 64 KB 더). 워프를 4개에서 8개로 늘리면 스레드당 몫이 256개에서 128개로 줄어 한도(255개) 안에 들어오지만, 누적기 128 KB는 여전히 SM 레지스터의 절반이라 SM 하나에 함께 올라가는 프로그램은 많아야 하나뿐이고 기다림을 숨기기 어렵습니다. 그래서 보통 BLOCK_M을 64로 줄입니다. 2번의 방향: 쿼리 타일마다 dQ 조각을 HBM의 float32 버퍼에 원자적으로 더하는 읽기·쓰기가 키 블록 수만큼 생기고, 더하는 순서가 매번 달라 기본 설정에서는 비트 단위로 재현되지 않습니다. 3번의 방향: P(fp16)를 HBM에 쓰고 읽는 4·B·h·N² 바이트를 대역폭으로 나눈 시간과, 재계산에 더 드는 행렬곱 k개(FlashAttention-2는 1개, 이 노트북은 3개)의 k·2·B·h·N²·d FLOP을 행렬곱 성능으로 나눈 시간을 1절의 사양으로 비교하게 하세요. 둘 다 N²에 비례하므로 비율은 N과 상관없이 d와 장치의 바이트당 FLOP(1절 출력)으로 정해집니다: 그 값의 2배를 k로 나눈 것보다 d가 작으면 재계산이 빠릅니다. N이 클 때 달라지는 것은 속도가 아니라 N² 행렬을 둘 메모리가 있느냐입니다. 4번의 다른 예: 누적 순서(타일 크기와 스레드 배정에 따라 더하는 순서가 다름), 인터프리터가 흉내 내지 않는 하드웨어 연산(exp2 근사). 4번에서는 검사의 허용 오차를 "반올림 수준"으로 정당화할 수 있어야 한다는 점을 강조하세요.

# %% [markdown]
# ## 요약
#
# | 확인한 것 | 근거 (이 노트북의 계산) |
# |---|---|
# | 08번의 반복문은 GPU에서 키 블록마다 연산 12개, 점수 블록이 HBM을 8번 오간다(모형) | `loop_hbm_bytes` 대 `fused_hbm_bytes` (약 10배, L2 캐시 무시) |
# | 순전파 커널은 08번의 온라인 소프트맥스와 줄마다 같다 | SDPA와 비교: float32 < 2e-6, float16 < 4e-3, 인과·N이 타일의 배수가 아닐 때 포함 |
# | 저장하는 것은 $O$와 행마다 $L$ 하나 | $L$ = logsumexp(점수) (1e-5) |
# | 역전파: $D = \mathrm{rowsum}(dO \circ O)$, $P = e^{S-L}$ 재계산, dK·dV와 dQ 두 커널(원자적 덧셈 없이, 행렬곱 7개) | autograd와 비교: float32 < 5e-6, float16 < 1e-2; D를 빼먹으면 dQ 상대 오차 수십 % |
# | 인과에서 N = 1024, 타일×블록 128×64이면 블록 72/128만 방문, 계산한 점수의 약 89% 사용 | `tile_map` |
# | float32 검사는 `ieee` 정밀도에서만 의미가 있다 | TF32 가수 10비트 (연습문제 14-3) |
# | GPU 측정은 저장된 결과로만 말한다 | `data/benchmark_gpu.json` (없으면 없다고 말함) |

# %% [markdown] slideshow={"slide_type": "subslide"}
# **참고 문헌** ([SOURCES.md](../SOURCES.md)): Dao 등 2022 (FlashAttention), Dao 2024 (FlashAttention-2), Tillet 등 2019 (Triton), Milakov & Gimelshein 2018 (온라인 소프트맥스), NVIDIA 2022 (H100 구조 백서와 데이터시트). 커널 구성은 Triton의 fused attention 튜토리얼과 공개 구현들을 읽고 새로 썼습니다(SOURCES.md의 "튜토리얼과 공개 구현" 목록).
