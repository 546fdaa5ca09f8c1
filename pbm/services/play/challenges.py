"""Challenges: a new board for the named players, in the order given (the first moves),
and the next board of a match when one of its games ends (a game-end handler)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from pbm.errors import PbmError
from pbm.games import AnyGame as Rules
from pbm.games import GameError
from pbm.games.quadrupel_match import next_first_player
from pbm.services.accounts import consent
from pbm.services.accounts.users import shown, wrapped
from pbm.services.context import Context
from pbm.services.correspondence.clocks import check_option_floors
from pbm.services.correspondence.clocks import validate as validate_time_options
from pbm.services.mailing.board_mail import auto_subscribers, mail_board
from pbm.services.mailing.tokens import new_token
from pbm.services.play.boards import Board, board_from_row, save_board
from pbm.services.play.boards import board_name as named
from pbm.services.play.bots import challenge_refusal, player_limit_refusal
from pbm.services.play.matches import link_first, match_state
from pbm.store import queries
from pbm.store.models import BoardRow, GamePlayer, Subscription, User
from pbm.texts import phrase

log = logging.getLogger(__name__)

# Server options a challenge may set with --name=value; the time options are read by
# pbm.services.correspondence.clocks (docs/correspondence.md), --unrated keeps the game
# out of the ratings.
SERVER_OPTIONS = ("nagtime", "forfeittime", "totaltime", "fischer", "weekendfree", "unrated")


class ChallengeError(PbmError):
    """A refused challenge: its reply has the subject `Invalid challenge`."""


def challenger_of(ctx: Context, rules: Rules, userids: Sequence[str]) -> User | None:
    """The named player whose registered address sent a mailed challenge; ChallengeError
    when the sender is none of them, so nobody opens boards between other people. The
    admin CLI (no sender) may name anyone: None. `pbm game new`, tournaments and matches
    call create_game directly and are not asked."""
    if not ctx.sender:
        return None
    keys = {queries.userid_key(u) for u in userids}
    for user in queries.users_by_address(ctx.session, ctx.sender):
        # A row stored under an older key form matches by its userid's key too.
        if user.userid_key in keys or queries.userid_key(user.userid) in keys:
            return user
    log.info("challenge %s from %s refused: not a player", " ".join(userids), ctx.sender)
    raise ChallengeError(
        wrapped(
            phrase(
                "challenge_not_player",
                address=ctx.sender,
                userids=", ".join(shown(u) for u in userids),
                game=rules.name,
            )
        )
    )


def merge_variant(
    rules: Rules, variant: dict[str, str], params: dict[str, str], name: str = ""
) -> dict[str, str]:
    """The options of a challenge by variant name: the name's options plus the challenge's
    own `-option`s; an option the name fixes may only be repeated with the same value."""
    merged = dict(params)
    for option, fixed in variant.items():
        given = next((v for k, v in params.items() if _option_key(k) == option), None)
        if given is None:
            merged[option] = fixed
            continue
        try:
            same = rules.resolve_options({option: given}) == rules.resolve_options({option: fixed})
        except GameError:
            same = False  # an unreadable value: not the one the name stands for
        if not same:
            raise ChallengeError(
                phrase(
                    "variant_conflict",
                    name=name or rules.name,
                    option=option,
                    fixed=fixed,
                    given=given,
                    game=rules.name,
                )
            )
    return merged


def _option_key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


@dataclass(frozen=True)
class NewBoard:
    """A board to start: its game, its players in seat order (the first moves), the
    game's own options (`params`) and the server's (`server_options`: SERVER_OPTIONS),
    a comment shown on it, its name (None: the game's next number), `link` making it
    game number `link[1]` of the match whose first game has id `link[0]`, and
    `entered` for a tournament pairing, which ignores the players' limits on open games
    (entering the tournament accepted them)."""

    rules: Rules
    userids: Sequence[str]
    params: dict[str, str] = field(default_factory=dict)
    server_options: dict[str, str] = field(default_factory=dict)
    comment: str = ""
    comment_by: str = ""
    board_name: str | None = None
    link: tuple[int, int] | None = None
    entered: bool = False


def create_game(ctx: Context, new: NewBoard) -> Board:
    """Start a board and mail it to its players and auto-subscribers; ChallengeError
    says everything that refused it."""
    users = _players(ctx, new)
    _check_server_options(ctx, new.server_options)
    try:
        state = new.rules.new_state(**new.params)
    except GameError as exc:
        raise ChallengeError(str(exc)) from None
    row = _store_row(ctx, new)
    _seat(ctx, new, row, users)
    board = board_from_row(ctx, row, new.rules)
    board.state = state
    save_board(ctx, board)
    log.info("new %s board %s for %s", new.rules.name, row.board, " ".join(new.userids))
    mail_board(ctx, board, new=True)
    return board


@dataclass
class _Refusals:
    """Why the named players cannot all take their seats, gathered to be said at once."""

    unknown: list[str] = field(default_factory=list)
    refusing: list[str] = field(default_factory=list)
    full: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # each a wrapped paragraph

    def lines(self, rules: Rules) -> list[str]:
        found: list[str] = []
        if self.unknown:
            found.append(phrase("unknown_userid", userids="\n\t".join(self.unknown)))
        if self.refusing:
            userids = "\n\t".join(self.refusing)
            found.append(phrase("challenge_refusing", game=rules.title, userids=userids))
        if self.full:
            found.append(phrase("challenge_full", game=rules.title, userids="\n\t".join(self.full)))
        return found + self.other


def _players(ctx: Context, new: NewBoard) -> list[User]:
    """The named players, one per seat, each willing and able to take the board."""
    seats = len(new.rules.seats)
    if len(new.userids) < seats:
        raise ChallengeError(phrase("too_few_players", count=seats))
    if len(new.userids) > seats:
        raise ChallengeError(phrase("too_many_players", count=seats))
    users: list[User] = []
    refusals = _Refusals()
    for userid in new.userids:
        user = queries.user_by_userid(ctx.session, userid)
        if user is None or not user.password_hash:
            refusals.unknown.append(userid)
            continue
        # A player named twice is refused once for that; his other refusals said once.
        if all(u.id != user.id for u in users):
            _note_refusal(ctx, new, user, refusals)
        users.append(user)
    problems = refusals.lines(new.rules)
    if not new.entered and (refusal := player_limit_refusal(ctx, users)) is not None:
        problems.append(wrapped(refusal))
    if len({u.id for u in users}) < len(users):
        problems.append(phrase("challenge_twice"))
    if problems:
        raise ChallengeError("\n".join(problems))
    return users


def _note_refusal(ctx: Context, new: NewBoard, user: User, refusals: _Refusals) -> None:
    """Add why `user` cannot take a seat, if he cannot: he refuses the game, has as many
    of its boards as he wants, is a bot that does not play it, or (asked by mail) has
    not confirmed his address."""
    setting = queries.type_setting(ctx.session, user.saved_id, new.rules.name)
    limit = setting.game_limit if setting else None
    if user.disabled or limit == 0:
        refusals.refusing.append(user.userid)
    elif (
        not new.entered
        and limit is not None
        and queries.active_count(ctx.session, user.saved_id, new.rules.name) >= limit
    ):
        refusals.full.append(user.userid)
    elif (refusal := challenge_refusal(ctx, user, new.rules, entered=new.entered)) is not None:
        refusals.other.append(wrapped(refusal))
    elif ctx.sender and not new.entered:
        unconfirmed = consent.require_confirmed(ctx, user)
        if unconfirmed is not None:
            refusals.other.append(wrapped(unconfirmed))


def _check_server_options(ctx: Context, server_options: dict[str, str]) -> None:
    """Only SERVER_OPTIONS, with time options that read and, asked by mail, keep above
    the server's floors."""
    bad = [k for k in server_options if k not in SERVER_OPTIONS]
    if bad:
        raise ChallengeError(
            phrase("bad_server_option", options=" ".join(bad), known=" ".join(SERVER_OPTIONS))
        )
    try:
        validate_time_options(server_options)
        if ctx.sender:
            check_option_floors(ctx.config, server_options)
    except PbmError as exc:
        raise ChallengeError(str(exc)) from None


def _store_row(ctx: Context, new: NewBoard) -> BoardRow:
    """The board's row, under its given name or the game's next number, linked to its
    match (the one it continues, or one its options start)."""
    rules, params, server_options = new.rules, new.params, new.server_options
    number = None
    if new.board_name is None:
        number = queries.next_board_number(ctx.session, rules.name)
        board_name = str(number)
    else:
        board_name = named(new.board_name)
        if queries.game_by_board(ctx.session, rules.name, board_name) is not None:
            raise ChallengeError(phrase("board_exists", game=rules.title, board=board_name))
    now = ctx.now()
    comment = new.comment.strip()
    row = BoardRow(
        game=rules.name,
        board=board_name.lower(),
        board_number=number,
        status="active",
        options=dict(params),
        server_options=dict(server_options),
        created_at=now,
        last_move_at=now,
        rated="handicap" not in params and "unrated" not in server_options,
        comment=comment or None,
        comment_by=new.comment_by if comment else None,
    )
    ctx.session.add(row)
    ctx.session.flush()
    if new.link is not None:
        row.match_id, row.match_game = new.link
    else:
        link_first(ctx, row, rules, params)
    return row


def _seat(ctx: Context, new: NewBoard, row: BoardRow, users: list[User]) -> None:
    """The players in their seats with their reply tokens (a seat taken ends a seek),
    and the game's auto-subscribers watching."""
    for position, user in enumerate(users):
        token = new_token(ctx, row.saved_id, user.saved_id)
        ctx.session.add(
            GamePlayer(game_id=row.saved_id, user_id=user.saved_id, position=position, token=token)
        )
        setting = queries.type_setting(ctx.session, user.saved_id, new.rules.name)
        if setting and setting.seeking > 0:
            setting.seeking -= 1
            ctx.session.add(setting)
    player_ids = {u.id for u in users}
    for setting in auto_subscribers(ctx, new.rules.name):
        if setting.user_id not in player_ids:
            ctx.session.add(Subscription(game_id=row.saved_id, user_id=setting.user_id))
    ctx.session.flush()


def continue_match(ctx: Context, board: Board) -> None:
    """After a match game ended: start the next game, unless the match is decided."""
    row = board.row
    if row.match_id is None:
        return
    state = match_state(ctx, row.match_id)
    if state.over or state.games[-1].id != row.id or not state.points:
        return
    last_players = [u.userid for _, u in board.players]
    last_first = state.userids.index(last_players[0])
    first = next_first_player(state.points[-1], last_first)
    order = [state.userids[first], state.userids[1 - first]]
    number = (row.match_game or 1) + 1
    try:
        new = create_game(
            ctx,
            NewBoard(
                board.rules,
                order,
                params=dict(row.options),
                server_options=dict(row.server_options),
                comment=phrase("match_comment", number=number, totals=state.totals()),
                comment_by=ctx.config.server_name,
                link=(row.match_id, number),
            ),
        )
    except PbmError as exc:
        log.warning("%s: the next match game was not started: %s", board.label, exc)
        return
    log.info("%s: match game %s is %s", board.label, number, new.label)
