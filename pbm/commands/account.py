"""Account-level commands, written without a game name: signup, change, signoff,
delete, help, list, message, all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from pbm.commands.answers import answer, mail_show
from pbm.commands.base import Command, Invocation
from pbm.commands.helptext import general_help, topic_help
from pbm.commands.registry import game_named, unknown_game
from pbm.errors import NotFoundError, PbmError, UsageError
from pbm.mail.streams import MailReason, Stream
from pbm.services.accounts import consent, profile, users
from pbm.services.accounts.users import LIST_SELECTORS, find_user, sender_account
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.mailing import bounces, mail_html, streams
from pbm.services.play import lists
from pbm.services.play.boards import boards_of_type
from pbm.store.models import User, UserAddress
from pbm.texts import echoed, phrase, prose, render


class Signup(Command):
    name = "signup"
    aliases = ("add",)
    usage = "userid password [address...]"
    summary = (
        "Create an account; replies go to the addresses given, else to yours. A userid "
        "is 2 to 20 letters (any alphabet), digits, dots, hyphens or underscores, and "
        "case does not matter; a password has no spaces, quotes, colons or invisible "
        "characters."
    )
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        self.need(inv, 2)
        userid, password, *addresses = inv.words
        addresses = addresses or ([ctx.sender] if ctx.sender else [])
        user, rows = users.create_user(ctx, userid, password, addresses)
        own = consent.own_row(ctx, rows)
        if own is not None and ctx.sender_dmarc_pass:
            consent.confirm_trusted(ctx, own)
        token = consent.request(ctx, user, own, to_sender=True) if own is not None else None
        asked = [r.address for r in rows if r is not own and consent.request(ctx, user, r)]
        # One answer, to the sender alone: never a list of the other addresses' owners.
        ctx.reply(
            Reply(
                [ctx.sender],
                phrase("subject_welcome", userid=user.userid),
                render(
                    "welcome",
                    userid=user.userid,
                    confirmation=consent.welcome_lines(ctx, user, own, token, asked),
                    server=ctx.config.server_address,
                ),
                ReplyKind.ACCOUNT,
                token=token,
                to_sender=True,
                answer=True,
            )
        )


class _RequestAnswer(Command):
    """An answer to a confirmation request by its token, from the address it went to."""

    usage = "token"
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        self.need(inv, 1)
        row = consent.pending(ctx, inv.words[:1])
        if row is None:
            raise NotFoundError(phrase("confirm_unknown", address=ctx.sender))
        user = consent.owner(ctx, row)
        address = row.address
        more = self.act(ctx, user, row)
        text = prose(self.done, userid=user.userid, address=address)
        answer(
            ctx,
            phrase("subject_account", userid=user.userid),
            f"{text}\n\n{more}" if more else text,
            ReplyKind.ACCOUNT,
        )

    done = ""  # the phrase that answers it

    def act(self, ctx: Context, user: User, row: UserAddress) -> str:
        """Do it; returns more for the answer to say ("" for nothing)."""
        raise NotImplementedError


class Confirm(_RequestAnswer):
    name = "confirm"
    summary = (
        "Confirm that the address a confirmation request went to is yours (replying to "
        "the request does the same); pbm mails an address nothing else until then."
    )
    done = "confirmed"

    def act(self, ctx: Context, user: User, row: UserAddress) -> str:
        consent.confirm(ctx, row)
        return bounces.enable(ctx, row.address)


class Refuse(_RequestAnswer):
    name = "notme"
    aliases = ("refuse",)
    summary = (
        'Say a confirmation request was not yours (or reply "not me" to it): pbm will '
        "not mail that address for that account again."
    )
    done = "refused"

    def act(self, ctx: Context, user: User, row: UserAddress) -> str:
        consent.refuse(ctx, user, row)
        return ""


class Change(Command):
    name = "change"
    usage = "password userid current-password new-password | address userid password [address...]"
    summary = "Change your password or your addresses."
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        self.need(inv, 3)
        what, userid, password, *rest = inv.words
        what = what.lower()
        if what == "password":
            if len(rest) != 1:
                raise UsageError(phrase("change_password_usage"), self.full_usage())
            user = users.authenticate(ctx, userid, password)
            users.set_password(ctx, user, rest[0])
            text = phrase("password_changed", userid=user.userid)
        elif what == "address":
            user = users.authenticate(ctx, userid, password)
            addresses, added = users.set_user_addresses(ctx, user, rest or [ctx.sender])
            asked = [row.address for row in added if consent.request(ctx, user, row)]
            text = prose("address_changed", userid=user.userid, addresses=" ".join(addresses))
            if asked:
                text += "\n\n" + prose("address_to_confirm", addresses=" ".join(asked))
        else:
            raise UsageError(phrase("change_what", word=echoed(what)), self.full_usage())
        answer(ctx, phrase("subject_account", userid=user.userid), text, ReplyKind.ACCOUNT)


class Signoff(Command):
    name = "signoff"
    usage = "userid password"
    summary = "Refuse all challenges and drop your subscriptions; your boards go on."
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, _ = self.user_only(ctx, inv)
        users.sign_off(ctx, user)
        answer(
            ctx,
            phrase("subject_account", userid=user.userid),
            prose("signed_off", userid=user.userid),
            ReplyKind.ACCOUNT,
        )


class Set(Command):
    name = "set"
    # Each form whole: a player copies one line of `help` and must find his userid in it.
    usage = (
        "userid password format html|text|words | userid password messages players|anyone"
        " | userid password mail STREAM on|off | userid password profile hidden|shown"
    )
    summary = (
        "How your mails come: html (the default) adds a drawn board and the text in a "
        "fixed-width font for mail programs that show text in a proportional font; "
        "text sends the plain text alone; words sends the plain text with the boards "
        "in sentences for screen readers, no drawing. Who may `message` you: players who "
        "share a board or a tournament with you (the default), or anyone. `mail STREAM "
        "on|off` turns a kind of notification on or off: boards (off: the daily digest "
        "instead), reminders, tournaments, digest, messages. `profile hidden` takes your "
        "page off the web pages (your boards still show, by userid)."
    )
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, rest = self.user_only(ctx, inv)
        what = rest[0].lower() if rest else ""
        if what == "mail":
            self._stream(ctx, user, rest[1:])
            return
        if what not in ("format", "messages", "profile"):
            self._refuse(phrase("set_what", word=echoed(what)) if what else phrase("set_none"))
        if len(rest) > 2:
            self._refuse(phrase("set_usage"))
        value = rest[1].lower() if len(rest) == 2 else None
        if what == "profile":
            if value is not None:
                self._check(value, profile.STATES)
                profile.set_hidden(ctx, user, value == "hidden")
            state = "hidden" if profile.hidden(ctx.session, user.saved_id) else "shown"
            text = phrase(f"profile_{state}")
        elif what == "messages":
            if value is not None:
                self._check(value, ("players", "anyone"))
                consent.set_messages_anyone(ctx, user, value == "anyone")
            state = "anyone" if consent.messages_anyone(ctx, user) else "players"
            text = phrase(f"messages_{state}")
        else:
            if value is not None:
                self._check(value, mail_html.FORMATS)
                mail_html.set_format(ctx.session, user, value)
            text = phrase(f"format_{mail_html.mail_format(ctx.session, user.saved_id)}")
        answer(ctx, phrase("subject_set", userid=user.userid), text, ReplyKind.ACCOUNT)

    def _stream(self, ctx: Context, user: User, words: list[str]) -> None:
        """`set ... mail STREAM on|off`: the stop address's switch, with the password."""
        names = [s.value for s in Stream]
        if len(words) != 2:
            self._refuse(phrase("set_stream_usage", streams="|".join(names)))
        self._check(words[0].lower(), names)
        self._check(words[1].lower(), ("on", "off"))
        stream, on = Stream(words[0].lower()), words[1].lower() == "on"
        streams.switch(ctx, user, stream, on)
        text = phrase("stream_state", stream=stream.value, state="on" if on else "off")
        answer(ctx, phrase("subject_set", userid=user.userid), text, ReplyKind.ACCOUNT)

    def _check(self, value: str, choices: Sequence[str]) -> None:
        """Refuse a value that is none of `choices`, naming them."""
        if value not in choices:
            listed = ", ".join(choices)
            self._refuse(phrase("set_value", value=echoed(value), choices=listed))

    def _refuse(self, problem: str) -> NoReturn:
        raise UsageError(problem, self.full_usage())


class Delete(Command):
    name = "delete"
    usage = "userid password"
    summary = "Delete your account (finish or resign your boards first)."
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, _ = self.user_only(ctx, inv)
        users.delete_user(ctx, user)
        answer(
            ctx,
            phrase("subject_account", userid=user.userid),
            phrase("deleted", userid=user.userid),
            ReplyKind.ACCOUNT,
        )


class Help(Command):
    name = "help"
    usage = "[command|game...]"
    per_word = True
    summary = "Mail yourself this help, or the help of a command or of a game."
    scope = "account"
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        if not inv.words:
            answer(
                ctx, phrase("subject_help", topic="pbm"), general_help(ctx.config), ReplyKind.HELP
            )
            return
        for topic in inv.words:
            answer(
                ctx,
                phrase("subject_help", topic=topic.lower()),
                topic_help(topic, ctx.config),
                ReplyKind.HELP,
            )


class ListCommand(Command):
    name = "list"
    usage = "[game...]"
    per_word = True
    summary = "Mail yourself the games played here, or the boards of the games named."
    scope = "account"
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        if not inv.words:
            answer(ctx, phrase("subject_list"), lists.game_catalogue(), ReplyKind.LIST)
            return
        for word in inv.words:
            rules = game_named(word)
            if rules is None:
                raise unknown_game(word)  # worded as for `chess challenge ...`
            boards = boards_of_type(ctx, rules)
            answer(
                ctx,
                phrase("subject_games", game=rules.title),
                lists.games_table(boards) if boards else phrase("no_games", game=rules.title),
                ReplyKind.LIST,
            )


def _unsent(key: str, people: list[User]) -> str:
    """Why `people` got no message, in the singular for one player."""
    return phrase(
        key if len(people) > 1 else f"{key}_one", userids=" ".join(p.userid for p in people)
    )


class Message(Command):
    name = "message"
    aliases = ("msg",)
    usage = "userid password to-userid..."
    summary = "Send your mail body to other players (their addresses stay private)."
    scope = "account"
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, targets = self.user_only(ctx, inv)
        if not targets:
            raise UsageError(phrase("message_to_whom"), self.full_usage())
        if not inv.comment.strip():
            raise UsageError(phrase("message_empty"), self.full_usage())
        limit = ctx.config.message_recipients
        if len(targets) > limit:
            raise UsageError(
                phrase("message_too_many", count=len(targets), limit=limit), self.full_usage()
            )
        found = [find_user(ctx, t) for t in targets]
        # Mail a player causes to others goes only to those who know him, or asked.
        refused = consent.message_refusals(ctx, user, found)
        people = [p for p in found if p not in refused and users.reply_addresses(ctx, p)]
        unmailed = [p for p in found if p not in people]
        if not people:
            raise PbmError(_unsent("message_nobody", unmailed))
        for person in people:
            to = users.reply_addresses(ctx, person)
            ctx.reply(
                Reply(
                    to=to,
                    subject=phrase(
                        "subject_message", userid=user.userid, server=ctx.config.server_name
                    ),
                    body=render(
                        "message",
                        sender=user.userid,
                        text=inv.comment.strip(),
                        recipients=" ".join(p.userid for p in people),
                    ).rstrip("\n")
                    + "\n",
                    kind=ReplyKind.MESSAGE,
                    user_id=person.id,
                    to_sender=True,
                    answer=bool(ctx.sender) and to == [ctx.sender],
                    # To himself (`message alice pw alice`) it is still the answer.
                    reason=None if person.id == user.id else MailReason.MESSAGE,
                )
            )
        answer(
            ctx,
            phrase("subject_message_sent"),
            phrase("message_sent", userids=" ".join(p.userid for p in people))
            + ("\n\n" + _unsent("message_not_sent", unmailed) if unmailed else ""),
            ReplyKind.MESSAGE,
        )


class All(Command):
    name = "all"
    usage = "show userid [next|active]"
    summary = "Mail yourself every board of a player, of every game."
    scope = "account"
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        self.need(inv, 2)
        if inv.words[0].lower() != "show":
            raise UsageError(phrase("all_show"), self.full_usage())
        user = find_user(ctx, inv.words[1])
        selector = inv.words[2].lower() if len(inv.words) > 2 else "active"
        if selector not in LIST_SELECTORS:
            raise UsageError(phrase("bad_selector", word=echoed(selector)), self.full_usage())
        boards = lists.boards_of_users(ctx, None, [user], selector)
        if not boards:
            raise NotFoundError(phrase(f"show_none_{selector}", userids=user.userid, of_game=""))
        reader = sender_account(ctx)
        for board in boards:
            mail_show(ctx, board, reader, None)


# Registered, in the order `help` lists them, by the composition root (pbm.app).
COMMANDS = (
    Signup(),
    Confirm(),
    Refuse(),
    Change(),
    Signoff(),
    Set(),
    Delete(),
    Help(),
    ListCommand(),
    Message(),
    All(),
)
