"""Drawing surface of the board pictures: colours, fonts and a Pillow canvas.

A picture is drawn at its own size. What must look smooth (discs, rounded squares,
slanted lines) is pasted as a sprite: drawn once per process at four times its size,
reduced, and kept, so a picture pastes its pieces instead of drawing them; text is
anti-aliased by FreeType. The picture is stored as a PNG of one fixed palette (every
colour below and the blends that smooth edges between them), which maps a picture to
its palette in a fraction of a millisecond where fitting a palette to each picture
took most of its time. Every picture carries its own opaque light background and a
dark border, so it reads the same on a light or a dark mail window. Text uses Pillow's
built-in font only: nothing is read from the system.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from math import ceil, floor

from PIL import Image, ImageDraw, ImageFont

from pbm.pictures.png import palette_png

Colour = tuple[int, int, int]
Box = tuple[float, float, float, float]

# The page and its text.
PAPER: Colour = (247, 243, 234)
FRAME: Colour = (64, 60, 54)
INK: Colour = (33, 31, 28)
MUTED: Colour = (96, 90, 80)
# Boards: the wood of the squares, the lines between them.
WOOD: Colour = (232, 214, 176)
WOOD_DARK: Colour = (214, 190, 142)
WOOD_DEEP: Colour = (196, 166, 112)
LINE: Colour = (128, 104, 70)
# Men and stones of the two sides.
DARK_MAN: Colour = (36, 34, 32)
DARK_EDGE: Colour = (0, 0, 0)
LIGHT_MAN: Colour = (252, 251, 247)
LIGHT_EDGE: Colour = (52, 48, 44)
# Quarto's light and dark pieces: body, edge and hole.
LIGHT_WOOD: tuple[Colour, Colour, Colour] = ((251, 240, 214), (96, 68, 40), (206, 178, 132))
DARK_WOOD: tuple[Colour, Colour, Colour] = ((112, 66, 36), (46, 26, 12), (44, 24, 10))
# Quarod's rods.
ROD: Colour = (178, 52, 34)
# The last move: the squares it names, the squares it changed besides, and captures.
MOVE_TINT: Colour = (246, 206, 86)
EFFECT_TINT: Colour = (238, 150, 122)
CAPTURE: Colour = (176, 36, 30)
# A winning line or shape.
WIN: Colour = (22, 122, 70)

SPRITE_SCALE = 4  # sprites are drawn at four times their size, then reduced

MARGIN = 12
TEXT_SIZE = 13
HEAD_SIZE = 16
LINE_GAP = 4
SHORT = 16  # labels up to this long are rendered whole and kept (see `lettering`)

# What a colour is drawn on, and what is drawn on it: the palette holds the blends of
# each such pair, which anti-aliased edges and text are made of.
_GROUNDS = (
    PAPER,
    WOOD,
    WOOD_DARK,
    WOOD_DEEP,
    MOVE_TINT,
    EFFECT_TINT,
    DARK_MAN,
    LIGHT_MAN,
    LIGHT_WOOD[0],
    DARK_WOOD[0],
)
_INKS = (
    INK,
    MUTED,
    FRAME,
    LINE,
    DARK_EDGE,
    LIGHT_EDGE,
    DARK_MAN,
    LIGHT_MAN,
    CAPTURE,
    WIN,
    ROD,
    *LIGHT_WOOD,
    *DARK_WOOD,
)
# Blends of ink on the page, where text is: finer steps than on the boards.
_PAGE_STEPS = (0.2, 0.4, 0.6, 0.8)
_BOARD_STEPS = (0.5,)


def _blend(ink: Colour, ground: Colour, share: float) -> Colour:
    r, g, b = (round(i * share + c * (1 - share)) for i, c in zip(ink, ground, strict=True))
    return (r, g, b)


def palette_colours() -> list[Colour]:
    """Every colour of the fixed palette: the named colours, then their blends, but no
    blend within 8 of a named colour in any channel: Pillow maps a pixel to the palette
    by a cube of 4 values a side, where a close blend could take a named colour's place."""
    named: list[Colour] = list(dict.fromkeys((*_GROUNDS, *_INKS)))
    colours = list(named)
    for ground in _GROUNDS:
        steps = _PAGE_STEPS if ground == PAPER else _BOARD_STEPS
        for ink in _INKS:
            if ink == ground:
                continue
            for share in steps:
                blend = _blend(ink, ground, share)
                if all(max(abs(a - b) for a, b in zip(blend, n, strict=True)) >= 8 for n in named):
                    colours.append(blend)
    return list(dict.fromkeys(colours))


@cache
def _palette() -> tuple[Image.Image, bytes]:
    """The palette as Pillow maps a picture to it (256 entries, the last colour
    repeated), and as the PNG stores it (the colours alone)."""
    colours = palette_colours()
    assert len(colours) <= 256, len(colours)
    image = Image.new("P", (1, 1))
    flat = [value for colour in colours for value in colour]
    image.putpalette(flat + flat[:3] * (256 - len(colours)))
    return image, bytes(flat)


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in font at `size` pixels (loaded once per size)."""
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=4096)
def lettering(text: str, size: int, anchor: str) -> tuple[Image.Image, int, int]:
    """A short label as a mask, and where its top left lies from the anchor point. Kept,
    so the coordinates and codes every picture repeats are rendered once per process."""
    face = font(size)
    left, top, right, bottom = face.getbbox(text, anchor=anchor)
    mask = Image.new("L", (max(1, ceil(right - left)), max(1, ceil(bottom - top))))
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=face, anchor=anchor)
    return mask, floor(left), floor(top)


@lru_cache(maxsize=4096)
def _word_width(word: str, size: int) -> float:
    return font(size).getlength(word)


def text_width(text: str, size: int = TEXT_SIZE) -> float:
    """The width of `text` in pixels, word by word as `Canvas.text` sets it."""
    words = text.split(" ")
    return sum(_word_width(w, size) for w in words) + (len(words) - 1) * _word_width(" ", size)


def line_height(size: int = TEXT_SIZE) -> int:
    return size + LINE_GAP


def wrap(text: str, width: float, size: int = TEXT_SIZE) -> list[str]:
    """The text broken at spaces into lines no wider than `width` pixels (a word longer
    than the width stands alone on its line)."""
    if text_width(text, size) <= width:
        return [text] if text else []
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if line and text_width(candidate, size) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines


# A sprite's shape: ("disc" | "rounded", radius) or ("line", points from its origin).
Shape = tuple[str, float | tuple[tuple[float, float], ...]]


def _quarter(value: float) -> float:
    """`value` to a quarter pixel: the sprites of one size and place are one sprite."""
    return round(value * 4) / 4


@lru_cache(maxsize=2048)
def sprite(
    shape: Shape,
    offset: tuple[float, float],
    size: tuple[float, float],
    fill: Colour | None,
    outline: Colour | None,
    width: float,
) -> Image.Image:
    """An anti-aliased shape as an RGBA image, its box at `offset` (the fraction of a
    pixel it starts at) of `size` pixels; drawn big and reduced, once per process."""
    s = SPRITE_SCALE
    (fx, fy), (w, h) = offset, size
    pixels = (max(1, ceil(fx + w)) * s, max(1, ceil(fy + h)) * s)
    # The transparent pixels carry the edge's colour, so the reduced rim is not darkened.
    ground = outline or fill or (0, 0, 0)
    image = Image.new("RGBA", pixels, (*ground, 0))
    pen = ImageDraw.Draw(image)
    box = (fx * s, fy * s, (fx + w) * s - 1, (fy + h) * s - 1)
    kind, detail = shape
    stroke = max(1, round(width * s))
    if kind == "disc":
        pen.ellipse(box, fill=fill, outline=outline, width=stroke)
    elif kind == "rounded":
        assert isinstance(detail, float)
        pen.rounded_rectangle(box, radius=detail * s, fill=fill, outline=outline, width=stroke)
    else:
        assert isinstance(detail, tuple) and fill is not None
        pen.line([((fx + x) * s, (fy + y) * s) for x, y in detail], fill=fill, width=stroke)
    return image.reduce(s)


class Canvas:
    """An RGB image drawn in pixels; `png` returns it as a palette PNG."""

    def __init__(self, width: int, height: int, *, framed: bool = True) -> None:
        self.width = width
        self.height = height
        self.image = Image.new("RGB", (width, height), PAPER)
        self.pen = ImageDraw.Draw(self.image)
        self._core = self.image.im  # the image's pixels, for `_blit`
        if framed:
            self.pen.rectangle((0, 0, width - 1, height - 1), outline=FRAME, width=2)

    @staticmethod
    def _box(box: Box) -> tuple[int, int, int, int]:
        return (round(box[0]), round(box[1]), round(box[2]) - 1, round(box[3]) - 1)

    def _blit(self, mask: Image.Image, left: int, top: int, fill: Colour | None = None) -> None:
        """`mask` at (left, top), in `fill` through it (a label), or itself through its
        alpha (a sprite). Pillow's core paste: `Image.paste` spends ten times longer on
        checks than on the copy of a small sprite, and a picture pastes a hundred."""
        box = (left, top, left + mask.width, top + mask.height)
        core = mask.im
        self._core.paste(core if fill is None else fill, box, core)

    def rect(
        self, box: Box, fill: Colour | None = None, outline: Colour | None = None, width: float = 1
    ) -> None:
        self.pen.rectangle(self._box(box), fill=fill, outline=outline, width=max(1, round(width)))

    def _paste(
        self,
        shape: Shape,
        box: Box,
        fill: Colour | None,
        outline: Colour | None,
        width: float,
    ) -> None:
        left, top = floor(box[0]), floor(box[1])
        offset = (_quarter(box[0] - left), _quarter(box[1] - top))
        size = (_quarter(box[2] - box[0]), _quarter(box[3] - box[1]))
        image = sprite(shape, offset, size, fill, outline, _quarter(width))
        self._blit(image, left, top)

    def rounded(
        self,
        box: Box,
        radius: float,
        fill: Colour | None = None,
        outline: Colour | None = None,
        width: float = 1,
    ) -> None:
        self._paste(("rounded", _quarter(radius)), box, fill, outline, width)

    def disc(
        self, box: Box, fill: Colour | None = None, outline: Colour | None = None, width: float = 1
    ) -> None:
        self._paste(("disc", 0.0), box, fill, outline, width)

    def line(self, points: Sequence[tuple[float, float]], fill: Colour, width: float) -> None:
        pad = width / 2 + 1
        xs, ys = [x for x, _ in points], [y for _, y in points]
        box = (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)
        left, top = floor(box[0]), floor(box[1])
        relative = tuple((_quarter(x - left), _quarter(y - top)) for x, y in points)
        size = (box[2] - left, box[3] - top)
        image = sprite(("line", relative), (0.0, 0.0), size, fill, None, width)
        self._blit(image, left, top)

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        size: int = TEXT_SIZE,
        fill: Colour = INK,
        anchor: str = "la",
    ) -> None:
        """Text placed by Pillow's anchors: `la` left/ascender, `mm` centred, ... A
        line longer than a label (`la` only) is set word by word from kept words: the
        words of headings and status lines recur, and FreeType takes far longer to
        render a line than a paste of each of its words."""
        if len(text) <= SHORT:
            mask, left, top = lettering(text, size, anchor)
            self._blit(mask, round(xy[0]) + left, round(xy[1]) + top, fill)
            return
        assert anchor == "la", anchor
        x, y = xy
        space = _word_width(" ", size)
        for word in text.split(" "):
            if word:
                mask, left, top = lettering(word, size, anchor)
                self._blit(mask, round(x) + left, round(y) + top, fill)
            x += _word_width(word, size) + space

    def paste(self, image: Image.Image, at: tuple[float, float]) -> None:
        """Another drawn image (a board kept from an earlier picture) with its top left
        at `at`."""
        self.image.paste(image, (round(at[0]), round(at[1])))

    def png(self) -> bytes:
        mapping, colours = _palette()
        mapped = self.image.quantize(palette=mapping, dither=Image.Dither.NONE)
        return palette_png(mapped.tobytes(), self.width, self.height, colours)
