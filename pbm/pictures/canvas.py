"""Drawing surface of the board pictures: colours, fonts and a Pillow canvas.

A picture is drawn at twice its size and reduced, which smooths the edges of discs
and text (Pillow draws shapes without antialiasing), then stored as a palette PNG,
which keeps a board of flat colours to a few kilobytes. Every picture carries its own
opaque light background and a dark border, so it reads the same on a light or a dark
mail window. Text uses Pillow's built-in font only: nothing is read from the system.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from functools import cache, lru_cache
from math import ceil, floor

from PIL import Image, ImageDraw, ImageFont

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
# The last move: the squares it names, the squares it changed besides, and captures.
MOVE_TINT: Colour = (246, 206, 86)
EFFECT_TINT: Colour = (238, 150, 122)
CAPTURE: Colour = (176, 36, 30)
# A winning line or shape.
WIN: Colour = (22, 122, 70)

SCALE = 2  # drawn at twice the size, then reduced
COLOURS = 64  # palette entries of the stored PNG

MARGIN = 12
TEXT_SIZE = 13
HEAD_SIZE = 16
LINE_GAP = 4
SHORT = 16  # labels up to this long are rendered once and kept (see `lettering`)


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in font at `size` pixels (loaded once per size)."""
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=512)
def lettering(text: str, size: int, anchor: str) -> tuple[Image.Image, int, int]:
    """A short label as a mask, and where its top left lies from the anchor point. Kept,
    so the coordinates and codes every picture repeats are rendered once per process."""
    face = font(size)
    left, top, right, bottom = face.getbbox(text, anchor=anchor)
    mask = Image.new("L", (max(1, ceil(right - left)), max(1, ceil(bottom - top))))
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=face, anchor=anchor)
    return mask, floor(left), floor(top)


def text_width(text: str, size: int = TEXT_SIZE) -> float:
    return font(size).getlength(text)


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


class Canvas:
    """An RGB image drawn in logical pixels; `png` returns the reduced palette PNG."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.image = Image.new("RGB", (width * SCALE, height * SCALE), PAPER)
        self.pen = ImageDraw.Draw(self.image)
        edge = SCALE * 2
        self.pen.rectangle((0, 0, width * SCALE - 1, height * SCALE - 1), outline=FRAME, width=edge)

    @staticmethod
    def _box(box: Box) -> Box:
        return (box[0] * SCALE, box[1] * SCALE, box[2] * SCALE - 1, box[3] * SCALE - 1)

    def rect(
        self, box: Box, fill: Colour | None = None, outline: Colour | None = None, width: float = 1
    ) -> None:
        self.pen.rectangle(self._box(box), fill=fill, outline=outline, width=round(width * SCALE))

    def rounded(
        self,
        box: Box,
        radius: float,
        fill: Colour | None = None,
        outline: Colour | None = None,
        width: float = 1,
    ) -> None:
        self.pen.rounded_rectangle(
            self._box(box),
            radius=radius * SCALE,
            fill=fill,
            outline=outline,
            width=round(width * SCALE),
        )

    def disc(
        self, box: Box, fill: Colour | None = None, outline: Colour | None = None, width: float = 1
    ) -> None:
        self.pen.ellipse(self._box(box), fill=fill, outline=outline, width=round(width * SCALE))

    def line(self, points: Sequence[tuple[float, float]], fill: Colour, width: float) -> None:
        scaled = [(x * SCALE, y * SCALE) for x, y in points]
        self.pen.line(scaled, fill=fill, width=round(width * SCALE))

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        size: int = TEXT_SIZE,
        fill: Colour = INK,
        anchor: str = "la",
    ) -> None:
        """Text placed by Pillow's anchors: `la` left/ascender, `mm` centred, ..."""
        at = (xy[0] * SCALE, xy[1] * SCALE)
        if len(text) > SHORT:
            self.pen.text(at, text, fill=fill, font=font(size * SCALE), anchor=anchor)
            return
        mask, left, top = lettering(text, size * SCALE, anchor)
        self.image.paste(fill, (round(at[0]) + left, round(at[1]) + top), mask)

    def png(self) -> bytes:
        reduced = self.image.reduce(SCALE)
        palette = reduced.quantize(
            colors=COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
        )
        out = io.BytesIO()
        palette.save(out, "PNG")
        return out.getvalue()
