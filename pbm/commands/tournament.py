"""The `tournament` mail command:

tournament create userid password NAME GAME [type=swiss] [rounds=N] [nagtime=D]
                  [forfeittime=D] [bots=yes] [-option=value...]
tournament join|leave|start|cancel NAME userid password
tournament standings|pairings NAME [round]
tournament list
"""

from __future__ import annotations

import difflib

from pbm.commands.answers import answer
from pbm.commands.base import Command, Invocation
from pbm.commands.registry import game_and_variant, unknown_game
from pbm.errors import UsageError
from pbm.services.accounts.users import authenticate
from pbm.services.context import Context, ReplyKind
from pbm.services.tournaments import describe, entry, lookup, results, rounds
from pbm.store.models import User
from pbm.store.models_tournament import Tournament
from pbm.texts import echoed, phrase, prose, render

SETTINGS = ("type", "rounds", "nagtime", "forfeittime", "bots")
# Other words players write for an action.
ALIASES = {"enter": "join", "withdraw": "leave"}


def _unknown_action(word: str, actions: list[str]) -> str:
    """What a `tournament` line with no known action gets: which actions there are, and
    the nearest when the word looks like a misspelt one."""
    near = difflib.get_close_matches(word, actions, n=1, cutoff=0.6)
    text = phrase("tournament_action_unknown", word=echoed(word), actions=", ".join(actions))
    return text + (" " + phrase("tournament_near", action=near[0]) if near else "")


class TournamentCommand(Command):
    name = "tournament"
    aliases = ("tourney",)
    usage = (
        "create userid password NAME GAME [type=roundrobin|double|swiss|knockout] [rounds=N] "
        "[nagtime=DAYS] [forfeittime=DAYS] [bots=yes] [-option=value...] | "
        "join|leave|start|cancel NAME userid password | "
        "standings|pairings NAME [round] | list"
    )
    summary = "Create, enter, start, follow and cancel tournaments."
    scope = "account"

    def run(self, ctx: Context, inv: Invocation) -> None:
        self.need(inv, 1)
        action, *rest = inv.words
        action = action.lower()
        handlers = {
            "create": self._create,
            "join": self._join,
            "leave": self._leave,
            "start": self._start,
            "cancel": self._cancel,
            "standings": self._standings,
            "pairings": self._pairings,
            "list": self._list,
        }
        handler = handlers.get(ALIASES.get(action, action))
        if handler is None:
            raise UsageError(_unknown_action(action, list(handlers)), self.full_usage())
        handler(ctx, rest)

    def _create(self, ctx: Context, words: list[str]) -> None:
        if len(words) < 4:
            raise UsageError(phrase("tournament_usage"), self.full_usage())
        userid, password, name, game, *extra = words
        user = authenticate(ctx, userid, password)
        if game_and_variant(game) is None:
            raise unknown_game(game)  # worded as for `chess challenge ...`
        settings: dict[str, str] = {}
        params: dict[str, str] = {}
        for word in extra:
            if word.startswith("-") and len(word) > 1:
                key, _, value = word.lstrip("-").partition("=")
                params[key.lower()] = value or "yes"
                continue
            key, sep, value = word.partition("=")
            if not sep or key.lower() not in SETTINGS:
                raise UsageError(phrase("tournament_bad_setting", word=word), self.full_usage())
            settings[key.lower()] = value
        t = entry.create(
            ctx,
            name,
            game,
            kind=settings.get("type", "roundrobin"),
            rounds=int(_number(settings.get("rounds", "0"))),
            params=params,
            nag_days=_number(settings.get("nagtime", str(entry.NAG_DAYS))),
            forfeit_days=_number(settings.get("forfeittime", str(entry.FORFEIT_DAYS))),
            creator=user,
            bots=_yes(settings.get("bots", "no")),
        )
        text = phrase(
            "tournament_created",
            name=t.name,
            kind=describe.kind_text(t),
            game=describe.game_title(t),
            userid=user.userid,
        )
        answer(ctx, phrase("subject_tournament", name=t.name), text, ReplyKind.TOURNAMENT)

    def _named_user(self, ctx: Context, words: list[str]) -> tuple[Tournament, User]:
        if len(words) < 3:
            raise UsageError(phrase("tournament_usage"), self.full_usage())
        name, userid, password = words[:3]
        t = lookup.find(ctx.session, name)
        return t, authenticate(ctx, userid, password)

    def _join(self, ctx: Context, words: list[str]) -> None:
        t, user = self._named_user(ctx, words)
        entry.join(ctx, t, user)
        count = len(lookup.entries(ctx.session, t))
        text = prose("tournament_joined", userid=user.userid, name=t.name, count=count)
        answer(ctx, phrase("subject_tournament", name=t.name), text, ReplyKind.TOURNAMENT)

    def _leave(self, ctx: Context, words: list[str]) -> None:
        t, user = self._named_user(ctx, words)
        if entry.leave(ctx, t, user) == "left":
            text = prose("tournament_left", userid=user.userid, name=t.name)
            answer(ctx, phrase("subject_tournament", name=t.name), text, ReplyKind.TOURNAMENT)
        # A withdrawal mails the player itself (pbm.services.tournaments.results.withdraw).

    def _start(self, ctx: Context, words: list[str]) -> None:
        t, user = self._named_user(ctx, words)
        entry.may_manage(t, user, "start")
        rounds.start(ctx, t)
        text = prose("tournament_started", name=t.name)
        answer(ctx, phrase("subject_tournament", name=t.name), text, ReplyKind.TOURNAMENT)

    def _cancel(self, ctx: Context, words: list[str]) -> None:
        t, user = self._named_user(ctx, words)
        entry.may_manage(t, user, "cancel")
        # As `pbm tournament cancel`: the entrants are mailed, the organiser answered.
        results.cancel(ctx, t, answering=user)

    def _standings(self, ctx: Context, words: list[str]) -> None:
        self.need_words(words, 1)
        t = lookup.find(ctx.session, words[0])
        answer(
            ctx,
            phrase("subject_tournament_standings", name=t.name),
            table_mail(ctx, t),
            ReplyKind.TOURNAMENT,
        )

    def _pairings(self, ctx: Context, words: list[str]) -> None:
        self.need_words(words, 1)
        t = lookup.find(ctx.session, words[0])
        round_ = _round_number(t, words[1]) if len(words) > 1 else None
        text = describe.pairings_text(ctx.session, t, round_)
        answer(ctx, phrase("subject_tournament_pairings", name=t.name), text, ReplyKind.TOURNAMENT)

    def _list(self, ctx: Context, words: list[str]) -> None:
        rows = lookup.all_tournaments(ctx.session)
        lines = []
        for t in rows:
            rest = (
                f"{describe.game_title(t):<12} {describe.kind_text(t):<20}"
                f" {t.status:<9} {len(lookup.entries(ctx.session, t)):>8}"
            )
            # A name of up to 32 characters would push the row past 72 columns: a long
            # one gets a line of its own, the row under it.
            name = f"{t.name:<16}" if len(t.name) <= 16 else t.name + "\n" + " " * 16
            lines.append(f"{name} {rest}")
        text = "\n".join([phrase("tournament_list_heading"), *lines]) if lines else ""
        if any(t.status == "open" for t in rows):  # say how to enter what it offers
            text += "\n\n" + phrase("tournament_list_enter")
        text = text or phrase("tournament_none")
        answer(ctx, phrase("subject_tournaments"), text, ReplyKind.TOURNAMENT)

    def need_words(self, words: list[str], count: int) -> None:
        if len(words) < count:
            raise UsageError(phrase("tournament_usage"), self.full_usage())


def table_mail(ctx: Context, t: Tournament) -> str:
    return render(
        "tournament_table",
        tournament=t.name,
        kind=describe.kind_text(t),
        game=describe.game_title(t),
        progress=describe.progress_text(t),
        standings=describe.standings_text(ctx.session, t),
        signature=ctx.config.server_name,
    ).rstrip()


def _yes(text: str) -> bool:
    """`bots=yes|no`: whether computer players may enter."""
    word = text.lower()
    if word not in ("yes", "no"):
        raise UsageError(
            phrase("tournament_bad_setting", word=f"bots={text}"), TournamentCommand().full_usage()
        )
    return word == "yes"


def _round_number(t: Tournament, word: str) -> int:
    """The round `tournament pairings NAME ROUND` asks for: a whole number (a round it
    does not have is answered by the pairings themselves)."""
    try:
        return int(word)
    except ValueError:
        raise lookup.TournamentError(
            phrase("tournament_bad_round", word=echoed(word), name=t.name)
        ) from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(
            phrase("tournament_bad_setting", word=text), TournamentCommand().full_usage()
        ) from None


# Registered, in the order `help` lists them, by the composition root (pbm.app).
COMMANDS = (TournamentCommand(),)
