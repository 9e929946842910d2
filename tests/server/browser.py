"""Helpers of the browser tests: Debian's Chromium, headless, driven by Playwright,
and the moves of a player on nard's page (clicks, turns, contributions).

Without Chromium the tests that use them are skipped, unless
``NARD_REQUIRE_BROWSER=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, sync_playwright

CHROMIUM = os.environ.get("NARD_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def served_nard(
    folder: Any, seed: int, service_options: dict[str, Any] | None = None
) -> Iterator[str]:
    """A fresh nard app on an SQLite file in ``folder`` (limits off, dice seeds from
    ``seed``), served by uvicorn: its base URL. Skips without Chromium."""
    import random

    from nard.server import Settings, create_app
    from nard.server.storage import Storage
    from tests.server.conftest import NO_LIMITS

    require_browser()
    url = f"sqlite:///{folder / 'nard.db'}"
    rng = random.Random(seed)
    storage = Storage(url)
    app = create_app(
        Settings(database_url=url, data_dir=folder, engine_workers=1, limits=NO_LIMITS),
        storage,
        server_seeds=lambda: rng.randbytes(32),
        service_options=service_options,
    )
    try:
        with served(app) as base:
            yield base
    finally:
        storage.close()


@contextmanager
def served(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn in a thread on a free port: its base URL."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def require_browser() -> None:
    missing = not shutil.which(CHROMIUM)
    if missing:
        if os.environ.get("NARD_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser tests need Chromium at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")


@contextmanager
def launched_browser() -> Iterator[Browser]:
    """Headless Chromium for a module's tests."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Browser, locale: str = "en-US", **options: Any) -> tuple[Page, list[str]]:
    context = browser.new_context(locale=locale, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return page, errors


def settle(page: Page) -> None:
    """Wait until the page has no request out."""
    page.wait_for_selector("#table:not([data-busy])")


def enabled_actions(page: Page) -> list[str]:
    actions: list[str] = page.eval_on_selector_all(
        "#controls button", "els => els.filter(e => !e.disabled).map(e => e.dataset.action)"
    )
    return actions


def press(locator: Locator, tap: bool = False, **options: Any) -> None:
    """A click, or a tap of a finger (a page with ``has_touch``)."""
    if tap:
        locator.tap(**options)
    else:
        locator.click(**options)


def play_by_clicks(page: Page, tap: bool = False) -> None:
    """Enter a whole play with clicks (or taps): a checker, then a highlighted point,
    until Confirm is enabled; then Confirm."""
    for _ in range(10):
        confirm = page.locator("button[data-action=confirm]")
        if confirm.is_enabled():
            press(confirm, tap)
            settle(page)
            return
        points = page.eval_on_selector_all(
            "#board .checker", "els => [...new Set(els.map(e => e.dataset.point))]"
        )
        for point in points:
            press(page.locator(f"#board .checker[data-point='{point}']").last, tap)
            if page.locator("#board .target").count():
                press(page.locator("#board .target").first, tap, force=True)
                break
            if confirm.is_enabled():
                break  # a second click within 0.4 s of one on a checker is a double click
        else:
            raise AssertionError("no checker could be moved, yet the play is not complete")
    raise AssertionError("the play was never complete")


def take_turn(page: Page, tap: bool = False, enter: Callable[[Page], None] | None = None) -> bool:
    """Act once if the page waits for this player; False when it does not. ``enter``
    enters a play (default: by clicks, or taps)."""
    settle(page)
    go_on = page.locator("#result-panel button[data-action=continue]")
    if go_on.is_visible():
        press(go_on, tap)  # a game of the match ended
    actions = enabled_actions(page)
    if page.locator("button[data-action=confirm]").count():
        if enter is not None:
            enter(page)
        else:
            play_by_clicks(page, tap)
        return True
    for action in ("roll", "take", "accept"):
        if action in actions:
            press(page.locator(f"button[data-action={action}]"), tap)
            settle(page)
            return True
    return False


def contribute(page: Page) -> str:
    """Give the contribution the page made for the dice (after the commitment was
    shown); returns it."""
    page.wait_for_selector("#contribution")
    made = page.input_value("#contribution")
    assert len(made) == 16 and page.inner_text("#seeding .commitment code")
    page.click("#contribute")
    settle(page)
    return made


def start_as_guest(page: Page, base_url: str, name: str) -> None:
    page.goto(base_url + "/")
    page.fill("input[name=guest_name]", name)
    page.click("#guest-button")
    page.wait_for_selector(f"#who:has-text('{name}')")


def start_match(
    page: Page, base_url: str, name: str, length: int, opponent: str = "computer"
) -> None:
    """``name`` signs in as a guest and starts a match to ``length`` points (0: money)
    against ``opponent`` (``computer`` or ``person``); the dice wait for the
    contribution."""
    start_as_guest(page, base_url, name)
    if opponent != "computer":
        page.select_option("select[name=opponent]", opponent)
    page.fill("input[name=match_length]", str(length))
    page.click("#start")
    page.wait_for_selector("#contribution")


def match_against_the_computer(page: Page, base_url: str, name: str, length: int) -> str:
    """``name`` signs in as a guest and starts a match to ``length`` points against the
    computer (0: money), giving the contribution the page made; returns it."""
    start_as_guest(page, base_url, name)
    page.fill("input[name=match_length]", str(length))
    page.click("#start")
    return contribute(page)


def match_by_taps(page: Page, base_url: str, name: str, length: int) -> None:
    """As :func:`match_against_the_computer`, by taps (a page with ``has_touch``)."""
    page.goto(base_url + "/")
    page.fill("input[name=guest_name]", name)
    page.locator("#guest-button").tap()
    page.wait_for_selector(f"#who:has-text('{name}')")
    page.fill("input[name=match_length]", str(length))
    page.locator("#start").tap()
    page.wait_for_selector("#contribution")
    page.locator("#contribute").tap()
    page.wait_for_selector("#board .checker")


def confirm_if_complete(page: Page) -> bool:
    """Confirm the play if it is complete; whether it was."""
    confirm = page.locator("button[data-action=confirm]")
    if not confirm.is_enabled():
        return False
    confirm.click()
    settle(page)
    return True


def own_points(page: Page) -> list[str]:
    """The points that hold checkers (either side's)."""
    points: list[str] = page.eval_on_selector_all(
        "#board .checker", "els => [...new Set(els.map(e => e.dataset.point))]"
    )
    return points


def online_game(
    base_url: str, browser: Browser, match_length: int
) -> tuple[Page, list[str], Page, list[str]]:
    """Ann starts a match against a person, Bob joins by her invite link, both give
    their contributions; their pages and the errors each logs."""
    ann, ann_errors = new_page(browser)
    bob, bob_errors = new_page(browser)
    start_as_guest(ann, base_url, "Ann")
    ann.select_option("select[name=opponent]", "person")
    ann.fill("input[name=match_length]", str(match_length))
    ann.click("#start")
    ann_seed = contribute(ann)
    ann.wait_for_selector("#invite-link")
    link = ann.input_value("#invite-link")
    assert "invite=" in link
    bob.goto(link)
    ann.wait_for_selector("#waiting-contributions")  # the socket told Ann's page
    bob_seed = contribute(bob)
    bob.wait_for_selector("#board .checker")
    ann.wait_for_selector("#board .checker")  # the socket told Ann's page
    # Each sees their own contribution as theirs, the other's as the other's (the
    # joining player was once shown the creator's seed labelled as theirs).
    for page, mine, theirs in ((ann, ann_seed, bob_seed), (bob, bob_seed, ann_seed)):
        rows = page.locator("#contributions li").all_inner_texts()
        you = [r for r in rows if "(you)" in r]
        assert len(you) == 1 and mine in you[0] and theirs not in you[0], rows
        assert any(theirs in r for r in rows if "(you)" not in r), rows
    return ann, ann_errors, bob, bob_errors


def play_by_drags(page: Page) -> None:
    """Enter a whole play by dragging checkers onto highlighted points; then Confirm.
    Drags go by screen coordinates: the page's viewport must show the whole board."""
    for _ in range(10):
        if confirm_if_complete(page):
            return
        points = own_points(page)
        for point in points:
            box = page.locator(f"#board .checker[data-point='{point}']").last.bounding_box()
            assert box is not None
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()  # picks the checker up: its destinations light up
            # (Pressed on a point where the checker already picked up may go, it is a
            # click that moves that one there: no drag of this point's checker.)
            picked = page.locator(f"#board .checker.selected[data-point='{point}']").count()
            target = page.locator("#board .target").first
            goal = (
                target.bounding_box() if picked and page.locator("#board .target").count() else None
            )
            if goal is None:
                page.mouse.up()
                page.keyboard.press("Escape")
                continue
            x, y = goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] / 2
            page.mouse.move(x, y, steps=4)
            page.mouse.up()
            break
        else:
            raise AssertionError("no checker could be dragged, yet the play is not complete")
    raise AssertionError("the play was never complete")


def play_by_double_clicks(page: Page) -> None:
    """Enter a whole play by double clicks only; then Confirm."""
    for _ in range(10):
        if confirm_if_complete(page):
            return
        used = page.locator("#board .die.used").count()
        points = own_points(page)
        for point in points:
            page.locator(f"#board .checker[data-point='{point}']").last.dblclick()
            if page.locator("#board .die.used").count() > used:
                break
        else:
            raise AssertionError("no double click moved a checker, yet the play is not complete")
    raise AssertionError("the play was never complete")
