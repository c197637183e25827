"""Every setting a ``mighty`` process reads, from its flags and its environment, in one place.

A flag wins over its variable, a variable over the default:

| flag | variable | default |
|---|---|---|
| ``--redis-url`` | ``REDIS_URL`` | none: a command that needs a store refuses to guess; ``redis+cluster://h:p,h:p`` names a cluster |
| ``--namespace`` | ``MIGHTY_NAMESPACE`` | ``mighty`` |
| ``--partitions`` | ``MIGHTY_PARTITIONS`` | 16 (fixed for the life of the data, docs/store.md) |
| ``--durability`` | ``MIGHTY_DURABILITY`` | ``everysec`` (or ``always``: deploy/redis-always.conf; or ``replicated``: a replica acknowledges each append, docs/reliability.md) |
| | ``MIGHTY_REPLICA_TIMEOUT_MS`` | 500: how long ``replicated`` waits for a replica before refusing (``unavailable``) |
| | ``MIGHTY_IDEMPOTENCY_S`` | 86400: how long a command id is remembered (0: for ever) |
| ``--archive-url`` | ``MIGHTY_ARCHIVE_URL`` | none: archived tables cannot be read (docs/archive.md) |
| ``--archive-after-s`` | ``MIGHTY_ARCHIVE_AFTER_S`` | 3600: how long a table stays in Redis once closed |
| | ``MIGHTY_LOG_FORMAT`` | ``json`` unless stderr is a terminal, then ``console`` |
| | ``MIGHTY_LOG_LEVEL`` | ``info`` |
| | ``MIGHTY_SUMMARY_S`` | 60: a worker's summary line (entries applied, turns timed out) at most this often, only when it did something |

The gateway's (``mighty gateway``, docs/gateway.md):

| flag | variable | default |
|---|---|---|
| ``--host``, ``--port`` | ``MIGHTY_HOST``, ``MIGHTY_PORT`` | ``127.0.0.1``, 8000 |
| | ``MIGHTY_SECRET`` | none: generated once per deployment and kept in Redis |
| | ``MIGHTY_TOKEN_TTL_S`` | 2592000 (30 days): a player token's lifetime |
| | ``MIGHTY_CORS_ORIGINS`` | none: comma-separated origins a browser may call from |
| | ``MIGHTY_RATE_COMMANDS``, ``MIGHTY_RATE_WINDOW_S`` | 20 commands per 2 s per player |
| | ``MIGHTY_MAX_LAG_S`` | 3.0: ``/readyz`` fails when a projection is further behind |
| | ``MIGHTY_QUOTA_WINDOW_S`` | 3600: the window the quotas below count in (docs/gateway.md, Quotas) |
| | ``MIGHTY_PLAYERS_PER_ADDRESS`` | 200 players created per client address per window |
| | ``MIGHTY_TABLES_PER_ADDRESS``, ``MIGHTY_TABLES_PER_PLAYER`` | 200, 30 tables created per window |
| | ``MIGHTY_QUICKPLAYS_PER_ADDRESS``, ``MIGHTY_QUICKPLAYS_PER_PLAYER`` | 600, 60 quickplays per window |
| | ``MIGHTY_SEATS_PER_PLAYER`` | 4 seats a player holds at once (open or playing tables) |
| | ``MIGHTY_PLAYER_TTL_S`` | 2592000 (30 days): a guest player record unused this long goes away |
| | ``MIGHTY_ACCESS_TTL_S`` | 900: an account's access token's lifetime (refreshed silently: docs/accounts.md) |
| | ``MIGHTY_SESSION_TTL_S`` | 2592000 (30 days): an account's session (its refresh token) unused this long ends |
| | ``MIGHTY_SESSION_CACHE_S`` | 1.0: how long a gateway trusts a session it found alive (0: asks Redis at every call) |
| | ``MIGHTY_LOGIN_WINDOW_S`` | 300: the window logins are counted in |
| | ``MIGHTY_LOGINS_PER_NAME``, ``MIGHTY_LOGINS_PER_ADDRESS`` | 10, 100 logins (and sign-ups) per window |
| | ``MIGHTY_WEB_DIR`` | ``clients/web/`` of this checkout: the web client served at ``/`` |

The gateway's sockets and connections (docs/gateway.md, *Sockets*):

| flag | variable | default |
|---|---|---|
| | ``MIGHTY_SOCKETS_PER_ADDRESS``, ``MIGHTY_SOCKETS_PER_PLAYER`` | 64, 8: open WebSockets per client address and per player, on each gateway |
| | ``MIGHTY_WS_PING_INTERVAL_S``, ``MIGHTY_WS_PING_TIMEOUT_S`` | 20, 20: the server pings each socket; one that answers no ping in time is closed |
| | ``MIGHTY_WS_SEND_TIMEOUT_S`` | 10: a client that takes no frame this long is closed (1013) |
| | ``MIGHTY_MAX_CONNECTIONS`` | 10000: connections (HTTP and WebSocket) a gateway holds at once; past it, 503 |
| | ``MIGHTY_GRACEFUL_SHUTDOWN_S`` | 10: how long a SIGTERM waits for requests and sockets to end |

The gateway's memory (docs/reliability.md, *Soak*):

| flag | variable | default |
|---|---|---|
| | ``MIGHTY_GC_EVERY_S`` | 60: a full garbage collection this often (0: only CPython's own) |
| | ``MIGHTY_DEBUG_TRACEMALLOC_S`` | 0 (off): log the allocations that grew most, this often (a debugging aid; costs memory and time); every process's, the workers' too |

Table lifecycle (every table ends; docs/operations.md, "Table lifecycle"):

| flag | variable | default |
|---|---|---|
| | ``MIGHTY_MAX_HANDS`` | 100: a match's most hands (``hands: 0`` asks for this many) |
| | ``MIGHTY_BOT_TABLE_HANDS`` | 10: the most hands of a table of bots only |
| | ``MIGHTY_TURN_SECONDS_MIN``, ``MIGHTY_TURN_SECONDS_MAX`` | 10, 3600: a turn's time (``turn_seconds: 0``: 60, within them) |
| | ``MIGHTY_IDLE_S`` | 600: a started table nobody watched or acted at for this long is closed (``idle``) |
| | ``MIGHTY_IDLE_OPEN_S`` | 1800: the same for a table that has not started |
| | ``MIGHTY_AWAY_AFTER_TIMEOUTS`` | 2: a person's seat whose turn times out this many times in a row is away: a bot plays it until its player is back (0: never; docs/bots.md, "Away seats") |
| | ``MIGHTY_AWAY_AFTER_GONE_S`` | 30: a person's seat at a playing table whose player has had no stream of it open (on any gateway) this many seconds is away (0: never; a player who never opened one is left to the timeouts; docs/bots.md, "Away seats") |

Table chat (docs/api.md, "Table chat"):

| flag | variable | default |
|---|---|---|
| | ``MIGHTY_CHAT_TEXT_MAX`` | 280: a message's most characters (1 to 1000) |
| | ``MIGHTY_CHAT_RATE``, ``MIGHTY_CHAT_RATE_WINDOW_S`` | 5 messages per 10 s a player |
| | ``MIGHTY_CHAT_PHRASE_RATE``, ``MIGHTY_CHAT_PHRASE_WINDOW_S`` | 12 quick phrases per 60 s a player |
| | ``MIGHTY_CHAT_RECENT``, ``MIGHTY_CHAT_RECENT_S`` | 3, 60: a message repeating one of the player's last 3 within 60 s (case, spaces and punctuation aside) is refused (0: no such rule) |

Leaderboards (docs/ratings.md):

| flag | variable | default |
|---|---|---|
| | ``MIGHTY_RATINGS_MIN_HANDS`` | 10: the rated hands a player needs in a rule set to appear on its leaderboard (docs/ratings.md) |
| | ``MIGHTY_RATINGS_RECENT_DAYS`` | 28: and a rated hand within this many days |

Nothing else in ``services/`` reads these variables: processes get a ``Settings`` and
pass it on (to ``services.bootstrap``, and to the worker processes they start, through
``as_env``).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
from collections.abc import Callable, Mapping
from typing import Final, Literal

import msgspec

from services.store.cluster import BadClusterUrl, is_cluster_url, parse_cluster_url
from services.store.keys import (
    DEFAULT_IDEMPOTENCY_S,
    DEFAULT_NAMESPACE,
    DEFAULT_PARTITIONS,
    MAX_PARTITIONS,
)
from services.store.redis_store import DEFAULT_WAIT_TIMEOUT_MS

Durability = Literal["everysec", "always", "replicated"]
LogFormat = Literal["json", "console"]

DEFAULT_ARCHIVE_AFTER_S: Final = 3600.0  # a closed table stays in Redis this long
DURABILITY_PROFILES: Final[tuple[Durability, ...]] = ("everysec", "always", "replicated")
LOG_FORMATS: Final[tuple[LogFormat, ...]] = ("json", "console")
_NAMESPACE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")

# setting name -> the environment variable it is read from
ENVIRONMENT: Final[dict[str, str]] = {
    "redis_url": "REDIS_URL",
    "namespace": "MIGHTY_NAMESPACE",
    "partitions": "MIGHTY_PARTITIONS",
    "durability": "MIGHTY_DURABILITY",
    "replica_timeout_ms": "MIGHTY_REPLICA_TIMEOUT_MS",
    "idempotency_s": "MIGHTY_IDEMPOTENCY_S",
    "archive_url": "MIGHTY_ARCHIVE_URL",
    "archive_after_s": "MIGHTY_ARCHIVE_AFTER_S",
    "log_format": "MIGHTY_LOG_FORMAT",
    "log_level": "MIGHTY_LOG_LEVEL",
    "summary_s": "MIGHTY_SUMMARY_S",
    "host": "MIGHTY_HOST",
    "port": "MIGHTY_PORT",
    "secret": "MIGHTY_SECRET",
    "token_ttl_s": "MIGHTY_TOKEN_TTL_S",
    "cors_origins": "MIGHTY_CORS_ORIGINS",
    "rate_commands": "MIGHTY_RATE_COMMANDS",
    "rate_window_s": "MIGHTY_RATE_WINDOW_S",
    "max_lag_s": "MIGHTY_MAX_LAG_S",
    "web_dir": "MIGHTY_WEB_DIR",
    # quotas and admission (docs/gateway.md, Quotas)
    "quota_window_s": "MIGHTY_QUOTA_WINDOW_S",
    "players_per_address": "MIGHTY_PLAYERS_PER_ADDRESS",
    "tables_per_address": "MIGHTY_TABLES_PER_ADDRESS",
    "tables_per_player": "MIGHTY_TABLES_PER_PLAYER",
    "quickplays_per_address": "MIGHTY_QUICKPLAYS_PER_ADDRESS",
    "quickplays_per_player": "MIGHTY_QUICKPLAYS_PER_PLAYER",
    "seats_per_player": "MIGHTY_SEATS_PER_PLAYER",
    "player_ttl_s": "MIGHTY_PLAYER_TTL_S",
    # accounts (docs/accounts.md)
    "access_ttl_s": "MIGHTY_ACCESS_TTL_S",
    "session_ttl_s": "MIGHTY_SESSION_TTL_S",
    "session_cache_s": "MIGHTY_SESSION_CACHE_S",
    "login_window_s": "MIGHTY_LOGIN_WINDOW_S",
    "logins_per_name": "MIGHTY_LOGINS_PER_NAME",
    "logins_per_address": "MIGHTY_LOGINS_PER_ADDRESS",
    # sockets (docs/gateway.md, Sockets)
    "sockets_per_address": "MIGHTY_SOCKETS_PER_ADDRESS",
    "sockets_per_player": "MIGHTY_SOCKETS_PER_PLAYER",
    "ws_ping_interval_s": "MIGHTY_WS_PING_INTERVAL_S",
    "ws_ping_timeout_s": "MIGHTY_WS_PING_TIMEOUT_S",
    "ws_send_timeout_s": "MIGHTY_WS_SEND_TIMEOUT_S",
    "ws_deflate": "MIGHTY_WS_DEFLATE",
    "stream_starts": "MIGHTY_STREAM_STARTS",
    "stream_start_queue": "MIGHTY_STREAM_START_QUEUE",
    "stream_start_wait_s": "MIGHTY_STREAM_START_WAIT_S",
    "max_connections": "MIGHTY_MAX_CONNECTIONS",
    "graceful_shutdown_s": "MIGHTY_GRACEFUL_SHUTDOWN_S",
    # the gateway's memory (docs/reliability.md, Soak)
    "gc_every_s": "MIGHTY_GC_EVERY_S",
    "debug_tracemalloc_s": "MIGHTY_DEBUG_TRACEMALLOC_S",
    # table lifecycle
    "max_hands": "MIGHTY_MAX_HANDS",
    "bot_table_hands": "MIGHTY_BOT_TABLE_HANDS",
    "turn_seconds_min": "MIGHTY_TURN_SECONDS_MIN",
    "turn_seconds_max": "MIGHTY_TURN_SECONDS_MAX",
    "idle_s": "MIGHTY_IDLE_S",
    "idle_open_s": "MIGHTY_IDLE_OPEN_S",
    "away_after_timeouts": "MIGHTY_AWAY_AFTER_TIMEOUTS",
    "away_after_gone_s": "MIGHTY_AWAY_AFTER_GONE_S",
    # table chat (docs/api.md, Table chat)
    "chat_text_max": "MIGHTY_CHAT_TEXT_MAX",
    "chat_rate": "MIGHTY_CHAT_RATE",
    "chat_rate_window_s": "MIGHTY_CHAT_RATE_WINDOW_S",
    "chat_phrase_rate": "MIGHTY_CHAT_PHRASE_RATE",
    "chat_phrase_window_s": "MIGHTY_CHAT_PHRASE_WINDOW_S",
    "chat_recent": "MIGHTY_CHAT_RECENT",
    "chat_recent_s": "MIGHTY_CHAT_RECENT_S",
    # ratings (docs/ratings.md)
    "ratings_min_hands": "MIGHTY_RATINGS_MIN_HANDS",
    "ratings_recent_days": "MIGHTY_RATINGS_RECENT_DAYS",
}
# what an on/off setting may say
SWITCH: Final[dict[str, bool]] = {"1": True, "on": True, "true": True, "yes": True,
                                  "0": False, "off": False, "false": False, "no": False}
# table chat: whole numbers >= 1 each, but the rule against repeats (0: off)
CHAT: Final[tuple[str, ...]] = ("chat_text_max", "chat_rate", "chat_rate_window_s", "chat_phrase_rate",
                                "chat_phrase_window_s", "chat_recent", "chat_recent_s")
CHAT_TEXT_CEILING: Final = 1000  # the most MIGHTY_CHAT_TEXT_MAX may be
# the quotas: a whole number >= 1 each (docs/gateway.md, Quotas)
QUOTAS: Final[tuple[str, ...]] = ("quota_window_s", "players_per_address", "tables_per_address",
                                  "tables_per_player", "quickplays_per_address", "quickplays_per_player",
                                  "seats_per_player", "player_ttl_s")
# accounts: a whole number >= 1 each (docs/accounts.md)
ACCOUNTS: Final[tuple[str, ...]] = ("access_ttl_s", "session_ttl_s", "login_window_s", "logins_per_name",
                                    "logins_per_address")
MIN_SECRET: Final = 16  # characters of a token-signing secret given by the operator


class SettingsError(ValueError):
    """A setting that cannot be used; the message names the flag or variable and says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """What a process is configured with; build it with ``settings_from`` (checked)."""

    redis_url: str | None = None
    namespace: str = DEFAULT_NAMESPACE
    partitions: int = DEFAULT_PARTITIONS
    durability: Durability = "everysec"
    replica_timeout_ms: int = DEFAULT_WAIT_TIMEOUT_MS  # the replicated profile's WAIT
    idempotency_s: float = DEFAULT_IDEMPOTENCY_S
    archive_url: str | None = None  # PostgreSQL, where closed tables are archived
    archive_after_s: float = DEFAULT_ARCHIVE_AFTER_S
    log_format: LogFormat | None = None  # None: json unless stderr is a terminal
    log_level: str = "info"
    summary_s: float = 60.0  # a worker's summary line at most this often (docs/workers.md, Logs)
    # Whether the namespace was chosen (a flag or MIGHTY_NAMESPACE) or is the default: the
    # demo plays under a fresh namespace of its own in a Redis it was given, unless told.
    namespace_chosen: bool = False
    # the gateway (docs/gateway.md)
    host: str = "127.0.0.1"
    port: int = 8000
    secret: str | None = None  # token signing key; None: generated once and kept in Redis
    token_ttl_s: int = 30 * 24 * 3600
    cors_origins: tuple[str, ...] = ()
    rate_commands: int = 20  # per player per window, counted by each gateway and shared in Redis (command_rate.py)
    rate_window_s: int = 2
    max_lag_s: float = 3.0
    web_dir: str | None = None  # None: clients/web/ of this checkout
    # quotas and admission, counted in Redis by every gateway (docs/gateway.md, Quotas).
    # Per address: generous, since many players may share one (a NAT, a campus).
    quota_window_s: int = 3600
    players_per_address: int = 200
    tables_per_address: int = 200
    tables_per_player: int = 30
    quickplays_per_address: int = 600
    quickplays_per_player: int = 60
    seats_per_player: int = 4  # seats held at once at open or playing tables
    player_ttl_s: int = 30 * 24 * 3600  # a guest record unused this long goes away
    # accounts (docs/accounts.md): short access tokens refreshed by a session's refresh token
    access_ttl_s: int = 900
    session_ttl_s: int = 30 * 24 * 3600  # a session unused (not refreshed) this long ends
    session_cache_s: float = 1.0  # a session found alive is trusted this long by the gateway that found it
    login_window_s: int = 300  # logins and sign-ups counted per name and per address in this window
    logins_per_name: int = 10
    logins_per_address: int = 100
    # sockets and connections (docs/gateway.md, Sockets): quotas counted by each gateway
    sockets_per_address: int = 64
    sockets_per_player: int = 8  # a player may have a few tabs open
    ws_ping_interval_s: float = 20.0  # the server's pings; no answer in ws_ping_timeout_s: closed
    ws_ping_timeout_s: float = 20.0
    ws_send_timeout_s: float = 10.0  # a client that takes no frame this long is closed (1013)
    # permessage-deflate offered by a client is taken (docs/gateway.md, Sockets: a seat's
    # frames go ~20x smaller on the wire, for ~45 KB of gateway memory a socket and ~5 %
    # of its CPU; off behind a proxy that compresses, or where CPU costs more than bytes)
    ws_deflate: bool = True
    # stream starts let in a few at a time (services/gateway/admission.py): at once, waiting, the longest wait
    stream_starts: int = 32
    stream_start_queue: int = 10_000
    stream_start_wait_s: float = 30.0
    max_connections: int = 10_000  # uvicorn's limit_concurrency
    graceful_shutdown_s: float = 10.0  # a SIGTERM's grace period
    # the gateway's memory (services/gateway/collector.py, services/memory_trace.py): 0 turns either off
    gc_every_s: float = 60.0  # a full garbage collection this often
    debug_tracemalloc_s: float = 0.0  # log the allocations that grew most this often
    # table lifecycle: every table ends (services/app/lifecycle.py, services/bots/idle.py)
    max_hands: int = 100  # a match's most hands; a new table's ``hands: 0`` is this many
    bot_table_hands: int = 10  # the most hands of a table whose every seat is a bot's
    turn_seconds_min: int = 10  # a turn's least time; ``turn_seconds: 0`` is 60 s (within min..max)
    turn_seconds_max: int = 3600
    idle_s: float = 600.0  # a started table nobody watched or acted at this long is closed (idle)
    idle_open_s: float = 1800.0  # the same for a table that has not started
    away_after_timeouts: int = 2  # a seat timed out this many turns in a row is away (0: never)
    # a seat whose player had no stream of the playing table open this long is away (0: never)
    away_after_gone_s: int = 30
    # table chat (services/gateway/chat.py): a message's length, a player's rates, repeats
    chat_text_max: int = 280
    chat_rate: int = 5  # messages per chat_rate_window_s a player
    chat_rate_window_s: int = 10
    chat_phrase_rate: int = 12  # quick phrases per chat_phrase_window_s a player
    chat_phrase_window_s: int = 60
    chat_recent: int = 3  # a text repeating one of the player's last this many (0: no such rule) ...
    chat_recent_s: int = 60  # ... within this long is refused
    # the leaderboards (docs/ratings.md): rated hands, and a rated hand this recent, to appear
    ratings_min_hands: int = 10
    ratings_recent_days: int = 28

    def as_env(self) -> dict[str, str]:
        """The variables that give a child process these same settings."""
        env = {
            "MIGHTY_NAMESPACE": self.namespace,
            "MIGHTY_PARTITIONS": str(self.partitions),
            "MIGHTY_DURABILITY": self.durability,
            "MIGHTY_REPLICA_TIMEOUT_MS": str(self.replica_timeout_ms),
            "MIGHTY_IDEMPOTENCY_S": repr(self.idempotency_s),
            "MIGHTY_ARCHIVE_AFTER_S": repr(self.archive_after_s),
            "MIGHTY_LOG_LEVEL": self.log_level,
            "MIGHTY_SUMMARY_S": repr(self.summary_s),
            "MIGHTY_HOST": self.host,
            "MIGHTY_PORT": str(self.port),
            "MIGHTY_TOKEN_TTL_S": str(self.token_ttl_s),
            "MIGHTY_RATE_COMMANDS": str(self.rate_commands),
            "MIGHTY_RATE_WINDOW_S": str(self.rate_window_s),
            "MIGHTY_MAX_LAG_S": repr(self.max_lag_s),
            # sockets
            "MIGHTY_SOCKETS_PER_ADDRESS": str(self.sockets_per_address),
            "MIGHTY_SOCKETS_PER_PLAYER": str(self.sockets_per_player),
            "MIGHTY_WS_PING_INTERVAL_S": repr(self.ws_ping_interval_s),
            "MIGHTY_WS_PING_TIMEOUT_S": repr(self.ws_ping_timeout_s),
            "MIGHTY_WS_SEND_TIMEOUT_S": repr(self.ws_send_timeout_s),
            "MIGHTY_WS_DEFLATE": "1" if self.ws_deflate else "0",
            "MIGHTY_STREAM_STARTS": str(self.stream_starts),
            "MIGHTY_STREAM_START_QUEUE": str(self.stream_start_queue),
            "MIGHTY_STREAM_START_WAIT_S": repr(self.stream_start_wait_s),
            "MIGHTY_MAX_CONNECTIONS": str(self.max_connections),
            "MIGHTY_GRACEFUL_SHUTDOWN_S": repr(self.graceful_shutdown_s),
            # memory
            "MIGHTY_GC_EVERY_S": repr(self.gc_every_s),
            "MIGHTY_DEBUG_TRACEMALLOC_S": repr(self.debug_tracemalloc_s),
            # table lifecycle
            "MIGHTY_MAX_HANDS": str(self.max_hands),
            "MIGHTY_BOT_TABLE_HANDS": str(self.bot_table_hands),
            "MIGHTY_TURN_SECONDS_MIN": str(self.turn_seconds_min),
            "MIGHTY_TURN_SECONDS_MAX": str(self.turn_seconds_max),
            "MIGHTY_IDLE_S": repr(self.idle_s),
            "MIGHTY_IDLE_OPEN_S": repr(self.idle_open_s),
            "MIGHTY_AWAY_AFTER_TIMEOUTS": str(self.away_after_timeouts),
            "MIGHTY_AWAY_AFTER_GONE_S": str(self.away_after_gone_s),
            "MIGHTY_RATINGS_MIN_HANDS": str(self.ratings_min_hands),
            "MIGHTY_RATINGS_RECENT_DAYS": str(self.ratings_recent_days),
        }
        env.update({ENVIRONMENT[name]: str(getattr(self, name)) for name in QUOTAS + ACCOUNTS + CHAT})
        env["MIGHTY_SESSION_CACHE_S"] = repr(self.session_cache_s)
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        if self.archive_url:
            env["MIGHTY_ARCHIVE_URL"] = self.archive_url
        if self.log_format:
            env["MIGHTY_LOG_FORMAT"] = self.log_format
        if self.secret:
            env["MIGHTY_SECRET"] = self.secret
        if self.cors_origins:
            env["MIGHTY_CORS_ORIGINS"] = ",".join(self.cors_origins)
        if self.web_dir:
            env["MIGHTY_WEB_DIR"] = self.web_dir
        return env

    @property
    def fsync(self) -> str:
        """The ``appendfsync`` a Redis this process starts gets for the profile
        (``replicated`` fsyncs every second on each node, and waits for a replica)."""
        return "always" if self.durability == "always" else "everysec"

    @property
    def wait_replicas(self) -> int:
        """How many replicas must acknowledge an append (the replicated profile: 1)."""
        return 1 if self.durability == "replicated" else 0

    def store_flags(self) -> list[str]:
        """The flags that point another ``mighty`` command at the same store."""
        flags = ["--redis-url", self.redis_url or "", "--namespace", self.namespace]
        if self.partitions != DEFAULT_PARTITIONS:
            flags += ["--partitions", str(self.partitions)]
        return flags


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--redis-url``, ``--namespace``, ``--partitions``: every command that reads or
    writes the store takes them alike. Their defaults are None so that an absent flag
    falls back to the environment in ``settings_from``."""
    group = parser.add_argument_group("store")
    group.add_argument("--redis-url", default=None, help="the Redis the tables live in (default: $REDIS_URL)")
    group.add_argument("--namespace", default=None,
                       help=f"key prefix (default: $MIGHTY_NAMESPACE or {DEFAULT_NAMESPACE})")
    group.add_argument("--partitions", default=None,
                       help=f"partition count (default: $MIGHTY_PARTITIONS or {DEFAULT_PARTITIONS})")
    group.add_argument("--archive-url", default=None,
                       help="the PostgreSQL archived tables live in (default: $MIGHTY_ARCHIVE_URL)")


def add_durability_option(parser: argparse.ArgumentParser) -> None:
    """For a command that starts a Redis of its own (demo, serve)."""
    parser.add_argument("--durability", default=None, choices=DURABILITY_PROFILES,
                        help="durability profile: the fsync of a Redis this command starts, and replicated: "
                             "wait for a replica (default: $MIGHTY_DURABILITY or everysec)")


def settings_from(args: argparse.Namespace | None = None,
                  environ: Mapping[str, str] | None = None,
                  defaults: Mapping[str, str] | None = None) -> Settings:
    """The settings from ``args`` (flags that are set), else ``environ``, else a command's
    own ``defaults`` (the demo logs warnings only), else the defaults above."""
    environ = os.environ if environ is None else environ
    raw: dict[str, str] = dict(defaults or {})
    source: dict[str, str] = {name: "default" for name in raw}
    for name, variable in ENVIRONMENT.items():
        flag = getattr(args, name, None) if args is not None else None
        if flag is not None:
            raw[name], source[name] = str(flag), "--" + name.replace("_", "-")
        elif environ.get(variable):
            raw[name], source[name] = environ[variable], variable
    return _checked(raw, source)


def _checked(raw: dict[str, str], source: dict[str, str]) -> Settings:
    def bad(name: str, why: str) -> SettingsError:
        return SettingsError(f"{source[name]}={raw[name]!r}: {why}")

    values: dict[str, object] = {}
    if "redis_url" in raw:
        if is_cluster_url(raw["redis_url"]):
            try:
                parse_cluster_url(raw["redis_url"])
            except BadClusterUrl as error:
                raise bad("redis_url", str(error)) from None
        elif not re.match(r"(rediss?|unix)://", raw["redis_url"]):
            raise bad("redis_url", "a Redis URL starts with redis://, rediss://, unix://, "
                                   "or redis+cluster:// for a cluster")
        values["redis_url"] = raw["redis_url"]
    if "namespace" in raw:
        if not _NAMESPACE.fullmatch(raw["namespace"]):
            raise bad("namespace", "a namespace is 1 to 64 of A-Z a-z 0-9 _ . -")
        values["namespace"] = raw["namespace"]
        values["namespace_chosen"] = source["namespace"] != "default"
    if "partitions" in raw:
        text = raw["partitions"]
        if not text.isdigit() or not 1 <= int(text) <= MAX_PARTITIONS:
            raise bad("partitions", f"the partition count is an integer in 1..{MAX_PARTITIONS}")
        values["partitions"] = int(text)
    if "durability" in raw:
        if raw["durability"] not in DURABILITY_PROFILES:
            raise bad("durability", f"the durability profile is one of {', '.join(DURABILITY_PROFILES)}")
        values["durability"] = raw["durability"]
    if "idempotency_s" in raw:
        try:
            window = float(raw["idempotency_s"])
        except ValueError:
            window = -1.0
        if not window >= 0:
            raise bad("idempotency_s", "the idempotency window is a number of seconds >= 0 (0: for ever)")
        values["idempotency_s"] = window
    if "archive_url" in raw:
        if not re.match(r"postgres(ql)?://", raw["archive_url"]):
            raise bad("archive_url", "a PostgreSQL URL starts with postgresql:// or postgres://")
        values["archive_url"] = raw["archive_url"]
    if "archive_after_s" in raw:
        try:
            after = float(raw["archive_after_s"])
        except ValueError:
            after = -1.0
        if not after >= 0 or after == float("inf"):
            raise bad("archive_after_s", "the archive delay is a number of seconds >= 0")
        values["archive_after_s"] = after
    if "log_format" in raw:
        if raw["log_format"] not in LOG_FORMATS:
            raise bad("log_format", f"the log format is one of {', '.join(LOG_FORMATS)}")
        values["log_format"] = raw["log_format"]
    if "log_level" in raw:
        if raw["log_level"].upper() not in logging.getLevelNamesMapping():
            raise bad("log_level", "the log level is one of debug, info, warning, error, critical")
        values["log_level"] = raw["log_level"].lower()
    for name, least in (("port", 1), ("token_ttl_s", 1), ("rate_commands", 1), ("rate_window_s", 1),
                        ("replica_timeout_ms", 1), *((name, 1) for name in QUOTAS + ACCOUNTS),
                        ("sockets_per_address", 1), ("sockets_per_player", 1), ("max_connections", 1),
                        ("stream_starts", 1), ("stream_start_queue", 0),
                        ("max_hands", 1), ("bot_table_hands", 1), ("turn_seconds_min", 1), ("turn_seconds_max", 1),
                        ("away_after_timeouts", 0), ("away_after_gone_s", 0), ("ratings_min_hands", 1),
                        ("ratings_recent_days", 1), *((name, 0 if name == "chat_recent" else 1) for name in CHAT)):
        if name in raw:
            text = raw[name]
            if not text.isdigit() or int(text) < least or (name == "port" and int(text) > 65535):
                raise bad(name, "a port is an integer in 1..65535" if name == "port"
                          else "a positive whole number" if least else "a whole number >= 0")
            values[name] = int(text)
    if "ws_deflate" in raw:
        if raw["ws_deflate"].lower() not in SWITCH:
            raise bad("ws_deflate", "a switch is 1 or 0 (on, off, true, false, yes, no)")
        values["ws_deflate"] = SWITCH[raw["ws_deflate"].lower()]
    if "host" in raw:
        values["host"] = raw["host"]
    if "web_dir" in raw:
        values["web_dir"] = raw["web_dir"]
    if "secret" in raw:
        if len(raw["secret"]) < MIN_SECRET:
            # the message never repeats a secret
            raise SettingsError(f"{source['secret']}: a token secret is at least {MIN_SECRET} characters")
        values["secret"] = raw["secret"]
    if "cors_origins" in raw:
        origins = tuple(o.strip() for o in raw["cors_origins"].split(",") if o.strip())
        for origin in origins:
            if origin != "*" and not re.fullmatch(r"https?://[^/\s]+", origin):
                raise bad("cors_origins", f"{origin!r} is not an origin (scheme://host[:port], or *)")
        values["cors_origins"] = origins
    if "max_lag_s" in raw:
        try:
            lag = float(raw["max_lag_s"])
        except ValueError:
            lag = -1.0
        if not lag > 0:
            raise bad("max_lag_s", "the readiness lag is a number of seconds > 0")
        values["max_lag_s"] = lag
    values.update(_durations(raw, bad, ("ws_ping_interval_s", "ws_ping_timeout_s", "ws_send_timeout_s",
                                        "graceful_shutdown_s", "stream_start_wait_s"), "a number of seconds > 0"))
    values.update(_durations(raw, bad, ("idle_s", "idle_open_s"), "an idle time is a number of seconds > 0"))
    values.update(_durations(raw, bad, ("summary_s",), "a summary's period is a number of seconds > 0"))
    values.update(_durations(raw, bad, ("session_cache_s",), "a number of seconds >= 0 (0: no cache)", least=0.0))
    values.update(_durations(raw, bad, ("gc_every_s", "debug_tracemalloc_s"),
                             "a number of seconds >= 0 (0: off)", least=0.0))
    _check_turn_bounds(raw, values, bad)
    if "chat_text_max" in values and int(str(values["chat_text_max"])) > CHAT_TEXT_CEILING:
        raise bad("chat_text_max", f"a chat message's most characters are 1 to {CHAT_TEXT_CEILING}")
    return msgspec.convert(values, Settings)


def _durations(raw: dict[str, str], bad: Callable[[str, str], SettingsError], names: tuple[str, ...],
               rule: str, least: float | None = None) -> dict[str, float]:
    """Durations (the sockets', the idle times): each a finite number of seconds > 0
    (or ``least`` and more, when given)."""
    values: dict[str, float] = {}
    for name in names:
        if name in raw:
            try:
                seconds = float(raw[name])
            except ValueError:
                seconds = -1.0
            if not (seconds > 0 if least is None else seconds >= least) or seconds == float("inf"):
                raise bad(name, rule)
            values[name] = seconds
    return values


def _check_turn_bounds(raw: dict[str, str], values: dict[str, object],
                       bad: Callable[[str, str], SettingsError]) -> None:
    """A turn's floor is not above its maximum (the table lifecycle)."""
    default = Settings()
    least = values.get("turn_seconds_min", default.turn_seconds_min)
    most = values.get("turn_seconds_max", default.turn_seconds_max)
    if isinstance(least, int) and isinstance(most, int) and least > most:
        raise bad("turn_seconds_min" if "turn_seconds_min" in raw else "turn_seconds_max",
                  f"a turn's least time ({least} s) is above its most ({most} s)")
