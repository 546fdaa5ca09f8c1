"""`export` and `mydata`: a player's game records, and a copy of everything pbm keeps
about him, mailed in a zip to his confirmed address (docs/records.md, "Exporting all
your games"; docs/privacy.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from pbm.commands.answers import answer
from pbm.commands.base import Command, Invocation
from pbm.errors import PbmError, UsageError
from pbm.games import GameError, find_game
from pbm.services.accounts import bulk_export, export_parts, my_data
from pbm.services.accounts.bulk_export import ExportRequest, Which
from pbm.services.context import Attachment, Context, ReplyKind
from pbm.store.models import User
from pbm.texts import phrase, prose


def _day(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise PbmError(phrase("export_bad_since", value=text)) from None


def told_elsewhere(ctx: Context, user: User, subject: str, address: str) -> None:
    """Tell a sender other than the player's confirmed address that the mail went there."""
    if address != ctx.sender:
        answer(ctx, subject, phrase("export_sent_elsewhere", userid=user.userid), ReplyKind.ACCOUNT)


class Export(Command):
    name = "export"
    usage = "userid password [game] [finished|all] [since YYYY-MM-DD]"
    summary = (
        "Mail yourself every record of your boards (pbm text, JSON, SGF for Quadrature) "
        "in a zip, to your confirmed address; a large export comes in parts a day apart."
    )
    scope = "account"

    def _request(self, words: list[str]) -> ExportRequest:
        game, which, since = None, Which.ALL, None
        rest = list(words)
        while rest:
            word = rest.pop(0).lower()
            if word in tuple(Which):
                which = Which(word)
            elif word == "since" and rest:
                try:
                    since = _day(rest.pop(0))
                except PbmError as exc:
                    raise UsageError(str(exc), self.full_usage()) from None
            elif game is None:
                try:
                    game = find_game(word)[0].name
                except GameError:
                    raise UsageError(
                        phrase("export_bad_word", word=word), self.full_usage()
                    ) from None
            else:
                raise UsageError(phrase("export_bad_word", word=word), self.full_usage())
        return ExportRequest(game, which, since)

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, rest = self.user_only(ctx, inv)
        request = self._request(rest)
        export_parts.drop_queued(ctx, user)  # a new export replaces the parts still to come
        address = export_parts.mail_export(ctx, user, request)
        told_elsewhere(ctx, user, phrase("subject_export", userid=user.userid), address)


class MyData(Command):
    name = "mydata"
    usage = "userid password"
    summary = "Mail yourself a copy (JSON in a zip) of everything pbm keeps about you."
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        user, _ = self.user_only(ctx, inv)
        file = Attachment(f"pbm-{user.userid}-data.zip", my_data.personal_zip(ctx, user))
        subject = phrase("subject_mydata", userid=user.userid)
        body = prose("mydata_body", userid=user.userid)
        told_elsewhere(
            ctx, user, subject, bulk_export.mail_to_confirmed(ctx, user, subject, body, file)
        )


# Registered, in the order `help` lists them, by the composition root (pbm.app).
COMMANDS = (Export(), MyData())
