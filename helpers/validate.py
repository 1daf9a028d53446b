"""Input checks shared by the core and the lessons: each error says what was expected and what came."""

from __future__ import annotations

import inspect
import math
import numbers

import torch

__all__ = ["tensor", "finite", "positive_int", "probability", "positive_real", "lengths", "checked", "checked_module"]


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
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not (0 <= p and (p <= 1 if allow_one else p < 1)):
        raise ValueError(f"{name} must be a number in {'[0, 1]' if allow_one else '[0, 1)'}, got {p!r}")
    return float(p)


def lengths(name: str, x) -> torch.Tensor:
    """A 1-D int64 tensor of positive lengths (one per batch item)."""
    t = torch.as_tensor(x)
    if t.dim() != 1 or t.numel() == 0 or t.is_floating_point() or t.dtype == torch.bool:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers, got {x!r}")
    if (t <= 0).any():
        raise ValueError(f"every entry of {name} must be >= 1, got {t.tolist()}")
    return t.long()


def checked(taught, check, *, name: str, call=None):
    """The public, checked face of the lesson function ``taught`` (no second implementation).

    ``check`` has the public signature and docstring: it validates the arguments (raising the clear
    errors) and returns the keyword arguments for ``taught``. ``call(taught, **arguments)``, if given,
    calls ``taught`` itself, for what the lesson leaves out (a broadcast of the result, empty inputs).
    ``__wrapped__`` is ``taught``, so tests and readers can see which notebook cell does the work.
    """

    signature = inspect.signature(check)

    def boundary(*args, **kwargs):
        try:
            signature.bind(*args, **kwargs)
        except TypeError as err:  # a wrong argument: say it in the public name, not the check's
            plain = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
            shown = signature.replace(parameters=plain, return_annotation=inspect.Signature.empty)
            raise TypeError(f"{name}(): {err}; the signature is {name}{shown}") from None
        arguments = check(*args, **kwargs)
        return taught(**arguments) if call is None else call(taught, **arguments)

    boundary.__name__ = boundary.__qualname__ = name
    boundary.__module__, boundary.__doc__ = check.__module__, check.__doc__
    boundary.__signature__ = _public(inspect.signature(check))  # help() shows the checked API
    boundary.__wrapped__ = taught
    return boundary


def _public(signature: inspect.Signature, first: str | None = None) -> inspect.Signature:
    """A check's signature as the user calls it: no ``-> dict``; the first parameter renamed to ``first``."""
    parameters = list(signature.parameters.values())
    if first is not None:
        parameters[0] = parameters[0].replace(name=first)
    return signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty)


def checked_module(taught: type, *, name: str, init, forward, doc: str, **members) -> type:
    """The lesson module class ``taught`` behind input checks: a subclass named ``name`` whose ``__init__`` and
    ``forward`` first run ``init(*args, **kwargs)`` / ``forward(self, *args, **kwargs)``, each returning the keyword
    arguments for the lesson's own method. ``members`` (e.g. a classmethod) are added as they are."""

    def __init__(self, *args, **kwargs):
        taught.__init__(self, **init(*args, **kwargs))

    def checked_forward(self, *args, **kwargs):
        return taught.forward(self, **forward(self, *args, **kwargs))

    signature = inspect.signature(init)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __init__.__signature__ = _public(signature.replace(parameters=[self_param, *signature.parameters.values()]))
    checked_forward.__name__, checked_forward.__doc__ = "forward", forward.__doc__
    checked_forward.__signature__ = _public(inspect.signature(forward), first="self")  # forward's first: the module
    namespace = {"__init__": __init__, "forward": checked_forward, "__doc__": doc, "__module__": init.__module__}
    return type(name, (taught,), {**namespace, **members})
