"""Citations of the project's Markdown pages: a ``*.md`` path named in a comment or a
docstring of the code (and of the deploy files, the Makefile, pyproject.toml and
``.ci/run``), or in the text of README.md and docs/, and the section it names
after it (``§6``, ``§10.4``, ``"Redis Cluster"``, ``*Soak*``), checked against the files
and headings of the repository.

A citation in code is read from the repository's root (``docs/store.md``); one in a page
of the docs from that page's folder or from the root. A ``§N`` names a heading numbered
``N`` (``## 6. Scoring``, ``### 10.4 Kitty…``); a quoted or starred name after the path
names a heading, or a bold label (``**Rollback.**``), that contains it. URL paths (``/rules/mighty.md``, after a ``/``) and
globs (``docs/rules/*.md``) are not files of the repository and are left alone.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from tests.unit.markdown_docs import ROOT, emphasised, headings

SOURCE_DIRS = ("domain", "projections", "services", "clients", "bench", "tests")
SOURCE_SUFFIXES = frozenset({".py", ".js", ".lua", ".sql"})
# Files whose comments start with "#": the deploy files, the build and CI scripts.
HASH_COMMENTED = ("deploy", "Makefile", "pyproject.toml", ".ci")

_SECTION = r"§\s?\d+(?:\.\d+)*(?:\s*(?:[-–,]|and)\s*§?\s?\d+(?:\.\d+)*)*"
_CITATION = re.compile(
    r"(?<![\w/.:*-])(?P<path>(?:\.\.?/)*[\w-]+(?:[./][\w-]+)*\.md)\b`?"
    r"(?:,?\s+(?:(?P<sections>" + _SECTION + r")"
    r"|[\"“*](?P<name>[^\"”*\n]{1,80})[\"”*]))?")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class Citation:
    path: str
    sections: tuple[str, ...]  # the numbers of the § references, "6", "10.4"
    name: str | None  # a heading's name, quoted or starred after the path


def citations(text: str) -> list[Citation]:
    """Every ``*.md`` path in ``text`` with the section named right after it."""
    flat = re.sub(r"\s+", " ", text)
    found: list[Citation] = []
    for match in _CITATION.finditer(flat):
        sections = tuple(_NUMBER.findall(match["sections"] or ""))
        found.append(Citation(match["path"], sections, match["name"]))
    return found


def _numbered(heading: str, number: str) -> bool:
    return re.match(re.escape(number) + r"(?:\.?\s|\.$|$)", heading) is not None


def broken(citation: Citation, bases: tuple[Path, ...]) -> str | None:
    """Why ``citation`` does not resolve from any of ``bases``, or None when it does."""
    targets = [(base / citation.path).resolve() for base in bases]
    target = next((t for t in targets if t.is_relative_to(ROOT) and t.is_file()), None)
    if target is None:
        return f"{citation.path}: no such file in the repository"
    titles = headings(target.read_text(encoding="utf-8"))
    for number in citation.sections:
        if not any(_numbered(title, number) for title in titles):
            return f"{citation.path} §{number}: no heading numbered {number}"
    if citation.name is not None:
        name = citation.name.replace("`", "").strip().rstrip(".,;:").lower()
        labels = [*titles, *emphasised(target.read_text(encoding="utf-8"))]
        if not any(name in label.lower() for label in labels):
            return f'{citation.path} "{citation.name}": no heading or bold label of that name'
    return None


def python_comments(text: str) -> list[str]:
    """The comments (consecutive lines joined) and the docstrings of a Python file."""
    blocks: list[str] = []
    last_line = -2
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        body = token.string.lstrip("#").strip()
        if line == last_line + 1 and blocks:
            blocks[-1] += " " + body
        else:
            blocks.append(body)
        last_line = line
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                blocks.append(docstring)
    return blocks


def _line_comments(text: str, marker: str) -> list[str]:
    blocks: list[str] = []
    previous = False
    for line in text.splitlines():
        match = re.search(r"(?:^|\s)" + re.escape(marker) + r"(.*)$", line)
        if match and previous:
            blocks[-1] += " " + match[1].strip()
        elif match:
            blocks.append(match[1].strip())
        previous = match is not None
    return blocks


def source_comments(path: Path, text: str) -> list[str]:
    """The comments (and, in Python, the docstrings) of a source file, by its suffix."""
    if path.suffix == ".py":
        return python_comments(text)
    if path.suffix == ".js":
        block = [m[1] for m in re.finditer(r"/\*(.*?)\*/", text, re.DOTALL)]
        return _line_comments(text, "//") + block
    if path.suffix in (".lua", ".sql"):
        return _line_comments(text, "--")
    return _line_comments(text, "#")  # deploy files, Makefile, pyproject.toml, .ci/run


def source_files() -> list[Path]:
    """The code whose comments are read: every source file of the layers and the tests,
    and every file of ``deploy/``, ``.ci/``, the Makefile and pyproject.toml."""
    code = [p for d in SOURCE_DIRS for p in (ROOT / d).rglob("*")
            if p.suffix in SOURCE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts]
    other = [p for name in HASH_COMMENTED for p in [ROOT / name, *(ROOT / name).rglob("*")]
             if p.is_file()]
    return sorted(code + other)


def broken_in_source(path: Path, text: str) -> list[str]:
    """Each citation in the comments of a source file that does not resolve from the root."""
    problems: list[str] = []
    for block in source_comments(path, text):
        for citation in citations(block):
            reason = broken(citation, (ROOT,))
            if reason:
                problems.append(reason)
    return problems


def broken_in_doc(doc: Path, text: str) -> list[str]:
    """Each citation in a page's text (links and code spans included, code blocks too)
    that resolves neither from the page's folder nor from the root."""
    problems: list[str] = []
    for citation in citations(text):
        reason = broken(citation, (doc.parent, ROOT))
        if reason:
            problems.append(reason)
    return problems
