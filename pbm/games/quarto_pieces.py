"""Quarto pieces: sixteen combinations of four binary attributes, their codes and names.

A piece is an int 0..15. Bit 3 is height (1 = tall), bit 2 colour (1 = light), bit 1
shape (1 = round), bit 0 top (1 = hollow), so the 4-bit string a player may write
(docs/games/quarto.md, 'Notation': "1 = the first letter") is the piece's binary
numeral: `1111` is TLRH, `0000` is SDQF. A set of attributes is a mask over the same bits.
"""

from __future__ import annotations

import re

PIECES = tuple(range(16))
ALL_ATTRIBUTES = 0b1111

# Per attribute, most significant bit first: its name, the bit, and for bit value 1 and 0
# the letter and word (docs/games/quarto.md, 'Notation': T/S L/D R/Q H/F, in that order).
ATTRIBUTE_NAMES = ("height", "colour", "shape", "top")
ATTRIBUTE_BITS = (8, 4, 2, 1)
LETTERS = (("T", "S"), ("L", "D"), ("R", "Q"), ("H", "F"))
VALUE_WORDS = (("tall", "short"), ("light", "dark"), ("round", "square"), ("hollow", "filled"))

KEY = (
    "Key: T/S tall/short, L/D light/dark,",
    "     R/Q round/square, H/F hollow/filled (solid)",
)

CODES = tuple(
    "".join(LETTERS[i][0 if piece & ATTRIBUTE_BITS[i] else 1] for i in range(4)) for piece in PIECES
)

# letter -> (attribute index, bit value); every letter belongs to exactly one attribute.
_LETTER_VALUE = {
    letter.lower(): (i, value)
    for i, pair in enumerate(LETTERS)
    for letter, value in zip(pair, (1, 0), strict=True)
}

# Words a player may use for an attribute in the `attributes` option.
_ATTRIBUTE_WORDS = {
    "height": 0,
    "size": 0,
    "tall": 0,
    "short": 0,
    "colour": 1,
    "color": 1,
    "light": 1,
    "dark": 1,
    "shape": 2,
    "round": 2,
    "square": 2,
    "top": 3,
    "fill": 3,
    "hollow": 3,
    "filled": 3,
    "solid": 3,
}


def parse_piece(text: str) -> int:
    """A piece from its four letters (one per attribute, any order) or its 4-bit string.

    Raises ValueError with the reason when the text names no piece.
    """
    low = text.strip().lower()
    if len(low) == 4 and set(low) <= {"0", "1"}:
        return int(low, 2)
    if len(low) != 4:
        raise ValueError("a piece is four letters such as TLRH, or four bits such as 1010")
    piece = 0
    seen: set[int] = set()
    for letter in low:
        found = _LETTER_VALUE.get(letter)
        if found is None:
            raise ValueError(f"'{letter.upper()}' is not a piece letter (T/S L/D R/Q H/F)")
        attribute, value = found
        if attribute in seen:
            raise ValueError(f"it gives the {ATTRIBUTE_NAMES[attribute]} twice")
        seen.add(attribute)
        piece |= value * ATTRIBUTE_BITS[attribute]
    return piece


# -- the `attributes` option (beginners' variant) ---------------------------------------

ALL_WORD = "all"
_OPTION_SEPARATORS = re.compile(r"[\s,+/;&]+")


def attributes_text(mask: int) -> str:
    """Canonical option text of an attribute mask: `all` or names such as `height,shape`."""
    if mask == ALL_ATTRIBUTES:
        return ALL_WORD
    return ",".join(n for n, bit in zip(ATTRIBUTE_NAMES, ATTRIBUTE_BITS, strict=True) if mask & bit)


def attributes_mask(text: str) -> int:
    """The attribute mask a player wrote: `all`, or 1 to 3 names or piece letters.

    Names may be attribute names (`colour`) or value words (`tall`); a token of piece
    letters names each letter's attribute (`TL` = height and colour). Raises ValueError.
    """
    tokens = [t for t in _OPTION_SEPARATORS.split(text.strip().lower()) if t]
    if not tokens:
        raise ValueError("name 1 to 3 of height, colour, shape, top (or all)")
    mask = 0
    for token in tokens:
        if token == ALL_WORD:
            mask |= ALL_ATTRIBUTES
        elif token in _ATTRIBUTE_WORDS:
            mask |= ATTRIBUTE_BITS[_ATTRIBUTE_WORDS[token]]
        elif all(letter in _LETTER_VALUE for letter in token):
            for letter in token:
                mask |= ATTRIBUTE_BITS[_LETTER_VALUE[letter][0]]
        else:
            raise ValueError(f"'{token}' is not an attribute (height, colour, shape, top)")
    return mask


def parse_attributes(text: str) -> str:
    """`Option.parse` for `attributes`: the canonical text, or ValueError."""
    return attributes_text(attributes_mask(text))
