"""The web client's catalogue of games and options (clients/web/games.json, read by the
lobby's create form) says what the rules code says."""

from __future__ import annotations

import json
from pathlib import Path

from domain.mighty.rules import OPTIONS, VARIANTS

CATALOGUE = Path(__file__).resolve().parents[2] / "clients" / "web" / "games.json"


def test_the_create_form_offers_every_rule_set_with_its_players_and_default_score() -> None:
    games = {g["name"]: g for g in json.loads(CATALOGUE.read_text())["games"]}
    assert set(games) == set(VARIANTS) | {"mitigati"}
    for name, variant in VARIANTS.items():
        assert games[name]["players"] == variant.players
        assert games[name]["default_score"] == variant.default_score
    assert games["mitigati"]["players"] == 3


def test_the_create_form_offers_every_option_with_its_values_default_first() -> None:
    options = json.loads(CATALOGUE.read_text())["options"]
    assert options == {name: list(values) for name, values in OPTIONS.items()}
