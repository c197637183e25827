"""The event store on Redis Streams (docs/store.md).

One append is one EVALSHA of ``append.lua``: preloaded with SCRIPT LOAD when the store
is built, reloaded once if Redis answers NOSCRIPT (a restart or SCRIPT FLUSH empties the
script cache). Connection errors surface as ``StoreUnavailable`` once the client's own
retries are spent; an append retried by the client is safe because the script refuses a
command id it has already seen and answers with the first outcome.

On Redis Cluster (``redis+cluster://``, services/store/cluster.py) an append goes to the
primary of its table's slot, on a connection of that node's pool; a MOVED answer (the
slot moved: a failover or a resharding) updates the slot map and sends it again, an
ASK answer sends it to the node named, with ASKING first. With the ``replicated``
durability profile (``wait_replicas``) the append is followed, on the same connection,
by an INCR of its partition's fence and a WAIT for a replica (WAITAOF when the server
has it): an append no replica acknowledged in time raises ``NotReplicated``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib import resources
from typing import Any, Final, NamedTuple

import redis
import redis.cluster
from hiredis import pack_command
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from services.store import record
from services.store.base import (
    GENESIS,
    HASH_EVERY,
    HASH_V2,
    Appended,
    FeedEntry,
    Head,
    StoredEvent,
    appended_at,
    check_append,
    derived_hash,
    event_hash,
    hash_hex,
)
from services.store.cluster import (
    CLUSTER_UNAVAILABLE,
    SyncClient,
    connect_cluster,
    is_cluster_url,
)
from services.store.compact import as_read, pack
from services.store.errors import (
    BadAppend,
    ChainMismatch,
    NotReplicated,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    VersionConflict,
    is_transient,
    unavailable,
)
from services.store.keys import (
    DEFAULT_IDEMPOTENCY_S,
    KeySpace,
    TableKeys,
    check_command_id,
    fence_of,
)
from services.store.packing import packing_fast
from services.store.record import FIELD as RECORD
from services.store.table_index import indexed_tables

APPEND_SCRIPT: Final = resources.files("services.store").joinpath("append.lua").read_text()
READ_CHUNK: Final = 1000
DEFAULT_WAIT_TIMEOUT_MS: Final = 500  # the replicated profile's WAIT (MIGHTY_REPLICA_TIMEOUT_MS)
# Tries of an append on a cluster whose slot map is changing (a failover takes a few
# seconds: the replica must see its primary fail, be elected, and be announced).
CLUSTER_ATTEMPTS: Final = 12
_CLUSTER_RETRIABLE = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterDownError,
                      redis.exceptions.TryAgainError, redis.exceptions.SlotNotCoveredError,
                      redis.exceptions.MasterDownError)
# What a cluster answers while it moves slots or fails over: nothing was refused for good.
_CLUSTER_UNAVAILABLE = (redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError,
                        redis.exceptions.SlotNotCoveredError, redis.exceptions.MasterDownError,
                        redis.exceptions.MovedError, redis.exceptions.AskError)


def connect(
    url: str,
    *,
    retries: int = 6,
    socket_timeout: float = 5.0,
    max_connections: int | None = None,
) -> SyncClient:
    """A client for the store: bytes replies, RESP2, retries with backoff; a cluster's
    (``redis.cluster.RedisCluster``) when ``url`` is a ``redis+cluster://`` URL.

    ``protocol=2`` is pinned on purpose: redis-py 8 speaks RESP3 by default, which changes
    the Python shapes of some replies (XREAD, XINFO, script replies holding maps), and
    fakeredis's TCP server and older servers answer RESP2 until told otherwise. The
    adapter parses RESP2 replies, so the wire format is fixed here, not left to a default.
    """
    if is_cluster_url(url):
        return connect_cluster(url, retries=retries, socket_timeout=socket_timeout,
                               max_connections=max_connections)
    retry = Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), retries)
    client = redis.Redis.from_url(
        url,
        protocol=2,
        decode_responses=False,
        retry=retry,
        retry_on_error=[redis.ConnectionError, redis.TimeoutError],
        socket_timeout=socket_timeout,
        socket_connect_timeout=min(socket_timeout, 2.0),
        health_check_interval=0,
        max_connections=max_connections,
    )
    pool = client.connection_pool
    pool.connection_class = packing_fast(pool.connection_class)  # packed by hiredis in one call (packing.py)
    return client


def store_error(error: BaseException) -> StoreError:
    """The typed store error for a redis-py error: an outage (``is_transient``: Redis
    loading, unable to persist, out of memory, a replica, a cluster failing over, no
    connection) is ``StoreUnavailable``, retried with the same command id; anything else
    is ``StoreCorrupt``, saying what Redis said."""
    if isinstance(error, StoreError):
        return error
    if isinstance(error, (*_CLUSTER_UNAVAILABLE, *CLUSTER_UNAVAILABLE)):
        return StoreUnavailable(f"the Redis cluster cannot serve the keys now (failing over?): {error}")
    if is_transient(error):
        return unavailable(error)
    return StoreCorrupt(f"Redis refused the command: {error}")


@contextmanager
def _redis_errors() -> Iterator[None]:
    try:
        yield
    except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
        raise store_error(error) from error


class RedisEventStore:
    """``EventStore`` on Redis; thread-safe as far as the redis-py client is.

    ``wait_replicas`` (the ``replicated`` durability profile: 1) is how many replicas
    must acknowledge an append, within ``wait_timeout_ms``, before it is acknowledged."""

    def __init__(
        self,
        client: SyncClient,
        *,
        keys: KeySpace | None = None,
        script: str = APPEND_SCRIPT,
        idempotency_s: float | None = None,
        wait_replicas: int = 0,
        wait_timeout_ms: int = DEFAULT_WAIT_TIMEOUT_MS,
    ) -> None:
        self.client: Any = client
        self.keys = keys or KeySpace()
        # command ids are forgotten after this window (docs/store.md, "Idempotency"); 0: never
        self.idempotency_ms = idempotency_ms(idempotency_s)
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.waitaof: bool | None = None  # whether the server has WAITAOF (None: not known yet)
        self._cluster = isinstance(client, redis.cluster.RedisCluster)
        self._script = script
        self._sha: str = hashlib.sha1(script.encode()).hexdigest()  # what SCRIPT LOAD answers
        # preload; a Redis that is down now gets it on the first NOSCRIPT instead
        with suppress(redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterError):
            self._sha = self._load_script()

    @property
    def script_sha(self) -> str:
        """The SHA1 of the append script as loaded (for EVALSHA)."""
        return self._sha

    def _load_script(self) -> str:
        sha = self.client.script_load(self._script)  # on a cluster: every primary
        return sha.decode() if isinstance(sha, bytes) else str(sha)

    def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        *,
        expected: Head,
        command_id: str,
        outcome: bytes,
    ) -> Appended:
        keys, args = append_call(self.keys, table_id, events, expected, command_id, outcome,
                                 self.idempotency_ms)
        try:
            reply = self._evalsha(keys, args)
        except (redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            raise store_error(error) from error
        return appended(reply, expected, outcome)

    def append_raw(self, keys: list[str], args: list[Any]) -> Any:
        """The bare script call: no checks, no parsing (for the benchmark and tests)."""
        with _redis_errors():
            return self._evalsha(keys, args)

    def _evalsha(self, keys: list[str], args: list[Any]) -> Any:
        try:
            return self._call(keys, args)
        except redis.exceptions.NoScriptError:
            self._sha = self._load_script()
            return self._call(keys, args)

    def _call(self, keys: list[str], args: list[Any]) -> Any:
        if self._cluster:
            return self._cluster_call(keys, args)
        return self._on_pool(self.client.connection_pool, keys, args)

    def _on_pool(self, pool: Any, keys: list[str], args: list[Any], asking: bool = False) -> Any:
        """One EVALSHA on a pooled connection, retried on a connection error as the
        client retries a command, sent by hand: redis-py's command path (its bookkeeping
        for observability, maintenance notifications, callbacks) cost ~14 µs of CPU per
        call more than packing with hiredis and reading the reply (docs/performance.md).
        What happens on the wire is the same."""
        connection = pool.get_connection()
        try:
            return connection.retry.call_with_retry(
                lambda: self._send(connection, keys, args, asking),
                lambda error: connection.disconnect(),
            )
        finally:
            pool.release(connection)

    def _cluster_call(self, keys: list[str], args: list[Any]) -> Any:
        """``_on_pool`` on the pool of the primary holding the keys' slot, following the
        cluster's redirections: MOVED (the slot has a new primary) updates the slot map,
        ASK (the slot is being migrated) sends to the node named, after ASKING; a node
        that is down or a cluster that is failing over is retried with a backoff, the
        slot map asked for again, for a few seconds, then ``StoreUnavailable``."""
        cluster = self.client
        asked: tuple[str, int] | None = None
        last: Exception | None = None
        for attempt in range(CLUSTER_ATTEMPTS):
            try:
                if asked is not None:
                    node = cluster.nodes_manager.get_node(host=asked[0], port=asked[1]) \
                        or cluster.nodes_manager.get_node_from_slot(cluster.keyslot(keys[0]))
                else:
                    node = cluster.get_node_from_key(keys[0])
                pool = cluster.get_redis_connection(node).connection_pool
                return self._on_pool(pool, keys, args, asking=asked is not None)
            except redis.exceptions.AskError as error:
                asked = (error.host, int(error.port))
            except redis.exceptions.MovedError as error:
                asked, last = None, error
                cluster.nodes_manager.move_slot(error)
            except _CLUSTER_RETRIABLE as error:
                asked, last = None, error
                time.sleep(min(0.5, 0.02 * 2 ** attempt))
                with suppress(redis.RedisError):
                    cluster.nodes_manager.initialize()
        assert last is not None
        raise last

    def _send(self, connection: Any, keys: list[str], args: list[Any], asking: bool = False) -> Any:
        commands: list[tuple[Any, ...]] = [("ASKING",)] if asking else []
        commands.append(("EVALSHA", self._sha, len(keys), *keys, *args))
        if self.wait_replicas:
            commands.append(("INCR", fence_of(keys[0])))
            commands.append(self._wait_command())
        if len(commands) == 1:  # the common case: one command, one reply
            connection.send_packed_command([pack_command(commands[0])], check_health=False)
            return connection.read_response()
        connection.send_packed_command([pack_command(command) for command in commands], check_health=False)
        replies = _read_replies(connection, len(commands))
        reply = replies[1 if asking else 0]
        if isinstance(reply, Exception):
            raise reply
        if self.wait_replicas:
            waited = replies[-1]
            if commands[-1][0] == "WAITAOF" and waitaof_unknown(waited):
                self.waitaof = False  # WAITAOF came with Redis 7.2: WAIT, on the same connection
                connection.send_packed_command([pack_command(self._wait_command())], check_health=False)
                waited = _read_replies(connection, 1)[0]
            self._check_replicated(reply, waited)
        return reply

    def _wait_command(self) -> tuple[Any, ...]:
        if self.waitaof is False:
            return ("WAIT", self.wait_replicas, self.wait_timeout_ms)
        # a replica's AOF fsynced (numlocal 0: the primary's own fsync is its profile's)
        return ("WAITAOF", 0, self.wait_replicas, self.wait_timeout_ms)

    def _check_replicated(self, reply: Any, waited: Any) -> None:
        """Raise ``NotReplicated`` when the append wrote (or had written: a duplicate)
        events and fewer than ``wait_replicas`` replicas acknowledged them."""
        if not isinstance(reply, list) or reply[:1] not in ([b"ok"], [b"dup"]):
            return  # a refusal wrote nothing: nothing to wait for
        self._check_acknowledged(waited)

    def _check_acknowledged(self, waited: Any) -> None:
        """Raise ``NotReplicated`` when the WAIT (or WAITAOF) counted too few replicas."""
        acknowledged = replicas_acknowledged(waited)
        if isinstance(waited, list):
            self.waitaof = True
        if acknowledged < self.wait_replicas:
            raise NotReplicated(self.wait_timeout_ms, acknowledged)

    def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        key = self.keys.table(table_id).events
        reading = StreamRead(after_version, to_version)
        with _redis_errors():
            while (query := reading.next_range()) is not None:
                reading.take(self.client.xrange(key, *query))
        return reading.events

    def table_ids(self) -> list[str]:
        """Every partition's table index (``table_index.py``: one set a partition, no
        SCAN of the keyspace; an index older tables are missing from is completed once)."""
        with _redis_errors():
            return sorted(t for p in range(self.keys.partitions) for t in indexed_tables(self.client, self.keys, p))

    def head(self, table_id: str) -> Head:
        key = self.keys.table(table_id).meta
        with _redis_errors():
            reply: Any = self.client.hmget(key, ["v", "h"])
        return parse_head(reply)

    def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        """The command's stored outcome (None: unknown). With ``wait_replicas`` it is
        given only once a replica holds everything the primary held when it was read
        (``fenced_read``): a duplicate is answered, or a refusal stands, only on a state
        that survives a failover."""
        command = outcome_command(self.keys.table(table_id), check_command_id(command_id))
        with _redis_errors():
            if self.wait_replicas:
                found: Any = self._fenced(command[3], command)
            else:
                found = self.client.execute_command(*command)
        return None if found is None else bytes(found)

    def _fenced(self, key: str, command: tuple[Any, ...]) -> Any:
        """``command`` on the primary of ``key``'s slot, then the partition's fence INCR
        and the replicated profile's WAIT, in one pipeline on one connection; its reply,
        or ``NotReplicated`` when fewer replicas than ``wait_replicas`` acknowledged.
        A redirect or a node down is the outage it is (the caller retries)."""
        client: Any = self.client
        if self._cluster:
            client = client.get_redis_connection(client.get_node_from_key(key))
        for _ in range(2):
            pipe = client.pipeline(transaction=False)
            pipe.execute_command(*command)
            pipe.execute_command("INCR", fence_of(key))
            pipe.execute_command(*self._wait_command())
            reply, _, waited = pipe.execute(raise_on_error=False)
            if self.waitaof is not False and waitaof_unknown(waited):
                self.waitaof = False  # WAITAOF came with Redis 7.2: WAIT
                continue
            break
        if isinstance(reply, Exception):
            raise reply
        self._check_acknowledged(waited)
        return reply

    def partition_of(self, table_id: str) -> int:
        return self.keys.partition_of(table_id)

    def read_feed(self, partition: int, after: str = "0-0", count: int = 100) -> list[FeedEntry]:
        with _redis_errors():
            entries: Any = self.client.xrange(
                self.keys.feed(partition), feed_start(after), "+", count=count
            )
        return [feed_entry(entry_id, fields) for entry_id, fields in entries]


# What both Redis stores (this one and ``AsyncRedisEventStore``) share, I/O aside.


def _read_replies(connection: Any, count: int) -> list[Any]:
    """``count`` replies, an error reply as its exception in its place (read them all:
    the connection stays in step)."""
    replies: list[Any] = []
    for _ in range(count):
        try:
            replies.append(connection.read_response())
        except redis.ResponseError as refused:
            replies.append(refused)
        except redis.exceptions.BusyLoadingError as loading:  # a reply, not a lost connection
            replies.append(loading)
    return replies


def waitaof_unknown(waited: Any) -> bool:
    """Whether a WAITAOF was answered as unknown (it came with Redis 7.2): WAIT then."""
    return isinstance(waited, redis.ResponseError) and "unknown command" in str(waited).lower()


def replicas_acknowledged(waited: Any) -> int:
    """How many replicas a WAIT (an int) or a WAITAOF ([local fsyncs, replica fsyncs])
    reply counts; an error reply is raised."""
    if isinstance(waited, Exception):
        raise waited
    return int(waited[1]) if isinstance(waited, list) else int(waited)


# A command id's outcome, from the current generation of the table's ids or the one before
# (append.lua keeps two: docs/store.md, "Idempotency"), in one round trip.
_OUTCOME_SCRIPT: Final = "return redis.call('HGET', KEYS[1], ARGV[1]) or redis.call('HGET', KEYS[2], ARGV[1])"


def outcome_command(keys: TableKeys, command_id: str) -> tuple[str, str, int, str, str, str]:
    """The command both Redis stores send for ``outcome_of``: an EVAL reading both
    generations' hashes (one slot: Cluster-legal), the first key at index 3."""
    return ("EVAL", _OUTCOME_SCRIPT, 2, keys.commands, keys.previous_commands, command_id)


def idempotency_ms(window_s: float | None) -> int:
    """The command-id window in ms for the script (``DEFAULT_IDEMPOTENCY_S`` when None;
    0: ids kept for ever, the 4-key call)."""
    window = DEFAULT_IDEMPOTENCY_S if window_s is None else window_s
    return max(1, round(window * 1000)) if window > 0 else 0


def append_call(
    space: KeySpace,
    table_id: str,
    events: Sequence[bytes],
    expected: Head,
    command_id: str,
    outcome: bytes,
    window_ms: int,
) -> tuple[list[str], list[Any]]:
    """The append script's KEYS and ARGV for one command's events, checked first: the
    6-key call (the table index last; command ids expire when ``window_ms`` is given).
    Both Redis stores, sync and async, send exactly this."""
    check_append(table_id, events, expected, command_id, outcome)
    keys = space.table(table_id)
    args = append_args(table_id, events, expected, command_id, outcome, window_ms)
    return keys.with_table_index(), args


def append_args(
    table_id: str,
    events: Sequence[bytes],
    expected: Head,
    command_id: str,
    outcome: bytes,
    window_ms: int = 0,
) -> list[Any]:
    """The append script's ARGV (see append.lua), event hashes chained here, and the
    idempotency window last when there is one (the 5-key call)."""
    prev = expected.hash
    args: list[Any] = [table_id, expected.version, command_id, outcome, prev, len(events)]
    for data in events:
        prev = event_hash(prev, data, command_id)
        args.append(pack(data))  # hashed as it is, stored packed (compact.py)
        args.append(bytes.fromhex(prev))  # stored as its 32 bytes (docs/store.md, "The stored entry")
    if window_ms:
        args.append(window_ms)
    return args


class StreamRead:
    """One read of a table's stream, without I/O (both Redis stores drive it): the XRANGE
    to send next, and each entry's previous hash, hash, command id and append time,
    derived or carried on the way.

    An entry stores no previous hash, and its own hash only when its version is a
    multiple of ``HASH_EVERY`` (an *anchor*; docs/store.md, "The stored entry"): the
    previous hash is the hash of the entry before in the stream (``GENESIS`` for the
    first), and an entry that stores none has the hash derived from it. A record entry
    (``record.py``) that is not a *head* stores no command id nor time either: it has
    those of the entry before (the first event of an append, every anchor and version 1
    are heads). So a read after version k > 0 needs what entry k has: its first XRANGE
    starts at the anchor a = k - k % HASH_EVERY (at the first entry when a is 0), takes
    the hash of the last entry up to k that stores one (k itself, in a stream an older
    release stored, which stored every hash; else a) and the command id and time of the
    last head up to k, carries them through the entries after those up to k, and returns
    only the entries after k: one XRANGE, ``READ_CHUNK`` plus the k - a + 1 entries it
    starts with. If the entries from a to k store no hash, or no head, to start from
    (entries deleted or blanked behind the store's back), it reads again from the first
    entry, so the read links as a read of the whole stream does. An entry written by an
    older release carries its link (``p``) and is read with it: ``mighty verify`` checks
    that it names the hash before.
    """

    __slots__ = ("events", "_after", "_to", "_upper", "_start", "_prev", "_cid", "_at", "_count", "_from")

    def __init__(self, after_version: int, to_version: int | None) -> None:
        self.events: list[StoredEvent] = []
        self._after = after_version
        self._to = to_version
        self._upper = "+" if to_version is None else f"0-{to_version}"
        self._start: int | None = after_version + 1  # the next version to return
        self._prev: str | None = GENESIS if after_version <= 0 else None  # None: entry k's hash
        # the command id and time a record that is not a head takes (none before the first entry)
        self._cid = ""
        self._at: int | None = None
        self._count = READ_CHUNK  # what the last XRANGE asked for
        # where the first XRANGE of a read from the middle starts: the anchor at or before k
        self._from = max(after_version - after_version % HASH_EVERY, 1)

    def next_range(self) -> tuple[str, str, int] | None:
        """The next XRANGE's start, end and count, or None when the read is done. A chunk
        returns up to ``READ_CHUNK`` events (the entries up to k come on top of the first),
        so a read of fewer events than that took one XRANGE, but where the entries from
        the anchor to k were tampered with (``ArchivedEventStore`` counts on it)."""
        start = self._start
        if start is None or (self._to is not None and start > self._to):
            return None
        if self._prev is None:
            self._count = READ_CHUNK + self._after - self._from + 1
            return f"0-{self._from}", self._upper, self._count
        self._count = READ_CHUNK
        return f"0-{start}", self._upper, self._count

    def take(self, entries: list[Any]) -> None:
        """Add one XRANGE reply."""
        rows = entries
        if self._prev is None:  # the first reply of a read from the middle: entries up to k first
            if not entries:
                self._start = None
                return
            split = _entries_up_to(entries, self._after)
            carried = _carried_after(entries[:split], at_start=self._from == 1)
            if carried is None:  # no hash or no head from the anchor to k: from the first entry
                self._from = 1
                return
            self._prev, self._cid, self._at = carried
            rows = entries[split:]
        prev, cid, at = self._prev, self._cid, self._at
        events = self.events
        for entry_id, fields in rows:
            event = stored_event(fields, prev, cid, at, entry_id)
            events.append(event)
            prev, cid, at = event.hash, event.command_id, event.at_ms
        self._prev, self._cid, self._at = prev, cid, at
        self._start = events[-1].version + 1 if len(entries) == self._count and events else None


def _entries_up_to(entries: list[Any], version: int) -> int:
    """How many of ``entries`` (in id order) have ids up to ``0-<version>``."""
    for n, (entry_id, _) in enumerate(entries):
        ms, _, seq = bytes(entry_id).partition(b"-")
        if ms != b"0" or int(seq) > version:
            return n
    return len(entries)


def _carried_after(prefix: list[Any], at_start: bool) -> tuple[str, str, int | None] | None:
    """The hash, command id and time a read of the whole stream gives the last of
    ``prefix`` (consecutive stream entries): the last stored hash chained through the
    entries after it, and the last head's command id and time (a time stored as a delta
    added to the time before it); from ``GENESIS``, no command id and no time when
    ``prefix`` starts at the stream's first entry (``at_start``); None when any is unknown
    (it lies in entries before ``prefix``)."""
    prev: str | None = GENESIS if at_start else None
    cid: str | None = "" if at_start else None
    at: int | None = None
    at_known = at_start
    for entry_id, fields in prefix:
        raw = fields.get(RECORD)
        delta = raw is not None and record.is_time_delta(raw)
        # a delta with no time known to add it to: its time lies before ``prefix`` too (a
        # placeholder base keeps the read going: the hash and command id may still be known)
        event, head = _stored_event(fields, prev or GENESIS, cid or "", at if at_known else 0, entry_id)
        if head:
            cid, at = event.command_id, event.at_ms
            at_known = at_known or not delta  # a whole time is known; a delta, if its base was
        # a derived hash is known when the hash and the command id it is derived from are
        prev = event.hash if event.hash_stored or (prev is not None and cid is not None) else None
    if prev is None or cid is None or not at_known:
        return None
    return prev, cid, at


def meta_pattern(keys: KeySpace, partition: int) -> tuple[str, str]:
    prefix = f"{keys.namespace}:{keys.tag(partition)}:t:"
    return prefix, prefix + "*:meta"  # braces are not glob characters


def table_of_meta(keys: KeySpace, partition: int, prefix: str, key: bytes) -> list[str]:
    """The table a scanned meta key belongs to (none if it is another partition's)."""
    table_id = key.decode()[len(prefix):-len(":meta")]
    return [table_id] if keys.partition_of(table_id) == partition else []


def parse_head(reply: list[Any]) -> Head:
    version, digest = reply
    if version is None:
        return Head(0, GENESIS)
    return Head(int(version), digest.decode())


def feed_start(after: str) -> str:
    return "-" if after == "0-0" else f"({after}"


def appended(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    """The script's reply as an ``Appended``, or its refusal raised as a typed error."""
    if reply[0] == b"ok":  # the common answer, without the table's lookup
        return Appended(Head(int(reply[1]), reply[2].decode()), outcome, duplicate=False)
    kind = reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])
    handler = _REPLIES.get(kind)
    if handler is None:
        raise StoreCorrupt(f"unexpected reply from the append script: {reply!r}")
    return handler(reply, expected, outcome)


def _ok(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    return Appended(Head(int(reply[1]), reply[2].decode()), outcome, duplicate=False)


def _dup(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    return Appended(Head(int(reply[2]), reply[3].decode()), bytes(reply[1]), duplicate=True)


def _conflict(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    raise VersionConflict(expected.version, int(reply[1]))


def _chain(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    raise ChainMismatch(f"the table's head hash is {reply[1].decode()}, not {expected.hash}")


def _bad(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    raise BadAppend(f"the append script refused the arguments: {reply[1].decode()}")


def _corrupt(reply: list[Any], expected: Head, outcome: bytes) -> Appended:
    raise StoreCorrupt(f"the table's keys break the store's invariants: {reply[1].decode()}")


_REPLIES: Final[dict[str, Callable[[list[Any], Head, bytes], Appended]]] = {
    "ok": _ok,
    "dup": _dup,
    "conflict": _conflict,
    "chain": _chain,
    "bad": _bad,
    "corrupt": _corrupt,
}


def stored_event(fields: dict[bytes, bytes], prev_hash: str, command_id: str = "",
                 at_ms: int | None = None, entry_id: bytes | None = None) -> StoredEvent:
    """A stream entry as read, ``prev_hash`` being the hash of the entry before it, and
    ``command_id`` and ``at_ms`` its (what a record that is not a head has: docs/store.md,
    "The stored entry"; ``entry_id``, ``0-<version>``, gives a record its version). An
    entry of the six fields an older release wrote (``hv v e h c a``, or fewer) holds its
    own; one that stores its link (``p``, written by releases before it was dropped) is
    read with that link instead, for ``mighty verify`` to check. An entry that stores no
    hash (all but the anchors) gets the hash derived from ``prev_hash`` by its hash version
    (empty if that version is not known here). A record that cannot be read raises
    ``BadRecord`` (a ``StoreCorrupt`` naming its version); an older entry lacking a field,
    ``StoreCorrupt``."""
    return _stored_event(fields, prev_hash, command_id, at_ms, entry_id)[0]


def _stored_event(fields: dict[bytes, bytes], prev_hash: str, command_id: str, at_ms: int | None,
                  entry_id: bytes | None) -> tuple[StoredEvent, bool]:
    """``stored_event``, and whether the entry holds its own command id and time."""
    raw = fields.get(RECORD)
    if raw is not None:
        return _record_event(bytes(raw), prev_hash, command_id, at_ms, entry_id)
    try:
        link = fields.get(b"p")
        data = as_read(bytes(fields[b"e"]))
        command_id = fields[b"c"].decode()
        hash_version = int(fields.get(b"hv", b"1"))  # entries before hash v2 have none
        stored = fields[b"h"]
        if stored:
            digest = hash_hex(stored)
        else:
            digest = derived_hash(prev_hash, data, command_id, hash_version) or ""
        return StoredEvent(
            version=int(fields[b"v"]),
            data=data,
            hash=digest,
            prev_hash=prev_hash if link is None else link.decode(),
            command_id=command_id,
            hash_version=hash_version,
            at_ms=appended_at(fields),
            hash_stored=bool(stored),
        ), True
    except (KeyError, ValueError) as error:
        raise StoreCorrupt(f"a stream entry lacks a field or holds a bad one: {error}") from error


def _record_event(raw: bytes, prev_hash: str, command_id: str, at_ms: int | None,
                  entry_id: bytes | None) -> tuple[StoredEvent, bool]:
    if entry_id is None:
        raise ValueError("a record entry is read with its entry id (its version)")
    version = int(bytes(entry_id).partition(b"-")[2])
    parts = record.decode(raw, version)
    own_cid, stored = parts.command_id, parts.hash
    if own_cid is not None:
        command_id, at_ms = own_cid, record.at_after(parts, at_ms, version)
    data = as_read(parts.event)
    digest = stored.hex() if stored is not None else event_hash(prev_hash, data, command_id)
    event = StoredEvent(version, data, digest, prev_hash, command_id, HASH_V2, at_ms, stored is not None)
    return event, own_cid is not None


class LastEntry(NamedTuple):
    """A table stream's newest entry: its event, and its command id and append time (None
    when the entries read do not hold them: a record that is not a head, read without
    the head before it)."""

    data: bytes
    command_id: str | None
    at_ms: int | None


def last_entry(newest_first: list[Any]) -> LastEntry | None:
    """The newest entry of an XREVRANGE reply (newest first; None when empty), with the
    command id and time of the newest head among the entries (docs/store.md, "The stored
    entry"), a time stored as a delta added to the time before it, carried from the
    oldest entry read on: an XREVRANGE of ``HASH_EVERY`` entries always holds a head that
    stores its time whole (an anchor, or version 1), one of a single entry holds the
    command id when that entry is a head and the time when it stores it whole (an entry
    written by an older release holds both)."""
    if not newest_first:
        return None
    cid: str | None = None
    at: int | None = None
    data = b""
    for entry_id, fields in reversed(newest_first):
        raw = fields.get(RECORD)
        if raw is None:
            data = bytes(fields.get(b"e", b""))
            cid, at = fields.get(b"c", b"").decode(errors="replace") or None, appended_at(fields)
            continue
        version = int(bytes(entry_id).partition(b"-")[2])
        stored = record.decode(bytes(raw), version)
        data = stored.event
        if stored.command_id is not None:
            # a delta with no time read before it: unknown here (its base lies further back)
            known = stored.delta_ms is None or at is not None
            cid, at = stored.command_id, record.at_after(stored, at, version) if known else None
    return LastEntry(as_read(data), cid, at)


def feed_entry(entry_id: bytes, fields: dict[bytes, bytes]) -> FeedEntry:
    try:
        return FeedEntry(
            id=entry_id.decode(),
            table_id=fields[b"t"].decode(),
            version=int(fields[b"v"]),
            data=as_read(bytes(fields[b"e"])),
            hash=hash_hex(fields[b"h"]),
            at_ms=appended_at(fields),
        )
    except (KeyError, ValueError) as error:
        raise StoreCorrupt(f"a feed entry lacks a field or holds a bad one: {error}") from error
