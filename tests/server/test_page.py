"""The page's static files: every string translated, every module served."""

from __future__ import annotations

import re
from importlib import resources

from fastapi.testclient import TestClient

STATIC = resources.files("nard.server") / "static"


def strings_by_language() -> dict[str, set[str]]:
    text = (STATIC / "i18n.js").read_text(encoding="utf-8")
    body = text[text.index("const STRINGS = {") : text.index("export function pickLanguage")]
    blocks = re.split(r"^  (\w\w): \{$", body, flags=re.M)
    out: dict[str, set[str]] = {}
    for lang, block in zip(blocks[1::2], blocks[2::2], strict=True):
        out[lang] = set(re.findall(r'^    "?([\w-]+)"?:', block, flags=re.M))
    return out


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
