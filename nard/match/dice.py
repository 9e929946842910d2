"""Dice sources: where a game's dice come from.

A game never calls a random number generator itself; it asks a
:class:`DiceSource`. Three are provided:

- :class:`SeededDice`, ordinary pseudo-random dice from a seed (local play,
  engine self-play, simulations);
- :class:`FixedDice`, a given sequence (tests, replaying a recorded game);
- :class:`FairDice`, provably fair dice for online play: the server commits to
  a secret seed before the match, every die is derived from it, and after the
  match the seed is revealed so that anyone can check every die with
  :func:`verify_rolls`. ``docs/fair-dice.md`` specifies the scheme.

>>> dice = FixedDice([(3, 1), (6, 4)])
>>> dice.opening_roll(), dice.roll()
((3, 1), (6, 4))
>>> fair = FairDice(bytes(range(32)), "nard")
>>> fair.opening_roll(), fair.roll(), fair.dice_used
((6, 3), (1, 2), 4)
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from nard.core.dice import Dice, check_dice, parse_dice
from nard.core.errors import InvalidDiceError, NardError

__all__ = [
    "CONTRIBUTION_MAX",
    "SEED_BYTES",
    "CommitmentMismatchError",
    "DiceExhaustedError",
    "DiceMismatch",
    "DiceSource",
    "FairDice",
    "FixedDice",
    "InvalidFairDiceError",
    "RecordingDice",
    "SeedRevealedError",
    "SeededDice",
    "check_contribution",
    "combine_contributions",
    "fair_die",
    "seed_commitment",
    "verify_rolls",
]

SEED_BYTES = 32
"""Length of a :class:`FairDice` server seed in bytes (64 hex digits)."""

# 252 = 6 * 42 is the largest multiple of 6 that fits in a byte: bytes 0-251
# map onto the six faces exactly 42 times each; 252-255 would bias 1-4.
_ACCEPT_BELOW = 252

_HEX_64 = re.compile(r"[0-9a-fA-F]{64}")

CONTRIBUTION_MAX = 64
"""The most characters (Python ``len``, i.e. code points) in one player's contribution."""

# Unicode's control characters (general category Cc: U+0000-U+001F, U+007F-U+009F)
# and the line and paragraph separators: a contribution is one line of visible text,
# and "\n" separates the contributions in the client seed.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class DiceExhaustedError(NardError):
    """A :class:`FixedDice` was asked for more rolls than it was given."""


class SeedRevealedError(NardError):
    """A :class:`FairDice` was rolled after its server seed was revealed."""


class InvalidFairDiceError(NardError, ValueError):
    """Malformed input to the fair-dice scheme: a seed, commitment, client seed or counter."""


class CommitmentMismatchError(NardError, ValueError):
    """A revealed server seed whose SHA-256 is not the published commitment."""


@runtime_checkable
class DiceSource(Protocol):
    """Anything a game can take its dice from."""

    def roll(self) -> Dice:
        """The two dice of one turn."""
        ...

    def opening_roll(self) -> Dice:
        """One die for each player, player 0's first.

        Equal dice are returned as they are: re-rolling (or an automatic
        double) is the game's decision, not the source's.
        """
        ...


class SeededDice:
    """Pseudo-random dice from :class:`random.Random`, repeatable from ``seed``.

    >>> a, b = SeededDice(7), SeededDice(7)
    >>> [a.roll() for _ in range(3)] == [b.roll() for _ in range(3)]
    True
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def __repr__(self) -> str:
        return f"SeededDice({self.seed!r})"

    def _die(self) -> int:
        return self._rng.randint(1, 6)

    def roll(self) -> Dice:
        """The two dice of one turn."""
        return (self._die(), self._die())

    def opening_roll(self) -> Dice:
        """One die for player 0, then one for player 1 (equal dice included)."""
        return (self._die(), self._die())


class FixedDice:
    """A given sequence of rolls, each written as a pair or as text (``"64"``).

    Every call to :meth:`roll` or :meth:`opening_roll` takes the next pair
    (for an opening roll: player 0's die, then player 1's).

    >>> dice = FixedDice(["6-4", (2, 2)])
    >>> dice.roll(), dice.remaining
    ((6, 4), 1)
    >>> dice.roll(), dice.roll()
    Traceback (most recent call last):
    ...
    nard.match.dice.DiceExhaustedError: fixed dice exhausted: all 2 rolls used
    >>> FixedDice([(6, 4), (0, 3)])
    Traceback (most recent call last):
    ...
    nard.core.errors.InvalidDiceError: roll 1: invalid dice (0, 3): each die must be 1-6
    """

    def __init__(self, rolls: Iterable[Sequence[int] | str]) -> None:
        checked: list[Dice] = []
        for i, dice in enumerate(rolls):
            try:
                checked.append(parse_dice(dice) if isinstance(dice, str) else check_dice(dice))
            except InvalidDiceError as e:
                raise InvalidDiceError(f"roll {i}: {e}") from None
        self.rolls: tuple[Dice, ...] = tuple(checked)
        self._next = 0

    def __repr__(self) -> str:
        return f"FixedDice({list(self.rolls)!r}, used={self._next})"

    @property
    def remaining(self) -> int:
        """How many rolls are left."""
        return len(self.rolls) - self._next

    def roll(self) -> Dice:
        """The next pair; :class:`DiceExhaustedError` when none is left."""
        if self._next >= len(self.rolls):
            raise DiceExhaustedError(f"fixed dice exhausted: all {len(self.rolls)} rolls used")
        dice = self.rolls[self._next]
        self._next += 1
        return dice

    def opening_roll(self) -> Dice:
        """The next pair, read as player 0's die then player 1's."""
        return self.roll()


class RecordingDice:
    """Another source's dice, each die kept in :attr:`log` in the order drawn.

    Tied opening rolls are kept too, so that a match played with
    :class:`FairDice` can be checked die by die against the revealed seed.

    >>> dice = RecordingDice(FixedDice([(4, 4), (3, 1)]))
    >>> dice.opening_roll(), dice.opening_roll(), dice.log
    ((4, 4), (3, 1), [4, 4, 3, 1])
    """

    def __init__(self, source: DiceSource) -> None:
        self.source = source
        self.log: list[int] = []

    def roll(self) -> Dice:
        dice = self.source.roll()
        self.log.extend(dice)
        return dice

    def opening_roll(self) -> Dice:
        dice = self.source.opening_roll()
        self.log.extend(dice)
        return dice


def _check_server_seed(server_seed: bytes) -> bytes:
    if not isinstance(server_seed, bytes | bytearray) or len(server_seed) != SEED_BYTES:
        raise InvalidFairDiceError(
            f"invalid server_seed {server_seed!r}: expected {SEED_BYTES} bytes"
        )
    return bytes(server_seed)


def _check_client_seed(client_seed: str) -> str:
    if not isinstance(client_seed, str):
        raise InvalidFairDiceError(f"invalid client_seed {client_seed!r}: expected a string")
    try:
        client_seed.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidFairDiceError(
            f"invalid client_seed {client_seed!r}: not encodable as UTF-8"
        ) from None
    return client_seed


def check_contribution(text: str) -> str:
    r"""``text`` if it is a valid contribution to the client seed.

    Otherwise :class:`InvalidFairDiceError` names the problem.

    A contribution is 1 to 64 characters (code points, as Python's ``len``
    counts them) with no control character (Unicode category Cc, which
    includes newline, tab and NUL) and no U+2028 or U+2029. Being text, it
    must also be encodable as UTF-8 (no lone surrogate). Positions in the
    messages count characters from 1.

    >>> check_contribution("ann-7f3a")
    'ann-7f3a'
    >>> check_contribution("")
    Traceback (most recent call last):
    ...
    nard.match.dice.InvalidFairDiceError: invalid contribution '': it is empty (1-64 characters)
    >>> try:
    ...     check_contribution("ann\tbob")
    ... except InvalidFairDiceError as e:
    ...     print(e)
    invalid contribution 'ann\tbob': control character U+0009 at position 4
    """
    if not isinstance(text, str):
        raise InvalidFairDiceError(f"invalid contribution {text!r}: expected a string")
    if not text:
        raise InvalidFairDiceError(
            f"invalid contribution {text!r}: it is empty (1-{CONTRIBUTION_MAX} characters)"
        )
    if len(text) > CONTRIBUTION_MAX:
        raise InvalidFairDiceError(
            f"invalid contribution {text[:16]!r}...: too long, {len(text)} characters "
            f"(at most {CONTRIBUTION_MAX})"
        )
    control = _CONTROL.search(text)
    if control:
        raise InvalidFairDiceError(
            f"invalid contribution {text!r}: control character U+{ord(control.group()):04X} "
            f"at position {control.start() + 1}"
        )
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udfff":
            raise InvalidFairDiceError(
                f"invalid contribution {text!r}: lone surrogate U+{ord(ch):04X} at position "
                f"{i + 1} (not encodable as UTF-8)"
            )
    return text


def combine_contributions(seeds: Sequence[str]) -> str:
    r"""The client seed: the seats' contributions in seat order joined by a line feed.

    A seat that did not contribute before the deadline gives ``""`` (so no
    contribution is checked here: see :func:`check_contribution`). With one
    contribution the client seed is that contribution itself.

    >>> combine_contributions(["ann-7f3a", "bob-19c2"])
    'ann-7f3a\nbob-19c2'
    >>> combine_contributions(["ann-7f3a", ""]), combine_contributions(["nard"])
    ('ann-7f3a\n', 'nard')
    """
    return "\n".join(seeds)


def _check_counter(counter: int) -> int:
    if isinstance(counter, bool) or not isinstance(counter, int) or counter < 0:
        raise InvalidFairDiceError(f"invalid counter {counter!r}: expected an integer 0 or greater")
    return counter


def _parse_hex_64(text: str, field: str) -> bytes:
    stripped = text.strip() if isinstance(text, str) else text
    if not isinstance(stripped, str) or not _HEX_64.fullmatch(stripped):
        raise InvalidFairDiceError(f"invalid {field} {text!r}: expected 64 hex digits")
    return bytes.fromhex(stripped)


def _messages(client_seed: str, counter: int) -> Iterator[str]:
    """The HMAC messages of die ``counter``, in the order they are tried."""
    yield f"{client_seed}:{counter}"
    k = 1
    while True:
        yield f"{client_seed}:{counter}:{k}"
        k += 1


def _face(digests: Iterable[bytes]) -> int:
    """The face given by the first byte below 252 across ``digests``."""
    for digest in digests:
        for b in digest:
            if b < _ACCEPT_BELOW:
                return b % 6 + 1
    raise AssertionError("unreachable: the messages never run out")


def _die(server_seed: bytes, client_seed: str, counter: int) -> int:
    # Inputs already checked: the per-die path of FairDice and verify_rolls.
    return _face(
        hmac.digest(server_seed, m.encode("utf-8"), "sha256")
        for m in _messages(client_seed, counter)
    )


def seed_commitment(server_seed: bytes) -> str:
    """The published commitment: SHA-256 of the server seed, 64 lowercase hex digits.

    >>> seed_commitment(bytes(range(32)))
    '630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd'
    """
    return hashlib.sha256(_check_server_seed(server_seed)).hexdigest()


def fair_die(server_seed: bytes, client_seed: str, counter: int) -> int:
    """Die number ``counter`` (0 for the match's first die) of the fair-dice scheme.

    HMAC-SHA256 with key ``server_seed`` over the UTF-8 message
    ``f"{client_seed}:{counter}"`` gives 32 bytes; the first byte below 252
    gives the face ``byte % 6 + 1``. If all 32 are 252 or more, the messages
    ``f"{client_seed}:{counter}:{k}"`` for k = 1, 2, ... continue the stream.

    >>> [fair_die(bytes(range(32)), "nard", n) for n in range(4)]
    [6, 3, 1, 2]
    >>> fair_die(bytes(range(32)), "nard", -1)
    Traceback (most recent call last):
    ...
    nard.match.dice.InvalidFairDiceError: invalid counter -1: expected an integer 0 or greater
    """
    return _die(
        _check_server_seed(server_seed), _check_client_seed(client_seed), _check_counter(counter)
    )


class FairDice:
    """Provably fair dice: every die derives from a committed secret seed.

    Before the match the server publishes :attr:`commitment` (SHA-256 of the
    secret ``server_seed``) and learns the player's ``client_seed``; die number
    n of the match (opening-roll dice included) is
    ``fair_die(server_seed, client_seed, n)``. After the match :meth:`reveal`
    gives the seed, and :func:`verify_rolls` checks every recorded die.

    ``dice_used`` resumes a match whose first dice were already rolled. The
    ``repr`` never shows the secret seed.

    >>> fair = FairDice.new("nard", rng=random.Random(1))
    >>> len(fair.commitment), fair.client_seed, fair.dice_used
    (64, 'nard', 0)
    >>> seed_hex = fair.reveal()
    >>> fair.roll()
    Traceback (most recent call last):
    ...
    nard.match.dice.SeedRevealedError: the server seed was revealed after 0 dice: no more rolls
    """

    def __init__(self, server_seed: bytes, client_seed: str, *, dice_used: int = 0) -> None:
        self._server_seed = _check_server_seed(server_seed)
        self.client_seed = _check_client_seed(client_seed)
        self.commitment = hashlib.sha256(self._server_seed).hexdigest()
        self._counter = _check_counter(dice_used)
        self._revealed = False

    @classmethod
    def new(cls, client_seed: str, *, rng: random.Random | None = None) -> FairDice:
        """A source with a fresh secret seed: from :mod:`secrets`, or from ``rng`` in tests."""
        seed = secrets.token_bytes(SEED_BYTES) if rng is None else rng.randbytes(SEED_BYTES)
        return cls(seed, client_seed)

    def __repr__(self) -> str:
        return (
            f"FairDice(commitment={self.commitment!r}, client_seed={self.client_seed!r}, "
            f"dice_used={self._counter}, revealed={self._revealed})"
        )

    @property
    def dice_used(self) -> int:
        """How many dice have been rolled: the counter of the next die."""
        return self._counter

    @property
    def is_revealed(self) -> bool:
        """Whether :meth:`reveal` was called (no more rolls then)."""
        return self._revealed

    def _next_die(self) -> int:
        if self._revealed:
            raise SeedRevealedError(
                f"the server seed was revealed after {self._counter} dice: no more rolls"
            )
        die = _die(self._server_seed, self.client_seed, self._counter)
        self._counter += 1
        return die

    def roll(self) -> Dice:
        """The two dice of one turn (two consecutive counters)."""
        return (self._next_die(), self._next_die())

    def opening_roll(self) -> Dice:
        """Player 0's die, then player 1's (two consecutive counters)."""
        return (self._next_die(), self._next_die())

    def upcoming_roll(self) -> Dice:
        """The dice the next :meth:`roll` will give, without rolling them: for the
        holder of the seed alone (a server preparing its own computer's play while
        that computer decides, without them, whether to double). Never to be shown.

        >>> fair = FairDice(bytes(range(32)), "nard")
        >>> fair.upcoming_roll() == fair.roll(), fair.dice_used
        (True, 2)
        """
        if self._revealed:
            raise SeedRevealedError(
                f"the server seed was revealed after {self._counter} dice: no more rolls"
            )
        return (
            _die(self._server_seed, self.client_seed, self._counter),
            _die(self._server_seed, self.client_seed, self._counter + 1),
        )

    def reveal(self) -> str:
        """The server seed as 64 hex digits; the source rolls no more after this."""
        self._revealed = True
        return self._server_seed.hex()


@dataclass(frozen=True, slots=True)
class DiceMismatch:
    """A recorded die that the revealed seed does not give."""

    index: int
    """Position in the recorded dice, which is also the die's counter."""
    expected: int
    """The die the seed gives."""
    recorded: int
    """The die in the record."""


def verify_rolls(
    server_seed_hex: str, commitment_hex: str, client_seed: str, dice: Sequence[int]
) -> list[DiceMismatch]:
    """Check a match's dice against the revealed seed; return the mismatches.

    ``dice`` are all the match's dice in the order rolled, flattened (die n
    has counter n). An empty list means every die is what the seed gives.
    A seed whose SHA-256 is not the commitment raises
    :class:`CommitmentMismatchError`; malformed hex raises
    :class:`InvalidFairDiceError`.

    >>> seed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    >>> commitment = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    >>> verify_rolls(seed, commitment, "nard", [6, 3, 1, 2])
    []
    >>> verify_rolls(seed, commitment, "nard", [6, 3, 1, 6])
    [DiceMismatch(index=3, expected=2, recorded=6)]
    """
    server_seed = _parse_hex_64(server_seed_hex, "server_seed_hex")
    committed = _parse_hex_64(commitment_hex, "commitment_hex").hex()
    actual = hashlib.sha256(server_seed).hexdigest()
    if actual != committed:
        raise CommitmentMismatchError(
            f"server seed {server_seed_hex!r} does not match the commitment: "
            f"its SHA-256 is {actual!r} but the commitment is {committed!r}"
        )
    client_seed = _check_client_seed(client_seed)
    mismatches = []
    for n, recorded in enumerate(dice):
        expected = _die(server_seed, client_seed, n)
        if recorded != expected:
            mismatches.append(DiceMismatch(n, expected, recorded))
    return mismatches
