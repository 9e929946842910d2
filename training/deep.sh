#!/usr/bin/env bash
# A deeper contact network (issue 31, "a stronger net"): the shipped networks'
# self-play labelled by luck-corrected outcomes at volume, on every core, then a
# network of several hidden layers fitted with PyTorch, on the GPU when there is
# one. The race network (and the pruning network) of the shipped bundle are kept.
#
#   training/deep.sh WORKDIR [GAMES_PER_JOB] [JOBS] [HIDDEN]
#
# Here (2 cores, CPU PyTorch), a smoke run:  training/deep.sh /tmp/deep 20 2 16,8
# On a lent GPU machine (16 cores; its python3 holds numpy, numba and PyTorch,
# not nard's server packages, which these commands do not import):
#   NARD="python3 -m nard.cli.main" PYTHONPATH=. training/deep.sh "$OUT" 4000 16 256,128,64
# Playout labels cost about a millisecond a position and core (docs/engine.md):
# 16 x 4,000 games are about 5 million positions in 5-6 minutes. The candidate
# is WORKDIR/deep.npz; compare it with bench/strength.py (expert@PATH, --luck)
# before shipping it, and make its pruning net again (`nard prune`).
# INIT=PATH starts the contact network from PATH's when its hidden layers are
# HIDDEN (training/candidates/K1.npz: 256,128,64, at the shipped net's level),
# else from random weights (docs/engine.md, model card step 15).
set -euo pipefail
work=$1 games=${2:-4000} jobs=${3:-16} hidden=${4:-256,128,64}
nard=${NARD:-.venv/bin/nard}
shipped=${SHIPPED:-nard/engine/data/nard-net.npz}
init=${INIT:-$shipped}
epochs=${EPOCHS:-20} lr=${LR:-0.002} batch=${BATCH:-512} lam=${LAM:-0.7}
export OMP_NUM_THREADS=1
mkdir -p "$work"
for ((j = 1; j <= jobs; j++)); do
    $nard label "$work/deep-$j.npz" --weights "$shipped" --games "$games" \
        --playout "$lam" --seed $((3000 + j)) &
done
wait
unset OMP_NUM_THREADS  # PyTorch's own threads, where it runs on the CPU
$nard fit "$work/deep.npz" --data "$work"/deep-*.npz --init "$init" \
    --classes contact --torch --hidden "$hidden" --epochs "$epochs" \
    --learning-rate "$lr" --batch "$batch"
