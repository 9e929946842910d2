"""The shared fair-dice vectors through the verify page's own code, in a real browser.

Every vector of tests/data/fair_dice_vectors/ goes through ``verifyRecord`` of
nard/server/static/verify.js, loaded as the page loads it (an ES module over
http, WebCrypto in headless Chromium), and must get the verdict ``nard verify``
gives (tests/match/test_fair_dice_vectors.py). The static files are served by
a plain HTTP server: the check needs nothing of the app. Without Chromium or
Playwright these tests are skipped, unless ``NARD_REQUIRE_BROWSER=1`` (CI),
where they fail.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from nard.match.dice import InvalidFairDiceError, check_contribution
from tests.match.test_fair_dice_vectors import ALL, IDS

CHROMIUM = os.environ.get("NARD_CHROMIUM", "/usr/bin/chromium")
SERVER_DIR = Path(str(resources.files("nard.server")))

# The problem verify.js names for each tampered vector (one of its problems' keys).
PROBLEM = {
    "tampered-log-die-changed": "verify_bad_die",
    "tampered-roll-swapped": "verify_bad_roll",
    "tampered-extra-die": "verify_unused_dice",
    "tampered-missing-die": "verify_log_ended",
    "tampered-seed-not-committed": "verify_bad_commitment",
    "tampered-seed-malformed": "verify_malformed",
    "tampered-roll-not-in-log": "verify_bad_roll",
    "tampered-opening-wrong-player": "verify_bad_opening",
    "tampered-client-seed-not-contributions": "verify_client_seed",
    "tampered-contribution-control-character": "verify_contribution_control",
    "tampered-contribution-newline": "verify_contribution_control",
    "tampered-contribution-too-long": "verify_contribution_long",
    "tampered-contribution-empty": "verify_contribution_empty",
    "tampered-timeout-not-empty": "verify_contribution_timeout",
}

# Runs in the page: the verdict and problems verifyRecord gives, each problem and
# line to show translated in English. Written so that an older verify.js (which
# threw on a record without dice and had no verdict) gives a comparable answer.
VERIFY = """
async (record) => {
  const verify = await import("/static/verify.js");
  const i18n = await import("/static/i18n.js");
  let outcome;
  try {
    outcome = await verify.verifyRecord(record);
  } catch (error) {
    const unverifiable = /no dice commitment/.test(error.message);
    return { verdict: unverifiable ? "unverifiable" : "error: " + error.message };
  }
  const verdict = outcome.verdict ??
    (outcome.ok ? "verified" : outcome.unrevealed ? "unverifiable" : "tampered");
  const text = (m) => ({ key: m.key, known: i18n.has(m.key), text: i18n.t(m.key, m.values) });
  return {
    verdict,
    ok: outcome.ok,
    problems: (outcome.problems ?? []).map(text),
    messages: (outcome.messages ?? []).map(text),
    contributions: outcome.contributions ?? [],
  };
}
"""


def _require_browser() -> None:
    if not shutil.which(CHROMIUM):
        if os.environ.get("NARD_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser tests need Chromium at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")


class _StaticOnly(http.server.SimpleHTTPRequestHandler):
    """nard/server/static/ under /static/, as the app serves it; an empty page at /,
    the page itself at /verify (its API calls get 404: no one is signed in)."""

    def do_GET(self) -> None:
        if self.path in ("/", "/verify"):
            body = b"<!doctype html><title>verify</title>"
            if self.path == "/verify":
                body = (SERVER_DIR / "static" / "index.html").read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path.startswith("/static/") and ".." not in self.path:
            super().do_GET()
        else:
            self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Any, str]]:
    """Headless Chromium, and the address of a server of the static files."""
    _require_browser()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("NARD_REQUIRE_BROWSER") == "1":
            raise
        pytest.skip("Playwright is not installed")
    handler = functools.partial(_StaticOnly, directory=str(SERVER_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            yield browser, f"http://127.0.0.1:{server.server_address[1]}"
            browser.close()
    finally:
        server.shutdown()
        thread.join(timeout=10)


def _page(served: tuple[Any, str], path: str) -> tuple[Any, list[str]]:
    browser, base = served
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(base + path)
    return page, errors


@pytest.fixture(scope="module")
def verify_page(served: tuple[Any, str]) -> Iterator[Any]:
    """An empty page of that server, to import the modules in."""
    page, errors = _page(served, "/")
    yield page
    assert errors == []


@pytest.mark.parametrize("vector", ALL, ids=IDS)
def test_the_verify_page_gives_the_verdict(verify_page: Any, vector: dict[str, Any]) -> None:
    outcome = verify_page.evaluate(VERIFY, vector["record"])
    assert outcome["verdict"] == vector["verdict"], outcome
    assert outcome["ok"] is (vector["verdict"] == "verified")
    keys = [p["key"] for p in outcome["problems"]]
    if vector["verdict"] == "tampered":
        assert PROBLEM[vector["name"]] in keys, outcome["problems"]
    else:
        assert keys == []
    # Every line the page would show is translated and fully filled in.
    assert outcome["messages"]
    for line in outcome["messages"] + outcome["problems"]:
        assert line["known"] and "{" not in line["text"], line
    contributions = vector["record"]["dice"] and vector["record"]["dice"].get("contributions")
    if contributions and vector["verdict"] != "tampered":
        assert outcome["contributions"] == contributions


def test_the_messages_name_the_dice_as_the_seed_and_the_record_give_them(
    verify_page: Any,
) -> None:
    """expected is what the seed (through the log) gives, got what the record shows."""
    (swapped,) = [v for v in ALL if v["name"] == "tampered-roll-swapped"]
    outcome = verify_page.evaluate(VERIFY, swapped["record"])
    (problem,) = outcome["problems"]
    assert problem["text"].startswith("Game 2, action 5: the record shows the roll 6-1")
    assert "the dice log gives 1-6 (dice 13-14)" in problem["text"]
    (changed,) = [v for v in ALL if v["name"] == "tampered-log-die-changed"]
    outcome = verify_page.evaluate(VERIFY, changed["record"])
    assert outcome["problems"][0]["text"] == "Die 8 of the dice log is 1, but the seed gives 6."


@pytest.mark.parametrize(
    ("name", "outcome", "lines"),
    [
        (
            "valid-timeout-contribution",
            "ok",
            ["Seat 0, Ann: ann-7f3a", "Seat 1, Bob: nothing before the deadline"],
        ),
        (
            "tampered-contribution-control-character",
            "bad",
            ["Seat 0, Ann: ann\t7f3a", "Seat 1, Bob: bob-19c2"],
        ),
    ],
)
def test_the_verify_view_shows_the_verdict_and_the_contributions(
    served: tuple[Any, str], name: str, outcome: str, lines: list[str]
) -> None:
    (vector,) = [v for v in ALL if v["name"] == name]
    page, errors = _page(served, "/verify")
    page.fill("#verify-record", json.dumps(vector["record"]))
    page.click("#verify-button")
    page.wait_for_selector(f"#verify-result.{outcome}")
    items = page.eval_on_selector_all(
        "#verify-contributions li", "els => els.map(e => e.textContent)"
    )
    assert items == lines
    text = page.inner_text("#verify-result")
    if outcome == "ok":
        assert "match the revealed seed" in text
    else:
        assert "has a control character (U+0009) at position 4" in text
    assert errors == []
    page.close()


CONTRIBUTIONS = [
    "a",
    "ann-7f3a",
    "x" * 64,
    "x" * 65,
    "🎲" * 64,
    "🎲" * 65,
    "علی ۱۴۰۳",
    "",
    "ann\nbob",
    "\tann",
    "ann\x00",
    "a\x7f",
    "a\x85",
    "a\x9f",
    "🎲\r",
    "a\u2028",
    "a\u2029",
    "a\u00a0\u200b\ufeff",
    "a\ud800",
    "\udfffb",
    "a\ud800\t",
]


@pytest.mark.parametrize("text", CONTRIBUTIONS, ids=[ascii(t)[:24] for t in CONTRIBUTIONS])
def test_the_page_and_nard_agree_on_each_contribution(verify_page: Any, text: str) -> None:
    """verify.js's contributionProblem against check_contribution, the same text."""
    problem = verify_page.evaluate(
        "async (text) => (await import('/static/verify.js')).contributionProblem(text)", text
    )
    try:
        check_contribution(text)
    except InvalidFairDiceError as exc:
        assert problem is not None, str(exc)
        values = problem["values"]
        if "position" in values:
            assert f"at position {values['position']}" in str(exc)
        if "length" in values:
            assert f"too long, {values['length']} characters" in str(exc)
        if "code" in values:
            assert f"control character {values['code']} " in str(exc)
    else:
        assert problem is None
