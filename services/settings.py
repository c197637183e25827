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

The gateway's (``mighty gateway``, docs/gateway.md):

| flag | variable | default |
|---|---|---|
| ``--host``, ``--port`` | ``MIGHTY_HOST``, ``MIGHTY_PORT`` | ``127.0.0.1``, 8000 |
| | ``MIGHTY_SECRET`` | none: generated once per deployment and kept in Redis |
| | ``MIGHTY_TOKEN_TTL_S`` | 2592000 (30 days): a player token's lifetime |
| | ``MIGHTY_CORS_ORIGINS`` | none: comma-separated origins a browser may call from |
| | ``MIGHTY_RATE_COMMANDS``, ``MIGHTY_RATE_WINDOW_S`` | 20 commands per 2 s per player |
| | ``MIGHTY_MAX_LAG_S`` | 3.0: ``/readyz`` fails when a projection is further behind |
| | ``MIGHTY_WEB_DIR`` | ``clients/web/`` of this checkout: the web client served at ``/`` |

Nothing else in ``services/`` reads these variables: processes get a ``Settings`` and
pass it on (to ``services.bootstrap``, and to the worker processes they start, through
``as_env``).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
from collections.abc import Mapping
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
    "host": "MIGHTY_HOST",
    "port": "MIGHTY_PORT",
    "secret": "MIGHTY_SECRET",
    "token_ttl_s": "MIGHTY_TOKEN_TTL_S",
    "cors_origins": "MIGHTY_CORS_ORIGINS",
    "rate_commands": "MIGHTY_RATE_COMMANDS",
    "rate_window_s": "MIGHTY_RATE_WINDOW_S",
    "max_lag_s": "MIGHTY_MAX_LAG_S",
    "web_dir": "MIGHTY_WEB_DIR",
}
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
    # Whether the namespace was chosen (a flag or MIGHTY_NAMESPACE) or is the default: the
    # demo plays under a fresh namespace of its own in a Redis it was given, unless told.
    namespace_chosen: bool = False
    # the gateway (docs/gateway.md)
    host: str = "127.0.0.1"
    port: int = 8000
    secret: str | None = None  # token signing key; None: generated once and kept in Redis
    token_ttl_s: int = 30 * 24 * 3600
    cors_origins: tuple[str, ...] = ()
    rate_commands: int = 20  # per player per window, shared by every gateway (kept in Redis)
    rate_window_s: int = 2
    max_lag_s: float = 3.0
    web_dir: str | None = None  # None: clients/web/ of this checkout

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
            "MIGHTY_HOST": self.host,
            "MIGHTY_PORT": str(self.port),
            "MIGHTY_TOKEN_TTL_S": str(self.token_ttl_s),
            "MIGHTY_RATE_COMMANDS": str(self.rate_commands),
            "MIGHTY_RATE_WINDOW_S": str(self.rate_window_s),
            "MIGHTY_MAX_LAG_S": repr(self.max_lag_s),
        }
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
                        ("replica_timeout_ms", 1)):
        if name in raw:
            text = raw[name]
            if not text.isdigit() or int(text) < least or (name == "port" and int(text) > 65535):
                raise bad(name, "a port is an integer in 1..65535" if name == "port"
                          else "a positive whole number")
            values[name] = int(text)
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
    return msgspec.convert(values, Settings)
