"""The command rate limit and the command ids, kept by each gateway and shared now and
then (docs/gateway.md, Quotas: "Commands"). Admitting a command costs no Redis call.

- **Counted here.** A gateway counts each player's commands in the fixed window of
  ``MIGHTY_RATE_WINDOW_S`` (epoch-aligned: every gateway's windows are the same), and
  refuses one past ``MIGHTY_RATE_COMMANDS`` (429 ``rate_limited``, ``Retry-After``: the
  seconds until the window turns). A command refused so is not counted.
- **Shared.** ``SHARE_S`` after it counts a command, a gateway writes its count of each
  player it counted since its last share into the window's hash in Redis, under its own
  field (the count as it stands, not an increment: a write sent twice counts once), and
  reads the hash back. What the other gateways counted (the sum of their fields) counts
  against the player here from then on. Through one gateway the limit is exact. Over
  several, a gateway knows the others' count as of its own last share of that player:
  each holds the player to the limit less what it last read, so across ``n`` gateways a
  player gets at most ``n`` times the limit a window, and the limit once each has read
  the others' count.
- **Command ids.** A command is counted once per id: a retry (the same player, table, id
  and body) within ``ID_MEMORY_S`` on the same gateway is not counted again; the same id
  with another body is refused 409 ``command_id_reused`` before any work, whichever of
  many bodies sent at once came first. Past that memory, or on another gateway, the store
  answers alike: a retry with its first outcome, a reuse ``command_id_reused`` (it keeps
  ids ``MIGHTY_IDEMPOTENCY_S``, docs/store.md); such a retry is counted as a new command.

Nothing here reads a clock or does I/O: the backend passes the time and does the
sharing (``RedisBackend.admit_command``), so the rules are tested as plain calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from services.gateway.quotas import Admission, window_wait

SHARE_S: Final = 0.2  # how long counts wait before they are shared
ID_MEMORY_S: Final = 60.0  # a command id is remembered at least this long on its gateway
IDS_KEPT: Final = 200_000  # command ids remembered at once, at most (two generations of half)
PLAYERS_KEPT: Final = 100_000  # players counted at once, at most (this window's only)


@dataclass(slots=True, eq=False)
class _Count:
    """A player's commands in one window: counted here, and the other gateways' as last
    read."""

    window: int
    mine: int = 0
    others: int = 0


@dataclass(slots=True)
class Share:
    """What one share writes of a player: this gateway's count ``mine`` of ``counted`` (the
    count it was read from, and its window: a count forgotten or replaced since is not the
    one its answer is about)."""

    player: str
    mine: int
    counted: _Count

    @property
    def window(self) -> int:
        return self.counted.window


@dataclass(slots=True)
class CommandRate:
    """One gateway's command counts and command ids (module doc)."""

    memory_s: float = ID_MEMORY_S
    ids_kept: int = IDS_KEPT
    players_kept: int = PLAYERS_KEPT
    _counts: dict[str, _Count] = field(default_factory=dict)  # in the order their windows' counts began
    _unshared: set[str] = field(default_factory=set)  # the players counted since their last share
    _window: int = 0  # the latest window counted in
    _turned: bool = False  # a window has turned since the counts were last pruned
    # command ids, the current generation and the one before: (player, table and id) -> body mark
    _ids: dict[tuple[str, str], str] = field(default_factory=dict)
    _ids_before: dict[tuple[str, str], str] = field(default_factory=dict)
    _generation_at: float | None = None

    def admit(self, player: str, command_key: str, mark: str, limit: int, window_s: int, now: float) -> Admission:
        """Count a command of ``player`` once per ``command_key`` (its table and id: ids
        are the player's own); ``mark`` (its body's) tells a retry from an id reused."""
        self._turn_generation(now)
        key = (player, command_key)
        seen = self._ids.get(key)
        if seen is None:
            seen = self._ids_before.get(key)
        if seen is not None:
            return Admission(retry=True) if seen == mark else Admission(reused=True)
        window = int(now // window_s)
        if window > self._window:
            self._window, self._turned = window, True
        count = self._counts.get(player)
        if count is None or count.window != window:
            if count is not None:
                del self._counts[player]  # to the end: the halving below lets the oldest go first
            elif len(self._counts) >= self.players_kept:
                self._forget_old_windows(halve=True)
            count = self._counts[player] = _Count(window)
        if count.mine + count.others >= limit:
            return Admission(wait=window_wait(window_s, now))
        count.mine += 1
        self._unshared.add(player)
        self._ids[key] = mark
        return Admission()

    def due(self) -> list[Share]:
        """What to share now: the count of every player counted since their last share."""
        shares = []
        for player in self._unshared:
            count = self._counts.get(player)
            if count is not None:
                shares.append(Share(player, count.mine, count))
        self._unshared.clear()
        if self._turned:  # at the first share of a window: what the windows before counted no longer matters
            self._turned = False
            self._forget_old_windows(halve=False)
        return shares

    def shared(self, share: Share, total: int) -> None:
        """The window's counts, every gateway's, stood at ``total`` with ``share`` written."""
        share.counted.others = max(total - share.mine, 0)

    def not_shared(self, share: Share) -> None:
        """Writing ``share`` failed (the store is down): the count goes with the next share,
        unless it has been forgotten since (its window over)."""
        if self._counts.get(share.player) is share.counted:
            self._unshared.add(share.player)

    def has_unshared(self) -> bool:
        """Whether any count waits to be shared."""
        return bool(self._unshared)

    def _turn_generation(self, now: float) -> None:
        """Ids are kept in two generations of ``memory_s`` (or half of ``ids_kept``) each:
        an id is remembered at least that long, unless the gateway takes more ids in it
        than it keeps (then the older half is forgotten early)."""
        if self._generation_at is None:
            self._generation_at = now
        if now - self._generation_at >= self.memory_s or len(self._ids) >= self.ids_kept // 2:
            self._ids_before, self._ids = self._ids, {}
            self._generation_at = now

    def _forget_old_windows(self, *, halve: bool) -> None:
        """Players not counted in the latest window are forgotten (their counts no longer
        matter). ``halve``: a new player finds ``players_kept`` counted; if they are all in
        this window, the half whose counts began first goes (a gateway must not grow; their
        counts start again, those not shared yet unshared)."""
        self._counts = {p: c for p, c in self._counts.items() if c.window >= self._window}
        if halve and len(self._counts) >= self.players_kept:
            self._counts = dict(list(self._counts.items())[len(self._counts) // 2:])
        self._unshared &= self._counts.keys()
