"""Names a stranger gives: a player's and a table's (docs/api.md, "Players" and "The lobby").

One rule for both: printable text of a bounded length, not only spaces, with no control
character and no format character (Unicode category Cf: the bidi controls U+202A–U+202E,
U+2066–U+2069, U+200E, U+200F, U+061C, the zero-width characters, the soft hyphen…), so
a name cannot hide itself or reorder the text around it wherever it is shown.

Markup characters (``<script>``, ``[/x]``) are ordinary text here: every client shows a
name as text, never as markup, and the server never turns a name into markup.
"""

from __future__ import annotations

from typing import Final

PLAYER_NAME_MAX: Final = 24
TABLE_NAME_MAX: Final = 40


def name_problem(name: str, longest: int) -> str | None:
    """Why ``name`` is not a name of 1 to ``longest`` characters; None if it is one."""
    if not 1 <= len(name) <= longest:
        return f"a name is 1 to {longest} characters, not {len(name)}"
    if not name.strip():
        return "a name is not only spaces"
    for char in name:
        if not char.isprintable():  # Unicode's "Other" and "Separator" categories, but the space
            return f"a name holds no control or format character (U+{ord(char):04X})"
    return None
