"""``mighty play``: a Textual client of the public HTTP and WebSocket API (docs/api.md).

It imports nothing of the service: it speaks to a gateway exactly as anyone else's
client would (docs/terminal.md).
"""
