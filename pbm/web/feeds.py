"""Feeds: Atom (feedgen) of a board's moves, of a player's boards and of a
tournament's rounds, and an iCalendar (icalendar) of a player's deadlines. Each is
bounded (FEED_ENTRIES) and shows only what the board's page shows: a hidden move stays
hidden. A deadline's event keeps one UID per board, and its SEQUENCE grows with the
move count and with the vacations of the player to move (`deadline_sequence`), so a
calendar app moves the event when a move or a vacation moves the deadline."""

from __future__ import annotations

from datetime import datetime, timedelta

import icalendar
from feedgen.feed import FeedGenerator

from pbm.clock import as_utc
from pbm.mail import web_links
from pbm.services.context import Context
from pbm.services.correspondence.clocks import forfeit_at
from pbm.services.correspondence.vacation import span_changes
from pbm.services.play.board_text import result_line
from pbm.services.play.boards import Board, board_from_row
from pbm.services.play.secrecy import shown_echo
from pbm.store import web_queries
from pbm.store.models import BoardRow
from pbm.texts import phrase
from pbm.web import views

FEED_ENTRIES = 50
CALENDAR_BOARDS = 200  # active boards one calendar lists at most
EVENT_MINUTES = 30


def _feed(ctx: Context, url: str, title: str, updated: datetime) -> FeedGenerator:
    feed = FeedGenerator()
    feed.id(url)
    feed.title(title)
    feed.link(href=url, rel="alternate")
    feed.link(href=f"{url}/feed.atom", rel="self")
    feed.author({"name": ctx.config.server_name})
    feed.updated(as_utc(updated))
    return feed


def board_feed(ctx: Context, base: str, game: str, name: str) -> bytes:
    board = views.find_board(ctx, game, name)
    url = web_links.board_url(base, board.rules.name, board.row.board)
    feed = _feed(ctx, url, board.label, board.row.last_move_at)
    moves, hidden = views.shown_moves(ctx, board)
    if not board.active:
        entry = feed.add_entry(order="append")
        entry.id(f"{url}#result")
        entry.title(result_line(board))
        entry.link(href=url)
        entry.updated(as_utc(board.row.ended_at or board.row.last_move_at))
    stored = {m.number: m for m in web_queries.moves_page(ctx.session, board.id, FEED_ENTRIES)}
    for move in reversed(moves[-FEED_ENTRIES:]):
        entry = feed.add_entry(order="append")
        entry.id(f"{url}/{move.number}")
        who = board.userids[move.player]
        entry.title(
            phrase(
                "feed_move",
                label=board.label,
                number=move.number,
                userid=who,
                move=shown_echo(move, hidden),
            )
        )
        entry.link(href=f"{url}/{move.number}")
        made = stored.get(move.number)
        entry.updated(as_utc(made.made_at if made is not None else board.row.last_move_at))
    return bytes(feed.atom_str(pretty=True))


def _latest(ctx: Context, board: Board) -> str:
    """A player feed's entry for a board: its last move, or its result."""
    moves, hidden = views.shown_moves(ctx, board)
    if not board.active or not moves:
        return phrase("feed_latest_result", label=board.label, result=result_line(board))
    last = moves[-1]
    return phrase(
        "feed_move",
        label=board.label,
        number=last.number,
        userid=board.userids[last.player],
        move=shown_echo(last, hidden),
    )


def player_feed(ctx: Context, base: str, userid: str) -> bytes:
    user = views.find_player(ctx, userid)
    url = web_links.player_url(base, user.userid)
    rows = web_queries.recent_boards(ctx.session, user.saved_id, FEED_ENTRIES)
    updated = rows[0].last_move_at if rows else user.created_at
    feed = _feed(ctx, url, phrase("feed_player", userid=user.userid), updated)
    for row in rows:
        board = board_from_row(ctx, row)
        board_url = web_links.board_url(base, board.rules.name, row.board)
        entry = feed.add_entry(order="append")
        entry.id(f"{board_url}/{row.move_count}")
        entry.title(_latest(ctx, board))
        entry.link(href=board_url)
        entry.updated(as_utc(row.ended_at or row.last_move_at))
    return bytes(feed.atom_str(pretty=True))


def tournament_feed(ctx: Context, base: str, name: str) -> bytes:
    t = views.find_tournament(ctx, name)
    page = views.tournament_page(ctx, name)
    url = web_links.tournament_url(base, t.name)
    updated = t.ended_at or t.started_at or t.created_at
    feed = _feed(ctx, url, phrase("web_tournament", name=t.name), updated)
    lines = [(number, p) for number, pairs in page.rounds for p in pairs]
    for number, p in list(reversed(lines))[:FEED_ENTRIES]:
        entry = feed.add_entry(order="append")
        entry.id(f"{url}#r{number}s{p.slot}{'-' + p.result if p.result else ''}")
        key = "feed_table" if p.second else "feed_table_bye"
        line = phrase(
            key, number=number, table=p.slot, first=p.first, second=p.second, result=p.result
        )
        entry.title(line.rstrip())
        entry.link(href=f"{base}{p.board_url}" if p.board_url else url)
        entry.updated(as_utc(updated))
    return bytes(feed.atom_str(pretty=True))


# Vacation changes counted within one move (far more than a player makes between moves).
_CHANGES_PER_MOVE = 1000


def deadline_sequence(ctx: Context, row: BoardRow, mover_id: int) -> int:
    """The version of a board's deadline: it grows with every move, and between moves
    with every start and end of a vacation of the player to move, which moves it too."""
    changes = span_changes(ctx.session, mover_id, row.last_move_at)
    return row.move_count * _CHANGES_PER_MOVE + min(changes, _CHANGES_PER_MOVE - 1)


def deadline_calendar(ctx: Context, base: str, userid: str) -> bytes:
    """One event per running board at the forfeit pbm will enforce (vacations and free
    weekends counted, pbm.services.correspondence.clocks.forfeit_at): "Your move in Quarto 101" when
    the player is to move there, else whose move it is."""
    user = views.find_player(ctx, userid)
    cal = icalendar.Calendar()
    cal.add("prodid", "-//pbm//deadlines//EN")
    cal.add("version", "2.0")
    cal.add("x-wr-calname", phrase("calendar_name", userid=user.userid))
    host = ctx.config.server_host
    rows, _total = web_queries.games_page(
        ctx.session,
        web_queries.Slice(0, CALENDAR_BOARDS),
        user_id=user.saved_id,
        statuses=("active",),
    )
    for row in rows:
        board = board_from_row(ctx, row)
        due = forfeit_at(ctx.session, board)
        mover = board.user_to_move()
        if due is None or mover is None:
            continue
        mine = mover.id == user.id
        summary = (
            phrase("calendar_your_move", label=board.label)
            if mine
            else phrase("calendar_their_move", userid=mover.userid, label=board.label)
        )
        event = icalendar.Event()
        event.add("uid", f"board-{board.id}-{user.saved_id}@{host}")
        event.add("sequence", deadline_sequence(ctx, row, mover.saved_id))
        event.add("dtstamp", as_utc(row.last_move_at))
        event.add("summary", summary)
        event.add("description", phrase("calendar_forfeit", when=f"{as_utc(due):%Y-%m-%d %H:%M}"))
        event.add("dtstart", as_utc(due) - timedelta(minutes=EVENT_MINUTES))
        event.add("dtend", as_utc(due))
        event.add("url", web_links.board_url(base, board.rules.name, row.board))
        cal.add_component(event)
    return bytes(cal.to_ical())
