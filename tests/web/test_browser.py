"""Every page kind in a real headless Chromium (issue 25): laid out at 390 px (a phone)
and 1280 px without the page growing sideways, the board picture loaded, and axe-core
(from the npm registry, in .cache/axe) reporting no violation.

The pages are served by uvicorn on loopback, as `pbm serve` serves them. The audit runs
on a copy of each page with axe added (the pages' Content-Security-Policy allows no
script, rightly) and a <base> pointing at the live server, so the style sheet and the
pictures are the served ones. Set PBM_SAVE_SCREENSHOTS=1 to refresh docs/images/web-*.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from pbm.store.readonly import make_read_engine
from pbm.web.app import Reader, Writer, make_app
from tests.mail.conftest import free_ports
from tests.server.conftest import Server
from tests.server.test_mail_axe import AUDIT, axe_script, written  # noqa: F401 (fixture)
from tests.server.test_mail_browser import chromium_or_skip, chromium_page
from tests.web.conftest import with_everything

pytestmark = pytest.mark.slow

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
WIDTHS = (390, 1280)
HEIGHT = 1400

# What the page looks like, written beside axe's findings (tests/server/test_mail_axe.py).
MEASURE = """
<script>
const out = document.createElement("div");
out.id = "measured";
out.textContent = JSON.stringify({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  pictures: [...document.querySelectorAll("main img")].map((i) => i.complete && i.naturalWidth),
});
window.addEventListener("load", () => document.body.appendChild(out));
</script>
"""


@pytest.fixture
def live(site: Server) -> Iterator[str]:
    """The pages served by uvicorn on a free loopback port, in a thread of its own."""
    with_everything(site)
    engine = make_read_engine(site.config.database_url)
    reader = Reader(engine, site.config, site.clock)
    app = make_app(site.config, reader, Writer(site.engine, site.config, site.clock))
    (port,) = free_ports(1)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off")
    )
    thread = threading.Thread(target=asyncio.run, args=(server.serve(),), daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(f"{base}/robots.txt", timeout=1)
            break
        except httpx.HTTPError:
            threading.Event().wait(0.1)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(10)
        engine.dispose()


def page_kinds(site: Server, base: str) -> dict[str, str]:
    """One path of every page kind, the mail links' pages included."""
    raw = b"".join(m.raw for m in site.outbox()).decode(errors="replace")
    stop = re.search(r"<https://pbm\.example\.org(/unsubscribe/\w+)>", raw)
    assert stop
    assert site.send("dora@players.example", "signup dora secret") == "done"
    request = site.new_mail()[-1].body
    confirm = re.search(r"https://pbm\.example\.org(/confirm/\w+)", request)
    assert confirm
    return {
        "front": "/",
        "game": "/quarto",
        "board": "/quarto/101",
        "position": "/quarto/101/2",
        "finished": "/quarto/102",
        "player": "/player/alice",
        "tournament": "/tournament/cup",
        "unsubscribe": stop.group(1),
        "confirm": confirm.group(1),
    }


def audited(
    chromium: str, base: str, path: str, directory: Path, width: int, axe: str
) -> dict[str, Any]:
    html = httpx.get(base + path, timeout=10).text
    copy = html.replace("<head>", f'<head><base href="{base}{path}">', 1)
    copy = copy.replace("</body>", f"<script>{axe}</script>{AUDIT}{MEASURE}</body>")
    page = directory / "audit.html"
    page.write_text(copy, encoding="utf-8")
    run = chromium_page(
        chromium,
        directory,
        (width, HEIGHT),
        "--virtual-time-budget=30000",
        "--dump-dom",
        page.as_uri(),
    )
    return {**written(run.stdout, "audited"), **written(run.stdout, "measured")}


def test_every_page_kind_in_chromium(
    site: Server,
    live: str,
    tmp_path: Path,
    axe_script: str,  # noqa: F811 (the fixture imported above)
) -> None:
    chromium = chromium_or_skip()
    save = os.environ.get("PBM_SAVE_SCREENSHOTS") == "1"
    for kind, path in page_kinds(site, live).items():
        for width in WIDTHS:
            directory = tmp_path / f"{kind}-{width}"
            directory.mkdir()
            result = audited(chromium, live, path, directory, width, axe_script)
            assert result["passes"] > 5, (kind, width, result)  # the audit ran
            assert result["violations"] == [], (kind, width, result["violations"])
            assert result["overflow"] <= 0, (kind, width, result["overflow"])
            if kind in ("board", "position", "finished"):
                assert result["pictures"] and all(result["pictures"]), (kind, result)
            shot = directory / "shot.png"
            chromium_page(chromium, directory, (width, HEIGHT), f"--screenshot={shot}", live + path)
            assert shot.stat().st_size > 5000
            if save and kind in ("front", "board", "player", "game", "tournament", "unsubscribe"):
                DOCS_IMAGES.mkdir(exist_ok=True)
                (DOCS_IMAGES / f"web-{kind}-{width}.png").write_bytes(shot.read_bytes())
