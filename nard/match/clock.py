"""Time controls: a delay per decision plus a reserve per player (docs/clocks.md).

A player's clock runs from the moment the table starts waiting for them (to roll
or double, to move, to take or pass, to answer a resignation) until their action
is committed. The first ``delay`` seconds of each wait are free; the rest comes
out of the player's reserve. A player whose reserve runs out loses: the match, or
in a money session the game in play (at the cube, a gammon if they have borne off
no checker) and the session ends.

Times are whole milliseconds from the server's clock (``at``), so that a table
rebuilt from its stored actions has exactly the clocks it had.

>>> blitz = PRESETS["blitz"]
>>> blitz.reserve_for(5), blitz.delay
(300.0, 10.0)
>>> clocks = Clocks(blitz, 5)
>>> clocks.start(0, at=1_000)
>>> clocks.deadline()  # 10 s of delay, then 300 s of reserve
311000
>>> clocks.stop(at=13_500)  # 12.5 s taken: 2.5 s out of the reserve
2500
>>> clocks.reserves
[297500, 300000]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PRESETS", "Clocks", "TimeControl", "TimeControlError"]


class TimeControlError(ValueError):
    """A time control that cannot be: negative, too long, or malformed."""


MAX_SECONDS = 24 * 3600.0
"""The longest delay, or reserve per point, a table may set (a day)."""


@dataclass(frozen=True)
class TimeControl:
    """``delay`` seconds free at every decision, then ``reserve`` seconds per player
    (per point of the match's length when ``per_point``; per game in money play)."""

    delay: float
    reserve: float
    per_point: bool = True

    def __post_init__(self) -> None:
        for name in ("delay", "reserve"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TimeControlError(f"{name} must be a number of seconds, not {value!r}")
            if not 0 <= value <= MAX_SECONDS or value != value:
                raise TimeControlError(f"{name} must be 0 to {MAX_SECONDS:.0f} s, not {value!r}")
        if self.delay + self.reserve <= 0:
            raise TimeControlError("a time control needs some time: a delay or a reserve")

    def reserve_for(self, match_length: int) -> float:
        """Each player's reserve in seconds at the start (of the match; in money play,
        of each game)."""
        return self.reserve * max(1, match_length) if self.per_point else self.reserve

    def to_json(self) -> dict[str, Any]:
        return {"delay": self.delay, "reserve": self.reserve, "per_point": self.per_point}

    @classmethod
    def from_json(cls, data: Any) -> TimeControl:
        if not isinstance(data, dict) or set(data) - {"delay", "reserve", "per_point"}:
            raise TimeControlError(f"a time control is {{delay, reserve, per_point}}, not {data!r}")
        per_point = data.get("per_point", True)
        if not isinstance(per_point, bool):
            raise TimeControlError(f"per_point must be true or false, not {per_point!r}")
        return cls(data.get("delay", 0.0), data.get("reserve", 0.0), per_point)


PRESETS: dict[str, TimeControl] = {
    "bullet": TimeControl(delay=6.0, reserve=30.0),
    "blitz": TimeControl(delay=10.0, reserve=60.0),
    "standard": TimeControl(delay=15.0, reserve=120.0),
}
"""The named time controls (per point of the match); "untimed" is no control."""


class Clocks:
    """The two players' clocks at a table: reserves left (ms), and whose clock runs
    since when."""

    def __init__(self, control: TimeControl, match_length: int, seats: int = 2) -> None:
        self.control = control
        self.full = round(control.reserve_for(match_length) * 1000)
        self.delay = round(control.delay * 1000)
        self.reserves = [self.full] * seats
        self.running: int | None = None
        self.started: int | None = None

    def start(self, seat: int, at: int) -> None:
        """``seat``'s clock starts at ``at`` (ms)."""
        self.running, self.started = seat, at

    def stop(self, at: int) -> int:
        """The running clock stops at ``at``: its player's reserve pays what the wait
        took beyond the delay; that charge (ms), 0 when no clock ran."""
        if self.running is None or self.started is None:
            return 0
        charge = max(0, at - self.started - self.delay)
        self.reserves[self.running] -= charge
        self.running = self.started = None
        return charge

    def refill(self) -> None:
        """Every reserve full again (a new money game)."""
        self.reserves = [self.full] * len(self.reserves)

    def deadline(self) -> int | None:
        """When the running player's time is up (ms), or None."""
        if self.running is None or self.started is None:
            return None
        return self.started + self.delay + max(0, self.reserves[self.running])

    def expired(self, now: int) -> int | None:
        """The seat whose time is up at ``now``, or None."""
        deadline = self.deadline()
        return self.running if deadline is not None and now >= deadline else None

    def view(self, now: int) -> dict[str, Any]:
        """What a client is sent: the control, the reserves, whose clock runs, since
        when and until when, and the server's time (to count down without trusting
        the client's clock)."""
        return {
            "control": self.control.to_json(),
            "delay_ms": self.delay,
            "reserve_ms": list(self.reserves),
            "running": self.running,
            "started_ms": self.started,
            "deadline_ms": self.deadline(),
            "now_ms": now,
        }
