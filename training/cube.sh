#!/usr/bin/env bash
# Cube networks (issue 31; docs/engine.md, model card steps 17 and 18): the shipped
# bundle with a cube contact network and a cube crashed network beside its checker
# networks, which the engine's cube analysis reads instead (plays keep the shipped
# networks). The cube contact network is the shipped contact network fitted on every
# cube-aimed rollout dataset of training/data/rollouts/ (each three times) beside
# 79,172 positions of its own 0-ply labels that hold its function elsewhere; the
# cube crashed network starts from it and is fitted on the crashed positions of the
# same datasets. (Candidate Q of step 17 was the same fit written over the checker
# networks.) Since R's cube networks shipped (2026-12-07) the shipped bundle has
# cube networks of its own, and the fit continues from them; R itself was fitted
# from D's contact network: SHIPPED=D.npz, with D.npz from
# `git show 2e22967~1:nard/engine/data/nard-net.npz`, does the same again.
#
#   training/cube.sh OUT.npz
#
# With LABEL_JOBS=N (and LABEL_SEED=S, a first seed no file of the folder has
# used) it first labels N more datasets at once, a third of each kind: the
# favourite on roll in the doubling window (cw-), the underdog on roll (cu-: the
# leaves of the expert's 1-ply cube) and a side with 9 or more checkers off
# (m9-). On two cores a cw- or cu- file takes 6-8 minutes (since the bear-off
# probabilities were compiled, 2026-12-07) and an m9- file about 5; a lent
# 16-core machine makes 16 at a time. Seeds used so far: cw- 1101-1157, cu-
# 1501-1557, m9- 1601-1617. Gate the result with
# bench/cube_window.py (both windows, --plies 0 1) and bench/cube_decisions.py,
# each with --weights SHIPPED OUT: both read what each bundle's cube reads (its
# cube networks where it has them). The checker play is the shipped one's.
set -euo pipefail
out=$1
nard=${NARD:-.venv/bin/nard}
shipped=${SHIPPED:-nard/engine/data/nard-net.npz}
rollouts=${ROLLOUTS:-training/data/rollouts}
work=${WORK:-training/work}
mkdir -p "$work"
export OMP_NUM_THREADS=1
if [[ -n ${LABEL_JOBS:-} ]]; then
    seed=${LABEL_SEED:?LABEL_SEED: a first seed no dataset of $rollouts has used}
    for ((j = 0; j < LABEL_JOBS; j++)); do
        s=$((seed + j))
        case $((j % 3)) in
            0) $nard label "$rollouts/cw-$s.npz" --weights "$shipped" --games 120 \
                --rollout 36 --truncate 30 --share 0.25 --win-range 0.55 0.95 --seed "$s" & ;;
            1) $nard label "$rollouts/cu-$s.npz" --weights "$shipped" --games 120 \
                --rollout 36 --truncate 30 --share 0.25 --win-range 0.05 0.45 --seed "$s" & ;;
            2) $nard label "$rollouts/m9-$s.npz" --weights "$shipped" --games 300 \
                --rollout 36 --truncate 40 --share 1 --min-off 9 --seed "$s" & ;;
        esac
    done
    wait
fi
anchor=$work/anchor-1200.npz
[[ -f $anchor ]] || $nard label "$anchor" --weights "$shipped" --plies 0 --games 1500 --seed 1200
# mo-1402 stays out: the held-out file of model card steps 16 and 17.
data=()
for f in "$rollouts"/cw-*.npz "$rollouts"/cu-*.npz "$rollouts"/m9-*.npz \
    "$rollouts"/cr-*.npz "$rollouts"/mo-*.npz; do
    [[ $f == */mo-1402.npz ]] || data+=("$f")
done
$nard fit "$work/cube-contact.npz" --data "${data[@]}" "${data[@]}" "${data[@]}" "$anchor" \
    --init "$shipped" --classes cube-contact --hidden 512 --epochs 8 --learning-rate 3e-4
$nard fit "$out" --data "${data[@]}" --init "$work/cube-contact.npz" --classes cube-crashed \
    --epochs 16 --learning-rate 6e-4
