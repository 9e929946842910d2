"""``nard``: the command-line entry point.

Errors in the input print one line (``nard: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

# nard's networks are small: one BLAS thread is faster (and keeps training
# reproducible), and must be chosen before numpy loads.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nard import __version__
from nard.core import Dice, InvalidDiceError, NardError, Position, parse_dice
from nard.notation import MatchState
from nard.notation.positions import read_position, read_written_position

__all__ = ["main"]

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"nard: error: {message} (try 'nard --help')\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="nard", description="nard: an open backgammon system.")
    parser.add_argument("--version", action="version", version=f"nard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    where = "a GNU Backgammon Position ID, a gnubg ID (POSITION_ID:MATCH_ID) or an XGID"

    def position_and_dice(parser: argparse.ArgumentParser, dice_help: str) -> None:
        parser.add_argument("position_id", metavar="POSITION", help=where)
        parser.add_argument("dice", metavar="DICE", nargs="?", help=dice_help)
        parser.add_argument("--json", action="store_true", help="print JSON")

    moves = sub.add_parser("moves", help="list the legal plays of a roll in a position")
    position_and_dice(moves, "the roll, e.g. 64 or 6-4 (default: the dice in the Match ID or XGID)")

    show = sub.add_parser("show", help="draw a position with its pip counts")
    show.add_argument("position_id", metavar="POSITION", help=where)

    met = sub.add_parser(
        "met", help="the match equity table the engine uses (winning chances by score)"
    )
    met.add_argument(
        "--away", type=int, default=11, metavar="N", help="scores from 1 to N away (default 11)"
    )
    met.add_argument("--json", action="store_true", help="print the table as JSON")

    rep = sub.add_parser("replay", help="check a match record (.mat, .sgf, .json) move by move")
    rep.add_argument("file", metavar="FILE")
    rep.add_argument("--json", action="store_true", help="print the games and score as JSON")
    rep.add_argument(
        "--no-crawford",
        action="store_true",
        help="the match was played without the Crawford rule (a .mat file cannot say so)",
    )

    ver = sub.add_parser("verify", help="recompute every die of a fair-dice match record")
    ver.add_argument("file", metavar="RECORD", help="nard's JSON record with the revealed seed")

    exp = sub.add_parser("export", help="convert a match record between .mat, .sgf and .json")
    exp.add_argument("source", metavar="IN")
    exp.add_argument("target", metavar="OUT")
    exp.add_argument("--to", choices=("mat", "sgf", "json"), help="format (default: OUT's)")

    from nard.cli.analyse import add_arguments as add_analyse_arguments

    add_analyse_arguments(
        sub.add_parser(
            "analyse",
            aliases=["analyze"],
            help="analyse a match record: every decision judged, error rates, PR, luck",
        )
    )

    from nard.cli.serve import add_worker_options

    add_worker_options(
        sub.add_parser("worker", help="make the analyses the web app queues (see nard serve)")
    )
    from nard.cli.serve import add_reports_options

    add_reports_options(
        sub.add_parser(
            "reports",
            help="the players' reports to the moderators, newest first (the server's database)",
        )
    )
    from nard.cli.moderate import add_moderate_options

    add_moderate_options(
        sub.add_parser(
            "moderate",
            help="mute or suspend a player, lift a sanction, list them (the server's database)",
        )
    )
    ubgi = sub.add_parser(
        "ubgi",
        help="serve as an engine on stdin/stdout: the Universal Backgammon Interface v0.2",
    )
    ubgi.add_argument("--weights", default=None, help="the network file (default: the bundled one)")
    external = sub.add_parser(
        "external",
        help="play for a GNU Backgammon player set to `external HOST:PORT` (gnubg connects here)",
    )
    external.add_argument("--host", default="127.0.0.1", help="address to listen on")
    external.add_argument("--port", type=int, default=31555, help="port to listen on")
    external.add_argument(
        "--level",
        default="expert",
        choices=["beginner", "intermediate", "expert", "world-class", "roller"],
    )
    external.add_argument("--weights", default=None, help="the network file")

    from nard.cli.rollout import add_arguments as add_rollout_arguments

    add_rollout_arguments(
        sub.add_parser(
            "rollout", help="roll out the candidate plays of a roll, or the cube decision"
        )
    )

    from nard.training.cli import (
        add_fit_arguments,
        add_label_arguments,
        add_prune_arguments,
        add_train_arguments,
    )

    add_train_arguments(
        sub.add_parser("train", help="train the neural evaluator by TD(lambda) self-play")
    )
    add_label_arguments(
        sub.add_parser(
            "label", help="self-play positions labelled by n-ply search, playouts or rollouts"
        )
    )
    add_fit_arguments(sub.add_parser("fit", help="train the contact and race networks on datasets"))
    add_prune_arguments(
        sub.add_parser("prune", help="distil the pruning network of a search into a weights bundle")
    )

    hint = sub.add_parser("hint", help="the engine's ranked plays of a roll, or its cube decision")
    position_and_dice(
        hint, "the roll, e.g. 64 (default: the dice in the Match ID or XGID; none: the cube)"
    )
    hint.add_argument(
        "--weights", metavar="PATH", help="network weights (default: nard/engine/data/nard-net.npz)"
    )
    from nard.engine.engine import Level

    hint.add_argument(
        "--level",
        choices=[level.value for level in Level],
        default=Level.EXPERT.value,
        help="playing level (default: expert)",
    )

    play = sub.add_parser(
        "play", help="play in the terminal: against the computer or two people, money or a match"
    )
    play.add_argument("--seed", type=int, default=None, help="dice seed (default: random)")
    play.add_argument(
        "--level",
        choices=[level.value for level in Level],
        default=Level.EXPERT.value,
        help="the computer's level (default: expert)",
    )
    play.add_argument(
        "--match",
        type=int,
        default=0,
        metavar="N",
        help="play a match to N points (1-64; default: money play)",
    )
    play.add_argument(
        "--games", type=int, default=1, metavar="N", help="money games to play (default: 1)"
    )
    play.add_argument(
        "--two-players", action="store_true", help="two people at this keyboard, no computer"
    )
    play.add_argument(
        "--home",
        choices=("right", "left"),
        default="right",
        help="where the home board is drawn, bottom right or bottom left (default: right)",
    )
    play.add_argument(
        "--name",
        action="append",
        default=None,
        metavar="NAME",
        help="a player's name: yours (default: your login name), and with --two-players "
        "give it twice; the computer is named by --opponent",
    )
    play.add_argument("--opponent", default="Computer", metavar="NAME", help="the computer's name")
    play.add_argument("--no-cube", action="store_true", help="play without the doubling cube")
    play.add_argument(
        "--no-crawford", action="store_true", help="a match without the Crawford rule"
    )
    play.add_argument(
        "--holland", action="store_true", help="the Holland rule (after the Crawford game)"
    )
    play.add_argument("--jacoby", action="store_true", help="money: the Jacoby rule")
    play.add_argument("--beavers", action="store_true", help="money: beavers allowed")
    play.add_argument("--raccoons", action="store_true", help="money: raccoons allowed")
    play.add_argument(
        "--automatic-doubles",
        type=int,
        default=0,
        metavar="N",
        help="money: at most N automatic doubles on opening ties (default: 0)",
    )
    play.add_argument(
        "--backgammon",
        type=int,
        choices=(2, 3),
        default=3,
        help="what a backgammon counts (default: 3)",
    )
    play.add_argument(
        "--save",
        metavar="FILE",
        default=None,
        help="save the match to FILE (.mat, .sgf or .json) after every game and at the end",
    )
    play.add_argument(
        "--resume",
        metavar="FILE",
        default=None,
        help="go on with the match saved in FILE (and save back to it unless --save says "
        "otherwise); its rules and names come from the file",
    )

    serve = sub.add_parser(
        "serve",
        help="serve the web app (SQLite by default; every setting below)",
        description="Serve the web app. Each option can also be set by the environment "
        "variable shown with it; the option wins.",
    )
    from nard.cli.serve import add_serve_options

    add_serve_options(serve)
    return parser


def _describe(match: MatchState, *, beavers: bool = False) -> str:
    kind = "money game" if match.is_money() else f"{match.match_length}-point match"
    owner = "centred" if match.cube_owner < 0 else f"owned by player {int(match.cube_owner)}"
    parts = [
        f"{kind}, score {match.score[0]}-{match.score[1]}",
        f"cube {match.cube_value} {owner}",
        f"player {match.dice_owner} on roll",
    ]
    if match.dice:
        parts.append(f"dice {match.dice[0]}-{match.dice[1]}")
    if match.crawford:
        parts.append("Crawford game")
    if match.is_money() and match.jacoby:
        parts.append("Jacoby rule")
    if match.is_money() and beavers:
        parts.append("beavers")
    if match.double_offered:
        parts.append("a double is offered")
    return "; ".join(parts)


def _cmd_moves(args: argparse.Namespace) -> int:
    pos, match = read_position(args.position_id)
    dice: Dice
    if args.dice is not None:
        dice = parse_dice(args.dice)
    elif match is not None and match.dice is not None:
        dice = match.dice
    else:
        raise InvalidDiceError(
            f"no dice given for {args.position_id!r}: add them (e.g. 64), or give a "
            "Match ID or XGID that has dice"
        )
    plays = pos.legal_plays(dice)
    rows = [(pos.format_play(p), p.result.position_id()) for p in plays]
    if args.json:
        out = {
            "position_id": pos.position_id(),
            "dice": list(dice),
            "plays": [{"play": text, "position_id": pid} for text, pid in rows],
        }
        print(json.dumps(out, indent=2))
    elif not rows:
        print(f"No legal play with {dice[0]}-{dice[1]}: the turn passes.")
    else:
        width = max(len(text) for text, _ in rows)
        for i, (text, pid) in enumerate(rows, start=1):
            print(f"{i:3}. {text:<{width}}  {pid}")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from nard.notation.match_id import GameState, Resignation
    from nard.notation.xgid import BOTTOM

    written = read_written_position(args.position_id)
    pos, match = written.position, written.match
    print(pos)
    # The same position as XG names it (a bare Position ID: money, the cube in the
    # middle, the side on roll at the bottom, as gnubg shows it).
    state = match if match is not None else MatchState(dice_owner=BOTTOM)
    if match is not None:
        print(_describe(match, beavers=written.beavers))
        print(f"Match ID: {match.match_id()}")
    if state.game_state is GameState.PLAYING and state.resignation is Resignation.NONE:
        print(written.to_xgid(state))
    _print_race_counts(pos)
    _print_bearoff(pos)
    return 0


EPC_PER_ROLL = 49 / 6
"""Pips an average roll is worth (8.167): Walter Trice's effective pip count is the
expected number of rolls to bear off times this (gnubg's ``show bearoff`` too)."""


def _print_bearoff(pos: Position) -> None:
    """The bear-off database's figures for each side with every checker home: the
    expected rolls to bear off, the effective pip count and wastage, the chance of
    finishing in n rolls; in a pure bear-off race the database's probabilities."""
    from nard.engine.bearoff import BearoffDatabase, NotBearoffError, home_checkers, is_bearoff

    sides = []
    for label, opponent in (("side on roll", False), ("opponent", True)):
        try:
            sides.append((label, home_checkers(pos, opponent=opponent), opponent))
        except NotBearoffError:
            continue
    if not sides:
        return
    db = BearoffDatabase.load()
    pips = pos.pip_counts()
    print("Bear-off database (one-sided, each roll played to bear off soonest):")
    for label, side, opponent in sides:
        rolls = db.expected_rolls(side)
        epc = rolls * EPC_PER_ROLL
        dist = db.distribution(side)
        shown = ", ".join(
            f"{n}: {100 * float(p):.1f}%" for n, p in enumerate(dist) if n and float(p) >= 0.0005
        )
        print(
            f"  {label:<12} {rolls:.3f} rolls, EPC {epc:.1f} "
            f"(pips {pips[int(opponent)]}, wastage {epc - pips[int(opponent)]:.1f}); "
            f"done in {shown}"
        )
    if is_bearoff(pos):
        win, wg, _wbg, lg, _lbg = db.probabilities(pos)
        print(
            f"  race: side on roll wins {100 * win:.2f}% (gammons {100 * wg:.2f}%), "
            f"loses {100 * (1 - win):.2f}% (gammons {100 * lg:.2f}%)"
        )


def _print_race_counts(pos: Position) -> None:
    """The race counts of a race (side on roll first): nard.engine.race."""
    from nard.engine.race import race_counts

    counts = race_counts(pos)
    if counts:
        print("Race counts (side on roll first):")
    for c in counts:
        verdict = (
            f"{'double' if c.double else 'no double'}, "
            f"{'redouble' if c.redouble else 'no redouble'}; {'take' if c.take else 'pass'}"
        )
        if c.winning_chance is None:
            figures = f"{c.counts[0]:g} - {c.counts[1]:g}"
        else:
            figures = f"K {c.counts[0]:.2f}, wins {100 * c.winning_chance:.1f}%"
        print(f"  {c.name:<9} {figures:<24} {verdict}")


def _cmd_met(args: argparse.Namespace) -> int:
    """The match equity table: the row player's chance of winning the match, N-away
    against M-away (before the Crawford game; the Crawford game's own at 1-away), and
    the post-Crawford row (the trailer's chance against a leader 1-away)."""
    from nard.engine.cube import KAZAROSS_XG2_64 as table

    if not 1 <= args.away <= table.length:
        raise NardError(f"--away {args.away}: 1 to {table.length}")
    n = args.away
    pre = [[table.equity(i, j) for j in range(1, n + 1)] for i in range(1, n + 1)]
    post = [table.equity(i, 1, post_crawford=True) for i in range(1, n + 1)]
    if args.json:
        print(
            json.dumps({"name": table.name, "away": n, "pre_crawford": pre, "post_crawford": post})
        )
        return 0
    print(f"{table.name}: the row player's match winning chances (%), N-away against M-away")
    print("away " + "".join(f"{j:>6}" for j in range(1, n + 1)))
    for i, row in enumerate(pre, start=1):
        print(f"{i:>4} " + "".join(f"{100 * v:>6.1f}" for v in row))
    print("post-Crawford, against 1-away:")
    print("     " + "".join(f"{100 * v:>6.1f}" for v in post))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``nard`` command; returns the exit status."""
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "moves":
            return _cmd_moves(args)
        if args.command == "show":
            return _cmd_show(args)
        if args.command == "met":
            return _cmd_met(args)
        if args.command == "hint":
            from nard.cli.hint import cmd_hint

            return cmd_hint(args.position_id, args.dice, args.json, args.weights, args.level)
        if args.command in ("analyse", "analyze"):
            from nard.cli.analyse import cmd_analyse

            return cmd_analyse(args)
        if args.command == "external":
            from nard.cli.external import cmd_external

            return cmd_external(args.host, args.port, args.level, args.weights)
        if args.command == "ubgi":
            from nard.cli.ubgi import cmd_ubgi

            return cmd_ubgi(weights=args.weights)
        if args.command == "worker":
            from nard.cli.serve import cmd_worker

            opts = {k: getattr(args, k) for k in ("database_url", "data_dir", "redis_url")}
            opts["queue_path"] = args.queue_path
            return cmd_worker(opts, args.workers, args.parent, args.stale_after)
        if args.command == "reports":
            from nard.cli.serve import cmd_reports

            opts = {k: getattr(args, k) for k in ("database_url", "data_dir")}
            return cmd_reports(opts, args.limit, args.json)
        if args.command == "moderate":
            from nard.cli.moderate import cmd_moderate

            return cmd_moderate(args)
        if args.command == "rollout":
            from nard.cli.rollout import cmd_rollout

            return cmd_rollout(args)
        if args.command in ("train", "label", "fit", "prune"):
            from nard.training import cli as training

            runs = {
                "train": training.run_train,
                "label": training.run_label,
                "fit": training.run_fit,
                "prune": training.run_prune,
            }
            return runs[args.command](args)
        if args.command in ("replay", "verify", "export"):
            from nard.cli import records

            if args.command == "replay":
                return records.cmd_replay(args.file, args.json, crawford=not args.no_crawford)
            if args.command == "verify":
                return records.cmd_verify(args.file)
            return records.cmd_export(args.source, args.target, args.to)
        if args.command == "serve":
            from nard.cli.serve import cmd_serve
            from nard.server.settings import SETTINGS

            return cmd_serve({s.name: getattr(args, s.name) for s in SETTINGS})
        from nard.cli.play import run_terminal_game

        if not 0 <= args.match <= 64:
            raise NardError(f"invalid match length {args.match}: a match is to 1-64 points")
        if args.games < 1:
            raise NardError(f"invalid number of games {args.games}: play at least 1")
        rules = {
            "cube": not args.no_cube,
            "crawford": not args.no_crawford,
            "holland": args.holland,
            "jacoby": args.jacoby,
            "beavers": args.beavers,
            "raccoons": args.raccoons,
            "automatic_doubles": args.automatic_doubles,
            "backgammon": args.backgammon,
        }
        return run_terminal_game(
            seed=args.seed,
            level=args.level,
            match_length=args.match,
            money_games=args.games,
            two_players=args.two_players,
            home=args.home,
            names=args.name,
            opponent=args.opponent,
            rules=rules,
            save=args.save,
            resume_from=args.resume,
        )
    except NardError as exc:
        print(f"nard: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("\nnard: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def entry_point() -> NoReturn:
    """The console script: ``sys.exit(main())``."""
    sys.exit(main())
