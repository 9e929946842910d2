"""The page in a real browser: headless Chromium (Debian's) driven by Playwright.

The server runs in a thread on a free port with a fresh SQLite database and
seeded dice. Without Chromium or Playwright these tests are skipped, unless
``NARD_REQUIRE_BROWSER=1`` (CI), where they fail.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from nard.server import Settings, create_app
from nard.server.storage import Storage
from tests.server.browser import (
    contribute,
    enabled_actions,
    launched_browser,
    match_against_the_computer,
    match_by_taps,
    new_page,
    online_game,
    own_points,
    play_by_clicks,
    play_by_double_clicks,
    play_by_drags,
    require_browser,
    served,
    settle,
    start_as_guest,
    start_match,
    take_turn,
)
from tests.server.conftest import NO_LIMITS


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app served by uvicorn on a free port, for this module's tests."""
    require_browser()
    folder = tmp_path_factory.mktemp("server")
    url = f"sqlite:///{folder / 'nard.db'}"
    rng = random.Random(11)
    storage = Storage(url)
    app = create_app(
        Settings(database_url=url, data_dir=folder, engine_workers=1, limits=NO_LIMITS),
        storage,
        server_seeds=lambda: rng.randbytes(32),
    )
    with served(app) as base:
        yield base
    storage.close()


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Browser]:
    with launched_browser() as browser:
        yield browser


def test_a_whole_game_against_the_computer_by_clicks(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    page, errors = new_page(browser)
    start_as_guest(page, base_url, "Ann")
    page.fill("input[name=match_length]", "1")
    page.click("#start")
    made = contribute(page)
    page.wait_for_selector("#board .checker")
    assert page.locator("#board .checker").count() >= 20
    assert made in page.inner_text("#contributions")
    for _ in range(400):
        if "wins the match" in page.inner_text("#status"):
            break
        if not take_turn(page):
            page.wait_for_timeout(100)
    else:
        raise AssertionError("the match did not end")
    # The result panel: who won what, and a rematch (checked at the end).
    panel = page.locator("#result-panel")
    expect(panel).to_be_visible()
    assert "wins the match" in panel.inner_text() and "Game 1 is over" in panel.inner_text()
    page.screenshot(path=str(tmp_path / "match-over.png"))
    page.wait_for_selector("#server-seed")
    assert len(page.inner_text("#server-seed")) == 64
    assert page.locator("#history li").count() >= 2
    # The moves list follows the newest entry.
    assert page.eval_on_selector(
        "#history", "e => e.scrollHeight - e.clientHeight - e.scrollTop < 5"
    ), "the moves list did not scroll to its newest entry"
    # The replay viewer steps through the game.
    page.click("button[data-action=replay_forward]")
    page.click("button[data-action=replay_forward]")
    assert page.inner_text("#replay-step").startswith("2 / ")
    # The verify page recomputes every die in the browser.
    page.click("text=Verify these dice")
    page.wait_for_selector("#verify-result.ok")
    assert "match the revealed seed" in page.inner_text("#verify-result")
    # Back at the table, the rematch starts the same match anew.
    page.go_back()
    page.wait_for_selector("#controls button[data-action=rematch]")
    finished = page.url
    page.click("#controls button[data-action=rematch]")
    page.wait_for_url(lambda url: url != finished and "/play/" in url)
    page.wait_for_selector("#contribution")
    assert errors == []


def test_an_online_game_between_two_browser_contexts(base_url: str, browser: Browser) -> None:
    ann, ann_errors, bob, bob_errors = online_game(base_url, browser, 3)
    turns = 0
    for _ in range(200):
        if turns >= 8:
            break
        for page in (ann, bob):
            if take_turn(page):
                turns += 1
        ann.wait_for_timeout(50)
    assert turns >= 8, f"only {turns} turns were played"
    # Whoever is to act resigns a single game; the other accepts.
    for resigner, answerer in ((ann, bob), (bob, ann)):
        if resigner.locator("#resign").count():
            resigner.select_option("#resign", "1")
            answerer.wait_for_selector("button[data-action=accept]")
            answerer.click("button[data-action=accept]")
            break
    else:
        raise AssertionError("nobody could resign")
    for page in (ann, bob):
        page.wait_for_function("document.querySelector('#score').innerText.includes('1')")
    assert ann_errors == [] and bob_errors == []


def test_the_verify_page_refuses_a_tampered_record(base_url: str, browser: Browser) -> None:
    page, _ = new_page(browser)
    record = {
        "dice": {
            "commitment": "0" * 64,
            "client_seed": "x",
            "server_seed": "11" * 32,
            "log": [1, 2],
        },
        "games": [],
    }
    page.goto(base_url + "/verify")
    page.fill("#verify-record", json.dumps(record))
    page.click("#verify-button")
    page.wait_for_selector("#verify-result.bad")
    assert "does not match the commitment" in page.inner_text("#verify-result")


@pytest.mark.parametrize(
    ("locale", "rtl", "phrase"), [("en-US", False, "New game"), ("fa-IR", True, "بازی تازه")]
)
@pytest.mark.parametrize("viewport", [(1280, 860), (390, 844)], ids=["desktop", "phone"])
def test_screenshots_of_the_board_keep_their_layout(
    base_url: str,
    browser: Browser,
    tmp_path: Path,
    locale: str,
    rtl: bool,
    phrase: str,
    viewport: tuple[int, int],
) -> None:
    width, height = viewport
    page, errors = new_page(browser, locale=locale, viewport={"width": width, "height": height})
    start_as_guest(page, base_url, "Sara")
    assert page.evaluate("document.documentElement.dir") == ("rtl" if rtl else "ltr")
    assert phrase in page.inner_text("#nav")
    page.fill("input[name=match_length]", "3")
    page.click("#start")
    # The contribution's card fits the screen (on a phone its unbroken commitment
    # and its field once pushed the button off the side).
    page.wait_for_selector("#contribute")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1
    # Measured in the page in one go: the page renders the card afresh on every table
    # update, and a locator's box of a node replaced meanwhile is None (a CI run saw it).
    button = page.wait_for_function(
        """() => {
            const b = document.querySelector('#contribute');
            const r = b && b.getBoundingClientRect();
            return r && r.width > 0 ? {x: r.x, width: r.width} : null;
        }"""
    ).json_value()
    assert button["x"] >= 0 and button["x"] + button["width"] <= width
    contribute(page)
    page.wait_for_selector("#board .checker")
    shot = page.screenshot(path=str(tmp_path / f"board-{locale}-{width}.png"), full_page=True)
    assert len(shot) > 20_000  # a drawn board, not a blank page
    # Nothing runs off the side of the screen, and the board fills its column.
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    board = page.locator("#board").bounding_box()
    side = page.locator("#side").bounding_box()
    assert board is not None and side is not None
    assert board["width"] >= 0.55 * width and board["height"] > 0.6 * board["width"]
    if width > 700:  # side by side: the panel after the board in reading order
        assert (side["x"] < board["x"]) if rtl else (side["x"] > board["x"])
    else:  # stacked on a phone
        assert side["y"] >= board["y"] + board["height"] - 1
    brand = page.locator(".brand").bounding_box()
    assert brand is not None
    assert (brand["x"] > width / 2) if rtl else (brand["x"] < width / 2)
    assert errors == []


@pytest.mark.parametrize(("lang", "phrase"), [("fa", "مهره"), ("ar", "حجر"), ("en", "Crawford")])
def test_the_rules_page_in_each_language(
    base_url: str, browser: Browser, lang: str, phrase: str
) -> None:
    page, errors = new_page(browser)
    page.goto(base_url + "/")
    page.select_option("#language", lang)
    page.click("#nav a[href='/rules']")
    page.wait_for_selector("#rules p")
    assert phrase in page.inner_text("#rules")
    assert page.evaluate("document.documentElement.lang") == lang
    assert errors == []


def test_a_chouette_game_with_two_computers_by_clicks(base_url: str, browser: Browser) -> None:
    page, errors = new_page(browser)
    start_as_guest(page, base_url, "Ann")
    page.select_option("select[name=opponent]", "chouette")
    page.fill("input[name=players]", "3")
    page.fill("input[name=computers]", "2")
    page.click("#start")
    contribute(page)
    page.wait_for_selector("#board .checker")
    assert page.locator("#score .player").count() == 3
    roles = page.eval_on_selector_all("#score .player", "els => els.map(e => e.dataset.role)")
    assert sorted(roles) == ["box", "captain", "crew"]
    for _ in range(600):
        if page.locator("button[data-action=next_game]").count():
            break
        if not take_turn(page):
            for action in ("agree",):
                if action in enabled_actions(page):
                    page.click(f"button[data-action={action}]")
                    settle(page)
            page.wait_for_timeout(100)
    else:
        raise AssertionError("the chouette game did not end")
    points = page.eval_on_selector_all(
        "#score .points", "els => els.map(e => Number(e.textContent))"
    )
    assert sum(points) == 0 and any(points)
    # End the table between games: the seed is revealed and the dice check out.
    page.click("button[data-action=end_session]")
    page.wait_for_selector("#server-seed")
    page.click("text=Verify these dice")
    page.wait_for_selector("#verify-result.ok")
    assert errors == []


def test_a_checker_is_dragged_to_a_highlighted_point(base_url: str, browser: Browser) -> None:
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Dora", 3)
    page.wait_for_selector("#board .checker")
    for _ in range(20):  # until it is our turn to play
        settle(page)
        if page.locator("button[data-action=confirm]").count():
            break
        assert take_turn(page)
    undo = page.locator("button[data-action=undo]")
    assert undo.is_disabled()
    points = page.eval_on_selector_all(
        "#board .checker", "els => [...new Set(els.map(e => e.dataset.point))]"
    )
    for point in points:
        checker = page.locator(f"#board .checker[data-point='{point}']").last
        checker.click()  # selects it, showing where it may go
        targets = page.locator("#board .target")
        if not targets.count():
            continue
        destination = targets.first.get_attribute("data-point")
        # Then drag it there (a second click would be a double click, which moves it).
        box = checker.bounding_box()
        goal = targets.first.bounding_box()
        assert box is not None and goal is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(goal["x"] + goal["width"] / 2, goal["y"] + goal["height"] * 0.9, steps=5)
        page.mouse.up()
        break
    else:
        raise AssertionError("no checker could move")
    assert undo.is_enabled(), f"the drag to {destination} did not move the checker"
    undo.click()
    assert undo.is_disabled()
    assert errors == []


def test_refusals_are_shown_in_the_page_language(base_url: str, browser: Browser) -> None:
    page, _ = new_page(browser, locale="fa-IR")
    page.goto(base_url + "/play/no-such-table")
    page.wait_for_selector("#error:not([hidden])")
    assert "چنین میزی نیست" in page.inner_text("#error")


def test_a_guest_without_a_name_is_named_in_the_page_language(
    base_url: str, browser: Browser
) -> None:
    """Tried on 2026-12-07: a guest who gave no name was "Guest 2160" in every language
    (the server's default), at the table and to the opponent."""
    for locale, word in (("fa-IR", "مهمان"), ("ar", "ضيف"), ("en-US", "Guest")):
        page, errors = new_page(browser, locale=locale)
        page.goto(base_url + "/")
        page.click("#guest-button")
        page.wait_for_selector(f"#who:has-text('{word} ')")
        name = page.evaluate("fetch('/api/me').then((r) => r.json()).then((me) => me.name)")
        assert re.fullmatch(rf"{word} [1-9][0-9]{{3}}", name), name
        assert errors == []
        page.context.close()


def test_an_account_changes_its_password_in_the_page(base_url: str, browser: Browser) -> None:
    page, errors = new_page(browser)
    page.goto(base_url + "/")
    page.fill("input[name=username]", "pagetester")
    page.fill("input[name=password]", "first password")
    page.click("text=Create account")
    page.wait_for_selector("#who:has-text('pagetester')")
    page.click("#nav a[href='/archive']")
    page.fill("#password input[name=current]", "wrong password")
    page.fill("#password input[name=new]", "second password")
    page.click("#password button")
    page.wait_for_selector("#error:not([hidden])")
    assert "Wrong username or password" in page.inner_text("#error")
    page.fill("#password input[name=current]", "first password")
    page.fill("#password input[name=new]", "second password")
    page.click("#password button")
    page.wait_for_selector("#password-done:has-text('Password changed')")
    assert errors == [] or all("403" in e for e in errors)


def test_the_api_documentation_works_without_the_internet(base_url: str, browser: Browser) -> None:
    """Issue 28: /docs and /redoc were blank offline (their scripts came from a CDN).
    Every request they make now goes to this server, and both render the API."""
    for path, selector in (("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")):
        page, errors = new_page(browser)
        elsewhere: list[str] = []

        def refuse(route: Any, elsewhere: list[str] = elsewhere) -> None:
            elsewhere.append(route.request.url)
            route.abort()

        page.route(lambda url: not url.startswith(base_url), refuse)
        page.goto(base_url + path)
        page.wait_for_selector(selector, timeout=20_000)
        assert "nard" in page.inner_text(selector), path
        assert elsewhere == [], (path, elsewhere)
        # ReDoc's script names its makers' logo on their site: the page's policy keeps
        # the browser from fetching it, and that is the only complaint allowed.
        errors = [e for e in errors if "cdn.redoc.ly" not in e or "violates" not in e]
        assert errors == [], (path, errors)
        page.context.close()


def test_a_click_on_the_checkers_of_a_highlighted_point_moves_there(
    base_url: str, browser: Browser
) -> None:
    """Issue 28: clicking a checker, then a highlighted point that holds your own
    checkers (8/5 onto 5, 13/8, 8/6 ... most turns) only selected those checkers."""
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Eve", 11)
    page.wait_for_selector("#board .checker")
    undo = page.locator("button[data-action=undo]")
    go_on = page.locator("#result-panel button[data-action=continue]")
    for _ in range(80):  # turns, until one offers such a move (most do; random dice)
        settle(page)
        if go_on.is_visible():  # a game ended: its result covers the board (the next
            go_on.click()  # game may already wait for a play; seen in a CI run)
            settle(page)
        if not page.locator("button[data-action=confirm]").count():
            assert take_turn(page)
            continue
        movable: dict[str, list[str]] = {}  # a point of mine -> where its checker may go
        for point in page.eval_on_selector_all(
            "#board .checker", "els => [...new Set(els.map(e => e.dataset.point))]"
        ):
            page.locator(f"#board .checker[data-point='{point}']").last.click()
            targets = page.eval_on_selector_all(
                "#board .target", "els => els.map(e => e.dataset.point)"
            )
            if targets:
                movable[point] = targets
                page.keyboard.press("Escape")  # put it back (a second click would move it)
        # A move onto a point whose own checkers could move too: pressing on them
        # selected them instead of moving there.
        for point, targets in movable.items():
            onto = [t for t in targets if t in movable and t != point]
            if onto:
                page.locator(f"#board .checker[data-point='{point}']").last.click()
                page.locator(f"#board .checker[data-point='{onto[0]}']").last.click()
                assert undo.is_enabled(), f"{point} -> {onto[0]}: the click only selected"
                assert errors == []
                return
        play_by_clicks(page)
    raise AssertionError("no turn offered a move onto a point of one's own")


def test_the_whole_tray_takes_a_bear_off(base_url: str, browser: Browser) -> None:
    """Issue 28: clicks on the borne-off checkers or on the word "off" were ignored
    (0 of 13, 0 of 15): only the bare felt of the tray took them."""
    page, errors = new_page(browser)
    page.goto(base_url + "/")
    clicked = page.evaluate(
        """async () => {
            const { drawBoard } = await import('/static/board.js');
            const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
            document.body.appendChild(svg);
            const board = new Array(26).fill(0);
            board[1] = 1; board[24] = -2;
            const seen = [];
            drawBoard(svg, {
                board, colours: ['white', 'black'], off: [14, 13], dice: [6, 1], diceMine: true,
                cube: { value: 2 },
                cubeOwnerIsMe: true, homeRight: true, selected: 1, targets: [0],
                onPoint: (p) => seen.push(p), onDrag: () => {}, labels: { off: 'off' },
            });
            const hits = [];
            for (const node of svg.querySelectorAll('.offchecker, .traylabel')) {
                node.scrollIntoView({ block: 'center', inline: 'center' });
                const box = node.getBoundingClientRect();
                const x = box.x + box.width / 2, y = box.y + box.height / 2;
                const hit = document.elementFromPoint(x, y);
                hits.push(hit && (hit.getAttribute('data-point') ?? hit.getAttribute('class')));
                if (hit) hit.dispatchEvent(new MouseEvent('click', { bubbles: true }));
            }
            return { hits, seen };
        }"""
    )
    assert len(clicked["hits"]) == 14 + 13 + 1
    assert set(clicked["hits"]) == {"0"}, clicked
    assert clicked["seen"] == [0] * len(clicked["hits"])
    assert errors == []


def test_a_click_on_start_after_the_answer_makes_no_second_match(
    base_url: str, browser: Browser
) -> None:
    """Found by a clean-clone run on a loaded machine: the second click of a double
    click came after the new table's answer, while the page was still loading the
    table, and Start (enabled again) made a second match. The table's own load is
    held back here to open that window every time."""
    page, errors = new_page(browser)
    start_as_guest(page, base_url, "Gus")
    page.fill("input[name=match_length]", "3")
    held: list[Any] = []
    page.route(re.compile(r".*/api/tables/[A-Za-z0-9_-]+$"), lambda route: held.append(route))
    with page.expect_response(lambda r: r.url.endswith("/api/tables") and r.status == 201):
        page.click("#start")
    page.locator("#start").dispatch_event("click")  # as a late second click would
    page.wait_for_timeout(300)
    for route in held:
        route.continue_()
    page.unroute(re.compile(r".*/api/tables/[A-Za-z0-9_-]+$"))
    page.wait_for_selector("#contribution")
    page.wait_for_load_state("networkidle")
    mine = page.evaluate("fetch('/api/my-tables').then((r) => r.json())")
    assert len(mine) == 1, mine
    assert errors == []


def test_a_double_click_on_start_makes_one_match(base_url: str, browser: Browser) -> None:
    """Issue 28: double-clicking Start created two matches."""
    page, errors = new_page(browser)
    start_as_guest(page, base_url, "Finn")
    page.fill("input[name=match_length]", "3")
    page.dblclick("#start")
    page.wait_for_url("**/play/**")
    page.wait_for_selector("#contribution")
    page.wait_for_load_state("networkidle")  # a second request, if one was sent, is done
    mine = page.evaluate("fetch('/api/my-tables').then((r) => r.json())")
    assert len(mine) == 1, mine
    assert errors == []


def test_an_offered_double_shows_its_value_on_the_cube(base_url: str, browser: Browser) -> None:
    """Issue 28: a double on offer still showed 64 (the cube at 1) on both pages."""
    ann, ann_errors, bob, bob_errors = online_game(base_url, browser, 5)
    for _ in range(200):  # play until someone may double, then double
        doubler = next(
            (p for p in (ann, bob) if p.locator("button[data-action=double]:enabled").count()),
            None,
        )
        if doubler is not None:
            break
        if not (take_turn(ann) or take_turn(bob)):
            ann.wait_for_timeout(50)
    else:
        raise AssertionError("nobody could double")
    taker = bob if doubler is ann else ann
    doubler.click("button[data-action=double]")
    taker.wait_for_selector("button[data-action=take]")
    for page in (doubler, taker):
        expect(page.locator("#board .cubetext")).to_have_text("2")
    taker.click("button[data-action=take]")
    settle(taker)
    assert taker.text_content("#board .cubetext") == "2"
    assert ann_errors == [] and bob_errors == []


FACES = "els => els.map(e => e.dataset.face)"
CHECKERS = "els => els.map(e => e.dataset.point).join()"


ANSWERED = """() => document.querySelector('#board .sliding')
  || document.querySelector('button[data-action=take]') || document.querySelector('#no-play')"""


def until_my_play(page: Page, tap: bool = False) -> None:
    """Act until this page has dice to play."""
    for _ in range(40):
        settle(page)
        if page.locator("button[data-action=confirm]").count():
            return
        if not take_turn(page, tap):
            page.wait_for_timeout(100)
    raise AssertionError("it never was this player's turn to play")


def test_the_computers_roll_and_play_are_seen(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    """Tried on 2026-12-05: the computer's dice were never drawn, its move not shown."""
    page, errors = new_page(browser)
    page.add_init_script("localStorage.setItem('nard.speed', 'slow')")
    match_against_the_computer(page, base_url, "Vera", 3)
    for _ in range(6):  # a few of the computer's turns, until one with a play
        until_my_play(page)
        play_by_clicks(page)
        # Its answer: a play that slides in, checker by checker (or a double, or no move).
        page.wait_for_function(ANSWERED, timeout=20_000)
        if not page.locator("#board .sliding").count():
            continue  # it doubled (until_my_play takes), or could not move: another turn
        page.wait_for_selector("#board .sliding", state="detached", timeout=20_000)
        settle(page)
        if page.locator("#no-play").count() or "roll" not in enabled_actions(page):
            continue  # it could not play, or doubled: another turn
        # ... then its dice stay on its side, dimmed, and its play stays marked.
        assert page.locator("#board .dice[data-mine='0'] .die.used").count() == 2
        assert page.locator("#board .moved").count() >= 1
        assert page.locator("#board .ghost").count() >= 1
        page.screenshot(path=str(tmp_path / "computer-played.png"))
        break
    else:
        raise AssertionError("the computer never played a move that could be seen")
    assert errors == []


def test_double_clicks_undo_one_move_and_the_dice_swap(base_url: str, browser: Browser) -> None:
    """A double click moves a checker by the first die shown (the larger, unless the
    dice were swapped by a click on them); used dice are dimmed; Undo takes back one
    move, Undo all the rest. Before: undo took back the whole play, used dice stayed
    bright, double clicks and clicks on the dice did nothing."""
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Wim", 3)
    mine = "#board .dice[data-mine='1'] .die"
    used = f"{mine}.used"
    undo = page.locator("button[data-action=undo]")
    undo_all = page.locator("button[data-action=undo_all]")
    for _ in range(10):  # until a roll of two different dice that moves two checkers
        until_my_play(page)
        faces = [int(f) for f in page.eval_on_selector_all(mine, FACES)]
        forced = page.locator("button[data-action=confirm]").is_enabled()  # entered for us
        if len(faces) != 2 or forced:
            play_by_clicks(page)
            continue
        assert faces[0] > faces[1], "the larger die is shown first"
        page.click("#board .dice")
        swapped = [int(f) for f in page.eval_on_selector_all(mine, FACES)]
        assert swapped == [faces[1], faces[0]], "a click on the dice swaps them"
        page.click("#board .dice")
        start = page.eval_on_selector_all("#board .checker", CHECKERS)
        moved = 0
        for _pass in range(3):  # a checker passed over may be the one the other die moves
            for point in own_points(page):
                if moved == 2 or page.locator("button[data-action=confirm]").is_enabled():
                    break
                page.locator(f"#board .checker[data-point='{point}']").last.dblclick()
                if page.locator(used).count() > moved:
                    moved += 1
                    if moved == 1:
                        # The first die shown this checker can use: the larger, else the smaller.
                        assert page.locator(used).count() == 1
                        assert undo.is_enabled() and undo_all.is_disabled()
        if moved == 2:
            break
        play_by_clicks(page)  # a roll that plays one die only: another turn
    else:
        raise AssertionError("no roll of two different dice moved two checkers")
    assert page.locator(used).count() == 2 and undo_all.is_enabled()
    undo.click()
    assert page.locator(used).count() == 1, "undo takes back one move"
    assert undo.is_enabled()
    undo.click()
    assert page.locator(used).count() == 0 and undo.is_disabled()
    after = page.eval_on_selector_all("#board .checker", CHECKERS)
    assert after == start
    assert errors == []


def test_a_click_after_escape_picks_the_checker_up_again(base_url: str, browser: Browser) -> None:
    """A click on a checker, Escape, and another click on it within 0.4 s counted as a
    double click: it moved the checker instead of picking it up again (seen in CI)."""
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Ida", 3)
    undo = page.locator("button[data-action=undo]")
    for _ in range(10):  # until a turn that is not entered for the player
        until_my_play(page)
        if not page.locator("button[data-action=confirm]").is_enabled():
            break
        play_by_clicks(page)
    else:
        raise AssertionError("every play was entered for the player")
    for point in own_points(page):
        checker = page.locator(f"#board .checker[data-point='{point}']").last
        checker.click()
        if page.locator("#board .target").count():
            break
    else:
        raise AssertionError("no checker could be picked up")
    page.keyboard.press("Escape")
    assert page.locator("#board .target").count() == 0, "Escape puts it back"
    checker.click()
    assert page.locator("#board .target").count(), "the click picks it up again"
    assert undo.is_disabled(), "and moves nothing"
    assert errors == []


def play_to_the_end(
    page: Page, tap: bool = False, enter: Callable[[Page], None] | None = None
) -> None:
    """Take every turn until the match is over (its Rematch button is there)."""
    for _ in range(400):
        if page.locator("#controls button[data-action=rematch]").count():
            return
        if not take_turn(page, tap, enter):
            page.wait_for_timeout(100)
    raise AssertionError("the match did not end")


def test_a_match_in_persian_by_clicks_replayed_by_keyboard(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    """A whole match in Persian; then its replay by keyboard, each step with its own
    caption in Persian, the moves list following the step. Before: no keyboard,
    captions in English (a roll's repeating the move before it), the computer named
    in English, moves jumbled in the RTL list."""
    page, errors = new_page(browser, locale="fa-IR")
    start_as_guest(page, base_url, "Sara")
    assert page.get_attribute("html", "dir") == "rtl"
    page.fill("input[name=match_length]", "1")
    page.click("#start")
    contribute(page)
    play_to_the_end(page)
    assert "نرد (حرفه‌ای)" in page.inner_text("#score")  # the computer's name, translated
    # Moves are isolated left to right inside the RTL list.
    assert page.locator("#history li bdi[dir=ltr]").count() >= 2
    page.locator("#result-panel button[data-action=close]").click()
    page.keyboard.press("Home")
    expect(page.locator("#replay-step")).to_contain_text("1 / ")  # once the steps came
    total = int(page.inner_text("#replay-step").split("/")[1])
    assert "تاس آغاز" in page.inner_text("#replay-text")  # the opening roll, in Persian
    captions = [page.inner_text("#replay-text")]
    for step in range(2, min(total, 8) + 1):
        page.keyboard.press("ArrowLeft")  # forward, in a right-to-left page
        assert page.inner_text("#replay-step").startswith(f"{step} / ")
        captions.append(page.inner_text("#replay-text"))
        # The moves list shows this game's steps so far, this one marked.
        assert page.locator("#history li").count() == step
        assert page.locator("#history li.current").inner_text() == captions[-1]
    # Each step its own caption (a roll's repeated the move before it).
    assert all(a != b for a, b in itertools.pairwise(captions)), captions
    assert any("تاس انداخت" in c for c in captions)  # a roll, said as a roll
    # Nothing in English but the name and the moves (standard notation, kept left to right).
    words = [re.sub("\u2066[^\u2069]*\u2069", "", c).replace("Sara", "") for c in captions]
    assert not any(re.search("[A-Za-z]", w) for w in words), captions
    # The caption stays through any redraw (a setting changed; the computer's last
    # play still sliding in): it was written once beside the board and then lost.
    page.select_option("#speed", "fast")
    assert page.inner_text("#replay-text") == captions[-1]
    page.keyboard.press("End")
    assert page.inner_text("#replay-step") == f"{total} / {total}"
    page.keyboard.press("Escape")
    assert page.inner_text("#replay-step") != f"{total} / {total}"
    # Persian digits, where the player chooses them: scores, pips, point numbers.
    page.select_option("#digits", "native")
    persian = "[\u06f0-\u06f9]"  # the extended Arabic-Indic digits Persian writes
    assert re.fullmatch(persian + "+", page.locator("#score .points").first.inner_text())
    assert re.search(persian, page.locator("#score .pips").first.inner_text())
    numbers = page.eval_on_selector_all(
        "#board .label[data-point]", "els => els.map(e => e.textContent)"
    )
    assert "\u06f2\u06f4" in numbers and "24" not in numbers
    page.screenshot(path=str(tmp_path / "fa-finished.png"), full_page=True)
    # The list of one's matches: its dates kept left to right (they read 06-12-2026 00:53).
    page.click("#nav a[href='/archive']")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", page.inner_text("#archive bdi.date[dir=ltr]"))
    assert errors == []


def test_a_match_in_arabic_by_taps_on_a_phone(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    """A whole match on a 390x844 touch screen in Arabic, by taps only."""
    page, errors = new_page(
        browser,
        locale="ar-EG",
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
    )
    match_by_taps(page, base_url, "Omar", 1)
    width = page.eval_on_selector("#board", "e => e.getBoundingClientRect().width")
    assert width >= 370, f"the board is {width} px wide on a 390 px screen"
    until_my_play(page, tap=True)
    # Touch targets of at least 40 CSS px, point numbers of at least 9 px, the board
    # described for screen readers.
    heights = page.eval_on_selector_all(
        "#controls button, #controls select, #controls input",
        "els => els.map(e => e.getBoundingClientRect().height)",
    )
    assert heights and min(heights) >= 40, heights
    label = page.eval_on_selector("#board .label", "e => e.getBoundingClientRect().height")
    assert label >= 9, f"point numbers {label} px tall"
    assert "النرد" in (page.get_attribute("#board", "aria-label") or "")
    play_to_the_end(page, tap=True)
    assert page.locator("#result-panel").is_visible()
    page.screenshot(path=str(tmp_path / "ar-phone-finished.png"), full_page=True)
    assert errors == []


OVERLAPS = """async ([bar, off, owner]) => {
  const { drawBoard } = await import("/static/board.js");
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.style.width = "1000px";
  document.body.append(svg);
  const board = new Array(26).fill(0);
  board[25] = bar; board[0] = -bar;          // checkers on both bars
  board[6] = 15 - bar - off; board[19] = -(15 - bar - off);
  drawBoard(svg, { board, homeRight: true, colours: ["white", "black"], off: [off, off],
    dice: [6, 5], diceMine: true, cube: { value: 2 }, cubeOwnerIsMe: owner,
    selected: null, targets: [], labels: { off: "off" } });
  const cube = svg.querySelector(".cube").getBBox();
  const near = (b) => b.x < cube.x + cube.width && cube.x < b.x + b.width
    && b.y < cube.y + cube.height && cube.y < b.y + b.height;
  const others = svg.querySelectorAll(".checker, .offchecker, .die rect, .traylabel");
  const hits = [...others].filter((n) => near(n.getBBox()));
  svg.remove();
  return hits.map((n) => n.getAttribute("class"));
}"""


@pytest.mark.parametrize(
    ("bar", "off", "owner"),
    [(4, 0, None), (1, 0, None), (0, 14, True), (0, 14, False), (2, 12, True)],
)
def test_the_cube_sits_clear_of_the_checkers(
    base_url: str, browser: Browser, bar: int, off: int, owner: bool | None
) -> None:
    """Tried on 2026-12-05: the cube covered checkers on the bar (centred) and in
    the tray (owned)."""
    page, errors = new_page(browser)
    page.goto(base_url + "/rules")
    page.wait_for_selector("#rules")
    assert page.evaluate(OVERLAPS, [bar, off, owner]) == []
    assert errors == []


FORCED = """async () => {
  const { MoveInput } = await import("/static/board.js");
  // 15 checkers on the 24 point; the opponent holds 18 and 13: with 6-5 the six
  // cannot be played at all, and 24/19 is the only play.
  const board = new Array(26).fill(0);
  board[24] = 15; board[18] = -2; board[13] = -2; board[1] = -11;
  const after = board.slice(); after[24] = 14; after[19] = 1;
  const only = [{ play: "24/19", moves: [[24, 19]], board: after }];
  const input = new MoveInput(board, [6, 5], only);
  const entered = input.enterForced(only);
  const done = input.complete();
  const both = [...only, { play: "x", moves: [[24, 19]], board: board }];
  const two = new MoveInput(board, [6, 5], both);
  const untouched = !two.enterForced(both) && two.moves.length === 0;
  return { entered, play: done && done.play, moves: input.moves, untouched };
}"""


def test_the_only_legal_play_is_entered_for_the_player(base_url: str, browser: Browser) -> None:
    page, errors = new_page(browser)
    page.goto(base_url + "/rules")
    page.wait_for_selector("#rules")
    outcome = page.evaluate(FORCED)
    assert outcome == {"entered": True, "play": "24/19", "moves": [[24, 19]], "untouched": True}
    assert errors == []


def test_a_play_typed_in_standard_notation(base_url: str, browser: Browser) -> None:
    """Keyboard entry: a refused play changes nothing and says why; a legal one is played."""
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Tia", 3)
    until_my_play(page)
    moves_before = page.locator("#history li").count()
    page.fill("#play-text", "24/1")
    page.press("#play-text", "Enter")
    expect(page.locator("#error")).to_contain_text("Not allowed by the rules")
    settle(page)
    assert page.locator("button[data-action=confirm]").count() == 1  # still this turn
    page.click("button[data-action=hint]")
    page.wait_for_selector("#hint li")
    best = re.sub(r"\s+[+-]\d+\.\d+$", "", page.locator("#hint li").first.inner_text())
    page.fill("#play-text", best)
    page.press("#play-text", "Enter")
    settle(page)
    page.wait_for_function(
        "n => document.querySelectorAll('#history li').length > n", arg=moves_before
    )
    assert best in page.locator("#history li").all_inner_texts()[moves_before]
    assert errors == [] or all("409" in e or "400" in e or "422" in e for e in errors), errors


def test_a_complete_play_is_sent_at_once_when_chosen(base_url: str, browser: Browser) -> None:
    page, errors = new_page(browser)
    page.add_init_script("localStorage.setItem('nard.autoconfirm', '1')")
    match_against_the_computer(page, base_url, "Uma", 3)
    until_my_play(page)
    moves_before = page.locator("#history li").count()
    for _ in range(8):  # a checker, then a highlighted point, until the play is gone
        if not page.locator("button[data-action=confirm]").count():
            break
        for point in page.eval_on_selector_all(
            "#board .checker", "els => [...new Set(els.map(e => e.dataset.point))]"
        ):
            page.locator(f"#board .checker[data-point='{point}']").last.click()
            if page.locator("#board .target").count():
                page.locator("#board .target").first.click(force=True)
                break
        settle(page)
    page.wait_for_function(
        "n => document.querySelectorAll('#history li').length > n", arg=moves_before
    )
    assert page.locator("#history li").all_inner_texts()[moves_before].startswith("Uma")
    assert errors == []


def test_a_match_against_the_computer_is_abandoned_in_the_page(
    base_url: str, browser: Browser
) -> None:
    page, errors = new_page(browser, locale="ar-EG")
    match_against_the_computer(page, base_url, "Lina", 9)
    until_my_play(page)
    page.click("button[data-action=abandon]")
    assert page.locator("#abandon-ask").is_visible()  # a second click confirms
    page.click("button[data-action=cancel]")
    assert not page.locator("#abandon-ask").count()
    page.click("button[data-action=abandon]")
    page.click("button[data-action=abandon_confirm]")
    page.wait_for_selector("#abandoned")
    assert page.locator("#server-seed").inner_text()
    assert page.locator("#controls button[data-action=rematch]").count() == 1
    assert errors == []


def test_a_match_ended_before_any_move_has_nothing_to_replay(
    base_url: str, browser: Browser
) -> None:
    """Ended while the dice waited for contributions, the match has no step: the
    replay buttons tell so (they read step -1 of an empty list and the page threw
    "Cannot read properties of undefined (reading 'board')", found by random clicks)."""
    page, errors = new_page(browser)
    start_match(page, base_url, "Rumi", 3)
    page.click("button[data-action=end_session]")
    page.wait_for_selector("#replay")
    for action in ("replay_back", "replay_forward", "replay_back"):
        page.click(f"button[data-action={action}]")
        expect(page.locator("#replay-step")).to_have_text("Nothing to replay: no move was made")
    assert page.locator("#analysis").count() == 0  # nothing to analyse either
    assert errors == []


def test_an_open_seat_is_named_in_the_page_language(base_url: str, browser: Browser) -> None:
    """The seat waiting for an opponent was shown as the server's "open seat", in
    English, at the table and in the list of one's matches of a Persian page."""
    page, errors = new_page(browser, locale="fa-IR")
    start_match(page, base_url, "Sara", 3, opponent="person")
    contribute(page)
    page.wait_for_selector("#invite-link")
    expect(page.locator("#score")).to_contain_text("صندلی خالی")
    assert "open seat" not in page.inner_text("body")
    page.click("button[data-action=end_session]")  # nobody came
    page.wait_for_selector("#replay")
    page.goto(base_url + "/archive")
    expect(page.locator("#main")).to_contain_text("Sara — صندلی خالی")
    assert "open seat" not in page.inner_text("body")
    assert errors == []


def test_no_button_sends_twice(base_url: str, browser: Browser) -> None:
    """A double click on the result panel's Next game started the next game and then
    sent again (a 409 shown as an error); every button now waits for its answer."""
    page, errors = new_page(browser)
    match_against_the_computer(page, base_url, "Noor", 0)
    for _ in range(40):  # until it is Noor's turn (resigning is for one's own turn)
        settle(page)
        if page.locator("#resign").count():
            break
        page.wait_for_timeout(100)
    page.select_option("#resign", "1")
    page.wait_for_selector("#result-panel button[data-action=next_game]")
    page.locator("#result-panel button[data-action=next_game]").dblclick()
    settle(page)
    page.wait_for_selector("#board .checker")
    assert page.locator("#error").is_hidden()
    assert errors == []


@pytest.mark.parametrize("enter", [play_by_drags, play_by_double_clicks], ids=["drag", "dblclick"])
def test_a_whole_match_by_drags_or_by_double_clicks(
    base_url: str, browser: Browser, enter: Callable[[Page], None]
) -> None:
    page, errors = new_page(browser, viewport={"width": 1280, "height": 1000})  # all the board
    page.add_init_script("localStorage.setItem('nard.speed', 'off')")
    match_against_the_computer(page, base_url, "Rui", 1)
    play_to_the_end(page, enter=enter)
    assert page.locator("#result-panel").is_visible()
    assert errors == []


def test_a_phone_on_its_side_shows_the_whole_board(
    base_url: str, browser: Browser, tmp_path: Path
) -> None:
    """844x390, landscape: the board fits the screen's height, the side panel beside it."""
    page, errors = new_page(
        browser, viewport={"width": 844, "height": 390}, has_touch=True, is_mobile=True
    )
    match_by_taps(page, base_url, "Ida", 3)
    page.evaluate("document.querySelector('#board').scrollIntoView()")
    board = page.eval_on_selector("#board", "e => e.getBoundingClientRect().toJSON()")
    side = page.eval_on_selector("#side", "e => e.getBoundingClientRect().toJSON()")
    assert board["height"] <= 390 and board["width"] >= 420, board
    assert side["left"] >= board["right"] - 1 or side["right"] <= board["left"] + 1, (board, side)
    page.screenshot(path=str(tmp_path / "landscape.png"))
    assert errors == []
