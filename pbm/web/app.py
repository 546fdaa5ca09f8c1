"""The web app (Starlette): read-only pages from a read-only engine, and the two
POSTs a mailed secret allows (one-click unsubscribe, address confirmation) through
`Writer`, the transaction path of the CLI and the daemon. Handlers are plain functions,
which Starlette runs in its thread pool, each with its own session: any process serves
any page."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import jinja2
from sqlalchemy.engine import Engine
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbm.clock import Clock
from pbm.config import Config
from pbm.errors import NotFoundError, PbmError
from pbm.logfmt import kv
from pbm.mail import web_links
from pbm.pictures.picture import draw
from pbm.services.context import Context
from pbm.services.mailing import one_click
from pbm.services.play import records, records_json
from pbm.services.play.board_text import ended_line
from pbm.services.play.boards import state_at
from pbm.services.play.picture_words import picture_words
from pbm.store.engine import session_for
from pbm.store.failures import classify, describe_failure
from pbm.texts import phrase
from pbm.web import feeds, views
from pbm.web.chart import rating_chart
from pbm.web.guard import Buckets, Guard
from pbm.work import run_work

T = TypeVar("T")
log = logging.getLogger("pbm.web")
RETRY_AFTER_SECONDS = 60  # a 503 while the store is away: the daemon retries as often
MAX_PAGE = 10_000  # page numbers past this are no list's
ROBOTS_PUBLIC = "User-agent: *\nDisallow: /unsubscribe/\nDisallow: /confirm/\n"
ROBOTS_PRIVATE = "User-agent: *\nDisallow: /\n"
ATOM = "application/atom+xml; charset=utf-8"
ICS = "text/calendar; charset=utf-8"


class Writer:
    """A POST's work as one unit of work (pbm.work): its mails queued, one commit;
    `wake` then wakes the daemon's sender (on SQLite the pages' process shares no lock
    with the daemon: its transactions wait for the database's own, busy_timeout)."""

    def __init__(
        self,
        engine: Engine,
        config: Config,
        clock: Clock,
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.engine, self.config, self.clock = engine, config, clock
        self.wake = wake

    def __call__(self, work: Callable[[Context], T]) -> T:
        result = run_work(self.engine, work, clock=self.clock, config=self.config)
        if self.wake is not None:
            self.wake()
        return result


class Reader:
    """A read-only session per request, never committed."""

    def __init__(self, engine: Engine, config: Config, clock: Clock) -> None:
        self.engine, self.config, self.clock = engine, config, clock

    @contextmanager
    def __call__(self) -> Iterator[Context]:
        with session_for(self.engine) as session:
            try:
                yield Context(session=session, clock=self.clock, config=self.config, sender="")
            finally:
                session.rollback()


def etag(text: str) -> str:
    """A weak entity tag: the pages are equal in meaning, not in every byte's encoding."""
    return f'W/"{text}"'


def held(request: Request, tag: str) -> bool:
    """Whether the client's copy is the one `tag` names (If-None-Match, weakly compared)."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    wanted = tag.removeprefix("W/")
    return any(
        t.strip() == "*" or t.strip().removeprefix("W/") == wanted for t in header.split(",")
    )


def not_modified(tag: str, headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=304, headers={"etag": tag, **(headers or {})})


def etagged(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """`handler` answering a GET with an ETag of what it made (a digest of the body), and
    304 without the body when the client holds that version already."""

    def answer(request: Request) -> Response:
        response = handler(request)
        if request.method != "GET" or response.status_code != 200 or "etag" in response.headers:
            return response
        tag = etag(hashlib.blake2b(response.body, digest_size=12).hexdigest())
        if held(request, tag):
            return not_modified(tag, _caching(response))
        response.headers["etag"] = tag
        return response

    return answer


def _caching(response: Response) -> dict[str, str]:
    found = response.headers.get("cache-control")
    return {"cache-control": found} if found else {}


def _page(request: Request) -> int:
    try:
        return min(max(int(request.query_params.get("page", "1")), 1), MAX_PAGE)
    except ValueError:
        return 1


def _after(label: str, upto: object) -> str:
    return phrase("web_after_move" if upto else "web_at_start", label=label, number=upto)


class StoreTrouble:
    """ASGI middleware inside the pages: a request the store could not answer (the
    database missing, locked, unreachable: a temporary failure, pbm.store.failures)
    gets a 503 page with Retry-After and one log line, where it got a 500 and a
    traceback in the log for every page asked while the database was away."""

    def __init__(self, app: ASGIApp, unavailable: Callable[[], Response]) -> None:
        self.app, self.unavailable = app, unavailable

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started or scope["type"] != "http" or not classify(exc).temporary:
                raise
            log.warning(
                kv("web_store_unavailable", path=scope.get("path"), error=describe_failure(exc))
            )
            await self.unavailable()(scope, receive, send)


def make_app(config: Config, reader: Reader, writer: Writer) -> Guard:
    """The pages as one ASGI app, behind the headers and the rate bound."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(config.templates_dir / "web"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    css = (config.templates_dir / "web" / "web.css").read_bytes()

    def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
        text = env.get_template(name).render(server=config.server_name, **values)
        return HTMLResponse(text, status_code=status)

    def not_found(what: str) -> HTMLResponse:
        return page("missing.html", 404, title=phrase("web_not_found"), what=what)

    def reading(make: Callable[[Context], Response]) -> Response:
        try:
            with reader() as ctx:
                return make(ctx)
        except NotFoundError as exc:
            return not_found(str(exc))

    def feed(
        produce: Callable[..., bytes],
        media: str,
        version: Callable[[Context, list[str]], str] | None = None,
    ) -> Callable[[Request], Response]:
        """A feed's handler: `produce(ctx, base_url, *the path's parameters)`; with
        `version`, the feed's ETag is known before the feed is made."""

        def handler(request: Request) -> Response:
            params = list(request.path_params.values())

            def make(ctx: Context) -> Response:
                tag = None if version is None else version(ctx, params)
                if tag is not None and held(request, tag):
                    return not_modified(tag)
                body = produce(ctx, config.web_url, *params)
                return Response(body, media_type=media, headers={"etag": tag} if tag else None)

            return reading(make)

        return handler

    def board_feed_version(ctx: Context, params: list[str]) -> str:
        """The board feed's tag: it changes only with the board (views.board_version)."""
        game, name = params
        found = views.find_board(ctx, game, name)
        return etag(views.board_version(found, config.web_url, config.server_name))

    def front(_request: Request) -> Response:
        def make(ctx: Context) -> Response:
            data = views.front_page(ctx)
            return page("front.html", title=config.server_name, front=data)

        return reading(make)

    def robots(_request: Request) -> Response:
        return PlainTextResponse(ROBOTS_PUBLIC if config.web_public else ROBOTS_PRIVATE)

    def stylesheet(_request: Request) -> Response:
        return Response(
            css, media_type="text/css", headers={"cache-control": "public, max-age=3600"}
        )

    def board(request: Request) -> Response:
        game, name = request.path_params["game"], request.path_params["board"]
        upto = request.path_params.get("move")

        def make(ctx: Context) -> Response:
            data = views.board_page(ctx, game, name, upto)
            url = web_links.board_url("", data.game, data.board)
            return page(
                "board.html",
                title=data.label if upto is None else _after(data.label, upto),
                b=data,
                url=url,
                picture=f"{url}/{data.upto}/picture.png",
            )

        return reading(make)

    def picture(request: Request) -> Response:
        game, name = request.path_params["game"], request.path_params["board"]
        upto = int(request.path_params["move"])

        def make(ctx: Context) -> Response:
            found = views.find_board(ctx, game, name)
            if not 0 <= upto <= found.row.move_count:
                raise NotFoundError(phrase("web_board_no_move", label=found.label, number=upto))
            # the position after `upto` moves never changes: only its players' names can,
            # and the words it is drawn with (templates/phrases.toml, a new release)
            words = picture_words()
            heading = _after(found.label, upto) if upto else found.label
            tag = etag(views.picture_version(found, upto, repr((words, heading))))
            if held(request, tag):
                return not_modified(tag, {"cache-control": "max-age=300"})
            state = state_at(ctx, found, upto)
            previous = state_at(ctx, found, upto - 1) if upto else None
            drawn = draw(
                found.rules,
                state,
                seat=None,
                words=words,
                previous=previous,
                heading=heading,
                players=found.userids,
                ended=ended_line(found, upto),
            )
            return Response(
                drawn.png,
                media_type="image/png",
                headers={"cache-control": "max-age=300", "etag": tag},
            )

        return reading(make)

    def record(request: Request) -> Response:
        game, name = request.path_params["game"], request.path_params["board"]
        as_json = request.url.path.endswith(".json")

        def make(ctx: Context) -> Response:
            found = views.record_board(ctx, game, name)
            if found is None:
                return page(
                    "missing.html",
                    403,
                    title=phrase("web_record_hidden_title"),
                    what=phrase("web_record_hidden"),
                )
            if as_json:
                text = json.dumps(records_json.to_json(ctx, found), indent=2) + "\n"
                return Response(text, media_type="application/json")
            return PlainTextResponse(records.export(ctx, found))

        return reading(make)

    def player(request: Request) -> Response:
        userid = request.path_params["userid"]
        number = _page(request)

        def make(ctx: Context) -> Response:
            data = views.player_page(ctx, userid, number)
            charts = [
                (r, rating_chart(phrase("web_rating", game=r.title), r.history))
                for r in data.ratings
            ]
            return page(
                "player.html",
                title=phrase("web_player", userid=data.userid),
                p=data,
                charts=charts,
                url=web_links.player_url("", data.userid),
            )

        return reading(make)

    def game_type(request: Request) -> Response:
        game = request.path_params["game"]
        number = _page(request)

        def make(ctx: Context) -> Response:
            data = views.game_page(ctx, game, number)
            return page("game.html", title=data.title, g=data)

        return reading(make)

    def tournament(request: Request) -> Response:
        name = request.path_params["name"]

        def make(ctx: Context) -> Response:
            data = views.tournament_page(ctx, name)
            return page(
                "tournament.html",
                title=phrase("web_tournament", name=data.name),
                t=data,
                url=web_links.tournament_url("", data.name),
            )

        return reading(make)

    def unsubscribe(request: Request) -> Response:
        code = request.path_params["code"]
        if request.method == "POST":
            found = writer(lambda ctx: one_click.unsubscribe(ctx, code))
            if found is None:
                return not_found(phrase("web_no_stream"))
            return page("stopped.html", title=phrase("web_stopped"), link=found)
        with reader() as ctx:
            link = one_click.stream_link(ctx, code)
        if link is None:
            return not_found(phrase("web_no_stream"))
        return page("unsubscribe.html", title=phrase("web_unsubscribe"), link=link, code=code)

    def confirm(request: Request) -> Response:
        token = request.path_params["token"]
        missing = phrase("web_no_confirmation")
        if request.method == "POST":
            try:
                found = writer(lambda ctx: one_click.confirm(ctx, token))
            except PbmError as exc:
                return page("missing.html", 409, title=phrase("web_not_confirmed"), what=str(exc))
            if found is None:
                return not_found(missing)
            return page("confirmed.html", title=phrase("web_confirmed"), link=found)
        with reader() as ctx:
            address = one_click.address_link(ctx, token)
        if address is None:
            return not_found(missing)
        return page("confirm.html", title=phrase("web_confirm"), link=address, token=token)

    # Every page and feed answers a GET with an ETag, and 304 to a client whose copy is
    # current; the pictures and the board feed know theirs before they are made.
    routes = [
        Route("/", etagged(front)),
        Route("/robots.txt", robots),
        Route("/static/web.css", etagged(stylesheet)),
        Route("/unsubscribe/{code}", unsubscribe, methods=["GET", "POST"]),
        Route("/confirm/{token}", confirm, methods=["GET", "POST"]),
        Route("/player/{userid}", etagged(player)),
        Route("/player/{userid}/feed.atom", etagged(feed(feeds.player_feed, ATOM))),
        Route("/player/{userid}/deadlines.ics", etagged(feed(feeds.deadline_calendar, ICS))),
        Route("/tournament/{name}", etagged(tournament)),
        Route("/tournament/{name}/feed.atom", etagged(feed(feeds.tournament_feed, ATOM))),
        Route("/{game}", etagged(game_type)),
        Route("/{game}/{board}", etagged(board)),
        Route("/{game}/{board}/feed.atom", feed(feeds.board_feed, ATOM, board_feed_version)),
        Route("/{game}/{board}/record.txt", etagged(record)),
        Route("/{game}/{board}/record.json", etagged(record)),
        Route("/{game}/{board}/{move:int}", etagged(board)),
        Route("/{game}/{board}/{move:int}/picture.png", picture),
    ]

    def unavailable() -> Response:
        response = page(
            "missing.html", 503, title=phrase("web_unavailable"), what=phrase("web_try_later")
        )
        response.headers["retry-after"] = str(RETRY_AFTER_SECONDS)
        return response

    app = Starlette(routes=routes, middleware=[Middleware(StoreTrouble, unavailable=unavailable)])
    return Guard(app, Buckets(config.web_burst, config.web_requests_per_second))
