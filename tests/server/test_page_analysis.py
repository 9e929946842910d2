"""The analysis in the page, in a real browser: a match played by clicks, "Analyse",
the worker's progress, the report, and the board stepped to a marked decision with
the better play drawn."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from nard.server import Settings, create_app
from nard.server.jobs import AnalysisQueue
from nard.server.storage import Storage
from tests.server.browser import (
    launched_browser,
    match_against_the_computer,
    new_page,
    require_browser,
    served,
    take_turn,
)
from tests.server.conftest import NO_LIMITS


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on uvicorn in a thread, and a worker thread taking its analysis jobs
    (the web process itself never analyses)."""
    require_browser()
    folder = tmp_path_factory.mktemp("server")
    url = f"sqlite:///{folder / 'nard.db'}"
    rng = random.Random(5)
    storage = Storage(url)
    app = create_app(
        Settings(database_url=url, data_dir=folder, engine_workers=1, limits=NO_LIMITS),
        storage,
        server_seeds=lambda: rng.randbytes(32),
    )
    queue: AnalysisQueue = app.state.analysis_queue
    stop = threading.Event()

    def work() -> None:
        worker = AnalysisQueue(queue.where)
        while not stop.is_set():
            if not worker.run_one():
                time.sleep(0.1)

    threading.Thread(target=work, daemon=True).start()
    with served(app) as base:
        yield base
    stop.set()
    storage.close()


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Browser]:
    with launched_browser() as browser:
        yield browser


def test_analyse_a_finished_match_and_step_to_an_error(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Ann", 1)
    # On the first roll to play: "Roll out", made by the worker, shown under the status.
    for _ in range(100):
        button = page.locator("button[data-action=roll_out]")
        if (
            button.count()
            and page.locator("#board .checker").count()
            and page.inner_text("#status").find("Your turn") >= 0
            and page.locator("button[data-action=confirm]").count()
        ):
            # the rollout's options, kept by the page: 144 cubeful trials of 7 turns
            page.select_option("#rollout-trials", "144")
            page.select_option("#rollout-truncate", "7")
            page.check("#rollout-cubeful")
            button.click()
            page.wait_for_selector("#rollout ol li", timeout=120_000)
            shown = page.inner_text("#rollout")
            assert "±" in shown and "144 trials, cubeful, 7 turns per trial" in shown, shown
            page.screenshot(path=str(tmp_path / "rollout.png"))
            break
        if not take_turn(page):
            page.wait_for_timeout(100)
    else:
        raise AssertionError("no roll to roll out")
    for _ in range(400):
        if "wins the match" in page.inner_text("#status"):
            break
        if not take_turn(page):
            page.wait_for_timeout(100)
    else:
        raise AssertionError("the match did not end")
    page.keyboard.press("Escape")
    dismiss = page.locator("#result-panel button[data-action=dismiss]")
    if dismiss.count() and dismiss.is_visible():
        dismiss.click()
    page.wait_for_selector("#analysis button[data-action=analyse]")
    page.select_option("#analysis-plies", "0")
    page.click("#analysis button[data-action=analyse]")
    page.wait_for_selector("#analysis-figures", timeout=120_000)
    figures = page.inner_text("#analysis-figures")
    assert "PR" in figures and "Ann" in figures
    assert page.locator("#analysis svg.graph polyline").count() >= 1
    # the clicking player takes the first legal play: some of them are marked
    marked = page.locator("#analysis-errors button")
    assert marked.count() >= 1
    marked.first.click()
    page.wait_for_selector("#analysis-note")
    note = page.inner_text("#analysis-note")
    assert "better" in note or "right" in note
    assert page.locator("#replay-step").inner_text() != "Replay"
    # the scoreboard counts the step's pips, not the finished game's (the winner's 0)
    pips = page.locator("#score .pips").all_inner_texts()
    assert len(pips) == 2 and all(p != "Pips 0" for p in pips), pips
    if "better" in note:
        assert page.locator("#board .suggest-from").count() >= 1
    page.screenshot(path=str(tmp_path / "analysis.png"), full_page=True)
    # deeper on request: 0-ply done, 1 and 2 offered
    options = page.locator("#analysis-plies option").all_inner_texts()
    assert options == ["1-ply", "2-ply"]
    # in the archive, the match says it was analysed
    page.click("a[href='/archive']")
    page.wait_for_selector("#archive .analysed")
    assert "analysed (0-ply)" in page.inner_text("#archive")
    assert not errors, errors
