"""The pictures' words come from templates/phrases.toml (pbm.pictures.words): every
field of `PictureWords` has its `picture_` phrase and every such phrase a field, and a
phrase changed in the templates is what the picture, its alt text and the position in
words say."""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbm.config import PACKAGE_TEMPLATES
from pbm.games import GAMES
from pbm.pictures.picture import draw
from pbm.pictures.words import phrase_keys
from pbm.services.play import words
from pbm.services.play.picture_words import picture_words
from pbm.texts import use_templates

# The picture phrases filled by the services, not by the pictures.
HEADINGS = {"picture_heading", "picture_heading_start"}
CHANGED = {
    'picture_alt_last_move = "$title: $status; last move: $echo"': (
        'picture_alt_last_move = "$title: $status; zuletzt: $echo"'
    ),
    'picture_last_move = "Last move: $echo"': 'picture_last_move = "Zuletzt: $echo"',
    'picture_quarto_group = "Pieces on the board"': 'picture_quarto_group = "Steine"',
    'picture_quarto_to_place_and_give = "$who to place $piece and give a piece"': (
        'picture_quarto_to_place_and_give = "$who setzt $piece und gibt einen Stein"'
    ),
}


def test_every_field_has_its_phrase_and_every_phrase_its_field() -> None:
    phrases = tomllib.loads((PACKAGE_TEMPLATES / "phrases.toml").read_text(encoding="utf-8"))
    drawn = {key for key in phrases if key.startswith("picture_")} - HEADINGS
    assert drawn == set(phrase_keys().values())
    assert picture_words().last_move == phrases["picture_last_move"]


@pytest.fixture
def changed_templates(tmp_path: Path) -> Iterator[None]:
    """The shipped templates with the phrases of CHANGED reworded, in use for one test."""
    templates = tmp_path / "templates"
    shutil.copytree(PACKAGE_TEMPLATES, templates)
    path = templates / "phrases.toml"
    text = path.read_text(encoding="utf-8")
    for old, new in CHANGED.items():
        assert old in text
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    use_templates(templates)
    try:
        yield
    finally:
        use_templates(PACKAGE_TEMPLATES)


def test_a_changed_phrase_is_what_the_picture_says(changed_templates: None) -> None:
    game = GAMES["quarto"]
    start = game.new_state()
    move = game.legal_moves(start)[0]
    after = game.apply(start, move)
    players = ("alice", "bob")
    picture = draw(game, after, seat=None, words=picture_words(), previous=start, players=players)
    echo = f"alice {game.describe_move(start, move)}"
    held = game.format_move(start, move).split()[-1]
    assert picture.alt == f"Quarto: bob setzt {held} und gibt einen Stein; zuletzt: {echo}"
    assert picture.words[0] == "Steine (0): none"
    assert picture.words[-1] == f"Zuletzt: {echo}"
    assert not any("Last move" in line or "Pieces on the board" in line for line in picture.words)
    # The boards in words read the same view: its status and groups are reworded too.
    said = words.position(game, after, seat=None, players=players)
    assert said[0] == f"bob setzt {held} und gibt einen Stein."
    assert "Steine" in said[1] and "Pieces on the board" not in " ".join(said)
    # The reworded last move is drawn: the picture differs from the shipped words'.
    use_templates(PACKAGE_TEMPLATES)
    shipped = draw(game, after, seat=None, words=picture_words(), previous=start, players=players)
    assert shipped.png != picture.png and shipped.words[-1] == f"Last move: {echo}"


def test_the_words_are_built_once_per_templates_in_use(tmp_path: Path) -> None:
    """Built once, not for every mail (about 3 % of a move's work); templates put in use
    bring their own words, and the shipped ones theirs again."""
    shipped = picture_words()
    assert picture_words() is shipped
    templates = tmp_path / "templates"
    shutil.copytree(PACKAGE_TEMPLATES, templates)
    path = templates / "phrases.toml"
    old = 'picture_last_move = "Last move: $echo"'
    path.write_text(path.read_text(encoding="utf-8").replace(old, CHANGED[old]), "utf-8")
    use_templates(templates)
    try:
        changed = picture_words()
        assert changed.last_move == "Zuletzt: $echo" and picture_words() is changed
    finally:
        use_templates(PACKAGE_TEMPLATES)
    assert picture_words() == shipped and picture_words().last_move == "Last move: $echo"
