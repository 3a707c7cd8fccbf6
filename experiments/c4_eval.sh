#!/bin/bash
# Issue 7's connect-four measurements of one run's final checkpoint, written under RUN/eval/:
#   accuracy-final.*   solver accuracy (1000 positions per depth 8/12/16/20): raw, search @100/400/1600
#   vs-openspiel-final/ 100 games at 800 simulations against OpenSpiel MCTS with 1000 rollouts
#   c4curve/           raw and @100 accuracy of every 2nd checkpoint vs wall clock and positions
# Each step is skipped when its output exists, so a stopped evaluation resumes.
# Usage: experiments/c4_eval.sh runs/c4-t16 [STEP]   (STEP: default the newest checkpoint)
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${1:?usage: experiments/c4_eval.sh RUN_DIR [STEP]}
AZ=${AZ:-.venv/bin/azero}
if [ $# -ge 2 ]; then
  CKPT=$(printf "%s/checkpoints/ckpt_%09d.safetensors" "$RUN" "$2")
else
  CKPT=$(ls "$RUN"/checkpoints/ckpt_*.safetensors | tail -1)
fi
[ -f "$CKPT" ] || { echo "c4_eval: no checkpoint $CKPT" >&2; exit 2; }
mkdir -p "$RUN/eval"
echo "c4_eval: $CKPT"
if [ ! -f "$RUN/eval/accuracy-final.json" ]; then
  $AZ c4-accuracy --checkpoint "$CKPT" --sims 100,400,1600 --positions 1000 \
     --out "$RUN/eval/accuracy-final.json" > "$RUN/eval/accuracy-final.txt" 2> "$RUN/eval/accuracy-final.log"
fi
tail -4 "$RUN/eval/accuracy-final.txt"
if [ ! -f "$RUN/eval/vs-openspiel-final/elo.txt" ]; then
  $AZ tournament --game connect4 --players "mcts:$CKPT@800" openspiel-mcts:1000 --games-per-pair 100 \
     --out "$RUN/eval/vs-openspiel-final" > "$RUN/eval/vs-openspiel-final.txt" 2>&1
fi
tail -4 "$RUN/eval/vs-openspiel-final.txt"
if [ ! -f "$RUN/eval/c4curve/curve.png" ]; then
  $AZ c4-curve "$RUN" --every 2 --positions 250 > "$RUN/eval/curve.txt" 2> "$RUN/eval/curve.log"
fi
cat "$RUN/eval/curve.txt"
