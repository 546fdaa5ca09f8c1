"""`erase USERID PASSWORD`: erasure by mail, confirmed by a token mailed to the
player's confirmed address and carried out days later unless cancelled
(docs/privacy.md; pbm.services.accounts.erasure_requests)."""

from __future__ import annotations

from pbm.commands.base import Command, Invocation
from pbm.commands.export import told_elsewhere
from pbm.errors import UsageError
from pbm.services.accounts import erasure_requests
from pbm.services.accounts.bulk_export import mail_to_confirmed
from pbm.services.context import Context
from pbm.store.models import User
from pbm.texts import phrase


class Erase(Command):
    name = "erase"
    usage = "userid password [confirm TOKEN | cancel]"
    summary = (
        "Erase your account for good, your games kept under a pseudonym: a token comes "
        "to your confirmed address; sent back, the erasure happens days later unless "
        "you cancel."
    )
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        if inv.by_token:  # a reply to a board mail carries no password: too little here
            raise UsageError(phrase("erase_needs_password"), self.full_usage())
        user, rest = self.user_only(ctx, inv)
        words = [w.lower() for w in rest]
        if not words:
            token = erasure_requests.ask(ctx, user)
            body = phrase(
                "erase_ask_body",
                userid=user.userid,
                token=token,
                days=f"{ctx.config.erasure_delay_days:g}",
            )
            self._mail(ctx, user, body)
        elif words == ["cancel"]:
            erasure_requests.cancel(ctx, user)
            self._mail(ctx, user, phrase("erase_cancelled_body", userid=user.userid))
        elif len(words) == 2 and words[0] == "confirm":
            due = erasure_requests.confirm(ctx, user, words[1])
            body = phrase(
                "erase_scheduled_body", userid=user.userid, date=erasure_requests.when(due)
            )
            self._mail(ctx, user, body)
        else:
            raise UsageError(phrase("erase_bad_words", words=" ".join(rest)), self.full_usage())

    def _mail(self, ctx: Context, user: User, body: str) -> None:
        subject = phrase("subject_erase", userid=user.userid)
        told_elsewhere(ctx, user, subject, mail_to_confirmed(ctx, user, subject, body))


# Registered by the composition root (pbm.app).
COMMANDS = (Erase(),)
