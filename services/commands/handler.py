"""Command handling: the two shells around the sans-IO core (``services/commands/core.py``).

``CommandHandler`` performs the core's requests on a synchronous ``EventStore`` (the CLI,
the workers' tests, the benchmarks, threads); ``AsyncCommandHandler`` awaits them on an
``AsyncEventStore`` (an ASGI gateway: many tables in flight from one event loop). Each
shell is the loop that carries a request to the store and the answer (or the store's
error) back, plus one log line per command; every decision is the core's.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any, Generic

import structlog

from services.commands.core import (
    Append,
    C,
    CommandCore,
    CommandResult,
    Decider,
    E,
    OutcomeOf,
    R,
    Read,
    ReadHead,
    Request,
    S,
    Sleep,
    Steps,
    Warn,
    inner,
    outcome_label,
)
from services.store.base import AsyncEventStore, EventStore

__all__ = ["AsyncCommandHandler", "CommandHandler", "CommandResult", "Decider"]


class _Shell(Generic[S, C, E]):
    """What both shells share that is not I/O: the core, and the log line."""

    def __init__(
        self,
        decider: Decider[S, C, E],
        *,
        cache_size: int = 10_000,
        max_attempts: int = 8,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.core: CommandCore[S, C, E] = CommandCore(
            decider, cache_size=cache_size, max_attempts=max_attempts, jitter=jitter
        )
        self._bound_log: Any = None

    @property
    def decider(self) -> Decider[S, C, E]:
        return self.core.decider

    @property
    def max_attempts(self) -> int:
        return self.core.max_attempts

    def cached(self, table_id: str) -> tuple[S, int] | None:
        """The cached state and version, with no I/O (may be behind the store)."""
        return self.core.cached(table_id)

    def _log(self) -> Any:
        """This handler's logger, bound when it first logs: to the logging setup in force
        then (not to that of an earlier handler), and without the lazy proxy's lookup on
        every command."""
        if self._bound_log is None:
            self._bound_log = structlog.get_logger("mighty.store").bind()
        return self._bound_log

    def _log_command(
        self,
        table_id: str,
        command: object,
        error: BaseException | None,
        result: CommandResult[E] | None,
        started: float,
    ) -> None:
        wrapped = inner(command)
        self._log().info(
            "command",
            table=table_id,
            seat=getattr(wrapped, "seat", None),
            command=type(wrapped).__name__,
            outcome=outcome_label(error, result),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )


class CommandHandler(_Shell[S, C, E]):
    """The synchronous shell; thread-safe as far as its store is."""

    def __init__(
        self,
        store: EventStore,
        decider: Decider[S, C, E],
        *,
        cache_size: int = 10_000,
        max_attempts: int = 8,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        super().__init__(decider, cache_size=cache_size, max_attempts=max_attempts, jitter=jitter)
        self.store = store

    def handle(self, table_id: str, command: C, *, command_id: str) -> CommandResult[E]:
        """Decide and append ``command``; raise the refusal or store error, never write it."""
        started = time.perf_counter()
        result: CommandResult[E] | None = None
        error: BaseException | None = None
        try:
            result = self._run(self.core.handle(table_id, command, command_id))
            return result
        except BaseException as raised:
            error = raised
            raise
        finally:
            self._log_command(table_id, command, error, result, started)

    def state_of(self, table_id: str) -> tuple[S, int]:
        """The table's current state and version, caught up from the store."""
        return self._run(self.core.state_of(table_id))

    def _run(self, steps: Steps[R]) -> R:
        answer: Any = None
        failed: Exception | None = None
        while True:
            try:
                request = steps.send(answer) if failed is None else steps.throw(failed)
            except StopIteration as done:
                value: R = done.value
                return value
            failed = None
            try:
                if type(request) is Append:  # the hot path, without the dispatch
                    answer = self.store.append(
                        request.table_id,
                        request.events,
                        expected=request.expected,
                        command_id=request.command_id,
                        outcome=request.outcome,
                    )
                else:
                    answer = self._perform(request)
            except Exception as error:  # noqa: BLE001 - handed to the core, which re-raises
                failed, answer = error, None

    def _perform(self, request: Request) -> Any:
        store = self.store
        if isinstance(request, Append):
            return store.append(
                request.table_id,
                request.events,
                expected=request.expected,
                command_id=request.command_id,
                outcome=request.outcome,
            )
        if isinstance(request, Read):
            return store.read(request.table_id, request.after_version, request.to_version)
        if isinstance(request, OutcomeOf):
            return store.outcome_of(request.table_id, request.command_id)
        if isinstance(request, ReadHead):
            return store.head(request.table_id)
        if isinstance(request, Sleep):
            time.sleep(request.seconds)
            return None
        assert isinstance(request, Warn)
        self._log().warning(request.event, **request.fields)
        return None


class _Turn:
    """The queue of one table's commands in this process, and how many are in it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class AsyncCommandHandler(_Shell[S, C, E]):
    """The asyncio shell: the same core over an ``AsyncEventStore``.

    Commands for many tables are in flight at once from one event loop (their appends
    share pipelines, see ``AsyncRedisEventStore``). Commands for *one* table take turns,
    in the order they came (``asyncio.Lock`` is fair): run together they would all
    decide on the same cached version, and all but one would conflict, catch up and
    retry, over and over. Another process's commands still race with these, and the
    store's expected-version check settles that as it does for the sync shell.
    """

    def __init__(
        self,
        store: AsyncEventStore,
        decider: Decider[S, C, E],
        *,
        cache_size: int = 10_000,
        max_attempts: int = 8,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        super().__init__(decider, cache_size=cache_size, max_attempts=max_attempts, jitter=jitter)
        self.store = store
        # kept while idle (making one per command cost more than the lock), up to twice
        # the cache's size; then the idle ones are dropped at once
        self._turns: dict[str, _Turn] = {}
        self._max_turns = 2 * cache_size

    async def handle(self, table_id: str, command: C, *, command_id: str) -> CommandResult[E]:
        """Decide and append ``command``; raise the refusal or store error, never write it."""
        started = time.perf_counter()
        result: CommandResult[E] | None = None
        error: BaseException | None = None
        try:
            if type(table_id) is not str:  # the core refuses it; no turn to take
                result = await self._run(self.core.handle(table_id, command, command_id))
                return result
            turn = self._turns.get(table_id)
            if turn is None:
                if len(self._turns) >= self._max_turns:
                    self._turns = {t: turn for t, turn in self._turns.items() if turn.users}
                turn = self._turns[table_id] = _Turn()
            turn.users += 1
            try:
                async with turn.lock:
                    result = await self._run(self.core.handle(table_id, command, command_id))
                return result
            finally:
                turn.users -= 1
        except BaseException as raised:
            error = raised
            raise
        finally:
            self._log_command(table_id, command, error, result, started)

    async def state_of(self, table_id: str) -> tuple[S, int]:
        """The table's current state and version, caught up from the store."""
        return await self._run(self.core.state_of(table_id))

    async def _run(self, steps: Steps[R]) -> R:
        answer: Any = None
        failed: Exception | None = None
        while True:
            try:
                request = steps.send(answer) if failed is None else steps.throw(failed)
            except StopIteration as done:
                value: R = done.value
                return value
            failed = None
            try:
                if type(request) is Append:  # the hot path, without one more coroutine
                    answer = await self.store.append(
                        request.table_id,
                        request.events,
                        expected=request.expected,
                        command_id=request.command_id,
                        outcome=request.outcome,
                    )
                else:
                    answer = await self._perform(request)
            except Exception as error:  # noqa: BLE001 - handed to the core, which re-raises
                failed, answer = error, None

    async def _perform(self, request: Request) -> Any:
        store = self.store
        if isinstance(request, Append):
            return await store.append(
                request.table_id,
                request.events,
                expected=request.expected,
                command_id=request.command_id,
                outcome=request.outcome,
            )
        if isinstance(request, Read):
            return await store.read(request.table_id, request.after_version, request.to_version)
        if isinstance(request, OutcomeOf):
            return await store.outcome_of(request.table_id, request.command_id)
        if isinstance(request, ReadHead):
            return await store.head(request.table_id)
        if isinstance(request, Sleep):
            await asyncio.sleep(request.seconds)
            return None
        assert isinstance(request, Warn)
        self._log().warning(request.event, **request.fields)
        return None
