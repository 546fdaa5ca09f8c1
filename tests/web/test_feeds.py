"""Feeds (issue 25): every Atom feed parses with feedparser, the calendar with
icalendar; a move adds to the board's feed and moves its deadline event, whose UID
stays, and the deadline is the forfeit the timeout job enforces, vacation and free
weekends counted. And the operator's /metrics and /healthz."""

from __future__ import annotations

from datetime import datetime, timedelta

import feedparser
import icalendar
from starlette.testclient import TestClient

from pbm import jobs
from pbm.web.metrics import metrics_app
from tests.server.conftest import Server
from tests.web.conftest import BASE, move, play, reader_for, with_everything


def parsed(client: TestClient, path: str) -> feedparser.FeedParserDict:
    answer = client.get(path)
    assert answer.status_code == 200, path
    assert answer.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(answer.content)
    assert not feed.bozo, (path, feed.bozo_exception)
    return feed


def test_every_feed_parses(site: Server, client: TestClient) -> None:
    with_everything(site)
    board = parsed(client, "/quarto/101/feed.atom")
    assert [e.link for e in board.entries][:2] == [f"{BASE}/quarto/101/4", f"{BASE}/quarto/101/3"]
    assert board.entries[0].title.startswith("Quarto Board 101, move 4: bob ")
    finished = parsed(client, "/quarto/102/feed.atom")
    assert "bob" in finished.entries[0].title and finished.entries[0].id.endswith("#result")
    player = parsed(client, "/player/alice/feed.atom")
    assert {e.link for e in player.entries} >= {f"{BASE}/quarto/101", f"{BASE}/quarto/102"}
    latest = {e.link: e.title for e in player.entries}
    assert latest[f"{BASE}/quarto/101"].startswith("Quarto Board 101, move 4: bob ")
    assert latest[f"{BASE}/quarto/102"] == "Quarto Board 102: alice resigns. Game won by bob."
    tournament = parsed(client, "/tournament/cup/feed.atom")
    titles = [e.title for e in tournament.entries]
    assert all(t.startswith("Round ") for t in titles) and any("Round 1," in t for t in titles)


def events(client: TestClient, userid: str) -> dict[str, icalendar.Event]:
    answer = client.get(f"/player/{userid}/deadlines.ics")
    assert answer.headers["content-type"].startswith("text/calendar")
    cal = icalendar.Calendar.from_ical(answer.content)
    found: dict[str, icalendar.Event] = {}
    for event in cal.walk("VEVENT"):
        assert isinstance(event, icalendar.Event)
        found[str(event["uid"])] = event
    return found


def test_a_move_updates_the_feed_and_moves_the_deadline(site: Server, client: TestClient) -> None:
    play(site, moves=2)
    before = parsed(client, "/quarto/101/feed.atom")
    [(uid, event)] = events(client, "alice").items()
    assert str(event["summary"]) == "Your move in Quarto Board 101"
    due = event.decoded("dtend")
    site.clock.advance(timedelta(days=2))
    move(site, "quarto", "101", "alice")
    after = parsed(client, "/quarto/101/feed.atom")
    assert len(after.entries) == len(before.entries) + 1
    assert after.entries[0].link == f"{BASE}/quarto/101/3"
    [(uid_after, moved)] = events(client, "alice").items()
    assert uid_after == uid
    assert str(moved["summary"]) == "bob's move in Quarto Board 101"
    assert moved.decoded("dtend") > due
    assert sequence(moved) > sequence(event)
    [bobs] = events(client, "bob").values()
    assert str(bobs["summary"]) == "Your move in Quarto Board 101"


def test_metrics_and_health(site: Server) -> None:
    play(site, moves=2)
    with reader_for(site) as reader, TestClient(metrics_app(reader)) as client:
        text = client.get("/metrics").text
        assert client.get("/healthz").text == "ok\n"
    values = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert values['pbm_messages_received_total{via="cli"}'] >= 6
    assert values['pbm_messages{status="done"}'] >= 6
    assert values["pbm_outbox_depth"] > 0  # nothing sends in this test
    assert values["pbm_outbox_oldest_seconds"] > 0
    assert values['pbm_processing_seconds_bucket{le="+Inf"}'] >= 6
    assert values["pbm_daemons_alive"] == 0
    assert values["pbm_bot_turns_due"] == 0


def deadline_of(client: TestClient, userid: str) -> datetime:
    [event] = events(client, userid).values()
    due = event.decoded("dtend")
    assert isinstance(due, datetime)
    assert f"Forfeit on {due:%Y-%m-%d %H:%M} UTC" == str(event["description"])
    return due


def sequence(event: icalendar.Event) -> int:
    """The event's SEQUENCE, which icalendar reads as an int (its vInt)."""
    value = event["sequence"]
    assert isinstance(value, int)
    return value


def sequence_of(client: TestClient, userid: str) -> int:
    [event] = events(client, userid).values()
    return sequence(event)


def test_the_deadline_is_the_forfeit_the_job_enforces_with_vacation_and_free_weekends(
    site: Server, client: TestClient
) -> None:
    for userid in ("alice", "bob"):
        site.signup(userid)
    started = site.clock.now()
    challenge = "quarto challenge alice bob --weekendfree"
    assert site.send("alice@players.example", challenge) == "done"
    plain = started + timedelta(days=21)  # the time rules' plain reading
    weekends = deadline_of(client, "alice")
    assert weekends - plain > timedelta(days=6)  # three weekends and more do not count
    version = sequence_of(client, "alice")
    site.clock.advance(timedelta(days=2))
    assert site.send("alice@players.example", "vacation alice secret start") == "done"
    on_vacation = deadline_of(client, "alice")
    # the vacation moved the deadline without a move: a new version of the event
    assert sequence_of(client, "alice") > version
    assert sequence_of(client, "bob") == sequence_of(client, "alice")
    assert on_vacation - weekends > timedelta(days=5)  # her vacation days run first
    assert deadline_of(client, "bob") == on_vacation  # her opponent sees the same time
    site.clock.set(on_vacation - timedelta(minutes=1))
    assert jobs.run_due(site.engine, site.clock, site.config)["forfeits"] == 0
    assert deadline_of(client, "alice") == on_vacation  # the clock ran as foretold
    site.clock.advance(timedelta(minutes=2))
    assert jobs.run_due(site.engine, site.clock, site.config)["forfeits"] == 1
    assert events(client, "alice") == {}
