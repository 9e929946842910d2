"""Chat in the page, in a real browser: two people online talk; markup is shown as
text, never run; a muted player's messages disappear from the page; a report."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser

from tests.server.browser import online_game
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
