"""What a live table keeps of every action is out of the garbage collector's sight.

A server process holds its live tables in memory, and each keeps a step per action
(the replay) and its games' histories as clients are sent them. Kept as dicts of
lists, every one was an object a full collection had to walk: under load (20 guests)
those collections paused the event loop for 70-110 ms every couple of seconds. Made
of numbers, text and tuples only, CPython stops tracking them."""

from __future__ import annotations

import gc
import json
import types

from nard.core.position import Play, Position
from nard.match.commands import Command
from nard.match.game import Decision, GameAction
from nard.server.tables import LiveTable, SeatInfo, TableRules, history_view


def played_table(actions: int) -> LiveTable:
    seats = (SeatInfo("ann", player_id=1), SeatInfo("bob", player_id=2))
    table = LiveTable("t1", TableRules(match_length=7), seats, bytes(range(32)))
    table.contribute(0, "ann-1")
    table.contribute(1, "bob-2")
    for _ in range(actions):
        game = table.game
        assert game is not None and table.status == "playing"
        seat = table.to_act
        assert seat is not None
        if game.decision is Decision.PLAY:
            play = game.legal_plays()[0]
            command = Command(GameAction.PLAY, play=game.position.format_play(play))
        elif game.decision is Decision.TAKE_OR_PASS:
            command = Command(GameAction.TAKE)
        else:
            command = Command(GameAction.ROLL)
        table.act(seat, command)
    return table


def tracked_objects(root: object) -> int:
    """The objects the garbage collector tracks that ``root`` holds (not through types,
    modules or functions: what the table itself keeps)."""
    seen: set[int] = set()
    stack = [root]
    count = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(item))
        if gc.is_tracked(item):
            count += 1
            stack.extend(gc.get_referents(item))
    return count


def test_what_a_table_keeps_of_each_action_is_mostly_untracked() -> None:
    held = {}
    for actions in (40, 120):
        table = played_table(actions)
        histories = [history_view(game) for game in table.games.games]
        assert sum(len(h) for h in histories) > actions / 2
        gc.collect()
        gc.collect()
        held[actions] = tracked_objects((table, histories))
    per_action = (held[120] - held[40]) / 80
    # The game's own actions and the log's entries remain (about 3 an action); the
    # steps and the history added about 9 more.
    assert per_action < 4, f"{per_action:.1f} tracked objects an action"


def test_the_steps_read_as_json_as_before() -> None:
    table = played_table(12)
    steps = json.loads(json.dumps(table.steps))
    assert all(len(s["board"]) == 26 and isinstance(s["board"], list) for s in steps)
    assert all(isinstance(s["score"], list) and isinstance(s["off"], list) for s in steps)
    rolled = [s for s in steps if s["dice"] is not None]
    assert rolled and all(len(s["dice"]) == 2 for s in rolled)
    plays = [s["caption"] for s in steps if s["caption"] and s["caption"]["kind"] == "play"]
    assert plays and all(isinstance(c["dice"], list) for c in plays)


def test_the_plays_the_process_remembers_stay_few_however_long_it_plays() -> None:
    """Legal plays are kept by each game for its turn, and the cache every position
    shares holds a few turns: at 512 turns a server's young collections under load
    walked 20,000-70,000 plays and positions (pauses of 12-30 ms; 3,400 more were
    alive after 240 more actions)."""

    def plays_alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) in (Play, Position))

    shorter = played_table(120)
    earlier = plays_alive()
    longer = played_table(360)
    later = plays_alive()
    assert shorter.seq and longer.seq
    assert later - earlier < 1200, f"{later - earlier} more plays and positions alive"


def test_a_game_keeps_its_turns_plays_without_the_shared_cache() -> None:
    from nard.core.position import _legal_plays

    table = played_table(7)
    game = table.game
    assert game is not None
    while game.decision is not Decision.PLAY:
        table.act(table.to_act or 0, Command(GameAction.ROLL))
        game = table.game
        assert game is not None
    offered = game.legal_plays()
    _legal_plays.cache_clear()
    again = game.legal_plays()
    assert again == offered and all(a is b for a, b in zip(again, offered, strict=True))
    text = game.position.format_play(offered[-1])
    before = _legal_plays.cache_info()
    table.act(table.to_act or 0, Command(GameAction.PLAY, play=text))
    assert _legal_plays.cache_info().misses == before.misses  # checked against the game's own
