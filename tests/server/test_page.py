"""The page's static files: every string translated, every module served."""

from __future__ import annotations

import re
from importlib import resources

from fastapi.testclient import TestClient

STATIC = resources.files("nard.server") / "static"


def keys_by_language() -> dict[str, list[str]]:
    """Each language's keys in i18n.js, in their order, repeats included."""
    text = (STATIC / "i18n.js").read_text(encoding="utf-8")
    body = text[text.index("const STRINGS = {") : text.index("export function pickLanguage")]
    blocks = re.split(r"^  (\w\w): \{$", body, flags=re.M)
    return {
        lang: re.findall(r'^    "?([\w-]+)"?:', block, flags=re.M)
        for lang, block in zip(blocks[1::2], blocks[2::2], strict=True)
    }


def strings_by_language() -> dict[str, set[str]]:
    return {lang: set(keys) for lang, keys in keys_by_language().items()}


def test_no_string_is_given_twice_in_a_language() -> None:
    """A key written twice in one language keeps only its last text, silently."""
    for lang, keys in keys_by_language().items():
        assert len(keys) == len(set(keys)), (
            lang,
            sorted(k for k in set(keys) if keys.count(k) > 1),
        )


def test_every_string_is_in_english_persian_and_arabic() -> None:
    strings = strings_by_language()
    assert set(strings) == {"en", "fa", "ar"}
    assert len(strings["en"]) > 100
    for lang in ("fa", "ar"):
        assert strings[lang] == strings["en"], (lang, strings["en"] ^ strings[lang])


def test_the_page_and_its_modules_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert '<script type="module" src="/static/app.js">' in page.text
    for name in ("app.js", "board.js", "i18n.js", "verify.js", "style.css", "favicon.svg"):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200 and len(response.content) > 100, name
    for lang in ("en", "fa", "ar"):
        rules = client.get(f"/static/rules/{lang}.md")
        assert rules.status_code == 200 and len(rules.text) > 3000, lang
    assert client.get("/static/../settings.py").status_code == 404


def test_every_refusal_the_server_can_give_is_translated() -> None:
    source = "".join(
        (resources.files("nard.server") / name).read_text(encoding="utf-8")
        for name in ("app.py", "service.py", "chouette.py", "tables.py")
    )
    codes = set(re.findall(r'ServiceError\(\s*\d+,\s*"([a-z_]+)"', source))
    codes |= {"invalid_request", "not_found"}
    assert {"not_your_turn", "illegal_action", "stale", "csrf"} <= codes
    missing = {code for code in codes if f"err_{code}" not in strings_by_language()["en"]}
    assert not missing


def advice_key(part: str) -> str:
    """The key the page looks a part of the engine's cube advice up by (app.js
    cubeAdvice)."""
    return "cube_" + re.sub(r"[^a-z]+", "_", part.lower()).rstrip("_")


def test_every_cube_advice_the_engine_gives_is_translated() -> None:
    """Tried on 2026-12-05: the hint's cube advice stayed in English in fa and ar."""
    source = (resources.files("nard.engine") / "cube.py").read_text(encoding="utf-8")
    phrases = set(re.findall(r'"((?:[A-Z][a-z ]+?)(?:, [a-z ()]+)?)"', source))
    advice = r"(Never|No|Optional|Too good|Double|Redouble)\b.*, |Doubling not available$"
    phrases = {p for p in phrases if re.match(advice, p)}
    assert len(phrases) >= 20, sorted(phrases)
    strings = strings_by_language()["en"]
    for phrase in phrases:
        for part in phrase.split(", "):
            assert advice_key(part) in strings, (phrase, advice_key(part))


def test_every_replay_caption_is_translated() -> None:
    from nard.notation.records import ActionKind

    kinds = {"opening", "roll", "no_play", "play", "seating", "propose_double", "agree", "refuse"}
    kinds |= {k.value for k in ActionKind if k is not ActionKind.MOVE}
    strings = strings_by_language()["en"]
    assert {f"step_{k}" for k in kinds} <= strings, {f"step_{k}" for k in kinds} - strings


def test_every_error_code_the_server_gives_is_translated() -> None:
    """Refusals carry a code the page says in its language (err_<code>); tried on
    2026-12-05, some came in English only."""
    codes = {"not_found", "method_not_allowed", "http_error", "offline", "socket_closed"}
    for source in (resources.files("nard.server")).iterdir():
        if not source.name.endswith(".py"):
            continue
        text = source.read_text(encoding="utf-8")
        codes |= set(
            re.findall(r'(?:ServiceError|_error|refuse)\(\s*(?:\d{3}\s*,\s*)?"([a-z_]+)"', text)
        )
        codes |= set(re.findall(r'"code":\s*"([a-z_]+)"', text))
    assert len(codes) > 30, codes
    strings = strings_by_language()["en"]
    missing = {c for c in codes if f"err_{c}" not in strings and c != "socket_closed"}
    assert not missing, missing
