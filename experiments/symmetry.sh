#!/bin/bash
# Symmetric evaluation (search.symmetry) measured on the shipped networks, each arm at the same
# simulations: connect four against the solver at 800 simulations (1,000 positions per depth), and
# Go 9x9 in a round robin at 200 simulations with plain 1,600 simulations (the network work of
# 'average' at 200) as the equal-compute reference. Writes under runs/symmetry/; resumable
# (c4-accuracy reads its cached test sets, the tournament resumes).
set -euo pipefail
cd "$(dirname "$0")/.."
AZ=${AZ:-.venv/bin/azero}
OUT=runs/symmetry
mkdir -p $OUT
C4=${C4:-docs/c4-campaign/connect4.safetensors}
if [ ! -f $OUT/c4-800.json ]; then
  nice $AZ c4-accuracy --checkpoint $C4 --sims 800 --agent "mcts:$C4@800:symmetry=average" \
      --agent "mcts:$C4@800:symmetry=random" --out $OUT/c4-800.json | tee $OUT/c4-800.txt
fi
nice $AZ tournament --game go9x9 --players mcts:shipped@200 mcts:shipped@200:symmetry=random \
    mcts:shipped@200:symmetry=average mcts:shipped@1600 --games-per-pair 20 --parallel 10 --out $OUT/go-t
