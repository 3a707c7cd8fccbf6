#!/bin/bash
# Issue 17's Go 9x9 learning curve on the GNU Go ladder: the shipped network's run again from zero
# (the all-cheap arm of go_ablate.sh: today's preset, seed 1, 90 CPU minutes) with every checkpoint
# kept, then a tournament in which GNU Go levels 1, 5 and 10 each play a few of its checkpoints at
# 800 visits, then `azero elo-curve` (Elo against self-play positions and wall clock, the levels
# as reference lines). Every step resumes: a finished run is kept, the tournament is resumable.
#   STEPS="2000 4000 6000 10000 14000 22000"  checkpoints to rate beside the last one;  GAMES=12 per pair.
set -euo pipefail
cd "$(dirname "$0")/.."
AZ=${AZ:-.venv/bin/azero}
OUT=${OUT:-runs/go-curve}
RUN=$OUT/all-cheap
STEPS=${STEPS:-"2000 4000 6000 10000 14000 22000"}
GAMES=${GAMES:-12}
mkdir -p "$OUT"
if [ ! -f "$RUN/done" ]; then
  # --resume keeps the run's clock; a first start names every lever as go_ablate.sh's all-cheap arm does
  if [ -f "$RUN/config.yaml" ]; then
    nice -n 10 $AZ selfplay --resume "$RUN" >> "$OUT/all-cheap.log" 2>&1
  else
    nice -n 10 $AZ selfplay --game go9x9 --run-dir "$RUN" seed=1 train.steps=1000000 \
      train.lr_schedule=constant train.checkpoint_every=1000 train.keep_checkpoints=0 run.max_cpu_minutes=90 \
      model.ownership_head=true model.score_head=true search.score_utility=0.4 game.features=extended \
      selfplay.prune_pass_alive=true selfplay.cheap_algorithm=gumbel selfplay.cheap_target_weight=0.3 \
      replay.surprise_weight=0.5 > "$OUT/all-cheap.log" 2>&1
  fi
  touch "$RUN/done"
fi
last=$(ls "$RUN"/checkpoints/ckpt_*.safetensors | sort -V | tail -1)
players=()
for s in $STEPS; do
  ckpt=$RUN/checkpoints/ckpt_$(printf %09d "$s").safetensors
  [ -f "$ckpt" ] || { echo "go_curve.sh: $ckpt does not exist (STEPS names checkpoints of the run)" >&2; exit 2; }
  players+=("mcts:$ckpt@800")
done
players+=("mcts:$last@800")
nice -n 10 $AZ tournament --out "$OUT/ladder" --game go9x9 --gauntlet gnugo:1 gnugo:5 gnugo:10 \
  --players "${players[@]}" --games-per-pair "$GAMES" --parallel "$GAMES" --anchor gnugo:1=0
$AZ elo-curve "$OUT/ladder" "$RUN" --out "$OUT/elo_curve.png" \
  --title "Go 9x9 from zero (4x32, 90 CPU minutes): Elo at 800 visits against GNU Go 3.8"
