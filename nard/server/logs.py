"""Structured logs: one JSON object per line (or plain text), each with the request id
of the request it belongs to.

>>> import logging
>>> record = logging.LogRecord("nard.server", logging.INFO, __file__, 1, "hello %s", ("you",), None)
>>> line = JsonFormatter().format(record)
>>> import json; sorted(json.loads(line))
['level', 'logger', 'message', 'time']
"""

from __future__ import annotations

import contextvars
import json
import logging
from datetime import UTC, datetime
from typing import Any

__all__ = ["JsonFormatter", "configure_logging", "request_id"]

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
"""The id of the request being served (set by the app's middleware)."""

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy of the message with terminal colours
}


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time, level, logger, message, the request id and
    any ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = request_id.get()
        if rid is not None:
            out["request_id"] = rid
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = request_id.get()
        return f"{text} [{rid}]" if rid else text


def configure_logging(log_format: str = "json", level: str = "info") -> None:
    """Send the ``nard`` loggers (and uvicorn's) to standard error in ``log_format``."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter()
        if log_format == "json"
        else _TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    for name in ("nard", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True  # the app logs each request itself
