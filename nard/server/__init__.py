"""nard's web server: the API, the live tables and the page (``nard serve``).

>>> from nard.server import create_app, Settings
"""

from __future__ import annotations

from nard.server.app import create_app
from nard.server.settings import Settings

__all__ = ["Settings", "create_app"]
