"""Reply tokens: a per-player, per-board secret carried in the Reply-To address and the
Message-ID of every board mail, so a reply from the player's own address may just say
the move.

With a secret in the environment (config.token_secret_env) tokens are an HMAC of the
board and the player; without one they are random. Either way they are stored on the
player's GamePlayer row, so a token is looked up, never reversed. Observers get none.
The move count that board mails add to it (pbm.mail.addressing) is no part of it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from pbm.services.context import Context
from pbm.services.play.boards import Board, board_by_id
from pbm.store import queries
from pbm.store.models import User
from pbm.texts import phrase, wrap

TOKEN_LENGTH = 20


def _encode(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").lower().rstrip("=")[:TOKEN_LENGTH]


def new_token(ctx: Context, game_id: int, user_id: int) -> str:
    secret = ctx.config.token_secret()
    if secret:
        digest = hmac.new(secret, f"{game_id}:{user_id}".encode(), hashlib.sha256).digest()
        return _encode(digest)
    return _encode(secrets.token_bytes(16))


def token_for(ctx: Context, board: Board, user: User) -> str | None:
    """The token of a player of a board; None for anyone who does not play it."""
    for gp, player in board.players:
        if player.id == user.id:
            if gp.token is None:  # a board created before tokens
                gp.token = new_token(ctx, board.id, user.saved_id)
                ctx.session.add(gp)
            return gp.token
    return None


@dataclass(frozen=True)
class Seat:
    """Whose a reply token is: the board and the player it was issued to."""

    game_id: int
    user: User
    token: str


def _seat(ctx: Context, token: str) -> Seat | None:
    gp = queries.player_by_token(ctx.session, token.lower())
    if gp is None:
        return None
    user = ctx.session.get(User, gp.user_id)
    if user is None or user.disabled:
        return None
    return Seat(gp.game_id, user, token.lower())


def _from_player(ctx: Context, user: User) -> bool:
    return ctx.sender.lower() in queries.addresses_of(ctx.session, user.saved_id)


def resolve(ctx: Context, tokens: list[str]) -> Seat | None:
    """The seat of the first token that belongs to the sender, else None.

    A token alone is not enough: the mail must come from one of that player's addresses.
    """
    for token in tokens:
        seat = _seat(ctx, token)
        if seat is not None and _from_player(ctx, seat.user):
            return seat
    return None


def foreign(ctx: Context, tokens: list[str]) -> Seat | None:
    """The seat of the first token that is someone else's than the sender's (a reply to
    another player's board mail, or from an address his player never registered)."""
    for token in tokens:
        seat = _seat(ctx, token)
        if seat is not None and not _from_player(ctx, seat.user):
            return seat
    return None


def foreign_refusal(ctx: Context, seat: Seat) -> str:
    """Why a reply to someone else's reply address did nothing: whose address and board
    it was, and what the sender can do instead. It names the sender's own userid and
    address, never another's address (docs/security.md)."""
    board = board_by_id(ctx, seat.game_id)
    owner = seat.user.userid
    text = phrase("token_foreign", owner=owner, label=board.label, sender=ctx.sender)
    users = queries.users_by_address(ctx.session, ctx.sender)
    players = [u for u in users if board.index_of(u.id) is not None]
    if players:
        hint = phrase("token_foreign_player", userid=players[0].userid)
    elif users:
        example = f"{board.rules.name} move {board.row.board} {users[0].userid} PASSWORD MOVE"
        hint = phrase("token_foreign_user", userid=users[0].userid, example=example)
    else:
        example = f"{board.rules.name} move {board.row.board} {owner} PASSWORD MOVE"
        hint = phrase("token_foreign_stranger", owner=owner, example=example)
    return f"{wrap(text, reflow=True)}\n{wrap(hint, reflow=True)}"
