"""Exercise auto-checks: ``check("01-1", answer)`` says what is right or what is wrong.

Each checker receives the learner's answer and either returns normally (correct) or
raises ``Wrong`` with a Korean explanation of the first problem it found. The checkers of
notebook NN live in ``helpers/exercises/exNN.py`` and are imported on the first
``check("NN-k", ...)``. What checkers share is public here: ``Wrong``, ``exercise``,
``call_learner`` (run the learner's function, turn a crash into an explanation) and
``answer_tensor`` (the learner's result as a float64 tensor).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import torch

__all__ = [
    "check",
    "CheckResult",
    "Wrong",
    "EXERCISES",
    "exercise",
    "call_learner",
    "answer_tensor",
    "forbid_calls",
    "particle",
    "called_names",
    "source_tree",
]

EXERCISES: dict[str, Callable] = {}


class Wrong(Exception):
    """Raised by a checker with the message shown to the learner."""


@dataclass(frozen=True)
class CheckResult:
    exercise: str
    passed: bool
    message: str
    pending: bool = False  # the stub still raises NotImplementedError: the message itself says "아직"

    def __repr__(self) -> str:
        if self.pending:
            return f"[{self.exercise}] ❌ {self.message}"
        mark = "✅ 정답" if self.passed else "❌ 아직"
        return f"[{self.exercise}] {mark}: {self.message}"

    def __bool__(self) -> bool:
        return self.passed


def exercise(exercise_id: str):
    """Register a checker under an id such as ``"01-1"`` (notebook-number)."""

    def register(fn):
        EXERCISES[exercise_id] = fn
        return fn

    return register


def check(exercise_id: str, answer) -> CheckResult:
    """Check an answer; the result prints as one line saying what is right or wrong."""
    if exercise_id not in EXERCISES:
        _load(exercise_id)
    if exercise_id not in EXERCISES:
        for module in pkgutil.iter_modules(__path__):  # so the message lists every exercise, not only loaded ones
            importlib.import_module(f"{__name__}.{module.name}")
        known = ", ".join(sorted(EXERCISES))
        raise KeyError(f"unknown exercise {exercise_id!r}; known: {known}")
    if answer is None or answer is Ellipsis:
        return CheckResult(exercise_id, False, "답이 비어 있습니다. `...` 자리를 채운 뒤 다시 실행하세요.")
    try:
        message = EXERCISES[exercise_id](answer)
    except Wrong as wrong:
        return CheckResult(exercise_id, False, str(wrong))
    except NotImplementedError:
        return CheckResult(
            exercise_id,
            False,
            "아직 구현하지 않았습니다. `raise NotImplementedError` 줄을 지우고 코드를 채우세요.",
            pending=True,
        )
    return CheckResult(exercise_id, True, message or "모든 검사를 통과했습니다.")


# The Korean reading of a final digit ends in a consonant (받침) for 0 영, 1 일, 3 삼, 6 육, 7 칠, 8 팔;
# ㄹ (1 일, 7 칠, 8 팔) takes 로, not 으로.
_DIGIT_FINAL = {"0": "ㅇ", "1": "ㄹ", "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": "ㄹ", "8": "ㄹ", "9": ""}
_PAIRS = {
    "은/는": ("은", "는"),
    "이/가": ("이", "가"),
    "을/를": ("을", "를"),
    "과/와": ("과", "와"),
    "으로/로": ("으로", "로"),
}
_HANGUL_FINALS = " ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"


def _final_sound(text: str) -> str | None:
    """The final consonant of the word's last syllable as read aloud ("" for none), None if unknown."""
    stripped = text.rstrip(" )]}'\"`")
    if not stripped:
        return None
    last = stripped[-1]
    if "가" <= last <= "힣":
        return _HANGUL_FINALS[(ord(last) - 0xAC00) % 28].strip()
    if last in _DIGIT_FINAL:
        return _DIGIT_FINAL[last]
    return None


def particle(word, pair: str) -> str:
    """``word`` followed by the right Korean particle: ``particle(8, "은/는")`` → "8은",
    ``particle("1.0000", "으로/로")`` → "1.0000으로", ``particle("가중치", "이/가")`` → "가중치가".
    Digits are read in Korean (8 = 팔); a word whose sound is unknown (Latin letters, symbols) gets
    both forms, "x은(는)"."""
    text = str(word)
    if pair not in _PAIRS:
        raise ValueError(f"pair must be one of {sorted(_PAIRS)}, got {pair!r}")
    with_final, without = _PAIRS[pair]
    final = _final_sound(text)
    if final is None:
        return f"{text}{with_final}({without})"
    if pair == "으로/로":
        return text + (with_final if final not in ("", "ㄹ") else without)
    return text + (with_final if final else without)


def call_learner(fn, *args, what: str, hint: str = ""):
    """Run the learner's function, turning a crash into an explanation (with an optional hint)."""
    if not callable(fn):
        raise Wrong(f"함수를 넘겨야 합니다 ({what}); 받은 것은 {type(fn).__name__}입니다.")
    try:
        return fn(*args)
    except NotImplementedError:
        raise
    except Exception as exc:  # the learner's code failed: show how, not a stack trace
        raise Wrong(f"{what} 호출이 오류를 냈습니다: {type(exc).__name__}: {exc}. {hint}".strip()) from None


def source_tree(fn) -> tuple[str | None, ast.Module | None]:
    """The learner's function as (source, parsed tree): (None, None) when the source cannot be read
    (a function built at run time), (source, None) when it does not parse on its own (a lambda's line
    may hold more than the lambda)."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None, None
    try:
        return source, ast.parse(source)
    except SyntaxError:
        return source, None


def called_names(fn) -> set[str] | None:
    """Names of the functions the learner's code calls (``torch.log`` -> "log"), or None if the
    source cannot be read (e.g. a function built at run time)."""
    source, tree = source_tree(fn)
    if source is None:
        return None
    if tree is None:  # fall back to the text
        return set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", source))
    return {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
    }


def _from_a_library(obj) -> bool:
    """True for functions of the course's lessons, torch, NumPy, SciPy ...; False for the learner's own
    (defined in the notebook, module ``__main__``) and for test helpers. A notebook's own copy of a saved
    lesson function (the visible cell the build copied into helpers.lessons) counts as the lesson's."""
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] in {"helpers", "torch", "numpy", "scipy", "math", "builtins"}:
        return True
    code = getattr(obj, "__code__", None)
    if module != "__main__" or code is None:
        return False
    source = _source(obj)
    for lesson in _lesson_modules():
        taught = getattr(lesson, obj.__name__, None)
        if getattr(taught, "__code__", None) is None:
            continue
        if _fingerprint(taught.__code__) == _fingerprint(code) or (source is not None and _source(taught) == source):
            return True
    return False


def _fingerprint(code) -> tuple:
    """What a copy of the same source shares, whatever file or line it was compiled at."""
    consts = tuple(_fingerprint(c) if inspect.iscode(c) else repr(c) for c in code.co_consts)
    return code.co_argcount, code.co_kwonlyargcount, code.co_varnames, code.co_names, consts


def _source(fn) -> str | None:
    try:
        return textwrap.dedent(inspect.getsource(fn)).strip()
    except (OSError, TypeError):
        return None


def _lesson_modules() -> list:
    """Every importable helpers.lessons module (14's needs Triton: skipped where it is missing)."""
    from .. import lessons

    found = []
    for info in pkgutil.iter_modules(lessons.__path__):
        try:
            found.append(importlib.import_module(f"{lessons.__name__}.{info.name}"))
        except ImportError:
            continue
    return found


# The loops a "without a loop" exercise names, by AST node type (ex09, ex14).
LOOP_WORDS = {
    "For": "for 반복문",
    "While": "while 반복문",
    "ListComp": "컴프리헨션",
    "SetComp": "컴프리헨션",
    "DictComp": "컴프리헨션",
    "GeneratorExp": "제너레이터 식",
}


def forbid_calls(fn, names: set[str], why: str) -> None:
    """Raise Wrong if the learner's function calls one of ``names`` (an exercise that asks to
    build something without the ready-made function shown earlier). A name is resolved through the
    function's globals: ``import softmax_jacobian as sj`` and a call ``sj(...)`` is caught, a
    ``functools.partial`` of a forbidden function too, and the learner's own helpers that the answer
    calls are read the same way (a wrapper does not hide the call); a helper of the learner's own that
    happens to carry a forbidden name is not refused for its name."""
    fn = getattr(fn, "func", fn)  # functools.partial(f, ...) is f
    if getattr(fn, "__name__", None) in names and _from_a_library(fn):  # the forbidden function itself
        raise Wrong(f"{fn.__name__}을(를) 그대로 넘겼습니다. {why}")
    used = _forbidden_uses(fn, names, seen=set())
    if used:
        raise Wrong(f"{', '.join(sorted(used))}을(를) 불렀습니다. {why}")
    from .lookups import forbid_string_lookups  # getattr(torch, "log_" + "softmax"): a name in a string

    forbid_string_lookups(fn, names, why)


def _forbidden_uses(fn, names: set[str], seen: set, depth: int = 0) -> set[str]:
    """The forbidden functions fn reaches: by a call or any other use of a global name (``[f][0](x)``,
    ``(lambda g: g(x))(f)``), through a default argument or a closure, and, up to three levels down,
    inside the learner's own functions it uses."""
    if id(fn) in seen or depth > 3:
        return set()
    seen.add(id(fn))
    scope = getattr(fn, "__globals__", {})
    referenced = dict.fromkeys(called_names(fn) or set())
    for code in _code_objects(getattr(fn, "__code__", None)):
        referenced.update(dict.fromkeys(code.co_names))
    values = [(name, scope.get(name)) for name in referenced]
    values += [("기본값", d) for d in (getattr(fn, "__defaults__", None) or ())]
    values += [("기본값", d) for d in (getattr(fn, "__kwdefaults__", None) or {}).values()]
    code = getattr(fn, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        try:
            values.append((name, cell.cell_contents))
        except ValueError:  # an empty cell
            continue
    for name, target in list(values):  # a partial's bound arguments, a container's items are used too
        if isinstance(target, functools.partial):
            values += [(name, bound) for bound in (*target.args, *target.keywords.values())]
        elif isinstance(target, list | tuple | set | frozenset | dict):
            items = target.values() if isinstance(target, dict) else target
            values += [(name, item) for item in list(items)[:100] if callable(item)]
    used = set()
    for name, target in values:
        target = getattr(target, "func", target)  # a partial stands for its function
        mine = target is not None and callable(target) and not _from_a_library(target)
        if name in names and not mine and name != "기본값":
            used.add(name)
        elif getattr(target, "__name__", None) in names and callable(target) and not mine:
            used.add(f"{name}(= {target.__name__})")
        elif mine and getattr(target, "__code__", None) is not None:
            used |= {f"{name} 안의 {inner}" for inner in _forbidden_uses(target, names, seen, depth + 1)}
    return used


def _code_objects(code):
    """A code object and every code object nested in it (lambdas, comprehensions, inner functions)."""
    if code is None:
        return
    yield code
    for const in code.co_consts:
        if inspect.iscode(const):
            yield from _code_objects(const)


def answer_tensor(x, what: str) -> torch.Tensor:
    """The learner's result as a float64 tensor, or Wrong saying what came instead."""
    try:
        return torch.as_tensor(x, dtype=torch.float64)
    except Exception:
        raise Wrong(f"{what}의 결과를 텐서로 바꿀 수 없습니다 (받은 것: {type(x).__name__}).") from None


def _load(exercise_id: str) -> None:
    """Import helpers.exercises.exNN for an id "NN-k" (registers its checkers)."""
    number = str(exercise_id).split("-", 1)[0]
    if len(number) == 2 and number.isdigit():
        try:
            importlib.import_module(f"{__name__}.ex{number}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.ex{number}":
                raise
