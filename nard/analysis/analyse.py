"""Analysing a whole match record: every decision of both players, their luck, their figures.

:func:`analyse` replays a :class:`~nard.notation.records.MatchRecord` through the
rules (:func:`nard.match.replay.walk`), turns every turn into a
:class:`~nard.analysis.analyst.TurnTask`, has an
:class:`~nard.analysis.analyst.Analyst` judge them (in worker processes with
``jobs`` > 1) and gathers the verdicts into a :class:`MatchAnalysis`: the list
of :class:`Decision` (checker plays, cube decisions, takes), the luck of every
:class:`Roll`, and each player's :class:`PlayerStats` (docs/analysis.md gives
every formula and its source).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nard.analysis.analyst import (
    MAX_PLIES,
    Analyst,
    Candidate,
    CubeVerdict,
    TurnTask,
    TurnVerdict,
    spread_is_obvious,
)
from nard.analysis.stats import (
    PlayerStats,
    Skill,
    equity_to_mwc,
    met_equity,
    mwc_of,
    player_stats,
    skill_of,
)
from nard.computer import cube_context
from nard.core.position import Position
from nard.engine.cube import CubeContext, CubeOwner
from nard.match.game import Decision as GameDecision
from nard.match.game import Game, GameAction
from nard.match.replay import walk
from nard.notation.match_id import CubeOwner as IdCubeOwner
from nard.notation.match_id import MatchState
from nard.notation.records import Action, ActionKind, MatchRecord

__all__ = [
    "DEFAULT_PLIES",
    "Decision",
    "GameSummary",
    "MatchAnalysis",
    "Roll",
    "analyse",
]

DEFAULT_PLIES = 2
"""``nard analyse``'s default depth: the deepest that analyses a 7-point match in
about a minute on two cores (docs/analysis.md, "Speed")."""

Progress = Callable[[int, int], None]
"""Called with (turns judged, turns in all) as the analysis goes."""


@dataclass(frozen=True)
class Decision:
    """One decision of one player, judged.

    ``kind`` is ``checker`` (a play of a roll), ``cube`` (double or not, before a
    roll) or ``take`` (the answer to a double: take, pass or beaver). ``error`` is
    the normalised equity lost (>= 0; gnubg's EMG in match play, equity per cube
    in money play), ``error_mwc`` the match winning chances lost (match play).
    ``counted``: an unforced play, or a close or actual cube decision (what the
    error rates divide by); ``obvious``: left out of the PR's count.
    """

    game: int
    turn: int
    seat: int
    player: str
    kind: str
    position_id: str
    match_id: str
    dice: tuple[int, int] | None
    played: str
    best: str
    error: float
    error_mwc: float | None
    skill: Skill
    counted: bool
    obvious: bool
    candidates: tuple[Candidate, ...] = ()
    equities: dict[str, float] = field(default_factory=dict)
    """Cube decisions: the normalised equities of no double, double/take, double/pass
    (the doubler's view); checker plays: the play made's equity (``played``)."""
    ply: int = 0

    def to_json(self) -> dict[str, Any]:
        """The decision in ``nard analyse --json``'s shape (docs/analysis.md)."""
        return {
            "game": self.game,
            "turn": self.turn,
            "player": self.player,
            "seat": self.seat,
            "kind": self.kind,
            "position_id": self.position_id,
            "match_id": self.match_id,
            "dice": list(self.dice) if self.dice else None,
            "played": self.played,
            "best": self.best,
            "error": round(self.error, 6),
            "error_mwc": None if self.error_mwc is None else round(self.error_mwc, 6),
            "skill": self.skill.value,
            "counted": self.counted,
            "obvious": self.obvious,
            "ply": self.ply,
            "equities": {k: round(v, 6) for k, v in self.equities.items()},
            "candidates": [
                {"play": c.play, "equity": round(c.equity, 6), "ply": c.ply}
                for c in self.candidates
            ],
        }


@dataclass(frozen=True)
class Roll:
    """The luck of one roll (normalised equity, the roller's view) and, in match play,
    in match winning chances."""

    game: int
    turn: int
    seat: int
    dice: tuple[int, int]
    luck: float
    luck_mwc: float | None
    cube: int

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "turn": self.turn,
            "seat": self.seat,
            "dice": list(self.dice),
            "luck": round(self.luck, 6),
            "luck_mwc": None if self.luck_mwc is None else round(self.luck_mwc, 6),
        }


@dataclass(frozen=True)
class GameSummary:
    """One game: the score before it, its result, and player 0's equity after every
    turn (match winning chances in match play, normalised equity x cube in money
    play) for the equity graph."""

    number: int
    score: tuple[int, int]
    winner: int
    points: int
    graph: tuple[tuple[int, float], ...]
    """(turn, player 0's equity after it)."""
    result: tuple[float, float]
    """What the game was worth to each player: match winning chances gained in match
    play (gnubg's "actual result"), points in money play."""

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "score": list(self.score),
            "winner": self.winner,
            "points": self.points,
            "result": [round(r, 6) for r in self.result],
            "graph": [[t, round(v, 6)] for t, v in self.graph],
        }


@dataclass(frozen=True)
class MatchAnalysis:
    """A record analysed: ``players`` (two :class:`PlayerStats`, seats 0 and 1), every
    :class:`Decision` and :class:`Roll`, and each game's :class:`GameSummary`."""

    match_length: int
    plies: int
    players: tuple[PlayerStats, PlayerStats]
    decisions: tuple[Decision, ...]
    rolls: tuple[Roll, ...]
    games: tuple[GameSummary, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``nard analyse --json`` (the issue's shape, with more keys)."""
        return {
            "match_length": self.match_length,
            "plies": self.plies,
            "players": [p.to_json() for p in self.players],
            "decisions": [d.to_json() for d in self.decisions],
            "rolls": [r.to_json() for r in self.rolls],
            "games": [g.to_json() for g in self.games],
            "notes": list(self.notes),
        }


# -- walking the record -------------------------------------------------------


@dataclass
class _Turn:
    """A turn found by the walk, waiting for its verdict."""

    game: int
    turn: int
    seat: int
    task: TurnTask
    cube_ids: tuple[str, str] | None
    """(Position ID, Match ID) of the cube decision, before the roll."""
    roll_ids: tuple[str, str] | None
    """(Position ID, Match ID) of the checker play, the roll made."""
    doubled: bool = False
    response: tuple[int, str, str] | None = None
    """(responder, its action: take / pass / beaver, Match ID with the double offered)."""


def _ids(
    game: Game,
    position: Position,
    seat: int,
    match_length: int,
    score: tuple[int, int],
    *,
    dice: tuple[int, int] | None = None,
    double_offered: bool = False,
) -> tuple[str, str]:
    owner = game.cube_owner
    state = MatchState(
        cube_value=game.cube_value,
        cube_owner=IdCubeOwner.CENTRED if owner is None else IdCubeOwner(owner),
        dice_owner=seat,
        crawford=game.options.crawford,
        turn=1 - seat if double_offered else seat,
        double_offered=double_offered,
        dice=None if dice is None else (max(dice), min(dice)),
        match_length=match_length,
        score=score if match_length else (0, 0),
        jacoby=game.options.jacoby and not match_length,
    )
    return position.position_id(), state.match_id()


def _turns(
    record: MatchRecord, crawford: bool | None = None
) -> tuple[list[_Turn], list[str], dict[int, tuple[int, int]]]:
    """Every turn of ``record`` as a task; the replay's notes; each game's result."""
    turns: list[_Turn] = []
    counters: dict[int, int] = {}
    last_double: dict[int, _Turn] = {}
    length = record.match_length

    def observe(number: int, game: Game, action: Action) -> None:
        score = record.games[number - 1].score
        kind = action.kind
        decision = game.decision
        if kind is ActionKind.MOVE:
            dice = action.dice
            assert dice is not None  # replay refuses a move without dice
            if decision is GameDecision.OPENING_ROLL:
                seat, position, opening = action.player, Position(), True
            else:
                seat, position, opening = game.on_roll, game.position, False
            ctx = cube_context(game, seat, length, score)
            text = action.play or ""
            played = position.parse_play(text, dice).result if text else None
            if decision is GameDecision.PLAY:  # the roll was recorded before: the play only
                turn = counters[number]
                task = TurnTask(position, ctx, False, dice, played, luck=False)
            else:
                counters[number] = turn = counters.get(number, 0) + 1
                cube = (
                    decision is GameDecision.ROLL
                    and GameAction.DOUBLE in game.legal_actions()
                    and ctx.can_double()
                )
                task = TurnTask(position, ctx, cube, dice, played, opening=opening)
            turns.append(
                _Turn(
                    number,
                    turn,
                    seat,
                    task,
                    _ids(game, position, seat, length, score) if task.cube else None,
                    _ids(game, position, seat, length, score, dice=dice),
                )
            )
        elif kind is ActionKind.DOUBLE and decision is GameDecision.ROLL:
            seat, position = game.on_roll, game.position
            ctx = cube_context(game, seat, length, score)
            counters[number] = turn = counters.get(number, 0) + 1
            offer = _Turn(
                number,
                turn,
                seat,
                TurnTask(position, ctx, True, None, None),
                _ids(game, position, seat, length, score),
                None,
                doubled=True,
            )
            turns.append(offer)
            last_double[number] = offer
        elif kind in (ActionKind.TAKE, ActionKind.DROP, ActionKind.BEAVER) and (
            decision is GameDecision.TAKE_OR_PASS
        ):
            entry = last_double.pop(number, None)
            if entry is not None:
                answer = {ActionKind.TAKE: "take", ActionKind.DROP: "pass"}.get(kind, "beaver")
                doubler = entry.seat
                _, match_id = _ids(
                    game, entry.task.position, doubler, length, score, double_offered=True
                )
                entry.response = (action.player, answer, match_id)

    replayed = walk(record, observe, crawford=crawford)
    results = {g.number: (g.winner, g.points) for g in replayed.games}
    return turns, list(replayed.notes), results


# -- running the analysts ------------------------------------------------------

_WORKER: Analyst | None = None


def _start_worker(plies: int, weights: str | None) -> None:
    global _WORKER
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _WORKER = Analyst(plies, weights=weights)


def _judge(task: TurnTask) -> TurnVerdict:
    assert _WORKER is not None
    return _WORKER.turn(task)


def _judge_all(
    tasks: Sequence[TurnTask],
    plies: int,
    jobs: int,
    weights: str | None,
    analyst: Analyst | None,
    progress: Progress | None,
) -> list[TurnVerdict]:
    total = len(tasks)
    if jobs <= 1 or total < 2:
        judge = analyst or Analyst(plies, weights=weights)
        out = []
        for done, task in enumerate(tasks, start=1):
            out.append(judge.turn(task))
            if progress:
                progress(done, total)
        return out
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_start_worker, initargs=(plies, weights)
    ) as pool:
        futures = {pool.submit(_judge, task): i for i, task in enumerate(tasks)}
        results: list[TurnVerdict | None] = [None] * total
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            results[futures[future]] = future.result()
            if progress:
                progress(done, total)
    return [r for r in results if r is not None]


# -- putting it together --------------------------------------------------------


def analyse(
    record: MatchRecord,
    plies: int = DEFAULT_PLIES,
    *,
    jobs: int = 1,
    weights: str | Path | None = None,
    analyst: Analyst | None = None,
    progress: Progress | None = None,
    crawford: bool | None = None,
) -> MatchAnalysis:
    """Analyse every decision and roll of ``record`` at ``plies`` (0, 1 or 2).

    ``jobs`` worker processes judge the turns (1: in this process, with ``analyst``
    when given, e.g. one built on a test evaluator); ``crawford`` overrides the
    record's Crawford rule as :func:`~nard.match.replay.replay`'s does. Raises
    :class:`~nard.match.replay.RecordError` for a record the rules reject.
    """
    if plies not in range(MAX_PLIES + 1):
        raise ValueError(f"plies must be 0, 1 or 2, not {plies!r}")
    if analyst is not None and analyst.plies != plies:
        raise ValueError(f"the analyst judges at {analyst.plies} plies, not {plies}")
    turns, notes, results = _turns(record, crawford)
    verdicts = _judge_all(
        [t.task for t in turns],
        plies,
        jobs,
        None if weights is None else str(weights),
        analyst,
        progress,
    )
    decisions: list[Decision] = []
    rolls: list[Roll] = []
    graphs: dict[int, list[tuple[int, float]]] = {}
    names = record.players
    for entry, verdict in zip(turns, verdicts, strict=True):
        ctx = entry.task.context
        if verdict.cube is not None and entry.cube_ids is not None:
            decisions.extend(_cube_decisions(entry, verdict.cube, names))
        if verdict.luck is not None and entry.task.dice is not None:
            rolls.append(
                Roll(
                    entry.game,
                    entry.turn,
                    entry.seat,
                    entry.task.dice,
                    verdict.luck,
                    _mwc_change(verdict.luck, ctx),
                    ctx.cube,
                )
            )
        checker = verdict.checker
        if checker is not None and entry.roll_ids is not None:
            error = checker.error
            counted = not checker.forced
            decisions.append(
                Decision(
                    game=entry.game,
                    turn=entry.turn,
                    seat=entry.seat,
                    player=names[entry.seat],
                    kind="checker",
                    position_id=entry.roll_ids[0],
                    match_id=entry.roll_ids[1],
                    dice=entry.task.dice,
                    played=checker.played.play,
                    best=checker.best.play,
                    error=error,
                    error_mwc=_mwc_change(error, ctx),
                    skill=skill_of(error),
                    counted=counted,
                    obvious=not counted or spread_is_obvious(checker),
                    candidates=checker.candidates,
                    equities={"played": checker.played.equity, "best": checker.best.equity},
                    ply=checker.best.ply,
                )
            )
            graphs.setdefault(entry.game, []).append(
                (entry.turn, _for_player0(checker.played.equity, ctx, entry.seat))
            )
    games = _game_summaries(record, results, graphs)
    stats = player_stats(record, decisions, rolls, [g.result for g in games])
    return MatchAnalysis(
        match_length=record.match_length,
        plies=plies,
        players=stats,
        decisions=tuple(decisions),
        rolls=tuple(rolls),
        games=games,
        notes=tuple(notes),
    )


def _mwc_change(equity: float, ctx: CubeContext) -> float | None:
    """gnubg's ``eq2mwc(e) - eq2mwc(0)``: a normalised equity change in match winning
    chances (None in money play)."""
    if ctx.is_money:
        return None
    win, lose = mwc_of(ctx)
    return equity * (win - lose) / 2.0


def _for_player0(equity: float, ctx: CubeContext, seat: int) -> float:
    """The mover's normalised ``equity`` as player 0's match winning chances (match)
    or equity in points (money)."""
    if ctx.is_money:
        mine = equity * ctx.cube
        return mine if seat == 0 else -mine
    mine = equity_to_mwc(equity, ctx)
    return mine if seat == 0 else 1.0 - mine


def _cube_decisions(entry: _Turn, verdict: CubeVerdict, names: tuple[str, str]) -> list[Decision]:
    d = verdict.decision
    ctx = entry.task.context
    assert entry.cube_ids is not None
    position_id, match_id = entry.cube_ids
    nd, dt, dp = d.no_double, d.double_take, d.double_pass
    beavers = ctx.is_money and ctx.beavers
    answer = min(dt, dp, 2.0 * dt) if beavers else min(dt, dp)
    optimal = max(nd, answer)
    equities = {"no_double": nd, "double_take": dt, "double_pass": dp}
    verb = "double" if ctx.owner is CubeOwner.CENTRED else "redouble"
    right = verb.capitalize() if answer >= nd else f"No {verb}"
    played = verb.capitalize() if entry.doubled else f"No {verb}"
    error = optimal - (answer if entry.doubled else nd)
    close = optimal - min(dt, 1.0) < 0.16  # gnubg's isCloseCubedecision
    out = [
        Decision(
            game=entry.game,
            turn=entry.turn,
            seat=entry.seat,
            player=names[entry.seat],
            kind="cube",
            position_id=position_id,
            match_id=match_id,
            dice=None,
            played=played,
            best=right,
            error=max(0.0, error),
            error_mwc=_mwc_change(max(0.0, error), ctx),
            skill=skill_of(error),
            counted=entry.doubled or close or error > 0.0,
            obvious=not (entry.doubled or close or error > 0.0),
            equities=equities,
            ply=verdict.ply,
        )
    ]
    if entry.doubled and entry.response is not None:
        responder, answer_text, offered_id = entry.response
        options = {"take": dt, "pass": dp}
        if beavers:
            options["beaver"] = 2.0 * dt
        best_answer = min(options, key=lambda k: options[k])
        chosen = options.get(answer_text, dt)
        lost = max(0.0, chosen - options[best_answer])
        taker = ctx.swapped()
        out.append(
            Decision(
                game=entry.game,
                turn=entry.turn,
                seat=responder,
                player=names[responder],
                kind="take",
                position_id=position_id,
                match_id=offered_id,
                dice=None,
                played=answer_text.capitalize(),
                best=best_answer.capitalize(),
                error=lost,
                error_mwc=_mwc_change(lost, taker),
                skill=skill_of(lost),
                counted=True,
                obvious=False,
                equities=equities,
                ply=verdict.ply,
            )
        )
    return out


def _game_summaries(
    record: MatchRecord,
    results: dict[int, tuple[int, int]],
    graphs: dict[int, list[tuple[int, float]]],
) -> tuple[GameSummary, ...]:
    out = []
    length = record.match_length
    for number, game in enumerate(record.games, start=1):
        winner, points = results[number]
        won = (points, 0) if winner == 0 else (0, points)
        if length:
            # gnubg's getME: a result of the Crawford game or a later one reads the
            # post-Crawford table; the game before it, the Crawford game's entries.
            post_before = not game.crawford and length - 1 in game.score
            after = (min(length, game.score[0] + won[0]), min(length, game.score[1] + won[1]))
            gained = met_equity(length, after, game.crawford or post_before) - met_equity(
                length, game.score, post_before
            )
            result = (gained, -gained)
        else:
            result = (float(won[0] - won[1]), float(won[1] - won[0]))
        out.append(
            GameSummary(number, game.score, winner, points, tuple(graphs.get(number, [])), result)
        )
    return tuple(out)
