"""A use case's refusal: a stable code and a sentence (docs/api.md, "Conventions").

``Refused`` is a ``MightyError`` with its code given per refusal, as the rules' own
refusals are: every caller already answers those (the gateway with the status the API's
table gives the code, services/gateway/errors.py; the CLI with its message).
"""

from __future__ import annotations

from domain.errors import MightyError


class Refused(MightyError):
    """The lobby's rules (a full table, a seat kept for another, a bound passed, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
