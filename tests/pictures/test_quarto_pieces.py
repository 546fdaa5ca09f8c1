"""Quarto's sixteen pieces are drawn by their four attributes: tall ones larger, round
ones as discs, light ones pale, hollow ones with a hole, all sixteen different."""

from __future__ import annotations

from PIL import Image

from pbm.games.quarto_pieces import ATTRIBUTE_BITS, PIECES
from pbm.pictures.canvas import DARK_WOOD, LIGHT_WOOD, PAPER, Canvas
from pbm.pictures.quarto import paint_piece

ROOM = 80
TALL, LIGHT, ROUND, HOLLOW = ATTRIBUTE_BITS


def drawn(piece: int) -> Image.Image:
    canvas = Canvas(ROOM, ROOM)
    paint_piece(canvas, (ROOM / 2, ROOM / 2), ROOM, piece)
    return canvas.image.convert("RGB")


def at(image: Image.Image, x: float, y: float) -> tuple[int, int, int]:
    pixel = image.getpixel((round(x), round(y)))
    assert isinstance(pixel, tuple)
    return (pixel[0], pixel[1], pixel[2])


def covered(image: Image.Image) -> int:
    """Pixels of the piece (neither the page nor the picture's frame)."""
    inner = image.crop((8, 8, image.width - 8, image.height - 8))
    return sum(count for count, rgb in inner.getcolors(1 << 16) or [] if rgb != PAPER)


def test_each_attribute_shows() -> None:
    centre = ROOM / 2
    for piece in PIECES:
        image = drawn(piece)
        body, _, hole = LIGHT_WOOD if piece & LIGHT else DARK_WOOD
        # Between the largest hole and the smallest edge: the body of every piece.
        assert at(image, centre + ROOM * 0.22, centre) == body
        assert at(image, centre, centre) == (hole if piece & HOLLOW else body)
        # Near the corner of the piece's square a disc leaves the page showing.
        half = ROOM * (0.42 if piece & TALL else 0.27)
        corner = at(image, centre - half + 2, centre - half + 2)
        assert (corner == PAPER) == bool(piece & ROUND)


def test_tall_pieces_are_larger_and_all_sixteen_differ() -> None:
    images = {piece: drawn(piece) for piece in PIECES}
    for piece in PIECES:
        if piece & TALL:
            assert covered(images[piece]) > 1.8 * covered(images[piece ^ TALL])
    assert len({image.tobytes() for image in images.values()}) == 16
