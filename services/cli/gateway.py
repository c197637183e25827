"""``mighty gateway [--host --port]``: the HTTP and WebSocket gateway (``services/gateway/``)."""

from services.gateway.cli import register

__all__ = ["register"]
