"""Commands that change a board: challenge, move (and its events), queue, conditional,
resign, swap, pass, submit, confirm, chat; and preview, which only shows."""

from __future__ import annotations

import re

from pbm.commands.answers import answer
from pbm.commands.base import Command, Invocation
from pbm.errors import BoardError, NotAMoveError, NotFoundError, PbmError, UsageError
from pbm.services.context import Context, ReplyKind
from pbm.services.play import conditional, records
from pbm.services.play import moves as play
from pbm.services.play.boards import board_by_id
from pbm.services.play.challenges import NewBoard, challenger_of, create_game, merge_variant
from pbm.texts import phrase


class Challenge(Command):
    name = "challenge"
    aliases = ("chall", "chal")
    usage = "[-option=value...] [--server-option=days...] userid1 userid2"
    summary = (
        "Start a new board; the first userid moves first. Send it from your registered "
        "address, naming yourself. Your mail body is a comment."
    )

    def run(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        if not inv.words:
            raise UsageError(phrase("challenge_no_players"), self.full_usage(rules))
        challenger = challenger_of(ctx, rules, inv.words)
        create_game(
            ctx,
            NewBoard(
                rules,
                inv.words,
                params=merge_variant(rules, inv.variant, inv.params, _game_word(inv)),
                server_options=inv.server_options,
                comment=inv.comment,
                comment_by=challenger.userid if challenger else phrase("challenger"),
            ),
        )


def _game_word(inv: Invocation) -> str:
    words = inv.line.split()
    return words[0].lower() if words else ""


class MoveCommand(Command):
    name = "move"
    aliases = ("board", "mvoe", "mv")
    usage = "board userid password move[#n]"
    summary = (
        "Make a move; also pass, swap, resign, propose (a draw), undo, accept, reject. "
        "#n guards against a stale move number. Your mail body is a comment."
    )
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, rest = self.board_user(ctx, inv)
        if not rest and not inv.by_token:
            raise UsageError(phrase("no_move_given"), self.full_usage(inv.rules))
        request = play.split_move_number(" ".join(rest), inv.token_move)
        try:
            play.make_move(ctx, board, user, request, inv.comment)
        except NotAMoveError as exc:
            if not inv.by_token:
                raise
            # A reply's first line is its move; what came first was something else.
            raise NotAMoveError(f"{exc}\n{phrase('move_on_first_line')}", board.id) from None


class Queue(Command):
    name = "queue"
    aliases = ("qmove", "qboard", "moveq", "boardq")
    usage = "board userid password move"
    summary = (
        "Play a move now if it is your turn, else keep it to play when your turn comes "
        "(it is checked then; text that is no move at all is refused at once)."
    )
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, rest = self.board_user(ctx, inv)
        if not rest:
            raise UsageError(phrase("no_move_given"), self.full_usage(inv.rules))
        play.queue_move(ctx, board, user, play.split_move_number(" ".join(rest)), inv.comment)


class Conditional(Command):
    name = "conditional"
    aliases = ("cond", "if")
    usage = "board userid password [#n] [clear | show | preview N]"
    summary = (
        "Set conditional moves while your opponent is to move: one line of play per line "
        "of the mail body, his move then your answer, and on (c8-c7 d3-d4 c7-c6 d4-d5; "
        "separate moves that hold spaces with ; or ,). When he plays the first move of a "
        "line, its answer is played at once; any other move clears them. In a reply to "
        "a board mail: if c8-c7 then d3-d4. An empty body or clear removes them, show "
        "mails them to you, preview N shows where line N leads. Only you see them."
    )
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, rest = self.board_user(ctx, inv)
        number = None
        if rest and re.fullmatch(r"#\d+", rest[0]):
            number, rest = int(rest[0][1:]), rest[1:]
        # `if c8-c7 then d3-d4`: the words after `if` are a line of play.
        word = rest[0].lower() if rest and inv.verb != "if" else ""
        if word in ("clear", "show") and len(rest) == 1:
            if word == "clear":
                conditional.clear_conditions(ctx, board, user)
            else:
                conditional.show_conditions(ctx, board, user)
            return
        if word == "preview":
            line = rest[1] if len(rest) == 2 else "1" if len(rest) == 1 else ""
            if not line.isdigit():
                raise UsageError(phrase("conditional_preview_usage"), self.full_usage(inv.rules))
            moves = conditional.line_moves(board, user, int(line))
            play.preview(ctx, board, None, moves, user)
            return
        # The line as he wrote it: its `if` is quoted back when a ply of it is refused.
        first = " ".join(["if", *rest] if inv.verb == "if" and rest else rest)
        conditional.set_conditions(ctx, board, user, first, inv.comment, number)


class _FixedMove(Command):
    """`VERB board userid password` = `move board userid password VERB`."""

    usage = "board userid password"
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, rest = self.board_user(ctx, inv)
        text = " ".join([self.name, *rest]) if self.name == "swap" else self.name
        play.make_move(ctx, board, user, play.split_move_number(text), inv.comment)


class Resign(_FixedMove):
    name = "resign"
    summary = "Resign the game; before everyone has moved this declines and removes the board."


class Propose(_FixedMove):
    name = "propose"
    summary = "Offer a draw (the same as `move ... propose`); the other players accept or reject."


class Undo(_FixedMove):
    name = "undo"
    summary = (
        "Ask to take back the last move (the same as `move ... undo`); the other players "
        "accept or reject."
    )


class Swap(_FixedMove):
    name = "swap"
    summary = "Take the pie-rule swap where the game allows it (the same as `move ... swap`)."
    token_verb = False  # in a reply, `swap ...` is move text (Quarod's `swap c3 c4`)
    move_word = True


class Pass(_FixedMove):
    name = "pass"
    summary = "Pass where the rules allow it (the same as `move ... pass`)."
    token_verb = False
    move_word = True


class Submit(Command):
    name = "submit"
    usage = "board userid password move[#n]"
    summary = "Keep a move unplayed and mail yourself a preview; `confirm` plays it."
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, rest = self.board_user(ctx, inv)
        if not rest:
            raise UsageError(phrase("no_move_given"), self.full_usage(inv.rules))
        play.submit(ctx, board, user, play.split_move_number(" ".join(rest), inv.token_move))


class Confirm(Command):
    name = "confirm"
    usage = "board userid password"
    summary = "Play the move you submitted."
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, _ = self.board_user(ctx, inv)
        play.confirm(ctx, board, user, inv.comment)


class Chat(Command):
    name = "chat"
    usage = "board userid password"
    summary = "Send your mail body to the players and subscribers of a board."
    token_verb = True
    changes_state = False

    def run(self, ctx: Context, inv: Invocation) -> None:
        board, user, rest = self.board_user(ctx, inv)
        text = "\n".join(t for t in (" ".join(rest), inv.comment) if t.strip())
        play.chat(ctx, board, user, text)


class Preview(Command):
    name = "preview"
    aliases = ("prev",)
    usage = (
        "board[#n] move... | new [-option=value...] move... | record (a game record in the body)"
    )
    summary = (
        "Show what a board would look like after some moves; nothing is saved. Separate "
        "moves that hold spaces with ; or , (give TLRH; b2 SDQF)."
    )
    changes_state = False
    token_verb = True

    def run(self, ctx: Context, inv: Invocation) -> None:
        try:
            self._preview(ctx, inv)
        except PbmError as exc:
            words = inv.words[1:] if inv.words and not inv.by_token else inv.words
            if isinstance(exc, NotFoundError | UsageError) or not _word_by_word(words):
                raise
            # Each word was read as a move: a move written with a space was cut in two.
            said = f"{exc}\n{phrase('preview_word_by_word')}"
            if isinstance(exc, BoardError):
                raise type(exc)(said, exc.board_id) from None
            raise PbmError(said) from None

    def _preview(self, ctx: Context, inv: Invocation) -> None:
        rules = self.rules_of(inv)
        if inv.by_token:
            assert inv.token_board_id is not None
            board = board_by_id(ctx, inv.token_board_id)
            play.preview(ctx, board, None, _moves_of(inv.words), inv.token_user)
            return
        self.need(inv, 1)
        target, *rest = inv.words
        if target.lower() == "record":
            # A game record (docs/records.md) in the mail body, replayed under the rules.
            record = records.parse(inv.comment)
            text = f"{record.game} board {record.board}: {' '.join(record.players)}\n\n"
            answer(
                ctx,
                phrase("subject_preview_record", game=rules.title, board=record.board),
                text + records.check(record) + "\n",
                ReplyKind.PREVIEW,
            )
            return
        if target.lower() == "new":
            if rest and rest[0].isdigit():  # pbmserv's `preview new <players> move...`
                rest = rest[1:]
            # The options of the variant named (`quadrupel-points`) and any `-option=value`.
            params = {}
            while rest and rest[0].startswith("-") and len(rest[0]) > 1:
                name, _, value = rest.pop(0).lstrip("-").partition("=")
                params[name.lower()] = value or "yes"
            options = merge_variant(rules, inv.variant, params, _game_word(inv))
            text = play.preview_new(ctx, rules.name, _moves_of(rest), options)
            answer(ctx, phrase("subject_preview_new", game=rules.title), text, ReplyKind.PREVIEW)
            return
        board_text, _, upto = target.partition("#")
        board = self.named_board(ctx, rules, board_text)
        number = int(upto) if upto.isdigit() else None
        if number is not None and not 0 <= number <= board.row.move_count:
            raise NotFoundError(phrase("no_such_move", number=number, label=board.label))
        play.preview(ctx, board, number, _moves_of(rest), None)


def _word_by_word(words: list[str]) -> bool:
    """Whether several words were read as a move each (no `;` or `,` between them)."""
    return len(words) > 1 and _moves_of(words) == words


def _moves_of(words: list[str]) -> list[str]:
    """Preview moves are separated by commas or semicolons when they hold spaces."""
    text = " ".join(words)
    if "," in text or ";" in text:
        return [m.strip() for m in text.replace(";", ",").split(",") if m.strip()]
    return list(words)


# Registered, in the order `help` lists them, by the composition root (pbm.app).
COMMANDS = (
    Challenge(),
    MoveCommand(),
    Queue(),
    Conditional(),
    Resign(),
    Propose(),
    Undo(),
    Swap(),
    Pass(),
    Submit(),
    Confirm(),
    Chat(),
    Preview(),
)
