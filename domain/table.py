"""The table aggregate (docs/architecture.md, "Layers"): seats, rule set, the sequence of hands, dealer
rotation (docs/rules/mighty.md §2), start/leave/resign, and the hand decider inside it.

Commands arrive wrapped in a ``Submission`` that names who sent them: a player's name,
or ``None`` for the service itself (deals, timeouts, closing). A deal arrives as data —
the service shuffles with ``secrets``; this module only checks and records it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Annotated, Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType
from msgspec.structs import replace

from domain.errors import MalformedCommand, RuleSetError, TableError, WrongPhase
from domain.games import AnyGame, Hand, Rules, SeatCommand, TableCreatedEvent
from domain.limits import (
    Bots,
    Cards,
    Count,
    Name,
    Options,
    Player,
    Salt,
    Seat,
    Stamp,
    Version,
    Word,
)
from domain.registry import DEFAULT, game_named, game_of

# ---------------------------------------------------------------- commands


class _TableCommand(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    v: Version = 1


class CreateTable(_TableCommand, frozen=True, tag="create_table"):
    variant: Word = "mighty-5"
    options: Options = {}
    name: Name = ""
    # The match (what a lobby shows, services/gateway): ``hands`` scored hands end it
    # (0: no end), ``turn_seconds`` a turn's time (0: none), ``bots`` the level of each
    # seat a bot plays (seat number as text), ``created`` when, as ISO 8601 UTC text
    # (data: the domain reads no clock).
    hands: Count = 0
    turn_seconds: Count = 0
    bots: Bots = {}
    created: Stamp = ""
    # A private table (docs/api.md, "Private tables"): listed to nobody, joined with its
    # invite code. The code is a secret the gateway makes and keeps to itself; the table
    # records only its sha256 (hex), since its events are read by anyone once a hand ends.
    private: bool = False
    invite_hash: Annotated[str, msgspec.Meta(max_length=64)] = ""
    # An unrated table changes no rating (docs/ratings.md); its hands still count for the
    # players' reputation.
    rated: bool = True
    # The reputation a player needs to take a seat: the share of their hands they
    # finished, in percent (0: anyone; the gateway checks it at a join, docs/ratings.md).
    min_reputation: Annotated[int, msgspec.Meta(ge=0, le=100)] = 0
    # Learners' hints (docs/api.md, "Hints"): a seat may ask what a bot would play at its
    # turn. Only on an unrated table (``hints_on_rated_table`` otherwise).
    hints: bool = False


class JoinSeat(_TableCommand, frozen=True, tag="join"):
    seat: Seat


class LeaveSeat(_TableCommand, frozen=True, tag="leave"):
    seat: Seat


class StartTable(_TableCommand, frozen=True, tag="start"):
    first_dealer: Seat  # drawn by the service with `secrets`: data, not a die roll here


class DealHand(_TableCommand, frozen=True, tag="deal"):
    order: Cards  # the shuffled deck: hands in seat order, then the kitty
    salt: Salt


class Resign(_TableCommand, frozen=True, tag="resign"):
    seat: Seat


class CloseTable(_TableCommand, frozen=True, tag="close"):
    """The service closes a table at any time (``reason``: ``idle``, ...); a player only
    one that has not started, and only its creator or its last person seated: the
    table is then closed as ``cancelled``, whatever ``reason`` says."""

    reason: Name = "closed"


class SetAway(_TableCommand, frozen=True, tag="away"):
    """A seated player leaves a started table (``away``) or comes back (not ``away``):
    the seat stays theirs; while away, the service (a bot) plays it."""

    seat: Seat
    away: bool = True


class TimeOutTurn(_TableCommand, frozen=True, tag="time_out"):
    """The service plays a seat that did not act before its turn's deadline (a table with
    ``turn_seconds``): ``move`` is the seat's command the service chose for it (the
    beginner bot's), recorded after ``TurnTimedOut`` in the same append. ``move`` is the
    game's command Struct; the service builds this command, never a client."""

    seat: Seat
    move: Any  # the game's command; checked by the game's decide like any seat's
    reason: Name = "timeout"
    # The seat goes away (``SeatAway``, reason ``timeouts``) at its ``away_after``-th
    # timed-out turn in a row (0: never): the service's setting, recorded in the event.
    away_after: Count = 0


class SendAway(_TableCommand, frozen=True, tag="send_away"):
    """The service sends a seat away whose player has had no connection to the table for
    ``gone_s`` seconds (no stream of theirs open on any gateway, no move of their own),
    under the rule ``after_s`` (``MIGHTY_AWAY_AFTER_GONE_S``). Both arrive as data (the
    domain reads no clock); the table decides (``gone_away``) and records them in
    ``SeatAway`` (reason ``disconnected``)."""

    seat: Seat
    gone_s: Count
    after_s: Count


TableOnlyCommand = (CreateTable | JoinSeat | LeaveSeat | StartTable | DealHand | Resign | CloseTable | SetAway
                    | TimeOutTurn | SendAway)


class Submission(msgspec.Struct, frozen=True):
    """A command and who sent it (``None``: the service itself)."""

    command: TableOnlyCommand | SeatCommand  # a seat's command: one of its table's game
    player: Player | None = None


# ---------------------------------------------------------------- events


class _TableEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    v: int = 1


class PlayerJoined(_TableEvent, frozen=True, tag="player_joined"):
    seat: int
    player: str


class PlayerLeft(_TableEvent, frozen=True, tag="player_left"):
    seat: int
    player: str


class TableStarted(_TableEvent, frozen=True, tag="table_started"):
    first_dealer: int
    started_by: str | None = None


class DealRevealed(_TableEvent, frozen=True, tag="deal_revealed"):
    """§2: the hand is over; the salt shows the deal was fixed before bidding."""

    hand_no: int
    order: tuple[str, ...]
    salt: str
    commitment: str


class PlayerResigned(_TableEvent, frozen=True, tag="player_resigned"):
    seat: int
    player: str


class TableClosed(_TableEvent, frozen=True, tag="table_closed"):
    reason: str
    # the player who closed a table that had not started (``cancelled``); unset (left
    # out of the bytes, as in every event stored before it was added): the service
    closed_by: str | UnsetType = UNSET


class SeatAway(_TableEvent, frozen=True, tag="seat_away"):
    """A started seat's player left (a bot plays it meanwhile) or came back."""

    seat: int
    player: str
    away: bool = True
    # why, when the service decided it: ``timeouts`` (the seat let ``away_after`` turns
    # in a row time out), ``acted`` (its player made a move while away); unset (left out
    # of the bytes, as in every event stored before it was added): the player's own
    # ``leave`` or ``join``; ``disconnected`` (its player had no connection for ``gone_s``
    # seconds, at least the rule's ``after_s``: both set only then)
    reason: str | UnsetType = UNSET
    gone_s: int | UnsetType = UNSET
    after_s: int | UnsetType = UNSET


class TurnTimedOut(_TableEvent, frozen=True, tag="turn_timed_out"):
    """The seat to act let its turn's time pass (``reason``): the events after it, of the
    same command, are the move the service made for it."""

    seat: int
    reason: str = "timeout"
    # the rule in force: the seat goes away at this many timed-out turns in a row; unset
    # (every event stored before it was added, and a service that sets no rule): never,
    # and the turn is not counted
    away_after: int | UnsetType = UNSET


class TimeoutsReset(_TableEvent, frozen=True, tag="timeouts_reset"):
    """The seat's player made a move of their own after timing out: the run of timed-out
    turns that would send the seat away starts again from zero. Recorded before the move,
    in the same append, only when the seat had a run."""

    seat: int
    player: str


TableOnlyEvent = (PlayerJoined | PlayerLeft | TableStarted | DealRevealed | PlayerResigned | TableClosed | SeatAway
                  | TurnTimedOut | TimeoutsReset)
# A hand event of the table's game: a msgspec.Struct of that game's tagged union. The
# codec decodes every game's (``domain.registry``); the table hands them to the game.
HandEvent: TypeAlias = msgspec.Struct
TableEvent = TableOnlyEvent | TableCreatedEvent | HandEvent

# ---------------------------------------------------------------- state

Status = Literal["new", "open", "playing", "closed"]


class TableState(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    status: Status = "new"
    rules: Rules | None = None  # of the table's game (``game``)
    seats: tuple[str | None, ...] = ()
    dealer: int = 0
    hand_no: int = 0  # hands dealt so far
    hand: Hand | None = None  # a hand state of the table's game
    previous_declarer: int | None = None
    totals: tuple[int, ...] = ()
    hands_scored: int = 0
    salt: str | None = None  # the current deal's salt, secret until revealed
    commitment: str | None = None
    match_hands: int = 0  # scored hands that end the match (0: no end)
    away: tuple[int, ...] = ()  # seats whose players left the started table, sorted
    created_by: str | None = None  # who created the table (None: the service)
    bot_seats: tuple[int, ...] = ()  # the seats given to bots at the table's creation, sorted
    # per seat, its timed-out turns in a row (counted under an ``away_after`` rule) since
    # its player last moved, came back or went away
    timeouts: tuple[int, ...] = ()
    invite_hash: str | None = None  # a private table's invite code's sha256 (None: a public table)
    min_reputation: int = 0  # the share of hands finished (percent) a seat needs (0: none)
    hints: bool = False  # a seat may ask what a bot would play (CreateTable.hints)

    @property
    def awaiting_deal(self) -> bool:
        if self.status != "playing":
            return False
        return self.hand is None or self.game.is_terminal(self.hand)

    @property
    def game(self) -> AnyGame:
        return DEFAULT if self.rules is None else game_of(self.rules)


def initial_state(table_id: str) -> TableState:
    return TableState(table_id=table_id)


def deal_commitment(order: tuple[str, ...], salt: str) -> str:
    """sha256 of the card order and the salt: published before bidding (§2)."""
    return hashlib.sha256((" ".join(order) + "|" + salt).encode()).hexdigest()


# ---------------------------------------------------------------- decide


def decide(state: TableState, submission: Submission) -> list[TableEvent]:
    cmd, player = submission.command, submission.player
    if state.status == "new" and not isinstance(cmd, CreateTable):
        raise TableError("unknown_table", f"There is no table {state.table_id!r}.")
    if isinstance(cmd, CreateTable):
        return _create(state, cmd, player)
    if state.status == "closed":
        raise TableError("table_closed", f"Table {state.table_id} is closed.")
    if isinstance(cmd, JoinSeat | LeaveSeat | StartTable):
        return _seating(state, cmd, player)
    if isinstance(cmd, DealHand):
        return _deal(state, cmd, player)
    if isinstance(cmd, Resign | CloseTable):
        return _close(state, cmd, player)
    if isinstance(cmd, SetAway):
        return _away(state, cmd, player)
    if isinstance(cmd, TimeOutTurn):
        return _time_out(state, cmd, player)
    if isinstance(cmd, SendAway):
        return _send_away(state, cmd, player)
    return _hand_command(state, cmd, player)


def _create(state: TableState, cmd: CreateTable, player: str | None) -> list[TableEvent]:
    if state.status != "new":
        raise TableError("table_exists", f"Table {state.table_id} already exists.")
    game = game_named(cmd.variant)
    try:
        rules = game.make_rules(cmd.variant, cmd.options)
    except RuleSetError as error:
        raise TableError(error.code, error.message) from None
    _check_match(cmd, game.players(rules))
    created = game.created(state.table_id, rules, cmd.name[:80], player)
    created = replace(created, hands=cmd.hands, turn_seconds=cmd.turn_seconds, bots=cmd.bots, created=cmd.created)
    if cmd.private or cmd.invite_hash:
        if not (cmd.private and _INVITE_HASH.fullmatch(cmd.invite_hash)):
            raise MalformedCommand("A private table needs its invite code's sha256 (64 hex digits), and only it.")
        created = replace(created, private=True, invite_hash=cmd.invite_hash)
    if not cmd.rated:
        created = replace(created, rated=False)
    if cmd.min_reputation:
        created = replace(created, min_reputation=cmd.min_reputation)
    if cmd.hints:
        if cmd.rated:
            raise TableError("hints_on_rated_table", "Hints are allowed only on an unrated table (rated: false).")
        created = replace(created, hints=True)
    return [created]


_INVITE_HASH = re.compile(r"[0-9a-f]{64}")


def _check_match(cmd: CreateTable, players: int) -> None:
    if cmd.hands < 0 or cmd.turn_seconds < 0:
        raise MalformedCommand("A match's hands and turn seconds are 0 (none) or more.")
    for seat, level in cmd.bots.items():
        if not (seat.isdigit() and int(seat) < players) or not level:
            raise MalformedCommand(f"A bot needs a seat of 0..{players - 1} and a level, not {seat!r}: {level!r}.")


def _away(state: TableState, cmd: SetAway, player: str | None) -> list[TableEvent]:
    if state.status != "playing":
        raise WrongPhase("Only a started table's seats are left and taken back this way.")
    _seat_in_range(state, cmd.seat)
    holder = state.seats[cmd.seat]
    if holder is None or (player is not None and holder != player):
        raise TableError("not_your_seat", f"Seat {cmd.seat} is not {player}'s.")
    if (cmd.seat in state.away) == cmd.away:
        raise TableError("already_away" if cmd.away else "not_away",
                         f"Seat {cmd.seat} is {'already' if cmd.away else 'not'} away.")
    return [SeatAway(seat=cmd.seat, player=holder, away=cmd.away)]


def _time_out(state: TableState, cmd: TimeOutTurn, player: str | None) -> list[TableEvent]:
    if player is not None:
        raise TableError("not_allowed", "Only the service times a turn out.")
    hand = state.hand
    if state.status != "playing" or hand is None:
        raise WrongPhase("No hand is being played at this table.")
    game = state.game
    if not isinstance(cmd.move, game.command_types) or cmd.move.seat != cmd.seat:
        raise MalformedCommand(f"A timed-out turn's move is a {game.name} command of seat {cmd.seat}.")
    if game.to_act(hand) != cmd.seat:
        raise TableError("not_your_turn", f"Seat {cmd.seat} is not to act: its turn is over.")
    if cmd.away_after < 0:
        raise MalformedCommand("A timed-out turn's away_after is 0 (never) or more.")
    timed_out = TurnTimedOut(seat=cmd.seat, reason=cmd.reason, away_after=cmd.away_after or UNSET)
    events: list[TableEvent] = [timed_out, *_hand_command(state, cmd.move, None)]
    if goes_away(state, cmd.seat, cmd.away_after) and not any(isinstance(e, TableClosed) for e in events):
        holder = state.seats[cmd.seat] or ""
        events.append(SeatAway(seat=cmd.seat, player=holder, away=True, reason=AWAY_TIMEOUTS))
    return events


AWAY_TIMEOUTS = "timeouts"  # SeatAway.reason: the seat let its turns time out, away_after in a row
AWAY_ACTED = "acted"  # SeatAway.reason: the away seat's player made a move: back
AWAY_GONE = "disconnected"  # SeatAway.reason: the seat's player had no connection for after_s


def _send_away(state: TableState, cmd: SendAway, player: str | None) -> list[TableEvent]:
    if player is not None:
        raise TableError("not_allowed", "Only the service sends a seat away for want of a connection.")
    if state.status != "playing":
        raise WrongPhase("Only a started table's seats are sent away.")
    _seat_in_range(state, cmd.seat)
    if cmd.seat in state.bot_seats:
        raise TableError("not_allowed", f"Seat {cmd.seat} is a bot's: it is never sent away.")
    if cmd.seat in state.away:
        raise TableError("already_away", f"Seat {cmd.seat} is already away.")
    if not gone_away(state, cmd.seat, cmd.gone_s, cmd.after_s):
        raise TableError("not_gone", f"Seat {cmd.seat}'s player has been gone {cmd.gone_s} s, "
                                     f"not the {cmd.after_s} s (1 or more) that send a seat away.")
    holder = state.seats[cmd.seat] or ""
    return [SeatAway(seat=cmd.seat, player=holder, away=True, reason=AWAY_GONE, gone_s=cmd.gone_s,
                     after_s=cmd.after_s)]


def gone_away(state: TableState, seat: int, gone_s: int, after_s: int) -> bool:
    """Whether a seat whose player has had no connection to the table for ``gone_s``
    seconds is sent away under the rule ``after_s`` (0: never): a person's seat (not a
    bot's), at a table playing, not away already, gone ``after_s`` or longer."""
    if after_s <= 0 or state.status != "playing" or not 0 <= seat < len(state.seats):
        return False
    if state.seats[seat] is None or seat in state.bot_seats or seat in state.away:
        return False
    return gone_s >= after_s


def goes_away(state: TableState, seat: int, away_after: int) -> bool:
    """Whether one more timed-out turn of ``seat`` sends it away under ``away_after``."""
    if away_after <= 0 or seat in state.away:
        return False
    return _timeouts_of(state, seat) + 1 >= away_after


def _timeouts_of(state: TableState, seat: int) -> int:
    return state.timeouts[seat] if seat < len(state.timeouts) else 0


def _seat_in_range(state: TableState, seat: int) -> None:
    if not 0 <= seat < len(state.seats):
        raise MalformedCommand(f"Seat {seat} does not exist at a table of {len(state.seats)}.")


def _seating(state: TableState, cmd: JoinSeat | LeaveSeat | StartTable, player: str | None) -> list[TableEvent]:
    if state.status != "open":
        raise WrongPhase("The table has started; seats are fixed now.")
    if player is None:
        raise TableError("player_required", "Seats are taken and left by players, not the service.")
    if isinstance(cmd, StartTable):
        return _start(state, cmd, player)
    _seat_in_range(state, cmd.seat)
    if isinstance(cmd, LeaveSeat):
        if state.seats[cmd.seat] != player:
            raise TableError("not_your_seat", f"Seat {cmd.seat} is not {player}'s.")
        return [PlayerLeft(seat=cmd.seat, player=player)]
    if state.seats[cmd.seat] is not None:
        raise TableError("seat_taken", f"Seat {cmd.seat} is taken.")
    if player in state.seats:
        raise TableError("already_seated", f"{player} already has a seat at this table.")
    return [PlayerJoined(seat=cmd.seat, player=player)]


def _start(state: TableState, cmd: StartTable, player: str) -> list[TableEvent]:
    if player not in state.seats:
        raise TableError("not_seated", "Only a seated player may start the table.")
    if None in state.seats:
        raise TableError("table_not_full", "Every seat must be taken before the table starts.")
    _seat_in_range(state, cmd.first_dealer)
    return [TableStarted(first_dealer=cmd.first_dealer, started_by=player)]


def _deal(state: TableState, cmd: DealHand, player: str | None) -> list[TableEvent]:
    if player is not None:
        raise TableError("not_allowed", "Only the service deals.")
    if not state.awaiting_deal:
        raise WrongPhase("A hand is in progress or the table has not started; no deal now.")
    assert state.rules is not None
    game = state.game
    deck = game.deck(state.rules)
    if Counter(cmd.order) != Counter(deck):
        raise MalformedCommand(f"A deal must order the {len(deck)} cards of {state.rules.variant}, each once.")
    return [game.deal(state.rules, cmd.order, dealer=state.dealer, hand_no=state.hand_no,
                      previous_declarer=state.previous_declarer,
                      commitment=deal_commitment(cmd.order, cmd.salt), salt=cmd.salt)]


CANCELLED = "cancelled"  # the reason of a table its creator (or last person seated) closed


def _close(state: TableState, cmd: Resign | CloseTable, player: str | None) -> list[TableEvent]:
    if isinstance(cmd, CloseTable):
        if player is not None:
            _may_cancel(state, player)
            return [TableClosed(reason=CANCELLED, closed_by=player)]
        return [*_reveal_if_dealt(state), TableClosed(reason=cmd.reason)]
    _seat_in_range(state, cmd.seat)
    if player is not None and state.seats[cmd.seat] != player:
        raise TableError("not_your_seat", f"Seat {cmd.seat} is not {player}'s.")
    name = state.seats[cmd.seat] or ""
    return [PlayerResigned(seat=cmd.seat, player=name), *_reveal_if_dealt(state), TableClosed(reason="resigned")]


def _may_cancel(state: TableState, player: str) -> None:
    """A player closes a table only before it starts, and only the one who created it
    or the last person seated there (every other seat empty or a bot's)."""
    if state.status != "open":
        raise TableError("table_started", f"Table {state.table_id} has started; only the service closes it now.")
    others = [p for seat, p in enumerate(state.seats) if p is not None and p != player and seat not in state.bot_seats]
    last_seated = player in state.seats and not others
    if player != state.created_by and not last_seated:
        raise TableError("not_allowed", "Only the table's creator, or its last person seated, "
                                        "may close it before it starts.")


def _reveal_if_dealt(state: TableState) -> list[TableEvent]:
    """A hand cut short by the table closing has ended too: its deal is revealed (§2), so
    its commitment can be checked and its audit view written, like any hand's."""
    hand = state.hand
    if hand is None or state.salt is None:  # no hand, or its deal already revealed
        return []
    return [_revealed(state, hand)]


def _revealed(state: TableState, hand: Hand) -> DealRevealed:
    assert state.salt is not None and state.commitment is not None
    order = state.game.hand_order(hand)
    return DealRevealed(hand_no=hand.hand_no, order=order, salt=state.salt, commitment=state.commitment)


def _hand_command(state: TableState, cmd: SeatCommand, player: str | None) -> list[TableEvent]:
    hand = state.hand
    if state.status != "playing" or hand is None:
        raise WrongPhase("No hand is being played at this table.")
    if player is not None:
        if not 0 <= cmd.seat < len(state.seats):
            raise MalformedCommand(f"Seat {cmd.seat} does not exist at a table of {len(state.seats)}.")
        if state.seats[cmd.seat] != player:
            raise TableError("not_your_seat", f"Seat {cmd.seat} is not {player}'s.")
    game = state.game
    if not isinstance(cmd, game.command_types):
        raise MalformedCommand(f"A {type(cmd).__name__} command is not a command of {game.name}.")
    events: list[TableEvent] = list(game.decide(hand, cmd))
    if player is not None:  # the seat's own move: back if away, its run of timeouts over
        events[:0] = _present(state, cmd.seat, player)
    if isinstance(events[-1], game.ends_hand):
        events.append(_revealed(state, hand))
        if state.match_hands and _scored_after(state, events) >= state.match_hands:
            events.append(TableClosed(reason="match_over"))  # the match's last hand
    return events


def _present(state: TableState, seat: int, player: str) -> list[TableEvent]:
    """What a seat's own move says first: its player is back (an away seat), or its run
    of timed-out turns is over."""
    if seat in state.away:
        return [SeatAway(seat=seat, player=player, away=False, reason=AWAY_ACTED)]
    if _timeouts_of(state, seat) > 0:
        return [TimeoutsReset(seat=seat, player=player)]
    return []


def _scored_after(state: TableState, events: list[TableEvent]) -> int:
    for event in events:
        state = evolve(state, event)
    return state.hands_scored


# ---------------------------------------------------------------- evolve


def evolve(state: TableState, event: TableEvent) -> TableState:
    rules = state.rules
    if rules is not None:
        game = game_of(rules)
        if isinstance(event, game.hand_events):  # most events: first
            return _hand_event(state, game, rules, event)
    if isinstance(event, TableCreatedEvent):
        n = game_of(event.rules).players(event.rules)
        return replace(state, status="open", rules=event.rules, seats=(None,) * n, totals=(0,) * n,
                       match_hands=event.hands, created_by=event.created_by,
                       bot_seats=tuple(sorted(int(seat) for seat in event.bots)), timeouts=(0,) * n,
                       invite_hash=event.invite_hash if event.private is True else None,
                       min_reputation=event.min_reputation if isinstance(event.min_reputation, int) else 0,
                       hints=event.hints is True)
    if isinstance(event, PlayerJoined | PlayerLeft):
        return replace(state, seats=seated(state.seats, event))
    if isinstance(event, TableStarted):
        return replace(state, status="playing", dealer=event.first_dealer)
    if isinstance(event, DealRevealed):
        return replace(state, salt=None)
    if isinstance(event, TurnTimedOut):
        if isinstance(event.away_after, UnsetType):  # no rule in force: not counted
            return state
        return replace(state, timeouts=_counted(state, event.seat, _timeouts_of(state, event.seat) + 1))
    if isinstance(event, TimeoutsReset):
        return replace(state, timeouts=_counted(state, event.seat, 0))
    if isinstance(event, PlayerResigned):
        return state
    if isinstance(event, TableClosed):
        return replace(state, status="closed")
    if isinstance(event, SeatAway):
        away = set(state.away) | {event.seat} if event.away else set(state.away) - {event.seat}
        return replace(state, away=tuple(sorted(away)), timeouts=_counted(state, event.seat, 0))
    # a stored stream is the domain's own output: this is a bug or a forged stream
    raise ValueError(f"a {type(event).__name__} is no event of table {state.table_id}'s game")


def _counted(state: TableState, seat: int, count: int) -> tuple[int, ...]:
    timeouts = state.timeouts or (0,) * len(state.seats)
    return timeouts[:seat] + (count,) + timeouts[seat + 1:]


def seated(seats: tuple[str | None, ...], event: PlayerJoined | PlayerLeft) -> tuple[str | None, ...]:
    """``seats`` after a player takes or leaves one (the projections fold seats with it too)."""
    who = event.player if isinstance(event, PlayerJoined) else None
    return seats[:event.seat] + (who,) + seats[event.seat + 1:]


def _hand_event(state: TableState, game: AnyGame, rules: Rules, event: HandEvent) -> TableState:
    if isinstance(event, game.deal_type):
        proof = game.deal_proof(event)
        return replace(state, hand=game.evolve(None, event), hand_no=state.hand_no + 1,
                       salt=proof.salt, commitment=proof.commitment)
    assert state.hand is not None
    hand = game.evolve(state.hand, event)
    settled = game.settle(rules, hand, event, dealer=state.dealer, seats=len(state.seats))
    if settled is None:
        return replace(state, hand=hand)
    totals = tuple(t + s for t, s in zip(state.totals, settled.scores, strict=True))
    return replace(state, hand=hand, dealer=settled.dealer, previous_declarer=settled.declarer,
                   totals=totals, hands_scored=state.hands_scored + 1)
