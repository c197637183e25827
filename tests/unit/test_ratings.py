"""Ratings and reputation (projections/ratings.py, docs/ratings.md): the hands folded from
a table's events, the sides and ranks they carry, ties, order, unrated tables, bots."""

from __future__ import annotations

import math
import random

import msgspec
import pytest

from domain.mighty.ledger import HandLine
from domain.mitigati.ledger import Bargain, DealLine
from domain.registry import game_named
from domain.table import (
    CreateTable,
    SetAway,
    Submission,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections import replay
from projections.docs import DocKey, decode
from projections.ratings import (
    CALIBRATION,
    HANDS_DOC,
    PROVISIONAL_SIGMA,
    SIGMA,
    Calibration,
    HandsProjection,
    PlayerRating,
    RatedHand,
    Ratings,
    calibrate,
    decode_hand,
    hand_of,
    ranks_of,
    rate,
    rate_all,
    side_weights,
    softmax,
    table_doc,
    win_chances,
)
from services.players import next_submission, seating


def _line(declarer: int, friend: int | None, scores: tuple[int, ...], friends: tuple[int, ...] = ()) -> HandLine:
    return HandLine(hand_no=0, declarer=declarer, friend=friend, friends=friends, contract=13, trump="S",
                    made=scores[declarer] > 0, declarer_side_points=14, players=("a", "b", "c", "d", "e"),
                    scores=scores, totals=scores)


def test_mighty_sides_are_the_declarer_with_the_friend_against_the_defenders() -> None:
    assert _line(2, 4, (-1, -1, 2, -1, 1)).sides() == ((2, 4), (0, 1, 3))


def test_a_lone_declarer_is_a_side_of_one_against_four() -> None:
    assert _line(0, None, (8, -2, -2, -2, -2)).sides() == ((0,), (1, 2, 3, 4))


def test_mitigati_is_every_player_for_themselves_and_an_abandoned_deal_is_not_rated() -> None:
    played = DealLine(hand_no=0, dealer=0, outcome="finished", points=(40, 30, 10), bargain=None,
                      players=("a", "b", "c"), scores=(3, 0, -3), totals=(3, 0, -3))
    abandoned = msgspec.structs.replace(played, outcome="abandoned", points=None,
                                        bargain=Bargain(session=1, payer=0, seller=1, amount=2))
    assert played.sides() == ((0,), (1,), (2,))
    assert abandoned.sides() == ()


def test_tied_scores_share_a_rank_and_the_next_rank_counts_them() -> None:
    assert ranks_of(((0,), (1,), (2,)), (2, 2, -4)) == (0, 0, 2)
    assert ranks_of(((0,), (1,), (2,)), (-1, 3, -1)) == (1, 0, 1)
    assert ranks_of(((0, 1), (2, 3, 4)), (0, 0, 0, 0, 0)) == (0, 0)


def test_a_tie_between_equal_sides_moves_no_mean_and_narrows_every_sigma() -> None:
    model = Ratings().model
    fresh = [[PlayerRating(player="a"), PlayerRating(player="b")], [PlayerRating(player="c"), PlayerRating(player="d")]]
    for treatment in ("sum", "mean"):
        after = rate(model, fresh, (0, 0), treatment)
        for side in after:
            for mu, sigma in side:
                assert mu == pytest.approx(25.0, abs=1e-9)
                assert sigma < SIGMA


def test_a_three_way_tie_in_mitigati_rates_like_a_draw_for_each() -> None:
    ratings = Ratings()
    hand = RatedHand(at_ms=1, table_id="t", hand_no=0, rules="mitigati", rated=True, players=("a", "b", "c"),
                     away=(False,) * 3, sides=((0,), (1,), (2,)), ranks=(0, 0, 0))
    ratings.apply(hand)
    mus = {p: ratings.rating("mitigati", p).mu for p in "abc"}
    assert mus["a"] == pytest.approx(mus["b"]) == pytest.approx(mus["c"])
    assert mus["a"] == pytest.approx(25.0, abs=1e-9)


def test_the_winners_gain_and_the_losers_lose_under_the_mean_treatment() -> None:
    ratings = Ratings("mean")
    ratings.apply(RatedHand(at_ms=1, table_id="t", hand_no=0, rules="mighty-5", rated=True,
                            players=("a", "b", "c", "d", "e"), away=(False,) * 5,
                            sides=((0, 1), (2, 3, 4)), ranks=(0, 1)))
    assert ratings.rating("mighty-5", "a").mu > 25 > ratings.rating("mighty-5", "c").mu
    assert ratings.rating("mighty-5", "a").hands == 1


def test_the_mean_treatment_sees_sides_of_two_and_three_of_equal_players_as_even() -> None:
    model = Ratings().model
    two = [PlayerRating(player=p) for p in "ab"]
    three = [PlayerRating(player=p) for p in "cde"]
    even = win_chances(model, [two, three], "mean")
    summed = win_chances(model, [two, three], "sum")
    assert even[0] == pytest.approx(0.5, abs=0.01)
    assert summed[0] < 0.3  # the library's own sum: three average players beat two


def _hand(at_ms: int, table: str, hand_no: int, ranks: tuple[int, ...], *, rated: bool = True,
          players: tuple[str, ...] = ("a", "b", "c", "d", "e"),
          away: tuple[bool, ...] = (False,) * 5) -> RatedHand:
    return RatedHand(at_ms=at_ms, table_id=table, hand_no=hand_no, rules="mighty-5", rated=rated,
                     players=players, away=away, sides=((0, 1), (2, 3, 4)), ranks=ranks)


def test_hands_apply_in_key_order_whatever_order_they_arrive_in() -> None:
    hands = [_hand(5, "t2", 0, (0, 1)), _hand(5, "t1", 3, (1, 0)), _hand(2, "t9", 1, (0, 1)),
             _hand(9, "t1", 4, (0, 0))]
    shuffled = list(hands)
    random.Random(4).shuffle(shuffled)
    first, second = rate_all(hands), rate_all(shuffled)
    assert first.flush() == second.flush()
    assert first.cursor == (9, "t1", 4)


def test_a_hand_at_or_before_the_cursor_is_skipped() -> None:
    ratings = Ratings()
    assert ratings.apply(_hand(5, "t1", 0, (0, 1)))
    before = ratings.rating("mighty-5", "a")
    assert not ratings.apply(_hand(5, "t1", 0, (0, 1)))
    assert not ratings.apply(_hand(4, "t9", 0, (0, 1)))
    assert ratings.rating("mighty-5", "a") == before


def test_an_unrated_table_changes_no_rating_but_counts_for_reputation() -> None:
    ratings = Ratings()
    ratings.apply(_hand(1, "t", 0, (0, 1), rated=False, away=(False, True, False, False, False)))
    docs = ratings.flush()
    assert docs.ratings == {}
    assert decode(docs.reputations["a"]) == {"player": "a", "finished": 1, "abandoned": 0}
    assert decode(docs.reputations["b"]) == {"player": "b", "finished": 0, "abandoned": 1}


def test_a_rating_is_provisional_until_its_sigma_falls_below_the_bound() -> None:
    assert PlayerRating(player="x").provisional
    assert not PlayerRating(player="x", sigma=PROVISIONAL_SIGMA - 0.01).provisional


# ---------------------------------------------------------------- folded from a table's events


def _play(variant: str, players: int, hands: int, seed: int, *, rated: bool = True,
          bots: dict[str, str] | None = None, away_seat: int | None = None
          ) -> list[tuple[str, int, object, int]]:
    """A table played by random moves; its events as a feed would carry them."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    state: TableState = initial_state(f"t{seed}")
    entries: list[tuple[str, int, object, int]] = []
    clock = 1000 * seed

    def send(submission: Submission) -> None:
        nonlocal state, clock
        for event in decide(state, submission):
            state = evolve(state, event)
            clock += 7
            entries.append((state.table_id, len(entries) + 1, event, clock))

    send(Submission(CreateTable(variant=variant, hands=hands, rated=rated, bots=bots or {}), names[0]))
    for submission in seating(names):
        send(submission)
    while (move := next_submission(state, rng)) is not None:
        if away_seat is not None and state.hands_scored == 1 and not state.away:
            send(Submission(SetAway(seat=away_seat), names[away_seat]))
            continue
        send(move)
    return entries


@pytest.mark.parametrize(("variant", "players"), [("mighty-5", 5), ("mighty-3", 3), ("mighty-7", 7),
                                                  ("mitigati", 3)])
def test_every_scored_hand_becomes_one_rated_hand_with_its_sides_and_ranks(variant: str, players: int) -> None:
    entries = _play(variant, players, hands=3, seed=players)
    docs = replay(HandsProjection(), entries)  # type: ignore[arg-type]
    hands = sorted((decode_hand(d) for k, d in docs.items() if k.name.startswith(HANDS_DOC)), key=RatedHand.key)
    assert [h.hand_no for h in hands] == sorted({h.hand_no for h in hands})
    assert len(hands) >= 1
    game = game_named(variant)
    assert game is not None
    for hand in hands:
        assert hand.rules == variant and hand.rated
        assert sorted(s for side in hand.sides for s in side) == list(range(players)) or hand.sides == ()
        assert hand.players == tuple(f"p{i}" for i in range(players))
    # the table's state went with its close
    assert not any(k.name.startswith("ratings:t:") for k in docs)


def test_folding_in_batches_gives_the_same_documents() -> None:
    entries = _play("mighty-5", 5, hands=3, seed=11)
    assert replay(HandsProjection(), entries, batch=1) == replay(HandsProjection(), entries)  # type: ignore[arg-type]
    assert replay(HandsProjection(), entries, batch=7) == replay(HandsProjection(), entries)  # type: ignore[arg-type]


@pytest.mark.parametrize(("variant", "players"), [("mighty-5", 5), ("mitigati", 3)])
def test_a_worker_restored_from_the_stored_table_doc_anywhere_rates_the_same_hands(variant: str, players: int) -> None:
    """The table doc keeps the ledger without its hands' lines: a projection restored from
    it after any event, then given the rest, writes exactly the documents of one that
    folded the whole table, and the doc does not grow with the hands."""
    entries = _play(variant, players, hands=4, seed=23)
    whole = replay(HandsProjection(), entries)  # type: ignore[arg-type]
    sizes: list[int] = []
    for cut in range(1, len(entries)):
        first = HandsProjection()
        before = replay(first, entries[:cut])  # type: ignore[arg-type]
        table_id = str(entries[0][0])
        stored = before.get(DocKey(table_doc(table_id)))
        sizes.append(len(stored or b""))
        second = HandsProjection()
        second.restore(table_id, stored)
        after = replay(second, entries[cut:])  # type: ignore[arg-type]
        merged = {**before, **after}
        merged.pop(DocKey(table_doc(table_id)), None)  # the close deletes it
        assert merged == whole, cut
    assert max(sizes) <= min(s for s in sizes if s) + 200, "the table doc grew with the hands"


def test_a_seat_the_table_gave_a_bot_is_rated_under_its_level() -> None:
    line = _line(0, 1, (2, 1, -1, -1, -1))
    hand = hand_of(line, at_ms=1, table_id="t", rules="mighty-5", rated=True,
                   bots={"3": "expert", "4": "beginner"}, away=frozenset({1}))
    assert hand.players == ("a", "b", "c", "bot:expert", "bot:beginner")
    assert hand.away == (False, True, False, False, False)
    assert hand.ranks == (0, 1)


def test_an_unrated_table_marks_its_hands_unrated() -> None:
    entries = _play("mighty-5", 5, hands=2, seed=12, rated=False)
    docs = replay(HandsProjection(), entries)  # type: ignore[arg-type]
    hands = [decode_hand(d) for k, d in docs.items() if k.name.startswith(HANDS_DOC) and d is not None]
    assert hands and not any(h.rated for h in hands)


def test_a_mighty_hand_says_its_first_side_declared_and_a_mitigati_deal_says_none_did() -> None:
    mighty = hand_of(_line(2, 4, (-1, -1, 2, -1, 1)), at_ms=1, table_id="t", rules="mighty-5", rated=True,
                     bots={}, away=frozenset())
    assert mighty.sides == ((2, 4), (0, 1, 3)) and mighty.declarers == (2,) and mighty.declaring
    deal = DealLine(hand_no=0, dealer=0, outcome="finished", points=(40, 30, 10), bargain=None,
                    players=("a", "b", "c"), scores=(3, 0, -3), totals=(3, 0, -3))
    assert not hand_of(deal, at_ms=1, table_id="t", rules="mitigati", rated=True, bots={}, away=frozenset()).declaring


def _declared(at_ms: int, ranks: tuple[int, ...], players: tuple[str, ...] = ("a", "b", "c", "d", "e")) -> RatedHand:
    return msgspec.structs.replace(_hand(at_ms, "t", at_ms, ranks, players=players), declarers=(0,))


def test_the_declarers_edge_is_a_pseudo_player_that_learns_and_is_on_no_leaderboard() -> None:
    ratings = Ratings("mean-edge")
    hand = _declared(1, (0, 1))
    assert ratings.needs([hand])[0] == {("mighty-5", p) for p in (*"abcde", "edge:2v3", CALIBRATION)}
    before = ratings.win_chances(hand)
    assert before[0] == pytest.approx(0.5, abs=0.01)  # a new edge adds nothing
    for at in range(1, 41):  # the declaring side wins three hands in four, whoever plays
        ratings.apply(_declared(at, (0, 1) if at % 4 else (1, 0), players=("abcde" * 2)[at % 5:][:5]))
    edge = ratings.rating("mighty-5", "edge:2v3")
    assert edge.mu > 25 and edge.hands == 40
    assert 0.6 < ratings.win_chances(_declared(99, (0, 1)), calibrated=False)[0] < 0.9
    docs = ratings.flush()
    assert ("mighty-5", "edge:2v3") in docs.ratings and ("mighty-5", "edge:2v3") not in docs.ordinals
    assert ("mighty-5", "a") in docs.ordinals
    # a hand nobody declared (Mitigati's) has no edge, and a treatment without one ignores it
    assert Ratings("mean-edge").needs([_hand(1, "t", 0, (0, 1))])[0] == {("mighty-5", p) for p in (*"abcde", CALIBRATION)}
    assert Ratings("mean").needs([hand])[0] == {("mighty-5", p) for p in (*"abcde", CALIBRATION)}


def test_the_edge_treatments_rebuild_the_same_bytes_whatever_order_the_hands_arrive_in() -> None:
    rng = random.Random(7)
    hands = [_declared(rng.randrange(1000), rng.choice([(0, 1), (1, 0), (0, 0)]),
                       players=tuple(rng.sample("abcdefg", 5))) for _ in range(60)]
    hands = list({h.key(): h for h in hands}.values())
    for treatment in ("mean-edge", "sum-edge"):
        shuffled = list(hands)
        rng.shuffle(shuffled)
        assert rate_all(hands, treatment).flush() == rate_all(shuffled, treatment).flush()


def test_declarer_edge_weighs_the_declarer_at_its_share_of_the_declaring_side() -> None:
    sides = ((0, 1), (2, 3, 4))
    assert side_weights(sides, "declarer-edge", (True, False), 0.8) == [[0.8, pytest.approx(0.2)], [1 / 3] * 3]
    assert side_weights(sides, "declarer-edge", (False, True), 0.8) == [[pytest.approx(0.2), 0.8], [1 / 3] * 3]
    assert side_weights(((0,), (1, 2, 3, 4)), "declarer-edge", (True,), 0.8) == [[1.0], [0.25] * 4]  # alone
    assert side_weights(sides, "mean", (True, False), 0.8) == [[0.5, 0.5], [1 / 3] * 3]
    assert side_weights(sides, "sum", (True, False), 0.8) is None
    with pytest.raises(ValueError):
        Ratings("declarer-edge", share=1.0)
    # a declaring side that fails: its declarer loses more than its friend
    ratings = Ratings("declarer-edge", share=0.8)
    ratings.apply(_declared(1, (1, 0)))
    a, b = ratings.rating("mighty-5", "a"), ratings.rating("mighty-5", "b")
    assert a.mu < b.mu < 25 and a.sigma < b.sigma


def _calibrated_run(rng: random.Random, sides: int, declaring: bool, outcome: str,
                    hands: int = 3000) -> tuple[Calibration, float, float]:
    """Feed ``calibrate`` a synthetic sequence of sides' logits (spread like ratings that
    disagree) and outcomes drawn either independently of them (``"base"``: the first side
    wins 65 % when it declared, every side alike otherwise) or from the logits themselves
    (``"model"``). Answers the final calibration and the mean log loss of the predictions
    made before each outcome, calibrated and raw."""
    calibration = Calibration()
    loss_calibrated = loss_raw = 0.0
    for _ in range(hands):
        z = [rng.gauss(0.0, 0.6) for _ in range(sides)]
        raw = softmax(z)
        if outcome == "model":
            chances = raw
        elif declaring:
            chances = [0.65] + [0.35 / (sides - 1)] * (sides - 1)
        else:
            chances = [1 / sides] * sides
        winner = rng.choices(range(sides), weights=chances)[0]
        predicted = calibration.chances(z, declaring)  # before the outcome: prequential
        loss_calibrated -= math.log(predicted[winner]) / hands
        loss_raw -= math.log(raw[winner]) / hands
        calibration = calibrate(calibration, z, [0 if i == winner else 1 for i in range(sides)], declaring)
    return calibration, loss_calibrated, loss_raw


@pytest.mark.parametrize(("sides", "declaring"), [(2, True), (3, False)])
def test_the_calibration_shrinks_predictions_the_outcomes_do_not_follow(sides: int, declaring: bool) -> None:
    calibration, calibrated, raw = _calibrated_run(random.Random(11), sides, declaring, "base")
    assert calibration.temperature < 0.15 and calibration.hands == 3000
    first = calibration.chances([0.0] * sides, declaring)[0]
    assert first == pytest.approx(0.65 if declaring else 1 / sides, abs=0.04)  # the base rate, learned
    assert calibrated < raw - 0.05


@pytest.mark.parametrize(("sides", "declaring"), [(2, True), (3, False)])
def test_the_calibration_leaves_well_calibrated_predictions_alone(sides: int, declaring: bool) -> None:
    calibration, calibrated, raw = _calibrated_run(random.Random(12), sides, declaring, "model")
    assert calibration.temperature == pytest.approx(1.0, abs=0.2)
    assert calibration.bias == pytest.approx(0.0, abs=0.15)
    assert calibrated == pytest.approx(raw, abs=0.01)


def test_the_calibration_changes_predictions_only_and_is_restored_with_the_ratings() -> None:
    rng = random.Random(5)
    hands = [_declared(at, rng.choice([(0, 1), (0, 1), (1, 0)]), players=tuple(rng.sample("abcdefg", 5)))
             for at in range(1, 121)]
    whole = Ratings()
    for hand in hands:
        whole.apply(hand)
    docs = whole.flush()
    stored = docs.ratings[("mighty-5", CALIBRATION)]
    assert ("mighty-5", CALIBRATION) not in docs.ordinals  # on no leaderboard
    learned = decode(stored, Calibration)
    assert learned.hands == 120 and learned.temperature != 1.0
    # in two batches, the second restored from the first's documents: the same bytes
    first, second = Ratings(), Ratings()
    for hand in hands[:60]:
        first.apply(hand)
    half = first.flush()
    wanted, _ = second.needs(hands[60:])
    for rules, player in sorted(wanted):
        second.restore_rating(rules, player, half.ratings.get((rules, player)))
    second.cursor = hands[59].key()
    for hand in hands[60:]:
        second.apply(hand)
    again = second.flush()
    assert all(again.ratings[key] == docs.ratings[key] for key in again.ratings)
    assert again.ratings[("mighty-5", CALIBRATION)] == stored
    # a very different calibration moves the predictions, never a player's rating
    skewed = Ratings()
    skewed.restore_rating("mighty-5", CALIBRATION, msgspec.json.encode(Calibration(temperature=0.0, bias=2.0)))
    for hand in hands:
        skewed.apply(hand)
    assert skewed.win_chances(hands[0]) != whole.win_chances(hands[0])
    assert skewed.win_chances(hands[0], calibrated=False) == whole.win_chances(hands[0], calibrated=False)
    players = {key: data for key, data in skewed.flush().ratings.items() if key[1] != CALIBRATION}
    assert players == {key: data for key, data in docs.ratings.items() if key[1] != CALIBRATION}
