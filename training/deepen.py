"""Stack a second hidden layer on a bundle's one-layer contact network, keeping
(nearly) the function it computes, so that a deeper net's fit starts from the
shipped one's knowledge instead of from random weights (issue 31).

The new layer has UNITS sigmoid units. Its first five carry the old output
logits, scaled down by SCALE into the sigmoid's near-linear range
(``u_k = sigmoid(z_k / SCALE)``); the output layer reads them back
(``z_k ~ 4 * SCALE * (u_k - 1/2)``, exact at ``z_k = 0`` and within 8% of ``z_k``
out to ``|z_k| = SCALE``, where the outputs are near 0 or 1 anyway); the other
units start small and random and with zero weight into the outputs. The race
and pruning networks are kept as they are.

    .venv/bin/python training/deepen.py OLD.npz NEW.npz [UNITS] [SEED]
"""

from __future__ import annotations

import sys

import numpy as np

from nard.engine.network import Network, Networks

SCALE = 8.0


def deepen(net: Network, units: int, seed: int = 0) -> Network:
    """``net`` (one hidden layer) with a hidden layer of ``units`` stacked on it."""
    if net.depth != 1:
        raise SystemExit(f"the contact network has {net.depth} hidden layers, not one")
    outputs = net.b2.shape[0]
    if units < outputs:
        raise SystemExit(f"the new layer needs at least {outputs} units, not {units}")
    rng = np.random.default_rng(seed)
    w2 = rng.uniform(-0.05, 0.05, (net.hidden, units))
    b2 = rng.uniform(-0.05, 0.05, units)
    w2[:, :outputs] = net.w2 / SCALE
    b2[:outputs] = net.b2 / SCALE
    w3 = np.zeros((units, outputs))
    w3[np.arange(outputs), np.arange(outputs)] = 4.0 * SCALE
    b3 = np.full(outputs, -2.0 * SCALE)
    return Network.from_layers([net.w1, w2, w3], [net.b1, b2, b3])


def main(source: str, target: str, units: str = "32", seed: str = "0") -> None:
    nets = Networks.load(source)
    deeper = deepen(nets.contact, int(units), int(seed))
    Networks(deeper, nets.race, nets.crashed, nets.pruning).save(target)


if __name__ == "__main__":
    main(*sys.argv[1:5])
