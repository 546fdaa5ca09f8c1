"""Board pictures (pbm.pictures): every game and variant draws, in bounds, in words.

Positions come from seeded random games played through the game protocol: the start,
the middle and the end of each. The words are checked against the squares read from
the state itself, not from the picture module.
"""

from __future__ import annotations

import io
import itertools
import random
import re
from typing import Any

import pytest
from PIL import Image

from pbm.games import GAMES, AnyGame
from pbm.games import quadrature_board as qb
from pbm.games.grid import square_name
from pbm.games.quad_board import squares_of
from pbm.games.quarod_board import colour_of
from pbm.games.quarto_pieces import CODES
from pbm.pictures.canvas import (
    CAPTURE,
    DARK_MAN,
    EFFECT_TINT,
    LIGHT_MAN,
    MOVE_TINT,
    PAPER,
    ROD,
    WOOD,
    WOOD_DARK,
    palette_colours,
)
from pbm.pictures.picture import VIEWS, draw
from pbm.services.play.picture_words import picture_words

# The words of the pictures as the templates hold them.
WORDS = picture_words()

MAX_BYTES = 40_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The width of each game's picture, in pixels (Quarod's by board size).
WIDTHS = {"quadrature": 564, "quarto": 576, "quadrupel": 400, "quad": 582}
QUAROD_WIDTHS = {5: 364, 6: 424, 7: 484, 8: 496, 9: 496, 10: 494, 11: 493, 12: 496}

CASES = [
    pytest.param(game, dict(options), id=f"{name}-{i}")
    for name, game in GAMES.items()
    for i, options in enumerate(game.example_options)
]


def playout(game: AnyGame, options: dict[str, Any], seed: int) -> list[Any]:
    rng = random.Random(seed)
    states = [game.new_state(**options)]
    while game.to_move(states[-1]) is not None:
        states.append(game.apply(states[-1], rng.choice(game.legal_moves(states[-1]))))
    return states


def occupied(game: AnyGame, state: Any) -> dict[str, str]:
    """Each occupied square and the heading of its group in the words, from the state."""
    if game.name == "quadrature":
        men = {
            name: qb.bits(m) for name, m in (("Black men", state.black), ("White men", state.white))
        }
        return {
            f"{'abcdefghijk'[i % qb.STRIDE]}{i // qb.STRIDE + 1}": group
            for group, points in men.items()
            for i in points
        }
    if game.name == "quarto":
        return {
            square_name(s, 4): "Pieces on the board" for s, p in enumerate(state.board) if p >= 0
        }
    if game.name == "quadrupel":
        groups = ("Black stones (X)", "White stones (O)")
        return {square_name(s, 6): groups[(c - 1) & 1] for s, c in enumerate(state.cells) if c}
    if game.name == "quad":
        return {
            square_name(s, 8): group
            for group, counters in (
                ("White counters (O)", state.white),
                ("Black counters (X)", state.black),
            )
            for s in squares_of(counters)
        }
    groups = ("Black pieces (X)", "White pieces (O)")
    return {
        square_name(s, state.size): groups[colour_of(c)] for s, c in enumerate(state.cells) if c
    }


def pixels_near(png: bytes, colour: tuple[int, int, int], within: int = 10) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    # No image has more colours than pixels, so this bound never gives None.
    colours = image.getcolors(image.width * image.height)
    assert colours is not None
    total = 0
    for count, rgb in colours:
        assert isinstance(rgb, tuple)  # an RGB image's colours are (r, g, b)
        if max(abs(a - b) for a, b in zip(rgb, colour, strict=True)) <= within:
            total += count
    return total


def test_every_game_has_a_picture() -> None:
    assert set(VIEWS) == set(GAMES)


@pytest.mark.parametrize(("game", "options"), CASES)
def test_start_middle_and_end_draw_in_bounds(game: AnyGame, options: dict[str, Any]) -> None:
    states = playout(game, options, seed=7)
    for index in (0, len(states) // 2, len(states) - 1):
        state, previous = states[index], states[index - 1] if index else None
        for seat in (None, 0, 1):
            picture = draw(game, state, seat=seat, words=WORDS, previous=previous)
            assert picture.png.startswith(PNG_SIGNATURE)
            image = Image.open(io.BytesIO(picture.png))
            image.verify()
            image = Image.open(io.BytesIO(picture.png))
            assert image.mode == "P"  # a palette PNG
            assert image.size == (picture.width, picture.height)
            expected = QUAROD_WIDTHS[state.size] if game.name == "quarod" else WIDTHS[game.name]
            assert picture.width == expected
            assert 400 <= picture.height <= 640
            assert len(picture.png) <= MAX_BYTES
            assert picture.alt.startswith(f"{game.title}: ")


@pytest.mark.parametrize(("game", "options"), CASES)
def test_the_words_name_every_piece_by_coordinate(game: AnyGame, options: dict[str, Any]) -> None:
    states = playout(game, options, seed=3)
    for state in (states[len(states) // 2], states[-1]):
        picture = draw(game, state, seat=None, words=WORDS)
        expected = occupied(game, state)
        groups = VIEWS[game.name](game, state, None, game.seats, WORDS).groups
        assert set(expected.values()) <= set(groups)
        # Every group is listed, an empty one too ("White men (0): none").
        for group in groups:
            line = next(w for w in picture.words if w.startswith(f"{group} ("))
            head, _, items = line.partition("): ")
            squares = set(re.findall(r"\b([a-l]\d{1,2})\b", items))
            assert squares == {s for s, g in expected.items() if g == group}, line
            assert head.endswith(f"({len(squares)}")
        status = game.outcome(state)
        if status is not None:
            assert status.reason in picture.alt
            assert any(status.reason in w for w in picture.words)


def test_quarto_words_give_each_piece_code() -> None:
    game = GAMES["quarto"]
    state = playout(game, {}, seed=5)[6]
    words = draw(game, state, seat=0, words=WORDS).words
    for square, piece in enumerate(state.board):
        if piece >= 0:
            assert f"{square_name(square, 4)} ({CODES[piece]}: " in words[0]
    assert (
        f"Unused pieces ({len(state.unused)}): " + " ".join(CODES[p] for p in state.unused) in words
    )


@pytest.mark.parametrize(("game", "options"), CASES)
def test_the_last_move_is_marked_and_echoed(game: AnyGame, options: dict[str, Any]) -> None:
    states = playout(game, options, seed=11)
    previous, state = states[len(states) // 2 - 1], states[len(states) // 2]
    seat = game.to_move(previous)
    assert seat is not None  # a move was played from `previous`
    marked = draw(game, state, seat=seat, words=WORDS, previous=previous)
    plain = draw(game, state, seat=seat, words=WORDS)
    move = next(m for m in game.legal_moves(previous) if game.apply(previous, m) == state)
    echo = f"{game.seat_name(seat)} {game.describe_move(previous, move)}"
    assert f"last move: {echo}" in marked.alt
    assert f"Last move: {echo}" in marked.words
    assert pixels_near(plain.png, MOVE_TINT) == 0
    # A move that names a square tints it (Quarod's pie switch names none).
    if re.search(r"[a-l]\d", game.format_move(previous, move)):
        assert pixels_near(marked.png, MOVE_TINT) > 200


def find_move(game: AnyGame, word: str) -> tuple[Any, Any, Any]:
    """The first move of seeded random games whose echo contains `word`."""
    for seed in range(100):
        states = playout(game, {}, seed)
        for before, after in itertools.pairwise(states):
            move = next(m for m in game.legal_moves(before) if game.apply(before, m) == after)
            if word in game.describe_move(before, move):
                return before, move, after
    raise AssertionError(f"no {word!r} in 100 games of {game.name}")


def test_quadrature_marks_the_men_a_move_converts() -> None:
    game = GAMES["quadrature"]
    before, move, after = find_move(game, "converts")
    picture = draw(game, after, seat=None, words=WORDS, previous=before)
    assert pixels_near(picture.png, EFFECT_TINT) > 200
    assert pixels_near(picture.png, MOVE_TINT) > 200
    assert (
        f"last move: {game.seat_name(before.turn)} {game.describe_move(before, move)}"
        in picture.alt
    )


def test_quad_marks_captures_with_a_cross() -> None:
    game = GAMES["quad"]
    before, _, after = find_move(game, " x ")
    assert pixels_near(draw(game, after, seat=None, words=WORDS).png, CAPTURE, 30) == 0
    picture = draw(game, after, seat=None, words=WORDS, previous=before)
    assert pixels_near(picture.png, CAPTURE, 30) > 20
    assert " x " in picture.alt


def test_a_previous_state_that_is_no_predecessor_marks_only_the_difference() -> None:
    game = GAMES["quad"]
    states = playout(game, {}, seed=2)
    picture = draw(game, states[6], seat=None, words=WORDS, previous=states[2])
    assert "last move" not in picture.alt
    assert pixels_near(picture.png, MOVE_TINT) > 200


def test_pictures_are_deterministic() -> None:
    game = GAMES["quarod"]
    states = playout(game, {"size": 6}, seed=1)
    first = draw(game, states[8], seat=0, words=WORDS, previous=states[7])
    again = draw(game, states[8], seat=0, words=WORDS, previous=states[7])
    assert first == again


def test_one_palette_holds_every_colour_exactly() -> None:
    colours = palette_colours()
    assert len(colours) <= 256
    named = [PAPER, WOOD, WOOD_DARK, MOVE_TINT, EFFECT_TINT, CAPTURE, DARK_MAN, LIGHT_MAN, ROD]
    assert set(named) <= set(colours)
    game = GAMES["quarod"]
    states = playout(game, {"size": 6}, seed=1)
    image = Image.open(
        io.BytesIO(draw(game, states[8], seat=0, words=WORDS, previous=states[7]).png)
    )
    assert image.mode == "P"
    used = {rgb for _, rgb in image.convert("RGB").getcolors(1 << 16) or []}
    # The page, the wood and the men keep their colours exactly; edges are blends.
    assert {PAPER, WOOD, DARK_MAN, LIGHT_MAN, ROD} <= used
    assert used <= set(colours)
