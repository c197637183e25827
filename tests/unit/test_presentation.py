"""Each game describes itself (docs/api.md, "Games, labels and languages"): its catalogue
(``GET /api/v1/games``) names every game ``CreateTable`` takes with its options, cards and
phases; a card's ``order`` sorts a hand as the game's own rules code does; every legal
entry of a view carries a label the English catalogue renders; Mighty's hand shows the
trump suit first; the audit replay carries each seat's remaining cards."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.mighty.cards import POINTS_OF
from domain.mighty.cards import SUIT_OF as MIGHTY_SUIT_OF
from domain.mighty.cards import sorted_cards as mighty_sorted
from domain.mighty.rules import OPTIONS, VARIANTS
from domain.mitigati.cards import DECK as TAROT_DECK
from domain.mitigati.cards import STRENGTH, SUIT_OF
from domain.presentation import SYMBOLS, DiscardStep, msg
from domain.registry import GAMES, game_named, variants
from projections.views import ViewState, render
from services.gateway import labels
from services.gateway.views import view_document
from services.i18n.catalogs import catalog, of
from tests.unit.test_legal_entries import PLAYABLE, Table

HAND_FILE = Path(__file__).resolve().parents[1] / "hands" / "complete-friend-card.json"
CATALOGUE = {g.game: g for g in labels.games().games}
SYMBOLS_JS = Path(__file__).resolve().parents[2] / "clients" / "web" / "js" / "symbols.js"


# ---------------------------------------------------------------- the catalogue


def test_the_catalogue_names_every_game_a_table_is_created_for_with_its_seats() -> None:
    assert list(CATALOGUE) == list(PLAYABLE)
    for name, variant in VARIANTS.items():
        assert CATALOGUE[name].family == "mighty"
        assert CATALOGUE[name].seats == variant.players
    assert CATALOGUE["mitigati"].family == "mitigati" and CATALOGUE["mitigati"].seats == 3
    assert set(variants()) == set(CATALOGUE)


def test_every_mighty_option_is_offered_with_its_values_and_its_variants_default() -> None:
    for name, variant in VARIANTS.items():
        options = {o.name: o for o in CATALOGUE[name].options}
        assert list(options) == list(OPTIONS)
        for option, values in OPTIONS.items():
            assert [c.value for c in options[option].choices or ()] == list(values)
            assert options[option].type == ("boolean" if isinstance(values[0], bool) else "choice")
        assert options["score"].default == variant.default_score
        assert options["joker_call"].default == "on_ripper_lead"
        # a table made with every default is the variant's default rule set
        defaults = {o.name: o.default for o in options.values()}
        assert game_named(name).make_rules(name, defaults) == game_named(name).make_rules(name, {})
    assert CATALOGUE["mitigati"].options == []


def test_each_game_lists_exactly_its_deck_and_phases() -> None:
    for name, variant in VARIANTS.items():
        assert sorted(c.card for c in CATALOGUE[name].cards) == sorted(variant.deck)
        assert [p.phase for p in CATALOGUE[name].phases] == ["waiting", "bidding", "exchange", "play",
                                                              "finished", "redeal"]
    assert sorted(c.card for c in CATALOGUE["mitigati"].cards) == sorted(TAROT_DECK)
    assert [p.phase for p in CATALOGUE["mitigati"].phases] == [
        "waiting", "bargaining", "discard", "declaring", "play", "finished", "abandoned"]


def test_every_card_and_suit_names_a_picture_the_web_client_bundles_and_its_colour() -> None:
    bundled = set(re.findall(r"^  (\w+): \"M", SYMBOLS_JS.read_text(), re.M))
    assert bundled == set(SYMBOLS)
    for game in CATALOGUE.values():
        assert all(card.symbol in SYMBOLS for card in game.cards), game.game
        assert all(suit.symbol in SYMBOLS or suit.suit == "NT" for suit in game.suits), game.game
    five = {c.card: c for c in CATALOGUE["mighty-5"].cards}
    assert (five["AH"].symbol, five["AH"].red, five["AS"].symbol, five["AS"].red) == ("heart", True, "spade", False)
    assert (five["JK"].symbol, five["JK"].suit) == ("joker", None)
    suits = {s.suit: s for s in CATALOGUE["mighty-5"].suits}
    assert (suits["D"].symbol, suits["D"].red, suits["NT"].symbol) == ("diamond", True, "")
    tarot = {c.card: c for c in CATALOGUE["mitigati"].cards}
    assert (tarot["KD"].symbol, tarot["KD"].red, tarot["KC"].symbol, tarot["KC"].red) == ("coin", True, "cup", True)
    assert (tarot["KS"].symbol, tarot["KS"].red, tarot["KB"].symbol) == ("sword", False, "baton")
    assert (tarot["FOOL"].symbol, tarot["T20"].symbol) == ("fool", "trump")


def test_mightys_point_cards_are_laid_face_up_and_no_other_card_is() -> None:
    for name in VARIANTS:
        assert {c.card for c in CATALOGUE[name].cards if c.face_up} == {
            c for c in VARIANTS[name].deck if POINTS_OF[c] > 0}
    assert not any(c.face_up for c in CATALOGUE["mitigati"].cards)


def test_every_catalogue_text_is_rendered_from_the_english_catalogue() -> None:
    for game in GAMES.values():
        for entry in game.presentation.catalogue():
            for message in labels.messages_of(entry):
                assert catalog("en").get(message.key) or catalog("en").plural(message.key, 2), message.key
    body = msgspec.json.encode(labels.games()).decode()
    assert "mighty." not in body.replace('"family":"mighty"', "")  # no key left unrendered
    assert CATALOGUE["mighty-5"].cards[0].label == "ace of spades"
    assert {c.card: c.label for c in CATALOGUE["mighty-6"].cards}["JK3"] == "Joker 3"
    assert {c.card: c.label for c in CATALOGUE["mitigati"].cards}["NC"] == "cavallo of cups"


def _sorted_by_order(game: str, cards: list[str]) -> list[str]:
    order = {c.card: c.order for c in CATALOGUE[game].cards}
    return sorted(cards, key=order.__getitem__)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_sorting_a_mighty_hand_by_order_is_the_rules_codes_own_order(name: str) -> None:
    rng = random.Random(name)
    deck = list(VARIANTS[name].deck)
    assert _sorted_by_order(name, deck) == list(mighty_sorted(deck))
    for _ in range(200):
        hand = rng.sample(deck, VARIANTS[name].hand_size)
        assert _sorted_by_order(name, hand) == list(mighty_sorted(hand))


def test_a_tarot_hand_sorts_trumps_first_then_the_fool_then_each_suit_strongest_first() -> None:
    shown = _sorted_by_order("mitigati", list(TAROT_DECK))
    assert shown[:3] == ["T20", "T21", "T19"] and shown[20:22] == ["T1", "FOOL"]
    groups = [SUIT_OF[c] for c in shown]
    assert groups == sorted(groups, key=["T", None, "D", "C", "B", "S"].index)  # each suit together
    for a, b in zip(shown, shown[1:], strict=False):
        if SUIT_OF[a] == SUIT_OF[b]:
            assert STRENGTH[a] > STRENGTH[b], (a, b)  # the rules code's strength, §1
    # coins and cups run the other way below the court: K Q N F 1 2 ... 10
    assert shown[shown.index("KD"):shown.index("KD") + 14] == [
        "KD", "QD", "ND", "FD", "1D", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD"]
    assert shown[shown.index("KS"):shown.index("KS") + 5] == ["KS", "QS", "NS", "FS", "TS"]


# ---------------------------------------------------------------- the renderer


def test_the_renderer_fills_arguments_joins_lists_and_never_fails_on_an_unknown_key() -> None:
    texts = of({"a": "Call {who}", "x": "X", "y": "Y", "z": "Z"})
    assert labels.render(msg("a", who=(msg("x"),)), texts) == "Call X"
    assert labels.render(msg("a", who=(msg("x"), msg("y"))), texts) == "Call X and Y"
    assert labels.render(msg("a", who=(msg("x"), msg("y"), msg("z"))), texts) == "Call X, Y, and Z"
    assert labels.render(msg("a", who=3), texts) == "Call 3"
    assert labels.render(msg("nope", who=3), texts) == "nope"
    assert labels.render(msg("a"), texts) == "Call {who}"  # no argument given: the text as it is
    # an argument's text is never read as a format: braces a player wrote stay as written
    assert labels.render(msg("a", who="{0.__class__}"), texts) == "Call {0.__class__}"


# ---------------------------------------------------------------- labels in views


def _check_labels(variant: str, rng: random.Random, seen: set[str]) -> None:
    table = Table(variant, rng)
    game = table.state.game
    for _ in range(1000):  # every label rendered: a key missing from the catalogue shows as the key
        if table.state.status != "playing" or table.state.awaiting_deal:
            return
        hand = table.state.hand
        assert hand is not None
        acting = game.to_act(hand)
        for seat in range(len(table.state.seats)):
            stored = msgspec.json.encode(_render(table, seat))
            entries: list[dict[str, Any]] = view_document(stored)["legal"]
            for entry in entries:
                label = entry["label"]
                assert isinstance(label, str) and label and label[0] in string.ascii_uppercase, entry
                assert "{" not in label and "mighty." not in label and "mitigati." not in label, entry
                seen.add(entry["type"])
        entries = table.legal(acting) if acting is not None else []
        assert entries
        table.apply(table.submission(acting, rng.choice(entries)))  # type: ignore[arg-type]


def _render(table: Table, seat: int) -> Any:
    from projections.views import ViewState, render

    return render(ViewState(table=table.state, version=table.version, name=""), str(seat))


@pytest.mark.parametrize("variant", PLAYABLE)
def test_every_legal_entry_of_random_hands_carries_an_english_label(variant: str) -> None:
    seen: set[str] = set()
    rng = random.Random(variant)
    for _ in range(4):
        _check_labels(variant, rng, seen)
    assert "play" in seen and "discard" in seen


def test_labels_say_what_the_command_does() -> None:
    from domain.mighty.commands import Bid, CallFriend, ChangeTrump, Play
    from domain.mighty.views import HandView

    view = HandView(viewer=0, hand_no=0, phase="exchange", dealer=0, to_act=0, rules_fingerprint="",
                    hand=("AS", "JK"), hand_sizes=(10,) * 5, auction=(), contract=(14, "H"))
    presentation = game_named("mighty-5").presentation

    def said(command: Any, shown: HandView = view) -> str:
        return labels.render(presentation.label(shown, command))

    assert said(Bid(seat=0, points=14, trump="S")) == "Bid 14 in spades"
    assert said(Bid(seat=0, points=20, trump="NT")) == "Bid 20 in no trump"
    assert said(CallFriend(seat=0, friend="AS")) == "Call the holder of the Mighty"
    spades = msgspec.structs.replace(view, contract=(14, "S"))
    assert said(CallFriend(seat=0, friend="AS"), spades) == "Call the holder of the ace of spades"
    assert said(CallFriend(seat=0, friend="AD"), spades) == "Call the holder of the Mighty"
    assert said(CallFriend(seat=0, friend="JK")) == "Call the holder of the Joker"
    assert said(CallFriend(seat=0, friend="none")) == "Play alone (call no friend)"
    assert said(CallFriend(seat=0, friend=("first_trick", "KH#2"))) == (
        "Call the winner of the first trick and the holder of the king of hearts (pack 2)")
    assert said(ChangeTrump(seat=0, trump="NT")) == "Change the trump to no trump (the contract becomes 15)"
    assert said(Play(seat=0, card="JK", suit="C")) == "Lead the Joker, asking for clubs"
    assert said(Play(seat=0, card="TH")) == "Play the 10 of hearts"
    assert said(DiscardStep(count=3)) == "Discard 3 cards"


# ---------------------------------------------------------------- hand order, remaining cards


def test_a_mighty_hand_shows_the_trump_suit_first_once_there_is_a_contract() -> None:
    from domain.mighty.views import HandView

    hand = ("AS", "KS", "AH", "2H", "AD", "3C", "JK")
    view = HandView(viewer=0, hand_no=0, phase="play", dealer=0, to_act=0, rules_fingerprint="",
                    hand=hand, hand_sizes=(7,) * 5, auction=(), contract=(14, "C"))
    presentation = game_named("mighty-5").presentation
    assert presentation.hand_order(view) == ("3C", "AS", "KS", "AH", "2H", "AD", "JK")
    hearts = msgspec.structs.replace(view, contract=(14, "H"))
    assert presentation.hand_order(hearts) == ("AH", "2H", "AS", "KS", "AD", "3C", "JK")
    assert presentation.hand_order(msgspec.structs.replace(view, contract=(14, "NT"))) is None
    assert presentation.hand_order(msgspec.structs.replace(view, contract=None)) is None


def test_the_friend_call_names_the_card_that_is_the_mighty_beside_the_view() -> None:
    from domain.mighty.commands import CallFriend, Pass
    from domain.mighty.views import HandView

    call = (CallFriend(seat=0, friend="first_trick"), CallFriend(seat=0, friend="KH"))
    view = HandView(viewer=0, hand_no=0, phase="exchange", dealer=0, to_act=0, rules_fingerprint="",
                    hand=("AS", "2H"), hand_sizes=(10,) * 5, auction=(), contract=(14, "H"), legal=call)
    presentation = game_named("mighty-5").presentation
    assert presentation.facts(view) == {"mighty": "AS"}  # §1: the ace of spades
    assert presentation.facts(msgspec.structs.replace(view, contract=(14, "S"))) == {"mighty": "AD"}
    assert presentation.facts(msgspec.structs.replace(view, legal=())) == {}  # not the friend call
    assert presentation.facts(msgspec.structs.replace(view, contract=None, legal=(Pass(seat=0),))) == {}


def test_a_declarers_view_document_at_the_friend_call_says_which_card_is_the_mighty_but_the_stored_view_does_not() -> None:
    rng = random.Random(5)
    for _ in range(40):
        table = Table("mighty-5", rng)
        for _ in range(200):
            hand = table.state.hand
            if table.state.status != "playing" or table.state.awaiting_deal or hand is None:
                break
            acting = table.state.game.to_act(hand)
            assert acting is not None
            legal = table.legal(acting)
            if any(e["type"] == "call_friend" for e in legal):
                stored = msgspec.json.encode(_render(table, acting))
                assert b'"mighty"' not in stored  # derived when sent: stored views stay as they were
                assert view_document(stored)["mighty"] == ("AD" if getattr(hand, "trump", None) == "S" else "AS")
                for seat in range(5):
                    if seat != acting:
                        assert "mighty" not in view_document(msgspec.json.encode(_render(table, seat)))
                return
            table.apply(table.submission(acting, rng.choice(legal)))
    pytest.fail("no hand reached the friend call")


def test_a_view_document_carries_the_trump_first_hand_order() -> None:
    rng = random.Random(11)
    for _ in range(40):
        table = Table("mighty-5", rng)
        for _ in range(200):
            hand = table.state.hand
            if table.state.status != "playing" or table.state.awaiting_deal or hand is None:
                break
            trump = getattr(hand, "trump", None)
            if trump in ("S", "H", "D", "C") and hasattr(hand, "tricks"):
                seat = 0
                document = view_document(msgspec.json.encode(_render(table, seat)))
                order = document["hand_order"]
                assert sorted(order) == sorted(document["hand"])
                trumps = [c for c in order if MIGHTY_SUIT_OF[c] == trump]
                assert order[:len(trumps)] == trumps and trumps
                return
            acting = table.state.game.to_act(hand)
            assert acting is not None
            legal = table.legal(acting)
            # one bid in a suit, then passes (random bids climb to 20 NT), trump kept
            bids = [e for e in legal if e["type"] == "bid" and e["trump"] != "NT"]
            if bids and not any(points for _, points, _ in getattr(hand, "auction", ())):
                legal = bids
            elif any(e["type"] == "pass" for e in legal):
                legal = [e for e in legal if e["type"] == "pass"]
            legal = [e for e in legal if e["type"] != "change_trump"]
            table.apply(table.submission(acting, rng.choice(legal)))
    pytest.fail("no hand reached play with a suit trump")


def test_the_audit_replay_carries_each_seats_remaining_cards() -> None:
    from services.gateway.audit import replay_steps

    document = msgspec.json.decode(HAND_FILE.read_bytes())
    steps = replay_steps(document, "audit")
    first, last = steps[0]["view"], steps[-1]["view"]
    assert [sorted(cards) for cards in first["remaining"]] == [sorted(cards) for cards in document["hands"]]
    assert all(cards == [] for cards in last["remaining"])
    order = {c.card: c.order for c in CATALOGUE["mighty-5"].cards}
    for step in steps:
        for cards in step["view"]["remaining"]:
            assert cards == sorted(cards, key=order.__getitem__)


@pytest.mark.parametrize("variant", ["mighty-5", "mighty-3", "mitigati"])
def test_each_trick_card_in_a_view_document_names_the_seat_that_played_it(variant: str) -> None:
    """docs/api.md, "Playing": ``trick.seats`` and ``tricks[].seats`` say who played each
    card, in the game's direction (Mitigati's play goes to the right, Mighty's round the
    other way), for a seat and a spectator alike; derived as sent, never stored."""
    rng = random.Random(variant)
    played: dict[str, int] = {}  # card -> the seat that played it, this hand
    checked = 0
    for _ in range(3):
        table = Table(variant, rng)
        for _ in range(400):
            hand = table.state.hand
            if table.state.status != "playing" or table.state.awaiting_deal or hand is None:
                break
            acting = table.state.game.to_act(hand)
            assert acting is not None
            entry = rng.choice(table.legal(acting))
            if entry["type"] == "play":
                played[entry["card"]] = acting
            table.apply(table.submission(acting, entry))
            for reader in (str(acting), "spectator"):
                stored = msgspec.json.encode(render(ViewState(table=table.state, version=table.version, name=""),
                                                    reader))
                shown = msgspec.json.decode(stored).get("hand") or {}
                assert "seats" not in (shown.get("trick") or {})  # derived when sent, never stored
                document = view_document(stored)
                tricks = [*document.get("tricks", ()), *([document["trick"]] if document.get("trick") else [])]
                for trick in tricks:
                    assert trick["seats"] == [played[c] for c in trick["cards"]], (trick, played)
                    checked += 1
    assert checked > 100


@pytest.mark.parametrize("path", [HAND_FILE, HAND_FILE.parent / "mitigati" / "complete-spec-example.json"])
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_each_replay_step_carries_its_commands_label(path: Path, lang: str) -> None:
    """A replay says each step's command in the reader's language, as the game says its
    legal entries: the client describes no command itself (clients/web/js/replay.js)."""
    from services.gateway.audit import replay_steps

    document = msgspec.json.decode(path.read_bytes())
    for reader in ("audit", "spectator", "0"):
        steps = replay_steps(document, reader, lang)
        assert "label" not in steps[0]  # the deal
        assert len(steps) == len(document["commands"]) + 1
        for step, raw in zip(steps[1:], document["commands"], strict=True):
            label = step["label"]
            assert label and label != raw["type"], (reader, raw, label)
            assert "." not in label.split()[0], label  # a rendered text, not a key


@pytest.mark.parametrize("path", [HAND_FILE, HAND_FILE.parent / "mitigati" / "complete-spec-example.json"])
def test_a_replay_says_anothers_face_down_discard_as_how_many_cards_and_the_audit_says_which(path: Path) -> None:
    from services.gateway.audit import replay_steps

    document = msgspec.json.decode(path.read_bytes())
    game = game_named(document["rules"] if isinstance(document.get("rules"), str) else document["variant"])
    names = {c.card: c.label for g in labels.games("en").games for c in g.cards if g.family == game.name}
    discards = [(i, c) for i, c in enumerate(document["commands"]) if c["type"] == "discard"]
    assert discards, "the hand has a discard"
    for reader in ("spectator", "audit", *(str(s) for s in range(len(document["hands"])))):
        steps = replay_steps(document, reader, "en")
        for index, command in discards:
            label = steps[index + 1]["label"]
            said = [names[c] for c in command["cards"] if names[c] in label]
            if reader in ("audit", str(command["seat"])):
                assert said, (reader, label)  # the cards themselves
            else:
                assert not said and str(len(command["cards"])) in label, (reader, label)
