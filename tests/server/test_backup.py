"""Backup and restore of the SQLite database as docs/server.md gives them: SQLite's
online backup taken while the server plays, and a server started on the copy."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fastapi.testclient import TestClient

from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, guest, new_table, simple_command


def test_an_online_backup_restores_the_tables_as_they_were(tmp_path: Path) -> None:
    live, copy = tmp_path / "nard.db", tmp_path / "nard-backup.db"
    app = create_app(make_settings(f"sqlite:///{live}", tmp_path), server_seeds=seeded(6))
    with TestClient(app) as client:
        headers = guest(client)
        cookie = client.cookies["nard_session"]
        table = new_table(client, headers, match_length=5)
        for _ in range(4):
            table = act(client, table["id"], headers, simple_command(table))
        # The backup, as docs/server.md writes it, while the server holds the file.
        source = sqlite3.connect(live)
        source.backup(sqlite3.connect(copy))
        source.close()
        backed_up = client.get(f"/api/tables/{table['id']}").json()
        after = act(client, table["id"], headers, simple_command(table))
        assert after["seq"] > backed_up["seq"]
    restored = create_app(
        make_settings(f"sqlite:///{copy}", tmp_path / "restored"), Storage(f"sqlite:///{copy}")
    )
    with TestClient(restored) as client:
        client.cookies.set("nard_session", cookie)
        assert client.get(f"/api/tables/{table['id']}").json() == backed_up
        # The game goes on from the copy, with the same dice.
        act(client, table["id"], headers, simple_command(backed_up))
