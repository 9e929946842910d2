"""The HTTP API's request and response bodies (pydantic), apart from the domain types.

These are what the OpenAPI document (``/openapi.json``) describes and what the
page's client is written against.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from nard.engine import Level

__all__ = [
    "ActionRequest",
    "CredentialsRequest",
    "ErrorBody",
    "GameView",
    "GuestRequest",
    "HistoryEntry",
    "JoinRequest",
    "LegalPlay",
    "Me",
    "NewTableRequest",
    "PasswordRequest",
    "ResultView",
    "SeatView",
    "TableSummary",
    "TableView",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every refusal: ``{"error": {"code": ..., "message": ...}}`` with a 4xx status."""

    error: ErrorDetail


class GuestRequest(_Strict):
    name: str | None = Field(default=None, min_length=1, max_length=24, pattern=r"^[\w .\-]+$")


class CredentialsRequest(_Strict):
    username: str = Field(min_length=3, max_length=24, pattern=r"^[\w.\-]+$")
    password: str = Field(min_length=8, max_length=200)


class PasswordRequest(_Strict):
    current: str = Field(min_length=1, max_length=200)
    new: str = Field(min_length=8, max_length=200)


class Me(BaseModel):
    id: int
    name: str
    guest: bool
    csrf_token: str


class NewTableRequest(_Strict):
    """A new table: against the computer (``opponent: "computer"``, ``level``), a
    person (an invite link; ``public`` also lists it in the lobby), or a chouette of
    ``players`` (3-8; ``computers`` of them the computer at ``level``, the other
    seats open to people; money play)."""

    opponent: Literal["computer", "person", "chouette"] = "computer"
    level: Level = Level.EXPERT
    seat: Literal[0, 1] = 0
    match_length: int = Field(default=5, ge=0, le=64, description="0 for money play")
    cube: bool = True
    crawford: bool = True
    holland: bool = False
    jacoby: bool = False
    beavers: bool = False
    raccoons: bool = False
    automatic_doubles: int = Field(default=0, ge=0, le=6)
    backgammon: Literal[2, 3] = 3
    public: bool = False
    client_seed: str | None = Field(default=None, min_length=1, max_length=64)
    players: int = Field(default=3, ge=3, le=8)
    computers: int = Field(default=0, ge=0, le=7)


class JoinRequest(_Strict):
    invite: str | None = Field(default=None, max_length=64)


class ActionRequest(_Strict):
    """One action in the caller's seat; ``seq`` (optional) is the number of actions
    the caller has seen, refused with 409 if the table moved on."""

    action: str = Field(max_length=20)
    play: str | None = Field(default=None, max_length=200)
    points: int | None = None
    seq: int | None = Field(default=None, ge=0)


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


class TableView(BaseModel):
    """A table as one client sees it. ``you`` is the caller's seat (None: watching);
    ``side`` the game's player the caller plays (0 or 1; in a chouette 0 is the box,
    1 the team); ``score`` is by seat (a chouette's standings); ``waiting_for`` the
    seats whose answer the table waits for."""

    id: str
    kind: Literal["match", "money", "chouette"]
    status: Literal["waiting", "playing", "finished"]
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
    client_seed: str
    server_seed: str | None
    game: GameView | None
    winner: int | None
    between_games: bool
    invite: str | None = None


class TableSummary(BaseModel):
    id: str
    status: str
    seats: list[SeatView]
    match_length: int
    created_at: str
