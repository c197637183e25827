"""The application layer: the service's use cases, one small module per concept
(docs/architecture.md, "The application layer").

- ``tables``: create a table with its bots, a table as the API shows it;
- ``seats``: join, leave, back, a rematch's kept seats;
- ``commands``: a player's command at their seat;
- ``quickplay``, ``rematch``: being seated with others, the same game again;
- ``lifecycle``: a new table's bounds, its creator's close;
- ``invites``: a private table's invite code;
- ``steps``: the service's own steps (start, deal), which every caller takes after a
  command it sent;
- ``ports``: ``Tables``, what they need of the stores; ``errors``: ``Refused``.

The gateway's routes call them over its ``Backend`` (which is a ``Tables``); the bot and
timer workers take the service's steps from ``steps``.
"""
