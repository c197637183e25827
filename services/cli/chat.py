"""``mighty chat mute|unmute|muted``: an operator's mute of a player's table chat,
everywhere (docs/api.md, "Table chat"). A player muted so has every chat message refused
(403 ``chat_muted``) by every gateway sharing the store, until unmuted; what they said
before stays. The set is ``services.gateway.chat.muted_everywhere_key``."""

from __future__ import annotations

import argparse

from services.cli.common import EXIT_OK, wired, write_line
from services.gateway.chat import muted_everywhere_key
from services.settings import add_store_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser("chat", help="an operator's mute of a player's table chat, everywhere")
    actions = group.add_subparsers(dest="action", required=True)
    for action, text in (("mute", "refuse every chat message of PLAYER, at every table"),
                         ("unmute", "let PLAYER chat again")):
        parser = actions.add_parser(action, help=text)
        parser.add_argument("player", help="the player's id (as GET /api/v1/players/{player} names it)")
        add_store_options(parser)
        parser.set_defaults(run=cmd_chat)
    listed = actions.add_parser("muted", help="the players muted everywhere, one a line")
    add_store_options(listed)
    listed.set_defaults(run=cmd_chat)


def cmd_chat(args: argparse.Namespace) -> int:
    wiring = wired(args)
    key = muted_everywhere_key(wiring.space.namespace)
    client = wiring.client
    if args.action == "mute":
        client.sadd(key, args.player)
        write_line(f"muted {args.player} everywhere")
    elif args.action == "unmute":
        client.srem(key, args.player)
        write_line(f"unmuted {args.player}")
    else:
        for player in sorted(p.decode() if isinstance(p, bytes) else str(p) for p in client.smembers(key)):
            write_line(player)
    return EXIT_OK
