"""The service's players: the bot worker (docs/bots.md, "The bot worker")."""
