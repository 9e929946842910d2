"""The HTTP API's request and response bodies (pydantic), apart from the domain types.

These are what the OpenAPI document (``/openapi.json``) describes and what the
page's client is written against.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    StrictBool,
    StrictInt,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from nard.engine import Level
from nard.match import GameAction
from nard.server.chouette import MEMBER_ACTIONS
from nard.server.usernames import MAX_LENGTH, MIN_LENGTH

__all__ = [
    "ActionRequest",
    "ConflictBody",
    "ContributionRequest",
    "CredentialsRequest",
    "ErrorBody",
    "GameView",
    "GuestRequest",
    "Health",
    "HistoryEntry",
    "JoinRequest",
    "LegalPlay",
    "Me",
    "NewTableRequest",
    "PasswordRequest",
    "RegistrationRequest",
    "ResultView",
    "SeatView",
    "TableSummary",
    "TableView",
    "check_shown_text",
    "has_control_characters",
]


def _is_control(char: str) -> bool:
    return unicodedata.category(char) == "Cc" or char in "\u2028\u2029"


def has_control_characters(text: str) -> bool:
    """Whether ``text`` holds a character no text field takes (C0, DEL, C1, and the
    line and paragraph separators)."""
    return any(_is_control(char) for char in text)


def _no_control_characters(text: str) -> str:
    for index, char in enumerate(text):
        if _is_control(char):
            raise ValueError(
                f"control character U+{ord(char):04X} at position {index + 1} is not allowed"
            )
    return text


_CLEAN = AfterValidator(_no_control_characters)


@dataclass(frozen=True)
class _Documented:
    """What the OpenAPI document says of a value beyond what pydantic checks itself:
    the rule is checked elsewhere (a validator of ours, the service) with its own
    error message, and the document tells clients of it."""

    extra: tuple[tuple[str, Any], ...]

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema.update(self.extra)
        return schema


def _documented(**extra: Any) -> _Documented:
    return _Documented(tuple(extra.items()))


_CONTROL_CLASS = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"
_NO_CONTROL = _documented(pattern=f"^[^{_CONTROL_CLASS}]*$")
"""The control characters :func:`has_control_characters` finds, as a JSON Schema
pattern (ECMA-262) excluding them."""
_SHOWN = _documented(pattern=f"^[^{_CONTROL_CLASS}\\u202a-\\u202e]*$")
"""The same, and no direction overrides: text shown to players as it is."""
GuestName = Annotated[
    str, StringConstraints(min_length=1, max_length=24, pattern=r"^[\w .\-]+$"), _CLEAN
]
Username = Annotated[str, StringConstraints(min_length=1, max_length=64), _CLEAN, _NO_CONTROL]
Password = Annotated[str, StringConstraints(min_length=8, max_length=200), _CLEAN, _NO_CONTROL]
CurrentPassword = Annotated[
    str, StringConstraints(min_length=1, max_length=200), _CLEAN, _NO_CONTROL
]
Seed = Annotated[str, StringConstraints(min_length=1, max_length=64), _CLEAN, _NO_CONTROL]
"""A contribution to the dice (its own rules are checked by the table, too)."""
Invite = Annotated[str, StringConstraints(max_length=64), _CLEAN, _NO_CONTROL]
ActionName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=20),
    _CLEAN,
    _documented(
        enum=sorted(
            {a.value for a in GameAction if a is not GameAction.OPENING_ROLL} | set(MEMBER_ACTIONS)
        )
    ),
]
"""A seat's action: one of the rules' own (the opening roll is the table's), or a
chouette member's ``agree`` or ``refuse`` to the captain's double; any other name is
refused by the rules with a message that names it."""
PlayText = Annotated[str, StringConstraints(max_length=200), _CLEAN, _NO_CONTROL]


def _no_bidi_overrides(text: str) -> str:
    for index, char in enumerate(text):
        if "\u202a" <= char <= "\u202e":
            raise ValueError(
                f"direction override U+{ord(char):04X} at position {index + 1} is not allowed"
            )
    return text


def check_shown_text(text: str) -> str:
    """``text``, which players are shown as it is (a chat message, a moderator's
    reason); :class:`ValueError` naming its first control character or direction
    override."""
    return _no_bidi_overrides(_no_control_characters(text))


ChatText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=300),
    _CLEAN,
    AfterValidator(_no_bidi_overrides),
    _SHOWN,
]
"""A chat message: no control characters, no direction overrides (which would turn
the text around it in the page)."""
Reason = Annotated[str, StringConstraints(min_length=1, max_length=500), _CLEAN, _NO_CONTROL]


class _Strict(BaseModel):
    """A request body: unknown fields, numbers given as booleans or text, and text with
    control characters are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every refusal: ``{"error": {"code": ..., "message": ...}}`` with a 4xx status."""

    error: ErrorDetail


class GuestRequest(_Strict):
    name: GuestName | None = None


class CredentialsRequest(_Strict):
    """Sign in: a username as it was registered (or one that compares equal to it)."""

    username: Username
    password: Password


class RegistrationRequest(CredentialsRequest):
    """A new account. The username is checked by
    :func:`nard.server.usernames.check_username` (on its NFKC form: letters of one
    script, their marks, digits of one system, ``. - _``), whose message names what
    is wrong."""

    username: Annotated[
        Username,
        _documented(
            minLength=MIN_LENGTH,
            maxLength=MAX_LENGTH,
            description=f"{MIN_LENGTH}-{MAX_LENGTH} characters once normalised (NFKC)",
        ),
    ]


class PasswordRequest(_Strict):
    current: CurrentPassword
    new: Password


class Me(BaseModel):
    id: int
    name: str
    guest: bool
    csrf_token: str
    username: str | None = None
    """The account's username (its profile is ``/players/{username}``); None for a guest."""


class TimeControlSpec(_Strict):
    """A custom time control: ``delay`` seconds free per decision, then ``reserve``
    seconds per player (per point of the match when ``per_point``; docs/clocks.md)."""

    delay: float = Field(ge=0, le=3600)
    reserve: float = Field(ge=0, le=86400)
    per_point: StrictBool = True


class NewTableRequest(_Strict):
    """A new table: against the computer (``opponent: "computer"``, ``level``), a
    person (an invite link; ``public`` also lists it in the lobby), or a chouette of
    ``players`` (3-8; ``computers`` of them the computer at ``level``, the other
    seats open to people; money play). The dice contributions come afterwards,
    once the server's commitment is known (``POST /api/tables/{id}/seed``)."""

    opponent: Literal["computer", "person", "chouette"] = "computer"
    level: Annotated[Level, Field(strict=False)] = Level.EXPERT
    seat: StrictInt = Field(default=0, ge=0, le=1, description="0 (white) or 1 (black)")
    match_length: StrictInt = Field(default=5, ge=0, le=64, description="0 for money play")
    cube: StrictBool = True
    crawford: StrictBool = True
    holland: StrictBool = False
    jacoby: StrictBool = False
    beavers: StrictBool = False
    raccoons: StrictBool = False
    automatic_doubles: StrictInt = Field(default=0, ge=0, le=6)
    backgammon: StrictInt = Field(default=3, ge=2, le=3, description="what a backgammon counts")
    public: StrictBool = False
    players: StrictInt = Field(default=3, ge=3, le=8)
    computers: StrictInt = Field(default=0, ge=0, le=7)
    rated: StrictBool = Field(
        default=False,
        description="a rated match (accounts only, match play; docs/ratings.md)",
    )
    time_control: Literal["untimed", "bullet", "blitz", "standard"] | TimeControlSpec = Field(
        default="untimed",
        description="a preset (bullet 6 s + 30 s a point, blitz 10 s + 1 min a point, "
        "standard 15 s + 2 min a point) or a custom one; docs/clocks.md",
    )


class JoinRequest(_Strict):
    invite: Invite | None = None
    contribution: Seed | None = Field(
        default=None, description="the joiner's contribution to the dice, if given at once"
    )


class ContributionRequest(_Strict):
    """A seated person's contribution to the dice (docs/fair-dice.md): 1-64 characters
    of their choosing, sent after seeing the server's commitment."""

    contribution: Seed


class AnalysisRequest(_Strict):
    """Analyse the finished table's match at ``plies`` (0, 1 or 2; docs/analysis.md)."""

    plies: int = Field(default=2, ge=0, le=2)


class RolloutRequest(_Strict):
    """Roll out the seat to act's decision: ``trials`` (36-2592, rounded up to whole
    blocks of 36), each cut after ``truncate`` turns (1-25), the cube turned inside
    the trials when ``cubeful``, the dice from ``seed``."""

    trials: StrictInt = Field(default=324, ge=36, le=2592)
    truncate: StrictInt = Field(default=11, ge=1, le=25)
    cubeful: StrictBool = False
    seed: StrictInt = Field(default=1, ge=0, le=2**31 - 1)


class ActionRequest(_Strict):
    """One action in the caller's seat; ``seq`` (optional) is the number of actions
    the caller has seen, refused with 409 if the table moved on."""

    action: ActionName
    play: PlayText | None = None
    points: StrictInt | None = None
    seq: StrictInt | None = Field(default=None, ge=0)


class SeatView(BaseModel):
    name: str
    kind: Literal["person", "computer", "open"]
    level: str | None


class LegalPlay(BaseModel):
    """A legal play: its text, its moves and the board after it, from the mover's side
    (points 1-24 the mover's, 25 its bar, 0 the opponent's bar)."""

    play: str
    moves: list[list[int]]
    result: str
    board: list[int]


class ResultView(BaseModel):
    winner: int
    kind: str
    cube: int
    points: int


class HistoryEntry(BaseModel):
    seat: int
    kind: str
    dice: list[int] | None = None
    play: str | None = None
    cube: int | None = None
    resign: int | None = None


class GameView(BaseModel):
    board: list[int] = Field(description="26 counts from seat 0's side: + seat 0, - seat 1")
    off: list[int]
    pips: list[int]
    position_id: str
    on_roll: int
    turn: int
    decision: str
    dice: list[int] | None
    cube: int
    cube_owner: int | None
    cube_in_play: bool
    legal_actions: list[str]
    legal_plays: list[LegalPlay]
    resignation: int | None
    result: ResultView | None
    history: list[HistoryEntry]


class ContributionView(BaseModel):
    seat: int
    given: bool
    seed: str | None
    source: Literal["player", "timeout"] | None


class TableView(BaseModel):
    """A table as one client sees it. ``you`` is the caller's seat (None: watching);
    ``side`` the game's player the caller plays (0 or 1; in a chouette 0 is the box,
    1 the team); ``score`` is by seat (a chouette's standings); ``waiting_for`` the
    seats whose answer the table waits for."""

    id: str
    kind: Literal["match", "money", "chouette"]
    status: Literal["waiting", "seeding", "playing", "finished"]
    rules: dict[str, int | bool]
    seats: list[SeatView]
    you: int | None
    side: int | None
    you_act: bool
    roles: list[str]
    waiting_for: list[int]
    votes: list[int]
    score: list[int]
    match_length: int
    game_number: int
    crawford: bool
    seq: int
    to_act: int | None
    dice_commitment: str
    client_seed: str | None = Field(description="formed from the contributions once all are in")
    contributions: list[ContributionView]
    you_contribute: bool = Field(description="the caller's contribution is awaited")
    seed_deadline: str | None = Field(description="when missing contributions time out")
    server_seed: str | None
    game: GameView | None
    results: list[ResultView] = Field(
        description="each finished game's result, in order (winner: a side of the game)"
    )
    winner: int | None
    between_games: bool
    invite: str | None = None
    abandoned: bool = Field(
        default=False, description="ended unfinished by its player (POST .../abandon)"
    )
    rated: bool = Field(default=False, description="a rated match (docs/ratings.md)")
    clock: ClockView | None = Field(default=None, description="the clocks; null: untimed")
    timed_out: int | None = Field(default=None, description="the seat whose time ran out")


class ClockView(BaseModel):
    """The table's clocks (docs/clocks.md), in milliseconds of the server's clock: a
    page counts down from ``deadline_ms - now_ms``, not from its own clock."""

    control: dict[str, Any]
    delay_ms: int
    reserve_ms: list[int]
    running: int | None
    started_ms: int | None
    deadline_ms: int | None
    now_ms: int
    timed_out: int | None


class TableSummary(BaseModel):
    id: str
    status: str
    seats: list[SeatView]
    match_length: int
    created_at: str
    analysed: int | None = None
    """The depth (plies) of the deepest finished analysis of the match, if any."""
    rated: bool = False
    time_control: dict[str, Any] | None = None
    seek: dict[str, Any] | None = None
    """A lobby seek's rating range (``min_rating``, ``max_rating``)."""
    host_rating: float | None = None
    """The rating of the player who set the table up (accounts)."""
    rematch_of: str | None = None


class SeekRequest(_Strict):
    """Find an opponent (docs/server.md, "Matchmaking"): joins the oldest open seek
    this one fits, or waits in the lobby."""

    match_length: StrictInt = Field(default=5, ge=1, le=64)
    time_control: Literal["untimed", "bullet", "blitz", "standard"] | TimeControlSpec = "untimed"
    rated: StrictBool = False
    min_rating: float | None = Field(default=None, ge=0, le=4000)
    max_rating: float | None = Field(default=None, ge=0, le=4000)


class ChallengeRequest(NewTableRequest):
    """Challenge the account ``username`` to the table these settings describe."""

    username: Username


class ChatRequest(_Strict):
    """A chat message (1-300 characters, no control characters)."""

    text: ChatText


class ReportRequest(_Strict):
    """Report a player to the moderators: why, and the chat message (whose author is
    reported) or the account's ``username``."""

    username: Username | None = None
    reason: Reason
    message_id: StrictInt | None = None
    table_id: Invite | None = None


PositionText = Annotated[str, StringConstraints(min_length=1, max_length=120), _CLEAN, _NO_CONTROL]
"""A Position ID, ``POSITION_ID:MATCH_ID`` (gnubg) or ``XGID=...``."""
Die = Annotated[int, Field(strict=True, ge=1, le=6)]


class EngineMoveRequest(_Strict):
    """The plays of ``dice`` (or the ID's) at ``position``, as ``level`` ranks them."""

    position: PositionText
    dice: Annotated[list[Die], Field(min_length=2, max_length=2)] | None = None
    level: Annotated[Level, Field(strict=False)] = Level.EXPERT


class EngineCubeRequest(_Strict):
    """The cube decision of the side on roll at ``position``, before it rolls."""

    position: PositionText
    level: Annotated[Level, Field(strict=False)] = Level.EXPERT


class EngineEvalRequest(_Strict):
    """The probabilities and equities of ``position`` at ``plies`` (0-2)."""

    position: PositionText
    plies: StrictInt = Field(default=0, ge=0, le=2)


class RatedMatch(BaseModel):
    """One rated match in a player's history (docs/ratings.md)."""

    table_id: str
    at: str
    won: bool
    match_length: int
    opponent: str
    opponent_rating: float
    rating_before: float
    rating_after: float


class Profile(BaseModel):
    """A player's page: rating, experience, results and the analyses' average."""

    name: str
    username: str | None
    rating: float
    experience: int
    rated_matches: int
    rated_wins: int
    rank: int | None
    """The place on the leaderboard (None before a rated match)."""
    matches_finished: int
    average_error_rate: float | None
    """The mean of the player's overall error rates (mEMG) over analysed matches."""
    analysed_matches: int
    history: list[RatedMatch]
    recent: list[TableSummary]
    since: str


class LeaderboardEntry(BaseModel):
    rank: int
    name: str
    username: str
    rating: float
    experience: int
    rated_matches: int


class ConflictBody(ErrorBody):
    """A refusal about the table's state (409): the table as it now is comes with it."""

    table: TableView | None = None


class Health(BaseModel):
    status: Literal["ok", "ready", "starting", "degraded", "unavailable"]
    version: str | None = None
    """nard's version, in every answer: which code a process of a fleet runs."""
    database: str | None = None
    migration: str | None = None
    """The database's schema against this code's: ``current``, ``ahead of this server:
    REV`` (newer code migrated it: this process is due to be replaced) or ``behind
    this server: REV``."""
    redis: str | None = None
    engine: Literal["warm", "warming"] | None = None
