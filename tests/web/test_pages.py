"""Every page kind through the app (issue 25): what it shows (userids, never an
address), the headers every response carries, the bounds of every list, and that a
GET changes nothing."""

from __future__ import annotations

import dataclasses
import io
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image
from starlette.testclient import TestClient

from pbm.config import PACKAGE_TEMPLATES
from pbm.pictures.picture import draw
from pbm.services.context import Context
from pbm.services.play import lists
from pbm.services.play.boards import load_board, rules_for, state_at
from pbm.services.play.picture_words import picture_words
from pbm.store.engine import session_for, sqlite_file
from pbm.store.readonly import POOL_SIZE
from pbm.texts import use_templates
from pbm.web import views
from tests.server.conftest import Server
from tests.web.conftest import (
    BASE,
    client_for,
    move,
    play,
    reader_for,
    snapshot,
    with_everything,
)

# The words of the pictures as the templates hold them.
WORDS = picture_words()

ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")

PAGES = [
    "/",
    "/quarto",
    "/quarto/101",
    "/quarto/101/0",
    "/quarto/101/3",
    "/quarto/102",
    "/player/alice",
    "/tournament/cup",
]


def no_address(text: str) -> None:
    found = [a for a in ADDRESS.findall(text) if not a.startswith("pbm@")]
    assert not found, found


def test_every_page_kind_answers_with_its_content(site: Server, client: TestClient) -> None:
    with_everything(site)
    for path in PAGES:
        page = client.get(path)
        assert page.status_code == 200, (path, page.text[-300:])
        assert page.headers["content-type"].startswith("text/html")
        assert "<script" not in page.text and "style=" not in page.text, path
        no_address(page.text)
    front = client.get("/").text
    # The front page was titled "PBeM Server · PBeM Server"; the others keep the name.
    assert "<title>PBeM Server</title>" in front
    assert "<title>Player alice · PBeM Server</title>" in client.get("/player/alice").text
    assert 'href="/quarto/102"' in front  # the recent result
    assert "signup alice secret" in front  # how to play
    game = client.get("/quarto").text
    assert 'href="/quarto/101"' in game and 'href="/quarto/102"' not in game  # running only
    assert 'href="/player/bob"' in game  # the ratings table (bob won 102)
    player = client.get("/player/alice").text
    assert 'href="/quarto/101"' in player and 'href="/quarto/102"' in player
    # The position before any move says so: "after move 0" said nothing.
    start = client.get("/quarto/101/0").text
    assert "<title>Quarto Board 101 at the start · PBeM Server</title>" in start
    assert "<figcaption>Start position (the board is at move " in start
    assert "after move 0" not in start
    assert 'href="/tournament/cup"' in player
    assert "<svg" in player and "Quarto rating: from 1600" in player  # the chart
    assert "after 1 game: 0 won, 1 lost, 0 tied." in player
    tournament = client.get("/tournament/cup").text
    assert "Standings" in tournament and "Crosstable" in tournament and "Round 1" in tournament
    # in words, and truthfully: a round robin plays all its rounds at once
    assert "<p>Quarto, round robin, running, all 3 rounds at once. <a" in tournament


def test_board_page_has_the_mailed_board_and_every_position(
    site: Server, client: TestClient
) -> None:
    play(site, moves=4)
    html = client.get("/quarto/101").text
    with session_for(site.engine) as session:
        ctx = Context(session=session, clock=site.clock, config=site.config, sender="")
        board = load_board(ctx, rules_for("quarto"), "101")
        shown = lists.show_text(ctx, board, None)
    assert shown.split("\n")[0].strip() in html
    assert "alice" in html and "Moves" in html
    for number in range(5):
        assert f'href="/quarto/101/{number}"' in html
        page = client.get(f"/quarto/101/{number}")
        assert page.status_code == 200
        assert f"/quarto/101/{number}/picture.png" in page.text
        png = client.get(f"/quarto/101/{number}/picture.png")
        assert png.headers["content-type"] == "image/png"
        assert Image.open(io.BytesIO(png.content)).size[0] > 100
    # The picture is the position's, drawn as the mails draw it for an observer.
    with session_for(site.engine) as session:
        ctx = Context(session=session, clock=site.clock, config=site.config, sender="")
        board = load_board(ctx, rules_for("quarto"), "101")
        drawn = draw(
            board.rules,
            state_at(ctx, board, 2),
            seat=None,
            words=WORDS,
            previous=state_at(ctx, board, 1),
            heading="Quarto Board 101 after move 2",
            players=board.userids,
        )
    assert client.get("/quarto/101/2/picture.png").content == drawn.png
    assert client.get("/quarto/101/3/picture.png").content != drawn.png
    # Each position's words are that position's: they change with every move.
    words = {client.get(f"/quarto/101/{n}").text.split('class="words"')[1][:800] for n in range(5)}
    assert len(words) == 5
    assert client.get("/quarto/101/5").status_code == 404
    assert client.get("/quarto/999").status_code == 404
    assert client.get("/nogame/101").status_code == 404


def test_records_download(site: Server, client: TestClient) -> None:
    play(site, moves=3)
    text = client.get("/quarto/101/record.txt")
    assert text.status_code == 200 and "Board: 101" in text.text
    record = client.get("/quarto/101/record.json").json()
    assert record["format"] == "pbm-game-record"
    assert [p["userid"] for p in record["players"]] == ["alice", "bob"]
    no_address(text.text + str(record))


def test_hidden_setups_stay_hidden(site: Server, client: TestClient) -> None:
    for userid in ("alice", "bob"):
        site.signup(userid)
    assert site.send("alice@players.example", "quadrupel-points challenge alice bob") == "done"
    move(site, "quadrupel", "101", "alice")
    site.new_mail()
    html = client.get("/quadrupel/101").text
    with session_for(site.engine) as session:
        ctx = Context(session=session, clock=site.clock, config=site.config, sender="")
        board = load_board(ctx, rules_for("quadrupel"), "101")
        moves, hidden = views.shown_moves(ctx, board)
        secret = moves[0].text
    assert hidden == {1}
    assert "1. alice ..." in html
    assert secret not in html
    assert client.get("/quadrupel/101/record.txt").status_code == 403
    assert secret not in client.get("/quadrupel/101/feed.atom").text


def test_headers_on_every_response(site: Server, client: TestClient) -> None:
    play(site, moves=1)
    for path in [*PAGES[:3], "/robots.txt", "/static/web.css", "/nothing/here/at/all"]:
        page = client.get(path)
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "no-referrer"


def test_robots_follow_public(site: Server) -> None:
    with client_for(site) as public:
        assert public.get("/robots.txt").text.splitlines()[1:] == [
            "Disallow: /unsubscribe/",
            "Disallow: /confirm/",
        ]
    private = dataclasses.replace(site.config, web_public=False)
    with client_for(site, private) as closed:
        assert closed.get("/robots.txt").text.splitlines()[1:] == ["Disallow: /"]


def test_lists_are_paged(site: Server, client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    play(site, moves=0)
    for _ in range(2):
        assert site.send("alice@players.example", "quarto challenge alice bob") == "done"
    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    first = client.get("/quarto").text
    assert first.count('href="/quarto/10') == 2 and "Page 1 of 2" in first
    second = client.get("/quarto?page=2").text
    assert second.count('href="/quarto/10') == 1 and 'rel="prev"' in second
    assert client.get("/quarto?page=99999999").status_code == 200
    assert client.get("/quarto?page=x").status_code == 200


def test_get_changes_nothing(site: Server, client: TestClient) -> None:
    with_everything(site)
    mails = site.outbox()
    stops = [
        link
        for m in mails
        for link in re.findall(rf"<({BASE}/unsubscribe/\w+)>", m.raw.decode(errors="replace"))
    ]
    assert stops
    before = snapshot(site)
    for path in [*PAGES, "/quarto/101/record.json", "/player/alice/deadlines.ics"]:
        assert client.get(path).status_code == 200, path
    for path in ["/player/alice/feed.atom", "/quarto/101/feed.atom", "/tournament/cup/feed.atom"]:
        assert client.get(path).status_code == 200, path
    for link in stops[:3]:
        assert client.get(link.removeprefix(BASE)).status_code == 200
    assert snapshot(site) == before


def test_unknown_links_say_so(client: TestClient) -> None:
    for path in ("/unsubscribe/nosuchcode", "/confirm/nosuchtoken"):
        assert client.get(path).status_code == 404
        answer = client.post(path)
        assert answer.status_code == 404 and "mistyped" in answer.text
    for path, says in [
        ("/player/nobody", "No player called &#39;nobody&#39; has a page here."),
        ("/tournament/nothing", "There is no tournament called &#39;nothing&#39; here."),
        ("/quarto/999", "Quarto board 999 not found"),
        ("/nope/101", "No game called &#39;nope&#39; is played here.\nThe games played here:"),
    ]:
        answer = client.get(path)
        assert answer.status_code == 404 and f"<p>{says}" in answer.text, path


def test_rate_is_bounded_per_client(site: Server) -> None:
    tight = dataclasses.replace(site.config, web_burst=3, web_requests_per_second=0.001)
    with client_for(site, tight) as client:
        codes = [client.get("/robots.txt").status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]


def test_a_player_may_hide_his_page(site: Server, client: TestClient) -> None:
    with_everything(site)
    assert client.get("/player/bob").status_code == 200
    assert site.send("bob@players.example", "set bob secret profile hidden") == "done"
    [answer] = site.new_mail()
    assert "Your player page is off the web pages" in answer.body
    for path in ("/player/bob", "/player/bob/feed.atom", "/player/bob/deadlines.ics"):
        assert client.get(path).status_code == 404, path
    assert 'href="/player/bob"' not in client.get("/quarto").text  # the ratings table
    assert "bob" in client.get("/quarto/101").text  # his boards still show, by userid
    assert site.send("bob@players.example", "set bob secret profile shown") == "done"
    assert client.get("/player/bob").status_code == 200


def test_pages_read_in_parallel(site: Server) -> None:
    """More readers at once than the read engine's pool keeps: each gets a working
    connection (SQLite's in-memory default pool closed other threads' ones)."""
    play(site, moves=2)
    with reader_for(site) as reader:

        def read(_n: int) -> str:
            with reader() as ctx:
                return views.board_page(ctx, "quarto", "101").status

        with ThreadPoolExecutor(POOL_SIZE * 3) as pool:
            statuses = list(pool.map(read, range(POOL_SIZE * 12)))
    assert set(statuses) == {"It is alice's turn."}


def test_a_resigned_board_says_its_result_not_whose_turn(site: Server, client: TestClient) -> None:
    """Board 102 was resigned by alice with bob to place a piece: the page's words and
    the picture of its last position say how it ended; an earlier position says who
    was to move in it."""
    with_everything(site)
    page = client.get("/quarto/102").text
    assert '<p class="status">alice resigns. Game won by bob.</p>' in page
    words = page.split('<ul class="words">')[1].split("</ul>")[0]
    assert "to place" not in words and "Pieces on the board, 3" in words
    with session_for(site.engine) as session:
        ctx = Context(session=session, clock=site.clock, config=site.config, sender="")
        board = load_board(ctx, rules_for("quarto"), "102")
        final = draw(
            board.rules,
            board.state,
            seat=None,
            words=WORDS,
            previous=state_at(ctx, board, 3),
            heading="Quarto Board 102 after move 4",
            players=board.userids,
            ended="alice resigns. Game won by bob.",
        )
    assert client.get("/quarto/102/4/picture.png").content == final.png
    assert "alice to place" in client.get("/quarto/102/3").text


def test_the_last_pictures_tag_changes_when_the_board_ends(
    site: Server, client: TestClient
) -> None:
    """A cached picture of a board's last position is stale once the board ends: its
    status line now says the result."""
    play(site)
    path = "/quarto/101/4/picture.png"
    before = client.get(path)
    earlier = client.get("/quarto/101/3/picture.png").headers["etag"]
    assert site.send("alice@players.example", "quarto resign 101 alice secret") == "done"
    after = client.get(path, headers={"if-none-match": before.headers["etag"]})
    assert after.status_code == 200 and after.content != before.content
    assert client.get("/quarto/101/3/picture.png").headers["etag"] == earlier


def test_a_pictures_tag_changes_with_the_words_it_is_drawn_with(
    site: Server, client: TestClient, tmp_path: Path
) -> None:
    """A release that rewords a picture (templates/phrases.toml) makes a cached copy
    stale: the tag covers the words, not only the position."""
    play(site)
    path = "/quarto/101/3/picture.png"
    before = client.get(path)
    templates = tmp_path / "templates"
    shutil.copytree(PACKAGE_TEMPLATES, templates)
    phrases = templates / "phrases.toml"
    text = phrases.read_text(encoding="utf-8")
    assert 'picture_last_move = "Last move: $echo"' in text
    phrases.write_text(text.replace('"Last move: $echo"', '"Zuletzt: $echo"'), encoding="utf-8")
    use_templates(templates)
    try:
        after = client.get(path, headers={"if-none-match": before.headers["etag"]})
    finally:
        use_templates(PACKAGE_TEMPLATES)
    assert after.status_code == 200 and after.content != before.content
    assert client.get(path, headers={"if-none-match": before.headers["etag"]}).status_code == 304


def test_a_page_while_the_database_is_away_is_a_503_and_one_log_line(
    site: Server, client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    # It was a 500, "Internal Server Error", with a traceback in the log for every page
    # asked while the database file was away (a restore under way, say).
    path = sqlite_file(site.config.database_url)
    if path is None:
        pytest.skip("a database file to take away")
    assert client.get("/").status_code == 200
    path.rename(path.with_name("away"))
    try:
        with caplog.at_level("WARNING", logger="pbm.web"):
            away = client.get("/")
    finally:
        path.with_name("away").rename(path)
    assert (away.status_code, away.headers["retry-after"]) == (503, "60")
    assert "The boards cannot be read just now." in away.text
    assert [r.getMessage().split(" ")[0] for r in caplog.records] == ["event=web_store_unavailable"]
    assert client.get("/").status_code == 200
