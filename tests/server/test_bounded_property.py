"""For any message (random headers, command words, `multiple` bodies, MIME shapes), the
mails queued for its sender are at most one answer plus one board mail per board it
changed, no reader gets two mails about one board, and the answer is at most 256 KB."""

from __future__ import annotations

import re
from collections import Counter
from email.message import EmailMessage
from email.utils import format_datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import select

from pbm.output_limits import ANSWER_MAX_BYTES
from pbm.store.engine import session_for
from pbm.store.models import BoardRow
from tests.server.conftest import START, Server, fresh_server, legal_texts

ALICE = "alice@players.example"
STRANGER = "someone@elsewhere.example"
WORDS = [
    "help", "list", "show", "games", "history", "quarto", "quad", "quarod", "quadrature",
    "101", "102", "103", "101#1", "move", "alice", "bob", "pw", "wrong", "challenge",
    "resign", "chat", "multiple", "signup", "all", "next", "commands", "-size=6", "**",
]  # fmt: skip
_THREAD = re.compile(rb"<pbm-board-(\d+)@")

word_lines = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
repeated = st.tuples(st.sampled_from(WORDS[:5]), st.sampled_from(WORDS[5:9]), st.integers(1, 400))
subjects = st.one_of(
    word_lines,
    repeated.map(lambda t: " ".join([t[0]] + [t[1]] * t[2])),
    # Any text a Subject can hold: no line breaks (the email package refuses them).
    st.text(st.characters(exclude_categories=["Cc", "Cs", "Zl", "Zp"]), max_size=60),
    st.just("multiple"),
)
headers = st.lists(
    st.sampled_from(
        [
            ("X-Mailer", "test"),
            ("In-Reply-To", "<pbm.aaaaaaaaaaaaaaaaaaaa.1234@example.org>"),
            ("References", "<pbm-board-1@example.org>"),
            ("Reply-To", "other@elsewhere.example"),
            ("Auto-Submitted", "no"),
            ("Precedence", "first-class"),
        ]
    ),
    max_size=3,
    unique_by=lambda header: header[0],
)
shapes = st.sampled_from(["plain", "html", "base64", "attachment"])


def _message(
    sender: str, subject: str, lines: list[str], extra: list[tuple[str, str]], shape: str, n: int
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "pbm@example.org"
    msg["Subject"] = subject
    msg["Date"] = format_datetime(START)
    msg["Message-ID"] = f"<prop.{n}@players.example>"
    for name, value in extra:
        msg[name] = value
    body = "\n".join(lines) + "\n"
    if shape == "base64":
        msg.set_content(body, cte="base64")
    else:
        msg.set_content(body)
    if shape == "html":
        msg.add_alternative("<p>" + "<br>".join(lines) + "</p>", subtype="html")
    elif shape == "attachment":
        msg.add_attachment(b"\x00\x01" * 50, maintype="application", subtype="octet-stream")
    return msg.as_bytes()


def _boards(server: Server) -> dict[int, tuple[int, str]]:
    with session_for(server.engine) as session:
        return {g.id or 0: (g.move_count, g.status) for g in session.exec(select(BoardRow))}


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_one_answer_plus_one_board_mail_per_changed_board(data: st.DataObject) -> None:
    with fresh_server() as server:
        for userid in ("alice", "bob"):
            server.signup(userid, "pw")
        server.send(ALICE, "quarto challenge alice bob")
        server.send(ALICE, "quarto challenge alice bob")
        server.new_mail()
        for n in range(data.draw(st.integers(1, 3), label="messages")):
            sender = data.draw(st.sampled_from([ALICE, STRANGER]), label="sender")
            moves = [f"quarto move 101 alice pw {legal_texts(server, 'quarto', '101')[0]}"]
            lines = data.draw(
                st.lists(st.one_of(word_lines, st.sampled_from(moves)), max_size=60), label="body"
            )
            subject = data.draw(st.one_of(subjects, st.sampled_from(moves)), label="subject")
            raw = _message(
                sender,
                subject,
                lines,
                data.draw(headers, label="headers"),
                data.draw(shapes, label="shape"),
                n,
            )
            before = _boards(server)
            assert server.process(raw) in ("done", "ignored")
            after = _boards(server)
            changed = sum(1 for i, row in after.items() if before.get(i) != row)
            mails = server.new_mail()
            to_sender = [m for m in mails if sender in m.to]
            assert len(to_sender) <= 1 + changed
            for mail in to_sender:
                assert len(mail.raw) <= ANSWER_MAX_BYTES
            about = Counter(
                (m.to[0], _THREAD.findall(m.raw.split(b"\n\n", 1)[0])[0])
                for m in mails
                if sender not in m.to and _THREAD.search(m.raw.split(b"\n\n", 1)[0])
            )
            assert all(count == 1 for count in about.values()), about
