#!/usr/bin/env bash
# Generation B (2026-12-02): the shipped 256-hidden networks' own games labelled
# by playout, and the contact network widened to 512 hidden units on them.
#
#   training/wider.sh START.npz [WORKDIR]
#
# START is generation U (nard/engine/data/nard-net.npz as of 2026-12-01 night).
# 18 x 4,000 self-play games (seeds 401-418, two processes at a time, about
# 5 minutes per pair), labelled at lambda 0.7 (about 3.5 million positions),
# then `nard fit` of the contact network only (the race network is kept),
# widened to 512 hidden units, 20 epochs from a learning rate of 2e-3 (about
# 30 s per epoch on both cores, 12 minutes in all). The fit holds the encoded
# inputs of about 3.1 million contact positions (about 3 GB).
set -euo pipefail
start=$1 work=${2:-training/work}
nard=${NARD:-.venv/bin/nard}
export OMP_NUM_THREADS=1
mkdir -p "$work"
for ((s = 401; s <= 418; s += 2)); do
    for t in $s $((s + 1)); do
        "$nard" label "$work/du0.7-$t.npz" --weights "$start" --games 4000 \
            --playout 0.7 --seed "$t" &
    done
    wait
done
OMP_NUM_THREADS=2 "$nard" fit "$work/B512.npz" --data "$work"/du0.7-{401..418}.npz --init "$start" \
    --classes contact --hidden 512 --epochs 20 --learning-rate 0.002
