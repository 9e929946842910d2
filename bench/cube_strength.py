"""Benchmark: nard's engine with the doubling cube against GNU Backgammon at 0-ply.

Two parts, both with duplicate dice (one ``SeededDice`` seed per pair, used
twice with the sides swapped, as in ``bench/strength.py``; the 95% confidence
interval comes from the pair means):

- money games (cube on; Jacoby and beavers off unless ``--jacoby`` /
  ``--beavers``): nard's points per game. Target of the issue: >= -0.15.
- matches to ``--length`` points (5, Crawford rule on): the share of matches
  nard wins. Target: >= 45%.

Every game is run by nard's own rules layer: a ``Session`` (money) or a
``Match`` hands out ``Game`` objects, whose ``decision``/``turn`` say who acts,
and which take the doubles, takes, passes, beavers and plays; the score,
gammons times the cube, Jacoby and the Crawford game are therefore exactly
nard's. nard plays with ``Engine(level).best_play`` and ``cube_action``.

gnubg plays in long-lived child processes (one per ``--jobs``), as gnubg's
own computer player does at 0-ply with cubeful evaluation: for each query
nard sends the Position ID and a gnubg Match ID (``nard.notation.MatchState``)
and gnubg reads them with ``set matchid`` and ``gnubg.positionfromid``, takes
``gnubg.cubeinfo()`` from that state, and answers with
``gnubg.findbestmove(board, cubeinfo, {'cubeful': 1, 'plies': 0, ...}, dice)``
for a play, and with ``gnubg.cfevaluate`` for the cube, mapped to an action the
way gnubg's ``ComputerTurn`` (play.c) does: it doubles only with access to the
cube (``GetDPEq``), in the market window (cubeless 0-ply winning chance at or
above the dead-cube double point, ``GetDoublePointDeadCube``), on "Double" or
"Redouble" verdicts, and on "Optional" ones (0-ply) unless its winning chance
is 0.1% or less; doubled, it takes on "..., take" and "(dead cube)" verdicts,
passes on "..., pass", and beavers on "..., beaver" where the game allows it
(otherwise it takes). gnubg's resignations are not modelled: every game is
played out. ``--check`` prints both sides' verdicts for a few clear positions.

``--luck`` also prints the luck-adjusted figures: each game's points (each
match's win) less the luck of every roll in it, measured in cubeful equity at
the cube and score of the moment by nard's shipped 0-ply networks
(:func:`nard.analysis.cubeful.cubeful_roll_luck`: the roll's best play's
cubeful equity less the average over the rolls, times the stake). A roll's
luck averages exactly zero whoever plays, so the adjusted figures estimate the
same points per game (share of matches) with the dice's share of the variance
taken out. ``--cube-weights`` gives nard's cube decisions a network of their
own (its plays keep ``--weights``'): a cube network beside the checker network.

Run from the repository root::

    .venv/bin/python bench/cube_strength.py --games 1000 --matches 200 --jobs 2
    .venv/bin/python bench/cube_strength.py --check

A script, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from strength import GNUBG, GnubgProcess, half_width, pair_seed, play_chunks

from nard.analysis.cubeful import cubeful_roll_luck
from nard.core.position import Play, Position
from nard.engine.cube import CubeContext, CubeOwner
from nard.engine.engine import Engine, Level
from nard.match.dice import SeededDice
from nard.match.game import Decision, Game, GameAction, GameResult
from nard.match.match import Match, MatchRules, MoneyRules, Session
from nard.notation.match_id import CubeOwner as IdCubeOwner
from nard.notation.match_id import MatchState

SIDES = ("nard", "gnubg")
CUBE_ACTIONS = ("doubles", "takes", "passes", "beavers")
MATCH_PAIR_OFFSET = 500_000
"""Match pairs take their dice seeds from pair indices past the money pairs'."""

Answer = Literal["take", "pass", "beaver"]
Tally = dict[str, dict[str, int]]
"""Cube actions by side: ``tally["nard"]["doubles"]`` and so on."""
Weights = tuple[str | None, str | None]
"""nard's networks: for its plays and for its cube (``None``: the shipped ones)."""


# -- gnubg as a cubeful opponent ------------------------------------------------
# gnubg runs this script in its embedded Python; one query per line on stdin,
# one answer per line (prefixed NARD:) on the original stdout, everything gnubg
# itself prints going to /dev/null. Queries (side on roll = Match ID's dice owner,
# board from its side as a Position ID):
#   M PID MID D1 D2   -> its 0-ply cubeful play ("8/5 6/5"), or "-" for none
#   D PID MID BEAVERS -> "1 VERDICT" if it doubles now, "0 REASON" if not
#   T PID MID BEAVERS -> "take|pass|beaver VERDICT": its answer to the side on
#                        roll doubling now (evaluated from the doubler's side,
#                        as gnubg's ComputerTurn does)
#   E PLIES PID MID   -> "ND DT DP": cfevaluate's three cubeful equities of the
#                        side on roll at PLIES (bench/cube_decisions.py's judge)
_GNUBG_SCRIPT = r"""
import os
import sys
import gnubg

out = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)

gnubg.command("set display off")
gnubg.command("set player 0 human")
gnubg.command("set player 1 human")
gnubg.command("new game")
EC = {"cubeful": 1, "plies": 0, "deterministic": 1, "noise": 0.0}
EC_CUBELESS = {"cubeful": 0, "plies": 0, "deterministic": 1, "noise": 0.0}
MET, POST0, POST1 = gnubg.met()[:3]
DOUBLE = ("Double, take", "Double, pass", "Double, beaver", "Redouble, take", "Redouble, pass")


def setup(pid, mid, beavers):
    gnubg.command("set matchid " + mid)
    echoed = gnubg.matchid()
    if echoed != mid:
        raise ValueError("gnubg read Match ID %s as %s" % (mid, echoed))
    ci = gnubg.cubeinfo()
    ci["beavers"] = int(beavers)
    return gnubg.positionfromid(pid), ci


def access(ci):
    # eval.c GetDPEq: may the side on move double now?
    me, n, cube, owner = ci["move"], ci["matchto"], ci["cube"], ci["cubeowner"]
    mine = owner == -1 or owner == me
    if not n:
        return mine
    score = ci["score"]
    crawford = ci["crawford"]
    post = not crawford and n - 1 in score
    return (not crawford and score[me] + cube < n
            and not (post and score[me] == n - 1) and mine)


def mwc0(a0, a1, crawf):
    # eval.c getMEMultiple: player 0's MWC, aN = points still needed minus 1
    if a0 < 0:
        return 1.0
    if a1 < 0:
        return 0.0
    if crawf:
        return 1.0 - POST1[a1] if a0 == 0 else POST0[a0]
    return MET[a0][a1]


def dead_double_point(p, ci):
    # eval.c GetDoublePointDeadCube
    win, wg, wbg, lg, lbg = p
    if not ci["matchto"]:
        rw = 1.0 + (wg + wbg) / win if win > 0 else 1.0
        rl = 1.0 + (lg + lbg) / (1.0 - win) if win < 1 else 1.0
        if ci["cubeowner"] == -1 and ci["jacoby"]:
            if ci["beavers"]:
                return (rl - 0.25) / (rw + rl - 0.5)
            return (rl - 0.5) / (rw + rl - 1.0)
        return rl / (rl + rw)
    me, n, cube, score = ci["move"], ci["matchto"], ci["cube"], ci["score"]
    away = [n - score[0] - 1, n - score[1] - 1]
    crawf = ci["crawford"] or 0 in away

    def mwc(points):  # side on move's MWC when it wins (> 0) or loses points
        a = list(away)
        a[me if points > 0 else 1 - me] -= abs(points)
        m = mwc0(a[0], a[1], crawf)
        return m if me == 0 else 1.0 - m

    g1, bg1 = ((wg - wbg) / win, wbg / win) if win > 0 else (0.0, 0.0)
    g2, bg2 = ((lg - lbg) / (1 - win), lbg / (1 - win)) if win < 1 else (0.0, 0.0)
    dtw = (1 - g1 - bg1) * mwc(2 * cube) + g1 * mwc(4 * cube) + bg1 * mwc(6 * cube)
    ndw = (1 - g1 - bg1) * mwc(cube) + g1 * mwc(2 * cube) + bg1 * mwc(3 * cube)
    dtl = (1 - g2 - bg2) * mwc(-2 * cube) + g2 * mwc(-4 * cube) + bg2 * mwc(-6 * cube)
    ndl = (1 - g2 - bg2) * mwc(-cube) + g2 * mwc(-2 * cube) + bg2 * mwc(-3 * cube)
    risk, gain = ndl - dtl, dtw - ndw
    return risk / (risk + gain) if risk + gain else float("inf")


def move(pid, mid, d1, d2):
    board, ci = setup(pid, mid, 0)
    best = gnubg.findbestmove(board, ci, EC, (int(d1), int(d2)))
    return gnubg.movetupletostring(best, board) if best else "-"


def double(pid, mid, beavers):
    board, ci = setup(pid, mid, beavers)
    if not access(ci):
        return "0 no access to the cube"
    probs = gnubg.evaluate(board, ci, EC_CUBELESS)[:5]
    if probs[0] < dead_double_point(probs, ci):
        return "0 below the market window (%.4f)" % probs[0]
    verdict = gnubg.cfevaluate(board, ci, EC)[5]
    doubles = verdict in DOUBLE or (verdict.startswith("Optional") and probs[0] > 0.001)
    return "%d %s" % (doubles, verdict)


def take(pid, mid, beavers):
    board, ci = setup(pid, mid, beavers)
    verdict = gnubg.cfevaluate(board, ci, EC)[5]
    answer = "take"
    if verdict.endswith("beaver"):
        answer = "beaver"
    elif verdict.endswith("pass"):
        answer = "pass"
    return answer + " " + verdict


def equities(plies, pid, mid):
    board, ci = setup(pid, mid, 0)
    ec = dict(EC, plies=int(plies))
    r = gnubg.cfevaluate(board, ci, ec)
    return "%r %r %r" % (r[1], r[2], r[3])


HANDLERS = {"M": move, "D": double, "T": take, "E": equities}
out.write("NARD:ready\n")
for line in sys.stdin:
    kind, *args = line.split()
    try:
        answer = HANDLERS[kind](*args)
    except Exception as exc:
        answer = "!%s: %s" % (type(exc).__name__, exc)
    out.write("NARD:" + answer + "\n")
"""


@dataclass(frozen=True)
class Turn:
    """The game as the side on roll sees it: what both players need to decide.

    ``context`` is the cube and score for nard's engine, ``state`` the same as
    a gnubg Match ID (players as the game numbers them).
    """

    position: Position
    context: CubeContext
    state: MatchState


def turn_of(game: Game, length: int, score: tuple[int, int]) -> Turn:
    """The view of ``game``'s side on roll at match ``score`` (``length`` 0: money)."""
    me = game.on_roll
    owner = game.cube_owner
    options = game.options
    context = CubeContext.for_player(
        me,
        game.cube_value,
        owner,
        length,
        score,
        crawford=options.crawford,
        jacoby=options.jacoby,
        beavers=options.beavers,
    )
    state = MatchState(
        cube_value=game.cube_value,
        cube_owner=IdCubeOwner.CENTRED if owner is None else IdCubeOwner(owner),
        dice_owner=me,
        crawford=options.crawford,
        dice=game.dice,
        match_length=length,
        score=score,
        jacoby=options.jacoby,
    )
    return Turn(game.position, context, state)


def turn_for(position: Position, context: CubeContext) -> Turn:
    """The :class:`Turn` of ``position``'s side on roll (player 0) in ``context``."""
    owner = {CubeOwner.CENTRED: IdCubeOwner.CENTRED, CubeOwner.ON_ROLL: IdCubeOwner.PLAYER_0}
    state = MatchState(
        cube_value=context.cube,
        cube_owner=owner.get(context.owner, IdCubeOwner.PLAYER_1),
        dice_owner=0,
        crawford=context.crawford,
        match_length=context.match_length,
        score=context.score,
        jacoby=context.jacoby,
    )
    return Turn(position, context, state)


class CubePlayer(Protocol):
    """A player with the cube: doubles, answers doubles and plays."""

    name: str

    def wants_double(self, turn: Turn) -> bool:
        """Whether the side on roll doubles now (asked only when the rules allow it)."""
        ...

    def answer_double(self, turn: Turn) -> Answer:
        """The answer to the side on roll of ``turn`` doubling now."""
        ...

    def choose_play(self, turn: Turn, dice: tuple[int, int]) -> Play:
        """The play of ``dice`` (asked only when there are two or more)."""
        ...


class NardPlayer:
    """nard's engine at a level: ``best_play`` and ``cube_action`` (the latter from
    ``cube_weights``' networks when given: a cube network beside the checker network)."""

    name = "nard"

    def __init__(
        self, level: str, seed: int, weights: str | None = None, cube_weights: str | None = None
    ) -> None:
        # No time limit: the result must not depend on the machine's speed.
        self.engine = Engine(level, weights=weights, seed=seed, time_limit=None)
        self.cube_engine = (
            self.engine
            if cube_weights is None
            else Engine(level, weights=cube_weights, seed=seed, time_limit=None)
        )

    def wants_double(self, turn: Turn) -> bool:
        return self.cube_engine.cube_action(turn.position, turn.context).double

    def answer_double(self, turn: Turn) -> Answer:
        decision = self.cube_engine.cube_action(turn.position, turn.context)
        if decision.beaver:
            return "beaver"
        return "take" if decision.take else "pass"

    def choose_play(self, turn: Turn, dice: tuple[int, int]) -> Play:
        play = self.engine.best_play(turn.position, dice, match=turn.context)
        if play is None:
            raise RuntimeError(f"nard found no play in {turn.position.position_id()} {dice}")
        return play


class GnubgCubePlayer:
    """GNU Backgammon at 0-ply, cubeful, in a child gnubg process (see the module doc)."""

    name = "gnubg"

    def __init__(self) -> None:
        if not Path(GNUBG).exists():
            sys.exit(
                f"cube_strength.py: GNU Backgammon not found at {GNUBG} (apt-get install gnubg)"
            )
        env = dict(os.environ, LC_ALL="C", LANG="C", LANGUAGE="C")  # verdicts in English
        # Every query carries its position and match ID, so a restarted gnubg answers alike.
        self._gnubg = GnubgProcess(_GNUBG_SCRIPT, "cube_strength.py", env)

    def close(self) -> None:
        """End the gnubg process (it also ends by itself when stdin closes)."""
        self._gnubg.close()

    def ask(self, *fields: object) -> str:
        """Send one query and return gnubg's answer; an error in gnubg raises here."""
        query = " ".join(str(f) for f in fields)
        answer = self._gnubg.ask(query)
        if answer.startswith("!"):
            raise RuntimeError(f"gnubg failed on {query!r}: {answer[1:]}")
        return answer

    def double_verdict(self, turn: Turn) -> tuple[bool, str]:
        """Whether gnubg doubles, and its verdict (or why it does not look)."""
        answer = self.ask(
            "D", turn.position.position_id(), turn.state.match_id(), int(turn.context.beavers)
        )
        flag, _, verdict = answer.partition(" ")
        return flag == "1", verdict

    def take_verdict(self, turn: Turn) -> tuple[Answer, str]:
        """gnubg's answer to a double by the side on roll, and its verdict."""
        answer = self.ask(
            "T", turn.position.position_id(), turn.state.match_id(), int(turn.context.beavers)
        )
        word, _, verdict = answer.partition(" ")
        if word not in ("take", "pass", "beaver"):
            raise RuntimeError(f"gnubg answered {answer!r} to a double")
        return ("take" if word == "take" else "pass" if word == "pass" else "beaver"), verdict

    def cube_equities(self, turn: Turn, plies: int) -> tuple[float, float, float]:
        """gnubg's cubeful no double, double/take and double/pass equities of the side
        on roll at ``plies`` (normalised to the cube, as gnubg prints them)."""
        answer = self.ask("E", plies, turn.position.position_id(), turn.state.match_id())
        nd, dt, dp = (float(v) for v in answer.split())
        return nd, dt, dp

    def wants_double(self, turn: Turn) -> bool:
        return self.double_verdict(turn)[0]

    def answer_double(self, turn: Turn) -> Answer:
        return self.take_verdict(turn)[0]

    def choose_play(self, turn: Turn, dice: tuple[int, int]) -> Play:
        text = self.ask("M", turn.position.position_id(), turn.state.match_id(), dice[0], dice[1])
        if text == "-":
            raise RuntimeError(f"gnubg found no play in {turn.position.position_id()} {dice}")
        return turn.position.parse_play(text, dice)


# -- playing games through nard's rules layer -------------------------------------
def new_tally() -> Tally:
    return {side: dict.fromkeys(CUBE_ACTIONS, 0) for side in SIDES}


def add_tally(into: Tally, other: Tally) -> None:
    for side in SIDES:
        for action in CUBE_ACTIONS:
            into[side][action] += other[side][action]


LuckMeter = Callable[[Turn, tuple[int, int], bool], float]
"""The luck of a roll to the side on roll of a :class:`Turn` (``True``: the opening
roll), in its points (money) or match-winning chances."""


def play_game(
    game: Game,
    players: tuple[CubePlayer, CubePlayer],
    length: int,
    score: tuple[int, int],
    tally: Tally,
    luck: tuple[LuckMeter, int, list[float]] | None = None,
) -> GameResult:
    """Play ``game`` to its end, each decision by the player whose turn it is.

    ``luck``: a meter, a seat and a total, to which the luck of each roll is added
    as that seat's (the other seat's rolls with their sign turned)."""
    opening = True
    while game.result is None:
        decision = game.decision
        player = players[game.turn]
        if decision is Decision.OPENING_ROLL:
            game.opening_roll()
        elif decision is Decision.ROLL:
            if GameAction.DOUBLE in game.legal_actions() and player.wants_double(
                turn_of(game, length, score)
            ):
                tally[player.name]["doubles"] += 1
                game.double()
            else:
                game.roll()
        elif decision is Decision.PLAY:
            dice = game.dice
            assert dice is not None
            if luck is not None:
                meter, seat, total = luck
                mine = meter(turn_of(game, length, score), (dice[0], dice[1]), opening)
                total[0] += mine if game.turn == seat else -mine
            opening = False
            plays = game.legal_plays()
            if len(plays) == 1:
                game.play(plays[0])
            else:
                game.play(player.choose_play(turn_of(game, length, score), dice))
        elif decision is Decision.TAKE_OR_PASS:
            answer = player.answer_double(turn_of(game, length, score))  # doubler's view
            if answer == "beaver" and GameAction.BEAVER in game.legal_actions():
                tally[player.name]["beavers"] += 1
                game.beaver()
            elif answer == "pass":
                tally[player.name]["passes"] += 1
                game.pass_double()
            else:
                tally[player.name]["takes"] += 1
                game.take()
        elif decision is Decision.RACCOON_OR_ROLL:
            game.roll()  # raccoons are not in use
        else:
            raise RuntimeError(f"unexpected decision {decision.value!r} in a cube benchmark")
    return game.result


@dataclass(frozen=True)
class MoneyGame:
    """One money game: nard's points (negative: lost) and how it ended."""

    points: int
    cube: int
    gammon: bool
    tally: Tally
    luck: float = 0.0  # nard's, in points (with --luck)


@dataclass(frozen=True)
class MatchResult:
    """One match: whether nard won it, its final score and games played."""

    won: bool
    score: tuple[int, int]  # (nard, gnubg)
    games: int
    tally: Tally
    luck: float = 0.0  # nard's, in match-winning chances (with --luck)


_worker_players: dict[tuple[str, int, Weights], tuple[NardPlayer, GnubgCubePlayer]] = {}
_worker_meter: list[LuckMeter] = []


def _players(level: str, seed: int, weights: Weights) -> tuple[NardPlayer, GnubgCubePlayer]:
    # One engine and one gnubg process per worker process (gnubg is slow to start).
    key = (level, seed, weights)
    if key not in _worker_players:
        _worker_players[key] = (NardPlayer(level, seed, *weights), GnubgCubePlayer())
    return _worker_players[key]


def _meter(luck: bool) -> LuckMeter | None:
    """The luck of a roll by the shipped networks' 0 ply, a fixed reference (one per
    worker process), or ``None`` without ``--luck``."""
    if not luck:
        return None
    if not _worker_meter:
        from nard.engine.engine import load_evaluator

        evaluator = load_evaluator()

        def meter(turn: Turn, dice: tuple[int, int], opening: bool) -> float:
            return cubeful_roll_luck(evaluator, turn.position, dice, turn.context, opening=opening)

        _worker_meter.append(meter)
    return _worker_meter[0]


def _seats(
    nard_seat: int, level: str, seed: int, weights: Weights
) -> tuple[CubePlayer, CubePlayer]:
    nard, gnubg = _players(level, seed, weights)
    return (nard, gnubg) if nard_seat == 0 else (gnubg, nard)


def play_money_pairs(
    level: str,
    seed: int,
    weights: Weights,
    rules: MoneyRules,
    pairs: Sequence[int],
    luck: bool = False,
) -> list[tuple[MoneyGame, MoneyGame]]:
    """For each pair: nard in seat 0, then in seat 1, with the same dice."""
    out = []
    meter = _meter(luck)
    for pair in pairs:
        games = []
        for nard_seat in (0, 1):
            session = Session(rules, dice=SeededDice(pair_seed(seed, pair)))
            tally = new_tally()
            total = [0.0]
            result = play_game(
                session.new_game(),
                _seats(nard_seat, level, seed, weights),
                0,
                (0, 0),
                tally,
                None if meter is None else (meter, nard_seat, total),
            )
            sign = 1 if result.winner == nard_seat else -1
            gammon = result.points > result.cube  # gammon or backgammon as counted
            games.append(MoneyGame(sign * result.points, result.cube, gammon, tally, total[0]))
        out.append((games[0], games[1]))
    return out


def play_match_pairs(
    level: str,
    seed: int,
    weights: Weights,
    length: int,
    pairs: Sequence[int],
    luck: bool = False,
) -> list[tuple[MatchResult, MatchResult]]:
    """For each pair: a match with nard in seat 0, then one in seat 1, same dice."""
    out = []
    meter = _meter(luck)
    for pair in pairs:
        matches = []
        for nard_seat in (0, 1):
            dice = SeededDice(pair_seed(seed, MATCH_PAIR_OFFSET + pair))
            match = Match(length, MatchRules(crawford=True), dice=dice)
            players = _seats(nard_seat, level, seed, weights)
            tally = new_tally()
            total = [0.0]
            counting = None if meter is None else (meter, nard_seat, total)
            while not match.is_over:
                play_game(match.new_game(), players, length, match.score, tally, counting)
            s = match.score
            matches.append(
                MatchResult(
                    won=match.winner == nard_seat,
                    score=(s[nard_seat], s[1 - nard_seat]),
                    games=len(match.games),
                    tally=tally,
                    luck=total[0],
                )
            )
        out.append((matches[0], matches[1]))
    return out


# -- running and summarising --------------------------------------------------------
@dataclass(frozen=True)
class MoneySummary:
    games: int
    jacoby: bool
    beavers: bool
    ppg: float
    ci95: float
    ci95_unpaired: float
    win_rate: float
    nard_gammons: float
    gnubg_gammons: float
    average_cube: float
    cube_actions: Tally
    seconds: float
    ppg_luck: float | None = None  # luck-adjusted (--luck)
    ci95_luck: float | None = None


@dataclass(frozen=True)
class MatchSummary:
    matches: int
    length: int
    win_rate: float
    ci95: float
    ci95_unpaired: float
    average_games: float
    average_score: tuple[float, float]  # (nard, gnubg)
    cube_actions: Tally
    seconds: float
    win_rate_luck: float | None = None  # luck-adjusted (--luck)
    ci95_luck: float | None = None


def summarise_money(
    results: list[tuple[MoneyGame, MoneyGame]],
    rules: MoneyRules,
    seconds: float,
    luck: bool = False,
) -> MoneySummary:
    games = [g for pair in results for g in pair]
    n = len(games)
    tally = new_tally()
    for g in games:
        add_tally(tally, g.tally)
    return MoneySummary(
        games=n,
        jacoby=rules.jacoby,
        beavers=rules.beavers,
        ppg=sum(g.points for g in games) / n,
        ci95=half_width([(a.points + b.points) / 2 for a, b in results]),
        ci95_unpaired=half_width([float(g.points) for g in games]),
        win_rate=sum(g.points > 0 for g in games) / n,
        nard_gammons=sum(g.gammon and g.points > 0 for g in games) / n,
        gnubg_gammons=sum(g.gammon and g.points < 0 for g in games) / n,
        average_cube=sum(g.cube for g in games) / n,
        cube_actions=tally,
        seconds=seconds,
        ppg_luck=sum(g.points - g.luck for g in games) / n if luck else None,
        ci95_luck=(
            half_width([(a.points - a.luck + b.points - b.luck) / 2 for a, b in results])
            if luck
            else None
        ),
    )


def summarise_matches(
    results: list[tuple[MatchResult, MatchResult]],
    length: int,
    seconds: float,
    luck: bool = False,
) -> MatchSummary:
    matches = [m for pair in results for m in pair]
    n = len(matches)
    tally = new_tally()
    for m in matches:
        add_tally(tally, m.tally)
    return MatchSummary(
        matches=n,
        length=length,
        win_rate=sum(m.won for m in matches) / n,
        ci95=half_width([(a.won + b.won) / 2 for a, b in results]),
        ci95_unpaired=half_width([float(m.won) for m in matches]),
        average_games=sum(m.games for m in matches) / n,
        average_score=(
            sum(m.score[0] for m in matches) / n,
            sum(m.score[1] for m in matches) / n,
        ),
        cube_actions=tally,
        seconds=seconds,
        win_rate_luck=sum(m.won - m.luck for m in matches) / n if luck else None,
        ci95_luck=(
            half_width([(a.won - a.luck + b.won - b.luck) / 2 for a, b in results])
            if luck
            else None
        ),
    )


def _run_pairs(
    pool: ProcessPoolExecutor | None,
    work: Callable[[Sequence[int]], list[Any]],
    pairs: list[int],
    jobs: int,
    progress: Callable[[int], None] | None,
) -> list[Any]:
    chunk = max(1, min(25, len(pairs) // (4 * jobs) or 1))
    chunks = [pairs[i : i + chunk] for i in range(0, len(pairs), chunk)]
    return play_chunks(pool, work, chunks, progress)


class _MoneyWork:
    """A picklable ``play_money_pairs`` with its settings bound."""

    def __init__(
        self, level: str, seed: int, weights: Weights, rules: MoneyRules, luck: bool
    ) -> None:
        self.args = (level, seed, weights, rules)
        self.luck = luck

    def __call__(self, pairs: Sequence[int]) -> list[tuple[MoneyGame, MoneyGame]]:
        return play_money_pairs(*self.args, pairs, luck=self.luck)


class _MatchWork:
    """A picklable ``play_match_pairs`` with its settings bound."""

    def __init__(self, level: str, seed: int, weights: Weights, length: int, luck: bool) -> None:
        self.args = (level, seed, weights, length)
        self.luck = luck

    def __call__(self, pairs: Sequence[int]) -> list[tuple[MatchResult, MatchResult]]:
        return play_match_pairs(*self.args, pairs, luck=self.luck)


def run(
    args: argparse.Namespace, progress: Callable[[str, int, int], None] | None = None
) -> tuple[MoneySummary | None, MatchSummary | None]:
    """Play the money games, then the matches, as ``args`` asks."""
    rules = MoneyRules(jacoby=args.jacoby, beavers=args.beavers)
    weights: Weights = (args.weights, args.cube_weights)
    pool = ProcessPoolExecutor(max_workers=args.jobs) if args.jobs > 1 else None
    money: MoneySummary | None = None
    matches: MatchSummary | None = None
    try:
        if args.games:
            start = time.perf_counter()
            done = _run_pairs(
                pool,
                _MoneyWork(args.level, args.seed, weights, rules, args.luck),
                list(range(args.games // 2)),
                args.jobs,
                (lambda k: progress("games", k, args.games)) if progress else None,
            )
            money = summarise_money(done, rules, time.perf_counter() - start, args.luck)
        if args.matches:
            start = time.perf_counter()
            played = _run_pairs(
                pool,
                _MatchWork(args.level, args.seed, weights, args.length, args.luck),
                list(range(args.matches // 2)),
                args.jobs,
                (lambda k: progress("matches", k, args.matches)) if progress else None,
            )
            matches = summarise_matches(played, args.length, time.perf_counter() - start, args.luck)
    finally:
        if pool is not None:
            pool.shutdown()
    return money, matches


def _cube_line(tally: Tally) -> list[str]:
    lines = []
    for side, other in (("nard", "gnubg"), ("gnubg", "nard")):
        t, o = tally[side], tally[other]
        beavers = f", beavered {o['beavers']}" if o["beavers"] else ""
        lines.append(
            f"  {side} doubled {t['doubles']} times: {other} took {o['takes']}, "
            f"passed {o['passes']}{beavers}"
        )
    return lines


def report(args: argparse.Namespace, money: MoneySummary | None, match: MatchSummary | None) -> str:
    lines = [
        f"nard {args.level} vs gnubg 0-ply (cubeful, its own cube decisions), "
        f"duplicate dice, seed {args.seed}"
    ]
    if money:
        m = money
        rules = f"Jacoby {'on' if m.jacoby else 'off'}, beavers {'on' if m.beavers else 'off'}"
        lines += [
            f"money, cube on ({rules}): {m.games} games",
            f"  nard: {m.ppg:+.3f} points per game, 95% CI ±{m.ci95:.3f} "
            f"(±{m.ci95_unpaired:.3f} without pairing); target >= -0.15",
            *(
                [f"  luck-adjusted: {m.ppg_luck:+.3f} points per game, 95% CI ±{m.ci95_luck:.3f}"]
                if m.ppg_luck is not None and m.ci95_luck is not None
                else []
            ),
            f"  nard wins {100 * m.win_rate:.1f}% of games; gammons or backgammons: "
            f"nard {100 * m.nard_gammons:.1f}%, gnubg {100 * m.gnubg_gammons:.1f}%; "
            f"final cube {m.average_cube:.2f} on average",
            *_cube_line(m.cube_actions),
            f"  {m.seconds:.1f} s ({m.games / m.seconds:.2f} games/s)",
        ]
    if match:
        t = match
        lines += [
            f"{t.length}-point matches, Crawford rule: {t.matches} matches",
            f"  nard wins {100 * t.win_rate:.1f}%, 95% CI ±{100 * t.ci95:.1f} "
            f"(±{100 * t.ci95_unpaired:.1f} without pairing); target >= 45%",
            *(
                [
                    f"  luck-adjusted: nard wins {100 * t.win_rate_luck:.1f}%, "
                    f"95% CI ±{100 * t.ci95_luck:.1f}"
                ]
                if t.win_rate_luck is not None and t.ci95_luck is not None
                else []
            ),
            f"  {t.average_games:.1f} games per match; final score "
            f"{t.average_score[0]:.2f}-{t.average_score[1]:.2f} (nard-gnubg) on average",
            *_cube_line(t.cube_actions),
            f"  {t.seconds:.1f} s ({t.matches / t.seconds:.3f} matches/s)",
        ]
    total = (money.seconds if money else 0.0) + (match.seconds if match else 0.0)
    lines.append(f"elapsed {total:.1f} s, {args.jobs} process(es)")
    return "\n".join(lines)


# -- the sanity check ---------------------------------------------------------------
def check(level: str, weights: str | None, cube_weights: str | None = None) -> str:
    """Both sides' cube verdicts (and gnubg's play) on a few clear positions."""
    nard = NardPlayer(level, 0, weights, cube_weights)
    gnubg = GnubgCubePlayer()
    opening = Position()
    race_won = Position.from_points({1: 2}, {1: 1})  # bears off next roll; no gammon
    gammon = Position.from_points({6: 1, 2: 1}, {13: 15})  # a gammon next roll
    trailer = CubeContext(match_length=5, score=(0, 4))
    cases: list[tuple[str, Position, CubeContext]] = [
        ("money, opening position", opening, CubeContext()),
        ("money, last roll wins, no gammon", race_won, CubeContext()),
        ("money, a gammon next roll", gammon, CubeContext()),
        ("money, Jacoby, a gammon next roll", gammon, CubeContext(jacoby=True)),
        ("5 pt 0-0, opening position", opening, CubeContext(match_length=5)),
        ("5 pt 0-4 post-Crawford, trailer", opening, trailer),
        ("5 pt 4-0 post-Crawford, leader", opening, CubeContext(match_length=5, score=(4, 0))),
        ("5 pt 0-4 Crawford game", opening, replace(trailer, crawford=True)),
        ("5 pt 0-0, last roll wins", race_won, CubeContext(match_length=5)),
    ]
    lines = [f"{'case':<36} {'gnubg doubles?':<40} {'gnubg, doubled':<42} nard"]
    for label, position, ctx in cases:
        turn = turn_for(position, ctx)
        doubles, verdict = gnubg.double_verdict(turn)
        answer, take_verdict = gnubg.take_verdict(turn)
        mine = nard.cube_engine.cube_action(position, ctx)
        lines.append(
            f"{label:<36} {('yes: ' if doubles else 'no: ') + verdict:<40} "
            f"{answer + ' (' + take_verdict + ')':<42} {mine.action}"
        )
    turn = Turn(opening, CubeContext(), MatchState(dice=(3, 1)))
    play = gnubg.choose_play(turn, (3, 1))
    lines.append(f"gnubg plays 3-1 in the opening position: {opening.format_play(play)}")
    gnubg.close()
    return "\n".join(lines)


def _json_safe(value: Any) -> Any:
    """``value`` with NaN (a CI from a single pair) as null: strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="money games (even; 0: none)")
    parser.add_argument("--matches", type=int, default=200, help="matches (even; 0: none)")
    parser.add_argument("--length", type=int, default=5, help="match length in points")
    parser.add_argument(
        "--level", choices=[lv.value for lv in Level], default="expert", help="nard's level"
    )
    parser.add_argument("--weights", default=None, help="nard network file (default: shipped)")
    parser.add_argument(
        "--cube-weights",
        default=None,
        help="a network file for nard's cube decisions alone (default: --weights')",
    )
    parser.add_argument(
        "--luck",
        action="store_true",
        help="also print the luck-adjusted figures (each roll's cubeful luck taken out)",
    )
    parser.add_argument("--jacoby", action="store_true", help="money games with the Jacoby rule")
    parser.add_argument("--beavers", action="store_true", help="money games with beavers")
    parser.add_argument("--seed", type=int, default=1, help="seed of the dice")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing at once")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--check", action="store_true", help="print both sides' verdicts on clear positions"
    )
    args = parser.parse_args(argv)
    if args.check:
        print(check(args.level, args.weights, args.cube_weights))
        return 0
    if args.games < 0 or args.games % 2 or args.matches < 0 or args.matches % 2:
        parser.error("--games and --matches must be even numbers (0 skips that part)")
    if not args.games and not args.matches:
        parser.error("nothing to play: give --games or --matches")
    if args.jobs < 1 or not 1 <= args.length <= 25:
        parser.error("--jobs must be at least 1 and --length 1-25")

    def progress(what: str, done: int, total: int) -> None:
        print(f"\r{done}/{total} {what}   ", end="", file=sys.stderr, flush=True)

    money, match = run(args, None if args.quiet else progress)
    if not args.quiet:
        print(file=sys.stderr)
    if args.json:
        doc = {
            "level": args.level,
            "seed": args.seed,
            "jobs": args.jobs,
            "money": asdict(money) if money else None,
            "matches": asdict(match) if match else None,
        }
        print(json.dumps(_json_safe(doc), indent=2))
        return 0
    print(report(args, money, match))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
