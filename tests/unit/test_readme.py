"""The README tells the truth about the repository: its layout names every top-level
folder, every package and module of ``services/``; its docs table lists every page of
``docs/`` once; and no table row of it (or of a page of docs/) is stranded outside a
table, where a renderer shows it as a line of pipes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.unit.markdown_docs import ROOT, doc_files, tables_under, tokens

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _layout() -> list[str]:
    """The lines of the code block under the README's "Layout" heading."""
    stream = tokens(README)
    start = next(i for i, t in enumerate(stream)
                 if t.type == "heading_open" and stream[i + 1].content == "Layout")
    block = next(t for t in stream[start:] if t.type == "fence")
    return block.content.splitlines()


def _tracked_top_level() -> set[str]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    return {f.split("/")[0] for f in files if "/" in f}


def test_the_layout_names_every_top_level_folder_of_the_repository() -> None:
    named = {line.split()[0].split("/")[0] for line in _layout() if line and not line[0].isspace()}
    assert _tracked_top_level() <= named


def test_the_layout_names_every_package_and_module_of_services() -> None:
    text = "\n".join(_layout())
    packages = {p.name for p in (ROOT / "services").iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in (ROOT / "services").glob("*.py") if p.name != "__init__.py"}
    assert [p for p in sorted(packages) if f"  {p}/" not in text] == []
    assert [m for m in sorted(modules) if m not in text] == []


def test_the_docs_table_lists_every_page_of_docs_once_with_a_line_each() -> None:
    rows = [row for table in tables_under(README, "The docs") for row in table]
    pages = [row[0].text for row in rows]
    expected = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(pages) == expected
    assert all(row[1].text for row in rows)


def test_the_readme_keeps_its_first_two_commands() -> None:
    assert "make run     # mighty serve" in README and "make test    # installs everything" in README


def stranded_rows(text: str) -> list[str]:
    """Lines that look like a table row (``| a | b |``) but that the renderer reads as a
    paragraph: a row left behind outside its table."""
    return [line for t in tokens(text) if t.type == "inline"
            for line in t.content.splitlines() if line.startswith("|") and line.rstrip().endswith("|")]


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_table_row_is_stranded_outside_a_table(doc: Path) -> None:
    assert stranded_rows(doc.read_text(encoding="utf-8")) == []


def test_a_row_after_a_paragraph_is_found_stranded_and_a_table_row_is_not() -> None:
    text = "| a | b |\n|---|---|\n| 1 | 2 |\n\nSome words.\n| 3 | 4 |\n"
    assert stranded_rows(text) == ["| 3 | 4 |"]
