"""The docs stand alone: every relative link in README.md and docs/**/*.md names a file in
the repository (and, with a #fragment, a heading of it), and none leaves the repository."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.unit.markdown_docs import ROOT, anchors, doc_files, links

DOCS = doc_files()


def broken_links(doc: Path, text: str) -> list[str]:
    """Each relative link of ``text`` (the contents of ``doc``) that does not resolve to a
    file inside the repository, or names a heading the file lacks, with the reason."""
    problems: list[str] = []
    for href in links(text):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue  # an absolute URL: not a file of the repository
        if parts.path:
            target = (doc.parent / unquote(parts.path)).resolve()
            if not target.is_relative_to(ROOT):
                problems.append(f"{href}: outside the repository")
                continue
            if not target.is_file():
                problems.append(f"{href}: no such file")
                continue
            if not parts.fragment or target.suffix != ".md":
                continue
            headings = anchors(target.read_text(encoding="utf-8"))
        else:
            headings = anchors(text)  # a link to a heading of this page
        if unquote(parts.fragment) not in headings:
            problems.append(f"{href}: no heading #{parts.fragment}")
    return problems


def test_the_docs_tests_read_the_readme_and_every_page_under_docs() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in DOCS}
    assert {"README.md", "docs/rules/mighty.md", "docs/rules/mitigati.md", "docs/api.md",
            "docs/hand-files.md", "docs/glossary.md"} <= names


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_to_a_file_in_the_repository(doc: Path) -> None:
    assert broken_links(doc, doc.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_doc_refers_to_the_shared_folder_outside_a_clone(doc: Path) -> None:
    """A clone lacks ../shared/: the project's own pages replace every such reference."""
    text = doc.read_text(encoding="utf-8")
    assert "../shared" not in text


def test_a_missing_file_an_escape_and_a_missing_heading_are_all_reported() -> None:
    doc = ROOT / "docs" / "example.md"
    text = ("[a](rules/mighty.md) [b](no-such.md) [c](../../shared/API.md) [d](../README.md)"
            " [e](rules/mighty.md#no-such-heading) [f](rules/mighty.md#6-scoring)"
            " [g](https://example.org/x.md) [h](#nowhere) `[i](inside-code.md)`\n\n## Here\n[j](#here)\n")
    assert broken_links(doc, text) == [
        "no-such.md: no such file",
        "../../shared/API.md: outside the repository",
        "rules/mighty.md#no-such-heading: no heading #no-such-heading",
        "#nowhere: no heading #nowhere",
    ]
