"""The game's history in the table view: rendered once per action and extended as the
game goes on (every view used to render every action of the game again)."""

from __future__ import annotations

from typing import Any

from nard.match.dice import SeededDice
from nard.match.game import Decision, Game, GameAction
from nard.notation.records import Action
from nard.server import tables
from nard.server.tables import history_view


def fresh(game: Game) -> list[dict[str, Any]]:
    return [tables._action_text(a) for a in game.actions]


def test_the_history_is_every_action_of_the_game_at_every_step(monkeypatch: Any) -> None:
    game = Game(dice=SeededDice(5))
    other = Game(dice=SeededDice(6))
    steps = 0
    renders = 0
    original = tables._action_text

    def counting(action: Action) -> dict[str, Any]:
        nonlocal renders
        renders += 1
        return original(action)

    monkeypatch.setattr(tables, "_action_text", counting)
    while game.result is None:
        if game.decision is Decision.OPENING_ROLL:
            game.opening_roll()
        elif game.decision is Decision.PLAY:
            game.play(game.legal_plays()[0])
        elif GameAction.DOUBLE in game.legal_actions() and steps == 6:
            game.double()
        elif game.decision is Decision.TAKE_OR_PASS:
            game.take()
        else:
            game.roll()
        steps += 1
        before = renders
        shown = history_view(game)
        assert renders - before <= 2  # only the actions added since the last view
        assert shown == [original(a) for a in game.actions]
        if shown:
            assert history_view(game) is shown  # nothing new: the same list
        # Another game's history is its own.
        if other.decision is Decision.OPENING_ROLL:
            other.opening_roll()
        assert history_view(other) == [original(a) for a in other.actions]
    assert steps > 20 and len(game.actions) > 20
    assert history_view(game) == fresh(game)
