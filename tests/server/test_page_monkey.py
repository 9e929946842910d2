"""The page clicked, tapped, typed into and navigated at random (a seeded "monkey"),
with a purposeful turn now and then so that games move on: whatever is done, the page
throws nothing and logs no error, no request gets a 5xx, and the server logs no error.

Random clicks found a page that threw on the replay of a match ended before any move
(``test_a_match_ended_before_any_move_has_nothing_to_replay``). The steps a run takes
depend on timing (the computer's replies, animations), so two runs of one seed need not
click the same things; what is asserted must hold whatever was clicked. Run longer by
hand with ``NARD_MONKEY_STEPS=500``, on other seeds with ``NARD_MONKEY_SEED=N`` (added to
each case's own).
"""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from tests.server.browser import launched_browser, new_page, served_nard, take_turn

STEPS = int(os.environ.get("NARD_MONKEY_STEPS", "50"))
SEED = int(os.environ.get("NARD_MONKEY_SEED", "0"))

TEXTS = [
    "",
    " ",
    "a" * 300,
    "Ann",
    "علی",
    "😀🎲",
    "<b>x</b>",
    "\u202eevil",
    "'; drop table",
    "\u200d",
    "ann\u0000x",
    "Bob",
    "x" * 40,
]
"""What goes into text fields: empty, long, other scripts, markup, a direction
override, a control character."""

CANDIDATES = """() => {
  const out = [];
  const sel = '#board [data-point], #board .checker, #board .target, ' +
    'button, a[href], input, select, textarea, summary, label';
  document.querySelectorAll(sel).forEach((e, i) => {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || e.disabled) return;
    const style = getComputedStyle(e);
    if (style.visibility === 'hidden' || style.display === 'none') return;
    e.setAttribute('data-monkey', String(i));
    out.push({i, tag: e.tagName.toLowerCase(), type: e.type || '',
              href: e.getAttribute('href') || '', id: e.id, action: e.dataset.action || '',
              download: e.hasAttribute('download')});
  });
  return out;
}"""


class _ErrorLogs(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record)[:2000])


def _weight(candidate: dict[str, Any]) -> float:
    """Buttons that act, and the board, more often than labels and links."""
    if candidate["action"] or candidate["id"] in ("start", "contribute", "guest-button"):
        return 6
    return {"label": 0.3, "a": 0.5, "input": 1, "select": 1}.get(candidate["tag"], 3)


def _step(page: Page, rng: random.Random, touch: bool) -> str:
    """One random thing done to the page; what it was."""
    roll = rng.random()
    if not page.locator("#table").count():
        roll = 0.25 + 0.75 * roll  # no turn to take
    if roll < 0.25:
        if page.locator("#contribute").is_visible():
            page.locator("#contribute").click()
            return "contribute"
        try:
            return f"turn {take_turn(page, tap=touch and rng.random() < 0.5)}"
        except AssertionError as exc:  # a play the clicks before left half entered
            return f"turn not taken ({exc})"
    if roll < 0.28:
        page.go_back()
        return "back"
    if roll < 0.30:
        page.reload()
        return "reload"
    if roll < 0.33:
        key = rng.choice(["Escape", "Enter", "ArrowLeft", "ArrowRight", "Home", "End", "Tab"])
        page.keyboard.press(key)
        return f"key {key}"
    if roll < 0.35:
        width = rng.choice([360, 414, 768, 1280])
        page.set_viewport_size({"width": width, "height": rng.choice([640, 900])})
        return f"width {width}"
    candidates = page.evaluate(CANDIDATES)
    if not candidates:
        return "nothing to click"
    chosen = rng.choices(candidates, [_weight(c) for c in candidates])[0]
    target = page.locator(f"[data-monkey='{chosen['i']}']").first
    what = f"{chosen['tag']}#{chosen['id']}[{chosen['action']}]"
    if chosen["tag"] == "a" and (chosen["download"] or chosen["href"].startswith("http")):
        return f"not {what} (a download or another site)"
    if chosen["tag"] in ("input", "textarea") and chosen["type"] not in (
        "checkbox",
        "radio",
        "button",
        "submit",
        "range",
        "file",
    ):
        number = chosen["type"] == "number"
        text = str(rng.randint(-2, 70)) if number or rng.random() < 0.3 else rng.choice(TEXTS)
        target.fill(text, timeout=2000)
        if rng.random() < 0.5:
            target.press("Enter", timeout=2000)
        return f"fill {what} {text[:20]!r}"
    if chosen["tag"] == "select":
        values = target.evaluate("e => [...e.options].map(o => o.value)")
        if values:
            target.select_option(rng.choice(values), timeout=2000)
        return f"select {what}"
    if touch and rng.random() < 0.6:
        target.tap(timeout=2000)
    elif rng.random() < 0.1:
        target.dblclick(timeout=2000)
    else:
        target.click(timeout=2000)
    return f"click {what}"


@pytest.mark.parametrize(
    ("seed", "locale", "touch"),
    [(1, "en-US", False), (2, "fa-IR", True)],
    ids=["english-clicks", "persian-taps"],
)
def test_random_clicks_taps_and_keys_break_nothing(
    tmp_path: Path, seed: int, locale: str, touch: bool
) -> None:
    seed += SEED
    rng = random.Random(seed)
    server_errors = _ErrorLogs()
    logging.getLogger().addHandler(server_errors)
    done: list[str] = []
    try:
        with served_nard(tmp_path, seed) as base, launched_browser() as browser:
            page, errors = new_page(
                browser,
                locale=locale,
                has_touch=touch,
                viewport={"width": 414, "height": 800} if touch else {"width": 1280, "height": 900},
            )
            page.set_default_timeout(4000)
            failed: list[str] = []
            page.on(
                "response",
                lambda r: (
                    failed.append(f"{r.status} {r.request.method} {r.url}")
                    if r.status >= 500
                    else None
                ),
            )
            page.on("dialog", lambda dialog: dialog.accept())
            page.goto(base + "/")
            for n in range(STEPS):
                if not page.url.startswith(base):
                    page.goto(base + "/")
                try:
                    done.append(f"{n} {page.url[len(base) :]} {_step(page, rng, touch)}")
                except PlaywrightError as exc:  # a target gone, a wait timed out: go on
                    done.append(f"{n} ({str(exc).splitlines()[0][:100]})")
                page.wait_for_timeout(rng.choice([0, 0, 50, 200]))
                # A refusal (4xx) is the page working; Chromium logs each as an error.
                errors[:] = [e for e in errors if not e.startswith("Failed to load resource")]
                assert not errors, (errors, done[-15:])
                assert not failed, (failed, done[-15:])
                assert not server_errors.records, (server_errors.records, done[-15:])
    finally:
        logging.getLogger().removeHandler(server_errors)
    assert len(done) == STEPS
