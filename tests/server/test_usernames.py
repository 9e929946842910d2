# ruff: noqa: RUF001, RUF003 (look-alike characters are what these tests are about)
"""Usernames: the comparison key (UTS #39 skeleton) and the rules for new names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nard.server.usernames import (
    InvalidUsernameError,
    canonical_username,
    check_username,
    confusables_version,
    skeleton,
)


def same(a: str, b: str) -> bool:
    return canonical_username(a) == canonical_username(b)


def test_case_does_not_make_a_new_name() -> None:
    assert same("Ann", "ann")
    assert same("ANN", "aNn")
    assert same("STRASSE", "straße")  # full case folding, not lower()


def test_a_cyrillic_look_alike_is_the_same_name() -> None:
    assert same("ann", "\u0430nn")  # Cyrillic а (U+0430)
    assert same("ape", "\u0430\u0440\u0435")  # all Cyrillic: а р е
    assert not same("ann", "bnn")


def test_capital_i_and_small_l() -> None:
    # The skeleton alone maps capital I to l: "paypaI" looks like "paypal"...
    assert skeleton("paypaI") == skeleton("paypal")
    # ...but the key folds case first, and a small i has no prototype: the two
    # names stay distinct (a known limit of case-insensitive skeletons).
    assert canonical_username("paypaI") == "paypai"
    assert not same("paypal", "paypaI")
    # Digits that look like letters are joined: 1 -> l, 0 -> O -> o.
    assert same("paypa1", "paypal")
    assert same("b0b", "bob")


def test_fullwidth_letters_are_the_plain_ones() -> None:
    assert same("\uff41\uff4e\uff4e", "ann")  # ａｎｎ
    assert check_username("\uff41\uff4e\uff4e") == "ann"


def test_persian_and_arabic_yeh() -> None:
    """confusables.txt (13.0.0) gives ARABIC LETTER FARSI YEH (U+06CC) and ARABIC
    LETTER YEH (U+064A) the same prototype, ALEF MAKSURA (U+0649): "علی" written
    on a Persian keyboard and "علي" on an Arabic one are one name. So are Persian
    keheh (U+06A9) and Arabic kaf (U+0643)."""
    assert skeleton("\u06cc") == skeleton("\u064a") == "\u0649"
    assert same("\u0639\u0644\u06cc", "\u0639\u0644\u064a")
    assert same("\u06a9\u062a\u0627\u0628", "\u0643\u062a\u0627\u0628")  # کتاب / كتاب
    assert check_username("\u0639\u0644\u06cc") == "\u0639\u0644\u06cc"  # stored as typed


def test_persian_and_arabic_digits() -> None:
    # Arabic-Indic ١ (U+0661) and Persian ۱ (U+06F1) look alike, and like l.
    assert same("\u0644\u0627\u0639\u0628\u0661", "\u0644\u0627\u0639\u0628\u06f1")


def test_the_data_file_is_the_documented_one() -> None:
    assert confusables_version() == "13.0.0"


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
def test_the_key_is_stable(name: str) -> None:
    key = canonical_username(name)
    assert canonical_username(key) == key


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-", max_size=24))
def test_ascii_case_variants_are_one_name(name: str) -> None:
    assert same(name.upper(), name.lower())


@pytest.mark.parametrize(
    "name",
    [
        "ann",
        "Ann_Smith-2",
        "j.doe",
        "007",
        "\u0646\u0631\u062f_\u0628\u0627\u0632",  # نرد_باز (Persian)
        "\u0644\u0627\u0639\u0628\u0661\u0662",  # لاعب١٢ (Arabic, Arabic-Indic digits)
        "\u0644\u0627\u0639\u0628\u06f1\u06f2",  # لاعب۱۲ (Persian digits)
        "\u0644\u0627\u0639\u0628_12",  # لاعب_12 (ASCII digits)
        "\u062f\u0650\u0631\u0627\u0632",  # دِراز: a kasra on a letter
        "\u0394\u03b7\u03bc\u03ae\u03c4\u03c1\u03b7\u03c2",  # Δημήτρης
        "\u0414\u043c\u0438\u0442\u0440\u0438\u0439",  # Дмитрий
        "\u6f22\u5b57\u304b\u306a",  # 漢字かな: Han with kana (Japanese)
        "\u30b2\u30fc\u30e0",  # ゲーム
        "\u0928\u092e\u0938\u094d\u0924\u0947",  # नमस्ते: Devanagari with its vowel signs
        "Jos\u00e9",
    ],
)
def test_accepted(name: str) -> None:
    assert check_username(name) == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("ab", "has 2 characters"),
        ("a" * 25, "has 25 characters"),
        ("ann\u200dx", "invisible character '\\u200d' (U+200D ZERO WIDTH JOINER)"),
        ("\u0646\u0631\u200c\u062f", "U+200C ZERO WIDTH NON-JOINER"),
        ("ann\u200f", "U+200F RIGHT-TO-LEFT MARK"),
        ("ann\ufe0f", "U+FE0F VARIATION SELECTOR-16"),
        ("an n", "whitespace ' ' (U+0020 SPACE)"),
        ("ann\u00a0", "whitespace"),  # NFKC makes it a space
        ("ann\x07", "control character"),
        ("ann!", "'!' (U+0021 EXCLAMATION MARK): usernames hold letters"),
        ("an@n", "'@'"),
        ("\u02bcann", "MODIFIER LETTER APOSTROPHE"),
        ("\u0646\u0640\u0631\u062f", "ARABIC TATWEEL"),
        ("\u0430nn", "mixes scripts: 'n' (U+006E LATIN SMALL LETTER N) is Latin, 'а' is Cyrillic"),
        ("pa\u0443pal", "mixes scripts"),  # Cyrillic у
        ("alph\u03b1", "'α' (U+03B1 GREEK SMALL LETTER ALPHA) is Greek, 'a' is Latin"),
        ("ann\u0661\u0662", "'١' (U+0661 ARABIC-INDIC DIGIT ONE) is Arabic, 'a' is Latin"),
        ("\u0644\u0627\u0639\u0628\u0661" + "2", "mixes digits of two systems"),
        ("\u0644\u0627\u0639\u0628\u0661\u06f2", "mixes digits of two systems"),
        ("\ud55c\u304b\u306a", "mixes scripts"),  # 한かな: Hangul with kana
        ("a\u0301\u0301b", "stacks combining marks"),
        ("\u0301abc", "combining mark"),
        ("_.-", "has no letter or digit"),
    ],
)
def test_refused(name: str, problem: str) -> None:
    with pytest.raises(InvalidUsernameError) as caught:
        check_username(name)
    assert problem in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_han_with_hangul_is_korean() -> None:
    assert check_username("\ud55c\uad6d\u6f22") == "\ud55c\uad6d\u6f22"  # 한국漢


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_checked_names_are_normalized(name: str) -> None:
    try:
        stored = check_username(name)
    except InvalidUsernameError:
        return
    assert check_username(stored) == stored
    assert 3 <= len(stored) <= 24
