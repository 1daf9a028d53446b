"""Input checks shared by the core and the lessons: each error says what was expected and what came."""

from __future__ import annotations

import inspect
import math
import numbers

import torch

__all__ = ["tensor", "finite", "positive_int", "probability", "positive_real", "lengths", "checks"]


def tensor(name: str, x, min_dim: int = 1, *, floating: bool = True) -> torch.Tensor:
    """x itself, after checking it is a (floating-point) tensor with at least ``min_dim`` dims."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if floating and not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions, got shape {tuple(x.shape)}")
    return x


def finite(name: str, x: torch.Tensor) -> torch.Tensor:
    """x itself; ValueError naming NaN or inf if it holds one."""
    if not torch.isfinite(x).all():
        bad = "NaN" if torch.isnan(x).any() else "inf"
        raise ValueError(f"{name} contains {bad}; a finite tensor is needed")
    return x


def positive_int(name: str, n) -> int:
    """n as an int; ValueError unless it is a positive integer (bools rejected)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n <= 0:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def positive_real(name: str, x) -> float:
    """x as a float; TypeError for a non-number, ValueError unless finite and > 0."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return float(x)


def probability(name: str, p, *, allow_one: bool = False) -> float:
    """p as a float in [0, 1) (or [0, 1] with ``allow_one``); ValueError otherwise (bools too)."""
    interval = "[0, 1]" if allow_one else "[0, 1)"
    ok = not isinstance(p, bool) and isinstance(p, numbers.Real) and 0 <= p and (p <= 1 if allow_one else p < 1)
    if not ok:
        raise ValueError(f"{name} must be a number in {interval}, got {p!r}")
    return float(p)


def lengths(name: str, x) -> torch.Tensor:
    """A 1-D int64 tensor of positive lengths (one per batch item)."""
    t = torch.as_tensor(x)
    if t.dim() != 1 or t.numel() == 0 or t.is_floating_point() or t.dtype == torch.bool:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers, got {x!r}")
    if (t <= 0).any():
        raise ValueError(f"every entry of {name} must be >= 1, got {t.tolist()}")
    return t.long()


def checks(taught):
    """Decorator: mark a checked public function as the boundary of the lesson function ``taught``.

    The wrapper runs the input checks and calls ``taught``; ``wrapper.__wrapped__`` is ``taught``,
    so tests (and readers) can see which notebook cell does the work.
    """

    def mark(wrapper):
        wrapper.__signature__ = inspect.signature(wrapper)  # help() shows the checked API, not the lesson's
        wrapper.__wrapped__ = taught
        return wrapper

    return mark
