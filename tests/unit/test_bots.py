"""The bots (issue 9 item 6, issue 10): every command a bot sends is legal, a bot reads
its seat's view and nothing else, and the expert's worlds agree with the view.

Hands are random deals played to the end by a mix of levels; the expert runs on a tiny
budget here (its strength is the ladder's business, ``bench/bots.py``, never timed in a
unit test)."""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from domain.bots import LEVELS, Budget, Playouts
from domain.mighty import views as mighty_views
from domain.mighty.bots import POLICIES as MIGHTY_BOTS
from domain.mighty.bots.worlds import knowledge as mighty_knowledge
from domain.mighty.bots.worlds import world as mighty_world
from domain.mighty.decider import deal_event, decide, evolve
from domain.mighty.rules import VARIANTS, RuleSet, make_rules
from domain.mighty.state import Finished, HandState, Playing, Redeal, to_act
from domain.mighty.views import HandView
from domain.mitigati import decider as mitigati
from domain.mitigati import views as mitigati_views
from domain.mitigati.bots import POLICIES as MITIGATI_BOTS
from domain.mitigati.bots.worlds import knowledge as mitigati_knowledge
from domain.mitigati.bots.worlds import world as mitigati_world
from domain.mitigati.cards import DECK as TAROT
from domain.mitigati.rules import make_rules as mitigati_rules
from domain.mitigati.state import MitigatiState, is_terminal
from domain.mitigati.state import Playing as MitigatiPlaying
from domain.mitigati.state import to_act as mitigati_to_act
from domain.mitigati.views import MitigatiView
from domain.prng import Rng
from domain.sampling import sample_holdings

TINY = Budget(playouts=4)
BOUNDED = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPTIONS = st.fixed_dictionaries({}, optional={
    "joker_call": st.sampled_from(["on_ripper_lead", "declared"]),
    "kitty_shown": st.booleans(),
    "first_trick_friend_allowed": st.booleans(),
    "pass_is_final": st.booleans(),
    "score": st.sampled_from(["fixed", "pagat", "penalty"]),
})


def mighty_deal(rules: RuleSet, rng: Rng) -> HandState:
    spec = rules.spec
    deck = list(spec.deck)
    rng.shuffle(deck)
    n, size = spec.players, spec.hand_size
    hands = tuple(tuple(deck[i * size:(i + 1) * size]) for i in range(n))
    return evolve(None, deal_event(rules, dealer=rng.below(n), hands=hands, kitty=tuple(deck[n * size:])))


def mitigati_deal(rng: Rng) -> MitigatiState:
    deck = list(TAROT)
    rng.shuffle(deck)
    dealer = rng.below(3)
    return mitigati.evolve(None, mitigati.deal_event(mitigati_rules(), dealer=dealer,
                                                     packets=mitigati.packets_from_order(tuple(deck), dealer)))


def play_mighty(rules: RuleSet, seed: int, levels: tuple[str, ...], check: Any = None) -> HandState:
    """A hand to the end; ``decide`` raises on any command the rules refuse."""
    rng = Rng(seed)
    state = mighty_deal(rules, rng)
    while not isinstance(state, Finished | Redeal):
        seat = to_act(state)
        assert seat is not None
        view = mighty_views.seat_view(state, seat)
        level = levels[seat % len(levels)]
        if check is not None:
            check(state, view, rng)
        command = MIGHTY_BOTS[level](rules, view, rng.next(), TINY)
        assert command.seat == seat
        for event in decide(state, command):
            state = evolve(state, event)
    return state


def play_mitigati(seed: int, levels: tuple[str, ...], check: Any = None) -> MitigatiState:
    rules = mitigati_rules()
    rng = Rng(seed)
    state = mitigati_deal(rng)
    while not is_terminal(state):
        seat = mitigati_to_act(state)
        assert seat is not None
        view = mitigati_views.seat_view(state, seat)
        if check is not None:
            check(state, view, rng)
        command = MITIGATI_BOTS[levels[seat % len(levels)]](rules, view, rng.next(), TINY)
        for event in mitigati.decide(state, command):
            state = mitigati.evolve(state, event)
    return state


# ---------------------------------------------------------------- every command is legal

@pytest.mark.parametrize("variant", sorted(VARIANTS))
@BOUNDED
@given(seed=st.integers(0, 2**63), options=OPTIONS)
def test_beginner_and_random_bots_send_only_commands_decide_accepts(variant: str, seed: int,
                                                                     options: dict[str, Any]) -> None:
    rules = make_rules(variant, options)
    final = play_mighty(rules, seed, ("beginner", "random", "beginner"))
    assert isinstance(final, Finished | Redeal)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63), options=OPTIONS)
def test_the_expert_sends_only_commands_decide_accepts(variant: str, seed: int, options: dict[str, Any]) -> None:
    rules = make_rules(variant, options)
    final = play_mighty(rules, seed, ("expert", "beginner"))
    assert isinstance(final, Finished | Redeal)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63), levels=st.sampled_from([("beginner",), ("random", "beginner", "random"),
                                                           ("expert", "beginner", "random")]))
def test_mitigati_bots_send_only_commands_decide_accepts(seed: int, levels: tuple[str, ...]) -> None:
    assert is_terminal(play_mitigati(seed, levels))


def test_beginners_bid_and_pass_in_mighty_five() -> None:
    """Over a few deals a beginner both declares and passes out some hands."""
    rules = make_rules("mighty-5")
    finals = [play_mighty(rules, seed, ("beginner",)) for seed in range(12)]
    assert any(isinstance(f, Finished) for f in finals)
    assert any(isinstance(f, Redeal) for f in finals) or any(
        isinstance(f, Finished) and f.points > rules.spec.min_bid for f in finals)


# ---------------------------------------------------------------- the bots' input is the view

@pytest.mark.parametrize(("policies", "view_type"), [(MIGHTY_BOTS, HandView), (MITIGATI_BOTS, MitigatiView)])
def test_every_policy_takes_the_seat_view_type(policies: Any, view_type: type) -> None:
    assert tuple(policies) == LEVELS
    for level, policy in policies.items():
        hints = get_type_hints(policy)
        assert hints["view"] is view_type, level
        assert list(inspect.signature(policy).parameters) == ["rules", "view", "seed", "budget"]


def _swap_hidden(state: HandState, seat: int) -> HandState | None:
    """The same state with one unseen card of two other seats swapped (not a called card,
    and only while bidding or after the call, when no view can tell)."""
    hands = [list(h) for h in state.hands]
    others = [s for s in range(len(hands)) if s != seat and hands[s]]
    if len(others) < 2:
        return None
    a, b = others[0], others[1]
    calls = set(state.calls) if isinstance(state, Playing) else set()
    for i, x in enumerate(hands[a]):
        for j, y in enumerate(hands[b]):
            if x[:2] != y[:2] and x not in calls and y not in calls:
                hands[a][i], hands[b][j] = y, x
                return replace(state, hands=tuple(tuple(h) for h in hands))
    return None


@pytest.mark.parametrize("level", ["beginner", "expert", "random"])
@pytest.mark.parametrize("variant", ["mighty-5", "mighty-3", "mighty-6"])
def test_a_bot_chooses_the_same_command_when_only_hidden_cards_differ(level: str, variant: str) -> None:
    rules = make_rules(variant)
    seen = 0

    def check(state: HandState, view: HandView, rng: Rng) -> None:
        nonlocal seen
        seat = view.viewer
        assert seat is not None
        if not isinstance(state, Playing) or seen >= 6:
            return
        other = _swap_hidden(state, seat)
        if other is None:
            return
        other_view = mighty_views.seat_view(other, seat)
        if other_view != view:  # the swap showed through a legal list: not hidden after all
            return
        seed = rng.next()
        first = MIGHTY_BOTS[level](rules, view, seed, TINY)
        assert MIGHTY_BOTS[level](rules, other_view, seed, TINY) == first
        seen += 1

    for seed in range(4):
        play_mighty(rules, seed, ("beginner",), check)
    assert seen > 0


def test_a_bot_with_the_same_view_and_seed_repeats_itself() -> None:
    rules = make_rules("mighty-5")

    def check(state: HandState, view: HandView, rng: Rng) -> None:
        seed = rng.next()
        assert MIGHTY_BOTS["expert"](rules, view, seed, TINY) == MIGHTY_BOTS["expert"](rules, view, seed, TINY)

    play_mighty(rules, 5, ("beginner",), check)


# ---------------------------------------------------------------- the expert's worlds

def _same_public(a: Any, b: Any, fields: tuple[str, ...]) -> None:
    for name in fields:
        assert getattr(a, name) == getattr(b, name), name


@pytest.mark.parametrize("variant", ["mighty-5", "mighty-4", "mighty-3", "mighty-3-short", "mighty-6", "mighty-8"])
def test_a_sampled_mighty_world_shows_the_seat_its_own_view(variant: str) -> None:
    rules = make_rules(variant)
    checked = 0

    def check(state: HandState, view: HandView, rng: Rng) -> None:
        nonlocal checked
        if view.phase == "exchange" and rules.spec.kitty_keep is not None:
            return  # mighty-3's kitty exchange is the beginner's (no worlds)
        seat = view.viewer
        assert seat is not None
        know = mighty_knowledge(rules, view)
        sampled = mighty_world(rules, view, know, rng)
        again = mighty_views.seat_view(sampled, seat)
        _same_public(view, again, ("hand", "hand_sizes", "phase", "to_act", "auction", "contract",
                                   "tricks", "trick", "led_suit", "friend_call", "face_up_points",
                                   "discard_count"))
        if view.phase != "exchange":
            assert set(again.legal) == set(view.legal)
        checked += 1

    for seed in range(3):
        play_mighty(rules, seed, ("beginner",), check)
    assert checked > 0


def test_a_sampled_mighty_world_respects_shown_voids() -> None:
    rules = make_rules("mighty-5")
    checked = 0

    def check(state: HandState, view: HandView, rng: Rng) -> None:
        nonlocal checked
        if view.phase != "play":
            return
        know = mighty_knowledge(rules, view)
        for _ in range(3):
            sampled = mighty_world(rules, view, know, rng)
            for card, holders in know.allowed.items():
                held = [s for s, h in enumerate(sampled.hands) if card in h]
                if held:
                    assert held[0] in holders, card
            checked += 1

    for seed in range(4):
        play_mighty(rules, seed, ("beginner",), check)
    assert checked > 0


def test_a_sampled_mitigati_world_shows_the_seat_its_own_view() -> None:
    checked = 0
    rules = mitigati_rules()

    def check(state: MitigatiState, view: MitigatiView, rng: Rng) -> None:
        nonlocal checked
        seat = view.viewer
        assert seat is not None
        sampled = mitigati_world(rules, view, mitigati_knowledge(view), rng)
        again = mitigati_views.seat_view(sampled, seat)
        _same_public(view, again, ("hand", "hand_sizes", "phase", "to_act", "bargaining", "declarations",
                                   "tricks", "trick", "fool", "discard_count", "discards"))
        if isinstance(state, MitigatiPlaying):
            assert set(again.legal) == set(view.legal)
            assert sum(len(w) for w in sampled.won) == sum(len(w) for w in state.won)  # type: ignore[union-attr]
        checked += 1

    for seed in range(2):
        play_mitigati(seed, ("beginner",), check)
    assert checked > 0


# ---------------------------------------------------------------- the parts

def test_the_generator_repeats_from_a_seed_and_stays_in_range() -> None:
    a, b = Rng(42), Rng(42)
    draws = [a.below(7) for _ in range(1000)]
    assert draws == [b.below(7) for _ in range(1000)]
    assert set(draws) == set(range(7))
    assert all(0.0 <= Rng(i).random() < 1.0 for i in range(100))
    assert Rng(1).next() != Rng(2).next()


def test_sampled_holdings_fill_every_room_and_keep_the_constraints() -> None:
    cards = [f"c{i}" for i in range(12)]
    allowed = {"c0": frozenset({2}), "c1": frozenset({0, 1})}
    for seed in range(50):
        held = sample_holdings(cards, [5, 4, 3], allowed, Rng(seed))
        assert [len(h) for h in held] == [5, 4, 3]
        assert sorted(c for h in held for c in h) == sorted(cards)
        assert "c0" in held[2] and "c1" not in held[2]


def test_playouts_pick_the_candidate_with_the_best_mean() -> None:
    search: Playouts[int, str] = Playouts(world=lambda r: r.below(10),
                                          playout=lambda w, c, r: w + (5 if c == "good" else 0))
    assert search.best(["bad", "good", "worse"], 30, Rng(3)) == "good"
    assert search.best(["only"], 30, Rng(3)) == "only"


def test_a_stop_callback_ends_the_search_after_one_round() -> None:
    rounds = []
    search: Playouts[int, str] = Playouts(world=lambda r: rounds.append(1) or 0,  # type: ignore[func-returns-value]
                                          playout=lambda w, c, r: 0.0)
    search.best(["a", "b"], 1000, Rng(1), stop=lambda: True)
    assert len(rounds) == 1
