"""Key names of the projections, beside the feed they are built from.

Every key of a partition's projection carries the partition's hash tag, like its feed
(``services/store/keys.py``), so the apply script that writes a batch's documents, the
checkpoint and the acknowledgements touches one cluster slot:

    mighty:{p07}:ckpt:<kind>       hash: id = last applied feed id, n = entries applied
    mighty:{p07}:lease:<kind>      the worker that owns the partition for this kind
    mighty:{p07}:dead:<kind>       stream: feed entries this kind could not decode or fold
    mighty:{p07}:dead:<kind>:tables  hash: table -> its first dead letter's feed id (the
                                   tables this kind holds back until a rebuild)
    mighty:{p07}:view:<table>:<reader>, mighty:{p07}:ledger:..., mighty:{p07}:dir
                                   the documents (projections/docs.py names them)

The bot workers share the partitions through the same leases and live list, as the kind
``bots`` (``mighty:{p07}:lease:bots``, ``mighty:{workers}:bots``; they keep no
checkpoint, documents or feed group).

Only the list of live workers is not per partition: ``mighty:{workers}:<kind>``, a sorted
set of worker ids by heartbeat, read to share the partitions fairly, and each worker's
``mighty:{workers}:<kind>:stats:<id>``. They carry a hash tag of their own, ``{workers}``:
on a cluster they all live in one slot, whatever the namespace or kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from projections.docs import DocKey
from services.store.keys import KeySpace


@dataclass(frozen=True, slots=True)
class ProjectionKeys:
    space: KeySpace
    kind: str

    @property
    def partitions(self) -> int:
        return self.space.partitions

    def prefix(self, partition: int) -> str:
        return self.space.prefix(partition)

    def doc(self, partition: int, name: str) -> str:
        return self.prefix(partition) + name

    def key_of(self, partition: int, doc: DocKey) -> str:
        return self.prefix(partition) + doc.name

    def feed(self, partition: int) -> str:
        return self.space.feed(partition)

    def checkpoint(self, partition: int) -> str:
        return f"{self.prefix(partition)}ckpt:{self.kind}"

    def lease(self, partition: int) -> str:
        return f"{self.prefix(partition)}lease:{self.kind}"

    def dead(self, partition: int) -> str:
        return f"{self.prefix(partition)}dead:{self.kind}"

    def quarantine(self, partition: int) -> str:
        return f"{self.prefix(partition)}dead:{self.kind}:tables"

    def checkpoint_of(self, partition: int, kind: str) -> str:
        """Another kind's checkpoint in the same partition (the feed is trimmed below
        the slowest of them)."""
        return f"{self.prefix(partition)}ckpt:{kind}"

    def table_prefix(self, partition: int) -> str:
        return f"{self.prefix(partition)}t:"

    def workers(self) -> str:
        return f"{self.space.namespace}:{{workers}}:{self.kind}"

    def stats(self, worker_id: str) -> str:
        return f"{self.space.namespace}:{{workers}}:{self.kind}:stats:{worker_id}"

    def doc_patterns(self, partition: int) -> list[str]:
        """SCAN patterns that find every document of this kind in a partition."""
        names = {"views": ["view:*", "turns"], "ledger": ["ledger:*"], "directory": ["dir", "dir:closed"],
                 "ratings": ["ratings:*"]}[self.kind]
        return [self.prefix(partition) + name for name in names]

    @property
    def group(self) -> str:
        return self.kind
