"""What each page shows, read in one read-only session: plain values the templates lay
out (userids only, never an address; hidden moves hidden as a non-player's mail hides
them). Every list is one bounded page (pbm.store.web_queries.Slice)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pbm.errors import NotFoundError
from pbm.games import GAMES, AnyGame
from pbm.games.base import State
from pbm.mail import web_links
from pbm.services.accounts import profile
from pbm.services.context import Context
from pbm.services.correspondence.clocks import forfeit_at, timing_lines
from pbm.services.play import lists, words
from pbm.services.play.board_text import ended_line, position_line, result_line
from pbm.services.play.boards import Board, board_from_row, rules_for, state_at
from pbm.services.play.echoes import with_echoes
from pbm.services.play.secrecy import ShownMove, hidden_moves, shown_echo
from pbm.services.tournaments import describe
from pbm.services.tournaments.lookup import entries, pairings
from pbm.services.tournaments.lookup import table as tournament_table
from pbm.store import queries, web_queries
from pbm.store.models import BoardRow, User
from pbm.store.models_tournament import Tournament
from pbm.store.web_queries import Slice
from pbm.texts import echoed, phrase

PAGE_SIZE = 50  # rows of any list on one page
HISTORY_POINTS = 200  # rating changes one chart draws
RECENT_RESULTS = 20


def part(page: int) -> Slice:
    """The rows of page `page` (from 1) of a list."""
    return Slice((max(page, 1) - 1) * PAGE_SIZE, PAGE_SIZE)


@dataclass(frozen=True)
class Paged:
    """Which page of how many a list shows (for the page links)."""

    page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))


def paged(page: int, total: int) -> Paged:
    return Paged(max(page, 1), total)


@dataclass(frozen=True)
class MoveLine:
    number: int
    userid: str
    echo: str  # the move with what the rules said of it; "..." when hidden
    made_at: datetime | None
    auto: bool


@dataclass(frozen=True)
class BoardLine:
    """A board in a list: its link, players and state."""

    game: str
    title: str
    board: str
    moves: int
    players: list[tuple[str, str | None]]  # label, page (None: a bot or a hidden page)
    status: str
    url: str


@dataclass
class BoardPage:
    game: str
    title: str
    board: str
    label: str
    players: list[tuple[str, bool, bool, str | None]]  # userid, a bot, resigned, page
    active: bool
    status: str  # whose turn, or the result
    upto: int  # the position shown: after this many moves
    total: int  # moves played
    text: str  # the board as mailed to a non-player (show)
    words: list[str]
    moves: list[MoveLine]
    timing: list[str]
    deadline: datetime | None
    to_move: str | None
    records: bool  # whether the record may be downloaded (nothing hidden)
    created_at: datetime
    last_move_at: datetime
    ended_at: datetime | None
    tournament: str | None = None


def game_named(game: str) -> AnyGame:
    """The rules a link's game word names; NotFoundError naming the games played."""
    try:
        return rules_for(game)
    except NotFoundError:
        games = ", ".join(GAMES)
        raise NotFoundError(phrase("web_unknown_game", game=echoed(game), games=games)) from None


def find_board(ctx: Context, game: str, board: str) -> Board:
    """The board `board` of the game `game` names; NotFoundError for either unknown."""
    rules = game_named(game)
    row = web_queries.board_named(ctx.session, rules.name, board)
    if row is None:
        raise NotFoundError(phrase("unknown_board", game=rules.title, board=echoed(board)))
    return board_from_row(ctx, row, rules)


def shown_moves(ctx: Context, board: Board) -> tuple[list[ShownMove], set[int]]:
    moves = with_echoes(board.rules, board.options, queries.move_records(ctx.session, board.id))
    return moves, hidden_moves(board, moves, None)


def board_version(board: Board, *more: str) -> str:
    """A digest of all a board's feed shows (its moves, its end, its players' names, and
    `more`): it changes only when the board does."""
    row = board.row
    shown = (row.saved_id, row.move_count, row.status, row.result, row.winner, row.ended_at)
    return _digest(repr((*shown, row.last_move_at, row.result_reason, *board.userids, *more)))


def picture_version(board: Board, upto: int, words: str) -> str:
    """A digest of what the picture after `upto` moves shows: that position never changes,
    only its heading's and players' names can, the last one's status when the board
    ends, and `words`, what it is drawn with (its heading and words, as text)."""
    shown = (board.id, upto, board.label, *board.userids, ended_line(board, upto), words)
    return _digest(repr(shown))


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def board_page(ctx: Context, game: str, name: str, upto: int | None = None) -> BoardPage:
    """The board `game`/`name` after `upto` moves (default: as it stands)."""
    board = find_board(ctx, game, name)
    row = board.row
    total = row.move_count
    if upto is not None and not 0 <= upto <= total:
        raise NotFoundError(phrase("web_board_no_move", label=board.label, number=upto))
    moves, hidden = shown_moves(ctx, board)
    shown_upto = total if upto is None else upto
    state: State = board.state if upto is None else state_at(ctx, board, upto)
    shown = Board(row=row, rules=board.rules, players=board.players, state=state)
    status = result_line(board) if upto is None else position_line(shown, state)
    mover = board.user_to_move()
    return BoardPage(
        game=board.rules.name,
        title=board.rules.title,
        board=row.board,
        label=board.label,
        players=[(u.userid, u.bot, gp.resigned, player_link(ctx, u)) for gp, u in board.players],
        active=board.active,
        status=status,
        upto=shown_upto,
        total=total,
        text=lists.show_text(ctx, board, None, upto),
        words=words.position(
            board.rules,
            state,
            seat=None,
            players=board.userids,
            headline=board.active or upto is not None,
        ),
        moves=[
            MoveLine(m.number, board.userids[m.player], shown_echo(m, hidden), None, m.auto)
            for m in moves
        ],
        timing=timing_lines(ctx, board),
        deadline=forfeit_at(ctx.session, board),
        to_move=None if mover is None or not board.active else mover.userid,
        records=not hidden,
        created_at=row.created_at,
        last_move_at=row.last_move_at,
        ended_at=row.ended_at,
    )


def record_board(ctx: Context, game: str, name: str) -> Board | None:
    """The board whose record may be downloaded: None while it hides moves from
    non-players (a running Quadrupel's setups)."""
    board = find_board(ctx, game, name)
    _moves, hidden = shown_moves(ctx, board)
    return None if hidden else board


def board_lines(ctx: Context, rows: Sequence[BoardRow]) -> list[BoardLine]:
    """A page of boards as list lines: their players and hidden pages read at once."""
    players = web_queries.players_of_games(ctx.session, [r.saved_id for r in rows])
    hidden = web_queries.hidden_profiles(
        ctx.session, list({u.saved_id for seats in players.values() for _gp, u in seats})
    )
    lines = []
    for row in rows:
        board = board_from_row(ctx, row, players=players[row.saved_id])
        lines.append(
            BoardLine(
                game=board.rules.name,
                title=board.rules.title,
                board=row.board,
                moves=row.move_count,
                players=[
                    (label, _link(user, user.saved_id in hidden))
                    for label, (_gp, user) in zip(board.labels, board.players, strict=True)
                ],
                status=lists.status_text(board),
                url=web_links.board_url("", board.rules.name, row.board),
            )
        )
    return lines


@dataclass(frozen=True)
class RatingLine:
    game: str
    title: str
    value: float
    glicko: float
    games: int
    won: int
    lost: int
    ties: int
    history: list[float]


@dataclass
class PlayerPage:
    userid: str
    bot: bool
    since: datetime
    ratings: list[RatingLine]
    running: list[BoardLine]
    running_paged: Paged
    finished: list[BoardLine]
    finished_paged: Paged
    tournaments: list[tuple[str, str, str]]  # name, game title, status
    tournaments_paged: Paged


def find_player(ctx: Context, userid: str) -> User:
    """The account named `userid` with a public page (hidden ones are not found)."""
    user = queries.user_by_userid(ctx.session, userid)
    if user is None or user.disabled or profile_hidden(ctx, user):
        raise NotFoundError(phrase("web_unknown_player", userid=echoed(userid)))
    return user


def player_link(ctx: Context, user: User) -> str | None:
    """The page of `user`, where he has one (not a bot's, not a hidden one)."""
    return _link(user, profile_hidden(ctx, user))


def _link(user: User, hidden: bool) -> str | None:
    if user.bot or user.disabled or hidden:
        return None
    return web_links.player_url("", user.userid)


def profile_hidden(ctx: Context, user: User) -> bool:
    return profile.hidden(ctx.session, user.saved_id)


def player_page(ctx: Context, userid: str, page: int = 1) -> PlayerPage:
    user = find_player(ctx, userid)
    ratings = []
    for r in web_queries.ratings_of(ctx.session, user.saved_id):
        try:
            title = rules_for(r.game).title
        except NotFoundError:
            continue
        changes = web_queries.rating_history(ctx.session, user.saved_id, r.game, HISTORY_POINTS)
        history = [changes[0].before, *(c.after for c in changes)] if changes else []
        ratings.append(
            RatingLine(r.game, title, r.value, r.glicko, r.games, r.won, r.lost, r.ties, history)
        )
    running, n_running = web_queries.games_page(
        ctx.session, part(page), user_id=user.saved_id, statuses=("active",)
    )
    finished, n_finished = web_queries.games_page(
        ctx.session,
        part(page),
        user_id=user.saved_id,
        statuses=("finished",),
        newest_end_first=True,
    )
    found, n_tournaments = web_queries.tournaments_page(ctx.session, part(page), user.saved_id)
    return PlayerPage(
        userid=user.userid,
        bot=user.bot,
        since=user.created_at,
        ratings=ratings,
        running=board_lines(ctx, running),
        running_paged=paged(page, n_running),
        finished=board_lines(ctx, finished),
        finished_paged=paged(page, n_finished),
        tournaments=[(t.name, _game_title(t.game), t.status) for t in found],
        tournaments_paged=paged(page, n_tournaments),
    )


def _game_title(game: str) -> str:
    try:
        return rules_for(game).title
    except NotFoundError:
        return game


@dataclass
class GamePage:
    game: str
    title: str
    running: list[BoardLine]
    running_paged: Paged
    ratings: list[tuple[int, str, float, float, int]]  # rank, userid, pbmserv, glicko, games
    ratings_paged: Paged


def game_page(ctx: Context, game: str, page: int = 1) -> GamePage:
    rules = game_named(game)
    rows, total = web_queries.games_page(
        ctx.session, part(page), game=rules.name, statuses=("active",)
    )
    rated, n_rated = web_queries.ratings_page(ctx.session, rules.name, part(page))
    first = part(page).offset
    hidden = web_queries.hidden_profiles(ctx.session, [u.saved_id for _r, u in rated])
    shown = [
        (first + i + 1, u.userid, r.value, r.glicko, r.games)
        for i, (r, u) in enumerate(rated)
        if u.saved_id not in hidden
    ]
    return GamePage(
        game=rules.name,
        title=rules.title,
        running=board_lines(ctx, rows),
        running_paged=paged(page, total),
        ratings=shown,
        ratings_paged=paged(page, n_rated),
    )


@dataclass(frozen=True)
class PairingLine:
    slot: int
    first: str
    second: str | None
    result: str
    board_url: str | None


@dataclass
class TournamentPage:
    name: str
    title: str
    kind: str  # "double round robin"
    progress: str  # "running, round 2 of 5"
    standings: list[tuple[int, str, str | None, float, float, float, int, int, int, int]]
    crosstable: list[tuple[str, list[str]]]
    rounds: list[tuple[int, list[PairingLine]]]


def _score_text(score: float | None, how: str | None) -> str:
    if score is None:
        return ""
    if how == "bye":
        return "bye"
    return {1.0: "1-0", 0.5: "½-½", 0.0: "0-1"}.get(score, f"{score:g}")


def find_tournament(ctx: Context, name: str) -> Tournament:
    from_store = web_queries.tournament_named(ctx.session, name.lower())
    if not from_store:
        raise NotFoundError(phrase("web_unknown_tournament", name=echoed(name)))
    return from_store[0]


def tournament_page(ctx: Context, name: str) -> TournamentPage:
    """Standings, the crosstable and every round's pairings: bounded by the field,
    which a tournament bounds itself."""
    t = find_tournament(ctx, name)
    field = entries(ctx.session, t)
    names = {u.saved_id: u.userid for _e, u in field}
    links = {u.saved_id: player_link(ctx, u) for _e, u in field}
    rows = tournament_table(ctx.session, t)
    standings = [
        (
            r.rank,
            names.get(r.player, "?"),
            links.get(r.player),
            r.points,
            r.sonneborn_berger,
            r.buchholz,
            r.wins,
            r.draws,
            r.losses,
            r.byes,
        )
        for r in rows
    ]
    all_pairings = pairings(ctx.session, t)
    order = [r.player for r in rows]
    cells: dict[tuple[int, int], list[str]] = {}
    rounds: dict[int, list[PairingLine]] = {}
    boards = _board_names(ctx, [p.game_id for p in all_pairings if p.game_id is not None])
    for p in all_pairings:
        url = None
        if p.game_id is not None and p.game_id in boards:
            url = web_links.board_url("", t.game, boards[p.game_id])
        second = names.get(p.second_id) if p.second_id is not None else None
        rounds.setdefault(p.round, []).append(
            PairingLine(
                p.slot, names.get(p.first_id, "?"), second, _score_text(p.score, p.how), url
            )
        )
        if p.second_id is not None and p.score is not None:
            cells.setdefault((p.first_id, p.second_id), []).append(_half(p.score))
            cells.setdefault((p.second_id, p.first_id), []).append(_half(1 - p.score))
    crosstable = [
        (names.get(a, "?"), ["×" if a == b else " ".join(cells.get((a, b), [])) for b in order])
        for a in order
    ]
    return TournamentPage(
        name=t.name,
        title=_game_title(t.game),
        kind=describe.kind_text(t),
        progress=describe.progress_text(t),
        standings=standings,
        crosstable=crosstable,
        rounds=sorted(rounds.items()),
    )


def _half(score: float) -> str:
    return {1.0: "1", 0.5: "½", 0.0: "0"}.get(score, f"{score:g}")


def _board_names(ctx: Context, ids: Sequence[int]) -> dict[int, str]:
    return web_queries.board_names(ctx.session, ids)


@dataclass
class FrontPage:
    games: list[tuple[str, str, int]]  # name, title, running boards
    recent: list[BoardLine]
    tournaments: list[tuple[str, str, str]]
    server: str


def front_page(ctx: Context) -> FrontPage:
    games = []
    for name in GAMES:
        rules = rules_for(name)
        _rows, running = web_queries.games_page(
            ctx.session, Slice(0, 0), game=rules.name, statuses=("active",)
        )
        games.append((rules.name, rules.title, running))
    recent, _total = web_queries.games_page(
        ctx.session, Slice(0, RECENT_RESULTS), statuses=("finished",), newest_end_first=True
    )
    found, _n = web_queries.tournaments_page(ctx.session, Slice(0, RECENT_RESULTS))
    return FrontPage(
        games=games,
        recent=board_lines(ctx, recent),
        tournaments=[(t.name, _game_title(t.game), t.status) for t in found],
        server=ctx.config.server_address,
    )
