"""The user's documentation holds together: the README is a short first page that starts with
the developers' two commands, every docs/*.md is reachable from docs/index.md, and every
relative link of the README and the pages moved out of it leads to a file that exists."""

from __future__ import annotations

import re

from tests.conftest import REPO

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _relative_links(path):
    return [t for t in LINK.findall(path.read_text()) if "://" not in t]


def test_readme_is_a_short_first_page_starting_with_the_two_commands():
    text = (REPO / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 230
    first_block = text.split("```")[1]
    assert "make demo" in first_block and "make test" in first_block
    for how in ("uv tool install", "pipx install", "pip install"):
        assert how in text


def test_every_doc_is_linked_from_the_index():
    index = REPO / "docs" / "index.md"
    linked = {t for t in _relative_links(index)}
    pages = {p.name for p in (REPO / "docs").glob("*.md")} - {"index.md"}
    assert sorted(pages - linked) == []


def test_relative_links_lead_to_existing_files():
    mine = ["index", "sources", "run", "store", "analysis", "control", "development",
            "machines-reports-bundles"]
    for page in [REPO / "README.md", *(REPO / "docs" / f"{name}.md" for name in mine)]:
        for target in _relative_links(page):
            if target.endswith((".md", ".json", ".py", ".toml", ".sh")):
                assert (page.parent / target).exists(), (page.name, target)
