"""Drawing surface of the board pictures: colours, fonts and a Pillow canvas.

A picture is drawn at its own size. What must look smooth (discs, rounded squares,
slanted lines) is pasted as a sprite: drawn once per process at four times its size,
reduced, and kept, so a picture pastes its pieces instead of drawing them; text is
anti-aliased by FreeType. A picture is drawn in the indices of one fixed palette (every
colour below and the blends that smooth edges between them) and stored as a PNG of it:
a sprite or a label is mapped to the palette once, on each ground it meets, and a
picture pastes the indices (see `Canvas`). Every picture carries its own opaque light
background and a dark border, so it reads the same on a light or a dark mail window.
Text uses Pillow's built-in font only: nothing is read from the system.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from math import ceil, floor

from PIL import Image, ImageDraw, ImageFont

from pbm.pictures.png import FILTER_NONE, palette_png

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
    """The palette as Pillow maps an image to it (256 entries, the last colour
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


@lru_cache(maxsize=256)
def index(colour: Colour) -> int:
    """The palette entry `colour` is drawn in: its own where the palette holds it (every
    named colour), else the nearest, as Pillow maps an image to the palette."""
    pixel = _indexed(Image.new("RGB", (1, 1), colour)).getpixel((0, 0))
    assert isinstance(pixel, int)
    return pixel


def _indexed(image: Image.Image) -> Image.Image:
    """An RGB image in the indices of the palette."""
    return image.quantize(palette=_palette()[0], dither=Image.Dither.NONE)


# What lies under a sprite or a label where it is pasted: one palette index where that
# is all one colour (under most of them), else the indices of the region, row by row.
Under = int | bytes
# `sprite`'s arguments: shape, offset, size, fill, outline and width.
SpriteArgs = tuple[
    Shape, tuple[float, float], tuple[float, float], Colour | None, Colour | None, float
]


def _ground(under: Under, size: tuple[int, int]) -> Image.Image:
    """`under` as an image of the palette."""
    if isinstance(under, int):
        return Image.new("P", size, under)
    return Image.frombytes("P", size, under)


# Of a mask's values, those that let anything through.
_TOUCHED = [0] + [255] * 255


def _drawn_over(
    under: Under, size: tuple[int, int], ink: Image.Image | Colour, mask: Image.Image
) -> Image.Image:
    """`ink` drawn through `mask` on what lies under it, in palette indices. Only the
    pixels the mask touches are mapped to the palette: mapping a blend again can move
    it to a neighbouring entry, and what the sprite leaves alone must stay as it was."""
    kept = _ground(under, size)
    kept.putpalette(_palette()[1])
    drawn = kept.convert("RGB")
    drawn.paste(ink, (0, 0, *size), mask)
    touched = (mask.getchannel("A") if mask.mode == "RGBA" else mask).point(_TOUCHED, "1")
    kept.paste(_indexed(drawn), (0, 0), touched)
    return kept


@lru_cache(maxsize=2048)
def _sprite_over(args: SpriteArgs, under: Under, size: tuple[int, int]) -> Image.Image:
    """A sprite drawn on what lies under it, in palette indices: kept, so a picture
    pastes indices and never maps its pixels to the palette."""
    image = sprite(*args)
    return _drawn_over(under, size, image, image)


# Sprites laid one over another, each with its place from the top left of them all.
Layers = tuple[tuple[SpriteArgs, int, int], ...]


@lru_cache(maxsize=1024)
def _layered(layers: Layers) -> Image.Image:
    """The sprites of `layers` composed, in order, into one RGBA image."""
    sizes = [(sprite(*args).size, dx, dy) for args, dx, dy in layers]
    width = max(dx + w for (w, _), dx, _ in sizes)
    height = max(dy + h for (_, h), _, dy in sizes)
    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    for args, dx, dy in layers:
        image.alpha_composite(sprite(*args), (dx, dy))
    return image


@lru_cache(maxsize=2048)
def _layers_over(layers: Layers, under: Under, size: tuple[int, int]) -> Image.Image:
    """Layered sprites drawn on what lies under them, in palette indices (as
    `_sprite_over`)."""
    image = _layered(layers)
    return _drawn_over(under, size, image, image)


@lru_cache(maxsize=2048)
def _label_over(
    label: tuple[str, int, str], ink: Colour, under: Under, size: tuple[int, int]
) -> Image.Image:
    """A label in `ink` on what lies under it, in palette indices (as `_sprite_over`).
    On one colour its pixels are looked up by their mask's value (`_blends`) rather
    than mapped: a picture's words are often new (board numbers, userids, moves), and
    Pillow's mapping costs as much for a word as for a thousand pixels."""
    mask = lettering(*label)[0]
    if isinstance(under, bytes):
        return _drawn_over(under, size, ink, mask)
    return Image.frombytes("P", size, mask.point(_blends(ink, under)).tobytes())


@lru_cache(maxsize=256)
def _blends(ink: Colour, ground: int) -> list[int]:
    """The palette index of `ink` drawn through each value of a mask (0 to 255) on the
    palette's colour `ground`, as `_drawn_over` maps it."""
    every_value = Image.frombytes("L", (256, 1), bytes(range(256)))
    return list(_drawn_over(ground, (256, 1), ink, every_value).tobytes())


# The stored pixels' columns left of the picture: each row's PNG filter byte (`Canvas`).
_FILTER = 1


def _shape_sprite(
    shape: Shape, box: Box, fill: Colour | None, outline: Colour | None, width: float
) -> tuple[SpriteArgs, int, int]:
    """The sprite of a disc or a rounded box filling `box`, and its top left pixel."""
    left, top = floor(box[0]), floor(box[1])
    offset = (_quarter(box[0] - left), _quarter(box[1] - top))
    size = (_quarter(box[2] - box[0]), _quarter(box[3] - box[1]))
    return (shape, offset, size, fill, outline, _quarter(width)), left, top


def _line_sprite(
    points: Sequence[tuple[float, float]], fill: Colour, width: float
) -> tuple[SpriteArgs, int, int]:
    """The sprite of a line through `points`, and its top left pixel."""
    pad = width / 2 + 1
    xs, ys = [x for x, _ in points], [y for _, y in points]
    box = (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)
    left, top = floor(box[0]), floor(box[1])
    relative = tuple((_quarter(x - left), _quarter(y - top)) for x, y in points)
    size = (box[2] - left, box[3] - top)
    return (("line", relative), (0.0, 0.0), size, fill, None, width), left, top


class Canvas:
    """A picture drawn in the indices of the fixed palette; `png` returns it as a PNG.

    Rectangles are drawn in a colour's index. A sprite or a label is pasted as it looks
    on what lies under it, drawn and mapped to the palette once per process for each
    ground it meets (`_sprite_over`, `_label_over`): mapping a whole picture to the
    palette took a third of its time, since Pillow looks up every pixel.

    The pixels are held one column wider than the picture: column 0 holds each row's
    PNG filter byte (every drawing call shifts by `_FILTER`), so that `png` deflates
    the rows as they are stored, with no copy to put the filter bytes between them
    (`image` is the picture alone)."""

    def __init__(self, width: int, height: int, *, framed: bool = True) -> None:
        self.width = width
        self.height = height
        self._rows = Image.new("P", (_FILTER + width, height), index(PAPER))
        self._rows.putpalette(_palette()[1])
        self._pen = ImageDraw.Draw(self._rows)
        self._core = self._rows.im  # Pillow's core calls, for `_under` and the pastes
        if framed:
            self.rect((0, 0, width, height), outline=FRAME, width=2)

    @property
    def image(self) -> Image.Image:
        """The picture (a copy), as an image of the palette."""
        return self._rows.crop((_FILTER, 0, _FILTER + self.width, self.height))

    def _under(self, box: tuple[int, int, int, int]) -> Under:
        """What lies under `box` (Pillow's core calls: `Image.crop` spends longer on
        checks than on the copy of a small region, and a picture pastes a hundred)."""
        low, high = self._core.crop(box).getextrema()
        return int(low) if low == high else self._rows.crop(box).tobytes()

    def _region(
        self, left: int, top: int, size: tuple[int, int]
    ) -> tuple[tuple[int, int, int, int], Under]:
        """The box of `size` pixels whose top left is at (left, top) of the picture, in
        the stored pixels, and what lies under it."""
        box = (_FILTER + left, top, _FILTER + left + size[0], top + size[1])
        return box, self._under(box)

    def _sprite(self, args: SpriteArgs, left: int, top: int) -> None:
        size = sprite(*args).size
        box, under = self._region(left, top, size)
        self._core.paste(_sprite_over(args, under, size).im, box)

    def _layers(self, placed: Sequence[tuple[SpriteArgs, int, int]]) -> None:
        """Sprites placed at (left, top) each, drawn in order as one: one read of what
        lies under them and one paste, where each would take its own."""
        left, top = min(x for _, x, _ in placed), min(y for _, _, y in placed)
        layers = tuple((args, x - left, y - top) for args, x, y in placed)
        size = _layered(layers).size
        box, under = self._region(left, top, size)
        self._core.paste(_layers_over(layers, under, size).im, box)

    def rect(
        self, box: Box, fill: Colour | None = None, outline: Colour | None = None, width: float = 1
    ) -> None:
        x0, y0, x1, y1 = (round(value) for value in box)
        self._pen.rectangle(
            (_FILTER + x0, y0, _FILTER + x1 - 1, y1 - 1),
            fill=None if fill is None else index(fill),
            outline=None if outline is None else index(outline),
            width=max(1, round(width)),
        )

    def _paste(
        self,
        shape: Shape,
        box: Box,
        fill: Colour | None,
        outline: Colour | None,
        width: float,
    ) -> None:
        self._sprite(*_shape_sprite(shape, box, fill, outline, width))

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
        self._sprite(*_line_sprite(points, fill, width))

    def disc_and_line(
        self,
        box: Box,
        fill: Colour,
        outline: Colour,
        points: Sequence[tuple[float, float]],
        ink: Colour,
        *,
        disc_width: float = 1,
        line_width: float = 1,
    ) -> None:
        """A disc with a line drawn over it (a Quarod man and his rod), as `disc` then
        `line` would draw them, pasted as one sprite: a board of them takes half the
        pastes."""
        disc = _shape_sprite(("disc", 0.0), box, fill, outline, disc_width)
        self._layers([disc, _line_sprite(points, ink, line_width)])

    def _label(self, label: tuple[str, int, str], ink: Colour, x: float, y: float) -> None:
        mask, left, top = lettering(*label)
        box, under = self._region(round(x) + left, round(y) + top, mask.size)
        self._core.paste(_label_over(label, ink, under, mask.size).im, box)

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
            self._label((text, size, anchor), fill, xy[0], xy[1])
            return
        assert anchor == "la", anchor
        x, y = xy
        space = _word_width(" ", size)
        for word in text.split(" "):
            if word:
                self._label((word, size, anchor), fill, x, y)
            x += _word_width(word, size) + space

    def paste(self, image: Image.Image, at: tuple[float, float]) -> None:
        """Another drawn picture (a board kept from an earlier picture) with its top
        left at `at`."""
        self._rows.paste(image, (_FILTER + round(at[0]), round(at[1])))

    def png(self) -> bytes:
        self._core.paste(FILTER_NONE, (0, 0, _FILTER, self.height))  # whatever was drawn there
        return palette_png(self._rows.tobytes(), self.width, self.height, _palette()[1])
