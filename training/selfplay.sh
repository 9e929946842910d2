#!/usr/bin/env bash
# A playout generation: the networks' own self-play games labelled by their
# luck-corrected outcomes (`nard label --playout 0.7`), then the contact
# network fitted on them from those networks (the race network is kept).
#
#   training/selfplay.sh START.npz [WORKDIR] [FIRST_SEED] [DATASETS] [HIDDEN]
#
# DATASETS x 4,000 games, seeds FIRST_SEED onwards, two `nard label`
# processes at a time (one per core), each dataset written to
# WORKDIR/pl-SEED.npz (kept, so a stopped run resumes where it was), then
# `nard fit` of the contact network at HIDDEN units (a narrower START is
# widened: its units kept, new ones small and random), 20 epochs from a
# learning rate of 2e-3, written to WORKDIR/next.npz.
#
#   generation B: training/selfplay.sh U.npz training/work 401 18 512
#       (from U, 256 hidden units: 3.5 million positions; about 45 minutes
#       of labelling and 12 of fitting)
#   generation C: training/selfplay.sh B.npz training/work 501 24 512
#       (from B: 4.7 million positions, 4.2 million of them contact; about
#       4.4 minutes per pair of datasets on an idle machine, 54 in all, with
#       the 512-unit net, then 12 minutes of fitting, holding about 3.7 GB
#       of encoded inputs; shipped on 2026-12-03)
set -euo pipefail
start=$1 work=${2:-training/work} first=${3:-501} count=${4:-24} hidden=${5:-512}
nard=${NARD:-.venv/bin/nard}
export OMP_NUM_THREADS=1
mkdir -p "$work"
last=$((first + count - 1))
for ((s = first; s <= last; s += 2)); do
    for ((t = s; t <= s + 1 && t <= last; t++)); do
        [ -f "$work/pl-$t.npz" ] ||
            "$nard" label "$work/pl-$t.npz" --weights "$start" --games 4000 \
                --playout 0.7 --seed "$t" &
    done
    wait
done
data=()
for ((t = first; t <= last; t++)); do data+=("$work/pl-$t.npz"); done
OMP_NUM_THREADS=2 "$nard" fit "$work/next.npz" --data "${data[@]}" --init "$start" \
    --classes contact --hidden "$hidden" --epochs 20 --learning-rate 0.002
