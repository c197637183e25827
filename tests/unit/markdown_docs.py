"""Reading the project's Markdown (README.md, docs/) for the docs tests, with markdown-it:
links, heading anchors and tables as a renderer sees them, code spans and blocks excluded."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
_PARSER = MarkdownIt("commonmark").enable("table")


def doc_files() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def tokens(text: str) -> list[Token]:
    return _PARSER.parse(text)


def _inline_text(token: Token) -> str:
    return "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))


def links(text: str) -> list[str]:
    """Every link and image target, inline or by reference (markdown-it resolves those)."""
    found: list[str] = []
    for token in tokens(text):
        for child in token.children or ():
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
            elif child.type == "image":
                found.append(str(child.attrs["src"]))
    return found


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def headings(text: str) -> list[str]:
    """Every heading's text, in order, as rendered (code spans without their backticks)."""
    stream = tokens(text)
    return [_inline_text(stream[i + 1]) for i, t in enumerate(stream) if t.type == "heading_open"]


def emphasised(text: str) -> list[str]:
    """The text of every strong emphasis (``**Rollback.**``), as rendered: the bold
    labels a page uses for items too small for a heading."""
    found: list[str] = []
    for token in tokens(text):
        children = token.children or []
        for i, child in enumerate(children):
            if child.type == "strong_open":
                end = next(j for j in range(i, len(children)) if children[j].type == "strong_close")
                found.append("".join(c.content for c in children[i + 1:end] if c.type in ("text", "code_inline")))
    return found


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, … as on GitHub."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    stream = tokens(text)
    for i, token in enumerate(stream):
        if token.type == "heading_open":
            base = slug(_inline_text(stream[i + 1]))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


@dataclass(frozen=True)
class Cell:
    text: str  # the cell as rendered text, code spans without their backticks
    code: tuple[str, ...]  # the code spans in the cell, in order


def tables_under(text: str, heading: str) -> list[list[list[Cell]]]:
    """The body rows of every table between the heading whose text is ``heading`` and the
    next heading of the same or a higher level."""
    stream = tokens(text)
    tables: list[list[list[Cell]]] = []
    level: str | None = None
    rows: list[list[Cell]] = []
    row: list[Cell] = []
    in_body = False
    for i, token in enumerate(stream):
        if token.type == "heading_open":
            title = _inline_text(stream[i + 1])
            if level is not None and token.tag <= level:
                break
            if title == heading:
                level = token.tag
            continue
        if level is None:
            continue
        if token.type == "tbody_open":
            in_body, rows = True, []
        elif token.type == "tbody_close":
            in_body = False
            tables.append(rows)
        elif in_body and token.type == "tr_open":
            row = []
        elif in_body and token.type == "tr_close":
            rows.append(row)
        elif in_body and token.type == "inline":
            code = tuple(c.content for c in token.children or () if c.type == "code_inline")
            row.append(Cell(_inline_text(token).strip(), code))
    if level is None:
        raise AssertionError(f"no heading {heading!r}")
    return tables
