"""The links pbm's mails carry (issue 25): RFC 8058 one-click unsubscribe and the
address confirmation, each followed from a mail the server queued; a GET shows a
button and changes nothing, the POST does it at once. And the archive headers."""

from __future__ import annotations

import re
from email import message_from_bytes

from sqlmodel import select
from starlette.testclient import TestClient

from pbm.mail.streams import Stream
from pbm.store.engine import session_for
from pbm.store.models import User, UserAddress
from pbm.store.models_mail import MailStream
from tests.server.conftest import Server
from tests.web.conftest import BASE, move, play, snapshot


def stream_stopped(site: Server, userid: str, stream: Stream) -> bool:
    with session_for(site.engine) as session:
        user = session.exec(select(User).where(User.userid == userid)).one()
        row = session.exec(
            select(MailStream).where(MailStream.user_id == user.id, MailStream.stream == stream)
        ).one()
        return row.stopped_at is not None


def test_one_click_unsubscribe_from_a_board_mail(site: Server, client: TestClient) -> None:
    play(site, moves=1)
    move(site, "quarto", "101", "bob")
    [to_alice] = [m for m in site.new_mail() if "alice@players.example" in m.to]
    headers = message_from_bytes(to_alice.raw)
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    links = re.findall(r"<([^>]+)>", headers["List-Unsubscribe"])
    https = [link for link in links if link.startswith(f"{BASE}/unsubscribe/")]
    assert len(https) == 1 and any(link.startswith("mailto:pbm-stop+") for link in links)
    assert headers["Archived-At"] == f"<{BASE}/quarto/101>"
    assert headers["List-Archive"] == f"<{BASE}/quarto/101>"
    path = https[0].removeprefix(BASE)
    # What a link scanner does: a GET shows the button and changes nothing.
    before = snapshot(site)
    shown = client.get(path)
    assert shown.status_code == 200 and '<form method="post"' in shown.text
    assert "boards" in shown.text and "alice" in shown.text
    assert snapshot(site) == before
    assert not stream_stopped(site, "alice", Stream.BOARDS)
    # What the mail program does (RFC 8058): POST the one-click body.
    done = client.post(
        path,
        content=b"List-Unsubscribe=One-Click",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert done.status_code == 200 and "are stopped" in done.text
    assert stream_stopped(site, "alice", Stream.BOARDS)
    [confirmation] = site.new_mail()
    assert confirmation.to == ["alice@players.example"]
    assert "reply to this" in confirmation.body  # how to turn it on again
    assert str(confirmation.mail.reply_to).startswith("pbm-stop+")
    # Bob's next move mails alice no board (the digest has it instead).
    move(site, "quarto", "101", "alice")
    site.new_mail()  # her own move's answer she still gets
    move(site, "quarto", "101", "bob")
    assert not [m for m in site.new_mail() if "alice@players.example" in m.to]


def test_confirmation_link_from_the_request(site: Server, client: TestClient) -> None:
    assert site.send("carol@players.example", "signup carol secret") == "done"
    [request] = [m for m in site.new_mail() if "carol@players.example" in m.to]
    found = re.search(rf"{BASE}(/confirm/\w+)", request.body)
    assert found, request.body
    path = found.group(1)
    before = snapshot(site)
    shown = client.get(path)
    assert shown.status_code == 200 and "Confirm my address" in shown.text
    assert "carol@" not in shown.text  # the account, never the address
    assert snapshot(site) == before
    done = client.post(path)
    assert done.status_code == 200 and "confirmed for carol" in done.text
    with session_for(site.engine) as session:
        row = session.exec(select(UserAddress)).one()
        assert row.confirmed_at is not None and row.confirm_token is None
    [answer] = site.new_mail()
    assert answer.to == ["carol@players.example"] and "is confirmed for carol" in answer.body
    # The token is spent: the link now says so, and changes nothing.
    assert client.post(path).status_code == 404


def test_no_links_without_base_url(server: Server) -> None:
    play(server, moves=2)
    raw = b"".join(m.raw for m in server.outbox())
    assert b"https://" not in raw and b"Archived-At" not in raw
    assert b"List-Unsubscribe: <mailto:" in raw
