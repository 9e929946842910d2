"""Clocks in the page, in a real browser: two people online under bullet; both
pages show both clocks, the running one marked; when the server's (fake) clock passes
the deadline, the server ends the match and both pages say who ran out of time. And a
player whose page is gone past the grace period: the other claims the match."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.server.browser import (
    contribute,
    launched_browser,
    new_page,
    served_nard,
    start_as_guest,
)
from tests.server.test_clocks import Clock

CLOCK = Clock()


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_nard(
        tmp_path_factory.mktemp("server"), 8, {"clock": CLOCK, "presence_interval": 0.5}
    ) as base:
        yield base


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Browser]:
    with launched_browser() as browser:
        yield browser


def test_both_clocks_are_shown_and_time_runs_out(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    ann, ann_errors = new_page(browser)
    bob, bob_errors = new_page(browser)
    start_as_guest(ann, base_url, "Ann")
    ann.select_option("select[name=opponent]", "person")
    ann.fill("input[name=match_length]", "3")
    ann.select_option("select[name=time_control]", "bullet")
    ann.click("#start")
    contribute(ann)
    ann.wait_for_selector("#invite-link")
    bob.goto(ann.input_value("#invite-link"))
    contribute(bob)
    for page in (ann, bob):
        page.wait_for_selector("#board .checker")
        page.wait_for_selector("#score .clock.running")
        clocks = page.locator("#score .clock").all_inner_texts()
        assert len(clocks) == 2, clocks
        # 30 s a point, 3 points: 1:30 each, the running one with its 6 s delay
        assert all(c.startswith("1:30") for c in clocks), clocks
        assert page.locator("#score .clock.running").count() == 1
    ann.screenshot(path=str(tmp_path / "clocks.png"))
    CLOCK.advance(6 + 90 + 1)  # the server's time passes; the server ends the match
    for page in (ann, bob):
        page.wait_for_selector("#timed-out", timeout=15_000)
        assert "ran out of time" in page.inner_text("#timed-out")
        assert page.locator("#score .clock.running").count() == 0
    bob.screenshot(path=str(tmp_path / "timed-out.png"))
    assert not ann_errors and not bob_errors, (ann_errors, bob_errors)


def test_a_player_gone_too_long_loses_the_match_by_claim(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    ann, ann_errors = new_page(browser)
    bob, _ = new_page(browser)
    start_as_guest(ann, base_url, "Ann")
    ann.select_option("select[name=opponent]", "person")
    ann.fill("input[name=match_length]", "3")
    ann.click("#start")
    contribute(ann)
    ann.wait_for_selector("#invite-link")
    bob.goto(ann.input_value("#invite-link"))
    contribute(bob)
    ann.wait_for_selector("#board .checker")
    bob.close()  # Bob's page is gone
    ann.wait_for_timeout(1500)  # the server sees his socket close (real time, not the clock)
    CLOCK.advance(61)
    ann.wait_for_selector("#away", timeout=15_000)
    assert "away too long" in ann.inner_text("#away")
    ann.click("button[data-action=claim_match]")
    ann.wait_for_selector("#timed-out")
    assert "was away too long" in ann.inner_text("#timed-out")
    ann.screenshot(path=str(tmp_path / "claimed.png"))
    assert not ann_errors, ann_errors
