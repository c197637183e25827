"""services/settings.py: one reading of flags and environment for every process; a flag
wins over its variable, a variable over the default; a bad value names where it came from."""

from __future__ import annotations

import argparse

import msgspec
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


def test_the_gateway_settings_are_read_from_their_variables() -> None:
    environ = {"MIGHTY_SECRET": "s" * 32, "MIGHTY_TOKEN_TTL_S": "60", "MIGHTY_PORT": "9001",
               "MIGHTY_CORS_ORIGINS": "https://a.example, http://b.example:8080", "MIGHTY_RATE_COMMANDS": "5",
               "MIGHTY_RATE_WINDOW_S": "3", "MIGHTY_MAX_LAG_S": "1.5", "MIGHTY_HOST": "0.0.0.0"}
    found = settings_from(None, environ=environ)
    assert (found.secret, found.token_ttl_s, found.port, found.host) == ("s" * 32, 60, 9001, "0.0.0.0")
    assert found.cors_origins == ("https://a.example", "http://b.example:8080")
    assert (found.rate_commands, found.rate_window_s, found.max_lag_s) == (5, 3, 1.5)


@pytest.mark.parametrize(("said", "taken"), [("1", True), ("On", True), ("yes", True), ("true", True),
                                            ("0", False), ("off", False), ("No", False), ("FALSE", False)])
def test_permessage_deflate_is_taken_unless_switched_off_and_children_get_the_switch(said: str, taken: bool) -> None:
    from services.cli.gateway import connection_limits

    assert Settings().ws_deflate is True
    assert connection_limits(Settings(), 16_384)["ws_per_message_deflate"] is True
    found = settings_from(None, environ={"MIGHTY_WS_DEFLATE": said})
    assert found.ws_deflate is taken
    assert connection_limits(found, 16_384)["ws_per_message_deflate"] is taken
    assert settings_from(None, environ=found.as_env()).ws_deflate is taken


@pytest.mark.parametrize("environ,named", [
    ({"MIGHTY_PORT": "70000"}, "MIGHTY_PORT"),
    ({"MIGHTY_TOKEN_TTL_S": "0"}, "MIGHTY_TOKEN_TTL_S"),
    ({"MIGHTY_RATE_COMMANDS": "-1"}, "MIGHTY_RATE_COMMANDS"),
    ({"MIGHTY_MAX_LAG_S": "soon"}, "MIGHTY_MAX_LAG_S"),
    ({"MIGHTY_CORS_ORIGINS": "a.example/path"}, "MIGHTY_CORS_ORIGINS"),
    ({"MIGHTY_WS_DEFLATE": "maybe"}, "MIGHTY_WS_DEFLATE"),
])
def test_a_bad_gateway_setting_is_refused_naming_its_variable(environ: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_from(None, environ=environ)
    assert refused.value.message.startswith(named)


def test_a_short_secret_is_refused_without_repeating_it() -> None:
    with pytest.raises(SettingsError) as refused:
        settings_from(None, environ={"MIGHTY_SECRET": "hunter2"})
    assert "MIGHTY_SECRET" in refused.value.message and "hunter2" not in refused.value.message


def test_the_archive_settings_are_read_from_flags_and_variables() -> None:
    environ = {"MIGHTY_ARCHIVE_URL": "postgresql://env@h/db", "MIGHTY_ARCHIVE_AFTER_S": "120"}
    found = settings_from(parse([]), environ=environ)
    assert (found.archive_url, found.archive_after_s) == ("postgresql://env@h/db", 120.0)
    flagged = settings_from(parse(["--archive-url", "postgres://flag@h/db"]), environ=environ)
    assert flagged.archive_url == "postgres://flag@h/db"
    assert settings_from(None, environ={}).archive_after_s == 3600.0


def test_the_away_and_chat_settings_are_read_from_their_variables_and_given_to_children() -> None:
    environ = {"MIGHTY_AWAY_AFTER_GONE_S": "45", "MIGHTY_CHAT_TEXT_MAX": "500", "MIGHTY_CHAT_RATE": "3",
               "MIGHTY_CHAT_RATE_WINDOW_S": "20", "MIGHTY_CHAT_PHRASE_RATE": "6", "MIGHTY_CHAT_PHRASE_WINDOW_S": "30",
               "MIGHTY_CHAT_RECENT": "0", "MIGHTY_CHAT_RECENT_S": "90"}
    found = settings_from(None, environ=environ)
    assert found.away_after_gone_s == 45
    assert (found.chat_text_max, found.chat_rate, found.chat_rate_window_s, found.chat_phrase_rate,
            found.chat_phrase_window_s, found.chat_recent, found.chat_recent_s) == (500, 3, 20, 6, 30, 0, 90)
    assert settings_from(None, environ=found.as_env()) == msgspec.structs.replace(found, namespace_chosen=True)
    assert settings_from(None, environ={"MIGHTY_AWAY_AFTER_GONE_S": "0"}).away_after_gone_s == 0  # never


@pytest.mark.parametrize("environ,named", [
    ({"MIGHTY_AWAY_AFTER_GONE_S": "-1"}, "MIGHTY_AWAY_AFTER_GONE_S"),
    ({"MIGHTY_AWAY_AFTER_GONE_S": "2.5"}, "MIGHTY_AWAY_AFTER_GONE_S"),
    ({"MIGHTY_CHAT_TEXT_MAX": "0"}, "MIGHTY_CHAT_TEXT_MAX"),
    ({"MIGHTY_CHAT_TEXT_MAX": "1001"}, "MIGHTY_CHAT_TEXT_MAX"),
    ({"MIGHTY_CHAT_RATE": "0"}, "MIGHTY_CHAT_RATE"),
    ({"MIGHTY_CHAT_RATE_WINDOW_S": "ten"}, "MIGHTY_CHAT_RATE_WINDOW_S"),
    ({"MIGHTY_CHAT_RECENT_S": "0"}, "MIGHTY_CHAT_RECENT_S"),
])
def test_a_bad_away_or_chat_setting_is_refused_naming_its_variable(environ: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_from(None, environ=environ)
    assert refused.value.message.startswith(named)
