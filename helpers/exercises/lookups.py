"""A forbidden function fetched by its name as a string: ``getattr(module, "patchify")``,
``vars(module)["softmax"]``, ``operator.attrgetter("patchify")``, ``module.__dict__["patch" + "ify"]``.

``forbid_calls`` resolves the names and values an answer uses; a string is neither, so these lookups
pass it. Python folds ``"patch" + "ify"`` into one constant, so reading the string constants of the
answer's code (and of the learner's own helpers it uses) finds all of them, as ex14 does for ``tile_map``.
"""

from __future__ import annotations

import inspect

from . import Wrong


def _code_objects(code):
    """A code object and every code object nested in it (lambdas, comprehensions, inner functions)."""
    stack = [code] if code is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack += [const for const in current.co_consts if inspect.iscode(const)]


def string_lookups(fn, names: set[str], depth: int = 0, seen: set | None = None) -> set[str]:
    """The forbidden names that appear as a whole string constant in fn, or in the learner's own
    functions it uses (up to two levels down)."""
    fn = getattr(fn, "func", fn)  # functools.partial(f, ...) is f
    seen = set() if seen is None else seen
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen or depth > 2:
        return set()
    seen.add(id(code))
    found, scope = set(), getattr(fn, "__globals__", {})
    for current in _code_objects(code):
        found |= {const for const in current.co_consts if isinstance(const, str) and const in names}
        for name in current.co_names:
            helper = scope.get(name)
            if inspect.isfunction(helper) and helper.__module__ == getattr(fn, "__module__", None):
                found |= string_lookups(helper, names, depth + 1, seen)
    return found


def forbid_string_lookups(fn, names: set[str], why: str) -> None:
    """Raise Wrong if the answer names a forbidden function in a string (getattr, vars()[...], attrgetter)."""
    found = string_lookups(fn, names)
    if found:
        listed = ", ".join(f'"{name}"' for name in sorted(found))
        raise Wrong(
            f"{listed}을(를) 문자열로 찾아 불렀습니다(getattr, vars()[…] 같은 방법). 이름을 숨겨도 같은 함수입니다. {why}"
        )
