#!/usr/bin/env bash
# The playout generations of 2026-12-01 (late evening), from the V3 networks to
# the shipped 256-hidden networks: self-play games labelled by their
# luck-corrected outcomes (nard label --playout LAM, nard.training.playout), then
# pooled fits. Every step is nard's own engine; gnubg plays no part.
#
#   training/playouts.sh V3.npz [WORKDIR]
#
# About an hour on this 2-core machine (two label processes at a time; V3's games
# are played twice, once per lambda, since `nard label` keeps only the labels).
set -euo pipefail
start=$1 work=${2:-training/work}
nard=${NARD:-.venv/bin/nard}
export OMP_NUM_THREADS=1
mkdir -p "$work"

# label WEIGHTS NAME LAM SEED...: 4,000 games per seed, two processes at a time.
label() {
    local weights=$1 name=$2 lam=$3
    shift 3
    local seeds=("$@")
    for ((i = 0; i < ${#seeds[@]}; i += 2)); do
        for s in "${seeds[@]:i:2}"; do
            "$nard" label "$work/$name-l$lam-$s.npz" --weights "$weights" --games 4000 \
                --playout "$lam" --seed "$s" &
        done
        wait
    done
}

# Generation 1: V3's games (six seeds), labels at lambda 0.5, fitted from V3.
label "$start" pv3 0.5 11 12 13 21 22 23
"$nard" fit "$work/P.npz" --data "$work"/pv3-l0.5-*.npz --init "$start" \
    --epochs 10 --learning-rate 0.003
# Generation 2: P's games, pooled with V3's, labels at lambda 0.7.
label "$start" pv3 0.7 11 12 13 21 22 23
label "$work/P.npz" pq 0.7 111 112 113 121 122 123
"$nard" fit "$work/Q.npz" --data "$work"/pv3-l0.7-*.npz "$work"/pq-l0.7-*.npz \
    --init "$work/P.npz" --epochs 10 --learning-rate 0.003
# A wider net on the same labels: 256 hidden units (new units start at zero
# output weight), 30 epochs.
"$nard" fit "$work/T.npz" --data "$work"/pv3-l0.7-*.npz "$work"/pq-l0.7-*.npz \
    --init "$work/Q.npz" --hidden 256 --epochs 30 --learning-rate 0.003
# Generation 3 (shipped as nard-net.npz): T's games, pooled with all the above,
# 20 epochs from T.
label "$work/T.npz" pt 0.7 211 212 221 222
"$nard" fit "$work/U.npz" --data "$work"/pv3-l0.7-*.npz "$work"/pq-l0.7-*.npz \
    "$work"/pt-l0.7-*.npz --init "$work/T.npz" --hidden 256 --epochs 20 --learning-rate 0.002
