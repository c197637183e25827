"""The API's bodies (docs/api.md), as msgspec types: the server decodes and encodes with them,
and Litestar builds the OpenAPI document from the same types."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

# Names are 1–24 printable characters (docs/api.md, "Players"), a table's 1-40 (empty: the
# table's id); the printable check is in code (names.py), since a JSON-schema pattern
# cannot say "printable" portably.
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=24)]
TableName = Annotated[str, msgspec.Meta(max_length=40)]
CommandId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
SeatNo = Annotated[int, msgspec.Meta(ge=0, le=7)]
Status = Literal["open", "playing", "finished"]


class Problem(msgspec.Struct, frozen=True):
    """Every non-2xx answer: a stable code and a sentence a person understands."""

    code: str
    message: str


class NewPlayer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name


class PlayerCreated(msgspec.Struct, frozen=True):
    player: str
    name: str
    token: str


class Contracts(msgspec.Struct, frozen=True):
    made: int
    failed: int


class RatingOut(msgspec.Struct, frozen=True):
    """A player's rating in one rule set (docs/ratings.md)."""

    mu: float
    sigma: float
    ordinal: float
    hands: int
    provisional: bool
    history: list[tuple[int, float]] = []  # (when, ordinal) after each of the last 100 rated hands


class ReputationOut(msgspec.Struct, frozen=True):
    """Hands finished in their seat, hands their seat ended in the away bot's hands."""

    finished: int = 0
    abandoned: int = 0


class PlayerStats(msgspec.Struct, frozen=True):
    player: str
    name: str
    hands: int
    total: int
    contracts: Contracts
    bot: str | None = None
    ratings: dict[str, RatingOut] = {}  # per rule set the player has rated hands in
    reputation: ReputationOut = ReputationOut()


class Seat(msgspec.Struct, frozen=True):
    seat: int
    player: str | None
    name: str | None
    bot: str | None
    away: bool = False  # the player left the started table: a bot plays the seat


class Table(msgspec.Struct, frozen=True):
    table: str
    name: str
    game: str
    options: dict[str, Any]
    status: Status
    seats: list[Seat]
    hands: int
    hands_played: int
    turn_seconds: int
    created: str
    version: int = 0  # the table version the entry reflects
    reason: str | None = None  # why a finished table closed (match_over, resigned, …)
    private: bool = False  # listed to nobody, joined with its invite code (invites.py)
    invite: str | None = None  # a private table's invite code: in its creator's Table only
    hints: bool = False  # a seat may ask GET /tables/{table}/hint (docs/api.md, "Hints")


class Tables(msgspec.Struct, frozen=True, omit_defaults=True):
    tables: list[Table]
    cursor: str | None = None  # the next lobby page's (?cursor=); absent on the last page


class NewTable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    game: str = "mighty-5"
    options: dict[str, Any] = {}
    name: TableName = ""
    hands: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 10
    turn_seconds: Annotated[int, msgspec.Meta(ge=0, le=3600)] = 60
    seat: SeatNo | None = 0
    bots: dict[str, str] = {}
    private: bool = False
    rated: bool = True  # an unrated table changes no rating (docs/ratings.md)
    # the share of their hands (percent) a player must have finished to take a seat
    min_reputation: Annotated[int, msgspec.Meta(ge=0, le=100)] = 0
    # learners may ask what a bot would play at their turn (docs/api.md, "Hints"): an
    # unrated table only (422 hints_on_rated_table)
    hints: bool = False


class JoinRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    seat: SeatNo | None = None
    invite: Annotated[str, msgspec.Meta(max_length=64)] | None = None  # a private table's code


class Joined(msgspec.Struct, frozen=True):
    seat: int


class Quickplay(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    game: str = "mighty-5"
    wait_seconds: Annotated[float, msgspec.Meta(ge=0, le=60)] = 10


class Seated(msgspec.Struct, frozen=True):
    table: str
    seat: int


class CommandRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: CommandId
    command: dict[str, Any]


class Accepted(msgspec.Struct, frozen=True):
    version: int


class View(msgspec.Struct, frozen=True):
    """A reader's view of a table (docs/api.md, "Playing"): these fields, over the game's own
    view of the hand as the reader may see it (docs/rules/mighty.md §8; its fields differ by
    game, so the schema names only these). Hands are numbered from 1: ``hand_no`` is the
    hand being played or last played (0 before the first deal)."""

    table: str
    version: int
    seat: int | None
    phase: str
    hand: list[str] | None
    to_act: int | None
    deadline: str | None
    legal: list[dict[str, Any]]
    status: str
    game: str | None
    seats: list[str | None]
    dealer: int
    hand_no: int
    hands_scored: int
    totals: list[int]
    commitment: str | None
    away: list[int] = []  # the seats whose players are away: a bot plays them until they are back
    # The seat's cards in the order to show them, where the hand decides it (Mighty: the
    # trump suit first); absent: sort ``hand`` by the cards' ``order`` (``GET /games``).
    hand_order: list[str] | None = None


class Choice(msgspec.Struct, frozen=True):
    value: Any
    label: str


class GameOption(msgspec.Struct, frozen=True, omit_defaults=True, rename={"minimum": "min", "maximum": "max"}):
    """A rule option ``POST /tables`` takes in ``options``: ``type`` is ``choice``,
    ``boolean`` (both with ``choices``) or ``number`` (with ``min`` and ``max``)."""

    name: str
    label: str
    type: str
    default: Any
    choices: list[Choice] | None = None
    minimum: int | None = None
    maximum: int | None = None


class GameCard(msgspec.Struct, frozen=True):
    """A card of the game's deck; sorting a hand by ``order`` shows it as the rules do.
    ``suit`` is null for a joker or the Fool; ``symbol`` names the picture on its face
    and ``red`` its colour (docs/api.md, "Games, labels and languages")."""

    card: str
    label: str
    suit: str | None
    rank: str
    order: int
    symbol: str = ""
    red: bool = False
    face_up: bool = False


class GameSuit(msgspec.Struct, frozen=True):
    """A suit: its name, its picture and colour; ``short`` marks a suit with no picture
    (no trump: "NT"), null for the others."""

    suit: str
    label: str
    symbol: str = ""
    red: bool = False
    short: str | None = None


class GamePhase(msgspec.Struct, frozen=True):
    phase: str
    label: str


class GameTerm(msgspec.Struct, frozen=True):
    """A name a view holds besides cards, suits and phases (Mitigati's combinations in
    ``declarations``) and its label in the reader's language."""

    term: str
    label: str


class GameGuide(msgspec.Struct, frozen=True):
    """A game's players' rules guide: its ``name`` (``/rules/guides/<lang>/<name>.md``) and title."""

    name: str
    title: str


class Game(msgspec.Struct, frozen=True):
    """Everything a client needs to show a game without knowing it (docs/api.md,
    "Games, labels and languages"). ``game``, ``card``, ``phase`` and option names never
    change; labels are text in the reader's language."""

    game: str
    family: str
    name: str
    seats: int
    options: list[GameOption]
    cards: list[GameCard]
    suits: list[GameSuit]
    phases: list[GamePhase]
    terms: list[GameTerm] = []
    guide: GameGuide | None = None


class Games(msgspec.Struct, frozen=True):
    games: list[Game]


class HandSummary(msgspec.Struct, frozen=True):
    hand: int
    status: Literal["finished", "playing", "abandoned"]
    scores: list[int] | None


class Hands(msgspec.Struct, frozen=True):
    hands: list[HandSummary]


class Deal(msgspec.Struct, frozen=True):
    """A finished hand's deal as its ``DealRevealed`` event shows it: the card order it
    was cut from and the salt, whose hash is the commitment made before the bidding
    (docs/rules/mighty.md §2): anyone can check the deal was fixed beforehand."""

    order: list[str]
    salt: str
    commitment: str


class Replay(msgspec.Struct, frozen=True):
    steps: list[dict[str, Any]]
    deal: Deal | None = None  # None: the hand was cut short by its table closing


class Verified(msgspec.Struct, frozen=True):
    ok: bool
    events: int
    problem: str | None
    hands: int = 0
    version: int | None = None  # the first bad event's version


class LedgerLine(msgspec.Struct, frozen=True):
    hand: int
    scores: list[int]


class Ledger(msgspec.Struct, frozen=True):
    hands: list[LedgerLine]
    totals: list[int]


class Health(msgspec.Struct, frozen=True):
    ok: bool
    problems: list[str] = []


# ---------------------------------------------------------------- languages (docs/i18n.md)


class PlayerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``PATCH /api/v1/players/me``: the caller's settings to change."""

    lang: str


class Me(msgspec.Struct, frozen=True):
    """``GET``/``PATCH /api/v1/players/me``: the caller's player and settings (``lang``:
    null until set)."""

    player: str
    name: str
    lang: str | None


class Language(msgspec.Struct, frozen=True):
    lang: str
    name: str  # the language's name in itself: 한국어, English, suomi, ...


class Languages(msgspec.Struct, frozen=True):
    """``GET /api/v1/i18n``: the languages the service speaks."""

    languages: list[Language]


class Translations(msgspec.Struct, frozen=True):
    """``GET /api/v1/i18n/{lang}``: a language's whole catalog, for a client's own text.
    ``plural_categories``: the CLDR categories its plural messages have (``key#one``...)."""

    lang: str
    name: str
    plural_categories: list[str]
    messages: dict[str, str]
