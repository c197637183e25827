"""Redis Cluster: its URL, its clients, and the one rule every command here keeps.

``REDIS_URL`` names a cluster with the scheme ``redis+cluster://`` (``rediss+cluster://``
for TLS) and the address of one or more of its nodes, comma-separated::

    redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002
    redis+cluster://user:secret@10.0.0.5:6379          (one node is enough to find the rest)

``connect`` / ``connect_async`` (``services/store/redis_store.py``,
``async_redis_store.py``) then build redis-py's cluster clients
(``redis.cluster.RedisCluster``, ``redis.asyncio.cluster.RedisCluster``) instead of a
single-node one; ``services/bootstrap.py`` is the one place that calls them.

The rule: **no command touches two slots.** Every key of a table, its partition's feed,
and the partition's projection documents carry the partition's hash tag (``{p07}``), so a
script (an append, an apply), a MULTI (archiving a table, storing a rebuild) or a
multi-key command (MGET of a partition's views) names keys of one slot. The keys outside
the partitions are single-key (a player's record, a rate-limit counter, the gateway's
secret) or carry a hash tag of their own (the timers, ``{timers}``; the workers' list,
``{workers}``). Pipelines that are not transactions may hold commands of many slots:
redis-py's cluster pipeline sends each node its share. ``same_slot`` is the check the
tests run over every such call (tests/unit/test_cluster_slots.py).

What redis-py's cluster clients do not do for us, done here:

- a script in a pipeline (``Script(client=pipe)`` is refused by the cluster pipeline):
  ``evalsha_many`` sends EVALSHAs itself, and loads the script where a node answers
  NOSCRIPT (a replica promoted by a failover has an empty script cache);
- SCAN of one partition: ``scan_partition`` asks only the node holding its slot;
- a Pub/Sub wait over several nodes: ``next_sharded_message`` waits on every node's
  connection at once (redis-py's waits for each node in turn);
- the keys of a stream read or a script call: redis-py 8's sync client asks a node
  (``COMMAND GETKEYS``, a round trip of its own) for the keys of every command whose
  keys Redis flags as movable, XREADGROUP and, in a pipeline, EVALSHA among them, before
  it can route it; ``command_keys`` reads them off the command (a worker's poll of
  sixteen feeds was sixteen such round trips, and its apply as many, docs/performance.md).
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as aiocluster
import redis.cluster
from redis._parsers.commands import CommandsParser
from redis.crc import key_slot

CLUSTER_SCHEMES: Final = ("redis+cluster", "rediss+cluster")

# What a cluster raises while it cannot serve a slot for now (a primary down and not yet
# replaced, a failover, a slot being migrated): the store says StoreUnavailable, the
# workers ride it out as an outage. SlotNotCoveredError is no redis.RedisError.
CLUSTER_UNAVAILABLE: Final = (redis.exceptions.SlotNotCoveredError, redis.exceptions.ClusterDownError,
                              redis.exceptions.TryAgainError)

# The clients a process may hold: one node's, or a cluster's.
SyncClient = redis.Redis | redis.cluster.RedisCluster
AsyncClient = aioredis.Redis | aiocluster.RedisCluster


class BadClusterUrl(ValueError):
    """A ``redis+cluster://`` URL that names no usable node; the message says why."""


@dataclass(frozen=True, slots=True)
class ClusterUrl:
    """What a cluster URL holds: the nodes to start from, TLS, and the credentials."""

    nodes: tuple[tuple[str, int], ...]
    tls: bool = False
    username: str | None = None
    password: str | None = None


def is_cluster_url(url: str) -> bool:
    return url.split("://", 1)[0].lower() in CLUSTER_SCHEMES


def parse_cluster_url(url: str) -> ClusterUrl:
    """``redis+cluster://[user:password@]host:port[,host:port ...][/ or /0]``.

    Every node needs its port (there is no default a cluster could be assumed on). A
    cluster has one database, 0: another is refused, as are query options (the store
    sets its own timeouts and retries)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in CLUSTER_SCHEMES:
        raise BadClusterUrl("a cluster URL starts with redis+cluster:// or rediss+cluster://")
    if "?" in rest or "#" in rest:
        raise BadClusterUrl("a cluster URL takes no query options")
    credentials, at, hosts = rest.rpartition("@")
    if not at:
        credentials, hosts = "", rest
    hosts, slash, database = hosts.partition("/")
    if slash and database not in ("", "0"):
        raise BadClusterUrl(f"a cluster has one database (0), not {database!r}")
    username: str | None = None
    password: str | None = None
    if credentials:
        user, colon, secret = credentials.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    nodes = tuple(_address(part) for part in hosts.split(","))
    return ClusterUrl(nodes, scheme.lower() == "rediss+cluster", username, password)


def _address(text: str) -> tuple[str, int]:
    text = text.strip()
    if text.startswith("["):  # [IPv6]:port
        host, close, port = text[1:].partition("]")
        if not close or not port.startswith(":"):
            raise BadClusterUrl(f"{text!r} is not [address]:port")
        port = port[1:]
    else:
        host, colon, port = text.rpartition(":")
        if not colon:
            raise BadClusterUrl(f"the node {text!r} has no port (host:port)")
    if not host:
        raise BadClusterUrl(f"the node {text!r} has no host")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise BadClusterUrl(f"the node {text!r} has no port in 1..65535")
    return host, int(port)


def connect_cluster(url: str, *, retries: int, socket_timeout: float,
                    max_connections: int | None = None) -> redis.cluster.RedisCluster:
    """A cluster client set up as ``connect`` sets up a node's (bytes replies, RESP2,
    retries with backoff). Unlike a node's client it asks a node for the slot map at
    once: a cluster that cannot be reached raises ``redis.ConnectionError`` here."""
    from redis.backoff import ExponentialWithJitterBackoff
    from redis.retry import Retry

    parsed = parse_cluster_url(url)
    options: dict[str, Any] = {"max_connections": max_connections} if max_connections else {}
    try:
        client = redis.cluster.RedisCluster(
            startup_nodes=[_sync_node(host, port) for host, port in parsed.nodes],
            protocol=2,
            decode_responses=False,
            retry=Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), retries),
            socket_timeout=socket_timeout,
            socket_connect_timeout=min(socket_timeout, 2.0),
            health_check_interval=0,
            ssl=parsed.tls,
            username=parsed.username,
            password=parsed.password,
            **options,
        )
    except redis.exceptions.RedisClusterException as error:  # no node answered the slot map
        raise redis.ConnectionError(f"no node of the cluster {url_without_password(url)} answered: {error}") from error
    _unreachable_as_connection_error(client.nodes_manager)
    client.commands_parser.__class__ = _KeysReadOffTheCommand  # the pipelines share the parser
    return client


def _unreachable_as_connection_error(manager: Any) -> None:
    """redis-py raises ``RedisClusterException`` (which is no ``redis.RedisError``) when
    no node answers the slot map, or the answers leave slots uncovered (a primary down,
    its replica not promoted yet): say it as the ``redis.ConnectionError`` it is, which
    the client's retries and every caller already treat as an outage. (The manager's
    class becomes a subclass that adds nothing but that: its ``__slots__`` are kept.)"""
    base = type(manager)
    guarded = _GUARDED.get(base)
    if guarded is None:
        if asyncio.iscoroutinefunction(base.initialize):
            async def initialize_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    return await base.initialize(self, *args, **kwargs)
                except redis.exceptions.RedisClusterException as error:
                    raise redis.ConnectionError(f"the cluster cannot be reached: {error}") from error

            body: dict[str, Any] = {"__slots__": (), "initialize": initialize_async}
        else:
            def initialize(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    return base.initialize(self, *args, **kwargs)
                except redis.exceptions.RedisClusterException as error:
                    raise redis.ConnectionError(f"the cluster cannot be reached: {error}") from error

            body = {"__slots__": (), "initialize": initialize}
        guarded = _GUARDED[base] = type(f"Guarded{base.__name__}", (base,), body)
    manager.__class__ = guarded


_GUARDED: dict[type, type] = {}


class _KeysReadOffTheCommand(CommandsParser):
    """redis-py's parser of a cluster client's commands (its pipelines share it), finding
    the keys of a stream read or a script call in the command (``command_keys``) instead
    of asking the default node for them. (The asyncio cluster client asks no node: it
    sends no stream reads, and routes a script call by its keys itself.)"""

    def get_keys(self, redis_conn: Any, *args: Any) -> Any:
        keys = command_keys(args)
        if keys is not None:
            return keys
        return super().get_keys(redis_conn, *args)  # type: ignore[no-untyped-call]


_STREAM_READS: Final = frozenset({"XREAD", "XREADGROUP"})
_SCRIPT_CALLS: Final = frozenset({"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO"})
# The options of a stream read before STREAMS, with how many arguments each takes.
_STREAM_READ_OPTIONS: Final = {"GROUP": 2, "COUNT": 1, "BLOCK": 1, "NOACK": 0}


def command_keys(args: Sequence[Any]) -> list[Any] | None:
    """The keys of a command redis-py would ask a node for (Redis flags their places as
    movable), for those read off the command here: a stream read (``XREAD``,
    ``XREADGROUP``: the options, then ``STREAMS``, then the keys and as many ids) and a
    script call (``EVALSHA`` sha numkeys keys... args...). None for any other command,
    or one this cannot read: the node is asked then."""
    if not args:
        return None
    name = _text(args[0]).upper()
    if name in _SCRIPT_CALLS:
        count = _text(args[2]) if len(args) >= 3 else ""
        if not count.isdigit() or 3 + int(count) > len(args):
            return None
        return list(args[3:3 + int(count)])
    if name not in _STREAM_READS:
        return None
    at = 1
    while at < len(args):
        word = _text(args[at]).upper()
        if word == "STREAMS":
            rest = args[at + 1:]
            if not rest or len(rest) % 2:
                return None
            return list(rest[:len(rest) // 2])
        taken = _STREAM_READ_OPTIONS.get(word)
        if taken is None:
            return None
        at += 1 + taken
    return None


def _text(arg: Any) -> str:
    if isinstance(arg, bytes | bytearray | memoryview):
        return bytes(arg).decode(errors="replace")
    return str(arg)


class _SlotMapFirst(aiocluster.RedisCluster):
    """redis-py 8.1's asyncio cluster client, asking for the slot map before a command
    is routed. Its ``execute_command`` resolves how to route a command *before* it
    initializes: commands sent while the first one is still fetching the slot map are
    sent to the default node, answered MOVED, and after a few MOVEDs the client closes
    every connection of every node, in use or not (60 concurrent first commands failed
    so in 9 of 30 runs on the local cluster; none once initialized first)."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        if self._initialize:
            await self.initialize()
        try:
            return await super().execute_command(*args, **kwargs)
        except RuntimeError as error:
            if not _closed_under_it(error):
                raise
            raise redis.ConnectionError(f"the connection was closed under the command (a failover?): "
                                        f"{str(error)[:120]}") from error


def _closed_under_it(error: RuntimeError) -> bool:
    """On a connection error the asyncio cluster client closes every node's connections,
    those other commands are using too; under uvloop, such a command's next write raises
    ``RuntimeError: unable to perform operation on <TCPTransport closed=True ...>; the
    handler is closed`` where asyncio's own loop raises a connection error. Said as the
    ``redis.ConnectionError`` it is (an outage a caller retries); any other RuntimeError
    as it was."""
    text = str(error)
    return "closed=True" in text or "handler is closed" in text


def _sync_node(host: str, port: int) -> redis.cluster.ClusterNode:
    node: Any = redis.cluster.ClusterNode
    built: redis.cluster.ClusterNode = node(host, port)
    return built


def connect_cluster_async(url: str, *, retries: int, socket_timeout: float,
                          max_connections: int) -> aiocluster.RedisCluster:
    """The asyncio cluster client (it asks for the slot map on its first command)."""
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialWithJitterBackoff

    parsed = parse_cluster_url(url)
    client = _SlotMapFirst(
        startup_nodes=[aiocluster.ClusterNode(host, port) for host, port in parsed.nodes],
        protocol=2,
        decode_responses=False,
        retry=Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), retries),
        socket_timeout=socket_timeout,
        socket_connect_timeout=min(socket_timeout, 2.0),
        health_check_interval=0,
        max_connections=max_connections,
        ssl=parsed.tls,
        username=parsed.username,
        password=parsed.password,
    )
    _unreachable_as_connection_error(client.nodes_manager)
    return client


def url_without_password(url: str) -> str:
    """The URL as it may be logged: a password in it replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    credentials, at, hosts = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    return f"{scheme}{sep}{credentials.partition(':')[0]}:***@{hosts}"


def is_cluster(client: object) -> bool:
    return isinstance(client, redis.cluster.RedisCluster | aiocluster.RedisCluster)


# ---------------------------------------------------------------- slots


def slot_of(key: str | bytes) -> int:
    """The cluster slot of a key (its hash tag's, when it has one), as Redis computes it."""
    return int(key_slot(key.encode() if isinstance(key, str) else key))


def same_slot(keys: Iterable[str | bytes]) -> bool:
    """Whether ``keys`` all hash to one slot (what a script, a MULTI or a multi-key
    command must keep on a cluster)."""
    return len({slot_of(key) for key in keys}) <= 1


# ---------------------------------------------------------------- scripts in a pipeline


def _is_noscript(reply: object) -> bool:
    return isinstance(reply, redis.exceptions.NoScriptError)


def evalsha_many(client: Any, script: str, sha: str, calls: Sequence[tuple[Sequence[Any], Sequence[Any]]]
                 ) -> list[Any]:
    """Run ``script`` once per (keys, args) in ``calls``, in one pipeline (not a
    transaction: each call atomic on its own), on one node's client or a cluster's (whose
    pipeline sends each node its calls). A NOSCRIPT answer loads the script (on every
    primary, on a cluster) and sends those calls again; any other error is raised."""
    replies = _evalsha_pipeline(client, sha, calls)
    missing = [i for i, reply in enumerate(replies) if _is_noscript(reply)]
    if missing:
        client.script_load(script)
        again = _evalsha_pipeline(client, sha, [calls[i] for i in missing])
        for i, reply in zip(missing, again, strict=True):
            replies[i] = reply
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def _evalsha_pipeline(client: Any, sha: str, calls: Sequence[tuple[Sequence[Any], Sequence[Any]]]) -> list[Any]:
    pipe = client.pipeline(transaction=False)
    for keys, args in calls:
        pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args)
    return list(pipe.execute(raise_on_error=False))


# ---------------------------------------------------------------- scans


def scan_partition(client: Any, tag_key: str, match: str, count: int = 1000) -> Iterator[bytes]:
    """SCAN for ``match`` where the keys of ``tag_key``'s slot live: on one node, the
    whole keyspace; on a cluster, the one primary holding that slot (redis-py's
    ``scan_iter`` would ask every primary)."""
    if isinstance(client, redis.cluster.RedisCluster):
        node = client.get_node_from_key(tag_key)  # type: ignore[no-untyped-call]
        yield from client.scan_iter(match=match, count=count, target_nodes=node)
    else:
        yield from client.scan_iter(match=match, count=count)


async def scan_partition_async(client: Any, tag_key: str, match: str, count: int = 1000
                               ) -> AsyncIterator[bytes]:
    """``scan_partition`` on an asyncio client."""
    if isinstance(client, aiocluster.RedisCluster):
        await client.initialize()  # the slot map, once: the client asks for it lazily
        node = client.get_node_from_key(tag_key)
        async for key in client.scan_iter(match=match, count=count, target_nodes=node):
            yield key
    else:
        async for key in client.scan_iter(match=match, count=count):
            yield key


# ---------------------------------------------------------------- Pub/Sub over nodes


def next_sharded_message(pubsub: Any, timeout: float) -> dict[str, Any] | None:
    """The next message of a Pub/Sub holding sharded subscriptions, waiting at most
    ``timeout`` seconds. On a cluster the subscriptions sit on one connection per node;
    redis-py's ``get_sharded_message(timeout=t)`` waits ``t`` on each node in turn, so a
    message on the second node could wait behind the first's whole timeout. Here every
    node's connection is polled, then all of them waited on together (``select``)."""
    nodes = getattr(pubsub, "node_pubsub_mapping", None)
    if not nodes or len(nodes) == 1:
        message: dict[str, Any] | None = pubsub.get_sharded_message(timeout=timeout)
        return message
    deadline = time.monotonic() + timeout
    while True:
        message = pubsub.get_sharded_message(timeout=0.0)  # every node once, without waiting
        if message is not None:
            return message
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sockets = [s for s in (_socket_of(p) for p in list(nodes.values())) if s is not None]
        if len(sockets) < len(nodes):  # a connection being re-made: wait a little, poll again
            time.sleep(min(left, 0.01))
            continue
        try:
            select.select(sockets, [], [], left)
        except (OSError, ValueError):  # a socket closed under us: poll (and reconnect)
            time.sleep(min(left, 0.01))


def _socket_of(node_pubsub: Any) -> Any | None:
    connection = getattr(node_pubsub, "connection", None)
    return getattr(connection, "_sock", None)
