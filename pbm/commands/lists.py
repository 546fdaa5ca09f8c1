"""Per-game commands that show or set preferences: show, games, history, standings,
subscribe, unsubscribe, notify, limit, seek, accept/reject (challenge shortcuts), help."""

from __future__ import annotations

from pbm.commands.answers import answer, mail_show
from pbm.commands.base import Command, Invocation
from pbm.commands.helptext import game_help
from pbm.errors import NotFoundError, PbmError, UsageError
from pbm.games import Game
from pbm.services.accounts import settings
from pbm.services.accounts.users import (
    LIST_SELECTORS,
    authenticate,
    find_user,
    sender_account,
    user_named,
)
from pbm.services.context import Context, ReplyKind
from pbm.services.play import lists
from pbm.services.play import moves as play
from pbm.services.play.boards import board_by_id, board_exists, boards_of_type, load_board
from pbm.store.models import User
from pbm.texts import echoed, phrase


def reader_of(ctx: Context, inv: Invocation) -> User | None:
    if inv.token_user is not None:
        return inv.token_user
    return sender_account(ctx)


def _selector(words: list[str]) -> tuple[list[str], str | None]:
    if words and words[-1].lower() in LIST_SELECTORS:
        return words[:-1], words[-1].lower()
    return words, None


class Show(Command):
    name = "show"
    usage = "board[#n]... | userid... [all|active|inactive|next]"
    per_word = True
    summary = "Mail yourself the summary of boards (#n: after move n), or of a player's boards."
    changes_state = False
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        reader = reader_of(ctx, inv)
        if inv.by_token and not inv.words:
            assert inv.token_board_id is not None
            board = board_by_id(ctx, inv.token_board_id)
            mail_show(ctx, board, reader, None)
            return
        self.need(inv, 1)
        words, selector = _selector(inv.words)
        if not words:
            raise PbmError(phrase("too_much_mail"))
        missing: list[str] = []
        first = words[0].split("#")[0]
        showing_boards = board_exists(ctx, rules, first) or first.isdigit()
        if showing_boards:
            for word in words:
                board_text, _, upto = word.partition("#")
                try:
                    board = load_board(ctx, rules, board_text)
                except NotFoundError:
                    missing.append(_misplaced(ctx, rules, word, as_board=True))
                    continue
                number = int(upto) if upto.isdigit() else None
                if number is not None and not 0 <= number <= board.row.move_count:
                    count = board.row.move_count
                    missing.append(
                        phrase("show_past_end", word=echoed(word), board=board_text, last=count)
                    )
                    continue
                mail_show(ctx, board, reader, number)
        else:
            users = []
            for userid in words:
                try:
                    users.append(find_user(ctx, userid))
                except NotFoundError:
                    missing.append(_misplaced(ctx, rules, userid, as_board=False))
            boards = lists.boards_of_users(ctx, rules, users, selector or "active")
            for board in boards:
                mail_show(ctx, board, reader, None)
            if users and not boards:
                # The players were found: saying so under "not found" misled.
                named = " ".join(u.userid for u in users)
                which = selector or "active"
                answer(
                    ctx,
                    phrase("subject_show_summary"),
                    phrase(f"show_none_{which}", userids=named, of_game=f"{rules.title} "),
                    ReplyKind.LIST,
                )
        if missing:
            text = phrase("show_not_found", game=rules.title, items="\n\t".join(missing))
            if showing_boards:  # a mistyped board number: how to find the right one
                text += "\n" + phrase("unknown_board_lists", name=rules.name)
            answer(ctx, phrase("subject_show_summary"), text, ReplyKind.LIST)


def _misplaced(ctx: Context, rules: Game, word: str, *, as_board: bool) -> str:
    """A word `show` did not find, with a hint when it is the other kind (a player's
    userid among boards, a board among players): one line shows one kind."""
    if as_board and not word.isdigit() and user_named(ctx, word) is not None:
        return phrase("show_player_among_boards", word=echoed(word), game=rules.name)
    if not as_board and board_exists(ctx, rules, word.split("#")[0]):
        return phrase("show_board_among_players", word=echoed(word), game=rules.name)
    return echoed(word)


class Games(Command):
    name = "games"
    usage = "[userid...] [all|active|inactive|next]"
    per_word = True
    summary = "Mail yourself a table of boards: everyone's, or those of the userids named."
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        words, selector = _selector(inv.words)
        if words:
            users = [find_user(ctx, w) for w in words]
            boards = lists.boards_of_users(ctx, rules, users, selector or "all")
        else:
            statuses: tuple[str, ...] = {"active": ("active",), "next": ("active",)}.get(
                selector or "", ()
            )
            if selector == "inactive":
                statuses = ("finished", "removed")
            boards = boards_of_type(ctx, rules, statuses)
        answer(
            ctx,
            phrase("subject_games", game=rules.title),
            lists.games_table(boards) if boards else phrase("no_games", game=rules.title),
            ReplyKind.LIST,
        )


class Subscribe(Command):
    name = "subscribe"
    aliases = ("sub",)
    usage = "board userid password | userid password board...|all"
    summary = "Receive every mail of some boards (all: also of every future board)."
    token_verb = True
    kind = "subscribe"
    on = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        if inv.by_token:
            assert inv.token_board_id is not None and inv.token_user is not None
            user, targets = inv.token_user, [board_by_id(ctx, inv.token_board_id)]
            everything = False
        else:
            self.need(inv, 2)
            if board_exists(ctx, rules, inv.words[0]) and len(inv.words) >= 3:
                board = load_board(ctx, rules, inv.words[0])
                user = self.authenticated(ctx, inv.words[1], inv.words[2])
                targets, everything = [board], False
            else:
                user, rest = self.user_only(ctx, inv)
                if not rest:
                    raise UsageError(phrase("name_boards"), self.full_usage(rules))
                everything = [w.lower() for w in rest] == ["all"]
                targets = [] if everything else [load_board(ctx, rules, w) for w in rest]
        if everything and self.kind == "subscribe":
            settings.set_subscribe_all(ctx, user, rules, self.on)
        elif everything:
            raise UsageError(phrase("name_boards"), self.full_usage(rules))
        change = settings.subscribe if self.on else settings.unsubscribe
        change(ctx, user, targets, self.kind)
        names = " ".join(b.row.board for b in targets) or phrase("all_boards")
        key = "subscribed" if self.on else "unsubscribed"
        answer(
            ctx,
            phrase("subject_subscription"),
            phrase(key, game=rules.title, boards=names),
            ReplyKind.LIST,
        )

    def authenticated(self, ctx: Context, userid: str, password: str) -> User:
        return authenticate(ctx, userid, password)


class Unsubscribe(Subscribe):
    name = "unsubscribe"
    aliases = ("unsub",)
    summary = "Stop receiving a board's mails (all: stop subscribing to future boards)."
    on = False


class Notify(Command):
    name = "notify"
    usage = "userid password [board...]"
    summary = "Toggle a mail when any board of this game ends, or (with boards) when those end."

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        user, rest = self.user_only(ctx, inv)
        if rest:
            on, off = settings.toggle_notify(ctx, user, [load_board(ctx, rules, w) for w in rest])
            lines = []
            if on:
                named = " ".join(b.row.board for b in on)
                lines.append(phrase("notify_boards", game=rules.title, boards=named))
            if off:
                named = " ".join(b.row.board for b in off)
                lines.append(phrase("notify_boards_off", game=rules.title, boards=named))
            text = "\n".join(lines)
        else:
            all_on = settings.toggle_notify_all(ctx, user, rules)
            text = phrase("notify_on" if all_on else "notify_off", game=rules.title)
        answer(ctx, phrase("subject_notify", game=rules.title), text, ReplyKind.LIST)


class Limit(Command):
    name = "limit"
    usage = "userid password [N|accept|all|inf|reject|0]"
    summary = "Cap your number of active boards of this game (0 or reject: refuse challenges)."

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        user, rest = self.user_only(ctx, inv)
        limit = settings.set_limit(ctx, user, rules, rest[0] if rest else None)
        _limit_answer(ctx, rules.title, limit)


def _limit_answer(ctx: Context, title: str, limit: int | None) -> None:
    if limit is None:
        text = phrase("limit_none", game=title)
    elif limit == 0:
        text = phrase("limit_zero", game=title)
    else:
        text = phrase("limit_n", game=title, limit=limit)
    answer(ctx, phrase("subject_limit", game=title), text, ReplyKind.LIST)


class AcceptChallenges(Command):
    """`accept userid password` = `limit userid password accept` (or a vote, given a board)."""

    name = "accept"
    usage = "userid password | board userid password"
    summary = "Accept challenges again (with a board: accept the pending draw or undo)."
    word = "accept"

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        if len(inv.words) >= 3 and board_exists(ctx, rules, inv.words[0]):
            board, user, _ = self.board_user(ctx, inv)
            play.make_move(ctx, board, user, play.MoveRequest(self.word), inv.comment)
            return
        user, _ = self.user_only(ctx, inv)
        limit = settings.set_limit(ctx, user, rules, self.word)
        _limit_answer(ctx, rules.title, limit)


class RejectChallenges(AcceptChallenges):
    name = "reject"
    summary = "Refuse all challenges (with a board: reject the pending draw or undo)."
    word = "reject"


class Seek(Command):
    name = "seek"
    usage = "userid password N"
    summary = "Advertise that you want N more challenges (shown in the standings)."

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        user, rest = self.user_only(ctx, inv)
        if not rest or not rest[0].isdigit():
            raise UsageError(phrase("seek_count"), self.full_usage(rules))
        settings.set_seeking(ctx, user, rules, int(rest[0]))
        answer(
            ctx,
            phrase("subject_seek", game=rules.title, count=rest[0]),
            phrase("seeking", game=rules.title, count=rest[0]),
            ReplyKind.LIST,
        )


class GameHelp(Command):
    name = "help"
    usage = ""
    summary = "Mail yourself the rules, notation and options of this game."
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        answer(ctx, phrase("subject_help", topic=rules.name), game_help(rules), ReplyKind.HELP)


# Registered, in the order `help` lists them, by the composition root (pbm.app).
COMMANDS = (
    Show(),
    Games(),
    Subscribe(),
    Unsubscribe(),
    Notify(),
    Limit(),
    AcceptChallenges(),
    RejectChallenges(),
    Seek(),
    GameHelp(),
)
