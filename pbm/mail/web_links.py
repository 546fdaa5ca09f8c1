"""The addresses of pbm's web pages that mails link to (docs/web.md): a board, a
tournament, the one-click unsubscribe of a stream (RFC 8058) and an address's
confirmation. `base` is `[web] base_url` without its final slash; "" means pbm has no
public pages, and mails then carry none of these links."""

from __future__ import annotations

from urllib.parse import quote


def _part(text: str) -> str:
    return quote(text, safe="")


def board_url(base: str, game: str, board: str) -> str:
    return f"{base}/{_part(game)}/{_part(board)}"


def tournament_url(base: str, name: str) -> str:
    return f"{base}/tournament/{_part(name)}"


def unsubscribe_url(base: str, code: str) -> str:
    return f"{base}/unsubscribe/{_part(code)}"


def confirm_url(base: str, token: str) -> str:
    return f"{base}/confirm/{_part(token)}"


def player_url(base: str, userid: str) -> str:
    return f"{base}/player/{_part(userid)}"
