"""Carry networks (a bundle, a single net or a TD checkpoint) of input encoding
version 2 over to version 3.

Version 3 adds two features per side (``back_escapes``, ``containment``) after
version 2's eight (nard/engine/encoding.py): 219 inputs instead of 215. The
carried networks give the new inputs zero weights, so they evaluate exactly as
before until ``nard fit`` (or TD) teaches them to use them. Everything else in
the file is kept.

    .venv/bin/python training/widen_v2.py OLD.npz NEW.npz
"""

from __future__ import annotations

import sys

import numpy as np

from nard.engine.encoding import ENCODING_VERSION, FEATURE_INPUT, FEATURES, INPUTS
from nard.engine.network import read_npz, write_npz_atomic

OLD_FEATURES = 8
OLD_INPUTS = FEATURE_INPUT + 2 * OLD_FEATURES


def widen_rows(w1: np.ndarray) -> np.ndarray:
    """Version 2 first-layer rows laid out as version 3's, zero rows for the new inputs."""
    out = np.zeros((INPUTS, w1.shape[1]), dtype=w1.dtype)
    out[:FEATURE_INPUT] = w1[:FEATURE_INPUT]
    new = len(FEATURES)
    out[FEATURE_INPUT : FEATURE_INPUT + OLD_FEATURES] = w1[
        FEATURE_INPUT : FEATURE_INPUT + OLD_FEATURES
    ]
    out[FEATURE_INPUT + new : FEATURE_INPUT + new + OLD_FEATURES] = w1[
        FEATURE_INPUT + OLD_FEATURES :
    ]
    return out


def main(source: str, target: str) -> None:
    arrays = dict(read_npz(source))
    prefixes = [p for p in ("", "contact.", "race.") if p + "w1" in arrays]
    if not prefixes:
        raise SystemExit(f"{source} holds no network")
    for p in prefixes:
        if int(arrays[p + "encoding_version"]) != 2 or arrays[p + "w1"].shape[0] != OLD_INPUTS:
            raise SystemExit(f"{source}: {p or 'the '}network is not of encoding version 2")
        arrays[p + "w1"] = widen_rows(arrays[p + "w1"])
        arrays[p + "encoding_version"] = np.array(ENCODING_VERSION, dtype=np.int64)
        arrays[p + "inputs"] = np.array(INPUTS, dtype=np.int64)
    write_npz_atomic(target, arrays)


if __name__ == "__main__":
    main(*sys.argv[1:3])
