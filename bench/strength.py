"""Benchmark: playing strength of one player against another, cubeless money games.

Each pair of games uses one dice sequence twice (duplicate dice): ``SeededDice``
seeded per pair, A in seat 0 and B in seat 1, then the players swapped. The
luck of the dice then largely cancels within a pair, so the 95% confidence
interval is computed from the pair means (the unpaired one is printed too, to
show what the pairing saves). Games are played by a tight loop on positions
(:func:`nard.engine.player.play_game`), without the ``Game`` state machine.

Run from the repository root::

    .venv/bin/python bench/strength.py --a pubeval --b random --games 2000
    .venv/bin/python bench/strength.py --a heuristic --b pubeval --games 2000 --jobs 2

Players: ``heuristic``, ``pubeval``, ``random`` (seeded per pair from ``--seed``),
and ``gnubg`` (GNU Backgammon at 0-ply, cubeless, in separate gnubg processes;
needs ``/usr/games/gnubg``; each of its moves costs about 10 ms of wall time,
so use ``--jobs``), ``gnubg-2ply`` (gnubg's world class: 2-ply, its move filter
and pruning nets), ``expert``, ``world-class`` and ``roller`` (nard's engine at
0-ply, 2-ply and 2-ply with its best candidates rolled out, with the shipped
networks; ``expert@PATH`` and so on with the networks at PATH). nard's searches
run without the engine's one-second time limit (the roller rolls out its full
plan), so that a loaded machine cannot cut a 2-ply search short (under two
busy cores about 1% of world class's decisions took over a second) and the
figures do not depend on the machine's speed. A script, not a test: it prints
figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

from nard.core.position import Play, Position
from nard.engine.heuristic import HeuristicPlayer
from nard.engine.player import Player, RandomPlayer, play_game
from nard.engine.pubeval import PubevalPlayer
from nard.match.dice import SeededDice

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's tests
from tests.gnubg_oracle import prepare_gnubg_home

PLAYERS = (
    "heuristic",
    "pubeval",
    "random",
    "gnubg",
    "gnubg-2ply",
    "expert",
    "world-class",
    "roller",
)
ENGINE_LEVELS = ("expert", "world-class", "roller")
Z_95 = 1.959963984540054
GNUBG = os.environ.get("NARD_GNUBG", "/usr/games/gnubg")
T = TypeVar("T")


# -- gnubg as an opponent -------------------------------------------------------
# gnubg runs this script in its embedded Python and answers one query per line on
# stdin ("POSITION_ID D1 D2", side on roll encoded as nard/gnubg do) with its best
# play at PLIES (its move filter and pruning nets as its world class has them), or
# "-" when nothing can be played.
_GNUBG_SCRIPT = r"""
import sys
import gnubg
gnubg.command('set display off')
gnubg.command('set player 0 human')
gnubg.command('set player 1 human')
gnubg.command('set evaluation chequerplay evaluation plies PLIES')
gnubg.command('set evaluation chequerplay evaluation prune on')
gnubg.command('set evaluation chequerplay evaluation cubeful off')
gnubg.command('new game')
print('NARD:ready', flush=True)
for line in sys.stdin:
    pid, d1, d2 = line.split()
    gnubg.command('set board ' + pid)
    gnubg.command('set dice %s %s' % (d1, d2))
    hint = gnubg.hint(1)
    moves = hint['hint'] if hint else []
    print('NARD:' + (moves[0]['move'] if moves else '-'), flush=True)
"""


class GnubgProcess:
    """A gnubg process running the Python script ``text``, one query per line.

    The script reads queries from stdin and prints each answer on a line of its
    own prefixed with ``NARD:`` (anything else it prints is skipped); a
    temporary folder holds the script and is gnubg's working directory. Each
    query must carry all the state its answer depends on (positions and match
    IDs by value), so that a process that dies can be replaced: :meth:`ask`
    starts a fresh one and asks again, once, and reports the restart on stderr
    with ``who`` (a 2-ply duel on 2026-12-04 once stopped on a gnubg failure
    that the same dice did not repeat).
    """

    def __init__(self, text: str, who: str, env: dict[str, str] | None = None) -> None:
        self._text, self._who, self._env = text, who, env
        self._start()
        atexit.register(self.close)

    def _start(self) -> None:
        prepare_gnubg_home(self._env)
        self._dir = tempfile.TemporaryDirectory()
        script = Path(self._dir.name) / "script.py"
        script.write_text(self._text)
        self._proc = subprocess.Popen(
            [GNUBG, "-t", "-q", "-p", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=self._dir.name,
            env=self._env,
        )
        self._answer()  # the script's "ready"

    def _answer(self) -> str:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith("NARD:"):
                return line[5:].strip()
        raise RuntimeError("gnubg exited without answering")

    def _send(self, query: str) -> str:
        assert self._proc.stdin is not None
        self._proc.stdin.write(query + "\n")
        self._proc.stdin.flush()
        return self._answer()

    def restart(self, why: str) -> None:
        """Replace the process by a fresh one, saying ``why`` on stderr."""
        print(f"{self._who}: {why}; gnubg restarted", file=sys.stderr, flush=True)
        self._proc.kill()
        self._proc.wait()
        self._dir.cleanup()
        self._start()

    def ask(self, query: str) -> str:
        """gnubg's answer to ``query``; a process that died is restarted and asked again."""
        try:
            return self._send(query)
        except (RuntimeError, OSError) as error:
            self.restart(f"{error} (exit status {self._proc.poll()}) at {query}")
            return self._send(query)

    def close(self) -> None:
        """End the process (it also ends by itself when its stdin closes)."""
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._dir.cleanup()


class GnubgPlayer:
    """GNU Backgammon at ``plies`` (cubeless chequer play) in a child gnubg process:
    0-ply by default, 2-ply for gnubg's world class (``gnubg-2ply``)."""

    name = "gnubg"

    def __init__(self, plies: int = 0) -> None:
        if not Path(GNUBG).exists():
            sys.exit(f"strength.py: GNU Backgammon not found at {GNUBG} (apt-get install gnubg)")
        script = _GNUBG_SCRIPT.replace("PLIES", str(plies))
        self._gnubg = GnubgProcess(script, "strength.py")

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """gnubg's best 0-ply play, mapped back onto nard's legal plays.

        gnubg's 0-ply answer does not depend on earlier queries (``set board``
        and ``set dice`` come with each one), so a gnubg that dies, or answers
        that it has no play where nard has several, is restarted and asked again,
        once (:class:`GnubgProcess`), and the games are unchanged.
        """
        plays = position.legal_plays(dice)
        if len(plays) <= 1:
            return plays[0] if plays else None
        query = f"{position.position_id()} {dice[0]} {dice[1]}"
        text = self._gnubg.ask(query)
        if text == "-":
            self._gnubg.restart(f"gnubg found no play at {query}")
            text = self._gnubg.ask(query)
        if text == "-":
            raise RuntimeError(f"gnubg found no play in {position.position_id()} with {dice}")
        return position.parse_play(text, dice)


# -- the duel ---------------------------------------------------------------------
def make_player(name: str, seed: int) -> Player:
    """A fresh player by name; ``seed`` feeds the random player."""
    if name == "heuristic":
        return HeuristicPlayer()
    if name == "pubeval":
        return PubevalPlayer()
    if name == "random":
        return RandomPlayer(seed)
    if name == "gnubg":
        return GnubgPlayer()
    if name == "gnubg-2ply":
        return GnubgPlayer(plies=2)
    level, _, weights = name.partition("@")
    if level in ENGINE_LEVELS:
        from nard.engine import Engine

        # The shipped networks, or those at PATH for "expert@PATH"; 0-ply or 2-ply,
        # never cut short by the time limit (the module docstring says why).
        return Engine(level=level, seed=seed, weights=weights or None, time_limit=None)
    raise ValueError(f"unknown player {name!r}: expected one of {', '.join(PLAYERS)}")


def player_name(name: str) -> str:
    level, at, weights = name.partition("@")
    if name in PLAYERS or (at and level in ENGINE_LEVELS and weights):
        return name
    raise argparse.ArgumentTypeError(f"unknown player {name!r}")


def pair_seed(seed: int, pair: int) -> int:
    """The dice seed of game pair ``pair`` (both games of a pair use it)."""
    return seed * 1_000_003 + pair


_worker_players: dict[str, Player] = {}


def _player(name: str, seed: int) -> Player:
    # Deterministic players are kept per process (gnubg is expensive to start);
    # the random player is re-seeded for every game pair so results do not
    # depend on how pairs are spread over processes.
    if name == "random":
        return RandomPlayer(seed)
    if name not in _worker_players:
        _worker_players[name] = make_player(name, seed)
    return _worker_players[name]


class LuckMeter:
    """The luck of each roll, judged by a fixed reference: nard's 0-ply networks.

    The luck of roll ``r`` to the side on roll at ``s`` is ``E(s, r) - B(s)``
    (:func:`nard.engine.luck.roll_luck`):
    the cubeless equity (mover's view) of ``r``'s best play at the reference's
    0 ply, less the average of that over the 36 rolls (the reference's 1-ply
    value of ``s``). The dice are uniform and do not depend on the past, so
    every roll's luck has mean zero whatever the players did before and however
    wrong the reference is, and a game's result less its luck (the
    :attr:`Summary.ppg_luck` figure) estimates the same points per game as the
    result itself, with the dice's share of the variance taken out: the
    variance reduction of rollouts (ENGINE-NOTES section 4), applied to duels.
    The opening roll (never a double, and it picks the side that plays it) is
    judged against the same 36-roll mean: seen from seat 0 its luck still has
    mean zero, since either seat plays any opening roll with the same chance.
    """

    def __init__(self, weights: str | None = None) -> None:
        from nard.engine.engine import load_evaluator

        self._evaluator = load_evaluator(weights)

    def luck(self, position: Position, dice: Sequence[int]) -> float:
        """The luck of ``dice`` to the side on roll at ``position``, in its points."""
        from nard.engine.luck import roll_luck

        return roll_luck(self._evaluator, position, (dice[0], dice[1]))


class _LuckCounting:
    """``player``, adding the luck of each of its rolls, signed, to ``tally[0]``."""

    def __init__(self, player: Player, meter: LuckMeter, sign: int, tally: list[float]) -> None:
        self._player, self._meter, self._sign, self._tally = player, meter, sign, tally

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        self._tally[0] += self._sign * self._meter.luck(position, dice)
        return self._player.choose_play(position, dice)


_worker_meter: list[LuckMeter] = []


def _play_game_luck(a: Player, b: Player, seed: int, luck: bool) -> tuple[int, float]:
    """A's points with A in seat 0 on the dice of ``seed``, and A's luck in it."""
    if not luck:
        return play_game(a, b, SeededDice(seed)), 0.0
    if not _worker_meter:
        _worker_meter.append(LuckMeter())
    tally = [0.0]
    meter = _worker_meter[0]
    won = play_game(
        _LuckCounting(a, meter, 1, tally), _LuckCounting(b, meter, -1, tally), SeededDice(seed)
    )
    return won, tally[0]


def play_pairs(
    a: str, b: str, seed: int, pairs: Sequence[int], luck: bool = False
) -> list[tuple[int, int, float, float]]:
    """For each pair index: A's points with A in seat 0, then with A in seat 1, and
    A's luck in each game (:class:`LuckMeter`; zero unless ``luck``)."""
    out = []
    for pair in pairs:
        s = pair_seed(seed, pair)
        first, first_luck = _play_game_luck(_player(a, 2 * s), _player(b, 2 * s + 1), s, luck)
        second, second_luck = _play_game_luck(_player(b, 2 * s + 1), _player(a, 2 * s), s, luck)
        out.append((first, -second, first_luck, -second_luck))
    return out


@dataclass(frozen=True)
class Summary:
    a: str
    b: str
    games: int
    seed: int
    ppg: float
    ci95: float
    ci95_unpaired: float
    win_rate: float
    gammon_rate: float
    a_gammons: float
    b_gammons: float
    backgammon_rate: float
    seconds: float
    games_per_s: float
    ppg_luck: float | None = None
    ci95_luck: float | None = None


def half_width(values: Sequence[float]) -> float:
    """Half the width of the 95% confidence interval of the mean of ``values``."""
    if len(values) < 2:
        return math.nan
    mu = sum(values) / len(values)
    var = sum((v - mu) ** 2 for v in values) / (len(values) - 1)
    return Z_95 * math.sqrt(var / len(values))


def summarise(
    a: str,
    b: str,
    seed: int,
    results: list[tuple[int, int, float, float]],
    secs: float,
    luck: bool = False,
) -> Summary:
    games = [r for first, second, _, _ in results for r in (first, second)]
    n = len(games)
    mean = sum(games) / n
    pair_means = [(x + y) / 2 for x, y, _, _ in results]
    adjusted = [(x - lx + y - ly) / 2 for x, y, lx, ly in results]
    return Summary(
        a=a,
        b=b,
        games=n,
        seed=seed,
        ppg=mean,
        ci95=half_width(pair_means),
        ci95_unpaired=half_width([float(g) for g in games]),
        win_rate=sum(g > 0 for g in games) / n,
        gammon_rate=sum(abs(g) >= 2 for g in games) / n,
        a_gammons=sum(g >= 2 for g in games) / n,
        b_gammons=sum(g <= -2 for g in games) / n,
        backgammon_rate=sum(abs(g) == 3 for g in games) / n,
        seconds=secs,
        games_per_s=n / secs,
        ppg_luck=sum(adjusted) / len(adjusted) if luck else None,
        ci95_luck=half_width(adjusted) if luck else None,
    )


def play_chunks(
    pool: Executor | None,
    work: Callable[[Sequence[int]], list[T]],
    chunks: Sequence[Sequence[int]],
    progress: Callable[[int], None] | None = None,
) -> list[T]:
    """``work`` on every chunk of pair indices, in ``pool`` (or here when it is
    ``None``), the results in chunk order, whatever the scheduling; ``progress``
    gets the games played (two per result) after each chunk. A failed chunk
    stops the run at once (the pool's queued chunks are cancelled) instead of
    after every other chunk."""
    results: list[T] = []
    if pool is None:
        for part in chunks:
            results.extend(work(part))
            if progress:
                progress(2 * len(results))
        return results
    futures = [pool.submit(work, part) for part in chunks]
    for part, future in zip(chunks, futures, strict=True):
        try:
            results.extend(future.result())
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            print(f"\npairs {part[0]}-{part[-1]} failed", file=sys.stderr)
            raise
        if progress:
            progress(2 * len(results))
    return results


def run(
    a: str,
    b: str,
    games: int,
    seed: int,
    jobs: int,
    progress: Callable[[int], None] | None = None,
    luck: bool = False,
) -> Summary:
    """Play ``games`` games (rounded up to pairs) and summarise them for A (with
    the luck-adjusted figure too when ``luck``: :class:`LuckMeter`)."""
    pairs = list(range((games + 1) // 2))
    start = time.perf_counter()
    chunk = max(1, min(50, len(pairs) // (4 * jobs) or 1))
    chunks = [pairs[i : i + chunk] for i in range(0, len(pairs), chunk)]
    work = functools.partial(play_pairs, a, b, seed, luck=luck)
    if jobs == 1:
        results = play_chunks(None, work, chunks, progress)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = play_chunks(pool, work, chunks, progress)
    return summarise(a, b, seed, results, time.perf_counter() - start, luck)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    players = f"{', '.join(PLAYERS)}; expert@PATH or world-class@PATH for other weights"
    parser.add_argument("--a", type=player_name, default="pubeval", help=f"the player: {players}")
    parser.add_argument("--b", type=player_name, default="random", help="its opponent")
    parser.add_argument("--games", type=int, default=2000, help="games (an even number)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the dice and random play")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing at once")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--luck",
        action="store_true",
        help="also print the luck-adjusted figure (each roll's luck by nard's shipped "
        "0-ply networks taken out; about 1.5 ms a turn)",
    )
    args = parser.parse_args(argv)
    if args.games < 2 or args.jobs < 1:
        parser.error("--games must be at least 2 and --jobs at least 1")

    def progress(done: int) -> None:
        print(f"\r{done}/{args.games} games", end="", file=sys.stderr, flush=True)

    summary = run(
        args.a,
        args.b,
        args.games,
        args.seed,
        args.jobs,
        None if args.quiet else progress,
        args.luck,
    )
    if not args.quiet:
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(asdict(summary), indent=2))
        return 0
    s = summary
    print(f"{s.a} vs {s.b}: {s.games} cubeless money games, duplicate dice, seed {s.seed}")
    print(
        f"  {s.a}: {s.ppg:+.3f} points per game, 95% CI ±{s.ci95:.3f} "
        f"(±{s.ci95_unpaired:.3f} without pairing); wins {100 * s.win_rate:.1f}%"
    )
    if s.ppg_luck is not None and s.ci95_luck is not None:
        print(
            f"  luck-adjusted: {s.ppg_luck:+.3f} points per game, 95% CI ±{s.ci95_luck:.3f} "
            "(each roll's luck by nard's 0-ply networks taken out)"
        )
    print(
        f"  gammons or backgammons: {100 * s.gammon_rate:.1f}% of games "
        f"({s.a} {100 * s.a_gammons:.1f}%, {s.b} {100 * s.b_gammons:.1f}%); "
        f"backgammons {100 * s.backgammon_rate:.1f}%"
    )
    print(f"  {s.games_per_s:.1f} games/s ({s.seconds:.1f} s, {args.jobs} process(es))")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
