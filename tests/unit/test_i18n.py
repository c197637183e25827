"""The six languages (docs/i18n.md): every catalog holds every key of the English one and
no other, each plural message has a form for each CLDR category of its language, each
refusal code has its sentence everywhere, every translation fills the same fields as the
English text; the reader's language is picked as docs/api.md says; labels render in it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from babel import Locale

from domain.errors import MightyError
from domain.presentation import msg
from domain.registry import GAMES
from services.gateway import labels
from services.gateway.errors import _STORE_CODES, STATUS_OF, problem
from services.gateway.views import view_document
from services.i18n.catalogs import LANGS, PLURAL, catalog
from services.i18n.negotiate import accepted, from_header, reader_lang
from tests.unit.test_legal_entries import PLAYABLE, Table

ROOT = Path(__file__).resolve().parents[2]
ENGLISH = catalog("en").texts
FIELDS = re.compile(r"\{(\w*)\}")


def _base(key: str) -> str:
    return key.partition(PLURAL)[0]


@pytest.mark.parametrize("lang", LANGS)
def test_every_catalog_has_every_english_key_and_no_other(lang: str) -> None:
    texts = catalog(lang).texts
    missing = {_base(k) for k in ENGLISH} - {_base(k) for k in texts}
    extra = {_base(k) for k in texts} - {_base(k) for k in ENGLISH}
    assert not missing, f"{lang} lacks {sorted(missing)}"
    assert not extra, f"{lang} has keys English lacks: {sorted(extra)}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_plural_message_has_each_cldr_category_of_its_language(lang: str) -> None:
    texts = catalog(lang).texts
    needed = set(Locale.parse(lang).plural_form.tags) | {"other"}
    plurals = {_base(k) for k in ENGLISH if PLURAL in k}
    assert plurals, "the English catalog has plural messages"
    for key in plurals:
        forms = {k.partition(PLURAL)[2] for k in texts if _base(k) == key and PLURAL in k}
        assert forms == needed, f"{lang} {key}: forms {sorted(forms)}, CLDR categories {sorted(needed)}"
    assert not {k for k in texts if PLURAL not in k} & plurals  # a plural key is never plain too


def test_russian_needs_one_few_many_and_other() -> None:
    assert catalog("ru").categories() == {"one", "few", "many", "other"}
    said = [labels.render(msg("mighty.discard_step", count=n), "ru") for n in (1, 3, 5, 21, 12)]
    assert said == ["Сбросить 1 карту", "Сбросить 3 карты", "Сбросить 5 карт", "Сбросить 21 карту",
                    "Сбросить 12 карт"]
    assert labels.render(msg("mighty.discard_step", count=1), "en") == "Discard 1 card"
    assert labels.render(msg("mighty.discard_step", count=3), "ja") == "3枚捨てる"


@pytest.mark.parametrize("lang", LANGS)
def test_every_translation_fills_the_same_fields_as_the_english_text(lang: str) -> None:
    english = {_base(k): set(FIELDS.findall(t)) for k, t in ENGLISH.items()}
    for key, text in catalog(lang).texts.items():
        assert set(FIELDS.findall(text)) == english[_base(key)], f"{lang} {key}: {text!r}"


def _refusal_codes() -> set[str]:
    """Every code a refusal can carry: the error classes', the API's table, and every code
    literal a refusal is raised with in the source."""
    codes = set(STATUS_OF) | set(_STORE_CODES.values())
    classes: list[type] = [MightyError]
    while classes:
        cls = classes.pop()
        codes.add(cls.__dict__.get("code", "error"))
        classes.extend(cls.__subclasses__())
    raised = re.compile(r'(?:raise \w+|ApiError)\(\s*"([a-z][a-z_]+)"(?: if [^"]+ else "([a-z_]+)")?')
    for path in [*ROOT.glob("domain/**/*.py"), *ROOT.glob("services/**/*.py")]:
        if path.name == "settings.py":  # a setting's name in a start-up error, not a refusal
            continue
        for found in raised.findall(path.read_text()):
            codes.update(c for c in found if c)
    codes -= {"unreachable"}  # an assertion, not a refusal
    return {c for c in codes if c and not c.startswith("_")}


@pytest.mark.parametrize("lang", LANGS)
def test_every_refusal_code_has_a_sentence_in_every_catalog(lang: str) -> None:
    codes = _refusal_codes()
    assert {"not_your_turn", "unknown_table", "must_follow_suit", "rate_limited"} <= codes
    missing = sorted(c for c in codes if catalog(lang).get(f"refusal.{c}") is None)
    assert not missing, f"{lang} lacks refusal sentences for {missing}"


def test_a_refusal_keeps_its_code_and_its_english_words_and_takes_the_readers_sentence() -> None:
    english = problem("not_your_turn", "Seat 2 is to act, not seat 0.", "en")
    assert english == {"code": "not_your_turn", "message": "Seat 2 is to act, not seat 0."}
    russian = problem("not_your_turn", "Seat 2 is to act, not seat 0.", "ru")
    assert russian == {"code": "not_your_turn", "message": "Сейчас не ваш ход."}
    # a code without a sentence (none today) keeps the English message rather than failing
    assert problem("no_such_code", "As made.", "ko")["message"] == "As made."


@pytest.mark.parametrize("lang", LANGS)
def test_the_games_catalogue_renders_every_name_in_each_language(lang: str) -> None:
    for game in GAMES.values():
        for entry in game.presentation.catalogue():
            for message in labels.messages_of(entry):
                assert catalog(lang).get(message.key) or catalog(lang).plural(message.key, 2), (lang, message.key)
    body = str(labels.games(lang))
    assert "mighty." not in body.replace("family='mighty'", "") and "mitigati." not in body
    names = {g.game: g.name for g in labels.games(lang).games}
    assert names["mighty-5"] == labels.render(msg("mighty.name.mighty-5"), lang)


def test_card_names_follow_each_languages_word_order_and_case() -> None:
    def card(lang: str, game: str, name: str) -> str:
        return {c.card: c.label for g in labels.games(lang).games if g.game == game for c in g.cards}[name]

    assert [card(lang, "mighty-5", "QH") for lang in LANGS] == [
        "하트 퀸", "queen of hearts", "hertta rouva", "дама червей", "ハートのクイーン", "donna di cuori"]
    assert card("ru", "mitigati", "NC") == "рыцарь кубков"
    assert card("it", "mitigati", "FOOL") == "il Matto"


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_every_legal_entry_of_random_hands_is_labelled_in_the_readers_language(lang: str) -> None:
    from projections.views import ViewState, render

    rng = random.Random(lang)
    english = set(ENGLISH.values())
    for variant in PLAYABLE:
        table = Table(variant, rng)
        game = table.state.game
        for _ in range(300):
            if table.state.status != "playing" or table.state.awaiting_deal:
                break
            hand = table.state.hand
            assert hand is not None
            acting = game.to_act(hand)
            assert acting is not None
            stored = __import__("msgspec").json.encode(
                render(ViewState(table=table.state, version=table.version, name=""), str(acting)))
            for entry in view_document(stored, lang=lang)["legal"]:
                label = entry["label"]
                assert "{" not in label and "mighty." not in label and "mitigati." not in label, (lang, entry)
                if lang in ("ko", "ru", "ja"):  # another script: no English sentence slips through
                    assert label not in english or label.isdigit(), (lang, label)
            table.apply(table.submission(acting, rng.choice(table.legal(acting))))  # type: ignore[arg-type]


# ---------------------------------------------------------------- the reader's language


def test_accept_language_is_read_by_quality_then_order_and_bounded() -> None:
    assert accepted("fi-FI,fi;q=0.9,en;q=0.8") == ["fi-FI", "fi", "en"]
    assert accepted("en;q=0.5, ja") == ["ja", "en"]
    assert accepted("*;q=0.1, it;q=0, ko;q=nonsense") == []
    assert accepted("") == [] and accepted(None) == []
    assert len(accepted(",".join(["de"] * 1000))) <= 16


def test_accept_language_negotiates_the_services_languages() -> None:
    assert from_header("fi-FI,fi;q=0.9,en;q=0.8") == "fi"
    assert from_header("de-DE, ru;q=0.5, ja;q=0.7") == "ja"
    assert from_header("ko-KR") == "ko"
    assert from_header("en-GB") == "en"
    assert from_header("it_IT") == "it"
    assert from_header("zh-Hant-TW, de") is None


def test_the_query_beats_the_setting_beats_the_header_beats_english() -> None:
    assert reader_lang("ja", "ko", "fi") == "ja"
    assert reader_lang(None, "ko", "fi") == "ko"
    assert reader_lang(None, None, "fi") == "fi"
    assert reader_lang(None, None, None) == "en"
    # names the service does not speak are passed over, never trusted
    assert reader_lang("xx", "../etc", "de") == "en"
    assert reader_lang("KO", None, "ru") == "ru"
