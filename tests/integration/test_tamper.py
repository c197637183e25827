"""The tamper drills, against a real redis-server: every edit of a table's stream, meta,
command ids or feed fails ``mighty verify``, naming the first bad entry; a faithful table
verifies (its feed trimmed or not); the handler refuses a table whose meta and stream
disagree with ``store_corrupt`` instead of wedging; a forged feed entry fails ``mighty
projections check``, and ``projections rebuild`` refuses to make it permanent."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
import redis

from projections import KINDS
from services.commands.tables import table_handler
from services.players import next_submission
from services.redis_runtime import PrivateRedis
from services.store import record
from services.store.base import GENESIS, HASH_EVERY, HASH_V1, stored_hash
from services.store.compact import PACKED_WITH, as_read, pack, unpack
from services.store.errors import StoreCorrupt
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, stored_event
from tests.integration.test_audit_cli import mighty, play, rewrite_stream
from tests.integration.workers.support import applied, feed_length, in_process_worker, store_of
from tests.stream_entries import as_fields

pytestmark = pytest.mark.integration

TABLE = "tamp1"
SPACE = KeySpace()  # the CLI's: the default partitions and namespace
Entries = list[tuple[bytes, dict[bytes, bytes]]]


@pytest.fixture
def played(redis_client: redis.Redis) -> Entries:
    play(redis_client, TABLE, hands=2)
    return as_fields(redis_client.xrange(SPACE.table(TABLE).events))  # six fields each: tests/stream_entries.py


def verdict(server: PrivateRedis) -> dict[str, Any]:
    done = mighty(server, "verify", TABLE)
    report: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if report["ok"] else 1), done.stderr
    return report


def first_bad(server: PrivateRedis) -> tuple[int, str]:
    report = verdict(server)
    assert report["ok"] is False, report
    return report["first_bad"]["version"], report["first_bad"]["problem"]


def hashes(entries: Entries) -> list[str]:
    """Each entry's hash as a reader takes it: stored (an anchor's, or any an older release
    stored), else derived from the one before."""
    out: list[str] = []
    for _, fields in entries:
        out.append(stored_event(fields, out[-1] if out else GENESIS).hash)
    return out


def rechained(entries: Entries, start: int = 0) -> Entries:
    """The entries with versions, hashes (and the links of entries that store one) recomputed
    from ``start`` on, as a forger with write access would (each by the hash version it names,
    each hash stored)."""
    out = list(entries[:start])
    prev = hashes(out)[-1] if out else GENESIS
    for version, (_, fields) in enumerate(entries[start:], start=start + 1):
        renumbered = {**fields, b"v": str(version).encode()}
        if b"p" in fields:
            renumbered[b"p"] = prev.encode()
        digest = stored_hash(prev, stored_event(renumbered, prev))
        assert digest is not None
        out.append((f"0-{version}".encode(), {**renumbered, b"h": digest.encode()}))
        prev = digest
    return out


def set_meta_to_stream(client: redis.Redis, entries: Entries) -> None:
    """The forger also rewrites the table's meta to the rewritten stream's end."""
    client.hset(SPACE.table(TABLE).meta, mapping={"v": entries[-1][1][b"v"], "h": hashes(entries)[-1]})


def same_json_other_bytes(fields: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """The event edited as its JSON (and stored packed again, as the store would)."""
    return {**fields, b"e": pack(unpack(fields[b"e"])[:-1] + b" }")}


def packed_bytes_edited(fields: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """One byte of the packed event changed where it is stored: one in its middle (the
    last byte's high bits may be the deflate stream's padding, which no reader sees: an
    edit there changed nothing, and the drill found nothing once in a few runs)."""
    stored = fields[b"e"]
    assert stored[0] == PACKED_WITH and len(stored) > 4, "the drill needs a packed event"
    for at in range(len(stored) // 2, len(stored)):
        edited = stored[:at] + bytes((stored[at] ^ 0x5A,)) + stored[at + 1:]
        if as_read(edited) != unpack(stored):  # a reader sees the change
            return {**fields, b"e": edited}
    raise AssertionError("no edit of the packed event's bytes changed what a reader sees")


def forged_score(fields: dict[bytes, bytes]) -> dict[bytes, bytes]:
    event = msgspec.json.decode(unpack(fields[b"e"]))
    event["scores"] = [*event["scores"][1:], event["scores"][0]]
    return {**fields, b"e": pack(msgspec.json.encode(event))}


def scored_index(entries: Entries) -> int:
    return next(i for i, (_, f) in enumerate(entries) if b'"type":"hand_scored"' in unpack(f[b"e"]))


# ------------------------------------------------------------ a faithful table


def test_a_faithful_table_verifies_with_its_feed_and_with_its_feed_trimmed(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries
) -> None:
    report = verdict(redis_server)
    assert report["ok"] is True and report["events"] == len(played)
    redis_client.xtrim(SPACE.feed(SPACE.partition_of(TABLE)), maxlen=3)  # as the workers trim it
    assert verdict(redis_server)["ok"] is True
    everything = mighty(redis_server, "verify", "--all")
    assert everything.returncode == 0 and json.loads(everything.stdout.splitlines()[-1])["bad"] == []


def with_links(entries: Entries) -> Entries:
    """The entries as releases before the link was dropped stored them: each with its
    previous hash (``p``) and its own hash, as hex."""
    prev = GENESIS
    out: Entries = []
    for (entry_id, fields), digest in zip(entries, hashes(entries), strict=True):
        out.append((entry_id, {**fields, b"h": digest.encode(), b"p": prev.encode()}))
        prev = digest
    return out


def test_a_table_stored_with_links_by_an_older_release_verifies(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries
) -> None:
    rewrite_stream(redis_client, SPACE.table(TABLE).events, with_links(played))
    report = verdict(redis_server)
    assert report["ok"] is True and report["events"] == len(played)


# ------------------------------------------------------------ the drills


def edit_bytes(client: redis.Redis, entries: Entries) -> int:
    k = 25
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], same_json_other_bytes(entries[k][1]))] + entries[k + 1:])
    return k + 1


def edit_packed_bytes(client: redis.Redis, entries: Entries) -> int:
    k = 25
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], packed_bytes_edited(entries[k][1]))] + entries[k + 1:])
    return k + 1


def edit_and_rechain(client: redis.Redis, entries: Entries) -> int:
    k = scored_index(entries)
    edited = entries[:k] + [(entries[k][0], forged_score(entries[k][1]))] + entries[k + 1:]
    rewrite_stream(client, SPACE.table(TABLE).events, rechained(edited, k))
    return k + 1


def edit_rechain_and_meta(client: redis.Redis, entries: Entries) -> int:
    k = 25
    edited = rechained(entries[:k] + [(entries[k][0], same_json_other_bytes(entries[k][1]))] + entries[k + 1:], k)
    rewrite_stream(client, SPACE.table(TABLE).events, edited)
    set_meta_to_stream(client, edited)
    return k + 1  # the feed still holds the event as appended


def edit_rechain_feed_trimmed(client: redis.Redis, entries: Entries) -> int:
    """With the feed trimmed past it, the edit is caught by the meta's head hash: the
    version named is the stream's last (the one the meta disagrees with)."""
    k = 25
    client.xtrim(SPACE.feed(SPACE.partition_of(TABLE)), maxlen=0)
    edited = rechained(entries[:k] + [(entries[k][0], same_json_other_bytes(entries[k][1]))] + entries[k + 1:], k)
    rewrite_stream(client, SPACE.table(TABLE).events, edited)
    return len(entries)


def insert(client: redis.Redis, entries: Entries) -> int:
    k = 30
    renumbered = [(f"0-{n}".encode(), {**f, b"v": str(n).encode()})
                  for n, (_, f) in enumerate(entries[k:], start=k + 2)]
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(f"0-{k + 1}".encode(), dict(entries[k][1]))] + renumbered)
    return k + 2


def insert_and_rechain(client: redis.Redis, entries: Entries) -> int:
    k = 30
    with_copy = entries[:k + 1] + [entries[k]] + entries[k + 1:]
    edited = rechained(with_copy, k + 1)
    rewrite_stream(client, SPACE.table(TABLE).events, edited)
    set_meta_to_stream(client, edited)
    return k + 2


def delete_middle(client: redis.Redis, entries: Entries) -> int:
    client.xdel(SPACE.table(TABLE).events, entries[30][0])
    return 32


def delete_last(client: redis.Redis, entries: Entries) -> int:
    client.xdel(SPACE.table(TABLE).events, entries[-1][0])
    return len(entries)


def delete_last_commands(client: redis.Redis, entries: Entries) -> int:
    commands = [f[b"c"] for _, f in entries]
    cut = commands.index(commands[-3])  # the first event of the third command from the end
    for entry_id, _ in entries[cut:]:
        client.xdel(SPACE.table(TABLE).events, entry_id)
    return cut + 1


def reorder(client: redis.Redis, entries: Entries) -> int:
    """Two entries swapped. A record's version is its entry id (it stores no ``v``), so the
    entry at 0-41 holding event 42 is the first bad one (releases that stored ``v`` read
    that entry as version 42 and named it, not following 40)."""
    k = 40
    swapped = [(entries[k][0], entries[k + 1][1]), (entries[k + 1][0], entries[k][1])]
    rewrite_stream(client, SPACE.table(TABLE).events, entries[:k] + swapped + entries[k + 2:])
    return k + 1


def reorder_and_rechain(client: redis.Redis, entries: Entries) -> int:
    k = next(i for i in range(40, len(entries) - 1) if entries[i][1][b"c"] != entries[i + 1][1][b"c"]
             and b"card_played" in unpack(entries[i][1][b"e"]) and b"card_played" in unpack(entries[i + 1][1][b"e"]))
    swapped = entries[:k] + [entries[k + 1], entries[k]] + entries[k + 2:]
    edited = rechained(swapped, k)
    rewrite_stream(client, SPACE.table(TABLE).events, edited)
    set_meta_to_stream(client, edited)
    return k + 1


def edit_command_id(client: redis.Redis, entries: Entries) -> int:
    k = 20
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], {**entries[k][1], b"c": b"forged-id"})] + entries[k + 1:])
    return k + 1


def edit_command_id_and_rechain(client: redis.Redis, entries: Entries) -> int:
    k = 20
    edited = rechained(entries[:k] + [(entries[k][0], {**entries[k][1], b"c": entries[k - 1][1][b"c"]})]
                       + entries[k + 1:], k)
    rewrite_stream(client, SPACE.table(TABLE).events, edited)
    set_meta_to_stream(client, edited)
    return k + 1


def downgrade_hash_version(client: redis.Redis, entries: Entries) -> int:
    """The last event re-hashed by version 1 (which leaves the command id out)."""
    fields = {**entries[-1][1]}
    del fields[b"hv"]  # an entry without it is read as hash version 1
    assert stored_event(fields, "0" * 64).hash_version == HASH_V1
    edited = rechained(entries[:-1] + [(entries[-1][0], fields)], len(entries) - 1)
    rewrite_stream(client, SPACE.table(TABLE).events, edited)
    set_meta_to_stream(client, edited)
    client.xtrim(SPACE.feed(SPACE.partition_of(TABLE)), maxlen=0)
    return len(entries)


def forge_stored_link(client: redis.Redis, entries: Entries) -> int:
    """A table an older release stored (each entry with its link) whose link of one
    entry names another event, every hash left as it was."""
    k = 30
    linked = with_links(entries)
    linked[k] = (linked[k][0], {**linked[k][1], b"p": hashes(entries)[k - 2].encode()})
    rewrite_stream(client, SPACE.table(TABLE).events, linked)
    return k + 1


def delete_the_stream(client: redis.Redis, entries: Entries) -> int:
    client.delete(SPACE.table(TABLE).events)
    return 1


def meta_behind(client: redis.Redis, entries: Entries) -> int:
    client.hset(SPACE.table(TABLE).meta, mapping={"v": len(entries) - 2, "h": hashes(entries)[-3]})
    return len(entries) - 1


def forge_feed_after(client: redis.Redis, entries: Entries) -> int:
    scored = forged_score(entries[scored_index(entries)][1])
    client.xadd(SPACE.feed(SPACE.partition_of(TABLE)), {
        "t": TABLE, "v": len(entries) + 1, "e": scored[b"e"], "h": hashlib.sha256(scored[b"e"]).hexdigest()})
    return len(entries) + 1


def forge_feed_copy(client: redis.Redis, entries: Entries) -> int:
    """A feed entry for a version the stream holds, with other bytes."""
    k = scored_index(entries)
    scored = forged_score(entries[k][1])
    client.xadd(SPACE.feed(SPACE.partition_of(TABLE)), {"t": TABLE, "v": k + 1, "e": scored[b"e"],
                                                         "h": bytes.fromhex(hashes(entries)[k])})
    return k + 1


# The sparse layout (docs/store.md, "The stored entry"): only every 16th entry (an anchor)
# stores its hash. With the feed trimmed past an edit, it is named where a stored hash
# proves it: the next anchor's, or past the last anchor, the meta's head.

ANCHOR = 2 * HASH_EVERY  # entry 32


def trim_feed(client: redis.Redis) -> None:
    client.xtrim(SPACE.feed(SPACE.partition_of(TABLE)), maxlen=0)


def edit_between_anchors_feed_trimmed(client: redis.Redis, entries: Entries) -> int:
    k = 25  # entry 26: no hash of its own; the feed, which had one, is trimmed
    assert entries[k][1][b"h"] == b"" and entries[ANCHOR - 1][1][b"h"]
    trim_feed(client)
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], same_json_other_bytes(entries[k][1]))] + entries[k + 1:])
    return ANCHOR


def edit_after_the_last_anchor_feed_trimmed(client: redis.Redis, entries: Entries) -> int:
    k = len(entries) - 2  # the entry before the last: past the last anchor
    assert len(entries) % HASH_EVERY > 1, "the drill needs two entries after the last anchor"
    trim_feed(client)
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], same_json_other_bytes(entries[k][1]))] + entries[k + 1:])
    return len(entries)


def edit_an_anchors_hash_feed_trimmed(client: redis.Redis, entries: Entries) -> int:
    k = ANCHOR - 1
    trim_feed(client)
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], {**entries[k][1], b"h": bytes(32)})] + entries[k + 1:])
    return ANCHOR


def blank_an_anchors_hash_feed_trimmed(client: redis.Redis, entries: Entries) -> int:
    k = ANCHOR - 1
    trim_feed(client)
    rewrite_stream(client, SPACE.table(TABLE).events,
                   entries[:k] + [(entries[k][0], {**entries[k][1], b"h": b""})] + entries[k + 1:])
    return ANCHOR


# Records (one field ``r`` an entry, docs/store.md "The stored entry"), edited as stored:
# a head holds its append's command id and time, the entries after it in that append hold
# neither; a record this release cannot read is named by its version.


def edit_record(client: redis.Redis, pick: Callable[[int, record.Record], bool],
                change: Callable[[bytes, record.Record], bytes]) -> int:
    """The first record ``pick`` chooses (by version and parts) past the first anchor,
    its bytes changed; its version."""
    key = SPACE.table(TABLE).events
    raw: Entries = client.xrange(key)
    for n, (entry_id, fields) in enumerate(raw):
        version = n + 1
        parts = record.decode(fields[b"r"], version)
        if version > HASH_EVERY and pick(version, parts):
            edited = (entry_id, {b"r": change(fields[b"r"], parts)})
            rewrite_stream(client, key, [*raw[:n], edited, *raw[n + 1:]])
            return version
    raise AssertionError("no record to edit")


def is_head(version: int, parts: record.Record) -> bool:
    return parts.command_id is not None and version % HASH_EVERY != 0


def record_flag_unknown(client: redis.Redis, entries: Entries) -> int:
    return edit_record(client, lambda v, r: True, lambda raw, r: bytes((raw[0] | 0x08,)) + raw[1:])


def record_delta_flag_without_head(client: redis.Redis, entries: Entries) -> int:
    return edit_record(client, lambda v, r: r.command_id is None,
                       lambda raw, r: bytes((raw[0] | record.TIME_DELTA,)) + raw[1:])


def record_cut_short(client: redis.Redis, entries: Entries) -> int:
    return edit_record(client, lambda v, r: r.hash is not None, lambda raw, r: raw[:20])


def record_non_head_event_edited(client: redis.Redis, entries: Entries) -> int:
    def edited(raw: bytes, parts: record.Record) -> bytes:
        return raw[:len(raw) - len(parts.event)] + pack(unpack(parts.event)[:-1] + b" }")
    return edit_record(client, lambda v, r: r.command_id is None, edited)


def record_head_command_id_edited(client: redis.Redis, entries: Entries) -> int:
    def edited(raw: bytes, parts: record.Record) -> bytes:
        assert parts.command_id is not None and (parts.at_ms is None) != (parts.delta_ms is None)
        return record.encode(parts.event, hash=parts.hash, command_id=parts.command_id + "x", at_ms=parts.at_ms,
                             delta_ms=parts.delta_ms)
    return edit_record(client, is_head, edited)


def record_head_command_id_edited_feed_trimmed(client: redis.Redis, entries: Entries) -> int:
    """Named where a stored hash proves it: the next anchor (the meta's head past the last)."""
    trim_feed(client)
    version = record_head_command_id_edited(client, entries)
    anchor = version + (-version % HASH_EVERY)
    return anchor if anchor <= len(entries) else len(entries)


DRILLS: dict[str, Callable[[redis.Redis, Entries], int]] = {
    "edited bytes": edit_bytes,
    "packed bytes edited": edit_packed_bytes,
    "edited, chain recomputed": edit_and_rechain,
    "edited, chain and meta recomputed": edit_rechain_and_meta,
    "edited, chain recomputed, feed trimmed": edit_rechain_feed_trimmed,
    "inserted": insert,
    "inserted, chain and meta recomputed": insert_and_rechain,
    "deleted in the middle": delete_middle,
    "deleted the last event": delete_last,
    "deleted the last commands": delete_last_commands,
    "reordered": reorder,
    "reordered, chain and meta recomputed": reorder_and_rechain,
    "edited command id": edit_command_id,
    "edited command id, chain and meta recomputed": edit_command_id_and_rechain,
    "hash version downgraded, chain and meta recomputed, feed trimmed": downgrade_hash_version,
    "stored link forged (a table an older release stored)": forge_stored_link,
    "deleted the whole stream": delete_the_stream,
    "meta behind the stream": meta_behind,
    "forged feed entry past the stream": forge_feed_after,
    "forged feed entry for a stored version": forge_feed_copy,
    "sparse: an entry between anchors edited, feed trimmed": edit_between_anchors_feed_trimmed,
    "sparse: an entry after the last anchor edited, feed trimmed": edit_after_the_last_anchor_feed_trimmed,
    "sparse: an anchor's stored hash edited, feed trimmed": edit_an_anchors_hash_feed_trimmed,
    "sparse: an anchor's hash removed, feed trimmed": blank_an_anchors_hash_feed_trimmed,
    "record: a flag this release does not know": record_flag_unknown,
    "record: a time delta on a record that is not a head": record_delta_flag_without_head,
    "record: cut short": record_cut_short,
    "record: the event of an entry that is not a head edited": record_non_head_event_edited,
    "record: a head's command id edited": record_head_command_id_edited,
    "record: a head's command id edited, feed trimmed": record_head_command_id_edited_feed_trimmed,
}


@pytest.mark.parametrize("drill", DRILLS.values(), ids=DRILLS.keys())
def test_every_tamper_drill_fails_verify_naming_the_first_bad_entry(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries,
    drill: Callable[[redis.Redis, Entries], int],
) -> None:
    expected = drill(redis_client, played)
    version, problem = first_bad(redis_server)
    assert version == expected, problem
    everything = mighty(redis_server, "verify", "--all")
    assert everything.returncode == 1 and TABLE in json.loads(everything.stdout.splitlines()[-1])["bad"]


@pytest.mark.parametrize("drill", [delete_last, delete_last_commands, meta_behind, edit_rechain_feed_trimmed,
                                   edit_after_the_last_anchor_feed_trimmed],
                         ids=["deleted-last", "deleted-last-commands", "meta-behind", "rechained",
                              "edited-after-the-last-anchor"])
def test_the_handler_refuses_a_table_whose_meta_and_stream_disagree_and_writes_nothing(
    redis_client: redis.Redis, played: Entries, drill: Callable[[redis.Redis, Entries], int],
) -> None:
    drill(redis_client, played)
    keys = SPACE.table(TABLE)
    before = (redis_client.xrange(keys.events), redis_client.hgetall(keys.meta), redis_client.xlen(keys.feed))
    handler = table_handler(RedisEventStore(redis_client))  # a process started after the edit
    state = handler.core.decider.initial_state(TABLE)
    for _, fields in as_fields(redis_client.xrange(keys.events)):  # what the stream says the table is at
        state = handler.core.decider.evolve(state, handler.core.decider.decode_event(unpack(fields[b"e"])))
    for attempt in range(2):  # refused each time, by name; never a version_conflict loop
        submission = next_submission(state, random.Random(attempt))
        assert submission is not None
        with pytest.raises(StoreCorrupt, match=f"table {TABLE} is corrupt") as refused:
            handler.handle(TABLE, submission, command_id=f"after-{attempt}")
        assert refused.value.code == "store_corrupt"
    assert (redis_client.xrange(keys.events), redis_client.hgetall(keys.meta), redis_client.xlen(keys.feed)) == before


@pytest.mark.parametrize(("drill", "named"), [
    (edit_between_anchors_feed_trimmed, "the stored hash of event 32 does not match: one of events 17–32 was changed"),
    (edit_an_anchors_hash_feed_trimmed, "the stored hash of event 32 does not match: one of events 17–32 was changed"),
    (blank_an_anchors_hash_feed_trimmed, "it stores no hash, which every 16th event does: its hash was removed"),
], ids=["between-anchors", "anchor-hash-edited", "anchor-hash-removed"])
def test_an_edit_a_stored_hash_proves_names_the_events_it_lies_among(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries,
    drill: Callable[[redis.Redis, Entries], int], named: str,
) -> None:
    drill(redis_client, played)
    assert first_bad(redis_server) == (ANCHOR, named)


def test_an_edit_after_the_last_anchor_names_the_events_since_it_at_the_meta_head(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries,
) -> None:
    last = edit_after_the_last_anchor_feed_trimmed(redis_client, played)
    anchor = last - last % HASH_EVERY
    version, problem = first_bad(redis_server)
    assert version == last and f"one of events {anchor + 1}–{last} was changed" in problem


def test_a_forged_feed_entry_of_a_table_that_has_no_stream_fails_verify_all(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries,
) -> None:
    partition = SPACE.partition_of("ghost")
    scored = forged_score(played[scored_index(played)][1])
    redis_client.xadd(SPACE.feed(partition), {"t": "ghost", "v": 1, "e": scored[b"e"], "h": "0" * 64})
    done = mighty(redis_server, "verify", "--all")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1 and lines[-1] == {"tables": 1, "ok": 1, "bad": ["ghost"]}
    (ghost,) = [line for line in lines if line.get("table") == "ghost"]
    assert ghost["first_bad"]["version"] == 1 and "has no stream" in ghost["first_bad"]["problem"]


# ------------------------------------------------------------ projections


def _catch_up(client: redis.Redis) -> None:
    for kind in KINDS:
        worker = in_process_worker(client, kind, SPACE, linger_ms=0, block_ms=10)
        for _ in range(200):
            if applied(client, SPACE, kind) >= feed_length(client, SPACE):
                break
            worker.step()
        worker.shutdown()


def ledgers(client: redis.Redis) -> dict[int, dict[Any, bytes]]:
    store = store_of(client, SPACE, "ledger")
    return {p: store.docs(p) for p in range(SPACE.partitions)}


def test_a_forged_feed_entry_fails_projections_check_and_rebuild_refuses_to_make_it_permanent(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries,
) -> None:
    _catch_up(redis_client)
    assert mighty(redis_server, "projections", "check").returncode == 0
    faithful = ledgers(redis_client)
    forge_feed_after(redis_client, played)
    _catch_up(redis_client)  # the ledger worker folds the forged score
    forged = ledgers(redis_client)
    assert forged != faithful, "the forgery reached the ledger (else this drill proves nothing)"

    check = mighty(redis_server, "projections", "check")
    assert check.returncode == 1
    lines = [json.loads(line) for line in check.stdout.splitlines()]
    (named,) = [line for line in lines if "forged_feed_entry" in line]
    assert named["table"] == TABLE and named["version"] == len(played) + 1
    assert lines[-1]["identical"] is False and lines[-1]["forged_feed_entries"] == 1

    refused = mighty(redis_server, "projections", "rebuild")
    assert refused.returncode == 1 and "nothing was rebuilt" in refused.stderr
    assert ledgers(redis_client) == forged, "a refused rebuild writes nothing"

    partition = SPACE.partition_of(TABLE)
    (entry_id,) = [i for i, f in redis_client.xrange(SPACE.feed(partition)) if int(f[b"v"]) == len(played) + 1]
    redis_client.xdel(SPACE.feed(partition), entry_id)  # the operator removes the forgery
    rebuilt = mighty(redis_server, "projections", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert ledgers(redis_client) == faithful
    assert mighty(redis_server, "projections", "check").returncode == 0


@pytest.mark.parametrize("edit", ["low bit", "continuation bit"])
def test_a_delta_time_edited_reads_as_another_time_or_fails_verify_naming_its_entry(
    redis_server: PrivateRedis, redis_client: redis.Redis, played: Entries, edit: str,
) -> None:
    """A head's time stored as a delta is not in the hash: its low bit flipped, the entry's
    append reads as a millisecond off, and so do the appends after it up to the next
    anchor; verify has nothing to say of it (as of a whole time edited), or names an
    entry after it when that anchor lies inside an append; its continuation bit set, the
    varint runs into the command id and the record no longer reads: verify names the
    entry, never crashing."""
    store = RedisEventStore(redis_client, keys=SPACE)
    before = store.read(TABLE)

    def is_delta_head(version: int, parts: record.Record) -> bool:
        return parts.delta_ms is not None and parts.delta_ms < 0x80  # one byte

    def edited(raw: bytes, parts: record.Record) -> bytes:
        flip = 0x01 if edit == "low bit" else 0x80
        return raw[:1] + bytes((raw[1] ^ flip,)) + raw[2:]

    version = edit_record(redis_client, is_delta_head, edited)
    if edit == "low bit":
        after = store.read(TABLE)
        assert [(e.hash, e.command_id) for e in after] == [(e.hash, e.command_id) for e in before]
        changed = [e.version for e, b in zip(after, before, strict=True) if e.at_ms != b.at_ms]
        assert changed and changed[0] == version
        assert all(abs((e.at_ms or 0) - (b.at_ms or 0)) == 1 for e, b in zip(after, before, strict=True)
                   if e.version in changed)
        # the time is not in the hash: verify has nothing to say of it, unless the shift,
        # carried to the next anchor (which holds its time whole), ends inside an append:
        # that command's events then read as two appends, which no command gives
        report = verdict(redis_server)
        assert report["ok"] is True or report["first_bad"]["version"] > version, json.dumps(report)
    else:
        found, problem = first_bad(redis_server)
        assert found == version and "not a record this release reads" in problem
