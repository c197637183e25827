"""permessage-deflate as the gateway sends it (RFC 7692; docs/gateway.md, *Sockets*): the
frames it sends are compressed by ISA-L's deflate (``isal``) at its fastest level, not zlib's.

A seat's frame is about 1.2 KB of JSON that repeats most of the one before, and deflate
keeps its window from frame to frame. websockets' encode with zlib at its default level
took 14.5 µs a frame (2,188 frames of a seat of the load benchmark; 12 % of a gateway's
samples at 20 tables); with ISA-L's level 1 it took 9.6 µs, for 134 bytes a frame on the
wire instead of 64 (docs/performance.md, "frames deflated by ISA-L"). Level 0 takes 2.8 µs
against level 1's 6.4 on today's frames (700 frames of a seat, 1,319 bytes each), for 250
bytes a frame instead of 131: a fifth of the frame, a fifth of what the peer's server
sends uncompressed, and 22 KiB of state a socket instead of 30 (docs/performance.md,
"deflate at ISA-L's level 0"). Any inflater reads the stream (a browser's, the websockets
library's: zlib). The window and every parameter are negotiated as before (uvicorn's:
2^12 bytes either way); only the compressor changes. A connection that asked for no
context takeover is left to zlib, as websockets does it (a compressor a message).
"""

from __future__ import annotations

from typing import Any, Final

from isal import isal_zlib
from websockets.extensions.permessage_deflate import (
    PerMessageDeflate,
    ServerPerMessageDeflateFactory,
)
from websockets.typing import ExtensionParameter

# ISA-L's levels are 0 to 3. The compressor alone over 1,500 frames of a seat (12-bit
# window): zlib's default level 74 bytes a frame in 14 µs; ISA-L's level 0 283 bytes in
# 3.6 µs, level 1 157 bytes in 9.0 µs, level 3 92 bytes in 14 µs. Level 0: the least CPU
# a frame (a push's largest step after its write), the frame still a fifth of its size.
LEVEL: Final = 0
MEM_LEVEL: Final = 9  # ISA-L's own memory level (its default): 22 KiB of state a socket at level 0
WINDOW_BITS: Final = 12  # 2^12 bytes either way, uvicorn's window
# what a sync flush ends with, which permessage-deflate leaves off a message (RFC 7692 §7.2.1)
SYNC_FLUSH_TAIL: Final = b"\x00\x00\xff\xff"


class IsalDeflate(PerMessageDeflate):
    """websockets' extension with its compressor (the one it keeps across messages)
    made by ISA-L; reading the client's frames is unchanged (zlib)."""

    def __init__(self, remote_no_context_takeover: bool, local_no_context_takeover: bool,
                 remote_max_window_bits: int, local_max_window_bits: int,
                 compress_settings: dict[Any, Any] | None = None) -> None:
        super().__init__(remote_no_context_takeover, local_no_context_takeover, remote_max_window_bits,
                         local_max_window_bits, compress_settings)
        if not self.local_no_context_takeover:
            # the same calls as zlib's compressor (compress, flush): websockets' encode uses both
            self.encoder = isal_zlib.compressobj(  # type: ignore[assignment]
                LEVEL, isal_zlib.DEFLATED, -self.local_max_window_bits, MEM_LEVEL)


class IsalDeflateFactory(ServerPerMessageDeflateFactory):
    """websockets' negotiation, unchanged, giving ``IsalDeflate``."""

    def process_request_params(self, params: Any, accepted_extensions: Any,
                               ) -> tuple[list[ExtensionParameter], PerMessageDeflate]:
        response, taken = super().process_request_params(params, accepted_extensions)
        return response, IsalDeflate(taken.remote_no_context_takeover, taken.local_no_context_takeover,
                                     taken.remote_max_window_bits, taken.local_max_window_bits,
                                     taken.compress_settings)


def extensions() -> list[ServerPerMessageDeflateFactory]:
    """The gateway's extensions: permessage-deflate with uvicorn's parameters (its
    ``memLevel`` serves the zlib compressor of a connection without context takeover)."""
    return [IsalDeflateFactory(server_max_window_bits=WINDOW_BITS, client_max_window_bits=WINDOW_BITS,
                               compress_settings={"memLevel": 5})]
