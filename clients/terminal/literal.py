"""A stranger's text is shown as text.

Everything the server sends that a person typed or the server words (table, player and
bot names, refusal messages, command and card labels) is shown literally: never read as
Rich or Textual markup, where ``[/x]`` raises ``MarkupError`` and ``[@click=app.quit]``
becomes an action. A Textual widget given a ``str`` (``Static.update``, ``Label``,
a ``DataTable`` cell or column, an ``Option`` prompt, ``notify``) parses it as markup; so
every such value goes through ``literal`` (a ``rich.text.Text``, which no widget parses)
and every notification through ``tell`` (``markup=False``). Styled text is built from
``Text`` pieces (``Text.assemble``, ``Text.append``), which are plain too.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App
from textual.notifications import SeverityLevel
from textual.widget import Widget


def literal(value: object, style: str = "") -> Text:
    """``value`` as it reads, in ``style``: ``[bold]x`` shows the brackets."""
    if isinstance(value, Text):
        return value
    return Text(str(value), style=style)


def tell(where: App[Any] | Widget, message: str, *, title: str = "", severity: SeverityLevel = "information") -> None:
    """A notification of ``where`` (the app, a screen or a widget) shown as written."""
    where.notify(message, title=title, severity=severity, markup=False)
