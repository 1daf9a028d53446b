"""Every source the course cites is named in SOURCES.md, and each notebook links it at first use."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "SOURCES.md").read_text(encoding="utf-8")
NOTEBOOK_SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))

# "Vaswani 등 2017", "Rabe & Staats 2021", "Dao 2024": an author, optional co-author or 등, a year.
# The year may be followed by a Korean particle ("2017의"), so the end is "no further digit", not \b.
CITATION = re.compile(r"\b([A-Z][a-zA-Z-]+(?: & [A-Z][a-zA-Z-]+)?(?: 등)?) ((?:19|20)\d\d)(?!\d)")
# Other citation forms are not the course's style: "Dao et al., 2022", "Rabe & Staats (2021)".
OFF_STYLE = re.compile(
    r"\b[A-Z][a-zA-Z-]+(?: & [A-Z][a-zA-Z-]+)?(?: et al\.?)?,? \((?:19|20)\d\d\)|\bet al\.,? (?:19|20)\d\d"
)
SEED = re.compile(r"원문 (00[0-4])(?![–-]00)")  # "원문 000–004" (the sources list as a whole) names none of them
LINK_TO_SOURCES = re.compile(r"\[[^\]]*\]\(\.\./SOURCES\.md[^)]*\)")


@functools.cache  # read once: several tests read every notebook's prose
def prose(path: Path) -> str:
    nb = jupytext.read(path, fmt="py:percent")
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_sources_list_names_every_seed_by_title_and_kind():
    for n in range(5):
        row = next((line for line in SOURCES.splitlines() if line.startswith(f"| 원문 00{n} |")), None)
        assert row, f"SOURCES.md has no row for 원문 00{n}"
        title, kind = (cell.strip() for cell in row.split("|")[2:4])
        assert title.startswith('"') and len(title) > 5, f"원문 00{n}: no quoted title"
        assert len(kind) > 10, f"원문 00{n}: no kind (blog post, notes, ...)"


def test_sources_list_says_where_each_seed_is_used():
    """The 원문 table's last column lists exactly the notebooks that mention that 원문."""
    for n in range(5):
        row = next(line for line in SOURCES.splitlines() if line.startswith(f"| 원문 00{n} |"))
        listed = {s.strip() for s in row.rstrip(" |").split("|")[-1].split(",")}
        used = {p.name[:2] for p in NOTEBOOK_SOURCES if f"00{n}" in SEED.findall(prose(p))}  # not "원문 000–004"
        assert listed == used, f"원문 00{n}: SOURCES.md says {sorted(listed)}, the notebooks use it in {sorted(used)}"


def test_sources_list_names_no_path_outside_the_repository():
    assert "shared/" not in SOURCES and ".txt" not in SOURCES


@pytest.mark.parametrize("path", NOTEBOOK_SOURCES, ids=lambda p: p.name[:2])
def test_every_cited_paper_is_in_the_sources_list(path):
    text = prose(path)
    listed = set(re.findall(r"\*\*(.+?)\*\*", SOURCES))
    for author, year in set(CITATION.findall(text)):
        assert f"{author} {year}" in listed, f"{path.name} cites '{author} {year}', which SOURCES.md does not list"


@pytest.mark.parametrize("path", NOTEBOOK_SOURCES, ids=lambda p: p.name[:2])
def test_citations_follow_the_course_style(path):
    """ "Vaswani 등 2017", never "Vaswani et al. (2017)": one form the sources test can check."""
    off = OFF_STYLE.findall(prose(path))
    assert not off, f"{path.name}: citations not in the course style 'Author 등 YYYY': {off}"


@pytest.mark.parametrize("path", NOTEBOOK_SOURCES, ids=lambda p: p.name[:2])
def test_first_mention_of_each_seed_links_the_sources_list(path):
    text = prose(path)
    for number in dict.fromkeys(SEED.findall(text)):
        first = text.index(f"원문 {number}")
        line = text[text.rfind("\n", 0, first) + 1 : text.find("\n", first)]
        assert any(f"원문 {number}" in m.group(0) for m in LINK_TO_SOURCES.finditer(line)), (
            f"{path.name}: the first mention of 원문 {number} does not link ../SOURCES.md: {line[:120]!r}"
        )


# Built from pieces so that this file does not match itself.
OUTSIDE_PATHS = ("../" + "shared", "COURSE" + ".md")


def test_no_tracked_file_names_a_path_outside_the_repository():
    """A clone has neither the sibling folder nor the design note: no tracked file may point at them."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    offending = []
    for name in listed.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # images, PDFs: no text to check
            continue
        offending += [f"{name}: {bad}" for bad in OUTSIDE_PATHS if bad in text]
    assert not offending, f"paths outside the repository: {offending}"
