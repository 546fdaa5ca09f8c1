"""Every page kind through the app (issue 25): what it shows, its headers, its bounds."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.server.conftest import Server
from tests.web.conftest import play


def test_board_page_shows_the_board(site: Server, client: TestClient) -> None:
    play(site)
    page = client.get("/quarto/101")
    assert page.status_code == 200, page.text
    html = page.text
    assert "Quarto Board 101" in html
    assert "alice" in html and "bob" in html
    assert "@" not in html.replace("pbm@example.org", "")
    assert "/quarto/101/4/picture.png" in html
    assert "Content-Security-Policy".lower() in {k.lower() for k in page.headers}
