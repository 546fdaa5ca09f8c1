"""Commands of correspondence play: vacation and digest (account level); standings,
ratings and history in pbmserv's layout, and a board's game record (per game)."""

from __future__ import annotations

from pbm.commands.answers import answer
from pbm.commands.base import Command, Invocation
from pbm.errors import BoardError, UsageError
from pbm.services.accounts.users import find_user, sender_account
from pbm.services.context import Context, ReplyKind
from pbm.services.correspondence import digest, vacation
from pbm.services.correspondence.clocks import days_text
from pbm.services.play import records
from pbm.services.play.boards import board_by_id, load_board
from pbm.services.play.echoes import last_moves
from pbm.services.play.lists import games_table
from pbm.services.play.rating_lists import history_boards, ratings_table, standings_text
from pbm.store.models import User
from pbm.texts import echoed, phrase, wrap


class Vacation(Command):
    name = "vacation"
    usage = "userid password start|stop|status"
    summary = (
        "Stop all your clocks while you are away (30 vacation days a year accrue, at most 60)."
    )
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, rest = self.user_only(ctx, inv)
        word = rest[0].lower() if rest else "status"
        now = ctx.now()
        if word == "start":
            vacation.start(ctx.session, user, now, allowance=ctx.config.vacation_start_days)
            text = phrase("vacation_started", left=_days(ctx, user))
        elif word == "stop":
            used = vacation.stop(ctx.session, user, now, allowance=ctx.config.vacation_start_days)
            text = phrase("vacation_stopped", used=_used(used), left=_days(ctx, user))
        elif word == "status":
            row = vacation.account(ctx.session, user, now, allowance=ctx.config.vacation_start_days)
            if row.started_at is not None:
                used = (now - row.started_at) / vacation.DAY
                text = phrase(
                    "vacation_status_on",
                    since=f"{row.started_at:%b %d %H:%M}",
                    used=_used(used),
                    left=_days(ctx, user),
                )
            else:
                text = phrase("vacation_status_off", left=_days(ctx, user))
        else:
            raise UsageError(phrase("vacation_usage", word=echoed(rest[0])), self.full_usage())
        answer(ctx, phrase("subject_vacation", userid=user.userid), text, ReplyKind.ACCOUNT)


def _used(days: float) -> str:
    """How long a vacation ran: under a day in words, as "0 days" read as none at all."""
    return phrase("less_than_a_day") if days < 1 else days_text(round(days, 1))


def _days(ctx: Context, user: User) -> str:
    return days_text(
        round(
            vacation.left_days(
                ctx.session, user, ctx.now(), allowance=ctx.config.vacation_start_days
            ),
            1,
        )
    )


class Digest(Command):
    name = "digest"
    usage = "userid password on|off|status"
    summary = "One mail a day with the boards where it is your move, instead of one per move."
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, rest = self.user_only(ctx, inv)
        word = rest[0].lower() if rest else "status"
        if word in ("on", "off"):
            digest.set_digest(ctx.session, user, word == "on")
            text = phrase("digest_on" if word == "on" else "digest_off")
        elif word == "status":
            on = digest.wants_digest(ctx.session, user.saved_id)
            text = phrase("digest_status_on" if on else "digest_status_off")
        else:
            raise UsageError(phrase("digest_usage", word=echoed(rest[0])), self.full_usage())
        answer(ctx, phrase("subject_digest_on", userid=user.userid), text, ReplyKind.ACCOUNT)


class Standings(Command):
    name = "standings"
    usage = ""
    summary = "Mail yourself the rating list: established, provisional and inactive players."
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        answer(
            ctx,
            phrase("subject_standings", game=rules.title),
            standings_text(ctx, rules),
            ReplyKind.LIST,
        )


class Ratings(Command):
    name = "ratings"
    usage = ""
    summary = "Mail yourself every rating: pbmserv's and Glicko-2 with its deviation."
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        answer(
            ctx,
            phrase("subject_ratings", game=rules.title),
            ratings_table(ctx, rules) or phrase("no_ratings", game=rules.title),
            ReplyKind.LIST,
        )


class History(Command):
    name = "history"
    usage = "[userid...]"
    per_word = True
    summary = "Mail yourself the list of finished boards (of the players named)."
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        users = [find_user(ctx, w) for w in inv.words]
        boards = history_boards(ctx, rules, users)
        if boards:
            ends = "\n".join(wrap(line) for line in last_moves(ctx, boards))
            text = games_table(boards) + "\n\n" + phrase("history_last_moves") + "\n" + ends
        else:
            text = phrase("no_history", game=rules.title)
        answer(ctx, phrase("subject_history", game=rules.title), text, ReplyKind.LIST)


class Record(Command):
    name = "record"
    usage = "board"
    summary = (
        "Mail yourself the complete record of a board: every move with its time, as a"
        " text that `pbm game import` reads back."
    )
    changes_state = False
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        if inv.by_token and not inv.words:
            assert inv.token_board_id is not None
            board = board_by_id(ctx, inv.token_board_id)
        else:
            self.need(inv, 1)
            board = load_board(ctx, rules, inv.words[0])
        reader = inv.token_user or sender_account(ctx)
        reader_index = board.index_of(reader.id) if reader else None
        if records.secret_to(ctx, board, reader_index):
            # A record lists every move: not while some are still secret to this reader.
            raise BoardError(phrase("record_secret"), board.id)
        answer(
            ctx,
            phrase("subject_record", label=board.label),
            records.export(ctx, board),
            ReplyKind.LIST,
            board=board,
        )


# Registered, in the order `help` lists them, by the composition root (pbm.app).
ACCOUNT_COMMANDS = (Vacation(), Digest())
GAME_COMMANDS = (Standings(), Ratings(), History(), Record())
