"""`/metrics` in Prometheus' text format and `/healthz`, on their own listener
(`[web] metrics_listen`, loopback by default). Everything is read from the database at
each scrape, so one daemon's answer covers the cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from pbm.services.context import Context
from pbm.services.play import bots
from pbm.store import metrics_queries as q
from pbm.store.claims import LEASE

# Processing time buckets, seconds.
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

Reader = Callable[[], AbstractContextManager[Context]]


class StoreCollector(Collector):
    """The figures, read in one read-only transaction per scrape."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    def collect(self) -> Iterator[Any]:
        with self.reader() as ctx:
            session = ctx.session
            by_status = q.inbound_by_status(session)
            by_via = q.inbound_by_via(session)
            outbox = q.outbox_by_status_reason(session)
            oldest = q.oldest_queued(session)
            latencies = q.processing_seconds(session)
            bounces = q.bounces_by_kind(session)
            alive = q.daemons_alive(session, ctx.now(), LEASE)
            bot_turns = len(bots.due(ctx))
            now = ctx.now()
        received = CounterMetricFamily(
            "pbm_messages_received", "Messages taken in, by intake.", labels=["via"]
        )
        for via, n in sorted(by_via.items()):
            received.add_metric([via], n)
        yield received
        statuses = GaugeMetricFamily(
            "pbm_messages",
            "Stored messages by status (new, done, ignored, failed).",
            labels=["status"],
        )
        for status, n in sorted(by_status.items()):
            statuses.add_metric([status], n)
        yield statuses
        mails = GaugeMetricFamily(
            "pbm_outbox_mails", "Outgoing mails by status and reason.", labels=["status", "reason"]
        )
        for (status, reason), n in sorted(outbox.items()):
            mails.add_metric([status, reason], n)
        yield mails
        sent = CounterMetricFamily("pbm_mails_sent", "Mails sent, by reason.", labels=["reason"])
        for (status, reason), n in sorted(outbox.items()):
            if status == "sent":
                sent.add_metric([reason], n)
        yield sent
        depth = sum(n for (status, _r), n in outbox.items() if status == "queued")
        yield GaugeMetricFamily("pbm_outbox_depth", "Mails waiting to be sent.", value=depth)
        age = 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())
        yield GaugeMetricFamily(
            "pbm_outbox_oldest_seconds", "Age of the oldest mail waiting.", value=age
        )
        counts = [sum(1 for s in latencies if s <= bound) for bound in BUCKETS]
        yield HistogramMetricFamily(
            "pbm_processing_seconds",
            "From a message's arrival to its answers queued (latest messages).",
            buckets=[
                *((str(b), c) for b, c in zip(BUCKETS, counts, strict=True)),
                ("+Inf", len(latencies)),
            ],
            sum_value=sum(latencies),
        )
        kinds = CounterMetricFamily(
            "pbm_bounces", "Bounces and complaints received, by kind.", labels=["kind"]
        )
        for kind, n in sorted(bounces.items()):
            kinds.add_metric([kind], n)
        yield kinds
        yield GaugeMetricFamily(
            "pbm_bot_turns_due", "Boards where a bot is to move.", value=bot_turns
        )
        yield GaugeMetricFamily(
            "pbm_daemons_alive", "Daemons with a heartbeat inside the lease.", value=alive
        )


def metrics_app(reader: Reader) -> Starlette:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(reader))

    def metrics(_request: Request) -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    def healthz(_request: Request) -> Response:
        try:
            with reader() as ctx:
                q.daemons_alive(ctx.session, ctx.now(), LEASE)
        except Exception as exc:  # the store is what health means here
            return PlainTextResponse(f"store unavailable: {type(exc).__name__}\n", status_code=503)
        return PlainTextResponse("ok\n")

    return Starlette(routes=[Route("/metrics", metrics), Route("/healthz", healthz)])
