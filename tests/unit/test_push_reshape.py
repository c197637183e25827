"""The push's reshape (``views.document_of`` and ``view_frame``, services/gateway/views.py)
keeps what it can from one push to the next: the rendered labels (``labels.label``) and
the formatted deadline (``views._iso``). It also reshapes the decoded view in place, not
in copies. None of that may change a byte a client receives (docs/api.md, "Playing").

Random hands of every playable variant, every seat's view and the spectator's, with a
deadline and without, in every language: each frame is the same with the caches as it is
without them (each replaced by the function it keeps), cold or warm (in that language
and another), and with a bound so small that they are emptied over and over.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from domain.mighty.rules import VARIANTS as MIGHTY_VARIANTS
from domain.registry import game_of, variants
from domain.table import (
    CreateTable,
    DealHand,
    JoinSeat,
    StartTable,
    Submission,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections.views import ViewState, render
from services.bots.timers import iso_of_ms
from services.gateway import labels, views
from services.gateway.views import decode_stored, document_of, view_document, view_frame
from services.i18n.catalogs import LANGS
from services.players import next_submission

PLAYABLE = [v for v in variants() if v not in MIGHTY_VARIANTS or MIGHTY_VARIANTS[v].playable]
DEADLINE_MS = 1_800_000_000_000


def stored_views(variant: str, seed: int) -> Iterator[bytes]:
    """Every reader's stored view after each step of one random hand of ``variant`` (a
    deadline in two views of three, the same for every reader of a version)."""
    rng = random.Random(seed)
    state: TableState = initial_state(f"t-{variant}")
    version = 0

    def apply(submission: Submission) -> None:
        nonlocal state, version
        for event in decide(state, submission):
            state = evolve(state, event)
            version += 1

    apply(Submission(CreateTable(variant=variant, options={}, name="push", hands=1, turn_seconds=30, bots={},
                                 created="2024-01-01T00:00:00Z"), "p0"))
    for seat in range(len(state.seats)):
        apply(Submission(JoinSeat(seat=seat), f"p{seat}"))
    apply(Submission(StartTable(first_dealer=rng.randrange(len(state.seats))), "p0"))
    assert state.rules is not None
    deck = list(game_of(state.rules).deck(state.rules))
    rng.shuffle(deck)
    apply(Submission(DealHand(order=tuple(deck), salt="5a" * 16)))
    while True:
        for reader in [*map(str, range(len(state.seats))), "spectator"]:
            doc: dict[str, Any] = msgspec.to_builtins(render(ViewState(table=state, version=version, name=""), reader))
            if version % 3:
                doc["deadline_ms"] = DEADLINE_MS + version * 997
            yield msgspec.json.encode(doc)
        if state.status != "playing" or state.awaiting_deal:
            return
        submission = next_submission(state, rng)
        if submission is None:
            return
        apply(submission)


@pytest.fixture(scope="module")
def corpus() -> list[bytes]:
    # every fifth view (two-pack tables offer hundreds of labelled calls a view): a few
    # hundred views of each variant, every step kind among them
    return [stored for variant in PLAYABLE for stored in list(stored_views(variant, 1))[::5]]


def frames(corpus: list[bytes], lang: str) -> list[bytes]:
    return [view_frame(document_of(decode_stored(stored), None, lang), rollback=i % 5 == 0)
            for i, stored in enumerate(corpus)]


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_a_pushed_frame_is_the_same_byte_for_byte_with_the_labels_and_deadlines_kept_or_not(
        corpus: list[bytes], lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    labels._kept.clear()
    views._iso.cache_clear()
    cold = frames(corpus, lang)
    labels._kept.clear()
    frames(corpus, "ja" if lang != "ja" else "en")  # the same labels kept in another language first
    after_another = frames(corpus, lang)
    warm = frames(corpus, lang)  # every label and deadline kept from the pass before
    with monkeypatch.context() as patched:
        patched.setattr(labels, "LABELS_KEPT", 3)  # emptied every few labels
        overflowing = frames(corpus, lang)
    with monkeypatch.context() as patched:
        patched.setattr(labels, "label", labels.render)
        patched.setattr(views, "_iso", iso_of_ms)
        unkept = frames(corpus, lang)
    assert any(b'"label"' in frame for frame in unkept) and any(b'"deadline":"' in frame for frame in unkept)
    assert cold == unkept
    assert after_another == unkept
    assert warm == unkept
    assert overflowing == unkept


def test_the_kept_labels_stay_within_their_bound(corpus: list[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(labels, "LABELS_KEPT", 50)
    labels._kept.clear()
    for lang in ("en", "ko"):
        frames(corpus, lang)
        assert len(labels._kept) <= 50
    assert views._iso.cache_info().maxsize is not None


def test_a_view_document_is_the_same_from_each_fresh_decode_of_a_stored_view(corpus: list[bytes]) -> None:
    """``document_of`` reshapes the decoded view in place: nothing of one call is left in
    a later one (each call decodes its own), and the document is that of ``view_document``."""
    for stored in corpus[::7]:
        first = document_of(decode_stored(stored))
        assert document_of(decode_stored(stored)) == first
        assert view_document(stored) == first
        assert msgspec.json.decode(view_frame(first))["view"] == msgspec.json.decode(msgspec.json.encode(first))
