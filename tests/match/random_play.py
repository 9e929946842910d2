"""Random but legal play through a Game, for property tests and replay tests."""

from __future__ import annotations

import random

from nard.match import Game, GameAction

__all__ = ["play_random_game", "random_step"]

# How often an optional action is taken when it is offered (rolling on otherwise).
_TAKEN = {
    GameAction.DOUBLE: 0.08,
    GameAction.RESIGN: 0.01,
    GameAction.PASS: 0.25,
    GameAction.BEAVER: 0.3,
    GameAction.RACCOON: 0.3,
    GameAction.ACCEPT: 0.5,
}


def random_step(game: Game, rng: random.Random) -> None:
    """Take one random legal action (dice from the game's source)."""
    legal = game.legal_actions()
    optional = sorted(a for a in legal if a in _TAKEN and rng.random() < _TAKEN[a])
    forced = sorted(a for a in legal if a not in _TAKEN)
    action = rng.choice(optional) if optional else rng.choice(forced)
    if action is GameAction.OPENING_ROLL:
        game.opening_roll()
    elif action is GameAction.ROLL:
        game.roll()
    elif action is GameAction.PLAY:
        game.play(rng.choice(game.legal_plays()))
    elif action is GameAction.RESIGN:
        game.resign(rng.randint(1, 3))
    elif action is GameAction.PASS:
        game.pass_double()
    else:
        getattr(game, action.value)()


def play_random_game(game: Game, rng: random.Random, max_steps: int = 5000) -> None:
    """Play ``game`` to its end with random legal actions."""
    for _ in range(max_steps):
        if game.is_over:
            return
        random_step(game, rng)
    raise AssertionError(f"the game did not end in {max_steps} steps")
