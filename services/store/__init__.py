"""The event store: one Redis stream per table, appended by one Lua script (docs/store.md)."""

from services.store.async_redis_store import AsyncRedisEventStore, connect_async
from services.store.base import (
    EMPTY_HEAD,
    GENESIS,
    Appended,
    AsyncEventStore,
    EventStore,
    FeedEntry,
    Head,
    StoredEvent,
)
from services.store.errors import (
    BadAppend,
    BadCommandId,
    BadTableId,
    ChainMismatch,
    CommandIdReused,
    PayloadTooLarge,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    VersionConflict,
)
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect

__all__ = [
    "EMPTY_HEAD",
    "GENESIS",
    "Appended",
    "AsyncEventStore",
    "AsyncRedisEventStore",
    "BadAppend",
    "BadCommandId",
    "BadTableId",
    "ChainMismatch",
    "CommandIdReused",
    "EventStore",
    "FeedEntry",
    "Head",
    "KeySpace",
    "PayloadTooLarge",
    "RedisEventStore",
    "StoredEvent",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "VersionConflict",
    "connect",
    "connect_async",
]
