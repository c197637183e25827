"""The bot worker: plays every seat the service plays, as soon as that seat is to act.

Those seats are the ones given to a bot (``TableCreated.bots``, or a seat whose holder's
player record names a bot level: quickplay's bots) and the away seats (a player who left
a started table: ``SeatAway``; played at ``beginner``). The worker is woken by the views
worker: each change of a table's turn (``projections/turns.py``) is announced on one
sharded channel per partition, which the worker subscribes to before reading the turns
stored so far, so a turn announced in between is not lost. It never polls the store.

For a seat to act it reads that seat's stored view, and only that (decoded as the game's
seat view type: a bot sees what the seat sees), asks ``game.bots()[level]`` for the
command with a seed derived from the table, version and seat (data: the same view and
seed give the same command anywhere), and sends it through the command handler, as
people's commands go, with the id ``turn-<version>-<seat>``. After it, and for a turn
that is the service's deal, it takes the service's own steps (``services/app/steps.py``),
so a table of bots plays on by itself.

Several workers split the partitions as the projection workers do, through the same
leases (``services/projection/leases.py``, kind ``bots``): each table's bot seats are
played by the one live worker owning its partition, and a dead worker's partitions are
taken by the others once its leases expire. Twice the workers on twice the cores play
twice the tables. Where two workers may meet on a turn (one paused past its lease while
the next owner took the partition) the command id makes the second append of the same
move a duplicate (the bots are deterministic: no clock in the budget), so a move is
played once.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections import OrderedDict, deque
from typing import Any, Final

import msgspec
import redis
import structlog

from domain.bots import Budget
from domain.errors import MightyError
from domain.games import AnyGame, Rules
from domain.registry import game_of, rules_of_directory
from domain.table import Submission
from projections.docs import Decoder
from projections.turns import AWAY_LEVEL, TURNS_DOC, Turn, decode_turn
from services.app.steps import send_then_step, service_steps
from services.commands.tables import TableHandler
from services.projection.keys import ProjectionKeys
from services.projection.leases import Leases, fair_share, new_worker_id, surplus
from services.projection.read import view as read_view
from services.store.cluster import CLUSTER_UNAVAILABLE, SyncClient, next_sharded_message
from services.store.errors import StoreUnavailable, VersionConflict, is_transient
from services.store.keys import KeySpace

log = structlog.get_logger("mighty.bots")
_encode = msgspec.json.Encoder().encode

BOTS_KIND: Final = "bots"  # the bot workers' leases and live list: mighty:{p07}:lease:bots, mighty:{workers}:bots
REMEMBERED: Final = 4096  # tables (their last handled version, their rules) and players (their bot level) kept
_LISTENED_S = 10.0  # a run that failed after this long had been listening: its outage is a new one


def turn_seed(table_id: str, version: int, seat: int) -> int:
    """The bot's seed for a turn: the same wherever it is computed."""
    return int.from_bytes(hashlib.sha256(f"{table_id}:{version}:{seat}".encode()).digest()[:8], "big")


def turn_command_id(version: int, seat: int) -> str:
    """The id of the move a seat makes at a version: every worker gives it alike."""
    return f"turn-{version}-{seat}"


def turn_channels(space: KeySpace) -> list[str]:
    keys = ProjectionKeys(space, "views")
    return [keys.doc(partition, TURNS_DOC) for partition in range(space.partitions)]


class TurnListener:
    """Subscribes to the partitions' turn announcements, reads the turns stored so far,
    then hands each announced turn to ``handle``; ``idle`` runs between messages (at
    least every ``poll_s``).

    With ``leases`` (the bot workers) it listens only to the partitions it owns: it keeps
    its fair share of them through the projection workers' leases (``services/projection/
    leases.py``, kind ``bots``), renewed every lease/3; a partition it takes is subscribed
    to, then its stored turns are read (nothing announced in between is lost); one it gives
    back or loses is unsubscribed, and a turn of it still queued or announced is left to
    its new owner. Without (the timer workers), every partition."""

    poll_s: float = 1.0
    client: Any
    space: KeySpace
    leases: Leases | None = None
    worker_id: str = ""
    lease_ms: int = 3000

    def handle(self, turn: Turn) -> None:
        raise NotImplementedError

    def after_outage(self) -> None:
        """Forget what an outage may have made untrue: Redis may come back with less than
        it held (an AOF without its last second, a replica promoted without the last
        writes), so a turn handled before may be due again."""

    def idle(self) -> None:
        """Between messages: nothing here."""

    def wait_s(self) -> float:
        return self.poll_s

    def owns(self, partition: int) -> bool:
        return partition in self._owned

    def serve(self, stop: threading.Event) -> None:
        """``run`` until ``stop``, riding out a Redis that cannot be reached (down,
        restarting, stalled: ``run`` raises once the client's retries are spent). It waits
        with a growing back-off (50 ms, doubling, at most 2 s) and runs again: subscribed
        anew, it reads the stored turns first, so a turn announced while it was away, or
        one it failed to play during the outage, is taken once Redis answers. Its leases,
        if they outlived the outage, are its own again at once (the acquire script takes a
        lease its holder asks for)."""
        failures = 0
        while not stop.is_set():
            started = time.monotonic()
            try:
                self.run(stop)
                return
            except Exception as error:
                if not is_transient(error):  # Redis down, loading, refusing writes (MISCONF)...
                    raise
                if time.monotonic() - started > _LISTENED_S:
                    failures = 0  # it had been listening: a new outage
                failures += 1
                if failures == 1:
                    log.warning("redis unreachable", kind=type(self).__name__, error=str(error))
                self.after_outage()
                stop.wait(min(2.0, 0.05 * 2.0 ** min(failures - 1, 6)))

    def run(self, stop: threading.Event, max_seconds: float | None = None) -> None:
        self._channels = {channel: p for p, channel in enumerate(turn_channels(self.space))}
        self._owned: set[int] = set()
        self._backlog: deque[tuple[int, Turn]] = deque()
        self._next_maintain = 0.0
        self._pubsub = self.client.pubsub()
        try:
            if self.leases is None:
                self._listen(list(range(self.space.partitions)))
            else:
                self._keep_share()  # its share first: said before it says it listens
            log.info("turn_listener_started", kind=type(self).__name__, partitions=self.space.partitions,
                     worker=self.worker_id or None)
            ends = None if max_seconds is None else time.monotonic() + max_seconds
            while not stop.is_set() and (ends is None or time.monotonic() < ends):
                self._keep_share()
                message = next_sharded_message(self._pubsub, 0.0 if self._backlog else self._wait())
                self.idle()
                announced = self._announced(message)
                if announced is not None and self.owns(announced[0]):
                    self.handle(announced[1])
                # what was stored before we listened: a little at a time, so leases are
                # renewed and announcements heard between two turns
                until = time.monotonic() + 0.05
                while self._backlog and time.monotonic() < until:
                    partition, turn = self._backlog.popleft()
                    if self.owns(partition):
                        self.handle(turn)
            self._give_back()
        finally:
            self._pubsub.close()
            log.info("turn_listener_stopped", kind=type(self).__name__)

    def _wait(self) -> float:
        if self.leases is None:
            return self.wait_s()
        return max(0.0, min(self.wait_s(), self._next_maintain - time.monotonic()))

    def _announced(self, message: dict[str, Any] | None) -> tuple[int, Turn] | None:
        """The partition and turn of an announcement; None for anything else."""
        if message is None or message.get("type") != "smessage":
            return None
        channel = message.get("channel")
        partition = self._channels.get(channel.decode() if isinstance(channel, bytes) else str(channel))
        if partition is None:
            return None
        try:
            return partition, decode_turn(bytes(message["data"]))
        except msgspec.DecodeError as error:
            log.warning("bad_turn_notice", error=str(error))
            return None

    def _listen(self, partitions: list[int]) -> None:
        """Subscribe to the partitions' channels, then queue the turns stored so far."""
        channels = turn_channels(self.space)
        for partition in partitions:
            self._pubsub.ssubscribe(channels[partition])
            self._owned.add(partition)
        self._await_subscribed(len(partitions))
        for partition in partitions:  # what was announced before we listened
            for data in self.client.hvals(channels[partition]):
                self._backlog.append((partition, decode_turn(bytes(data))))

    def _keep_share(self) -> None:
        """Every lease/3: heartbeat, renew the leases, give back or take partitions to
        keep a fair share (the projection workers' rhythm, docs/workers.md)."""
        leases = self.leases
        now = time.monotonic()
        if leases is None or now < self._next_maintain:
            return
        self._next_maintain = now + self.lease_ms / 3000
        live = leases.heartbeat(self.worker_id, self.lease_ms)
        owned = sorted(self._owned)
        for partition, stored in zip(owned, leases.renew(owned, self.worker_id, self.lease_ms), strict=True):
            if stored is None:
                self._unlisten(partition, "lease lost")
        share = fair_share(self.space.partitions, live)
        for partition in surplus(self._owned, share):
            self._unlisten(partition, "rebalance")
            leases.release(partition, self.worker_id)
        holding = set(self._owned)
        taken = []
        for partition in leases.take_up_to(holding, share, self.worker_id, self.lease_ms):
            holding.add(partition)
            taken.append(partition)
        if taken:
            self._listen(taken)
            log.info("partitions taken", kind=BOTS_KIND, worker=self.worker_id, partitions=taken,
                     owned=len(self._owned))

    def _unlisten(self, partition: int, reason: str) -> None:
        self._owned.discard(partition)
        self._pubsub.sunsubscribe(turn_channels(self.space)[partition])
        log.info("partition dropped", kind=BOTS_KIND, worker=self.worker_id, partition=partition, reason=reason)

    def _give_back(self) -> None:
        """Stopped: release the leases and leave, so the others take over at once."""
        if self.leases is None:
            return
        with contextlib.suppress(redis.RedisError, *CLUSTER_UNAVAILABLE):  # else they expire
            for partition in sorted(self._owned):
                self.leases.release(partition, self.worker_id)
            self.leases.leave(self.worker_id)
        self._owned.clear()

    def _await_subscribed(self, count: int, timeout_s: float = 10.0) -> None:
        """Until the server confirms ``count`` subscriptions; an announcement of a
        partition already listened to that comes meanwhile is queued, not lost."""
        confirmed = 0
        deadline = time.monotonic() + timeout_s
        while confirmed < count and time.monotonic() < deadline:
            message = next_sharded_message(self._pubsub, self.poll_s)
            if message is not None and message.get("type") == "ssubscribe":
                confirmed += 1
            elif (announced := self._announced(message)) is not None:
                self._backlog.append(announced)
        if confirmed < count:
            raise TimeoutError("the server did not confirm the subscriptions")


_sorted_json = msgspec.json.Encoder(order="sorted").encode


def _rules_key(fields: dict[str, Any]) -> bytes:
    """A rule set's directory fields as one key (the same fields in any order: the same key)."""
    return _sorted_json(fields)


class SeatReader:
    """What the bot and timer workers look up of a table: its public rule set (from the
    turn), a seat's stored view decoded as the game's seat view type, a player's bot level."""

    client: Any
    space: KeySpace
    _rules: dict[bytes, Rules]  # by the rule set's directory fields (``_rules_key``)
    _levels: dict[str, str | None]
    _decoders: dict[str, Decoder[Any]]

    def rules_of(self, turn: Turn) -> Rules:
        """The turn's rule set, kept by its directory fields, not by table: most tables
        share one of a few rule sets, so the cache holds a few entries however many tables
        go by (kept by table, it grew with every new table up to its bound: the bot and
        timer workers' RSS rose through a 10-minute soak)."""
        key = _rules_key(turn.rules)
        rules = self._rules.get(key)
        if rules is None:
            if len(self._rules) >= REMEMBERED:
                self._rules.clear()  # rebuilt on demand
            rules = self._rules[key] = rules_of_directory(turn.rules)
        return rules

    def seat_view(self, game: AnyGame, table_id: str, seat: int) -> Any | None:
        """The seat's stored view: ``version``, ``status``, ``hand`` (the game's type) and
        ``away`` (the away seats)."""
        stored = read_view(self.client, self.space, table_id, str(seat))
        return None if stored is None else self._decoder(game).decode(stored)

    def level_of(self, turn: Turn) -> str | None:
        if turn.level is not None or turn.player is None:
            return turn.level
        if turn.player not in self._levels:
            # a bot seated after the table's creation (quickplay): its player record says
            raw = self.client.hget(f"{self.space.namespace}:player:{turn.player}", "bot")
            if len(self._levels) >= REMEMBERED:
                self._levels.clear()  # read again on demand
            self._levels[turn.player] = None if raw is None else bytes(raw).decode()
        return self._levels[turn.player]

    def _decoder(self, game: AnyGame) -> Decoder[Any]:
        decoder = self._decoders.get(game.name)
        if decoder is None:
            seat_view = msgspec.defstruct(
                f"Stored{game.view_type.__name__}",
                [("version", int), ("status", str), ("hand", game.view_type | None),
                 ("away", tuple[int, ...], ())],
            )
            # a stored view, in either encoding (projections/docs.py)
            decoder = self._decoders[game.name] = Decoder(seat_view)
        return decoder


class BotWorker(TurnListener, SeatReader):
    """One bot worker process's loop over the turns of the partitions it owns."""

    def __init__(self, client: SyncClient, space: KeySpace, handler: TableHandler, *,
                 poll_s: float = 1.0, budget: Budget | None = None, worker_id: str | None = None,
                 lease_ms: int = 3000) -> None:
        self.client = client  # bytes replies
        self.space = space
        self.handler = handler
        self.poll_s = poll_s
        self.budget = budget or Budget()  # no ``stop``: a time cap would make two workers differ
        self.keys = ProjectionKeys(space, BOTS_KIND)
        self.leases = Leases(client, self.keys)
        self.worker_id = worker_id or new_worker_id(BOTS_KIND)
        self.lease_ms = lease_ms
        self._done: OrderedDict[str, int] = OrderedDict()  # table -> last version handled
        self._rules = {}
        self._levels = {}
        self._decoders = {}
        self.played = 0
        self.thinking_s = 0.0  # CPU time the policies took
        self._next_report = 0.0

    def idle(self) -> None:
        self.report()

    def report(self, force: bool = False) -> None:
        """Once a second: what this worker did (``mighty:{workers}:bots:stats:<id>``)."""
        now = time.monotonic()
        if not force and now < self._next_report:
            return
        self._next_report = now + 1.0
        stats = {"worker": self.worker_id, "kind": BOTS_KIND, "played": self.played,
                 "thinking_s": round(self.thinking_s, 3), "cpu_s": round(time.process_time(), 3),
                 "partitions": sorted(getattr(self, "_owned", ()))}
        self.client.set(self.keys.stats(self.worker_id), _encode(stats), ex=3600)

    def after_outage(self) -> None:
        self._done.clear()  # a turn played before a rollback is due again

    # ---------------------------------------------------------------- one turn

    def handle(self, turn: Turn) -> None:
        """Play ``turn`` if it is the service's; never raises for a refusal or a store error."""
        if self._done.get(turn.table_id, -1) >= turn.version:
            return  # handled already (announced again with other tables' changes)
        self._remember(turn.table_id, turn.version)
        try:
            if turn.deal:
                state, _ = self.handler.state_of(turn.table_id)
                service_steps(self.handler, turn.table_id, state)
                return
            level = self.level_of(turn)
            if level is None or turn.seat is None:
                return  # a person's turn
            self._play(turn, turn.seat, level)
        except (StoreUnavailable, VersionConflict, redis.RedisError, *CLUSTER_UNAVAILABLE) as error:
            log.warning("bot_turn_failed", table=turn.table_id, version=turn.version, error=str(error))
            self._done.pop(turn.table_id, None)  # a later announcement may retry it
        except MightyError as refused:  # another worker, a person or a timer moved first
            log.info("bot_turn_refused", table=turn.table_id, version=turn.version, code=refused.code)

    def _play(self, turn: Turn, seat: int, level: str) -> None:
        rules = self.rules_of(turn)
        game = game_of(rules)
        view = self.seat_view(game, turn.table_id, seat)
        if view is None:
            return
        hand = view.hand
        if view.status != "playing" or view.version < turn.version or hand is None or hand.to_act != seat:
            return  # the view moved on: this turn is past
        if turn.away and seat not in view.away:
            return  # its player came back since the notice: the turn is theirs (its new notice says so)
        # The seed and the id are the view's version: a worker whose notice is older but
        # reads the same view makes the same move under the same id.
        self._remember(turn.table_id, view.version)
        policies = game.bots()
        policy = policies.get(level) or policies[AWAY_LEVEL]
        thinking = time.thread_time()
        command = policy(rules, hand, turn_seed(turn.table_id, view.version, seat), self.budget)
        self.thinking_s += time.thread_time() - thinking
        # A bot seat plays in its holder's name; an away seat is played by the service.
        submission = Submission(command, None if turn.away else turn.player)
        result = send_then_step(self.handler, turn.table_id, submission, turn_command_id(view.version, seat),
                                cached=True)
        if not result.duplicate:
            self.played += 1
            log.debug("bot_move", table=turn.table_id, version=view.version, seat=seat, worker=self.worker_id)

    def _remember(self, table_id: str, version: int) -> None:
        self._done[table_id] = version
        self._done.move_to_end(table_id)
        while len(self._done) > REMEMBERED:
            self._done.popitem(last=False)
