"""An analysis written out: the text report of ``nard analyse`` and its ``--html`` page."""

from __future__ import annotations

import html
from collections.abc import Callable

from nard.analysis.analyse import Decision, GameSummary, MatchAnalysis
from nard.analysis.stats import PlayerStats, Skill
from nard.core.position import Position

__all__ = ["html_report", "text_report"]


def _kind(analysis: MatchAnalysis) -> str:
    n = analysis.match_length
    return f"{n}-point match" if n else "money session"


def _rows(analysis: MatchAnalysis) -> list[tuple[str, str, str]]:
    a, b = analysis.players
    money = analysis.match_length == 0

    def both(fn: Callable[[PlayerStats], str]) -> tuple[str, str]:
        return fn(a), fn(b)

    def marks(m: dict[str, int]) -> str:
        return f"{m['doubtful']}/{m['error']}/{m['blunder']}"

    result_unit = "points" if money else "MWC %"

    def result(value: float) -> str:
        return f"{value:+.3f}" if money else f"{100 * value:+.1f}"

    rows = [
        ("Moves (unforced)", *both(lambda p: f"{p.total_moves} ({p.unforced_moves})")),
        ("Checker marks: doubtful/error/blunder", *both(lambda p: marks(p.checker_marks))),
        ("Checker error rate (mEMG)", *both(lambda p: f"{p.checker_error_rate:.1f}")),
        (
            "Cube decisions (close or actual/all)",
            *both(lambda p: f"{p.cube_decisions}/{p.cube_decisions_total}"),
        ),
        ("Cube marks: doubtful/error/blunder", *both(lambda p: marks(p.cube_marks))),
        ("Cube error rate (mEMG)", *both(lambda p: f"{p.cube_error_rate:.1f}")),
        ("Error rate, overall (mEMG)", *both(lambda p: f"{p.error_rate:.1f}")),
        ("Snowie error rate", *both(lambda p: f"{p.snowie_error_rate:.1f}")),
        ("PR (XG)", *both(lambda p: f"{p.pr:.1f}")),
        ("Luck (EMG, total)", *both(lambda p: f"{p.luck:+.3f}")),
        ("Luck per roll (mEMG)", *both(lambda p: f"{p.luck_rate:+.1f}")),
        (f"Result ({result_unit})", *both(lambda p: result(p.actual_result))),
        (f"Luck-adjusted result ({result_unit})", *both(lambda p: result(p.luck_adjusted_result))),
    ]
    if not money:
        rows.append(
            (
                "Rating (gnubg's estimate)",
                *both(lambda p: "n/a" if p.rating is None else f"{p.rating:.0f}"),
            )
        )
    return rows


def _describe(d: Decision) -> str:
    where = f"game {d.game}, turn {d.turn}"
    if d.kind == "checker":
        dice = f"{d.dice[0]}{d.dice[1]}" if d.dice else ""
        return f"{where}: {d.player} rolled {dice}, played {d.played}; better {d.best}"
    return f"{where}: {d.player}: {d.played}; right: {d.best}"


def text_report(analysis: MatchAnalysis, *, all_decisions: bool = False) -> str:
    """The report ``nard analyse`` prints: both players' figures, then every decision
    marked doubtful or worse (every decision with ``all_decisions``)."""
    a, b = analysis.players
    lines = [
        f"{_kind(analysis)}: {a.name} (player 0) vs {b.name} (player 1), "
        f"analysed at {analysis.plies} plies"
    ]
    lines += [f"note: {note}" for note in analysis.notes]
    width = max(len(r[0]) for r in _rows(analysis))
    col = max(12, len(a.name) + 2, len(b.name) + 2)
    lines.append("")
    lines.append(f"{'':{width}}  {a.name:>{col}}{b.name:>{col}}")
    for label, x, y in _rows(analysis):
        lines.append(f"{label:{width}}  {x:>{col}}{y:>{col}}")
    shown = [
        d for d in analysis.decisions if all_decisions or (d.skill is not Skill.NONE and d.counted)
    ]
    lines.append("")
    lines.append("Decisions" if all_decisions else "Decisions marked doubtful, error or blunder")
    if not shown:
        lines.append("  none")
    for d in shown:
        mark = f" ({d.skill.value})" if d.skill is not Skill.NONE else ""
        lines.append(f"  {_describe(d)}: -{d.error:.3f}{mark}")
    return "\n".join(lines)


# -- the page ----------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table.stats { border-collapse: collapse; }
table.stats td, table.stats th { padding: .25em .8em; border-bottom: 1px solid #ddd; }
table.stats td:not(:first-child), table.stats th { text-align: right; }
svg.graph { background: #fafafa; border: 1px solid #ddd; }
.error { border-left: 4px solid #c60; padding: .3em 1em; margin: 1em 0; }
.error.blunder { border-color: #c00; } .error.doubtful { border-color: #cb0; }
pre.board { font-size: .85em; line-height: 1.15; }
.note { color: #555; }
"""


def _graph(game: GameSummary, money: bool) -> str:
    points = list(game.graph)
    w, h, pad = 640, 180, 24
    if not points:
        return "<p class='note'>No plays in this game.</p>"
    last = max(t for t, _ in points) or 1
    if money:
        top = max(1.0, max(abs(v) for _, v in points))
        lo, hi = -top, top
    else:
        lo, hi = 0.0, 1.0

    def x(t: int) -> float:
        return pad + (w - 2 * pad) * t / last

    def y(v: float) -> float:
        return h - pad - (h - 2 * pad) * (v - lo) / (hi - lo)

    mid = y((lo + hi) / 2)
    path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points)
    label = "player 0's equity" if money else "player 0's match winning chances"
    return (
        f"<svg class='graph' width='{w}' height='{h}' role='img' aria-label='{label}'>"
        f"<line x1='{pad}' x2='{w - pad}' y1='{mid:.1f}' y2='{mid:.1f}' stroke='#bbb'/>"
        f"<polyline fill='none' stroke='#1a5fb4' stroke-width='2' points='{path}'/>"
        f"<text x='{pad}' y='14' font-size='11'>{html.escape(label)}</text></svg>"
    )


def html_report(analysis: MatchAnalysis) -> str:
    """A self-contained page: the figures, each game's equity graph, every error with
    the better play and the board."""
    a, b = analysis.players
    e = html.escape
    money = analysis.match_length == 0
    title = f"{e(a.name)} vs {e(b.name)}: {_kind(analysis)}"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{title}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        f"<p class='note'>Analysed by nard at {analysis.plies} plies; error rates in "
        "thousandths of normalised equity (mEMG), PR as eXtreme Gammon counts it.</p>",
    ]
    parts += [f"<p class='note'>Note: {e(n)}</p>" for n in analysis.notes]
    parts.append(
        "<table class='stats'><tr><th></th>"
        f"<th><bdi>{e(a.name)}</bdi></th><th><bdi>{e(b.name)}</bdi></th></tr>"
    )
    for label, x, y in _rows(analysis):
        parts.append(f"<tr><td>{e(label)}</td><td>{e(x)}</td><td>{e(y)}</td></tr>")
    parts.append("</table>")
    for game in analysis.games:
        parts.append(
            f"<h2>Game {game.number}: score {game.score[0]}-{game.score[1]}, "
            f"<bdi>{e(analysis.players[game.winner].name)}</bdi> wins {game.points}</h2>"
        )
        parts.append(_graph(game, money))
        for d in analysis.decisions:
            if d.game != game.number or d.skill is Skill.NONE or not d.counted:
                continue
            board = str(Position.from_position_id(d.position_id))
            parts.append(
                f"<div class='error {d.skill.value}'><p><b>{e(d.skill.value)}</b> "
                f"(-{d.error:.3f}) {e(_describe(d))}</p>"
                f"<p class='note'>Position ID {e(d.position_id)} Match ID {e(d.match_id)}</p>"
                f"<pre class='board'>{e(board)}</pre>"
            )
            if d.candidates:
                parts.append("<ol>")
                for c in d.candidates:
                    made = " (played)" if c.play == d.played else ""
                    parts.append(f"<li>{e(c.play)}: {c.equity:+.3f}{made}</li>")
                parts.append("</ol>")
            elif d.equities:
                eq = ", ".join(f"{k.replace('_', ' ')} {v:+.3f}" for k, v in d.equities.items())
                parts.append(f"<p>{e(eq)}</p>")
            parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
