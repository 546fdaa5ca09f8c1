"""Golden files for the HTML part of a board mail in every game (issue 13): the board
mail bob gets after his move, the second, as the sender sends it, its HTML part kept in
tests/golden/html/GAME.html and reviewed in diffs. The Content-ID (made from the mail's
random Message-ID) is written `CID`; the picture's bytes are checked elsewhere
(tests/pictures), since they follow Pillow's encoder. PBM_UPDATE_GOLDEN=1 rewrites the
files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pbm.games import GAMES
from tests.server.conftest import Server, legal_texts
from tests.server.test_mail_html import check_html_mail, html_of, sent_mail

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "html"
UPDATE = os.environ.get("PBM_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_html_of_a_board_mail(server: Server, game: str) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    assert server.send(alice, f"{game} challenge alice bob") == "done"
    sent_mail(server)
    for address, userid in ((alice, "alice"), (bob, "bob")):
        move = legal_texts(server, game)[0]
        assert server.send(address, f"{game} move 101 {userid} secret {move}") == "done"
        sent = sent_mail(server)
    (to_bob,) = [m for m in sent if m.to == [bob]]  # the answer to his move
    html = html_of(check_html_mail(to_bob, pictures=1))
    html = re.sub(r"cid:board1\.[0-9a-f]{16}@example\.org", "cid:CID", html)
    path = GOLDEN / f"{game}.html"
    if UPDATE:
        path.write_text(html, encoding="utf-8")
    assert html == path.read_text(encoding="utf-8")
