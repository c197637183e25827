"""Commands, phases and replay steps in words, as a menu or the log shows them.

The client knows no rules: what may be sent is the view's ``legal`` list
(docs/api.md, "Playing"); this only names each command for a person.
"""

from __future__ import annotations

from typing import Any

from clients.terminal.cards import SUIT_NAMES, SUIT_SYMBOLS, plain

PHASES = {
    "waiting": "waiting for the deal", "bidding": "bidding", "exchange": "the kitty and the friend call",
    "play": "play", "finished": "the hand is over", "redeal": "everybody passed: a new deal",
    "bargaining": "bargaining", "discard": "the dealer's discard", "declaring": "declarations",
    "abandoned": "the deal was abandoned",
}


def seat_name(seat: dict[str, Any]) -> str:
    """A seat of the API's Table as a person reads it: the player's name, a bot's level
    beside its name (``Ada · beginner bot``), ``(away)`` while a bot plays for them."""
    name = str(seat.get("name") or "")
    if seat.get("bot"):
        name = f"{name} · {seat['bot']} bot" if name else f"{seat['bot']} bot"
    return f"{name} (away)" if seat.get("away") else name


def suit(code: str | None) -> str:
    return SUIT_SYMBOLS.get(code or "", code or "")


def describe(command: dict[str, Any], game: str | None = None) -> str:
    """One command as a menu line: ``Bid 14 ♥``, ``Call the friend: A♥``."""
    kind = command.get("type")
    if kind == "pass":
        return "Pass"
    if kind == "bid":
        trump = command.get("trump")
        return f"Bid {command.get('points')} {suit(trump)} ({SUIT_NAMES.get(trump or '', trump)})"
    if kind == "discard":
        if "count" in command:
            return f"Discard {command['count']} cards (select them in your hand)"
        taken = command.get("take")
        shown = "Discard " + " ".join(plain(c, game) for c in command.get("cards") or ())
        return shown + (f", keep {' '.join(plain(c, game) for c in taken)}" if taken else "")
    if kind == "change_trump":
        trump = command.get("trump")
        return f"Change the trump to {suit(trump)} ({SUIT_NAMES.get(trump or '', trump)})"
    if kind == "call_friend":
        return _friend(command, game)
    if kind == "play":
        return _play(command, game)
    if kind == "exchange":
        return f"Take {plain(str(command.get('take')), game)}, give back {plain(str(command.get('discard')), game)}"
    if kind == "bargain":
        action = command.get("action")
        amount = command.get("amount")
        return {"pass": "Bargain: pass", "continue": "Bargain: continue the deal"}.get(
            str(action), f"Bargain: {action} {amount}")
    if kind == "declare":
        combos = command.get("combinations") or []
        return "Declare: " + ", ".join(combos) if combos else "Declare nothing"
    fields = ", ".join(f"{k}={v}" for k, v in command.items() if k != "type")
    return f"{kind} {fields}".strip()


def said(command: dict[str, Any], game: str | None = None) -> str:
    """A legal entry as the server names it (its ``label``, docs/api.md "Games, labels and
    languages"), else as ``describe`` words it (a command of the client's own making)."""
    label = command.get("label")
    return label if isinstance(label, str) and label else describe(command, game)


def _friend(command: dict[str, Any], game: str | None) -> str:
    friend = command.get("friend")
    calls = friend if isinstance(friend, list) else [friend]
    named = []
    for call in calls:
        if call == "none":
            named.append("no friend (play alone)")
        elif call == "first_trick":
            named.append("the first trick's winner")
        else:
            named.append(f"the holder of {plain(str(call), game)}")
    text = "Call the friend: " + " and ".join(named)
    if command.get("lead_suit"):
        text += f"; advise leading {suit(command['lead_suit'])}"
    return text


def _play(command: dict[str, Any], game: str | None) -> str:
    text = "Play " + plain(str(command.get("card")), game)
    if command.get("suit"):
        text += f", naming {suit(command['suit'])} ({SUIT_NAMES.get(command['suit'], command['suit'])})"
    if command.get("joker_call") is True:
        text += ", calling the Joker"
    elif command.get("joker_call") is False:
        text += ", without calling the Joker"
    return text


def refusal(code: str, message: str) -> str:
    return f"Refused ({code}): {message}"


def step(entry: dict[str, Any], names: list[str], game: str | None) -> str:
    """A replay step (docs/hand-files.md, ``mighty replay --as``) as one line."""
    if entry.get("type") == "deal" or entry.get("seat") is None:
        return "The deal"
    seat = int(entry["seat"])
    who = names[seat] if seat < len(names) else f"seat {seat}"
    command = {k: v for k, v in entry.items() if k not in ("index", "seat", "view")}
    command.update(entry.get("command") or {})
    return f"{who}: {describe(command, game)}"
