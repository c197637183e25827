"""How projection documents are stored (projections/docs.py): MessagePack, read back in
either encoding, so a document an earlier release wrote as JSON still reads during a
rolling upgrade; the turns stay JSON; what a client is sent does not change."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from domain.registry import DEFAULT
from projections import new_projection, replay
from projections.directory import DIRECTORY_DOC, DirectoryEntry, decode_entry
from projections.docs import DocKey, as_text, decode, encode, is_json, is_msgpack, same_document
from projections.ledger import PLAYERS_DOC, decode_player, decode_table, table_name
from projections.ratings import (
    Calibration,
    PlayerRating,
    RatedHand,
    Ratings,
    Reputation,
    decode_calibration,
    decode_cursor,
    decode_hand,
    decode_rating,
    decode_reputation,
)
from projections.turns import TURNS_DOC, decode_turn
from projections.views import SPECTATOR, ViewsProjection, view_name
from services.bots.worker import SeatReader
from services.gateway.views import compacted, view_document, view_frame
from services.projection.kinds import _decode_version
from services.projection.notify import _version
from tests.unit.test_projections import interleave, play_table

PLAYERS = ["ana", "bo", "cy", "di", "ed"]


def _as_json(data: bytes) -> bytes:
    """A MessagePack document as an earlier release wrote it: JSON, field for field."""
    return msgspec.json.encode(msgspec.msgpack.decode(data))


def _docs(kind: str, close: bool = True, seed: int = 1) -> dict[DocKey, bytes]:
    entries = play_table("t1", PLAYERS, 2, random.Random(seed), close=close)
    return replay(new_projection(kind), entries)


def _hand() -> RatedHand:
    return RatedHand(at_ms=1_000, table_id="t1", hand_no=0, rules="mighty-5", rated=True,
                     players=tuple(PLAYERS), away=(False,) * 5, sides=((0, 1), (2, 3, 4)), ranks=(0, 1))


# ---------------------------------------------------------------- written as MessagePack


@pytest.mark.parametrize("kind", ["views", "ledger", "directory", "ratings"])
def test_every_projection_document_is_written_as_messagepack_but_the_turns(kind: str) -> None:
    docs = _docs(kind, close=False)
    assert docs
    for key, data in docs.items():
        if key.name == TURNS_DOC:
            assert is_json(data), key  # handed on as JSON (projections/docs.py)
        elif key.name != "ratings:hours":  # a marker, "1": no document
            assert is_msgpack(data) and not is_json(data), key


def test_a_view_written_as_messagepack_is_a_third_smaller_than_its_json() -> None:
    docs = _docs("views", close=False)
    spectator = docs[DocKey(view_name("t1", SPECTATOR))]
    seat = docs[DocKey(view_name("t1", "0"))]
    assert len(spectator) < 0.8 * len(_as_json(spectator))
    assert len(seat) < 0.85 * len(_as_json(seat))


def test_the_turns_are_written_as_json_and_read_so() -> None:
    docs = replay(ViewsProjection(), play_table("t1", PLAYERS, 1, random.Random(2), close=False))
    turn = docs[DocKey(TURNS_DOC, "t1")]
    assert turn.startswith(b"{") and decode_turn(turn).table_id == "t1"


# ---------------------------------------------------------------- a JSON one still reads


def test_a_json_view_from_an_earlier_release_reads_as_its_messagepack_does() -> None:
    docs = _docs("views", close=False, seed=3)
    for reader in [*map(str, range(5)), SPECTATOR]:
        stored = docs[DocKey(view_name("t1", reader))]
        old = _as_json(stored)
        assert old.startswith(b"{")
        assert decode(old) == decode(stored)
        assert _decode_version(old).version == _decode_version(stored).version > 0  # the worker's restore
        assert _version(old).version == _version(stored).version  # a follower's cursor
        assert compacted(old) is compacted(stored) is False


def test_the_gateway_sends_the_same_json_whichever_encoding_the_view_was_stored_in() -> None:
    docs = _docs("views", close=False, seed=4)
    for reader in [*map(str, range(5)), SPECTATOR]:
        stored = docs[DocKey(view_name("t1", reader))]
        document = view_document(stored)
        assert view_document(_as_json(stored)) == document
        assert view_frame(document).startswith(b'{"type":"view"')
        assert view_frame(document) == view_frame(view_document(_as_json(stored)))


def test_a_closed_tables_seat_view_stored_as_json_is_still_compacted() -> None:
    # a closed table's seat view is a last word now (announced, not kept); an earlier
    # release kept it, compacted, as JSON: it reads so until a rebuild or the archive
    projection = new_projection("views")
    for table_id, version, event in play_table("t1", PLAYERS, 2, random.Random(5), close=True):
        projection.apply(table_id, version, event)
    docs = projection.flush()
    seat, public = docs[DocKey(view_name("t1", "1"))], docs[DocKey(view_name("t1", SPECTATOR))]
    assert seat is not None and public is not None
    assert compacted(seat) and compacted(_as_json(seat))
    # its last hand comes from the spectator's view, in either encoding
    assert view_document(_as_json(seat), _as_json(public)) == view_document(seat, public)


def test_a_bot_reads_a_seat_view_stored_in_either_encoding() -> None:
    docs = _docs("views", close=False, seed=6)
    reader = SeatReader()
    reader._decoders = {}
    for seat in range(5):
        stored = docs[DocKey(view_name("t1", str(seat)))]
        assert reader._decoder(DEFAULT).decode(_as_json(stored)) == reader._decoder(DEFAULT).decode(stored)


def test_a_json_ledger_from_an_earlier_release_reads_as_its_messagepack_does() -> None:
    docs = _docs("ledger", close=False, seed=7)
    table = docs[DocKey(table_name("t1"))]
    assert decode_table(table).hands and decode_table(_as_json(table)) == decode_table(table)
    players = [data for key, data in docs.items() if key.name == PLAYERS_DOC]
    assert players
    for data in players:
        assert decode_player(_as_json(data)) == decode_player(data)


def test_a_json_directory_entry_from_an_earlier_release_reads_as_its_messagepack_does() -> None:
    docs = _docs("directory", close=False, seed=8)
    data = docs[DocKey(DIRECTORY_DOC, "t1")]
    assert decode_entry(_as_json(data)) == decode_entry(data) != DirectoryEntry(table_id="t1")


def test_json_ratings_documents_from_an_earlier_release_read_as_their_messagepack_do() -> None:
    ratings = Ratings()
    ratings.apply(_hand())
    docs = ratings.flush()
    assert docs.ratings and docs.reputations and docs.cursor is not None
    for (_, player), data in docs.ratings.items():
        read = decode_calibration if player.startswith("calibration:") else decode_rating
        assert read(_as_json(data)) == read(data)
    for data in docs.reputations.values():
        assert decode_reputation(_as_json(data)) == decode_reputation(data)
    assert decode_cursor(_as_json(docs.cursor)) == decode_cursor(docs.cursor) == (1_000, "t1", 0)
    hand = encode(_hand())
    assert decode_hand(_as_json(hand)) == decode_hand(hand) == _hand()


def _as_map(hand: RatedHand, json: bool = False) -> bytes:
    """A hand as releases before rows stored it: a map of its fields by name."""
    fields = msgspec.structs.asdict(hand)
    return msgspec.json.encode(fields) if json else msgspec.msgpack.encode(fields)


def test_a_rated_hand_is_stored_as_a_row_and_read_from_the_map_an_earlier_release_stored() -> None:
    hand = msgspec.structs.replace(_hand(), declarers=(1,))
    row = encode(hand)
    assert row[:1] == bytes([0x90 + len(hand.__struct_fields__)])  # an array: no field names
    assert len(row) * 3 < len(_as_map(hand)) * 2
    for stored in (row, _as_map(hand), _as_map(hand, json=True), _as_json(row)):
        assert decode_hand(stored) == hand
    before_declarers = msgspec.msgpack.encode({k: v for k, v in msgspec.structs.asdict(hand).items() if k != "declarers"})
    assert decode_hand(before_declarers) == msgspec.structs.replace(hand, declarers=())
    # the check takes the map as the row it is, and no other
    assert same_document(_as_map(hand), row) and same_document(_as_map(hand, json=True), row)
    assert not same_document(_as_map(msgspec.structs.replace(hand, ranks=(1, 0))), row)
    assert not same_document(b"\x8a\xff", row)  # damaged
    assert not same_document(row, _as_map(hand))  # the other way round: a row where a map is rebuilt



def test_the_check_takes_a_stored_map_as_the_row_only_when_it_reads_as_that_row() -> None:
    """Not by its values in order: a map whose names are no fields of the row (damaged:
    the rater cannot read it) is a difference; one whose names are in another order, or
    that lacks a field with a default the row holds as its default, is the same hand."""
    hand = msgspec.structs.replace(_hand(), declarers=())
    row = encode(hand)
    fields = msgspec.structs.asdict(hand)
    renamed = msgspec.msgpack.encode({f"x{name}": value for name, value in fields.items()})
    with pytest.raises(msgspec.ValidationError):
        decode_hand(renamed)
    assert not same_document(renamed, row)
    reordered = msgspec.json.encode(dict(reversed(list(fields.items()))))
    assert decode_hand(reordered) == hand and same_document(reordered, row)
    before_declarers = msgspec.msgpack.encode({k: v for k, v in fields.items() if k != "declarers"})
    assert decode_hand(before_declarers) == hand and same_document(before_declarers, row)
    extra = msgspec.msgpack.encode({**fields, "more": 1})
    assert not same_document(extra, row)

def test_a_ratings_table_document_stored_as_json_restores_the_same_table() -> None:
    """Its ledger is embedded raw: JSON in a JSON document, MessagePack in a MessagePack one."""
    docs = _docs("ratings", close=False, seed=9)
    stored = docs[DocKey("ratings:t:t1")]
    fresh, old = new_projection("ratings"), new_projection("ratings")
    fresh.restore("t1", stored)  # type: ignore[arg-type]
    old.restore("t1", _as_json(stored))  # type: ignore[arg-type]
    assert fresh.tables == old.tables  # type: ignore[union-attr]


@pytest.mark.parametrize(("value", "kind"), [(PlayerRating(player="a", history=((1, 2.5),)), PlayerRating),
                                             (Reputation(player="b"), Reputation), (Calibration(), Calibration),
                                             ((5, "t", 1), tuple[int, str, int])])
def test_decode_reads_a_document_of_either_encoding_as_its_type(value: Any, kind: Any) -> None:
    assert decode(encode(value), kind) == value == decode(msgspec.json.encode(value), kind)


# ---------------------------------------------------------------- rebuild, check


def test_a_rebuild_gives_the_live_workers_bytes_however_the_feed_was_batched() -> None:
    tables = [play_table(f"t{n}", PLAYERS, 1, random.Random(n), close=n % 2 == 0) for n in range(3)]
    feed = interleave(tables, random.Random(1))
    for kind in ["views", "ledger", "directory", "ratings"]:
        live = replay(new_projection(kind), feed, batch=7)
        rebuilt: dict[DocKey, bytes] = {}
        for entries in tables:  # table by table, as a rebuild folds the streams
            rebuilt.update(replay(new_projection(kind), entries))
        if kind == "ledger":  # a player's ledger is a sum over tables: compared on its own
            live = {k: v for k, v in live.items() if k.name != PLAYERS_DOC}
            rebuilt = {k: v for k, v in rebuilt.items() if k.name != PLAYERS_DOC}
        assert live == rebuilt, kind


def test_the_check_takes_a_json_document_of_an_earlier_release_as_the_same_document() -> None:
    docs = _docs("views", close=False, seed=10)
    for key, data in docs.items():
        assert same_document(data, data)
        assert key.name == TURNS_DOC or same_document(_as_json(data), data)
    stored = docs[DocKey(view_name("t1", "2"))]
    other = docs[DocKey(view_name("t1", "3"))]
    assert not same_document(_as_json(other), stored)
    assert not same_document(other, stored) and not same_document(None, stored) and not same_document(stored, None)
    assert same_document(None, None)


def test_a_document_shows_as_json_text_in_a_check() -> None:
    docs = _docs("views", close=False, seed=11)
    stored = docs[DocKey(view_name("t1", SPECTATOR))]
    assert as_text(stored) == _as_json(stored).decode()
    assert as_text(_as_json(stored)) == _as_json(stored).decode()
    assert as_text(b"1") == "1"  # ratings:hours' marker
    assert as_text(b"\x85\xff") == repr(b"\x85\xff")  # damaged: its bytes
