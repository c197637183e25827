"""The HTTP and WebSocket gateway (docs/gateway.md): Litestar on uvicorn, over one adapter
(``backend.py``) to the command path and the stores."""
