#!/usr/bin/env bash
# Supervised generations: label self-play positions with the current networks'
# 1-ply evaluation, fit the next networks to them, measure against pubeval.
#
#   training/generations.sh START.npz FIRST_GEN LAST_GEN [WORKDIR]
#
# Generation g labels 2 x GAMES games (two processes, seeds 100g+1 and 100g+2)
# with gen(g-1).npz, fits gen(g).npz from gen(g-1).npz on those labels only, and
# appends a pubeval figure (1,000 games, duplicate dice, seed 7) to
# WORKDIR/generations.log. Datasets stay in WORKDIR (not in the repository).
set -euo pipefail
start=$1 first=$2 last=$3 work=${4:-training/work}
games=${GAMES:-1700}
nard=${NARD:-.venv/bin/nard}
py=${PYTHON:-.venv/bin/python}
export OMP_NUM_THREADS=1
mkdir -p "$work"
cp -n "$start" "$work/gen$((first - 1)).npz" || true
for ((g = first; g <= last; g++)); do
    prev="$work/gen$((g - 1)).npz"
    "$nard" label "$work/ds$g-1.npz" --weights "$prev" --games "$games" --seed $((100 * g + 1)) &
    "$nard" label "$work/ds$g-2.npz" --weights "$prev" --games "$games" --seed $((100 * g + 2)) &
    wait
    "$nard" fit "$work/gen$g.npz" --data "$work/ds$g-1.npz" "$work/ds$g-2.npz" \
        --init "$prev" --epochs 12 > "$work/fit$g.log" 2>&1
    figure=$("$py" bench/strength.py --a "expert@$work/gen$g.npz" --b pubeval \
        --games 1000 --seed 7 --quiet | grep "points per game")
    echo "gen$g: $figure" | tee -a "$work/generations.log"
done
