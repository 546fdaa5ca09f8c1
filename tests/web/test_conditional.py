"""Conditional GET (issue 25): every page and feed carries an ETag and answers 304,
without a body, to a client whose copy is current; a move changes the board's page and
feed, never the picture of an earlier position."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.server.conftest import Server
from tests.web.conftest import move, play, with_everything

PAGES = (
    "/",
    "/quarto",
    "/quarto/101",
    "/quarto/101/2",
    "/quarto/101/feed.atom",
    "/quarto/101/2/picture.png",
    "/quarto/102/record.txt",
    "/quarto/102/record.json",
    "/player/alice",
    "/player/alice/feed.atom",
    "/player/alice/deadlines.ics",
    "/tournament/cup",
    "/tournament/cup/feed.atom",
    "/static/web.css",
)


def tag_of(client: TestClient, path: str) -> str:
    answer = client.get(path)
    assert answer.status_code == 200, path
    return answer.headers["etag"]


def test_every_page_answers_304_to_its_own_tag(site: Server, client: TestClient) -> None:
    with_everything(site)
    for path in PAGES:
        tag = tag_of(client, path)
        assert tag.startswith('W/"'), path
        again = client.get(path, headers={"if-none-match": tag})
        assert again.status_code == 304 and again.content == b"", path
        assert again.headers["etag"] == tag, path
        strong = tag.removeprefix("W/")  # If-None-Match compares weakly
        listed = client.get(path, headers={"if-none-match": f'"other", {strong}'})
        assert listed.status_code == 304, path
        other = client.get(path, headers={"if-none-match": '"other"'})
        assert other.status_code == 200 and other.content, path


def test_a_move_changes_the_page_and_feed_but_not_an_earlier_picture(
    site: Server, client: TestClient
) -> None:
    play(site, moves=2)
    paths = ("/quarto/101", "/quarto/101/feed.atom", "/quarto/101/2/picture.png")
    before = {path: tag_of(client, path) for path in paths}
    move(site, "quarto", "101", "alice")
    after = {path: tag_of(client, path) for path in paths}
    assert after["/quarto/101"] != before["/quarto/101"]
    assert after["/quarto/101/feed.atom"] != before["/quarto/101/feed.atom"]
    assert after["/quarto/101/2/picture.png"] == before["/quarto/101/2/picture.png"]
    picture = client.get(
        "/quarto/101/2/picture.png",
        headers={"if-none-match": before["/quarto/101/2/picture.png"]},
    )
    assert picture.status_code == 304 and picture.headers["cache-control"] == "max-age=300"
    stale = client.get("/quarto/101/feed.atom", headers={"if-none-match": before[paths[1]]})
    assert stale.status_code == 200 and b"/quarto/101/3" in stale.content
