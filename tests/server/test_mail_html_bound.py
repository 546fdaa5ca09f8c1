"""The one answer's bound holds for the whole mail, pictures included (issue 21, point
4): `all show` of many boards gives one mail of at most ANSWER_MAX_BYTES as it leaves
the sender, its pictures past the bound are left out with a line saying so, and no
board is drawn whose text was cut or whose picture has no room."""

from __future__ import annotations

import re

import pytest

from pbm.output_limits import ANSWER_MAX_BYTES
from pbm.services.mailing import mail_html
from tests.server.conftest import Sent, Server
from tests.server.test_mail_html import html_of, parsed, sent_mail

LEFT_OUT = re.compile(r"\[(\d+) of the (\d+) boards in this mail are not drawn")


def boards(server: Server, count: int) -> str:
    """alice's address, with `count` Quarto boards of alice against bob."""
    alice = server.signup("alice")
    server.signup("bob")
    for first in range(0, count, server.config.max_commands):
        lines = ["quarto challenge alice bob"] * min(server.config.max_commands, count - first)
        assert server.send(alice, "multiple", "\n".join(lines)) == "done"
    sent_mail(server)  # the board mails, read past
    return alice


def show_all(
    server: Server, monkeypatch: pytest.MonkeyPatch, count: int
) -> tuple[Sent, int, re.Match[str] | None, int]:
    """`all show alice all` with `count` boards, as it leaves the sender: the mail, its
    pictures, the line saying some were left out, and how many pictures the sender drew
    (from none kept: the board mails' pictures would serve)."""
    alice = boards(server, count)
    pictures = mail_html.Pictures()
    monkeypatch.setattr(mail_html, "PICTURES", pictures)
    assert server.send(alice, "all show alice all") == "done"
    (answer,) = sent_mail(server)
    assert len(answer.raw) <= ANSWER_MAX_BYTES
    images = [p for p in parsed(answer).walk() if p.get_content_type() == "image/png"]
    return answer, len(images), LEFT_OUT.search(answer.body), pictures.drawn


def test_many_boards_in_one_answer_stay_within_the_bound(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer, images, left_out, drawn = show_all(server, monkeypatch, 300)
    assert "This answer was cut at" in answer.body
    # The text alone fills the bound: no board is drawn, and the mail says so.
    assert images == drawn == 0
    assert left_out is not None
    assert left_out.group(1) == left_out.group(2)


def test_pictures_past_the_bound_are_left_out_with_a_line(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer, images, left_out, drawn = show_all(server, monkeypatch, 20)
    assert left_out is not None, answer.body[-500:]
    assert (int(left_out.group(1)), int(left_out.group(2))) == (20 - images, 20)
    assert 0 < images < 20
    # Only the pictures that go out are drawn: the first boards of the answer, in order.
    assert drawn == images
    html = html_of(parsed(answer))
    shown = re.findall(r'alt="Quarto Board (\d+) at the start', html)
    assert shown == [str(101 + i) for i in range(images)]
    assert "are not drawn" in html  # the line is in the HTML part's text too


def test_a_few_boards_are_all_drawn(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    _, images, left_out, drawn = show_all(server, monkeypatch, 3)
    assert images == drawn == 3
    assert left_out is None
