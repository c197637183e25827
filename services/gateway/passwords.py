"""Passwords: argon2id through ``argon2-cffi``, off the event loop and bounded
(docs/accounts.md, "Passwords").

A hash costs about 19 MiB and tens of milliseconds of one core (OWASP's argon2id
profile: m=19456 KiB, t=2, p=1). It runs in a worker thread so the gateway's event loop
goes on serving tables meanwhile, and at most ``AT_ONCE`` run at a time in a gateway:
a crowd of logins waits its turn (bounded again by the request's deadline and the
login quotas) instead of taking every core and hundreds of MiB.

A name nobody holds is answered after verifying against a fixed hash (``verify_nobody``),
so that an unknown name and a wrong password take about the same time. The comparison is
argon2's own (constant time); a password is never logged, stored or returned.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Final

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

TIME_COST: Final = 2
MEMORY_KIB: Final = 19 * 1024
PARALLELISM: Final = 1
AT_ONCE: Final = 2  # hashes running at once in one gateway

PASSWORD_MIN: Final = 8  # characters
PASSWORD_MAX_BYTES: Final = 256  # UTF-8 bytes: argon2 would take more, but the work is bounded first

_hasher: Final = PasswordHasher(time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=PARALLELISM)
_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
_nobody: list[str] = []  # a hash to verify against when the name is unknown (made once)
_nobody_lock = threading.Lock()


def password_problem(password: str) -> str | None:
    """Why ``password`` is not one an account may have; None if it may."""
    if len(password) < PASSWORD_MIN:
        return f"a password is at least {PASSWORD_MIN} characters"
    if len(password.encode("utf-8", "surrogatepass")) > PASSWORD_MAX_BYTES:
        return f"a password is at most {PASSWORD_MAX_BYTES} bytes of UTF-8"
    return None


def _slot() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slot = _slots.get(loop)
    if slot is None:
        _slots.clear()  # one loop per gateway process; a test's earlier loops are gone
        slot = _slots[loop] = asyncio.Semaphore(AT_ONCE)
    return slot


def _verify(stored: str, password: str) -> bool:
    try:
        return _hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def _nobody_hash() -> str:
    with _nobody_lock:
        if not _nobody:
            _nobody.append(_hasher.hash("not anybody's password"))
        return _nobody[0]


async def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (a fresh salt each time), in a worker thread."""
    async with _slot():
        return await asyncio.to_thread(_hasher.hash, password)


async def verify(stored: str | None, password: str) -> bool:
    """Whether ``password`` is the one ``stored`` hashes; ``stored`` None (no such
    account): verified against a fixed hash anyway, then False."""
    async with _slot():
        if stored is None:
            await asyncio.to_thread(_verify, await asyncio.to_thread(_nobody_hash), password)
            return False
        return await asyncio.to_thread(_verify, stored, password)


def needs_rehash(stored: str) -> bool:
    """The hash was made with other parameters than today's (then rehashed at a login)."""
    try:
        return _hasher.check_needs_rehash(stored)
    except InvalidHashError:
        return False
