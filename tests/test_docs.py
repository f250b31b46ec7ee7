"""The README is the front door and docs/ the rooms behind it: every relative link in them leads somewhere
(a file that exists, a heading that exists), the README stays short and keeps the two commands that start
the project, and docs/index.md lists every page of docs/."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]

#: The README's two set-up commands, byte for byte (CI and users copy them).
MAIN_JOB = "bash scripts/setup.sh && .venv/bin/pddlworlds eval --out runs/quick"
TESTS = "bash scripts/setup.sh && .venv/bin/python -m pytest -q"
#: The README's hard length limit, in lines.
README_MAX_LINES = 260

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks and indented code, with their numbers (links and headings in
    code are examples, not links)."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(0)[1:-1], heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a page's headings give, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[tuple[int, str]]:
    """The page's links that are not URLs (`http:`, `mailto:` ...), with their line numbers."""
    links = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                links.append((number, target))
    return links


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """Each relative link of the page whose file or heading does not exist, as `page:line: target` with the
    page named relative to `root`."""
    broken = []
    for number, target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = path if not file_part else (path.parent / file_part).resolve()
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not dest.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{where} (no heading #{anchor} in {dest.name})")
    return broken


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other page\n\n## Size limits, and `how` to raise them\n")
    page.write_text(
        "# Page\n\n[ok](other.md#size-limits-and-how-to-raise-them) [self](#page) [web](https://x.org/a)\n"
        "[gone](missing.md) [bad anchor](other.md#nowhere) `[in code](nowhere.md)`\n"
        "```\n[in a fence](nowhere.md)\n```\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "page.md:4: missing.md (no such file)",
        "page.md:4: other.md#nowhere (no heading #nowhere in other.md)",
    ]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_is_short_and_keeps_its_two_commands() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert MAIN_JOB in text and TESTS in text


def test_the_index_lists_every_docs_page_and_the_readme_links_the_index() -> None:
    index = DOCS / "index.md"
    linked = {target.partition("#")[0] for _, target in relative_links(index)}
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert pages <= linked, sorted(pages - linked)
    readme = {target.partition("#")[0] for _, target in relative_links(REPO / "README.md")}
    assert "docs/index.md" in readme
