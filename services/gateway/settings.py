"""The gateway's settings, from the environment (docs/gateway.md, Settings).

Kept here until ``services/bootstrap.py`` gathers every process's settings in one place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _ints(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    return int(raw) if raw.strip() else default


@dataclass(frozen=True)
class GatewaySettings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    secret: bytes | None = None  # None: generated once per deployment and kept in Redis
    token_ttl_s: int = 30 * 24 * 3600
    cors_origins: tuple[str, ...] = ()
    commands_per_window: int = 20  # per player, shared by every gateway (kept in Redis)
    window_s: int = 2
    max_lag_s: float = 3.0  # /readyz: projections further behind than this are not ready
    max_body: int = 16 * 1024
    partitions: int | None = None
    namespace: str = "mighty"
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> GatewaySettings:
        secret = os.environ.get("MIGHTY_SECRET", "")
        origins = tuple(o.strip() for o in os.environ.get("MIGHTY_CORS_ORIGINS", "").split(",") if o.strip())
        partitions = os.environ.get("MIGHTY_PARTITIONS", "")
        return cls(
            redis_url=os.environ.get("REDIS_URL", cls.redis_url),
            secret=secret.encode() if secret else None,
            token_ttl_s=_ints("MIGHTY_TOKEN_TTL_S", cls.token_ttl_s),
            cors_origins=origins,
            commands_per_window=_ints("MIGHTY_RATE_COMMANDS", cls.commands_per_window),
            window_s=_ints("MIGHTY_RATE_WINDOW_S", cls.window_s),
            max_lag_s=float(os.environ.get("MIGHTY_MAX_LAG_S", "") or cls.max_lag_s),
            partitions=int(partitions) if partitions.strip() else None,
            namespace=os.environ.get("MIGHTY_NAMESPACE", cls.namespace),
        )
