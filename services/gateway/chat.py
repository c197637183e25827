"""Table chat (docs/api.md, "Table chat"): messages of seated players and spectators,
kept apart from the game's stream and pushed on the table's WebSocket.

- **Stored apart, kept with its table.** A table's chat is a Redis stream of its own,
  ``<ns>:{pNN}:t:<table>:chat``: the table's hash tag, so a cluster keeps it on the
  table's node, but no event of the table. The audited record of the game stays the game;
  a chat message is nobody's move. The stream is capped (``MAXLEN ~ KEEP``) and has no
  expiry: it lives as long as the table's record. The archive worker moves it into
  PostgreSQL with the table (docs/archive.md) and deletes it in the same step as the
  table's keys; ``GET …/chat`` and a stream's opening then read it from there
  (``AsyncArchivedEventStore``'s archive, in a thread), and a message to an archived
  table is refused (409 ``table_closed``: the append script checks the archive's index
  entry, on the same slot). An entry's id is the message's ``id`` (Redis's ``<ms>-<n>``,
  so ids sort by time and ``at`` is read from it).
- **Pushed.** The same script that appends a message publishes it (``SPUBLISH``, one step)
  on the sharded channel named like the stream; each gateway follows that channel on
  its one Pub/Sub connection (``FanoutHub``, services/projection/fanout.py) for every
  socket reading the table, subscribes first and reads the stream after, so a socket
  misses nothing (``follow``): the cursor is the last message id given.
- **Mutes.** A player mutes another for themselves (a set per player,
  ``…:gateway:{gw:<player>}:mutes``, ``MUTES_MAX`` at most): that player's messages are
  left out of every push to the muter and of every ``GET …/chat`` the muter makes. An
  operator mutes a player everywhere (``mighty chat mute``, services/cli/chat.py): their
  messages are refused (403 ``chat_muted``) and nothing is stored.
- **Bounds** (``ChatLimits``, the settings ``MIGHTY_CHAT_*``: docs/operations.md). A
  text is 1–``text_max`` printable characters, no control or format character (the rule
  of names: services/gateway/names.py). ``rate`` messages per ``rate_window_s`` a player
  (429 ``rate_limited`` with ``Retry-After``); a text that repeats one of the player's
  last ``recent`` (case, spaces and punctuation aside) within ``recent_s`` is refused 422
  ``repeated_message`` (``recent`` 0: no such rule). Quick phrases (``PHRASES``: keys,
  each reader sees them in its language) are outside that rate, under a looser one of
  their own (``phrase_rate`` per ``phrase_window_s``) and the same rule against repeats.
- **What it never holds.** The server adds nothing to a message: no card, no seat's
  secret. What players type is theirs.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal

import msgspec

from services.archive.errors import ArchiveUnavailable
from services.archive.keys import ArchiveKeys
from services.archive.reads import AsyncArchivedEventStore
from services.gateway.errors import ApiError
from services.gateway.names import name_problem
from services.gateway.quotas import retry_after
from services.projection.read import AsyncReader
from services.settings import CHAT_TEXT_CEILING, Settings
from services.store.keys import KeySpace

KEEP: Final = 500  # messages a table's chat keeps (about: MAXLEN ~)
PAGE: Final = 100  # messages a GET, or a stream's opening, gives at most
MUTES_MAX: Final = 200
# The quick phrases: a key each, sent as the key; the text a reader is shown (English so
# far: the languages' catalogues take these keys over, services/gateway/labels.py).
PHRASES: Final[dict[str, str]] = {
    "hello": "Hello!", "good_luck": "Good luck!", "well_played": "Well played!", "thanks": "Thanks!", "bye": "Bye!",
}
_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}", re.ASCII)
_WORDS = re.compile(r"[\W_]+")

# KEYS[1] the chat stream (also the channel), KEYS[2] the partition's archive index;
# ARGV[1] the cap, ARGV[2] the message, ARGV[3] the table. False: the table is archived
# (its chat went with it), nothing written. A chat stored with an expiry by an earlier
# release loses it (PERSIST): a chat lives as long as its table's record.
APPEND_SCRIPT: Final = """
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then return false end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'm', ARGV[2])
redis.call('PERSIST', KEYS[1])
redis.call('SPUBLISH', KEYS[1], id .. '\\n' .. ARGV[2])
return id
"""
# KEYS[1] the player's recent texts; ARGV[1] the text's key, ARGV[2] how many, ARGV[3] ttl.
# 1: remembered; 0: a repeat (nothing changed).
RECENT_SCRIPT: Final = """
for _, seen in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if seen == ARGV[1] then return 0 end
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


class ChatLimits(msgspec.Struct, frozen=True, kw_only=True):
    """A message's length, a player's rates and the rule against repeats (the settings
    ``MIGHTY_CHAT_*``, services/settings.py; the defaults are theirs)."""

    text_max: int = 280
    rate: int = 5  # messages per rate_window_s a player
    rate_window_s: int = 10
    phrase_rate: int = 12  # quick phrases per phrase_window_s a player
    phrase_window_s: int = 60
    recent: int = 3  # a text repeating one of the player's last this many (0: no such rule) ...
    recent_s: int = 60  # ... within this long is refused

    @classmethod
    def of(cls, settings: Settings) -> ChatLimits:
        return cls(text_max=settings.chat_text_max, rate=settings.chat_rate,
                   rate_window_s=settings.chat_rate_window_s, phrase_rate=settings.chat_phrase_rate,
                   phrase_window_s=settings.chat_phrase_window_s, recent=settings.chat_recent,
                   recent_s=settings.chat_recent_s)


# ---------------------------------------------------------------- the API's bodies


class ChatRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``POST …/chat``: a ``text``, or a quick ``phrase`` (one of ``PHRASES``' keys). The
    schema's bound is the settings' ceiling; ``checked`` holds a text to ``text_max``."""

    text: Annotated[str, msgspec.Meta(max_length=4 * CHAT_TEXT_CEILING)] | None = None
    phrase: Annotated[str, msgspec.Meta(max_length=32)] | None = None


class ChatPosted(msgspec.Struct, frozen=True):
    id: str
    at: str


class ChatMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A message as a reader receives it, on the stream and in a GET alike."""

    type: Literal["chat"] = "chat"
    id: str
    player: str
    name: str
    text: str
    at: str
    phrase: str | None = None  # a quick phrase's key: ``text`` is its text in the reader's language


class ChatMessages(msgspec.Struct, frozen=True):
    messages: list[ChatMessage]
    text_max: int = 280  # a message's most characters here (MIGHTY_CHAT_TEXT_MAX): a client's input bound


class MuteRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    player: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class Mutes(msgspec.Struct, frozen=True):
    players: list[str]


class _Stored(msgspec.Struct, frozen=True, omit_defaults=True):
    """What the chat stream holds of a message (its id is the entry's)."""

    player: str
    name: str
    text: str | None = None
    phrase: str | None = None


_encode = msgspec.json.Encoder().encode
_decode_stored = msgspec.json.Decoder(_Stored).decode


def muted_everywhere_key(namespace: str) -> str:
    """The players an operator muted everywhere (``mighty chat mute``): a set."""
    return f"{namespace}:gateway:chat-muted"


def at_of(message_id: str) -> str:
    """``at``: the time in a message id (the server's clock when it was appended)."""
    ms = int(message_id.partition("-")[0])
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _order(message_id: str) -> tuple[int, int]:
    ms, _, n = message_id.partition("-")
    return int(ms), int(n)


def check_after(after: str | None) -> str | None:
    """A cursor (``after=``) is a message id; 422 ``invalid_request`` otherwise."""
    if after is None or after == "":
        return None
    if not _ID.fullmatch(after):
        raise ApiError("invalid_request", "after is a chat message's id (as a message gave it).")
    return after


def checked(body: ChatRequest, limits: ChatLimits) -> tuple[str | None, str | None]:
    """The message's text or phrase, checked; 422 with a code that says what is wrong."""
    if (body.text is None) == (body.phrase is None):
        raise ApiError("invalid_request", "A chat message has a text or a phrase: one of them.")
    if body.phrase is not None:
        if body.phrase not in PHRASES:
            raise ApiError("unknown_phrase", f"{body.phrase[:32]!r} is no quick phrase: {', '.join(PHRASES)}.")
        return None, body.phrase
    text = body.text or ""
    if not 1 <= len(text) <= limits.text_max:
        raise ApiError("bad_message", f"A chat message is 1 to {limits.text_max} characters, not {len(text)}.")
    wrong = name_problem(text, limits.text_max)
    if wrong:
        raise ApiError("bad_message", "Not a chat message: " + wrong.replace("a name", "a message") + ".")
    return text, None


def repeat_key(text: str | None, phrase: str | None) -> str:
    """What counts as the same message: a phrase's key; a text without case, spaces and
    punctuation (``gg``, ``GG!``, `` g g `` are one)."""
    if phrase is not None:
        return "phrase:" + phrase
    words = " ".join(_WORDS.sub(" ", (text or "").casefold()).split())
    return "text:" + (words or (text or "").casefold().strip())


# ---------------------------------------------------------------- the store


class ChatStore:
    """Chat, mutes and their pushes over the gateway's asyncio client (one node or a
    cluster: every key of a message is under one hash tag) and its ``FanoutHub``; an
    archived table's chat from the archive (``archived``: the gateway's event store)."""

    def __init__(self, client: Any, space: KeySpace, readers: AsyncReader, *,
                 limits: ChatLimits | None = None, archived: AsyncArchivedEventStore | None = None) -> None:
        self.client = client
        self.space = space
        self.readers = readers
        self.limits = limits or ChatLimits()
        self.archived = archived
        self._archive_keys = ArchiveKeys(space)
        self._ns = space.namespace

    def key(self, table_id: str) -> str:
        return self.space.table(table_id).chat  # <ns>:{pNN}:t:<table>:chat

    def _player_key(self, player: str, name: str) -> str:
        return f"{self._ns}:gateway:{{gw:{player}}}:{name}"

    def _muted_everywhere_key(self) -> str:
        return muted_everywhere_key(self._ns)

    # ------------------------------------------------------------ posting

    async def admit(self, player: str, text: str | None, phrase: str | None,
                    count: Callable[[str, int, int], Awaitable[float | None]]) -> None:
        """The refusals before a message is stored: muted everywhere (403), a repeat (422),
        over the rate (429, counted by ``count``, the gateway's quota counter)."""
        limits = self.limits
        if await self.client.sismember(self._muted_everywhere_key(), player):
            raise ApiError("chat_muted", "An operator has muted you: your messages reach nobody.", status=403)
        if limits.recent > 0:
            remembered = await self.client.eval(RECENT_SCRIPT, 1, self._player_key(player, "chat-recent"),
                                                repeat_key(text, phrase), limits.recent, limits.recent_s)
            if not int(remembered):
                raise ApiError("repeated_message", "You just said that: a message repeating one of your last "
                               f"{limits.recent} is not sent again.")
        limit = (limits.rate, limits.rate_window_s) if phrase is None else (limits.phrase_rate,
                                                                            limits.phrase_window_s)
        wait = await count(f"chat:{player}" if phrase is None else f"chat-phrase:{player}", *limit)
        if wait is not None:
            if limits.recent > 0:
                await self.client.lrem(self._player_key(player, "chat-recent"), 1, repeat_key(text, phrase))
            raise ApiError("rate_limited", f"At most {limit[0]} {'messages' if phrase is None else 'quick phrases'} "
                           f"in {limit[1]} s; wait a moment.", headers=retry_after(wait))

    async def append(self, table_id: str, player: str, name: str, text: str | None, phrase: str | None) -> str:
        """Store the message and publish it, in one step; its id. An archived table's chat
        takes no more (409 ``table_closed``)."""
        stored = _encode(_Stored(player=player, name=name, text=text, phrase=phrase))
        found = await self.client.eval(APPEND_SCRIPT, 2, self.key(table_id), self._archive_keys.index_of(table_id),
                                       KEEP, stored, table_id)
        if found is None:
            raise ApiError("table_closed", f"Table {table_id} is archived: its chat is kept as it was "
                                           "and takes no more messages.", status=409)
        return found.decode() if isinstance(found, bytes) else str(found)

    # ------------------------------------------------------------ reading

    async def _entries(self, table_id: str, after: str | None, count: int) -> list[tuple[str, bytes]]:
        key = self.key(table_id)
        if after is None:  # the latest ``count``, oldest first
            found = list(reversed(await self.client.xrevrange(key, "+", "-", count=count)))
        else:
            found = await self.client.xrange(key, "(" + after, "+", count=count)
        if not found and self.archived is not None:  # nothing in Redis: an archived table's is in PostgreSQL
            return await self._archived_entries(table_id, after, count)
        return [(_text(entry_id), bytes(fields.get(b"m", b"{}"))) for entry_id, fields in found]

    async def _archived_entries(self, table_id: str, after: str | None, count: int) -> list[tuple[str, bytes]]:
        """An archived table's messages from the archive (none for a live table); without
        an archive configured, ``ArchiveUnavailable`` (503), never an empty chat."""
        assert self.archived is not None
        if await self.archived.index_entry(table_id) is None:
            return []
        archive = self.archived.archive
        if archive is None:
            raise ArchiveUnavailable(f"table {table_id} is archived in PostgreSQL and no archive is configured: "
                                     "set MIGHTY_ARCHIVE_URL (or --archive-url)")
        return await asyncio.to_thread(archive.chat, table_id, after, count)

    async def muted_by(self, reader: str | None) -> set[str]:
        if reader is None:
            return set()
        return {_text(p) for p in await self.client.smembers(self._player_key(reader, "mutes"))}

    async def messages(self, table_id: str, reader: str | None, after: str | None) -> list[ChatMessage]:
        """Up to ``PAGE`` messages after ``after`` (None: the latest), less the reader's mutes."""
        muted = await self.muted_by(reader)
        shown = (message(entry_id, data) for entry_id, data in await self._entries(table_id, after, PAGE))
        return [m for m in shown if m is not None and m.player not in muted]

    async def follow(self, table_id: str, reader: str | None, after: str | None,
                     subscribed: asyncio.Event | None = None) -> AsyncIterator[ChatMessage]:
        """Each message of the table's chat after ``after`` (None: the latest ``PAGE``
        first), as it comes, less what the reader muted: subscribed first, then read, so
        nothing is missed; a message id at or before the cursor is never given twice.
        ``subscribed`` is set once the server has confirmed the subscription."""
        channel = self.key(table_id)
        cursor = after
        async with self.readers.hub.following(channel) as inbox:
            if subscribed is not None:
                subscribed.set()
            pending = await self._entries(table_id, cursor, PAGE)
            while True:
                for entry_id, data in pending:
                    if cursor is not None and _order(entry_id) <= _order(cursor):
                        continue
                    cursor = entry_id
                    found = message(entry_id, data)
                    if found is not None and (reader is None or not await self._mutes(reader, found.player)):
                        yield found
                published = await inbox.get()
                if published is None:  # the hub could not hand everything over: read again
                    pending = await self._entries(table_id, cursor, PAGE)
                else:
                    head, _, data = bytes(published).partition(b"\n")
                    pending = [(head.decode(), data)]

    async def _mutes(self, reader: str, author: str) -> bool:
        return bool(await self.client.sismember(self._player_key(reader, "mutes"), author))

    # ------------------------------------------------------------ mutes

    async def mute(self, player: str, other: str) -> None:
        key = self._player_key(player, "mutes")
        if await self.client.scard(key) >= MUTES_MAX and not await self.client.sismember(key, other):
            raise ApiError("too_many_mutes", f"You mute {MUTES_MAX} players already: unmute one first.",
                           status=429)
        await self.client.sadd(key, other)

    async def unmute(self, player: str, other: str) -> None:
        await self.client.srem(self._player_key(player, "mutes"), other)

    async def mutes(self, player: str) -> list[str]:
        return sorted(await self.muted_by(player))


def message(entry_id: str, data: bytes) -> ChatMessage | None:
    """A stored message as a reader receives it (None: an entry that does not decode)."""
    try:
        stored = _decode_stored(data)
    except msgspec.DecodeError:
        return None
    if stored.phrase is not None:
        return ChatMessage(id=entry_id, player=stored.player, name=stored.name, at=at_of(entry_id),
                           text=PHRASES.get(stored.phrase, stored.phrase), phrase=stored.phrase)
    return ChatMessage(id=entry_id, player=stored.player, name=stored.name, text=stored.text or "",
                       at=at_of(entry_id))


def encode_frame(found: ChatMessage) -> bytes:
    return _encode(found)


async def both(*running: Coroutine[Any, Any, None]) -> None:
    """Run a socket's pushers together: the first to fail (or end) ends the others, and
    its error is raised as it is (not grouped), for the socket's handler to tell apart."""
    tasks = [asyncio.ensure_future(each) for each in running]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
