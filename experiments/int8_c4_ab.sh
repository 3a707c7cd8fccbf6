#!/bin/bash
# int8 against float32 inference at equal wall clock: connect four from zero with the shipped
# network's recipe (8x64, Gumbel 64 full searches, (z + q) / 2), MIN minutes per arm (default 35),
# one arm after the other (ARMS, default "int8 f32"; on a CPU with native bf16 try "bf16 int8"),
# then every network scored the same way (float32, the held-out solver positions, raw and 100
# simulations): each arm's last checkpoint, and its step-1000 one (equal training steps).
# SEED (default 6), OUT (default runs/int8-ab), AZERO (default .venv/bin/azero: a frozen worktree's
# keeps a running arm safe from edits here). Finished arms (a `done` file) and scores are skipped.
cd "$(dirname "$0")/.."
MIN=${MIN:-35}
SEED=${SEED:-6}
OUT=${OUT:-runs/int8-ab}
AZERO=${AZERO:-.venv/bin/azero}
ARMS=${ARMS:-int8 f32}
mkdir -p "$OUT"
for p in $ARMS; do
  run="$OUT/seed$SEED-$p"
  [ -f "$run/done" ] && continue
  rm -rf "$run"
  nice -n 5 "$AZERO" selfplay --game connect4 --run-dir "$run" model.blocks=8 model.channels=64 \
    run.workers=2 run.worker_processes=true seed=$SEED train.steps=6000 train.lr=0.02 train.lr_schedule=cosine \
    train.lr_min_ratio=0.03 train.checkpoint_every=1000 selfplay.temperature_moves=16 selfplay.random_opening_moves=8 \
    selfplay.value_q_weight=0.5 selfplay.full_search_prob=1.0 search.algorithm=gumbel run.max_minutes=$MIN \
    run.precision=$p > "$run.log" 2>&1 && touch "$run/done"
done
score() {  # score NAME CHECKPOINT
  [ -f "$OUT/$1.json" ] || nice -n 5 "$AZERO" c4-accuracy --checkpoint "$2" --seed 1 --positions 500 --sims 100 \
    --precision f32 --out "$OUT/$1.json" > "$OUT/$1.log" 2>&1
  echo "$1: $(grep -A2 '^  all' "$OUT/$1.log" | tr -s ' ' | tr '\n' ' ')"
}
for p in $ARMS; do
  run="$OUT/seed$SEED-$p"
  echo "$p: $(grep '^done:' "$run.log")"
  score "seed$SEED-$p-step1000" "$run/checkpoints/ckpt_000001000.safetensors"
  score "seed$SEED-$p-last" "$run"
done
