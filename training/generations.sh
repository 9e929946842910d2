#!/usr/bin/env bash
# Supervised generations: label self-play positions with the current networks'
# n-ply evaluation, fit the next networks to them, measure against pubeval.
#
#   training/generations.sh START.npz FIRST_GEN LAST_GEN [WORKDIR]
#
# Generation g labels 2 x GAMES games (two processes, seeds 100g+1 and 100g+2)
# at PLIES with gen(g-1).npz, fits gen(g).npz from gen(g-1).npz on the labels
# (POOL=1: on every dataset in WORKDIR, all generations so far; POOL=0: this
# generation's only), and appends a pubeval figure (1,000 games, duplicate
# dice, seed 7) to WORKDIR/generations.log. Datasets stay in WORKDIR (not in
# the repository).
#
# Settings (environment): GAMES (1000), PLIES (2), POOL (1), EPOCHS (20),
# LR (0.003). The 2026-12-01 evening runs used the defaults; the earlier
# 1-ply generations used PLIES=1 POOL=0 EPOCHS=12 LR=0.001 GAMES=1700.
set -euo pipefail
start=$1 first=$2 last=$3 work=${4:-training/work}
games=${GAMES:-1000}
plies=${PLIES:-2}
pool=${POOL:-1}
epochs=${EPOCHS:-20}
lr=${LR:-0.003}
nard=${NARD:-.venv/bin/nard}
py=${PYTHON:-.venv/bin/python}
export OMP_NUM_THREADS=1
mkdir -p "$work"
cp -n "$start" "$work/gen$((first - 1)).npz" || true
for ((g = first; g <= last; g++)); do
    prev="$work/gen$((g - 1)).npz"
    "$nard" label "$work/ds$g-1.npz" --weights "$prev" --games "$games" --plies "$plies" \
        --seed $((100 * g + 1)) &
    "$nard" label "$work/ds$g-2.npz" --weights "$prev" --games "$games" --plies "$plies" \
        --seed $((100 * g + 2)) &
    wait
    if [[ $pool == 1 ]]; then data=("$work"/ds*.npz); else data=("$work/ds$g-1.npz" "$work/ds$g-2.npz"); fi
    "$nard" fit "$work/gen$g.npz" --data "${data[@]}" --init "$prev" --epochs "$epochs" \
        --learning-rate "$lr" > "$work/fit$g.log" 2>&1
    figure=$("$py" bench/strength.py --a "expert@$work/gen$g.npz" --b pubeval \
        --games 1000 --seed 7 --quiet | grep "points per game")
    echo "gen$g: $figure" | tee -a "$work/generations.log"
done
