"""Notebook 14 on a machine without Triton: one clear sentence, and the cells that need it skipped.

Triton ships wheels for Linux only, x86_64 and aarch64 (PyPI's torch 2.13.0 requires triton 3.7.1 there). On macOS and
Windows ``import triton`` fails; notebook 14 calls ``triton_or_skip()`` in its setup cell, which then rewrites every
later cell that needs Triton (directly, or through a name such a cell defined) into a one-line note, so "Run All" runs
the prose, the tile map, the exercises and the stored results with no traceback.
"""

from __future__ import annotations

import ast
import platform

__all__ = ["triton_missing_message", "triton_or_skip", "SkipCellsWithoutTriton"]


def triton_missing_message() -> str:
    """What to install where, in one sentence (Korean, then English)."""
    system, machine = platform.system(), platform.machine()
    if system == "Linux" and machine in ("x86_64", "aarch64"):
        fix = "이 플랫폼에는 휠이 있으니 `python3 course.py lab`(또는 `pip install -r requirements.txt`)으로 설치하세요"
    else:
        fix = "Triton 휠은 Linux(x86_64·aarch64)에만 있으니 Linux 기계나 Windows의 WSL2에서 `python3 course.py lab`을 쓰세요"
    return (
        f"Triton이 없습니다({system} {machine}): {fix}. "
        f"(Triton is not installed on {system} {machine}; it has wheels for Linux x86_64 and aarch64 only.)"
    )


def _names(tree: ast.Module) -> tuple[set[str], set[str], set[str], set[str], set[str]]:
    """(names the cell reads, names bound anywhere in it (locals and parameters too), names it assigns or defines at the
    top level, names it imports from other modules than Triton, modules it imports) of one parsed cell."""
    read, bound, modules = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules.update([node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names])
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    top, imported = set(), set()
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.ClassDef):
            top.add(statement.name)
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                top.add(node.id)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = {(a.asname or a.name).split(".")[0] for a in node.names}
                sources = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                needs = any(m.split(".")[0] == "triton" or m.endswith("flash_attention_gpu") for m in sources)
                (top if needs else imported).update(names)
    return read, bound, top, imported, modules


class SkipCellsWithoutTriton:
    """An IPython input transformer: a cell that imports Triton, or reads a name that only a skipped cell defines (and
    does not bind itself), becomes a print of one note; its own names join the missing ones."""

    def __init__(self):
        self.missing = {"triton", "tl"}

    def needs_triton(self, source: str) -> bool:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # magics and the like: leave them to IPython
            return False
        read, bound, top, imported, modules = _names(tree)
        if any(m.split(".")[0] == "triton" or m.endswith("flash_attention_gpu") for m in modules) or (
            (read - bound) & self.missing
        ):
            self.missing |= top  # what it would have defined; its other imports (torch, math) still work
            return True
        self.missing -= top | imported  # this cell defines them now
        return False

    def __call__(self, lines: list[str]) -> list[str]:
        if not self.needs_triton("".join(lines)):
            return lines
        return ['print("(Triton이 없어 이 셀은 건너뜁니다: 커널이 필요한 셀입니다.)")\n']


def triton_or_skip() -> bool:
    """True when Triton imports. Otherwise print what to install, make the following cells that
    need Triton print a note instead of failing (inside IPython), and return False."""
    try:
        import triton  # noqa: F401
    except ImportError:
        print(triton_missing_message())
    else:
        return True
    print("커널 셀은 건너뛰고 설명, 타일 지도, 연습문제, 저장된 결과만 실행합니다.")
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    if (shell := get_ipython()) is not None:
        shell.input_transformers_post.append(SkipCellsWithoutTriton())
    return False
