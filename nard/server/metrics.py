"""The server's Prometheus metrics (``GET /metrics``), one registry per app.

=====================================  ==========================================
metric                                 what
=====================================  ==========================================
``nard_http_requests_total``           requests by route template, method, status
``nard_http_request_seconds``          time per request, by route template
``nard_actions_total``                 table actions taken from players
``nard_computer_think_seconds``        time the computer took per decision
``nard_computer_failures_total``       decisions the computer failed to make
``nard_engine_queue``                  decisions waiting for or in the engine's threads
``nard_websockets``                    open table WebSockets
``nard_dropped_sockets_total``         WebSockets dropped for not reading
``nard_tables_cached``                 tables held in memory
``nard_tables_created_total``          tables created
``nard_tables_loaded_total``           tables rebuilt from the database
``nard_rated_matches_total``           matches rated (docs/ratings.md)
``nard_table_conflicts_total``         commits that lost a race (reloaded, checked again)
``nard_redis_up``                      1 while the Redis subscription is up
``nard_redis_reconnects_total``        Redis subscriptions lost
``nard_redis_messages_total``          announcements heard on Redis (watched tables, sign-outs)
``nard_redis_published_total``         announcements published on Redis (followed tables, ...)
``nard_rate_limited_total``            requests refused by a limit, by policy
``nard_build_info``                    1, labelled with nard's version and schema revision
=====================================  ==========================================
"""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    generate_latest,
)

from nard.server.storage import schema_revisions

if TYPE_CHECKING:
    from nard.server.service import TableService

__all__ = ["VERSION", "Metrics"]


def _version() -> str:
    try:
        return importlib.metadata.version("nard")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown"


VERSION = _version()
"""nard's version as installed (the server says it in ``/healthz``, ``/readyz`` and
``nard_build_info``)."""

_LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The metrics of one server process."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        Info("nard_build", "the code this process runs", registry=r).info(
            {"version": VERSION, "schema": schema_revisions()[0]}
        )
        self.requests = Counter(
            "nard_http_requests", "HTTP requests", ["route", "method", "status"], registry=r
        )
        self.request_seconds = Histogram(
            "nard_http_request_seconds", "time per request", ["route"], buckets=_LATENCY, registry=r
        )
        self.actions = Counter("nard_actions", "table actions taken from players", registry=r)
        self.think_seconds = Histogram(
            "nard_computer_think_seconds",
            "time the computer took per decision",
            buckets=_LATENCY,
            registry=r,
        )
        self.computer_failures = Counter(
            "nard_computer_failures", "decisions the computer failed to make", registry=r
        )
        self.dropped_sockets = Counter(
            "nard_dropped_sockets", "WebSockets dropped for not reading", registry=r
        )
        self.tables_created = Counter("nard_tables_created", "tables created", registry=r)
        self.tables_loaded = Counter(
            "nard_tables_loaded", "tables rebuilt from the database", registry=r
        )
        self.rated_matches = Counter(
            "nard_rated_matches", "matches rated (docs/ratings.md)", registry=r
        )
        self.conflicts = Counter(
            "nard_table_conflicts", "commits that lost a race to another writer", registry=r
        )
        self.redis_reconnects = Counter(
            "nard_redis_reconnects", "Redis subscriptions lost", registry=r
        )
        self.redis_messages = Counter(
            "nard_redis_messages", "announcements heard on Redis", registry=r
        )
        self.redis_published = Counter(
            "nard_redis_published", "announcements published on Redis", registry=r
        )
        self.rate_limited = Counter(
            "nard_rate_limited", "requests refused by a limit", ["policy"], registry=r
        )
        self.engine_queue = Gauge(
            "nard_engine_queue", "decisions waiting for or in the engine's threads", registry=r
        )
        self.websockets = Gauge("nard_websockets", "open table WebSockets", registry=r)
        self.tables_cached = Gauge("nard_tables_cached", "tables held in memory", registry=r)
        self.redis_up = Gauge("nard_redis_up", "1 while the Redis subscription is up", registry=r)

    def bind(self, service: TableService) -> None:
        """Read the gauges off ``service`` when scraped."""
        self.engine_queue.set_function(lambda: service.queued_decisions)
        self.websockets.set_function(lambda: service.sockets)
        self.tables_cached.set_function(lambda: service.cached_tables)
        self.redis_up.set_function(lambda: 1.0 if service.redis_ok else 0.0)

    def exposition(self) -> bytes:
        """The metrics in Prometheus's text format."""
        return generate_latest(self.registry)
