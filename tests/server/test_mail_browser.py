"""The HTML part of pbm's mails as a browser shows it (issue 13, point 2).

Each mail's HTML is written to a directory with its related parts as files (the `cid:`
references rewritten to those files, as a mail program resolves them), and headless
Chromium (Debian's `chromium`) takes a screenshot. The board picture must show where
the HTML places it, pixel for pixel close to the PNG mailed, and the `<pre>` must keep
its columns: a small script added to the test copy (never to the mail) measures it.

Chromium is installed with apt-get when missing and the tests run as root (as the
PostgreSQL tests install their server); elsewhere they skip, saying why. Set
PBM_SAVE_SCREENSHOTS=1 to refresh the screenshots kept in docs/images/.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import subprocess
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageStat

from pbm.games import GAMES, AnyGame
from pbm.mail.compose import InlinePicture, compose, with_html
from pbm.pictures.picture import draw
from pbm.services.play.picture_words import picture_words
from tests.server.conftest import Server, legal_texts
from tests.server.test_mail_html import sent_mail
from tests.tools import missing

# The words of the pictures as the templates hold them.
WORDS = picture_words()

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
WINDOW = (800, 1600)
# The body's padding in templates/mail.html: where the first picture starts.
PADDING = 12
# Screenshots kept for the docs: (case id, file name).
KEPT = {"quarto-0": "mail-quarto.png", "quadrature-0": "mail-quadrature.png"}

# Measures the <pre> as laid out: whether the font is monospaced (a line of "i" as wide
# as one of "M"), the width of one column, and the width of the widest line.
MEASURE = """
<script>
const pres = document.querySelectorAll("pre").length;
const pre = document.querySelector("pre") || document.createElement("pre");
const probe = (text) => {
  const span = document.createElement("span");
  span.textContent = text;
  span.style.whiteSpace = "pre";
  pre.appendChild(span);
  const width = span.getBoundingClientRect().width;
  span.remove();
  return width;
};
const lines = pre.textContent.split("\\n");
const longest = Math.max(...lines.map((line) => line.length));
const widest = Math.max(...lines.map((line) => probe(line)));
const result = {
  whiteSpace: getComputedStyle(pre).whiteSpace,
  narrow: probe("i".repeat(40)),
  wide: probe("M".repeat(40)),
  column: probe("0".repeat(100)) / 100,
  longest: longest,
  widest: widest,
  height: pre.getBoundingClientRect().height,
  lineHeight: parseFloat(getComputedStyle(pre).lineHeight),
  lines: lines.length,
  pres: pres,
  pictures: [...document.querySelectorAll("img")].map((img) => img.getBoundingClientRect().top),
};
const out = document.createElement("div");
out.id = "measured";
out.textContent = JSON.stringify(result);
document.body.appendChild(out);
</script>
"""


def _install() -> str | None:
    """Why Chromium cannot run here, or None once it is installed."""
    if shutil.which("chromium"):
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "chromium is not installed and cannot be installed here (not root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"],
            check=True,
            env=env,
            capture_output=True,
        )
    except subprocess.CalledProcessError as exc:
        return f"apt-get could not install chromium: {exc.stderr.decode(errors='replace')[-200:]}"
    return None if shutil.which("chromium") else "apt-get installed no chromium"


@cache
def _chromium_missing() -> str | None:
    return _install()


def chromium_or_skip() -> str:
    """The Chromium to run (installed when missing), or the test is skipped saying why."""
    reason = _chromium_missing()
    if reason is not None:
        missing(reason)
    return "chromium"


@pytest.fixture
def chromium() -> str:
    return chromium_or_skip()


def chromium_page(
    chromium: str, directory: Path, window: tuple[int, int], *args: str
) -> subprocess.CompletedProcess[bytes]:
    """Headless Chromium run on a page in `directory` with a window of `window` pixels."""
    return _run(chromium, directory / "profile", *args, window=window)


def resolved_page(raw: bytes, directory: Path) -> str:
    """The HTML part of `raw` with its pictures written to `directory` and each `cid:`
    reference rewritten to its file, as a mail program resolves them."""
    return _resolved(raw, directory)[0]


def _resolved(raw: bytes, directory: Path) -> tuple[str, list[Image.Image]]:
    msg = message_from_bytes(raw, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    part = msg.get_body(("html",))
    assert part is not None
    html = str(part.get_content())
    pictures: list[Image.Image] = []
    for i, related in enumerate(p for p in msg.walk() if p.get_content_type() == "image/png"):
        cid = str(related["Content-ID"]).strip().strip("<>")
        name = f"picture{i}.png"
        png = related.get_content()
        (directory / name).write_bytes(png)
        assert f"cid:{cid}" in html
        html = html.replace(f"cid:{cid}", name)
        pictures.append(Image.open(io.BytesIO(png)).convert("RGB"))
    assert "cid:" not in html  # every reference resolved
    return html, pictures


def _run(
    chromium: str, profile: Path, *args: str, window: tuple[int, int] = WINDOW
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # the tests may run as root, where the sandbox refuses to start
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            f"--user-data-dir={profile}",
            f"--window-size={window[0]},{window[1]}",
            *args,
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )


class Shown:
    """A mail's HTML part laid out by Chromium: the screenshot and the <pre> measured."""

    def __init__(self, chromium: str, raw: bytes, directory: Path) -> None:
        html, self.pictures = _resolved(raw, directory)
        page = directory / "mail.html"
        page.write_text(html, encoding="utf-8")
        shot = directory / "shot.png"
        _run(chromium, directory / "profile", f"--screenshot={shot}", page.as_uri())
        self.screenshot = Image.open(shot).convert("RGB")
        measured = directory / "measured.html"
        measured.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
        dom = _run(chromium, directory / "profile", "--dump-dom", measured.as_uri()).stdout
        found = re.search(rb'<div id="measured">(.*?)</div>', dom)
        assert found, dom[-500:]
        self.pre: dict[str, Any] = json.loads(found.group(1).replace(b"&quot;", b'"'))

    def check_pictures(self) -> None:
        """Each picture is shown at its place, as mailed (the cid: resolved)."""
        assert len(self.pre["pictures"]) == len(self.pictures)
        for picture, measured_top in zip(self.pictures, self.pre["pictures"], strict=True):
            top = round(measured_top)
            box = (PADDING, top, PADDING + picture.width, top + picture.height)
            shown = self.screenshot.crop(box)
            assert shown.getextrema() != ((255, 255), (255, 255), (255, 255)), "blank"
            assert len(shown.getcolors(1 << 16) or range(1 << 16)) > 8, "blank"
            difference = ImageStat.Stat(ImageChops.difference(shown, picture)).mean
            assert max(difference) < 8, difference

    def check_columns(self) -> None:
        """The <pre> is monospaced and wraps nothing: its widest line is as wide as
        its longest line's number of columns."""
        pre = self.pre
        assert pre["whiteSpace"] == "pre"
        assert abs(pre["narrow"] - pre["wide"]) < 0.5, pre
        assert abs(pre["widest"] - pre["longest"] * pre["column"]) < 1.0, pre
        # One row per line: no line broke in two.
        assert pre["height"] <= pre["lines"] * pre["lineHeight"] + 2, pre


def _position(game: AnyGame, options: dict[str, Any]) -> tuple[Any, Any]:
    """A middle position of a seeded random game and the one before it."""
    rng = random.Random(13)
    states = [game.new_state(**options)]
    while game.to_move(states[-1]) is not None and len(states) < 400:
        states.append(game.apply(states[-1], rng.choice(game.legal_moves(states[-1]))))
    middle = max(1, len(states) // 2)
    return states[middle], states[middle - 1]


CASES = [
    pytest.param(game, dict(options), id=f"{name}-{i}")
    for name, game in GAMES.items()
    for i, options in enumerate(game.example_options)
]


def _keep(case: str, shown: Shown) -> None:
    name = KEPT.get(case)
    if name and os.environ.get("PBM_SAVE_SCREENSHOTS") == "1":
        save_screenshot(shown.screenshot, DOCS_IMAGES / name)


def save_screenshot(screenshot: Image.Image, path: Path) -> None:
    """The screenshot down to what the page shows (the white below it cut off)."""
    white = Image.new("RGB", screenshot.size, (255, 255, 255))
    box = ImageChops.difference(screenshot, white).getbbox()
    bottom = min(screenshot.height, (box[3] if box else screenshot.height) + PADDING)
    screenshot.crop((0, 0, screenshot.width, bottom)).save(path, optimize=True)


@pytest.mark.parametrize(("game", "options"), CASES)
def test_board_mail_in_a_browser(
    chromium: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    game: AnyGame,
    options: dict[str, Any],
) -> None:
    state, previous = _position(game, options)
    seat = game.player_seats(state)[0]
    drawn = draw(
        game, state, seat=seat, words=WORDS, previous=previous, heading=f"{game.title} Board 101"
    )
    picture = InlinePicture(drawn.png, drawn.width, drawn.height, drawn.alt, tuple(drawn.words))
    raw = with_html(
        compose(
            sender="PBeM Server <pbm@example.org>",
            to=["alice@players.example"],
            subject=f"{game.title} Board 101 alice",
            body=f"Summary of {game.title} Board 101\n\n{game.render(state, seat)}",
            message_id="<pbm.k3q9z7m2p4x8.1@example.org>",
            date=datetime(2026, 11, 22, tzinfo=UTC),
        ),
        [picture],
    )
    shown = Shown(chromium, raw, tmp_path)
    shown.check_pictures()
    shown.check_columns()
    _keep(request.node.callspec.id, shown)


def test_a_board_mail_as_the_server_sends_it(chromium: str, server: Server, tmp_path: Path) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quadrature challenge alice bob")
    sent_mail(server)
    move = legal_texts(server, "quadrature")[0]
    assert server.send(alice, f"quadrature move 101 alice secret {move}") == "done"
    for i, sent in enumerate(sent_mail(server)):
        directory = tmp_path / str(i)
        directory.mkdir()
        shown = Shown(chromium, sent.raw, directory)
        assert len(shown.pictures) == 1
        shown.check_pictures()
        shown.check_columns()


def test_error_and_help_mails_in_a_browser(chromium: str, server: Server, tmp_path: Path) -> None:
    alice = server.signup("alice")
    server.send(alice, "quarto move 999 alice secret b2 <SDQF>")
    (error,) = sent_mail(server)
    server.send(alice, "help quarto")
    (help_mail,) = sent_mail(server)
    for i, sent in enumerate((error, help_mail)):
        directory = tmp_path / str(i)
        directory.mkdir()
        shown = Shown(chromium, sent.raw, directory)
        assert not shown.pictures
        if sent is error:
            assert shown.pre["pres"] == 0  # a refusal is prose: it wraps on any screen
        else:
            assert shown.pre["pres"] >= 1
            shown.check_columns()  # the rules' diagrams keep their columns
