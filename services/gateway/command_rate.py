"""The command rate limit and the command ids, kept by each gateway and shared now and
then (docs/gateway.md, Quotas: "Commands"). Admitting a command costs no Redis call.

- **Counted here.** A gateway counts each player's commands in the fixed window of
  ``MIGHTY_RATE_WINDOW_S`` (epoch-aligned: every gateway's windows are the same), and
  refuses one past ``MIGHTY_RATE_COMMANDS`` (429 ``rate_limited``, ``Retry-After``: the
  seconds until the window turns). A command refused so is not counted.
- **Shared.** ``SHARE_S`` after it first counts a command that no other gateway knows of,
  a gateway adds what it counted since its last share to the window's counter in Redis
  (one pipeline for every player: ``INCRBY`` and ``EXPIRE``) and reads back the total.
  What the other gateways counted (that total less its own) counts against the player
  here too. A player spread over several gateways is so held to the limit give or take
  what the others counted in the last ``SHARE_S``; through one gateway, exactly.
- **Command ids.** A command is counted once per id: a retry (the same player, table, id
  and body) within ``ID_MEMORY_S`` on the same gateway is not counted again; the same id
  with another body is refused 409 ``command_id_reused`` before any work, whichever of
  many bodies sent at once came first. Past that memory, or on another gateway, the store
  answers alike: a retry with its first outcome, a reuse ``command_id_reused`` (it keeps
  ids ``MIGHTY_IDEMPOTENCY_S``, docs/store.md); such a retry is only counted once more.

Nothing here reads a clock or does I/O: the backend passes the time and does the
sharing (``RedisBackend.admit_command``), so the rules are tested as plain calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from services.gateway.quotas import Admission, window_wait

SHARE_S: Final = 0.2  # how long counts wait before they are added to the shared counter
ID_MEMORY_S: Final = 60.0  # a command id is remembered at least this long on its gateway
IDS_KEPT: Final = 200_000  # command ids remembered at once, at most (two generations of half)
PLAYERS_KEPT: Final = 100_000  # players counted at once, at most (this window's only)


@dataclass(slots=True, eq=False)
class _Count:
    """A player's commands in one window: counted here, not shared yet, being shared,
    shared, and the other gateways' as last read."""

    window: int
    mine: int = 0
    unshared: int = 0
    sharing: int = 0
    shared: int = 0
    others: int = 0


@dataclass(slots=True)
class Share:
    """What one share adds to a player's counter in Redis: ``count`` in ``window`` (of
    ``counted``, the count it was taken from: a count forgotten or replaced since is not
    the one its reply is about)."""

    player: str
    window: int
    count: int
    counted: _Count


@dataclass(slots=True)
class CommandRate:
    """One gateway's command counts and command ids (module doc)."""

    memory_s: float = ID_MEMORY_S
    ids_kept: int = IDS_KEPT
    players_kept: int = PLAYERS_KEPT
    _counts: dict[str, _Count] = field(default_factory=dict)
    _unshared: set[str] = field(default_factory=set)  # the players whose counts wait to be shared
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
            if count is None and len(self._counts) >= self.players_kept:
                self._forget_old_windows()
            count = self._counts[player] = _Count(window)
        if count.mine + count.others >= limit:
            return Admission(wait=window_wait(window_s, now))
        count.mine += 1
        count.unshared += 1
        self._unshared.add(player)
        self._ids[key] = mark
        return Admission()

    def due(self) -> list[Share]:
        """What to add to the shared counters now: every player's count not shared yet
        (then being shared: ``shared`` or ``not_shared`` says how it went)."""
        shares = []
        for player in self._unshared:
            count = self._counts.get(player)
            if count is not None and count.unshared:
                shares.append(Share(player, count.window, count.unshared, count))
                count.sharing += count.unshared
                count.unshared = 0
        self._unshared.clear()
        if self._turned:  # once a window: what the windows before counted no longer matters
            self._turned = False
            self._forget_old_windows()
        return shares

    def shared(self, share: Share, total: int) -> None:
        """The shared counter of ``share``'s window stands at ``total`` once it was added."""
        count = share.counted
        count.sharing -= share.count
        count.shared += share.count
        count.others = max(total - count.shared - count.sharing, 0)

    def not_shared(self, share: Share) -> None:
        """Adding ``share`` failed (the store is down): it is added with the next share,
        unless its count has been forgotten since (its window over)."""
        count = share.counted
        count.sharing -= share.count
        if self._counts.get(share.player) is count:
            count.unshared += share.count
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

    def _forget_old_windows(self) -> None:
        """Players not counted in the latest window are forgotten (their counts no longer
        matter; a count being shared is let go too: its reply finds it gone). If every
        player is in it and they are too many, the older half goes (a gateway must not
        grow; those players' counts start again)."""
        self._counts = {p: c for p, c in self._counts.items() if c.window >= self._window}
        if len(self._counts) >= self.players_kept:
            self._counts = dict(list(self._counts.items())[len(self._counts) // 2:])
        self._unshared &= self._counts.keys()
