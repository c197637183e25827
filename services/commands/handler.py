"""Command handling: the two shells around the sans-IO core (``services/commands/core.py``).

``CommandHandler`` performs the core's requests on a synchronous ``EventStore`` (the CLI,
the workers' tests, the benchmarks, threads); ``AsyncCommandHandler`` awaits them on an
``AsyncEventStore`` (an ASGI gateway: many tables in flight from one event loop). Each
shell is the loop that carries a request to the store and the answer (or the store's
error) back, plus one log line per command; every decision is the core's.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final, Generic

import structlog

from domain.limits import clip
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

# Tables whose turn (``_Turn``) the async shell keeps while idle; past it the idle ones are
# dropped at once (a table's next command makes its turn again: a dict entry and a deque).
TURNS_KEPT: Final = 1024

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
        self._info: Any = None  # its bound ``info``, looked up once
        self._debug: Any = None  # and ``debug``

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
        seat = getattr(wrapped, "seat", None)
        if error is None and (result is None or not result.duplicate):
            outcome = "ok"  # the common line, without the call
        else:
            outcome = outcome_label(error, result)
        # a command played or refused by the rules is routine: debug (a line per command at
        # info was most of a busy gateway's log); a conflict, an outage, a failure: info
        if outcome == "ok" or outcome == "duplicate" or outcome.startswith("refused:"):
            write = self._debug
            if write is None:
                write = self._debug = self._log().debug
        else:
            write = self._info
            if write is None:
                write = self._info = self._log().info
        write(
            "command",
            table=table_id,
            seat=seat if seat is None or type(seat) is int else clip(repr(seat)),  # a bad one, cut
            command=type(wrapped).__name__,
            outcome=outcome,
            # to the µs; round(x, 3) cost three times as much (it goes through a string)
            latency_ms=int((time.perf_counter() - started) * 1_000_000 + 0.5) / 1000,
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
            result = self._handle(table_id, command, command_id)
            return result
        except BaseException as raised:
            error = raised
            raise
        finally:
            self._log_command(table_id, command, error, result, started)

    def _handle(self, table_id: str, command: C, command_id: str) -> CommandResult[E]:
        core = self.core
        request = core.start(table_id, command, command_id)
        if request is None:
            return self._run(core.handle(table_id, command, command_id))
        if type(request) is not Append:
            return request  # type: ignore[return-value]  # decided no events
        try:
            appended = self.store.append(
                request.table_id,
                request.events,
                expected=request.expected,
                command_id=request.command_id,
                outcome=request.outcome,
            )
        except Exception as refused:  # noqa: BLE001 - handed to the core, which re-raises
            return self._run(core.resume(request, None, refused))
        result = core.finish(request, appended)
        return self._run(core.resume(request, appended, None)) if result is None else result

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
    """One table's turn in this process: whether a command holds it, and the commands
    waiting for it in the order they came.

    ``asyncio.Lock`` did this, but its ``async with`` ran three coroutines per command
    even with no one waiting, which is every command of a gateway whose players wait
    for their answer. Here taking a free turn and giving it back with no one waiting
    are two attribute writes; a waiter is woken by being handed the turn."""

    __slots__ = ("busy", "waiting")

    def __init__(self) -> None:
        self.busy = False
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def wait(self) -> None:
        """Wait until the turn is handed over (``busy`` stays set for this waiter)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.cancelled():
                with contextlib.suppress(ValueError):  # not handed over: just leave the queue
                    self.waiting.remove(future)
            else:  # handed over just as the waiter was cancelled: pass it on
                self.hand_on()
            raise

    def hand_on(self) -> None:
        """Give the turn to the first waiter still waiting, or free it."""
        waiting = self.waiting
        while waiting:
            future = waiting.popleft()
            if not future.done():
                future.set_result(None)
                return
        self.busy = False


class AsyncCommandHandler(_Shell[S, C, E]):
    """The asyncio shell: the same core over an ``AsyncEventStore``.

    Commands for many tables are in flight at once from one event loop (their appends
    share pipelines, see ``AsyncRedisEventStore``). Commands for *one* table take turns,
    in the order they came (``_Turn``): run together they would all
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
        # kept while idle (making one per command cost more than the lock), up to
        # TURNS_KEPT; then the idle ones are dropped at once
        self._turns: dict[str, _Turn] = {}
        self._max_turns = TURNS_KEPT

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
                    self._turns = {t: turn for t, turn in self._turns.items() if turn.busy}
                turn = self._turns[table_id] = _Turn()
            if turn.busy:
                await turn.wait()
            else:
                turn.busy = True
            try:
                # the hot path (CommandCore.start), inline: a coroutine less per command
                core = self.core
                request = core.start(table_id, command, command_id)
                if request is None:
                    result = await self._run(core.handle(table_id, command, command_id))
                elif type(request) is not Append:
                    result = request  # type: ignore[assignment]  # decided no events
                else:
                    try:
                        appended = await self.store.append(
                            request.table_id,
                            request.events,
                            expected=request.expected,
                            command_id=request.command_id,
                            outcome=request.outcome,
                        )
                    except Exception as refused:  # noqa: BLE001 - to the core, which re-raises
                        result = await self._run(core.resume(request, None, refused))
                    else:
                        result = core.finish(request, appended)
                        if result is None:  # a duplicate
                            result = await self._run(core.resume(request, appended, None))
                assert result is not None
                return result
            finally:
                turn.hand_on()
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
