"""Player text without terminal controls or bidi overrides (pbm.mail.visible)."""

from __future__ import annotations

import sys
import unicodedata
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest

from pbm.mail.compose import with_html
from pbm.mail.visible import _DROPPED, hidden_character, visible
from tests.mail_format.test_compose import board_mail

# What issue 21 found in player text, and what each looks like in the middle of a word.
UNSEEN = [
    "\x1b[2J\x1b[31m",  # clear the screen, red
    "\x1b]0;pwned\x07",  # a terminal's window title
    "\x1b",
    "\x00",
    "\x07",
    "\x7f",
    "\x9b",  # the one-byte CSI
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u202a",
    "\u2066",  # the isolates
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200b",  # ZERO WIDTH SPACE
    "\u200e",
    "\ufeff",
    "\U000e0041",  # a tag letter outside a flag: hidden text
]


@pytest.mark.parametrize("char", UNSEEN)
def test_controls_and_bidi_overrides_are_dropped(char: str) -> None:
    assert visible(f"pay{char}day") == "payday"


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\r", "\r\n", "\x85"])
def test_line_separators_become_line_ends(char: str) -> None:
    assert visible(f"one{char}two") == "one\ntwo"


@pytest.mark.parametrize(
    "text",
    [
        "Grüße aus Köln, ça va? Ελλάδα Русский עברית العربية 中文 日本語 한국어 हिन्दी",
        "e\u0301 a\u0308 \u0915\u094d\u200d\u0937",  # combining marks, a joiner in Devanagari
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian with its ZWNJ
        # a skin tone, a family, a variation selector, a flag
        "🙂 👍🏽 👨\u200d👩\u200d👧 ❤\ufe0f 🇩🇪",
        "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # England
        "col1\tcol2\nline two\n\n  indented",
        "a1-b2 SDQF #3 <b>not html</b> & \\ ' \"",
    ],
)
def test_what_people_write_is_kept(text: str) -> None:
    assert visible(text) == text


def test_the_dropped_class_is_unicodes_controls_and_format_characters() -> None:
    """The character class in visible.py, against this Python's Unicode database: every
    Cc, Cf, Zl, Zp and Cs code point but tab, line feed, the two joiners and tags."""
    kept = {"\t", "\n", "\u200c", "\u200d"}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        unseen = unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp", "Cs"}
        assert bool(_DROPPED.fullmatch(char)) == (unseen and char not in kept), hex(code)


def test_hidden_character_names_the_first() -> None:
    assert hidden_character("alice@a.test") is None
    assert hidden_character("jörg@bücher.example") is None
    assert hidden_character("al\u200bice@a\u202etest") == "\u200b"
    assert hidden_character("a\u00a0b@x.test") == "\u00a0"


@pytest.mark.parametrize("char", UNSEEN)
def test_composed_text_and_html_parts_carry_none(char: str) -> None:
    text = board_mail(
        subject=f"Quarto Board 101 {char}bob",
        body=f"alice writes:\ngood{char}luck\n",
        quote=f"Subject: quarto move{char}",
    )
    raw = with_html(text, [])
    msg = message_from_bytes(raw, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    parts = [
        str(part.get_content()) for part in msg.walk() if part.get_content_maintype() == "text"
    ]
    assert len(parts) == 2  # text and HTML
    assert all("goodluck" in part for part in parts)
    unseen = [c for c in char if unicodedata.category(c)[0] == "C"]
    for shown in [*parts, str(msg["Subject"])]:
        assert not any(c in shown for c in unseen), shown
