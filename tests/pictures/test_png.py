"""The palette PNG writer (pbm.pictures.png), read back by Pillow's decoder, which is
not ours: the size, the palette and every pixel come back as written, and the chunks'
CRCs check out."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from pbm.pictures.png import FILTER_NONE, SIGNATURE, palette_png


@st.composite
def images(draw: st.DrawFn) -> tuple[bytes, int, int, bytes]:
    width = draw(st.integers(1, 40))
    height = draw(st.integers(1, 40))
    colours = draw(st.integers(1, 256))
    palette = draw(st.binary(min_size=3 * colours, max_size=3 * colours))
    pixels = draw(st.binary(min_size=width * height, max_size=width * height))
    return bytes(p % colours for p in pixels), width, height, palette


def rows(pixels: bytes, width: int) -> bytes:
    """The pixels with each row's filter byte before it, as the writer takes them."""
    starts = range(0, len(pixels), width)
    return b"".join(bytes([FILTER_NONE]) + pixels[start : start + width] for start in starts)


def read(png: bytes) -> Image.Image:
    Image.open(io.BytesIO(png)).verify()  # every chunk's CRC, the stream's end
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


@given(images())
def test_pillow_reads_back_what_was_written(image: tuple[bytes, int, int, bytes]) -> None:
    pixels, width, height, palette = image
    png = palette_png(rows(pixels, width), width, height, palette)
    assert png.startswith(SIGNATURE)
    decoded = read(png)
    assert decoded.mode == "P"
    assert decoded.size == (width, height)
    assert decoded.tobytes() == pixels
    stored = decoded.getpalette()
    assert stored is not None and stored[: len(palette)] == list(palette)


def test_a_picture_sized_image_round_trips() -> None:
    """Rows as long as a picture's, with runs and noise, as a board has."""
    width, height = 576, 471
    palette = bytes(i * 7 % 256 for i in range(216 * 3))
    pixels = bytes((x // 48 + y // 48) % 216 if (x * y) % 7 else (x ^ y) % 216
                   for y in range(height) for x in range(width))  # fmt: skip
    decoded = read(palette_png(rows(pixels, width), width, height, palette))
    assert decoded.size == (width, height)
    assert decoded.tobytes() == pixels
