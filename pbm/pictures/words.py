"""The words a picture draws and says (its status, notes, alt text and the position in
words), given by the caller: every word sent to people lives in templates/, and this
pure package reads no file (pbm.services.play.picture_words fills `PictureWords`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache, reduce
from string import Template


@dataclass(frozen=True, slots=True)
class PictureWords:
    """Each field holds the phrase `picture_<field>` of templates/phrases.toml with its
    $placeholders unfilled (`say` fills them)."""

    # Every game's frame, alt text and words.
    to_move: str
    game_over: str
    draw: str
    wins: str
    last_move: str
    alt: str
    alt_last_move: str
    group: str
    none: str
    and_: str
    move_kept_secret: str
    on_the_board: str
    in_hand: str
    in_reserve: str
    marker: str
    # Quarto.
    quarto_group: str
    quarto_key: str
    quarto_to_give: str
    quarto_to_place: str
    quarto_to_place_and_give: str
    quarto_held: str
    quarto_unused: str
    quarto_advanced: str
    quarto_beginners_one: str
    quarto_beginners: str
    quarto_panel_held: str
    quarto_panel_empty: str
    quarto_panel_unused: str
    # Quad.
    quad_group: str
    quad_to_drop: str
    quad_to_drop_rim: str
    quad_hand: str
    # Quadrature.
    quadrature_group: str
    quadrature_side: str
    quadrature_plates: str
    # Quadrupel.
    quadrupel_group: str
    quadrupel_hidden: str
    quadrupel_blank: str
    quadrupel_marked: str
    quadrupel_dot: str
    quadrupel_dots: str
    quadrupel_to_set_up: str
    quadrupel_to_move: str
    quadrupel_basic: str
    quadrupel_variant: str
    quadrupel_points: str
    quadrupel_minimum: str
    quadrupel_placement: str
    quadrupel_ban: str
    quadrupel_zones: str
    quadrupel_awaited: str
    quadrupel_extra_turn: str
    quadrupel_extra_turns: str
    # Quarod.
    quarod_group: str
    quarod_north: str
    quarod_east: str
    quarod_south: str
    quarod_west: str
    quarod_engaged: str
    quarod_not_engaged: str
    quarod_pie: str
    quarod_groups: str
    quarod_group_size: str
    quarod_score: str
    quarod_switched: str


def phrase_keys() -> dict[str, str]:
    """The phrase key of each field, by field name (`and_` is `picture_and`)."""
    return {f.name: "picture_" + f.name.rstrip("_") for f in fields(PictureWords)}


def say(template: str, **values: str | int) -> str:
    """`template` filled; its line breaks (a long phrase kept within the templates'
    72 columns) are spaces, since the picture wraps its words to its own width."""
    return _filled(template, tuple(values.items()))


@lru_cache(maxsize=4096)
def _filled(template: str, values: tuple[tuple[str, str | int], ...]) -> str:
    """Kept: a picture says the same phrase of every piece on its board and of every
    board it draws (a tenth of a picture's time went to filling them)."""
    return Template(template.replace("\n", " ")).substitute(dict(values))


def joined(words: PictureWords, items: list[str]) -> str:
    """`a and b and c`, as the pictures have always listed names."""
    if not items:
        return ""
    return reduce(lambda first, second: say(words.and_, first=first, second=second), items)
