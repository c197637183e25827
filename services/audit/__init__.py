"""Audit a stored table: ``mighty verify`` (``verify.py``), ``mighty export``
(``export.py``), ``mighty log`` (``log.py``); their CLI is ``services/cli/audit.py``. None names a game:
what differs per game is asked of it (``domain/games.py``)."""

from services.audit.export import HandInProgress, export_hand, hands_dealt
from services.audit.log import describe
from services.audit.recorded import command_of
from services.audit.verify import Finding, Verdict, check_chain, check_replay, verify_events

__all__ = [
    "Finding", "HandInProgress", "Verdict", "check_chain", "check_replay", "command_of",
    "describe", "export_hand", "hands_dealt", "verify_events",
]
