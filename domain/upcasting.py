"""Upcasters: stored events of an older shape read as today's (docs/architecture.md, "Events are facts").

A stored event is never edited. New fields arrive with defaults, which needs nothing
here. When a shape must change otherwise (a field renamed, split, or its meaning
changed), the event class's ``v`` default goes up by one, and a function that turns the
previous shape (the JSON object) into the next is registered in ``UPCASTERS`` under
``(tag, previous version)``. Reading then upcasts step by step, v1 to v2 to v3, so a stream
written years ago replays through today's rules, and its stored bytes (which the hash
chain covers) stay as they were.

Version 2 of Mighty's ``friend_called``, ``card_played`` and ``friend_revealed`` added a
fact each, which ``decide`` computes and ``evolve`` used to re-derive (``ADDED_FACTS``).
None of them can be computed from the old event alone: it takes the hand so far (who
holds the called card; whether another seat holds a Joker; which call the reveal
resolves). So the upcaster leaves the fact ``UNSET`` ("not recorded"), and
``domain.mighty.decider.evolve``, which holds the hand, derives it as version-1 readers did
(``domain.mighty.legacy``, called only for an event with the fact unset). Two readers
need to know which fields were added: ``mighty verify`` compares the events it re-decides
with the stored ones as recorded (``as_recorded``: a fact an old event does not hold is
not compared), and hand files print events in the shapes docs/hand-files.md was written
against (``as_version``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, get_args

import msgspec

from domain.errors import UnknownEventVersion

Raw = dict[str, Any]
Upcaster = Callable[[Raw], Raw]



def _fact_not_recorded(raw: Raw) -> Raw:
    """v1 to v2 of ``friend_called`` (``holder``), ``card_played`` (``joker_call_effective``)
    and ``friend_revealed`` (``call``): the shape is the same, the added fact stays unset,
    for ``evolve`` to derive from the hand (see above)."""
    return raw


# (event tag, the version it reads) -> the function that returns the next version's shape.
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("friend_called", 1): _fact_not_recorded,
    ("card_played", 1): _fact_not_recorded,
    ("friend_revealed", 1): _fact_not_recorded,
}

# (event tag, the version that added them) -> facts the events of earlier versions lack.
ADDED_FACTS: dict[tuple[str, int], tuple[str, ...]] = {
    ("friend_called", 2): ("holder",),
    ("card_played", 2): ("joker_call_effective",),
    ("friend_revealed", 2): ("call",),
}
_FACTS_OF_TAG: dict[str, tuple[str, ...]] = {}
for (_tag, _), _fields in ADDED_FACTS.items():
    _FACTS_OF_TAG[_tag] = _FACTS_OF_TAG.get(_tag, ()) + _fields

S = TypeVar("S", bound=msgspec.Struct)


def as_recorded(derived: S, stored: msgspec.Struct) -> S:
    """``derived`` as an event of ``stored``'s age could record it: each added fact that
    ``stored`` lacks (``UNSET``: it was stored before the fact's version) unset too. Every
    other field, and every fact an event holds, is compared as it is."""
    facts = _FACTS_OF_TAG.get(str(derived.__struct_config__.tag))
    if not facts or type(stored) is not type(derived):
        return derived
    unrecorded = {f: msgspec.UNSET for f in facts if getattr(stored, f) is msgspec.UNSET}
    return msgspec.structs.replace(derived, **unrecorded) if unrecorded else derived


def as_version(raw: Raw, version: int) -> Raw:
    """An event's JSON object in the shape of an earlier ``version`` of its type, when the
    versions since only added facts: those facts left out, ``v`` last, as it was encoded
    (docs/hand-files.md fixes the events ``mighty replay`` prints at their first shapes)."""
    tag, now = raw.get("type"), raw.get("v", 1)
    if not isinstance(tag, str) or not isinstance(now, int) or now <= version:
        return raw
    dropped: set[str] = {"v"}
    for step in range(version + 1, now + 1):
        added = ADDED_FACTS.get((tag, step))
        if added is None:
            raise ValueError(f"{tag} version {step} changed more than added facts")
        dropped.update(added)
    return {**{k: v for k, v in raw.items() if k not in dropped}, "v": version}


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
