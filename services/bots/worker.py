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
that is the service's deal, it takes the service's own steps (``services/commands/steps.py``),
so a table of bots plays on by itself.

Several workers can run: they share nothing but the store, and do not split the work.
Each acts on every turn; the command id makes the second append of the same move a
duplicate (the bots are deterministic: no clock in the budget), so a move is played once.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from typing import Any

import msgspec
import redis
import structlog

from domain.bots import Budget
from domain.errors import MightyError
from domain.games import AnyGame, Rules
from domain.registry import game_of, rules_of_directory
from domain.table import Submission
from projections.turns import AWAY_LEVEL, TURNS_DOC, Turn, decode_turn
from services.commands.steps import service_steps
from services.commands.tables import TableHandler
from services.projection.keys import ProjectionKeys
from services.projection.read import view as read_view
from services.store.cluster import CLUSTER_UNAVAILABLE, SyncClient, next_sharded_message
from services.store.errors import StoreUnavailable, VersionConflict
from services.store.keys import KeySpace

log = structlog.get_logger("mighty.bots")

_REMEMBERED = 100_000  # tables whose last handled version is kept (a bounded LRU)
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
    """Subscribes to every partition's turn announcements, reads the turns stored so far,
    then hands each announced turn to ``handle``; ``idle`` runs between messages (at
    least every ``poll_s``)."""

    poll_s: float = 1.0
    client: Any
    space: KeySpace

    def handle(self, turn: Turn) -> None:
        raise NotImplementedError

    def idle(self) -> None:
        """Between messages: nothing here."""

    def wait_s(self) -> float:
        return self.poll_s

    def serve(self, stop: threading.Event) -> None:
        """``run`` until ``stop``, riding out a Redis that cannot be reached (down,
        restarting, stalled: ``run`` raises once the client's retries are spent). It waits
        with a growing back-off (50 ms, doubling, at most 2 s) and runs again: subscribed
        anew, it reads the stored turns first, so a turn announced while it was away, or
        one it failed to play during the outage, is taken once Redis answers."""
        failures = 0
        while not stop.is_set():
            started = time.monotonic()
            try:
                self.run(stop)
                return
            except (redis.ConnectionError, redis.TimeoutError, StoreUnavailable, TimeoutError) as error:
                if time.monotonic() - started > _LISTENED_S:
                    failures = 0  # it had been listening: a new outage
                failures += 1
                if failures == 1:
                    log.warning("redis unreachable", kind=type(self).__name__, error=str(error))
                stop.wait(min(2.0, 0.05 * 2.0 ** min(failures - 1, 6)))

    def run(self, stop: threading.Event, max_seconds: float | None = None) -> None:
        channels = turn_channels(self.space)
        pubsub = self.client.pubsub()
        try:
            for channel in channels:
                pubsub.ssubscribe(channel)
            self._await_subscribed(pubsub, len(channels))
            log.info("turn_listener_started", kind=type(self).__name__, partitions=len(channels))
            for channel in channels:  # what was announced before we listened
                for data in self.client.hvals(channel):
                    self.handle(decode_turn(bytes(data)))
            ends = None if max_seconds is None else time.monotonic() + max_seconds
            while not stop.is_set() and (ends is None or time.monotonic() < ends):
                message = next_sharded_message(pubsub, self.wait_s())
                self.idle()
                if message is None or message.get("type") != "smessage":
                    continue
                try:
                    turn = decode_turn(bytes(message["data"]))
                except msgspec.DecodeError as error:
                    log.warning("bad_turn_notice", error=str(error))
                    continue
                self.handle(turn)
        finally:
            pubsub.close()
            log.info("turn_listener_stopped", kind=type(self).__name__)

    def _await_subscribed(self, pubsub: Any, count: int, timeout_s: float = 10.0) -> None:
        confirmed = 0
        deadline = time.monotonic() + timeout_s
        while confirmed < count and time.monotonic() < deadline:
            message = next_sharded_message(pubsub, self.poll_s)
            if message is not None and message.get("type") == "ssubscribe":
                confirmed += 1
        if confirmed < count:
            raise TimeoutError("the server did not confirm the subscriptions")


class SeatReader:
    """What the bot and timer workers look up of a table: its public rule set (from the
    turn), a seat's stored view decoded as the game's seat view type, a player's bot level."""

    client: Any
    space: KeySpace
    _rules: dict[str, Rules]
    _levels: dict[str, str | None]
    _decoders: dict[str, msgspec.json.Decoder[Any]]

    def rules_of(self, turn: Turn) -> Rules:
        rules = self._rules.get(turn.table_id)
        if rules is None:
            if len(self._rules) > _REMEMBERED:
                self._rules.clear()  # rebuilt on demand
            rules = self._rules[turn.table_id] = rules_of_directory(turn.rules)
        return rules

    def seat_view(self, game: AnyGame, table_id: str, seat: int) -> Any | None:
        """The seat's stored view: ``version``, ``status`` and ``hand`` (the game's type)."""
        stored = read_view(self.client, self.space, table_id, str(seat))
        return None if stored is None else self._decoder(game).decode(stored)

    def level_of(self, turn: Turn) -> str | None:
        if turn.level is not None or turn.player is None:
            return turn.level
        if turn.player not in self._levels:
            # a bot seated after the table's creation (quickplay): its player record says
            raw = self.client.hget(f"{self.space.namespace}:player:{turn.player}", "bot")
            self._levels[turn.player] = None if raw is None else bytes(raw).decode()
        return self._levels[turn.player]

    def _decoder(self, game: AnyGame) -> msgspec.json.Decoder[Any]:
        decoder = self._decoders.get(game.name)
        if decoder is None:
            seat_view = msgspec.defstruct(
                f"Stored{game.view_type.__name__}",
                [("version", int), ("status", str), ("hand", game.view_type | None)],
            )
            decoder = self._decoders[game.name] = msgspec.json.Decoder(seat_view)
        return decoder


class BotWorker(TurnListener, SeatReader):
    """One bot worker process's loop over the turns of every partition."""

    def __init__(self, client: SyncClient, space: KeySpace, handler: TableHandler, *,
                 poll_s: float = 1.0, budget: Budget | None = None) -> None:
        self.client = client  # bytes replies
        self.space = space
        self.handler = handler
        self.poll_s = poll_s
        self.budget = budget or Budget()  # no ``stop``: a time cap would make two workers differ
        self._done: OrderedDict[str, int] = OrderedDict()  # table -> last version handled
        self._rules = {}
        self._levels = {}
        self._decoders = {}
        self.played = 0

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
        # The seed and the id are the view's version: a worker whose notice is older but
        # reads the same view makes the same move under the same id.
        self._remember(turn.table_id, view.version)
        policies = game.bots()
        policy = policies.get(level) or policies[AWAY_LEVEL]
        command = policy(rules, hand, turn_seed(turn.table_id, view.version, seat), self.budget)
        # A bot seat plays in its holder's name; an away seat is played by the service.
        submission = Submission(command, None if turn.away else turn.player)
        result = self.handler.handle(turn.table_id, submission, command_id=turn_command_id(view.version, seat))
        if not result.duplicate:
            self.played += 1
        cached = self.handler.cached(turn.table_id)
        state = cached[0] if cached is not None else self.handler.state_of(turn.table_id)[0]
        service_steps(self.handler, turn.table_id, state)

    def _remember(self, table_id: str, version: int) -> None:
        self._done[table_id] = version
        self._done.move_to_end(table_id)
        while len(self._done) > _REMEMBERED:
            self._done.popitem(last=False)
