"""Upcasters: stored events of an older shape read as today's (DESIGN.md §3).

A stored event is never edited. New fields arrive with defaults, which needs nothing
here. When a shape must change otherwise (a field renamed, split, or its meaning
changed), the event class's ``v`` default goes up by one, and a function that turns the
previous shape (the JSON object) into the next is registered in ``UPCASTERS`` under
``(tag, previous version)``. Reading then upcasts step by step, v1 to v2 to v3, so a stream
written years ago replays through today's rules, and its stored bytes (which the hash
chain covers) stay as they were.

No shape has changed yet, so ``UPCASTERS`` is empty; the mechanism is exercised by
``tests/unit/test_upcasting.py`` with shapes made up for the test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, get_args

import msgspec

from domain.errors import UnknownEventVersion

Raw = dict[str, Any]
Upcaster = Callable[[Raw], Raw]

# (event tag, the version it reads) -> the function that returns the next version's shape.
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def current_versions(union: Any) -> dict[str, int]:
    """Each event tag of a tagged union and the schema version written today."""
    versions: dict[str, int] = {}
    for cls in get_args(union):
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        default = next(f.default for f in info.fields if f.name == "v")
        versions[str(info.tag)] = int(default)
    return versions


def upcast(raw: Raw, current: Mapping[str, int], steps: Mapping[tuple[str, int], Upcaster]) -> Raw:
    """``raw`` (an event's JSON object) brought up to today's version of its type."""
    tag = raw.get("type")
    if not isinstance(tag, str) or tag not in current:
        return raw  # not an event we know: the typed decoder says what is wrong with it
    version = raw.get("v", 1)
    if not isinstance(version, int):
        return raw
    if version > current[tag]:
        raise UnknownEventVersion(
            f"A {tag} event of version {version} was written by a newer release "
            f"(this one reads up to version {current[tag]})."
        )
    while version < current[tag]:
        step = steps.get((tag, version))
        if step is None:
            raise UnknownEventVersion(f"No upcaster reads a {tag} event of version {version}.")
        raw = {**step(dict(raw)), "type": tag, "v": version + 1}
        version += 1
    return raw
