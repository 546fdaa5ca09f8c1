"""The drawn board's words from templates/phrases.toml, for every caller of
pbm.pictures (the mail's HTML part, the web pages, the boards in words): the pictures
are pure and read no file, so they are given their words."""

from __future__ import annotations

from pbm.pictures.words import PictureWords, phrase_keys
from pbm.texts import made_once, unfilled


def picture_words() -> PictureWords:
    """Each phrase `picture_<field>` as it stands in the templates now: built once per
    templates in use, not for every mail (it was about 3 % of a move's work)."""
    return made_once(_read)


def _read() -> PictureWords:
    return PictureWords(**{field: unfilled(key) for field, key in phrase_keys().items()})
