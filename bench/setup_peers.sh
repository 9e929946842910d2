#!/usr/bin/env bash
# Create (or bring up to date) bench/.venv-peers: nard, editable, plus the peers that
# bench/movegen.py times it against. Safe to rerun: pip skips what is already there.
#
#   bash bench/setup_peers.sh && bench/.venv-peers/bin/python bench/movegen.py
#
# PYTHON picks the interpreter for a new venv (default python3; nard needs 3.11+).
set -euo pipefail

bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$bench")"
venv="$bench/.venv-peers"
python="${PYTHON:-python3}"

# A venv whose interpreter has gone (e.g. a removed pyenv version) is rebuilt.
if ! "$venv/bin/python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    rm -rf "$venv"
    "$python" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
        || { echo "setup_peers.sh: $python is older than 3.11; set PYTHON=python3.11" >&2; exit 1; }
    "$python" -m venv "$venv"
fi

# The peers come from nard's "bench" extra (bgsage, gym-backgammon, which pulls gym).
# gym_backgammon.envs imports pyglet without declaring it, hence pyglet here too.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[bench]" pyglet

"$venv/bin/python" - <<'PY'
import contextlib, io, warnings
from importlib.metadata import version
with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import bgsage.board, gym_backgammon.envs.backgammon, nard  # noqa: F401
print("bench/.venv-peers ready:", ", ".join(
    f"{d} {version(d)}" for d in ("nard", "bgsage", "gym-backgammon", "gym", "pyglet")))
PY
