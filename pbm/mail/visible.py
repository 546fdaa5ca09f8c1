"""Player text as other people read it: no character that drives a terminal or turns
text around.

A comment, a chat line or a message is written by one player and read by others, in
mail programs, terminals (`mutt`, `pbm mail outbox`) and logs. Control characters (NUL,
BEL, ESC and its terminal sequences) and invisible format characters (the bidi
overrides and isolates U+202A..U+202E and U+2066..U+2069, zero-width spaces, U+FEFF)
would reach them as written: a line that clears a screen, or a U+202E that shows
`photo<U+202E>gpj.exe` as `photoexe.jpg`. `visible` drops them, keeps what people
write (every script, combining marks, emoji with their joiners and flag tags, tabs and
line ends) and turns U+2028/U+2029 into line ends. `hidden_character` finds the first
of them, for values that must be refused instead (an address a player registers). See
docs/security.md.
"""

from __future__ import annotations

import re
import unicodedata

# Terminal escape sequences, dropped whole: CSI (`ESC [ ... m`) and OSC (`ESC ] ...
# BEL`); any other ESC goes alone with the other controls below.
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?)")
_LINE_BREAK = re.compile("\r\n|[\r\u2028\u2029\x85]")
# Unicode 14's categories Cc, Cf, Zl, Zp and Cs, except tab, line feed, the zero-width
# (non-)joiners that emoji and Indic or Persian words need, and the tag characters,
# which are kept only inside a flag's tag sequence (tests/mail_format/test_visible.py
# checks this list against unicodedata).
_UNSEEN = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2"
    "\u180e\u200b\u200e-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
# A subdivision flag (England: U+1F3F4, tag letters, U+E007F CANCEL TAG) is kept whole.
_FLAG = "\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f"
_DROPPED = re.compile(f"({_FLAG})|{_UNSEEN}")
# What an address may never hold: these, and every other character nobody can see.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Cs"})


def _kept(match: re.Match[str]) -> str:
    return match.group(1) or ""


def visible(text: str) -> str:
    """`text` without controls, escape sequences and invisible format characters; line
    ends written `\\n` (U+2028 and U+2029 too), tabs kept."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text  # the common case, at C speed: nothing here is hidden or a control
    text = _LINE_BREAK.sub("\n", _ESCAPE_SEQUENCE.sub("", text))
    return _DROPPED.sub(_kept, text)


def hidden_character(text: str) -> str | None:
    """The first character of `text` that cannot be seen or that changes how the text
    around it reads (a control, a format or bidi character, a space), or None."""
    return next((c for c in text if unicodedata.category(c) in _HIDDEN_CATEGORIES), None)
