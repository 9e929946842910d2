"""Matchmaking in the page, in a real browser: two people find each other with "Find
an opponent"; a player challenged by name accepts from the home page; the lobby shows
the terms and the live list the tables in play."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.server.browser import (
    contribute,
    launched_browser,
    new_page,
    served_nard,
    start_as_guest,
)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_nard(tmp_path_factory.mktemp("server"), 11) as base:
        yield base


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Browser]:
    with launched_browser() as browser:
        yield browser


def _register(page: Page, base_url: str, name: str) -> None:
    page.goto(base_url + "/")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", "a long password")
    page.click("#signin button:has-text('Create account')")
    page.wait_for_selector("#my-profile")


def test_two_seeks_meet(base_url: str, browser: Browser, tmp_path: Path) -> None:
    ann, ann_errors = new_page(browser)
    bob, bob_errors = new_page(browser)
    start_as_guest(ann, base_url, "Ann")
    ann.select_option("select[name=seek_time]", "bullet")
    ann.fill("input[name=seek_length]", "3")
    ann.click("#seek-button")
    ann.wait_for_url("**/play/*")
    table = ann.url.rsplit("/", 1)[1]
    start_as_guest(bob, base_url, "Bob")
    row = bob.locator("#lobby .lobby-row")
    assert "Ann" in row.inner_text() and "bullet" in row.inner_text()
    bob.select_option("select[name=seek_time]", "bullet")
    bob.fill("input[name=seek_length]", "3")
    bob.click("#seek-button")
    bob.wait_for_url(f"**/play/{table}")
    contribute(bob)
    contribute(ann)
    for page in (ann, bob):
        page.wait_for_selector("#board .checker")
        page.wait_for_selector("#score .clock.running")
    assert not ann_errors and not bob_errors, (ann_errors, bob_errors)


def test_a_challenge_is_accepted_from_the_home_page(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    cat, cat_errors = new_page(browser)
    dan, dan_errors = new_page(browser)
    _register(dan, base_url, "dan")
    _register(cat, base_url, "cat")
    cat.fill("input[name=challenge_name]", "dan")
    cat.fill("input[name=seek_length]", "1")
    cat.click("#challenge-button")
    cat.wait_for_url("**/play/*")
    table = cat.url.rsplit("/", 1)[1]
    contribute(cat)
    dan.goto(base_url + "/")
    dan.wait_for_selector("#challenges")
    text = dan.inner_text("#challenges")
    assert "cat (1500) challenges you" in text, text
    dan.screenshot(path=str(tmp_path / "challenge.png"))
    dan.click("button[data-action=accept-challenge]")
    dan.wait_for_url(f"**/play/{table}")
    contribute(dan)
    for page in (cat, dan):
        page.wait_for_selector("#board .checker")
    assert not cat_errors and not dan_errors, (cat_errors, dan_errors)
