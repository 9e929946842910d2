"""Announcements to the other server processes, published on Redis off the event loop.

A process that commits a table's change tells the others on the table's Redis
channel (``table ORIGIN ID SEQ``; those that watch the table read the
database). Publishing is a round trip to Redis; made on the event loop, it
held up every request in flight for that long, and on a busy machine (Redis
waiting for a core) far longer: with two server processes behind Redis about
40% of a serving process's active time was spent waiting on it (py-spy,
``bench/server_load.py --processes 2``).

An :class:`Announcer` takes a message in a microsecond, from any thread or
event loop, and a thread of its own publishes what has queued up, in order,
in one pipelined round trip. A message that cannot be published is logged and
dropped: the other processes find out from the database when they next read
the table, and poll it while their subscription is down (docs/server.md).

>>> sent = []
>>> class Fake:
...     def pipeline(self, transaction):
...         return self
...     def publish(self, channel, message):
...         sent.append((channel, message))
...     def execute(self):
...         pass
...     def close(self):
...         pass
>>> announcer = Announcer(Fake())
>>> announcer.announce("nard:table:a", "table p a 1")
>>> announcer.announce("nard:tables", "session p s")
>>> announcer.close()
>>> sent
[('nard:table:a', 'table p a 1'), ('nard:tables', 'session p s')]
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Protocol

from redis.exceptions import RedisError

__all__ = ["Announcer"]

log = logging.getLogger("nard.server")


class Publisher(Protocol):
    """What an :class:`Announcer` needs of a synchronous Redis client."""

    def pipeline(self, transaction: bool) -> Any: ...

    def close(self) -> None: ...


_STOP = None
"""Queued by :meth:`Announcer.close`: publish what came before, then end."""


class Announcer:
    """Publishes messages through ``client`` from a thread of its own, in the order
    :meth:`announce` was called, many at a time."""

    def __init__(self, client: Publisher) -> None:
        self._client = client
        self._queue: queue.SimpleQueue[tuple[str, str] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="nard-announcer", daemon=True)
        self._thread.start()

    def announce(self, channel: str, message: str) -> None:
        """Queue ``message`` for ``channel``; it is published shortly after, by the
        announcer's thread."""
        self._queue.put((channel, message))

    def close(self, timeout: float = 5.0) -> None:
        """Publish what is queued (waiting at most ``timeout`` seconds), then stop."""
        self._queue.put(_STOP)
        self._thread.join(timeout)
        self._client.close()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while batch[-1] is not _STOP:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            messages = [m for m in batch if m is not None]
            if messages:
                self._publish(messages)
            if batch[-1] is _STOP:
                return

    def _publish(self, messages: list[tuple[str, str]]) -> None:
        try:
            pipe = self._client.pipeline(transaction=False)
            for channel, message in messages:
                pipe.publish(channel, message)
            pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning(
                "could not publish %d message(s) on Redis (%s): the others poll",
                len(messages),
                exc,
            )
