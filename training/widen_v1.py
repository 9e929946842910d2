"""Carry a network or TD checkpoint of input encoding version 1 over to version 2.

Version 2 appends 16 feature inputs to version 1's 199 (nard/engine/encoding.py);
the carried network gives them zero weights, so it evaluates exactly as before
until training (TD or ``nard fit``) teaches it to use them. Everything else in
the file (a checkpoint's games, random state and configuration) is kept.

    .venv/bin/python training/widen_v1.py OLD.npz NEW.npz
"""

from __future__ import annotations

import sys

import numpy as np

from nard.engine.encoding import ENCODING_VERSION, FEATURE_INPUT, INPUTS
from nard.engine.network import read_npz, write_npz_atomic


def main(source: str, target: str) -> None:
    arrays = dict(read_npz(source))
    if int(arrays["encoding_version"]) != 1 or arrays["w1"].shape[0] != FEATURE_INPUT:
        raise SystemExit(f"{source} is not a version 1 network")
    w1 = np.zeros((INPUTS, arrays["w1"].shape[1]))
    w1[:FEATURE_INPUT] = arrays["w1"]
    arrays.update(
        w1=w1,
        encoding_version=np.array(ENCODING_VERSION, dtype=np.int64),
        inputs=np.array(INPUTS, dtype=np.int64),
    )
    write_npz_atomic(target, arrays)


if __name__ == "__main__":
    main(*sys.argv[1:3])
