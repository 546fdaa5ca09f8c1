"""`GAME ask BOARD QUESTION...`: questions about a board, answered in words (issue 26)."""

from __future__ import annotations

from pbm.commands.answers import answer
from pbm.commands.base import Command, Invocation
from pbm.commands.lists import reader_of
from pbm.errors import NotFoundError, UsageError
from pbm.services.context import Context, ReplyKind
from pbm.services.mailing.board_mail import board_facts
from pbm.services.play import questions
from pbm.services.play.boards import Board, board_by_id, load_board
from pbm.texts import echoed, phrase, wrap


class Ask(Command):
    name = "ask"
    usage = "board QUESTION..."
    summary = (
        "Ask about a board; the answer comes in sentences (a reply to a board mail may "
        "write just `ask QUESTION`). Questions: SQUARE (e.g. c3): what is on it; "
        "`where [SIDE]`: where the pieces are (of Black, White or a userid); "
        "`moves [SQUARE]`: the legal moves of the player to move (those that name the "
        "square); `threats`: what is one move short, for each side: in Quarto the lines "
        "one piece short of a quarto and the pieces that complete them; in Quadrature "
        "the points where a man would square enemy men (and the men one step away), and "
        "the fourth corners of a side's squares, where the enemy may not step; in "
        "Quadrupel the moves that complete a QUADRUPEL, with its shape (and points); in "
        "Quad the drops or steps that make a four; in Quarod, which has no lines, the "
        "moves that win at once; `last [N]`: the last N moves (5 if not given) with what "
        "each did."
    )
    changes_state = False
    token_verb = True

    def _board(self, ctx: Context, inv: Invocation) -> Board:
        """The board named first; a question written first (`ask threats`) is told so."""
        rules = self.rules_of(inv)
        # A number of no board is told how to find it; a square (`c3`) was asked first.
        if inv.words[0].isdigit():
            return self.named_board(ctx, rules, inv.words[0])
        try:
            return load_board(ctx, rules, inv.words[0])
        except NotFoundError:
            word = echoed(inv.words[0])
            text = phrase("ask_board_first", game=rules.title, name=rules.name, word=word)
            raise UsageError(text, self.full_usage(rules)) from None

    def run(self, ctx: Context, inv: Invocation) -> None:
        reader = reader_of(ctx, inv)
        if inv.by_token:
            assert inv.token_board_id is not None
            board, rest = board_by_id(ctx, inv.token_board_id), list(inv.words)
        else:
            self.need(inv, 1)
            board, rest = self._board(ctx, inv), inv.words[1:]
        asked = questions.parse(rest)
        index = board.index_of(reader.id) if reader is not None else None
        moves = board_facts(ctx, board, timing=False, results=False).moves
        lines = questions.answer(board, asked, index, moves)
        answer(
            ctx,
            phrase("subject_ask", label=board.label),
            wrap("\n".join(lines)),
            ReplyKind.LIST,
            board=board,
            reader=reader,
        )


# Registered by the composition root (pbm.app).
COMMANDS = (Ask(),)
