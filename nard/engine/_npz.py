"""Reading ``.npz`` data files with errors that say what is wrong and how to restore it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.core.errors import NardError

__all__ = ["read_arrays"]


def read_arrays(
    path: str | Path, error: type[NardError], what: str, restore: str
) -> dict[str, npt.NDArray[Any]]:
    """Every array of the ``.npz`` file at ``path``.

    A missing or unreadable file raises ``error`` naming ``what`` it is, the
    file, and ``restore`` (how to get it back). Never a silent fallback.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise error(f"{what} {str(path)!r} is missing; {restore}") from None
    except Exception as exc:  # zip, zlib, header and I/O errors alike
        raise error(
            f"{what} {str(path)!r} is corrupt ({type(exc).__name__}: {exc}); {restore}"
        ) from exc
