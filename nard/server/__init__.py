"""nard's web server: the API, the live tables and the page (``nard serve``).

>>> from nard.server import create_app, Settings

The names are loaded on first use, so that a process that needs one module of
the package (an engine worker runs ``python -m nard.server.thinking``) does not
import the web application with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nard.server.app import create_app
    from nard.server.settings import Settings

__all__ = ["Settings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from nard.server.app import create_app

        return create_app
    if name == "Settings":
        from nard.server.settings import Settings

        return Settings
    raise AttributeError(f"module 'nard.server' has no attribute {name!r}")
