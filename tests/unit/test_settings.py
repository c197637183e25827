"""services/settings.py: one reading of flags and environment for every process; a flag
wins over its variable, a variable over the default; a bad value names where it came from."""

from __future__ import annotations

import argparse

import pytest

from services.settings import (
    ENVIRONMENT,
    Settings,
    SettingsError,
    add_durability_option,
    add_store_options,
    settings_from,
)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_store_options(parser)
    add_durability_option(parser)
    return parser.parse_args(argv)


def test_without_flags_or_variables_the_defaults_hold_and_no_store_is_guessed() -> None:
    found = settings_from(parse([]), environ={})
    assert found == Settings()
    assert found.redis_url is None and found.namespace == "mighty" and found.partitions == 16
    assert found.durability == "everysec" and not found.namespace_chosen


def test_variables_are_read_when_no_flag_is_given() -> None:
    environ = {"REDIS_URL": "redis://h:1/0", "MIGHTY_NAMESPACE": "ns", "MIGHTY_PARTITIONS": "4",
               "MIGHTY_DURABILITY": "always", "MIGHTY_LOG_FORMAT": "console", "MIGHTY_LOG_LEVEL": "DEBUG"}
    found = settings_from(parse([]), environ=environ)
    assert found == Settings(redis_url="redis://h:1/0", namespace="ns", partitions=4, durability="always",
                             log_format="console", log_level="debug", namespace_chosen=True)


def test_a_flag_wins_over_its_variable() -> None:
    environ = {"REDIS_URL": "redis://env:1/0", "MIGHTY_NAMESPACE": "env", "MIGHTY_PARTITIONS": "4"}
    found = settings_from(parse(["--redis-url", "redis://flag:2/0", "--namespace", "flag",
                                 "--partitions", "8", "--durability", "always"]), environ=environ)
    assert (found.redis_url, found.namespace, found.partitions, found.durability) == (
        "redis://flag:2/0", "flag", 8, "always")


def test_a_command_default_yields_to_the_environment() -> None:
    assert settings_from(None, environ={}, defaults={"log_level": "warning"}).log_level == "warning"
    assert settings_from(None, environ={"MIGHTY_LOG_LEVEL": "info"}, defaults={"log_level": "warning"}).log_level == "info"


@pytest.mark.parametrize(("environ", "named"), [
    ({"MIGHTY_PARTITIONS": "0"}, "MIGHTY_PARTITIONS='0'"),
    ({"MIGHTY_PARTITIONS": "sixteen"}, "MIGHTY_PARTITIONS='sixteen'"),
    ({"MIGHTY_NAMESPACE": "a b"}, "MIGHTY_NAMESPACE='a b'"),
    ({"MIGHTY_DURABILITY": "never"}, "MIGHTY_DURABILITY='never'"),
    ({"MIGHTY_LOG_FORMAT": "xml"}, "MIGHTY_LOG_FORMAT='xml'"),
    ({"MIGHTY_LOG_LEVEL": "loud"}, "MIGHTY_LOG_LEVEL='loud'"),
    ({"REDIS_URL": "127.0.0.1:6379"}, "REDIS_URL='127.0.0.1:6379'"),
    ({"MIGHTY_ARCHIVE_URL": "redis://h:1/0"}, "MIGHTY_ARCHIVE_URL='redis://h:1/0'"),
    ({"MIGHTY_ARCHIVE_AFTER_S": "-1"}, "MIGHTY_ARCHIVE_AFTER_S='-1'"),
    ({"MIGHTY_ARCHIVE_AFTER_S": "an hour"}, "MIGHTY_ARCHIVE_AFTER_S='an hour'"),
])
def test_a_bad_value_is_refused_naming_its_variable(environ: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_from(None, environ=environ)
    assert refused.value.message.startswith(named + ": ")


def test_a_bad_flag_is_refused_naming_the_flag() -> None:
    with pytest.raises(SettingsError, match=r"^--partitions='x': "):
        settings_from(parse(["--partitions", "x"]), environ={})


def test_as_env_gives_a_child_process_the_same_settings() -> None:
    mine = Settings(redis_url="redis://h:1/0", namespace="demo-1", partitions=4, durability="always",
                    log_format="json", log_level="warning", namespace_chosen=True,
                    archive_url="postgresql://u@h:5432/db", archive_after_s=60.0)
    assert set(mine.as_env()) <= set(ENVIRONMENT.values())
    assert settings_from(None, environ=mine.as_env()) == mine


def test_store_flags_point_another_command_at_the_same_store() -> None:
    mine = Settings(redis_url="redis://h:1/0", namespace="demo-1", partitions=4)
    again = settings_from(parse(mine.store_flags()), environ={})
    assert (again.redis_url, again.namespace, again.partitions) == ("redis://h:1/0", "demo-1", 4)
    assert "--partitions" not in Settings(redis_url="redis://h:1/0").store_flags()  # the default is left out


def test_the_archive_settings_are_read_from_flags_and_variables() -> None:
    environ = {"MIGHTY_ARCHIVE_URL": "postgresql://env@h/db", "MIGHTY_ARCHIVE_AFTER_S": "120"}
    found = settings_from(parse([]), environ=environ)
    assert (found.archive_url, found.archive_after_s) == ("postgresql://env@h/db", 120.0)
    flagged = settings_from(parse(["--archive-url", "postgres://flag@h/db"]), environ=environ)
    assert flagged.archive_url == "postgres://flag@h/db"
    assert settings_from(None, environ={}).archive_after_s == 3600.0
