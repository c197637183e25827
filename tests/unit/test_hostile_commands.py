"""Hostile commands, through the Python API and the JSON path: each one is a typed
refusal (a stable code, a short sentence), and the table's stream, the partition feed and
the table's version are unchanged; nothing is logged as a fault, no traceback.

The tables are real (a Mighty table and a Mitigati table, each dealt and bidding) on the
Redis store over fakeredis (the append script as on a server), behind the very handler
the service runs (``table_handler``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fakeredis
import msgspec
import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.errors import MightyError
from domain.mighty.commands import Bid, CallFriend, ChangeTrump, Discard, Exchange, Pass, Play
from domain.mitigati.commands import Bargain, Declare
from domain.mitigati.commands import Discard as MitigatiDiscard
from domain.mitigati.commands import Play as MitigatiPlay
from domain.registry import GAMES
from domain.table import (
    CloseTable,
    CreateTable,
    DealHand,
    JoinSeat,
    LeaveSeat,
    Resign,
    StartTable,
    Submission,
    TableOnlyCommand,
)
from services.commands.dealer import deal_command
from services.commands.tables import TableHandler, submission_from_wire, table_handler
from services.players import seating
from services.store.redis_store import RedisEventStore

MIGHTY = ["ana", "bo", "cy", "di", "ed"]
MITIGATI = ["ana", "bo", "cy"]
MAX_MESSAGE = 320  # a sentence quoting at most 80 characters of a bad value
MILLION = 1_000_000


class Tables:
    """A Mighty table ``m1`` and a Mitigati table ``g1``, both dealt, bidding."""

    def __init__(self) -> None:
        self.store = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2))
        self.handler: TableHandler = table_handler(self.store)
        self.sent = 0
        for table_id, variant, players in (("m1", "mighty-5", MIGHTY), ("g1", "mitigati", MITIGATI)):
            self.send(table_id, Submission(CreateTable(variant=variant), "ana"))
            for submission in seating(players):
                self.send(table_id, submission)
            state, _ = self.handler.state_of(table_id)
            assert state.rules is not None
            self.send(table_id, Submission(deal_command(state.rules)))

    def send(self, table_id: str, command: Any) -> Any:
        self.sent += 1
        return self.handler.handle(table_id, command, command_id=f"cmd-{self.sent}")

    def snapshot(self, table_id: str) -> tuple[Any, ...]:
        feeds = [self.store.read_feed(p, count=10_000) for p in range(self.store.keys.partitions)]
        return self.store.read(table_id), self.store.head(table_id), feeds


@pytest.fixture(scope="module")
def tables() -> Tables:
    return Tables()


@pytest.fixture
def no_faults() -> Iterator[list[dict[str, Any]]]:
    with structlog.testing.capture_logs() as logs:
        yield logs
    faults = [line for line in logs if line.get("log_level") in ("error", "critical")
              or "traceback" in line or "exc_info" in line]
    assert faults == []


def refused(tables: Tables, table_id: str, command: Any) -> MightyError:
    """Send ``command``; it must be refused with a typed error, changing nothing."""
    before = tables.snapshot(table_id)
    with pytest.raises(MightyError) as caught:
        tables.send(table_id, command)
    error = caught.value
    assert error.code not in ("internal_error", "error") and error.code.islower()
    assert 0 < len(error.message) <= MAX_MESSAGE, error.message
    assert tables.snapshot(table_id) == before
    return error


def seat_of(tables: Tables, table_id: str) -> tuple[int, str]:
    """The seat to act at ``table_id`` and its player."""
    state, _ = tables.handler.state_of(table_id)
    assert state.hand is not None
    seat = state.game.to_act(state.hand)
    assert seat is not None
    player = state.seats[seat]
    assert player is not None
    return seat, player


# ------------------------------------------------------------ through the Python API

HUGE = "S" * MILLION
LONE = "\ud800"


def mighty_commands(seat: int) -> list[object]:
    """Each badly typed, out of bounds or not a command at all; ``seat`` is to act."""
    return [
        Bid(seat=seat, points=15.0, trump="S"),  # type: ignore[arg-type]
        Bid(seat=seat, points=True, trump="S"),
        Bid(seat=seat, points=10**30, trump="S"),
        Bid(seat=seat, points=-(10**30), trump="S"),
        Bid(seat=seat, points=float("nan"), trump="S"),  # type: ignore[arg-type]
        Bid(seat=seat, points=15, trump=5),  # type: ignore[arg-type]
        Bid(seat=seat, points=15, trump=HUGE),
        Bid(seat=seat, points=15, trump=None),  # type: ignore[arg-type]
        Bid(seat=seat, points=15, trump=("S",)),  # type: ignore[arg-type]
        Bid(seat=seat, points=15, trump=LONE),
        Bid(seat=seat, points=15, trump="S", v=10**20),
        Pass(seat="1"),  # type: ignore[arg-type]
        Pass(seat=None),  # type: ignore[arg-type]
        Pass(seat=1.5),  # type: ignore[arg-type]
        Pass(seat=[0]),  # type: ignore[arg-type]
        Pass(seat=2**64),
        Pass(seat=seat, v=True),
        Discard(seat=seat, cards=("AS",) * 100_000),
        Discard(seat=seat, cards="AS KS"),  # type: ignore[arg-type]
        Discard(seat=seat, cards=(1, 2, 3)),  # type: ignore[arg-type]
        Discard(seat=seat, cards=("A" * 100,)),
        Discard(seat=seat, cards=("AS",), take=(LONE,)),
        Exchange(seat=seat, take=1, discard=2),  # type: ignore[arg-type]
        ChangeTrump(seat=seat, trump={"S": 1}),  # type: ignore[arg-type]
        CallFriend(seat=seat, friend=5),  # type: ignore[arg-type]
        CallFriend(seat=seat, friend=("AS",) * 1000),
        Play(seat=seat, card=None),  # type: ignore[arg-type]
        Play(seat=seat, card="AS", joker_call="yes"),  # type: ignore[arg-type]
        Play(seat=seat, card="AS", suit=HUGE),
    ]


def table_commands() -> list[object]:
    return [
        JoinSeat(seat=True),
        JoinSeat(seat=1.0),  # type: ignore[arg-type]
        JoinSeat(seat="1"),  # type: ignore[arg-type]
        JoinSeat(seat=2**64),
        LeaveSeat(seat=-(2**70)),
        CloseTable(reason=5),  # type: ignore[arg-type]
        CloseTable(reason=LONE),
        CloseTable(reason="r" * 1000),
        CreateTable(name=5),  # type: ignore[arg-type]
        CreateTable(variant=5),  # type: ignore[arg-type]
        CreateTable(variant="m" * MILLION),
        CreateTable(name=LONE),
        CreateTable(options={"misdeal_claim": 1.5}),
        CreateTable(options={"x" * 100: True}),
        CreateTable(options={f"o{i}": True for i in range(100)}),
        CreateTable(options=[1, 2]),  # type: ignore[arg-type]
        CreateTable(options={"score": object()}),
        CreateTable(options={"score": {"nested": [1]}}),
        StartTable(first_dealer=1e9),  # type: ignore[arg-type]
        Resign(seat=2**100),
        DealHand(order=("AS",) * 100_000, salt="s"),
        DealHand(order=("AS",), salt=5),  # type: ignore[arg-type]
        DealHand(order=("AS",), salt="s" * 1000),
    ]


@pytest.mark.parametrize("n", range(len(mighty_commands(0))))
def test_a_badly_typed_mighty_command_from_python_is_refused_and_changes_nothing(
    tables: Tables, no_faults: list[Any], n: int
) -> None:
    seat, player = seat_of(tables, "m1")
    refused(tables, "m1", Submission(mighty_commands(seat)[n], player))  # type: ignore[arg-type]


@pytest.mark.parametrize("n", range(len(table_commands())))
def test_a_badly_typed_table_command_from_python_is_refused_and_changes_nothing(
    tables: Tables, no_faults: list[Any], n: int
) -> None:
    command = table_commands()[n]
    player = None if isinstance(command, DealHand | CloseTable) else "ana"
    for table_id in ("m1", "g1"):
        refused(tables, table_id, Submission(command, player))  # type: ignore[arg-type]


def test_the_issue_s_examples_are_malformed_commands_naming_the_field(
    tables: Tables, no_faults: list[Any]
) -> None:
    seat, player = seat_of(tables, "m1")
    for command, field in ((Bid(seat=seat, points=15.0, trump="S"), "points"),  # type: ignore[arg-type]
                           (JoinSeat(seat=True), "seat"), (CloseTable(reason=5), "reason")):  # type: ignore[arg-type]
        error = refused(tables, "m1", Submission(command, None if field == "reason" else player))
        assert error.code == "malformed_command" and f"$.{field}" in error.message
    error = refused(tables, "m1", Submission(JoinSeat(seat=0), 123))  # type: ignore[arg-type]
    assert error.code == "malformed_command" and "$.player" in error.message


@pytest.mark.parametrize("player", [123, LONE, "x" * MILLION, "", b"ana", ["ana"]],
                         ids=["int", "lone-surrogate", "a-million", "empty", "bytes", "list"])
def test_a_bad_player_name_is_refused_and_changes_nothing(
    tables: Tables, no_faults: list[Any], player: object
) -> None:
    seat, _ = seat_of(tables, "m1")
    refused(tables, "m1", Submission(Pass(seat=seat), player))  # type: ignore[arg-type]


NOT_SUBMISSIONS: dict[str, object] = {
    "object": object(), "none": None, "dict": {"type": "pass", "seat": 0}, "str": "pass",
    "bare-command": Pass(seat=0), "bare-create": CreateTable(),
    "of-an-object": Submission(object(), "ana"),  # type: ignore[arg-type]
    "of-none": Submission(None, "ana"),  # type: ignore[arg-type]
    "of-a-dict": Submission({"type": "pass", "seat": 0}, "ana"),  # type: ignore[arg-type]
    "of-a-submission": Submission(Submission(Pass(seat=0)), "ana"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("command", NOT_SUBMISSIONS.values(), ids=NOT_SUBMISSIONS.keys())
def test_what_is_not_a_submission_of_a_command_is_refused(
    tables: Tables, no_faults: list[Any], command: object
) -> None:
    assert refused(tables, "m1", command).code == "malformed_command"


def test_the_other_game_s_commands_are_refused_at_each_table(tables: Tables, no_faults: list[Any]) -> None:
    seat, player = seat_of(tables, "m1")
    for command in (Bargain(seat=seat, action="pass"), MitigatiPlay(seat=seat, card="AS"),
                    MitigatiDiscard(seat=seat, cards=("1D",)), Declare(seat=seat, combinations=())):
        assert refused(tables, "m1", Submission(command, player)).code == "malformed_command"
    seat, player = seat_of(tables, "g1")
    for other in (Bid(seat=seat, points=15, trump="S"), Pass(seat=seat), Play(seat=seat, card="AS"),
                  Discard(seat=seat, cards=("AS",))):
        assert refused(tables, "g1", Submission(other, player)).code == "malformed_command"


@pytest.mark.parametrize("command", [
    Bargain(seat=0, action="steal"),  # type: ignore[arg-type]
    Bargain(seat=0, action="pay", amount=2.5),  # type: ignore[arg-type]
    Bargain(seat=0, action="pay", amount=10**40),
    Declare(seat=0, combinations=("x",)),  # type: ignore[arg-type]
    Declare(seat=0, combinations=("kings",) * 100),
    MitigatiDiscard(seat=0, cards=("1D",) * 100_000),
    MitigatiPlay(seat=0, card=7),  # type: ignore[arg-type]
], ids=["action", "amount-float", "amount-huge", "combination", "combinations-100", "cards-100k", "card-int"])
def test_a_badly_typed_mitigati_command_is_refused_and_changes_nothing(
    tables: Tables, no_faults: list[Any], command: msgspec.Struct
) -> None:
    seat, player = seat_of(tables, "g1")
    refused(tables, "g1", Submission(msgspec.structs.replace(command, seat=seat), player))  # type: ignore[arg-type]


def test_a_command_to_an_unknown_table_is_refused_and_creates_nothing(
    tables: Tables, no_faults: list[Any]
) -> None:
    for command in (Pass(seat=0), JoinSeat(seat=0), CloseTable(), Bargain(seat=0, action="pass")):
        assert refused(tables, "nope", Submission(command, "ana")).code == "unknown_table"
    assert tables.store.read("nope") == [] and "nope" not in tables.store.table_ids()
    with pytest.raises(MightyError) as caught:
        tables.send("no table/here", Submission(Pass(seat=0), "ana"))
    assert caught.value.code == "bad_table_id"


# ------------------------------------------------------------ through the JSON path

JSON_COMMANDS: list[tuple[str, bytes | str | dict[str, Any] | object]] = [
    ("m1", {"type": "bid", "seat": 0, "points": 15.0, "trump": "S"}),
    ("m1", b'{"type":"bid","seat":0,"points":1e400,"trump":"S"}'),
    ("m1", b'{"type":"bid","seat":0,"points":123456789012345678901234567890,"trump":"S"}'),
    ("m1", {"type": "join", "seat": True}),
    ("m1", {"type": "x" * MILLION}),
    ("m1", {"type": "y" * 2000}),
    ("m1", b'{"type":"pass","seat":0'),
    ("m1", b'{"type":"close","reason":"\\ud800"}'),
    ("m1", b'{"type":"close","reason":"\xed\xa0\x80"}'),
    ("m1", {"type": "discard", "seat": 0, "cards": ["AS"] * 100_000}),
    ("m1", {"type": "discard", "seat": 0, "cards": ["AS"] * 200}),
    ("m1", {"type": "bargain", "seat": 0, "action": "pass"}),
    ("g1", {"type": "bid", "seat": 0, "points": 15, "trump": "S"}),
    ("m1", {"type": "pass", "seat": 0, "v": -1}),
    ("m1", {"type": "create_table", "options": {"a": {"b": 1}}}),
    ("m1", {"type": "pass", "seat": {1, 2}}),
    ("m1", {1: "pass"}),
    ("m1", []),
    ("m1", 5),
    ("m1", None),
    ("m1", b"[]"),
    ("m1", "\ud800"),
    ("g1", {"type": "bargain", "seat": 0, "action": "pay", "amount": 2**70}),
    ("g1", {"type": "declare", "seat": 0, "combinations": ["kings"] * 100}),
]


@pytest.mark.parametrize("n", range(len(JSON_COMMANDS)))
def test_a_malformed_json_command_is_refused_and_changes_nothing(
    tables: Tables, no_faults: list[Any], n: int
) -> None:
    table_id, raw = JSON_COMMANDS[n]
    game = "mitigati" if table_id == "g1" else "mighty"
    before = tables.snapshot(table_id)
    with pytest.raises(MightyError) as caught:
        tables.send(table_id, submission_from_wire(raw, "ana", game))  # type: ignore[arg-type]
    assert caught.value.code in ("malformed_command", "payload_too_large")
    assert len(caught.value.message) <= MAX_MESSAGE
    assert tables.snapshot(table_id) == before


def test_the_malformed_commands_number_at_least_fifty() -> None:
    python = len(mighty_commands(0)) + 2 * len(table_commands()) + 4 + 6 + len(NOT_SUBMISSIONS) + 8 + 7 + 5
    assert python + len(JSON_COMMANDS) >= 50


# ------------------------------------------------------------ any field, any value

ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=200)
    | st.binary(max_size=20) | st.just("\udc80") | st.just(LONE * 3) | st.integers(min_value=2**63),
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
COMMAND_TYPES: list[type[msgspec.Struct]] = sorted(
    {*TableOnlyCommand.__args__, *(cls for game in GAMES.values() for cls in game.command_types)},  # type: ignore[attr-defined]
    key=lambda cls: (cls.__module__, cls.__name__),
)


@st.composite
def hostile(draw: st.DrawFn) -> msgspec.Struct:
    """A command of any game with at least one field set to an arbitrary value."""
    cls = draw(st.sampled_from(COMMAND_TYPES))
    names = [f for f in cls.__struct_fields__]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    values = {name: draw(ANY_VALUE) for name in chosen}
    for field in msgspec.structs.fields(cls):  # the other required fields: a plausible value
        if field.required and field.name not in values:
            values[field.name] = 0 if field.name in ("seat", "first_dealer", "points") else "AS"
    return cls(**values)


def _in_schema(command: msgspec.Struct) -> bool:
    """Whether ``command`` holds only values of its schema (then the rules decide it)."""
    from domain import codec

    submission = Submission(command, "ana")  # type: ignore[arg-type]
    try:
        codec.checked_submission(submission, codec.encode_submission(submission))
    except MightyError:
        return False
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=hostile(), table_id=st.sampled_from(["m1", "g1"]), player=st.sampled_from(["ana", "bo", None]))
def test_a_command_of_arbitrary_field_values_is_refused_typed_or_decided_never_a_fault(
    tables: Tables, command: msgspec.Struct, table_id: str, player: str | None
) -> None:
    """Out of its schema it is refused (``malformed_command`` or ``payload_too_large``)
    and changes nothing; in it (a value that happens to be valid), the rules decide."""
    before = tables.snapshot(table_id)
    with structlog.testing.capture_logs() as logs:
        try:
            tables.send(table_id, Submission(command, player))  # type: ignore[arg-type]
        except MightyError as error:
            assert error.code != "internal_error" and len(error.message) <= MAX_MESSAGE
            if not _in_schema(command):
                assert error.code in ("malformed_command", "payload_too_large")
            assert tables.snapshot(table_id) == before
        else:
            assert _in_schema(command)
    assert not [line for line in logs if line.get("log_level") == "error"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tag=st.sampled_from(sorted({cls.__struct_config__.tag for cls in COMMAND_TYPES})),  # type: ignore[attr-defined]
       fields=st.dictionaries(st.sampled_from(["seat", "points", "trump", "cards", "card", "take", "discard",
                                               "friend", "action", "amount", "combinations", "variant",
                                               "options", "name", "reason", "order", "salt", "v",
                                               "first_dealer", "suit", "joker_call", "lead_suit"]),
                              ANY_VALUE, min_size=1),
       table_id=st.sampled_from(["m1", "g1"]))
def test_a_json_command_of_arbitrary_field_values_is_refused_typed_or_decided_never_a_fault(
    tables: Tables, tag: str, fields: dict[str, Any], table_id: str
) -> None:
    game = "mitigati" if table_id == "g1" else "mighty"
    before = tables.snapshot(table_id)
    raw: dict[str, Any] = {**fields, "type": tag}
    with structlog.testing.capture_logs() as logs:
        try:
            tables.send(table_id, submission_from_wire(raw, "ana", game))
        except MightyError as error:
            assert error.code != "internal_error" and len(error.message) <= MAX_MESSAGE
            assert tables.snapshot(table_id) == before
    assert not [line for line in logs if line.get("log_level") == "error"]


# ------------------------------------------------------------ faults of the rules


def test_an_exception_of_the_rules_is_internal_error_logged_with_its_traceback_and_nothing_written(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    from domain import table as table_module

    def broken(state: Any, submission: Submission) -> list[Any]:
        raise ZeroDivisionError("the rules divided by zero")

    seat, player = seat_of(tables, "m1")
    before = tables.snapshot("m1")
    with monkeypatch.context() as patched, structlog.testing.capture_logs() as logs:
        patched.setattr(table_module, "decide", broken)
        with pytest.raises(MightyError) as caught:
            tables.send("m1", Submission(Pass(seat=seat), player))
    assert caught.value.code == "internal_error" and "Table m1" in caught.value.message
    assert tables.snapshot("m1") == before
    faults = [line for line in logs if line["event"] == "internal_error"]
    assert faults  # once, or twice when the cached state was caught up and decided again
    fault = faults[0]
    assert fault["log_level"] == "error" and fault["table"] == "m1" and "Pass(seat=" in fault["command"]
    assert "ZeroDivisionError: the rules divided by zero" in fault["traceback"]
    assert "Traceback (most recent call last)" in fault["traceback"]
    tables.send("m1", Submission(Pass(seat=seat), player))  # the process goes on: the next is decided
    assert tables.store.head("m1").version == before[1].version + 1


def test_an_event_of_the_rules_that_would_not_decode_is_internal_error_and_never_stored(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    from domain import table as table_module
    from domain.table import TableClosed

    def undecodable(state: Any, submission: Submission) -> list[Any]:
        return [TableClosed(reason=5)]  # type: ignore[arg-type]

    before = tables.snapshot("g1")
    with monkeypatch.context() as patched, structlog.testing.capture_logs() as logs:
        patched.setattr(table_module, "decide", undecodable)
        with pytest.raises(MightyError) as caught:
            tables.send("g1", Submission(CloseTable()))
    assert caught.value.code == "internal_error" and "TableClosed" in caught.value.message
    assert tables.snapshot("g1") == before
    assert {line["table"] for line in logs if line["event"] == "internal_error"} == {"g1"}


def test_the_log_line_of_a_refused_command_cuts_a_huge_bad_seat(tables: Tables) -> None:
    with structlog.testing.capture_logs() as logs:
        handler = table_handler(tables.store)  # its logger bound under the capture
        with pytest.raises(MightyError):
            handler.handle("m1", Submission(Pass(seat="7" * MILLION), "ana"), command_id="huge")  # type: ignore[arg-type]
    (line,) = [line for line in logs if line["event"] == "command"]
    assert line["outcome"] == "refused:payload_too_large" and len(line["seat"]) <= MAX_MESSAGE
