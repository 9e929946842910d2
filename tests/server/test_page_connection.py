"""The page's connection to the server: dropped, said, healed.

Tried as players on 2026-12-05 (issue 28): after a server restart the other player's
page stayed on the old position with no warning until reloaded. Here two players
play online against a real ``nard serve`` process, which is killed (SIGKILL) and
started again on the same port and database: both pages must say they are offline
(and send nothing) while it is down, come back by themselves with the table as the
server has it, and play on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.server.browser import launched_browser, online_game, require_browser, take_turn
from tests.server.conftest import NO_LIMITS
from tests.server.servers import ServerProcess, free_port

# What Chromium logs by itself while the server is down (the socket's tries): the
# page's own errors are anything else.
BROWSER_NOISE = (
    "WebSocket connection to",
    "net::ERR_CONNECTION_REFUSED",
    "Failed to load resource",
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    require_browser()
    env = {
        "NARD_DATABASE_URL": f"sqlite:///{tmp_path / 'nard.db'}",
        "NARD_DATA_DIR": str(tmp_path),
        "NARD_LIMITS": NO_LIMITS,
        "NARD_LOG_LEVEL": "warning",
        "NARD_ENGINE_WORKERS": "1",
    }
    with ServerProcess(env, tmp_path / "server.log", port=free_port()) as process:
        process.start()
        yield process


@pytest.fixture
def browser(server: ServerProcess) -> Iterator[Browser]:
    with launched_browser() as browser:
        yield browser


def play_turns(pages: tuple[Page, Page], turns: int) -> None:
    played = 0
    for _ in range(200):
        for page in pages:
            if played < turns and take_turn(page):
                played += 1
        if played >= turns:
            return
        pages[0].wait_for_timeout(50)
    raise AssertionError(f"only {played} of {turns} turns were played")


def own_errors(errors: list[str]) -> list[str]:
    return [e for e in errors if not any(noise in e for noise in BROWSER_NOISE)]


def test_both_pages_recover_from_a_server_restart(server: ServerProcess, browser: Browser) -> None:
    ann, ann_errors, bob, bob_errors = online_game(server.url, browser, 5)
    play_turns((ann, bob), 4)
    before = ann.get_attribute("#board", "data-position-id")

    server.kill()
    for page in (ann, bob):
        page.wait_for_selector("#connection[data-state=reconnecting]", timeout=10_000)
        assert "reconnecting" in page.inner_text("#connection")
        # Nothing can be sent while offline: every control is off.
        enabled = page.eval_on_selector_all(
            "#controls button, #controls select", "els => els.filter(e => !e.disabled).length"
        )
        assert enabled == 0
    bob.screenshot(path=str(server.log.parent / "offline.png"), full_page=True)

    server.start()
    for page in (ann, bob):
        page.wait_for_selector("#connection", state="hidden", timeout=30_000)
        assert page.get_attribute("#table", "data-offline") is None
    # Both see the table as the server kept it, and play on.
    assert ann.get_attribute("#board", "data-position-id") == before
    assert bob.get_attribute("#board", "data-position-id") == before
    play_turns((ann, bob), 4)
    ann.wait_for_function(
        "id => document.querySelector('#board').dataset.positionId === id",
        arg=bob.get_attribute("#board", "data-position-id"),
    )
    assert own_errors(ann_errors) == [] and own_errors(bob_errors) == []


def test_a_page_opened_while_the_server_is_down_says_so_and_comes_back(
    server: ServerProcess, browser: Browser
) -> None:
    page = browser.new_page()
    page.goto(server.url + "/rules")
    page.wait_for_selector("#rules")
    server.kill()
    page.click("a[href='/']")  # the home page asks the server for its lobby
    page.wait_for_selector("#offline", timeout=10_000)
    assert "cannot be reached" in page.inner_text("#offline")
    server.start()
    page.wait_for_selector("#new-game", timeout=30_000)
