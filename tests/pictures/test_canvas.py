"""The canvas draws in the palette's indices (pbm.pictures.canvas): each thing it draws
looks as drawing it in RGB on what the picture holds and mapping the result to the
palette gives, on one ground or on several under one sprite (its edges meet the mapped
edges of what lies under it), a disc and the line over it pasted as one sprite look as
the two composed, and whatever is drawn past the picture's left edge leaves its PNG
whole. A board's corner labels are kept with it, and show on the squares a move tints."""

from __future__ import annotations

import io

from PIL import Image

from pbm.pictures.board import BAND, Grid, Mark, paint_board
from pbm.pictures.canvas import (
    DARK_EDGE,
    DARK_MAN,
    INK,
    LIGHT_EDGE,
    LIGHT_MAN,
    MOVE_TINT,
    PAPER,
    ROD,
    WOOD,
    Canvas,
    Colour,
    lettering,
    palette_colours,
    sprite,
)

WIDTH, HEIGHT = 120, 60


def mapped(image: Image.Image) -> Image.Image:
    """An RGB image mapped to the palette pixel by pixel, as whole pictures once were."""
    colours = palette_colours()
    palette = Image.new("P", (1, 1))
    flat = [value for colour in colours for value in colour]
    palette.putpalette(flat + flat[:3] * (256 - len(colours)))
    return image.quantize(palette=palette, dither=Image.Dither.NONE)


def pasted(
    reference: Image.Image, ink: Image.Image | Colour, at: tuple[int, int], mask: Image.Image
) -> Image.Image:
    """`reference` (in palette colours) with `ink` pasted through `mask` at `at`: the
    pixels the mask touches mapped to the palette, the others as they were."""
    box = (*at, at[0] + mask.width, at[1] + mask.height)
    drawn = reference.copy()
    drawn.paste(ink, box, mask)
    touched = Image.new("L", reference.size, 0)
    alpha = mask.getchannel("A") if mask.mode == "RGBA" else mask
    touched.paste(alpha.point(lambda value: 255 if value else 0), box)
    reference.paste(mapped(drawn).convert("RGB"), (0, 0), touched)
    return reference


def test_drawn_in_the_palette_as_mapped_from_rgb() -> None:
    canvas = Canvas(WIDTH, HEIGHT, framed=False)
    reference = Image.new("RGB", (WIDTH, HEIGHT), PAPER)
    # Two grounds side by side: a disc on each, one across both, a rod across a man.
    canvas.rect((10, 10, 60, 50), fill=WOOD)
    canvas.rect((60, 10, 110, 50), fill=MOVE_TINT)
    reference.paste(WOOD, (10, 10, 60, 50))
    reference.paste(MOVE_TINT, (60, 10, 110, 50))
    discs = [
        ((15.25, 15.5, 35.25, 35.5), DARK_MAN, DARK_EDGE),
        ((75.25, 15.5, 95.25, 35.5), DARK_MAN, DARK_EDGE),
        ((50.5, 20.25, 70.5, 40.25), LIGHT_MAN, LIGHT_EDGE),
    ]
    for box, fill, edge in discs:
        canvas.disc(box, fill=fill, outline=edge, width=1.5)
        left, top = int(box[0]), int(box[1])
        drawn = sprite(("disc", 0.0), (box[0] - left, box[1] - top), (20.0, 20.0), fill, edge, 1.5)
        reference = pasted(reference, drawn, (left, top), drawn)
    canvas.line([(60.5, 30.25), (68.5, 44.25)], ROD, 3.0)
    rod = sprite(("line", ((3.5, 3.25), (11.5, 17.25))), (0.0, 0.0), (15.5, 19.5), ROD, None, 3.0)
    reference = pasted(reference, rod, (57, 27), rod)
    # A label on the page, and the same on the wood.
    for x, y in ((2, 52), (20, 40)):
        canvas.text((x, y), "b7", 10, INK)
        mask, left, top = lettering("b7", 10, "la")
        reference = pasted(reference, INK, (x + left, y + top), mask)
    assert canvas.image.convert("RGB").tobytes() == reference.tobytes()


def test_a_disc_and_its_line_are_pasted_as_the_two_composed() -> None:
    canvas = Canvas(WIDTH, HEIGHT, framed=False)
    reference = Image.new("RGB", (WIDTH, HEIGHT), PAPER)
    canvas.rect((10, 10, 60, 50), fill=WOOD)
    reference.paste(WOOD, (10, 10, 60, 50))
    # A man whose rod reaches past his disc, up and to the left, off the wood.
    canvas.disc_and_line(
        (30.25, 20.5, 50.25, 40.5),
        LIGHT_MAN,
        LIGHT_EDGE,
        [(40.25, 30.5), (22.25, 12.5)],
        ROD,
        disc_width=1.5,
        line_width=3.0,
    )
    disc = sprite(("disc", 0.0), (0.25, 0.5), (20.0, 20.0), LIGHT_MAN, LIGHT_EDGE, 1.5)
    # The rod's box: its ends padded by half its width and a pixel, from (19, 10).
    rod = sprite(("line", ((21.25, 20.5), (3.25, 2.5))), (0.0, 0.0), (23.75, 23.0), ROD, None, 3.0)
    both = Image.new("RGBA", (32, 31), (0, 0, 0, 0))  # the disc's 21 pixels from (30, 20)
    both.alpha_composite(disc, (11, 10))
    both.alpha_composite(rod, (0, 0))
    reference = pasted(reference, both, (19, 10), both)
    assert canvas.image.convert("RGB").tobytes() == reference.tobytes()


def test_corner_labels_are_kept_with_the_board_and_drawn_again_on_a_tint() -> None:
    grid = Grid(BAND, BAND, 2, 2, 40)
    size = round(grid.width) + 2 * BAND
    corners = ("1", "2", "3", "4")
    bare = Canvas(size, size, framed=False)
    paint_board(bare, grid, lambda file, rank: WOOD, {}, (), corners)
    marked = Canvas(size, size, framed=False)
    paint_board(marked, grid, lambda file, rank: WOOD, {"b1": Mark.MOVE}, (), corners)
    for canvas in (bare, marked):
        for rank in range(2):
            for file in range(2):
                left, top, _, _ = (round(v) for v in grid.box(file, rank))
                corner = canvas.image.convert("RGB").crop((left + 3, top + 2, left + 12, top + 14))
                # the label's ink among the square's own colour
                assert len(corner.getcolors() or []) > 2, (file, rank)


def test_drawing_past_the_left_edge_leaves_the_png_whole() -> None:
    canvas = Canvas(WIDTH, HEIGHT)
    canvas.disc((-8.0, 20.0, 12.0, 40.0), fill=DARK_MAN, outline=DARK_EDGE)
    canvas.text((-6, 4), "12", 12, INK)
    canvas.line([(-4.0, 50.0), (30.0, 50.0)], ROD, 4.0)
    decoded = Image.open(io.BytesIO(canvas.png()))
    decoded.load()
    assert decoded.size == (WIDTH, HEIGHT)
    assert decoded.tobytes() == canvas.image.tobytes()
    # The disc's right half shows at the edge: the picture holds what was drawn there.
    assert decoded.convert("RGB").getpixel((4, 30)) == DARK_MAN
