"""The checkpointed audit answers what the whole-stream audit answers: the same verdict,
the same hands, whatever slices the stream is read in and wherever it resumed from a
stored checkpoint; and an edit after (or re-chained at) the checkpoint is still named."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from bench.audit import played_events
from services.audit import verify_events
from services.audit.checkpoint import START, Audit, Checkpoint, decode_checkpoint, encode_checkpoint
from services.gateway.audit import hands_of
from services.store.base import StoredEvent
from tests.unit.test_audit import rechain


@pytest.fixture(scope="module")
def stored() -> list[StoredEvent]:
    return played_events("t1", 1500, seed=3)


def audited(stored: list[StoredEvent], slices: list[int], resume: bool) -> Audit:
    """The stream read in slices of the given sizes (cycled); with ``resume`` each slice
    starts a fresh audit from the last stored checkpoint, as the gateway's next call does."""
    checkpoint: Checkpoint = START
    audit = Audit("t1", checkpoint)
    at, n = 0, 0
    while True:
        size = slices[n % len(slices)]
        n += 1
        if resume:
            checkpoint = decode_checkpoint(encode_checkpoint(audit.saved))
            audit = Audit("t1", checkpoint)
            at = checkpoint.version
        chunk = stored[at:at + size]
        complete = at + size >= len(stored)
        audit.take(chunk, complete)
        at += len(chunk)
        if complete:
            return audit


def same_as_whole(audit: Audit, stored: list[StoredEvent]) -> None:
    verdict = verify_events("t1", stored)
    assert (audit.finding, audit.events, audit.deals) == (verdict.finding, verdict.events, verdict.hands)
    whole = [(h.hand, h.status, h.scores) for h in hands_of(stored)]
    assert [(h.hand, h.status, h.scores) for h in audit.hands] == whole


@pytest.mark.parametrize(("slices", "resume"), [
    ([1], False), ([7, 3], False), ([64], False), ([250, 1], False), ([100_000], False),
    # resumed from the stored checkpoint after each slice: a slice passes a hand boundary
    ([150], True), ([333], True), ([1000], True),
])
def test_a_faithful_stream_verifies_and_lists_its_hands_in_any_slices(stored: list[StoredEvent], slices: list[int],
                                                                     resume: bool) -> None:
    audit = audited(stored, slices, resume)
    assert audit.finding is None
    assert audit.saved.version > len(stored) - 200, "the checkpoint follows the stream to its last hand boundary"
    same_as_whole(audit, stored)


def test_a_checkpoint_starts_at_a_hand_boundary_and_reads_back(stored: list[StoredEvent]) -> None:
    audit = audited(stored, [300], resume=True)
    saved = audit.saved
    assert decode_checkpoint(encode_checkpoint(saved)) == saved
    assert saved.hands and all(h.status != "playing" for h in saved.hands)
    assert decode_checkpoint(b"not json") == START and decode_checkpoint(None) == START


@pytest.mark.parametrize("seed", range(12))
def test_an_edit_after_the_checkpoint_is_named_as_the_whole_stream_names_it(stored: list[StoredEvent],
                                                                          seed: int) -> None:
    rng = random.Random(seed)
    checkpoint = audited(stored[:800], [100_000], resume=False).saved
    at = rng.randrange(checkpoint.version, len(stored))
    edited = list(stored)
    victim = edited[at]
    data = victim.data.replace(b'"seat":1', b'"seat":2', 1) if b'"seat":1' in victim.data else victim.data + b" "
    edited[at] = replace(victim, data=data)
    if seed % 2:  # a forger who re-chains everything after the edit
        edited = rechain(edited)
    audit = Audit("t1", checkpoint)
    audit.take(edited[checkpoint.version:], complete=True)
    if seed % 2 == 0:
        assert audit.finding is not None and audit.finding.version == at + 1
    same_as_whole(audit, edited)


def test_a_stream_rechained_before_the_checkpoint_fails_at_the_checkpoint(stored: list[StoredEvent]) -> None:
    checkpoint = audited(stored, [100_000], resume=False).saved
    edited = list(stored)
    edited[5] = replace(edited[5], data=edited[5].data + b" ")
    edited = rechain(edited)  # every later hash differs, the checkpoint's among them
    audit = Audit("t1", checkpoint)
    audit.take(edited[checkpoint.version:], complete=True)  # the read links its first to entry k
    assert audit.finding is not None and audit.finding.version == checkpoint.version + 1
