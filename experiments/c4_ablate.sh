#!/bin/bash
# Lever ablations for connect four: equal wall clock (MIN minutes, 2 workers, seed 1), one lever changed per run.
# ONLY="name ..." runs just those (finished runs are always skipped).
cd "$(dirname "$0")/.."
MIN=${MIN:-8}
mkdir -p runs/c4-ablate
run() {
  name=$1; shift
  [ -f runs/c4-ablate/$name/acc.json ] && return
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && return
  rm -rf runs/c4-ablate/$name
  .venv/bin/azero selfplay --game connect4 --run-dir runs/c4-ablate/$name run.workers=2 train.steps=10000 \
     run.max_minutes=$MIN train.checkpoint_every=500 seed=1 "$@" > runs/c4-ablate/$name.out 2>&1
  .venv/bin/azero c4-accuracy --checkpoint runs/c4-ablate/$name --sims 100 --positions 250 \
     --out runs/c4-ablate/$name/acc.json > runs/c4-ablate/$name.acc.txt 2>&1
}
run base
run no-pcr selfplay.full_search_prob=1.0
run gumbel search.algorithm=gumbel
run temp16 selfplay.temperature_moves=16
# Levers tried on top of the winner above (compare with temp16).
run temp16-qmix selfplay.temperature_moves=16 selfplay.value_q_weight=0.5
# Random openings (selfplay.random_opening_moves): compare with base.
run rand8 selfplay.random_opening_moves=8
python3 experiments/c4_ablate_summary.py runs/c4-ablate
