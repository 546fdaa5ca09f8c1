"""`export USER PASSWORD [GAME] [finished|all] [since DATE]` by mail, and
`pbm game export --player` (docs/records.md, "Exporting all your games")."""

from __future__ import annotations

import base64
import email
import io
import json
import zipfile
from dataclasses import replace
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from pathlib import Path

from pbm.jobs import run_due
from pbm.privacy_jobs import run_privacy
from pbm.services.play import records
from tests.server.conftest import Server, flat, legal_texts
from tests.server.conftest import cli_ok as ok

HOUR = timedelta(hours=1)


def _zip_of(raw: bytes) -> zipfile.ZipFile:
    msg = email.message_from_bytes(raw, policy=policy.SMTP)
    assert isinstance(msg, EmailMessage) and msg.get_content_type() == "multipart/mixed"
    [part] = list(msg.iter_attachments())
    assert part.get_content_type() == "application/zip"
    data = part.get_content()
    assert isinstance(data, bytes)
    return zipfile.ZipFile(io.BytesIO(data))


def _games(server: Server) -> str:
    """alice and bob with Quadrature 101 finished, Quarto 101 running; alice's address."""
    alice, bob = server.signup("alice"), server.signup("bob")
    server.send(alice, "quadrature challenge alice bob")
    for sender, userid in ((alice, "alice"), (bob, "bob")):
        server.clock.advance(HOUR)
        text = legal_texts(server, "quadrature", "101")[0]
        server.send(sender, f"quadrature move 101 {userid} secret {text}")
    server.send(bob, "quadrature resign 101 bob secret")
    server.clock.advance(timedelta(days=3))
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    return alice


def test_export_by_mail_zips_every_record(server: Server) -> None:
    alice = _games(server)
    server.send(alice, "export alice secret")
    [mail] = server.new_mail()
    assert mail.to == [alice] and mail.subject == "Game records of alice"
    assert "records of 2 boards of alice" in mail.body
    archive = _zip_of(mail.raw)
    assert sorted(archive.namelist()) == [
        "quadrature/quadrature-101.json",
        "quadrature/quadrature-101.sgf",
        "quadrature/quadrature-101.txt",
        "quarto/quarto-101.json",
        "quarto/quarto-101.txt",
    ]
    text = archive.read("quadrature/quadrature-101.txt").decode()
    assert records.parse(text).winner == 0
    assert json.loads(archive.read("quarto/quarto-101.json"))["status"] == "active"
    assert "GM[15]" in archive.read("quadrature/quadrature-101.sgf").decode()
    # Only finished Quadrature boards, or boards started since a day.
    server.send(alice, "export alice secret quadrature finished")
    assert len(_zip_of(server.new_mail()[0].raw).namelist()) == 3
    server.send(alice, "export alice secret since 2026-11-23")
    assert _zip_of(server.new_mail()[0].raw).namelist() == [
        "quarto/quarto-101.txt",
        "quarto/quarto-101.json",
    ]


def test_export_goes_to_the_confirmed_address_only(server: Server) -> None:
    alice = _games(server)
    server.send("someone@else.example", "export alice secret")
    mails = server.new_mail()
    [export] = [m for m in mails if m.subject == "Game records of alice" and m.to == [alice]]
    assert len(_zip_of(export.raw).namelist()) == 5
    [note] = [m for m in mails if m.to == ["someone@else.example"]]
    assert "confirmed address" in note.body and b"application/zip" not in note.raw


def test_bad_export_words_say_how_to_write_them(server: Server) -> None:
    alice = server.signup("alice")
    for words, said in (
        ("since yesterday", "write since YYYY-MM-DD"),
        ("chess", "'chess' is not a game"),
    ):
        server.send(alice, f"export alice secret {words}")
        [refused] = server.new_mail()
        assert said in refused.body and "Usage: export userid password" in refused.body, words


def test_a_large_export_comes_in_parts_a_day_apart(server: Server) -> None:
    alice = _games(server)
    server.clock.advance(HOUR)
    server.send(alice, "quadrupel challenge alice bob")
    server.new_mail()
    server.config = replace(server.config, export_bytes_per_mail=17_000)
    server.send(alice, "export alice secret")
    [first] = server.new_mail()
    assert "records of 1 boards" in first.body
    assert "This is part 1: the 2 boards left did not fit" in flat(first.body)
    assert "the next about 2026-11-26 05:41 UTC" in flat(first.body)
    parts = [first]
    for hours in (23, 1, 23, 1, 48):
        server.clock.advance(hours * HOUR)
        assert run_privacy(server.engine, server.clock, server.config)["export_parts"] == (
            hours == 1
        )
        parts += server.new_mail()
    assert [m.subject for m in parts] == [
        "Game records of alice",
        "Game records of alice, part 2",
        "Game records of alice, part 3",
    ]
    assert "This is part 2: the 1 boards left" in flat(parts[1].body)
    assert "This is part 3, the last one." in parts[2].body
    names: list[str] = []
    for mail in parts:
        assert mail.to == [alice] and len(mail.raw) <= 17_000
        archive = _zip_of(mail.raw)
        assert archive.testzip() is None
        names += archive.namelist()
    assert sorted(n.rsplit(".", 1)[0] for n in names) == sorted(
        ["quadrature/quadrature-101"] * 3
        + ["quarto/quarto-101"] * 2
        + ["quadrupel/quadrupel-101"] * 2
    )


def test_a_new_export_replaces_the_parts_still_to_come(server: Server) -> None:
    alice = _games(server)
    server.config = replace(server.config, export_bytes_per_mail=17_000)
    server.send(alice, "export alice secret")
    server.send(alice, "export alice secret quarto")
    assert "part" not in server.new_mail()[-1].body
    server.clock.advance(48 * HOUR)
    assert run_privacy(server.engine, server.clock, server.config)["export_parts"] == 0


def test_cli_exports_a_player(cfg: Path) -> None:
    for userid in ("alice", "bob"):
        ok("user", "add", userid, f"{userid}@x.example", "--password", "pw", "--confirmed")
    for userid, line in (
        ("alice", "quarto challenge alice bob"),
        ("alice", "quadrature challenge alice bob"),
        ("alice", "quadrature move 101 alice pw b3-b4"),
        ("bob", "quadrature move 101 bob pw b9-b8"),
        ("bob", "quadrature move 101 bob pw resign"),
    ):
        ok("run", line, "--as", userid)
    boards = json.loads(ok("game", "export", "--player", "alice", "--format", "json"))
    assert [(b["game"], b["status"]) for b in boards] == [
        ("quarto", "active"),
        ("quadrature", "finished"),
    ]
    finished = json.loads(ok("game", "export", "--player", "bob", "--format", "json", "--finished"))
    assert [b["game"] for b in finished] == ["quadrature"]
    sgf = ok("game", "export", "--player", "alice", "--format", "sgf")
    assert sgf.count("(;FF[4]GM[15]") == 1
    text = ok("game", "export", "quarto", "--player", "alice")
    assert text.count(records.MAGIC) == 1 and "Game: quarto" in text


def test_mydata_mails_every_row_keyed_to_the_player(server: Server) -> None:
    alice = _games(server)
    server.send(alice, "mydata alice secret")
    [mail] = server.new_mail()
    assert mail.to == [alice] and mail.subject == "Your data at pbm: alice"
    archive = _zip_of(mail.raw)
    data = json.loads(archive.read("pbm-alice-data.json"))
    assert (data["format"], data["version"], data["userid"]) == ("pbm-personal-data", 1, "alice")
    tables = data["tables"]
    assert [u["userid"] for u in tables["users"]] == ["alice"]
    assert "password_hash" not in tables["users"][0]
    assert [a["address"] for a in tables["user_addresses"]] == [alice]
    assert {r["game"] for r in tables["player_ratings"]} == {"quadrature"}
    assert len(tables["game_players"]) == 2 and len(data["boards"]) == 2
    # Her own mails in, the mails to her out; none of bob's.
    assert tables["inbound_messages"] and all(
        b"alice" in base64.b64decode(m["raw"]) for m in tables["inbound_messages"]
    )
    assert tables["outbox"] and all(alice in m["recipients"] for m in tables["outbox"])
    assert all("bob@players.example" not in json.dumps(m) for m in tables["outbox"])


def test_mydata_log_lines_are_his_event_rows_oldest_first(server: Server) -> None:
    alice = _games(server)
    server.send(alice, "vacation alice wrong-password status")
    server.clock.advance(timedelta(days=8))
    run_due(server.engine, server.clock, server.config)  # alice's Quarto reminder
    server.send(alice, "mydata alice secret")
    data = json.loads(_zip_of(server.new_mail()[-1].raw).read("pbm-alice-data.json"))
    lines = data["log_lines"]
    assert [line["at"] for line in lines] == sorted(line["at"] for line in lines)
    texts = [f"{line['source']} {line['text']}" for line in lines]
    signup = "inbound_messages mail <test.1@players.example>"
    assert texts[:2] == [f"{signup} received via cli", f"{signup} processed: done"]
    assert any(t.startswith("outbox") and f"to {alice} (" in t for t in texts), texts
    assert any(t.startswith("rate_events auth-") for t in texts), texts
    assert any(t.startswith("job_marks reminder sent on board") for t in texts), texts
    assert not any("bob@players.example" in t for t in texts)
    # Every line points at a row of the copy.
    rows = {(name, row["id"]) for name, found in data["tables"].items() for row in found}
    assert {(line["source"], line["row"]) for line in lines} <= rows


def test_cli_user_export_prints_the_same(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("run", "quarto challenge alice bob", "--as", "alice")
    data = json.loads(ok("user", "export", "alice"))
    assert [a["address"] for a in data["tables"]["user_addresses"]] == ["alice@x.example"]
    assert [b["game"] for b in data["boards"]] == ["quarto"]
