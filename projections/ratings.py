"""Ratings and reputation (docs/ratings.md): two pure folds.

1. ``HandsProjection``, the kind ``ratings`` of one partition: folds its tables' events
   into one ``RatedHand`` per hand that ended with a ledger line (who sat where, the
   sides as they played, each side's rank by the hand's scores, which seats were away,
   when it ended). Its documents: ``ratings:t:<table>`` (the table's state while it is
   open) and the hash ``ratings:hands`` (one field per hand, named by
   ``hand_field``; one hash per hour of the hands' end, ``ratings:hands:<hour>``), written
   with the partition's checkpoint like any kind's, and kept until the table is archived
   (the partition's record of its hands, which ``mighty projections check`` compares with
   the streams; an archived table's, rated, are folded from its archived events again:
   ``table_hands``); the hash ``ratings:hours`` names the hours that have hands.
2. ``Ratings``, over every partition: applies those hands **in the order of
   ``RatedHand.key``** (the hand's end time, the table, the hand number) to the
   players' Weng-Lin ratings (openskill's Plackett-Luce model) per rule set and to their
   reputation (hands finished, hands abandoned to the away bot). The order is data, so
   the live worker (which holds a hand back until every partition has passed its time)
   and a rebuild from the streams give the same numbers, byte for byte.

What a game's hand looks like (its sides) is the game's ledger line's ``sides``: nothing
here names a game. A seat a bot plays with no player in it is rated under ``bot:<level>``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

import msgspec
from openskill.models import PlackettLuce, PlackettLuceRating

from domain.games import LedgerLine, TableCreatedEvent
from domain.table import SeatAway, TableClosed, TableEvent
from projections.docs import Decoder, DocKey, Docs, decode, encode
from projections.ledger import AnyTableLedger, Uncreated, decode_table, fold

HANDS_DOC: Final = "ratings:hands:"  # + the hour of the hands' end: hash hand_field -> RatedHand
HOUR_MS: Final = 3_600_000
HOURS_DOC: Final = "ratings:hours"  # hash: every hour the partition has hands of -> "1"
MU: Final = 25.0
SIGMA: Final = 25.0 / 3.0
# A rating is provisional until its sigma falls below this (docs/ratings.md, "Provisional").
PROVISIONAL_SIGMA: Final = 5.0
HISTORY: Final = 100  # the last ordinals kept per player and rule set, for the chart
# How sides of different sizes are compared (docs/ratings.md, "Sides of different sizes"):
# ``sum`` openskill's own, ``mean`` a side as strong as its average player; ``-edge``: the
# side that declared carries a learned pseudo-player, its shape's declarer's edge.
# ``declarer-edge``: ``mean-edge`` but the declaring side's strength weighs its declarer
# at ``DECLARER_SHARE`` (their friends share the rest).
Treatment = Literal["sum", "mean", "sum-edge", "mean-edge", "declarer-edge"]
# The treatment the service rates with, and one hand's performance spread (openskill's
# beta: None for its default, SIGMA / 2), chosen by bench/ratings.py (docs/ratings.md).
TREATMENT: Final[Treatment] = "declarer-edge"
BETA: Final[float | None] = None
DECLARER_SHARE: Final = 0.8


def table_doc(table_id: str) -> str:
    return f"ratings:t:{table_id}"


def bot_player(level: str) -> str:
    """The stable id a bot level is rated under (a seat a bot plays with no player in it)."""
    return f"bot:{level}"


def is_bot(player: str) -> bool:
    return player.startswith("bot:")


EDGE: Final = "edge:"


def is_edge(player: str) -> bool:
    """A declarer's-edge pseudo-player: rated, never listed on a leaderboard."""
    return player.startswith(EDGE)


def edge_player(sides: Sequence[Sequence[object]]) -> str:
    """The pseudo-player of a hand's shape, ``edge:2v3`` (the declaring side first)."""
    return EDGE + "v".join(str(len(side)) for side in sides)


class RatedHand(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One hand that ended, as the ratings and the reputation need it. Stored as a row
    (its fields in order, without their names: 73 bytes, not 143); releases before
    2026-12-06 stored a map, which ``decode_hand`` reads too (``projections.docs.Decoder``)."""

    at_ms: int  # when its last event was appended (the store's clock)
    table_id: str
    hand_no: int
    rules: str  # the rule set it is rated in: the table's variant
    rated: bool
    players: tuple[str | None, ...]  # per seat: the player, ``bot:<level>``, or None
    away: tuple[bool, ...]  # per seat: its player had left it to the away bot
    sides: tuple[tuple[int, ...], ...]  # seats, side by side; () if not played out
    ranks: tuple[int, ...]  # per side: 0 the best, equal scores equal ranks
    declarers: tuple[int, ...] = ()  # the seats that declared its contract, on the first side (LedgerLine.declared_by)

    @property
    def declaring(self) -> bool:
        """The first side declared the hand's contract."""
        return bool(self.declarers)

    def key(self) -> tuple[int, str, int]:
        return (self.at_ms, self.table_id, self.hand_no)


def hands_doc(hour: int) -> str:
    """The hash of a partition's hands that ended in ``hour`` (ms since the epoch // HOUR_MS)."""
    return f"{HANDS_DOC}{hour}"


def hand_field(hand: RatedHand) -> str:
    return f"{hand.at_ms:013d}:{hand.table_id}:{hand.hand_no}"


def hand_key_of_field(field: str) -> tuple[int, str, int] | None:
    """The key of the hand stored under ``field`` (``hand_field``), None for another shape."""
    parts = field.split(":")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[2].isdigit():
        return None
    return (int(parts[0]), parts[1], int(parts[2]))


def hand_docs(hands: Iterable[RatedHand]) -> list[DocKey]:
    """Where the partition holds ``hands``: a field of the bucket of the hour each ended in."""
    return [DocKey(hands_doc(hand.at_ms // HOUR_MS), hand_field(hand)) for hand in hands]


def table_of_hand_doc(doc: DocKey) -> str | None:
    """The table a partition's hand record is of (None: a document of another sort)."""
    if not doc.name.startswith(HANDS_DOC) or doc.field is None:
        return None
    key = hand_key_of_field(doc.field)
    return None if key is None else key[1]


def ranks_of(sides: Sequence[Sequence[int]], scores: Sequence[int]) -> tuple[int, ...]:
    """Each side's rank by its score (the sum of its seats'): 0 for the best; sides with
    equal scores share a rank, and the next rank counts them (1, 1, 3: competition
    ranking, what openskill reads as a tie)."""
    totals = [sum(scores[s] for s in side) for side in sides]
    return tuple(sum(1 for other in totals if other > mine) for mine in totals)


def hand_of(line: LedgerLine, *, at_ms: int, table_id: str, rules: str, rated: bool,
            bots: dict[str, str], away: frozenset[int]) -> RatedHand:
    # a seat the table gave a bot is rated under its level, whoever holds it (the gateway
    # seats a bot player of its own there, a new one per table)
    players = tuple(bot_player(bots[str(seat)]) if str(seat) in bots else name
                    for seat, name in enumerate(line.players))
    sides = line.sides()
    declarers = tuple(seat for seat in sides[0] if line.declared_by(seat)) if len(sides) > 1 else ()
    return RatedHand(at_ms=at_ms, table_id=table_id, hand_no=line.hand_no, rules=rules, rated=rated,
                     players=players, away=tuple(seat in away for seat in range(len(players))),
                     sides=sides, ranks=ranks_of(sides, line.scores), declarers=declarers)


# ---------------------------------------------------------------- 1. per partition


class TableDoc(msgspec.Struct, frozen=True, kw_only=True):
    """A table's state as the kind ``ratings`` stores it: its rated flag, its bots, the
    seats away now, and its ledger (which says who sits where and folds each hand),
    without its hands' lines since 2026-12-06 (``_without_lines``: the fold only adds one;
    the hands are the kind's other documents; a doc stored before holds them and restores
    the same)."""

    table_id: str
    rated: bool = True
    bots: dict[str, str] = {}
    away: tuple[int, ...] = ()
    ledger: msgspec.Raw = msgspec.Raw(b"null")


_decode_doc = Decoder(TableDoc).decode


def _without_lines(ledger: AnyTableLedger) -> AnyTableLedger:
    """The ledger without its hands' lines: all the fold needs to tell the next hand's
    (it adds one line a hand), so what the kind keeps of a table does not grow a hand."""
    if not ledger.hands:
        return ledger
    trimmed: AnyTableLedger = msgspec.structs.replace(cast(Any, ledger), hands=())  # every game's is a Struct
    return trimmed


@dataclass
class _Table:
    ledger: AnyTableLedger
    rated: bool = True
    bots: dict[str, str] = field(default_factory=dict)
    away: frozenset[int] = frozenset()


class HandsProjection:
    """The kind ``ratings`` over the tables of one partition: each ended hand, once."""

    kind = "ratings"

    def __init__(self) -> None:
        self.tables: dict[str, _Table] = {}
        self._dirty: dict[str, None] = {}
        self._hands: list[RatedHand] = []

    def known(self, table_id: str) -> bool:
        return table_id in self.tables

    def restore(self, table_id: str, stored: bytes | None) -> None:
        if stored is None:
            self.tables[table_id] = _Table(Uncreated(table_id=table_id))
            return
        doc = _decode_doc(stored)
        ledger = decode_table(bytes(doc.ledger))
        self.tables[table_id] = _Table(ledger, doc.rated, dict(doc.bots), frozenset(doc.away))

    def apply(self, table_id: str, version: int, event: TableEvent, at_ms: int | None = None) -> None:
        table = self.tables.get(table_id)
        if table is None:
            table = self.tables[table_id] = _Table(Uncreated(table_id=table_id))
        changed = False
        if isinstance(event, TableCreatedEvent):
            table.rated, table.bots, changed = event.rated is not False, dict(event.bots), True
        elif isinstance(event, SeatAway):
            table.away = table.away | {event.seat} if event.away else table.away - {event.seat}
            changed = True
        before = table.ledger
        after = fold(before, version, event)
        if after is not before:
            table.ledger, changed = after, True
            if len(after.hands) > len(before.hands) and after.variant is not None:
                self._hands.append(hand_of(after.hands[-1], at_ms=at_ms or 0, table_id=table_id,
                                           rules=after.variant, rated=table.rated, bots=table.bots,
                                           away=table.away))
                table.ledger = _without_lines(after)  # its line is a RatedHand now
        if changed or isinstance(event, TableClosed):
            self._dirty[table_id] = None

    def flush(self) -> Docs:
        docs: Docs = {}
        for table_id in self._dirty:
            table = self.tables[table_id]
            if table.ledger.closed:  # nothing follows a close: its state goes
                docs[DocKey(table_doc(table_id))] = None
                del self.tables[table_id]
            else:
                docs[DocKey(table_doc(table_id))] = encode(TableDoc(
                    table_id=table_id, rated=table.rated, bots=table.bots, away=tuple(sorted(table.away)),
                    ledger=msgspec.Raw(encode(_without_lines(table.ledger)))))
        docs.update((DocKey(hands_doc(hand.at_ms // HOUR_MS), hand_field(hand)), encode(hand))
                    for hand in self._hands)
        docs.update((DocKey(HOURS_DOC, str(hand.at_ms // HOUR_MS)), b"1") for hand in self._hands)
        self._dirty.clear()
        self._hands.clear()
        return docs


def table_hands(table_id: str, events: Iterable[tuple[int, TableEvent, int | None]]) -> list[RatedHand]:
    """The hands one table's events end, as the kind folds them (its ``(version, event,
    at_ms)`` in order): what its partition holds of the table (``hand_docs``), and what a
    re-rating takes from an archived table's events (docs/ratings.md, "Archived tables")."""
    projection = HandsProjection()
    for version, event, at_ms in events:
        projection.apply(table_id, version, event, at_ms)
    return list(projection._hands)


# ---------------------------------------------------------------- 2. over every partition


class PlayerRating(msgspec.Struct, frozen=True, kw_only=True):
    """A player's rating in one rule set. ``ordinal`` is mu - 3 sigma (what boards sort by)."""

    player: str
    mu: float = MU
    sigma: float = SIGMA
    hands: int = 0
    last_ms: int = 0  # when their last rated hand ended
    history: tuple[tuple[int, float], ...] = ()  # (at_ms, ordinal) after each of the last hands

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.sigma >= PROVISIONAL_SIGMA


class Reputation(msgspec.Struct, frozen=True, kw_only=True):
    """Hands a player finished in their seat, and hands their seat ended in the away bot's
    hands (they had left: docs/bots.md, "Away seats")."""

    player: str
    finished: int = 0
    abandoned: int = 0


decode_rating = Decoder(PlayerRating).decode
decode_reputation = Decoder(Reputation).decode
decode_hand = Decoder(RatedHand).decode


def new_model(beta: float | None = None) -> PlackettLuce:
    """openskill's Plackett-Luce at ``MU``, ``SIGMA``; ``beta`` the spread of one hand's
    performance around a player's skill (the library's default ``SIGMA / 2`` if None)."""
    return PlackettLuce(mu=MU, sigma=SIGMA, beta=SIGMA / 2 if beta is None else beta)


def _unscaled_model(beta: float | None = None) -> PlackettLuce:
    """The model the ``mean`` treatment rates scaled players with: no dynamics of its own
    (tau 0: the players' own tau is added before scaling)."""
    return PlackettLuce(mu=MU, sigma=SIGMA, beta=SIGMA / 2 if beta is None else beta, tau=0.0)


def side_weights(sides: Sequence[Sequence[object]], treatment: Treatment,
                 declared: Sequence[bool] = (), share: float = DECLARER_SHARE) -> list[list[float]] | None:
    """Each player's share of their side's strength: ``sum`` (openskill's own: a side is
    as strong as its players' means added up), ``mean`` (1/size each: a side of two and
    a side of three are compared by their average player; docs/ratings.md, "Sides of
    different sizes") or ``declarer-edge`` (the first side's declarers, ``declared`` per
    player of it, share ``share`` of it, the others the rest; the other sides as
    ``mean``)."""
    if treatment.startswith("sum"):
        return None
    weights = [[1.0 / len(side)] * len(side) for side in sides]
    if treatment == "declarer-edge" and any(declared) and not all(declared):
        lead, rest = sum(declared), len(declared) - sum(declared)
        weights[0] = [share / lead if d else (1.0 - share) / rest for d in declared]
    return weights


def has_edge(treatment: Treatment) -> bool:
    return treatment.endswith("-edge")


def rate(model: PlackettLuce, sides: Sequence[Sequence[PlayerRating]], ranks: Sequence[int],
         treatment: Treatment, scaled: PlackettLuce | None = None) -> list[list[tuple[float, float]]]:
    """Each player's (mu, sigma) after a hand whose sides finished at ``ranks`` (no edge)."""
    return rate_hand(model, sides, ranks, treatment, scaled)[0]


def rate_hand(model: PlackettLuce, sides: Sequence[Sequence[PlayerRating]], ranks: Sequence[int],
              treatment: Treatment, scaled: PlackettLuce | None = None, edge: PlayerRating | None = None,
              weights: Sequence[Sequence[float]] | None = None,
              ) -> tuple[list[list[tuple[float, float]]], tuple[float, float] | None]:
    """Each player's (mu, sigma) after a hand whose sides finished at ``ranks``, and the
    declarer's-edge pseudo-player's (``edge``: it plays on the first side).

    ``sum`` is openskill's Plackett-Luce as it is. ``mean``: openskill 6.2 always sums a
    team's means (its ``weights`` scale only the update, and are renormalised to
    [1, 2]), so each player of a side of ``n`` is handed to it scaled by 1/n, mean and
    deviation (after the model's tau is added): the library's sum is then the side's
    mean and its variance the mean's. The update is scaled back: the mean moves ``n``
    times the scaled move, the deviation keeps the scaled factor. This is the exact
    Plackett-Luce update of a model whose side performs as its average player
    (docs/ratings.md). ``weights`` (each player's share of their side, as
    ``side_weights``) generalise the 1/n: a player of share ``w`` is handed over scaled by
    ``w`` and their move scaled back by 1/w. The edge is a member of the first side, unscaled, handed to
    openskill as its offset from ``MU`` (a new edge adds nothing): the side's strength is
    its players' (sum or mean) plus the edge, and the edge learns like a player."""
    ranked = [float(r) for r in ranks]
    if treatment.startswith("sum"):
        teams = [[model.rating(mu=p.mu, sigma=p.sigma) for p in side] for side in sides]
        if edge is not None:
            teams[0].append(model.rating(mu=edge.mu - MU, sigma=edge.sigma))
        rated = model.rate(teams, ranks=ranked)
        out = [[(float(r.mu), float(r.sigma)) for r in team[:len(side)]] for side, team in zip(sides, rated, strict=True)]
    else:
        unscaled = scaled or _unscaled_model()
        tau2 = float(model.tau) ** 2
        shares = weights if weights is not None else side_weights(sides, "mean")
        assert shares is not None
        teams = [[unscaled.rating(mu=p.mu * w, sigma=math.sqrt(p.sigma ** 2 + tau2) * w) for p, w in
                  zip(side, ws, strict=True)] for side, ws in zip(sides, shares, strict=True)]
        if edge is not None:
            teams[0].append(unscaled.rating(mu=edge.mu - MU, sigma=math.sqrt(edge.sigma ** 2 + tau2)))
        rated = unscaled.rate(teams, ranks=ranked)
        out = []
        for side, ws, before, after in zip(sides, shares, teams, rated, strict=True):
            n = len(side)
            out.append([(p.mu + (float(a.mu) - float(b.mu)) / w, float(a.sigma) / w)
                        for p, w, b, a in zip(side, ws, before[:n], after[:n], strict=True)])
    moved = None if edge is None else (MU + float(rated[0][-1].mu), float(rated[0][-1].sigma))
    return out, moved


def logits(model: PlackettLuce, sides: Sequence[Sequence[PlayerRating]],
           treatment: Treatment, edge: PlayerRating | None = None,
           weights: Sequence[Sequence[float]] | None = None) -> list[float]:
    """Each side's Plackett-Luce logit: its strength (its players' sum or weighted mean, as
    the treatment; plus the edge's offset from ``MU`` on the first side) over the model's
    spread ``c``. ``win_chances`` is their softmax."""
    weights = weights if weights is not None else side_weights(sides, treatment)
    strengths = []
    for i, side in enumerate(sides):
        w = [1.0] * len(side) if weights is None else weights[i]
        mu = sum(wi * p.mu for wi, p in zip(w, side, strict=True))
        var = sum((wi * p.sigma) ** 2 for wi, p in zip(w, side, strict=True))
        if i == 0 and edge is not None:
            mu, var = mu + edge.mu - MU, var + edge.sigma ** 2
        strengths.append((mu, var))
    beta2 = model.beta ** 2
    c = math.sqrt(sum(var + beta2 for _, var in strengths))
    return [mu / c for mu, _ in strengths]


def softmax(z: Sequence[float], temperature: float = 1.0, bias: float = 0.0, declaring: bool = False) -> list[float]:
    """The chance each side finishes first: the softmax of ``temperature`` times each
    side's logit ``z``, plus ``bias`` on the first side if it declared."""
    scaled = [temperature * v + (bias if i == 0 and declaring else 0.0) for i, v in enumerate(z)]
    top = max(scaled)
    exps = [math.exp(v - top) for v in scaled]
    total = sum(exps)
    return [e / total for e in exps]


def win_chances(model: PlackettLuce, sides: Sequence[Sequence[PlayerRating]],
                treatment: Treatment, edge: PlayerRating | None = None,
                weights: Sequence[Sequence[float]] | None = None) -> list[float]:
    """The chance each side finishes first, as the treatment sees the sides' strengths
    (uncalibrated: ``Calibration`` for what the ratings predict); ``edge`` plays on the
    first side; ``weights`` each player's share of their side (``side_weights``' by
    default)."""
    return softmax(logits(model, sides, treatment, edge, weights))


# ---------------------------------------------------------------- the prediction's calibration

CALIBRATION: Final = "calibration:prediction"  # its field in the rule set's ratings hash
# The prior information of the temperature and of the bias (how sure they start of 1 and
# 0, openskill's own chances) and how much of its information each hand keeps (about a
# thousand hands' memory): chosen with bench/ratings.py (docs/ratings.md, "Calibrated
# predictions").
CALIBRATION_PRIOR: Final = 2.0
CALIBRATION_MEMORY: Final = 0.999
MAX_TEMPERATURE: Final = 4.0


def is_calibration(player: str) -> bool:
    return player.startswith("calibration:")


class Calibration(msgspec.Struct, frozen=True, kw_only=True):
    """A rule set's prediction calibration: the ``temperature``, how much of the ratings'
    difference between sides (the declarer's edge included) the predicted chance believes
    (1: openskill's own; 0: none of it), and the ``bias``, a logit added to a declaring
    side's (the declarer's edge as the outcomes show it). Learned online, each hand after
    its prediction was made (prequential), by one Newton step on the hand's log loss
    (``calibrate``); ``information`` the accumulated curvature (``a a``, ``a b``, ``b b``;
    it forgets ``1 - memory`` of itself a hand, toward the prior). It changes the
    predicted chances only, never a rating's update."""

    player: str = CALIBRATION
    temperature: float = 1.0
    bias: float = 0.0
    information: tuple[float, float, float] = (CALIBRATION_PRIOR, 0.0, CALIBRATION_PRIOR)
    hands: int = 0

    def chances(self, z: Sequence[float], declaring: bool) -> list[float]:
        """Each side's chance to finish first, from their logits (``logits``)."""
        return softmax(z, self.temperature, self.bias, declaring)


decode_calibration = Decoder(Calibration).decode


def fresh_calibration(prior: float = CALIBRATION_PRIOR) -> Calibration:
    """Openskill's own chances (temperature 1, no bias), ``prior`` the information each starts with."""
    return Calibration(information=(prior, 0.0, prior))


def calibrate(calibration: Calibration, z: Sequence[float], ranks: Sequence[int], declaring: bool,
              memory: float = CALIBRATION_MEMORY, prior: float = CALIBRATION_PRIOR) -> Calibration:
    """The calibration after one hand whose sides' logits were ``z`` before it and that
    finished at ``ranks`` (the sides ranked first share the outcome; ``declaring``: the
    first side declared). One Newton step on the log loss of the softmax in (temperature
    ``a``, bias ``b``): gradient ``E_p[f] - E_y[f]``, curvature ``Cov_p[f]``, with ``f``
    per side (its logit; 1 if it is a declaring first side, else 0). The temperature
    stays in [0, ``MAX_TEMPERATURE``]."""
    p = calibration.chances(z, declaring)
    top = min(ranks)
    winners = [1.0 if r == top else 0.0 for r in ranks]
    y = [w / sum(winners) for w in winners]
    d = [1.0 if i == 0 and declaring else 0.0 for i in range(len(z))]
    mx = sum(pi * x for pi, x in zip(p, z, strict=True))
    md = sum(pi * di for pi, di in zip(p, d, strict=True))
    ga = mx - sum(yi * x for yi, x in zip(y, z, strict=True))
    gb = md - sum(yi * di for yi, di in zip(y, d, strict=True))
    caa = sum(pi * (x - mx) ** 2 for pi, x in zip(p, z, strict=True))
    cab = sum(pi * (x - mx) * (di - md) for pi, x, di in zip(p, z, d, strict=True))
    cbb = sum(pi * (di - md) ** 2 for pi, di in zip(p, d, strict=True))
    iaa, iab, ibb = calibration.information
    forget = (1.0 - memory) * prior
    iaa, iab, ibb = memory * iaa + forget + caa, memory * iab + cab, memory * ibb + forget + cbb
    det = iaa * ibb - iab * iab
    step_a = (ibb * ga - iab * gb) / det
    step_b = (iaa * gb - iab * ga) / det
    temperature = min(MAX_TEMPERATURE, max(0.0, calibration.temperature - step_a))
    return Calibration(temperature=temperature, bias=calibration.bias - step_b, information=(iaa, iab, ibb),
                       hands=calibration.hands + 1)


class Ratings:
    """Every player's rating per rule set and reputation, folded from ``RatedHand``s in
    key order. State is restored lazily by the reader (``restore_*``); ``flush`` gives the
    changed documents. Hands at or before ``cursor`` were applied already: skipped."""

    def __init__(self, treatment: Treatment = TREATMENT, beta: float | None = BETA,
                 share: float = DECLARER_SHARE, memory: float = CALIBRATION_MEMORY,
                 prior: float = CALIBRATION_PRIOR) -> None:
        if not 0.0 < share < 1.0:  # a friend of share 0 would not be rated at all
            raise ValueError(f"the declarer's share must be in (0, 1), not {share}")
        self.share = share
        self.model = new_model(beta)
        self.scaled = _unscaled_model(beta)
        self.treatment: Treatment = treatment
        self.memory, self.prior = memory, prior
        self.ratings: dict[tuple[str, str], PlayerRating] = {}
        self.calibrations: dict[str, Calibration] = {}  # per rule set
        self.reputations: dict[str, Reputation] = {}
        self.cursor: tuple[int, str, int] | None = None
        self._dirty_ratings: dict[tuple[str, str], None] = {}
        self._dirty_reputations: dict[str, None] = {}
        self._dirty_calibrations: dict[str, None] = {}

    def needs(self, hands: Iterable[RatedHand]) -> tuple[set[tuple[str, str]], set[str]]:
        """The (rule set, player) ratings and the reputations these hands touch."""
        ratings: set[tuple[str, str]] = set()
        reputations: set[str] = set()
        for hand in hands:
            for player in hand.players:
                if player is None:
                    continue
                ratings.add((hand.rules, player))
                if not is_bot(player):
                    reputations.add(player)
            edge = self.edge_of(hand)
            if edge is not None:
                ratings.add((hand.rules, edge))
            ratings.add((hand.rules, CALIBRATION))
        return ratings, reputations

    def edge_of(self, hand: RatedHand) -> str | None:
        """The pseudo-player of the hand's declarer's edge, under a ``-edge`` treatment."""
        return edge_player(hand.sides) if has_edge(self.treatment) and hand.declaring else None

    def win_chances(self, hand: RatedHand, calibrated: bool = True) -> list[float]:
        """Each side's chance to finish first, before the hand (the calibration's
        prediction), at the rule set's learned temperature (``calibrated``) or at 1."""
        z = self._logits(hand)
        return self.calibration(hand.rules).chances(z, hand.declaring) if calibrated else softmax(z)

    def _logits(self, hand: RatedHand) -> list[float]:
        sides = [[self.rating(hand.rules, hand.players[s] or "") for s in side] for side in hand.sides]
        edge = self.edge_of(hand)
        return logits(self.model, sides, self.treatment,
                      None if edge is None else self.rating(hand.rules, edge), self.weights(hand))

    def calibration(self, rules: str) -> Calibration:
        return self.calibrations.get(rules) or fresh_calibration(self.prior)

    def weights(self, hand: RatedHand) -> list[list[float]] | None:
        declared = [seat in hand.declarers for seat in hand.sides[0]] if hand.sides else []
        return side_weights(hand.sides, self.treatment, declared, self.share)

    def restore_rating(self, rules: str, player: str, stored: bytes | None) -> None:
        if is_calibration(player):
            self.calibrations[rules] = fresh_calibration(self.prior) if stored is None else decode_calibration(stored)
            return
        self.ratings[(rules, player)] = PlayerRating(player=player) if stored is None else decode_rating(stored)

    def restore_reputation(self, player: str, stored: bytes | None) -> None:
        self.reputations[player] = Reputation(player=player) if stored is None else decode_reputation(stored)

    def rating(self, rules: str, player: str) -> PlayerRating:
        return self.ratings.get((rules, player)) or PlayerRating(player=player)

    def apply(self, hand: RatedHand) -> bool:
        """Apply one hand (in key order); False if the cursor had passed it already."""
        key = hand.key()
        if self.cursor is not None and key <= self.cursor:
            return False
        self.cursor = key
        for seat, player in enumerate(hand.players):
            if player is None or is_bot(player) or not hand.sides:
                continue
            before = self.reputations.get(player) or Reputation(player=player)
            if hand.away[seat]:
                after = msgspec.structs.replace(before, abandoned=before.abandoned + 1)
            else:
                after = msgspec.structs.replace(before, finished=before.finished + 1)
            self.reputations[player] = after
            self._dirty_reputations[player] = None
        if not hand.rated or len(hand.sides) < 2 or any(hand.players[s] is None for side in hand.sides for s in side):
            return True  # unrated, or a seat nobody can be rated for
        z = self._logits(hand)  # what the prediction saw before the hand: then it learns
        self.calibrations[hand.rules] = calibrate(self.calibration(hand.rules), z, hand.ranks,
                                                  hand.declaring, self.memory, self.prior)
        self._dirty_calibrations[hand.rules] = None
        seats = [[(s, hand.players[s]) for s in side] for side in hand.sides]
        before_sides = [[self.rating(hand.rules, name or "") for _, name in side] for side in seats]
        edge = self.edge_of(hand)
        edge_before = None if edge is None else self.rating(hand.rules, edge)
        after_sides, edge_after = rate_hand(self.model, before_sides, hand.ranks, self.treatment, self.scaled,
                                            edge_before, self.weights(hand))
        if edge is not None and edge_before is not None and edge_after is not None:
            self.ratings[(hand.rules, edge)] = PlayerRating(player=edge, mu=edge_after[0], sigma=edge_after[1],
                                                            hands=edge_before.hands + 1, last_ms=hand.at_ms)
            self._dirty_ratings[(hand.rules, edge)] = None
        for side, old_side, new_side in zip(seats, before_sides, after_sides, strict=True):
            for (_, name), old, (mu, sigma) in zip(side, old_side, new_side, strict=True):
                ordinal = mu - 3.0 * sigma
                new = PlayerRating(player=old.player, mu=mu, sigma=sigma, hands=old.hands + 1, last_ms=hand.at_ms,
                                   history=(*old.history, (hand.at_ms, ordinal))[-HISTORY:])
                self.ratings[(hand.rules, name or "")] = new
                self._dirty_ratings[(hand.rules, name or "")] = None
        return True

    def flush(self) -> RatingsDocs:
        docs = RatingsDocs(
            ratings={**{key: encode(self.ratings[key]) for key in self._dirty_ratings},
                     **{(rules, CALIBRATION): encode(self.calibrations[rules]) for rules in self._dirty_calibrations}},
            ordinals={key: self.ratings[key].ordinal for key in self._dirty_ratings if not is_edge(key[1])},
            reputations={p: encode(self.reputations[p]) for p in self._dirty_reputations},
            cursor=None if self.cursor is None else encode(self.cursor),
        )
        self._dirty_ratings.clear()
        self._dirty_reputations.clear()
        self._dirty_calibrations.clear()
        return docs


@dataclass
class RatingsDocs:
    """What ``Ratings.flush`` changed: each (rule set, player)'s rating document and its
    ordinal (the leaderboard's score), each player's reputation, and the cursor."""

    ratings: dict[tuple[str, str], bytes]  # and each rule set's ``Calibration`` (field ``CALIBRATION``)
    ordinals: dict[tuple[str, str], float]  # players only: an edge pseudo-player, a calibration is on no board
    reputations: dict[str, bytes]
    cursor: bytes | None


def decode_cursor(data: bytes | None) -> tuple[int, str, int] | None:
    if data is None:
        return None
    at_ms, table_id, hand_no = decode(data, tuple[int, str, int])
    return (at_ms, table_id, hand_no)


def rate_all(hands: Iterable[RatedHand], treatment: Treatment = TREATMENT) -> Ratings:
    """Every hand applied in key order from nothing: what a rebuild computes."""
    ratings = Ratings(treatment)
    for hand in sorted(hands, key=RatedHand.key):
        ratings.apply(hand)
    return ratings


__all__ = [
    "CALIBRATION", "HANDS_DOC", "PROVISIONAL_SIGMA", "TREATMENT", "Calibration", "HandsProjection",
    "PlackettLuceRating", "PlayerRating", "RatedHand", "Ratings", "RatingsDocs", "Reputation", "rate_all",
]
