#!/bin/bash
# The ablation arms' round robin (issue 16): every finished arm of experiments/go_ablate.sh at 200
# simulations, GNU Go level 1 and random play, 16 games per pair (colours alternating), Elo with 95%
# intervals anchored at random = 0. Resumable; run it again after more arms finish and the new
# arms join (games already played are kept). AZERO= as in go_ablate.sh.
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/go-ablate}
SIMS=${SIMS:-200}
players=()
for done in "$OUT"/*/done; do
  [ -f "$done" ] && players+=("mcts:$(dirname "$done")@$SIMS")
done
nice -n 5 "${AZERO:-.venv/bin/azero}" tournament --game go9x9 --players "${players[@]}" gnugo:1 random \
  --games-per-pair ${GAMES:-16} --parallel ${PARALLEL:-8} --out "$OUT/rr" --anchor random=0
