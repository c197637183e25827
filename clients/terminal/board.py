"""What the table screen shows, worked out from one view document (docs/api.md,
"Playing"): no I/O, so a recorded view renders the same in a test as on a terminal.

A view's ``state`` is the game's own seat view (the auction, the contract, the tricks…);
fields a game does not have are simply absent, so Mitigati's table shows through the
same code with its own lines (bargaining, declarations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.text import Text

from clients.terminal.cards import cards_text, deck, label, plain, suit_label, term
from clients.terminal.catalog import t


@dataclass
class Moves:
    """The view's legal commands, split by how the keyboard reaches them."""

    plays: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # card → its play commands
    # the count form: {"type": "discard", "count": N, "from": […]}, when it is the only one;
    # several (mighty-3: one for each set of kitty cards to keep, ``take``) are in the menu,
    # where choosing one starts the selection (``TableScreen.step``)
    discard: dict[str, Any] | None = None
    menu: list[dict[str, Any]] = field(default_factory=list)  # everything else, by name

    @property
    def cards(self) -> set[str]:
        """The cards the hand bar marks: those that can be played, or picked for a discard."""
        if self.discard is not None:
            return set(self.discard.get("from") or ())
        return set(self.plays)


def moves(view: dict[str, Any]) -> Moves:
    found = Moves()
    steps = []
    for command in view.get("legal") or ():
        if command.get("type") == "play" and isinstance(command.get("card"), str):
            found.plays.setdefault(command["card"], []).append(command)
        elif is_step(command):
            steps.append(command)
        else:
            found.menu.append(command)
    if len(steps) == 1:
        found.discard = steps[0]
    else:
        found.menu.extend(steps)
    return found


def is_step(command: dict[str, Any]) -> bool:
    """A step of several cards to select (the discard as a count), not a command yet."""
    return command.get("type") == "discard" and "count" in command


def step_cards(hand: list[str], step: dict[str, Any] | None) -> list[str]:
    """The cards a step selects from, as the hand bar shows them: the hand, and the kitty
    cards the step keeps (mighty-3's ``take``: not in the hand yet, and may go again)."""
    taken = [c for c in (step or {}).get("take") or () if c not in hand]
    return [*hand, *taken]


def card_text(card: str, game: str | None) -> str:
    """A card as the screen draws it (``A♠``)."""
    return plain(card, game)


def discard_command(step: dict[str, Any], cards: list[str]) -> dict[str, Any]:
    """The command of a count-form discard step with ``cards`` picked (other fields kept)."""
    command = {k: v for k, v in step.items() if k not in ("count", "from")}
    command["cards"] = list(cards)
    return command


def state(view: dict[str, Any]) -> dict[str, Any]:
    """The game's view of the hand (the auction, the contract, the tricks…): the view's
    own top-level fields (docs/api.md), or a replay step's ``state``."""
    shown = view.get("state")
    return shown if isinstance(shown, dict) else view


def phase_name(view: dict[str, Any]) -> str:
    """The view's phase as the catalogue names it for the reader."""
    phase = str(view.get("phase") or "")
    found = deck(view.get("game"))
    return found.phases.get(phase, phase) if found is not None else phase


def seat_name(names: list[str], seat: int | None) -> str:
    if seat is None:
        return t("terminal.status.nobody")
    return names[seat] if seat < len(names) and names[seat] else t("terminal.status.seat", n=seat)


def time_left(deadline: str | None, now: datetime | None = None) -> str | None:
    if not deadline:
        return None
    try:
        due = datetime.fromisoformat(deadline.replace("Z", "+00:00"))
    except ValueError:
        return None
    seconds = max(0, int((due - (now or datetime.now(UTC))).total_seconds()))
    return f"{seconds // 60}:{seconds % 60:02d}"


def status(view: dict[str, Any], names: list[str], now: datetime | None = None) -> Text:
    """The lines above the seats: phase, whose turn and the time left, the contract."""
    shown = state(view)
    game = view.get("game")
    text = Text()
    text.append(t("terminal.status.hand", n=view.get("hand_no") or 0), style="bold")
    if "hands_scored" in view:  # a table's view; a replay step knows only its own hand
        text.append(" " + t("terminal.status.scored", n=view["hands_scored"]))
    text.append(f"  ·  {phase_name(view)}")
    if view.get("status") == "closed":
        text.append("  ·  " + t("terminal.status.over"), style="bold yellow")
    to_act = view.get("to_act")
    if to_act is not None:
        text.append("\n")
        if to_act == view.get("seat"):
            text.append(t("terminal.status.your_turn"), style="bold reverse green")
        else:
            text.append(t("terminal.status.to_act", name=seat_name(names, to_act)), style="bold")
        left = time_left(view.get("deadline"), now)
        if left is not None:
            text.append("  " + t("terminal.status.left", time=left), style="yellow")
    declarer = shown.get("declarer")
    contract = shown.get("contract")
    if declarer is not None and isinstance(contract, list):
        text.append("\n" + t("terminal.status.contract") + " ")
        text.append(f"{seat_name(names, declarer)} {contract[0]} ")
        text.append_text(suit_label(str(contract[1]), game))
        side = side_points(view)
        if side is not None:
            text.append("   " + t("terminal.status.side_points", count=side[0], contract=side[1]), style="bold")
    call = shown.get("friend_call")
    if isinstance(call, list) and call:
        text.append("   " + t("terminal.status.friend_call") + " ")
        text.append_text(_friend_call(call, game))
        friend = shown.get("friend")
        if shown.get("friend_known") or (friend is not None and friend == view.get("seat")):
            text.append(f" → {seat_name(names, friend) if friend is not None else 'none'}", style="bold")
    if shown.get("lead_suit"):
        text.append("   " + t("terminal.status.lead_advice") + " ")
        text.append_text(suit_label(str(shown["lead_suit"]), game))
    for line in auction_lines(view, names):
        text.append("\n")
        text.append_text(line)
    kitty = shown.get("kitty")
    if kitty:
        text.append("\n" + t("terminal.status.kitty") + " ")
        text.append_text(cards_text(list(kitty), game))
    if shown.get("discards"):
        text.append("   " + t("terminal.status.discarded") + " ")
        text.append_text(cards_text(list(shown["discards"]), game))
    bargaining = shown.get("bargaining")
    if isinstance(bargaining, dict):
        text.append("\n" + _bargaining(bargaining, names))
        amounts = bargain_amounts(view)
        if amounts:
            text.append("\n" + "  ·  ".join(amounts), style="bold")
    declarations = shown.get("declarations")
    if declarations:
        text.append("\n" + t("terminal.status.declared") + " " + "; ".join(_declaration(d, names, game) for d in declarations))
    return text


def _friend_call(call: list[Any], game: str | None) -> Text:
    kind = call[0]
    if kind == "card" and len(call) > 1:
        return label(str(call[1]), game)
    return Text(t(f"terminal.friend.{kind}") if kind in ("none", "first_trick") else str(kind))


def _bargaining(bargaining: dict[str, Any], names: list[str]) -> str:
    parts = [t("terminal.bargain.session", n=bargaining.get("session"))]
    if bargaining.get("payer") is None and bargaining.get("seller") is None:
        parts.append(t("terminal.auction.none"))
    if bargaining.get("payer") is not None:
        parts.append(t("terminal.bargain.offers", name=seat_name(names, bargaining["payer"]), amount=bargaining.get("offer")))
    if bargaining.get("seller") is not None:
        parts.append(t("terminal.bargain.asks", name=seat_name(names, bargaining["seller"]), amount=bargaining.get("ask")))
    said = [_said(entry, names) for entry in bargaining.get("said") or ()]
    if said:
        parts.append(t("terminal.bargain.said") + " " + ", ".join(said[-6:]))
    return "  ·  ".join(parts)


def _said(entry: Any, names: list[str]) -> str:
    """One bargaining turn, ``[seat, action, amount]``: ``Bo sells 67``."""
    if not isinstance(entry, list) or len(entry) < 2:
        return str(entry)
    seat, action = entry[0], str(entry[1])
    amount = entry[2] if len(entry) > 2 else None
    if action not in ("pass", "continue", "pay", "sell"):
        return f"{seat_name(names, seat)} {action}" + (f" {amount}" if amount is not None else "")
    return t(f"terminal.bargain.{action}", name=seat_name(names, seat), amount=amount)


def _declaration(entry: Any, names: list[str], game: str | None) -> str:
    """One declared combination (docs/rules/mitigati.md, "Declarations"): who, which, its value, and the
    cards shown for tarocchi."""
    if not isinstance(entry, dict):
        return str(entry)
    text = f"{seat_name(names, entry.get('seat'))}: {term(str(entry.get('name')), game)} ({entry.get('value')})"
    if entry.get("shown"):
        text += " " + cards_text(list(entry["shown"]), game).plain
    return text


def _auction_by_seat(shown: dict[str, Any], game: str | None) -> dict[int, str]:
    """Each seat's highest bid, or ``pass`` for a seat that passed without bidding."""
    best: dict[int, str] = {}
    for entry in shown.get("auction") or ():
        if isinstance(entry, list) and len(entry) == 3:
            seat, points, suit = entry
            if points:
                best[int(seat)] = f"{points} {suit_label(str(suit), game).plain}"
            else:
                best.setdefault(int(seat), t("terminal.auction.passed"))
    return best


def auction_news(before: dict[str, Any], after: dict[str, Any], names: list[str]) -> list[str]:
    """The bids and passes said since ``before``, in words, for the log."""
    game = after.get("game")
    old = len(state(before).get("auction") or ()) if state(before).get("hand_no") == state(after).get("hand_no") else 0
    said = []
    for seat, points, suit in (state(after).get("auction") or [])[old:]:
        who = seat_name(names, seat)
        said.append(t("terminal.auction.pass", name=who) if not points
                    else t("terminal.auction.bid", name=who, bid=f"{points} {suit_label(str(suit), game).plain}"))
    return said


def trick_news(before: dict[str, Any], after: dict[str, Any], names: list[str]) -> list[Text]:
    """The cards played into the current trick since ``before``, for the log."""
    old_trick, new_trick = state(before).get("trick"), state(after).get("trick")
    if not isinstance(new_trick, dict):
        return []
    seen = len(old_trick.get("cards") or ()) if isinstance(old_trick, dict) and \
        old_trick.get("leader") == new_trick.get("leader") and \
        len(state(before).get("tricks") or ()) == len(state(after).get("tricks") or ()) else 0
    seats = max(1, len(after.get("seats") or ()) or len(state(after).get("hand_sizes") or ()))
    return [Text.assemble(t("terminal.trick.plays", name=seat_name(names, played_by(new_trick, i, seats))), " ",
                          label(card, after.get("game")))
            for i, card in enumerate(new_trick.get("cards") or ()) if i >= seen]


def played_by(trick: dict[str, Any], place: int, seats: int) -> int:
    """The seat that played a trick's ``place``-th card: the view's ``seats`` (the game's play
    order, docs/api.md); a view stored before ``seats`` existed goes round from the leader."""
    order = trick.get("seats") or ()
    if place < len(order):
        return int(order[place])
    return (int(trick.get("leader") or 0) + place) % max(1, seats)


def declarer_side(view: dict[str, Any]) -> set[int]:
    """The declarer and the friends everyone knows: the revealed friend, and with two
    packs each revealed one (``friends``, docs/rules/mighty.md §10)."""
    shown = state(view)
    side: set[int] = set()
    if shown.get("declarer") is not None:
        side.add(int(shown["declarer"]))
    if shown.get("friend") is not None and shown.get("friend_known"):
        side.add(int(shown["friend"]))
    side.update(int(seat) for seat in shown.get("friends") or ())
    return side


def side_points(view: dict[str, Any]) -> tuple[int, int] | None:
    """During play, the point cards the declarer's known side took (the view's
    ``face_up_points``, docs/rules/mighty.md §5) and the contract they play for; None
    where the view has no contract (the auction, Mitigati) or the hand is over."""
    shown = state(view)
    contract = shown.get("contract")
    taken = shown.get("face_up_points")
    if str(shown.get("phase") or view.get("phase")) != "play" or not isinstance(contract, list) \
            or not contract or not isinstance(taken, list) or shown.get("declarer") is None:
        return None
    return sum(int(taken[s]) for s in declarer_side(view) if s < len(taken)), int(contract[0])


LINE_WIDTH = 78  # an 80-column terminal, less the board's padding


def auction_lines(view: dict[str, Any], names: list[str]) -> list[Text]:
    """During the auction (docs/rules/mighty.md §3): the standing high bid and who holds
    it, or that nobody bid yet; on the player's turn the lowest bid the view's ``legal``
    offers; then the bids and passes said, the latest that fit one line."""
    shown = state(view)
    auction = shown.get("auction")
    if not isinstance(auction, list) or shown.get("contract") is not None \
            or str(shown.get("phase") or view.get("phase")) != "bidding":
        return []
    game = view.get("game")
    said = [e for e in auction if isinstance(e, list) and len(e) == 3]
    standing = next((e for e in reversed(said) if e[1]), None)
    first = Text()
    if standing is not None:
        bid = f"{standing[1]} {suit_label(str(standing[2]), game).plain}"
        first.append(t("terminal.auction.high", bid=bid, name=seat_name(names, standing[0])), style="bold")
    else:
        first.append(t("terminal.auction.none"), style="bold")
    lowest = [c["points"] for c in view.get("legal") or () if c.get("type") == "bid" and isinstance(c.get("points"), int)]
    if lowest:
        first.append("  ·  ")
        first.append(t("terminal.auction.minimum", points=min(lowest)), style="bold green")
    lines = [first]
    if said:
        words = [t("terminal.auction.pass", name=seat_name(names, seat)) if not points
                 else t("terminal.auction.bid", name=seat_name(names, seat),
                        bid=f"{points} {suit_label(str(suit), game).plain}")
                 for seat, points, suit in said]
        lines.append(Text(latest_that_fit(t("terminal.auction.said"), words), style="dim"))
    return lines


def latest_that_fit(head: str, words: list[str], width: int = LINE_WIDTH) -> str:
    """``head`` and the latest of ``words`` that fit in ``width`` columns, in order; ``…``
    where earlier ones were left out."""
    kept: list[str] = []
    for word in reversed(words):
        more = [word, *kept]
        line = f"{head} {'… ' if len(more) < len(words) else ''}{', '.join(more)}"
        if kept and Text(line).cell_len > width:
            break
        kept = more
    return f"{head} {'… ' if len(kept) < len(words) else ''}{', '.join(kept)}"


def bargain_amounts(view: dict[str, Any]) -> list[str]:
    """On the player's turn in a bargaining session (docs/rules/mitigati.md,
    "Bargaining"): the lowest offer and the highest ask the view's ``legal`` allows."""
    amounts: dict[str, list[int]] = {}
    for command in view.get("legal") or ():
        if isinstance(command.get("amount"), int) and command.get("action") in ("pay", "sell"):
            amounts.setdefault(str(command["action"]), []).append(int(command["amount"]))
    said = []
    if amounts.get("pay"):
        said.append(t("terminal.bargain.pay_from", amount=min(amounts["pay"])))
    if amounts.get("sell"):
        said.append(t("terminal.bargain.sell_to", amount=max(amounts["sell"])))
    return said


def seat_rows(view: dict[str, Any], names: list[str]) -> list[tuple[Text, ...]]:
    """One row per seat: who, the bid, the card in the current trick, tricks won, the
    points a defender took (face up), cards left, the match total."""
    shown = state(view)
    game = view.get("game")
    seats = len(view.get("seats") or ()) or len(shown.get("hand_sizes") or ())
    bids = _auction_by_seat(shown, game)
    trick = shown.get("trick") if isinstance(shown.get("trick"), dict) else None
    played: dict[int, str] = {}
    if trick:
        for i, card in enumerate(trick.get("cards") or ()):
            played[played_by(trick, i, seats)] = card
    won: dict[int, int] = {}
    for done in shown.get("tricks") or ():
        winner = done.get("winner")
        if winner is not None:
            won[winner] = won.get(winner, 0) + 1
    # the points each seat took, as the server counts them: a defender's lie face up
    # (docs/rules/mighty.md §5); the declarer's side's are not shown before the end
    taken = shown.get("face_up_points") or shown.get("points") or []
    side = declarer_side(view)
    sizes = shown.get("hand_sizes") or []
    totals = view.get("totals") or []
    rows: list[tuple[Text, ...]] = []
    for seat in range(seats):
        who = Text(("▶ " if seat == view.get("to_act") else "  ") + seat_name(names, seat),
                   style="bold green" if seat == view.get("seat") else "")
        if seat == view.get("seat"):
            who.append(" " + t("terminal.seats.you"), style="green")
        role = Text()
        if seat == shown.get("declarer"):
            role.append(t("terminal.role.declarer"), style="bold yellow")
        elif seat in side:
            role.append(t("terminal.role.friend"), style="yellow")
        elif seat == view.get("seat") and shown.get("friend") == seat:
            role.append(t("terminal.role.secret_friend"), style="yellow")
        if seat == shown.get("dealer", view.get("dealer")):  # this hand's, not the next one's
            role.append((" " if role else "") + t("terminal.role.dealer"), style="dim")
        card = played.get(seat)
        in_trick = label(card, game) if card else Text("")
        if card and trick and seat == trick.get("leader"):
            in_trick.append(" " + t("terminal.trick.led"), style="dim")
        face_up = Text("")
        if seat < len(taken) and (seat not in side or shown.get("scores")) and taken[seat]:
            face_up = Text(str(taken[seat]))
        rows.append((
            who, role, Text(bids.get(seat, "")), in_trick, Text(str(won.get(seat, 0))), face_up,
            Text(str(sizes[seat]) if seat < len(sizes) else ""),
            Text(str(totals[seat]) if seat < len(totals) else ""),
        ))
    return rows


SEAT_COLUMNS = ("seat", "role", "bid", "trick", "won", "points", "cards", "total")


def seat_columns() -> tuple[Text, ...]:
    return tuple(Text(t(f"terminal.seats.{c}")) for c in SEAT_COLUMNS)


def last_trick(view: dict[str, Any], names: list[str]) -> Text | None:
    tricks = state(view).get("tricks") or []
    if not tricks:
        return None
    done = tricks[-1]
    text = Text(t("terminal.trick.last", n=len(tricks)) + " ")
    text.append_text(cards_text(list(done.get("cards") or ()), view.get("game")))
    text.append(" " + t("terminal.trick.won_by", name=seat_name(names, done.get("winner"))), style="bold")
    return text


def result(view: dict[str, Any], names: list[str]) -> Text | None:
    """The hand's result, once it is scored, with how it came about: the contract and
    whether it was made, the points each seat took, what a bargain paid, each seat's score."""
    shown = state(view)
    scores = shown.get("scores")
    if shown.get("phase") not in ("finished", "abandoned", "redeal") or not scores:
        return None
    text = Text(t("terminal.result.title") + " ", style="bold")
    made = shown.get("made")
    contract = shown.get("contract")
    if made is not None:
        text.append(t("terminal.result.made" if made else "terminal.result.failed"),
                    style="bold green" if made else "bold red")
        if shown.get("declarer") is not None and isinstance(contract, list) and len(contract) == 2:
            bid = f"{contract[0]} {suit_label(str(contract[1]), view.get('game')).plain}"
            text.append(" " + t("terminal.result.bid", name=seat_name(names, shown["declarer"]), bid=bid))
        if shown.get("declarer_side_points") is not None:
            text.append(t("terminal.result.side_points", n=shown["declarer_side_points"]))
    elif shown.get("phase") == "abandoned":
        text.append(t("terminal.result.abandoned"))
    else:
        text.append(t("terminal.result.scored"))
    abandoned = shown.get("abandoned")
    if isinstance(abandoned, list) and len(abandoned) == 4:  # (session, payer, seller, amount)
        text.append("\n" + t("terminal.result.bargain", payer=seat_name(names, abandoned[1]),
                                seller=seat_name(names, abandoned[2]), amount=abandoned[3], n=abandoned[0]))
    taken = shown.get("points") or shown.get("face_up_points")
    if isinstance(taken, list) and taken:
        text.append("\n" + t("terminal.result.points") + " " + ", ".join(f"{seat_name(names, s)} {v}" for s, v in enumerate(taken)))
    text.append("\n" + t("terminal.result.scores") + " " + ", ".join(f"{seat_name(names, s)} {v:+d}" for s, v in enumerate(scores)))
    return text


def prompt(view: dict[str, Any], found: Moves, step: dict[str, Any] | None = None) -> str:
    """What the keyboard can do now, in one line; ``step``: the selection under way."""
    if view.get("seat") is None:
        return t("terminal.prompt.spectator")
    if view.get("to_act") != view.get("seat") and not view.get("legal"):
        return t("terminal.prompt.waiting")
    step = step or found.discard
    if step is not None:
        others = "; " + t("terminal.prompt.other_commands") if [c for c in found.menu if c is not step] else ""
        return t("terminal.prompt.select", count=step["count"]) + others + "."
    parts = []
    if found.plays:
        parts.append(t("terminal.prompt.play"))
    if found.menu:
        parts.append(t("terminal.prompt.menu", count=len(found.menu)))
    return "; ".join(parts) or t("terminal.prompt.nothing")


MENU_LIMIT = 60  # a list longer than this is narrowed step by step (``narrowing``)


def _parts(entry: dict[str, Any]) -> list[str]:
    """An entry's values in order (its cards among them), its type and label aside."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in ("type", "label"):
                    walk(item)
        elif value is not None:
            found.append(str(value))

    walk(entry)
    return found


def _named(group: list[dict[str, Any]]) -> str:
    first = str(group[0].get("label") or group[0].get("type"))
    return first if len(group) == 1 else f"{first} … ({len(group)})"


def narrowing(entries: list[dict[str, Any]], game: str | None) -> list[tuple[str, list[dict[str, Any]]]] | None:
    """How to pick among too many commands (mighty-8's 3,656 friend calls) by steps, none
    knowing a game: by the kind of command; then, at the first place the entries differ,
    by the suit of the card there, then by the card (the catalogue's names), or numbers by
    tens (Mitigati's offers, 1 to 130); a value that is no card is its own group. None:
    few enough to list them all."""
    if len(entries) <= MENU_LIMIT:
        return None
    kinds: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        kinds.setdefault(str(entry.get("type")), []).append(entry)
    if len(kinds) > 1:
        return [(_named(group), group) for group in kinds.values()]
    parts = [_parts(e) for e in entries]
    width = max(len(p) for p in parts)
    place = next((i for i in range(width) if len({p[i] if i < len(p) else "" for p in parts}) > 1), None)
    if place is None:
        return None
    found = deck(game)
    by_value: dict[str, list[dict[str, Any]]] = {}
    for entry, part in zip(entries, parts, strict=True):
        by_value.setdefault(part[place] if place < len(part) else "", []).append(entry)
    cards = found.cards if found is not None else {}
    # in the catalogue's order (a hand's): the cards by suit, high to low, then the rest
    by_value = dict(sorted(by_value.items(), key=lambda kv: (0, cards[kv[0]].order) if kv[0] in cards else (1, 0)))
    if len(by_value) > MENU_LIMIT and all(v.isdigit() for v in by_value):  # numbers: by tens
        by_tens: dict[int, list[tuple[int, list[dict[str, Any]]]]] = {}
        for value, group in by_value.items():
            by_tens.setdefault((int(value) - 1) // 10, []).append((int(value), group))
        return [(f"{min(n for n, _ in runs)}–{max(n for n, _ in runs)}", [e for _, g in runs for e in g])
                for _, runs in sorted(by_tens.items())]
    if len(by_value) > MENU_LIMIT and found is not None:  # by the suit first
        by_suit: dict[str, list[dict[str, Any]]] = {}
        named: dict[str, str] = {}
        for value, group in by_value.items():
            card = cards.get(value)
            key = f"suit:{card.suit}" if card is not None and card.suit else f"value:{value}"
            if card is not None and card.suit:
                named[key] = found.suits.get(card.suit, card.suit)
            by_suit.setdefault(key, []).extend(group)
        return [(f"{named[key]} ({len(group)})" if key in named else _named(group), group)
                for key, group in by_suit.items()]
    shown: list[tuple[str, list[dict[str, Any]]]] = []
    for value, group in by_value.items():
        card = cards.get(value)
        if card is not None:
            text = f"{plain(value, game)}  {card.label}" + (f" ({len(group)})" if len(group) > 1 else "")
        else:
            text = _named(group)
        shown.append((text, group))
    return shown
