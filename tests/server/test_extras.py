"""Pie swap seats, notifications at the end, oversized mail, move-list layout."""

from __future__ import annotations

import dataclasses

from tests.server.conftest import Server, board_row, legal_texts


def test_quarod_pie_swap_changes_seats(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarod challenge alice bob")
    server.send(alice, f"quarod move 101 alice secret {legal_texts(server, 'quarod')[0]}")
    assert "swap" in legal_texts(server, "quarod")
    server.new_mail()
    board_mail = [m for m in server.outbox() if m.to == [bob]][-1].mail
    assert server.send(bob, "Re: " + board_mail.subject, "swap", to=board_mail.reply_to) == "done"
    mails = server.new_mail()
    row = board_row(server, "quarod")
    assert row.move_count == 2 and row.to_move == 0  # alice, now White, moves on
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert m.subject == "Quarod Board 101 alice"
        lines = m.body.splitlines()
        sides = next(i for i, line in enumerate(lines) if line.strip().startswith("White"))
        assert lines[sides].split() == ["White", "Black"]
        assert lines[sides + 1].split() == ["alice", "bob"]
        assert "2 swap" in m.body


def test_notify_all_and_per_board(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    carol = server.signup("carol")
    dave = server.signup("dave")
    server.send(carol, "quadrature notify carol secret")
    [note] = server.new_mail()
    assert note.subject == "Quadrature Notify summary" and "when any Quadrature" in note.body
    server.send(alice, "quadrature challenge alice bob")
    server.send(dave, "quadrature notify dave secret 101")
    server.new_mail()
    server.send(alice, f"quadrature move 101 alice secret {legal_texts(server, 'quadrature')[0]}")
    server.send(bob, f"quadrature move 101 bob secret {legal_texts(server, 'quadrature')[0]}")
    mails = server.new_mail()
    assert all(m.to[0] in (alice, bob) for m in mails)  # no notification while it runs
    server.send(alice, "quadrature resign 101 alice secret")
    mails = server.new_mail()
    notes = [m for m in mails if m.subject == "Notification of Quadrature Board 101"]
    assert sorted(m.to[0] for m in notes) == [carol, dave]
    assert all("Game won by bob." in m.body for m in notes)


def test_notify_with_a_board_toggles_as_its_help_says(server: Server) -> None:
    """`notify ... 101` a second time said again "You will be told": a board's
    notification could never be taken back."""
    alice = server.signup("alice")
    server.signup("bob")
    dave = server.signup("dave")
    server.send(alice, "quadrature challenge alice bob")
    server.send(alice, "quadrature challenge alice bob")
    server.new_mail()
    server.send(dave, "quadrature notify dave secret 101")
    [on] = server.new_mail()
    assert "You will be told when these Quadrature boards end: 101" in on.body
    server.send(dave, "quadrature notify dave secret 101 102")
    [both] = server.new_mail()
    assert "You will be told when these Quadrature boards end: 102" in both.body
    assert "You will no longer be told when these Quadrature boards end: 101" in both.body
    for board in ("101", "102"):
        for player in ("alice", "bob"):
            move = legal_texts(server, "quadrature", board)[0]
            server.send(
                f"{player}@players.example", f"quadrature move {board} {player} secret {move}"
            )
        server.send(alice, f"quadrature resign {board} alice secret")
    told = [m.subject for m in server.new_mail() if dave in m.to]
    assert told == ["Notification of Quadrature Board 102"]


def test_oversized_mail_is_ignored(server: Server) -> None:
    server.config = dataclasses.replace(server.config, max_message_bytes=2000)
    assert server.send("big@x.example", "help", "x" * 5000) == "ignored"
    assert server.new_mail() == []


def test_move_list_keeps_the_last_rows_while_running(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quadrature challenge alice bob")
    for ply in range(1, 12):
        who, address = ("alice", alice) if ply % 2 else ("bob", bob)
        move = legal_texts(server, "quadrature")[0]
        server.send(address, f"quadrature move 101 {who} secret {move}")
    last = server.new_mail()[-1]
    assert _numbers(last.body) == list(range(5, 12))  # the last 4 rows
    server.send(alice, "quadrature show 101")
    shown = server.new_mail()[-1]
    assert _numbers(shown.body) == list(range(1, 12))


def _numbers(body: str) -> list[int]:
    """The move numbers in a board mail's move list (the lines under the userids)."""
    lines = body.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() == ["alice", "bob"]) + 1
    numbers = []
    for line in lines[start:]:
        if not line.strip():
            break
        numbers += [int(w) for w in line.split() if w.isdigit()]
    return numbers
