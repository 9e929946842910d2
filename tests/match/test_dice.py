"""Dice sources: seeded, fixed and provably fair dice, and their verification."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import io
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from nard.core.errors import InvalidDiceError, NardError
from nard.match import dice as dice_module
from nard.match.dice import (
    CommitmentMismatchError,
    DiceExhaustedError,
    DiceMismatch,
    DiceSource,
    FairDice,
    FixedDice,
    InvalidFairDiceError,
    SeededDice,
    SeedRevealedError,
    check_contribution,
    combine_contributions,
    fair_die,
    seed_commitment,
    verify_rolls,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "fair-dice.md"

EXAMPLE_SEED = bytes(range(32))
EXAMPLE_SEED_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
EXAMPLE_COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
EXAMPLE_DICE = [6, 3, 1, 2, 3, 1, 6, 6, 6, 5]
# docs/fair-dice.md's example with two players' contributions to the client seed
EXAMPLE_CONTRIBUTIONS = ["ann-7f3a", "bob-19c2"]
EXAMPLE_CLIENT_SEED = "ann-7f3a\nbob-19c2"
EXAMPLE_CONTRIBUTION_DICE = [6, 5, 1, 2, 6, 5]


def reference_die(server_seed: bytes, client_seed: str, counter: int) -> int:
    """The scheme written out again, independently of nard.match.dice."""
    k = 0
    while True:
        suffix = f":{k}" if k else ""
        message = f"{client_seed}:{counter}{suffix}".encode()
        for b in hmac.new(server_seed, message, hashlib.sha256).digest():
            if b < 252:
                return b % 6 + 1
        k += 1


def chi_square(dice: Sequence[int]) -> float:
    counts = Counter(dice)
    assert set(counts) <= {1, 2, 3, 4, 5, 6}
    expected = len(dice) / 6
    return sum((counts[face] - expected) ** 2 / expected for face in range(1, 7))


# 5 degrees of freedom: P(chi2 > 30) is about 1.5e-5. The seeds are fixed, so
# the outcome is too; the bound only has to be honest, not tight.
CHI_SQUARE_BOUND = 30.0


# --- the protocol -----------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [SeededDice(1), FixedDice([(1, 2)]), FairDice(EXAMPLE_SEED, "nard")],
    ids=["seeded", "fixed", "fair"],
)
def test_every_source_is_a_dice_source(source: DiceSource) -> None:
    assert isinstance(source, DiceSource)


# --- SeededDice -------------------------------------------------------------


def test_seeded_dice_repeat_from_the_seed() -> None:
    a, b = SeededDice(2024), SeededDice(2024)
    assert [a.opening_roll()] + [a.roll() for _ in range(50)] == [b.opening_roll()] + [
        b.roll() for _ in range(50)
    ]


def test_seeded_dice_differ_between_seeds() -> None:
    a, b = SeededDice(1), SeededDice(2)
    assert [a.roll() for _ in range(20)] != [b.roll() for _ in range(20)]


def test_seeded_dice_are_uniform() -> None:
    source = SeededDice(5)
    dice = [d for _ in range(30_000) for d in source.roll()]
    assert chi_square(dice) < CHI_SQUARE_BOUND


def test_seeded_opening_roll_returns_equal_dice_as_they_are() -> None:
    source = SeededDice(3)
    openings = [source.opening_roll() for _ in range(200)]
    assert any(d0 == d1 for d0, d1 in openings)
    assert all(1 <= d <= 6 for roll in openings for d in roll)


# --- FixedDice --------------------------------------------------------------


def test_fixed_dice_give_the_sequence_in_order() -> None:
    source = FixedDice([(3, 3), "6-4", [2, 5], "11"])
    assert source.opening_roll() == (3, 3)
    assert source.roll() == (6, 4)
    assert source.remaining == 2
    assert source.roll() == (2, 5)
    assert source.roll() == (1, 1)
    assert source.remaining == 0


def test_fixed_dice_accept_any_iterable() -> None:
    source = FixedDice((d, 7 - d) for d in range(1, 4))
    assert [source.roll() for _ in range(3)] == [(1, 6), (2, 5), (3, 4)]


def test_fixed_dice_exhausted() -> None:
    source = FixedDice([(6, 5)])
    source.roll()
    with pytest.raises(DiceExhaustedError, match="all 1 rolls used"):
        source.roll()
    with pytest.raises(DiceExhaustedError):
        source.opening_roll()
    with pytest.raises(NardError):
        FixedDice([]).roll()


@pytest.mark.parametrize(
    ("rolls", "message"),
    [
        ([(6, 4), (0, 3)], r"roll 1: invalid dice \(0, 3\): each die must be 1-6"),
        ([(7, 1)], r"roll 0: invalid dice \(7, 1\)"),
        ([(1,)], r"roll 0: invalid dice \(1,\): expected two dice"),
        ([(1, 2, 3)], "expected two dice"),
        ([(True, 2)], "dice must be integers"),
        ([(1.0, 2)], "dice must be integers"),
        (["70"], r"roll 0: invalid dice '70'"),
    ],
)
def test_fixed_dice_validate_every_roll(rolls: list[object], message: str) -> None:
    with pytest.raises(InvalidDiceError, match=message) as info:
        FixedDice(rolls)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


# --- fair_die and the scheme ------------------------------------------------


def test_fair_die_matches_an_independent_implementation() -> None:
    for client_seed in ("nard", "", "a:b", "تخته‌نرد 🎲"):
        got = [fair_die(EXAMPLE_SEED, client_seed, n) for n in range(300)]
        assert got == [reference_die(EXAMPLE_SEED, client_seed, n) for n in range(300)]


def test_fair_die_is_deterministic_and_depends_on_every_input() -> None:
    other_seed = bytes(range(1, 33))
    first = [fair_die(EXAMPLE_SEED, "nard", n) for n in range(40)]
    assert first == [fair_die(EXAMPLE_SEED, "nard", n) for n in range(40)]
    assert first != [fair_die(other_seed, "nard", n) for n in range(40)]
    assert first != [fair_die(EXAMPLE_SEED, "nard2", n) for n in range(40)]
    assert first != [fair_die(EXAMPLE_SEED, "nard", n) for n in range(1, 41)]


def test_accepted_bytes_give_every_face_exactly_42_times() -> None:
    faces = Counter(dice_module._face([bytes([b])]) for b in range(252))
    assert faces == {face: 42 for face in range(1, 7)}


def test_fair_dice_are_uniform() -> None:
    dice = [fair_die(b"\x5a" * 32, "uniformity", n) for n in range(60_000)]
    assert chi_square(dice) < CHI_SQUARE_BOUND


def test_rejected_first_byte_takes_the_face_from_a_later_byte() -> None:
    counter = next(
        n
        for n in range(1000)
        if hmac.new(EXAMPLE_SEED, f"nard:{n}".encode(), hashlib.sha256).digest()[0] >= 252
    )
    digest = hmac.new(EXAMPLE_SEED, f"nard:{counter}".encode(), hashlib.sha256).digest()
    accepted = next(b for b in digest if b < 252)
    assert digest[0] >= 252
    assert counter == 74  # the doc's example
    assert accepted == digest[1] == 0xED
    assert fair_die(EXAMPLE_SEED, "nard", counter) == accepted % 6 + 1 == 4
    assert digest[0] % 6 + 1 != 4  # the biased shortcut would have given another face


def test_face_skips_whole_digests_of_rejected_bytes() -> None:
    rejected = bytes([252, 253, 254, 255] * 8)
    assert dice_module._face([rejected, rejected, bytes([255, 11])]) == 11 % 6 + 1


def test_messages_after_a_fully_rejected_digest() -> None:
    messages = dice_module._messages("nard", 12)
    assert [next(messages) for _ in range(4)] == ["nard:12", "nard:12:1", "nard:12:2", "nard:12:3"]


def test_fair_die_continues_with_the_k_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    real_digest = hmac.digest
    seen: list[bytes] = []

    def digest(key: bytes, msg: bytes, digest: str) -> bytes:
        seen.append(msg)
        if msg in (b"nard:5", b"nard:5:1"):
            return b"\xff" * 32  # every byte rejected
        return real_digest(key, msg, digest)

    monkeypatch.setattr(hmac, "digest", digest)  # the module nard.match.dice calls
    face = fair_die(EXAMPLE_SEED, "nard", 5)
    assert seen == [b"nard:5", b"nard:5:1", b"nard:5:2"]
    third = real_digest(EXAMPLE_SEED, b"nard:5:2", "sha256")
    assert face == next(b for b in third if b < 252) % 6 + 1


@pytest.mark.parametrize(
    ("server_seed", "client_seed", "counter", "message"),
    [
        (bytes(31), "nard", 0, r"invalid server_seed b'\\x00.*': expected 32 bytes"),
        (bytes(33), "nard", 0, "expected 32 bytes"),
        (EXAMPLE_SEED_HEX, "nard", 0, "expected 32 bytes"),
        (EXAMPLE_SEED, b"nard", 0, r"invalid client_seed b'nard': expected a string"),
        (EXAMPLE_SEED, "\udcff", 0, r"invalid client_seed '\\udcff': not encodable as UTF-8"),
        (EXAMPLE_SEED, "nard", -1, "invalid counter -1: expected an integer 0 or greater"),
        (EXAMPLE_SEED, "nard", True, "invalid counter True"),
        (EXAMPLE_SEED, "nard", 1.0, "invalid counter 1.0"),
    ],
)
def test_fair_die_rejects_bad_input(
    server_seed: object, client_seed: object, counter: object, message: str
) -> None:
    with pytest.raises(InvalidFairDiceError, match=message) as info:
        fair_die(server_seed, client_seed, counter)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_seed_commitment_is_sha256_of_the_raw_bytes() -> None:
    assert seed_commitment(EXAMPLE_SEED) == hashlib.sha256(EXAMPLE_SEED).hexdigest()
    assert seed_commitment(EXAMPLE_SEED) == EXAMPLE_COMMITMENT


# --- FairDice ---------------------------------------------------------------


def test_fair_dice_count_every_die_opening_roll_included() -> None:
    source = FairDice(EXAMPLE_SEED, "nard")
    assert source.commitment == EXAMPLE_COMMITMENT
    assert source.client_seed == "nard"
    assert source.dice_used == 0
    assert source.opening_roll() == (6, 3)  # player 0's die is die 0
    assert source.dice_used == 2
    assert [source.roll() for _ in range(4)] == [(1, 2), (3, 1), (6, 6), (6, 5)]
    assert source.dice_used == 10


def test_fair_dice_resume_from_a_counter() -> None:
    source = FairDice(EXAMPLE_SEED, "nard", dice_used=4)
    assert source.roll() == (3, 1)
    assert source.dice_used == 6


def test_fair_dice_new_uses_the_given_rng() -> None:
    a = FairDice.new("player", rng=random.Random(9))
    b = FairDice.new("player", rng=random.Random(9))
    assert a.commitment == b.commitment
    assert a.roll() == b.roll()
    assert a.reveal() == random.Random(9).randbytes(32).hex()


def test_fair_dice_new_without_rng_draws_a_secret_seed() -> None:
    source = FairDice.new("player")
    seed_hex = source.reveal()
    assert len(seed_hex) == 64
    assert hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest() == source.commitment


def test_fair_dice_roll_no_more_after_reveal() -> None:
    source = FairDice(EXAMPLE_SEED, "nard")
    source.roll()
    assert not source.is_revealed
    assert source.reveal() == EXAMPLE_SEED_HEX
    assert source.is_revealed
    with pytest.raises(SeedRevealedError, match="after 2 dice"):
        source.roll()
    with pytest.raises(SeedRevealedError):
        source.opening_roll()
    assert source.dice_used == 2
    assert source.reveal() == EXAMPLE_SEED_HEX


def test_fair_dice_repr_keeps_the_seed_secret() -> None:
    text = repr(FairDice(EXAMPLE_SEED, "nard"))
    assert EXAMPLE_SEED_HEX not in text
    assert repr(EXAMPLE_SEED) not in text
    assert EXAMPLE_COMMITMENT in text


def test_fair_dice_validate_their_input() -> None:
    with pytest.raises(InvalidFairDiceError, match="server_seed"):
        FairDice(b"short", "nard")
    with pytest.raises(InvalidFairDiceError, match="client_seed"):
        FairDice(EXAMPLE_SEED, 7)  # type: ignore[arg-type]
    with pytest.raises(InvalidFairDiceError, match="counter -2"):
        FairDice(EXAMPLE_SEED, "nard", dice_used=-2)


# --- verify_rolls -----------------------------------------------------------


def played_match(client_seed: str = "alice") -> tuple[FairDice, list[int]]:
    source = FairDice.new(client_seed, rng=random.Random(42))
    rolls = [source.opening_roll()] + [source.roll() for _ in range(30)]
    return source, [d for roll in rolls for d in roll]


def test_verify_an_honest_match() -> None:
    source, dice = played_match()
    assert verify_rolls(source.reveal(), source.commitment, "alice", dice) == []
    assert verify_rolls(source.reveal(), source.commitment, "alice", []) == []


def test_verify_accepts_uppercase_and_surrounding_space() -> None:
    source, dice = played_match()
    seed_hex = f" {source.reveal().upper()}\n"
    assert verify_rolls(seed_hex, source.commitment.upper(), "alice", dice) == []


def test_verify_finds_a_tampered_die() -> None:
    source, dice = played_match()
    tampered = list(dice)
    tampered[17] = tampered[17] % 6 + 1
    mismatches = verify_rolls(source.reveal(), source.commitment, "alice", tampered)
    assert mismatches == [DiceMismatch(index=17, expected=dice[17], recorded=tampered[17])]


def test_verify_finds_a_die_out_of_range() -> None:
    source, dice = played_match()
    mismatches = verify_rolls(source.reveal(), source.commitment, "alice", [*dice[:3], 7])
    assert mismatches == [DiceMismatch(3, dice[3], 7)]


def test_verify_with_the_wrong_client_seed_finds_many_mismatches() -> None:
    source, dice = played_match()
    assert len(verify_rolls(source.reveal(), source.commitment, "mallory", dice)) > 20


def test_verify_rejects_a_seed_that_is_not_the_committed_one() -> None:
    source, dice = played_match()
    other_seed = bytes(range(32, 64))
    with pytest.raises(CommitmentMismatchError) as info:
        verify_rolls(other_seed.hex(), source.commitment, "alice", dice)
    message = str(info.value)
    assert hashlib.sha256(other_seed).hexdigest() in message
    assert source.commitment in message
    assert isinstance(info.value, ValueError)


def test_verify_rejects_a_tampered_commitment() -> None:
    source, dice = played_match()
    commitment = ("0" if source.commitment[0] != "0" else "1") + source.commitment[1:]
    with pytest.raises(CommitmentMismatchError, match=commitment):
        verify_rolls(source.reveal(), commitment, "alice", dice)


@pytest.mark.parametrize(
    ("seed_hex", "commitment_hex", "field"),
    [
        ("zz" * 32, EXAMPLE_COMMITMENT, "server_seed_hex 'zzzz"),
        (EXAMPLE_SEED_HEX[:-2], EXAMPLE_COMMITMENT, "server_seed_hex '0001"),
        ("", EXAMPLE_COMMITMENT, "server_seed_hex ''"),
        (EXAMPLE_SEED_HEX, EXAMPLE_COMMITMENT + "00", "commitment_hex '630d"),
        (EXAMPLE_SEED_HEX, "0x" + EXAMPLE_COMMITMENT[2:], "commitment_hex '0x"),
        (EXAMPLE_SEED_HEX, EXAMPLE_COMMITMENT[:32] + " " + EXAMPLE_COMMITMENT[32:], "commitment"),
    ],
)
def test_verify_rejects_malformed_hex(seed_hex: str, commitment_hex: str, field: str) -> None:
    with pytest.raises(InvalidFairDiceError, match=re.escape(field)) as info:
        verify_rolls(seed_hex, commitment_hex, "nard", [1])
    assert "expected 64 hex digits" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_dice_mismatch_is_a_frozen_value() -> None:
    mismatch = DiceMismatch(1, 2, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mismatch.index = 4  # type: ignore[misc]
    assert mismatch == DiceMismatch(index=1, expected=2, recorded=3)
    assert hash(mismatch) == hash(DiceMismatch(1, 2, 3))


# --- the worked example of docs/fair-dice.md ----------------------------------


def test_worked_example_constants_match_the_code() -> None:
    assert EXAMPLE_SEED.hex() == EXAMPLE_SEED_HEX
    assert [fair_die(EXAMPLE_SEED, "nard", n) for n in range(10)] == EXAMPLE_DICE
    assert verify_rolls(EXAMPLE_SEED_HEX, EXAMPLE_COMMITMENT, "nard", EXAMPLE_DICE) == []


def test_doc_states_the_example_seed_commitment_and_dice() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert f"\n{EXAMPLE_SEED_HEX}\n" in doc
    assert f"\n{EXAMPLE_COMMITMENT}\n" in doc
    assert "**" + ", ".join(map(str, EXAMPLE_DICE)) + "**" in doc
    assert str(EXAMPLE_DICE) in doc


def test_doc_table_matches_the_code() -> None:
    doc = DOC.read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| (\d+) \| `nard:(\d+)` \| `([0-9a-f]{64})` \| 0x([0-9a-f]{2}) = (\d+) \| ([1-6]) \|$",
        doc,
        re.MULTILINE,
    )
    assert [int(row[0]) for row in rows] == list(range(10))
    for die, counter, digest_hex, byte_hex, byte, face in rows:
        digest = hmac.new(EXAMPLE_SEED, f"nard:{counter}".encode(), hashlib.sha256).digest()
        assert die == counter
        assert digest.hex() == digest_hex
        assert digest[0] == int(byte_hex, 16) == int(byte) < 252
        assert fair_die(EXAMPLE_SEED, "nard", int(counter)) == int(face)
    assert [int(row[5]) for row in rows] == EXAMPLE_DICE


def test_doc_rejection_example_matches_the_code() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert "die 74" in doc
    assert "0xed = 237" in doc
    assert "237 mod 6 + 1 = **4**" in doc
    assert fair_die(EXAMPLE_SEED, "nard", 74) == 4


# The page's Python snippets, in order, and what each prints.
DOC_SNIPPETS = [
    [EXAMPLE_COMMITMENT, str(EXAMPLE_DICE)],
    [EXAMPLE_CLIENT_SEED.encode().hex(), str(EXAMPLE_CONTRIBUTION_DICE)],
]


@pytest.mark.parametrize("number", range(len(DOC_SNIPPETS)))
def test_doc_snippets_print_the_examples(number: int) -> None:
    doc = DOC.read_text(encoding="utf-8")
    snippets = re.findall(r"```python\n(.*?)```", doc, re.DOTALL)
    assert len(snippets) == len(DOC_SNIPPETS)
    snippet = snippets[number]
    assert re.findall(r"^import (.*)$", snippet, re.MULTILINE) == ["hashlib, hmac"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(snippet, {})
    assert out.getvalue().splitlines() == DOC_SNIPPETS[number]
    for line in DOC_SNIPPETS[number]:
        assert f"`{line}`" in doc or f"\n{line}\n" in doc


# --- contributions to the client seed (docs/fair-dice.md) -----------------------


def test_contributions_are_joined_by_a_line_feed() -> None:
    assert combine_contributions(EXAMPLE_CONTRIBUTIONS) == EXAMPLE_CLIENT_SEED
    assert combine_contributions(["ann-7f3a", ""]) == "ann-7f3a\n"
    assert combine_contributions(["", "", ""]) == "\n\n"
    assert combine_contributions(["only"]) == "only"  # an older record's client seed
    assert combine_contributions(("a", "b")) == "a\nb"


def test_contribution_example_dice() -> None:
    assert [fair_die(EXAMPLE_SEED, EXAMPLE_CLIENT_SEED, n) for n in range(6)] == (
        EXAMPLE_CONTRIBUTION_DICE
    )
    assert [
        reference_die(EXAMPLE_SEED, EXAMPLE_CLIENT_SEED, n) for n in range(6)
    ] == EXAMPLE_CONTRIBUTION_DICE


@pytest.mark.parametrize(
    "text",
    ["a", "ann-7f3a", "x" * 64, "🎲" * 64, "علی ۱۴۰۳", "a:b", "{seat}", " spaced ", "\u00a0\u200b"],
)
def test_valid_contributions(text: str) -> None:
    assert check_contribution(text) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "it is empty (1-64 characters)"),
        ("x" * 65, "too long, 65 characters (at most 64)"),
        ("🎲" * 65, "too long, 65 characters"),
        ("ann\nbob", "control character U+000A at position 4"),
        ("\tann", "control character U+0009 at position 1"),
        ("ann\x00", "control character U+0000 at position 4"),
        ("a\x7f", "control character U+007F at position 2"),
        ("a\x85", "control character U+0085 at position 2"),
        ("a\x9f", "control character U+009F at position 2"),
        ("🎲\r", "control character U+000D at position 2"),
        ("a\u2028", "control character U+2028 at position 2"),
        ("a\u2029", "control character U+2029 at position 2"),
        ("a\ud800", "lone surrogate U+D800 at position 2"),
        (7, "expected a string"),
    ],
)
def test_invalid_contributions(text: str, message: str) -> None:
    with pytest.raises(InvalidFairDiceError, match="invalid contribution") as info:
        check_contribution(text)
    assert message in str(info.value)


def test_the_control_characters_are_unicode_category_cc_and_the_separators() -> None:
    refused = set()
    for code in range(0x3000):
        try:
            check_contribution(chr(code))
        except InvalidFairDiceError:
            refused.add(code)
    cc = {code for code in range(0x3000) if unicodedata.category(chr(code)) == "Cc"}
    assert len(cc) == 65
    assert refused == cc | {0x2028, 0x2029}


def test_doc_states_the_contribution_rules_and_example() -> None:
    doc = DOC.read_text(encoding="utf-8")
    section = doc[doc.index("## Contributions from the players") :]
    for phrase in (
        "1 to 64 characters",
        "general category Cc",
        "U+2028",
        "joined by a line feed",
        '"seat": 0, "player": "Ann", "seed": "ann-7f3a", "source": "player"',
        "`ann-7f3a` and Bob (seat 1) `bob-19c2`",
        "**" + ", ".join(map(str, EXAMPLE_CONTRIBUTION_DICE)) + "**",
        "\nann-7f3a\nbob-19c2\n",
    ):
        assert phrase in section, phrase
    rows = re.findall(
        r"^\| (\d+) \| `([0-9a-f]{64})` \| 0x([0-9a-f]{2}) = (\d+)(?: \(([^)]*)\))? \| ([1-6]) \|$",
        section,
        re.MULTILINE,
    )
    assert [int(row[0]) for row in rows] == list(range(6))
    for n, digest_hex, byte_hex, byte, skipped, face in rows:
        message = f"{EXAMPLE_CLIENT_SEED}:{n}".encode()
        digest = hmac.new(EXAMPLE_SEED, message, hashlib.sha256).digest()
        assert digest.hex() == digest_hex
        used = next(b for b in digest if b < 252)
        assert used == int(byte_hex, 16) == int(byte)
        assert bool(skipped) == (digest[0] >= 252)
        assert int(face) == used % 6 + 1 == fair_die(EXAMPLE_SEED, EXAMPLE_CLIENT_SEED, int(n))
