"""No user-visible text in the web client outside the catalogs (docs/i18n.md, "The web
client"). What counts as user-visible in ``clients/web/js/*.js``: a string or template
literal with a letter in it that is

- a child of ``h(tag, attrs, ...children)`` (text set into the DOM), outside any nested call
  (``t("web.x")`` is a key, not text);
- the value of a ``title``, ``aria-label``, ``placeholder`` or ``alt`` attribute;
- assigned to ``textContent``, ``innerText`` or ``title``;
- given to ``toast(...)`` or ``new Error(...)``, or pushed onto ``problems`` (the deal
  check's findings, shown on the replay page);

and in ``clients/web/index.html``, any text with a letter outside an element marked
``data-i18n`` (the page's title excepted: app.js sets it). Every ``t("key")`` the client
calls names a key of every catalog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from services.i18n.catalogs import LANGS, PLURAL, catalog

WEB = Path(__file__).resolve().parents[2] / "clients" / "web"
LETTER = re.compile(r"[^\W\d_]")
ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}
REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}


@dataclass
class Token:
    kind: str  # "str" (quoted or template), "word", "punct"
    text: str  # a string's static text (a template without its ${...}), else the token
    line: int


def tokens(source: str) -> list[Token]:
    """A JavaScript tokenizer good enough for the client's own code: strings, templates
    (their ``${...}`` skipped), comments, regular expression literals, words, punctuation."""
    out: list[Token] = []
    i, line, n = 0, 1, len(source)

    def previous() -> str:
        return out[-1].text if out and out[-1].kind == "punct" else ("" if not out else "word")

    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif source.startswith("//", i):
            i = source.find("\n", i) if source.find("\n", i) >= 0 else n
        elif source.startswith("/*", i):
            end = source.index("*/", i) + 2
            line += source.count("\n", i, end)
            i = end
        elif c in "\"'":
            j = i + 1
            while source[j] != c:
                j += 2 if source[j] == "\\" else 1
            out.append(Token("str", source[i + 1:j], line))
            i = j + 1
        elif c == "`":
            j, text, depth = i + 1, [], 0
            while True:
                ch = source[j]
                if depth == 0 and ch == "`":
                    break
                if ch == "\\":
                    text.append(source[j:j + 2]) if depth == 0 else None
                    j += 2
                    continue
                if depth == 0 and source.startswith("${", j):
                    depth, j = 1, j + 2
                    continue
                if depth:
                    depth += {"{": 1, "}": -1}.get(ch, 0)
                    if ch == "`":  # a template inside the expression: skip it whole
                        j = source.index("`", j + 1)
                else:
                    text.append(ch)
                line += ch == "\n"
                j += 1
            out.append(Token("str", "".join(text), line))
            i = j + 1
        elif c == "/" and previous() in REGEX_BEFORE and not (out and out[-1].kind == "word" and out[-1].text not in {"return", "typeof"}):
            j, in_class = i + 1, False
            while in_class or source[j] != "/":
                if source[j] == "\\":
                    j += 1
                elif source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                j += 1
            j += 1
            while j < n and source[j].isalpha():
                j += 1
            i = j
        elif c.isalnum() or c in "_$":
            j = i
            while j < n and (source[j].isalnum() or source[j] in "_$"):
                j += 1
            out.append(Token("word", source[i:j], line))
            i = j
        else:
            out.append(Token("punct", c, line))
            i += 1
    return out


def _args(toks: list[Token], open_at: int) -> list[list[Token]]:
    """The top-level arguments of the call whose ``(`` is at ``open_at``."""
    args: list[list[Token]] = [[]]
    depth = 0
    for tok in toks[open_at + 1:]:
        if tok.kind == "punct" and tok.text in "([{":
            depth += 1
        elif tok.kind == "punct" and tok.text in ")]}":
            if depth == 0:
                return args
            depth -= 1
        elif tok.kind == "punct" and tok.text == "," and depth == 0:
            args.append([])
            continue
        args[-1].append(tok)
    return args


def _loose_text(arg: list[Token]) -> list[Token]:
    """The strings of an argument that are not inside a nested call, array or object, nor
    compared (``x === "misdeal" ? ... : ...``: a value, not text)."""
    found, depth = [], 0
    for k, tok in enumerate(arg):
        if tok.kind == "punct" and tok.text in "([{":
            depth += 1
        elif tok.kind == "punct" and tok.text in ")]}":
            depth -= 1
        elif tok.kind == "str" and depth == 0:
            compared = (k and arg[k - 1].text == "=") or (k + 1 < len(arg) and arg[k + 1].text in {"=", "!"})
            if not compared:
                found.append(tok)
    return found


def visible_literals(source: str) -> list[tuple[int, str]]:
    """Every user-visible literal of ``source`` (the rules in this module's docstring)."""
    toks = tokens(source)
    found: list[tuple[int, str]] = []

    def text(tok: Token) -> None:
        if tok.kind == "str" and LETTER.search(tok.text):
            found.append((tok.line, tok.text))

    for k, tok in enumerate(toks):
        after = toks[k + 1] if k + 1 < len(toks) else None
        before = toks[k - 1] if k else None
        called = after is not None and after.kind == "punct" and after.text == "("
        if tok.kind == "word" and tok.text == "h" and called and not (before and before.text == "."):
            for arg in _args(toks, k + 1)[2:]:
                for loose in _loose_text(arg):
                    text(loose)
        elif tok.kind == "word" and called and (
                tok.text in {"toast", "Error"} or (tok.text == "push" and k >= 2 and toks[k - 2].text == "problems")):
            for loose in _loose_text(_args(toks, k + 1)[0]):
                text(loose)
        elif tok.text in ATTRIBUTES and tok.kind in {"word", "str"} and after is not None and after.text == ":":
            for loose in _loose_text(_args([Token("punct", "(", 0), *toks[k + 2:]], 0)[0]):
                text(loose)
        elif tok.kind == "word" and tok.text in {"textContent", "innerText", "title"} and after is not None \
                and after.text == "=" and toks[k + 2].text != "=" and before is not None and before.text == ".":
            rest = _args([Token("punct", "(", 0), *toks[k + 2:]], 0)[0]
            statement = []
            for t in rest:
                if t.kind == "punct" and t.text == ";":
                    break
                statement.append(t)
            for loose in _loose_text(statement):
                text(loose)
    return found


def test_the_scanner_finds_text_in_each_place_it_looks() -> None:
    sample = """
      import { t } from "./i18n.js";
      const ok = h("p", { class: "muted" }, t("web.loading"), " · ", `${n}/${m}`, x.join(", "));
      const bad = h("p", {}, "Hello", cond ? t("web.a") : "Nope", `hand ${n}`);
      h("button", { title: "Refresh", "aria-label": t("web.x") }, "↻");
      el.textContent = "Gone";
      toast(`Oops ${e}`);
      problems.push("a bad deal");
      const re = /^```"'/; const s = "`"; // a regex and a quote do not derail it
      h("i", {}, "Late");
      h("b", {}, kind === "misdeal" ? t("web.a") : t("web.b"));
    """
    assert [t for _, t in visible_literals(sample)] == ["Hello", "Nope", "hand ", "Refresh", "Gone", "Oops ",
                                                        "a bad deal", "Late"]


@pytest.mark.parametrize("path", sorted(WEB.glob("js/*.js")), ids=lambda p: p.name)
def test_no_user_visible_string_in_the_web_client_is_outside_the_catalogs(path: Path) -> None:
    found = visible_literals(path.read_text())
    assert not found, f"{path.name}: text outside the catalogs: {found}"


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.loose: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in {"meta", "link", "br", "img", "input"}:
            self.stack.append((tag, any(name == "data-i18n" for name, _ in attrs)))

    def handle_endtag(self, tag: str) -> None:
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        marked = any(m for _, m in self.stack) or any(t in {"title", "script", "style"} for t, _ in self.stack)
        if LETTER.search(data) and not marked:
            self.loose.append(data.strip())


def test_the_pages_own_words_are_marked_for_the_catalog() -> None:
    page = _Page()
    page.feed((WEB / "index.html").read_text())
    assert not page.loose, page.loose


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_the_web_client_asks_for_is_in_every_catalog(lang: str) -> None:
    keys: set[str] = set()
    for path in WEB.glob("js/*.js"):
        keys |= set(re.findall(r"\bt\(\"([\w.]+)\"", path.read_text()))
    keys |= set(re.findall(r'data-i18n="([\w.]+)"', (WEB / "index.html").read_text()))
    assert len(keys) > 100
    texts = catalog(lang).texts
    missing = sorted(k for k in keys if k not in texts and f"{k}{PLURAL}other" not in texts)
    assert not missing, f"{lang} lacks {missing}"
