"""Chat in the page, in a real browser: two people online talk; markup is shown as
text, never run; a muted player's messages disappear from the page; a report; a
message a moderator removes leaves the open pages."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from nard.cli.main import main
from tests.server.browser import online_game, require_browser, served, take_turn
from tests.server.helpers import eventually
from tests.server.test_page_clocks import base_url, browser  # noqa: F401 - the fixtures


def test_two_players_chat_and_markup_stays_text(
    base_url: str,  # noqa: F811
    browser: Browser,  # noqa: F811
    tmp_path: Path,
) -> None:
    ann, ann_errors, bob, bob_errors = online_game(base_url, browser, 3)
    hostile = '<img src=x onerror="window.pwned=1">hello'
    ann.fill("#chat-input", hostile)
    ann.press("#chat-input", "Enter")
    bob.wait_for_selector("#chat-messages li .chat-text")
    assert bob.inner_text("#chat-messages li .chat-text") == hostile
    assert bob.locator("#chat-messages img").count() == 0
    assert bob.evaluate("window.pwned") is None
    bob.fill("#chat-input", "سلام، موفق باشی")
    bob.click("#chat-send")
    ann.wait_for_selector("#chat-messages li:nth-child(2)")
    assert "سلام" in ann.inner_text("#chat-messages")
    bob.screenshot(path=str(tmp_path / "chat.png"))
    # Bob mutes Ann: her messages go from his page (and stay gone after a reload)
    bob.click("#chat-messages li button[data-action=mute]")
    assert "hello" not in bob.inner_text("#chat-messages")
    bob.reload()
    bob.wait_for_selector("#chat-messages li")
    assert "hello" not in bob.inner_text("#chat-messages")
    # Ann reports Bob's message
    ann.click("#chat-messages li:nth-child(2) button[data-action=report]")
    ann.fill("#report-reason", "testing the report")
    ann.click("button[data-action=send-report]")
    ann.wait_for_selector("#report", state="detached")
    assert not ann_errors and not bob_errors, (ann_errors, bob_errors)


def table_state(page: Page) -> tuple[str | None, str]:
    """What a table's page shows of the table: the board in words (its pips, dice and
    whose turn it is) and the history."""
    return page.get_attribute("#board", "aria-label"), page.inner_text("#history")


@pytest.fixture
def served_with_redis(tmp_path: Path, redis_url: str) -> Iterator[tuple[str, str]]:
    """A nard app behind Redis on an SQLite file: its base URL and database URL."""
    from nard.server import Settings, create_app
    from nard.server.storage import Storage
    from tests.server.conftest import NO_LIMITS

    require_browser()
    url = f"sqlite:///{tmp_path / 'nard.db'}"
    rng = random.Random(5)
    storage = Storage(url)
    settings = Settings(
        database_url=url, data_dir=tmp_path, engine_workers=1, limits=NO_LIMITS, redis_url=redis_url
    )
    app = create_app(settings, storage, server_seeds=lambda: rng.randbytes(32))
    try:
        with served(app) as base:
            yield base, url
    finally:
        storage.close()


def test_a_message_a_moderator_removes_leaves_the_open_pages(
    served_with_redis: tuple[str, str],
    browser: Browser,  # noqa: F811
    redis_url: str,
    tmp_path: Path,
) -> None:
    base, database = served_with_redis
    ann, ann_errors, bob, bob_errors = online_game(base, browser, 3)
    bob.fill("#chat-input", "you play like a bot")
    bob.press("#chat-input", "Enter")
    ann.wait_for_selector("#chat-messages li")  # (typing as it comes re-renders the box)
    ann.fill("#chat-input", "good luck")
    ann.press("#chat-input", "Enter")
    for page in (ann, bob):
        page.wait_for_selector("#chat-messages li:nth-child(2)")
    rude = ann.get_attribute("#chat-messages li:first-child", "data-id")
    assert rude is not None
    assert main(["moderate", "remove", rude, "--reason", "insults",
                 "--database-url", database, "--redis-url", redis_url]) == 0  # fmt: skip
    for page in (ann, bob):  # gone at once, without a reload
        page.wait_for_selector(f"#chat-messages li[data-id='{rude}']", state="detached")
        assert page.locator("#chat-messages li").all_inner_texts()[0].startswith("Ann")
    ann.screenshot(path=str(tmp_path / "removed.png"))
    bob.reload()
    bob.wait_for_selector("#chat-messages li")
    assert "bot" not in bob.inner_text("#chat-messages")
    assert not ann_errors and not bob_errors, (ann_errors, bob_errors)


def test_typing_in_the_chat_goes_on_while_the_table_moves_and_messages_come(
    served_with_redis: tuple[str, str],
    browser: Browser,  # noqa: F811
) -> None:
    """The chat is drawn afresh when a message comes and the side panel when the table
    moves on; until 2026-12-07 that took the focus from a player typing in the chat
    (the rest of what they typed went nowhere, Enter sent nothing) or on a setting,
    and emptied a report's reason."""
    from nard.server.storage import Storage

    base, database = served_with_redis
    ann, ann_errors, bob, bob_errors = online_game(base, browser, 3)
    while take_turn(ann):  # until the table waits for Bob
        pass
    # Ann types while Bob acts: the table moves on in her page.
    before = table_state(ann)
    ann.click("#chat-input")
    ann.keyboard.type("hel")
    assert take_turn(bob)
    eventually(lambda: table_state(ann) != before, "Bob's action reaches Ann's page")
    ann.keyboard.type("lo")
    ann.keyboard.press("Enter")
    bob.wait_for_selector("#chat-messages li .chat-text")
    assert bob.inner_text("#chat-messages li .chat-text") == "hello"
    # Ann types while Bob's message comes.
    ann.click("#chat-input")
    ann.keyboard.type("how are")
    bob.fill("#chat-input", "fine")
    bob.press("#chat-input", "Enter")
    ann.wait_for_selector("#chat-messages li:nth-child(2)")
    ann.keyboard.type(" you")
    ann.keyboard.press("Enter")
    bob.wait_for_selector("#chat-messages li:nth-child(3)")
    assert bob.locator("#chat-messages li .chat-text").all_inner_texts()[2] == "how are you"
    # Ann reports Bob's message while he writes another.
    ann.click("#chat-messages li:nth-child(2) button[data-action=report]")
    ann.click("#report-reason")
    ann.keyboard.type("spa")
    bob.fill("#chat-input", "sorry")
    bob.press("#chat-input", "Enter")
    ann.wait_for_selector("#chat-messages li:nth-child(4)")
    ann.keyboard.type("m")
    ann.click("button[data-action=send-report]")
    ann.wait_for_selector("#report", state="detached")
    storage = Storage(database)
    try:
        assert [(r.reason, r.message_text) for r in storage.reports()] == [("spam", "fine")]
    finally:
        storage.close()
    # A keyboard user on a setting keeps their place while the table moves on.
    while True:
        before = table_state(ann)
        ann.focus("#swap")
        if take_turn(bob):
            break
        assert take_turn(ann)  # Ann's turn first
    eventually(lambda: table_state(ann) != before, "Bob's action reaches Ann's page")
    assert ann.evaluate("document.activeElement.id") == "swap"
    assert not ann_errors and not bob_errors, (ann_errors, bob_errors)
