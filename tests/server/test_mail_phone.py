"""Mail that reads on a phone (issue 26, point 3): every kind of mail's HTML part laid out
by headless Chromium 390 pixels wide. No line of prose is cut (a paragraph, a list item
or a heading wider than its box), and nothing but a board, a table or the move list
(`<pre>`, which scrolls sideways alone) is wider than the screen."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.server.conftest import Server, legal_texts
from tests.server.test_mail_browser import (
    DOCS_IMAGES,
    chromium_or_skip,
    chromium_page,
    resolved_page,
    save_screenshot,
)
from tests.server.test_mail_html import sent_mail

PHONE = (390, 2400)
# Screenshots kept for docs/accessibility.md with PBM_SAVE_SCREENSHOTS=1: (kind, file).
KEPT = {"board-quarto": "phone-quarto.png", "help-tutorial": "phone-tutorial.png"}
# Headless Chromium lays a page out at least 500 pixels wide, whatever the window: the
# test copy holds the page to a phone's 390 (no rule of the mail depends on the width
# of the window, only of its box).
NARROW = "<style>html { width: 390px; }</style>"

# Measures every prose box and the page as laid out (added to the test copy only).
MEASURE = """
<script>
const cut = [];
for (const el of document.querySelectorAll("p, li, h1, figcaption")) {
  if (el.closest("pre")) continue;
  if (el.scrollWidth > el.clientWidth + 1) cut.push(el.textContent.slice(0, 80));
}
const wide = [];
for (const el of document.body.querySelectorAll("*")) {
  if (el.closest("pre") && el.tagName !== "PRE") continue;
  if (el.getBoundingClientRect().right > 390 + 1) wide.push(el.tagName);
}
const out = document.createElement("div");
out.id = "measured";
out.textContent = JSON.stringify({
  cut: cut,
  wide: wide,
  page: document.body.scrollWidth,
  view: document.documentElement.getBoundingClientRect().width,
  paragraphs: document.querySelectorAll("div.mail p").length,
  pres: document.querySelectorAll("div.mail pre").length,
});
document.body.appendChild(out);
</script>
"""


def measured(chromium: str, raw: bytes, directory: Path) -> dict[str, Any]:
    html = resolved_page(raw, directory)
    page = directory / "phone.html"
    html = html.replace("</head>", NARROW + "</head>").replace("</body>", MEASURE + "</body>")
    page.write_text(html, encoding="utf-8")
    dom = chromium_page(chromium, directory, PHONE, "--dump-dom", page.as_uri()).stdout
    found = re.search(rb'<div id="measured">(.*?)</div>', dom)
    assert found, dom[-500:]
    result: dict[str, Any] = json.loads(found.group(1).replace(b"&quot;", b'"'))
    return result


def keep_screenshot(chromium: str, raw: bytes, directory: Path, name: str) -> None:
    """The mail as a phone shows it, 390 pixels wide, for the docs."""
    html = resolved_page(raw, directory).replace("</head>", NARROW + "</head>")
    page = directory / "shot.html"
    page.write_text(html, encoding="utf-8")
    shot = directory / "shot.png"
    chromium_page(chromium, directory, (500, 1600), f"--screenshot={shot}", page.as_uri())
    image = Image.open(shot).convert("RGB")
    save_screenshot(image.crop((0, 0, PHONE[0], image.height)), DOCS_IMAGES / name)


def every_kind_of_mail(server: Server) -> dict[str, bytes]:
    """One mail of every kind the server writes, as the sender sends it."""
    mails: dict[str, bytes] = {}
    alice = server.signup("alice")
    bob = server.signup("bob")

    def one(kind: str, sender: str, subject: str) -> None:
        server.clock.advance(timedelta(hours=2))  # a fresh hour's reply budget
        server.send(sender, subject)
        sent = [m for m in sent_mail(server) if sender in m.to]
        mails[kind] = sent[-1].raw

    one("signup", "carol@players.example", "signup carol secret")
    one("help", alice, "help")
    one("help-commands", alice, "help commands")
    one("help-tutorial", alice, "help tutorial")
    one("help-game", alice, "help quadrature")
    one("refusal", alice, "quarto move 999 alice secret b2")
    one("unknown", alice, "frobnicate")
    one("settings", alice, "set alice secret format")
    for game in ("quarto", "quadrature", "quadrupel", "quad", "quarod"):
        server.clock.advance(timedelta(hours=2))
        server.send(alice, f"{game} challenge alice bob")
        sent_mail(server)
        move = legal_texts(server, game)[0]
        server.send(alice, f"{game} move 101 alice secret {move}")
        (to_bob,) = [m for m in sent_mail(server) if m.to == [bob]]
        mails[f"board-{game}"] = to_bob.raw
    one("show", alice, "quarto show 101")
    one("games", alice, "quarto games")
    one("ask", alice, "quarto ask 101 where")
    return mails


def test_every_kind_of_mail_reads_on_a_phone(chromium: str, server: Server, tmp_path: Path) -> None:
    mails = every_kind_of_mail(server)
    assert len(mails) >= 15
    for kind, raw in mails.items():
        directory = tmp_path / kind
        directory.mkdir()
        found = measured(chromium, raw, directory)
        assert found["view"] == PHONE[0], (kind, found)
        assert found["cut"] == [], (kind, found)
        assert found["wide"] == [], (kind, found)
        assert found["page"] <= PHONE[0], (kind, found)
        if kind != "games":  # a table alone
            assert found["paragraphs"] >= 1, (kind, found)  # prose is prose
        if kind.startswith("board-"):
            assert found["pres"] >= 1, (kind, found)  # the board keeps its columns
        if kind in KEPT and os.environ.get("PBM_SAVE_SCREENSHOTS") == "1":
            keep_screenshot(chromium, raw, directory, KEPT[kind])


@pytest.fixture
def chromium() -> str:
    return chromium_or_skip()
