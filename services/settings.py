"""Every setting a ``mighty`` process reads, from its flags and its environment, in one place.

A flag wins over its variable, a variable over the default:

| flag | variable | default |
|---|---|---|
| ``--redis-url`` | ``REDIS_URL`` | none: a command that needs a store refuses to guess |
| ``--namespace`` | ``MIGHTY_NAMESPACE`` | ``mighty`` |
| ``--partitions`` | ``MIGHTY_PARTITIONS`` | 16 (fixed for the life of the data, docs/store.md) |
| ``--durability`` | ``MIGHTY_DURABILITY`` | ``everysec`` (or ``always``: deploy/redis-always.conf) |
| | ``MIGHTY_IDEMPOTENCY_S`` | 86400: how long a command id is remembered (0: for ever) |
| ``--archive-url`` | ``MIGHTY_ARCHIVE_URL`` | none: archived tables cannot be read (docs/archive.md) |
| ``--archive-after-s`` | ``MIGHTY_ARCHIVE_AFTER_S`` | 3600: how long a table stays in Redis once closed |
| | ``MIGHTY_LOG_FORMAT`` | ``json`` unless stderr is a terminal, then ``console`` |
| | ``MIGHTY_LOG_LEVEL`` | ``info`` |

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

from services.store.keys import (
    DEFAULT_IDEMPOTENCY_S,
    DEFAULT_NAMESPACE,
    DEFAULT_PARTITIONS,
    MAX_PARTITIONS,
)

Durability = Literal["everysec", "always"]
LogFormat = Literal["json", "console"]

DEFAULT_ARCHIVE_AFTER_S: Final = 3600.0  # a closed table stays in Redis this long
DURABILITY_PROFILES: Final[tuple[Durability, ...]] = ("everysec", "always")
LOG_FORMATS: Final[tuple[LogFormat, ...]] = ("json", "console")
_NAMESPACE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")

# setting name -> the environment variable it is read from
ENVIRONMENT: Final[dict[str, str]] = {
    "redis_url": "REDIS_URL",
    "namespace": "MIGHTY_NAMESPACE",
    "partitions": "MIGHTY_PARTITIONS",
    "durability": "MIGHTY_DURABILITY",
    "idempotency_s": "MIGHTY_IDEMPOTENCY_S",
    "archive_url": "MIGHTY_ARCHIVE_URL",
    "archive_after_s": "MIGHTY_ARCHIVE_AFTER_S",
    "log_format": "MIGHTY_LOG_FORMAT",
    "log_level": "MIGHTY_LOG_LEVEL",
}


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
    idempotency_s: float = DEFAULT_IDEMPOTENCY_S
    archive_url: str | None = None  # PostgreSQL, where closed tables are archived
    archive_after_s: float = DEFAULT_ARCHIVE_AFTER_S
    log_format: LogFormat | None = None  # None: json unless stderr is a terminal
    log_level: str = "info"
    # Whether the namespace was chosen (a flag or MIGHTY_NAMESPACE) or is the default: the
    # demo plays under a fresh namespace of its own in a Redis it was given, unless told.
    namespace_chosen: bool = False

    def as_env(self) -> dict[str, str]:
        """The variables that give a child process these same settings."""
        env = {
            "MIGHTY_NAMESPACE": self.namespace,
            "MIGHTY_PARTITIONS": str(self.partitions),
            "MIGHTY_DURABILITY": self.durability,
            "MIGHTY_IDEMPOTENCY_S": repr(self.idempotency_s),
            "MIGHTY_ARCHIVE_AFTER_S": repr(self.archive_after_s),
            "MIGHTY_LOG_LEVEL": self.log_level,
        }
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        if self.archive_url:
            env["MIGHTY_ARCHIVE_URL"] = self.archive_url
        if self.log_format:
            env["MIGHTY_LOG_FORMAT"] = self.log_format
        return env

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
    """For a command that starts a Redis of its own (demo; serve later)."""
    parser.add_argument("--durability", default=None, choices=DURABILITY_PROFILES,
                        help="fsync profile of a Redis this command starts (default: $MIGHTY_DURABILITY or everysec)")


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
        if not re.match(r"(rediss?|unix)://", raw["redis_url"]):
            raise bad("redis_url", "a Redis URL starts with redis://, rediss:// or unix://")
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
    return msgspec.convert(values, Settings)
