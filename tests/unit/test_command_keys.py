"""The keys of a stream read or a script call, read off the command as Redis reads them,
so that the cluster client routes it without asking a node for its keys first."""

from __future__ import annotations

from typing import Any

import pytest

from services.store.cluster import command_keys


@pytest.mark.parametrize(("args", "keys"), [
    (("XREADGROUP", "GROUP", "views", "w1", "COUNT", 500, "STREAMS", "{p03}feed", ">"), ["{p03}feed"]),
    (("XREAD", "COUNT", 10, "BLOCK", 100, "STREAMS", "a", "b", "0-0", "$"), ["a", "b"]),
    ((b"xreadgroup", b"group", b"g", b"c", b"noack", b"streams", b"k", b">"), [b"k"]),
    # a group or a consumer named like an option is an argument, not the option
    (("XREADGROUP", "GROUP", "STREAMS", "COUNT", "STREAMS", "k", ">"), ["k"]),
    (("EVALSHA", "ab12", 2, "{p01}a", "{p01}b", "x", "y"), ["{p01}a", "{p01}b"]),
    (("EVAL", "return 1", "0"), []),
    ((b"evalsha_ro", b"ab12", b"1", b"k", b"STREAMS"), [b"k"]),
])
def test_the_keys_are_where_redis_reads_them(args: tuple[Any, ...], keys: list[Any]) -> None:
    assert command_keys(args) == keys


@pytest.mark.parametrize("args", [
    ("XRANGE", "k", "-", "+"),  # no movable keys: the client's own way
    ("XREAD", "STREAMS", "a", "b", "0-0"),  # keys and ids do not pair up
    ("XREAD", "STREAMS"),
    ("XREAD", "COUNT", 1, "CLAIM", 5, "STREAMS", "k", "0"),  # an option this does not know
    ("XREAD", "COUNT"),
    ("EVALSHA", "ab12", 3, "a", "b"),  # fewer keys than it says
    ("EVALSHA", "ab12", "-1", "a"),
    ("EVALSHA", "ab12"),
    (),
])
def test_a_command_it_cannot_read_is_left_to_the_node(args: tuple[Any, ...]) -> None:
    assert command_keys(args) is None
