#!/bin/bash
# Issue 17's connect-four campaign: lever arms from zero at equal wall clock, then the winner
# continued (--resume keeps its clock) to the campaign's budget.
#   arms:  ARM_MIN minutes each (default 8), one after another, seed 1, constant learning rate so
#          an arm can be continued; scored at 100 simulations on 250 positions per depth.
#   long:  LONG=<arm> resumes that arm until its clock reaches LONG_MIN minutes (default 110).
# ONLY="name ..." runs just those arms; finished arms are skipped. Writes under runs/c4-campaign/.
set -euo pipefail
cd "$(dirname "$0")/.."
AZ=${AZ:-.venv/bin/azero}
ARM_MIN=${ARM_MIN:-8}
OUT=runs/c4-campaign
mkdir -p $OUT
# The first shipped connect-four recipe (docs/c4-campaign/rand-4x32-1.4h/connect4.json) with a constant learning rate.
BASE=(run.workers=2 seed=1 train.steps=1000000 train.lr_schedule=constant train.checkpoint_every=500
      train.keep_checkpoints=0 selfplay.temperature_moves=16 selfplay.random_opening_moves=8)
arm() {
  name=$1; shift
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && return
  if [ ! -f $OUT/$name/acc.json ]; then
    rm -rf $OUT/$name
    nice $AZ selfplay --game connect4 --run-dir $OUT/$name "${BASE[@]}" run.max_minutes=$ARM_MIN "$@" \
        > $OUT/$name.out 2>&1
    nice $AZ c4-accuracy --checkpoint $OUT/$name --sims 100 --positions 250 --out $OUT/$name/acc.json \
        > $OUT/$name.acc.txt 2>&1
  fi
  echo "$name: $(tail -1 $OUT/$name.acc.txt)"
}
if [ -z "${LONG:-}" ]; then
  arm recipe
  # Go's winning levers (README lever table): cheap searches recorded as Gumbel targets, surprise weighting.
  arm cheap-surprise selfplay.cheap_algorithm=gumbel selfplay.cheap_target_weight=0.3 replay.surprise_weight=0.5
  arm cheap selfplay.cheap_algorithm=gumbel selfplay.cheap_target_weight=0.3
  arm net6x64 model.blocks=6 model.channels=64
  arm ratio8 replay.max_samples_per_position=8.0
  # Value target (1 - w) z + w q, q the recorded search's root value: sampled opening moves and random
  # openings make z a noisy label for the positions before them (a thrown game marks them lost).
  arm qmix selfplay.value_q_weight=0.5
  exit 0
fi
nice $AZ selfplay --resume $OUT/$LONG run.max_minutes=${LONG_MIN:-110} "${@}" >> $OUT/$LONG.out 2>&1
