"""The docs stand alone: every relative link in README.md and docs/**/*.md names a file in
the repository (and, with a #fragment, a heading of it), and none leaves the repository;
every ``*.md`` path cited in the docs' text or in a comment or docstring of the code
(``domain/``, ``projections/``, ``services/``, ``clients/``, ``bench/``, ``tests/``) names a
file of the repository, and the section it names (``§6``, ``"Redis Cluster"``) is there."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.unit.citations import (
    broken_in_doc,
    broken_in_source,
    citations,
    source_files,
)
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
    """A clone lacks the shared folder: the project's own pages replace every such reference."""
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


# ---------------------------------------------------------------- citations in the text and the code


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_md_path_a_page_cites_in_its_text_names_a_file_and_section_of_the_repository(doc: Path) -> None:
    assert broken_in_doc(doc, doc.read_text(encoding="utf-8")) == []


def test_the_citation_check_reads_the_code_of_every_layer_its_tests_and_the_deploy_files() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in source_files()}
    assert {"domain/errors.py", "projections/views.py", "services/gateway/app.py",
            "services/projection/apply.lua", "services/archive/migrations/0001_init.sql",
            "clients/web/js/api.js", "clients/terminal/api.py", "bench/soak.py",
            "tests/unit/test_play.py", "deploy/redis.conf", "deploy/systemd/mighty.target",
            "Makefile", "pyproject.toml", ".ci/run"} <= names


def test_every_md_path_a_comment_or_docstring_of_the_code_cites_names_a_file_and_section() -> None:
    problems = [f"{path.relative_to(ROOT).as_posix()}: {problem}" for path in source_files()
                for problem in broken_in_source(path, path.read_text(encoding="utf-8"))]
    assert problems == []


def test_a_citation_is_its_path_and_the_section_named_right_after_it() -> None:
    found = citations('see docs/rules/mighty.md §10.4, §6 and (docs/store.md, "Redis\n Cluster"),'
                      " docs/reliability.md *Soak*, `docs/api.md`; not /rules/mighty.md nor docs/rules/*.md")
    assert [(c.path, c.sections, c.name) for c in found] == [
        ("docs/rules/mighty.md", ("10.4", "6"), None),
        ("docs/store.md", (), "Redis Cluster"),
        ("docs/reliability.md", (), "Soak"),
        ("docs/api.md", (), None),
    ]


def test_a_broken_citation_in_a_comment_or_docstring_is_reported_and_code_strings_are_not_read() -> None:
    source = ROOT / "services" / "example.py"
    text = ('"""A module (docs/store.md, "Redis Cluster"; hand-file.md).\n\nMore: ../shared/API.md."""\n'
            "\n"
            "X = 1  # docs/rules/mighty.md §6 and §10.8, docs/rules/mighty.md §11\n"
            "# docs/api.md, \"No such\n"
            "# section\"\n"
            "\n"
            "def f() -> str:\n"
            '    """docs/glossary.md, "Nothing here": a docstring of a function."""\n'
            '    return "not-a-citation.md"\n')
    assert broken_in_source(source, text) == [
        "docs/rules/mighty.md §11: no heading numbered 11",
        'docs/api.md "No such section": no heading or bold label of that name',
        "hand-file.md: no such file in the repository",
        "../shared/API.md: no such file in the repository",
        'docs/glossary.md "Nothing here": no heading or bold label of that name',
    ]


def test_broken_citations_in_javascript_lua_sql_and_config_comments_are_reported() -> None:
    js = "// docs/web.md, \"Modules\"\nconst a = \"gone.md\"; // API.md\n/* DESIGN.md §2 */\n"
    assert broken_in_source(ROOT / "clients" / "web" / "js" / "x.js", js) == [
        "API.md: no such file in the repository", "DESIGN.md: no such file in the repository"]
    lua = "-- docs/workers.md\nlocal x = 1 -- docs/workers.md, \"Nowhere\"\n"
    assert broken_in_source(ROOT / "services" / "x.lua", lua) == [
        'docs/workers.md "Nowhere": no heading or bold label of that name']
    assert broken_in_source(ROOT / "services" / "x.sql", "-- mighty-large.md §4\nSELECT 1;\n") == [
        "mighty-large.md: no such file in the repository"]
    conf = "# docs/store.md, \"Durability\"\nappendonly yes  # DESIGN.md §4\n"
    assert broken_in_source(ROOT / "deploy" / "redis.conf", conf) == ["DESIGN.md: no such file in the repository"]


def test_a_page_may_cite_from_its_folder_or_the_root_but_not_a_file_the_repository_lacks() -> None:
    doc = ROOT / "docs" / "example.md"
    text = ("See [the rules](rules/mighty.md), `docs/store.md`, \"Durability\"; README.md;"
            " rules/mighty.md §9 and §12; mighty-large.md; `API.md`, [x](https://example.org/y.md).\n")
    assert broken_in_doc(doc, text) == [
        "rules/mighty.md §12: no heading numbered 12",
        "mighty-large.md: no such file in the repository",
        "API.md: no such file in the repository",
    ]
