"""``nard hint``: the engine's ranked plays of a roll, or its cube decision, as gnubg's ``hint``.

With dice (given, or in the Match ID or XGID) every legal play is listed best
first with its equity, the difference to the best, and the five
probabilities on gnubg's second line (win, win gammon, win backgammon -
lose, lose gammon, lose backgammon). With a Match ID or XGID the plays are
ranked by their cubeful equity at that cube and score (EMG in match play), as
gnubg ranks them and as the computer chooses; a bare Position ID ranks them
cubeless. Without dice it is the cube decision of
the side on roll: its cubeless equity, the three cubeful equities (best
first, as gnubg orders them) and the proper action. The score and cube come
from the Match ID or XGID, seen from the player on roll.
"""

from __future__ import annotations

import json
from typing import Any

from nard.core import Dice, NardError, Position, parse_dice
from nard.engine.cube import CubeContext, CubeDecision, written_context
from nard.engine.engine import Engine, Level
from nard.engine.search import RankedPlay
from nard.notation.positions import read_written_position

__all__ = ["HintError", "cmd_hint"]

PROBABILITY_NAMES = (
    "win",
    "win_gammon",
    "win_backgammon",
    "lose",
    "lose_gammon",
    "lose_backgammon",
)
"""The six numbers of gnubg's probability line, in its order (lose = 1 - win)."""


class HintError(NardError, ValueError):
    """A position or match ``nard hint`` cannot analyse."""


def _probability_row(probs: tuple[float, float, float, float, float]) -> list[float]:
    win, wg, wbg, lg, lbg = probs
    return [win, wg, wbg, 1.0 - win, lg, lbg]


def _probability_dict(probs: tuple[float, float, float, float, float]) -> dict[str, float]:
    return dict(zip(PROBABILITY_NAMES, _probability_row(probs), strict=True))


def _probability_line(probs: tuple[float, float, float, float, float]) -> str:
    row = _probability_row(probs)
    return " ".join(f"{p:.3f}" for p in row[:3]) + " - " + " ".join(f"{p:.3f}" for p in row[3:])


def _print_plays(
    pos: Position, dice: Dice, ranking: list[RankedPlay], engine: Engine, as_json: bool
) -> None:
    def shown(r: RankedPlay) -> float:  # the equity the ranking is by
        return r.cubeful if r.cubeful is not None else r.equity

    best = shown(ranking[0]) if ranking else 0.0
    rows = [
        {
            "rank": i,
            "play": pos.format_play(r.play),
            "position_id": r.play.result.position_id(),
            "ply": r.ply,
            "trials": r.trials,
            "equity": r.equity,
            "cubeful_equity": r.cubeful,
            "difference": shown(r) - best,
            "probabilities": _probability_dict(r.probabilities),
        }
        for i, r in enumerate(ranking, start=1)
    ]
    if as_json:
        out = {
            "position_id": pos.position_id(),
            "dice": list(dice),
            "level": engine.level.value,
            "plays": rows,
        }
        print(json.dumps(out, indent=2))
        return
    if not ranking:
        print(f"No legal play with {dice[0]}-{dice[1]}: the turn passes.")
        return
    width = max(28, max(len(str(row["play"])) for row in rows))
    for row, r in zip(rows, ranking, strict=True):
        diff = "" if row["rank"] == 1 else f" ({shown(r) - best:+.3f})"
        depth = f"R {r.trials}" if r.trials else f"{r.ply}-ply"  # rolled out: trials
        label = f"{'Cubeful' if r.cubeful is not None else 'Cubeless'} {depth}"
        print(f"{row['rank']:5}. {label:<16} {row['play']:<{width}} Eq.: {shown(r):+.3f}{diff}")
        print(f"       {_probability_line(r.probabilities)}")


def _cube_options(decision: CubeDecision) -> list[tuple[str, float]]:
    """The three options, the proper one first and the others by equity, as gnubg lists them."""
    options = [
        ("No double", decision.no_double),
        ("Double, take", decision.double_take),
        ("Double, pass", decision.double_pass),
    ]
    proper = 0 if not decision.double else 1 if decision.take else 2
    rest = sorted((o for i, o in enumerate(options) if i != proper), key=lambda o: -o[1])
    return [options[proper], *rest]


def _print_cube(
    pos: Position,
    ctx: CubeContext,
    analysis: tuple[tuple[float, float, float, float, float], float, CubeDecision],
    engine: Engine,
    as_json: bool,
) -> None:
    probs, equity, decision = analysis
    if as_json:
        out: dict[str, Any] = {
            "position_id": pos.position_id(),
            "level": engine.level.value,
            "plies": engine.settings.cube_plies,
            "match_length": ctx.match_length,
            "score": list(ctx.score),
            "cube": ctx.cube,
            "cube_owner": ctx.owner.value,
            "cubeless_equity": equity,
            "probabilities": _probability_dict(probs),
            "no_double": decision.no_double,
            "double_take": decision.double_take,
            "double_pass": decision.double_pass,
            "action": decision.action,
            "double": decision.double,
            "take": decision.take,
            "beaver": decision.beaver,
            "efficiency": decision.efficiency,
        }
        if decision.mwc_no_double is not None:
            out["mwc"] = {
                "no_double": decision.mwc_no_double,
                "double_take": decision.mwc_double_take,
                "double_pass": decision.mwc_double_pass,
            }
        print(json.dumps(out, indent=2))
        return
    print("Cube analysis")
    print(f"{engine.settings.cube_plies}-ply cubeless equity {equity:+.3f}")
    print(f"  {_probability_line(probs)}")
    print("Cubeful equities:")
    options = _cube_options(decision)
    best = options[0][1]
    for i, (name, value) in enumerate(options, start=1):
        diff = "" if i == 1 else f"  ({value - best:+.3f})"
        print(f"{i}. {name:<19}{value:+.3f}{diff}")
    print(f"Proper cube action: {decision.action}")


def cmd_hint(
    position_text: str,
    dice_text: str | None,
    as_json: bool = False,
    weights: str | None = None,
    level: str = Level.EXPERT.value,
) -> int:
    """Run ``nard hint``; returns the exit status (errors raise :class:`NardError`)."""
    if level not in {lv.value for lv in Level}:
        names = ", ".join(lv.value for lv in Level)
        raise HintError(f"unknown level {level!r}: choose one of {names}")
    written = read_written_position(position_text)
    pos, match = written.position, written.match
    if pos.is_game_over():
        raise HintError(f"the game of {position_text!r} is over: there is nothing to hint")
    dice: Dice | None = None
    if dice_text is not None:
        dice = parse_dice(dice_text)
    elif match is not None and match.dice is not None:
        dice = match.dice
    ctx = written_context(written)
    engine = Engine(level, weights=weights)
    if dice is not None:
        ranking = engine.rank_plays(pos, dice, ctx if match is not None else None)
        _print_plays(pos, dice, ranking, engine, as_json)
    else:
        _print_cube(pos, ctx, engine.cube_analysis(pos, ctx), engine, as_json)
    return 0
