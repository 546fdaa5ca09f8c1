"""Drawn pictures of board positions, for the HTML part of the mails (issue 13).

`draw(game, state, seat=..., previous=...)` returns a `Picture`: a PNG of the board as
`seat` may see it (hidden setups stay hidden), with the last move marked when the state
before it is given, a short `alt` text and the position in words for screen readers.
Pure: Pillow and `pbm.games`, nothing else of pbm; no file, font or network is read, so
its words are given (`PictureWords`, from templates/phrases.toml).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pbm.games import AnyGame
from pbm.games.base import Move, State
from pbm.pictures import quad, quadrature, quadrupel, quarod, quarto
from pbm.pictures.board import Mark, View, frame, seat_names
from pbm.pictures.lastmove import last_move
from pbm.pictures.words import PictureWords, say

__all__ = ["Picture", "PictureWords", "View", "draw", "view"]

# The view of each game by its canonical name; every registered game has one (a test
# checks it), so a new game needs its picture module here.
VIEWS: dict[str, Callable[[AnyGame, Any, int | None, Sequence[str], PictureWords], View]] = {
    "quadrature": quadrature.view,
    "quarto": quarto.view,
    "quadrupel": quadrupel.view,
    "quad": quad.view,
    "quarod": quarod.view,
}


@dataclass(frozen=True, slots=True)
class Picture:
    """A drawn board: `png` bytes of `width` x `height` pixels, the `alt` text (one
    sentence) and `words`, the position line by line (a list for screen readers)."""

    png: bytes
    width: int
    height: int
    alt: str
    words: list[str]


def draw(
    game: AnyGame,
    state: State,
    *,
    seat: int | None,
    words: PictureWords,
    previous: State | None = None,
    heading: str | None = None,
    players: Sequence[str] = (),
    move: Move | None = None,
    ended: str | None = None,
) -> Picture:
    """The picture of `state` for the viewer at `seat` (None: an observer), in `words`.

    `previous`, the state before the last move, marks that move and writes its echo;
    `heading` names the position at the top and in the alt text ("Quarto board 101
    after move 9"; the game's title by default); `players`, the userids by challenge
    order, name who moves, moved and won as the text board does ("alice wins"; the
    seats' names, "Black wins", without them); `move`, the move from `previous` to
    `state` where the caller knows it (else it is found among the legal moves);
    `ended`, how a finished board ended, said instead of the rules' status (a resigned
    board's rules would still say who is to move).
    """
    make = VIEWS[game.name]
    now = make(game, state, seat, seat_names(game, state, players), words)
    title = heading or game.title
    marks: dict[str, Mark] = {}
    echo: str | None = None
    if previous is not None:
        before = make(game, previous, seat, seat_names(game, previous, players), words)
        marks, echo = last_move(game, previous, state, seat, before, now, move)
    legend = _legend(game, now) if players else []
    status = ended or now.status
    canvas = frame(now, title, status, echo, marks, legend)
    if echo:
        alt = say(words.alt_last_move, title=title, status=status, echo=echo)
    else:
        alt = say(words.alt, title=title, status=status)
    said = [*now.words(), *legend, *now.notes(), status]
    if echo:
        said.append(say(words.last_move, echo=echo))
    return Picture(canvas.png(), canvas.width, canvas.height, alt, said)


def view(
    game: AnyGame,
    state: State,
    *,
    seat: int | None,
    words: PictureWords,
    players: Sequence[str] = (),
) -> View:
    """The position as the viewer at `seat` sees it (hidden setups stay hidden), its
    seats named by `players` (userids by challenge order) where given: what a picture
    shows, for those who read it in words."""
    return VIEWS[game.name](game, state, seat, seat_names(game, state, players), words)


def _legend(game: AnyGame, view: View) -> list[str]:
    """Who holds which side ("Black: alice, White: bob"), where the seats are sides the
    picture shows and the names are the players'."""
    if not view.shows_sides:
        return []
    return [", ".join(f"{game.seat_name(s)}: {n}" for s, n in enumerate(view.names))]
